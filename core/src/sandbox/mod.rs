//! The `Sandbox` trait: where the model's code runs; the [`SandboxFactory`] that
//! makes sandboxes and answers for their engine; the Docker and in-memory backends.
//!
//! The agent loop only sees this trait: run Python in a persistent kernel, run a
//! shell command, interrupt, bring outputs back, archive the workspace, close.
//! Nothing here assumes the engine is local; files move as tar streams, except that
//! a local Docker Engine may get large inputs as read-only bind mounts (see `bind`).

mod bind;
pub mod contexts;
pub mod custom;
pub mod docker;
pub mod engine;
pub mod factory;
#[cfg(any(test, feature = "test-support"))]
pub mod fake;
pub mod image;
mod kernel;
pub mod packages;
pub mod report;

pub use docker::DockerFactory;
pub use factory::{fix_for_this_os, EngineStatus, LineSink, SandboxFactory, SetupSink, SetupStage};
#[cfg(any(test, feature = "test-support"))]
pub use fake::FakeFactory;

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

pub use crate::egress::NetworkMode;
use crate::egress::{EgressEvent, Pin};
use crate::workspace::{CollectLimits, Collected, Manifest, StagedInput, StagingMode};

/// Every sandbox sets this variable to `1`, so code can tell it runs in one (an
/// exported script refuses to run anywhere else by default, see `analysis::script`).
pub const MARKER_ENV: &str = "SANDALYST_SANDBOX";

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecStatus {
    /// Ran to the end without an exception (shell: exit code 0).
    Ok,
    /// Raised an exception (shell: non-zero exit code).
    Error,
    /// Hit its timeout and was interrupted.
    Timeout,
    /// Interrupted because the run was cancelled.
    Cancelled,
    /// The kernel process died (e.g. out of memory); a fresh one was started.
    KernelRestarted,
}

/// What one python or shell call produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExecResult {
    pub status: ExecStatus,
    pub stdout: String,
    pub stderr: String,
    /// Python traceback, when the code raised.
    pub traceback: Option<String>,
    /// Shell exit code.
    pub exit_code: Option<i64>,
    /// Something the model must know beyond the output, e.g. "kernel state was lost".
    pub note: Option<String>,
    pub duration_ms: u64,
    /// Figures the cell displayed (`plt.show()`, `display(fig)`, figures left open at
    /// its end), as PNG bytes; not files in `output/` unless the code saved them.
    #[serde(skip)]
    pub figures: Vec<Vec<u8>>,
    /// Python: the names the kernel's namespace holds after the cell, with their
    /// types, bounded ("df (DataFrame 8760x4), daily (Series 365)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<String>,
}

impl ExecResult {
    /// A result with no output yet.
    pub fn empty(status: ExecStatus, duration_ms: u64) -> ExecResult {
        ExecResult {
            status,
            stdout: String::new(),
            stderr: String::new(),
            traceback: None,
            exit_code: None,
            note: None,
            duration_ms,
            figures: Vec::new(),
            names: None,
        }
    }
}

/// Which stream a piece of live output came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Receives a call's output while it runs, in chunks (at least every 200 ms while
/// there is output). The final [`ExecResult`] still holds the (capped) whole.
pub type OutputSink<'a> = &'a (dyn Fn(Stream, &str) + Send + Sync);

/// A file under `/workspace/output`, for spotting what a call created or changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputEntry {
    /// Relative to `output/`, with `/` separators.
    pub path: String,
    pub bytes: u64,
    /// Modification time, nanoseconds since the epoch.
    pub modified_ns: u128,
}

/// Resource limits and switches for one sandbox.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SandboxConfig {
    pub image: String,
    /// What the code may reach: nothing, the allowlist through the egress proxy, or
    /// everything. Older records wrote a bool (`true`: full).
    #[serde(deserialize_with = "network_mode")]
    pub network: NetworkMode,
    /// Names the egress proxy sends where the user said (`--resolve NAME=ADDR`),
    /// private addresses included; only used in `allow:` mode.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub egress_resolve: Vec<Pin>,
    pub memory_bytes: i64,
    pub nano_cpus: i64,
    pub pids_limit: i64,
    /// Room in /workspace beyond the staged inputs. The workspace is a tmpfs: what the
    /// code writes there counts against `memory_bytes`, so keep this below it.
    pub workspace_bytes: u64,
    pub tmp_bytes: u64,
    /// Bytes of stdout (and of stderr) a single call may return to the model.
    pub output_cap_bytes: usize,
    /// Run even where the engine cannot enforce the memory, CPU and process limits
    /// (rootless Podman on a cgroup v1 host); without it such a start is refused.
    #[serde(default)]
    pub allow_no_limits: bool,
    /// The user's own pip and apt packages, layered on the built-in image (a derived
    /// image, built when missing); not applied to an image named in `image`.
    #[serde(default)]
    pub packages: custom::Packages,
    /// How a derived image is built on this machine (a CA file, the build's network).
    #[serde(default)]
    pub build: custom::BuildOptions,
    /// Bind-mount inputs where the engine allows it, or always copy them;
    /// `SANDALYST_STAGING=copy` overrides it.
    #[serde(default)]
    pub staging: StagingMode,
    /// The isolation runtime, resolved to `runc` or `gvisor` when the sandbox starts.
    #[serde(default)]
    pub isolation: Isolation,
}

/// A network mode as written now, or the bool of older records (`true`: full).
pub fn network_mode<'de, D: serde::Deserializer<'de>>(d: D) -> Result<NetworkMode, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Old(bool),
        Mode(NetworkMode),
    }
    Ok(match Written::deserialize(d)? {
        Written::Old(true) => NetworkMode::Full,
        Written::Old(false) => NetworkMode::Off,
        Written::Mode(m) => m,
    })
}

/// What the egress proxy saw between two calls: its events, oldest first, and how
/// many older ones were dropped to keep the count bounded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Connections {
    pub events: Vec<EgressEvent>,
    pub dropped: u64,
}

/// What isolates the sandbox from the host's kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// The app's choice: gVisor where the engine has runsc and the sandbox is offline,
    /// else runc ([`engine::EngineInfo::isolation`]; `SANDALYST_ISOLATION` overrides).
    #[default]
    Auto,
    /// The engine's default runtime: the container shares the host's kernel.
    Runc,
    /// gVisor (`runsc`): the code's system calls go to a kernel in user space.
    Gvisor,
}

impl Isolation {
    /// The engine runtime to ask for; `None`: the engine's default.
    pub fn runtime(self) -> Option<&'static str> {
        (self == Isolation::Gvisor).then_some("runsc")
    }
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Isolation::Auto => "auto",
            Isolation::Runc => "runc",
            Isolation::Gvisor => "gvisor",
        })
    }
}

impl std::str::FromStr for Isolation {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Isolation::Auto),
            "runc" => Ok(Isolation::Runc),
            "gvisor" | "runsc" => Ok(Isolation::Gvisor),
            other => Err(format!(
                "unknown isolation {other:?}: use runc (the container alone), gvisor (runsc, a user-space kernel) or auto (the app's choice)"
            )),
        }
    }
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            image: String::new(),
            network: NetworkMode::Off,
            egress_resolve: Vec::new(),
            memory_bytes: 2 << 30,
            nano_cpus: 1_000_000_000,
            pids_limit: 256,
            workspace_bytes: 1 << 30,
            tmp_bytes: 256 << 20,
            // Kept whole in the workspace for the model to read back; what the model is
            // given of it is cut much shorter (see `agent::observe`).
            output_cap_bytes: 1 << 20,
            allow_no_limits: false,
            packages: custom::Packages::default(),
            build: custom::BuildOptions::default(),
            staging: StagingMode::Auto,
            isolation: Isolation::Auto,
        }
    }
}

#[async_trait]
pub trait Sandbox: Send + Sync {
    /// Run Python in the persistent kernel; state persists between calls. A timeout
    /// or `cancel` interrupts the code and returns what it printed so far.
    async fn python(
        &self,
        code: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult>;
    /// Run a shell command (`sh -c`) in the workspace, killed at the timeout or on cancel.
    async fn shell(
        &self,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult>;
    /// Every file under `/workspace/output` now (cheap: called after each tool call).
    async fn list_outputs(&self) -> anyhow::Result<Vec<OutputEntry>>;
    /// Read one file of the workspace (`rel` relative to `/workspace`), at most
    /// `max_bytes`; an error if it is larger, missing, or not a regular file.
    async fn read_file(&self, rel: &str, max_bytes: u64) -> anyhow::Result<Vec<u8>>;
    /// Write one file into the workspace (`rel` relative to `/workspace`), e.g. the
    /// full output of a call whose result was shortened for the model.
    async fn write_file(&self, rel: &str, _bytes: &[u8]) -> anyhow::Result<()> {
        anyhow::bail!("this sandbox cannot write {rel}")
    }
    /// Stage more files into `/workspace/input` while the sandbox runs.
    async fn add_inputs(&self, manifest: &Manifest) -> anyhow::Result<()>;
    /// Remove one staged input file (`name` relative to `input/`).
    async fn remove_input(&self, name: &str) -> anyhow::Result<()>;
    /// How each input of this sandbox was staged (bind mount or copy, and why).
    fn staging(&self) -> Vec<StagedInput> {
        Vec::new()
    }
    /// Bind-mounted inputs whose host file changed (size, time or inode) since the
    /// sandbox started or since the last time it was reported here: the code sees
    /// the change, so the run record must say so.
    async fn changed_inputs(&self) -> Vec<String> {
        Vec::new()
    }
    /// Unpack a workspace archive (as written by `archive_workspace`) into
    /// `/workspace`, for a session reopened in a new container.
    async fn restore_workspace(&self, archive: &Path) -> anyhow::Result<()>;
    /// Copy files of the host folder `src` (paths relative to it) into
    /// `/workspace/output`, for a workspace rebuilt from the session's outputs.
    async fn upload_outputs(&self, src: &Path, files: &[String]) -> anyhow::Result<()> {
        for rel in files {
            let path = src.join(rel);
            let bytes = tokio::task::spawn_blocking(move || std::fs::read(path)).await??;
            self.write_file(&format!("output/{rel}"), &bytes).await?;
        }
        Ok(())
    }
    /// `/workspace/output` as a tar stream (entries under `output/`), read on a
    /// blocking thread. Backends only move the bytes: what comes out is checked by
    /// `collect_outputs`.
    async fn output_tar(&self) -> anyhow::Result<Box<dyn std::io::Read + Send>>;
    /// Copy `/workspace/output` into `dest` through the one check of what leaves a
    /// sandbox ([`crate::workspace::collect_chosen`]): unsafe entries refused, the
    /// caps of `limits` applied. When output/ holds more than may come back, the files
    /// that matter most (top-level files, images, tables, Markdown) are chosen first.
    /// Not for backends to override.
    async fn collect_outputs(
        &self,
        dest: &Path,
        limits: &CollectLimits,
    ) -> anyhow::Result<Collected> {
        let listed: Vec<(String, u64)> = self
            .list_outputs()
            .await
            .map(|l| l.into_iter().map(|e| (e.path, e.bytes)).collect())
            .unwrap_or_default();
        let total: u64 = listed.iter().map(|e| e.1).sum();
        let chosen = (listed.len() > limits.max_files || total > limits.max_total_bytes)
            .then(|| crate::workspace::choose_outputs(&listed, limits));
        let reader = self.output_tar().await?;
        let (dest, limits) = (dest.to_path_buf(), limits.clone());
        tokio::task::spawn_blocking(move || {
            crate::workspace::collect_chosen(reader, "output/", &dest, &limits, chosen.as_ref())
        })
        .await
        .context("collecting outputs")?
    }
    /// Write the whole workspace as a tar archive to `dest`.
    async fn archive_workspace(&self, dest: &Path, max_bytes: u64) -> anyhow::Result<u64>;
    /// The Python interpreter and packages of the sandbox's image, read once per
    /// sandbox (and cached per image): what the model is told is installed.
    async fn python_env(&self) -> Result<packages::PythonEnv, packages::PackagesError> {
        Err(packages::PackagesError::Unsupported)
    }
    /// The isolation runtime this sandbox runs under (`Auto` where it is not a
    /// container).
    fn isolation(&self) -> Isolation {
        Isolation::Auto
    }
    /// The connections the egress proxy let through or refused since the last time
    /// this was asked (`allow:` mode; none otherwise), oldest first.
    fn take_egress(&self) -> Connections {
        Connections::default()
    }
    /// Remove the container and everything it owned. Idempotent.
    async fn close(&self) -> anyhow::Result<()>;
}
