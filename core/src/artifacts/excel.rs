//! Workbook previews (xlsx, xlsm, xlsb, xls, ods) read with `calamine`, as pages in the
//! same shape as CSV pages ([`CsvPage`]), so the desktop shows them with the same table.
//!
//! calamine reads a whole sheet into memory, so workbooks larger than
//! [`MAX_WORKBOOK_BYTES`] on disk are refused, and every cell and row is bounded as for
//! CSV ([`MAX_CELL_CHARS`], [`MAX_COLUMNS`], [`MAX_PAGE_ROWS`]).

use std::path::Path;

use anyhow::{bail, Context};
use calamine::{open_workbook_auto, Reader};

use super::table::{CsvPage, MAX_CELL_CHARS, MAX_COLUMNS, MAX_PAGE_ROWS};

/// Workbooks larger than this are not previewed.
pub const MAX_WORKBOOK_BYTES: u64 = 50 << 20;

fn check_size(path: &Path) -> anyhow::Result<()> {
    let len = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    if len > MAX_WORKBOOK_BYTES {
        bail!(
            "{} is larger than {} MiB; workbooks that large are not previewed",
            path.display(),
            MAX_WORKBOOK_BYTES >> 20
        );
    }
    Ok(())
}

/// The names of the sheets, in order.
pub fn sheet_names(path: &Path) -> anyhow::Result<Vec<String>> {
    check_size(path)?;
    let wb = open_workbook_auto(path)
        .with_context(|| format!("{} cannot be read as a workbook", path.display()))?;
    Ok(wb.sheet_names().to_vec())
}

fn cut(text: String, page: &mut CsvPage) -> String {
    if text.chars().count() > MAX_CELL_CHARS {
        page.truncated_cells += 1;
        let mut t: String = text.chars().take(MAX_CELL_CHARS).collect();
        t.push('…');
        t
    } else {
        text
    }
}

/// Rows `offset..offset + limit` of `sheet`; its first row is taken as the headers.
pub fn preview_sheet(
    path: &Path,
    sheet: &str,
    offset: usize,
    limit: usize,
) -> anyhow::Result<CsvPage> {
    check_size(path)?;
    let mut wb = open_workbook_auto(path)
        .with_context(|| format!("{} cannot be read as a workbook", path.display()))?;
    let range = wb
        .worksheet_range(sheet)
        .with_context(|| format!("the sheet {sheet:?} of {} cannot be read", path.display()))?;
    let mut page = CsvPage {
        headers: Vec::new(),
        rows: Vec::new(),
        offset,
        total_rows: Some(range.height().saturating_sub(1)),
        truncated_cells: 0,
        dropped_cells: 0,
        stopped_early: false,
        delimiter: ',',
    };
    let mut rows = range.rows();
    if let Some(h) = rows.next() {
        page.dropped_cells += h.len().saturating_sub(MAX_COLUMNS);
        page.headers = h.iter().take(MAX_COLUMNS).map(|c| c.to_string()).collect();
        page.headers = std::mem::take(&mut page.headers)
            .into_iter()
            .map(|t| cut(t, &mut page))
            .collect();
    }
    for row in rows.skip(offset).take(limit.min(MAX_PAGE_ROWS)) {
        page.dropped_cells += row.len().saturating_sub(MAX_COLUMNS);
        let cells: Vec<String> = row
            .iter()
            .take(MAX_COLUMNS)
            .map(|c| c.to_string())
            .collect();
        let cells = cells.into_iter().map(|t| cut(t, &mut page)).collect();
        page.rows.push(cells);
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A minimal workbook: two sheets, inline strings and numbers.
    fn write_xlsx(path: &Path) {
        let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        let o = zip::write::SimpleFileOptions::default();
        let mut put = |name: &str, body: &str| {
            z.start_file(name, o).unwrap();
            z.write_all(body.as_bytes()).unwrap();
        };
        put(
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#,
        );
        put(
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
        );
        put(
            "xl/workbook.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Readings" sheetId="1" r:id="rId1"/><sheet name="Notes" sheetId="2" r:id="rId2"/></sheets></workbook>"#,
        );
        put(
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet2.xml"/></Relationships>"#,
        );
        put(
            "xl/worksheets/sheet1.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>meter</t></is></c><c r="B1" t="inlineStr"><is><t>kwh</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>&lt;b&gt;m1&lt;/b&gt;</t></is></c><c r="B2"><v>41.5</v></c></row><row r="3"><c r="A3" t="inlineStr"><is><t>m2</t></is></c><c r="B3"><v>7</v></c></row></sheetData></worksheet>"#,
        );
        put(
            "xl/worksheets/sheet2.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>note</t></is></c></row></sheetData></worksheet>"#,
        );
        z.finish().unwrap();
    }

    #[test]
    fn sheets_are_pages_like_csv() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.xlsx");
        write_xlsx(&p);
        assert_eq!(sheet_names(&p).unwrap(), ["Readings", "Notes"]);
        let page = preview_sheet(&p, "Readings", 0, 10).unwrap();
        assert_eq!(page.headers, ["meter", "kwh"]);
        assert_eq!(page.rows[0], ["<b>m1</b>", "41.5"]);
        assert_eq!(page.total_rows, Some(2));
        let second = preview_sheet(&p, "Readings", 1, 10).unwrap();
        assert_eq!(second.rows, [["m2", "7"]]);
        assert!(preview_sheet(&p, "Nope", 0, 10).is_err());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.xlsx");
        std::fs::write(&p, b"not a zip").unwrap();
        assert!(sheet_names(&p).is_err());
        assert!(preview_sheet(&p, "Sheet1", 0, 10).is_err());
    }
}
