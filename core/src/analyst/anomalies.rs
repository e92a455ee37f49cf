//! The anomaly skill's words: what it says while it works and its final message, in
//! the request's language. One builder each, written once, and one table of words per
//! language (`texts.toml`'s `[anomaly_messages]`); the numbers and the events come from the analysis result
//! (`SANDALYST_RESULT` of `analyse.py`, whose texts, such as when an event happened,
//! are already in the request's language), so the languages differ only in words.
//!
//! The report and the chart are written by `analyse.py` from its own table
//! (`texts.toml`'s `[anomaly]`), which also holds the words of the events' explanations.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::Value;

use super::numbers::{fmt_num, num};
use super::outputs::OutputNames;
use super::profile::{NoTarget, Profile, Target, MIN_ROWS};
use super::request::Lang;
use super::texts;

/// The words of one language (`texts.toml`'s `[anomaly_messages]`). `{}` marks where a
/// value goes, in order ([`fill`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Words {
    pub step1: String,
    step2: String,
    unit: String,
    temperature: String,
    no_temperature: String,
    several: String,
    step2_end: String,
    adjusted: String,
    pub step3: String,
    pub fallback_step: String,
    analysed: String,
    every: String,
    fallback_note: String,
    none: String,
    found: [String; 2],
    event: String,
    /// A drop: its lowest reading and its shortfall.
    event_drop: String,
    cause: String,
    more: String,
    ignored: [String; 2],
    files: String,
    energy: String,
    temperature_column: String,
    points: String,
    valid: String,
    problems: String,
    not_validated: String,
    footer: String,
    and_temperature: String,
    on_site: String,
    also_inspected: String,
    // when there is nothing to analyse, or a step fails
    no_files: String,
    no_tables: String,
    file_seen: String,
    tables_tail: String,
    no_series: String,
    sheet: String,
    table_seen: String,
    no_time: String,
    no_measure: String,
    few_rows: String,
    series_tail: String,
    pub inspect_retry: String,
    pub inspect_failed: String,
    pub not_completed: String,
    pub both_failed: String,
    pub step_failed: String,
    pub may_be_missing: String,
    pub no_result: String,
    pub stopped: String,
}

static WORDS: LazyLock<[Words; 2]> = LazyLock::new(|| {
    [
        texts::typed("anomaly_messages", Lang::En),
        texts::typed("anomaly_messages", Lang::Es),
    ]
});

/// The table of `lang`.
pub(super) fn words(lang: Lang) -> &'static Words {
    &WORDS[lang.pick(0, 1)]
}

/// `template` with each `{}` replaced by the next of `values`.
pub(super) fn fill(template: &str, values: &[&str]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    let mut values = values.iter();
    while let Some(at) = rest.find("{}") {
        out.push_str(&rest[..at]);
        out.push_str(values.next().copied().unwrap_or(""));
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out
}

/// Why there is nothing to analyse, with what was found.
pub(super) fn no_target_text(w: &Words, profile: &Profile, why: NoTarget) -> String {
    match why {
        NoTarget::EmptyInput => w.no_files.to_string(),
        NoTarget::NoReadableTable => {
            let mut s = w.no_tables.to_string();
            for f in profile.files.iter().take(20) {
                let why = f.reason.as_deref().unwrap_or(&f.status);
                s.push_str(&fill(&w.file_seen, &[&f.path, why]));
            }
            s.push_str(&w.tables_tail);
            s
        }
        NoTarget::NoTimeSeries => {
            let mut s = w.no_series.to_string();
            for t in profile.tables.iter().take(20) {
                let name = match &t.sheet {
                    Some(sheet) => fill(&w.sheet, &[&t.path, sheet]),
                    None => t.path.clone(),
                };
                let rows = t.rows.to_string();
                let why = if t.time.is_empty() {
                    w.no_time.to_string()
                } else if t.measures.is_empty() {
                    w.no_measure.to_string()
                } else {
                    fill(&w.few_rows, &[&rows, &MIN_ROWS.to_string()])
                };
                s.push_str(&fill(&w.table_seen, &[&name, &rows, &why]));
            }
            s.push_str(&w.series_tail);
            s
        }
    }
}

/// What the analyst says when the analysis starts.
pub(super) fn analysis_narration(w: &Words, target: &Target, outputs: &OutputNames) -> String {
    let t = &target.table;
    let rows = t.rows.to_string();
    let mut s = fill(
        &w.step2,
        &[&t.path, &rows, &target.time.name, &target.measure.name],
    );
    if !target.measure.unit.is_empty() {
        s.push_str(&fill(&w.unit, &[&target.measure.unit]));
    }
    match &t.temperature {
        Some(temp) => s.push_str(&fill(&w.temperature, &[&temp.name, &temp.unit])),
        None => s.push_str(&w.no_temperature),
    }
    if let Some(c) = &target.category {
        s.push_str(&fill(&w.several, &[c]));
    }
    let adjusted = if t.temperature.is_some() {
        &w.adjusted
    } else {
        ""
    };
    s.push_str(&fill(
        &w.step2_end,
        &[adjusted, &outputs.csv, &outputs.png, &outputs.md],
    ));
    s
}

/// The note on time series that were inspected but not analysed.
pub(super) fn also_inspected(w: &Words, paths: &[String]) -> String {
    fill(&w.also_inspected, &[&paths.join(", ")])
}

/// The final message: the data, the events, the files and the validation.
pub(super) fn final_text(
    w: &Words,
    result: &Value,
    outputs: &OutputNames,
    fallback_reason: Option<&str>,
    validation: &Result<Value, String>,
) -> String {
    let s = |k: &str| result.get(k).and_then(Value::as_str).unwrap_or("");
    let count = |k: &str| result.get(k).and_then(Value::as_u64).unwrap_or(0);
    let with_unit = |x: f64| match s("unit") {
        "" => fmt_num(x),
        unit => format!("{} {unit}", fmt_num(x)),
    };
    let n_events = count("n_events");
    let ignored = count("ignored");
    let cadence = match (s("cadence"), s("interval_word")) {
        ("", "") => fill(&w.every, &[s("interval")]),
        ("", word) => format!("{word} readings"),
        (cadence, _) => cadence.to_string(),
    };
    let baseline = match s("baseline_method") {
        "" => s("baseline")
            .trim_start_matches("expected baseline ")
            .trim_matches(['(', ')']),
        method => method,
    };
    let threshold = num(result.get("threshold")).unwrap_or(3.5).to_string();
    let mut t = fill(
        &w.analysed,
        &[
            s("input"),
            &count("rows").to_string(),
            s("measure"),
            &cadence,
            s("start"),
            s("end"),
            &count("missing").to_string(),
            baseline,
            &threshold,
        ],
    );
    if let Some(why) = fallback_reason {
        t.push_str(&fill(&w.fallback_note, &[why]));
    }
    if n_events == 0 {
        t.push_str(&w.none);
    } else {
        let found = &w.found[usize::from(n_events != 1)];
        t.push_str(&fill(found, &[&n_events.to_string()]));
        let events = result
            .get("events")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for e in &events {
            t.push_str(&event_line(w, e, &with_unit, s("excess_unit")));
            t.push('\n');
        }
        if (events.len() as u64) < n_events {
            let more = (n_events - events.len() as u64).to_string();
            t.push_str(&fill(&w.more, &[&more]));
        }
    }
    if ignored > 0 {
        let ignored_text = &w.ignored[usize::from(ignored != 1)];
        t.push_str(&fill(ignored_text, &[&ignored.to_string()]));
    }
    let energy = matches!(s("kind"), "energy" | "power" | "");
    let energy_word = if energy { &w.energy } else { "" };
    let has_temperature = !s("temperature").is_empty();
    let temperature = if has_temperature {
        &w.temperature_column
    } else {
        ""
    };
    t.push_str(&fill(
        &w.files,
        &[
            &outputs.csv,
            energy_word,
            temperature,
            &outputs.png,
            temperature,
            &outputs.md,
        ],
    ));
    if !s("points_csv").is_empty() {
        t.push_str(&fill(&w.points, &[s("points_csv")]));
    }
    t.push_str(&validation_text(w, validation));
    let and_temperature = if has_temperature {
        &w.and_temperature
    } else {
        ""
    };
    let on_site = if energy { &w.on_site } else { "" };
    t.push_str(&fill(&w.footer, &[and_temperature, on_site]));
    t
}

/// One event of the final message: when, how long, which way, how big, why.
fn event_line(
    w: &Words,
    e: &Value,
    with_unit: &dyn Fn(f64) -> String,
    excess_unit: &str,
) -> String {
    let es = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
    let n = |k: &str| num(e.get(k)).unwrap_or(f64::NAN);
    let duration = match es("duration_text") {
        "" => format!("{} h", fmt_num(num(e.get("duration_hours")).unwrap_or(0.0))),
        d => d.to_string(),
    };
    let direction = match es("direction_text") {
        "" => es("direction"),
        d => d,
    };
    let excess = n("excess_energy");
    let drop = es("direction") == "drop";
    let excess_text = match drop {
        true => fmt_num(-excess),
        false => format!("{}{}", if excess > 0.0 { "+" } else { "" }, fmt_num(excess)),
    };
    let mut line = fill(
        if drop { &w.event_drop } else { &w.event },
        &[
            &e.get("event_id")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .to_string(),
            es("when"),
            &duration,
            direction,
            &with_unit(n("peak_value")),
            &with_unit(n("expected_at_peak")),
            &format!("{:+.1}", n("peak_z")),
            &excess_text,
            excess_unit,
        ],
    );
    match num(e.get("excess_pct")) {
        Some(p) if drop => line.push_str(&format!(" ({:.0} %)", -p)),
        Some(p) => line.push_str(&format!(" ({p:+.0} %)")),
        None => {}
    }
    if !es("cause").is_empty() {
        line.push_str(&fill(&w.cause, &[es("cause")]));
    }
    line
}

/// The verdict of the check step.
fn validation_text(w: &Words, validation: &Result<Value, String>) -> String {
    match validation {
        Ok(v) if v.get("ok").and_then(Value::as_bool) == Some(true) => w.valid.to_string(),
        Ok(v) => {
            let mut t = w.problems.to_string();
            let checks = v.get("checks").and_then(Value::as_array);
            for c in checks.into_iter().flatten() {
                if c.get("ok").and_then(Value::as_bool) != Some(true) {
                    t.push_str(&format!(
                        "- {}: {}\n",
                        c.get("name").and_then(Value::as_str).unwrap_or("?"),
                        c.get("detail").and_then(Value::as_str).unwrap_or("")
                    ));
                }
            }
            t
        }
        Err(e) => fill(&w.not_validated, &[e]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_puts_values_in_order() {
        assert_eq!(fill("{} of {}", &["a", "b"]), "a of b");
        assert_eq!(fill("no values", &[]), "no values");
        assert_eq!(fill("{} and {}", &["x"]), "x and ");
    }

    #[test]
    fn nothing_to_analyse_is_said_in_the_language_with_what_was_found() {
        let profile = Profile {
            files: vec![super::super::profile::FileEntry {
                path: "input/notes.pdf".into(),
                status: "not tabular".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let es = no_target_text(words(Lang::Es), &profile, NoTarget::NoReadableTable);
        assert!(
            es.starts_with("No encontré datos en tablas")
                && es.contains("- input/notes.pdf (not tabular)"),
            "{es}"
        );
        let en = no_target_text(words(Lang::En), &profile, NoTarget::EmptyInput);
        assert!(en.starts_with("I found no files under input/"), "{en}");
    }
}
