//! The agent loop: `run(task)` calls `step()` until the model answers without a
//! tool call or a limit ends the run; `step()` asks the model, executes its tool
//! calls in the sandbox and appends what they produced. A tool's failure is an
//! observation for the model, never a crash. Every item is handed to the recorder
//! as soon as it exists, so a crash loses nothing already said or done.

pub mod events;
pub mod instructions;
pub mod tools;

use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use events::{RunEvent, RunStatus};
pub use tools::ToolSet;

use crate::model::{Item, Model, Request, Usage};
use crate::sandbox::Sandbox;

#[derive(Clone, Debug)]
pub struct Limits {
    pub max_turns: u32,
    pub wall_time: Duration,
    /// Per tool call.
    pub call_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_turns: 25,
            wall_time: Duration::from_secs(30 * 60),
            call_timeout: Duration::from_secs(300),
        }
    }
}

/// Receives every conversation item as it happens (the run's transcript).
pub type Recorder<'a> = dyn FnMut(&Item, Option<&Usage>) -> anyhow::Result<()> + Send + 'a;

pub struct Agent<'a> {
    pub model: &'a mut dyn Model,
    pub sandbox: &'a dyn Sandbox,
    pub instructions: String,
    pub tools: ToolSet,
    pub limits: Limits,
    pub emit: &'a (dyn Fn(RunEvent) + Send + Sync),
    pub record: &'a mut Recorder<'a>,
    pub items: Vec<Item>,
    pub usage: Usage,
    pub turns: u32,
}

enum Next {
    Continue,
    Stop(RunStatus),
}

impl Agent<'_> {
    pub async fn run(&mut self, task: &str, cancel: &CancellationToken) -> RunStatus {
        let deadline = tokio::time::Instant::now() + self.limits.wall_time;
        if let Err(e) = self.push(
            Item::User {
                text: task.to_string(),
            },
            None,
        ) {
            return failed(e);
        }
        loop {
            if self.turns >= self.limits.max_turns {
                return RunStatus::MaxTurns { turns: self.turns };
            }
            let step = tokio::select! {
                s = self.step(cancel) => s,
                _ = tokio::time::sleep_until(deadline) => {
                    return RunStatus::TimeLimit { seconds: self.limits.wall_time.as_secs() }
                }
            };
            match step {
                Ok(Next::Continue) => {}
                Ok(Next::Stop(status)) => return status,
                Err(e) => return failed(e),
            }
        }
    }

    async fn step(&mut self, cancel: &CancellationToken) -> anyhow::Result<Next> {
        self.turns += 1;
        (self.emit)(RunEvent::TurnStarted {
            turn: self.turns,
            max_turns: self.limits.max_turns,
        });
        let specs = self.tools.specs();
        let request = Request {
            instructions: &self.instructions,
            items: &self.items,
            tools: &specs,
        };
        let reply = tokio::select! {
            r = self.model.respond(request, cancel) => r,
            _ = cancel.cancelled() => return Ok(Next::Stop(RunStatus::Cancelled)),
        };
        if cancel.is_cancelled() {
            return Ok(Next::Stop(RunStatus::Cancelled));
        }
        let reply = reply.map_err(|e| anyhow::anyhow!("the model failed: {e:#}"))?;
        self.usage += reply.usage;
        let calls = reply.tool_calls().count();
        for (i, item) in reply.items.iter().enumerate() {
            let usage = (i + 1 == reply.items.len()).then_some(&reply.usage);
            self.push(item.clone(), usage)?;
        }
        if calls == 0 {
            return Ok(Next::Stop(RunStatus::Finished));
        }
        for item in reply.items {
            if let Item::ToolCall {
                call_id,
                name,
                arguments,
            } = item
            {
                let output = self.execute(&call_id, &name, &arguments, cancel).await?;
                self.push(output, None)?;
                if cancel.is_cancelled() {
                    return Ok(Next::Stop(RunStatus::Cancelled));
                }
            }
        }
        Ok(Next::Continue)
    }

    /// Run one tool call; only a broken sandbox is an error, everything else is an observation.
    async fn execute(
        &mut self,
        call_id: &str,
        name: &str,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Item> {
        let timeout = self.limits.call_timeout;
        let (output, is_error, status) = match tools::parse(&self.tools, name, arguments) {
            Err(message) => (message, true, None),
            Ok(call) => {
                let r = match call {
                    tools::Call::Python(code) => self.sandbox.python(&code, timeout, cancel).await,
                    tools::Call::Shell(cmd) => self.sandbox.shell(&cmd, timeout, cancel).await,
                }
                .map_err(|e| anyhow::anyhow!("the sandbox failed: {e:#}"))?;
                (
                    tools::observation(&r),
                    r.status != crate::sandbox::ExecStatus::Ok,
                    Some(r.status),
                )
            }
        };
        (self.emit)(RunEvent::ToolOutput {
            call_id: call_id.into(),
            status,
            output: output.clone(),
        });
        Ok(Item::ToolOutput {
            call_id: call_id.into(),
            output,
            is_error,
        })
    }

    /// Append an item: to memory, to the recorder (disk), and as an event.
    fn push(&mut self, item: Item, usage: Option<&Usage>) -> anyhow::Result<()> {
        (self.record)(&item, usage)?;
        match &item {
            Item::Assistant { text } => (self.emit)(RunEvent::AssistantText { text: text.clone() }),
            Item::ToolCall {
                call_id,
                name,
                arguments,
            } => (self.emit)(RunEvent::ToolCall {
                call_id: call_id.clone(),
                name: name.clone(),
                code: tool_source(arguments),
            }),
            _ => {}
        }
        self.items.push(item);
        Ok(())
    }
}

fn failed(e: anyhow::Error) -> RunStatus {
    RunStatus::Failed {
        message: format!("{e:#}"),
    }
}

/// The code or command inside a call's arguments, for display; the raw text if unparsable.
pub fn tool_source(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| {
            ["code", "command"]
                .iter()
                .find_map(|k| v.get(k).and_then(|s| s.as_str()).map(str::to_owned))
        })
        .unwrap_or_else(|| arguments.to_string())
}
