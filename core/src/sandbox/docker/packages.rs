//! An image's Python packages read through the engine: from the cache by the
//! image's id, else from a short-lived sandbox of the image (see `sandbox::packages`).
//!
//! ```no_run
//! # async fn f(docker: &bollard::Docker) -> Result<(), sandalyst::sandbox::packages::PackagesError> {
//! use sandalyst::sandbox::{docker, packages};
//! let env = docker::packages::for_image(docker, "sandalyst-sandbox:0123456789ab").await?;
//! println!("{}", packages::describe(&env));
//! # Ok(()) }
//! ```

use bollard::Docker;

use super::DockerSandbox;
use crate::sandbox::packages::{cached, PackagesError, PythonEnv};
use crate::sandbox::{Sandbox, SandboxConfig};

/// The id of an image the engine holds.
pub(super) async fn image_id(docker: &Docker, image: &str) -> Result<String, PackagesError> {
    docker
        .inspect_image(image)
        .await
        .map_err(|e| PackagesError::Failed(format!("cannot inspect {image}: {e}")))?
        .id
        .ok_or_else(|| PackagesError::Failed(format!("the engine gave no id for {image}")))
}

/// The packages of `image`, from the cache or from a short-lived sandbox of it (the
/// same container settings as a run, no network, no inputs).
pub async fn for_image(docker: &Docker, image: &str) -> Result<PythonEnv, PackagesError> {
    let id = image_id(docker, image).await?;
    if let Some(env) = cached(&id).await {
        return Ok(env);
    }
    let config = SandboxConfig {
        image: image.to_string(),
        ..SandboxConfig::default()
    };
    let run_id = format!("packages-{:016x}", rand::random::<u64>());
    let sandbox = DockerSandbox::start(
        docker,
        &run_id,
        &config,
        &crate::workspace::Manifest::default(),
    )
    .await
    .map_err(|e| PackagesError::Failed(format!("cannot start a sandbox of {image}: {e:#}")))?;
    // The sandbox caches what it read under the image id.
    let env = sandbox.python_env().await;
    let _ = sandbox.close().await;
    env
}
