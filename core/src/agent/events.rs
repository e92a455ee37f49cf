//! What a run reports as it goes: the command line prints these as progress lines,
//! the desktop receives them as events.

use serde::{Deserialize, Serialize};

use crate::sandbox::ExecStatus;

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunStatus {
    /// The model gave its final answer.
    Finished,
    /// The turn limit was reached before a final answer.
    MaxTurns {
        turns: u32,
    },
    /// The wall-time limit was reached.
    TimeLimit {
        seconds: u64,
    },
    Cancelled,
    /// Something outside the model's control failed (provider, sandbox, disk).
    Failed {
        message: String,
    },
    /// The app stopped in the middle of the run (found at a later start).
    Interrupted,
}

impl RunStatus {
    pub fn is_success(&self) -> bool {
        matches!(self, RunStatus::Finished)
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunStatus::Finished => write!(f, "finished"),
            RunStatus::MaxTurns { turns } => {
                write!(f, "stopped: reached the limit of {turns} turns")
            }
            RunStatus::TimeLimit { seconds } => {
                write!(f, "stopped: reached the time limit of {seconds} s")
            }
            RunStatus::Cancelled => write!(f, "cancelled"),
            RunStatus::Failed { message } => write!(f, "failed: {message}"),
            RunStatus::Interrupted => write!(f, "interrupted: the app stopped during the run"),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    /// Set-up and tear-down progress (image build, staging, collecting).
    Status {
        message: String,
    },
    RunStarted {
        run_id: String,
        model: String,
        run_dir: String,
    },
    TurnStarted {
        turn: u32,
        max_turns: u32,
    },
    AssistantText {
        text: String,
    },
    /// `code` is the Python code or shell command, or the raw arguments if unparsable.
    ToolCall {
        call_id: String,
        name: String,
        code: String,
    },
    ToolOutput {
        call_id: String,
        status: Option<ExecStatus>,
        output: String,
    },
    ArtifactWritten {
        path: String,
        bytes: u64,
    },
    RunFinished {
        status: RunStatus,
        outputs_dir: Option<String>,
    },
}
