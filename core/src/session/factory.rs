//! Where a session's sandbox comes from. The Docker factory checks the engine,
//! removes leftovers, makes sure the image exists (building it with progress) and
//! starts a hardened container; a test hands the session an in-memory factory
//! instead, so the loop and sessions are tested without Docker.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::SessionError;
use crate::agent::SetupStage;
use crate::sandbox::custom::{self, BuildProgress};
use crate::sandbox::docker::{self, DockerSandbox};
use crate::sandbox::fake::FakeSandbox;
use crate::sandbox::{Sandbox, SandboxConfig};
use crate::workspace::Manifest;

/// Receives set-up progress.
pub type SetupSink<'a> = &'a (dyn Fn(SetupStage) + Send + Sync);

#[async_trait]
pub trait SandboxFactory: Send + Sync {
    /// Start a sandbox for session `id` with `manifest` staged in `input/`.
    /// `config.image` empty means the default image, or the derived image of
    /// `config.packages` (built when missing); see [`custom::resolve`]. When `cancel`
    /// fires (the session closes) the start stops promptly, with whatever it created
    /// removed again.
    async fn start(
        &self,
        id: &str,
        config: &SandboxConfig,
        manifest: &Manifest,
        setup: SetupSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<Arc<dyn Sandbox>, SessionError>;
}

/// Sandboxes from the container engine that `DOCKER_HOST` (or the local socket) names.
#[derive(Default)]
pub struct DockerFactory;

#[async_trait]
impl SandboxFactory for DockerFactory {
    async fn start(
        &self,
        id: &str,
        config: &SandboxConfig,
        manifest: &Manifest,
        setup: SetupSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<Arc<dyn Sandbox>, SessionError> {
        // Until the container exists nothing of ours is on the engine: the set-up
        // (engine checks, leftovers, an image build) is simply dropped on cancel.
        let prepared = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(cancelled()),
            p = self.prepare(config, setup) => p?,
        };
        setup(SetupStage::ContainerStarting);
        setup(SetupStage::Staging {
            files: manifest.inputs.len(),
            bytes: manifest.total_bytes(),
        });
        let (engine, config) = prepared;
        let sandbox = DockerSandbox::start_or_cancel(&engine, id, &config, manifest, cancel)
            .await
            .map_err(|e| {
                if cancel.is_cancelled() {
                    cancelled()
                } else {
                    SessionError::Sandbox {
                        message: format!("{e:#}"),
                    }
                }
            })?;
        Ok(Arc::new(sandbox))
    }
}

fn cancelled() -> SessionError {
    SessionError::Sandbox {
        message: "cancelled before the sandbox was ready".into(),
    }
}

impl DockerFactory {
    /// The engine, checked and cleaned of leftovers, and the config with its image
    /// resolved (built when missing).
    async fn prepare(
        &self,
        config: &SandboxConfig,
        setup: SetupSink<'_>,
    ) -> Result<(bollard::Docker, SandboxConfig), SessionError> {
        let unavailable = |e: anyhow::Error| SessionError::EngineUnavailable {
            message: format!("{e:#}"),
        };
        let (engine, place) = crate::sandbox::engine::connect()
            .await
            .map_err(unavailable)?;
        let info = crate::sandbox::engine::describe(&engine, &place)
            .await
            .map_err(unavailable)?;
        let mut version = info.details();
        if info.limits_unenforced() {
            let why = info.missing.join("; ");
            if !config.allow_no_limits {
                return Err(SessionError::Sandbox {
                    message: format!(
                        "{} {version}: {why}. Refusing to run code without them; pass --allow-no-limits (allow_no_limits) to run anyway",
                        info.name()
                    ),
                });
            }
            version.push_str(&format!(
                "; WARNING: running WITHOUT limits, as allowed: {why}"
            ));
        }
        setup(SetupStage::Engine {
            name: info.name(),
            version,
        });
        let count = docker::remove_leftovers(&engine).await.map_err(|e| {
            SessionError::EngineUnavailable {
                message: format!("{e:#}"),
            }
        })?;
        if count > 0 {
            setup(SetupStage::LeftoversRemoved { count });
        }
        let mut config = config.clone();
        // The built-in image (built when missing), the derived image of the user's
        // packages (built when missing), or the user's own image, checked.
        let progress = |p: BuildProgress| {
            let (step, steps) = match p {
                BuildProgress::Step { step, steps, .. } => (Some(step), Some(steps)),
                _ => (None, None),
            };
            setup(SetupStage::ImageBuild {
                line: p.to_string(),
                step,
                steps,
            })
        };
        config.image = custom::resolve(
            &engine,
            &config.image,
            &config.packages,
            &config.build,
            &progress,
        )
        .await?;
        setup(SetupStage::ImageReady {
            tag: config.image.clone(),
        });
        Ok((engine, config))
    }
}

/// Starts [`FakeSandbox`]es and remembers them, so a test can look inside.
#[derive(Default)]
pub struct FakeFactory {
    pub started: Mutex<Vec<Arc<FakeSandbox>>>,
    /// When set, starting fails with this error (e.g. an engine that does not answer).
    pub fail_with: Mutex<Option<SessionError>>,
}

#[async_trait]
impl SandboxFactory for FakeFactory {
    async fn start(
        &self,
        _id: &str,
        _config: &SandboxConfig,
        manifest: &Manifest,
        _setup: SetupSink<'_>,
        _cancel: &CancellationToken,
    ) -> Result<Arc<dyn Sandbox>, SessionError> {
        if let Some(e) = self.fail_with.lock().unwrap().clone() {
            return Err(e);
        }
        let sb = Arc::new(FakeSandbox::default());
        sb.add_inputs(manifest)
            .await
            .map_err(|e| SessionError::Sandbox {
                message: format!("{e:#}"),
            })?;
        self.started.lock().unwrap().push(sb.clone());
        Ok(sb)
    }
}
