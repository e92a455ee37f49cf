//! `SANDALYST_STAGING=copy` forces copies even where a bind mount would be used. In a
//! process of its own: the variable would change the other tests' staging.

use crate::common;

use std::os::unix::fs::PermissionsExt;

use sandalyst::sandbox::docker::DockerSandbox;
use sandalyst::sandbox::Sandbox;
use sandalyst::workspace::{CopyReason, Manifest, StagingMethod};

#[tokio::test]
async fn the_environment_forces_copies() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    if !common::in_own_process(&[("SANDALYST_STAGING", "copy")]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.csv");
    std::fs::write(&big, "a,b\n".repeat(1 << 20)).unwrap();
    std::fs::set_permissions(&big, std::fs::Permissions::from_mode(0o644)).unwrap();
    let manifest = Manifest::from_paths(std::slice::from_ref(&big)).unwrap();
    let sb = DockerSandbox::start(
        &docker,
        &common::run_id("env-copy"),
        &common::config(&docker).await,
        &manifest,
    )
    .await
    .unwrap();
    let staged = sb.staging();
    assert_eq!(staged.len(), 1);
    assert_eq!(
        (staged[0].method, staged[0].reason),
        (StagingMethod::Copy, Some(CopyReason::Forced))
    );
    let r = sb
        .shell(
            "test -L input/big.csv || stat -c %s input/big.csv",
            std::time::Duration::from_secs(60),
            &Default::default(),
            &|_, _| {},
        )
        .await
        .unwrap();
    assert_eq!(r.stdout.trim(), (4u64 << 20).to_string());
    sb.close().await.unwrap();
}
