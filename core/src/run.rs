//! One run from start to end, as the command line and the desktop both call it:
//! check the request, make sure the engine and the image are there, open a run
//! folder, start the sandbox with the inputs staged, let the agent work, bring the
//! outputs back, keep the workspace archive, remove the container, save the record.

use std::path::PathBuf;

use anyhow::{bail, Context};
use tokio_util::sync::CancellationToken;

use crate::agent::{instructions, Agent, Limits, RunEvent, RunStatus, ToolSet};
use crate::model::{Model, Usage};
use crate::sandbox::docker::{self, DockerSandbox};
use crate::sandbox::{image, Sandbox, SandboxConfig};
use crate::store::{RunMeta, Store, ARCHIVE};
use crate::workspace::{CollectLimits, CollectedFile, Manifest};

/// Everything a run needs to know besides the model.
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub inputs: Vec<PathBuf>,
    pub prompt: String,
    pub instructions: String,
    pub tools: ToolSet,
    pub limits: Limits,
    pub sandbox: SandboxConfig,
    pub collect: CollectLimits,
    /// Largest workspace archive kept, in bytes.
    pub max_archive_bytes: u64,
    /// Also copy the outputs here.
    pub out: Option<PathBuf>,
}

impl RunRequest {
    pub fn new(inputs: Vec<PathBuf>, prompt: String) -> RunRequest {
        RunRequest {
            inputs,
            prompt,
            instructions: instructions::DEFAULT.to_string(),
            tools: ToolSet::default(),
            limits: Limits::default(),
            sandbox: SandboxConfig::default(),
            collect: CollectLimits::default(),
            max_archive_bytes: 2 << 30,
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

/// Run one task. Errors before the run folder exists (bad input, no engine, no
/// image) are returned as `Err`; once the run exists, every ending is an outcome
/// with a status and the folder records it.
pub async fn execute(
    store: &Store,
    mut req: RunRequest,
    model: &mut dyn Model,
    emit: &(dyn Fn(RunEvent) + Send + Sync),
    cancel: &CancellationToken,
) -> anyhow::Result<RunOutcome> {
    if req.prompt.trim().is_empty() {
        bail!("the prompt is empty; say what you want done with the files");
    }
    let manifest = Manifest::from_paths(&req.inputs)?;
    if let Some(out) = &req.out {
        check_writable(out)?;
    }
    let status = |m: &str| {
        emit(RunEvent::Status {
            message: m.to_string(),
        })
    };
    let engine = docker::connect().await?;
    let removed = docker::remove_leftovers(&engine).await?;
    if removed > 0 {
        status(&format!(
            "removed {removed} container(s) left by an earlier run that did not end cleanly"
        ));
    }
    for id in store.mark_interrupted()? {
        status(&format!("run {id} was interrupted earlier; marked as such"));
    }
    if req.sandbox.image.is_empty() {
        req.sandbox.image = image::ensure(&engine, &|line| status(line)).await?;
    }

    let mut run = store.create_run(RunMeta {
        created: chrono::Utc::now().to_rfc3339(),
        prompt: req.prompt.clone(),
        inputs: req.inputs.iter().map(|p| p.display().to_string()).collect(),
        model: model.describe(),
        image: req.sandbox.image.clone(),
        network: req.sandbox.network,
        max_turns: req.limits.max_turns,
        ..RunMeta::default()
    })?;
    let run_id = run.meta.id.clone();
    emit(RunEvent::RunStarted {
        run_id: run_id.clone(),
        model: model.describe(),
        run_dir: run.path.display().to_string(),
    });
    status(&format!(
        "staging {} input file(s), {} bytes; network {}",
        manifest.inputs.len(),
        manifest.total_bytes(),
        if req.sandbox.network { "ON" } else { "off" }
    ));

    let (mut status_now, mut turns, mut usage) = (RunStatus::Cancelled, 0, Usage::default());
    let sandbox = tokio::select! {
        s = DockerSandbox::start(&engine, &run_id, &req.sandbox, &manifest) => Some(s),
        _ = cancel.cancelled() => None,
    };
    let sandbox = match sandbox {
        Some(Ok(s)) => Some(s),
        Some(Err(e)) => {
            status_now = RunStatus::Failed {
                message: format!("{e:#}"),
            };
            None
        }
        None => None,
    };
    if let Some(sandbox) = &sandbox {
        let mut record = |item: &crate::model::Item, u: Option<&Usage>| run.append(item, u);
        let mut agent = Agent {
            model,
            sandbox,
            instructions: req.instructions.clone(),
            tools: req.tools,
            limits: req.limits.clone(),
            emit,
            record: &mut record,
            items: Vec::new(),
            usage: Usage::default(),
            turns: 0,
        };
        status_now = agent.run(&req.prompt, cancel).await;
        (turns, usage) = (agent.turns, agent.usage);

        // Outputs made so far are kept whatever the status.
        status("collecting outputs");
        match sandbox
            .collect_outputs(&run.outputs_dir(), &req.collect)
            .await
        {
            Ok(collected) => {
                for f in &collected.files {
                    emit(RunEvent::ArtifactWritten {
                        path: f.path.clone(),
                        bytes: f.bytes,
                    });
                }
                for r in &collected.refused {
                    status(&format!("refused output {}: {}", r.path, r.reason));
                }
                run.meta.outputs = collected.files;
                run.meta.refused = collected.refused;
            }
            Err(e) => fail_unless_failed(&mut status_now, format!("collecting outputs: {e:#}")),
        }
        if let Err(e) = sandbox
            .archive_workspace(&run.path.join(ARCHIVE), req.max_archive_bytes)
            .await
        {
            status(&format!("workspace archive not kept: {e:#}"));
        }
        if let Err(e) = sandbox.close().await {
            status(&format!("{e:#}"));
        }
    }
    if let (Some(out), false) = (&req.out, run.meta.outputs.is_empty()) {
        if let Err(e) = crate::store::copy_dir(&run.outputs_dir(), out) {
            fail_unless_failed(
                &mut status_now,
                format!("copying outputs to {}: {e}", out.display()),
            );
        }
    }

    run.meta.status = Some(status_now.clone());
    run.meta.turns = turns;
    run.meta.usage = usage;
    run.meta.cost_usd = model.price().map(|p| p.cost(&usage));
    run.meta.finished = Some(chrono::Utc::now().to_rfc3339());
    run.save()?;
    let outputs_dir = req.out.clone().unwrap_or_else(|| run.outputs_dir());
    emit(RunEvent::RunFinished {
        status: status_now.clone(),
        outputs_dir: Some(outputs_dir.display().to_string()),
    });
    Ok(RunOutcome {
        run_id,
        run_dir: run.path.clone(),
        status: status_now,
        outputs_dir,
        outputs: run.meta.outputs.clone(),
        usage,
        cost_usd: run.meta.cost_usd,
        turns,
    })
}

fn fail_unless_failed(status: &mut RunStatus, message: String) {
    if !matches!(status, RunStatus::Failed { .. }) {
        *status = RunStatus::Failed { message };
    }
}

/// Fail early, before any work, when the output folder cannot be written.
fn check_writable(dir: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output folder {}", dir.display()))?;
    let probe = dir.join(format!(".sandalyst-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("the output folder {} is not writable", dir.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}
