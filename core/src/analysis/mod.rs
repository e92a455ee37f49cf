//! Reproducible analyses: a session's recorded work as something that runs without
//! Sandalyst. [`cells`] reads the transcript into the steps of the analysis (each ask,
//! the assistant's words, every Python and shell call with what it printed and the
//! figures it showed); [`notebook`] writes them as a Jupyter notebook (nbformat 4.5),
//! [`script`] as one plain Python script; [`provenance`] says which call made each
//! output file. [`report_html`] writes the session as one self-contained HTML page to
//! share (the answers, the report, the charts and tables, the code folded away).
//!
//! ```no_run
//! # fn demo() -> anyhow::Result<()> {
//! use sandalyst::{analysis, store::Store};
//! let store = Store::open(sandalyst::store::default_root()?)?;
//! let run = store.open_run("20261201-013714-55a1")?;
//! let nb = analysis::notebook::write(&run, std::path::Path::new("analysis"))?;
//! let py = analysis::script::write(&run, std::path::Path::new("analysis"))?;
//! println!("{} {}", nb.display(), py.display());
//! # Ok(()) }
//! ```
//!
//! Paths in the exported code are relative (`input/NAME`, `output/NAME`): both run from
//! the folder that holds `input/`, as the sandbox's `/workspace` is.

pub mod notebook;
pub mod report_html;
pub mod script;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::model::chat_completions::text_calls;
use crate::model::Item;
use crate::protocol::machine_lines::strip;
use crate::protocol::tool_arg;
use crate::store::{Provenance, RunDir, RunMeta, FIGURES};

/// Which call made each output file (path under `output/`), with its code, duration
/// and the inputs present then, as recorded in `run.json`.
pub fn provenance(meta: &RunMeta) -> &BTreeMap<String, Provenance> {
    &meta.provenance
}

/// The code cell that made output file `path` (relative to `output/`): its number among
/// the code cells (1-based, as the notebook's execution counts and the script's
/// "cell N" comments count them) and the cell. `None` when no call is recorded for it.
pub fn cell_of(run: &RunDir, path: &str) -> anyhow::Result<Option<(usize, Cell)>> {
    let Some(p) = run.meta.provenance.get(path) else {
        return Ok(None);
    };
    let blocks = cells(run)?;
    Ok(code_cells(&blocks)
        .into_iter()
        .enumerate()
        .find(|(_, c)| c.call_id == p.call_id && c.ask == p.ask)
        .map(|(i, c)| (i + 1, c.clone())))
}

/// What [`to_folder`] writes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Formats {
    pub notebook: bool,
    pub script: bool,
}

/// Write the session as a notebook and/or a script into `dir`, with copies of its
/// input files in `dir/input/` (when the originals are still there), so the folder
/// runs as it is. Returns the files written.
pub fn to_folder(run: &RunDir, dir: &Path, formats: Formats) -> anyhow::Result<Vec<PathBuf>> {
    use anyhow::Context;
    // Names come from run.json: each must stay inside input/ before anything is written.
    for f in &run.meta.files {
        if !plain_relative(&f.name) {
            anyhow::bail!(
                "the session lists an input named {:?}, which is not a plain path inside input/; nothing was exported",
                f.name
            );
        }
    }
    let mut written = Vec::new();
    if formats.notebook {
        written.push(notebook::write(run, dir)?);
    }
    if formats.script {
        written.push(script::write(run, dir)?);
    }
    for f in &run.meta.files {
        let src = Path::new(&f.source);
        let to = dir.join("input").join(&f.name);
        if src.is_file() && !to.exists() {
            std::fs::create_dir_all(to.parent().expect("under input/"))?;
            std::fs::copy(src, &to).with_context(|| format!("cannot write {}", to.display()))?;
            written.push(to);
        }
    }
    Ok(written)
}

/// `name` is a relative path of plain components (no root, `..`, `.` or prefix).
fn plain_relative(name: &str) -> bool {
    use std::path::Component;
    !name.is_empty()
        && Path::new(name)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// One step of a recorded analysis, in the order it happened.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// An ask: the user's request.
    Ask { id: String, prompt: String },
    /// What the assistant said.
    Text { ask: String, text: String },
    /// A python or shell call.
    Code(Cell),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    Python,
    Shell,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::Python => "python",
            Tool::Shell => "shell",
        }
    }
}

/// One executed call and what it gave back.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub ask: String,
    pub call_id: String,
    pub tool: Tool,
    /// The code (python) or command line (shell), paths made relative.
    pub code: String,
    /// `ok`, `error`, `timeout`, `cancelled`, `kernel_restarted`; `unknown` when the
    /// result is missing (the app stopped during the call).
    pub status: String,
    pub duration_ms: Option<u64>,
    pub stdout: String,
    pub stderr: String,
    pub traceback: Option<String>,
    /// Figures the cell displayed, as files of the session folder, in order.
    pub figures: Vec<PathBuf>,
}

impl Cell {
    /// Ran to the end in the session (a failed call is kept in exports, marked).
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }
}

/// The session's analysis as blocks: asks, assistant text and every python or shell
/// call (calls refused before they ran, `view_image` and notes from the app are left
/// out).
pub fn cells(run: &RunDir) -> anyhow::Result<Vec<Block>> {
    let entries = run.transcript()?;
    let prompts: BTreeMap<&str, &str> = run
        .meta
        .asks
        .iter()
        .map(|a| (a.id.as_str(), a.prompt.as_str()))
        .collect();
    // Keyed by ask too: call ids are the provider's, and a scripted model (or another
    // provider) may use the same id again in a later ask.
    let mut outputs: BTreeMap<(Option<&str>, &str), (&str, bool)> = BTreeMap::new();
    for e in &entries {
        if let Item::ToolOutput {
            call_id,
            output,
            is_error,
            ..
        } = &e.item
        {
            let key = (e.ask.as_deref(), call_id.as_str());
            outputs.insert(key, (output.as_str(), *is_error));
        }
    }
    let figures = figure_files(&run.path);
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for (k, e) in entries.iter().enumerate() {
        let ask = e.ask.clone().unwrap_or_else(|| "ask-1".into());
        if current.as_deref() != Some(ask.as_str()) {
            current = Some(ask.clone());
            let prompt = match prompts.get(ask.as_str()) {
                Some(p) => p.to_string(),
                None => match &e.item {
                    Item::User { text } => text.clone(),
                    _ => run.meta.prompt.clone(),
                },
            };
            blocks.push(Block::Ask {
                id: ask.clone(),
                prompt,
            });
        }
        match &e.item {
            Item::Assistant { text } => {
                // Calls written in the text are their own cells.
                let text = text_calls::shown(text, entries[k + 1..].iter().map(|e| &e.item))
                    .unwrap_or_else(|| text.clone());
                if !text.trim().is_empty() {
                    blocks.push(Block::Text {
                        ask: ask.clone(),
                        text,
                    })
                }
            }
            Item::ToolCall {
                call_id,
                name,
                arguments,
                ..
            } => {
                let tool = match name.as_str() {
                    "python" => Tool::Python,
                    "shell" => Tool::Shell,
                    _ => continue,
                };
                let field = if tool == Tool::Python {
                    tool_arg::CODE
                } else {
                    tool_arg::COMMAND
                };
                let Some(code) = serde_json::from_str::<serde_json::Value>(arguments)
                    .ok()
                    .and_then(|v| v.get(field)?.as_str().map(str::to_owned))
                else {
                    continue; // refused: the arguments never made a call
                };
                let key = (e.ask.as_deref(), call_id.as_str());
                let (output, is_error) = outputs.get(&key).copied().unwrap_or((
                    "status: unknown\n[note] the app stopped before this call finished",
                    true,
                ));
                let parsed = parse_observation(output);
                if parsed.status.is_empty() {
                    continue; // refused (unknown tool, switched off): it never ran
                }
                let status = if is_error && parsed.status == "ok" {
                    "error".to_string()
                } else {
                    parsed.status
                };
                let prefix = figure_prefix(&ask, call_id);
                blocks.push(Block::Code(Cell {
                    ask: ask.clone(),
                    call_id: call_id.to_string(),
                    tool,
                    code: relative_paths(&code),
                    status,
                    duration_ms: parsed.duration_ms,
                    // What a reader sees: the offline analyst's machine lines out.
                    stdout: strip(&parsed.stdout).into_owned(),
                    stderr: strip(&parsed.stderr).into_owned(),
                    traceback: parsed.traceback,
                    figures: figures
                        .iter()
                        .filter(|(name, _)| name.starts_with(&prefix))
                        .map(|(_, p)| p.clone())
                        .collect(),
                }));
            }
            _ => {}
        }
    }
    Ok(blocks)
}

/// The code cells only, in order.
pub fn code_cells(blocks: &[Block]) -> Vec<&Cell> {
    blocks
        .iter()
        .filter_map(|b| match b {
            Block::Code(c) => Some(c),
            _ => None,
        })
        .collect()
}

/// `/workspace/input/x` and `/workspace/output/x` as `input/x` and `output/x`, so the
/// code runs from any folder that holds `input/`.
pub fn relative_paths(code: &str) -> String {
    code.replace("/workspace/input/", "input/")
        .replace("/workspace/output/", "output/")
}

/// What the model was shown for a call (see `agent::tools::observation`), split up.
#[derive(Debug, Default, PartialEq)]
pub struct Observation {
    pub status: String,
    pub duration_ms: Option<u64>,
    pub stdout: String,
    pub stderr: String,
    pub traceback: Option<String>,
}

/// Split `status: ok (1.54 s)\n[stdout]\n...\n[stderr]\n...\n[traceback]\n...` back
/// into its parts. Notes (`[note] ...`) are dropped: they were for the model.
pub fn parse_observation(text: &str) -> Observation {
    let mut o = Observation::default();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let Some(rest) = first.strip_prefix("status: ") else {
        return o;
    };
    let (status, after) = rest.split_once(' ').unwrap_or((rest, ""));
    o.status = status.trim_end_matches(',').to_string();
    o.duration_ms = after
        .trim_start_matches('(')
        .split(' ')
        .next()
        .and_then(|s| s.parse::<f64>().ok())
        .map(|s| (s * 1000.0).round() as u64);
    let mut section: Option<&str> = None;
    let mut buf: BTreeMap<&str, String> = BTreeMap::new();
    for line in lines {
        match line {
            "[stdout]" | "[stderr]" | "[traceback]" => section = Some(line),
            l if l.starts_with("[note] ") => section = None,
            l => {
                if let Some(s) = section {
                    let b = buf.entry(s).or_default();
                    b.push_str(l);
                    b.push('\n');
                }
            }
        }
    }
    // The observation writes each part with one final newline, then a blank line
    // before any note: that separator is not the part's.
    let part = |t: String| format!("{}\n", t.trim_end_matches('\n'));
    o.stdout = buf.remove("[stdout]").map(part).unwrap_or_default();
    o.stderr = buf.remove("[stderr]").map(part).unwrap_or_default();
    o.traceback = buf.remove("[traceback]").map(part);
    o
}

/// The session's figure files (`figures/<ask>-<call>-<n>.png`), as (file name, path),
/// in the order they were shown.
pub fn figure_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut files: Vec<(String, u64, PathBuf)> = std::fs::read_dir(dir.join(FIGURES))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name
                .strip_suffix(".png")?
                .rsplit_once('-')?
                .1
                .parse::<u64>()
                .ok()?;
            Some((name, n, e.path()))
        })
        .collect();
    files.sort_by(|a, b| {
        let stem = |s: &str| s.rsplit_once('-').map(|(a, _)| a.to_string());
        (stem(&a.0), a.1).cmp(&(stem(&b.0), b.1))
    });
    files.into_iter().map(|(name, _, p)| (name, p)).collect()
}

/// How the names of the figures call `call_id` of ask `ask` showed begin.
pub fn figure_prefix(ask: &str, call_id: &str) -> String {
    format!("{ask}-{}-", safe(call_id))
}

/// A call id as it appears in figure file names.
fn safe(call_id: &str) -> String {
    call_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Create `dir` and refuse to overwrite `dir/name`.
fn target(dir: &Path, name: &str) -> anyhow::Result<PathBuf> {
    use anyhow::Context;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(name);
    if path.exists() {
        anyhow::bail!("{} already exists; pick another folder", path.display());
    }
    Ok(path)
}

/// The sandbox image the session ran in: from its metadata, else its settings.
pub fn image_of(run: &RunDir) -> String {
    if !run.meta.image.is_empty() {
        return run.meta.image.clone();
    }
    std::fs::read_to_string(run.path.join(crate::store::SETTINGS))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["sandbox"]["image"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The header facts both exports start with: the inputs, the outputs and their makers,
/// each one line with its control characters escaped (names come from model code).
fn header_lines(meta: &RunMeta) -> (Vec<String>, Vec<String>) {
    use crate::terminal::escape;
    let inputs = meta
        .files
        .iter()
        .map(|f| {
            let hash = if f.sha256.is_empty() {
                String::new()
            } else {
                format!(", sha256 {}", f.sha256)
            };
            escape(&format!("input/{} ({} bytes{hash})", f.name, f.bytes)).into_owned()
        })
        .collect();
    let outputs = meta
        .outputs
        .iter()
        .map(|o| {
            let line = match meta.provenance.get(&o.path) {
                Some(p) => format!("output/{} (made by {} call {})", o.path, p.ask, p.call_id),
                None => format!("output/{}", o.path),
            };
            escape(&line).into_owned()
        })
        .collect();
    (inputs, outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_split_into_streams() {
        let o = parse_observation(
            "status: error (0.25 s)\n[stdout]\nrows: 3\n[stderr]\nwarn\n[traceback]\nTraceback (most recent call last):\nKeyError: 'x'\n[note] for the model",
        );
        assert_eq!(o.status, "error");
        assert_eq!(o.duration_ms, Some(250));
        assert_eq!(o.stdout, "rows: 3\n");
        assert_eq!(o.stderr, "warn\n");
        assert_eq!(
            o.traceback.as_deref(),
            Some("Traceback (most recent call last):\nKeyError: 'x'\n")
        );
        let s = parse_observation("status: error (0.01 s), exit code 2\n[stderr]\nno\n");
        assert_eq!((s.status.as_str(), s.duration_ms), ("error", Some(10)));
        assert_eq!(parse_observation("error: unknown tool").status, "");
    }

    #[test]
    fn absolute_workspace_paths_become_relative() {
        assert_eq!(
            relative_paths(
                "pd.read_csv('/workspace/input/a.csv').to_csv('/workspace/output/b.csv')"
            ),
            "pd.read_csv('input/a.csv').to_csv('output/b.csv')"
        );
    }
}
