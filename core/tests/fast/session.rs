//! Sessions and the loop driven through the in-memory sandbox (no Docker): follow-ups
//! on the same state, files added between asks, reopening, idle release, live events,
//! what the model is shown and told, and how asks end.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use sandalyst::agent::{Event, EventKind, RunStatus, SetupStage};
use sandalyst::model::pricing::Price;
use sandalyst::model::scripted::{ScriptedModel, Step};
use sandalyst::model::{Item, Usage};
use sandalyst::protocol::{
    ArchiveProblem, AskId, CallId, FileKind, InputNote, LinkProblem, Notice,
};
use sandalyst::session::FakeFactory;
use sandalyst::session::{AskOutcome, Session, SessionConfig, SessionError, Sessions};
use serde_json::json;

struct Fixture {
    dir: tempfile::TempDir,
    factory: Arc<FakeFactory>,
    sessions: Sessions,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let factory = Arc::new(FakeFactory::default());
    let sessions = Sessions::new(dir.path().join("sessions"), factory.clone()).unwrap();
    Fixture {
        dir,
        factory,
        sessions,
    }
}

impl Fixture {
    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

fn py(id: &str, code: &str) -> Step {
    ScriptedModel::python(id, code)
}

fn say(text: &str) -> Step {
    Step::Reply(vec![Item::Assistant { text: text.into() }])
}

/// Run one ask to its end; its events and outcome.
async fn ask(session: &Session, prompt: &str, model: ScriptedModel) -> (Vec<Event>, AskOutcome) {
    let mut handle = session.ask(prompt.into(), Box::new(model)).unwrap();
    let mut events = Vec::new();
    while let Some(ev) = handle.events.recv().await {
        events.push(ev);
    }
    (events, handle.outcome().await)
}

fn outputs_seen(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::ToolOutput { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_follow_up_uses_the_variables_and_files_of_the_first_ask() {
    let f = fixture();
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    session
        .add_files(vec![f.file("data.csv", "t,v\n1,2\n")])
        .await
        .unwrap();
    let first = ScriptedModel::new([
        py("c1", "set total 42\nwrite output/total.txt 42"),
        say("The total is 42."),
    ]);
    let first_log = first.log.clone();
    let (_, o1) = ask(&session, "Add it up", first).await;
    assert_eq!(o1.status, RunStatus::Finished);
    assert_eq!(o1.answer.as_deref(), Some("The total is 42."));

    let later = f.file("more.csv", "t,v\n3,4\n");
    session.add_files(vec![later]).await.unwrap();
    let second = ScriptedModel::new([
        py(
            "c2",
            "get total\ncat output/total.txt\ncat input/more.csv\nwrite output/total.txt 43",
        ),
        say("Still 42."),
    ]);
    let log = second.log.clone();
    let (_, o2) = ask(&session, "And now?", second).await;
    assert_eq!(o2.status, RunStatus::Finished);

    let seen = log.lock().unwrap().clone();
    // The second ask sees the whole conversation, and the note about the new file.
    let items = &seen[0].items;
    assert!(matches!(&items[0], Item::User { text } if text == "Add it up"));
    let Item::User { text } = items
        .iter()
        .rev()
        .find(|i| matches!(i, Item::User { .. }))
        .unwrap()
    else {
        unreachable!()
    };
    assert!(
        text.starts_with("And now?") && text.contains("input/more.csv"),
        "{text}"
    );
    // The system prompt is the first ask's, byte for byte (the server's prompt cache
    // holds); the new file is in the note above.
    let first_seen = first_log.lock().unwrap().clone();
    assert_eq!(seen[0].instructions, first_seen[0].instructions);
    assert!(!seen[0].instructions.contains("input/more.csv"));
    // The fake sandbox cannot list packages: the instructions name the fixed set.
    assert!(seen[0]
        .instructions
        .contains(sandalyst::agent::instructions::LIBRARIES));
    let outs = outputs_seen(&seen[1].items);
    assert!(
        outs.last().unwrap().contains("42\n42\nt,v\n3,4"),
        "{outs:?}"
    );
    // One sandbox served both asks.
    assert_eq!(f.factory.started.lock().unwrap().len(), 1);
    let meta = session.meta();
    assert_eq!(meta.asks.len(), 2);
    assert_eq!(meta.files.len(), 2);
    assert!(session.outputs_dir().join("total.txt").exists());
    // Provenance: the file was rewritten by the second ask's call, from both inputs.
    let p = &meta.provenance["total.txt"];
    assert_eq!(
        (p.ask.as_str(), p.call_id.as_str(), p.tool.as_str()),
        ("ask-2", "c2", "python")
    );
    assert!(p.code.ends_with("write output/total.txt 43"));
    let names: Vec<&str> = p.inputs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["data.csv", "more.csv"]);
    let data = p.inputs.iter().find(|(n, _)| n == "data.csv").unwrap();
    assert_eq!(data.1.len(), 64, "hashed when added");
}

#[tokio::test]
async fn a_second_ask_while_one_runs_is_refused() {
    let f = fixture();
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    let handle = session
        .ask("wait".into(), Box::new(ScriptedModel::new([Step::Hang])))
        .unwrap();
    let again = session.ask("again".into(), Box::new(ScriptedModel::new([])));
    assert!(matches!(again, Err(SessionError::Busy)));
    assert!(matches!(
        session.ask("  ".into(), Box::new(ScriptedModel::new([]))),
        Err(SessionError::EmptyPrompt)
    ));
    handle.cancel();
    assert_eq!(handle.outcome().await.status, RunStatus::Cancelled);
    assert!(session
        .ask("now".into(), Box::new(ScriptedModel::new([])))
        .is_ok());
}

/// A session over `data.csv` that ran `code` in the ask "make x", closed as when its
/// process ends (its sandbox goes, and with it the lock; `drop_archive`: its workspace
/// archive too), then opened by a new process: new Sessions over the same folder.
async fn reopened(f: &Fixture, code: &str, drop_archive: bool) -> (Sessions, Session) {
    let id = {
        let session = f.sessions.create(SessionConfig::default()).await.unwrap();
        session
            .add_files(vec![f.file("data.csv", "a\n1\n")])
            .await
            .unwrap();
        let model = ScriptedModel::new([py("c1", code), say("made")]);
        ask(&session, "make x", model).await;
        session.close().await;
        if drop_archive {
            std::fs::remove_file(session.dir().join("workspace.tar")).unwrap();
        }
        session.id().to_string()
    };
    let again = Sessions::new(f.sessions.root().to_path_buf(), f.factory.clone()).unwrap();
    let session = again.open(&id).await.unwrap();
    (again, session)
}

#[tokio::test]
async fn a_reopened_session_has_its_files_and_history_but_not_its_variables() {
    let f = fixture();
    let (again, session) = reopened(&f, "set x 7\nwrite output/x.txt seven", false).await;
    let t = std::fs::read_to_string(session.dir().join("transcript.jsonl")).unwrap_or_default();
    assert_eq!(session.items().len(), 4, "{t}");
    let model = ScriptedModel::new([
        py("c2", "cat output/x.txt\ncat input/data.csv\nget x"),
        say("gone"),
    ]);
    let log = model.log.clone();
    let (events, outcome) = ask(&session, "what was x?", model).await;
    assert_eq!(outcome.status, RunStatus::Finished);
    let seen = log.lock().unwrap().clone();
    let Some(Item::User { text }) = seen[0].items.last() else {
        panic!()
    };
    assert!(
        text.contains("Python variables and imports of earlier calls are gone"),
        "{text}"
    );
    let out = outputs_seen(&seen[1].items).pop().unwrap();
    assert!(
        out.contains("seven") && out.contains("a\n1") && out.contains("NameError"),
        "{out}"
    );
    assert_eq!(f.factory.started.lock().unwrap().len(), 2);
    let _ = events;
    assert_eq!(again.list().unwrap()[0].title, "make x");
}

/// A reopened session whose workspace archive is gone: the workspace is rebuilt
/// (input/ staged again, output/ put back from the app's copy), the model is told in
/// a sentence, and the user gets a typed notice that says why, not a status line.
#[tokio::test]
async fn a_workspace_without_its_archive_is_recovered_and_said_typed() {
    let f = fixture();
    let (_again, session) = reopened(&f, "write output/x.txt seven", true).await;
    let id = session.id().to_string();
    let mut all = session.subscribe();
    let model = ScriptedModel::new([py("c2", "cat output/x.txt"), say("seen")]);
    let log = model.log.clone();
    let (_, outcome) = ask(&session, "look again", model).await;
    assert_eq!(outcome.status, RunStatus::Finished);
    let mut said = Vec::new();
    while let Ok(ev) = all.try_recv() {
        assert!(!matches!(ev.kind, EventKind::Status { .. }), "{ev:?}");
        if let EventKind::Notice(n @ Notice::WorkspaceRecovered { .. }) = &ev.kind {
            let mut json = serde_json::to_value(&ev).unwrap();
            json.as_object_mut().unwrap().remove("at");
            said.push((n.clone(), json));
        }
    }
    let recovered = Notice::WorkspaceRecovered {
        archive: ArchiveProblem::Missing,
        outputs: 1,
        not_put_back: None,
    };
    assert_eq!(
        said,
        [(
            recovered.clone(),
            json!({"type": "notice", "session_id": id, "ask_id": null,
                "notice": "workspace_recovered", "archive": "missing", "outputs": 1})
        )]
    );
    let line = "the workspace archive was missing; input/ was staged again from the user's files and output/ restored from the app's copy (1 file); files written elsewhere in the workspace are gone";
    assert_eq!(recovered.to_string(), line);
    let first = format!("{:?}", log.lock().unwrap()[0].items);
    assert!(first.contains(&format!("The files: {line}.")), "{first}");
    let out = outputs_seen(&log.lock().unwrap()[1].items).pop().unwrap();
    assert!(out.contains("seven"), "{out}");
}

/// Every `sandbox_ready` a subscriber saw until the ask in `run` ended:
/// (millis, warm_for_ms).
async fn readies(session: &Session, run: impl std::future::Future) -> Vec<(u64, Option<u64>)> {
    let mut events = session.subscribe();
    run.await;
    let mut seen = Vec::new();
    while let Ok(e) = events.try_recv() {
        if let EventKind::Setup(SetupStage::SandboxReady {
            millis,
            warm_for_ms,
        }) = e.kind
        {
            seen.push((millis, warm_for_ms));
        }
    }
    seen
}

#[tokio::test]
async fn sandbox_ready_says_whether_the_ask_found_it_warm() {
    let f = fixture();
    // Cold: no sandbox before the ask; its start is said once, not warm.
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    let m = ScriptedModel::new([say("ok")]);
    let cold = readies(&session, ask(&session, "one", m)).await;
    assert!(matches!(cold[..], [(_, None)]), "{cold:?}");
    // The next ask finds it started: said again, warm, with the same start time.
    let m = ScriptedModel::new([say("ok")]);
    let warm = readies(&session, ask(&session, "two", m)).await;
    assert!(
        matches!(warm[..], [(millis, Some(_))] if millis == cold[0].0),
        "{warm:?}"
    );
    // A file added starts it in the background; an ask after that finds it warm.
    let other = f.sessions.create(SessionConfig::default()).await.unwrap();
    let mut events = other.subscribe();
    other.add_files(vec![f.file("w.csv", "x\n")]).await.unwrap();
    while !matches!(
        events.recv().await.unwrap().kind,
        EventKind::Setup(SetupStage::SandboxReady { .. })
    ) {}
    tokio::time::sleep(Duration::from_millis(50)).await;
    let m = ScriptedModel::new([say("ok")]);
    let dropped = readies(&other, ask(&other, "three", m)).await;
    assert!(
        matches!(dropped[..], [(_, Some(w))] if w >= 50),
        "{dropped:?}"
    );
}

#[tokio::test]
async fn an_idle_session_releases_its_sandbox_and_comes_back() {
    let f = fixture();
    let config = SessionConfig {
        idle_release: Duration::from_secs(1),
        ..SessionConfig::default()
    };
    let session = f.sessions.create(config).await.unwrap();
    let mut events = session.subscribe();
    session
        .add_files(vec![f.file("d.csv", "x\n")])
        .await
        .unwrap();
    ask(
        &session,
        "one",
        ScriptedModel::new([py("c1", "write output/a.txt A"), say("ok")]),
    )
    .await;
    let released = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Ok(Event {
                kind: EventKind::Setup(SetupStage::SandboxReleased),
                ..
            }) = events.recv().await
            {
                return;
            }
        }
    })
    .await;
    assert!(released.is_ok(), "the sandbox was not released");
    let first = f.factory.started.lock().unwrap()[0].clone();
    assert!(first.closed.load(std::sync::atomic::Ordering::SeqCst));
    let (_, o) = ask(
        &session,
        "two",
        ScriptedModel::new([py("c2", "cat output/a.txt"), say("ok")]),
    )
    .await;
    assert_eq!(o.status, RunStatus::Finished);
    assert_eq!(f.factory.started.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn events_stream_in_order_with_a_pinned_shape() {
    let f = fixture();
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    let model = ScriptedModel::new([
        Step::Reply(vec![
            Item::Assistant {
                text: "Let me look at the data first.".into(),
            },
            ScriptedModel::call(
                "c1",
                "python",
                json!({"code": "stream 3 50\nwrite output/chart.png x\nfigure"}),
            ),
        ]),
        say("Done: output/chart.png."),
    ]);
    let (events, outcome) = ask(&session, "Plot it", model).await;
    assert_eq!(outcome.status, RunStatus::Finished);
    // The ids are typed in the core (a session's, an ask's, a call's) and plain
    // strings on the wire (pinned below).
    for e in &events {
        assert_eq!(&e.session_id, session.id());
        assert_eq!(e.ask_id, Some(AskId::from("ask-1")));
        assert!(e.at.ends_with('Z') && e.at.contains('T'));
    }
    let calls: Vec<&CallId> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall { call_id, .. } | EventKind::CellResult { call_id, .. } => {
                Some(call_id)
            }
            _ => None,
        })
        .collect();
    assert_eq!(calls, [&CallId::from("c1"), &CallId::from("c1")]);
    let kinds: Vec<String> = events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let mut compact: Vec<&str> = Vec::new();
    for k in &kinds {
        if compact.last() != Some(&k.as_str()) {
            compact.push(k);
        }
    }
    assert_eq!(
        compact,
        [
            "ask_started",
            "turn_started",
            "text_delta",
            "tool_call_delta",
            "usage",
            "text",
            "tool_call",
            "cell_output",
            "cell_result",
            "cell_image",
            "artifact",
            "turn_started",
            "text_delta",
            "usage",
            "text",
            "ask_finished"
        ]
    );
    // The serialized shape of each kind a UI reads.
    let by_type = |t: &str| {
        events
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .find(|v| v["type"] == t)
            .unwrap()
    };
    let keys = |t: &str| {
        let mut k: Vec<String> = by_type(t).as_object().unwrap().keys().cloned().collect();
        k.sort();
        k.join(",")
    };
    assert_eq!(
        keys("ask_started"),
        "ask_id,at,model,prompt,session_id,type"
    );
    assert_eq!(keys("text_delta"), "ask_id,at,session_id,text,type");
    assert_eq!(
        keys("tool_call_delta"),
        "arguments,ask_id,at,call_id,name,session_id,type"
    );
    assert_eq!(
        keys("tool_call"),
        "ask_id,at,call_id,code,name,session_id,type"
    );
    assert_eq!(
        keys("cell_output"),
        "ask_id,at,call_id,session_id,stream,text,type"
    );
    assert_eq!(
        keys("cell_result"),
        "ask_id,at,call_id,duration_ms,note,session_id,status,stderr,stdout,traceback,type"
    );
    assert_eq!(keys("cell_image"), "ask_id,at,call_id,path,session_id,type");
    assert_eq!(
        keys("artifact"),
        "ask_id,at,bytes,call_id,kind,path,session_id,type"
    );
    assert_eq!(
        keys("usage"),
        "ask_id,at,cached_tokens,cost_usd,input_tokens,output_tokens,session_id,total_input_tokens,total_output_tokens,type"
    );
    assert_eq!(
        keys("ask_finished"),
        "answer,ask_id,at,outputs_dir,session_id,status,turns,type"
    );
    assert_eq!(by_type("cell_result")["call_id"], "c1");
    assert_eq!(by_type("ask_started")["ask_id"], "ask-1");
    assert_eq!(by_type("ask_started")["session_id"], session.id().as_str());
    assert_eq!(by_type("cell_output")["stream"], "stdout");
    assert_eq!(by_type("cell_output")["text"], "line 0\n");
    assert_eq!(by_type("cell_result")["status"], "ok");
    assert_eq!(by_type("artifact")["kind"], "image");
    assert_eq!(by_type("artifact")["path"], "chart.png");
    assert_eq!(
        by_type("ask_finished")["status"],
        json!({"status": "finished"})
    );
    let code = by_type("tool_call")["code"].as_str().unwrap().to_string();
    assert!(code.starts_with("stream 3 50"));
    // The figure is kept in the session folder, where the event says.
    let fig = by_type("cell_image")["path"].as_str().unwrap().to_string();
    assert!(session.dir().join(&fig).is_file(), "{fig}");
    // Deltas put together are the text and the arguments.
    let text: String = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .take_while(|t| !t.is_empty())
        .collect();
    assert!(text.starts_with("Let me look at the data first."));
}

/// Connections through the egress proxy: an `egress` event each, with a pinned
/// shape, before the call's result; one line for the model on what was reached and
/// what was refused.
#[tokio::test]
async fn egress_connections_are_events_of_their_call_and_a_line_for_the_model() {
    let f = fixture();
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    let model = ScriptedModel::new([
        py(
            "c1",
            "connect ok.pypi.test 443\nconnect ok.pypi.test 443\nconnect evil.test 443",
        ),
        say("done"),
    ]);
    let log = model.log.clone();
    let (events, _) = ask(&session, "fetch", model).await;
    let json: Vec<serde_json::Value> = events
        .iter()
        .map(|e| {
            let mut v = serde_json::to_value(e).unwrap();
            v.as_object_mut().unwrap().remove("at");
            v
        })
        .collect();
    let egress: Vec<&serde_json::Value> = json.iter().filter(|v| v["type"] == "egress").collect();
    assert_eq!(egress.len(), 5, "{egress:?}");
    assert_eq!(
        *egress[0],
        json!({"type": "egress", "session_id": session.id(), "ask_id": "ask-1", "call_id": "c1",
               "connection": {"host": "ok.pypi.test", "port": 443, "method": "connect",
                              "event": "allowed", "addr": "192.0.2.1:443"}})
    );
    assert_eq!(
        egress[1]["connection"],
        json!({"host": "ok.pypi.test", "port": 443, "method": "connect",
               "event": "closed", "bytes_up": 10, "bytes_down": 20})
    );
    assert_eq!(
        egress[4]["connection"],
        json!({"host": "evil.test", "port": 443, "method": "connect",
               "event": "refused", "reason": {"kind": "not_in_allowlist"}})
    );
    // Reported before the result of the call that made them.
    let at = |t: &str| json.iter().position(|v| v["type"] == t).unwrap();
    assert!(at("egress") < at("cell_result"));
    let seen = log.lock().unwrap().clone();
    let out = outputs_seen(&seen.last().unwrap().items).pop().unwrap();
    assert!(
        out.contains("[note] network (allowlist proxy): reached ok.pypi.test:443 (2x); refused evil.test:443 (not in the allowlist)"),
        "{out}"
    );
}

#[tokio::test]
async fn charts_reach_a_vision_model_and_never_one_without() {
    for vision in [true, false] {
        let f = fixture();
        let session = f.sessions.create(SessionConfig::default()).await.unwrap();
        let mut model = ScriptedModel::new([
            py("c1", "write output/chart.png x\nfigure"),
            Step::Reply(vec![ScriptedModel::call(
                "c2",
                "view_image",
                json!({"path": "output/chart.png"}),
            )]),
            say("ok"),
        ]);
        model.vision = vision;
        let log = model.log.clone();
        ask(&session, "plot", model).await;
        let seen = log.lock().unwrap().clone();
        let images: Vec<usize> = seen
            .last()
            .unwrap()
            .items
            .iter()
            .filter_map(|i| match i {
                Item::ToolOutput { images, .. } => Some(images.len()),
                _ => None,
            })
            .collect();
        assert_eq!(seen[0].tools.contains(&"view_image".to_string()), vision);
        if vision {
            // "x" is no PNG: the chart is refused with a note; the figure goes through.
            assert_eq!(images, [1, 0]);
            let out = outputs_seen(&seen[1].items).pop().unwrap();
            assert!(out.contains("could not be shown"), "{out}");
        } else {
            assert_eq!(images, [0, 0]);
        }
    }
}

#[tokio::test]
async fn long_outputs_stay_within_the_budget_and_the_ask_ends_with_a_summary() {
    let f = fixture();
    let config = SessionConfig {
        limits: sandalyst::agent::Limits {
            max_turns: 25,
            ..Default::default()
        },
        ..SessionConfig::default()
    };
    let session = f.sessions.create(config).await.unwrap();
    let steps: Vec<Step> = (0..25)
        .map(|i| py(&format!("c{i}"), &format!("repeat 2000 {}", "y".repeat(99))))
        .chain([say("Summary: printed a lot.")])
        .collect();
    let mut model = ScriptedModel::new(steps);
    model.context_window = Some(128_000);
    let log = model.log.clone();
    let (_, outcome) = ask(&session, "print a lot", model).await;
    assert_eq!(
        outcome.status,
        RunStatus::MaxTurns {
            turns: 25,
            missing: vec![]
        }
    );
    assert_eq!(outcome.answer.as_deref(), Some("Summary: printed a lot."));
    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 26);
    assert!(
        seen.last().unwrap().tools.is_empty(),
        "the summary turn offers no tools"
    );
    for s in seen.iter() {
        for out in outputs_seen(&s.items) {
            assert!(out.chars().count() <= 12_500, "{}", out.len());
        }
        let total: usize = s
            .items
            .iter()
            .map(|i| serde_json::to_string(i).unwrap().len())
            .sum();
        assert!(
            total / 4 < 128_000 * 8 / 10,
            "request of ~{} tokens",
            total / 4
        );
    }
    let sandbox = f.factory.started.lock().unwrap()[0].clone();
    let full = sandbox
        .file(".sandalyst/calls/c0.txt")
        .expect("full output kept");
    assert!(full.len() > 200_000);
    let out0 = outputs_seen(&seen[1].items).pop().unwrap();
    assert!(out0.contains("/workspace/.sandalyst/calls/c0.txt"));
}

#[tokio::test]
async fn cut_off_replies_missing_files_and_cost_budgets_are_handled() {
    let f = fixture();
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    // Cut off, then an answer without the file the task names: one reminder.
    let model = ScriptedModel::new([
        Step::CutOff(vec![Item::Assistant {
            text: "Here is the beginn".into(),
        }]),
        say("All done."),
        py("c1", "write output/report.md hi"),
        say("All done, see output/report.md."),
    ]);
    let log = model.log.clone();
    let (_, o) = ask(&session, "Write output/report.md please", model).await;
    assert_eq!(o.status, RunStatus::Finished);
    let seen = log.lock().unwrap().clone();
    let notes: Vec<String> = seen
        .last()
        .unwrap()
        .items
        .iter()
        .filter_map(|i| match i {
            Item::User { text } if text.starts_with("[from the app]") => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].contains("cut off"));
    assert!(notes[1].contains("output/report.md") && notes[1].contains("does not exist"));
    drop(seen);

    // A cost budget stops the ask after a last summary.
    let mut config = SessionConfig::default();
    config.limits.max_cost_usd = Some(0.01);
    let session = f.sessions.create(config).await.unwrap();
    let usage = Usage {
        input_tokens: 10_000,
        output_tokens: 1_000,
        cached_tokens: 0,
    };
    let mut model = ScriptedModel::new([
        Step::Costly(
            vec![ScriptedModel::call(
                "c1",
                "python",
                json!({"code": "print a"}),
            )],
            usage,
        ),
        say("Stopped on budget; did a."),
    ]);
    model.price = Some(Price {
        input: 1.0,
        cached_input: None,
        output: 2.0,
    });
    let (events, o) = ask(&session, "spend", model).await;
    assert_eq!(
        o.status,
        RunStatus::CostLimit {
            usd: 0.01,
            missing: vec![]
        }
    );
    assert_eq!(o.answer.as_deref(), Some("Stopped on budget; did a."));
    assert!((o.cost_usd.unwrap() - 0.012).abs() < 1e-9);
    assert!(events
        .iter()
        .any(|e| matches!(e.kind, EventKind::Usage { cost_usd: Some(c), .. } if c > 0.0)));
}

#[tokio::test]
async fn an_engine_that_does_not_answer_is_a_typed_error() {
    let f = fixture();
    *f.factory.fail_with.lock().unwrap() = Some(SessionError::EngineUnavailable {
        message: "no engine at unix:///nowhere".into(),
    });
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    let (events, o) = ask(&session, "hello", ScriptedModel::new([])).await;
    assert!(matches!(o.status, RunStatus::Failed { .. }));
    assert_eq!(o.error.as_ref().unwrap().code(), "engine_unavailable");
    let err = events
        .iter()
        .find(|e| matches!(e.kind, EventKind::Error { .. }))
        .unwrap();
    let v = serde_json::to_value(err).unwrap();
    assert_eq!(v["error"]["code"], "engine_unavailable");
    assert_eq!(v["error"]["message"], "no engine at unix:///nowhere");
    // The session itself is fine: history and files still work.
    assert_eq!(f.sessions.list().unwrap().len(), 1);
    f.sessions.delete(session.id()).await.unwrap();
    assert!(f.sessions.list().unwrap().is_empty());
}

#[tokio::test]
async fn a_context_too_long_reply_shrinks_the_history_and_asks_again() {
    let f = fixture();
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    let model = ScriptedModel::new([
        py("c1", "repeat 100 aaaaaaaaa"),
        py("c2", "repeat 100 bbbbbbbbb"),
        py("c3", "repeat 100 ccccccccc"),
        Step::ContextTooLong,
        say("fits now"),
    ]);
    let log = model.log.clone();
    let (_, o) = ask(&session, "go", model).await;
    assert_eq!(o.status, RunStatus::Finished);
    assert_eq!(o.answer.as_deref(), Some("fits now"));
    let seen = log.lock().unwrap().clone();
    let retried = outputs_seen(&seen[4].items);
    assert!(retried[0].starts_with("[earlier output:"), "{retried:?}");
    assert!(retried[2].contains("ccccccccc"));

    // A provider failure that is not about length ends the ask with a typed error.
    let (_, o) = ask(
        &session,
        "again",
        ScriptedModel::new([Step::Fail("HTTP 503 from the server".into())]),
    )
    .await;
    assert!(matches!(o.status, RunStatus::Failed { .. }));
    assert_eq!(o.error.unwrap().code(), "model");
}

#[tokio::test]
async fn an_output_file_is_on_the_host_as_soon_as_its_artifact_event_arrives() {
    let f = fixture();
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    let model = ScriptedModel::new([
        py("c1", "write output/early.csv a,b"),
        py("c2", "sleep 400"),
        say("done"),
    ]);
    let mut h = session.ask("go".into(), Box::new(model)).unwrap();
    let mut seen_live = false;
    while let Some(e) = h.events.recv().await {
        if let EventKind::Artifact { path, call_id, .. } = &e.kind {
            assert_eq!((path.as_str(), call_id.as_str()), ("early.csv", "c1"));
            let copy = session.outputs_dir().join("early.csv");
            assert_eq!(std::fs::read_to_string(copy).unwrap(), "a,b");
            assert!(session.is_busy(), "the ask is still running");
            seen_live = true;
        }
    }
    assert!(seen_live);
    assert_eq!(h.outcome().await.status, RunStatus::Finished);
}

/// A scripted model (or a provider) may use a call id again in a later ask: each call
/// keeps its own result, so a call stopped in one ask is not replayed because a call of
/// the same id ran to the end in the next (the desktop's re-run hung on such a sleep).
#[tokio::test]
async fn a_call_id_used_again_in_a_later_ask_keeps_its_own_result() {
    let f = fixture();
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    let mut handle = session
        .ask(
            "wait".into(),
            Box::new(ScriptedModel::new([py(
                "call_1",
                "print sleeping\nsleep 60000",
            )])),
        )
        .unwrap();
    while let Some(ev) = handle.events.recv().await {
        if matches!(ev.kind, EventKind::CellOutput { .. }) {
            break;
        }
    }
    handle.cancel();
    assert_eq!(handle.outcome().await.status, RunStatus::Cancelled);
    let model = ScriptedModel::new([py("call_1", "print fine"), say("done")]);
    ask(&session, "again", model).await;

    let run = sandalyst::store::Store::open(f.sessions.root().to_path_buf())
        .unwrap()
        .open_run(session.id())
        .unwrap();
    let blocks = sandalyst::analysis::cells(&run).unwrap();
    let statuses: Vec<(String, String)> = sandalyst::analysis::code_cells(&blocks)
        .iter()
        .map(|c| (c.code.clone(), c.status.clone()))
        .collect();
    assert_eq!(
        statuses,
        [
            (
                "print sleeping\nsleep 60000".to_string(),
                "cancelled".to_string()
            ),
            ("print fine".to_string(), "ok".to_string()),
        ]
    );
    let (replayed, skipped) = sandalyst::rerun::replay_cells(&blocks);
    assert_eq!(skipped, 1);
    assert_eq!(replayed.len(), 1);
    assert_eq!(replayed[0].code, "print fine");
}

#[tokio::test]
async fn one_owner_writes_a_session_and_looking_at_it_takes_no_lock() {
    let f = fixture();
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    assert!(!session.is_owned(), "a new, idle session keeps no lock");
    let id = session.id().to_string();
    // A second `Sessions` over the same folder stands for another process: its lock
    // handle conflicts like one.
    let other = Sessions::new(f.sessions.root().to_path_buf(), f.factory.clone()).unwrap();
    let run_json = session.dir().join("run.json");
    let before = std::fs::read(&run_json).unwrap();
    let viewed = other.open(&id).await.unwrap();
    assert_eq!(std::fs::read(&run_json).unwrap(), before, "opening wrote");
    assert!(!viewed.is_owned());

    session
        .add_files(vec![f.file("d.csv", "a\n1\n")])
        .await
        .unwrap();
    assert!(session.is_owned(), "the sandbox it starts keeps the lock");
    let busy = |e: SessionError| {
        assert_eq!(e.code(), "session_busy", "{e}");
        assert!(e
            .to_string()
            .contains(&format!("pid {}", std::process::id())));
    };
    busy(
        viewed
            .add_files(vec![f.file("e.csv", "b\n2\n")])
            .await
            .unwrap_err(),
    );
    busy(viewed.remove_file("d.csv").await.unwrap_err());
    busy(
        viewed
            .set_config(SessionConfig::default())
            .await
            .unwrap_err(),
    );
    busy(other.rename(&id, "theirs").await.unwrap_err());
    busy(other.delete(&id).await.unwrap_err());
    match viewed.ask("q".into(), Box::new(ScriptedModel::new([say("no")]))) {
        Err(e) => busy(e),
        Ok(_) => panic!("asked a session another owner holds"),
    }
    assert!(!viewed.is_busy(), "a refused ask left the session busy");

    let (_, first) = ask(&session, "first", ScriptedModel::new([say("one")])).await;
    assert_eq!(first.status, RunStatus::Finished);
    assert!(
        session.is_owned(),
        "the live sandbox keeps the lock after the ask"
    );
    session.release().await;
    assert!(!session.is_owned(), "released with the sandbox");

    // Now the other may write, and it sees the first owner's ask.
    let (_, second) = ask(&viewed, "second", ScriptedModel::new([say("two")])).await;
    assert_eq!(
        (second.ask_id.as_str(), second.status),
        ("ask-2", RunStatus::Finished)
    );
    assert_eq!(viewed.meta().asks[0].prompt, "first");
    busy(
        session
            .add_files(vec![f.file("f.csv", "c\n3\n")])
            .await
            .unwrap_err(),
    );
    viewed.release().await;
    assert!(!viewed.is_owned());
    // A rename takes the lock, reads the session again and lets go.
    f.sessions.rename(&id, "mine").await.unwrap();
    assert!(!session.is_owned());
    let ids: Vec<String> = session.meta().asks.into_iter().map(|a| a.id).collect();
    assert_eq!(ids, ["ask-1", "ask-2"]);
    assert_eq!(other.open(&id).await.unwrap().meta().title, "mine");
}

/// Under approvals a call waits for the analyst's answer, given through the session;
/// the decision is kept with the ask, the rejection reason reaches the model, and an
/// answer to no waiting call is refused. The events' shapes are pinned.
#[tokio::test]
async fn calls_wait_for_the_analyst_and_each_decision_is_kept() {
    use sandalyst::approval::{Answer, AnswerError, ApprovalMode, Decision, Resolution};
    let f = fixture();
    let config = SessionConfig {
        approval: ApprovalMode::All,
        ..SessionConfig::default()
    };
    let session = f.sessions.create(config).await.unwrap();
    let model = ScriptedModel::new([
        py("c1", "print one"),
        py("c2", "print two"),
        py("c3", "print three"),
        say("Done."),
    ]);
    let answers = [
        Answer::approve(),
        Answer {
            decision: Decision::Edit {
                code: "print edited".into(),
            },
            always: false,
        },
        Answer {
            decision: Decision::Reject {
                reason: "not this one".into(),
            },
            always: false,
        },
    ];
    let mut handle = session.ask("Go".into(), Box::new(model)).unwrap();
    let (mut events, mut answers) = (Vec::new(), answers.into_iter());
    while let Some(ev) = handle.events.recv().await {
        if let EventKind::ApprovalRequested { call_id, .. } = &ev.kind {
            assert_eq!(
                session.pending_approvals(),
                [sandalyst::api::CallId::from(call_id.as_str())]
            );
            session
                .answer_approval(&call_id.as_str().into(), answers.next().unwrap())
                .unwrap();
        }
        events.push(ev);
    }
    let outcome = handle.outcome().await;
    assert_eq!(outcome.status, RunStatus::Finished);
    let json: Vec<serde_json::Value> = events
        .iter()
        .map(|e| {
            let mut v = serde_json::to_value(e).unwrap();
            for k in ["at", "session_id", "ask_id"] {
                v.as_object_mut().unwrap().remove(k);
            }
            v
        })
        .filter(|v| v["type"].as_str().unwrap().starts_with("approval_"))
        .collect();
    assert_eq!(json.len(), 6);
    assert_eq!(
        json[0],
        json!({"type": "approval_requested", "call_id": "c1", "tool": "python", "code": "print one", "reason": ""})
    );
    assert_eq!(
        json[5],
        json!({"type": "approval_resolved", "call_id": "c3", "resolution": "rejected", "reason": "not this one", "always": false})
    );
    // What ran and what the model read.
    let outputs = outputs_seen(&session.items());
    assert!(outputs[1].contains("edited"), "{outputs:?}");
    assert!(outputs[2].contains("not this one"), "{outputs:?}");
    let kept: Vec<Resolution> = session.meta().asks[0]
        .approvals
        .iter()
        .map(|r| r.resolution)
        .collect();
    assert_eq!(
        kept,
        [
            Resolution::Approved,
            Resolution::Edited,
            Resolution::Rejected
        ]
    );
    assert!(matches!(
        session.answer_approval(&"c1".into(), Answer::approve()),
        Err(AnswerError::NotPending { .. })
    ));
    // A past ask draws its decisions from run.json, after each call (as edited).
    let past = sandalyst::api::history::past_asks(&session);
    let drawn: Vec<serde_json::Value> = past[0]
        .events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|v| v["type"] == "tool_call" || v["type"] == "approval_resolved")
        .collect();
    assert_eq!(drawn.len(), 6, "{drawn:?}");
    assert_eq!(drawn[2]["code"], "print edited");
    assert_eq!(drawn[3]["resolution"], "edited");
    assert_eq!(
        drawn[5],
        json!({"type": "approval_resolved", "call_id": "c3", "resolution": "rejected", "reason": "not this one", "always": false})
    );
    // Past results as the live ones said them: a status and the streams, not the
    // text prepared for the model; a call that never ran keeps its words as the note.
    let results: Vec<serde_json::Value> = past[0]
        .events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|v| v["type"] == "cell_result")
        .collect();
    assert_eq!(results[1]["status"], "ok");
    assert_eq!(results[1]["stdout"], "edited\n");
    assert!(results[1]["note"].is_null());
    assert!(results[2]["status"].is_null());
    assert!(results[2]["note"]
        .as_str()
        .unwrap()
        .contains("not this one"));
}

/// The offline analyst's machine lines stay in the transcript (its planner and re-runs
/// read them) and out of what a front end is shown: the live events of `Ask::follow`
/// and a reopened session's cells, which also bring back the figures a call showed.
#[tokio::test]
async fn machine_lines_reach_the_transcript_but_not_the_front_end() {
    use sandalyst::api::App;
    let dir = tempfile::tempdir().unwrap();
    let app = App::with_factory(
        dir.path().join("sessions"),
        Arc::new(FakeFactory::default()),
    )
    .unwrap();
    let session = app.create_session(SessionConfig::default()).await.unwrap();
    let model = ScriptedModel::new([
        py(
            "c1",
            "print Tuesday uses the most.\nprint SANDALYST_ANSWER {\"skill\": \"aggregate\", \"ok\": true}\nfigure\nprint done",
        ),
        say("**Tuesday**"),
    ]);
    let ask = app
        .ask(&session, "Which weekday?".into(), Box::new(model))
        .unwrap();
    let seen = std::sync::Mutex::new(Vec::new());
    let outcome = ask.follow(&|e: Event| seen.lock().unwrap().push(e)).await;
    assert_eq!(outcome.status, RunStatus::Finished);
    // The code that prints the line is shown as it ran; what it printed is not.
    let outputs: Vec<Event> = seen
        .into_inner()
        .unwrap()
        .into_iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::CellOutput { .. } | EventKind::CellResult { .. }
            )
        })
        .collect();
    let seen = serde_json::to_string(&outputs).unwrap();
    assert!(!seen.contains("SANDALYST_"), "{seen}");
    assert!(
        seen.contains("Tuesday uses the most.\\n") && seen.contains("done"),
        "{seen}"
    );
    assert!(outputs_seen(&session.items())
        .iter()
        .any(|o| o.contains("SANDALYST_ANSWER {\"skill\"")));

    let view = app.view(session.id()).await.unwrap();
    let past: Vec<serde_json::Value> = view.asks[0]
        .events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    let result = past.iter().find(|v| v["type"] == "cell_result").unwrap();
    assert_eq!(result["stdout"], "Tuesday uses the most.\ndone\n");
    let at = |t: &str| past.iter().position(|v| v["type"] == t).unwrap();
    assert!(
        at("cell_image") > at("cell_result"),
        "after its result, as live"
    );
    let figure = past[at("cell_image")]["path"].as_str().unwrap();
    assert_eq!(past[at("cell_image")]["call_id"], "c1");
    assert!(session.dir().join(figure).is_file(), "{figure}");
}

#[tokio::test]
async fn an_ask_whose_named_outputs_stay_empty_ends_incomplete_with_a_pinned_shape() {
    let f = fixture();
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    let model = ScriptedModel::new([
        // Code in the text, no call: not taken for the answer.
        say("Here is the code:\n```python\nwrite output/chart.png\n```\nThis should do it."),
        py(
            "c1",
            "write output/chart.png\nwrite output/notes.txt three rows",
        ),
        say("Done."),
        say("Done, really."),
        say("Done, I promise."),
    ]);
    let (events, outcome) = ask(&session, "Plot it to output/chart.png", model).await;
    let problem = json!({"path": "output/chart.png", "problem": "is empty (0 bytes)"});
    assert_eq!(
        serde_json::to_value(&outcome.status).unwrap(),
        json!({"status": "incomplete", "problems": [problem]})
    );
    let nothing: Vec<serde_json::Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|v| v["type"] == "nothing_ran")
        .map(|mut v| {
            v.as_object_mut().unwrap().remove("at");
            v
        })
        .collect();
    assert_eq!(
        nothing,
        [
            json!({"type": "nothing_ran", "session_id": session.id(), "ask_id": "ask-1",
                "reason": "your reply holds code but calls no tool, so the code did not run"})
        ]
    );
    // The run keeps the outputs, the empty one marked.
    let meta = session.meta();
    let chart = meta.outputs.iter().find(|o| o.path == "chart.png").unwrap();
    assert_eq!(chart.invalid.as_deref(), Some("is empty (0 bytes)"));
    let notes = meta.outputs.iter().find(|o| o.path == "notes.txt").unwrap();
    assert_eq!(notes.invalid, None);
    assert_eq!(meta.status, Some(outcome.status.clone()));
}

/// The `engine` setup stage's shape: where the engine came from is typed, and a
/// session recorded before it was reported still reads.
#[test]
fn the_engine_stage_says_where_the_engine_came_from() {
    use sandalyst::sandbox::engine::EngineSource;
    let stage = SetupStage::Engine {
        name: "Docker Engine".into(),
        version: "20.10.24 (API 1.41; context colima: unix:///c.sock)".into(),
        source: Some(EngineSource::Context {
            name: "colima".into(),
            host: "unix:///c.sock".into(),
        }),
    };
    assert_eq!(
        serde_json::to_value(&stage).unwrap(),
        json!({
            "stage": "engine",
            "name": "Docker Engine",
            "version": "20.10.24 (API 1.41; context colima: unix:///c.sock)",
            "source": {"kind": "context", "name": "colima", "host": "unix:///c.sock"}
        })
    );
    for (source, kind) in [
        (
            EngineSource::DockerHost {
                host: "ssh://u@h".into(),
            },
            "docker_host",
        ),
        (
            EngineSource::DefaultSocket {
                host: "unix:///var/run/docker.sock".into(),
            },
            "default_socket",
        ),
    ] {
        let v = serde_json::to_value(&source).unwrap();
        assert_eq!(v["kind"], kind);
        assert_eq!(v["host"], source.host());
    }
    let old: SetupStage =
        serde_json::from_value(json!({"stage": "engine", "name": "Podman", "version": "4.3.1"}))
            .unwrap();
    assert!(matches!(old, SetupStage::Engine { source: None, .. }));
}

/// The command line's `runs list` and the desktop's history are one listing, in one
/// order: newest first, the folders that cannot be read last.
#[tokio::test]
async fn the_command_line_and_the_desktop_list_sessions_in_one_order() {
    use sandalyst::api::App;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let app = App::with_factory(root.clone(), Arc::new(FakeFactory::default())).unwrap();
    for _ in 0..3 {
        app.create_session(SessionConfig::default()).await.unwrap();
    }
    std::fs::create_dir(root.join("20200101-000000-0000")).unwrap();
    let desktop = app.list_sessions().await.unwrap();
    let cli = app.list_runs().await.unwrap();
    let ids: Vec<&str> = desktop.iter().map(|s| s.id.as_str()).collect();
    let rows: Vec<&str> = cli
        .runs
        .iter()
        .map(|r| r.id.as_str())
        .chain(cli.unreadable.iter().map(|u| u.folder.as_str()))
        .collect();
    assert_eq!(rows, ids);
    assert_eq!(ids.len(), 4);
    let mut newest_first = ids[..3].to_vec();
    newest_first.sort_by(|a, b| b.cmp(a));
    assert_eq!(ids[..3], newest_first[..]);
    assert_eq!(
        ids[3], "20200101-000000-0000",
        "the unreadable folder comes last"
    );
    assert!(cli
        .runs
        .iter()
        .all(|r| r.status == "in progress" && r.outputs == 0));
}

/// Outputs that are not brought back reach the front ends typed, as one event with
/// each path and why (not a line of prose per file), and run.json keeps them all.
#[tokio::test]
async fn refused_outputs_are_one_typed_event_with_their_reasons() {
    let f = fixture();
    let mut config = SessionConfig::default();
    config.collect.max_file_bytes = 50;
    let session = f.sessions.create(config).await.unwrap();
    let big = "x".repeat(60);
    let model = ScriptedModel::new([
        py(
            "c1",
            &format!("write output/small.txt ok\nwrite output/big.txt {big}"),
        ),
        say("made them"),
    ]);
    let (events, outcome) = ask(&session, "make files", model).await;
    assert_eq!(outcome.status, RunStatus::Finished);
    let refused: Vec<(usize, Vec<(String, String)>)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::OutputsRefused { count, refused } => Some((
                *count,
                refused
                    .iter()
                    .map(|r| (r.path.clone(), r.reason.clone()))
                    .collect(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(refused.len(), 1, "{events:#?}");
    let (count, list) = &refused[0];
    assert_eq!(*count, 1);
    assert_eq!(list[0].0, "big.txt");
    assert!(
        list[0].1.contains("50 byte limit per file"),
        "{}",
        list[0].1
    );
    assert!(!events.iter().any(|e| matches!(&e.kind,
        EventKind::Status { message } if message.contains("big.txt"))));
    assert_eq!(session.meta().refused.len(), 1);
    let json = serde_json::to_value(refused_event(&events)).unwrap();
    assert_eq!(json["type"], "outputs_refused");
    assert_eq!(json["refused"][0]["path"], "big.txt");
}

fn refused_event(events: &[Event]) -> EventKind {
    events
        .iter()
        .find(|e| matches!(e.kind, EventKind::OutputsRefused { .. }))
        .map(|e| e.kind.clone())
        .unwrap()
}

/// A desktop ask honours config.toml as the command line does: the settings the
/// shell loads start from the file, so a new session asks before every call
/// (`approve = "all"`), and gets the file's network and `[image]`.
#[tokio::test]
async fn a_desktop_ask_honours_the_config_files_approvals_network_and_image() {
    use sandalyst::api::{settings, App};
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "approve = \"all\"\nnetwork = \"allow:pypi.org\"\n[image]\npip = [\"tabulate\"]\nbuild_network = \"host\"\n",
    )
    .unwrap();
    // The environment names the file: in a process of its own.
    if !crate::common::in_own_process(&[("SANDALYST_CONFIG", config.to_str().unwrap())]) {
        return;
    }
    let app = App::with_factory(
        dir.path().join("sessions"),
        Arc::new(FakeFactory::default()),
    )
    .unwrap();
    // As the desktop shell does: its settings loaded at start, a session made from them.
    let current = settings::load(app.root());
    let session = app
        .create_session(settings::desktop_config(&current).await.unwrap())
        .await
        .unwrap();
    let steps = dir.path().join("steps.json");
    std::fs::write(&steps, r#"[{"python": "print hello"}, {"say": "done"}]"#).unwrap();
    let ask = app
        .ask_with_settings(
            session.id(),
            "go".into(),
            format!("replay:{}", steps.display()),
            &current,
            None,
        )
        .await
        .unwrap();
    let asked = std::sync::Mutex::new(Vec::new());
    let outcome = ask
        .follow(&|e: Event| {
            if let EventKind::ApprovalRequested { tool, code, .. } = &e.kind {
                asked.lock().unwrap().push(format!("{tool}: {code}"));
                app.cancel(session.id());
            }
        })
        .await;
    assert_eq!(asked.into_inner().unwrap(), ["python: print hello"]);
    assert_eq!(outcome.status, RunStatus::Cancelled);
    let c = session.config();
    assert_eq!(c.sandbox.network.to_string(), "allow:pypi.org");
    assert_eq!(c.sandbox.packages.pip(), ["tabulate"]);
    assert_eq!(c.sandbox.build.network.as_deref(), Some("host"));
}

/// A FIFO path, made with mkfifo(3).
#[cfg(unix)]
fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[cfg(unix)]
/// Through the session API both front ends call: a special file is a typed
/// `bad_input` that leaves the session unchanged; an add's notes are returned (the
/// desktop shows them) and go out as status events (the command line prints them).
#[tokio::test(flavor = "multi_thread")]
async fn the_session_api_refuses_special_files_typed_and_returns_the_notes() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let sessions = Sessions::new(
        dir.path().join("sessions"),
        std::sync::Arc::new(FakeFactory::default()),
    )
    .unwrap();
    let session = sessions.create(SessionConfig::default()).await.unwrap();
    let mut events = session.subscribe();
    let fifo = dir.path().join("p");
    mkfifo(&fifo);
    let e = tokio::time::timeout(
        Duration::from_secs(60),
        session.add_inputs(vec![fifo.clone()]),
    )
    .await
    .expect("add_inputs hung on a FIFO")
    .unwrap_err();
    assert_eq!(e.code(), "bad_input");
    assert!(e.to_string().contains("is a named pipe (FIFO)"), "{e}");
    assert!(session.meta().files.is_empty());

    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("a.csv"), "1").unwrap();
    symlink("/dev/zero", docs.join("zero")).unwrap();
    let added = session.add_inputs(vec![docs]).await.unwrap();
    let names: Vec<_> = added.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["docs/a.csv"]);
    // Typed: the link, where it leads, and why it was left out.
    assert_eq!(
        added.notes,
        [InputNote::link_left_out(
            "docs/zero".into(),
            "/dev/zero".into(),
            LinkProblem::Special {
                target_is: FileKind::CharDevice
            },
        )]
    );
    let said = loop {
        let ev = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .unwrap()
            .unwrap();
        assert!(!matches!(ev.kind, EventKind::Status { .. }), "{ev:?}");
        if let EventKind::Notice(n) = &ev.kind {
            // The event as the page reads it.
            let mut json = serde_json::to_value(&ev).unwrap();
            json.as_object_mut().unwrap().remove("at");
            assert_eq!(
                json,
                serde_json::json!({"type": "notice", "session_id": session.id(), "ask_id": null,
                    "notice": "input_note", "kind": "link_left_out", "dest": "docs/zero",
                    "target": "/dev/zero", "why": "special", "target_is": "char_device",
                    "include": []})
            );
            break n.clone();
        }
    };
    assert_eq!(said, Notice::InputNote(added.notes[0].clone()));
    assert_eq!(
        said.to_string(),
        "left out input/docs/zero: it is a link to /dev/zero, which is a character device; only regular files and folders can be staged"
    );
    // The model is told what was left out, with its first request.
    let model = sandalyst::model::scripted::ScriptedModel::new([]);
    let log = model.log.clone();
    let h = session
        .ask("list the files".into(), Box::new(model))
        .unwrap();
    h.outcome().await;
    let first = format!("{:?}", log.lock().unwrap()[0].items);
    assert!(
        first.contains("While staging the user's folders: left out input/docs/zero"),
        "{first}"
    );
    session.close().await;
}

#[test]
fn zero_or_tiny_limits_are_rejected_with_a_message() {
    type Tweak = fn(&mut SessionConfig);
    let cases: [(Tweak, &str); 8] = [
        (|c| c.limits.max_turns = 0, "turn limit"),
        (|c| c.limits.wall_time = Default::default(), "time limits"),
        (
            |c| c.limits.call_timeout = Default::default(),
            "time limits",
        ),
        (|c| c.sandbox.memory_bytes = 0, "memory"),
        (|c| c.sandbox.nano_cpus = 0, "CPU"),
        (|c| c.sandbox.pids_limit = 0, "process limit"),
        (|c| c.sandbox.workspace_bytes = 0, "workspace"),
        (|c| c.sandbox.output_cap_bytes = 0, "output cap"),
    ];
    SessionConfig::default().validate().unwrap();
    for (tweak, needle) in cases {
        let mut c = SessionConfig::default();
        tweak(&mut c);
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains(needle), "{needle}: {e}");
    }
    let mut c = SessionConfig::default();
    c.sandbox.tmp_bytes = 0;
    assert!(c.validate().is_err());
}

/// A known condition reaches the front ends typed: a transcript line cut by a crash
/// is set aside and the next ask says so as a `notice` event the page can branch on
/// (`transcript_repaired`, with the bytes and where they went), not as prose.
#[tokio::test]
async fn a_cut_transcript_line_is_a_typed_notice_of_the_next_ask() {
    let f = fixture();
    let session = f.sessions.create(SessionConfig::default()).await.unwrap();
    let (_, outcome) = ask(&session, "first", ScriptedModel::new([say("one")])).await;
    assert_eq!(outcome.status, RunStatus::Finished);
    let id = session.id().to_string();
    let transcript = session.dir().join("transcript.jsonl");
    session.close().await;
    let mut text = std::fs::read(&transcript).unwrap();
    text.extend_from_slice(br#"{"cut":"#);
    std::fs::write(&transcript, text).unwrap();

    let again = Sessions::new(f.sessions.root().to_path_buf(), f.factory.clone()).unwrap();
    let session = again.open(&id).await.unwrap();
    // The session's own channel: what the desktop watches and the CLI prints.
    let mut all = session.subscribe();
    let (_, outcome) = ask(&session, "second", ScriptedModel::new([say("two")])).await;
    assert_eq!(outcome.status, RunStatus::Finished);
    let mut events = Vec::new();
    while let Ok(e) = all.try_recv() {
        events.push(e);
    }
    let notice = events
        .iter()
        .find(|e| matches!(e.kind, EventKind::Notice(_)))
        .unwrap_or_else(|| panic!("no notice in {events:#?}"));
    assert!(notice.ask_id.is_some(), "it belongs to the ask");
    let json = serde_json::to_value(notice).unwrap();
    assert_eq!(json["type"], "notice");
    assert_eq!(json["notice"], "transcript_repaired");
    assert_eq!(json["bytes"], 7);
    assert_eq!(json["set_aside"], "transcript.jsonl.torn");
    let mut keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    keys.sort();
    assert_eq!(
        keys.join(","),
        "ask_id,at,bytes,notice,session_id,set_aside,type"
    );
    assert!(
        !events.iter().any(|e| matches!(&e.kind,
            EventKind::Status { message } if message.contains("cut short"))),
        "said once, typed"
    );
    session.close().await;
}
