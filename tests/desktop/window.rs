//! The window as a desktop app's: it comes back where, as big and as maximised as it
//! was left; the native menu's keys (real X key presses, through GTK's accelerators)
//! do what the page's buttons do; and at 1024x768 and 1280x800, with the data
//! explorer or the plots pane open, in the light and the dark theme, every control
//! on screen is inside the window and not covered.

use super::*;

/// The app's X window (the one titled Sandalyst), waiting for it to be mapped.
fn app_window(display: &Display) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = Command::new("xdotool")
            .args(["search", "--onlyvisible", "--name", "Sandalyst"])
            .env("DISPLAY", &display.name)
            .output()
            .expect("xdotool is not installed: run scripts/setup-desktop.sh");
        let ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        if let Some(id) = ids.last() {
            return id.clone();
        }
        assert!(Instant::now() < deadline, "no window titled Sandalyst");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn xdotool(display: &Display, args: &[&str]) {
    let ok = Command::new("timeout")
        .arg("10")
        .arg("xdotool")
        .args(args)
        .env("DISPLAY", &display.name)
        .status()
        .unwrap();
    assert!(ok.success(), "xdotool {args:?} failed");
}

/// Press `keys` (xdotool's names, e.g. `ctrl+shift+p`) on the app's window, as a
/// person at the keyboard does: the focus on the window, then the X server's own key
/// events (XTEST), which reach GTK's accelerators before the page.
fn press(display: &Display, keys: &str) {
    let id = app_window(display);
    xdotool(display, &["windowfocus", "--sync", &id]);
    xdotool(display, &["key", "--clearmodifiers", keys]);
}

/// The saved window state's file in `data`, once it says `want` (a JSON fragment).
async fn saved_state(data: &Path, want: &str) -> Value {
    let file = data.join("window-state.json");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        if text.replace([' ', '\n'], "").contains(want) {
            return serde_json::from_str(&text).unwrap();
        }
        assert!(
            Instant::now() < deadline,
            "the window state was not saved with {want}: {text:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_comes_back_where_and_as_big_as_it_was_left() {
    // A display of its own: the zoom keys go to whatever window has the focus there.
    let display = Display::own();
    let data = tempfile::tempdir().unwrap();

    // A fresh data folder: the default size.
    let app = App::start(&display, data.path(), &[]).await;
    let (_, _, w, h) = app.c().get_window_rect().await.unwrap();
    assert_eq!((w, h), (1280, 800));
    // Moved and resized (through WebDriver, as a window manager would), then the app
    // ends without a word (its WebDriver session closed): the state is on disk by then.
    app.c().set_window_rect(37, 41, 1024, 700).await.unwrap();
    let state = saved_state(data.path(), "\"width\":1024,\"height\":700").await;
    assert_eq!(
        state,
        json!({"x": 37, "y": 41, "width": 1024, "height": 700, "maximized": false, "zoom": 1.0})
    );
    app.quit().await;

    // The next start: where and as big as it was left, as WebDriver and the page see it.
    let app = App::start(&display, data.path(), &[]).await;
    assert_eq!(
        app.c().get_window_rect().await.unwrap(),
        (37, 41, 1024, 700)
    );
    let page = app
        .js("return [window.screenX, window.screenY, window.outerWidth, window.outerHeight]")
        .await;
    assert_eq!(page, json!([37, 41, 1024, 700]));
    // Moved again by the X server itself (xdotool, as a person dragging it would).
    let id = app_window(&display);
    xdotool(&display, &["windowmove", "--sync", &id, "120", "60"]);
    xdotool(&display, &["windowsize", "--sync", &id, "1100", "720"]);
    saved_state(
        data.path(),
        "\"x\":120,\"y\":60,\"width\":1100,\"height\":720",
    )
    .await;
    // View > Zoom in (Ctrl+=) is kept with it.
    press(&display, "ctrl+equal");
    saved_state(data.path(), "\"zoom\":1.1").await;
    app.quit().await;
    let app = App::start(&display, data.path(), &[]).await;
    assert_eq!(
        app.c().get_window_rect().await.unwrap(),
        (120, 60, 1100, 720)
    );
    // At 110 %, the 1100 px wide page is 1000 CSS pixels wide.
    app.wait_js("return Math.abs(window.innerWidth - 1000) <= 2", 10)
        .await;
    app.quit().await;

    // A position on a monitor that is gone (this display is 1280x900): the saved size,
    // and the window where the system puts it, on screen.
    std::fs::write(
        data.path().join("window-state.json"),
        json!({"x": 3000, "y": 200, "width": 1000, "height": 650, "maximized": false}).to_string(),
    )
    .unwrap();
    let app = App::start(&display, data.path(), &[]).await;
    let (x, y, w, h) = app.c().get_window_rect().await.unwrap();
    assert_eq!((w, h), (1000, 650));
    assert!(x < 1280 && y < 900, "the window is off screen at {x},{y}");
    app.quit().await;
}

/// A display of this test's own with a window manager on it (openbox): only a window
/// manager maximises a window.
struct Managed {
    display: Display,
    wm: Child,
    _dir: tempfile::TempDir,
}

impl Managed {
    fn start() -> Managed {
        // Our own Xvfb even when DISPLAY is set: the window manager must not land on
        // someone else's display.
        let display = Display::own();
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("ready");
        let log = dir.path().join("openbox.log");
        // openbox runs its --startup command once it manages the screen, just before
        // its event loop: the file that command makes is the signal, not a guess from
        // polling the display.
        let mut wm = Command::new("openbox")
            .args(["--sm-disable", "--startup"])
            .arg(format!("touch '{}'", ready.display()))
            .env("DISPLAY", &display.name)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("openbox is not installed: run scripts/setup-desktop.sh");
        // Generous, since a loaded machine (a CI build beside the tests) has been
        // seen to take over 10 s; an openbox that dies says so at once, with its log.
        let started = Instant::now();
        while !ready.exists() {
            let said = || std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(status) = wm.try_wait().unwrap() {
                panic!(
                    "openbox exited ({status}) before managing the display: {}",
                    said()
                );
            }
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "openbox did not start in {:?}: {}",
                started.elapsed(),
                said()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Managed {
            display,
            wm,
            _dir: dir,
        }
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        let _ = self.wm.kill();
        let _ = self.wm.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_maximised_window_comes_back_maximised_and_then_restores_to_its_size() {
    let m = Managed::start();
    let display = &m.display;
    let data = tempfile::tempdir().unwrap();
    let app = App::start(display, data.path(), &[]).await;
    app.c().set_window_size(1024, 700).await.unwrap();
    saved_state(data.path(), "\"width\":1024,\"height\":700").await;
    app.c().maximize_window().await.unwrap();
    let state = saved_state(data.path(), "\"maximized\":true").await;
    // The size under the maximised window is kept, for when it is restored.
    assert_eq!(
        (&state["width"], &state["height"]),
        (&json!(1024), &json!(700))
    );
    let (_, _, mw, mh) = app.c().get_window_rect().await.unwrap();
    assert!(mw > 1200 && mh > 800, "not maximised: {mw}x{mh}");
    app.quit().await;

    let app = App::start(display, data.path(), &[]).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, _, w, h) = app.c().get_window_rect().await.unwrap();
        if (w, h) == (mw, mh) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the window came back {w}x{h}, not maximised ({mw}x{mh})"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Un-maximised as a person does it: a double click on the title bar (openbox's
    // default), just above the window's content.
    let (x, y, _, _) = app.c().get_window_rect().await.unwrap();
    let (bx, by) = ((x + 300).to_string(), y.saturating_sub(8).to_string());
    xdotool(display, &["mousemove", "--sync", &bx, &by]);
    xdotool(display, &["click", "--repeat", "2", "--delay", "80", "1"]);
    saved_state(data.path(), "\"maximized\":false").await;
    let (_, _, w, h) = app.c().get_window_rect().await.unwrap();
    assert_eq!((w, h), (1024, 700));
    app.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_menu_keys_do_what_the_buttons_do() {
    // A display of its own: the keys go to whatever window has the focus there.
    let display = Display::own();
    let data = tempfile::tempdir().unwrap();
    let csv = repo().join("examples/building_energy.csv");
    let app = App::start(&display, data.path(), &[]).await;
    // The menu bar takes the top of the window: the page is shorter than the window.
    let inner = app.js("return window.innerHeight").await.as_u64().unwrap();
    let (_, _, _, h) = app.c().get_window_rect().await.unwrap();
    assert!(
        inner + 15 < h,
        "no menu bar above the page ({inner} of {h})"
    );
    app.add_file(&csv).await;
    app.js("document.querySelector('#toast').hidden = true; return true")
        .await;

    // View > Data explorer (Ctrl+Shift+E) opens the file in the side panel, and closes it.
    press(&display, "ctrl+shift+e");
    app.wait_js("return !document.querySelector('#preview').hidden && document.querySelector('#preview-title').innerText.startsWith('building_energy.csv') && !!document.querySelector('#preview .explorer')", 30).await;
    press(&display, "ctrl+shift+e");
    app.wait_js("return document.querySelector('#preview').hidden", 10)
        .await;
    // View > Plots (Ctrl+Shift+P): the plots pane.
    press(&display, "ctrl+shift+p");
    app.wait_js(
        "return !document.querySelector('#preview').hidden && document.querySelector('#preview-title').innerText === 'Plots'",
        10,
    )
    .await;
    press(&display, "ctrl+shift+p");
    app.wait_js("return document.querySelector('#preview').hidden", 10)
        .await;
    // The menu bar itself, walked with the keyboard as any GTK menu bar is (F10 opens
    // File; right twice to View; down to its second item, Plots; Enter).
    let id = app_window(&display);
    xdotool(&display, &["windowfocus", "--sync", &id]);
    xdotool(
        &display,
        &[
            "key", "--delay", "250", "F10", "Right", "Right", "Down", "Down", "Return",
        ],
    );
    app.wait_js(
        "return !document.querySelector('#preview').hidden && document.querySelector('#preview-title').innerText === 'Plots'",
        10,
    )
    .await;
    press(&display, "ctrl+shift+p");
    app.wait_js("return document.querySelector('#preview').hidden", 10)
        .await;

    // Help > Keyboard shortcuts (F1) lists the menu's keys.
    press(&display, "F1");
    app.wait_js("return document.querySelector('#help').open", 10)
        .await;
    let list = app.text("#help-table").await;
    for line in [
        "Ctrl+Shift+P\tPlots (View menu)",
        "Ctrl+N\tNew session (File menu)",
        "Ctrl+Q\tQuit (File menu)",
        "F1\tKeyboard shortcuts (Help menu)",
        "Ctrl+Enter\tRun the request",
    ] {
        assert!(list.contains(line), "{line:?} is not in the list:\n{list}");
    }
    assert_eq!(list.matches("Ctrl+N\t").count(), 1, "{list}");
    press(&display, "Escape");
    app.wait_js("return !document.querySelector('#help').open", 10)
        .await;

    // View > Zoom in (Ctrl+=) and Actual size (Ctrl+0): the page's CSS pixels shrink
    // and come back.
    let width = app.js("return window.innerWidth").await.as_f64().unwrap();
    press(&display, "ctrl+equal");
    app.wait_js(&format!("return window.innerWidth < {width} * 0.95"), 10)
        .await;
    press(&display, "ctrl+0");
    app.wait_js(&format!("return window.innerWidth === {width}"), 10)
        .await;

    // Edit: Select all, Cut, Paste and Undo in the request box, through WebKit's own
    // editing commands.
    app.js("const p = document.querySelector('#prompt'); p.value = 'median of energy_kwh'; p.focus(); return true").await;
    press(&display, "ctrl+a");
    app.wait_js(
        "const p = document.querySelector('#prompt'); return p.selectionStart === 0 && p.selectionEnd === p.value.length",
        10,
    )
    .await;
    // Edit > Select all from the menu bar itself does the same (the sixth item, past
    // Undo, Redo, Cut, Copy, Paste).
    app.js("const p = document.querySelector('#prompt'); p.setSelectionRange(0, 0); return true")
        .await;
    let id = app_window(&display);
    xdotool(&display, &["windowfocus", "--sync", &id]);
    xdotool(
        &display,
        &[
            "key", "--delay", "250", "F10", "Right", "Down", "Down", "Down", "Down", "Down",
            "Down", "Return",
        ],
    );
    app.wait_js(
        "const p = document.querySelector('#prompt'); return p.selectionStart === 0 && p.selectionEnd === p.value.length",
        10,
    )
    .await;
    press(&display, "ctrl+x");
    app.wait_js("return document.querySelector('#prompt').value === ''", 10)
        .await;
    press(&display, "ctrl+v");
    press(&display, "ctrl+v");
    app.wait_js(
        "return document.querySelector('#prompt').value === 'median of energy_kwhmedian of energy_kwh'",
        10,
    )
    .await;
    press(&display, "ctrl+z");
    app.wait_js(
        "return document.querySelector('#prompt').value === 'median of energy_kwh'",
        10,
    )
    .await;

    // Edit > Copy on a table's cells: the page's own copy handler still runs (the
    // columns' names, then the exact values, not the rounded ones shown), and Paste
    // puts them in the request box.
    press(&display, "ctrl+shift+e");
    app.wait_js(
        "return document.querySelectorAll('#preview td[data-exact]').length > 2",
        30,
    )
    .await;
    let exact = app
        .js("const tds = [...document.querySelectorAll('#preview tbody tr')][1].querySelectorAll('td[data-exact]');
             const r = document.createRange(); r.setStartBefore(tds[0]); r.setEndAfter(tds[tds.length - 1]);
             const s = getSelection(); s.removeAllRanges(); s.addRange(r);
             return [...tds].map(td => td.dataset.exact).join('\t')")
        .await;
    // The columns' names first, as the file's header has them.
    let header = std::fs::read_to_string(&csv).unwrap();
    let header = header.lines().next().unwrap().replace(',', "\t");
    let exact = format!("{header}\n{}", exact.as_str().unwrap());
    press(&display, "ctrl+c");
    app.js("const p = document.querySelector('#prompt'); p.value = ''; p.focus(); return true")
        .await;
    press(&display, "ctrl+v");
    app.wait_js(
        &format!("return document.querySelector('#prompt').value === {exact:?}"),
        10,
    )
    .await;
    press(&display, "ctrl+shift+e");

    // File > New session (Ctrl+N): an empty session, as the sidebar's button makes.
    press(&display, "ctrl+n");
    app.wait_js(
        "return document.querySelector('#session-title').innerText === 'New session' && document.querySelectorAll('#file-list li').length === 0",
        10,
    )
    .await;

    // File > Quit (Ctrl+Q): the app ends (its window goes away).
    press(&display, "ctrl+q");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = Command::new("xdotool")
            .args(["search", "--onlyvisible", "--name", "Sandalyst"])
            .env("DISPLAY", &display.name)
            .output()
            .unwrap();
        if out.stdout.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the window is still there after Ctrl+Q"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    app.quit().await;
}

/// Every control on screen (buttons, pickers, fields, links) that is not in a scrolled
/// area's hidden part: its box inside the window and the control itself under its
/// centre (nothing drawn over it). Returns the problems, with the number checked.
async fn controls_off_screen(app: &App) -> (u64, Vec<String>) {
    let v = app
        .js(r#"
const vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
const problems = [];
const shown = (el) => {
  if (el.closest('[hidden], .offscreen')) return false;
  const d = el.closest('dialog'); if (d && !d.open) return false;
  const cs = getComputedStyle(el);
  if (cs.display === 'none' || cs.visibility === 'hidden') return false;
  const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0;
};
// The areas that scroll around `el`, innermost first.
const scrollers = (el) => {
  const out = [];
  for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    const cs = getComputedStyle(p);
    if (/(auto|scroll)/.test(cs.overflowX + ' ' + cs.overflowY) && (p.scrollHeight > p.clientHeight + 1 || p.scrollWidth > p.clientWidth + 1)) out.push(p);
  }
  return out;
};
const name = (el) => (el.id ? '#' + el.id : el.tagName.toLowerCase() + (el.classList.length ? '.' + el.classList[0] : ''))
  + ' "' + (el.innerText || el.value || el.title || '').trim().slice(0, 30) + '"';
const inside = (r, b) => r.left >= b.left - 1 && r.top >= b.top - 1 && r.right <= b.right + 1 && r.bottom <= b.bottom + 1;
const view = { left: 0, top: 0, right: vw, bottom: vh };
let checked = 0;
// A modal dialog open: only its controls can be reached.
const within = document.querySelector('dialog[open]') || document;
for (const el of within.querySelectorAll('button, select, input:not([type=hidden]), textarea, a[href]')) {
  if (!shown(el)) continue;
  const r = el.getBoundingClientRect();
  const areas = scrollers(el);
  // An outermost scrolled area must itself be in the window.
  const outer = areas[areas.length - 1];
  if (outer && !inside(outer.getBoundingClientRect(), view)) problems.push(`${name(outer)} (a scrolled area) reaches out of the ${vw}x${vh} window`);
  // In the scrolled-away part of any of them: reached by scrolling.
  if (areas.some((a) => !inside(r, a.getBoundingClientRect()))) continue;
  checked++;
  // A picker squeezed so narrow that its choice cannot be read is out of reach too.
  if (el.tagName === 'SELECT' && r.width < 120) problems.push(`${name(el)} is only ${r.width | 0} px wide`);
  if (!inside(r, view)) { problems.push(`${name(el)} at ${r.left | 0},${r.top | 0} ${r.width | 0}x${r.height | 0} is not inside the ${vw}x${vh} window`); continue; }
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  const label = hit && hit.tagName === 'LABEL' && hit.contains(el);
  if (!hit || !(hit === el || el.contains(hit) || label)) problems.push(`${name(el)} is covered by ${hit ? name(hit) : 'nothing'}`);
}
return [checked, [...new Set(problems)]];
"#)
        .await;
    let checked = v[0].as_u64().unwrap();
    let problems = v[1]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    (checked, problems)
}

/// Size the window to `w`x`h` and wait until the page has that width.
async fn size_window(app: &App, w: u32, h: u32) {
    app.c().set_window_rect(0, 0, w, h).await.unwrap();
    app.wait_js(
        &format!("return document.documentElement.clientWidth === {w}"),
        10,
    )
    .await;
    // A frame for the layout to settle.
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_control_is_on_screen_at_1024x768_and_1280x800_in_both_themes() {
    let display = Display::get();
    let data = tempfile::tempdir().unwrap();
    let csv = repo().join("examples/building_energy.csv");
    let mut problems: Vec<String> = Vec::new();
    let mut checked = 0;
    for dark in [false, true] {
        let env: &[(&str, &str)] = if dark {
            &[("GTK_THEME", "Adwaita:dark")]
        } else {
            &[]
        };
        let theme = if dark { "dark" } else { "light" };
        let app = App::start(&display, data.path(), env).await;
        let is_dark = app
            .js("return matchMedia('(prefers-color-scheme: dark)').matches")
            .await;
        assert_eq!(
            is_dark,
            Value::Bool(dark),
            "the {theme} theme is not in use"
        );
        if dark {
            // The light pass's session, with its answer and charts, from the history.
            app.js("document.querySelector('.h-item .h-open').click(); return true")
                .await;
            app.wait_js(
                "return document.querySelectorAll('.artifact').length > 0",
                30,
            )
            .await;
        } else {
            app.add_file(&csv).await;
            app.click("#example").await;
            app.click("#run").await;
            app.wait_js(
                "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
                600,
            )
            .await;
        }
        for (w, h) in [(1024u32, 768u32), (1280, 800)] {
            size_window(&app, w, h).await;
            app.js("document.querySelector('#toast').hidden = true; return true")
                .await;
            let mut check = |what: &str, found: (u64, Vec<String>)| {
                checked += found.0;
                problems.extend(
                    found
                        .1
                        .into_iter()
                        .map(|p| format!("{w}x{h} {theme}, {what}: {p}")),
                );
            };
            check("nothing open", controls_off_screen(&app).await);
            // The data explorer in the side panel, then wider.
            open_input(&app, "building_energy.csv").await;
            check("the explorer open", controls_off_screen(&app).await);
            if (w, h, dark) == (1024, 768, false) {
                maybe_shot(&display, "28-explorer-1024x768").await;
            }
            app.click("#preview-wide").await;
            check("the explorer open wider", controls_off_screen(&app).await);
            app.click("#preview-wide").await;
            app.click("#preview-close").await;
            // The plots pane.
            app.js("window.sandalyst.togglePlots(); return true").await;
            app.wait_js(
                "return !!document.querySelector('#preview .plots .plot-thumb')",
                30,
            )
            .await;
            check("the plots pane open", controls_off_screen(&app).await);
            if (w, h, dark) == (1024, 768, true) {
                maybe_shot(&display, "29-plots-1024x768-dark").await;
            }
            app.click("#preview-close").await;
            // The Export dialog shows every choice.
            app.click("#export").await;
            app.wait_js("return document.querySelector('#export-dialog').open", 10)
                .await;
            let choices = app
                .js("return [...document.querySelectorAll('#export-dialog input')].map(i => i.type + ':' + i.parentElement.innerText.trim())")
                .await;
            assert_eq!(
                choices,
                json!([
                    "radio:A folder",
                    "radio:One zip file",
                    "radio:One HTML report to share (the answer, report, charts and tables; opens offline)",
                    "checkbox:The transcript (every step of every ask)",
                    "checkbox:The analysis as a Jupyter notebook and a Python script"
                ])
            );
            check("the Export dialog", controls_off_screen(&app).await);
            if (w, h, dark) == (1024, 768, false) {
                maybe_shot(&display, "30-export-1024x768").await;
            }
            app.click("#export-cancel").await;
        }
        app.quit().await;
    }
    assert!(checked > 100, "only {checked} controls were checked");
    assert!(
        problems.is_empty(),
        "{} controls out of reach:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
