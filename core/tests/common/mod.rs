//! Shared set-up for tests that use the real Docker daemon.
#![allow(dead_code)]

use std::path::PathBuf;

use bollard::Docker;
use sandalyst::sandbox::docker::{self, DockerSandbox};
use sandalyst::sandbox::{image, SandboxConfig};
use sandalyst::workspace::Manifest;

pub async fn engine() -> Docker {
    docker::connect()
        .await
        .expect("these tests need a running Docker daemon")
}

/// The sandbox image this build uses; it must have been built (scripts/test.sh does).
/// `SANDALYST_IMAGE` overrides it, as for the command line.
pub async fn image_tag(docker: &Docker) -> String {
    if let Ok(tag) = std::env::var("SANDALYST_IMAGE") {
        return tag;
    }
    let st = image::status(docker).await.unwrap();
    assert!(
        st.present,
        "image {} is missing: run `cargo run -- image build` (scripts/test.sh does it)",
        st.tag
    );
    st.tag
}

pub async fn config(docker: &Docker) -> SandboxConfig {
    SandboxConfig {
        image: image_tag(docker).await,
        memory_bytes: 1 << 30,
        ..SandboxConfig::default()
    }
}

pub fn run_id(name: &str) -> String {
    format!("test-{name}-{:08x}", rand::random::<u32>())
}

pub async fn sandbox(docker: &Docker, name: &str, inputs: &[PathBuf]) -> (DockerSandbox, String) {
    let id = run_id(name);
    let manifest = Manifest::from_paths(inputs).unwrap();
    let sb = DockerSandbox::start(docker, &id, &config(docker).await, &manifest)
        .await
        .unwrap();
    (sb, id)
}

/// How many containers carry this run's label.
pub async fn containers_labelled(docker: &Docker, run_id: &str) -> usize {
    docker::containers_of_run(docker, run_id)
        .await
        .unwrap()
        .len()
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The sessions of `store`'s folder, with sandboxes from the Docker engine.
pub fn sessions(store: &sandalyst::store::Store) -> sandalyst::session::Sessions {
    sandalyst::session::Sessions::new(
        store.root().to_path_buf(),
        std::sync::Arc::new(sandalyst::session::DockerFactory),
    )
    .unwrap()
}
