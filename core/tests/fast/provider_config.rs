//! Choosing the model: flags, environment, config file, keychain; and keys kept out of
//! everything a person or a file sees.

use std::collections::HashMap;
use std::path::Path;

use sandalyst::model::config::{
    self, ConfigFile, ProviderConfig, ProviderKind, Selection, Sources,
};
use sandalyst::model::secret::KeySource;

struct World {
    env: HashMap<&'static str, &'static str>,
    keychain: HashMap<&'static str, &'static str>,
    file: ConfigFile,
}

impl World {
    fn new() -> World {
        World {
            env: HashMap::new(),
            keychain: HashMap::new(),
            file: ConfigFile::default(),
        }
    }

    fn resolve(&self, model: Option<&str>, base_url: Option<&str>) -> anyhow::Result<Selection> {
        let env = |k: &str| self.env.get(k).map(|v| v.to_string());
        let keychain = |k: &str| self.keychain.get(k).map(|v| v.to_string());
        config::resolve(
            model,
            base_url,
            &self.file,
            Some(Path::new("/home/a/.config/sandalyst/config.toml")),
            &Sources {
                env: &env,
                keychain: &keychain,
            },
        )
    }

    fn provider(&self, model: Option<&str>, base_url: Option<&str>) -> ProviderConfig {
        match self.resolve(model, base_url).unwrap() {
            Selection::Provider(p) => *p,
            other => panic!("{other:?}"),
        }
    }
}

const KEY: &str = "sk-proj-abcdefghijklmnopqrstuvwxyzSECRET";

#[test]
fn nothing_configured_means_the_offline_analyst_and_says_why() {
    match World::new().resolve(None, None).unwrap() {
        Selection::Offline { why } => {
            assert!(
                why.contains("no model configured") && why.contains("not an LLM"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        World::new().resolve(Some("offline"), None).unwrap(),
        Selection::Offline { .. }
    ));
    let e = World::new()
        .resolve(None, Some("http://localhost:11434/v1"))
        .unwrap_err();
    assert!(e.to_string().contains("--base-url needs a model"), "{e}");
}

#[test]
fn openai_from_the_environment() {
    let mut w = World::new();
    w.env.insert("OPENAI_API_KEY", KEY);
    let p = w.provider(Some("openai:gpt-5.4"), None);
    assert_eq!(p.kind, ProviderKind::OpenAi);
    assert_eq!(p.model, "gpt-5.4");
    assert_eq!(p.base_url, "https://api.openai.com/v1");
    assert_eq!(
        p.credentials.source,
        KeySource::Env("OPENAI_API_KEY".into())
    );
    assert_eq!(p.price.unwrap().input, 2.5);
    let shown = format!("{} {p:?}", p.describe());
    assert!(!shown.contains("SECRET"), "{shown}");
    assert!(p
        .describe()
        .contains("OpenAI Responses API at https://api.openai.com/v1"));

    // OPENAI_BASE_URL moves it (a proxy, Azure, a local Responses server); the flag wins.
    w.env.insert("OPENAI_BASE_URL", "http://127.0.0.1:9999/v1");
    assert_eq!(
        w.provider(Some("openai:gpt-5.4"), None).base_url,
        "http://127.0.0.1:9999/v1"
    );
    assert_eq!(
        w.provider(Some("openai:gpt-5.4"), Some("http://127.0.0.1:1/v1"))
            .base_url,
        "http://127.0.0.1:1/v1"
    );
}

#[test]
fn a_missing_key_names_the_variable_and_the_keychain() {
    let e = World::new()
        .resolve(Some("anthropic:claude-sonnet-4-5"), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ANTHROPIC_API_KEY") && e.contains("keychain"),
        "{e}"
    );
    // A key in the keychain is found when the variable is not set.
    let mut w = World::new();
    w.keychain.insert("anthropic", KEY);
    let p = w.provider(Some("anthropic:claude-sonnet-4-5"), None);
    assert_eq!(
        p.credentials.source,
        KeySource::Keychain("anthropic".into())
    );
    assert_eq!(p.base_url, "https://api.anthropic.com");
    // ANTHROPIC_BASE_URL points elsewhere, where no key may be needed.
    let mut w = World::new();
    w.env.insert("ANTHROPIC_BASE_URL", "http://127.0.0.1:8080");
    assert_eq!(
        w.provider(Some("anthropic:claude-x"), None).credentials.key,
        None
    );
}

#[test]
fn openai_compatible_needs_a_base_url_and_never_borrows_the_openai_key() {
    let mut w = World::new();
    w.env.insert("OPENAI_API_KEY", KEY);
    w.env.insert("OPENAI_BASE_URL", "https://api.openai.com/v1");
    let e = w
        .resolve(Some("openai-compatible:qwen2.5-coder"), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--base-url") && e.contains("http://localhost:11434/v1"),
        "{e}"
    );

    let p = w.provider(
        Some("openai-compatible:qwen2.5-coder"),
        Some("http://localhost:11434/v1"),
    );
    assert_eq!(p.kind, ProviderKind::OpenAiCompatible);
    assert_eq!(
        p.credentials.key, None,
        "the OpenAI key must not go to another server"
    );
    assert_eq!(p.price, None);
    assert_eq!(
        w.provider(Some("ollama:llama3.1:8b"), None).base_url,
        "http://localhost:11434/v1"
    );
}

#[test]
fn the_config_file_sets_defaults_base_urls_key_variables_and_prices() {
    let toml = r#"
model = "openai-compatible:meta-llama/llama-3.3-70b-instruct"

[openai-compatible]
base_url = "https://openrouter.ai/api/v1"
api_key_env = "OPENROUTER_API_KEY"
idle_timeout_secs = 60
max_attempts = 2

[anthropic]
max_tokens = 16000

[prices."openai-compatible:meta-llama/llama-3.3-70b-instruct"]
input = 0.13
output = 0.40
"#;
    let mut w = World::new();
    w.file = ConfigFile::parse(toml, Path::new("config.toml")).unwrap();
    w.env.insert("OPENROUTER_API_KEY", KEY);
    let p = w.provider(None, None);
    assert_eq!(p.model, "meta-llama/llama-3.3-70b-instruct");
    assert_eq!(p.base_url, "https://openrouter.ai/api/v1");
    assert_eq!(
        p.credentials.source,
        KeySource::Env("OPENROUTER_API_KEY".into())
    );
    assert_eq!(p.http.idle_timeout.as_secs(), 60);
    assert_eq!(p.http.retry.max_attempts, 2);
    assert_eq!(p.price.unwrap().input, 0.13);
    // The flag overrides the file's default model.
    w.env.insert("ANTHROPIC_API_KEY", KEY);
    assert_eq!(
        w.provider(Some("anthropic:claude-haiku-4-5"), None)
            .max_tokens,
        Some(16000)
    );

    let json = r#"{"model": "openai:gpt-5.4-mini", "openai": {"reasoning_effort": "low"}}"#;
    let f = ConfigFile::parse(json, Path::new("config.json")).unwrap();
    assert_eq!(f.model.as_deref(), Some("openai:gpt-5.4-mini"));
    assert_eq!(f.openai.reasoning_effort.as_deref(), Some("low"));
}

#[test]
fn the_config_file_refuses_keys_and_typos_with_clear_messages() {
    let e = ConfigFile::parse("[openai]\napi_key = \"sk-abc\"\n", Path::new("c.toml")).unwrap_err();
    let e = format!("{e:#}");
    assert!(
        e.contains("keys do not belong") && e.contains("OPENAI_API_KEY"),
        "{e}"
    );
    assert!(!e.contains("sk-abc"), "{e}");
    let e = format!(
        "{:#}",
        ConfigFile::parse("[openai]\nbase_ulr = \"x\"\n", Path::new("c.toml")).unwrap_err()
    );
    assert!(e.contains("c.toml") && e.contains("base_ulr"), "{e}");
    let missing = ConfigFile::load(Path::new("/nonexistent/sandalyst/config.toml")).unwrap();
    assert!(missing.model.is_none());
}

#[test]
fn bad_specs_and_urls_are_explained() {
    let w = World::new();
    let e = w
        .resolve(Some("claude-sonnet-4-5"), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("did you mean anthropic:claude-sonnet-4-5"),
        "{e}"
    );
    let e = w
        .resolve(Some("openai-compatible:x"), Some("localhost:11434/v1"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("http://"), "{e}");
}

#[test]
fn without_a_keychain_service_the_lookup_is_just_empty() {
    // This machine runs no Secret Service; the lookup must not fail, hang or panic.
    assert_eq!(
        config::keychain_lookup("sandalyst-test-account-that-does-not-exist"),
        None
    );
}

#[test]
fn vision_and_context_window_come_from_the_table_unless_the_file_says_otherwise() {
    let mut w = World::new();
    w.env.insert("OPENAI_API_KEY", KEY);
    w.env.insert("ANTHROPIC_API_KEY", KEY);
    let caps = |p: ProviderConfig| {
        let model = p.open().unwrap();
        (model.vision(), model.context_window())
    };
    assert_eq!(
        caps(w.provider(Some("openai:gpt-4.1"), None)),
        (true, Some(1_047_576))
    );
    assert_eq!(
        caps(w.provider(Some("anthropic:claude-opus-4-1"), None)),
        (true, Some(200_000))
    );
    // A local model the table does not know: no images, a cautious window.
    assert_eq!(
        caps(w.provider(
            Some("ollama:qwen2.5-coder:7b"),
            Some("http://127.0.0.1:11434/v1")
        )),
        (false, Some(32_768))
    );

    let toml = r#"
[openai-compatible]
base_url = "http://127.0.0.1:8080/v1"
vision = true
context_window = 65536

[openai]
vision = false
"#;
    w.file = ConfigFile::parse(toml, Path::new("config.toml")).unwrap();
    assert_eq!(
        caps(w.provider(Some("openai-compatible:gemma3:27b"), None)),
        (true, Some(65_536))
    );
    assert_eq!(
        caps(w.provider(Some("openai:gpt-5.4"), None)),
        (false, Some(400_000))
    );
}
