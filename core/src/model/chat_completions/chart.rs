//! A figure's `write` step as a chart to draw, not code to write: the frame, its x and
//! y columns, the kind, the rows to mark and a title; the app writes the matplotlib
//! cell. A 1.5B model's chart cells were where its runs stopped (BENCHMARKS "Issue 34"
//! r20: a `MultiIndex` plotted five times, "the truth value of a Series is ambiguous"
//! eight times, a blank figure saved twice), while the frame and its columns are what
//! it names right. The cell the app writes is in the transcript like any other, so a
//! notebook or a re-run holds the code that drew the figure.

use serde_json::{json, Map, Value};

/// The step's fields, in the order the model writes them.
const DATA: &str = "data";
const X: &str = "x";
const Y: &str = "y";
const KIND: &str = "kind";
const MARK: &str = "mark";
const TITLE: &str = "title";
/// The kinds drawn, and how many series one chart holds.
const KINDS: [&str; 4] = ["line", "scatter", "bar", "hist"];
const Y_MAX: u64 = 4;
/// An expression or a name: one line, bounded.
const EXPRESSION_MAX: u64 = 300;
const NAME_MAX: u64 = 100;

/// A chart as a step names it.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    data: String,
    x: String,
    y: Vec<String>,
    kind: &'static str,
    mark: Option<String>,
    title: String,
}

/// The step's fields as JSON schema properties, in order; all are required (`mark`
/// may be empty).
pub fn properties() -> Vec<(&'static str, Value)> {
    let name = json!({"type": "string", "minLength": 1, "maxLength": NAME_MAX});
    vec![
        (
            DATA,
            json!({"type": "string", "minLength": 1, "maxLength": EXPRESSION_MAX}),
        ),
        (X, name.clone()),
        (
            Y,
            json!({"type": "array", "items": name, "minItems": 1, "maxItems": Y_MAX}),
        ),
        (KIND, json!({"type": "string", "enum": KINDS})),
        (MARK, json!({"type": "string", "maxLength": EXPRESSION_MAX})),
        (
            TITLE,
            json!({"type": "string", "minLength": 1, "maxLength": NAME_MAX}),
        ),
    ]
}

/// What the fields mean, for the turn's note.
pub fn explained() -> String {
    format!(
        "\"{DATA}\" is the DataFrame or Series to draw (a variable or an expression), \"{X}\" its \
         column (or index) on the x axis, \"{Y}\" the column or columns to draw, \"{KIND}\" one \
         of {}, \"{MARK}\" the rows to mark in red on a line or scatter (a variable or an \
         expression with the same x column; empty for none) and \"{TITLE}\" the figure's title",
        KINDS.join(", ")
    )
}

impl Chart {
    /// The chart a step names; `None` when a field is missing or of the wrong kind.
    pub fn from_step(step: &Map<String, Value>) -> Option<Chart> {
        let text = |k: &str| step.get(k).and_then(Value::as_str).map(one_line);
        let y: Vec<String> = match step.get(Y)? {
            Value::Array(ys) => ys.iter().filter_map(Value::as_str).map(one_line).collect(),
            Value::String(s) => vec![one_line(s)],
            _ => return None,
        };
        let y: Vec<String> = y.into_iter().filter(|c| !c.is_empty()).collect();
        let kind = KINDS
            .into_iter()
            .find(|k| text(KIND).as_deref() == Some(*k))?;
        let chart = Chart {
            data: text(DATA).filter(|d| !d.is_empty())?,
            x: text(X).filter(|x| !x.is_empty())?,
            y,
            kind,
            mark: text(MARK).filter(|m| !m.is_empty() && m != "None"),
            title: text(TITLE).unwrap_or_default(),
        };
        (!chart.y.is_empty()).then_some(chart)
    }

    /// The cell that draws the chart on the current figure (the app's write saves it).
    pub fn code(&self) -> Vec<String> {
        let x = py(&self.x);
        let first = py(&self.y[0]);
        let mut lines = vec![
            format!("# The app drew this chart from the step: {} of {} by {}", self.kind, self.y.join(", "), self.x),
            // Series become frames and an index holding x becomes a column; dates
            // written as text become dates, so the axis reads as time.
            "def _chart_frame(v):".into(),
            format!("    v = v.to_frame(name=v.name if v.name is not None else {first}) if isinstance(v, pd.Series) else pd.DataFrame(v)"),
            format!("    v = v if {x} in v.columns else v.reset_index()"),
            format!("    if v[{x}].dtype == object:"),
            "        try:".into(),
            format!("            v[{x}] = pd.to_datetime(v[{x}])"),
            "        except (ValueError, TypeError):".into(),
            "            pass".into(),
            "    return v".into(),
            format!("_source = {}", frame_of(&self.data)),
            "_data = _chart_frame(_source)".into(),
            "fig, ax = plt.subplots(figsize=(11, 5))".into(),
        ];
        // Each series is labelled with its column's name.
        for y in self.y.iter().map(|y| py(y)) {
            lines.push(match self.kind {
                "scatter" => format!("ax.scatter(_data[{x}], _data[{y}], s=12, label={y})"),
                "hist" => {
                    format!("ax.hist(_data[{y}].dropna(), bins=30, alpha=0.6, label={y})")
                }
                "bar" => {
                    format!("ax.bar(_data[{x}].astype(str), _data[{y}], alpha=0.8, label={y})")
                }
                _ => format!("ax.plot(_data[{x}], _data[{y}], label={y})"),
            });
        }
        if let (Some(mark), "line" | "scatter") = (&self.mark, self.kind) {
            lines.extend([
                // A mask of the data's rows (`scored.anomaly`) marks those rows.
                format!("_mark = {mark}"),
                "if isinstance(_mark, pd.Series) and _mark.dtype == bool:".into(),
                "    _mark = _source[_mark.reindex(_source.index, fill_value=False)]".into(),
                "_marked = _chart_frame(_mark)".into(),
                format!("if {first} in _marked.columns:"),
                format!("    ax.scatter(_marked[{x}], _marked[{first}], color='red', s=30, zorder=3, label='marked')"),
                "else:".into(),
                format!("    for _at in _marked[{x}]:"),
                "        ax.axvline(_at, color='red', alpha=0.3)".into(),
            ]);
        }
        let (xlabel, ylabel) = match self.kind {
            "hist" => (self.y.join(", "), "count".to_string()),
            _ => (self.x.clone(), self.y.join(", ")),
        };
        lines.extend([
            format!("ax.set_title({})", py(&self.title)),
            format!("ax.set_xlabel({})", py(&xlabel)),
            format!("ax.set_ylabel({})", py(&ylabel)),
            "ax.legend()".into(),
            "fig.autofmt_xdate()".into(),
        ]);
        lines
    }
}

/// The Python of a step's `data`: as written, or the read of a table file when it
/// names one (a 1.5B model named the CSV it had just written, `output/x.csv`, and
/// its cell failed on the name `output` four times, r25).
fn frame_of(data: &str) -> String {
    let path = data.trim_matches(|c| c == '\'' || c == '"');
    let is_path = path.contains('.')
        && path
            .chars()
            .all(|c| c.is_alphanumeric() || "._-/".contains(c));
    let lower = path.to_ascii_lowercase();
    match lower.rsplit_once('.').map(|(_, ext)| ext) {
        Some("csv") if is_path => format!("pd.read_csv({})", py(path)),
        Some("tsv") if is_path => format!("pd.read_csv({}, sep='\\t')", py(path)),
        Some("parquet") if is_path => format!("pd.read_parquet({})", py(path)),
        _ => data.to_string(),
    }
}

/// A model's field as one line: a line break would end the statement it sits in.
pub(super) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A Python string literal of `s` (a JSON string is one).
pub(super) fn py(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "''".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(step: Value) -> Option<Chart> {
        Chart::from_step(step.as_object().unwrap())
    }

    #[test]
    fn a_step_names_a_chart_and_the_app_writes_its_cell() {
        let c = chart(
            json!({"data": "df", "x": "timestamp", "y": ["energy_kwh"], "kind": "line",
            "mark": "events", "title": "Energy"}),
        )
        .unwrap();
        let code = c.code().join("\n");
        assert!(
            code.contains("_source = df\n_data = _chart_frame(_source)"),
            "{code}"
        );
        assert!(code
            .contains(r#"ax.plot(_data["timestamp"], _data["energy_kwh"], label="energy_kwh")"#));
        assert!(code.contains("_mark = events\n"));
        assert!(code.contains(r#"ax.set_title("Energy")"#));
        // Every line is Python of one statement or block line: no model line breaks.
        let c = chart(
            json!({"data": "df[df.x >\n 3]", "x": "t", "y": "v", "kind": "bar",
            "mark": "", "title": "a \"quoted\" title"}),
        )
        .unwrap();
        let code = c.code().join("\n");
        assert!(code.contains("_source = df[df.x > 3]"));
        assert!(code.contains(r#"ax.set_title("a \"quoted\" title")"#));
        assert!(!code.contains("_marked"), "no mark on a bar chart");
        // A table file named as the data is read.
        for (data, read) in [
            (
                "output/by_region.csv",
                r#"_source = pd.read_csv("output/by_region.csv")"#,
            ),
            ("'t.parquet'", r#"_source = pd.read_parquet("t.parquet")"#),
            ("df.sort_values('x')", "_source = df.sort_values('x')"),
        ] {
            let c = chart(
                json!({"data": data, "x": "r", "y": ["v"], "kind": "bar", "mark": "",
                "title": "t"}),
            )
            .unwrap();
            assert!(c.code().join("\n").contains(read), "{data}");
        }
    }

    #[test]
    fn a_chart_without_data_a_column_or_a_known_kind_is_not_one() {
        let good =
            json!({"data": "df", "x": "t", "y": ["v"], "kind": "line", "mark": "", "title": "t"});
        assert!(chart(good.clone()).is_some());
        for (k, v) in [
            ("data", json!("")),
            ("x", json!(" ")),
            ("y", json!([])),
            ("y", json!(3)),
            ("kind", json!("pie")),
        ] {
            let mut step = good.clone();
            step[k] = v.clone();
            assert_eq!(chart(step), None, "{k}: {v}");
        }
        let schema: Vec<&str> = properties().iter().map(|(k, _)| *k).collect();
        assert_eq!(schema, ["data", "x", "y", "kind", "mark", "title"]);
    }
}
