//! The Docker engine stops answering in the middle of a run. In a process of its own:
//! it points DOCKER_HOST at a proxy of ours for the whole process, then cuts it.

use crate::common;

use std::time::Duration;

use sandalyst::agent::{Event, RunStatus};
use sandalyst::model::scripted::ScriptedModel;
use sandalyst::run::{self, RunRequest};
use sandalyst::sandbox::docker;
use sandalyst::store::Store;
use tokio::net::{TcpListener, UnixStream};
use tokio_util::sync::CancellationToken;

/// A TCP front for the local engine socket on 127.0.0.1; cancelling `cut` drops
/// every connection and stops accepting, as a stopped daemon would.
async fn proxy(cut: CancellationToken) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = cut.cancelled() => return,
                Ok((mut tcp, _)) = listener.accept() => {
                    let cut = cut.clone();
                    tokio::spawn(async move {
                        let Ok(mut unix) = UnixStream::connect("/var/run/docker.sock").await else { return };
                        tokio::select! {
                            _ = tokio::io::copy_bidirectional(&mut tcp, &mut unix) => {}
                            _ = cut.cancelled() => {}
                        }
                    });
                }
            }
        }
    });
    port
}

#[tokio::test]
async fn the_engine_stopping_mid_run_ends_it_clearly_and_leaves_nothing() {
    let Some(direct) = common::engine_or_skip().await else {
        return;
    };
    if !common::in_own_process(&[]) {
        return;
    }
    let image = common::image_tag(&direct).await;
    let cut = CancellationToken::new();
    let port = proxy(cut.clone()).await;
    std::env::set_var("DOCKER_HOST", format!("tcp://127.0.0.1:{port}"));

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("energy.csv");
    std::fs::write(&input, "t,v\n1,2\n").unwrap();
    let store = Store::open(dir.path().join("runs")).unwrap();
    let mut req = RunRequest::new(vec![input.clone()], "engine loss".into());
    req.config.sandbox.image = image;
    req.config.sandbox.memory_bytes = 1 << 30;
    let mut model = ScriptedModel::new([
        ScriptedModel::python(
            "c1",
            "open('output/early.txt','w').write('x')\nimport time\ntime.sleep(30)",
        ),
        ScriptedModel::python("c2", "print('never')"),
    ]);
    let cutter = cut.clone();
    // A second after the code starts running.
    let code = common::CodeStarted::default();
    let emit = move |ev: Event| {
        if code.see(&ev.kind) {
            let c = cutter.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                c.cancel();
            });
        }
    };
    let started = std::time::Instant::now();
    let outcome = run::execute(
        &common::sessions(&store),
        req,
        &mut model,
        &emit,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the run noticed quickly"
    );
    match &outcome.status {
        RunStatus::Failed { message } => {
            assert!(
                message.contains("the Docker engine stopped answering"),
                "{message}"
            )
        }
        s => panic!("expected a failed run, got {s:?}"),
    }
    let meta = store.open_run(&outcome.run_id).unwrap().meta;
    assert_eq!(
        meta.status,
        Some(outcome.status.clone()),
        "the status is on disk"
    );
    assert_eq!(std::fs::read_to_string(&input).unwrap(), "t,v\n1,2\n");

    // The engine is back: the next clean-up (any run's start) removes what was left.
    assert_eq!(
        common::containers_labelled(&direct, &outcome.run_id).await,
        1
    );
    let removed = docker::remove_leftovers(&direct).await.unwrap();
    assert!(removed >= 1);
    assert_eq!(
        common::containers_labelled(&direct, &outcome.run_id).await,
        0
    );
}
