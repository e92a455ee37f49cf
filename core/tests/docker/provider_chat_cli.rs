//! `sandalyst chat` holding a conversation through each provider's wire format: two
//! asks from a pipe, the second using a variable the first made in the same kernel,
//! against local servers that speak OpenAI Responses, Chat Completions and Anthropic
//! Messages.

use crate::common;

use crate::common::wire;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::json;
use wire::{Answer, WireServer, TEST_KEY};

const FIRST: &str = "x = 41\nprint('x is', x)";
const SECOND: &str = "print('x + 1 is', x + 1)";

/// Per ask: one turn with a python call, one with the answer.
fn script(kind: &str) -> Vec<Answer> {
    let turns = [
        ("call_a", FIRST, "First: x is 41."),
        ("call_b", SECOND, "Second: 42."),
    ];
    let mut out = Vec::new();
    for (id, code, answer) in turns {
        let args = json!({ "code": code }).to_string();
        match kind {
            "responses" => {
                use wire::responses::Events;
                out.push(Answer::Sse(
                    Events::new()
                        .call(0, id, "python", &args, 20)
                        .completed(100, 0, 10),
                ));
                out.push(Answer::Sse(
                    Events::new().text(0, answer, 8).completed(100, 0, 10),
                ));
            }
            "chat" => {
                use wire::chat::{call_chunks, chunk, text_stream, DONE};
                let mut c = call_chunks(0, id, "python", &args, 20);
                c.push(chunk(json!({}), Some("tool_calls")));
                c.push(DONE.into());
                out.push(Answer::Sse(c));
                out.push(Answer::Sse(text_stream(answer)));
            }
            _ => {
                use wire::messages::Events;
                out.push(Answer::Sse(
                    Events::new(10, 0, 0)
                        .tool_use(id, "python", &args, 20)
                        .end("tool_use", 5),
                ));
                out.push(Answer::Sse(
                    Events::new(10, 0, 0).text(answer).end("end_turn", 5),
                ));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_holds_a_conversation_through_each_wire_format() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    for (kind, model, key_var, base_var, path) in [
        (
            "responses",
            "openai:gpt-5.4",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "/v1",
        ),
        (
            "chat",
            "openai-compatible:qwen2.5-coder",
            "SANDALYST_COMPATIBLE_API_KEY",
            "",
            "/v1",
        ),
        (
            "messages",
            "anthropic:claude-sonnet-4-5",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "",
        ),
    ] {
        let server = WireServer::start(script(kind)).await;
        let dir = tempfile::tempdir().unwrap();
        let base = format!("{}{path}", server.base);
        let mut c = Command::new(env!("CARGO_BIN_EXE_sandalyst"));
        c.current_dir(&repo)
            .args([
                "chat",
                "-i",
                "examples/building_energy.csv",
                "--model",
                model,
            ])
            .env("SANDALYST_DATA_DIR", dir.path().join("data"))
            .env("SANDALYST_CONFIG", dir.path().join("config.toml"))
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env(key_var, TEST_KEY)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for var in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "SANDALYST_COMPATIBLE_API_KEY",
        ] {
            if var != key_var {
                c.env_remove(var);
            }
        }
        if base_var.is_empty() {
            c.args(["--base-url", &base]);
        } else {
            c.env(base_var, &base);
        }
        let out = tokio::task::block_in_place(|| {
            let mut child = c.spawn().unwrap();
            let mut stdin = child.stdin.take().unwrap();
            writeln!(stdin, "make x").unwrap();
            writeln!(stdin, "add one").unwrap();
            drop(stdin);
            child.wait_with_output().unwrap()
        });
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{kind}: {stderr}");
        assert_eq!(
            stdout.trim(),
            "First: x is 41.\nSecond: 42.",
            "{kind}: {stderr}"
        );
        let received = server.received();
        assert_eq!(received.len(), 4, "{kind}");
        // The second ask's last request holds the whole conversation and x + 1 = 42,
        // computed from the first ask's variable in the same kernel.
        let body = &received[3].body;
        let text = body.to_string();
        for needle in ["make x", "First: x is 41.", "add one", "x + 1 is 42"] {
            assert!(
                text.contains(needle),
                "{kind}: {needle} missing from {text}"
            );
        }
    }
}
