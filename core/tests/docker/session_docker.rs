//! A session in the real Docker sandbox: live output while a cell runs, charts and
//! figures as events before the ask ends, notebook habits, the output budget with the
//! whole output kept in the workspace, and a follow-up on the same kernel.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandalyst::agent::{Event, EventKind, RunStatus};
use sandalyst::model::scripted::{ScriptedModel, Step};
use sandalyst::model::Item;
use sandalyst::session::{DockerFactory, Session, SessionConfig, Sessions};

async fn session(dir: &tempfile::TempDir) -> (Sessions, Session) {
    let docker = common::engine().await;
    let mut config = SessionConfig::default();
    config.sandbox = common::config(&docker).await;
    config.limits.call_timeout = Duration::from_secs(60);
    let sessions = Sessions::new(dir.path().join("sessions"), Arc::new(DockerFactory)).unwrap();
    let session = sessions.create(config).await.unwrap();
    let input = dir.path().join("data.csv");
    std::fs::write(&input, "day,sales\nMon,3\nTue,5\nWed,4\n").unwrap();
    session.add_files(vec![input]).await.unwrap();
    (sessions, session)
}

/// Events with the time each arrived.
async fn ask_timed(
    session: &Session,
    prompt: &str,
    model: ScriptedModel,
) -> (Vec<(Instant, Event)>, sandalyst::session::AskOutcome) {
    let mut h = session.ask(prompt.into(), Box::new(model)).unwrap();
    let mut events = Vec::new();
    while let Some(e) = h.events.recv().await {
        events.push((Instant::now(), e));
    }
    (events, h.outcome().await)
}

fn outputs(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::ToolOutput { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_session_streams_output_shows_charts_and_keeps_the_kernel() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_sessions, session) = session(&dir).await;
    let model = ScriptedModel::new([
        ScriptedModel::python(
            "c1",
            "import time\nfor i in range(6):\n    print('tick', i, flush=True)\n    time.sleep(0.5)",
        ),
        ScriptedModel::python(
            "c2",
            "import pandas as pd, matplotlib.pyplot as plt\n\
             df = pd.read_csv('input/data.csv')\n\
             display(df)\n\
             ax = df.plot.bar(x='day', y='sales')\n\
             plt.savefig('output/sales.png')\n\
             plt.show()",
        ),
        ScriptedModel::python("c3", "print('x' * 200_000)"),
        Step::Reply(vec![Item::Assistant {
            text: "Sales peak on Tuesday: output/sales.png.".into(),
        }]),
    ]);
    let log = model.log.clone();
    let (events, outcome) = ask_timed(&session, "chart the sales", model).await;
    assert_eq!(outcome.status, RunStatus::Finished, "{events:?}");
    // The model is told what the image holds, read from it, with versions.
    let instructions = log.lock().unwrap()[0].instructions.clone();
    for needle in [
        "Installed: Python 3.",
        "with numpy 2.",
        "pandas 2.",
        "pandas reads and writes Parquet",
        "OpenDocument .ods",
    ] {
        assert!(
            instructions.contains(needle),
            "{needle} not in {instructions}"
        );
    }
    // The readers are said by what they do, not named: a small model imports them.
    assert!(!instructions.contains("odfpy"), "{instructions}");

    // Live output: ticks arrive while the cell runs, well before its result.
    let result_at = events
        .iter()
        .find(|(_, e)| matches!(&e.kind, EventKind::CellResult { call_id, .. } if call_id == "c1"))
        .unwrap()
        .0;
    let chunks: Vec<Instant> = events
        .iter()
        .filter(
            |(_, e)| matches!(&e.kind, EventKind::CellOutput { call_id, .. } if call_id == "c1"),
        )
        .map(|(t, _)| *t)
        .collect();
    assert!(chunks.len() >= 3, "{} chunks", chunks.len());
    assert!(
        result_at - chunks[0] >= Duration::from_millis(1500),
        "the first chunk came only {:?} before the result",
        result_at - chunks[0]
    );

    // The chart is an artifact event and the shown figure a cell image, before the end.
    let kinds: Vec<&EventKind> = events.iter().map(|(_, e)| &e.kind).collect();
    let artifact = kinds
        .iter()
        .position(|k| matches!(k, EventKind::Artifact { path, .. } if path == "sales.png"))
        .expect("artifact event");
    let image = kinds
        .iter()
        .position(|k| matches!(k, EventKind::CellImage { call_id, .. } if call_id == "c2"))
        .expect("figure event");
    let finished = kinds
        .iter()
        .position(|k| matches!(k, EventKind::AskFinished { .. }))
        .unwrap();
    assert!(artifact < finished && image < finished);
    if let EventKind::CellImage { path, .. } = kinds[image] {
        let png = std::fs::read(session.dir().join(path)).unwrap();
        assert!(png.starts_with(b"\x89PNG"));
    }
    // display(df) showed the table in the cell's output.
    let seen = log.lock().unwrap().clone();
    let c2 = &outputs(&seen[2].items)[1];
    assert!(c2.contains("Tue") && c2.contains('5'), "{c2}");
    // The long output was cut for the model and kept whole in the workspace.
    let c3 = &outputs(&seen[3].items)[2];
    assert!(
        c3.len() < 13_000 && c3.contains("/workspace/.sandalyst/calls/c3.txt"),
        "{}",
        c3.len()
    );
    drop(seen);

    // A follow-up: same kernel (df is still there), the whole output readable.
    let model = ScriptedModel::new([ScriptedModel::python(
        "d1",
        "import os\nprint(len(df), os.path.getsize('.sandalyst/calls/c3.txt') > 200_000)",
    )]);
    let log = model.log.clone();
    let (_, outcome) = ask_timed(&session, "how many rows?", model).await;
    assert_eq!(outcome.status, RunStatus::Finished);
    let seen = log.lock().unwrap().clone();
    let last = outputs(&seen[1].items).pop().unwrap();
    assert!(last.contains("3 True"), "{last}");
    assert!(session.outputs_dir().join("sales.png").is_file());
    session.close().await;
}

#[tokio::test]
async fn twenty_five_turns_of_200_kb_stay_within_budget_and_end_with_a_summary() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_sessions, session) = session(&dir).await;
    let steps: Vec<Step> = (0..25)
        .map(|i| ScriptedModel::python(&format!("p{i}"), "print(('y' * 99 + '\\n') * 2000)"))
        .chain([Step::Reply(vec![Item::Assistant {
            text: "Summary: 25 long outputs.".into(),
        }])])
        .collect();
    let mut model = ScriptedModel::new(steps);
    model.context_window = Some(128_000);
    let log = model.log.clone();
    let (_, outcome) = ask_timed(&session, "print a lot", model).await;
    assert_eq!(
        outcome.status,
        RunStatus::MaxTurns {
            turns: 25,
            missing: vec![]
        }
    );
    assert_eq!(outcome.answer.as_deref(), Some("Summary: 25 long outputs."));
    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 26);
    assert!(
        seen[25].tools.is_empty(),
        "the summary turn offers no tools"
    );
    for s in &seen {
        for out in outputs(&s.items) {
            assert!(out.chars().count() <= 12_500, "{} characters", out.len());
        }
        let tokens: usize = s
            .items
            .iter()
            .map(|i| serde_json::to_string(i).unwrap().len())
            .sum::<usize>()
            / 4;
        assert!(tokens < 102_400, "a request of about {tokens} tokens");
    }
    // Every call's whole output is on disk in the workspace.
    let model = ScriptedModel::new([ScriptedModel::python(
        "check",
        "import os\nsizes = [os.path.getsize(f'.sandalyst/calls/p{i}.txt') for i in range(25)]\nprint(min(sizes) > 200_000, len(sizes))",
    )]);
    let log = model.log.clone();
    ask_timed(&session, "check", model).await;
    let last = outputs(&log.lock().unwrap()[1].items).pop().unwrap();
    assert!(last.contains("True 25"), "{last}");
    session.close().await;
}
