//! The shell's commands on Tauri's mock runtime: what the page may ask for, and what
//! it is refused (paths outside the session, `..`, symlinks, relative destinations).

use sandalyst::api::SessionConfig;
use sandalyst_desktop::commands::AppState;
use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_context, noop_assets, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::WebviewWindowBuilder;

struct Fixture {
    _data: tempfile::TempDir,
    outside: tempfile::TempDir,
    webview: tauri::WebviewWindow<MockRuntime>,
    session: String,
    dir: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let data = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.csv"), "k\nsecret\n").unwrap();
    let state = AppState::open(data.path().to_path_buf()).unwrap();
    let api = state.app.clone();
    let app = sandalyst_desktop::builder(tauri::test::mock_builder(), state)
        .build(mock_context(noop_assets()))
        .unwrap();
    let webview = WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    let s = tauri::async_runtime::block_on(api.create_session(SessionConfig::default())).unwrap();
    let dir = s.dir().to_path_buf();
    let out = dir.join("outputs");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("t.csv"), "a,b\n<b>1</b>,2\n3,4\n").unwrap();
    std::fs::write(
        out.join("r.md"),
        "# R\n\n![c](c.png)\n<script>x()</script>\n",
    )
    .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path().join("secret.csv"), out.join("link.csv")).unwrap();
    Fixture {
        session: s.id().to_string(),
        _data: data,
        outside,
        webview,
        dir,
    }
}

fn call(f: &Fixture, cmd: &str, args: Value) -> Result<Value, String> {
    get_ipc_response(
        &f.webview,
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
    .map_err(|e| {
        e.as_str()
            .map(str::to_string)
            .unwrap_or_else(|| e.to_string())
    })
}

#[test]
fn previews_of_session_files() {
    let f = fixture();
    let t = call(
        &f,
        "preview_file",
        json!({"sessionId": f.session, "path": "outputs/t.csv"}),
    )
    .unwrap();
    assert_eq!(t["view"], "table");
    assert_eq!(
        t["page"]["rows"][0][0], "<b>1</b>",
        "cells are data, shown as text by the page"
    );
    let r = call(
        &f,
        "preview_file",
        json!({"sessionId": f.session, "path": "outputs/r.md"}),
    )
    .unwrap();
    let html = r["html"].as_str().unwrap();
    let src = format!("src=\"sandalyst://localhost/{}/outputs/c.png\"", f.session);
    assert!(html.contains(&src), "{html}");
    assert!(!html.contains("<script"), "{html}");
    let p = call(
        &f,
        "explore_page",
        json!({"sessionId": f.session, "path": "outputs/t.csv",
               "request": {"view": {"filters": [], "sort": []}, "offset": 1, "limit": 10}}),
    )
    .unwrap();
    assert_eq!(p["rows"][0][0], "3");
    assert_eq!(p["total_rows"], 2);
    // Sorted by the second column, largest first: 4 before 2.
    let sorted = call(
        &f,
        "explore_page",
        json!({"sessionId": f.session, "path": "outputs/t.csv",
               "request": {"view": {"sort": [{"column": 1, "descending": true}]}, "offset": 0, "limit": 10}}),
    )
    .unwrap();
    assert_eq!(sorted["rows"][0][0], "3");
    assert_eq!(sorted["rows"][1][0], "<b>1</b>");
    assert_eq!(sorted["row_numbers"], json!([1, 0]));
    // A filter keeps one of the two rows; the summary and the code see the same view.
    let view =
        json!({"filters": [{"column": 1, "op": "range", "min": "3", "max": null}], "sort": []});
    let kept = call(
        &f,
        "explore_page",
        json!({"sessionId": f.session, "path": "outputs/t.csv",
               "request": {"view": view, "offset": 0, "limit": 10}}),
    )
    .unwrap();
    assert_eq!(
        (kept["kept_rows"].clone(), kept["rows"][0][0].clone()),
        (json!(1), json!("3"))
    );
    let summary = call(
        &f,
        "explore_summary",
        json!({"sessionId": f.session, "path": "outputs/t.csv", "view": view}),
    )
    .unwrap();
    assert_eq!(summary["kept_rows"], 1);
    assert_eq!(summary["columns"][1]["max"], "4");
    let code = call(
        &f,
        "explore_code",
        json!({"sessionId": f.session, "path": "outputs/t.csv", "view": view}),
    )
    .unwrap();
    assert!(
        code["pandas"].as_str().unwrap().contains("read_csv"),
        "{code}"
    );
    let bad = call(
        &f,
        "explore_page",
        json!({"sessionId": f.session, "path": "outputs/t.csv",
               "request": {"view": {"sort": [{"column": 9}]}, "offset": 0, "limit": 10}}),
    );
    assert!(
        bad.is_err(),
        "a column that is not there is refused: {bad:?}"
    );
}

#[test]
fn paths_from_the_page_are_checked() {
    let f = fixture();
    let secret = f.outside.path().join("secret.csv");
    let escape = format!("outputs/../../../{}", secret.display());
    for path in [
        "../../etc/passwd",
        "outputs/../../x",
        escape.as_str(),
        secret.to_str().unwrap(),
        "/etc/passwd",
        "outputs/link.csv",
        "outputs",
        "outputs\\t.csv",
    ] {
        for cmd in [
            "preview_file",
            "explore_page",
            "explore_summary",
            "explore_code",
        ] {
            let r = call(
                &f,
                cmd,
                json!({"sessionId": f.session, "path": path, "view": {},
                       "request": {"view": {}, "offset": 0, "limit": 5}}),
            );
            assert!(r.is_err(), "{cmd} {path}: {r:?}");
            assert!(
                !format!("{r:?}").contains("secret"),
                "{cmd} {path} leaked: {r:?}"
            );
        }
    }
    for bad in ["../x", "a/b", "", "<script>"] {
        let r = call(
            &f,
            "preview_file",
            json!({"sessionId": bad, "path": "outputs/t.csv"}),
        );
        assert!(r.is_err(), "session id {bad:?}");
    }
    // Inputs are looked up by name in the session's list, never by a path.
    let r = call(
        &f,
        "preview_file",
        json!({"sessionId": f.session, "path": secret.to_str().unwrap(), "input": true}),
    );
    assert!(r.is_err(), "{r:?}");
    // Export only to an absolute destination (the dialog's).
    let r = call(
        &f,
        "export_session",
        json!({"sessionId": f.session, "dest": "relative/out", "zip": false, "transcript": false}),
    );
    assert!(r.is_err());
    let dest = f.outside.path().join("export");
    let r = call(
        &f,
        "export_session",
        json!({"sessionId": f.session, "dest": dest.to_str().unwrap(), "zip": false, "transcript": false}),
    );
    let done = r.unwrap();
    assert_eq!(done["path"], dest.to_str().unwrap());
    assert_eq!(
        done["notes"],
        json!([]),
        "no cell of t.csv starts like a formula"
    );
    assert!(dest.join("t.csv").is_file());
    assert!(!dest.join("link.csv").exists(), "links are not exported");
    assert!(f.dir.join("outputs/t.csv").is_file());
}

#[test]
fn the_report_to_share_is_written_where_the_dialog_said() {
    let f = fixture();
    let r = call(
        &f,
        "export_report",
        json!({"sessionId": f.session, "dest": "relative/report.html"}),
    );
    assert!(r.is_err(), "{r:?}");
    let r = call(
        &f,
        "export_report",
        json!({"sessionId": "../x", "dest": f.outside.path().join("x.html").to_str().unwrap()}),
    );
    assert!(r.is_err(), "{r:?}");
    // The dialog asked before replacing: an existing file is replaced.
    let dest = f.outside.path().join("report.html");
    std::fs::write(&dest, "old").unwrap();
    let done = call(
        &f,
        "export_report",
        json!({"sessionId": f.session, "dest": dest.to_str().unwrap()}),
    )
    .unwrap();
    assert_eq!(done["path"], dest.to_str().unwrap());
    let html = std::fs::read_to_string(&dest).unwrap();
    assert!(html.contains("Content-Security-Policy"), "{html}");
    assert!(html.contains("<td>&lt;b&gt;1&lt;/b&gt;</td>"), "{html}");
    assert!(!html.contains("<script"), "{html}");
    assert!(
        !html.contains("secret"),
        "the link to a file outside is not followed"
    );
}

#[test]
fn sessions_list_rename_delete() {
    let f = fixture();
    let list = call(&f, "list_sessions", json!({})).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    let title = "Energy <b>check</b>";
    call(
        &f,
        "rename_session",
        json!({"sessionId": f.session, "title": title}),
    )
    .unwrap();
    let list = call(&f, "list_sessions", json!({})).unwrap();
    assert_eq!(
        list[0]["title"], title,
        "titles are data; the page shows them as text"
    );
    assert!(call(
        &f,
        "rename_session",
        json!({"sessionId": f.session, "title": "  "})
    )
    .is_err());
    call(&f, "delete_session", json!({"sessionId": f.session})).unwrap();
    assert_eq!(call(&f, "list_sessions", json!({})).unwrap(), json!([]));
    assert!(!f.dir.exists());
}

/// An ask that another process is running (it holds the session's lock) is drawn as
/// running, with a word on where, never as interrupted.
#[test]
fn an_ask_running_in_another_process_is_not_drawn_as_interrupted() {
    let f = fixture();
    let meta_path = f.dir.join("run.json");
    let mut meta: Value =
        serde_json::from_str(&std::fs::read_to_string(&meta_path).unwrap()).unwrap();
    meta["prompt"] = json!("from a terminal");
    meta["asks"] = json!([{
        "id": "ask-1", "prompt": "from a terminal", "model": "m",
        "created": "2026-12-01T10:00:00Z", "status": null
    }]);
    std::fs::write(&meta_path, meta.to_string()).unwrap();
    // The other process: its lock on the session's folder (a second open file
    // description conflicts like another process's).
    let held = sandalyst::store::lock::SessionLock::try_acquire(&f.dir).unwrap();
    let opened = call(&f, "open_session", json!({ "sessionId": f.session })).unwrap();
    let events = opened["asks"][0]["events"].as_array().unwrap();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(kinds.contains(&"ask_started"), "{events:?}");
    assert!(!kinds.contains(&"ask_finished"), "{events:?}");
    // Said as a typed notice the page branches on.
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "notice" && e["notice"] == "running_elsewhere"),
        "{events:?}"
    );
    drop(held);
    // Its owner gone (the lock free), the next open says interrupted.
    let opened = call(&f, "open_session", json!({ "sessionId": f.session })).unwrap();
    let events = opened["asks"][0]["events"].as_array().unwrap();
    let last = events.last().unwrap();
    assert_eq!(last["type"], "ask_finished", "{events:?}");
    assert_eq!(last["status"]["status"], "interrupted", "{events:?}");
}

/// A new session takes the settings' approval mode (the page's default for the
/// composer's select); an answer for a call that does not wait is `not_pending`.
#[test]
fn new_sessions_take_the_settings_approval_mode_and_stray_answers_are_refused() {
    let f = fixture();
    let opened = call(&f, "open_session", json!({ "sessionId": f.session })).unwrap();
    assert_eq!(opened["approval"], "auto");
    let mut settings = call(&f, "get_settings", json!({})).unwrap();
    assert_eq!(settings["approval"], "auto");
    settings["approval"] = json!("shell");
    call(&f, "save_settings", json!({ "settings": settings })).unwrap();
    let created = call(&f, "create_session", json!({})).unwrap();
    assert_eq!(created["approval"], "shell");

    let answer = |a: Value| {
        call(
            &f,
            "answer_approval",
            json!({"sessionId": f.session, "callId": "call_1", "answer": a}),
        )
    };
    let refused = answer(json!({"decision": "approve"})).unwrap_err();
    let refused: Value = serde_json::from_str(&refused).unwrap();
    assert_eq!(refused["code"], "not_pending", "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("call_1"));
    // An answer of no known shape never reaches the core.
    assert!(answer(json!({"decision": "maybe"})).is_err());
}

/// The assistant's Markdown comes back as the core's sanitised HTML; a chart is saved
/// where the dialog said, and only files of the session are.
#[test]
fn answers_render_and_charts_are_saved() {
    let f = fixture();
    let html = call(
        &f,
        "render_markdown",
        json!({"sessionId": f.session, "text": "| a | b |\n|---|---|\n| 1 | <img src=x onerror=alert(1)> |\n\n![c](c.png)\n"}),
    )
    .unwrap();
    let html = html.as_str().unwrap();
    assert!(
        html.contains("<table>") && html.contains("<td>1</td>"),
        "{html}"
    );
    assert!(html.contains("&lt;img src=x"), "{html}");
    let src = format!("src=\"sandalyst://localhost/{}/outputs/c.png\"", f.session);
    assert!(html.contains(&src), "{html}");
    assert!(call(
        &f,
        "render_markdown",
        json!({"sessionId": "../x", "text": "a"})
    )
    .is_err());

    std::fs::write(f.dir.join("outputs/c.png"), b"PNG").unwrap();
    let dest = f.outside.path().join("chart.png");
    let r = call(
        &f,
        "save_file",
        json!({"sessionId": f.session, "path": "outputs/c.png", "dest": dest.to_str().unwrap()}),
    );
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(std::fs::read(&dest).unwrap(), b"PNG");
    let stolen = f.outside.path().join("stolen.csv");
    for (path, to) in [
        ("outputs/link.csv", stolen.to_str().unwrap()),
        ("../../etc/passwd", stolen.to_str().unwrap()),
        ("outputs/c.png", "relative.png"),
    ] {
        let r = call(
            &f,
            "save_file",
            json!({"sessionId": f.session, "path": path, "dest": to}),
        );
        assert!(r.is_err(), "{path} -> {to}: {r:?}");
    }
    assert!(!stolen.exists());
}

#[test]
fn models_are_listed_from_the_providers_server() {
    let f = fixture();
    let offline = call(&f, "list_models", json!({"provider": "offline"})).unwrap();
    assert_eq!(offline[0]["spec"], "offline");
    // A one-request double of a compatible server's /v1/models on 127.0.0.1.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut sock, _) = listener.accept().unwrap();
        let mut head = [0u8; 4096];
        let n = sock.read(&mut head).unwrap();
        let body =
            r#"{"object":"list","data":[{"id":"qwen2.5-coder-1.5b","owned_by":"llamacpp"}]}"#;
        write!(
            sock,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        String::from_utf8_lossy(&head[..n]).into_owned()
    });
    let listed = call(
        &f,
        "list_models",
        json!({"provider": "openai-compatible", "baseUrl": base}),
    )
    .unwrap();
    assert_eq!(
        (listed[0]["spec"].as_str(), listed[1]["spec"].as_str()),
        (
            Some("offline"),
            Some("openai-compatible:qwen2.5-coder-1.5b")
        )
    );
    assert!(server.join().unwrap().starts_with("GET /v1/models "));
}
