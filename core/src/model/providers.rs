//! The providers a run can use, one row each ([`PROVIDERS`]): the name the user writes
//! in `--model NAME:MODEL`, the wire format it speaks, its default base URL, where its
//! key is (an environment variable or the OS keychain), what a model the capability
//! table does not know is assumed to take, and where prices come from.
//!
//! The config ([`super::config`]) reads this table to parse `--model`, find the base
//! URL and the key and open the provider; the `--model` help and the settings page list
//! the providers from it ([`model_flag_help`], the rows are [`serde::Serialize`]).
//! A provider that speaks a wire already here (Chat Completions, say) is one more row;
//! a new wire is its own file (like `anthropic.rs`) plus its row, its [`Wire`] and its
//! [`ProviderKind`] (the config file's section).
//!
//! ```
//! use sandalyst::model::providers::{find, Wire};
//! let ollama = find("ollama").unwrap();
//! assert_eq!(ollama.wire, Wire::ChatCompletions);
//! assert_eq!(ollama.base_url, Some("http://localhost:11434/v1"));
//! ```

use serde::Serialize;

/// The keychain service under which keys are stored; the account is the provider's
/// [`Provider::keychain_account`].
pub const KEYCHAIN_SERVICE: &str = "sandalyst";

/// A provider family: its section of the config file, its keychain account and the
/// name its prices and capabilities are looked up under. Serialised as that name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ProviderKind {
    /// The OpenAI Responses API.
    #[serde(rename = "openai")]
    OpenAi,
    /// Any server speaking Chat Completions: Ollama, llama.cpp, vLLM, LM Studio, gateways.
    #[serde(rename = "openai-compatible")]
    OpenAiCompatible,
    /// The Anthropic Messages API.
    #[serde(rename = "anthropic")]
    Anthropic,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 3] = [
        ProviderKind::OpenAi,
        ProviderKind::OpenAiCompatible,
        ProviderKind::Anthropic,
    ];

    /// The kind's own row (not a spelling of it such as `ollama`).
    pub const fn row(self) -> &'static Provider {
        match self {
            ProviderKind::OpenAi => &PROVIDERS[0],
            ProviderKind::Anthropic => &PROVIDERS[1],
            ProviderKind::OpenAiCompatible => &PROVIDERS[2],
        }
    }

    /// The name used in `--model`, the config file and the keychain.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The variable that holds the key unless the config file names another.
    pub fn key_var(self) -> &'static str {
        self.row().key_var
    }

    pub fn default_base_url(self) -> Option<&'static str> {
        self.row().base_url
    }
}

/// The request and reply format a provider speaks; one file of `model/` each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Wire {
    /// OpenAI's Responses API (`openai_responses.rs`).
    OpenAiResponses,
    /// Chat Completions, as OpenAI-compatible servers speak it (`chat_completions.rs`).
    ChatCompletions,
    /// Anthropic's Messages API (`anthropic.rs`).
    AnthropicMessages,
}

impl Wire {
    /// How a run's description names it.
    pub fn title(self) -> &'static str {
        match self {
            Wire::OpenAiResponses => "OpenAI Responses API",
            Wire::ChatCompletions => "Chat Completions",
            Wire::AnthropicMessages => "Anthropic Messages API",
        }
    }
}

/// Where a provider's prices come from, for the estimated cost of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Prices {
    /// The built-in table (`model/pricing.rs`), which the config file's `[prices]` overrides.
    BuiltIn,
    /// Only the config file's `[prices."NAME:MODEL"]`: the app cannot know them.
    ConfigFile,
}

/// One provider as the user names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Provider {
    /// As written in `--model NAME:MODEL`.
    pub name: &'static str,
    /// Other spellings `--model` takes for it.
    pub aliases: &'static [&'static str],
    /// How the settings page names it.
    pub label: &'static str,
    /// Its family: the config file's section and where prices and capabilities are
    /// looked up (serialised as the section's name).
    #[serde(rename = "section")]
    pub kind: ProviderKind,
    pub wire: Wire,
    /// Where it is unless `--base-url`, the variable or the config file say otherwise;
    /// none when the user must say where the server is.
    pub base_url: Option<&'static str>,
    /// The environment variable naming another base URL.
    pub base_url_var: Option<&'static str>,
    /// The environment variable holding the key (the config file may name another).
    pub key_var: &'static str,
    /// The account under [`KEYCHAIN_SERVICE`] that holds the key.
    pub keychain_account: &'static str,
    /// A key is required when talking to the default base URL (the provider's own service).
    pub key_required: bool,
    /// Whether a model the capability table does not know takes images (a compatible
    /// server's model also does when its name says so: `llava`, `-vl`, ...).
    pub vision: bool,
    /// The context window in tokens of a model the capability table does not know.
    pub context_window: u64,
    pub prices: Prices,
}

/// Every provider, in the order the help lists them.
pub const PROVIDERS: &[Provider] = &[
    Provider {
        name: "openai",
        aliases: &[],
        label: "OpenAI (Responses API)",
        kind: ProviderKind::OpenAi,
        wire: Wire::OpenAiResponses,
        base_url: Some("https://api.openai.com/v1"),
        base_url_var: Some("OPENAI_BASE_URL"),
        key_var: "OPENAI_API_KEY",
        keychain_account: "openai",
        key_required: true,
        vision: true,
        context_window: 128_000,
        prices: Prices::BuiltIn,
    },
    Provider {
        name: "anthropic",
        aliases: &[],
        label: "Anthropic (Messages API)",
        kind: ProviderKind::Anthropic,
        wire: Wire::AnthropicMessages,
        base_url: Some("https://api.anthropic.com"),
        base_url_var: Some("ANTHROPIC_BASE_URL"),
        key_var: "ANTHROPIC_API_KEY",
        keychain_account: "anthropic",
        key_required: true,
        vision: true,
        // Every current Claude model has at least this.
        context_window: 200_000,
        prices: Prices::BuiltIn,
    },
    Provider {
        name: "openai-compatible",
        aliases: &["compatible", "chat"],
        label: "OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio, OpenRouter)",
        kind: ProviderKind::OpenAiCompatible,
        wire: Wire::ChatCompletions,
        base_url: None,
        // Not OPENAI_BASE_URL: that points at OpenAI-proper and travels with its key.
        base_url_var: None,
        key_var: "SANDALYST_COMPATIBLE_API_KEY",
        keychain_account: "openai-compatible",
        key_required: false,
        vision: false,
        // What Ollama and llama.cpp are commonly run with, or less than it.
        context_window: 32_768,
        prices: Prices::ConfigFile,
    },
    Provider {
        name: "ollama",
        aliases: &[],
        label: "Ollama on this machine (Chat Completions)",
        kind: ProviderKind::OpenAiCompatible,
        wire: Wire::ChatCompletions,
        base_url: Some("http://localhost:11434/v1"),
        base_url_var: None,
        key_var: "SANDALYST_COMPATIBLE_API_KEY",
        keychain_account: "openai-compatible",
        key_required: false,
        vision: false,
        context_window: 32_768,
        prices: Prices::ConfigFile,
    },
];

/// The provider `--model` names with `name` (any case, or one of its aliases).
pub fn find(name: &str) -> Option<&'static Provider> {
    let name = name.trim().to_ascii_lowercase();
    PROVIDERS
        .iter()
        .find(|p| p.name == name || p.aliases.contains(&name.as_str()))
}

impl Provider {
    /// How `--model` names one of its models, e.g. `openai-compatible:MODEL (with --base-url)`.
    pub fn model_form(&self) -> String {
        let with = if self.base_url.is_none() {
            " (with --base-url)"
        } else {
            ""
        };
        format!("{}:MODEL{with}", self.name)
    }

    /// The base URL `--model` implies beyond its family's own: `ollama:` means the
    /// local Ollama.
    pub fn preset_base_url(&self) -> Option<&'static str> {
        if self.name == self.kind.name() {
            None
        } else {
            self.base_url
        }
    }
}

/// The providers as `--model` takes them: "openai:MODEL, anthropic:MODEL, ...".
pub fn model_flag_help() -> String {
    PROVIDERS
        .iter()
        .map(Provider::model_form)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_own_row_and_spellings_share_its_key() {
        for kind in ProviderKind::ALL {
            let row = kind.row();
            assert_eq!(row.kind, kind);
            assert_eq!(serde_json::to_value(kind).unwrap(), row.name);
            assert_eq!(row.keychain_account, row.name);
            assert_eq!(row.preset_base_url(), None);
        }
        for p in PROVIDERS {
            let own = p.kind.row();
            assert_eq!(
                (p.key_var, p.keychain_account, p.wire),
                (own.key_var, own.keychain_account, own.wire),
                "{}",
                p.name
            );
            assert_eq!(find(&p.name.to_uppercase()), Some(p));
            // A key is required only where there is a provider's own service.
            assert!(!p.key_required || p.base_url.is_some());
        }
        assert_eq!(find(" chat "), Some(ProviderKind::OpenAiCompatible.row()));
        assert_eq!(find("gemini"), None);
    }

    #[test]
    fn built_in_prices_are_for_the_rows_that_say_so() {
        for kind in ProviderKind::ALL {
            let row = kind.row();
            let priced = ["gpt-5.4", "claude-sonnet-4-5"]
                .iter()
                .any(|m| super::super::pricing::lookup(row.name, m).is_some());
            assert_eq!(priced, row.prices == Prices::BuiltIn, "{}", row.name);
        }
    }

    #[test]
    fn the_help_lists_every_provider_and_the_rows_serialise() {
        assert_eq!(
            model_flag_help(),
            "openai:MODEL, anthropic:MODEL, openai-compatible:MODEL (with --base-url), ollama:MODEL"
        );
        let rows = serde_json::to_value(PROVIDERS).unwrap();
        assert_eq!(rows[3]["name"], "ollama");
        assert_eq!(rows[3]["section"], "openai-compatible");
        assert_eq!(rows[3]["wire"], "chat_completions");
        assert_eq!(rows[2]["base_url"], serde_json::Value::Null);
        assert_eq!(rows[0]["prices"], "built_in");
    }
}
