//! The Sandalyst desktop shell: Tauri commands that translate the page's calls to the
//! core (`sandalyst`), one event channel per ask, the `sandalyst:` URI scheme for the
//! session's images, and window set-up. No analysis or session logic lives here.
//!
//! - [`commands`]: the page's calls (sessions, asks, files, previews, export,
//!   settings), each a translation to `sandalyst::api`;
//! - [`scheme`]: how images of a session reach the page (paths checked by the core);
//! - [`webview`]: the window's WebKit settings (compositing off: memory);
//! - [`launch`]: files given on the command line, by the file manager or by a second
//!   launch (single instance), handed to the page.

pub mod commands;
pub mod launch;

/// Milliseconds since the process started.
pub fn since_start_ms() -> u128 {
    STARTED
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_millis()
}
pub mod scheme;
pub mod webview;

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
                responder.respond(scheme::respond(&request, |id| state.app.session_dir(id)));
            });
        })
        .invoke_handler(commands::handler())
}

/// When the process started, for the launch-time measurement (`SANDALYST_TIMING=1`).
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

pub fn run() {
    STARTED.get_or_init(std::time::Instant::now);
    webview::configure_before_start();
    // `SANDALYST_DATA_DIR` as for the command line (tests use a fresh one), else the
    // command line's default: both show the same history.
    let root = match sandalyst::api::data_root(None) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sandalyst-desktop: {e}");
            std::process::exit(1);
        }
    };
    let state = match commands::AppState::open(root.clone()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sandalyst-desktop: {e:#}");
            std::process::exit(1);
        }
    };
    // The files of this launch wait for the page to ask for them.
    state.launch.push(launch::from_this_process());
    let context = tauri::generate_context!();
    let instance = launch::instance_name(&context.config().identifier, &root);
    // The single-instance plugin comes first: a second launch on the same data folder
    // hands its files to the running app and exits before anything else starts.
    builder(tauri::Builder::default(), state)
        .plugin(
            tauri_plugin_single_instance::Builder::new()
                .dbus_id(instance)
                .callback(launch::second_launch)
                .build(),
        )
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .build(context)
        .expect("error while building the Sandalyst window")
        .run(|app, event| {
            if let tauri::RunEvent::Exit = event {
                // Remove the sessions' containers before the process ends.
                let api = app.state::<commands::AppState>().app.clone();
                tauri::async_runtime::block_on(api.close_all());
            }
        });
}
