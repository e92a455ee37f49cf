//! Faults around a run: the container killed from outside, the host disk full while
//! outputs are extracted, several runs at once. In every case: a clear status, the
//! input unchanged, earlier runs intact, no container left behind.

use crate::common;

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
    Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
}

fn input_in(dir: &Path) -> PathBuf {
    let input = dir.join("energy.csv");
    std::fs::write(&input, "t,v\n2024-01-01 00:00,1\n").unwrap();
    input
}

async fn request(input: &Path) -> RunRequest {
    let docker = common::engine().await;
    let mut req = RunRequest::new(vec![input.to_path_buf()], "fault".into());
    req.config.sandbox = common::config(&docker).await;
    req.config.limits.call_timeout = Duration::from_secs(60);
    req
}

async fn execute(store: &Store, req: RunRequest, model: &mut ScriptedModel) -> RunOutcome {
    let outcome = run::execute(
        &common::sessions(store),
        req,
        model,
        &|_| {},
        &CancellationToken::new(),
    )
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
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = input_in(dir.path());
    let before = sha(&input);
    let store = Store::open(dir.path().join("runs")).unwrap();
    let mut model = ScriptedModel::new([
        ScriptedModel::python(
            "c1",
            "print('running', flush=True)\nopen('output/early.txt','w').write('kept?')\nimport time\ntime.sleep(60)",
        ),
        ScriptedModel::python("c2", "print('never')"),
    ]);
    // When the code runs (its first line printed), kill the container as an outside
    // actor would.
    let (tx, mut rx) = tokio::sync::watch::channel(None::<String>);
    let emit = |ev: Event| {
        if let EventKind::CellOutput { .. } = ev.kind {
            let _ = tx.send(Some(ev.session_id.to_string()));
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
    let outcome = run::execute(
        &common::sessions(&store),
        req,
        &mut model,
        &emit,
        &CancellationToken::new(),
    )
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
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
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
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = input_in(dir.path());
    let disk = SmallDisk::new(&dir.path().join("small"), "3m");
    let store = Store::open(disk.0.join("runs")).unwrap();

    let mut first = ScriptedModel::new([ScriptedModel::python(
        "c1",
        "open('output/small.txt','w').write('fits')",
    )]);
    let mut req = request(&input).await;
    req.config.max_archive_bytes = 1 << 20;
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

// ---- the store under crashes: archive, transcript, full disk ------------------------
//
// Each case ends with every earlier output byte-identical and the next ask working.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use sandalyst::model::scripted::Step;
use sandalyst::session::{AskOutcome, DockerFactory, Session, SessionConfig, Sessions};
use sandalyst::store::{check_archive, ArchiveCheck};

/// Every file under `dir`, relative path to bytes.
fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out
}

/// Temporary files of the store's atomic writes, and half-collected outputs.
fn leftovers(session_dir: &Path) -> Vec<String> {
    std::fs::read_dir(session_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") || n == "outputs.new" || n == "outputs.old")
        .collect()
}

fn assert_kept(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) {
    for (name, bytes) in before {
        assert_eq!(
            after.get(name),
            Some(bytes),
            "the earlier output {name} was lost or changed; now: {:?}",
            after.keys().collect::<Vec<_>>()
        );
    }
}

async fn docker_config() -> SessionConfig {
    let docker = common::engine().await;
    let mut config = SessionConfig::default();
    config.sandbox = common::config(&docker).await;
    config.limits.call_timeout = Duration::from_secs(60);
    config
}

/// A session under `root` with one input and one finished ask that made outputs.
async fn session_with_outputs(root: &Path, input_dir: &Path) -> (Sessions, Session) {
    let sessions = Sessions::new(root.to_path_buf(), Arc::new(DockerFactory)).unwrap();
    let session = sessions.create(docker_config().await).await.unwrap();
    session.add_files(vec![input_in(input_dir)]).await.unwrap();
    let (outcome, _, _) = ask(
        &session,
        "make the first outputs",
        vec![
            ScriptedModel::python(
                "c1",
                "import os\nos.makedirs('output/sub', exist_ok=True)\n\
                 open('output/report.md','w').write('# first report\\n')\n\
                 open('output/sub/table.csv','w').write('a,b\\n1,2\\n')\n\
                 open('output/chart.png','wb').write(bytes(range(256)) * 40)",
            ),
            say("made three files"),
        ],
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    (sessions, session)
}

fn say(text: &str) -> Step {
    Step::Reply(vec![Item::Assistant { text: text.into() }])
}

/// Run one ask; its outcome, the status lines it showed, and the first prompt the
/// model was sent (with the app's notes).
async fn ask(
    session: &Session,
    prompt: &str,
    steps: Vec<Step>,
) -> (AskOutcome, Vec<String>, String) {
    let model = ScriptedModel::new(steps);
    let log = model.log.clone();
    let mut all = session.subscribe();
    let mut h = session.ask(prompt.into(), Box::new(model)).unwrap();
    while h.events.recv().await.is_some() {}
    let outcome = h.outcome().await;
    let mut statuses = Vec::new();
    while let Ok(ev) = all.try_recv() {
        // What the user was told as lines: free text and typed notices alike.
        match ev.kind {
            EventKind::Status { message } => statuses.push(message),
            EventKind::Notice(n) => statuses.push(n.to_string()),
            _ => {}
        }
    }
    let first = log
        .lock()
        .unwrap()
        .first()
        .and_then(|s| {
            s.items.iter().rev().find_map(|i| match i {
                Item::User { text } => Some(text.clone()),
                _ => None,
            })
        })
        .unwrap_or_default();
    (outcome, statuses, first)
}

/// The observations the model got back in this ask.
fn observations(outcome_items: &[Item]) -> String {
    outcome_items
        .iter()
        .filter_map(|i| match i {
            Item::ToolOutput { output, .. } => Some(output.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const LOOK: &str = "import os\n\
    print('outputs', sorted(os.path.relpath(os.path.join(d, f), 'output') for d, _, fs in os.walk('output') for f in fs))\n\
    print('inputs', sorted(os.listdir('input')))\n\
    print('report', open('output/report.md').read().strip())\n\
    open('output/next.txt','w').write('the next ask ran')";

/// Reopen the session in a new `Sessions` (as a new process would), ask it to look at
/// its files, and check what it saw, what it was told and what the host kept.
async fn reopen_and_look(root: &Path, id: &str, told: &str) {
    let sessions = Sessions::new(root.to_path_buf(), Arc::new(DockerFactory)).unwrap();
    let session = sessions.open(id).await.unwrap();
    let before = files_of(&session.outputs_dir());
    let (outcome, statuses, prompt) = ask(
        &session,
        "look again",
        vec![ScriptedModel::python("c1", LOOK), say("looked")],
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    assert!(prompt.contains(told), "the model was told: {prompt}");
    assert!(
        prompt.contains("output/ restored from the app's copy (3 files)"),
        "{prompt}"
    );
    assert!(!prompt.contains("as they were"), "{prompt}");
    assert!(
        statuses.iter().any(|s| s.contains(told)),
        "the user was told too: {statuses:?}"
    );
    let seen = observations(&session.items());
    assert!(
        seen.contains("outputs ['chart.png', 'report.md', 'sub/table.csv']"),
        "{seen}"
    );
    assert!(seen.contains("inputs ['energy.csv']"), "{seen}");
    assert!(seen.contains("report # first report"), "{seen}");
    let after = files_of(&session.outputs_dir());
    assert_kept(&before, &after);
    assert_eq!(after["next.txt"], b"the next ask ran");
    assert!(matches!(
        check_archive(&session.dir().join("workspace.tar")),
        ArchiveCheck::Complete(_)
    ));
    session.close().await;
    assert!(
        leftovers(session.dir()).is_empty(),
        "{:?}",
        leftovers(session.dir())
    );
}

#[tokio::test]
async fn a_deleted_archive_is_rebuilt_from_the_outputs_and_the_model_is_told() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let (sessions, session) = session_with_outputs(&root, dir.path()).await;
    sessions.close_all().await;
    std::fs::remove_file(session.dir().join("workspace.tar")).unwrap();
    reopen_and_look(&root, session.id(), "the workspace archive was missing").await;
}

#[tokio::test]
async fn a_rebuild_whose_original_input_is_gone_goes_on_without_it_and_says_so() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let (sessions, session) = session_with_outputs(&root, dir.path()).await;
    sessions.close_all().await;
    std::fs::remove_file(session.dir().join("workspace.tar")).unwrap();
    std::fs::remove_file(dir.path().join("energy.csv")).unwrap();

    let sessions = Sessions::new(root.clone(), Arc::new(DockerFactory)).unwrap();
    let session = sessions.open(session.id()).await.unwrap();
    let before = files_of(&session.outputs_dir());
    let look = "import os\n\
        print('outputs', sorted(os.listdir('output')))\n\
        print('inputs', sorted(os.listdir('input')))";
    let (outcome, statuses, prompt) = ask(
        &session,
        "look again",
        vec![ScriptedModel::python("c1", look), say("looked")],
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    let told = "1 input file(s) could not be staged again: input/energy.csv (its original";
    assert!(prompt.contains(told), "the model was told: {prompt}");
    assert!(statuses.iter().any(|s| s.contains(told)), "{statuses:?}");
    let seen = observations(&session.items());
    assert!(seen.contains("inputs []"), "{seen}");
    assert!(
        seen.contains("outputs ['chart.png', 'report.md', 'sub']"),
        "{seen}"
    );
    assert_kept(&before, &files_of(&session.outputs_dir()));
    session.close().await;
}

#[tokio::test]
async fn a_truncated_archive_is_not_restored_and_the_workspace_is_rebuilt_from_the_outputs() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let (sessions, session) = session_with_outputs(&root, dir.path()).await;
    sessions.close_all().await;
    let archive = session.dir().join("workspace.tar");
    let len = std::fs::metadata(&archive).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&archive)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    reopen_and_look(
        &root,
        session.id(),
        "the workspace archive could not be read (it is cut short",
    )
    .await;
}

#[tokio::test]
async fn a_torn_transcript_line_is_set_aside_and_the_next_ask_is_recorded() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let (sessions, session) = session_with_outputs(&root, dir.path()).await;
    sessions.close_all().await;
    let transcript = session.dir().join("transcript.jsonl");
    let torn = b"{\"at\":\"2026-12-01T10:00:00Z\",\"ask\":\"ask-1\",\"item\":{\"type\":\"assis";
    std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap()
        .write_all(torn)
        .unwrap();
    let earlier = files_of(&session.outputs_dir());

    let sessions = Sessions::new(root.clone(), Arc::new(DockerFactory)).unwrap();
    let session = sessions.open(session.id()).await.unwrap();
    let (outcome, statuses, _) = ask(
        &session,
        "the second ask's prompt",
        vec![ScriptedModel::python("c1", LOOK), say("looked")],
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    assert!(
        statuses
            .iter()
            .any(|s| s.contains("cut short") && s.contains("transcript.jsonl.torn")),
        "{statuses:?}"
    );
    // Every line is a whole entry, the second ask's prompt among them.
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(text.ends_with('\n'));
    for line in text.lines() {
        serde_json::from_str::<sandalyst::store::Entry>(line)
            .unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    let run = Store::open(root.clone())
        .unwrap()
        .open_run(session.id())
        .unwrap();
    let read = run.read_transcript().unwrap();
    assert!(read.unreadable.is_empty());
    assert!(read.entries.iter().any(|e| e.ask.as_deref() == Some("ask-2")
        && matches!(&e.item, Item::User { text } if text.starts_with("the second ask's prompt"))));
    // The torn bytes are kept, not dropped.
    let kept = std::fs::read(session.dir().join("transcript.jsonl.torn")).unwrap();
    assert_eq!(kept, [&torn[..], b"\n"].concat());
    assert_kept(&earlier, &files_of(&session.outputs_dir()));
    session.close().await;
}

#[tokio::test]
async fn a_full_disk_during_an_ask_loses_nothing_and_fails_with_a_storage_error() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let disk = SmallDisk::new(&dir.path().join("small"), "3m");
    let root = disk.0.join("sessions");
    let (_sessions, session) = session_with_outputs(&root, dir.path()).await;
    let earlier = files_of(&session.outputs_dir());
    let archive = session.dir().join("workspace.tar");
    let good_archive = std::fs::read(&archive).unwrap();

    // Outputs larger than the disk: outputs.new, then the archive, run out of room.
    let (outcome, _, _) = ask(
        &session,
        "make a big file",
        vec![
            ScriptedModel::python("c1", "open('output/big.bin','wb').write(b'1' * (8 << 20))"),
            say("made it"),
        ],
    )
    .await;
    let err = outcome.error.clone().expect("a full disk is an error");
    assert_eq!(err.code(), "storage", "{err:?}");
    assert!(err.to_string().starts_with("the disk is full"), "{err}");
    assert!(matches!(outcome.status, RunStatus::Failed { .. }));
    assert_kept(&earlier, &files_of(&session.outputs_dir()));
    assert!(!session.outputs_dir().join("big.bin").exists());
    assert_eq!(
        std::fs::read(&archive).unwrap(),
        good_archive,
        "the last good archive stays"
    );
    assert!(
        leftovers(session.dir()).is_empty(),
        "{:?}",
        leftovers(session.dir())
    );

    // A disk with no room at all: not even run.json can be saved as the ask begins.
    let filler = disk.0.join("filler");
    {
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![0u8; 64 << 10];
        while f.write_all(&block).is_ok() {}
        let _ = f.write_all(&[0u8; 1]);
    }
    let meta_before = std::fs::read(session.dir().join("run.json")).unwrap();
    let (outcome, _, _) = ask(
        &session,
        "remove the big file",
        vec![ScriptedModel::python("c1", "print('never run')"), say("no")],
    )
    .await;
    let err = outcome.error.clone().expect("a full disk is an error");
    assert_eq!(err.code(), "storage", "{err:?}");
    assert!(err.to_string().starts_with("the disk is full"), "{err}");
    assert_eq!(
        std::fs::read(session.dir().join("run.json")).unwrap(),
        meta_before
    );
    assert_kept(&earlier, &files_of(&session.outputs_dir()));
    assert_eq!(std::fs::read(&archive).unwrap(), good_archive);
    // Every line of the transcript is still whole.
    for line in std::fs::read_to_string(session.dir().join("transcript.jsonl"))
        .unwrap()
        .lines()
    {
        serde_json::from_str::<sandalyst::store::Entry>(line).unwrap();
    }

    // Room again: the next ask works and the earlier outputs are all there.
    std::fs::remove_file(&filler).unwrap();
    let (outcome, _, _) = ask(
        &session,
        "remove the big file",
        vec![
            ScriptedModel::python("c1", "import os\nos.remove('output/big.bin')\nprint('ok')"),
            say("removed"),
        ],
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    let after = files_of(&session.outputs_dir());
    assert_kept(&earlier, &after);
    assert!(!after.contains_key("big.bin"));
    assert!(matches!(check_archive(&archive), ArchiveCheck::Complete(_)));
    session.close().await;
    drop(disk);
}

#[tokio::test]
async fn outputs_lose_only_what_the_code_saw_and_removed() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let (_sessions, session) = session_with_outputs(&root, dir.path()).await;
    // A file the sandbox never had (e.g. copied to the host by an ask that died).
    std::fs::write(session.outputs_dir().join("extra.txt"), "only on the host").unwrap();
    let earlier = files_of(&session.outputs_dir());
    let (outcome, statuses, _) = ask(
        &session,
        "remove the chart",
        vec![
            ScriptedModel::python("c1", "import os\nos.remove('output/chart.png')"),
            say("removed"),
        ],
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    let after = files_of(&session.outputs_dir());
    assert!(!after.contains_key("chart.png"), "the code removed it");
    let mut kept = earlier.clone();
    kept.remove("chart.png");
    assert_kept(&kept, &after);
    assert!(
        statuses
            .iter()
            .any(|s| s.contains("kept 1 earlier output(s)") && s.contains("extra.txt")),
        "{statuses:?}"
    );
    assert!(session.meta().outputs.iter().any(|f| f.path == "extra.txt"));
    session.close().await;
}

/// The command line, isolated from the developer's configuration and keys.
fn cli(data: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_sandalyst"));
    c.env(
        "SANDALYST_CONFIG",
        "/nonexistent/sandalyst-test-config.toml",
    )
    .env_remove("OPENAI_API_KEY")
    .env_remove("ANTHROPIC_API_KEY")
    .env("SANDALYST_DATA_DIR", data);
    c
}

fn steps(dir: &Path, name: &str, steps: serde_json::Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, steps.to_string()).unwrap();
    format!("replay:{}", path.display())
}

#[test]
fn an_ask_killed_while_the_archive_is_written_keeps_the_last_good_archive_and_every_output() {
    if common::no_engine_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = input_in(dir.path());
    let first = steps(
        dir.path(),
        "first.json",
        serde_json::json!([
            {"python": "open('output/a.txt','w').write('version 1')\nopen('output/b.txt','w').write('b')"},
            {"say": "done"}
        ]),
    );
    let mut c = cli(&data);
    c.args(["run", "-i"])
        .arg(&input)
        .args(["-p", "first", "--model", &first]);
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let session_dir = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap();
    let id = session_dir
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let archive = session_dir.join("workspace.tar");
    let good_archive = std::fs::read(&archive).unwrap();

    // The second ask changes a.txt, adds c.txt and leaves 400 MB elsewhere in the
    // workspace, so the archive takes a while; it is killed while the temp grows.
    let second = steps(
        dir.path(),
        "second.json",
        serde_json::json!([
            {"python": "open('output/a.txt','w').write('version 2')\nopen('output/c.txt','w').write('c')\n\
                        chunk = b'x' * (1 << 20)\nwith open('/workspace/scratch.bin','wb') as f:\n    for _ in range(400):\n        f.write(chunk)"},
            {"say": "done"}
        ]),
    );
    let mut c = cli(&data);
    c.args(["ask", &id, "-p", "second", "--model", &second])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    let temp_growing = || {
        std::fs::read_dir(&session_dir)
            .unwrap()
            .flatten()
            .find(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with(".workspace.tar.")
                    && n.ends_with(".tmp")
                    && e.metadata().is_ok_and(|m| m.len() > (8 << 20))
            })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    let temp = loop {
        if let Some(t) = temp_growing() {
            break t.path();
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the ask ended before its archive was caught"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "the archive write never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    child.kill().unwrap(); // SIGKILL: no clean-up of any kind
    child.wait().unwrap();
    assert!(
        temp.exists(),
        "the killed write's temp is there until the next write"
    );
    assert_eq!(
        std::fs::read(&archive).unwrap(),
        good_archive,
        "the last good archive stays"
    );
    let outputs = files_of(&session_dir.join("outputs"));
    assert_eq!(
        outputs["a.txt"], b"version 2",
        "collected before the archive"
    );
    assert_eq!(outputs["c.txt"], b"c");

    // The next ask restores the last good archive and brings output/ up to date from
    // the app's copy: the code sees version 2, and nothing of the host's is lost.
    let third = steps(
        dir.path(),
        "third.json",
        serde_json::json!([
            {"python": "import os\nseen = repr(sorted(os.listdir('output'))) + ' ' + open('output/a.txt').read()\nopen('output/seen.txt','w').write(seen)"},
            {"say": "done"}
        ]),
    );
    let mut c = cli(&data);
    c.args(["ask", &id, "-p", "third", "--model", &third]);
    let o = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("output/ were brought up to date from the app's copy"),
        "{stderr}"
    );
    let after = files_of(&session_dir.join("outputs"));
    assert_kept(&outputs, &after);
    assert_eq!(
        String::from_utf8_lossy(&after["seen.txt"]),
        "['a.txt', 'b.txt', 'c.txt'] version 2"
    );
    assert!(!temp.exists(), "the dead writer's temp was removed");
    assert!(
        leftovers(&session_dir).is_empty(),
        "{:?}",
        leftovers(&session_dir)
    );
    assert!(matches!(check_archive(&archive), ArchiveCheck::Complete(_)));
    assert_ne!(std::fs::read(&archive).unwrap(), good_archive);
}
