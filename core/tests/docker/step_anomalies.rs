//! The `find_anomalies` step in the real kernel: the cell the app writes from a named
//! series finds the events planted in two building-energy exports (and not their
//! normal noise), prints its method with numbers to write a report from, and takes
//! the shapes a small model hands it (the time as the index, daily data, a context
//! column of text); a wrong column fails naming the frame's columns.

use crate::common;

use std::time::Duration;

use sandalyst::model::chat_completions::anomalies::Anomalies;
use sandalyst::model::chat_completions::chart::Chart;
use sandalyst::sandbox::{ExecStatus, Sandbox};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

const T: Duration = Duration::from_secs(120);

fn cell(step: Value) -> String {
    Anomalies::from_step(step.as_object().unwrap())
        .unwrap()
        .code()
}

/// Each planted event overlaps one found event, no found event holds a reading of
/// normal noise, and there are not many more events than were planted.
const CHECK: &str = r#"
import json
truth = json.load(open(TRUTH))
found = [(pd.Timestamp(s), pd.Timestamp(e)) for s, e in zip(anomalies['start'], anomalies['end'])]
hit = [any(s <= pd.Timestamp(ev['end']) and pd.Timestamp(ev['start']) <= e for s, e in found) for ev in truth['events']]
noise = [n['time'] for n in truth['normal_noise'] if any(s <= pd.Timestamp(n['time']) <= e for s, e in found)]
print('CHECK', json.dumps({'hit': hit, 'noise': noise, 'events': len(anomalies), 'rows': len(scored),
    'columns': [c for c in ['expected', 'residual', 'z', 'anomaly'] if c in scored.columns],
    'in_place': int(df['anomaly'].sum()) if 'anomaly' in df.columns else None, 'marked': int(scored['anomaly'].sum()),
    'event_columns': list(anomalies.columns)}))
"#;

#[tokio::test]
async fn the_apps_anomaly_cell_finds_the_planted_events_and_not_the_noise() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let root = common::repo_root();
    let inputs = [
        root.join("examples/building_energy.csv"),
        root.join("examples/building_energy.events.json"),
        root.join("tests/fixtures/building_energy_next.csv"),
        root.join("tests/fixtures/building_energy_next.events.json"),
    ];
    let (sb, _) = common::sandbox(&docker, "anomalies", &inputs).await;
    let run = |code: String| {
        let sb = &sb;
        async move {
            sb.python(&code, T, &CancellationToken::new(), &|_, _| {})
                .await
                .unwrap()
        }
    };
    for name in ["building_energy", "building_energy_next"] {
        let load = format!(
            "import pandas as pd\nimport matplotlib.pyplot as plt\ndf = pd.read_csv('input/{name}.csv', parse_dates=['timestamp'])\nTRUTH = 'input/{name}.events.json'"
        );
        assert_eq!(run(load).await.status, ExecStatus::Ok);
        let r = run(cell(
            json!({"data": "df", "time": "timestamp", "value": "energy_kwh",
            "context": ["outdoor_temp_c"]}),
        ))
        .await;
        assert_eq!(r.status, ExecStatus::Ok, "{name}: {r:?}");
        // The numbers a report is written from.
        for said in [
            "Method: the expected energy_kwh is its median by hour of week times the effect of outdoor_temp_c",
            "Data: 1344 readings, one every 1 hour, from ",
            "Readings with |z| >= 3.5 are flagged",
            "\nEvent 1: ",
            "Defined: anomalies (one row per event: event, start, end,",
            "To draw them: data scored, x 'timestamp', y ['energy_kwh', 'expected'], mark scored[scored.anomaly].",
        ] {
            assert!(r.stdout.contains(said), "{name}: {said:?} in\n{}", r.stdout);
        }
        let checked = run(CHECK.into()).await;
        let line = checked
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("CHECK "))
            .unwrap_or_else(|| panic!("{checked:?}"));
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            v["hit"],
            json!([true, true, true]),
            "{name}: {v}\n{}",
            r.stdout
        );
        assert_eq!(v["noise"], json!([]), "{name}: {v}\n{}", r.stdout);
        let events = v["events"].as_u64().unwrap();
        assert!(
            (3..=8).contains(&events),
            "{name}: {events} events\n{}",
            r.stdout
        );
        assert_eq!(v["rows"], 1344);
        // The frame passed in gets the same columns: a chart of it draws them too.
        assert_eq!(v["in_place"], v["marked"], "{v}");
        assert_eq!(
            v["columns"],
            json!(["expected", "residual", "z", "anomaly"])
        );
        // The chart the output says to draw is drawn.
        let chart = Chart::from_step(
            json!({"data": "scored", "x": "timestamp", "y": ["energy_kwh", "expected"],
                "kind": "line", "mark": "scored[scored.anomaly]", "title": "Energy"})
            .as_object()
            .unwrap(),
        )
        .unwrap();
        let drawn = run(format!(
            "{}\nplt.savefig('chart.png')",
            chart.code().join("\n")
        ))
        .await;
        assert_eq!(drawn.status, ExecStatus::Ok, "{drawn:?}");
        // The mask alone as the mark (a 1.5B model's `scored.anomaly`, r25) marks the
        // flagged rows.
        let chart = Chart::from_step(
            json!({"data": "scored", "x": "timestamp", "y": ["energy_kwh"],
                "kind": "line", "mark": "scored.anomaly", "title": "Energy"})
            .as_object()
            .unwrap(),
        )
        .unwrap();
        let drawn = run(format!(
            "{}\nprint('marked', len(_marked), int(scored.anomaly.sum()))",
            chart.code().join("\n")
        ))
        .await;
        assert_eq!(drawn.status, ExecStatus::Ok, "{drawn:?}");
        let marked: Vec<&str> = drawn.stdout.split_whitespace().skip(1).take(2).collect();
        assert!(
            marked[0] == marked[1] && marked[0] != "0",
            "{}",
            drawn.stdout
        );
        let columns = v["event_columns"].to_string();
        for c in [
            "event",
            "start",
            "end",
            "direction",
            "peak_energy_kwh",
            "outdoor_temp_c_mean",
            "when",
        ] {
            assert!(columns.contains(c), "{c} in {columns}");
        }
    }

    // The time as the index, daily readings, a context column of text: it still runs,
    // and says which context it did not use.
    let r = run(
        "import numpy as np\n\
         daily = pd.DataFrame({'sales': 100 + 10 * np.sin(np.arange(120)), 'shop': ['a', 'b'] * 60},\n\
             index=pd.date_range('2024-01-01', periods=120, freq='D').rename('day'))\n\
         daily.iloc[50, 0] = 400"
            .into(),
    )
    .await;
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    let r = run(cell(
        json!({"data": "daily", "time": "day", "value": "sales", "context": ["shop"]}),
    ))
    .await;
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    assert!(r.stdout.contains("median by day of week"), "{}", r.stdout);
    assert!(r.stdout.contains("Not used as context"), "{}", r.stdout);
    assert!(
        r.stdout.contains("2024-02-20"),
        "the planted day is an event: {}",
        r.stdout
    );

    // A column the frame does not have: the error names the frame's columns.
    let r = run(cell(
        json!({"data": "df", "time": "timestamp", "value": "energy", "context": []}),
    ))
    .await;
    assert_eq!(r.status, ExecStatus::Error, "{r:?}");
    let said = format!("{} {}", r.traceback.unwrap_or_default(), r.stderr);
    assert!(
        said.contains("no column 'energy'") && said.contains("energy_kwh"),
        "{said}"
    );
}
