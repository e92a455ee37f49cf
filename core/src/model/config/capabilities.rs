//! What a model can take: images in tool results, and how many tokens of conversation.
//!
//! A small table of the models the providers document, matched by name prefix. The
//! config file overrides both per provider section (`vision = false`,
//! `context_window = 32768`), for a model the table does not know or a local server
//! run with a smaller context than the model allows.
//!
//! - OpenAI and Anthropic models take images unless the table knows they do not (the
//!   older text-only ones); their context window is the documented one, or a cautious
//!   default for names the table does not know.
//! - Models behind an OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio,
//!   gateways) take no images unless their name says they do (`llava`, `-vl`, `vision`,
//!   ...), and get [`COMPATIBLE_CONTEXT`] tokens unless the table knows the name (a
//!   gateway's `openai/gpt-4o` is looked up as `gpt-4o`).
//!
//! ```
//! use sandalyst::model::config::capabilities::known;
//! use sandalyst::model::config::ProviderKind;
//! let gpt = known(ProviderKind::OpenAi, "gpt-4.1-mini");
//! assert_eq!((gpt.vision, gpt.context_window), (true, 1_047_576));
//! assert!(!known(ProviderKind::OpenAiCompatible, "qwen2.5-coder:7b").vision);
//! ```

use super::ProviderKind;

// The defaults for names the table does not know are the providers' rows
// (`model::providers`); named here too.
/// The context window assumed for a model behind a compatible server that the table
/// does not know: what Ollama and llama.cpp are commonly run with, or less than it.
pub const COMPATIBLE_CONTEXT: u64 = ProviderKind::OpenAiCompatible.row().context_window;
/// For an OpenAI model the table does not know.
pub const OPENAI_DEFAULT_CONTEXT: u64 = ProviderKind::OpenAi.row().context_window;
/// For a Claude model the table does not know (every current one has at least this).
pub const ANTHROPIC_DEFAULT_CONTEXT: u64 = ProviderKind::Anthropic.row().context_window;

/// What the table says about one model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Images in tool results can be sent.
    pub vision: bool,
    /// Input plus output tokens the model can hold.
    pub context_window: u64,
}

/// Known models by name prefix, longest first where prefixes overlap:
/// (prefix, takes images, context window).
const TABLE: &[(&str, bool, u64)] = &[
    // OpenAI, from the model pages of platform.openai.com.
    ("gpt-5-chat", true, 128_000),
    ("gpt-5", true, 400_000),
    ("gpt-4.1", true, 1_047_576),
    ("gpt-4o", true, 128_000),
    ("chatgpt-4o", true, 128_000),
    ("gpt-4-turbo", true, 128_000),
    ("gpt-4-32k", false, 32_768),
    ("gpt-4", false, 8_192),
    ("gpt-3.5", false, 16_385),
    ("o1-mini", false, 128_000),
    ("o1-preview", false, 128_000),
    ("o3-mini", false, 200_000),
    ("o1", true, 200_000),
    ("o3", true, 200_000),
    ("o4-mini", true, 200_000),
    // Anthropic: every Claude 3 and later model takes images and 200k tokens.
    ("claude-", true, 200_000),
];

/// Names of local model families that take images.
const LOCAL_VISION: &[&str] = &[
    "llava",
    "bakllava",
    "-vl",
    "vision",
    "pixtral",
    "minicpm-v",
    "moondream",
];

fn lookup(name: &str) -> Option<(bool, u64)> {
    let name = name.to_ascii_lowercase();
    TABLE
        .iter()
        .find(|(prefix, _, _)| name.starts_with(prefix))
        .map(|&(_, v, c)| (v, c))
}

/// What `model` of provider `kind` can take, before any override from the config.
pub fn known(kind: ProviderKind, model: &str) -> Capabilities {
    let row = kind.row();
    // A gateway names models `vendor/model`.
    let base = match kind {
        ProviderKind::OpenAiCompatible => model.rsplit('/').next().unwrap_or(model),
        ProviderKind::OpenAi | ProviderKind::Anthropic => model,
    };
    // Else the provider's defaults; a local model also takes images when its name says so.
    let (vision, context_window) = lookup(base).unwrap_or_else(|| {
        let lower = base.to_ascii_lowercase();
        let named = LOCAL_VISION.iter().any(|v| lower.contains(v));
        (row.vision || named, row.context_window)
    });
    Capabilities {
        vision,
        context_window,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_knows_the_families_and_is_cautious_otherwise() {
        let k = |kind, m| known(kind, m);
        assert_eq!(
            k(ProviderKind::OpenAi, "gpt-5.4"),
            Capabilities {
                vision: true,
                context_window: 400_000
            }
        );
        assert_eq!(
            k(ProviderKind::OpenAi, "gpt-4o-mini").context_window,
            128_000
        );
        assert!(!k(ProviderKind::OpenAi, "o3-mini").vision);
        assert!(k(ProviderKind::OpenAi, "o3").vision);
        assert!(!k(ProviderKind::OpenAi, "gpt-3.5-turbo").vision);
        assert_eq!(
            k(ProviderKind::Anthropic, "claude-sonnet-4-5"),
            Capabilities {
                vision: true,
                context_window: 200_000
            }
        );
        assert_eq!(
            k(ProviderKind::OpenAiCompatible, "qwen2.5-coder:7b"),
            Capabilities {
                vision: false,
                context_window: COMPATIBLE_CONTEXT
            }
        );
        assert!(k(ProviderKind::OpenAiCompatible, "qwen2.5-vl:7b").vision);
        assert!(k(ProviderKind::OpenAiCompatible, "llava:13b").vision);
        assert_eq!(
            k(ProviderKind::OpenAiCompatible, "openai/gpt-4o").context_window,
            128_000
        );
    }
}
