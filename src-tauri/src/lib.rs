//! The Sandalyst desktop shell: Tauri commands that translate the page's calls to the
//! core (`sandalyst`), one event channel per ask, the `sandalyst:` URI scheme for the
//! session's images, and window set-up. No analysis or session logic lives here.
//!
//! - [`commands`]: the page's calls (sessions, asks, files, previews, export,
//!   settings), each a translation to `sandalyst::api`;
//! - [`scheme`]: how images of a session reach the page (paths checked by the core);
//! - [`webview`]: the window's WebKit settings (compositing off: memory);
//! - [`launch`]: files given on the command line, by the file manager or by a second
//!   launch (single instance), handed to the page;
//! - [`menu`]: the native menu bar, whose items the page carries out as its buttons;
//! - [`window_state`]: the window opens where and as big as it was left;
//! - [`failure`]: start-up errors and panics shown in native dialogs, and logged;
//! - [`updates`]: Check for Updates against a signed feed, off unless configured.

pub mod commands;
pub mod failure;
pub mod launch;
pub mod menu;

/// Milliseconds since the process started.
pub fn since_start_ms() -> u128 {
    STARTED
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_millis()
}
pub mod scheme;
pub mod updates;
pub mod webview;
pub mod window_state;

use tauri::Manager;

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
                responder.respond(scheme::respond(&request, |id| {
                    state.app.session_dir(&id.into())
                }));
            });
        })
        .invoke_handler(commands::handler())
}

/// When the process started, for the launch-time measurement (`SANDALYST_TIMING=1`).
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

pub fn run() {
    STARTED.get_or_init(std::time::Instant::now);
    failure::on_main_thread();
    // First: what follows, a failure to start included, is in the log.
    let logging = sandalyst::api::logs::init(sandalyst::api::logs::Options {
        shell: "desktop",
        stderr: false,
    });
    if let Some(problem) = &logging.problem {
        eprintln!("sandalyst-desktop: {problem}");
    }
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        "sandalyst-desktop started"
    );
    webview::configure_before_start();
    // `SANDALYST_DATA_DIR` as for the command line (tests use a fresh one), else the
    // command line's default: both show the same history.
    let root = match sandalyst::api::data_root(None) {
        Ok(r) => r,
        Err(e) => failure::fatal(
            &format!("There is no folder for Sandalyst's data: {e:#}."),
            "Set SANDALYST_DATA_DIR to a folder you can write to, then start Sandalyst again.",
        ),
    };
    let state = match commands::AppState::open(root.clone()) {
        Ok(s) => s,
        Err(e) => failure::fatal(
            &format!(
                "The data folder {} cannot be opened: {e:#}.",
                root.display()
            ),
            "Check that it is a folder you can read and write (or move it away to start afresh), or set SANDALYST_DATA_DIR to another folder.",
        ),
    };
    tracing::info!(data_dir = %root.display(), "data folder opened");
    // The files of this launch wait for the page to ask for them.
    state.launch.push(launch::from_this_process());
    let context = tauri::generate_context!();
    let instance = launch::instance_name(&context.config().identifier, &root);
    // The single-instance plugin comes first: a second launch on the same data folder
    // hands its files to the running app and exits before anything else starts.
    let base = builder(tauri::Builder::default(), state).plugin(
        tauri_plugin_single_instance::Builder::new()
            .dbus_id(instance)
            .callback(launch::second_launch)
            .build(),
    );
    // The config file as the command line finds it (SANDALYST_CONFIG or the user's).
    let config_path = sandalyst::api::config_path(&|v: &str| std::env::var(v).ok());
    updates::init(base, updates::Updates::new(config_path))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .menu(menu::build)
        .on_menu_event(menu::on_event)
        .setup(|app| {
            failure::watch_panics(app.handle().clone());
            // The window state lives in the data folder, beside the desktop's settings
            // (a test's fresh SANDALYST_DATA_DIR starts from the default size).
            let root = app.state::<commands::AppState>().app.root().to_path_buf();
            if let Some(w) = app.get_webview_window("main") {
                window_state::restore(&w, &root);
                window_state::track(&w, root);
            }
            Ok(())
        })
        .build(context)
        .unwrap_or_else(|e| {
            failure::fatal(
                &format!("The window cannot be opened: {e}."),
                "On Linux, check that WebKitGTK 4.1 is installed and that a display is available.",
            )
        })
        .run(|app, event| {
            if let tauri::RunEvent::Exit = event {
                // Remove the sessions' containers before the process ends.
                let api = app.state::<commands::AppState>().app.clone();
                tauri::async_runtime::block_on(api.close_all());
            }
        });
}
