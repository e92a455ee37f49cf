//! Logs and failures a person can see: the Shortcuts dialog names the log folder (with
//! "Open logs folder"), the app logs its start there, and a data folder that cannot be
//! opened stops the start with the fix (in a dialog where there is a display; checked
//! here without one, where stderr and the log say it).

use super::*;

/// Every log file's text in `dir`, each file's name checked.
fn desktop_logs(dir: &Path) -> String {
    let mut text = String::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("desktop.") && name.ends_with(".log"),
            "{name}"
        );
        text.push_str(&std::fs::read_to_string(path).unwrap());
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_help_names_the_log_folder_and_the_start_is_logged_there() {
    let display = Display::get();
    let data = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let dir = logs.path().to_str().unwrap();
    let app = App::start(&display, data.path(), &[("SANDALYST_LOG_DIR", dir)]).await;
    app.click("#open-help").await;
    app.wait_js("return document.querySelector('#help').open", 10)
        .await;
    let shown = app
        .js("return document.querySelector('#logs-dir').innerText")
        .await;
    assert_eq!(shown, Value::String(dir.to_string()));
    let button = app
        .js("const b = document.querySelector('#open-logs'); return !!b && b.offsetWidth > 0 && b.innerText")
        .await;
    assert_eq!(button, Value::String("Open logs folder".into()));
    app.quit().await;
    let log = desktop_logs(logs.path());
    assert!(log.contains("sandalyst-desktop started"), "{log}");
    assert!(
        log.contains(&format!(
            "data folder opened data_dir={}",
            data.path().display()
        )),
        "{log}"
    );
}

#[test]
fn a_data_folder_that_cannot_be_opened_stops_the_start_with_the_fix() {
    let work = tempfile::tempdir().unwrap();
    let not_a_folder = work.path().join("a file");
    std::fs::write(&not_a_folder, "").unwrap();
    let logs = work.path().join("logs");
    let o = Command::new(app_path())
        .env("SANDALYST_DATA_DIR", &not_a_folder)
        .env("SANDALYST_LOG_DIR", &logs)
        // No display: the dialog is skipped (it would wait for a click).
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "The data folder {} cannot be opened",
            not_a_folder.display()
        )) && err.contains("set SANDALYST_DATA_DIR to another folder"),
        "{err}"
    );
    let log = desktop_logs(&logs);
    assert!(
        log.contains("ERROR") && log.contains("cannot start: The data folder"),
        "{log}"
    );
}
