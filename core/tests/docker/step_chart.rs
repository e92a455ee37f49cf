//! A figure's `write` step in the real kernel: the cell the app writes from a named
//! chart draws and saves a figure for the shapes a small model hands it (a frame with
//! dates as text, a Series grouped on two keys, marks without the y column), and a
//! wrong column fails with the kernel's note naming the frames' columns.

use crate::common;

use std::time::Duration;

use sandalyst::artifacts::check::problem;
use sandalyst::model::chat_completions::chart::Chart;
use sandalyst::sandbox::{ExecStatus, Sandbox};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

const T: Duration = Duration::from_secs(120);

const LOAD: &str = "import pandas as pd, numpy as np, matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n\
t = pd.date_range('2024-01-01', periods=96, freq='h')\n\
df = pd.DataFrame({'timestamp': t.strftime('%Y-%m-%d %H:%M:%S'), 'zone': ['a', 'b'] * 48, 'kwh': np.sin(np.arange(96) / 5) + 2})\n\
df.loc[40, 'kwh'] = 9\n\
events = df[df.kwh > 5]\n\
scores = df.set_index('timestamp').kwh.rename(None)[df.kwh.values > 5]\n\
by_day_zone = df.assign(day=pd.to_datetime(df.timestamp).dt.day).groupby(['day', 'zone']).kwh.mean()";

fn cell_of(step: Value, path: &str) -> String {
    let chart = Chart::from_step(step.as_object().unwrap()).unwrap();
    let mut lines = chart.code();
    lines.push(format!("plt.savefig('{path}')"));
    lines.join("\n")
}

#[tokio::test]
async fn the_apps_chart_cells_draw_the_shapes_a_small_model_names() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "chart", &[]).await;
    let run = |code: String| {
        let sb = &sb;
        async move {
            sb.python(&code, T, &CancellationToken::new(), &|_, _| {})
                .await
                .unwrap()
        }
    };
    let r = run(format!(
        "{LOAD}\nimport os\nos.makedirs('output', exist_ok=True)"
    ))
    .await;
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    let cases = [
        // Dates as text, the events marked by their own rows.
        json!({"data": "df", "x": "timestamp", "y": ["kwh"], "kind": "line", "mark": "events", "title": "Energy"}),
        // Marks that are a Series without the y column: lines at their x.
        json!({"data": "df", "x": "timestamp", "y": ["kwh"], "kind": "line", "mark": "scores", "title": "Energy"}),
        // A Series grouped on two keys, x one of them.
        json!({"data": "by_day_zone", "x": "day", "y": ["kwh"], "kind": "scatter", "mark": "", "title": "By day"}),
        json!({"data": "df.groupby('zone').kwh.sum()", "x": "zone", "y": ["kwh"], "kind": "bar", "mark": "", "title": "Zones"}),
        json!({"data": "df", "x": "timestamp", "y": ["kwh"], "kind": "hist", "mark": "None", "title": "Spread"}),
    ];
    for (i, step) in cases.iter().enumerate() {
        let path = format!("output/chart{i}.png");
        let r = run(cell_of(step.clone(), &path)).await;
        assert_eq!(r.status, ExecStatus::Ok, "{step}: {r:?}");
        let bytes = sb.read_file(&path, 4 << 20).await.unwrap();
        assert_eq!(
            problem(&path, bytes.len() as u64, &bytes),
            None,
            "{step}: {} bytes",
            bytes.len()
        );
    }
    // A column the frame does not have fails with the kernel's note of the columns.
    let wrong = json!({"data": "df", "x": "timestamp", "y": ["energy"], "kind": "line", "mark": "", "title": "E"});
    let r = run(cell_of(wrong, "output/wrong.png")).await;
    assert_eq!(r.status, ExecStatus::Error, "{r:?}");
    let said = format!(
        "{} {}",
        r.traceback.unwrap_or_default(),
        r.note.unwrap_or_default()
    );
    assert!(said.contains("KeyError"), "{said}");
    assert!(
        said.contains("df has timestamp, zone, kwh"),
        "the note names the columns: {said}"
    );
    sb.close().await.unwrap();
}
