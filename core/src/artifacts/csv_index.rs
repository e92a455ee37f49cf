//! Pages anywhere in a large CSV file, fast: a row index built once per file.
//!
//! [`table::preview_csv`] reads from the start of the file up to the page, which is
//! right for the first page and too slow for row 900,000 of a million-row file that a
//! user scrolls through. This module keeps, per file (path, size and modification
//! time), the byte offset of every [`STRIDE`]th data row; a page then seeks to the
//! nearest one before it and parses at most `STRIDE + limit` records.
//!
//! The first page always comes from [`table::preview_csv`] (delimiter sniffing, BOM,
//! bounds) and never waits for the index: asking for it starts the index in a
//! background thread, and pages served from the index carry the exact row count. Later
//! pages reuse the first page's delimiter and headers. Records larger than
//! [`table::MAX_RECORD_BYTES`] stop the index as they stop the preview, and cells are
//! cut and columns dropped by the same limits.
//!
//! [`sorted_page`] pages the file ordered by one column. The sort keeps one key and
//! the byte offset of each row (not the rows), so memory is a few tens of bytes a row;
//! each page then seeks to its rows.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use anyhow::{bail, Context};
use csv::{ByteRecord, ReaderBuilder};

use super::table::{self, CsvPage, MAX_CELL_CHARS, MAX_COLUMNS, MAX_PAGE_ROWS, MAX_RECORD_BYTES};

/// One checkpoint every this many data rows.
pub const STRIDE: usize = 1024;
/// Indexes kept in memory at once (each is 8 bytes per STRIDE rows).
const MAX_INDEXES: usize = 16;

struct Index {
    delimiter: u8,
    headers: Vec<String>,
    /// Byte offset of data row `k * STRIDE`.
    checkpoints: Vec<u64>,
    total_rows: usize,
}

type Key = (PathBuf, u64, Option<SystemTime>);
/// An index being built or built; concurrent callers wait on the same build.
type Slot = Arc<OnceLock<Result<Arc<Index>, String>>>;

/// The first page of a file not yet indexed counts its rows only up to this size
/// (a few milliseconds); the index counts the rest in the background.
const COUNT_FIRST_PAGE_UP_TO: u64 = 1 << 20;

fn cache() -> &'static Mutex<HashMap<Key, Slot>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Slot>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

fn key(path: &Path) -> anyhow::Result<Key> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok((path.to_path_buf(), meta.len(), meta.modified().ok()))
}

/// Counts the bytes of the record being read, so a huge one is refused.
struct Capped<R> {
    inner: R,
    since_record: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.since_record > MAX_RECORD_BYTES {
            return Err(std::io::Error::other("record too large"));
        }
        let n = self.inner.read(buf)?;
        self.since_record += n as u64;
        Ok(n)
    }
}

impl<R: Seek> Seek for Capped<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// `buffer`: large for reading on, small for reading one row after each seek (a seek
/// drops what is buffered).
fn reader(
    path: &Path,
    delimiter: u8,
    buffer: usize,
) -> anyhow::Result<csv::Reader<Capped<BufReader<File>>>> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(Capped {
            inner: BufReader::with_capacity(buffer, file),
            since_record: 0,
        }))
}

fn build(path: &Path, first: &CsvPage) -> anyhow::Result<Index> {
    let delimiter = first.delimiter as u8;
    let mut rdr = reader(path, delimiter, 256 << 10)?;
    let mut record = ByteRecord::new();
    let mut checkpoints = Vec::new();
    let mut row = 0usize; // data rows seen
    let mut header_done = false;
    loop {
        rdr.get_mut().since_record = 0;
        let start = rdr.position().byte();
        let more = rdr.read_byte_record(&mut record).with_context(|| {
            format!(
                "{}: row {} cannot be read or is too large",
                path.display(),
                row + 1
            )
        })?;
        if !more {
            break;
        }
        if !header_done {
            header_done = true;
            continue;
        }
        if row.is_multiple_of(STRIDE) {
            checkpoints.push(start);
        }
        row += 1;
    }
    Ok(Index {
        delimiter,
        headers: first.headers.clone(),
        checkpoints,
        total_rows: row,
    })
}

fn cells(record: &ByteRecord, page: &mut CsvPage) -> Vec<String> {
    page.dropped_cells += record.len().saturating_sub(MAX_COLUMNS);
    record
        .iter()
        .take(MAX_COLUMNS)
        .map(|c| {
            let text = String::from_utf8_lossy(c);
            if text.len() > MAX_CELL_CHARS && text.chars().count() > MAX_CELL_CHARS {
                page.truncated_cells += 1;
                let mut t: String = text.chars().take(MAX_CELL_CHARS).collect();
                t.push('…');
                t
            } else {
                text.into_owned()
            }
        })
        .collect()
}

/// The slot of `path`'s index, and whether this call created it.
fn slot(path: &Path) -> anyhow::Result<(Slot, bool)> {
    let k = key(path)?;
    let mut c = cache().lock().unwrap();
    if let Some(s) = c.get(&k) {
        return Ok((s.clone(), false));
    }
    if c.len() >= MAX_INDEXES {
        c.clear();
    }
    let s = Slot::default();
    c.insert(k, s.clone());
    Ok((s, true))
}

fn fill(slot: &Slot, path: &Path) -> anyhow::Result<Arc<Index>> {
    let built = slot.get_or_init(|| {
        table::preview_csv_counting(path, 0, 1, 0)
            .and_then(|first| build(path, &first))
            .map(Arc::new)
            .map_err(|e| format!("{e:#}"))
    });
    built.clone().map_err(anyhow::Error::msg)
}

/// Build (or find, or wait for) the index of `path`: the first call for a file reads
/// it once to the end; later calls are served from memory.
fn index(path: &Path) -> anyhow::Result<Arc<Index>> {
    let (s, _) = slot(path)?;
    fill(&s, path)
}

/// Data rows `offset..offset + limit` (limit capped at [`MAX_PAGE_ROWS`]), with the
/// file's total row count once it is known. Pages near the start come straight from
/// [`table::preview_csv`] while the index is built in the background.
pub fn page(path: &Path, offset: usize, limit: usize) -> anyhow::Result<CsvPage> {
    let limit = limit.min(MAX_PAGE_ROWS);
    let (s, new) = slot(path)?;
    let idx = match s.get() {
        Some(built) => built.clone().map_err(anyhow::Error::msg)?,
        None if offset + limit <= STRIDE => {
            if new {
                let path = path.to_path_buf();
                std::thread::spawn(move || fill(&s, &path));
            }
            return table::preview_csv_counting(path, offset, limit, COUNT_FIRST_PAGE_UP_TO);
        }
        None => fill(&s, path)?,
    };
    let mut page = empty_page(&idx, offset);
    if offset >= idx.total_rows {
        return Ok(page);
    }
    let cp = offset / STRIDE;
    let mut rdr = reader(path, idx.delimiter, 256 << 10)?;
    let mut pos = csv::Position::new();
    pos.set_byte(idx.checkpoints[cp]);
    rdr.seek(pos)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut record = ByteRecord::new();
    let mut row = cp * STRIDE;
    let mut bytes = 0usize;
    while page.rows.len() < limit {
        rdr.get_mut().since_record = 0;
        if !rdr
            .read_byte_record(&mut record)
            .with_context(|| format!("{}: row {} cannot be read", path.display(), row + 1))?
        {
            break;
        }
        if row >= offset {
            bytes += record.as_slice().len();
            let r = cells(&record, &mut page);
            page.rows.push(r);
            if bytes >= table::MAX_PAGE_BYTES {
                page.stopped_early = page.rows.len() < limit;
                break;
            }
        }
        row += 1;
    }
    Ok(page)
}

fn empty_page(idx: &Index, offset: usize) -> CsvPage {
    CsvPage {
        headers: idx.headers.clone(),
        rows: Vec::new(),
        offset,
        total_rows: Some(idx.total_rows),
        truncated_cells: 0,
        dropped_cells: 0,
        stopped_early: false,
        delimiter: idx.delimiter as char,
    }
}

/// Build the index of `path` now, or wait for the build under way; the row count.
pub fn warm(path: &Path) -> anyhow::Result<usize> {
    if std::fs::metadata(path)?.len() == 0 {
        bail!("{} is empty", path.display());
    }
    Ok(index(path)?.total_rows)
}

/// An order of a table's rows: by the values of column `column` (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
pub struct SortBy {
    pub column: usize,
    #[serde(default)]
    pub descending: bool,
}

/// One row's sort key. Text is a range of [`Keys::text`] so that a million keys are
/// two allocations, not a million.
#[derive(Clone, Copy)]
enum SortKey {
    Number(f64),
    Text { start: usize, len: u32 },
    Missing,
}

struct Keys {
    keys: Vec<(SortKey, u64)>,
    text: Vec<u8>,
}

/// Text longer than this is compared on its first this many bytes.
const MAX_KEY_BYTES: usize = 256;

impl Keys {
    fn push(&mut self, field: Option<&[u8]>, offset: u64) {
        let key = match field.map(|f| f.trim_ascii()) {
            None | Some(b"") => SortKey::Missing,
            Some(f) => match std::str::from_utf8(f)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
            {
                Some(n) if n.is_nan() => SortKey::Missing,
                Some(n) => SortKey::Number(n),
                None => {
                    let f = &f[..f.len().min(MAX_KEY_BYTES)];
                    self.text.extend_from_slice(f);
                    SortKey::Text {
                        start: self.text.len() - f.len(),
                        len: f.len() as u32,
                    }
                }
            },
        };
        self.keys.push((key, offset));
    }

    fn bytes(&self, start: usize, len: u32) -> &[u8] {
        &self.text[start..start + len as usize]
    }

    /// Numbers (by value) before text (by bytes); missing values last either way.
    fn cmp(&self, a: &SortKey, b: &SortKey, descending: bool) -> Ordering {
        use SortKey::*;
        let flip = |o: Ordering| if descending { o.reverse() } else { o };
        match (a, b) {
            (Missing, Missing) => Ordering::Equal,
            (Missing, _) => Ordering::Greater,
            (_, Missing) => Ordering::Less,
            (Number(x), Number(y)) => flip(x.total_cmp(y)),
            (Number(_), Text { .. }) => flip(Ordering::Less),
            (Text { .. }, Number(_)) => flip(Ordering::Greater),
            (Text { start: s, len: l }, Text { start: t, len: m }) => {
                flip(self.bytes(*s, *l).cmp(self.bytes(*t, *m)))
            }
        }
    }
}

/// The byte offsets of the data rows of `path`, in `by`'s order (stable: equal keys
/// keep the file's order).
fn sort_offsets(path: &Path, idx: &Index, by: SortBy) -> anyhow::Result<Vec<u64>> {
    let mut rdr = reader(path, idx.delimiter, 256 << 10)?;
    let mut pos = csv::Position::new();
    pos.set_byte(idx.checkpoints.first().copied().unwrap_or(0));
    rdr.seek(pos)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut keys = Keys {
        keys: Vec::with_capacity(idx.total_rows),
        text: Vec::new(),
    };
    let mut record = ByteRecord::new();
    while keys.keys.len() < idx.total_rows {
        rdr.get_mut().since_record = 0;
        let start = rdr.position().byte();
        if !rdr
            .read_byte_record(&mut record)
            .with_context(|| format!("cannot read {}", path.display()))?
        {
            break;
        }
        keys.push(record.get(by.column), start);
    }
    let mut order = std::mem::take(&mut keys.keys);
    order.sort_by(|a, b| keys.cmp(&a.0, &b.0, by.descending));
    Ok(order.into_iter().map(|(_, offset)| offset).collect())
}

/// A file and an order, with the file's row offsets in that order (computed once:
/// pages asked for while a sort runs wait for it).
type Sorted = ((Key, SortBy), Arc<OnceLock<Result<Arc<Vec<u64>>, String>>>);

/// The last few sorts (8 bytes a row each).
fn sorts() -> &'static Mutex<Vec<Sorted>> {
    static SORTS: OnceLock<Mutex<Vec<Sorted>>> = OnceLock::new();
    SORTS.get_or_init(Default::default)
}
const MAX_SORTS: usize = 4;

fn sorted(path: &Path, idx: &Index, by: SortBy) -> anyhow::Result<Arc<Vec<u64>>> {
    let k = (key(path)?, by);
    let slot = {
        let mut all = sorts().lock().unwrap();
        match all.iter().find(|(c, _)| *c == k) {
            Some((_, s)) => s.clone(),
            None => {
                if all.len() >= MAX_SORTS {
                    all.remove(0);
                }
                let s = Arc::new(OnceLock::new());
                all.push((k, s.clone()));
                s
            }
        }
    };
    slot.get_or_init(|| {
        sort_offsets(path, idx, by)
            .map(Arc::new)
            .map_err(|e| format!("{e:#}"))
    })
    .clone()
    .map_err(anyhow::Error::msg)
}

/// Rows `offset..offset + limit` of `path` ordered by `by` (numbers by value, then
/// text, then empty cells; ties in file order). The first call for a file and order
/// reads the file once (and indexes it if that is not done yet).
pub fn sorted_page(
    path: &Path,
    by: SortBy,
    offset: usize,
    limit: usize,
) -> anyhow::Result<CsvPage> {
    let limit = limit.min(MAX_PAGE_ROWS);
    let idx = index(path)?;
    if by.column >= idx.headers.len() {
        bail!("{} has no column {}", path.display(), by.column + 1);
    }
    let order = sorted(path, &idx, by)?;
    let mut page = empty_page(&idx, offset);
    let mut rdr = reader(path, idx.delimiter, 8 << 10)?;
    let mut record = ByteRecord::new();
    let mut bytes = 0usize;
    for &at in order.iter().skip(offset).take(limit) {
        let mut pos = csv::Position::new();
        pos.set_byte(at);
        rdr.seek(pos)
            .with_context(|| format!("cannot read {}", path.display()))?;
        rdr.get_mut().since_record = 0;
        rdr.read_byte_record(&mut record)
            .with_context(|| format!("cannot read {}", path.display()))?;
        bytes += record.as_slice().len();
        let r = cells(&record, &mut page);
        page.rows.push(r);
        if bytes >= table::MAX_PAGE_BYTES {
            page.stopped_early = page.rows.len() < limit;
            break;
        }
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn pages_anywhere_match_a_straight_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.csv");
        let mut f = std::io::BufWriter::new(File::create(&p).unwrap());
        writeln!(f, "i;text").unwrap();
        for i in 0..5000 {
            writeln!(f, "{i};\"row {i}\nwith a newline; and <b>html</b>\"").unwrap();
        }
        drop(f);
        let early = page(&p, 10, 5).unwrap();
        assert_eq!(early.rows[0][0], "10");
        assert_eq!(warm(&p).unwrap(), 5000);
        for offset in [0, 1023, 1024, 1025, 3000, 4998] {
            let fast = page(&p, offset, 7).unwrap();
            let slow = table::preview_csv(&p, offset, 7).unwrap();
            assert_eq!(fast.rows, slow.rows, "offset {offset}");
            assert_eq!(fast.headers, slow.headers);
            assert_eq!(fast.total_rows, Some(5000));
        }
        assert!(page(&p, 6000, 10).unwrap().rows.is_empty());
    }

    fn csv_file(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn column(page: &CsvPage, c: usize) -> Vec<&str> {
        page.rows
            .iter()
            .map(|r| r.get(c).map_or("", |v| v.as_str()))
            .collect()
    }

    #[test]
    fn sorts_numbers_by_value_then_text_then_missing_and_keeps_ties_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = csv_file(
            &dir,
            "s.csv",
            "id,v\na,10\nb,9\nc,\nd,apple\ne,-1.5\nf,1e3\ng,9\nh,Banana\ni\nj, 2 \nk,NaN\n",
        );
        let up = sorted_page(
            &p,
            SortBy {
                column: 1,
                descending: false,
            },
            0,
            100,
        )
        .unwrap();
        assert_eq!(
            column(&up, 0),
            ["e", "j", "b", "g", "a", "f", "h", "d", "c", "i", "k"],
            "numbers by value (not as text), text by bytes, missing last in file order"
        );
        assert_eq!(up.total_rows, Some(11));
        let down = sorted_page(
            &p,
            SortBy {
                column: 1,
                descending: true,
            },
            0,
            100,
        )
        .unwrap();
        assert_eq!(
            column(&down, 0),
            ["d", "h", "f", "a", "b", "g", "j", "e", "c", "i", "k"],
            "reversed, but ties (b, g) and missing values keep the file's order"
        );
        let page = sorted_page(
            &p,
            SortBy {
                column: 1,
                descending: false,
            },
            2,
            3,
        )
        .unwrap();
        assert_eq!(column(&page, 0), ["b", "g", "a"]);
        assert_eq!(page.offset, 2);
        let by_id = sorted_page(
            &p,
            SortBy {
                column: 0,
                descending: true,
            },
            0,
            2,
        )
        .unwrap();
        assert_eq!(column(&by_id, 0), ["k", "j"]);
        assert!(sorted_page(
            &p,
            SortBy {
                column: 5,
                descending: false
            },
            0,
            2
        )
        .is_err());
    }

    #[test]
    fn sorted_pages_of_a_big_file_with_quoted_newlines_match_a_sort_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from("k;note\n");
        for i in 0..3000u32 {
            let k = (i * 7919) % 1000;
            text.push_str(&format!("{k};\"line {i}\nsecond; line\"\n"));
        }
        let p = csv_file(&dir, "b.csv", &text);
        let mut expect: Vec<(u32, u32)> = (0..3000).map(|i| ((i * 7919) % 1000, i)).collect();
        expect.sort();
        let by = SortBy {
            column: 0,
            descending: false,
        };
        for offset in [0, 1500, 2990] {
            let page = sorted_page(&p, by, offset, 20).unwrap();
            let want: Vec<String> = expect[offset..(offset + 20).min(3000)]
                .iter()
                .map(|(_, i)| format!("line {i}\nsecond; line"))
                .collect();
            assert_eq!(column(&page, 1), want, "offset {offset}");
        }
    }

    #[test]
    fn the_first_page_does_not_wait_for_the_index_and_starts_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from("n\n");
        // Over the size up to which a first page counts its rows.
        while text.len() as u64 <= COUNT_FIRST_PAGE_UP_TO {
            text.push_str("123456789\n");
        }
        let rows = text.lines().count() - 1;
        let p = csv_file(&dir, "w.csv", &text);
        let first = page(&p, 0, 10).unwrap();
        assert_eq!(first.rows.len(), 10);
        assert_eq!(first.total_rows, None, "not counted on the way");
        let (s, new) = slot(&p).unwrap();
        assert!(!new, "the first page registered the index");
        // The background build finishes; then pages carry the count.
        assert_eq!(fill(&s, &p).unwrap().total_rows, rows);
        assert_eq!(page(&p, 0, 10).unwrap().total_rows, Some(rows));
    }
}
