//! Previews of one file of a session, as a front end shows them. The work is
//! [`crate::artifacts`]'s; this module only picks the preview for a file and says
//! where its images are served.

use std::io::Read;
use std::path::Path;

use serde::Serialize;

use super::files::resolve_inside;
/// An output chart (an HTML file) as the window serves it: to its own sandboxed frame,
/// under a policy that fetches nothing.
pub use crate::artifacts::chart;
pub use crate::artifacts::image::image_type;
use crate::artifacts::{self, markdown, table};

/// First page of a table preview.
pub const FIRST_PAGE_ROWS: usize = 200;
/// Text previews show at most this many bytes.
pub const MAX_TEXT_BYTES: usize = 256 << 10;

#[derive(Debug, Serialize)]
#[serde(tag = "view", rename_all = "snake_case")]
pub enum Preview {
    Table {
        page: table::CsvPage,
    },
    Sheet {
        sheets: Vec<String>,
        sheet: String,
        page: table::CsvPage,
    },
    Report {
        html: String,
        headings: Vec<markdown::Heading>,
        truncated: bool,
    },
    Image {
        url: String,
        width: Option<u32>,
        height: Option<u32>,
    },
    /// An HTML output (an interactive chart): the front end shows `url` in an
    /// `<iframe sandbox="allow-scripts">`, whose response carries the policy of
    /// [`crate::artifacts::chart`]. Only files of `outputs/` are served that way; any
    /// other HTML file is shown as text.
    Chart {
        url: String,
    },
    Text {
        text: String,
        truncated: bool,
    },
    /// A table the explorer reads in place (Parquet, JSON records, JSON Lines): the
    /// front end asks for its pages through [`crate::explore`].
    Data {
        format: crate::explore::Format,
    },
    Other,
}

#[derive(Debug, Serialize)]
pub struct FilePreview {
    /// The path inside the session folder, as asked.
    pub path: String,
    pub name: String,
    pub bytes: u64,
    #[serde(flatten)]
    pub preview: Preview,
}

fn ext(name: &str) -> String {
    name.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// The preview of `rel` in the session folder `root`, whose files the front end
/// finds under the URL `url_base` (`sandalyst://localhost/<id>/`).
pub fn preview(url_base: &str, root: &Path, rel: &str) -> anyhow::Result<FilePreview> {
    let path = resolve_inside(root, rel)?;
    let dir = rel
        .rsplit_once('/')
        .map(|(d, _)| format!("{d}/"))
        .unwrap_or_default();
    let base = format!("{url_base}{}", url_path(&dir));
    preview_at(&path, rel, Some(&base))
}

/// The preview of an input file: `path` is the original the user added (they chose
/// it; it is only read). Its images are not served (the scheme answers only for the
/// session's own folder), so images and reports' images are not shown.
pub fn preview_input(path: &Path, name: &str) -> anyhow::Result<FilePreview> {
    if !std::fs::symlink_metadata(path)?.is_file() {
        anyhow::bail!("{name} is a folder; its files were staged and can be used by the agent");
    }
    preview_at(path, name, None)
}

/// `base`: the URL of the folder holding the file, for its images (and a report's).
fn preview_at(path: &Path, rel: &str, base: Option<&str>) -> anyhow::Result<FilePreview> {
    let bytes = std::fs::metadata(path)?.len();
    let name = rel.rsplit('/').next().unwrap_or(rel).to_string();
    let preview = match ext(&name).as_str() {
        // Through the index so that the first page starts it in the background.
        "csv" | "tsv" => Preview::Table {
            page: artifacts::csv_index::page(path, 0, FIRST_PAGE_ROWS)?,
        },
        "xlsx" | "xlsm" | "xls" | "xlsb" | "ods" => {
            let sheets = artifacts::excel::sheet_names(path)?;
            let sheet = sheets.first().cloned().unwrap_or_default();
            let page = artifacts::excel::preview_sheet(path, &sheet, 0, FIRST_PAGE_ROWS)?;
            Preview::Sheet {
                sheets,
                sheet,
                page,
            }
        }
        "md" | "markdown" => {
            let text = read_text(path, markdown::MAX_MARKDOWN_BYTES + 1)?.0;
            let opts = markdown::MarkdownOptions {
                image_base: base.map(str::to_string),
                heading_ids: true,
                ..Default::default()
            };
            let r = markdown::render(&text, &opts);
            Preview::Report {
                html: r.html,
                headings: r.headings,
                truncated: r.truncated,
            }
        }
        e if image_type(&name).is_some() && base.is_some() => {
            let (width, height) = if e == "png" {
                let info = artifacts::preview_png(path)?;
                (Some(info.width), Some(info.height))
            } else {
                (None, None)
            };
            Preview::Image {
                url: format!("{}{}", base.unwrap_or_default(), url_path(&name)),
                width,
                height,
            }
        }
        _ if artifacts::chart::is_chart(&name) && base.is_some() && is_output(rel) => {
            Preview::Chart {
                url: format!("{}{}", base.unwrap_or_default(), url_path(&name)),
            }
        }
        "parquet" => Preview::Data {
            format: crate::explore::Format::Parquet,
        },
        "jsonl" | "ndjson" => Preview::Data {
            format: crate::explore::Format::Jsonl,
        },
        // JSON that holds a table (records, or columns) opens in the explorer; other
        // JSON as text.
        "json" if crate::explore::page(path, Default::default()).is_ok() => Preview::Data {
            format: crate::explore::Format::Json,
        },
        "txt" | "json" | "log" | "py" | "html" | "htm" | "xml" | "yaml" | "yml" | "toml"
        | "sql" | "r" | "sh" | "ipynb" => {
            let (text, truncated) = read_text(path, MAX_TEXT_BYTES)?;
            Preview::Text { text, truncated }
        }
        _ => Preview::Other,
    };
    Ok(FilePreview {
        path: rel.to_string(),
        name,
        bytes,
        preview,
    })
}

/// Whether `rel` (inside a session folder) is one of the session's outputs, the only
/// HTML files shown as charts.
pub fn is_output(rel: &str) -> bool {
    rel.strip_prefix("outputs/")
        .is_some_and(|r| !r.is_empty() && !r.split('/').any(|s| s == ".." || s.is_empty()))
}

/// Images larger than this are not read for a front end.
pub const MAX_IMAGE_BYTES: u64 = 64 << 20;

/// The bytes of the image `rel` of the session folder `root`.
pub fn image_bytes(root: &Path, rel: &str) -> anyhow::Result<Vec<u8>> {
    if image_type(rel).is_none() {
        anyhow::bail!("{rel} is not an image");
    }
    let path = resolve_inside(root, rel)?;
    if std::fs::metadata(&path)?.len() > MAX_IMAGE_BYTES {
        anyhow::bail!("the image is too large to copy");
    }
    Ok(std::fs::read(path)?)
}

/// The assistant's text of a conversation as sanitised HTML: the report renderer's
/// rules (raw HTML shown as text, remote images blocked, unsafe links removed), no
/// heading ids (a conversation holds many answers), and relative images taken from
/// the session's outputs, which the front end finds under `outputs_url`.
pub fn answer_html(markdown: &str, outputs_url: &str) -> String {
    let opts = markdown::MarkdownOptions {
        image_base: Some(outputs_url.to_string()),
        heading_ids: false,
        ..Default::default()
    };
    markdown::render(markdown, &opts).html
}

/// Percent-encode each segment of a relative path for a URL.
pub fn url_path(rel: &str) -> String {
    rel.split('/')
        .map(|s| {
            percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn read_text(path: &Path, max: usize) -> anyhow::Result<(String, bool)> {
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take(max as u64 + 1)
        .read_to_end(&mut buf)?;
    let truncated = buf.len() > max;
    buf.truncate(max);
    Ok((String::from_utf8_lossy(&buf).into_owned(), truncated))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "sandalyst://localhost/s1/";

    #[test]
    fn report_images_point_at_the_scheme_and_hostile_markup_is_inert() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("outputs")).unwrap();
        std::fs::write(
            dir.path().join("outputs/r.md"),
            "# Report\n\n![chart](energy.png)\n\n<script>window.x=1</script>\n\n<img src=x onerror=alert(1)>\n\n[go](javascript:alert(1))\n",
        )
        .unwrap();
        let p = preview(BASE, dir.path(), "outputs/r.md").unwrap();
        let Preview::Report { html, .. } = p.preview else {
            panic!()
        };
        assert!(
            html.contains(&format!("src=\"{BASE}outputs/energy.png\"")),
            "{html}"
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(
            html.contains("&lt;img src=x onerror"),
            "shown as text: {html}"
        );
        assert!(!html.contains("<img src=\"x\""), "{html}");
        assert!(!html.contains("href=\"javascript"), "{html}");
    }

    #[test]
    fn an_html_output_is_a_chart_and_any_other_html_is_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("outputs/sub")).unwrap();
        let page = "<html><script>fetch('http://127.0.0.1:9/')</script></html>";
        std::fs::write(dir.path().join("outputs/sub/by day.html"), page).unwrap();
        std::fs::write(dir.path().join("notes.htm"), page).unwrap();
        let p = preview(BASE, dir.path(), "outputs/sub/by day.html").unwrap();
        let Preview::Chart { url } = p.preview else {
            panic!("{:?}", p.preview)
        };
        assert_eq!(url, format!("{BASE}outputs/sub/by%20day%2Ehtml"));
        let p = preview(BASE, dir.path(), "notes.htm").unwrap();
        let Preview::Text { text, .. } = p.preview else {
            panic!("{:?}", p.preview)
        };
        assert_eq!(text, page);
        // An input's HTML (no URL to serve it from) is text too.
        let p = preview_input(&dir.path().join("notes.htm"), "notes.htm").unwrap();
        assert!(matches!(p.preview, Preview::Text { .. }), "{:?}", p.preview);
        assert!(is_output("outputs/a.html"));
        for rel in [
            "outputs/",
            "outputs/../x.html",
            "inputs/a.html",
            "outputs//a.html",
        ] {
            assert!(!is_output(rel), "{rel}");
        }
    }

    #[test]
    fn an_answer_in_markdown_becomes_safe_html() {
        let answer = "**Tuesday** uses the most energy on average.\n\n\
            | weekday | average_energy_kwh |\n|---|---:|\n| Tuesday | 77.27 |\n| Monday | 75.10 |\n\n\
            - a list item with `code`\n\n\
            ```python\ndf.groupby('weekday').mean()\n```\n\n\
            ![chart](weekday.png) ![remote](https://tracker.example/p.png)\n\n\
            [docs](https://example.org) [x](javascript:alert(1))\n\n\
            <script>alert(1)</script>\n\n\
            # A heading\n";
        let html = answer_html(answer, "sandalyst://localhost/s1/outputs/");
        assert!(html.contains("<strong>Tuesday</strong>"), "{html}");
        assert!(
            html.contains("<table>") && html.contains("<th>weekday</th>"),
            "{html}"
        );
        assert!(html.contains("<td align=\"right\">77.27</td>"), "{html}");
        assert!(
            html.contains("<li>a list item with <code>code</code></li>"),
            "{html}"
        );
        assert!(
            html.contains("<pre><code class=\"language-python\">df.groupby"),
            "{html}"
        );
        assert!(
            html.contains("src=\"sandalyst://localhost/s1/outputs/weekday.png\""),
            "{html}"
        );
        assert!(html.contains("[remote image blocked: https://tracker.example/p.png]"));
        assert!(
            html.contains("&lt;script&gt;") && !html.contains("<script"),
            "{html}"
        );
        assert!(html.contains("href=\"https://example.org\""), "{html}");
        assert!(!html.contains("href=\"javascript"), "{html}");
        assert!(html.contains("<h1>A heading</h1>"), "no ids: {html}");
    }

    #[test]
    fn only_images_of_the_session_are_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("outputs")).unwrap();
        std::fs::write(dir.path().join("outputs/c.png"), b"PNG").unwrap();
        std::fs::write(dir.path().join("outputs/t.csv"), b"a\n").unwrap();
        assert_eq!(image_bytes(dir.path(), "outputs/c.png").unwrap(), b"PNG");
        assert!(image_bytes(dir.path(), "outputs/t.csv").is_err());
        assert!(image_bytes(dir.path(), "../c.png").is_err());
    }

    #[test]
    fn csv_preview_and_refused_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.csv"), "a,b\n<b>1</b>,2\n").unwrap();
        let p = preview(BASE, dir.path(), "t.csv").unwrap();
        let Preview::Table { page } = p.preview else {
            panic!()
        };
        assert_eq!(page.rows[0][0], "<b>1</b>");
        assert!(preview(BASE, dir.path(), "../t.csv").is_err());
    }
}
