//! A model that replays a fixed script of replies: for tests and demos of the loop.

use std::collections::VecDeque;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::{Item, Model, Reply, Request};

/// One scripted step: either a reply, or a wait that only cancellation ends.
#[derive(Clone, Debug)]
pub enum Step {
    Reply(Vec<Item>),
    /// Never answers; the loop must cancel it.
    Hang,
    /// Fails like a broken provider would.
    Fail(String),
}

/// Replays `steps` in order; once they run out it answers with a final text.
pub struct ScriptedModel {
    steps: VecDeque<Step>,
    /// Every request's items as the model saw them, for assertions.
    pub seen: Vec<Vec<Item>>,
}

impl ScriptedModel {
    pub fn new(steps: impl IntoIterator<Item = Step>) -> Self {
        ScriptedModel {
            steps: steps.into_iter().collect(),
            seen: Vec::new(),
        }
    }

    /// A tool call item with JSON arguments.
    pub fn call(id: &str, name: &str, arguments: serde_json::Value) -> Item {
        Item::ToolCall {
            call_id: id.into(),
            name: name.into(),
            arguments: arguments.to_string(),
        }
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
        "scripted test model".into()
    }

    async fn respond(
        &mut self,
        request: Request<'_>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Reply> {
        self.seen.push(request.items.to_vec());
        match self.steps.pop_front() {
            Some(Step::Reply(items)) => Ok(Reply {
                items,
                ..Reply::default()
            }),
            Some(Step::Hang) => {
                cancel.cancelled().await;
                anyhow::bail!("cancelled")
            }
            Some(Step::Fail(msg)) => anyhow::bail!(msg),
            None => Ok(Reply {
                items: vec![Item::Assistant {
                    text: "Done.".into(),
                }],
                ..Reply::default()
            }),
        }
    }
}
