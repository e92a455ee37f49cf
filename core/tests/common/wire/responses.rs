//! Responses API event streams, as OpenAI sends them.

use serde_json::{json, Value};

use super::pieces;

/// Builds a Responses event stream, one SSE event per chunk.
#[derive(Default)]
pub struct Events {
    chunks: Vec<String>,
    seq: u64,
}

impl Events {
    pub fn new() -> Events {
        let mut e = Events::default();
        e.push(json!({"type": "response.created", "response": {"id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt-5.4", "output": []}}));
        e.push(json!({"type": "response.in_progress", "response": {"id": "resp_1", "status": "in_progress"}}));
        e
    }

    pub fn push(&mut self, mut v: Value) -> &mut Events {
        v["sequence_number"] = json!(self.seq);
        self.seq += 1;
        let kind = v["type"].as_str().unwrap().to_string();
        self.chunks.push(format!("event: {kind}\ndata: {v}\n\n"));
        self
    }

    pub fn text(&mut self, index: u64, text: &str, piece: usize) -> &mut Events {
        let id = format!("msg_{index}");
        self.push(json!({"type": "response.output_item.added", "output_index": index, "item": {"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}));
        self.push(json!({"type": "response.content_part.added", "item_id": id, "output_index": index, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}));
        for p in pieces(text, piece) {
            self.push(json!({"type": "response.output_text.delta", "item_id": id, "output_index": index, "content_index": 0, "delta": p, "logprobs": []}));
        }
        self.push(json!({"type": "response.output_text.done", "item_id": id, "output_index": index, "content_index": 0, "text": text}));
        self.push(json!({"type": "response.content_part.done", "item_id": id, "output_index": index, "content_index": 0, "part": {"type": "output_text", "text": text, "annotations": []}}));
        self.push(json!({"type": "response.output_item.done", "output_index": index, "item": {"id": id, "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]}}))
    }

    /// A function call whose arguments stream in pieces of `piece` characters.
    pub fn call(
        &mut self,
        index: u64,
        call_id: &str,
        name: &str,
        args: &str,
        piece: usize,
    ) -> &mut Events {
        let id = format!("fc_{index}");
        self.push(json!({"type": "response.output_item.added", "output_index": index, "item": {"id": id, "type": "function_call", "status": "in_progress", "call_id": call_id, "name": name, "arguments": ""}}));
        for p in pieces(args, piece) {
            self.push(json!({"type": "response.function_call_arguments.delta", "item_id": id, "output_index": index, "delta": p}));
        }
        self.push(json!({"type": "response.function_call_arguments.done", "item_id": id, "output_index": index, "arguments": args}));
        self.push(json!({"type": "response.output_item.done", "output_index": index, "item": {"id": id, "type": "function_call", "status": "completed", "call_id": call_id, "name": name, "arguments": args}}))
    }

    pub fn reasoning(&mut self, index: u64, summary: &str, encrypted: &str) -> &mut Events {
        let id = format!("rs_{index}");
        self.push(json!({"type": "response.output_item.added", "output_index": index, "item": {"id": id, "type": "reasoning", "summary": []}}));
        self.push(json!({"type": "response.reasoning_summary_part.added", "item_id": id, "output_index": index, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}));
        for p in pieces(summary, 5) {
            self.push(json!({"type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": index, "summary_index": 0, "delta": p}));
        }
        self.push(json!({"type": "response.output_item.done", "output_index": index, "item": {"id": id, "type": "reasoning", "summary": [{"type": "summary_text", "text": summary}], "encrypted_content": encrypted}}))
    }

    pub fn completed(&mut self, input: u64, cached: u64, output: u64) -> Vec<String> {
        self.push(json!({"type": "response.completed", "response": {"id": "resp_1", "object": "response", "status": "completed", "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": input + output}}}));
        std::mem::take(&mut self.chunks)
    }

    /// The stream so far, without its final event.
    pub fn partial(&mut self) -> Vec<String> {
        std::mem::take(&mut self.chunks)
    }
}
