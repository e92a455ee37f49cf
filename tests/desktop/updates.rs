//! Help → Check for Updates… in the window, against a feed served on 127.0.0.1 by this
//! test: a release signed with a key made here is shown with its version and notes;
//! its artifact, tampered with, is refused in the window when Install is clicked (the
//! app's binary is what an install would replace: it is checked untouched); with no
//! feed configured the window says so and the listener sees no connection.
//!
//! The item is chosen in the native menu bar with X key events (WebDriver reaches only
//! the page).

use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine;

use super::*;

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// What a feed serves: a body by path.
type Routes = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A feed on 127.0.0.1: fixed bodies by path, and the count of connections.
struct Feed {
    url: String,
    connections: Arc<AtomicUsize>,
    routes: Routes,
}

impl Feed {
    fn start() -> Feed {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let routes: Routes = Arc::default();
        let (c, r) = (connections.clone(), routes.clone());
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(s) = s else { return };
                c.fetch_add(1, Ordering::SeqCst);
                let r = r.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(s.try_clone().unwrap());
                    let mut first = String::new();
                    let _ = reader.read_line(&mut first);
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                            break;
                        }
                    }
                    let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
                    let body = r
                        .lock()
                        .unwrap()
                        .iter()
                        .find(|(p, _)| *p == path)
                        .map(|(_, b)| b.clone())
                        .unwrap_or_default();
                    let mut s = s;
                    let _ = write!(
                        s,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = s.write_all(&body);
                });
            }
        });
        Feed {
            url,
            connections,
            routes,
        }
    }

    /// Publish `version`, signed with a key made here, its artifact tampered with after
    /// signing; the key's public half, for `[updates] pubkey`.
    fn publish_tampered(&self, version: &str) -> String {
        let pair = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        let public = b64(&pair.pk.to_box().unwrap().to_string());
        let mut artifact = b"\x7fELF\x02\x01\x01\0".to_vec();
        artifact.extend(std::iter::repeat_n(7u8, 4096));
        let trusted = format!("timestamp:1765152000\tfile:Sandalyst.AppImage\tversion:{version}");
        let sig = minisign::sign(
            Some(&pair.pk),
            &pair.sk,
            std::io::Cursor::new(&artifact),
            Some(&trusted),
            None,
        )
        .unwrap();
        artifact[100] ^= 1;
        let manifest = json!({
            "version": version,
            "notes": "Charts answer a hover.\nReports open offline.",
            "pub_date": "2026-12-08T00:00:00Z",
            "platforms": {"linux-x86_64": {
                "url": format!("{}/Sandalyst.AppImage", self.url),
                "signature": b64(&sig.to_string()),
            }},
        });
        let mut r = self.routes.lock().unwrap();
        r.push(("/latest.json".into(), manifest.to_string().into_bytes()));
        r.push(("/Sandalyst.AppImage".into(), artifact));
        public
    }
}

fn xdotool(display: &Display, args: &[&str]) {
    let ok = Command::new("timeout")
        .arg("10")
        .arg("xdotool")
        .args(args)
        .env("DISPLAY", &display.name)
        .status()
        .expect("xdotool is not installed: run scripts/setup-desktop.sh");
    assert!(ok.success(), "xdotool {args:?} failed");
}

/// Help → Check for Updates… in the native menu bar, from the keyboard as a person
/// reaches it (X key events): F10 opens File, Right three times Help, Down three
/// times the item (the separator is skipped), Return. Waits for the dialog's answer.
async fn check_for_updates(app: &App, display: &Display) {
    let out = Command::new("xdotool")
        .args(["search", "--onlyvisible", "--name", "Sandalyst"])
        .env("DISPLAY", &display.name)
        .output()
        .expect("xdotool is not installed: run scripts/setup-desktop.sh");
    let id = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .expect("a window titled Sandalyst")
        .to_string();
    xdotool(display, &["windowfocus", "--sync", &id]);
    for key in [
        "F10", "Right", "Right", "Right", "Down", "Down", "Down", "Return",
    ] {
        xdotool(display, &["key", "--clearmodifiers", key]);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    app.wait_js(
        "const s = document.querySelector('#updates-status'); return document.querySelector('#updates').open && !!s && !s.innerText.startsWith('Checking')",
        30,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_for_updates_shows_a_new_version_and_refuses_a_tampered_download() {
    let display = Display::get();
    let work = tempfile::tempdir().unwrap();
    // What an install would replace; an install renames it away and writes anew.
    let binary = || {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(app_path()).unwrap();
        (m.ino(), m.len(), m.mtime(), m.mtime_nsec())
    };
    let binary_before = binary();
    let feed = Feed::start();
    let public = feed.publish_tampered("0.2.0");
    let config = work.path().join("config.toml");

    // No feed configured: the window says so, and nothing is asked of the listener.
    std::fs::write(&config, "").unwrap();
    let data = tempfile::tempdir().unwrap();
    let app = App::start(
        &display,
        data.path(),
        &[("SANDALYST_CONFIG", config.to_str().unwrap())],
    )
    .await;
    check_for_updates(&app, &display).await;
    let status = app.text("#updates-status").await;
    assert!(status.contains("No update feed is configured"), "{status}");
    let install_shown = app
        .js("return !document.querySelector('#updates-install').hidden")
        .await;
    assert_eq!(install_shown, Value::Bool(false));
    app.quit().await;
    assert_eq!(feed.connections.load(Ordering::SeqCst), 0);

    // The feed configured (and enabled: this is a debug build).
    std::fs::write(
        &config,
        format!(
            "[updates]\nfeed = \"{}/latest.json\"\npubkey = \"{public}\"\nenabled = true\n",
            feed.url
        ),
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let app = App::start(
        &display,
        data.path(),
        &[("SANDALYST_CONFIG", config.to_str().unwrap())],
    )
    .await;
    check_for_updates(&app, &display).await;
    let status = app.text("#updates-status").await;
    assert_eq!(
        status,
        format!(
            "Sandalyst 0.2.0 is available; you have {}.",
            env!("CARGO_PKG_VERSION")
        )
    );
    assert_eq!(app.text("#updates-heading").await, "What's new in 0.2.0");
    assert_eq!(
        app.text("#updates-notes").await,
        "Charts answer a hover.\nReports open offline."
    );
    assert_eq!(
        feed.connections.load(Ordering::SeqCst),
        1,
        "the manifest only"
    );
    maybe_shot(&display, "40-update-available").await;

    // Install: the download's signature fails, the window says so, nothing installed.
    app.click("#updates-install").await;
    app.wait_js(
        "const e = document.querySelector('#updates-error'); return !!e && !e.hidden && e.innerText.length > 0",
        30,
    )
    .await;
    let status = app.text("#updates-status").await;
    assert_eq!(
        status,
        "The update to 0.2.0 was refused: nothing was installed."
    );
    let error = app.text("#updates-error").await;
    assert!(
        error.contains("not signed with Sandalyst's update key"),
        "{error}"
    );
    let restart_shown = app
        .js("return !document.querySelector('#updates-restart').hidden")
        .await;
    assert_eq!(restart_shown, Value::Bool(false));
    maybe_shot(&display, "41-update-refused").await;
    app.quit().await;
    assert_eq!(binary(), binary_before, "the app's binary is untouched");
}
