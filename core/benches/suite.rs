//! Issue 11's figures, each beside a baseline measured in the same run, as the tables of
//! BENCHMARKS.md. Run it through `scripts/bench.sh` (`--tiny`, default small, `--full`),
//! or `cargo bench --bench suite -- [--tiny|--full]`. Issue 38's table, runc beside
//! gVisor, only when asked for: `scripts/bench.sh --isolation` (section `isolation`).
//!
//! Baselines: `docker run --rm IMAGE python3 -c pass` for what waits on the sandbox,
//! `docker cp` of the same file for staging, Python's `csv` module reading the whole
//! file for tables, a fresh `python3 -c pass` for the loop's cost per turn. The
//! reference case runs against a scripted Responses-wire server on 127.0.0.1 (the test
//! suite's own, `core/tests/common/wire`, without the 1 ms it waits between SSE chunks in the
//! tests), so no turn waits on a model.
//!
//! The tiny size exists so the test suite can prove that the bench still runs; its
//! numbers mean nothing.

#[path = "../tests/common/wire/mod.rs"]
mod wire;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandalyst::agent::{EventKind, SetupStage};
use sandalyst::artifacts::csv_index;
use sandalyst::model::anthropic::Anthropic;
use sandalyst::model::chat_completions::ChatCompletions;
use sandalyst::model::config::ProviderKind;
use sandalyst::model::openai_responses::OpenAiResponses;
use sandalyst::model::scripted::{ScriptedModel, Step};
use sandalyst::model::{CallForm, Item, Model, Reply, Request};
use sandalyst::sandbox::docker::{self, DockerSandbox};
use sandalyst::sandbox::{Sandbox, SandboxConfig};
use sandalyst::session::FakeFactory;
use sandalyst::session::{DockerFactory, SandboxFactory, Session, SessionConfig, Sessions};
use sandalyst::workspace::{CopyReason, Manifest, StagingMode};
use wire::reference::responses_script;
use wire::WireServer;

#[derive(Clone, Copy, PartialEq)]
pub enum Size {
    Tiny,
    Small,
    Full,
}

struct Plan {
    size: Size,
    /// Repetitions of each timed operation.
    n: usize,
    /// Rows of the generated tables (10 columns, about 100 bytes a row).
    table_rows: Vec<usize>,
    stage_mb: u64,
    loop_calls: usize,
    /// Turns of the long-session row.
    long_session_turns: usize,
    /// Size of the history the request-building rows serialise.
    history_tokens: u64,
}

impl Plan {
    /// `SANDALYST_BENCH_N` overrides the repetitions (noisy machines need more).
    fn new(size: Size) -> Plan {
        let mut plan = Plan::sized(size);
        if let Some(n) = std::env::var("SANDALYST_BENCH_N")
            .ok()
            .and_then(|n| n.parse().ok())
        {
            plan.n = std::cmp::max(n, 1);
        }
        plan
    }

    fn sized(size: Size) -> Plan {
        match size {
            Size::Tiny => Plan {
                size,
                n: 1,
                table_rows: vec![3_000],
                stage_mb: 4,
                loop_calls: 5,
                long_session_turns: 10,
                history_tokens: 20_000,
            },
            Size::Small => Plan {
                size,
                n: 3,
                table_rows: vec![100_000],
                stage_mb: 100,
                loop_calls: 50,
                long_session_turns: 100,
                history_tokens: 200_000,
            },
            Size::Full => Plan {
                size,
                n: 3,
                table_rows: vec![1_000_000, 10_000_000],
                stage_mb: 1024,
                loop_calls: 50,
                long_session_turns: 100,
                history_tokens: 200_000,
            },
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 10_000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

/// One table of results.
struct Table(Vec<String>);

impl Table {
    fn new(title: &str) -> Table {
        Table(vec![
            format!("\n### {title}\n"),
            "| what | n | median | baseline | baseline median | ratio | target |".into(),
            "|---|---|---|---|---|---|---|".into(),
        ])
    }

    /// A row: the median of `samples` against the median of `base`.
    fn row(&mut self, what: &str, samples: Vec<Duration>, base: (&str, Duration), target: &str) {
        let n = samples.len();
        let m = median(samples);
        let ratio = m.as_secs_f64() / base.1.as_secs_f64().max(1e-9);
        self.0.push(format!(
            "| {what} | {n} | {} | {} | {} | {ratio:.3} | {target} |",
            ms(m),
            base.0,
            ms(base.1)
        ));
        self.print_last();
    }

    /// A row that is not a duration (a throughput, a memory figure).
    fn note(&mut self, what: &str, value: String, base: &str, ratio: &str, target: &str) {
        self.0.push(format!(
            "| {what} | 1 | {value} | {base} | | {ratio} | {target} |"
        ));
        self.print_last();
    }

    fn print_last(&self) {
        if self.0.len() == 4 {
            for l in &self.0[..3] {
                println!("{l}");
            }
        }
        println!("{}", self.0.last().unwrap());
    }
}

/// Wall time of a command that must succeed.
fn time_cmd(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let out = cmd.output().expect("the command starts");
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn times(n: usize, mut f: impl FnMut() -> Duration) -> Vec<Duration> {
    (0..n).map(|_| f()).collect()
}

/// A figure of /proc/self/status in MB (Linux).
fn status_mb(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// How far the resident memory rose above `base` (from [`reset_peak`]) since then.
fn peak_growth_mb(base: f64) -> f64 {
    status_mb("VmHWM:") - base
}

/// Resets the peak to the current resident memory, and returns that (MB): what earlier
/// sections left (caches, the allocator's free lists) is not counted again.
fn reset_peak() -> f64 {
    // Writing 5 to clear_refs resets VmHWM to the current RSS.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    status_mb("VmRSS:")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn docker_run_pass(tag: &str) -> Duration {
    time_cmd(Command::new("docker").args([
        "run",
        "--rm",
        "--network",
        "none",
        tag,
        "python3",
        "-c",
        "pass",
    ]))
}

/// A CSV of `rows` rows and 10 columns: ids, timestamps, categories, floats, text.
fn make_csv(path: &Path, rows: usize) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    writeln!(
        f,
        "id,time,site,load_kw,temp_c,humidity,price,score,count,note"
    )?;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..rows {
        // xorshift: reproducible values without a dependency.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let a = (x % 100_000) as f64 / 100.0;
        let b = ((x >> 20) % 5000) as f64 / 100.0 - 10.0;
        writeln!(
            f,
            "{i},2026-{:02}-{:02} {:02}:{:02}:00,site-{},{a:.2},{b:.2},{},{:.4},{:.3},{},\"note {}\"",
            1 + (i / 44_640) % 12,
            1 + (i / 1440) % 28,
            (i / 60) % 24,
            i % 60,
            x % 37,
            (x >> 8) % 100,
            ((x >> 12) % 1_000_000) as f64 / 7919.0,
            ((x >> 30) % 100_000) as f64 / 1000.0,
            (x >> 40) % 1000,
            x % 9973,
        )?;
    }
    f.flush()
}

fn python_csv_read(path: &Path) -> Duration {
    time_cmd(Command::new("python3").args([
        "-c",
        "import csv, sys\nwith open(sys.argv[1], newline='') as f:\n    n = sum(1 for _ in csv.reader(f))",
        path.to_str().unwrap(),
    ]))
}

fn tables(plan: &Plan, dir: &Path) -> anyhow::Result<Vec<Table>> {
    let mut all = Vec::new();
    for &rows in &plan.table_rows {
        let path = dir.join(format!("table-{rows}.csv"));
        make_csv(&path, rows)?;
        let mb = std::fs::metadata(&path)?.len() as f64 / 1e6;
        let mut t = Table::new(&format!(
            "Big tables: {rows} rows x 10 columns, {mb:.0} MB (`artifacts::csv_index`)"
        ));
        let base = (
            "Python `csv` reads the whole file",
            median(times(plan.n, || python_csv_read(&path))),
        );
        let rss = reset_peak();
        let (mut first, mut counted) = (Vec::new(), Vec::new());
        for i in 0..plan.n {
            // A new modification time is a new file to the index cache: a cold start.
            let f = std::fs::File::options().write(true).open(&path)?;
            f.set_modified(std::time::SystemTime::now() + Duration::from_secs(i as u64 + 1))?;
            drop(f);
            let start = Instant::now();
            let p = csv_index::page(&path, 0, 200)?;
            first.push(start.elapsed());
            assert_eq!(p.rows.len(), 200.min(rows));
            // The first page started the index in the background; wait for it.
            assert_eq!(csv_index::warm(&path)?, rows);
            counted.push(start.elapsed());
        }
        let index_secs = median(counted.clone()).as_secs_f64();
        t.row(
            "first page (200 rows), nothing indexed yet",
            first,
            base,
            "≤ 20 ms",
        );
        t.row(
            "row index built in the background (exact row count known)",
            counted,
            base,
            "",
        );
        t.note(
            "row index throughput",
            format!("{:.0} MB/s", mb / index_secs),
            "",
            "",
            "≥ 500 MB/s",
        );
        let mut any = Vec::new();
        for k in 0..200usize {
            let offset = (k * 7919 * 1031) % rows.max(1);
            let start = Instant::now();
            csv_index::page(&path, offset, 200)?;
            any.push(start.elapsed());
        }
        t.row("any page (200 rows at 200 offsets)", any, base, "≤ 5 ms");
        t.note(
            "peak memory over these rows (rise of the process's resident size)",
            format!("{:.0} MB", peak_growth_mb(rss)),
            "",
            "",
            "≤ 200 MB",
        );
        std::fs::remove_file(&path)?;
        all.push(t);
    }
    Ok(all)
}

fn offline_cli(out: &Path, data: &Path) -> Command {
    // `SANDALYST_BENCH_CLI`: another build of the command line (a before/after pair).
    let bin = std::env::var("SANDALYST_BENCH_CLI")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_sandalyst").to_string());
    let mut c = Command::new(bin);
    c.current_dir(repo())
        .env("SANDALYST_DATA_DIR", data)
        .env("SANDALYST_CONFIG", data.join("config.toml"))
        .args([
            "run",
            "--input",
            "examples/building_energy.csv",
            "--prompt-file",
            "examples/anomaly_task.md",
            "--out",
            out.to_str().unwrap(),
        ]);
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
    c
}

/// Waits until the session's sandbox is ready, then lets the kernel import numpy,
/// pandas and pyplot while idle, as it does while a user types.
async fn warm_up(session: &Session) {
    let mut rx = session.subscribe();
    session.warm();
    while let Ok(e) = rx.recv().await {
        if matches!(e.kind, EventKind::Setup(SetupStage::SandboxReady { .. })) {
            break;
        }
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
}

async fn reference_and_session(plan: &Plan, dir: &Path, tag: &str) -> anyhow::Result<Table> {
    let mut t = Table::new("The reference case and the first cell");
    let base = (
        "`docker run --rm IMAGE python3 -c pass`",
        median(times(plan.n, || docker_run_pass(tag))),
    );

    // Cold: a fresh command-line run, the model a scripted server on loopback.
    let mut cold = Vec::new();
    for i in 0..plan.n {
        let server = WireServer::paced(responses_script(), Duration::ZERO).await;
        let data = dir.join(format!("cold-{i}"));
        let mut c = offline_cli(&data.join("out"), &data);
        c.args(["--model", "openai:gpt-5.4"])
            .env("OPENAI_API_KEY", wire::TEST_KEY)
            .env("OPENAI_BASE_URL", format!("{}/v1", server.base));
        cold.push(tokio::task::block_in_place(|| time_cmd(&mut c)));
        assert_eq!(server.received().len(), 3, "three model turns");
    }
    t.row(
        "reference case, scripted Responses model, cold command-line run",
        cold,
        base,
        "≤ 2.2 s",
    );
    for (what, samples) in cold_phases(plan, dir, tag).await? {
        t.row(&format!("cold run in-process, {what}"), samples, base, "");
    }

    let factory: Arc<dyn SandboxFactory> = Arc::new(DockerFactory);
    let sessions = Sessions::new(dir.join("sessions"), factory)?;
    let mut config = SessionConfig::default();
    config.sandbox.image = tag.to_string();
    let input = repo().join("examples/building_energy.csv");
    let (mut warm, mut in_cells) = (Vec::new(), Vec::new());
    for _ in 0..plan.n {
        let s = sessions.create(config.clone()).await?;
        s.add_files(vec![input.clone()]).await?;
        warm_up(&s).await;
        let (server, model) = scripted_responses().await?;
        let start = Instant::now();
        let mut h = s.ask("Find the anomalies.".into(), Box::new(model))?;
        let mut cell_ms = 0;
        while let Some(e) = h.events.recv().await {
            if let EventKind::CellResult { duration_ms, .. } = e.kind {
                cell_ms += duration_ms;
            }
        }
        h.outcome().await;
        warm.push(start.elapsed());
        in_cells.push(Duration::from_millis(cell_ms));
        assert_eq!(server.received().len(), 3, "three model turns");
        s.close().await;
    }
    t.row(
        "reference case as an ask in a warm session",
        warm,
        base,
        "≤ 1.5 s",
    );
    t.row(
        "of which in the cells (their durations summed)",
        in_cells,
        base,
        "",
    );

    let mut first = Vec::new();
    let code = "import pandas as pd\nprint(pd.__version__)";
    for _ in 0..plan.n {
        let s = sessions.create(config.clone()).await?;
        s.add_files(vec![input.clone()]).await?;
        warm_up(&s).await;
        let model = ScriptedModel::new([ScriptedModel::python("c1", code)]);
        let start = Instant::now();
        let mut h = s.ask("go".into(), Box::new(model))?;
        let mut at = None;
        while let Some(e) = h.events.recv().await {
            if at.is_none() && matches!(e.kind, EventKind::CellOutput { .. }) {
                at = Some(start.elapsed());
            }
        }
        h.outcome().await;
        first.push(at.expect("the cell printed"));
        s.close().await;
    }
    t.row(
        "ask -> first output of `import pandas`, warm session, zero-latency model",
        first,
        base,
        "≤ 20 ms",
    );
    sessions.close_all().await;

    let mut offline = Vec::new();
    for i in 0..plan.n {
        let data = dir.join(format!("offline-{i}"));
        let mut c = offline_cli(&data.join("out"), &data);
        offline.push(tokio::task::block_in_place(|| time_cmd(&mut c)));
    }
    t.row(
        "offline analyst, reference case, cold command-line run",
        offline,
        base,
        "≤ 3.0 s",
    );
    Ok(t)
}

/// The reference case's zero-latency model: the scripted Responses server on loopback
/// (kept alive by the caller) and a client of it.
async fn scripted_responses() -> anyhow::Result<(WireServer, OpenAiResponses)> {
    let server = WireServer::paced(responses_script(), Duration::ZERO).await;
    let cfg = wire::config(
        ProviderKind::OpenAi,
        "gpt-5.4",
        &format!("{}/v1", server.base),
        "OPENAI_API_KEY",
    );
    let model = OpenAiResponses::new(cfg)?;
    Ok((server, model))
}

/// Where a cold run's time goes: the command-line run's path (`run::execute`) in this
/// process, its events timed as they are emitted.
async fn cold_phases(
    plan: &Plan,
    dir: &Path,
    tag: &str,
) -> anyhow::Result<Vec<(&'static str, Vec<Duration>)>> {
    let names = [
        "whole run",
        "start -> sandbox ready (engine and image checks, container, kernel, staging)",
        "first cell (the analysis, with the first import of pandas and pyplot)",
        "the other cells (a python check, a shell `ls`)",
        "ask finished -> returned (workspace archived, container removed)",
        "the rest (three model turns on loopback, the loop, collecting outputs)",
    ];
    let mut phases: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
    for i in 0..plan.n {
        let (_server, mut model) = scripted_responses().await?;
        let store = sandalyst::store::Store::open(dir.join(format!("phases-{i}")))?;
        let mut req = sandalyst::run::RunRequest::new(
            vec![repo().join("examples/building_energy.csv")],
            std::fs::read_to_string(repo().join("examples/anomaly_task.md"))?,
        );
        req.config.sandbox.image = tag.to_string();
        let seen = std::sync::Mutex::new(Vec::new());
        let emit = |e: sandalyst::agent::Event| seen.lock().unwrap().push((Instant::now(), e.kind));
        let start = Instant::now();
        let cancel = tokio_util::sync::CancellationToken::new();
        sandalyst::run::execute(
            &sandalyst::session::Sessions::new(
                store.root().to_path_buf(),
                std::sync::Arc::new(sandalyst::session::DockerFactory),
            )?,
            req,
            &mut model,
            &emit,
            &cancel,
        )
        .await?;
        let end = Instant::now();
        let seen = seen.into_inner().unwrap();
        let at = |f: &dyn Fn(&EventKind) -> bool| {
            seen.iter().find(|(_, k)| f(k)).map_or(end, |(t, _)| *t)
        };
        let ready = at(&|k| matches!(k, EventKind::Setup(SetupStage::SandboxReady { .. })));
        let finished = at(&|k| matches!(k, EventKind::AskFinished { .. }));
        let cells: Vec<Duration> = seen
            .iter()
            .filter_map(|(_, k)| match k {
                EventKind::CellResult { duration_ms, .. } => {
                    Some(Duration::from_millis(*duration_ms))
                }
                _ => None,
            })
            .collect();
        let first = cells.first().copied().unwrap_or_default();
        let others: Duration = cells.iter().skip(1).sum();
        let whole = end - start;
        let to_ready = ready - start;
        let teardown = end - finished;
        let rest = whole.saturating_sub(to_ready + first + others + teardown);
        for (p, d) in phases
            .iter_mut()
            .zip([whole, to_ready, first, others, teardown, rest])
        {
            p.push(d);
        }
    }
    Ok(names.into_iter().zip(phases).collect())
}

async fn staging(plan: &Plan, dir: &Path, tag: &str) -> anyhow::Result<Table> {
    let engine = docker::connect().await?;
    let config = SandboxConfig {
        image: tag.to_string(),
        ..SandboxConfig::default()
    };
    let mb = plan.stage_mb;
    let mut t = Table::new(&format!("Staging a {mb} MB CSV"));
    let big = dir.join("stage.csv");
    {
        // Real bytes, not a sparse file, so that both paths read them.
        let mut f = std::io::BufWriter::new(std::fs::File::create(&big)?);
        let line = "2026-01-01 00:00:00,site-1,12.50,3.25,0.1234,note text here\n";
        let mut written = 0u64;
        while written < mb << 20 {
            f.write_all(line.as_bytes())?;
            written += line.len() as u64;
        }
    }
    let cp = times(plan.n, || {
        let name = format!("sandalyst-bench-cp-{}", std::process::id());
        let _ = Command::new("docker").args(["rm", "-f", &name]).output();
        time_cmd(Command::new("docker").args(["create", "--name", &name, tag, "true"]));
        let took = time_cmd(Command::new("docker").args([
            "cp",
            big.to_str().unwrap(),
            &format!("{name}:/tmp/stage.csv"),
        ]));
        time_cmd(Command::new("docker").args(["rm", "-f", &name]));
        took
    });
    let base = ("`docker cp` of the same file", median(cp));
    let manifest = Manifest::from_paths(std::slice::from_ref(&big))?;
    let c = tokio_util::sync::CancellationToken::new();
    let copy = SandboxConfig {
        staging: StagingMode::Copy,
        ..config.clone()
    };
    let (mut empty, mut bound, mut copied) = (Vec::new(), Vec::new(), Vec::new());
    let mut paths = Vec::new();
    let rss = reset_peak();
    for i in 0..plan.n {
        let mut runs = [
            (&Manifest::default(), &config, &mut empty),
            (&manifest, &config, &mut bound),
            (&manifest, &copy, &mut copied),
        ];
        // Each kind goes first in turn: the first start after a pause pays more.
        runs.rotate_left(i % 3);
        for (m, cfg, out) in runs {
            let start = Instant::now();
            let sb = DockerSandbox::start(&engine, &format!("bench-stage-{i}"), cfg, m).await?;
            sb.python("1+1", Duration::from_secs(60), &c, &|_, _| {})
                .await?;
            out.push(start.elapsed());
            paths.extend(sb.staging());
            sb.close().await?;
        }
    }
    let peak = peak_growth_mb(rss);
    // Which path the default (auto) runs took: a bind mount unless the engine or the
    // file ruled it out (then the "bind mount" rows measure copies, and say why).
    let auto = paths
        .iter()
        .find(|p| p.reason != Some(CopyReason::Forced))
        .map_or("none".to_string(), |p| match p.reason {
            Some(why) => format!("{} ({why})", p.method),
            None => p.method.to_string(),
        });
    let empty_median = median(empty.clone());
    let bind_extra = median(bound.clone()).saturating_sub(empty_median);
    let copy_extra = median(copied.clone()).saturating_sub(empty_median);
    t.row(
        &format!("sandbox start with the file staged, default staging: {auto}"),
        bound,
        base,
        "",
    );
    t.row(
        "sandbox start with the file staged, copy forced (SANDALYST_STAGING=copy)",
        copied,
        base,
        "",
    );
    t.row("sandbox start, nothing staged", empty, base, "");
    t.row(
        "staging alone, default staging (difference of the medians)",
        vec![bind_extra],
        base,
        "≤ 0.2 s for 1 GB (bind mount)",
    );
    t.row(
        "staging alone, copy (difference of the medians)",
        vec![copy_extra],
        base,
        "≤ 1.0 (tar path)",
    );
    t.note(
        "peak memory while staging (rise of the process's resident size)",
        format!("{peak:.0} MB"),
        "",
        "",
        "≤ 64 MB",
    );
    std::fs::remove_file(&big)?;
    Ok(t)
}

async fn loop_overhead(plan: &Plan, dir: &Path) -> anyhow::Result<Table> {
    let mut t = Table::new("The loop's own cost");
    let base = (
        "a fresh `python3 -c pass` process per cell",
        median(times(plan.n.max(5), || {
            time_cmd(Command::new("python3").args(["-c", "pass"]))
        })),
    );
    let fake = Sessions::new(dir.join("fake"), Arc::new(FakeFactory::default()))?;
    let mut per_turn = Vec::new();
    for _ in 0..plan.n {
        let s = fake.create(SessionConfig::default()).await?;
        let steps: Vec<Step> = (0..plan.loop_calls)
            .map(|i| ScriptedModel::python(&format!("c{i}"), "print x"))
            .collect();
        let mut cfg = SessionConfig::default();
        cfg.limits.max_turns = plan.loop_calls as u32 + 10;
        s.set_config(cfg).await?;
        let start = Instant::now();
        let h = s.ask("go".into(), Box::new(ScriptedModel::new(steps)))?;
        h.outcome().await;
        per_turn.push(start.elapsed() / (plan.loop_calls as u32 + 1));
    }
    t.row(
        "loop overhead per turn (in-memory sandbox, transcript written, synced in the background)",
        per_turn,
        base,
        "≤ 1 ms",
    );

    // A long session: each turn's cost, early against late (flat if nothing rewrites
    // or rescans the whole history per turn).
    let turns = plan.long_session_turns;
    let (mut early, mut late) = (Vec::new(), Vec::new());
    for _ in 0..plan.n {
        let s = fake.create(SessionConfig::default()).await?;
        let mut cfg = SessionConfig::default();
        cfg.limits.max_turns = turns as u32 + 10;
        s.set_config(cfg).await?;
        let model = Clocked::new(turns, &format!("print {}", "x".repeat(2_000)));
        let replies = model.replies.clone();
        s.ask("go".into(), Box::new(model))?.outcome().await;
        // From one reply handed back to the loop to its next request.
        let replies = replies.lock().unwrap().clone();
        let gaps: Vec<Duration> = replies.windows(2).map(|w| w[1].0 - w[0].1).collect();
        let tenth = (gaps.len() / 10).max(1);
        early.push(median(gaps[..tenth].to_vec()));
        late.push(median(gaps[gaps.len() - tenth..].to_vec()));
    }
    t.row(
        &format!("{turns}-turn session, cost of one turn, first tenth of the turns"),
        early,
        base,
        "",
    );
    t.row(
        &format!("{turns}-turn session, cost of one turn, last tenth of the turns"),
        late,
        base,
        "flat: about the first tenth's",
    );
    fake.close_all().await;

    // Building and serialising one request for a long history, per wire format.
    let items = long_history(plan.history_tokens);
    let tokens = sandalyst::agent::context::estimate(wire::INSTRUCTIONS, &items);
    let tools = wire::tools();
    let request = wire::request(&items, &tools);
    let cfg =
        |kind, model: &str, var: &str| wire::config(kind, model, "http://127.0.0.1:9/v1", var);
    let responses = OpenAiResponses::new(cfg(ProviderKind::OpenAi, "gpt-5.4", "OPENAI_API_KEY"))?;
    let chat = ChatCompletions::new(cfg(
        ProviderKind::OpenAiCompatible,
        "local-model",
        "SANDALYST_COMPATIBLE_API_KEY",
    ))?;
    let anthropic = Anthropic::new(cfg(
        ProviderKind::Anthropic,
        "claude-sonnet-4-5",
        "ANTHROPIC_API_KEY",
    ))?;
    let formats: [(&str, &dyn Fn() -> serde_json::Value); 3] = [
        ("OpenAI Responses", &|| responses.body(&request)),
        ("Chat Completions", &|| chat.body(&request)),
        ("Anthropic Messages", &|| anthropic.body(&request)),
    ];
    for (name, build) in formats {
        // As the transport does it: the body, then its bytes, sized by the last body's.
        let mut size = 0;
        let samples = times(plan.n.max(10), || {
            let start = Instant::now();
            size = sandalyst::model::http::encode(&build(), size)
                .expect("a body serialises")
                .len();
            start.elapsed()
        });
        t.row(
            &format!(
                "request for a {}k-token history ({} items, {:.1} MB): build + serialise, {name}",
                tokens / 1000,
                items.len(),
                size as f64 / 1e6
            ),
            samples,
            base,
            "≤ 5 ms",
        );
    }
    Ok(t)
}

/// A model that calls python `turns` times, then answers, and notes when each request
/// arrived and each reply went back. It keeps nothing of the history (the scripted test
/// model copies it for its log, which would be counted as the loop's time).
struct Clocked {
    calls: std::collections::VecDeque<Item>,
    replies: Arc<std::sync::Mutex<Vec<(Instant, Instant)>>>,
}

impl Clocked {
    fn new(turns: usize, code: &str) -> Clocked {
        let calls = (0..turns)
            .map(|i| Item::ToolCall {
                call_id: format!("c{i}").into(),
                name: "python".into(),
                arguments: serde_json::json!({ "code": code }).to_string(),
                form: CallForm::Structured,
            })
            .collect();
        Clocked {
            calls,
            replies: Arc::default(),
        }
    }
}

#[async_trait::async_trait]
impl Model for Clocked {
    fn describe(&self) -> String {
        "clocked".into()
    }

    async fn respond(
        &mut self,
        _request: Request<'_>,
        _cancel: &tokio_util::sync::CancellationToken,
    ) -> anyhow::Result<Reply> {
        let asked = Instant::now();
        let item = self.calls.pop_front().unwrap_or(Item::Assistant {
            text: "Done.".into(),
        });
        self.replies.lock().unwrap().push((asked, Instant::now()));
        Ok(Reply {
            items: vec![item],
            ..Reply::default()
        })
    }
}

/// A conversation of about `tokens` tokens (the loop's own estimate) shaped like an
/// analysis: a user task, then turns of a remark, a cell of code and its output, a chart
/// (a 90 KB PNG's base64) sent back with every fifth output.
fn long_history(tokens: u64) -> Vec<Item> {
    use sandalyst::model::ImagePart;
    let code = "df.groupby('site')['kwh'].agg(['mean', 'std']).round(2)\n".repeat(25);
    let output = "site-01   1234.56   78.90   some more text of a table\n".repeat(55);
    let png = "iVBORw0KGgo".repeat(120_000 / 11);
    let mut items = vec![Item::User {
        text: "Find the anomalies.".into(),
    }];
    let mut n = 0;
    while sandalyst::agent::context::estimate(wire::INSTRUCTIONS, &items) < tokens {
        n += 1;
        items.push(Item::Assistant {
            text: format!("Step {n}: look at the next part of the data and check it. ").repeat(6),
        });
        items.push(Item::ToolCall {
            call_id: format!("call_{n}").into(),
            name: "python".into(),
            arguments: serde_json::json!({ "code": code }).to_string(),
            form: CallForm::Structured,
        });
        let images = if n % 5 == 0 {
            vec![ImagePart {
                media_type: "image/png".into(),
                data: png.clone(),
                label: format!("output/chart_{n}.png"),
            }]
        } else {
            Vec::new()
        };
        items.push(Item::ToolOutput {
            call_id: format!("call_{n}").into(),
            output: output.clone(),
            is_error: false,
            images,
        });
    }
    items
}

/// Issue 38: one isolation runtime's side of the side-by-side table.
#[derive(Clone, Copy, PartialEq)]
enum Runtime {
    Runc,
    Gvisor,
}

impl Runtime {
    fn arg(self) -> &'static str {
        match self {
            Runtime::Runc => "runc",
            Runtime::Gvisor => "gvisor",
        }
    }

    fn docker(self) -> &'static str {
        match self {
            Runtime::Runc => "runc",
            Runtime::Gvisor => "runsc",
        }
    }

    fn isolation(self) -> sandalyst::sandbox::Isolation {
        match self {
            Runtime::Runc => sandalyst::sandbox::Isolation::Runc,
            Runtime::Gvisor => sandalyst::sandbox::Isolation::Gvisor,
        }
    }
}

/// Whether the engine has a runtime registered as `runsc` (`docker info`).
fn runsc_registered() -> bool {
    Command::new("docker")
        .args(["info", "--format", "{{json .Runtimes}}"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("\"runsc\""))
}

/// `docker run --rm --network none --runtime=RUNTIME IMAGE python3 -c CODE`: the floor
/// of anything that starts a container and runs Python in it on this engine.
fn docker_run_python(tag: &str, rt: Runtime, code: &str) -> Duration {
    time_cmd(Command::new("docker").args([
        "run",
        "--rm",
        "--network",
        "none",
        &format!("--runtime={}", rt.docker()),
        tag,
        "python3",
        "-c",
        code,
    ]))
}

/// The cells of the side-by-side table's sessions: read the reference CSV with pandas
/// (the first import of pandas in a cold kernel), then a shell call.
const PANDAS_CELL: &str =
    "import pandas as pd\ndf = pd.read_csv('input/building_energy.csv')\nprint(df.shape)";

fn pandas_then_shell() -> ScriptedModel {
    ScriptedModel::new([
        ScriptedModel::python("c1", PANDAS_CELL),
        Step::Reply(vec![ScriptedModel::call(
            "c2",
            "shell",
            serde_json::json!({ "command": "echo hi" }),
        )]),
    ])
}

/// One ask of [`pandas_then_shell`] in session `s`: from `start` to the first cell's
/// first output, and each cell's own duration (the kernel's, as the events say).
struct Timed {
    first_output: Duration,
    cells: Vec<Duration>,
}

async fn timed_ask(s: &Session, start: Instant) -> anyhow::Result<Timed> {
    let mut h = s.ask("go".into(), Box::new(pandas_then_shell()))?;
    let (mut first_output, mut cells) = (None, Vec::new());
    while let Some(e) = h.events.recv().await {
        match e.kind {
            EventKind::CellOutput { .. } if first_output.is_none() => {
                first_output = Some(start.elapsed())
            }
            EventKind::CellResult {
                duration_ms,
                status,
                ..
            } => {
                anyhow::ensure!(
                    status == Some(sandalyst::sandbox::ExecStatus::Ok),
                    "a cell of the isolation bench failed ({status:?})"
                );
                cells.push(Duration::from_millis(duration_ms));
            }
            _ => {}
        }
    }
    h.outcome().await;
    anyhow::ensure!(cells.len() == 2, "two cells ran, not {}", cells.len());
    Ok(Timed {
        first_output: first_output.unwrap_or_default(),
        cells,
    })
}

/// Issue 38, item 4: sandbox ready, the first pandas cell, a shell call and the
/// reference case under runc and under gVisor, cold and warm, beside a plain `docker
/// run` of the same image under each runtime. The runtimes take turns in every round,
/// so a busy moment of the machine falls on both.
async fn isolation(plan: &Plan, dir: &Path, tag: &str) -> anyhow::Result<Table> {
    let runtimes: Vec<Runtime> = if runsc_registered() {
        vec![Runtime::Runc, Runtime::Gvisor]
    } else {
        println!("\n(no runsc runtime registered with this engine: gVisor's column is left out)");
        vec![Runtime::Runc]
    };
    let mut lines = vec![
        "\n### runc beside gVisor (issue 38)\n".to_string(),
        "| what | n | runc | gVisor | gVisor / runc |".to_string(),
        "|---|---|---|---|---|".to_string(),
    ];
    for l in &lines {
        println!("{l}");
    }
    let rows: [&str; 13] = [
        "floor: `docker run --rm --network none --runtime=R IMAGE python3 -c pass`",
        "floor: the same, `python3 -c 'import pandas'`",
        "cold: file added -> sandbox ready (container, kernel, staging; the session's figure)",
        "cold: first pandas cell (import pandas + read_csv; the cell's own time)",
        "cold: shell call `echo hi`",
        "cold: file added, asked at once -> first output of the pandas cell",
        "warm: first pandas cell (pandas imported while idle)",
        "warm: shell call `echo hi`",
        "warm: ask -> first output of the pandas cell",
        "reference case, scripted Responses model, cold command-line run",
        "offline analyst, reference case, cold command-line run",
        "offline analyst, reference case, as an ask in a warm session",
        "... of which in the cells (their durations summed)",
    ];
    // samples[row][runtime]
    let mut samples: Vec<Vec<Vec<Duration>>> = vec![vec![Vec::new(); 2]; rows.len()];
    let factory: Arc<dyn SandboxFactory> = Arc::new(DockerFactory);
    let sessions = Sessions::new(dir.join("isolation-sessions"), factory)?;
    let input = repo().join("examples/building_energy.csv");
    let prompt = std::fs::read_to_string(repo().join("examples/anomaly_task.md"))?;
    let load = || {
        std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|_| "unknown".into())
    };
    let load_before = load();
    for round in 0..plan.n {
        for (k, &rt) in runtimes.iter().enumerate() {
            let mut push = |row: usize, d: Duration| samples[row][k].push(d);
            push(0, docker_run_python(tag, rt, "pass"));
            push(1, docker_run_python(tag, rt, "import pandas"));
            let mut config = SessionConfig::default();
            config.sandbox.image = tag.to_string();
            config.sandbox.isolation = rt.isolation();

            // Cold: the file is added (which starts the sandbox) and the question asked
            // at once; the first cell waits for the sandbox and does the imports.
            let s = sessions.create(config.clone()).await?;
            let mut rx = s.subscribe();
            let start = Instant::now();
            s.add_files(vec![input.clone()]).await?;
            let t = timed_ask(&s, start).await?;
            s.close().await;
            // The session's own figure, as the window and the command line show it.
            let ready = loop {
                match rx.try_recv() {
                    Ok(e) => {
                        if let EventKind::Setup(SetupStage::SandboxReady { millis, .. }) = e.kind {
                            break Duration::from_millis(millis);
                        }
                    }
                    Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => {}
                    Err(_) => anyhow::bail!("the session said no `sandbox ready`"),
                }
            };
            push(2, ready);
            push(3, t.cells[0]);
            push(4, t.cells[1]);
            push(5, t.first_output);
            // Long enough for the kernel to import numpy, pandas and pyplot while idle:
            // twice what the cold cell took for pandas (pyplot is about as much again).
            let idle = (t.cells[0] * 2).max(Duration::from_secs(if plan.size == Size::Tiny {
                2
            } else {
                6
            }));

            // Warm: started when the file was added, idle for a moment.
            let s = sessions.create(config.clone()).await?;
            s.add_files(vec![input.clone()]).await?;
            warm_up_for(&s, idle).await;
            let t = timed_ask(&s, Instant::now()).await?;
            push(6, t.cells[0]);
            push(7, t.cells[1]);
            push(8, t.first_output);
            s.close().await;

            if plan.size == Size::Tiny {
                // The reference case's three runs take half a minute a runtime: the
                // test suite's tiny run proves the rest (and the reference table runs
                // the same command lines).
                continue;
            }
            let server = WireServer::paced(responses_script(), Duration::ZERO).await;
            let data = dir.join(format!("iso-scripted-{}-{round}", rt.arg()));
            let mut c = offline_cli(&data.join("out"), &data);
            c.args(["--model", "openai:gpt-5.4", "--isolation", rt.arg()])
                .env("SANDALYST_IMAGE", tag)
                .env("OPENAI_API_KEY", wire::TEST_KEY)
                .env("OPENAI_BASE_URL", format!("{}/v1", server.base));
            push(9, tokio::task::block_in_place(|| time_cmd(&mut c)));
            anyhow::ensure!(server.received().len() == 3, "three model turns");

            let data = dir.join(format!("iso-offline-{}-{round}", rt.arg()));
            let mut c = offline_cli(&data.join("out"), &data);
            c.args(["--isolation", rt.arg()])
                .env("SANDALYST_IMAGE", tag);
            push(10, tokio::task::block_in_place(|| time_cmd(&mut c)));

            let s = sessions.create(config.clone()).await?;
            s.add_files(vec![input.clone()]).await?;
            warm_up_for(&s, idle).await;
            let start = Instant::now();
            let model = sandalyst::analyst::OfflineAnalyst::new();
            let mut h = s.ask(prompt.clone(), Box::new(model))?;
            let mut cell_ms = 0;
            while let Some(e) = h.events.recv().await {
                if let EventKind::CellResult { duration_ms, .. } = e.kind {
                    cell_ms += duration_ms;
                }
            }
            let outcome = h.outcome().await;
            push(11, start.elapsed());
            push(12, Duration::from_millis(cell_ms));
            anyhow::ensure!(
                outcome.outputs.len() >= 3,
                "the offline analyst made {} outputs",
                outcome.outputs.len()
            );
            s.close().await;
        }
    }
    sessions.close_all().await;
    let load_after = load();
    for (what, by) in rows.iter().zip(samples) {
        let n = by[0].len();
        if n == 0 {
            lines.push(format!("| {what} | 0 | (not at tiny size) | | |"));
            println!("{}", lines.last().unwrap());
            continue;
        }
        let runc = median(by[0].clone());
        let (gvisor, ratio) = if by[1].is_empty() {
            ("(no runsc)".to_string(), String::new())
        } else {
            let g = median(by[1].clone());
            (
                ms(g),
                format!("{:.2}", g.as_secs_f64() / runc.as_secs_f64().max(1e-9)),
            )
        };
        lines.push(format!(
            "| {what} | {n} | {} | {gvisor} | {ratio} |",
            ms(runc)
        ));
        println!("{}", lines.last().unwrap());
    }
    lines.push(format!(
        "\n(load average before: {load_before}; after: {load_after}; {} round(s), the runtimes taking turns)",
        plan.n
    ));
    println!("{}", lines.last().unwrap());
    Ok(Table(lines))
}

/// Issue 38, item 1: the scripted reference case as one command-line process (`sandalyst
/// run --model openai:gpt-5.4 --isolation R`, the Responses-wire server on loopback,
/// three turns), runc and gVisor taking turns in every round: its wall time, and when
/// the first model request arrived after the process started (a run that overlaps the
/// sandbox's start with the model's first turn asks it before the sandbox is ready).
async fn cli_reference(plan: &Plan, dir: &Path, tag: &str) -> anyhow::Result<Table> {
    let runtimes: Vec<Runtime> = if runsc_registered() {
        vec![Runtime::Runc, Runtime::Gvisor]
    } else {
        vec![Runtime::Runc]
    };
    let rows = [
        "reference case, scripted Responses model, cold command-line run",
        "... process start -> first model request",
    ];
    let mut samples: Vec<Vec<Vec<Duration>>> = vec![vec![Vec::new(); 2]; rows.len()];
    let load = || std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load_before = load();
    for round in 0..plan.n {
        for (k, &rt) in runtimes.iter().enumerate() {
            let server = WireServer::paced(responses_script(), Duration::ZERO).await;
            let data = dir.join(format!("cli-{}-{round}", rt.arg()));
            let mut c = offline_cli(&data.join("out"), &data);
            c.args(["--model", "openai:gpt-5.4", "--isolation", rt.arg()])
                .env("SANDALYST_IMAGE", tag)
                .env("OPENAI_API_KEY", wire::TEST_KEY)
                .env("OPENAI_BASE_URL", format!("{}/v1", server.base));
            let start = Instant::now();
            samples[0][k].push(tokio::task::block_in_place(|| time_cmd(&mut c)));
            let received = server.received();
            anyhow::ensure!(received.len() == 3, "three model turns");
            samples[1][k].push(received[0].at.duration_since(start));
        }
    }
    let mut lines = vec![
        "\n### The scripted reference case as one command-line process (issue 38)\n".to_string(),
        "| what | n | runc | gVisor |".to_string(),
        "|---|---|---|---|".to_string(),
    ];
    for (what, by) in rows.iter().zip(samples) {
        let cell = |v: &Vec<Duration>| {
            let mut v = v.clone();
            v.sort();
            let all: Vec<String> = v.iter().map(|d| ms(*d)).collect();
            if v.is_empty() {
                "(no runsc)".to_string()
            } else {
                format!("{} ({})", ms(median(v.clone())), all.join(", "))
            }
        };
        lines.push(format!(
            "| {what} | {} | {} | {} |",
            by[0].len(),
            cell(&by[0]),
            cell(&by[1])
        ));
    }
    lines.push(format!(
        "\n(load average before: {}; after: {}; medians, every sample in brackets)",
        load_before.trim(),
        load().trim()
    ));
    for l in &lines {
        println!("{l}");
    }
    Ok(Table(lines))
}

/// [`warm_up`], idle for `idle` after the sandbox is ready.
async fn warm_up_for(session: &Session, idle: Duration) {
    let mut rx = session.subscribe();
    session.warm();
    while let Ok(e) = rx.recv().await {
        if matches!(e.kind, EventKind::Setup(SetupStage::SandboxReady { .. })) {
            break;
        }
    }
    tokio::time::sleep(idle).await;
}

/// Measures everything at `size`, printing each row as it is measured; returns the
/// printed lines. `docker`: false leaves out what needs the engine.
/// `SANDALYST_BENCH_ONLY` names one section (see [`run_sections`]).
pub async fn run(size: Size, docker: bool) -> anyhow::Result<Vec<String>> {
    let only = std::env::var("SANDALYST_BENCH_ONLY").ok();
    run_sections(size, docker, only.as_deref()).await
}

/// [`run`] with `only` one section: tables, loop, reference, staging, isolation or cli.
/// The isolation and cli tables (issue 38) are measured only when asked for.
pub async fn run_sections(
    size: Size,
    docker: bool,
    only: Option<&str>,
) -> anyhow::Result<Vec<String>> {
    let plan = Plan::new(size);
    let dir = tempfile::tempdir()?;
    let title = format!(
        "## Issue 11 figures ({} size; medians; ratio = median / baseline median)",
        match plan.size {
            Size::Tiny => "tiny (proves the bench runs; the numbers mean nothing)",
            Size::Small => "small",
            Size::Full => "full",
        }
    );
    println!("{title}");
    let wanted = |section: &str| match only {
        None => section != "isolation" && section != "cli",
        Some(o) => o == section,
    };
    let mut all = Vec::new();
    if wanted("tables") {
        all.extend(tables(&plan, dir.path())?);
    }
    if wanted("loop") {
        all.push(loop_overhead(&plan, dir.path()).await?);
    }
    let engine_sections = ["reference", "staging", "isolation", "cli"];
    if docker && engine_sections.iter().any(|s| wanted(s)) {
        let engine = docker::connect().await?;
        let tag = match std::env::var("SANDALYST_IMAGE") {
            Ok(t) => t,
            Err(_) => docker::image::ensure(&engine, &|l| eprintln!("{l}")).await?,
        };
        if wanted("reference") {
            all.push(reference_and_session(&plan, dir.path(), &tag).await?);
        }
        if wanted("staging") {
            all.push(staging(&plan, dir.path(), &tag).await?);
        }
        if wanted("isolation") {
            all.push(isolation(&plan, dir.path(), &tag).await?);
        }
        if wanted("cli") {
            all.push(cli_reference(&plan, dir.path(), &tag).await?);
        }
    } else if !docker {
        println!("\n(sandbox tables left out)");
    }
    Ok(std::iter::once(title)
        .chain(all.into_iter().flat_map(|t| t.0))
        .collect())
}

#[allow(dead_code)] // the test suite includes this file for `run` (core/tests/docker/bench_suite.rs)
fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let size = if args.iter().any(|a| a == "--tiny") {
        Size::Tiny
    } else if args.iter().any(|a| a == "--full") {
        Size::Full
    } else {
        Size::Small
    };
    let docker = std::env::var_os("SANDALYST_BENCH_NO_DOCKER").is_none();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(run(size, docker))?;
    Ok(())
}
