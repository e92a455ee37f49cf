//! One task from start to end, as `sandalyst run` calls it: a session with one ask.
//! Check the request, make sure the engine and the image are there, open a session,
//! stage the inputs, let the agent work, bring the outputs back, keep the workspace
//! archive, remove the container.

use std::path::PathBuf;

use anyhow::{bail, Context};
use tokio_util::sync::CancellationToken;

use crate::agent::{Event, RunStatus};
use crate::model::{Model, Usage};
use crate::session::{pump, SessionConfig, Sessions};
use crate::workspace::{CollectedFile, Manifest};

/// Everything a run needs to know besides the model.
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub inputs: Vec<PathBuf>,
    pub prompt: String,
    /// The session's settings (tools, limits, sandbox, collection).
    pub config: SessionConfig,
    /// Also copy the outputs here.
    pub out: Option<PathBuf>,
}

impl RunRequest {
    pub fn new(inputs: Vec<PathBuf>, prompt: String) -> RunRequest {
        RunRequest {
            inputs,
            prompt,
            config: SessionConfig::default(),
            out: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub run_id: String,
    pub run_dir: PathBuf,
    pub status: RunStatus,
    pub outputs_dir: PathBuf,
    pub outputs: Vec<CollectedFile>,
    pub usage: Usage,
    /// Estimated cost in US dollars, when the model's prices are known.
    pub cost_usd: Option<f64>,
    pub turns: u32,
}

/// Run one task. Errors before the session exists (bad input, no engine, no image)
/// are returned as `Err`; once it exists, every ending is an outcome with a status
/// and the folder records it.
pub async fn execute(
    sessions: &Sessions,
    mut req: RunRequest,
    model: &mut dyn Model,
    emit: &(dyn Fn(Event) + Send + Sync),
    cancel: &CancellationToken,
) -> anyhow::Result<RunOutcome> {
    if req.prompt.trim().is_empty() {
        bail!("the prompt is empty; say what you want done with the files");
    }
    // Nobody is there to answer: refused before anything starts.
    if req.config.approval != crate::approval::ApprovalMode::Auto {
        return Err(crate::protocol::SessionError::BadInput {
            message: format!(
                "approvals ({}) need someone to answer them, and `run` asks nobody: use `sandalyst chat` (it asks y/e/n before each call) or --approve auto",
                req.config.approval
            ),
        }
        .into());
    }
    // Classified (special files refused) off the async runtime, before anything else.
    let (inputs, follow) = (req.inputs.clone(), req.config.follow_links);
    tokio::task::spawn_blocking(move || Manifest::from_paths_following(&inputs, follow)).await??;
    if let Some(out) = &req.out {
        check_writable(out)?;
    }
    // Until the session exists nothing is left behind: a cancel simply stops here.
    tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(Cancelled.into()),
        r = prepare(sessions, &mut req, emit) => r?,
    }
    let session = sessions.create(req.config.clone()).await?;
    let setup = session.subscribe();
    session.add_files(req.inputs.clone()).await?;

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let ask = session.ask_with(&req.prompt, model, Some(tx), cancel);
    let outcome = pump(ask, &mut rx, Some(setup), emit).await?;
    // What closing says (a workspace archive not kept) goes out too.
    let mut closing = session.subscribe();
    session.close().await;
    while let Ok(ev) = closing.try_recv() {
        if ev.ask_id.is_none() {
            emit(ev);
        }
    }

    let mut status = outcome.status;
    if let (Some(out), false) = (&req.out, outcome.outputs.is_empty()) {
        if let Err(e) = crate::store::copy_dir(&outcome.outputs_dir, out) {
            if !matches!(status, RunStatus::Failed { .. }) {
                status = RunStatus::Failed {
                    message: format!("copying outputs to {}: {e}", out.display()),
                };
            }
        }
    }
    Ok(RunOutcome {
        run_id: session.id().to_string(),
        run_dir: session.dir().to_path_buf(),
        status,
        outputs_dir: req.out.clone().unwrap_or(outcome.outputs_dir),
        outputs: outcome.outputs,
        usage: outcome.usage,
        cost_usd: outcome.cost_usd,
        turns: outcome.turns,
    })
}

/// A run cancelled (Ctrl-C, SIGTERM) before its session existed.
#[derive(Debug, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;

/// The engine and the image, checked before the session exists, so that their
/// failures are errors of the command, with nothing left behind.
async fn prepare(
    sessions: &Sessions,
    req: &mut RunRequest,
    emit: &(dyn Fn(Event) + Send + Sync),
) -> anyhow::Result<()> {
    // The same set-up stage a session's own start reports for its image.
    let progress = |line: String| {
        let stage = crate::sandbox::SetupStage::ImageBuild {
            line,
            step: None,
            steps: None,
        };
        emit(Event::now("", None, crate::agent::EventKind::Setup(stage)))
    };
    let sandbox = &req.config.sandbox;
    req.config.sandbox.image = sessions.factory().prepare_image(sandbox, &progress).await?;
    Ok(())
}

/// Fail early, before any work, when the output folder cannot be written.
/// The folder `--out` names can be made and written (checked before any work).
pub(crate) fn check_writable(dir: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output folder {}", dir.display()))?;
    let probe = dir.join(format!(".sandalyst-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("the output folder {} is not writable", dir.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}
