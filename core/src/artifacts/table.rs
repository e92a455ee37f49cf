//! CSV previews: one page of a table file, and that page as HTML in which every cell
//! and header is inert text.
//!
//! The file comes from model code and may be anything: another delimiter, ragged rows,
//! bytes that are not UTF-8, a BOM, a single cell of a gigabyte, millions of rows.
//! So it is read as a stream and every dimension is bounded: each record's size, the
//! number of columns kept, each cell's length, the rows and bytes of a page. Rows are
//! only counted when the file is small enough to count cheaply.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use anyhow::{bail, Context};
use csv::{ByteRecord, ReaderBuilder};
use serde::Serialize;

use super::escape_html;

/// Each cell (and header) is cut to this many characters, then marked with `…`.
pub const MAX_CELL_CHARS: usize = 10_000;
/// Columns beyond this are not kept.
pub const MAX_COLUMNS: usize = 1_000;
/// A page never holds more rows than this, whatever `limit` asks for.
pub const MAX_PAGE_ROWS: usize = 1_000;
/// A page stops early once its cells hold this many bytes.
pub const MAX_PAGE_BYTES: usize = 32 << 20;
/// A single record (row) larger than this stops the preview: the csv reader holds a
/// whole record in memory, so this is what bounds memory per row.
pub const MAX_RECORD_BYTES: u64 = 16 << 20;
/// Files up to this size are read to the end to count their rows.
pub const COUNT_ROWS_UP_TO_BYTES: u64 = 64 << 20;

/// How much of the start of the file is used to guess the delimiter.
const SNIFF_BYTES: usize = 64 << 10;
/// How many records of that sample are compared.
const SNIFF_RECORDS: usize = 50;
const CANDIDATE_DELIMITERS: [u8; 4] = [b',', b';', b'\t', b'|'];
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// One page of a CSV file. The first record is taken as the headers; `rows` are data
/// rows `offset..offset + rows.len()`, as they are in the file (rows may have different
/// lengths; [`page_to_html`] pads them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CsvPage {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub offset: usize,
    /// Data rows in the file (headers not counted); `None` when the file is too big to
    /// count cheaply and the page did not reach its end.
    pub total_rows: Option<usize>,
    /// Cells and headers cut to [`MAX_CELL_CHARS`].
    pub truncated_cells: usize,
    /// Cells not kept because their row had more than [`MAX_COLUMNS`] columns.
    pub dropped_cells: usize,
    /// The page holds fewer rows than asked for because it reached [`MAX_PAGE_BYTES`];
    /// the next page starts at `offset + rows.len()`.
    pub stopped_early: bool,
    pub delimiter: char,
}

/// Read data rows `offset..offset + limit` (limit capped at [`MAX_PAGE_ROWS`]) of a CSV
/// file, streaming: only the page and one record at a time are held in memory.
pub fn preview_csv(path: &Path, offset: usize, limit: usize) -> anyhow::Result<CsvPage> {
    preview_csv_counting(path, offset, limit, COUNT_ROWS_UP_TO_BYTES)
}

/// [`preview_csv`], counting the rows only of files up to `count_up_to` bytes.
pub fn preview_csv_counting(
    path: &Path,
    offset: usize,
    limit: usize,
    count_up_to: u64,
) -> anyhow::Result<CsvPage> {
    let limit = limit.min(MAX_PAGE_ROWS);
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file_len = file
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    let mut input = BufReader::with_capacity(SNIFF_BYTES, file);
    let sample = input
        .fill_buf()
        .with_context(|| format!("cannot read {}", path.display()))?;
    if sample.starts_with(b"\xFF\xFE") || sample.starts_with(b"\xFE\xFF") {
        bail!(
            "{} is UTF-16 text; only UTF-8 (or single-byte) CSV files can be previewed",
            path.display()
        );
    }
    let bom = if sample.starts_with(UTF8_BOM) {
        UTF8_BOM.len()
    } else {
        0
    };
    let whole_file = sample.len() as u64 >= file_len;
    let delimiter = sniff_delimiter(&sample[bom..], whole_file);
    input.consume(bom);

    let mut reader = ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(RecordCap {
            inner: input,
            since_record: 0,
            tripped: false,
        });
    let mut page = CsvPage {
        headers: Vec::new(),
        rows: Vec::new(),
        offset,
        total_rows: None,
        truncated_cells: 0,
        dropped_cells: 0,
        stopped_early: false,
        delimiter: delimiter as char,
    };
    let mut record = ByteRecord::new();
    let mut next = |record: &mut ByteRecord, row: usize| -> anyhow::Result<bool> {
        reader.get_mut().since_record = 0;
        match reader.read_byte_record(record) {
            Ok(more) => Ok(more),
            Err(_) if reader.get_ref().tripped => bail!(
                "{}: row {row} is larger than {} MiB; the file cannot be previewed past it",
                path.display(),
                MAX_RECORD_BYTES >> 20
            ),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    };

    if !next(&mut record, 0)? {
        page.total_rows = Some(0);
        return Ok(page);
    }
    page.headers = cells(&record, &mut page);

    // Data rows seen so far; row numbers in messages count the header as row 0.
    let mut seen = 0usize;
    let mut page_bytes = 0usize;
    let mut at_end = false;
    while page.rows.len() < limit {
        if !next(&mut record, seen + 1)? {
            at_end = true;
            break;
        }
        seen += 1;
        if seen <= offset {
            continue;
        }
        let row = cells(&record, &mut page);
        page_bytes += row.iter().map(String::len).sum::<usize>();
        page.rows.push(row);
        if page_bytes >= MAX_PAGE_BYTES && page.rows.len() < limit {
            page.stopped_early = true;
            break;
        }
    }
    if !at_end && file_len <= count_up_to {
        // Counting is best effort: a row over the record cap leaves the total unknown.
        at_end = loop {
            match next(&mut record, seen + 1) {
                Ok(true) => seen += 1,
                Ok(false) => break true,
                Err(_) => break false,
            }
        };
    }
    if at_end {
        page.total_rows = Some(seen);
    }
    Ok(page)
}

/// The page as an HTML table. Every header and cell is escaped, so markup in the file
/// shows as text; short rows are padded so the columns line up.
pub fn page_to_html(page: &CsvPage) -> String {
    let width = page
        .rows
        .iter()
        .map(Vec::len)
        .chain([page.headers.len()])
        .max()
        .unwrap_or(0);
    let mut html = String::from("<table>\n<thead><tr>");
    for i in 0..width {
        let header = page.headers.get(i).map_or("", String::as_str);
        html.push_str(&format!("<th>{}</th>", escape_html(header)));
    }
    html.push_str("</tr></thead>\n<tbody>\n");
    for row in &page.rows {
        html.push_str("<tr>");
        for i in 0..width {
            let cell = row.get(i).map_or("", String::as_str);
            html.push_str(&format!("<td>{}</td>", escape_html(cell)));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table>\n");
    html
}

/// A record's fields as text: at most [`MAX_COLUMNS`], each decoded lossily (bytes that
/// are not UTF-8 become U+FFFD) and cut to [`MAX_CELL_CHARS`].
fn cells(record: &ByteRecord, page: &mut CsvPage) -> Vec<String> {
    let kept = record.len().min(MAX_COLUMNS);
    page.dropped_cells += record.len() - kept;
    record
        .iter()
        .take(kept)
        .map(|field| cell_text(field, &mut page.truncated_cells))
        .collect()
}

/// A cell's text as a page shows it: decoded lossily and cut to [`MAX_CELL_CHARS`]
/// (counted in `truncated`).
pub fn cell_text(field: &[u8], truncated: &mut usize) -> String {
    // Decode at most what can become MAX_CELL_CHARS characters (4 bytes each), so a
    // huge cell is never converted whole.
    let max_bytes = MAX_CELL_CHARS * 4;
    let cut_bytes = field.len() > max_bytes;
    let text = String::from_utf8_lossy(&field[..field.len().min(max_bytes)]);
    match text.char_indices().nth(MAX_CELL_CHARS) {
        Some((i, _)) => {
            *truncated += 1;
            format!("{}…", &text[..i])
        }
        None if cut_bytes => {
            *truncated += 1;
            format!("{text}…")
        }
        None => text.into_owned(),
    }
}

/// Guess the delimiter: for each candidate, parse the sample's first records and find
/// the most common field count; the candidate whose count (over 1) is shared by the
/// most records wins, then the one giving more fields, then the order `, ; tab |`.
fn sniff_delimiter(sample: &[u8], whole_file: bool) -> u8 {
    let mut best = (b',', 0usize, 0usize);
    for delimiter in CANDIDATE_DELIMITERS {
        let mut reader = ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .from_reader(sample);
        let mut counts: Vec<usize> = reader
            .byte_records()
            .take(SNIFF_RECORDS + 1)
            .map_while(Result::ok)
            .map(|r| r.len())
            .collect();
        if !whole_file && counts.len() <= SNIFF_RECORDS {
            // The last record ran into the end of the sample and may be cut short.
            counts.pop();
        }
        counts.truncate(SNIFF_RECORDS);
        let (fields, records) = most_common(&counts);
        if fields > 1 && (records, fields) > (best.1, best.2) {
            best = (delimiter, records, fields);
        }
    }
    best.0
}

/// The most common value and how often it occurs (ties: the larger value).
fn most_common(values: &[usize]) -> (usize, usize) {
    let mut tally = std::collections::HashMap::new();
    for &v in values {
        *tally.entry(v).or_insert(0usize) += 1;
    }
    tally
        .into_iter()
        .max_by_key(|&(value, n)| (n, value))
        .unwrap_or((0, 0))
}

/// The file as the csv reader sees it, failing once a single record has pulled more
/// than [`MAX_RECORD_BYTES`] (plus the reader's small buffer) from the file.
/// `since_record` is reset before each record is read.
struct RecordCap<R> {
    inner: R,
    since_record: u64,
    tripped: bool,
}

impl<R: Read> Read for RecordCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.since_record > MAX_RECORD_BYTES {
            self.tripped = true;
            return Err(std::io::Error::other("record too large"));
        }
        let n = self.inner.read(buf)?;
        self.since_record += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_of(content: &[u8], offset: usize, limit: usize) -> CsvPage {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        std::fs::write(&p, content).unwrap();
        preview_csv(&p, offset, limit).unwrap()
    }

    #[test]
    fn sniffs_each_delimiter() {
        for (d, text) in [
            (',', "a,b,c\n1,2,3\n4,5,6\n"),
            (';', "a;b;c\n1,5;2,5;3\n4;5;6\n"),
            ('\t', "a\tb\tc\n1,5\t2\t3,1\n4\t5\t6\n"),
            ('|', "a|b\n1|2\n"),
            (',', "one column\nx\ny\n"),
            (',', ""),
        ] {
            assert_eq!(page_of(text.as_bytes(), 0, 10).delimiter, d, "{text:?}");
        }
    }

    #[test]
    fn quoted_delimiters_do_not_confuse_the_sniffer() {
        let page = page_of(b"name,note\n\"a;b;c\",\"x;y\"\n\"d;e\",f\n", 0, 10);
        assert_eq!(page.delimiter, ',');
        assert_eq!(page.rows[0], ["a;b;c", "x;y"]);
    }

    #[test]
    fn bom_ragged_rows_and_bad_bytes() {
        let page = page_of(b"\xEF\xBB\xBFid,name\n1,caf\xE9\n2\n3,x,extra\n", 0, 10);
        assert_eq!(page.headers, ["id", "name"]);
        assert_eq!(page.rows[0], ["1", "caf\u{FFFD}"]);
        assert_eq!(page.rows[1], ["2"]);
        assert_eq!(page.rows[2], ["3", "x", "extra"]);
        assert_eq!(page.total_rows, Some(3));
        let html = page_to_html(&page);
        assert!(
            html.contains("<tr><td>2</td><td></td><td></td></tr>"),
            "{html}"
        );
    }

    #[test]
    fn pages_and_counts() {
        let mut text = String::from("n\n");
        for i in 0..250 {
            text.push_str(&format!("{i}\n"));
        }
        let page = page_of(text.as_bytes(), 100, 20);
        assert_eq!(page.rows.len(), 20);
        assert_eq!(page.rows[0], ["100"]);
        assert_eq!(page.total_rows, Some(250));
        let last = page_of(text.as_bytes(), 240, 20);
        assert_eq!(last.rows.len(), 10);
        assert_eq!(last.total_rows, Some(250));
        assert!(page_of(text.as_bytes(), 999, 20).rows.is_empty());
    }

    #[test]
    fn huge_cells_are_cut_and_counted() {
        let big = "x".repeat(MAX_CELL_CHARS * 5);
        let page = page_of(format!("h\n{big}\nshort\n").as_bytes(), 0, 10);
        assert_eq!(page.truncated_cells, 1);
        assert_eq!(page.rows[0][0].chars().count(), MAX_CELL_CHARS + 1);
        assert!(page.rows[0][0].ends_with('…'));
        assert_eq!(page.rows[1], ["short"]);
    }

    #[test]
    fn wide_rows_are_capped() {
        let row = vec!["1"; MAX_COLUMNS + 5].join(",");
        let page = page_of(format!("{row}\n{row}\n").as_bytes(), 0, 10);
        assert_eq!(page.headers.len(), MAX_COLUMNS);
        assert_eq!(page.rows[0].len(), MAX_COLUMNS);
        assert_eq!(page.dropped_cells, 10);
    }

    #[test]
    fn utf16_is_refused_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        std::fs::write(&p, b"\xFF\xFEa\0,\0b\0").unwrap();
        let err = preview_csv(&p, 0, 10).unwrap_err().to_string();
        assert!(err.contains("UTF-16"), "{err}");
    }
}
