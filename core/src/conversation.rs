//! The conversation's shared types and the [`Model`] trait: how the agent loop asks for
//! its next move.
//!
//! A model sees the run's instructions, the provider-neutral conversation so far
//! ([`Item`]s) and the tools it may call, and answers with assistant text and/or tool
//! calls ([`Reply`]); a reply with no tool call ends the run. The types sit at the
//! bottom of the core, beside [`crate::protocol`], so every layer (the offline analyst,
//! the providers, the store, the loop) can use them without reaching up into `model`.
//! The providers, their configuration and the built-in price table are in `model`.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

// A cut reply is said to the front ends too (a notice), so its types sit in protocol.
use crate::protocol::CallId;
pub use crate::protocol::{human, Capped, Cut};

/// One entry of the conversation; the same shape whatever provider produced it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Item {
    User {
        text: String,
    },
    Assistant {
        text: String,
    },
    /// `arguments` is the raw JSON text the model sent; it may be invalid.
    ToolCall {
        call_id: CallId,
        name: String,
        arguments: String,
        /// How the model made the call; absent in the record for a structured call.
        #[serde(default, skip_serializing_if = "CallForm::is_structured")]
        form: CallForm,
    },
    ToolOutput {
        call_id: CallId,
        output: String,
        is_error: bool,
        /// Pictures that go back to a vision model with this result: charts the call
        /// wrote to `output/`, figures it showed, or what `view_image` asked for.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImagePart>,
    },
    /// What the model said about its reasoning. `encrypted_content` is the provider's
    /// opaque copy of the reasoning (OpenAI Responses), sent back on later turns so the
    /// model keeps its chain of thought without server-side state; never shown.
    Reasoning {
        summary: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
}

/// How a model made a tool call: the app's reading of it, kept beside the call so no
/// one has to read it from the call's id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallForm {
    /// Through the provider's tool-calling interface, or a schema step the app read.
    #[default]
    Structured,
    /// Written as text in the reply and recovered by the app (the Chat Completions
    /// provider's text calls).
    Text,
}

impl CallForm {
    pub fn is_structured(&self) -> bool {
        *self == CallForm::Structured
    }
}

/// An image for the model, already scaled (at most 1568 px on the long side).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImagePart {
    /// `image/png` or `image/jpeg`.
    pub media_type: String,
    /// Base64 of the image bytes.
    pub data: String,
    /// Where it came from, e.g. `output/chart.png` or `figure 1 of call_3`.
    #[serde(default)]
    pub label: String,
}

/// Part of a reply as it streams, for the live view; the final [`Reply`] is the record.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Delta {
    /// More assistant text.
    Text { text: String },
    /// More of a tool call's JSON arguments (`name` may be empty after the first delta).
    ToolCall {
        call_id: CallId,
        name: String,
        arguments: String,
    },
    /// The provider failed transiently and is being asked again after `wait_ms`.
    Retry {
        attempt: u32,
        wait_ms: u64,
        reason: String,
    },
}

/// A tool offered to the model: a name, what it does, and a JSON Schema of its arguments.
#[derive(Clone, Debug, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// Token counts for one model call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cached_tokens += o.cached_tokens;
    }
}

/// What the loop hands to the model for one turn.
pub struct Request<'a> {
    pub instructions: &'a str,
    pub items: &'a [Item],
    /// Empty for a turn where the model must answer in words (the final summary).
    pub tools: &'a [ToolSpec],
    /// Called with each piece of the reply as it streams; may be a no-op.
    pub on_delta: &'a (dyn Fn(Delta) + Send + Sync),
    /// Whether the model may end the ask now. A model whose steps are held to a
    /// schema ([`CallMode::Schema`]) is only offered the choices this allows.
    pub answer: Answer,
    /// How many times in a row the model's last call repeated the one before it (or
    /// its reply was cut as a loop): a model stuck in a loop is sampled warmer (Chat
    /// Completions), so it can get out.
    pub repeats: u32,
}

/// What a turn may end with, from the files the task names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Answer {
    /// No named output is missing: the final answer is allowed.
    #[default]
    Open,
    /// These named outputs are missing or invalid: only a tool call is allowed.
    NotYet { missing: Vec<String> },
    /// These are still missing, and the model may say why they cannot be made.
    OrWhyNot { missing: Vec<String> },
}

/// How a named output of `path`'s kind is written from the kernel, as one line a
/// small model can follow, and the placeholder it writes (`TABLE`, `TEXT`; empty for
/// a figure, which `plt` holds). In single quotes: a 1.5B model copied
/// `to_csv("...")` into a step's JSON string, whose `"` ended the line. `None` for a
/// kind without one obvious way.
pub fn write_line(path: &str) -> Option<(String, &'static str)> {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    Some(match ext.to_ascii_lowercase().as_str() {
        "csv" => (format!("TABLE.to_csv('{path}', index=False)"), "TABLE"),
        "png" | "jpg" | "jpeg" | "svg" | "pdf" => (format!("plt.savefig('{path}')"), ""),
        // A report written as lines (`TEXT = 'a', 'b'`, a tuple: r7, r14) is joined;
        // the count `write` returns is not shown (a 1.5B model answered "1509 kWh": the
        // report's length, r17).
        "md" | "txt" => (
            format!(
                "_ = open('{path}', 'w').write(TEXT if isinstance(TEXT, str) else '\\n'.join(map(str, TEXT)))"
            ),
            "TEXT",
        ),
        "json" => (
            format!("TABLE.to_json('{path}', orient='records')"),
            "TABLE",
        ),
        "xlsx" => (format!("TABLE.to_excel('{path}', index=False)"), "TABLE"),
        "parquet" => (format!("TABLE.to_parquet('{path}')"), "TABLE"),
        _ => return None,
    })
}

/// How a model's tool calls travel (Chat Completions servers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallMode {
    /// The API's own `tools` and `tool_calls`.
    Native,
    /// Each turn is one JSON object under a JSON schema (`response_format`): a short
    /// thought, the action (a tool or the final answer) and its arguments.
    Schema,
    /// The same step object, written as text and read leniently: no tools, no schema.
    Text,
}

impl CallMode {
    pub fn name(self) -> &'static str {
        match self {
            CallMode::Native => "native",
            CallMode::Schema => "schema",
            CallMode::Text => "text",
        }
    }
}

/// How the model ended a reply that holds no call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ending {
    /// Nothing says (a native reply): its text may be an answer.
    #[default]
    Unmarked,
    /// The step said `final_answer`.
    Answer,
    /// The step said `cannot_finish`: the named outputs cannot be made; its text says why.
    CannotFinish,
}

/// A [`Request::on_delta`] that drops everything.
pub fn no_deltas(_: Delta) {}

/// The model's answer for one turn: assistant text, reasoning and tool calls, in order.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    pub items: Vec<Item>,
    pub usage: Usage,
    /// The reply stopped at the output-token limit: it is not a complete answer.
    pub cut_off: bool,
    /// The reply passed one of the app's caps (`model::caps::ReplyCaps`): what came up
    /// to the cap is kept, the rest was never read, and its calls must not run.
    pub cut: Option<Cut>,
    /// What a structured step said it was ([`CallMode::Schema`], [`CallMode::Text`]).
    pub ending: Ending,
}

impl Reply {
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.items.iter().filter_map(|i| match i {
            Item::ToolCall {
                call_id,
                name,
                arguments,
                ..
            } => Some((call_id.as_str(), name.as_str(), arguments.as_str())),
            _ => None,
        })
    }
}

/// US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input: f64,
    /// Input tokens served from the provider's prompt cache; defaults to `input`.
    #[serde(default)]
    pub cached_input: Option<f64>,
    pub output: f64,
}

impl Price {
    pub const fn new(input: f64, cached_input: f64, output: f64) -> Price {
        Price {
            input,
            cached_input: Some(cached_input),
            output,
        }
    }

    /// The cost of `usage`; `input_tokens` includes the cached ones.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_tokens.min(usage.input_tokens);
        let fresh = usage.input_tokens - cached;
        (fresh as f64 * self.input
            + cached as f64 * self.cached_input.unwrap_or(self.input)
            + usage.output_tokens as f64 * self.output)
            / 1e6
    }
}

/// How the loop asks for its next move; every model (providers, the offline analyst,
/// scripted test models) is one of these.
#[async_trait]
pub trait Model: Send {
    /// A short human name, e.g. "offline analyst (rule-based, not an LLM)".
    fn describe(&self) -> String;

    /// Prices per million tokens, when known, for the estimated cost of a run.
    fn price(&self) -> Option<Price> {
        None
    }

    /// Whether images in tool results can be sent to this model.
    fn vision(&self) -> bool {
        false
    }

    /// The model's context window in tokens, when known; the loop keeps the
    /// conversation below it by stubbing old tool outputs.
    fn context_window(&self) -> Option<u64> {
        None
    }

    /// How tool calls travel now, for a model where that is a choice, and why (a
    /// sentence for `-v` and the window). It may change after a reply.
    fn call_mode(&self) -> Option<(CallMode, String)> {
        None
    }

    /// Go on in the mode an earlier ask settled on (`why`: which ask, in words).
    fn resume_call_mode(&mut self, _mode: CallMode, _why: &str) {}

    /// The mode `auto` moved to after a reply of this model, if it moved: worth
    /// remembering for the model's next session.
    fn learned_call_mode(&self) -> Option<CallMode> {
        None
    }

    /// Whether the first turn should carry a profile of the inputs (columns, types,
    /// rows): an LLM, not the offline analyst, which inspects them itself.
    fn wants_input_profile(&self) -> bool {
        false
    }

    /// Produce the next reply. Must return promptly once `cancel` fires.
    async fn respond(
        &mut self,
        request: Request<'_>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Reply>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call and its result name their call by a typed id; the transcript line
    /// (`transcript.jsonl`) keeps the plain string it always had, so a session
    /// written before reads the same and writes back the same bytes.
    #[test]
    fn a_transcript_call_has_a_typed_id_and_the_same_line() {
        let lines = [
            r#"{"type":"tool_call","call_id":"call_1","name":"python","arguments":"{\"code\":\"1\"}"}"#,
            r#"{"type":"tool_output","call_id":"call_1","output":"1","is_error":false}"#,
        ];
        for line in lines {
            let item: Item = serde_json::from_str(line).unwrap();
            let (Item::ToolCall { call_id, .. } | Item::ToolOutput { call_id, .. }) = &item else {
                panic!("{item:?}")
            };
            assert_eq!(call_id, &CallId::from("call_1"));
            assert_eq!(serde_json::to_string(&item).unwrap(), line);
        }
    }

    /// How a call was made is a field of the record, not a prefix of its id: a call
    /// recovered from the reply's text says `"form":"text"`, a structured call (and
    /// every line written before the field existed) reads as structured.
    #[test]
    fn a_call_recovered_from_text_says_so_in_a_field() {
        let text = Item::ToolCall {
            call_id: "anything".into(),
            name: "python".into(),
            arguments: "{}".into(),
            form: CallForm::Text,
        };
        let line = serde_json::to_string(&text).unwrap();
        assert!(line.contains(r#""form":"text""#), "{line}");
        assert_eq!(serde_json::from_str::<Item>(&line).unwrap(), text);
        let old = r#"{"type":"tool_call","call_id":"text_call_1a2b3c4d_0","name":"python","arguments":"{}"}"#;
        let Item::ToolCall { form, .. } = serde_json::from_str(old).unwrap() else {
            panic!()
        };
        assert_eq!(form, CallForm::Structured);
    }
}
