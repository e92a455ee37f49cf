//! Limits are validated in the core (a zero never means "no limit"), and the limits a
//! sandbox asked for are read back from the created container: a start succeeds only
//! when the engine applied them (the mismatch case is `docker::made_tests` and the
//! rootless Podman test, where the engine drops them).

use crate::common;

use sandalyst::session::SessionConfig;

#[test]
fn zero_or_tiny_limits_are_rejected_with_a_message() {
    type Tweak = fn(&mut SessionConfig);
    let cases: [(Tweak, &str); 8] = [
        (|c| c.limits.max_turns = 0, "turn limit"),
        (|c| c.limits.wall_time = Default::default(), "time limits"),
        (
            |c| c.limits.call_timeout = Default::default(),
            "time limits",
        ),
        (|c| c.sandbox.memory_bytes = 0, "memory"),
        (|c| c.sandbox.nano_cpus = 0, "CPU"),
        (|c| c.sandbox.pids_limit = 0, "process limit"),
        (|c| c.sandbox.workspace_bytes = 0, "workspace"),
        (|c| c.sandbox.output_cap_bytes = 0, "output cap"),
    ];
    SessionConfig::default().validate().unwrap();
    for (tweak, needle) in cases {
        let mut c = SessionConfig::default();
        tweak(&mut c);
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains(needle), "{needle}: {e}");
    }
    let mut c = SessionConfig::default();
    c.sandbox.tmp_bytes = 0;
    assert!(c.validate().is_err());
}

#[tokio::test]
async fn the_limits_asked_for_are_the_limits_the_container_has() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let mut config = common::config(&docker).await;
    config.memory_bytes = 300 << 20;
    config.pids_limit = 77;
    config.nano_cpus = 500_000_000;
    let id = common::run_id("limits");
    let sb = sandalyst::sandbox::docker::DockerSandbox::start(
        &docker,
        &id,
        &config,
        &Default::default(),
    )
    .await
    .unwrap();
    let name = sb.container_id().expect("created").to_string();
    let h = docker
        .inspect_container(&name, None)
        .await
        .unwrap()
        .host_config
        .unwrap();
    assert_eq!(
        (h.memory, h.memory_swap, h.pids_limit, h.nano_cpus),
        (
            Some(300 << 20),
            Some(300 << 20),
            Some(77),
            Some(500_000_000)
        )
    );
    use sandalyst::sandbox::Sandbox;
    sb.close().await.unwrap();
}
