//! The offline analyst's statistics questions in the real sandbox (issue 24): tables
//! generated here with a fixed seed, their answers computed here by this file's own
//! arithmetic (never by the analyst's Python), and each request asked through a real
//! session. A case passes when its answer holds every expected number (to the
//! precision it is written with) and none of the numbers a wrong reading of the
//! question would give, with the words that show the plan; a request outside the
//! analyst's skills must get the honest decline and no computed answer. The requests
//! of one table share one session (one container, a warm kernel), two tables at a time.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sandalyst::model::offline::OfflineAnalyst;
use sandalyst::session::{DockerFactory, SessionConfig, Sessions};
use tokio_util::sync::CancellationToken;

// ---- deterministic data --------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64) / ((1u64 << 53) as f64)
    }
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() * ((hi - lo + 1) as f64)) as i64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.next().max(1e-12), self.next());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

// ---- statistics, computed independently ----------------------------------------------

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

fn var(x: &[f64], ddof: f64) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() as f64 - ddof)
}

fn sd(x: &[f64], ddof: f64) -> f64 {
    var(x, ddof).sqrt()
}

fn sorted(x: &[f64]) -> Vec<f64> {
    let mut s = x.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    s
}

/// Linear interpolation between closest ranks (type 7).
fn quantile(x: &[f64], q: f64) -> f64 {
    let s = sorted(x);
    let h = (s.len() - 1) as f64 * q;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    s[lo] + (h - lo as f64) * (s[hi] - s[lo])
}

/// Adjusted Fisher-Pearson sample skewness.
fn skew(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let m = mean(x);
    let m2 = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / n;
    let m3 = x.iter().map(|v| (v - m).powi(3)).sum::<f64>() / n;
    (n * (n - 1.0)).sqrt() / (n - 2.0) * m3 / m2.powf(1.5)
}

/// Bias-corrected excess kurtosis.
fn kurt(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let m = mean(x);
    let m2 = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / n;
    let m4 = x.iter().map(|v| (v - m).powi(4)).sum::<f64>() / n;
    let g2 = m4 / (m2 * m2) - 3.0;
    (n - 1.0) / ((n - 2.0) * (n - 3.0)) * ((n + 1.0) * g2 + 6.0)
}

fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let (mx, my) = (mean(x), mean(y));
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let syy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    sxy / (sxx * syy).sqrt()
}

/// Kendall's tau-b: (P - Q) / sqrt((P + Q + T)(P + Q + U)), T and U the pairs tied
/// only in x and only in y.
fn kendall_tau_b(x: &[f64], y: &[f64]) -> f64 {
    let (mut p, mut q, mut t, mut u) = (0f64, 0f64, 0f64, 0f64);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let (dx, dy) = (x[i] - x[j], y[i] - y[j]);
            match (dx == 0.0, dy == 0.0) {
                (true, true) => {}
                (true, false) => t += 1.0,
                (false, true) => u += 1.0,
                _ if dx * dy > 0.0 => p += 1.0,
                _ => q += 1.0,
            }
        }
    }
    (p - q) / ((p + q + t) * (p + q + u)).sqrt()
}

fn ranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].partial_cmp(&x[b]).unwrap());
    let mut r = vec![0.0; x.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && x[idx[j + 1]] == x[idx[i]] {
            j += 1;
        }
        for k in i..=j {
            r[idx[k]] = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    r
}

fn ln_gamma(x: f64) -> f64 {
    // Lanczos approximation (g = 7, n = 9).
    let c = [
        0.999_999_999_999_809_9,
        676.5203681218851,
        -1259.1392167224028,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507343278686905,
        -0.13857109526572012,
        9.984_369_578_019_572e-6,
        1.5056327351493116e-7,
    ];
    let x = x - 1.0;
    let t = x + 7.5;
    let mut a = c[0];
    for (i, ci) in c.iter().enumerate().skip(1) {
        a += ci / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Regularised incomplete beta by its continued fraction.
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - inc_beta(b, a, 1.0 - x);
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp() / a;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    d = 1.0 / if d.abs() < 1e-300 { 1e-300 } else { d };
    let mut f = d;
    for m in 1..300 {
        let m = m as f64;
        for num in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + num * d;
            d = 1.0 / if d.abs() < 1e-300 { 1e-300 } else { d };
            c = 1.0 + num / c;
            if c.abs() < 1e-300 {
                c = 1e-300;
            }
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    front * f
}

/// Two-sided p-value of a correlation `r` over `n` pairs (Student t, n - 2 df).
fn corr_p(r: f64, n: usize) -> f64 {
    let df = n as f64 - 2.0;
    let t2 = r * r * df / (1.0 - r * r);
    inc_beta(df / 2.0, 0.5, df / (df + t2))
}

fn erf(x: f64) -> f64 {
    // Abramowitz-Stegun 7.1.26 is too coarse; use the series / continued fraction
    // through the incomplete gamma function: erf(x) = P(1/2, x^2).
    let s = x.signum();
    let x2 = x * x;
    let p = if x2 < 1.5 {
        let (mut sum, mut term, mut k) = (1.0 / 0.5, 1.0 / 0.5, 0.5);
        for _ in 0..200 {
            k += 1.0;
            term *= x2 / k;
            sum += term;
        }
        sum * (-x2 + 0.5 * x2.ln() - ln_gamma(0.5)).exp()
    } else {
        // Lentz continued fraction for Q(1/2, x2).
        let a = 0.5;
        let mut b = x2 + 1.0 - a;
        let mut c = 1e300;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..300 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            d = 1.0 / d;
            c = b + an / c;
            h *= d * c;
        }
        1.0 - (-x2 + a * x2.ln() - ln_gamma(a)).exp() * h
    };
    s * p
}

fn norm_cdf(z: f64) -> f64 {
    0.5 * (1.0 + erf(z / std::f64::consts::SQRT_2))
}

/// Kolmogorov-Smirnov D against a normal with the sample's mean and sd.
fn ks_d(x: &[f64]) -> f64 {
    let (m, s) = (mean(x), sd(x, 1.0));
    let v = sorted(x);
    let n = v.len() as f64;
    v.iter()
        .enumerate()
        .map(|(i, xi)| {
            let f = norm_cdf((xi - m) / s);
            ((i as f64 + 1.0) / n - f).max(f - i as f64 / n)
        })
        .fold(0.0, f64::max)
}

/// The standard normal quantile, by bisection on [`norm_cdf`].
fn norm_ppf(p: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0, 40.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if norm_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Shapiro-Wilk W and its p-value (Royston 1995, algorithm AS R94; n >= 12).
fn shapiro(x: &[f64]) -> (f64, f64) {
    let v = sorted(x);
    let n = v.len();
    assert!(n >= 12);
    let nf = n as f64;
    let half = n / 2;
    let m: Vec<f64> = (1..=half)
        .map(|i| norm_ppf((i as f64 - 0.375) / (nf + 0.25)))
        .collect();
    let summ2 = 2.0 * m.iter().map(|v| v * v).sum::<f64>();
    let ssumm2 = summ2.sqrt();
    let u = 1.0 / nf.sqrt();
    let poly = |c: &[f64], x: f64| c.iter().rev().fold(0.0, |acc, ci| acc * x + ci);
    let a1 = poly(
        &[0.0, 0.221157, -0.147981, -2.071190, 4.434685, -2.706056],
        u,
    ) - m[0] / ssumm2;
    let a2 = poly(
        &[0.0, 0.042981, -0.293762, -1.752461, 5.682633, -3.582633],
        u,
    ) - m[1] / ssumm2;
    let fac = ((summ2 - 2.0 * m[0] * m[0] - 2.0 * m[1] * m[1])
        / (1.0 - 2.0 * a1 * a1 - 2.0 * a2 * a2))
        .sqrt();
    let a: Vec<f64> = (0..half)
        .map(|i| match i {
            0 => a1,
            1 => a2,
            _ => -m[i] / fac,
        })
        .collect();
    let num: f64 = (0..half).map(|i| a[i] * (v[n - 1 - i] - v[i])).sum();
    let mu = mean(&v);
    let ss: f64 = v.iter().map(|x| (x - mu).powi(2)).sum();
    let w = num * num / ss;
    let ln = nf.ln();
    let mean_ = poly(&[-1.5861, -0.31082, -0.083751, 0.0038915], ln);
    let sd_ = poly(&[-0.4803, -0.082676, 0.0030302], ln).exp();
    let p = 1.0 - norm_cdf(((1.0 - w).ln() - mean_) / sd_);
    (w, p)
}

type Mat = Vec<Vec<f64>>;

fn mat_mul(a: &Mat, b: &Mat) -> Mat {
    a.iter()
        .map(|row| {
            (0..b[0].len())
                .map(|j| row.iter().zip(b).map(|(x, bk)| x * bk[j]).sum())
                .collect()
        })
        .collect()
}

/// `a` to the power `n`, with a power-of-ten exponent kept apart.
fn mat_pow(a: &Mat, n: usize) -> (Mat, i32) {
    if n == 1 {
        return (a.clone(), 0);
    }
    let (v, ev) = mat_pow(a, n / 2);
    let b = mat_mul(&v, &v);
    let mut r = if n.is_multiple_of(2) {
        b
    } else {
        mat_mul(a, &b)
    };
    let mut e = 2 * ev;
    let mid = r.len() / 2;
    if r[mid][mid] > 1e140 {
        r.iter_mut().flatten().for_each(|c| *c *= 1e-140);
        e += 140;
    }
    (r, e)
}

/// P(D_n < d) of the one-sample Kolmogorov-Smirnov statistic, exactly (Marsaglia,
/// Tsang and Wang 2003, the Durbin matrix).
fn ks_cdf(n: usize, d: f64) -> f64 {
    let nd = n as f64 * d;
    let k = nd.floor() as usize + 1;
    let m = 2 * k - 1;
    let h = k as f64 - nd;
    let mut hm: Mat = (0..m)
        .map(|i| (0..m).map(|j| if i + 1 >= j { 1.0 } else { 0.0 }).collect())
        .collect();
    for (i, row) in hm.iter_mut().enumerate() {
        row[0] -= h.powi(i as i32 + 1);
    }
    for (i, c) in hm[m - 1].iter_mut().enumerate() {
        *c -= h.powi((m - i) as i32);
    }
    if 2.0 * h - 1.0 > 0.0 {
        hm[m - 1][0] += (2.0 * h - 1.0).powi(m as i32);
    }
    for (i, row) in hm.iter_mut().enumerate() {
        for (j, c) in row.iter_mut().enumerate() {
            if i + 1 > j {
                *c /= (1..=(i + 1 - j)).map(|g| g as f64).product::<f64>();
            }
        }
    }
    let (q, mut e) = mat_pow(&hm, n);
    let mut s = q[k - 1][k - 1];
    for i in 1..=n {
        s = s * i as f64 / n as f64;
        if s < 1e-140 {
            s *= 1e140;
            e -= 140;
        }
    }
    s * 10f64.powi(e)
}

// ---- the tables ------------------------------------------------------------------------

/// A table: its file name, CSV text, and columns as numbers (None: missing or text).
struct Table {
    name: &'static str,
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn write(&self, dir: &Path) -> PathBuf {
        let mut s = self.header.join(",");
        s.push('\n');
        for r in &self.rows {
            s.push_str(&r.join(","));
            s.push('\n');
        }
        let p = dir.join(self.name);
        std::fs::write(&p, s).unwrap();
        p
    }
    fn col(&self, name: &str) -> usize {
        self.header.iter().position(|h| *h == name).unwrap()
    }
    /// The numeric values of a column (missing dropped) where `keep` holds.
    fn nums_where(&self, name: &str, keep: impl Fn(&Vec<String>) -> bool) -> Vec<f64> {
        let c = self.col(name);
        self.rows
            .iter()
            .filter(|r| keep(r))
            .filter_map(|r| r[c].parse::<f64>().ok())
            .collect()
    }
    fn nums(&self, name: &str) -> Vec<f64> {
        self.nums_where(name, |_| true)
    }
}

fn passengers() -> Table {
    let mut g = Rng(11);
    let classes = ["First", "Second", "Third"];
    let rows = (0..150)
        .map(|i| {
            let class = classes[g.int(0, 2) as usize];
            let age = if i % 17 == 3 {
                String::new()
            } else {
                g.int(1, 80).to_string()
            };
            let base = match class {
                "First" => 80.0,
                "Second" => 30.0,
                _ => 12.0,
            };
            let fare = round2(base * (0.5 + g.next()) + g.next() * 5.0);
            let (y, m, d) = (g.int(2018, 2020), g.int(1, 12), g.int(1, 28));
            vec![
                format!("P{:03}", i + 1),
                age,
                format!("{fare:.2}"),
                class.to_string(),
                format!("{y}-{m:02}-{d:02}"),
            ]
        })
        .collect();
    Table {
        name: "passengers.csv",
        header: vec!["passenger", "age", "fare", "class", "boarded"],
        rows,
    }
}

fn cities() -> Table {
    let names = [
        "Lisbon", "Porto", "Madrid", "Seville", "Valencia", "Bilbao", "Lyon", "Nantes", "Turin",
        "Genoa", "Bremen", "Leipzig",
    ];
    let mut g = Rng(5);
    let rows = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            // Two cities share the top score; one has the lowest.
            let score = match i {
                3 | 8 => 97,
                5 => 41,
                _ => g.int(55, 90),
            };
            vec![
                n.to_string(),
                score.to_string(),
                (g.int(100, 3000) * 1000).to_string(),
            ]
        })
        .collect();
    Table {
        name: "cities.csv",
        header: vec!["city", "score", "population"],
        rows,
    }
}

fn orders() -> Table {
    let mut g = Rng(23);
    let regions = ["Norte", "Sur", "Centro", "Este"];
    let rows = (0..80)
        .map(|i| {
            let region = regions[g.int(0, 3) as usize];
            let units = g.int(1, 40);
            let price = round2(2.0 + g.next() * 18.0);
            let cost = round2(units as f64 * price * (0.4 + 0.5 * g.next()));
            vec![
                format!("O{:04}", 1000 + i),
                region.to_string(),
                units.to_string(),
                format!("{price:.2}"),
                format!("{cost:.2}"),
            ]
        })
        .collect();
    Table {
        name: "orders.csv",
        header: vec!["order_id", "region", "units", "unit_price", "cost"],
        rows,
    }
}

/// Days since 1970-01-01 of a civil date, and back (Howard Hinnant's algorithms).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn civil(z: i64) -> String {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y}-{m:02}-{d:02}")
}

fn contracts() -> Table {
    let mut g = Rng(31);
    let base = days_from_civil(2021, 1, 1);
    let rows = (0..40)
        .map(|i| {
            let start = base + g.int(0, 700);
            let end = start + g.int(30, 900);
            vec![
                format!("Contract {}", i + 1),
                civil(start),
                civil(end),
                g.int(1000, 90000).to_string(),
            ]
        })
        .collect();
    Table {
        name: "contracts.csv",
        header: vec!["contract_name", "start_date", "end_date", "value"],
        rows,
    }
}

fn tickets() -> Table {
    let mut g = Rng(37);
    let base = days_from_civil(2024, 3, 1);
    let rows = (0..50)
        .map(|i| {
            let day = base + g.int(0, 40);
            let open_min = g.int(7 * 60, 18 * 60);
            let dur_min = g.int(20, 60 * 70);
            let close = day * 1440 + open_min + dur_min;
            let hm = |m: i64| format!("{:02}:{:02}", (m % 1440) / 60, m % 60);
            vec![
                format!("T{}", i + 1),
                format!("{} {}", civil(day), hm(open_min)),
                format!("{} {}", civil(close.div_euclid(1440)), hm(close)),
                ["alta", "media", "baja"][g.int(0, 2) as usize].to_string(),
            ]
        })
        .collect();
    Table {
        name: "tickets.csv",
        header: vec!["ticket", "opened_at", "closed_at", "priority"],
        rows,
    }
}

fn medidas() -> Table {
    let mut g = Rng(41);
    let ciudades = ["Sevilla", "Bilbao", "Zaragoza", "Murcia", "Vigo"];
    let rows = (0..90)
        .map(|i| {
            let t = round2(8.0 + 22.0 * g.next());
            let h = round2(85.0 - 1.6 * t + 6.0 * g.normal());
            let precio = if i % 19 == 7 {
                String::new()
            } else {
                format!("{:.2}", round2(1.0 + 4.0 * g.next()))
            };
            vec![
                ciudades[g.int(0, 4) as usize].to_string(),
                format!("{t:.2}"),
                format!("{h:.2}"),
                precio,
                g.int(18, 75).to_string(),
            ]
        })
        .collect();
    Table {
        name: "medidas.csv",
        header: vec!["ciudad", "temperatura", "humedad", "precio", "edad"],
        rows,
    }
}

fn samples() -> Table {
    let mut g = Rng(53);
    let rows = (0..200)
        .map(|i| {
            let normal = round2(50.0 + 10.0 * g.normal());
            let skewed = round2(-8.0 * (1.0 - g.next()).ln());
            let delta = round2(0.5 + 2.0 * g.normal());
            let spiky = if [17, 88, 140, 199].contains(&i) {
                round2(100.0 + 40.0 * g.next())
            } else {
                round2(20.0 + 3.0 * g.normal())
            };
            let x = round2(10.0 * g.next());
            let y = round2(3.0 + 0.6 * x + 2.5 * g.normal());
            vec![
                (2000 + i).to_string(),
                format!("{normal:.2}"),
                format!("{skewed:.2}"),
                format!("{delta:.2}"),
                format!("{spiky:.2}"),
                format!("{x:.2}"),
                format!("{y:.2}"),
            ]
        })
        .collect();
    Table {
        name: "samples.csv",
        header: vec!["code", "normal", "skewed", "delta", "spiky", "x", "y"],
        rows,
    }
}

fn yearly() -> Table {
    let mut g = Rng(61);
    let rows = (0..64)
        .map(|i| {
            vec![
                (2015 + i % 8).to_string(),
                ["A", "B"][i % 2].to_string(),
                g.int(20, 90).to_string(),
                format!(
                    "{:.2}",
                    round2(100.0 + 30.0 * g.next() + (i % 8) as f64 * 5.0)
                ),
            ]
        })
        .collect();
    Table {
        name: "yearly.csv",
        header: vec!["year", "site", "daily_count", "visitors"],
        rows,
    }
}

/// Tables written for the questions a new user asks first: survival, orders with their
/// dates, Spanish prices over two years, two shapes of distribution.
fn voyagers() -> Table {
    let mut g = Rng(71);
    let rows = (0..180)
        .map(|i| {
            let class = g.int(1, 3);
            let age = if i % 13 == 5 {
                String::new()
            } else {
                g.int(1, 75).to_string()
            };
            let survived = (g.next() < [0.0, 0.62, 0.45, 0.25][class as usize]) as i64;
            let fare = round2([0.0, 70.0, 25.0, 9.0][class as usize] * (0.6 + g.next()));
            vec![
                format!("V{:03}", i + 1),
                age,
                survived.to_string(),
                format!("{fare:.2}"),
                ["S", "C", "Q"][g.int(0, 2) as usize].to_string(),
            ]
        })
        .collect();
    Table {
        name: "voyagers.csv",
        header: vec!["passenger_id", "age", "survived", "fare", "embarked"],
        rows,
    }
}

fn sales() -> Table {
    let mut g = Rng(83);
    let products = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"];
    let base = days_from_civil(2023, 1, 1);
    let rows = (0..120)
        .map(|i| {
            let product = products[g.int(0, 4) as usize];
            let units = g.int(1, 50);
            let price = round2(3.0 + 27.0 * g.next());
            let value = round2(units as f64 * price);
            let ordered = base + g.int(0, 364);
            let delivered = ordered + g.int(1, 14);
            vec![
                format!("S{:04}", i + 1),
                product.to_string(),
                units.to_string(),
                format!("{price:.2}"),
                format!("{value:.2}"),
                civil(ordered),
                civil(delivered),
            ]
        })
        .collect();
    Table {
        name: "sales.csv",
        header: vec![
            "order_id",
            "product",
            "units",
            "unit_price",
            "order_value",
            "ordered_at",
            "delivered_at",
        ],
        rows,
    }
}

fn precios() -> Table {
    let mut g = Rng(97);
    let productos = ["Café", "Té", "Azúcar", "Harina"];
    let base = days_from_civil(2021, 1, 1);
    let rows = (0..110)
        .map(|_| {
            let fecha = base + g.int(0, 729);
            let p = g.int(0, 3) as usize;
            let precio = round2([4.0, 2.5, 1.2, 0.9][p] * (0.7 + 0.8 * g.next()) * 10.0);
            vec![
                civil(fecha),
                productos[p].to_string(),
                format!("{precio:.2}"),
                g.int(1, 60).to_string(),
            ]
        })
        .collect();
    Table {
        name: "precios.csv",
        header: vec!["fecha", "producto", "precio", "unidades"],
        rows,
    }
}

fn shapes() -> Table {
    let mut g = Rng(101);
    let rows = (0..150)
        .map(|i| {
            vec![
                (i + 1).to_string(),
                format!("{:.2}", round2(170.0 + 8.0 * g.normal())),
                format!("{:.2}", round2(-5.0 * (1.0 - g.next()).ln())),
            ]
        })
        .collect();
    Table {
        name: "shapes.csv",
        header: vec!["id", "altura", "espera"],
        rows,
    }
}

// ---- cases -------------------------------------------------------------------------------

struct Case {
    file: &'static str,
    request: String,
    /// Numbers the answer must hold.
    want: Vec<f64>,
    /// Numbers it must not (a wrong reading's answer).
    not: Vec<f64>,
    /// Words it must hold.
    words: Vec<String>,
    /// Words it must not hold.
    not_words: Vec<String>,
    decline: bool,
    es: bool,
    /// Words the chart's title must hold; a bar chart must start at zero.
    chart: Vec<String>,
}

fn case(file: &'static str, request: &str) -> Case {
    Case {
        file,
        request: request.into(),
        want: vec![],
        not: vec![],
        words: vec![],
        not_words: vec![],
        decline: false,
        chart: vec![],
        es: request.contains('¿') || is_spanish(request),
    }
}

fn is_spanish(r: &str) -> bool {
    sandalyst::analyst::request::detect_lang(r) == sandalyst::analyst::request::Lang::Es
}

impl Case {
    fn want(mut self, v: &[f64]) -> Self {
        self.want.extend_from_slice(v);
        self
    }
    fn not(mut self, v: &[f64]) -> Self {
        self.not.extend_from_slice(v);
        self
    }
    fn words(mut self, w: &[&str]) -> Self {
        self.words.extend(w.iter().map(|s| s.to_string()));
        self
    }
    fn not_words(mut self, w: &[&str]) -> Self {
        self.not_words.extend(w.iter().map(|s| s.to_string()));
        self
    }
    fn chart(mut self, w: &[&str]) -> Self {
        self.chart.extend(w.iter().map(|s| s.to_string()));
        self
    }
    fn declined(mut self) -> Self {
        self.decline = true;
        self
    }
}

fn cases(t: &Tables) -> Vec<Case> {
    let p = &t.passengers;
    let fare = p.nums("fare");
    let age = p.nums("age");
    let age_i = p.col("age");
    let older = |r: &Vec<String>| r[age_i].parse::<f64>().is_ok_and(|a| a > 30.0);
    let fare_older = p.nums_where("fare", older);
    let y2019 = |r: &Vec<String>| r[4].starts_with("2019");
    let fare_2019 = p.nums_where("fare", y2019);
    let first = |r: &Vec<String>| r[3] == "First";
    let fare_first = p.nums_where("fare", first);
    let mut v = vec![
        case("passengers.csv", "Calculate the mean and standard deviation of the fare")
            .want(&[mean(&fare), sd(&fare, 1.0)])
            .not(&[fare.iter().sum(), sd(&fare, 0.0)])
            .words(&["I computed", "sample standard deviation"]),
        case("passengers.csv", "What is the population standard deviation of fare?")
            .want(&[sd(&fare, 0.0)])
            .not(&[sd(&fare, 1.0)])
            .words(&["population standard deviation"]),
        case("passengers.csv", "What is the median age?")
            .want(&[quantile(&age, 0.5)])
            .not(&[mean(&age)])
            .words(&["missing value"]),
        case("passengers.csv", "Mean age of the passengers, rounded to 1 decimal")
            .want(&[(mean(&age) * 10.0).round() / 10.0])
            .words(&[&format!("{:.1}", mean(&age))]),
        case("passengers.csv", "What is the variance of the fare?")
            .want(&[var(&fare, 1.0)])
            .not(&[var(&fare, 0.0)]),
        case("passengers.csv", "Give me the minimum, maximum and range of fare")
            .want(&[sorted(&fare)[0], *sorted(&fare).last().unwrap(), sorted(&fare).last().unwrap() - sorted(&fare)[0]]),
        case("passengers.csv", "What are the quartiles of the fare?")
            .want(&[quantile(&fare, 0.25), quantile(&fare, 0.5), quantile(&fare, 0.75)]),
        case("passengers.csv", "What is the 90th percentile of fare?")
            .want(&[quantile(&fare, 0.9)])
            .words(&["90th percentile"]),
        case("passengers.csv", "What is the mean fare for passengers older than 30?")
            .want(&[mean(&fare_older), fare_older.len() as f64])
            .not(&[mean(&fare)])
            .words(&["`age` > 30"]),
        case("passengers.csv", "How many passengers are older than 30?")
            .want(&[fare_older.len() as f64]),
        case("passengers.csv", "Average fare in 2019")
            .want(&[mean(&fare_2019)])
            .not(&[mean(&fare)])
            .words(&["2019"]),
        case("passengers.csv", "Mean and median fare for First class passengers")
            .want(&[mean(&fare_first), quantile(&fare_first, 0.5)])
            .not(&[mean(&fare)]),
        case("passengers.csv", "Standard deviation of fare by class, to 2 decimal places")
            .want(&["First", "Second", "Third"].map(|c| {
                let x = p.nums_where("fare", |r| r[3] == c);
                round2(sd(&x, 1.0))
            }))
            .words(&["First", "Third"])
            .chart(&["Sample standard deviation", "fare", "class"]),
        case("passengers.csv", "How many distinct classes are there?")
            .want(&[3.0]),
        case("passengers.csv", "What is the skewness and kurtosis of fare?")
            .want(&[skew(&fare), kurt(&fare)]),
        case("passengers.csv", "What is the mean fare for passengers with age at least 60?")
            .want(&[mean(&p.nums_where("fare", |r| r[age_i].parse::<f64>().is_ok_and(|a| a >= 60.0)))])
            .not(&[mean(&fare)]),
        case("passengers.csv", "Mean age, treating missing values as zero")
            .want(&[age.iter().sum::<f64>() / p.rows.len() as f64])
            .not(&[mean(&age)]),
        case("passengers.csv", "What is the total fare?")
            .want(&[fare.iter().sum()])
            .not(&[mean(&fare)]),
        case("passengers.csv", "What is the mean of ticket_price?")
            .declined()
            .not(&[mean(&fare)])
            .words(&["ticket"]),
        case("passengers.csv", "Calculate the geometric mean of the fare")
            .declined()
            .not(&[mean(&fare)])
            .words(&["geometric mean"]),
        case("passengers.csv", "Run a t-test of fare between First and Third class")
            .declined()
            .words(&["t test"]),
        case("passengers.csv", "What is the mean of class?")
            .declined()
            .words(&["text"]),
        case("passengers.csv", "Mean fare and predict next year's fare")
            .declined()
            .not(&[mean(&fare)]),
        case("passengers.csv", "What is the average fare for passengers who were born on a Tuesday where the data says so?")
            .declined()
            .not(&[mean(&fare)]),
    ];

    // cities: one row per city, tied maximum
    let c = &t.cities;
    let score = c.nums("score");
    let best: Vec<String> = c
        .rows
        .iter()
        .filter(|r| r[1] == "97")
        .map(|r| r[0].clone())
        .collect();
    let worst = c.rows.iter().find(|r| r[1] == "41").unwrap()[0].clone();
    v.extend([
        case("cities.csv", "Which city has the highest score?")
            .want(&[97.0])
            .words(&[&best[0], &best[1], "tied"])
            .chart(&["Score", "city", "highest"])
            .not_words(&["number of rows"]),
        case("cities.csv", "Which city has the lowest score?")
            .want(&[41.0])
            .words(&[&worst]),
        case("cities.csv", "¿Qué ciudad tiene la puntuación más alta?")
            .want(&[97.0])
            .words(&[&best[0], &best[1], "empate"]),
        case(
            "cities.csv",
            "What is the mean and standard deviation of the score?",
        )
        .want(&[mean(&score), sd(&score, 1.0)]),
        case("cities.csv", "What is the highest score?").want(&[97.0]),
        case("cities.csv", "Which city has the largest population?").words(&[&{
            let pi = c.col("population");
            c.rows
                .iter()
                .max_by_key(|r| r[pi].parse::<i64>().unwrap())
                .unwrap()[0]
                .clone()
        }]),
        case("cities.csv", "What is the mode of the score?").want(&[97.0]),
    ]);

    // orders: derived measures
    let o = &t.orders;
    let top = top_revenue_region(o);
    let units_by = |reg: &str| -> f64 {
        o.rows
            .iter()
            .filter(|r| r[1] == reg)
            .map(|r| r[2].parse::<f64>().unwrap())
            .sum()
    };
    let revenue: Vec<f64> = o
        .rows
        .iter()
        .map(|r| r[2].parse::<f64>().unwrap() * r[3].parse::<f64>().unwrap())
        .collect();
    let profit: Vec<f64> = o
        .rows
        .iter()
        .zip(&revenue)
        .map(|(r, rev)| rev - r[4].parse::<f64>().unwrap())
        .collect();
    let cpu: Vec<f64> = o
        .rows
        .iter()
        .map(|r| r[4].parse::<f64>().unwrap() / r[2].parse::<f64>().unwrap())
        .collect();
    let top_units = ["Norte", "Sur", "Centro", "Este"]
        .iter()
        .map(|r| units_by(r))
        .fold(0.0, f64::max);
    v.extend([
        case(
            "orders.csv",
            "Which region had the highest revenue? Revenue is units times unit_price.",
        )
        .want(&[top.1])
        .words(&[&top.0, "units", "unit_price"])
        .chart(&["Total of revenue", "region"])
        .not(&[top_units]),
        case(
            "orders.csv",
            "What is the mean revenue per order? Revenue = units * unit_price",
        )
        .want(&[mean(&revenue)]),
        case("orders.csv", "Total of units times unit_price").want(&[revenue.iter().sum()]),
        case(
            "orders.csv",
            "What is the average ratio of cost divided by units?",
        )
        .want(&[mean(&cpu)]),
        case(
            "orders.csv",
            "Mean of the difference between unit_price and cost",
        )
        .want(&[mean(
            &o.rows
                .iter()
                .map(|r| r[3].parse::<f64>().unwrap() - r[4].parse::<f64>().unwrap())
                .collect::<Vec<_>>(),
        )]),
        case(
            "orders.csv",
            "¿Qué región tuvo los mayores ingresos? Ingresos es units por unit_price.",
        )
        .want(&[top.1])
        .words(&[&top.0, "He calculado"]),
        case("orders.csv", "Standard deviation of units per region").want(
            &["Norte", "Sur", "Centro", "Este"]
                .map(|reg| sd(&o.nums_where("units", |r| r[1] == reg), 1.0)),
        ),
        case(
            "orders.csv",
            "What is the median profit? Profit is units times unit_price",
        )
        .want(&[quantile(&revenue, 0.5)])
        .not(&[quantile(&profit, 0.5)]),
        case(
            "orders.csv",
            "What is the weighted average of unit_price by units?",
        )
        .declined()
        .not(&[mean(&o.nums("unit_price"))]),
    ]);

    // contracts and tickets: date differences
    let k = &t.contracts;
    let parse_day = |s: &str| {
        let p: Vec<i64> = s.split('-').map(|x| x.parse().unwrap()).collect();
        days_from_civil(p[0], p[1], p[2])
    };
    let lengths: Vec<f64> = k
        .rows
        .iter()
        .map(|r| (parse_day(&r[2]) - parse_day(&r[1])) as f64)
        .collect();
    v.extend([
        case("contracts.csv", "What is the average length of a contract?")
            .want(&[mean(&lengths)])
            .words(&["days"])
            .not_words(&["Number of rows by"]),
        case(
            "contracts.csv",
            "Median number of days between start_date and end_date",
        )
        .want(&[quantile(&lengths, 0.5)]),
        case(
            "contracts.csv",
            "Longest contract duration: what is the maximum length in days?",
        )
        .want(&[sorted(&lengths).last().copied().unwrap()]),
        case(
            "contracts.csv",
            "¿Cuál es la duración media de los contratos?",
        )
        .want(&[mean(&lengths)])
        .words(&["días"]),
        case(
            "contracts.csv",
            "Mean contract value for contracts longer than 400 days",
        )
        .declined(),
    ]);
    let tk = &t.tickets;
    let parse_min = |s: &str| {
        let (d, hm) = s.split_once(' ').unwrap();
        let (h, m) = hm.split_once(':').unwrap();
        parse_day(d) * 1440 + h.parse::<i64>().unwrap() * 60 + m.parse::<i64>().unwrap()
    };
    let hours: Vec<f64> = tk
        .rows
        .iter()
        .map(|r| (parse_min(&r[2]) - parse_min(&r[1])) as f64 / 60.0)
        .collect();
    v.extend([
        case("tickets.csv", "Average hours between opened_at and closed_at")
            .want(&[mean(&hours)])
            .not(&[mean(&hours) / 24.0])
            .words(&["hours"]),
        case("tickets.csv", "Mean and standard deviation of the hours between opened_at and closed_at, rounded to 2 decimals")
            .want(&[round2(mean(&hours)), round2(sd(&hours, 1.0))]),
        case("tickets.csv", "What is the mean of the priority?").declined(),
    ]);

    // medidas: Spanish
    let m = &t.medidas;
    let temp = m.nums("temperatura");
    let hum = m.nums("humedad");
    let precio = m.nums("precio");
    let r_th = pearson(&temp, &hum);
    let rs = pearson(&ranks(&temp), &ranks(&hum));
    let edad_i = m.col("edad");
    let precio_mayores = m.nums_where("precio", |r| r[edad_i].parse::<f64>().unwrap() > 40.0);
    v.extend([
        case(
            "medidas.csv",
            "Calcula la media y la desviación estándar del precio",
        )
        .want(&[mean(&precio), sd(&precio, 1.0)])
        .not(&[precio.iter().sum()])
        .words(&["He calculado", "desviación estándar muestral", "descartado"]),
        case("medidas.csv", "¿Cuál es la mediana de la temperatura?").want(&[quantile(&temp, 0.5)]),
        case("medidas.csv", "Varianza poblacional de la humedad")
            .want(&[var(&hum, 0.0)])
            .not(&[var(&hum, 1.0)])
            .words(&["poblacional"]),
        case("medidas.csv", "Media del precio para edad mayor de 40")
            .want(&[mean(&precio_mayores)])
            .not(&[mean(&precio)]),
        case("medidas.csv", "¿Cuál es el precio medio en Bilbao?")
            .want(&[mean(&m.nums_where("precio", |r| r[0] == "Bilbao"))])
            .not(&[mean(&precio)]),
        case(
            "medidas.csv",
            "Correlación de Pearson entre temperatura y humedad con su valor p",
        )
        .want(&[r_th, corr_p(r_th, temp.len())])
        .words(&["Pearson"]),
        case(
            "medidas.csv",
            "Spearman correlation between temperatura and humedad",
        )
        .want(&[rs])
        .not(&[r_th])
        .words(&["Spearman"]),
        case(
            "medidas.csv",
            "Pearson correlation coefficient of temperatura and humedad, with p-value",
        )
        .want(&[r_th]),
        case("medidas.csv", "¿Cuántas ciudades distintas hay?").want(&[5.0]),
        case(
            "medidas.csv",
            "Desviación estándar de la temperatura por ciudad",
        )
        .want(
            &["Sevilla", "Bilbao", "Zaragoza", "Murcia", "Vigo"]
                .map(|cd| sd(&m.nums_where("temperatura", |r| r[0] == cd), 1.0)),
        ),
        case(
            "medidas.csv",
            "¿Cuál es la desviación estándar poblacional de la edad?",
        )
        .want(&[sd(&m.nums("edad"), 0.0)])
        .not(&[sd(&m.nums("edad"), 1.0)]),
        case("medidas.csv", "Calcula la media armónica del precio")
            .declined()
            .not(&[mean(&precio)]),
        case("medidas.csv", "Media del salario")
            .declined()
            .words(&["salario"]),
    ]);

    // samples: normality, outliers, plain stats on a table with a code column
    let s = &t.samples;
    let normal = s.nums("normal");
    let skewed = s.nums("skewed");
    let delta = s.nums("delta");
    let spiky = s.nums("spiky");
    let (q1, q3) = (quantile(&spiky, 0.25), quantile(&spiky, 0.75));
    let iqr_out = spiky
        .iter()
        .filter(|x| **x < q1 - 1.5 * (q3 - q1) || **x > q3 + 1.5 * (q3 - q1))
        .count();
    let (ms, ss) = (mean(&spiky), sd(&spiky, 1.0));
    let z_out = spiky
        .iter()
        .filter(|x| ((*x - ms) / ss).abs() > 3.0)
        .count();
    let (mn, sn) = (mean(&normal), sd(&normal, 1.0));
    let z2_out = normal
        .iter()
        .filter(|x| ((*x - mn) / sn).abs() > 2.0)
        .count();
    let xs = s.nums("x");
    let ys = s.nums("y");
    let r_xy = pearson(&xs, &ys);
    v.extend([
        case(
            "samples.csv",
            "Calculate the mean and standard deviation of the `delta` column",
        )
        .want(&[mean(&delta), sd(&delta, 1.0)])
        .not_words(&["time series", "anomal"]),
        case(
            "samples.csv",
            "How many outliers does spiky have by the IQR rule?",
        )
        .want(&[iqr_out as f64])
        .words(&["IQR"]),
        case("samples.csv", "Find outliers in spiky using z-scores")
            .want(&[z_out as f64])
            .words(&["z-score"]),
        case(
            "samples.csv",
            "Outliers of normal more than 2 standard deviations from the mean",
        )
        .want(&[z2_out as f64]),
        case(
            "samples.csv",
            "Is normal normally distributed? Use a Shapiro-Wilk test",
        )
        .want(&[shapiro(&normal).0, shapiro(&normal).1, 200.0])
        .words(&["Shapiro-Wilk", "consistent with a normal"]),
        case(
            "samples.csv",
            "Is skewed normally distributed? Use Shapiro-Wilk",
        )
        .want(&[shapiro(&skewed).0, 200.0])
        .words(&["Shapiro-Wilk", "not normally distributed"]),
        case(
            "samples.csv",
            "Kolmogorov-Smirnov test of normality for normal",
        )
        .want(&[ks_d(&normal)])
        .words(&["Kolmogorov-Smirnov"]),
        case(
            "samples.csv",
            "Does skewed follow a normal distribution? Judge by skewness",
        )
        .want(&[skew(&skewed)])
        .words(&["strongly skewed"]),
        case("samples.csv", "What is the mean of code?")
            .want(&[mean(&s.nums("code"))])
            .not_words(&["time series", "anomal", "interval"]),
        case(
            "samples.csv",
            "What is the Pearson correlation between x and y and its p-value?",
        )
        .want(&[r_xy, corr_p(r_xy, xs.len())]),
        case(
            "samples.csv",
            "Mean and standard deviation of normal and of skewed",
        )
        .want(&[
            mean(&normal),
            sd(&normal, 1.0),
            mean(&skewed),
            sd(&skewed, 1.0),
        ]),
        case("samples.csv", "What is the interquartile range of skewed?").want(&[quantile(
            &skewed, 0.75,
        ) - quantile(
            &skewed, 0.25,
        )]),
        case("samples.csv", "Mean of y where x is above 5")
            .want(&[mean(
                &s.nums_where("y", |r| r[5].parse::<f64>().unwrap() > 5.0),
            )])
            .not(&[mean(&ys)]),
        // A prompt pasted from a ticket: the method followed, the answer also in the
        // format asked.
        case(
            "samples.csv",
            "What is the mean of x? Use the arithmetic mean and ignore missing values. \
             @mean_x[value] where \"value\" is a number rounded to two decimal places.",
        )
        .want(&[round2(mean(&xs))])
        .words(&[&format!("@mean_x[{:.2}]", mean(&xs))]),
        case(
            "samples.csv",
            "Is x related to y? Calculate the Pearson correlation coefficient and its p-value \
             using scipy.stats.pearsonr. @r[r_value] where \"r_value\" is rounded to 3 decimals.",
        )
        .words(&[&format!("@r[{r_xy:.3}]")]),
        case("samples.csv", "Kendall's tau between x and y")
            .want(&[kendall_tau_b(&s.nums("x"), &s.nums("y"))])
            .not(&[r_xy]),
        case("samples.csv", "Run an ANOVA of y").declined(),
    ]);

    // yearly: a year column is not a grouping unless asked
    let yv = &t.yearly;
    let visitors = yv.nums("visitors");
    let v2019 = yv.nums_where("visitors", |r| r[0] == "2019");
    v.extend([
        case(
            "yearly.csv",
            "Mean and standard deviation of the daily count",
        )
        .want(&[
            mean(&yv.nums("daily_count")),
            sd(&yv.nums("daily_count"), 1.0),
        ])
        .words(&["Sample standard deviation of `daily_count`"])
        .not_words(&["Count of"]),
        case("yearly.csv", "What is the mean of visitors?")
            .want(&[mean(&visitors)])
            .not(&[mean(&yv.nums_where("visitors", |r| r[0] == "2015"))]),
        case(
            "yearly.csv",
            "Mean and standard deviation of visitors in 2019",
        )
        .want(&[mean(&v2019), sd(&v2019, 1.0)])
        .not(&[mean(&visitors)]),
        case(
            "yearly.csv",
            "Media y desviación estándar de visitors por site",
        )
        .want(&["A", "B"].map(|st| mean(&yv.nums_where("visitors", |r| r[1] == st)))),
    ]);
    v.extend(new_user_cases(t));
    v.extend(third_look_cases(t));
    v.extend(fifth_look_cases(t));
    v
}

/// A passenger list shaped like the ones analysts download: `Survived` 0/1, `Pclass`
/// 1/2/3 as numbers, `Sex`, ages with gaps, `Embarked` S/C/Q with two gaps.
fn boarders() -> Table {
    let mut g = Rng(31);
    let rows = (0..240)
        .map(|i| {
            let class = g.int(1, 3);
            let sex = if g.next() < 0.4 { "female" } else { "male" };
            let survived = (g.next() < if sex == "female" { 0.7 } else { 0.25 }) as i64;
            let age = if i % 9 == 4 {
                String::new()
            } else {
                format!("{:.1}", 1.0 + g.next() * 70.0)
            };
            let fare = round2((4 - class) as f64 * 20.0 * (0.4 + g.next()));
            let port = match (i, g.next()) {
                (7 | 99, _) => "",
                (_, x) if x < 0.65 => "S",
                (_, x) if x < 0.85 => "C",
                _ => "Q",
            };
            vec![
                (i + 1).to_string(),
                survived.to_string(),
                class.to_string(),
                sex.to_string(),
                age,
                format!("{fare:.2}"),
                port.to_string(),
            ]
        })
        .collect();
    Table {
        name: "boarders.csv",
        header: vec![
            "PassengerId",
            "Survived",
            "Pclass",
            "Sex",
            "Age",
            "Fare",
            "Embarked",
        ],
        rows,
    }
}

/// Houses with their area, bedrooms, year built and the days they were listed and sold.
fn homes() -> Table {
    let mut g = Rng(37);
    let start = days_from_civil(2023, 1, 1);
    let rows = (0..160)
        .map(|i| {
            let area = g.int(600, 4000);
            let price = (area as f64 * (180.0 + g.next() * 80.0) / 100.0).round() * 100.0;
            let listed = start + g.int(0, 500);
            let sold = listed + g.int(5, 120);
            vec![
                (i + 1).to_string(),
                format!("{price:.0}"),
                area.to_string(),
                g.int(1, 6).to_string(),
                g.int(1950, 2022).to_string(),
                civil(listed),
                civil(sold),
            ]
        })
        .collect();
    Table {
        name: "homes.csv",
        header: vec![
            "id",
            "price",
            "area_sqft",
            "bedrooms",
            "year_built",
            "listed_date",
            "sold_date",
        ],
        rows,
    }
}

/// Students: a `lunch` column whose value `standard` must not be read out of
/// "standard deviation", a course column with `completed`, scores.
fn pupils() -> Table {
    let mut g = Rng(41);
    let rows = (0..200)
        .map(|i| {
            let prep = if g.next() < 0.35 { "completed" } else { "none" };
            let math = (55.0 + g.next() * 45.0 + if prep == "completed" { 3.0 } else { 0.0 })
                .min(100.0)
                .round();
            vec![
                (i + 1).to_string(),
                (if g.next() < 0.5 { "female" } else { "male" }).to_string(),
                (if g.next() < 0.6 {
                    "standard"
                } else {
                    "free/reduced"
                })
                .to_string(),
                prep.to_string(),
                format!("{math:.0}"),
                format!("{:.0}", (40.0 + g.next() * 60.0).round()),
            ]
        })
        .collect();
    Table {
        name: "pupils.csv",
        header: vec![
            "student_id",
            "gender",
            "lunch",
            "test_preparation_course",
            "math_score",
            "reading_score",
        ],
        rows,
    }
}

/// Daily closing prices and volumes.
fn quotes() -> Table {
    let mut g = Rng(43);
    let start = days_from_civil(2024, 1, 1);
    let mut close = 100.0;
    let rows = (0..200)
        .map(|i| {
            close = round2(close * (1.0 + (g.next() - 0.48) * 0.03));
            vec![
                civil(start + i),
                format!("{close:.2}"),
                g.int(800_000, 5_000_000).to_string(),
            ]
        })
        .collect();
    Table {
        name: "quotes.csv",
        header: vec!["Date", "Close", "Volume"],
        rows,
    }
}

/// Questions an outside tester asked of ordinary tables (issue 24's third look): each
/// of these once got an answer to another question (a count of all rows for "how
/// many survived", the overall median for "in first class", the mean of `price` for
/// "price per square foot", a `lunch` = standard condition read out of "standard
/// deviation", the mean of an id column) or a decline it did not need.
/// The region of `orders` with the highest total of units x unit_price, and that total.
fn top_revenue_region(o: &Table) -> (String, f64) {
    ["Norte", "Sur", "Centro", "Este"]
        .iter()
        .map(|reg| {
            let s: f64 = o
                .rows
                .iter()
                .filter(|r| r[1] == *reg)
                .map(|r| r[2].parse::<f64>().unwrap() * r[3].parse::<f64>().unwrap())
                .sum();
            (reg.to_string(), s)
        })
        .max_by(|a, b| a.1.partial_cmp(&b.1).unwrap())
        .unwrap()
}

/// Hospital visits: a yes/no column said as an adjective ("admitted patients"), a
/// measure whose name holds the rows' word (`patient_age` and "patients"), a label
/// column with five values.
fn visits() -> Table {
    let mut g = Rng(53);
    let departments = ["Cardiology", "Emergency", "Neurology", "Pediatrics"];
    let rows = (0..300)
        .map(|i| {
            let d = departments[g.int(0, 3) as usize];
            let age = if d == "Pediatrics" {
                g.int(1, 17)
            } else {
                g.int(18, 90)
            };
            let wait = round2(10.0 + g.next() * if d == "Emergency" { 90.0 } else { 50.0 });
            let admitted = g.next() < (age as f64 / 120.0 + 0.1);
            vec![
                (5000 + i).to_string(),
                d.to_string(),
                age.to_string(),
                format!("{wait:.2}"),
                if admitted { "yes" } else { "no" }.to_string(),
            ]
        })
        .collect();
    Table {
        name: "visits.csv",
        header: vec![
            "visit_id",
            "department",
            "patient_age",
            "wait_minutes",
            "admitted",
        ],
        rows,
    }
}

/// The fifth outside look: each of these once answered another question (the
/// condition or the label dropped) or was declined though plain.
fn fifth_look_cases(t: &Tables) -> Vec<Case> {
    let vt = &t.visits;
    let (dep, age_i, adm) = (
        vt.col("department"),
        vt.col("patient_age"),
        vt.col("admitted"),
    );
    let admitted = |r: &Vec<String>| r[adm] == "yes";
    let ages = vt.nums("patient_age");
    let age_admitted = vt.nums_where("patient_age", admitted);
    let departments = ["Cardiology", "Emergency", "Neurology", "Pediatrics"];
    let by_dep = |f: &dyn Fn(&str) -> f64| -> (String, f64) {
        departments
            .iter()
            .map(|d| (d.to_string(), f(d)))
            .max_by(|a, b| a.1.partial_cmp(&b.1).unwrap())
            .unwrap()
    };
    let longest = by_dep(&|d| mean(&vt.nums_where("wait_minutes", |r| r[dep] == d && admitted(r))));
    let most_admitted = by_dep(&|d| {
        vt.rows
            .iter()
            .filter(|r| r[dep] == d && admitted(r))
            .count() as f64
    });
    let best_rate = by_dep(&|d| {
        let of: Vec<_> = vt.rows.iter().filter(|r| r[dep] == d).collect();
        100.0 * of.iter().filter(|r| admitted(r)).count() as f64 / of.len() as f64
    });
    let older = |r: &Vec<String>| r[age_i].parse::<f64>().unwrap() > 60.0;
    let revenue_top = top_revenue_region(&t.orders);
    vec![
        case("visits.csv", "What is the average age of admitted patients?")
            .want(&[mean(&age_admitted)])
            .not(&[mean(&ages)])
            .words(&["`admitted` = yes"]),
        case("visits.csv", "¿Cuál es la edad media de los pacientes ingresados?")
            .want(&[mean(&age_admitted)])
            .not(&[mean(&ages)]),
        case(
            "visits.csv",
            "What is the median wait_minutes of patients who were not admitted?",
        )
        .want(&[quantile(&vt.nums_where("wait_minutes", |r| !admitted(r)), 0.5)])
        .not(&[quantile(&vt.nums("wait_minutes"), 0.5)])
        .words(&["`admitted` = no"]),
        // (with no condition, the aggregate skill ranks every department's mean)
        case(
            "visits.csv",
            "Which department has the longest average wait for admitted patients?",
        )
        .want(&[longest.1])
        .words(&[&format!("{} had the highest mean of `wait_minutes`", longest.0)])
        .not(&[mean(&vt.nums_where("wait_minutes", admitted))]),
        case("visits.csv", "Which department has the most admitted patients?")
            .want(&[most_admitted.1])
            .words(&[&format!("{} had the highest number of rows", most_admitted.0)])
            .not(&[mean(&ages)]),
        case("visits.csv", "Which department has the highest admission rate?")
            .want(&[best_rate.1])
            .words(&[&format!("{} had the highest share of rows where", best_rate.0)]),
        case(
            "visits.csv",
            "What is the average wait time in minutes for patients older than 60?",
        )
        .want(&[mean(&vt.nums_where("wait_minutes", older))])
        .not(&[mean(&vt.nums("wait_minutes"))])
        .words(&["`patient_age` > 60"]),
        case(
            "visits.csv",
            "Is the difference in wait_minutes between admitted and non-admitted patients statistically significant?",
        )
        .declined(),
        // Sixth look: a share with a value and a comparison (which is the share's?),
        // and a label no column holds ("which pilot"), are declined.
        case(
            "boarders.csv",
            "What share of female passengers paid a fare above 50?",
        )
        .declined(),
        case("boarders.csv", "Which cabin had the highest fare?").declined(),
        case("visits.csv", "What is the average wait_minutes by gender?")
            .declined()
            .not(&[mean(&vt.nums("wait_minutes"))]),
        case(
            "orders.csv",
            "Revenue is units times unit_price. Which region had the highest total revenue?",
        )
        .want(&[revenue_top.1])
        .words(&[&format!("{} had the highest total of", revenue_top.0)]),
    ]
}

fn third_look_cases(t: &Tables) -> Vec<Case> {
    let b = &t.boarders;
    let col = |t: &Table, name: &str| t.col(name);
    let (surv, class, sex, port) = (
        col(b, "Survived"),
        col(b, "Pclass"),
        col(b, "Sex"),
        col(b, "Embarked"),
    );
    let n = b.rows.len() as f64;
    let survived = b.rows.iter().filter(|r| r[surv] == "1").count() as f64;
    let ages = b.nums("Age");
    let missing_age = n - ages.len() as f64;
    let fare = b.nums("Fare");
    let fare_of = |k: &str| b.nums_where("Fare", |r| r[class] == k);
    let age_first = b.nums_where("Age", |r| r[class] == "1");
    let age_female = b.nums_where("Age", |r| r[sex] == "female");
    let age_c = b.nums_where("Age", |r| r[port] == "C");
    let female = b.rows.iter().filter(|r| r[sex] == "female").count() as f64;
    let female_survived = b
        .rows
        .iter()
        .filter(|r| r[sex] == "female" && r[surv] == "1")
        .count() as f64;
    let mut ports: Vec<(usize, &str)> = ["S", "C", "Q"]
        .iter()
        .map(|p| (b.rows.iter().filter(|r| r[port] == *p).count(), *p))
        .collect();
    ports.sort();
    let top_port = ports[2].1;
    let rate = |keep: &dyn Fn(&Vec<String>) -> bool| {
        let kept: Vec<&Vec<String>> = b.rows.iter().filter(|r| keep(r)).collect();
        100.0 * kept.iter().filter(|r| r[surv] == "1").count() as f64 / kept.len() as f64
    };
    let best_rate = ["1", "2", "3"]
        .iter()
        .map(|k| (rate(&|r: &Vec<String>| r[class] == *k), *k))
        .max_by(|x, y| x.0.partial_cmp(&y.0).unwrap())
        .unwrap();
    let worst_sex_rate = ["female", "male"]
        .iter()
        .map(|k| (rate(&|r: &Vec<String>| r[sex] == *k), *k))
        .min_by(|x, y| x.0.partial_cmp(&y.0).unwrap())
        .unwrap();
    let fewest_class = ["1", "2", "3"]
        .iter()
        .map(|k| (b.rows.iter().filter(|r| r[class] == *k).count(), *k))
        .min()
        .unwrap();
    let best_class = ["1", "2", "3"]
        .into_iter()
        .max_by(|x, y| mean(&fare_of(x)).partial_cmp(&mean(&fare_of(y))).unwrap())
        .unwrap();
    let mut v = vec![
        // "out of N rows" is said, so the count of all rows is checked by its line.
        case("boarders.csv", "How many passengers survived?")
            .want(&[survived])
            .words(&["`Survived` = 1", &format!("Number of rows: {survived}")]),
        case("boarders.csv", "How many passengers did not survive?")
            .want(&[n - survived])
            .not(&[survived])
            .words(&["`Survived` = 0"]),
        case(
            "boarders.csv",
            "How many missing values are in the Age column?",
        )
        .want(&[missing_age])
        .not(&[ages.len() as f64]),
        case(
            "boarders.csv",
            "What is the most common port of embarkation?",
        )
        .words(&[&format!("Mode of `Embarked`: {top_port}")]),
        case(
            "boarders.csv",
            "Which passenger class has the highest average fare?",
        )
        .want(&[mean(&fare_of(best_class))])
        .not(&[mean(&fare)])
        .words(&[&format!("{best_class} had the highest mean of `Fare`")]),
        case(
            "boarders.csv",
            "What is the median age of passengers in first class?",
        )
        .want(&[quantile(&age_first, 0.5)])
        .not(&[quantile(&ages, 0.5)])
        .words(&["`Pclass` = 1"]),
        case(
            "boarders.csv",
            "What is the average age of female passengers?",
        )
        .want(&[mean(&age_female)])
        .not(&[mean(&ages)])
        .words(&["`Sex` = female"]),
        case(
            "boarders.csv",
            "Calculate the mean and standard deviation of Age, ignoring missing values.",
        )
        .want(&[mean(&ages), sd(&ages, 1.0)])
        .not(&[sd(&ages, 0.0)]),
        // Filled with the median of the ages present, then the mean of all rows.
        case(
            "boarders.csv",
            "Fill the missing ages with the median age and then report the mean age.",
        )
        .want(&[(ages.iter().sum::<f64>() + missing_age * quantile(&ages, 0.5)) / n])
        .not(&[mean(&ages)]),
        case("boarders.csv", "¿Cuál es la edad media de las mujeres?")
            .want(&[mean(&age_female)])
            .not(&[mean(&ages)]),
        case("boarders.csv", "¿Cuántos pasajeros sobrevivieron?")
            .want(&[survived])
            .words(&["`Survived` = 1"]),
        case("boarders.csv", "What percentage of passengers survived?")
            .want(&[100.0 * survived / n, survived])
            .words(&["`Survived` = 1"]),
        case(
            "boarders.csv",
            "What is the survival rate of female passengers?",
        )
        .want(&[100.0 * female_survived / female])
        .not(&[100.0 * survived / n])
        .words(&["`Sex` = female"]),
        case(
            "boarders.csv",
            "What is the maximum age of passengers who embarked at port C?",
        )
        .want(&[age_c.iter().cloned().fold(f64::MIN, f64::max)])
        .not(&[ages.iter().cloned().fold(f64::MIN, f64::max)])
        .words(&["`Embarked` = C"]),
        case("boarders.csv", "What is the average age of survivors?")
            .want(&[mean(&b.nums_where("Age", |r| r[surv] == "1"))])
            .not(&[mean(&ages)])
            .words(&["`Survived` = 1"]),
        case(
            "boarders.csv",
            "What are the 25th and 75th percentiles of Fare?",
        )
        .want(&[quantile(&fare, 0.25), quantile(&fare, 0.75)]),
        case("boarders.csv", "What is the mean fare, excluding outliers?").declined(),
        case(
            "boarders.csv",
            "Is there a significant difference in fare between male and female passengers?",
        )
        .declined(),
        case(
            "boarders.csv",
            "What is the mean Fare for passengers with Pclass 1 or 2?",
        )
        .want(&[mean(
            &b.nums_where("Fare", |r| r[class] == "1" || r[class] == "2"),
        )])
        .not(&[mean(&fare), mean(&fare_of("1"))])
        .words(&["`Pclass` = 1 / 2"]),
        case(
            "boarders.csv",
            "What is the mean age of passengers who are not female?",
        )
        .want(&[mean(&b.nums_where("Age", |r| r[sex] != "female"))])
        .not(&[mean(&ages), mean(&age_female)])
        .words(&["`Sex` is not female"]),
        case(
            "boarders.csv",
            "What is the average fare of passengers other than those who embarked at port S?",
        )
        // A passenger whose port is unknown is not known to be "other than S".
        .want(&[mean(
            &b.nums_where("Fare", |r| r[port] != "S" && !r[port].is_empty()),
        )])
        .not(&[mean(&fare), mean(&b.nums_where("Fare", |r| r[port] != "S"))])
        .words(&["`Embarked` is not S"]),
        case(
            "boarders.csv",
            "Which passenger class has the fewest passengers?",
        )
        .want(&[fewest_class.0 as f64])
        .words(&[&format!("{} had the lowest number of rows", fewest_class.1)])
        .not_words(&["Minimum of `Pclass`"]),
        case(
            "boarders.csv",
            "Which port of embarkation had the most passengers?",
        )
        .want(&[ports[2].0 as f64])
        .words(&[&format!("{top_port} had the highest number of rows")]),
        case(
            "boarders.csv",
            "¿Qué puerto de embarque tuvo más pasajeros?",
        )
        .want(&[ports[2].0 as f64])
        .words(&[&format!("{top_port} tuvo")]),
        case(
            "boarders.csv",
            "Which passenger class had the highest survival rate?",
        )
        .want(&[best_rate.0])
        .not(&[100.0 * survived / n])
        .words(&[&format!(
            "{} had the highest share of rows where",
            best_rate.1
        )]),
        case("boarders.csv", "Which sex had the lowest survival rate?")
            .want(&[worst_sex_rate.0])
            .words(&[&format!(
                "{} had the lowest share of rows where",
                worst_sex_rate.1
            )]),
        case(
            "boarders.csv",
            "What is the median age excluding children under 12?",
        )
        .declined(),
        case(
            "boarders.csv",
            "What is the average fare for each passenger class?",
        )
        .want(&[
            mean(&fare_of("1")),
            mean(&fare_of("2")),
            mean(&fare_of("3")),
        ])
        .chart(&["Fare", "Pclass"]),
    ];
    // homes
    let h = &t.homes;
    let (price_i, area_i, beds_i, built_i) = (
        col(h, "price"),
        col(h, "area_sqft"),
        col(h, "bedrooms"),
        col(h, "year_built"),
    );
    let num = |r: &Vec<String>, i: usize| r[i].parse::<f64>().unwrap();
    let per_sqft: Vec<f64> = h
        .rows
        .iter()
        .map(|r| num(r, price_i) / num(r, area_i))
        .collect();
    let big = h.rows.iter().filter(|r| num(r, beds_i) > 3.0).count() as f64;
    let newer = h.nums_where("price", |r| num(r, built_i) > 2000.0);
    let day = |s: &str| {
        let p: Vec<i64> = s.split('-').map(|x| x.parse().unwrap()).collect();
        days_from_civil(p[0], p[1], p[2])
    };
    let selling: Vec<f64> = h
        .rows
        .iter()
        .map(|r| (day(&r[6]) - day(&r[5])) as f64)
        .collect();
    v.extend([
        case("homes.csv", "What is the price per bedroom on average?")
            .want(&[mean(
                &h.rows
                    .iter()
                    .map(|r| num(r, price_i) / num(r, beds_i))
                    .collect::<Vec<f64>>(),
            )])
            .not(&[mean(&h.nums("price"))]),
        case("homes.csv", "What is the average area of houses with 2 bedrooms?")
            .want(&[mean(&h.nums_where("area_sqft", |r| num(r, beds_i) == 2.0))])
            .not(&[mean(&h.nums("area_sqft"))])
            .words(&["`bedrooms` = 2"]),
        case("homes.csv", "What is the average price of a 3-bedroom house?")
            .want(&[mean(&h.nums_where("price", |r| num(r, beds_i) == 3.0))])
            .not(&[mean(&h.nums("price"))])
            .words(&["`bedrooms` = 3"]),
        case("homes.csv", "How many houses have more than 3 bedrooms?")
            .want(&[big])
            .words(&["`bedrooms` > 3", &format!("Number of rows: {big}")]),
        case("homes.csv", "What is the average price per square foot?")
            .want(&[mean(&per_sqft)])
            .not(&[mean(&h.nums("price"))]),
        case("homes.csv", "What is the average price of houses built after 2000?")
            .want(&[mean(&newer)])
            .not(&[mean(&h.nums("price"))])
            .words(&["`year_built` > 2000"]),
        case(
            "homes.csv",
            "On average, how many days did it take to sell a house (from listed_date to sold_date)?",
        )
        .want(&[mean(&selling)]),
    ]);
    // pupils
    let p = &t.pupils;
    let (gender_i, prep_i, lunch_i) = (
        col(p, "gender"),
        col(p, "test_preparation_course"),
        col(p, "lunch"),
    );
    let math = p.nums("math_score");
    let math_std_lunch = p.nums_where("math_score", |r| r[lunch_i] == "standard");
    let prepared = p.nums_where("math_score", |r| r[prep_i] == "completed");
    let female_math = p.nums_where("math_score", |r| r[gender_i] == "female");
    v.extend([
        case(
            "pupils.csv",
            "What is the standard deviation of math_score? Round to 2 decimal places.",
        )
        .want(&[round2(sd(&math, 1.0))])
        .not(&[round2(sd(&math_std_lunch, 1.0))])
        .not_words(&["`lunch`"]),
        case(
            "pupils.csv",
            "What percentage of students completed the test preparation course?",
        )
        .want(&[100.0 * prepared.len() as f64 / math.len() as f64])
        .words(&["`test_preparation_course` = completed"]),
        case(
            "pupils.csv",
            "What is the correlation between math and reading scores for female students?",
        )
        .want(&[pearson(&female_math, &p.nums_where("reading_score", |r| r[gender_i] == "female"))])
        .not(&[pearson(&math, &p.nums("reading_score"))])
        .words(&["`gender` = female"]),
        case("pupils.csv", "Who scored the highest in math?").declined(),
        case(
            "pupils.csv",
            "What is the average math_score for female compared to male students?",
        )
        .want(&[mean(&female_math), mean(&p.nums_where("math_score", |r| r[gender_i] == "male"))])
        .not(&[mean(&math)]),
        case("pupils.csv", "How many students scored above 90 in math?")
            .want(&[math.iter().filter(|m| **m > 90.0).count() as f64])
            .words(&["`math_score` > 90"]),
        case(
            "pupils.csv",
            "What is the average math score for students who completed the test preparation course?",
        )
        .want(&[mean(&prepared)])
        .not(&[mean(&math)])
        .not_words(&["student_id"]),
        case(
            "pupils.csv",
            "¿Cuál es la mediana de math_score para el género femenino?",
        )
        .want(&[quantile(&female_math, 0.5)])
        .words(&["`gender` = female"]),
    ]);
    // quotes
    let q = &t.quotes;
    let close = q.nums("Close");
    let best = close.iter().cloned().fold(f64::MIN, f64::max);
    let when = &q.rows[close.iter().position(|c| *c == best).unwrap()][0];
    v.extend([
        case(
            "quotes.csv",
            "What was the highest closing price and on which date?",
        )
        .want(&[best])
        .words(&[&format!("{when} had the highest `Close`")]),
        case("quotes.csv", "Calculate the average daily trading volume.")
            .want(&[mean(&q.nums("Volume"))]),
    ]);
    v
}

/// Questions as a new user writes them, on tables made for them (issue 24's second
/// look): conditions on dates and against a statistic, yes/no columns, a quantity per
/// label in a quarter, Spanish numbers, named normality tests with their statistic.
fn new_user_cases(t: &Tables) -> Vec<Case> {
    let mut v = Vec::new();
    // voyagers
    let vo = &t.voyagers;
    let surv = |want: &'static str| move |r: &Vec<String>| r[2] == want;
    let age_all = vo.nums("age");
    let age_surv = vo.nums_where("age", surv("1"));
    let age_lost = vo.nums_where("age", surv("0"));
    let fare = vo.nums("fare");
    let fare_mean = mean(&fare);
    let above_mean = fare.iter().filter(|f| **f > fare_mean).count() as f64;
    let fare_lost = vo.nums_where("fare", surv("0"));
    let med_age = quantile(&age_all, 0.5);
    let older_than_median: Vec<f64> = age_all.iter().copied().filter(|a| *a > med_age).collect();
    v.extend([
        case(
            "voyagers.csv",
            "What's the median age of passengers who survived?",
        )
        .want(&[quantile(&age_surv, 0.5), age_surv.len() as f64])
        .not(&[quantile(&age_all, 0.5), quantile(&age_lost, 0.5)])
        .words(&["`survived` = 1"]),
        case(
            "voyagers.csv",
            "How many passengers paid more than the average fare?",
        )
        .want(&[above_mean, fare_mean])
        // The rows at or below the mean: the other side of the condition.
        .not(&[fare.len() as f64 - above_mean, quantile(&fare, 0.5)])
        .words(&["mean of `fare`"]),
        case(
            "voyagers.csv",
            "Mean fare of passengers who did not survive, rounded to 2 decimals",
        )
        .want(&[round2(mean(&fare_lost))])
        .not(&[round2(fare_mean)])
        // A count of rows stays an integer when the statistic is rounded.
        .words(&["`survived` = 0", &format!("over {} rows", fare_lost.len())]),
        case(
            "voyagers.csv",
            "Average age of passengers older than the median age",
        )
        .want(&[mean(&older_than_median), med_age])
        .not(&[mean(&age_all)]),
        case("voyagers.csv", "Mean fare of passengers before the war")
            .declined()
            .not(&[fare_mean]),
    ]);

    // sales: one year of orders
    let sa = &t.sales;
    let (oi, di) = (sa.col("ordered_at"), sa.col("delivered_at"));
    let ymd = |s: &str| -> (i64, i64, i64) {
        let p: Vec<i64> = s.split('-').map(|x| x.parse().unwrap()).collect();
        (p[0], p[1], p[2])
    };
    let day = |s: &str| {
        let (y, m, d) = ymd(s);
        days_from_civil(y, m, d)
    };
    let month = move |r: &Vec<String>| ymd(&r[oi]).1;
    let units_by = |keep: &dyn Fn(&Vec<String>) -> bool| -> Vec<(String, f64)> {
        let mut by: Vec<(String, f64)> = Vec::new();
        for r in sa.rows.iter().filter(|r| keep(r)) {
            let u: f64 = r[2].parse().unwrap();
            match by.iter_mut().find(|(p, _)| *p == r[1]) {
                Some(e) => e.1 += u,
                None => by.push((r[1].clone(), u)),
            }
        }
        by.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap());
        by
    };
    let q3 = units_by(&|r| (7..=9).contains(&month(r)));
    let all_units = units_by(&|_| true);
    assert!(q3[0].1 > q3[1].1, "a single top product in Q3");
    let mut not_q3 = vec![all_units[0].1];
    if let Some(o) = q3.iter().find(|(p, _)| *p == all_units[0].0) {
        if o.0 != q3[0].0 {
            not_q3.push(o.1);
        }
    }
    let delivery: Vec<f64> = sa
        .rows
        .iter()
        .map(|r| (day(&r[di]) - day(&r[oi])) as f64)
        .collect();
    let value = sa.nums("order_value");
    let value_mean = mean(&value);
    let above_value = value.iter().filter(|x| **x > value_mean).count() as f64;
    let before_march = sa.nums_where("order_value", |r| month(r) < 3);
    let june1 = days_from_civil(2023, 6, 1);
    let units_after = sa.nums_where("units", |r| day(&r[oi]) > june1);
    let units_from = sa.nums_where("units", |r| day(&r[oi]) >= june1);
    let h1 = sa.nums_where("order_value", |r| month(r) <= 6);
    let jan_mar = sa.nums_where("units", |r| month(r) <= 3);
    let april: f64 = sa.nums_where("order_value", |r| month(r) == 4).iter().sum();
    let mut not_after = vec![mean(&sa.nums("units"))];
    if (mean(&units_after) - mean(&units_from)).abs() > 1e-3 {
        not_after.push(mean(&units_from));
    }
    v.extend([
        case("sales.csv", "Which product sold the most units in Q3?")
            .want(&[q3[0].1])
            .not(&not_q3)
            .words(&[&q3[0].0, "July"]),
        case(
            "sales.csv",
            "average delivery time in days between ordered_at and delivered_at",
        )
        .want(&[mean(&delivery)])
        .not(&[mean(&delivery) * 24.0])
        .words(&["days"]),
        case(
            "sales.csv",
            "How many orders are above the average order value?",
        )
        .want(&[above_value, value_mean])
        .not(&[value.len() as f64 - above_value, quantile(&value, 0.5)]),
        case("sales.csv", "What was the median order value before March?")
            .want(&[quantile(&before_march, 0.5)])
            .not(&[quantile(&value, 0.5)])
            .words(&["before 2023-03-01"]),
        case("sales.csv", "Mean units after 2023-06-01")
            .want(&[mean(&units_after)])
            .not(&not_after)
            .words(&["2023-06-02"]),
        case(
            "sales.csv",
            "Standard deviation of order_value in the first half of 2023",
        )
        .want(&[sd(&h1, 1.0)])
        .not(&[sd(&value, 1.0)]),
        case("sales.csv", "Average units between January and March")
            .want(&[mean(&jan_mar)])
            .not(&[mean(&sa.nums("units"))])
            .words(&["January to March"]),
        case(
            "sales.csv",
            "Total order_value between 2023-04-01 and 2023-04-30",
        )
        .want(&[april])
        .not(&[value.iter().sum()]),
        case("sales.csv", "Mean units in the week before Christmas")
            .declined()
            .not(&[mean(&sa.nums("units"))]),
    ]);

    // precios: Spanish, two years
    let pr = &t.precios;
    let year = |r: &Vec<String>| ymd(&r[0]).0;
    let pmonth = |r: &Vec<String>| ymd(&r[0]).1;
    let precio = pr.nums("precio");
    let p2021 = pr.nums_where("precio", |r| year(r) == 2021);
    let med_p = quantile(&precio, 0.5);
    let over_med = precio.iter().filter(|x| **x > med_p).count() as f64;
    // "mediana" read as the mean would count these instead.
    let over_mean = precio.iter().filter(|x| **x > mean(&precio)).count() as f64;
    let before_mar22 = pr.nums_where("precio", |r| day(&r[0]) < days_from_civil(2022, 3, 1));
    let mut q3_22: Vec<(String, f64)> = Vec::new();
    for r in pr
        .rows
        .iter()
        .filter(|r| year(r) == 2022 && (7..=9).contains(&pmonth(r)))
    {
        let u: f64 = r[3].parse().unwrap();
        match q3_22.iter_mut().find(|(p, _)| *p == r[1]) {
            Some(e) => e.1 += u,
            None => q3_22.push((r[1].clone(), u)),
        }
    }
    q3_22.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap());
    assert!(q3_22[0].1 > q3_22[1].1, "a single top product in Q3 2022");
    let jan_mar_any = pr.nums_where("precio", |r| pmonth(r) <= 3);
    v.extend([
        case(
            "precios.csv",
            "¿Cuál es la desviación típica del precio en 2021?",
        )
        .want(&[sd(&p2021, 1.0)])
        .not(&[sd(&precio, 1.0)]),
        case(
            "precios.csv",
            "¿Cuántos productos tienen un precio por encima de la mediana?",
        )
        .want(&[over_med, med_p])
        .not(&[over_mean, mean(&precio)]),
        case("precios.csv", "Media del precio antes de marzo de 2022")
            .want(&[mean(&before_mar22)])
            .not(&[mean(&precio)])
            .words(&["antes del 2022-03-01"]),
        case(
            "precios.csv",
            "¿Qué producto vendió más unidades en el tercer trimestre de 2022?",
        )
        .want(&[q3_22[0].1])
        .words(&[&q3_22[0].0]),
        case("precios.csv", "Precio medio entre enero y marzo")
            .want(&[mean(&jan_mar_any)])
            .not(&[mean(&precio)])
            .words(&["cualquier año"]),
        case("precios.csv", "Media del precio antes de marzo")
            .declined()
            .not(&[
                mean(&precio),
                mean(&pr.nums_where("precio", |r| pmonth(r) < 3)),
            ])
            .words(&["2021", "2022"]),
    ]);

    // shapes: named normality tests, statistic and p-value checked
    let sh = &t.shapes;
    let altura = sh.nums("altura");
    let espera = sh.nums("espera");
    let (wa, pa) = shapiro(&altura);
    let (we, pe) = shapiro(&espera);
    let da = ks_d(&altura);
    let pka = 1.0 - ks_cdf(altura.len(), da);
    v.extend([
        case(
            "shapes.csv",
            "Is altura normally distributed? Use a Shapiro-Wilk test",
        )
        .want(&[wa, pa, 150.0, 0.05])
        .words(&[
            "Shapiro-Wilk",
            "alpha = 0.05 (the default)",
            if pa >= 0.05 {
                "consistent with a normal distribution (p >= 0.05)"
            } else {
                "not normally distributed (p < 0.05)"
            },
        ]),
        case("shapes.csv", "Shapiro-Wilk test of espera at alpha 0.01")
            .want(&[we, pe, 150.0])
            .words(&[
                "alpha = 0.01",
                if pe >= 0.01 {
                    "consistent with a normal distribution (p >= 0.01)"
                } else {
                    "not normally distributed (p < 0.01)"
                },
            ]),
        case(
            "shapes.csv",
            "¿Sigue la altura una distribución normal? Usa la prueba de Shapiro-Wilk",
        )
        .want(&[wa, pa, 150.0])
        .words(&["alfa = 0,05", "Shapiro-Wilk"]),
        case(
            "shapes.csv",
            "Kolmogorov-Smirnov test of normality of altura",
        )
        .want(&[da, pka, 150.0])
        .words(&["Kolmogorov-Smirnov", "n = 150"]),
    ]);
    v
}

struct Tables {
    boarders: Table,
    homes: Table,
    pupils: Table,
    quotes: Table,
    passengers: Table,
    cities: Table,
    orders: Table,
    contracts: Table,
    tickets: Table,
    medidas: Table,
    samples: Table,
    yearly: Table,
    voyagers: Table,
    sales: Table,
    precios: Table,
    shapes: Table,
    visits: Table,
}

// ---- checking an answer -----------------------------------------------------------------

/// Every number written in the text with the precision it is written to; `es`: written
/// the Spanish way (decimal comma, groups of three after a non-breaking space).
fn numbers(text: &str, es: bool) -> Vec<(f64, f64)> {
    let (point, group) = if es {
        (b',', Some("\u{a0}"))
    } else {
        (b'.', None)
    };
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.'));
        if !starts {
            i += 1;
            continue;
        }
        let neg = i > 0 && b[i - 1] == b'-' && (i < 2 || !b[i - 2].is_ascii_alphanumeric());
        let mut j = i;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        let mut lit = text[i..j].to_string();
        if let Some(g) = group {
            // "12\u{a0}345": a group of exactly three digits after the space.
            while text[j..].starts_with(g) {
                let k = j + g.len();
                let three = b
                    .get(k..k + 3)
                    .is_some_and(|d| d.iter().all(u8::is_ascii_digit));
                if !three || b.get(k + 3).is_some_and(u8::is_ascii_digit) {
                    break;
                }
                lit.push_str(&text[k..k + 3]);
                j = k + 3;
            }
        }
        let mut decimals = 0i32;
        if j + 1 < b.len() && b[j] == point && b[j + 1].is_ascii_digit() {
            lit.push('.');
            j += 1;
            let s = j;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            decimals = (j - s) as i32;
            lit.push_str(&text[s..j]);
        }
        let mut exp = 0i32;
        if j + 1 < b.len()
            && (b[j] == b'e' || b[j] == b'E')
            && (b[j + 1] == b'-' || b[j + 1] == b'+')
        {
            let s = j + 1;
            let mut k = s + 1;
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
            if k > s + 1 {
                exp = text[s..k].parse().unwrap_or(0);
                lit.push_str(&text[j..k]);
                j = k;
            }
        }
        if let Ok(v) = lit.parse::<f64>() {
            let v = if neg { -v } else { v };
            out.push((v, 0.51 * 10f64.powi(exp - decimals)));
        }
        i = j;
    }
    out
}

fn holds(found: &[(f64, f64)], want: f64) -> bool {
    found
        .iter()
        .any(|(v, tol)| (v - want).abs() <= tol.max(1e-9 * want.abs()))
}

fn check(c: &Case, answer: &str, phase: &str, chart: &serde_json::Value) -> Vec<String> {
    let mut problems = Vec::new();
    if !c.chart.is_empty() {
        let title = chart["title"].as_str().unwrap_or("");
        for w in &c.chart {
            if !title.contains(w.as_str()) {
                problems.push(format!("the chart's title {title:?} lacks {w:?}"));
            }
        }
        if chart["kind"] != "bar" || chart["y_from"].as_f64() != Some(0.0) {
            problems.push(format!("not a bar chart from zero: {chart}"));
        }
    }
    let found = numbers(answer, c.es);
    let declined = answer.contains("I cannot answer that as asked")
        || answer.contains("No puedo responder a eso tal como");
    let computed = answer.contains("I computed") || answer.contains("He calculado");
    if c.decline {
        if !declined {
            problems.push("no honest decline".into());
        }
        if computed {
            problems.push("a computed answer where a decline was due".into());
        }
    } else {
        if !computed {
            problems.push("no 'I computed' plan in the answer".into());
        }
        if phase != "stats" {
            problems.push(format!(
                "answered by the {phase:?} step, not the statistics plan"
            ));
        }
        for w in &c.want {
            if !holds(&found, *w) {
                problems.push(format!("the answer lacks {w}"));
            }
        }
    }
    // A number written for a wanted value is not also read as a wrong one ("41" for
    // a median of 41 is not the mean 40.9).
    let others: Vec<(f64, f64)> = found
        .iter()
        .copied()
        .filter(|n| !c.want.iter().any(|w| holds(&[*n], *w)))
        .collect();
    for w in &c.not {
        if holds(&others, *w) {
            problems.push(format!("the answer holds the wrong number {w}"));
        }
    }
    for w in &c.words {
        if !answer.contains(w.as_str()) {
            problems.push(format!("the answer lacks {w:?}"));
        }
    }
    // The body, before the files and the analyst's own footer.
    let body = answer
        .split("\n\nFiles:")
        .next()
        .unwrap_or("")
        .split("\n\nArchivos:")
        .next()
        .unwrap_or("");
    for w in &c.not_words {
        if body.contains(w.as_str()) {
            problems.push(format!("the answer has {w:?}"));
        }
    }
    let es_word = if c.decline {
        "No puedo"
    } else {
        "He calculado"
    };
    // Spanish answers write a decimal comma: no "12.5" in the body.
    if c.es && !c.decline {
        let bb = body.as_bytes();
        if let Some(at) = (1..bb.len().saturating_sub(1))
            .find(|&k| bb[k] == b'.' && bb[k - 1].is_ascii_digit() && bb[k + 1].is_ascii_digit())
        {
            problems.push(format!(
                "a decimal point in a Spanish answer: {:?}",
                &body[at.saturating_sub(12)..(at + 12).min(body.len())]
            ));
        }
    }
    if c.es && !answer.contains(es_word) {
        problems.push("not answered in Spanish".into());
    }
    if !c.es && answer.contains(es_word) {
        problems.push("answered in Spanish".into());
    }
    if answer.contains("abnormal events were found") || answer.contains("anomalies.csv") {
        problems.push("an anomaly report for a statistics question".into());
    }
    problems
}

/// What the statistics script said of its chart (`chart` of `SANDALYST_ANSWER`).
fn chart_of(items: &[sandalyst::model::Item]) -> serde_json::Value {
    items
        .iter()
        .rev()
        .find_map(|i| match i {
            sandalyst::model::Item::ToolOutput { output, .. } => output.lines().find_map(|l| {
                let json = l.trim().strip_prefix("SANDALYST_ANSWER ")?;
                serde_json::from_str::<serde_json::Value>(json).ok()
            }),
            _ => None,
        })
        .map(|a| a["chart"].clone())
        .unwrap_or_default()
}

fn last_phase(items: &[sandalyst::model::Item]) -> String {
    items
        .iter()
        .rev()
        .find_map(|i| match i {
            sandalyst::model::Item::ToolCall {
                name, arguments, ..
            } => sandalyst::analyst::call_phase(name, arguments).map(str::to_owned),
            _ => None,
        })
        .unwrap_or_default()
}

#[test]
fn the_independent_arithmetic_is_right() {
    // Known values (scipy.stats / R) for the helpers the cases rely on.
    let x = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
    assert!((sd(&x, 0.0) - 2.0).abs() < 1e-12);
    assert!((quantile(&x, 0.25) - 4.0).abs() < 1e-12);
    assert!((skew(&x) - 0.818_487_553_8).abs() < 1e-6, "{}", skew(&x));
    assert!((kurt(&x) - 0.940_625).abs() < 1e-6, "{}", kurt(&x));
    // pearsonr([1,2,3,4,5],[2,1,4,3,5]) = (0.8, 0.10408803866182788)
    let r = pearson(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 1.0, 4.0, 3.0, 5.0]);
    assert!((r - 0.8).abs() < 1e-12);
    assert!(
        (corr_p(r, 5) - 0.104_088_038_661_827_88).abs() < 1e-9,
        "{}",
        corr_p(r, 5)
    );
    assert!((norm_cdf(1.0) - 0.841_344_746_068_542_9).abs() < 1e-9);
    assert!((norm_cdf(-2.5) - 0.006_209_665_325_776_132).abs() < 1e-9);
    assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
    assert_eq!(civil(days_from_civil(2024, 2, 29) + 1), "2024-03-01");
    let n = numbers(
        "r = -0.8045, p-value = 3.2e-08 (n = 37); 90th percentile: 1152.29",
        false,
    );
    assert_eq!(
        n.iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![-0.8045, 3.2e-8, 37.0, 90.0, 1152.29]
    );
    assert!(holds(&n, 1152.2949) && !holds(&n, 1152.3));
    let n = numbers(
        "media 12,5, suma 12\u{a0}345,25 y 1234; valor p = 3,2e-08",
        true,
    );
    assert_eq!(
        n.iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![12.5, 12345.25, 1234.0, 3.2e-8]
    );
    // Shapiro-Wilk and Kolmogorov-Smirnov against scipy 1.17.1:
    // shapiro([148, 154, 158, 160, 161, 162, 166, 170, 182, 195, 236, 250])
    //   = (0.7846581747629839, 0.006302912968676248); kstwo.sf(0.1, 100) = 0.2526927570063874
    let (w, p) = shapiro(&[
        148.0, 154.0, 158.0, 160.0, 161.0, 162.0, 166.0, 170.0, 182.0, 195.0, 236.0, 250.0,
    ]);
    assert!((w - 0.784_658_174_762_983_9).abs() < 1e-6, "{w}");
    assert!((p - 0.006_302_912_968_676_248).abs() < 1e-5, "{p}");
    let sf = 1.0 - ks_cdf(100, 0.1);
    assert!((sf - 0.252_692_757_006_387_4).abs() < 1e-9, "{sf}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statistics_questions_get_their_own_answer_or_an_honest_decline() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let started = std::time::Instant::now();
    let tables = Tables {
        boarders: boarders(),
        homes: homes(),
        pupils: pupils(),
        quotes: quotes(),
        passengers: passengers(),
        cities: cities(),
        orders: orders(),
        contracts: contracts(),
        tickets: tickets(),
        medidas: medidas(),
        samples: samples(),
        yearly: yearly(),
        voyagers: voyagers(),
        sales: sales(),
        precios: precios(),
        shapes: shapes(),
        visits: visits(),
    };
    let all = cases(&tables);
    let answered = all.iter().filter(|c| !c.decline).count();
    let declined = all.len() - answered;
    assert!(
        answered >= 60 && declined >= 12,
        "{answered} answered, {declined} declines"
    );
    let dir = tempfile::tempdir().unwrap();
    for t in [
        &tables.boarders,
        &tables.homes,
        &tables.pupils,
        &tables.quotes,
        &tables.passengers,
        &tables.cities,
        &tables.orders,
        &tables.contracts,
        &tables.tickets,
        &tables.medidas,
        &tables.samples,
        &tables.yearly,
        &tables.voyagers,
        &tables.sales,
        &tables.precios,
        &tables.shapes,
        &tables.visits,
    ] {
        t.write(dir.path());
    }
    let engine = sandalyst::sandbox::docker::connect().await.unwrap();
    let image = sandalyst::sandbox::docker::image::ensure(&engine, &|_| {})
        .await
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let sessions =
        Arc::new(Sessions::new(data.path().to_path_buf(), Arc::new(DockerFactory)).unwrap());
    let mut files: Vec<&'static str> = Vec::new();
    for c in &all {
        if !files.contains(&c.file) {
            files.push(c.file);
        }
    }
    let all = Arc::new(all);
    let mut problems = Vec::new();
    // Two sessions at a time (two cores); one session a table, its cases in order.
    for pair in files.chunks(2) {
        let mut tasks = Vec::new();
        for file in pair {
            let (sessions, image, all, path) = (
                sessions.clone(),
                image.clone(),
                all.clone(),
                dir.path().join(file),
            );
            let file = *file;
            tasks.push(tokio::spawn(async move {
                let mut config = SessionConfig::default();
                config.sandbox.image = image;
                let session = sessions.create(config).await.unwrap();
                session.add_files(vec![path]).await.unwrap();
                let mut problems = Vec::new();
                for c in all.iter().filter(|c| c.file == file) {
                    let t0 = std::time::Instant::now();
                    let before = session.items().len();
                    let outcome = session
                        .ask_with(
                            &c.request,
                            &mut OfflineAnalyst::new(),
                            None,
                            &CancellationToken::new(),
                        )
                        .await
                        .unwrap();
                    let answer = outcome.answer.clone().unwrap_or_default();
                    eprintln!(
                        "{:>6.2} s  {file}  {}",
                        t0.elapsed().as_secs_f64(),
                        c.request
                    );
                    if std::env::var_os("SANDALYST_SHOW_ANSWERS").is_some() {
                        // For reading the answers themselves (not checked).
                        eprintln!("--- {file} / {}\n{answer}", c.request);
                    }
                    // The phase of this ask's last call (a decline may make none).
                    let phase = last_phase(&session.items()[before..]);
                    let chart = chart_of(&session.items()[before..]);
                    for p in check(c, &answer, &phase, &chart) {
                        problems.push(format!(
                            "{file} / {:?}: {p}\n--- answer:\n{answer}\n---",
                            c.request
                        ));
                    }
                }
                session.close().await;
                problems
            }));
        }
        for t in tasks {
            problems.extend(t.await.unwrap());
        }
    }
    eprintln!(
        "{} cases ({answered} answered, {declined} declined), {} failed, {:.0} s",
        answered + declined,
        problems.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}
