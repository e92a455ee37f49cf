//! Providers that stream without end, in each wire format: text (or reasoning) that
//! never stops, a tool call whose arguments never stop, and one SSE line that never
//! ends. Each is an
//! [`Answer::Endless`] that stops only when the client stops reading (or at `limit`).

use serde_json::json;

use super::Answer;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flood {
    Text,
    Reasoning,
    Arguments,
    Line,
    /// Text that says the same words over and over: a model caught in a loop.
    Loop,
}

/// What one text delta carries: small, so the wire carries several times the text;
/// `{n}` is the delta's number (see `Answer::Endless`), so the text is no loop.
pub const TEXT: &str = "endless {n} ";
/// How the endless text starts.
pub const TEXT_START: &str = "endless 0 endless 1 ";
/// What one argument delta carries: code inside the JSON string of the arguments, so
/// no quote, backslash or newline (it is written into the events as it is).
pub const ARGS: &str = "x = 1; y = 2  # never ends ... ";
/// The call the endless arguments belong to.
pub const CALL_ID: &str = "call_endless";

/// The wire formats, by the names the tests use.
#[derive(Clone, Copy, Debug)]
pub enum Wire {
    Responses,
    Chat,
    Messages,
}

pub fn answer(wire: Wire, flood: Flood, limit: usize) -> Answer {
    if flood == Flood::Loop {
        let Answer::Endless {
            head, piece, tail, ..
        } = answer(wire, Flood::Text, limit)
        else {
            unreachable!("text floods are endless")
        };
        return Answer::Endless {
            head,
            piece: piece.replace("{n}", "again"),
            limit,
            tail,
        };
    }
    match wire {
        Wire::Responses => responses(flood, limit),
        Wire::Chat => chat(flood, limit),
        Wire::Messages => messages(flood, limit),
    }
}

fn sse(kind: &str, v: serde_json::Value) -> String {
    format!("event: {kind}\ndata: {v}\n\n")
}

pub fn responses(flood: Flood, limit: usize) -> Answer {
    let mut head = super::responses::Events::new().partial();
    let (piece, tail) = match flood {
        Flood::Reasoning => {
            head.push(sse("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "rs_0", "type": "reasoning", "summary": []}})));
            head.push(sse("response.reasoning_summary_part.added", json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_0", "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}})));
            (
                sse(
                    "response.reasoning_summary_text.delta",
                    json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_0", "output_index": 0, "summary_index": 0, "delta": TEXT}),
                ),
                vec![],
            )
        }
        Flood::Text | Flood::Line | Flood::Loop => {
            head.push(sse("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "msg_0", "type": "message", "status": "in_progress", "role": "assistant", "content": []}})));
            if flood == Flood::Line {
                // One event whose data line never ends.
                head.push(
                    "data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\""
                        .into(),
                );
                return Answer::Endless {
                    head,
                    piece: "y".repeat(1024),
                    limit,
                    tail: vec![],
                };
            }
            (
                sse(
                    "response.output_text.delta",
                    json!({"type": "response.output_text.delta", "item_id": "msg_0", "output_index": 0, "content_index": 0, "delta": TEXT}),
                ),
                vec![sse(
                    "response.completed",
                    json!({"type": "response.completed", "response": {"status": "completed", "usage": {"input_tokens": 1, "output_tokens": 1}}}),
                )],
            )
        }
        Flood::Arguments => {
            head.push(sse("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "fc_0", "type": "function_call", "status": "in_progress", "call_id": CALL_ID, "name": "python", "arguments": ""}})));
            head.push(sse(
                "response.function_call_arguments.delta",
                json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"code\": \""}),
            ));
            let piece = format!(
                "event: response.function_call_arguments.delta\ndata: {{\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"delta\":\"{}\"}}\n\n",
                ARGS
            );
            (
                piece,
                vec![sse(
                    "response.completed",
                    json!({"type": "response.completed", "response": {"status": "completed"}}),
                )],
            )
        }
    };
    Answer::Endless {
        head,
        piece,
        limit,
        tail,
    }
}

pub fn chat(flood: Flood, limit: usize) -> Answer {
    use super::chat::{chunk, DONE};
    let end = vec![chunk(json!({}), Some("stop")), DONE.into()];
    match flood {
        Flood::Text => Answer::Endless {
            head: vec![chunk(json!({"role": "assistant", "content": ""}), None)],
            piece: chunk(json!({"content": TEXT}), None),
            limit,
            tail: end,
        },
        Flood::Reasoning => Answer::Endless {
            head: vec![chunk(json!({"role": "assistant", "content": ""}), None)],
            piece: chunk(json!({"reasoning_content": TEXT}), None),
            limit,
            tail: end,
        },
        Flood::Arguments => Answer::Endless {
            head: vec![chunk(
                json!({"tool_calls": [{"index": 0, "id": CALL_ID, "type": "function", "function": {"name": "python", "arguments": "{\"code\": \""}}]}),
                None,
            )],
            piece: format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{}\"}}}}]}}}}]}}\n\n",
                ARGS
            ),
            limit,
            tail: end,
        },
        Flood::Line => Answer::Endless {
            head: vec!["data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".into()],
            piece: "y".repeat(1024),
            limit,
            tail: vec![],
        },
        Flood::Loop => unreachable!("made from Text in `answer`"),
    }
}

pub fn messages(flood: Flood, limit: usize) -> Answer {
    let mut head = super::messages::Events::new(10, 0, 0).partial();
    let end = vec![
        sse(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        sse(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}),
        ),
        sse("message_stop", json!({"type": "message_stop"})),
    ];
    match flood {
        Flood::Reasoning => {
            head.push(sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            ));
            Answer::Endless {
                head,
                piece: sse(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": TEXT}}),
                ),
                limit,
                tail: end,
            }
        }
        Flood::Text | Flood::Line | Flood::Loop => {
            head.push(sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ));
            if flood == Flood::Line {
                head.push("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"".into());
                return Answer::Endless {
                    head,
                    piece: "y".repeat(1024),
                    limit,
                    tail: vec![],
                };
            }
            Answer::Endless {
                head,
                piece: sse(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": TEXT}}),
                ),
                limit,
                tail: end,
            }
        }
        Flood::Arguments => {
            head.push(sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": CALL_ID, "name": "python", "input": {}}}),
            ));
            head.push(sse(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"code\": \""}}),
            ));
            Answer::Endless {
                head,
                piece: sse(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ARGS}}),
                ),
                limit,
                tail: end,
            }
        }
    }
}
