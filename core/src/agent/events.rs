//! What a session reports as it goes: the command line prints these as progress
//! lines, the desktop receives them on one channel per ask. `docs/EVENTS.md`
//! documents every kind; `core/tests/fast/session.rs` pins their serialized shape.

use serde::{Deserialize, Serialize};

use crate::conversation::CallForm;
pub use crate::protocol::RunStatus;
use crate::protocol::{AskId, CallId, SessionId};
use crate::sandbox::{ExecStatus, Stream};

/// One event of a session: who, when, and what.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Event {
    pub session_id: SessionId,
    /// The ask this belongs to; `None` for session set-up (engine, image, staging).
    pub ask_id: Option<AskId>,
    /// RFC 3339, UTC, with milliseconds.
    pub at: String,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What a file in `output/` is, for choosing how to show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactKind {
    Image,
    Table,
    Markdown,
    Text,
    Other,
}

impl ArtifactKind {
    pub fn of(path: &str) -> ArtifactKind {
        let ext = path
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "png" | "jpg" | "jpeg" | "gif" | "svg" | "webp" => ArtifactKind::Image,
            "csv" | "tsv" | "xlsx" | "parquet" => ArtifactKind::Table,
            "md" | "markdown" => ArtifactKind::Markdown,
            "txt" | "log" | "json" | "html" | "py" => ArtifactKind::Text,
            _ => ArtifactKind::Other,
        }
    }
}

/// Set-up steps before code can run (they belong to the sandbox layer, which reports them).
pub use crate::sandbox::SetupStage;

/// The most refused outputs one event names; the rest are counted.
pub const MAX_REFUSED_SHOWN: usize = 20;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    Setup(SetupStage),
    /// Free text worth a line, for what no [`Notice`](crate::protocol::Notice) names
    /// (none is sent now; kept so sessions recorded before still read).
    Status {
        message: String,
    },
    /// A known condition of the session or its sandbox, typed (`notice` names which).
    Notice(crate::protocol::Notice),
    AskStarted {
        prompt: String,
        model: String,
    },
    TurnStarted {
        turn: u32,
        max_turns: u32,
    },
    /// More assistant text while the reply streams.
    TextDelta {
        text: String,
    },
    /// The assistant's complete text of one reply.
    Text {
        text: String,
    },
    /// More of a tool call's arguments while the model writes them.
    ToolCallDelta {
        call_id: CallId,
        name: String,
        arguments: String,
    },
    /// A complete tool call; `code` is the Python code or shell command (or the raw
    /// arguments if unparsable).
    ToolCall {
        call_id: CallId,
        name: String,
        code: String,
        /// `text` when the model wrote the call in its reply's text and the app
        /// recovered it; absent for a structured call.
        #[serde(default, skip_serializing_if = "CallForm::is_structured")]
        form: CallForm,
    },
    /// A call's output while it runs.
    CellOutput {
        call_id: CallId,
        stream: Stream,
        text: String,
    },
    /// A figure the cell displayed; `path` is relative to the session folder.
    CellImage {
        call_id: CallId,
        path: String,
    },
    /// A call waits for the analyst before it runs (the session's approval mode):
    /// `code` as the model wrote it, `reason` the text of its reply. Answered through
    /// the API (`App::answer_approval`); `approval_resolved` follows.
    ApprovalRequested {
        call_id: CallId,
        tool: String,
        code: String,
        reason: String,
    },
    /// How a waiting call was decided (`rejected` with the analyst's reason).
    ApprovalResolved {
        call_id: CallId,
        resolution: crate::approval::Resolution,
        reason: Option<String>,
        /// The call's tool now runs without asking for the rest of the session.
        always: bool,
    },
    /// A connection the sandbox's code made through the egress proxy (`allow:`
    /// network mode) while call `call_id` ran: let through, refused (with why), or
    /// closed (with its bytes). Reported when the call ends, before its result.
    Egress {
        call_id: CallId,
        connection: crate::egress::EgressEvent,
    },
    /// A reply without a call looked like it meant one (a call that could not be
    /// read, code in its text); it was not taken for the answer, and the model was
    /// told `reason` with how to call a tool.
    NothingRan {
        reason: String,
    },
    /// Outputs of the ask that were not brought back (a link, a device, past a cap),
    /// each with why: the first [`MAX_REFUSED_SHOWN`] of `count` (run.json keeps all).
    OutputsRefused {
        count: usize,
        refused: Vec<crate::workspace::Refused>,
    },
    /// How the model's tool calls travel ([`crate::conversation::CallMode`]): said
    /// at the start of an ask and whenever it changes (`auto` moving a local server
    /// to schema steps), with why. Kept with the ask in run.json.
    CallMode {
        mode: crate::conversation::CallMode,
        reason: String,
    },
    /// The inputs were profiled in the sandbox (columns, types, rows, missing values,
    /// the time column) and the profile put in the model's first message.
    InputsProfiled {
        tables: u32,
        duration_ms: u64,
        /// Why no profile was made (the code failed); `None` when one was.
        failed: Option<String>,
    },
    /// How a call ended, structured (not the text prepared for the model).
    CellResult {
        call_id: CallId,
        /// `None` when the call never ran (unknown tool, bad arguments).
        status: Option<ExecStatus>,
        duration_ms: u64,
        stdout: String,
        stderr: String,
        traceback: Option<String>,
        note: Option<String>,
    },
    /// A file in `output/` was created or changed by call `call_id`; `path` is
    /// relative to `output/`.
    Artifact {
        call_id: CallId,
        path: String,
        kind: ArtifactKind,
        bytes: u64,
    },
    /// After every model reply: this reply's tokens, the ask's running totals.
    Usage {
        input_tokens: u64,
        output_tokens: u64,
        cached_tokens: u64,
        total_input_tokens: u64,
        total_output_tokens: u64,
        cost_usd: Option<f64>,
    },
    /// The provider failed transiently and is asked again after `wait_ms`.
    Retry {
        attempt: u32,
        wait_ms: u64,
        reason: String,
    },
    /// An error the UI can branch on; the ask may still go on (e.g. a refused output).
    Error {
        error: crate::protocol::ErrorInfo,
    },
    AskFinished {
        status: RunStatus,
        turns: u32,
        /// The final answer, when there is one.
        answer: Option<String>,
        outputs_dir: String,
    },
}

impl Event {
    pub fn now(session_id: &str, ask_id: Option<&str>, kind: EventKind) -> Event {
        Event {
            session_id: session_id.into(),
            ask_id: ask_id.map(AskId::from),
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            kind,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::{CopyReason, StagedInput, StagingMethod};

    #[test]
    fn staged_events_group_by_method_and_reason_with_a_pinned_shape() {
        let input = |dest: &str, method, bytes, reason| StagedInput {
            dest: dest.into(),
            method,
            bytes,
            reason,
        };
        let stages = SetupStage::staged(&[
            input("a.csv", StagingMethod::BindMount, 1000, None),
            input("b.csv", StagingMethod::Copy, 10, Some(CopyReason::Small)),
            input("c.csv", StagingMethod::BindMount, 500, None),
        ]);
        let json: Vec<serde_json::Value> = stages
            .iter()
            .map(|s| {
                let e = Event::now("s", None, EventKind::Setup(s.clone()));
                let mut v = serde_json::to_value(e).unwrap();
                v.as_object_mut().unwrap().remove("at");
                v
            })
            .collect();
        assert_eq!(
            json,
            [
                serde_json::json!({"session_id": "s", "ask_id": null, "type": "setup",
                    "stage": "staged", "method": "bind_mount", "files": 2, "bytes": 1500}),
                serde_json::json!({"session_id": "s", "ask_id": null, "type": "setup",
                    "stage": "staged", "method": "copy", "files": 1, "bytes": 10,
                    "reason": "small"}),
            ]
        );
    }

    #[test]
    fn call_mode_and_profile_events_have_a_pinned_shape() {
        let shape = |kind: EventKind| {
            let mut v = serde_json::to_value(Event::now("s", Some("a"), kind)).unwrap();
            v.as_object_mut().unwrap().remove("at");
            v
        };
        assert_eq!(
            shape(EventKind::CallMode {
                mode: crate::conversation::CallMode::Schema,
                reason: "auto: the model wrote a call as text instead of a native call".into(),
            }),
            serde_json::json!({"session_id": "s", "ask_id": "a", "type": "call_mode",
                "mode": "schema", "reason": "auto: the model wrote a call as text instead of a native call"})
        );
        assert_eq!(
            shape(EventKind::InputsProfiled {
                tables: 1,
                duration_ms: 420,
                failed: None
            }),
            serde_json::json!({"session_id": "s", "ask_id": "a", "type": "inputs_profiled",
                "tables": 1, "duration_ms": 420, "failed": null})
        );
    }
}
