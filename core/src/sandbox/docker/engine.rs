//! The engine through the Engine API (`bollard`): connecting to the first that
//! answers (in the order of [`candidates`]: `DOCKER_HOST`, a docker CLI context, the
//! default sockets) over a unix socket, TCP (with a context's TLS material) or SSH
//! (`ssh`), and asking it what it is, as an [`EngineInfo`] (see `sandbox::engine`).

use std::sync::Mutex;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use bollard::{Docker, API_DEFAULT_VERSION};

use super::ssh;
use crate::sandbox::engine::{
    candidates, parse_api, Candidate, EngineInfo, EngineKind, EngineSource, MIN_API,
};

/// bollard's default request timeout, for the clients made here with explicit settings.
const TIMEOUT_SECS: u64 = 120;

/// Where this process last connected. bollard's client does not say where it goes,
/// and every client of this process comes from [`connect`]; the sandbox reads it to
/// decide whether bind mounts can work (`start::engine_allows_binds`).
static CONNECTED: Mutex<Option<EngineSource>> = Mutex::new(None);

/// Where [`connect`] last found an engine in this process.
pub fn connected_source() -> Option<EngineSource> {
    CONNECTED.lock().ok().and_then(|s| s.clone())
}

/// A local socket path that does not exist (not worth a connection attempt).
fn missing_socket(place: &str) -> bool {
    match place.strip_prefix("unix://") {
        Some(path) => !std::path::Path::new(path).exists(),
        None => false,
    }
}

/// A client for one candidate (no request made yet), and ssh's error output when it
/// goes over ssh.
fn client_for(c: &Candidate) -> anyhow::Result<(Docker, Option<ssh::SshStderr>)> {
    let host = c.source.host();
    if host.starts_with("ssh://") {
        let (d, err) = ssh::connect(host).map_err(|e| anyhow!(e))?;
        return Ok((d, Some(err)));
    }
    let docker = match (&c.tls, &c.source) {
        (Some(tls), _) => Docker::connect_with_ssl(
            host,
            &tls.key,
            &tls.cert,
            &tls.ca,
            TIMEOUT_SECS,
            API_DEFAULT_VERSION,
        )?,
        // A context without TLS material is plain TCP, whatever DOCKER_TLS_VERIFY says
        // (the CLI reads those variables only with DOCKER_HOST).
        (None, EngineSource::Context { .. }) if host.starts_with("tcp://") => {
            Docker::connect_with_http(host, TIMEOUT_SECS, API_DEFAULT_VERSION)?
        }
        _ => Docker::connect_with_host(host)?,
    };
    Ok((docker, None))
}

/// Connect to the first engine that answers, in the order of [`candidates`]. An
/// engine chosen by `DOCKER_HOST` or a context is the only one tried. Returns the
/// client and where it came from.
pub async fn connect() -> anyhow::Result<(Docker, EngineSource)> {
    // The docker CLI's files are read off the runtime.
    let places = tokio::task::spawn_blocking(candidates)
        .await
        .context("looking for the engine")??;
    let mut tried = Vec::new();
    for c in &places {
        let shown = c.source.to_string();
        let chosen = c.source.is_chosen();
        let fix = match &c.source {
            EngineSource::Context { .. } => {
                "start the engine, or choose another with `docker context use` (or DOCKER_CONTEXT)"
            }
            _ => "start the engine or point DOCKER_HOST at a running one",
        };
        if !chosen && missing_socket(c.source.host()) {
            tried.push(format!("{shown} (no socket)"));
            continue;
        }
        let (docker, ssh_err) = match client_for(c) {
            Ok(d) => d,
            Err(e) if chosen => {
                return Err(e).with_context(|| format!("cannot use the Docker engine at {shown}"))
            }
            Err(e) => {
                tried.push(format!("{shown} ({e})"));
                continue;
            }
        };
        // ssh's own words, once its error output has been read (a chosen ssh engine).
        let said = || async {
            match &ssh_err {
                Some(s) => match s.last(Duration::from_secs(2)).await {
                    t if t.is_empty() => String::new(),
                    t => format!("; ssh said: {t}"),
                },
                None => String::new(),
            }
        };
        match tokio::time::timeout(Duration::from_secs(10), docker.ping()).await {
            Ok(Ok(_)) => {
                if let Ok(mut s) = CONNECTED.lock() {
                    *s = Some(c.source.clone());
                }
                return Ok((docker, c.source.clone()));
            }
            Ok(Err(e)) if chosen => bail!(
                "no Docker engine answered at {shown} ({e}{}); {fix}",
                said().await
            ),
            Err(_) if chosen => bail!(
                "the Docker engine at {shown} did not answer within 10 s{}",
                said().await
            ),
            Ok(Err(e)) => tried.push(format!("{shown} ({e})")),
            Err(_) => tried.push(format!("{shown} (no answer within 10 s)")),
        }
    }
    bail!(
        "no container engine answered; tried {}. Start Docker (e.g. `systemctl start docker`) or Podman's API service (`podman system service --time=0 &`, or `systemctl --user start podman.socket`), or point DOCKER_HOST at a running engine (or a docker context at it: `docker context use NAME`)",
        tried.join(", ")
    )
}

/// Ask the engine what it is. `source` is where [`connect`] found it.
pub async fn describe(docker: &Docker, source: &EngineSource) -> anyhow::Result<EngineInfo> {
    let place = source.host();
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
        source: source.clone(),
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
