//! The app on a machine whose engine is published only as a docker CLI context (as
//! Colima, Rancher Desktop and Docker Desktop publish theirs): `DOCKER_HOST` unset, a
//! temporary HOME whose `~/.docker/config.json` has `currentContext` naming a context
//! of `~/.docker/contexts/meta/<sha256 of the name>/meta.json`.
//!
//! The context's endpoint is a socket path that only the store names (a link to the
//! real daemon's socket in the temporary HOME), so nothing but the context can lead
//! the app there; and pointed at a path that does not exist, the app finds no engine
//! although the default socket answers: a chosen context is the only place tried.

use super::*;

use sandalyst::sandbox::contexts::context_id;

/// The real daemon's socket, which the context's link points at.
const DAEMON: &str = "/var/run/docker.sock";

/// Variables that would choose the engine before the context does.
const ENGINE_VARIABLES: [&str; 5] = [
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_CONFIG",
    "DOCKER_TLS_VERIFY",
    "DOCKER_CERT_PATH",
];

/// `~/.docker` of `home` with the current context `name` at `host`.
fn context_store(home: &Path, name: &str, host: &str) {
    let config = home.join(".docker");
    let meta = config.join("contexts/meta").join(context_id(name));
    std::fs::create_dir_all(&meta).unwrap();
    let doc = json!({
        "Name": name,
        "Metadata": {},
        "Endpoints": {"docker": {"Host": host, "SkipTLSVerify": false}},
    });
    std::fs::write(meta.join("meta.json"), doc.to_string()).unwrap();
    std::fs::write(
        config.join("config.json"),
        json!({ "currentContext": name }).to_string(),
    )
    .unwrap();
}

async fn engine_status(app: &App) -> Value {
    app.c()
        .execute_async(
            "const [done] = arguments; window.__TAURI__.core.invoke('engine_status').then(done, e => done({error: String(e)}))",
            vec![],
        )
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_of_the_current_docker_context_runs_an_ask_with_docker_host_unset() {
    if !Path::new(DAEMON).exists() {
        assert!(
            std::env::var_os("SANDALYST_REQUIRE_ENGINE").is_none(),
            "no Docker daemon at {DAEMON}"
        );
        eprintln!("SKIPPED: no Docker daemon at {DAEMON}");
        return;
    }
    let display = Display::get();
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let sock = home.path().join("engine.sock");
    std::os::unix::fs::symlink(DAEMON, &sock).unwrap();
    let host = format!("unix://{}", sock.display());
    context_store(home.path(), "lab", &host);
    let home_dir = home.path().to_str().unwrap();
    let env = [("HOME", home_dir)];

    // 1. The engine is the context's, and the window says so.
    let started = Instant::now();
    let app = App::start_without(&display, data.path(), &env, &ENGINE_VARIABLES, &[]).await;
    let status = engine_status(&app).await;
    let line = status["engine"].as_str().unwrap_or_default();
    assert!(
        status["reachable"] == json!(true) && line.contains(&format!("context lab: {host}")),
        "the engine was not found through context lab: {status}"
    );
    app.click("#open-settings").await;
    app.wait_js(
        "return document.querySelector('#settings').open && document.querySelector('#engine-line').innerText !== ''",
        30,
    )
    .await;
    let shown = app.text("#engine-line").await;
    assert!(
        shown.contains(&format!("context lab: {host}")),
        "the settings' engine line: {shown:?}"
    );
    app.js("document.querySelector('#engine-line').scrollIntoView({block: 'center'}); return true")
        .await;
    maybe_shot(&display, "context-settings").await;
    app.js("document.querySelector('#settings').close(); return true")
        .await;

    // 2. An ask on the offline analyst runs in that engine to its answer.
    let table = work.path().join("meter.csv");
    let mut text = String::from("hour,kwh\n");
    for h in 0..24 {
        text.push_str(&format!("{h},{}\n", 10 + h % 6));
    }
    std::fs::write(&table, text).unwrap();
    app.add_file(&table).await;
    app.ask("What is the mean of kwh?", "offline").await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
        120,
    )
    .await;
    let ending = app.text(".ask .ending").await;
    let answer = app.text(".ask").await;
    assert!(
        ending.starts_with("Finished") && answer.contains("12.5"),
        "the ask ended as {ending:?}:\n{answer}"
    );
    maybe_shot(&display, "context-answer").await;
    app.quit().await;
    let asked = started.elapsed().as_secs_f64();

    // 3. The context pointed at a socket that is not there: no engine, named as the
    //    context's, although the default socket answers.
    let gone = format!("unix://{}", home.path().join("gone.sock").display());
    context_store(home.path(), "lab", &gone);
    let app = App::start_without(&display, data.path(), &env, &ENGINE_VARIABLES, &[]).await;
    app.wait_js("return !document.querySelector('#banner').hidden", 30)
        .await;
    let banner = app.text("#banner").await;
    maybe_shot(&display, "context-gone").await;
    eprintln!("banner with the context's socket gone: {banner}");
    assert!(banner.contains(&format!("context lab: {gone}")), "{banner}");
    let status = engine_status(&app).await;
    assert_eq!(status["reachable"], json!(false), "{status}");
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("context lab: {gone}"))),
        "the message does not name the context: {status}"
    );
    app.quit().await;
    eprintln!(
        "context lab ({host}): started, found the engine and answered in {asked:.1} s; {line}"
    );
}
