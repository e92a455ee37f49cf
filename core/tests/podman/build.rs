//! A Podman-only machine gets the sandbox image: the offline recipe's root filesystem
//! is imported through a real Podman service whose store is empty (its own `--root`),
//! and the reference case then runs on it. Podman's Docker-compatible import ignores
//! the tag asked for (it names the image `sandalyst-sandbox:latest`); the build must
//! tag the result by its id.
//!
//! The root filesystem is the one the offline recipe built for Docker here (exported
//! from the Docker image, which scripts/test.sh builds): the mmdebstrap step does not
//! talk to the engine, the import does. Podman is installed by scripts/setup-podman.sh.

use crate::common;

use std::path::Path;

use crate::common::podman::*;
use futures_util::StreamExt;
use sandalyst::sandbox::docker::image as docker_image;
use sandalyst::sandbox::image;
use tokio::io::AsyncWriteExt;

/// Write the root filesystem of Docker's image `tag` to `dest` (`docker export`).
async fn export_rootfs(docker: &bollard::Docker, tag: &str, dest: &Path) {
    let name = format!("sandalyst-export-{:08x}", rand::random::<u32>());
    let opts = bollard::query_parameters::CreateContainerOptionsBuilder::new()
        .name(&name)
        .build();
    let body = bollard::models::ContainerCreateBody {
        image: Some(tag.to_string()),
        ..Default::default()
    };
    docker.create_container(Some(opts), body).await.unwrap();
    let mut stream = docker.export_container(&name);
    let mut file = tokio::fs::File::create(dest).await.unwrap();
    while let Some(chunk) = stream.next().await {
        file.write_all(&chunk.unwrap()).await.unwrap();
    }
    file.sync_all().await.unwrap();
    let rm = bollard::query_parameters::RemoveContainerOptionsBuilder::new()
        .force(true)
        .build();
    docker.remove_container(&name, Some(rm)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn podman_with_an_empty_store_builds_the_image_and_runs_the_reference_case() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    if !common::podman::installed_or_skip() {
        return;
    }
    let tag = common::image_tag(&docker).await;
    let t = std::time::Instant::now();
    let step = |what: &str| {
        eprintln!(
            "podman_build: {what} after {:.1} s",
            t.elapsed().as_secs_f64()
        )
    };
    let work = tempfile::tempdir().unwrap();
    let rootfs = work.path().join("rootfs.tar");
    export_rootfs(&docker, &tag, &rootfs).await;

    step("exported");
    // The same import on the Docker Engine (settings applied by the import itself),
    // under a probe tag of its own; a root filesystem of one file is enough to see the
    // tag and the settings.
    let probe = format!("sandalyst-import-probe:{:08x}", rand::random::<u32>());
    let quiet = |_: &str| {};
    let small = work.path().join("small.tar");
    small_rootfs(&small);
    let id = docker_image::import_offline_rootfs(&docker, &small, &probe, &quiet)
        .await
        .unwrap();
    check_image(&docker, &probe, &id).await;
    let rm = bollard::query_parameters::RemoveImageOptionsBuilder::new().build();
    docker.remove_image(&probe, Some(rm), None).await.unwrap();

    step("imported into Docker");
    // Rootless Podman with an empty store of its own gets its tag and settings too.
    let rootless = tokio::task::spawn_blocking(|| start_rootless_empty("sandalyst-rootless"))
        .await
        .unwrap();
    let client = podman_client(&rootless).await;
    let id = docker_image::import_offline_rootfs(&client, &small, &tag, &quiet)
        .await
        .unwrap();
    check_image(&client, &tag, &id).await;
    drop(rootless);
    step("imported into rootless Podman");

    let service = tokio::task::spawn_blocking(start_rootful_empty)
        .await
        .unwrap();
    let podman = podman_client(&service).await;
    let before = podman
        .list_images(None::<bollard::query_parameters::ListImagesOptions>)
        .await
        .unwrap();
    assert!(
        before.is_empty(),
        "the store should start empty: {before:?}"
    );

    let said = std::sync::Mutex::new(Vec::<String>::new());
    let progress = |line: &str| said.lock().unwrap().push(line.to_string());
    let id = docker_image::import_offline_rootfs(&podman, &rootfs, &tag, &progress)
        .await
        .unwrap_or_else(|e| panic!("{e:#}\n{:?}", said.lock().unwrap()));
    check_image(&podman, &tag, &id).await;
    step("imported into rootful Podman");
    // What `sandalyst image status` reads: the image is there for this engine.
    let status = docker_image::status(&podman).await.unwrap();
    assert!(status.present, "{status:?}");

    let host = service.host();
    let stderr = tokio::task::spawn_blocking(move || reference_case(&host, &[]))
        .await
        .unwrap();
    assert!(stderr.contains("engine: Podman 4."), "{stderr}");
    step("reference case on rootful Podman");
    drop(service);
}

/// A root filesystem tar of one file.
fn small_rootfs(dest: &Path) {
    let mut tar = tar::Builder::new(std::fs::File::create(dest).unwrap());
    let mut header = tar::Header::new_gnu();
    header.set_size(3);
    header.set_mode(0o644);
    tar.append_data(&mut header, "etc/probe", &b"hi\n"[..])
        .unwrap();
    tar.into_inner().unwrap().sync_all().unwrap();
}

/// `tag` names image `id`, with the recipe's labels and user, and no stray `latest`.
async fn check_image(engine: &bollard::Docker, tag: &str, id: &str) {
    let made = engine.inspect_image(tag).await.unwrap();
    assert_eq!(made.id.as_deref(), Some(id));
    let labels = made.config.as_ref().and_then(|c| c.labels.clone()).unwrap();
    assert_eq!(
        labels.get(image::LABEL_RECIPE),
        Some(&image::recipe_hash()),
        "{labels:?}"
    );
    let user = made.config.as_ref().and_then(|c| c.user.clone());
    assert_eq!(user.as_deref(), Some(image::USER));
    let repo = tag.split(':').next().unwrap();
    let stray = engine.inspect_image(&format!("{repo}:latest")).await;
    assert!(stray.is_err(), "a stray latest tag is left: {stray:?}");
}
