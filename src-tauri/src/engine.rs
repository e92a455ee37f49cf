//! The Docker engine and the sandbox image as the window shows them: is there an
//! engine, is the image there, build it with progress. All of it is the core's
//! (`sandbox::docker`, `sandbox::image`); this only shapes it for the page.

use sandalyst::sandbox::{docker, engine, image};
use serde::Serialize;

#[derive(Debug, Serialize)]
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

pub fn fix_for_this_os() -> String {
    if cfg!(target_os = "macos") {
        "Start Docker Desktop (or `colima start`), then press Retry.".into()
    } else if cfg!(windows) {
        "Start Docker Desktop, then press Retry.".into()
    } else {
        "Start the engine with `sudo systemctl start docker` (or install it with `sudo apt-get install docker.io`), or point DOCKER_HOST at a running engine, then press Retry.".into()
    }
}

pub async fn status() -> EngineStatus {
    let tag = image::default_tag();
    match engine::connect().await {
        Ok((d, place)) => {
            let img = image::status(&d).await.ok();
            let info = engine::describe(&d, &place).await.ok();
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

/// Build the image; `progress` gets each line of the build.
pub async fn build(progress: impl Fn(&str) + Send + Sync) -> anyhow::Result<String> {
    let d = docker::connect().await?;
    image::build(&d, image::BuildMethod::Auto, &progress).await
}
