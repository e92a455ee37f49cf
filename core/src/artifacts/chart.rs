//! Interactive charts: an HTML file the model saved in output/ (a Plotly figure written
//! with `fig.write_html(..., include_plotlyjs=True)`, or any page whose script is
//! inlined), shown live by a front end in a frame that has no network and no way to the
//! app.
//!
//! The file is model output, so hostile. Three layers keep it in its box, each enough
//! on its own against the network:
//! - the front end's `<iframe sandbox="allow-scripts">` (never `allow-same-origin`):
//!   the page runs in an opaque origin, with no cookies, storage, pop-ups, forms or
//!   top navigation, and none of the app's scripts (Tauri injects its IPC into the main
//!   frame only, and its calls need a key only the main frame holds);
//! - the response that serves it carries [`CSP`] with `sandbox allow-scripts`, so it is
//!   sandboxed even if it is loaded some other way;
//! - [`framed`] puts the same policy in a `<meta>` as the document's first element,
//!   before any script of the file, for a renderer that ignores the header.
//!
//! The policy lets inline script and style run (the library is inlined in the file)
//! and allows nothing to be fetched: no `connect-src` (fetch, XHR, WebSocket,
//! EventSource), no image, font, frame or script from any URL but `data:`/`blob:`.
//!
//! ```
//! use sandalyst::artifacts::chart;
//! let page = chart::framed(b"<html><body><script>1</script></body></html>");
//! let text = String::from_utf8(page).unwrap();
//! assert!(text.starts_with("<meta http-equiv=\"Content-Security-Policy\""));
//! assert!(chart::is_chart("output/sales.html"));
//! ```

/// What a chart's page may do: run its own inline script and style, and show images
/// and fonts it carries as `data:`/`blob:` URLs. Nothing is fetched from anywhere.
/// `'unsafe-eval'`: Vega and some Plotly traces compile expressions with `Function`;
/// inside this frame it reaches nothing more than inline script already does.
pub const CSP: &str = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; \
     style-src 'unsafe-inline'; img-src data: blob:; font-src data:; media-src data: blob:; \
     connect-src 'none'; frame-src 'none'; worker-src 'none'; object-src 'none'; \
     form-action 'none'; base-uri 'none'";

/// The policy of the HTTP header: [`CSP`] plus the sandbox, so the page has an opaque
/// origin however it is loaded.
pub fn header_policy() -> String {
    format!("{CSP}; sandbox allow-scripts")
}

/// Charts larger than this are not served (Plotly's inlined library is about 9 MB).
pub const MAX_CHART_BYTES: u64 = 64 << 20;

/// Whether a file is shown as an interactive chart: an `.html` or `.htm` file.
pub fn is_chart(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, e)| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"))
}

/// The `<meta>` that carries [`CSP`].
pub fn meta() -> String {
    format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">")
}

/// The page as the frame gets it: [`meta`] inserted as its first element, after a
/// leading byte-order mark and doctype (so a standards-mode page stays one), before
/// anything else of the file. A meta policy binds what follows it, so no script of
/// the file runs before it.
pub fn framed(html: &[u8]) -> Vec<u8> {
    let mut at = 0;
    if html.starts_with(b"\xEF\xBB\xBF") {
        at = 3;
    }
    let rest = &html[at..];
    let ws = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let after_ws = &rest[ws..];
    if after_ws.len() >= 9 && after_ws[..9].eq_ignore_ascii_case(b"<!doctype") {
        if let Some(end) = after_ws.iter().position(|&b| b == b'>') {
            at += ws + end + 1;
        }
    }
    let meta = meta();
    let mut out = Vec::with_capacity(html.len() + meta.len());
    out.extend_from_slice(&html[..at]);
    out.extend_from_slice(meta.as_bytes());
    out.extend_from_slice(&html[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_html_files() {
        assert!(is_chart("a.html"));
        assert!(is_chart("outputs/Sales.HTM"));
        assert!(!is_chart("a.html.png"));
        assert!(!is_chart("html"));
        assert!(!is_chart("report.md"));
    }

    #[test]
    fn the_policy_comes_before_anything_of_the_file() {
        let meta = meta();
        // No doctype: the very start.
        let page = framed(b"<script>fetch('http://127.0.0.1/')</script><html>");
        assert!(String::from_utf8(page).unwrap().starts_with(&meta));
        // A doctype (any case, after whitespace) stays first; then the policy.
        let page = framed(b"\n <!DOCTYPE html>\n<html><head><script>x()</script>");
        let text = String::from_utf8(page).unwrap();
        assert_eq!(
            text,
            format!("\n <!DOCTYPE html>{meta}\n<html><head><script>x()</script>")
        );
        let page = framed(b"\xEF\xBB\xBF<!doctype html><p>");
        assert_eq!(&page[..3], b"\xEF\xBB\xBF");
        assert!(page[3..].starts_with(b"<!doctype html><meta http-equiv"));
        // A doctype that never closes is not searched past: the policy goes first.
        let page = framed(b"<!doctype html");
        assert!(String::from_utf8(page).unwrap().starts_with(&meta));
        // Bytes that are not UTF-8 are kept as they are.
        let page = framed(b"<p>\xff\xfe</p>");
        assert!(page.ends_with(b"<p>\xff\xfe</p>"));
    }

    #[test]
    fn the_policy_fetches_nothing() {
        for d in [
            "default-src 'none'",
            "connect-src 'none'",
            "img-src data: blob:",
            "font-src data:",
            "frame-src 'none'",
        ] {
            assert!(CSP.contains(d), "{d}");
        }
        assert!(!CSP.contains("http"), "no host is allowed: {CSP}");
        assert!(!CSP.contains("'self'"), "{CSP}");
        assert!(header_policy().ends_with("sandbox allow-scripts"));
        assert!(!header_policy().contains("allow-same-origin"));
        // The meta's attribute cannot be closed early by the policy itself.
        assert!(!CSP.contains('"'));
    }
}
