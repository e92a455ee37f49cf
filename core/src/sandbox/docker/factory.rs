//! The Docker backend's [`SandboxFactory`]: checks the engine, removes leftovers,
//! makes sure the image exists (building it with progress) and starts a hardened
//! container; and the engine and image reports the front ends show.

use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::{custom, engine, image, DockerSandbox};
use crate::protocol::SessionError;
use crate::sandbox::custom::{derived_tag, BuildProgress, Packages};
use crate::sandbox::factory::{fix_for_this_os, EngineStatus, LineSink, SandboxFactory, SetupSink};
use crate::sandbox::image::{default_tag, BuildMethod};
use crate::sandbox::packages::{cached, PackagesError, PythonEnv};
use crate::sandbox::report::{BuildLine, CustomImage, ImageBuild, ImagePython, ImageReport};
use crate::sandbox::{Isolation, Sandbox, SandboxConfig, SetupStage};
use crate::workspace::Manifest;

/// Sandboxes from the container engine the docker CLI would use (`DOCKER_HOST`, a
/// context, the default sockets).
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

    async fn cached_python_env(
        &self,
        config: &SandboxConfig,
    ) -> Option<Result<PythonEnv, PackagesError>> {
        // The built-in image when none is named; a derived one only its sandbox names.
        let image = match (config.image.as_str(), config.packages.is_empty()) {
            ("", true) => default_tag(),
            ("", false) => return None,
            (tag, _) => tag.to_string(),
        };
        let docker = super::connect().await.ok()?;
        let id = super::packages::image_id(&docker, &image).await.ok()?;
        cached(&id).await.map(Ok)
    }

    async fn prepare_image(
        &self,
        config: &SandboxConfig,
        progress: LineSink<'_>,
    ) -> Result<String, SessionError> {
        let engine = super::connect()
            .await
            .map_err(|e| SessionError::EngineUnavailable {
                message: format!("{e:#}"),
            })?;
        let progress = |p: BuildProgress| progress(p.to_string());
        let c = config;
        Ok(custom::resolve(&engine, &c.image, &c.packages, &c.build, &progress).await?)
    }

    async fn engine_status(&self) -> EngineStatus {
        let tag = default_tag();
        match engine::connect().await {
            Ok((d, source)) => {
                let img = image::status(&d).await.ok();
                let info = engine::describe(&d, &source).await.ok();
                EngineStatus {
                    reachable: true,
                    message: None,
                    fix: None,
                    engine: info
                        .as_ref()
                        .map(|i| format!("{} {}", i.name(), i.details())),
                    missing: info.map(|i| i.missing).unwrap_or_default(),
                    image_tag: tag,
                    image_present: img.as_ref().map(|i| i.present),
                    image_bytes: img.and_then(|i| i.size_bytes),
                }
            }
            Err(e) => EngineStatus {
                reachable: false,
                message: Some(e.to_string()),
                fix: Some(fix_for_this_os()),
                engine: None,
                missing: Vec::new(),
                image_tag: tag,
                image_present: None,
                image_bytes: None,
            },
        }
    }

    async fn build_image(
        &self,
        progress: &(dyn for<'s> Fn(&'s str) + Send + Sync),
    ) -> anyhow::Result<String> {
        let d = super::connect().await?;
        image::build(&d, BuildMethod::Auto, progress).await
    }

    async fn image_report(&self, packages: &Packages) -> anyhow::Result<ImageReport> {
        let engine = super::connect().await?;
        let st = image::status(&engine).await?;
        // The image runs use: the derived one when it is configured and built, else
        // the built-in one.
        let mut used = st.present.then(|| st.tag.clone());
        let custom = if packages.is_empty() {
            None
        } else {
            let tag = derived_tag(&st.tag, packages);
            let present = custom::present(&engine, &tag).await?.is_some();
            if present {
                used = Some(tag.clone());
            }
            Some(CustomImage {
                tag,
                packages: packages.to_string(),
                present,
            })
        };
        let python = match used {
            // Read from the image itself (cached by image id after the first time).
            Some(tag) => Some(ImagePython {
                env: super::packages::for_image(&engine, &tag)
                    .await
                    .map_err(|e| e.to_string()),
                tag,
            }),
            None => None,
        };
        Ok(ImageReport {
            tag: st.tag,
            present: st.present,
            size_bytes: st.size_bytes,
            created: st.created,
            stale_tags: st.stale_tags,
            custom,
            python,
        })
    }

    async fn build_images(
        &self,
        build: &ImageBuild,
        progress: &(dyn Fn(BuildLine) + Send + Sync),
    ) -> anyhow::Result<String> {
        let engine = super::connect().await?;
        let st = image::status(&engine).await?;
        let base = if st.present {
            progress(BuildLine::UpToDate {
                tag: st.tag.clone(),
            });
            st.tag
        } else {
            let line = |l: &str| progress(BuildLine::Base(l.to_string()));
            image::build(&engine, build.method, &line).await?
        };
        if build.packages.is_empty() {
            return Ok(base);
        }
        let derived = |p: BuildProgress| progress(BuildLine::Derived(p));
        let tag = custom::ensure(&engine, &base, &build.packages, &build.options, &derived).await?;
        progress(BuildLine::Ready {
            tag: tag.clone(),
            packages: build.packages.to_string(),
        });
        Ok(tag)
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
        let (engine, source) = engine::connect().await.map_err(unavailable)?;
        let info = engine::describe(&engine, &source)
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
        let mut config = config.clone();
        config.isolation = info
            .isolation(
                auto_on_this_machine(config.isolation)
                    .map_err(|message| SessionError::Sandbox { message })?,
                config.network != crate::sandbox::NetworkMode::Off,
            )
            .map_err(|message| SessionError::Sandbox { message })?;
        version.push_str(&match config.isolation {
            Isolation::Gvisor => "; isolation gVisor (runsc)".to_string(),
            _ => "; isolation runc (the host's kernel)".to_string(),
        });
        setup(SetupStage::Engine {
            name: info.name(),
            version,
            source: Some(source),
        });
        let count = super::remove_leftovers(&engine)
            .await
            .map_err(unavailable)?;
        if count > 0 {
            setup(SetupStage::LeftoversRemoved { count });
        }
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

/// What `auto` means here: `SANDALYST_ISOLATION` (`runc` or `gvisor`) over the app's
/// choice, for a machine (or a test run) that wants one runtime for every sandbox.
fn auto_on_this_machine(asked: Isolation) -> Result<Isolation, String> {
    match (asked, std::env::var("SANDALYST_ISOLATION")) {
        (Isolation::Auto, Ok(v)) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .map_err(|e| format!("SANDALYST_ISOLATION: {e}")),
        (asked, _) => Ok(asked),
    }
}
