//! An ask on a new session does not wait for its sandbox: the model's first request
//! (a real HTTP provider, a scripted server on 127.0.0.1) goes out while the sandbox
//! starts and the files stage, and the first call waits for the sandbox. The fake
//! factory holds the start at a gate, so "while" is certain, not a matter of timing.
//! A model whose calls have a mode (Chat Completions, the small local models) still
//! waits, for the inputs' profile in its first message.

use crate::common::wire;

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandalyst::agent::{Event, EventKind, RunStatus, SetupStage};
use sandalyst::model::chat_completions::Chat;
use sandalyst::model::config::ProviderKind;
use sandalyst::model::http::HttpModel;
use sandalyst::model::openai_responses::OpenAiResponses;
use sandalyst::model::Model;
use sandalyst::session::{AskHandle, FakeFactory, Session, SessionConfig, SessionError, Sessions};
use serde_json::json;
use tokio::sync::Semaphore;
use wire::chat::MODEL;
use wire::responses::Events;
use wire::{Answer, WireServer};

struct Held {
    _dir: tempfile::TempDir,
    factory: Arc<FakeFactory>,
    gate: Arc<Semaphore>,
    session: Session,
    /// The session's own events (set-up), taken before anything started.
    setup: tokio::sync::broadcast::Receiver<Event>,
}

/// A new session with a file added, its sandbox's start held at the gate.
async fn held_session() -> Held {
    let dir = tempfile::tempdir().unwrap();
    let factory = Arc::new(FakeFactory::default());
    let gate = Arc::new(Semaphore::new(0));
    *factory.gate.lock().unwrap() = Some(gate.clone());
    let sessions = Sessions::new(dir.path().join("sessions"), factory.clone()).unwrap();
    let session = sessions.create(SessionConfig::default()).await.unwrap();
    let setup = session.subscribe();
    let csv = dir.path().join("data.csv");
    std::fs::write(&csv, "t,v\n1,2\n").unwrap();
    // Starts the sandbox in the background, as a drop on the window does.
    session.add_files(vec![csv]).await.unwrap();
    Held {
        _dir: dir,
        factory,
        gate,
        session,
        setup,
    }
}

/// The OpenAI Responses API at `server`: native calls only.
fn model_at(server: &WireServer) -> Box<dyn Model> {
    let config = wire::config(
        ProviderKind::OpenAi,
        "gpt-5.4",
        &format!("{}/v1", server.base),
        "OPENAI_API_KEY",
    );
    Box::new(OpenAiResponses::new(config).unwrap())
}

/// A python call, as the Responses API streams it.
fn call(id: &str, code: &str) -> Answer {
    let args = json!({ "code": code }).to_string();
    Answer::Sse(
        Events::new()
            .call(0, id, "python", &args, 7)
            .completed(100, 0, 10),
    )
}

fn say(text: &str) -> Answer {
    Answer::Sse(Events::new().text(0, text, 4).completed(100, 0, 10))
}

/// A reply that has begun and never ends: the model still answering.
fn still_answering() -> Answer {
    let mut e = Events::new();
    e.push(json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "msg_0", "type": "message", "status": "in_progress", "role": "assistant", "content": []}}));
    Answer::SseThenHang(e.partial())
}

/// Wait until the server has `n` requests (at most 10 s).
async fn requests(server: &WireServer, n: usize) {
    let waited = tokio::time::timeout(Duration::from_secs(10), async {
        while server.received().len() < n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        waited.is_ok(),
        "{} request(s) arrived",
        server.received().len()
    );
}

/// Every event of the ask, each with when it arrived.
async fn follow(
    mut handle: AskHandle,
) -> (Vec<(Instant, EventKind)>, sandalyst::session::AskOutcome) {
    let mut events = Vec::new();
    while let Some(ev) = handle.events.recv().await {
        events.push((Instant::now(), ev.kind));
    }
    (events, handle.outcome().await)
}

#[tokio::test]
async fn the_first_model_request_goes_out_while_the_sandbox_starts() {
    let held = held_session().await;
    let server = WireServer::start(vec![call("c1", "print hi"), say("Done.")]).await;
    let handle = held
        .session
        .ask("Say hi.".into(), model_at(&server))
        .unwrap();
    let following = tokio::spawn(follow(handle));

    // The model is asked while the start is still held: nothing started yet.
    requests(&server, 1).await;
    assert!(held.factory.started.lock().unwrap().is_empty());
    let mut setup = held.setup;
    let mut before = Vec::new();
    while let Ok(ev) = setup.try_recv() {
        before.push(ev.kind);
    }
    assert!(
        !before
            .iter()
            .any(|k| matches!(k, EventKind::Setup(SetupStage::SandboxReady { .. }))),
        "{before:?}"
    );
    // Its call waits for the sandbox: no second request until the start goes on.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(server.received().len(), 1);

    held.gate.add_permits(1);
    let (events, outcome) = following.await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    assert_eq!(outcome.answer.as_deref(), Some("Done."));
    let ready = loop {
        let ev = setup.recv().await.unwrap();
        if let EventKind::Setup(SetupStage::SandboxReady { warm_for_ms, .. }) = ev.kind {
            // Cold: the ask found it starting, so no "warm" figure.
            assert_eq!(warm_for_ms, None);
            break Instant::now();
        }
    };
    let first = server.received()[0].at;
    assert!(
        first < ready,
        "the first request came after the sandbox was ready"
    );
    // The call ran in the sandbox once it was there, and its result reached the model.
    let printed: Vec<&(Instant, EventKind)> = events
        .iter()
        .filter(|(_, k)| matches!(k, EventKind::CellOutput { text, .. } if text.contains("hi")))
        .collect();
    assert_eq!(printed.len(), 1, "{events:?}");
    assert_eq!(held.factory.started.lock().unwrap().len(), 1);
    let second = &server.received()[1].body;
    assert!(second.to_string().contains("hi"), "{second}");
}

#[tokio::test]
async fn a_sandbox_that_fails_to_start_while_the_model_answers_ends_the_ask_with_its_error() {
    let held = held_session().await;
    // The model is still answering (its stream never ends) when the start fails.
    let server = WireServer::start(vec![still_answering()]).await;
    let handle = held
        .session
        .ask("Say hi.".into(), model_at(&server))
        .unwrap();
    let following = tokio::spawn(follow(handle));
    requests(&server, 1).await;

    let lost = SessionError::Sandbox {
        message: "the container was removed from outside".into(),
    };
    *held.factory.fail_with.lock().unwrap() = Some(lost.clone());
    // The drop's start fails, and so does the ask's own try after it.
    held.gate.add_permits(2);
    let (events, outcome) = tokio::time::timeout(Duration::from_secs(10), following)
        .await
        .expect("the ask ended without waiting for the model")
        .unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Failed {
            message: lost.to_string()
        }
    );
    assert_eq!(outcome.error, Some(lost.clone()));
    let errors: Vec<&EventKind> = events
        .iter()
        .map(|(_, k)| k)
        .filter(|k| matches!(k, EventKind::Error { .. }))
        .collect();
    assert_eq!(errors.len(), 1, "{events:?}");
    let v = serde_json::to_value(errors[0]).unwrap();
    assert_eq!(v["error"]["code"], "sandbox", "{v}");
    assert_eq!(
        v["error"]["message"],
        "the container was removed from outside"
    );
    assert!(matches!(
        events.last().map(|(_, k)| k),
        Some(EventKind::AskFinished { .. })
    ));
    // The session is fine: the next ask starts a sandbox again.
    *held.factory.fail_with.lock().unwrap() = None;
    held.gate.add_permits(10);
    let server = WireServer::start(vec![say("Hello.")]).await;
    let (_, again) = follow(
        held.session
            .ask("Again.".into(), model_at(&server))
            .unwrap(),
    )
    .await;
    assert_eq!(again.status, RunStatus::Finished, "{:?}", again.error);
}

#[tokio::test]
async fn a_cancel_while_the_sandbox_starts_ends_the_ask_at_once() {
    let held = held_session().await;
    let server = WireServer::start(vec![still_answering()]).await;
    let handle = held
        .session
        .ask("Say hi.".into(), model_at(&server))
        .unwrap();
    let cancel = handle.canceller();
    let following = tokio::spawn(follow(handle));
    requests(&server, 1).await;
    cancel.cancel();
    let (_, outcome) = tokio::time::timeout(Duration::from_secs(10), following)
        .await
        .expect("the ask ended while the start was held")
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    // The start goes on in the background and is the session's, for the next ask.
    held.gate.add_permits(1);
    let server = WireServer::start(vec![say("Hello.")]).await;
    let (_, again) = follow(
        held.session
            .ask("Again.".into(), model_at(&server))
            .unwrap(),
    )
    .await;
    assert_eq!(again.status, RunStatus::Finished, "{:?}", again.error);
    assert_eq!(held.factory.started.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_model_whose_calls_have_a_mode_waits_for_the_inputs_profile() {
    let held = held_session().await;
    let server = WireServer::start(vec![
        chat_call("c1", "print hi"),
        Answer::Sse(wire::chat::text_stream("Done.")),
    ])
    .await;
    let config = wire::config(
        ProviderKind::OpenAiCompatible,
        MODEL,
        &format!("{}/v1", server.base),
        "OPENROUTER_API_KEY",
    );
    let model: Box<dyn Model> = Box::new(HttpModel::<Chat>::new(config).unwrap());
    let handle = held.session.ask("Say hi.".into(), model).unwrap();
    let following = tokio::spawn(follow(handle));
    // Nothing goes out while the start is held: the profile needs the sandbox.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(server.received().is_empty());
    held.gate.add_permits(1);
    let (events, outcome) = following.await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    assert!(events
        .iter()
        .any(|(_, k)| matches!(k, EventKind::InputsProfiled { .. })));
    // (The in-memory sandbox cannot run the profile's pandas: the event says it
    // failed, and the ask goes on without it.)
    assert_eq!(server.received().len(), 2);
}

/// A native python call's stream in Chat Completions, finished.
fn chat_call(id: &str, code: &str) -> Answer {
    let mut c = vec![wire::chat::chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    let args = json!({ "code": code }).to_string();
    c.extend(wire::chat::call_chunks(0, id, "python", &args, 7));
    c.push(wire::chat::chunk(json!({}), Some("tool_calls")));
    c.push(wire::chat::DONE.into());
    Answer::Sse(c)
}

#[tokio::test]
async fn a_cancel_while_a_call_waits_for_the_sandbox_ends_the_ask_at_once() {
    let held = held_session().await;
    let server = WireServer::start(vec![call("c1", "print hi"), say("never")]).await;
    let handle = held
        .session
        .ask("Say hi.".into(), model_at(&server))
        .unwrap();
    let cancel = handle.canceller();
    let following = tokio::spawn(follow(handle));
    requests(&server, 1).await;
    // The call is made and waits for the held start; after its cancel the loop still
    // looks at the outputs, which must not wait for the start either.
    tokio::time::sleep(Duration::from_millis(200)).await;
    cancel.cancel();
    let (events, outcome) = tokio::time::timeout(Duration::from_secs(10), following)
        .await
        .expect("the ask ended while the start was held")
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert!(events
        .iter()
        .any(|(_, k)| matches!(k, EventKind::ToolCall { .. })));
    held.gate.add_permits(1);
}
