//! Abnormal events in a time series as a step that names the series, not code to
//! write: the frame, its time and value columns and the context columns that drive the
//! value (outdoor temperature); the app writes the cell, a tested function
//! (`anomalies.py`: a baseline by hour of week and context, residuals, robust z-scores,
//! flagged readings grouped into events) and its call. A 1.5B model got every call
//! through and still never built a baseline that ran: a `groupby` on the timestamp
//! itself, a `pd.cut` bin list looped to the token cap, a fix that kept the failing
//! line (BENCHMARKS "Issue 34" r22, r23), while the columns are what it names right.
//! The cell holds the whole function, so a notebook or a re-run runs without the app.

use serde_json::{json, Map, Value};

use super::chart::{one_line, py};
use super::{mend, steps};
use crate::conversation::{Answer, Item, ToolSpec};
use crate::protocol::tool_source;

/// The step's action and fields, in the order the model writes them.
pub const ACTION: &str = "find_anomalies";
const DATA: &str = "data";
const TIME: &str = "time";
const VALUE: &str = "value";
const CONTEXT: &str = "context";
/// Context columns at most, and how long a name or an expression may be.
const CONTEXT_MAX: u64 = 4;
const NAME_MAX: u64 = 100;
const EXPRESSION_MAX: u64 = 300;

/// The function the cell defines and calls.
const FUNCTION: &str = include_str!("anomalies.py");
/// The names the cell's call defines, which its output names too.
const DEFINES: &str = "scored, anomalies";

/// The first line of the cells the app writes: from the step, and before a cell of
/// the model's that calls the function.
const HEADER: &str = "# The app wrote this cell from the step: abnormal events";
const CALLED: &str = "# The app put its method's function before this cell, which calls it";

/// A series to search, as a step names it.
#[derive(Debug, Clone, PartialEq)]
pub struct Anomalies {
    data: String,
    time: String,
    value: String,
    context: Vec<String>,
}

/// The step's schema branch under `thought`'s schema; all fields are required
/// (`context` may be empty).
pub fn branch(thought: Value) -> Value {
    let name = json!({"type": "string", "minLength": 1, "maxLength": NAME_MAX});
    json!({
        "type": "object",
        "properties": {
            "thought": thought,
            "action": {"type": "string", "enum": [ACTION]},
            DATA: {"type": "string", "minLength": 1, "maxLength": EXPRESSION_MAX},
            TIME: name,
            VALUE: name,
            CONTEXT: {"type": "array", "items": name, "maxItems": CONTEXT_MAX},
        },
        "required": ["thought", "action", DATA, TIME, VALUE, CONTEXT],
        "additionalProperties": false,
    })
}

/// The action as the system message lists it.
pub fn described() -> String {
    format!(
        "\"{ACTION}\" (with \"{DATA}\", \"{TIME}\", \"{VALUE}\", \"{CONTEXT}\"): for abnormal \
         readings or events in a time series, take this step instead of writing that code: a \
         tested method (an action of its own, not a Python module) builds the expected \
         baseline (by hour of week and the context columns), the residuals and robust z-scores, and groups flagged readings into events; \
         it prints the method, its numbers and the events, and defines `scored` (every reading) \
         and `anomalies` (one row per event). \"{DATA}\" is the DataFrame, \"{TIME}\" its time \
         column, \"{VALUE}\" the column to search, \"{CONTEXT}\" the numeric columns that drive it \
         (an outdoor temperature; may be empty)"
    )
}

/// The thought of an ask's first step when its task asks for abnormal events (the
/// offline analyst's lexicon says so): told of the action in the system message, a
/// 1.5B model followed the instructions' "inspect the inputs first" and wrote its own
/// baseline code in three runs of three; with a thought that named the action among
/// others, it took it in one run of two (r25).
pub const FIRST_THOUGHT: &str = "The task asks for abnormal events over time: first step, \
    the action find_anomalies on the data; then the files from what it defines.";

/// Whether the step is offered this turn: the session has the code tool and this
/// ask's task (its words, not the app's notes after them: an input's profile may name
/// a column `anomaly_flag`) asks for abnormal events, as the offline analyst's lexicon
/// reads them. Another task is not told of it: with the step described in every ask,
/// a 1.5B model's answer to a sales question went wrong in two runs of two, where r22
/// and r23 had it right.
pub fn offered(items: &[Item], tools: &[ToolSpec]) -> bool {
    let task = items.iter().rev().find_map(|i| match i {
        Item::User { text } => Some(text.as_str()),
        _ => None,
    });
    let words = |t: &str| {
        t.split(crate::protocol::APP_NOTE)
            .next()
            .unwrap_or(t)
            .to_string()
    };
    mend::code_tool(tools).is_some()
        && task.is_some_and(|t| crate::analyst::asks_for_anomalies(&words(t)))
}

/// The app's thought for this turn's step (the schema holds the model to it) when the
/// step is `offered`: [`FIRST_THOUGHT`] on the ask's first step; after a cell of the
/// method ran, while a named output is missing, that the next file is written from
/// what it defined (a 1.5B model, its events found, wrote the method's steps again
/// over `scored` from the printed method, r25).
pub fn thought(items: &[Item], offered: bool, answer: &Answer) -> Option<String> {
    if !offered {
        return None;
    }
    if steps::first_step(items) {
        return Some(FIRST_THOUGHT.into());
    }
    let next = match answer {
        Answer::NotYet { missing } | Answer::OrWhyNot { missing } => missing.first()?,
        Answer::Open => return None,
    };
    let Some(Item::ToolOutput {
        call_id,
        is_error: false,
        ..
    }) = items.last()
    else {
        return None;
    };
    let ran = items.iter().rev().any(|i| {
        matches!(i, Item::ToolCall { call_id: c, arguments, .. }
            if c == call_id && [HEADER, CALLED].iter().any(|h| tool_source(arguments).starts_with(h)))
    });
    ran.then(|| {
        format!(
            "find_anomalies found the events (`anomalies`, one row per event; `scored`, every \
             reading): now write {next} from them."
        )
    })
}

impl Anomalies {
    /// The series a step names; `None` when a field is missing or empty.
    pub fn from_step(step: &Map<String, Value>) -> Option<Anomalies> {
        let text = |k: &str| {
            step.get(k)
                .and_then(Value::as_str)
                .map(one_line)
                .filter(|s| !s.is_empty())
        };
        let context = match step.get(CONTEXT) {
            Some(Value::Array(cs)) => cs.iter().filter_map(Value::as_str).map(one_line).collect(),
            Some(Value::String(c)) => vec![one_line(c)],
            _ => Vec::new(),
        };
        Some(Anomalies {
            data: text(DATA)?,
            time: text(TIME)?,
            value: text(VALUE)?,
            context: context.into_iter().filter(|c| !c.is_empty()).collect(),
        })
    }

    /// The cell: the function, then its call on the named series.
    pub fn code(&self) -> String {
        let context: Vec<String> = self.context.iter().map(|c| py(c)).collect();
        format!(
            "{HEADER} in {} over {}\n{}\n{DEFINES} = find_anomalies({}, {}, {}, [{}])",
            self.value,
            self.time,
            FUNCTION.trim_end(),
            self.data,
            py(&self.time),
            py(&self.value),
            context.join(", ")
        )
    }
}

/// A code cell that calls the method as a function it never defined, with the function
/// put before it, and a bare call assigned to the names the step defines: told of the
/// step, a 1.5B model wrote `find_anomalies(df, 'timestamp', 'energy_kwh',
/// 'outdoor_temp_c')` in a `python` cell (r25). `None` when the cell does not call it
/// or defines it itself.
pub fn complete_cell(code: &str) -> Option<String> {
    let call = "find_anomalies(";
    if !code.contains(call) || code.contains("def find_anomalies") {
        return None;
    }
    let lines: Vec<String> = code
        .lines()
        // The app defines it: a model's import of it fails (`from app import
        // find_anomalies`; `import app` and `find_anomalies = app.find_anomalies`, r25).
        .filter(|l| !imports_the_method(l.trim()))
        .map(|l| {
            let body = l.trim_start();
            match body.starts_with(call) {
                true => format!("{}{DEFINES} = {body}", &l[..l.len() - body.len()]),
                false => l.to_string(),
            }
        })
        .collect();
    Some(format!(
        "{CALLED}\n{}\n{}",
        FUNCTION.trim_end(),
        lines.join("\n")
    ))
}

/// A line that imports the method the app defines, or the "app" it took it from.
fn imports_the_method(l: &str) -> bool {
    (l.starts_with("from ") && l.ends_with(" import find_anomalies"))
        || (l.starts_with("find_anomalies = ") && l.ends_with(".find_anomalies"))
        || l == "import app"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(v: Value) -> Option<Anomalies> {
        Anomalies::from_step(v.as_object().unwrap())
    }

    #[test]
    fn a_step_names_a_series_and_the_cell_defines_and_calls_the_function() {
        let a = step(
            json!({"data": "df", "time": "timestamp", "value": "energy_kwh",
            "context": ["outdoor_temp_c"]}),
        )
        .unwrap();
        let code = a.code();
        assert!(code.contains("def find_anomalies(data, time, value, context=(), threshold=3.5):"));
        assert!(code.ends_with(
            r#"scored, anomalies = find_anomalies(df, "timestamp", "energy_kwh", ["outdoor_temp_c"])"#
        ));
        // A name with a quote or a line break stays one Python string on one line.
        let a = step(
            json!({"data": "df[df.x >\n 0]", "time": "t \"1\"", "value": "v",
            "context": []}),
        )
        .unwrap();
        assert!(a
            .code()
            .ends_with(r#"find_anomalies(df[df.x > 0], "t \"1\"", "v", [])"#));
    }

    #[test]
    fn a_step_without_its_frame_or_columns_is_not_one() {
        let good = json!({"data": "df", "time": "t", "value": "v", "context": "temp"});
        assert_eq!(step(good.clone()).unwrap().context, ["temp"]);
        for k in [DATA, TIME, VALUE] {
            let mut s = good.clone();
            s[k] = json!(" ");
            assert_eq!(step(s), None, "{k}");
        }
        let schema = branch(json!({"type": "string"}));
        assert_eq!(
            schema["required"],
            json!(["thought", "action", "data", "time", "value", "context"])
        );
        assert_eq!(schema["properties"]["action"]["enum"], json!([ACTION]));
    }

    #[test]
    fn a_cell_that_calls_the_method_gets_its_function_and_its_names() {
        let cell = complete_cell(
            "from app import find_anomalies\nfind_anomalies(df, 't', 'v', 'temp')\nprint(anomalies)",
        )
        .unwrap();
        assert!(!cell.contains("from app import"));
        assert!(cell.contains("def find_anomalies("));
        assert!(cell.ends_with(
            "scored, anomalies = find_anomalies(df, 't', 'v', 'temp')\nprint(anomalies)"
        ));
        let cell = complete_cell(
            "import app\nfind_anomalies = app.find_anomalies\nx = 1\nfind_anomalies(df, 't', 'v')",
        )
        .unwrap();
        assert!(!cell.contains("import app"));
        assert!(
            cell.ends_with("\nx = 1\nscored, anomalies = find_anomalies(df, 't', 'v')"),
            "{cell}"
        );
        // An assigned or nested call keeps its own form.
        let cell = complete_cell("    ev = find_anomalies(df, 't', 'v')[1]").unwrap();
        assert!(cell.ends_with("\n    ev = find_anomalies(df, 't', 'v')[1]"));
        assert_eq!(complete_cell("print(df.head())"), None);
        assert_eq!(
            complete_cell(
                &Anomalies::from_step(
                    json!({"data": "df", "time": "t",
            "value": "v", "context": []})
                    .as_object()
                    .unwrap()
                )
                .unwrap()
                .code()
            ),
            None
        );
    }

    #[test]
    fn after_the_method_ran_the_thought_turns_to_the_next_file() {
        let tools = vec![ToolSpec {
            name: "python".into(),
            description: "runs code".into(),
            parameters: json!({"type": "object", "properties": {"code": {"type": "string"}}}),
        }];
        let missing = Answer::NotYet {
            missing: vec!["output/events.csv".into()],
        };
        let cell = step(json!({"data": "df", "time": "t", "value": "v", "context": []}))
            .unwrap()
            .code();
        let ran = |code: &str, error: bool| {
            vec![
                Item::User {
                    text: "Find the abnormal events".into(),
                },
                Item::ToolCall {
                    call_id: "c1".into(),
                    name: "python".into(),
                    arguments: json!({ "code": code }).to_string(),
                    form: crate::conversation::CallForm::Structured,
                },
                Item::ToolOutput {
                    call_id: "c1".into(),
                    output: "status: ok".into(),
                    is_error: error,
                    images: vec![],
                },
            ]
        };
        let guide =
            |items: &[Item], answer: &Answer| thought(items, offered(items, &tools), answer);
        let said = guide(&ran(&cell, false), &missing).unwrap();
        assert!(
            said.ends_with("now write output/events.csv from them."),
            "{said}"
        );
        let called = complete_cell("find_anomalies(df, 't', 'v')").unwrap();
        assert!(guide(&ran(&called, false), &missing).is_some());
        // Not after a failed run, another cell, or with nothing left to write.
        assert_eq!(guide(&ran(&cell, true), &missing), None);
        assert_eq!(guide(&ran("print(1)", false), &missing), None);
        assert_eq!(guide(&ran(&cell, false), &Answer::Open), None);
        // Another task is not told of the method.
        assert!(offered(&ran(&cell, false), &tools));
        let sales = [Item::User {
            text: "Which region had the highest total revenue?".into(),
        }];
        assert!(!offered(&sales, &tools));
        // Nor is a task whose inputs' profile, after the app's note, names an anomaly.
        let profiled = [Item::User {
            text: "Which region sold most?\n\n[from the app] The inputs: anomaly_flag (bool)"
                .into(),
        }];
        assert!(!offered(&profiled, &tools));
        assert!(!offered(&ran(&cell, false), &[]));
        assert_eq!(guide(&sales, &missing), None);
    }

    #[test]
    fn the_function_is_plain_ascii_with_no_tab() {
        // It goes into a cell as it is: no byte a notebook or the kernel would mangle.
        assert!(FUNCTION.is_ascii() && !FUNCTION.contains('\t'));
    }
}
