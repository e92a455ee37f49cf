//! A failed cell mended one line at a time. After a cell fails at a line the
//! traceback names, a schema turn offers `fix`: the failing line itself (an enum of
//! one, so the model reads it back) and the lines to put in its place; the app puts
//! them there and runs the whole cell again, as a call of the tool that failed. A
//! 1.5B model, shown its failed cell and asked for a new one, sent the same cell
//! again word for word (5, 8 and 11 times in BENCHMARKS "Issue 34" r8): a whole cell
//! to write is a cell to copy; one line to replace is a change to make.

use serde_json::{json, Map, Value};

use crate::conversation::{Item, ToolSpec};
use crate::protocol::tool_source;

use super::steps::{LINES_ARG, LINES_MAX, LINE_MAX};

/// The action that mends the failed cell.
pub const FIX: &str = "fix";
/// Its arguments: the failing line, read back, and what goes in its place.
const LINE: &str = "line";
const INSTEAD: &str = "instead";

/// The failed cell a `fix` step mends.
#[derive(Debug, Clone, PartialEq)]
pub struct Fix {
    /// The tool that ran the cell, and the cell's code.
    pub tool: String,
    code: String,
    /// Where the failing line is in `code` (0-based), and the line as the traceback
    /// shows it (trimmed).
    at: usize,
    pub line: String,
}

/// The cell to mend, when the last thing in the conversation is the failed result of
/// a code cell whose traceback points at one whole line of that cell (not the first
/// line of a statement that goes on: replacing it alone would cut the statement).
pub fn target(items: &[Item], tools: &[ToolSpec]) -> Option<Fix> {
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
    /// The schema branch of a `fix` step, under `thought`'s schema.
    pub fn branch(&self, thought: Value) -> Value {
        let mut props = Map::new();
        props.insert("thought".into(), thought);
        props.insert("action".into(), json!({"type": "string", "enum": [FIX]}));
        props.insert(LINE.into(), json!({"type": "string", "enum": [self.line]}));
        props.insert(
            INSTEAD.into(),
            json!({
                "type": "array",
                "items": {"type": "string", "maxLength": LINE_MAX},
                "minItems": 1,
                "maxItems": LINES_MAX,
            }),
        );
        json!({
            "type": "object",
            "properties": props,
            "required": ["thought", "action", LINE, INSTEAD],
            "additionalProperties": false,
        })
    }

    /// What this turn asks, said after the last message.
    pub fn note(&self) -> String {
        format!(
            "(This turn: the cell failed at the line `{}`. The action \"{FIX}\" gives, in \
             \"{INSTEAD}\", the line or lines to put in its place, written another way; the \
             app runs the whole cell again with them.)",
            self.line
        )
    }

    /// The cell with `instead` in place of the failing line, each new line indented
    /// as the old one was (a model writes them flush left). `None` when `step` is not
    /// a fix of this line.
    pub fn apply(&self, step: &Map<String, Value>) -> Option<String> {
        let instead: Vec<&str> = match step.get(INSTEAD)? {
            Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect(),
            Value::String(s) => s.lines().collect(),
            _ => return None,
        };
        let lines: Vec<&str> = self.code.lines().collect();
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

    #[test]
    fn the_failing_line_of_the_last_cell_is_the_one_to_mend() {
        let fix = target(&failed(CELL, TRACE), &python()).unwrap();
        assert_eq!(fix.tool, "python");
        assert_eq!(fix.line, "flags = z.apply(lambda x: x > 3, axis=1)");
        let schema = fix.branch(json!({"type": "string"}));
        assert_eq!(schema["properties"]["line"]["enum"], json!([fix.line]));
        assert_eq!(schema["properties"]["action"]["enum"], json!(["fix"]));
        assert!(fix.note().contains(&fix.line));
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
