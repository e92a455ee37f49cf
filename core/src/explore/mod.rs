//! The data explorer: pages of a table file under filters and a sort, a summary of
//! each column of the rows a view keeps, and the pandas code that reproduces a view.
//!
//! It reads CSV/TSV (any delimiter the preview's sniffer finds, and decimal commas),
//! workbook sheets, Parquet, JSON and JSON Lines ([`source`]). Nothing here sends a
//! whole large file anywhere or holds one in memory: pages are at most
//! [`MAX_PAGE_ROWS`] rows, scans stream (in parallel, one part of the file a thread),
//! and what is kept between requests is row numbers (4 bytes a row) and summaries, in
//! caches of a few entries keyed by the file's path, size and modification time:
//!
//! - a view's kept rows ([`ViewSpec::filters`]) and its order (filters and sort);
//! - summaries, by filters (the unfiltered one is the one asked most);
//! - the tables themselves ([`source::open`]) with their profile (each column's kind).
//!
//! The first page of a CSV file never waits for a full scan: it comes from the row
//! index ([`csv_index::page`]) with kinds guessed from the page itself, and starts the
//! index and the profile in the background; later answers use the whole file's kinds.
//!
//! ```no_run
//! # fn demo() -> anyhow::Result<()> {
//! use sandalyst::explore::{self, PageRequest, ViewSpec};
//! let path = std::path::Path::new("orders.csv");
//! let view: ViewSpec = serde_json::from_str(r#"{"filters": [{"column": 2, "op": "values", "values": ["Centro"]}]}"#)?;
//! let page = explore::page(path, PageRequest { view: view.clone(), offset: 0, limit: 200 })?;
//! let summary = explore::summary(path, &view)?;
//! let code = explore::code(path, "input/orders.csv", &view)?;
//! println!("{} rows kept; {}", summary.kept_rows, code.sentence);
//! # Ok(()) }
//! ```

pub mod cell;
pub(crate) mod code;
mod filter;
mod json;
mod parquet;
mod save;
mod sheet;
pub mod sort;
pub mod source;
pub mod spec;
pub mod summary;
mod typed;

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::Context;
use serde::Serialize;

pub use cell::Kind;
pub use code::Code;
pub use source::Format;
pub use spec::{BadInput, Filter, FilterOp, PageRequest, SortKey, ViewSpec};
pub use summary::{Bin, ColumnSummary, Summary, Value};

use crate::artifacts::csv_index;
use crate::artifacts::table::MAX_PAGE_ROWS;
use filter::Filters;
pub use save::{save, SaveAs};
use source::{bad, FileKey, Table};

/// A page of a view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ViewPage {
    pub format: Format,
    /// CSV/TSV only.
    pub delimiter: Option<String>,
    pub decimal_comma: bool,
    /// A workbook's sheets, and the one shown.
    pub sheets: Vec<String>,
    pub sheet: Option<String>,
    pub headers: Vec<String>,
    pub kinds: Vec<Kind>,
    /// Whether `kinds` come from a sample (the first page of a CSV file not yet
    /// profiled); later pages carry the whole file's.
    pub kinds_from_sample: bool,
    /// `rows[i]` is view row `offset + i`.
    pub rows: Vec<Vec<String>>,
    /// The 0-based data row of each page row in the file.
    pub row_numbers: Vec<usize>,
    pub offset: usize,
    /// Data rows in the file; `None` while a large CSV file is being counted.
    pub total_rows: Option<usize>,
    /// Rows the view keeps.
    pub kept_rows: Option<usize>,
    /// `[row in page, column]` of cells a spreadsheet would run as a formula.
    pub formulas: Vec<[usize; 2]>,
    pub truncated_cells: usize,
    pub dropped_cells: usize,
}

fn format_of(path: &Path) -> anyhow::Result<Format> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    Format::of(&name).ok_or_else(|| {
        bad(format!(
            "{name} is not a table the explorer reads; it reads CSV, TSV, Excel and ODS workbooks, Parquet, JSON and JSON Lines"
        ))
    })
}

/// One cached result: computed once, or the error it gave.
type Slot<V> = Arc<OnceLock<Result<V, String>>>;

/// Cached results, a few of each, oldest dropped first. Each is computed once:
/// concurrent asks for the same one wait for it.
struct Lru<K, V> {
    max: usize,
    all: Mutex<VecDeque<(K, Slot<V>)>>,
}

impl<K: PartialEq + Clone, V: Clone> Lru<K, V> {
    const fn new(max: usize) -> Self {
        Lru {
            max,
            all: Mutex::new(VecDeque::new()),
        }
    }
    fn get(&self, k: &K, make: impl FnOnce() -> anyhow::Result<V>) -> anyhow::Result<V> {
        let slot = {
            let mut all = self.all.lock().unwrap();
            match all.iter().position(|(c, _)| c == k) {
                Some(i) => {
                    let e = all.remove(i).unwrap();
                    let s = e.1.clone();
                    all.push_back(e);
                    s
                }
                None => {
                    if all.len() >= self.max {
                        all.pop_front();
                    }
                    let s = Arc::new(OnceLock::new());
                    all.push_back((k.clone(), s.clone()));
                    s
                }
            }
        };
        match slot.get_or_init(|| make().map_err(|e| source::kept_error(&e))) {
            Ok(v) => Ok(v.clone()),
            Err(e) => {
                self.all
                    .lock()
                    .unwrap()
                    .retain(|(_, s)| !Arc::ptr_eq(s, &slot));
                Err(source::restored_error(e))
            }
        }
    }
    fn clear(&self) {
        self.all.lock().unwrap().clear();
    }
}

/// Forget cached views and summaries (and with `tables`, the open tables and their
/// profiles; the CSV row index stays): for benchmarks that time a cold request.
pub fn forget(tables: bool) {
    ROWS.clear();
    ORDERS.clear();
    SUMMARIES.clear();
    if tables {
        source::forget_tables();
    }
}

/// The cache key of a view's rows: the file, the sheet, and the filters (and sort).
type ViewKey = (FileKey, Option<String>, String);

fn view_key(t: &Table, what: &impl Serialize) -> ViewKey {
    (
        t.key.clone(),
        t.sheet.clone(),
        serde_json::to_string(what).unwrap_or_default(),
    )
}

/// Kept rows of the last few filter lists (in file order).
static ROWS: Lru<ViewKey, Arc<Vec<u32>>> = Lru::new(6);
/// Orders of the last few (filters, sort).
static ORDERS: Lru<ViewKey, Arc<Vec<u32>>> = Lru::new(4);
static SUMMARIES: Lru<ViewKey, Arc<Summary>> = Lru::new(6);

/// The kinds of `t`'s columns, and the view checked against them.
fn checked(t: &Table, view: &ViewSpec) -> anyhow::Result<Arc<source::Profile>> {
    let profile = t.profile()?;
    view.check(&t.headers, &profile.kinds, t.decimal_comma)
        .map_err(anyhow::Error::new)?;
    Ok(profile)
}

/// The rows the view keeps, in its order; `None` for every row in file order.
fn view_rows(t: &Table, view: &ViewSpec) -> anyhow::Result<Option<Arc<Vec<u32>>>> {
    if view.filters.is_empty() && view.sort.is_empty() {
        return Ok(None);
    }
    let profile = checked(t, view)?;
    let filters = Filters::new(&view.filters, &profile.kinds, t.text_na, t.decimal_comma);
    if view.sort.is_empty() {
        let k = view_key(t, &view.filters);
        return ROWS
            .get(&k, || kept_rows(t, &filters).map(Arc::new))
            .map(Some);
    }
    let k = view_key(t, &(&view.filters, &view.sort));
    ORDERS
        .get(&k, || {
            let readers: Vec<sort::KeyReader> = view
                .sort
                .iter()
                .map(|s| sort::KeyReader {
                    kind: profile.kinds[s.column],
                    text_na: t.text_na,
                    decimal_comma: t.decimal_comma,
                })
                .collect();
            let base = filters.columns().len();
            let cols: Vec<usize> = view.sort.iter().map(|s| s.column).collect();
            let typed: Vec<bool> = readers.iter().map(sort::KeyReader::numbers).collect();
            let parts = t.scan_kept(
                &filters,
                &cols,
                &typed,
                || {
                    (
                        Vec::<u32>::new(),
                        readers.iter().map(|r| r.empty()).collect::<Vec<_>>(),
                    )
                },
                |(rows, keys), row, _, r| {
                    rows.push(row);
                    for (i, (k, rd)) in keys.iter_mut().zip(&readers).enumerate() {
                        rd.push(k, r, base + i);
                    }
                },
            )?;
            let mut rows = Vec::new();
            let mut columns: Vec<Vec<sort::KeyColumn>> =
                (0..readers.len()).map(|_| Vec::new()).collect();
            for (r, ks) in parts {
                rows.extend(r);
                for (c, k) in columns.iter_mut().zip(ks) {
                    c.push(k);
                }
            }
            let keys: Vec<(sort::KeyColumn, SortKey)> = columns
                .into_iter()
                .map(sort::concat)
                .zip(view.sort.iter().copied())
                .collect();
            let order = sort::order(&keys, rows.len(), source::threads());
            Ok(Arc::new(
                order.into_iter().map(|i| rows[i as usize]).collect(),
            ))
        })
        .map(Some)
}

fn kept_rows(t: &Table, filters: &Filters) -> anyhow::Result<Vec<u32>> {
    let parts = t.scan_kept(filters, &[], &[], Vec::<u32>::new, |rows, row, _, _| {
        rows.push(row)
    })?;
    Ok(parts.concat())
}

/// Files whose profile has been started in the background (a few, so a file is not
/// profiled twice at once while its first pages are read).
fn started() -> &'static Mutex<VecDeque<FileKey>> {
    static S: OnceLock<Mutex<VecDeque<FileKey>>> = OnceLock::new();
    S.get_or_init(Default::default)
}

/// The table of `path` if it is open and profiled, without waiting.
fn profiled(path: &Path, format: Format) -> Option<(Arc<Table>, Arc<source::Profile>)> {
    let idx_ready = csv_index::is_indexed(path);
    if !idx_ready {
        return None;
    }
    let t = source::open(path, format, None).ok()?;
    let p = t.profile_if_known()?;
    Some((t, p))
}

/// A page of the view `req.view` of the table file `path`.
pub fn page(path: &Path, req: PageRequest) -> anyhow::Result<ViewPage> {
    let format = format_of(path)?;
    req.view.check_shape().map_err(anyhow::Error::new)?;
    let limit = req.limit.min(MAX_PAGE_ROWS);
    let plain = req.view.filters.is_empty() && req.view.sort.is_empty();
    if format.is_text() && plain {
        return first_pages(path, format, req.offset, limit);
    }
    let t = source::open(path, format, req.view.sheet.as_deref())?;
    let rows = view_rows(&t, &req.view)?;
    let kept = rows.as_ref().map_or(t.total_rows, |r| r.len());
    let end = (req.offset + limit).min(kept);
    let numbers: Vec<u32> = match &rows {
        Some(r) => r.get(req.offset..end).unwrap_or_default().to_vec(),
        None => (req.offset.min(end) as u32..end as u32).collect(),
    };
    let (cells, truncated, dropped) = t.fetch(&numbers)?;
    let profile = t.profile()?;
    Ok(finish_page(
        &t,
        profile.kinds.clone(),
        false,
        cells,
        numbers.into_iter().map(|n| n as usize).collect(),
        req.offset,
        Some(t.total_rows),
        Some(kept),
        truncated,
        dropped,
    ))
}

#[allow(clippy::too_many_arguments)]
fn finish_page(
    t: &Table,
    kinds: Vec<Kind>,
    kinds_from_sample: bool,
    rows: Vec<Vec<String>>,
    row_numbers: Vec<usize>,
    offset: usize,
    total_rows: Option<usize>,
    kept_rows: Option<usize>,
    truncated_cells: usize,
    dropped_cells: usize,
) -> ViewPage {
    let formulas = formulas(&rows, t.decimal_comma);
    ViewPage {
        format: t.format,
        delimiter: t.delimiter.map(String::from),
        decimal_comma: t.decimal_comma,
        sheets: t.sheets.clone(),
        sheet: t.sheet.clone(),
        headers: t.headers.clone(),
        kinds,
        kinds_from_sample,
        rows,
        row_numbers,
        offset,
        total_rows,
        kept_rows,
        formulas,
        truncated_cells,
        dropped_cells,
    }
}

fn formulas(rows: &[Vec<String>], decimal_comma: bool) -> Vec<[usize; 2]> {
    let mut out = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            if cell::is_formula(v, decimal_comma) {
                out.push([r, c]);
            }
        }
    }
    out
}

/// Unfiltered, unsorted pages of a CSV file: from the row index, which a first page
/// does not wait for; kinds from the profile once it is known, else from the page.
fn first_pages(
    path: &Path,
    format: Format,
    offset: usize,
    limit: usize,
) -> anyhow::Result<ViewPage> {
    let p = csv_index::page(path, offset, limit)?;
    let known = profiled(path, format);
    if known.is_none() {
        start_profile(path, format);
    }
    let width = p.headers.len();
    let (kinds, decimal_comma, from_sample) = match &known {
        Some((t, prof)) => (prof.kinds.clone(), t.decimal_comma, false),
        None => {
            let dc = source::decimal_comma(p.delimiter as u8, &p.rows, width);
            let mut acc = vec![cell::KindAcc::default(); width];
            for row in &p.rows {
                for (k, v) in acc.iter_mut().zip(row) {
                    if !cell::is_missing(Some(v.as_bytes()), true) {
                        k.push(v.as_bytes(), dc);
                    }
                }
            }
            (acc.iter().map(cell::KindAcc::kind).collect(), dc, true)
        }
    };
    let n = p.rows.len();
    Ok(ViewPage {
        format,
        delimiter: Some(p.delimiter.to_string()),
        decimal_comma,
        sheets: Vec::new(),
        sheet: None,
        formulas: formulas(&p.rows, decimal_comma),
        headers: p.headers,
        kinds,
        kinds_from_sample: from_sample,
        rows: p.rows,
        row_numbers: (offset..offset + n).collect(),
        offset,
        total_rows: p.total_rows,
        kept_rows: p.total_rows,
        truncated_cells: p.truncated_cells,
        dropped_cells: p.dropped_cells,
    })
}

/// Profile `path` in the background (once): after its index, so that filters and
/// sorts asked for later find the kinds ready.
fn start_profile(path: &Path, format: Format) {
    let Ok(key) = source::file_key(path) else {
        return;
    };
    {
        let mut s = started().lock().unwrap();
        if s.contains(&key) {
            return;
        }
        if s.len() >= 16 {
            s.pop_front();
        }
        s.push_back(key);
    }
    let path = path.to_path_buf();
    BACKGROUND.fetch_add(1, Ordering::SeqCst);
    std::thread::spawn(move || {
        if let Ok(t) = source::open(&path, format, None) {
            let _ = t.profile();
        }
        BACKGROUND.fetch_sub(1, Ordering::SeqCst);
    });
}

/// Profiles running in the background.
static BACKGROUND: AtomicUsize = AtomicUsize::new(0);

/// How many files are being indexed and profiled in the background (a benchmark waits
/// for none before it times the next request).
pub fn background_work() -> usize {
    BACKGROUND.load(Ordering::SeqCst)
}

/// The summary of the rows `view`'s filters keep (its sort does not matter).
pub fn summary(path: &Path, view: &ViewSpec) -> anyhow::Result<Summary> {
    let format = format_of(path)?;
    view.check_shape().map_err(anyhow::Error::new)?;
    let t = source::open(path, format, view.sheet.as_deref())?;
    let kinds = if view.filters.is_empty() {
        None
    } else {
        Some(checked(t.as_ref(), view)?.kinds.clone())
    };
    let k = view_key(&t, &view.filters);
    SUMMARIES
        .get(&k, || {
            let filters = match &kinds {
                Some(k) => Filters::new(&view.filters, k, t.text_na, t.decimal_comma),
                None => Filters::new(&[], &[], t.text_na, t.decimal_comma),
            };
            summary::summarize(&t, &filters).map(Arc::new)
        })
        .map(|s| (*s).clone())
}

/// The view in words and as pandas code; `python_path` is where the file is in the
/// sandbox's working folder (`input/orders.csv`).
pub fn code(path: &Path, python_path: &str, view: &ViewSpec) -> anyhow::Result<Code> {
    let format = format_of(path)?;
    view.check_shape().map_err(anyhow::Error::new)?;
    let t = source::open(path, format, view.sheet.as_deref())?;
    let profile = checked(&t, view)?;
    let kept = match view_rows(
        &t,
        &ViewSpec {
            sort: Vec::new(),
            ..view.clone()
        },
    )? {
        Some(r) => r.len(),
        None => t.total_rows,
    };
    Ok(code::write(&t, &profile, python_path, view, kept))
}

/// The kept rows of a view, in order, as the explorer pages them (for tests that compare
/// them with what other tools keep).
pub fn view_row_numbers(path: &Path, view: &ViewSpec) -> anyhow::Result<Vec<usize>> {
    let format = format_of(path)?;
    let t = source::open(path, format, view.sheet.as_deref())
        .with_context(|| format!("cannot open {}", path.display()))?;
    Ok(match view_rows(&t, view)? {
        Some(r) => r.iter().map(|&n| n as usize).collect(),
        None => (0..t.total_rows).collect(),
    })
}

#[cfg(test)]
mod tests;
