//! The built-in offline analyst: a deterministic, rule-based planner. **It is not an
//! LLM** and never calls one; it is the default model when no provider is configured
//! and the model of the end-to-end tests.
//!
//! It drives the same tool protocol as a real model, with real Python it writes from
//! templates (`offline/*.py`, pulled in with `include_str!`). It plans from the latest
//! user message (app notes, `[from the app] ...`, are not the task), which
//! [`request::recognise`] reads as one of its skills, in English or Spanish:
//!
//! | Skill | Asked as | Planner | Script |
//! |---|---|---|---|
//! | anomalies in a time series | "find abnormal events", "busca anomalías" | this module | `analyse.py`, `validate.py` |
//! | data profile | "what is in this file?", "describe", "resume" | `skills.rs` | `profile.py` |
//! | aggregate questions | "which region had the highest revenue in February?" | `skills.rs` | `aggregate.py` |
//! | correlation, trend | "is temperature correlated with humidity?", "weekly trend of visits" | `skills.rs` | `relate.py` |
//! | none of these | "forecast next month" | `skills.rs` | `profile.py`, after an honest "I cannot" |
//!
//! Every ask starts with the same inspection; the question skills then run one script
//! that writes a table, a chart and a report and prints `SANDALYST_ANSWER {json}`, from
//! which the final message is written in the request's language (ASCII when asked).
//! A follow-up in a session is a new ask: it gets its own skill, and its script reuses
//! the table the kernel already loaded (or reads the file again in a new kernel). The
//! anomaly skill, unchanged in its findings:
//!
//! 1. **Inspect** (`offline/inspect.py`): list every file under `input/`, read each
//!    tabular one (CSV/TSV, Excel if openpyxl is installed, JSON, Parquet if pyarrow is
//!    installed), print a profile (rows, columns, dtypes, missing values, time range)
//!    and one machine-readable line `SANDALYST_PROFILE {json}` naming the time column,
//!    the ranked numeric measures (energy/power names first, then variance) and an
//!    outdoor-temperature column with its unit (C or F, from the name or value range).
//! 2. **Analyse** (`offline/analyse.py`, filled in with the chosen file and columns):
//!    regular time grid at the median interval (missing readings stay missing), a
//!    leave-one-out median profile by time of week, a Huber-fitted heating/cooling
//!    degree model of outdoor temperature (backfitted with the profile), robust
//!    z-scores of the residuals (1.4826 x MAD at the same hour of day +/- 1 h,
//!    weekdays and weekends apart), readings with
//!    |z| >= 3.5 grouped into events (gaps up to 1 h, extended while |z| >= 2), events
//!    dropped as normal noise when they are a single reading with |z| < 6 or deviate
//!    by less than 10 % of the typical level, runs of identical readings (>= 3 h)
//!    reported as stuck-meter events. Each event gets a plausible explanation drawn
//!    only from its timestamps, values and temperature. Writes the event table (CSV,
//!    one row per event, plus `<stem>_points.csv` with every reading inside an event),
//!    a chart (PNG) and a report (Markdown) in the request's language, with the words
//!    of `offline/anomaly_texts.py` (English is plain ASCII, Spanish too when asked;
//!    the event table stays English); prints `SANDALYST_RESULT`.
//! 3. **Validate** (`offline/validate.py`): reopen the three files and check them;
//!    prints `SANDALYST_VALIDATION`.
//! 4. **Finish**: a final answer (no tool call) summarising the events and the files,
//!    in the request's language ([`anomalies`]: one builder, a table of words a
//!    language).
//!
//! The planner is stateless over the conversation: each turn it finds its own earlier
//! calls by the `# sandalyst-offline-phase: <phase>` marker line in their code, reads
//! the matching tool outputs and decides the next step. Failures are handled once and
//! deterministically: a failed inspection is retried once; a failed analysis falls
//! back once to a simplified analysis (no temperature model, simpler chart); if that
//! fails too, or no usable time series is found, it finishes with an explanation; a
//! failed validation is reported in the final answer. It never makes more than
//! [`MAX_CALLS`] calls.
//!
//! Output names come from the task: the first `output/<name>.csv`, `.png` and `.md`
//! mentioned in it, else `output/anomalies.csv`, `output/anomalies.png` and
//! `output/report.md` (`output/answer.*` for questions, `output/profile.*` for the
//! profile).

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::{Item, Model, Reply, Request};

mod anomalies;
pub mod request;
mod skills;

use request::{recognise, Recognised, Skill};

const COMMON_PY: &str = include_str!("common.py");
const INSPECT_PY: &str = include_str!("inspect.py");
const ANALYSE_PY: &str = include_str!("analyse.py");
const ANOMALY_TEXTS_PY: &str = include_str!("anomaly_texts.py");
const VALIDATE_PY: &str = include_str!("validate.py");
const SKILLS_PY: &str = include_str!("skills.py");

/// Replaced by a Python string literal holding the step's JSON configuration.
const CONFIG_PLACEHOLDER: &str = "__SANDALYST_CONFIG__";
/// First line of every script; how the planner recognises its own earlier calls.
const PHASE_MARKER: &str = "# sandalyst-offline-phase: ";
/// Hard cap on the planner's tool calls in one run (inspect x2, analyse x2, validate).
pub const MAX_CALLS: usize = 6;
/// Readings needed before a baseline is attempted.
const MIN_ROWS: u64 = 24;

/// The built-in offline analyst (rule-based, not an LLM). See the module docs.
#[derive(Clone, Debug, Default)]
pub struct OfflineAnalyst {
    _private: (),
}

impl OfflineAnalyst {
    pub fn new() -> Self {
        OfflineAnalyst::default()
    }
}

/// The steps the planner can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Inspect,
    Analyse,
    /// The fallback analysis after `Analyse` failed.
    AnalyseSimple,
    Validate,
    /// The data profile (also with the answer to a request no skill covers).
    Profile,
    /// An aggregate question.
    Aggregate,
    /// A correlation or a trend.
    Relate,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Inspect => "inspect",
            Phase::Analyse => "analyse",
            Phase::AnalyseSimple => "analyse-simple",
            Phase::Validate => "validate",
            Phase::Profile => "profile",
            Phase::Aggregate => "aggregate",
            Phase::Relate => "relate",
        }
    }

    fn from_name(s: &str) -> Option<Phase> {
        [
            Phase::Inspect,
            Phase::Analyse,
            Phase::AnalyseSimple,
            Phase::Validate,
            Phase::Profile,
            Phase::Aggregate,
            Phase::Relate,
        ]
        .into_iter()
        .find(|p| p.name() == s)
    }
}

/// Where the three outputs go, relative to the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputNames {
    pub csv: String,
    pub png: String,
    pub md: String,
}

impl Default for OutputNames {
    fn default() -> Self {
        OutputNames {
            csv: "output/anomalies.csv".into(),
            png: "output/anomalies.png".into(),
            md: "output/report.md".into(),
        }
    }
}

/// The first `output/<name>.csv|png|md` mentioned in the task for each kind (also with
/// a `/workspace/` prefix or in sub-folders of output/); defaults for the rest.
pub fn output_names(task: &str) -> OutputNames {
    let mut names = OutputNames::default();
    let (mut csv, mut png, mut md) = (false, false, false);
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || "_-./".contains(c);
    let mut from = 0;
    while let Some(pos) = task[from..].find("output/") {
        let start = from + pos;
        from = start + "output/".len();
        // Must start a path: not part of a longer word like "myoutput/".
        let before = task[..start].chars().next_back();
        if let Some(b) = before {
            if b.is_ascii_alphanumeric() || b == '_' || b == '-' || b == '.' {
                continue;
            }
            if b == '/' && !task[..start].ends_with("/workspace/") {
                continue;
            }
        }
        let end = task[start..]
            .find(|c: char| !is_name_char(c))
            .map_or(task.len(), |e| start + e);
        let path = task[start..end].trim_end_matches(['.', '/', '-']);
        if path
            .split('/')
            .any(|seg| seg.is_empty() || seg == "." || seg == "..")
        {
            continue;
        }
        let lower = path.to_ascii_lowercase();
        let stem_ok = path
            .rsplit('/')
            .next()
            .is_some_and(|f| f.len() > 4 && !f.starts_with('.'));
        if !stem_ok {
            continue;
        }
        if lower.ends_with(".csv") && !csv {
            names.csv = path.to_string();
            csv = true;
        } else if lower.ends_with(".png") && !png {
            names.png = path.to_string();
            png = true;
        } else if lower.ends_with(".md") && !md {
            names.md = path.to_string();
            md = true;
        }
    }
    names
}

// ---- the inspection profile, as printed by inspect.py --------------------------------

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct Profile {
    files: Vec<FileEntry>,
    tables: Vec<Table>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct FileEntry {
    path: String,
    kind: Option<String>,
    status: String,
    reason: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct Table {
    path: String,
    sheet: Option<String>,
    kind: Option<String>,
    rows: u64,
    column_names: Vec<String>,
    time: Vec<TimeCandidate>,
    measures: Vec<Measure>,
    temperature: Option<Temperature>,
    categories: Vec<Category>,
    time_span: Option<TimeSpan>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct TimeCandidate {
    name: String,
    unit: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct Measure {
    name: String,
    unit: String,
    kind: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct Temperature {
    name: String,
    unit: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct Category {
    name: String,
    distinct: u64,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct TimeSpan {
    duplicates: u64,
}

/// What the analysis step will look at.
#[derive(Clone, Debug)]
struct Target {
    table: Table,
    time: TimeCandidate,
    measure: Measure,
    category: Option<String>,
}

/// Why there is nothing to analyse ([`anomalies::no_target_text`] says it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NoTarget {
    /// No file under input/.
    EmptyInput,
    /// Files, but no table could be read.
    NoReadableTable,
    /// Tables, but none with a time column, a numeric measure and enough rows.
    NoTimeSeries,
}

/// Pick the table and columns to analyse, or say why there is nothing to analyse.
fn choose_target(profile: &Profile, task: &str) -> Result<Target, NoTarget> {
    let task_lower = task.to_lowercase();
    let mentioned = |name: &str| name.len() >= 3 && task_lower.contains(&name.to_lowercase());
    if profile.files.is_empty() {
        return Err(NoTarget::EmptyInput);
    }
    if profile.tables.is_empty() {
        return Err(NoTarget::NoReadableTable);
    }
    let usable: Vec<&Table> = profile
        .tables
        .iter()
        .filter(|t| !t.time.is_empty() && !t.measures.is_empty() && t.rows >= MIN_ROWS)
        .collect();
    if usable.is_empty() {
        return Err(NoTarget::NoTimeSeries);
    }
    let file_mentioned = |t: &Table| {
        let base = t.path.rsplit('/').next().unwrap_or(&t.path);
        mentioned(base)
    };
    let table = usable
        .iter()
        .copied()
        .filter(|t| file_mentioned(t))
        .max_by_key(|t| t.rows)
        .or_else(|| {
            // Most rows wins; the first listed on a tie.
            usable.iter().copied().rev().max_by_key(|t| t.rows)
        })
        .expect("usable is not empty");
    let measure = table
        .measures
        .iter()
        .find(|m| mentioned(&m.name))
        .unwrap_or(&table.measures[0])
        .clone();
    // Several entities (sites, meters) in one long table: duplicated timestamps plus a
    // category column. The analysis then keeps the most frequent entity.
    let dups = table.time_span.as_ref().map_or(0, |s| s.duplicates);
    let category = if dups * 10 >= table.rows.max(1) {
        table
            .categories
            .iter()
            .find(|c| (2..=50).contains(&c.distinct))
            .map(|c| c.name.clone())
    } else {
        None
    };
    Ok(Target {
        table: table.clone(),
        time: table.time[0].clone(),
        measure,
        category,
    })
}

// ---- composing the Python ------------------------------------------------------------

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
        code.push_str(COMMON_PY);
        code.push('\n');
    }
    code.push_str(&body.replacen(CONFIG_PLACEHOLDER, &literal, 1));
    code
}

/// Build a skill's script: as [`compose`] with the shared and the skill helpers, and
/// everything after the `CONFIG` line inside a function (so the script can `return`
/// early and its variables do not clutter the kernel).
fn compose_skill(phase: Phase, template: &str, config: &Value) -> String {
    let code = compose(phase, template, true, config);
    let code = code.replacen(
        "# --- end of shared helpers",
        &format!("{SKILLS_PY}\n# --- end of shared helpers"),
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

fn inspect_code() -> String {
    compose(
        Phase::Inspect,
        INSPECT_PY,
        true,
        &json!({ "input_dir": "input" }),
    )
}

fn analysis_config(
    target: &Target,
    outputs: &OutputNames,
    simple: bool,
    rec: &Recognised,
) -> Value {
    let t = &target.table;
    let temp = t.temperature.as_ref();
    json!({
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
    })
}

/// The analysis script: [`compose`] with the report's and chart's words
/// (`anomaly_texts.py`) after the shared helpers.
fn analysis_code(target: &Target, outputs: &OutputNames, simple: bool, rec: &Recognised) -> String {
    let phase = if simple {
        Phase::AnalyseSimple
    } else {
        Phase::Analyse
    };
    let config = analysis_config(target, outputs, simple, rec);
    compose(phase, ANALYSE_PY, true, &config).replacen(
        "# --- end of shared helpers",
        &format!("{ANOMALY_TEXTS_PY}\n# --- end of shared helpers"),
        1,
    )
}

fn validation_code(outputs: &OutputNames, result: &Value, rec: &Recognised) -> String {
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
/// in the report's language (as `anomaly_texts.py` writes them).
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

// ---- reading the conversation --------------------------------------------------------

/// One of the planner's earlier calls and what came back.
#[derive(Debug, Clone, Copy)]
struct Turn<'a> {
    phase: Phase,
    output: Option<&'a str>,
    is_error: bool,
}

/// The code (python) or command (shell) of a call, if its arguments parse.
fn call_source(name: &str, arguments: &str) -> Option<String> {
    let v: Value = serde_json::from_str(arguments).ok()?;
    let field = if name == "shell" { "command" } else { "code" };
    v.get(field)?.as_str().map(str::to_owned)
}

fn phase_of(source: &str) -> Option<Phase> {
    source
        .lines()
        .find_map(|l| l.strip_prefix(PHASE_MARKER))
        .and_then(|p| Phase::from_name(p.trim()))
}

fn own_turns(items: &[Item]) -> Vec<Turn<'_>> {
    let mut turns = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Item::ToolCall {
            call_id,
            name,
            arguments,
        } = item
        else {
            continue;
        };
        let Some(phase) = call_source(name, arguments).as_deref().and_then(phase_of) else {
            continue;
        };
        let reply = items[i + 1..].iter().find_map(|it| match it {
            Item::ToolOutput {
                call_id: c,
                output,
                is_error,
                ..
            } if c == call_id => Some((output.as_str(), *is_error)),
            _ => None,
        });
        turns.push(Turn {
            phase,
            output: reply.map(|r| r.0),
            is_error: reply.is_none_or(|r| r.1),
        });
    }
    turns
}

/// The JSON after `tag ` on its own line of a tool output.
fn tagged_json(output: &str, tag: &str) -> Option<Value> {
    output.lines().rev().find_map(|l| {
        l.trim_start()
            .strip_prefix(tag)
            .and_then(|rest| rest.strip_prefix(' '))
            .and_then(|j| serde_json::from_str(j.trim()).ok())
    })
}

/// A short account of why a step failed: status line plus the last traceback line.
fn error_summary(output: Option<&str>) -> String {
    let Some(out) = output else {
        return "the step produced no output (it was not run)".into();
    };
    let status = out.lines().next().unwrap_or("").trim().to_string();
    let mut last = None;
    let mut section = "";
    for line in out.lines().skip(1) {
        let t = line.trim();
        if t.starts_with('[') && t.ends_with(']') {
            section = match t {
                "[traceback]" => "traceback",
                "[stderr]" => "stderr",
                _ => "",
            };
            continue;
        }
        if let Some(note) = t.strip_prefix("[note]") {
            last = Some(format!("note: {}", note.trim()));
            continue;
        }
        if !t.is_empty() && (section == "traceback" || (section == "stderr" && last.is_none())) {
            last = Some(t.to_string());
        }
    }
    let mut s = status;
    if let Some(l) = last {
        s.push_str("; ");
        s.push_str(&l);
    }
    if s.chars().count() > 400 {
        s = s.chars().take(400).collect::<String>() + "...";
    }
    s
}

/// The task: the text of the latest user message; output names from it, or else (for
/// a repeated anomaly analysis) from the first one.
fn task_and_outputs(items: &[Item]) -> (String, OutputNames, usize) {
    let mut users = items.iter().enumerate().filter_map(|(i, it)| match it {
        Item::User { text } if !text.starts_with(APP_NOTE) => Some((i, without_app_notes(text))),
        _ => None,
    });
    let first = users.next();
    let last = users.next_back().or(first);
    let (start, text) = last.unwrap_or((0, ""));
    let mut names = output_names(text);
    if let Some((_, first_text)) = first {
        let defaults = OutputNames::default();
        let from_first = output_names(first_text);
        if names.csv == defaults.csv {
            names.csv = from_first.csv;
        }
        if names.png == defaults.png {
            names.png = from_first.png;
        }
        if names.md == defaults.md {
            names.md = from_first.md;
        }
    }
    (text.to_string(), names, start)
}

// Notes the app adds to the conversation (reminders, files added, the kernel being
// new) start with APP_NOTE, as their own message or after the user's words; they are
// not the user's task.
use crate::protocol::APP_NOTE;

/// The user's own words of a message: what comes before an app note on its own lines.
fn without_app_notes(text: &str) -> &str {
    match text.find(&format!("\n\n{APP_NOTE}")) {
        Some(at) => &text[..at],
        None => text,
    }
}

// ---- deciding the next step ----------------------------------------------------------

/// What the planner does next.
#[derive(Debug)]
enum Next {
    Call(Phase, String, String),
    Finish(String),
}

/// What the planner knows when it decides the next step.
struct Plan<'a> {
    task: String,
    /// The skill, language and operation of the task.
    rec: Recognised,
    outputs: OutputNames,
    turns: Vec<Turn<'a>>,
    /// The latest successful inspection, if any.
    profile: Option<Profile>,
    /// The answer to the previous question in this conversation, if any: a follow-up
    /// ("now by month") keeps its table, measure and operation.
    previous: Option<Value>,
}

fn plan(items: &[Item]) -> Next {
    let (task, mut outputs, start) = task_and_outputs(items);
    let mut rec = recognise(&task);
    if rec.skill != Skill::Anomalies {
        outputs = output_names(&task);
    }
    let turns = own_turns(&items[start..]);
    let Some(last) = turns.last().copied() else {
        let narration = if rec.skill == Skill::Anomalies {
            anomalies::words(rec.lang).step1.to_string()
        } else {
            skills::inspect_narration(rec.lang)
        };
        return Next::Call(Phase::Inspect, inspect_code(), narration);
    };
    if turns.len() >= MAX_CALLS {
        let (steps, why) = (turns.len().to_string(), error_summary(last.output));
        let stopped = anomalies::words(rec.lang).stopped;
        return Next::Finish(anomalies::fill(stopped, &[&steps, last.phase.name(), &why]));
    }
    let profile = turns
        .iter()
        .rev()
        .filter(|t| t.phase == Phase::Inspect && !t.is_error)
        .find_map(|t| t.output.and_then(|o| tagged_json(o, "SANDALYST_PROFILE")))
        .and_then(|v| serde_json::from_value::<Profile>(v).ok());
    if rec.unsure {
        let columns: Vec<String> = profile
            .iter()
            .flat_map(|p| p.tables.iter())
            .flat_map(|t| t.column_names.iter().cloned())
            .collect();
        if request::names_a_column(&task, &columns) {
            rec.skill = Skill::Aggregate;
        }
    }
    let previous = items[..start].iter().rev().find_map(|i| match i {
        Item::ToolOutput {
            output,
            is_error: false,
            ..
        } => tagged_json(output, "SANDALYST_ANSWER")
            .filter(|a| a.get("ok").and_then(Value::as_bool) == Some(true)),
        _ => None,
    });
    let plan = Plan {
        task,
        rec,
        outputs,
        turns,
        profile,
        previous,
    };
    match last.phase {
        Phase::Inspect if plan.rec.skill != Skill::Anomalies && plan.profile.is_some() => {
            plan.skill_step(skills::phase_of_skill(plan.rec.skill))
        }
        Phase::Inspect => plan.after_inspect(last),
        Phase::Analyse | Phase::AnalyseSimple => plan.after_analysis(last),
        Phase::Validate => plan.after_validation(last),
        Phase::Profile | Phase::Aggregate | Phase::Relate => plan.after_skill(last),
    }
}

impl Plan<'_> {
    /// Run a skill's script on the table the task is about, or explain why not.
    fn skill_step(&self, phase: Phase) -> Next {
        let profile = self.profile.as_ref().expect("checked by the caller");
        let earlier = self
            .previous
            .as_ref()
            .and_then(|a| a.get("input"))
            .and_then(Value::as_str);
        let Some(table) = skills::choose_table(&profile.tables, &self.task, earlier) else {
            // No table: the anomaly planner's explanations cover every case.
            return match choose_target(profile, &self.task) {
                Err(why) => Next::Finish(anomalies::no_target_text(self.words(), profile, why)),
                Ok(_) => Next::Finish("I found no table to answer from.".into()),
            };
        };
        let others: Vec<&Table> = profile
            .tables
            .iter()
            .filter(|t| t.path != table.path)
            .collect();
        let outputs = skills::outputs_for(phase, &self.outputs);
        Next::Call(
            phase,
            skills::skill_code(
                phase,
                table,
                &others,
                &self.task,
                &self.rec,
                self.previous.as_ref(),
                &outputs,
            ),
            skills::narration(phase, table, self.rec.lang),
        )
    }

    /// The answer from a skill's script; a question the data cannot answer gets the
    /// profile instead, once.
    fn after_skill(&self, last: Turn) -> Next {
        let answer = last
            .output
            .filter(|_| !last.is_error)
            .and_then(|o| tagged_json(o, "SANDALYST_ANSWER"));
        let ok = answer
            .as_ref()
            .and_then(|a| a.get("ok"))
            .and_then(Value::as_bool)
            == Some(true);
        let lang = self.rec.lang;
        if ok {
            let answer = answer.expect("ok implies an answer");
            let prefix = if last.phase != Phase::Profile {
                None
            } else if let Some(why) = self.skill_failure() {
                Some(skills::fallback_note(lang, &why))
            } else if self.rec.skill == Skill::Unsupported {
                Some(skills::cannot_text(lang).to_string())
            } else {
                None
            };
            return Next::Finish(skills::answer_text(&self.rec, &answer, prefix.as_deref()));
        }
        let why = answer
            .as_ref()
            .and_then(|a| a.get("reason"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| error_summary(last.output));
        if last.phase != Phase::Profile && self.count(Phase::Profile) == 0 {
            return self.skill_step(Phase::Profile);
        }
        let mut text = match self.rec.skill {
            Skill::Unsupported => format!("{}\n\n", skills::cannot_text(lang)),
            _ => String::new(),
        };
        text.push_str(&match lang {
            request::Lang::En => format!("I could not profile the data ({why})."),
            request::Lang::Es => format!("No pude describir los datos ({why})."),
        });
        Next::Finish(text)
    }

    /// Why the skill's own script did not answer, when the profile stands in for it.
    fn skill_failure(&self) -> Option<String> {
        self.turns
            .iter()
            .find(|t| matches!(t.phase, Phase::Aggregate | Phase::Relate))
            .map(|t| {
                t.output
                    .filter(|_| !t.is_error)
                    .and_then(|o| tagged_json(o, "SANDALYST_ANSWER"))
                    .and_then(|a| a.get("reason").and_then(Value::as_str).map(str::to_owned))
                    .unwrap_or_else(|| error_summary(t.output))
            })
    }

    /// The anomaly skill's words in the request's language.
    fn words(&self) -> &'static anomalies::Words {
        anomalies::words(self.rec.lang)
    }

    fn count(&self, phase: Phase) -> usize {
        self.turns.iter().filter(|t| t.phase == phase).count()
    }

    /// Analyse what the inspection found, retry it once, or explain why not.
    fn after_inspect(&self, last: Turn) -> Next {
        if let Some(profile) = &self.profile {
            match choose_target(profile, &self.task) {
                Ok(target) => Next::Call(
                    Phase::Analyse,
                    analysis_code(&target, &self.outputs, false, &self.rec),
                    anomalies::analysis_narration(self.words(), &target, &self.outputs),
                ),
                Err(why) => Next::Finish(anomalies::no_target_text(self.words(), profile, why)),
            }
        } else if self.count(Phase::Inspect) < 2 {
            let why = error_summary(last.output);
            let narration = anomalies::fill(self.words().inspect_retry, &[&why]);
            Next::Call(Phase::Inspect, inspect_code(), narration)
        } else {
            let why = error_summary(last.output);
            Next::Finish(anomalies::fill(self.words().inspect_failed, &[&why]))
        }
    }

    /// Validate the outputs, fall back once to the simple analysis, or explain.
    fn after_analysis(&self, last: Turn) -> Next {
        let result = last
            .output
            .filter(|_| !last.is_error)
            .and_then(|o| tagged_json(o, "SANDALYST_RESULT"));
        if let Some(result) = result {
            return Next::Call(
                Phase::Validate,
                validation_code(&self.outputs, &result, &self.rec),
                anomalies::validation_narration(self.words(), &self.outputs),
            );
        }
        let target = self
            .profile
            .as_ref()
            .and_then(|p| choose_target(p, &self.task).ok());
        match (last.phase, target) {
            (Phase::Analyse, Some(target)) if self.count(Phase::AnalyseSimple) == 0 => Next::Call(
                Phase::AnalyseSimple,
                analysis_code(&target, &self.outputs, true, &self.rec),
                anomalies::fallback_narration(self.words(), &error_summary(last.output)),
            ),
            _ => {
                let first = self
                    .turns
                    .iter()
                    .find(|t| t.phase == Phase::Analyse)
                    .map(|t| error_summary(t.output));
                let w = self.words();
                let why = error_summary(last.output);
                let mut s = w.not_completed.to_string();
                s.push_str(&match (first, last.phase) {
                    (Some(f), Phase::AnalyseSimple) => anomalies::fill(w.both_failed, &[&f, &why]),
                    _ => anomalies::fill(w.step_failed, &[&why]),
                });
                let o = &self.outputs;
                s.push_str(&anomalies::fill(w.may_be_missing, &[&o.csv, &o.png, &o.md]));
                Next::Finish(s)
            }
        }
    }

    /// Summarise the run for the user.
    fn after_validation(&self, last: Turn) -> Next {
        let analysis = self
            .turns
            .iter()
            .rev()
            .filter(|t| matches!(t.phase, Phase::Analyse | Phase::AnalyseSimple) && !t.is_error)
            .find_map(|t| {
                t.output
                    .and_then(|o| tagged_json(o, "SANDALYST_RESULT"))
                    .map(|r| (t.phase, r))
            });
        let fallback_reason = self
            .turns
            .iter()
            .find(|t| t.phase == Phase::Analyse && t.is_error)
            .map(|t| error_summary(t.output));
        let validation = if last.is_error {
            Err(error_summary(last.output))
        } else {
            last.output
                .and_then(|o| tagged_json(o, "SANDALYST_VALIDATION"))
                .ok_or_else(|| "the validation printed no verdict".to_string())
        };
        match analysis {
            Some((_, result)) => {
                let mut text = anomalies::final_text(
                    self.words(),
                    &result,
                    &self.outputs,
                    fallback_reason.as_deref(),
                    &validation,
                );
                let analysed = result.get("input").and_then(Value::as_str).unwrap_or("");
                let others: Vec<String> = self
                    .profile
                    .iter()
                    .flat_map(|p| p.tables.iter())
                    .filter(|t| {
                        t.path != analysed
                            && !t.time.is_empty()
                            && !t.measures.is_empty()
                            && t.rows >= MIN_ROWS
                    })
                    .map(|t| t.path.clone())
                    .collect();
                if !others.is_empty() {
                    text.push_str(&anomalies::also_inspected(self.words(), &others));
                }
                if self.rec.ascii {
                    text = skills::to_ascii(&text);
                }
                Next::Finish(text)
            }
            None => Next::Finish(self.words().no_result.into()),
        }
    }
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

/// A number as a person would write it: 3 significant digits or so, no trailing zeros.
fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "?".into();
    }
    let a = x.abs();
    let decimals = if a >= 100.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{x:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// Wrap Python for the shell tool when the python tool is not offered.
fn as_shell(code: &str) -> String {
    format!("python3 - <<'SANDALYST_PY'\n{code}\nSANDALYST_PY\n")
}

#[async_trait]
impl Model for OfflineAnalyst {
    fn describe(&self) -> String {
        "offline analyst (built-in, rule-based, not an LLM)".into()
    }

    async fn respond(
        &mut self,
        request: Request<'_>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Reply> {
        if cancel.is_cancelled() {
            anyhow::bail!("cancelled");
        }
        let items = match plan(request.items) {
            Next::Finish(text) => vec![Item::Assistant { text }],
            Next::Call(phase, code, narration) => {
                let has = |n: &str| request.tools.iter().any(|t| t.name == n);
                // No tools listed means the defaults: python.
                let (name, arguments) = if request.tools.is_empty() || has("python") {
                    ("python", json!({ "code": code }))
                } else if has("shell") {
                    ("shell", json!({ "command": as_shell(&code) }))
                } else {
                    return Ok(Reply {
                        items: vec![Item::Assistant {
                            text:
                                "I need the python tool (or the shell tool) to analyse the files, \
                                   but neither is enabled for this run."
                                    .into(),
                        }],
                        ..Reply::default()
                    });
                };
                let n = own_turns(request.items).len() + 1;
                vec![
                    Item::Assistant { text: narration },
                    Item::ToolCall {
                        call_id: format!("offline-{n}-{}", phase.name()),
                        name: name.into(),
                        arguments: arguments.to_string(),
                    },
                ]
            }
        };
        Ok(Reply {
            items,
            ..Reply::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolSpec;

    const REFERENCE_TASK: &str = include_str!("../../../../examples/anomaly_task.md");

    fn tools() -> Vec<ToolSpec> {
        ["python", "shell"]
            .iter()
            .map(|n| ToolSpec {
                name: n.to_string(),
                description: String::new(),
                parameters: json!({}),
            })
            .collect()
    }

    #[tokio::test]
    async fn a_follow_up_gets_its_own_skill() {
        let mut model = OfflineAnalyst::new();
        let mut items = vec![
            Item::User {
                text: REFERENCE_TASK.into(),
            },
            Item::Assistant {
                text: "Found 3 events.".into(),
            },
            Item::User {
                text: "Now split it by weekday".into(),
            },
        ];
        // Inspect again (the kernel may be new), then the aggregate script.
        let reply = step(&mut model, &items, &tools()).await;
        let (_, _, code) = the_call(&reply);
        assert_eq!(phase_of(&code), Some(Phase::Inspect));
        answer(
            &mut items,
            &reply,
            &ok_output(&format!("SANDALYST_PROFILE {}", reference_profile())),
            false,
        );
        let reply = step(&mut model, &items, &tools()).await;
        let (_, _, code) = the_call(&reply);
        assert_eq!(phase_of(&code), Some(Phase::Aggregate));
        let cfg = embedded_config(&code);
        assert_eq!(cfg["request"], "Now split it by weekday");
        assert_eq!(cfg["outputs"]["csv"], "output/answer.csv");
        assert!(code.contains("def _sandalyst_main():"));
        // A request outside every skill: the honest answer comes with the profile.
        let out = json!({"skill": "profile", "ok": true, "headline": "input/x.csv: 3 rows",
                         "files": [{"path": "output/profile.md", "what": "the profile report"}]});
        let mut poem = items[..2].to_vec();
        poem.push(Item::User {
            text: "Write me a poem about this data".into(),
        });
        let r = step(&mut model, &poem, &tools()).await;
        answer(
            &mut poem,
            &r,
            &ok_output(&format!("SANDALYST_PROFILE {}", reference_profile())),
            false,
        );
        let r = step(&mut model, &poem, &tools()).await;
        assert_eq!(phase_of(&the_call(&r).2), Some(Phase::Profile));
        answer(
            &mut poem,
            &r,
            &ok_output(&format!("SANDALYST_ANSWER {out}")),
            false,
        );
        let text = final_answer(&step(&mut model, &poem, &tools()).await);
        assert!(text.starts_with("I cannot answer that"), "{text}");
        assert!(text.contains("--model openai:MODEL") && text.contains("input/x.csv: 3 rows"));
        assert!(!text.contains("anomalies.csv") && !text.contains("Found "));
    }

    async fn step(model: &mut OfflineAnalyst, items: &[Item], tools: &[ToolSpec]) -> Reply {
        model
            .respond(
                Request {
                    instructions: "",
                    items,
                    tools,
                    on_delta: &crate::model::no_deltas,
                },
                &CancellationToken::new(),
            )
            .await
            .unwrap()
    }

    /// The single tool call of a reply: (call_id, name, code or command).
    fn the_call(reply: &Reply) -> (String, String, String) {
        let calls: Vec<_> = reply.tool_calls().collect();
        assert_eq!(calls.len(), 1, "{:?}", reply.items);
        let (id, name, args) = calls[0];
        (
            id.to_string(),
            name.to_string(),
            call_source(name, args).unwrap(),
        )
    }

    fn final_answer(reply: &Reply) -> String {
        assert_eq!(reply.tool_calls().count(), 0, "{:?}", reply.items);
        match reply.items.as_slice() {
            [Item::Assistant { text }] => text.clone(),
            other => panic!("expected one assistant text, got {other:?}"),
        }
    }

    /// Append the reply and a tool output for its call.
    fn answer(items: &mut Vec<Item>, reply: &Reply, output: &str, is_error: bool) {
        let (id, _, _) = the_call(reply);
        items.extend(reply.items.iter().cloned());
        items.push(Item::ToolOutput {
            call_id: id,
            output: output.into(),
            is_error,
            images: Vec::new(),
        });
    }

    fn ok_output(stdout: &str) -> String {
        format!("status: ok (0.42 s)\n[stdout]\n{stdout}\n")
    }

    fn error_output(last: &str) -> String {
        format!(
            "status: error (0.10 s)\n[traceback]\nTraceback (most recent call last):\n  File \"<cell>\", line 3\n{last}\n"
        )
    }

    fn reference_profile() -> Value {
        json!({
            "version": 1,
            "files": [
                {"path": "input/notes.txt", "size": 6, "kind": null, "status": "not_tabular", "reason": "not a tabular file type"},
                {"path": "input/building_energy.csv", "size": 41969, "kind": "csv", "status": "ok", "reason": null}
            ],
            "tables": [{
                "path": "input/building_energy.csv", "sheet": null, "kind": "csv", "rows": 1344, "columns": 3,
                "column_names": ["timestamp", "energy_kwh", "outdoor_temp_c"], "missing_total": 0,
                "time": [{"name": "timestamp", "score": 2.5, "unit": null, "parsed_fraction": 1.0}],
                "measures": [{"name": "energy_kwh", "unit": "kWh", "kind": "energy", "reason": "name suggests energy/power",
                              "variance": 1012.0, "median": 46.26, "missing": 0, "score": 4.0}],
                "temperature": {"name": "outdoor_temp_c", "unit": "C", "unit_source": "column name"},
                "categories": [],
                "time_span": {"start": "2024-05-06 00:00:00", "end": "2024-06-30 23:00:00", "interval_seconds": 3600.0,
                              "duplicates": 0, "missing_intervals": 0}
            }]
        })
    }

    fn result_json() -> Value {
        json!({
            "mode": "full", "input": "input/building_energy.csv", "measure": "energy_kwh", "unit": "kWh",
            "excess_unit": "kWh", "rows": 1344, "intervals": 1344, "interval": "1 h", "missing": 0,
            "start": "2024-05-06 00:00", "end": "2024-06-30 23:00", "temperature": "outdoor_temp_c",
            "baseline": "expected baseline (hour of week median + temperature model)", "threshold": 3.5,
            "n_events": 2, "ignored": 3, "points_csv": "output/anomalies_points.csv",
            "columns": ["event_id", "start", "end"],
            "events": [
                {"event_id": 1, "start": "2024-05-25 22:00", "end": "2024-05-26 05:00",
                 "when": "Saturday 2024-05-25 22:00 to Sunday 2024-05-26 05:00", "duration_hours": 8.0,
                 "direction": "spike", "peak_value": 73.33, "expected_at_peak": 38.46, "peak_z": 25.0,
                 "excess_energy": 264.2, "excess_pct": 86.0, "mean_temp": 15.2,
                 "cause": "equipment, lighting or HVAC left running"},
                {"event_id": 2, "start": "2024-06-12 10:00", "end": "2024-06-12 14:00",
                 "when": "Wednesday 2024-06-12 10:00 to 14:00", "duration_hours": 5.0,
                 "direction": "drop", "peak_value": 0.24, "expected_at_peak": 108.2, "peak_z": -38.9,
                 "excess_energy": -539.7, "excess_pct": -100.0, "mean_temp": 17.6,
                 "cause": "power outage or meter fault"}
            ]
        })
    }

    /// The JSON configuration embedded in a composed script.
    fn embedded_config(code: &str) -> Value {
        let line = code
            .lines()
            .find(|l| l.starts_with("CONFIG = json.loads("))
            .expect("a CONFIG line");
        let literal = line
            .trim_start_matches("CONFIG = json.loads(")
            .trim_end_matches(')');
        let inner: String = serde_json::from_str(literal).expect("a JSON string literal");
        serde_json::from_str(&inner).expect("JSON inside")
    }

    #[test]
    fn output_names_from_the_reference_prompt() {
        let names = output_names(REFERENCE_TASK);
        assert_eq!(
            names,
            OutputNames {
                csv: "output/anomalies.csv".into(),
                png: "output/energy_anomalies.png".into(),
                md: "output/anomaly_report.md".into(),
            }
        );
    }

    #[test]
    fn output_names_defaults_and_edge_cases() {
        assert_eq!(
            output_names("Find anomalies in input/x.csv."),
            OutputNames::default()
        );
        let n = output_names(
            "Write `output/charts/usage.PNG`, then /workspace/output/summary.md. Table: output/events_2024.csv.",
        );
        assert_eq!(n.png, "output/charts/usage.PNG");
        assert_eq!(n.md, "output/summary.md");
        assert_eq!(n.csv, "output/events_2024.csv");
        // Unsafe or odd paths are ignored; the first good one of each kind wins.
        let n = output_names(
            "output/../etc/x.csv myoutput/y.csv /tmp/output/z.csv output/.csv output/a.csv output/b.csv",
        );
        assert_eq!(n.csv, "output/a.csv");
        assert_eq!(n.png, OutputNames::default().png);
    }

    #[test]
    fn anomalies_are_reported_in_spanish_when_asked_in_spanish() {
        // analyse.py writes its texts (when, direction, cadence, method) in the language.
        let mut r = result_json();
        r["cadence"] = json!("lecturas horarias");
        r["baseline_method"] = json!("la mediana por hora de la semana + modelo de temperatura");
        r["events"][0]["when"] = json!("sábado 2024-05-25 22:00 a domingo 2024-05-26 05:00");
        r["events"][1]["direction_text"] = json!("caída");
        let es = |ascii: bool| {
            let mut items = vec![];
            let task = if ascii {
                "Busca anomalías en el consumo, en ASCII"
            } else {
                "Busca anomalías en el consumo"
            };
            let rec = recognise(task);
            assert_eq!(
                (rec.skill, rec.lang, rec.ascii),
                (Skill::Anomalies, request::Lang::Es, ascii)
            );
            items.push(Item::User { text: task.into() });
            let mut t = anomalies::final_text(
                anomalies::words(rec.lang),
                &r,
                &OutputNames::default(),
                None,
                &Ok(json!({"ok": true})),
            );
            if rec.ascii {
                t = skills::to_ascii(&t);
            }
            t
        };
        let t = es(false);
        for needle in [
            "Analicé input/building_energy.csv (1344 filas): `energy_kwh`, lecturas horarias",
            "salen de la mediana por hora de la semana + modelo de temperatura",
            "Encontré 2 eventos anómalos",
            "sábado 2024-05-25 22:00 a domingo 2024-05-26 05:00",
            "+264.2 kWh",
            "caída",
            "Otras 3 desviaciones",
            "Archivos:",
            "Validación: todos los archivos",
            "no un LLM",
        ] {
            assert!(t.contains(needle), "{needle:?} not in {t}");
        }
        for english in ["Found", "peak", "expected", "Files", "Validation"] {
            assert!(!t.contains(english), "{english:?} in {t}");
        }
        let t = es(true);
        assert!(
            t.is_ascii() && t.contains("Encontre 2 eventos anomalos"),
            "{t}"
        );
    }

    #[test]
    fn app_notes_after_the_request_are_not_the_task() {
        let items = vec![Item::User {
            text: "Describe el archivo\n\n[from the app] The Python state was lost; the files are there."
                .into(),
        }];
        assert_eq!(task_and_outputs(&items).0, "Describe el archivo");
    }

    #[test]
    fn numbers_are_written_plainly() {
        assert_eq!(fmt_num(264.181), "264.2");
        assert_eq!(fmt_num(6.5), "6.5");
        assert_eq!(fmt_num(8.0), "8");
        assert_eq!(fmt_num(0.2412), "0.241");
        assert_eq!(fmt_num(-539.678), "-539.7");
        assert_eq!(fmt_num(11650.4), "11650.4");
        assert_eq!(fmt_num(f64::NAN), "?");
    }

    #[test]
    fn templates_are_ascii_with_one_placeholder_each() {
        for (name, t) in [
            ("common", COMMON_PY),
            ("inspect", INSPECT_PY),
            ("analyse", ANALYSE_PY),
            ("validate", VALIDATE_PY),
        ] {
            assert!(t.is_ascii(), "{name}.py must be ASCII");
            let n = t.matches(CONFIG_PLACEHOLDER).count();
            assert_eq!(
                n,
                if name == "common" { 0 } else { 1 },
                "{name}.py placeholders"
            );
        }
    }

    #[test]
    fn substituted_names_are_safely_quoted() {
        let mut target = choose_target(
            &serde_json::from_value(reference_profile()).unwrap(),
            "task",
        )
        .unwrap();
        let nasty = "energy \"kWh\" \\ 'x' \u{00b0}C \u{1F600}\nline";
        target.measure.name = nasty.into();
        let code = analysis_code(
            &target,
            &OutputNames::default(),
            false,
            &recognise("find anomalies"),
        );
        assert!(code.is_ascii());
        assert_eq!(embedded_config(&code)["measure_col"], nasty);
        assert!(!code.contains(CONFIG_PLACEHOLDER));
        assert!(code.starts_with("# sandalyst-offline-phase: analyse\n# Sandalyst offline analyst"));
    }

    #[tokio::test]
    async fn phases_progress_from_inspect_to_finish() {
        let mut model = OfflineAnalyst::new();
        assert!(model.describe().contains("not an LLM"));
        let tools = tools();
        let mut items = vec![Item::User {
            text: REFERENCE_TASK.into(),
        }];

        // 1. inspect
        let reply = step(&mut model, &items, &tools).await;
        let (id, name, code) = the_call(&reply);
        assert_eq!(name, "python");
        assert_eq!(id, "offline-1-inspect");
        assert_eq!(phase_of(&code), Some(Phase::Inspect));
        assert!(code.contains("SANDALYST_PROFILE"));
        assert!(matches!(&reply.items[0], Item::Assistant { text } if text.contains("not an LLM")));
        let profile_line = format!(
            "== input/building_energy.csv ==\nrows: 1344\n\nSANDALYST_PROFILE {}",
            reference_profile()
        );
        answer(&mut items, &reply, &ok_output(&profile_line), false);

        // 2. analyse, with the detected columns and the requested output names
        let reply = step(&mut model, &items, &tools).await;
        let (id, _, code) = the_call(&reply);
        assert_eq!(id, "offline-2-analyse");
        assert_eq!(phase_of(&code), Some(Phase::Analyse));
        let cfg = embedded_config(&code);
        assert_eq!(cfg["input"], "input/building_energy.csv");
        assert_eq!(cfg["time_col"], "timestamp");
        assert_eq!(cfg["measure_col"], "energy_kwh");
        assert_eq!(cfg["measure_unit"], "kWh");
        assert_eq!(cfg["temp_col"], "outdoor_temp_c");
        assert_eq!(cfg["temp_unit"], "C");
        assert_eq!(cfg["mode"], "full");
        assert_eq!(cfg["outputs"]["csv"], "output/anomalies.csv");
        assert_eq!(cfg["outputs"]["png"], "output/energy_anomalies.png");
        assert_eq!(cfg["outputs"]["md"], "output/anomaly_report.md");
        for needle in [
            "energy_kwh",
            "outdoor_temp_c",
            "energy_anomalies.png",
            "def huber_fit",
        ] {
            assert!(code.contains(needle), "analysis code lacks {needle}");
        }
        let out = format!("Event 1: ...\nSANDALYST_RESULT {}", result_json());
        answer(&mut items, &reply, &ok_output(&out), false);

        // 3. validate the three files, expecting the events found
        let reply = step(&mut model, &items, &tools).await;
        let (_, _, code) = the_call(&reply);
        assert_eq!(phase_of(&code), Some(Phase::Validate));
        let cfg = embedded_config(&code);
        assert_eq!(cfg["outputs"]["md"], "output/anomaly_report.md");
        assert_eq!(
            cfg["event_starts"],
            json!(["2024-05-25 22:00", "2024-06-12 10:00"])
        );
        let verdict =
            json!({"ok": true, "checks": [{"name": "chart (PNG)", "ok": true, "detail": ""}]});
        answer(
            &mut items,
            &reply,
            &ok_output(&format!("PASS ...\nSANDALYST_VALIDATION {verdict}")),
            false,
        );

        // 4. finish: a summary naming the events and the files
        let text = final_answer(&step(&mut model, &items, &tools).await);
        for needle in [
            "Found 2 abnormal events",
            "Saturday 2024-05-25 22:00 to Sunday 2024-05-26 05:00",
            "+264.2 kWh",
            "Wednesday 2024-06-12 10:00",
            "output/anomalies.csv",
            "output/energy_anomalies.png",
            "output/anomaly_report.md",
            "all outputs reopened and checked",
            "3 other short deviations",
            "not an LLM",
        ] {
            assert!(
                text.contains(needle),
                "final text lacks {needle:?}:\n{text}"
            );
        }
    }

    #[tokio::test]
    async fn analysis_error_falls_back_once_then_finishes() {
        let mut model = OfflineAnalyst::new();
        let tools = tools();
        let mut items = vec![Item::User {
            text: "Look for anomalies.".into(),
        }];
        let reply = step(&mut model, &items, &tools).await;
        answer(
            &mut items,
            &reply,
            &ok_output(&format!("SANDALYST_PROFILE {}", reference_profile())),
            false,
        );
        let reply = step(&mut model, &items, &tools).await;
        answer(
            &mut items,
            &reply,
            &error_output("ValueError: could not infer the reading interval"),
            true,
        );

        // the fallback: same columns, simple mode, default output names
        let reply = step(&mut model, &items, &tools).await;
        let (id, _, code) = the_call(&reply);
        assert_eq!(id, "offline-3-analyse-simple");
        assert_eq!(phase_of(&code), Some(Phase::AnalyseSimple));
        let cfg = embedded_config(&code);
        assert_eq!(cfg["mode"], "simple");
        assert_eq!(cfg["measure_col"], "energy_kwh");
        assert_eq!(cfg["outputs"]["md"], "output/report.md");
        assert!(
            matches!(&reply.items[0], Item::Assistant { text } if text.contains("could not infer the reading interval"))
        );
        answer(
            &mut items,
            &reply,
            &error_output("MemoryError: out of memory"),
            true,
        );

        // both failed: a clear final text, no more calls
        let text = final_answer(&step(&mut model, &items, &tools).await);
        assert!(text.contains("could not complete the analysis"), "{text}");
        assert!(
            text.contains("could not infer the reading interval"),
            "{text}"
        );
        assert!(text.contains("MemoryError"), "{text}");
    }

    #[tokio::test]
    async fn fallback_success_is_validated_and_reported_as_fallback() {
        let mut model = OfflineAnalyst::new();
        let tools = tools();
        let mut items = vec![Item::User {
            text: "anomalies please".into(),
        }];
        let r = step(&mut model, &items, &tools).await;
        answer(
            &mut items,
            &r,
            &ok_output(&format!("SANDALYST_PROFILE {}", reference_profile())),
            false,
        );
        let r = step(&mut model, &items, &tools).await;
        answer(&mut items, &r, &error_output("KeyError: 'x'"), true);
        let r = step(&mut model, &items, &tools).await;
        let mut result = result_json();
        result["mode"] = json!("simple");
        answer(
            &mut items,
            &r,
            &ok_output(&format!("SANDALYST_RESULT {result}")),
            false,
        );
        let r = step(&mut model, &items, &tools).await;
        assert_eq!(phase_of(&the_call(&r).2), Some(Phase::Validate));
        let verdict = json!({"ok": false, "checks": [{"name": "chart (PNG)", "ok": false, "detail": "output/anomalies.png is missing"}]});
        answer(
            &mut items,
            &r,
            &ok_output(&format!("SANDALYST_VALIDATION {verdict}")),
            false,
        );
        let text = final_answer(&step(&mut model, &items, &tools).await);
        assert!(text.contains("simplified"), "{text}");
        assert!(text.contains("KeyError"), "{text}");
        assert!(text.contains("output/anomalies.png is missing"), "{text}");
    }

    #[tokio::test]
    async fn no_input_finishes_with_an_explanation() {
        let mut model = OfflineAnalyst::new();
        let tools = tools();
        let cases = [
            (json!({"files": [], "tables": []}), "no files under input/"),
            (
                json!({"files": [{"path": "input/a.pdf", "status": "not_tabular", "reason": "not a tabular file type"}], "tables": []}),
                "input/a.pdf (not a tabular file type)",
            ),
            (
                json!({"files": [{"path": "input/t.csv", "status": "ok"}], "tables": [
                    {"path": "input/t.csv", "rows": 100, "time": [], "measures": [{"name": "x"}]}]}),
                "no column parses as dates/times",
            ),
            (
                json!({"files": [{"path": "input/t.csv", "status": "ok"}], "tables": [
                    {"path": "input/t.csv", "rows": 100, "time": [{"name": "t"}], "measures": []}]}),
                "no usable numeric measure",
            ),
        ];
        for (profile, needle) in cases {
            let mut items = vec![Item::User {
                text: "Find anomalies".into(),
            }];
            let r = step(&mut model, &items, &tools).await;
            answer(
                &mut items,
                &r,
                &ok_output(&format!("SANDALYST_PROFILE {profile}")),
                false,
            );
            let text = final_answer(&step(&mut model, &items, &tools).await);
            assert!(text.contains(needle), "{needle:?} not in {text}");
        }
    }

    #[tokio::test]
    async fn failed_inspection_is_retried_once() {
        let mut model = OfflineAnalyst::new();
        let tools = tools();
        let mut items = vec![Item::User {
            text: "Find anomalies".into(),
        }];
        for attempt in 1..=2 {
            let r = step(&mut model, &items, &tools).await;
            let (id, _, code) = the_call(&r);
            assert_eq!(id, format!("offline-{attempt}-inspect"));
            assert_eq!(phase_of(&code), Some(Phase::Inspect));
            answer(
                &mut items,
                &r,
                "status: kernel_restarted (3.00 s)\n[note] the kernel died\n",
                true,
            );
        }
        let text = final_answer(&step(&mut model, &items, &tools).await);
        assert!(text.contains("failed twice"), "{text}");
        assert!(text.contains("kernel died"), "{text}");
    }

    #[tokio::test]
    async fn shell_only_runs_python_through_a_heredoc() {
        let mut model = OfflineAnalyst::new();
        let shell_only: Vec<ToolSpec> = tools().into_iter().filter(|t| t.name == "shell").collect();
        let items = vec![Item::User {
            text: "Find anomalies".into(),
        }];
        let r = step(&mut model, &items, &shell_only).await;
        let (_, name, command) = the_call(&r);
        assert_eq!(name, "shell");
        assert!(
            command.starts_with("python3 - <<'SANDALYST_PY'\n# sandalyst-offline-phase: inspect\n")
        );
        assert!(command.ends_with("\nSANDALYST_PY\n"));
        assert_eq!(phase_of(&command), Some(Phase::Inspect));
    }

    #[test]
    fn target_prefers_files_and_columns_named_in_the_task() {
        let profile: Profile = serde_json::from_value(json!({
            "files": [{"path": "input/a.csv", "status": "ok"}, {"path": "input/b.csv", "status": "ok"}],
            "tables": [
                {"path": "input/a.csv", "rows": 5000, "time": [{"name": "t"}], "measures": [{"name": "kw", "unit": "kW", "kind": "power"}]},
                {"path": "input/b.csv", "rows": 100, "time": [{"name": "when"}],
                 "measures": [{"name": "load"}, {"name": "gas_m3"}],
                 "categories": [{"name": "site", "distinct": 3}], "time_span": {"duplicates": 60}}
            ]
        }))
        .unwrap();
        let t = choose_target(&profile, "anomalies please").unwrap();
        assert_eq!(t.table.path, "input/a.csv");
        assert_eq!(t.category, None);
        let t = choose_target(&profile, "look at gas_m3 in input/b.csv").unwrap();
        assert_eq!(t.table.path, "input/b.csv");
        assert_eq!(t.measure.name, "gas_m3");
        assert_eq!(t.category.as_deref(), Some("site"));
    }

    #[tokio::test]
    async fn never_more_than_max_calls() {
        let mut model = OfflineAnalyst::new();
        let tools = tools();
        let mut items = vec![Item::User {
            text: "Find anomalies".into(),
        }];
        // Feed garbage validation outputs forever: the planner must stop.
        let code = inspect_code();
        for i in 0..MAX_CALLS {
            let call = Item::ToolCall {
                call_id: format!("x{i}"),
                name: "python".into(),
                arguments: json!({ "code": code }).to_string(),
            };
            items.push(call);
            items.push(Item::ToolOutput {
                call_id: format!("x{i}"),
                output: "status: error (0 s)".into(),
                is_error: true,
                images: Vec::new(),
            });
        }
        let text = final_answer(&step(&mut model, &items, &tools).await);
        assert!(text.contains("stopped"), "{text}");
    }

    #[tokio::test]
    async fn cancelled_requests_return_at_once() {
        let mut model = OfflineAnalyst::new();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let items = vec![Item::User { text: "x".into() }];
        let r = model
            .respond(
                Request {
                    instructions: "",
                    items: &items,
                    tools: &[],
                    on_delta: &crate::model::no_deltas,
                },
                &cancel,
            )
            .await;
        assert!(r.is_err());
    }
}
