//! Whether an output file is what its name says: a PNG that decodes, a CSV with at
//! least one row under its header, a Markdown report with words in it. An ask whose
//! task names its outputs is not finished while one of them fails this (a model that
//! `touch`es the files it was asked for has not made them), and the files a run kept
//! are marked when they fail it.
//!
//! [`problem`] reads the bytes it is given; a caller with a file larger than
//! [`MAX_CHECKED_BYTES`] passes its first bytes only, and then only the file's head is
//! checked (its signature, its first lines).

use std::io::Cursor;

/// The most of one file that is read to check it.
pub const MAX_CHECKED_BYTES: u64 = 64 << 20;

/// The problem of a table with a header and no rows (the checklist says where to look).
pub const NO_ROWS: &str = "has a header but no rows";

/// What is wrong with output `name` (its extension says what it should be), given its
/// size on disk and its bytes (all of them, or its first [`MAX_CHECKED_BYTES`]);
/// `None` when nothing is. The sentence reads after the file's name: "is empty (0 bytes)".
pub fn problem(name: &str, size: u64, bytes: &[u8]) -> Option<String> {
    if size == 0 {
        return Some("is empty (0 bytes)".into());
    }
    let whole = bytes.len() as u64 >= size;
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "png" => {
            if !bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
                return Some(
                    "is not a PNG image (it does not start with the PNG signature)".into(),
                );
            }
            if whole {
                match super::image::check_png(Cursor::new(bytes), size, name) {
                    Err(e) => {
                        return Some(format!("is not a readable PNG image: {}", root_cause(&e)))
                    }
                    // `plt.savefig` with nothing plotted since the last one.
                    Ok(info) if info.blank => return Some(
                        "is a blank image (one colour: nothing was drawn on the figure it saved)"
                            .into(),
                    ),
                    Ok(_) => {}
                }
            }
            None
        }
        "jpg" | "jpeg" => (!bytes.starts_with(&[0xFF, 0xD8, 0xFF]))
            .then(|| "is not a JPEG image (it does not start with the JPEG signature)".into()),
        "svg" => (!text_of(bytes).contains("<svg"))
            .then(|| "is not an SVG image (no <svg> element)".into()),
        "csv" | "tsv" => table_problem(bytes, whole),
        "md" | "markdown" => markdown_problem(&text_of(bytes), whole),
        "txt" => {
            let text = text_of(bytes);
            (!has_words(&text))
                .then(|| "holds no text".into())
                .or_else(|| cut_short(&text))
        }
        "html" | "htm" => {
            (!has_words(&strip_tags(&text_of(bytes)))).then(|| "holds no text".into())
        }
        "json" => {
            if whole {
                if let Err(e) = serde_json::from_slice::<serde_json::Value>(bytes) {
                    return Some(format!("is not valid JSON: {e}"));
                }
            }
            None
        }
        "xlsx" | "docx" | "pptx" | "zip" => (!bytes.starts_with(b"PK\x03\x04")).then(|| {
            format!(
                "is not a {} file (it is not a zip archive)",
                ext.to_uppercase()
            )
        }),
        "parquet" => {
            let ok = bytes.starts_with(b"PAR1") && (!whole || bytes.ends_with(b"PAR1"));
            (!ok).then(|| "is not a Parquet file (no PAR1 marker)".into())
        }
        "pdf" => (!bytes.starts_with(b"%PDF"))
            .then(|| "is not a PDF (it does not start with %PDF)".into()),
        _ => None,
    }
}

/// [`problem`] for a file on disk (its first [`MAX_CHECKED_BYTES`] read); a file
/// that cannot be read says so.
pub fn file_problem(path: &std::path::Path, name: &str) -> Option<String> {
    use std::io::Read;
    let read = || -> std::io::Result<(u64, Vec<u8>)> {
        let file = std::fs::File::open(path)?;
        let size = file.metadata()?.len();
        let mut bytes = Vec::new();
        file.take(MAX_CHECKED_BYTES).read_to_end(&mut bytes)?;
        Ok((size, bytes))
    };
    match read() {
        Ok((size, bytes)) => problem(name, size, &bytes),
        Err(e) => Some(format!("cannot be read: {e}")),
    }
}

/// A CSV or TSV needs a header and at least one row below it.
fn table_problem(bytes: &[u8], whole: bool) -> Option<String> {
    let text = text_of(bytes);
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    match (lines.next(), lines.next()) {
        (None, _) => Some("holds no text".into()),
        (Some(_), None) if whole => Some(NO_ROWS.into()),
        (Some(header), Some(first)) if whole && !has_values(header, first, lines) => {
            Some(NO_VALUES.into())
        }
        _ => None,
    }
}

/// The problem of a table whose rows hold nothing but their row numbers (a 1.5B
/// model wrote `df.where(mask)` as its events: 1,344 rows of empty cells).
pub const NO_VALUES: &str = "has rows, but every cell of them is empty (apart from a row number)";

/// Whether any row under `header` holds a value: a cell with a letter or digit, the
/// first cell left out when it is a row number and more cells follow it. Split on the
/// delimiter without reading quotes: a quoted comma splits a cell, which does not
/// change whether any cell holds something.
fn has_values<'a>(header: &str, first: &'a str, rest: impl Iterator<Item = &'a str>) -> bool {
    let sep = if header.contains('\t') && !header.contains(',') {
        '\t'
    } else {
        ','
    };
    std::iter::once(first).chain(rest).any(|row| {
        let mut cells = row.split(sep);
        let lead = cells.next().unwrap_or("");
        let mut others = cells.peekable();
        let numbered =
            others.peek().is_some() && lead.trim().trim_matches('"').parse::<u64>().is_ok();
        (!numbered && has_words(lead)) || others.any(has_words)
    })
}

fn text_of(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    String::from_utf8_lossy(bytes)
}

/// Words, not only white space and punctuation (`#`, `---`, `|`).
/// A Markdown document needs text under its headings: one of headings alone ("## Data",
/// a small model's whole report) is an outline, not the document.
fn markdown_problem(text: &str, whole: bool) -> Option<String> {
    if !has_words(text) {
        return Some("holds no text".into());
    }
    if let Some(cut) = cut_short(text) {
        return Some(cut);
    }
    let body = text
        .lines()
        .any(|l| !l.trim_start().starts_with('#') && has_words(l));
    (whole && !body).then(|| "holds only headings, no text under them".into())
}

/// A text the app wrote from a reply cut at the model's length limit: its end is
/// missing, whatever its start holds.
fn cut_short(text: &str) -> Option<String> {
    text.contains(crate::protocol::TEXT_CUT).then(|| {
        "was cut short (the model's reply reached its length limit, and the file ends with the app's line saying so): write it again, shorter".into()
    })
}

fn has_words(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn root_cause(e: &anyhow::Error) -> String {
    e.chain().last().map(|c| c.to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut img = ::image::RgbImage::from_pixel(w, h, ::image::Rgb([1, 2, 3]));
        img.put_pixel(w / 2, h / 2, ::image::Rgb([200, 0, 0]));
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, ::image::ImageFormat::Png).unwrap();
        out.into_inner()
    }

    fn check(name: &str, bytes: &[u8]) -> Option<String> {
        problem(name, bytes.len() as u64, bytes)
    }

    #[test]
    fn a_chart_of_one_colour_is_blank_and_a_tiny_image_is_not() {
        let blank = |w, h| {
            let img = ::image::RgbaImage::from_pixel(w, h, ::image::Rgba([255, 255, 255, 255]));
            let mut out = Cursor::new(Vec::new());
            img.write_to(&mut out, ::image::ImageFormat::Png).unwrap();
            out.into_inner()
        };
        assert!(check("chart.png", &blank(640, 480))
            .unwrap()
            .starts_with("is a blank image"));
        assert_eq!(check("icon.png", &blank(2, 2)), None);
        assert_eq!(check("chart.png", &png(640, 480)), None);
    }

    #[test]
    fn real_files_pass() {
        assert_eq!(check("chart.png", &png(40, 30)), None);
        assert_eq!(check("t.csv", b"a,b\n1,2\n"), None);
        assert_eq!(check("t.tsv", b"\xEF\xBB\xBFa\tb\n1\t2"), None);
        assert_eq!(check("r.md", b"# Report\n\nThree anomalies.\n"), None);
        assert_eq!(check("d.json", br#"{"a": [1]}"#), None);
        assert_eq!(check("x.bin", b"\0"), None);
        assert_eq!(check("p.parquet", b"PAR1....PAR1"), None);
    }

    #[test]
    fn touched_truncated_and_mislabelled_files_fail_with_why() {
        assert_eq!(
            check("chart.png", b"").as_deref(),
            Some("is empty (0 bytes)")
        );
        let mut cut = png(40, 30);
        cut.truncate(cut.len() - 20);
        assert!(check("chart.png", &cut)
            .unwrap()
            .starts_with("is not a readable PNG image"));
        assert!(check("chart.png", b"GIF89a")
            .unwrap()
            .contains("PNG signature"));
        assert_eq!(
            check("t.csv", b"a,b\n").as_deref(),
            Some("has a header but no rows")
        );
        assert_eq!(check("t.csv", b"\n\n").as_deref(), Some("holds no text"));
        // Rows of empty cells, numbered or not: no values. One value anywhere is enough.
        for empty in [
            &b"index,t,kwh\n0,,\n1,,\n"[..],
            b"t,kwh\n,\n\"\",\n",
            b"a\tb\n0\t\n",
        ] {
            assert_eq!(
                check("t.csv", empty).as_deref(),
                Some(NO_VALUES),
                "{empty:?}"
            );
        }
        assert_eq!(check("t.csv", b"index,t,kwh\n0,,\n1,,4.2\n"), None);
        assert_eq!(check("t.csv", b"count\n5\n"), None, "one column of numbers");
        assert_eq!(check("t.tsv", b"id\tname\n1\tx\n"), None);
        assert_eq!(check("r.md", b"#\n---\n").as_deref(), Some("holds no text"));
        assert_eq!(
            check("r.md", b"## Data\n\n## Method\n").as_deref(),
            Some("holds only headings, no text under them")
        );
        assert_eq!(check("r.md", b"## Data\n1344 hourly rows.\n"), None);
        // The app's line that a reply was cut: the file's end is missing.
        let cut = format!(
            "# Report\n\n## Data\nHourly rows.\n\n{}\n",
            crate::protocol::TEXT_CUT
        );
        for name in ["r.md", "r.txt"] {
            assert!(check(name, cut.as_bytes())
                .unwrap()
                .starts_with("was cut short (the model's reply reached its length limit"));
        }
        assert_eq!(check("r.txt", b"## Data"), None);
        assert_eq!(
            check("r.html", b"<html><body></body></html>").as_deref(),
            Some("holds no text")
        );
        assert!(check("d.json", b"{oops")
            .unwrap()
            .starts_with("is not valid JSON"));
        assert!(check("t.xlsx", b"a,b").unwrap().contains("zip archive"));
    }

    #[test]
    fn a_large_file_is_judged_by_its_head() {
        // Only the first bytes were read: a header line is not "no rows" yet, and a
        // PNG's signature is enough.
        assert_eq!(problem("t.csv", 1 << 30, b"a,b\n"), None);
        assert_eq!(problem("c.png", 1 << 30, b"\x89PNG\r\n\x1a\n"), None);
    }
}
