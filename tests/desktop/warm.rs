//! The first cell after a file drop runs in a kernel that was already warm: the drop
//! starts the sandbox, the window says "Sandbox ready" with its time, the kernel
//! imports pandas while the analyst types, and the ask's line shows the time from Run
//! to the cell's first output, which this test reads. Issue 38 asks for ≤ 300 ms; the
//! figure is printed for BENCHMARKS.md, and asserted only loosely (a loaded CI machine
//! is no place for a tight timing), while the warm start itself is asserted.

use super::*;

/// "first output 87 ms after Run" (or "1.2 s") in the ask's line, in milliseconds.
fn first_output_ms(stats: &str) -> Option<f64> {
    let rest = stats.split("first output ").nth(1)?;
    let figure = rest.split(" after Run").next()?;
    let (number, unit) = figure.split_once(' ')?;
    let n: f64 = number.parse().ok()?;
    match unit {
        "ms" => Some(n),
        "s" => Some(n * 1000.0),
        _ => None,
    }
}

#[test]
fn the_first_output_figure_is_read_from_the_line() {
    let line = "turn 1/25 · 0 s · first output 87 ms after Run · 200 tokens";
    assert_eq!(first_output_ms(line), Some(87.0));
    assert_eq!(
        first_output_ms("1 s · first output 1.2 s after Run"),
        Some(1200.0)
    );
    assert_eq!(first_output_ms("turn 1/25 · 0 s"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_cell_after_a_drop_runs_in_a_warm_kernel_and_its_time_is_shown() {
    let display = Display::get();
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let app = App::start(&display, data.path(), &[]).await;
    app.add_file(&repo().join("examples/building_energy.csv"))
        .await;
    // The drop started the sandbox; the window says when it is ready, with its time.
    app.wait_js(
        "return document.querySelector('#session-status').innerText.startsWith('Sandbox ready (')",
        240,
    )
    .await;
    let ready = app.text("#session-status").await;
    assert!(ready.ends_with(" s)."), "{ready}");
    // The analyst types for a while: the kernel imports numpy, pandas and pyplot.
    tokio::time::sleep(Duration::from_secs(8)).await;

    let script = work.path().join("first-cell.json");
    let code = "import pandas as pd\ndf = pd.read_csv('input/building_energy.csv')\nprint(len(df), 'rows')";
    std::fs::write(
        &script,
        json!([{"python": code}, {"say": "Counted the rows."}]).to_string(),
    )
    .unwrap();
    app.ask("How many rows?", &format!("replay:{}", script.display()))
        .await;
    app.wait_js(
        "return document.querySelectorAll('.ask .ending:not(:empty)').length >= 1",
        120,
    )
    .await;
    let ending = app.text(".ask .ending").await;
    assert!(ending.starts_with("Finished"), "{ending}");
    assert!(app.text(".ask .cell .outputs").await.contains("1344 rows"));

    // The ask found the sandbox started and ready: the window says it was warm.
    let status = app.text("#session-status").await;
    assert!(
        status.starts_with("Sandbox ready, warm: ready for "),
        "the ask did not find the sandbox warm: {status}"
    );
    // The time from Run to the cell's first output, as the window shows it.
    let stats = app.text(".ask .ask-stats").await;
    let ms = first_output_ms(&stats).unwrap_or_else(|| panic!("no first-output time in {stats:?}"));
    // Under the isolation the session ran with (the default: gVisor where registered).
    let id = app.session_id().await;
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(data.path().join(&id).join("run.json")).unwrap(),
    )
    .unwrap();
    let isolation = meta["isolation"].as_str().unwrap_or("unknown").to_string();
    println!("desktop: Run -> first output of the first cell, warm kernel, {isolation}: {ms} ms ({status})");
    // Far below a cold start with the imports (seconds); the 300 ms is for
    // BENCHMARKS.md, measured, not asserted on a shared machine.
    assert!(ms < 3000.0, "{stats}");
    app.quit().await;
}
