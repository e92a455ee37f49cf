//! Hostile code run through the agent loop with a scripted model in the real
//! container. Each attack must be contained, reported to the model as a clear
//! observation, and leave the run able to take its next step and finish; the
//! user's input must be unchanged and no container may be left behind.
//! The results are tabulated in docs/SECURITY.md.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use sandalyst::agent::RunStatus;
use sandalyst::model::scripted::{ScriptedModel, Step};
use sandalyst::run::{self, RunOutcome, RunRequest};
use sandalyst::store::Store;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

const ALIVE: &str = "print('still alive', 6 * 7)";

struct Done {
    outcome: RunOutcome,
    /// The observations the model saw, in order.
    observations: Vec<String>,
    store: Store,
    _dir: tempfile::TempDir,
}

/// The sandbox ran under gVisor (asked, or `auto` where runsc is registered): the
/// isolation in force, as the run recorded it.
fn under_gvisor(d: &Done) -> bool {
    let run = d.store.open_run(&d.outcome.run_id).unwrap();
    run.meta.isolation.as_deref() == Some("gvisor")
}

fn sha(path: &Path) -> String {
    Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
}

/// Run `steps` then one last `ALIVE` step; check what every hostile run must hold.
async fn hostile(steps: Vec<Step>, tweak: impl FnOnce(&mut RunRequest)) -> Done {
    let docker = common::engine().await;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("energy.csv");
    std::fs::write(&input, "t,v\n2024-01-01 00:00,1\n").unwrap();
    let before = sha(&input);
    let store = Store::open(dir.path().join("runs")).unwrap();
    let mut req = RunRequest::new(vec![input.clone()], "hostile".into());
    req.config.sandbox = common::config(&docker).await;
    req.config.limits.call_timeout = Duration::from_secs(60);
    tweak(&mut req);
    let mut all = steps;
    all.push(ScriptedModel::python("alive", ALIVE));
    let mut model = ScriptedModel::new(all);
    let outcome = run::execute(
        &common::sessions(&store),
        req,
        &mut model,
        &|_| {},
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(sha(&input), before, "the user's input changed");
    assert_eq!(
        common::containers_labelled(&docker, &outcome.run_id).await,
        0,
        "container left behind"
    );
    let observations = common::tool_outputs(model.seen.last().unwrap());
    Done {
        outcome,
        observations,
        store,
        _dir: dir,
    }
}

/// The run went on after the attack: it finished and the last step ran.
fn went_on(d: &Done) {
    assert_eq!(
        d.outcome.status,
        RunStatus::Finished,
        "{:?}",
        d.observations
    );
    assert!(
        d.observations.last().unwrap().contains("still alive 42"),
        "{:?}",
        d.observations.last()
    );
}

fn py(code: &str) -> Step {
    ScriptedModel::python("attack", code)
}

fn sh(command: &str) -> Step {
    Step::Reply(vec![ScriptedModel::call(
        "attack",
        "shell",
        serde_json::json!({ "command": command }),
    )])
}

#[tokio::test]
async fn network_is_unreachable_from_inside() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let gateway = std::process::Command::new("sh")
        .args([
            "-c",
            "ip -4 -o addr show docker0 | awk '{print $4}' | cut -d/ -f1",
        ])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let host = if gateway.is_empty() {
        "127.0.0.1".to_string()
    } else {
        gateway
    };
    // A listener of our own on this machine: the only address any test aims at.
    let listener = std::net::TcpListener::bind((host.as_str(), 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        r#"
import socket
ifaces = sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:])
routes = open('/proc/net/route').readlines()[1:]
print('ifaces', ifaces, 'routes', len(routes))
for target in [('{host}', {port}), ('127.0.0.1', {port})]:
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect(target); print('CONNECTED', target)
    except OSError as e:
        print('connect refused', target, e)
if ifaces == ['lo']:  # only then can no query leave the machine
    try:
        socket.getaddrinfo('sandalyst-test.invalid', 80); print('RESOLVED')
    except OSError as e:
        print('dns failed', e)
"#
    );
    let d = hostile(vec![py(&code)], |_| {}).await;
    let o = &d.observations[0];
    assert!(o.contains("ifaces ['lo'] routes 0"), "{o}");
    assert!(
        !o.contains("CONNECTED") && o.matches("connect refused").count() == 2,
        "{o}"
    );
    assert!(o.contains("dns failed") && !o.contains("RESOLVED"), "{o}");
    went_on(&d);
}

#[tokio::test]
async fn writes_outside_the_workspace_and_tmp_fail() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let code = r#"
import os
for p in ['/etc/passwd', '/usr/lib/x', '/x', '/root/x', '/var/tmp/x', '/proc/sys/kernel/hostname', '/sys/kernel/x']:
    try:
        with open(p, 'a') as f: f.write('x')
        print('WROTE', p)
    except OSError as e:
        print('denied', p, e.strerror)
for p in ['/workspace/ok', '/tmp/ok']:
    open(p, 'w').write('1'); print('ok', p)
try:
    os.mknod('/workspace/dev', 0o600 | 0o020000, os.makedev(1, 3)); print('MKNOD')
except OSError as e:
    print('mknod denied', e.strerror)
"#;
    let d = hostile(vec![py(code)], |_| {}).await;
    let o = &d.observations[0];
    assert!(!o.contains("WROTE") && !o.contains("MKNOD"), "{o}");
    assert_eq!(
        o.lines().filter(|l| l.starts_with("denied /")).count(),
        7,
        "{o}"
    );
    assert!(o.contains("mknod denied"), "{o}");
    assert!(o.contains("ok /workspace/ok") && o.contains("ok /tmp/ok"));
    went_on(&d);
}

#[tokio::test]
async fn host_files_the_docker_socket_and_the_engine_are_out_of_reach() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let marker =
        std::env::temp_dir().join(format!("sandalyst-host-marker-{}", rand::random::<u32>()));
    std::fs::write(&marker, "host secret").unwrap();
    let code = format!(
        r#"
import os
for p in ['{marker}', '/var/run/docker.sock', '/run/docker.sock', '/var/lib/docker', '/root', '/home']:
    print('exists' if os.path.exists(p) else 'absent', p)
mounts = open('/proc/mounts').read()
print('docker.sock in mounts:', 'docker.sock' in mounts)
print('workspace mounts:', sum(1 for l in mounts.splitlines() if ' /workspace ' in l))
try:
    print(open('/etc/shadow').read()[:10])
except OSError as e:
    print('shadow denied', e.strerror)
"#,
        marker = marker.display()
    );
    let d = hostile(vec![py(&code)], |_| {}).await;
    std::fs::remove_file(&marker).unwrap();
    let o = &d.observations[0];
    assert!(o.contains(&format!("absent {}", marker.display())), "{o}");
    for p in [
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/var/lib/docker",
    ] {
        assert!(o.contains(&format!("absent {p}")), "{p}: {o}");
    }
    assert!(
        o.contains("docker.sock in mounts: False") && o.contains("workspace mounts: 1"),
        "{o}"
    );
    assert!(o.contains("shadow denied"), "{o}");
    went_on(&d);
}

#[tokio::test]
async fn host_environment_and_api_keys_never_reach_the_sandbox() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    if !common::in_own_process(&[]) {
        return;
    }
    let secret = format!("sk-sandalyst-test-{:016x}", rand::random::<u64>());
    // In a process of its own (above): no other test sees these.
    std::env::set_var("OPENAI_API_KEY", &secret);
    std::env::set_var("ANTHROPIC_API_KEY", &secret);
    std::env::set_var("SANDALYST_HOST_ONLY", &secret);
    let code = r#"
import os
print(sorted(os.environ))
for pid in ['self', '1']:
    try:
        print(pid, open('/proc/%s/environ' % pid, 'rb').read().replace(b'\0', b' ').decode())
    except OSError as e:
        print(pid, 'unreadable', e.strerror)
"#;
    let d = hostile(
        vec![py(code), sh("env; cat /proc/1/cmdline | tr '\\0' ' '")],
        |_| {},
    )
    .await;
    for o in &d.observations {
        assert!(
            !o.contains(&secret)
                && !o.contains("OPENAI_API_KEY")
                && !o.contains("SANDALYST_HOST_ONLY"),
            "{o}"
        );
    }
    // Nor the run folder (transcript, metadata, archive).
    let run = d.store.open_run(&d.outcome.run_id).unwrap();
    for f in ["run.json", "transcript.jsonl", "workspace.tar"] {
        let bytes = std::fs::read(run.path.join(f)).unwrap();
        assert!(!String::from_utf8_lossy(&bytes).contains(&secret), "{f}");
    }
    went_on(&d);
}

#[tokio::test]
async fn a_fork_bomb_hits_the_pids_limit_and_the_run_goes_on() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let count = "import os, subprocess, time\ntime.sleep(0.5)\n\
        procs = [p for p in os.listdir('/proc') if p.isdigit()]\n\
        print('processes', len(procs))\n\
        print(subprocess.run(['echo', 'forked'], capture_output=True, text=True).stdout)";
    let d = hostile(
        vec![
            // One that runs into the time limit, one that returns at once and
            // leaves the bomb running in the background.
            sh("f() { f | f & }; f; sleep 30"),
            py(count),
            sh("f() { f | f & }; f; echo launched"),
            py(count),
            // Background processes do not outlive the call that started them.
            sh("sleep 300 & sleep 301 & echo started"),
            // The two sleeps by their argv (the kernel's own command line is its
            // source, which may hold any number).
            py("import os\nprint('left', sum(1 for p in os.listdir('/proc') if p.isdigit() and open('/proc/%s/cmdline' % p, 'rb').read() in (b'sleep\\x00300\\x00', b'sleep\\x00301\\x00')))"),
        ],
        // Room for the counting cells on a loaded machine under gVisor (5 s was not:
        // beside two busy loops the first count after the bomb ran past it).
        |r| r.config.limits.call_timeout = Duration::from_secs(15),
    )
    .await;
    assert!(
        d.observations[0].contains("status: timeout")
            || d.observations[0].contains("status: error")
    );
    for o in [&d.observations[1], &d.observations[3]] {
        let n: usize = o
            .split("processes ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(999);
        assert!(n < 10, "the bomb's processes are gone: {o}");
        assert!(o.contains("forked"), "processes can be started again: {o}");
    }
    assert!(
        d.observations[5].contains("left 0"),
        "{}",
        d.observations[5]
    );
    went_on(&d);
}

#[tokio::test]
async fn a_memory_bomb_is_killed_and_the_kernel_restarts() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let d = hostile(
        vec![
            py("x = 1\nhog = b'x' * (3 << 30)"),
            py("print('x' in globals())"),
        ],
        |r| r.config.sandbox.memory_bytes = 512 << 20,
    )
    .await;
    let o = &d.observations[0];
    if under_gvisor(&d) {
        // gVisor has no OOM killer of its own: each process's address space is capped
        // below the memory limit (RLIMIT_AS), so the allocation fails in the code and
        // the kernel, with its state, lives on.
        assert!(
            o.starts_with("status: error") && o.contains("MemoryError"),
            "{o}"
        );
        assert!(d.observations[1].contains("True"), "state was kept");
        went_on(&d);
        return;
    }
    assert!(o.starts_with("status: kernel_restarted"), "{o}");
    assert!(
        o.contains("memory limit of 512 MiB") && o.contains("lost"),
        "{o}"
    );
    assert!(
        d.observations[1].contains("False"),
        "state was lost and said so"
    );
    went_on(&d);
}

#[tokio::test]
async fn an_infinite_loop_is_interrupted_at_the_timeout() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let d = hostile(
        vec![py("n = 0\nwhile True:\n    n += 1"), py("print(n > 0)")],
        // The limit holds for every step, the quick ones too: 3 s once timed out a
        // `print` under gVisor while a memory bomb ran beside it on a 2-core CI machine.
        |r| r.config.limits.call_timeout = Duration::from_secs(10),
    )
    .await;
    assert!(
        d.observations[0].starts_with("status: timeout")
            && d.observations[0].contains("KeyboardInterrupt"),
        "{:?}",
        d.observations
    );
    assert!(
        d.observations[1].contains("True"),
        "the kernel kept its state: {:?}",
        d.observations
    );
    went_on(&d);
}

#[tokio::test]
async fn a_flood_of_output_reaches_the_model_capped_and_marked() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let d = hostile(
        vec![
            py("import sys\nfor i in range(100):\n    sys.stdout.write('x' * 1_000_000)\nprint('END')"),
            sh("head -c 100000000 /dev/zero | tr '\\0' y; echo END"),
        ],
        |_| {},
    )
    .await;
    for o in &d.observations[..2] {
        assert!(o.len() < 64 << 10, "{} bytes", o.len());
        assert!(o.contains("output truncated"), "marked");
    }
    assert!(d.observations[0].contains("END"), "the tail is kept");
    let transcript = d
        .store
        .open_run(&d.outcome.run_id)
        .unwrap()
        .path
        .join("transcript.jsonl");
    assert!(
        std::fs::metadata(transcript).unwrap().len() < 256 << 10,
        "the transcript stays small"
    );
    went_on(&d);
}

#[tokio::test]
async fn filling_the_disk_gives_a_clear_error() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let code = r#"
import errno
for path in ['output/fill.bin', '/tmp/fill.bin']:
    try:
        with open(path, 'wb') as f:
            while True:
                f.write(b'\0' * (1 << 20))
    except OSError as e:
        print(path, errno.errorcode[e.errno], e.strerror)
import os; os.remove('output/fill.bin')
"#;
    let d = hostile(vec![py(code)], |r| {
        r.config.sandbox.workspace_bytes = 64 << 20;
        r.config.sandbox.tmp_bytes = 16 << 20;
    })
    .await;
    let o = &d.observations[0];
    assert!(
        o.contains("output/fill.bin ENOSPC") && o.contains("/tmp/fill.bin ENOSPC"),
        "{o}"
    );
    went_on(&d);
}

#[tokio::test]
async fn hostile_outputs_are_refused_or_capped_and_nothing_lands_outside_the_run() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let code = r#"
import os
os.symlink('/etc/passwd', 'output/passwd')
os.symlink('../../../../../../root/.ssh/id_rsa', 'output/key')
open('output/real.txt', 'w').write('real')
os.link('output/real.txt', 'output/hard.txt')
os.mkfifo('output/fifo')
os.makedirs('output/many')
for i in range(10000):
    open('output/many/%05d.txt' % i, 'w').write('x')
with open('output/sparse.bin', 'wb') as f:
    f.truncate(5 << 30)
print('made')
"#;
    let d = hostile(vec![py(code)], |r| {
        r.config.collect.max_files = 2000;
        r.config.max_archive_bytes = 256 << 20;
    })
    .await;
    assert!(d.observations[0].contains("made"), "{}", d.observations[0]);
    let run = d.store.open_run(&d.outcome.run_id).unwrap();
    let refused: Vec<_> = run.meta.refused.iter().map(|r| r.path.as_str()).collect();
    for name in ["passwd", "key", "fifo", "sparse.bin"] {
        // gVisor keeps a named pipe inside its own kernel: the host's copy of the
        // workspace never has it, so there is nothing to refuse.
        if name == "fifo" && under_gvisor(&d) {
            assert!(!run.meta.outputs.iter().any(|o| o.path == name));
            continue;
        }
        assert!(
            refused.contains(&name),
            "{name} not refused (of {} refused)",
            refused.len()
        );
    }
    assert!(run.meta.outputs.len() <= 2000, "{}", run.meta.outputs.len());
    assert!(refused.iter().filter(|p| p.starts_with("many/")).count() >= 8000);
    // Only the run's own folder was written: no link, no stray file beside it.
    let outputs = run.outputs_dir();
    assert!(std::fs::symlink_metadata(outputs.join("passwd")).is_err());
    assert!(std::fs::symlink_metadata(outputs.join("sparse.bin")).is_err());
    let siblings: Vec<PathBuf> = std::fs::read_dir(run.path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(siblings, vec![run.path.clone()]);
    assert!(
        !run.path.join("workspace.tar").exists(),
        "a workspace over the archive cap is not kept"
    );
    went_on(&d);
}
