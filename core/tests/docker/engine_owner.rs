//! Owners of runs and containers, judged live or gone without reading `/proc` first:
//! a real live owner (a child process holding its lock) and a real dead one (the same
//! child, SIGKILLed), and the leftovers of each: only the dead owner's container is
//! removed by the clean-up.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use bollard::models::ContainerCreateBody;
use bollard::query_parameters::CreateContainerOptionsBuilder;
use sandalyst::owner::{lock_path, owner_is_gone};
use sandalyst::sandbox::docker;

/// Run inside the child: print this process's owner id, then wait for stdin to close.
#[test]
#[ignore = "helper: run by the tests below in a child process"]
fn owner_helper() {
    if std::env::var("SANDALYST_OWNER_HELPER").is_err() {
        return;
    }
    println!("OWNER {}", sandalyst::owner::owner_id());
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

fn spawn_owner() -> (Child, String) {
    // The helper's name as the harness knows it: this module's path without the crate.
    let helper = match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::owner_helper"),
        None => "owner_helper".to_string(),
    };
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &helper, "--ignored", "--nocapture"])
        .env("SANDALYST_OWNER_HELPER", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let owner = BufReader::new(out)
        .lines()
        .map(|l| l.unwrap())
        .find_map(|l| l.strip_prefix("OWNER ").map(str::to_string))
        .expect("the helper printed no owner");
    (child, owner)
}

fn lock_of(owner: &str) -> std::path::PathBuf {
    let parts: Vec<&str> = owner.split('/').collect();
    lock_path(parts[1].parse().unwrap(), parts[2].parse().unwrap())
}

#[test]
fn a_live_owner_lives_and_a_killed_one_is_gone() {
    let (mut child, owner) = spawn_owner();
    assert!(lock_of(&owner).exists(), "the owner holds a lock file");
    assert!(!owner_is_gone(&owner), "a live owner judged gone");
    child.kill().unwrap(); // SIGKILL: the lock goes with the process
    child.wait().unwrap();
    assert!(owner_is_gone(&owner), "a dead owner judged alive");
    assert!(
        !lock_of(&owner).exists(),
        "the dead owner's lock file is removed"
    );
}

async fn labelled_container(docker: &bollard::Docker, image: &str, run: &str, owner: &str) {
    let labels = std::collections::HashMap::from([
        (docker::RUN_LABEL.to_string(), run.to_string()),
        ("sandalyst.owner".to_string(), owner.to_string()),
    ]);
    let body = ContainerCreateBody {
        image: Some(image.to_string()),
        cmd: Some(vec!["true".into()]),
        labels: Some(labels),
        network_disabled: Some(true),
        ..Default::default()
    };
    let opts = CreateContainerOptionsBuilder::new()
        .name(&format!("sandalyst-{run}"))
        .build();
    docker.create_container(Some(opts), body).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_dead_owners_leftovers_are_removed() {
    let Some(engine) = common::engine_or_skip().await else {
        return;
    };
    let image = common::image_tag(&engine).await;
    let (mut live, live_owner) = spawn_owner();
    let (mut dead, dead_owner) = spawn_owner();
    dead.kill().unwrap();
    dead.wait().unwrap();
    let (live_run, dead_run) = (common::run_id("owner-live"), common::run_id("owner-dead"));
    labelled_container(&engine, &image, &live_run, &live_owner).await;
    labelled_container(&engine, &image, &dead_run, &dead_owner).await;

    docker::remove_leftovers(&engine).await.unwrap();
    assert_eq!(common::containers_labelled(&engine, &dead_run).await, 0);
    assert_eq!(
        common::containers_labelled(&engine, &live_run).await,
        1,
        "a live owner's container was removed"
    );

    drop(live.stdin.take()); // the live owner ends normally
    live.wait().unwrap();
    docker::remove_leftovers(&engine).await.unwrap();
    assert_eq!(common::containers_labelled(&engine, &live_run).await, 0);
}
