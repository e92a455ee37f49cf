//! The page's calls. Each command checks what the page sent, calls the core and
//! returns a serialisable value or a readable sentence. Long work (asks, image
//! builds) is spawned and streams through a `Channel`; no command waits on Docker.

use std::path::PathBuf;
use std::sync::Mutex;

use serde::Serialize;
use tauri::ipc::Channel;
use tauri::State;

use crate::paths::check_session_id;
use crate::settings::{self, Settings};
use crate::{engine, preview};

/// What the commands share.
pub struct AppState {
    pub data_root: PathBuf,
    pub settings: Mutex<Settings>,
}

impl AppState {
    pub fn open(data_root: PathBuf) -> anyhow::Result<AppState> {
        std::fs::create_dir_all(&data_root)?;
        let settings = Mutex::new(settings::load(&data_root));
        Ok(AppState { data_root, settings })
    }

    /// The folder of session `id`, if it is a session of this app.
    // TODO(session API): ask `Sessions` for the folder once core::session lands.
    pub fn session_dir(&self, id: &str) -> Option<PathBuf> {
        check_session_id(id).ok()?;
        let dir = self.data_root.join("sessions").join(id);
        dir.is_dir().then_some(dir)
    }

    fn dir_of(&self, id: &str) -> Result<PathBuf, String> {
        self.session_dir(id)
            .ok_or_else(|| "that session no longer exists".to_string())
    }
}

/// An error as a sentence: the outermost message, and the root cause when it adds
/// something.
pub fn sentence(e: anyhow::Error) -> String {
    let top = e.to_string();
    let root = e.root_cause().to_string();
    if root == top || top.contains(&root) {
        top
    } else {
        format!("{top} ({root})")
    }
}

macro_rules! handler {
    () => {
        tauri::generate_handler![
            app_info,
            get_settings,
            save_settings,
            save_api_key,
            api_key_status,
            engine_status,
            build_image,
            preview_file,
            table_page,
            export_session,
            open_path,
        ]
    };
}

pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
    handler!()
}

#[derive(Serialize)]
pub struct AppInfo {
    pub version: &'static str,
    pub data_dir: String,
    /// The model the next ask will use, as a person reads it.
    pub model: String,
    /// True when no provider is configured: the offline analyst answers.
    pub offline: bool,
    pub why_offline: Option<String>,
}

#[tauri::command]
pub fn app_info(state: State<'_, AppState>) -> AppInfo {
    let s = state.settings.lock().unwrap().clone();
    let (model, offline, why) = match settings::selection(&s) {
        Ok(sandalyst::model::config::Selection::Provider(p)) => (p.describe(), false, None),
        Ok(sandalyst::model::config::Selection::Offline { why }) => {
            ("the offline analyst".to_string(), true, Some(why))
        }
        Ok(sandalyst::model::config::Selection::Replay(p)) => {
            (format!("a replay of {}", p.display()), false, None)
        }
        Err(e) => ("the offline analyst".to_string(), true, Some(sentence(e))),
    };
    AppInfo {
        version: env!("CARGO_PKG_VERSION"),
        data_dir: state.data_root.display().to_string(),
        model,
        offline,
        why_offline: why,
    }
}

#[tauri::command]
pub fn get_settings(state: State<'_, AppState>) -> Settings {
    state.settings.lock().unwrap().clone()
}

#[tauri::command]
pub fn save_settings(state: State<'_, AppState>, settings: Settings) -> Result<(), String> {
    settings::save(&state.data_root, &settings).map_err(sentence)?;
    *state.settings.lock().unwrap() = settings;
    Ok(())
}

/// Store a provider's key in the OS keychain; returns its masked form.
#[tauri::command]
pub async fn save_api_key(provider: String, key: String) -> Result<String, String> {
    if !["openai", "anthropic", "openai-compatible"].contains(&provider.as_str()) {
        return Err("keys are stored for openai, anthropic or openai-compatible".into());
    }
    let masked = settings::mask(key.trim());
    tauri::async_runtime::spawn_blocking(move || {
        sandalyst::model::config::keychain_store(&provider, key.trim())
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(sentence)?;
    Ok(masked)
}

/// The masked key stored for a provider, if any.
#[tauri::command]
pub async fn api_key_status(provider: String) -> Option<String> {
    tauri::async_runtime::spawn_blocking(move || {
        sandalyst::model::config::keychain_lookup(&provider).map(|k| settings::mask(&k))
    })
    .await
    .ok()
    .flatten()
}

#[tauri::command]
pub async fn engine_status() -> engine::EngineStatus {
    engine::status().await
}

#[derive(Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BuildEvent {
    Line { text: String },
    Done { tag: String },
    Failed { message: String },
}

/// Build the sandbox image in the background; progress arrives on `on_event`.
#[tauri::command]
pub fn build_image(on_event: Channel<BuildEvent>) {
    tauri::async_runtime::spawn(async move {
        let ch = on_event.clone();
        let r = engine::build(move |l| {
            let _ = ch.send(BuildEvent::Line { text: l.to_string() });
        })
        .await;
        let _ = on_event.send(match r {
            Ok(tag) => BuildEvent::Done { tag },
            Err(e) => BuildEvent::Failed { message: sentence(e) },
        });
    });
}

#[tauri::command]
pub async fn preview_file(
    state: State<'_, AppState>,
    session_id: String,
    path: String,
) -> Result<preview::FilePreview, String> {
    let root = state.dir_of(&session_id)?;
    tauri::async_runtime::spawn_blocking(move || preview::preview(&session_id, &root, &path))
        .await
        .map_err(|e| e.to_string())?
        .map_err(sentence)
}

#[tauri::command]
pub async fn table_page(
    state: State<'_, AppState>,
    session_id: String,
    path: String,
    sheet: Option<String>,
    offset: usize,
    limit: usize,
) -> Result<sandalyst::artifacts::table::CsvPage, String> {
    let root = state.dir_of(&session_id)?;
    tauri::async_runtime::spawn_blocking(move || {
        preview::table_page(&root, &path, sheet.as_deref(), offset, limit)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(sentence)
}

/// Copy the session's outputs (and its transcript when asked) to `dest`: a new folder,
/// or a new `.zip` file when `zip` is set. Returns what was written.
#[tauri::command]
pub async fn export_session(
    state: State<'_, AppState>,
    session_id: String,
    dest: String,
    zip: bool,
    transcript: bool,
) -> Result<String, String> {
    use sandalyst::artifacts::export;
    let root = state.dir_of(&session_id)?;
    let dest = PathBuf::from(dest);
    if !dest.is_absolute() {
        return Err("pick a destination with the dialog".into());
    }
    tauri::async_runtime::spawn_blocking(move || {
        // TODO(session API): take the outputs folder's name from the core.
        let mut files = export::files_under(&root.join("outputs"))?;
        if transcript {
            for name in ["transcript.jsonl", "session.json"] {
                let p = root.join(name);
                if p.is_file() {
                    files.push((name.to_string(), p));
                }
            }
        }
        if files.is_empty() {
            anyhow::bail!("this session has no outputs yet");
        }
        let written = if zip {
            export::to_zip(&files, &dest)?
        } else {
            export::to_folder(&files, &dest)?
        };
        Ok(written.display().to_string())
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(sentence)
}

/// Open a session's file with the system's application for it, or show it in the
/// file manager (`reveal`).
#[tauri::command]
pub async fn open_path(
    state: State<'_, AppState>,
    session_id: String,
    path: String,
    reveal: bool,
) -> Result<(), String> {
    let root = state.dir_of(&session_id)?;
    let file = crate::paths::resolve_inside(&root, &path).map_err(|e| e.to_string())?;
    let target = if reveal {
        file.parent().map(PathBuf::from).unwrap_or(root)
    } else {
        file
    };
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    std::process::Command::new(opener)
        .arg(&target)
        .spawn()
        .map(|_| ())
        .map_err(|e| format!("cannot start {opener}: {e}"))
}
