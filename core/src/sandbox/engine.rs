//! Which container engine answers, and what it can guarantee.
//!
//! The engine is found the way users expect: `DOCKER_HOST` when set; otherwise the
//! Docker socket, then Podman's rootful socket, then Podman's rootless socket (on
//! Windows, bollard's default named pipe). Once connected, [`describe`] names it
//! (Docker Engine, Docker Desktop, Podman, Colima, Rancher Desktop, a remote engine)
//! and says which of the sandbox's guarantees it cannot give, so a run can refuse (or
//! warn) before any code runs instead of silently losing a limit.

use std::time::Duration;

use anyhow::{bail, Context};
use bollard::Docker;

/// The oldest Engine API the sandbox was written against (Docker 20.10, Podman 4).
pub const MIN_API: (u32, u32) = (1, 40);

/// Where an engine may be, in the order it is looked for.
pub fn candidates() -> Vec<String> {
    if let Ok(h) = std::env::var("DOCKER_HOST") {
        if !h.is_empty() {
            return vec![h];
        }
    }
    local_candidates()
}

#[cfg(unix)]
fn local_candidates() -> Vec<String> {
    let mut c = vec![
        "unix:///var/run/docker.sock".to_string(),
        "unix:///run/podman/podman.sock".to_string(),
    ];
    if let Ok(dir) = std::env::var("XDG_RUNTIME_DIR") {
        if !dir.is_empty() {
            c.push(format!("unix://{dir}/podman/podman.sock"));
        }
    }
    c
}

#[cfg(windows)]
fn local_candidates() -> Vec<String> {
    vec![
        "npipe:////./pipe/docker_engine".to_string(),
        "npipe:////./pipe/podman-machine-default".to_string(),
    ]
}

#[cfg(not(any(unix, windows)))]
fn local_candidates() -> Vec<String> {
    Vec::new()
}

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

/// What kind of engine answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineKind {
    DockerEngine,
    DockerDesktop,
    Podman,
    Colima,
    RancherDesktop,
    Other(String),
}

/// The engine as the sandbox sees it.
#[derive(Clone, Debug)]
pub struct EngineInfo {
    pub kind: EngineKind,
    /// The engine's own version (e.g. `4.3.1`, `20.10.24`).
    pub version: String,
    /// The Engine API version it speaks (e.g. `1.41`).
    pub api_version: String,
    pub rootless: bool,
    /// `1`, `2`, or empty when the engine does not say.
    pub cgroup_version: String,
    /// Where it was found.
    pub place: String,
    /// The engine is not on this machine (TCP or SSH).
    pub remote: bool,
    /// Guarantees this engine cannot give, as sentences (empty when all hold).
    pub missing: Vec<String>,
}

impl EngineInfo {
    pub fn name(&self) -> String {
        match &self.kind {
            EngineKind::DockerEngine => "Docker Engine".into(),
            EngineKind::DockerDesktop => "Docker Desktop".into(),
            EngineKind::Podman => "Podman".into(),
            EngineKind::Colima => "Colima (Docker Engine)".into(),
            EngineKind::RancherDesktop => "Rancher Desktop".into(),
            EngineKind::Other(n) => n.clone(),
        }
    }

    /// The engine's version and what matters about it, for the one line at start:
    /// `4.3.1 (API 1.41; rootful; cgroup v1; unix:///run/podman/podman.sock)`.
    pub fn details(&self) -> String {
        let mut parts = vec![format!("API {}", self.api_version)];
        if self.kind == EngineKind::Podman || self.rootless {
            parts.push(if self.rootless { "rootless" } else { "rootful" }.into());
        }
        if !self.cgroup_version.is_empty() {
            parts.push(format!("cgroup v{}", self.cgroup_version));
        }
        if self.remote {
            parts.push("remote".into());
        }
        parts.push(self.place.clone());
        format!("{} ({})", self.version, parts.join("; "))
    }

    /// Memory and process limits cannot be enforced by this engine.
    pub fn limits_unenforced(&self) -> bool {
        !self.missing.is_empty()
    }

    pub fn is_podman(&self) -> bool {
        self.kind == EngineKind::Podman
    }
}

fn parse_api(v: &str) -> Option<(u32, u32)> {
    let (a, b) = v.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_versions_compare() {
        assert!(parse_api("1.41").unwrap() >= MIN_API);
        assert!(parse_api("1.39").unwrap() < MIN_API);
        assert_eq!(parse_api("x"), None);
    }
}
