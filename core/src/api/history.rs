//! A reopened session's earlier asks, as the events a front end draws them from.
//!
//! The core keeps each ask's conversation items (`transcript.jsonl`) and metadata
//! (`run.json`); live events are not stored. This turns the items of each ask back
//! into the event shapes a live ask sends (`ask_started`, `text`, `tool_call`,
//! `approval_resolved`, `cell_result`, `cell_image`, `artifact`, `usage`,
//! `ask_finished`), with what front ends are not shown left out as live, so a
//! front end has one code path for live and past asks. It adds no information and takes no decision:
//! each output goes with the ask its provenance names.

use serde::Serialize;

use crate::agent::{ArtifactKind, EventKind};
use crate::analysis::{figure_files, figure_prefix};
use crate::approval::Resolution;
use crate::model::chat_completions::text_calls;
use crate::model::Item;
use crate::protocol::machine_lines::strip;
use crate::protocol::{tool_source, AskId, Notice};
use crate::sandbox::ExecStatus;
use crate::session::Session;
use crate::store::{RunDir, FIGURES};

#[derive(Serialize)]
pub struct PastAsk {
    pub ask_id: AskId,
    pub prompt: String,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub events: Vec<EventKind>,
}

pub fn past_asks(s: &Session) -> Vec<PastAsk> {
    let meta = s.meta();
    // A transcript that cannot be read leaves the asks drawn from run.json alone.
    let entries = RunDir::new(s.dir().to_path_buf(), meta.clone())
        .transcript()
        .unwrap_or_default();
    let figures = figure_files(s.dir());
    let last = meta.asks.len().saturating_sub(1);
    meta.asks
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let mut events = vec![EventKind::AskStarted {
                prompt: a.prompt.clone(),
                model: a.model.clone(),
            }];
            let mine: Vec<_> = entries
                .iter()
                .filter(|e| e.ask.as_deref() == Some(a.id.as_str()))
                .collect();
            for (k, e) in mine.iter().enumerate() {
                match &e.item {
                    Item::Assistant { text } => {
                        // Calls written in the text are shown as their cells.
                        let text = text_calls::shown(text, mine[k + 1..].iter().map(|e| &e.item))
                            .unwrap_or_else(|| text.clone());
                        if !text.trim().is_empty() {
                            events.push(EventKind::Text { text });
                        }
                    }
                    Item::ToolCall {
                        call_id,
                        name,
                        arguments,
                        form,
                    } => {
                        events.push(EventKind::ToolCall {
                            call_id: call_id.clone(),
                            name: name.clone(),
                            code: tool_source(arguments),
                            form: *form,
                        });
                        // How the analyst decided it, as run.json keeps it (a call the
                        // mode let through was never asked about).
                        if let Some(r) = a
                            .approvals
                            .iter()
                            .find(|r| r.call_id == *call_id && r.resolution != Resolution::Allowed)
                        {
                            events.push(EventKind::ApprovalResolved {
                                call_id: call_id.clone(),
                                resolution: r.resolution,
                                reason: r.reason.clone(),
                                always: false,
                            });
                        }
                    }
                    Item::ToolOutput {
                        call_id, output, ..
                    } => {
                        events.push(cell_result(call_id, output));
                        // The figures the call showed, after its result as live.
                        let prefix = figure_prefix(&a.id, call_id);
                        for (name, _) in figures.iter().filter(|(n, _)| n.starts_with(&prefix)) {
                            events.push(EventKind::CellImage {
                                call_id: call_id.clone(),
                                path: format!("{FIGURES}/{name}"),
                            });
                        }
                    }
                    _ => {}
                }
            }
            // Each output with the ask whose call last wrote it (its provenance); one
            // with no record (an older session) goes with the last ask.
            for o in &meta.outputs {
                let made = meta.provenance.get(&o.path);
                let here = match made {
                    Some(p) => p.ask == a.id,
                    None => i == last,
                };
                if here {
                    events.push(EventKind::Artifact {
                        call_id: made.map(|p| p.call_id.clone()).unwrap_or_default().into(),
                        path: o.path.clone(),
                        kind: ArtifactKind::of(&o.path),
                        bytes: o.bytes,
                    });
                }
            }
            events.push(EventKind::Usage {
                input_tokens: 0,
                output_tokens: 0,
                cached_tokens: 0,
                total_input_tokens: a.usage.input_tokens,
                total_output_tokens: a.usage.output_tokens,
                cost_usd: a.cost_usd,
            });
            match &a.status {
                Some(status) => events.push(EventKind::AskFinished {
                    status: status.clone(),
                    turns: a.turns,
                    answer: None,
                    outputs_dir: String::new(),
                }),
                // Opening marks the asks of a process that is gone as interrupted, so
                // one without an ending is running now, in another process (a terminal):
                // it is drawn as running, not as ended.
                None => events.push(EventKind::Notice(Notice::RunningElsewhere)),
            }
            PastAsk {
                ask_id: a.id.clone().into(),
                prompt: a.prompt.clone(),
                started_at: a.created.clone(),
                ended_at: a.finished.clone(),
                events,
            }
        })
        .collect()
}

/// A past call's result as the live `cell_result` said it: the observation the model
/// read, split back into status, duration and streams (its notes were for the model);
/// a call that never ran (refused, rejected) keeps its words as the note.
fn cell_result(call_id: &str, output: &str) -> EventKind {
    let seen = crate::analysis::parse_observation(output);
    let status: Option<ExecStatus> =
        serde_json::from_value(serde_json::Value::String(seen.status.clone())).ok();
    match status {
        Some(status) => EventKind::CellResult {
            call_id: call_id.into(),
            status: Some(status),
            duration_ms: seen.duration_ms.unwrap_or(0),
            // What the analyst sees: the offline analyst's machine lines out.
            stdout: strip(&seen.stdout).into_owned(),
            stderr: strip(&seen.stderr).into_owned(),
            traceback: seen.traceback,
            note: None,
        },
        None => EventKind::CellResult {
            call_id: call_id.into(),
            status: None,
            duration_ms: 0,
            stdout: String::new(),
            stderr: String::new(),
            traceback: None,
            note: Some(output.to_string()),
        },
    }
}
