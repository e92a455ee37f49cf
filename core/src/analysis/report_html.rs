//! A session as one HTML page to share: the answer to each request, the Markdown
//! report, every chart, the tables, the code that ran (folded away) and where it all
//! came from, in one file that opens anywhere with no network.
//!
//! Self-contained and inert by construction:
//! - charts (PNG, JPEG, GIF, WebP, SVG outputs) are inlined as `data:` URIs, each
//!   checked to be what its name says first; images the answers and reports name are
//!   the same URIs (see [`MarkdownOptions::inline_images`]), and a chart shown there is
//!   not shown again;
//! - model-written Markdown (answers, reports, the assistant's words) goes through the
//!   app's one renderer ([`markdown::render`]): raw HTML shown as text, remote images
//!   blocked, and web links written as their text and address (no `href` leaves);
//! - every other string (prompts, file names, table cells, code, output) is escaped;
//! - a Content-Security-Policy ([`CSP`]) lets the page load nothing but its own
//!   `data:` images and inline styles: no scripts, fonts, frames or requests;
//! - tables are the first [`MAX_TABLE_ROWS`] rows, with how many more there are.
//!
//! ```no_run
//! # fn demo() -> anyhow::Result<()> {
//! use sandalyst::{analysis::report_html, store::Store};
//! let store = Store::open(sandalyst::store::default_root()?)?;
//! let run = store.open_run("20261201-013714-55a1")?;
//! let report = report_html::build(&run)?;
//! std::fs::write("report.html", report.html)?;
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;

use super::{cells, code_cells, image_of, plain_relative, Block, Cell};
use crate::artifacts::image::image_type;
use crate::artifacts::markdown::{self, MarkdownOptions};
use crate::artifacts::{display_name, escape_html, table, thousands};
use crate::store::{RunDir, RunMeta, OUTPUTS};

/// The page's Content-Security-Policy: nothing loads but its own `data:` images and
/// inline styles (`base-uri` and `form-action` do not fall back to `default-src`).
pub const CSP: &str = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; \
                       base-uri 'none'; form-action 'none'";

/// Rows of each table shown; the rest are counted.
pub const MAX_TABLE_ROWS: usize = 200;
/// An image larger than this is listed, not inlined.
pub const MAX_IMAGE_BYTES: u64 = 16 << 20;
/// Images are inlined until together they reach this; later ones are listed.
pub const MAX_IMAGES_BYTES: u64 = 96 << 20;
/// A Markdown or text output larger than this is cut (see [`markdown::render`]).
const MAX_TEXT_BYTES: usize = markdown::MAX_MARKDOWN_BYTES;
/// What a cell printed is cut to this many characters.
const MAX_CELL_OUTPUT_CHARS: usize = 20_000;
/// A cell's code is cut to this many characters.
const MAX_CODE_CHARS: usize = 200_000;

/// The page, and what the person should know about what it leaves out.
#[derive(Clone, Debug)]
pub struct Report {
    pub html: String,
    /// One sentence per output that is listed but not shown (too large, not what its
    /// name says, a kind the page does not show).
    pub notes: Vec<String>,
}

/// Write the session's page as `dest`, whole beside it first (the caller decides
/// whether an existing `dest` may be replaced).
pub fn write(run: &RunDir, dest: &Path) -> anyhow::Result<Report> {
    use anyhow::Context;
    let report = build(run)?;
    if let Some(dir) = dest.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    crate::store::write_atomic(dest, report.html.as_bytes())
        .with_context(|| format!("cannot write {}", dest.display()))?;
    Ok(report)
}

/// An output file of the session, as the page uses it.
struct Output {
    /// Relative to `outputs/`.
    path: String,
    file: PathBuf,
    bytes: u64,
}

/// The page for session `run` (see the module doc).
pub fn build(run: &RunDir) -> anyhow::Result<Report> {
    let meta = &run.meta;
    let blocks = cells(run)?;
    let mut notes = Vec::new();
    let outputs = outputs(run, &mut notes);

    // Every image output that can be inlined, as a data: URI, keyed by its path
    // (and by `output/<path>`, as model code names it).
    let mut images: BTreeMap<String, String> = BTreeMap::new();
    let mut charts: Vec<&Output> = Vec::new();
    let mut budget = MAX_IMAGES_BYTES;
    for o in &outputs {
        let Some(mime) = image_type(&o.path) else {
            continue;
        };
        match data_uri(o, mime, &mut budget) {
            Ok(uri) => {
                images.insert(format!("output/{}", o.path), uri.clone());
                images.insert(o.path.clone(), uri);
                charts.push(o);
            }
            Err(why) => notes.push(format!("{}: {why}; it is not in the report", o.path)),
        }
    }
    let opts = MarkdownOptions {
        image_base: None,
        heading_ids: false,
        inline_images: Some(Arc::new(images)),
        web_links: false,
    };
    // The images the answers and reports show (not shown again under Charts).
    let mut shown: BTreeSet<String> = BTreeSet::new();
    let md = |text: &str, shown: &mut BTreeSet<String>| {
        let r = markdown::render(text, &opts);
        shown.extend(
            r.inlined
                .iter()
                .map(|k| k.trim_start_matches("output/").to_string()),
        );
        r.html
    };

    let title = meta.display_title();
    let mut body = String::new();
    let _ = write!(
        body,
        "<header>\n<p class=\"kicker\">Sandalyst report</p>\n<h1>{}</h1>\n<p class=\"muted\">{} · session <code>{}</code></p>\n</header>\n",
        escape_html(&title),
        escape_html(&when(&meta.created)),
        escape_html(&meta.id),
    );

    // The answers: each request and the last thing the assistant said for it.
    let asks = asks(&blocks, meta);
    body.push_str(&format!(
        "<section id=\"answer\">\n<h2>{}</h2>\n",
        if asks.len() > 1 { "Answers" } else { "Answer" }
    ));
    if asks.is_empty() {
        body.push_str("<p class=\"muted\">This session has no requests yet.</p>\n");
    }
    for ask in &asks {
        body.push_str("<article class=\"ask\">\n");
        let _ = writeln!(
            body,
            "<blockquote class=\"prompt\">{}</blockquote>",
            escape_html(ask.prompt.trim())
        );
        if let Some(status) = ask.status.filter(|s| !s.is_success()) {
            let _ = writeln!(
                body,
                "<p class=\"status\">This request did not finish: {}.</p>",
                escape_html(&status.to_string())
            );
        }
        match ask.answer.map(|i| &blocks[i]) {
            Some(Block::Text { text, .. }) => {
                let _ = writeln!(body, "<div class=\"md\">{}</div>", md(text, &mut shown));
            }
            _ => body.push_str("<p class=\"muted\">No answer was given.</p>\n"),
        }
        body.push_str("</article>\n");
    }
    body.push_str("</section>\n");

    // The reports the session wrote.
    let reports: Vec<&Output> = outputs.iter().filter(|o| is_report(&o.path)).collect();
    if !reports.is_empty() {
        body.push_str("<section id=\"report\">\n<h2>Report</h2>\n");
        for o in reports {
            let (text, cut) = read_text(&o.file, MAX_TEXT_BYTES)?;
            let _ = writeln!(
                body,
                "<article class=\"file\">\n<p class=\"file-name\">{}</p>",
                name_html(&o.path)
            );
            if ext(&o.path) == "txt" {
                let _ = writeln!(body, "<pre>{}</pre>", escape_html(&text));
            } else {
                let _ = writeln!(body, "<div class=\"md\">{}</div>", md(&text, &mut shown));
            }
            if cut {
                let _ = writeln!(
                    body,
                    "<p class=\"muted\">Only the first {} MB of this file are shown.</p>",
                    MAX_TEXT_BYTES >> 20
                );
            }
            body.push_str("</article>\n");
        }
        body.push_str("</section>\n");
    }

    // Charts not already shown by an answer or a report.
    let rest: Vec<&&Output> = charts.iter().filter(|o| !shown.contains(&o.path)).collect();
    if !rest.is_empty() {
        body.push_str("<section id=\"charts\">\n<h2>Charts</h2>\n");
        let map = opts.inline_images.as_deref().expect("set above");
        for o in rest {
            let _ = writeln!(
                body,
                "<figure><img src=\"{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>",
                map[&o.path],
                name_html(&o.path),
                name_html(&o.path)
            );
        }
        body.push_str("</section>\n");
    }

    // Tables, bounded.
    let tables: Vec<&Output> = outputs
        .iter()
        .filter(|o| matches!(ext(&o.path).as_str(), "csv" | "tsv"))
        .collect();
    if !tables.is_empty() {
        body.push_str("<section id=\"tables\">\n<h2>Tables</h2>\n");
        for o in tables {
            let _ = writeln!(
                body,
                "<article class=\"file\">\n<p class=\"file-name\">{}</p>",
                name_html(&o.path)
            );
            match table::preview_csv(&o.file, 0, MAX_TABLE_ROWS) {
                Ok(page) => {
                    let _ = writeln!(
                        body,
                        "<div class=\"table\">{}</div>\n<p class=\"muted\">{}</p>",
                        table::page_to_html(&page),
                        escape_html(&rows_said(&page))
                    );
                }
                Err(e) => {
                    let _ = writeln!(
                        body,
                        "<p class=\"muted\">This table cannot be shown: {}</p>",
                        escape_html(&format!("{e:#}"))
                    );
                    notes.push(format!("{}: cannot be shown ({e:#})", o.path));
                }
            }
            body.push_str("</article>\n");
        }
        body.push_str("</section>\n");
    }

    // Other outputs are listed in the provenance; say the ones a reader may look for.
    for o in &outputs {
        let e = ext(&o.path);
        if matches!(e.as_str(), "html" | "htm") {
            notes.push(format!(
                "{}: an HTML page (an interactive chart?) is not put inside the report; share it beside it",
                o.path
            ));
        }
    }

    // The code that ran, folded away.
    let code = code_cells(&blocks);
    if !code.is_empty() {
        let _ = writeln!(
            body,
            "<section id=\"code\">\n<h2>How it was done</h2>\n<details>\n<summary>The code that ran ({} cell{})</summary>",
            code.len(),
            if code.len() == 1 { "" } else { "s" }
        );
        body.push_str(
            "<p class=\"muted\">Written by a language model and run in Sandalyst's sandbox \
             (no network unless the session allowed it). Paths are relative to the \
             folder that holds <code>input/</code>.</p>\n",
        );
        let answers: BTreeSet<usize> = asks.iter().filter_map(|a| a.answer).collect();
        let mut n = 0;
        for (i, block) in blocks.iter().enumerate() {
            match block {
                Block::Ask { prompt, .. } => {
                    let _ = writeln!(
                        body,
                        "<h3 class=\"ask-head\">{}</h3>",
                        escape_html(&first_line(prompt))
                    );
                }
                Block::Text { text, .. } if !answers.contains(&i) => {
                    let _ = writeln!(
                        body,
                        "<div class=\"md says\">{}</div>",
                        md(text, &mut shown)
                    );
                }
                Block::Text { .. } => {}
                Block::Code(cell) => {
                    n += 1;
                    body.push_str(&cell_html(cell, n));
                }
            }
        }
        body.push_str("</details>\n</section>\n");
    }

    body.push_str(&provenance_html(run, &blocks, &outputs));

    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <meta name=\"generator\" content=\"Sandalyst {}\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        escape_html(&title),
    );
    Ok(Report { html, notes })
}

/// One request of the session, with its answer (the index among the blocks of the
/// last text the assistant wrote for it) and how it ended.
struct Ask<'a> {
    prompt: &'a str,
    answer: Option<usize>,
    status: Option<&'a crate::protocol::RunStatus>,
}

fn asks<'a>(blocks: &'a [Block], meta: &'a RunMeta) -> Vec<Ask<'a>> {
    let mut out: Vec<(&str, Ask)> = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        match b {
            Block::Ask { id, prompt } => out.push((
                id.as_str(),
                Ask {
                    prompt,
                    answer: None,
                    status: meta
                        .asks
                        .iter()
                        .find(|a| a.id == *id)
                        .and_then(|a| a.status.as_ref()),
                },
            )),
            Block::Text { ask, .. } => {
                if let Some((_, a)) = out.iter_mut().rev().find(|(id, _)| *id == ask.as_str()) {
                    a.answer = Some(i);
                }
            }
            Block::Code(_) => {}
        }
    }
    out.into_iter().map(|(_, a)| a).collect()
}

/// The session's output files that can be read: from `run.json`'s list (the files
/// under `outputs/` when it has none), each a plain relative path to a regular file.
fn outputs(run: &RunDir, notes: &mut Vec<String>) -> Vec<Output> {
    let root = run.path.join(OUTPUTS);
    let listed: Vec<(String, Option<String>)> = if run.meta.outputs.is_empty() {
        crate::artifacts::bundle::files_under(&root)
            .unwrap_or_default()
            .into_iter()
            .map(|(p, _)| (p, None))
            .collect()
    } else {
        run.meta
            .outputs
            .iter()
            .map(|o| (o.path.clone(), o.invalid.clone()))
            .collect()
    };
    // Links are not followed, in the name or in a folder on the way.
    let real_root = root.canonicalize().unwrap_or_else(|_| root.clone());
    let mut out = Vec::new();
    for (path, invalid) in listed {
        if !plain_relative(&path) {
            continue;
        }
        let file = root.join(&path);
        let inside = file
            .canonicalize()
            .is_ok_and(|real| real.starts_with(&real_root));
        match std::fs::symlink_metadata(&file) {
            Ok(m) if m.is_file() && inside => {
                if let Some(why) = invalid {
                    notes.push(format!("{path}: {why}; it is not in the report"));
                    continue;
                }
                out.push(Output {
                    path,
                    file,
                    bytes: m.len(),
                })
            }
            Ok(_) => notes.push(format!(
                "{path}: not a regular file of the session; it is not in the report"
            )),
            Err(_) => notes.push(format!(
                "{path}: the file is no longer in the session's folder"
            )),
        }
    }
    out
}

/// `o` as a `data:` URI of type `mime`, if its bytes are that kind of image and it
/// fits the budget; otherwise why not.
fn data_uri(o: &Output, mime: &str, budget: &mut u64) -> Result<String, String> {
    if o.bytes > MAX_IMAGE_BYTES {
        return Err(format!(
            "{} MB is more than an image may take ({} MB)",
            o.bytes >> 20,
            MAX_IMAGE_BYTES >> 20
        ));
    }
    if o.bytes > *budget {
        return Err(format!(
            "the report's images already take {} MB",
            (MAX_IMAGES_BYTES - *budget) >> 20
        ));
    }
    let bytes = std::fs::read(&o.file).map_err(|e| format!("cannot be read ({e})"))?;
    if !looks_like(&bytes, mime) {
        return Err(format!("its content is not {mime}"));
    }
    *budget = budget.saturating_sub(bytes.len() as u64);
    Ok(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    ))
}

/// The file starts as an image of type `mime` does.
fn looks_like(b: &[u8], mime: &str) -> bool {
    match mime {
        "image/png" => b.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => b.starts_with(b"\xFF\xD8\xFF"),
        "image/gif" => b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a"),
        "image/webp" => b.len() > 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP",
        "image/svg+xml" => {
            let head = String::from_utf8_lossy(&b[..b.len().min(4096)]).to_ascii_lowercase();
            head.contains("<svg")
        }
        _ => false,
    }
}

fn is_report(path: &str) -> bool {
    matches!(ext(path).as_str(), "md" | "markdown" | "txt")
}

fn ext(name: &str) -> String {
    name.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// An output's name as HTML text (escaped, its invisible characters shown or gone).
fn name_html(path: &str) -> String {
    escape_html(&display_name(path))
}

/// "Rows 1 to 200 of 5,000 (4,800 more in the file)." and the like.
fn rows_said(page: &table::CsvPage) -> String {
    let shown = page.rows.len();
    let mut s = match page.total_rows {
        Some(0) => "The table has no rows.".to_string(),
        Some(total) if total <= shown => {
            format!("All {} row{}.", thousands(total as u64), plural(total))
        }
        Some(total) => format!(
            "The first {} rows of {}; {} more in the file.",
            thousands(shown as u64),
            thousands(total as u64),
            thousands((total - shown) as u64)
        ),
        None => format!(
            "The first {} rows; the file has more (too large to count here).",
            thousands(shown as u64)
        ),
    };
    if page.truncated_cells > 0 {
        let _ = write!(
            s,
            " {} long cell{} cut.",
            thousands(page.truncated_cells as u64),
            plural(page.truncated_cells)
        );
    }
    if page.dropped_cells > 0 {
        let _ = write!(
            s,
            " Columns past {} left out.",
            thousands(table::MAX_COLUMNS as u64)
        );
    }
    s
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn first_line(text: &str) -> String {
    crate::store::title_from(text)
}

/// An RFC 3339 time as "2026-12-07 06:26 UTC"; anything else as it is.
fn when(at: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(at)
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .format("%Y-%m-%d %H:%M UTC")
                .to_string()
        })
        .unwrap_or_else(|_| at.to_string())
}

/// `text` cut to `max` characters, and whether it was.
fn cut(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((i, _)) => (&text[..i], true),
        None => (text, false),
    }
}

/// One code cell: its head line, the code, and what it printed (folded).
fn cell_html(cell: &Cell, n: usize) -> String {
    let mut head = format!("Cell {n} · {}", cell.tool.name());
    if !cell.ok() {
        let _ = write!(head, " · {}", cell.status);
    }
    if let Some(ms) = cell.duration_ms {
        let _ = write!(head, " · {:.1} s", ms as f64 / 1000.0);
    }
    if !cell.figures.is_empty() {
        let k = cell.figures.len();
        let _ = write!(head, " · showed {k} figure{}", plural(k));
    }
    let class = if cell.ok() { "cell" } else { "cell failed" };
    let (code, code_cut) = cut(&cell.code, MAX_CODE_CHARS);
    let mut html = format!(
        "<div class=\"{class}\">\n<p class=\"cell-head\">{}</p>\n<pre><code>{}</code></pre>\n",
        escape_html(&head),
        escape_html(code)
    );
    if code_cut {
        let _ = writeln!(
            html,
            "<p class=\"muted\">The code is cut here; the notebook export has all of it.</p>"
        );
    }
    let mut printed = String::new();
    for part in [&cell.stdout, &cell.stderr] {
        printed.push_str(part);
    }
    if let Some(tb) = &cell.traceback {
        printed.push_str(tb);
    }
    if !printed.trim().is_empty() {
        let (text, was_cut) = cut(&printed, MAX_CELL_OUTPUT_CHARS);
        let _ = writeln!(
            html,
            "<details class=\"output\"><summary>What it printed</summary><pre>{}{}</pre></details>",
            escape_html(text),
            if was_cut { "\n…" } else { "" }
        );
    }
    html.push_str("</div>\n");
    html
}

/// Where it all came from: the session, the model, the sandbox, the inputs and the
/// outputs with the cell that made each.
fn provenance_html(run: &RunDir, blocks: &[Block], outputs: &[Output]) -> String {
    let meta = &run.meta;
    let mut rows: Vec<(&str, String)> = vec![
        ("Session", format!("<code>{}</code>", escape_html(&meta.id))),
        ("Title", escape_html(&meta.display_title())),
        ("Started", escape_html(&when(&meta.created))),
    ];
    if let Some(f) = &meta.finished {
        rows.push(("Last finished", escape_html(&when(f))));
    }
    let mut models: Vec<&str> = Vec::new();
    for m in meta
        .asks
        .iter()
        .map(|a| a.model.as_str())
        .chain([meta.model.as_str()])
    {
        if !m.is_empty() && !models.contains(&m) {
            models.push(m);
        }
    }
    if !models.is_empty() {
        let list: Vec<String> = models
            .iter()
            .map(|m| format!("<code>{}</code>", escape_html(m)))
            .collect();
        rows.push((
            if models.len() > 1 { "Models" } else { "Model" },
            list.join(", "),
        ));
    }
    let requests = meta.asks.len().max(
        blocks
            .iter()
            .filter(|b| matches!(b, Block::Ask { .. }))
            .count(),
    );
    rows.push(("Requests", requests.to_string()));
    let usage = &meta.usage;
    if usage.input_tokens + usage.output_tokens > 0 {
        let mut s = format!(
            "{} in, {} out",
            thousands(usage.input_tokens),
            thousands(usage.output_tokens)
        );
        if let Some(usd) = meta.cost_usd {
            let _ = write!(s, " (about ${usd:.2})");
        }
        rows.push(("Tokens", escape_html(&s)));
    }
    let image = image_of(run);
    if !image.is_empty() {
        rows.push((
            "Sandbox image",
            format!("<code>{}</code>", escape_html(&image)),
        ));
    }
    if let Some(iso) = &meta.isolation {
        rows.push(("Isolation", escape_html(iso)));
    }
    rows.push((
        "Network",
        if meta.network {
            "allowed for the code"
        } else {
            "off for the code"
        }
        .to_string(),
    ));
    if let Some(of) = &meta.rerun_of {
        rows.push(("Re-run of", format!("<code>{}</code>", escape_html(of))));
    }
    rows.push((
        "This report",
        escape_html(&format!(
            "written {} by Sandalyst {}",
            chrono::Utc::now().format("%Y-%m-%d %H:%M UTC"),
            env!("CARGO_PKG_VERSION")
        )),
    ));

    let mut html = String::from("<footer id=\"provenance\">\n<h2>Provenance</h2>\n<dl>\n");
    for (k, v) in rows {
        let _ = writeln!(html, "<dt>{k}</dt><dd>{v}</dd>");
    }
    html.push_str("</dl>\n");

    if !meta.files.is_empty() {
        let mut rows = Vec::new();
        for f in &meta.files {
            let mut hash = if f.sha256.is_empty() {
                "<span class=\"muted\">not recorded</span>".to_string()
            } else {
                format!("<code>{}</code>", escape_html(&f.sha256))
            };
            if f.changed_on_host {
                hash.push_str(
                    " <span class=\"muted\">(the file changed on disk during the session)</span>",
                );
            }
            rows.push((format!("input/{}", name_html(&f.name)), f.bytes, hash));
        }
        files_table(&mut html, "Input files", "SHA-256", &rows);
    }

    if !outputs.is_empty() {
        // Cell numbers as the code section counts them.
        let numbers: BTreeMap<(&str, &str), usize> = code_cells(blocks)
            .into_iter()
            .enumerate()
            .map(|(i, c)| ((c.ask.as_str(), c.call_id.as_str()), i + 1))
            .collect();
        let mut rows = Vec::new();
        for o in outputs {
            let made = match meta.provenance.get(&o.path) {
                Some(p) => {
                    let cell = numbers
                        .get(&(p.ask.as_str(), p.call_id.as_str()))
                        .map_or_else(|| p.tool.clone(), |n| format!("cell {n}"));
                    escape_html(&format!("{cell}, {}", when(&p.at)))
                }
                None => "<span class=\"muted\">not recorded</span>".to_string(),
            };
            rows.push((format!("output/{}", name_html(&o.path)), o.bytes, made));
        }
        files_table(&mut html, "Output files", "Made by", &rows);
    }
    html.push_str("</footer>\n");
    html
}

/// A table of files under `title`: each row's name (HTML already), its size and a
/// third column (HTML already) headed `third`.
fn files_table(html: &mut String, title: &str, third: &str, rows: &[(String, u64, String)]) {
    let _ = writeln!(
        html,
        "<h3>{title}</h3>\n<div class=\"table\"><table>\n<thead><tr><th>File</th><th>Bytes</th><th>{third}</th></tr></thead>\n<tbody>"
    );
    for (name, bytes, more) in rows {
        let _ = writeln!(
            html,
            "<tr><td>{name}</td><td align=\"right\">{}</td><td>{more}</td></tr>",
            thousands(*bytes)
        );
    }
    html.push_str("</tbody>\n</table></div>\n");
}

/// The first `max` bytes of a file as text (lossy), and whether there was more.
fn read_text(path: &Path, max: usize) -> anyhow::Result<(String, bool)> {
    use anyhow::Context;
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(max as u64 + 1).read_to_end(&mut buf))
        .with_context(|| format!("cannot read {}", path.display()))?;
    let cut = buf.len() > max;
    buf.truncate(max);
    Ok((String::from_utf8_lossy(&buf).into_owned(), cut))
}

/// The page's styles: system fonts only (nothing to fetch), light and dark.
const STYLE: &str = r#"
:root { --fg: #1d1f23; --muted: #5f6570; --bg: #ffffff; --panel: #f5f6f8; --line: #d9dce1;
  --accent: #2457c5; --bad: #b42318; color-scheme: light dark; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e8eb; --muted: #9aa1ab; --bg: #15171a; --panel: #1f2226; --line: #343a41;
    --accent: #8ab4ff; --bad: #ff8a80; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 60rem; margin: 0 auto; padding: 2rem 1.25rem 4rem; }
header { border-bottom: 1px solid var(--line); margin-bottom: 1.5rem; }
h1 { font-size: 1.8rem; margin: .2rem 0 .4rem; }
h2 { font-size: 1.35rem; margin: 2.2rem 0 .8rem; padding-bottom: .3rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.1rem; }
/* The model's Markdown sits under the page's own headings. */
.md h1 { font-size: 1.45rem; } .md h2 { font-size: 1.2rem; border: none; margin: 1.4rem 0 .5rem; }
.md h3, .md h4 { font-size: 1.05rem; }
.kicker { text-transform: uppercase; letter-spacing: .08em; font-size: .75rem; color: var(--muted); margin: 0; }
.muted { color: var(--muted); font-size: .9rem; }
.status { color: var(--bad); font-weight: 600; }
blockquote.prompt { margin: 0 0 1rem; padding: .6rem 1rem; background: var(--panel);
  border-left: 4px solid var(--accent); white-space: pre-wrap; border-radius: 4px; }
article.ask { margin-bottom: 2rem; }
.file-name { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; color: var(--muted); }
.md img, figure img { max-width: 100%; height: auto; background: #fff; border-radius: 4px; }
figure { margin: 1.5rem 0; }
figcaption { color: var(--muted); font-size: .85rem; margin-top: .3rem; }
.table { overflow-x: auto; margin: .5rem 0; }
table { border-collapse: collapse; font-size: .88rem; }
th, td { border: 1px solid var(--line); padding: .25rem .55rem; vertical-align: top; }
th { background: var(--panel); text-align: left; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }
pre { background: var(--panel); padding: .75rem; overflow-x: auto; border-radius: 4px; white-space: pre; }
details { margin: .5rem 0; }
summary { cursor: pointer; font-weight: 600; }
.cell { margin: 1rem 0; }
.cell.failed pre { border-left: 3px solid var(--bad); }
.cell-head { margin: 0 0 .2rem; font-size: .85rem; color: var(--muted); }
details.output summary { font-weight: normal; font-size: .85rem; color: var(--muted); }
.says { color: var(--muted); }
h3.ask-head { margin-top: 1.5rem; }
footer { margin-top: 3rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
a { color: var(--accent); }
@media print { body { background: #fff; color: #000; } pre { white-space: pre-wrap; } }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_inlined_only_when_they_are_what_their_name_says() {
        assert!(looks_like(b"\x89PNG\r\n\x1a\nrest", "image/png"));
        assert!(!looks_like(b"<html><script>", "image/png"));
        assert!(looks_like(
            b"<?xml version='1.0'?><svg xmlns='x'>",
            "image/svg+xml"
        ));
        assert!(!looks_like(b"GIF8", "image/jpeg"));
    }
}
