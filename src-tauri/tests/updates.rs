//! Check for Updates against a real feed: a minisign key pair made here, a release
//! signed with it as Tauri's signer signs one (prehashed, the version in the trusted
//! comment), a `latest.json` and the artifact served on 127.0.0.1 by a listener of the
//! test's own that counts its connections. The app is the shell on Tauri's mock
//! runtime with Tauri's updater plugin, configured as `tauri.conf.json` configures it;
//! an install goes into a file of the test's, never into the test binary.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine;
use sandalyst_desktop::commands::AppState;
use sandalyst_desktop::updates::{self, Checked, Code, Updates};
use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_context, noop_assets, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::WebviewWindowBuilder;

const OLD_APP: &[u8] = b"\x7fELF the installed app, 0.1.0";

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A signing key as `cargo tauri signer generate` makes one; `public` is what goes in
/// `[updates] pubkey` (base64 of the `.pub` file).
struct Key {
    pair: minisign::KeyPair,
    public: String,
}

fn key() -> Key {
    let pair = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
    let public = b64(&pair.pk.to_box().unwrap().to_string());
    Key { pair, public }
}

/// The `signature` of a manifest: base64 of the `.sig` file, the version in the
/// trusted comment as Tauri's bundler writes it.
fn sign(key: &Key, data: &[u8], version: &str) -> String {
    let trusted =
        format!("timestamp:1765152000\tfile:Sandalyst_{version}_amd64.AppImage\tversion:{version}");
    let sig = minisign::sign(
        Some(&key.pair.pk),
        &key.pair.sk,
        std::io::Cursor::new(data),
        Some(&trusted),
        Some("signature from tauri secret key"),
    )
    .unwrap();
    b64(&sig.to_string())
}

/// A release's artifact: an AppImage is an ELF file (the updater refuses other bytes).
fn artifact(version: &str) -> Vec<u8> {
    let mut a = b"\x7fELF\x02\x01\x01\0".to_vec();
    a.extend(std::iter::repeat_n(0u8, 56));
    a.extend(format!("Sandalyst {version}\n").repeat(20_000).as_bytes());
    a
}

/// An HTTP server on 127.0.0.1 that serves fixed bodies by path and counts the
/// What a feed serves: a body by path.
type Routes = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// connections made to it and the paths asked for.
struct Feed {
    url: String,
    connections: Arc<AtomicUsize>,
    asked: Arc<Mutex<Vec<String>>>,
    routes: Routes,
}

impl Feed {
    fn start() -> Feed {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let routes: Routes = Arc::default();
        let (c, a, r) = (connections.clone(), asked.clone(), routes.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                c.fetch_add(1, Ordering::SeqCst);
                let (a, r) = (a.clone(), r.clone());
                std::thread::spawn(move || serve(stream, &a, &r));
            }
        });
        Feed {
            url,
            connections,
            asked,
            routes,
        }
    }

    fn put(&self, path: &str, body: Vec<u8>) {
        self.routes.lock().unwrap().push((path.to_string(), body));
    }

    /// A static manifest (the `platforms` form Tauri's bundler writes).
    fn publish(&self, version: &str, artifact: Vec<u8>, signature: String) {
        let file = format!("/Sandalyst_{version}_amd64.AppImage");
        let manifest = json!({
            "version": version,
            "notes": format!("Sandalyst {version}: faster charts.\nFixes the export of reports."),
            "pub_date": "2026-12-08T00:00:00Z",
            "platforms": {
                "linux-x86_64": {"url": format!("{}{file}", self.url), "signature": signature},
            },
        });
        self.put("/latest.json", manifest.to_string().into_bytes());
        self.put(&file, artifact);
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, asked: &Mutex<Vec<String>>, routes: &Mutex<Vec<(String, Vec<u8>)>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {}
        }
    }
    let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
    asked.lock().unwrap().push(path.clone());
    let body = routes
        .lock()
        .unwrap()
        .iter()
        .rev()
        .find(|(p, _)| *p == path)
        .map(|(_, b)| b.clone());
    let mut out = stream;
    let (status, body) = match body {
        Some(b) => ("200 OK", b),
        None => ("404 Not Found", b"not here".to_vec()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(&body);
    let _ = out.flush();
    let _ = reader.read_to_end(&mut Vec::new());
}

/// The shell as `run()` builds it for updates: the app's commands and state, Tauri's
/// updater plugin configured from the real `tauri.conf.json`, the config file at
/// `config`, installs going to `exe`.
struct App {
    _data: tempfile::TempDir,
    app: tauri::App<MockRuntime>,
    webview: tauri::WebviewWindow<MockRuntime>,
}

fn app(config: &Path, exe: &Path) -> App {
    let data = tempfile::tempdir().unwrap();
    let state = AppState::open(data.path().to_path_buf()).unwrap();
    let conf: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tauri.conf.json"))
            .unwrap(),
    )
    .unwrap();
    let mut context = mock_context(noop_assets());
    context
        .config_mut()
        .plugins
        .0
        .insert("updater".into(), conf["plugins"]["updater"].clone());
    context.package_info_mut().version = env!("CARGO_PKG_VERSION").parse().unwrap();
    let updates = Updates::new(Some(config.to_path_buf())).installing_to(exe.to_path_buf());
    let app = updates::init(
        sandalyst_desktop::builder(tauri::test::mock_builder(), state),
        updates,
    )
    .build(context)
    .unwrap();
    let webview = WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    App {
        _data: data,
        app,
        webview,
    }
}

/// The page's call of a command, as the window makes it.
fn call(a: &App, cmd: &str, args: Value) -> Result<Value, Value> {
    get_ipc_response(
        &a.webview,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|b| b.deserialize::<Value>().unwrap())
}

struct Setup {
    dir: tempfile::TempDir,
    config: PathBuf,
    exe: PathBuf,
}

/// A config file with `[updates]` of `section` (none: no section), and the installed
/// app's file.
fn setup(section: Option<String>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, section.unwrap_or_default()).unwrap();
    let exe = dir.path().join("Sandalyst.AppImage");
    std::fs::write(&exe, OLD_APP).unwrap();
    Setup { dir, config, exe }
}

fn updates_section(feed: &Feed, key: &Key) -> String {
    format!(
        "[updates]\nfeed = \"{}/latest.json\"\npubkey = \"{}\"\nenabled = true\n",
        feed.url, key.public
    )
}

fn check(a: &App) -> Checked {
    tauri::async_runtime::block_on(updates::check(a.app.handle())).unwrap()
}

fn install(a: &App, version: &str) -> Result<Vec<updates::Progress>, updates::UpdateError> {
    let mut seen = Vec::new();
    tauri::async_runtime::block_on(updates::install(a.app.handle(), version, |p| seen.push(p)))
        .map(|()| seen)
}

#[test]
fn a_newer_signed_release_is_found_shown_and_installed_when_agreed_to() {
    let key = key();
    let feed = Feed::start();
    let new = artifact("0.2.0");
    feed.publish("0.2.0", new.clone(), sign(&key, &new, "0.2.0"));
    let s = setup(Some(updates_section(&feed, &key)));
    let a = app(&s.config, &s.exe);

    // Through the page's command: version and notes for the window.
    let found = call(&a, "check_for_updates", json!({})).unwrap();
    assert_eq!(found["status"], "available", "{found}");
    assert_eq!(found["version"], "0.2.0");
    assert_eq!(found["current"], env!("CARGO_PKG_VERSION"));
    assert!(found["notes"].as_str().unwrap().contains("faster charts"));
    assert_eq!(found["date"], "2026-12-08T00:00:00Z");
    // Checking downloads nothing: only the manifest was asked for.
    assert_eq!(feed.asked(), ["/latest.json"]);
    assert_eq!(std::fs::read(&s.exe).unwrap(), OLD_APP);

    // Only the version the page showed is installed.
    let e = install(&a, "0.3.0").unwrap_err();
    assert_eq!(e.code, Code::UpdateNotFound);
    let progress = install(&a, "0.2.0").unwrap();
    assert_eq!(
        std::fs::read(&s.exe).unwrap(),
        new,
        "the update is in place"
    );
    let last = progress.last().unwrap();
    assert_eq!(last.downloaded, new.len() as u64);
    assert_eq!(last.total, Some(new.len() as u64));
    assert!(
        progress.len() > 1,
        "progress while downloading: {progress:?}"
    );
    assert_eq!(
        feed.asked(),
        ["/latest.json", "/Sandalyst_0.2.0_amd64.AppImage"]
    );
    // The installed file keeps the old one's permissions (an AppImage stays executable).
    drop(s.dir);
}

/// What a refused install leaves: the error, and the installed app untouched.
fn refused(publish: impl FnOnce(&Feed, &Key)) -> (updates::UpdateError, Setup, Feed) {
    let key = key();
    let feed = Feed::start();
    publish(&feed, &key);
    let s = setup(Some(updates_section(&feed, &key)));
    let a = app(&s.config, &s.exe);
    let Checked::Available { version, .. } = check(&a) else {
        panic!("an update is offered")
    };
    let e = install(&a, &version).unwrap_err();
    assert_eq!(
        std::fs::read(&s.exe).unwrap(),
        OLD_APP,
        "nothing was installed"
    );
    (e, s, feed)
}

#[test]
fn a_tampered_artifact_is_refused_and_nothing_is_installed() {
    let (e, _s, feed) = refused(|feed, key| {
        let good = artifact("0.2.0");
        let sig = sign(key, &good, "0.2.0");
        let mut bad = good.clone();
        let at = bad.len() / 2;
        bad[at] ^= 0x01;
        feed.publish("0.2.0", bad, sig);
    });
    assert_eq!(e.code, Code::UpdateSignature, "{}", e.message);
    assert!(
        e.message.contains("not signed with Sandalyst's update key"),
        "{}",
        e.message
    );
    assert!(e.message.contains("0.2.0"), "{}", e.message);
    assert_eq!(
        feed.asked().len(),
        2,
        "the artifact was downloaded, then refused"
    );
}

#[test]
fn a_release_signed_with_another_key_is_refused() {
    let (e, _s, _feed) = refused(|feed, _key| {
        let other = key();
        let a = artifact("0.2.0");
        let sig = sign(&other, &a, "0.2.0");
        feed.publish("0.2.0", a, sig);
    });
    assert_eq!(e.code, Code::UpdateSignature, "{}", e.message);
}

#[test]
fn a_signature_that_is_not_one_is_refused() {
    let (e, _s, _feed) = refused(|feed, _key| {
        feed.publish(
            "0.2.0",
            artifact("0.2.0"),
            b64("untrusted comment: x\nnot a signature\n"),
        );
    });
    assert_eq!(e.code, Code::UpdateSignature, "{}", e.message);
}

/// An old release, validly signed, offered under a newer version number: the
/// signature names 0.1.5, the feed says 0.9.0.
#[test]
fn an_old_release_passed_off_as_a_newer_version_is_refused() {
    let (e, _s, _feed) = refused(|feed, key| {
        let old = artifact("0.1.5");
        let sig = sign(key, &old, "0.1.5");
        feed.publish("0.9.0", old, sig);
    });
    assert_eq!(e.code, Code::UpdateSignature, "{}", e.message);
    assert!(e.message.contains("0.1.5"), "{}", e.message);
}

#[test]
fn an_equal_or_older_version_is_up_to_date() {
    let current = env!("CARGO_PKG_VERSION");
    for version in [current, "0.0.9"] {
        let key = key();
        let feed = Feed::start();
        let a_ = artifact(version);
        feed.publish(version, a_.clone(), sign(&key, &a_, version));
        let s = setup(Some(updates_section(&feed, &key)));
        let a = app(&s.config, &s.exe);
        let checked = call(&a, "check_for_updates", json!({})).unwrap();
        assert_eq!(
            checked,
            json!({"status": "up_to_date", "current": current, "latest": version})
        );
        assert_eq!(feed.asked(), ["/latest.json"]);
        // Nothing waits to be installed.
        assert_eq!(install(&a, version).unwrap_err().code, Code::UpdateNotFound);
        assert_eq!(std::fs::read(&s.exe).unwrap(), OLD_APP);
    }
}

/// Without a feed and a key, or in a development build not told to check, no request
/// is made: the listener sees no connection at all.
#[test]
fn without_configuration_no_request_is_made() {
    let key = key();
    let feed = Feed::start();
    let a_ = artifact("0.2.0");
    feed.publish("0.2.0", a_.clone(), sign(&key, &a_, "0.2.0"));
    let url = format!("{}/latest.json", feed.url);
    for (section, why) in [
        (None, "No update feed is configured"),
        (
            Some("[updates]\n".to_string()),
            "No update feed is configured",
        ),
        (
            Some(format!("[updates]\nfeed = \"{url}\"\nenabled = true\n")),
            "No update feed is configured",
        ),
        (
            // A debug build (this test's) with a feed and a key but no `enabled = true`.
            Some(format!(
                "[updates]\nfeed = \"{url}\"\npubkey = \"{}\"\n",
                key.public
            )),
            "development build",
        ),
        (
            Some(format!(
                "[updates]\nfeed = \"{url}\"\npubkey = \"{}\"\nenabled = false\n",
                key.public
            )),
            "turned off",
        ),
    ] {
        let s = setup(section);
        let a = app(&s.config, &s.exe);
        let checked = call(&a, "check_for_updates", json!({})).unwrap();
        assert_eq!(checked["status"], "off", "{checked}");
        assert!(checked["why"].as_str().unwrap().contains(why), "{checked}");
    }
    // Give a stray request time to arrive before counting.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(feed.connections.load(Ordering::SeqCst), 0);
}

#[test]
fn a_feed_that_cannot_be_read_is_said_as_such() {
    let key = key();
    let feed = Feed::start(); // serves nothing: 404
    let s = setup(Some(updates_section(&feed, &key)));
    let a = app(&s.config, &s.exe);
    let e = call(&a, "check_for_updates", json!({})).unwrap_err();
    assert_eq!(e["code"], "update_feed", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("latest.json"),
        "{e}"
    );

    // A key that is not one is said before any request.
    let s = setup(Some(format!(
        "[updates]\nfeed = \"{}/latest.json\"\npubkey = \"not a key\"\nenabled = true\n",
        feed.url
    )));
    let before = feed.connections.load(Ordering::SeqCst);
    let a = app(&s.config, &s.exe);
    let e = call(&a, "check_for_updates", json!({})).unwrap_err();
    assert_eq!(e["code"], "update_config", "{e}");
    assert_eq!(feed.connections.load(Ordering::SeqCst), before);
}
