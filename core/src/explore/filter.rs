//! A view's filters, compiled once against the table's kinds and tested on each row of
//! a scan. The semantics are those of [`super::spec::FilterOp`]; [`super::code`] writes
//! the same tests in pandas, so both keep the same rows.

use rustc_hash::FxHashSet;

use super::cell::{self, Kind};
use super::parquet::{ScanColumn, Strings, NULL_KEY};
use super::source::Row;
use super::spec::{bound_number, Filter, FilterOp};

enum Test {
    /// Text equal to one of these (a missing cell passes with `missing`).
    Text {
        values: FxHashSet<Vec<u8>>,
        missing: bool,
    },
    /// A number (or an instant, in seconds) equal to one of these, bits of `n + 0.0`.
    Value {
        values: FxHashSet<u64>,
        missing: bool,
        temporal: bool,
    },
    Numbers {
        lo: f64,
        hi: f64,
    },
    /// Instants in seconds: `lo <= t` and `t <= hi` (or `t < hi` with `hi_open`).
    Instants {
        lo: f64,
        hi: f64,
        hi_open: bool,
    },
    Bytes {
        lo: Option<Vec<u8>>,
        hi: Option<Vec<u8>>,
    },
    Contains {
        upper: String,
    },
    Missing,
    NotMissing,
}

/// One compiled filter: the position of its column in the scan's column list.
struct Compiled {
    at: usize,
    test: Test,
}

/// The filters of a view, ready to test rows whose cells come in the order of
/// [`Filters::columns`].
pub struct Filters {
    columns: Vec<usize>,
    tests: Vec<Compiled>,
    text_na: bool,
    decimal_comma: bool,
}

/// Seconds of a bound; a date as an upper bound takes its whole day (`open`: exclusive).
pub fn instant_bound(b: &str, upper: bool) -> Option<(f64, bool)> {
    let (t, with_time) = cell::instant(b.as_bytes())?;
    Some(if upper && !with_time {
        (t + 86_400.0, true)
    } else {
        (t, false)
    })
}

fn bits(n: f64) -> u64 {
    (n + 0.0).to_bits()
}

impl Filters {
    /// Compile `filters` (already checked against the table) for columns of `kinds`.
    pub fn new(filters: &[Filter], kinds: &[Kind], text_na: bool, decimal_comma: bool) -> Filters {
        let mut columns: Vec<usize> = Vec::new();
        let mut tests = Vec::new();
        for f in filters {
            let at = match columns.iter().position(|&c| c == f.column) {
                Some(i) => i,
                None => {
                    columns.push(f.column);
                    columns.len() - 1
                }
            };
            let kind = kinds.get(f.column).copied().unwrap_or(Kind::Text);
            let test = match &f.op {
                FilterOp::Values { values } => {
                    let missing = values.iter().any(|v| v.is_empty());
                    if kind.is_numeric() {
                        Test::Value {
                            values: values
                                .iter()
                                .filter_map(|v| bound_number(v, decimal_comma))
                                .map(bits)
                                .collect(),
                            missing,
                            temporal: false,
                        }
                    } else if kind.is_temporal() {
                        Test::Value {
                            values: values
                                .iter()
                                .filter_map(|v| cell::instant(v.as_bytes()))
                                .map(|(t, _)| bits(t))
                                .collect(),
                            missing,
                            temporal: true,
                        }
                    } else {
                        Test::Text {
                            values: values.iter().map(|v| v.as_bytes().to_vec()).collect(),
                            missing,
                        }
                    }
                }
                FilterOp::Range { min, max } => {
                    if kind.is_numeric() {
                        Test::Numbers {
                            lo: min
                                .as_deref()
                                .and_then(|b| bound_number(b, decimal_comma))
                                .unwrap_or(f64::NEG_INFINITY),
                            hi: max
                                .as_deref()
                                .and_then(|b| bound_number(b, decimal_comma))
                                .unwrap_or(f64::INFINITY),
                        }
                    } else if kind.is_temporal() {
                        let lo = min
                            .as_deref()
                            .and_then(|b| instant_bound(b, false))
                            .map_or(f64::NEG_INFINITY, |b| b.0);
                        let (hi, hi_open) = max
                            .as_deref()
                            .and_then(|b| instant_bound(b, true))
                            .unwrap_or((f64::INFINITY, false));
                        Test::Instants { lo, hi, hi_open }
                    } else {
                        Test::Bytes {
                            lo: min.as_ref().map(|b| b.as_bytes().to_vec()),
                            hi: max.as_ref().map(|b| b.as_bytes().to_vec()),
                        }
                    }
                }
                FilterOp::Contains { text } => Test::Contains {
                    upper: text.to_uppercase(),
                },
                FilterOp::Missing => Test::Missing,
                FilterOp::NotMissing => Test::NotMissing,
            };
            tests.push(Compiled { at, test });
        }
        Filters {
            columns,
            tests,
            text_na,
            decimal_comma,
        }
    }

    /// The columns the tests read, in the order a scan must pass them.
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// For each of [`Filters::columns`], whether every test on it reads a number (or
    /// only asks whether the cell is missing), so a scan may pass it typed.
    pub fn numbers(&self) -> Vec<bool> {
        (0..self.columns.len())
            .map(|at| {
                self.tests.iter().filter(|t| t.at == at).all(|t| {
                    matches!(
                        t.test,
                        Test::Numbers { .. }
                            | Test::Value {
                                temporal: false,
                                ..
                            }
                            | Test::Missing
                            | Test::NotMissing
                    )
                })
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.tests.is_empty()
    }

    /// Whether the row passes every filter; its cells start at `base` in `row`.
    #[inline]
    pub fn keep(&self, row: &Row, base: usize) -> bool {
        self.tests.iter().all(|t| {
            // A cell read typed has no text; only number tests run on it (numbers()).
            match row.number(base + t.at) {
                Some(n) => self.passes_number(&t.test, n),
                None => self.passes(&t.test, row.get(base + t.at)),
            }
        })
    }

    /// Which rows of a batch pass every filter (`keep[i]`), the filters' cells being the
    /// first of `cols` (as [`Filters::keep`] with `base` 0). A test on typed numbers is
    /// one comparison a row, and one on a dictionary column runs once for each of its
    /// values; the others test the rows still kept one by one.
    pub fn keep_batch(&self, cols: &[&ScanColumn], rows: usize, keep: &mut Vec<bool>) {
        keep.clear();
        keep.resize(rows, true);
        for t in &self.tests {
            match (cols[t.at], &t.test) {
                (ScanColumn::Numbers(v), Test::Numbers { lo, hi }) => {
                    // NaN (missing) fails both comparisons.
                    for (k, x) in keep.iter_mut().zip(v) {
                        *k &= *lo <= *x && *x <= *hi;
                    }
                }
                (ScanColumn::Numbers(v), test) => {
                    for (k, x) in keep.iter_mut().zip(v).filter(|(k, _)| **k) {
                        *k = self.passes_number(test, (!x.is_nan()).then_some(*x));
                    }
                }
                (ScanColumn::Strings(Strings::Dict(keys, values)), test)
                    if values.len() <= rows =>
                {
                    let pass: Vec<bool> = (0..values.len())
                        .map(|j| self.passes(test, values.get(j)))
                        .collect();
                    let null = self.passes(test, None);
                    for (k, &key) in keep.iter_mut().zip(keys) {
                        *k &= if key == NULL_KEY {
                            null
                        } else {
                            pass[key as usize]
                        };
                    }
                }
                (col, test) => {
                    for (i, k) in keep.iter_mut().enumerate().filter(|(_, k)| **k) {
                        *k = self.passes(test, col.get(i));
                    }
                }
            }
        }
    }

    /// Whether a cell read typed passes `test` (`None`: missing). Only number tests
    /// and missing tests run on typed cells ([`Filters::numbers`]).
    #[inline]
    fn passes_number(&self, test: &Test, n: Option<f64>) -> bool {
        match (test, n) {
            (Test::Missing, n) => n.is_none(),
            (Test::NotMissing, n) => n.is_some(),
            (Test::Value { missing, .. }, None) => *missing,
            (Test::Value { values, .. }, Some(n)) => values.contains(&bits(n)),
            (Test::Numbers { lo, hi }, Some(n)) => *lo <= n && n <= *hi,
            (Test::Numbers { .. }, None) => false,
            _ => unreachable!("a typed cell met a text test"),
        }
    }

    /// Whether a cell read as text passes `test`.
    #[inline]
    fn passes(&self, test: &Test, c: Option<&[u8]>) -> bool {
        let missing = cell::is_missing(c, self.text_na);
        let v = c.unwrap_or_default();
        let number = || cell::number(v, self.decimal_comma);
        match test {
            Test::Missing => missing,
            Test::NotMissing => !missing,
            Test::Text { values, missing: m } => {
                if missing {
                    *m
                } else {
                    values.contains(v)
                        || (std::str::from_utf8(v).is_err()
                            && values.contains(String::from_utf8_lossy(v).as_bytes()))
                }
            }
            Test::Value {
                values,
                missing: m,
                temporal,
            } => {
                if missing {
                    return *m;
                }
                let n = if *temporal {
                    cell::instant(v).map(|t| t.0)
                } else {
                    number()
                };
                n.is_some_and(|n| values.contains(&bits(n)))
            }
            Test::Numbers { lo, hi } => !missing && number().is_some_and(|n| *lo <= n && n <= *hi),
            Test::Instants { lo, hi, hi_open } => {
                !missing
                    && cell::instant(v)
                        .is_some_and(|(t, _)| *lo <= t && if *hi_open { t < *hi } else { t <= *hi })
            }
            Test::Bytes { lo, hi } => {
                if missing {
                    return false;
                }
                let text = String::from_utf8_lossy(v);
                let b = text.as_bytes();
                lo.as_deref().is_none_or(|lo| b >= lo) && hi.as_deref().is_none_or(|hi| b <= hi)
            }
            Test::Contains { upper } => !missing && contains_upper(v, upper),
        }
    }
}

/// Whether `cell` upper-cased holds `upper` (already upper-cased), as Python's
/// `upper in cell.upper()`. ASCII cells are compared without allocating.
fn contains_upper(cell: &[u8], upper: &str) -> bool {
    let n = upper.as_bytes();
    if cell.is_ascii() && upper.is_ascii() {
        if n.len() > cell.len() {
            return false;
        }
        return cell
            .windows(n.len())
            .any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_uppercase() == *b));
    }
    String::from_utf8_lossy(cell).to_uppercase().contains(upper)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_ignores_case_as_python_upper_does() {
        assert!(contains_upper(b"Hello World", "LO W"));
        assert!(!contains_upper(b"Hello", "XHELLO"));
        assert!(contains_upper("straße".as_bytes(), &"SS".to_uppercase()));
        assert!(contains_upper("Ärger".as_bytes(), &"är".to_uppercase()));
    }

    #[test]
    fn a_date_as_upper_bound_takes_its_day() {
        assert_eq!(instant_bound("1970-01-01", true), Some((86_400.0, true)));
        assert_eq!(instant_bound("1970-01-01", false), Some((0.0, false)));
        assert_eq!(
            instant_bound("1970-01-01T00:00:10", true),
            Some((10.0, false))
        );
    }
}
