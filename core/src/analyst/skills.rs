//! The question-answering skills: a data profile, aggregate questions and
//! relationships, and the honest answer to a request outside every skill. Each skill is
//! one Python template (`profile.py`, `aggregate.py`, `relate.py`) filled in with the
//! table chosen from the inspection, the request's language, the operation read from
//! its words ([`super::request`]) and what it names ([`super::reading`]). The script
//! matches that reading against the data, computes the answer, writes a table (CSV), a chart
//! (PNG) and a report (Markdown), reopens them, and prints one line
//! `SANDALYST_ANSWER {json}`: the headline in the request's language, a small result
//! table and the files. [`answer_text`] turns that line into the final message.
//!
//! Plan of a skill ask: inspect (shared with the anomaly skill), then the skill's
//! script; if an aggregate or relationship question cannot be answered from the data
//! (its script says why, or fails), the data profile instead, with the reason.

use serde_json::{json, Value};

use super::outputs::OutputNames;
use super::phase::Phase;
use super::profile::Table;
use super::reading;
use super::request::{Lang, Recognised, Skill};
use super::scripts::compose_skill;
use super::stat_plan::StatPlan;
use super::texts;

pub(super) const PROFILE_PY: &str = include_str!("profile.py");
pub(super) const AGGREGATE_PY: &str = include_str!("aggregate.py");
pub(super) const RELATE_PY: &str = include_str!("relate.py");
pub(super) const STATS_PY: &str = include_str!("stats.py");

/// The phase that answers a skill (the unsupported answer comes with the profile).
pub(super) fn phase_of_skill(skill: Skill) -> Phase {
    match skill {
        Skill::Aggregate => Phase::Aggregate,
        Skill::Relate => Phase::Relate,
        _ => Phase::Profile,
    }
}

/// Output names: those the request names, else the skill's own.
pub(super) fn outputs_for(phase: Phase, named: &OutputNames) -> OutputNames {
    let stem = if phase == Phase::Profile {
        "profile"
    } else {
        "answer"
    };
    let d = OutputNames::default();
    let pick = |n: &str, dflt: &str, ext: &str| {
        if n == dflt {
            format!("output/{stem}.{ext}")
        } else {
            n.to_string()
        }
    };
    OutputNames {
        csv: pick(&named.csv, &d.csv, "csv"),
        png: pick(&named.png, &d.png, "png"),
        md: pick(&named.md, &d.md, "md"),
    }
}

/// The table a question is about: one the request names, else the previous
/// question's (`earlier`), else the one with most rows.
pub(super) fn choose_table<'a>(
    tables: &'a [Table],
    task: &str,
    earlier: Option<&str>,
) -> Option<&'a Table> {
    let lower = task.to_lowercase();
    tables
        .iter()
        .find(|t| {
            let base = t.path.rsplit('/').next().unwrap_or(&t.path).to_lowercase();
            base.len() >= 3 && lower.contains(&base)
        })
        .or_else(|| tables.iter().find(|t| Some(t.path.as_str()) == earlier))
        .or_else(|| tables.iter().rev().max_by_key(|t| t.rows))
}

/// The script of a skill phase for `table`.
pub(super) fn skill_code(
    phase: Phase,
    table: &Table,
    others: &[&Table],
    task: &str,
    rec: &Recognised,
    previous: Option<&Value>,
    outputs: &OutputNames,
) -> String {
    let previous = previous.map(|a| {
        json!({
            "input": a.get("input"),
            "measure": a.get("measure"),
            "op": a.get("op"),
        })
    });
    let config = json!({
        "input": table.path,
        "kind": table.kind.clone().unwrap_or_else(|| "csv".into()),
        "sheet": table.sheet,
        "request": task,
        "lang": rec.lang,
        "ascii": rec.ascii,
        "intent": rec.intent,
        "reading": reading::read(task, table),
        "previous": previous,
        "other_tables": others.iter().map(|t| t.path.clone()).collect::<Vec<_>>(),
        "outputs": { "csv": outputs.csv, "png": outputs.png, "md": outputs.md },
    });
    let template = match phase {
        Phase::Aggregate => AGGREGATE_PY,
        Phase::Relate => RELATE_PY,
        _ => PROFILE_PY,
    };
    compose_skill(phase, template, &config)
}

/// The statistics script for `table`, carrying out `plan`.
pub(super) fn stats_code(
    table: &Table,
    task: &str,
    rec: &Recognised,
    plan: &StatPlan,
    outputs: &OutputNames,
) -> String {
    let config = json!({
        "input": table.path,
        "kind": table.kind.clone().unwrap_or_else(|| "csv".into()),
        "sheet": table.sheet,
        "request": task,
        "lang": rec.lang,
        "ascii": rec.ascii,
        "plan": plan,
        "outputs": { "csv": outputs.csv, "png": outputs.png, "md": outputs.md },
    });
    compose_skill(Phase::Stats, STATS_PY, &config)
}

/// What the analyst says while a skill's script runs.
pub(super) fn narration(phase: Phase, table: &Table, lang: Lang) -> String {
    let what = match (phase, lang) {
        (Phase::Aggregate, Lang::En) => {
            "answering the question (columns and values matched in the data)"
        }
        (Phase::Aggregate, Lang::Es) => {
            "respondiendo a la pregunta (columnas y valores buscados en los datos)"
        }
        (Phase::Relate, Lang::En) => "measuring the relationship",
        (Phase::Relate, Lang::Es) => "midiendo la relación",
        (Phase::Stats, Lang::En) => "computing the statistics of the plan read from the question",
        (Phase::Stats, Lang::Es) => "calculando las estadísticas del plan leído en la pregunta",
        (_, Lang::En) => "profiling the data",
        (_, Lang::Es) => "describiendo los datos",
    };
    let (path, rows) = (&table.path, table.rows);
    lang.pick(
        format!("Step 2: {what} in {path} ({rows} rows)."),
        format!("Paso 2: {what} en {path} ({rows} filas)."),
    )
}

/// The first step's narration, in the request's language.
pub(super) fn inspect_narration(lang: Lang) -> String {
    match lang {
        Lang::En => {
            "Step 1: inspecting the files in input/ (rows, columns, types, missing values). \
                     I am the built-in offline analyst: rule-based, not an LLM."
                .into()
        }
        Lang::Es => {
            "Paso 1: reviso los archivos de input/ (filas, columnas, tipos, valores vacíos). \
                     Soy el analista sin conexión integrado: basado en reglas, no un LLM."
                .into()
        }
    }
}

/// The answer to a request no skill covers (followed by the data profile).
pub fn cannot_text(lang: Lang) -> &'static str {
    texts::plan(lang, "cannot")
}

/// What the analyst says when a question could not be answered from the data.
pub(super) fn fallback_note(lang: Lang, why: &str) -> String {
    texts::plan(lang, "fallback_note").replace("{why}", why)
}

/// What introduces the answer in the format a ticket asked for.
pub(super) fn in_the_format(lang: Lang) -> &'static str {
    texts::plan(lang, "in_the_format")
}

fn footer(lang: Lang) -> &'static str {
    texts::plan(lang, "footer")
}

fn cell(v: &Value, lang: Lang) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map_or_else(
            || n.to_string(),
            |x| super::numbers::local(&super::numbers::fmt_num(x), lang),
        ),
        other => other.to_string(),
    }
}

/// The final message from a skill's `SANDALYST_ANSWER`, after `prefix` (the cannot
/// answer or the fallback note), in the request's language.
pub(super) fn answer_text(rec: &Recognised, answer: &Value, prefix: Option<&str>) -> String {
    let lang = rec.lang;
    let mut t = String::new();
    if let Some(p) = prefix {
        t.push_str(p);
        t.push_str("\n\n");
    }
    t.push_str(answer.get("headline").and_then(Value::as_str).unwrap_or(""));
    t.push('\n');
    let columns: Vec<String> = answer
        .get("columns")
        .and_then(Value::as_array)
        .map(|c| c.iter().map(|v| cell(v, lang)).collect())
        .unwrap_or_default();
    let rows = answer
        .get("table")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !columns.is_empty() && !rows.is_empty() {
        t.push('\n');
        t.push_str(&format!("| {} |\n", columns.join(" | ")));
        t.push_str(&format!("|{}\n", "---|".repeat(columns.len())));
        for r in &rows {
            let cells: Vec<String> = r
                .as_array()
                .map(|c| c.iter().map(|v| cell(v, lang)).collect())
                .unwrap_or_default();
            t.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        let total = answer
            .get("table_rows")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if total > rows.len() as u64 {
            t.push_str(&match lang {
                Lang::En => format!(
                    "({} of {total} rows shown; all in the table file)\n",
                    rows.len()
                ),
                Lang::Es => format!(
                    "({} de {total} filas; todas en el archivo de la tabla)\n",
                    rows.len()
                ),
            });
        }
    }
    for n in answer
        .get("notes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        t.push_str(&format!("\n{}", cell(n, lang)));
    }
    t.push_str(lang.pick("\n\nFiles:\n", "\n\nArchivos:\n"));
    for f in answer
        .get("files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let path = f.get("path").map(|v| cell(v, lang)).unwrap_or_default();
        let what = f.get("what").map(|v| cell(v, lang)).unwrap_or_default();
        t.push_str(&format!("- {path}: {what}\n"));
    }
    t.push('\n');
    t.push_str(footer(lang));
    if rec.ascii {
        to_ascii(&t)
    } else {
        t
    }
}

/// Plain ASCII: accents dropped, Spanish question and exclamation marks removed.
pub fn to_ascii(s: &str) -> String {
    let s = s
        .replace("°", " deg ")
        .replace('\u{a0}', " ")
        .replace("  ", " ");
    s.chars()
        .filter_map(|c| {
            if c.is_ascii() {
                return Some(c);
            }
            match c {
                '¿' | '¡' => None,
                _ => super::request::normalise(&c.to_string())
                    .chars()
                    .next()
                    .filter(char::is_ascii)
                    .or(Some('?')),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyst::request::recognise;

    #[test]
    fn answer_text_has_headline_table_files_and_footer() {
        let rec = recognise("Which region had the highest revenue?");
        let answer = json!({
            "headline": "North had the highest total of revenue (by region): 500.",
            "columns": ["region", "total_revenue"],
            "table": [["North", 500.0], ["South", 250.5]],
            "table_rows": 4,
            "notes": [],
            "files": [{"path": "output/answer.csv", "what": "the result table"}]
        });
        let t = answer_text(&rec, &answer, None);
        for needle in [
            "North had",
            "| North | 500 |",
            "| South | 250.5 |",
            "2 of 4 rows",
            "- output/answer.csv: the result table",
            "not an LLM",
        ] {
            assert!(t.contains(needle), "{needle:?} not in {t}");
        }
        let es = answer_text(
            &recognise("¿Qué región vendió más?"),
            &answer,
            Some(cannot_text(Lang::Es)),
        );
        assert!(
            es.starts_with("No puedo") && es.contains("Archivos:"),
            "{es}"
        );
    }

    #[test]
    fn outputs_default_per_skill_and_from_the_request() {
        let o = outputs_for(Phase::Aggregate, &OutputNames::default());
        assert_eq!(
            (o.csv.as_str(), o.png.as_str(), o.md.as_str()),
            ("output/answer.csv", "output/answer.png", "output/answer.md")
        );
        let named = super::super::outputs::output_names("save output/by_region.png");
        let o = outputs_for(Phase::Profile, &named);
        assert_eq!(
            (o.csv.as_str(), o.png.as_str()),
            ("output/profile.csv", "output/by_region.png")
        );
    }

    #[test]
    fn ascii_when_asked() {
        assert_eq!(to_ascii("¿Qué región? 20 °C"), "Que region? 20 deg C");
    }

    #[test]
    fn skill_templates_are_ascii_and_wrapped() {
        for t in [PROFILE_PY, AGGREGATE_PY, RELATE_PY, STATS_PY] {
            assert!(t.is_ascii());
            assert!(
                !t.contains("\"\"\""),
                "no multi-line strings: the body is indented"
            );
            // Every placeholder is filled, in the skill's helpers too.
            let code = compose_skill(Phase::Stats, t, &serde_json::json!({}));
            assert!(!code.contains("__SANDALYST_"), "a placeholder is left");
            assert!(code.contains("CALENDAR = json.loads(\"{"));
        }
    }
}
