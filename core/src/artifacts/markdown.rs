//! A Markdown report rendered to HTML that is safe to insert into the desktop's page.
//!
//! The report is written by model code, so it is hostile input. It goes through two
//! layers, and the second alone is enough to make the output inert:
//!
//! 1. **Rendering** (pulldown-cmark: CommonMark, GFM tables, strikethrough, task lists).
//!    Before rendering, the event stream is rewritten so the result is readable and says
//!    what was removed: raw HTML is shown as text, never interpreted (except `<br>`,
//!    which becomes a line break); links whose scheme is not http, https or mailto lose
//!    the link and keep their text; remote images become a visible
//!    `[remote image blocked: URL]`; other images that are not plain relative paths or
//!    inline raster `data:` images become `[image not shown]`; nesting deeper than
//!    [`MAX_NESTING`] is flattened; headings get stable ids; table alignment becomes an
//!    `align` attribute.
//! 2. **Sanitising** (ammonia, an HTML5 parser and an allow-list): only the tags and
//!    attributes Markdown produces survive; no scripts, styles, frames, forms, SVG,
//!    event handlers or `style` attributes; URLs are checked again after the browser's
//!    own normalisation (entities, tabs, case); links get `rel="noopener noreferrer"`.
//!
//! Why raw HTML is shown as text rather than sanitised into markup: HTML parsing is
//! quadratic in nesting depth (100,000 nested `<div>`s take minutes), and raw markup
//! cannot be flattened as Markdown structure can. Shown as text, it also tells the
//! reader plainly what the model tried to write.
//!
//! Remote images are blocked because loading one tells a third party that the report
//! was opened, and from where. Relative images (the run's own outputs) are kept only as
//! plain paths inside the outputs folder and can be mapped by the caller with
//! [`MarkdownOptions::image_base`], or replaced by inline `data:` URIs with
//! [`MarkdownOptions::inline_images`] for a page that must load nothing (the shared
//! report); such a page can also leave out web links
//! ([`MarkdownOptions::web_links`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use pulldown_cmark::{Alignment, CowStr, Event, Options, Parser, Tag, TagEnd};
use serde::Serialize;

/// Reports longer than this are cut here, with a note at the end of the output.
pub const MAX_MARKDOWN_BYTES: usize = 5 * 1024 * 1024;

/// Prefix of every `id` in the output (the sanitiser enforces it). Ids that are not
/// valid JavaScript identifiers cannot clobber the page's globals (`window.foo`)
/// through named access.
pub const ID_PREFIX: &str = "sec-";

/// Block quotes, lists and emphasis nested deeper than this are flattened (their
/// content is kept): parsing the HTML costs time quadratic in its depth.
pub const MAX_NESTING: usize = 32;

/// Remote URLs shown in placeholders are cut to this many characters.
const MAX_URL_IN_TEXT: usize = 200;
/// Image alt texts are cut to this many characters.
const MAX_ALT_CHARS: usize = 200;
/// Link and image URLs longer than this, or with more `&` than [`MAX_URL_AMPERSANDS`],
/// are not kept (inline `data:` images excepted): each `&` in an attribute costs a scan
/// to its end when serialised (see `bound_text_runs`).
const MAX_URL_BYTES: usize = 4096;
/// See [`MAX_URL_BYTES`].
const MAX_URL_AMPERSANDS: usize = 64;
/// Text runs longer than this are split (see `bound_text_runs`).
const MAX_TEXT_RUN: usize = 256;
/// Heading texts for the table of contents are cut to this many characters.
const MAX_HEADING_CHARS: usize = 200;

#[derive(Clone, Debug)]
pub struct MarkdownOptions {
    /// Prefix for relative image paths, e.g. the custom-protocol URL under which the
    /// desktop serves this run's outputs (`sandalyst://run/<id>/output/`). Without it
    /// they stay relative. Only plain relative paths (no `..`, no leading `/`, no
    /// scheme, query or fragment) are ever kept.
    pub image_base: Option<String>,
    /// Give headings `id="sec-<slug>"` (for a table of contents).
    pub heading_ids: bool,
    /// For a page that loads nothing: relative image paths become the `data:` URI
    /// this map gives for them (keys are plain relative paths, percent-decoded, e.g.
    /// `chart.png` or `figs/a b.png`), and a relative image not in it is not shown.
    /// `image_base` is not used then. The URIs are the caller's own (any image type,
    /// SVG included: in an `<img>` its scripts do not run).
    pub inline_images: Option<Arc<BTreeMap<String, String>>>,
    /// Keep http and https links. Without them such a link keeps its text, followed by
    /// its address as text, so a page that must point nowhere still says where.
    pub web_links: bool,
}

impl Default for MarkdownOptions {
    fn default() -> Self {
        MarkdownOptions {
            image_base: None,
            heading_ids: true,
            inline_images: None,
            web_links: true,
        }
    }
}

/// A heading, for a table of contents. `text` is plain text (escape it to show it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Heading {
    pub level: u8,
    pub text: String,
    /// The heading's `id` in the HTML (empty when ids are off).
    pub id: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct RenderedMarkdown {
    /// Sanitised HTML, safe to insert into the page.
    pub html: String,
    pub headings: Vec<Heading>,
    /// The input was longer than [`MAX_MARKDOWN_BYTES`]; only its start is rendered.
    pub truncated: bool,
    /// The keys of [`MarkdownOptions::inline_images`] that the output shows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inlined: Vec<String>,
}

/// Render a Markdown report to sanitised HTML.
pub fn to_safe_html(markdown: &str, opts: &MarkdownOptions) -> String {
    render(markdown, opts).html
}

/// Render a Markdown report to sanitised HTML, with its headings.
pub fn render(markdown: &str, opts: &MarkdownOptions) -> RenderedMarkdown {
    let truncated = markdown.len() > MAX_MARKDOWN_BYTES;
    let source = if truncated {
        &markdown[..floor_char_boundary(markdown, MAX_MARKDOWN_BYTES)]
    } else {
        markdown
    };

    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events: Vec<Event> = Parser::new_ext(source, options).collect();
    let (events, headings, inlined) = rewrite(events, opts);
    let mut rendered = String::with_capacity(source.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut rendered, events.into_iter());

    let mut html = sanitiser(opts).clean(&rendered).to_string();
    if truncated {
        // Appended after sanitising, from our own text and numbers only.
        html.push_str(&format!(
            "\n<p><strong>Report truncated: it is {} bytes; only the first {} MB are shown.</strong></p>\n",
            markdown.len(),
            MAX_MARKDOWN_BYTES >> 20
        ));
    }
    RenderedMarkdown {
        html,
        headings,
        truncated,
        inlined,
    }
}

/// Layer 1: rewrite the parsed events (see the module doc); also returns the headings
/// and the inline images shown.
fn rewrite<'a>(
    events: Vec<Event<'a>>,
    opts: &MarkdownOptions,
) -> (Vec<Event<'a>>, Vec<Heading>, Vec<String>) {
    let mut out = Vec::with_capacity(events.len());
    let mut headings = Vec::new();
    let mut inlined: Vec<String> = Vec::new();
    let mut slugs = Slugs::default();
    // For each open link, whether it was kept (so its end tag is kept or dropped too),
    // and the address to say after its text when a web link was taken out.
    let mut links: Vec<(bool, Option<String>)> = Vec::new();
    // The same for each open container that nests (see `nests`), and how many are kept.
    let mut containers: Vec<bool> = Vec::new();
    let mut depth = 0usize;
    let mut table = TableCells::default();

    let mut i = 0;
    while i < events.len() {
        let event = events[i].clone();
        i += 1;
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                let end = events[i..]
                    .iter()
                    .position(|e| matches!(e, Event::End(TagEnd::Heading(_))))
                    .map_or(events.len(), |p| i + p);
                let text = shorten(&plain_text(&events[i..end]), MAX_HEADING_CHARS);
                let id = if opts.heading_ids {
                    slugs.id_for(&text)
                } else {
                    String::new()
                };
                headings.push(Heading {
                    level: level as u8,
                    text,
                    id: id.clone(),
                });
                out.push(Event::Start(Tag::Heading {
                    level,
                    id: (!id.is_empty()).then(|| CowStr::from(id)),
                    classes: Vec::new(),
                    attrs: Vec::new(),
                }));
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                id,
                ..
            }) => {
                let web = classify(&dest_url) == Dest::Web;
                let keep = link_allowed(&dest_url) && (opts.web_links || !web);
                // The address as text, unless the text already is the address.
                let said = (web && !keep && url_size_ok(&dest_url)).then(|| {
                    let end = matching_link_end(&events, i);
                    let text = plain_text(&events[i..end]);
                    (text != dest_url.trim()).then(|| dest_url.to_string())
                });
                links.push((keep, said.flatten()));
                if keep {
                    // Titles are dropped: tooltips are not worth another attribute.
                    out.push(Event::Start(Tag::Link {
                        link_type,
                        dest_url,
                        title: CowStr::Borrowed(""),
                        id,
                    }));
                }
            }
            Event::End(TagEnd::Link) => match links.pop() {
                Some((true, _)) => out.push(Event::End(TagEnd::Link)),
                Some((false, Some(address))) => {
                    let address = shorten(&address, MAX_URL_IN_TEXT);
                    out.push(Event::Text(format!(" ({address})").into()));
                }
                _ => {}
            },
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                id,
                ..
            }) => {
                // The alt text is rebuilt as one capped, plain string (it ends up in an
                // attribute), so the image's inner events are consumed here.
                let end = matching_image_end(&events, i);
                let alt = plain_text(&events[i..end]);
                i = (end + 1).min(events.len());
                let shown = match &opts.inline_images {
                    None => image_src(&dest_url, None).is_some(),
                    Some(map) => match inline_key(&dest_url) {
                        Some(key) if map.contains_key(&key) => {
                            if !inlined.contains(&key) {
                                inlined.push(key);
                            }
                            true
                        }
                        Some(_) => false,
                        None => classify(&dest_url) == Dest::DataImage,
                    },
                };
                if shown {
                    out.push(Event::Start(Tag::Image {
                        link_type,
                        dest_url,
                        title: CowStr::Borrowed(""),
                        id,
                    }));
                    out.push(Event::Text(shorten(&alt, MAX_ALT_CHARS).into()));
                    out.push(Event::End(TagEnd::Image));
                } else {
                    out.push(Event::Text(blocked_image_text(&dest_url, &alt).into()));
                }
            }
            // Written out as tags so that `bound_text_runs` can split long code spans.
            Event::Code(code) => {
                out.push(Event::Html("<code>".into()));
                out.push(Event::Text(code));
                out.push(Event::Html("</code>".into()));
            }
            Event::Start(tag) if nests(&tag) => {
                let keep = depth < MAX_NESTING;
                containers.push(keep);
                if keep {
                    depth += 1;
                    out.push(Event::Start(tag));
                }
            }
            Event::End(tag) if nests_end(tag) => {
                if containers.pop().unwrap_or(false) {
                    depth -= 1;
                    out.push(Event::End(tag));
                }
            }
            // Raw HTML: shown as the text it is.
            Event::Start(Tag::HtmlBlock) => out.push(Event::Start(Tag::Paragraph)),
            Event::End(TagEnd::HtmlBlock) => out.push(Event::End(TagEnd::Paragraph)),
            Event::InlineHtml(html) if is_line_break(&html) => out.push(Event::HardBreak),
            Event::Html(html) | Event::InlineHtml(html) => out.push(Event::Text(html)),
            Event::Start(Tag::Table(alignments)) => {
                table.alignments = alignments;
                // Without alignments the renderer writes no `style` attribute.
                out.push(Event::Start(Tag::Table(Vec::new())));
            }
            Event::Start(Tag::TableHead) => {
                table.in_head = true;
                table.column = 0;
                out.push(Event::Start(Tag::TableHead));
            }
            Event::End(TagEnd::TableHead) => {
                table.in_head = false;
                out.push(Event::End(TagEnd::TableHead));
            }
            Event::Start(Tag::TableRow) => {
                table.column = 0;
                out.push(Event::Start(Tag::TableRow));
            }
            Event::Start(Tag::TableCell) => out.push(table.start_cell()),
            Event::End(TagEnd::TableCell) => {
                table.column += 1;
                out.push(Event::End(TagEnd::TableCell));
            }
            other => out.push(other),
        }
    }
    (bound_text_runs(out), headings, inlined)
}

/// Split runs of text longer than [`MAX_TEXT_RUN`] bytes with an empty comment.
///
/// Why: html5ever's serializer (0.40), which the sanitiser uses, looks for the next
/// character to escape by scanning to the next `<` or `>` of the text node, once per
/// `&` or Latin-1 character (`°`, `±`...), which is quadratic in the length of a text
/// node full of them: half a megabyte of `a&b` takes minutes. The comment splits the
/// text into separate DOM nodes; the sanitiser strips it and keeps the nodes apart, so
/// the output is unchanged and its cost linear.
fn bound_text_runs(events: Vec<Event<'_>>) -> Vec<Event<'_>> {
    let mut out = Vec::with_capacity(events.len());
    let mut run = 0usize;
    let mut in_image = false;
    for event in events {
        match event {
            // Inside an image the text is its (capped) alt attribute: nothing to split.
            Event::Text(text) if !in_image => {
                let mut rest: &str = &text;
                if run + rest.len() <= MAX_TEXT_RUN {
                    run += rest.len();
                    out.push(Event::Text(text));
                    continue;
                }
                while !rest.is_empty() {
                    let room_left = MAX_TEXT_RUN.saturating_sub(run).min(rest.len());
                    let room = floor_char_boundary(rest, room_left);
                    // A character wider than the room left: break before it.
                    let cut = if room == 0 && run == 0 {
                        rest.chars().next().map_or(0, char::len_utf8)
                    } else {
                        room
                    };
                    if cut > 0 {
                        out.push(Event::Text(CowStr::from(rest[..cut].to_string())));
                        run += cut;
                        rest = &rest[cut..];
                    }
                    if !rest.is_empty() {
                        out.push(Event::Html(CowStr::Borrowed("<!---->")));
                        run = 0;
                    }
                }
            }
            // The renderer writes these as text too.
            Event::SoftBreak => {
                run += 1;
                out.push(event);
            }
            other => {
                match other {
                    Event::Start(Tag::Image { .. }) => in_image = true,
                    Event::End(TagEnd::Image) => in_image = false,
                    _ => {}
                }
                run = 0;
                out.push(other);
            }
        }
    }
    out
}

/// Containers that can nest without limit in Markdown. Only these are flattened: the
/// renderer keeps state for tables, and the other tags cannot nest.
fn nests(tag: &Tag) -> bool {
    matches!(
        tag,
        Tag::BlockQuote(_)
            | Tag::List(_)
            | Tag::Item
            | Tag::Emphasis
            | Tag::Strong
            | Tag::Strikethrough
    )
}

fn nests_end(tag: TagEnd) -> bool {
    matches!(
        tag,
        TagEnd::BlockQuote(_)
            | TagEnd::List(_)
            | TagEnd::Item
            | TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
    )
}

/// `<br>`, `<br/>` or `<br />`, which reports use inside table cells.
fn is_line_break(html: &str) -> bool {
    let tag: String = html
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    tag == "<br>" || tag == "<br/>"
}

/// Table cells with their alignment as an `align` attribute instead of the renderer's
/// `style="text-align: ..."` (style attributes are not allowed at all). The renderer
/// still writes the matching end tag, from its own head/body state.
#[derive(Default)]
struct TableCells {
    alignments: Vec<Alignment>,
    in_head: bool,
    column: usize,
}

impl TableCells {
    fn start_cell(&self) -> Event<'static> {
        let align = match self.alignments.get(self.column) {
            Some(Alignment::Left) => "left",
            Some(Alignment::Center) => "center",
            Some(Alignment::Right) => "right",
            _ => return Event::Start(Tag::TableCell),
        };
        let tag = if self.in_head { "th" } else { "td" };
        Event::Html(format!("<{tag} align=\"{align}\">").into())
    }
}

/// Index of the `End(Link)` closing the link whose content starts at `from` (links do
/// not nest).
fn matching_link_end(events: &[Event], from: usize) -> usize {
    events[from..]
        .iter()
        .position(|e| matches!(e, Event::End(TagEnd::Link)))
        .map_or(events.len(), |p| from + p)
}

/// Index of the `End(Image)` closing the image whose content starts at `from`.
fn matching_image_end(events: &[Event], from: usize) -> usize {
    let mut depth = 0usize;
    for (j, e) in events.iter().enumerate().skip(from) {
        match e {
            Event::Start(Tag::Image { .. }) => depth += 1,
            Event::End(TagEnd::Image) if depth == 0 => return j,
            Event::End(TagEnd::Image) => depth -= 1,
            _ => {}
        }
    }
    events.len()
}

/// The text of inline events (a heading, an image's alt text), raw HTML included as the
/// text it is shown as.
pub(super) fn plain_text(events: &[Event]) -> String {
    let mut s = String::new();
    for e in events {
        match e {
            Event::Text(t) | Event::Code(t) | Event::InlineHtml(t) => s.push_str(t),
            Event::SoftBreak | Event::HardBreak => s.push(' '),
            _ => {}
        }
    }
    s.trim().to_string()
}

pub(super) fn blocked_image_text(dest: &str, alt: &str) -> String {
    let prefix = if alt.is_empty() {
        String::new()
    } else {
        format!("{} ", shorten(alt, MAX_ALT_CHARS))
    };
    match classify(dest) {
        // The URL is shown so the reader knows what was there; as text it loads nothing.
        Dest::Web | Dest::ProtocolRelative => {
            format!(
                "{prefix}[remote image blocked: {}]",
                shorten(dest, MAX_URL_IN_TEXT)
            )
        }
        // Other schemes (javascript:, file:, data:text/html...) are not echoed.
        _ => format!("{prefix}[image not shown]"),
    }
}

fn shorten(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Heading ids: a slug of the text, made unique within the document.
#[derive(Default)]
struct Slugs {
    seen: HashMap<String, usize>,
}

impl Slugs {
    fn id_for(&mut self, text: &str) -> String {
        let mut slug = String::new();
        for c in text.chars().flat_map(char::to_lowercase) {
            if c.is_alphanumeric() {
                slug.push(c);
            } else if (c.is_whitespace() || c == '-' || c == '_') && !slug.ends_with('-') {
                slug.push('-');
            }
            if slug.chars().count() >= 64 {
                break;
            }
        }
        let slug = match slug.trim_matches('-') {
            "" => "section".to_string(),
            s => s.to_string(),
        };
        let n = self.seen.entry(slug.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            format!("{ID_PREFIX}{slug}")
        } else {
            format!("{ID_PREFIX}{slug}-{n}")
        }
    }
}

/// What a URL is, judged as a browser would read it.
#[derive(Debug, PartialEq, Eq)]
enum Dest {
    /// http or https.
    Web,
    Mailto,
    /// `//host/path` (and its backslash variants): a remote URL without a scheme.
    ProtocolRelative,
    /// `data:image/{png,jpeg,gif,webp};base64,...`
    DataImage,
    Relative,
    /// Any other scheme: javascript:, vbscript:, file:, data:text/html...
    Other,
}

fn classify(url: &str) -> Dest {
    // A browser's URL parser strips leading/trailing C0 controls and spaces and removes
    // tabs and newlines anywhere, so `java\tscript:` is `javascript:`. Do the same.
    let url: String = url
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    if let Some((scheme, _)) = url.split_once(':') {
        let valid_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if valid_scheme {
            return match scheme.to_ascii_lowercase().as_str() {
                "http" | "https" => Dest::Web,
                "mailto" => Dest::Mailto,
                "data" if is_data_image(&url) => Dest::DataImage,
                _ => Dest::Other,
            };
        }
    }
    // Browsers treat `\` as `/` in URLs with special schemes.
    let mut start = url.chars().take(2);
    if start.clone().count() == 2 && start.all(|c| c == '/' || c == '\\') {
        return Dest::ProtocolRelative;
    }
    Dest::Relative
}

fn is_data_image(url: &str) -> bool {
    let Some((head, payload)) = url.split_once(',') else {
        return false;
    };
    let head = head.to_ascii_lowercase();
    // Raster types only: an SVG can carry links and markup of its own. The payload must
    // be plain base64, which also keeps these long URLs cheap to serialise.
    ["png", "jpeg", "jpg", "gif", "webp"]
        .iter()
        .any(|t| head == format!("data:image/{t};base64"))
        && payload
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

pub(super) fn link_allowed(href: &str) -> bool {
    url_size_ok(href) && matches!(classify(href), Dest::Web | Dest::Mailto | Dest::Relative)
}

fn url_size_ok(url: &str) -> bool {
    url.len() <= MAX_URL_BYTES && url.bytes().filter(|&b| b == b'&').count() <= MAX_URL_AMPERSANDS
}

/// The `src` an image may have, or `None` if it must not load.
pub(super) fn image_src(src: &str, base: Option<&str>) -> Option<String> {
    match classify(src) {
        Dest::DataImage => Some(src.to_string()),
        Dest::Relative if url_size_ok(src) => {
            let path = plain_relative_path(src)?;
            Some(format!("{}{path}", base.unwrap_or("")))
        }
        _ => None,
    }
}

/// The key of [`MarkdownOptions::inline_images`] that image `src` names: a plain
/// relative path, percent-decoded. `None` for anything else.
fn inline_key(src: &str) -> Option<String> {
    if classify(src) != Dest::Relative || !url_size_ok(src) {
        return None;
    }
    plain_relative_path(src).map(percent_decode)
}

/// The `src` image `src` gets under `opts`, or `None` if it must not load.
fn src_under(src: &str, opts: &MarkdownOptions) -> Option<String> {
    match &opts.inline_images {
        None => image_src(src, opts.image_base.as_deref()),
        Some(_) if classify(src) == Dest::DataImage => Some(src.to_string()),
        Some(map) => map.get(&inline_key(src)?).cloned(),
    }
}

/// `src` without leading `./` if it is a plain path inside the current folder: no
/// scheme, no leading `/`, no `..` (also percent-encoded: a browser reads `%2e%2e` as
/// `..`), no backslash, query, fragment or control character.
fn plain_relative_path(src: &str) -> Option<&str> {
    let bad = |c: char| c.is_control() || matches!(c, '\\' | ':' | '?' | '#');
    let mut path = src;
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    let decoded = percent_decode(path);
    let plain = !path.is_empty()
        && !path.chars().any(bad)
        && !decoded.chars().any(bad)
        && decoded
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
    plain.then_some(path)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Layer 2: the allow-list.
/// The `language-*` classes a fenced code block keeps (others are dropped).
#[rustfmt::skip]
const CODE_LANGUAGES: [&str; 10] = [
    "language-python", "language-py", "language-sh", "language-bash", "language-shell",
    "language-console", "language-sql", "language-json", "language-text", "language-r",
];

fn sanitiser(opts: &MarkdownOptions) -> ammonia::Builder<'static> {
    #[rustfmt::skip]
    let tags: HashSet<&str> = [
        "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd",
        "del", "details", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3",
        "h4", "h5", "h6", "hr", "i", "img", "input", "ins", "kbd", "li", "mark", "ol", "p",
        "pre", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "summary", "sup",
        "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var", "wbr",
    ]
    .into();
    // Removed together with everything inside them (other unknown tags are removed
    // but their text is kept).
    #[rustfmt::skip]
    let drop_with_content: HashSet<&str> = [
        "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet",
        "noscript", "noembed", "noframes", "template", "textarea", "title", "xmp",
        "plaintext", "svg", "math", "select", "button", "audio", "video", "canvas",
    ]
    .into();
    let mut attributes: HashMap<&str, HashSet<&str>> = HashMap::new();
    attributes.insert("a", ["href"].into());
    attributes.insert("img", ["src", "alt", "width", "height"].into());
    attributes.insert("ol", ["start"].into());
    attributes.insert("input", ["checked"].into());
    for cell in ["td", "th"] {
        attributes.insert(cell, ["align", "colspan", "rowspan"].into());
    }
    for h in ["h1", "h2", "h3", "h4", "h5", "h6"] {
        attributes.insert(h, ["id"].into());
    }
    // Task-list boxes: whatever an `<input>` claims, it becomes a disabled checkbox
    // (an input without `type` would be a text field that could ask for a password).
    let mut forced: HashMap<&str, HashMap<&str, &str>> = HashMap::new();
    forced.insert("input", [("type", "checkbox"), ("disabled", "")].into());

    // A fenced block's language, for the page's highlighter: a fixed list of
    // classes, so a class cannot pick up any other rule of the page's styles.
    let mut classes: HashMap<&str, HashSet<&str>> = HashMap::new();
    classes.insert("code", CODE_LANGUAGES.into());

    let opts = opts.clone();
    let mut b = ammonia::Builder::default();
    b.tags(tags)
        .clean_content_tags(drop_with_content)
        .generic_attributes(["title", "lang"].into())
        .tag_attributes(attributes)
        .set_tag_attribute_values(forced)
        .allowed_classes(classes)
        // `data` is allowed here only so that inline raster images reach the filter
        // below, which admits it for `<img src>` and nothing else.
        .url_schemes(["http", "https", "mailto", "data"].into())
        .url_relative(ammonia::UrlRelative::PassThrough)
        .link_rel(Some("noopener noreferrer"))
        .strip_comments(true)
        .id_prefix(Some(ID_PREFIX))
        // Runs after the scheme check, on values as the HTML parser decoded them.
        .attribute_filter(
            move |element, attribute, value| match (element, attribute) {
                ("img", "src") => src_under(value, &opts).map(Cow::Owned),
                ("a", "href") => (link_allowed(value)
                    && (opts.web_links || classify(value) != Dest::Web))
                    .then_some(Cow::Borrowed(value)),
                (_, "href" | "src") => None,
                _ => Some(Cow::Borrowed(value)),
            },
        );
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(md: &str) -> String {
        to_safe_html(md, &MarkdownOptions::default())
    }

    #[test]
    fn urls_are_classified_as_a_browser_reads_them() {
        assert_eq!(classify("https://example.com"), Dest::Web);
        assert_eq!(classify("HTTP://example.com"), Dest::Web);
        assert_eq!(classify("mailto:a@b.c"), Dest::Mailto);
        assert_eq!(classify("javascript:alert(1)"), Dest::Other);
        assert_eq!(classify(" JaVaScRiPt:alert(1)"), Dest::Other);
        assert_eq!(classify("java\tscript:alert(1)"), Dest::Other);
        assert_eq!(classify("\u{1}javascript:x"), Dest::Other);
        assert_eq!(classify("vbscript:x"), Dest::Other);
        assert_eq!(classify("data:text/html,<script>"), Dest::Other);
        assert_eq!(classify("data:image/svg+xml;base64,AAAA"), Dest::Other);
        assert_eq!(classify("data:image/png;base64,AAAA"), Dest::DataImage);
        assert_eq!(classify("//tracker.example/p.png"), Dest::ProtocolRelative);
        assert_eq!(
            classify("\\\\tracker.example/p.png"),
            Dest::ProtocolRelative
        );
        assert_eq!(classify("/\\tracker.example/p.png"), Dest::ProtocolRelative);
        assert_eq!(classify("chart.png"), Dest::Relative);
        assert_eq!(classify("#section"), Dest::Relative);
    }

    #[test]
    fn only_plain_relative_image_paths_are_kept() {
        for ok in ["chart.png", "./chart.png", "figs/a%20b.png", "a..b.png"] {
            assert!(plain_relative_path(ok).is_some(), "{ok}");
        }
        for bad in [
            "",
            "../secret.png",
            "figs/../../x.png",
            "%2e%2e/x.png",
            ".%2E/x.png",
            "/etc/passwd",
            "C:/x.png",
            "a\\..\\b.png",
            "a.png?x=1",
            "a.png#f",
            "a//b.png",
            "figs/./a.png",
        ] {
            assert!(plain_relative_path(bad).is_none(), "{bad}");
        }
        assert_eq!(
            image_src("./figs/a.png", Some("sandalyst://run/1/output/")).as_deref(),
            Some("sandalyst://run/1/output/figs/a.png")
        );
    }

    /// Layer 2 on its own (layer 1 never lets raw HTML reach it): hostile markup,
    /// including known mutation-XSS shapes, comes out inert.
    #[test]
    fn sanitiser_alone_makes_raw_html_inert() {
        let opts = MarkdownOptions {
            image_base: Some("sandalyst://run/1/output/".into()),
            ..Default::default()
        };
        let sanitiser = sanitiser(&opts);
        for raw in [
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
            "<img src=\"https://tracker.example/p.png\">",
            "<img src=\"//tracker.example/p.png\">",
            "<img src=\"../../etc/passwd\">",
            "<img srcset=\"https://tracker.example/a.png 1x\">",
            "<img src=\"data:image/svg+xml;base64,PHN2Zz4=\">",
            "<a href=\"javascript:alert(1)\">x</a>",
            "<a href=\"java&#x09;script:alert(1)\">x</a>",
            "<a href=\"JaVaScRiPt:alert(1)\">x</a>",
            "<a href=\"vbscript:msgbox(1)\">x</a>",
            "<a href=\"data:text/html,<script>alert(1)</script>\">x</a>",
            "<a href=https://ok.example target=_blank onclick=alert(1) ping=https://tracker.example>x</a>",
            "<svg onload=alert(1)><script>alert(1)</script></svg>",
            "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
            "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">",
            "<style>*{display:none}</style>",
            "<div style=\"background:url(https://tracker.example/x)\">x</div>",
            "<iframe srcdoc=\"<script>alert(1)</script>\"></iframe>",
            "<form action=https://evil.example><input type=password name=pw></form>",
            "<meta http-equiv=refresh content=\"0;url=https://evil.example\">",
            "<base href=https://evil.example>",
            "<link rel=stylesheet href=https://evil.example/x.css>",
            "<object data=x></object><embed src=x>",
            "<!--<script>alert(1)</script>-->",
            "<details open ontoggle=alert(1)>x</details>",
            "<input autofocus onfocus=alert(1)>",
        ] {
            let out = sanitiser.clean(raw).to_string();
            let lower = out.to_ascii_lowercase();
            for bad in [
                "<script", "<iframe", "<style", "<svg", "<math", "<form", "<meta", "<base",
                "<link", "<object", "<embed", "<!--", "style=", " on", "javascript:",
                "vbscript:", "data:text", "data:image/svg", "target=", "ping=", "srcset=",
                "tracker.example", "evil.example", "..",
            ] {
                assert!(!lower.contains(bad), "{raw:?} gave {out:?}");
            }
            if lower.contains("<input") {
                assert!(lower.contains(r#"type="checkbox""#) && lower.contains("disabled"));
            }
        }
        assert_eq!(
            sanitiser.clean("<img src=\"chart.png\">").to_string(),
            r#"<img src="sandalyst://run/1/output/chart.png">"#
        );
    }

    #[test]
    fn code_blocks_keep_a_known_language_only() {
        let out = to_safe_html(
            "```python\nx = 1\n```\n\n```evil onload\ny\n```\n\n<code class=\"language-python big\">z</code>\n",
            &MarkdownOptions::default(),
        );
        assert!(
            out.contains("<code class=\"language-python\">x = 1"),
            "{out}"
        );
        // An unknown language loses its class (ammonia leaves it empty).
        assert!(out.contains("<pre><code class=\"\">y"), "{out}");
        assert!(!out.contains("evil") && !out.contains("onload"), "{out}");
        let raw = sanitiser(&MarkdownOptions::default())
            .clean("<code class=\"language-python big\">z</code><p class=\"x\">p</p>")
            .to_string();
        assert_eq!(raw, "<code class=\"language-python\">z</code><p>p</p>");
    }

    #[test]
    fn headings_get_unique_prefixed_ids() {
        let out = render(
            "# Results\n\n## Method & data\n\n## Results\n\n#\n",
            &MarkdownOptions::default(),
        );
        let ids: Vec<&str> = out.headings.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "sec-results",
                "sec-method-data",
                "sec-results-2",
                "sec-section"
            ]
        );
        assert!(
            out.html
                .contains(r#"<h2 id="sec-method-data">Method &amp; data</h2>"#),
            "{}",
            out.html
        );
        let off = MarkdownOptions {
            heading_ids: false,
            ..Default::default()
        };
        assert!(to_safe_html("# A", &off).starts_with("<h1>A</h1>"));
    }

    #[test]
    fn table_alignment_without_style() {
        let out = html("| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n");
        assert!(!out.contains("style"), "{out}");
        assert!(out.contains(r#"<th align="left">a</th>"#), "{out}");
        assert!(out.contains(r#"<td align="center">2</td>"#), "{out}");
        assert!(out.contains(r#"<td align="right">3</td>"#), "{out}");
    }

    #[test]
    fn task_lists_are_disabled_checkboxes() {
        let out = html("- [x] done\n- [ ] todo\n");
        assert_eq!(out.matches("<input").count(), 2, "{out}");
        assert_eq!(out.matches(r#"type="checkbox""#).count(), 2, "{out}");
        assert_eq!(out.matches("disabled").count(), 2, "{out}");
    }

    #[test]
    fn deep_nesting_is_flattened() {
        let out = html(&format!("{} deep", ">".repeat(10_000)));
        assert_eq!(out.matches("<blockquote>").count(), MAX_NESTING);
        assert_eq!(out.matches("</blockquote>").count(), MAX_NESTING);
        assert!(out.contains("deep"), "{out}");
        let stars = "*".repeat(2_000);
        let out = html(&format!("{stars}x{stars}"));
        let tags = out.matches("<em>").count() + out.matches("<strong>").count();
        assert!(tags <= MAX_NESTING, "{tags}");
    }

    #[test]
    fn raw_html_is_text_except_line_breaks() {
        let out = html("| a<br>b | c<BR />d |\n|-|-|\n| <b>x</b> | y |\n");
        assert!(
            out.contains("a<br>\nb") && out.contains("c<br>\nd"),
            "{out}"
        );
        assert!(out.contains("&lt;b&gt;x&lt;/b&gt;"), "{out}");
    }

    #[test]
    fn a_page_that_loads_nothing_gets_inline_images_and_no_web_links() {
        let uri = "data:image/svg+xml;base64,PHN2Zz4=";
        let opts = MarkdownOptions {
            image_base: Some("sandalyst://x/".into()),
            heading_ids: false,
            inline_images: Some(Arc::new(
                [("figs/a b.png".to_string(), uri.to_string())].into(),
            )),
            web_links: false,
        };
        let out = render(
            concat!(
                "![a](<figs/a b.png>) ![b](./figs/a%20b.png) ![c](missing.png) ",
                "![d](https://tracker.example/p.png)\n\n",
                "[docs](https://example.org/d) <https://example.org/auto> [m](mailto:a@b.c) ",
                "[bad](javascript:alert(1))\n",
            ),
            &opts,
        );
        let page = &out.html;
        assert_eq!(page.matches(&format!("src=\"{uri}\"")).count(), 2, "{page}");
        assert_eq!(out.inlined, ["figs/a b.png"]);
        assert!(!page.contains("sandalyst://"), "{page}");
        assert!(page.contains("[image not shown]"), "{page}");
        assert!(page.contains("[remote image blocked:"), "{page}");
        assert!(!page.contains("href=\"http"), "{page}");
        assert!(page.contains("docs (https://example.org/d)"), "{page}");
        assert!(
            page.contains("https://example.org/auto") && !page.contains("auto (https"),
            "an autolink says its address once: {page}"
        );
        assert!(page.contains("href=\"mailto:a@b.c\""), "{page}");
        assert!(!page.contains("javascript"), "{page}");
        // The same options off: the desktop's rendering is unchanged.
        let desktop = html("[docs](https://example.org/d) ![a](figs/x.png)");
        assert!(
            desktop.contains("href=\"https://example.org/d\""),
            "{desktop}"
        );
        assert!(desktop.contains("src=\"figs/x.png\""), "{desktop}");
    }

    #[test]
    fn oversized_input_is_cut_with_a_note() {
        let md = "é".repeat(MAX_MARKDOWN_BYTES / 2 + 10);
        let out = render(&md, &MarkdownOptions::default());
        assert!(out.truncated);
        assert!(out.html.contains("Report truncated"), "note missing");
        assert!(!render("short", &MarkdownOptions::default()).truncated);
    }
}
