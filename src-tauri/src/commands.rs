//! The page's calls. Each command checks what the page sent, calls the core and
//! returns a serialisable value or a readable sentence. Long work (asks, image
//! builds) is spawned and streams through a `Channel`; no command waits on Docker.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use sandalyst::agent::Event;
use sandalyst::model::Model;
use sandalyst::session::{SandboxFactory, Session, SessionError, SessionSummary, Sessions};
use sandalyst::store::StagedFile;
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::State;
use tokio_util::sync::CancellationToken;

use crate::paths::check_session_id;
use crate::settings::{self, Settings};
use crate::{engine, history, preview};

/// What the commands share.
pub struct AppState {
    pub data_root: PathBuf,
    pub settings: Mutex<Settings>,
    pub sessions: Sessions,
    /// The cancel of each session's running ask.
    running: Arc<Mutex<HashMap<String, CancellationToken>>>,
    /// The task forwarding each session's set-up events to the page.
    watchers: Mutex<HashMap<String, tauri::async_runtime::JoinHandle<()>>>,
}

impl AppState {
    /// Sessions live in `data_root`, as the command line keeps them.
    pub fn open(data_root: PathBuf, factory: Arc<dyn SandboxFactory>) -> anyhow::Result<AppState> {
        std::fs::create_dir_all(&data_root)?;
        let settings = Mutex::new(settings::load(&data_root));
        let sessions = Sessions::new(data_root.clone(), factory)?;
        Ok(AppState {
            data_root,
            settings,
            sessions,
            running: Arc::default(),
            watchers: Mutex::default(),
        })
    }

    /// The folder of session `id`, if it is a session of this app.
    pub fn session_dir(&self, id: &str) -> Option<PathBuf> {
        check_session_id(id).ok()?;
        let dir = self.sessions.root().join(id);
        dir.is_dir().then_some(dir)
    }

    async fn session(&self, id: &str) -> Result<Session, String> {
        check_session_id(id).map_err(|e| e.to_string())?;
        self.sessions.open(id).await.map_err(|e| e.to_string())
    }

    fn inner_running(&self) -> Arc<Mutex<HashMap<String, CancellationToken>>> {
        self.running.clone()
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

/// Every command the page may call.
pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static
{
    tauri::generate_handler![
        app_info,
        page_ready,
        create_session,
        open_session,
        list_sessions,
        rename_session,
        delete_session,
        add_files,
        remove_file,
        watch_session,
        ask,
        cancel_ask,
        get_settings,
        save_settings,
        save_api_key,
        api_key_status,
        engine_status,
        build_image,
        preview_file,
        table_page,
        export_session,
        rerun_session,
        open_path,
    ]
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
    /// Where the page finds a session's files: `<scheme_base><session id>/<path>`.
    pub scheme_base: String,
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
        scheme_base: crate::scheme::root_url(),
    }
}

/// The page has drawn its first content; with `SANDALYST_TIMING=1` the time since the
/// process started is printed (BENCHMARKS.md: launch to first content).
#[tauri::command]
pub fn page_ready() {
    if std::env::var_os("SANDALYST_TIMING").is_some() {
        eprintln!(
            "sandalyst-desktop: first content after {} ms",
            crate::since_start_ms()
        );
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
            let _ = ch.send(BuildEvent::Line {
                text: l.to_string(),
            });
        })
        .await;
        let _ = on_event.send(match r {
            Ok(tag) => BuildEvent::Done { tag },
            Err(e) => BuildEvent::Failed {
                message: sentence(e),
            },
        });
    });
}

/// The original of the input file `name` of a session (the user chose it).
async fn input_source(state: &AppState, session_id: &str, name: &str) -> Result<PathBuf, String> {
    let s = state.session(session_id).await?;
    s.meta()
        .files
        .into_iter()
        .find(|f| f.name == name)
        .map(|f| PathBuf::from(f.source))
        .ok_or_else(|| format!("{name} is not a file of this session"))
}

/// A preview of a file of the session folder (`path` relative to it), or of an input
/// file (`input`: `path` is its name in the session's file list).
#[tauri::command]
pub async fn preview_file(
    state: State<'_, AppState>,
    session_id: String,
    path: String,
    input: Option<bool>,
) -> Result<preview::FilePreview, String> {
    if input.unwrap_or(false) {
        let source = input_source(&state, &session_id, &path).await?;
        return blocking(move || preview::preview_input(&source, &path)).await;
    }
    let root = state.dir_of(&session_id)?;
    blocking(move || preview::preview(&session_id, &root, &path)).await
}

// The page names each argument; grouping them in a struct would only rename them.
#[allow(clippy::too_many_arguments)]
#[tauri::command]
pub async fn table_page(
    state: State<'_, AppState>,
    session_id: String,
    path: String,
    input: Option<bool>,
    sheet: Option<String>,
    sort: Option<sandalyst::artifacts::csv_index::SortBy>,
    offset: usize,
    limit: usize,
) -> Result<sandalyst::artifacts::table::CsvPage, String> {
    let file = if input.unwrap_or(false) {
        input_source(&state, &session_id, &path).await?
    } else {
        let root = state.dir_of(&session_id)?;
        crate::paths::resolve_inside(&root, &path).map_err(|e| e.to_string())?
    };
    blocking(move || preview::table_page(&file, sheet.as_deref(), sort, offset, limit)).await
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> Result<T, String> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| e.to_string())?
        .map_err(sentence)
}

// ---- sessions ----

#[derive(Serialize)]
pub struct SessionView {
    pub id: String,
    pub title: String,
    pub files: Vec<StagedFile>,
    pub busy: bool,
    /// Earlier asks, each as the events the page replays to draw it.
    pub asks: Vec<history::PastAsk>,
}

fn view_of(s: &Session) -> SessionView {
    let meta = s.meta();
    SessionView {
        id: s.id().to_string(),
        title: if meta.title.is_empty() {
            meta.prompt.lines().next().unwrap_or("").to_string()
        } else {
            meta.title.clone()
        },
        files: meta.files.clone(),
        busy: s.is_busy(),
        asks: history::past_asks(s),
    }
}

#[tauri::command]
pub async fn create_session(state: State<'_, AppState>) -> Result<SessionView, String> {
    let config = settings::session_config(&state.settings.lock().unwrap());
    let s = state
        .sessions
        .create(config)
        .await
        .map_err(|e| e.to_string())?;
    Ok(view_of(&s))
}

#[tauri::command]
pub async fn open_session(
    state: State<'_, AppState>,
    session_id: String,
) -> Result<SessionView, String> {
    let s = state.session(&session_id).await?;
    Ok(view_of(&s))
}

#[tauri::command]
pub async fn list_sessions(state: State<'_, AppState>) -> Result<Vec<SessionSummary>, String> {
    let sessions = state.sessions.clone();
    blocking(move || sessions.list()).await
}

#[tauri::command]
pub async fn rename_session(
    state: State<'_, AppState>,
    session_id: String,
    title: String,
) -> Result<(), String> {
    check_session_id(&session_id).map_err(|e| e.to_string())?;
    state
        .sessions
        .rename(&session_id, &title)
        .await
        .map_err(|e| e.to_string())
}

#[tauri::command]
pub async fn delete_session(state: State<'_, AppState>, session_id: String) -> Result<(), String> {
    check_session_id(&session_id).map_err(|e| e.to_string())?;
    if let Some(w) = state.watchers.lock().unwrap().remove(&session_id) {
        w.abort();
    }
    state
        .sessions
        .delete(&session_id)
        .await
        .map_err(|e| e.to_string())
}

/// The session's files after an add, and what was said about the folders' entries
/// (links followed, entries left out), for the page to show.
#[derive(Serialize)]
pub struct AddedFiles {
    pub files: Vec<StagedFile>,
    pub notes: Vec<String>,
}

/// Stage files or folders (absolute paths from a drop or the dialog); the sandbox
/// starts in the background. A FIFO, socket or device is refused with a sentence.
#[tauri::command]
pub async fn add_files(
    state: State<'_, AppState>,
    session_id: String,
    paths: Vec<String>,
) -> Result<AddedFiles, String> {
    let s = state.session(&session_id).await?;
    let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
    if paths.iter().any(|p| !p.is_absolute()) {
        return Err("files must be given with their full path".into());
    }
    let added = s.add_inputs(paths).await.map_err(|e| e.to_string())?;
    Ok(AddedFiles {
        files: s.meta().files,
        notes: added.notes,
    })
}

#[tauri::command]
pub async fn remove_file(
    state: State<'_, AppState>,
    session_id: String,
    name: String,
) -> Result<Vec<StagedFile>, String> {
    let s = state.session(&session_id).await?;
    s.remove_file(&name).await.map_err(|e| e.to_string())?;
    Ok(s.meta().files)
}

/// Forward the session's own events (set-up, staging, engine errors: those of no
/// ask) to `on_event` until another watch of the session starts.
#[tauri::command]
pub async fn watch_session(
    state: State<'_, AppState>,
    session_id: String,
    on_event: Channel<Event>,
) -> Result<(), String> {
    let s = state.session(&session_id).await?;
    let mut rx = s.subscribe();
    let task = tauri::async_runtime::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            match rx.recv().await {
                Ok(ev) if ev.ask_id.is_none() => {
                    if on_event.send(ev).is_err() {
                        break;
                    }
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => break,
            }
        }
    });
    if let Some(old) = state.watchers.lock().unwrap().insert(session_id, task) {
        old.abort();
    }
    Ok(())
}

/// Start an ask; its events arrive on `on_event`, in order, ending with
/// `ask_finished`. Returns the ask's id at once.
#[tauri::command]
pub async fn ask(
    state: State<'_, AppState>,
    session_id: String,
    prompt: String,
    model: String,
    on_event: Channel<Event>,
) -> Result<String, String> {
    if prompt.trim().is_empty() {
        return Err("say what you want done with the files first".into());
    }
    let s = state.session(&session_id).await?;
    let current = state.settings.lock().unwrap().clone();
    let model: Box<dyn Model> = blocking(move || settings::open_model(&model, &current)).await?;
    let config = settings::session_config(&state.settings.lock().unwrap());
    if !s.is_busy() {
        s.set_config(config).await.map_err(|e| e.to_string())?;
    }
    let mut handle = s.ask(prompt, model).map_err(|e| match e {
        SessionError::Busy => {
            "an ask is already running in this session; stop it first (Esc)".to_string()
        }
        e => e.to_string(),
    })?;
    let ask_id = handle.ask_id.clone();
    state
        .running
        .lock()
        .unwrap()
        .insert(session_id.clone(), handle.canceller());
    let running = state.inner_running();
    tauri::async_runtime::spawn(async move {
        while let Some(ev) = handle.events.recv().await {
            let _ = on_event.send(ev);
        }
        let _ = handle.outcome().await;
        running.lock().unwrap().remove(&session_id);
    });
    Ok(ask_id)
}

/// Re-run a session's recorded cells on new input files, without any model, in a new
/// session (in the history at once). Returns the new session's id; the replay's events
/// arrive on `on_event`, ending with `ask_finished`. Stop cancels it like an ask.
#[tauri::command]
pub async fn rerun_session(
    state: State<'_, AppState>,
    session_id: String,
    paths: Vec<String>,
    on_event: Channel<Event>,
) -> Result<String, String> {
    check_session_id(&session_id).map_err(|e| e.to_string())?;
    let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
    if paths.is_empty() || paths.iter().any(|p| !p.is_absolute()) {
        return Err("pick the new input files with the dialog".into());
    }
    let rerun = sandalyst::rerun::prepare(&state.sessions, &session_id, paths)
        .await
        .map_err(sentence)?;
    let id = rerun.session_id().to_string();
    let cancel = CancellationToken::new();
    state
        .running
        .lock()
        .unwrap()
        .insert(id.clone(), cancel.clone());
    let (running, done) = (state.inner_running(), id.clone());
    tauri::async_runtime::spawn(async move {
        let emit = move |ev: Event| {
            let _ = on_event.send(ev);
        };
        let _ = rerun.run(&emit, &cancel).await;
        running.lock().unwrap().remove(&done);
    });
    Ok(id)
}

/// Stop the session's running ask: the model stream ends and the code is interrupted.
#[tauri::command]
pub fn cancel_ask(state: State<'_, AppState>, session_id: String) -> bool {
    match state.running.lock().unwrap().get(&session_id) {
        Some(c) => {
            c.cancel();
            true
        }
        None => false,
    }
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
    analysis: Option<bool>,
) -> Result<String, String> {
    use sandalyst::artifacts::export;
    let root = state.dir_of(&session_id)?;
    let store_root = state.sessions.root().to_path_buf();
    let dest = PathBuf::from(dest);
    if !dest.is_absolute() {
        return Err("pick a destination with the dialog".into());
    }
    tauri::async_runtime::spawn_blocking(move || {
        let mut files = export::files_under(&root.join(sandalyst::store::OUTPUTS))?;
        if transcript {
            for name in [sandalyst::store::TRANSCRIPT, sandalyst::store::META] {
                let p = root.join(name);
                if p.is_file() {
                    files.push((name.to_string(), p));
                }
            }
        }
        if analysis.unwrap_or(false) {
            // The executed cells as a notebook and as a script (sandalyst::export),
            // written in the session's folder and exported with the outputs.
            let run = sandalyst::store::Store::open(store_root)?.open_run(&session_id)?;
            let dir = root.join("analysis");
            std::fs::create_dir_all(&dir)?;
            let nb = dir.join("analysis.ipynb");
            std::fs::write(
                &nb,
                serde_json::to_string_pretty(&sandalyst::export::notebook::build(&run)?)?,
            )?;
            let py = dir.join("analysis.py");
            std::fs::write(&py, sandalyst::export::script::build(&run)?)?;
            files.push(("analysis.ipynb".to_string(), nb));
            files.push(("analysis.py".to_string(), py));
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
