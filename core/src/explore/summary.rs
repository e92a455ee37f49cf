//! The summary of a view's rows, column by column, in one parallel scan: counts,
//! missing share, distinct values, min and max, mean, standard deviation and median of
//! numbers, the most frequent values, and a histogram of numbers and dates.
//!
//! Memory is bounded whatever the file's size: distinct values are counted exactly up
//! to [`MAX_DISTINCT`] per column (with their counts, which also give the top values),
//! then estimated with a HyperLogLog sketch; the median and the histogram come from the
//! column's values kept whole up to [`MAX_KEPT_VALUES`] per column, and beyond that
//! from a sample of rows chosen by a hash of the row number (flagged `median_exact:
//! false`, `histogram_exact: false`; the histogram's counts are then scaled to the
//! column's count). Mean and standard deviation are always exact (Welford's method,
//! merged across threads).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rustc_hash::FxHasher;
use serde::Serialize;

use super::cell::{self, Kind, KindAcc};
use super::filter::Filters;
use super::parquet::{Strings, NULL_KEY};
use super::source::{Row, Table};

/// Distinct values counted exactly (with their counts) per column.
pub const MAX_DISTINCT: usize = 100_000;
/// Values kept per column for the median and the histogram.
pub const MAX_KEPT_VALUES: usize = 2_000_000;
/// Most frequent values listed.
pub const TOP: usize = 10;
/// Histogram bins.
pub const BINS: usize = 20;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub total_rows: usize,
    pub kept_rows: usize,
    pub elapsed_ms: u64,
    pub columns: Vec<ColumnSummary>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Value {
    pub value: String,
    pub count: u64,
}

/// One histogram bin, `[lo, hi)` (the last one closed). For a date column `lo` and `hi`
/// are days since 1970-01-01; for a datetime column, seconds since 1970-01-01 UTC.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bin {
    pub lo: f64,
    pub hi: f64,
    pub count: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ColumnSummary {
    pub index: usize,
    pub name: String,
    pub kind: Kind,
    /// Cells that are not missing.
    pub count: u64,
    pub missing: u64,
    /// `missing` over the view's rows.
    pub missing_share: f64,
    pub distinct: u64,
    pub distinct_exact: bool,
    /// As shown: numbers as numbers, dates ISO, text by bytes.
    pub min: Option<String>,
    pub max: Option<String>,
    /// Numbers only (`null` for dates).
    pub mean: Option<f64>,
    /// Sample standard deviation (ddof = 1, as pandas).
    pub std: Option<f64>,
    pub median: Option<f64>,
    pub median_exact: bool,
    /// Up to [`TOP`] values, most frequent first, ties by value.
    pub top: Vec<Value>,
    /// Whether `top`'s counts are exact (every distinct value was counted).
    pub top_exact: bool,
    pub histogram: Vec<Bin>,
    pub histogram_exact: bool,
    /// Cells a spreadsheet would run as a formula ([`cell::is_formula`]).
    pub formula_cells: u64,
}

type Fx = BuildHasherDefault<FxHasher>;

/// A hasher for keys that are hashes already.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type ById = BuildHasherDefault<IdHasher>;

/// A HyperLogLog sketch with 2^12 registers (about 1.6 % error).
#[derive(Clone)]
struct Hll([u8; 4096]);

impl Hll {
    #[inline]
    fn add(&mut self, h: u64) {
        let i = (h >> 52) as usize;
        let rank = ((h << 12) | (1 << 11)).leading_zeros() as u8 + 1;
        if rank > self.0[i] {
            self.0[i] = rank;
        }
    }
    fn merge(&mut self, o: &Hll) {
        for (a, b) in self.0.iter_mut().zip(o.0.iter()) {
            *a = (*a).max(*b);
        }
    }
    fn estimate(&self) -> f64 {
        let m = 4096.0;
        let sum: f64 = self.0.iter().map(|&r| 2f64.powi(-(r as i32))).sum();
        let e = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
        let zeros = self.0.iter().filter(|&&r| r == 0).count();
        if e <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            e
        }
    }
}

#[inline]
fn hash(b: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(b);
    // FxHash's high bits are weak for a sketch: finish with splitmix64's mixer.
    mix(h.finish())
}

/// splitmix64's finaliser.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A typed number as the page shows it (arrow's display: integers plain, doubles in
/// their shortest round-trip form, `5.0`).
fn number_text(n: f64, integer: bool) -> String {
    if integer {
        format!("{}", n as i64)
    } else {
        ryu::Buffer::new().format(n).to_owned()
    }
}

#[derive(Clone, Copy, Default)]
struct Welford {
    n: f64,
    mean: f64,
    m2: f64,
}

impl Welford {
    #[inline]
    fn push(&mut self, x: f64) {
        self.n += 1.0;
        let d = x - self.mean;
        self.mean += d / self.n;
        self.m2 += d * (x - self.mean);
    }

    /// `x`, `n` times.
    #[inline]
    fn push_n(&mut self, x: f64, n: u64) {
        if n == 1 {
            self.push(x)
        } else {
            self.merge(&Welford {
                n: n as f64,
                mean: x,
                m2: 0.0,
            })
        }
    }
    fn merge(&mut self, o: &Welford) {
        if o.n == 0.0 {
            return;
        }
        let n = self.n + o.n;
        let d = o.mean - self.mean;
        self.mean += d * o.n / n;
        self.m2 += o.m2 + d * d * self.n * o.n / n;
        self.n = n;
    }
}

struct Col {
    kind: KindAcc,
    missing: u64,
    formulas: u64,
    /// Numbers while every cell so far is one.
    numbers: Option<(Welford, f64, f64, Vec<f64>)>,
    /// Instants (seconds) while every cell so far is a date or datetime.
    instants: Option<(f64, f64, Vec<f64>)>,
    min_text: Option<Vec<u8>>,
    max_text: Option<Vec<u8>>,
    /// Each value's count, by its hash.
    counts: HashMap<u64, (Box<[u8]>, u64), ById>,
    /// Some value was not counted (the map was full).
    overflow: bool,
    /// The least and greatest integers written with more digits than an `f64` holds
    /// exactly (IDs of 64 bits), which the numbers' bounds only approximate.
    long_ints: Option<(i128, i128)>,
    hll: Box<Hll>,
    /// A dictionary column's counts by key, not yet pushed.
    pending: Option<Pending>,
}

/// Counts by dictionary key of one dictionary ([`Col::push_key`]).
struct Pending {
    id: (usize, usize),
    values: Strings,
    /// Cells and cells kept for the median and histogram, by key.
    counts: Vec<(u64, u64)>,
    nulls: (u64, u64),
}

impl Col {
    /// For a column whose schema says it is text: its cells are never parsed as
    /// numbers or dates (`finish` would not use them), only counted and compared.
    fn text() -> Col {
        Col {
            kind: KindAcc::text(),
            numbers: None,
            instants: None,
            ..Col::new()
        }
    }

    fn new() -> Col {
        Col {
            kind: KindAcc::default(),
            missing: 0,
            formulas: 0,
            numbers: Some((
                Welford::default(),
                f64::INFINITY,
                f64::NEG_INFINITY,
                Vec::new(),
            )),
            instants: Some((f64::INFINITY, f64::NEG_INFINITY, Vec::new())),
            min_text: None,
            max_text: None,
            counts: HashMap::default(),
            overflow: false,
            hll: Box::new(Hll([0; 4096])),
            pending: None,
            long_ints: None,
        }
    }

    #[inline]
    fn push(&mut self, c: Option<&[u8]>, text_na: bool, dc: bool, keep: bool) {
        self.push_n(c, text_na, dc, 1, u64::from(keep));
    }

    /// [`Col::push`] of the same cell `n` times, `kept` of them with `keep`.
    fn push_n(&mut self, c: Option<&[u8]>, text_na: bool, dc: bool, n: u64, kept: u64) {
        if cell::is_missing(c, text_na) {
            self.missing += n;
            return;
        }
        let v = c.unwrap_or_default();
        if matches!(v.first(), Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r'))
            && cell::is_formula(&String::from_utf8_lossy(v), dc)
        {
            self.formulas += n;
        }
        // Each cell is parsed once: the kind is told what the parse found. The kind's
        // state is the same after one cell as after `n` of it, bar the count.
        let mut kinded = false;
        if let Some((w, lo, hi, values)) = &mut self.numbers {
            match cell::number(v, dc) {
                Some(x) => {
                    let integer = cell::is_integer(v);
                    if integer && x.abs() >= EXACT_INT {
                        if let Some(i) = long_int(v) {
                            let (a, b) = self.long_ints.get_or_insert((i, i));
                            *a = (*a).min(i);
                            *b = (*b).max(i);
                        }
                    }
                    self.kind.push_number(integer);
                    kinded = true;
                    w.push_n(x, n);
                    *lo = lo.min(x);
                    *hi = hi.max(x);
                    values.extend(std::iter::repeat_n(x, kept as usize));
                }
                None => self.numbers = None,
            }
        }
        if self.numbers.is_none() {
            if let Some((lo, hi, values)) = &mut self.instants {
                match cell::instant(v) {
                    Some((t, with_time)) => {
                        if self.kind.all_instants() {
                            self.kind.push_instant(with_time);
                            kinded = true;
                        }
                        *lo = lo.min(t);
                        *hi = hi.max(t);
                        values.extend(std::iter::repeat_n(t, kept as usize));
                    }
                    None => self.instants = None,
                }
            }
        }
        if !kinded {
            self.kind.push(v, dc);
        }
        self.kind.present += n - 1;
        if self.numbers.is_none() && self.instants.is_none() {
            if self.min_text.as_deref().is_none_or(|m| v < m) {
                self.min_text = Some(v.to_vec());
            }
            if self.max_text.as_deref().is_none_or(|m| v > m) {
                self.max_text = Some(v.to_vec());
            }
        }
        // Cells before the column turned out to be text are in `counts`, from which
        // `finish` takes the text bounds too.
        let h = hash(v);
        self.hll.add(h);
        // Keyed by the 64-bit hash alone (two values sharing one are counted as one;
        // among 100,000 values that happens about once in 10^9 files).
        let full = self.counts.len() >= MAX_DISTINCT;
        match self.counts.get_mut(&h) {
            Some(e) => e.1 += n,
            None if !full => {
                self.counts.insert(h, (v.into(), n));
            }
            None => self.overflow = true,
        }
    }

    /// A cell of a dictionary column ([`Row::dict`]): counted by its key until the
    /// dictionary changes, then each distinct value is pushed once with its count
    /// ([`Col::flush`]), so a value is parsed and hashed once per row group, not once
    /// per row.
    #[inline]
    fn push_key(&mut self, values: &Strings, key: u32, keep: bool, text_na: bool, dc: bool) {
        let id = values.id();
        if self.pending.as_ref().is_none_or(|p| p.id != id) {
            self.flush(text_na, dc);
            self.pending = Some(Pending {
                id,
                values: values.clone(),
                counts: vec![(0, 0); values.len()],
                nulls: (0, 0),
            });
        }
        let p = self.pending.as_mut().expect("just set");
        let slot = if key == NULL_KEY {
            &mut p.nulls
        } else {
            &mut p.counts[key as usize]
        };
        slot.0 += 1;
        slot.1 += u64::from(keep);
    }

    /// Push the dictionary values counted by [`Col::push_key`].
    fn flush(&mut self, text_na: bool, dc: bool) {
        let Some(p) = self.pending.take() else {
            return;
        };
        for (k, &(n, kept)) in p.counts.iter().enumerate().filter(|(_, c)| c.0 > 0) {
            self.push_n(p.values.get(k), text_na, dc, n, kept);
        }
        if p.nulls.0 > 0 {
            self.push_n(None, text_na, dc, p.nulls.0, p.nulls.1);
        }
    }

    /// A cell read typed ([`Row::number`]; `None`: missing): [`Col::push`] of its text,
    /// a number (`integer`: written without a fraction), without writing and parsing
    /// that text. Values are counted by number, as `finish` merges counts anyway.
    #[inline]
    fn push_number(&mut self, n: Option<f64>, integer: bool, keep: bool) {
        let Some(n) = n else {
            self.missing += 1;
            return;
        };
        let Some((w, lo, hi, kept)) = &mut self.numbers else {
            // Not reached: a typed column holds numbers only, from its first cell on.
            return self.push(Some(number_text(n, integer).as_bytes()), false, false, keep);
        };
        self.kind.push_number(integer);
        w.push(n);
        *lo = lo.min(n);
        *hi = hi.max(n);
        if keep {
            kept.push(n);
        }
        let h = mix((n + 0.0).to_bits());
        self.hll.add(h);
        let full = self.counts.len() >= MAX_DISTINCT;
        match self.counts.get_mut(&h) {
            Some(e) => e.1 += 1,
            None if !full => {
                self.counts
                    .insert(h, (number_text(n, integer).into_bytes().into(), 1));
            }
            None => self.overflow = true,
        }
    }

    fn merge(&mut self, o: Col) {
        self.kind.merge(&o.kind);
        self.missing += o.missing;
        self.formulas += o.formulas;
        self.numbers = match (self.numbers.take(), o.numbers) {
            (Some((mut w, lo, hi, mut k)), Some((w2, lo2, hi2, k2))) => {
                w.merge(&w2);
                k.extend(k2);
                Some((w, lo.min(lo2), hi.max(hi2), k))
            }
            _ => None,
        };
        self.instants = match (self.instants.take(), o.instants) {
            (Some((lo, hi, mut k)), Some((lo2, hi2, k2))) => {
                k.extend(k2);
                Some((lo.min(lo2), hi.max(hi2), k))
            }
            _ => None,
        };
        for t in [o.min_text, o.max_text].into_iter().flatten() {
            if self.min_text.as_deref().is_none_or(|m| t.as_slice() < m) {
                self.min_text = Some(t.clone());
            }
            if self.max_text.as_deref().is_none_or(|m| t.as_slice() > m) {
                self.max_text = Some(t);
            }
        }
        self.overflow |= o.overflow;
        self.long_ints = match (self.long_ints, o.long_ints) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, y) => x.or(y),
        };
        self.hll.merge(&o.hll);
        for (h, (k, n)) in o.counts {
            let full = self.counts.len() >= MAX_DISTINCT;
            match self.counts.get_mut(&h) {
                Some(m) => m.1 += n,
                None if !full => {
                    self.counts.insert(h, (k, n));
                }
                None => self.overflow = true,
            }
        }
    }
}

/// From here on an `f64` no longer holds every integer.
const EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// An integer cell's exact value.
fn long_int(v: &[u8]) -> Option<i128> {
    let t = std::str::from_utf8(v.trim_ascii()).ok()?;
    t.strip_prefix('+').unwrap_or(t).parse().ok()
}

/// A counted value's identity for a numeric column: its number, so that "10" and
/// "10.0" are one value, but an integer too long for an `f64` by its exact value.
#[derive(PartialEq, Eq, Hash)]
enum ValueKey {
    Number(u64),
    Long(i128),
    Text(Box<[u8]>),
}

/// Whether row `row` is in the sample of one in `stride` rows.
#[inline]
fn sampled(row: u32, stride: u64) -> bool {
    stride <= 1 || ((u64::from(row).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % stride) == 0
}

fn show_number(n: f64, integer: bool) -> String {
    if integer && n.abs() < 9.0e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// The summary of the rows of `table` that `filters` keep (all of them when empty).
pub fn summarize(table: &Table, filters: &Filters) -> anyhow::Result<Summary> {
    let started = std::time::Instant::now();
    let width = table.width();
    let cols: Vec<usize> = (0..width).collect();
    let base = filters.columns().len();
    let stride = (table.total_rows as u64)
        .div_ceil(MAX_KEPT_VALUES as u64)
        .max(1);
    let (text_na, dc) = (table.text_na, table.decimal_comma);
    // Numbers are read typed where that keeps every value apart (Parquet).
    let exact = table.numbers_exact();
    let schema = table.schema_kinds().unwrap_or_default();
    let typed: Vec<bool> = exact.iter().map(Option::is_some).collect();
    let parts = table.scan_kept(
        filters,
        &cols,
        &typed,
        || {
            let cols = (0..width).map(|c| match schema.get(c) {
                Some(Kind::Text) => Col::text(),
                _ => Col::new(),
            });
            (0u64, cols.collect::<Vec<_>>())
        },
        |(kept, acc), row, _, r: &Row| {
            *kept += 1;
            let keep = sampled(row, stride);
            for (i, c) in acc.iter_mut().enumerate() {
                if let Some((values, key)) = r.dict(base + i) {
                    c.push_key(values, key, keep, text_na, dc);
                    continue;
                }
                match r.number(base + i) {
                    Some(n) => c.push_number(n, exact[i] == Some(true), keep),
                    None => c.push(r.get(base + i), text_na, dc, keep),
                }
            }
        },
    )?;
    let mut kept_rows = 0u64;
    let mut all: Option<Vec<Col>> = None;
    for (k, mut part) in parts {
        for c in &mut part {
            c.flush(text_na, dc);
        }
        kept_rows += k;
        all = Some(match all {
            None => part,
            Some(mut a) => {
                for (x, y) in a.iter_mut().zip(part) {
                    x.merge(y);
                }
                a
            }
        });
    }
    let all = all.unwrap_or_else(|| (0..width).map(|_| Col::new()).collect());
    let profile_kinds = table.profile_if_known().map(|p| p.kinds.clone());
    let columns = all
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            // A view's subset may look narrower (all integers); the column's kind is
            // the whole column's.
            let kind = profile_kinds
                .as_ref()
                .map_or_else(|| c.kind.kind(), |k| k[i]);
            finish(i, table.headers[i].clone(), kind, c, kept_rows, stride)
        })
        .collect();
    Ok(Summary {
        total_rows: table.total_rows,
        kept_rows: kept_rows as usize,
        elapsed_ms: started.elapsed().as_millis() as u64,
        columns,
    })
}

fn finish(
    index: usize,
    name: String,
    kind: Kind,
    c: Col,
    kept_rows: u64,
    stride: u64,
) -> ColumnSummary {
    let count = c.kind.present;
    let mut s = ColumnSummary {
        index,
        name,
        kind,
        count,
        missing: c.missing,
        missing_share: if kept_rows == 0 {
            0.0
        } else {
            c.missing as f64 / kept_rows as f64
        },
        distinct: 0,
        distinct_exact: !c.overflow,
        min: None,
        max: None,
        mean: None,
        std: None,
        median: None,
        median_exact: stride <= 1,
        top: Vec::new(),
        top_exact: !c.overflow,
        histogram: Vec::new(),
        histogram_exact: stride <= 1,
        formula_cells: c.formulas,
    };
    // Counts by value: a numeric column's "10" and "10.0" are one value, as are a date
    // column's spellings of one instant.
    let mut counts: Vec<(Box<[u8]>, u64)> = c.counts.into_values().collect();
    let value_of = |b: &[u8]| -> Option<f64> {
        if kind.is_numeric() {
            cell::number(b, false).or_else(|| cell::number(b, true))
        } else if kind.is_temporal() {
            cell::instant(b).map(|t| t.0)
        } else {
            None
        }
    };
    if kind.is_numeric() || kind.is_temporal() {
        let mut by: HashMap<ValueKey, (Box<[u8]>, u64), Fx> = HashMap::default();
        for (k, n) in counts {
            let key = match value_of(&k) {
                Some(v) if v.abs() >= EXACT_INT && kind.is_numeric() && cell::is_integer(&k) => {
                    long_int(&k).map_or(ValueKey::Number(v.to_bits()), ValueKey::Long)
                }
                Some(v) => ValueKey::Number((v + 0.0).to_bits()),
                None => ValueKey::Text(k.clone()),
            };
            let e = by.entry(key).or_insert((k, 0));
            e.1 += n;
        }
        counts = by.into_values().collect();
    }
    s.distinct = if c.overflow {
        c.hll.estimate().round() as u64
    } else {
        counts.len() as u64
    };
    counts.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| match (value_of(&a.0), value_of(&b.0)) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                _ => a.0.cmp(&b.0),
            })
    });
    s.top = counts
        .iter()
        .take(TOP)
        .map(|(k, n)| Value {
            value: String::from_utf8_lossy(k).into_owned(),
            count: *n,
        })
        .collect();
    if count == 0 {
        return s;
    }
    let hist = |kept: &mut Vec<f64>, lo: f64, hi: f64, scale: f64| -> Vec<Bin> {
        let bins = if hi > lo { BINS } else { 1 };
        let width = if hi > lo {
            (hi - lo) / bins as f64
        } else {
            0.0
        };
        let mut counts = vec![0u64; bins];
        for &x in kept.iter() {
            let b = if width > 0.0 {
                (((x - lo) / width) as usize).min(bins - 1)
            } else {
                0
            };
            counts[b] += 1;
        }
        let sampled: u64 = counts.iter().sum();
        if stride > 1 && sampled > 0 {
            // Scale the sample to the column's count, the rounding put on the largest bin.
            for n in counts.iter_mut() {
                *n = (*n as f64 * count as f64 / sampled as f64).round() as u64;
            }
            let sum: i64 = counts.iter().map(|&n| n as i64).sum();
            if let Some(m) = (0..bins).max_by_key(|&i| counts[i]) {
                counts[m] = (counts[m] as i64 + count as i64 - sum).max(0) as u64;
            }
        }
        (0..bins)
            .map(|i| Bin {
                lo: (lo + width * i as f64) / scale,
                hi: (if i + 1 == bins {
                    hi
                } else {
                    lo + width * (i + 1) as f64
                }) / scale,
                count: counts[i],
            })
            .collect()
    };
    match (kind, c.numbers, c.instants) {
        (k, Some((w, lo, hi, mut kept)), _) if k.is_numeric() => {
            let integer = k == Kind::Integer;
            // A bound beyond 2^53 came from a long integer, whose exact value is kept.
            let exact = |x: f64, long: Option<i128>| match long {
                Some(i) if x.abs() >= EXACT_INT && i as f64 == x => i.to_string(),
                _ => show_number(x, integer),
            };
            s.min = Some(exact(lo, c.long_ints.map(|b| b.0)));
            s.max = Some(exact(hi, c.long_ints.map(|b| b.1)));
            s.mean = Some(w.mean);
            s.std = (w.n > 1.0).then(|| (w.m2 / (w.n - 1.0)).sqrt());
            s.median = median(&mut kept);
            s.histogram = hist(&mut kept, lo, hi, 1.0);
        }
        (k, _, Some((lo, hi, mut kept))) if k.is_temporal() => {
            if k == Kind::Date {
                s.min = Some(cell::iso_date((lo / 86_400.0).floor() as i64));
                s.max = Some(cell::iso_date((hi / 86_400.0).floor() as i64));
                s.histogram = hist(&mut kept, lo, hi, 86_400.0);
            } else {
                s.min = Some(cell::iso_datetime(lo));
                s.max = Some(cell::iso_datetime(hi));
                s.histogram = hist(&mut kept, lo, hi, 1.0);
            }
        }
        _ => {
            // Text bounds: a column that looked numeric for a while kept none, so they
            // come from the counted values then (exact unless the map overflowed).
            let (mut lo, mut hi) = (c.min_text, c.max_text);
            for (k, _) in &counts {
                if lo.as_deref().is_none_or(|m| &k[..] < m) {
                    lo = Some(k.to_vec());
                }
                if hi.as_deref().is_none_or(|m| &k[..] > m) {
                    hi = Some(k.to_vec());
                }
            }
            s.min = lo.map(|b| String::from_utf8_lossy(&b).into_owned());
            s.max = hi.map(|b| String::from_utf8_lossy(&b).into_owned());
        }
    }
    s
}

/// The median (the mean of the two middle values of an even count), as pandas.
fn median(v: &mut [f64]) -> Option<f64> {
    let n = v.len();
    if n == 0 {
        return None;
    }
    let (_, &mut hi, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        return Some(hi);
    }
    let lo = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((lo + hi) / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_the_sketch() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
        let mut h = Hll([0; 4096]);
        for i in 0..1_000_000u32 {
            h.add(hash(&i.to_le_bytes()));
        }
        let e = h.estimate();
        assert!((e - 1e6).abs() / 1e6 < 0.05, "{e}");
        let mut small = Hll([0; 4096]);
        for i in 0..100u32 {
            small.add(hash(&i.to_le_bytes()));
        }
        assert!((small.estimate() - 100.0).abs() < 3.0);
    }
}
