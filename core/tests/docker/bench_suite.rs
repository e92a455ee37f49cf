//! The bench (core/benches/suite.rs, what scripts/bench.sh runs) still runs: at tiny
//! size, against the real engine, it prints every table with its baselines. Timings
//! are not checked.

use crate::common;

#[path = "../../benches/suite.rs"]
#[allow(dead_code)]
mod suite;

/// The runtime the bench makes for itself (two workers, as `cargo bench` runs it).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn the_bench_prints_its_tables_at_tiny_size() {
    if common::no_engine_skip() {
        return;
    }
    let lines = runtime()
        .block_on(suite::run(suite::Size::Tiny, true))
        .unwrap();
    let text = lines.join("\n");
    for title in [
        "### Big tables: 3000 rows",
        "### The loop's own cost",
        "### The reference case and the first cell",
        "### Staging a 4 MB CSV",
    ] {
        assert!(text.contains(title), "{title} missing:\n{text}");
    }
    for row in [
        "| first page (200 rows), nothing indexed yet | 1 |",
        "| reference case, scripted Responses model, cold command-line run | 1 |",
        "| reference case as an ask in a warm session | 1 |",
        "| ask -> first output of `import pandas`, warm session, zero-latency model | 1 |",
        "| offline analyst, reference case, cold command-line run | 1 |",
        "| sandbox start with the file staged, default staging: ",
        "| sandbox start with the file staged, copy forced (SANDALYST_STAGING=copy) | 1 |",
        "| staging alone, default staging (difference of the medians) | 1 |",
        "| staging alone, copy (difference of the medians) | 1 |",
        "| loop overhead per turn (in-memory sandbox, transcript written, synced in the background) | 1 |",
    ] {
        assert!(text.contains(row), "{row} missing:\n{text}");
    }
    for part in [
        "-turn session, cost of one turn, first tenth of the turns | 1 |",
        "-turn session, cost of one turn, last tenth of the turns | 1 |",
        "build + serialise, OpenAI Responses | 10 |",
        "build + serialise, Chat Completions | 10 |",
        "build + serialise, Anthropic Messages | 10 |",
    ] {
        assert!(text.contains(part), "{part} missing:\n{text}");
    }
    // Every timed row names its baseline and a ratio.
    assert!(
        text.contains("| `docker run --rm IMAGE python3 -c pass` |"),
        "{text}"
    );
    assert!(text.contains("| `docker cp` of the same file |"), "{text}");
    assert!(
        text.contains("| Python `csv` reads the whole file |"),
        "{text}"
    );
}

/// Issue 38's table (`scripts/bench.sh --isolation`): runc beside gVisor, where the
/// engine has runsc (else runc alone), at tiny size without the reference case.
#[test]
fn the_isolation_bench_prints_its_table_at_tiny_size() {
    if common::no_engine_skip() {
        return;
    }
    let lines = runtime()
        .block_on(suite::run_sections(
            suite::Size::Tiny,
            true,
            Some("isolation"),
        ))
        .unwrap();
    let text = lines.join("\n");
    assert!(text.contains("### runc beside gVisor (issue 38)"), "{text}");
    assert!(!text.contains("### The loop's own cost"), "{text}");
    for row in [
        "| floor: `docker run --rm --network none --runtime=R IMAGE python3 -c pass` | 1 |",
        "| floor: the same, `python3 -c 'import pandas'` | 1 |",
        "| cold: file added -> sandbox ready (container, kernel, staging; the session's figure) | 1 |",
        "| cold: first pandas cell (import pandas + read_csv; the cell's own time) | 1 |",
        "| cold: shell call `echo hi` | 1 |",
        "| warm: first pandas cell (pandas imported while idle) | 1 |",
        "| warm: shell call `echo hi` | 1 |",
        "| offline analyst, reference case, cold command-line run | 0 | (not at tiny size) |",
    ] {
        assert!(text.contains(row), "{row} missing:\n{text}");
    }
}
