//! How the engine is found (DOCKER_HOST, then Docker's socket, then Podman's rootful
//! and rootless sockets) and named. It changes the environment, so it runs in a process
//! of its own.

use crate::common;

use sandalyst::sandbox::docker::engine;
use sandalyst::sandbox::engine::{candidates, EngineKind};

#[tokio::test]
async fn the_engine_is_found_in_the_documented_order_and_named() {
    if !common::in_own_process(&[]) {
        return;
    }
    std::env::set_var("DOCKER_HOST", "unix:///nonexistent/engine.sock");
    assert_eq!(candidates(), ["unix:///nonexistent/engine.sock"]);
    let err = format!("{:#}", engine::connect().await.unwrap_err());
    assert!(
        err.contains("DOCKER_HOST=unix:///nonexistent/engine.sock"),
        "{err}"
    );

    std::env::remove_var("DOCKER_HOST");
    std::env::set_var("XDG_RUNTIME_DIR", "/run/user/4242");
    assert_eq!(
        candidates(),
        [
            "unix:///var/run/docker.sock",
            "unix:///run/podman/podman.sock",
            "unix:///run/user/4242/podman/podman.sock",
        ]
    );
    if !std::path::Path::new("/var/run/docker.sock").exists() {
        // CI with its engine elsewhere: every candidate is named in the error.
        if let Err(e) = engine::connect().await {
            let e = format!("{e:#}");
            assert!(
                e.contains("/var/run/docker.sock")
                    && e.contains("/run/podman/podman.sock")
                    && e.contains("/run/user/4242/podman/podman.sock"),
                "{e}"
            );
        }
        return;
    }
    // Docker's socket answers first.
    let (docker, place) = engine::connect().await.unwrap();
    assert_eq!(place, "unix:///var/run/docker.sock");
    let info = engine::describe(&docker, &place).await.unwrap();
    assert_eq!(info.kind, EngineKind::DockerEngine);
    assert!(!info.limits_unenforced(), "{info:?}");
    let line = format!("{} {}", info.name(), info.details());
    assert!(
        line.starts_with("Docker Engine ") && line.contains("(API 1.") && line.contains(&place),
        "{line}"
    );
}
