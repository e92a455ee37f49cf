//! Pages anywhere in a large CSV file, fast: a row index built once per file.
//!
//! [`table::preview_csv`] reads from the start of the file up to the page, which is
//! right for the first page and too slow for row 900,000 of a million-row file that a
//! user scrolls through. This module keeps, per file (path, size and modification
//! time), the byte offset of every [`STRIDE`]th data row; a page then seeks to the
//! nearest one before it and parses at most `STRIDE + limit` records.
//!
//! The first page always comes from [`table::preview_csv`] (delimiter sniffing, BOM,
//! bounds); later pages reuse its delimiter and headers. Records larger than
//! [`table::MAX_RECORD_BYTES`] stop the index as they stop the preview, and cells are
//! cut and columns dropped by the same limits.

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

fn cache() -> &'static Mutex<HashMap<Key, Arc<Index>>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Arc<Index>>>> = OnceLock::new();
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

fn reader(path: &Path, delimiter: u8) -> anyhow::Result<csv::Reader<Capped<BufReader<File>>>> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(Capped {
            inner: BufReader::with_capacity(256 << 10, file),
            since_record: 0,
        }))
}

fn build(path: &Path, first: &CsvPage) -> anyhow::Result<Index> {
    let delimiter = first.delimiter as u8;
    let mut rdr = reader(path, delimiter)?;
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

/// Build (or find) the index of `path`. The first call for a file reads it once to
/// the end; later calls, and calls for other pages, are served from memory.
fn index(path: &Path) -> anyhow::Result<Arc<Index>> {
    let k = key(path)?;
    if let Some(i) = cache().lock().unwrap().get(&k) {
        return Ok(i.clone());
    }
    let first = table::preview_csv(path, 0, 1)?;
    let built = Arc::new(build(path, &first)?);
    let mut c = cache().lock().unwrap();
    if c.len() >= MAX_INDEXES {
        c.clear();
    }
    c.insert(k, built.clone());
    Ok(built)
}

/// Data rows `offset..offset + limit` (limit capped at [`MAX_PAGE_ROWS`]), with the
/// file's total row count. Pages near the start come straight from
/// [`table::preview_csv`] until the index exists; [`warm`] builds it ahead.
pub fn page(path: &Path, offset: usize, limit: usize) -> anyhow::Result<CsvPage> {
    let limit = limit.min(MAX_PAGE_ROWS);
    let k = key(path)?;
    let cached = cache().lock().unwrap().get(&k).cloned();
    let idx = match cached {
        Some(i) => i,
        None if offset + limit <= STRIDE => return table::preview_csv(path, offset, limit),
        None => index(path)?,
    };
    let mut page = CsvPage {
        headers: idx.headers.clone(),
        rows: Vec::new(),
        offset,
        total_rows: Some(idx.total_rows),
        truncated_cells: 0,
        dropped_cells: 0,
        stopped_early: false,
        delimiter: idx.delimiter as char,
    };
    if offset >= idx.total_rows {
        return Ok(page);
    }
    let cp = offset / STRIDE;
    let mut rdr = reader(path, idx.delimiter)?;
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

/// Build the index of `path` now (call it from a background task when a table opens).
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
}
