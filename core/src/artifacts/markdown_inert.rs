//! Markdown written by a model made inert for a renderer that is not ours (a notebook
//! viewer such as JupyterLab, which loads remote images and shows some raw HTML), by
//! the rules of [`super::markdown`], written back as Markdown:
//!
//! - images that are plain relative paths (the run's own outputs) or inline raster
//!   `data:` images are kept, with their alt text as plain text; the others become
//!   text (`[remote image blocked: URL]`, `[image not shown]`), so opening the
//!   notebook tells no third party that it was opened;
//! - links whose scheme is not http, https or mailto lose the link and keep their text;
//! - raw HTML is shown as the text it is (`<` becomes `&lt;`; `<br>` is kept).
//!
//! A second, blunter layer does not trust the parse to agree with the viewer's: outside
//! code, every `![` that is left is escaped (`\![`) and every `<` becomes `&lt;`, so no
//! Markdown parser finds an image or a tag in the result. The passes repeat until
//! nothing changes (text that was raw HTML is Markdown once its `<` is escaped).

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::markdown::{blocked_image_text, image_src, link_allowed, plain_text};

/// Passes at most: each one can only reveal what the previous one escaped.
const MAX_PASSES: usize = 4;

/// `markdown` with remote images, unsafe links and raw HTML neutralised (see the
/// module doc). Everything else is left as it was written.
pub fn inert_markdown(markdown: &str) -> String {
    let mut text = markdown.to_string();
    for _ in 0..MAX_PASSES {
        let next = pass(&text);
        if next == text {
            break;
        }
        text = next;
    }
    text
}

fn pass(src: &str) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events: Vec<(Event, Range<usize>)> =
        Parser::new_ext(src, options).into_offset_iter().collect();
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut code: Vec<Range<usize>> = Vec::new();
    let mut i = 0;
    while i < events.len() {
        let (event, range) = &events[i];
        match event {
            Event::Code(_) | Event::Start(Tag::CodeBlock(_)) => code.push(range.clone()),
            Event::Start(Tag::Image { dest_url, .. }) => {
                // Written out again whole: its alt text as plain text, so nothing in it
                // is an image or a tag to any parser.
                let end = closing(&events, i);
                let inner: Vec<Event> = events[i + 1..end].iter().map(|(e, _)| e.clone()).collect();
                let alt = plain_text(&inner);
                let plain = !dest_url.contains(['<', '>', '\n', '\r', '\\']);
                let text = match image_src(dest_url, None) {
                    Some(_) if plain && dest_url.contains([' ', '(', ')']) => {
                        format!("![{}](<{dest_url}>)", escape_text(&alt))
                    }
                    Some(_) if plain => format!("![{}]({dest_url})", escape_text(&alt)),
                    _ => escape_text(&blocked_image_text(dest_url, &alt)),
                };
                edits.push((range.clone(), text));
                i = end + 1;
                continue;
            }
            Event::Start(Tag::Link { dest_url, .. }) if !link_allowed(dest_url) => {
                // The brackets and destination go; the text (and anything in it) stays.
                let end = closing(&events, i);
                let inner = &events[i + 1..end];
                let from = inner.iter().map(|(_, r)| r.start).min();
                let to = inner.iter().map(|(_, r)| r.end).max();
                match (from, to) {
                    (Some(a), Some(b)) if range.start <= a && a <= b && b <= range.end => {
                        edits.push((range.start..a, String::new()));
                        edits.push((b..range.end, String::new()));
                    }
                    _ => edits.push((range.clone(), String::new())),
                }
            }
            _ => {}
        }
        i += 1;
    }
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    code.sort_by_key(|r| r.start);
    write(src, &edits, &code)
}

/// The index of the event that closes the image or link opened at `open`.
fn closing(events: &[(Event, Range<usize>)], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, (e, _)) in events.iter().enumerate().skip(open + 1) {
        match e {
            Event::Start(Tag::Image { .. } | Tag::Link { .. }) => depth += 1,
            Event::End(TagEnd::Image | TagEnd::Link) if depth == 0 => return j,
            Event::End(TagEnd::Image | TagEnd::Link) => depth -= 1,
            _ => {}
        }
    }
    events.len()
}

/// `src` with the edits applied, code copied as it is and the rest escaped by the
/// second layer (see the module doc).
fn write(src: &str, edits: &[(Range<usize>, String)], code: &[Range<usize>]) -> String {
    let mut out = Out::default();
    let (mut e, mut c) = (0, 0);
    let mut pos = 0;
    while pos < src.len() {
        while e < edits.len() && edits[e].0.start < pos {
            e += 1; // overlaps one already applied
        }
        if e < edits.len() && edits[e].0.start == pos {
            out.push_str(&edits[e].1);
            pos = edits[e].0.end.max(pos);
            e += 1;
            continue;
        }
        while c < code.len() && code[c].end <= pos {
            c += 1;
        }
        if c < code.len() && code[c].start <= pos {
            let next_edit = edits.get(e).map_or(src.len(), |(r, _)| r.start);
            let end = code[c].end.min(next_edit).min(src.len()).max(pos + 1);
            let end = ceil_char_boundary(src, end);
            out.push_str(&src[pos..end]);
            pos = end;
            continue;
        }
        let ch = src[pos..].chars().next().expect("pos is below the length");
        let escaped = out.backslashes % 2 == 1;
        match ch {
            '<' if !escaped && !is_line_break(&src[pos..]) => out.push_str("&lt;"),
            '!' if !escaped && src[pos + 1..].starts_with('[') => out.push_str("\\!"),
            _ => out.push_str(ch.encode_utf8(&mut [0; 4])),
        }
        pos += ch.len_utf8();
    }
    out.text
}

/// The text written so far, and how many backslashes it ends in (an odd number
/// escapes the next character), kept as it grows so no write looks back.
#[derive(Default)]
struct Out {
    text: String,
    backslashes: usize,
}

impl Out {
    fn push_str(&mut self, s: &str) {
        let trailing = s.bytes().rev().take_while(|&b| b == b'\\').count();
        self.backslashes = if trailing == s.len() {
            self.backslashes + trailing
        } else {
            trailing
        };
        self.text.push_str(s);
    }
}

/// `<br>`, `<br/>` or `<br />` at the start of `s`, which the app keeps as a break.
fn is_line_break(s: &str) -> bool {
    let head: String = s.chars().take(6).collect::<String>().to_ascii_lowercase();
    ["<br>", "<br/>", "<br />"]
        .iter()
        .any(|t| head.starts_with(t))
}

/// Text that Markdown shows as it is: its punctuation backslash-escaped.
fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for ch in s.chars() {
        if "\\`*_[]()<>!|~&#{}$".contains(ch) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the app's own renderer makes of the result: no image that loads, no link
    /// but web and mail ones, no tag that was not Markdown's.
    fn rendered(md: &str) -> String {
        let mut html = String::new();
        pulldown_cmark::html::push_html(&mut html, Parser::new_ext(md, Options::ENABLE_TABLES));
        html
    }

    #[test]
    fn remote_images_become_text_naming_the_url() {
        let out = inert_markdown("Look: ![chart](https://tracker.example/p.png?u=1) done");
        assert!(
            out.contains("chart \\[remote image blocked: https://tracker.example/p.png?u=1\\]"),
            "{out}"
        );
        let html = rendered(&out);
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("[remote image blocked: https://tracker.example/p.png?u=1]"));
        // Reference-style and protocol-relative images too; the outputs' own are kept.
        let out = inert_markdown("![a][t]\n\n![b](//x.example/i.png)\n\n![c](output/chart.png)\n\n[t]: http://x.example/t.png\n");
        let html = rendered(&out);
        assert_eq!(html.matches("<img").count(), 1, "{html}");
        assert!(html.contains("<img src=\"output/chart.png\""), "{html}");
        assert!(
            html.contains("[remote image blocked: //x.example/i.png]"),
            "{html}"
        );
        // A kept image's alt text cannot carry an image or a tag of its own.
        let out = inert_markdown(
            "![<img src=http://x.example/q.png> ![n](http://x.example/n.png)](chart.png)",
        );
        assert_eq!(rendered(&out).matches("<img").count(), 1, "{out}");
        assert!(
            out.starts_with("![\\<img src=http://x.example/q.png\\>"),
            "{out}"
        );
    }

    #[test]
    fn raw_html_and_unsafe_links_are_neutralised() {
        let md = "<img src=\"http://x.example/a.png\">\n\n<iframe src=\"http://x\"></iframe>\n\ntext <script>alert(1)</script> and <b>bold</b><br>\n\n[click](javascript:alert(1)) [ok](https://example.com) <javascript:alert(2)>\n\n<div>\n![in html](http://x.example/b.png)\n</div>\n";
        let out = inert_markdown(md);
        let html = rendered(&out);
        for bad in [
            "<img",
            "<iframe",
            "<script",
            "<b>",
            "javascript:alert(1)\"",
            "href=\"javascript",
        ] {
            assert!(!html.contains(bad), "{bad} in {html}");
        }
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(
            html.contains("<a href=\"https://example.com\">ok</a>"),
            "{html}"
        );
        assert!(html.contains("click"), "the link's text stays: {html}");
        assert!(html.contains("<br>"), "{html}");
        // Stable: a second run changes nothing.
        assert_eq!(inert_markdown(&out), out);
    }

    #[test]
    fn code_and_plain_text_are_left_as_written() {
        let md = "# Result\n\nSpend rose 12% (see `df[df.x < 3]`).\n\n```python\nprint('<b>![x](http://y)</b>')\n```\n\nAlready escaped: \\![not an image](x) and \\<b>.\n";
        assert_eq!(inert_markdown(md), md);
        // An escaped backslash before `![` does not escape the image.
        let out = inert_markdown("\\\\![a](http://x.example/p.png)");
        assert!(!rendered(&out).contains("<img"), "{out}");
    }
}
