//! Staging against the real daemon: on a local Docker Engine a large world-readable
//! input is bind-mounted read-only (zero copy) behind a symlink at `input/<name>`;
//! everything else is copied; the sandbox and the session say which path each took.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sandalyst::agent::{EventKind, RunStatus, SetupStage};
use sandalyst::model::scripted::ScriptedModel;
use sandalyst::model::Item;
use sandalyst::sandbox::docker::DockerSandbox;
use sandalyst::sandbox::{ExecStatus, Sandbox, SandboxConfig};
use sandalyst::session::{DockerFactory, SessionConfig, Sessions};
use sandalyst::workspace::{CopyReason, Manifest, StagedInput, StagingMethod, StagingMode};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

const T: Duration = Duration::from_secs(60);
const BIG: usize = 2 << 20;

/// A CSV of `bytes` bytes (whole lines) with file mode `mode`.
fn csv(dir: &Path, name: &str, bytes: usize, mode: u32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let line = "2026-01-01 00:00:00,site-1,12.50\n";
    let text = line.repeat(bytes.div_ceil(line.len()));
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

fn sha256(path: &Path) -> String {
    Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
}

async fn py(sb: &impl Sandbox, code: &str) -> String {
    let r = sb
        .python(code, T, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap();
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    r.stdout
}

async fn start(name: &str, config: &SandboxConfig, inputs: &[PathBuf]) -> DockerSandbox {
    let docker = common::engine().await;
    let manifest = Manifest::from_paths(inputs).unwrap();
    DockerSandbox::start(&docker, &common::run_id(name), config, &manifest)
        .await
        .unwrap()
}

fn one(dest: &str, method: StagingMethod, bytes: u64, reason: Option<CopyReason>) -> StagedInput {
    StagedInput {
        dest: dest.into(),
        method,
        bytes,
        reason,
    }
}

const DENIED: &str = "import os\n\
    tries = [('write', lambda: open('input/big.csv', 'a').write('x')),\n\
    \x20        ('write mount', lambda: open(os.path.realpath('input/big.csv'), 'r+').write('x')),\n\
    \x20        ('remove', lambda: os.remove('input/big.csv')),\n\
    \x20        ('remove mount', lambda: os.remove(os.path.realpath('input/big.csv'))),\n\
    \x20        ('rename', lambda: os.rename('input/big.csv', 'output/moved.csv')),\n\
    \x20        ('rename mount', lambda: os.rename(os.path.realpath('input/big.csv'), '/tmp/moved.csv')),\n\
    \x20        ('rename folder', lambda: os.rename('/tmp/.sandalyst-inputs', '/tmp/other')),\n\
    \x20        ('chmod', lambda: os.chmod('input/big.csv', 0o666)),\n\
    \x20        ('chmod folder', lambda: os.chmod(os.path.dirname(os.path.realpath('input/big.csv')), 0o777)),\n\
    \x20        ('hardlink', lambda: os.link(os.path.realpath('input/big.csv'), '/tmp/h.csv')),\n\
    \x20        ('replace link', lambda: os.symlink('/etc/passwd', 'input/big.csv'))]\n\
    for what, f in tries:\n\
    \x20   try:\n\
    \x20       f(); print('ALLOWED', what)\n\
    \x20   except OSError:\n\
    \x20       print('denied', what)\n";

#[tokio::test]
async fn a_large_readable_input_is_bind_mounted_read_only_and_removal_hides_it() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let config = common::config(&docker).await;
    let dir = tempfile::tempdir().unwrap();
    let big = csv(dir.path(), "big.csv", BIG, 0o644);
    let bytes = std::fs::metadata(&big).unwrap().len();
    let sb = start("bind", &config, std::slice::from_ref(&big)).await;
    assert_eq!(
        sb.staging(),
        [one("big.csv", StagingMethod::BindMount, bytes, None)]
    );

    // The agent's Python reads it where it always did, byte for byte.
    let out = py(
        &sb,
        "import hashlib, os\nprint(hashlib.sha256(open('input/big.csv', 'rb').read()).hexdigest())\nprint(sorted(os.listdir('input')), os.path.getsize('input/big.csv'))",
    )
    .await;
    assert_eq!(
        out,
        format!("{}\n['big.csv'] {bytes}\n", sha256(&big)),
        "{out}"
    );
    // ... and can change it in no way.
    let out = py(&sb, DENIED).await;
    assert!(!out.contains("ALLOWED"), "{out}");
    assert_eq!(out.matches("denied").count(), 11, "{out}");
    let mounts = py(
        &sb,
        "print([l.split()[3].split(',')[0] for l in open('/proc/mounts') if '.sandalyst-inputs' in l])",
    )
    .await;
    assert_eq!(mounts, "['ro']\n");
    assert_eq!(sha256(&big), sha256(&big), "the original is untouched");
    assert_eq!(std::fs::metadata(&big).unwrap().len(), bytes);

    // The archive holds the input's content, as for a copy, and restores.
    let archive = dir.path().join("ws.tar");
    sb.archive_workspace(&archive, 1 << 30).await.unwrap();
    let mut tar = tar::Archive::new(std::fs::File::open(&archive).unwrap());
    let entry = tar
        .entries()
        .unwrap()
        .map(|e| e.unwrap())
        .find(|e| e.path().unwrap().to_str() == Some("workspace/input/big.csv"))
        .expect("the input is in the archive");
    assert_eq!(entry.header().entry_type(), tar::EntryType::Regular);
    assert_eq!(entry.size(), bytes);
    let restored = start("bind-restore", &config, &[]).await;
    restored.restore_workspace(&archive).await.unwrap();
    let out = py(
        &restored,
        "import hashlib, os\nprint(hashlib.sha256(open('input/big.csv', 'rb').read()).hexdigest(), os.path.islink('input/big.csv'), oct(os.stat('input/big.csv').st_mode & 0o777))",
    )
    .await;
    assert_eq!(out, format!("{} False 0o444\n", sha256(&big)));
    restored.close().await.unwrap();

    // Removed: gone from input/, and its mount out of reach.
    let hidden = py(&sb, "import os\nprint(os.path.realpath('input/big.csv'))").await;
    sb.remove_input("big.csv").await.unwrap();
    let out = py(
        &sb,
        &format!(
            "import os\nprint(os.listdir('input'))\ntry:\n    open({:?}).read(1); print('READABLE')\nexcept OSError as e:\n    print(type(e).__name__)",
            hidden.trim()
        ),
    )
    .await;
    assert_eq!(out, "[]\nPermissionError\n", "{out}");
    assert!(sb.staging().is_empty());
    let err = sb.remove_input("big.csv").await.unwrap_err().to_string();
    assert!(err.contains("no such input"), "{err}");

    // The same name added again comes as a copy (a running container gets no mounts).
    sb.add_inputs(&Manifest::from_paths(std::slice::from_ref(&big)).unwrap())
        .await
        .unwrap();
    assert_eq!(
        sb.staging(),
        [one(
            "big.csv",
            StagingMethod::Copy,
            bytes,
            Some(CopyReason::AddedLater)
        )]
    );
    let out = py(
        &sb,
        "import os\nprint(os.path.islink('input/big.csv'), os.path.getsize('input/big.csv'), oct(os.stat('input/big.csv').st_mode & 0o777))",
    )
    .await;
    assert_eq!(out, format!("False {bytes} 0o444\n"));
    sb.archive_workspace(&archive, 1 << 30).await.unwrap();
    sb.close().await.unwrap();
}

#[tokio::test]
async fn private_small_and_later_inputs_are_copied_and_work() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let config = common::config(&docker).await;
    let dir = tempfile::tempdir().unwrap();
    let private = csv(dir.path(), "private.csv", BIG, 0o600);
    let small = csv(dir.path(), "small.csv", 100, 0o644);
    let (pb, sbytes) = (
        std::fs::metadata(&private).unwrap().len(),
        std::fs::metadata(&small).unwrap().len(),
    );
    let sb = start("copy", &config, &[private.clone(), small]).await;
    assert_eq!(
        sb.staging(),
        [
            one(
                "private.csv",
                StagingMethod::Copy,
                pb,
                Some(CopyReason::NotWorldReadable)
            ),
            one(
                "small.csv",
                StagingMethod::Copy,
                sbytes,
                Some(CopyReason::Small)
            ),
        ]
    );
    let out = py(
        &sb,
        "import hashlib, os\nprint(hashlib.sha256(open('input/private.csv', 'rb').read()).hexdigest(), os.path.islink('input/private.csv'))",
    )
    .await;
    assert_eq!(out, format!("{} False\n", sha256(&private)));

    let later = csv(dir.path(), "later.csv", BIG, 0o644);
    sb.add_inputs(&Manifest::from_paths(std::slice::from_ref(&later)).unwrap())
        .await
        .unwrap();
    let staged = sb.staging();
    assert_eq!(staged.len(), 3);
    assert_eq!(
        (staged[2].dest.as_str(), staged[2].method, staged[2].reason),
        (
            "later.csv",
            StagingMethod::Copy,
            Some(CopyReason::AddedLater)
        )
    );
    let out = py(
        &sb,
        "import os\nprint(os.path.islink('input/later.csv'), os.path.getsize('input/later.csv'))",
    )
    .await;
    assert_eq!(
        out,
        format!("False {}\n", std::fs::metadata(&later).unwrap().len())
    );
    sb.close().await.unwrap();

    // The setting forces copies (`SANDALYST_STAGING=copy` is its override, checked in
    // staging_env.rs, a process of its own).
    let forced = SandboxConfig {
        staging: StagingMode::Copy,
        ..config
    };
    let sb = start("forced", &forced, std::slice::from_ref(&later)).await;
    assert_eq!(sb.staging()[0].reason, Some(CopyReason::Forced));
    let out = py(&sb, "import os\nprint(os.path.islink('input/later.csv'))").await;
    assert_eq!(out, "False\n");
    sb.close().await.unwrap();
}

#[tokio::test]
async fn a_session_says_which_path_its_inputs_took_and_what_changed_on_the_host() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut config = SessionConfig::default();
    config.sandbox = common::config(&docker).await;
    let sessions = Sessions::new(dir.path().join("sessions"), Arc::new(DockerFactory)).unwrap();
    let session = sessions.create(config).await.unwrap();
    let mut events = session.subscribe();
    let big = csv(dir.path(), "big.csv", BIG, 0o644);
    let small = csv(dir.path(), "small.csv", 100, 0o644);
    session.add_files(vec![big.clone(), small]).await.unwrap();

    let model = ScriptedModel::new([
        ScriptedModel::python("c1", "print(len(open('input/big.csv').read()))"),
        // Waits for the change made on the host after c1 (at most 20 s).
        ScriptedModel::python(
            "c2",
            "import time\nfor _ in range(200):\n    s = open('input/big.csv').read()\n    if s.endswith('CHANGED'):\n        break\n    time.sleep(0.1)\nprint(s[-7:])",
        ),
    ]);
    let log = model.log.clone();
    // The host file changes between the two calls: the model saw the new content,
    // and the run record must say so.
    let big_path = big.clone();
    let h = session.ask("look".into(), Box::new(model)).unwrap();
    let mut appended = false;
    let mut stages = Vec::new();
    loop {
        let e = match tokio::time::timeout(Duration::from_secs(120), events.recv()).await {
            Ok(Ok(e)) => e,
            _ => break,
        };
        match &e.kind {
            EventKind::Setup(s @ SetupStage::Staged { .. }) => stages.push(s.clone()),
            EventKind::CellResult { call_id, .. } if call_id == "c1" && !appended => {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&big_path)
                    .unwrap();
                f.write_all(b"CHANGED").unwrap();
                appended = true;
            }
            EventKind::AskFinished { .. } => break,
            _ => {}
        }
    }
    let outcome = h.outcome().await;
    assert!(
        matches!(
            outcome.status,
            RunStatus::Finished | RunStatus::MaxTurns { .. }
        ),
        "{:?}",
        outcome.status
    );
    assert_eq!(
        stages,
        [
            SetupStage::Staged {
                method: StagingMethod::BindMount,
                files: 1,
                bytes: std::fs::metadata(&big).unwrap().len() - 7,
                reason: None
            },
            SetupStage::Staged {
                method: StagingMethod::Copy,
                files: 1,
                bytes: std::fs::metadata(dir.path().join("small.csv"))
                    .unwrap()
                    .len(),
                reason: Some(CopyReason::Small)
            },
        ]
    );
    let last = outputs_seen(&log);
    assert!(last.last().unwrap().contains("CHANGED"), "{last:?}");

    // run.json: each file's path, and the change seen with the size taken again.
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(session.dir().join("run.json")).unwrap()).unwrap();
    let files = run["files"].as_array().unwrap();
    assert_eq!(files[0]["name"], "big.csv");
    assert_eq!(files[0]["staged_by"], "bind_mount");
    assert_eq!(files[0]["changed_on_host"], true);
    assert_eq!(files[0]["bytes"], std::fs::metadata(&big).unwrap().len());
    assert_eq!(files[1]["staged_by"], "copy");
    assert_eq!(files[1]["copy_reason"], "small");
    assert!(files[1].get("changed_on_host").is_none());

    // Removed from the session: the model's next look does not find it.
    session.remove_file("big.csv").await.unwrap();
    let model = ScriptedModel::new([ScriptedModel::python(
        "d1",
        "import os\nprint(os.listdir('input'))",
    )]);
    let log = model.log.clone();
    let h = session.ask("again".into(), Box::new(model)).unwrap();
    h.outcome().await;
    let out = outputs_seen(&log);
    assert!(out.last().unwrap().contains("['small.csv']"), "{out:?}");
    session.close().await;
}

/// The tool outputs the scripted model saw in its last request.
fn outputs_seen(
    log: &std::sync::Arc<std::sync::Mutex<Vec<sandalyst::model::scripted::Seen>>>,
) -> Vec<String> {
    let seen = log.lock().unwrap();
    seen.last()
        .unwrap()
        .items
        .iter()
        .filter_map(|i| match i {
            Item::ToolOutput { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect()
}
