//! The desktop app end to end, driven through WebDriver (tauri-driver with
//! WebKitWebDriver) under Xvfb, against the real Docker engine and the offline analyst.
//!
//! Needs: the packages of `scripts/setup-desktop.sh` (webkit2gtk-driver, xvfb) and
//! `tauri-driver` on PATH or in ~/.cargo/bin. When DISPLAY is unset the test starts its
//! own Xvfb. Files are added through the command a native drop calls
//! (`window.sandalyst.addPaths`), since an OS drag cannot be synthesised; export goes
//! through the `export_session` command, since native dialogs cannot be driven.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};

// Files at launch, single instance, notifications, Show in folder.
mod habits;
// The engine of a docker CLI context, with DOCKER_HOST unset.
mod contexts;
// The log folder in the help, the start logged, a start that fails with the fix.
mod logs;
// The window state kept, the menu's keys, every control on screen at 1024x768.
mod window;
// An interactive (HTML) chart live in a sandboxed frame: a hover, and nothing reached.
mod charts;
// The shared report opened offline: every chart drawn, nothing fetched.
mod report;
// The first cell after a drop in a warm kernel, and the time it shows.
mod warm;
// Help → Check for Updates… against a signed feed on 127.0.0.1.
mod updates;
use serde_json::{json, Value};

const APP: &str = env!("CARGO_BIN_EXE_sandalyst-desktop");

/// The app under test: this build's, or `SANDALYST_DESKTOP_APP` (the benchmark runs the
/// release build installed from the `.deb` that way).
fn app_path() -> String {
    std::env::var("SANDALYST_DESKTOP_APP").unwrap_or_else(|_| APP.to_string())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn tauri_driver() -> PathBuf {
    if let Ok(p) = which("tauri-driver") {
        return p;
    }
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_default());
    let p = home.join(".cargo/bin/tauri-driver");
    assert!(p.exists(), "tauri-driver is not installed: run scripts/setup-desktop.sh (cargo install tauri-driver --locked)");
    p
}

fn which(name: &str) -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
        .ok_or(())
}

/// An X display: the one in DISPLAY, or an Xvfb of our own.
struct Display {
    name: String,
    xvfb: Option<Child>,
}

impl Display {
    fn get() -> Display {
        if let Ok(d) = std::env::var("DISPLAY") {
            if !d.is_empty() {
                return Display {
                    name: d,
                    xvfb: None,
                };
            }
        }
        Display::own()
    }

    /// An Xvfb of this test's own, whatever DISPLAY says.
    fn own() -> Display {
        // Xvfb picks a free display itself and says which once it is ready: tests that
        // run at once (in this process or another worktree's) each get their own, and
        // one ending never takes another's display down.
        let mut xvfb = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x900x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb is not installed: run scripts/setup-desktop.sh");
        let mut number = String::new();
        let _ = BufReader::new(xvfb.stdout.take().unwrap()).read_line(&mut number);
        assert!(
            !number.trim().is_empty(),
            "Xvfb did not start (no display number on -displayfd)"
        );
        let name = format!(":{}", number.trim());
        Display {
            name,
            xvfb: Some(xvfb),
        }
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        if let Some(x) = &mut self.xvfb {
            let _ = x.kill();
            let _ = x.wait();
        }
    }
}

/// tauri-driver (and through it the app) with its own ports and environment.
struct App {
    driver: Child,
    client: Option<Client>,
}

impl App {
    async fn start(display: &Display, data: &Path, env: &[(&str, &str)]) -> App {
        App::start_with_args(display, data, env, &[]).await
    }

    /// The app started with `args` on its command line (as a file manager starts it).
    async fn start_with_args(
        display: &Display,
        data: &Path,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> App {
        App::start_without(display, data, env, &[], args).await
    }

    /// The app started with `env` set and the variables of `unset` removed from what
    /// it inherits from this process.
    async fn start_without(
        display: &Display,
        data: &Path,
        env: &[(&str, &str)],
        unset: &[&str],
        args: &[&str],
    ) -> App {
        let port = free_port();
        let native = free_port();
        let mut cmd = Command::new(tauri_driver());
        cmd.args([
            "--port",
            &port.to_string(),
            "--native-port",
            &native.to_string(),
        ])
        .env("DISPLAY", &display.name)
        .env("SANDALYST_DATA_DIR", data)
        .env("NO_AT_BRIDGE", "1")
        .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
        for k in unset {
            cmd.env_remove(k);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let driver = cmd.spawn().expect("cannot start tauri-driver");
        let caps = json!({"browserName": "wry", "tauri:options": {"application": app_path(), "args": args}});
        let caps = caps.as_object().unwrap().clone();
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        let client = loop {
            match ClientBuilder::native()
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(c) => break c,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                Err(e) => panic!("no WebDriver session: {e}"),
            }
        };
        let app = App {
            driver,
            client: Some(client),
        };
        app.wait_js("return document.body.dataset.ready === 'true'", 30)
            .await;
        app
    }

    fn c(&self) -> &Client {
        self.client.as_ref().unwrap()
    }

    /// The id of the session the window shows.
    async fn session_id(&self) -> String {
        let id = self
            .js("return document.querySelector('.h-item.current').dataset.id")
            .await;
        id.as_str().expect("a current session").to_string()
    }

    /// One of the app's commands as the page calls it: its value, or "error: ...".
    async fn invoke(&self, cmd: &str, args: Value) -> Value {
        self.c()
            .execute_async(
                &format!("const [done] = arguments; window.__TAURI__.core.invoke({cmd:?}, {args}).then(done, e => done('error: ' + e))"),
                vec![],
            )
            .await
            .unwrap_or_else(|e| panic!("{cmd}: {e}"))
    }

    async fn js(&self, script: &str) -> Value {
        self.c()
            .execute(script, vec![])
            .await
            .unwrap_or_else(|e| panic!("{script}: {e}"))
    }

    /// Wait until `script` returns true; fails with what the page shows.
    async fn wait_js(&self, script: &str, secs: u64) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if self.c().execute(script, vec![]).await.ok() == Some(Value::Bool(true)) {
                return;
            }
            if Instant::now() > deadline {
                let text = self.js("return document.body.innerText").await;
                let errors = self.js("return (window.__errors || []).join('\\n')").await;
                panic!(
                    "timed out waiting for {script}\n--- page errors ---\n{}\n--- page ---\n{}",
                    errors.as_str().unwrap_or(""),
                    text.as_str().unwrap_or("")
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    async fn text(&self, css: &str) -> String {
        self.js(&format!(
            "const e = document.querySelector({css:?}); return e ? e.innerText : ''"
        ))
        .await
        .as_str()
        .unwrap_or("")
        .to_string()
    }

    async fn click(&self, css: &str) {
        self.c()
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .click()
            .await
            .unwrap();
    }

    async fn ask(&self, prompt: &str, model: &str) {
        self.js(&format!(
            "const m = document.querySelector('#model');
             if (![...m.options].some(o => o.value === {model:?})) m.append(new Option({model:?}.startsWith('replay:') ? 'Scripted model (test)' : {model:?}, {model:?}));
             m.value = {model:?};
             document.querySelector('#prompt').value = {prompt:?};
             document.querySelector('#run').click();
             return true"
        ))
        .await;
    }

    /// Add a file through the command the window's drop handler calls, and wait until
    /// the file list shows it.
    async fn add_file(&self, file: &Path) {
        self.js(&format!(
            "window.sandalyst.addPaths([{:?}]); return true",
            file.to_str().unwrap()
        ))
        .await;
        let name = file.file_name().unwrap().to_str().unwrap();
        self.wait_js(
            &format!("return document.querySelector('#file-list').innerText.includes({name:?})"),
            60,
        )
        .await;
    }

    /// Re-run session `from` on `file` through the page (as the Re-run button does after
    /// its dialog); the new session's id and how its replay ended.
    async fn rerun(&self, file: &Path, from: &str) -> (String, String) {
        self.js(&format!(
            "window.sandalyst.rerun([{:?}]); return true",
            file.to_str().unwrap()
        ))
        .await;
        let current = "document.querySelector('.h-item.current')";
        self.wait_js(
            &format!("const c = {current}; return !!c && c.dataset.id !== {from:?}"),
            30,
        )
        .await;
        self.wait_js(
            "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
            300,
        )
        .await;
        let id = self.js(&format!("return {current}.dataset.id")).await;
        (
            id.as_str().unwrap().to_string(),
            self.text(".ask .ending").await,
        )
    }

    async fn quit(mut self) {
        if let Some(c) = self.client.take() {
            let _ = c.close().await;
        }
        stop_driver(&mut self.driver);
    }
}

fn stop_driver(driver: &mut Child) {
    // SIGTERM, not SIGKILL: tauri-driver then stops WebKitWebDriver too.
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(driver.id().to_string())
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = driver.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = driver.kill();
    let _ = driver.wait();
}

impl Drop for App {
    fn drop(&mut self) {
        stop_driver(&mut self.driver);
    }
}

const HOSTILE: &str = r#"
import os
os.makedirs('output', exist_ok=True)
open('output/hostile_report.md', 'w').write('''# Hostile report
<script>window.__pwned = 'script'</script>
<img src=x onerror="window.__pwned = 'onerror'">
[click me](javascript:window.__pwned='link')
<iframe src="javascript:window.__pwned='iframe'"></iframe>
![svg](evil.svg)
''')
open('output/hostile.csv', 'w').write('a,b\n"<img src=x onerror=window.__pwned=1>",<script>window.__pwned=2</script>\n=1+1,@SUM(A1)\n-3.5,+7\n')
open('output/evil.svg', 'w').write('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" onload="window.top.__pwned=3"><script>window.top.__pwned=4</script><rect width="40" height="40" fill="red"/></svg>')
open('output/<img src=x onerror=window.__pwned=5>.txt', 'w').write('name with markup')
open('output/chart_report.md', 'w').write('# Chart report\n\n![the chart](energy_anomalies.png)\n')
print('hostile files written')
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn desktop_end_to_end() {
    let display = Display::get();
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let csv = repo().join("examples/building_energy.csv");

    // 1. Fresh start, a file through the drop's command, the reference case.
    let app = App::start(&display, data.path(), &[]).await;
    app.wait_js("return !!document.querySelector('#offline-card') && !document.querySelector('#offline-card').hidden", 10).await;
    app.add_file(&csv).await;
    app.click("#example").await;
    app.click("#run").await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
        600,
    )
    .await;
    let ending = app.text(".ask .ending").await;
    assert!(
        ending.starts_with("Finished"),
        "the reference case ended as {ending:?}"
    );

    // Chart shown, anomalies table with rows, report with heading and embedded chart.
    app.wait_js("const i = document.querySelector('.artifact[data-path=\"energy_anomalies.png\"] img'); return !!i && i.complete && i.naturalWidth > 0", 30).await;
    app.wait_js("return document.querySelectorAll('.artifact[data-path=\"anomalies.csv\"] .vtable-table tbody tr').length > 0", 30).await;
    // Each artifact names the cell that made it (its provenance).
    assert!(app
        .text(".artifact[data-path=\"energy_anomalies.png\"] .made-by")
        .await
        .starts_with("made by cell "));
    app.wait_js(
        "return !!document.querySelector('.artifact[data-path=\"anomaly_report.md\"] .report h1')",
        30,
    )
    .await;
    // A chart the report embeds is shown (the offline report may embed none).
    app.wait_js("return [...document.querySelectorAll('.artifact[data-path=\"anomaly_report.md\"] .report img')].every(i => i.complete && i.naturalWidth > 0)", 30).await;
    let session_id = app.session_id().await;

    // The engine in one line, as the settings show it.
    let engine = app
        .c()
        .execute_async(
            "const [done] = arguments; window.__TAURI__.core.invoke('engine_status').then(done, e => done({error: String(e)}))",
            vec![],
        )
        .await
        .unwrap();
    let line = engine["engine"].as_str().unwrap_or_default();
    assert!(
        line.starts_with("Docker Engine ") && line.contains("API 1."),
        "{engine}"
    );

    // 2. A follow-up in the same session.
    app.ask("Now summarise the anomalies by weekday.", "offline")
        .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 2",
        300,
    )
    .await;

    // 3. Stop during a long cell.
    let long = work.path().join("long.json");
    std::fs::write(&long, r#"[{"python": "import time\nprint('sleeping', flush=True)\ntime.sleep(300)"}, {"say": "never"}]"#).unwrap();
    app.ask("Wait a long time.", &format!("replay:{}", long.display()))
        .await;
    app.wait_js(
        "return [...document.querySelectorAll('.ask')].pop().innerText.includes('sleeping')",
        120,
    )
    .await;
    let t = Instant::now();
    app.c()
        .active_element()
        .await
        .unwrap()
        .send_keys("\u{E00C}")
        .await
        .unwrap(); // Escape
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 3",
        60,
    )
    .await;
    let stopped = app
        .js("return [...document.querySelectorAll('.ask .ending')].pop().innerText")
        .await;
    assert!(
        stopped.as_str().unwrap().starts_with("Stopped"),
        "{stopped}"
    );
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "stop took {:?}",
        t.elapsed()
    );

    // 4. Hostile artifacts: nothing of them runs.
    let hostile = work.path().join("hostile.json");
    std::fs::write(
        &hostile,
        serde_json::to_string(&json!([{"python": HOSTILE}, {"say": "Hostile files written."}]))
            .unwrap(),
    )
    .unwrap();
    app.ask(
        "Write the hostile files.",
        &format!("replay:{}", hostile.display()),
    )
    .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 4",
        120,
    )
    .await;
    app.wait_js(
        "return !!document.querySelector('.artifact[data-path=\"hostile_report.md\"] .report h1')",
        30,
    )
    .await;
    app.wait_js("return document.querySelectorAll('.artifact[data-path=\"hostile.csv\"] .vtable-table tbody tr').length > 0", 30).await;
    app.wait_js("const i = document.querySelector('.artifact[data-path=\"evil.svg\"] img'); return !!i && i.complete", 30).await;
    // A report's relative image is the session's own output, shown through the scheme.
    app.wait_js("const i = document.querySelector('.artifact[data-path=\"chart_report.md\"] .report img'); return !!i && i.complete && i.naturalWidth > 0", 30).await;
    let report = app
        .text(".artifact[data-path=\"hostile_report.md\"] .report")
        .await;
    assert!(
        report.contains("<script>"),
        "raw HTML is shown as text: {report}"
    );
    let cell = app
        .text(".artifact[data-path=\"hostile.csv\"] .vtable-table tbody")
        .await;
    assert!(cell.contains("<img src=x"), "CSV cells are text: {cell}");
    // Cells a spreadsheet would run are flagged; plain signed numbers are not.
    let flagged = app
        .js("return [...document.querySelectorAll('.artifact[data-path=\"hostile.csv\"] td.formula')].map(td => td.dataset.exact)")
        .await;
    assert_eq!(flagged, json!(["=1+1", "@SUM(A1)"]));
    assert!(
        app.text("#asks")
            .await
            .contains("<img src=x onerror=window.__pwned=5>.txt"),
        "the file name is text"
    );
    // Click every link of the report; none navigates or runs.
    app.js("document.querySelectorAll('.report a').forEach(a => a.click()); return true")
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        app.js("return window.__pwned === undefined").await,
        Value::Bool(true),
        "a hostile artifact ran script"
    );
    assert_eq!(app.js("return document.querySelectorAll('#asks script, #asks iframe, #asks svg, #asks [onerror]').length").await, json!(0));

    // The page's CSP: no inline script, no eval, no remote images.
    let csp = app
        .js("const s = document.createElement('script'); s.textContent = 'window.__inline = 1'; document.body.append(s);
             let evalBlocked = false; try { window.eval('1') } catch (e) { evalBlocked = true }
             return [window.__inline === undefined, evalBlocked]")
        .await;
    assert_eq!(
        csp,
        json!([true, true]),
        "inline script and eval must be refused by the CSP"
    );

    // 5. Export through the command the Export dialog calls.
    let dest = work.path().join("export");
    let written = app
        .c()
        .execute_async(
            "const [sid, dest, done] = arguments; window.__TAURI__.core.invoke('export_session', {sessionId: sid, dest, zip: false, transcript: true, analysis: true}).then(done, e => done('ERR ' + e))",
            vec![json!(session_id), json!(dest.to_str().unwrap())],
        )
        .await
        .unwrap();
    assert!(written["path"].is_string(), "{written}");
    let notes = written["notes"].to_string();
    assert!(notes.contains("hostile.csv: 2 cells"), "{notes}");
    for f in [
        "anomalies.csv",
        "energy_anomalies.png",
        "anomaly_report.md",
        "transcript.jsonl",
        "analysis.ipynb",
        "analysis.py",
    ] {
        assert!(dest.join(f).is_file(), "{f} not exported");
    }
    // The analysis as a notebook: the ask, then the executed code cells.
    let nb: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dest.join("analysis.ipynb")).unwrap())
            .unwrap();
    assert_eq!(nb["nbformat"], 4);
    let code_cells = nb["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["cell_type"] == "code")
        .count();
    assert!(code_cells >= 3, "{code_cells} code cells");
    let zip = work.path().join("export.zip");
    let z = app
        .c()
        .execute_async(
            "const [sid, dest, done] = arguments; window.__TAURI__.core.invoke('export_session', {sessionId: sid, dest, zip: true, transcript: false}).then(done, e => done('ERR ' + e))",
            vec![json!(session_id), json!(zip.to_str().unwrap())],
        )
        .await
        .unwrap();
    assert!(z["path"].is_string(), "{z}");
    assert!(std::fs::metadata(&zip).unwrap().len() > 1000);

    app.quit().await;

    // 6. Restart: the session is in the history and reopens with its asks and artifacts.
    let app = App::start(&display, data.path(), &[]).await;
    app.wait_js(
        &format!("return !!document.querySelector('.h-item[data-id=\"{session_id}\"]')"),
        20,
    )
    .await;
    let opened = app
        .c()
        .execute_async(
            "const [sid, done] = arguments; window.__TAURI__.core.invoke('open_session', {sessionId: sid}).then(v => done('OK ' + JSON.stringify(v).slice(0, 300)), e => done('ERR ' + e))",
            vec![json!(session_id)],
        )
        .await
        .unwrap();
    assert!(opened.as_str().unwrap().starts_with("OK"), "{opened}");
    app.click(&format!(".h-item[data-id=\"{session_id}\"] .h-open"))
        .await;
    app.wait_js("return document.querySelectorAll('.ask').length >= 4", 20)
        .await;
    app.wait_js("const i = document.querySelector('.artifact[data-path=\"energy_anomalies.png\"] img'); return !!i && i.complete && i.naturalWidth > 0", 30).await;
    assert!(app.text("#file-list").await.contains("building_energy.csv"));

    // 7. Re-run the whole session on next month's export, with no model: a new session
    // with the outputs of the new data (its own planted events).
    let next = repo().join("tests/fixtures/building_energy_next.csv");
    let (rerun_id, ending) = app.rerun(&next, &session_id).await;
    assert!(
        ending.starts_with("Finished"),
        "the re-run ended as {ending:?}"
    );
    app.wait_js("const i = document.querySelector('.artifact[data-path=\"energy_anomalies.png\"] img'); return !!i && i.complete && i.naturalWidth > 0", 30).await;
    let rerun_dir = data.path().join(&rerun_id);
    let found = std::fs::read_to_string(rerun_dir.join("outputs/anomalies.csv")).unwrap();
    let planted: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("tests/fixtures/building_energy_next.events.json"))
            .unwrap(),
    )
    .unwrap();
    for ev in planted["events"].as_array().unwrap() {
        let day = ev["start"].as_str().unwrap().get(..10).unwrap();
        assert!(
            found.contains(day),
            "the re-run missed the event of {day}: {found}"
        );
    }
    // When a cell fails on the new data, the replay stops there and offers to hand the
    // session to a model: a session whose cell sums column x, re-run on a file without it.
    let with_x = work.path().join("with_x.csv");
    std::fs::write(&with_x, "x,y\n1,2\n3,4\n").unwrap();
    let without_x = work.path().join("without_x.csv");
    std::fs::write(&without_x, "y\n5\n").unwrap();
    let sum = work.path().join("sum.json");
    std::fs::write(
        &sum,
        serde_json::to_string(&json!([
            {"python": "import pandas as pd\nprint(pd.read_csv('input/with_x.csv')['x'].sum())"},
            {"say": "The sum of x is 4."}
        ]))
        .unwrap(),
    )
    .unwrap();
    app.js("window.sandalyst.newSession(); return true").await;
    app.add_file(&with_x).await;
    app.ask("Sum x.", &format!("replay:{}", sum.display()))
        .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
        120,
    )
    .await;
    let summed = app
        .js("return document.querySelector('.h-item.current').dataset.id")
        .await;
    let (_, ending) = app.rerun(&without_x, summed.as_str().unwrap()).await;
    assert!(
        ending.starts_with("Failed"),
        "the re-run without x ended as {ending:?}"
    );
    assert!(
        app.text(".ask .items").await.contains("Error"),
        "the traceback is shown"
    );
    app.click(".ask .ask-offers button").await;
    let prompt = app
        .js("return document.querySelector('#prompt').value")
        .await;
    assert!(
        prompt
            .as_str()
            .unwrap()
            .starts_with("The re-run stopped at a cell"),
        "{prompt}"
    );
    app.quit().await;

    // 8. No engine: the banner says so, and history still works.
    let closed = free_port();
    let host = format!("tcp://127.0.0.1:{closed}");
    let app = App::start(&display, data.path(), &[("DOCKER_HOST", host.as_str())]).await;
    app.wait_js("return !document.querySelector('#banner').hidden", 30)
        .await;
    assert!(app
        .text("#banner")
        .await
        .contains("No Docker engine answers"));
    app.wait_js(
        &format!("return !!document.querySelector('.h-item[data-id=\"{session_id}\"]')"),
        20,
    )
    .await;
    app.quit().await;
}

/// A Chat Completions server on 127.0.0.1 (an OpenAI-compatible provider's double): each
/// POST to `.../chat/completions` gets the next scripted reply as one JSON body (the
/// client takes those as well as a stream), and every request body is kept, so a test
/// can read what the model was told.
struct ChatDouble {
    /// Up to and including `/v1`, as the settings' base URL.
    base: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl ChatDouble {
    fn start(replies: Vec<Value>) -> ChatDouble {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(replies)));
        let kept = bodies.clone();
        std::thread::spawn(move || {
            for sock in listener.incoming() {
                let Ok(sock) = sock else { return };
                let (kept, script) = (kept.clone(), script.clone());
                std::thread::spawn(move || {
                    let _ = ChatDouble::answer(sock, &kept, &script);
                });
            }
        });
        ChatDouble { base, bodies }
    }

    fn answer(
        mut sock: TcpStream,
        kept: &Mutex<Vec<Value>>,
        script: &Mutex<VecDeque<Value>>,
    ) -> std::io::Result<()> {
        let mut buf = Vec::new();
        let mut tmp = [0u8; 8192];
        let head_end = loop {
            let n = sock.read(&mut tmp)?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&tmp[..n]);
            if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let n = sock.read(&mut tmp)?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&tmp[..n]);
        }
        let (status, reply) = if head.starts_with("post ") && head.contains("/chat/completions ") {
            kept.lock()
                .unwrap()
                .push(serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null));
            match script.lock().unwrap().pop_front() {
                Some(r) => ("200 OK", r),
                None => (
                    "400 Bad Request",
                    json!({"error": {"message": "the test's script has no more replies"}}),
                ),
            }
        } else {
            ("404 Not Found", json!({"error": {"message": "not here"}}))
        };
        let body = reply.to_string();
        write!(
            sock,
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )?;
        sock.flush()
    }

    fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

/// A whole Chat Completions reply: the model's words and at most one call.
fn chat_reply(text: &str, call: Option<(&str, &str, Value)>) -> Value {
    let mut message = json!({"role": "assistant", "content": text});
    if let Some((id, name, args)) = &call {
        message["tool_calls"] = json!([{"id": id, "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]);
    }
    json!({
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000, "model": "scripted",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": if call.is_some() { "tool_calls" } else { "stop" }}],
        "usage": {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220},
    })
}

/// Approvals in the window: a session that asks before every call; the first call run
/// with Enter, the second edited and run with Ctrl+Enter, the third (a shell command)
/// rejected with Esc and a reason that the model reads on its next turn. With
/// SCREENSHOTS_DIR set, the waiting bar is saved there (`13-approve-bar`; run with
/// GTK_THEME=Adwaita:dark for the dark theme).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_approve_edit_and_reject_in_the_window() {
    let display = Display::get();
    let data = tempfile::tempdir().unwrap();
    let model = ChatDouble::start(vec![
        chat_reply(
            "First I print one.",
            Some(("call_1", "python", json!({"code": "print('one')"}))),
        ),
        chat_reply(
            "Now two.",
            Some(("call_2", "python", json!({"code": "print('two')"}))),
        ),
        chat_reply(
            "Then I clear the outputs folder.",
            Some(("call_3", "shell", json!({"command": "rm -rf output"}))),
        ),
        chat_reply("Printed one and edited; the outputs were kept.", None),
    ]);
    // The desktop's settings: the double as an OpenAI-compatible provider, the shell
    // tool on, and new sessions asking before every call.
    std::fs::write(
        data.path().join("desktop-settings.json"),
        json!({"provider": "openai-compatible", "model": "scripted", "base_url": model.base,
               "shell": true, "approval": "all"})
        .to_string(),
    )
    .unwrap();
    let app = App::start(&display, data.path(), &[]).await;
    assert_eq!(
        app.js("return document.querySelector('#approval').value")
            .await,
        json!("all"),
        "a new session takes the settings' mode"
    );
    app.ask("Print a number or two.", "openai-compatible:scripted")
        .await;

    // Turn 1: the bar appears with the focus; Enter runs the call.
    let bar_of = |n: usize| {
        format!("const c = document.querySelectorAll('.ask .cell')[{n}]; return !!c && !!c.querySelector('.approve-bar')")
    };
    app.wait_js(&bar_of(0), 240).await;
    app.wait_js(
        "return document.activeElement && document.activeElement.classList.contains('approve-bar')",
        10,
    )
    .await;
    assert!(app
        .text(".cell.pending .code")
        .await
        .contains("print('one')"));
    assert!(app
        .text(".cell.pending .approve-bar")
        .await
        .contains("always allow python in this session"));
    maybe_shot(&display, "13-approve-bar").await;
    app.c()
        .active_element()
        .await
        .unwrap()
        .send_keys("\u{E007}") // Enter
        .await
        .unwrap();

    // Turn 2: Edit, new code, Ctrl+Enter.
    app.wait_js(&bar_of(1), 120).await;
    assert!(
        app.text(".ask .cell .outputs").await.contains("one"),
        "the approved call ran"
    );
    app.click(".cell.pending .approve-edit").await;
    let area = app
        .c()
        .find(Locator::Css(".cell.pending textarea.approve-code"))
        .await
        .unwrap();
    area.clear().await.unwrap();
    area.send_keys("print('edited')").await.unwrap();
    maybe_shot(&display, "14-approve-edit").await;
    area.send_keys("\u{E009}\u{E007}\u{E000}") // Ctrl+Enter, then the modifier up
        .await
        .unwrap();

    // Turn 3: Esc on the bar asks for a reason; Enter sends it.
    app.wait_js(&bar_of(2), 120).await;
    app.wait_js(
        "return document.activeElement && document.activeElement.classList.contains('approve-bar')",
        10,
    )
    .await;
    assert!(app
        .text(".cell.pending .code")
        .await
        .contains("rm -rf output"));
    app.c()
        .active_element()
        .await
        .unwrap()
        .send_keys("\u{E00C}") // Escape
        .await
        .unwrap();
    app.wait_js(
        "return document.activeElement && document.activeElement.classList.contains('approve-reason')",
        10,
    )
    .await;
    app.c()
        .active_element()
        .await
        .unwrap()
        .send_keys("keep the outputs")
        .await
        .unwrap();
    maybe_shot(&display, "15-approve-reject").await;
    app.c()
        .active_element()
        .await
        .unwrap()
        .send_keys("\u{E007}") // Enter sends the rejection
        .await
        .unwrap();

    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
        120,
    )
    .await;
    let ending = app.text(".ask .ending").await;
    assert!(
        ending.starts_with("Finished"),
        "the ask ended as {ending:?}"
    );
    // What ran: one, and the edit instead of two; the shell command did not.
    let outputs = app
        .js("return [...document.querySelectorAll('.ask .cell')].map(c => (c.querySelector('.outputs') || {innerText: ''}).innerText)")
        .await;
    let outputs: Vec<String> = serde_json::from_value(outputs).unwrap();
    assert_eq!(outputs.len(), 3, "{outputs:?}");
    assert!(outputs[0].contains("one"), "{outputs:?}");
    assert!(outputs[1].contains("edited"), "{outputs:?}");
    assert!(
        !outputs.iter().any(|o| o.contains("two")),
        "the model's own second call never ran: {outputs:?}"
    );
    assert!(app
        .text(".ask .cell:nth-of-type(2) .code")
        .await
        .contains("print('edited')"));
    assert_eq!(outputs[2].trim(), "Rejected: keep the outputs");
    assert!(app.text("#asks").await.contains("edited by you"));
    assert_eq!(
        app.js("return document.querySelectorAll('.approve-bar').length")
            .await,
        json!(0)
    );
    maybe_shot(&display, "16-approvals-done").await;

    // The model read the rejection's reason on its next (4th) turn.
    let bodies = model.bodies();
    assert_eq!(bodies.len(), 4, "one request a turn");
    assert!(
        bodies[3].to_string().contains("keep the outputs"),
        "{}",
        bodies[3]
    );
    assert!(bodies[2].to_string().contains("print('edited')"));
    assert!(
        !bodies[2].to_string().contains("print('two')"),
        "the edit replaced the call"
    );

    // run.json keeps each decision with its ask.
    let session_id = app.session_id().await;
    let run: Value = serde_json::from_str(
        &std::fs::read_to_string(data.path().join(&session_id).join("run.json")).unwrap(),
    )
    .unwrap();
    let kept: Vec<(&str, &str)> = run["asks"][0]["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["tool"].as_str().unwrap(),
                a["resolution"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kept,
        [
            ("python", "approved"),
            ("python", "edited"),
            ("shell", "rejected")
        ]
    );
    assert_eq!(run["asks"][0]["approvals"][2]["reason"], "keep the outputs");

    // Reopened from the history, the session draws the same decisions and its mode.
    app.js("window.sandalyst.newSession(); return true").await;
    app.js(&format!(
        "window.sandalyst.openSession({session_id:?}); return true"
    ))
    .await;
    app.wait_js("return !!document.querySelector('.ask .cell-rejected')", 20)
        .await;
    assert_eq!(
        app.text(".ask .cell-rejected").await,
        "Rejected: keep the outputs"
    );
    assert_eq!(
        app.js("return document.querySelector('#approval').value")
            .await,
        json!("all")
    );
    maybe_shot(&display, "18-approvals-reopened").await;
    // The settings say the default of new sessions, in the same words.
    app.click("#open-settings").await;
    app.wait_js("return document.querySelector('#settings').open", 10)
        .await;
    let chosen = app
        .js("const s = document.querySelector('#settings-form').elements.approval; s.scrollIntoView({block: 'center'}); return s.selectedOptions[0].textContent")
        .await;
    assert!(
        chosen
            .as_str()
            .unwrap()
            .starts_with("Ask before every call"),
        "{chosen}"
    );
    maybe_shot(&display, "17-settings-approval").await;
    app.js("document.querySelector('#settings').close(); return true")
        .await;
    app.quit().await;
}

/// A protocol line of the offline analyst as it would read on screen (code that
/// prints one, `print("SANDALYST_ANSWER " + ...)`, is not one).
const MACHINE_LINE: &str =
    r"return /SANDALYST_(ANSWER|PROFILE|RESULT|VALIDATION) *[{\[]/.test(document.body.innerText)";

/// What a cell's outputs, the answers and the plots pane show must hold no
/// `SANDALYST_` machine line and the answers' Markdown must be HTML.
async fn answers_are_rich_and_clean(app: &App) {
    assert_eq!(
        app.js(MACHINE_LINE).await,
        json!(false),
        "{}",
        app.text("body").await
    );
    let plumbing = app
        .js("return [...document.querySelectorAll('.outputs, .assistant-text')].some(e => e.innerText.includes('SANDALYST_'))")
        .await;
    assert_eq!(plumbing, json!(false), "{}", app.text(".ask").await);
    // The offline analyst's answer: its table is a table, not pipes.
    app.wait_js(
        "return !!document.querySelector('.ask .assistant-text[data-rendered=\"final\"] table th')",
        30,
    )
    .await;
    let head = app.text(".ask .assistant-text table thead").await;
    assert!(head.contains("weekday"), "{head}");
    let first = app.js("return [...document.querySelector('.ask .assistant-text table').querySelectorAll('tbody tr td:first-child')].map(td => td.innerText)").await;
    let days = first.as_array().unwrap();
    assert!(days.len() >= 2, "{first}");
    assert!(
        days.iter().all(|d| d.as_str().unwrap().ends_with("day")),
        "a weekday per row: {first}"
    );
    let raw = app.js("return [...document.querySelectorAll('.assistant-text')].some(e => /\\|\\s*-{3}/.test(e.innerText))").await;
    assert_eq!(raw, json!(false), "no Markdown table syntax left on screen");
    // The scripted answer: emphasis, a list, highlighted code, an inert link.
    app.wait_js("const t = [...document.querySelectorAll('.assistant-text[data-rendered=\"final\"]')].pop(); return !!t && !!t.querySelector('strong') && t.querySelectorAll('li').length === 2 && !!t.querySelector('pre code .t-k') && !!t.querySelector('a[href]')", 30).await;
}

/// Answers as rich text and the plots pane, live and in a reopened session: the
/// offline analyst's weekday answer (a Markdown table, its protocol line in a cell's
/// output), then a scripted ask that displays a figure and saves a chart as PNG, SVG
/// and PDF. With SCREENSHOTS_DIR set, both are saved (`20-answer-markdown`,
/// `21-plots-pane`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_as_rich_text_and_the_plots_pane() {
    let display = Display::get();
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let csv = repo().join("examples/building_energy.csv");
    let app = App::start(&display, data.path(), &[]).await;
    app.add_file(&csv).await;
    app.ask(
        "Which weekday uses the most energy on average? Show a bar chart",
        "offline",
    )
    .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
        600,
    )
    .await;
    assert!(app.text(".ask .ending").await.starts_with("Finished"));
    // The analyst printed its machine line: the transcript keeps it for its planner.
    let session_id = app.session_id().await;
    let transcript =
        std::fs::read_to_string(data.path().join(&session_id).join("transcript.jsonl")).unwrap();
    assert!(
        transcript.contains("SANDALYST_ANSWER {"),
        "the planner's line is kept"
    );

    let steps = work.path().join("plots.json");
    let shown = "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title('shown by the cell')\nplt.show()";
    let saved = "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.bar(['a', 'b'], [2, 3])\nfor ext in ('png', 'svg', 'pdf'):\n    fig.savefig(f'output/trend.{ext}')\nplt.close(fig)\nprint('saved')";
    let answer = "**Two charts** are ready:\n\n- the figure above\n- `output/trend.png`, also as [SVG](https://example.org/trend.svg)\n\n```python\nimport matplotlib.pyplot as plt\n```\n";
    std::fs::write(
        &steps,
        json!([{"python": shown}, {"python": saved}, {"say": answer}]).to_string(),
    )
    .unwrap();
    app.ask("Plot it two ways.", &format!("replay:{}", steps.display()))
        .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 2",
        300,
    )
    .await;
    answers_are_rich_and_clean(&app).await;
    app.js("document.querySelector('.ask .assistant-text table').closest('.assistant-text').scrollIntoView({block: 'center'}); return true").await;
    maybe_shot(&display, "20-answer-markdown").await;

    // The images the page shows: saved charts (not their SVG and PDF twins) and the
    // figures cells displayed, newest ask first.
    let expected = "const asks = [...document.querySelectorAll('.ask')].reverse();
        return asks.flatMap(a => [...[...a.querySelectorAll('.artifact')].map(c => 'outputs/' + c.dataset.path).filter(p => /\\.(png|jpe?g|gif|webp)$/.test(p))].reverse()
            .concat([...a.querySelectorAll('.cell-image')].map(i => decodeURIComponent(new URL(i.src).pathname.split('/').slice(2).join('/'))).reverse()))";
    let check_pane = |label: &'static str| {
        let app = &app;
        async move {
            app.click("#plots-btn").await;
            app.wait_js(
                "return document.querySelectorAll('#preview .plot-thumb').length > 0",
                20,
            )
            .await;
            let want = app.js(expected).await;
            let got = app.js("return [...document.querySelectorAll('#preview .plot-thumb')].map(b => b.dataset.path)").await;
            let want_v = want.as_array().unwrap();
            assert!(want_v.len() >= 3, "{label}: {want}");
            // Every image is listed once; ask 2's come first, its saved chart newest.
            let mut a: Vec<String> = want_v
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            let mut b: Vec<String> = got
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            assert_eq!(b[0], "outputs/trend.png", "{label}: {got}");
            assert!(b[1].starts_with("figures/"), "{label}: {got}");
            a.sort();
            b.sort();
            assert_eq!(a, b, "{label}");
            app.wait_js("return [...document.querySelectorAll('#preview .plot-thumb img')].every(i => i.complete && i.naturalWidth > 0)", 30).await;
            // The saved chart offers its SVG and PDF.
            let saves = app.js("return [...document.querySelectorAll('#preview .plot-view .plot-save')].map(b => b.dataset.format)").await;
            assert_eq!(saves, json!(["png", "svg", "pdf"]), "{label}");
            // A click on each plot opens the cell that made it.
            let n = got.as_array().unwrap().len();
            for i in 0..n {
                app.js(&format!("document.querySelectorAll('.cell.flash').forEach(c => c.classList.remove('flash')); document.querySelectorAll('#preview .plot-thumb')[{i}].click(); return true")).await;
                let r = app.js(&format!("const b = document.querySelectorAll('#preview .plot-thumb')[{i}];
                    const cell = document.querySelector(`.ask[data-ask=\"${{b.dataset.ask}}\"] details.cell[data-call=\"${{b.dataset.call}}\"]`);
                    const flashed = [...document.querySelectorAll('details.cell.flash')];
                    const r = cell && cell.getBoundingClientRect(); const c = document.querySelector('#conversation').getBoundingClientRect();
                    return {{path: b.dataset.path, found: !!cell, only: flashed.length === 1 && flashed[0] === cell, open: !!cell && cell.open,
                            visible: !!r && r.bottom > c.top && r.top < c.bottom, code: cell ? cell.querySelector('.code').innerText : ''}}")).await;
                assert_eq!(r["found"], json!(true), "{label}: {r}");
                assert_eq!(r["only"], json!(true), "{label}: {r}");
                assert_eq!(r["open"], json!(true), "{label}: {r}");
                assert_eq!(r["visible"], json!(true), "{label}: {r}");
                let path = r["path"].as_str().unwrap();
                let code = r["code"].as_str().unwrap();
                if path == "outputs/trend.png" {
                    assert!(code.contains("savefig"), "{label}: {r}");
                } else if path.starts_with("figures/")
                    && path.contains(&format!(
                        "{}-",
                        app.js("return [...document.querySelectorAll('.ask')][1].dataset.ask")
                            .await
                            .as_str()
                            .unwrap()
                    ))
                {
                    assert!(code.contains("plt.show()"), "{label}: {r}");
                } else if let Some(name) = path.strip_prefix("outputs/") {
                    // An offline chart: the cell the artifact card says made it.
                    let by = app
                        .text(&format!(".artifact[data-path=\"{name}\"] .made-by"))
                        .await;
                    let number = by.trim_start_matches("made by cell ").to_string();
                    let cell_no = app.js(&format!("const b = document.querySelectorAll('#preview .plot-thumb')[{i}]; return document.querySelector(`.ask[data-ask=\"${{b.dataset.ask}}\"] details.cell[data-call=\"${{b.dataset.call}}\"] summary`).innerText")).await;
                    assert!(
                        cell_no
                            .as_str()
                            .unwrap()
                            .contains(&format!("cell {number}")),
                        "{label}: {r} {by} {cell_no}"
                    );
                }
            }
        }
    };
    check_pane("live").await;
    // Saved where the dialog would say: the SVG twin, through the pane's command.
    let dest = work.path().join("trend-copy.svg");
    let saved = app
        .invoke(
            "save_file",
            json!({"sessionId": session_id, "path": "outputs/trend.svg", "dest": dest}),
        )
        .await;
    assert_eq!(saved, json!(dest.to_str().unwrap()));
    assert!(std::fs::read_to_string(&dest).unwrap().contains("<svg"));
    // Copy image: the PNG goes to the clipboard.
    // Real clicks: the clipboard takes images only from a person's gesture.
    app.click("#preview .plot-thumb").await;
    app.click("#preview .plot-copy").await;
    app.wait_js("const t = document.querySelector('#toast'); return !t.hidden && /Copied|clipboard/.test(t.innerText)", 15).await;
    let said = app.text("#toast").await;
    assert!(said.starts_with("Copied trend.png"), "{said}");
    maybe_shot(&display, "21-plots-pane").await;

    // Reopened: the same answers, the same plots.
    app.click("#new-session").await;
    app.js(&format!(
        "window.sandalyst.openSession({session_id:?}); return true"
    ))
    .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 2",
        30,
    )
    .await;
    answers_are_rich_and_clean(&app).await;
    check_pane("reopened").await;
    app.quit().await;
}

/// The rows of the explorer's test table, computed here independently of the core:
/// (id, region, units or None, day).
fn explorer_rows() -> Vec<(u32, &'static str, Option<u32>, String)> {
    let regions = ["Norte", "Sur", "Centro", "Este"];
    (1..=1000u32)
        .map(|i| {
            let units = (i % 10 != 0).then_some((i * 7) % 31);
            let day = format!("2024-{:02}-{:02}", 1 + i % 12, 1 + i % 28);
            (i, regions[(i % 4) as usize], units, day)
        })
        .collect()
}

/// Open input `name`'s preview and wait for the explorer's grid.
async fn open_input(app: &App, name: &str) {
    app.js(&format!(
        "[...document.querySelectorAll('#file-list li')].find(li => li.innerText.includes({name:?})).querySelector('.file-open').click(); return true"
    ))
    .await;
    app.wait_js(
        &format!("return document.querySelector('#preview-title').innerText.startsWith({name:?}) && document.querySelectorAll('#preview .explorer .vtable-table tbody tr td:not(.rownum)').length > 1 && !document.querySelector('#preview .vtable.busy')"),
        60,
    )
    .await;
}

/// The data explorer on a generated table with known counts: a column's summary
/// (missing share, distinct count, range), a range filter and the share of rows it
/// keeps, a two-column sort, "Ask about this view", and Parquet and JSON previews.
/// With SCREENSHOTS_DIR set, saves `22-explorer-summary` and `23-explorer-filter`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_explorer_profiles_filters_and_sorts_a_table() {
    let display = Display::get();
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let rows = explorer_rows();
    let mut csv = String::from("id,region,units,day\n");
    for (id, region, units, day) in &rows {
        let u = units.map(|u| u.to_string()).unwrap_or_default();
        csv.push_str(&format!("{id},{region},{u},{day}\n"));
    }
    let csv_path = work.path().join("orders.csv");
    std::fs::write(&csv_path, csv).unwrap();
    let records: Vec<Value> = rows
        .iter()
        .take(25)
        .map(|(id, region, units, day)| json!({"id": id, "region": region, "units": units, "day": day}))
        .collect();
    let json_path = work.path().join("orders.json");
    std::fs::write(&json_path, Value::Array(records).to_string()).unwrap();
    let parquet_path = work.path().join("orders.parquet");
    write_parquet(&parquet_path, &rows[..40]);

    let app = App::start(&display, data.path(), &[]).await;
    for f in [&csv_path, &json_path, &parquet_path] {
        app.add_file(f).await;
    }
    open_input(&app, "orders.csv").await;
    let status = app.text("#preview .explorer .kept").await;
    assert!(status.contains("1,000 rows × 4 columns"), "{status}");
    // The explorer wants room: the preview widens on request.
    app.click("#preview-wide").await;
    app.wait_js(
        "return document.body.classList.contains('wide-preview')",
        10,
    )
    .await;

    // units: 100 missing of 1,000; its distinct values and range, computed here.
    let present: Vec<u32> = rows.iter().filter_map(|r| r.2).collect();
    let mut distinct = present.clone();
    distinct.sort();
    distinct.dedup();
    let (lo, hi) = (distinct[0], *distinct.last().unwrap());
    app.click("#preview .explorer-bar .toggle").await;
    app.wait_js(
        "return document.querySelectorAll('#preview .profile-row .profile[data-kind]').length === 4",
        60,
    )
    .await;
    maybe_shot(&display, "22-explorer-summary").await;
    app.js("document.querySelectorAll('#preview .vtable-table thead tr:first-child th')[3].querySelector('.th-menu').click(); return true").await;
    app.wait_js(
        "return !!document.querySelector('#preview .col-panel .stat-grid')",
        30,
    )
    .await;
    let stats = app.text("#preview .col-panel .stat-grid").await;
    maybe_shot(&display, "24-explorer-column").await;
    for want in [
        "integer".to_string(),
        "100 (10.0%)".to_string(),
        format!("Distinct\n{}", distinct.len()),
        format!("Min\n{lo}"),
        format!("Max\n{hi}"),
    ] {
        assert!(stats.contains(&want), "{want:?} not in {stats:?}");
    }

    // Keep units 10 – 20: the count and share the bar shows are the ones counted here.
    let kept = present.iter().filter(|u| (10..=20).contains(*u)).count();
    app.js("const p = document.querySelector('#preview .col-panel'); const s = p.querySelector('select'); s.value = 'range'; s.dispatchEvent(new Event('change')); p.querySelector('input[name=min]').value = '10'; p.querySelector('input[name=max]').value = '20'; p.querySelector('.col-actions .primary').click(); return true").await;
    let want = format!(
        "{} of 1,000 rows ({:.1}%)",
        kept,
        100.0 * kept as f64 / 1000.0
    );
    app.wait_js(
        &format!("return document.querySelector('#preview .explorer .kept').innerText.includes({want:?}) && !document.querySelector('#preview .vtable.busy')"),
        60,
    )
    .await;
    let chip = app.text("#preview .chip").await;
    assert!(chip.contains("units 10 – 20"), "{chip}");
    maybe_shot(&display, "23-explorer-filter").await;

    // Sort by region, then units descending (Shift+click twice): the first rows are
    // the ones ordered here.
    let header = |j: usize, shift: bool| {
        format!("document.querySelectorAll('#preview .vtable-table thead tr:first-child th')[{j}].dispatchEvent(new MouseEvent('click', {{bubbles: true, shiftKey: {shift}}})); return true")
    };
    app.js(&header(2, false)).await;
    app.wait_js("return !document.querySelector('#preview .vtable.busy') && document.querySelector('#preview .explorer .kept').innerText.includes('sorted by region')", 60).await;
    app.js(&header(3, true)).await;
    app.wait_js("return !document.querySelector('#preview .vtable.busy') && document.querySelector('#preview .explorer .kept').innerText.includes('units ↑')", 60).await;
    app.js(&header(3, true)).await;
    app.wait_js("return !document.querySelector('#preview .vtable.busy') && document.querySelector('#preview .explorer .kept').innerText.includes('units ↓')", 60).await;
    let mut expected: Vec<_> = rows
        .iter()
        .filter(|r| r.2.is_some_and(|u| (10..=20).contains(&u)))
        .collect();
    expected.sort_by(|a, b| a.1.cmp(b.1).then(b.2.cmp(&a.2)));
    let got = app.js("return [...document.querySelectorAll('#preview .vtable-table tbody tr')].slice(0, 5).map(tr => [...tr.querySelectorAll('td')].map(td => td.dataset.exact ?? td.innerText))").await;
    for (i, r) in expected.iter().take(5).enumerate() {
        let row = &got[i];
        assert_eq!(
            (row[1].as_str(), row[2].as_str(), row[3].as_str()),
            (
                Some(r.0.to_string().as_str()),
                Some(r.1),
                Some(r.2.unwrap().to_string().as_str())
            ),
            "row {i}: {got}"
        );
    }

    // Save view as CSV or Parquet: the toolbar offers both; each command writes every
    // kept row in the view's order (the dialog is native, so the test names the
    // destination).
    app.wait_js("const b = [...document.querySelectorAll('#preview .explorer-bar .save-as button')].map(b => b.getAttribute('aria-label') + '=' + b.innerText); return b.join() === 'Save view as CSV=CSV,Save view as Parquet=Parquet'", 10).await;
    let session_id = app.session_id().await;
    let dest = work.path().join("orders_view.csv");
    let view = json!({"filters": [{"column": 2, "op": "range", "min": "10", "max": "20"}],
                      "sort": [{"column": 1}, {"column": 2, "descending": true}]});
    let saved = app
        .invoke(
            "explore_save",
            json!({"sessionId": session_id, "path": "orders.csv", "input": true, "view": view, "dest": dest, "format": "csv"}),
        )
        .await;
    assert_eq!(saved, json!(expected.len()), "{saved}");
    let mut want = String::from("id,region,units,day\n");
    for (id, region, units, day) in &expected {
        want.push_str(&format!("{id},{region},{},{day}\n", units.unwrap()));
    }
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), want);
    // As Parquet: the same rows, with the ids and units as integers and the days as
    // dates (the CSV's text, typed by the explorer's column kinds).
    let dest = work.path().join("orders_view.parquet");
    let saved = app
        .invoke(
            "explore_save",
            json!({"sessionId": session_id, "path": "orders.csv", "input": true, "view": view, "dest": dest, "format": "parquet"}),
        )
        .await;
    assert_eq!(saved, json!(expected.len()), "{saved}");
    {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        use parquet::record::Field;
        let reader = SerializedFileReader::new(std::fs::File::open(&dest).unwrap()).unwrap();
        let got: Vec<Vec<(String, Field)>> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap().into_columns())
            .collect();
        assert_eq!(got.len(), expected.len());
        for (row, (id, region, units, day)) in got.iter().zip(&expected) {
            let names: Vec<&str> = row.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, ["id", "region", "units", "day"]);
            assert_eq!(row[0].1, Field::Long(i64::from(*id)));
            assert_eq!(row[1].1, Field::Str(region.to_string()));
            assert_eq!(row[2].1, Field::Long(i64::from(units.unwrap())));
            assert!(matches!(row[3].1, Field::Date(_)), "{:?}", row[3].1);
            assert_eq!(row[3].1.to_string(), *day);
        }
    }

    // Ask about this view: a sentence and pandas code in the ask box.
    app.js("[...document.querySelectorAll('#preview .explorer-bar button')].find(b => b.innerText === 'Ask about this view').click(); return true").await;
    app.wait_js(
        "return document.querySelector('#prompt').value.includes('```python')",
        30,
    )
    .await;
    let prompt = app
        .js("return document.querySelector('#prompt').value")
        .await;
    let prompt = prompt.as_str().unwrap();
    assert!(
        prompt.contains("read_csv") && prompt.contains("units"),
        "{prompt}"
    );
    assert!(prompt.contains(&format!("{kept} of 1,000")), "{prompt}");

    // Parquet and JSON open in the same explorer.
    open_input(&app, "orders.parquet").await;
    assert!(app
        .text("#preview .explorer .kept")
        .await
        .contains("40 rows"));
    let first = app.text("#preview .vtable-table tbody tr").await;
    assert!(first.contains("Sur"), "{first}");
    open_input(&app, "orders.json").await;
    assert!(app
        .text("#preview .explorer .kept")
        .await
        .contains("25 rows"));
    app.quit().await;
}

/// The first rows of [`explorer_rows`] as a Parquet file (the parquet crate's writer).
fn write_parquet(path: &Path, rows: &[(u32, &'static str, Option<u32>, String)]) {
    use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    let schema = parse_message_type(
        "message orders { required int64 id; required binary region (UTF8); optional int64 units; required binary day (UTF8); }",
    )
    .unwrap();
    let file = std::fs::File::create(path).unwrap();
    let props = std::sync::Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(file, std::sync::Arc::new(schema), props).unwrap();
    let mut g = w.next_row_group().unwrap();
    let ids: Vec<i64> = rows.iter().map(|r| i64::from(r.0)).collect();
    let regions: Vec<ByteArray> = rows.iter().map(|r| ByteArray::from(r.1)).collect();
    let units: Vec<i64> = rows.iter().filter_map(|r| r.2).map(i64::from).collect();
    let levels: Vec<i16> = rows.iter().map(|r| i16::from(r.2.is_some())).collect();
    let days: Vec<ByteArray> = rows.iter().map(|r| ByteArray::from(r.3.as_str())).collect();
    let mut c = g.next_column().unwrap().unwrap();
    c.typed::<Int64Type>()
        .write_batch(&ids, None, None)
        .unwrap();
    c.close().unwrap();
    let mut c = g.next_column().unwrap().unwrap();
    c.typed::<ByteArrayType>()
        .write_batch(&regions, None, None)
        .unwrap();
    c.close().unwrap();
    let mut c = g.next_column().unwrap().unwrap();
    c.typed::<Int64Type>()
        .write_batch(&units, Some(&levels), None)
        .unwrap();
    c.close().unwrap();
    let mut c = g.next_column().unwrap().unwrap();
    c.typed::<ByteArrayType>()
        .write_batch(&days, None, None)
        .unwrap();
    c.close().unwrap();
    g.close().unwrap();
    w.close().unwrap();
}

/// A local model that gets stuck, in the window: the double is a server on this machine,
/// so `auto` moves to schema steps after its first reply (no native call); six steps
/// fail without writing the chart the task names, the model starts afresh (a note in
/// the ask that says so), and the next step writes the chart. The model's request
/// after the fresh start holds none of the failed cells. With SCREENSHOTS_DIR set, the
/// ask is saved there (`31-fresh-start`; GTK_THEME=Adwaita:dark for the dark theme).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_local_model_starts_afresh_in_the_window() {
    let display = Display::get();
    let data = tempfile::tempdir().unwrap();
    let step = |thought: &str, lines: &[&str]| {
        chat_reply(
            &json!({"thought": thought, "action": "python", "code": lines}).to_string(),
            None,
        )
    };
    let mut replies = vec![chat_reply("I will plot the numbers.", None)];
    for n in 1..=6 {
        let line = format!("values = [1, 3, 2]; plot_{n}(values)");
        replies.push(step("Plot the values.", &[line.as_str()]));
    }
    replies.push(step(
        "Write the chart.",
        &[
            "import matplotlib.pyplot as plt",
            "plt.plot([1, 3, 2])",
            "plt.savefig('output/chart.png')",
        ],
    ));
    replies.push(chat_reply(
        &json!({"thought": "Done.", "action": "final_answer",
                "answer": "The chart of the three values is in output/chart.png."})
        .to_string(),
        None,
    ));
    let model = ChatDouble::start(replies);
    std::fs::write(
        data.path().join("desktop-settings.json"),
        json!({"provider": "openai-compatible", "model": "scripted", "base_url": model.base})
            .to_string(),
    )
    .unwrap();
    let app = App::start(&display, data.path(), &[]).await;
    app.ask(
        "Plot the values 1, 3, 2 as a line and save it to output/chart.png.",
        "openai-compatible:scripted",
    )
    .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
        300,
    )
    .await;
    let ending = app.text(".ask .ending").await;
    assert!(
        ending.starts_with("Finished"),
        "the ask ended as {ending:?}"
    );
    let notes = app
        .js("return [...document.querySelectorAll('.ask .app-note')].map(e => e.innerText).join('\\n')")
        .await
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        notes.contains(
            "6 turns wrote none of the missing files, so the model starts afresh (attempt 2)"
        ),
        "{notes}"
    );
    maybe_shot(&display, "31-fresh-start").await;
    // The first reply, asked again in schema mode, then one request a step: the sixth
    // step's request still holds the fifth's failed cell, the seventh none of them.
    let bodies = model.bodies();
    assert_eq!(bodies.len(), 9, "one request a turn");
    assert!(bodies[6].to_string().contains("plot_5(values)"));
    let after = bodies[7].to_string();
    assert!(after.contains("A fresh start"), "{after}");
    assert!(
        (1..=6).all(|n| !after.contains(&format!("plot_{n}(values)"))),
        "the failed cells are out of the model's view: {after}"
    );
}

/// [`shot`] when SCREENSHOTS_DIR is set (a test run otherwise writes no pictures).
async fn maybe_shot(display: &Display, name: &str) {
    if std::env::var_os("SCREENSHOTS_DIR").is_some() {
        shot(display, name).await;
    }
}

/// Save the window as `docs/screenshots/<name>.png` (or under SCREENSHOTS_DIR), taken
/// from the X display (WebKitWebDriver's own screenshot fails under Xvfb).
async fn shot(display: &Display, name: &str) {
    // The pointer to a corner, where it hovers nothing: left at the centre, a button's
    // tooltip stood over every screenshot.
    let _ = Command::new("xdotool")
        .env("DISPLAY", &display.name)
        .args(["mousemove", "1279", "799"])
        .status();
    // A frame drawn right after a change may not be on screen yet.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let dir = std::env::var_os("SCREENSHOTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("docs/screenshots"));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{name}.png"));
    let ok = Command::new("import")
        .args([
            "-display",
            &display.name,
            "-window",
            "root",
            "-crop",
            "1280x800+0+0",
            "+repage",
        ])
        .arg(&out)
        .status()
        .expect("ImageMagick's import is needed for screenshots");
    assert!(ok.success(), "import failed for {name}");
}

/// The main states of the window, for docs/screenshots (run by scripts/screenshots.sh).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes docs/screenshots; run by scripts/screenshots.sh"]
async fn screenshots() {
    let display = Display::get();
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let csv = repo().join("examples/building_energy.csv");

    let app = App::start(&display, data.path(), &[]).await;
    shot(&display, "01-empty").await;

    app.add_file(&csv).await;
    // The example first: the open preview covers the composer's row.
    app.click("#example").await;
    app.click("#file-list .file-open").await;
    app.wait_js(
        "return document.querySelectorAll('#preview .vtable-table tbody tr').length > 5",
        30,
    )
    .await;
    shot(&display, "02-files-added").await;
    app.click("#preview-close").await;

    app.click("#run").await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
        600,
    )
    .await;
    app.wait_js("const i = document.querySelector('.artifact[data-path=\"energy_anomalies.png\"] img'); return !!i && i.complete && i.naturalWidth > 0", 30).await;
    app.js("document.querySelector('.artifact[data-path=\"energy_anomalies.png\"]').scrollIntoView({block: 'start'}); return true").await;
    shot(&display, "04-finished-chart").await;
    app.js("document.querySelector('.artifact[data-path=\"anomalies.csv\"]').scrollIntoView({block: 'start'}); return true").await;
    shot(&display, "05-finished-table").await;
    app.js("document.querySelector('.artifact[data-path=\"anomaly_report.md\"]').scrollIntoView({block: 'start'}); return true").await;
    shot(&display, "06-finished-report").await;

    // A follow-up that runs for a while, to show a live cell.
    let slow = work.path().join("slow.json");
    let code = "import time\nimport pandas as pd\ndf = pd.read_csv('input/building_energy.csv', parse_dates=['timestamp'])\nprint(f'{len(df):,} rows, {df.shape[1]} columns', flush=True)\nfor day, g in df.groupby(df.timestamp.dt.day_name()):\n    print(f'{day:<10} mean {g.energy_kwh.mean():7.1f} kWh', flush=True)\n    time.sleep(1.5)\n";
    std::fs::write(
        &slow,
        serde_json::to_string(
            &json!([{"python": code}, {"say": "Mean energy by weekday is printed above."}]),
        )
        .unwrap(),
    )
    .unwrap();
    app.ask(
        "Now show the mean energy use by weekday.",
        &format!("replay:{}", slow.display()),
    )
    .await;
    app.wait_js(
        "return [...document.querySelectorAll('.ask')].pop().innerText.includes('Monday')",
        120,
    )
    .await;
    app.js("const c = document.querySelector('#conversation'); c.scrollTop = c.scrollHeight; return true").await;
    shot(&display, "03-running").await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 2",
        120,
    )
    .await;

    // An ask that ends incomplete: code in words (nothing ran), then an empty chart.
    let hollow = work.path().join("hollow.json");
    std::fs::write(
        &hollow,
        serde_json::to_string(&json!([
            {"say": "Here is the code:\n```python\nimport matplotlib.pyplot as plt\n```"},
            {"python": "open('output/chart.png', 'w').close()"},
            {"say": "The chart is saved."},
            {"say": "The chart is saved, really."},
            {"say": "Done."}
        ]))
        .unwrap(),
    )
    .unwrap();
    app.ask(
        "Plot energy by weekday to output/chart.png.",
        &format!("replay:{}", hollow.display()),
    )
    .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 3",
        120,
    )
    .await;
    app.wait_js("return !!document.querySelector('.artifact.invalid')", 30)
        .await;
    let ending = app
        .js("return [...document.querySelectorAll('.ask .ending')].pop().innerText")
        .await;
    assert_eq!(
        ending.as_str(),
        Some("Incomplete: output/chart.png is empty (0 bytes)")
    );
    app.js("const c = document.querySelector('#conversation'); c.scrollTop = c.scrollHeight; return true").await;
    shot(&display, "26-incomplete").await;

    // A second session, for the history.
    app.click("#new-session").await;
    let chiller = repo().join("tests/fixtures/chiller_plant.csv");
    app.add_file(&chiller).await;
    app.ask(
        "Find unusual readings in the chiller plant log and explain them.",
        "offline",
    )
    .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
        600,
    )
    .await;
    app.wait_js(
        "return document.querySelectorAll('.h-item').length >= 2",
        30,
    )
    .await;
    shot(&display, "07-history").await;

    app.click("#open-settings").await;
    app.wait_js("return document.querySelector('#settings').open && !document.querySelector('#image-status').innerText.includes('Checking')", 30).await;
    shot(&display, "08-settings").await;
    app.js("document.querySelector('#settings').close(); return true")
        .await;
    app.click("#open-help").await;
    app.wait_js("return document.querySelector('#help').open", 10)
        .await;
    shot(&display, "10-help").await;
    app.js("document.querySelector('#help').close(); return true")
        .await;

    // A dropped folder whose link leaves it: the typed staging notes, worded by the page.
    let folder = work.path().join("meter-exports");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("week1.csv"),
        "timestamp,energy_kwh\n2024-05-06 00:00,45.9\n",
    )
    .unwrap();
    std::fs::write(work.path().join("notes.csv"), "a\n1\n").unwrap();
    std::os::unix::fs::symlink(work.path().join("notes.csv"), folder.join("notes.csv")).unwrap();
    std::os::unix::fs::symlink(folder.join("week1.csv"), folder.join("latest.csv")).unwrap();
    app.add_file(&folder).await;
    app.wait_js(
        "const t = document.querySelector('#toast'); return !t.hidden && t.innerText.includes('Left out')",
        30,
    )
    .await;
    shot(&display, "29-folder-notes").await;
    app.quit().await;

    let app = App::start(&display, data.path(), &[("GTK_THEME", "Adwaita:dark")]).await;
    app.wait_js(
        "return document.querySelectorAll('.h-item').length >= 2",
        30,
    )
    .await;
    app.js("document.querySelectorAll('.h-item')[1].querySelector('.h-open').click(); return true")
        .await;
    app.wait_js("const i = document.querySelector('.artifact[data-path=\"energy_anomalies.png\"] img'); return !!i && i.complete && i.naturalWidth > 0", 30).await;
    app.js("document.querySelector('.artifact[data-path=\"energy_anomalies.png\"]').scrollIntoView({block: 'start'}); return true").await;
    shot(&display, "09-dark").await;

    // A cell that printed 100,000 lines: its last lines, and how many are not shown.
    let long = work.path().join("long.json");
    std::fs::write(
        &long,
        serde_json::to_string(&json!([
            {"python": "for i in range(100_000):\n    print(f'row {i:6d}: value {i * 0.37:10.2f}')"},
            {"say": "Printed 100,000 rows."}
        ]))
        .unwrap(),
    )
    .unwrap();
    app.ask("Print every row.", &format!("replay:{}", long.display()))
        .await;
    app.wait_js("return !![...document.querySelectorAll('.ask')].pop().querySelector('.out-more') && [...document.querySelectorAll('.ask .ending')].pop().innerText !== ''", 120).await;
    app.js("[...document.querySelectorAll('.ask')].pop().querySelector('.cell').scrollIntoView({block: 'start'}); return true").await;
    shot(&display, "11-long-output-dark").await;

    // The settings' engine and image section.
    app.click("#open-settings").await;
    app.wait_js("return document.querySelector('#settings').open && document.querySelector('#engine-line').innerText !== ''", 30).await;
    app.js(
        "document.querySelector('#image-status').scrollIntoView({block: 'center'}); return true",
    )
    .await;
    shot(&display, "12-settings-engine-dark").await;

    // The network allowlist: the hosts field, its preset and what the mode exposes.
    app.js(
        "const f = document.querySelector('#settings-form'); f.elements.network_mode.value = 'allow'; \
         f.elements.network_mode.dispatchEvent(new Event('change')); \
         document.querySelector('#network-presets button').click(); \
         document.querySelector('#network-allow').scrollIntoView({block: 'center'}); return true",
    )
    .await;
    app.wait_js("return !document.querySelector('#network-allow').hidden && document.querySelector('#settings-form').elements.network_hosts.value.includes('@python-packages') && document.querySelector('#network-exposure').innerText.includes('listed hosts')", 10).await;
    shot(&display, "19-settings-network-dark").await;
    app.quit().await;
}

/// The app's processes (the one running [`app_path`] and all its descendants: WebKit's web and
/// network processes) with their PSS in KB, from /proc.
fn app_memory() -> Vec<(String, u64)> {
    let app = std::fs::canonicalize(app_path()).unwrap();
    let mut parent = Vec::new();
    let mut root = None;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The parent is the second field after the parenthesised command name.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let ppid: u32 = after.split(' ').nth(1).unwrap().parse().unwrap();
        parent.push((pid, ppid));
        if std::fs::read_link(format!("/proc/{pid}/exe"))
            .ok()
            .as_deref()
            == Some(app.as_path())
        {
            root = Some(pid);
        }
    }
    let root = root.expect("the app is running");
    let mut mine = vec![root];
    let mut i = 0;
    while i < mine.len() {
        let p = mine[i];
        mine.extend(parent.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    mine.iter()
        .filter_map(|pid| {
            let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
            let kb = rollup
                .lines()
                .find_map(|l| l.strip_prefix("Pss:"))?
                .trim()
                .trim_end_matches(" kB")
                .parse()
                .ok()?;
            Some((name.trim().to_string(), kb))
        })
        .collect()
}

/// Percentiles (50, 95, max) of a list of milliseconds.
fn spread(mut ms: Vec<f64>) -> (f64, f64, f64) {
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95), at(1.0))
}

/// Script round trips to the page (WebDriver -> WebKit's main thread -> back) every
/// 50 ms for `secs`, in milliseconds: how long the window takes to answer.
async fn round_trips(app: &App, secs: f64) -> Vec<f64> {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut out = Vec::new();
    while Instant::now() < end {
        let t = Instant::now();
        app.js("return 1").await;
        out.push(t.elapsed().as_secs_f64() * 1000.0);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    out
}

/// The benchmark of BENCHMARKS.md "window answers input while a cell prints 10 MB":
/// script round trips and animation-frame gaps, idle (the same-run baseline) and while
/// a cell prints 10 MB to stdout. Prints a table; asserts nothing about the times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark; run by scripts/bench-desktop.sh"]
async fn responsiveness_while_a_cell_prints() {
    let display = Display::get();
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let mb: usize = std::env::var("BENCH_PRINT_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let app = App::start(&display, data.path(), &[]).await;
    app.add_file(&repo().join("examples/building_energy.csv"))
        .await;
    // Memory with one finished session open: the reference case, its chart, table and
    // report on screen, then 10 s idle.
    app.click("#example").await;
    app.click("#run").await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
        600,
    )
    .await;
    app.wait_js("const i = document.querySelector('.artifact[data-path=\"energy_anomalies.png\"] img'); return !!i && i.complete && i.naturalWidth > 0", 30).await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let memory = app_memory();

    // Frame gaps, from the page's own animation frames.
    app.js(
        "window.__frames = []; let last = performance.now();
         const tick = (t) => { window.__frames.push(t - last); last = t; requestAnimationFrame(tick); };
         requestAnimationFrame(tick); return true",
    )
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    app.js("window.__frames = []; return true").await;
    let idle = round_trips(&app, 5.0).await;
    let idle_frames: Vec<f64> = serde_json::from_value(
        app.js("const f = window.__frames; window.__frames = []; return f")
            .await,
    )
    .unwrap();

    // 100-byte lines in 64 KB writes, `mb` MB in about 10 s: to a file in the sandbox
    // (the same work, nothing for the window to show: the machine's share), then to
    // stdout (the window shows it live).
    let to_file = measure_cell(&app, work.path(), mb, "open('scratch.txt', 'w')", 2).await;
    let to_stdout = measure_cell(&app, work.path(), mb, "sys.stdout", 3).await;
    app.quit().await;

    println!("\nidle memory with the reference session open (PSS, MB):");
    let total: u64 = memory.iter().map(|(_, kb)| kb).sum();
    for (name, kb) in &memory {
        println!("  {name}: {}", kb / 1024);
    }
    println!("  all: {}", total / 1024);
    println!("\n| while | script round trip p50 / p95 / max (ms) | frame gap p50 / p95 / max (ms) | frames > 50 ms |");
    println!("|---|---|---|---|");
    for (what, rtt, frames) in [
        ("idle (baseline)".to_string(), idle, idle_frames),
        (
            format!("a cell writing {mb} MB to a file (baseline)"),
            to_file.0,
            to_file.1,
        ),
        (format!("a cell printing {mb} MB"), to_stdout.0, to_stdout.1),
    ] {
        let long = frames.iter().filter(|&&g| g > 50.0).count();
        let (n, nf) = (rtt.len(), frames.len());
        let (r50, r95, rmax) = spread(rtt);
        let (f50, f95, fmax) = spread(frames);
        println!("| {what}, {n} samples | {r50:.1} / {r95:.1} / {rmax:.1} | {f50:.1} / {f95:.1} / {fmax:.1} | {long} of {nf} |");
    }
}

/// Ask a cell that writes `mb` MB of 100-byte lines to `sink` (in 64 KB writes, over
/// about 10 s) and measure the window until the ask (the `nth` of the session) ends:
/// script round trips and frame gaps, in milliseconds.
async fn measure_cell(
    app: &App,
    work: &Path,
    mb: usize,
    sink: &str,
    nth: usize,
) -> (Vec<f64>, Vec<f64>) {
    let code = format!(
        "import sys, time\nout = {sink}\nline = 'x' * 99 + '\\n'\nblock = line * 655\nfor i in range({n}):\n    out.write(block)\n    out.flush()\n    time.sleep({pause})\nprint('done', flush=True)\n",
        n = mb * 16,
        pause = 10.0 / (mb * 16) as f64,
    );
    let script = work.join(format!("cell{nth}.json"));
    std::fs::write(
        &script,
        serde_json::to_string(&json!([{"python": code}, {"say": "Written."}])).unwrap(),
    )
    .unwrap();
    app.ask("Write a lot.", &format!("replay:{}", script.display()))
        .await;
    app.wait_js(
        &format!("return document.querySelectorAll('.ask').length >= {nth} && [...document.querySelectorAll('.ask')].pop().querySelectorAll('.cell').length > 0"),
        120,
    )
    .await;
    app.js("window.__frames = []; return true").await;
    let started = Instant::now();
    let mut rtt = Vec::new();
    loop {
        rtt.extend(round_trips(app, 1.0).await);
        let ended =
            format!("return document.querySelectorAll('.ask .ending:not(:empty)').length >= {nth}");
        if app.js(&ended).await == Value::Bool(true) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the cell did not end"
        );
    }
    let frames = serde_json::from_value(app.js("return window.__frames").await).unwrap();
    (rtt, frames)
}
