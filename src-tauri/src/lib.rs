//! The Sandalyst desktop shell: Tauri commands that translate the page's calls to the
//! core (`sandalyst`), one event channel per ask, the `sandalyst:` URI scheme for the
//! session's images, and window set-up. No analysis or session logic lives here.
//!
//! - [`commands`]: the page's calls (sessions, asks, files, previews, export, settings);
//! - [`scheme`] and [`paths`]: how files of a session reach the page, and the checks
//!   every path from the page goes through;
//! - [`preview`]: which core preview a file gets;
//! - [`settings`], [`engine`]: the settings file and the Docker engine's status;
//! - [`webview`]: the window's WebKit settings (compositing off: memory).

pub mod commands;

/// Milliseconds since the process started.
pub fn since_start_ms() -> u128 {
    STARTED
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_millis()
}
pub mod engine;
pub mod history;
pub mod paths;
pub mod preview;
pub mod scheme;
pub mod settings;
pub mod webview;

use std::path::PathBuf;

use tauri::Manager;

/// Where the app keeps its sessions (and its settings file): `SANDALYST_DATA_DIR`, as
/// for the command line (tests use a fresh one), else the command line's default, so
/// both show the same history.
pub fn data_root() -> anyhow::Result<PathBuf> {
    match std::env::var_os("SANDALYST_DATA_DIR").filter(|d| !d.is_empty()) {
        Some(d) => Ok(PathBuf::from(d)),
        None => sandalyst::store::default_root(),
    }
}

/// Everything but the runtime and plugins: commands, scheme, state. Tests pass
/// `tauri::test::mock_builder()`.
pub fn builder<R: tauri::Runtime>(
    base: tauri::Builder<R>,
    state: commands::AppState,
) -> tauri::Builder<R> {
    base.manage(state)
        .register_asynchronous_uri_scheme_protocol(scheme::SCHEME, |ctx, request, responder| {
            let app = ctx.app_handle().clone();
            tauri::async_runtime::spawn_blocking(move || {
                let state = app.state::<commands::AppState>();
                responder.respond(scheme::respond(&request, |id| state.session_dir(id)));
            });
        })
        .invoke_handler(commands::handler())
}

/// When the process started, for the launch-time measurement (`SANDALYST_TIMING=1`).
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

pub fn run() {
    STARTED.get_or_init(std::time::Instant::now);
    webview::configure_before_start();
    let root = match data_root() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sandalyst-desktop: {e}");
            std::process::exit(1);
        }
    };
    let factory = std::sync::Arc::new(sandalyst::session::DockerFactory);
    let state = match commands::AppState::open(root, factory) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sandalyst-desktop: {e:#}");
            std::process::exit(1);
        }
    };
    builder(tauri::Builder::default(), state)
        .plugin(tauri_plugin_dialog::init())
        .build(tauri::generate_context!())
        .expect("error while building the Sandalyst window")
        .run(|app, event| {
            if let tauri::RunEvent::Exit = event {
                // Remove the sessions' containers before the process ends.
                let sessions = app.state::<commands::AppState>().sessions.clone();
                tauri::async_runtime::block_on(sessions.close_all());
            }
        });
}
