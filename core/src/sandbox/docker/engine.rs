//! The engine through the Engine API (`bollard`): connecting to the first that
//! answers (in the order of [`candidates`]) and asking it what it is, as an
//! [`EngineInfo`] (see `sandbox::engine`).

use std::time::Duration;

use anyhow::{bail, Context};
use bollard::Docker;

use crate::sandbox::engine::{candidates, parse_api, EngineInfo, EngineKind, MIN_API};

/// A local socket path that does not exist (not worth a connection attempt).
fn missing_socket(place: &str) -> bool {
    match place.strip_prefix("unix://") {
        Some(path) => !std::path::Path::new(path).exists(),
        None => false,
    }
}

/// Connect to the first engine that answers, in the order of [`candidates`].
/// Returns the client and where it was found (`unix:///...`, `tcp://...`).
pub async fn connect() -> anyhow::Result<(Docker, String)> {
    let from_env = matches!(std::env::var("DOCKER_HOST"), Ok(h) if !h.is_empty());
    let places = candidates();
    let mut tried = Vec::new();
    for place in &places {
        let shown = if from_env {
            format!("DOCKER_HOST={place}")
        } else {
            place.clone()
        };
        if !from_env && missing_socket(place) {
            tried.push(format!("{shown} (no socket)"));
            continue;
        }
        let docker = match Docker::connect_with_host(place) {
            Ok(d) => d,
            Err(e) if from_env => {
                return Err(e).with_context(|| format!("cannot use the Docker engine at {shown}"))
            }
            Err(e) => {
                tried.push(format!("{shown} ({e})"));
                continue;
            }
        };
        match tokio::time::timeout(Duration::from_secs(10), docker.ping()).await {
            Ok(Ok(_)) => return Ok((docker, place.clone())),
            Ok(Err(e)) if from_env => bail!(
                "no Docker engine answered at {shown} ({e}); start the engine or point DOCKER_HOST at a running one"
            ),
            Err(_) if from_env => bail!("the Docker engine at {shown} did not answer within 10 s"),
            Ok(Err(e)) => tried.push(format!("{shown} ({e})")),
            Err(_) => tried.push(format!("{shown} (no answer within 10 s)")),
        }
    }
    bail!(
        "no container engine answered; tried {}. Start Docker (e.g. `systemctl start docker`) or Podman's API service (`podman system service --time=0 &`, or `systemctl --user start podman.socket`), or point DOCKER_HOST at a running engine",
        tried.join(", ")
    )
}

/// Ask the engine what it is. `place` is where [`connect`] found it.
pub async fn describe(docker: &Docker, place: &str) -> anyhow::Result<EngineInfo> {
    let version = docker
        .version()
        .await
        .context("asking the engine for its version")?;
    let info = docker
        .info()
        .await
        .context("asking the engine for its settings")?;
    let components: Vec<String> = version
        .components
        .iter()
        .flatten()
        .map(|c| c.name.to_lowercase())
        .collect();
    let platform = version
        .platform
        .as_ref()
        .map(|p| p.name.to_lowercase())
        .unwrap_or_default();
    let host_name = info.name.clone().unwrap_or_default().to_lowercase();
    let os = info
        .operating_system
        .clone()
        .unwrap_or_default()
        .to_lowercase();
    let kind = if components.iter().any(|c| c.contains("podman")) {
        EngineKind::Podman
    } else if platform.contains("docker desktop") || os.contains("docker desktop") {
        EngineKind::DockerDesktop
    } else if host_name.contains("rancher-desktop") {
        EngineKind::RancherDesktop
    } else if host_name.starts_with("colima") || host_name.starts_with("lima-colima") {
        EngineKind::Colima
    } else if platform.is_empty() || platform.contains("docker engine") {
        EngineKind::DockerEngine
    } else {
        EngineKind::Other(
            version
                .platform
                .as_ref()
                .map(|p| p.name.clone())
                .unwrap_or_default(),
        )
    };
    let security = info.security_options.clone().unwrap_or_default();
    // Docker names rootless mode in its security options; Podman does not, but adds
    // its own `Rootless` field to /info (which bollard's model drops), and keeps a
    // rootless store under the user's home.
    let rootless = security.iter().any(|s| s.contains("name=rootless"))
        || (kind == EngineKind::Podman
            && match podman_rootless_field(place).await {
                Some(r) => r,
                None => info
                    .docker_root_dir
                    .as_deref()
                    .is_some_and(|d| d.contains("/.local/share/containers")),
            });
    let cgroup_version = info
        .cgroup_version
        .map(|v| v.to_string())
        .unwrap_or_default();
    let api_version = version.api_version.clone().unwrap_or_default();
    if let Some(api) = parse_api(&api_version) {
        if api < MIN_API {
            bail!(
                "the engine at {place} speaks Engine API {api_version}, older than the {}.{} Sandalyst needs; update Docker (20.10 or later) or Podman (4 or later)",
                MIN_API.0,
                MIN_API.1
            );
        }
    }
    let mut missing = Vec::new();
    if rootless && cgroup_version == "1" {
        missing.push(
            "memory, CPU and process limits cannot be enforced: a rootless engine on a cgroup v1 host ignores them (switch the host to cgroup v2, or use a rootful engine)"
                .to_string(),
        );
    } else {
        if info.memory_limit == Some(false) {
            missing.push("the engine reports that it cannot enforce memory limits".into());
        }
        if info.pids_limit == Some(false) {
            missing.push("the engine reports that it cannot enforce process limits".into());
        }
    }
    let remote = place.starts_with("tcp://")
        || place.starts_with("ssh://")
        || place.starts_with("http://")
        || place.starts_with("https://");
    Ok(EngineInfo {
        kind,
        version: version.version.unwrap_or_default(),
        api_version,
        rootless,
        cgroup_version,
        place: place.to_string(),
        remote,
        missing,
        runtimes: info
            .runtimes
            .map(|r| r.into_keys().collect())
            .unwrap_or_default(),
    })
}

/// Podman's `Rootless` field of `/info`, read with a plain HTTP request over a local
/// socket (bollard's model has no such field). None when it cannot be asked.
#[cfg(unix)]
async fn podman_rootless_field(place: &str) -> Option<bool> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let path = place.strip_prefix("unix://")?;
    let ask = async {
        let mut s = tokio::net::UnixStream::connect(path).await.ok()?;
        s.write_all(b"GET /v1.41/info HTTP/1.0\r\nHost: engine\r\n\r\n")
            .await
            .ok()?;
        let mut reply = Vec::new();
        // The whole reply is a few KiB; read at most 1 MiB of it.
        s.take(1 << 20).read_to_end(&mut reply).await.ok()?;
        let text = String::from_utf8_lossy(&reply);
        let (_, body) = text.split_once("\r\n\r\n")?;
        let v: serde_json::Value = serde_json::from_str(body).ok()?;
        v.get("Rootless")?.as_bool()
    };
    tokio::time::timeout(Duration::from_secs(10), ask)
        .await
        .ok()
        .flatten()
}

#[cfg(not(unix))]
async fn podman_rootless_field(_place: &str) -> Option<bool> {
    None
}

/// Whether the engine behind `docker` is Podman (asked once per call; a few ms).
pub async fn is_podman(docker: &Docker) -> bool {
    docker
        .version()
        .await
        .ok()
        .and_then(|v| v.components)
        .is_some_and(|c| c.iter().any(|c| c.name.to_lowercase().contains("podman")))
}
