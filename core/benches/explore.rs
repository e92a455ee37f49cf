//! Issue 21's data explorer beside DuckDB and pandas on the same files, in one run:
//! a 10,000,000-row CSV (about 650 MB; integer id, float amount with missing cells,
//! a category of 20 values, a date, a datetime, free text) and the same data as
//! Parquet (snappy, row groups of 1Mi rows, as pyarrow writes). Run it through
//! `scripts/bench-explore.sh`, which makes the Python venv with duckdb, pandas and
//! pyarrow (the bench's baselines only).
//!
//! Each figure is the median of several runs. Sandalyst's are timed in this process,
//! cold where that means something: the first page of a file that was never indexed
//! (its modification time is changed before each run), and scans after the explorer's
//! result caches are forgotten ([`explore::forget`]); the OS page cache is warm for
//! every tool alike. DuckDB's queries read the file each time (`read_csv`,
//! `read_parquet`, no table), on all cores, as ours do.
//!
//! Environment: `SANDALYST_BENCH_ROWS` (default 10,000,000), `SANDALYST_BENCH_DIR`
//! (where the generated files are kept between runs), `SANDALYST_BENCH_PYTHON` (a
//! python with duckdb, pandas and pyarrow), `SANDALYST_BENCH_N` (runs, default 5),
//! `SANDALYST_BENCH_ONLY` (`csv` or `parquet`: one format).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use sandalyst::artifacts::csv_index;
use sandalyst::explore::{self, PageRequest, ViewSpec};

const CATEGORIES: usize = 20;

fn rng(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// A batch's columns: id, amount, category, day, at, note.
type Columns = (
    Vec<i64>,
    Vec<Option<f64>>,
    Vec<String>,
    Vec<String>,
    Vec<String>,
    Vec<String>,
);

struct RowGen {
    x: u64,
}

impl RowGen {
    /// Row `i`: (id, amount, category, day, at, note).
    fn row(&mut self, i: u64) -> (i64, Option<f64>, String, String, String, String) {
        let r = rng(&mut self.x);
        let amount = (!r.is_multiple_of(20)).then(|| ((r >> 8) % 100_000) as f64 / 100.0);
        let cat = format!("cat{:02}", (r >> 24) % CATEGORIES as u64);
        let d = 19_000 + ((r >> 32) % 1500) as i64;
        let day = sandalyst::explore::cell::iso_date(d);
        let secs = (r >> 40) % 86_400;
        let at = format!(
            "{day} {:02}:{:02}:{:02}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        );
        let note = format!("w{:x}", (r >> 12) & 0xff_ffff);
        (i as i64, amount, cat, day, at, note)
    }
}

fn generate(dir: &Path, rows: u64) -> (PathBuf, PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let csv = dir.join(format!("explore-{rows}.csv"));
    let pq = dir.join(format!("explore-{rows}.parquet"));
    if !csv.exists() {
        eprintln!("# writing {}", csv.display());
        let tmp = csv.with_extension("tmp");
        let mut f =
            std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp).unwrap());
        writeln!(f, "id,amount,category,day,at,note").unwrap();
        let mut g = RowGen {
            x: 0x2545_F491_4F6C_DD1D,
        };
        for i in 0..rows {
            let (id, amount, cat, day, at, note) = g.row(i);
            let amount = amount.map(|a| format!("{a:.2}")).unwrap_or_default();
            writeln!(f, "{id},{amount},{cat},{day},{at},{note}").unwrap();
        }
        f.flush().unwrap();
        drop(f);
        std::fs::rename(&tmp, &csv).unwrap();
    }
    if !pq.exists() {
        eprintln!("# writing {}", pq.display());
        use parquet::basic::Compression;
        use parquet::file::properties::WriterProperties;
        let tmp = pq.with_extension("tmp");
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(1 << 20))
            .build();
        let mut g = RowGen {
            x: 0x2545_F491_4F6C_DD1D,
        };
        let mut w: Option<parquet::arrow::ArrowWriter<std::fs::File>> = None;
        let mut i = 0u64;
        while i < rows {
            let n = (rows - i).min(100_000);
            let mut cols = Columns::default();
            for k in i..i + n {
                let (id, amount, cat, day, at, note) = g.row(k);
                cols.0.push(id);
                cols.1.push(amount);
                cols.2.push(cat);
                cols.3.push(day);
                cols.4.push(at);
                cols.5.push(note);
            }
            // Dates and datetimes as pandas' to_parquet writes them from text columns
            // read without parse_dates: strings.
            let batch = RecordBatch::try_from_iter([
                ("id", Arc::new(Int64Array::from(cols.0)) as ArrayRef),
                ("amount", Arc::new(Float64Array::from(cols.1)) as ArrayRef),
                ("category", Arc::new(StringArray::from(cols.2)) as ArrayRef),
                ("day", Arc::new(StringArray::from(cols.3)) as ArrayRef),
                ("at", Arc::new(StringArray::from(cols.4)) as ArrayRef),
                ("note", Arc::new(StringArray::from(cols.5)) as ArrayRef),
            ])
            .unwrap();
            let w = w.get_or_insert_with(|| {
                parquet::arrow::ArrowWriter::try_new(
                    std::fs::File::create(&tmp).unwrap(),
                    batch.schema(),
                    Some(props.clone()),
                )
                .unwrap()
            });
            w.write(&batch).unwrap();
            i += n;
        }
        w.unwrap().close().unwrap();
        std::fs::rename(&tmp, &pq).unwrap();
    }
    (csv, pq)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<T>(n: usize, mut before: impl FnMut(), mut f: impl FnMut() -> T) -> Duration {
    median(
        (0..n)
            .map(|_| {
                before();
                let t = Instant::now();
                std::hint::black_box(f());
                t.elapsed()
            })
            .collect(),
    )
}

/// Until the explorer's background indexing and profiling are done.
fn settle() {
    while explore::background_work() > 0 {
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn touch(p: &Path) {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(SystemTime::now()).unwrap();
}

fn peak_rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<f64>().ok())
        .map_or(0.0, |k| k / 1024.0)
}

const FILTER: &str = r#"{"filters": [{"column": 2, "op": "values", "values": ["cat03", "cat07"]}, {"column": 1, "op": "range", "min": "100", "max": "200"}]}"#;
const SORT: &str = r#"{"sort": [{"column": 2}, {"column": 1, "descending": true}]}"#;

struct Ours {
    first: Duration,
    later: Duration,
    summary: Duration,
    profile: Duration,
    filter: Duration,
    filter_rows: usize,
    sort: Duration,
    sorted_later: Duration,
}

fn ours(path: &Path, csv: bool, n: usize) -> Ours {
    let page = |view: &str, offset: usize| {
        explore::page(
            path,
            PageRequest {
                view: serde_json::from_str(view).unwrap(),
                offset,
                limit: 200,
            },
        )
        .unwrap()
    };
    let first = if csv {
        let t = time(
            n,
            || {
                // The last run's background index and profile are done first.
                settle();
                touch(path);
                explore::forget(true);
            },
            || page("{}", 0),
        );
        settle();
        csv_index::warm(path).unwrap();
        t
    } else {
        time(n, || explore::forget(true), || page("{}", 0))
    };
    // The profile (kinds, row starts) once, as the first pages start it.
    explore::forget(true);
    let t = Instant::now();
    explore::view_row_numbers(
        path,
        &serde_json::from_str(r#"{"filters": [{"column": 0, "op": "missing"}]}"#).unwrap(),
    )
    .unwrap();
    let profile = t.elapsed();
    let total = explore::summary(path, &ViewSpec::default())
        .unwrap()
        .total_rows;
    let later = time(n, || {}, || page("{}", total / 2));
    let summary = time(
        n.min(3),
        || explore::forget(false),
        || explore::summary(path, &ViewSpec::default()).unwrap(),
    );
    let mut filter_rows = 0;
    let filter = time(
        n,
        || explore::forget(false),
        || {
            let p = page(FILTER, 0);
            filter_rows = p.kept_rows.unwrap();
            p
        },
    );
    let sort = time(n.min(3), || explore::forget(false), || page(SORT, 0));
    let sorted_later = time(n, || {}, || page(SORT, total / 2));
    Ours {
        first,
        later,
        summary,
        profile,
        filter,
        filter_rows,
        sort,
        sorted_later,
    }
}

const BASELINES: &str = r#"
import json, resource, statistics, sys, time, subprocess
csv_path, pq_path, n, rows, only = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
import duckdb
def t(f, runs=n):
    out = []
    for _ in range(runs):
        s = time.perf_counter(); r = f(); out.append(time.perf_counter() - s)
    return statistics.median(out), r
res = {}
for kind, path, reader in [("csv", csv_path, "read_csv"), ("parquet", pq_path, "read_parquet")]:
    if only and only != kind:
        continue
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    src = f"{reader}('{path}')"
    q = lambda sql: con.execute(sql).fetchall()
    d = {}
    d["first"], _ = t(lambda: q(f"SELECT * FROM {src} LIMIT 200"))
    d["later"], _ = t(lambda: q(f"SELECT * FROM {src} LIMIT 200 OFFSET {rows // 2}"))
    d["summary"], _ = t(lambda: q(f"SUMMARIZE SELECT * FROM {src}"), min(n, 3))
    where = "category IN ('cat03', 'cat07') AND amount BETWEEN 100 AND 200"
    def filt():
        c = q(f"SELECT count(*) FROM {src} WHERE {where}")[0][0]
        q(f"SELECT * FROM {src} WHERE {where} LIMIT 200")
        return c
    d["filter"], d["filter_rows"] = t(filt)
    d["sort"], _ = t(lambda: q(f"SELECT * FROM {src} ORDER BY category, amount DESC NULLS LAST LIMIT 200"), min(n, 3))
    res["duckdb_" + kind] = d
print(json.dumps(res))
"#;

const PANDAS: &str = r#"
import json, resource, sys, time
import pandas as pd
path, kind = sys.argv[1], sys.argv[2]
d = {}
s = time.perf_counter()
df = pd.read_csv(path) if kind == "csv" else pd.read_parquet(path)
d["read"] = time.perf_counter() - s
s = time.perf_counter(); df.describe(include="all"); d["summary"] = time.perf_counter() - s
s = time.perf_counter()
v = df[df["category"].isin(["cat03", "cat07"]) & df["amount"].between(100, 200)]
d["filter"] = time.perf_counter() - s
d["filter_rows"] = len(v)
s = time.perf_counter()
df.sort_values(["category", "amount"], ascending=[True, False], kind="stable", na_position="last").head(200)
d["sort"] = time.perf_counter() - s
d["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(d))
"#;

fn python(py: &str, script: &str, args: &[String]) -> Option<serde_json::Value> {
    let out = Command::new(py)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("# {py} failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    // The last line: a library may print progress before it.
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim().lines().last().unwrap_or_default()).ok()
}

fn ms(d: Duration) -> String {
    let m = d.as_secs_f64() * 1000.0;
    if m < 10.0 {
        format!("{m:.1} ms")
    } else {
        format!("{m:.0} ms")
    }
}

fn secs(v: &serde_json::Value) -> Option<Duration> {
    v.as_f64().map(Duration::from_secs_f64)
}

fn main() {
    let rows: u64 = std::env::var("SANDALYST_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let n: usize = std::env::var("SANDALYST_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let dir = std::env::var_os("SANDALYST_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("sandalyst-bench-explore"));
    let py = std::env::var("SANDALYST_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let (csv, pq) = generate(&dir, rows);
    let mib = |p: &Path| std::fs::metadata(p).unwrap().len() as f64 / (1 << 20) as f64;
    println!(
        "# {rows} rows: CSV {:.0} MiB, Parquet {:.0} MiB; {} threads; median of {n} runs (3 for scans)",
        mib(&csv),
        mib(&pq),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    // SANDALYST_BENCH_ONLY=csv|parquet: one format (a change that touches only one).
    let only = std::env::var("SANDALYST_BENCH_ONLY").unwrap_or_default();
    let wanted = |kind: &str| only.is_empty() || only == kind;
    let mut rss_csv = 0.0;
    let mut results = Vec::new();
    for (kind, path, is_csv) in [("csv", &csv, true), ("parquet", &pq, false)] {
        if wanted(kind) {
            results.push((kind, ours(path, is_csv, n)));
            if is_csv {
                rss_csv = peak_rss_mib();
            }
        }
    }
    let rss = peak_rss_mib();
    let base = python(
        &py,
        BASELINES,
        &[
            csv.display().to_string(),
            pq.display().to_string(),
            n.to_string(),
            rows.to_string(),
            only.clone(),
        ],
    );
    for (kind, o) in &results {
        let kind = *kind;
        let pandas = python(
            &py,
            PANDAS,
            &[
                (if kind == "csv" { &csv } else { &pq })
                    .display()
                    .to_string(),
                kind.into(),
            ],
        );
        let d = base
            .as_ref()
            .map(|b| b[format!("duckdb_{kind}")].clone())
            .unwrap_or_default();
        println!("\n## {kind}\n");
        println!("| operation | Sandalyst | DuckDB | Sandalyst / DuckDB | pandas |");
        println!("|---|---:|---:|---:|---:|");
        let p = pandas.unwrap_or_default();
        let line =
            |name: &str, ours: Duration, duck: Option<Duration>, pandas: Option<Duration>| {
                let ratio = duck.map_or("n/a".into(), |d| {
                    format!("{:.2}x", ours.as_secs_f64() / d.as_secs_f64())
                });
                println!(
                    "| {name} | {} | {} | {ratio} | {} |",
                    ms(ours),
                    duck.map_or("n/a".into(), ms),
                    pandas.map_or("n/a".into(), ms)
                );
            };
        line(
            "first page (200 rows)",
            o.first,
            secs(&d["first"]),
            secs(&p["read"]),
        );
        line(
            &format!("page at row {}", rows / 2),
            o.later,
            secs(&d["later"]),
            None,
        );
        line(
            "profile (kinds, row starts; once per file)",
            o.profile,
            None,
            None,
        );
        line(
            "summary of all columns",
            o.summary,
            secs(&d["summary"]),
            secs(&p["summary"]),
        );
        line(
            &format!("filter: count and first page ({} rows)", o.filter_rows),
            o.filter,
            secs(&d["filter"]),
            secs(&p["filter"]),
        );
        line(
            "sort by two columns: first page",
            o.sort,
            secs(&d["sort"]),
            secs(&p["sort"]),
        );
        line(
            "sorted: page in the middle (order cached)",
            o.sorted_later,
            None,
            None,
        );
        if let Some(dr) = d["filter_rows"].as_u64() {
            assert_eq!(
                dr as usize, o.filter_rows,
                "the filter keeps as many rows as DuckDB's"
            );
        }
        println!(
            "\npandas (first page column: read_csv/read_parquet whole): peak RSS {} MiB",
            p["peak_rss_mib"]
                .as_f64()
                .map_or("n/a".into(), |m| format!("{m:.0}"))
        );
    }
    println!("\nSandalyst peak RSS: {rss_csv:.0} MiB after the CSV runs, {rss:.0} MiB after both");
}
