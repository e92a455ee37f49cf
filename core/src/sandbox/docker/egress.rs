//! `allow:` network mode on Docker: the sandbox keeps network mode `none` (loopback
//! only, no route, no DNS), and its one way out is the egress proxy of
//! [`crate::egress`], which this process runs on a unix socket in a private folder
//! on the host. The socket is bind-mounted into the container, and a small forwarder
//! in the container (`egress_forward.py`, one thread) turns `127.0.0.1:PORT`, which
//! `HTTP_PROXY`/`HTTPS_PROXY` name, into connections to that socket.
//!
//! Why not an engine network: Docker's `--internal` networks keep the container one
//! hop from every address of the host itself (the engine's filter rules sit in
//! FORWARD, not INPUT), so services listening on the host would be in reach; with no
//! interface at all nothing is, and everything that leaves goes through the proxy's
//! checks. It needs the engine to see this machine's files (a local Docker Engine),
//! as bind-mounted inputs do.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context};
use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::models::{
    Mount, MountBindOptions, MountBindOptionsPropagationEnum, MountPoint, MountType,
};
use bollard::Docker;
use futures_util::StreamExt;
use tokio::task::JoinHandle;

use super::engine_error;
use crate::egress::{EgressEvent, Listen, Proxy, ProxyHandle, Resolver};
use crate::sandbox::{image, Connections, SandboxConfig};

/// Where the proxy's socket appears inside the container.
pub(super) const SOCKET_IN_SANDBOX: &str = "/run/sandalyst/egress.sock";
/// The loopback port the forwarder listens on inside the container.
pub(super) const PORT: u16 = 3128;
/// Connection events kept between two calls; past it the oldest are dropped (and
/// counted), so a call that opens connections in a loop cannot fill memory.
const MAX_PENDING: usize = 1000;

const FORWARDER: &str = include_str!("../egress_forward.py");

/// A session's proxy and what it saw since the last call asked.
pub(super) struct Egress {
    proxy: Mutex<Option<ProxyHandle>>,
    dir: PathBuf,
    pending: Arc<Mutex<Connections>>,
    forwarder: Mutex<Option<JoinHandle<()>>>,
}

impl Egress {
    /// Starts the proxy for `config`'s allowlist (or returns `None` when the mode is
    /// not `allow:`), listening on a socket in a new folder only this user can enter.
    pub(super) async fn start(
        config: &SandboxConfig,
        run_id: &str,
    ) -> anyhow::Result<Option<Egress>> {
        let Some(list) = config.network.allowlist() else {
            return Ok(None);
        };
        let dir = std::env::temp_dir().join(format!(
            "sandalyst-egress-{}-{:08x}",
            std::process::id(),
            rand::random::<u32>()
        ));
        let made = dir.clone();
        tokio::task::spawn_blocking(move || {
            sweep_stale(&std::env::temp_dir());
            private_dir(&made)
        })
        .await?
        .with_context(|| format!("creating the egress proxy's folder {}", dir.display()))?;
        let pending = Arc::new(Mutex::new(Connections::default()));
        let sink = pending.clone();
        let on_event = Arc::new(move |ev: EgressEvent| {
            let mut p = sink.lock().unwrap();
            if p.events.len() == MAX_PENDING {
                p.events.remove(0);
                p.dropped += 1;
            }
            p.events.push(ev);
        });
        let resolver = Resolver::system().with_pins(&config.egress_resolve);
        let socket = dir.join("egress.sock");
        let started = Proxy::start(
            Listen::Unix(socket.clone()),
            list.clone(),
            resolver,
            on_event,
        )
        .await;
        let proxy = match started {
            Ok(p) => p,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e.context(format!("starting the egress proxy of {run_id}")));
            }
        };
        // The sandbox's user (uid 1000) is not this process's: it may connect to the
        // socket, but only through the bind mount (the folder stays closed).
        let opened = tokio::task::spawn_blocking(move || set_mode(&socket, 0o666)).await?;
        if let Err(e) = opened {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e.context("opening the egress socket to the sandbox user"));
        }
        Ok(Some(Egress {
            proxy: Mutex::new(Some(proxy)),
            dir,
            pending,
            forwarder: Mutex::new(None),
        }))
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("egress.sock")
    }

    /// The bind mount of the proxy's socket.
    pub(super) fn mount(&self) -> Mount {
        Mount {
            target: Some(SOCKET_IN_SANDBOX.into()),
            source: Some(self.socket().display().to_string()),
            typ: Some(MountType::BIND),
            // Connecting to a socket is allowed on a read-only mount; nothing else
            // can be done to it.
            read_only: Some(true),
            bind_options: Some(MountBindOptions {
                propagation: Some(MountBindOptionsPropagationEnum::RPRIVATE),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// Starts the forwarder in the container and waits until it listens.
    pub(super) async fn start_forwarder(
        &self,
        docker: &Docker,
        container: &str,
    ) -> anyhow::Result<()> {
        let doing = "starting the sandbox's network forwarder";
        let env = [
            format!("SANDALYST_EGRESS_SOCKET={SOCKET_IN_SANDBOX}"),
            format!("SANDALYST_EGRESS_PORT={PORT}"),
        ];
        let exec = docker
            .create_exec(
                container,
                CreateExecOptions {
                    cmd: Some(vec!["python3", "-u", "-c", FORWARDER]),
                    user: Some(image::USER),
                    env: Some(env.iter().map(String::as_str).collect()),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| engine_error(doing, e))?;
        let StartExecResults::Attached { mut output, .. } = docker
            .start_exec(&exec.id, None)
            .await
            .map_err(|e| engine_error(doing, e))?
        else {
            bail!("the Docker engine did not attach to the sandbox's network forwarder");
        };
        let mut said = Vec::new();
        let ready = tokio::time::timeout(std::time::Duration::from_secs(30), async {
            while let Some(frame) = output.next().await {
                match frame {
                    Ok(LogOutput::StdOut { message }) | Ok(LogOutput::StdErr { message }) => {
                        said.extend_from_slice(&message);
                        if said.starts_with(b"ready\n") {
                            return true;
                        }
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            false
        })
        .await;
        if ready != Ok(true) {
            let said = String::from_utf8_lossy(&said);
            bail!(
                "the sandbox's network forwarder did not start: {}",
                said.trim()
            );
        }
        // Read to its end, so whatever it writes never blocks it.
        let drain = tokio::spawn(async move { while output.next().await.is_some() {} });
        *self.forwarder.lock().unwrap() = Some(drain);
        Ok(())
    }

    /// The connections since the last call, and a count of the ones dropped.
    pub(super) fn take(&self) -> Connections {
        std::mem::take(&mut *self.pending.lock().unwrap())
    }

    /// Stops the proxy (every connection through it ends) and removes its folder.
    pub(super) async fn stop(&self) {
        let proxy = self.proxy.lock().unwrap().take();
        if let Some(proxy) = proxy {
            proxy.stop().await;
        }
        if let Some(f) = self.forwarder.lock().unwrap().take() {
            f.abort();
        }
        let dir = self.dir.clone();
        let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(dir)).await;
    }
}

impl Drop for Egress {
    fn drop(&mut self) {
        if let Some(f) = self.forwarder.get_mut().unwrap().take() {
            f.abort();
        }
        // The proxy handle stops itself when dropped; the folder is small but ours.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The environment that sends the code's HTTP clients through the forwarder; no
/// name is exempt (`NO_PROXY` empty), so nothing tries to go around it.
pub(super) fn env() -> Vec<String> {
    let url = format!("http://127.0.0.1:{PORT}");
    let mut env = Vec::new();
    for var in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "http_proxy",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        env.push(format!("{var}={url}"));
    }
    env.push("NO_PROXY=".into());
    env.push("no_proxy=".into());
    env
}

/// The engine's mounts apart: the proxy's socket (when mounted, at its place and
/// read-only) and all the others.
pub(super) fn split_mounts(
    made: Option<&Vec<MountPoint>>,
) -> (Option<MountPoint>, Vec<MountPoint>) {
    let (socket, others): (Vec<MountPoint>, Vec<MountPoint>) =
        made.into_iter().flatten().cloned().partition(|m| {
            m.destination.as_deref() == Some(SOCKET_IN_SANDBOX) && m.rw == Some(false)
        });
    (socket.into_iter().next(), others)
}

#[cfg(unix)]
fn private_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(dir)?;
    Ok(())
}

#[cfg(not(unix))]
fn private_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir(dir)?;
    Ok(())
}

/// Remove the proxy folders of processes that are gone (killed before they could clean
/// up): `sandalyst-egress-<pid>-<hex>` whose pid no longer runs. Best effort.
fn sweep_stale(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("sandalyst-egress-"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return true;
    };
    // Signal 0 only asks; EPERM means it runs under another user.
    // SAFETY: kill(2) with signal 0 sends nothing and touches no memory.
    let asked = unsafe { libc::kill(pid, 0) };
    asked == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_: u32) -> bool {
    true
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    Ok(())
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) -> anyhow::Result<()> {
    Ok(())
}

#[cfg(test)]
mod sweep_tests {
    use super::*;

    #[test]
    fn folders_of_dead_processes_are_removed_and_live_ones_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let mine = tmp
            .path()
            .join(format!("sandalyst-egress-{}-0000abcd", std::process::id()));
        // A pid beyond any kernel's pid_max is never alive.
        let dead = tmp.path().join("sandalyst-egress-2147483000-00001234");
        let other = tmp.path().join("unrelated-2147483000-1");
        for d in [&mine, &dead, &other] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(dead.join("egress.sock"), "").unwrap();
        sweep_stale(tmp.path());
        assert!(mine.exists() && other.exists());
        assert!(!dead.exists());
    }
}
