//! What the question→plan cases as data (`core/tests/fast/analyst_questions.toml`)
//! cannot say: what a decline understood, its wording, and the helpers.

use super::text::stat_word;
use super::words::digits;
use super::*;
use crate::analyst::profile::ColumnKind;
use crate::analyst::request::detect_lang;

fn table(path: &str, rows: u64, cols: &[(&str, &str, u64)]) -> Table {
    Table {
        path: path.into(),
        rows,
        column_names: cols.iter().map(|c| c.0.to_string()).collect(),
        column_kinds: cols
            .iter()
            .map(|(n, k, d)| ColumnKind {
                name: n.to_string(),
                kind: k.to_string(),
                distinct: *d,
                missing: 0,
                ..ColumnKind::default()
            })
            .collect(),
        ..Table::default()
    }
}

fn passengers() -> Table {
    let mut t = table(
        "input/passengers.csv",
        150,
        &[
            ("passenger", "text", 150),
            ("age", "numeric", 70),
            ("fare", "numeric", 140),
            ("class", "text", 3),
            ("boarded", "datetime", 140),
        ],
    );
    // The inspection lists the values of a column with few of them.
    t.column_kinds[3].values = vec!["First".into(), "Second".into(), "Third".into()];
    t
}

/// A passenger list as analysts download it: codes and yes/no columns as numbers,
/// the values of the columns with few of them listed by the inspection.
fn boarders() -> Table {
    let mut t = table(
        "input/boarders.csv",
        240,
        &[
            ("PassengerId", "numeric", 240),
            ("Survived", "numeric", 2),
            ("Pclass", "numeric", 3),
            ("Sex", "text", 2),
            ("Age", "numeric", 180),
            ("Fare", "numeric", 200),
            ("Embarked", "text", 3),
            ("lunch", "text", 2),
        ],
    );
    t.column_kinds[0].id = true;
    for (i, values) in [
        (1, &["0", "1"][..]),
        (2, &["1", "2", "3"]),
        (3, &["male", "female"]),
        (6, &["S", "C", "Q"]),
        (7, &["standard", "free/reduced"]),
    ] {
        t.column_kinds[i].values = values.iter().map(|v| v.to_string()).collect();
    }
    t
}

/// "Which sex ..." asks for the label; it is no yes/no condition (what a decline
/// understood is not in the data cases' answer).
#[test]
fn which_sex_is_no_condition_on_sex() {
    let task = "Which sex has the lower survival count?";
    if let Understood::Decline(d) = understand(task, &boarders(), detect_lang(task)) {
        assert!(!d.understood.iter().any(|u| u.contains("`Sex`")), "{d:?}");
    }
}

#[test]
fn declines_say_what_was_and_was_not_understood() {
    let d = match understand(
        "What is the geometric mean of fare?",
        &passengers(),
        Lang::En,
    ) {
        Understood::Decline(d) => d,
        other => panic!("{other:?}"),
    };
    assert!(d.not_understood[0].contains("geometric mean"), "{d:?}");
    let text = decline_text(&d, &passengers(), Lang::En);
    assert!(text.contains("I cannot answer that as asked") && text.contains("`fare` (numeric)"));
    let es = match understand("Media del salario", &passengers(), Lang::Es) {
        Understood::Decline(d) => decline_text(&d, &passengers(), Lang::Es),
        other => panic!("{other:?}"),
    };
    assert!(es.starts_with("No puedo responder"));
}

#[test]
fn words_keep_decimals_and_signs() {
    assert_eq!(words_of("a*b = 2.5"), vec!["a", "times", "b", "is", "2d5"]);
    assert_eq!(digits("2d5"), Some(2.5));
    assert_eq!(digits("90th"), Some(90.0));
    assert_eq!(stat_word(&Stat::quantile(0.9), Lang::En), "90 percentile");
}
