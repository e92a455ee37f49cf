//! The shared types at the bottom of the core: how an ask ended ([`RunStatus`]), the
//! typed errors every front end branches on ([`SessionError`], with a stable code, and
//! [`ErrorInfo`] as it travels in an event), how a tool call's code is read out of its
//! arguments, how the app's own words to the model are marked, and the offline
//! analyst's machine lines ([`machine_lines`]), kept out of what a person sees. This
//! module uses nothing else of the crate, so every layer can use it without a circle.

use serde::{Deserialize, Serialize};

pub mod input_notes;
pub mod machine_lines;

pub use input_notes::{EntryProblem, FileKind, Include, InputNote, LinkProblem};

/// How an ask ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunStatus {
    /// The model gave its final answer.
    Finished,
    /// The turn limit was reached before a final answer. `missing`: the outputs the
    /// task named that were not made (or not what they should be) when it stopped.
    MaxTurns {
        turns: u32,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        missing: Vec<OutputProblem>,
    },
    /// The wall-time limit was reached.
    TimeLimit {
        seconds: u64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        missing: Vec<OutputProblem>,
    },
    /// The ask's cost budget was spent.
    CostLimit {
        usd: f64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        missing: Vec<OutputProblem>,
    },
    Cancelled,
    /// Something outside the model's control failed (provider, sandbox, disk).
    Failed {
        message: String,
    },
    /// The app stopped in the middle of the run (found at a later start).
    Interrupted,
    /// The model answered, but output files the task named are missing, empty or not
    /// what their names say (a PNG that does not decode, a CSV with no rows).
    Incomplete {
        problems: Vec<OutputProblem>,
    },
}

/// "; not made: output/a.png does not exist; ..." after a limit's sentence.
fn not_made(f: &mut std::fmt::Formatter<'_>, missing: &[OutputProblem]) -> std::fmt::Result {
    if missing.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = missing.iter().map(ToString::to_string).collect();
    write!(f, "; not made: {}", list.join("; "))
}

impl RunStatus {
    /// The limit's status with the outputs it left unmade; other statuses unchanged.
    pub fn with_missing(mut self, problems: Vec<OutputProblem>) -> RunStatus {
        if let RunStatus::MaxTurns { missing, .. }
        | RunStatus::TimeLimit { missing, .. }
        | RunStatus::CostLimit { missing, .. } = &mut self
        {
            *missing = problems;
        }
        self
    }
}

/// A named output that is not there or not what it should be.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputProblem {
    /// As the task names it, e.g. `output/chart.png`.
    pub path: String,
    /// What is wrong, a phrase after the name: "does not exist", "is empty (0 bytes)".
    pub problem: String,
}

impl std::fmt::Display for OutputProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.path, self.problem)
    }
}

impl RunStatus {
    pub fn is_success(&self) -> bool {
        matches!(self, RunStatus::Finished)
    }

    /// The status's stable name, as serde tags it (`finished`, `incomplete`,
    /// `max_turns`, ...): what a script branches on, where the Display is a sentence.
    pub fn code(&self) -> &'static str {
        match self {
            RunStatus::Finished => "finished",
            RunStatus::MaxTurns { .. } => "max_turns",
            RunStatus::TimeLimit { .. } => "time_limit",
            RunStatus::CostLimit { .. } => "cost_limit",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Failed { .. } => "failed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Incomplete { .. } => "incomplete",
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunStatus::Finished => write!(f, "finished"),
            RunStatus::MaxTurns { turns, missing } => {
                write!(f, "stopped: reached the limit of {turns} turns")?;
                not_made(f, missing)
            }
            RunStatus::TimeLimit { seconds, missing } => {
                write!(f, "stopped: reached the time limit of {seconds} s")?;
                not_made(f, missing)
            }
            RunStatus::CostLimit { usd, missing } => {
                write!(f, "stopped: reached the cost budget of ${usd:.2}")?;
                not_made(f, missing)
            }
            RunStatus::Cancelled => write!(f, "cancelled"),
            RunStatus::Failed { message } => write!(f, "failed: {message}"),
            RunStatus::Interrupted => write!(f, "interrupted: the app stopped during the run"),
            RunStatus::Incomplete { problems } => {
                let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
                write!(f, "incomplete: {}", list.join("; "))
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SessionError {
    #[error("an ask is already running in this session; wait for it to end or stop it")]
    Busy,
    /// Another process owns the session (holds its lock) and may be writing it; it can
    /// still be read. `owner` says which process, e.g. "sandalyst ask, pid 1234 on
    /// laptop, since 13:05 UTC".
    #[error(
        "session {id} is in use by {owner}; try again when it is done (it can still be viewed)"
    )]
    SessionBusy { id: String, owner: String },
    #[error("the prompt is empty; say what you want done with the files")]
    EmptyPrompt,
    #[error("no session with id {id:?}")]
    NotFound { id: String },
    /// A file that cannot be staged, a name used twice, a folder that cannot be written.
    #[error("{message}")]
    BadInput { message: String },
    /// No container engine answers; `message` says where it looked and how to start one.
    #[error("{message}")]
    EngineUnavailable { message: String },
    /// The sandbox image is missing and could not be built.
    #[error("{message}")]
    ImageMissing { message: String },
    /// The image is there but cannot host the sandbox (no python3, no IPython).
    #[error("{message}")]
    ImageUnusable { message: String },
    /// The sandbox failed to start or stopped working.
    #[error("{message}")]
    Sandbox { message: String },
    /// The provider refused the API key.
    #[error("{message}")]
    ModelAuth { message: String },
    /// The conversation no longer fits the model's context window.
    #[error("{message}")]
    ContextTooLong { message: String },
    /// Any other failure of the model's provider.
    #[error("{message}")]
    Model { message: String },
    /// The session folder could not be read or written.
    #[error("{message}")]
    Storage { message: String },
    /// A re-run stopped at a recorded cell that failed on the new data; the session
    /// can be continued with a model from there.
    #[error("{message}")]
    ReplayFailed { message: String },
    /// A failure no type names (not the model's, the sandbox's or the disk's, as far
    /// as anything says): reported as what it is, never as one of those.
    #[error("{message}")]
    Internal { message: String },
}

/// The stable code of an error: what a front end branches on, never the words.
/// Serialized as these snake_case strings, which the page reads:
///
/// - `busy`: an ask already runs in this session
/// - `session_busy`: another process owns the session
/// - `empty_prompt`, `not_found`, `bad_input`
/// - `engine_unavailable`, `image_missing`, `image_unusable`, `sandbox`
/// - `model_auth`, `context_too_long`, `model`
/// - `storage`: the session folder could not be read or written
/// - `replay_failed`: a re-run stopped at a recorded cell
/// - `cancelled`: the user stopped it
/// - `refused_path`: a path from the page that is not a file of the session
/// - `not_pending`: an answer to a call that does not wait
/// - `internal`: a failure no type names (older versions said unknown)
///
/// The list is tested against the enum both ways.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    Busy,
    SessionBusy,
    EmptyPrompt,
    NotFound,
    BadInput,
    EngineUnavailable,
    ImageMissing,
    ImageUnusable,
    Sandbox,
    ModelAuth,
    ContextTooLong,
    Model,
    Storage,
    ReplayFailed,
    Cancelled,
    RefusedPath,
    NotPending,
    /// Also what any code this version does not know reads as.
    #[serde(other)]
    Internal,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 18] = [
        ErrorCode::Busy,
        ErrorCode::SessionBusy,
        ErrorCode::EmptyPrompt,
        ErrorCode::NotFound,
        ErrorCode::BadInput,
        ErrorCode::EngineUnavailable,
        ErrorCode::ImageMissing,
        ErrorCode::ImageUnusable,
        ErrorCode::Sandbox,
        ErrorCode::ModelAuth,
        ErrorCode::ContextTooLong,
        ErrorCode::Model,
        ErrorCode::Storage,
        ErrorCode::ReplayFailed,
        ErrorCode::Cancelled,
        ErrorCode::RefusedPath,
        ErrorCode::NotPending,
        ErrorCode::Internal,
    ];

    /// The code as it is serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Busy => "busy",
            ErrorCode::SessionBusy => "session_busy",
            ErrorCode::EmptyPrompt => "empty_prompt",
            ErrorCode::NotFound => "not_found",
            ErrorCode::BadInput => "bad_input",
            ErrorCode::EngineUnavailable => "engine_unavailable",
            ErrorCode::ImageMissing => "image_missing",
            ErrorCode::ImageUnusable => "image_unusable",
            ErrorCode::Sandbox => "sandbox",
            ErrorCode::ModelAuth => "model_auth",
            ErrorCode::ContextTooLong => "context_too_long",
            ErrorCode::Model => "model",
            ErrorCode::Storage => "storage",
            ErrorCode::ReplayFailed => "replay_failed",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::RefusedPath => "refused_path",
            ErrorCode::NotPending => "not_pending",
            ErrorCode::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

/// A [`SessionError`] as it travels in an event: a stable code and the sentence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorInfo {
    pub code: ErrorCode,
    pub message: String,
}

impl SessionError {
    pub fn code(&self) -> ErrorCode {
        match self {
            SessionError::Busy => ErrorCode::Busy,
            SessionError::SessionBusy { .. } => ErrorCode::SessionBusy,
            SessionError::EmptyPrompt => ErrorCode::EmptyPrompt,
            SessionError::NotFound { .. } => ErrorCode::NotFound,
            SessionError::BadInput { .. } => ErrorCode::BadInput,
            SessionError::EngineUnavailable { .. } => ErrorCode::EngineUnavailable,
            SessionError::ImageMissing { .. } => ErrorCode::ImageMissing,
            SessionError::ImageUnusable { .. } => ErrorCode::ImageUnusable,
            SessionError::Sandbox { .. } => ErrorCode::Sandbox,
            SessionError::ModelAuth { .. } => ErrorCode::ModelAuth,
            SessionError::ContextTooLong { .. } => ErrorCode::ContextTooLong,
            SessionError::Model { .. } => ErrorCode::Model,
            SessionError::Storage { .. } => ErrorCode::Storage,
            SessionError::ReplayFailed { .. } => ErrorCode::ReplayFailed,
            SessionError::Internal { .. } => ErrorCode::Internal,
        }
    }

    pub fn info(&self) -> ErrorInfo {
        ErrorInfo {
            code: self.code(),
            message: self.to_string(),
        }
    }

    pub fn storage(e: anyhow::Error) -> SessionError {
        SessionError::Storage {
            message: storage_message(&e),
        }
    }

    pub fn bad_input(e: anyhow::Error) -> SessionError {
        SessionError::BadInput {
            message: format!("{e:#}"),
        }
    }
}

/// True when the disk (or the user's quota) ran out somewhere in `e`'s chain, told
/// by the operating system's error kind, not by the message.
pub fn disk_full(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| {
            matches!(
                io.kind(),
                std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
            )
        })
    })
}

/// A storage failure's sentence; a full disk says so first, since that is what the
/// user must fix.
pub fn storage_message(e: &anyhow::Error) -> String {
    if disk_full(e) {
        format!("the disk is full (nothing already saved was lost): {e:#}")
    } else {
        format!("{e:#}")
    }
}

impl Serialize for SessionError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.info().serialize(s)
    }
}

/// An id that travels as a plain string (serde-transparent, so the wire keeps its
/// shape) but is its own type in the core's API, so a session id is never passed
/// where a call id is meant. It reads as a `&str` where one is taken.
macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<std::path::Path> for $name {
            fn as_ref(&self) -> &std::path::Path {
                self.0.as_ref()
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(s.to_string())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }
    };
}

string_id!(
    /// A session's id: its folder's name (`20261205-013448-7ac4`).
    SessionId
);
string_id!(
    /// An ask's id within its session (`ask-3`).
    AskId
);
string_id!(
    /// A tool call's id, as the model (or the app, for its own cells) named it.
    CallId
);

/// A known condition of a session or its sandbox, typed so a front end can branch on
/// it (the `notice` event; `docs/EVENTS.md`); what it says as a line is its
/// [`Display`](std::fmt::Display). Free text stays a `status` event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "notice", rename_all = "snake_case")]
pub enum Notice {
    /// The workspace archive of this ask was not written (the session's earlier one,
    /// if any, stays); `disk_full` when the data folder's disk is full.
    ArchiveNotKept { reason: String, disk_full: bool },
    /// Outputs from before the ask that the sandbox no longer had were carried into
    /// the new outputs: the first [`NOTICE_PATHS_SHOWN`] of `count`.
    EarlierOutputsKept { count: usize, paths: Vec<String> },
    /// An earlier output was replaced: the code made a folder of that name.
    EarlierOutputReplaced { path: String },
    /// The transcript's last line, cut by an earlier crash, was set aside.
    TranscriptRepaired { bytes: u64, set_aside: String },
    /// Inputs whose originals are gone could not be staged again.
    InputsNotRestaged { inputs: Vec<GoneInput> },
    /// A mounted input changed on the user's disk during the session.
    InputChanged { name: String, bytes: u64 },
    /// The ask has no ending recorded: it runs in another process (a terminal).
    RunningElsewhere,
    /// The model's reply passed a cap (`what`, at `cap` bytes) or fell into a loop
    /// (`repetition`, `cap` the length of the stretch): the rest was not read, its
    /// calls did not run, and the model is told.
    ReplyCut { what: Capped, cap: usize },
    /// A local model's view of the ask started again after the app's first cell
    /// (`attempt` 2 or 3): `stale_turns` turns had written none of the missing named
    /// outputs. The transcript keeps every turn; the files and the kernel stay.
    FreshStart { attempt: u32, stale_turns: u32 },
    /// A call changed more files in `output/` than get an event each; these `count`
    /// are collected when the ask ends.
    MoreOutputsChanged { count: usize },
    /// A figure the call `call_id` drew could not be kept in the session's folder.
    FigureNotKept { call_id: CallId, reason: String },
    /// A note about a dropped folder's entries, one event each (`kind` names it: a
    /// link followed, a link or an entry left out; [`InputNote`]).
    InputNote(InputNote),
    /// The sandbox did not close cleanly (`reason`); what is left of it (a container
    /// the engine would not remove) is taken as a leftover by a later start.
    SandboxNotClosed { reason: String },
    /// A new sandbox's workspace did not come back as the last ask left it: its
    /// archive was older, could not be restored or read, or was missing (`archive`);
    /// `outputs` files of `output/` were put back from the app's copy, or could not be
    /// (`not_put_back`: why; the app still has them).
    WorkspaceRecovered {
        #[serde(flatten)]
        archive: ArchiveProblem,
        outputs: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        not_put_back: Option<String>,
    },
}

/// Why a workspace was not restored whole from its archive (`archive` on the wire).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "archive", rename_all = "snake_case")]
pub enum ArchiveProblem {
    /// Restored, but older than the session's last outputs: the newer ones are put
    /// back from the app's copy.
    Older,
    /// Restoring it failed; input/ was staged again.
    NotRestored { reason: String },
    /// It could not be read (cut short, say); input/ was staged again.
    Unreadable { reason: String },
    /// It was not there; input/ was staged again.
    Missing,
}

/// An input of a session whose original file is gone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoneInput {
    /// As staged: `input/NAME`'s NAME.
    pub name: String,
    /// Where the original was.
    pub original: String,
}

/// The most paths one notice names; the rest are counted.
pub const NOTICE_PATHS_SHOWN: usize = 10;

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::ArchiveNotKept { reason, .. } => {
                write!(f, "workspace archive not kept: {reason}")
            }
            Notice::EarlierOutputsKept { count, paths } => {
                let more = if *count > paths.len() { ", ..." } else { "" };
                write!(
                    f,
                    "kept {count} earlier output(s) the sandbox did not have: {}{more}",
                    paths.join(", ")
                )
            }
            Notice::EarlierOutputReplaced { path } => write!(
                f,
                "the earlier output {path} was replaced: the code made a folder of that name"
            ),
            Notice::TranscriptRepaired { bytes, set_aside } => write!(
                f,
                "the last line of this session's transcript was cut short by an earlier crash; its {bytes} bytes were set aside in {set_aside} and the conversation goes on from the line before"
            ),
            Notice::InputsNotRestaged { inputs } => {
                let list: Vec<String> = inputs
                    .iter()
                    .map(|g| format!("input/{} (its original {} is gone)", g.name, g.original))
                    .collect();
                write!(
                    f,
                    "{} input file(s) could not be staged again: {}",
                    inputs.len(),
                    list.join(", ")
                )
            }
            Notice::InputChanged { name, bytes } => write!(
                f,
                "input/{name} changed on the user's disk during the session (it is mounted, not copied); it now has {bytes} bytes"
            ),
            Notice::RunningElsewhere => f.write_str(
                "This ask is running in another process (a terminal, say); open the session again to see how it ends.",
            ),
            Notice::ReplyCut { what, cap } => {
                let cut = Cut {
                    what: *what,
                    cap: *cap,
                };
                let limit = if *what == Capped::Repetition {
                    ""
                } else {
                    ", the most Sandalyst reads of one reply"
                };
                write!(
                    f,
                    "the model's reply was cut: {}{limit}; the rest was not read, and the model is told",
                    cut.describe()
                )
            }
            Notice::FreshStart {
                attempt,
                stale_turns,
            } => write!(
                f,
                "{stale_turns} turns wrote none of the missing files: the model starts afresh (attempt {attempt}), its earlier cells of this ask out of its view; the files and the kernel stay"
            ),
            Notice::MoreOutputsChanged { count } => write!(
                f,
                "{count} more files changed in output/; they are collected when the ask ends"
            ),
            Notice::FigureNotKept { call_id, reason } => {
                write!(f, "a figure of {call_id} was not kept: {reason}")
            }
            Notice::InputNote(note) => note.fmt(f),
            Notice::SandboxNotClosed { reason } => write!(
                f,
                "the sandbox did not close cleanly ({reason}); a later start removes what is left of it"
            ),
            Notice::WorkspaceRecovered {
                archive,
                outputs: n,
                not_put_back,
            } => {
                let why = match archive {
                    ArchiveProblem::Older => {
                        return match not_put_back {
                            None => write!(
                                f,
                                "the workspace was restored from its archive, which is older than the session's last outputs: {n} file(s) of output/ were brought up to date from the app's copy; other files written since that archive are gone"
                            ),
                            Some(e) => write!(
                                f,
                                "the workspace was restored from its archive, which is older than the session's last outputs, and the {n} newer file(s) of output/ could not be put back ({e}); the app still has them"
                            ),
                        }
                    }
                    ArchiveProblem::NotRestored { reason } => {
                        format!("the workspace archive could not be restored ({reason})")
                    }
                    ArchiveProblem::Unreadable { reason } => {
                        format!("the workspace archive could not be read ({reason})")
                    }
                    ArchiveProblem::Missing => "the workspace archive was missing".to_string(),
                };
                match not_put_back {
                    None => write!(
                        f,
                        "{why}; input/ was staged again from the user's files and output/ restored from the app's copy ({n} file{}); files written elsewhere in the workspace are gone",
                        if *n == 1 { "" } else { "s" }
                    ),
                    Some(e) => write!(
                        f,
                        "{why}; input/ was staged again from the user's files, but the {n} file(s) of output/ could not be put back ({e}); the app still has them; files written elsewhere in the workspace are gone"
                    ),
                }
            }
        }
    }
}

/// What passed its cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capped {
    Text,
    Reasoning,
    Arguments,
    /// One SSE event (a line without end, say).
    Event,
    /// The text fell into a loop, the same stretch over and over (a small model at a
    /// high temperature); the cut's `cap` is the length of the stretch, in bytes.
    Repetition,
}

/// Why a reply was cut: what passed its cap, and the cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cut {
    pub what: Capped,
    pub cap: usize,
}

impl Cut {
    /// "its text passed 1.0 MiB", for sentences about the reply.
    pub fn describe(&self) -> String {
        if self.what == Capped::Repetition {
            return format!(
                "its text kept repeating the same {} over and over",
                human(self.cap).replace("bytes", "characters")
            );
        }
        let what = match self.what {
            Capped::Text => "its text",
            Capped::Reasoning => "its reasoning",
            Capped::Arguments => "its tool-call arguments",
            Capped::Event => "one event of the stream",
            Capped::Repetition => unreachable!("described above"),
        };
        format!("{what} passed {}", human(self.cap))
    }
}

/// A size in words: "1.0 MiB", "64 KiB", "900 bytes".
pub fn human(n: usize) -> String {
    const KIB: usize = 1 << 10;
    const MIB: usize = 1 << 20;
    match n {
        n if n >= MIB => format!("{:.1} MiB", n as f64 / MIB as f64),
        n if n >= KIB => format!("{} KiB", n / KIB),
        n => format!("{n} bytes"),
    }
}

/// Which links inside a dropped folder are followed (a link dropped itself always
/// is): a setting of the config file and of sessions, used by `workspace` when it stages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FollowLinks {
    /// Only links whose target is inside the folder.
    #[default]
    Inside,
    /// Also links to readable files and folders outside it (`follow_links =
    /// "outside"` in the config file, or the desktop's settings).
    Outside,
}

/// The argument of each tool that holds what the call runs or looks at: the tools'
/// schemas, the parsing of calls, their display, reruns and exports name them here.
pub mod tool_arg {
    /// `python`: the source to run.
    pub const CODE: &str = "code";
    /// `shell`: the command line.
    pub const COMMAND: &str = "command";
    /// `view_image`: the file, relative to `/workspace`.
    pub const PATH: &str = "path";
}

/// The call id of the app's own first cell of an ask (the inputs loaded before the
/// model's first turn): a call in the history that the model did not make.
pub const PRELUDE_CALL_ID: &str = "app-load-inputs";

/// The code or command inside a call's arguments, for display; the raw text if unparsable.
pub fn tool_source(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| {
            [tool_arg::CODE, tool_arg::COMMAND, tool_arg::PATH]
                .iter()
                .find_map(|k| v.get(k).and_then(|s| s.as_str()).map(str::to_owned))
        })
        .unwrap_or_else(|| arguments.to_string())
}

/// The line a text file ends with when the app wrote it from a model's reply cut at
/// its length limit (as far as it went). Such a file is not done: the output check
/// says so, and the task's checklist asks for it again.
pub const TEXT_CUT: &str =
    "(The rest of this report was cut: the model's reply reached its length limit.)";

/// Marks the app's own words to the model in a user turn (notes, reminders, the last
/// call for an answer), so they are never taken for the user's request.
pub const APP_NOTE: &str = "[from the app]";

/// `text` as the app's note to the model.
pub fn app_note(text: &str) -> String {
    format!("{APP_NOTE} {text}")
}

/// A user turn that is (or starts with) the app's note, not the user's words.
pub fn is_app_note(text: &str) -> bool {
    text.starts_with(APP_NOTE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Typed ids keep the wire as it was: a plain string each way.
    #[test]
    fn ids_travel_as_plain_strings() {
        let id = SessionId::from("20261205-013448-7ac4");
        assert_eq!(
            serde_json::to_value(&id).unwrap(),
            serde_json::json!("20261205-013448-7ac4")
        );
        let call: CallId = serde_json::from_value(serde_json::json!("call_1")).unwrap();
        assert_eq!(call, "call_1");
        assert_eq!(call.to_string(), "call_1");
        let ask: AskId = serde_json::from_str("\"ask-3\"").unwrap();
        assert_eq!(String::from(ask), "ask-3");
        // A map keyed by the text finds an id (Borrow<str>).
        let m: std::collections::HashMap<String, u8> = [("call_1".to_string(), 1)].into();
        assert_eq!(m.get(call.as_str()), Some(&1));
    }

    #[test]
    fn a_notice_names_itself_for_the_page_and_reads_as_a_line() {
        let n = Notice::EarlierOutputsKept {
            count: 12,
            paths: vec!["a.csv".into(), "b.png".into()],
        };
        let json = serde_json::to_value(&n).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"notice": "earlier_outputs_kept", "count": 12, "paths": ["a.csv", "b.png"]})
        );
        assert_eq!(serde_json::from_value::<Notice>(json).unwrap(), n);
        assert_eq!(
            n.to_string(),
            "kept 12 earlier output(s) the sandbox did not have: a.csv, b.png, ..."
        );
        let gone = Notice::InputsNotRestaged {
            inputs: vec![GoneInput {
                name: "energy.csv".into(),
                original: "/home/a/energy.csv".into(),
            }],
        };
        assert_eq!(
            gone.to_string(),
            "1 input file(s) could not be staged again: input/energy.csv (its original /home/a/energy.csv is gone)"
        );
        assert_eq!(
            serde_json::to_value(Notice::RunningElsewhere).unwrap(),
            serde_json::json!({"notice": "running_elsewhere"})
        );
    }

    /// What the session said as prose when a sandbox would not close or a workspace
    /// came back unlike the last ask left it is typed: the page reads its fields, the
    /// command line and the model its line.
    #[test]
    fn a_sandbox_not_closed_and_a_recovered_workspace_are_notices_with_fields() {
        let cases = [
            (
                Notice::SandboxNotClosed {
                    reason: "engine gone".into(),
                },
                serde_json::json!({"notice": "sandbox_not_closed", "reason": "engine gone"}),
                "the sandbox did not close cleanly (engine gone); a later start removes what is left of it",
            ),
            (
                Notice::WorkspaceRecovered {
                    archive: ArchiveProblem::Older,
                    outputs: 2,
                    not_put_back: None,
                },
                serde_json::json!({"notice": "workspace_recovered", "archive": "older", "outputs": 2}),
                "the workspace was restored from its archive, which is older than the session's last outputs: 2 file(s) of output/ were brought up to date from the app's copy; other files written since that archive are gone",
            ),
            (
                Notice::WorkspaceRecovered {
                    archive: ArchiveProblem::Older,
                    outputs: 2,
                    not_put_back: Some("disk full".into()),
                },
                serde_json::json!({"notice": "workspace_recovered", "archive": "older", "outputs": 2, "not_put_back": "disk full"}),
                "the workspace was restored from its archive, which is older than the session's last outputs, and the 2 newer file(s) of output/ could not be put back (disk full); the app still has them",
            ),
            (
                Notice::WorkspaceRecovered {
                    archive: ArchiveProblem::Unreadable {
                        reason: "it is cut short".into(),
                    },
                    outputs: 3,
                    not_put_back: None,
                },
                serde_json::json!({"notice": "workspace_recovered", "archive": "unreadable", "reason": "it is cut short", "outputs": 3}),
                "the workspace archive could not be read (it is cut short); input/ was staged again from the user's files and output/ restored from the app's copy (3 files); files written elsewhere in the workspace are gone",
            ),
            (
                Notice::WorkspaceRecovered {
                    archive: ArchiveProblem::NotRestored {
                        reason: "tar failed".into(),
                    },
                    outputs: 1,
                    not_put_back: Some("engine gone".into()),
                },
                serde_json::json!({"notice": "workspace_recovered", "archive": "not_restored", "reason": "tar failed", "outputs": 1, "not_put_back": "engine gone"}),
                "the workspace archive could not be restored (tar failed); input/ was staged again from the user's files, but the 1 file(s) of output/ could not be put back (engine gone); the app still has them; files written elsewhere in the workspace are gone",
            ),
        ];
        for (notice, wire, line) in cases {
            assert_eq!(serde_json::to_value(&notice).unwrap(), wire, "{notice:?}");
            assert_eq!(serde_json::from_value::<Notice>(wire).unwrap(), notice);
            assert_eq!(notice.to_string(), line);
        }
    }

    /// A staging note goes out as a notice of its own: `notice` says it is one,
    /// `kind` which, beside its fields; its line is the note's.
    #[test]
    fn a_staging_note_is_a_notice_with_its_kind_and_fields() {
        let note = Notice::InputNote(InputNote::link_left_out(
            "docs/key".into(),
            "/home/u/.ssh/id_ed25519".into(),
            LinkProblem::Outside,
        ));
        let json = serde_json::to_value(&note).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"notice": "input_note", "kind": "link_left_out", "dest": "docs/key",
                "target": "/home/u/.ssh/id_ed25519", "why": "outside",
                "include": ["add_target", "follow_links_outside"]})
        );
        assert_eq!(serde_json::from_value::<Notice>(json).unwrap(), note);
        assert!(note.to_string().starts_with(
            "left out input/docs/key: it is a link to /home/u/.ssh/id_ed25519, outside the folder;"
        ));
    }

    /// What the loop said as prose (a cut reply, a flood of outputs, a figure not
    /// kept) is typed: the page reads its fields, the command line its line.
    #[test]
    fn the_loops_conditions_are_notices_with_fields() {
        let cut = Notice::ReplyCut {
            what: Capped::Arguments,
            cap: 4 << 20,
        };
        let json = serde_json::to_value(&cut).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"notice": "reply_cut", "what": "arguments", "cap": 4194304})
        );
        assert_eq!(serde_json::from_value::<Notice>(json).unwrap(), cut);
        assert_eq!(
            cut.to_string(),
            "the model's reply was cut: its tool-call arguments passed 4.0 MiB, the most Sandalyst reads of one reply; the rest was not read, and the model is told"
        );
        let looped = Notice::ReplyCut {
            what: Capped::Repetition,
            cap: 40,
        };
        assert_eq!(
            looped.to_string(),
            "the model's reply was cut: its text kept repeating the same 40 characters over and over; the rest was not read, and the model is told"
        );
        let fresh = Notice::FreshStart {
            attempt: 2,
            stale_turns: 6,
        };
        assert_eq!(
            serde_json::to_value(&fresh).unwrap(),
            serde_json::json!({"notice": "fresh_start", "attempt": 2, "stale_turns": 6})
        );
        assert!(fresh
            .to_string()
            .starts_with("6 turns wrote none of the missing files"));
        let more = Notice::MoreOutputsChanged { count: 3 };
        assert_eq!(
            serde_json::to_value(&more).unwrap(),
            serde_json::json!({"notice": "more_outputs_changed", "count": 3})
        );
        assert_eq!(
            more.to_string(),
            "3 more files changed in output/; they are collected when the ask ends"
        );
        let figure = Notice::FigureNotKept {
            call_id: "c1".into(),
            reason: "disk full".into(),
        };
        assert_eq!(
            serde_json::to_value(&figure).unwrap(),
            serde_json::json!({"notice": "figure_not_kept", "call_id": "c1", "reason": "disk full"})
        );
        assert_eq!(figure.to_string(), "a figure of c1 was not kept: disk full");
    }

    /// The codes the list in [`ErrorCode`]'s documentation names, read from this file.
    fn documented() -> Vec<String> {
        let src = include_str!("protocol.rs");
        let start = src.find("/// The stable code of an error").unwrap();
        let end = start + src[start..].find("pub enum ErrorCode").unwrap();
        src[start..end]
            .lines()
            .filter(|l| l.trim_start().starts_with("/// - "))
            .flat_map(|l| l.split('`').skip(1).step_by(2).map(str::to_owned))
            .collect()
    }

    #[test]
    fn every_documented_code_is_a_variant_and_every_variant_is_documented() {
        let listed = documented();
        let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        for code in &listed {
            assert!(
                codes.contains(&code.as_str()),
                "{code} is documented but not a code"
            );
        }
        for code in &codes {
            assert!(listed.iter().any(|l| l == code), "{code} is not documented");
        }
        assert!(listed.iter().any(|l| l == "replay_failed"));
    }

    #[test]
    fn codes_travel_as_the_strings_the_page_reads() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, code.as_str());
            assert_eq!(serde_json::from_value::<ErrorCode>(json).unwrap(), code);
        }
        let info = SessionError::ReplayFailed {
            message: "cell 3 failed".into(),
        }
        .info();
        assert_eq!(
            serde_json::to_string(&info).unwrap(),
            r#"{"code":"replay_failed","message":"cell 3 failed"}"#
        );
        // A code this version does not know (an older file's `unknown`, a newer one's)
        // is read as internal, not refused.
        for other in ["unknown", "from_the_future"] {
            let read: ErrorCode = serde_json::from_str(&format!("\"{other}\"")).unwrap();
            assert_eq!(read, ErrorCode::Internal);
        }
    }

    #[test]
    fn a_status_code_is_its_serde_tag() {
        let problems = vec![OutputProblem {
            path: "output/a.png".into(),
            problem: "does not exist".into(),
        }];
        for status in [
            RunStatus::Finished,
            RunStatus::MaxTurns {
                turns: 3,
                missing: problems.clone(),
            },
            RunStatus::TimeLimit {
                seconds: 1,
                missing: vec![],
            },
            RunStatus::CostLimit {
                usd: 0.5,
                missing: vec![],
            },
            RunStatus::Cancelled,
            RunStatus::Failed {
                message: "x".into(),
            },
            RunStatus::Interrupted,
            RunStatus::Incomplete { problems },
        ] {
            let json = serde_json::to_value(&status).unwrap();
            assert_eq!(json["status"], status.code(), "{status:?}");
        }
    }
}
