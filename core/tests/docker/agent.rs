//! The agent loop through `run::execute` with a scripted model and the real sandbox.

use crate::common;

use std::time::{Duration, Instant};

use sandalyst::agent::{Event, EventKind, RunStatus};
use sandalyst::model::scripted::{ScriptedModel, Step};
use sandalyst::model::{CallForm, Item};
use sandalyst::run::{self, RunOutcome, RunRequest};
use sandalyst::store::Store;
use tokio_util::sync::CancellationToken;

async fn run_with(
    model: &mut ScriptedModel,
    max_turns: u32,
    cancel: &CancellationToken,
) -> (RunOutcome, Store, tempfile::TempDir) {
    run_watching(model, max_turns, cancel, &|_| {}).await
}

/// [`run_with`], each event of the run handed to `watch` as it comes.
async fn run_watching(
    model: &mut ScriptedModel,
    max_turns: u32,
    cancel: &CancellationToken,
    watch: &(dyn Fn(Event) + Send + Sync),
) -> (RunOutcome, Store, tempfile::TempDir) {
    let docker = common::engine().await;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.csv");
    std::fs::write(&input, "t,v\n1,2\n").unwrap();
    let store = Store::open(dir.path().join("runs")).unwrap();
    let mut req = RunRequest::new(vec![input], "do it".into());
    req.config.sandbox = common::config(&docker).await;
    req.config.limits.max_turns = max_turns;
    req.config.limits.call_timeout = Duration::from_secs(60);
    let outcome = run::execute(&common::sessions(&store), req, model, watch, cancel)
        .await
        .unwrap();
    assert_eq!(
        common::containers_labelled(&docker, &outcome.run_id).await,
        0,
        "container left behind"
    );
    (outcome, store, dir)
}

fn outputs(seen: &[Item]) -> Vec<(String, bool)> {
    seen.iter()
        .filter_map(|i| match i {
            Item::ToolOutput {
                output, is_error, ..
            } => Some((output.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn tool_errors_are_observations_and_the_run_goes_on() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let mut model = ScriptedModel::new([
        ScriptedModel::python("c1", "1/0"),
        Step::Reply(vec![ScriptedModel::call(
            "c2",
            "python",
            serde_json::json!("not an object"),
        )]),
        Step::Reply(vec![Item::ToolCall {
            call_id: "c3".into(),
            name: "python".into(),
            arguments: "{\"code\": ".into(),
            form: CallForm::Structured,
        }]),
        Step::Reply(vec![ScriptedModel::call(
            "c4",
            "nosuchtool",
            serde_json::json!({}),
        )]),
        ScriptedModel::python(
            "c5",
            "open('output/r.md','w').write('fine'); print('after')",
        ),
    ]);
    let (outcome, store, _dir) = run_with(&mut model, 25, &CancellationToken::new()).await;
    assert_eq!(outcome.status, RunStatus::Finished);
    let seen = outputs(model.seen.last().unwrap());
    assert!(
        seen[0].1 && seen[0].0.contains("ZeroDivisionError"),
        "{:?}",
        seen[0]
    );
    assert!(seen[1].1 && seen[1].0.contains("string field `code`"));
    assert!(seen[2].1 && seen[2].0.contains("not valid JSON"));
    assert!(seen[3].1 && seen[3].0.contains("unknown tool"));
    assert!(!seen[4].1 && seen[4].0.contains("after"));
    assert_eq!(outcome.outputs.len(), 1);
    assert_eq!(
        std::fs::read_to_string(outcome.outputs_dir.join("r.md")).unwrap(),
        "fine"
    );
    // The transcript on disk holds every item the model saw plus its final answer.
    let run = store.open_run(&outcome.run_id).unwrap();
    assert_eq!(
        run.transcript().unwrap().len(),
        model.seen.last().unwrap().len() + 1
    );
    assert!(run.path.join("workspace.tar").exists());
}

#[tokio::test]
async fn max_turns_ends_the_run_with_a_clear_status() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let steps: Vec<Step> = (0..5)
        .map(|i| ScriptedModel::python(&format!("c{i}"), "print(1)"))
        .collect();
    let mut model = ScriptedModel::new(steps);
    let (outcome, store, _dir) = run_with(&mut model, 3, &CancellationToken::new()).await;
    assert_eq!(
        outcome.status,
        RunStatus::MaxTurns {
            turns: 3,
            missing: vec![]
        }
    );
    let meta = store.open_run(&outcome.run_id).unwrap().meta;
    assert_eq!(
        meta.status,
        Some(RunStatus::MaxTurns {
            turns: 3,
            missing: vec![]
        })
    );
}

#[tokio::test]
async fn cancel_interrupts_running_code_and_removes_the_container() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let code = "import time\nprint('started', flush=True)\ntime.sleep(120)";
    let mut model = ScriptedModel::new([ScriptedModel::python("c1", code)]);
    let cancel = CancellationToken::new();
    let stopped = std::sync::Mutex::new(None);
    // Stop once the cell is running (its first line came), however long the start took.
    let watch = |ev: Event| {
        if let EventKind::CellOutput { text, .. } = &ev.kind {
            if text.contains("started") && !cancel.is_cancelled() {
                *stopped.lock().unwrap() = Some(Instant::now());
                cancel.cancel();
            }
        }
    };
    let (outcome, store, _dir) = run_watching(&mut model, 25, &cancel, &watch).await;
    assert_eq!(outcome.status, RunStatus::Cancelled);
    let stopped = stopped
        .lock()
        .unwrap()
        .expect("the cell ran before the stop");
    let took = stopped.elapsed();
    eprintln!("the run ended {took:?} after the stop, its container removed");
    assert!(took < Duration::from_secs(30), "{took:?}");
    // The interrupted cell's result is kept, with what it printed before the stop.
    let transcript = store
        .open_run(&outcome.run_id)
        .unwrap()
        .transcript()
        .unwrap();
    assert!(
        transcript.iter().any(
            |e| matches!(&e.item, Item::ToolOutput { call_id, output, .. }
            if call_id == "c1" && output.contains("started"))
        ),
        "{transcript:#?}"
    );
}

#[tokio::test]
async fn cancel_stops_a_model_that_never_answers() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let mut model = ScriptedModel::new([Step::Hang]);
    let asked = model.log.clone();
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    // Stop once the model has been asked (the sandbox is up), not on a timer.
    tokio::spawn(async move {
        while asked.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        c.cancel();
    });
    let (outcome, _store, _dir) = run_with(&mut model, 25, &cancel).await;
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert_eq!(
        model.log.lock().unwrap().len(),
        1,
        "asked once, then stopped"
    );
}

#[tokio::test]
async fn a_failing_model_fails_the_run_and_the_container_goes() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let mut model = ScriptedModel::new([
        ScriptedModel::python("c1", "open('output/partial.txt','w').write('so far')"),
        Step::Fail("provider exploded".into()),
    ]);
    let (outcome, _store, _dir) = run_with(&mut model, 25, &CancellationToken::new()).await;
    match &outcome.status {
        RunStatus::Failed { message } => {
            assert!(message.contains("provider exploded"), "{message}")
        }
        s => panic!("unexpected {s:?}"),
    }
    assert_eq!(
        outcome.outputs.len(),
        1,
        "outputs made before the failure are kept"
    );
}
