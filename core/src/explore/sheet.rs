//! A workbook sheet as an in-memory table, parsed once (the explorer's table cache
//! keeps it; `artifacts::excel` parses it again for every page).
//!
//! Cells are shown as pandas' `read_excel(dtype=str)` reads them, so the code written
//! for a view keeps the same rows: numbers as Python prints them (`7`, `41.5`), booleans
//! `True`/`False`, dates ISO (`2024-01-05`, or with ` HH:MM:SS` when there is a time).

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use calamine::{open_workbook_auto, Data, Reader};

use super::source::Mem;
use crate::artifacts::excel::MAX_WORKBOOK_BYTES;
use crate::artifacts::table::MAX_COLUMNS;

fn text(c: &Data) -> Option<String> {
    Some(match c {
        Data::Empty => return None,
        Data::String(s) => s.clone(),
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
        Data::Float(f) => format!("{f}"),
        Data::Int(i) => i.to_string(),
        Data::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Data::DateTime(d) if d.is_datetime() => {
            let (y, mo, da, h, mi, s, ms) = d.to_ymd_hms_milli();
            if (h, mi, s, ms) == (0, 0, 0, 0) {
                format!("{y:04}-{mo:02}-{da:02}")
            } else if ms == 0 {
                format!("{y:04}-{mo:02}-{da:02} {h:02}:{mi:02}:{s:02}")
            } else {
                format!("{y:04}-{mo:02}-{da:02} {h:02}:{mi:02}:{s:02}.{ms:03}")
            }
        }
        Data::DateTime(d) => format!("{}", d.as_f64()),
        Data::DateTimeIso(s) | Data::DurationIso(s) => s.clone(),
        Data::Error(e) => format!("#{e:?}"),
    })
}

/// The sheet names, the chosen sheet's name (`sheet`, else the first) and its table;
/// the first row is the header.
pub fn load(path: &Path, sheet: Option<&str>) -> anyhow::Result<(Vec<String>, String, Arc<Mem>)> {
    let len = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    if len > MAX_WORKBOOK_BYTES {
        anyhow::bail!(
            "{} is larger than {} MiB; workbooks that large are not explored",
            path.display(),
            MAX_WORKBOOK_BYTES >> 20
        );
    }
    let mut wb = open_workbook_auto(path)
        .with_context(|| format!("{} cannot be read as a workbook", path.display()))?;
    let sheets = wb.sheet_names().to_vec();
    let name = match sheet {
        Some(s) if sheets.iter().any(|n| n == s) => s.to_string(),
        Some(s) => {
            return Err(super::source::bad(format!(
                "the workbook has no sheet {s:?}; pick one of its sheets"
            )))
        }
        None => sheets
            .first()
            .cloned()
            .with_context(|| format!("{} has no sheets", path.display()))?,
    };
    let range = wb
        .worksheet_range(&name)
        .with_context(|| format!("the sheet {name:?} of {} cannot be read", path.display()))?;
    let mut rows = range.rows();
    let headers: Vec<String> = rows
        .next()
        .map(|h| {
            h.iter()
                .take(MAX_COLUMNS)
                .map(|c| text(c).unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    let rows: Vec<Vec<Option<String>>> = rows.map(|r| r.iter().map(text).collect()).collect();
    Ok((
        sheets,
        name,
        Arc::new(Mem {
            headers,
            rows,
            typed: None,
        }),
    ))
}
