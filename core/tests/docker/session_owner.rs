//! One writer per session, across processes: real `sandalyst` processes, the real
//! engine and the real store. A second process that wants to write a session another
//! owns is refused (`session_busy`, naming the owner) while reading keeps working; the
//! owner's ask is untouched; a later owner sees the other's asks; an ask left by a
//! killed owner is marked interrupted when the session is next opened; and no start
//! or clean-up removes a container it did not make.

use crate::common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandalyst::agent::RunStatus;
use sandalyst::model::scripted::{ScriptedModel, Step};
use sandalyst::model::Item;
use sandalyst::sandbox::docker::DockerSandbox;
use sandalyst::sandbox::Sandbox;
use sandalyst::session::{DockerFactory, SessionError, Sessions};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// The command, isolated from the developer's own configuration and keys.
fn command(data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandalyst"));
    c.env(
        "SANDALYST_CONFIG",
        "/nonexistent/sandalyst-test-config.toml",
    )
    .env_remove("OPENAI_API_KEY")
    .env_remove("ANTHROPIC_API_KEY")
    .env_remove("SANDALYST_IMAGE")
    .env("SANDALYST_DATA_DIR", data);
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A replay script in `dir`, as the `--model` argument.
fn replay(dir: &Path, name: &str, steps: Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, steps.to_string()).unwrap();
    format!("replay:{}", path.display())
}

/// A finished one-ask session made by `sandalyst run`; its id.
fn first_session(dir: &Path, data: &Path) -> String {
    let input = dir.join("energy.csv");
    std::fs::write(&input, "t,v\n1,2\n").unwrap();
    let model = replay(
        dir,
        "first.json",
        json!([{"python": "print('first ask')"}, {"say": "first done"}]),
    );
    let o = command(data)
        .args(["run", "-i", input.to_str().unwrap(), "-p", "first ask"])
        .args(["--model", &model])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut ids: Vec<String> = std::fs::read_dir(data)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids.pop().unwrap()
}

/// `sandalyst ask ID` on a replay whose first cell runs `code`, started in the background.
fn start_ask(dir: &Path, data: &Path, id: &str, prompt: &str, code: &str) -> Child {
    let model = replay(
        dir,
        &format!("{prompt}.json").replace(' ', "-"),
        json!([{"python": code}, {"say": format!("{prompt}: done")}]),
    );
    command(data)
        .args(["ask", id, "-p", prompt, "--model", &model])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn run_json(data: &Path, id: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data.join(id).join("run.json")).unwrap()).unwrap()
}

/// The asks of `run.json` as (id, status).
fn asks(data: &Path, id: &str) -> Vec<(String, Value)> {
    run_json(data, id)["asks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["id"].as_str().unwrap().to_string(), a["status"].clone()))
        .collect()
}

/// Wait until the transcript holds `needle` (the cell has started).
fn wait_for_transcript(data: &Path, id: &str, needle: &str) {
    let path = data.join(id).join("transcript.jsonl");
    let until = Instant::now() + Duration::from_secs(180);
    while Instant::now() < until {
        if std::fs::read_to_string(&path).is_ok_and(|t| t.contains(needle)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("the ask never reached {needle:?}");
}

fn wait_for_exit(child: &mut Child) -> std::process::ExitStatus {
    let until = Instant::now() + Duration::from_secs(300);
    while Instant::now() < until {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = child.kill();
    panic!("the process did not exit");
}

fn finished() -> Value {
    json!({"status": "finished"})
}

fn interrupted() -> Value {
    json!({"status": "interrupted"})
}

async fn containers_of(id: &str) -> usize {
    common::containers_labelled(&common::engine().await, id).await
}

/// The one line a refused `sandalyst ask` prints, checked: exit 1, the owner named.
fn assert_refused_naming(o: &Output, owner_pid: u32) -> String {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {err}");
    assert!(
        lines[0].contains("in use by") && lines[0].contains(&format!("pid {owner_pid}")),
        "{err}"
    );
    lines[0].to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_process_is_told_who_owns_the_session_and_the_owners_ask_is_untouched() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let id = first_session(dir.path(), &data);

    // This process looks at the session (no lock), as the desktop showing it would.
    let sessions = Sessions::new(data.clone(), Arc::new(DockerFactory)).unwrap();
    let viewed = sessions.open(&id).await.unwrap();
    assert!(!viewed.is_owned(), "viewing took the lock");

    // Process A asks, with a cell that takes a while; meanwhile it owns the session.
    let code_a = "import time\ntime.sleep(15)\nopen('output/from_a.txt','w').write('A was here')";
    let mut a = start_ask(dir.path(), &data, &id, "slow ask from A", code_a);
    wait_for_transcript(&data, &id, "time.sleep(15)");
    assert_eq!(containers_of(&id).await, 1, "A's sandbox");

    // Process B: refused in one line naming A, before it starts anything.
    let b = command(&data)
        .args(["ask", &id, "-p", "from B", "--model"])
        .arg(replay(dir.path(), "b.json", json!([{"say": "B"}])))
        .output()
        .unwrap();
    let line = assert_refused_naming(&b, a.id());
    assert!(line.contains("sandalyst ask"), "{line}");
    // This process too, typed.
    match viewed.ask("from this process".into(), Box::new(ScriptedModel::new([]))) {
        Err(e @ SessionError::SessionBusy { .. }) => {
            assert_eq!(e.code(), "session_busy");
            assert!(e.to_string().contains(&format!("pid {}", a.id())), "{e}");
        }
        Err(e) => panic!("not session_busy: {e:?}"),
        Ok(_) => panic!("a session another process owns was asked"),
    }
    assert!(!viewed.is_busy() && !viewed.is_owned());
    // Reading works meanwhile.
    let shown = command(&data).args(["runs", "show", &id]).output().unwrap();
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    assert!(text(&shown.stdout).contains("time.sleep(15)"));
    let list = command(&data).args(["runs", "list"]).output().unwrap();
    assert!(
        list.status.success() && text(&list.stdout).contains(&id),
        "{}",
        text(&list.stderr)
    );
    assert_eq!(
        containers_of(&id).await,
        1,
        "a refused process touched A's container"
    );

    // A's ask ends as if alone.
    assert!(wait_for_exit(&mut a).success(), "A's ask failed");
    assert_eq!(
        asks(&data, &id),
        vec![("ask-1".into(), finished()), ("ask-2".into(), finished())]
    );
    assert_eq!(run_json(&data, &id)["status"], finished());
    let from_a = data.join(&id).join("outputs/from_a.txt");
    assert_eq!(std::fs::read_to_string(from_a).unwrap(), "A was here");
    assert_eq!(containers_of(&id).await, 0, "A cleaned up after itself");

    // Now this process may ask: it reads the session again and sees A's ask.
    let model = ScriptedModel::new([
        ScriptedModel::python("c1", "print(open('output/from_a.txt').read())"),
        Step::Reply(vec![Item::Assistant {
            text: "seen".into(),
        }]),
    ]);
    let log = model.log.clone();
    let mut h = viewed
        .ask("what did A do?".into(), Box::new(model))
        .unwrap();
    assert_eq!(h.ask_id, "ask-3");
    while h.events.recv().await.is_some() {}
    let outcome = h.outcome().await;
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    let seen = log.lock().unwrap().clone();
    let prompts: Vec<&str> = seen[0]
        .items
        .iter()
        .filter_map(|i| match i {
            Item::User { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        prompts.iter().any(|p| p.starts_with("slow ask from A")),
        "{prompts:?}"
    );
    let out = seen[1].items.iter().rev().find_map(|i| match i {
        Item::ToolOutput { output, .. } => Some(output.clone()),
        _ => None,
    });
    assert!(out.is_some_and(|o| o.contains("A was here")));
    viewed.close().await;
    assert!(!viewed.is_owned(), "the lock outlived the sandbox");

    // And B, once nobody owns it.
    let read_a = "print('B sees', open('output/from_a.txt').read())";
    let mut b = start_ask(dir.path(), &data, &id, "B again", read_a);
    assert!(wait_for_exit(&mut b).success());
    let transcript = std::fs::read_to_string(data.join(&id).join("transcript.jsonl")).unwrap();
    let of_b: Vec<&str> = transcript
        .lines()
        .filter(|l| l.contains(r#""ask":"ask-4""#))
        .collect();
    assert!(
        of_b.iter().any(|l| l.contains("B sees A was here")),
        "{of_b:?}"
    );
    let ids: Vec<String> = asks(&data, &id).into_iter().map(|(i, _)| i).collect();
    assert_eq!(ids, ["ask-1", "ask-2", "ask-3", "ask-4"]);
    assert!(asks(&data, &id).iter().all(|(_, s)| *s == finished()));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ask_left_by_a_killed_owner_is_marked_interrupted_at_the_next_open() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let id = first_session(dir.path(), &data);
    // Made while A lives, so its start-up sweep cannot be what marks the ask.
    let sessions = Sessions::new(data.clone(), Arc::new(DockerFactory)).unwrap();

    let mut a = start_ask(
        dir.path(),
        &data,
        &id,
        "doomed",
        "import time\ntime.sleep(120)",
    );
    wait_for_transcript(&data, &id, "time.sleep(120)");
    assert_eq!(asks(&data, &id)[1], ("ask-2".into(), Value::Null));
    a.kill().unwrap(); // SIGKILL: no clean-up of any kind
    a.wait().unwrap();
    assert_eq!(
        asks(&data, &id)[1].1,
        Value::Null,
        "still in progress on disk"
    );

    let session = sessions.open(&id).await.unwrap();
    assert!(!session.is_owned());
    let ask2 = &session.meta().asks[1];
    assert_eq!(
        (ask2.id.as_str(), ask2.status.clone()),
        ("ask-2", Some(RunStatus::Interrupted))
    );
    assert_eq!(asks(&data, &id)[1].1, interrupted());
    assert_eq!(run_json(&data, &id)["status"], interrupted());

    let model = ScriptedModel::new([ScriptedModel::python("c1", "print(1 + 1)")]);
    let mut h = session
        .ask("after the crash".into(), Box::new(model))
        .unwrap();
    assert_eq!(h.ask_id, "ask-3");
    while h.events.recv().await.is_some() {}
    assert_eq!(h.outcome().await.status, RunStatus::Finished);
    session.close().await;
    assert_eq!(
        asks(&data, &id)
            .iter()
            .map(|(_, s)| s.clone())
            .collect::<Vec<_>>(),
        [finished(), interrupted(), finished()]
    );
    assert_eq!(
        containers_of(&id).await,
        0,
        "the killed owner's container was left"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_or_second_start_never_removes_another_starts_container() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let config = common::config(&docker).await;
    let id = common::run_id("owner-starts");
    let first = DockerSandbox::start(&docker, &id, &config, &Default::default())
        .await
        .unwrap();
    assert_eq!(python(&first, "x = 1\nprint(x)").await.trim(), "1");
    assert_eq!(containers_of(&id).await, 1);

    // A start for the same run that fails after its volume exists (no such image):
    // its clean-up takes only what it made.
    let broken = sandalyst::sandbox::SandboxConfig {
        image: format!("sandalyst-test-absent:{:08x}", rand::random::<u32>()),
        ..config.clone()
    };
    let failed = DockerSandbox::start(&docker, &id, &broken, &Default::default()).await;
    assert!(failed.is_err());
    assert_eq!(
        containers_of(&id).await,
        1,
        "a failed start removed a container"
    );
    assert_eq!(
        python(&first, "open('output/k','w').write('k')\nprint(x)")
            .await
            .trim(),
        "1",
        "the first sandbox's kernel or workspace is gone"
    );

    // A second start for the same run works beside it, and its close leaves the first.
    let second = DockerSandbox::start(&docker, &id, &config, &Default::default())
        .await
        .unwrap();
    assert_ne!(first.container_id(), second.container_id());
    assert_eq!(containers_of(&id).await, 2);
    second.close().await.unwrap();
    assert_eq!(containers_of(&id).await, 1);
    assert_eq!(
        python(&first, "print(open('output/k').read(), x)")
            .await
            .trim(),
        "k 1"
    );
    first.close().await.unwrap();
    assert_eq!(containers_of(&id).await, 0);
    assert_eq!(volumes_of(&docker, &id).await, 0, "a volume was left");
}

/// Run `code` in the sandbox's kernel; what it printed.
async fn python(sb: &DockerSandbox, code: &str) -> String {
    let c = CancellationToken::new();
    let r = sb.python(code, Duration::from_secs(30), &c, &|_, _| {});
    r.await.unwrap().stdout
}

async fn volumes_of(docker: &bollard::Docker, run: &str) -> usize {
    let filters = std::collections::HashMap::from([(
        "label".to_string(),
        vec![format!("{}={run}", sandalyst::sandbox::docker::RUN_LABEL)],
    )]);
    let opts = bollard::query_parameters::ListVolumesOptionsBuilder::new()
        .filters(&filters)
        .build();
    let vols = docker.list_volumes(Some(opts)).await.unwrap();
    vols.volumes.unwrap_or_default().len()
}
