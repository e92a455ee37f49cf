//! Reading the conversation: the task (the latest user message, without the app's
//! notes), the planner's own earlier calls and what came back, and the tagged JSON
//! lines its scripts print.

use serde_json::Value;

use super::outputs::{output_names, OutputNames};
use super::phase::{phase_of, Phase};
use crate::conversation::Item;
// Notes the app adds to the conversation (reminders, files added, the kernel being
// new) start with APP_NOTE, as their own message or after the user's words; they are
// not the user's task.
use crate::protocol::APP_NOTE;

/// One of the planner's earlier calls and what came back.
#[derive(Debug, Clone, Copy)]
pub(super) struct Turn<'a> {
    pub phase: Phase,
    pub output: Option<&'a str>,
    pub is_error: bool,
}

impl Turn<'_> {
    /// The JSON a successful run printed after `tag`.
    pub fn printed(&self, tag: &str) -> Option<Value> {
        self.output
            .filter(|_| !self.is_error)
            .and_then(|o| tagged_json(o, tag))
    }

    /// Why a skill's script gave no answer: the reason it printed, else the error.
    pub fn why_not(&self) -> String {
        self.printed("SANDALYST_ANSWER")
            .and_then(|a| a.get("reason")?.as_str().map(str::to_owned))
            .unwrap_or_else(|| error_summary(self.output))
    }
}

/// The code (python) or command (shell) of a call, if its arguments parse.
pub(super) fn call_source(name: &str, arguments: &str) -> Option<String> {
    let v: Value = serde_json::from_str(arguments).ok()?;
    let field = if name == "shell" { "command" } else { "code" };
    v.get(field)?.as_str().map(str::to_owned)
}

/// The planner's earlier calls (found by their marker line), each with its output.
pub(super) fn own_turns(items: &[Item]) -> Vec<Turn<'_>> {
    let mut turns = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Item::ToolCall {
            call_id,
            name,
            arguments,
            ..
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
pub(super) fn tagged_json(output: &str, tag: &str) -> Option<Value> {
    output.lines().rev().find_map(|l| {
        l.trim_start()
            .strip_prefix(tag)
            .and_then(|rest| rest.strip_prefix(' '))
            .and_then(|j| serde_json::from_str(j.trim()).ok())
    })
}

/// A short account of why a step failed: status line plus the last traceback line.
pub(super) fn error_summary(output: Option<&str>) -> String {
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
pub(super) fn task_and_outputs(items: &[Item]) -> (String, OutputNames, usize) {
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

/// The user's own words of a message: what comes before an app note on its own lines.
fn without_app_notes(text: &str) -> &str {
    match text.find(&format!("\n\n{APP_NOTE}")) {
        Some(at) => &text[..at],
        None => text,
    }
}
