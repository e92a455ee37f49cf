//! Shared by the Podman tests: a Podman API service of the test's own (rootful, or
//! rootless as an unprivileged user), the reference case through the command line,
//! and the containment checks from inside a sandbox.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use bollard::Docker;
use sandalyst::sandbox::docker::DockerSandbox;
use sandalyst::sandbox::{ExecStatus, Sandbox, SandboxConfig};
use sandalyst::workspace::Manifest;
use tokio_util::sync::CancellationToken;

use crate::common;

/// A `podman system service` of our own, stopped (by its pid) when dropped.
pub struct Service {
    child: Child,
    pub socket: PathBuf,
    _dir: tempfile::TempDir,
    /// A store of the service's own (root, runroot), emptied when it stops.
    store: Option<(String, String)>,
    /// Where a store of its own keeps its run state, when apart from `_dir`.
    _run: Option<tempfile::TempDir>,
}

impl Service {
    pub fn host(&self) -> String {
        format!("unix://{}", self.socket.display())
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if self.store.is_some() {
            // Whatever the store still has mounted goes, so its folder can be removed
            // (`podman system reset` would also touch the machine's network settings).
            // Podman's clean-up helpers (conmon's `container cleanup`) may mount the
            // store again a moment after the service is gone: look until it stays
            // unmounted.
            // Podman's exec sessions leave conmon processes that run a clean-up of the
            // store five minutes after they end; they would mount it again.
            kill_processes_naming(self._dir.path());
            let mut dirs = vec![self._dir.path().to_path_buf()];
            dirs.extend(self._run.as_ref().map(|r| r.path().to_path_buf()));
            let unmount = || dirs.iter().map(|d| unmount_under(d)).sum::<usize>();
            for _ in 0..20 {
                if unmount() == 0 {
                    std::thread::sleep(Duration::from_millis(250));
                    if unmount() == 0 {
                        break;
                    }
                }
                std::thread::sleep(Duration::from_millis(250));
            }
        }
    }
}

/// SIGKILL every process whose command line names `dir` (never this one).
fn kill_processes_naming(dir: &Path) {
    let me = std::process::id().to_string();
    let needle = dir.display().to_string();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    for p in procs.flatten() {
        let pid = p.file_name().to_string_lossy().into_owned();
        if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let cmdline = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(&needle) {
            let _ = Command::new("kill").args(["-9", &pid]).status();
        }
    }
}

/// Lazily unmount every mount below `dir`; returns how many there were.
fn unmount_under(dir: &Path) -> usize {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let below: Vec<&str> = mounts
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter(|t| Path::new(t).starts_with(dir))
        .collect();
    for target in &below {
        let _ = Command::new("umount").args(["-l", target]).status();
    }
    below.len()
}

/// Stores of empty-store services from runs that ended before their clean-up (a
/// killed test): unmounted and removed, so they do not pile up in the target folder.
fn remove_stale_stores(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.join("root").is_dir() && path.join("service.log").is_file() {
            kill_processes_naming(&path);
            unmount_under(&path);
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// Set up `user` (scripts/setup-podman.sh --rootless) and start a rootless API
/// service as that user, on a socket in a folder of its own.
pub fn start_rootless(image: &str, user: &str) -> Service {
    let setup = common::repo_root().join("scripts/setup-podman.sh");
    let o = Command::new(&setup)
        .args(["--rootless", user, image])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "rootless Podman could not be set up by {}:\n{}",
        setup.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    spawn_rootless(user, false)
}

/// A rootless API service as `user` over a store of its own in a temporary folder, so
/// it starts with no image. The user is made by scripts/setup-podman.sh --rootless.
pub fn start_rootless_empty(user: &str) -> Service {
    let known = Command::new("id").arg(user).output().unwrap();
    assert!(
        known.status.success(),
        "user {user} is missing: run scripts/setup-podman.sh --rootless {user} IMAGE (scripts/test.sh does)"
    );
    spawn_rootless(user, true)
}

fn spawn_rootless(user: &str, own_store: bool) -> Service {
    let id = |flag: &str| -> u32 {
        let o = Command::new("id").args([flag, user]).output().unwrap();
        text(&o.stdout).trim().parse().unwrap()
    };
    let (uid, gid) = (id("-u"), id("-g"));
    let home = PathBuf::from(format!("/home/{user}"));
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).unwrap();
    let socket = dir.path().join("podman.sock");
    let store = own_store.then(|| {
        let at = |name: &str| dir.path().join(name).display().to_string();
        (at("root"), at("runroot"))
    });
    let store_args: Vec<String> = store
        .iter()
        .flat_map(|(root, runroot)| {
            [
                "--root".into(),
                root.clone(),
                "--runroot".into(),
                runroot.clone(),
            ]
        })
        .collect();
    // setpriv execs podman: the pid we hold is the service's own.
    let child = Command::new("setpriv")
        .arg(format!("--reuid={uid}"))
        .arg(format!("--regid={gid}"))
        .args(["--clear-groups", "podman"])
        .args(&store_args)
        .args(["system", "service", "--time=0"])
        .arg(format!("unix://{}", socket.display()))
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
        .env("HOME", &home)
        .env("USER", user)
        .env("LOGNAME", user)
        .current_dir("/")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting a rootless `podman system service`");
    wait_for_socket(&socket);
    Service {
        child,
        socket,
        _dir: dir,
        store,
        _run: None,
    }
}

fn wait_for_socket(socket: &Path) {
    let started = Instant::now();
    while !socket.exists() {
        // What the service said, where it keeps a log beside its socket.
        let log = std::fs::read_to_string(socket.with_file_name("service.log"));
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "podman system service made no socket at {} within 60 s; it said:\n{}",
            socket.display(),
            log.unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Install Podman and copy `image` into it (scripts/setup-podman.sh), then start a
/// rootful API service on a socket of our own.
pub fn start_rootful(image: &str) -> Service {
    let setup = common::repo_root().join("scripts/setup-podman.sh");
    let o = Command::new(&setup).arg(image).output().unwrap();
    assert!(
        o.status.success(),
        "Podman could not be set up by {}:\n{}",
        setup.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("podman.sock");
    let child = Command::new("podman")
        .args(["system", "service", "--time=0"])
        .arg(format!("unix://{}", socket.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting `podman system service`");
    wait_for_socket(&socket);
    Service {
        child,
        socket,
        _dir: dir,
        store: None,
        _run: None,
    }
}

/// A rootful API service over a store of its own (`--root`/`--runroot` in a temporary
/// folder), so it starts with no image at all: a machine with Podman and nothing else.
/// Podman is installed by scripts/setup-podman.sh (scripts/test.sh runs it).
pub fn start_rootful_empty() -> Service {
    assert!(
        Command::new("podman").arg("--version").output().is_ok(),
        "podman is not installed: run scripts/setup-podman.sh IMAGE (scripts/test.sh does)"
    );
    // On the disk, not a tmpfs: the store holds a whole image.
    remove_stale_stores(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let socket = dir.path().join("podman.sock");
    // Podman refuses a run root path of more than 50 characters (a CI target folder's
    // is longer): the run state, which is small, goes to a short folder of its own.
    let run = tempfile::Builder::new()
        .prefix("sandalyst-pm")
        .tempdir_in("/tmp")
        .unwrap();
    let root = dir.path().join("root").display().to_string();
    let runroot = run.path().join("runroot").display().to_string();
    let child = Command::new("podman")
        .args(["--root", &root, "--runroot", &runroot])
        .args(["system", "service", "--time=0"])
        .arg(format!("unix://{}", socket.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(dir.path().join("service.log")).unwrap())
        .spawn()
        .expect("starting `podman system service`");
    wait_for_socket(&socket);
    Service {
        child,
        socket,
        _dir: dir,
        store: Some((root, runroot)),
        _run: Some(run),
    }
}

pub async fn podman_client(service: &Service) -> Docker {
    let d = Docker::connect_with_host(&service.host()).unwrap();
    let started = Instant::now();
    while d.ping().await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "podman did not answer"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    d
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `sandalyst run` of the reference case against `host`: the three outputs, each
/// planted event flagged, and the engine named in one line.
pub fn reference_case(host: &str, extra: &[&str]) -> String {
    let (o, dir) = run_reference(host, extra);
    let stderr = text(&o.stderr);
    assert!(o.status.success(), "stderr:\n{stderr}");
    check_outputs(
        &dir.path().join("out"),
        &common::repo_root().join("examples/building_energy.events.json"),
    );
    stderr
}

/// `sandalyst run` of the reference case against `host`, as it ended.
pub fn run_reference(host: &str, extra: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let repo = common::repo_root();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let prompt = std::fs::read_to_string(repo.join("examples/anomaly_task.md")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_sandalyst"))
        .args(["run", "--input"])
        .arg(repo.join("examples/building_energy.csv"))
        .args(["--prompt", &prompt, "--out"])
        .arg(&out)
        .env(
            "SANDALYST_CONFIG",
            "/nonexistent/sandalyst-test-config.toml",
        )
        .env("SANDALYST_DATA_DIR", dir.path().join("data"))
        .env("DOCKER_HOST", host)
        .args(extra)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .current_dir(&repo)
        .output()
        .unwrap();
    (o, dir)
}

fn check_outputs(out: &Path, events: &Path) {
    for f in ["anomalies.csv", "energy_anomalies.png", "anomaly_report.md"] {
        assert!(out.join(f).is_file(), "{f} missing in {}", out.display());
    }
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(events).unwrap()).unwrap();
    let csv = std::fs::read_to_string(out.join("anomalies.csv")).unwrap();
    let report = std::fs::read_to_string(out.join("anomaly_report.md")).unwrap();
    assert!(report.is_ascii() && report.contains("deg C"));
    for e in truth["events"].as_array().unwrap() {
        let day = &e["start"].as_str().unwrap()[..10];
        assert!(csv.contains(day), "event on {day} not flagged:\n{csv}");
        assert!(report.contains(day), "event on {day} not in the report");
    }
}

async fn sh(sb: &DockerSandbox, cmd: &str) -> (ExecStatus, String) {
    let r = sb
        .shell(
            cmd,
            Duration::from_secs(60),
            &CancellationToken::new(),
            &|_, _| {},
        )
        .await
        .unwrap();
    (r.status, format!("{}{}", r.stdout, r.stderr))
}

/// The containment guarantees, checked from inside a sandbox on `engine`.
pub async fn containment(engine: &Docker, image: &str, enforced_limits: bool) {
    let config = SandboxConfig {
        image: image.to_string(),
        memory_bytes: 512 << 20,
        pids_limit: 128,
        workspace_bytes: 64 << 20,
        allow_no_limits: !enforced_limits,
        ..SandboxConfig::default()
    };
    let id = common::run_id("podman");
    let input = common::repo_root().join("examples/building_energy.csv");
    let manifest = Manifest::from_paths(&[input]).unwrap();
    let sb = DockerSandbox::start(engine, &id, &config, &manifest)
        .await
        .unwrap();

    // No network interface but loopback; no route out.
    let (_, nets) = sh(&sb, "ls /sys/class/net").await;
    assert_eq!(
        nets.split_whitespace().collect::<Vec<_>>(),
        ["lo"],
        "{nets}"
    );
    let (st, out) = sh(
        &sb,
        "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), timeout=3)'",
    )
    .await;
    assert_eq!(st, ExecStatus::Error, "{out}");
    // Not root, no capabilities, no new privileges.
    let (_, who) = sh(
        &sb,
        "id -u; id -g; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status",
    )
    .await;
    let who: Vec<&str> = who.split_whitespace().collect();
    assert_eq!(
        who,
        [
            "1000",
            "1000",
            "CapEff:",
            "0000000000000000",
            "NoNewPrivs:",
            "1"
        ]
    );
    // Read-only root; /tmp and /workspace writable.
    for path in ["/x", "/usr/x", "/etc/x", "/var/tmp/x"] {
        let (st, out) = sh(&sb, &format!("touch {path}")).await;
        assert_eq!(st, ExecStatus::Error, "{path} was writable: {out}");
    }
    let (st, out) = sh(&sb, "touch /tmp/x output/x && echo ok").await;
    assert_eq!((st, out.trim()), (ExecStatus::Ok, "ok"));
    // Inputs read-only.
    let (st, _) = sh(&sb, "echo x >> input/building_energy.csv").await;
    assert_eq!(st, ExecStatus::Error);
    // The workspace is a tmpfs bounded near inputs + 64 MiB: writing 200 MiB fails.
    let (_, df) = sh(&sb, "stat -f -c '%T %b %S' /workspace").await;
    let f: Vec<&str> = df.split_whitespace().collect();
    let bytes: u64 = f[1].parse::<u64>().unwrap() * f[2].parse::<u64>().unwrap();
    assert_eq!(f[0], "tmpfs", "{df}");
    assert!(
        (64 << 20..=66 << 20).contains(&bytes),
        "workspace size {bytes}"
    );
    let (st, out) = sh(&sb, "dd if=/dev/zero of=output/big bs=1M count=200").await;
    assert_eq!(st, ExecStatus::Error);
    assert!(out.contains("No space left on device"), "{out}");
    sh(&sb, "rm -f output/big").await;
    if enforced_limits {
        // The cgroup holds the memory and pids limits asked for.
        let (_, mem) = sh(
            &sb,
            "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max",
        )
        .await;
        assert_eq!(mem.trim(), (512u64 << 20).to_string());
        let (_, pids) = sh(
            &sb,
            "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max",
        )
        .await;
        assert_eq!(pids.trim(), "128");
        // A memory bomb is killed and the kernel restarts.
        let r = sb
            .python(
                "x = bytearray(1500 << 20)\nx[::4096] = b'x' * len(x[::4096])",
                Duration::from_secs(60),
                &CancellationToken::new(),
                &|_, _| {},
            )
            .await
            .unwrap();
        assert_eq!(r.status, ExecStatus::KernelRestarted, "{r:?}");
    }
    // Cancel interrupts running code at once and keeps the kernel.
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        c2.cancel();
    });
    let t = Instant::now();
    let r = sb
        .python(
            "import time\nwhile True: time.sleep(0.01)",
            Duration::from_secs(60),
            &cancel,
            &|_, _| {},
        )
        .await
        .unwrap();
    assert_eq!(r.status, ExecStatus::Cancelled);
    assert!(t.elapsed() < Duration::from_secs(10));
    let r = sb
        .python(
            "print(6 * 7)",
            Duration::from_secs(60),
            &CancellationToken::new(),
            &|_, _| {},
        )
        .await
        .unwrap();
    assert_eq!(r.stdout, "42\n");
    sb.close().await.unwrap();
    assert_eq!(common::containers_labelled(engine, &id).await, 0);
}

/// `sandalyst run` against `host` with code that would run for ten minutes, killed
/// with SIGKILL once the code runs: returns how long its container took to stop by
/// itself (None: still running after 20 s).
pub async fn orphan_stop_time(engine: &Docker, host: &str) -> Option<Duration> {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = dir.path().join("in.csv");
    std::fs::write(&input, "t,v\n1,2\n").unwrap();
    let slow = dir.path().join("slow.json");
    std::fs::write(
        &slow,
        serde_json::json!([{ "python": "import time\ntime.sleep(600)" }]).to_string(),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sandalyst"))
        .args(["run", "-i"])
        .arg(&input)
        .args(["-p", "slow", "--model"])
        .arg(format!("replay:{}", slow.display()))
        .env(
            "SANDALYST_CONFIG",
            "/nonexistent/sandalyst-test-config.toml",
        )
        .env("SANDALYST_DATA_DIR", &data)
        .env("DOCKER_HOST", host)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Until the code runs (its call is in the transcript).
    let mut run_id = None;
    for _ in 0..300 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let found = std::fs::read_dir(&data)
            .ok()
            .and_then(|d| d.filter_map(|e| e.ok()).next());
        if let Some(e) = found {
            let t = std::fs::read_to_string(e.path().join("transcript.jsonl")).unwrap_or_default();
            if t.contains("tool_call") {
                run_id = Some(e.file_name().to_string_lossy().into_owned());
                break;
            }
        }
    }
    let run_id = run_id.expect("the run did not start");
    tokio::time::sleep(Duration::from_secs(1)).await;
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = Instant::now();
    let running = || async {
        let ids = sandalyst::sandbox::docker::containers_of_run(engine, &run_id)
            .await
            .unwrap();
        let mut n = 0;
        for id in ids {
            // Gone already (another process's clean-up took the leftover): not running.
            let Ok(c) = engine.inspect_container(&id, None).await else {
                continue;
            };
            if c.state.and_then(|s| s.running) == Some(true) {
                n += 1;
            }
        }
        n
    };
    while running().await > 0 {
        if killed.elapsed() > Duration::from_secs(20) {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let took = killed.elapsed();
    sandalyst::sandbox::docker::remove_leftovers(engine)
        .await
        .unwrap();
    Some(took)
}

/// `false` after one printed line when Podman is not installed, so a machine without
/// it runs the rest. Where `SANDALYST_REQUIRE_ENGINE` is set (CI) the test goes on, and
/// `scripts/setup-podman.sh` installs Podman or the test fails with its reason.
pub fn installed_or_skip() -> bool {
    let installed = Command::new("podman")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if installed || common::engine_required() {
        return true;
    }
    common::skip("Podman is not installed (scripts/setup-podman.sh installs it)");
    false
}
