//! Chat Completions chunk streams, as OpenAI-compatible servers send them.

use serde_json::{json, Value};

use super::pieces;

pub const MODEL: &str = "qwen2.5-coder:7b";

pub fn chunk(delta: Value, finish: Option<&str>) -> String {
    let v = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": MODEL,
        "system_fingerprint": "fp_1",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    });
    format!("data: {v}\n\n")
}

pub fn usage_chunk(prompt: u64, cached: u64, completion: u64) -> String {
    let v = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": MODEL,
        "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                  "prompt_tokens_details": {"cached_tokens": cached}},
    });
    format!("data: {v}\n\n")
}

pub const DONE: &str = "data: [DONE]\n\n";

/// Text in pieces, as OpenAI streams it, with usage and [DONE].
pub fn text_stream(text: &str) -> Vec<String> {
    let mut c = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    c.extend(
        pieces(text, 4)
            .into_iter()
            .map(|p| chunk(json!({"content": p}), None)),
    );
    c.push(chunk(json!({}), Some("stop")));
    c.push(usage_chunk(800, 512, 9));
    c.push(DONE.into());
    c
}

/// One call's chunks, arguments streamed `piece` characters at a time.
pub fn call_chunks(index: u64, id: &str, name: &str, args: &str, piece: usize) -> Vec<String> {
    let mut c = vec![chunk(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
        None,
    )];
    c.extend(pieces(args, piece).into_iter().map(|p| {
        chunk(
            json!({"tool_calls": [{"index": index, "function": {"arguments": p}}]}),
            None,
        )
    }));
    c
}
