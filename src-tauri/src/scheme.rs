//! The `sandalyst:` URI scheme: how images of a session reach the page.
//!
//! `sandalyst://localhost/<session id>/<path inside the session folder>` (on Windows
//! `http://sandalyst.localhost/...`). It answers only for image files, and for HTML
//! charts of `outputs/`, that [`paths::resolve_inside`] accepts; everything else is a
//! 4xx with a short reason. Responses carry `nosniff` and a CSP of their own, so an SVG
//! opened directly still cannot run script (inside `<img>`, scripts of an SVG never run
//! anyway), and a chart runs sandboxed with nothing to fetch ([`chart`]).

use std::path::PathBuf;

use percent_encoding::percent_decode_str;
use tauri::http::{header, Request, Response, StatusCode};

use sandalyst::api::files::{self as paths, check_session_id, resolve_inside};
use sandalyst::api::preview::chart;
use sandalyst::api::preview::is_output;

pub const SCHEME: &str = "sandalyst";

/// Images larger than this are not served.
pub const MAX_SERVED_BYTES: u64 = 64 << 20;

/// The scheme's root URL on this OS.
pub fn root_url() -> String {
    if cfg!(windows) {
        format!("http://{SCHEME}.localhost/")
    } else {
        format!("{SCHEME}://localhost/")
    }
}

/// The URL prefix of a session's files as the page must write it.
pub fn base_url(session_id: &str) -> String {
    format!("{}{session_id}/", root_url())
}

pub use sandalyst::api::preview::image_type;

/// Split `/<session>/<rel>` into its decoded parts.
pub fn parse_path(path: &str) -> Result<(String, String), paths::Refused> {
    let path = path.strip_prefix('/').unwrap_or(path);
    let (session, rel) = path.split_once('/').ok_or(paths::Refused::NotRelative)?;
    let decode = |s: &str| {
        percent_decode_str(s)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| paths::Refused::NotRelative)
    };
    let session = decode(session)?;
    check_session_id(&session)?;
    // Decode segment by segment so an encoded `/` (%2F) cannot create a new segment
    // unnoticed: it is refused by resolve_inside as part of a name.
    let rel = rel
        .split('/')
        .map(decode)
        .collect::<Result<Vec<_>, _>>()?
        .join("/");
    if rel.split('/').count() != path.split_once('/').unwrap().1.split('/').count() {
        return Err(paths::Refused::NotRelative);
    }
    Ok((session, rel))
}

fn reply(status: StatusCode, msg: &str) -> Response<Vec<u8>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("X-Content-Type-Options", "nosniff")
        .body(msg.as_bytes().to_vec())
        .unwrap()
}

/// Answer one request; `session_dir` maps a checked session id to its folder.
pub fn respond(
    request: &Request<Vec<u8>>,
    session_dir: impl Fn(&str) -> Option<PathBuf>,
) -> Response<Vec<u8>> {
    if request.method() != "GET" {
        return reply(StatusCode::METHOD_NOT_ALLOWED, "only GET");
    }
    let (session, rel) = match parse_path(request.uri().path()) {
        Ok(p) => p,
        Err(e) => return reply(StatusCode::BAD_REQUEST, &e.to_string()),
    };
    let Some(root) = session_dir(&session) else {
        return reply(StatusCode::NOT_FOUND, "no such session");
    };
    if chart::is_chart(&rel) && is_output(&rel) {
        return serve_chart(&root, &rel);
    }
    let Some(content_type) = image_type(&rel) else {
        return reply(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "only images and the charts of outputs/ are served",
        );
    };
    let file = match resolve_inside(&root, &rel) {
        Ok(f) => f,
        Err(paths::Refused::Missing) => return reply(StatusCode::NOT_FOUND, "no such file"),
        Err(e) => return reply(StatusCode::FORBIDDEN, &e.to_string()),
    };
    match std::fs::metadata(&file) {
        Ok(m) if m.len() > MAX_SERVED_BYTES => {
            return reply(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the image is too large to show",
            )
        }
        Ok(_) => {}
        Err(_) => return reply(StatusCode::NOT_FOUND, "no such file"),
    }
    match std::fs::read(&file) {
        Ok(bytes) => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, content_type)
            .header("X-Content-Type-Options", "nosniff")
            .header(
                "Content-Security-Policy",
                "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
            )
            .header(header::CACHE_CONTROL, "no-cache")
            .body(bytes)
            .unwrap(),
        Err(_) => reply(StatusCode::NOT_FOUND, "cannot read the file"),
    }
}

/// An HTML chart of the outputs: the page with its policy first, under a header that
/// sandboxes it and forbids every fetch.
fn serve_chart(root: &std::path::Path, rel: &str) -> Response<Vec<u8>> {
    let file = match resolve_inside(root, rel) {
        Ok(f) => f,
        Err(paths::Refused::Missing) => return reply(StatusCode::NOT_FOUND, "no such file"),
        Err(e) => return reply(StatusCode::FORBIDDEN, &e.to_string()),
    };
    match std::fs::metadata(&file) {
        Ok(m) if m.len() > chart::MAX_CHART_BYTES => {
            return reply(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the chart is too large to show",
            )
        }
        Ok(_) => {}
        Err(_) => return reply(StatusCode::NOT_FOUND, "no such file"),
    }
    match std::fs::read(&file) {
        Ok(bytes) => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
            .header("X-Content-Type-Options", "nosniff")
            .header("Content-Security-Policy", chart::header_policy())
            .header("Referrer-Policy", "no-referrer")
            .header(header::CACHE_CONTROL, "no-cache")
            .body(chart::framed(&bytes))
            .unwrap(),
        Err(_) => reply(StatusCode::NOT_FOUND, "cannot read the file"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(uri: &str, root: &std::path::Path) -> Response<Vec<u8>> {
        let req = Request::builder().uri(uri).body(Vec::new()).unwrap();
        let root = root.to_path_buf();
        respond(&req, move |id| (id == "s1").then(|| root.clone()))
    }

    #[test]
    fn serves_session_images_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s1");
        std::fs::create_dir_all(root.join("outputs")).unwrap();
        std::fs::write(root.join("outputs/a b.png"), b"PNG").unwrap();
        std::fs::write(root.join("outputs/r.md"), b"# r").unwrap();
        std::fs::write(dir.path().join("x.png"), b"secret").unwrap();

        let ok = get("sandalyst://localhost/s1/outputs/a%20b.png", &root);
        assert_eq!(ok.status(), StatusCode::OK);
        assert_eq!(ok.body(), b"PNG");
        assert_eq!(ok.headers()["content-type"], "image/png");

        for uri in [
            "sandalyst://localhost/s1/outputs/r.md",
            "sandalyst://localhost/s1/../x.png",
            "sandalyst://localhost/s1/outputs/%2E%2E/%2E%2E/x.png",
            "sandalyst://localhost/s1/outputs%2F..%2F..%2Fx.png",
            "sandalyst://localhost/s2/outputs/a%20b.png",
            "sandalyst://localhost/%2E%2E/x.png",
        ] {
            let got = get(uri, &root);
            assert!(got.status().is_client_error(), "{uri}: {}", got.status());
            assert_ne!(got.body(), b"secret", "{uri}");
        }
    }

    #[test]
    fn serves_output_charts_sandboxed_with_their_policy_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s1");
        std::fs::create_dir_all(root.join("outputs")).unwrap();
        std::fs::create_dir_all(root.join("inputs")).unwrap();
        let page = b"<html><body><script>fetch('http://127.0.0.1:9/')</script></body></html>";
        std::fs::write(root.join("outputs/c.html"), page).unwrap();
        std::fs::write(root.join("inputs/c.html"), page).unwrap();
        std::fs::write(dir.path().join("x.html"), b"secret").unwrap();

        let ok = get("sandalyst://localhost/s1/outputs/c.html", &root);
        assert_eq!(ok.status(), StatusCode::OK);
        assert_eq!(ok.headers()["content-type"], "text/html; charset=utf-8");
        let csp = ok.headers()["content-security-policy"].to_str().unwrap();
        assert!(csp.starts_with("default-src 'none'"), "{csp}");
        assert!(csp.contains("connect-src 'none'"), "{csp}");
        assert!(csp.ends_with("sandbox allow-scripts"), "{csp}");
        let body = String::from_utf8(ok.body().clone()).unwrap();
        assert!(body.starts_with(&chart::meta()), "{body}");
        assert!(body.ends_with(std::str::from_utf8(page).unwrap()));

        for uri in [
            // Only the outputs' HTML is a chart.
            "sandalyst://localhost/s1/inputs/c.html",
            "sandalyst://localhost/s1/outputs/../../x.html",
            "sandalyst://localhost/s1/outputs/%2E%2E/%2E%2E/x.html",
            "sandalyst://localhost/s1/outputs/missing.html",
        ] {
            let got = get(uri, &root);
            assert!(got.status().is_client_error(), "{uri}: {}", got.status());
            assert_ne!(got.body(), b"secret", "{uri}");
        }
    }
}
