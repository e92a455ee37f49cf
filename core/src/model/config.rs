//! Which model a run uses and how to reach it. What each provider is (its names, wire,
//! default base URL, key variable, keychain account) is its row in [`super::providers`].
//!
//! Sources, strongest first: the `--model PROVIDER:MODEL` and `--base-url` flags, the
//! environment (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, the key variables), the config
//! file (`<config dir>/sandalyst/config.toml`, or `config.json`; `SANDALYST_CONFIG`
//! names another), then built-in defaults. Keys come from the environment or the OS
//! keychain (service `sandalyst`, account = provider name), never from the config file.
//! With no model named anywhere the offline analyst runs, and the caller is told why.
//!
//! ```toml
//! model = "openai:gpt-5.4"          # the default when --model is not given
//!
//! [openai]
//! reasoning_effort = "medium"      # optional: none, low, medium, high, xhigh
//!
//! [openai-compatible]
//! base_url = "http://localhost:11434/v1"
//! api_key_env = "OPENROUTER_API_KEY" # only for servers that want a key
//! vision = true                     # what the model takes, where the built-in table
//! context_window = 65536            # (see `capabilities`) does not know or is wrong
//!
//! [anthropic]
//! max_tokens = 8192
//!
//! [prices."openai-compatible:qwen2.5-coder"]  # USD per million tokens
//! input = 0.0
//! output = 0.0
//!
//! [image]                           # your own packages on the built-in image
//! pip = ["tabulate", "pyjanitor==0.27"]
//! apt = ["fonts-noto-cjk"]
//! ca_file = "/usr/local/share/ca-certificates/company.crt"  # a TLS-intercepting proxy
//! build_network = "host"            # the build's network mode (runs have none)
//!
//! [updates]                         # the desktop's Check for Updates (docs/PACKAGING.md)
//! feed = "https://updates.example.org/sandalyst/latest.json"
//! pubkey = "dW50cnVzdGVkIGNvbW1lbnQ6..."  # the minisign public key, base64 as Tauri writes it
//! enabled = true                    # a development build checks only when this says so
//! ```

pub mod capabilities;
pub mod sampling;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use anyhow::{bail, Context as _};
use serde::Deserialize;

use super::http::{display_url, join_url, HttpSettings};
use super::pricing::{self, Price};
use super::providers::{self, Wire};
use super::secret::{ApiKey, Credentials, KeySource};
use super::Model;
pub use sampling::Sampling;

// The table of providers names them; they are named here too, where callers found them.
pub use super::providers::{ProviderKind, KEYCHAIN_SERVICE};

/// What `--model` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelSpec {
    Offline,
    /// A replay script: a JSON list of steps (see `model::scripted`).
    Replay(PathBuf),
    Provider {
        kind: ProviderKind,
        model: String,
        /// A base URL implied by the spelling (`ollama:` means the local Ollama).
        preset_base_url: Option<&'static str>,
    },
}

/// What `--model` takes, for its errors.
fn spec_help() -> String {
    format!(
        "use {}, replay:FILE or offline",
        providers::model_flag_help()
    )
}

impl FromStr for ModelSpec {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> anyhow::Result<ModelSpec> {
        let s = s.trim();
        if matches!(s, "offline" | "offline-analyst") {
            return Ok(ModelSpec::Offline);
        }
        if let Some(script) = s.strip_prefix("replay:").filter(|p| !p.is_empty()) {
            return Ok(ModelSpec::Replay(PathBuf::from(script)));
        }
        let Some((provider, model)) = s.split_once(':') else {
            let guess = if s.starts_with("claude") {
                format!(" (did you mean anthropic:{s}?)")
            } else if s.starts_with("gpt-")
                || (s.starts_with('o') && s[1..].starts_with(|c: char| c.is_ascii_digit()))
            {
                format!(" (did you mean openai:{s}?)")
            } else {
                String::new()
            };
            bail!(
                "unknown model `{s}`: it names no provider{guess}; {}",
                spec_help()
            );
        };
        let model = model.trim();
        if model.is_empty() {
            bail!("`{s}` names no model after the colon; {}", spec_help());
        }
        let Some(row) = providers::find(provider) else {
            let other = provider.trim().to_ascii_lowercase();
            bail!("unknown provider `{other}` in `{s}`; {}", spec_help());
        };
        Ok(ModelSpec::Provider {
            kind: row.kind,
            model: model.to_string(),
            preset_base_url: row.preset_base_url(),
        })
    }
}

/// One provider's section of the config file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Section {
    pub base_url: Option<String>,
    /// The environment variable holding the key, instead of the provider's usual one.
    pub api_key_env: Option<String>,
    /// Refused with an explanation: keys do not belong in a plain-text file.
    #[serde(default)]
    api_key: Option<serde_json::Value>,
    /// Anthropic: the reply length cap (required by the API). Others: optional cap.
    pub max_tokens: Option<u32>,
    /// OpenAI Responses: `reasoning.effort`.
    pub reasoning_effort: Option<String>,
    /// OpenAI Responses: `reasoning.summary` ("auto", "concise", "detailed"); some
    /// organisations must be verified before OpenAI gives summaries, so it is opt-in.
    pub reasoning_summary: Option<String>,
    pub connect_timeout_secs: Option<u64>,
    pub idle_timeout_secs: Option<u64>,
    pub max_attempts: Option<u32>,
    /// Whether the model takes images (charts go back to it); overrides the table.
    pub vision: Option<bool>,
    /// The model's context window in tokens; overrides the table.
    pub context_window: Option<u64>,
    /// How the model samples (see [`sampling`]); Chat Completions servers only.
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub seed: Option<u64>,
    pub repeat_penalty: Option<f64>,
    pub frequency_penalty: Option<f64>,
    pub presence_penalty: Option<f64>,
    /// How tool calls travel (`auto`, `native`, `schema`, `text`); Chat Completions only.
    pub tool_calls: Option<sampling::ToolCalls>,
}

impl Section {
    fn sampling(&self) -> Sampling {
        Sampling {
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            top_p: self.top_p,
            seed: self.seed,
            repeat_penalty: self.repeat_penalty,
            frequency_penalty: self.frequency_penalty,
            presence_penalty: self.presence_penalty,
            tool_calls: self.tool_calls,
        }
    }
}

/// The config file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The default model, as for `--model`.
    pub model: Option<String>,
    #[serde(default)]
    pub openai: Section,
    #[serde(default)]
    pub anthropic: Section,
    #[serde(default, rename = "openai-compatible")]
    pub openai_compatible: Section,
    /// Prices by `provider:model` (or just the model name), overriding the built-in table.
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
    /// Sampling and reply length by `provider:model` (or just the model name), over
    /// the provider's section.
    #[serde(default)]
    pub models: BTreeMap<String, Sampling>,
    /// The user's own packages, layered on the built-in sandbox image.
    #[serde(default)]
    pub image: ImageSection,
    /// Which calls wait for the analyst (`auto`, `shell`, `all`), as for `--approve`.
    #[serde(default)]
    pub approve: Option<crate::approval::ApprovalMode>,
    /// The sandbox's network, as for `--network`: `"off"`, `"full"`,
    /// `"allow:pypi.org,…"`.
    #[serde(default)]
    pub network: Option<NetworkSetting>,
    /// Names the allowlist proxy sends to addresses of your choosing, as for
    /// `--resolve`: `["pypi.internal=10.0.0.5"]`.
    #[serde(default)]
    pub resolve: Vec<crate::egress::Pin>,
    /// Which links inside a dropped folder are followed: `"inside"` (the default:
    /// only links to files in the folder) or `"outside"` (also links that leave it).
    #[serde(default)]
    pub follow_links: Option<crate::protocol::FollowLinks>,
    /// Where the desktop app looks for updates and the key they must be signed with
    /// (read by the desktop's `updates` module; the command line does not update).
    #[serde(default)]
    pub updates: UpdatesSection,
}

/// The `[updates]` section: the update feed (a Tauri updater manifest, `latest.json`),
/// the minisign public key its releases are signed with, and whether to check at all.
/// Each one given here wins over what the release was built with.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct UpdatesSection {
    pub feed: Option<String>,
    pub pubkey: Option<String>,
    /// `false` turns checking off; `true` turns it on in a development build too.
    pub enabled: Option<bool>,
}

/// A network mode in its text form (`allow:pypi.org`), checked when read.
#[derive(Clone, Debug, PartialEq)]
pub struct NetworkSetting(pub crate::egress::NetworkMode);

impl<'de> Deserialize<'de> for NetworkSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<NetworkSetting, D::Error> {
        String::deserialize(d)?
            .parse()
            .map(NetworkSetting)
            .map_err(serde::de::Error::custom)
    }
}

/// The `[image]` section: packages for a derived image, and how it is built here
/// (checked and turned into build settings by `sandbox::custom`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageSection {
    #[serde(default)]
    pub pip: Vec<String>,
    #[serde(default)]
    pub apt: Vec<String>,
    /// A PEM file the build trusts (a proxy that intercepts TLS).
    pub ca_file: Option<PathBuf>,
    /// The build container's network mode, e.g. `host`.
    pub build_network: Option<String>,
}

impl ConfigFile {
    fn section(&self, kind: ProviderKind) -> &Section {
        match kind {
            ProviderKind::OpenAi => &self.openai,
            ProviderKind::OpenAiCompatible => &self.openai_compatible,
            ProviderKind::Anthropic => &self.anthropic,
        }
    }

    /// Parse TOML, or JSON when `path` ends in `.json`.
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<ConfigFile> {
        let file: ConfigFile = if path.extension().is_some_and(|e| e == "json") {
            serde_json::from_str(text).map_err(anyhow::Error::from)
        } else {
            toml::from_str(text).map_err(anyhow::Error::from)
        }
        .with_context(|| format!("the config file {} cannot be read", path.display()))?;
        if let Err(e) = file.image.packages() {
            bail!("the config file {}: [image] {e}", path.display());
        }
        let sections = ProviderKind::ALL
            .iter()
            .map(|k| (format!("[{}]", k.name()), file.section(*k).sampling()));
        let models = file
            .models
            .iter()
            .map(|(name, s)| (format!("[models.\"{name}\"]"), *s));
        for (name, sampling) in sections.chain(models) {
            if let Err(e) = sampling.validate() {
                bail!("the config file {}: {name} {e}", path.display());
            }
        }
        for kind in ProviderKind::ALL {
            if file.section(kind).api_key.is_some() {
                let row = kind.row();
                bail!(
                    "the config file {} holds an api_key for {}; keys do not belong in a plain-text file. \
                     Remove it and set {} or store the key in the OS keychain (service \"{KEYCHAIN_SERVICE}\", account \"{}\")",
                    path.display(),
                    row.name,
                    row.key_var,
                    row.keychain_account
                );
            }
        }
        Ok(file)
    }

    /// Read the file at `path`; a missing file is an empty configuration.
    pub fn load(path: &Path) -> anyhow::Result<ConfigFile> {
        match std::fs::read_to_string(path) {
            Ok(text) => ConfigFile::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ConfigFile::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }
}

/// Where the config file is: `SANDALYST_CONFIG`, else `<config dir>/sandalyst/config.toml`
/// (or `config.json` when only that exists).
pub fn config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(p) = env("SANDALYST_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let dir = dirs::config_dir()?.join("sandalyst");
    let toml = dir.join("config.toml");
    let json = dir.join("config.json");
    Some(if !toml.exists() && json.exists() {
        json
    } else {
        toml
    })
}

/// The config file as the environment names it ([`config_path`]), with its path;
/// an empty configuration when there is none.
pub fn load_config_file() -> anyhow::Result<(ConfigFile, Option<PathBuf>)> {
    let env = |v: &str| std::env::var(v).ok();
    let path = config_path(&env);
    let file = match &path {
        Some(p) => ConfigFile::load(p)?,
        None => ConfigFile::default(),
    };
    Ok((file, path))
}

/// Everything a provider needs.
#[derive(Clone, Debug)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    pub model: String,
    /// For OpenAI and compatible servers, up to and including `/v1`; for Anthropic, the
    /// host (`/v1/messages` is added).
    pub base_url: String,
    pub credentials: Credentials,
    /// The variable that normally holds the key, for error hints.
    pub key_var: String,
    pub http: HttpSettings,
    pub max_tokens: Option<u32>,
    /// How the model samples, `max_tokens` included; sent by the Chat Completions wire.
    pub sampling: Sampling,
    pub reasoning_effort: Option<String>,
    pub reasoning_summary: Option<String>,
    pub price: Option<Price>,
    /// From the config file: whether the model takes images, over the table's answer.
    pub vision: Option<bool>,
    /// From the config file: the context window in tokens, over the table's answer.
    pub context_window: Option<u64>,
}

impl ProviderConfig {
    /// Defaults for `kind`; no key.
    pub fn new(kind: ProviderKind, model: &str, base_url: &str) -> ProviderConfig {
        ProviderConfig {
            kind,
            model: model.to_string(),
            base_url: base_url.to_string(),
            credentials: Credentials::none(),
            key_var: kind.key_var().to_string(),
            http: HttpSettings::default(),
            max_tokens: None,
            // Built in code (tests, embedders): the API's own calls unless set; the
            // config file's default is `auto` (resolve).
            sampling: Sampling {
                tool_calls: Some(sampling::ToolCalls::Native),
                ..Sampling::default()
            },
            reasoning_effort: None,
            reasoning_summary: None,
            price: pricing::lookup(kind.name(), model),
            vision: None,
            context_window: None,
        }
    }

    /// Whether images in tool results go to this model: the config file's `vision`,
    /// else the table of known models.
    pub fn takes_images(&self) -> bool {
        self.vision
            .unwrap_or_else(|| capabilities::known(self.kind, &self.model).vision)
    }

    /// The model's context window in tokens: the config file's `context_window`, else
    /// the table of known models (a cautious default for names it does not know).
    pub fn context_tokens(&self) -> u64 {
        self.context_window
            .unwrap_or_else(|| capabilities::known(self.kind, &self.model).context_window)
    }

    /// e.g. "openai:gpt-5.4 (OpenAI Responses API at <https://api.openai.com/v1>)".
    pub fn describe(&self) -> String {
        let api = self.kind.row().wire.title();
        format!(
            "{}:{} ({api} at {})",
            self.kind.name(),
            self.model,
            display_url(&self.base_url)
        )
    }

    /// The provider itself.
    pub fn open(self) -> anyhow::Result<Box<dyn Model>> {
        Ok(match self.kind.row().wire {
            Wire::OpenAiResponses => Box::new(super::openai_responses::OpenAiResponses::new(self)?),
            Wire::ChatCompletions => Box::new(super::chat_completions::ChatCompletions::new(self)?),
            Wire::AnthropicMessages => Box::new(super::anthropic::Anthropic::new(self)?),
        })
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub enum Selection {
    /// The built-in offline analyst; `why` says how it came to be chosen.
    Offline {
        why: String,
    },
    /// A scripted replay of the steps in this file.
    Replay(PathBuf),
    Provider(Box<ProviderConfig>),
}

impl Selection {
    /// The model itself.
    pub fn open(self) -> anyhow::Result<Box<dyn Model>> {
        Ok(match self {
            Selection::Offline { .. } => Box::new(crate::analyst::OfflineAnalyst::new()),
            Selection::Replay(script) => {
                Box::new(super::scripted::ScriptedModel::from_json_file(&script)?)
            }
            Selection::Provider(p) => p.open()?,
        })
    }
}

/// Where settings and keys are looked up; tests pass their own.
pub struct Sources<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub keychain: &'a dyn Fn(&str) -> Option<String>,
}

/// Decide the model from the flags, the environment, the config file and the keychain.
pub fn resolve(
    model_flag: Option<&str>,
    base_url_flag: Option<&str>,
    file: &ConfigFile,
    file_path: Option<&Path>,
    src: &Sources,
) -> anyhow::Result<Selection> {
    let where_file = file_path
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "the config file".into());
    let (kind, model, preset_base_url) =
        match named_model(model_flag, base_url_flag, file, &where_file)? {
            Named::Other(selection) => return Ok(selection),
            Named::Provider(kind, model, preset) => (kind, model, preset),
        };
    let section = file.section(kind);
    let env = |var: &str| {
        (src.env)(var)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let base_url = base_url(
        kind,
        preset_base_url,
        base_url_flag,
        section,
        &env,
        &where_file,
    )?;
    let (credentials, key_var) = credentials(kind, section, &env, src.keychain);
    let sampling = section.sampling().overlaid(
        file.models
            .get(&format!("{}:{model}", kind.name()))
            .or_else(|| file.models.get(&model))
            .unwrap_or(&Sampling::default()),
    );
    let row = kind.row();
    let at_default = row.base_url == Some(base_url.trim_end_matches('/'));
    if credentials.key.is_none() && row.key_required && at_default {
        bail!(
            "no API key for {}: set {key_var}, or store the key in the OS keychain (service \"{KEYCHAIN_SERVICE}\", account \"{}\")",
            row.name,
            row.keychain_account
        );
    }
    Ok(Selection::Provider(Box::new(ProviderConfig {
        kind,
        base_url,
        credentials,
        key_var,
        http: http_settings(section),
        max_tokens: sampling.max_tokens,
        sampling,
        reasoning_effort: section.reasoning_effort.clone(),
        reasoning_summary: section.reasoning_summary.clone(),
        price: price(file, kind, &model),
        vision: section.vision,
        context_window: section.context_window.filter(|n| *n > 0),
        model,
    })))
}

/// What the flags and the config file name: a provider's model, or a model that
/// needs nothing more (the offline analyst, a replay).
enum Named {
    Provider(ProviderKind, String, Option<&'static str>),
    Other(Selection),
}

/// The model `--model` names, else the config file's `model`; the offline analyst
/// when neither does. `--base-url` only goes with a provider.
fn named_model(
    model_flag: Option<&str>,
    base_url_flag: Option<&str>,
    file: &ConfigFile,
    where_file: &str,
) -> anyhow::Result<Named> {
    let spec_text = model_flag
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .or_else(|| file.model.clone());
    let Some(spec_text) = spec_text else {
        if base_url_flag.is_some() {
            bail!("--base-url needs a model too, e.g. --model openai-compatible:qwen2.5-coder");
        }
        return Ok(Named::Other(Selection::Offline {
            why: format!(
                "no model configured (no --model, no `model` in {where_file}); using the built-in offline analyst, which is rule-based, not an LLM"
            ),
        }));
    };
    Ok(match spec_text.parse::<ModelSpec>()? {
        ModelSpec::Offline => {
            if base_url_flag.is_some() {
                bail!("--base-url does not apply to the offline analyst");
            }
            Named::Other(Selection::Offline {
                why: "the built-in offline analyst (rule-based, not an LLM) was asked for".into(),
            })
        }
        ModelSpec::Replay(script) => {
            if base_url_flag.is_some() {
                bail!("--base-url does not apply to a replay");
            }
            Named::Other(Selection::Replay(script))
        }
        ModelSpec::Provider {
            kind,
            model,
            preset_base_url,
        } => Named::Provider(kind, model, preset_base_url),
    })
}

/// Where the provider is: `--base-url`, its variable, the config file, what `--model`
/// implied (`ollama:`), its default; an http(s) URL.
fn base_url(
    kind: ProviderKind,
    preset_base_url: Option<&'static str>,
    base_url_flag: Option<&str>,
    section: &Section,
    env: &dyn Fn(&str) -> Option<String>,
    where_file: &str,
) -> anyhow::Result<String> {
    let row = kind.row();
    let base_url = base_url_flag
        .map(str::to_owned)
        .or_else(|| row.base_url_var.and_then(env))
        .or_else(|| section.base_url.clone())
        // `ollama:` follows Ollama's own variable, as its CLI does.
        .or_else(|| {
            preset_base_url
                .and(env("OLLAMA_HOST"))
                .map(|h| ollama_base(&h))
        })
        .or_else(|| preset_base_url.map(str::to_owned))
        .or_else(|| row.base_url.map(str::to_owned));
    let Some(base_url) = base_url else {
        bail!(
            "{} needs the server's base URL: pass --base-url (Ollama: http://localhost:11434/v1, \
             llama.cpp server: http://localhost:8080/v1, vLLM: http://localhost:8000/v1, \
             LM Studio: http://localhost:1234/v1) or set base_url under [openai-compatible] in {where_file}",
            row.name
        );
    };
    let parsed = reqwest::Url::parse(&base_url).map_err(|e| {
        anyhow::anyhow!(
            "the base URL `{}` is not a URL ({e})",
            display_url(&base_url)
        )
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        bail!(
            "the base URL `{}` must start with http:// or https://",
            display_url(&base_url)
        );
    }
    Ok(base_url)
}

/// The Chat Completions base of the Ollama that `OLLAMA_HOST` names, the way Ollama's
/// CLI reads it: `host`, `host:port`, `http(s)://host[:port]`; port 11434 unless given
/// (443 for https), a listen-all address meaning this machine.
pub fn ollama_base(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    let with_scheme = if host.contains("://") {
        host.to_string()
    } else {
        format!("http://{host}")
    };
    let Ok(mut url) = reqwest::Url::parse(&with_scheme) else {
        // Refused with its own message by the check that follows.
        return with_scheme;
    };
    if url.port().is_none() && url.scheme() == "http" {
        let _ = url.set_port(Some(11434));
    }
    match url.host_str() {
        Some("0.0.0.0") => {
            let _ = url.set_host(Some("127.0.0.1"));
        }
        Some("[::]") => {
            let _ = url.set_host(Some("[::1]"));
        }
        _ => {}
    }
    join_url(url.as_str(), "v1")
}

/// The key: from the variable (the config file may name another), else the keychain;
/// with the variable that normally holds it, for hints.
fn credentials(
    kind: ProviderKind,
    section: &Section,
    env: &dyn Fn(&str) -> Option<String>,
    keychain: &dyn Fn(&str) -> Option<String>,
) -> (Credentials, String) {
    let row = kind.row();
    let key_var = section
        .api_key_env
        .clone()
        .unwrap_or_else(|| row.key_var.to_string());
    let credentials = match env(&key_var).and_then(ApiKey::new) {
        Some(key) => Credentials {
            key: Some(key),
            source: KeySource::Env(key_var.clone()),
        },
        None => match keychain(row.keychain_account).and_then(ApiKey::new) {
            Some(key) => Credentials {
                key: Some(key),
                source: KeySource::Keychain(row.keychain_account.into()),
            },
            None => Credentials::none(),
        },
    };
    (credentials, key_var)
}

/// The section's timeouts and attempts over the defaults (each at least 1).
fn http_settings(section: &Section) -> HttpSettings {
    let mut http = HttpSettings::default();
    if let Some(s) = section.connect_timeout_secs {
        http.connect_timeout = Duration::from_secs(s.max(1));
    }
    if let Some(s) = section.idle_timeout_secs {
        http.idle_timeout = Duration::from_secs(s.max(1));
    }
    if let Some(n) = section.max_attempts {
        http.retry.max_attempts = n.max(1);
    }
    http
}

/// The config file's price for `provider:model` (or just the model), else the table's.
fn price(file: &ConfigFile, kind: ProviderKind, model: &str) -> Option<Price> {
    file.prices
        .get(&format!("{}:{model}", kind.name()))
        .or_else(|| file.prices.get(model))
        .copied()
        .or_else(|| pricing::lookup(kind.name(), model))
}

/// [`resolve`] against the real environment, config file and keychain.
pub fn from_environment(
    model_flag: Option<&str>,
    base_url_flag: Option<&str>,
) -> anyhow::Result<Selection> {
    let env = |v: &str| std::env::var(v).ok();
    let path = config_path(&env);
    let file = match &path {
        Some(p) => ConfigFile::load(p)?,
        None => ConfigFile::default(),
    };
    resolve(
        model_flag,
        base_url_flag,
        &file,
        path.as_deref(),
        &Sources {
            env: &env,
            keychain: &keychain_lookup,
        },
    )
}

/// The key stored for `account` in the OS keychain, if there is a keychain and a key.
/// Any failure (no Secret Service daemon on a headless Linux, a locked keychain) means
/// "no key here": the caller then names the environment variable to set instead.
pub fn keychain_lookup(account: &str) -> Option<String> {
    let account = account.to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    // Its own thread: the Secret Service client must not run on a Tokio worker, and a
    // keychain that never answers must not hold up the run.
    std::thread::spawn(move || {
        let found = keychain_entry(&account)
            .and_then(|e| e.get_password().map_err(|e| e.to_string()))
            .ok();
        let _ = tx.send(found);
    });
    rx.recv_timeout(Duration::from_secs(5)).ok().flatten()
}

/// Store `key` for `account` (a provider name) in the OS keychain.
pub fn keychain_store(account: &str, key: &str) -> anyhow::Result<()> {
    let key = ApiKey::new(key).context("the key is empty")?;
    keychain_entry(account)
        .and_then(|e| e.set_password(key.expose()).map_err(|e| e.to_string()))
        .map_err(|e| anyhow::anyhow!("cannot store the key in the OS keychain: {e}"))
}

/// Remove the key stored for `account` from the OS keychain; false when there was none.
pub fn keychain_delete(account: &str) -> anyhow::Result<bool> {
    let entry =
        keychain_entry(account).map_err(|e| anyhow::anyhow!("cannot open the OS keychain: {e}"))?;
    match entry.delete_credential() {
        Ok(()) => Ok(true),
        Err(keyring_core::Error::NoEntry) => Ok(false),
        Err(e) => Err(anyhow::anyhow!(
            "cannot remove the key from the OS keychain: {e}"
        )),
    }
}

/// The keychain entry of `account` (service `sandalyst`) in the system's store: the
/// Secret Service on Linux and the BSDs, the Keychain on macOS, the Credential Manager
/// on Windows. The store is opened once per process, on first use (keyring-core keeps
/// it as its default store).
fn keychain_entry(account: &str) -> Result<keyring_core::Entry, String> {
    static STORE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    STORE
        .get_or_init(|| {
            let store = system_store().map_err(|e| e.to_string())?;
            keyring_core::set_default_store(store);
            Ok(())
        })
        .clone()?;
    keyring_core::Entry::new(KEYCHAIN_SERVICE, account).map_err(|e| e.to_string())
}

#[cfg(target_os = "macos")]
fn system_store() -> keyring_core::Result<std::sync::Arc<keyring_core::CredentialStore>> {
    Ok(apple_native_keyring_store::keychain::Store::new()?)
}

#[cfg(windows)]
fn system_store() -> keyring_core::Result<std::sync::Arc<keyring_core::CredentialStore>> {
    Ok(windows_native_keyring_store::Store::new()?)
}

#[cfg(all(
    unix,
    not(any(target_os = "macos", target_os = "ios", target_os = "android"))
))]
fn system_store() -> keyring_core::Result<std::sync::Arc<keyring_core::CredentialStore>> {
    Ok(zbus_secret_service_keyring_store::Store::new()?)
}

#[cfg(not(any(windows, all(unix, not(any(target_os = "ios", target_os = "android"))))))]
fn system_store() -> keyring_core::Result<std::sync::Arc<keyring_core::CredentialStore>> {
    Err(keyring_core::Error::NoDefaultStore)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_updates_section_is_read_and_a_misspelt_key_refused() {
        let path = Path::new("config.toml");
        let file = ConfigFile::parse(
            "[updates]\nfeed = \"https://u.example/latest.json\"\npubkey = \"a2V5\"\nenabled = true\n",
            path,
        )
        .unwrap();
        assert_eq!(
            file.updates,
            UpdatesSection {
                feed: Some("https://u.example/latest.json".into()),
                pubkey: Some("a2V5".into()),
                enabled: Some(true),
            }
        );
        assert_eq!(
            ConfigFile::parse("", path).unwrap().updates,
            UpdatesSection::default()
        );
        let e = ConfigFile::parse("[updates]\nurl = \"https://u.example\"\n", path).unwrap_err();
        assert!(format!("{e:#}").contains("url"), "{e:#}");
    }

    #[test]
    fn specs_parse_with_helpful_errors() {
        assert_eq!("offline".parse::<ModelSpec>().unwrap(), ModelSpec::Offline);
        assert_eq!(
            "openai:gpt-5.4".parse::<ModelSpec>().unwrap(),
            ModelSpec::Provider {
                kind: ProviderKind::OpenAi,
                model: "gpt-5.4".into(),
                preset_base_url: None
            }
        );
        assert_eq!(
            "replay:steps.json".parse::<ModelSpec>().unwrap(),
            ModelSpec::Replay(PathBuf::from("steps.json"))
        );
        // Model names may contain colons (Ollama tags).
        match "ollama:qwen2.5-coder:7b".parse::<ModelSpec>().unwrap() {
            ModelSpec::Provider {
                kind,
                model,
                preset_base_url,
            } => {
                assert_eq!(kind, ProviderKind::OpenAiCompatible);
                assert_eq!(model, "qwen2.5-coder:7b");
                assert_eq!(preset_base_url, Some("http://localhost:11434/v1"));
            }
            other => panic!("{other:?}"),
        }
        let e = "gpt-5.4".parse::<ModelSpec>().unwrap_err().to_string();
        assert!(e.contains("did you mean openai:gpt-5.4"), "{e}");
        let e = "gemini:x".parse::<ModelSpec>().unwrap_err().to_string();
        assert!(e.contains("unknown provider `gemini`"), "{e}");
    }

    #[test]
    fn ollama_host_is_read_as_ollama_reads_it() {
        assert_eq!(ollama_base("0.0.0.0"), "http://127.0.0.1:11434/v1");
        assert_eq!(ollama_base("127.0.0.1:11500"), "http://127.0.0.1:11500/v1");
        assert_eq!(
            ollama_base("http://gpu-box:8000/"),
            "http://gpu-box:8000/v1"
        );
        assert_eq!(
            ollama_base("https://ollama.example.com"),
            "https://ollama.example.com/v1"
        );
    }
}
