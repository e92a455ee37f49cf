//! `ssh://[user@]host[:port]` engines, reached the way the docker CLI reaches them:
//! each connection is `ssh ... host docker system dial-stdio`, and HTTP goes over that
//! process's stdin and stdout. bollard carries it as a custom transport.
//!
//! bollard's own `ssh` feature (the `openssh` crate) is not used: it takes no ssh
//! config or options beyond a key file, writes unknown host keys into
//! `~/.ssh/known_hosts` by itself (`accept-new`), and keeps control masters under
//! `~/.local/state`. Plain `ssh` honours the user's own `~/.ssh/config`, agent and
//! known hosts, like `docker -H ssh://...` does.
//!
//! `SANDALYST_SSH_CONFIG` names an ssh config file to use instead of `~/.ssh/config`
//! (`ssh -F`). ssh runs with `BatchMode=yes`: an app has no terminal to type a
//! password into, so keys come from the agent or an unencrypted key file.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bollard::{BollardRequest, Docker, API_DEFAULT_VERSION};
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The variable naming an ssh config file (`ssh -F`).
pub const SSH_CONFIG_VAR: &str = "SANDALYST_SSH_CONFIG";

/// bollard's request timeout for this transport (its default for the others).
const TIMEOUT_SECS: u64 = 120;

/// The last this much of ssh's own error output is kept for the error message.
const STDERR_KEEP: usize = 4096;

/// Where an `ssh://` engine is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SshTarget {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

/// Parse `ssh://[user@]host[:port]` (IPv6 hosts in brackets). A path is refused, as
/// the docker CLI refuses it: the remote side's own `docker` finds its engine.
pub fn parse(url: &str) -> Result<SshTarget, String> {
    let bad = |why: &str| {
        format!("{url} is not an ssh engine address ({why}); use ssh://[user@]host[:port]")
    };
    let rest = url.strip_prefix("ssh://").ok_or_else(|| bad("no ssh://"))?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.contains('/') || rest.contains('?') {
        return Err(bad("it has a path"));
    }
    let (user, hostport) = match rest.rsplit_once('@') {
        Some((u, h)) if !u.is_empty() && !u.starts_with('-') => (Some(u.to_string()), h),
        Some(_) => return Err(bad("bad user")),
        None => (None, rest),
    };
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed ["))?;
        (h, after.strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    if host.is_empty() || host.starts_with('-') {
        return Err(bad("no host"));
    }
    let port = port
        .map(|p| p.parse::<u16>().map_err(|_| bad("bad port")))
        .transpose()?;
    Ok(SshTarget {
        user,
        host: host.to_string(),
        port,
    })
}

impl SshTarget {
    /// The `ssh` arguments, as the docker CLI builds them (plus `-F` and batch mode).
    pub fn args(&self, config: Option<&str>) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        if let Some(f) = config {
            a.extend(["-F".into(), f.into()]);
        }
        a.extend(
            ["-o", "ConnectTimeout=30", "-o", "BatchMode=yes", "-T"]
                .iter()
                .map(|s| s.to_string()),
        );
        if let Some(u) = &self.user {
            a.extend(["-l".into(), u.clone()]);
        }
        if let Some(p) = self.port {
            a.extend(["-p".into(), p.to_string()]);
        }
        // `--` so that a host can never be read as an option.
        a.extend(
            ["--", &self.host, "docker", "system", "dial-stdio"]
                .iter()
                .map(|s| s.to_string()),
        );
        a
    }
}

/// What ssh said on its error output lately, for a failure's message.
#[derive(Clone, Default)]
pub struct SshStderr {
    text: Arc<Mutex<String>>,
    /// ssh processes whose error output is still being read.
    reading: Arc<AtomicUsize>,
}

impl SshStderr {
    /// ssh's words so far, after waiting (at most `within`) for every ssh that has
    /// ended to have its error output read: a refused connection ends the HTTP
    /// request as soon as ssh closes its stdout, often before its reason is read.
    pub async fn last(&self, within: Duration) -> String {
        let deadline = tokio::time::Instant::now() + within;
        while self.reading.load(Ordering::Acquire) > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.text
            .lock()
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }

    fn push(&self, text: &str) {
        if let Ok(mut s) = self.text.lock() {
            s.push_str(text);
            if s.len() > STDERR_KEEP {
                let cut = s.len() - STDERR_KEEP;
                let cut = (cut..s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(0);
                s.drain(..cut);
            }
        }
    }
}

/// A client of the engine at `url` (`ssh://...`), and ssh's error output.
pub fn connect(url: &str) -> Result<(Docker, SshStderr), String> {
    let target = Arc::new(parse(url)?);
    let stderr = SshStderr::default();
    let connector = SshConnector {
        target,
        config: std::env::var(SSH_CONFIG_VAR).ok().filter(|c| !c.is_empty()),
        stderr: stderr.clone(),
    };
    let client = Client::builder(TokioExecutor::new()).build(connector);
    let transport = move |req: BollardRequest| {
        let client = client.clone();
        async move { Ok(client.request(req).await?) }
    };
    // The address only fills the requests' URI; the connector knows where to go.
    let docker = Docker::connect_with_custom_transport(
        transport,
        Some("ssh://engine"),
        TIMEOUT_SECS,
        API_DEFAULT_VERSION,
    )
    .map_err(|e| e.to_string())?;
    Ok((docker, stderr))
}

#[derive(Clone)]
struct SshConnector {
    target: Arc<SshTarget>,
    config: Option<String>,
    stderr: SshStderr,
}

impl tower_service::Service<hyper::Uri> for SshConnector {
    type Response = TokioIo<SshStream>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: hyper::Uri) -> Self::Future {
        let args = self.target.args(self.config.as_deref());
        let stderr = self.stderr.clone();
        Box::pin(async move {
            let mut child = Command::new("ssh")
                .args(&args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                // The connection's end (hyper drops it) ends its ssh.
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| io::Error::new(e.kind(), format!("cannot run ssh: {e}")))?;
            if let Some(mut err) = child.stderr.take() {
                stderr.reading.fetch_add(1, Ordering::AcqRel);
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    while let Ok(n) = err.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        stderr.push(&String::from_utf8_lossy(&buf[..n]));
                    }
                    stderr.reading.fetch_sub(1, Ordering::AcqRel);
                });
            }
            let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                return Err(io::Error::other("ssh started without pipes"));
            };
            Ok(TokioIo::new(SshStream {
                _child: child,
                stdin,
                stdout,
            }))
        })
    }
}

/// One connection: an `ssh ... docker system dial-stdio` process's stdio.
struct SshStream {
    _child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
}

impl Connection for SshStream {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl AsyncRead for SshStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stdout).poll_read(cx, buf)
    }
}

impl AsyncWrite for SshStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stdin).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stdin).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stdin).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_addresses_parse_like_the_docker_cli_reads_them() {
        let t = parse("ssh://root@127.0.0.1:2222").unwrap();
        assert_eq!(
            t,
            SshTarget {
                user: Some("root".into()),
                host: "127.0.0.1".into(),
                port: Some(2222)
            }
        );
        assert_eq!(
            t.args(Some("/tmp/cfg")),
            [
                "-F",
                "/tmp/cfg",
                "-o",
                "ConnectTimeout=30",
                "-o",
                "BatchMode=yes",
                "-T",
                "-l",
                "root",
                "-p",
                "2222",
                "--",
                "127.0.0.1",
                "docker",
                "system",
                "dial-stdio"
            ]
        );
        let t = parse("ssh://build.example/").unwrap();
        assert_eq!((t.user, t.port), (None, None));
        assert_eq!(parse("ssh://u@[::1]:22").unwrap().host, "::1");
        for bad in [
            "ssh://",
            "ssh://h/var/run/docker.sock",
            "ssh://h:x",
            "ssh://@h",
            "ssh://-l@h",
            "ssh://-oProxyCommand=x",
            "tcp://h",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
