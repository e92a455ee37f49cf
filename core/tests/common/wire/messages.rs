//! Anthropic Messages event streams, as Anthropic sends them.

use serde_json::{json, Value};

use super::pieces;

pub const MODEL: &str = "claude-sonnet-4-5";

#[derive(Default)]
pub struct Events {
    chunks: Vec<String>,
    index: u64,
}

impl Events {
    pub fn new(input: u64, cache_read: u64, cache_write: u64) -> Events {
        let mut e = Events::default();
        e.push(json!({"type": "message_start", "message": {
            "id": "msg_01", "type": "message", "role": "assistant", "content": [], "model": MODEL,
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "cache_creation_input_tokens": cache_write, "cache_read_input_tokens": cache_read, "output_tokens": 1}
        }}));
        e.push(json!({"type": "ping"}));
        e
    }

    pub fn push(&mut self, v: Value) -> &mut Events {
        let kind = v["type"].as_str().unwrap().to_string();
        self.chunks.push(format!("event: {kind}\ndata: {v}\n\n"));
        self
    }

    pub fn text(&mut self, text: &str) -> &mut Events {
        let i = self.index;
        self.index += 1;
        self.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}));
        for p in pieces(text, 5) {
            self.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": p}}));
        }
        self.push(json!({"type": "content_block_stop", "index": i}))
    }

    pub fn tool_use(
        &mut self,
        id: &str,
        name: &str,
        input_json: &str,
        piece: usize,
    ) -> &mut Events {
        let i = self.index;
        self.index += 1;
        self.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
        // The API's first input_json_delta is often empty.
        self.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": ""}}));
        for p in pieces(input_json, piece) {
            self.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": p}}));
        }
        self.push(json!({"type": "content_block_stop", "index": i}))
    }

    pub fn end(&mut self, stop_reason: &str, output: u64) -> Vec<String> {
        self.push(json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": output}}));
        self.push(json!({"type": "message_stop"}));
        std::mem::take(&mut self.chunks)
    }

    pub fn partial(&mut self) -> Vec<String> {
        std::mem::take(&mut self.chunks)
    }
}
