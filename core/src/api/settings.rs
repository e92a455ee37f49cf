//! Settings into a session's configuration and a model, in one place for every front
//! end: the desktop's settings file ([`Settings`], JSON in the data folder), the
//! command line's flags ([`Flags`]), the config file (`approve`, `network`,
//! `follow_links`, `[image]`), the environment and the OS keychain. The config file
//! counts the same for both: under the command line's flags, and under what the
//! desktop's page saved (the page saves only what differs from the file and the
//! defaults, so a choice left alone keeps following the file). API keys are never in
//! a settings file: they go to the keychain ([`save_api_key`]) and only a masked form
//! ever reaches the page.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::approval::ApprovalMode;
use crate::egress::{NetworkMode, Pin, PolicyError};
use crate::model::config::{self, ConfigFile, ImageSection, Selection};
use crate::model::Model;
use crate::sandbox::custom::{PackageError, Packages};
use crate::session::{SessionConfig, SessionError};
use crate::workspace::FollowLinks;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Settings {
    /// `offline`, `openai`, `anthropic` or `openai-compatible`.
    pub provider: String,
    pub model: String,
    /// Empty: the provider's default.
    pub base_url: String,
    /// Added to the agent's own instructions.
    pub instructions: String,
    pub python: bool,
    pub shell: bool,
    /// `off`, `full` or `allow:HOST,…` (presets as `@python-packages`), checked when
    /// saved; older files wrote a bool.
    #[serde(deserialize_with = "network_text")]
    pub network: String,
    pub max_turns: u32,
    pub wall_time_secs: u64,
    pub call_timeout_secs: u64,
    pub memory_mb: u64,
    pub cpus: f64,
    /// 0: no cost limit.
    pub max_cost_usd: f64,
    /// Whether a vision model is shown the charts it makes.
    pub show_charts: bool,
    /// Empty: the default sandbox image.
    pub image_tag: String,
    /// The user's own packages on the default image, space-separated (pip names,
    /// versions allowed; Debian names). Checked by the core when saved.
    pub pip_packages: String,
    pub apt_packages: String,
    /// Which calls of a new session wait for the analyst (a session's own choice is
    /// kept with it).
    pub approval: ApprovalMode,
    /// What isolates the sandbox: auto, runc or gvisor.
    pub isolation: crate::sandbox::Isolation,
    /// Follow links in a dropped folder that lead out of it (off: only links to
    /// files inside it).
    pub follow_outside_links: bool,
}

impl Default for Settings {
    /// The core's own defaults ([`SessionConfig::default`]), written nowhere else.
    fn default() -> Self {
        let c = SessionConfig::default();
        Settings {
            provider: "offline".into(),
            model: String::new(),
            base_url: String::new(),
            instructions: c.instructions,
            python: c.tools.python,
            shell: c.tools.shell,
            network: c.sandbox.network.to_string(),
            max_turns: c.limits.max_turns,
            wall_time_secs: c.limits.wall_time.as_secs(),
            call_timeout_secs: c.limits.call_timeout.as_secs(),
            memory_mb: u64::try_from(c.sandbox.memory_bytes >> 20).unwrap_or(0),
            cpus: c.sandbox.nano_cpus as f64 / 1e9,
            max_cost_usd: c.limits.max_cost_usd.unwrap_or(0.0),
            show_charts: c.show_images,
            image_tag: c.sandbox.image,
            pip_packages: String::new(),
            apt_packages: String::new(),
            approval: c.approval,
            isolation: c.sandbox.isolation,
            follow_outside_links: c.follow_links == FollowLinks::Outside,
        }
    }
}

impl Settings {
    /// What the desktop starts from before its page saved anything: the defaults with
    /// the config file's choices over them, as the command line takes them when no
    /// flag says otherwise.
    pub fn from_config_file(file: &ConfigFile) -> Settings {
        let mut s = Settings::default();
        if let Some(approve) = file.approve {
            s.approval = approve;
        }
        if let Some(n) = &file.network {
            s.network = n.0.to_string();
        }
        if let Some(follow) = file.follow_links {
            s.follow_outside_links = follow == FollowLinks::Outside;
        }
        s.pip_packages = file.image.pip.join(" ");
        s.apt_packages = file.image.apt.join(" ");
        s
    }

    /// What these settings choose, for [`resolve`]: all of it (the config file's
    /// choices the page shows are in them already: [`load`]).
    pub fn choices(&self) -> Choices {
        Choices {
            instructions: Some(self.instructions.clone()),
            python: Some(self.python),
            shell: Some(self.shell),
            show_images: Some(self.show_charts),
            max_turns: Some(self.max_turns),
            wall_time_secs: Some(self.wall_time_secs),
            call_timeout_secs: Some(self.call_timeout_secs),
            max_cost_usd: Some((self.max_cost_usd > 0.0).then_some(self.max_cost_usd)),
            // Saved settings passed the check (`save`); a hand-edited mode that does
            // not runs with no network, and a hand-edited package list none.
            network: Some(network(self).unwrap_or(NetworkMode::Off)),
            resolve: Vec::new(),
            approval: Some(self.approval),
            isolation: Some(self.isolation),
            follow_links: Some(if self.follow_outside_links {
                FollowLinks::Outside
            } else {
                FollowLinks::Inside
            }),
            allow_no_limits: false,
            memory_mib: Some(self.memory_mb),
            cpus: Some(self.cpus),
            image: Some(self.image_tag.clone()),
            packages: Some(packages(self).unwrap_or_default()),
        }
    }
}

pub fn path(data_root: &Path) -> PathBuf {
    data_root.join("desktop-settings.json")
}

/// The desktop's settings: what its page saved, over the config file's choices, over
/// the defaults. A config file that cannot be read adds nothing here (choosing the
/// model reads the same file and says what is wrong with it).
pub fn load(data_root: &Path) -> Settings {
    load_over(data_root, &base())
}

/// What the page's settings stand on now: the defaults and the config file.
fn base() -> Settings {
    let file = config::load_config_file()
        .map(|(f, _)| f)
        .unwrap_or_default();
    Settings::from_config_file(&file)
}

/// The settings file over `base`: a field the page never saved is `base`'s.
pub fn load_over(data_root: &Path, base: &Settings) -> Settings {
    let saved = std::fs::read_to_string(path(data_root))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    let Some(serde_json::Value::Object(saved)) = saved else {
        return base.clone();
    };
    let mut merged = serde_json::to_value(base).expect("settings are plain data");
    if let serde_json::Value::Object(m) = &mut merged {
        m.extend(saved);
    }
    serde_json::from_value(merged).unwrap_or_else(|_| base.clone())
}

pub fn save(data_root: &Path, s: &Settings) -> anyhow::Result<()> {
    save_over(data_root, s, &base())
}

/// Save what differs from `base` (the defaults and the config file), so a choice the
/// page left alone keeps following the config file.
pub fn save_over(data_root: &Path, s: &Settings, base: &Settings) -> anyhow::Result<()> {
    packages(s)?;
    network(s)?;
    // Limits that cannot work are refused here, not at the next session.
    resolve(&s.choices(), &ConfigFile::default())?;
    let mut changed = serde_json::to_value(s)?;
    let base = serde_json::to_value(base)?;
    if let (serde_json::Value::Object(m), serde_json::Value::Object(b)) = (&mut changed, &base) {
        m.retain(|k, v| b.get(k) != Some(v));
    }
    std::fs::create_dir_all(data_root)?;
    // Written beside the old file, synced and renamed over it: a crash keeps one whole.
    crate::store::write_atomic(&path(data_root), &serde_json::to_vec_pretty(&changed)?)
        .with_context(|| format!("cannot save the settings in {}", data_root.display()))
}

/// The packages of the settings, every name checked by the core.
pub fn packages(s: &Settings) -> Result<Packages, PackageError> {
    Packages::new(
        s.pip_packages.split_whitespace(),
        s.apt_packages.split_whitespace(),
    )
}

/// The network mode of the settings, checked.
pub fn network(s: &Settings) -> Result<NetworkMode, PolicyError> {
    s.network.parse()
}

/// The settings' network as text, or the bool older files wrote.
fn network_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Old(bool),
        Text(String),
    }
    Ok(match Written::deserialize(d)? {
        Written::Old(true) => "full".into(),
        Written::Old(false) => "off".into(),
        Written::Text(t) => t,
    })
}

/// The presets an allowlist may name, for the settings page.
#[derive(Clone, Debug, Serialize)]
pub struct NetworkPreset {
    /// What the list writes: `@python-packages`.
    pub entry: String,
    pub label: String,
    pub hosts: Vec<String>,
    pub about: String,
}

/// Every preset, and what each mode exposes, for the settings page.
#[derive(Clone, Debug, Serialize)]
pub struct NetworkChoices {
    pub presets: Vec<NetworkPreset>,
    pub off: String,
    pub allow: String,
    pub full: String,
}

pub fn network_choices() -> NetworkChoices {
    let allow = NetworkMode::Allow("@python-packages".parse().expect("a preset"));
    NetworkChoices {
        presets: crate::egress::presets()
            .iter()
            .map(|p| NetworkPreset {
                entry: format!("@{}", p.name),
                label: p.label.into(),
                hosts: p.hosts.iter().map(|h| h.to_string()).collect(),
                about: p.about.into(),
            })
            .collect(),
        off: NetworkMode::Off.exposure().into(),
        allow: allow.exposure().into(),
        full: NetworkMode::Full.exposure().into(),
    }
}

/// `sk-…abcd`: enough to recognise a key, never enough to use it.
pub fn mask(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 8 {
        return "••••".into();
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

/// The model spec the core understands (`offline`, `openai:gpt-5.4`, ...).
pub fn model_spec(s: &Settings) -> String {
    if s.provider == "offline" || s.provider.is_empty() || s.model.trim().is_empty() {
        "offline".into()
    } else {
        format!("{}:{}", s.provider, s.model.trim())
    }
}

/// The session settings of the desktop's settings and the config file (read off the
/// async runtime).
pub async fn desktop_config(s: &Settings) -> anyhow::Result<SessionConfig> {
    let (file, _) = tokio::task::spawn_blocking(config::load_config_file).await??;
    Ok(resolve(&s.choices(), &file)?.config)
}

/// What one front end chose for a session; `None`: it said nothing, so the config
/// file, then the core's default ([`SessionConfig::default`]), decides. The command
/// line's flags and the desktop's settings only copy themselves into one
/// ([`Flags`], [`Settings::choices`]); [`resolve`] decides.
#[derive(Clone, Debug, Default)]
pub struct Choices {
    pub instructions: Option<String>,
    pub python: Option<bool>,
    pub shell: Option<bool>,
    pub show_images: Option<bool>,
    pub max_turns: Option<u32>,
    pub wall_time_secs: Option<u64>,
    pub call_timeout_secs: Option<u64>,
    /// `Some(None)`: no cost limit.
    pub max_cost_usd: Option<Option<f64>>,
    pub network: Option<NetworkMode>,
    /// Host pins added to the config file's `resolve`.
    pub resolve: Vec<Pin>,
    pub approval: Option<ApprovalMode>,
    pub isolation: Option<crate::sandbox::Isolation>,
    pub follow_links: Option<FollowLinks>,
    pub allow_no_limits: bool,
    pub memory_mib: Option<u64>,
    pub cpus: Option<f64>,
    /// An image of the user's own, used as it is (empty: the built-in one).
    pub image: Option<String>,
    /// Packages on the built-in image instead of the config file's `[image]` lists.
    pub packages: Option<Packages>,
}

/// The one place that turns a front end's choices, the config file (`approve`,
/// `network`, `follow_links`, `resolve`, `[image]`), the environment
/// (`SANDALYST_BUILD_CA_FILE`) and the core's defaults into a session's
/// configuration: a choice, else the file, else the default; then checked and settled
/// by [`SessionConfig::settled`] (limits, the workspace at most half the memory).
pub fn resolve(ch: &Choices, file: &ConfigFile) -> Result<Configured, SessionError> {
    let mut c = SessionConfig::default();
    if let Some(i) = &ch.instructions {
        c.instructions = i.trim().to_string();
    }
    c.tools.python = ch.python.unwrap_or(c.tools.python);
    c.tools.shell = ch.shell.unwrap_or(c.tools.shell);
    c.show_images = ch.show_images.unwrap_or(c.show_images);
    let l = &mut c.limits;
    l.max_turns = ch.max_turns.unwrap_or(l.max_turns);
    l.wall_time = ch.wall_time_secs.map_or(l.wall_time, Duration::from_secs);
    l.call_timeout = ch
        .call_timeout_secs
        .map_or(l.call_timeout, Duration::from_secs);
    l.max_cost_usd = ch.max_cost_usd.unwrap_or(l.max_cost_usd);
    c.approval = ch.approval.or(file.approve).unwrap_or(c.approval);
    c.sandbox.network = (ch.network.clone())
        .or(file.network.as_ref().map(|n| n.0.clone()))
        .unwrap_or(c.sandbox.network);
    c.follow_links = ch
        .follow_links
        .or(file.follow_links)
        .unwrap_or(c.follow_links);
    c.sandbox.egress_resolve = file.resolve.iter().chain(&ch.resolve).cloned().collect();
    c.sandbox.isolation = ch.isolation.unwrap_or(c.sandbox.isolation);
    c.sandbox.allow_no_limits = ch.allow_no_limits;
    if let Some(mib) = ch.memory_mib {
        c.sandbox.memory_bytes = i64::try_from(mib).unwrap_or(i64::MAX >> 20) << 20;
    }
    if let Some(cpus) = ch.cpus {
        c.sandbox.nano_cpus = (cpus * 1e9) as i64;
    }
    let mut notes = Vec::new();
    let image = ch.image.as_deref().map(str::trim).unwrap_or_default();
    if image.is_empty() {
        c.sandbox.packages = match &ch.packages {
            Some(p) => p.clone(),
            None => file.image.packages().map_err(|e| SessionError::BadInput {
                message: e.to_string(),
            })?,
        };
        c.sandbox.build = build_options(&file.image);
    } else {
        c.sandbox.image = image.to_string();
        if !file.image.pip.is_empty() || !file.image.apt.is_empty() {
            notes.push(format!(
                "the image {image} is used as it is; the [image] packages of the config file are added to the built-in image only"
            ));
        }
    }
    Ok(Configured {
        config: c.settled()?,
        notes,
    })
}

/// How the derived image is built: the `[image]` section's options, the CA file of
/// `SANDALYST_BUILD_CA_FILE` when the section names none.
fn build_options(image: &ImageSection) -> crate::sandbox::custom::BuildOptions {
    let mut build = image.build_options();
    if build.ca_file.is_none() {
        build.ca_file = build_ca_file();
    }
    build
}

/// The CA file a package build trusts, from `SANDALYST_BUILD_CA_FILE`.
fn build_ca_file() -> Option<PathBuf> {
    std::env::var_os("SANDALYST_BUILD_CA_FILE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The command line's agent flags, as given (the shell only copies them here).
#[derive(Clone, Debug, Default)]
pub struct Flags {
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// Everything else the flags say about the session.
    pub choices: Choices,
}

/// A session's configuration and what the user should know about it.
pub struct Configured {
    pub config: SessionConfig,
    /// E.g. that the config file's packages are not added to an image the user named.
    pub notes: Vec<String>,
}

impl Flags {
    /// The session settings of the flags and the config file (read off the async
    /// runtime).
    pub async fn session_config(&self) -> anyhow::Result<Configured> {
        let (file, _) = tokio::task::spawn_blocking(config::load_config_file).await??;
        Ok(resolve(&self.choices, &file)?)
    }

    /// The model of `--model`/`--base-url`, the environment, the config file and the
    /// keychain, and why it is the offline analyst when it is.
    pub fn model(&self) -> anyhow::Result<(Box<dyn Model>, Option<String>)> {
        let selection = config::from_environment(self.model.as_deref(), self.base_url.as_deref())?;
        let why = match &selection {
            Selection::Offline { why } => Some(why.clone()),
            _ => None,
        };
        Ok((selection.open()?, why))
    }
}

/// The models the server of `provider` offers (`ollama`, `openai-compatible`,
/// `openai`, `anthropic`; `None`: the configured provider's), reached with the same
/// base URL and key an ask would use; the offline analyst first, always.
pub async fn list_models(
    provider: Option<&str>,
    base_url: Option<&str>,
) -> anyhow::Result<Vec<crate::model::listing::Listed>> {
    use crate::model::listing;
    let provider = provider.map(|p| p.trim().to_ascii_lowercase());
    if provider.as_deref() == Some("offline") {
        return Ok(vec![listing::offline()]);
    }
    // Any model name will do: only the provider's place and key are used.
    let spec = provider.as_ref().map(|p| format!("{p}:list"));
    let base = base_url.map(str::to_owned).filter(|b| !b.trim().is_empty());
    let selection = tokio::task::spawn_blocking(move || {
        config::from_environment(spec.as_deref(), base.as_deref())
    })
    .await??;
    let mut out = vec![listing::offline()];
    if let Selection::Provider(p) = selection {
        let name = provider.unwrap_or_else(|| p.kind.name().to_string());
        out.extend(listing::list(&p, &name).await?);
    }
    Ok(out)
}

/// The config file's `[image]` section (read off the async runtime).
pub async fn image_section() -> anyhow::Result<ImageSection> {
    let (file, _) = tokio::task::spawn_blocking(config::load_config_file).await??;
    Ok(file.image)
}

/// The model for `spec` (`offline`, `replay:FILE`, `provider:model`), with the base URL
/// of the settings when the spec is the configured provider's.
pub fn open_model(spec: &str, s: &Settings) -> anyhow::Result<Box<dyn Model>> {
    let spec = spec.trim();
    if spec.is_empty() || spec == "offline" {
        return Ok(Box::new(crate::analyst::OfflineAnalyst::new()));
    }
    let same = model_spec(s) == spec;
    let mut with = s.clone();
    if !same {
        with.base_url.clear();
    }
    selection_of(spec, &with)?.open()
}

/// Resolve the model of these settings with the core's rules (environment, config
/// file, keychain), as the command line does.
pub fn selection(s: &Settings) -> anyhow::Result<Selection> {
    selection_of(&model_spec(s), s)
}

fn selection_of(spec: &str, s: &Settings) -> anyhow::Result<Selection> {
    let base = Some(s.base_url.trim()).filter(|b| !b.is_empty());
    config::from_environment(Some(spec), base)
}

/// The model the next ask uses, as a person reads it, and why it is the offline
/// analyst when it is (no provider configured, or a configuration that does not work).
pub fn describe_model(s: &Settings) -> (String, Option<String>) {
    match selection(s) {
        Ok(Selection::Provider(p)) => (p.describe(), None),
        Ok(Selection::Offline { why }) => ("the offline analyst".to_string(), Some(why)),
        Ok(Selection::Replay(p)) => (format!("a replay of {}", p.display()), None),
        Err(e) => (
            "the offline analyst".to_string(),
            Some(super::Error::from(e).message),
        ),
    }
}

/// The `--model` flag's help: the providers' forms (from the providers' table), a
/// replay, or the offline analyst.
pub fn model_help() -> String {
    format!(
        "The model: {}, replay:FILE (a JSON list of python/shell/say steps), or offline (the built-in rule-based analyst, not an LLM). Default: `model` in the config file, else offline.",
        crate::model::providers::model_flag_help()
    )
}

/// One choice of the settings page's provider list.
#[derive(Clone, Debug, Serialize)]
pub struct ProviderChoice {
    /// What [`Settings::provider`] holds for it.
    pub name: &'static str,
    pub label: &'static str,
    /// Where it is when the base URL is left empty (none: the user must say).
    pub base_url: Option<&'static str>,
    /// Whether it takes an API key at all (the offline analyst does not).
    pub takes_key: bool,
}

/// The settings page's providers: the offline analyst, then each provider family's
/// own row of the providers' table (a spelling such as `ollama` shares its family's
/// key and is written in the CLI's `--model`).
pub fn providers() -> Vec<ProviderChoice> {
    let offline = ProviderChoice {
        name: "offline",
        label: "Offline analyst (built in, no key)",
        base_url: None,
        takes_key: false,
    };
    let families = crate::model::providers::PROVIDERS
        .iter()
        .filter(|row| row.kind.row().name == row.name)
        .map(|row| ProviderChoice {
            name: row.name,
            label: row.label,
            base_url: row.base_url,
            takes_key: true,
        });
    std::iter::once(offline).chain(families).collect()
}

/// Store a provider's key in the OS keychain (off the async runtime); returns its
/// masked form. The keychain accounts are the providers' table's.
pub async fn save_api_key(provider: String, key: String) -> Result<String, super::Error> {
    let keyed: Vec<&str> = crate::model::providers::PROVIDERS
        .iter()
        .map(|p| p.keychain_account)
        .collect();
    if !keyed.contains(&provider.as_str()) {
        return Err(super::Error::bad_input(
            "keys are stored for openai, anthropic or openai-compatible",
        ));
    }
    let key = key.trim().to_string();
    let masked = mask(&key);
    tokio::task::spawn_blocking(move || config::keychain_store(&provider, &key))
        .await
        .map_err(anyhow::Error::from)??;
    Ok(masked)
}

/// The masked key stored for a provider, if any (looked up off the async runtime).
pub async fn api_key_status(provider: String) -> Option<String> {
    tokio::task::spawn_blocking(move || config::keychain_lookup(&provider).map(|k| mask(&k)))
        .await
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A desktop session's configuration: its settings resolved with the file.
    fn desktop(s: &Settings, file: &ConfigFile) -> SessionConfig {
        resolve(&s.choices(), file).unwrap().config
    }

    #[test]
    fn the_settings_page_lists_the_offline_analyst_and_each_family_once() {
        let names: Vec<&str> = providers().iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            ["offline", "openai", "anthropic", "openai-compatible"]
        );
        // Every family's key can be saved under the name the page sends.
        for p in providers().iter().filter(|p| p.takes_key) {
            assert!(
                crate::model::providers::PROVIDERS
                    .iter()
                    .any(|row| row.keychain_account == p.name),
                "{}",
                p.name
            );
        }
    }

    #[test]
    fn the_model_help_names_every_provider_of_the_table() {
        let help = model_help();
        for p in crate::model::providers::PROVIDERS {
            assert!(help.contains(p.keychain_account), "{help}");
        }
        assert!(help.starts_with("The model: openai:MODEL, anthropic:MODEL, openai-compatible:MODEL (with --base-url), ollama:MODEL, replay:FILE"), "{help}");
    }

    #[test]
    fn keys_are_masked_and_settings_round_trip() {
        assert_eq!(mask("sk-abcdefghijklmnop"), "sk-…mnop");
        assert_eq!(mask("short"), "••••");
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            load_over(dir.path(), &Settings::default()),
            Settings::default()
        );
        let s = Settings {
            provider: "openai".into(),
            model: "gpt-5.4".into(),
            ..Default::default()
        };
        save_over(dir.path(), &s, &Settings::default()).unwrap();
        assert_eq!(load_over(dir.path(), &Settings::default()), s);
        assert_eq!(model_spec(&s), "openai:gpt-5.4");
        assert_eq!(model_spec(&Settings::default()), "offline");
    }

    #[test]
    fn the_approval_mode_is_the_new_sessions_default_and_old_files_load() {
        let dir = tempfile::tempdir().unwrap();
        // A settings file of an earlier version, without the field: every call runs.
        std::fs::write(
            path(dir.path()),
            r#"{"provider": "offline", "shell": true}"#,
        )
        .unwrap();
        let old = load_over(dir.path(), &Settings::default());
        assert!(old.shell, "the file was read");
        assert_eq!(old.approval, ApprovalMode::Auto);
        assert_eq!(
            desktop(&old, &ConfigFile::default()).approval,
            ApprovalMode::Auto
        );
        let s = Settings {
            approval: ApprovalMode::Shell,
            ..Default::default()
        };
        save_over(dir.path(), &s, &Settings::default()).unwrap();
        let text = std::fs::read_to_string(path(dir.path())).unwrap();
        assert!(text.contains(r#""approval": "shell""#), "{text}");
        assert_eq!(
            desktop(
                &load_over(dir.path(), &Settings::default()),
                &ConfigFile::default()
            )
            .approval,
            ApprovalMode::Shell
        );
    }

    #[test]
    fn links_leaving_a_folder_are_followed_only_when_the_settings_say_so() {
        use crate::workspace::FollowLinks;
        let dir = tempfile::tempdir().unwrap();
        // A settings file of an earlier version, without the field: links stay inside.
        std::fs::write(path(dir.path()), r#"{"provider": "offline"}"#).unwrap();
        assert_eq!(
            desktop(
                &load_over(dir.path(), &Settings::default()),
                &ConfigFile::default()
            )
            .follow_links,
            FollowLinks::Inside
        );
        let s = Settings {
            follow_outside_links: true,
            ..Default::default()
        };
        save_over(dir.path(), &s, &Settings::default()).unwrap();
        assert_eq!(
            desktop(
                &load_over(dir.path(), &Settings::default()),
                &ConfigFile::default()
            )
            .follow_links,
            FollowLinks::Outside
        );
        // The config file's word for it, as the command line reads it.
        let file =
            config::ConfigFile::parse("follow_links = \"outside\"\n", Path::new("config.toml"))
                .unwrap();
        assert_eq!(file.follow_links, Some(FollowLinks::Outside));
        let wrong = config::ConfigFile::parse("follow_links = \"all\"\n", Path::new("config.toml"));
        assert!(wrong.unwrap_err().to_string().contains("config.toml"));
    }

    /// One config file, both front ends: the desktop's session and the command
    /// line's get the same approvals, network, links and image from it, and the
    /// desktop's page overrides only what it changed.
    #[test]
    fn the_desktop_honours_the_config_file_as_the_command_line_does() {
        let text = "approve = \"all\"\nnetwork = \"allow:pypi.org\"\nfollow_links = \"outside\"\n\
                    resolve = [\"pypi.internal=10.0.0.5\"]\n\
                    [image]\npip = [\"tabulate\"]\nbuild_network = \"host\"\n";
        let file = ConfigFile::parse(text, Path::new("config.toml")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let base = Settings::from_config_file(&file);
        let desktop = desktop(&load_over(dir.path(), &base), &file);
        // The command line with no flags that touch these.
        let cli = resolve(&Choices::default(), &file).unwrap().config;
        for c in [&desktop, &cli] {
            assert_eq!(c.approval, ApprovalMode::All);
            assert_eq!(c.sandbox.network.to_string(), "allow:pypi.org");
            assert_eq!(c.follow_links, FollowLinks::Outside);
            assert_eq!(c.sandbox.packages.pip(), ["tabulate"]);
            assert_eq!(c.sandbox.build.network.as_deref(), Some("host"));
            assert_eq!(c.sandbox.egress_resolve.len(), 1);
        }

        // The page changes the network and the turns: only those are saved, and the
        // approvals still follow the file when it changes.
        let page = Settings {
            network: "off".into(),
            max_turns: 7,
            ..load_over(dir.path(), &base)
        };
        save_over(dir.path(), &page, &base).unwrap();
        let saved = std::fs::read_to_string(path(dir.path())).unwrap();
        assert!(
            !saved.contains("approval") && !saved.contains("pip_packages"),
            "{saved}"
        );
        let later = ConfigFile::parse("approve = \"shell\"\n", Path::new("config.toml")).unwrap();
        let s = load_over(dir.path(), &Settings::from_config_file(&later));
        assert_eq!(s.approval, ApprovalMode::Shell);
        assert_eq!((s.network.as_str(), s.max_turns), ("off", 7));
    }

    #[test]
    fn the_desktops_defaults_are_the_cores() {
        let s = Settings::default();
        let c = desktop(&s, &ConfigFile::default());
        let core = SessionConfig::default();
        assert_eq!(c.limits.max_turns, core.limits.max_turns);
        assert_eq!(c.limits.wall_time, core.limits.wall_time);
        assert_eq!(c.limits.call_timeout, core.limits.call_timeout);
        assert_eq!(c.sandbox.memory_bytes, core.sandbox.memory_bytes);
        assert_eq!(c.sandbox.nano_cpus, core.sandbox.nano_cpus);
        assert_eq!(c.approval, core.approval);
        assert_eq!(c.follow_links, core.follow_links);
        assert_eq!(c.sandbox.network, core.sandbox.network);
        assert_eq!(c.sandbox.isolation, core.sandbox.isolation);
        // The shell tool too: one default, whoever asks.
        assert_eq!(c.tools, core.tools);
        let no_choice = resolve(&Choices::default(), &ConfigFile::default()).unwrap();
        assert_eq!(no_choice.config.tools, core.tools);
    }

    /// The invariants hold whoever chose: the workspace at most half the memory, and
    /// limits that cannot work refused (the page's when it saves them).
    #[test]
    fn every_front_ends_session_is_settled_by_the_one_resolver() {
        let file = ConfigFile::default();
        let flags = Choices {
            memory_mib: Some(512),
            ..Choices::default()
        };
        let cli = resolve(&flags, &file).unwrap().config;
        let page = Settings {
            memory_mb: 512,
            ..Settings::default()
        };
        for c in [cli, desktop(&page, &file)] {
            assert_eq!(c.sandbox.memory_bytes, 512 << 20);
            assert_eq!(c.sandbox.workspace_bytes, 256 << 20);
        }
        let no_turns = Settings {
            max_turns: 0,
            ..Settings::default()
        };
        let e = resolve(&no_turns.choices(), &file).err().unwrap();
        assert_eq!(e.code(), "bad_input");
        let dir = tempfile::tempdir().unwrap();
        let e = save_over(dir.path(), &no_turns, &Settings::default()).unwrap_err();
        assert!(e.to_string().contains("turn limit"), "{e}");
        assert!(!path(dir.path()).exists(), "nothing saved");
        // The config file's packages on an image of the user's own: said, not added.
        let file =
            ConfigFile::parse("[image]\npip = [\"tabulate\"]\n", Path::new("c.toml")).unwrap();
        let own = Choices {
            image: Some("mine:1".into()),
            ..Choices::default()
        };
        let r = resolve(&own, &file).unwrap();
        assert!(r.config.sandbox.packages.is_empty());
        assert!(r.notes[0].contains("mine:1"), "{:?}", r.notes);
    }

    #[test]
    fn packages_are_checked_on_save_and_reach_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let s = Settings {
            pip_packages: " tabulate  pyjanitor==0.27 ".into(),
            apt_packages: "fonts-noto-cjk".into(),
            ..Default::default()
        };
        save_over(dir.path(), &s, &Settings::default()).unwrap();
        let c = desktop(
            &load_over(dir.path(), &Settings::default()),
            &ConfigFile::default(),
        );
        assert_eq!(c.sandbox.packages.pip(), ["pyjanitor==0.27", "tabulate"]);
        assert_eq!(c.sandbox.packages.apt(), ["fonts-noto-cjk"]);
        assert!(c.sandbox.image.is_empty());
        let bad = Settings {
            pip_packages: "tabulate;reboot".into(),
            ..Default::default()
        };
        let e = save_over(dir.path(), &bad, &Settings::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a valid pip package name"), "{e}");
        assert_eq!(
            load_over(dir.path(), &Settings::default()),
            s,
            "a refused save keeps the old settings"
        );
        // A tag of the user's own is used as it is.
        let own = Settings {
            image_tag: "mine:1".into(),
            ..s
        };
        let c = desktop(&own, &ConfigFile::default());
        assert_eq!(c.sandbox.image, "mine:1");
        assert!(c.sandbox.packages.is_empty());
    }
}
