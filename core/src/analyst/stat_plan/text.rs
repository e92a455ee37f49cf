//! What the user reads of a plan: its parts as a decline says them, a statistic's
//! name, and the decline itself.

use super::{Decline, FilterOp, Stat, StatMethod, StatPlan, Task};
use crate::analyst::profile::Table;
use crate::analyst::request::Lang;
use crate::analyst::texts;

/// The parts of a plan as the decline says them ("mean", "of `price`", "by `region`").
pub(in crate::analyst) fn described(plan: &StatPlan, lang: Lang) -> Vec<String> {
    let mut out: Vec<String> = plan.stats.iter().map(|s| stat_word(s, lang)).collect();
    match plan.task {
        Task::Argmax => out.push(texts::plan(lang, "task.argmax").into()),
        Task::Argmin => out.push(texts::plan(lang, "task.argmin").into()),
        Task::Correlation => out.push(plan.method.unwrap_or(StatMethod::Pearson).to_string()),
        Task::Outliers => out.push(texts::plan(lang, "task.outliers").into()),
        Task::Normality => out.push(texts::plan(lang, "task.normality").into()),
        Task::Describe => {}
    }
    let (of, by) = (texts::plan(lang, "of"), texts::plan(lang, "by"));
    for m in &plan.measures {
        out.push(format!("{of} `{}`", m.name));
    }
    if let Some(g) = &plan.group {
        out.push(format!("{by} `{g}`"));
    }
    for f in &plan.filters {
        let rhs = match (&f.date, f.stat, &f.of) {
            _ if matches!(f.op, FilterOp::In | FilterOp::NotIn) => f.values.join(" / "),
            _ if matches!(f.op, FilterOp::IsTrue | FilterOp::IsFalse) => {
                out.push(format!("`{}` {}", f.column, f.op));
                continue;
            }
            (Some(d), _, _) => d.clone(),
            (_, Some(st), Some(of)) => format!("{} `{of}`", stat_word(&Stat::plain(st), lang)),
            _ => fmt_value(f.value),
        };
        out.push(format!("`{}` {} {rhs}", f.column, f.op));
    }
    out
}

/// A statistic as said in the answer (a quantile with its percent).
pub(super) fn stat_word(s: &Stat, lang: Lang) -> String {
    let word = texts::plan(lang, &format!("stat.{}", s.name));
    let p = s.q.unwrap_or(0.5) * 100.0;
    word.replace("{p}", &fmt_value((p * 100.0).round() / 100.0))
}

/// The honest decline: what was understood, what not, and what the analyst can do.
pub(in crate::analyst) fn decline_text(d: &Decline, table: &Table, lang: Lang) -> String {
    let mut columns: Vec<String> = table
        .column_kinds
        .iter()
        .map(|c| format!("`{}` ({})", c.name, c.kind))
        .collect();
    if columns.is_empty() {
        columns = table
            .column_names
            .iter()
            .map(|c| format!("`{c}`"))
            .collect();
    }
    let understood = if d.understood.is_empty() {
        "-".to_string()
    } else {
        d.understood.join(", ")
    };
    let missing: Vec<&str> = d
        .not_understood
        .iter()
        .map(|s| s.trim_end_matches('.'))
        .collect();
    texts::plan(lang, "decline")
        .replace("{understood}", &understood)
        .replace("{missing}", &missing.join("; "))
        .replace("{table}", &table.path)
        .replace("{columns}", &columns.join(", "))
}

pub(super) fn fmt_value(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}
