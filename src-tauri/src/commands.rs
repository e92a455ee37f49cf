//! The page's calls. Each command checks what the page sent, calls the core's API
//! (`sandalyst::api`) and returns a serialisable value or an error `{code, message}`.
//! Long work (asks, re-runs, image builds) is spawned and streams through a
//! `Channel`; no command waits on Docker.

use std::path::PathBuf;
use std::sync::Mutex;

use sandalyst::api::explore;
use sandalyst::api::preview::FilePreview;
use sandalyst::api::settings::{self, Settings};
use sandalyst::api::{
    engine, exports, AddedFiles, Answer, App, ApprovalMode, CallId, Error, ErrorCode, Event,
    SessionId, SessionSummary, SessionView, StagedFile,
};
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::State;

/// What the commands share: the core's API and the settings as last saved.
pub struct AppState {
    pub app: App,
    pub settings: Mutex<Settings>,
    /// Files given at launch that the page has not taken yet.
    pub launch: crate::launch::Pending,
}

impl AppState {
    /// Sessions live in `data_root`, as the command line keeps them.
    pub fn open(data_root: PathBuf) -> anyhow::Result<AppState> {
        Ok(AppState::with(App::open(data_root)?))
    }

    pub fn with(app: App) -> AppState {
        let settings = Mutex::new(settings::load(app.root()));
        AppState {
            app,
            settings,
            launch: Default::default(),
        }
    }
}

type Result<T> = std::result::Result<T, Error>;

/// Every command the page may call.
pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static
{
    tauri::generate_handler![
        app_info,
        page_ready,
        open_logs_folder,
        launch_files,
        create_session,
        open_session,
        list_sessions,
        rename_session,
        delete_session,
        add_files,
        remove_file,
        watch_session,
        ask,
        answer_approval,
        cancel_ask,
        get_settings,
        save_settings,
        save_api_key,
        api_key_status,
        providers,
        list_models,
        network_choices,
        engine_status,
        build_image,
        preview_file,
        explore_page,
        explore_summary,
        explore_code,
        explore_save,
        export_session,
        export_report,
        save_file,
        render_markdown,
        read_image,
        rerun_session,
        open_path,
        check_for_updates,
        install_update,
        restart_app,
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
    /// The log files' folder, for a bug report (none where the system has none).
    pub logs_dir: Option<String>,
    /// The menu bar's items with keys, for the Shortcuts list.
    pub menu: Vec<crate::menu::MenuKey>,
}

#[tauri::command]
pub fn app_info(state: State<'_, AppState>) -> AppInfo {
    let s = state.settings.lock().unwrap().clone();
    let (model, why) = settings::describe_model(&s);
    AppInfo {
        version: env!("CARGO_PKG_VERSION"),
        data_dir: state.app.root().display().to_string(),
        model,
        offline: why.is_some(),
        why_offline: why,
        scheme_base: crate::scheme::root_url(),
        logs_dir: sandalyst::api::logs::log_dir().map(|d| d.display().to_string()),
        menu: crate::menu::keys(),
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

/// The files given at launch (this process's command line, then each second launch's)
/// that the page has not opened yet; each is handed over once.
#[tauri::command]
pub fn launch_files(state: State<'_, AppState>) -> Vec<sandalyst::api::launch::LaunchFiles> {
    state.launch.take()
}

#[tauri::command]
pub fn get_settings(state: State<'_, AppState>) -> Settings {
    state.settings.lock().unwrap().clone()
}

#[tauri::command]
pub fn save_settings(state: State<'_, AppState>, settings: Settings) -> Result<()> {
    settings::save(state.app.root(), &settings)?;
    *state.settings.lock().unwrap() = settings;
    Ok(())
}

/// Store a provider's key in the OS keychain; returns its masked form.
#[tauri::command]
pub async fn save_api_key(provider: String, key: String) -> Result<String> {
    settings::save_api_key(provider, key).await
}

/// The settings page's network presets and what each mode exposes (the core's words).
#[tauri::command]
pub fn network_choices() -> settings::NetworkChoices {
    settings::network_choices()
}

/// The settings page's provider choices (the core's providers' table).
#[tauri::command]
pub fn providers() -> Vec<settings::ProviderChoice> {
    settings::providers()
}

/// The models the provider's server offers (the offline analyst first), reached as an
/// ask would reach it: the settings page's "List models".
#[tauri::command]
pub async fn list_models(
    provider: String,
    base_url: Option<String>,
) -> Result<Vec<sandalyst::api::Listed>> {
    Ok(settings::list_models(Some(&provider), base_url.as_deref()).await?)
}

/// The masked key stored for a provider, if any.
#[tauri::command]
pub async fn api_key_status(provider: String) -> Option<String> {
    settings::api_key_status(provider).await
}

#[tauri::command]
pub async fn engine_status(state: State<'_, AppState>) -> Result<engine::EngineStatus> {
    Ok(engine::status(state.app.factory()).await)
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
pub fn build_image(state: State<'_, AppState>, on_event: Channel<BuildEvent>) {
    let app = state.app.clone();
    tauri::async_runtime::spawn(async move {
        let ch = on_event.clone();
        let line = move |l: &str| {
            let _ = ch.send(BuildEvent::Line {
                text: l.to_string(),
            });
        };
        let r = engine::build(app.factory(), &line).await;
        let _ = on_event.send(match r {
            Ok(tag) => BuildEvent::Done { tag },
            Err(e) => BuildEvent::Failed {
                message: Error::from(e).message,
            },
        });
    });
}

/// A preview of a file of the session folder (`path` relative to it), or of an input
/// file (`input`: `path` is its name in the session's file list).
#[tauri::command]
pub async fn preview_file(
    state: State<'_, AppState>,
    session_id: SessionId,
    path: String,
    input: Option<bool>,
) -> Result<FilePreview> {
    let base = crate::scheme::base_url(&session_id);
    let input = input.unwrap_or(false);
    state.app.preview(&session_id, path, input, base).await
}

/// The assistant's text (Markdown) as sanitised HTML, rendered by the core.
#[tauri::command]
pub async fn render_markdown(
    state: State<'_, AppState>,
    session_id: SessionId,
    text: String,
) -> Result<String> {
    let base = crate::scheme::base_url(&session_id);
    state.app.answer_html(&session_id, text, base).await
}

/// An image of the session folder as bytes (for the clipboard: the page cannot read
/// pixels of the scheme's images, which are of another origin).
#[tauri::command]
pub async fn read_image(
    state: State<'_, AppState>,
    session_id: SessionId,
    path: String,
) -> Result<tauri::ipc::Response> {
    let bytes = state.app.image_bytes(&session_id, path).await?;
    Ok(tauri::ipc::Response::new(bytes))
}

/// A page of a table file (an input by name with `input`, else a path of the session
/// folder) as the explorer's view (filters, sort) selects it.
#[tauri::command]
pub async fn explore_page(
    state: State<'_, AppState>,
    session_id: SessionId,
    path: String,
    input: Option<bool>,
    request: explore::PageRequest,
) -> Result<explore::ViewPage> {
    let input = input.unwrap_or(false);
    state
        .app
        .explore_page(&session_id, path, input, request)
        .await
}

/// Each column's summary over the rows the view's filters keep.
#[tauri::command]
pub async fn explore_summary(
    state: State<'_, AppState>,
    session_id: SessionId,
    path: String,
    input: Option<bool>,
    view: explore::ViewSpec,
) -> Result<explore::Summary> {
    let input = input.unwrap_or(false);
    state
        .app
        .explore_summary(&session_id, path, input, view)
        .await
}

/// The view as a sentence and as pandas code (for the ask box and the clipboard).
#[tauri::command]
pub async fn explore_code(
    state: State<'_, AppState>,
    session_id: SessionId,
    path: String,
    input: Option<bool>,
    view: explore::ViewSpec,
) -> Result<explore::Code> {
    let input = input.unwrap_or(false);
    state.app.explore_code(&session_id, path, input, view).await
}

/// Every row of the view saved as CSV or Parquet where the person chose; the rows
/// written.
#[tauri::command]
pub async fn explore_save(
    state: State<'_, AppState>,
    session_id: SessionId,
    path: String,
    input: Option<bool>,
    view: explore::ViewSpec,
    dest: String,
    format: explore::SaveAs,
) -> Result<usize> {
    let input = input.unwrap_or(false);
    state
        .app
        .explore_save(&session_id, path, input, view, dest.into(), format)
        .await
}

// ---- sessions ----

#[tauri::command]
pub async fn create_session(state: State<'_, AppState>) -> Result<SessionView> {
    let current = state.settings.lock().unwrap().clone();
    let config = settings::desktop_config(&current).await?;
    let s = state.app.create_session(config).await?;
    state.app.view(s.id()).await
}

#[tauri::command]
pub async fn open_session(
    state: State<'_, AppState>,
    session_id: SessionId,
) -> Result<SessionView> {
    state.app.view(&session_id).await
}

#[tauri::command]
pub async fn list_sessions(state: State<'_, AppState>) -> Result<Vec<SessionSummary>> {
    state.app.list_sessions().await
}

#[tauri::command]
pub async fn rename_session(
    state: State<'_, AppState>,
    session_id: SessionId,
    title: String,
) -> Result<()> {
    state.app.rename_session(&session_id, &title).await
}

#[tauri::command]
pub async fn delete_session(state: State<'_, AppState>, session_id: SessionId) -> Result<()> {
    state.app.delete_session(&session_id).await
}

/// Stage files or folders (absolute paths from a drop or the dialog); the sandbox
/// starts in the background. A FIFO, socket or device is refused with a sentence.
#[tauri::command]
pub async fn add_files(
    state: State<'_, AppState>,
    session_id: SessionId,
    paths: Vec<String>,
) -> Result<AddedFiles> {
    let paths = absolute(paths, "files must be given with their full path")?;
    state.app.add_files(&session_id, paths).await
}

#[tauri::command]
pub async fn remove_file(
    state: State<'_, AppState>,
    session_id: SessionId,
    name: String,
) -> Result<Vec<StagedFile>> {
    state.app.remove_file(&session_id, &name).await
}

/// Forward the session's own events (set-up, staging, engine errors: those of no
/// ask) to `on_event` until another watch of the session starts.
#[tauri::command]
pub async fn watch_session(
    state: State<'_, AppState>,
    session_id: SessionId,
    on_event: Channel<Event>,
) -> Result<()> {
    state
        .app
        .watch(&session_id, move |ev| {
            let _ = on_event.send(ev);
        })
        .await
}

/// Start an ask; its events arrive on `on_event`, in order, ending with
/// `ask_finished`. Returns the ask's id at once. `approval`: which calls of the
/// session wait for the analyst from this ask on (none given: the session's mode).
#[tauri::command]
pub async fn ask<R: tauri::Runtime>(
    window: tauri::WebviewWindow<R>,
    state: State<'_, AppState>,
    session_id: SessionId,
    prompt: String,
    model: String,
    approval: Option<ApprovalMode>,
    on_event: Channel<Event>,
) -> Result<String> {
    // An empty prompt is refused by the API (`empty_prompt`) before anything is written.
    let current = state.settings.lock().unwrap().clone();
    let ask = state
        .app
        .ask_with_settings(&session_id, prompt, model, &current, approval)
        .await
        .map_err(|e| match e.code {
            ErrorCode::Busy => Error::new(
                ErrorCode::Busy,
                "an ask is already running in this session; stop it first (Esc)",
            ),
            _ => e,
        })?;
    let ask_id = ask.ask_id().to_string();
    tauri::async_runtime::spawn(async move {
        let outcome = ask
            .follow(&move |ev| {
                let _ = on_event.send(ev);
            })
            .await;
        notify_if_away(&window, &outcome);
    });
    Ok(ask_id)
}

/// Answer a call that waits for the analyst (an `approval_requested` event): approve,
/// edit or reject it (`{"decision": ...}`, with `"always": true` to let its tool
/// through for the rest of the session). `not_pending` when no such call waits.
#[tauri::command]
pub async fn answer_approval(
    state: State<'_, AppState>,
    session_id: SessionId,
    call_id: CallId,
    answer: Answer,
) -> Result<()> {
    state
        .app
        .answer_approval(&session_id, &call_id, answer)
        .await
}

/// A system notification for an ask that ended while the window was in the background
/// (the core decides whether and what; a notification server that is not there is
/// not an error of the ask).
fn notify_if_away<R: tauri::Runtime>(
    window: &tauri::WebviewWindow<R>,
    outcome: &sandalyst::api::AskOutcome,
) {
    use tauri_plugin_notification::NotificationExt;
    let focused = window.is_focused().unwrap_or(true);
    let notice =
        sandalyst::api::notice::ask_ended(focused, &outcome.status, outcome.answer.as_deref());
    if let Some(n) = notice {
        let _ = window
            .notification()
            .builder()
            .title(n.title)
            .body(n.body)
            .show();
    }
}

/// Re-run a session's recorded cells on new input files, without any model, in a new
/// session (in the history at once). Returns the new session's id; the replay's events
/// arrive on `on_event`, ending with `ask_finished`. Stop cancels it like an ask.
#[tauri::command]
pub async fn rerun_session(
    state: State<'_, AppState>,
    session_id: SessionId,
    paths: Vec<String>,
    on_event: Channel<Event>,
) -> Result<String> {
    let paths = absolute(paths, "pick the new input files with the dialog")?;
    if paths.is_empty() {
        return Err(Error::bad_input("pick the new input files with the dialog"));
    }
    let rerun = state.app.rerun(&session_id, paths).await?;
    let id = rerun.session_id().to_string();
    let app = state.app.clone();
    tauri::async_runtime::spawn(async move {
        let emit = move |ev: Event| {
            let _ = on_event.send(ev);
        };
        let _ = app.replay(rerun, &emit, None).await;
    });
    Ok(id)
}

/// Stop the session's running ask: the model stream ends and the code is interrupted.
#[tauri::command]
pub fn cancel_ask(state: State<'_, AppState>, session_id: SessionId) -> bool {
    state.app.cancel(&session_id)
}

/// Copy the session's outputs (and its transcript when asked) to `dest`: a new folder,
/// or a new `.zip` file when `zip` is set. Returns what was written.
#[tauri::command]
pub async fn export_session(
    state: State<'_, AppState>,
    session_id: SessionId,
    dest: String,
    zip: bool,
    transcript: bool,
    analysis: Option<bool>,
) -> Result<exports::Exported> {
    let dest = PathBuf::from(dest);
    exports::absolute(&dest)?;
    let what = exports::OutputsExport {
        zip,
        transcript,
        analysis: analysis.unwrap_or(false),
    };
    state.app.export_outputs(&session_id, dest, what).await
}

/// Write the session as one self-contained HTML report to share as `dest`, which the
/// save dialog chose (it asked before replacing a file). Returns what was written.
#[tauri::command]
pub async fn export_report(
    state: State<'_, AppState>,
    session_id: SessionId,
    dest: String,
) -> Result<exports::Exported> {
    let dest = PathBuf::from(dest);
    exports::absolute(&dest)?;
    state.app.export_report(&session_id, dest, true).await
}

/// Save a copy of one file of the session (`path` relative to its folder) to `dest`,
/// chosen in the save dialog; returns what was written.
#[tauri::command]
pub async fn save_file(
    state: State<'_, AppState>,
    session_id: SessionId,
    path: String,
    dest: String,
) -> Result<String> {
    let written = state
        .app
        .save_file(&session_id, &path, PathBuf::from(dest))
        .await?;
    Ok(written.display().to_string())
}

/// Open a session's file with the system's application for it, or show it selected in
/// the file manager (`reveal`; where no file manager answers that request, its folder
/// is opened instead).
#[tauri::command]
pub async fn open_path(
    state: State<'_, AppState>,
    session_id: SessionId,
    path: String,
    reveal: bool,
) -> Result<()> {
    let file = state.app.file_to_open(&session_id, &path)?;
    let cannot = |e: tauri_plugin_opener::Error| {
        Error::new(ErrorCode::Internal, format!("cannot open {path}: {e}"))
    };
    if !reveal {
        return tauri_plugin_opener::open_path(&file, None::<&str>).map_err(cannot);
    }
    tauri::async_runtime::spawn_blocking(move || {
        tauri_plugin_opener::reveal_item_in_dir(&file).or_else(|_| match file.parent() {
            Some(dir) => tauri_plugin_opener::open_path(dir, None::<&str>),
            None => Ok(()),
        })
    })
    .await
    .map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?
    .map_err(cannot)
}

/// Open the log files' folder in the file manager (Help: "Open logs folder"), made
/// first if nothing was logged yet.
#[tauri::command]
pub async fn open_logs_folder() -> Result<String> {
    let dir = sandalyst::api::logs::log_dir().ok_or_else(|| {
        Error::new(
            ErrorCode::Internal,
            "this system has no folder for logs; set SANDALYST_LOG_DIR",
        )
    })?;
    let shown = dir.display().to_string();
    tauri::async_runtime::spawn_blocking(move || {
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        tauri_plugin_opener::open_path(&dir, None::<&str>).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?
    .map_err(|e| Error::new(ErrorCode::Internal, format!("cannot open {shown}: {e}")))?;
    Ok(shown)
}

/// Paths from the page, which must all be absolute (a drop or the dialog gives those).
fn absolute(paths: Vec<String>, why: &str) -> Result<Vec<PathBuf>> {
    let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
    if paths.iter().any(|p| !p.is_absolute()) {
        return Err(Error::bad_input(why));
    }
    Ok(paths)
}

/// Help → Check for Updates…: what the configured feed offers (nothing is fetched when
/// none is configured); a found update waits for [`install_update`].
#[tauri::command]
pub async fn check_for_updates<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
) -> std::result::Result<crate::updates::Checked, crate::updates::UpdateError> {
    crate::updates::check(&app).await
}

/// The analyst agreed to install `version` (the one the check showed): download,
/// verify its signature, install; progress on `on_progress`.
#[tauri::command]
pub async fn install_update<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    version: String,
    on_progress: Channel<crate::updates::Progress>,
) -> std::result::Result<(), crate::updates::UpdateError> {
    crate::updates::install(&app, &version, |p| {
        let _ = on_progress.send(p);
    })
    .await
}

/// Start the installed version: the page asks after an install, when the analyst says so.
#[tauri::command]
pub fn restart_app<R: tauri::Runtime>(app: tauri::AppHandle<R>) {
    tracing::info!("restarting for the update");
    app.request_restart();
}
