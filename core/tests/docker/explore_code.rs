//! The explorer's pandas code (issue 21) run in the real sandbox image: for generated
//! files with every kind of column, missing values of each spelling, zones, decimal
//! commas, quotes and line breaks in cells, each view's code keeps exactly the rows the
//! explorer keeps, in the same order (pandas' index is the data row number).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use sandalyst::explore::{self, ViewSpec};
use sandalyst::sandbox::{ExecStatus, Sandbox};
use tokio_util::sync::CancellationToken;

fn orders_csv(dir: &Path) -> PathBuf {
    let mut t = String::from("id,region,units,price,day,at,flag,note\n");
    let regions = ["Centro", "Norte", "Sul", "", "NA", "centro"];
    let missing = ["", "NA", "N/A", "NaN", "null", "None", "nan", "#N/A"];
    for i in 0..600u32 {
        let region = regions[(i % 6) as usize];
        let units = if i % 11 == 0 {
            missing[(i % 8) as usize].to_string()
        } else {
            format!("{}", (i * 7) % 40)
        };
        let price = if i % 13 == 0 {
            String::new()
        } else {
            format!("{}.{}", i % 17, i % 10)
        };
        let day = if i % 9 == 0 {
            "NaN".to_string()
        } else {
            format!("2024-{:02}-{:02}", i % 12 + 1, i % 28 + 1)
        };
        let at = match i % 5 {
            0 => format!("2024-01-{:02}T{:02}:30:00Z", i % 28 + 1, i % 24),
            1 => format!("2024-01-{:02} {:02}:00", i % 28 + 1, i % 24),
            2 => format!("2024-01-{:02}T{:02}:15:00+02:00", i % 28 + 1, i % 24),
            3 => format!("2024-01-{:02}", i % 28 + 1),
            _ => "null".to_string(),
        };
        let flag = ["yes", "no", "True", "false", ""][(i % 5) as usize];
        let note = match i % 4 {
            0 => format!("\"line {i}\nwith, a comma\""),
            1 => format!("\"say \"\"hi\"\" {i}\""),
            2 => format!("=cmd{i}"),
            _ => format!("Ärger {i}"),
        };
        t.push_str(&format!(
            "{i},{region},{units},{price},{day},{at},{flag},{note}\n"
        ));
    }
    let p = dir.join("orders.csv");
    std::fs::write(&p, t).unwrap();
    p
}

fn decimal_csv(dir: &Path) -> PathBuf {
    let mut t = String::from("k;amount;label\n");
    for i in 0..300u32 {
        let amount = if i % 7 == 0 {
            "NA".to_string()
        } else {
            format!("{},{}", (i * 13) % 50, i % 10)
        };
        t.push_str(&format!("{};{amount};l{}\n", i % 10, i % 4));
    }
    let p = dir.join("amounts.csv");
    std::fs::write(&p, t).unwrap();
    p
}

fn lines_json(dir: &Path) -> PathBuf {
    let mut t = String::new();
    for i in 0..200u32 {
        let v = if i % 6 == 0 {
            "null".to_string()
        } else {
            format!("{}", (i % 9) as f64 / 2.0)
        };
        t.push_str(&format!(
            "{{\"n\": {i}, \"v\": {v}, \"s\": \"s{}\", \"b\": {}}}\n",
            i % 5,
            i % 2 == 0
        ));
    }
    let p = dir.join("events.jsonl");
    std::fs::write(&p, t).unwrap();
    p
}

fn table_parquet(dir: &Path) -> PathBuf {
    use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
    use std::sync::Arc;
    let n = 500i64;
    let a: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..n).map(|i| (i % 8 != 0).then_some(i % 23)),
    ));
    let b: ArrayRef = Arc::new(Float64Array::from_iter_values(
        (0..n).map(|i| (i % 37) as f64 / 4.0),
    ));
    let c: ArrayRef = Arc::new(StringArray::from_iter(
        (0..n).map(|i| Some(format!("k{}", i % 6))),
    ));
    let batch = RecordBatch::try_from_iter([("a", a), ("b", b), ("c", c)]).unwrap();
    let p = dir.join("table.parquet");
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&p).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    p
}

fn view(json: &str) -> ViewSpec {
    serde_json::from_str(json).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pandas_code_of_a_view_keeps_the_explorers_rows() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files = [
        orders_csv(dir.path()),
        decimal_csv(dir.path()),
        lines_json(dir.path()),
        table_parquet(dir.path()),
    ];
    let cases: &[(usize, &str)] = &[
        (
            0,
            r#"{"filters": [{"column": 1, "op": "values", "values": ["Centro", "Norte", ""]}, {"column": 2, "op": "range", "min": "10", "max": "20"}], "sort": [{"column": 4}, {"column": 2, "descending": true}]}"#,
        ),
        (
            0,
            r#"{"filters": [{"column": 7, "op": "contains", "text": "ärger 1"}]}"#,
        ),
        (
            0,
            r#"{"filters": [{"column": 7, "op": "contains", "text": "\"HI\""}, {"column": 3, "op": "not_missing"}], "sort": [{"column": 3, "descending": true}]}"#,
        ),
        (
            0,
            r#"{"filters": [{"column": 5, "op": "range", "min": "2024-01-05T00:00+01:00", "max": "2024-01-20"}], "sort": [{"column": 5, "descending": true}, {"column": 0}]}"#,
        ),
        (
            0,
            r#"{"filters": [{"column": 4, "op": "range", "max": "2024-06-30"}, {"column": 2, "op": "missing"}]}"#,
        ),
        (
            0,
            r#"{"filters": [{"column": 4, "op": "values", "values": ["2024-03-03", "2024-02-02"]}, {"column": 6, "op": "values", "values": ["no", "True", ""]}]}"#,
        ),
        (
            0,
            r#"{"filters": [{"column": 1, "op": "range", "min": "Norte"}], "sort": [{"column": 1}, {"column": 6, "descending": true}, {"column": 3}]}"#,
        ),
        (
            0,
            r#"{"filters": [{"column": 2, "op": "values", "values": ["7", "14.0"]}]}"#,
        ),
        (
            1,
            r#"{"filters": [{"column": 1, "op": "range", "min": "10,5", "max": "30"}], "sort": [{"column": 1, "descending": true}, {"column": 0}]}"#,
        ),
        (
            1,
            r#"{"filters": [{"column": 1, "op": "values", "values": ["13,3", "", "26.6"]}]}"#,
        ),
        (
            2,
            r#"{"filters": [{"column": 1, "op": "range", "min": "1.5"}, {"column": 3, "op": "values", "values": ["true"]}], "sort": [{"column": 1}, {"column": 2, "descending": true}]}"#,
        ),
        (2, r#"{"filters": [{"column": 1, "op": "missing"}]}"#),
        (
            3,
            r#"{"filters": [{"column": 0, "op": "range", "min": "5", "max": "15"}, {"column": 2, "op": "values", "values": ["k1", "k2"]}], "sort": [{"column": 1, "descending": true}, {"column": 0}]}"#,
        ),
        (
            3,
            r#"{"filters": [{"column": 0, "op": "missing"}], "sort": [{"column": 2}]}"#,
        ),
    ];
    let (sb, _) = common::sandbox(&docker, "explore-code", &files).await;
    for (f, json) in cases {
        let path = &files[*f];
        let name = path.file_name().unwrap().to_string_lossy();
        let v = view(json);
        let want = explore::view_row_numbers(path, &v).unwrap();
        assert!(
            !want.is_empty(),
            "{json} keeps some rows, so the check means something"
        );
        let code = explore::code(path, &format!("input/{name}"), &v).unwrap();
        let script = format!(
            "{}\nimport json as _json\nprint(_json.dumps([int(i) for i in view.index]))\n",
            code.pandas
        );
        let r = sb
            .python(
                &script,
                Duration::from_secs(120),
                &CancellationToken::new(),
                &|_, _| {},
            )
            .await
            .unwrap();
        assert_eq!(r.status, ExecStatus::Ok, "{script}\n{r:?}");
        let got: Vec<usize> = serde_json::from_str(r.stdout.trim().lines().last().unwrap_or(""))
            .unwrap_or_else(|e| panic!("{e}: {r:?}"));
        assert_eq!(got, want, "{json}\n{}", code.pandas);
        assert!(
            code.sentence.ends_with(&format!(
                "{} of {} rows.",
                grouped(want.len()),
                grouped(total(path))
            )),
            "{}",
            code.sentence
        );
    }
    sb.close().await.unwrap();
}

fn total(path: &Path) -> usize {
    explore::view_row_numbers(path, &ViewSpec::default())
        .unwrap()
        .len()
}

fn grouped(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
