//! Check for Updates. Which feed to read and which key its releases must be signed
//! with ([`resolve`]: the config file's `[updates]` over what the release was built
//! with, `plugins.updater` in `tauri.conf.json`), the check against that feed
//! ([`check`]), and the install the analyst agreed to ([`install`]).
//!
//! The feed is a Tauri updater manifest (`latest.json`: version, notes, and per
//! platform a download URL and a minisign signature). Tauri's updater plugin reads it,
//! and verifies the download against the public key before anything is written; the
//! signature must also name the version the feed announces (`requireSignedVersion`),
//! so an old, validly signed release cannot be passed off as a new one. Nothing is
//! fetched when no feed is configured, and a development build checks only when the
//! config file says `enabled = true`. Nothing is installed but the update the page
//! showed, and only when the page asks (the analyst's click).
//!
//! ```toml
//! [updates]
//! feed = "https://updates.example.org/sandalyst/latest.json"
//! pubkey = "dW50cnVzdGVkIGNvbW1lbnQ6IG1pbmlzaWduIHB1YmxpYyBrZXk6..."
//! ```

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use sandalyst::api::{ConfigFile, UpdatesSection};
use serde::Serialize;
use tauri::{AppHandle, Manager, Runtime, Url};
use tauri_plugin_updater::{Update, UpdaterExt};

/// How long a check may take (the manifest is small).
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);

/// The feed a check reads and the key its releases are signed with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feed {
    pub url: Url,
    /// The minisign public key, base64 of the `.pub` file as Tauri's signer writes it.
    pub pubkey: String,
}

/// Whether this build checks for updates, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setting {
    /// No request is made; the sentence says why, for the page.
    Off(String),
    On(Feed),
}

/// What the release was built with: `plugins.updater` of `tauri.conf.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuiltIn {
    pub feed: Option<String>,
    pub pubkey: Option<String>,
}

impl BuiltIn {
    /// The first endpoint and the key of the app's configuration, if set.
    pub fn of(config: &tauri::Config) -> BuiltIn {
        let updater = config.plugins.0.get("updater");
        let text = |v: Option<&serde_json::Value>| {
            v.and_then(|v| v.as_str())
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        BuiltIn {
            feed: text(
                updater
                    .and_then(|u| u.get("endpoints"))
                    .and_then(|e| e.get(0)),
            ),
            pubkey: text(updater.and_then(|u| u.get("pubkey"))),
        }
    }
}

/// What went wrong, for the page: a code to branch on and a sentence to show.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct UpdateError {
    pub code: Code,
    pub message: String,
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// The `[updates]` section (or the built-in one) is not usable.
    UpdateConfig,
    /// The feed could not be reached or read.
    UpdateFeed,
    /// The download is not signed with the configured key (or not for the version
    /// announced): nothing was installed.
    UpdateSignature,
    /// Nothing to install: no check found this version.
    UpdateNotFound,
    /// The verified update could not be put in place.
    UpdateInstall,
}

impl UpdateError {
    fn new(code: Code, message: impl Into<String>) -> UpdateError {
        UpdateError {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for UpdateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UpdateError {}

/// The feed and key to use, from the config file's section over the built-in ones;
/// `development` (a debug build) checks only when the section says `enabled = true`.
pub fn resolve(
    section: &UpdatesSection,
    built_in: &BuiltIn,
    development: bool,
) -> Result<Setting, UpdateError> {
    if section.enabled == Some(false) {
        return Ok(Setting::Off(
            "Checking for updates is turned off in the config file ([updates] enabled = false)."
                .into(),
        ));
    }
    fn given(s: &Option<String>) -> Option<&str> {
        s.as_deref().map(str::trim).filter(|s| !s.is_empty())
    }
    let feed = given(&section.feed).or(built_in.feed.as_deref());
    let pubkey = given(&section.pubkey).or(built_in.pubkey.as_deref());
    let (Some(feed), Some(pubkey)) = (feed, pubkey) else {
        return Ok(Setting::Off(
            "No update feed is configured for this build: set feed and pubkey in the config file's [updates] section."
                .into(),
        ));
    };
    if development && section.enabled != Some(true) {
        return Ok(Setting::Off(
            "This is a development build: it checks for updates only when the config file's [updates] section says enabled = true."
                .into(),
        ));
    }
    let url = Url::parse(feed).map_err(|e| {
        UpdateError::new(
            Code::UpdateConfig,
            format!("The update feed `{feed}` is not a URL ({e}); check [updates] feed in the config file."),
        )
    })?;
    match url.scheme() {
        "https" => {}
        "http" if development && is_loopback(&url) => {}
        _ => {
            return Err(UpdateError::new(
                Code::UpdateConfig,
                format!("The update feed {url} must be an https address; check [updates] feed in the config file."),
            ))
        }
    }
    check_pubkey(pubkey)?;
    Ok(Setting::On(Feed {
        url,
        pubkey: pubkey.to_string(),
    }))
}

/// The key as Tauri's updater takes it: base64 of a minisign public key file.
fn check_pubkey(pubkey: &str) -> Result<(), UpdateError> {
    let bad = |why: String| {
        UpdateError::new(
            Code::UpdateConfig,
            format!("The update key in [updates] pubkey is not a minisign public key in base64 ({why}); use the text of the .pub file that `cargo tauri signer generate` wrote."),
        )
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(pubkey)
        .map_err(|e| bad(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| bad("not text once decoded".into()))?;
    minisign_verify::PublicKey::decode(&text).map_err(|e| bad(e.to_string()))?;
    Ok(())
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The shell's state: where the config file is, and the update a check found (the
/// only one [`install`] will put in place).
pub struct Updates {
    config_path: Option<PathBuf>,
    executable: Option<PathBuf>,
    pending: Mutex<Option<Update>>,
}

impl Updates {
    /// `config_path`: the config file (read at every check, so an edit needs no
    /// restart); none: only the built-in feed.
    pub fn new(config_path: Option<PathBuf>) -> Updates {
        Updates {
            config_path,
            executable: None,
            pending: Mutex::new(None),
        }
    }

    /// Install into `path` instead of the running executable (tests).
    pub fn installing_to(mut self, path: PathBuf) -> Updates {
        self.executable = Some(path);
        self
    }

    /// The setting as the config file says it now.
    pub fn setting<R: Runtime>(&self, app: &AppHandle<R>) -> Result<Setting, UpdateError> {
        let section = match &self.config_path {
            Some(p) => {
                ConfigFile::load(p)
                    .map_err(|e| UpdateError::new(Code::UpdateConfig, format!("{e:#}")))?
                    .updates
            }
            None => UpdatesSection::default(),
        };
        resolve(&section, &BuiltIn::of(app.config()), cfg!(debug_assertions))
    }
}

/// The updater plugin and the state [`check`] and [`install`] use.
pub fn init<R: Runtime>(builder: tauri::Builder<R>, updates: Updates) -> tauri::Builder<R> {
    builder
        .plugin(tauri_plugin_updater::Builder::new().build())
        .manage(updates)
}

/// What a check found.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Checked {
    /// Not configured, or a development build: no request was made.
    Off { why: String },
    /// The feed's newest is not newer than this one.
    UpToDate {
        current: String,
        latest: Option<String>,
    },
    Available {
        current: String,
        version: String,
        notes: Option<String>,
        /// RFC 3339, as the feed gave it.
        date: Option<String>,
    },
}

/// Read the feed (if one is configured) and say whether a newer version is there; a
/// found update is kept for [`install`].
pub async fn check<R: Runtime>(app: &AppHandle<R>) -> Result<Checked, UpdateError> {
    let updates = app.state::<Updates>();
    let feed = match updates.setting(app)? {
        Setting::Off(why) => {
            tracing::info!("update check skipped: {why}");
            return Ok(Checked::Off { why });
        }
        Setting::On(feed) => feed,
    };
    let current = app.package_info().version.to_string();
    tracing::info!(feed = %feed.url, %current, "checking for updates");
    let latest = Arc::new(Mutex::new(None));
    let seen = latest.clone();
    let feed_error = |e: tauri_plugin_updater::Error| {
        UpdateError::new(
            Code::UpdateFeed,
            format!("The update feed {} could not be read: {e}.", feed.url),
        )
    };
    let mut builder = app
        .updater_builder()
        .endpoints(vec![feed.url.clone()])
        .map_err(|e| UpdateError::new(Code::UpdateConfig, e.to_string()))?
        .pubkey(feed.pubkey.clone())
        .timeout(CHECK_TIMEOUT)
        .version_comparator(move |current, release| {
            *seen.lock().unwrap() = Some(release.version.to_string());
            release.version > current
        });
    if is_loopback(&feed.url) {
        // A proxy of the environment must not be asked for this machine's own address.
        builder = builder.no_proxy();
    }
    if let Some(exe) = &updates.executable {
        builder = builder.executable_path(exe);
    }
    let found = builder
        .build()
        .map_err(feed_error)?
        .check()
        .await
        .map_err(feed_error)?;
    let checked = match &found {
        Some(u) => Checked::Available {
            current,
            version: u.version.clone(),
            notes: u.body.clone(),
            date: u
                .raw_json
                .get("pub_date")
                .and_then(|d| d.as_str())
                .map(str::to_string),
        },
        None => Checked::UpToDate {
            current,
            latest: latest.lock().unwrap().clone(),
        },
    };
    tracing::info!(?checked, "update check done");
    *updates.pending.lock().unwrap() = found;
    Ok(checked)
}

/// A download's progress: bytes so far and the whole, when the server says it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Progress {
    pub downloaded: u64,
    pub total: Option<u64>,
}

/// Download `version` (the one the last [`check`] found and the page showed), verify
/// its signature against the key, and put it in place of the app; on a bad signature
/// nothing is written. The app runs the new version after a restart.
pub async fn install<R: Runtime>(
    app: &AppHandle<R>,
    version: &str,
    mut progress: impl FnMut(Progress),
) -> Result<(), UpdateError> {
    let updates = app.state::<Updates>();
    let update = updates.pending.lock().unwrap().clone();
    let Some(update) = update.filter(|u| u.version == version) else {
        return Err(UpdateError::new(
            Code::UpdateNotFound,
            format!("No update to {version} is waiting: check for updates again."),
        ));
    };
    tracing::info!(version, url = %update.download_url, "downloading the update");
    let mut downloaded = 0u64;
    let mut told = 0u64;
    let bytes = update
        .download(
            |chunk, total| {
                downloaded += chunk as u64;
                // Every 256 KiB and at the end: enough for a progress bar.
                if downloaded - told >= 256 << 10 || Some(downloaded) == total {
                    told = downloaded;
                    progress(Progress { downloaded, total });
                }
            },
            || {},
        )
        .await
        .map_err(|e| download_error(&update, e))?;
    tracing::info!(version, bytes = bytes.len(), "update verified; installing");
    // Off the async workers: writing the AppImage, or `pkexec dpkg -i`, which waits for
    // the person's password.
    let installing = update.clone();
    tauri::async_runtime::spawn_blocking(move || installing.install(bytes))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()))
        .map_err(|e| {
            UpdateError::new(
                Code::UpdateInstall,
                format!(
                    "Sandalyst {version} was downloaded and verified but could not be installed: {e}."
                ),
            )
        })?;
    *updates.pending.lock().unwrap() = None;
    tracing::info!(version, "update installed");
    Ok(())
}

/// A failed download or verification, in words; a signature's failure is said as one.
fn download_error(update: &Update, e: tauri_plugin_updater::Error) -> UpdateError {
    use tauri_plugin_updater::Error as E;
    let version = &update.version;
    match e {
        E::Minisign(_)
        | E::Base64(_)
        | E::SignatureUtf8(_)
        | E::SignedVersionMismatch { .. }
        | E::MissingSignedVersion => {
            tracing::error!(version, "update signature rejected: {e}");
            UpdateError::new(
                Code::UpdateSignature,
                format!("The download of Sandalyst {version} is not signed with Sandalyst's update key, so it was not installed ({e})."),
            )
        }
        e => UpdateError::new(
            Code::UpdateFeed,
            format!(
                "Sandalyst {version} could not be downloaded from {}: {e}.",
                update.download_url
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minisign public key file's text, base64 (a key made for this test).
    const KEY: &str = "dW50cnVzdGVkIGNvbW1lbnQ6IG1pbmlzaWduIHB1YmxpYyBrZXk6IDM3NDlEQzQ3QjEwNEI1MTkKUldRM1NkeEhzUVMxR2VBSjVSNWtMTlF4Z2s1K2ZJcE9oZ3R6SzdYbE5MSjlBNGkrbE5UN1RMTzEK";

    fn section(feed: Option<&str>, pubkey: Option<&str>, enabled: Option<bool>) -> UpdatesSection {
        UpdatesSection {
            feed: feed.map(str::to_string),
            pubkey: pubkey.map(str::to_string),
            enabled,
        }
    }

    fn off(s: Result<Setting, UpdateError>) -> String {
        match s {
            Ok(Setting::Off(why)) => why,
            other => panic!("not off: {other:?}"),
        }
    }

    #[test]
    fn without_a_feed_and_a_key_nothing_is_checked() {
        let none = BuiltIn::default();
        for dev in [false, true] {
            assert!(off(resolve(&section(None, None, None), &none, dev)).contains("No update feed"));
            assert!(off(resolve(
                &section(Some("https://u.example/l.json"), None, Some(true)),
                &none,
                dev
            ))
            .contains("No update feed"));
        }
    }

    #[test]
    fn a_development_build_checks_only_when_enabled() {
        let s = section(Some("https://u.example/l.json"), Some(KEY), None);
        assert!(off(resolve(&s, &BuiltIn::default(), true)).contains("development build"));
        assert!(matches!(
            resolve(&s, &BuiltIn::default(), false),
            Ok(Setting::On(_))
        ));
        let s = section(Some("https://u.example/l.json"), Some(KEY), Some(true));
        assert!(matches!(
            resolve(&s, &BuiltIn::default(), true),
            Ok(Setting::On(_))
        ));
        let s = section(Some("https://u.example/l.json"), Some(KEY), Some(false));
        assert!(off(resolve(&s, &BuiltIn::default(), false)).contains("turned off"));
    }

    #[test]
    fn the_config_file_wins_over_the_built_in_feed() {
        let built = BuiltIn {
            feed: Some("https://built.example/latest.json".into()),
            pubkey: Some(KEY.into()),
        };
        let Ok(Setting::On(f)) = resolve(&section(None, None, None), &built, false) else {
            panic!("the built-in feed is used")
        };
        assert_eq!(f.url.as_str(), "https://built.example/latest.json");
        let s = section(Some("https://mine.example/latest.json"), None, None);
        let Ok(Setting::On(f)) = resolve(&s, &built, false) else {
            panic!("on")
        };
        assert_eq!(f.url.as_str(), "https://mine.example/latest.json");
        assert_eq!(f.pubkey, KEY);
    }

    #[test]
    fn plain_http_only_to_this_machine_and_only_in_development() {
        let s = |u: &str| section(Some(u), Some(KEY), Some(true));
        assert!(matches!(
            resolve(&s("http://127.0.0.1:9/l.json"), &BuiltIn::default(), true),
            Ok(Setting::On(_))
        ));
        assert!(matches!(
            resolve(&s("http://localhost:9/l.json"), &BuiltIn::default(), true),
            Ok(Setting::On(_))
        ));
        for (url, dev) in [
            ("http://127.0.0.1:9/l.json", false),
            ("http://updates.example/l.json", true),
            ("ftp://updates.example/l.json", true),
        ] {
            let e = resolve(&s(url), &BuiltIn::default(), dev).unwrap_err();
            assert_eq!(e.code, Code::UpdateConfig);
            assert!(e.message.contains("https"), "{}", e.message);
        }
        let e = resolve(&s("not a url"), &BuiltIn::default(), true).unwrap_err();
        assert_eq!(e.code, Code::UpdateConfig);
    }

    #[test]
    fn a_key_that_is_not_a_minisign_key_is_refused_before_any_check() {
        for bad in [
            "not base64!",
            "aGVsbG8=",
            "RWRUwYxMw5bv/vKmK1kRk5+2rZ2GrMEbl+cyNkLbO2zRvFmUsIZ9o/sf",
        ] {
            let s = section(Some("https://u.example/l.json"), Some(bad), None);
            let e = resolve(&s, &BuiltIn::default(), false).unwrap_err();
            assert_eq!(e.code, Code::UpdateConfig, "{bad}");
            assert!(e.message.contains("minisign public key"), "{}", e.message);
        }
    }

    #[test]
    fn the_built_in_feed_is_read_from_the_plugins_configuration() {
        let mut config = tauri::Config::default();
        assert_eq!(BuiltIn::of(&config), BuiltIn::default());
        config.plugins.0.insert(
            "updater".into(),
            serde_json::json!({"pubkey": "", "endpoints": []}),
        );
        assert_eq!(BuiltIn::of(&config), BuiltIn::default());
        config.plugins.0.insert(
            "updater".into(),
            serde_json::json!({"pubkey": KEY, "endpoints": ["https://u.example/latest.json"]}),
        );
        assert_eq!(
            BuiltIn::of(&config),
            BuiltIn {
                feed: Some("https://u.example/latest.json".into()),
                pubkey: Some(KEY.into())
            }
        );
    }
}
