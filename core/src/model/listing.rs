//! Which models a provider's server offers, so the model name is picked, not guessed:
//! Ollama's own list (`GET /api/tags`, with sizes), the OpenAI-style `GET /v1/models`
//! of OpenAI and of compatible servers (llama.cpp, vLLM, LM Studio, gateways), and
//! Anthropic's `GET /v1/models`. The offline analyst comes first in every list the
//! app shows: it is always there.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::anthropic::Messages;
use super::chat_completions::Chat;
use super::config::{ProviderConfig, ProviderKind};
use super::http::{join_url, HttpModel};
use super::openai_responses::Responses;

/// How long a server may take to list its models.
const LIST_TIMEOUT: Duration = Duration::from_secs(10);
/// The most models one list keeps (a gateway may offer thousands).
const MAX_LISTED: usize = 500;

/// One model a server offers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Listed {
    /// As `--model` takes it: `ollama:qwen2.5-coder:7b`, `openai:gpt-5.4`, `offline`.
    pub spec: String,
    /// The server's name for it.
    pub id: String,
    /// What else the server says: the size on disk, the display name.
    pub detail: Option<String>,
}

/// The offline analyst, first in every list.
pub fn offline() -> Listed {
    Listed {
        spec: "offline".into(),
        id: "offline".into(),
        detail: Some("the built-in analyst (rule-based, not an LLM)".into()),
    }
}

/// The models of the server `config` points at; `provider` is how `--model` spells it
/// (`ollama`, `openai-compatible`, `openai`, `anthropic`), for the specs.
pub async fn list(config: &ProviderConfig, provider: &str) -> anyhow::Result<Vec<Listed>> {
    let spec = |id: &str| format!("{provider}:{id}");
    let mut out = match config.kind {
        ProviderKind::OpenAiCompatible => {
            let model = HttpModel::<Chat>::new(config.clone())?;
            let t = model.transport();
            let ollama = provider == "ollama" || config.base_url.contains(":11434");
            let tags = match ollama {
                true => {
                    let root = config.base_url.trim_end_matches('/');
                    let root = root.strip_suffix("/v1").unwrap_or(root);
                    t.get_json(&join_url(root, "api/tags"), LIST_TIMEOUT)
                        .await
                        .ok()
                }
                false => None,
            };
            match tags {
                Some(v) => ollama_tags(&v, &spec),
                None => {
                    let v = t
                        .get_json(&join_url(&config.base_url, "models"), LIST_TIMEOUT)
                        .await?;
                    openai_models(&v, &spec)?
                }
            }
        }
        ProviderKind::OpenAi => {
            let model = HttpModel::<Responses>::new(config.clone())?;
            let v = model
                .transport()
                .get_json(&join_url(&config.base_url, "models"), LIST_TIMEOUT)
                .await?;
            openai_models(&v, &spec)?
        }
        ProviderKind::Anthropic => {
            let model = HttpModel::<Messages>::new(config.clone())?;
            let base = config.base_url.trim_end_matches('/');
            let url = if base.ends_with("/v1") {
                join_url(base, "models")
            } else {
                join_url(base, "v1/models")
            };
            let v = model.transport().get_json(&url, LIST_TIMEOUT).await?;
            openai_models(&v, &spec)?
        }
    };
    out.truncate(MAX_LISTED);
    Ok(out)
}

/// `{"models": [{"name": "qwen2.5-coder:7b", "size": 4683087332, ...}]}`.
fn ollama_tags(v: &Value, spec: &dyn Fn(&str) -> String) -> Vec<Listed> {
    let mut out: Vec<Listed> = v["models"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let id = m["name"].as_str().or_else(|| m["model"].as_str())?;
            let detail = m["size"].as_u64().map(|b| {
                let mut d = format!("{:.1} GB", b as f64 / 1e9);
                if let Some(p) = m["details"]["parameter_size"].as_str() {
                    d = format!("{p}, {d}");
                }
                d
            });
            Some(Listed {
                spec: spec(id),
                id: id.to_string(),
                detail,
            })
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// `{"data": [{"id": "...", "display_name": "..."}]}` (OpenAI, compatible servers,
/// Anthropic).
fn openai_models(v: &Value, spec: &dyn Fn(&str) -> String) -> anyhow::Result<Vec<Listed>> {
    let Some(data) = v["data"].as_array() else {
        anyhow::bail!("the server's model list has no `data` array");
    };
    let mut out: Vec<Listed> = data
        .iter()
        .filter_map(|m| {
            let id = m["id"].as_str()?;
            Some(Listed {
                spec: spec(id),
                id: id.to_string(),
                detail: m["display_name"]
                    .as_str()
                    .or_else(|| m["owned_by"].as_str())
                    .map(str::to_string),
            })
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_list_shapes_are_read() {
        let spec = |id: &str| format!("ollama:{id}");
        let tags = json!({"models": [
            {"name": "qwen2.5-coder:7b", "size": 4_683_087_332u64, "details": {"parameter_size": "7.6B"}},
            {"name": "llama3.2:1b", "size": 1_321_098_329u64}
        ]});
        let listed = ollama_tags(&tags, &spec);
        assert_eq!(listed[0].spec, "ollama:llama3.2:1b");
        assert_eq!(listed[1].detail.as_deref(), Some("7.6B, 4.7 GB"));
        let spec = |id: &str| format!("openai-compatible:{id}");
        let models = json!({"object": "list", "data": [{"id": "qwen2.5-coder-1.5b", "owned_by": "llamacpp"}]});
        assert_eq!(
            openai_models(&models, &spec).unwrap(),
            [Listed {
                spec: "openai-compatible:qwen2.5-coder-1.5b".into(),
                id: "qwen2.5-coder-1.5b".into(),
                detail: Some("llamacpp".into())
            }]
        );
        assert!(openai_models(&json!({"error": "x"}), &spec).is_err());
    }
}
