//! Faults around a run: the container killed from outside, the host disk full while
//! outputs are extracted, several runs at once. In every case: a clear status, the
//! input unchanged, earlier runs intact, no container left behind.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use bollard::query_parameters::KillContainerOptions;
use sandalyst::agent::{Event, EventKind, RunStatus};
use sandalyst::model::scripted::ScriptedModel;
use sandalyst::model::Item;
use sandalyst::run::{self, RunOutcome, RunRequest};
use sandalyst::store::Store;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

fn sha(path: &Path) -> String {
    format!("{:x}", Sha256::digest(std::fs::read(path).unwrap()))
}

fn input_in(dir: &Path) -> PathBuf {
    let input = dir.join("energy.csv");
    std::fs::write(&input, "t,v\n2024-01-01 00:00,1\n").unwrap();
    input
}

async fn request(input: &Path) -> RunRequest {
    let docker = common::engine().await;
    let mut req = RunRequest::new(vec![input.to_path_buf()], "fault".into());
    req.sandbox = common::config(&docker).await;
    req.limits.call_timeout = Duration::from_secs(60);
    req
}

async fn execute(store: &Store, req: RunRequest, model: &mut ScriptedModel) -> RunOutcome {
    let outcome = run::execute(store, req, model, &|_| {}, &CancellationToken::new())
        .await
        .unwrap();
    let docker = common::engine().await;
    assert_eq!(
        common::containers_labelled(&docker, &outcome.run_id).await,
        0,
        "container left behind"
    );
    outcome
}

#[tokio::test]
async fn the_container_killed_from_outside_fails_the_run_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_in(dir.path());
    let before = sha(&input);
    let store = Store::open(dir.path().join("runs")).unwrap();
    let mut model = ScriptedModel::new([
        ScriptedModel::python(
            "c1",
            "open('output/early.txt','w').write('kept?')\nimport time\ntime.sleep(60)",
        ),
        ScriptedModel::python("c2", "print('never')"),
    ]);
    // When the code starts running, kill the container as an outside actor would.
    let (tx, mut rx) = tokio::sync::watch::channel(None::<String>);
    let emit = |ev: Event| {
        if let EventKind::ToolCall { .. } = ev.kind {
            let _ = tx.send(Some(ev.session_id.clone()));
        }
    };
    let docker = common::engine().await;
    let killer = tokio::spawn(async move {
        rx.changed().await.unwrap();
        let run = rx.borrow().clone().unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
        // Found by the run's label: names are unique to each start.
        let ids = sandalyst::sandbox::docker::containers_of_run(&docker, &run)
            .await
            .unwrap();
        assert_eq!(ids.len(), 1, "{ids:?}");
        docker
            .kill_container(&ids[0], None::<KillContainerOptions>)
            .await
            .unwrap();
    });
    let req = request(&input).await;
    let outcome = run::execute(&store, req, &mut model, &emit, &CancellationToken::new())
        .await
        .unwrap();
    killer.await.unwrap();
    let docker = common::engine().await;
    assert_eq!(
        common::containers_labelled(&docker, &outcome.run_id).await,
        0
    );
    match &outcome.status {
        RunStatus::Failed { message } => {
            assert!(
                message.contains("the sandbox container is no longer running"),
                "{message}"
            )
        }
        s => panic!("expected a failed run, got {s:?}"),
    }
    let seen = model.seen.last().unwrap();
    let first = seen.iter().find_map(|i| match i {
        Item::ToolOutput { output, .. } => Some(output.clone()),
        _ => None,
    });
    assert!(first.unwrap().starts_with("status: kernel_restarted"));
    assert_eq!(sha(&input), before);
    let meta = store.open_run(&outcome.run_id).unwrap().meta;
    assert!(matches!(meta.status, Some(RunStatus::Failed { .. })));
}

#[tokio::test]
async fn runs_at_once_do_not_see_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("runs")).unwrap();
    let mut jobs = Vec::new();
    for i in 0..3 {
        let sub = dir.path().join(format!("u{i}"));
        std::fs::create_dir(&sub).unwrap();
        let input = input_in(&sub);
        let secret = format!("secret-of-run-{i}-{:x}", rand::random::<u64>());
        let code = format!(
            r#"
import os, subprocess
open('output/mine.txt', 'w').write('{secret}')
found = subprocess.run(['grep', '-rl', 'secret-of-run-', '/workspace', '/tmp'], capture_output=True, text=True).stdout.split()
print('found', sorted(found))
print('inputs', sorted(os.listdir('input')))
"#
        );
        let req = request(&input).await;
        jobs.push((
            input,
            secret,
            req,
            ScriptedModel::new([ScriptedModel::python("c1", &code)]),
        ));
    }
    let befores: Vec<String> = jobs.iter().map(|j| sha(&j.0)).collect();
    let results = futures_util::future::join_all(jobs.iter_mut().map(|(_, _, req, model)| {
        let req = req.clone();
        let store = &store;
        async move { execute(store, req, model).await }
    }))
    .await;
    for ((input, secret, _, model), (outcome, before)) in
        jobs.iter().zip(results.iter().zip(&befores))
    {
        assert_eq!(outcome.status, RunStatus::Finished);
        assert_eq!(&sha(input), before);
        let out = std::fs::read_to_string(outcome.outputs_dir.join("mine.txt")).unwrap();
        assert_eq!(&out, secret);
        let obs = model.seen.last().unwrap().iter().find_map(|i| match i {
            Item::ToolOutput { output, .. } => Some(output.clone()),
            _ => None,
        });
        let obs = obs.unwrap();
        assert!(
            obs.contains("found ['/workspace/output/mine.txt']"),
            "a run saw another's files: {obs}"
        );
        assert!(obs.contains("inputs ['energy.csv']"), "{obs}");
    }
    assert_eq!(store.list().unwrap().len(), 3);
}

/// Mount a small tmpfs for a run folder (needs root, as the suite's set-up does).
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn new(path: &Path, size: &str) -> SmallDisk {
        std::fs::create_dir_all(path).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(path)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(
            ok,
            "this test mounts a tmpfs and must run as root (scripts/test.sh does)"
        );
        SmallDisk(path.to_path_buf())
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[tokio::test]
async fn a_full_host_disk_while_extracting_fails_clearly_and_spares_earlier_runs() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_in(dir.path());
    let disk = SmallDisk::new(&dir.path().join("small"), "3m");
    let store = Store::open(disk.0.join("runs")).unwrap();

    let mut first = ScriptedModel::new([ScriptedModel::python(
        "c1",
        "open('output/small.txt','w').write('fits')",
    )]);
    let mut req = request(&input).await;
    req.max_archive_bytes = 1 << 20;
    let earlier = execute(&store, req.clone(), &mut first).await;
    assert_eq!(earlier.status, RunStatus::Finished);
    let earlier_meta = std::fs::read(earlier.run_dir.join("run.json")).unwrap();

    let mut second = ScriptedModel::new([ScriptedModel::python(
        "c1",
        "open('output/big.bin','wb').write(b'1' * (8 << 20))",
    )]);
    let outcome = execute(&store, req, &mut second).await;
    match &outcome.status {
        RunStatus::Failed { message } => {
            assert!(
                message.contains("No space left on device") && message.contains("big.bin"),
                "{message}"
            )
        }
        s => panic!("expected a failed run, got {s:?}"),
    }
    assert!(
        !outcome.run_dir.join("outputs/big.bin").exists(),
        "no partial output is left"
    );
    let meta = store.open_run(&outcome.run_id).unwrap().meta;
    assert!(
        matches!(meta.status, Some(RunStatus::Failed { .. })),
        "the failure is recorded"
    );
    assert_eq!(
        std::fs::read(earlier.run_dir.join("run.json")).unwrap(),
        earlier_meta
    );
    assert_eq!(
        std::fs::read_to_string(earlier.outputs_dir.join("small.txt")).unwrap(),
        "fits"
    );
    drop(disk);
}
