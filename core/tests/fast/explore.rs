//! The data explorer (issue 21) checked against numbers computed independently: a
//! generated CSV file summarised, filtered and sorted by Python's own `csv` and
//! `statistics` modules (the host's `python3`, standard library only), compared with
//! what the explorer says. Skips with a line where there is no `python3`.

use std::io::Write;
use std::process::Command;

use sandalyst::explore::{self, PageRequest, ViewSpec};

const PY: &str = r##"
import csv, json, statistics, sys
NA = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
      "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
def missing(c):
    return c.strip() == "" or c in NA
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    rows = list(csv.reader(f))
head, rows = rows[0], rows[1:]
out = {"rows": len(rows), "columns": {}}
for i, name in enumerate(head):
    cells = [r[i] if i < len(r) else "" for r in rows]
    present = [c for c in cells if not missing(c)]
    col = {"count": len(present), "missing": len(cells) - len(present)}
    try:
        nums = [float(c) for c in present]
    except ValueError:
        nums = None
    if nums:
        col.update(min=min(nums), max=max(nums), mean=statistics.fmean(nums),
                   std=statistics.stdev(nums), median=statistics.median(nums),
                   distinct=len(set(nums)))
    else:
        col["distinct"] = len(set(present))
        counts = {}
        for c in present:
            counts[c] = counts.get(c, 0) + 1
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].encode()))[:10]
        col["top"] = [[k, n] for k, n in top]
        col["min"], col["max"] = min(present, key=str.encode), max(present, key=str.encode)
    out["columns"][name] = col
def num(c):
    return None if missing(c) else float(c)
kept = [i for i, r in enumerate(rows)
        if r[2] in ("alpha", "gamma") and num(r[1]) is not None and 10 <= num(r[1]) <= 20
        and "X" in r[3].upper()]
out["kept"] = kept
# Sort: category ascending (bytes), then amount descending, missing last; stable.
def key(i):
    r = rows[i]
    a = num(r[1])
    return (missing(r[2]), r[2].encode() if not missing(r[2]) else b"", a is None, -(a or 0.0))
out["sorted"] = sorted(range(len(rows)), key=key)
print(json.dumps(out))
"##;

fn python3() -> Option<&'static str> {
    Command::new("python3")
        .arg("-c")
        .arg("pass")
        .output()
        .ok()?
        .status
        .success()
        .then_some("python3")
}

#[test]
fn summaries_filters_and_sorts_agree_with_pythons_csv_and_statistics() {
    let Some(py) = python3() else {
        eprintln!("skipped: no python3 on this host");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("gen.csv");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    writeln!(f, "id,amount,category,code").unwrap();
    let cats = ["alpha", "beta", "gamma", "", "NA", "delta", "Alpha"];
    let na = ["", "NA", "N/A", "NaN", "null", "None", " "];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..30_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let amount = if x.is_multiple_of(10) {
            na[(x / 10 % na.len() as u64) as usize].to_string()
        } else {
            format!("{:.2}", (x % 4000) as f64 / 100.0 - 5.0)
        };
        let cat = cats[(x / 7 % cats.len() as u64) as usize];
        let code = format!(
            "\"c{}{}\"",
            ["x", "Y", "X,", "z\n"][(x / 3 % 4) as usize],
            i % 97
        );
        writeln!(f, "{i},{amount},{cat},{code}").unwrap();
    }
    drop(f);
    let out = Command::new(py).arg("-c").arg(PY).arg(&p).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

    let s = explore::summary(&p, &ViewSpec::default()).unwrap();
    assert_eq!(s.total_rows as u64, want["rows"].as_u64().unwrap());
    for c in &s.columns {
        let w = &want["columns"][&c.name];
        assert_eq!(c.count, w["count"].as_u64().unwrap(), "{}", c.name);
        assert_eq!(c.missing, w["missing"].as_u64().unwrap(), "{}", c.name);
        assert_eq!(c.distinct, w["distinct"].as_u64().unwrap(), "{}", c.name);
        assert!(c.distinct_exact);
        let close = |a: f64, b: &serde_json::Value| {
            (a - b.as_f64().unwrap()).abs() <= 1e-9 * (1.0 + a.abs())
        };
        if c.kind.is_numeric() {
            assert!(
                close(c.min.as_ref().unwrap().parse().unwrap(), &w["min"]),
                "{}",
                c.name
            );
            assert!(
                close(c.max.as_ref().unwrap().parse().unwrap(), &w["max"]),
                "{}",
                c.name
            );
            assert!(
                close(c.mean.unwrap(), &w["mean"]),
                "{} mean {:?} vs {}",
                c.name,
                c.mean,
                w["mean"]
            );
            assert!(close(c.std.unwrap(), &w["std"]), "{} std", c.name);
            assert!(close(c.median.unwrap(), &w["median"]), "{} median", c.name);
            assert!(c.median_exact);
            assert_eq!(c.histogram.iter().map(|b| b.count).sum::<u64>(), c.count);
        } else {
            assert_eq!(c.min.as_deref(), w["min"].as_str(), "{}", c.name);
            assert_eq!(c.max.as_deref(), w["max"].as_str(), "{}", c.name);
            let top: Vec<serde_json::Value> = c
                .top
                .iter()
                .map(|v| serde_json::json!([v.value, v.count]))
                .collect();
            assert_eq!(serde_json::Value::Array(top), w["top"], "{}", c.name);
        }
    }
    assert_eq!(s.columns[1].name, "amount");
    let spec: ViewSpec = serde_json::from_str(
        r#"{"filters": [{"column": 2, "op": "values", "values": ["alpha", "gamma"]},
                        {"column": 1, "op": "range", "min": "10", "max": "20"},
                        {"column": 3, "op": "contains", "text": "x"}]}"#,
    )
    .unwrap();
    let kept: Vec<usize> = serde_json::from_value(want["kept"].clone()).unwrap();
    assert_eq!(explore::view_row_numbers(&p, &spec).unwrap(), kept);
    let filtered = explore::summary(&p, &spec).unwrap();
    assert_eq!(filtered.kept_rows, kept.len());
    let sort: ViewSpec =
        serde_json::from_str(r#"{"sort": [{"column": 2}, {"column": 1, "descending": true}]}"#)
            .unwrap();
    let sorted: Vec<usize> = serde_json::from_value(want["sorted"].clone()).unwrap();
    assert_eq!(explore::view_row_numbers(&p, &sort).unwrap(), sorted);
    // Pages of the sorted view are its rows, wherever they are in the file.
    for offset in [0usize, 12_345, 29_990] {
        let page = explore::page(
            &p,
            PageRequest {
                view: sort.clone(),
                offset,
                limit: 20,
            },
        )
        .unwrap();
        assert_eq!(
            page.row_numbers,
            sorted[offset..(offset + 20).min(sorted.len())]
        );
        for (r, n) in page.rows.iter().zip(&page.row_numbers) {
            assert_eq!(r[0], n.to_string());
        }
    }
}
