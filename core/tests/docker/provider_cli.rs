//! Providers through the `sandalyst` command line: the one-command reference case with
//! `--model openai:gpt-5.4` (the server is local, named by OPENAI_BASE_URL), usage and
//! cost at the end, and the messages when no model or no key is configured.

use crate::common;

use crate::common::wire;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use wire::reference::responses_script;
use wire::{WireServer, TEST_KEY};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The command line with none of the user's own provider settings.
fn sandalyst(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandalyst"));
    c.args(args)
        .current_dir(repo())
        .env("SANDALYST_DATA_DIR", dir.join("data"))
        .env("SANDALYST_CONFIG", dir.join("config.toml"));
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "SANDALYST_COMPATIBLE_API_KEY",
        // No keychain: the lookup finds nothing instead of the developer's own keys.
        "DBUS_SESSION_BUS_ADDRESS",
    ] {
        c.env_remove(var);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_case_in_one_command_with_openai() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let server = WireServer::start(responses_script()).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let base = format!("{}/v1", server.base);
    let args = [
        "run",
        "--model",
        "openai:gpt-5.4",
        "--input",
        "examples/building_energy.csv",
        "--prompt-file",
        "examples/anomaly_task.md",
        "--out",
        out.to_str().unwrap(),
    ];
    let env = [
        ("OPENAI_API_KEY", TEST_KEY),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    // The binary blocks this thread; the server keeps answering on the other worker.
    let o = tokio::task::block_in_place(|| sandalyst(&args, dir.path(), &env));
    let err = text(&o.stderr);
    assert!(o.status.success(), "stderr:\n{err}");
    assert_eq!(text(&o.stdout).trim(), out.to_str().unwrap());
    assert!(
        err.contains("model: openai:gpt-5.4 (OpenAI Responses API at http://127.0.0.1"),
        "{err}"
    );
    assert!(
        err.contains(
            "tokens: 3000 in (2400 cached), 300 out, estimated cost $0.0066 (prices as of"
        ),
        "{err}"
    );
    assert!(!err.contains("SECRET"), "{err}");
    for f in ["anomalies.csv", "energy_anomalies.png", "anomaly_report.md"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    assert_eq!(
        server.received()[0].header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );

    // `runs show` reads the provider's run like any other.
    let list = text(&sandalyst(&["runs", "list"], dir.path(), &[]).stdout);
    let id = list.split_whitespace().next().unwrap().to_string();
    let show = text(&sandalyst(&["runs", "show", &id], dir.path(), &[]).stdout);
    assert!(
        show.contains("model openai:gpt-5.4") && show.contains("--- python (call_1)"),
        "{show}"
    );
    assert!(
        show.contains("tokens: 3000 in (2400 cached), 300 out, estimated cost $0.0066"),
        "{show}"
    );
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("data").join(&id).join("run.json")).unwrap(),
    )
    .unwrap();
    assert!(
        (meta["cost_usd"].as_f64().unwrap() - 0.0066).abs() < 1e-9,
        "{meta}"
    );
}

#[test]
fn no_model_configured_runs_the_offline_analyst_and_says_so() {
    if common::no_engine_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A missing input ends the run before any container starts; the note comes first.
    let o = sandalyst(
        &["run", "-i", "no/such/file.csv", "-p", "x"],
        dir.path(),
        &[],
    );
    let err = text(&o.stderr);
    assert!(
        err.contains("note: no model configured") && err.contains("offline analyst"),
        "{err}"
    );
    assert!(!o.status.success());
}

#[test]
fn a_missing_key_or_bad_spec_is_one_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let o = sandalyst(
        &["run", "-m", "openai:gpt-5.4", "-i", "x.csv", "-p", "x"],
        dir.path(),
        &[],
    );
    let err = text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("no API key for openai: set OPENAI_API_KEY"),
        "{err}"
    );
    let o = sandalyst(
        &["run", "-m", "gpt-5.4", "-i", "x.csv", "-p", "x"],
        dir.path(),
        &[],
    );
    assert!(
        text(&o.stderr).contains("did you mean openai:gpt-5.4"),
        "{}",
        text(&o.stderr)
    );
    std::fs::write(
        dir.path().join("config.toml"),
        "model = \"ollama:qwen2.5-coder\"\n[openai]\napi_key = \"sk-no\"\n",
    )
    .unwrap();
    let o = sandalyst(&["run", "-i", "x.csv", "-p", "x"], dir.path(), &[]);
    assert!(
        text(&o.stderr).contains("keys do not belong"),
        "{}",
        text(&o.stderr)
    );
}

/// A model that answers at once without making the output the task names: the run
/// ends incomplete, exits 3 (not 2, which is a usage error's), and `--json` says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_incomplete_run_exits_3_and_its_json_names_what_is_missing() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    use wire::responses::Events;
    // Enough replies for the loop's reminders that the output is missing.
    let script = (0..8)
        .map(|_| wire::Answer::Sse(Events::new().text(0, "Done.", 8).completed(100, 0, 10)))
        .collect();
    let server = WireServer::start(script).await;
    let dir = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.base);
    let args = [
        "run",
        "--model",
        "openai:gpt-5.4",
        "--input",
        "examples/building_energy.csv",
        "--prompt",
        "Plot the energy use to output/chart.png",
        "--json",
    ];
    let env = [
        ("OPENAI_API_KEY", TEST_KEY),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    let o = tokio::task::block_in_place(|| sandalyst(&args, dir.path(), &env));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 1, "one document: {out}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["status"], "incomplete", "{r}");
    assert_eq!(r["exit_code"], 3);
    assert_eq!(
        r["status_detail"]["problems"][0]["path"], "output/chart.png",
        "{r}"
    );
    assert_eq!(r["answer"], "Done.");
    assert!(
        r["ask_id"].is_string() && r["session_id"].is_string(),
        "{r}"
    );
    assert_eq!(r["error"], serde_json::Value::Null);
}

/// A whole ask with a provider key set, logged at the most verbose level, and a
/// provider that fails once echoing the key: the log tells the ask's story (the
/// provider's failure included) and holds the key nowhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_a_key_logs_its_story_and_never_the_key() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    use wire::responses::Events;
    let echo = format!(r#"{{"error": {{"message": "overloaded, key {TEST_KEY}"}}}}"#);
    let script = vec![
        wire::Answer::status_with(503, &[("retry-after", "0")], &echo),
        wire::Answer::Sse(Events::new().text(0, "Hello.", 8).completed(100, 0, 10)),
    ];
    let server = WireServer::start(script).await;
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let base = format!("{}/v1", server.base);
    let args = [
        "run",
        "--model",
        "openai:gpt-5.4",
        "--input",
        "examples/building_energy.csv",
        "--prompt",
        "Say hello",
    ];
    let env = [
        ("OPENAI_API_KEY", TEST_KEY),
        ("OPENAI_BASE_URL", base.as_str()),
        ("SANDALYST_LOG", "trace"),
        ("SANDALYST_LOG_DIR", logs.to_str().unwrap()),
    ];
    let o = tokio::task::block_in_place(|| sandalyst(&args, dir.path(), &env));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(server.received().len(), 2, "the failure, then the answer");
    let mut log = String::new();
    for e in std::fs::read_dir(&logs).unwrap() {
        log.push_str(&std::fs::read_to_string(e.unwrap().path()).unwrap());
    }
    for line in [
        "session created",
        "ask started",
        "sandbox started",
        "model request failed",
        "503",
        "ask ended",
        "status=\"finished\"",
    ] {
        assert!(log.contains(line), "{line:?} not in the log:\n{log}");
    }
    for shown in [log.as_str(), err.as_str()] {
        assert!(!shown.contains(TEST_KEY), "the key is in:\n{shown}");
        assert!(!shown.contains("SECRET"), "the key is in:\n{shown}");
    }
}
