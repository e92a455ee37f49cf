//! Failures a person can see: a start-up error in a native dialog that says what to
//! do, before the process exits (started from the dock or a release build on Windows,
//! nobody reads stderr); a panic's report in the log (the core's hook) and, while the
//! window is up, in a dialog that says where the report is.

use std::sync::OnceLock;

use tauri_plugin_dialog::{DialogExt, MessageDialogKind};

/// The thread that runs the window's event loop: a dialog is never opened from a
/// panic there (the loop is what would draw it).
static MAIN_THREAD: OnceLock<std::thread::ThreadId> = OnceLock::new();
static APP: OnceLock<tauri::AppHandle> = OnceLock::new();

/// Where the logs are, as a sentence's end.
fn logs_hint() -> String {
    match sandalyst::api::logs::log_dir() {
        Some(d) => format!("\n\nThe log is in {}.", d.display()),
        None => String::new(),
    }
}

/// The app cannot start: `what` went wrong and `fix` says what to do. Logged, said on
/// stderr, shown in a native dialog where there is a display; then the process exits.
pub fn fatal(what: &str, fix: &str) -> ! {
    tracing::error!("cannot start: {what}");
    eprintln!("sandalyst-desktop: {what}\n{fix}");
    if has_display() {
        let _ = rfd::MessageDialog::new()
            .set_level(rfd::MessageLevel::Error)
            .set_title("Sandalyst cannot start")
            .set_description(format!("{what}\n\n{fix}{}", logs_hint()))
            .set_buttons(rfd::MessageButtons::Ok)
            .show();
    }
    std::process::exit(1)
}

/// Under X11 or Wayland a dialog needs a display; headless (CI, ssh) it is skipped.
fn has_display() -> bool {
    if cfg!(any(target_os = "macos", windows)) {
        return true;
    }
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()))
}

/// From now on the current thread is the event loop's.
pub fn on_main_thread() {
    MAIN_THREAD.get_or_init(|| std::thread::current().id());
}

/// Once the window is up: a panic on another thread (a command, a task) also shows a
/// dialog, after the core's hook has written the report to the log.
pub fn watch_panics(app: tauri::AppHandle) {
    if APP.set(app).is_err() {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        let on_main = MAIN_THREAD.get() == Some(&std::thread::current().id());
        if let (Some(app), false) = (APP.get(), on_main) {
            // Not blocking: the dialog is drawn by the event loop on the main thread.
            app.dialog()
                .message(format!(
                    "Something went wrong inside Sandalyst: {info}\n\nThe app may keep working; if it does not, restart it. Please attach the log to a bug report.{}",
                    logs_hint()
                ))
                .kind(MessageDialogKind::Error)
                .title("Sandalyst hit a bug")
                .show(|_| {});
        }
    }));
}
