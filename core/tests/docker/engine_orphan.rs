//! No orphans: SIGTERM and SIGHUP on a running `sandalyst run` are handled like Ctrl-C
//! (code interrupted, container removed, exit 130), and the container of an app killed
//! outright (SIGKILL: no clean-up of any kind) stops by itself within seconds, because
//! its PID 1 lives only as long as the app holds its stdin.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn start_slow_run(dir: &Path, code: &str) -> (Child, PathBuf, PathBuf) {
    let data = dir.join("data");
    let input = dir.join("energy.csv");
    std::fs::write(&input, "t,v\n1,2\n").unwrap();
    let slow = dir.join("slow.json");
    std::fs::write(&slow, serde_json::json!([{ "python": code }]).to_string()).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_sandalyst"))
        .args(["run", "-i"])
        .arg(&input)
        .args(["-p", "slow", "--model"])
        .arg(format!("replay:{}", slow.display()))
        .env(
            "SANDALYST_CONFIG",
            "/nonexistent/sandalyst-test-config.toml",
        )
        .env("SANDALYST_DATA_DIR", &data)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run_dir = wait_until_code_runs(&data);
    std::thread::sleep(Duration::from_secs(1));
    (child, data, run_dir)
}

fn wait_until_code_runs(data: &Path) -> PathBuf {
    for _ in 0..300 {
        std::thread::sleep(Duration::from_millis(200));
        let found = std::fs::read_dir(data)
            .ok()
            .and_then(|d| d.filter_map(|e| e.ok()).next());
        if let Some(e) = found {
            let t = std::fs::read_to_string(e.path().join("transcript.jsonl")).unwrap_or_default();
            // The call is kept when the model makes it, which may be before the
            // sandbox is there (the model is asked while it starts); the inputs'
            // staging is saved once it has started.
            let meta = std::fs::read_to_string(e.path().join("run.json")).unwrap_or_default();
            if t.contains("tool_call") && meta.contains("staged_by") {
                return e.path();
            }
        }
    }
    panic!("the run did not start");
}

fn run_id(run_dir: &Path) -> String {
    run_dir.file_name().unwrap().to_str().unwrap().to_string()
}

/// Running containers of this run, and all of them.
async fn containers(run_id: &str) -> (usize, usize) {
    let docker = common::engine().await;
    let mut running = 0;
    let ids = sandalyst::sandbox::docker::containers_of_run(&docker, run_id)
        .await
        .unwrap();
    for id in &ids {
        // Gone already (another process's clean-up took the leftover): not running.
        let Ok(c) = docker.inspect_container(id, None).await else {
            continue;
        };
        if c.state.and_then(|s| s.running) == Some(true) {
            running += 1;
        }
    }
    (running, ids.len())
}

fn signal(child: &Child, name: &str) {
    // The shell's builtin kill: no procps needed on a minimal machine.
    let ok = Command::new("sh")
        .args(["-c", &format!("kill -{name} {}", child.id())])
        .status()
        .unwrap();
    assert!(ok.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_and_sighup_cancel_like_ctrl_c() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    for sig in ["TERM", "HUP"] {
        let dir = tempfile::tempdir().unwrap();
        let (child, _, run_dir) = tokio::task::spawn_blocking({
            let d = dir.path().to_path_buf();
            move || start_slow_run(&d, "import time\ntime.sleep(120)")
        })
        .await
        .unwrap();
        let started = Instant::now();
        signal(&child, sig);
        let o = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "SIG{sig} took {:?}",
            started.elapsed()
        );
        assert_eq!(o.status.code(), Some(130), "SIG{sig}: {stderr}");
        assert!(stderr.contains("ask cancelled"), "SIG{sig}: {stderr}");
        assert_eq!(containers(&run_id(&run_dir)).await, (0, 0), "SIG{sig}");
        let meta = std::fs::read_to_string(run_dir.join("run.json")).unwrap();
        assert!(meta.contains("\"cancelled\""), "SIG{sig}: {meta}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_container_of_a_killed_app_stops_by_itself_within_seconds() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Code that would run for ten minutes, in a background loop too.
    let code = "import subprocess, time\nsubprocess.Popen(['sh', '-c', 'while :; do :; done'])\ntime.sleep(600)";
    let (mut child, data, run_dir) = tokio::task::spawn_blocking({
        let d = dir.path().to_path_buf();
        move || start_slow_run(&d, code)
    })
    .await
    .unwrap();
    let id = run_id(&run_dir);
    assert_eq!(containers(&id).await, (1, 1));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let killed = Instant::now();
    while containers(&id).await.0 > 0 {
        assert!(
            killed.elapsed() < Duration::from_secs(20),
            "the orphaned container still runs {:?} after its app was killed",
            killed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let stopped = killed.elapsed();
    eprintln!("orphan stopped {stopped:?} after the app was killed");
    // The run is marked interrupted at the next start, as before.
    let o = Command::new(env!("CARGO_BIN_EXE_sandalyst"))
        .args(["runs", "list"])
        .env(
            "SANDALYST_CONFIG",
            "/nonexistent/sandalyst-test-config.toml",
        )
        .env("SANDALYST_DATA_DIR", &data)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&o.stdout);
    assert!(list.contains(&id) && list.contains("interrupted"), "{list}");
    // And the stopped leftover goes at the next clean-up.
    let docker = common::engine().await;
    sandalyst::sandbox::docker::remove_leftovers(&docker)
        .await
        .unwrap();
    assert_eq!(containers(&id).await, (0, 0));
}
