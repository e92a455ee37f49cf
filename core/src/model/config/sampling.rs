//! How a model samples its replies, for the servers that take it from the request
//! (Chat Completions: llama.cpp, Ollama, vLLM, LM Studio, gateways). Small local models
//! left at their servers' defaults (temperature 0.8, no reply cap) fall into loops that
//! run for thousands of tokens, so compatible servers get a cap on one reply and a low
//! temperature unless the config file says otherwise, per provider section or per
//! model (`[models."openai-compatible:qwen2.5-coder"]`).
//!
//! ```toml
//! [openai-compatible]
//! temperature = 0.2        # 0 to 2
//! seed = 7                 # the same replies again, where the server supports it
//! max_tokens = 4096        # the longest reply, in tokens
//!
//! [models."openai-compatible:qwen2.5-coder-1.5b"]
//! repeat_penalty = 1.1     # llama.cpp and Ollama only: other servers may refuse it
//! top_p = 0.9
//! tool_calls = "schema"    # how calls travel: auto, native, schema, text
//! ```
//!
//! `tool_calls` ([`ToolCalls`]) is not sampling but is set in the same places: per
//! server and per model.

use serde::Deserialize;

/// The reply cap compatible servers get when nothing is configured: room for a
/// report written in one call, short of a loop that runs for minutes.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// The temperature compatible servers get when nothing is configured.
pub const DEFAULT_TEMPERATURE: f64 = 0.2;

/// Sampling settings; unset ones are not sent (the server's own default applies).
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sampling {
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub seed: Option<u64>,
    /// llama.cpp's and Ollama's own (1 = off); not part of OpenAI's API.
    pub repeat_penalty: Option<f64>,
    pub frequency_penalty: Option<f64>,
    pub presence_penalty: Option<f64>,
    /// How tool calls travel ([`ToolCalls`]); not sent as a field.
    pub tool_calls: Option<ToolCalls>,
}

/// How a Chat Completions server is asked for tool calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCalls {
    /// `native` for a hosted API; for a server on this machine or the local network,
    /// `native` until the first reply that should have been a call and was not, then
    /// `schema`.
    #[default]
    Auto,
    /// The API's `tools` and `tool_calls`, with calls written as text still read.
    Native,
    /// One JSON object per turn under a JSON schema (`response_format`).
    Schema,
    /// The same object as text, read leniently: neither `tools` nor a schema is sent.
    Text,
}

impl Sampling {
    /// `self`, with what `over` sets taking its place.
    pub fn overlaid(self, over: &Sampling) -> Sampling {
        Sampling {
            max_tokens: over.max_tokens.or(self.max_tokens),
            temperature: over.temperature.or(self.temperature),
            top_p: over.top_p.or(self.top_p),
            seed: over.seed.or(self.seed),
            repeat_penalty: over.repeat_penalty.or(self.repeat_penalty),
            frequency_penalty: over.frequency_penalty.or(self.frequency_penalty),
            presence_penalty: over.presence_penalty.or(self.presence_penalty),
            tool_calls: over.tool_calls.or(self.tool_calls),
        }
    }

    /// Every value in the range the APIs accept; `Err` names the first that is not.
    pub fn validate(&self) -> Result<(), String> {
        let ranges = [
            ("temperature", self.temperature, 0.0, 2.0),
            ("top_p", self.top_p, f64::MIN_POSITIVE, 1.0),
            ("repeat_penalty", self.repeat_penalty, 0.5, 2.0),
            ("frequency_penalty", self.frequency_penalty, -2.0, 2.0),
            ("presence_penalty", self.presence_penalty, -2.0, 2.0),
        ];
        for (name, value, lo, hi) in ranges {
            if let Some(v) = value {
                if !(lo..=hi).contains(&v) {
                    let lo = if lo == f64::MIN_POSITIVE {
                        "above 0".to_string()
                    } else {
                        format!("from {lo}")
                    };
                    return Err(format!("{name} is {v}; it must be {lo} to {hi}"));
                }
            }
        }
        if let Some(n) = self.max_tokens {
            if !(16..=1_000_000).contains(&n) {
                return Err(format!("max_tokens is {n}; it must be from 16 to 1000000"));
            }
        }
        Ok(())
    }

    /// [`Sampling::chat_fields`] for a model whose last call repeated the one before
    /// it `repeats` times in a row: warmer by 0.3 a repeat (at most 1.0, never cooler
    /// than set) and another seed, since the same context at a low temperature gives
    /// the same reply again.
    pub fn chat_fields_after(&self, repeats: u32) -> serde_json::Map<String, serde_json::Value> {
        let mut m = self.chat_fields();
        if repeats > 0 {
            let base = self.temperature.unwrap_or(DEFAULT_TEMPERATURE);
            let warmer = (base + 0.3 * f64::from(repeats)).min(1.0).max(base);
            m.insert(
                "temperature".into(),
                ((warmer * 100.0).round() / 100.0).into(),
            );
            if let Some(seed) = self.seed {
                m.insert("seed".into(), seed.wrapping_add(u64::from(repeats)).into());
            }
        }
        m
    }

    /// The fields of a Chat Completions request body: what is set, and the defaults
    /// of [`DEFAULT_MAX_TOKENS`] and [`DEFAULT_TEMPERATURE`].
    pub fn chat_fields(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        let mut put = |k: &str, v: serde_json::Value| {
            m.insert(k.to_string(), v);
        };
        put(
            "max_tokens",
            self.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).into(),
        );
        put(
            "temperature",
            self.temperature.unwrap_or(DEFAULT_TEMPERATURE).into(),
        );
        if let Some(v) = self.top_p {
            put("top_p", v.into());
        }
        if let Some(v) = self.seed {
            put("seed", v.into());
        }
        if let Some(v) = self.repeat_penalty {
            put("repeat_penalty", v.into());
        }
        if let Some(v) = self.frequency_penalty {
            put("frequency_penalty", v.into());
        }
        if let Some(v) = self.presence_penalty {
            put("presence_penalty", v.into());
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_in_a_loop_is_sampled_warmer_with_another_seed() {
        let s = Sampling {
            temperature: Some(0.2),
            seed: Some(7),
            ..Sampling::default()
        };
        assert_eq!(s.chat_fields_after(0), s.chat_fields());
        let once = s.chat_fields_after(1);
        assert_eq!(once["temperature"], serde_json::json!(0.5));
        assert_eq!(once["seed"], serde_json::json!(8));
        assert_eq!(
            s.chat_fields_after(9)["temperature"],
            serde_json::json!(1.0)
        );
        let hot = Sampling {
            temperature: Some(1.5),
            ..Sampling::default()
        };
        assert_eq!(
            hot.chat_fields_after(2)["temperature"],
            serde_json::json!(1.5)
        );
    }

    #[test]
    fn defaults_bound_a_reply_and_settings_overlay() {
        let none = Sampling::default().chat_fields();
        assert_eq!(
            serde_json::Value::Object(none),
            serde_json::json!({"max_tokens": 4096, "temperature": 0.2})
        );
        let section = Sampling {
            temperature: Some(0.7),
            seed: Some(3),
            ..Sampling::default()
        };
        let model = Sampling {
            temperature: Some(0.0),
            repeat_penalty: Some(1.1),
            max_tokens: Some(2048),
            ..Sampling::default()
        };
        assert_eq!(
            serde_json::Value::Object(section.overlaid(&model).chat_fields()),
            serde_json::json!({"max_tokens": 2048, "temperature": 0.0, "seed": 3, "repeat_penalty": 1.1})
        );
    }

    #[test]
    fn values_out_of_range_are_refused_by_name() {
        let bad = |s: Sampling| s.validate().unwrap_err();
        assert_eq!(
            bad(Sampling {
                temperature: Some(3.0),
                ..Sampling::default()
            }),
            "temperature is 3; it must be from 0 to 2"
        );
        assert_eq!(
            bad(Sampling {
                top_p: Some(0.0),
                ..Sampling::default()
            }),
            "top_p is 0; it must be above 0 to 1"
        );
        assert!(bad(Sampling {
            max_tokens: Some(1),
            ..Sampling::default()
        })
        .starts_with("max_tokens is 1"));
        assert!(Sampling::default().validate().is_ok());
    }
}
