//! A model that replays a fixed script of replies: for tests and demos of the loop,
//! and for the command line's `--model replay:FILE`, where FILE is a JSON list of
//! steps: `{"python": "code"}`, `{"shell": "command"}` or `{"say": "final answer"}`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::{CallForm, Delta, Item, Model, Reply, Request, Usage};

/// One scripted step: either a reply, or a wait that only cancellation ends.
#[derive(Clone, Debug)]
pub enum Step {
    Reply(Vec<Item>),
    /// Never answers; the loop must cancel it.
    Hang,
    /// Fails like a broken provider would.
    Fail(String),
    /// A reply stopped at the output-token limit.
    CutOff(Vec<Item>),
    /// The provider says the conversation is too long for the model.
    ContextTooLong,
    /// A reply with its token counts (for cost budgets).
    Costly(Vec<Item>, Usage),
    /// A reply that passed one of the app's caps: these items are what came up to it.
    Cut(Vec<Item>, super::caps::Cut),
}

/// What a scripted model was asked, for assertions.
#[derive(Clone, Debug)]
pub struct Seen {
    pub instructions: String,
    pub items: Vec<Item>,
    pub tools: Vec<String>,
    /// How stuck the loop found the model ([`super::Request::repeats`]).
    pub repeats: u32,
}

/// Replays `steps` in order; once they run out it answers with a final text.
pub struct ScriptedModel {
    steps: VecDeque<Step>,
    name: String,
    /// Every request's items as the model saw them, for assertions.
    pub seen: Vec<Vec<Item>>,
    /// Every request in full, shared so a test keeps it after the model moved into a task.
    pub log: Arc<Mutex<Vec<Seen>>>,
    pub vision: bool,
    pub price: Option<super::pricing::Price>,
    pub context_window: Option<u64>,
    /// How its calls travel, as a server's model would say (none: native calls).
    pub call_mode: Option<(crate::conversation::CallMode, String)>,
}

impl ScriptedModel {
    pub fn new(steps: impl IntoIterator<Item = Step>) -> Self {
        ScriptedModel {
            steps: steps.into_iter().collect(),
            name: "scripted test model".into(),
            seen: Vec::new(),
            log: Arc::default(),
            vision: false,
            price: None,
            context_window: None,
            call_mode: None,
        }
    }

    /// A tool call item with JSON arguments.
    pub fn call(id: &str, name: &str, arguments: serde_json::Value) -> Item {
        Item::ToolCall {
            call_id: id.into(),
            name: name.into(),
            arguments: arguments.to_string(),
            form: CallForm::Structured,
        }
    }

    /// Load a replay script (see the module doc).
    pub fn from_json_file(path: &std::path::Path) -> anyhow::Result<Self> {
        use anyhow::Context;
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the replay script {}", path.display()))?;
        let raw: Vec<std::collections::BTreeMap<String, String>> = serde_json::from_str(&text)
            .with_context(|| {
                format!(
                    "{} is not a JSON list of {{\"python\"|\"shell\"|\"say\": \"...\"}} steps",
                    path.display()
                )
            })?;
        let mut steps = Vec::new();
        for (i, step) in raw.into_iter().enumerate() {
            let id = format!("replay-{}", i + 1);
            let (kind, text) = step
                .into_iter()
                .next()
                .with_context(|| format!("step {} of {} is empty", i + 1, path.display()))?;
            steps.push(match kind.as_str() {
                "python" => Self::python(&id, &text),
                "shell" => Step::Reply(vec![Self::call(
                    &id,
                    "shell",
                    serde_json::json!({ "command": text }),
                )]),
                "say" => Step::Reply(vec![Item::Assistant { text }]),
                other => anyhow::bail!(
                    "step {} of {}: unknown kind `{other}` (python, shell or say)",
                    i + 1,
                    path.display()
                ),
            });
        }
        let mut model = Self::new(steps);
        model.name = format!("replay of {} (scripted, not an LLM)", path.display());
        Ok(model)
    }

    /// A step that runs Python code.
    pub fn python(id: &str, code: &str) -> Step {
        Step::Reply(vec![Self::call(
            id,
            "python",
            serde_json::json!({ "code": code }),
        )])
    }
}

#[async_trait]
impl Model for ScriptedModel {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn vision(&self) -> bool {
        self.vision
    }

    fn price(&self) -> Option<super::pricing::Price> {
        self.price
    }

    fn context_window(&self) -> Option<u64> {
        self.context_window
    }

    fn call_mode(&self) -> Option<(crate::conversation::CallMode, String)> {
        self.call_mode.clone()
    }

    async fn respond(
        &mut self,
        request: Request<'_>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Reply> {
        self.seen.push(request.items.to_vec());
        self.log.lock().unwrap().push(Seen {
            instructions: request.instructions.to_string(),
            items: request.items.to_vec(),
            tools: request.tools.iter().map(|t| t.name.clone()).collect(),
            repeats: request.repeats,
        });
        let step = self.steps.pop_front();
        if let Some(
            Step::Reply(items) | Step::CutOff(items) | Step::Costly(items, _) | Step::Cut(items, _),
        ) = &step
        {
            stream(items, request.on_delta);
        }
        match step {
            Some(Step::Reply(items)) => Ok(Reply {
                items,
                ..Reply::default()
            }),
            Some(Step::CutOff(items)) => Ok(Reply {
                items,
                cut_off: true,
                ..Reply::default()
            }),
            Some(Step::Cut(items, cut)) => Ok(Reply {
                items,
                cut: Some(cut),
                ..Reply::default()
            }),
            Some(Step::Costly(items, usage)) => Ok(Reply {
                items,
                usage,
                ..Reply::default()
            }),
            Some(Step::Hang) => {
                cancel.cancelled().await;
                anyhow::bail!("cancelled")
            }
            Some(Step::Fail(msg)) => anyhow::bail!(msg),
            Some(Step::ContextTooLong) => Err(super::error::ModelError::ContextTooLong {
                message: "the conversation is longer than the model's context window".into(),
            }
            .into()),
            None => Ok(Reply {
                items: vec![Item::Assistant {
                    text: "Done.".into(),
                }],
                ..Reply::default()
            }),
        }
    }
}

/// Stream a scripted reply as a provider would: text and arguments in small pieces.
fn stream(items: &[Item], on_delta: &(dyn Fn(Delta) + Send + Sync)) {
    let pieces = |s: &str| -> Vec<String> {
        let chars: Vec<char> = s.chars().collect();
        chars.chunks(16).map(|c| c.iter().collect()).collect()
    };
    for item in items {
        match item {
            Item::Assistant { text } => {
                for text in pieces(text) {
                    on_delta(Delta::Text { text });
                }
            }
            Item::ToolCall {
                call_id,
                name,
                arguments,
                ..
            } => {
                for (i, arguments) in pieces(arguments).into_iter().enumerate() {
                    on_delta(Delta::ToolCall {
                        call_id: call_id.clone(),
                        name: if i == 0 { name.clone() } else { String::new() },
                        arguments,
                    });
                }
            }
            _ => {}
        }
    }
}
