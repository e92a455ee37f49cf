//! How the engine is found (DOCKER_HOST, then a docker CLI context, then Docker's
//! socket, Docker Desktop's, Colima's, Rancher Desktop's, then Podman's rootful and
//! rootless sockets) and named. It changes the environment, so it runs in a process of
//! its own.

use crate::common;

use sandalyst::sandbox::docker::engine;
use sandalyst::sandbox::engine::{candidates, EngineKind, EngineSource};

fn hosts() -> Vec<String> {
    candidates()
        .unwrap()
        .into_iter()
        .map(|c| c.source.host().to_string())
        .collect()
}

#[tokio::test]
async fn the_engine_is_found_in_the_documented_order_and_named() {
    if !common::in_own_process(&[]) {
        return;
    }
    // A HOME of its own: no docker CLI configuration, and known default paths.
    let home = tempfile::tempdir().unwrap();
    std::env::set_var("HOME", home.path());
    std::env::remove_var("DOCKER_CONFIG");
    std::env::remove_var("DOCKER_CONTEXT");
    std::env::set_var("DOCKER_HOST", "unix:///nonexistent/engine.sock");
    assert_eq!(hosts(), ["unix:///nonexistent/engine.sock"]);
    let err = format!("{:#}", engine::connect().await.unwrap_err());
    assert!(
        err.contains("DOCKER_HOST=unix:///nonexistent/engine.sock"),
        "{err}"
    );

    std::env::remove_var("DOCKER_HOST");
    std::env::set_var("XDG_RUNTIME_DIR", "/run/user/4242");
    let h = home.path().display();
    assert_eq!(
        hosts(),
        [
            "unix:///var/run/docker.sock".to_string(),
            format!("unix://{h}/.docker/desktop/docker.sock"),
            format!("unix://{h}/.colima/default/docker.sock"),
            format!("unix://{h}/.colima/docker.sock"),
            format!("unix://{h}/.rd/docker.sock"),
            "unix:///run/podman/podman.sock".to_string(),
            "unix:///run/user/4242/podman/podman.sock".to_string(),
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
    let (docker, source) = engine::connect().await.unwrap();
    assert_eq!(
        source,
        EngineSource::DefaultSocket {
            host: "unix:///var/run/docker.sock".into()
        }
    );
    let place = source.host();
    let info = engine::describe(&docker, &source).await.unwrap();
    assert_eq!(info.kind, EngineKind::DockerEngine);
    assert!(!info.limits_unenforced(), "{info:?}");
    let line = format!("{} {}", info.name(), info.details());
    assert!(
        line.starts_with("Docker Engine ") && line.contains("(API 1.") && line.contains(place),
        "{line}"
    );
}
