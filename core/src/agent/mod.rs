//! The agent loop: `run(task)` calls `step()` until an outcome ends the ask; `step()`
//! asks the model, executes its tool calls in the sandbox and appends what they
//! produced. How a step ends is one `Outcome`, decided in `run`: recoverable ones (a
//! failed cell, bad arguments, a cut or empty reply, a missing output) were already
//! told to the model and the loop goes on; a limit gets one tool-less turn for the
//! write-up; an answer or a cancel ends the ask; a failure outside the model's control
//! (provider, sandbox, disk) ends it `Failed`, returned typed in [`Ended::failure`].
//! The counters that decide how often the model is told something before the ask
//! ends (reminders, nudges, cut replies, repeated calls) and the turn and spend limits
//! are one [`guard::Guard`]. Every item is handed to the [`Host`] as soon as it exists,
//! so a crash loses nothing already said or done.
//!
//! The helpers that shape what the model sees live beside it: [`observe`] (output
//! budget, artifacts and images after each call), [`context`] (keeping the history
//! inside the context window), [`instructions`] (built per ask).

pub mod attempt;
pub mod context;
pub mod ending;
pub mod events;
pub mod guard;
pub mod instructions;
pub mod observe;
pub mod tools;

#[cfg(test)]
mod tests;

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::approval::{Decision, PendingCall};
use crate::protocol::app_note;
pub use crate::protocol::tool_source;
pub use events::{ArtifactKind, Event, EventKind, RunStatus, SetupStage};
pub use guard::{MAX_NUDGES, MAX_REMINDERS};
pub use tools::ToolSet;

use attempt::Attempts;
use guard::Guard;

/// One tool call of a reply: its id, the tool and the raw JSON arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl Call {
    fn of((id, name, arguments): (&str, &str, &str)) -> Call {
        Call {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        }
    }
}

/// Which side failed when an ask ends on an error: attached to the error's chain as
/// its context, so that the session types the failure from this, not from the words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Failed {
    #[error("the model failed")]
    Model,
    #[error("the sandbox failed")]
    Sandbox,
}

use crate::conversation::{Answer, CallMode, Ending};
use crate::model::caps::Cut;
use crate::model::chat_completions::{steps, text_calls};
use crate::model::error::ModelError;
use crate::model::{CallForm, Delta, Item, Model, Reply, Request, Usage};
use crate::protocol::{Notice, OutputProblem};
use crate::sandbox::{OutputEntry, Sandbox};

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    pub max_turns: u32,
    pub wall_time: Duration,
    /// Per tool call.
    pub call_timeout: Duration,
    /// Estimated spend per ask, in US dollars (needs the model's prices).
    pub max_cost_usd: Option<f64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_turns: 25,
            wall_time: Duration::from_secs(30 * 60),
            call_timeout: Duration::from_secs(300),
            max_cost_usd: None,
        }
    }
}

/// What the app's first cell says it does (in the model's history: its thought).
const PRELUDE_SAID: &str =
    "The app loads the inputs before the first turn: pandas, numpy and pyplot imported, each table in a DataFrame.";

/// The bound on the last, tool-less turn that writes the summary after a limit, for
/// a model whose speed is not known yet; a slow one gets more ([`Agent::wrap_up_time`]).
const WRAP_UP_TIME: Duration = Duration::from_secs(60);
/// The longest the summary turn may take, however slow the model.
const MAX_WRAP_UP_TIME: Duration = Duration::from_secs(600);
/// The summary's length the bound is made for, in tokens.
const WRAP_UP_TOKENS: f64 = 1024.0;

/// What the loop needs from whoever runs it (a session, a test).
pub trait Host: Send + Sync {
    fn emit(&self, kind: EventKind);
    /// Keep one conversation item (the transcript on disk).
    fn record(&self, item: &Item, usage: Option<&Usage>) -> anyhow::Result<()>;
    /// Notes for the model that arrived since the last call (e.g. files the user added).
    fn take_notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// Keep a figure a cell displayed; returns its path for the UI.
    fn save_figure(&self, call_id: &str, index: usize, png: &[u8]) -> anyhow::Result<String>;
    /// Where copies of the output files a call just wrote go, so the UI can show them
    /// before the ask ends; `None` keeps no copies.
    fn outputs_dir(&self) -> Option<std::path::PathBuf> {
        None
    }
    /// The analyst's decision on a call before it runs; `None` if the ask was
    /// cancelled while it waited. A host without approvals lets every call run.
    fn approve<'a>(
        &'a self,
        request: PendingCall,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Decision>> {
        let _ = (request, cancel);
        Box::pin(std::future::ready(Some(Decision::Approve)))
    }
}

/// A future the host returns (the trait stays object-safe).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

pub struct Agent<'a> {
    pub model: &'a mut dyn Model,
    pub sandbox: &'a dyn Sandbox,
    pub host: &'a dyn Host,
    pub instructions: String,
    pub tools: ToolSet,
    pub limits: Limits,
    /// Send charts and figures back to a model that takes images.
    pub show_images: bool,
    /// The conversation so far (earlier asks included); the ask's items are appended.
    pub items: Vec<Item>,
    pub usage: Usage,
    pub turns: u32,
    /// The files in `output/` after the last call, to spot what each call changed.
    pub outputs: Vec<OutputEntry>,
    /// The caller set `outputs` as the ask begins (a new workspace: none), so they are
    /// not listed before the first turn, and a sandbox still starting is first waited
    /// for when a call runs.
    pub outputs_known: bool,
    /// The counters that decide whether the ask goes on.
    guard: Guard,
    /// The ask's attempts: what the model sees after a fresh start.
    attempts: Attempts,
    /// Whether code or a command ran in this ask.
    ran_code: bool,
    /// Time spent waiting for the analyst's approvals: not counted in the wall time.
    waiting: std::sync::Arc<WaitClock>,
    /// The model's measured pace this ask: output tokens and the seconds their
    /// replies took (prompt reading included).
    pace: (u64, f64),
    /// The named outputs still missing or invalid, after the last call.
    problems: Vec<OutputProblem>,
    /// The named tables shown to the model as written (path, modification time).
    tables_shown: Vec<(String, u128)>,
    /// How the model's calls travel, as last announced.
    call_mode: Option<(CallMode, String)>,
    /// The kernel's names after the last Python cell.
    names: Vec<String>,
    /// A cell the app runs before the model's first turn (the inputs loaded), kept
    /// as a call of the ask like the model's own.
    pub prelude: Option<String>,
}

/// How long the ask has waited for a person, and whether it waits now.
#[derive(Default)]
struct WaitClock {
    state: std::sync::Mutex<(Duration, Option<tokio::time::Instant>)>,
}

impl WaitClock {
    fn start(&self) {
        self.state.lock().unwrap().1 = Some(tokio::time::Instant::now());
    }

    fn stop(&self) {
        let mut s = self.state.lock().unwrap();
        if let Some(since) = s.1.take() {
            s.0 += since.elapsed();
        }
    }

    /// The time waited so far, and whether the ask waits right now.
    fn waited(&self) -> (Duration, bool) {
        let s = self.state.lock().unwrap();
        let now = s.1.map_or(Duration::ZERO, |since| since.elapsed());
        (s.0 + now, s.1.is_some())
    }
}

/// How an ask ended: its status, and what made it fail, kept typed (e.g. a
/// `ModelError`) for the caller to classify.
#[derive(Debug)]
pub struct Ended {
    pub status: RunStatus,
    pub failure: Option<anyhow::Error>,
}

/// How a turn ends, decided in one place ([`Agent::run`]). A recoverable outcome (a
/// failed cell, bad arguments, a cut or empty reply, a missing file) has already been
/// told to the model, as a call's result or a note, and the loop goes on; the others
/// end the ask with a status.
enum Outcome {
    /// The model has something new to read: go on.
    Continue,
    /// The model answered, or the user cancelled.
    Ended(RunStatus),
    /// A limit was reached: one more turn, without tools, for the write-up.
    Limit(RunStatus),
    /// Something outside the model's control failed (provider, sandbox, disk).
    Failed(anyhow::Error),
}

impl<'a> Agent<'a> {
    pub fn new(
        model: &'a mut dyn Model,
        sandbox: &'a dyn Sandbox,
        host: &'a dyn Host,
        items: Vec<Item>,
    ) -> Agent<'a> {
        Agent {
            model,
            sandbox,
            host,
            instructions: instructions::default_for(&Limits::default()),
            tools: ToolSet::default(),
            limits: Limits::default(),
            show_images: true,
            items,
            usage: Usage::default(),
            turns: 0,
            outputs: Vec::new(),
            outputs_known: false,
            guard: Guard::default(),
            attempts: Attempts::default(),
            ran_code: false,
            waiting: Default::default(),
            pace: (0, 0.0),
            problems: Vec::new(),
            tables_shown: Vec::new(),
            call_mode: None,
            names: Vec::new(),
            prelude: None,
        }
    }

    /// Run the ask `task` to its end: `run(task) -> step() until an outcome ends it`.
    pub async fn run(&mut self, task: &str, cancel: &CancellationToken) -> Ended {
        match self.steps(task, cancel).await {
            Ok(status) => Ended {
                status,
                failure: None,
            },
            Err(e) => Ended {
                status: failed(&e),
                failure: Some(e),
            },
        }
    }

    /// The loop: each turn's outcome decides, here, whether the ask goes on.
    async fn steps(&mut self, task: &str, cancel: &CancellationToken) -> anyhow::Result<RunStatus> {
        let deadline = tokio::time::Instant::now() + self.limits.wall_time;
        self.push(Item::User { text: task.into() }, None)?;
        if let Some(code) = self.prelude.take() {
            self.run_prelude(code, cancel).await?;
        }
        if !self.outputs_known {
            self.outputs = self.sandbox.list_outputs().await.unwrap_or_default();
        }
        self.problems = ending::output_problems(task, &self.outputs, self.sandbox).await;
        self.attempts = Attempts::begin(self.items.len(), self.problems.len());
        self.announce_call_mode();
        loop {
            let outcome = match self.guard.limit(self.turns, &self.limits, self.cost()) {
                Some(limit) => Outcome::Limit(limit),
                None => {
                    self.fresh_start_if_due(task);
                    self.step_until(deadline, task, cancel).await
                }
            };
            match outcome {
                Outcome::Continue => self.attempts.progress(self.problems.len(), self.turns),
                Outcome::Ended(status) => return Ok(status),
                Outcome::Limit(limit) => {
                    // A limit that stops the ask says which named outputs it left unmade.
                    let status = self.wrap_up(limit, cancel).await;
                    let problems = ending::output_problems(task, &self.outputs, self.sandbox).await;
                    return Ok(status.with_missing(problems));
                }
                Outcome::Failed(e) => return Err(e),
            }
        }
    }

    /// One step; at the deadline it is interrupted (model stream and code), not
    /// dropped, and the time limit is the outcome unless the user cancelled.
    async fn step_until(
        &mut self,
        deadline: tokio::time::Instant,
        task: &str,
        cancel: &CancellationToken,
    ) -> Outcome {
        let seconds = self.limits.wall_time.as_secs();
        let step_cancel = cancel.child_token();
        let clock = self.waiting.clone();
        let step = self.step(task, &step_cancel);
        tokio::pin!(step);
        let due = || deadline + clock.waited().0;
        let sleep = tokio::time::sleep_until(due());
        tokio::pin!(sleep);
        let (outcome, timed_out) = loop {
            tokio::select! {
                s = &mut step => break (s, false),
                _ = &mut sleep => {
                    // Time waiting for the analyst moves the deadline.
                    let (_, waiting) = clock.waited();
                    let now = tokio::time::Instant::now();
                    if waiting || due() > now {
                        sleep.as_mut().reset(due().max(now + Duration::from_millis(100)));
                        continue;
                    }
                    step_cancel.cancel();
                    break (step.await, true);
                }
            }
        };
        if timed_out && !cancel.is_cancelled() {
            return Outcome::Limit(RunStatus::TimeLimit {
                seconds,
                missing: vec![],
            });
        }
        outcome.unwrap_or_else(Outcome::Failed)
    }

    async fn step(&mut self, task: &str, cancel: &CancellationToken) -> anyhow::Result<Outcome> {
        self.turns += 1;
        self.host.emit(EventKind::TurnStarted {
            turn: self.turns,
            max_turns: self.limits.max_turns,
        });
        let specs = self.tools.specs(self.show_images && self.model.vision());
        let Some(reply) = self.query(&specs, cancel).await? else {
            return Ok(Outcome::Ended(RunStatus::Cancelled));
        };
        let calls: Vec<Call> = reply.tool_calls().map(Call::of).collect();
        // What the model said comes first; then every call of the reply is decided
        // before any is kept or runs, so an edit is what the history holds (and a
        // re-run replays) as the call. A cut reply's calls are never offered.
        let first_call = reply
            .items
            .iter()
            .position(|i| matches!(i, Item::ToolCall { .. }))
            .unwrap_or(reply.items.len());
        self.keep_reply(&reply, 0..first_call, &calls, &[])?;
        let decisions = match reply.cut {
            None if !calls.is_empty() => self.decide(&calls, &reply, cancel).await,
            _ => Vec::new(),
        };
        self.keep_reply(&reply, first_call..reply.items.len(), &calls, &decisions)?;
        if let Some(cut) = reply.cut {
            return self.was_cut(cut, &calls);
        }
        self.guard.whole();
        if calls.is_empty() {
            return self.answered(&reply, task).await;
        }
        for (mut call, decision) in calls.into_iter().zip(decisions) {
            if let Some(Decision::Edit { code }) = &decision {
                call.arguments = tools::with_code(&call.name, code);
            }
            let mut output = self.execute(&call, &decision, cancel).await?;
            self.problems = ending::output_problems(task, &self.outputs, self.sandbox).await;
            let shown = &mut self.tables_shown;
            for table in ending::written_tables(task, &self.outputs, shown, self.sandbox).await {
                tools::append_note(&mut output, &table);
            }
            if let Some(line) = ending::checklist(task, &self.problems, &self.names) {
                tools::append_note(&mut output, &line);
            }
            self.push(output, None)?;
            if cancel.is_cancelled() {
                return Ok(Outcome::Ended(RunStatus::Cancelled));
            }
        }
        Ok(Outcome::Continue)
    }

    /// Keep the reply's items in `range` (the usage with its last item): a cut reply's
    /// as stubs, a runaway answer as an excerpt, a call as the analyst edited it.
    fn keep_reply(
        &mut self,
        reply: &Reply,
        range: std::ops::Range<usize>,
        calls: &[Call],
        decisions: &[Option<Decision>],
    ) -> anyhow::Result<()> {
        for i in range {
            let item = &reply.items[i];
            let usage = (i + 1 == reply.items.len()).then_some(&reply.usage);
            // Text that held calls keeps them for the model; a person reads the prose.
            let shown = text_calls::shown_text(&reply.items, i);
            let item = match (reply.cut, item) {
                (Some(cut), _) => context::stub_cut(item.clone(), cut),
                // A reply that ran to the token limit with no call: an excerpt, so the
                // model is not shown its runaway again.
                (None, Item::Assistant { text }) if reply.cut_off && calls.is_empty() => {
                    Item::Assistant {
                        text: context::excerpt(
                            text.clone(),
                            context::RUNAWAY_KEEP,
                            "it ran to the output-token limit",
                        ),
                    }
                }
                (None, Item::ToolCall { call_id, .. }) => {
                    let at = calls.iter().position(|c| call_id == &c.id);
                    match at.and_then(|k| decisions.get(k)) {
                        Some(Some(Decision::Edit { code })) => tools::edited(item, code),
                        _ => item.clone(),
                    }
                }
                (None, _) => item.clone(),
            };
            self.keep(item, usage, shown)?;
        }
        Ok(())
    }

    /// The analyst's decision on each call, in order (the host lets calls through
    /// that need none); the time waited is kept off the wall time. `None` for a call
    /// not decided when the ask was cancelled: it does not run.
    async fn decide(
        &mut self,
        calls: &[Call],
        reply: &Reply,
        cancel: &CancellationToken,
    ) -> Vec<Option<Decision>> {
        let reason: Vec<String> = (0..reply.items.len())
            .filter_map(|i| match &reply.items[i] {
                Item::Assistant { text } => {
                    let shown = text_calls::shown_text(&reply.items, i);
                    Some(shown.unwrap_or_else(|| text.clone()).trim().to_string())
                }
                _ => None,
            })
            .filter(|t| !t.is_empty())
            .collect();
        let mut decisions = Vec::new();
        for call in calls {
            let request = PendingCall {
                call_id: call.id.clone().into(),
                tool: call.name.clone(),
                code: tool_source(&call.arguments),
                reason: reason.join("\n\n"),
            };
            self.waiting.start();
            let decision = if cancel.is_cancelled() {
                None
            } else {
                self.host.approve(request, cancel).await
            };
            self.waiting.stop();
            decisions.push(decision);
        }
        decisions
    }

    /// Ask the model, streaming its deltas as events; `None` when cancelled.
    async fn query(
        &mut self,
        tools: &[crate::model::ToolSpec],
        cancel: &CancellationToken,
    ) -> anyhow::Result<Option<Reply>> {
        context::fit(
            &mut self.items,
            &self.instructions,
            self.model.context_window(),
        );
        let host = self.host;
        let on_delta = move |d: Delta| host.emit(delta_event(d));
        let mut shrunk = false;
        let started = tokio::time::Instant::now();
        let answer = self.answer();
        let reply = loop {
            let view = self.attempts.view(&self.items);
            let request = Request {
                instructions: &self.instructions,
                items: &view,
                tools,
                on_delta: &on_delta,
                answer: answer.clone(),
                repeats: self.guard.repeats(),
            };
            let reply = tokio::select! {
                r = self.model.respond(request, cancel) => r,
                _ = cancel.cancelled() => return Ok(None),
            };
            if cancel.is_cancelled() {
                return Ok(None);
            }
            match reply {
                // Over the window after all (the estimate is rough): halve and ask again.
                Err(e) if !shrunk && is_context_error(&e) => {
                    let now = context::estimate(&self.instructions, &self.items);
                    shrunk = context::shrink(&mut self.items, &self.instructions, now / 2) > 0;
                    if !shrunk {
                        return Err(e.context(Failed::Model));
                    }
                }
                other => break other.map_err(|e| e.context(Failed::Model))?,
            }
        };
        if let Some(cut) = reply.cut {
            self.host.emit(EventKind::Notice(Notice::ReplyCut {
                what: cut.what,
                cap: cut.cap,
            }));
        }
        self.announce_call_mode();
        self.usage += reply.usage;
        self.pace.0 += reply.usage.output_tokens;
        self.pace.1 += started.elapsed().as_secs_f64();
        self.host.emit(EventKind::Usage {
            input_tokens: reply.usage.input_tokens,
            output_tokens: reply.usage.output_tokens,
            cached_tokens: reply.usage.cached_tokens,
            total_input_tokens: self.usage.input_tokens,
            total_output_tokens: self.usage.output_tokens,
            cost_usd: self.cost(),
        });
        Ok(Some(reply))
    }

    /// A reply that passed a cap: none of its calls run (their arguments may be cut),
    /// and the model is told why, in each call's result or in a note. A second such
    /// reply in a row ends the ask (a third for loops, which the next turn is sampled
    /// warmer against, like a repeated call): the model keeps running away.
    fn was_cut(&mut self, cut: Cut, calls: &[Call]) -> anyhow::Result<Outcome> {
        if let Err(message) = self.guard.cut(cut) {
            return Ok(Outcome::Failed(
                ModelError::ReplyTooLarge { message }.into(),
            ));
        }
        let why = if cut.what == crate::model::caps::Capped::Repetition {
            format!(
                "your last reply was cut: {}, so the rest of it was not read",
                cut.describe()
            )
        } else {
            format!(
                "your last reply was cut: {}, the most the app reads of one reply, so the rest of it was dropped",
                cut.describe()
            )
        };
        for call in calls {
            self.push(
                Item::ToolOutput {
                    call_id: call.id.clone().into(),
                    output: format!(
                        "Not run: {why}, and this call's arguments may be incomplete. Make the call again, shorter: \
                         write large content to a file in several smaller calls."
                    ),
                    is_error: true,
                    images: Vec::new(),
                },
                None,
            )?;
        }
        if calls.is_empty() {
            self.push(Item::User { text: app_note(&format!("Note: {why}. Continue: call a tool, or give the final answer in shorter form.")) }, None)?;
        }
        Ok(Outcome::Continue)
    }

    /// A reply without tool calls: the answer, unless it was cut off, it holds a call
    /// that could not be read (the model is told, at most [`MAX_NUDGES`] times), or
    /// the files the task names are missing or not what they should be (reminded
    /// [`MAX_REMINDERS`] times, then the ask ends `Incomplete`).
    async fn answered(&mut self, reply: &Reply, task: &str) -> anyhow::Result<Outcome> {
        let text: Vec<&str> = reply
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Assistant { text } if !text.trim().is_empty() => Some(text.as_str()),
                _ => None,
            })
            .collect();
        if reply.cut_off || text.is_empty() {
            let why = if reply.cut_off {
                "Your last reply was cut off at the output-token limit, so it is not an answer."
            } else {
                "Your last reply held no answer text."
            };
            self.push(
                Item::User {
                    text: app_note(&format!(
                        "{why} Continue: call a tool, or give the final answer in shorter form."
                    )),
                },
                None,
            )?;
            return Ok(Outcome::Continue);
        }
        if reply.ending == Ending::CannotFinish {
            // The model says the named outputs cannot be made, and why: no reminder.
            let problems = ending::output_problems(task, &self.outputs, self.sandbox).await;
            if !problems.is_empty() {
                return Ok(Outcome::Ended(RunStatus::Incomplete { problems }));
            }
        }
        let unrun = ending::unrun_call(&text.join("\n\n"), self.ran_code);
        if let Some(reason) = self.guard.nudge(unrun) {
            self.host.emit(EventKind::NothingRan {
                reason: reason.clone(),
            });
            let how = match self.call_mode {
                Some((CallMode::Schema | CallMode::Text, _)) => ending::HOW_TO_STEP,
                _ => ending::HOW_TO_CALL,
            };
            let note = app_note(&format!("Nothing was run: {reason}. {how}"));
            self.push(Item::User { text: note }, None)?;
            return Ok(Outcome::Continue);
        }
        let problems = ending::output_problems(task, &self.outputs, self.sandbox).await;
        if problems.is_empty() {
            return Ok(Outcome::Ended(RunStatus::Finished));
        }
        if let Some(last) = self.guard.remind() {
            let text = app_note(&ending::reminder(&problems, last && self.ran_code));
            self.push(Item::User { text }, None)?;
            return Ok(Outcome::Continue);
        }
        Ok(Outcome::Ended(RunStatus::Incomplete { problems }))
    }

    /// After a limit: one last turn without tools, so the user always gets a write-up.
    async fn wrap_up(&mut self, status: RunStatus, cancel: &CancellationToken) -> RunStatus {
        // What was not made is said, so the summary cannot claim it (a small model will).
        let unmade = if self.problems.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = self.problems.iter().map(ToString::to_string).collect();
            format!(" Not made: {}; say so plainly.", list.join("; "))
        };
        let ran = if self.ran_code {
            ""
        } else {
            " No code ran in this ask."
        };
        let text = app_note(&format!(
            "The ask {status}. Tools are no longer available. Write your final answer now: what you did, the key numbers, the files in output/, and what is left undone.{ran}{unmade} Claim only what the results above show."
        ));
        if self.push(Item::User { text }, None).is_err() {
            return status;
        }
        // The ask's own token: Stop during the summary ends it at once.
        let bound = self.wrap_up_time();
        let reply = tokio::time::timeout(bound, self.query(&[], cancel)).await;
        if let Ok(Ok(Some(reply))) = reply {
            for item in reply.items {
                // Calls in a tool-less turn are ignored: only the words count.
                if matches!(item, Item::Assistant { .. }) {
                    let _ = self.push(item, None);
                }
            }
        }
        status
    }

    /// The bound on the summary turn: time for about [`WRAP_UP_TOKENS`] at the pace
    /// the model kept this ask (half as much again to spare), at least
    /// [`WRAP_UP_TIME`], at most [`MAX_WRAP_UP_TIME`]. A model on a laptop's CPU
    /// writes 2 to 20 tokens a second.
    fn wrap_up_time(&self) -> Duration {
        let (tokens, secs) = self.pace;
        if tokens < 16 {
            return WRAP_UP_TIME;
        }
        let wanted = 1.5 * WRAP_UP_TOKENS * secs / tokens as f64;
        Duration::from_secs_f64(wanted).clamp(WRAP_UP_TIME, MAX_WRAP_UP_TIME)
    }

    /// The app's own cell before the first turn: said, run and kept as a Python call,
    /// so the model reads it in its history and notebooks and re-runs replay it. It
    /// needs no approval (the app wrote it) and does not count as the model's code.
    async fn run_prelude(
        &mut self,
        code: String,
        cancel: &CancellationToken,
    ) -> anyhow::Result<()> {
        let call_id = crate::protocol::PRELUDE_CALL_ID;
        let arguments = serde_json::json!({ crate::protocol::tool_arg::CODE: code }).to_string();
        self.push(
            Item::Assistant {
                text: PRELUDE_SAID.into(),
            },
            None,
        )?;
        self.push(
            Item::ToolCall {
                call_id: call_id.into(),
                name: "python".into(),
                arguments: arguments.clone(),
                form: CallForm::Structured,
            },
            None,
        )?;
        let call = Call {
            id: call_id.into(),
            name: "python".into(),
            arguments,
        };
        let output = self
            .execute(&call, &Some(Decision::Approve), cancel)
            .await?;
        self.ran_code = false;
        self.push(output, None)
    }

    /// Run one tool call; only a broken sandbox is an error, everything else is an observation.
    async fn execute(
        &mut self,
        call: &Call,
        decision: &Option<Decision>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Item> {
        let (call_id, name, arguments) = (call.id.as_str(), call.name.as_str(), &call.arguments);
        let host = self.host;
        let on_output = |stream, text: &str| {
            host.emit(EventKind::CellOutput {
                call_id: call_id.into(),
                stream,
                text: text.into(),
            })
        };
        let timeout = self.limits.call_timeout;
        let vision = self.show_images && self.model.vision();
        let mut seen = observe::Seen::default();
        if let Some(Decision::Edit { .. }) = decision {
            seen.notes.push(
                "The analyst edited this call before it ran: the call above shows the code that ran, not what you wrote.".into(),
            );
        }
        let action = match decision {
            None => Err("Not run: the ask was cancelled before this call was approved.".into()),
            Some(Decision::Reject { reason }) => Err(format!(
                "Not run: the analyst rejected this call. Their reason: {reason}"
            )),
            Some(_) => tools::parse(&self.tools, name, arguments),
        };
        match action {
            Err(message) => seen.refused(message),
            Ok(tools::Action::Python(code)) => {
                self.ran_code = true;
                let r = self
                    .sandbox
                    .python(&code, timeout, cancel, &on_output)
                    .await
                    .map_err(|e| e.context(Failed::Sandbox))?;
                if let Some(note) = observe::names_note(&r, &mut self.names) {
                    seen.notes.push(note);
                }
                seen.ran(r)
            }
            Ok(tools::Action::Shell(cmd)) => {
                self.ran_code = true;
                let r = self.sandbox.shell(&cmd, timeout, cancel, &on_output).await;
                seen.ran(r.map_err(|e| e.context(Failed::Sandbox))?)
            }
            Ok(tools::Action::ViewImage(path)) => seen.view(self.sandbox, &path).await,
        }
        seen.connections(call_id, self.sandbox.take_egress(), self.host);
        seen.report(call_id, self.host);
        self.outputs = seen
            .artifacts(call_id, self.sandbox, &self.outputs, self.host, vision)
            .await;
        // A small model can run the same cell over and over; say so, with the way on.
        let repeats = self.guard.ran(name, tool_source(arguments));
        if repeats > 0 {
            seen.notes.push(format!(
                "This call is the same as the one before it ({} time(s) in a row), so it showed nothing new. \
                 Do not run it again: take the next step of the task, and write the files it asks for.",
                repeats + 1
            ));
        } else if self
            .guard
            .failed_again(name, tool_source(arguments), seen.failed())
        {
            seen.notes.push(
                "This exact call failed before, the same way: running it again changes nothing. \
                 Change the line that fails (another function, or another way to the same result)."
                    .into(),
            );
        } else if self.guard.cycled() {
            seen.notes.push(
                "This call is one you already made in this task; its result is above. \
                 Take the next step, or give the final answer once the task is done."
                    .into(),
            );
        }
        seen.notes.extend(self.host.take_notes());
        seen.into_item(call_id, self.sandbox, vision).await
    }

    /// Append an item: to the conversation, to the host's record (disk), and as an event.
    fn push(&mut self, item: Item, usage: Option<&Usage>) -> anyhow::Result<()> {
        self.keep(item, usage, None)
    }

    /// [`Agent::push`], with what a person reads of assistant text when it differs
    /// from what the model wrote (calls written in it).
    fn keep(
        &mut self,
        item: Item,
        usage: Option<&Usage>,
        shown: Option<String>,
    ) -> anyhow::Result<()> {
        self.host.record(&item, usage)?;
        match &item {
            Item::Assistant { text } => {
                let text = shown.unwrap_or_else(|| text.clone());
                if !text.trim().is_empty() {
                    self.host.emit(EventKind::Text { text });
                }
            }
            Item::ToolCall {
                call_id,
                name,
                arguments,
                form,
            } => self.host.emit(EventKind::ToolCall {
                call_id: call_id.clone(),
                name: name.clone(),
                code: tool_source(arguments),
                form: *form,
            }),
            _ => {}
        }
        self.items.push(item);
        Ok(())
    }

    /// What this turn may end with: the answer once no named output is missing;
    /// before that only calls, and, once code has run for three quarters of the turns
    /// (half, after a reminder), the word that they cannot be made: offered sooner, a
    /// small model takes it at once (a 1.5B model gave up at half the turns in 2 of 3
    /// reference runs).
    fn answer(&self) -> Answer {
        if self.problems.is_empty() {
            return Answer::Open;
        }
        let missing = self.problems.iter().map(|p| p.path.clone()).collect();
        let late = self.turns * 4 >= self.limits.max_turns * 3
            || self.guard.reminded() && self.turns * 2 >= self.limits.max_turns;
        if self.ran_code && late {
            Answer::OrWhyNot { missing }
        } else {
            Answer::NotYet { missing }
        }
    }

    /// A local model in step mode that is stuck on the way to the missing files sees
    /// the ask again from after the app's first cell ([`attempt`]).
    fn fresh_start_if_due(&mut self, task: &str) {
        let stepped = matches!(self.call_mode, Some((CallMode::Schema | CallMode::Text, _)));
        let failed = matches!(
            self.items.last(),
            Some(Item::ToolOutput { is_error: true, .. })
        );
        let stuck = failed || self.guard.repeats() > 0;
        if !stepped || !self.attempts.due(self.turns, self.limits.max_turns, stuck) {
            return;
        }
        let error = steps::last_exception(&self.items);
        let checklist = ending::checklist(task, &self.problems, &self.names);
        let (attempt, stale) = self.attempts.start(
            self.items.len(),
            self.turns,
            error.as_deref(),
            checklist.as_deref(),
        );
        self.guard.fresh();
        self.host.emit(EventKind::Notice(Notice::FreshStart {
            attempt,
            stale_turns: stale,
        }));
    }

    /// Say how the model's calls travel, when that is new.
    fn announce_call_mode(&mut self) {
        let now = self.model.call_mode();
        if now.is_some() && now != self.call_mode {
            if let Some((mode, reason)) = now.clone() {
                self.host.emit(EventKind::CallMode { mode, reason });
            }
            self.call_mode = now;
        }
    }

    fn cost(&self) -> Option<f64> {
        self.model.price().map(|p| p.cost(&self.usage))
    }
}

/// The status of an ask that failed with `e`. A typed failure's sentence stands alone
/// (a replay that stopped is not "the model failed: ...").
fn failed(e: &anyhow::Error) -> RunStatus {
    let message = match e.downcast_ref::<crate::protocol::SessionError>() {
        Some(typed) => typed.to_string(),
        None => format!("{e:#}"),
    };
    RunStatus::Failed { message }
}

fn delta_event(d: Delta) -> EventKind {
    match d {
        Delta::Text { text } => EventKind::TextDelta { text },
        Delta::ToolCall {
            call_id,
            name,
            arguments,
        } => EventKind::ToolCallDelta {
            call_id,
            name,
            arguments,
        },
        Delta::Retry {
            attempt,
            wait_ms,
            reason,
        } => EventKind::Retry {
            attempt,
            wait_ms,
            reason,
        },
    }
}

fn is_context_error(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<ModelError>(),
        Some(ModelError::ContextTooLong { .. })
    )
}
