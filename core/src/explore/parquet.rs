//! Parquet tables read in place: a scan reads only the columns it needs, row group by
//! row group, each thread its own run of row groups; a page reads only its rows (a row
//! selection, which the page index lets the reader skip to). Nothing holds the file.
//!
//! Cells are turned into text as arrow displays them (`2024-01-05T10:00:00`, `1.5`),
//! so the rest of the explorer treats every format alike; a float NaN is a missing
//! cell, as pandas' `isna()` says. Column kinds come from the schema.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use arrow_array::{Array, ArrayRef, Float32Array, Float64Array};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelector,
};
use parquet::arrow::ProjectionMask;

use super::cell::Kind;
use super::source::Row;
use crate::artifacts::table::{self, MAX_COLUMNS};

pub struct ParquetTable {
    path: PathBuf,
    meta: ArrowReaderMetadata,
    pub headers: Vec<String>,
    pub kinds: Vec<Kind>,
    pub total_rows: usize,
    /// The first row of each row group, and one past the last row.
    starts: Vec<usize>,
}

/// One column of a batch as text: `None` for nulls.
pub struct TextColumn {
    data: Vec<u8>,
    ends: Vec<u32>,
    valid: Vec<bool>,
}

impl TextColumn {
    #[inline]
    pub fn get(&self, row: usize) -> Option<&[u8]> {
        if !self.valid[row] {
            return None;
        }
        let start = if row == 0 {
            0
        } else {
            self.ends[row - 1] as usize
        };
        Some(&self.data[start..self.ends[row] as usize])
    }

    fn of(a: &ArrayRef) -> anyhow::Result<TextColumn> {
        let n = a.len();
        let mut t = TextColumn {
            data: Vec::with_capacity(n * 8),
            ends: Vec::with_capacity(n),
            valid: Vec::with_capacity(n),
        };
        let (f64s, f32s) = (
            a.as_any().downcast_ref::<Float64Array>(),
            a.as_any().downcast_ref::<Float32Array>(),
        );
        let nan = |i: usize| {
            f64s.is_some_and(|f| f.value(i).is_nan()) || f32s.is_some_and(|f| f.value(i).is_nan())
        };
        let f = ArrayFormatter::try_new(a.as_ref(), &FormatOptions::default())?;
        for i in 0..n {
            let ok = a.is_valid(i) && !nan(i);
            if ok {
                write!(t.data, "{}", f.value(i))?;
            }
            t.valid.push(ok);
            t.ends.push(t.data.len() as u32);
        }
        Ok(t)
    }
}

fn kind_of(t: &DataType) -> Kind {
    use DataType::*;
    match t {
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => Kind::Integer,
        Float16 | Float32 | Float64 | Decimal128(..) | Decimal256(..) => Kind::Number,
        Date32 | Date64 => Kind::Date,
        Timestamp(..) => Kind::Datetime,
        Boolean => Kind::Boolean,
        Dictionary(_, v) => kind_of(v),
        _ => Kind::Text,
    }
}

impl ParquetTable {
    pub fn open(path: &Path) -> anyhow::Result<ParquetTable> {
        let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
        let meta =
            ArrowReaderMetadata::load(&file, ArrowReaderOptions::new().with_page_index(true))
                .with_context(|| format!("{} cannot be read as a Parquet file", path.display()))?;
        let fields = meta.schema().fields();
        let headers: Vec<String> = fields
            .iter()
            .take(MAX_COLUMNS)
            .map(|f| f.name().clone())
            .collect();
        let mut kinds: Vec<Kind> = fields
            .iter()
            .take(MAX_COLUMNS)
            .map(|f| kind_of(f.data_type()))
            .collect();
        let md = meta.metadata();
        let mut starts = vec![0usize];
        for rg in md.row_groups() {
            starts.push(starts.last().unwrap() + rg.num_rows().max(0) as usize);
        }
        let total_rows = *starts.last().unwrap();
        // A column whose every value is null (per the row groups' statistics) is empty.
        for (c, k) in kinds.iter_mut().enumerate() {
            let nulls: Option<u64> = md
                .row_groups()
                .iter()
                .map(|rg| {
                    let col = rg
                        .columns()
                        .iter()
                        .position(|cc| cc.column_path().parts().first() == Some(&headers[c]))?;
                    rg.column(col).statistics()?.null_count_opt()
                })
                .sum();
            if total_rows > 0 && nulls == Some(total_rows as u64) {
                *k = Kind::Empty;
            }
        }
        Ok(ParquetTable {
            path: path.to_path_buf(),
            meta,
            headers,
            kinds,
            total_rows,
            starts,
        })
    }

    fn builder(&self) -> anyhow::Result<ParquetRecordBatchReaderBuilder<File>> {
        let file = File::open(&self.path)
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(
            file,
            self.meta.clone(),
        ))
    }

    /// [`super::source::Table::scan_with`] for Parquet: threads take runs of row groups.
    pub fn scan<S: Send>(
        &self,
        cols: &[usize],
        threads: usize,
        init: &(dyn Fn() -> S + Sync),
        visit: &(dyn Fn(&mut S, u32, u64, &Row) + Sync),
    ) -> anyhow::Result<Vec<S>> {
        let groups = self.starts.len() - 1;
        let per = groups.div_ceil(threads).max(1);
        let mut unique: Vec<usize> = cols.to_vec();
        unique.sort_unstable();
        unique.dedup();
        // Where each asked-for column is among the projected ones.
        let at: Vec<usize> = cols
            .iter()
            .map(|c| unique.binary_search(c).unwrap())
            .collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..groups)
                .step_by(per)
                .map(|a| {
                    let (unique, at) = (&unique, &at);
                    s.spawn(move || -> anyhow::Result<S> {
                        let mut st = init();
                        let b = (a + per).min(groups);
                        let builder = self.builder()?;
                        let mask =
                            ProjectionMask::roots(builder.parquet_schema(), unique.iter().copied());
                        let reader = builder
                            .with_projection(mask)
                            .with_row_groups((a..b).collect())
                            .with_batch_size(8192)
                            .build()?;
                        let mut row = self.starts[a];
                        for batch in reader {
                            let batch = batch?;
                            let texts: Vec<TextColumn> = at
                                .iter()
                                .map(|&i| TextColumn::of(batch.column(i)))
                                .collect::<anyhow::Result<_>>()?;
                            for i in 0..batch.num_rows() {
                                visit(&mut st, (row + i) as u32, 0, &Row::Cols(&texts, i));
                            }
                            row += batch.num_rows();
                        }
                        Ok(st)
                    })
                })
                .collect();
            super::source::joined(handles, init)
        })
    }

    /// The cells of rows `rows` (any order), cut for a page.
    pub fn fetch(&self, rows: &[u32], truncated: &mut usize) -> anyhow::Result<Vec<Vec<String>>> {
        let mut wanted: Vec<usize> = rows.iter().map(|&r| r as usize).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let width = self.headers.len();
        let mut found: Vec<(usize, Vec<String>)> = Vec::with_capacity(wanted.len());
        let mut i = 0;
        while i < wanted.len() {
            let g = self.starts.partition_point(|&s| s <= wanted[i]) - 1;
            let (g0, g1) = (self.starts[g], self.starts[g + 1]);
            let mut selectors = Vec::new();
            let mut at = g0;
            let mut mine = Vec::new();
            while i < wanted.len() && wanted[i] < g1 {
                let r = wanted[i];
                if r > at {
                    selectors.push(RowSelector::skip(r - at));
                }
                selectors.push(RowSelector::select(1));
                mine.push(r);
                at = r + 1;
                i += 1;
            }
            if g1 > at {
                selectors.push(RowSelector::skip(g1 - at));
            }
            let builder = self.builder()?;
            let mask = ProjectionMask::roots(builder.parquet_schema(), 0..width);
            let reader = builder
                .with_projection(mask)
                .with_row_groups(vec![g])
                .with_row_selection(RowSelection::from(selectors))
                .with_batch_size(1024)
                .build()?;
            let mut k = 0;
            for batch in reader {
                let batch = batch?;
                let texts: Vec<TextColumn> = batch
                    .columns()
                    .iter()
                    .map(TextColumn::of)
                    .collect::<anyhow::Result<_>>()?;
                for r in 0..batch.num_rows() {
                    let cells = texts
                        .iter()
                        .map(|t| table::cell_text(t.get(r).unwrap_or_default(), truncated))
                        .collect();
                    found.push((mine[k], cells));
                    k += 1;
                }
            }
        }
        Ok(rows
            .iter()
            .map(|&r| {
                let i = found
                    .binary_search_by_key(&(r as usize), |f| f.0)
                    .expect("every asked row was read");
                found[i].1.clone()
            })
            .collect())
    }
}
