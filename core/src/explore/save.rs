//! A view saved as a file: every row its filters keep, in its order, as CSV (cells as
//! the explorer reads them) or Parquet (typed by column, [`super::typed`]).
//!
//! Both are written to a hidden part file beside the destination, synced and renamed
//! over it, so a failure leaves the destination as it was.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use super::source::Table;
use super::typed::{self, Reading};
use super::{format_of, source, view_rows, ViewSpec};
use crate::artifacts::table::{MAX_CELL_CHARS, MAX_PAGE_ROWS};

/// The file a view is saved as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SaveAs {
    Csv,
    Parquet,
}

/// Write the view `view` of the table file `path` to `dest` as `format`; the rows
/// written.
pub fn save(format: SaveAs, path: &Path, view: &ViewSpec, dest: &Path) -> anyhow::Result<usize> {
    match format {
        SaveAs::Csv => save_csv(path, view, dest),
        SaveAs::Parquet => save_parquet(path, view, dest),
    }
}

/// Write the view `view` of the table file `path` to `dest` as CSV: the header, then
/// each kept row's cells as the explorer reads them. A cell longer than the explorer
/// reads ([`MAX_CELL_CHARS`]) fails the save rather than writing it cut (the view's
/// pandas code, "Copy as code", reads every byte). Returns the rows written.
fn save_csv(path: &Path, view: &ViewSpec, dest: &Path) -> anyhow::Result<usize> {
    let (t, rows) = kept(path, view)?;
    atomically(dest, |file| {
        let mut out = csv::Writer::from_writer(BufWriter::new(file));
        out.write_record(&t.headers)?;
        for chunk in rows.chunks(MAX_PAGE_ROWS) {
            for row in &whole_cells(&t, chunk)? {
                out.write_record(row)?;
            }
        }
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        file.flush()?;
        Ok(file.into_inner()?)
    })?;
    Ok(rows.len())
}

/// [`save_csv`] as Parquet: each column of its kind over the whole file (numbers stay
/// numbers), a missing cell a null; Snappy-compressed, as pandas writes by default.
fn save_parquet(path: &Path, view: &ViewSpec, dest: &Path) -> anyhow::Result<usize> {
    let (t, rows) = kept(path, view)?;
    let kinds = t.profile()?.kinds.clone();
    let schema = typed::schema(&t.headers, &kinds);
    let how = Reading {
        text_na: t.text_na,
        decimal_comma: t.decimal_comma,
    };
    atomically(dest, |file| {
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build();
        let mut out = ArrowWriter::try_new(file, schema.clone(), Some(props))?;
        for (i, chunk) in rows.chunks(MAX_PAGE_ROWS).enumerate() {
            let cells = whole_cells(&t, chunk)?;
            out.write(&typed::batch(
                &schema,
                &kinds,
                &cells,
                i * MAX_PAGE_ROWS,
                how,
            )?)?;
        }
        Ok(out.into_inner()?)
    })?;
    Ok(rows.len())
}

/// The table of `path` and the rows `view` keeps, in its order.
fn kept(path: &Path, view: &ViewSpec) -> anyhow::Result<(Arc<Table>, Arc<Vec<u32>>)> {
    view.check_shape().map_err(anyhow::Error::new)?;
    let t = source::open(path, format_of(path)?, view.sheet.as_deref())?;
    let rows = match view_rows(&t, view)? {
        Some(r) => r,
        None => Arc::new((0..t.total_rows as u32).collect()),
    };
    Ok((t, rows))
}

/// The cells of `rows`, each whole: a cell the explorer would cut fails the save.
fn whole_cells(t: &Table, rows: &[u32]) -> anyhow::Result<Vec<Vec<String>>> {
    let (cells, truncated, _) = t.fetch(rows)?;
    anyhow::ensure!(
        truncated == 0,
        "a cell of this view is longer than {MAX_CELL_CHARS} characters, more than the explorer reads; \
         save it with the view's pandas code (Copy as code) instead"
    );
    Ok(cells)
}

/// Run `write` on a new part file beside `dest` (it returns the file, written), sync
/// it and rename it over `dest`; on any failure remove the part file.
fn atomically(dest: &Path, write: impl FnOnce(File) -> anyhow::Result<File>) -> anyhow::Result<()> {
    let part = part_of(dest)?;
    let done = (|| {
        let file =
            File::create(&part).with_context(|| format!("cannot write {}", part.display()))?;
        write(file)?.sync_all()?;
        std::fs::rename(&part, dest).with_context(|| format!("cannot write {}", dest.display()))
    })();
    if done.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    done
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
    /// A small Parquet file, as one batch.
    fn read_parquet(p: &Path) -> arrow_array::RecordBatch {
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            File::open(p).unwrap(),
        )
        .unwrap()
        .with_batch_size(1 << 20)
        .build()
        .unwrap();
        let mut batches: Vec<_> = reader.map(Result::unwrap).collect();
        assert_eq!(batches.len(), 1);
        batches.pop().unwrap()
    }

    #[test]
    fn a_view_saved_as_parquet_keeps_its_rows_in_order_and_its_numbers_as_numbers() {
        use arrow_array::cast::AsArray;
        use arrow_array::types::{Date32Type, Float64Type, Int64Type};
        use arrow_array::Array;
        use arrow_schema::DataType;
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("t.csv");
        // 2,500 rows: more than one page's worth, so the file is written in batches.
        let mut text = String::from("id,kwh,day,city,ok\n");
        for i in 0..2_500 {
            let kwh = if i % 7 == 0 {
                "NA".to_string()
            } else {
                format!("{}.5", i % 40)
            };
            let city = ["Bilbao", "Leon", "Vigo"][i % 3];
            text.push_str(&format!(
                "{i},{kwh},2024-01-{:02},{city},{}\n",
                1 + i % 28,
                i % 2 == 0
            ));
        }
        std::fs::write(&src, &text).unwrap();
        let dest = dir.path().join("view.parquet");
        let view: ViewSpec = serde_json::from_value(serde_json::json!({
            "filters": [{"column": 3, "op": "values", "values": ["Leon", "Vigo"]}],
            "sort": [{"column": 1, "descending": true}, {"column": 0}],
        }))
        .unwrap();
        let n = save_parquet(&src, &view, &dest).unwrap();
        // The same rows, in the same order, as the CSV of the view.
        let csv_dest = dir.path().join("view.csv");
        assert_eq!(save_csv(&src, &view, &csv_dest).unwrap(), n);
        let want: Vec<Vec<String>> = csv::Reader::from_path(&csv_dest)
            .unwrap()
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect();
        assert_eq!(n, (0..2_500).filter(|i| i % 3 != 0).count());
        let b = read_parquet(&dest);
        assert_eq!(b.num_rows(), n);
        let types: Vec<&DataType> = b
            .schema_ref()
            .fields()
            .iter()
            .map(|f| f.data_type())
            .collect();
        assert_eq!(
            types,
            [
                &DataType::Int64,
                &DataType::Float64,
                &DataType::Date32,
                &DataType::Utf8,
                &DataType::Boolean
            ]
        );
        let id = b.column(0).as_primitive::<Int64Type>();
        let kwh = b.column(1).as_primitive::<Float64Type>();
        let day = b.column(2).as_primitive::<Date32Type>();
        let city = b.column(3).as_string::<i32>();
        let ok = b.column(4).as_boolean();
        for (r, w) in want.iter().enumerate() {
            assert_eq!(id.value(r).to_string(), w[0], "row {r}");
            if w[1] == "NA" {
                assert!(kwh.is_null(r), "row {r}: NA is a null");
            } else {
                assert_eq!(kwh.value(r), w[1].parse::<f64>().unwrap(), "row {r}");
            }
            assert_eq!(crate::explore::cell::iso_date(day.value(r) as i64), w[2]);
            assert_eq!(city.value(r), w[3]);
            assert_eq!(ok.value(r).to_string(), w[4]);
        }
        // Sorted descending: the missing numbers last, as the explorer shows them.
        assert!(kwh.is_null(n - 1) && !kwh.is_null(0));
        assert!(!dir.path().join(".view.parquet.part").exists());
    }

    #[test]
    fn a_parquet_file_saved_whole_reads_back_as_it_was() {
        use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("in.parquet");
        let id: ArrayRef = Arc::new(Int64Array::from_iter_values([3, -1, 1 << 60]));
        let x: ArrayRef = Arc::new(Float64Array::from(vec![Some(0.1), None, Some(1e300)]));
        let s: ArrayRef = Arc::new(StringArray::from(vec![Some("NA"), Some("a,b"), None]));
        let batch = RecordBatch::try_from_iter([("id", id), ("x", x), ("s", s)]).unwrap();
        let mut w =
            ArrowWriter::try_new(File::create(&src).unwrap(), batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let dest = dir.path().join("out.parquet");
        assert_eq!(save_parquet(&src, &ViewSpec::default(), &dest).unwrap(), 3);
        // Same types, same values: an integer past 2^53 exact, "NA" text (not missing
        // in a typed file), nulls where there were nulls.
        // (Every saved column is nullable: a view's kinds say nothing of nulls.)
        let back = read_parquet(&dest);
        assert_eq!(back.columns(), batch.columns());
        let names = |b: &arrow_array::RecordBatch| -> Vec<String> {
            b.schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect()
        };
        assert_eq!(names(&back), names(&batch));
    }

    #[test]
    fn a_view_that_keeps_no_row_is_a_parquet_file_of_its_columns() {
        use arrow_schema::DataType;
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("t.csv");
        std::fs::write(&src, "n,city\n1,Leon\n2,Vigo\n").unwrap();
        let dest = dir.path().join("none.parquet");
        let view: ViewSpec = serde_json::from_value(serde_json::json!({
            "filters": [{"column": 0, "op": "range", "min": "5"}],
        }))
        .unwrap();
        assert_eq!(save_parquet(&src, &view, &dest).unwrap(), 0);
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            File::open(&dest).unwrap(),
        )
        .unwrap();
        let types: Vec<DataType> = reader
            .schema()
            .fields()
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        assert_eq!(types, [DataType::Int64, DataType::Utf8]);
        assert_eq!(
            reader
                .build()
                .unwrap()
                .map(|b| b.unwrap().num_rows())
                .sum::<usize>(),
            0
        );
    }

    #[test]
    fn a_failed_parquet_save_leaves_the_destination_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("t.csv");
        let long = "x".repeat(MAX_CELL_CHARS + 5);
        std::fs::write(&src, format!("a,b\n1,{long}\n")).unwrap();
        let dest = dir.path().join("out.parquet");
        std::fs::write(&dest, "before").unwrap();
        let err = save_parquet(&src, &ViewSpec::default(), &dest).unwrap_err();
        assert!(err.to_string().contains("Copy as code"), "{err}");
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "before");
        assert!(!part_of(&dest).unwrap().exists(), "no part file is left");
        // A folder that is not there: nothing is written anywhere.
        let nowhere = dir.path().join("gone").join("out.parquet");
        std::fs::write(&src, "a\n1\n").unwrap();
        assert!(save_parquet(&src, &ViewSpec::default(), &nowhere).is_err());
        assert!(!dir.path().join("gone").exists());
    }
}
