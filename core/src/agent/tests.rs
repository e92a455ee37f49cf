//! The loop alone: a stub [`Host`] that keeps what it is handed, the in-memory sandbox
//! (or one that is broken), and a scripted model. One test for each way an ask ends,
//! and for the outcomes that only become a message to the model. Each trace pins the
//! items recorded and the events emitted, in order, so a change to the loop that
//! changes what the transcript or the window sees fails here first.

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::model::caps::{Capped, Cut};
use crate::model::pricing::Price;
use crate::model::scripted::{ScriptedModel, Seen, Step};
use crate::sandbox::fake::FakeSandbox;
use crate::sandbox::{ExecResult, OutputSink};
use crate::workspace::{CollectLimits, Collected, Manifest};

/// A host that keeps every event and recorded item, and hands out queued notes.
#[derive(Default)]
struct Stub {
    events: Mutex<Vec<EventKind>>,
    recorded: Mutex<Vec<Item>>,
    notes: Mutex<Vec<String>>,
    /// Recording fails (a full disk) from this many items on.
    fail_after: Option<usize>,
    /// The analyst's answers, in order, each after a delay; none: every call runs.
    answers: Mutex<std::collections::VecDeque<(Duration, Decision)>>,
    /// Stop pressed when an event whose line ([`event_line`]) starts so is emitted.
    stop_at: Option<(&'static str, CancellationToken)>,
}

impl Host for Stub {
    fn emit(&self, kind: EventKind) {
        if let Some((line, cancel)) = &self.stop_at {
            if event_line(&kind).starts_with(line) {
                cancel.cancel();
            }
        }
        self.events.lock().unwrap().push(kind);
    }

    fn record(&self, item: &Item, _usage: Option<&Usage>) -> anyhow::Result<()> {
        let mut recorded = self.recorded.lock().unwrap();
        if self.fail_after.is_some_and(|n| recorded.len() >= n) {
            anyhow::bail!("no space left on device");
        }
        recorded.push(item.clone());
        Ok(())
    }

    fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock().unwrap())
    }

    fn save_figure(&self, call_id: &str, index: usize, _png: &[u8]) -> anyhow::Result<String> {
        Ok(format!("figures/{call_id}-{index}.png"))
    }

    fn approve<'a>(
        &'a self,
        request: PendingCall,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Decision>> {
        let next = self.answers.lock().unwrap().pop_front();
        Box::pin(async move {
            let Some((delay, decision)) = next else {
                return Some(Decision::Approve);
            };
            self.emit(EventKind::ApprovalRequested {
                call_id: request.call_id,
                tool: request.tool,
                code: request.code,
                reason: request.reason,
            });
            tokio::select! {
                _ = tokio::time::sleep(delay) => Some(decision),
                _ = cancel.cancelled() => None,
            }
        })
    }
}

/// A sandbox whose engine is gone: every call fails.
struct Broken;

#[async_trait]
impl Sandbox for Broken {
    async fn python(
        &self,
        _code: &str,
        _timeout: Duration,
        _cancel: &CancellationToken,
        _on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult> {
        anyhow::bail!("the engine stopped answering")
    }
    async fn shell(
        &self,
        _command: &str,
        _timeout: Duration,
        _cancel: &CancellationToken,
        _on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult> {
        anyhow::bail!("the engine stopped answering")
    }
    async fn list_outputs(&self) -> anyhow::Result<Vec<OutputEntry>> {
        Ok(Vec::new())
    }
    async fn read_file(&self, rel: &str, _max_bytes: u64) -> anyhow::Result<Vec<u8>> {
        anyhow::bail!("no file {rel}")
    }
    async fn add_inputs(&self, _manifest: &Manifest) -> anyhow::Result<()> {
        Ok(())
    }
    async fn remove_input(&self, _name: &str) -> anyhow::Result<()> {
        Ok(())
    }
    async fn restore_workspace(&self, _archive: &std::path::Path) -> anyhow::Result<()> {
        Ok(())
    }
    async fn output_tar(&self) -> anyhow::Result<Box<dyn std::io::Read + Send>> {
        anyhow::bail!("the engine stopped answering")
    }
    async fn collect_outputs(
        &self,
        _dest: &std::path::Path,
        _limits: &CollectLimits,
    ) -> anyhow::Result<Collected> {
        anyhow::bail!("the engine stopped answering")
    }
    async fn archive_workspace(&self, _dest: &std::path::Path, _max: u64) -> anyhow::Result<u64> {
        anyhow::bail!("the engine stopped answering")
    }
    async fn close(&self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// What one ask left behind.
struct Asked {
    status: RunStatus,
    turns: u32,
    failure: Option<anyhow::Error>,
    /// What the host recorded, one line per item (`user: ...`, `call python: ...`).
    items: Vec<String>,
    /// Every call result in full, as the model read it.
    outputs: Vec<String>,
    /// The events' `type`s, deltas and usage left out.
    events: Vec<String>,
    raw_events: Vec<EventKind>,
}

struct Ask<'s> {
    steps: Vec<Step>,
    limits: Limits,
    task: &'static str,
    sandbox: &'s dyn Sandbox,
    host: Stub,
    cancel: CancellationToken,
    price: Option<Price>,
    /// Every request the scripted model was sent, as it comes.
    model_log: std::sync::Arc<Mutex<Vec<Seen>>>,
    /// How the scripted model says its calls travel (none: native).
    call_mode: Option<CallMode>,
}

fn ask<'s>(sandbox: &'s dyn Sandbox, steps: impl IntoIterator<Item = Step>) -> Ask<'s> {
    Ask {
        steps: steps.into_iter().collect(),
        limits: Limits::default(),
        task: "look at the data",
        sandbox,
        host: Stub::default(),
        cancel: CancellationToken::new(),
        price: None,
        model_log: Default::default(),
        call_mode: None,
    }
}

impl Ask<'_> {
    /// Press Stop when the loop emits an event whose line starts with `line`: when
    /// what the test stops is under way, however slowly the machine got there.
    fn stop_at(mut self, line: &'static str) -> Self {
        self.host.stop_at = Some((line, self.cancel.clone()));
        self
    }

    /// Press Stop once the model has been sent `n` requests.
    fn stop_after_requests(&self, n: usize) {
        let (cancel, log) = (self.cancel.clone(), self.model_log.clone());
        tokio::spawn(async move {
            while log.lock().unwrap().len() < n {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            cancel.cancel();
        });
    }

    async fn run(self) -> Asked {
        let mut model = ScriptedModel::new(self.steps);
        model.price = self.price;
        model.log = self.model_log.clone();
        model.call_mode = self.call_mode.map(|m| (m, "a test".to_string()));
        let mut agent = Agent::new(&mut model, self.sandbox, &self.host, Vec::new());
        agent.limits = self.limits;
        let Ended { status, failure } = agent.run(self.task, &self.cancel).await;
        // Persistence on every step: what the loop holds is what the host recorded.
        assert_eq!(agent.items, *self.host.recorded.lock().unwrap());
        let turns = agent.turns;
        drop(agent);
        let raw_events = self.host.events.into_inner().unwrap();
        let events = raw_events
            .iter()
            .filter(|e| {
                !matches!(
                    e,
                    EventKind::TextDelta { .. }
                        | EventKind::ToolCallDelta { .. }
                        | EventKind::Usage { .. }
                )
            })
            .map(event_line)
            .collect();
        let recorded = self.host.recorded.into_inner().unwrap();
        let outputs = recorded
            .iter()
            .filter_map(|i| match i {
                Item::ToolOutput { output, .. } => Some(output.clone()),
                _ => None,
            })
            .collect();
        let items = recorded.iter().map(item_line).collect();
        Asked {
            status,
            turns,
            failure,
            items,
            outputs,
            events,
            raw_events,
        }
    }
}

fn event_line(e: &EventKind) -> String {
    match e {
        EventKind::TurnStarted { turn, max_turns } => format!("turn {turn}/{max_turns}"),
        EventKind::ToolCall { name, code, .. } => format!("call {name}: {code}"),
        EventKind::CellOutput { text, .. } => format!("output: {}", text.trim_end()),
        EventKind::CellResult { status, .. } => format!("result: {status:?}"),
        EventKind::Text { text } => format!("text: {text}"),
        EventKind::Status { message } => format!("status: {message}"),
        other => serde_json::to_value(other).unwrap()["type"]
            .as_str()
            .unwrap()
            .to_string(),
    }
}

fn item_line(i: &Item) -> String {
    match i {
        Item::User { text } => format!("user: {text}"),
        Item::Assistant { text } => format!("assistant: {text}"),
        Item::ToolCall {
            name, arguments, ..
        } => format!("call {name}: {arguments}"),
        Item::ToolOutput {
            output, is_error, ..
        } => format!(
            "{}: {}",
            if *is_error { "error" } else { "output" },
            output.lines().next().unwrap_or("")
        ),
        Item::Reasoning { summary, .. } => format!("reasoning: {summary}"),
    }
}

fn py(id: &str, code: &str) -> Step {
    ScriptedModel::python(id, code)
}

fn say(text: &str) -> Step {
    Step::Reply(vec![Item::Assistant { text: text.into() }])
}

/// The items' lines, each cut to its first `n` characters (timings vary).
fn heads(lines: &[String], n: usize) -> Vec<String> {
    lines.iter().map(|l| l.chars().take(n).collect()).collect()
}

#[tokio::test]
async fn an_answer_after_a_call_finishes_the_ask() {
    let sandbox = FakeSandbox::default();
    let a = ask(&sandbox, [py("c1", "print hello"), say("It says hello.")])
        .run()
        .await;
    assert_eq!(a.status, RunStatus::Finished);
    assert_eq!(a.turns, 2);
    assert!(a.failure.is_none());
    assert_eq!(
        heads(&a.items, 40),
        [
            "user: look at the data",
            r#"call python: {"code":"print hello"}"#,
            "output: status: ok (0.00 s)",
            "assistant: It says hello.",
        ]
    );
    assert_eq!(
        a.events,
        [
            "turn 1/25",
            "call python: print hello",
            "output: hello",
            "result: Some(Ok)",
            "turn 2/25",
            "text: It says hello.",
        ]
    );
}

#[tokio::test]
async fn errors_are_observations_and_the_ask_goes_on() {
    let sandbox = FakeSandbox::default();
    let a = ask(
        &sandbox,
        [
            py("c1", "fail"),
            Step::Reply(vec![ScriptedModel::call(
                "c2",
                "rm",
                serde_json::json!({"path": "/"}),
            )]),
            Step::Reply(vec![Item::ToolCall {
                call_id: "c3".into(),
                name: "python".into(),
                arguments: "{not json".into(),
                form: CallForm::Structured,
            }]),
            say("Done, despite the errors."),
        ],
    )
    .run()
    .await;
    assert_eq!(a.status, RunStatus::Finished);
    let errors: Vec<_> = a
        .items
        .iter()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(errors.len(), 3, "{:#?}", a.items);
    assert!(
        errors[0].starts_with("error: status: error"),
        "{}",
        errors[0]
    );
    assert!(errors[1].contains("unknown tool `rm`"), "{}", errors[1]);
    assert!(errors[2].contains("not valid JSON"), "{}", errors[2]);
    assert_eq!(
        a.events
            .iter()
            .filter(|e| e.starts_with("result: "))
            .collect::<Vec<_>>(),
        ["result: Some(Error)", "result: None", "result: None"]
    );
}

#[tokio::test]
async fn the_turn_limit_ends_the_ask_with_a_written_summary() {
    let sandbox = FakeSandbox::default();
    let mut a = ask(
        &sandbox,
        [
            py("c1", "print 1"),
            py("c2", "print 2"),
            py("c3", "print 3"),
            say("Summary: I printed two numbers."),
        ],
    );
    a.limits.max_turns = 2;
    let a = a.run().await;
    assert_eq!(
        a.status,
        RunStatus::MaxTurns {
            turns: 2,
            missing: vec![]
        }
    );
    let items = heads(&a.items, 60);
    // The third call comes in the tool-less wrap-up turn: ignored, only words count.
    assert_eq!(
        items[5..],
        ["user: [from the app] The ask stopped: reached the limit of 2"][..],
        "{items:#?}"
    );
    assert!(!a.items.iter().any(|l| l.contains("print 3")));
}

#[tokio::test]
async fn stop_during_the_summary_after_a_limit_ends_the_ask_at_once() {
    let sandbox = FakeSandbox::default();
    // The summary turn never answers: only Stop ends it before its bound (a minute).
    let mut a = ask(&sandbox, [py("c1", "print 1"), Step::Hang]);
    a.limits.max_turns = 1;
    let (cancel, log) = (a.cancel.clone(), a.model_log.clone());
    let requests = log.clone();
    let stopper = tokio::spawn(async move {
        // Stop once the model has been sent the summary turn (its second request).
        while log.lock().unwrap().len() < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        cancel.cancel();
        std::time::Instant::now()
    });
    let a = a.run().await;
    let ended = std::time::Instant::now();
    let stopped = stopper.await.unwrap();
    let took = ended.duration_since(stopped);
    assert!(took < Duration::from_secs(1), "{took:?} after Stop");
    assert!(
        matches!(a.status, RunStatus::MaxTurns { turns: 1, .. }),
        "{:?}",
        a.status
    );
    // What was stopped was the summary turn: offered no tools.
    let seen = requests.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert!(seen[1].tools.is_empty(), "{:?}", seen[1].tools);
    assert!(
        a.items
            .iter()
            .any(|l| l.contains("Tools are no longer available")),
        "{:#?}",
        a.items
    );
}

#[tokio::test]
async fn the_wall_time_interrupts_the_running_call_then_asks_for_a_summary() {
    let sandbox = FakeSandbox::default();
    let mut a = ask(&sandbox, [py("c1", "sleep 30000"), say("Out of time.")]);
    a.limits.wall_time = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let a = a.run().await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        a.status,
        RunStatus::TimeLimit {
            seconds: 0,
            missing: vec![]
        }
    );
    let items = heads(&a.items, 50);
    assert!(
        items[2].starts_with("error: status: cancelled"),
        "{items:#?}"
    );
    assert!(
        items[3].starts_with("user: [from the app] The ask "),
        "{items:#?}"
    );
    assert_eq!(items[4], "assistant: Out of time.");
}

#[tokio::test]
async fn the_cost_budget_is_checked_before_each_turn() {
    let sandbox = FakeSandbox::default();
    let usage = Usage {
        input_tokens: 1_000_000,
        output_tokens: 0,
        cached_tokens: 0,
    };
    let call = ScriptedModel::call("c1", "python", serde_json::json!({"code": "print 1"}));
    let mut a = ask(
        &sandbox,
        [
            Step::Costly(vec![call], usage),
            py("c2", "print 2"),
            say("Spent."),
        ],
    );
    a.limits.max_cost_usd = Some(1.0);
    a.price = Some(Price {
        input: 2.0,
        cached_input: None,
        output: 0.0,
    });
    let a = a.run().await;
    assert_eq!(
        a.status,
        RunStatus::CostLimit {
            usd: 1.0,
            missing: vec![]
        }
    );
    assert_eq!(a.turns, 1);
    assert!(!a.items.iter().any(|l| l.contains("print 2")));
    let cost = a.raw_events.iter().find_map(|e| match e {
        EventKind::Usage { cost_usd, .. } => *cost_usd,
        _ => None,
    });
    assert_eq!(cost, Some(2.0));
}

#[tokio::test]
async fn cancelling_stops_a_model_that_never_answers() {
    let sandbox = FakeSandbox::default();
    let a = ask(&sandbox, [py("c1", "print 1"), Step::Hang]);
    // Stop once the model has been asked the second time and hangs.
    a.stop_after_requests(2);
    let requests = a.model_log.clone();
    let a = a.run().await;
    assert_eq!(a.status, RunStatus::Cancelled);
    assert_eq!(a.turns, 2);
    assert_eq!(requests.lock().unwrap().len(), 2);
    assert!(a.failure.is_none());
}

#[tokio::test]
async fn cancelling_interrupts_running_code() {
    let sandbox = FakeSandbox::default();
    // Stop once the cell runs (its first line came), not on a timer.
    let a = ask(
        &sandbox,
        [py("c1", "print started\nsleep 30000"), say("never")],
    )
    .stop_at("output: started");
    let a = a.run().await;
    assert_eq!(a.status, RunStatus::Cancelled);
    // The interrupted call's result is kept: the transcript stays whole.
    assert_eq!(a.items.len(), 3, "{:#?}", a.items);
    assert!(
        a.items[2].starts_with("error: status: cancelled"),
        "{}",
        a.items[2]
    );
    assert!(a.outputs[0].contains("started"), "{}", a.outputs[0]);
}

#[tokio::test]
async fn a_model_error_fails_the_ask_and_keeps_it_typed() {
    let sandbox = FakeSandbox::default();
    let a = ask(&sandbox, [Step::Fail("the provider is down".into())])
        .run()
        .await;
    assert_eq!(
        a.status,
        RunStatus::Failed {
            message: "the model failed: the provider is down".into()
        }
    );
    assert!(a.failure.is_some());
}

#[tokio::test]
async fn a_context_too_long_reply_shrinks_the_history_once() {
    let sandbox = FakeSandbox::default();
    let a = ask(&sandbox, [Step::ContextTooLong, Step::ContextTooLong])
        .run()
        .await;
    // Nothing to shrink in a one-item history: the error is the model's.
    let RunStatus::Failed { message } = &a.status else {
        panic!("{:?}", a.status)
    };
    assert!(message.starts_with("the model failed: "), "{message}");
    assert!(matches!(
        a.failure.as_ref().unwrap().downcast_ref::<ModelError>(),
        Some(ModelError::ContextTooLong { .. })
    ));
}

#[tokio::test]
async fn a_broken_sandbox_fails_the_ask() {
    let a = ask(&Broken, [py("c1", "print 1"), say("never")])
        .run()
        .await;
    assert_eq!(
        a.status,
        RunStatus::Failed {
            message: "the sandbox failed: the engine stopped answering".into()
        }
    );
    assert_eq!(a.turns, 1);
}

#[tokio::test]
async fn a_transcript_that_cannot_be_written_fails_the_ask() {
    let sandbox = FakeSandbox::default();
    let mut a = ask(&sandbox, [py("c1", "print 1"), say("never")]);
    a.host.fail_after = Some(2);
    let a = a.run().await;
    assert_eq!(
        a.status,
        RunStatus::Failed {
            message: "no space left on device".into()
        }
    );
}

#[tokio::test]
async fn missing_or_touched_outputs_are_reminded_twice_then_the_ask_is_incomplete() {
    let sandbox = FakeSandbox::default();
    let mut a = ask(
        &sandbox,
        [
            say("Here it is."),
            // A small model's way out: the file exists, empty.
            py("c1", "write output/chart.png"),
            say("Done."),
            say("I could not make it."),
        ],
    );
    a.task = "plot it to output/chart.png";
    let a = a.run().await;
    assert_eq!(
        a.status,
        RunStatus::Incomplete {
            problems: vec![crate::protocol::OutputProblem {
                path: "output/chart.png".into(),
                problem: "is empty (0 bytes)".into(),
            }]
        }
    );
    assert_eq!(
        a.status.to_string(),
        "incomplete: output/chart.png is empty (0 bytes)"
    );
    assert!(a.items[2].starts_with(
        "user: [from the app] Not done yet: output/chart.png does not exist. The task asks"
    ));
    // Before any code ran, the reminder offers no way out; the last one, after, does.
    assert!(!a.items[2].contains("why"), "{}", a.items[2]);
    assert!(a.items[6]
        .starts_with("user: [from the app] Not done yet: output/chart.png is empty (0 bytes)."));
    assert!(a.items[6].contains("say why"), "{}", a.items[6]);
    assert_eq!(a.items.last().unwrap(), "assistant: I could not make it.");
}

#[tokio::test]
async fn a_real_file_after_a_reminder_finishes_the_ask() {
    let sandbox = FakeSandbox::default();
    let mut a = ask(
        &sandbox,
        [
            py("c1", "write output/chart.png not a png"),
            say("Saved."),
            py("c2", "png output/chart.png"),
            say("Saved, for real."),
        ],
    );
    a.task = "plot it to output/chart.png";
    let a = a.run().await;
    assert_eq!(a.status, RunStatus::Finished);
    assert!(a.items[4].contains(
        "output/chart.png is not a PNG image (it does not start with the PNG signature)"
    ));
}

#[tokio::test]
async fn a_call_no_one_could_read_is_not_the_answer() {
    let sandbox = FakeSandbox::default();
    let a = ask(
        &sandbox,
        [
            say("```json\n{\"name\": \"python\", \"arguments\": {\"code\": print(1)}}\n```"),
            say("Here is the code:\n```python\nprint 1\n```\n"
                .repeat(30)
                .as_str()),
            say("Still no call."),
        ],
    )
    .run()
    .await;
    assert_eq!(a.status, RunStatus::Finished);
    assert_eq!(a.turns, 3);
    let nothing: Vec<&str> = a
        .raw_events
        .iter()
        .filter_map(|e| match e {
            EventKind::NothingRan { reason } => Some(reason.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        nothing,
        [
            "your reply looks like a tool call written as JSON, but it could not be read as one",
            "your reply holds code but calls no tool, so the code did not run",
        ]
    );
    assert!(a.items[2].starts_with("user: [from the app] Nothing was run: your reply looks like"));
    assert!(a.items[2].contains("```python"));
}

#[tokio::test]
async fn an_empty_or_cut_off_reply_is_not_an_answer() {
    let sandbox = FakeSandbox::default();
    let a = ask(
        &sandbox,
        [
            say("  "),
            Step::CutOff(vec![Item::Assistant {
                text: "The answer is".into(),
            }]),
            say("The answer is 42."),
        ],
    )
    .run()
    .await;
    assert_eq!(a.status, RunStatus::Finished);
    assert_eq!(a.turns, 3);
    assert_eq!(
        heads(&a.items, 60)[2..],
        [
            "user: [from the app] Your last reply held no answer text. Co",
            "assistant: The answer is",
            "user: [from the app] Your last reply was cut off at the outp",
            "assistant: The answer is 42.",
        ][..]
    );
}

#[tokio::test]
async fn replies_cut_as_loops_are_sampled_warmer_and_the_third_in_a_row_stops_the_ask() {
    let sandbox = FakeSandbox::default();
    let looped = Cut {
        what: Capped::Repetition,
        cap: 50,
    };
    let text = || {
        vec![Item::Assistant {
            text: "again again".into(),
        }]
    };
    // Two loops, then the model gets out: the ask goes on, each turn warmer.
    let mut model = ScriptedModel::new([
        Step::Cut(text(), looped),
        Step::Cut(text(), looped),
        Step::Reply(vec![Item::Assistant {
            text: "Done.".into(),
        }]),
    ]);
    let log = model.log.clone();
    let host = Stub::default();
    let mut agent = Agent::new(&mut model, &sandbox, &host, Vec::new());
    let status = agent
        .run("say something", &CancellationToken::new())
        .await
        .status;
    drop(agent);
    assert_eq!(status, RunStatus::Finished);
    let repeats: Vec<u32> = log.lock().unwrap().iter().map(|s| s.repeats).collect();
    assert_eq!(repeats, [0, 1, 2]);
    // Three in a row: the model keeps looping, and the ask stops.
    let a = ask(
        &sandbox,
        [
            Step::Cut(text(), looped),
            Step::Cut(text(), looped),
            Step::Cut(text(), looped),
        ],
    )
    .run()
    .await;
    let RunStatus::Failed { message } = &a.status else {
        panic!("{:?}", a.status)
    };
    assert!(
        message.contains("fell into a loop 3 times in a row"),
        "{message}"
    );
}

#[tokio::test]
async fn a_cut_reply_runs_nothing_and_two_in_a_row_fail_the_ask() {
    let sandbox = FakeSandbox::default();
    let cut = Cut {
        what: Capped::Arguments,
        cap: 1024,
    };
    let call = ScriptedModel::call(
        "c1",
        "python",
        serde_json::json!({"code": "write output/x.txt y"}),
    );
    let a = ask(
        &sandbox,
        [
            Step::Cut(vec![call.clone()], cut),
            Step::Cut(vec![call], cut),
        ],
    )
    .run()
    .await;
    assert!(sandbox.file("output/x.txt").is_none(), "a cut call ran");
    let RunStatus::Failed { message } = &a.status else {
        panic!("{:?}", a.status)
    };
    assert!(message.contains("twice in a row"), "{message}");
    assert!(matches!(
        a.failure.as_ref().unwrap().downcast_ref::<ModelError>(),
        Some(ModelError::ReplyTooLarge { .. })
    ));
    assert!(
        a.items[2].starts_with("error: Not run: your last reply was cut"),
        "{:#?}",
        a.items
    );
}

#[tokio::test]
async fn notes_from_the_host_reach_the_model_with_the_next_result() {
    let sandbox = FakeSandbox::default();
    let a = ask(&sandbox, [py("c1", "print 1"), say("Noted.")]);
    a.host
        .notes
        .lock()
        .unwrap()
        .push("the user added more.csv".into());
    let a = a.run().await;
    assert_eq!(a.status, RunStatus::Finished);
    assert_eq!(a.outputs.len(), 1);
    assert!(
        a.outputs[0].contains("the user added more.csv"),
        "{}",
        a.outputs[0]
    );
}

#[tokio::test]
async fn approved_edited_and_rejected_calls_and_the_wait_is_off_the_clock() {
    let sandbox = FakeSandbox::default();
    let mut a = ask(
        &sandbox,
        [
            Step::Reply(vec![
                Item::Assistant {
                    text: "First I look.".into(),
                },
                Item::ToolCall {
                    call_id: "c1".into(),
                    name: "python".into(),
                    arguments: r#"{"code": "print one"}"#.into(),
                    form: CallForm::Structured,
                },
            ]),
            py("c2", "print two"),
            Step::Reply(vec![Item::ToolCall {
                call_id: "c3".into(),
                name: "shell".into(),
                arguments: r#"{"command": "rm -rf output"}"#.into(),
                form: CallForm::Structured,
            }]),
            say("Done."),
        ],
    );
    // Waiting for the person takes longer than the ask's whole wall time.
    a.limits.wall_time = Duration::from_millis(400);
    *a.host.answers.lock().unwrap() = [
        (Duration::from_millis(300), Decision::Approve),
        (
            Duration::from_millis(300),
            Decision::Edit {
                code: "print twenty".into(),
            },
        ),
        (
            Duration::from_millis(300),
            Decision::Reject {
                reason: "keep the outputs".into(),
            },
        ),
    ]
    .into();
    let asked = a.run().await;
    assert_eq!(asked.status, RunStatus::Finished, "{:?}", asked.items);
    assert_eq!(
        heads(&asked.items, 60),
        [
            "user: look at the data",
            "assistant: First I look.",
            r#"call python: {"code": "print one"}"#,
            "output: status: ok (0.00 s)",
            // The edit is the call the history holds; the model is told.
            r#"call python: {"code":"print twenty"}"#,
            "output: status: ok (0.00 s)",
            r#"call shell: {"command": "rm -rf output"}"#,
            "error: Not run: the analyst rejected this call. Their reason",
            "assistant: Done.",
        ]
    );
    assert!(asked.outputs[1].contains("The analyst edited this call"));
    assert!(asked.outputs[2].contains("keep the outputs"));
    // The reason the model gave is what the person reads with the request; the text
    // comes before the request.
    let first = asked
        .raw_events
        .iter()
        .find_map(|e| match e {
            EventKind::ApprovalRequested { reason, code, .. } => {
                Some((reason.clone(), code.clone()))
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(
        first,
        ("First I look.".to_string(), "print one".to_string())
    );
    assert!(asked.outputs[1].contains("twenty"), "{}", asked.outputs[1]);
    let text_at = asked.events.iter().position(|e| e == "text: First I look.");
    let request_at = asked.events.iter().position(|e| e == "approval_requested");
    assert!(text_at < request_at, "{:?}", asked.events);
}

#[tokio::test]
async fn a_cancel_while_a_call_waits_runs_nothing_and_answers_every_call() {
    let sandbox = FakeSandbox::default();
    let a = ask(&sandbox, [py("c1", "print(1)"), say("never")]);
    *a.host.answers.lock().unwrap() = [(Duration::from_secs(600), Decision::Approve)].into();
    // Stop while the call waits for the analyst.
    let asked = a.stop_at("approval_requested").run().await;
    assert_eq!(asked.status, RunStatus::Cancelled);
    assert_eq!(
        heads(&asked.items, 80),
        [
            "user: look at the data",
            r#"call python: {"code":"print(1)"}"#,
            "error: Not run: the ask was cancelled before this call was approved.",
        ]
    );
    assert!(!asked.events.iter().any(|e| e.starts_with("output:")));
}

#[tokio::test]
async fn a_limit_says_which_named_outputs_it_left_unmade() {
    let sandbox = FakeSandbox::default();
    let mut a = ask(
        &sandbox,
        [
            py("c1", "png output/chart.png"),
            py("c2", "print 2"),
            say("Summary: the chart is there, the table is not."),
        ],
    );
    a.task = "plot output/chart.png and list output/table.csv";
    a.limits.max_turns = 2;
    let a = a.run().await;
    let missing = vec![crate::protocol::OutputProblem {
        path: "output/table.csv".into(),
        problem: "does not exist".into(),
    }];
    assert_eq!(a.status, RunStatus::MaxTurns { turns: 2, missing });
    assert_eq!(
        a.status.to_string(),
        "stopped: reached the limit of 2 turns; not made: output/table.csv does not exist"
    );
}

#[tokio::test]
async fn the_same_call_again_is_told_to_move_on() {
    let sandbox = FakeSandbox::default();
    let a = ask(
        &sandbox,
        [
            py("c1", "print head"),
            py("c2", "print head"),
            py("c3", "print tail"),
            say("Done."),
        ],
    )
    .run()
    .await;
    assert_eq!(a.status, RunStatus::Finished);
    assert!(!a.outputs[0].contains("same as the one before"));
    assert!(
        a.outputs[1].contains("This call is the same as the one before it (2 time(s) in a row)")
    );
    assert!(!a.outputs[2].contains("same as the one before"));
}

/// A local model in step mode that spends six turns on failing cells without writing
/// the file the task names sees the ask again from the start, with one note; the
/// transcript keeps every turn. A native (hosted) model keeps its whole history.
#[tokio::test]
async fn a_stuck_local_model_starts_afresh_without_its_failed_cells_in_view() {
    for mode in [Some(CallMode::Schema), None] {
        let sandbox = FakeSandbox::default();
        let mut steps: Vec<Step> = (1..=6)
            .map(|n| py(&format!("c{n}"), &format!("print try {n}\nfail")))
            .collect();
        steps.extend([
            py("c7", "png output/chart.png"),
            say("The chart is written."),
        ]);
        let mut a = ask(&sandbox, steps);
        a.task = "plot the data to output/chart.png";
        a.call_mode = mode;
        let log = a.model_log.clone();
        let a = a.run().await;
        assert_eq!(a.status, RunStatus::Finished);
        let fresh: Vec<(u32, u32)> = a
            .raw_events
            .iter()
            .filter_map(|e| match e {
                EventKind::Notice(Notice::FreshStart {
                    attempt,
                    stale_turns,
                }) => Some((*attempt, *stale_turns)),
                _ => None,
            })
            .collect();
        let seventh = log.lock().unwrap()[6].items.clone();
        let calls = seventh
            .iter()
            .filter(|i| matches!(i, Item::ToolCall { .. }))
            .count();
        // Every call stays in the transcript either way.
        assert_eq!(a.items.iter().filter(|l| l.starts_with("call ")).count(), 7);
        if mode.is_none() {
            assert!(fresh.is_empty());
            assert_eq!(calls, 6, "a native model sees its whole history");
            continue;
        }
        assert_eq!(fresh, [(2, 6)], "one fresh start, after six stale turns");
        assert_eq!(calls, 0, "the failed attempt is out of view");
        let lines: Vec<String> = seventh.iter().map(item_line).collect();
        assert_eq!(lines[0], "user: plot the data to output/chart.png");
        assert!(
            lines[1].starts_with("user: [from the app] A fresh start: 6 turns wrote none of the missing files (the last error: ValueError: failed on purpose"),
            "{}",
            lines[1]
        );
        assert!(
            !lines[1].contains(" at `"),
            "the failing line is not shown again: {}",
            lines[1]
        );
        assert!(
            lines[1].contains("[checklist] output/chart.png does not exist"),
            "{}",
            lines[1]
        );
        assert_eq!(lines.len(), 2);
        // The turn after the fresh start sees its own call.
        let eighth: Vec<String> = log.lock().unwrap()[7].items.iter().map(item_line).collect();
        assert_eq!(eighth.len(), 4);
    }
}
