//! Files the app is started with: this process's command line (a file manager's "Open
//! with", the `.desktop` file's `%F`), and a second launch's, which the single-instance
//! plugin forwards here before that process exits. They wait in [`Pending`] until the
//! page takes them (`launch_files`), so none is lost while the page is still loading;
//! the event `launch-files` tells a loaded page to take them now.

use std::path::Path;
use std::sync::Mutex;

use sandalyst::api::launch::{files_from_args, LaunchFiles};
use tauri::{Emitter, Manager};

use crate::commands::AppState;

pub use sandalyst::api::launch::instance_name;

/// The event that tells the page files are waiting.
pub const EVENT: &str = "launch-files";

/// Launches whose files the page has not taken yet, oldest first.
#[derive(Default)]
pub struct Pending(Mutex<Vec<LaunchFiles>>);

impl Pending {
    pub fn push(&self, files: LaunchFiles) {
        if !files.is_empty() {
            self.0.lock().unwrap().push(files);
        }
    }

    pub fn take(&self) -> Vec<LaunchFiles> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// The files of this process's own command line.
pub fn from_this_process() -> LaunchFiles {
    let cwd = std::env::current_dir().unwrap_or_default();
    let args = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned());
    files_from_args(args, &cwd)
}

/// A second launch on the same data folder (its `argv` with the program first, and
/// its working directory): its files go to the page and the window comes forward.
pub fn second_launch<R: tauri::Runtime>(app: &tauri::AppHandle<R>, argv: Vec<String>, cwd: String) {
    let files = files_from_args(argv.iter().skip(1), Path::new(&cwd));
    let waiting = !files.is_empty();
    app.state::<AppState>().launch.push(files);
    if let Some(w) = app.get_webview_window("main") {
        let _ = w.unminimize();
        let _ = w.show();
        let _ = w.set_focus();
    }
    if waiting {
        let _ = app.emit_to("main", EVENT, ());
    }
}
