//! The `sandalyst` command line for scripts, with no engine: `--json` listings that
//! parse, the exit codes (2 for usage, 3 for an ask that did not finish), completions
//! and the man page, and every environment variable the code reads named in `--help`.
//! Sessions are made beforehand through the library on the in-memory sandbox; the
//! binary finds no engine (`DOCKER_HOST` names a socket that is not there).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use sandalyst::api::App;
use sandalyst::model::scripted::{ScriptedModel, Step};
use sandalyst::model::Item;
use sandalyst::session::{FakeFactory, SessionConfig};
use serde_json::Value;

/// The binary with a data folder of its own, no config, no keys and no engine.
fn sandalyst(args: &[&str], data: &Path) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandalyst"));
    c.args(args)
        .env("SANDALYST_DATA_DIR", data)
        .env("SANDALYST_CONFIG", data.join("no-config.toml"))
        .env("SANDALYST_LOG_DIR", data.join("logs"))
        .env(
            "DOCKER_HOST",
            format!("unix://{}", data.join("no-engine.sock").display()),
        )
        .env_remove("DOCKER_CONTEXT")
        .env_remove("SANDALYST_LOG")
        .stdin(std::process::Stdio::null());
    for var in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "SANDALYST_COMPATIBLE_API_KEY",
        "DBUS_SESSION_BUS_ADDRESS",
    ] {
        c.env_remove(var);
    }
    c.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A data folder holding one session whose ask ended incomplete (it named
/// output/chart.png and left it empty); its id.
async fn incomplete_session(root: &Path) -> String {
    let app = App::with_factory(root.to_path_buf(), Arc::new(FakeFactory::default())).unwrap();
    let session = app.create_session(SessionConfig::default()).await.unwrap();
    let model = ScriptedModel::new([
        ScriptedModel::python("c1", "write output/chart.png"),
        Step::Reply(vec![Item::Assistant {
            text: "Done.".into(),
        }]),
    ]);
    let ask = app
        .ask(
            &session,
            "Plot it to output/chart.png".into(),
            Box::new(model),
        )
        .unwrap();
    let outcome = ask.follow(&|_| {}).await;
    assert_eq!(outcome.status.code(), "incomplete", "{:?}", outcome.status);
    session.close().await;
    session.id().to_string()
}

#[tokio::test]
async fn runs_list_and_show_as_json_parse_and_carry_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("runs");
    let id = incomplete_session(&data).await;
    std::fs::create_dir(data.join("20200101-000000-0000")).unwrap();

    let o = sandalyst(&["runs", "list", "--json"], &data);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 1, "one document: {out}");
    let list: Value = serde_json::from_str(&out).unwrap();
    let run = &list["runs"][0];
    assert_eq!(run["id"], id.as_str());
    assert_eq!(run["status"], "incomplete");
    assert!(
        run["status_text"]
            .as_str()
            .unwrap()
            .starts_with("incomplete: output/chart.png"),
        "{run}"
    );
    assert_eq!(run["asks"], 1);
    assert_eq!(list["unreadable"][0]["folder"], "20200101-000000-0000");

    let o = sandalyst(&["runs", "show", &id, "--json"], &data);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let shown: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(shown["meta"]["id"], id.as_str());
    assert_eq!(
        shown["meta"]["asks"][0]["prompt"],
        "Plot it to output/chart.png"
    );
    assert!(
        shown["transcript"].as_array().unwrap().len() >= 3,
        "{shown}"
    );
    assert_eq!(shown["unreadable_lines"], serde_json::json!([]));

    // The offline analyst is listed without any server.
    let o = sandalyst(&["models", "--model", "offline", "--json"], &data);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let models: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(models["models"][0]["spec"], "offline");

    // A missing session is an error (1), said on stderr, with nothing on stdout.
    let o = sandalyst(&["runs", "show", "no-such-session", "--json"], &data);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
}

#[test]
fn a_usage_error_exits_2_and_is_told_apart_from_an_error() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["runs", "list", "--no-such-flag"][..],
        &["run", "--prompt", "x"][..], // no --input
        &["no-such-command"][..],
        &["completions", "no-such-shell"][..],
    ] {
        let o = sandalyst(args, dir.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
    }
    // A flag that parses, on an input that is not there: an error, not usage.
    let o = sandalyst(
        &["run", "-i", "no-such-file.csv", "-p", "total"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
}

/// An ask that does not finish exits 3, whatever stopped it; here the sandbox cannot
/// start (no engine), so the ask is recorded as failed.
#[tokio::test]
async fn an_ask_that_does_not_finish_exits_3_with_its_typed_status() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("runs");
    let id = incomplete_session(&data).await;
    let o = sandalyst(&["ask", &id, "-p", "and the mean?", "--json"], &data);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let result: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(result["session_id"], id.as_str());
    assert_eq!(result["status"], "failed");
    assert_eq!(result["exit_code"], 3);
    assert_eq!(result["error"]["code"], "engine_unavailable", "{result}");
    // The listing now shows the failed ask as the session's latest.
    let list: Value =
        serde_json::from_slice(&sandalyst(&["runs", "list", "--json"], &data).stdout).unwrap();
    assert_eq!(list["runs"][0]["status"], "failed");
    assert_eq!(list["runs"][0]["asks"], 2);
}

#[test]
fn help_names_the_exit_codes_and_completions_and_man_page_are_made() {
    let dir = tempfile::tempdir().unwrap();
    let help = text(&sandalyst(&["--help"], dir.path()).stdout);
    for code in ["0 ", "1 ", "2 ", "3 ", "130 "] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(code)),
            "exit code {code}missing:\n{help}"
        );
    }
    let short = text(&sandalyst(&["-h"], dir.path()).stdout);
    assert!(short.contains("Exit codes:"), "{short}");

    let bash = sandalyst(&["completions", "bash"], dir.path());
    assert_eq!(bash.status.code(), Some(0));
    let bash = text(&bash.stdout);
    assert!(
        bash.contains("_sandalyst()") && bash.contains("--json"),
        "{bash}"
    );
    let zsh = text(&sandalyst(&["completions", "zsh"], dir.path()).stdout);
    assert!(zsh.starts_with("#compdef sandalyst"), "{zsh}");

    let man = text(&sandalyst(&["man"], dir.path()).stdout);
    assert!(man.contains(".TH sandalyst 1"), "{man}");
    assert!(
        man.contains("SANDALYST_CONFIG"),
        "the environment is in the page"
    );
    let pages = dir.path().join("man");
    let o = sandalyst(&["man", "--dir", pages.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    for page in ["sandalyst.1", "sandalyst-run.1", "sandalyst-runs-list.1"] {
        assert!(pages.join(page).is_file(), "{page} missing");
    }
}

/// Variables named in the source that this process does not read: what the sandbox,
/// an exported script or the desktop reads, and words that only look like variables.
const NOT_READ_HERE: &[&str] = &[
    // Set in the sandbox or read by code that runs there (kernel.py, the egress
    // forwarder, exported scripts).
    "SANDALYST_SANDBOX",
    "SANDALYST_RUN_OUTSIDE_SANDBOX",
    "SANDALYST_OUTPUT_CAP",
    "SANDALYST_OUTPUT_DIR",
    "SANDALYST_EGRESS_SOCKET",
    "SANDALYST_EGRESS_PORT",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    // Markers of the offline analyst's machine lines, not variables.
    "SANDALYST_ANSWER",
    "SANDALYST_PROFILE",
    "SANDALYST_RESULT",
    "SANDALYST_VALIDATION",
    // Words: an error name matched in a message, an example in a doc comment.
    "CERTIFICATE_VERIFY_FAILED",
    "OPENROUTER_API_KEY",
    // Set by cargo at build time.
    "CARGO_PKG_VERSION",
    "CARGO_MANIFEST_DIR",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `code` without its `#[cfg(test)]` items (each cut through its closing brace) and
/// without files that are tests whole (`tests.rs`).
fn without_tests(code: &str) -> String {
    let mut kept = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..at]);
        let after = &rest[at..];
        let open = after.find(['{', ';']).unwrap_or(after.len());
        if after[open..].starts_with(';') {
            rest = &after[open + 1..];
            continue;
        }
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    kept.push_str(rest);
    kept
}

/// Every `"NAME_LIKE_THIS"` string of the core's and the command line's own code.
fn names_in_source() -> std::collections::BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut names = std::collections::BTreeSet::new();
    for f in files {
        if f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let code = without_tests(&std::fs::read_to_string(&f).unwrap());
        // A string literal that is only an upper-case name with an underscore.
        let b = code.as_bytes();
        for (at, _) in code.match_indices('"') {
            let len = b[at + 1..]
                .iter()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || **c == b'_')
                .count();
            let name = &code[at + 1..at + 1 + len];
            if len > 3
                && b.get(at + 1 + len) == Some(&b'"')
                && name.contains('_')
                && name.starts_with(|c: char| c.is_ascii_uppercase())
            {
                names.insert(name.to_string());
            }
        }
    }
    names
}

/// A variable the code reads and `--help` does not name fails here: add it to
/// `api::environment::VARIABLES` (or, if this process never reads it, above).
#[test]
fn every_environment_variable_the_code_reads_is_in_the_help() {
    let dir = tempfile::tempdir().unwrap();
    let help = text(&sandalyst(&["--help"], dir.path()).stdout);
    let env_section = help
        .split("Environment:")
        .nth(1)
        .expect("an Environment section");
    // Whole names only: a name is not listed by a longer one that starts with it.
    let listed: std::collections::BTreeSet<&str> = env_section
        .split(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let names = names_in_source();
    // The scan sees the variables it must: read through a closure, a constant, clap.
    for known in [
        "SANDALYST_CONFIG",
        "SANDALYST_SSH_CONFIG",
        "SANDALYST_DATA_DIR",
    ] {
        assert!(names.contains(known), "{known} not found in the source");
    }
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| !NOT_READ_HERE.contains(&n.as_str()))
        .filter(|n| !listed.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "read in the code but not in --help: {missing:?}\n{env_section}"
    );
    // Nothing listed as "not read here" is in fact listed as read.
    for n in NOT_READ_HERE {
        assert!(!listed.contains(n), "{n} is in the help and excepted");
    }
}

/// Every log file's text in `dir`.
fn logs_in(dir: &Path) -> String {
    let mut text = String::new();
    for e in std::fs::read_dir(dir).unwrap() {
        text.push_str(&std::fs::read_to_string(e.unwrap().path()).unwrap());
    }
    text
}

/// A failed ask leaves its story in the day's log file: the session opened, the ask
/// started, why the sandbox did not start, and how the ask ended; nothing on stderr
/// unless asked for.
#[tokio::test]
async fn an_ask_that_fails_is_in_the_log_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("runs");
    let id = incomplete_session(&data).await;
    let o = sandalyst(&["ask", &id, "-p", "and the mean?"], &data);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains(" INFO "), "{}", text(&o.stderr));
    let logs = data.join("logs");
    let files: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(
        files[0].starts_with("cli.") && files[0].ends_with(".log"),
        "{files:?}"
    );
    let log = logs_in(&logs);
    for line in [
        "sandalyst started",
        "command=\"ask\"",
        "session opened",
        "ask started",
        "the sandbox did not start",
        "code=engine_unavailable",
        "ask ended",
        "status=\"failed\"",
    ] {
        assert!(log.contains(line), "{line:?} not in the log:\n{log}");
    }
    assert!(
        !log.contains("and the mean?"),
        "the prompt's words are not logged"
    );

    // With -v the same lines go to stderr too.
    let o = sandalyst(&["ask", &id, "-p", "and the median?", "-v"], &data);
    let err = text(&o.stderr);
    assert!(
        err.contains("ask started") && err.contains("ask ended"),
        "{err}"
    );
}

/// A provider that refuses the key and echoes it back: the failure is logged, at the
/// most verbose level, and the key is in no log line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_the_provider_echoes_never_reaches_the_log() {
    use crate::common::wire::{Answer, WireServer, TEST_KEY};
    let echo = format!(r#"{{"error": {{"message": "Incorrect API key provided: {TEST_KEY}"}}}}"#);
    let server = WireServer::start(vec![Answer::status(401, &echo)]).await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("runs");
    let base = format!("{}/v1", server.base);
    let o = tokio::task::block_in_place(|| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_sandalyst"));
        c.args(["models", "--model", "openai", "--json"])
            .env("SANDALYST_DATA_DIR", &data)
            .env("SANDALYST_CONFIG", dir.path().join("no-config.toml"))
            .env("SANDALYST_LOG_DIR", data.join("logs"))
            .env("SANDALYST_LOG", "trace")
            .env("OPENAI_API_KEY", TEST_KEY)
            .env("OPENAI_BASE_URL", &base)
            .env_remove("DBUS_SESSION_BUS_ADDRESS");
        c.output().unwrap()
    });
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    // The key went out (so there was something to leak) ...
    assert_eq!(
        server.received()[0].header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    let log = logs_in(&data.join("logs"));
    // ... the failure is logged, from the trace of the request on ...
    assert!(
        log.contains("the command failed") && log.contains("401"),
        "{log}"
    );
    assert!(log.contains("TRACE"), "logged at trace: {log}");
    // ... and neither the key nor its secret part is anywhere in it, nor on stderr.
    for shown in [log.as_str(), &text(&o.stderr)] {
        assert!(!shown.contains(TEST_KEY), "{shown}");
        assert!(!shown.contains("SECRET"), "{shown}");
    }
}

/// `chat --json` writes one line of JSON per ask (a stream), and exits as its last
/// ask ended: here each ask fails, as no engine answers.
#[test]
fn chat_as_json_is_one_line_per_ask() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("runs");
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandalyst"));
    c.args(["chat", "--json"])
        .env("SANDALYST_DATA_DIR", &data)
        .env("SANDALYST_CONFIG", data.join("no-config.toml"))
        .env("SANDALYST_LOG_DIR", data.join("logs"))
        .env(
            "DOCKER_HOST",
            format!("unix://{}", dir.path().join("no-engine.sock").display()),
        )
        .env_remove("DOCKER_CONTEXT")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"the mean?\n\nthe median?\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let lines: Vec<Value> = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{}", text(&o.stdout));
    assert_eq!(lines[0]["session_id"], lines[1]["session_id"]);
    assert_ne!(lines[0]["ask_id"], lines[1]["ask_id"]);
    for l in &lines {
        assert_eq!(l["status"], "failed", "{l}");
        assert_eq!(l["error"]["code"], "engine_unavailable", "{l}");
    }
}

/// `chat -i` and `ask -i` add files as the desktop does (through the one API), and
/// print what it said about a dropped folder's entries: a link that leaves the folder
/// is named, left out, with how to include it. No engine is needed to be told.
#[cfg(unix)]
#[tokio::test]
async fn the_command_line_prints_what_adding_a_folder_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("runs");
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("a.csv"), "a\n1\n").unwrap();
    std::os::unix::fs::symlink("/etc/shadow", docs.join("shadow")).unwrap();
    let docs = docs.to_str().unwrap();
    let said = "left out input/docs/shadow: it is a link to /etc/shadow, outside the folder; links that leave a dropped folder are not followed (to include it, add the target itself, or set follow_links = \"outside\" in config.toml";

    // A chat with nothing to ask: the files are added, the notes printed, and it ends.
    let chat = sandalyst(&["chat", "-i", docs], &data);
    let err = text(&chat.stderr);
    assert_eq!(chat.status.code(), Some(0), "{err}");
    assert!(err.contains("  input/docs/a.csv (4 bytes)"), "{err}");
    assert!(err.contains(said), "{err}");
    assert!(!err.contains("input/docs/shadow ("), "{err}");

    // An ask in an earlier session: the same note, then the ask fails (no engine).
    let id = incomplete_session(&dir.path().join("other")).await;
    let ask = sandalyst(
        &["ask", &id, "-p", "look", "-i", docs],
        &dir.path().join("other"),
    );
    let err = text(&ask.stderr);
    assert_eq!(ask.status.code(), Some(3), "{err}");
    assert!(err.contains(said), "{err}");
    // The session's files: the CSV, not the link left out.
    let meta = dir.path().join("other").join(&id).join("run.json");
    let meta: Value = serde_json::from_slice(&std::fs::read(meta).unwrap()).unwrap();
    let names: Vec<&str> = meta["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert_eq!(names, ["docs/a.csv"], "{meta}");
}

/// `runs export ID --report FILE` writes the shared HTML report (no engine needed): one
/// page with the answer, the chart inlined and the model's markup as text; `--json`
/// says where; an existing file is not replaced; DIR or --report is required.
#[tokio::test]
async fn runs_export_writes_the_shared_report() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("runs");
    let app = App::with_factory(data.clone(), Arc::new(FakeFactory::default())).unwrap();
    let session = app.create_session(SessionConfig::default()).await.unwrap();
    let model = ScriptedModel::new([
        ScriptedModel::python(
            "c1",
            "png output/chart.png\nwrite output/report.md Peaks <script>alert(1)</script> on Mondays",
        ),
        Step::Reply(vec![Item::Assistant {
            text: "**Weekly peaks** on Mondays.".into(),
        }]),
    ]);
    let ask = app
        .ask(&session, "Plot the energy use".into(), Box::new(model))
        .unwrap();
    let _ = ask.follow(&|_| {}).await;
    session.close().await;
    let id = session.id().to_string();
    let id = id.as_str();

    let file = dir.path().join("shared").join("report.html");
    let f = file.to_str().unwrap();
    let o = sandalyst(&["runs", "export", id, "--report", f, "--json"], &data);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let done: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(done, serde_json::json!({ "paths": [f] }));
    let html = std::fs::read_to_string(&file).unwrap();
    assert!(html.contains("content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'"));
    assert!(html.contains("<strong>Weekly peaks</strong> on Mondays."));
    assert!(html.contains("src=\"data:image/png;base64,"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.to_ascii_lowercase().contains("<script"));

    // The same file again: refused, and left as it was.
    let o = sandalyst(&["runs", "export", id, "--report", f], &data);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("already exists"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), html);

    // Neither a folder nor a report, or a notebook with no folder: usage errors.
    for args in [
        &["runs", "export", id][..],
        &["runs", "export", id, "--notebook", "--report", "x.html"][..],
    ] {
        let o = sandalyst(args, &data);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
    }
}
