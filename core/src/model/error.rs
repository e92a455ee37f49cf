//! What went wrong with a provider, in words a user can act on, and whether trying
//! again can help.
//!
//! Every message names the provider and the endpoint, says what to fix (the key
//! variable, the base URL, the model name) and never contains the key: server text is
//! passed through [`redact`] first.
//!
//! What [`crate::model::Model::respond`] returns on failure is an [`anyhow::Error`]
//! holding a [`ModelError`], so the loop and the UI branch on its kind without reading
//! the words:
//!
//! ```
//! use sandalyst::model::error::ModelError;
//! fn shrink_and_retry(err: &anyhow::Error) -> bool {
//!     matches!(err.downcast_ref::<ModelError>(), Some(ModelError::ContextTooLong { .. }))
//! }
//! ```

use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use serde::Serialize;

use super::secret::{redact, Credentials, KeySource};
use super::Delta;

/// Why a model call failed, as a kind to branch on; its text is the message for the
/// person at the screen (unchanged from what the providers always said).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelError {
    /// The key is missing or rejected, or has no access to the model (401, 403).
    #[error("{message}")]
    Auth { message: String },
    /// The account has no quota or credit left.
    #[error("{message}")]
    Quota { message: String },
    /// The conversation does not fit the model's context window: shrink the history
    /// (stub old tool outputs) and ask again.
    #[error("{message}")]
    ContextTooLong { message: String },
    /// Still rate limited when the retries ran out, or asked to wait longer than
    /// Sandalyst waits (`retry_after_ms`, when the server said).
    #[error("{message}")]
    RateLimited {
        message: String,
        retry_after_ms: Option<u64>,
    },
    /// The server could not be reached or kept failing: connection refused, timeouts,
    /// 5xx, streams that broke or carried garbage, on every attempt.
    #[error("{message}")]
    Unavailable { message: String },
    /// The request was refused as it stands: wrong model name or base URL (404, a web
    /// page), a 4xx the server explains.
    #[error("{message}")]
    BadRequest { message: String },
    /// A reply larger than the app reads ([`crate::model::caps::ReplyCaps`]): a body
    /// that is not streamed, or replies cut at their caps again and again.
    #[error("{message}")]
    ReplyTooLarge { message: String },
    /// The ask was cancelled while the model was being asked.
    #[error("cancelled")]
    Cancelled,
    /// Anything else the provider reported.
    #[error("{message}")]
    Other { message: String },
}

impl ModelError {
    /// A short name of the kind, e.g. `context_too_long`, for events and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            ModelError::Auth { .. } => "auth",
            ModelError::Quota { .. } => "quota",
            ModelError::ContextTooLong { .. } => "context_too_long",
            ModelError::RateLimited { .. } => "rate_limited",
            ModelError::Unavailable { .. } => "unavailable",
            ModelError::BadRequest { .. } => "bad_request",
            ModelError::ReplyTooLarge { .. } => "reply_too_large",
            ModelError::Cancelled => "cancelled",
            ModelError::Other { .. } => "other",
        }
    }

    /// The same error with its message passed through `f` (e.g. to redact a key).
    pub fn map_message(self, f: impl FnOnce(&str) -> String) -> ModelError {
        match self {
            ModelError::Auth { message } => ModelError::Auth {
                message: f(&message),
            },
            ModelError::Quota { message } => ModelError::Quota {
                message: f(&message),
            },
            ModelError::ContextTooLong { message } => ModelError::ContextTooLong {
                message: f(&message),
            },
            ModelError::RateLimited {
                message,
                retry_after_ms,
            } => ModelError::RateLimited {
                message: f(&message),
                retry_after_ms,
            },
            ModelError::Unavailable { message } => ModelError::Unavailable {
                message: f(&message),
            },
            ModelError::BadRequest { message } => ModelError::BadRequest {
                message: f(&message),
            },
            ModelError::ReplyTooLarge { message } => ModelError::ReplyTooLarge {
                message: f(&message),
            },
            ModelError::Cancelled => ModelError::Cancelled,
            ModelError::Other { message } => ModelError::Other {
                message: f(&message),
            },
        }
    }
}

/// The outcome of one failed attempt.
#[derive(Debug)]
pub enum Fault {
    /// Worth another attempt (429, 5xx, a dropped or broken stream); `after` is the
    /// wait the server asked for, if any; `rate_limited` says it was a 429 or its
    /// in-stream equivalent, so running out of attempts is [`ModelError::RateLimited`]
    /// rather than [`ModelError::Unavailable`].
    Transient {
        message: String,
        after: Option<Duration>,
        rate_limited: bool,
    },
    /// Trying again would fail the same way.
    Fatal(ModelError),
    /// The run was cancelled.
    Cancelled,
}

impl Fault {
    pub fn transient(message: impl Into<String>) -> Fault {
        Fault::Transient {
            message: message.into(),
            after: None,
            rate_limited: false,
        }
    }

    pub fn auth(message: impl Into<String>) -> Fault {
        Fault::Fatal(ModelError::Auth {
            message: message.into(),
        })
    }

    pub fn bad_request(message: impl Into<String>) -> Fault {
        Fault::Fatal(ModelError::BadRequest {
            message: message.into(),
        })
    }

    pub fn other(message: impl Into<String>) -> Fault {
        Fault::Fatal(ModelError::Other {
            message: message.into(),
        })
    }

    fn quota(message: impl Into<String>) -> Fault {
        Fault::Fatal(ModelError::Quota {
            message: message.into(),
        })
    }

    fn context(message: impl Into<String>) -> Fault {
        Fault::Fatal(ModelError::ContextTooLong {
            message: message.into(),
        })
    }
}

/// Who was asked, for messages.
pub struct Context<'a> {
    /// "OpenAI", "Anthropic", "the OpenAI-compatible server".
    pub provider: &'a str,
    /// The endpoint without credentials or query, e.g. `https://api.openai.com/v1/responses`.
    pub endpoint: &'a str,
    pub model: &'a str,
    pub credentials: &'a Credentials,
    /// The variable that normally holds this provider's key, for "no key was set" hints.
    pub key_var: &'a str,
    /// Where a decoder reports the reply as it streams.
    pub on_delta: &'a (dyn Fn(Delta) + Send + Sync),
}

/// The server's own words from an error body, whatever the dialect:
/// `{"error":{"message","type","code"}}` (OpenAI, vLLM, llama.cpp, Ollama),
/// `{"type":"error","error":{"type","message"}}` (Anthropic), `{"error":"..."}`,
/// `{"message":"..."}` or `{"detail":"..."}`; else the raw text, shortened.
pub struct ApiError {
    pub message: String,
    /// `code` or `type`, e.g. `context_length_exceeded`, `rate_limit_error`.
    pub code: String,
    /// A numeric code some gateways put in the body (OpenRouter).
    pub status: Option<u16>,
}

impl ApiError {
    pub fn parse(body: &str) -> ApiError {
        let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        ApiError::from_value(&v).unwrap_or_else(|| ApiError {
            message: shorten(body.trim()),
            code: String::new(),
            status: None,
        })
    }

    /// An in-stream `error` event `v`: the error it holds, else its raw `data`.
    pub fn from_event(v: &serde_json::Value, data: &str) -> ApiError {
        ApiError::from_value(v).unwrap_or_else(|| ApiError {
            message: data.to_string(),
            code: String::new(),
            status: None,
        })
    }

    /// From an already parsed body or in-stream error object; None if it holds no error.
    pub fn from_value(v: &serde_json::Value) -> Option<ApiError> {
        let e = v.get("error").filter(|e| !e.is_null()).unwrap_or(v);
        let text = |x: &serde_json::Value| -> Option<String> {
            match x {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            }
        };
        let message = e
            .get("message")
            .and_then(text)
            .or_else(|| text(e))
            .or_else(|| e.get("detail").and_then(text))?;
        let code = ["code", "type"]
            .iter()
            .filter_map(|k| e.get(*k))
            .filter_map(|c| c.as_str().map(str::to_owned))
            .find(|c| c != "error")
            .unwrap_or_default();
        let status = e
            .get("code")
            .and_then(|c| c.as_u64())
            .and_then(|c| u16::try_from(c).ok());
        Some(ApiError {
            message: shorten(&message),
            code,
            status,
        })
    }

    fn is_context_length(&self) -> bool {
        let m = self.message.to_lowercase();
        matches!(
            self.code.as_str(),
            "context_length_exceeded" | "exceed_context_size_error" | "string_above_max_length"
        ) || m.contains("context length")
            || m.contains("context_length")
            || m.contains("context window")
            || m.contains("maximum context")
            || m.contains("prompt is too long")
            || m.contains("exceeds the available context")
            || m.contains("too many tokens")
    }
}

fn shorten(s: &str) -> String {
    const MAX: usize = 400;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut}...")
    }
}

/// The plain-words message for a request that did not fit.
pub fn context_message(ctx: &Context, detail: &str) -> String {
    format!(
        "the conversation is longer than the model's context window (model `{}` at {}: {detail}). \
         Start a new run with smaller inputs or a narrower task, or choose a model with a larger context window",
        ctx.model, ctx.provider
    )
}

/// Classify a non-success HTTP answer.
pub fn from_status(status: StatusCode, headers: &HeaderMap, body: &str, ctx: &Context) -> Fault {
    let key = ctx.credentials.key.as_ref();
    let err = ApiError::parse(body);
    let msg = redact(&err.message, key);
    let said = if msg.is_empty() {
        status.to_string()
    } else {
        format!("{status}: {msg}")
    };
    let code = status.as_u16();
    if err.is_context_length() && (code == 400 || code == 413 || code == 422) {
        return Fault::context(context_message(ctx, &msg));
    }
    match code {
        401 => Fault::auth(auth_message(ctx, &said)),
        403 => Fault::auth(format!(
            "{} refused the request ({said}). The key from {} may not have access to model `{}`; check the key and the model name",
            ctx.provider,
            ctx.credentials.source.setting(),
            ctx.model
        )),
        404 => Fault::bad_request(format!(
            "{} answered 404 at {} ({said}). Check the model name `{}` and the base URL (for Ollama it is http://localhost:11434/v1)",
            ctx.provider, ctx.endpoint, ctx.model
        )),
        429 if err.code == "insufficient_quota" => Fault::quota(format!(
            "the account behind {} has no quota left at {} ({said}); check its plan and billing",
            ctx.credentials.source.setting(),
            ctx.provider
        )),
        408 | 409 | 429 | 500..=599 => Fault::Transient {
            message: format!("{} at {} answered {said}", ctx.provider, ctx.endpoint),
            after: retry_after(headers),
            rate_limited: code == 429,
        },
        400..=499 => Fault::bad_request(format!(
            "{} rejected the request to {} ({said})",
            ctx.provider, ctx.endpoint
        )),
        _ => Fault::other(format!(
            "{} rejected the request to {} ({said})",
            ctx.provider, ctx.endpoint
        )),
    }
}

/// Classify an error reported inside a stream (or a 200 body that is an error).
pub fn from_api_error(err: &ApiError, ctx: &Context) -> Fault {
    let msg = redact(&err.message, ctx.credentials.key.as_ref());
    if err.is_context_length() {
        return Fault::context(context_message(ctx, &msg));
    }
    let what = if err.code.is_empty() {
        msg.clone()
    } else {
        format!("{}: {msg}", err.code)
    };
    let rate_limited = matches!(
        err.code.as_str(),
        "rate_limit_exceeded" | "rate_limit_error"
    ) || err.status == Some(429);
    let transient = rate_limited
        || matches!(
            err.code.as_str(),
            "overloaded_error"
                | "server_error"
                | "api_error"
                | "internal_error"
                | "internal_server_error"
                | "server_is_overloaded"
                | "slow_down"
                | "timeout"
        )
        || err.status.is_some_and(|s| s >= 500);
    match err.code.as_str() {
        "invalid_api_key" | "authentication_error" => Fault::auth(auth_message(ctx, &what)),
        "permission_error" => Fault::auth(format!(
            "{} refused the request ({what}); check the key and the model name",
            ctx.provider
        )),
        "insufficient_quota" => Fault::quota(format!(
            "the account behind {} has no quota left at {} ({what}); check its plan and billing",
            ctx.credentials.source.setting(),
            ctx.provider
        )),
        _ if transient => Fault::Transient {
            message: format!(
                "{} reported an error in the middle of the reply ({what})",
                ctx.provider
            ),
            after: None,
            rate_limited,
        },
        "invalid_request_error" | "not_found_error" => {
            Fault::bad_request(format!("{} reported an error ({what})", ctx.provider))
        }
        _ => Fault::other(format!("{} reported an error ({what})", ctx.provider)),
    }
}

/// A reply that stopped early for a reason other than its length cap (a content
/// filter, say) before it held anything to act on. (A reply cut off at the length cap
/// is not an error: it comes back with [`crate::model::Reply::cut_off`] set.)
pub fn stopped_early(provider: &str, reason: &str) -> Fault {
    Fault::other(format!(
        "{provider} stopped the reply early ({reason}) before it said anything or called a tool"
    ))
}

fn auth_message(ctx: &Context, said: &str) -> String {
    match &ctx.credentials.source {
        KeySource::None => format!(
            "{} at {} wants an API key and none is set ({said}). Set {} or store the key in the OS keychain",
            ctx.provider, ctx.endpoint, ctx.key_var
        ),
        source => format!(
            "{} was rejected by {} at {} ({said}). Put a valid key in {}",
            match source {
                KeySource::Env(var) => var.clone(),
                other => format!("the API key from {}", other.setting()),
            },
            ctx.provider,
            ctx.endpoint,
            source.setting()
        ),
    }
}

/// The wait a 429/503 asks for: `retry-after-ms` (OpenAI), else `Retry-After` in
/// seconds or as an HTTP date.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let v = get("retry-after")?;
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let wait = when.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::secret::ApiKey;

    fn ctx(creds: &Credentials) -> Context<'_> {
        Context {
            provider: "OpenAI",
            endpoint: "https://api.openai.com/v1/responses",
            model: "gpt-5.4",
            credentials: creds,
            key_var: "OPENAI_API_KEY",
            on_delta: &crate::model::no_deltas,
        }
    }

    #[test]
    fn statuses_become_actionable_faults() {
        let creds = Credentials {
            key: ApiKey::new("sk-live-abcdefghijklmnop"),
            source: KeySource::Env("OPENAI_API_KEY".into()),
        };
        let h = HeaderMap::new();
        let body = r#"{"error":{"message":"Incorrect API key provided: sk-live-abcdefghijklmnop","type":"invalid_request_error","code":"invalid_api_key"}}"#;
        match from_status(StatusCode::UNAUTHORIZED, &h, body, &ctx(&creds)) {
            Fault::Fatal(ModelError::Auth { message: m }) => {
                assert!(m.starts_with("OPENAI_API_KEY was rejected"), "{m}");
                assert!(!m.contains("abcdefgh"), "{m}");
            }
            f => panic!("{f:?}"),
        }
        let body = r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}"#;
        assert!(matches!(
            from_status(StatusCode::BAD_REQUEST, &h, body, &ctx(&creds)),
            Fault::Fatal(ModelError::ContextTooLong { message: m }) if m.contains("longer than the model's context window")
        ));
        let mut h = HeaderMap::new();
        h.insert("retry-after", "3".parse().unwrap());
        assert!(matches!(
            from_status(StatusCode::TOO_MANY_REQUESTS, &h, "slow down", &ctx(&creds)),
            Fault::Transient { after: Some(d), rate_limited: true, .. } if d == Duration::from_secs(3)
        ));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        let body = r#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#;
        assert!(matches!(
            from_status(StatusCode::TOO_MANY_REQUESTS, &HeaderMap::new(), body, &ctx(&creds)),
            Fault::Fatal(ModelError::Quota { message: m }) if m.contains("no quota")
        ));
        let none = Credentials::none();
        assert!(matches!(
            from_status(StatusCode::UNAUTHORIZED, &HeaderMap::new(), "", &ctx(&none)),
            Fault::Fatal(ModelError::Auth { message: m }) if m.contains("none is set") && m.contains("OPENAI_API_KEY")
        ));
    }

    #[test]
    fn error_bodies_in_every_dialect_are_read() {
        let a = ApiError::parse(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert_eq!(
            (a.code.as_str(), a.message.as_str()),
            ("overloaded_error", "Overloaded")
        );
        let o = ApiError::parse(r#"{"error":{"code":502,"message":"upstream died"}}"#);
        assert_eq!(o.status, Some(502));
        assert_eq!(
            ApiError::parse(r#"{"error":"model not found"}"#).message,
            "model not found"
        );
        assert_eq!(
            ApiError::parse("<html>bad gateway</html>").message,
            "<html>bad gateway</html>"
        );
    }
}
