//! Rootful Podman through its Docker-compatible socket: the reference case through the
//! command line and the containment guarantees, against a Podman service this test
//! starts and stops itself. Podman is installed and the sandbox image copied into it
//! by `scripts/setup-podman.sh` (idempotent; the copy is cached by tag). Nothing is
//! skipped: when Podman cannot be set up, the test fails with the reason.

use crate::common;

use crate::common::podman::*;

#[tokio::test(flavor = "multi_thread")]
async fn rootful_podman_runs_the_reference_case_and_contains_the_code() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    if !common::podman::installed_or_skip() {
        return;
    }
    let image = common::image_tag(&common::engine().await).await;
    let service = tokio::task::spawn_blocking({
        let image = image.clone();
        move || start_rootful(&image)
    })
    .await
    .unwrap();
    let engine = podman_client(&service).await;

    let host = service.host();
    let stderr = tokio::task::spawn_blocking(move || reference_case(&host, &[]))
        .await
        .unwrap();
    let line = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("engine:"))
        .unwrap_or_else(|| panic!("no engine line in:\n{stderr}"));
    assert!(
        line.contains("engine: Podman 4.") && line.contains("rootful") && line.contains("API 1."),
        "{line}"
    );

    containment(&engine, &image, true).await;

    // The container of an app killed outright stops by itself on Podman too.
    let took = orphan_stop_time(&engine, &service.host()).await;
    eprintln!("podman: orphan stopped {took:?} after the app was killed");
    assert!(
        took.is_some(),
        "the orphaned container still runs after 20 s"
    );
}
