//! The sandbox image through the Engine API (`bollard`): whether the engine has it,
//! building it (`docker build` of the embedded recipe, or the offline root filesystem
//! imported), and removing older ones. The recipe, its tag and the build methods are
//! `sandbox::image`'s.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use bollard::query_parameters::{
    BuildImageOptionsBuilder, CreateImageOptionsBuilder, ListImagesOptionsBuilder,
    RemoveImageOptionsBuilder,
};
use bollard::Docker;
use futures_util::StreamExt;

use crate::sandbox::engine::EngineSource;
use crate::sandbox::image::{
    self, choose, context_tar, default_tag, dockerfile_tar, find_on_path, lock_builds, recipe_hash,
    BuildMethod, ImageStatus, BASE_IMAGE, LABEL_METHOD, LABEL_RECIPE, REPO,
};

/// Inspect the image; `Ok(None)` when the engine does not have it.
async fn inspect(docker: &Docker, name: &str) -> Result<Option<bollard::models::ImageInspect>> {
    match docker.inspect_image(name).await {
        Ok(info) => Ok(Some(info)),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(None),
        Err(e) => Err(engine_error(e)),
    }
}

fn engine_error(e: bollard::errors::Error) -> anyhow::Error {
    anyhow!("the Docker engine did not answer as expected ({e}); check that Docker is running and DOCKER_HOST is right")
}

/// Whether the image of this recipe is present, and which older ones are.
pub async fn status(docker: &Docker) -> Result<ImageStatus> {
    let tag = default_tag();
    let info = inspect(docker, &tag).await?;
    let filters = HashMap::from([("reference", vec![REPO])]);
    let images = docker
        .list_images(Some(
            ListImagesOptionsBuilder::new().filters(&filters).build(),
        ))
        .await
        .map_err(engine_error)?;
    let prefix = format!("{REPO}:");
    let mut stale_tags: Vec<String> = images
        .iter()
        .flat_map(|i| i.repo_tags.iter())
        .filter(|t| t.starts_with(&prefix) && **t != tag)
        .cloned()
        .collect();
    stale_tags.sort();
    stale_tags.dedup();
    Ok(ImageStatus {
        tag,
        present: info.is_some(),
        id: info.as_ref().and_then(|i| i.id.clone()),
        size_bytes: info.as_ref().and_then(|i| i.size),
        created: info
            .as_ref()
            .and_then(|i| i.created.as_ref())
            .map(|d| d.to_string()),
        stale_tags,
    })
}

/// Remove the images of older recipes (the [`ImageStatus::stale_tags`]); returns them.
/// An image still used by a container is left alone.
pub async fn remove_stale(docker: &Docker) -> Result<Vec<String>> {
    let mut removed = Vec::new();
    for tag in status(docker).await?.stale_tags {
        let opts = RemoveImageOptionsBuilder::new().build();
        if docker.remove_image(&tag, Some(opts), None).await.is_ok() {
            removed.push(tag);
        }
    }
    Ok(removed)
}

/// The tag of the sandbox image, built (with [`BuildMethod::Auto`]) only if missing.
pub async fn ensure(docker: &Docker, progress: &(dyn Fn(&str) + Send + Sync)) -> Result<String> {
    let tag = default_tag();
    if inspect(docker, &tag).await?.is_some() {
        return Ok(tag);
    }
    progress(&format!("sandbox image {tag} is missing: building it"));
    build_inner(docker, BuildMethod::Auto, progress, true).await
}

/// Build the sandbox image and tag it [`default_tag`]; returns the tag. Rebuilds even
/// if the tag is present (the image it replaces is removed when no container uses it).
pub async fn build(
    docker: &Docker,
    method: BuildMethod,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<String> {
    build_inner(docker, method, progress, false).await
}

async fn build_inner(
    docker: &Docker,
    method: BuildMethod,
    progress: &(dyn Fn(&str) + Send + Sync),
    only_if_missing: bool,
) -> Result<String> {
    // One build at a time on this machine (the desktop app and the CLI may both try).
    let _lock = lock_builds(progress).await?;
    let tag = default_tag();
    let previous = inspect(docker, &tag).await?.and_then(|i| i.id);
    if only_if_missing && previous.is_some() {
        return Ok(tag); // built by whoever held the lock
    }
    let method = match method {
        BuildMethod::Auto => choose_method(docker).await?,
        m => m,
    };
    let started = Instant::now();
    match method {
        BuildMethod::Offline => build_offline(docker, &tag, progress).await?,
        BuildMethod::Dockerfile => build_dockerfile(docker, &tag, progress).await?,
        BuildMethod::Auto => unreachable!("resolved above"),
    }
    let Some(built) = inspect(docker, &tag).await? else {
        let source = super::engine::connected_source().unwrap_or(EngineSource::DefaultSocket {
            host: String::new(),
        });
        let engine = super::engine::describe(docker, &source)
            .await
            .map(|e| format!("{} {}", e.name(), e.version))
            .unwrap_or_else(|_| "the engine".into());
        bail!("the build finished but {engine} has no image {tag}; run `sandalyst image build` again and check {engine}'s log");
    };
    if let (Some(old), Some(new)) = (previous, built.id) {
        if old != new {
            // The tag moved: drop the now untagged image, unless a container uses it.
            let opts = RemoveImageOptionsBuilder::new().build();
            let _ = docker.remove_image(&old, Some(opts), None).await;
        }
    }
    progress(&format!(
        "sandbox image {tag} ready in {:.0} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(tag)
}

/// Auto: decide from local facts only (never a registry round trip).
async fn choose_method(docker: &Docker) -> Result<BuildMethod> {
    let base_present = inspect(docker, BASE_IMAGE).await?.is_some();
    choose(base_present, find_on_path("mmdebstrap").is_some())
}

async fn build_dockerfile(
    docker: &Docker,
    tag: &str,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<()> {
    progress(&format!(
        "building {tag} from docker/Dockerfile ({BASE_IMAGE})"
    ));
    let labels = HashMap::from([
        (LABEL_RECIPE, recipe_hash()),
        (LABEL_METHOD, "dockerfile".to_string()),
    ]);
    build_context(docker, context_tar()?, tag, &labels, progress)
        .await
        .map_err(|why| {
            anyhow!(
                "building the sandbox image from docker/Dockerfile failed: {why}; \
                 a machine with no registry access should use the offline build (`sandalyst image build --offline`)"
            )
        })
}

/// `docker build` of an in-memory context tar (the classic builder, as on Docker
/// 20.10), progress line by line. The error is the engine's own message.
async fn build_context(
    docker: &Docker,
    context: Vec<u8>,
    tag: &str,
    labels: &HashMap<&str, String>,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> std::result::Result<(), String> {
    let opts = BuildImageOptionsBuilder::new()
        .dockerfile("Dockerfile")
        .t(tag)
        .rm(true)
        .forcerm(true)
        .labels(labels)
        .buildargs(&image::proxy_build_args(&|v| std::env::var(v).ok()))
        .build();
    let mut stream = docker.build_image(opts, None, Some(bollard::body_full(context.into())));
    while let Some(item) = stream.next().await {
        let info = match item {
            Ok(info) => info,
            Err(bollard::errors::Error::DockerStreamError { error }) => {
                return Err(error.trim().to_string())
            }
            Err(e) => return Err(e.to_string()),
        };
        if let Some(detail) = info.error_detail {
            return Err(detail.message.unwrap_or_default().trim().to_string());
        }
        for text in [info.stream, info.status].into_iter().flatten() {
            for line in text.lines().map(str::trim_end).filter(|l| !l.is_empty()) {
                progress(line);
            }
        }
    }
    Ok(())
}

async fn build_offline(
    docker: &Docker,
    tag: &str,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<()> {
    // 1. The root filesystem, with the script's output as progress.
    let rootfs = image::build_rootfs(tag, progress).await?;
    // 2. Import (`docker import`), the tar streamed from disk.
    import_offline_rootfs(docker, &rootfs.tar, tag, progress).await?;
    drop(rootfs); // the tar is no longer needed
    Ok(())
}

/// Import the offline recipe's root filesystem as `tag`, with the image settings and
/// labels of the recipe; returns the image id.
pub async fn import_offline_rootfs(
    docker: &Docker,
    rootfs: &Path,
    tag: &str,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<String> {
    import_rootfs(docker, rootfs, tag, image::offline_changes(), progress).await
}

/// Import a root filesystem tar as image `tag` (`docker import`, the tar streamed from
/// disk) and return the image id. The result is tagged by its id afterwards: Podman's
/// Docker-compatible import ignores the tag asked for and names the image
/// `REPO:latest`, so without that a Podman-only machine never gets the image.
async fn import_rootfs(
    docker: &Docker,
    rootfs: &Path,
    tag: &str,
    changes: Vec<String>,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<String> {
    let started = Instant::now();
    let (repo, version) = tag
        .rsplit_once(':')
        .with_context(|| format!("the image tag {tag:?} has no version"))?;
    let latest = format!("{repo}:latest");
    let latest_before = inspect(docker, &latest).await?.and_then(|i| i.id);
    let opts = CreateImageOptionsBuilder::new()
        .from_src("-")
        .repo(repo)
        .tag(version)
        .changes(changes.clone())
        .message("sandalyst offline build (docker/offline/build-rootfs.sh)")
        .build();
    let file = tokio::fs::File::open(rootfs)
        .await
        .with_context(|| format!("cannot read the root filesystem {}", rootfs.display()))?;
    let body = bollard::body_try_stream(tokio_util::io::ReaderStream::with_capacity(file, 1 << 20));
    let mut stream = docker.create_image(Some(opts), Some(body), None);
    // Docker and Podman both end the import with the new image's id as the status.
    let mut imported: Option<String> = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(info) => {
                if let Some(detail) = info.error_detail {
                    bail!(
                        "importing the sandbox root filesystem failed: {}",
                        detail.message.unwrap_or_default().trim()
                    );
                }
                let status = info.status.unwrap_or_default();
                let status = status.trim();
                let id = [info.id.as_deref().unwrap_or(""), status]
                    .into_iter()
                    .find(|s| s.starts_with("sha256:"))
                    .map(str::to_string);
                if id.is_some() {
                    imported = id;
                } else if !status.is_empty() {
                    progress(&format!("import: {status}"));
                }
            }
            Err(bollard::errors::Error::DockerStreamError { error }) => {
                bail!(
                    "importing the sandbox root filesystem failed: {}",
                    error.trim()
                )
            }
            Err(e) => bail!("importing the sandbox root filesystem into the engine failed: {e}"),
        }
    }
    let id = match imported {
        Some(id) => id,
        // An engine that did not say: the tag asked for, if it took it.
        None => inspect(docker, tag)
            .await?
            .and_then(|i| i.id)
            .with_context(|| {
                format!("the engine imported the root filesystem but named no image id and has no {tag}")
            })?,
    };
    let opts = bollard::query_parameters::TagImageOptionsBuilder::new()
        .repo(repo)
        .tag(version)
        .build();
    docker
        .tag_image(&id, Some(opts))
        .await
        .map_err(|e| anyhow!("tagging the imported image {id} as {tag} failed: {e}"))?;
    // Podman 4 reads only the first of the import's settings (bollard sends them as
    // one newline-joined value; Podman wants one parameter each): where they did not
    // all take, a build with only those instructions (no RUN, no pull) adds them.
    let made = inspect(docker, &id).await?;
    if !made.as_ref().is_some_and(|m| settings_applied(&changes, m)) {
        progress(
            "the engine did not apply the image settings on import: adding them with a build step",
        );
        let dockerfile = format!("FROM {id}\n{}\n", changes.join("\n"));
        build_context(
            docker,
            dockerfile_tar(&dockerfile)?,
            tag,
            &HashMap::new(),
            progress,
        )
        .await
        .map_err(|why| anyhow!("setting up the imported image {id} as {tag} failed: {why}"))?;
    }
    // The `latest` name Podman gave it on its own goes again (only if this import made it).
    let latest_now = inspect(docker, &latest).await?.and_then(|i| i.id);
    if latest_before.is_none() && latest_now.as_deref() == Some(id.as_str()) {
        let opts = RemoveImageOptionsBuilder::new().noprune(true).build();
        let _ = docker.remove_image(&latest, Some(opts), None).await;
    }
    progress(&format!(
        "imported in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    let id = inspect(docker, tag).await?.and_then(|i| i.id).unwrap_or(id);
    Ok(id)
}

/// The image shows the user and labels that `changes` set.
fn settings_applied(changes: &[String], image: &bollard::models::ImageInspect) -> bool {
    let config = image.config.as_ref();
    let labels = config.and_then(|c| c.labels.as_ref());
    changes.iter().all(|c| {
        if let Some(user) = c.strip_prefix("USER ") {
            config.and_then(|c| c.user.as_deref()) == Some(user)
        } else if let Some((k, v)) = c.strip_prefix("LABEL ").and_then(|l| l.split_once('=')) {
            labels.and_then(|l| l.get(k)).map(String::as_str) == Some(v)
        } else {
            true
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of the recipe, for a build context of the test's own.
    const PTH: &[u8] = include_bytes!("../../../../docker/python/sandalyst.pth");

    /// The `docker build` path against the real engine, with no registry: a derived
    /// image FROM the sandbox image, which the suite's set-up builds.
    #[tokio::test]
    async fn build_context_for_real() {
        // Skipped in one line where no engine answers, unless one is required (CI).
        let Ok(docker) = crate::sandbox::docker::connect().await else {
            let required = std::env::var("SANDALYST_REQUIRE_ENGINE");
            assert!(
                !required.is_ok_and(|v| !v.is_empty() && v != "0"),
                "no engine answers, and SANDALYST_REQUIRE_ENGINE is set"
            );
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "skipped build_context_for_real: no container engine answers"
            );
            return;
        };
        let base = default_tag();
        assert!(
            inspect(&docker, &base).await.unwrap().is_some(),
            "build {base} first"
        );
        let dockerfile = format!(
            "FROM {base}\nCOPY python/sandalyst.pth /tmp/probe.pth\nRUN python3 -c 'import sandalyst_site, numpy'\n"
        );
        let mut tar = tar::Builder::new(Vec::new());
        for (path, data) in [
            ("Dockerfile", dockerfile.as_bytes()),
            ("python/sandalyst.pth", PTH),
        ] {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            tar.append_data(&mut header, path, data).unwrap();
        }
        let labels = HashMap::from([(LABEL_METHOD, "test".to_string())]);
        // A tag of this process's own: another test run on the same engine builds and
        // removes its own probe.
        let tag = &format!("sandalyst-build-probe:test-{}", std::process::id());
        let lines = std::sync::Mutex::new(Vec::new());
        let progress = |l: &str| lines.lock().unwrap().push(l.to_string());
        build_context(&docker, tar.into_inner().unwrap(), tag, &labels, &progress)
            .await
            .unwrap();
        let seen = lines.lock().unwrap().clone();
        assert!(
            seen.iter()
                .any(|l| l == &format!("Successfully tagged {tag}")),
            "{seen:?}"
        );
        let info = inspect(&docker, tag).await.unwrap().unwrap();
        let got = info.config.and_then(|c| c.labels).unwrap_or_default();
        assert_eq!(got.get(LABEL_METHOD).map(String::as_str), Some("test"));

        // A failing step comes back as the engine's message.
        let mut tar = tar::Builder::new(Vec::new());
        let bad = format!("FROM {base}\nRUN exit 3\n");
        let mut header = tar::Header::new_gnu();
        header.set_size(bad.len() as u64);
        header.set_mode(0o644);
        tar.append_data(&mut header, "Dockerfile", bad.as_bytes())
            .unwrap();
        let err = build_context(
            &docker,
            tar.into_inner().unwrap(),
            tag,
            &labels,
            &|_: &str| {},
        )
        .await
        .unwrap_err();
        assert!(err.contains("returned a non-zero code: 3"), "{err}");
        let opts = RemoveImageOptionsBuilder::new().force(true).build();
        docker.remove_image(tag, Some(opts), None).await.unwrap();
    }

    /// Builds the image for real (about 3 to 5 minutes, needs root, Docker and mmdebstrap);
    /// ignored because the suite's set-up does exactly this before the tests run:
    /// `cargo test -p sandalyst --lib sandbox::docker::image::tests::build_offline_for_real -- --ignored --nocapture`
    #[tokio::test]
    #[ignore]
    async fn build_offline_for_real() {
        let docker = Docker::connect_with_local_defaults().unwrap();
        let t = Instant::now();
        let tag = build(&docker, BuildMethod::Offline, &|l: &str| eprintln!("{l}"))
            .await
            .unwrap();
        eprintln!("cold build: {:.1} s", t.elapsed().as_secs_f64());
        let t = Instant::now();
        assert_eq!(
            ensure(&docker, &|l: &str| eprintln!("{l}")).await.unwrap(),
            tag
        );
        eprintln!("warm ensure: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
        let st = status(&docker).await.unwrap();
        eprintln!("{st:?}");
        assert!(st.present);
    }
}
