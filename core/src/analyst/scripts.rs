//! Composing the Python the planner runs: a template (`*.py` beside this file, pulled
//! in with `include_str!`) behind the phase's marker line, with the shared helpers and
//! its configuration substituted as a JSON string literal.

use serde_json::{json, Value};

use super::lexicon;
use super::outputs::OutputNames;
use super::phase::{Phase, PHASE_MARKER};
use super::profile::Target;
use super::request::{self, Recognised};
use super::skills;
use super::texts;

pub(super) const COMMON_PY: &str = include_str!("common.py");
pub(super) const INSPECT_PY: &str = include_str!("inspect.py");
pub(super) const ANALYSE_PY: &str = include_str!("analyse.py");
pub(super) const VALIDATE_PY: &str = include_str!("validate.py");
const SKILLS_PY: &str = include_str!("skills.py");

/// Replaced by a Python string literal holding the step's JSON configuration.
pub(super) const CONFIG_PLACEHOLDER: &str = "__SANDALYST_CONFIG__";

/// Replaced (in `common.py`) by a Python string literal holding the lexicon's words
/// the scripts read.
const LEXICON_PLACEHOLDER: &str = "__SANDALYST_LEXICON__";

/// JSON text with every non-ASCII character escaped (`\uXXXX`, UTF-16 units).
fn ascii_json(v: &Value) -> String {
    let mut out = String::new();
    for c in v.to_string().chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// Build a step's script: marker line, the template's comment header, the shared
/// helpers (if wanted), then the template body with its configuration substituted as a
/// JSON-encoded string literal (so any quoting in file or column names is safe).
fn compose(phase: Phase, template: &str, with_common: bool, config: &Value) -> String {
    let header_len: usize = template
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| l.len() + 1)
        .sum();
    let (header, body) = template.split_at(header_len.min(template.len()));
    let literal = serde_json::to_string(&ascii_json(config)).expect("a string serialises");
    let mut code = format!("{PHASE_MARKER}{}\n{header}", phase.name());
    if with_common {
        let words = serde_json::to_string(&ascii_json(&lexicon::for_scripts()))
            .expect("a string serialises");
        code.push_str(&COMMON_PY.replacen(LEXICON_PLACEHOLDER, &words, 1));
        code.push('\n');
    }
    code.push_str(&body.replacen(CONFIG_PLACEHOLDER, &literal, 1));
    texts::substituted(&code, ascii_json)
}

/// Build a skill's script: as [`compose`] with the shared and the skill helpers, and
/// everything after the `CONFIG` line inside a function (so the script can `return`
/// early and its variables do not clutter the kernel).
pub(super) fn compose_skill(phase: Phase, template: &str, config: &Value) -> String {
    let code = compose(phase, template, true, config);
    let code = code.replacen(
        "# --- end of shared helpers",
        &format!(
            "{}\n# --- end of shared helpers",
            texts::substituted(SKILLS_PY, ascii_json)
        ),
        1,
    );
    let Some(at) = code.find("\nCONFIG = json.loads(") else {
        return code;
    };
    let line_end = code[at + 1..].find('\n').map_or(code.len(), |e| at + 1 + e);
    let (head, body) = code.split_at(line_end);
    let mut out = format!("{head}\n\n\ndef _sandalyst_main():\n");
    for line in body.lines() {
        if !line.trim().is_empty() {
            out.push_str("    ");
            out.push_str(line);
        }
        out.push('\n');
    }
    out.push_str("\n\n_sandalyst_main()\n");
    out
}

pub(super) fn inspect_code() -> String {
    compose(
        Phase::Inspect,
        INSPECT_PY,
        true,
        &json!({ "input_dir": "input" }),
    )
}

/// The inspection as the first turn of an LLM's ask: the same profile with a few
/// rows of each table, within a budget a small model's context can take (its stdout
/// is read by [`super::input_profile`]); nothing it defines stays in the kernel.
pub fn input_profile_code() -> String {
    let code = compose(
        Phase::Inspect,
        INSPECT_PY,
        true,
        &json!({ "input_dir": "input", "sample_rows": 3, "text_budget": 5000 }),
    );
    format!(
        "_sandalyst_before = set(globals())\n{code}\n\
         for _k in [k for k in list(globals()) if k not in _sandalyst_before]:\n    del globals()[_k]\n"
    )
}

/// The analysis script: [`compose`] with the anomaly skill's configuration.
pub(super) fn analysis_code(
    target: &Target,
    outputs: &OutputNames,
    simple: bool,
    rec: &Recognised,
) -> String {
    let phase = if simple {
        Phase::AnalyseSimple
    } else {
        Phase::Analyse
    };
    let t = &target.table;
    let temp = t.temperature.as_ref();
    let config = json!({
        "mode": if simple { "simple" } else { "full" },
        "lang": rec.lang,
        "ascii": rec.ascii,
        "input": t.path,
        "kind": t.kind.clone().unwrap_or_else(|| "csv".into()),
        "sheet": t.sheet,
        "time_col": target.time.name,
        "time_unit": target.time.unit,
        "measure_col": target.measure.name,
        "measure_unit": target.measure.unit,
        "measure_kind": target.measure.kind,
        "temp_col": temp.map(|x| x.name.clone()),
        "temp_unit": temp.map(|x| x.unit.clone()),
        "category_col": target.category,
        "outputs": { "csv": outputs.csv, "png": outputs.png, "md": outputs.md },
        "z_threshold": 3.5,
        "z_extend": 2.0,
        "z_single": 6.0,
        "materiality": 0.10,
    });
    compose(phase, ANALYSE_PY, true, &config)
}

pub(super) fn validation_code(outputs: &OutputNames, result: &Value, rec: &Recognised) -> String {
    let starts: Vec<Value> = result
        .get("events")
        .and_then(Value::as_array)
        .map(|evs| evs.iter().filter_map(|e| e.get("start").cloned()).collect())
        .unwrap_or_default();
    // The result lists at most 20 events; the count covers all of them.
    let config = json!({
        "outputs": { "csv": outputs.csv, "png": outputs.png, "md": outputs.md },
        "event_starts": starts,
        "n_events": result.get("n_events").and_then(Value::as_u64).unwrap_or(0),
        "columns": result.get("columns").cloned().unwrap_or_else(|| json!([])),
        "plain": rec.lang == request::Lang::En || rec.ascii,
        "report_needs": report_needs(rec),
    });
    compose(Phase::Validate, VALIDATE_PY, false, &config)
}

/// What the check step looks for in the report: the headings and words of the method,
/// in the report's language (as `texts.toml`'s `[anomaly]` writes them).
fn report_needs(rec: &Recognised) -> Vec<String> {
    let needs = match rec.lang {
        request::Lang::En => [
            "## method",
            "robust z",
            "threshold",
            "## events",
            "## limitations",
        ],
        request::Lang::Es => [
            "## método",
            "z robusto",
            "umbral",
            "## eventos",
            "## limitaciones",
        ],
    };
    needs
        .iter()
        .map(|n| {
            if rec.ascii {
                skills::to_ascii(n)
            } else {
                n.to_string()
            }
        })
        .collect()
}
