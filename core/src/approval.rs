//! Approvals: which of the model's calls wait for a person before they run, and the
//! pending requests with their reply channels.
//!
//! A session holds one [`Gate`]. The loop asks it for each call of a reply before any
//! of them runs; when the session's [`ApprovalMode`] (or an "always allow" for the
//! tool) lets the call through, the answer is immediate. Otherwise the request is
//! kept here, announced as an `approval_requested` event, and the ask waits until a
//! front end answers through the API ([`Gate::answer`]) or the ask is cancelled. The
//! waiting is core state, so every front end (desktop, terminal) answers the same
//! request the same way.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::protocol::CallId;

/// Which calls wait for the analyst.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalMode {
    /// Every call runs as the model wrote it.
    #[default]
    Auto,
    /// Shell calls wait for approval; Python runs.
    Shell,
    /// Every call (Python and shell) waits for approval.
    All,
}

impl ApprovalMode {
    /// Whether a call of `tool` waits in this mode (`view_image` only reads a file of
    /// the workspace, so it never waits).
    pub fn asks_for(self, tool: &str) -> bool {
        match self {
            ApprovalMode::Auto => false,
            ApprovalMode::Shell => tool == "shell",
            ApprovalMode::All => tool == "shell" || tool == "python",
        }
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ApprovalMode::Auto => "auto",
            ApprovalMode::Shell => "shell",
            ApprovalMode::All => "all",
        })
    }
}

impl FromStr for ApprovalMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(ApprovalMode::Auto),
            "shell" => Ok(ApprovalMode::Shell),
            "all" => Ok(ApprovalMode::All),
            other => Err(format!(
                "unknown approval mode {other:?}: use auto (every call runs), shell (ask before shell calls) or all (ask before every call)"
            )),
        }
    }
}

/// A call waiting for the analyst, as the loop asks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingCall {
    pub call_id: CallId,
    /// `python` or `shell`.
    pub tool: String,
    /// The code or command as the model wrote it.
    pub code: String,
    /// Why the model wants it: the text of its reply, as it wrote it.
    pub reason: String,
}

/// What the analyst decided for one call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Run it as the model wrote it.
    Approve,
    /// Run this code instead (the model is told it was edited).
    Edit { code: String },
    /// Do not run it; the model receives the reason as the call's result.
    Reject { reason: String },
}

/// The analyst's answer to a pending call: the decision, and whether calls of this
/// tool run without asking for the rest of the session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    #[serde(flatten)]
    pub decision: Decision,
    #[serde(default)]
    pub always: bool,
}

impl Answer {
    pub fn approve() -> Answer {
        Answer {
            decision: Decision::Approve,
            always: false,
        }
    }
}

/// How a call's approval ended, as the session keeps it (run.json) and the events
/// say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// Ran without asking: the mode or an "always allow" let it through.
    Allowed,
    Approved,
    Edited,
    Rejected,
}

impl Resolution {
    /// As run.json and the events spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Allowed => "allowed",
            Resolution::Approved => "approved",
            Resolution::Edited => "edited",
            Resolution::Rejected => "rejected",
        }
    }
}

/// One call's approval, kept with its ask.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub call_id: CallId,
    pub tool: String,
    pub resolution: Resolution,
    /// The analyst's reason for a rejection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The analyst chose to let the call's tool run without asking for the rest of
    /// the session.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub always: bool,
}

/// Answering a call that is not waiting.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    #[error("no call {call_id} is waiting for approval (it was answered, or its ask ended)")]
    NotPending { call_id: String },
    #[error("an edited call needs code to run")]
    EmptyEdit,
}

/// A session's "always allow" tools and the calls waiting now (the mode is the
/// session's setting, passed in: it may change between asks).
#[derive(Default)]
pub struct Gate {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    always: BTreeSet<String>,
    pending: HashMap<String, (String, oneshot::Sender<Answer>)>,
}

impl Gate {
    /// The tools the analyst chose to always allow in this session.
    pub fn always_allowed(&self) -> Vec<String> {
        self.state.lock().unwrap().always.iter().cloned().collect()
    }

    /// `None` when a call of `tool` runs without asking; else the receiver its
    /// answer arrives on (the request is pending until answered or dropped).
    pub fn wait_for(
        &self,
        mode: ApprovalMode,
        call_id: &str,
        tool: &str,
    ) -> Option<oneshot::Receiver<Answer>> {
        let mut s = self.state.lock().unwrap();
        if !mode.asks_for(tool) || s.always.contains(tool) {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        s.pending
            .insert(call_id.to_string(), (tool.to_string(), tx));
        Some(rx)
    }

    /// Give up on a pending request (its ask was cancelled).
    pub fn withdraw(&self, call_id: &str) {
        self.state.lock().unwrap().pending.remove(call_id);
    }

    /// The ids of the calls waiting now.
    pub fn pending(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.state.lock().unwrap().pending.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Answer a pending call. An edit must carry code; "always" allows the call's
    /// tool for the rest of the session (a rejection never does).
    pub fn answer(&self, call_id: &str, answer: Answer) -> Result<(), AnswerError> {
        if matches!(&answer.decision, Decision::Edit { code } if code.trim().is_empty()) {
            return Err(AnswerError::EmptyEdit);
        }
        let mut s = self.state.lock().unwrap();
        let Some((tool, tx)) = s.pending.remove(call_id) else {
            return Err(AnswerError::NotPending {
                call_id: call_id.to_string(),
            });
        };
        if answer.always && !matches!(answer.decision, Decision::Reject { .. }) {
            s.always.insert(tool);
        }
        // The ask may have ended meanwhile: then nobody waits and nothing runs.
        tx.send(answer).map_err(|_| AnswerError::NotPending {
            call_id: call_id.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_say_which_tools_wait() {
        assert_eq!("Shell".parse::<ApprovalMode>(), Ok(ApprovalMode::Shell));
        assert!("sometimes"
            .parse::<ApprovalMode>()
            .unwrap_err()
            .contains("auto"));
        assert!(!ApprovalMode::Auto.asks_for("shell"));
        assert!(ApprovalMode::Shell.asks_for("shell"));
        assert!(!ApprovalMode::Shell.asks_for("python"));
        assert!(ApprovalMode::All.asks_for("python"));
        assert!(!ApprovalMode::All.asks_for("view_image"));
    }

    #[tokio::test]
    async fn an_answer_reaches_the_waiting_call_and_always_allows_its_tool() {
        let (gate, all) = (Gate::default(), ApprovalMode::All);
        assert!(gate.wait_for(all, "c1", "view_image").is_none());
        let rx = gate.wait_for(all, "c1", "python").unwrap();
        assert_eq!(gate.pending(), ["c1"]);
        let edit = Answer {
            decision: Decision::Edit {
                code: "print(2)".into(),
            },
            always: true,
        };
        gate.answer("c1", edit.clone()).unwrap();
        assert_eq!(rx.await.unwrap(), edit);
        assert!(gate.pending().is_empty());
        // Python now runs without asking; shell still asks.
        assert!(gate.wait_for(all, "c2", "python").is_none());
        assert!(gate.wait_for(all, "c3", "shell").is_some());
        assert_eq!(gate.always_allowed(), ["python"]);
    }

    #[test]
    fn answers_to_no_pending_call_or_empty_edits_are_refused() {
        let (gate, all) = (Gate::default(), ApprovalMode::All);
        assert_eq!(
            gate.answer("nope", Answer::approve()),
            Err(AnswerError::NotPending {
                call_id: "nope".into()
            })
        );
        let _rx = gate.wait_for(all, "c1", "shell").unwrap();
        let empty = Answer {
            decision: Decision::Edit { code: " ".into() },
            always: false,
        };
        assert_eq!(gate.answer("c1", empty), Err(AnswerError::EmptyEdit));
        // A rejection with "always" does not allow the tool.
        let reject = Answer {
            decision: Decision::Reject {
                reason: "no".into(),
            },
            always: true,
        };
        gate.answer("c1", reject).unwrap();
        assert!(gate.wait_for(all, "c2", "shell").is_some());
    }

    #[test]
    fn the_answer_shape_is_pinned() {
        let a: Answer =
            serde_json::from_value(serde_json::json!({"decision": "reject", "reason": "too wide"}))
                .unwrap();
        assert_eq!(
            a.decision,
            Decision::Reject {
                reason: "too wide".into()
            }
        );
        assert_eq!(
            serde_json::to_value(Answer {
                decision: Decision::Edit { code: "1".into() },
                always: true
            })
            .unwrap(),
            serde_json::json!({"decision": "edit", "code": "1", "always": true})
        );
    }

    /// A kept approval's call id is typed, and run.json keeps it as the plain string
    /// it always was (an earlier session's file reads the same).
    #[test]
    fn a_kept_approval_names_its_call_by_a_typed_id_stored_as_a_string() {
        let on_disk = serde_json::json!({"call_id": "call_7", "tool": "shell", "resolution": "rejected", "reason": "no"});
        let record: Record = serde_json::from_value(on_disk.clone()).unwrap();
        assert_eq!(record.call_id, CallId::from("call_7"));
        assert_eq!(serde_json::to_value(&record).unwrap(), on_disk);
        let pending = PendingCall {
            call_id: record.call_id.clone(),
            tool: record.tool.clone(),
            code: "ls".into(),
            reason: String::new(),
        };
        assert_eq!(pending.call_id, "call_7");
    }
}
