//! The proxy end to end, on this machine only: every target is a listener of the
//! test's own on 127.0.0.1, reached through names pinned to it (`pypi.test`,
//! `other.test`); no test resolves a real name, and the proxy's connect step asserts
//! (under `cfg!(test)`) that it only ever dials loopback.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use super::*;

type Events = Arc<Mutex<Vec<EgressEvent>>>;

async fn start_with(list: &str, resolver: Resolver, limits: ProxyLimits) -> (ProxyHandle, Events) {
    let events: Events = Arc::default();
    let sink = events.clone();
    let proxy = Proxy::start_with_limits(
        "127.0.0.1:0".parse::<SocketAddr>().unwrap(),
        list.parse().unwrap(),
        resolver,
        limits,
        Arc::new(move |ev| sink.lock().unwrap().push(ev)),
    )
    .await
    .unwrap();
    (proxy, events)
}

async fn start(list: &str, resolver: Resolver) -> (ProxyHandle, Events) {
    start_with(list, resolver, ProxyLimits::default()).await
}

fn pinned(pins: &[(&str, SocketAddr)]) -> Resolver {
    pins.iter()
        .fold(Resolver::pinned_only(), |r, (host, addr)| {
            r.pin(host, [*addr]).unwrap()
        })
}

/// Waits (up to 5 s) until an event matches.
async fn event_where(events: &Events, what: impl Fn(&EgressEvent) -> bool) -> EgressEvent {
    for _ in 0..500 {
        if let Some(ev) = events.lock().unwrap().iter().find(|e| what(e)) {
            return ev.clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no such event in {:?}", events.lock().unwrap());
}

fn refusals(events: &Events) -> Vec<Refusal> {
    events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match &e.kind {
            EgressKind::Refused { reason } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

fn allowed(events: &Events) -> usize {
    events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e.kind, EgressKind::Allowed { .. }))
        .count()
}

/// An echo server: every connection gets its bytes back, and a close for a close.
async fn echo() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let (mut r, mut w) = s.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
                let _ = w.shutdown().await;
            });
        }
    });
    addr
}

/// A tiny HTTP server: each connection's head is sent on the channel, and answered
/// with `body` and a close.
async fn http_server(body: &'static str) -> (SocketAddr, mpsc::UnboundedReceiver<String>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).await.unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let _ = tx.send(String::from_utf8_lossy(&head).into_owned());
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(answer.as_bytes()).await;
                let _ = s.shutdown().await;
            });
        }
    });
    (addr, rx)
}

/// A target that must never be reached: accept() tells, without waiting, whether
/// anything connected (the proxy decides before it connects, and answers after).
fn untouched_target() -> std::net::TcpListener {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    l
}

fn assert_untouched(l: &std::net::TcpListener) {
    match l.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the target was connected to: {other:?}"),
    }
}

/// Sends `request` and reads the answer up to the close.
async fn ask(proxy: SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(proxy).await.unwrap();
    s.write_all(request).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .expect("the proxy answered and closed")
        .unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// A CONNECT answered `200`: the tunnel.
async fn tunnel(proxy: SocketAddr, target: &str) -> TcpStream {
    let mut s = TcpStream::connect(proxy).await.unwrap();
    s.write_all(format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).await.unwrap(), 1, "closed after {head:?}");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    s
}

#[tokio::test]
async fn an_allowed_connect_tunnels_bytes_both_ways_untouched() {
    let target = echo().await;
    let (proxy, events) = start("pypi.test", pinned(&[("pypi.test", target)])).await;
    let mut s = tunnel(proxy.local_addr().unwrap(), "pypi.test:443").await;
    // Not HTTP, not UTF-8: a tunnel carries anything (a TLS handshake, say).
    let payload: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    let (mut r, mut w) = s.split();
    let (_, back) = tokio::join!(
        async {
            w.write_all(&payload).await.unwrap();
            w.shutdown().await.unwrap();
        },
        async {
            let mut back = Vec::new();
            r.read_to_end(&mut back).await.unwrap();
            back
        }
    );
    assert_eq!(back, payload);
    let ev = event_where(&events, |e| matches!(e.kind, EgressKind::Allowed { .. })).await;
    assert_eq!(
        ev,
        EgressEvent {
            host: "pypi.test".into(),
            port: 443,
            method: Method::Connect,
            kind: EgressKind::Allowed { addr: target },
        }
    );
    let closed = event_where(&events, |e| matches!(e.kind, EgressKind::Closed { .. })).await;
    assert_eq!(
        closed.kind,
        EgressKind::Closed {
            bytes_up: 100_000,
            bytes_down: 100_000
        }
    );
}

#[tokio::test]
async fn the_first_bytes_of_a_tunnel_may_come_with_its_connect() {
    let target = echo().await;
    let (proxy, _events) = start("pypi.test", pinned(&[("pypi.test", target)])).await;
    let mut s = TcpStream::connect(proxy.local_addr().unwrap())
        .await
        .unwrap();
    s.write_all(b"CONNECT pypi.test:443 HTTP/1.1\r\n\r\n\x16\x03\x01early")
        .await
        .unwrap();
    s.shutdown().await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut answer))
        .await
        .expect("the echo closed after our close")
        .unwrap();
    assert_eq!(
        answer,
        b"HTTP/1.1 200 Connection established\r\n\r\n\x16\x03\x01early"
    );
}

#[tokio::test]
async fn an_allowed_plain_get_reaches_the_server_in_origin_form() {
    let (target, mut heads) = http_server("index of packages").await;
    let (proxy, events) = start("pypi.test", pinned(&[("pypi.test", target)])).await;
    let answer = ask(
        proxy.local_addr().unwrap(),
        format!(
            "GET http://pypi.test:{}/simple/?q=1 HTTP/1.1\r\nHost: pypi.test\r\nProxy-Connection: keep-alive\r\n\
             Proxy-Authorization: Basic c2VjcmV0\r\nUser-Agent: test\r\n\r\n",
            target.port()
        )
        .as_bytes(),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.ends_with("\r\n\r\nindex of packages"), "{answer}");
    let head = heads.recv().await.unwrap();
    assert_eq!(
        head,
        format!(
            "GET /simple/?q=1 HTTP/1.1\r\nHost: pypi.test:{}\r\nUser-Agent: test\r\nConnection: close\r\n\r\n",
            target.port()
        )
    );
    let closed = event_where(&events, |e| matches!(e.kind, EgressKind::Closed { .. })).await;
    assert_eq!((closed.method, closed.port), (Method::Http, target.port()));
    let EgressKind::Closed {
        bytes_up,
        bytes_down,
    } = closed.kind
    else {
        unreachable!()
    };
    assert_eq!(
        (bytes_up, bytes_down),
        (head.len() as u64, answer.len() as u64)
    );
}

#[tokio::test]
async fn a_host_not_in_the_list_gets_403_and_is_never_connected_to() {
    let other = untouched_target();
    let (proxy, events) = start(
        "pypi.test",
        pinned(&[("other.test", other.local_addr().unwrap())]),
    )
    .await;
    for request in [
        "CONNECT other.test:443 HTTP/1.1\r\n\r\n".to_string(),
        "GET http://other.test/ HTTP/1.1\r\n\r\n".to_string(),
        "CONNECT pypi.test.other.test:443 HTTP/1.1\r\n\r\n".to_string(),
    ] {
        let answer = ask(proxy.local_addr().unwrap(), request.as_bytes()).await;
        assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
        assert!(
            answer.contains("not in this session's network allowlist"),
            "{answer}"
        );
    }
    assert_untouched(&other);
    assert_eq!(refusals(&events), vec![Refusal::NotInAllowlist; 3]);
    let first = events.lock().unwrap()[0].clone();
    assert_eq!(
        (first.host.as_str(), first.port, first.method),
        ("other.test", 443, Method::Connect)
    );
    assert_eq!(allowed(&events), 0);
}

/// `localhost` is not pinned: it goes through the host's resolver, which finds it in
/// /etc/hosts (no DNS query leaves the machine), and its loopback address is refused.
#[tokio::test]
async fn localhost_is_refused_as_loopback_even_when_listed() {
    let hosts = std::fs::read_to_string("/etc/hosts").unwrap_or_default();
    let in_hosts = hosts.lines().any(|l| {
        let l = l.split('#').next().unwrap_or_default();
        l.split_whitespace().skip(1).any(|n| n == "localhost")
    });
    let files_first = std::fs::read_to_string("/etc/nsswitch.conf")
        .unwrap_or_default()
        .lines()
        .find(|l| l.trim_start().starts_with("hosts:"))
        .is_some_and(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let files = words.iter().position(|w| *w == "files");
            let dns = words.iter().position(|w| *w == "dns");
            files.is_some_and(|f| dns.is_none_or(|d| f < d))
        });
    if !in_hosts || !files_first {
        println!("skipped: localhost is not answered by /etc/hosts before DNS here");
        return;
    }
    let target = untouched_target();
    let port = target.local_addr().unwrap().port();
    let (proxy, events) = start("localhost", Resolver::system()).await;
    let answer = ask(
        proxy.local_addr().unwrap(),
        format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 403 "), "{answer}");
    assert!(answer.contains("loopback"), "{answer}");
    match &refusals(&events)[..] {
        [Refusal::PrivateAddress { addr, range }] => {
            assert!(addr.is_loopback(), "{addr}");
            assert_eq!(*range, AddressRange::Loopback);
        }
        other => panic!("{other:?}"),
    }
    assert_untouched(&target);
}

/// The literals are in the list, so only the address check can refuse them; a
/// refusal for a private address is decided before any connection is tried (a try
/// would end as `unreachable` or `connect_timeout`, and the proxy's test guard would
/// stop it first).
#[tokio::test]
async fn private_and_link_local_literals_are_refused_without_connecting() {
    let (proxy, events) = start("169.254.169.254,10.0.0.1,[::1]", Resolver::pinned_only()).await;
    let cases = [
        (
            "CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n",
            "169.254.169.254",
            AddressRange::LinkLocal,
        ),
        (
            "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n",
            "169.254.169.254",
            AddressRange::LinkLocal,
        ),
        (
            "CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n",
            "10.0.0.1",
            AddressRange::Private,
        ),
        (
            "CONNECT [::1]:8080 HTTP/1.1\r\n\r\n",
            "::1",
            AddressRange::Loopback,
        ),
    ];
    for (request, addr, range) in cases {
        let answer = ask(proxy.local_addr().unwrap(), request.as_bytes()).await;
        assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
        let reason = refusals(&events).pop().unwrap();
        assert_eq!(
            reason,
            Refusal::PrivateAddress {
                addr: addr.parse().unwrap(),
                range
            },
            "{request}"
        );
    }
    // A literal that is not listed stops at the list.
    let answer = ask(
        proxy.local_addr().unwrap(),
        b"CONNECT 192.168.1.1:22 HTTP/1.1\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 403 "), "{answer}");
    assert_eq!(refusals(&events).pop().unwrap(), Refusal::NotInAllowlist);
    assert_eq!(allowed(&events), 0);
}

#[tokio::test]
async fn a_wildcard_reaches_subdomains_but_not_the_bare_suffix() {
    let target = echo().await;
    let bare = untouched_target();
    let (proxy, events) = start(
        "*.pypi.test",
        pinned(&[
            ("files.pypi.test", target),
            ("a.b.pypi.test", target),
            ("pypi.test", bare.local_addr().unwrap()),
        ]),
    )
    .await;
    for host in ["files.pypi.test", "A.B.PYPI.TEST."] {
        let mut s = tunnel(proxy.local_addr().unwrap(), &format!("{host}:443")).await;
        s.write_all(b"ping").await.unwrap();
        let mut back = [0u8; 4];
        s.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"ping");
    }
    let answer = ask(
        proxy.local_addr().unwrap(),
        b"CONNECT pypi.test:443 HTTP/1.1\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 403 "), "{answer}");
    assert_untouched(&bare);
    assert_eq!(refusals(&events), vec![Refusal::NotInAllowlist]);
    let hosts: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e.kind, EgressKind::Allowed { .. }))
        .map(|e| e.host.clone())
        .collect();
    assert_eq!(hosts, ["files.pypi.test", "a.b.pypi.test"]);
}

#[tokio::test]
async fn an_oversized_head_gets_400() {
    let target = untouched_target();
    let (proxy, events) = start(
        "pypi.test",
        pinned(&[("pypi.test", target.local_addr().unwrap())]),
    )
    .await;
    let big = format!(
        "GET http://pypi.test/ HTTP/1.1\r\nX-Padding: {}\r\n\r\n",
        "a".repeat(20 * 1024)
    );
    let answer = ask(proxy.local_addr().unwrap(), big.as_bytes()).await;
    assert!(
        answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{answer}"
    );
    assert!(answer.contains("larger than 16384 bytes"), "{answer}");
    assert_eq!(
        refusals(&events),
        vec![Refusal::HeadTooLarge { limit: 16384 }]
    );
    assert_untouched(&target);
}

#[tokio::test]
async fn malformed_requests_get_400() {
    let target = untouched_target();
    let (proxy, events) = start(
        "pypi.test",
        pinned(&[("pypi.test", target.local_addr().unwrap())]),
    )
    .await;
    for request in [
        "GARBAGE\r\n\r\n",
        "GET /simple/ HTTP/1.1\r\nHost: pypi.test\r\n\r\n",
        "GET https://pypi.test/ HTTP/1.1\r\n\r\n",
        "CONNECT pypi.test HTTP/1.1\r\n\r\n",
        "GET http://user@pypi.test/ HTTP/1.1\r\n\r\n",
    ] {
        let answer = ask(proxy.local_addr().unwrap(), request.as_bytes()).await;
        assert!(
            answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{request}: {answer}"
        );
    }
    let reasons = refusals(&events);
    assert_eq!(reasons.len(), 5);
    assert!(
        reasons
            .iter()
            .all(|r| matches!(r, Refusal::BadRequest { .. })),
        "{reasons:?}"
    );
    let methods: Vec<Method> = events.lock().unwrap().iter().map(|e| e.method).collect();
    assert_eq!(
        methods,
        [
            Method::Unknown,
            Method::Http,
            Method::Http,
            Method::Connect,
            Method::Http
        ]
    );
    assert_untouched(&target);
}

#[tokio::test]
async fn an_unreachable_target_gets_502() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (proxy, events) = start("gone.test", pinned(&[("gone.test", closed)])).await;
    let answer = ask(
        proxy.local_addr().unwrap(),
        b"CONNECT gone.test:443 HTTP/1.1\r\n\r\n",
    )
    .await;
    assert!(
        answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n"),
        "{answer}"
    );
    assert!(
        matches!(&refusals(&events)[..], [Refusal::Unreachable { addr, .. }] if *addr == closed)
    );
    // A name the pinned-only resolver does not know: 502 as well, and no DNS asked.
    let (proxy, events) = start("unpinned.test", Resolver::pinned_only()).await;
    let answer = ask(
        proxy.local_addr().unwrap(),
        b"CONNECT unpinned.test:443 HTTP/1.1\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 502 "), "{answer}");
    assert!(matches!(
        &refusals(&events)[..],
        [Refusal::ResolveFailed { .. }]
    ));
}

#[tokio::test]
async fn connections_over_the_cap_get_503_until_one_ends() {
    let target = echo().await;
    let limits = ProxyLimits {
        max_connections: 2,
        ..ProxyLimits::default()
    };
    let (proxy, events) = start_with("pypi.test", pinned(&[("pypi.test", target)]), limits).await;
    let first = tunnel(proxy.local_addr().unwrap(), "pypi.test:443").await;
    let _second = tunnel(proxy.local_addr().unwrap(), "pypi.test:443").await;
    let answer = ask(
        proxy.local_addr().unwrap(),
        b"CONNECT pypi.test:443 HTTP/1.1\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
    let refused = event_where(&events, |e| matches!(e.kind, EgressKind::Refused { .. })).await;
    assert_eq!(
        refused,
        EgressEvent {
            host: "pypi.test".into(),
            port: 443,
            method: Method::Connect,
            kind: EgressKind::Refused {
                reason: Refusal::TooManyConnections { limit: 2 }
            },
        }
    );
    drop(first);
    event_where(&events, |e| matches!(e.kind, EgressKind::Closed { .. })).await;
    let mut third = tunnel(proxy.local_addr().unwrap(), "pypi.test:443").await;
    third.write_all(b"x").await.unwrap();
    let mut back = [0u8; 1];
    third.read_exact(&mut back).await.unwrap();
}

#[tokio::test]
async fn stopping_closes_the_listener_and_open_tunnels() {
    let target = echo().await;
    let (proxy, _events) = start("pypi.test", pinned(&[("pypi.test", target)])).await;
    let addr = proxy.local_addr().unwrap();
    let mut open = tunnel(addr, "pypi.test:443").await;
    proxy.stop().await;
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), open.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the tunnel was not closed");
    assert!(TcpStream::connect(addr).await.is_err(), "still listening");
}

#[tokio::test]
async fn dropping_the_handle_stops_the_proxy() {
    let target = echo().await;
    let (proxy, _events) = start("pypi.test", pinned(&[("pypi.test", target)])).await;
    let addr = proxy.local_addr().unwrap();
    let mut open = tunnel(addr, "pypi.test:443").await;
    drop(proxy);
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), open.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the tunnel was not closed");
}

/// Python's own clients, configured the way the sandbox will be (proxy variables in
/// the environment): urllib for plain HTTP, and http.client's CONNECT tunnel (what
/// pip and requests use for HTTPS, here with plain HTTP inside).
#[tokio::test]
async fn python_urllib_and_http_client_work_through_the_proxy() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("skipped: no python3 on this machine");
        return;
    }
    let (target, mut heads) = http_server("hello from pypi.test").await;
    let (proxy, events) = start("pypi.test", pinned(&[("pypi.test", target)])).await;
    let script = r#"
import os, sys, urllib.request, http.client
port = int(sys.argv[1])
print(urllib.request.urlopen(f"http://pypi.test:{port}/simple/", timeout=10).read().decode())
host, proxy_port = os.environ["HTTP_PROXY"].removeprefix("http://").split(":")
c = http.client.HTTPConnection(host, int(proxy_port), timeout=10)
c.set_tunnel("pypi.test", port)
c.request("GET", "/tunnel")
print(c.getresponse().read().decode())
try:
    urllib.request.urlopen(f"http://other.test:{port}/", timeout=10)
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
"#;
    let url = format!("http://{}", proxy.local_addr().unwrap());
    let mut cmd = tokio::process::Command::new("python3");
    cmd.arg("-c").arg(script).arg(target.port().to_string());
    for var in [
        "no_proxy",
        "NO_PROXY",
        "all_proxy",
        "ALL_PROXY",
        "REQUEST_METHOD",
    ] {
        cmd.env_remove(var);
    }
    for var in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"] {
        cmd.env(var, &url);
    }
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("python3 finished")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "hello from pypi.test");
    assert_eq!(lines[1], "hello from pypi.test");
    assert!(
        lines[2].starts_with("403 Sandalyst's network proxy refused other.test:"),
        "{}",
        lines[2]
    );
    let first = heads.recv().await.unwrap();
    assert!(first.starts_with("GET /simple/ HTTP/1.1\r\n"), "{first}");
    let second = heads.recv().await.unwrap();
    assert!(second.starts_with("GET /tunnel HTTP/1.1\r\n"), "{second}");
    let methods: Vec<(Method, bool)> = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| !matches!(e.kind, EgressKind::Closed { .. }))
        .map(|e| (e.method, matches!(e.kind, EgressKind::Allowed { .. })))
        .collect();
    assert_eq!(
        methods,
        [
            (Method::Http, true),
            (Method::Connect, true),
            (Method::Http, false)
        ]
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_proxy_on_a_unix_socket_checks_and_tunnels_like_one_on_tcp() {
    let target = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = target.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut s, _) = target.accept().await.unwrap();
        let mut buf = [0u8; 5];
        s.read_exact(&mut buf).await.unwrap();
        s.write_all(b"pong!").await.unwrap();
    });
    let dir = std::env::temp_dir().join(format!("sandalyst-egress-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.sock");
    let events: Events = Arc::default();
    let sink = events.clone();
    let proxy = Proxy::start(
        Listen::Unix(path.clone()),
        "pypi.test".parse().unwrap(),
        pinned(&[("pypi.test", at)]),
        Arc::new(move |ev| sink.lock().unwrap().push(ev)),
    )
    .await
    .unwrap();
    assert_eq!(proxy.socket_path(), Some(path.as_path()));
    assert_eq!(proxy.local_addr(), None);
    // Let through: CONNECT, then the bytes both ways.
    let mut c = tokio::net::UnixStream::connect(&path).await.unwrap();
    c.write_all(format!("CONNECT pypi.test:{} HTTP/1.1\r\n\r\n", at.port()).as_bytes())
        .await
        .unwrap();
    let mut head = vec![0u8; 39];
    c.read_exact(&mut head).await.unwrap();
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    c.write_all(b"ping!").await.unwrap();
    let mut back = [0u8; 5];
    c.read_exact(&mut back).await.unwrap();
    assert_eq!(&back, b"pong!");
    // Refused: a host not in the list.
    let mut c = tokio::net::UnixStream::connect(&path).await.unwrap();
    c.write_all(b"CONNECT other.test:443 HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    c.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    event_where(&events, |e| matches!(e.kind, EgressKind::Allowed { .. })).await;
    event_where(&events, |e| {
        e.host == "other.test"
            && matches!(
                e.kind,
                EgressKind::Refused {
                    reason: Refusal::NotInAllowlist
                }
            )
    })
    .await;
    proxy.stop().await;
    assert!(!path.exists(), "the socket file goes with the proxy");
    std::fs::remove_dir_all(&dir).unwrap();
}
