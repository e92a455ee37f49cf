//! Which container engine answers, and what it can guarantee.
//!
//! The engine is found the way the docker CLI finds it: `DOCKER_HOST` when set;
//! otherwise the context of `DOCKER_CONTEXT` or of the CLI's `currentContext` (see
//! `contexts`); otherwise the default sockets: Docker's, Docker Desktop's, Colima's,
//! Rancher Desktop's, then Podman's rootful and rootless ones (on Windows, the engines'
//! default named pipes): [`candidates`]. An engine chosen by `DOCKER_HOST` or a context
//! is the only one tried, as with `docker`. Where it came from is an [`EngineSource`],
//! shown on the engine line. Once connected, the engine is described as an
//! [`EngineInfo`]: its kind (Docker Engine, Docker Desktop, Podman, Colima, Rancher
//! Desktop, a remote engine) and which of the sandbox's guarantees it cannot give, so a
//! run can refuse (or warn) before any code runs instead of silently losing a limit.
//! Connecting and asking are the Docker backend's (`docker::engine`).

use serde::{Deserialize, Serialize};

use super::contexts::{self, Chosen, ContextError, Lookup, TlsFiles};
use super::Isolation;

/// The oldest Engine API the sandbox was written against (Docker 20.10, Podman 4).
pub const MIN_API: (u32, u32) = (1, 40);

/// Where the engine in use came from, as the engine line and the `setup` event say.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EngineSource {
    /// The `DOCKER_HOST` variable.
    DockerHost { host: String },
    /// A docker CLI context (`DOCKER_CONTEXT` or the CLI's `currentContext`).
    Context { name: String, host: String },
    /// One of the default sockets, found by looking.
    DefaultSocket { host: String },
}

impl EngineSource {
    /// The endpoint: `unix:///...`, `tcp://...`, `ssh://...`.
    pub fn host(&self) -> &str {
        match self {
            EngineSource::DockerHost { host }
            | EngineSource::Context { host, .. }
            | EngineSource::DefaultSocket { host } => host,
        }
    }

    /// Chosen by the user (`DOCKER_HOST`, a context): tried alone, never passed over.
    pub fn is_chosen(&self) -> bool {
        !matches!(self, EngineSource::DefaultSocket { .. })
    }
}

impl std::fmt::Display for EngineSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineSource::DockerHost { host } => write!(f, "DOCKER_HOST={host}"),
            EngineSource::Context { name, host } => write!(f, "context {name}: {host}"),
            EngineSource::DefaultSocket { host } => f.write_str(host),
        }
    }
}

/// A place an engine may be, with the TLS material a context gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub source: EngineSource,
    pub tls: Option<TlsFiles>,
}

/// Where an engine may be, in the order it is looked for, from this process's
/// environment and the docker CLI's files (blocking reads: call it off the runtime).
pub fn candidates() -> Result<Vec<Candidate>, ContextError> {
    candidates_for(&Lookup::from_env())
}

/// [`candidates`] for a given environment.
pub fn candidates_for(lookup: &Lookup) -> Result<Vec<Candidate>, ContextError> {
    Ok(match contexts::choose(lookup)? {
        Chosen::DockerHost(host) => vec![Candidate {
            source: EngineSource::DockerHost { host },
            tls: None,
        }],
        Chosen::Context(c) => vec![Candidate {
            source: EngineSource::Context {
                name: c.name,
                host: c.host,
            },
            tls: c.tls,
        }],
        Chosen::Default => local_candidates()
            .into_iter()
            .map(|host| Candidate {
                source: EngineSource::DefaultSocket { host },
                tls: None,
            })
            .collect(),
    })
}

/// The default sockets, Docker's own first (what `docker` itself would use).
#[cfg(unix)]
fn local_candidates() -> Vec<String> {
    let mut c = vec!["unix:///var/run/docker.sock".to_string()];
    if let Some(home) = dirs::home_dir() {
        let home = home.display();
        c.push(format!("unix://{home}/.docker/desktop/docker.sock"));
        c.push(format!("unix://{home}/.colima/default/docker.sock"));
        c.push(format!("unix://{home}/.colima/docker.sock"));
        c.push(format!("unix://{home}/.rd/docker.sock"));
    }
    c.push("unix:///run/podman/podman.sock".to_string());
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
    pub source: EngineSource,
    /// The engine is not on this machine (TCP or SSH).
    pub remote: bool,
    /// Guarantees this engine cannot give, as sentences (empty when all hold).
    pub missing: Vec<String>,
    /// The container runtimes registered with it (`runc`, `runsc`, ...).
    pub runtimes: Vec<String>,
}

impl EngineInfo {
    /// The isolation in force for a sandbox that asked for `asked`: gVisor when
    /// asked, and for `auto` wherever the engine has `runsc` registered and the
    /// sandbox is offline (runsc is registered with `--network=none`, see
    /// `scripts/setup.sh --gvisor`, so a sandbox with network runs under runc); asking
    /// for gVisor where it cannot be had is refused, not downgraded.
    pub fn isolation(&self, asked: Isolation, network: bool) -> Result<Isolation, String> {
        let runsc = self.runtimes.iter().any(|r| r == "runsc");
        match (asked, network) {
            (Isolation::Auto, false) if runsc => Ok(Isolation::Gvisor),
            (Isolation::Runc | Isolation::Auto, _) => Ok(Isolation::Runc),
            (Isolation::Gvisor, true) => Err("gVisor runs the sandbox without network here (runsc is registered with --network=none, and it does not pass the allowlist proxy's socket through); use --isolation runc for a sandbox with network (full or allow:)".into()),
            (Isolation::Gvisor, false) if runsc => Ok(Isolation::Gvisor),
            (Isolation::Gvisor, false) => Err("gVisor was asked for (--isolation gvisor), but this engine has no runsc runtime registered; `scripts/setup.sh --gvisor` installs and registers it, or use --isolation runc".into()),
        }
    }

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
    /// `4.3.1 (API 1.41; rootful; cgroup v1; unix:///run/podman/podman.sock)`, or
    /// `... (API 1.41; cgroup v1; context colima: unix:///...)`.
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
        parts.push(self.source.to_string());
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

pub(crate) fn parse_api(v: &str) -> Option<(u32, u32)> {
    let (a, b) = v.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
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

    #[test]
    fn gvisor_is_used_when_registered_and_offline_unless_runc_is_asked() {
        let engine = |runtimes: &[&str]| EngineInfo {
            kind: EngineKind::DockerEngine,
            version: "20.10".into(),
            api_version: "1.41".into(),
            rootless: false,
            cgroup_version: "1".into(),
            source: EngineSource::DefaultSocket {
                host: "unix:///var/run/docker.sock".into(),
            },
            remote: false,
            missing: Vec::new(),
            runtimes: runtimes.iter().map(|r| r.to_string()).collect(),
        };
        let with = engine(&["runc", "runsc"]);
        assert_eq!(
            with.isolation(Isolation::Gvisor, false),
            Ok(Isolation::Gvisor)
        );
        assert_eq!(
            with.isolation(Isolation::Auto, false),
            Ok(Isolation::Gvisor)
        );
        assert_eq!(with.isolation(Isolation::Auto, true), Ok(Isolation::Runc));
        assert_eq!(with.isolation(Isolation::Runc, false), Ok(Isolation::Runc));
        assert!(with
            .isolation(Isolation::Gvisor, true)
            .unwrap_err()
            .contains("without network"));
        let without = engine(&["runc"]);
        assert!(without
            .isolation(Isolation::Gvisor, false)
            .unwrap_err()
            .contains("setup.sh --gvisor"));
        assert_eq!(
            without.isolation(Isolation::Auto, true),
            Ok(Isolation::Runc)
        );
    }
}
