//! The HTTP providers inside the real loop: a session over the in-memory sandbox (no
//! Docker) asking a wire-format server on 127.0.0.1. What a provider hands the loop
//! (calls recovered from text, typed errors) is checked by what the loop does with it.

use crate::common::wire;

use std::sync::Arc;

use sandalyst::agent::{EventKind, RunStatus};
use sandalyst::model::chat_completions::{text_calls, Chat};
use sandalyst::model::config::ProviderKind;
use sandalyst::model::http::HttpModel;
use sandalyst::model::Model;
use sandalyst::session::FakeFactory;
use sandalyst::session::{AskOutcome, SessionConfig, Sessions};
use serde_json::json;
use wire::chat::{text_stream, MODEL};
use wire::{Answer, WireServer};

/// One ask of a fresh session with a Chat Completions model at `server`.
async fn ask(server: &WireServer, prompt: &str) -> (AskOutcome, Vec<EventKind>, Arc<FakeFactory>) {
    let dir = tempfile::tempdir().unwrap();
    let factory = Arc::new(FakeFactory::default());
    let sessions = Sessions::new(dir.path().join("sessions"), factory.clone()).unwrap();
    let session = sessions.create(SessionConfig::default()).await.unwrap();
    let config = wire::config(
        ProviderKind::OpenAiCompatible,
        MODEL,
        &format!("{}/v1", server.base),
        "OPENROUTER_API_KEY",
    );
    let model: Box<dyn Model> = Box::new(HttpModel::<Chat>::new(config).unwrap());
    let mut handle = session.ask(prompt.into(), model).unwrap();
    let mut events = Vec::new();
    while let Some(ev) = handle.events.recv().await {
        events.push(ev.kind);
    }
    (handle.outcome().await, events, factory)
}

#[tokio::test]
async fn a_tool_call_written_as_text_runs_and_the_model_is_told_once() {
    // A local model that never makes a structured call: a fenced block, then a JSON
    // object, then its answer.
    let server = WireServer::start(vec![
        Answer::Sse(text_stream(
            "I will save the total.\n```python\nwrite output/total.txt 42\n```",
        )),
        Answer::Sse(text_stream(
            &json!({"name": "python", "arguments": {"code": "cat output/total.txt"}}).to_string(),
        )),
        Answer::Sse(text_stream("The total is 42, in output/total.txt.")),
    ])
    .await;
    let (outcome, _, factory) = ask(&server, "What is the total?").await;
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    assert_eq!(
        outcome.answer.as_deref(),
        Some("The total is 42, in output/total.txt.")
    );
    // Both calls ran in the sandbox.
    let sandbox = factory.started.lock().unwrap()[0].clone();
    assert_eq!(
        sandbox.file("output/total.txt").as_deref(),
        Some(&b"42"[..])
    );

    let requests = server.received();
    assert_eq!(requests.len(), 3);
    let messages = requests[2].body["messages"].as_array().unwrap().clone();
    let tool: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(tool.len(), 2, "{messages:?}");
    assert!(tool[0].ends_with(text_calls::NOTE), "{}", tool[0]);
    assert!(
        tool[1].contains("42") && !tool[1].contains(text_calls::NOTE),
        "{}",
        tool[1]
    );
    assert_eq!(
        requests[2]
            .body
            .to_string()
            .matches(text_calls::NOTE)
            .count(),
        1
    );
    // The model's words go back as it wrote them, block included, with the call the
    // block became: it sees the form that worked.
    let first = messages.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(
        first["content"],
        "I will save the total.\n```python\nwrite output/total.txt 42\n```"
    );
    assert_eq!(
        first["tool_calls"][0]["function"]["arguments"],
        json!({"code": "write output/total.txt 42\n"}).to_string()
    );
}

#[tokio::test]
async fn a_retry_reaches_the_events() {
    let server = WireServer::start(vec![
        Answer::status(
            503,
            r#"{"error":{"message":"loading model","type":"server_error"}}"#,
        ),
        Answer::Sse(text_stream("Nothing to compute.")),
    ])
    .await;
    let (outcome, events, _) = ask(&server, "Say hi").await;
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, EventKind::Retry { attempt: 2, .. })),
        "{events:?}"
    );
}
