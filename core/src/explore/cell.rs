//! What one cell is: missing or not, a number, a date, a datetime, a boolean, or text;
//! and the kind of a column from the kinds of its cells.
//!
//! Every scan, filter, sort and summary of the explorer reads cells through these
//! functions, so a cell is classified the same way everywhere. The rules follow
//! pandas' `read_csv` (its default `na_values`, its number syntax), because the code the
//! explorer writes for a view ([`super::code`]) must keep exactly the rows it shows.

use serde::{Deserialize, Serialize};

/// The kind of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Integer,
    Number,
    /// ISO `YYYY-MM-DD`.
    Date,
    /// ISO date with a time (`T` or a space), optional seconds, fraction and zone.
    Datetime,
    /// `true`/`false`, `yes`/`no`, any case.
    Boolean,
    Text,
    /// Every cell is missing.
    Empty,
}

impl Kind {
    pub fn is_numeric(self) -> bool {
        matches!(self, Kind::Integer | Kind::Number)
    }
    pub fn is_temporal(self) -> bool {
        matches!(self, Kind::Date | Kind::Datetime)
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::Date => "date",
            Kind::Datetime => "datetime",
            Kind::Boolean => "boolean",
            Kind::Text => "text",
            Kind::Empty => "empty",
        }
    }
}

/// pandas' default `na_values` (2.2): a cell that is exactly one of these is missing
/// when read from text (CSV, and strings of a workbook).
pub const NA_VALUES: [&str; 19] = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

/// Whether a cell is missing: absent (a short row, a null), blank (only ASCII
/// whitespace), or with `text_na` one of [`NA_VALUES`]. Formats whose cells are typed
/// (Parquet, JSON) pass `text_na = false`: there the text `"NA"` is text, as pandas
/// reads it.
#[inline]
pub fn is_missing(cell: Option<&[u8]>, text_na: bool) -> bool {
    let Some(c) = cell else { return true };
    if c.is_empty() || c.iter().all(u8::is_ascii_whitespace) {
        return true;
    }
    // The longest NA value has 8 bytes; most cells fail this check at once.
    text_na && c.len() <= 8 && NA_VALUES.iter().any(|na| na.as_bytes() == c)
}

/// Whether the cell is blank but not empty (pandas reads `" "` as text, so the code the
/// explorer writes marks such cells missing itself).
pub fn is_blank(cell: &[u8]) -> bool {
    !cell.is_empty() && cell.iter().all(u8::is_ascii_whitespace)
}

/// The number a cell holds, in pandas' syntax: optional sign, digits with an optional
/// decimal separator (`.`, or `,` with `decimal_comma`), optional exponent; ASCII
/// whitespace around it is allowed. `inf` and `nan` spellings are not numbers here
/// (`nan` is missing).
#[inline]
pub fn number(cell: &[u8], decimal_comma: bool) -> Option<f64> {
    let c = cell.trim_ascii();
    let sep = if decimal_comma { b',' } else { b'.' };
    let (mut digits, mut seps, mut exp) = (0usize, 0usize, false);
    for (i, &b) in c.iter().enumerate() {
        match b {
            b'0'..=b'9' => digits += 1,
            b'+' | b'-' if i == 0 || matches!(c[i - 1], b'e' | b'E') => {}
            b'e' | b'E' if digits > 0 && !exp => exp = true,
            _ if b == sep && !exp => seps += 1,
            _ => return None,
        }
    }
    if digits == 0 || seps > 1 {
        return None;
    }
    if decimal_comma && seps == 1 {
        let mut buf = [0u8; 64];
        if c.len() > buf.len() {
            return None;
        }
        buf[..c.len()].copy_from_slice(c);
        for b in &mut buf[..c.len()] {
            if *b == b',' {
                *b = b'.';
            }
        }
        return std::str::from_utf8(&buf[..c.len()]).ok()?.parse().ok();
    }
    // Only ASCII bytes passed the check above.
    std::str::from_utf8(c).ok()?.parse().ok()
}

/// Whether the cell is an integer (sign and digits only, within i64).
#[inline]
pub fn is_integer(cell: &[u8]) -> bool {
    let c = cell.trim_ascii();
    let d = c
        .strip_prefix(b"-")
        .or_else(|| c.strip_prefix(b"+"))
        .unwrap_or(c);
    !d.is_empty()
        && d.iter().all(u8::is_ascii_digit)
        && (d.len() < 19 || std::str::from_utf8(c).is_ok_and(|t| t.parse::<i64>().is_ok()))
}

pub fn boolean(cell: &[u8]) -> Option<bool> {
    let c = cell.trim_ascii();
    if c.eq_ignore_ascii_case(b"true") || c.eq_ignore_ascii_case(b"yes") {
        Some(true)
    } else if c.eq_ignore_ascii_case(b"false") || c.eq_ignore_ascii_case(b"no") {
        Some(false)
    } else {
        None
    }
}

/// Days from 1970-01-01 to a civil date (proleptic Gregorian; Howard Hinnant's method).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count from 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')))
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// An ISO date `YYYY-MM-DD`, as days from 1970-01-01.
pub fn date(cell: &[u8]) -> Option<i64> {
    let c = cell.trim_ascii();
    if c.len() != 10 || c[4] != b'-' || c[7] != b'-' {
        return None;
    }
    let y = digits(&c[..4])? as i64;
    let m = digits(&c[5..7])?;
    let d = digits(&c[8..10])?;
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

/// A date or an ISO datetime (`YYYY-MM-DD[T ]HH:MM[:SS[.f+]][Z|±HH[:MM]]`) as seconds
/// from 1970-01-01 UTC (a time without a zone is taken as UTC, as
/// `pd.to_datetime(..., utc=True)` does), and whether it had a time.
pub fn instant(cell: &[u8]) -> Option<(f64, bool)> {
    let c = cell.trim_ascii();
    if c.len() < 10 {
        return None;
    }
    let day = date(&c[..10])?;
    if c.len() == 10 {
        return Some((day as f64 * 86_400.0, false));
    }
    if !matches!(c[10], b'T' | b' ') || c.len() < 16 || c[13] != b':' {
        return None;
    }
    let h = digits(&c[11..13])?;
    let mi = digits(&c[14..16])?;
    let mut rest = &c[16..];
    let mut secs = 0.0;
    if let Some(r) = rest.strip_prefix(b":") {
        if r.len() < 2 {
            return None;
        }
        secs = digits(&r[..2])? as f64;
        rest = &r[2..];
        if let Some(r) = rest.strip_prefix(b".") {
            let n = r.iter().take_while(|b| b.is_ascii_digit()).count();
            if n == 0 {
                return None;
            }
            let frac: f64 = std::str::from_utf8(&r[..n]).ok()?.parse::<f64>().ok()?;
            secs += frac / 10f64.powi(n as i32);
            rest = &r[n..];
        }
    }
    if h > 23 || mi > 59 || secs >= 60.0 {
        return None;
    }
    let offset = match rest {
        b"" | b"Z" => 0i64,
        [s @ (b'+' | b'-'), z @ ..] => {
            let (oh, om) = match z.len() {
                2 => (digits(z)?, 0),
                4 => (digits(&z[..2])?, digits(&z[2..])?),
                5 if z[2] == b':' => (digits(&z[..2])?, digits(&z[3..])?),
                _ => return None,
            };
            if oh > 23 || om > 59 {
                return None;
            }
            let o = (oh * 3600 + om * 60) as i64;
            if *s == b'-' {
                -o
            } else {
                o
            }
        }
        _ => return None,
    };
    let t = day * 86_400 + (h * 3600 + mi * 60) as i64 - offset;
    Some((t as f64 + secs, true))
}

/// What the cells of a column have all been so far.
#[derive(Clone, Copy, Debug)]
pub struct KindAcc {
    pub present: u64,
    int: bool,
    num: bool,
    date: bool,
    instant: bool,
    with_time: bool,
    boolean: bool,
}

impl Default for KindAcc {
    fn default() -> Self {
        KindAcc {
            present: 0,
            int: true,
            num: true,
            date: true,
            instant: true,
            with_time: false,
            boolean: true,
        }
    }
}

impl KindAcc {
    /// For a column known to be text (a Parquet string column): cells are counted,
    /// never parsed.
    pub fn text() -> KindAcc {
        KindAcc {
            present: 0,
            int: false,
            num: false,
            date: false,
            instant: false,
            with_time: false,
            boolean: false,
        }
    }

    /// One cell that is not missing.
    #[inline]
    pub fn push(&mut self, cell: &[u8], decimal_comma: bool) {
        self.present += 1;
        if self.num {
            if number(cell, decimal_comma).is_some() {
                if self.int && !is_integer(cell) {
                    self.int = false;
                }
                // A number is none of the others.
                self.date = false;
                self.instant = false;
                self.boolean = false;
                return;
            }
            self.num = false;
            self.int = false;
        }
        if self.instant {
            match instant(cell) {
                Some((_, t)) => {
                    self.with_time |= t;
                    self.date &= !t;
                    self.boolean = false;
                    return;
                }
                None => {
                    self.instant = false;
                    self.date = false;
                }
            }
        }
        if self.boolean && boolean(cell).is_none() {
            self.boolean = false;
        }
    }

    /// A cell that [`number`] read (`integer`: [`is_integer`] too), while every cell
    /// so far has been a number: [`KindAcc::push`] without parsing it again.
    #[inline]
    pub fn push_number(&mut self, integer: bool) {
        debug_assert!(self.num);
        self.present += 1;
        self.int &= integer;
        self.date = false;
        self.instant = false;
        self.boolean = false;
    }

    /// Whether every cell so far has been a date or datetime.
    pub fn all_instants(&self) -> bool {
        self.instant && !self.num
    }

    /// A cell that [`instant`] read while [`KindAcc::all_instants`].
    #[inline]
    pub fn push_instant(&mut self, with_time: bool) {
        self.present += 1;
        self.with_time |= with_time;
        self.date &= !with_time;
        self.boolean = false;
    }

    pub fn merge(&mut self, o: &KindAcc) {
        self.present += o.present;
        self.int &= o.int;
        self.num &= o.num;
        self.date &= o.date;
        self.instant &= o.instant;
        self.with_time |= o.with_time;
        self.boolean &= o.boolean;
    }

    pub fn kind(&self) -> Kind {
        if self.present == 0 {
            Kind::Empty
        } else if self.int {
            Kind::Integer
        } else if self.num {
            Kind::Number
        } else if self.date && !self.with_time {
            Kind::Date
        } else if self.instant {
            Kind::Datetime
        } else if self.boolean {
            Kind::Boolean
        } else {
            Kind::Text
        }
    }
}

/// Whether a spreadsheet would run the cell as a formula: it starts with `=`, `+`,
/// `-`, `@`, a tab or a carriage return, and is not a plain number such as `-3.5`.
pub fn is_formula(cell: &str, decimal_comma: bool) -> bool {
    matches!(
        cell.as_bytes().first(),
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r')
    ) && number(cell.as_bytes(), decimal_comma)
        .is_none_or(|_| cell.as_bytes()[0] == b'\t' || cell.as_bytes()[0] == b'\r')
}

/// A day count as `YYYY-MM-DD`.
pub fn iso_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Seconds from the epoch as `YYYY-MM-DD HH:MM:SS` (UTC), with a fraction if any.
pub fn iso_datetime(secs: f64) -> String {
    let whole = secs.floor();
    let days = (whole / 86_400.0).floor() as i64;
    let s = whole as i64 - days * 86_400;
    let frac = secs - whole;
    let mut out = format!(
        "{} {:02}:{:02}:{:02}",
        iso_date(days),
        s / 3600,
        s / 60 % 60,
        s % 60
    );
    if frac > 5e-7 {
        let f = format!("{frac:.6}");
        out.push_str(f.trim_start_matches('0').trim_end_matches('0'));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_follows_pandas_defaults_and_blank_cells() {
        for m in [
            "", " ", "\t", "NA", "N/A", "NaN", "null", "None", "nan", "#N/A", "<NA>",
        ] {
            assert!(is_missing(Some(m.as_bytes()), true), "{m:?}");
        }
        assert!(is_missing(None, false));
        for t in ["na", "none", "NONE", " NA", "0", "-"] {
            assert!(!is_missing(Some(t.as_bytes()), true), "{t:?}");
        }
        assert!(
            !is_missing(Some(b"NA"), false),
            "typed formats keep the text NA"
        );
    }

    #[test]
    fn numbers_in_pandas_syntax_with_either_decimal_separator() {
        for (t, n) in [
            ("12", 12.0),
            ("-3.5", -3.5),
            ("+1e3", 1000.0),
            (".5", 0.5),
            ("5.", 5.0),
            (" 7 ", 7.0),
            ("1E-2", 0.01),
        ] {
            assert_eq!(number(t.as_bytes(), false), Some(n), "{t}");
        }
        for t in [
            "1,5", "inf", "nan", "1.2.3", "1e", "e5", "--1", "12a", "0x10", "1_000", "", "-",
        ] {
            assert_eq!(number(t.as_bytes(), false), None, "{t}");
        }
        assert_eq!(number(b"12,5", true), Some(12.5));
        assert_eq!(number(b"-0,25e1", true), Some(-2.5));
        assert_eq!(
            number(b"1.5", true),
            None,
            "a point is not the decimal separator then"
        );
        assert!(
            is_integer(b"-42")
                && is_integer(b"+7")
                && !is_integer(b"1.0")
                && !is_integer(b"99999999999999999999")
        );
    }

    #[test]
    fn dates_and_datetimes() {
        assert_eq!(date(b"1970-01-02"), Some(1));
        assert_eq!(date(b"2024-02-29"), Some(days_from_civil(2024, 2, 29)));
        assert_eq!(date(b"2023-02-29"), None);
        assert_eq!(date(b"2024-13-01"), None);
        assert_eq!(instant(b"1970-01-01T00:01"), Some((60.0, true)));
        assert_eq!(instant(b"1970-01-01 01:00:30.5Z"), Some((3630.5, true)));
        assert_eq!(instant(b"1970-01-01T02:00:00+02:00"), Some((0.0, true)));
        assert_eq!(instant(b"1970-01-01T00:00:00-0130"), Some((5400.0, true)));
        assert_eq!(instant(b"1970-01-02"), Some((86400.0, false)));
        assert_eq!(instant(b"1970-01-01T25:00"), None);
        assert_eq!(instant(b"1970-01-01X00:00"), None);
        for d in [-800_000i64, -1, 0, 19_000, 2_932_896] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        assert_eq!(iso_date(19_723), "2024-01-01");
        assert_eq!(iso_datetime(3630.5), "1970-01-01 01:00:30.5");
    }

    #[test]
    fn kinds_from_cells() {
        let kind = |cells: &[&str]| {
            let mut k = KindAcc::default();
            for c in cells {
                k.push(c.as_bytes(), false);
            }
            k.kind()
        };
        assert_eq!(kind(&["1", "2", "-3"]), Kind::Integer);
        assert_eq!(kind(&["1", "2.5"]), Kind::Number);
        assert_eq!(kind(&["2024-01-01", "2024-02-01"]), Kind::Date);
        assert_eq!(kind(&["2024-01-01", "2024-02-01 10:00"]), Kind::Datetime);
        assert_eq!(kind(&["yes", "No", "TRUE"]), Kind::Boolean);
        assert_eq!(kind(&["1", "x"]), Kind::Text);
        assert_eq!(kind(&["2024-01-01", "x"]), Kind::Text);
        assert_eq!(kind(&[]), Kind::Empty);
    }

    #[test]
    fn formulas_but_not_plain_numbers() {
        for f in ["=1+1", "+cmd", "-x", "@SUM(A1)", "\t=1", "\r1", "=", "-"] {
            assert!(is_formula(f, false), "{f:?}");
        }
        for n in ["-3.5", "+1e3", "12", "a=b", ""] {
            assert!(!is_formula(n, false), "{n:?}");
        }
        assert!(!is_formula("-3,5", true));
        assert!(is_formula("-3,5", false));
    }
}
