//! A table file opened for the explorer, whatever its format, with the two things the
//! rest of the explorer does with it: scan some of its columns in parallel, and fetch
//! given rows for a page.
//!
//! CSV/TSV files stay on disk: the row index ([`csv_index`]) says where every 1024th row
//! starts, so a scan splits the file there into one part per thread, and the profile
//! (the first full scan) keeps where each row starts (4 bytes a row) so that any page of
//! a filtered or sorted view seeks straight to its rows. Parquet files stay on disk too
//! ([`super::parquet`]: only the columns a scan needs, row group by row group).
//! Workbook sheets and JSON files are parsed once into memory ([`Mem`], bounded by
//! their size caps) and kept in a small cache, as calamine and a JSON parser need the
//! whole document anyway.
//!
//! Tables, like everything the explorer caches, are keyed by the file's path, size and
//! modification time, so a changed file is read again.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use anyhow::{bail, Context};
use csv::{ByteRecord, ReaderBuilder};
use serde::Serialize;

use super::cell::{self, Kind, KindAcc};
use super::filter::Filters;
use super::spec::BadInput;
use crate::artifacts::csv_index::{self, Index, STRIDE};
use crate::artifacts::table::{self, MAX_COLUMNS};

/// The formats the explorer reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Csv,
    Tsv,
    Sheet,
    Parquet,
    Json,
    Jsonl,
}

impl Format {
    /// By the file's extension; `None` for a file the explorer does not read.
    pub fn of(name: &str) -> Option<Format> {
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        Some(match ext.as_str() {
            "csv" => Format::Csv,
            "tsv" | "tab" => Format::Tsv,
            "xlsx" | "xlsm" | "xls" | "xlsb" | "ods" => Format::Sheet,
            "parquet" | "pq" => Format::Parquet,
            "json" => Format::Json,
            "jsonl" | "ndjson" => Format::Jsonl,
            _ => return None,
        })
    }
    pub fn is_text(self) -> bool {
        matches!(self, Format::Csv | Format::Tsv)
    }
}

/// A file as the caches know it: path, size, modification time.
pub type FileKey = (PathBuf, u64, Option<SystemTime>);

pub fn file_key(path: &Path) -> anyhow::Result<FileKey> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if !meta.is_file() {
        bail!("{} is not a file", path.display());
    }
    Ok((path.to_path_buf(), meta.len(), meta.modified().ok()))
}

/// A table held in memory: a sheet or a JSON document. `None` is a missing cell (an
/// empty cell, a JSON null).
pub struct Mem {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
    /// Kinds known from the cells' types (a workbook's numbers and dates), if any.
    pub typed: Option<Vec<Kind>>,
}

pub enum Body {
    Csv { path: PathBuf, index: Arc<Index> },
    Mem(Arc<Mem>),
    Parquet(Arc<super::parquet::ParquetTable>),
}

/// What a full scan learnt about a table: each column's kind, and for CSV where each
/// row starts and what the code for a view must allow for.
pub struct Profile {
    pub kinds: Vec<Kind>,
    /// CSV: row `r` starts at `checkpoints[r / STRIDE] + starts[r]`; `None` when some
    /// row is over 4 GiB from its checkpoint (pages then read on from the checkpoint).
    pub starts: Option<Vec<u32>>,
    /// Some cell is blank but not empty (pandas reads it as text).
    pub blank_cells: bool,
    /// Some cell is not UTF-8.
    pub non_utf8: bool,
    /// Some row has more cells than the header.
    pub long_rows: bool,
}

pub struct Table {
    pub key: FileKey,
    pub format: Format,
    pub headers: Vec<String>,
    pub total_rows: usize,
    /// Whether text cells spelled like pandas' `na_values` are missing.
    pub text_na: bool,
    pub decimal_comma: bool,
    pub delimiter: Option<char>,
    pub sheets: Vec<String>,
    pub sheet: Option<String>,
    pub body: Body,
    profile: OnceLock<Result<Arc<Profile>, String>>,
}

/// One row of a scan, for the columns the scan asked for (`get(i)` is the `i`th of
/// them).
pub enum Row<'a> {
    Csv(&'a ByteRecord, &'a [usize]),
    Mem(&'a [Option<String>], &'a [usize]),
    Cols(&'a [&'a super::parquet::ScanColumn], usize),
}

impl Row<'_> {
    #[inline]
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        match self {
            Row::Csv(r, cols) => r.get(cols[i]),
            Row::Mem(r, cols) => r.get(cols[i]).and_then(|c| c.as_deref()).map(str::as_bytes),
            Row::Cols(cols, row) => cols[i].get(*row),
        }
    }

    /// The `i`th cell as its dictionary's values and key when the scan read a
    /// dictionary column ([`super::parquet::ScanColumn::dict`]).
    #[inline]
    pub fn dict(&self, i: usize) -> Option<(&super::parquet::Strings, u32)> {
        match self {
            Row::Cols(cols, row) => cols[i].dict(*row),
            _ => None,
        }
    }

    /// The `i`th cell as a number when the scan read it typed (`Some(None)`: missing);
    /// `None` when the cell is to be read from its text ([`Row::get`]).
    #[inline]
    pub fn number(&self, i: usize) -> Option<Option<f64>> {
        match self {
            Row::Cols(cols, row) => cols[i].number(*row),
            _ => None,
        }
    }
}

/// Threads for a full scan.
pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 16)
}

/// Tables open at once.
const MAX_TABLES: usize = 4;

type TableSlot = Arc<OnceLock<Result<Arc<Table>, String>>>;
/// Open tables: by file and sheet.
type Tables = Mutex<VecDeque<((FileKey, Option<String>), TableSlot)>>;

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(Default::default)
}

/// Close every cached table ([`super::forget`]).
pub fn forget_tables() {
    tables().lock().unwrap().clear();
}

/// Open (or find) the table of `path`: for a workbook its sheet `sheet` (the first
/// when `None`). A CSV file is indexed first if it is not yet.
pub fn open(path: &Path, format: Format, sheet: Option<&str>) -> anyhow::Result<Arc<Table>> {
    let key = file_key(path)?;
    let sheet = if format == Format::Sheet {
        sheet.map(str::to_string)
    } else {
        None
    };
    let k = (key.clone(), sheet.clone());
    let slot = {
        let mut all = tables().lock().unwrap();
        match all.iter().find(|(c, _)| *c == k) {
            Some((_, s)) => s.clone(),
            None => {
                if all.len() >= MAX_TABLES {
                    all.pop_front();
                }
                let s = TableSlot::default();
                all.push_back((k, s.clone()));
                s
            }
        }
    };
    let t = slot.get_or_init(|| {
        load(path, key, format, sheet.as_deref())
            .map(Arc::new)
            .map_err(|e| kept_error(&e))
    });
    match t {
        Ok(t) => Ok(t.clone()),
        Err(e) => {
            // Not kept: a file fixed in place (same size and time) can be tried again.
            tables()
                .lock()
                .unwrap()
                .retain(|(_, s)| !Arc::ptr_eq(s, &slot));
            Err(restored_error(e))
        }
    }
}

fn load(path: &Path, key: FileKey, format: Format, sheet: Option<&str>) -> anyhow::Result<Table> {
    let mut t = Table {
        key,
        format,
        headers: Vec::new(),
        total_rows: 0,
        text_na: true,
        decimal_comma: false,
        delimiter: None,
        sheets: Vec::new(),
        sheet: None,
        body: Body::Mem(Arc::new(Mem {
            headers: vec![],
            rows: vec![],
            typed: None,
        })),
        profile: OnceLock::new(),
    };
    match format {
        Format::Csv | Format::Tsv => {
            let index = csv_index::index(path)?;
            let sample = table::preview_csv_counting(path, 0, 1000, 0)?;
            t.headers = index.headers.clone();
            t.total_rows = index.total_rows;
            t.delimiter = Some(index.delimiter as char);
            t.decimal_comma = decimal_comma(index.delimiter, &sample.rows, t.headers.len());
            t.body = Body::Csv {
                path: path.to_path_buf(),
                index,
            };
        }
        Format::Sheet => {
            let (sheets, name, mem) = super::sheet::load(path, sheet)?;
            t.headers = mem.headers.clone();
            t.total_rows = mem.rows.len();
            t.sheets = sheets;
            t.sheet = Some(name);
            t.body = Body::Mem(mem);
        }
        Format::Json | Format::Jsonl => {
            let mem = super::json::load(path, format == Format::Jsonl)?;
            t.headers = mem.headers.clone();
            t.total_rows = mem.rows.len();
            t.text_na = false;
            t.body = Body::Mem(Arc::new(mem));
        }
        Format::Parquet => {
            let p = super::parquet::ParquetTable::open(path)?;
            t.headers = p.headers.clone();
            t.total_rows = p.total_rows;
            t.text_na = false;
            t.body = Body::Parquet(Arc::new(p));
        }
    }
    if t.total_rows > u32::MAX as usize {
        bail!(
            "{} has more than {} rows; the explorer cannot page it",
            path.display(),
            u32::MAX
        );
    }
    Ok(t)
}

/// Whether a file (not comma-delimited) writes decimals with a comma: some column of
/// the sample holds numbers only when `,` is the separator, and one of them has one
/// (`12,5`), as pandas' `decimal=","` would read them.
pub fn decimal_comma(delimiter: u8, rows: &[Vec<String>], width: usize) -> bool {
    if delimiter == b',' {
        return false;
    }
    (0..width.min(MAX_COLUMNS)).any(|c| {
        let mut with_comma = false;
        let mut present = 0;
        for r in rows {
            let Some(v) = r.get(c).map(|v| v.as_bytes()) else {
                continue;
            };
            if cell::is_missing(Some(v), true) {
                continue;
            }
            present += 1;
            if cell::number(v, true).is_none() {
                return false;
            }
            with_comma |= v.contains(&b',');
        }
        present > 0 && with_comma
    })
}

impl Table {
    /// The kinds of the columns and where rows start: a full scan the first time
    /// (concurrent callers wait for it), then from memory.
    pub fn profile(&self) -> anyhow::Result<Arc<Profile>> {
        self.profile
            .get_or_init(|| {
                self.build_profile()
                    .map(Arc::new)
                    .map_err(|e| format!("{e:#}"))
            })
            .clone()
            .map_err(anyhow::Error::msg)
    }

    /// The profile if it is done, without waiting.
    pub fn profile_if_known(&self) -> Option<Arc<Profile>> {
        self.profile.get().and_then(|p| p.as_ref().ok()).cloned()
    }

    pub fn width(&self) -> usize {
        self.headers.len().min(MAX_COLUMNS)
    }

    fn build_profile(&self) -> anyhow::Result<Profile> {
        let width = self.width();
        let cols: Vec<usize> = (0..width).collect();
        if let Body::Parquet(p) = &self.body {
            return Ok(Profile {
                kinds: p.kinds.clone(),
                starts: None,
                blank_cells: false,
                non_utf8: false,
                long_rows: false,
            });
        }
        #[derive(Default)]
        struct Acc {
            kinds: Vec<KindAcc>,
            starts: Vec<u32>,
            far: bool,
            blank: bool,
            non_utf8: bool,
            long: bool,
        }
        let dc = self.decimal_comma;
        let text_na = self.text_na;
        let checkpoints = match &self.body {
            Body::Csv { index, .. } => Some(&index.checkpoints),
            _ => None,
        };
        let parts = self.scan_with(
            &cols,
            || Acc {
                kinds: vec![KindAcc::default(); width],
                ..Default::default()
            },
            |a, row, start, r| {
                if let Some(cp) = checkpoints {
                    match u32::try_from(start - cp[row as usize / STRIDE]) {
                        Ok(d) => a.starts.push(d),
                        Err(_) => a.far = true,
                    }
                    if let Row::Csv(rec, _) = r {
                        a.long |= rec.len() > width;
                    }
                }
                for (i, k) in a.kinds.iter_mut().enumerate() {
                    let c = r.get(i);
                    if let Some(v) = c {
                        if cell::is_blank(v) {
                            a.blank = true;
                        }
                        if !v.is_ascii() && std::str::from_utf8(v).is_err() {
                            a.non_utf8 = true;
                        }
                    }
                    if !cell::is_missing(c, text_na) {
                        k.push(c.unwrap_or_default(), dc);
                    }
                }
            },
        )?;
        let mut kinds = vec![KindAcc::default(); width];
        let mut starts = Vec::new();
        let (mut far, mut blank, mut non_utf8, mut long) = (false, false, false, false);
        for a in parts {
            for (k, o) in kinds.iter_mut().zip(&a.kinds) {
                k.merge(o);
            }
            starts.extend_from_slice(&a.starts);
            far |= a.far;
            blank |= a.blank;
            non_utf8 |= a.non_utf8;
            long |= a.long;
        }
        let mut kinds: Vec<Kind> = kinds.iter().map(KindAcc::kind).collect();
        if let Body::Mem(m) = &self.body {
            if let Some(typed) = &m.typed {
                for (k, t) in kinds.iter_mut().zip(typed) {
                    if *k != Kind::Empty && *t != Kind::Text {
                        *k = *t;
                    }
                }
            }
        }
        Ok(Profile {
            kinds,
            starts: (checkpoints.is_some() && !far).then_some(starts),
            blank_cells: blank,
            non_utf8,
            long_rows: long,
        })
    }

    /// Scan columns `cols` of every row, in parallel: each thread starts with `init()`
    /// and calls `visit(state, row, byte_start, cells)` for its rows in file order; the
    /// states come back in row order (thread `i` had rows before thread `i + 1`).
    /// `byte_start` is where a CSV row starts (0 for other formats).
    pub fn scan_with<S: Send>(
        &self,
        cols: &[usize],
        init: impl Fn() -> S + Sync,
        visit: impl Fn(&mut S, u32, u64, &Row) + Sync,
    ) -> anyhow::Result<Vec<S>> {
        self.scan(cols, &[], init, visit)
    }

    /// [`Table::scan_with`] over the rows `filters` keep: each row's cells are those
    /// of [`Filters::columns`], then those of `cols` (from `filters.columns().len()`
    /// on). The filters' columns are read typed where they only compare numbers
    /// ([`Filters::numbers`]), and so are those of `cols` whose `numbers` flag is set.
    pub fn scan_kept<S: Send>(
        &self,
        filters: &Filters,
        cols: &[usize],
        numbers: &[bool],
        init: impl Fn() -> S + Sync,
        visit: impl Fn(&mut S, u32, u64, &Row) + Sync,
    ) -> anyhow::Result<Vec<S>> {
        let mut all = filters.columns().to_vec();
        all.extend_from_slice(cols);
        let mut typed = filters.numbers();
        typed.extend((0..cols.len()).map(|i| numbers.get(i).copied().unwrap_or(false)));
        if filters.is_empty() {
            return self.scan(&all, &typed, init, visit);
        }
        match &self.body {
            // Parquet tests whole batches, then visits the rows kept.
            Body::Parquet(p) => p.scan(&all, &typed, Some(filters), threads(), &init, &visit),
            _ => self.scan(&all, &typed, init, |s, row, at, r| {
                if filters.keep(r, 0) {
                    visit(s, row, at, r)
                }
            }),
        }
    }

    /// The columns' kinds as the file's schema declares them (Parquet); `None` where
    /// they are inferred from the cells.
    pub fn schema_kinds(&self) -> Option<&[Kind]> {
        match &self.body {
            Body::Parquet(p) => Some(&p.kinds),
            _ => None,
        }
    }

    /// For each column, whether a scan can read it as numbers that keep every value
    /// apart, and whether they are integers (Parquet's doubles and integers within
    /// 2^53; other formats keep text: `None`).
    pub fn numbers_exact(&self) -> Vec<Option<bool>> {
        (0..self.width())
            .map(|c| match &self.body {
                Body::Parquet(p) => p.numbers_exact(c),
                _ => None,
            })
            .collect()
    }

    /// [`Table::scan_with`], where the columns whose `numbers` flag is set may be read
    /// as numbers only ([`Row::number`]; formats that keep text ignore the flags).
    fn scan<S: Send>(
        &self,
        cols: &[usize],
        numbers: &[bool],
        init: impl Fn() -> S + Sync,
        visit: impl Fn(&mut S, u32, u64, &Row) + Sync,
    ) -> anyhow::Result<Vec<S>> {
        let n = threads();
        match &self.body {
            Body::Csv { path, index } => {
                let cps = index.checkpoints.len();
                let per = cps.div_ceil(n).max(1);
                let parts: Vec<(usize, usize)> = (0..cps)
                    .step_by(per)
                    .map(|a| (a, (a + per).min(cps)))
                    .collect();
                std::thread::scope(|s| {
                    let handles: Vec<_> = parts
                        .iter()
                        .map(|&(a, b)| {
                            let (init, visit) = (&init, &visit);
                            s.spawn(move || -> anyhow::Result<S> {
                                let mut st = init();
                                let first = a * STRIDE;
                                let end = (b * STRIDE).min(index.total_rows);
                                scan_csv(path, index, first, end, cols, &mut |row, start, r| {
                                    visit(&mut st, row, start, r)
                                })?;
                                Ok(st)
                            })
                        })
                        .collect();
                    joined(handles, &init)
                })
            }
            Body::Mem(m) => {
                let rows = m.rows.len();
                let per = rows.div_ceil(n).max(1);
                std::thread::scope(|s| {
                    let handles: Vec<_> = (0..rows)
                        .step_by(per)
                        .map(|a| {
                            let (init, visit) = (&init, &visit);
                            let m = &m;
                            s.spawn(move || {
                                let mut st = init();
                                for (r, row) in m.rows.iter().enumerate().skip(a).take(per) {
                                    visit(&mut st, r as u32, 0, &Row::Mem(row, cols));
                                }
                                st
                            })
                        })
                        .collect();
                    let mut out: Vec<S> = handles.into_iter().map(|h| h.join().unwrap()).collect();
                    if out.is_empty() {
                        out.push(init());
                    }
                    Ok(out)
                })
            }
            Body::Parquet(p) => p.scan(cols, numbers, None, n, &init, &visit),
        }
    }

    /// The cells of rows `rows` (any order, each a data row number), cut for a page;
    /// `(rows, truncated cells, dropped cells)`.
    pub fn fetch(&self, rows: &[u32]) -> anyhow::Result<(Vec<Vec<String>>, usize, usize)> {
        let mut truncated = 0;
        let mut dropped = 0;
        let width = self.width();
        let out = match &self.body {
            Body::Mem(m) => rows
                .iter()
                .map(|&r| {
                    let row = &m.rows[r as usize];
                    dropped += row.len().saturating_sub(width);
                    row.iter()
                        .take(width)
                        .map(|c| {
                            table::cell_text(c.as_deref().unwrap_or("").as_bytes(), &mut truncated)
                        })
                        .collect()
                })
                .collect(),
            Body::Parquet(p) => p.fetch(rows, &mut truncated)?,
            Body::Csv { path, index } => {
                let profile = self.profile()?;
                let mut file = BufReader::with_capacity(
                    8 << 10,
                    File::open(path).with_context(|| format!("cannot read {}", path.display()))?,
                );
                let mut record = ByteRecord::new();
                let mut out = Vec::with_capacity(rows.len());
                for &r in rows {
                    let r = r as usize;
                    let cp = index.checkpoints[r / STRIDE];
                    let (at, skip) = match &profile.starts {
                        Some(s) => (cp + u64::from(s[r]), 0),
                        None => (cp, r % STRIDE),
                    };
                    file.seek(SeekFrom::Start(at))?;
                    let mut rdr = builder(index.delimiter).from_reader(&mut file);
                    for _ in 0..=skip {
                        if !rdr.read_byte_record(&mut record)? {
                            bail!("{} changed while it was read; reload it", path.display());
                        }
                    }
                    dropped += record.len().saturating_sub(width);
                    out.push(
                        record
                            .iter()
                            .take(width)
                            .map(|c| table::cell_text(c, &mut truncated))
                            .collect(),
                    );
                }
                out
            }
        };
        Ok((out, truncated, dropped))
    }
}

/// The states of a parallel scan's threads, in order (one fresh state when the scan
/// had no part); the first error of any thread.
pub(super) fn joined<S>(
    handles: Vec<std::thread::ScopedJoinHandle<'_, anyhow::Result<S>>>,
    init: impl Fn() -> S,
) -> anyhow::Result<Vec<S>> {
    let mut out = Vec::new();
    for h in handles {
        out.push(
            h.join()
                .map_err(|_| anyhow::anyhow!("a scan thread failed"))??,
        );
    }
    if out.is_empty() {
        out.push(init());
    }
    Ok(out)
}

fn builder(delimiter: u8) -> ReaderBuilder {
    let mut b = ReaderBuilder::new();
    b.delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .buffer_capacity(8 << 10);
    b
}

/// Rows `first..end` of an indexed CSV file (`first` a multiple of STRIDE).
fn scan_csv(
    path: &Path,
    index: &Index,
    first: usize,
    end: usize,
    cols: &[usize],
    visit: &mut dyn FnMut(u32, u64, &Row),
) -> anyhow::Result<()> {
    if first >= end {
        return Ok(());
    }
    let at = index.checkpoints[first / STRIDE];
    let mut file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    file.seek(SeekFrom::Start(at))?;
    let mut rdr = ReaderBuilder::new()
        .delimiter(index.delimiter)
        .has_headers(false)
        .flexible(true)
        .buffer_capacity(1 << 20)
        .from_reader(file);
    let mut record = ByteRecord::new();
    for row in first..end {
        let start = at + rdr.position().byte();
        if !rdr
            .read_byte_record(&mut record)
            .with_context(|| format!("{}: row {} cannot be read", path.display(), row + 1))?
        {
            bail!("{} changed while it was read; reload it", path.display());
        }
        visit(row as u32, start, &Row::Csv(&record, cols));
    }
    Ok(())
}

/// A bad-input error as an anyhow error (the API reads its code from the type).
pub fn bad(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(BadInput::new(message))
}

const BAD: &str = "\u{0}bad:";

/// An error as a cache keeps it (text), a bad request marked so it stays one.
pub fn kept_error(e: &anyhow::Error) -> String {
    match e.downcast_ref::<BadInput>() {
        Some(b) => format!("{BAD}{}", b.0),
        None => format!("{e:#}"),
    }
}

/// The error a cache kept, as [`kept_error`] wrote it.
pub fn restored_error(e: &str) -> anyhow::Error {
    match e.strip_prefix(BAD) {
        Some(m) => bad(m),
        None => anyhow::anyhow!("{e}"),
    }
}
