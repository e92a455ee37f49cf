//! The OpenAI Responses API (`POST {base}/responses`, streamed).
//!
//! Requests are stateless (`store: false`): the whole conversation goes up every turn.
//! Reasoning models get `include: ["reasoning.encrypted_content"]`, and the encrypted
//! reasoning they return is sent back before the calls it led to, as the API requires
//! for function calling with reasoning models. Item ids are never sent back: with
//! `store: false` the server would look them up and fail.
//!
//! Images from tool results go back inside the `function_call_output` itself, whose
//! `output` is then a list of `input_text` and `input_image` parts (an image as a
//! `data:` URL), for a model that takes images. A turn without tools (the final
//! summary) sends no `tools` and no `tool_choice`; the earlier calls and their outputs
//! stay in `input` as they are.
//!
//! Events read: `response.output_item.added` / `.done`, `response.output_text.delta`,
//! `response.refusal.delta`, `response.function_call_arguments.delta` / `.done`,
//! `response.reasoning_summary_text.delta`, `response.completed` / `.incomplete`
//! (usage; `incomplete` for `max_output_tokens` makes a [`Reply::cut_off`] reply),
//! `response.failed` and `error`. Others (`response.created`, content-part events,
//! ...) carry nothing we need. Text and argument deltas go to [`Request::on_delta`]
//! as they arrive.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::caps::{Budget, Part};
use super::config::ProviderConfig;
use super::error::{self, ApiError, Context, Fault};
use super::http::{
    data_url, join_url, tool_images, Auth, Decoder, Endpoint, HttpModel, WireFormat,
};
use super::{sse, CallForm, Delta, Item, Reply, Request, Usage};

/// The OpenAI Responses provider.
pub type OpenAiResponses = HttpModel<Responses>;

/// The Responses wire format.
pub struct Responses;

impl WireFormat for Responses {
    const NAME: &'static str = "OpenAiResponses";
    type State = ();
    type Decoder = ResponsesDecoder;

    fn endpoint(config: &ProviderConfig) -> Endpoint {
        Endpoint {
            provider: "OpenAI",
            url: join_url(&config.base_url, "responses"),
            auth: Auth::Bearer,
            extra_headers: Vec::new(),
        }
    }

    fn state(_config: &ProviderConfig) {}

    fn body(config: &ProviderConfig, _state: &(), request: &Request) -> Value {
        let reasoning = is_reasoning_model(&config.model);
        let mut body = json!({
            "model": config.model,
            "instructions": request.instructions,
            "input": input_items(request.items, reasoning, config.takes_images()),
            "stream": true,
            "store": false,
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                        "strict": false,
                    })
                })
                .collect();
            body["tool_choice"] = json!("auto");
            body["parallel_tool_calls"] = json!(true);
        }
        if reasoning {
            body["include"] = json!(["reasoning.encrypted_content"]);
            let mut r = serde_json::Map::new();
            if let Some(e) = &config.reasoning_effort {
                r.insert("effort".into(), json!(e));
            }
            if let Some(s) = &config.reasoning_summary {
                r.insert("summary".into(), json!(s));
            }
            if !r.is_empty() {
                body["reasoning"] = Value::Object(r);
            }
        }
        if let Some(n) = config.max_tokens {
            body["max_output_tokens"] = json!(n);
        }
        body
    }
}

/// Models that reason (and so accept `include: reasoning.encrypted_content`): everything
/// but the older GPT-4 and GPT-3.5 families.
fn is_reasoning_model(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    !(m.starts_with("gpt-4") || m.starts_with("gpt-3") || m.starts_with("chatgpt-4o"))
}

/// Our items as Responses input items.
fn input_items(items: &[Item], reasoning: bool, vision: bool) -> Vec<Value> {
    items
        .iter()
        .filter_map(|item| match item {
            Item::User { text } => {
                Some(json!({"type": "message", "role": "user", "content": text}))
            }
            Item::Assistant { text } => {
                Some(json!({"type": "message", "role": "assistant", "content": text}))
            }
            Item::ToolCall {
                call_id,
                name,
                arguments,
                ..
            } => Some(json!({
                "type": "function_call",
                "call_id": call_id,
                "name": name,
                "arguments": arguments,
            })),
            Item::ToolOutput {
                call_id,
                output,
                images,
                ..
            } => {
                let (text, images) = tool_images(output, images, vision);
                let output = if images.is_empty() {
                    json!(text)
                } else {
                    let mut parts = Vec::new();
                    if !text.is_empty() {
                        parts.push(json!({"type": "input_text", "text": text}));
                    }
                    for image in images {
                        if !image.label.is_empty() {
                            parts.push(json!({"type": "input_text", "text": image.label}));
                        }
                        parts.push(json!({"type": "input_image", "image_url": data_url(image), "detail": "auto"}));
                    }
                    Value::Array(parts)
                };
                Some(json!({
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": output,
                }))
            }
            // Without its encrypted content (or for a model that does not reason) a
            // reasoning item cannot be passed back statelessly; the summary alone is
            // only for people.
            Item::Reasoning {
                summary,
                encrypted_content: Some(enc),
            } if reasoning => Some(json!({
                "type": "reasoning",
                "summary": if summary.is_empty() {
                    json!([])
                } else {
                    json!([{"type": "summary_text", "text": summary}])
                },
                "encrypted_content": enc,
            })),
            Item::Reasoning { .. } => None,
        })
        .collect()
}

/// One output item being assembled.
#[derive(Debug)]
enum Output {
    Message(String),
    Call {
        call_id: String,
        name: String,
        arguments: String,
    },
    Reasoning {
        summary: Vec<String>,
        encrypted: Option<String>,
    },
    Other,
}

/// Reads a Responses event stream into a reply. Public only as [`super::http::WireFormat::Decoder`].
#[derive(Default)]
pub struct ResponsesDecoder {
    /// By `output_index`, which orders the reply.
    outputs: BTreeMap<u64, Output>,
    usage: Usage,
    /// Why the response stopped early (`response.incomplete`), e.g. max_output_tokens.
    incomplete: Option<String>,
    budget: Budget,
}

fn at<'a>(outputs: &'a mut BTreeMap<u64, Output>, v: &Value) -> Option<&'a mut Output> {
    let i = v.get("output_index")?.as_u64()?;
    outputs.get_mut(&i)
}

impl ResponsesDecoder {
    /// Record an item from `output_item.added` (a skeleton) or `.done` (final).
    fn item(&mut self, v: &Value, done: bool, ctx: &Context) {
        let Some(i) = v.get("output_index").and_then(Value::as_u64) else {
            return;
        };
        let item = &v["item"];
        let s = |k: &str| {
            item.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let new = match item["type"].as_str().unwrap_or("") {
            "message" => Output::Message(
                item["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c.get("text").or_else(|| c.get("refusal")))
                    .filter_map(Value::as_str)
                    .collect(),
            ),
            "function_call" => Output::Call {
                call_id: if s("call_id").is_empty() {
                    s("id")
                } else {
                    s("call_id")
                },
                name: s("name"),
                arguments: s("arguments"),
            },
            "reasoning" => Output::Reasoning {
                summary: item["summary"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect(),
                encrypted: item
                    .get("encrypted_content")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            },
            _ => Output::Other,
        };
        match (self.outputs.get_mut(&i), done) {
            // The final item is authoritative, except where it is empty and deltas
            // already gave us the content (servers that skip the final copy).
            (Some(old), true) => merge(old, new, &mut self.budget),
            _ => {
                let new = within(new, &mut self.budget);
                // A call is shown as soon as it starts, by name.
                if let Output::Call {
                    call_id,
                    name,
                    arguments,
                } = &new
                {
                    (ctx.on_delta)(Delta::ToolCall {
                        call_id: call_id.as_str().into(),
                        name: name.clone(),
                        arguments: arguments.clone(),
                    });
                }
                self.outputs.insert(i, new);
            }
        }
    }
}

/// A new item's content, as much as the budget allows.
fn within(new: Output, budget: &mut Budget) -> Output {
    let mut empty = match &new {
        Output::Message(_) => Output::Message(String::new()),
        Output::Call { .. } => Output::Call {
            call_id: String::new(),
            name: String::new(),
            arguments: String::new(),
        },
        Output::Reasoning { .. } => Output::Reasoning {
            summary: Vec::new(),
            encrypted: None,
        },
        Output::Other => Output::Other,
    };
    merge(&mut empty, new, budget);
    empty
}

fn merge(old: &mut Output, new: Output, budget: &mut Budget) {
    match (&mut *old, new) {
        (Output::Message(t), Output::Message(n)) => {
            if !n.is_empty() {
                budget.replace(Part::Text, t, &n);
            }
        }
        (
            Output::Call {
                call_id,
                name,
                arguments,
            },
            Output::Call {
                call_id: c,
                name: n,
                arguments: a,
            },
        ) => {
            if !c.is_empty() {
                *call_id = c;
            }
            if !n.is_empty() {
                *name = n;
            }
            if !a.is_empty() {
                budget.replace(Part::Arguments, arguments, &a);
            }
        }
        (
            Output::Reasoning { summary, encrypted },
            Output::Reasoning {
                summary: s,
                encrypted: e,
            },
        ) => {
            if !s.is_empty() {
                let held: usize = summary.iter().map(String::len).sum();
                budget.release(Part::Reasoning, held);
                *summary = s
                    .iter()
                    .map(|p| budget.take(Part::Reasoning, p).to_string())
                    .collect();
            }
            if let Some(e) = e {
                let mut kept = encrypted.take().unwrap_or_default();
                budget.replace(Part::Reasoning, &mut kept, &e);
                // A cut encrypted copy is useless to the server: keep none.
                *encrypted = (kept.len() == e.len()).then_some(kept);
            }
        }
        (_, new) => *old = new,
    }
}

fn parse_usage(response: &Value) -> Usage {
    let u = &response["usage"];
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    Usage {
        input_tokens: n(&u["input_tokens"]),
        output_tokens: n(&u["output_tokens"]),
        cached_tokens: n(&u["input_tokens_details"]["cached_tokens"]),
    }
}

impl Decoder for ResponsesDecoder {
    fn budget(&mut self) -> &mut Budget {
        &mut self.budget
    }

    fn event(&mut self, ev: &sse::Event, ctx: &Context) -> Result<bool, Fault> {
        if ev.data.trim() == "[DONE]" {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
            Fault::transient(format!(
                "OpenAI sent a malformed event ({e}): {}",
                ev.data.chars().take(200).collect::<String>()
            ))
        })?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&ev.event)
            .to_string();
        let delta = v.get("delta").and_then(Value::as_str).unwrap_or("");
        let budget = &mut self.budget;
        match kind.as_str() {
            "response.output_item.added" => self.item(&v, false, ctx),
            "response.output_item.done" => self.item(&v, true, ctx),
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(Output::Message(t)) = at(&mut self.outputs, &v) {
                    let d = budget.append(Part::Text, t, delta);
                    if !d.is_empty() {
                        (ctx.on_delta)(Delta::Text { text: d.into() });
                    }
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(Output::Call {
                    call_id,
                    name,
                    arguments,
                }) = at(&mut self.outputs, &v)
                {
                    let d = budget.append(Part::Arguments, arguments, delta);
                    if !d.is_empty() {
                        (ctx.on_delta)(Delta::ToolCall {
                            call_id: call_id.as_str().into(),
                            name: name.clone(),
                            arguments: d.into(),
                        });
                    }
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(a) = v.get("arguments").and_then(Value::as_str) {
                    if let Some(Output::Call { arguments, .. }) = at(&mut self.outputs, &v) {
                        budget.replace(Part::Arguments, arguments, a);
                    }
                }
            }
            "response.reasoning_summary_part.added" => {
                if let Some(Output::Reasoning { summary, .. }) = at(&mut self.outputs, &v) {
                    summary.push(String::new());
                }
            }
            "response.reasoning_summary_text.delta" => {
                if let Some(Output::Reasoning { summary, .. }) = at(&mut self.outputs, &v) {
                    if summary.is_empty() {
                        summary.push(String::new());
                    }
                    if let Some(last) = summary.last_mut() {
                        budget.append(Part::Reasoning, last, delta);
                    }
                }
            }
            "response.completed" | "response.incomplete" => {
                self.usage = parse_usage(&v["response"]);
                if kind == "response.incomplete" {
                    let reason = &v["response"]["incomplete_details"]["reason"];
                    self.incomplete = Some(reason.as_str().unwrap_or("incomplete").to_string());
                }
                return Ok(true);
            }
            "response.failed" => {
                let err = ApiError::from_value(&v["response"]["error"]).unwrap_or(ApiError {
                    message: "the response failed without saying why".into(),
                    code: "server_error".into(),
                    status: None,
                });
                return Err(error::from_api_error(&err, ctx));
            }
            "error" => {
                let err = ApiError::from_event(&v, &ev.data);
                return Err(error::from_api_error(&err, ctx));
            }
            _ => {}
        }
        Ok(false)
    }

    fn finish(&mut self, complete: bool) -> Result<Reply, Fault> {
        if !complete {
            return Err(Fault::transient(
                "the stream from OpenAI ended before the response was complete",
            ));
        }
        let mut items = Vec::new();
        for (i, out) in std::mem::take(&mut self.outputs) {
            match out {
                Output::Message(text) if !text.is_empty() => items.push(Item::Assistant { text }),
                Output::Call {
                    call_id,
                    name,
                    arguments,
                } => items.push(Item::ToolCall {
                    call_id: super::tool_args::call_id_or_fresh(call_id, i).into(),
                    name,
                    arguments,
                    form: CallForm::Structured,
                }),
                Output::Reasoning { summary, encrypted } => {
                    let summary = summary
                        .iter()
                        .map(|s| s.trim())
                        .filter(|s| !s.is_empty())
                        .collect::<Vec<_>>()
                        .join("\n\n");
                    if !summary.is_empty() || encrypted.is_some() {
                        items.push(Item::Reasoning {
                            summary,
                            encrypted_content: encrypted,
                        });
                    }
                }
                _ => {}
            }
        }
        let cut_off = self.incomplete.as_deref() == Some("max_output_tokens");
        if let (true, false, Some(reason)) = (items.is_empty(), cut_off, &self.incomplete) {
            return Err(error::stopped_early("OpenAI", reason));
        }
        Ok(Reply {
            items,
            usage: self.usage,
            cut_off,
            cut: None,
            ending: Default::default(),
        })
    }
}
