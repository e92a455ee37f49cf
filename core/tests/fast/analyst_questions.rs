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
struct Table {
    path: String,
    rows: u64,
    /// `[name, kind, distinct]`, with `values` for a column of few values.
    columns: Vec<(String, String, u64)>,
    #[serde(default)]
    values: BTreeMap<String, Vec<String>>,
}

/// What is expected; every field left out is not checked.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Case {
    table: String,
    q: String,
    task: Option<String>,
    stats: Option<Vec<String>>,
    measures: Option<Vec<String>>,
    second: Option<String>,
    group: Option<String>,
    /// `"column op"` or `"column op value"` each.
    filters: Option<Vec<String>>,
    decimals: Option<u32>,
    ddof: Option<u8>,
    method: Option<String>,
    biased: Option<bool>,
    slots: Option<Vec<String>>,
    /// Words one of the decline's reasons holds.
    decline: Option<String>,
    /// Another skill's question.
    other: Option<bool>,
}

fn table_json(t: &Table) -> Value {
    json!({
        "path": t.path,
        "rows": t.rows,
        "column_names": t.columns.iter().map(|c| &c.0).collect::<Vec<_>>(),
        "column_kinds": t.columns.iter().map(|(name, kind, distinct)| json!({
            "name": name, "kind": kind, "distinct": distinct,
            "values": t.values.get(name).cloned().unwrap_or_default(),
        })).collect::<Vec<_>>(),
    })
}

fn check(case: &Case, got: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    let mut expect = |what: &str, want: Value, have: Value| {
        if want != have {
            bad.push(format!("{what}: expected {want}, got {have}"));
        }
    };
    if let Some(words) = &case.decline {
        let reasons = got["decline"].as_array().cloned().unwrap_or_default();
        if !reasons
            .iter()
            .any(|r| r.as_str().is_some_and(|r| r.contains(words.as_str())))
        {
            bad.push(format!("expected a decline naming {words:?}, got {got}"));
        }
        return bad;
    }
    if case.other == Some(true) {
        expect("skill", json!("other"), got["skill"].clone());
        return bad;
    }
    let plan = &got["plan"];
    if plan.is_null() {
        return vec![format!("expected a plan, got {got}")];
    }
    let names = |v: &Value, key: &str| -> Value {
        v.as_array()
            .map(|a| a.iter().map(|x| x[key].clone()).collect())
            .unwrap_or_default()
    };
    if let Some(t) = &case.task {
        expect("task", json!(t), plan["task"].clone());
    }
    if let Some(s) = &case.stats {
        expect("stats", json!(s), names(&plan["stats"], "name"));
    }
    if let Some(m) = &case.measures {
        expect("measures", json!(m), names(&plan["measures"], "name"));
    }
    if let Some(s) = &case.second {
        expect("second", json!(s), plan["second"].clone());
    }
    if let Some(g) = &case.group {
        expect("group", json!(g), plan["group"].clone());
    }
    if let Some(f) = &case.filters {
        let have: Vec<String> = plan["filters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                let mut s = format!(
                    "{} {}",
                    f["column"].as_str().unwrap_or(""),
                    f["op"].as_str().unwrap_or("")
                );
                if let Some(v) = f["values"].as_array().filter(|v| !v.is_empty()) {
                    let v: Vec<&str> = v.iter().filter_map(Value::as_str).collect();
                    s.push_str(&format!(" {}", v.join("/")));
                } else if !["is_true", "is_false"].contains(&f["op"].as_str().unwrap_or("")) {
                    s.push_str(&format!(" {}", f["value"]));
                }
                s
            })
            .collect();
        expect("filters", json!(f), json!(have));
    }
    if let Some(d) = case.decimals {
        expect("decimals", json!(d), plan["decimals"].clone());
    }
    if let Some(d) = case.ddof {
        expect("ddof", json!(d), plan["ddof"].clone());
    }
    if let Some(m) = &case.method {
        expect("method", json!(m), plan["method"].clone());
    }
    if let Some(b) = case.biased {
        expect("biased", json!(b), plan["biased"].clone());
    }
    if let Some(s) = &case.slots {
        expect("slots", json!(s), got["slots"].clone());
    }
    bad
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
        let got = sandalyst::analyst::read_question(&case.q, &table_json(table))
            .expect("the table's profile reads");
        for p in check(case, &got) {
            problems.push(format!("{:?}\n    {p}", case.q));
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
    let cases: Cases = toml::from_str(include_str!("analyst_questions.toml")).unwrap();
    for c in &cases.cases {
        let Case {
            task,
            stats,
            measures,
            decline,
            other,
            decimals,
            ddof,
            method,
            slots,
            filters,
            ..
        } = c;
        assert!(
            task.is_some()
                || stats.is_some()
                || measures.is_some()
                || decline.is_some()
                || other.is_some()
                || decimals.is_some()
                || ddof.is_some()
                || method.is_some()
                || slots.is_some()
                || filters.is_some(),
            "{:?} expects nothing",
            c.q
        );
    }
}
