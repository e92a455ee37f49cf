//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`), the dialect of
//! Ollama, llama.cpp server, vLLM, LM Studio, OpenRouter and most gateways.
//!
//! Servers differ in what they stream, so the decoder is lenient:
//! - tool-call arguments arrive as deltas keyed by `index` across chunks, or whole in one
//!   chunk (Ollama), with or without `index` and `id`; several calls may interleave;
//! - usage comes in a last chunk (`stream_options.include_usage`), or never;
//! - the stream ends with `data: [DONE]`, or just closes after a `finish_reason`;
//! - some answer `stream: true` with one plain JSON body;
//! - reasoning text, where a server streams it (`reasoning_content` or `reasoning`),
//!   is kept as a reasoning item for the transcript; it is not sent back, as no common
//!   convention exists for that;
//! - reasoning models served without a reasoning parser (DeepSeek-R1, QwQ under
//!   llama.cpp) put their thinking in the content, as `<think>...</think>` or ending
//!   in a lone `</think>`: it is taken out of the answer and kept as reasoning;
//! - `finish_reason: "length"` makes a [`Reply::cut_off`] reply.
//!
//! Text and argument deltas go to [`Request::on_delta`] as they arrive. A `tool`
//! message holds text only, so images from the tool results of one turn follow the
//! tool messages as one `user` message of `image_url` parts (`data:` URLs), for a model
//! that takes images. A turn without tools sends no `tools`; earlier calls stay in the
//! history as they are. Tool calls that a local model writes as text are made calls
//! by [`text_calls`].

pub mod anomalies;
pub mod chart;
pub mod loose_json;
pub mod mend;
pub mod mode;
pub mod steps;
pub mod text_calls;

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::caps::{Budget, Part};
use super::config::ProviderConfig;
use super::error::{self, ApiError, Context, Fault};
use super::http::{
    data_url, join_url, tool_images, Auth, Decoder, Endpoint, HttpModel, WireFormat,
};
use super::{sse, tool_args, CallForm, Delta, ImagePart, Item, Reply, Request, Usage};
use crate::conversation::{CallMode, Capped, Ending};
use mend::Mend;
use mode::ModeState;

/// The Chat Completions provider.
pub type ChatCompletions = HttpModel<Chat>;

/// The Chat Completions wire format.
pub struct Chat;

impl WireFormat for Chat {
    const NAME: &'static str = "ChatCompletions";
    type Decoder = ChatDecoder;
    type State = ModeState;

    fn endpoint(config: &ProviderConfig) -> Endpoint {
        Endpoint {
            provider: "the Chat Completions server",
            url: join_url(&config.base_url, "chat/completions"),
            auth: Auth::Bearer,
            extra_headers: Vec::new(),
        }
    }

    fn state(config: &ProviderConfig) -> ModeState {
        ModeState::new(config)
    }

    fn body(config: &ProviderConfig, state: &ModeState, request: &Request) -> Value {
        // A turn without tools (the write-up after a limit) is plain text in any mode.
        let stepped = state.mode != CallMode::Native && !request.tools.is_empty();
        let mend = mend_of(state, request);
        // The app's method for abnormal events, in an ask for them (read once a turn).
        let method = stepped && anomalies::offered(request.items, request.tools);
        let messages = if stepped {
            let note = steps::format_note(request.tools, method);
            let mut messages = steps::messages(
                request.instructions,
                &note,
                request.items,
                &state.notes,
                config.takes_images(),
            );
            for note in turn_notes(request, mend.as_ref()) {
                steps::add_turn_note(&mut messages, &note);
            }
            messages
        } else {
            messages(request.instructions, request.items, config.takes_images())
        };
        let mut body = json!({
            "model": config.model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if state.mode == CallMode::Schema && stepped {
            let failed = steps::last_error(request.items);
            body["response_format"] = steps::response_format(steps::schema(
                request.tools,
                &request.answer,
                request.repeats,
                failed.as_deref(),
                mend.as_ref(),
                method,
                anomalies::thought(request.items, method, &request.answer).as_deref(),
            ));
        }
        if !request.tools.is_empty() && !stepped {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": t.name,
                            "description": t.description,
                            "parameters": t.parameters,
                        }
                    })
                })
                .collect();
        }
        // A reply cap and a low temperature unless configured: small local models at
        // their servers' defaults loop for thousands of tokens.
        for (k, v) in config.sampling.chat_fields_after(request.repeats) {
            body[k] = v;
        }
        body
    }

    fn live<'a>(
        state: &mut ModeState,
        on_delta: &'a (dyn Fn(Delta) + Send + Sync),
    ) -> Box<dyn Fn(Delta) + Send + Sync + 'a> {
        state.call_id = tool_args::fresh_call_id(0);
        if state.mode == CallMode::Native {
            return Box::new(on_delta);
        }
        let stream = steps::StepStream::new(on_delta, state.call_id.clone());
        Box::new(move |d| stream.on_delta(d))
    }

    fn finish(
        _config: &ProviderConfig,
        state: &mut ModeState,
        request: &Request,
        reply: Reply,
    ) -> Result<Reply, Reply> {
        if state.mode != CallMode::Native && !request.tools.is_empty() {
            let mend = mend_of(state, request);
            let sent = turn_notes(request, mend.as_ref());
            state.notes.sent(request.items, sent);
            return Ok(read_step(reply, request, &state.call_id, mend.as_ref()));
        }
        let converted = text_calls::convert(reply.clone(), request.tools);
        let recovered = converted.items.len() != reply.items.len();
        if state.switches(
            request.tools,
            request.items,
            &request.answer,
            &reply,
            recovered,
        ) {
            return Err(converted);
        }
        Ok(converted)
    }

    fn call_mode(state: &ModeState) -> Option<(CallMode, String)> {
        Some((state.mode, state.reason.clone()))
    }

    fn resume_call_mode(state: &mut ModeState, mode: CallMode, why: &str) {
        state.resume(mode, why)
    }

    fn learned_call_mode(state: &ModeState) -> Option<CallMode> {
        state.learned.then_some(state.mode)
    }
}

/// A step reply's text read as its call or its end. One that is not a step (cut
/// by the token cap, or text mode's prose) is read as calls written as text, else
/// kept as it is: the loop tells the model what was wrong.
fn read_step(mut reply: Reply, request: &Request, call_id: &str, mend: Option<&Mend>) -> Reply {
    let Some(pos) = reply
        .items
        .iter()
        .position(|i| matches!(i, Item::Assistant { .. }))
    else {
        return reply;
    };
    let Item::Assistant { text } = &reply.items[pos] else {
        return reply;
    };
    // A step cut as a loop runs up to where its lines began to repeat; a report's
    // text cut by the token cap or a loop is written as far as it went.
    let looped = reply.cut.is_some_and(|c| c.what == Capped::Repetition);
    let salvaged = looped
        .then(|| steps::salvage(text, request.tools, mend))
        .flatten()
        .or_else(|| {
            (looped || reply.cut_off)
                .then(|| steps::salvage_text(text, mend, looped))
                .flatten()
        });
    if let Some(step) = salvaged {
        if let Some((items, ending)) = steps::parse(&step, request.tools, call_id, mend) {
            reply.items.splice(pos..pos + 1, items);
            reply.ending = ending;
            reply.cut = None;
            reply.cut_off = false;
            return reply;
        }
    }
    match steps::parse(text, request.tools, call_id, mend) {
        Some((items, ending)) => {
            reply.items.splice(pos..pos + 1, items);
            reply.ending = ending;
            reply
        }
        None => text_calls::convert(reply, request.tools),
    }
}

/// The step the app finishes this turn, in schema mode (only a schema can hold the
/// model to it; text mode is offered the tools again).
fn mend_of(state: &ModeState, request: &Request) -> Option<Mend> {
    (state.mode == CallMode::Schema
        && !request.tools.is_empty()
        && !steps::answer_only(&request.answer, request.repeats))
    .then(|| {
        Mend::of(
            request.items,
            request.tools,
            &request.answer,
            request.repeats,
        )
    })
    .flatten()
}

/// The notes a step turn's request ends with: what the turn allows, and the app's
/// step when it finishes one.
fn turn_notes(request: &Request, mend: Option<&Mend>) -> Vec<String> {
    steps::turn_note(&request.answer, request.repeats)
        .into_iter()
        .chain(mend.map(Mend::note))
        .collect()
}

/// Our items as chat messages: the instructions as a system message; assistant text and
/// the calls that follow it as one assistant message; each tool output as a `tool`
/// message, and the images of a run of tool outputs as one `user` message after them.
/// The first result of a call that was written as text carries [`text_calls::NOTE`].
fn messages(instructions: &str, items: &[Item], vision: bool) -> Vec<Value> {
    let mut out = vec![json!({"role": "system", "content": instructions})];
    let noted = text_calls::first_text_call(items);
    // Images of the tool messages just written, sent once the run of them ends.
    let mut images: Vec<(&str, &ImagePart)> = Vec::new();
    fn flush_images(out: &mut Vec<Value>, images: &mut Vec<(&str, &ImagePart)>) {
        if images.is_empty() {
            return;
        }
        let mut parts =
            vec![json!({"type": "text", "text": "Images from the tool results above:"})];
        for (call_id, image) in images.drain(..) {
            let label = if image.label.is_empty() {
                format!("from {call_id}")
            } else {
                format!("{} (from {call_id})", image.label)
            };
            parts.push(json!({"type": "text", "text": label}));
            parts.push(json!({"type": "image_url", "image_url": {"url": data_url(image)}}));
        }
        out.push(json!({"role": "user", "content": parts}));
    }
    // The assistant message being built: (text parts, tool calls).
    let mut pending: Option<(Vec<String>, Vec<Value>)> = None;
    fn flush(out: &mut Vec<Value>, pending: &mut Option<(Vec<String>, Vec<Value>)>) {
        if let Some((texts, calls)) = pending.take() {
            let text = texts.join("\n\n");
            let mut m = json!({"role": "assistant"});
            m["content"] = if text.is_empty() && !calls.is_empty() {
                Value::Null
            } else {
                json!(text)
            };
            if !calls.is_empty() {
                m["tool_calls"] = json!(calls);
            }
            out.push(m);
        }
    }
    for item in items {
        if !matches!(item, Item::ToolOutput { .. } | Item::Reasoning { .. }) {
            flush_images(&mut out, &mut images);
        }
        match item {
            Item::Assistant { text } => {
                let p = pending.get_or_insert_with(Default::default);
                // Text after calls starts a new message, keeping the original order.
                if !p.1.is_empty() {
                    flush(&mut out, &mut pending);
                    pending = Some((vec![text.clone()], Vec::new()));
                } else {
                    p.0.push(text.clone());
                }
            }
            Item::ToolCall {
                call_id,
                name,
                arguments,
                ..
            } => pending.get_or_insert_with(Default::default).1.push(json!({
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": tool_args::to_object_text(arguments)},
            })),
            Item::Reasoning { .. } => {}
            Item::User { text } => {
                flush(&mut out, &mut pending);
                out.push(json!({"role": "user", "content": text}));
            }
            Item::ToolOutput {
                call_id,
                output,
                images: shown,
                ..
            } => {
                flush(&mut out, &mut pending);
                let (mut text, shown) = tool_images(output, shown, vision);
                if noted == Some(call_id.as_str()) {
                    text.push_str("\n\n");
                    text.push_str(text_calls::NOTE);
                }
                out.push(json!({"role": "tool", "tool_call_id": call_id, "content": text}));
                images.extend(shown.iter().map(|i| (call_id.as_str(), i)));
            }
        }
    }
    flush(&mut out, &mut pending);
    flush_images(&mut out, &mut images);
    out
}

#[derive(Default, Debug)]
struct Call {
    id: String,
    name: String,
    arguments: String,
}

/// Reads a Chat Completions chunk stream (or one JSON body) into a reply. Public only as [`super::http::WireFormat::Decoder`].
#[derive(Default)]
pub struct ChatDecoder {
    text: String,
    reasoning: String,
    /// By the server's `index`, or by arrival when a server sends none.
    calls: BTreeMap<u64, Call>,
    usage: Usage,
    finished: bool,
    /// `finish_reason: "length"`: the reply hit its token cap.
    cut_off: bool,
    budget: Budget,
}

impl ChatDecoder {
    /// One choice's `delta` (streamed) or `message` (whole body).
    fn absorb(&mut self, m: &Value, ctx: &Context) {
        if let Some(t) = m.get("content").and_then(Value::as_str) {
            let t = self.budget.append(Part::Text, &mut self.text, t);
            if !t.is_empty() {
                (ctx.on_delta)(Delta::Text { text: t.into() });
            }
        }
        for k in ["reasoning_content", "reasoning"] {
            if let Some(t) = m.get(k).and_then(Value::as_str) {
                self.budget.append(Part::Reasoning, &mut self.reasoning, t);
                break;
            }
        }
        for (pos, tc) in m
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let id = tc.get("id").and_then(Value::as_str).unwrap_or("");
            let index = match tc.get("index").and_then(Value::as_u64) {
                Some(i) => i,
                // No index: a new id starts a new call, a missing one continues the last.
                None => match self
                    .calls
                    .iter()
                    .find(|(_, c)| !id.is_empty() && c.id == id)
                {
                    Some((i, _)) => *i,
                    None if id.is_empty() && pos == 0 && !self.calls.is_empty() => {
                        *self.calls.keys().last().unwrap_or(&0)
                    }
                    None => self.calls.keys().last().map_or(0, |k| k + 1),
                },
            };
            let call = self.calls.entry(index).or_insert_with(|| Call {
                // Made up at once when the server sends none, so the deltas name it.
                id: tool_args::fresh_call_id(index),
                ..Call::default()
            });
            if !id.is_empty() {
                call.id = id.to_string();
            }
            let f = &tc["function"];
            // Sent once by most servers, repeated in every delta by some.
            if let Some(n) = f.get("name").and_then(Value::as_str) {
                if call.name.is_empty() {
                    call.name = n.to_string();
                }
            }
            let piece = f
                .get("arguments")
                .map(tool_args::from_wire)
                .unwrap_or_default();
            let piece = self
                .budget
                .append(Part::Arguments, &mut call.arguments, &piece);
            (ctx.on_delta)(Delta::ToolCall {
                call_id: call.id.as_str().into(),
                name: call.name.clone(),
                arguments: piece.into(),
            });
        }
    }

    fn absorb_usage(&mut self, v: &Value) {
        let n = |x: &Value| x.as_u64().unwrap_or(0);
        let u = &v["usage"];
        if u.is_object() {
            self.usage = Usage {
                input_tokens: n(&u["prompt_tokens"]),
                output_tokens: n(&u["completion_tokens"]),
                cached_tokens: n(&u["prompt_tokens_details"]["cached_tokens"])
                    .max(self.usage.cached_tokens),
            };
        }
        // llama.cpp's own account: `timings.cache_n`, the prompt tokens its slot
        // already held (its usage has no `prompt_tokens_details` in some versions).
        let cache_n = n(&v["timings"]["cache_n"]);
        if cache_n > self.usage.cached_tokens {
            self.usage.cached_tokens = cache_n;
        }
    }

    fn error_in(v: &Value, ctx: &Context) -> Option<Fault> {
        let e = v.get("error").filter(|e| !e.is_null())?;
        let err = ApiError::from_value(&json!({ "error": e }))?;
        Some(error::from_api_error(&err, ctx))
    }
}

impl Decoder for ChatDecoder {
    fn budget(&mut self) -> &mut Budget {
        &mut self.budget
    }

    fn event(&mut self, ev: &sse::Event, ctx: &Context) -> Result<bool, Fault> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            Fault::transient(format!(
                "{} sent a malformed chunk ({e}): {}",
                ctx.provider,
                data.chars().take(200).collect::<String>()
            ))
        })?;
        if let Some(f) = Self::error_in(&v, ctx) {
            return Err(f);
        }
        for choice in v
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if let Some(d) = choice.get("delta") {
                self.absorb(d, ctx);
            }
            if let Some(reason) = choice.get("finish_reason").filter(|r| !r.is_null()) {
                self.finished = true;
                self.cut_off = reason == "length";
            }
        }
        self.absorb_usage(&v);
        Ok(false)
    }

    fn json(&mut self, body: &str, ctx: &Context) -> Result<(), Fault> {
        let v: Value = serde_json::from_str(body).map_err(|e| {
            Fault::transient(format!(
                "{} sent a malformed JSON reply ({e})",
                ctx.provider
            ))
        })?;
        if let Some(f) = Self::error_in(&v, ctx) {
            return Err(f);
        }
        let choice = v
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .ok_or_else(|| {
                Fault::transient(format!("{} sent a reply with no choices", ctx.provider))
            })?;
        self.absorb(&choice["message"], ctx);
        self.absorb_usage(&v);
        self.finished = true;
        self.cut_off = choice["finish_reason"] == "length";
        Ok(())
    }

    fn finish(&mut self, complete: bool) -> Result<Reply, Fault> {
        // A server that closes after its finish_reason, without [DONE], sent it all.
        if !complete && !self.finished {
            return Err(Fault::transient(
                "the stream ended before the reply was complete (no finish_reason, no [DONE])",
            ));
        }
        let mut items = Vec::new();
        let (thought, text) = split_think(&self.text);
        self.reasoning.push_str(&thought);
        self.text = text;
        if !self.reasoning.trim().is_empty() {
            items.push(Item::Reasoning {
                summary: self.reasoning.trim().to_string(),
                encrypted_content: None,
            });
        }
        if !self.text.trim().is_empty() {
            items.push(Item::Assistant {
                text: std::mem::take(&mut self.text),
            });
        }
        for (i, call) in std::mem::take(&mut self.calls) {
            items.push(Item::ToolCall {
                call_id: tool_args::call_id_or_fresh(call.id, i).into(),
                name: call.name,
                // "No arguments" is sent as nothing by some servers.
                arguments: if call.arguments.trim().is_empty() {
                    "{}".into()
                } else {
                    call.arguments
                },
                form: CallForm::Structured,
            });
        }
        Ok(Reply {
            items,
            usage: self.usage,
            cut_off: self.cut_off,
            cut: None,
            ending: Ending::Unmarked,
        })
    }
}

/// Thinking written into the content (`<think>...</think>` first, or everything
/// before a lone `</think>`), apart from the answer: (thinking, answer).
fn split_think(text: &str) -> (String, String) {
    let t = text.trim_start();
    let body = t.strip_prefix("<think>");
    if body.is_none() && !text.contains("</think>") {
        return (String::new(), text.to_string());
    }
    let body = body.unwrap_or(t);
    match body.find("</think>") {
        Some(end) => (
            body[..end].to_string(),
            body[end + "</think>".len()..].trim_start().to_string(),
        ),
        // Cut off while thinking: nothing was answered yet.
        None => (body.to_string(), String::new()),
    }
}
