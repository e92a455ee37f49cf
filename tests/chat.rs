//! Conversations through the command line (`sandalyst chat` from a pipe, `sandalyst
//! ask`), with the real Docker sandbox: follow-ups on the same kernel and files, a
//! session continued after its process was killed, and the offline analyst's honest
//! answer to a follow-up it cannot do.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The command, isolated from the developer's own configuration and keys.
fn command(data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandalyst"));
    c.env(
        "SANDALYST_CONFIG",
        "/nonexistent/sandalyst-test-config.toml",
    )
    .env("SANDALYST_DATA_DIR", data)
    .env_remove("OPENAI_API_KEY")
    .env_remove("ANTHROPIC_API_KEY")
    .env_remove("SANDALYST_IMAGE")
    .current_dir(repo());
    c
}

fn replay(dir: &Path, name: &str, steps: serde_json::Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, steps.to_string()).unwrap();
    format!("replay:{}", p.display())
}

fn containers_of(id: &str) -> usize {
    let out = Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=sandalyst.run={id}"),
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// Lines of a child's stdout, read on a thread so a test can wait with a timeout.
fn lines_of(out: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

fn wait_for(rx: &mpsc::Receiver<String>, needle: &str) {
    loop {
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(line) if line.contains(needle) => return,
            Ok(_) => {}
            Err(e) => panic!("waiting for {needle:?}: {e}"),
        }
    }
}

#[test]
fn chat_keeps_the_kernel_between_asks_and_a_killed_session_continues() {
    if common::no_engine_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = dir.path().join("data.csv");
    std::fs::write(&input, "t,v\n1,2\n").unwrap();
    let count = replay(
        dir.path(),
        "count.json",
        serde_json::json!([
            {"python": "try:\n    n += 1\nexcept NameError:\n    n = 41\nprint('n is', n)\nopen('output/n.txt', 'w').write(str(n))"},
            {"say": "counted"}
        ]),
    );
    let stderr = std::fs::File::create(dir.path().join("chat.err")).unwrap();
    let mut chat = command(&data)
        .args(["chat", "-i", input.to_str().unwrap(), "--model", &count])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let answers = lines_of(chat.stdout.take().unwrap());
    let mut stdin = chat.stdin.take().unwrap();
    writeln!(stdin, "count once").unwrap();
    wait_for(&answers, "counted");
    writeln!(stdin, "count again").unwrap();
    wait_for(&answers, "counted");
    // The app dies between asks: nothing is closed cleanly.
    chat.kill().unwrap();
    chat.wait().unwrap();
    let err = std::fs::read_to_string(dir.path().join("chat.err")).unwrap();
    assert!(err.contains("n is 41") && err.contains("n is 42"), "{err}");
    let id = err
        .lines()
        .find_map(|l| l.strip_prefix("session "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string();

    let check = replay(
        dir.path(),
        "check.json",
        serde_json::json!([
            {"python": "print('file', open('output/n.txt').read())\nprint('input', open('input/data.csv').read().split()[1])\nprint('has n', 'n' in dir())"},
            {"say": "checked"}
        ]),
    );
    let out = command(&data)
        .args(["ask", &id, "-p", "what is left?", "--model", &check, "-v"])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "checked");
    assert!(stderr.contains("file 42"), "{stderr}");
    assert!(stderr.contains("input 1,2"), "{stderr}");
    assert!(stderr.contains("has n False"), "{stderr}");
    assert!(stderr.contains("earlier workspace restored"), "{stderr}");
    // Three asks on record; no container left behind.
    let show = command(&data).args(["runs", "show", &id]).output().unwrap();
    let show = String::from_utf8_lossy(&show.stdout);
    assert!(
        show.contains("count once") && show.contains("what is left?"),
        "{show}"
    );
    assert_eq!(containers_of(&id), 0);
}

#[test]
fn the_offline_analyst_answers_the_reference_case_then_says_what_it_cannot_do() {
    if common::no_engine_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = std::fs::read_to_string(repo().join("examples/anomaly_task.md"))
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut chat = command(&dir.path().join("data"))
        .args(["chat", "-i", "examples/building_energy.csv"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = chat.stdin.take().unwrap();
    writeln!(stdin, "{task}").unwrap();
    writeln!(stdin, "Now split it by weekday").unwrap();
    drop(stdin); // Ctrl-D: leave after the two asks
    let out = chat.wait_with_output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("output/anomaly_report.md"), "{stdout}");
    assert!(
        stdout.contains("not an LLM") && stdout.contains("choose a model"),
        "{stdout}"
    );
}

/// `chat --approve all` asks before a call runs and answers the core with the call's
/// id: a rejected call never runs (its file is not made, the model reads the reason),
/// an approved one does.
#[test]
fn chat_asks_before_a_call_and_answers_it_by_its_id() {
    if common::no_engine_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = dir.path().join("data.csv");
    std::fs::write(&input, "t,v\n1,2\n").unwrap();
    let steps = replay(
        dir.path(),
        "steps.json",
        serde_json::json!([
            {"python": "open('output/first.txt', 'w').write('ran')"},
            {"python": "open('output/second.txt', 'w').write('ran')"},
            {"say": "done"}
        ]),
    );
    let out = command(&data)
        .args(["chat", "-i", input.to_str().unwrap(), "--approve", "all"])
        .args(["--model", &steps])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            // The ask, a rejection with its reason, then an approval; then EOF.
            let mut stdin = c.stdin.take().unwrap();
            stdin.write_all(b"make the files\nn\nnot this one\ny\n")?;
            drop(stdin);
            c.wait_with_output()
        })
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("run it? [y]es").count(), 2, "{err}");
    let session = std::fs::read_dir(&data)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.join("run.json").is_file())
        .unwrap();
    let outputs = session.join("outputs");
    assert!(!outputs.join("first.txt").exists(), "the rejected call ran");
    assert_eq!(
        std::fs::read_to_string(outputs.join("second.txt")).unwrap(),
        "ran"
    );
    let transcript = std::fs::read_to_string(session.join("transcript.jsonl")).unwrap();
    assert!(transcript.contains("not this one"), "{transcript}");
}
