//! The real-model tier: the `sandalyst` command line, as a user runs it, against a real
//! small open model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) served by llama.cpp's
//! `llama-server` on this machine, with the real Docker sandbox. Slow (minutes per ask
//! on two cores) and not deterministic enough for CI, so every test is ignored unless
//! asked for: `scripts/test.sh --real-model` starts the server (scripts/real-model.sh),
//! sets `SANDALYST_REAL_MODEL_URL` and runs
//! `cargo test --workspace --test real_model -- --ignored --test-threads=1`.
//!
//! Each run appends one JSON line to `target/real-model-runs.jsonl` (or the file that
//! `SANDALYST_REAL_MODEL_RECORD` names): seed, turns, wall time, how each ask ended,
//! tokens, the server's prompt and generation speed (its `/metrics`), and every named
//! output with its size and whether it is valid. BENCHMARKS.md is written from it. The
//! session folders are kept under `target/real-model-runs/` for their transcripts.
//!
//! What the tests assert: the honest-endings rule (an ask never ends `finished`, exit 0,
//! while an output it was asked for is missing, empty or does not open; it ends either
//! finished with every named output valid, or with a non-zero exit and the app's own
//! message naming what is missing), and issue 34's bar for the model's skill: of the
//! reference case's three seeded runs at least two finish with all three outputs
//! valid, each within 15 minutes, and the sales question's answer names East and 9,861.
//!
//! `SANDALYST_REAL_MODEL_SAMPLING=server` leaves `temperature` and `seed` out of the
//! config file (the server's defaults apply), for a baseline of a core that does not
//! take them. `SANDALYST_REAL_MODEL_TIMEOUT` (seconds, default 1500) and
//! `SANDALYST_REAL_MODEL_MAX_TURNS` (default 25) bound each ask;
//! `SANDALYST_REAL_MODEL_SEEDS` lists the reference case's seeds (default 1,2,3).
//!
//! Every case runs once per call mode that `SANDALYST_REAL_MODEL_CALLS` lists
//! (`tool_calls` in the config file: `auto`, `native`, `schema`, `text`; default
//! `schema,text`), so the modes are measured side by side in one sitting; the record
//! says which mode each ask ended in.

#[path = "../core/tests/common/mod.rs"]
mod common;

use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The model as `--model` names it; scripts/real-model.sh serves it under this alias.
const MODEL: &str = "openai-compatible:qwen2.5-coder-1.5b";
const TEMPERATURE: f64 = 0.2;
const MAX_TOKENS: u32 = 2048;

/// The server's base URL (up to `/v1`), or a failure that says how to get one.
fn server_url() -> String {
    match std::env::var("SANDALYST_REAL_MODEL_URL") {
        Ok(u) if !u.trim().is_empty() => u.trim().trim_end_matches('/').to_string(),
        _ => panic!(
            "SANDALYST_REAL_MODEL_URL is not set: these tests need a real model server. \
             Run `scripts/test.sh --real-model` (it starts one with scripts/real-model.sh), \
             or start it yourself and set SANDALYST_REAL_MODEL_URL=http://127.0.0.1:8091/v1"
        ),
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Whether the sampling keys go into the config file (the default) or the server's
/// defaults apply (`SANDALYST_REAL_MODEL_SAMPLING=server`).
fn sampling_in_config() -> bool {
    std::env::var("SANDALYST_REAL_MODEL_SAMPLING").map_or(true, |v| v != "server")
}

/// The sampling settings a run asks for, as recorded.
fn sampling(seed: u64) -> Value {
    if sampling_in_config() {
        json!({"temperature": TEMPERATURE, "seed": seed, "max_tokens": MAX_TOKENS})
    } else {
        json!({"temperature": "server default", "seed": "server default", "max_tokens": MAX_TOKENS})
    }
}

/// The call modes each case runs in (`SANDALYST_REAL_MODEL_CALLS`).
fn modes() -> Vec<String> {
    std::env::var("SANDALYST_REAL_MODEL_CALLS")
        .unwrap_or_else(|_| "schema,text".into())
        .split(',')
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
        .collect()
}

/// A config file of the run's own: the sampling settings and the call mode under
/// `[openai-compatible]`.
fn write_config(dir: &Path, seed: u64, mode: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let mut text =
        format!("[openai-compatible]\nmax_tokens = {MAX_TOKENS}\ntool_calls = \"{mode}\"\n");
    if sampling_in_config() {
        text.push_str(&format!("temperature = {TEMPERATURE}\nseed = {seed}\n"));
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// Where the run's session folder is kept (its transcript holds the model's raw text).
fn run_dir(name: &str) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let dir = common::repo_root()
        .join("target/real-model-runs")
        .join(format!("{stamp}-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The command, with the run's own config and data folder, and nobody's keys.
fn command(dir: &Path, seed: u64, mode: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandalyst"));
    c.env("SANDALYST_CONFIG", write_config(dir, seed, mode))
        .env("SANDALYST_DATA_DIR", dir.join("data"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("SANDALYST_IMAGE")
        .current_dir(common::repo_root());
    c
}

/// The agent flags every run shares.
fn agent_args() -> Vec<String> {
    vec![
        "--model".into(),
        MODEL.into(),
        "--base-url".into(),
        server_url(),
        "--max-turns".into(),
        env_u64("SANDALYST_REAL_MODEL_MAX_TURNS", 25).to_string(),
        "--timeout".into(),
        env_u64("SANDALYST_REAL_MODEL_TIMEOUT", 1500).to_string(),
    ]
}

/// The server's counters (llama-server `--metrics`): prompt tokens and seconds,
/// generated tokens and seconds. `None` when it does not serve them.
fn server_counters() -> Option<[f64; 4]> {
    let url = server_url();
    let rest = url.strip_prefix("http://")?;
    let host = rest.split('/').next()?;
    let mut s = std::net::TcpStream::connect(host).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET /metrics HTTP/1.0\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    if !body.starts_with("HTTP/1.1 200") && !body.starts_with("HTTP/1.0 200") {
        return None;
    }
    let value = |name: &str| {
        body.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse::<f64>().ok())
    };
    Some([
        value("llamacpp:prompt_tokens_total ")?,
        value("llamacpp:prompt_seconds_total ")?,
        value("llamacpp:tokens_predicted_total ")?,
        value("llamacpp:tokens_predicted_seconds_total ")?,
    ])
}

/// What the server did between two readings of its counters.
fn server_work(before: Option<[f64; 4]>, after: Option<[f64; 4]>) -> Value {
    let (Some(b), Some(a)) = (before, after) else {
        return Value::Null;
    };
    let d: Vec<f64> = a.iter().zip(b.iter()).map(|(a, b)| a - b).collect();
    let rate = |tokens: f64, secs: f64| (secs > 0.0).then(|| (tokens / secs * 10.0).round() / 10.0);
    json!({
        "prompt_tokens": d[0], "prompt_seconds": (d[1] * 10.0).round() / 10.0,
        "prompt_tps": rate(d[0], d[1]),
        "gen_tokens": d[2], "gen_seconds": (d[3] * 10.0).round() / 10.0,
        "gen_tps": rate(d[2], d[3]),
    })
}

/// An output the ask named: whether it is there and opens as what its name says.
fn check_output(dir: &Path, name: &str) -> Value {
    let path = dir.join(name);
    let Ok(meta) = std::fs::metadata(&path) else {
        return json!({"name": name, "bytes": null, "valid": false, "why": "missing"});
    };
    let bytes = meta.len();
    let why = if bytes == 0 {
        Some("empty".to_string())
    } else if name.ends_with(".png") {
        match image::open(&path) {
            Ok(img) if img.width() > 0 && img.height() > 0 => None,
            Ok(_) => Some("a PNG of no pixels".into()),
            Err(e) => Some(format!("does not decode as PNG: {e}")),
        }
    } else if name.ends_with(".csv") {
        match csv::Reader::from_path(&path).map(|mut r| r.records().count()) {
            Ok(0) => Some("no rows under the header".into()),
            Ok(_) => None,
            Err(e) => Some(format!("does not read as CSV: {e}")),
        }
    } else if name.ends_with(".md") {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        (text.split_whitespace().count() < 10).then(|| "fewer than 10 words".into())
    } else {
        None
    };
    // And what the app itself counts as not done (a blank image, a table of empty
    // cells, a text cut short): a file the app refused is not a valid output here either.
    let why = why.or_else(|| {
        let data = std::fs::read(&path).unwrap_or_default();
        sandalyst::artifacts::check::problem(name, bytes, &data)
    });
    json!({"name": name, "bytes": bytes, "valid": why.is_none(), "why": why})
}

/// One ask: its prompt and the outputs (names under `output/`) it asks for.
struct AskSpec {
    prompt: String,
    outputs: Vec<&'static str>,
}

/// The lines of the app's own word at the end of each ask ("ask finished", "ask
/// stopped: ..."), in order.
fn end_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.starts_with("ask ") && !l.contains(" started in session "))
        .map(str::to_string)
        .collect()
}

/// How an ask ended, by the honest-endings rule: `finished` (all named outputs valid),
/// `incomplete` (not finished, and the app's message names every missing output),
/// `stopped_unnamed` (not finished, and it does not), or `dishonest` (finished while
/// an output is missing or invalid: the one ending that must never happen).
fn outcome(finished: bool, outputs: &[Value], message: &str) -> &'static str {
    let bad: Vec<&str> = outputs
        .iter()
        .filter(|o| o["valid"] != true)
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    match (finished, bad.is_empty()) {
        (true, true) => "finished",
        (true, false) => "dishonest",
        (false, _) if !bad.is_empty() && bad.iter().all(|n| message.contains(n)) => "incomplete",
        (false, true) => "stopped_with_outputs",
        (false, false) => "stopped_unnamed",
    }
}

/// The session's metadata (run.json) from the run's data folder.
fn session_meta(dir: &Path) -> Option<(PathBuf, Value)> {
    let session = std::fs::read_dir(dir.join("data"))
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.join("run.json").is_file())?;
    let meta =
        serde_json::from_str(&std::fs::read_to_string(session.join("run.json")).ok()?).ok()?;
    Some((session, meta))
}

/// The model's last words of an ask, from the transcript.
fn last_answer(session: &Path, ask_id: &str) -> String {
    let text = std::fs::read_to_string(session.join("transcript.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["ask"] == ask_id && e["item"]["type"] == "assistant")
        .filter_map(|e| e["item"]["text"].as_str().map(str::to_string))
        .next_back()
        .unwrap_or_default()
}

fn git_commit() -> String {
    let out = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(common::repo_root())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    let head = out(&["rev-parse", "--short", "HEAD"]);
    let dirty = !out(&["status", "--porcelain", "--untracked-files=no"]).is_empty();
    if dirty {
        format!("{head}+changes")
    } else {
        head
    }
}

/// Append one run's record to the JSON-lines file.
fn record(line: &Value) {
    let path = std::env::var_os("SANDALYST_REAL_MODEL_RECORD")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::repo_root().join("target/real-model-runs.jsonl"));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(f, "{line}").unwrap();
    let _ = writeln!(
        std::io::stderr(),
        "recorded in {}: {}",
        path.display(),
        line
    );
}

/// How one run went: its record, with each ask's outcome.
struct Ran {
    record: Value,
}

impl Ran {
    fn outcomes(&self) -> Vec<String> {
        self.record["asks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["outcome"].as_str().unwrap().to_string())
            .collect()
    }

    /// No ask ended `finished` with a named output missing or invalid.
    fn assert_never_dishonest(&self) {
        for a in self.record["asks"].as_array().unwrap() {
            assert_ne!(
                a["outcome"], "dishonest",
                "an ask ended finished (exit 0) while a named output is missing or invalid: {a:#}"
            );
        }
    }

    /// Every ask ended finished with valid outputs, or not finished with the missing
    /// outputs named.
    fn assert_honest(&self) {
        self.assert_never_dishonest();
        for a in self.record["asks"].as_array().unwrap() {
            assert!(
                a["outcome"] == "finished" || a["outcome"] == "incomplete",
                "an ask ended neither finished with all its outputs nor with a message naming \
                 what is missing: {a:#}"
            );
        }
    }
}

/// Run `sandalyst run` (one ask) or `sandalyst chat` (several, from a pipe) on
/// `inputs`, and record it.
fn run(
    name: &str,
    mode: &str,
    seed: u64,
    inputs: &[&str],
    asks: &[AskSpec],
    expected: Option<&str>,
) -> Ran {
    let name = format!("{name}-{mode}");
    let dir = run_dir(&name);
    let root = common::repo_root();
    let mut cmd = command(&dir, seed, mode);
    let chat = asks.len() > 1;
    if chat {
        cmd.arg("chat");
    } else {
        cmd.args(["run", "--prompt", &asks[0].prompt]);
    }
    for i in inputs {
        cmd.args(["--input", root.join(i).to_str().unwrap()]);
    }
    cmd.args(agent_args());
    cmd.arg("-v");
    let stderr_path = dir.join("stderr.txt");
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr_path).unwrap());

    let before = server_counters();
    let started = chrono::Utc::now().to_rfc3339();
    let clock = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    if chat {
        // One ask per line; the chat reads the next only after the last one ended.
        for a in asks {
            writeln!(
                stdin,
                "{}",
                a.prompt.split_whitespace().collect::<Vec<_>>().join(" ")
            )
            .unwrap();
        }
    }
    drop(stdin); // end of input: the chat leaves after its asks
    let mut stdout = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    let wall = clock.elapsed().as_secs_f64();
    let after = server_counters();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();

    let (session, meta) = session_meta(&dir).unwrap_or_else(|| {
        panic!(
            "no session was recorded in {}; stderr:\n{stderr}",
            dir.display()
        )
    });
    let outputs_dir = session.join("outputs");
    let ends = end_lines(&stderr);
    let meta_asks = meta["asks"].as_array().cloned().unwrap_or_default();
    let mut asks_rec = Vec::new();
    for (i, spec) in asks.iter().enumerate() {
        let m = meta_asks.get(i).cloned().unwrap_or(Value::Null);
        let st = m["status"].clone();
        let finished = st["status"] == "finished";
        let outs: Vec<Value> = spec
            .outputs
            .iter()
            .map(|n| check_output(&outputs_dir, n))
            .collect();
        // The app's own word on how the ask ended: its end line and its status.
        let end = ends.get(i).cloned().unwrap_or_default();
        let message = format!("{end}\n{st}");
        let answer = m["id"]
            .as_str()
            .map(|id| last_answer(&session, id))
            .unwrap_or_default();
        asks_rec.push(json!({
            "prompt": spec.prompt.chars().take(120).collect::<String>(),
            "status": st,
            "end": end,
            "turns": m["turns"],
            "usage": m["usage"],
            "outputs": outs,
            "outcome": outcome(finished, &outs, &message),
            "answer": answer.chars().take(600).collect::<String>(),
            "answer_has_expected": expected.map(|e| has_expected(&answer, e)),
            "call_mode": m["call_mode"],
        }));
    }
    // In a chat the exit code is that of the last ask; each ask's status is on record.
    let line = json!({
        "run": name,
        "tool_calls": mode,
        "seed": if sampling_in_config() { json!(seed) } else { Value::Null },
        "sampling": sampling(seed),
        "model": MODEL,
        "commit": git_commit(),
        "started": started,
        "wall_s": (wall * 10.0).round() / 10.0,
        "exit_code": status.code(),
        "turns": meta["turns"],
        "usage": meta["usage"],
        "server": server_work(before, after),
        "asks": asks_rec,
        "session": session,
        "stdout_tail": stdout.lines().rev().take(3).collect::<Vec<_>>(),
        "stderr_tail": stderr.lines().rev().take(4).collect::<Vec<_>>(),
    });
    record(&line);
    Ran { record: line }
}

/// Whether `answer` holds every comma-separated word of `expected`, numbers read
/// without their thousands separators ("9,861" is 9861).
fn has_expected(answer: &str, expected: &str) -> bool {
    let chars: Vec<char> = answer.chars().collect();
    let plain: String = chars
        .iter()
        .enumerate()
        .filter(|(i, c)| {
            let digit = |j: usize| chars.get(j).is_some_and(|c| c.is_ascii_digit());
            !(**c == ',' && *i > 0 && digit(i - 1) && digit(i + 1))
        })
        .map(|(_, c)| *c)
        .collect();
    expected.split(',').all(|w| plain.contains(w.trim()))
}

fn reference_task() -> AskSpec {
    AskSpec {
        prompt: std::fs::read_to_string(common::repo_root().join("examples/anomaly_task.md"))
            .unwrap(),
        outputs: vec!["anomalies.csv", "energy_anomalies.png", "anomaly_report.md"],
    }
}

/// The seeds of the reference case: 1, 2 and 3, or those `SANDALYST_REAL_MODEL_SEEDS`
/// lists ("1,2,3,4,5,6"): on a CPU server a seed does not fix a run, so a round that
/// compares two commits needs more runs than the bar's three.
fn seeds() -> Vec<u64> {
    match std::env::var("SANDALYST_REAL_MODEL_SEEDS") {
        Ok(list) => list
            .split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .expect("SANDALYST_REAL_MODEL_SEEDS: numbers and commas")
            })
            .collect(),
        Err(_) => vec![1, 2, 3],
    }
}

/// The reference case (DESIGN.md) with seeds 1, 2 and 3, one after the other.
#[test]
#[ignore = "real model: scripts/test.sh --real-model"]
fn real_model_reference_case_three_seeds() {
    // Every mode runs before any is judged: the modes are measured side by side, and
    // one mode short of the bar must not leave the next one unmeasured.
    let mut short = Vec::new();
    for mode in modes() {
        let runs: Vec<Ran> = seeds()
            .into_iter()
            .map(|seed| {
                run(
                    &format!("reference-seed{seed}"),
                    &mode,
                    seed,
                    &["examples/building_energy.csv"],
                    &[reference_task()],
                    None,
                )
            })
            .collect();
        for r in &runs {
            r.assert_never_dishonest();
        }
        // Issue 34's bar: at least 2 of 3 seeds finish with all three outputs valid,
        // each within 15 minutes on 2 CPUs.
        let outcomes: Vec<(String, f64)> = runs
            .iter()
            .map(|r| {
                (
                    r.outcomes().join(","),
                    r.record["wall_s"].as_f64().unwrap_or(f64::MAX),
                )
            })
            .collect();
        let good = outcomes
            .iter()
            .filter(|(o, wall)| o == "finished" && *wall <= 900.0)
            .count();
        // Of more seeds, the same share: two thirds.
        if good * 3 < runs.len() * 2 {
            short.push(format!("{mode}: {outcomes:?}"));
        }
    }
    assert!(
        short.is_empty(),
        "fewer than 2 of 3 seeded runs finished with all three outputs valid within 15 \
         minutes: {short:?}"
    );
}

/// Two asks in one chat: the second builds on the first (the kernel's table or the
/// first ask's file).
#[test]
#[ignore = "real model: scripts/test.sh --real-model"]
fn real_model_two_ask_chat() {
    for mode in modes() {
        two_ask_chat(&mode);
    }
}

fn two_ask_chat(mode: &str) {
    let ran = run(
        "chat-two-asks",
        mode,
        7,
        &["examples/building_energy.csv"],
        &[
            AskSpec {
                prompt: "Load input/building_energy.csv and compute the total energy_kwh per \
                         day. Save the daily totals as output/daily_energy.csv with columns \
                         date and energy_kwh."
                    .into(),
                outputs: vec!["daily_energy.csv"],
            },
            AskSpec {
                prompt: "Now plot those daily totals as a line chart and save it as \
                         output/daily_energy.png. Say which day used the most energy."
                    .into(),
                outputs: vec!["daily_energy.png"],
            },
        ],
        None,
    );
    ran.assert_honest();
}

/// A question on another table: which region sold most in February (East, 9861 by
/// tests/fixtures/skills/generate.py's own count), as a table and a chart.
#[test]
#[ignore = "real model: scripts/test.sh --real-model"]
fn real_model_question_on_a_sales_table() {
    for mode in modes() {
        sales_question(&mode);
    }
}

fn sales_question(mode: &str) {
    let ran = run(
        "sales-region",
        mode,
        11,
        &["tests/fixtures/skills/sales.csv"],
        &[AskSpec {
            prompt: "input/sales.csv holds sales (date, region, product, units, revenue). \
                     Which region had the highest total revenue in February 2024? Save the \
                     February revenue per region as output/revenue_by_region.csv and a bar \
                     chart of it as output/revenue_by_region.png, then give the answer."
                .into(),
            outputs: vec!["revenue_by_region.csv", "revenue_by_region.png"],
        }],
        Some("East, 9861"),
    );
    ran.assert_honest();
    assert_eq!(
        ran.record["asks"][0]["answer_has_expected"], true,
        "{mode}: the answer does not name East and 9,861: {}",
        ran.record["asks"][0]["answer"]
    );
}

/// The record's checks on their own, without a server.
#[test]
fn outcomes_follow_the_honest_endings_rule() {
    let ok = json!({"name": "a.csv", "valid": true});
    let missing = json!({"name": "b.png", "valid": false});
    assert_eq!(outcome(true, std::slice::from_ref(&ok), ""), "finished");
    assert_eq!(
        outcome(true, &[ok.clone(), missing.clone()], ""),
        "dishonest"
    );
    assert_eq!(
        outcome(
            false,
            std::slice::from_ref(&missing),
            "ask incomplete: output/b.png is missing"
        ),
        "incomplete"
    );
    assert_eq!(
        outcome(
            false,
            &[missing],
            "ask stopped: reached the limit of 25 turns"
        ),
        "stopped_unnamed"
    );
    assert_eq!(outcome(false, &[ok], "ask stopped"), "stopped_with_outputs");
    let lines = end_lines("ask a1 started in session s (m)\nturn 1/25\nask finished\n");
    assert_eq!(lines, ["ask finished"]);
    assert!(has_expected("East had the most: 9,861.", "East, 9861"));
    assert!(!has_expected("West had 9,861, East 12", "East, 9861x"));
}
