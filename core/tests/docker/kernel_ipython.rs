//! The kernel against the real daemon: live output, IPython's notebook habits,
//! figures, and processes started in the background.

use crate::common;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use sandalyst::sandbox::{ExecResult, ExecStatus, Sandbox, Stream};
use tokio_util::sync::CancellationToken;

const T: Duration = Duration::from_secs(60);
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Chunks received while a call ran: when, which stream, what.
#[derive(Default)]
struct Chunks(Mutex<Vec<(Instant, Stream, String)>>);

impl Chunks {
    fn sink(&self) -> impl Fn(Stream, &str) + Send + Sync + '_ {
        move |s, t| {
            self.0
                .lock()
                .unwrap()
                .push((Instant::now(), s, t.to_string()))
        }
    }
    fn text(&self, stream: Stream) -> String {
        let all = self.0.lock().unwrap();
        all.iter()
            .filter(|c| c.1 == stream)
            .map(|c| c.2.as_str())
            .collect()
    }
    fn times(&self) -> Vec<Instant> {
        self.0.lock().unwrap().iter().map(|c| c.0).collect()
    }
}

async fn py(sb: &impl Sandbox, code: &str) -> ExecResult {
    let r = sb
        .python(code, T, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap();
    assert_ne!(r.status, ExecStatus::KernelRestarted, "{r:?}");
    r
}

/// Chunks of a 3 s call arrive while it runs, about every 0.5 s, and add up to its output.
fn assert_streamed_live(chunks: &Chunks, started: Instant, ended: Instant, r: &ExecResult) {
    let times = chunks.times();
    let early: Vec<_> = times
        .iter()
        .filter(|t| ended.duration_since(**t) > Duration::from_millis(1000))
        .collect();
    assert!(
        early.len() >= 3,
        "chunks at {:?} ms for a call of {} ms",
        times
            .iter()
            .map(|t| t.duration_since(started).as_millis())
            .collect::<Vec<_>>(),
        ended.duration_since(started).as_millis()
    );
    assert_eq!(chunks.text(Stream::Stdout), r.stdout);
    for i in 0..6 {
        assert!(r.stdout.contains(&format!("line {i}\n")), "{}", r.stdout);
    }
}

#[tokio::test]
async fn python_output_streams_while_the_cell_runs() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "stream-py", &[]).await;
    let chunks = Chunks::default();
    let started = Instant::now();
    let code = "import time, sys\nfor i in range(6):\n    print(f'line {i}')\n    time.sleep(0.5)\nprint('oops', file=sys.stderr)";
    let r = sb
        .python(code, T, &CancellationToken::new(), &chunks.sink())
        .await
        .unwrap();
    let ended = Instant::now();
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    assert_streamed_live(&chunks, started, ended, &r);
    assert_eq!(chunks.text(Stream::Stderr), "oops\n");
    assert_eq!(r.stderr, "oops\n");
    sb.close().await.unwrap();
}

#[tokio::test]
async fn shell_output_streams_while_the_command_runs() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "stream-sh", &[]).await;
    let chunks = Chunks::default();
    let started = Instant::now();
    let r = sb
        .shell(
            "for i in 0 1 2 3 4 5; do echo line $i; sleep 0.5; done; echo done >&2",
            T,
            &CancellationToken::new(),
            &chunks.sink(),
        )
        .await
        .unwrap();
    let ended = Instant::now();
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    assert_streamed_live(&chunks, started, ended, &r);
    assert_eq!(chunks.text(Stream::Stderr), "done\n");
    sb.close().await.unwrap();
}

#[tokio::test]
async fn streamed_output_is_capped_like_the_result() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "stream-cap", &[]).await;
    let cap = common::config(&docker).await.output_cap_bytes;
    for call in ["python", "shell"] {
        let chunks = Chunks::default();
        let c = CancellationToken::new();
        let r = match call {
            "python" => {
                let code = "import os\nprint('x' * 3_000_000)\nos.system('yes | head -c 2000000')";
                sb.python(code, T, &c, &chunks.sink()).await.unwrap()
            }
            _ => sb
                .shell("yes | head -c 3000000", T, &c, &chunks.sink())
                .await
                .unwrap(),
        };
        assert_eq!(r.status, ExecStatus::Ok, "{call}: {r:?}");
        let text = chunks.text(Stream::Stdout);
        assert!(
            text.len() <= cap + 64,
            "{call}: {} bytes streamed",
            text.len()
        );
        assert_eq!(
            text.matches("[... output truncated ...]").count(),
            1,
            "{call}: {}",
            &text[text.len() - 100..]
        );
        assert!(
            text.trim_end().ends_with("[... output truncated ...]"),
            "{call}"
        );
    }
    sb.close().await.unwrap();
}

#[tokio::test]
async fn notebook_habits_work_as_in_jupyter() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("data.csv");
    std::fs::write(&input, "a,b\n1,2\n3,4\n").unwrap();
    let (sb, _) = common::sandbox(&docker, "habits", std::slice::from_ref(&input)).await;

    // The first cell: nothing on stderr (no IPython warning about its folders).
    let r = py(&sb, "1+1").await;
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("2\n", ""), "{r:?}");

    let r = py(
        &sb,
        "import pandas as pd\ndf = pd.read_csv('input/data.csv')\ndisplay(df)\ndf.a.sum()",
    )
    .await;
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    assert!(
        r.stdout.contains("   a  b\n0  1  2\n1  3  4\n"),
        "{}",
        r.stdout
    );
    // numpy 2's scalar repr, as Jupyter shows it.
    assert!(r.stdout.ends_with("np.int64(4)\n"), "{}", r.stdout);

    let r = py(&sb, "!ls input\nfiles = !ls input\nprint(files)").await;
    assert_eq!(r.stdout, "data.csv\n['data.csv']\n", "{r:?}");

    let r = py(&sb, "%timeit -n 10 -r 2 sum(range(100))").await;
    assert!(r.stdout.contains("per loop"), "{r:?}");

    let r = py(&sb, "%%bash\necho from bash; echo err >&2").await;
    assert_eq!(
        (r.stdout.as_str(), r.stderr.as_str()),
        ("from bash\n", "err\n")
    );

    let r = py(&sb, "import os\nos.system('echo from a subprocess')").await;
    assert_eq!(r.stdout, "from a subprocess\n0\n", "{r:?}");

    sb.close().await.unwrap();
}

#[tokio::test]
async fn tracebacks_show_the_cell_and_system_exit_keeps_the_kernel() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "tb", &[]).await;
    py(&sb, "x = 5\ndef f():\n    return 1 / 0").await;
    let r = py(&sb, "y = 1\nf()").await;
    assert_eq!(r.status, ExecStatus::Error);
    let tb = r.traceback.unwrap();
    assert!(
        tb.contains("ZeroDivisionError") && tb.contains("Cell In") && tb.contains("f()"),
        "{tb}"
    );
    for internal in ["interactiveshell", "kernel", "<string>", "run_code"] {
        assert!(!tb.contains(internal), "{internal} in {tb}");
    }
    let r = py(&sb, "raise SystemExit(3)").await;
    assert_eq!(r.status, ExecStatus::Error, "{r:?}");
    assert!(r.traceback.unwrap().contains("SystemExit: 3"));
    let r = py(&sb, "exit()\nprint(x)").await;
    assert_eq!(r.stdout, "5\n", "{r:?}");
    let r = py(&sb, "if True:\n  print(").await;
    assert_eq!(r.status, ExecStatus::Error);
    let tb = r.traceback.unwrap();
    assert!(tb.contains("SyntaxError: incomplete input"), "{tb}");
    sb.close().await.unwrap();
}

#[tokio::test]
async fn shown_and_open_figures_become_pngs_of_the_cell() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "figures", &[]).await;
    let r = py(
        &sb,
        "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.title('shown')\nplt.show()\nprint('after show')",
    )
    .await;
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    assert_eq!(r.figures.len(), 1, "{r:?}");
    assert!(r.figures[0].starts_with(PNG));
    assert_eq!(r.stdout, "after show\n");
    assert_eq!(r.stderr, "", "no warning about a non-GUI backend");

    // Left open (object API, two figures), and one saved to output/ too.
    let r = py(
        &sb,
        "fig, ax = plt.subplots()\nax.bar(['a', 'b'], [3, 4])\nfig.savefig('output/bars.png')\nfig2 = plt.figure()\nplt.plot([3, 1])",
    )
    .await;
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    assert_eq!(r.figures.len(), 2, "{r:?}");
    assert!(r.figures.iter().all(|f| f.starts_with(PNG)));
    let r = py(&sb, "print(plt.get_fignums())").await;
    assert_eq!((r.stdout.as_str(), r.figures.len()), ("[]\n", 0), "closed");
    // A figure that is the cell's value and still open at its end: shown once.
    let r = py(&sb, "fig, ax = plt.subplots()\nax.plot([2, 1])\nfig").await;
    assert_eq!((r.figures.len(), r.stdout.as_str()), (1, ""), "{r:?}");

    // pandas plotting and an image displayed by hand.
    let r = py(
        &sb,
        "import pandas as pd\npd.Series([1, 3, 2]).plot()\nfrom IPython.display import Image, display\ndisplay(Image(filename='output/bars.png'))",
    )
    .await;
    assert_eq!(r.figures.len(), 2, "{r:?}");
    // The saved file is a normal opaque PNG at matplotlib's own settings.
    let saved = sb.read_file("output/bars.png", 1 << 20).await.unwrap();
    assert!(saved.starts_with(PNG));
    sb.close().await.unwrap();
}

/// Processes whose command line holds `marker`, seen from a shell call.
async fn running(sb: &impl Sandbox, marker: &str) -> String {
    let cmd = format!(
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -e '{marker}' | grep -v grep || true"
    );
    sb.shell(&cmd, T, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap()
        .stdout
}

#[tokio::test]
async fn processes_started_by_a_cell_end_with_it() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "bg", &[]).await;
    let code = "import os, subprocess\n\
        p = subprocess.Popen(['sleep', '311'])\n\
        os.system('sleep 312 &')\n\
        os.system('setsid sleep 313 &')\n\
        !sleep 314 &\n\
        print('started')";
    let r = py(&sb, code).await;
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (ExecStatus::Ok, "started\n"),
        "{r:?}"
    );
    assert_eq!(running(&sb, "sleep 31[1-4]").await, "");
    // The kernel itself lives on, with its state.
    let r = py(&sb, "print(p.poll() is not None)").await;
    assert_eq!(r.stdout, "True\n", "{r:?}");

    // Also when the cell is interrupted at its timeout.
    let r = sb
        .python(
            "import subprocess, time\nsubprocess.Popen(['sleep', '315'])\ntime.sleep(60)",
            Duration::from_secs(2),
            &CancellationToken::new(),
            &|_, _| {},
        )
        .await
        .unwrap();
    assert_eq!(r.status, ExecStatus::Timeout, "{r:?}");
    assert_eq!(running(&sb, "sleep 315").await, "");
    sb.close().await.unwrap();
}

#[tokio::test]
async fn a_sleeping_cell_is_interrupted_even_with_blas_threads_running() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    // numpy starts BLAS threads; a SIGINT sent to the process may land on one of them
    // and leave the main thread asleep. The kernel aims it at the main thread.
    let docker = common::engine().await;
    let (sb, _) = common::sandbox(&docker, "intr", &[]).await;
    py(&sb, "import numpy as np\nkept = np.ones(3).sum()").await;
    for code in [
        "import time\ntime.sleep(60)",
        "!sleep 60",
        "import subprocess\nsubprocess.run(['sleep', '60'])",
    ] {
        let started = Instant::now();
        let r = sb
            .python(
                code,
                Duration::from_secs(2),
                &CancellationToken::new(),
                &|_, _| {},
            )
            .await
            .unwrap();
        assert_eq!(r.status, ExecStatus::Timeout, "{code}: {r:?}");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{code}: interrupted after {:?}",
            started.elapsed()
        );
        let r = py(&sb, "print(kept)").await;
        assert_eq!(r.stdout, "3.0\n", "{code}: the kernel kept its state");
    }
    sb.close().await.unwrap();
}
