//! Re-run a session on new data, without a model: the recorded Python and shell calls
//! of a session are replayed in order, in a fresh sandbox, against new input files,
//! into a new session linked to the first (`rerun_of` in its `run.json`).
//!
//! New files replace the inputs of the same name; when the session had one input and
//! one file is given, the file replaces it whatever its name (it is staged under the
//! old name, so the recorded code finds it). Calls that failed in the original session
//! are not replayed (the model went on from them). When a call fails on the new data
//! the replay stops there, with its traceback, and the new session is an ordinary
//! session: asking it (`sandalyst ask NEWID -p ...`, or the desktop's "continue with
//! the model") hands the model the conversation from that point.
//!
//! No model is involved: the replay is driven by [`Replay`], which only hands back the
//! recorded calls; nothing here reads the model configuration or opens a connection.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use std::sync::Arc;
//! use sandalyst::session::{DockerFactory, Sessions};
//! let sessions = Sessions::new(sandalyst::store::default_root()?, Arc::new(DockerFactory))?;
//! let new = vec!["july_export.csv".into()];
//! let outcome = sandalyst::rerun::execute(&sessions, "20261201-013714-55a1", new, &|ev| println!("{ev:?}"), &Default::default()).await?;
//! match &outcome.failed {
//!     None => println!("outputs in {}", outcome.outputs_dir.display()),
//!     Some(f) => println!("cell {} failed:\n{}\n{}", f.index, f.output, outcome.continue_hint()),
//! }
//! # Ok(()) }
//! ```

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context};
use async_trait::async_trait;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::agent::{Event, RunStatus};
use crate::analysis::{self, Block, Cell, Tool};
use crate::model::{CallForm, Item, Model, Reply, Request};
use crate::session::{pump, Session, SessionError, Sessions};
use crate::store::{RunMeta, StagedFile};
use crate::workspace::CollectedFile;

/// How a re-run ended.
#[derive(Clone, Debug, Serialize)]
pub struct RerunOutcome {
    /// The new session.
    pub session_id: String,
    pub run_dir: PathBuf,
    /// The session that was re-run.
    pub source: String,
    /// The inputs of the new session (name under `input/`, where it came from).
    pub inputs: Vec<StagedFile>,
    /// Calls to replay, calls that ran to the end, calls of the original left out
    /// because they had failed there.
    pub cells: usize,
    pub ran: usize,
    pub skipped: usize,
    /// The call that failed on the new data (the replay stopped there).
    pub failed: Option<FailedCell>,
    pub status: RunStatus,
    pub outputs_dir: PathBuf,
    pub outputs: Vec<CollectedFile>,
}

/// A replayed call that failed on the new data.
#[derive(Clone, Debug, Serialize)]
pub struct FailedCell {
    /// 1-based position among the replayed calls.
    pub index: usize,
    pub call_id: String,
    /// The ask of the original session it came from.
    pub ask: String,
    pub tool: String,
    pub code: String,
    /// What the call gave back (status, output, traceback).
    pub output: String,
}

impl RerunOutcome {
    /// The command that continues the new session with a model.
    pub fn continue_hint(&self) -> String {
        format!(
            "continue with a model: sandalyst ask {} -p \"the replay stopped at a failing cell; fix it for the new data and finish the analysis\"",
            self.session_id
        )
    }
}

/// One call to replay.
#[derive(Clone, Debug)]
pub struct ReplayCell {
    pub call_id: String,
    pub ask: String,
    pub tool: Tool,
    pub code: String,
}

/// The calls of a session to replay: its python and shell calls that ran to the end,
/// in order, and how many failed ones are left out.
pub fn replay_cells(blocks: &[Block]) -> (Vec<ReplayCell>, usize) {
    let mut seen = BTreeSet::new();
    let (mut cells, mut skipped) = (Vec::new(), 0);
    for cell in analysis::code_cells(blocks) {
        if !cell.ok() {
            skipped += 1;
            continue;
        }
        let mut id = cell.call_id.clone();
        let mut n = 1;
        while !seen.insert(id.clone()) {
            n += 1;
            id = format!("{}-{n}", cell.call_id);
        }
        cells.push(replay_cell(cell, id));
    }
    (cells, skipped)
}

fn replay_cell(cell: &Cell, call_id: String) -> ReplayCell {
    ReplayCell {
        call_id,
        ask: cell.ask.clone(),
        tool: cell.tool,
        code: cell.code.clone(),
    }
}

/// Which file becomes which input: `new` files replace the `old` inputs of the same
/// name, or the only input when one file replaces one; inputs not replaced are staged
/// again from where they came.
pub fn match_inputs(old: &[StagedFile], new: &[PathBuf]) -> anyhow::Result<Vec<StagedFile>> {
    if new.is_empty() {
        bail!("give the new input files with -i FILE (one per input to replace)");
    }
    let names: Vec<String> = old.iter().map(|f| format!("input/{}", f.name)).collect();
    let mut replaced: Vec<(String, PathBuf, u64)> = Vec::new();
    for path in new {
        // Classified before it is opened: a FIFO, socket or device is refused.
        let (kind, meta) = crate::workspace::inputs::classify_top(path)?;
        if kind != crate::workspace::Kind::File {
            bail!(
                "{} is not a file; a re-run replaces input files one by one",
                path.display()
            );
        }
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = if old.iter().any(|f| f.name == file_name) {
            file_name
        } else if old.len() == 1 && new.len() == 1 {
            old[0].name.clone()
        } else {
            bail!(
                "{} matches no input of the session by name (its inputs: {}); name each new file like the input it replaces",
                path.display(),
                names.join(", ")
            );
        };
        if replaced.iter().any(|(n, ..)| *n == name) {
            bail!("two new files replace input/{name}; give one");
        }
        let abs = std::fs::canonicalize(path)
            .with_context(|| format!("cannot resolve {}", path.display()))?;
        replaced.push((name, abs, meta.len()));
    }
    let mut files = Vec::new();
    for f in old {
        match replaced.iter().find(|(n, ..)| *n == f.name) {
            Some((name, abs, bytes)) => files.push(StagedFile {
                name: name.clone(),
                bytes: *bytes,
                source: abs.display().to_string(),
                sha256: crate::workspace::inputs::sha256_of(abs, &|| false)?,
                ..Default::default()
            }),
            None => {
                let src = Path::new(&f.source);
                if !src.is_file() {
                    bail!(
                        "input/{} is not replaced and its original {} is gone; give it with -i",
                        f.name,
                        f.source
                    );
                }
                let abs = std::fs::canonicalize(src)?;
                // How the old session staged it says nothing about the new one.
                files.push(StagedFile {
                    name: f.name.clone(),
                    bytes: f.bytes,
                    source: abs.display().to_string(),
                    sha256: crate::workspace::inputs::sha256_of(&abs, &|| false)?,
                    ..Default::default()
                });
            }
        }
    }
    Ok(files)
}

/// Replay session `source` on the `inputs` into a new session of `sessions`; events
/// (set-up, calls, outputs) go to `emit` as they happen. Errors before the new session
/// exists (no such session, nothing to replay, inputs that match nothing) are `Err`.
/// [`prepare`] then [`Rerun::run`], for a caller that wants the new session first.
pub async fn execute(
    sessions: &Sessions,
    source: &str,
    inputs: Vec<PathBuf>,
    emit: &(dyn Fn(Event) + Send + Sync),
    cancel: &CancellationToken,
) -> anyhow::Result<RerunOutcome> {
    prepare(sessions, source, inputs)
        .await?
        .run(emit, cancel)
        .await
}

/// A re-run whose new session exists (its folder, inputs and link to the source are on
/// disk, it is in the history list) and whose replay has not started.
pub struct Rerun {
    session: Session,
    source: String,
    cells: Vec<ReplayCell>,
    skipped: usize,
    files: Vec<StagedFile>,
    prompt: String,
}

/// Check the source and the new inputs and create the new session (no sandbox yet).
pub async fn prepare(
    sessions: &Sessions,
    source: &str,
    inputs: Vec<PathBuf>,
) -> anyhow::Result<Rerun> {
    let (src, mut config) = sessions.read(source).await?;
    if src.meta.status.is_none() && !src.meta.asks.is_empty() {
        bail!("session {source} is still running an ask; re-run it once the ask has ended");
    }
    let blocks = analysis::cells(&src)?;
    let (cells, skipped) = replay_cells(&blocks);
    if cells.is_empty() {
        bail!(
            "session {source} has no python or shell call that ran to the end: nothing to replay"
        );
    }
    let files = {
        let old = src.meta.files.clone();
        tokio::task::spawn_blocking(move || match_inputs(&old, &inputs)).await??
    };
    config.limits.max_turns = config.limits.max_turns.max(cells.len() as u32 + 3);
    if config.limits.max_turns > 1000 {
        bail!(
            "session {source} has {} calls; a re-run replays at most 997",
            cells.len()
        );
    }
    // Replaying does not depend on the model's limits: no wall-time cut below the original.
    config.tools.python |= cells.iter().any(|c| c.tool == Tool::Python);
    config.tools.shell |= cells.iter().any(|c| c.tool == Tool::Shell);
    // The built-in image of this version, or its derived image of the session's
    // packages (an older tag may be gone); an image the user named is kept.
    if crate::sandbox::image::is_ours(&config.sandbox.image) {
        config.sandbox.image.clear();
    }
    // A re-run never asks: it replays only what ran in the source, which under
    // approvals is code the analyst approved (edits as edited, rejected calls never ran).
    config.approval = crate::approval::ApprovalMode::Auto;
    config.validate()?;

    // The new session's folder is written before the session opens it, so the link to
    // the source and the staged inputs are part of its record from the start.
    let title = format!("Re-run: {}", src.meta.display_title());
    let meta = RunMeta {
        created: chrono::Utc::now().to_rfc3339(),
        title: title.chars().take(200).collect(),
        inputs: files.iter().map(|f| f.source.clone()).collect(),
        files: files.clone(),
        rerun_of: Some(source.to_string()),
        ..RunMeta::default()
    };
    let session = sessions.create_from(meta, config).await?;
    let prompt = prompt_for(&src.meta, &files, cells.len(), skipped);
    Ok(Rerun {
        session,
        source: source.to_string(),
        cells,
        skipped,
        files,
        prompt,
    })
}

impl Rerun {
    /// The new session's id.
    pub fn session_id(&self) -> &str {
        self.session.id()
    }

    /// The new session (to subscribe to, or to show in the history).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Replay the calls; the sandbox is released at the end (the workspace is kept, and
    /// the next ask of the session starts a new one with it restored).
    pub async fn run(
        self,
        emit: &(dyn Fn(Event) + Send + Sync),
        cancel: &CancellationToken,
    ) -> anyhow::Result<RerunOutcome> {
        let Rerun {
            session,
            source,
            cells,
            skipped,
            files,
            prompt,
        } = self;
        let id = session.id().to_string();
        let source = source.as_str();
        let state = Arc::new(Mutex::new(ReplayState::default()));
        let mut model = Replay {
            cells: cells.iter().cloned().collect(),
            total: cells.len(),
            source: source.to_string(),
            session_id: id.clone(),
            state: state.clone(),
            issued: Vec::new(),
        };
        let setup = session.subscribe();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let ask = session.ask_with(&prompt, &mut model, Some(tx), cancel);
        let outcome = pump(ask, &mut rx, Some(setup), emit).await?;
        session.release().await;
        let state = state.lock().unwrap().clone();
        let mut status = outcome.status;
        if state.failed.is_some() && status == RunStatus::Finished {
            status = RunStatus::Failed {
                message: "a replayed cell failed on the new data".into(),
            };
        }
        Ok(RerunOutcome {
            session_id: id,
            run_dir: session.dir().to_path_buf(),
            source: source.to_string(),
            inputs: files,
            cells: cells.len(),
            ran: state.ran,
            skipped,
            failed: state.failed,
            status,
            outputs_dir: outcome.outputs_dir,
            outputs: outcome.outputs,
        })
    }
}

/// The first message of the new session: what it is, and what was asked originally
/// (so a model that continues it knows the goal).
fn prompt_for(src: &RunMeta, files: &[StagedFile], cells: usize, skipped: usize) -> String {
    let mut p = format!(
        "[re-run] Re-run of session {} on new input files ({}): its {cells} recorded python/shell calls are replayed in order, without a model",
        src.id,
        files
            .iter()
            .map(|f| format!("input/{} from {}", f.name, f.source))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if skipped > 0 {
        p.push_str(&format!(
            " ({skipped} call(s) that failed in the original are left out)"
        ));
    }
    if src.asks.iter().any(|a| !a.approvals.is_empty()) {
        p.push_str(
            "; the original ran under approvals, so these are the calls the analyst approved, as approved or edited (rejected calls never ran), and the re-run asks no one",
        );
    }
    p.push_str(". The original requests were:");
    for a in &src.asks {
        p.push_str(&format!("\n\n{}:\n", a.id));
        for l in a.prompt.lines() {
            p.push_str(&format!("> {l}\n"));
        }
    }
    p
}

#[derive(Clone, Debug, Default)]
struct ReplayState {
    ran: usize,
    failed: Option<FailedCell>,
}

/// The "model" of a re-run: it hands back the recorded calls one per turn and stops
/// with a message at the first call that failed. It never reaches a provider.
pub struct Replay {
    cells: VecDeque<ReplayCell>,
    total: usize,
    source: String,
    session_id: String,
    state: Arc<Mutex<ReplayState>>,
    issued: Vec<ReplayCell>,
}

impl Replay {
    fn say(text: String) -> Reply {
        Reply {
            items: vec![Item::Assistant { text }],
            ..Reply::default()
        }
    }
}

#[async_trait]
impl Model for Replay {
    fn describe(&self) -> String {
        format!("replay of session {} (no model)", self.source)
    }

    async fn respond(
        &mut self,
        request: Request<'_>,
        _cancel: &CancellationToken,
    ) -> anyhow::Result<Reply> {
        let mut state = self.state.lock().unwrap();
        // The result of the call handed out last.
        if let (Some(last), None) = (self.issued.last(), &state.failed) {
            let result = request.items.iter().rev().find_map(|i| match i {
                Item::ToolOutput {
                    call_id,
                    output,
                    is_error,
                    ..
                } if *call_id == last.call_id => Some((output.clone(), *is_error)),
                _ => None,
            });
            match result {
                Some((output, true)) => {
                    state.failed = Some(FailedCell {
                        index: self.issued.len(),
                        call_id: last.call_id.clone(),
                        ask: last.ask.clone(),
                        tool: last.tool.name().into(),
                        code: last.code.clone(),
                        output,
                    })
                }
                Some((_, false)) => state.ran = self.issued.len(),
                None => {}
            }
        }
        // The ask ends failed (typed, so the app offers to continue with a model).
        if let Some(f) = &state.failed {
            let message = format!(
                "The replay stopped at call {} of {} ({}, from {} of session {}): it failed on the new data. \
                 The calls before it ran; their files are in output/. To continue with a model: \
                 `sandalyst ask {} -p \"...\"` (or \"Continue with the model\" in the app).",
                f.index, self.total, f.call_id, f.ask, self.source, self.session_id
            );
            return Err(SessionError::ReplayFailed { message }.into());
        }
        let next = if request.tools.is_empty() {
            None
        } else {
            self.cells.pop_front()
        };
        let Some(cell) = next else {
            return Ok(Self::say(format!(
                "Replayed {} of {} calls of session {} on the new input files, without a model. \
                 The outputs are in output/.",
                state.ran, self.total, self.source
            )));
        };
        let arguments = match cell.tool {
            Tool::Python => serde_json::json!({ "code": cell.code }),
            Tool::Shell => serde_json::json!({ "command": cell.code }),
        };
        let item = Item::ToolCall {
            call_id: cell.call_id.clone().into(),
            name: cell.tool.name().into(),
            arguments: arguments.to_string(),
            form: CallForm::Structured,
        };
        self.issued.push(cell);
        Ok(Reply {
            items: vec![item],
            ..Reply::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn staged(name: &str) -> StagedFile {
        StagedFile {
            name: name.into(),
            bytes: 1,
            source: format!("/nonexistent/{name}"),
            ..Default::default()
        }
    }

    #[test]
    fn inputs_match_by_name_or_replace_the_only_one() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("july.csv");
        std::fs::write(&a, "x\n1\n").unwrap();
        let one = match_inputs(&[staged("energy.csv")], std::slice::from_ref(&a)).unwrap();
        assert_eq!(one[0].name, "energy.csv");
        assert!(one[0].source.ends_with("july.csv"));
        assert_eq!(one[0].sha256.len(), 64);

        let two = [staged("energy.csv"), staged("july.csv")];
        let m = match_inputs(&two[1..], std::slice::from_ref(&a)).unwrap();
        assert_eq!(m[0].name, "july.csv");
        // energy.csv is not replaced and its original is gone.
        let e = match_inputs(&two, std::slice::from_ref(&a)).unwrap_err();
        assert!(
            format!("{e}").contains("input/energy.csv is not replaced"),
            "{e}"
        );
        let b = dir.path().join("other.csv");
        std::fs::write(&b, "x\n").unwrap();
        let e = match_inputs(&two, &[b]).unwrap_err();
        assert!(format!("{e}").contains("matches no input"), "{e}");
        assert!(match_inputs(&two, &[]).is_err());
    }
}
