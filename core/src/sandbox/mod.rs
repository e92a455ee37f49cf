//! The `Sandbox` trait: where the model's code runs, and the Docker backend.
//!
//! The agent loop only sees this trait: run Python in a persistent kernel, run a
//! shell command, interrupt, bring outputs back, archive the workspace, close.
//! Nothing here assumes the engine is local; files move as tar streams.

pub mod docker;
pub mod image;
mod kernel;

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::workspace::{CollectLimits, Collected};

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
}

/// Resource limits and switches for one sandbox.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SandboxConfig {
    pub image: String,
    pub network: bool,
    pub memory_bytes: i64,
    pub nano_cpus: i64,
    pub pids_limit: i64,
    /// Room in /workspace beyond the staged inputs. The workspace is a tmpfs: what the
    /// code writes there counts against `memory_bytes`, so keep this below it.
    pub workspace_bytes: u64,
    pub tmp_bytes: u64,
    /// Bytes of stdout (and of stderr) a single call may return to the model.
    pub output_cap_bytes: usize,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            image: String::new(),
            network: false,
            memory_bytes: 2 << 30,
            nano_cpus: 1_000_000_000,
            pids_limit: 256,
            workspace_bytes: 1 << 30,
            tmp_bytes: 256 << 20,
            output_cap_bytes: 32 << 10,
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
    ) -> anyhow::Result<ExecResult>;
    /// Run a shell command (`sh -c`) in the workspace, killed at the timeout or on cancel.
    async fn shell(
        &self,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> anyhow::Result<ExecResult>;
    /// Copy `/workspace/output` into `dest`, refusing unsafe entries.
    async fn collect_outputs(
        &self,
        dest: &Path,
        limits: &CollectLimits,
    ) -> anyhow::Result<Collected>;
    /// Write the whole workspace as a tar archive to `dest`.
    async fn archive_workspace(&self, dest: &Path, max_bytes: u64) -> anyhow::Result<u64>;
    /// Remove the container and everything it owned. Idempotent.
    async fn close(&self) -> anyhow::Result<()>;
}
