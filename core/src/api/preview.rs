//! Previews of one file of a session, as a front end shows them. The work is
//! [`crate::artifacts`]'s; this module only picks the preview for a file and says
//! where its images are served.

use std::io::Read;
use std::path::Path;

use serde::Serialize;

use super::files::resolve_inside;
use crate::artifacts::csv_index::SortBy;
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
    Text {
        text: String,
        truncated: bool,
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

/// Which page of a table a front end wants.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct PageRequest {
    /// The sheet of a workbook; `None` for CSV/TSV.
    pub sheet: Option<String>,
    /// Sorted by one column (CSV only).
    pub sort: Option<SortBy>,
    pub offset: usize,
    pub limit: usize,
}

/// A page of a table file (CSV/TSV, or a sheet of a workbook), in the file's order or
/// sorted by one column (CSV only).
pub fn table_page(path: &Path, page: PageRequest) -> anyhow::Result<table::CsvPage> {
    let PageRequest {
        sheet,
        sort,
        offset,
        limit,
    } = page;
    match (sheet.as_deref(), sort) {
        (Some(_), Some(_)) => anyhow::bail!("only CSV tables can be sorted"),
        (Some(sheet), None) => artifacts::excel::preview_sheet(path, sheet, offset, limit),
        (None, Some(by)) => artifacts::csv_index::sorted_page(path, by, offset, limit),
        (None, None) => artifacts::csv_index::page(path, offset, limit),
    }
}

/// The content type of a file that is shown as an image, by extension; `None` for
/// anything that is not an image.
pub fn image_type(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        _ => return None,
    })
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
