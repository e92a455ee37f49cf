//! gVisor (`runsc`) where the engine has it registered (`scripts/setup.sh --gvisor`):
//! the sandbox starts under it and says so when inspected, the hardening is read back,
//! the kernel runs code on the staged input, a timeout interrupts and the kernel goes
//! on, and outputs come back. Skips with one line where runsc is not registered,
//! unless `SANDALYST_REQUIRE_GVISOR=1`.

use crate::common;

use std::time::Duration;

use sandalyst::sandbox::docker::DockerSandbox;
use sandalyst::sandbox::{ExecStatus, Isolation, Sandbox};
use sandalyst::workspace::{CollectLimits, Manifest};
use tokio_util::sync::CancellationToken;

const T: Duration = Duration::from_secs(120);

#[tokio::test]
async fn the_sandbox_runs_under_gvisor_where_the_engine_has_it() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let registered = docker
        .info()
        .await
        .unwrap()
        .runtimes
        .is_some_and(|r| r.contains_key("runsc"));
    if !registered {
        assert!(
            std::env::var_os("SANDALYST_REQUIRE_GVISOR").is_none(),
            "SANDALYST_REQUIRE_GVISOR is set but the engine has no runsc runtime"
        );
        eprintln!(
            "skipped docker::gvisor: the engine has no runsc runtime (scripts/setup.sh --gvisor)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("d.csv");
    std::fs::write(&csv, "t,v\n1,2\n3,4\n").unwrap();
    let mut config = common::config(&docker).await;
    config.isolation = Isolation::Gvisor;
    let id = common::run_id("gvisor");
    let sb = DockerSandbox::start(
        &docker,
        &id,
        &config,
        &Manifest::from_paths(&[csv]).unwrap(),
    )
    .await
    .unwrap();
    let container = sandalyst::sandbox::docker::containers_of_run(&docker, &id)
        .await
        .unwrap()
        .remove(0);
    let inspected = docker
        .inspect_container(
            &container,
            None::<bollard::query_parameters::InspectContainerOptions>,
        )
        .await
        .unwrap();
    let host = inspected.host_config.unwrap();
    assert_eq!(host.runtime.as_deref(), Some("runsc"));
    assert_eq!(host.network_mode.as_deref(), Some("none"));
    assert_eq!(host.readonly_rootfs, Some(true));

    let c = CancellationToken::new();
    let r = sb
        .python(
            "import pandas as pd, os\ndf = pd.read_csv('input/d.csv')\nprint(int(df.v.sum()), os.getuid())\nprint(open('/proc/version').read())\ndf.to_csv('output/sum.csv')",
            T,
            &c,
            &|_, _| {},
        )
        .await
        .unwrap();
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    assert!(r.stdout.starts_with("6 1000\n"), "{}", r.stdout);
    // gVisor's own kernel answers, not the host's.
    let host_kernel = std::fs::read_to_string("/proc/version").unwrap();
    assert!(!r.stdout.contains(host_kernel.trim()), "{}", r.stdout);
    let r = sb
        .python(
            "import time\ntime.sleep(60)",
            Duration::from_secs(3),
            &c,
            &|_, _| {},
        )
        .await
        .unwrap();
    assert_eq!(r.status, ExecStatus::Timeout, "{r:?}");
    let r = sb
        .python("print(len(df))", T, &c, &|_, _| {})
        .await
        .unwrap();
    assert_eq!(
        r.stdout, "2\n",
        "the kernel's state is kept after the interrupt"
    );
    let r = sb
        .python("open('/etc/x', 'w')", T, &c, &|_, _| {})
        .await
        .unwrap();
    assert_eq!(
        r.status,
        ExecStatus::Error,
        "the root stays read-only: {r:?}"
    );
    let out = tempfile::tempdir().unwrap();
    let collected = sb
        .collect_outputs(&out.path().join("outputs"), &CollectLimits::default())
        .await
        .unwrap();
    assert_eq!(collected.files.len(), 1, "{collected:?}");
    assert_eq!(
        std::fs::read_to_string(out.path().join("outputs/sum.csv")).unwrap(),
        ",t,v\n0,1,2\n1,3,4\n"
    );
    sb.close().await.unwrap();
}
