//! Session timings against the real Docker daemon: how long an ask waits for the
//! sandbox once files were added (the container and kernel start in the background),
//! compared with a cold start; and the loop's own cost per turn. Method and results:
//! BENCHMARKS.md. Run: `cargo bench --bench session`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandalyst::agent::{EventKind, SetupStage};
use sandalyst::model::scripted::{ScriptedModel, Step};
use sandalyst::sandbox::docker;
use sandalyst::session::FakeFactory;
use sandalyst::session::{DockerFactory, SandboxFactory, Session, SessionConfig, Sessions};

fn stats(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "| {name} | {} | {:.2} | {:.2} | {:.2} |",
        samples.len(),
        ms(samples[0]),
        ms(samples[samples.len() / 2]),
        ms(*samples.last().unwrap())
    );
}

/// From `ask()` to the first live output of the first cell, with a model that
/// answers at once; `wait_ready` first lets the background start finish.
async fn first_cell(session: &Session, code: &str, wait_ready: bool) -> Duration {
    if wait_ready {
        let mut rx = session.subscribe();
        session.warm();
        loop {
            if let Ok(e) = rx.recv().await {
                if matches!(e.kind, EventKind::Setup(SetupStage::SandboxReady { .. })) {
                    break;
                }
            }
        }
        // The kernel imports numpy, pandas and pyplot while idle: let it.
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    let model = ScriptedModel::new([ScriptedModel::python("c1", code)]);
    let start = Instant::now();
    let mut h = session.ask("go".into(), Box::new(model)).unwrap();
    let mut first = None;
    while let Some(e) = h.events.recv().await {
        if first.is_none() && matches!(e.kind, EventKind::CellOutput { .. }) {
            first = Some(start.elapsed());
        }
    }
    h.outcome().await;
    first.expect("the cell printed")
}

async fn new_session(
    sessions: &Sessions,
    config: &SessionConfig,
    input: &std::path::Path,
) -> Session {
    let s = sessions.create(config.clone()).await.unwrap();
    s.add_files(vec![input.to_path_buf()]).await.unwrap();
    s
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let engine = docker::connect().await?;
    let mut config = SessionConfig::default();
    config.sandbox.image = docker::image::ensure(&engine, &|l| eprintln!("{l}")).await?;
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("data.csv");
    std::fs::write(&input, "t,v\n1,2\n")?;
    let factory: Arc<dyn SandboxFactory> = Arc::new(DockerFactory);
    let sessions = Sessions::new(dir.path().join("sessions"), factory)?;
    println!("| what | n | min ms | median ms | max ms |\n|---|---|---|---|---|");

    let code = "import pandas as pd\nprint(pd.__version__)";
    let (mut warm, mut cold) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let s = new_session(&sessions, &config, &input).await;
        warm.push(first_cell(&s, code, true).await);
        s.close().await;
        // Cold: the ask itself has to start the container (files added, no wait).
        let s = sessions.create(config.clone()).await?;
        let mut rx = s.subscribe();
        s.add_files(vec![input.clone()]).await?;
        // add_files warms in the background; the ask starts at once and waits for it.
        cold.push(first_cell(&s, code, false).await);
        while rx.try_recv().is_ok() {}
        s.close().await;
    }
    stats(
        "ask -> first output of `import pandas`, warm session (files added earlier)",
        warm,
    );
    stats(
        "ask -> first output of `import pandas`, ask right after adding files",
        cold,
    );

    // The loop's own cost: 50 trivial calls on the in-memory sandbox.
    let fake = Sessions::new(dir.path().join("fake"), Arc::new(FakeFactory::default()))?;
    let mut per_turn = Vec::new();
    for _ in 0..5 {
        let s = fake.create(SessionConfig::default()).await?;
        let steps: Vec<Step> = (0..50)
            .map(|i| ScriptedModel::python(&format!("c{i}"), "print x"))
            .collect();
        let mut cfg = SessionConfig::default();
        cfg.limits.max_turns = 60;
        s.set_config(cfg).await?;
        let start = Instant::now();
        let h = s.ask("go".into(), Box::new(ScriptedModel::new(steps)))?;
        h.outcome().await;
        per_turn.push(start.elapsed() / 51);
    }
    stats(
        "loop overhead per turn (in-memory sandbox, transcript synced to disk)",
        per_turn,
    );
    sessions.close_all().await;
    Ok(())
}
