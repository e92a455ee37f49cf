//! A view saved as a file: every row its filters keep, in its order, as CSV.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::{format_of, source, view_rows, ViewSpec};
use crate::artifacts::table::{MAX_CELL_CHARS, MAX_PAGE_ROWS};

/// Write the view `view` of the table file `path` to `dest` as CSV: the header, then
/// each kept row's cells as the explorer reads them. Written beside `dest` and renamed
/// over it, so a failure leaves `dest` as it was. A cell longer than the explorer reads
/// ([`MAX_CELL_CHARS`]) fails the save rather than writing it cut (the view's pandas
/// code, "Copy as code", reads every byte). Returns the rows written.
pub fn save_csv(path: &Path, view: &ViewSpec, dest: &Path) -> anyhow::Result<usize> {
    view.check_shape().map_err(anyhow::Error::new)?;
    let t = source::open(path, format_of(path)?, view.sheet.as_deref())?;
    let kept = view_rows(&t, view)?;
    let all: Vec<u32>;
    let rows: &[u32] = match &kept {
        Some(r) => r,
        None => {
            all = (0..t.total_rows as u32).collect();
            &all
        }
    };
    let part = part_of(dest)?;
    let written = (|| {
        let file =
            File::create(&part).with_context(|| format!("cannot write {}", part.display()))?;
        let mut out = csv::Writer::from_writer(BufWriter::new(file));
        out.write_record(&t.headers)?;
        for chunk in rows.chunks(MAX_PAGE_ROWS) {
            let (cells, truncated, _) = t.fetch(chunk)?;
            anyhow::ensure!(
                truncated == 0,
                "a cell of this view is longer than {MAX_CELL_CHARS} characters, more than the explorer reads; \
                 save it with the view's pandas code (Copy as code) instead"
            );
            for row in &cells {
                out.write_record(row)?;
            }
        }
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        file.flush()?;
        file.get_ref().sync_all()?;
        std::fs::rename(&part, dest).with_context(|| format!("cannot write {}", dest.display()))?;
        Ok(rows.len())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    written
}

/// The file written before it takes `dest`'s name: hidden, in the same folder.
fn part_of(dest: &Path) -> anyhow::Result<PathBuf> {
    let name = dest
        .file_name()
        .with_context(|| format!("{} names no file", dest.display()))?;
    Ok(dest.with_file_name(format!(".{}.part", name.to_string_lossy())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_view_holds_its_kept_rows_in_order_with_the_header() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("t.csv");
        std::fs::write(
            &src,
            "city,kwh,note\nBilbao,3,\"a, b\"\nLeon,9,x\nVigo,5,\"say \"\"hi\"\"\"\n",
        )
        .unwrap();
        let dest = dir.path().join("view.csv");
        let view: ViewSpec = serde_json::from_value(serde_json::json!({
            "filters": [{"column": 1, "op": "range", "min": "4"}],
            "sort": [{"column": 1, "descending": true}],
        }))
        .unwrap();
        assert_eq!(save_csv(&src, &view, &dest).unwrap(), 2);
        let text = std::fs::read_to_string(&dest).unwrap();
        assert_eq!(text, "city,kwh,note\nLeon,9,x\nVigo,5,\"say \"\"hi\"\"\"\n");
        // The whole file, as it is, with no view.
        assert_eq!(save_csv(&src, &ViewSpec::default(), &dest).unwrap(), 3);
        let back = std::fs::read_to_string(&dest).unwrap();
        assert_eq!(back, std::fs::read_to_string(&src).unwrap());
    }

    #[test]
    fn a_failed_save_leaves_the_destination_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("t.csv");
        let long = "x".repeat(MAX_CELL_CHARS + 5);
        std::fs::write(&src, format!("a,b\n1,{long}\n")).unwrap();
        let dest = dir.path().join("out.csv");
        std::fs::write(&dest, "before").unwrap();
        let err = save_csv(&src, &ViewSpec::default(), &dest).unwrap_err();
        assert!(err.to_string().contains("Copy as code"), "{err}");
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "before");
        assert!(!part_of(&dest).unwrap().exists(), "no part file is left");
    }
}
