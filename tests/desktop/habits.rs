//! What makes the app behave like a desktop app, end to end under Xvfb: files given on
//! its command line, a second launch handing its files to the running window (single
//! instance over D-Bus), the notification of an ask that ended while the window was in
//! the background, and "Show in folder" revealing the file.
//!
//! Each test runs a D-Bus session bus of its own (dbus-daemon) with the programs a
//! desktop has on it: dunst (the notification server) and Thunar (a file manager that
//! answers org.freedesktop.FileManager1). dbus-monitor records the calls the app makes
//! to them; xdotool moves the keyboard focus between windows as a click would.

use super::*;

/// A session bus of the test's own and the programs it started on it.
struct Bus {
    address: String,
    daemon: Child,
    programs: Vec<Child>,
    /// dbus-monitor and the file it writes the calls it sees to.
    monitor: Option<(Child, PathBuf)>,
    dir: tempfile::TempDir,
}

impl Bus {
    fn start() -> Bus {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon is not installed: run scripts/setup-desktop.sh");
        let mut address = String::new();
        let _ = BufReader::new(daemon.stdout.take().unwrap()).read_line(&mut address);
        let address = address.trim().to_string();
        assert!(address.starts_with("unix:"), "dbus-daemon gave no address");
        Bus {
            address,
            daemon,
            programs: Vec::new(),
            monitor: None,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn command(&self, display: &Display, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("DISPLAY", &display.name)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .env("NO_AT_BRIDGE", "1")
            .env("HOME", self.dir.path());
        c
    }

    /// Start `program` with `args` on this bus, and wait until it owns `name`.
    fn serve(&mut self, display: &Display, program: &str, args: &[&str], name: &str) {
        let child = self
            .command(display, program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program} (scripts/setup-desktop.sh): {e}"));
        self.programs.push(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.owns(name) {
            assert!(Instant::now() < deadline, "{program} did not take {name}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn owns(&self, name: &str) -> bool {
        let out = Command::new("dbus-send")
            .args([
                &format!("--bus={}", self.address),
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner",
                &format!("string:{name}"),
            ])
            .output()
            .expect("dbus-send is not installed");
        String::from_utf8_lossy(&out.stdout).contains("boolean true")
    }

    /// Record the method calls to `interfaces` from now on.
    fn monitor(&mut self, interfaces: &[&str]) {
        let log = self.dir.path().join("calls.log");
        let rules: Vec<String> = interfaces
            .iter()
            .map(|i| format!("type='method_call',interface='{i}'"))
            .collect();
        let child = Command::new("dbus-monitor")
            .arg("--address")
            .arg(&self.address)
            .args(&rules)
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-monitor is not installed");
        self.monitor = Some((child, log));
        // dbus-monitor is listening once it shows on the bus as a monitor; its first
        // line (the NameAcquired signal it receives) says so.
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::metadata(&self.monitor.as_ref().unwrap().1).map_or(0, |m| m.len()) == 0 {
            assert!(Instant::now() < deadline, "dbus-monitor did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The calls of `member` seen so far, each as its string arguments in order.
    fn calls(&self, member: &str) -> Vec<Vec<String>> {
        let log = std::fs::read_to_string(&self.monitor.as_ref().expect("no monitor").1)
            .unwrap_or_default();
        let mut out: Vec<Vec<String>> = Vec::new();
        let mut inside = false;
        for line in log.lines() {
            if !line.starts_with(' ') {
                inside =
                    line.starts_with("method call") && line.ends_with(&format!("member={member}"));
                if inside {
                    out.push(Vec::new());
                }
            } else if inside {
                if let Some(s) = line.trim_start().strip_prefix("string \"") {
                    out.last_mut()
                        .unwrap()
                        .push(s.trim_end_matches('"').to_string());
                }
            }
        }
        out
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let mut monitor = self.monitor.take().map(|(c, _)| c);
        for c in self.programs.iter_mut().chain(monitor.as_mut()) {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// The X windows whose title matches `pattern` (a regular expression, as xdotool reads it).
fn windows(display: &Display, pattern: &str) -> Vec<String> {
    let out = Command::new("xdotool")
        .args(["search", "--onlyvisible", "--name", pattern])
        .env("DISPLAY", &display.name)
        .output()
        .expect("xdotool is not installed: run scripts/setup-desktop.sh");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Give the keyboard focus to the X window `id`, as a click on it would.
fn focus(display: &Display, id: &str) {
    let ok = Command::new("timeout")
        .args(["10", "xdotool", "windowfocus", "--sync", id])
        .env("DISPLAY", &display.name)
        .status()
        .unwrap();
    assert!(ok.success(), "xdotool could not focus window {id}");
}

async fn current_session(app: &App) -> String {
    app.js("const c = document.querySelector('.h-item.current'); return c ? c.dataset.id : ''")
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A small generated table (its name says which launch gave it).
fn table(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    let mut text = String::from("hour,kwh\n");
    for h in 0..24 {
        text.push_str(&format!("{h},{}\n", 10 + (h * 7) % 5));
    }
    std::fs::write(&p, text).unwrap();
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_at_launch_and_a_second_launch_open_in_new_sessions() {
    let display = Display::get();
    let mut bus = Bus::start();
    bus.monitor(&["org.SingleInstance.DBus"]);
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let first = table(work.path(), "first launch.csv");
    let missing = work.path().join("gone.csv");
    let env = [("DBUS_SESSION_BUS_ADDRESS", bus.address.as_str())];

    // 1. Started by a file manager with two files, one of them missing: the one that
    //    exists opens in a new session, the missing one is named in the window.
    let uri = format!("file://{}", first.display()).replace(' ', "%20");
    let app = App::start_with_args(
        &display,
        data.path(),
        &env,
        &[&uri, missing.to_str().unwrap()],
    )
    .await;
    app.wait_js(
        "return document.querySelector('#file-list').innerText.includes('first launch.csv')",
        60,
    )
    .await;
    app.wait_js(
        &format!(
            "return document.querySelector('#toast').innerText.includes({:?})",
            format!("Not opened: {}: no such file", missing.display())
        ),
        10,
    )
    .await;
    let first_session = current_session(&app).await;
    assert!(
        !first_session.is_empty(),
        "no session was opened for the launch's file"
    );
    maybe_shot(&display, "launch-files").await;

    // 2. A second launch on the same data folder, with a path relative to where it was
    //    started: it hands the file to the running window and exits.
    table(work.path(), "second.csv");
    let mut launch = bus
        .command(&display, &app_path())
        .arg("second.csv")
        .current_dir(work.path())
        .env("SANDALYST_DATA_DIR", data.path())
        .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = launch.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = launch.kill();
            panic!("the second launch did not exit: it did not find the running app");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut err = String::new();
    let _ = launch.stderr.take().unwrap().read_to_string(&mut err);
    assert!(
        status.success(),
        "the second launch failed: {status}\n{err}"
    );
    // It reached the running app over the bus, with its arguments and directory.
    let handed = bus.calls("ExecuteCallback");
    assert_eq!(handed.len(), 1, "{handed:?}");
    assert!(handed[0].contains(&"second.csv".to_string()), "{handed:?}");
    assert!(
        handed[0].contains(&work.path().display().to_string()),
        "{handed:?}"
    );

    // The running window shows a new session with that file, and only that file.
    app.wait_js(
        &format!(
            "const c = document.querySelector('.h-item.current'); return !!c && c.dataset.id !== {first_session:?}"
        ),
        30,
    )
    .await;
    app.wait_js(
        "return document.querySelector('#file-list').innerText.includes('second.csv')",
        60,
    )
    .await;
    assert!(!app.text("#file-list").await.contains("first launch.csv"));
    assert_eq!(
        app.js("return document.querySelectorAll('.h-item').length")
            .await,
        json!(2),
        "both launches' sessions are in the history"
    );

    // 3. A launch on another data folder is another app: it does not hand over, it
    //    starts a window of its own (no file: it starts no sandbox).
    let other = tempfile::tempdir().unwrap();
    let mut own = bus
        .command(&display, &app_path())
        .env("SANDALYST_DATA_DIR", other.path())
        .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while windows(&display, "^Sandalyst$").len() < 2 || own.try_wait().unwrap().is_some() {
        assert!(
            own.try_wait().unwrap().is_none(),
            "the app of another data folder exited instead of starting"
        );
        assert!(Instant::now() < deadline, "no second window appeared");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(bus.calls("ExecuteCallback").len(), 1);
    let _ = own.kill();
    let _ = own.wait();
    app.quit().await;
}

/// A scripted ask (no model) that writes `output/<name>` and answers `answer`.
fn scripted(dir: &Path, name: &str, answer: &str) -> String {
    let script = dir.join(format!("{name}.json"));
    let code = format!(
        "import os\nos.makedirs('output', exist_ok=True)\nopen('output/{name}', 'w').write('hour,kwh\\n3,42\\n')\nprint('written')"
    );
    std::fs::write(
        &script,
        json!([{ "python": code }, { "say": answer }]).to_string(),
    )
    .unwrap();
    format!("replay:{}", script.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_ending_unseen_is_notified_and_show_in_folder_reveals_the_file() {
    let display = Display::get();
    let mut bus = Bus::start();
    bus.serve(&display, "dunst", &[], "org.freedesktop.Notifications");
    bus.serve(
        &display,
        "thunar",
        &["--daemon"],
        "org.freedesktop.FileManager1",
    );
    bus.monitor(&[
        "org.freedesktop.Notifications",
        "org.freedesktop.FileManager1",
    ]);
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let env = [("DBUS_SESSION_BUS_ADDRESS", bus.address.as_str())];
    let app = App::start(&display, data.path(), &env).await;
    app.add_file(&table(work.path(), "hours.csv")).await;

    // 1. An ask that ends while the window has the focus: nothing is sent.
    let ours = windows(&display, "^Sandalyst$");
    assert_eq!(ours.len(), 1, "the app's window: {ours:?}");
    focus(&display, &ours[0]);
    app.ask(
        "Write the first table.",
        &scripted(work.path(), "seen.bin", "Seen: the file is written."),
    )
    .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
        180,
    )
    .await;

    // 2. Show in folder: the file manager is asked to show that very file, and opens
    //    its folder with it selected.
    // (A file the window has no preview for offers Open and Show in folder.)
    let button = "[...document.querySelectorAll('.artifact[data-path=\"seen.bin\"] button')].find(b => b.textContent === 'Show in folder')";
    app.wait_js(&format!("return !!{button}"), 30).await;
    app.js(&format!("{button}.click(); return true")).await;
    let session = current_session(&app).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let shown = loop {
        if let Some(c) = bus.calls("ShowItems").pop() {
            break c;
        }
        assert!(
            Instant::now() < deadline,
            "no ShowItems call reached the file manager"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let file = std::fs::canonicalize(data.path())
        .unwrap()
        .join(&session)
        .join("outputs/seen.bin");
    assert_eq!(shown[0], format!("file://{}", file.display()), "{shown:?}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let manager = loop {
        if let Some(w) = windows(&display, "^outputs - ").pop() {
            break w;
        }
        assert!(
            Instant::now() < deadline,
            "the file manager showed no window of the outputs folder"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };

    // 3. The analyst is in the file manager when the next ask ends: one notification,
    //    titled by how it ended, with the answer's first line.
    focus(&display, &manager);
    app.ask(
        "Write the second table.",
        &scripted(
            work.path(),
            "unseen.bin",
            "## 3 unusual hours found\n\nThe table lists them.",
        ),
    )
    .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 2",
        180,
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while bus.calls("Notify").is_empty() {
        assert!(
            Instant::now() < deadline,
            "no notification reached the notification server"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    maybe_shot(&display, "notification-and-reveal").await;
    let sent = bus.calls("Notify");
    // app name, icon, summary, body (the focused ask sent none).
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0][2], "The answer is ready", "{sent:?}");
    assert_eq!(sent[0][3], "3 unusual hours found", "{sent:?}");
    app.quit().await;
}
