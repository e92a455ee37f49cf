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
//! cut and columns dropped by the same limits. The index only looks for where records
//! end ([`Records`], which agrees with the csv crate byte for byte), so it reads the file
//! far faster than parsing it would.
//!
//! Sorted and filtered views of a table are the data explorer's (`explore`).

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

/// Where a file's rows are: every [`STRIDE`]th row's byte offset, and the row count.
/// The data explorer splits its full scans at the checkpoints.
pub struct Index {
    pub delimiter: u8,
    pub headers: Vec<String>,
    /// Byte offset of data row `k * STRIDE`.
    pub checkpoints: Vec<u64>,
    pub total_rows: usize,
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

/// The csv reader's settings, which the index's record scan ([`Records`]) follows.
fn builder(delimiter: u8) -> ReaderBuilder {
    let mut b = ReaderBuilder::new();
    b.delimiter(delimiter).has_headers(false).flexible(true);
    b
}

/// `buffer`: large for reading on, small for reading one row after each seek (a seek
/// drops what is buffered).
fn reader(
    path: &Path,
    delimiter: u8,
    buffer: usize,
) -> anyhow::Result<csv::Reader<Capped<BufReader<File>>>> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(builder(delimiter).from_reader(Capped {
        inner: BufReader::with_capacity(buffer, file),
        since_record: 0,
    }))
}

fn build(path: &Path, first: &CsvPage) -> anyhow::Result<Index> {
    let delimiter = first.delimiter as u8;
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut checkpoints = Vec::new();
    // Record 0 is the header; data row `i - 1` is record `i`.
    let records = scan_records(file, delimiter, MAX_RECORD_BYTES, 256 << 10, |i, start| {
        if i > 0 && (i - 1).is_multiple_of(STRIDE) {
            checkpoints.push(start);
        }
    })
    .map_err(|e| match e {
        ScanError::Io(e) => {
            anyhow::Error::new(e).context(format!("cannot read {}", path.display()))
        }
        // Rows count from 1 and the header is row 0, as in table::preview_csv's messages.
        ScanError::TooLarge { record } => anyhow::anyhow!(
            "{}: row {record} is larger than {} MiB; the file cannot be indexed past it",
            path.display(),
            MAX_RECORD_BYTES >> 20
        ),
    })?;
    Ok(Index {
        delimiter,
        headers: first.headers.clone(),
        checkpoints,
        total_rows: records.saturating_sub(1),
    })
}

/// Where a CSV parser is between two bytes (csv-core's states, those that matter for
/// where records end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    /// Between records: line ends here are blank lines, which csv skips.
    StartRecord,
    /// Just after a delimiter: a quote here opens a quoted field.
    StartField,
    /// In an unquoted field: a quote is a plain byte.
    InField,
    /// In a quoted field: delimiters and line ends are plain bytes.
    Quoted,
    /// After a quote in a quoted field: another quote is an escaped `"`; anything else
    /// ends the quoted part (and `"ab"cd` goes on as an unquoted field).
    QuoteInQuoted,
}

/// Splits CSV bytes into records exactly where the csv crate's reader (set up as in
/// [`reader`]: `"` quotes, doubled to escape, no comments) does, without splitting
/// records into fields: `memchr` jumps from one quote or line end to the next, which
/// is several times faster than parsing. As csv does, `\r`, `\n` and `\r\n` end a
/// record, blank lines are skipped, and a last record needs no line end.
struct Records {
    delimiter: u8,
    /// A record longer than this (from its start) stops the scan.
    cap: u64,
    scan: Scan,
    /// Bytes seen.
    pos: u64,
    /// Where the record being read starts: just after the previous record's last byte,
    /// which is where csv's `position()` is then (so blank lines, and the `\n` of a
    /// `\r\n`, count as the start of the next record).
    start: u64,
    /// Records ended so far.
    count: usize,
}

/// The scan stopped: the input could not be read, or record `record` (0-based,
/// the header is 0) is longer than the cap.
#[derive(Debug)]
enum ScanError {
    Io(std::io::Error),
    TooLarge { record: usize },
}

impl Records {
    fn new(delimiter: u8, cap: u64) -> Records {
        Records {
            delimiter,
            cap,
            scan: Scan::StartRecord,
            pos: 0,
            start: 0,
            count: 0,
        }
    }

    /// The next bytes of the input; `found(i, start)` for each record that ends in them.
    fn feed(&mut self, chunk: &[u8], found: &mut impl FnMut(usize, u64)) -> Result<(), ScanError> {
        let d = self.delimiter;
        let mut i = 0;
        while i < chunk.len() {
            match self.scan {
                Scan::StartRecord => {
                    if matches!(chunk[i], b'\r' | b'\n') {
                        i += 1;
                    } else {
                        self.scan = Scan::StartField;
                    }
                }
                Scan::StartField | Scan::InField => {
                    // Delimiters between here and the next quote or line end only matter
                    // for a quote right after one.
                    let rest = &chunk[i..];
                    match memchr::memchr3(b'"', b'\n', b'\r', rest) {
                        None => {
                            self.scan = if rest[rest.len() - 1] == d {
                                Scan::StartField
                            } else {
                                Scan::InField
                            };
                            i = chunk.len();
                        }
                        Some(k) => {
                            let field_start = match k {
                                0 => self.scan == Scan::StartField,
                                _ => rest[k - 1] == d,
                            };
                            i += k + 1;
                            if rest[k] != b'"' {
                                self.end(self.pos + i as u64, found)?;
                            } else if field_start {
                                self.scan = Scan::Quoted;
                            } else {
                                self.scan = Scan::InField;
                            }
                        }
                    }
                }
                Scan::Quoted => match memchr::memchr(b'"', &chunk[i..]) {
                    None => i = chunk.len(),
                    Some(k) => {
                        i += k + 1;
                        self.scan = Scan::QuoteInQuoted;
                    }
                },
                Scan::QuoteInQuoted => {
                    let c = chunk[i];
                    i += 1;
                    self.scan = if c == b'"' {
                        Scan::Quoted
                    } else if c == d {
                        Scan::StartField
                    } else if c == b'\r' || c == b'\n' {
                        self.end(self.pos + i as u64, found)?;
                        Scan::StartRecord
                    } else {
                        Scan::InField
                    };
                }
            }
        }
        self.pos += chunk.len() as u64;
        self.check_cap(self.pos)
    }

    /// The end of the input: a record under way (no line end after it) is one more.
    fn finish(&mut self, found: &mut impl FnMut(usize, u64)) -> Result<(), ScanError> {
        if self.scan != Scan::StartRecord {
            self.end(self.pos, found)?;
        }
        Ok(())
    }

    /// The record under way ends just before `at`.
    #[inline]
    fn end(&mut self, at: u64, found: &mut impl FnMut(usize, u64)) -> Result<(), ScanError> {
        self.check_cap(at)?;
        found(self.count, self.start);
        self.count += 1;
        self.start = at;
        self.scan = Scan::StartRecord;
        Ok(())
    }

    fn check_cap(&self, at: u64) -> Result<(), ScanError> {
        if at - self.start > self.cap {
            return Err(ScanError::TooLarge { record: self.count });
        }
        Ok(())
    }
}

/// Reads `input` to its end, `chunk` bytes at a time, and calls `found(i, start)` with
/// the byte offset where record `i` starts (what csv's `position()` says before reading
/// it); returns the number of records.
fn scan_records(
    mut input: impl Read,
    delimiter: u8,
    cap: u64,
    chunk: usize,
    mut found: impl FnMut(usize, u64),
) -> Result<usize, ScanError> {
    let mut records = Records::new(delimiter, cap);
    // csv-core drops a UTF-8 BOM at the very start.
    let mut head = [0u8; 3];
    let n = read_full(&mut input, &mut head).map_err(ScanError::Io)?;
    if head[..n] == *b"\xEF\xBB\xBF" {
        records.pos = 3;
    } else {
        records.feed(&head[..n], &mut found)?;
    }
    let mut buf = vec![0u8; chunk.max(1)];
    loop {
        let n = read_full(&mut input, &mut buf).map_err(ScanError::Io)?;
        if n == 0 {
            break;
        }
        records.feed(&buf[..n], &mut found)?;
    }
    records.finish(&mut found)?;
    Ok(records.count)
}

/// Fills `buf` unless the input ends first; the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
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

/// Whether the index of `path` (as it is now) is built, without waiting or starting it.
pub fn is_indexed(path: &Path) -> bool {
    let Ok(k) = key(path) else { return false };
    let c = cache().lock().unwrap();
    c.get(&k).is_some_and(|s| matches!(s.get(), Some(Ok(_))))
}

/// Build (or find, or wait for) the index of `path`: the first call for a file reads
/// it once to the end; later calls are served from memory.
pub fn index(path: &Path) -> anyhow::Result<Arc<Index>> {
    let (s, _) = slot(path)?;
    fill(&s, path)
}

/// Data rows `offset..offset + limit` (limit capped at [`MAX_PAGE_ROWS`]), with the
/// file's total row count once it is known. Pages near the start come straight from
/// [`table::preview_csv`] while the index is built in the background.
pub fn page(path: &Path, offset: usize, limit: usize) -> anyhow::Result<CsvPage> {
    let limit = limit.min(MAX_PAGE_ROWS);
    let (s, new) = slot(path)?;
    // Without an index (not built yet, or stopped by a row over the record cap) pages
    // are read from the start of the file, which also says where a bad row is.
    let from_start = || table::preview_csv_counting(path, offset, limit, COUNT_FIRST_PAGE_UP_TO);
    let idx = match s.get() {
        Some(Ok(built)) => built.clone(),
        Some(Err(_)) => return from_start(),
        None if offset + limit <= STRIDE => {
            if new {
                let path = path.to_path_buf();
                std::thread::spawn(move || fill(&s, &path));
            }
            return from_start();
        }
        None => match fill(&s, path) {
            Ok(built) => built,
            Err(_) => return from_start(),
        },
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

    #[test]
    fn a_row_over_the_record_cap_stops_the_index_not_the_pages_before_it() {
        let dir = tempfile::tempdir().unwrap();
        // Over the cap by more than the readers' buffers, which the cap does not count.
        let huge = "x".repeat(MAX_RECORD_BYTES as usize + (1 << 20));
        let mut text = String::from("a,b\n");
        for i in 0..3000 {
            text.push_str(&format!("{i},y\n"));
        }
        text.push_str(&format!("big,{huge}\n"));
        let p = csv_file(&dir, "h.csv", &text);
        assert!(warm(&p).is_err());
        assert_eq!(page(&p, 0, 5).unwrap().rows[0], ["0", "y"]);
        assert_eq!(page(&p, 2000, 5).unwrap().rows[0], ["2000", "y"]);
        let err = page(&p, 2998, 5).unwrap_err().to_string();
        assert!(err.contains("larger than"), "{err}");
    }

    /// Record starts as the csv crate finds them, with the index's settings.
    fn csv_starts(data: &[u8], delimiter: u8) -> Vec<u64> {
        let mut rdr = builder(delimiter).from_reader(data);
        let mut record = ByteRecord::new();
        let mut starts = Vec::new();
        loop {
            let start = rdr.position().byte();
            if !rdr.read_byte_record(&mut record).unwrap() {
                return starts;
            }
            starts.push(start);
        }
    }

    fn scanned_starts(data: &[u8], delimiter: u8, chunk: usize) -> Vec<u64> {
        let mut starts = Vec::new();
        let n = scan_records(data, delimiter, u64::MAX, chunk, |i, start| {
            assert_eq!(i, starts.len());
            starts.push(start);
        })
        .unwrap();
        assert_eq!(n, starts.len());
        starts
    }

    #[test]
    fn the_record_scan_agrees_with_the_csv_crate_on_tricky_input() {
        let cases: &[(&str, u8)] = &[
            ("a,b\n1,2\n", b','),
            ("a,b\n\"two\nlines\",2\n3,\"cr\r\nlf\"\n4,5\n", b','),
            (
                "q\n\"say \"\"hi\"\"\"\n\"\"\"\"\n\"\"\n\"a\"\"\n,\"\nz\n",
                b',',
            ),
            ("a,b\nx\"y,\"p\nq\"\n\"ab\"cd\"e\nf\",3\n", b','),
            ("a,b\r\n1,2\r\n\r\n3,\"x\r\ny\"\r\n", b','),
            ("a\rb\r\rc\r", b','),
            ("\u{feff}\"id\nwith a newline\",v\n1,2\n", b','),
            ("\u{feff}a,b\n1,2", b','),
            ("\u{feff}", b','),
            ("\u{feff}\n\n", b','),
            ("a;b\n\"1;\n2\";3\n4;\"5\"\"\"\n", b';'),
            ("a\tb\n\"x\ty\"\t\"\"\n1\t\n\t\n", b'\t'),
            ("\n\na,b\n\n\n1,2\n\n", b','),
            ("a,b\n1,2", b','),
            ("a,b\n1,\"unterminated\nquote", b','),
            ("a,b,c\n1\n1,2,3,4\n,\n,,\n", b','),
            ("a,b\n1,\n", b','),
            ("a,b\n1,", b','),
            ("\"a\"", b','),
            ("\n\r\n", b','),
            ("", b','),
            ("x", b','),
        ];
        for &(text, delimiter) in cases {
            let want = csv_starts(text.as_bytes(), delimiter);
            for chunk in [1, 2, 3, 7, 1 << 16] {
                assert_eq!(
                    scanned_starts(text.as_bytes(), delimiter, chunk),
                    want,
                    "{text:?} read {chunk} bytes at a time"
                );
            }
        }
    }

    #[test]
    fn the_record_scan_agrees_with_the_csv_crate_on_random_input() {
        let alphabet = b"ab ,;\t\"\"\"\r\n\n";
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for case in 0..3000 {
            let mut data = Vec::new();
            if case % 5 == 0 {
                data.extend_from_slice(b"\xEF\xBB\xBF");
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for _ in 0..x % 48 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                data.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            for delimiter in [b',', b';', b'\t'] {
                let want = csv_starts(&data, delimiter);
                for chunk in [1, 3, 64] {
                    assert_eq!(
                        scanned_starts(&data, delimiter, chunk),
                        want,
                        "{:?}, delimiter {:?}, {chunk} bytes at a time",
                        String::from_utf8_lossy(&data),
                        delimiter as char
                    );
                }
            }
        }
    }

    #[test]
    fn a_record_over_the_cap_stops_the_scan_at_that_record() {
        // Records: header (2 bytes), "short\n" (6), 17 bytes, "after\n".
        let data = b"h\nshort\n0123456789abcdef\nafter\n";
        for chunk in [1, 4, 100] {
            let err = scan_records(&data[..], b',', 16, chunk, |_, _| {}).unwrap_err();
            assert!(matches!(err, ScanError::TooLarge { record: 2 }), "{err:?}");
            assert_eq!(
                scan_records(&data[..], b',', 17, chunk, |_, _| {}).unwrap(),
                4,
                "a record of exactly the cap is read"
            );
        }
        // A last record without a line end, over the cap.
        let data = b"h\nxxxxxxxxxxxxxxxxxxxx";
        let err = scan_records(&data[..], b',', 10, 4, |_, _| {}).unwrap_err();
        assert!(matches!(err, ScanError::TooLarge { record: 1 }), "{err:?}");
    }

    #[test]
    fn index_checkpoints_are_where_the_csv_crate_finds_those_rows() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from("\u{feff}\"id\";\"note\"\r\n");
        for i in 0..5000 {
            match i % 4 {
                0 => text.push_str(&format!("{i};\"a \"\"quoted\"\"\r\nline\"\r\n")),
                1 => text.push_str(&format!("{i};plain\r\n\r\n")),
                2 => text.push_str(&format!("{i}\n")),
                _ => text.push_str(&format!("{i};x;\"y\nz\";extra\r\n")),
            }
        }
        text.push_str("last;row");
        let p = csv_file(&dir, "c.csv", &text);
        let idx = index(&p).unwrap();
        assert_eq!(idx.delimiter, b';');
        let starts = csv_starts(text.as_bytes(), b';');
        assert_eq!(idx.total_rows, 5001);
        assert_eq!(idx.total_rows, starts.len() - 1);
        let want: Vec<u64> = starts[1..].iter().step_by(STRIDE).copied().collect();
        assert_eq!(idx.checkpoints, want);
        assert_eq!(page(&p, 5000, 5).unwrap().rows, [["last", "row"]]);
    }
}
