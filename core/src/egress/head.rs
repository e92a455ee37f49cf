//! The one request head the proxy reads per connection: read it within its size and
//! time limits, parse it (httparse, hyper's parser, strict: no folded headers, no
//! spaces around names, no control characters in values), check what a proxy needs
//! (an absolute `http://` URL or CONNECT's `host:port`), and for plain HTTP write the
//! head the target gets (origin-form, hop-by-hop headers dropped, `Connection: close`).

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

use super::event::Method;
use super::policy::Host;

/// A request the proxy can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Request {
    pub method: Method,
    pub host: Host,
    pub port: u16,
    /// The HTTP method as sent (`GET`, `POST`, `CONNECT`).
    pub verb: String,
    /// Plain HTTP: the origin-form target (`/simple/?q=1`).
    pub path: String,
    /// `HTTP/1.1` or `HTTP/1.0`.
    pub version: String,
    /// Plain HTTP: the `Host` header the target gets.
    pub authority: String,
    pub headers: Vec<(String, Vec<u8>)>,
}

/// A head that is not a request the proxy speaks; `method` says how far it got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct BadHead {
    pub method: Method,
    pub message: String,
}

fn bad(method: Method, message: impl Into<String>) -> BadHead {
    BadHead {
        method,
        message: message.into(),
    }
}

/// Why no head was read.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum HeadError {
    /// Closed or silent before sending a byte: nothing to report.
    Nothing,
    /// More than the limit without the head's end.
    TooLarge,
    /// Closed, failed or timed out in the middle of the head.
    Incomplete,
}

/// The head (up to and with its blank line) and whatever arrived after it (a body's
/// start, or a TLS hello sent before the `200`).
pub(super) async fn read_head<R: AsyncRead + Unpin>(
    from: &mut R,
    limit: usize,
    time: Duration,
) -> Result<(Vec<u8>, Vec<u8>), HeadError> {
    let mut buf = Vec::with_capacity(1024);
    let read = async {
        let mut chunk = [0u8; 4096];
        loop {
            match from.read(&mut chunk).await {
                Ok(0) | Err(_) => return Err(()),
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            if let Some(end) = head_end(&buf) {
                return Ok(end);
            }
            if buf.len() > limit {
                return Ok(usize::MAX);
            }
        }
    };
    let found = tokio::time::timeout(time, read).await;
    match found {
        Ok(Ok(end)) if end <= limit => {
            let rest = buf.split_off(end);
            Ok((buf, rest))
        }
        Ok(Ok(_)) => Err(HeadError::TooLarge),
        _ if buf.is_empty() => Err(HeadError::Nothing),
        _ => Err(HeadError::Incomplete),
    }
}

/// Where the head ends: after the first empty line (CRLF, or a bare LF).
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = memchr::memchr(b'\n', &buf[from..]) {
        let nl = from + at;
        let after = &buf[nl + 1..];
        if after.starts_with(b"\n") {
            return Some(nl + 2);
        }
        if after.starts_with(b"\r\n") {
            return Some(nl + 3);
        }
        from = nl + 1;
    }
    None
}

/// The request of a head read by [`read_head`].
pub(super) fn parse(head: &[u8]) -> Result<Request, BadHead> {
    // A slot per line of the head: room for every header it holds, so its size limit
    // stays the only limit on headers.
    let lines = memchr::memchr_iter(b'\n', head).count();
    let mut slots = vec![httparse::EMPTY_HEADER; lines + 1];
    let mut parsed = httparse::Request::new(&mut slots);
    let status = parsed.parse(head);
    // How far the parser got says what the request was meant to be.
    let method = match parsed.method {
        Some("CONNECT") => Method::Connect,
        Some(_) => Method::Http,
        None => Method::Unknown,
    };
    let not_a_line = "the request line is not \"METHOD TARGET HTTP/1.1\"";
    match status {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(bad(method, not_a_line)),
        Err(httparse::Error::Version) => {
            // The request line (after any empty lines, which the parser skips).
            let line = head
                .split(|b| *b == b'\n')
                .map(<[u8]>::trim_ascii)
                .find(|l| !l.is_empty())
                .unwrap_or_default();
            let version = String::from_utf8_lossy(line);
            let version = version.rsplit(' ').next().unwrap_or_default();
            return Err(bad(
                method,
                format!("{version:?} is not HTTP/1.1 or HTTP/1.0"),
            ));
        }
        Err(httparse::Error::HeaderName) => {
            return Err(bad(
                method,
                "a header line is not \"Name: value\" (no ':', a name that is not a token, or folded over two lines)",
            ))
        }
        Err(httparse::Error::HeaderValue) => {
            return Err(bad(method, "a header holds a control character"))
        }
        Err(_) => return Err(bad(method, not_a_line)),
    }
    let (Some(verb), Some(target), Some(minor)) = (parsed.method, parsed.path, parsed.version)
    else {
        return Err(bad(method, not_a_line));
    };
    // The parser takes any byte above 127 in the target; a proxy passes on only ASCII.
    if !target.is_ascii() {
        return Err(bad(Method::Unknown, "the request line is not ASCII"));
    }
    let version = format!("HTTP/1.{minor}");
    let headers: Vec<(String, Vec<u8>)> = parsed
        .headers
        .iter()
        .map(|h| (h.name.to_string(), h.value.to_vec()))
        .collect();

    let (authority, path) = match method {
        Method::Connect => (target, String::new()),
        _ => {
            let lower = target.to_ascii_lowercase();
            let Some(rest) = lower
                .strip_prefix("http://")
                .map(|_| &target["http://".len()..])
            else {
                return Err(bad(
                    method,
                    if target.starts_with('/') {
                        "the request names no host: a proxy needs the absolute form (GET http://host/path)"
                    } else if lower.starts_with("https://") {
                        "https:// goes through CONNECT (set HTTPS_PROXY), not a plain request"
                    } else {
                        "only http:// URLs are forwarded (https:// through CONNECT)"
                    },
                ));
            };
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            let path = rest[end..].split('#').next().unwrap_or_default();
            let path = match path.chars().next() {
                None => "/".to_string(),
                Some('?') => format!("/{path}"),
                Some(_) => path.to_string(),
            };
            (&rest[..end], path)
        }
    };
    let (host, port, explicit) = authority_of(authority, method)?;
    let authority = match (&host, explicit) {
        (Host::Ip(std::net::IpAddr::V6(v6)), _) if !explicit || port == 80 => format!("[{v6}]"),
        (Host::Ip(std::net::IpAddr::V6(v6)), _) => format!("[{v6}]:{port}"),
        (h, true) if port != 80 => format!("{h}:{port}"),
        (h, _) => h.to_string(),
    };
    Ok(Request {
        method,
        host,
        port,
        verb: verb.to_string(),
        path,
        version,
        authority,
        headers,
    })
}

/// `host[:port]` or `[v6][:port]`; CONNECT needs the port, plain HTTP defaults to 80.
/// The flag says whether the port was written.
fn authority_of(a: &str, method: Method) -> Result<(Host, u16, bool), BadHead> {
    if a.contains('@') {
        return Err(bad(method, "credentials in the URL are not accepted"));
    }
    let (host, port) = if let Some(v6) = a.strip_prefix('[') {
        let (inner, rest) = v6
            .split_once(']')
            .ok_or_else(|| bad(method, format!("{a:?}: '[' without ']'")))?;
        match rest {
            "" => (&a[..inner.len() + 2], None),
            _ => match rest.strip_prefix(':') {
                Some(p) => (&a[..inner.len() + 2], Some(p)),
                None => return Err(bad(method, format!("{a:?} is not host:port"))),
            },
        }
    } else {
        match a.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (a, None),
        }
    };
    let port = match port {
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Some(n),
            _ => return Err(bad(method, format!("{a:?} has a bad port"))),
        },
        None => None,
    };
    let host = Host::parse(host).map_err(|e| bad(method, e.to_string()))?;
    match (method, port) {
        (Method::Connect, None) => Err(bad(method, format!("CONNECT {a:?} names no port"))),
        (_, Some(p)) => Ok((host, p, true)),
        (_, None) => Ok((host, 80, false)),
    }
}

/// Headers about this hop only, which the target must not get (the proxy's own
/// credentials among them); `Host` is replaced by the URL's.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "upgrade",
    "host",
];

/// Plain HTTP: the head the target gets. One request per connection: it asks the
/// target to close after its response, and the proxy closes the code's connection
/// then (keep-alive is not offered; clients open a new connection).
pub(super) fn forward_head(req: &Request) -> Vec<u8> {
    // Headers the Connection header names are hop-by-hop too, except the body's
    // framing, which the target needs to read what follows.
    let named: Vec<String> = req
        .headers
        .iter()
        .filter(|(n, _)| {
            n.eq_ignore_ascii_case("connection") || n.eq_ignore_ascii_case("proxy-connection")
        })
        .flat_map(|(_, v)| {
            String::from_utf8_lossy(v)
                .split(',')
                .map(|t| t.trim().to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .filter(|t| t != "content-length" && t != "transfer-encoding")
        .collect();
    let mut out = format!(
        "{} {} {}\r\nHost: {}\r\n",
        req.verb, req.path, req.version, req.authority
    )
    .into_bytes();
    for (name, value) in &req.headers {
        let lower = name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&lower.as_str()) || named.contains(&lower) {
            continue;
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(head: &str) -> Result<Request, BadHead> {
        parse(head.as_bytes())
    }

    #[test]
    fn connect_and_absolute_form_parse() {
        let r = req("CONNECT PyPI.test:443 HTTP/1.1\r\nHost: pypi.test:443\r\n\r\n").unwrap();
        assert_eq!(
            (r.method, r.host.to_string(), r.port),
            (Method::Connect, "pypi.test".into(), 443)
        );
        let r = req("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((r.host.to_string(), r.port), ("::1".into(), 8443));
        let r = req("GET http://pypi.test:8080/simple/?q=1#frag HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(
            (r.method, r.port, r.path.as_str(), r.authority.as_str()),
            (Method::Http, 8080, "/simple/?q=1", "pypi.test:8080")
        );
        let r = req("GET HTTP://pypi.test?x HTTP/1.0\n\n").unwrap();
        assert_eq!(
            (r.port, r.path.as_str(), r.authority.as_str()),
            (80, "/?x", "pypi.test")
        );
        // Header values lose the blanks around them; a name keeps its spelling.
        let r = req("GET http://a.test/ HTTP/1.1\r\nUser-Agent: \t pip/24  \r\nX-Empty:\r\n\r\n")
            .unwrap();
        assert_eq!(
            r.headers,
            [
                ("User-Agent".to_string(), b"pip/24".to_vec()),
                ("X-Empty".to_string(), Vec::new())
            ]
        );
        let r = req("GET http://[::1]:81 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(
            (r.port, r.path.as_str(), r.authority.as_str()),
            (81, "/", "[::1]:81")
        );
    }

    #[test]
    fn heads_the_proxy_does_not_speak_are_refused() {
        for head in [
            "GET /simple/ HTTP/1.1\r\nHost: pypi.test\r\n\r\n",
            "GET https://pypi.test/ HTTP/1.1\r\n\r\n",
            "GET ftp://pypi.test/ HTTP/1.1\r\n\r\n",
            "GET http://user:pw@pypi.test/ HTTP/1.1\r\n\r\n",
            "GET http://pypi.test:0/ HTTP/1.1\r\n\r\n",
            "GET http://pypi.test:/ HTTP/1.1\r\n\r\n",
            "GET http://127.1/ HTTP/1.1\r\n\r\n",
            "CONNECT pypi.test HTTP/1.1\r\n\r\n",
            "CONNECT ::1:443 HTTP/1.1\r\n\r\n",
            "GET http://pypi.test/ HTTP/2\r\n\r\n",
            "GET  http://pypi.test/ HTTP/1.1\r\n\r\n",
            "GARBAGE\r\n\r\n",
            "GET http://pypi.test/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
            "GET http://pypi.test/ HTTP/1.1\r\nno colon\r\n\r\n",
            "GET http://pypi.test/ HTTP/1.1\r\nBad Name: x\r\n\r\n",
            "GET http://pypi.test/ HTTP/1.1\r\nX : x\r\n\r\n",
            "GET http://pypi.test/ HTTP/1.1\r\nX: a\rb\r\n\r\n",
            "GET http://pypi.test/ HTTP/1.1\r\nX: a\x01b\r\n\r\n",
            "GET http://pypi.test/ HTTP/1.1\r\nX: a\0b\r\n\r\n",
            "GET http://pypi.test/ HTTP/1.1 extra\r\n\r\n",
            "GET http://pypi.test/\u{e9} HTTP/1.1\r\n\r\n",
            "\r\n\r\n",
        ] {
            assert!(req(head).is_err(), "{head:?}");
        }
        // What is wrong is said, and how far the request was read.
        for (head, method, message) in [
            (
                "GARBAGE\r\n\r\n",
                Method::Unknown,
                "the request line is not \"METHOD TARGET HTTP/1.1\"",
            ),
            (
                "GET http://pypi.test/ HTTP/2\r\n\r\n",
                Method::Http,
                "\"HTTP/2\" is not HTTP/1.1 or HTTP/1.0",
            ),
            (
                "CONNECT a.test:443 HTTP/1.1\r\nX: \x7f\r\n\r\n",
                Method::Connect,
                "a header holds a control character",
            ),
            (
                "GET http://pypi.test/\u{e9} HTTP/1.1\r\n\r\n",
                Method::Unknown,
                "the request line is not ASCII",
            ),
        ] {
            let e = req(head).unwrap_err();
            assert_eq!(
                (e.method, e.message.as_str()),
                (method, message),
                "{head:?}"
            );
        }
        let e = req("GET http://pypi.test/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n").unwrap_err();
        assert!(e.message.contains("folded over two lines"), "{}", e.message);
        assert_eq!(
            req("CONNECT pypi.test HTTP/1.1\r\n\r\n")
                .unwrap_err()
                .method,
            Method::Connect
        );
    }

    #[test]
    fn any_number_of_headers_within_the_size_limit_is_read() {
        let mut head = String::from("GET http://a.test/ HTTP/1.1\r\n");
        for i in 0..2_000 {
            head.push_str(&format!("X{i}:\n"));
        }
        head.push_str("\r\n");
        let r = req(&head).unwrap();
        assert_eq!(r.headers.len(), 2_000);
        assert_eq!(r.headers[1_999], ("X1999".to_string(), Vec::new()));
    }

    #[test]
    fn the_forwarded_head_is_origin_form_without_hop_by_hop_headers() {
        let r = req(
            "POST http://pypi.test/upload HTTP/1.1\r\nHost: evil.test\r\nProxy-Connection: keep-alive\r\n\
             Proxy-Authorization: Basic c2VjcmV0\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n\
             Content-Length: 3\r\nUser-Agent: pip/24\r\n\r\n",
        )
        .unwrap();
        let out = String::from_utf8(forward_head(&r)).unwrap();
        assert_eq!(
            out,
            "POST /upload HTTP/1.1\r\nHost: pypi.test\r\nContent-Length: 3\r\nUser-Agent: pip/24\r\nConnection: close\r\n\r\n"
        );
    }

    #[tokio::test]
    async fn a_head_is_read_up_to_its_blank_line_within_the_limit() {
        let mut input: &[u8] = b"CONNECT a.test:443 HTTP/1.1\r\n\r\n\x16\x03\x01hello";
        let (head, rest) = read_head(&mut input, 64, Duration::from_secs(1))
            .await
            .unwrap();
        assert_eq!(head, b"CONNECT a.test:443 HTTP/1.1\r\n\r\n");
        assert_eq!(rest, b"\x16\x03\x01hello");
        let big = format!(
            "GET http://a.test/ HTTP/1.1\r\nX: {}\r\n\r\n",
            "a".repeat(100)
        );
        let mut input = big.as_bytes();
        assert_eq!(
            read_head(&mut input, 64, Duration::from_secs(1))
                .await
                .unwrap_err(),
            HeadError::TooLarge
        );
        let mut input: &[u8] = b"GET http://a.test/ HTTP/1.1\r\n";
        assert_eq!(
            read_head(&mut input, 64, Duration::from_secs(1))
                .await
                .unwrap_err(),
            HeadError::Incomplete
        );
        let mut input: &[u8] = b"";
        assert_eq!(
            read_head(&mut input, 64, Duration::from_secs(1))
                .await
                .unwrap_err(),
            HeadError::Nothing
        );
    }
}
