//! The Docker sandbox against the real daemon: kernel, limits, isolation, outputs.

use crate::common;

use std::time::{Duration, Instant};

use sandalyst::sandbox::{ExecStatus, Sandbox};
use sandalyst::workspace::CollectLimits;
use tokio_util::sync::CancellationToken;

const T: Duration = Duration::from_secs(60);

#[tokio::test]
async fn kernel_keeps_state_and_separates_streams() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "state", &[]).await;
    let c = CancellationToken::new();
    let r = sb
        .python("import math\nx = 41", T, &c, &|_, _| {})
        .await
        .unwrap();
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    let r = sb
        .python(
            "import sys\nprint(x + 1)\nprint('warn', file=sys.stderr)\nmath.sqrt(16)",
            T,
            &c,
            &|_, _| {},
        )
        .await
        .unwrap();
    assert_eq!(r.stdout, "42\n4.0\n");
    assert_eq!(r.stderr, "warn\n");
    let r = sb.python("1/0", T, &c, &|_, _| {}).await.unwrap();
    assert_eq!(r.status, ExecStatus::Error);
    assert!(r.traceback.unwrap().contains("ZeroDivisionError"));
    let r = sb.python("print(x)", T, &c, &|_, _| {}).await.unwrap();
    assert_eq!(r.stdout, "41\n", "state survives an exception");
    sb.close().await.unwrap();
}

#[tokio::test]
async fn timeout_interrupts_a_busy_loop_and_the_next_call_works() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "timeout", &[]).await;
    let c = CancellationToken::new();
    sb.python("y = 7", T, &c, &|_, _| {}).await.unwrap();
    let started = Instant::now();
    let r = sb
        .python(
            "print('before', flush=True)\nwhile True:\n    pass",
            Duration::from_secs(2),
            &c,
            &|_, _| {},
        )
        .await
        .unwrap();
    assert_eq!(r.status, ExecStatus::Timeout);
    assert!(r.stdout.contains("before"));
    assert!(started.elapsed() < Duration::from_secs(10));
    let r = sb.python("print(y)", T, &c, &|_, _| {}).await.unwrap();
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (ExecStatus::Ok, "7\n"),
        "the kernel kept its state"
    );
    sb.close().await.unwrap();
}

#[tokio::test]
async fn a_dead_kernel_restarts_and_says_state_was_lost() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "death", &[]).await;
    let c = CancellationToken::new();
    sb.python("z = 1", T, &c, &|_, _| {}).await.unwrap();
    let r = sb
        .python("import os\nos._exit(3)", T, &c, &|_, _| {})
        .await
        .unwrap();
    assert_eq!(r.status, ExecStatus::KernelRestarted);
    let note = r.note.unwrap();
    assert!(note.contains("code 3") && note.contains("lost"), "{note}");
    let r = sb
        .python("print('z' in globals())", T, &c, &|_, _| {})
        .await
        .unwrap();
    assert_eq!(r.stdout, "False\n");
    sb.close().await.unwrap();
}

#[tokio::test]
async fn huge_output_is_capped_and_marked() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "flood", &[]).await;
    let c = CancellationToken::new();
    let r = sb
        .python("print('x' * 5_000_000)\nprint('end')", T, &c, &|_, _| {})
        .await
        .unwrap();
    let cap = common::config(&docker).await.output_cap_bytes;
    assert!(r.stdout.len() < cap + 4096, "{}", r.stdout.len());
    assert!(r.stdout.contains("output truncated") && r.stdout.trim_end().ends_with("end"));
    let r = sb
        .shell("yes | head -c 3000000", T, &c, &|_, _| {})
        .await
        .unwrap();
    assert!(r.stdout.len() < cap + 4096 && r.stdout.contains("truncated"));
    sb.close().await.unwrap();
}

#[tokio::test]
async fn shell_reports_exit_codes_and_times_out() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "shell", &[]).await;
    let c = CancellationToken::new();
    let r = sb
        .shell("echo hi; pwd; exit 3", T, &c, &|_, _| {})
        .await
        .unwrap();
    assert_eq!((r.status, r.exit_code), (ExecStatus::Error, Some(3)));
    assert_eq!(r.stdout, "hi\n/workspace\n");
    let r = sb
        .shell("sleep 30", Duration::from_secs(1), &c, &|_, _| {})
        .await
        .unwrap();
    assert_eq!(r.status, ExecStatus::Timeout);
    sb.close().await.unwrap();
}

#[tokio::test]
async fn writes_outside_workspace_and_tmp_fail_and_privileges_are_dropped() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "ro", &[]).await;
    let c = CancellationToken::new();
    let code = "import os\n\
        for p in ['/etc/x', '/usr/x', '/x', '/home/x', '/var/x']:\n\
        \x20   try:\n\
        \x20       open(p, 'w').write('x'); print('WROTE', p)\n\
        \x20   except OSError as e:\n\
        \x20       print('denied', p, e.errno)\n\
        open('/workspace/ok', 'w').write('1'); open('/tmp/ok', 'w').write('1')\n\
        st = open('/proc/self/status').read()\n\
        print('uid', os.getuid(), [l for l in st.splitlines() if l.startswith(('CapEff', 'NoNewPrivs'))])\n";
    let r = sb.python(code, T, &c, &|_, _| {}).await.unwrap();
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    assert!(!r.stdout.contains("WROTE"), "{}", r.stdout);
    assert_eq!(r.stdout.matches("denied").count(), 5);
    assert!(
        r.stdout.contains("uid 1000")
            && r.stdout.contains("CapEff:\\t0000000000000000")
            && r.stdout.contains("NoNewPrivs:\\t1"),
        "{}",
        r.stdout
    );
    sb.close().await.unwrap();
}

#[tokio::test]
async fn inputs_are_staged_and_outputs_collected_with_hostile_entries_refused() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("data.csv");
    std::fs::write(&input, "a,b\n1,2\n").unwrap();
    let (sb, _) = common::sandbox(&docker, "io", std::slice::from_ref(&input)).await;
    let c = CancellationToken::new();
    let code = "import os, pandas as pd\n\
        df = pd.read_csv('input/data.csv'); print(df.shape)\n\
        os.makedirs('output/sub', exist_ok=True)\n\
        df.to_csv('output/sub/t.csv', index=False)\n\
        open('output/report.md', 'w').write('# ok')\n\
        os.symlink('/etc/passwd', 'output/passwd')\n\
        os.link('output/report.md', 'output/hard.md')\n\
        os.mkfifo('output/pipe')\n";
    let r = sb.python(code, T, &c, &|_, _| {}).await.unwrap();
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    assert_eq!(r.stdout, "(1, 2)\n");
    let dest = dir.path().join("out");
    let got = sb
        .collect_outputs(&dest, &CollectLimits::default())
        .await
        .unwrap();
    let mut files: Vec<_> = got.files.iter().map(|f| f.path.clone()).collect();
    files.sort();
    let mut refused: Vec<_> = got.refused.iter().map(|f| f.path.clone()).collect();
    refused.sort();
    // Docker archives one name of a hardlinked pair as the file and the other as a
    // link entry, which is refused like every link.
    assert!(files.contains(&"sub/t.csv".to_string()), "{files:?}");
    let md: Vec<_> = files.iter().filter(|f| f.ends_with(".md")).collect();
    assert_eq!(md.len(), 1, "{files:?}");
    assert!(
        refused.contains(&"passwd".to_string()) && refused.contains(&"pipe".to_string()),
        "{refused:?}"
    );
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert!(!dest.join("passwd").exists() && !dest.join("pipe").exists());
    assert_eq!(
        std::fs::read_to_string(dest.join("sub/t.csv")).unwrap(),
        "a,b\n1,2\n"
    );
    assert_eq!(
        std::fs::read_to_string(&input).unwrap(),
        "a,b\n1,2\n",
        "the original is untouched"
    );
    let archive = dir.path().join("ws.tar");
    let n = sb.archive_workspace(&archive, 1 << 30).await.unwrap();
    assert!(n > 0 && archive.exists());
    sb.close().await.unwrap();
}

#[tokio::test]
async fn a_large_input_streams_without_loading_into_memory() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.bin");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(300 << 20).unwrap(); // sparse on the host, 300 MB in the tar stream
                                   // The tar path is what is measured here: a local engine would bind-mount it.
    let config = sandalyst::sandbox::SandboxConfig {
        staging: sandalyst::workspace::StagingMode::Copy,
        ..common::config(&docker).await
    };
    let manifest = sandalyst::workspace::Manifest::from_paths(&[big]).unwrap();
    let sb = sandalyst::sandbox::docker::DockerSandbox::start(
        &docker,
        &common::run_id("big"),
        &config,
        &manifest,
    )
    .await
    .unwrap();
    let r = sb
        .shell(
            "stat -c %s input/big.bin",
            T,
            &CancellationToken::new(),
            &|_, _| {},
        )
        .await
        .unwrap();
    assert_eq!(r.stdout.trim(), (300u64 << 20).to_string());
    sb.close().await.unwrap();
}

#[tokio::test]
async fn close_removes_the_container_and_leftovers_of_dead_owners_are_cleaned() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, id) = common::sandbox(&docker, "close", &[]).await;
    assert_eq!(common::containers_labelled(&docker, &id).await, 1);
    // A live owner's container is not a leftover.
    sandalyst::sandbox::docker::remove_leftovers(&docker)
        .await
        .unwrap();
    assert_eq!(common::containers_labelled(&docker, &id).await, 1);
    sb.close().await.unwrap();
    sb.close().await.unwrap();
    assert_eq!(common::containers_labelled(&docker, &id).await, 0);
}
