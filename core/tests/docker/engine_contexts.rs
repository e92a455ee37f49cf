//! Engines the way the docker CLI finds them, through the built command line with
//! `DOCKER_HOST` unset: a context in a temporary HOME's `~/.docker` whose endpoint is
//! a socket path that only the store names; a TCP+TLS context that the docker CLI
//! itself wrote (`docker context create`), in front of which a TLS relay of ours on
//! 127.0.0.1 demands the context's client certificate; and an `ssh://` engine
//! through an `sshd` of the test's own on 127.0.0.1 (Debian's openssh-server) that
//! runs the real `docker system dial-stdio`. Each runs the reference case. The real
//! daemon is never reconfigured; nothing listens beyond 127.0.0.1.

use crate::cli::{command, reference_case_in};
use crate::common;
use crate::engine_tls::{pki, tls_front, write_certs};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use sandalyst::sandbox::contexts::context_id;

const DAEMON: &str = "/var/run/docker.sock";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The engine line the command printed.
fn engine_line(o: &Output) -> String {
    text(&o.stderr)
        .lines()
        .find(|l| l.trim_start().starts_with("engine:"))
        .unwrap_or_else(|| panic!("no engine line in:\n{}", text(&o.stderr)))
        .to_string()
}

/// No engine variables of the developer's or CI's reach the command.
fn clean(c: &mut Command) {
    for v in [
        "DOCKER_HOST",
        "DOCKER_CONTEXT",
        "DOCKER_CONFIG",
        "DOCKER_TLS_VERIFY",
        "DOCKER_CERT_PATH",
    ] {
        c.env_remove(v);
    }
}

/// These tests need the local daemon's socket itself (they put fronts before it).
fn local_daemon_or_skip() -> bool {
    if common::no_engine_skip() {
        return false;
    }
    if !Path::new(DAEMON).exists() || std::env::var_os("DOCKER_HOST").is_some() {
        common::skip("the engine is not at /var/run/docker.sock");
        return false;
    }
    true
}

/// An input in `dir` for runs that must stop at the engine.
fn tiny_csv(dir: &Path) -> String {
    let path = dir.join("tiny.csv");
    std::fs::write(&path, "a,b\n1,2\n").unwrap();
    path.display().to_string()
}

fn write_meta(config: &Path, name: &str, host: &str) {
    let d = config.join("contexts/meta").join(context_id(name));
    std::fs::create_dir_all(&d).unwrap();
    let meta = serde_json::json!({
        "Name": name,
        "Metadata": {},
        "Endpoints": {"docker": {"Host": host, "SkipTLSVerify": false}},
    });
    std::fs::write(d.join("meta.json"), meta.to_string()).unwrap();
}

#[test]
fn the_current_context_of_the_docker_cli_is_used_with_docker_host_unset() {
    if !local_daemon_or_skip() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".docker");
    // The endpoint is a path only the store names: a link to the daemon's socket.
    let sock = home.path().join("engine.sock");
    std::os::unix::fs::symlink(DAEMON, &sock).unwrap();
    let host = format!("unix://{}", sock.display());
    write_meta(&config, "lab", &host);
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.json"), r#"{"currentContext": "lab"}"#).unwrap();
    let env = |c: &mut Command| {
        clean(c);
        c.env("HOME", home.path());
    };

    // The docker CLI reads the same store the same way.
    let mut docker = Command::new("docker");
    env(&mut docker);
    let shown = docker.args(["context", "show"]).output().unwrap();
    assert_eq!(text(&shown.stdout).trim(), "lab", "{}", text(&shown.stderr));

    let started = Instant::now();
    let o = reference_case_in(&env);
    let secs = started.elapsed().as_secs_f64();
    let line = engine_line(&o);
    assert!(line.contains(&format!("context lab: {host}")), "{line}");
    eprintln!("reference case through context lab ({host}): {secs:.1} s; {line}");

    // A context that names a missing store entry is a clear error naming both.
    std::fs::write(config.join("config.json"), r#"{"currentContext": "gone"}"#).unwrap();
    let o = command()
        .args(["run", "--input", &tiny_csv(home.path()), "--prompt", "x"])
        .env("SANDALYST_DATA_DIR", home.path().join("data"))
        .tap(env)
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("\"gone\"") && err.contains(&context_id("gone")) && err.contains("meta.json"),
        "{err}"
    );
}

/// `Command` configured in a chain by a closure.
trait Tap {
    fn tap(&mut self, f: impl Fn(&mut Command)) -> &mut Self;
}

impl Tap for Command {
    fn tap(&mut self, f: impl Fn(&mut Command)) -> &mut Self {
        f(self);
        self
    }
}

#[test]
fn a_tls_context_written_by_the_docker_cli_is_used_with_its_certificates() {
    if !local_daemon_or_skip() {
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pki = pki();
    // The relay runs on this runtime's threads while the command runs.
    let port = rt.block_on(tls_front(&pki));
    let dir = tempfile::tempdir().unwrap();
    let certs = dir.path().join("certs");
    write_certs(&certs, &pki.ca_pem, &pki.client);
    let config = dir.path().join("docker-config");
    let env = |c: &mut Command| {
        clean(c);
        c.env("DOCKER_CONFIG", &config)
            .env("DOCKER_CONTEXT", "remote");
    };
    let host = format!("tcp://127.0.0.1:{port}");
    let endpoint = format!(
        "host={host},ca={},cert={},key={}",
        certs.join("ca.pem").display(),
        certs.join("cert.pem").display(),
        certs.join("key.pem").display()
    );
    let mut docker = Command::new("docker");
    env(&mut docker);
    let made = docker
        .args(["context", "create", "remote", "--docker", &endpoint])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made.stderr));
    // The CLI copied the material into the store, where it is read from.
    let tls: PathBuf = config
        .join("contexts/tls")
        .join(context_id("remote"))
        .join("docker");
    for f in ["ca.pem", "cert.pem", "key.pem"] {
        assert!(tls.join(f).is_file(), "no {f} in {}", tls.display());
    }
    std::fs::remove_dir_all(&certs).unwrap();

    let started = Instant::now();
    let o = reference_case_in(&env);
    let line = engine_line(&o);
    assert!(
        line.contains(&format!("context remote: {host}")) && line.contains("remote"),
        "{line}"
    );
    eprintln!(
        "reference case through a TLS context ({host}): {:.1} s; {line}",
        started.elapsed().as_secs_f64()
    );

    // An unreadable TLS file is named with its context.
    std::fs::remove_file(tls.join("key.pem")).unwrap();
    let o = command()
        .args(["run", "--input", &tiny_csv(dir.path()), "--prompt", "x"])
        .env("SANDALYST_DATA_DIR", dir.path().join("data"))
        .tap(env)
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert!(
        !o.status.success() && err.contains("\"remote\"") && err.contains("key.pem"),
        "{err}"
    );
}

/// An `sshd` of the test's own on 127.0.0.1, killed when dropped.
struct Sshd {
    child: Child,
    port: u16,
    /// The client's ssh config: its key, and the server's host key as the only one known.
    client_config: PathBuf,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(cmd: &mut Command) {
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{cmd:?}: {}", text(&o.stderr));
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start_sshd(dir: &Path, user: &str) -> Sshd {
    let keygen = |path: &Path| {
        run(Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(path));
    };
    let host_key = dir.join("host_key");
    let client_key = dir.join("client_key");
    keygen(&host_key);
    keygen(&client_key);
    std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
    let port = free_port();
    let config = dir.join("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {hk}\nPidFile {dir}/sshd.pid\n\
             AuthorizedKeysFile {dir}/authorized_keys\nStrictModes no\nUsePAM no\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PermitRootLogin prohibit-password\nAllowUsers {user}\n",
            hk = host_key.display(),
            dir = dir.display(),
        ),
    )
    .unwrap();
    // Debian's sshd wants its privilege separation folder (its service makes it).
    std::fs::create_dir_all("/run/sshd").unwrap();
    let child = Command::new("/usr/sbin/sshd")
        .args(["-D", "-e", "-f"])
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("sshd (Debian's openssh-server; scripts/setup.sh installs it)");
    let host_pub = std::fs::read_to_string(dir.join("host_key.pub")).unwrap();
    std::fs::write(
        dir.join("known_hosts"),
        format!("[127.0.0.1]:{port} {host_pub}"),
    )
    .unwrap();
    let client_config = dir.join("ssh_config");
    std::fs::write(
        &client_config,
        format!(
            "Host *\n  IdentityFile {}\n  IdentitiesOnly yes\n  StrictHostKeyChecking yes\n  UserKnownHostsFile {}\n  LogLevel ERROR\n",
            client_key.display(),
            dir.join("known_hosts").display()
        ),
    )
    .unwrap();
    let sshd = Sshd {
        child,
        port,
        client_config,
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "sshd did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    sshd
}

#[test]
fn an_ssh_engine_on_this_machine_runs_the_reference_case() {
    if !local_daemon_or_skip() {
        return;
    }
    if !Path::new("/usr/sbin/sshd").exists() {
        common::skip("no sshd (apt-get install openssh-server, or scripts/setup.sh)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let user = text(&Command::new("id").arg("-un").output().unwrap().stdout)
        .trim()
        .to_string();
    let sshd = start_sshd(dir.path(), &user);
    let host = format!("ssh://{user}@127.0.0.1:{}", sshd.port);
    let env = |c: &mut Command| {
        clean(c);
        c.env("DOCKER_HOST", &host).env(
            sandalyst::sandbox::docker::SSH_CONFIG_VAR,
            &sshd.client_config,
        );
    };
    let started = Instant::now();
    let o = reference_case_in(&env);
    let secs = started.elapsed().as_secs_f64();
    let line = engine_line(&o);
    assert!(
        line.contains(&format!("DOCKER_HOST={host}")) && line.contains("remote"),
        "{line}"
    );
    // A remote engine gets the inputs as copies, never as bind mounts.
    assert!(
        text(&o.stderr).contains("copy:") && !text(&o.stderr).contains("bind mount:"),
        "{}",
        text(&o.stderr)
    );
    eprintln!("reference case through {host}: {secs:.1} s; {line}");

    // ssh's own refusal reaches the message: a host key it does not know.
    std::fs::write(dir.path().join("known_hosts"), "").unwrap();
    let o = command()
        .args(["run", "--input", &tiny_csv(dir.path()), "--prompt", "x"])
        .env("SANDALYST_DATA_DIR", dir.path().join("data"))
        .tap(env)
        .output()
        .unwrap();
    let err = text(&o.stderr);
    eprintln!("an unknown host key: {}", err.trim());
    assert!(
        !o.status.success()
            && err.contains(&host)
            && err.contains("ssh said")
            && err.to_lowercase().contains("host key"),
        "{err}"
    );
}
