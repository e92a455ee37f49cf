//! The offline analyst's question→plan cases, as data (`analyst_questions.toml`): each
//! a question, the table it is asked of (its columns as the inspection reports them)
//! and the plan or decline expected, checked with no engine through
//! [`sandalyst::analyst::read_question`]. Cases that check numbers stay in the engine
//! tier (`docker/analyst_cases.rs`).

use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Cases {
    tables: BTreeMap<String, Table>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    path: String,
    rows: u64,
    /// `[name, kind, distinct]`, with `values` for a column of few values.
    columns: Vec<(String, String, u64)>,
    #[serde(default)]
    values: BTreeMap<String, Vec<String>>,
    /// The columns the inspection flags as identifiers.
    #[serde(default)]
    ids: Vec<String>,
    /// The columns the inspection offers as the table's time.
    #[serde(default)]
    time: Vec<String>,
}

/// What is expected; every field left out is not checked. `group = ""` and
/// `label_op = ""` expect none.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Case {
    table: String,
    #[serde(default)]
    q: String,
    /// The question is this file's text (a path from the repository's root).
    q_file: Option<String>,
    task: Option<String>,
    stats: Option<Vec<String>>,
    /// The `q` of the quantile statistics, in order.
    quantiles: Option<Vec<f64>>,
    measures: Option<Vec<String>>,
    /// The column of each measure (`""` for a derived one).
    measure_columns: Option<Vec<String>>,
    /// The first measure's derivation, `"op a b"`.
    derived: Option<String>,
    second: Option<String>,
    group: Option<String>,
    label_op: Option<String>,
    /// `"column op value"` each: the value is the number, the day of a date
    /// condition, `stat column` against a statistic, or the values (`a/b`, or `a or b`
    /// when said with "or"); `is_true`/`is_false`/`is_missing` carry no value (it is 0).
    filters: Option<Vec<String>>,
    /// The condition whose share is asked, written as a filter.
    share_of: Option<String>,
    decimals: Option<u32>,
    ddof: Option<u8>,
    missing: Option<String>,
    method: Option<String>,
    biased: Option<bool>,
    z: Option<f64>,
    alpha: Option<f64>,
    alpha_said: Option<bool>,
    needs_value_filter: Option<bool>,
    named_columns: Option<Vec<String>>,
    slots: Option<Vec<String>>,
    /// The decimals each slot's description asks for (`-1` for none).
    slot_decimals: Option<Vec<i64>>,
    /// Words one of the decline's reasons holds (`""`: declined, whatever the reason).
    decline: Option<String>,
    /// Another skill's question.
    other: Option<bool>,
    /// What another skill's question names, as read for its script.
    read: Option<Reading>,
}

/// An aggregate or relationship question's reading; every field left out is not
/// checked. `period = ""` and `per_noun = ""` expect none.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Reading {
    /// The columns named, in order.
    columns: Option<Vec<String>>,
    /// The columns named after by/per/each.
    by: Option<Vec<String>>,
    months: Option<Vec<u32>>,
    years: Option<Vec<i32>>,
    period: Option<String>,
    per_noun: Option<String>,
    /// Free phrases that must be offered as values ("north").
    values: Option<Vec<String>>,
    money: Option<Vec<String>>,
    /// Measures named that no column holds.
    absent: Option<Vec<String>>,
}

fn table_json(t: &Table) -> Value {
    json!({
        "path": t.path,
        "rows": t.rows,
        "column_names": t.columns.iter().map(|c| &c.0).collect::<Vec<_>>(),
        "column_kinds": t.columns.iter().map(|(name, kind, distinct)| json!({
            "name": name, "kind": kind, "distinct": distinct,
            "values": t.values.get(name).cloned().unwrap_or_default(),
            "id": t.ids.contains(name),
        })).collect::<Vec<_>>(),
        "time": t.time.iter().map(|name| json!({ "name": name })).collect::<Vec<_>>(),
    })
}

/// A filter as the cases write it: `column op value`.
fn filter_text(f: &Value) -> String {
    let op = f["op"].as_str().unwrap_or("");
    let mut s = format!("{} {op}", f["column"].as_str().unwrap_or(""));
    if let Some(v) = f["values"].as_array().filter(|v| !v.is_empty()) {
        let v: Vec<&str> = v.iter().filter_map(Value::as_str).collect();
        let sep = if f["either"] == json!(true) {
            " or "
        } else {
            "/"
        };
        s.push_str(&format!(" {}", v.join(sep)));
    } else if let Some(day) = f["date"].as_str() {
        s.push_str(&format!(" {day}"));
    } else if let (Some(stat), Some(of)) = (f["stat"].as_str(), f["of"].as_str()) {
        s.push_str(&format!(" {stat} {of}"));
    } else if !["is_true", "is_false", "is_missing"].contains(&op) || f["value"] != json!(0.0) {
        s.push_str(&format!(" {}", f["value"].as_f64().unwrap_or(f64::NAN)));
    }
    s
}

fn check_reading(want: &Reading, got: &Value, bad: &mut Vec<String>) {
    let columns = |pick: &dyn Fn(&Value) -> bool| -> Value {
        got["columns"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| pick(c))
            .map(|c| c["column"].clone())
            .collect()
    };
    let phrases: Vec<&str> = got["phrases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["free"] == json!(true))
        .filter_map(|p| p["text"].as_str())
        .collect();
    let absent: Value = got["measures_said"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["held_by"].as_array().is_some_and(Vec::is_empty))
        .map(|m| m["word"].clone())
        .collect();
    let checks = [
        (
            "columns",
            want.columns.as_ref().map(|v| json!(v)),
            columns(&|_| true),
        ),
        (
            "by",
            want.by.as_ref().map(|v| json!(v)),
            columns(&|c| c["by"] == json!(true)),
        ),
        (
            "months",
            want.months.as_ref().map(|v| json!(v)),
            got["months"].clone(),
        ),
        (
            "years",
            want.years.as_ref().map(|v| json!(v)),
            got["years"].clone(),
        ),
        (
            "period",
            want.period.as_deref().map(or_null),
            got["period"].clone(),
        ),
        (
            "per_noun",
            want.per_noun.as_deref().map(or_null),
            got["per_noun"].clone(),
        ),
        (
            "money",
            want.money.as_ref().map(|v| json!(v)),
            got["money"].clone(),
        ),
        ("absent", want.absent.as_ref().map(|v| json!(v)), absent),
    ];
    for (what, want, have) in checks {
        if let Some(want) = want.filter(|w| *w != have) {
            bad.push(format!("reading {what}: expected {want}, got {have}"));
        }
    }
    for v in want.values.iter().flatten() {
        if !phrases.contains(&v.as_str()) {
            bad.push(format!("reading: \"{v}\" is not offered as a value"));
        }
    }
}

/// `""` in a case for an option left empty.
fn or_null(s: &str) -> Value {
    if s.is_empty() {
        Value::Null
    } else {
        json!(s)
    }
}

fn check(case: &Case, got: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    let mut expect = |what: &str, want: Value, have: Value| {
        if want != have {
            bad.push(format!("{what}: expected {want}, got {have}"));
        }
    };
    if let Some(words) = &case.decline {
        let Some(reasons) = got["decline"].as_array() else {
            return vec![format!("expected a decline, got {got}")];
        };
        if !words.is_empty()
            && !reasons
                .iter()
                .any(|r| r.as_str().is_some_and(|r| r.contains(words.as_str())))
        {
            bad.push(format!("expected a decline naming {words:?}, got {got}"));
        }
        return bad;
    }
    if case.other == Some(true) {
        expect("skill", json!("other"), got["skill"].clone());
        if let Some(want) = &case.read {
            check_reading(want, &got["reading"], &mut bad);
        }
        return bad;
    }
    let plan = &got["plan"];
    if plan.is_null() {
        return vec![format!("expected a plan, got {got}")];
    }
    let each = |v: &Value, key: &str| -> Value {
        v.as_array()
            .map(|a| a.iter().map(|x| x[key].clone()).collect())
            .unwrap_or_default()
    };
    if let Some(t) = &case.task {
        expect("task", json!(t), plan["task"].clone());
    }
    if let Some(s) = &case.stats {
        expect("stats", json!(s), each(&plan["stats"], "name"));
    }
    if let Some(q) = &case.quantiles {
        let have: Vec<Value> = plan["stats"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.get("q").cloned())
            .collect();
        expect("quantiles", json!(q), json!(have));
    }
    if let Some(m) = &case.measures {
        expect("measures", json!(m), each(&plan["measures"], "name"));
    }
    if let Some(c) = &case.measure_columns {
        let want: Vec<Value> = c.iter().map(|c| or_null(c)).collect();
        expect(
            "measure columns",
            json!(want),
            each(&plan["measures"], "column"),
        );
    }
    if let Some(d) = &case.derived {
        let have = &plan["measures"][0]["derived"];
        let have = format!(
            "{} {} {}",
            have["op"].as_str().unwrap_or(""),
            have["a"].as_str().unwrap_or(""),
            have["b"].as_str().unwrap_or("")
        );
        expect("derived", json!(d), json!(have));
    }
    if let Some(s) = &case.second {
        expect("second", or_null(s), plan["second"].clone());
    }
    if let Some(g) = &case.group {
        expect("group", or_null(g), plan["group"].clone());
    }
    if let Some(l) = &case.label_op {
        expect("label_op", or_null(l), plan["label_op"].clone());
    }
    if let Some(f) = &case.filters {
        let have: Vec<String> = plan["filters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(filter_text)
            .collect();
        expect("filters", json!(f), json!(have));
    }
    if let Some(s) = &case.share_of {
        let have = &plan["share_of"];
        let have = if have.is_null() {
            Value::Null
        } else {
            json!(filter_text(have))
        };
        expect("share_of", json!(s), have);
    }
    if let Some(d) = case.decimals {
        expect("decimals", json!(d), plan["decimals"].clone());
    }
    if let Some(d) = case.ddof {
        expect("ddof", json!(d), plan["ddof"].clone());
    }
    if let Some(m) = &case.missing {
        expect("missing", json!(m), plan["missing"].clone());
    }
    if let Some(m) = &case.method {
        expect("method", json!(m), plan["method"].clone());
    }
    if let Some(b) = case.biased {
        expect("biased", json!(b), plan["biased"].clone());
    }
    if let Some(z) = case.z {
        expect("z", json!(z), plan["z"].clone());
    }
    if let Some(a) = case.alpha {
        expect("alpha", json!(a), plan["alpha"].clone());
    }
    if let Some(a) = case.alpha_said {
        expect("alpha_said", json!(a), plan["alpha_said"].clone());
    }
    if let Some(n) = case.needs_value_filter {
        expect(
            "needs_value_filter",
            json!(n),
            plan["needs_value_filter"].clone(),
        );
    }
    if let Some(n) = &case.named_columns {
        expect("named_columns", json!(n), plan["named_columns"].clone());
    }
    if let Some(s) = &case.slots {
        expect("slots", json!(s), got["slots"].clone());
    }
    if let Some(d) = &case.slot_decimals {
        expect("slot decimals", json!(d), got["slot_decimals"].clone());
    }
    bad
}

/// The question a case asks: its `q`, or the text of its `q_file`.
fn question(case: &Case) -> String {
    match &case.q_file {
        Some(path) => {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(path);
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        }
        None => case.q.clone(),
    }
}

#[test]
fn every_question_is_read_as_its_case_says() {
    let text = include_str!("analyst_questions.toml");
    let cases: Cases = toml::from_str(text).expect("analyst_questions.toml parses");
    assert!(cases.cases.len() >= 30, "the cases are all there");
    let mut problems = Vec::new();
    for case in &cases.cases {
        let table = cases
            .tables
            .get(&case.table)
            .unwrap_or_else(|| panic!("no table {:?}", case.table));
        let q = question(case);
        let got = sandalyst::analyst::read_question(&q, &table_json(table))
            .expect("the table's profile reads");
        for p in check(case, &got) {
            problems.push(format!("{q:?}\n    {p}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} cases read otherwise:\n{}",
        problems.len(),
        cases.cases.len(),
        problems.join("\n")
    );
}

/// A case that checks nothing would pass whatever the analyst does.
#[test]
fn every_case_expects_something() {
    let cases: toml::Value = toml::from_str(include_str!("analyst_questions.toml")).unwrap();
    for c in cases["cases"].as_array().unwrap() {
        let c = c.as_table().unwrap();
        assert!(
            c.keys()
                .any(|k| !["table", "q", "q_file"].contains(&k.as_str())),
            "{:?} expects nothing",
            c.get("q").or(c.get("q_file"))
        );
        assert!(
            c.contains_key("q") != c.contains_key("q_file"),
            "{c:?}: one of q and q_file"
        );
    }
}
