//! The command line stays bounded whatever the provider sends: local servers that speak
//! each wire format and stream text without end, a tool call whose arguments never end,
//! or one SSE line that never ends, against the real `sandalyst` binary (its peak
//! resident size read from /proc). And a folder of 20,000 inputs makes a first request
//! of a few thousand tokens. The library's caps, with no engine, are
//! `fast::provider_bounds`.

use crate::common;

use crate::common::wire;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use sandalyst::model::caps::ReplyCaps;
use wire::endless::{self, Flood, Wire};
use wire::{Answer, WireServer, TEST_KEY};

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// The endless servers stop here if the client never does (then the test fails).
const LIMIT: usize = 96 * MIB;

// ---- the command line -------------------------------------------------------------------

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

struct Ran {
    ok: bool,
    stderr: String,
    /// The child's peak resident set (VmHWM), in bytes.
    peak: usize,
}

fn vm_hwm(pid: u32) -> Option<usize> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The real binary, with none of the user's own provider settings; its peak memory
/// is read from /proc while it runs (VmHWM only grows, so the last reading is the peak
/// up to a few milliseconds before the end).
fn sandalyst(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Ran {
    // The scripted servers listen on loopback, where `auto` would move to schema
    // steps after a reply without a native call and ask again; these tests script
    // the API's own calls, so they pin `native` (a test's own config wins).
    let config = dir.join("config.toml");
    if !config.exists() {
        std::fs::write(&config, "[openai-compatible]\ntool_calls = \"native\"\n").unwrap();
    }
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandalyst"));
    c.args(args)
        .current_dir(repo())
        .env("SANDALYST_DATA_DIR", dir.join("data"))
        .env("SANDALYST_CONFIG", dir.join("config.toml"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "SANDALYST_COMPATIBLE_API_KEY",
        "DBUS_SESSION_BUS_ADDRESS",
    ] {
        c.env_remove(var);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    });
    let mut peak = 0;
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(hwm) = vm_hwm(child.id()) {
            peak = peak.max(hwm);
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(600) {
            let _ = child.kill();
            panic!("sandalyst did not end within 10 minutes");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ran {
        ok: status.success(),
        stderr: reader.join().unwrap(),
        peak,
    }
}

/// The model flag and environment that reach `server` through each wire format.
fn model_args(w: Wire, server: &WireServer) -> (Vec<String>, Vec<(&'static str, String)>) {
    match w {
        Wire::Responses => (
            vec!["--model".into(), "openai:gpt-5.4".into()],
            vec![
                ("OPENAI_API_KEY", TEST_KEY.into()),
                ("OPENAI_BASE_URL", format!("{}/v1", server.base)),
            ],
        ),
        Wire::Chat => (
            vec![
                "--model".into(),
                "openai-compatible:M".into(),
                "--base-url".into(),
                format!("{}/v1", server.base),
            ],
            vec![],
        ),
        Wire::Messages => (
            vec!["--model".into(), "anthropic:claude-sonnet-4-5".into()],
            vec![
                ("ANTHROPIC_API_KEY", TEST_KEY.into()),
                ("ANTHROPIC_BASE_URL", server.base.clone()),
            ],
        ),
    }
}

const FINAL: &str = "Stopped after the cut.";

/// A plain final answer in each wire format.
fn final_answer(w: Wire) -> Answer {
    Answer::Sse(match w {
        Wire::Responses => wire::responses::Events::new()
            .text(0, FINAL, 8)
            .completed(10, 0, 5),
        Wire::Chat => wire::chat::text_stream(FINAL),
        Wire::Messages => wire::messages::Events::new(10, 0, 0)
            .text(FINAL)
            .end("end_turn", 5),
    })
}

/// The longest line of the run's transcript.
fn longest_transcript_line(data: &Path) -> usize {
    let mut longest = 0;
    for entry in std::fs::read_dir(data).unwrap() {
        let t = entry.unwrap().path().join("transcript.jsonl");
        if let Ok(text) = std::fs::read_to_string(&t) {
            longest = longest.max(text.lines().map(str::len).max().unwrap_or(0));
        }
    }
    longest
}

/// The peak the process may reach while the server floods it.
const PEAK: usize = 150 * MIB;

/// `sandalyst run` against a server that floods the first reply and answers the second
/// plainly: the ask finishes, the cut is said on stderr and to the model, memory and
/// the transcript's longest line stay bounded. Returns the peak and bytes sent.
async fn cli_flood(w: Wire, flood: Flood) -> (usize, usize) {
    let caps = ReplyCaps::default();
    let server = WireServer::paced(
        vec![endless::answer(w, flood, LIMIT), final_answer(w)],
        Duration::ZERO,
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (margs, env) = model_args(w, &server);
    let mut args = vec![
        "run",
        "--input",
        "examples/building_energy.csv",
        "--prompt",
        "How many rows are there?",
    ];
    args.extend(margs.iter().map(String::as_str));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let ran = tokio::task::block_in_place(|| sandalyst(&args, dir.path(), &env));
    let ctx = format!("{w:?} {flood:?}");
    assert!(ran.ok, "{ctx}: {}", ran.stderr);
    let (said, cap) = match flood {
        Flood::Text => ("its text passed 1.0 MiB", caps.text_bytes),
        Flood::Reasoning => ("its reasoning passed 1.0 MiB", caps.reasoning_bytes),
        Flood::Arguments => (
            "its tool-call arguments passed 4.0 MiB",
            caps.arguments_bytes,
        ),
        Flood::Line => ("one event of the stream passed 16.0 MiB", caps.event_bytes),
        Flood::Loop => unreachable!("the command line's test floods past the caps"),
    };
    assert!(
        ran.stderr.contains(&format!(
            "  the model's reply was cut: {said}, the most Sandalyst reads of one reply"
        )),
        "{ctx}: {}",
        ran.stderr
    );
    assert!(ran.stderr.contains(FINAL), "{ctx}: {}", ran.stderr);
    let received = server.received();
    assert_eq!(received.len(), 2, "{ctx}");
    let second = received[1].body.to_string();
    let told = format!("your last reply was cut: {said}, the most the app reads of one reply");
    assert!(second.contains(&told), "{ctx}: the model was not told");
    if flood == Flood::Arguments {
        assert!(second.contains(&format!("Not run: {told}")), "{ctx}");
    }
    // What was cut is not sent back: the next request stays small.
    assert!(
        second.len() < 128 << 10,
        "{ctx}: the request after the cut has {} bytes",
        second.len()
    );
    assert!(
        ran.peak < PEAK,
        "{ctx}: the process grew to {} MiB",
        ran.peak / MIB
    );
    // The server sent several times what was kept (the line: more than its cap).
    let sent = server.sent();
    let flooded = if flood == Flood::Line { cap } else { 3 * cap };
    assert!(sent >= flooded, "{ctx}: only {sent} bytes sent");
    assert!(
        sent < LIMIT / 2,
        "{ctx}: the client read on to {sent} bytes"
    );
    // What came up to the cap is kept, and no more.
    let longest = longest_transcript_line(&dir.path().join("data"));
    let bound = match flood {
        Flood::Line => 64 * KIB,
        _ => cap + cap / 8,
    };
    assert!(
        longest <= bound,
        "{ctx}: a transcript line of {longest} bytes"
    );
    eprintln!(
        "{ctx}: peak {:.1} MiB, server sent {:.1} MiB, longest transcript line {} bytes",
        ran.peak as f64 / MIB as f64,
        sent as f64 / MIB as f64,
        longest
    );
    (ran.peak, sent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_stays_small_while_a_provider_streams_text_without_end() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    for w in [Wire::Responses, Wire::Chat, Wire::Messages] {
        cli_flood(w, Flood::Text).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_stays_small_while_tool_arguments_never_end() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    for w in [Wire::Responses, Wire::Chat, Wire::Messages] {
        cli_flood(w, Flood::Arguments).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_stays_small_while_one_sse_line_never_ends() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    for w in [Wire::Responses, Wire::Chat, Wire::Messages] {
        cli_flood(w, Flood::Line).await;
    }
}

/// 20,000 inputs in one folder (and one file beside it): the first request names a
/// few of them and counts the rest, in a few thousand tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_of_20000_files_makes_a_small_first_request() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("survey");
    let docs = input.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    for i in 0..20_000 {
        let ext = if i % 20 == 0 { "pdf" } else { "txt" };
        std::fs::write(
            docs.join(format!("note_{i:05}.{ext}")),
            format!("note {i}\nsecond line\n"),
        )
        .unwrap();
    }
    std::fs::write(input.join("index.csv"), "id,name\n1,first\n").unwrap();
    let server = WireServer::start(vec![final_answer(Wire::Chat)]).await;
    let (margs, _) = model_args(Wire::Chat, &server);
    let mut args = vec![
        "run",
        "--input",
        input.to_str().unwrap(),
        "--prompt",
        "How many notes are there?",
    ];
    args.extend(margs.iter().map(String::as_str));
    let ran = tokio::task::block_in_place(|| sandalyst(&args, dir.path(), &[]));
    assert!(ran.ok, "{}", ran.stderr);
    let received = server.received();
    let first = received[0].body.to_string();
    let system = received[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    eprintln!(
        "first request: {} bytes; instructions {} bytes; peak {:.1} MiB\n{system}",
        first.len(),
        system.len(),
        ran.peak as f64 / MIB as f64
    );
    assert!(first.len() < 24 * KIB, "{} bytes", first.len());
    assert!(system.contains("Input files: 20,001 files,"), "{system}");
    assert!(
        system.contains("- input/survey/index.csv (16 bytes)\n    | id,name\n"),
        "{system}"
    );
    assert!(
        system.contains("- input/survey/docs/: 19,971 files, "),
        "{system}"
    );
    assert!(system.contains(" .txt, "), "{system}");
}
