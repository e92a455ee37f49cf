//! The explorer on small generated files with known answers, one of each format.

use std::path::PathBuf;

use super::*;

fn file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn view(json: &str) -> ViewSpec {
    serde_json::from_str(json).unwrap()
}

fn rows(path: &Path, json: &str) -> Vec<usize> {
    view_row_numbers(path, &view(json)).unwrap()
}

fn col<'a>(s: &'a Summary, name: &str) -> &'a ColumnSummary {
    s.columns.iter().find(|c| c.name == name).unwrap()
}

const ORDERS: &str = "id,name,units,date,when,flag
1,Ana,10,2024-01-05,2024-01-05 10:00,yes
2,bob,,2024-01-06,2024-01-06T11:30:00Z,no
3,Ana,NA,2024-02-01,,YES
4,Cy,20,,2024-03-01 00:00,
5,dan,N/A,2024-01-31,2024-01-31T23:59:59,no
6,Eve,5.5,NaN,2024-02-15 08:00,true
7,ana,10,null,2024-01-01T00:00+02:00,false
8, ,None,2024-03-10,2024-03-10 12:00,no
";

#[test]
fn kinds_and_summary_of_a_csv_with_every_missing_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let p = file(&dir, "orders.csv", ORDERS.as_bytes());
    let s = summary(&p, &ViewSpec::default()).unwrap();
    assert_eq!((s.total_rows, s.kept_rows), (8, 8));
    let kinds: Vec<Kind> = s.columns.iter().map(|c| c.kind).collect();
    use Kind::*;
    assert_eq!(kinds, [Integer, Text, Number, Date, Datetime, Boolean]);
    let units = col(&s, "units");
    assert_eq!((units.count, units.missing), (4, 4));
    assert_eq!(units.missing_share, 0.5);
    assert_eq!((units.distinct, units.distinct_exact), (3, true));
    assert_eq!(
        (units.min.as_deref(), units.max.as_deref()),
        (Some("5.5"), Some("20"))
    );
    assert_eq!(units.mean, Some(11.375));
    assert!((units.std.unwrap() - 37.5625f64.sqrt()).abs() < 1e-12);
    assert_eq!(units.median, Some(10.0));
    let top: Vec<(&str, u64)> = units
        .top
        .iter()
        .map(|v| (v.value.as_str(), v.count))
        .collect();
    assert_eq!(top, [("10", 2), ("5.5", 1), ("20", 1)], "ties by value");
    assert_eq!(units.histogram.len(), 20);
    assert_eq!(units.histogram.iter().map(|b| b.count).sum::<u64>(), 4);
    assert_eq!((units.histogram[0].lo, units.histogram[19].hi), (5.5, 20.0));
    assert_eq!(
        units.histogram[19].count, 1,
        "the maximum is in the last bin"
    );
    let name = col(&s, "name");
    assert_eq!(
        (name.count, name.missing, name.distinct),
        (7, 1, 6),
        "a blank cell is missing"
    );
    assert_eq!(name.top[0].value, "Ana");
    assert_eq!(name.top[0].count, 2);
    assert!(name.histogram.is_empty() && name.mean.is_none());
    assert_eq!(
        (name.min.as_deref(), name.max.as_deref()),
        (Some("Ana"), Some("dan"))
    );
    let date = col(&s, "date");
    assert_eq!((date.count, date.missing), (5, 3));
    assert_eq!(
        (date.min.as_deref(), date.max.as_deref()),
        (Some("2024-01-05"), Some("2024-03-10"))
    );
    assert_eq!(date.histogram.iter().map(|b| b.count).sum::<u64>(), 5);
    assert_eq!(
        date.histogram[0].lo,
        cell::days_from_civil(2024, 1, 5) as f64,
        "epoch days"
    );
    assert!(date.mean.is_none() && date.median.is_none());
    let when = col(&s, "when");
    assert_eq!(
        when.min.as_deref(),
        Some("2023-12-31 22:00:00"),
        "zones are taken into account"
    );
    assert_eq!(when.max.as_deref(), Some("2024-03-10 12:00:00"));
    let flag = col(&s, "flag");
    assert_eq!((flag.count, flag.missing, flag.distinct), (7, 1, 5));
    let id = col(&s, "id");
    assert_eq!(
        (id.min.as_deref(), id.max.as_deref(), id.median),
        (Some("1"), Some("8"), Some(4.5))
    );
}

#[test]
fn every_filter_op_and_their_combination() {
    let dir = tempfile::tempdir().unwrap();
    let p = file(&dir, "orders.csv", ORDERS.as_bytes());
    let f = |filters: &str| rows(&p, &format!(r#"{{"filters": [{filters}]}}"#));
    assert_eq!(
        f(r#"{"column": 1, "op": "values", "values": ["Ana"]}"#),
        [0, 2]
    );
    assert_eq!(
        f(r#"{"column": 1, "op": "contains", "text": "AN"}"#),
        [0, 2, 4, 6]
    );
    assert_eq!(
        f(r#"{"column": 2, "op": "range", "min": "10", "max": "20"}"#),
        [0, 3, 6]
    );
    assert_eq!(f(r#"{"column": 2, "op": "range", "max": "9"}"#), [5]);
    assert_eq!(
        f(r#"{"column": 2, "op": "values", "values": ["10.0"]}"#),
        [0, 6],
        "by value"
    );
    assert_eq!(
        f(r#"{"column": 2, "op": "values", "values": ["", "20"]}"#),
        [1, 2, 3, 4, 7]
    );
    assert_eq!(
        f(r#"{"column": 3, "op": "range", "min": "2024-01-06", "max": "2024-01-31"}"#),
        [1, 4]
    );
    assert_eq!(
        f(r#"{"column": 4, "op": "range", "max": "2024-01-31"}"#),
        [0, 1, 4, 6],
        "a date bound takes its day"
    );
    assert_eq!(
        f(r#"{"column": 4, "op": "range", "min": "2024-03-01T00:00:00"}"#),
        [3, 7]
    );
    assert_eq!(
        f(r#"{"column": 4, "op": "values", "values": ["2024-03-01T00:00"]}"#),
        [3]
    );
    assert_eq!(f(r#"{"column": 3, "op": "missing"}"#), [3, 5, 6]);
    assert_eq!(
        f(r#"{"column": 4, "op": "not_missing"}"#),
        [0, 1, 3, 4, 5, 6, 7]
    );
    assert_eq!(
        f(r#"{"column": 1, "op": "range", "min": "B", "max": "d"}"#),
        [1, 3, 5, 6],
        "text by bytes"
    );
    assert_eq!(
        f(r#"{"column": 5, "op": "values", "values": ["no"]}"#),
        [1, 4, 7]
    );
    assert_eq!(
        f(
            r#"{"column": 1, "op": "contains", "text": "an"}, {"column": 2, "op": "range", "min": "10"}"#
        ),
        [0, 6]
    );
    let s = summary(
        &p,
        &view(r#"{"filters": [{"column": 1, "op": "contains", "text": "an"}]}"#),
    )
    .unwrap();
    assert_eq!((s.total_rows, s.kept_rows), (8, 4));
    let units = col(&s, "units");
    assert_eq!((units.count, units.missing, units.mean), (2, 2, Some(10.0)));
    assert_eq!(
        units.kind,
        Kind::Number,
        "the whole column's kind, not the subset's"
    );
    let bad = page(
        &p,
        PageRequest {
            view: view(r#"{"filters": [{"column": 2, "op": "range", "min": "x"}]}"#),
            offset: 0,
            limit: 10,
        },
    )
    .unwrap_err();
    assert!(bad.downcast_ref::<BadInput>().is_some(), "{bad:#}");
}

#[test]
fn two_key_sort_with_ties_and_missing_and_its_pages() {
    let dir = tempfile::tempdir().unwrap();
    let p = file(&dir, "orders.csv", ORDERS.as_bytes());
    let by = r#"{"sort": [{"column": 2, "descending": true}, {"column": 1}]}"#;
    assert_eq!(rows(&p, by), [3, 0, 6, 5, 2, 1, 4, 7]);
    assert_eq!(
        rows(&p, r#"{"sort": [{"column": 2}, {"column": 1}]}"#),
        [5, 0, 6, 3, 2, 1, 4, 7]
    );
    assert_eq!(
        rows(&p, r#"{"sort": [{"column": 4}]}"#),
        [6, 0, 1, 4, 5, 3, 7, 2]
    );
    let pg = page(
        &p,
        PageRequest {
            view: view(by),
            offset: 2,
            limit: 3,
        },
    )
    .unwrap();
    assert_eq!(pg.row_numbers, [6, 5, 2]);
    assert_eq!(pg.rows[0][1], "ana");
    assert_eq!(
        (pg.total_rows, pg.kept_rows, pg.offset),
        (Some(8), Some(8), 2)
    );
    assert!(!pg.kinds_from_sample);
    let filtered = r#"{"filters": [{"column": 2, "op": "not_missing"}], "sort": [{"column": 2}, {"column": 0, "descending": true}]}"#;
    assert_eq!(rows(&p, filtered), [5, 6, 0, 3]);
    let pg = page(
        &p,
        PageRequest {
            view: view(filtered),
            offset: 1,
            limit: 2,
        },
    )
    .unwrap();
    assert_eq!(
        (pg.row_numbers.as_slice(), pg.kept_rows),
        ([6usize, 0].as_slice(), Some(4))
    );
    assert_eq!(pg.rows[1][0], "1");
    assert!(page(
        &p,
        PageRequest {
            view: view(filtered),
            offset: 10,
            limit: 2
        }
    )
    .unwrap()
    .rows
    .is_empty());
}

#[test]
fn a_large_csv_is_scanned_in_parts_and_paged_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("i;g;v;note\n");
    for i in 0..20_000u32 {
        let v = if i % 7 == 0 {
            String::new()
        } else {
            format!("{},{}", i % 100, i % 10)
        };
        text.push_str(&format!(
            "{i};g{};{v};\"line {i}\nwith; delimiters\"\n",
            i % 13
        ));
    }
    let p = file(&dir, "big.csv", text.as_bytes());
    let first = page(
        &p,
        PageRequest {
            view: ViewSpec::default(),
            offset: 0,
            limit: 5,
        },
    )
    .unwrap();
    assert_eq!(first.delimiter.as_deref(), Some(";"));
    assert!(
        first.decimal_comma,
        "12,5 reads as a number with a decimal comma"
    );
    assert_eq!(
        first.rows[1],
        ["1", "g1", "1,1", "line 1\nwith; delimiters"]
    );
    let all = view_row_numbers(
        &p,
        &view(r#"{"filters": [{"column": 2, "op": "range", "min": "50,5"}]}"#),
    )
    .unwrap();
    let want: Vec<usize> = (0..20_000usize)
        .filter(|i| i % 7 != 0 && (i % 100) as f64 + (i % 10) as f64 / 10.0 >= 50.5)
        .collect();
    assert_eq!(all, want);
    let s = summary(&p, &ViewSpec::default()).unwrap();
    let v = col(&s, "v");
    assert_eq!(v.kind, Kind::Number);
    assert_eq!(v.missing, (0..20_000).filter(|i| i % 7 == 0).count() as u64);
    assert_eq!(col(&s, "g").distinct, 13);
    let sorted = r#"{"sort": [{"column": 1}, {"column": 0, "descending": true}]}"#;
    let order = rows(&p, sorted);
    let mut want: Vec<usize> = (0..20_000).collect();
    want.sort_by(|a, b| {
        format!("g{}", a % 13)
            .cmp(&format!("g{}", b % 13))
            .then(b.cmp(a))
    });
    assert_eq!(order, want);
    for offset in [0, 9_000, 19_998] {
        let pg = page(
            &p,
            PageRequest {
                view: view(sorted),
                offset,
                limit: 3,
            },
        )
        .unwrap();
        assert_eq!(pg.row_numbers, want[offset..(offset + 3).min(20_000)]);
        for (r, n) in pg.rows.iter().zip(&pg.row_numbers) {
            assert_eq!(r[0], n.to_string());
            assert_eq!(r[3], format!("line {n}\nwith; delimiters"));
        }
    }
    let later = page(
        &p,
        PageRequest {
            view: ViewSpec::default(),
            offset: 15_000,
            limit: 2,
        },
    )
    .unwrap();
    assert_eq!(later.row_numbers, [15_000, 15_001]);
    assert_eq!(later.total_rows, Some(20_000));
    assert!(!later.kinds_from_sample);
}

#[test]
fn bom_ragged_rows_bad_bytes_empty_and_header_only_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = file(
        &dir,
        "odd.csv",
        b"\xEF\xBB\xBFid,name\n1,caf\xE9\n2\n3,x,extra\n4,=cmd\n5,-3.5\n",
    );
    let pg = page(
        &p,
        PageRequest {
            view: view(r#"{"sort": [{"column": 1}]}"#),
            offset: 0,
            limit: 10,
        },
    )
    .unwrap();
    assert_eq!(pg.headers, ["id", "name"]);
    assert_eq!(
        pg.row_numbers,
        [4, 3, 0, 2, 1],
        "-3.5 is text here; missing last"
    );
    assert_eq!(pg.rows[2], ["1", "caf\u{FFFD}"]);
    assert_eq!(pg.formulas, [[1, 1]], "=cmd, but not the number -3.5");
    assert_eq!(
        rows(
            &p,
            r#"{"filters": [{"column": 1, "op": "values", "values": ["caf\ufffd"]}]}"#
        ),
        [0]
    );
    let s = summary(&p, &ViewSpec::default()).unwrap();
    assert_eq!(col(&s, "name").formula_cells, 1);
    assert_eq!(col(&s, "name").missing, 1);
    let c = code(&p, "input/odd.csv", &ViewSpec::default()).unwrap();
    assert!(
        c.pandas.contains("encoding_errors=\"replace\""),
        "{}",
        c.pandas
    );
    assert!(
        c.pandas.contains("on_bad_lines=lambda cells: cells[:2]"),
        "{}",
        c.pandas
    );

    let empty = file(&dir, "empty.csv", b"");
    let pg = page(&empty, PageRequest::default()).unwrap();
    assert_eq!((pg.total_rows, pg.rows.len()), (Some(0), 0));
    let s = summary(&empty, &ViewSpec::default()).unwrap();
    assert_eq!((s.total_rows, s.columns.len()), (0, 0));
    let head = file(&dir, "head.csv", b"a;b\n");
    let pg = page(
        &head,
        PageRequest {
            view: view(r#"{"sort": [{"column": 1}]}"#),
            offset: 0,
            limit: 5,
        },
    )
    .unwrap();
    assert_eq!(
        (pg.headers.len(), pg.kept_rows, pg.rows.len()),
        (2, Some(0), 0)
    );
    let s = summary(&head, &ViewSpec::default()).unwrap();
    assert_eq!(s.columns[0].kind, Kind::Empty);
    assert_eq!(s.columns[0].missing_share, 0.0);
}

#[test]
fn pandas_code_is_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let p = file(&dir, "orders.csv", ORDERS.as_bytes());
    let v = view(
        r#"{"filters": [{"column": 1, "op": "values", "values": ["Ana", "bob"]},
                        {"column": 2, "op": "range", "min": "10", "max": "20"}],
            "sort": [{"column": 3}, {"column": 2, "descending": true}]}"#,
    );
    let c = code(&p, "input/orders.csv", &v).unwrap();
    assert_eq!(
        c.sentence,
        "Rows of input/orders.csv where name is Ana or bob and units is between 10 and 20, sorted by date (ascending) then units (descending): 1 of 8 rows."
    );
    assert_eq!(
        c.pandas,
        r#"import pandas as pd

# Every column is read as text, as the explorer reads it; numbers and dates are
# converted where they are compared.
df = pd.read_csv("input/orders.csv", dtype=str)
# Cells of only spaces are missing, as in the explorer.
df = df.replace(r"^[ \t\n\f\r]+$", float("nan"), regex=True)
view = df[df["name"].isin(["Ana", "bob"]) & pd.to_numeric(df["units"].str.strip()).between(10, 20)]
# Numbers sort by value and dates by instant; text by its characters.
keys = {
    "date": lambda s: pd.to_datetime(s, format="ISO8601", utc=True),
    "units": lambda s: pd.to_numeric(s.str.strip()),
}
view = view.sort_values(["date", "units"], ascending=[True, False], kind="stable", na_position="last", key=lambda s: keys.get(s.name, lambda s: s)(s))
view"#
    );
    let v = view(
        r#"{"filters": [{"column": 4, "op": "range", "min": "2024-01-01T00:00+01:00", "max": "2024-01-31"},
                        {"column": 1, "op": "contains", "text": "a\"b\\"},
                        {"column": 3, "op": "values", "values": ["2024-01-05", ""]},
                        {"column": 2, "op": "missing"}]}"#,
    );
    let c = code(&p, "output/o.csv", &v).unwrap();
    let body = c
        .pandas
        .lines()
        .skip_while(|l| !l.starts_with("view = df["))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        body,
        r#"view = df[
    ((pd.to_datetime(df["when"], format="ISO8601", utc=True) >= pd.Timestamp("2024-01-01T00:00+01:00")) & (pd.to_datetime(df["when"], format="ISO8601", utc=True) < pd.Timestamp("2024-02-01", tz="UTC")))
    & df["name"].str.contains("a\"b\\", case=False, regex=False, na=False)
    & (pd.to_datetime(df["date"], format="ISO8601", utc=True).isin(pd.to_datetime(["2024-01-05"], format="ISO8601", utc=True)) | df["date"].isna())
    & df["units"].isna()
]
view"#
    );
    assert!(c.sentence.starts_with("Rows of output/o.csv where when is between 2024-01-01T00:00+01:00 and 2024-01-31 and name contains \"a\\\"b\\\\\" and date is 2024-01-05 or missing and units is missing: "), "{}", c.sentence);
}

#[test]
fn decimal_comma_code_and_positional_columns() {
    let dir = tempfile::tempdir().unwrap();
    let p = file(
        &dir,
        "dc.csv",
        "k;k;\"q\"\"x\"\n1;2,5;a\n2;-1,25;b\n".as_bytes(),
    );
    let v = view(
        r#"{"filters": [{"column": 1, "op": "range", "min": "0"}], "sort": [{"column": 2, "descending": true}]}"#,
    );
    assert_eq!(
        rows(
            &p,
            r#"{"filters": [{"column": 1, "op": "range", "min": "0"}]}"#
        ),
        [0]
    );
    let c = code(&p, "input/dc.csv", &v).unwrap();
    assert!(
        c.pandas
            .contains("pd.read_csv(\"input/dc.csv\", sep=\";\", dtype=str)"),
        "{}",
        c.pandas
    );
    assert!(
        c.pandas.contains("view = df[pd.to_numeric(df[df.columns[1]].str.strip().str.replace(\",\", \".\", regex=False)) >= 0]"),
        "{}",
        c.pandas
    );
    assert!(
        c.pandas
            .contains("view.sort_values([\"q\\\"x\"], ascending=[False]"),
        "{}",
        c.pandas
    );
}

#[test]
fn json_records_columns_and_lines() {
    let dir = tempfile::tempdir().unwrap();
    let records = r#"[{"z": 1, "a": "NA", "b": true}, {"z": 2.5, "a": null, "c": [1, 2]}, {"a": "x", "z": null}]"#;
    let p = file(&dir, "r.json", records.as_bytes());
    let pg = page(&p, PageRequest::default()).unwrap();
    assert_eq!(pg.format, Format::Json);
    assert_eq!(
        pg.headers,
        ["z", "a", "b", "c"],
        "in order of first appearance"
    );
    assert_eq!(pg.rows[0], ["1", "NA", "true", ""]);
    assert_eq!(pg.rows[1], ["2.5", "", "", "[1,2]"]);
    assert_eq!(pg.kinds[..3], [Kind::Number, Kind::Text, Kind::Boolean]);
    assert_eq!(
        rows(&p, r#"{"filters": [{"column": 1, "op": "missing"}]}"#),
        [1],
        "\"NA\" is text in JSON"
    );
    assert_eq!(
        rows(&p, r#"{"sort": [{"column": 0, "descending": true}]}"#),
        [1, 0, 2]
    );
    let c = code(
        &p,
        "input/r.json",
        &view(r#"{"filters": [{"column": 2, "op": "values", "values": ["true"]}]}"#),
    )
    .unwrap();
    assert!(c.pandas.contains(
        "pd.read_json(\"input/r.json\", dtype=False, convert_dates=False, precise_float=True)"
    ));
    assert!(
        c.pandas
            .contains("df[\"b\"].map(as_text, na_action=\"ignore\").isin([\"true\"])"),
        "{}",
        c.pandas
    );
    assert!(c.pandas.contains("def as_text(v):"));

    let columns = file(
        &dir,
        "c.json",
        br#"{"u": [3, null, 1], "v": {"0": "a", "2": "c", "1": "b"}}"#,
    );
    let pg = page(&columns, PageRequest::default()).unwrap();
    assert_eq!(pg.rows, [["3", "a"], ["", "b"], ["1", "c"]]);
    let lines = file(
        &dir,
        "l.jsonl",
        b"{\"a\": 1}\n\n{\"a\": 3, \"b\": \"x\"}\n{\"b\": \"y\"}\n",
    );
    let pg = page(
        &lines,
        PageRequest {
            view: view(r#"{"filters": [{"column": 0, "op": "range", "min": "2"}]}"#),
            offset: 0,
            limit: 10,
        },
    )
    .unwrap();
    assert_eq!(
        (pg.format, pg.row_numbers.as_slice()),
        (Format::Jsonl, [1usize].as_slice())
    );
    assert!(code(&lines, "input/l.jsonl", &ViewSpec::default())
        .unwrap()
        .pandas
        .contains("lines=True"));
    let bad = file(&dir, "bad.jsonl", b"{\"a\": 1}\nnot json\n");
    let e = format!("{:#}", page(&bad, PageRequest::default()).unwrap_err());
    assert!(e.contains("line 2"), "{e}");
}

/// Typed scans (numbers read as numbers, strings in place, dictionary and view strings)
/// keep exactly the rows the text of the same cells keeps.
#[test]
fn parquet_typed_scans_keep_the_rows_their_text_keeps() {
    use arrow_array::types::Int32Type;
    use arrow_array::{
        ArrayRef, DictionaryArray, Float32Array, Int32Array, LargeStringArray, RecordBatch,
        StringViewArray, UInt8Array,
    };
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("typed.parquet");
    let n = 3_000usize;
    let small = |i: usize| (i % 7 != 3).then_some((i % 256) as u8);
    let score = |i: usize| match i % 11 {
        0 => None,
        1 => Some(f32::NAN),
        _ => Some((i % 40) as f32 * 0.25 - 3.0),
    };
    let tag = |i: usize| (!i.is_multiple_of(13)).then(|| format!("t{}", i % 5));
    let note = |i: usize| (!i.is_multiple_of(17)).then(|| format!("Note {} x", i % 23));
    let k: ArrayRef = Arc::new(Int32Array::from_iter(
        (0..n).map(|i| Some(i as i32 - 1_000)),
    ));
    let small_a: ArrayRef = Arc::new(UInt8Array::from_iter((0..n).map(small)));
    let score_a: ArrayRef = Arc::new(Float32Array::from_iter((0..n).map(score)));
    let tag_a: ArrayRef = Arc::new(
        (0..n)
            .map(tag)
            .collect::<Vec<_>>()
            .iter()
            .map(Option::as_deref)
            .collect::<DictionaryArray<Int32Type>>(),
    );
    let note_a: ArrayRef = Arc::new(LargeStringArray::from_iter((0..n).map(note)));
    let view_a: ArrayRef = Arc::new(StringViewArray::from_iter((0..n).map(tag)));
    // Tenths as float32: 0.3f32 widened is not 0.3, yet the cell shows "0.3".
    let tenth = |i: usize| format!("0.{}", i % 10).parse::<f32>().unwrap();
    let tenth_a: ArrayRef = Arc::new(Float32Array::from_iter_values((0..n).map(tenth)));
    let batch = RecordBatch::try_from_iter([
        ("k", k),
        ("small", small_a),
        ("score", score_a),
        ("tag", tag_a),
        ("note", note_a),
        ("tag_view", view_a),
        ("tenth", tenth_a),
    ])
    .unwrap();
    write_parquet(&p, &batch, 700);

    let all = |f: &dyn Fn(usize) -> bool| (0..n).filter(|&i| f(i)).collect::<Vec<_>>();
    let present = |i: usize| score(i).is_some_and(|s| !s.is_nan());
    let cases: Vec<(&str, Vec<usize>)> = vec![
        (
            r#"{"filters": [{"column": 2, "op": "range", "min": "-1", "max": "4.5"}]}"#,
            all(&|i| score(i).is_some_and(|s| (-1.0..=4.5).contains(&s))),
        ),
        (
            r#"{"filters": [{"column": 2, "op": "missing"}]}"#,
            all(&|i| !present(i)),
        ),
        (
            r#"{"filters": [{"column": 2, "op": "not_missing"}, {"column": 1, "op": "values", "values": ["7", "200", ""]}]}"#,
            all(&|i| present(i) && matches!(small(i), None | Some(7) | Some(200))),
        ),
        (
            r#"{"filters": [{"column": 0, "op": "range", "max": "-990"}, {"column": 3, "op": "values", "values": ["t2", "t4"]}]}"#,
            all(&|i| (i as i64) - 1_000 <= -990 && matches!(tag(i).as_deref(), Some("t2" | "t4"))),
        ),
        (
            r#"{"filters": [{"column": 6, "op": "values", "values": ["0.3"]}, {"column": 6, "op": "range", "max": "0.3"}]}"#,
            all(&|i| i % 10 == 3),
        ),
        // A number column read as text where a test needs its text.
        (
            r#"{"filters": [{"column": 2, "op": "contains", "text": ".75"}, {"column": 2, "op": "range", "min": "0"}]}"#,
            all(&|i| score(i).is_some_and(|s| s >= 0.0 && format!("{s}").contains(".75"))),
        ),
        (
            r#"{"filters": [{"column": 4, "op": "contains", "text": "note 1"}, {"column": 5, "op": "missing"}]}"#,
            all(&|i| {
                note(i).is_some_and(|t| t.to_uppercase().contains("NOTE 1")) && tag(i).is_none()
            }),
        ),
    ];
    for (v, want) in &cases {
        assert!(!want.is_empty(), "a case that keeps rows: {v}");
        assert_eq!(&rows(&p, v), want, "{v}");
        assert_eq!(summary(&p, &view(v)).unwrap().kept_rows, want.len(), "{v}");
    }
    // Strings read in place show as arrow displays them, nulls as empty cells.
    let pg = page(
        &p,
        PageRequest {
            view: view(r#"{"filters": [{"column": 3, "op": "missing"}]}"#),
            offset: 0,
            limit: 2,
        },
    )
    .unwrap();
    assert_eq!(pg.row_numbers, [0, 13]);
    assert_eq!(pg.rows[1][3..], ["", "Note 13 x", "", "0.3"]);
}

#[test]
fn parquet_pages_filters_sorts_and_summaries() {
    use arrow_array::{
        ArrayRef, BooleanArray, Date32Array, Float64Array, Int64Array, RecordBatch, StringArray,
    };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.parquet");
    let n = 10_000i64;
    let id: ArrayRef = std::sync::Arc::new(Int64Array::from_iter_values(0..n));
    let amount: ArrayRef =
        std::sync::Arc::new(Float64Array::from_iter((0..n).map(|i| match i % 10 {
            0 => None,
            1 => Some(f64::NAN),
            _ => Some((i % 50) as f64 / 2.0),
        })));
    let cat: ArrayRef = std::sync::Arc::new(StringArray::from_iter((0..n).map(|i| {
        if i % 9 == 0 {
            Some("NA".to_string())
        } else {
            Some(format!("c{}", i % 4))
        }
    })));
    let day: ArrayRef = std::sync::Arc::new(Date32Array::from_iter(
        (0..n).map(|i| Some(19_700 + (i % 30) as i32)),
    ));
    let ok: ArrayRef = std::sync::Arc::new(BooleanArray::from_iter(
        (0..n).map(|i| (i % 3 != 0).then_some(i % 2 == 0)),
    ));
    let batch = RecordBatch::try_from_iter([
        ("id", id),
        ("amount", amount),
        ("cat", cat),
        ("day", day),
        ("ok", ok),
    ])
    .unwrap();
    write_parquet(&p, &batch, 1_500);

    let pg = page(
        &p,
        PageRequest {
            view: ViewSpec::default(),
            offset: 4_499,
            limit: 3,
        },
    )
    .unwrap();
    assert_eq!(pg.format, Format::Parquet);
    assert_eq!(
        pg.kinds,
        [
            Kind::Integer,
            Kind::Number,
            Kind::Text,
            Kind::Date,
            Kind::Boolean
        ]
    );
    assert_eq!(pg.row_numbers, [4_499, 4_500, 4_501], "across a row group");
    assert_eq!(pg.rows[1][0], "4500");
    assert_eq!(
        (pg.rows[0][1].as_str(), pg.rows[2][1].as_str()),
        ("24.5", ""),
        "NaN is missing"
    );
    let want: Vec<usize> = (0..n as usize)
        .filter(|i| i % 10 > 1 && (i % 50) as f64 / 2.0 >= 20.0 && i % 9 != 0 && i % 4 == 1)
        .collect();
    let v = r#"{"filters": [{"column": 1, "op": "range", "min": "20"}, {"column": 2, "op": "values", "values": ["c1"]}]}"#;
    assert_eq!(rows(&p, v), want);
    assert_eq!(
        rows(&p, r#"{"filters": [{"column": 2, "op": "missing"}]}"#),
        Vec::<usize>::new(),
        "\"NA\" is text in Parquet"
    );
    let s = summary(&p, &view(v)).unwrap();
    assert_eq!(s.kept_rows, want.len());
    let sorted = rows(
        &p,
        r#"{"sort": [{"column": 3, "descending": true}, {"column": 1}]}"#,
    );
    assert_eq!(sorted.len(), n as usize);
    let key = |i: usize| {
        (
            std::cmp::Reverse(i % 30),
            if i % 10 > 1 {
                ((i % 50) * 10) as i64
            } else {
                i64::MAX
            },
        )
    };
    let mut want: Vec<usize> = (0..n as usize).collect();
    want.sort_by_key(|&i| key(i));
    assert_eq!(sorted, want);
    let pg = page(
        &p,
        PageRequest {
            view: view(r#"{"sort": [{"column": 3, "descending": true}, {"column": 1}]}"#),
            offset: 7_000,
            limit: 4,
        },
    )
    .unwrap();
    assert_eq!(pg.row_numbers, want[7_000..7_004]);
    for (r, n) in pg.rows.iter().zip(&pg.row_numbers) {
        assert_eq!(r[0], n.to_string());
    }
    let s = summary(&p, &ViewSpec::default()).unwrap();
    let amount = col(&s, "amount");
    assert_eq!((amount.count, amount.missing), (8_000, 2_000));
    assert_eq!(
        col(&s, "day").min.as_deref(),
        Some(cell::iso_date(19_700).as_str())
    );
    assert_eq!(
        col(&s, "ok").missing,
        (0..n).filter(|i| i % 3 == 0).count() as u64
    );
    let c = code(&p, "input/t.parquet", &view(v)).unwrap();
    assert!(
        c.pandas
            .contains("df = pd.read_parquet(\"input/t.parquet\")"),
        "{}",
        c.pandas
    );
    assert!(
        c.pandas.contains("pd.to_numeric(df[\"amount\"]) >= 20"),
        "{}",
        c.pandas
    );
}

/// Parquet scans that read strings as dictionaries, numbers typed and filters a batch at
/// a time give what the plain, row-by-row reading of the same cells gives, and numbers
/// what the generated values say.
#[test]
fn parquet_dictionaries_and_typed_numbers_summarize_as_plain_text_does() {
    use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
    use std::collections::HashMap;
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let n = 5_000usize;
    let amount = |i: usize| match (i % 10, i % 11) {
        (0, _) => None,
        (_, 0) => Some(f64::NAN),
        _ => Some((i % 97) as f64 * 0.5 - 7.0),
    };
    let cat = |i: usize| (!i.is_multiple_of(13)).then(|| format!("c{}", i % 6));
    let day = |i: usize| format!("2024-01-{:02}", 1 + i % 9);
    // Beyond 2^53 neighbours share an f64: they must still count apart.
    let big = |i: usize| (1i64 << 60) + i as i64;
    let batch = RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from_iter_values(0..n as i64)) as ArrayRef,
        ),
        (
            "big",
            Arc::new(Int64Array::from_iter_values((0..n).map(big))),
        ),
        (
            "amount",
            Arc::new(Float64Array::from_iter((0..n).map(amount))),
        ),
        ("cat", Arc::new(StringArray::from_iter((0..n).map(cat)))),
        (
            "day",
            Arc::new(StringArray::from_iter_values((0..n).map(day))),
        ),
        (
            "note",
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|i| format!("n{i}")),
            )),
        ),
    ])
    .unwrap();
    let write = |name: &str, dictionaries: bool| {
        let p = dir.path().join(name);
        let props = ::parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(1_000))
            .set_dictionary_enabled(dictionaries)
            // `note` falls back to plain pages: it must stay plain.
            .set_dictionary_page_size_limit(256)
            .set_write_batch_size(64)
            .build();
        let mut w = ::parquet::arrow::ArrowWriter::try_new(
            std::fs::File::create(&p).unwrap(),
            batch.schema(),
            Some(props),
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        p
    };
    let dict = write("dict.parquet", true);
    let plain = write("plain.parquet", false);
    let t = parquet::ParquetTable::open(&dict).unwrap();
    assert_eq!(
        (0..6).map(|c| t.is_dictionary(c)).collect::<Vec<_>>(),
        [false, false, false, true, true, false],
        "cat and day are dictionaries throughout; note falls back"
    );
    assert_eq!(
        (0..6).map(|c| t.numbers_exact(c)).collect::<Vec<_>>(),
        [Some(true), None, Some(false), None, None, None]
    );

    for v in [
        "{}",
        r#"{"filters": [{"column": 3, "op": "values", "values": ["c1", "c4", ""]}]}"#,
        r#"{"filters": [{"column": 2, "op": "range", "min": "-2", "max": "20"}, {"column": 4, "op": "contains", "text": "-05"}]}"#,
    ] {
        let (a, b) = (
            summary(&dict, &view(v)).unwrap(),
            summary(&plain, &view(v)).unwrap(),
        );
        assert_eq!(rows(&dict, v), rows(&plain, v), "{v}");
        assert_eq!(a.kept_rows, b.kept_rows, "{v}");
        for c in ["cat", "day", "note", "id", "big"] {
            assert_eq!(col(&a, c), col(&b, c), "{c} in {v}");
        }
        let (x, y) = (col(&a, "amount"), col(&b, "amount"));
        assert_eq!(
            (x.count, x.missing, x.distinct, &x.top, &x.histogram),
            (y.count, y.missing, y.distinct, &y.top, &y.histogram),
            "{v}"
        );
    }

    let s = summary(&dict, &ViewSpec::default()).unwrap();
    let big_s = col(&s, "big");
    assert_eq!((big_s.distinct, big_s.distinct_exact), (n as u64, true));
    assert_eq!(big_s.max.as_deref(), Some(big(n - 1).to_string().as_str()));
    let id = col(&s, "id");
    assert_eq!(
        (id.kind, id.count, id.distinct),
        (Kind::Integer, n as u64, n as u64)
    );
    assert_eq!(
        (id.min.as_deref(), id.max.as_deref()),
        (Some("0"), Some("4999"))
    );
    assert!((id.mean.unwrap() - 2_499.5).abs() < 1e-9);
    let a = col(&s, "amount");
    let present: Vec<f64> = (0..n).filter_map(amount).filter(|x| !x.is_nan()).collect();
    assert_eq!(
        (a.count, a.missing),
        (present.len() as u64, (n - present.len()) as u64)
    );
    let mean = present.iter().sum::<f64>() / present.len() as f64;
    assert!((a.mean.unwrap() - mean).abs() < 1e-9);
    let mut by: HashMap<String, u64> = HashMap::new();
    for x in &present {
        // As the page shows a double: the shortest text that reads back as it.
        let t = if x.fract() == 0.0 {
            format!("{x:.1}")
        } else {
            format!("{x}")
        };
        *by.entry(t).or_default() += 1;
    }
    assert_eq!(a.distinct, by.len() as u64);
    for v in &a.top {
        assert_eq!(by.get(&v.value), Some(&v.count), "{}", v.value);
    }
    let c = col(&s, "cat");
    assert_eq!(
        (c.count, c.distinct),
        ((0..n).filter(|&i| cat(i).is_some()).count() as u64, 6)
    );
    let c1 = (0..n).filter(|&i| cat(i).as_deref() == Some("c1")).count() as u64;
    assert!(
        c.top.contains(&Value {
            value: "c1".into(),
            count: c1
        }),
        "{:?}",
        c.top
    );
}

#[test]
fn workbook_sheets_are_parsed_once_and_explored() {
    use rust_xlsxwriter::{ExcelDateTime, Format as XFormat, Workbook};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("w.xlsx");
    let mut wb = Workbook::new();
    let date = XFormat::new().set_num_format("yyyy-mm-dd");
    let ws = wb.add_worksheet();
    ws.set_name("Notes").unwrap();
    ws.write_string(0, 0, "note").unwrap();
    let ws = wb.add_worksheet();
    ws.set_name("Data").unwrap();
    for (c, h) in ["region", "units", "day", "ok"].iter().enumerate() {
        ws.write_string(0, c as u16, *h).unwrap();
    }
    let data = [
        ("Centro", Some(12.0), 5, true),
        ("Norte", None, 6, false),
        ("Centro", Some(7.5), 7, true),
        ("NA", Some(3.0), 8, false),
    ];
    for (r, (region, units, d, ok)) in data.iter().enumerate() {
        let r = r as u32 + 1;
        ws.write_string(r, 0, *region).unwrap();
        if let Some(u) = units {
            ws.write_number(r, 1, *u).unwrap();
        }
        ws.write_datetime_with_format(r, 2, ExcelDateTime::from_ymd(2024, 1, *d).unwrap(), &date)
            .unwrap();
        ws.write_boolean(r, 3, *ok).unwrap();
    }
    wb.save(&p).unwrap();
    let pg = page(
        &p,
        PageRequest {
            view: view(r#"{"sheet": "Data"}"#),
            offset: 0,
            limit: 10,
        },
    )
    .unwrap();
    assert_eq!(
        (pg.format, pg.sheets.as_slice(), pg.sheet.as_deref()),
        (
            Format::Sheet,
            ["Notes".to_string(), "Data".to_string()].as_slice(),
            Some("Data")
        )
    );
    assert_eq!(pg.rows[0], ["Centro", "12", "2024-01-05", "True"]);
    assert_eq!(
        pg.kinds,
        [Kind::Text, Kind::Number, Kind::Date, Kind::Boolean]
    );
    let v = r#"{"sheet": "Data", "filters": [{"column": 2, "op": "range", "max": "2024-01-07"}], "sort": [{"column": 1, "descending": true}]}"#;
    assert_eq!(rows(&p, v), [0, 2, 1]);
    assert_eq!(
        rows(
            &p,
            r#"{"sheet": "Data", "filters": [{"column": 0, "op": "missing"}]}"#
        ),
        [3],
        "NA strings are missing, as read_excel reads them"
    );
    let s = summary(&p, &view(r#"{"sheet": "Data"}"#)).unwrap();
    assert_eq!(col(&s, "units").mean, Some(7.5));
    let c = code(&p, "input/w.xlsx", &view(v)).unwrap();
    assert!(
        c.pandas
            .contains("pd.read_excel(\"input/w.xlsx\", sheet_name=\"Data\", dtype=str)"),
        "{}",
        c.pandas
    );
    let first = page(&p, PageRequest::default()).unwrap();
    assert_eq!(first.sheet.as_deref(), Some("Notes"));
    let e = page(
        &p,
        PageRequest {
            view: view(r#"{"sheet": "Nope"}"#),
            offset: 0,
            limit: 1,
        },
    )
    .unwrap_err();
    assert!(e.downcast_ref::<BadInput>().is_some(), "{e:#}");
}

#[test]
fn other_files_are_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let p = file(&dir, "x.png", b"png");
    let e = page(&p, PageRequest::default()).unwrap_err();
    assert!(
        e.to_string().contains("not a table the explorer reads"),
        "{e}"
    );
    assert!(e.downcast_ref::<BadInput>().is_some());
}

/// `batch` as a Parquet file at `p`, in row groups of `group_rows`.
fn write_parquet(p: &Path, batch: &arrow_array::RecordBatch, group_rows: usize) {
    let props = ::parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(group_rows))
        .build();
    let mut w = ::parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(p).unwrap(),
        batch.schema(),
        Some(props),
    )
    .unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}
