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

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.xlsx");
        std::fs::write(&p, b"not a zip").unwrap();
        assert!(sheet_names(&p).is_err());
        assert!(preview_sheet(&p, "Sheet1", 0, 10).is_err());
    }
}
