//! What an output file is, and previews of it that the desktop can show inline.
//!
//! Everything here reads files written by model code, so every byte is hostile input:
//! - [`markdown`]: a report rendered to HTML that is sanitised against an allow-list;
//! - [`markdown_inert`]: Markdown made inert for another renderer (a notebook viewer);
//! - [`table`]: a page of a CSV file, read as a stream, and as HTML with escaped cells;
//! - [`image`]: PNG metadata, with a pixel limit checked before decoding;
//! - [`chart`]: an HTML chart served to a sandboxed frame under a policy that fetches
//!   nothing;
//! - [`escape_html`] and [`safe_display_name`] for file names and any other text.
//!
//! This module: an output file's kind, size and, for PNGs, dimensions.

pub mod bundle;
pub mod chart;
pub mod check;
pub mod csv_index;
pub mod excel;
pub mod image;
pub mod markdown;
pub mod markdown_inert;
pub mod table;
mod text;

use std::path::Path;

use anyhow::Context;
use serde::Serialize;

pub use image::{png_dimensions, preview_png, ImageInfo, MAX_PIXELS};
pub use text::{display_name, escape_html, safe_display_name};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// PNGs are checked by [`preview_png`]; the core decodes no other image format, so
    /// an SVG must only ever be shown through `<img>` (where its scripts do not run).
    Image,
    /// CSV pages come from [`table::preview_csv`] and [`table::page_to_html`].
    Table,
    /// Markdown goes through [`markdown::render`]; `.txt` files are shown as text
    /// ([`escape_html`]), never as markup; an `.html` output is a chart, shown only in a
    /// sandboxed frame ([`chart`]).
    Report,
    Other,
}

#[derive(Clone, Debug, Serialize)]
pub struct Artifact {
    pub path: String,
    pub kind: Kind,
    pub bytes: u64,
    /// (width, height) of a PNG.
    pub dimensions: Option<(u32, u32)>,
}

pub fn kind_of(name: &str) -> Kind {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "png" | "jpg" | "jpeg" | "svg" | "gif" => Kind::Image,
        "csv" | "tsv" | "parquet" | "xlsx" => Kind::Table,
        "md" | "markdown" | "txt" | "html" => Kind::Report,
        _ => Kind::Other,
    }
}

/// Describe one output file; `rel` is its name relative to the outputs folder.
pub fn describe(root: &Path, rel: &str) -> anyhow::Result<Artifact> {
    let path = root.join(rel);
    let bytes = std::fs::metadata(&path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    let kind = kind_of(rel);
    let dimensions = if rel.to_ascii_lowercase().ends_with(".png") {
        Some(png_dimensions(&path)?)
    } else {
        None
    };
    Ok(Artifact {
        path: rel.to_string(),
        kind,
        bytes,
        dimensions,
    })
}

/// 1234567 as "1,234,567".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_get_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn png_is_decoded_and_garbage_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.png");
        {
            let f = std::fs::File::create(&p).unwrap();
            let mut enc = png::Encoder::new(f, 3, 2);
            enc.set_color(png::ColorType::Grayscale);
            enc.write_header()
                .unwrap()
                .write_image_data(&[0; 6])
                .unwrap();
        }
        assert_eq!(
            describe(dir.path(), "a.png").unwrap().dimensions,
            Some((3, 2))
        );
        std::fs::write(dir.path().join("b.png"), b"not a png").unwrap();
        assert!(describe(dir.path(), "b.png").is_err());
        assert_eq!(kind_of("x/report.MD"), Kind::Report);
    }
}
