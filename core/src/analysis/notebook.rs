//! A session as a Jupyter notebook (nbformat 4.5): each ask a Markdown cell, the
//! assistant's words as Markdown, each Python call a code cell with what it printed,
//! its traceback and the figures it showed; shell calls as `%%bash` cells. A call that
//! failed in the session is kept with its error and tagged `raises-exception`, so
//! "Run all" goes on past it as it did in the session.
//!
//! The Markdown (the requests, the assistant's words, the header) comes from the model
//! and a notebook viewer renders it: it goes through
//! [`inert_markdown`](crate::artifacts::markdown_inert::inert_markdown), so remote
//! images, unsafe links and raw HTML are neutralised as in the app's own renderer, and
//! its control characters are escaped.

use std::path::{Path, PathBuf};

use anyhow::Context;
use base64::Engine as _;
use serde_json::{json, Value};

use super::{cells, header_lines, target, Block, Cell, Tool};
use crate::artifacts::markdown_inert::inert_markdown;
use crate::store::RunDir;
use crate::terminal::{escape, escape_lines};

/// The file name of the exported notebook.
pub const FILE: &str = "analysis.ipynb";

/// Write the session's notebook as `dir/analysis.ipynb` (`dir` is created; an existing
/// notebook is not overwritten). Returns its path.
pub fn write(run: &RunDir, dir: &Path) -> anyhow::Result<PathBuf> {
    let nb = build(run)?;
    let path = target(dir, FILE)?;
    let text = serde_json::to_string_pretty(&nb)? + "\n";
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// The notebook as JSON.
pub fn build(run: &RunDir) -> anyhow::Result<Value> {
    let blocks = cells(run)?;
    let meta = &run.meta;
    let mut out = Vec::new();
    let (inputs, outputs) = header_lines(meta);
    let mut intro = format!(
        "# {}\n\nExported from Sandalyst session `{}` on {}.\n\n",
        escape(if meta.title.is_empty() {
            "Sandalyst analysis"
        } else {
            &meta.title
        }),
        escape(&meta.id),
        chrono::Utc::now().format("%Y-%m-%d %H:%M UTC"),
    );
    intro.push_str(&format!(
        "**The code cells were written by a language model.** They ran in Sandalyst's \
         sandbox (no network, no privileges); `sandalyst rerun {} -i FILE` replays them \
         there on new files. Read them before you run them anywhere else.\n\n",
        escape(&meta.id)
    ));
    intro.push_str(
        "Run it from the folder that holds `input/` (in the sandbox, `/workspace`); the \
         code writes to `output/`.\n\n**Inputs**\n\n",
    );
    for l in &inputs {
        intro.push_str(&format!("- `{l}`\n"));
    }
    if !outputs.is_empty() {
        intro.push_str("\n**Outputs**\n\n");
        for l in &outputs {
            intro.push_str(&format!("- {l}\n"));
        }
    }
    let image = super::image_of(run);
    if !image.is_empty() {
        intro.push_str(&format!("\nSandbox image: `{}`\n", escape(&image)));
    }
    out.push(markdown("intro", &intro));
    let mut count = 0u64;
    for (i, block) in blocks.iter().enumerate() {
        let id = format!("c{i}");
        match block {
            Block::Ask { id: ask, prompt } => {
                let quoted: Vec<String> = prompt.lines().map(|l| format!("> {l}")).collect();
                out.push(markdown(
                    &id,
                    &format!("## {}\n\n{}\n", escape(ask), quoted.join("\n")),
                ));
            }
            Block::Text { text, .. } => out.push(markdown(&id, text)),
            Block::Code(cell) => {
                count += 1;
                out.push(code(&id, cell, count)?);
            }
        }
    }
    Ok(json!({
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python", "file_extension": ".py", "mimetype": "text/x-python"},
            "sandalyst": {
                "session": meta.id,
                "exported": chrono::Utc::now().to_rfc3339(),
                "image": super::image_of(run),
                "inputs": meta.files.iter().map(|f| json!({"name": f.name, "bytes": f.bytes, "sha256": f.sha256})).collect::<Vec<_>>(),
            },
        },
        "cells": out,
    }))
}

/// The source of a code cell as the notebook holds it (shell calls as `%%bash`).
pub fn source_of(cell: &Cell) -> String {
    match cell.tool {
        Tool::Python => cell.code.clone(),
        Tool::Shell => format!("%%bash\n{}", cell.code),
    }
}

/// A Markdown cell of model-made text, made inert (see the module doc).
fn markdown(id: &str, text: &str) -> Value {
    let text = inert_markdown(&escape_lines(text));
    json!({"cell_type": "markdown", "id": id, "metadata": {}, "source": lines(&text)})
}

fn code(id: &str, cell: &Cell, count: u64) -> anyhow::Result<Value> {
    let mut outputs = Vec::new();
    for (name, text) in [("stdout", &cell.stdout), ("stderr", &cell.stderr)] {
        if !text.is_empty() {
            outputs.push(json!({"output_type": "stream", "name": name, "text": lines(text)}));
        }
    }
    for fig in &cell.figures {
        let png = std::fs::read(fig).with_context(|| format!("cannot read {}", fig.display()))?;
        let b64 = base64::engine::general_purpose::STANDARD.encode(png);
        outputs.push(json!({
            "output_type": "display_data",
            "data": {"image/png": b64, "text/plain": ["<Figure>"]},
            "metadata": {},
        }));
    }
    if let Some(tb) = &cell.traceback {
        let last = tb
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let (ename, evalue) = match last.split_once(": ") {
            Some((n, v)) if !n.contains(' ') => (n.to_string(), v.to_string()),
            _ => (last.trim_end_matches(':').to_string(), String::new()),
        };
        outputs.push(json!({
            "output_type": "error",
            "ename": ename,
            "evalue": evalue,
            "traceback": tb.lines().collect::<Vec<_>>(),
        }));
    }
    let mut metadata = json!({
        "sandalyst": {
            "ask": cell.ask,
            "call_id": cell.call_id,
            "tool": cell.tool.name(),
            "status": cell.status,
            "duration_ms": cell.duration_ms,
        }
    });
    if !cell.ok() {
        metadata["tags"] = json!(["raises-exception"]);
    }
    Ok(json!({
        "cell_type": "code",
        "id": id,
        "metadata": metadata,
        "execution_count": count,
        "source": lines(&source_of(cell)),
        "outputs": outputs,
    }))
}

/// Text as nbformat writes it: a list of lines, each but the last ending in `\n`.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}
