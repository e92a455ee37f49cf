//! `allow:` network mode in the real container, through the agent loop: the code
//! `pip install`s a package from a package index of the test's own (a listener on
//! 127.0.0.1 that the allowlist names as `pypi.test`, pinned to it with `--resolve`),
//! and cannot reach a host outside the list, a private or link-local address (cloud
//! metadata), or anything around the proxy; every attempt is an event and a line of
//! the transcript. Nothing is ever sent beyond this machine: every name is pinned to a
//! listener of the test's own, and the only other address asked for
//! (169.254.169.254) is refused by the proxy before any packet leaves.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use sandalyst::agent::{Event, EventKind, RunStatus};
use sandalyst::egress::{EgressKind, Refusal};
use sandalyst::model::scripted::ScriptedModel;
use sandalyst::run::{self, RunRequest};
use sandalyst::store::Store;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

const WHEEL: &str = "sandalyst_probe-1.0-py3-none-any.whl";

/// A pure-Python wheel: `import sandalyst_probe; sandalyst_probe.ANSWER == 42`.
fn wheel() -> Vec<u8> {
    let files: [(&str, &str); 3] = [
        ("sandalyst_probe/__init__.py", "ANSWER = 42\n"),
        (
            "sandalyst_probe-1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: sandalyst-probe\nVersion: 1.0\n",
        ),
        (
            "sandalyst_probe-1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: sandalyst-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        ),
    ];
    let mut record = String::new();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for (name, text) in files {
        zip.start_file(name, opts).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
        let hash = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(text));
        record.push_str(&format!("{name},sha256={hash},{}\n", text.len()));
    }
    record.push_str("sandalyst_probe-1.0.dist-info/RECORD,,\n");
    zip.start_file("sandalyst_probe-1.0.dist-info/RECORD", opts)
        .unwrap();
    zip.write_all(record.as_bytes()).unwrap();
    zip.finish().unwrap().into_inner()
}

/// A package index on 127.0.0.1 (PEP 503 "simple" pages) serving the probe wheel;
/// returns its port and the paths it was asked for.
fn package_index() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let wheel = wheel();
    let sha = Sha256::digest(&wheel)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            // The rest of the head.
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).is_err() || h == "\r\n" || h.is_empty() {
                    break;
                }
            }
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            seen.lock().unwrap().push(path.clone());
            let (status, kind, body) = if path.starts_with("/simple/sandalyst-probe") {
                let page = format!(
                    "<!DOCTYPE html><html><body><a href=\"/files/{WHEEL}#sha256={sha}\">{WHEEL}</a></body></html>"
                );
                ("200 OK", "text/html", page.into_bytes())
            } else if path == format!("/files/{WHEEL}") {
                ("200 OK", "application/octet-stream", wheel.clone())
            } else {
                ("404 Not Found", "text/plain", b"no such page".to_vec())
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    (port, asked)
}

/// A listener that only counts who connected: no test may ever reach it.
fn forbidden() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let count = hits.clone();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            count.fetch_add(1, Ordering::SeqCst);
            if let Ok(mut s) = s {
                let mut buf = [0u8; 1024];
                let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
                let _ = s.read(&mut buf);
            }
        }
    });
    (port, hits)
}

#[tokio::test]
async fn an_allowlist_lets_pip_install_from_its_index_and_refuses_everything_else() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (index, asked) = package_index();
    let (other, hits) = forbidden();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("data.csv");
    std::fs::write(&input, "a\n1\n").unwrap();
    let store = Store::open(dir.path().join("runs")).unwrap();
    let mut req = RunRequest::new(vec![input], "install the probe".into());
    req.config.sandbox = common::config(&docker).await;
    req.config.sandbox.network = format!("allow:pypi.test:{index},169.254.169.254")
        .parse()
        .unwrap();
    req.config.sandbox.egress_resolve = vec![
        format!("pypi.test=127.0.0.1:{index}").parse().unwrap(),
        format!("other.test=127.0.0.1:{other}").parse().unwrap(),
    ];
    req.config.limits.call_timeout = Duration::from_secs(120);
    let install = format!(
        r#"
import subprocess, sys
r = subprocess.run([sys.executable, "-m", "pip", "install", "--index-url", "http://pypi.test:{index}/simple/",
                    "--trusted-host", "pypi.test", "sandalyst-probe"], capture_output=True, text=True)
print("pip exit", r.returncode)
print(r.stdout[-1500:], r.stderr[-1500:])
import sandalyst_probe
print("probe answers", sandalyst_probe.ANSWER)
"#
    );
    let escape = format!(
        r#"
import os, socket, urllib.request, urllib.error
print("proxy", os.environ.get("HTTPS_PROXY"))
def get(url):
    try:
        urllib.request.urlopen(url, timeout=10).read()
        print("GOT", url)
    except urllib.error.HTTPError as e:
        print("refused", url, e.code, e.read().decode()[:200])
    except Exception as e:
        print("failed", url, type(e).__name__, e)
get("http://other.test:{other}/")
get("https://other.test:{other}/")
get("http://169.254.169.254/latest/meta-data/")
# Around the proxy: nothing listens on the sandbox's own loopback, and there is no route.
for target in [("127.0.0.1", {other}), ("172.17.0.1", {other})]:
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect(target); print("CONNECTED", target)
    except OSError as e:
        print("no way around", target, e)
"#
    );
    let mut model = ScriptedModel::new(vec![
        ScriptedModel::python("install", &install),
        ScriptedModel::python("escape", &escape),
    ]);
    let events: Arc<Mutex<Vec<Event>>> = Arc::default();
    let sink = events.clone();
    let outcome = run::execute(
        &common::sessions(&store),
        req,
        &mut model,
        &move |e| sink.lock().unwrap().push(e),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    let seen = common::tool_outputs(model.seen.last().unwrap());
    let (installed, escaped) = (&seen[0], &seen[1]);
    assert!(installed.contains("pip exit 0"), "{installed}");
    assert!(installed.contains("probe answers 42"), "{installed}");
    assert!(
        installed.contains(&format!(
            "network (allowlist proxy): reached pypi.test:{index}"
        )),
        "{installed}"
    );
    let paths = asked.lock().unwrap().clone();
    assert!(
        paths
            .iter()
            .any(|p| p.starts_with("/simple/sandalyst-probe")),
        "{paths:?}"
    );
    assert!(paths.contains(&format!("/files/{WHEEL}")), "{paths:?}");
    for refused in [
        format!("refused http://other.test:{other}/ 403"),
        "refused http://169.254.169.254/latest/meta-data/ 403".to_string(),
    ] {
        assert!(escaped.contains(&refused), "{refused} in {escaped}");
    }
    // HTTPS through CONNECT: the proxy's 403 fails the tunnel.
    assert!(
        escaped.contains(&format!("failed https://other.test:{other}/")),
        "{escaped}"
    );
    assert!(
        !escaped.contains("GOT") && !escaped.contains("CONNECTED"),
        "{escaped}"
    );
    assert_eq!(escaped.matches("no way around").count(), 2, "{escaped}");
    assert!(escaped.contains("proxy http://127.0.0.1:3128"), "{escaped}");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the forbidden listener was reached"
    );
    // Every attempt is a typed event of the call that made it.
    let events = events.lock().unwrap().clone();
    let egress: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Egress {
                call_id,
                connection,
            } => Some((call_id.clone(), connection.clone())),
            _ => None,
        })
        .collect();
    let allowed = egress
        .iter()
        .filter(|(id, c)| {
            id == "install" && c.host == "pypi.test" && matches!(c.kind, EgressKind::Allowed { .. })
        })
        .count();
    assert!(allowed >= 2, "the index page and the wheel: {egress:?}");
    let refused = |host: &str, why: fn(&Refusal) -> bool| {
        egress.iter().any(|(id, c)| {
            id == "escape"
                && c.host == host
                && matches!(&c.kind, EgressKind::Refused { reason } if why(reason))
        })
    };
    assert!(
        refused("other.test", |r| matches!(r, Refusal::NotInAllowlist)),
        "{egress:?}"
    );
    assert!(
        refused("169.254.169.254", |r| matches!(
            r,
            Refusal::PrivateAddress { .. }
        )),
        "{egress:?}"
    );
    // The transcript keeps them: what the model saw is what was recorded.
    let run = store.open_run(&outcome.run_id).unwrap();
    let transcript = std::fs::read_to_string(run.path.join(sandalyst::store::TRANSCRIPT)).unwrap();
    assert!(transcript.contains("refused other.test"), "{transcript}");
    assert_eq!(
        common::containers_labelled(&docker, &outcome.run_id).await,
        0
    );
}
