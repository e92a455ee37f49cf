//! The shared report (Export → Report) opened in the WebDriver browser (the app's own
//! WebKit view, navigated to the file): every chart the session saved is on the page,
//! inlined byte for byte and drawn, and the page asks nothing of any server. Its CSP
//! is what keeps it so: a copy with remote bait added fetches nothing, and the same copy
//! without the CSP does reach the listener (so the listener would have seen a leak).

use super::*;

/// A server on 127.0.0.1 that records the request line of every connection it gets.
struct Listener {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

fn listener() -> Listener {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut conn) = conn else { continue };
            let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
            let mut line = String::new();
            let _ = BufReader::new(&conn).read_line(&mut line);
            log.lock().unwrap().push(line.trim_end().to_string());
            let _ = conn.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    Listener { port, seen }
}

/// Open `file` in the window and wait until it has loaded.
async fn open_page(app: &App, file: &Path) {
    app.c()
        .goto(&format!("file://{}", file.display()))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ready = app
            .c()
            .execute(
                "return location.protocol === 'file:' && document.readyState === 'complete'",
                vec![],
            )
            .await;
        if ready.ok() == Some(Value::Bool(true)) {
            return;
        }
        assert!(Instant::now() < deadline, "{} did not load", file.display());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Byte count and byte sum (mod 2^32) of a file: what the page's `data:` image must decode to.
fn fingerprint(bytes: &[u8]) -> (u64, u64) {
    let sum = bytes
        .iter()
        .fold(0u32, |s, b| s.wrapping_add(u32::from(*b)));
    (bytes.len() as u64, u64::from(sum))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_report_opens_offline_with_every_chart() {
    let display = Display::get();
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let app = App::start(&display, data.path(), &[]).await;
    app.add_file(&repo().join("examples/building_energy.csv"))
        .await;
    // Two charts, one of them embedded by the Markdown report too.
    let steps = work.path().join("charts.json");
    let python = "import matplotlib.pyplot as plt\n\
        for name, ys in (('first', [1, 3, 2]), ('second', [2, 2, 5])):\n    \
            fig, ax = plt.subplots()\n    ax.plot(ys)\n    fig.savefig(f'output/{name}.png')\n    plt.close(fig)\n\
        open('output/report.md', 'w').write('# Report\\n\\nThe first chart:\\n\\n![the first chart](first.png)\\n')\n\
        print('saved')";
    std::fs::write(
        &steps,
        json!([{"python": python}, {"say": "Two charts: `output/first.png` and `output/second.png`."}])
            .to_string(),
    )
    .unwrap();
    app.ask("Chart it twice.", &format!("replay:{}", steps.display()))
        .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
        300,
    )
    .await;
    assert!(app.text(".ask .ending").await.starts_with("Finished"));
    let session_id = app.session_id().await;
    let dest = work.path().join("report.html");
    let out = app
        .invoke(
            "export_report",
            json!({"sessionId": session_id, "dest": dest}),
        )
        .await;
    assert!(out["path"].is_string(), "{out}");
    let html = std::fs::read_to_string(&dest).unwrap();
    let outputs = data.path().join(&session_id).join("outputs");
    let mut charts: Vec<(u64, u64)> = ["first.png", "second.png"]
        .iter()
        .map(|f| fingerprint(&std::fs::read(outputs.join(f)).unwrap()))
        .collect();
    charts.sort();
    let server = listener();

    // The page as exported: each chart once or more, drawn, and no request at all.
    open_page(&app, &dest).await;
    let images = app
        .js("return [...document.images].map(i => {
                const src = i.getAttribute('src');
                const bytes = src.startsWith('data:image/png;base64,') ? atob(src.slice(22)) : '';
                let sum = 0;
                for (let k = 0; k < bytes.length; k++) sum = (sum + bytes.charCodeAt(k)) >>> 0;
                return {data: src.startsWith('data:'), drawn: i.complete && i.naturalWidth > 0, len: bytes.length, sum};
            })")
        .await;
    let images = images.as_array().unwrap();
    assert!(!images.is_empty(), "no image on the page");
    for i in images {
        assert_eq!(
            (&i["data"], &i["drawn"]),
            (&json!(true), &json!(true)),
            "{i}"
        );
    }
    let mut shown: Vec<(u64, u64)> = images
        .iter()
        .map(|i| (i["len"].as_u64().unwrap(), i["sum"].as_u64().unwrap()))
        .collect();
    shown.sort();
    shown.dedup();
    assert_eq!(shown, charts, "every chart of the session, as saved");
    let text = app.js("return document.body.innerText").await;
    assert!(text.as_str().unwrap().contains("The first chart"), "{text}");
    let requested = app
        .js("return performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith('data:'))")
        .await;
    assert_eq!(requested, json!([]));

    // The same page with remote bait: the CSP refuses every load.
    let base = format!("http://127.0.0.1:{}", server.port);
    let bait = format!(
        "<img id=\"bait\" src=\"{base}/image.png\"><link rel=\"stylesheet\" href=\"{base}/style.css\">\
         <iframe src=\"{base}/frame\"></iframe><script>fetch('{base}/fetch')</script>"
    );
    let baited = html.replacen("<body>", &format!("<body>{bait}"), 1);
    assert_ne!(baited, html);
    let file = work.path().join("baited.html");
    std::fs::write(&file, &baited).unwrap();
    open_page(&app, &file).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        app.js("const b = document.querySelector('#bait'); return !!b && b.naturalWidth === 0")
            .await,
        json!(true)
    );
    assert_eq!(*server.seen.lock().unwrap(), Vec::<String>::new());

    // Without its CSP the bait does reach the listener: it would have seen a leak.
    let start = baited
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .expect("the report has a CSP");
    let end = start + baited[start..].find('>').unwrap() + 1;
    let open = format!("{}{}", &baited[..start], &baited[end..]);
    let file = work.path().join("open.html");
    std::fs::write(&file, open).unwrap();
    open_page(&app, &file).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.seen.lock().unwrap().is_empty() {
        assert!(
            Instant::now() < deadline,
            "the page without a CSP fetched nothing either"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let seen = server.seen.lock().unwrap().clone();
    assert!(
        seen.iter().any(|l| l.starts_with("GET /image.png")),
        "{seen:?}"
    );
    app.quit().await;
}
