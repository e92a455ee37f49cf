//! A session's whole round trip on the in-memory sandbox, no engine: an ask that reads
//! its input, writes outputs, shows a figure and has a failed call; its export as a
//! notebook (valid nbformat 4.5, the calls in order with their outputs) and as a script
//! folder; a re-run on new data without a model into a new session linked to the
//! first, which stops where a call fails on the new data; and that new session
//! continued with a model. `docker/reproducible.rs` checks the same with real Python.

use std::path::PathBuf;
use std::sync::Arc;

use crate::common;
use sandalyst::agent::RunStatus;
use sandalyst::analysis::{self, Formats};
use sandalyst::model::scripted::{ScriptedModel, Step};
use sandalyst::model::Item;
use sandalyst::session::{AskOutcome, FakeFactory, Session, SessionConfig, Sessions};
use sandalyst::store::{RunDir, Store};
use tokio_util::sync::CancellationToken;

fn py(id: &str, code: &str) -> Step {
    ScriptedModel::python(id, code)
}

fn say(text: &str) -> Step {
    Step::Reply(vec![Item::Assistant { text: text.into() }])
}

async fn ask(session: &Session, prompt: &str, model: ScriptedModel) -> AskOutcome {
    let mut handle = session.ask(prompt.into(), Box::new(model)).unwrap();
    while handle.events.recv().await.is_some() {}
    handle.outcome().await
}

fn open_run(sessions: &Sessions, id: &str) -> RunDir {
    Store::open(sessions.root().to_path_buf())
        .unwrap()
        .open_run(id)
        .unwrap()
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[tokio::test]
async fn a_session_exports_reruns_on_new_data_and_continues_with_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = Sessions::new(
        dir.path().join("sessions"),
        Arc::new(FakeFactory::default()),
    )
    .unwrap();
    let session = sessions.create(SessionConfig::default()).await.unwrap();
    let first = write(dir.path(), "data.csv", "t,v\n1,2\n");
    session.add_files(vec![first]).await.unwrap();
    let model = ScriptedModel::new([
        py("c1", "cat input/data.csv\nwrite output/summary.txt one row"),
        py("c2", "write output/scratch.txt x\nfail"),
        py("c3", "figure\ncat output/scratch.txt"),
        say("One row; the summary is in output/summary.txt."),
    ]);
    let o = ask(&session, "Summarise data.csv", model).await;
    assert_eq!(o.status, RunStatus::Finished);
    let source = session.id().to_string();

    // The notebook: valid, every call in order (the failed one too), with outputs.
    let run = open_run(&sessions, &source);
    let nb = analysis::notebook::build(&run).unwrap();
    common::validate_notebook(&nb);
    let code: Vec<String> = nb["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["cell_type"] == "code")
        .map(|c| match &c["source"] {
            serde_json::Value::Array(lines) => lines
                .iter()
                .map(|l| l.as_str().unwrap())
                .collect::<String>(),
            other => other.as_str().unwrap().to_string(),
        })
        .collect();
    assert_eq!(code.len(), 3, "{code:#?}");
    assert!(code[0].contains("cat input/data.csv"), "{}", code[0]);
    assert!(code[1].ends_with("fail"), "{}", code[1]);
    assert!(code[2].starts_with("figure"), "{}", code[2]);
    let outputs = nb["cells"].to_string();
    assert!(
        outputs.contains("t,v") && outputs.contains("image/png"),
        "{outputs}"
    );

    // The folder export: notebook, script and a copy of the input beside them.
    let out = dir.path().join("export");
    let files = analysis::to_folder(
        &run,
        &out,
        Formats {
            notebook: true,
            script: true,
        },
    )
    .unwrap();
    assert!(files
        .iter()
        .any(|f| f.extension().is_some_and(|e| e == "ipynb")));
    assert!(files
        .iter()
        .any(|f| f.extension().is_some_and(|e| e == "py")));
    assert_eq!(
        std::fs::read_to_string(out.join("input/data.csv")).unwrap(),
        "t,v\n1,2\n"
    );

    // The re-run: new data, no model; the failed call is left out, so the call after
    // it finds no scratch file on the fresh workspace and the replay stops there.
    let next = write(dir.path(), "july.csv", "t,v\n5,6\n7,8\n");
    let r = sandalyst::rerun::execute(
        &sessions,
        &source,
        vec![next],
        &|_| {},
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!((r.cells, r.ran), (2, 1));
    let failed = r.failed.as_ref().expect("the replay stopped");
    assert_eq!((failed.index, failed.call_id.as_str()), (2, "c3"));
    assert!(
        failed.output.contains("FileNotFoundError"),
        "{}",
        failed.output
    );
    assert!(
        matches!(r.status, RunStatus::Failed { .. }),
        "{:?}",
        r.status
    );
    assert_eq!(
        std::fs::read_to_string(r.outputs_dir.join("summary.txt")).unwrap(),
        "one row"
    );
    let rerun = open_run(&sessions, &r.session_id);
    assert_eq!(rerun.meta.rerun_of.as_deref(), Some(source.as_str()));
    assert_eq!(
        rerun.meta.files[0].name, "data.csv",
        "staged under the old name"
    );

    // Continued with a model: it is handed the replay, failure included.
    let continued = sessions.open(&r.session_id).await.unwrap();
    let model = ScriptedModel::new([py("d1", "cat input/data.csv"), say("Two rows now.")]);
    let log = model.log.clone();
    let o = ask(&continued, "Go on from the failure", model).await;
    assert_eq!(o.status, RunStatus::Finished);
    let seen = log.lock().unwrap().clone();
    assert!(
        seen[0].items.iter().any(
            |i| matches!(i, Item::ToolOutput { output, is_error: true, .. }
            if output.contains("FileNotFoundError"))
        ),
        "{:#?}",
        seen[0].items
    );
    let last = ask_output(&seen[1].items);
    assert!(last.contains("5,6"), "{last}");
}

/// The last call result a request held.
fn ask_output(items: &[Item]) -> String {
    items
        .iter()
        .rev()
        .find_map(|i| match i {
            Item::ToolOutput { output, .. } => Some(output.clone()),
            _ => None,
        })
        .unwrap_or_default()
}
