//! Replies stay bounded whatever the provider sends, with no engine: local servers
//! that speak each wire format and stream text without end, a tool call whose
//! arguments never end, or one SSE line that never ends. The reply is cut at its cap
//! (what came up to it kept, the rest never read), the model and the user are told,
//! and a cut call does not run (the loop on the in-memory sandbox). The command line's
//! memory under the same floods is `docker::provider_bounds`.

use crate::common::wire;

use std::time::Duration;

use sandalyst::agent::{EventKind, RunStatus};
use sandalyst::model::anthropic::Messages;
use sandalyst::model::caps::{Capped, Cut, ReplyCaps};
use sandalyst::model::chat_completions::Chat;
use sandalyst::model::config::ProviderKind;
use sandalyst::model::error::ModelError;
use sandalyst::model::http::{HttpModel, WireFormat};
use sandalyst::model::openai_responses::Responses;
use sandalyst::model::scripted::{ScriptedModel, Step};
use sandalyst::model::{Delta, Item};
use sandalyst::protocol::Notice;
use sandalyst::session::FakeFactory;
use sandalyst::session::{SessionConfig, Sessions};
use serde_json::json;
use wire::endless::{self, Flood, Wire};
use wire::scenarios::Provider;
use wire::{Answer, WireServer};

const RESPONSES: Provider<Responses> =
    Provider::new(ProviderKind::OpenAi, "gpt-5.4", "/v1", "OPENAI_API_KEY");
const CHAT: Provider<Chat> = Provider::new(
    ProviderKind::OpenAiCompatible,
    wire::chat::MODEL,
    "/v1",
    "SANDALYST_COMPATIBLE_API_KEY",
);
const MESSAGES: Provider<Messages> = Provider::new(
    ProviderKind::Anthropic,
    wire::messages::MODEL,
    "",
    "ANTHROPIC_API_KEY",
);

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// Small caps, so the library tests are quick; the command line runs the defaults.
fn small() -> ReplyCaps {
    ReplyCaps {
        text_bytes: 64 * KIB,
        reasoning_bytes: 64 * KIB,
        arguments_bytes: 128 * KIB,
        event_bytes: 256 * KIB,
        body_bytes: 256 * KIB,
        error_body_bytes: 16 * KIB,
    }
}

/// The endless servers stop here if the client never does (then the test fails).
const LIMIT: usize = 96 * MIB;

/// One turn against an endless stream with the small caps: the reply is cut where it
/// should be, the deltas hold exactly what was kept, and the server was stopped.
async fn floods<W: WireFormat>(p: &Provider<W>, w: Wire, flood: Flood) {
    let caps = small();
    let server = WireServer::paced(vec![endless::answer(w, flood, LIMIT)], Duration::ZERO).await;
    let (reply, deltas) = p
        .ask_full(&server, &wire::user("go"), &wire::tools(), |c| {
            c.http.caps = caps
        })
        .await;
    let reply = reply.unwrap_or_else(|e| panic!("{w:?} {flood:?}: {e:#}"));
    let streamed: String = deltas
        .iter()
        .map(|d| match d {
            Delta::Text { text } => text.as_str(),
            Delta::ToolCall { arguments, .. } => arguments.as_str(),
            Delta::Retry { .. } => panic!("a cut reply is not retried"),
        })
        .collect();
    let (text, args): (Vec<&str>, Vec<&str>) = (
        reply
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Assistant { text } => Some(text.as_str()),
                _ => None,
            })
            .collect(),
        reply.tool_calls().map(|(_, _, a)| a).collect(),
    );
    let ctx = format!("{w:?} {flood:?}");
    match flood {
        Flood::Text => {
            assert_eq!(
                reply.cut,
                Some(Cut {
                    what: Capped::Text,
                    cap: caps.text_bytes
                }),
                "{ctx}"
            );
            assert_eq!(text.concat().len(), caps.text_bytes, "{ctx}");
            assert!(text.concat().starts_with(endless::TEXT_START), "{ctx}");
            assert_eq!(streamed, text.concat(), "{ctx}");
        }
        Flood::Loop => {
            // "endless again " over and over: cut once the loop passes 2,000 bytes,
            // long before the 64 KiB cap.
            assert_eq!(
                reply.cut,
                Some(Cut {
                    what: Capped::Repetition,
                    cap: "endless again ".len()
                }),
                "{ctx}"
            );
            let n = text.concat().len();
            assert!((2000..4000).contains(&n), "{ctx}: {n} bytes kept");
            assert_eq!(streamed, text.concat(), "{ctx}");
        }
        Flood::Reasoning => {
            assert_eq!(
                reply.cut,
                Some(Cut {
                    what: Capped::Reasoning,
                    cap: caps.reasoning_bytes
                }),
                "{ctx}"
            );
            let summary: String = reply
                .items
                .iter()
                .filter_map(|i| match i {
                    Item::Reasoning { summary, .. } => Some(summary.as_str()),
                    _ => None,
                })
                .collect();
            // Kept up to the cap (less the trailing space some providers trim).
            let n = summary.len();
            assert!(
                n + 1 >= caps.reasoning_bytes && n <= caps.reasoning_bytes,
                "{ctx}: {n}"
            );
            assert!(text.is_empty() && args.is_empty(), "{ctx}");
        }
        Flood::Arguments => {
            assert_eq!(
                reply.cut,
                Some(Cut {
                    what: Capped::Arguments,
                    cap: caps.arguments_bytes
                }),
                "{ctx}"
            );
            let (id, name, _) = reply.tool_calls().next().unwrap();
            assert_eq!((id, name), (endless::CALL_ID, "python"), "{ctx}");
            assert_eq!(args.concat().len(), caps.arguments_bytes, "{ctx}");
            assert!(args.concat().starts_with("{\"code\": \"x = 1"), "{ctx}");
            assert_eq!(streamed, args.concat(), "{ctx}");
        }
        Flood::Line => {
            assert_eq!(
                reply.cut,
                Some(Cut {
                    what: Capped::Event,
                    cap: caps.event_bytes
                }),
                "{ctx}"
            );
            // Nothing of the unfinished event is kept.
            assert!(text.concat().is_empty() && args.is_empty(), "{ctx}");
        }
    }
    // The client stopped reading: the server's writes failed long before its limit.
    let sent = server.sent();
    assert!(sent < LIMIT / 4, "{ctx}: the server wrote {sent} bytes");
    assert_eq!(
        server.received().len(),
        1,
        "{ctx}: a cut reply is not asked again"
    );
}

#[tokio::test]
async fn endless_text_is_cut_at_its_cap_in_every_wire_format() {
    floods(&RESPONSES, Wire::Responses, Flood::Text).await;
    floods(&CHAT, Wire::Chat, Flood::Text).await;
    floods(&MESSAGES, Wire::Messages, Flood::Text).await;
}

#[tokio::test]
async fn a_reply_caught_in_a_loop_is_cut_early_in_every_wire_format() {
    floods(&RESPONSES, Wire::Responses, Flood::Loop).await;
    floods(&CHAT, Wire::Chat, Flood::Loop).await;
    floods(&MESSAGES, Wire::Messages, Flood::Loop).await;
}

#[tokio::test]
async fn endless_reasoning_is_cut_at_its_cap_in_every_wire_format() {
    floods(&RESPONSES, Wire::Responses, Flood::Reasoning).await;
    floods(&CHAT, Wire::Chat, Flood::Reasoning).await;
    floods(&MESSAGES, Wire::Messages, Flood::Reasoning).await;
}

#[tokio::test]
async fn endless_tool_arguments_are_cut_at_their_cap_in_every_wire_format() {
    floods(&RESPONSES, Wire::Responses, Flood::Arguments).await;
    floods(&CHAT, Wire::Chat, Flood::Arguments).await;
    floods(&MESSAGES, Wire::Messages, Flood::Arguments).await;
}

#[tokio::test]
async fn an_sse_line_without_end_is_cut_at_the_event_cap_in_every_wire_format() {
    floods(&RESPONSES, Wire::Responses, Flood::Line).await;
    floods(&CHAT, Wire::Chat, Flood::Line).await;
    floods(&MESSAGES, Wire::Messages, Flood::Line).await;
}

#[tokio::test]
async fn a_whole_body_past_its_cap_is_refused_and_caps_are_validated() {
    // A server that does not stream and answers with more than the body cap.
    let big = "z".repeat(300 * KIB);
    let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": big}, "finish_reason": "stop"}]});
    let server = WireServer::start(vec![Answer::Json(body)]).await;
    let (r, _) = CHAT
        .ask_full(&server, &wire::user("go"), &wire::tools(), |c| {
            c.http.caps = small()
        })
        .await;
    let e = r.unwrap_err();
    assert!(
        matches!(
            e.downcast_ref::<ModelError>(),
            Some(ModelError::ReplyTooLarge { .. })
        ),
        "{e:#}"
    );
    assert!(
        e.to_string()
            .contains("sent a reply larger than 256 KiB, the most Sandalyst reads of one reply"),
        "{e:#}"
    );
    assert_eq!(server.received().len(), 1, "not asked again");

    // Within the body cap, the text is still held to its own.
    let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "z".repeat(100 * KIB)}, "finish_reason": "stop"}]});
    let server = WireServer::start(vec![Answer::Json(body)]).await;
    let (r, _) = CHAT
        .ask_full(&server, &wire::user("go"), &wire::tools(), |c| {
            c.http.caps = small()
        })
        .await;
    let r = r.unwrap();
    assert_eq!(r.cut.map(|c| c.what), Some(Capped::Text));
    assert!(matches!(&r.items[0], Item::Assistant { text } if text.len() == 64 * KIB));

    // Caps enter the core through the provider's settings, and are checked there.
    let server = WireServer::start(vec![]).await;
    let mut config = CHAT.config(&server);
    config.http.caps.text_bytes = 0;
    let e = HttpModel::<Chat>::new(config).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the reply cap for text is 0 bytes; it must be between 1 KiB and 256.0 MiB"
    );
}

/// The loop with a reply that passed a cap: its call does not run, the model reads why
/// in the call's result, the user gets a typed notice; a second cut in a row ends the
/// ask with a typed error.
#[tokio::test]
async fn a_cut_call_is_not_run_and_two_cuts_in_a_row_end_the_ask() {
    let dir = tempfile::tempdir().unwrap();
    let factory = std::sync::Arc::new(FakeFactory::default());
    let sessions = Sessions::new(dir.path().join("sessions"), factory.clone()).unwrap();
    let session = sessions.create(SessionConfig::default()).await.unwrap();
    let args_cut = Cut {
        what: Capped::Arguments,
        cap: 4 * MIB,
    };
    let model = ScriptedModel::new([
        Step::Cut(
            vec![ScriptedModel::call(
                "c1",
                "python",
                json!({"code": "write output/never.txt ran"}),
            )],
            args_cut,
        ),
        Step::Reply(vec![Item::Assistant {
            text: "Stopped.".into(),
        }]),
    ]);
    let log = model.log.clone();
    let mut handle = session.ask("go".into(), Box::new(model)).unwrap();
    let (mut notices, mut wire) = (Vec::new(), Vec::new());
    while let Some(ev) = handle.events.recv().await {
        if let EventKind::Notice(n) = &ev.kind {
            notices.push(n.clone());
            let mut json = serde_json::to_value(&ev).unwrap();
            json.as_object_mut().unwrap().remove("at");
            wire.push(json);
        }
        assert!(
            !matches!(&ev.kind, EventKind::Status { message } if message.contains("cut")),
            "{ev:?}"
        );
    }
    let outcome = handle.outcome().await;
    assert_eq!(outcome.status, RunStatus::Finished);
    // Typed for the page (what passed which cap), a line for the command line.
    let cut = Notice::ReplyCut {
        what: Capped::Arguments,
        cap: 4 * MIB,
    };
    // The event as the page reads it.
    assert_eq!(
        wire,
        [
            json!({"type": "notice", "session_id": session.id(), "ask_id": "ask-1",
            "notice": "reply_cut", "what": "arguments", "cap": 4 * MIB})
        ]
    );
    assert_eq!(
        cut.to_string(),
        "the model's reply was cut: its tool-call arguments passed 4.0 MiB, the most Sandalyst reads of one reply; the rest was not read, and the model is told"
    );
    assert_eq!(notices, [cut]);
    assert!(!session.outputs_dir().join("never.txt").exists());
    let started = factory.started.lock().unwrap().clone();
    assert!(started.iter().all(|s| s.file("output/never.txt").is_none()));
    let seen = log.lock().unwrap().clone();
    let result = seen[1]
        .items
        .iter()
        .find_map(|i| match i {
            Item::ToolOutput {
                call_id,
                output,
                is_error: true,
                ..
            } if call_id == "c1" => Some(output.clone()),
            _ => None,
        })
        .expect("the cut call has an error result");
    assert!(
        result.starts_with(
            "Not run: your last reply was cut: its tool-call arguments passed 4.0 MiB"
        ),
        "{result}"
    );

    // Text cut twice in a row: the model keeps running away, and the ask stops.
    let text_cut = Cut {
        what: Capped::Text,
        cap: MIB,
    };
    let runaway = || Item::Assistant {
        text: "and on ".repeat(100),
    };
    let model = ScriptedModel::new([
        Step::Cut(vec![runaway()], text_cut),
        Step::Cut(vec![runaway()], text_cut),
        Step::Reply(vec![Item::Assistant {
            text: "never asked".into(),
        }]),
    ]);
    let log = model.log.clone();
    let handle = session.ask("again".into(), Box::new(model)).unwrap();
    let outcome = handle.outcome().await;
    let RunStatus::Failed { message } = &outcome.status else {
        panic!("{:?}", outcome.status)
    };
    assert_eq!(
        message,
        "the model's replies passed the app's size limit twice in a row (the last: its text passed 1.0 MiB); the ask stops"
    );
    assert_eq!(
        outcome.error.as_ref().map(|e| e.info().code),
        Some(sandalyst::api::ErrorCode::Model)
    );
    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    let note = seen[1].items.last().unwrap();
    assert!(
        matches!(note, Item::User { text } if text.starts_with("[from the app] Note: your last reply was cut: its text passed 1.0 MiB")),
        "{note:?}"
    );
}
