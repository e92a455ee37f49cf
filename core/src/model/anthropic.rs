//! The Anthropic Messages API (`POST {base}/v1/messages`, streamed).
//!
//! The instructions go in `system`, tools as `{name, description, input_schema}`, calls
//! and results as `tool_use` / `tool_result` content blocks; all results of one turn go
//! back together in one user message, results first, as the API requires. The last
//! block carries a `cache_control` breakpoint so each turn reads the conversation so
//! far from Anthropic's prompt cache instead of paying for it again.
//!
//! Images from tool results go inside the `tool_result` as `image` blocks (base64
//! source) after its text, for a model that takes images. A turn without tools (the
//! final summary) whose history holds `tool_use` blocks still has to define those
//! tools, or the API refuses the history: it names them (from the history, with an
//! empty schema) and sets `tool_choice: none`, so the model answers in words.
//!
//! Events read: `message_start` (input usage), `content_block_start`,
//! `content_block_delta` (`text_delta`, `input_json_delta`, `thinking_delta`),
//! `content_block_stop`, `message_delta` (output usage; `stop_reason: max_tokens`
//! makes a [`Reply::cut_off`] reply), `message_stop`, `ping`, `error`. Text and
//! argument deltas go to [`Request::on_delta`] as they arrive.
//! Extended thinking is not requested; thinking a server sends anyway is kept in the
//! transcript as reasoning but not sent back.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::caps::{Budget, Part};
use super::config::ProviderConfig;
use super::error::{self, ApiError, Context, Fault};
use super::http::{join_url, tool_images, Auth, Decoder, Endpoint, HttpModel, WireFormat};
use super::{sse, tool_args, CallForm, Delta, Item, Reply, Request, Usage};

pub const API_VERSION: &str = "2023-06-01";
/// The reply length cap when the config sets none; every current model allows it.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The Anthropic provider.
pub type Anthropic = HttpModel<Messages>;

/// The Messages wire format.
pub struct Messages;

impl WireFormat for Messages {
    const NAME: &'static str = "Anthropic";
    type State = ();
    type Decoder = MessagesDecoder;

    fn endpoint(config: &ProviderConfig) -> Endpoint {
        // The SDKs' ANTHROPIC_BASE_URL is the host; accept one that already ends in /v1.
        let base = config.base_url.trim_end_matches('/');
        let url = if base.ends_with("/v1") {
            join_url(base, "messages")
        } else {
            join_url(base, "v1/messages")
        };
        Endpoint {
            provider: "Anthropic",
            url,
            auth: Auth::Header("x-api-key"),
            extra_headers: vec![("anthropic-version", API_VERSION.to_string())],
        }
    }

    fn state(_config: &ProviderConfig) {}

    fn body(config: &ProviderConfig, _state: &(), request: &Request) -> Value {
        let mut body = json!({
            "model": config.model,
            "max_tokens": config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "system": request.instructions,
            "messages": messages(request.items, config.takes_images()),
            "stream": true,
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name,
                        "description": t.description,
                        "input_schema": t.parameters,
                    })
                })
                .collect();
        } else {
            // No tools this turn, but the history's tool_use blocks need definitions.
            let mut names: Vec<&str> = Vec::new();
            for item in request.items {
                if let Item::ToolCall { name, .. } = item {
                    if !names.contains(&name.as_str()) {
                        names.push(name);
                    }
                }
            }
            if !names.is_empty() {
                body["tools"] = names
                    .iter()
                    .map(|n| {
                        json!({
                            "name": n,
                            "description": "Used earlier in this conversation; not available in this turn.",
                            "input_schema": {"type": "object"},
                        })
                    })
                    .collect();
                body["tool_choice"] = json!({"type": "none"});
            }
        }
        body
    }
}

/// Our items as alternating user/assistant messages of content blocks.
fn messages(items: &[Item], vision: bool) -> Vec<Value> {
    let mut out: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, block: Value| match out.last_mut() {
        Some((r, blocks)) if *r == role => blocks.push(block),
        _ => out.push((role, vec![block])),
    };
    for item in items {
        match item {
            Item::User { text } if !text.trim().is_empty() => {
                push("user", json!({"type": "text", "text": text}))
            }
            // The API refuses empty text blocks.
            Item::Assistant { text } if !text.trim().is_empty() => {
                push("assistant", json!({"type": "text", "text": text}))
            }
            Item::ToolCall {
                call_id,
                name,
                arguments,
                ..
            } => push(
                "assistant",
                json!({
                    "type": "tool_use",
                    "id": call_id,
                    "name": name,
                    "input": tool_args::to_object(arguments),
                }),
            ),
            Item::ToolOutput {
                call_id,
                output,
                is_error,
                images,
            } => {
                let (text, images) = tool_images(output, images, vision);
                let text = if text.is_empty() {
                    "(no output)".to_string()
                } else {
                    text
                };
                let content = if images.is_empty() {
                    json!(text)
                } else {
                    let mut blocks = vec![json!({"type": "text", "text": text})];
                    for image in images {
                        if !image.label.is_empty() {
                            blocks.push(json!({"type": "text", "text": image.label}));
                        }
                        blocks.push(json!({"type": "image", "source": {
                            "type": "base64",
                            "media_type": image.media_type,
                            "data": image.data,
                        }}));
                    }
                    Value::Array(blocks)
                };
                push(
                    "user",
                    json!({
                        "type": "tool_result",
                        "tool_use_id": call_id,
                        "content": content,
                        "is_error": is_error,
                    }),
                )
            }
            _ => {}
        }
    }
    if let Some(last) = out.last_mut().and_then(|(_, b)| b.last_mut()) {
        last["cache_control"] = json!({"type": "ephemeral"});
    }
    out.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

#[derive(Debug)]
enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        /// `input_json_delta` pieces.
        json: String,
        /// The `input` of `content_block_start` as JSON text, used when no deltas follow.
        initial: String,
    },
    Thinking(String),
    Other,
}

/// Reads a Messages event stream into a reply. Public only as [`super::http::WireFormat::Decoder`].
#[derive(Default)]
pub struct MessagesDecoder {
    blocks: BTreeMap<u64, Block>,
    input_tokens: u64,
    cache_read: u64,
    cache_write: u64,
    output_tokens: u64,
    /// `stop_reason: "max_tokens"`: the reply hit its token cap.
    cut_off: bool,
    budget: Budget,
}

impl MessagesDecoder {
    fn usage(&mut self, u: &Value) {
        let set = |field: &mut u64, key: &str| {
            if let Some(n) = u.get(key).and_then(Value::as_u64) {
                *field = n;
            }
        };
        set(&mut self.input_tokens, "input_tokens");
        set(&mut self.cache_read, "cache_read_input_tokens");
        set(&mut self.cache_write, "cache_creation_input_tokens");
        set(&mut self.output_tokens, "output_tokens");
    }
}

impl Decoder for MessagesDecoder {
    fn budget(&mut self) -> &mut Budget {
        &mut self.budget
    }

    fn event(&mut self, ev: &sse::Event, ctx: &Context) -> Result<bool, Fault> {
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
            Fault::transient(format!(
                "Anthropic sent a malformed event ({e}): {}",
                ev.data.chars().take(200).collect::<String>()
            ))
        })?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&ev.event)
            .to_string();
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind.as_str() {
            "message_start" => self.usage(&v["message"]["usage"]),
            "content_block_start" => {
                let b = &v["content_block"];
                let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                let block = match b["type"].as_str().unwrap_or("") {
                    "text" => {
                        let mut text = String::new();
                        self.budget.append(Part::Text, &mut text, &s("text"));
                        if !text.is_empty() {
                            (ctx.on_delta)(Delta::Text { text: text.clone() });
                        }
                        Block::Text(text)
                    }
                    "tool_use" => {
                        let mut initial = String::new();
                        if let Some(input) = b.get("input").filter(|i| i.is_object()) {
                            let text = input.to_string();
                            if text != "{}" {
                                self.budget.append(Part::Arguments, &mut initial, &text);
                            }
                        }
                        (ctx.on_delta)(Delta::ToolCall {
                            call_id: s("id").into(),
                            name: s("name"),
                            arguments: String::new(),
                        });
                        Block::ToolUse {
                            id: s("id"),
                            name: s("name"),
                            json: String::new(),
                            initial,
                        }
                    }
                    "thinking" => {
                        let mut thought = String::new();
                        self.budget
                            .append(Part::Reasoning, &mut thought, &s("thinking"));
                        Block::Thinking(thought)
                    }
                    _ => Block::Other,
                };
                self.blocks.insert(index, block);
            }
            "content_block_delta" => {
                let d = &v["delta"];
                let text = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("");
                match (
                    self.blocks.get_mut(&index),
                    d["type"].as_str().unwrap_or(""),
                ) {
                    (Some(Block::Text(t)), "text_delta") => {
                        let piece = self.budget.append(Part::Text, t, text("text"));
                        if !piece.is_empty() {
                            (ctx.on_delta)(Delta::Text { text: piece.into() });
                        }
                    }
                    (Some(Block::ToolUse { id, name, json, .. }), "input_json_delta") => {
                        let piece = self
                            .budget
                            .append(Part::Arguments, json, text("partial_json"));
                        if !piece.is_empty() {
                            (ctx.on_delta)(Delta::ToolCall {
                                call_id: id.as_str().into(),
                                name: name.clone(),
                                arguments: piece.into(),
                            });
                        }
                    }
                    (Some(Block::Thinking(t)), "thinking_delta") => {
                        self.budget.append(Part::Reasoning, t, text("thinking"));
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                self.usage(&v["usage"]);
                self.cut_off = v["delta"]["stop_reason"] == "max_tokens";
            }
            "message_stop" => return Ok(true),
            "error" => {
                let err = ApiError::from_event(&v, &ev.data);
                return Err(error::from_api_error(&err, ctx));
            }
            // ping, content_block_stop and events added later carry nothing we need.
            _ => {}
        }
        Ok(false)
    }

    fn finish(&mut self, complete: bool) -> Result<Reply, Fault> {
        if !complete {
            return Err(Fault::transient(
                "the stream from Anthropic ended before message_stop",
            ));
        }
        let mut items = Vec::new();
        for (i, block) in std::mem::take(&mut self.blocks) {
            match block {
                Block::Text(text) if !text.trim().is_empty() => {
                    items.push(Item::Assistant { text })
                }
                Block::Thinking(summary) if !summary.trim().is_empty() => {
                    items.push(Item::Reasoning {
                        summary,
                        encrypted_content: None,
                    })
                }
                Block::ToolUse {
                    id,
                    name,
                    json,
                    initial,
                } => items.push(Item::ToolCall {
                    call_id: tool_args::call_id_or_fresh(id, i).into(),
                    name,
                    arguments: if !json.trim().is_empty() {
                        json
                    } else if !initial.is_empty() {
                        initial
                    } else {
                        "{}".into()
                    },
                    form: CallForm::Structured,
                }),
                _ => {}
            }
        }
        // Anthropic counts cached and freshly cached input apart from `input_tokens`;
        // ours includes them, as OpenAI's does.
        Ok(Reply {
            items,
            usage: Usage {
                input_tokens: self.input_tokens + self.cache_read + self.cache_write,
                output_tokens: self.output_tokens,
                cached_tokens: self.cache_read,
            },
            cut_off: self.cut_off,
            cut: None,
            ending: Default::default(),
        })
    }
}
