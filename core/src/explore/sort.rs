//! The order of a view: several sort keys, collected in the same scan as the filters,
//! then sorted in parallel.
//!
//! Each key column keeps one key a kept row: numbers and instants as a `u64` whose
//! unsigned order is the value's order (8 bytes), text as its first [`MAX_KEY_BYTES`]
//! bytes in one shared buffer. Numbers compare by value, dates and datetimes by their
//! instant, everything else by bytes (case-sensitive, as pandas sorts strings); missing
//! cells come last whatever the direction, and ties keep the file's order.

use std::cmp::Ordering;

use super::cell::{self, Kind};
use super::source::Row;
use super::spec::SortKey;

/// Text keys are compared on their first this many bytes.
pub const MAX_KEY_BYTES: usize = 256;
const MISSING: u64 = u64::MAX;

/// `n`'s order as an unsigned integer (−0 and 0 are the same), never [`MISSING`].
fn ordered(n: f64) -> u64 {
    let b = (n + 0.0).to_bits();
    let k = if b >> 63 == 1 { !b } else { b | (1 << 63) };
    k.min(MISSING - 1)
}

/// The keys of one sort column for the rows of one part of a scan.
pub enum KeyColumn {
    Ordered(Vec<u64>),
    /// (start in `bytes`, length) per row; length `u32::MAX` is missing.
    Text {
        spans: Vec<(u64, u32)>,
        bytes: Vec<u8>,
    },
}

/// How to read one sort key from a row.
#[derive(Clone, Copy)]
pub struct KeyReader {
    pub kind: Kind,
    pub text_na: bool,
    pub decimal_comma: bool,
}

impl KeyReader {
    pub fn empty(&self) -> KeyColumn {
        if self.kind.is_numeric() || self.kind.is_temporal() {
            KeyColumn::Ordered(Vec::new())
        } else {
            KeyColumn::Text {
                spans: Vec::new(),
                bytes: Vec::new(),
            }
        }
    }

    /// Whether the scan may pass this key's cells typed ([`Row::number`]): a number
    /// read typed orders as the number its text says.
    pub fn numbers(&self) -> bool {
        self.kind.is_numeric()
    }

    #[inline]
    pub fn push(&self, col: &mut KeyColumn, row: &Row, at: usize) {
        if let (Some(n), KeyColumn::Ordered(keys)) = (row.number(at), &mut *col) {
            keys.push(n.map_or(MISSING, ordered));
            return;
        }
        let c = row.get(at);
        let missing = cell::is_missing(c, self.text_na);
        let v = c.unwrap_or_default();
        match col {
            KeyColumn::Ordered(keys) => {
                let n = if missing {
                    None
                } else if self.kind.is_temporal() {
                    cell::instant(v).map(|t| t.0)
                } else {
                    cell::number(v, self.decimal_comma)
                };
                keys.push(n.map_or(MISSING, ordered));
            }
            KeyColumn::Text { spans, bytes } => {
                if missing {
                    spans.push((0, u32::MAX));
                } else {
                    let text = String::from_utf8_lossy(v);
                    let t = &text.as_bytes()[..text.len().min(MAX_KEY_BYTES)];
                    spans.push((bytes.len() as u64, t.len() as u32));
                    bytes.extend_from_slice(t);
                }
            }
        }
    }
}

/// Join the parts' key columns (in row order) into one.
pub fn concat(parts: Vec<KeyColumn>) -> KeyColumn {
    let mut it = parts.into_iter();
    let Some(mut first) = it.next() else {
        return KeyColumn::Ordered(Vec::new());
    };
    for p in it {
        match (&mut first, p) {
            (KeyColumn::Ordered(a), KeyColumn::Ordered(b)) => a.extend(b),
            (
                KeyColumn::Text { spans, bytes },
                KeyColumn::Text {
                    spans: s2,
                    bytes: b2,
                },
            ) => {
                let base = bytes.len() as u64;
                spans.extend(s2.into_iter().map(|(s, l)| (s + base, l)));
                bytes.extend(b2);
            }
            _ => unreachable!("the parts of a key column have one kind"),
        }
    }
    first
}

impl KeyColumn {
    /// One u64 a row whose unsigned order is the key's order in `descending`'s
    /// direction, missing last: `None` when some text key is over 8 bytes or holds a
    /// NUL byte (its zero padding would then tie with it).
    fn codes(&self, descending: bool) -> Option<Vec<u64>> {
        let flip = |v: u64| {
            if descending && v != MISSING {
                MISSING - 1 - v
            } else {
                v
            }
        };
        match self {
            KeyColumn::Ordered(k) => Some(k.iter().map(|&v| flip(v)).collect()),
            KeyColumn::Text { spans, bytes } => spans
                .iter()
                .map(|&(start, len)| {
                    if len == u32::MAX {
                        return Some(MISSING);
                    }
                    let t = &bytes[start as usize..start as usize + len as usize];
                    if t.len() > 8 || t.contains(&0) {
                        return None;
                    }
                    let mut b = [0u8; 8];
                    b[..t.len()].copy_from_slice(t);
                    // Valid UTF-8 has no 0xFF byte, so a code is never MISSING.
                    Some(flip(u64::from_be_bytes(b)))
                })
                .collect(),
        }
    }

    #[inline]
    fn cmp(&self, a: usize, b: usize, descending: bool) -> Ordering {
        let flip = |o: Ordering| if descending { o.reverse() } else { o };
        match self {
            KeyColumn::Ordered(k) => match (k[a], k[b]) {
                (MISSING, MISSING) => Ordering::Equal,
                (MISSING, _) => Ordering::Greater,
                (_, MISSING) => Ordering::Less,
                (x, y) => flip(x.cmp(&y)),
            },
            KeyColumn::Text { spans, bytes } => {
                let (sa, la) = spans[a];
                let (sb, lb) = spans[b];
                match (la == u32::MAX, lb == u32::MAX) {
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Greater,
                    (false, true) => Ordering::Less,
                    _ => flip(
                        bytes[sa as usize..sa as usize + la as usize]
                            .cmp(&bytes[sb as usize..sb as usize + lb as usize]),
                    ),
                }
            }
        }
    }
}

/// The positions `0..n` of the kept rows (in file order) in the order of `keys`
/// (each with its direction), ties in file order.
pub fn order(keys: &[(KeyColumn, SortKey)], n: usize, threads: usize) -> Vec<u32> {
    let cmp = |a: &u32, b: &u32| {
        for (k, s) in keys {
            let o = k.cmp(*a as usize, *b as usize, s.descending);
            if o != Ordering::Equal {
                return o;
            }
        }
        a.cmp(b)
    };
    // Keys that fit a u64 each (numbers; text of at most 8 bytes, as most category
    // columns are): sort (codes, position) tuples, which needs no indirection.
    let codes: Option<Vec<Vec<u64>>> = keys.iter().map(|(k, s)| k.codes(s.descending)).collect();
    match codes.as_deref() {
        Some([a]) => {
            let mut t: Vec<(u64, u32)> = (0..n).map(|i| (a[i], i as u32)).collect();
            sort_parallel(&mut t, threads, &|x, y| x.cmp(y));
            return t.into_iter().map(|p| p.1).collect();
        }
        Some([a, b]) => {
            let mut t: Vec<(u64, u64, u32)> = (0..n).map(|i| (a[i], b[i], i as u32)).collect();
            sort_parallel(&mut t, threads, &|x, y| x.cmp(y));
            return t.into_iter().map(|p| p.2).collect();
        }
        _ => {}
    }
    let mut all: Vec<u32> = (0..n as u32).collect();
    sort_parallel(&mut all, threads, &cmp);
    all
}

/// Sort `v` by `cmp` (a total order): parts sorted on `threads` threads, then merged.
fn sort_parallel<T: Copy + Send + Sync>(
    v: &mut Vec<T>,
    threads: usize,
    cmp: &(dyn Fn(&T, &T) -> Ordering + Sync),
) {
    let n = v.len();
    if threads <= 1 || n < 100_000 {
        v.sort_unstable_by(cmp);
        return;
    }
    let per = n.div_ceil(threads);
    std::thread::scope(|s| {
        for part in v.chunks_mut(per) {
            s.spawn(move || part.sort_unstable_by(cmp));
        }
    });
    // The first merges read the sorted parts in place, so the vector is copied once
    // less (at 24 bytes a row for two keys, that is most of a sort's memory).
    let mut runs: Vec<Vec<T>> = Vec::new();
    let mut parts = v.chunks(per);
    while let Some(a) = parts.next() {
        runs.push(match parts.next() {
            Some(b) => merge(a, b, cmp),
            None => a.to_vec(),
        });
    }
    v.clear();
    v.shrink_to_fit();
    while runs.len() > 1 {
        let mut next = Vec::with_capacity(runs.len().div_ceil(2));
        let mut it = runs.into_iter();
        while let Some(a) = it.next() {
            match it.next() {
                Some(b) => next.push(merge(&a, &b, cmp)),
                None => next.push(a),
            }
        }
        runs = next;
    }
    *v = runs.pop().unwrap_or_default();
}

fn merge<T: Copy>(a: &[T], b: &[T], cmp: &dyn Fn(&T, &T) -> Ordering) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if cmp(&b[j], &a[i]) == Ordering::Less {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_integer_order_is_the_numbers_order() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -0.0,
            0.0,
            1e-300,
            3.0,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(ordered(w[0]) <= ordered(w[1]), "{w:?}");
        }
        assert_eq!(ordered(-0.0), ordered(0.0));
        assert!(ordered(f64::INFINITY) < MISSING);
    }

    #[test]
    fn the_parallel_sort_equals_a_stable_sort() {
        let n = 250_000;
        let keys: Vec<u64> = (0..n).map(|i| (i as u64 * 7919) % 1000).collect();
        let mut v: Vec<u32> = (0..n as u32).collect();
        let cmp = |a: &u32, b: &u32| keys[*a as usize].cmp(&keys[*b as usize]).then(a.cmp(b));
        sort_parallel(&mut v, 3, &cmp);
        let mut want: Vec<u32> = (0..n as u32).collect();
        want.sort_by_key(|&i| keys[i as usize]);
        assert_eq!(v, want);
    }
}
