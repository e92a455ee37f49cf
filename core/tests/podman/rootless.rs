//! Rootless Podman on this cgroup v1 host, as an unprivileged user with its own API
//! service: the engine cannot enforce memory, CPU or process limits there, so a run is
//! refused before any code runs unless `--allow-no-limits` accepts it; accepted, the
//! reference case and every other containment guarantee hold. Set up by
//! `scripts/setup-podman.sh --rootless USER` (idempotent); nothing is skipped.

use crate::common;

use crate::common::podman::*;

const USER: &str = "sandalyst-rootless";

#[tokio::test(flavor = "multi_thread")]
async fn rootless_podman_on_cgroup_v1_is_refused_unless_accepted_and_contains_the_code() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    if !common::podman::installed_or_skip() {
        return;
    }
    let image = common::image_tag(&common::engine().await).await;
    let service = tokio::task::spawn_blocking({
        let image = image.clone();
        move || start_rootless(&image, USER)
    })
    .await
    .unwrap();
    let engine = podman_client(&service).await;
    let info = sandalyst::sandbox::docker::engine::describe(
        &engine,
        &sandalyst::sandbox::engine::EngineSource::DockerHost {
            host: service.host(),
        },
    )
    .await
    .unwrap();
    assert!(info.is_podman() && info.rootless, "{info:?}");
    let cgroup_v1 = info.cgroup_version == "1";

    let host = service.host();
    let (o, _dir) = tokio::task::spawn_blocking(move || run_reference(&host, &[]))
        .await
        .unwrap();
    let stderr = text(&o.stderr);
    if cgroup_v1 {
        // Refused before any container was made, with the reason and the way out.
        assert!(
            !o.status.success(),
            "a run without limits was not refused:\n{stderr}"
        );
        assert!(
            stderr.contains("rootless engine on a cgroup v1 host")
                && stderr.contains("--allow-no-limits"),
            "{stderr}"
        );
        assert!(
            !stderr.contains("container_starting") && !stderr.contains("staging"),
            "{stderr}"
        );
        let left = engine
            .list_containers(Some(
                bollard::query_parameters::ListContainersOptionsBuilder::new()
                    .all(true)
                    .build(),
            ))
            .await
            .unwrap();
        assert!(left.is_empty(), "containers were made: {left:?}");

        let host = service.host();
        let stderr =
            tokio::task::spawn_blocking(move || reference_case(&host, &["--allow-no-limits"]))
                .await
                .unwrap();
        let line = stderr
            .lines()
            .find(|l| l.trim_start().starts_with("engine:"))
            .unwrap_or_else(|| panic!("no engine line in:\n{stderr}"));
        assert!(
            line.contains("Podman 4.")
                && line.contains("rootless")
                && line.contains("WARNING: running WITHOUT limits"),
            "{line}"
        );
    } else {
        // cgroup v2: the limits hold and nothing is refused.
        assert!(o.status.success(), "{stderr}");
    }
    containment(&engine, &image, !cgroup_v1).await;
}
