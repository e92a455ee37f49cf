//! Steps the app finishes for a model that is stuck, in schema mode (only a schema
//! can hold a model to them):
//! - **fix**: after a cell fails at a line the traceback names, the failing line
//!   itself (an enum of one, so the model reads it back) and the lines to put in its
//!   place; the app puts them there and runs the whole cell again. A 1.5B model,
//!   shown its failed cell and asked for a new one, sent the same cell again word for
//!   word (5, 8 and 11 times in BENCHMARKS "Issue 34" r8): a whole cell to write is a
//!   cell to copy; one line to replace is a change to make.
//! - **write**: while a named output is missing, the code that builds the next file's
//!   placeholder (`TABLE`, `TEXT`, a figure); the app ends the cell with the file's
//!   write ([`write_line`]). Offered beside the tools on every such turn (a 1.5B model
//!   built a report's `TEXT` eleven times and never wrote it; two of three r12 seeds
//!   ended with the report unwritten), and alone after the same cell came again (it
//!   ran `total = df.groupby(...).sum(); print(total)` four times, its thought naming
//!   the file; a cell that must end in the write is no longer the cell before it).
//!   A text file's write holds the text itself, not code, and is offered alone when
//!   it is the last file left after the model's cells have run.
//!
//! Either way the step becomes a call of the code tool with the whole cell, so the
//! transcript, approvals and notebooks hold the code that ran. A code cell of the
//! model's that sets the next file's placeholder is ended with its write as well
//! ([`Mend::complete`]).

use serde_json::{json, Map, Value};

use crate::conversation::{write_line, Answer, Item, ToolSpec};
use crate::protocol::{tool_source, PRELUDE_CALL_ID};

use super::chart::{self, Chart};
use super::steps::{LINES_ARG, LINES_MAX, LINE_MAX};

/// The actions of the two steps.
pub const FIX: &str = "fix";
pub const WRITE: &str = "write";
/// Their arguments: the failing line, read back, and what goes in its place; the
/// file the written cell ends by writing.
const LINE: &str = "line";
const INSTEAD: &str = "instead";
const PATH: &str = "path";
/// The placeholder of a text file, and how long the text may be.
const TEXT: &str = "TEXT";
const TEXT_MAX: u64 = 8000;

/// A step the app finishes.
#[derive(Debug, Clone, PartialEq)]
pub enum Mend {
    Fix(Fix),
    Write(Write),
}

/// The file a `write` step's cell ends by writing.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    tool: String,
    path: String,
    line: String,
    placeholder: &'static str,
    /// Offered alone (the model is stuck), not beside the tools.
    alone: bool,
}

impl Mend {
    /// The app's step this turn: a failed cell's line to fix (alone), else the next
    /// missing file's write, alone after a repeated call (`repeats`) or for a report
    /// left last, and beside the tools otherwise.
    pub fn of(items: &[Item], tools: &[ToolSpec], answer: &Answer, repeats: u32) -> Option<Mend> {
        if let Some(fix) = fix_target(items, tools) {
            return Some(Mend::Fix(fix));
        }
        let missing = match answer {
            Answer::NotYet { missing } | Answer::OrWhyNot { missing } => missing,
            Answer::Open => return None,
        };
        let path = missing.first()?;
        let (line, placeholder) = write_line(path)?;
        let tool = code_tool(tools)?;
        // A report left last, after the model's cells have run, is written as the
        // report itself, and only that: in code, a 1.5B model's report was a tuple of
        // strings or an f-string that did not compile, turn after turn, with the other
        // files written (r14, r15).
        let last_text = placeholder == TEXT && missing.len() == 1 && cells_ran(items) >= 2;
        Some(Mend::Write(Write {
            tool,
            path: path.clone(),
            line,
            placeholder,
            alone: repeats > 0 || last_text,
        }))
    }

    /// Whether this step is the only one the turn offers (else it comes beside the
    /// session's tools).
    pub fn alone(&self) -> bool {
        match self {
            Mend::Fix(_) => true,
            Mend::Write(w) => w.alone,
        }
    }

    /// Whether this step is a figure's write (a chart the app draws).
    fn is_figure(&self) -> bool {
        matches!(self, Mend::Write(w) if w.placeholder.is_empty())
    }

    /// The field that holds a text file's text, for the write of one.
    pub fn text_key(&self) -> Option<&'static str> {
        matches!(self, Mend::Write(w) if w.placeholder == TEXT).then_some(TEXT)
    }

    /// The step's action.
    pub fn action(&self) -> &'static str {
        match self {
            Mend::Fix(_) => FIX,
            Mend::Write(_) => WRITE,
        }
    }

    /// The schema branch of the step, under `thought`'s schema.
    pub fn branch(&self, thought: Value) -> Value {
        let lines = json!({
            "type": "array",
            "items": {"type": "string", "maxLength": LINE_MAX},
            "minItems": 1,
            "maxItems": LINES_MAX,
        });
        let mut props = Map::new();
        props.insert("thought".into(), thought);
        props.insert(
            "action".into(),
            json!({"type": "string", "enum": [self.action()]}),
        );
        let (key, value) = match self {
            Mend::Fix(f) => (LINE, &f.line),
            Mend::Write(w) => (PATH, &w.path),
        };
        props.insert(key.into(), json!({"type": "string", "enum": [value]}));
        let mut required = vec!["thought", "action", key];
        // A figure's write names the chart the app draws.
        if self.is_figure() {
            for (k, v) in chart::properties() {
                props.insert(k.into(), v);
                required.push(k);
            }
        }
        // A text's write holds the text itself and no code (see `of`).
        else if !matches!(self, Mend::Write(w) if w.placeholder == TEXT) {
            let (lines_key, _, _) = self.fields();
            props.insert(lines_key.into(), lines);
            required.push(lines_key);
        }
        // What the file holds, named after the code: a 1.5B model's write steps printed
        // tables and never assigned `TABLE` (r13); a field it must fill, it fills.
        if let Mend::Write(w) = self {
            if !w.placeholder.is_empty() {
                let most = if w.placeholder == TEXT {
                    TEXT_MAX
                } else {
                    LINE_MAX
                };
                props.insert(
                    w.placeholder.into(),
                    json!({"type": "string", "minLength": 1, "maxLength": most}),
                );
                required.push(w.placeholder);
            }
        }
        json!({
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": false,
        })
    }

    /// The field of this step's lines (`instead` or `code`) and the field before it
    /// that the schema holds to one value, with that value.
    pub fn fields(&self) -> (&'static str, &'static str, &str) {
        match self {
            Mend::Fix(f) => (INSTEAD, LINE, &f.line),
            Mend::Write(w) => (LINES_ARG, PATH, &w.path),
        }
    }

    /// What this turn asks, said after the last message.
    pub fn note(&self) -> String {
        match self {
            Mend::Fix(f) => format!(
                "(This turn: the cell failed at the line `{}`. The action \"{FIX}\" gives, in \
                 \"{INSTEAD}\", the line or lines to put in its place, written another way; the \
                 app runs the whole cell again with them.)",
                f.line
            ),
            Mend::Write(w) => {
                let offer = match w.placeholder {
                    TEXT => format!(
                        "The action \"{WRITE}\" gives, in \"{TEXT}\", the text itself (Markdown, \
                         from what the cells printed); the app saves it with `{}`.",
                        w.line
                    ),
                    "" => format!(
                        "The action \"{WRITE}\" names the chart and the app draws it and saves \
                         it with `{}`: {}.",
                        w.line,
                        chart::explained()
                    ),
                    p => format!(
                        "The action \"{WRITE}\" gives, in \"{LINES_ARG}\", the code that computes \
                         it, and in \"{p}\" the variable or expression that holds it; the app ends \
                         the cell with `{p} = ...` and `{}`.",
                        w.line
                    ),
                };
                match w.alone {
                    true if w.placeholder == TEXT => {
                        format!("(This turn: {} is what is left to write. {offer})", w.path)
                    }
                    true => format!(
                        "(This turn: the last cell came again, and {} is still missing. {offer})",
                        w.path
                    ),
                    false => format!("(This turn may write {}: {offer})", w.path),
                }
            }
        }
    }

    /// The tool and the whole cell of a step that took this one's action; `None`
    /// when `step` is not this step.
    pub fn apply(&self, step: &Map<String, Value>) -> Option<(String, String)> {
        match self {
            Mend::Fix(f) => Some((f.tool.clone(), f.apply(step)?)),
            Mend::Write(w) if w.placeholder.is_empty() => {
                let mut lines = Chart::from_step(step)?.code();
                lines.push(w.line.clone());
                Some((w.tool.clone(), lines.join("\n")))
            }
            Mend::Write(w) => {
                let mut lines = match step.get(LINES_ARG) {
                    Some(code) => once(lines_of(code)?),
                    None if w.placeholder == TEXT => Vec::new(),
                    None => return None,
                };
                // What the file holds, as the model named it (a salvaged step may not
                // have come that far).
                let named = step
                    .get(w.placeholder)
                    .and_then(Value::as_str)
                    .map(str::trim);
                // The file's own path named as what it holds (`TABLE = output/x.csv`, r25)
                // names nothing: the code's own `TABLE` stands.
                let path = |v: &str| v.trim_matches(['\'', '"']) == w.path;
                if let Some(value) =
                    named.filter(|v| !v.is_empty() && *v != w.placeholder && !path(v))
                {
                    lines.push(format!("{} = {}", w.placeholder, w.value(value)));
                }
                // A model that wrote the write itself does not get it twice.
                if lines.last().map(|l| l.trim()) != Some(w.line.as_str()) {
                    lines.push(w.line.clone());
                }
                Some((w.tool.clone(), lines.join("\n")))
            }
        }
    }
}

impl Write {
    /// The Python of what the model named for the placeholder: as written for a
    /// table (a variable or an expression); for a text, a variable or a string
    /// literal as written, anything else the text itself (a model wrote the report).
    fn value(&self, named: &str) -> String {
        let identifier = named.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !named.starts_with(|c: char| c.is_ascii_digit());
        let literal = ["'", "\"", "f'", "f\""]
            .iter()
            .any(|q| named.starts_with(q))
            && named.ends_with(['\'', '"']);
        if self.placeholder == TEXT && !identifier && !literal {
            return serde_json::to_string(named).unwrap_or_default();
        }
        named.to_string()
    }
}

/// A cell's lines with each line that came three times or more kept once, where it
/// first came: a looping 1.5B model wrote `df.groupby(...).describe()` twenty times in
/// one cell, and its next cells copied the loop from the history.
pub fn once(lines: Vec<String>) -> Vec<String> {
    let count = |l: &str| lines.iter().filter(|m| m.trim() == l.trim()).count();
    let mut seen = std::collections::HashSet::new();
    lines
        .iter()
        .filter(|l| l.trim().is_empty() || count(l) < 3 || seen.insert(l.trim().to_string()))
        .cloned()
        .collect()
}

impl Mend {
    /// A cell of the code tool that assigns the next missing file's placeholder at
    /// its top level and does not write that file, ended with the file's write. Told
    /// to end such a cell with `TABLE.to_csv(...)`, a 1.5B model wrote the `TABLE =`
    /// line and not the write, and went on to the next file (r14).
    pub fn complete(&self, tool: &str, code: &str) -> Option<String> {
        let Mend::Write(w) = self else {
            return None;
        };
        let assigns = code.lines().any(|l| {
            l.strip_prefix(w.placeholder)
                .map(str::trim_start)
                .is_some_and(|rest| rest.starts_with('=') && !rest.starts_with("=="))
        });
        (tool == w.tool && !w.placeholder.is_empty() && assigns && !code.contains(&w.path))
            .then(|| format!("{}\n{}", code.trim_end(), w.line))
    }
}

/// A list of lines, or one string of them.
fn lines_of(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::Array(lines) => Some(
            lines
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        ),
        Value::String(s) => Some(s.lines().map(str::to_string).collect()),
        _ => None,
    }
}

/// How many of the model's code cells ran without an error (the app's own first cell
/// left out).
fn cells_ran(items: &[Item]) -> usize {
    items
        .iter()
        .filter(|i| {
            matches!(i, Item::ToolOutput { call_id, is_error: false, .. } if *call_id != PRELUDE_CALL_ID)
        })
        .count()
}

/// The session's tool that runs code written as lines.
pub(super) fn code_tool(tools: &[ToolSpec]) -> Option<String> {
    tools
        .iter()
        .find(|t| t.parameters["properties"][LINES_ARG]["type"] == "string")
        .map(|t| t.name.clone())
}

/// The comment in place of a failing line that a fix kept as it was.
const KEPT_AS_IT_WAS: &str =
    "(the app left this line out: it failed, and the fix kept it as it was)";

/// The failed cell a `fix` step mends.
#[derive(Debug, Clone, PartialEq)]
pub struct Fix {
    /// The tool that ran the cell, and the cell's code.
    tool: String,
    code: String,
    /// Where the failing line is in `code` (0-based), and the line as the traceback
    /// shows it (trimmed).
    at: usize,
    line: String,
    /// The line the kernel's note says would make what the failing line lacks (a
    /// column made from the time column), put before the failing line when the model's
    /// fix keeps it as it was.
    suggested: Option<String>,
}

/// How a kernel note gives a line of code: "… with this line: `df['x'] = …`".
const SUGGESTED: &str = "with this line: `";

/// The line a kernel note in `output` suggests, if one does.
fn suggested_line(output: &str) -> Option<String> {
    let (_, rest) = output.rsplit_once(SUGGESTED)?;
    let (line, _) = rest.split_once('`')?;
    (!line.trim().is_empty() && !line.contains('\n')).then(|| line.trim().to_string())
}

/// The cell to mend, when the last thing in the conversation is the failed result of
/// a code cell whose traceback points at one whole line of that cell (not the first
/// line of a statement that goes on: replacing it alone would cut the statement).
fn fix_target(items: &[Item], tools: &[ToolSpec]) -> Option<Fix> {
    let Some(Item::ToolOutput {
        call_id,
        output,
        is_error: true,
        ..
    }) = items.last()
    else {
        return None;
    };
    let (tool, arguments) = items.iter().rev().find_map(|i| match i {
        Item::ToolCall {
            call_id: c,
            name,
            arguments,
            ..
        } if c == call_id => Some((name, arguments)),
        _ => None,
    })?;
    let takes_lines = tools
        .iter()
        .any(|t| t.name == *tool && t.parameters["properties"][LINES_ARG]["type"] == "string");
    if !takes_lines {
        return None;
    }
    let code = tool_source(arguments);
    let (number, line) = failing_line(output)?;
    let lines: Vec<&str> = code.lines().collect();
    // The line the traceback numbers, if it reads the same; else the only line that does.
    let at = match lines.get(number.checked_sub(1)?) {
        Some(l) if l.trim() == line => number - 1,
        _ => {
            let mut same = lines.iter().enumerate().filter(|(_, l)| l.trim() == line);
            let (at, _) = same.next()?;
            if same.next().is_some() {
                return None;
            }
            at
        }
    };
    if !balanced(&line) {
        return None;
    }
    Some(Fix {
        tool: tool.clone(),
        code,
        at,
        line,
        suggested: suggested_line(output),
    })
}

/// The innermost frame of the cell in a traceback: its line number and its line
/// (`Cell In[7], line 3` and the line under it).
fn failing_line(output: &str) -> Option<(usize, String)> {
    let lines: Vec<&str> = output.lines().map(str::trim).collect();
    let i = lines.iter().rposition(|l| l.starts_with("Cell In["))?;
    let number = lines[i].rsplit_once("line ")?.1.trim().parse().ok()?;
    let line = lines.get(i + 1).filter(|l| !l.is_empty())?;
    Some((number, line.to_string()))
}

/// Whether `line` closes every bracket it opens (strings left out): a line that
/// opens a call continued below is not one to replace alone.
fn balanced(line: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in line.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '#' => break,
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            },
        }
    }
    depth == 0 && quote.is_none() && !line.ends_with('\\') && !line.ends_with(':')
}

impl Fix {
    /// The cell with `instead` in place of the failing line, each new line indented
    /// as the old one was (a model writes them flush left). `None` when `step` is not
    /// a fix of this line.
    fn apply(&self, step: &Map<String, Value>) -> Option<String> {
        let mut instead = once(lines_of(step.get(INSTEAD)?)?);
        let lines: Vec<&str> = self.code.lines().collect();
        // The lines just before the failing one, copied back at the top of `instead`,
        // are already there: a 1.5B model's cell grew by them at each fix (r12).
        let copied = (1..instead.len().min(self.at + 1))
            .rev()
            .find(|&k| {
                instead[..k]
                    .iter()
                    .zip(&lines[self.at - k..self.at])
                    .all(|(a, b)| a.trim() == b.trim())
            })
            .unwrap_or(0);
        instead.drain(..copied);
        // The failing line put back as it was, with nothing new before it, fails the
        // same way (a 1.5B model added `plt.show()` after it eight times in a row,
        // r14): the line the kernel's note gave goes before it (r22: `hour_of_week`
        // kept for 23 turns beside the note that said how to make it); without one,
        // it is left out, as a comment that says so, and the rest runs.
        if let Some(i) = instead.iter().position(|l| l.trim() == self.line) {
            let before = instead[..i].iter().map(|l| l.trim());
            if before.clone().all(|l| l.is_empty() || l.starts_with('#')) {
                match &self.suggested {
                    Some(s) if !self.code.lines().any(|l| l.trim() == s) => {
                        let indent =
                            &instead[i][..instead[i].len() - instead[i].trim_start().len()];
                        instead.insert(i, format!("{indent}{s}"));
                    }
                    _ => instead[i] = format!("# {} {}", KEPT_AS_IT_WAS, self.line),
                }
            }
        }
        let old = lines[self.at];
        let indent = &old[..old.len() - old.trim_start().len()];
        let mut out: Vec<String> = lines[..self.at].iter().map(|l| l.to_string()).collect();
        let first = instead.iter().map(|l| l.len() - l.trim_start().len()).min();
        for l in &instead {
            // The new lines keep their own indentation relative to each other.
            let l = l.get(first.unwrap_or(0)..).unwrap_or(l);
            out.push(format!("{indent}{l}").trim_end().to_string());
        }
        out.extend(lines[self.at + 1..].iter().map(|l| l.to_string()));
        Some(out.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::CallForm;

    fn python() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "python".into(),
            description: "run a cell".into(),
            parameters: json!({"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}),
        }]
    }

    fn failed(code: &str, traceback: &str) -> Vec<Item> {
        vec![
            Item::ToolCall {
                call_id: "c1".into(),
                name: "python".into(),
                arguments: json!({ "code": code }).to_string(),
                form: CallForm::Structured,
            },
            Item::ToolOutput {
                call_id: "c1".into(),
                output: format!("status: error (0.01 s)\n[traceback]\nTraceback (most recent call last):\n{traceback}\n[note] The cell failed"),
                is_error: true,
                images: vec![],
            },
        ]
    }

    const CELL: &str =
        "z = robust(df)\nfor k in z:\n    flags = z.apply(lambda x: x > 3, axis=1)\nprint(flags)";
    const TRACE: &str = "  Cell In[4], line 3\n    flags = z.apply(lambda x: x > 3, axis=1)\n  File /usr/lib/series.py:10 in apply\nTypeError: apply() got an unexpected keyword argument 'axis'";

    fn missing(path: &str) -> Answer {
        Answer::NotYet {
            missing: vec![path.into()],
        }
    }

    fn target(items: &[Item], tools: &[ToolSpec]) -> Option<Fix> {
        match Mend::of(items, tools, &Answer::Open, 0)? {
            Mend::Fix(f) => Some(f),
            Mend::Write(_) => None,
        }
    }

    #[test]
    fn the_failing_line_of_the_last_cell_is_the_one_to_mend() {
        let mend = Mend::of(&failed(CELL, TRACE), &python(), &missing("output/a.csv"), 1).unwrap();
        let Mend::Fix(fix) = &mend else {
            panic!("{mend:?}")
        };
        assert_eq!(fix.tool, "python");
        assert_eq!(fix.line, "flags = z.apply(lambda x: x > 3, axis=1)");
        let schema = mend.branch(json!({"type": "string"}));
        assert_eq!(schema["properties"]["line"]["enum"], json!([fix.line]));
        assert_eq!(schema["properties"]["action"]["enum"], json!(["fix"]));
        assert!(mend.note().contains(&fix.line));
    }

    #[test]
    fn a_repeated_cell_with_a_file_missing_is_offered_the_write_of_that_file() {
        let mut items = failed("total = df.sum()\nprint(total)", TRACE);
        if let Some(Item::ToolOutput {
            is_error, output, ..
        }) = items.last_mut()
        {
            *is_error = false;
            *output = "status: ok\n[stdout]\n42".into();
        }
        // Beside the tools before the call repeats; nothing with nothing missing.
        let beside = Mend::of(&items, &python(), &missing("output/a.csv"), 0).unwrap();
        assert_eq!(beside.action(), "write");
        assert!(!beside.alone());
        assert!(beside
            .note()
            .starts_with("(This turn may write output/a.csv:"));
        assert_eq!(Mend::of(&items, &python(), &Answer::Open, 2), None);
        let mend = Mend::of(&items, &python(), &missing("output/a.csv"), 1).unwrap();
        assert_eq!(mend.action(), "write");
        assert!(mend.alone());
        let schema = mend.branch(json!({"type": "string"}));
        assert_eq!(
            schema["properties"]["path"]["enum"],
            json!(["output/a.csv"])
        );
        assert!(mend
            .note()
            .contains("TABLE.to_csv('output/a.csv', index=False)"));
        let step = json!({"code": ["TABLE = df.describe()"]});
        assert_eq!(
            mend.apply(step.as_object().unwrap()),
            Some((
                "python".to_string(),
                "TABLE = df.describe()\nTABLE.to_csv('output/a.csv', index=False)".to_string()
            ))
        );
        // The table is a field the model must fill: the app assigns it before the write.
        assert_eq!(schema["properties"]["TABLE"]["minLength"], json!(1));
        assert!(schema["required"]
            .as_array()
            .unwrap()
            .contains(&json!("TABLE")));
        let step = json!({"code": ["events = df[df.x > 3]"], "TABLE": "events"});
        let (_, code) = mend.apply(step.as_object().unwrap()).unwrap();
        assert_eq!(
            code,
            "events = df[df.x > 3]\nTABLE = events\nTABLE.to_csv('output/a.csv', index=False)"
        );
        // The file's path named as what it holds names nothing.
        let step = json!({"code": ["TABLE = events"], "TABLE": "output/a.csv"});
        let (_, code) = mend.apply(step.as_object().unwrap()).unwrap();
        assert_eq!(
            code,
            "TABLE = events\nTABLE.to_csv('output/a.csv', index=False)"
        );
        // Written by the model already: not twice.
        let step = json!({"code": ["TABLE = df", "TABLE.to_csv('output/a.csv', index=False)"]});
        let (_, code) = mend.apply(step.as_object().unwrap()).unwrap();
        assert_eq!(code.matches("to_csv").count(), 1);
        // A kind without one way to write it: nothing offered.
        assert_eq!(
            Mend::of(&items, &python(), &missing("output/a.html"), 1),
            None
        );
    }

    #[test]
    fn a_reports_text_is_a_variable_a_literal_or_the_text_itself() {
        let mut items = failed("x = 1", TRACE);
        if let Some(Item::ToolOutput { is_error, .. }) = items.last_mut() {
            *is_error = false;
        }
        let mend = Mend::of(&items, &python(), &missing("output/r.md"), 0).unwrap();
        let text = |t: &str| {
            let step = json!({"code": ["n = 3"], "TEXT": t});
            let (_, code) = mend.apply(step.as_object().unwrap()).unwrap();
            code.lines().nth(1).unwrap().to_string()
        };
        assert_eq!(text("report"), "TEXT = report");
        assert_eq!(text("f'{n} events'"), "TEXT = f'{n} events'");
        assert_eq!(
            text("# Report\n3 events, \"high\""),
            r##"TEXT = "# Report\n3 events, \"high\"""##
        );
    }

    #[test]
    fn a_cell_that_sets_the_next_files_placeholder_is_ended_with_its_write() {
        let mut items = failed("x = 1", TRACE);
        if let Some(Item::ToolOutput { is_error, .. }) = items.last_mut() {
            *is_error = false;
        }
        let mend = Mend::of(&items, &python(), &missing("output/a.csv"), 0).unwrap();
        assert_eq!(
            mend.complete("python", "TABLE = df[df.x > 3]\n"),
            Some("TABLE = df[df.x > 3]\nTABLE.to_csv('output/a.csv', index=False)".into())
        );
        // Not when the cell writes the file itself, compares, or sets it indented.
        for code in [
            "TABLE = df\nTABLE.to_csv('output/a.csv')",
            "print(TABLE == 3)",
            "if x:\n    TABLE = df",
            "TABLES = df",
        ] {
            assert_eq!(mend.complete("python", code), None, "{code}");
        }
        assert_eq!(mend.complete("shell", "TABLE = df"), None);
    }

    #[test]
    fn a_report_left_last_after_cells_ran_is_written_as_the_text_alone() {
        let ok = |id: &str| Item::ToolOutput {
            call_id: id.into(),
            output: "status: ok".into(),
            is_error: false,
            images: vec![],
        };
        let report = missing("output/r.md");
        // One cell of the model's (and the app's load cell): beside the tools.
        let items = vec![ok(PRELUDE_CALL_ID), ok("c1")];
        assert!(!Mend::of(&items, &python(), &report, 0).unwrap().alone());
        // Two cells: the report alone, as text, no code.
        let items = vec![ok(PRELUDE_CALL_ID), ok("c1"), ok("c2")];
        let mend = Mend::of(&items, &python(), &report, 0).unwrap();
        assert!(mend.alone());
        let schema = mend.branch(json!({"type": "string"}));
        assert_eq!(schema["properties"].get("code"), None);
        assert_eq!(schema["properties"]["TEXT"]["maxLength"], json!(TEXT_MAX));
        assert!(mend.note().contains("the text itself"));
        let step = json!({"TEXT": "# Report\n3 events"});
        let (_, code) = mend.apply(step.as_object().unwrap()).unwrap();
        assert!(
            code.starts_with("TEXT = \"# Report\\n3 events\"\n_ = open('output/r.md', 'w')"),
            "{code}"
        );
        // With another file missing too, it comes beside the tools.
        let two = Answer::NotYet {
            missing: vec!["output/r.md".into(), "output/a.csv".into()],
        };
        assert!(!Mend::of(&items, &python(), &two, 0).unwrap().alone());
    }

    #[test]
    fn the_new_lines_take_the_old_ones_place_and_indentation() {
        let fix = target(&failed(CELL, TRACE), &python()).unwrap();
        let step = json!({"instead": ["flags = z > 3", "if True:", "    flags = flags.any()"]});
        let code = fix.apply(step.as_object().unwrap()).unwrap();
        assert_eq!(
            code,
            "z = robust(df)\nfor k in z:\n    flags = z > 3\n    if True:\n        flags = flags.any()\nprint(flags)"
        );
    }

    #[test]
    fn lines_copied_from_above_the_failing_one_are_not_added_again() {
        let fix = target(&failed(CELL, TRACE), &python()).unwrap();
        let step = json!({"instead": ["for k in z:", "    flags = z > 3"]});
        let code = fix.apply(step.as_object().unwrap()).unwrap();
        assert_eq!(
            code,
            "z = robust(df)\nfor k in z:\n    flags = z > 3\nprint(flags)"
        );
        // A new line that only looks like one above it stays (it is not at the top).
        let step = json!({"instead": ["flags = z > 3", "for k in z:"]});
        let code = fix.apply(step.as_object().unwrap()).unwrap();
        assert_eq!(code.matches("for k in z:").count(), 2);
    }

    #[test]
    fn a_figures_write_names_a_chart_and_the_app_draws_and_saves_it() {
        let mut items = failed("x = 1", TRACE);
        if let Some(Item::ToolOutput { is_error, .. }) = items.last_mut() {
            *is_error = false;
        }
        let mend = Mend::of(&items, &python(), &missing("output/c.png"), 0).unwrap();
        let schema = mend.branch(json!({"type": "string"}));
        let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["thought", "action", "path", "data", "x", "y", "kind", "mark", "title"]
        );
        assert_eq!(schema["required"].as_array().unwrap().len(), keys.len());
        assert!(mend
            .note()
            .contains("\"kind\" one of line, scatter, bar, hist"));
        let step =
            json!({"data": "df", "x": "t", "y": ["v"], "kind": "line", "mark": "", "title": "V"});
        let (tool, code) = mend.apply(step.as_object().unwrap()).unwrap();
        assert_eq!(tool, "python");
        assert!(
            code.contains("ax.plot(_data[\"t\"], _data[\"v\"]"),
            "{code}"
        );
        assert!(code.ends_with("\nplt.savefig('output/c.png')"), "{code}");
        // Code in place of a chart is not this step.
        let step = json!({"code": ["df.plot()"]});
        assert_eq!(mend.apply(step.as_object().unwrap()), None);
    }

    #[test]
    fn a_fix_that_keeps_the_failing_line_as_it_was_leaves_it_out() {
        let fix = target(&failed(CELL, TRACE), &python()).unwrap();
        let kept = "flags = z.apply(lambda x: x > 3, axis=1)";
        let step = json!({"instead": [kept, "plt.show()"]});
        let code = fix.apply(step.as_object().unwrap()).unwrap();
        assert_eq!(
            code.lines().nth(2).unwrap(),
            format!("    # {KEPT_AS_IT_WAS} {kept}")
        );
        assert_eq!(code.lines().nth(3), Some("    plt.show()"));
        // With a new line before it (a name defined first), it stays.
        let step = json!({"instead": ["z = z.to_frame()", kept]});
        let code = fix.apply(step.as_object().unwrap()).unwrap();
        assert!(
            code.contains(&format!("    z = z.to_frame()\n    {kept}")),
            "{code}"
        );
    }

    #[test]
    fn a_fix_that_keeps_the_failing_line_gets_the_line_the_kernel_suggested() {
        let cell = "base = df.groupby(['hour_of_week'])['kWh'].mean()\nprint(base)";
        let trace = "  Cell In[3], line 1\n    base = df.groupby(['hour_of_week'])['kWh'].mean()\nKeyError: 'hour_of_week'\n\n'hour_of_week' is not a column of any DataFrame: df has ts, kWh. It can be made from the time column with this line: `df['hour_of_week'] = df['ts'].dt.dayofweek * 24 + df['ts'].dt.hour`.";
        let fix = target(&failed(cell, trace), &python()).unwrap();
        let kept = "base = df.groupby(['hour_of_week'])['kWh'].mean()";
        let code = fix
            .apply(json!({"instead": [kept]}).as_object().unwrap())
            .unwrap();
        assert_eq!(
            code,
            "df['hour_of_week'] = df['ts'].dt.dayofweek * 24 + df['ts'].dt.hour\n\
             base = df.groupby(['hour_of_week'])['kWh'].mean()\nprint(base)"
        );
        // A cell that already ran the suggestion: the line is left out as before.
        let cell =
            format!("df['hour_of_week'] = df['ts'].dt.dayofweek * 24 + df['ts'].dt.hour\n{cell}");
        let trace = trace.replace("line 1", "line 2");
        let fix = target(&failed(&cell, &trace), &python()).unwrap();
        let code = fix
            .apply(json!({"instead": [kept]}).as_object().unwrap())
            .unwrap();
        assert!(code.contains(KEPT_AS_IT_WAS), "{code}");
        assert_eq!(suggested_line("no note here"), None);
    }

    #[test]
    fn no_fix_without_a_whole_line_to_replace() {
        // A line that opens a call continued below.
        let cell = "ax = df.plot(\n    x='a')\nprint(1)";
        let trace = "  Cell In[2], line 1\n    ax = df.plot(\nKeyError: 'a'";
        assert_eq!(target(&failed(cell, trace), &python()), None);
        // A traceback naming no line of the cell (an error inside a library only).
        let trace = "  File /usr/lib/x.py:3 in f\nValueError: bad";
        assert_eq!(target(&failed(CELL, trace), &python()), None);
        // A result that did not fail.
        let mut items = failed(CELL, TRACE);
        if let Some(Item::ToolOutput { is_error, .. }) = items.last_mut() {
            *is_error = false;
        }
        assert_eq!(target(&items, &python()), None);
        // A tool without code lines (the shell).
        let shell = vec![ToolSpec {
            name: "python".into(),
            description: String::new(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        }];
        assert_eq!(target(&failed(CELL, TRACE), &shell), None);
    }

    #[test]
    fn a_line_numbered_wrong_is_found_by_its_text_when_it_is_the_only_one() {
        let trace = TRACE.replace("line 3", "line 9");
        let fix = target(&failed(CELL, &trace), &python()).unwrap();
        assert_eq!(fix.at, 2);
        let twice = format!("{CELL}\n    flags = z.apply(lambda x: x > 3, axis=1)");
        assert_eq!(target(&failed(&twice, &trace), &python()), None);
    }
}
