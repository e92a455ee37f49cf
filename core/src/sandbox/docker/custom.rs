//! Derived images and images the user brought, through the Engine API (`bollard`):
//! the build of the user's packages on the sandbox image, [`check`] of an image
//! named with `--image`, and [`resolve`], which picks the image a sandbox runs. What
//! goes into a derived image, its tag, and how a failure or a check is read are
//! `sandbox::custom`'s.
//!
//! ```no_run
//! # async fn demo(docker: &bollard::Docker) -> Result<(), sandalyst::sandbox::custom::ImageError> {
//! use sandalyst::sandbox::custom::{BuildOptions, Packages};
//! use sandalyst::sandbox::docker::custom;
//! let packages = Packages::new(["tabulate"], [] as [&str; 0])?;
//! let base = sandalyst::sandbox::image::default_tag();
//! let tag = custom::build(docker, &base, &packages, &BuildOptions::default(), &|p| println!("{p}")).await?;
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    BuildImageOptionsBuilder, CreateContainerOptionsBuilder, LogsOptionsBuilder,
    RemoveContainerOptionsBuilder, RemoveImageOptionsBuilder, WaitContainerOptionsBuilder,
};
use bollard::Docker;
use futures_util::StreamExt;

use super::engine_error;
use crate::sandbox::custom::{
    already_checked, context_tar, derived_tag, dockerfile, mark_checked, no_python, read_ca,
    read_check, BuildLog, BuildOptions, BuildProgress, Failed, ImageError, ImageReport, Packages,
    ProgressSink, CHECK_SCRIPT, CUSTOM_REPO,
};
use crate::sandbox::image::{self, lock_builds};

fn engine(doing: &str, e: bollard::errors::Error) -> ImageError {
    ImageError::Engine {
        message: format!("{:#}", engine_error(doing, e)),
    }
}

/// The image, or `None` when the engine does not have it.
pub async fn present(
    docker: &Docker,
    tag: &str,
) -> Result<Option<bollard::models::ImageInspect>, ImageError> {
    match docker.inspect_image(tag).await {
        Ok(i) => Ok(Some(i)),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(None),
        Err(e) => Err(engine(&format!("inspecting the image {tag}"), e)),
    }
}

/// The derived image of `packages` on `base`, built only when missing.
pub async fn ensure(
    docker: &Docker,
    base: &str,
    packages: &Packages,
    options: &BuildOptions,
    progress: ProgressSink<'_>,
) -> Result<String, ImageError> {
    let tag = derived_tag(base, packages);
    if !options.force && present(docker, &tag).await?.is_some() {
        return Ok(tag);
    }
    build(docker, base, packages, options, progress).await
}

/// Build the derived image of `packages` on `base` (skipped when it is present and
/// `options.force` is off); returns its tag.
pub async fn build(
    docker: &Docker,
    base: &str,
    packages: &Packages,
    options: &BuildOptions,
    progress: ProgressSink<'_>,
) -> Result<String, ImageError> {
    let started = Instant::now();
    let tag = derived_tag(base, packages);
    // One build at a time on this machine: the same lock as the default image's.
    let line = |l: &str| progress(BuildProgress::Line { text: l.into() });
    let _lock = lock_builds(&line).await.map_err(|e| ImageError::Engine {
        message: format!("{e:#}"),
    })?;
    let previous = present(docker, &tag).await?.and_then(|i| i.id);
    if !options.force && previous.is_some() {
        progress(BuildProgress::Done {
            tag: tag.clone(),
            seconds: started.elapsed().as_secs_f64(),
            cached: true,
        });
        return Ok(tag);
    }
    if present(docker, base).await?.is_none() {
        return Err(ImageError::BaseMissing { base: base.into() });
    }
    let ca = read_ca(options).await?;
    progress(BuildProgress::Started {
        tag: tag.clone(),
        base: base.into(),
        packages: packages.to_string(),
    });
    let context =
        context_tar(&dockerfile(base, packages, ca.is_some()), ca.as_deref()).map_err(|e| {
            ImageError::Engine {
                message: format!("making the build context: {e}"),
            }
        })?;
    if let Some(failed) = run_build(docker, &tag, context, options, progress).await? {
        return Err(failed.into_error(tag));
    }
    let Some(built) = present(docker, &tag).await? else {
        return Err(ImageError::BuildFailed {
            tag: tag.clone(),
            tool: "docker".into(),
            message: format!("the build ended but the engine has no image {tag}"),
        });
    };
    if let (Some(old), Some(new)) = (previous, built.id) {
        drop_replaced(docker, &old, &new).await;
    }
    progress(BuildProgress::Done {
        tag: tag.clone(),
        seconds: started.elapsed().as_secs_f64(),
        cached: false,
    });
    Ok(tag)
}

/// Run the engine's build of `tag` from `context`, turning its output into progress;
/// `Some` when the build failed, with what is needed to say why.
async fn run_build(
    docker: &Docker,
    tag: &str,
    context: Vec<u8>,
    options: &BuildOptions,
    progress: ProgressSink<'_>,
) -> Result<Option<Failed>, ImageError> {
    let mut opts = BuildImageOptionsBuilder::new()
        .dockerfile("Dockerfile")
        .t(tag)
        .rm(true)
        .forcerm(true)
        .pull("false")
        .buildargs(&crate::sandbox::image::proxy_build_args(&|v| {
            std::env::var(v).ok()
        }));
    if let Some(mode) = &options.network {
        opts = opts.networkmode(mode);
    }
    let mut stream =
        docker.build_image(opts.build(), None, Some(bollard::body_full(context.into())));
    let mut log = BuildLog::new();
    loop {
        let Some(item) = stream.next().await else {
            return Ok(None);
        };
        let info = match item {
            Ok(info) => info,
            Err(bollard::errors::Error::DockerStreamError { error }) => {
                return Ok(Some(log.failed(error)))
            }
            Err(e) => return Err(engine(&format!("building {tag}"), e)),
        };
        if let Some(detail) = info.error_detail {
            return Ok(Some(log.failed(detail.message.unwrap_or_default())));
        }
        for text in [info.stream, info.status].into_iter().flatten() {
            log.read(&text, progress);
        }
    }
}

/// A forced rebuild moved the tag from `old` to `new`: drop the untagged image,
/// unless a container still uses it.
async fn drop_replaced(docker: &Docker, old: &str, new: &str) {
    if old != new {
        let opts = RemoveImageOptionsBuilder::new().build();
        let _ = docker.remove_image(old, Some(opts), None).await;
    }
}

/// Check that `image` can host the sandbox: it is there, has `python3`, and its
/// Python imports what the kernel needs. Runs the image once, with no network, as
/// the sandbox user; about a second.
pub async fn check(docker: &Docker, image_name: &str) -> Result<ImageReport, ImageError> {
    let Some(info) = present(docker, image_name).await? else {
        return Err(ImageError::NotFound {
            image: image_name.into(),
        });
    };
    let id = info.id.clone().unwrap_or_default();
    let name = format!(
        "sandalyst-check-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    );
    let body = ContainerCreateBody {
        image: Some(image_name.to_string()),
        entrypoint: Some(vec!["python3".into()]),
        cmd: Some(vec!["-c".into(), CHECK_SCRIPT.into()]),
        user: Some(image::USER.into()),
        env: Some(vec!["HOME=/tmp".into(), "MPLBACKEND=Agg".into()]),
        network_disabled: Some(true),
        labels: Some(HashMap::from([(
            "sandalyst.check".to_string(),
            crate::owner::owner_id().to_string(),
        )])),
        host_config: Some(HostConfig {
            network_mode: Some("none".into()),
            memory: Some(512 << 20),
            memory_swap: Some(512 << 20),
            pids_limit: Some(64),
            cap_drop: Some(vec!["ALL".into()]),
            security_opt: Some(vec!["no-new-privileges".into()]),
            readonly_rootfs: Some(true),
            tmpfs: Some(HashMap::from([(
                "/tmp".to_string(),
                "rw,nosuid,nodev,noexec,size=64m".to_string(),
            )])),
            ..Default::default()
        }),
        ..Default::default()
    };
    let opts = CreateContainerOptionsBuilder::new().name(&name).build();
    let created = docker
        .create_container(Some(opts), body)
        .await
        .map_err(|e| engine(&format!("creating a container from {image_name}"), e))?;
    let result = run_check(docker, &created.id, image_name).await;
    let rm = RemoveContainerOptionsBuilder::new().force(true).build();
    // By the id the engine returned: only the container this call made.
    let _ = docker.remove_container(&created.id, Some(rm)).await;
    let report = result?;
    mark_checked(id);
    Ok(report)
}

async fn run_check(
    docker: &Docker,
    name: &str,
    image_name: &str,
) -> Result<ImageReport, ImageError> {
    if let Err(e) = docker
        .start_container(
            name,
            None::<bollard::query_parameters::StartContainerOptions>,
        )
        .await
    {
        // Docker refuses to start a container whose entrypoint is not there.
        let text = e.to_string();
        if text.contains("executable file not found") || text.contains("no such file or directory")
        {
            return Err(no_python(image_name));
        }
        return Err(engine(
            &format!("starting a container from {image_name}"),
            e,
        ));
    }
    let wait = async {
        let mut w = docker.wait_container(name, Some(WaitContainerOptionsBuilder::new().build()));
        let mut code = None;
        while let Some(item) = w.next().await {
            match item {
                Ok(r) => code = Some(r.status_code),
                // A non-zero exit comes back as this error, with the code.
                Err(bollard::errors::Error::DockerContainerWaitError { code: c, .. }) => {
                    code = Some(c)
                }
                Err(e) => return Err(engine("waiting for the image check", e)),
            }
        }
        Ok(code.unwrap_or(-1))
    };
    let code = match tokio::time::timeout(Duration::from_secs(120), wait).await {
        Ok(r) => r?,
        Err(_) => {
            return Err(ImageError::KernelNeeds {
                image: image_name.into(),
                missing: vec!["a Python that starts within 2 minutes".into()],
                fix: "check the image by hand: docker run --rm IMAGE python3 -c 'import IPython'"
                    .into(),
            })
        }
    };
    let mut out = String::new();
    let mut logs = docker.logs(
        name,
        Some(LogsOptionsBuilder::new().stdout(true).stderr(true).build()),
    );
    while let Some(Ok(chunk)) = logs.next().await {
        out.push_str(&String::from_utf8_lossy(&chunk.into_bytes()));
    }
    read_check(image_name, code, &out)
}

/// Where a sandbox's image comes from, as the factory and `run` decide it.
///
/// - `config.image` empty (or a Sandalyst tag no longer there): the built-in image,
///   built when missing; with `packages`, the derived image on it, built when missing.
/// - Any other `config.image`: used as it is, after [`check`] (images Sandalyst
///   tagged check themselves when they are built). The packages are not layered on it.
pub async fn resolve(
    docker: &Docker,
    config_image: &str,
    packages: &Packages,
    options: &BuildOptions,
    progress: ProgressSink<'_>,
) -> Result<String, ImageError> {
    let ours = config_image.starts_with(&format!("{}:", image::REPO))
        || config_image.starts_with(&format!("{CUSTOM_REPO}:"));
    if !config_image.is_empty() {
        match present(docker, config_image).await? {
            Some(_) if ours => return Ok(config_image.to_string()),
            // Checked once per image and process; not by label: an image FROM ours
            // inherits its labels, and may have lost what the kernel needs.
            Some(info) => {
                if !already_checked(info.id.as_deref().unwrap_or_default()) {
                    check(docker, config_image).await?;
                }
                return Ok(config_image.to_string());
            }
            None if ours => {} // an older version's tag: today's image instead
            None => {
                return Err(ImageError::NotFound {
                    image: config_image.into(),
                })
            }
        }
    }
    let line = |l: &str| progress(BuildProgress::Line { text: l.into() });
    let base = super::image::ensure(docker, &line)
        .await
        .map_err(|e| ImageError::Engine {
            message: format!("{e:#}"),
        })?;
    if packages.is_empty() {
        return Ok(base);
    }
    ensure(docker, &base, packages, options, progress).await
}
