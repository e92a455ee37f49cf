//! Where a session's sandbox comes from, and what the layers above ask of the engine
//! behind it. A backend implements [`SandboxFactory`]: start a sandbox, resolve the
//! image a config names (building it when missing), say whether its engine answers,
//! and build or report on images. Sessions, runs, re-runs and both front ends go
//! through it, so nothing above this layer names an engine; a test hands in the
//! in-memory [`super::fake::FakeFactory`] instead.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::custom::Packages;
use super::engine::EngineSource;
use super::packages::{PackagesError, PythonEnv};
use super::report::{BuildLine, ImageBuild, ImageReport};
use super::{Sandbox, SandboxConfig};
use crate::protocol::SessionError;
use crate::workspace::{CopyReason, Manifest, StagedInput, StagingMethod};

/// Receives set-up progress.
pub type SetupSink<'a> = &'a (dyn Fn(SetupStage) + Send + Sync);

/// Receives progress lines (an image build's, for instance).
pub type LineSink<'a> = &'a (dyn Fn(String) + Send + Sync);

#[async_trait]
pub trait SandboxFactory: Send + Sync {
    /// Start a sandbox for session `id` with `manifest` staged in `input/`.
    /// `config.image` empty means the default image, or the derived image of
    /// `config.packages` (built when missing), as the backend resolves it (Docker's:
    /// `docker::custom::resolve`). When `cancel` fires (the session closes) the start
    /// stops promptly, with whatever it created removed again.
    async fn start(
        &self,
        id: &str,
        config: &SandboxConfig,
        manifest: &Manifest,
        setup: SetupSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<Arc<dyn Sandbox>, SessionError>;

    /// What the Python of the image `config` runs in holds, when that is known
    /// without a sandbox of it (Docker: the list cached by the image's id, once any
    /// sandbox of the image read it); `None` when only a running sandbox can say. An
    /// ask describes the image to the model from it while its sandbox still starts.
    async fn cached_python_env(
        &self,
        config: &SandboxConfig,
    ) -> Option<Result<PythonEnv, PackagesError>> {
        let _ = config;
        None
    }

    /// The image `config` runs in, made ready (built when missing): the built-in one,
    /// the derived one of `config.packages`, or the user's own, checked. Returns its
    /// tag; `progress` gets the build's lines.
    async fn prepare_image(
        &self,
        config: &SandboxConfig,
        progress: LineSink<'_>,
    ) -> Result<String, SessionError>;

    /// Whether the engine answers, which one it is, and whether the built-in image
    /// is there, as the desktop's engine panel shows it.
    async fn engine_status(&self) -> EngineStatus;

    /// Build the built-in image (even when it is there); `progress` gets each line.
    /// Returns its tag.
    async fn build_image(
        &self,
        progress: &(dyn for<'s> Fn(&'s str) + Send + Sync),
    ) -> anyhow::Result<String>;

    /// The built-in image, the derived image of `packages` (when there are any) and
    /// the Python environment of the one runs use, as `sandalyst image status` shows.
    async fn image_report(&self, packages: &Packages) -> anyhow::Result<ImageReport>;

    /// The built-in image when missing, then the derived image of `build.packages`
    /// when there are any, as `sandalyst image build` makes them. Returns the tag runs
    /// use.
    async fn build_images(
        &self,
        build: &ImageBuild,
        progress: &(dyn Fn(BuildLine) + Send + Sync),
    ) -> anyhow::Result<String>;
}

/// The engine and the built-in image as a front end shows them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineStatus {
    pub reachable: bool,
    /// What is wrong, in a sentence, when the engine does not answer.
    pub message: Option<String>,
    /// How to fix it on this OS.
    pub fix: Option<String>,
    /// Which engine answers, in one line (`Docker Engine 28.2.2 (API 1.50; ...)`).
    pub engine: Option<String>,
    /// Guarantees this engine cannot give (e.g. limits on rootless cgroup v1), as
    /// sentences; runs there are refused unless the user accepts it.
    pub missing: Vec<String>,
    pub image_tag: String,
    pub image_present: Option<bool>,
    pub image_bytes: Option<i64>,
}

/// How to get a container engine running on this OS, for a window with a Retry button.
pub fn fix_for_this_os() -> String {
    if cfg!(target_os = "macos") {
        "Start Docker Desktop (or `colima start`), then press Retry.".into()
    } else if cfg!(windows) {
        "Start Docker Desktop, then press Retry.".into()
    } else {
        "Start the engine with `sudo systemctl start docker` (or install it with `sudo apt-get install docker.io`), or point DOCKER_HOST at a running engine, then press Retry.".into()
    }
}

/// Set-up steps before code can run, each a typed stage a UI can show as progress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum SetupStage {
    /// The engine answered: which one, its version, and where it came from
    /// (`DOCKER_HOST`, a docker CLI context, a default socket; absent in sessions
    /// recorded before it was reported).
    Engine {
        name: String,
        version: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<EngineSource>,
    },
    /// Containers left by an earlier process were removed.
    LeftoversRemoved {
        count: usize,
    },
    /// The sandbox image is being built; `line` is its latest progress line. A build
    /// of the user's packages also says which of its steps began (`step` of `steps`).
    ImageBuild {
        line: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        steps: Option<u32>,
    },
    ImageReady {
        tag: String,
    },
    ContainerStarting,
    /// Files are being staged into `input/`.
    Staging {
        files: usize,
        bytes: u64,
    },
    /// How files reached `input/`: one event per method (and reason for copies).
    /// `bind_mount` is the host file itself, read-only (zero copy, local engines);
    /// `copy` went through the engine as a tar stream.
    Staged {
        method: StagingMethod,
        files: usize,
        bytes: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<CopyReason>,
    },
    /// The sandbox is ready for code: its start took `millis`. Said again when an ask
    /// finds it already started (warm), with `warm_for_ms`: how long it had been ready.
    SandboxReady {
        millis: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        warm_for_ms: Option<u64>,
    },
    /// The workspace of an earlier container was restored (a reopened session).
    WorkspaceRestored,
    /// The container was released after the session was idle; it comes back on the next ask.
    SandboxReleased,
}

impl SetupStage {
    /// The `Staged` events for what a sandbox reports: one per method and reason, in
    /// the order they first occur.
    pub fn staged(inputs: &[StagedInput]) -> Vec<SetupStage> {
        let mut groups: Vec<(StagingMethod, Option<CopyReason>, usize, u64)> = Vec::new();
        for i in inputs {
            match groups
                .iter_mut()
                .find(|g| g.0 == i.method && g.1 == i.reason)
            {
                Some(g) => {
                    g.2 += 1;
                    g.3 += i.bytes;
                }
                None => groups.push((i.method, i.reason, 1, i.bytes)),
            }
        }
        groups
            .into_iter()
            .map(|(method, reason, files, bytes)| SetupStage::Staged {
                method,
                files,
                bytes,
                reason,
            })
            .collect()
    }
}
