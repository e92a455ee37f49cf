//! The docker CLI's contexts store, read the way `docker` reads it, so the app uses the
//! engine that `docker ps` uses on the same machine.
//!
//! Colima, Rancher Desktop, Docker Desktop and remote set-ups publish their engine as a
//! *context* (`docker context use colima`) rather than through `DOCKER_HOST`, which a
//! desktop app started from the dock does not inherit anyway. The choice is the CLI's:
//! `DOCKER_HOST` when set, else `DOCKER_CONTEXT`, else the `currentContext` of
//! `$DOCKER_CONFIG/config.json` (`~/.docker` by default), else the default engine. A
//! context lives in `contexts/meta/<sha256 of its name>/meta.json` (its endpoint) and
//! `contexts/tls/<sha256 of its name>/docker/{ca,cert,key}.pem` (its TLS material).
//!
//! ```no_run
//! use sandalyst::sandbox::contexts::{choose, Chosen, Lookup};
//! match choose(&Lookup::from_env()).unwrap() {
//!     Chosen::Context(c) => println!("context {}: {}", c.name, c.host),
//!     Chosen::DockerHost(h) => println!("DOCKER_HOST={h}"),
//!     Chosen::Default => println!("the default sockets"),
//! }
//! ```
//!
//! This module only reads files (blocking: call it off the async runtime); connecting
//! is the Docker backend's (`docker::engine`).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The name the docker CLI gives the engine of `DOCKER_HOST` or the default socket.
pub const DEFAULT_CONTEXT: &str = "default";

/// What the choice depends on, so it can be made without touching the process's
/// environment (tests pass their own).
#[derive(Clone, Debug, Default)]
pub struct Lookup {
    pub docker_host: Option<String>,
    pub docker_context: Option<String>,
    /// The docker CLI's configuration folder (`$DOCKER_CONFIG`, else `~/.docker`).
    pub config_dir: Option<PathBuf>,
}

impl Lookup {
    pub fn from_env() -> Lookup {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Lookup {
            docker_host: var("DOCKER_HOST"),
            docker_context: var("DOCKER_CONTEXT"),
            config_dir: var("DOCKER_CONFIG")
                .map(PathBuf::from)
                .or_else(|| dirs::home_dir().map(|h| h.join(".docker"))),
        }
    }
}

/// Which engine the docker CLI would use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chosen {
    DockerHost(String),
    Context(ContextEndpoint),
    /// No context chosen, or the one named `default`: the default sockets.
    Default,
}

/// A context's Docker endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextEndpoint {
    pub name: String,
    /// `unix:///...`, `tcp://...`, `ssh://...`, `npipe://...`.
    pub host: String,
    /// Client certificate, key and CA when the context has TLS material.
    pub tls: Option<TlsFiles>,
}

/// A context's TLS material, each file checked to be readable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Why a context cannot be used; each names the context and the file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ContextError {
    #[error("cannot read the docker CLI's configuration {path}: {message}")]
    Config { path: PathBuf, message: String },
    #[error("docker context {name:?} (chosen by {chosen_by}) does not exist: no {path}; run `docker context ls`, or `docker context use default`")]
    NotFound {
        name: String,
        chosen_by: String,
        path: PathBuf,
    },
    #[error("docker context {name:?}: cannot read {path}: {message}")]
    Meta {
        name: String,
        path: PathBuf,
        message: String,
    },
    #[error("docker context {name:?} has no Docker endpoint in {path}")]
    NoDockerEndpoint { name: String, path: PathBuf },
    #[error("docker context {name:?}: cannot read its TLS file {path}: {message}")]
    TlsFile {
        name: String,
        path: PathBuf,
        message: String,
    },
    #[error("docker context {name:?} skips TLS verification (SkipTLSVerify); Sandalyst verifies the engine's certificate: give the context its CA (`docker context update {name} --docker ca=...`)")]
    SkipTlsVerify { name: String },
}

/// The engine the docker CLI would use, given `lookup`.
pub fn choose(lookup: &Lookup) -> Result<Chosen, ContextError> {
    if let Some(h) = &lookup.docker_host {
        return Ok(Chosen::DockerHost(h.clone()));
    }
    let Some(dir) = &lookup.config_dir else {
        return Ok(Chosen::Default);
    };
    let (name, chosen_by) = match &lookup.docker_context {
        Some(n) => (n.clone(), "DOCKER_CONTEXT".to_string()),
        None => match current_context(&dir.join("config.json"))? {
            Some(n) => (
                n,
                format!("currentContext in {}", dir.join("config.json").display()),
            ),
            None => return Ok(Chosen::Default),
        },
    };
    if name == DEFAULT_CONTEXT {
        return Ok(Chosen::Default);
    }
    endpoint(dir, &name, &chosen_by).map(Chosen::Context)
}

/// `currentContext` of the CLI's `config.json`; none when the file does not exist.
fn current_context(path: &Path) -> Result<Option<String>, ContextError> {
    let err = |message: String| ContextError::Config {
        path: path.to_path_buf(),
        message,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e.to_string())),
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| err(e.to_string()))?;
    Ok(v.get("currentContext")
        .and_then(|c| c.as_str())
        .filter(|c| !c.is_empty())
        .map(str::to_string))
}

/// The store's folder name of a context: the hex SHA-256 of its name.
pub fn context_id(name: &str) -> String {
    Sha256::digest(name.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn endpoint(dir: &Path, name: &str, chosen_by: &str) -> Result<ContextEndpoint, ContextError> {
    let id = context_id(name);
    let path = dir.join("contexts/meta").join(&id).join("meta.json");
    let meta_err = |message: String| ContextError::Meta {
        name: name.to_string(),
        path: path.clone(),
        message,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ContextError::NotFound {
                name: name.to_string(),
                chosen_by: chosen_by.to_string(),
                path,
            })
        }
        Err(e) => return Err(meta_err(e.to_string())),
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| meta_err(e.to_string()))?;
    let docker = &v["Endpoints"]["docker"];
    let Some(host) = docker["Host"].as_str().filter(|h| !h.is_empty()) else {
        return Err(ContextError::NoDockerEndpoint {
            name: name.to_string(),
            path,
        });
    };
    let tls_dir = dir.join("contexts/tls").join(&id).join("docker");
    let tls = if tls_dir.exists() {
        Some(tls_files(name, &tls_dir)?)
    } else {
        None
    };
    // Only a TLS endpoint can skip verification; refusing it beats a silent downgrade.
    if docker["SkipTLSVerify"].as_bool() == Some(true) && host.starts_with("tcp://") {
        return Err(ContextError::SkipTlsVerify {
            name: name.to_string(),
        });
    }
    Ok(ContextEndpoint {
        name: name.to_string(),
        host: host.to_string(),
        tls,
    })
}

/// The three files of a context's TLS folder, each opened once so an unreadable one
/// is named here and not as a failed handshake later.
fn tls_files(name: &str, dir: &Path) -> Result<TlsFiles, ContextError> {
    let file = |f: &str| {
        let path = dir.join(f);
        std::fs::File::open(&path)
            .map(|_| path.clone())
            .map_err(|e| ContextError::TlsFile {
                name: name.to_string(),
                path,
                message: e.to_string(),
            })
    };
    Ok(TlsFiles {
        ca: file("ca.pem")?,
        cert: file("cert.pem")?,
        key: file("key.pem")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(dir: &Path, name: &str, meta: &str) {
        let d = dir.join("contexts/meta").join(context_id(name));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("meta.json"), meta).unwrap();
    }

    fn lookup(dir: &Path) -> Lookup {
        Lookup {
            config_dir: Some(dir.to_path_buf()),
            ..Default::default()
        }
    }

    #[test]
    fn the_folder_of_a_context_is_the_sha256_of_its_name() {
        // `docker context inspect default` and the CLI's store agree on this digest.
        assert_eq!(
            context_id("default"),
            "37a8eec1ce19687d132fe29051dca629d164e2c4958ba141d5f4133a33f0688f"
        );
    }

    #[test]
    fn docker_host_then_docker_context_then_current_context_then_default() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(choose(&lookup(d)).unwrap(), Chosen::Default);
        store(
            d,
            "colima",
            r#"{"Name":"colima","Metadata":{},"Endpoints":{"docker":{"Host":"unix:///x/colima.sock","SkipTLSVerify":false}}}"#,
        );
        store(
            d,
            "other",
            r#"{"Name":"other","Endpoints":{"docker":{"Host":"unix:///x/other.sock"}}}"#,
        );
        std::fs::write(d.join("config.json"), r#"{"currentContext":"colima"}"#).unwrap();
        let colima = ContextEndpoint {
            name: "colima".into(),
            host: "unix:///x/colima.sock".into(),
            tls: None,
        };
        assert_eq!(choose(&lookup(d)).unwrap(), Chosen::Context(colima));
        let mut l = lookup(d);
        l.docker_context = Some("other".into());
        assert!(matches!(choose(&l).unwrap(), Chosen::Context(c) if c.name == "other"));
        l.docker_context = Some("default".into());
        assert_eq!(choose(&l).unwrap(), Chosen::Default);
        l.docker_host = Some("tcp://h:2376".into());
        assert_eq!(
            choose(&l).unwrap(),
            Chosen::DockerHost("tcp://h:2376".into())
        );
    }

    #[test]
    fn a_missing_or_broken_context_is_named_with_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("config.json"), r#"{"currentContext":"gone"}"#).unwrap();
        let e = choose(&lookup(d)).unwrap_err();
        assert!(matches!(&e, ContextError::NotFound { name, .. } if name == "gone"));
        let text = e.to_string();
        assert!(
            text.contains("\"gone\"")
                && text.contains("currentContext")
                && text.contains(&context_id("gone")),
            "{text}"
        );

        store(d, "gone", "{not json");
        assert!(matches!(
            choose(&lookup(d)).unwrap_err(),
            ContextError::Meta { .. }
        ));
        store(d, "gone", r#"{"Name":"gone","Endpoints":{}}"#);
        assert!(matches!(
            choose(&lookup(d)).unwrap_err(),
            ContextError::NoDockerEndpoint { .. }
        ));

        std::fs::write(d.join("config.json"), "{").unwrap();
        assert!(matches!(
            choose(&lookup(d)).unwrap_err(),
            ContextError::Config { .. }
        ));
    }

    #[test]
    fn tls_material_comes_from_the_store_and_a_missing_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        store(
            d,
            "remote",
            r#"{"Name":"remote","Endpoints":{"docker":{"Host":"tcp://127.0.0.1:2376"}}}"#,
        );
        let tls = d
            .join("contexts/tls")
            .join(context_id("remote"))
            .join("docker");
        std::fs::create_dir_all(&tls).unwrap();
        std::fs::write(tls.join("ca.pem"), "ca").unwrap();
        std::fs::write(tls.join("cert.pem"), "cert").unwrap();
        let mut l = lookup(d);
        l.docker_context = Some("remote".into());
        let e = choose(&l).unwrap_err();
        assert!(
            matches!(&e, ContextError::TlsFile { name, path, .. } if name == "remote" && path.ends_with("key.pem")),
            "{e}"
        );
        std::fs::write(tls.join("key.pem"), "key").unwrap();
        let Chosen::Context(c) = choose(&l).unwrap() else {
            panic!("no context")
        };
        assert_eq!(c.tls.unwrap().key, tls.join("key.pem"));

        store(
            d,
            "remote",
            r#"{"Name":"remote","Endpoints":{"docker":{"Host":"tcp://127.0.0.1:2376","SkipTLSVerify":true}}}"#,
        );
        assert!(matches!(
            choose(&l).unwrap_err(),
            ContextError::SkipTlsVerify { .. }
        ));
    }
}
