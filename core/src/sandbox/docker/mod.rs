//! The Docker backend of [`Sandbox`], through the Engine API (`bollard`).
//!
//! One hardened container per run: no network unless asked, uid 1000, all
//! capabilities dropped, no-new-privileges, read-only root, a size-limited tmpfs
//! volume at `/workspace` and a tmpfs `/tmp`, memory/CPU/process limits; inputs
//! copied in, or on a local engine bind-mounted read-only (see `bind`). Every
//! container and volume carries the run id and its owner process as labels, so
//! leftovers of a process that died are found and removed at the next start. Names
//! are unique to one start of one process (`sandalyst-<run>-<random>`), and a sandbox
//! removes only what it made: its container by the id the engine returned, its volume
//! after checking that the volume's owner label is this process.
//!
//! By job: `spec` (the container asked for, and the check that the engine made it
//! so), `start` (volume, container, lease, kernel, staging), `exec` (python and shell
//! calls), `files` and `tars` (the workspace through the archive API), `inputs`
//! (staged files of a running sandbox), `removal` (close, and leftovers of runs that
//! are over). The engine's side of the sandbox's neutral modules carries their names:
//! `engine` (connecting to the engine and describing it), `image` (the sandbox image
//! built, imported, inspected), `custom` (derived images, the check of a user's
//! image), `packages` (an image's Python packages), `bind` (bind mounts in the
//! engine's terms); `kernel_exec` is the kernel's transport (an exec carrying the
//! protocol of `sandbox::kernel`).

mod bind;
pub mod custom;
mod egress;
pub mod engine;
mod exec;
mod factory;
mod files;
pub mod image;
mod inputs;
mod kernel_exec;
pub mod packages;
mod removal;
mod spec;
mod ssh;
mod start;
mod tars;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context;
use async_trait::async_trait;
use bollard::Docker;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::{Connections, ExecResult, OutputEntry, OutputSink, Sandbox, SandboxConfig};
use crate::sandbox::bind::{Bound, Plan};
use crate::sandbox::kernel::Kernel;
use crate::sandbox::packages::{PackagesError, PythonEnv};
use crate::workspace::{CopyReason, Manifest, StagedInput, StagingMode};

pub(crate) use exec::exec_quiet;
pub use factory::DockerFactory;
use removal::ACTIVE;
pub use removal::{containers_of_run, remove_leftovers};
pub use ssh::SSH_CONFIG_VAR;
use start::{engine_allows_binds, StagingError};

pub const RUN_LABEL: &str = "sandalyst.run";
const OWNER_LABEL: &str = "sandalyst.owner";
/// Which start of which process made a container or volume (its name's suffix).
const START_LABEL: &str = "sandalyst.start";

/// Connect to the engine the docker CLI would use (`DOCKER_HOST`, a context, the
/// default sockets) and check that it answers.
pub async fn connect() -> anyhow::Result<Docker> {
    // The search order lives in `sandbox::engine`.
    Ok(engine::connect().await?.0)
}

/// An engine error as a user reads it: what was being done and what went wrong,
/// naming the two faults that matter (the engine gone, the container gone).
pub(crate) fn engine_error(doing: &str, e: bollard::errors::Error) -> anyhow::Error {
    use bollard::errors::Error as E;
    match &e {
        E::DockerResponseServerError {
            status_code: 409,
            message,
        } if message.contains("not running") => {
            anyhow::anyhow!("{doing}: the sandbox container is no longer running (it was stopped or killed from outside)")
        }
        E::DockerResponseServerError {
            status_code: 404, ..
        } => {
            anyhow::anyhow!(
                "{doing}: the sandbox container no longer exists (it was removed from outside)"
            )
        }
        E::DockerResponseServerError { message, .. } => anyhow::anyhow!("{doing}: {message}"),
        E::HyperLegacyError { .. }
        | E::IOError { .. }
        | E::RequestTimeoutError
        | E::SocketNotFoundError(_) => {
            anyhow::anyhow!("{doing}: the Docker engine stopped answering ({e})")
        }
        _ => anyhow::anyhow!("{doing}: {e}"),
    }
}

pub struct DockerSandbox {
    docker: Docker,
    run_id: String,
    /// The container's name, unique to this start (see the module notes).
    container: String,
    /// The id the engine gave the container, once it was created: what `close` removes.
    container_id: std::sync::OnceLock<String>,
    volume: String,
    config: SandboxConfig,
    kernel: Mutex<Option<Kernel>>,
    closed: AtomicBool,
    /// The engine is Podman (volume options and rlimits differ).
    podman: bool,
    /// PID 1's stdin: the container stops by itself once this closes (see `take_lease`).
    lease: Mutex<Option<std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>>>,
    /// What `python_env` found (or why it failed), asked once per sandbox.
    python_env: tokio::sync::OnceCell<Result<PythonEnv, PackagesError>>,
    /// The inputs bind-mounted at creation (see `bind`).
    bound: std::sync::Mutex<Vec<Bound>>,
    /// How each input now in `input/` was staged.
    staged: std::sync::Mutex<Vec<StagedInput>>,
    /// The egress proxy of `allow:` mode.
    egress: Option<egress::Egress>,
}

impl DockerSandbox {
    /// Create the container for `run_id`, stage the manifest's files into
    /// `/workspace/input`, and start the Python kernel. On any failure, whatever was
    /// created is removed again. Inputs are bind-mounted read-only where the engine
    /// and the file allow it and copied otherwise ([`Sandbox::staging`] says which);
    /// an engine whose mounts show other files is retried with copies.
    pub async fn start(
        docker: &Docker,
        run_id: &str,
        config: &SandboxConfig,
        manifest: &Manifest,
    ) -> anyhow::Result<DockerSandbox> {
        Self::start_or_cancel(docker, run_id, config, manifest, &CancellationToken::new()).await
    }

    /// [`DockerSandbox::start`] that stops when `cancel` fires: at the next step (a
    /// staging upload at once), with the container and volume it made removed.
    pub async fn start_or_cancel(
        docker: &Docker,
        run_id: &str,
        config: &SandboxConfig,
        manifest: &Manifest,
        cancel: &CancellationToken,
    ) -> anyhow::Result<DockerSandbox> {
        let podman = engine::is_podman(docker).await;
        let plan = if manifest.inputs.is_empty() {
            Plan::default()
        } else if crate::sandbox::bind::mode(config.staging) == StagingMode::Copy {
            Plan::copy_all(manifest, CopyReason::Forced)
        } else {
            let engine = engine_allows_binds(docker, podman).await;
            let manifest = manifest.clone();
            tokio::task::spawn_blocking(move || crate::sandbox::bind::plan(&manifest, engine))
                .await
                .context("planning the staging of the inputs")?
        };
        if plan.binds.is_empty() {
            return Self::start_planned(docker, run_id, config, plan, podman, cancel).await;
        }
        match Self::start_planned(docker, run_id, config, plan, podman, cancel).await {
            Err(e) if e.downcast_ref::<StagingError>().is_some() && !cancel.is_cancelled() => {
                // Copies work wherever the engine is.
                let plan = Plan::copy_all(manifest, CopyReason::EngineSeesOtherFiles);
                Self::start_planned(docker, run_id, config, plan, podman, cancel).await
            }
            r => r,
        }
    }

    /// The container's id as the engine gave it (None before it was created).
    pub fn container_id(&self) -> Option<&str> {
        self.container_id.get().map(String::as_str)
    }
}

// Each call is done where its job lives: `exec` (python, shell), `files` (reading,
// writing and archiving the workspace), `inputs` (staged files), `removal` (close).
#[async_trait]
impl Sandbox for DockerSandbox {
    async fn python(
        &self,
        code: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult> {
        self.run_python(code, timeout, cancel, on_output).await
    }

    async fn shell(
        &self,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult> {
        self.run_shell(command, timeout, cancel, on_output).await
    }

    async fn output_tar(&self) -> anyhow::Result<Box<dyn std::io::Read + Send>> {
        Ok(Box::new(self.download("/workspace/output")))
    }

    async fn archive_workspace(&self, dest: &Path, max_bytes: u64) -> anyhow::Result<u64> {
        self.write_archive(dest, max_bytes).await
    }

    async fn list_outputs(&self) -> anyhow::Result<Vec<OutputEntry>> {
        self.list_output_files().await
    }

    async fn read_file(&self, rel: &str, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
        self.read_one(rel, max_bytes).await
    }

    async fn write_file(&self, rel: &str, bytes: &[u8]) -> anyhow::Result<()> {
        self.write_one(rel, bytes).await
    }

    async fn add_inputs(&self, manifest: &Manifest) -> anyhow::Result<()> {
        self.add_copies(manifest).await
    }

    fn staging(&self) -> Vec<StagedInput> {
        self.staged.lock().unwrap().clone()
    }

    async fn changed_inputs(&self) -> Vec<String> {
        self.changed_bound().await
    }

    async fn remove_input(&self, name: &str) -> anyhow::Result<()> {
        self.remove_one(name).await
    }

    async fn restore_workspace(&self, archive: &Path) -> anyhow::Result<()> {
        self.restore_from(archive).await
    }

    async fn upload_outputs(&self, src: &Path, files: &[String]) -> anyhow::Result<()> {
        self.upload_output_files(src, files).await
    }

    async fn python_env(&self) -> Result<PythonEnv, PackagesError> {
        self.python_env
            .get_or_init(|| self.read_python_env())
            .await
            .clone()
    }

    fn isolation(&self) -> super::Isolation {
        // Resolved by the factory before the container was made.
        self.config.isolation
    }

    fn take_egress(&self) -> Connections {
        self.egress
            .as_ref()
            .map(egress::Egress::take)
            .unwrap_or_default()
    }

    async fn close(&self) -> anyhow::Result<()> {
        let removed = self.remove_all().await;
        if let Some(proxy) = &self.egress {
            proxy.stop().await;
        }
        removed
    }
}

impl Drop for DockerSandbox {
    fn drop(&mut self) {
        // Dropped without close (e.g. a cancelled future): leave it to the next clean-up.
        ACTIVE.lock().unwrap().remove(&self.run_id);
    }
}
