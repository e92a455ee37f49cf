//! The tools offered to the model and how their results are shown back to it.

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::model::{Item, ToolSpec};
use crate::protocol::tool_arg;
use crate::sandbox::{ExecResult, ExecStatus};

/// Which tools a run allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSet {
    pub python: bool,
    pub shell: bool,
}

impl Default for ToolSet {
    fn default() -> Self {
        ToolSet {
            python: true,
            shell: true,
        }
    }
}

impl ToolSet {
    /// The tools offered this turn; `view_image` only to a model that takes images.
    pub fn specs(&self, vision: bool) -> Vec<ToolSpec> {
        let mut specs = Vec::new();
        if self.python {
            specs.push(ToolSpec {
                name: "python".into(),
                description: "Run Python code in a persistent kernel in /workspace. State persists between calls. Returns stdout, stderr and any traceback.".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {(tool_arg::CODE): {"type": "string", "description": "Python source to execute"}},
                    "required": [tool_arg::CODE],
                    "additionalProperties": false
                }),
            });
        }
        if self.shell {
            specs.push(ToolSpec {
                name: "shell".into(),
                description: "Run a shell command (sh -c) in /workspace. Returns stdout, stderr and the exit code.".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {(tool_arg::COMMAND): {"type": "string", "description": "The command line to run"}},
                    "required": [tool_arg::COMMAND],
                    "additionalProperties": false
                }),
            });
        }
        if vision {
            specs.push(ToolSpec {
                name: "view_image".into(),
                description: "Look at an image file in /workspace (PNG or JPEG), e.g. a chart you saved, to check it. Charts written to output/ are shown to you automatically after the call that wrote them.".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {(tool_arg::PATH): {"type": "string", "description": "Path relative to /workspace, e.g. output/chart.png"}},
                    "required": [tool_arg::PATH],
                    "additionalProperties": false
                }),
            });
        }
        specs
    }
}

/// What a parsed tool call does.
pub enum Action {
    Python(String),
    Shell(String),
    ViewImage(String),
}

/// Parse a call's raw JSON arguments into something to execute.
pub fn parse(tools: &ToolSet, name: &str, arguments: &str) -> Result<Action, String> {
    let (field, enabled) = match name {
        "python" => (tool_arg::CODE, tools.python),
        "shell" => (tool_arg::COMMAND, tools.shell),
        "view_image" => (tool_arg::PATH, true),
        _ => {
            let names: Vec<_> = tools.specs(false).into_iter().map(|s| s.name).collect();
            return Err(format!(
                "error: unknown tool `{name}`; available tools: {}",
                names.join(", ")
            ));
        }
    };
    if !enabled {
        return Err(format!(
            "error: the `{name}` tool is switched off for this run"
        ));
    }
    let value: serde_json::Value = serde_json::from_str(arguments).map_err(|e| {
        format!("error: the arguments are not valid JSON ({e}); send an object like {{\"{field}\": \"...\"}}")
    })?;
    let text = value.get(field).and_then(|v| v.as_str()).ok_or_else(|| {
        format!("error: the arguments must be an object with a string field `{field}`")
    })?;
    Ok(match name {
        "python" => Action::Python(text.to_string()),
        "shell" => Action::Shell(text.to_string()),
        _ => Action::ViewImage(text.to_string()),
    })
}

/// A call's arguments as the analyst edited its code (python) or command (shell): that
/// field alone, as the code and command tools take nothing else; what else the model's
/// arguments held described its version (a step as the model wrote it, which the
/// history would otherwise send back in place of the edit).
pub fn with_code(name: &str, code: &str) -> String {
    let field = if name == "shell" {
        tool_arg::COMMAND
    } else {
        tool_arg::CODE
    };
    json!({ field: code }).to_string()
}

/// A call item with the analyst's edit in place of the model's code.
pub fn edited(item: &Item, code: &str) -> Item {
    match item {
        Item::ToolCall {
            call_id,
            name,
            form,
            ..
        } => Item::ToolCall {
            call_id: call_id.clone(),
            name: name.clone(),
            arguments: with_code(name, code),
            form: *form,
        },
        other => other.clone(),
    }
}

/// A line added to a call's result for the model (the checklist of named outputs).
pub fn append_note(item: &mut Item, line: &str) {
    if let Item::ToolOutput { output, .. } = item {
        if !output.ends_with('\n') && !output.is_empty() {
            output.push('\n');
        }
        output.push_str(line);
    }
}

/// The text the model sees for a call's result.
pub fn observation(r: &ExecResult) -> String {
    let status = serde_json::to_value(r.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut s = format!("status: {status} ({:.2} s)", r.duration_ms as f64 / 1000.0);
    if let Some(code) = r.exit_code {
        if r.status != ExecStatus::Ok {
            s.push_str(&format!(", exit code {code}"));
        }
    }
    s.push('\n');
    for (label, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        if !text.is_empty() {
            s.push_str(&format!("[{label}]\n{}\n", text.trim_end_matches('\n')));
        }
    }
    if let Some(tb) = &r.traceback {
        s.push_str(&format!("[traceback]\n{}\n", tb.trim_end_matches('\n')));
    }
    if let Some(note) = &r.note {
        s.push_str(&format!("[note] {note}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_arguments_become_readable_errors() {
        let t = ToolSet::default();
        assert!(parse(&t, "python", "{not json")
            .err()
            .unwrap()
            .contains("not valid JSON"));
        assert!(parse(&t, "python", r#"{"cmd": 1}"#)
            .err()
            .unwrap()
            .contains("`code`"));
        assert!(parse(&t, "rm", "{}")
            .err()
            .unwrap()
            .contains("available tools: python, shell"));
        let off = ToolSet {
            python: true,
            shell: false,
        };
        assert!(parse(&off, "shell", r#"{"command":"ls"}"#)
            .err()
            .unwrap()
            .contains("switched off"));
        assert!(
            matches!(parse(&t, "shell", r#"{"command":"ls"}"#), Ok(Action::Shell(c)) if c == "ls")
        );
    }
}
