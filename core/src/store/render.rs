//! A run's transcript as text a person reads (`sandalyst runs show`), safe to print on
//! a terminal: names are escaped as one line, texts and outputs keep only their lines
//! and tabs (see [`crate::terminal`]).

use super::{Entry, RunMeta};
use crate::model::Item;
use crate::protocol::tool_source;
use crate::terminal::escape as e1;

pub fn render_transcript(meta: &RunMeta, entries: &[Entry]) -> String {
    crate::terminal::escape_lines(&render(meta, entries)).into_owned()
}

fn render(meta: &RunMeta, entries: &[Entry]) -> String {
    let mut s = String::new();
    let status = meta
        .status
        .as_ref()
        .map(|st| st.to_string())
        .unwrap_or_else(|| "in progress".into());
    s.push_str(&format!("session {}  ({})\n", e1(&meta.id), status));
    if !meta.title.is_empty() {
        s.push_str(&format!("title: {}\n", e1(&meta.title)));
    }
    s.push_str(&format!(
        "created {}  model {}  turns {}\n",
        e1(&meta.created),
        e1(&meta.model),
        meta.turns
    ));
    let inputs: Vec<_> = meta.inputs.iter().map(|i| e1(i)).collect();
    s.push_str(&format!("inputs: {}\n", inputs.join(", ")));
    if let Some(source) = &meta.rerun_of {
        s.push_str(&format!("re-run of session {} on new inputs\n", e1(source)));
    }
    if let Some(line) = crate::model::pricing::usage_line(&meta.usage, meta.cost_usd) {
        s.push_str(&line);
        s.push('\n');
    }
    s.push('\n');
    let mut ask = None;
    for e in entries {
        if e.ask.is_some() && e.ask != ask {
            ask = e.ask.clone();
            s.push_str(&format!("=== {}\n\n", e1(ask.as_deref().unwrap_or(""))));
        }
        match &e.item {
            Item::User { text } => s.push_str(&format!("--- user\n{}\n\n", text.trim_end())),
            Item::Assistant { text } => {
                s.push_str(&format!("--- assistant\n{}\n\n", text.trim_end()))
            }
            // Reasoning kept only in encrypted form has nothing to show.
            Item::Reasoning { summary, .. } if summary.trim().is_empty() => {}
            Item::Reasoning { summary, .. } => {
                s.push_str(&format!("--- reasoning\n{}\n\n", summary.trim_end()))
            }
            Item::ToolCall {
                call_id,
                name,
                arguments,
                ..
            } => {
                s.push_str(&format!("--- {} ({})\n", e1(name), e1(call_id)));
                for line in tool_source(arguments).lines() {
                    s.push_str(&format!("    {line}\n"));
                }
                s.push('\n');
            }
            Item::ToolOutput {
                output, is_error, ..
            } => {
                s.push_str(if *is_error {
                    "--- output (error)\n"
                } else {
                    "--- output\n"
                });
                s.push_str(output.trim_end());
                s.push_str("\n\n");
            }
        }
    }
    if !meta.outputs.is_empty() {
        s.push_str("outputs:\n");
        for f in &meta.outputs {
            s.push_str(&format!("  {} ({} bytes)", e1(&f.path), f.bytes));
            if let Some(why) = &f.invalid {
                s.push_str(&format!("  INVALID: {}", e1(why)));
            }
            if let Some(p) = meta.provenance.get(&f.path) {
                s.push_str(&format!(
                    "  made by {} call {} ({}, {:.2} s)",
                    e1(&p.ask),
                    e1(&p.call_id),
                    e1(&p.tool),
                    p.duration_ms as f64 / 1000.0
                ));
            }
            s.push('\n');
        }
    }
    for r in &meta.refused {
        s.push_str(&format!("  refused {}: {}\n", e1(&r.path), e1(&r.reason)));
    }
    s
}
