//! Parquet tables read in place: a scan reads only the columns it needs, row group by
//! row group, each thread its own run of row groups; a page reads only its rows (a row
//! selection, which the page index lets the reader skip to). Nothing holds the file.
//!
//! Cells are read as text as arrow displays them (`2024-01-05T10:00:00`, `1.5`; strings
//! in place), so the rest of the explorer treats every format alike; a filter that
//! only compares numbers reads numeric columns typed instead. A float NaN is a missing
//! cell, as pandas' `isna()` says. Column kinds come from the schema.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, Float32Array, Float64Array, LargeStringArray, StringArray, StringViewArray,
};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, FieldRef, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelector,
};
use parquet::arrow::ProjectionMask;

use super::cell::Kind;
use super::filter::Filters;
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

/// One column of a batch as a scan reads it.
pub enum ScanColumn {
    /// Strings read where arrow holds them (no copy: the text arrow would display).
    Strings(Strings),
    /// Numbers for a reader that takes only numbers ([`Row::number`]); NaN is a
    /// missing cell (null or NaN), so that a range test is one comparison a lane. Such a
    /// column has no text.
    Numbers(Vec<f64>),
    /// Anything else, as arrow displays it.
    Text(TextColumn),
}

impl ScanColumn {
    /// `a` as a scan reads it: numbers typed when `numbers` is asked and the column
    /// holds numbers, strings in place, anything else as text.
    fn of(a: &ArrayRef, numbers: bool) -> anyhow::Result<ScanColumn> {
        if numbers {
            if let Some(v) = typed_numbers(a) {
                return Ok(ScanColumn::Numbers(v));
            }
        }
        Ok(match Strings::of(a) {
            Some(s) => ScanColumn::Strings(s),
            None => ScanColumn::Text(TextColumn::of(a)?),
        })
    }

    #[inline]
    pub fn get(&self, row: usize) -> Option<&[u8]> {
        match self {
            ScanColumn::Strings(s) => s.get(row),
            ScanColumn::Text(t) => t.get(row),
            ScanColumn::Numbers(_) => {
                debug_assert!(false, "a typed column was read as text");
                None
            }
        }
    }

    /// A dictionary column's cell as its dictionary's values and its key
    /// ([`NULL_KEY`] for a null); `None` for other columns.
    #[inline]
    pub fn dict(&self, row: usize) -> Option<(&Strings, u32)> {
        match self {
            ScanColumn::Strings(Strings::Dict(keys, values)) => Some((values, keys[row])),
            _ => None,
        }
    }

    /// The number of a typed column's cell; `None` when the column is not typed.
    #[inline]
    pub fn number(&self, row: usize) -> Option<Option<f64>> {
        match self {
            ScanColumn::Numbers(v) => Some((!v[row].is_nan()).then_some(v[row])),
            _ => None,
        }
    }
}

/// The numbers of an integer or double column, NaN for a missing cell (null or NaN, as
/// pandas' `isna()`); `None` for other types. Integers beyond 2^53 round as the text's parse would. A
/// float32 stays text: `0.1f32` widened is not the 0.1 its text shows and a filter
/// compares against.
fn typed_numbers(a: &ArrayRef) -> Option<Vec<f64>> {
    use arrow_array::types::*;
    fn all<T: arrow_array::ArrowPrimitiveType>(
        a: &ArrayRef,
        f: impl Fn(T::Native) -> f64,
    ) -> Option<Vec<f64>> {
        let p = a.as_primitive_opt::<T>()?;
        let mut v: Vec<f64> = p.values().iter().map(|&x| f(x)).collect();
        if let Some(nulls) = p.nulls() {
            for i in null_rows(nulls.iter()) {
                v[i] = f64::NAN;
            }
        }
        Some(v)
    }
    match a.data_type() {
        DataType::Float64 => all::<Float64Type>(a, |v| v),
        DataType::Int64 => all::<Int64Type>(a, |v| v as f64),
        DataType::Int32 => all::<Int32Type>(a, |v| v as f64),
        DataType::Int16 => all::<Int16Type>(a, |v| v as f64),
        DataType::Int8 => all::<Int8Type>(a, |v| v as f64),
        DataType::UInt64 => all::<UInt64Type>(a, |v| v as f64),
        DataType::UInt32 => all::<UInt32Type>(a, |v| v as f64),
        DataType::UInt16 => all::<UInt16Type>(a, |v| v as f64),
        DataType::UInt8 => all::<UInt8Type>(a, |v| v as f64),
        _ => None,
    }
}

/// The rows whose validity (a null buffer's bits, row by row) is false.
fn null_rows(valid: impl Iterator<Item = bool>) -> impl Iterator<Item = usize> {
    valid.enumerate().filter(|(_, ok)| !ok).map(|(i, _)| i)
}

/// A string column (plain, large, view or dictionary-encoded) read in place.
#[derive(Clone)]
pub enum Strings {
    Utf8(StringArray),
    Large(LargeStringArray),
    View(StringViewArray),
    /// A dictionary's keys ([`NULL_KEY`] for a null) into its values.
    Dict(Vec<u32>, Box<Strings>),
}

impl Strings {
    fn of(a: &ArrayRef) -> Option<Strings> {
        Some(match a.data_type() {
            DataType::Utf8 => Strings::Utf8(a.as_string::<i32>().clone()),
            DataType::LargeUtf8 => Strings::Large(a.as_string::<i64>().clone()),
            DataType::Utf8View => Strings::View(a.as_string_view().clone()),
            DataType::Dictionary(_, v)
                if matches!(
                    **v,
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                ) =>
            {
                let d = a.as_any_dictionary();
                let values = Strings::of(d.values())?;
                let mut keys: Vec<u32> = d.normalized_keys().iter().map(|&k| k as u32).collect();
                if let Some(nulls) = a.logical_nulls() {
                    for i in null_rows(nulls.iter()) {
                        keys[i] = NULL_KEY;
                    }
                }
                Strings::Dict(keys, Box::new(values))
            }
            _ => return None,
        })
    }

    #[inline]
    pub fn get(&self, row: usize) -> Option<&[u8]> {
        match self {
            Strings::Utf8(s) => s.is_valid(row).then(|| s.value(row).as_bytes()),
            Strings::Large(s) => s.is_valid(row).then(|| s.value(row).as_bytes()),
            Strings::View(s) => s.is_valid(row).then(|| s.value(row).as_bytes()),
            Strings::Dict(keys, values) => match keys[row] {
                NULL_KEY => None,
                k => values.get(k as usize),
            },
        }
    }

    /// What tells this column's strings from another's while both are alive: where
    /// its offsets (or views, or keys) are, and how many.
    pub fn id(&self) -> (usize, usize) {
        match self {
            Strings::Utf8(s) => (s.value_offsets().as_ptr() as usize, s.len()),
            Strings::Large(s) => (s.value_offsets().as_ptr() as usize, s.len()),
            Strings::View(s) => (s.views().as_ptr() as usize, s.len()),
            Strings::Dict(keys, _) => (keys.as_ptr() as usize, keys.len()),
        }
    }

    /// How many cells there are (a dictionary's values for the values of a
    /// [`Strings::Dict`]).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        match self {
            Strings::Utf8(s) => s.len(),
            Strings::Large(s) => s.len(),
            Strings::View(s) => s.len(),
            Strings::Dict(keys, _) => keys.len(),
        }
    }
}

/// A null cell's key in [`Strings::Dict`].
pub const NULL_KEY: u32 = u32::MAX;

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

/// The file's arrow schema with every string column that is dictionary-encoded
/// throughout (each page of each row group) read as a dictionary, so a scan meets each
/// distinct string once per row group instead of once per row; `None` when no column
/// is. A column that falls back to plain pages somewhere stays plain: turning those
/// pages into a dictionary would cost more than it saves.
fn dictionary_schema(meta: &ArrowReaderMetadata) -> Option<SchemaRef> {
    use parquet::basic::{Encoding, PageType};
    let md = meta.metadata();
    let schema = meta.schema();
    let fields = schema.fields();
    let leaves = md.file_metadata().schema_descr();
    // Only flat files: leaf `i` is field `i`.
    if leaves.num_columns() != fields.len() || md.num_row_groups() == 0 {
        return None;
    }
    let all_dictionary = |c: usize| {
        md.row_groups().iter().all(|rg| {
            let col = rg.column(c);
            col.dictionary_page_offset().is_some()
                && match (col.page_encoding_stats(), col.page_encoding_stats_mask()) {
                    (Some(stats), _) => stats.iter().all(|p| {
                        !matches!(p.page_type, PageType::DATA_PAGE | PageType::DATA_PAGE_V2)
                            || matches!(
                                p.encoding,
                                Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY
                            )
                    }),
                    (None, Some(mask)) => {
                        mask.is_only(Encoding::PLAIN_DICTIONARY)
                            || mask.is_only(Encoding::RLE_DICTIONARY)
                    }
                    (None, None) => false,
                }
        })
    };
    let mut changed = false;
    let hinted: Vec<FieldRef> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| match f.data_type() {
            DataType::Utf8 | DataType::LargeUtf8 if all_dictionary(i) => {
                changed = true;
                Arc::new(f.as_ref().clone().with_data_type(DataType::Dictionary(
                    Box::new(DataType::Int32),
                    Box::new(f.data_type().clone()),
                )))
            }
            _ => f.clone(),
        })
        .collect();
    changed.then(|| Arc::new(Schema::new_with_metadata(hinted, schema.metadata().clone())))
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
        let options = ArrowReaderOptions::new()
            .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Optional);
        let unreadable = || format!("{} cannot be read as a Parquet file", path.display());
        let meta = ArrowReaderMetadata::load(&file, options.clone()).with_context(unreadable)?;
        let meta = match dictionary_schema(&meta) {
            Some(schema) => {
                ArrowReaderMetadata::try_new(meta.metadata().clone(), options.with_schema(schema))
                    .with_context(unreadable)?
            }
            None => meta,
        };
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

    /// Whether column `c` is read typed as numbers that keep every value apart
    /// (`Some(integer)`): doubles, and integers whose row groups' statistics say they
    /// are all within 2^53 (where an `f64` holds each integer exactly).
    pub fn numbers_exact(&self, c: usize) -> Option<bool> {
        use parquet::file::statistics::Statistics;
        const EXACT: i64 = 1 << 53;
        let field = &self.meta.schema().fields()[c];
        let exact = match field.data_type() {
            DataType::Float64 => return Some(false),
            DataType::Int8 | DataType::Int16 | DataType::UInt8 | DataType::UInt16 => true,
            DataType::Int32 | DataType::UInt32 | DataType::Int64 | DataType::UInt64 => {
                let md = self.meta.metadata();
                md.file_metadata().schema_descr().num_columns() == self.meta.schema().fields().len()
                    && md
                        .row_groups()
                        .iter()
                        .all(|rg| match rg.column(c).statistics() {
                            Some(Statistics::Int32(_)) => true,
                            Some(Statistics::Int64(s)) => {
                                // An unsigned 64-bit column is stored as i64 bits.
                                let unsigned = matches!(field.data_type(), DataType::UInt64);
                                match (s.min_opt(), s.max_opt()) {
                                    (Some(&lo), Some(&hi)) if unsigned => {
                                        (0..=EXACT).contains(&lo) && (0..=EXACT).contains(&hi)
                                    }
                                    (Some(&lo), Some(&hi)) => lo >= -EXACT && hi <= EXACT,
                                    _ => rg.column(c).num_values() == 0,
                                }
                            }
                            _ => false,
                        })
            }
            _ => false,
        };
        exact.then_some(true)
    }

    /// Whether column `c` is read as a dictionary ([`dictionary_schema`]).
    #[cfg(test)]
    pub fn is_dictionary(&self, c: usize) -> bool {
        matches!(
            self.meta.schema().fields()[c].data_type(),
            DataType::Dictionary(..)
        )
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
    /// Columns whose `numbers` flag is set are read as numbers where they hold them
    /// ([`ScanColumn::Numbers`]). With `pre`, whose columns are the first of `cols`,
    /// only the rows it keeps are visited, tested a batch at a time
    /// ([`Filters::keep_batch`]).
    pub fn scan<S: Send>(
        &self,
        cols: &[usize],
        numbers: &[bool],
        pre: Option<&Filters>,
        threads: usize,
        init: &(dyn Fn() -> S + Sync),
        visit: &(dyn Fn(&mut S, u32, u64, &Row) + Sync),
    ) -> anyhow::Result<Vec<S>> {
        let groups = self.starts.len() - 1;
        let per = groups.div_ceil(threads).max(1);
        let mut unique: Vec<usize> = cols.to_vec();
        unique.sort_unstable();
        unique.dedup();
        // Each asked-for column as (its place among the projected ones, typed); a column
        // asked for twice the same way is converted once.
        let wanted: Vec<(usize, bool)> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    unique.binary_search(c).unwrap(),
                    numbers.get(i).copied().unwrap_or(false),
                )
            })
            .collect();
        let mut distinct = wanted.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let slot: Vec<usize> = wanted
            .iter()
            .map(|w| distinct.binary_search(w).unwrap())
            .collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..groups)
                .step_by(per)
                .map(|a| {
                    let (unique, distinct, slot) = (&unique, &distinct, &slot);
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
                        let mut kept = Vec::new();
                        for batch in reader {
                            let batch = batch?;
                            let converted: Vec<ScanColumn> = distinct
                                .iter()
                                .map(|&(i, typed)| ScanColumn::of(batch.column(i), typed))
                                .collect::<anyhow::Result<_>>()?;
                            let columns: Vec<&ScanColumn> =
                                slot.iter().map(|&k| &converted[k]).collect();
                            let n = batch.num_rows();
                            match pre {
                                None => {
                                    for i in 0..n {
                                        visit(
                                            &mut st,
                                            (row + i) as u32,
                                            0,
                                            &Row::Cols(&columns, i),
                                        );
                                    }
                                }
                                Some(f) => {
                                    f.keep_batch(&columns, n, &mut kept);
                                    for (i, _) in kept.iter().enumerate().filter(|(_, k)| **k) {
                                        visit(
                                            &mut st,
                                            (row + i) as u32,
                                            0,
                                            &Row::Cols(&columns, i),
                                        );
                                    }
                                }
                            }
                            row += n;
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
                let texts: Vec<ScanColumn> = batch
                    .columns()
                    .iter()
                    .map(|c| ScanColumn::of(c, false))
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
