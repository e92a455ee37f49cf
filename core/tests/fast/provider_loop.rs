//! The HTTP providers inside the real loop: a session over the in-memory sandbox (no
//! Docker) asking a wire-format server on 127.0.0.1. What a provider hands the loop
//! (calls recovered from text, typed errors) is checked by what the loop does with it.

use crate::common::wire;

use std::sync::Arc;

use sandalyst::agent::{EventKind, RunStatus};
use sandalyst::conversation::CallMode;
use sandalyst::model::chat_completions::{text_calls, Chat};
use sandalyst::model::config::sampling::ToolCalls;
use sandalyst::model::config::ProviderKind;
use sandalyst::model::http::HttpModel;
use sandalyst::model::Item;
use sandalyst::model::Model;
use sandalyst::session::FakeFactory;
use sandalyst::session::{AskOutcome, Session, SessionConfig, Sessions};
use serde_json::json;
use wire::chat::{text_stream, MODEL};
use wire::{Answer, WireServer};

/// One ask of a fresh session with a Chat Completions model at `server`.
async fn ask(server: &WireServer, prompt: &str) -> (AskOutcome, Vec<EventKind>, Arc<FakeFactory>) {
    let (outcome, events, factory, _) =
        ask_with(server, prompt, ToolCalls::Native, SessionConfig::default()).await;
    (outcome, events, factory)
}

/// [`ask`] with the call mode set and the session's config; the session too.
async fn ask_with(
    server: &WireServer,
    prompt: &str,
    tool_calls: ToolCalls,
    session_config: SessionConfig,
) -> (AskOutcome, Vec<EventKind>, Arc<FakeFactory>, Session) {
    let dir = tempfile::tempdir().unwrap();
    let factory = Arc::new(FakeFactory::default());
    let sessions = Sessions::new(dir.keep().join("sessions"), factory.clone()).unwrap();
    let session = sessions.create(session_config).await.unwrap();
    let mut config = wire::config(
        ProviderKind::OpenAiCompatible,
        MODEL,
        &format!("{}/v1", server.base),
        "OPENROUTER_API_KEY",
    );
    config.sampling.tool_calls = Some(tool_calls);
    let model: Box<dyn Model> = Box::new(HttpModel::<Chat>::new(config).unwrap());
    let mut handle = session.ask(prompt.into(), model).unwrap();
    let mut events = Vec::new();
    while let Some(ev) = handle.events.recv().await {
        events.push(ev.kind);
    }
    (handle.outcome().await, events, factory, session)
}

/// A step object as a streamed reply.
fn step(v: serde_json::Value) -> Answer {
    Answer::Sse(text_stream(&v.to_string()))
}

/// "Save the total to output/total.txt." asked in schema mode, ended `Finished`.
async fn finished_in_schema_mode(server: &WireServer) -> (Arc<FakeFactory>, Session) {
    let (outcome, _, factory, session) = ask_with(
        server,
        "Save the total to output/total.txt.",
        ToolCalls::Schema,
        SessionConfig::default(),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    (factory, session)
}

/// The code of each call in a session's transcript, in order.
fn codes_of_calls(session: &Session) -> Vec<String> {
    session
        .items()
        .iter()
        .filter_map(|i| match i {
            Item::ToolCall { arguments, .. } => Some(sandalyst::protocol::tool_source(arguments)),
            _ => None,
        })
        .collect()
}

/// The actions the schema of a request offers.
fn offered(body: &serde_json::Value) -> Vec<String> {
    let schema = &body["response_format"]["json_schema"]["schema"];
    let branches = match schema["anyOf"].as_array() {
        Some(b) => b.clone(),
        None => vec![schema.clone()],
    };
    branches
        .iter()
        .map(|b| {
            b["properties"]["action"]["enum"][0]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn auto_moves_a_local_server_to_schema_steps_and_holds_the_answer_until_the_files_exist() {
    // A local model's first reply is a call written as text: it is not shown, and the
    // same turn is asked again as a step under a schema.
    let server = WireServer::start(vec![
        Answer::Sse(text_stream("```python\nwrite output/total.txt 42\n```")),
        step(json!({"thought": "Save the total", "action": "python", "code": "write output/total.txt 42"})),
        step(json!({"thought": "Done", "action": "final_answer", "answer": "The total is 42, in output/total.txt."})),
    ])
    .await;
    let (outcome, events, factory, session) = ask_with(
        &server,
        "Save the total to output/total.txt.",
        ToolCalls::Auto,
        SessionConfig::default(),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
    assert_eq!(
        outcome.answer.as_deref(),
        Some("The total is 42, in output/total.txt.")
    );
    let sandbox = factory.started.lock().unwrap()[0].clone();
    assert_eq!(
        sandbox.file("output/total.txt").as_deref(),
        Some(&b"42"[..])
    );

    let requests = server.received();
    assert_eq!(requests.len(), 3);
    // Native first, then steps: no tools, a schema, history as plain messages.
    assert!(requests[0].body.get("tools").is_some());
    assert!(requests[0].body.get("response_format").is_none());
    for r in &requests[1..] {
        assert!(r.body.get("tools").is_none(), "{}", r.body);
        let roles: Vec<&str> = r.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert!(!roles.contains(&"tool"), "{roles:?}");
    }
    // No answer is offered while output/total.txt is missing; once it exists, it is.
    assert_eq!(offered(&requests[1].body), ["python", "shell", "write"]);
    assert_eq!(
        offered(&requests[2].body),
        ["python", "shell", "final_answer"]
    );
    // The hidden reply is nowhere in the conversation; the switch is an event.
    let items = session.items();
    assert!(!items
        .iter()
        .any(|i| matches!(i, Item::Assistant { text } if text.contains("```"))));
    assert!(
        events.iter().any(|e| matches!(
            e,
            EventKind::CallMode { mode: CallMode::Schema, reason } if reason.contains("as text")
        )),
        "{events:?}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, EventKind::Retry { wait_ms: 0, .. })));
    // Kept with the ask, so the next one starts in schema mode.
    let meta = session.meta();
    assert_eq!(
        meta.asks[0].call_mode.as_ref().map(|c| c.mode),
        Some(CallMode::Schema)
    );
    // After a call, the checklist line says what is done.
    let last = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let text = last["content"].as_str().unwrap();
    assert!(text.starts_with("Output of the step:"), "{text}");
    assert!(
        text.contains("[checklist] all 1 files the task names are written and valid"),
        "{text}"
    );
}

/// A native call's stream, finished.
fn native_call(id: &str, code: &str) -> Answer {
    let mut c = vec![wire::chat::chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    c.extend(wire::chat::call_chunks(
        0,
        id,
        "python",
        &json!({"code": code}).to_string(),
        7,
    ));
    c.push(wire::chat::chunk(json!({}), Some("tool_calls")));
    c.push(wire::chat::DONE.into());
    Answer::Sse(c)
}

#[tokio::test]
async fn auto_learns_from_prose_while_files_are_missing_and_the_models_next_session_starts_there() {
    // A native call, then prose while the named file is missing (a small model echoing
    // a result): meant as a call, so auto moves to schema steps and asks again.
    let server = WireServer::start(vec![
        native_call("c1", "print(1)"),
        Answer::Sse(text_stream("<tool_response>\nstatus: ok\n</tool_response>")),
        step(
            json!({"thought": "Save it", "action": "python", "code": "write output/total.txt 42"}),
        ),
        step(json!({"thought": "Done", "action": "final_answer", "answer": "Saved."})),
        // The model's next session: a schema step from its first request.
        step(json!({"thought": "Save it", "action": "python", "code": "write output/total.txt 7"})),
        step(json!({"thought": "Done", "action": "final_answer", "answer": "Saved again."})),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let factory = Arc::new(FakeFactory::default());
    let sessions = Sessions::new(dir.path().join("sessions"), factory.clone()).unwrap();
    let mut config = wire::config(
        ProviderKind::OpenAiCompatible,
        MODEL,
        &format!("{}/v1", server.base),
        "OPENROUTER_API_KEY",
    );
    config.sampling.tool_calls = Some(ToolCalls::Auto);
    let mut reasons = Vec::new();
    for answer in ["Saved.", "Saved again."] {
        let session = sessions.create(SessionConfig::default()).await.unwrap();
        let model: Box<dyn Model> = Box::new(HttpModel::<Chat>::new(config.clone()).unwrap());
        let mut handle = session
            .ask("Save the total to output/total.txt.".into(), model)
            .unwrap();
        while let Some(ev) = handle.events.recv().await {
            if let EventKind::CallMode { mode, reason } = ev.kind {
                reasons.push((mode, reason));
            }
        }
        let outcome = handle.outcome().await;
        assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.error);
        assert_eq!(outcome.answer.as_deref(), Some(answer));
    }
    let requests = server.received();
    assert_eq!(requests.len(), 6);
    assert!(requests[1].body.get("tools").is_some());
    assert!(requests[2].body.get("response_format").is_some());
    // The second session's first request is already a step under a schema.
    assert!(
        requests[4].body.get("tools").is_none(),
        "{}",
        requests[4].body
    );
    assert_eq!(offered(&requests[4].body), ["python", "shell", "write"]);
    let said: Vec<&str> = reasons.iter().map(|(_, r)| r.as_str()).collect();
    assert!(
        said.iter()
            .any(|r| r.contains("while the task's files were missing")),
        "{said:?}"
    );
    assert!(
        reasons.iter().any(|(m, r)| *m == CallMode::Schema
            && r.starts_with("auto: as this model's earlier sessions did (learned ")),
        "{said:?}"
    );
}

#[tokio::test]
async fn a_step_that_says_the_files_cannot_be_made_ends_the_ask_incomplete() {
    let server = WireServer::start(vec![
        step(json!({"thought": "Look", "action": "python", "code": "write output/notes.txt x"})),
        step(json!({"thought": "Again", "action": "python", "code": "write output/notes.txt y"})),
        step(json!({"thought": "", "action": "cannot_finish", "reason": "The data has no dates, so no chart over time."})),
    ])
    .await;
    let mut config = SessionConfig::default();
    config.limits.max_turns = 4;
    let (outcome, _, _, _) = ask_with(
        &server,
        "Plot the sales over time as output/chart.png.",
        ToolCalls::Schema,
        config,
    )
    .await;
    let RunStatus::Incomplete { problems } = &outcome.status else {
        panic!("{:?}", outcome.status)
    };
    assert_eq!(problems[0].path, "output/chart.png");
    assert_eq!(
        outcome.answer.as_deref(),
        Some("The data has no dates, so no chart over time.")
    );
    let requests = server.received();
    // The way out is offered only once code has run for three quarters of the turns.
    assert_eq!(offered(&requests[0].body), ["python", "shell", "write"]);
    assert_eq!(offered(&requests[1].body), ["python", "shell", "write"]);
    assert_eq!(
        offered(&requests[2].body),
        ["python", "shell", "write", "cannot_finish"]
    );
}

#[tokio::test]
async fn after_a_cell_fails_at_a_line_the_step_offered_is_that_lines_fix() {
    // The cell fails at its second line; the only step offered next is its fix, the
    // failing line read back; the app runs the whole cell with the new line in place.
    let server = WireServer::start(vec![
        step(json!({"thought": "Total", "action": "python", "code": ["set total 42", "fail", "print saved"]})),
        step(json!({"thought": "Write it instead", "action": "fix", "line": "fail", "instead": ["write output/total.txt 42"]})),
        step(json!({"thought": "Done", "action": "final_answer", "answer": "The total is 42."})),
    ])
    .await;
    let (factory, session) = finished_in_schema_mode(&server).await;
    let sandbox = factory.started.lock().unwrap()[0].clone();
    assert_eq!(
        sandbox.file("output/total.txt").as_deref(),
        Some(&b"42"[..])
    );
    let requests = server.received();
    assert_eq!(offered(&requests[0].body), ["python", "shell", "write"]);
    assert_eq!(offered(&requests[1].body), ["fix"]);
    let schema = &requests[1].body["response_format"]["json_schema"]["schema"];
    assert_eq!(schema["properties"]["line"]["enum"], json!(["fail"]));
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("the cell failed at the line `fail`"),
        "{last}"
    );
    // In the transcript the fix is the python call it made, the whole mended cell.
    let calls = codes_of_calls(&session);
    assert_eq!(
        calls.last().map(String::as_str),
        Some("set total 42\nwrite output/total.txt 42\nprint saved")
    );
    // Once the cell ran, the steps are the tools again.
    assert_eq!(
        offered(&requests[2].body),
        ["python", "shell", "final_answer"]
    );
}

#[tokio::test]
async fn after_the_same_cell_again_the_only_step_offered_is_the_next_files_write() {
    // While output/total.txt is missing its write is offered beside the tools; after
    // the same cell twice it is the only step offered, and the app ends the model's
    // cell with the file's write.
    let server = WireServer::start(vec![
        step(json!({"thought": "Sum", "action": "python", "code": ["print 42"]})),
        step(json!({"thought": "Sum", "action": "python", "code": ["print 42"]})),
        step(json!({"thought": "Text", "action": "write", "path": "output/total.txt", "code": ["set TEXT 42"]})),
        // The in-memory sandbox cannot run the Python write: it fails, and its fix follows.
        step(json!({"thought": "Write", "action": "fix", "line": "_ = open('output/total.txt', 'w').write(TEXT if isinstance(TEXT, str) else '\\n'.join(map(str, TEXT)))", "instead": ["write output/total.txt 42"]})),
        step(json!({"thought": "Done", "action": "final_answer", "answer": "42"})),
    ])
    .await;
    let (_, session) = finished_in_schema_mode(&server).await;
    let requests = server.received();
    assert_eq!(offered(&requests[1].body), ["python", "shell", "write"]);
    assert_eq!(offered(&requests[2].body), ["write"]);
    let schema = &requests[2].body["response_format"]["json_schema"]["schema"];
    assert_eq!(
        schema["properties"]["path"]["enum"],
        json!(["output/total.txt"])
    );
    let calls = codes_of_calls(&session);
    assert!(
        calls.contains(&"set TEXT 42\n_ = open('output/total.txt', 'w').write(TEXT if isinstance(TEXT, str) else '\\n'.join(map(str, TEXT)))".to_string()),
        "{calls:?}"
    );
    assert_eq!(offered(&requests[3].body), ["fix"]);
    assert_eq!(
        calls.last().map(String::as_str),
        Some("set TEXT 42\nwrite output/total.txt 42")
    );
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
