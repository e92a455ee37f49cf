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
        "\"{ACTION}\" (with \"{DATA}\", \"{TIME}\", \"{VALUE}\", \"{CONTEXT}\"): the app's tested \
         method for abnormal events in a time series: \"{DATA}\" is the DataFrame, \"{TIME}\" its \
         time column, \"{VALUE}\" the column to search, \"{CONTEXT}\" the numeric columns that \
         drive it (an outdoor temperature; may be empty). Expected value by hour of week and \
         context, residuals, robust z-scores, flagged readings grouped into events; it prints the \
         method, its numbers and the events, and defines {DEFINES} (one row per event)"
    )
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
            "# The app wrote this cell from the step: abnormal events in {} over {}\n{}\n{DEFINES} = find_anomalies({}, {}, {}, [{}])",
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

/// A model's field as one line: a line break would end the statement it sits in.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A Python string literal of `s` (a JSON string is one).
fn py(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "''".into())
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
    fn the_function_is_plain_ascii_with_no_tab() {
        // It goes into a cell as it is: no byte a notebook or the kernel would mangle.
        assert!(FUNCTION.is_ascii() && !FUNCTION.contains('\t'));
    }
}
