//! Helpers shared by every test tier: the engine (or a skip when none answers), the
//! sandbox image, a child process of a test's own, and the paths of the repository.
//! `podman` holds what the Podman tier needs, `wire` the local model servers of the
//! provider tests.
#![allow(dead_code)]

pub mod podman;
pub mod wire;

use std::io::Write;
use std::path::PathBuf;

use bollard::Docker;
use sandalyst::sandbox::docker::{self, DockerSandbox};
use sandalyst::sandbox::SandboxConfig;
use sandalyst::workspace::Manifest;

/// Set (to anything but `0` or empty) where a missing engine must fail the tests that
/// need one instead of skipping them: CI (scripts/test.sh sets it).
pub const REQUIRE_ENGINE: &str = "SANDALYST_REQUIRE_ENGINE";

/// Whether a missing engine fails the test (CI) rather than skipping it.
pub fn engine_required() -> bool {
    std::env::var(REQUIRE_ENGINE).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The calling test's name, as the test harness names the thread it runs on.
pub fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("this test")
        .to_string()
}

/// Say on the terminal, past the harness's capture of the test's output, that the
/// calling test is skipped and why; or fail it, where `SANDALYST_REQUIRE_ENGINE` is set.
pub fn skip(why: &str) {
    if engine_required() {
        panic!("{why}, and {REQUIRE_ENGINE} is set: the engine tests must run here");
    }
    let _ = writeln!(
        std::io::stderr(),
        "skipped {}: {why} (set {REQUIRE_ENGINE}=1 to fail instead)",
        test_name()
    );
}

/// The engine, or `None` after one printed line when no engine answers, so a machine
/// without one runs the rest of the suite:
/// `let Some(docker) = common::engine_or_skip().await else { return };`
pub async fn engine_or_skip() -> Option<Docker> {
    match docker::connect().await {
        Ok(docker) => Some(docker),
        Err(e) => {
            skip(&format!("no container engine answers ({e:#})"));
            None
        }
    }
}

/// [`engine_or_skip`] for a test that is not async: `true` when it should return now.
pub fn no_engine_skip() -> bool {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(engine_or_skip()).is_none()
}

/// The engine, for helpers of tests that checked [`engine_or_skip`] first.
pub async fn engine() -> Docker {
    docker::connect()
        .await
        .expect("these tests need a running Docker daemon")
}

/// Names the child process of [`in_own_process`] by the test it runs.
const OWN_PROCESS: &str = "SANDALYST_TEST_OWN_PROCESS";

/// Run the calling test again in a process of its own (this test binary, that test
/// alone), with `env` set there, for a test that changes the process's environment
/// (`DOCKER_HOST`, say) and would change it under the tests running beside it.
/// Returns `true` in the child, where the test's body goes on; in the test's own
/// process it waits for the child, passes its output on, and fails when it failed:
/// `if !common::in_own_process(&[("SANDALYST_STAGING", "copy")]) { return; }`
pub fn in_own_process(env: &[(&str, &str)]) -> bool {
    // The child runs this test alone (`--exact`).
    if std::env::var_os(OWN_PROCESS).is_some() {
        return true;
    }
    let name = test_name();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &name, "--nocapture", "--test-threads=1"])
        .env(OWN_PROCESS, &name)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    print!("{}", text(&out.stdout));
    eprint!("{}", text(&out.stderr));
    assert!(
        out.status.success(),
        "{name} failed in its own process ({})",
        out.status
    );
    // A filter that matched nothing passes too: make sure the test ran.
    assert!(
        text(&out.stdout).contains("1 passed"),
        "{name} did not run in its own process:\n{}",
        text(&out.stdout)
    );
    false
}

/// The sandbox image this build uses; it must have been built (scripts/test.sh does).
/// `SANDALYST_IMAGE` overrides it, as for the command line.
pub async fn image_tag(engine: &Docker) -> String {
    if let Ok(tag) = std::env::var("SANDALYST_IMAGE") {
        return tag;
    }
    let st = docker::image::status(engine).await.unwrap();
    assert!(
        st.present,
        "image {} is missing: run `cargo run -- image build` (scripts/test.sh does it)",
        st.tag
    );
    st.tag
}

/// The isolation the tests that use [`config`] ask for: `SANDALYST_TEST_ISOLATION`
/// (`runc`, `gvisor`, `auto`; scripts/test.sh runs the hostile suite again under
/// gVisor where the system packages runsc), else `auto`.
pub fn isolation() -> sandalyst::sandbox::Isolation {
    std::env::var("SANDALYST_TEST_ISOLATION")
        .map(|v| {
            v.parse()
                .expect("SANDALYST_TEST_ISOLATION: runc, gvisor or auto")
        })
        .unwrap_or_default()
}

/// A sandbox's settings for a test.
pub async fn config(docker: &Docker) -> SandboxConfig {
    SandboxConfig {
        image: image_tag(docker).await,
        memory_bytes: 1 << 30,
        isolation: isolation(),
        ..SandboxConfig::default()
    }
}

pub fn run_id(name: &str) -> String {
    format!("test-{name}-{:08x}", rand::random::<u32>())
}

pub async fn sandbox(docker: &Docker, name: &str, inputs: &[PathBuf]) -> (DockerSandbox, String) {
    let id = run_id(name);
    let manifest = Manifest::from_paths(inputs).unwrap();
    let sb = DockerSandbox::start(docker, &id, &config(docker).await, &manifest)
        .await
        .unwrap();
    (sb, id)
}

/// How many containers carry this run's label.
pub async fn containers_labelled(docker: &Docker, run_id: &str) -> usize {
    docker::containers_of_run(docker, run_id)
        .await
        .unwrap()
        .len()
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The sessions of `store`'s folder, with sandboxes from the Docker engine.
pub fn sessions(store: &sandalyst::store::Store) -> sandalyst::session::Sessions {
    sandalyst::session::Sessions::new(
        store.root().to_path_buf(),
        std::sync::Arc::new(sandalyst::session::DockerFactory),
    )
    .unwrap()
}

/// Fail unless `nb` is a valid nbformat 4.5 notebook (the vendored schema).
pub fn validate_notebook(nb: &serde_json::Value) {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            repo_root().join("tests/fixtures/nbformat/nbformat.v4.5.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(nb)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not a valid nbformat 4.5 notebook: {errors:#?}"
    );
}

/// The tool results of a conversation, in order: what the model was shown.
pub fn tool_outputs(items: &[sandalyst::model::Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| match i {
            sandalyst::model::Item::ToolOutput { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect()
}

/// When the code of a run's first call starts: its `tool_call` came and the sandbox is
/// ready. A new session's first ask asks the model while its sandbox starts, so a call
/// can be announced before there is a container to run it. Fed every event, `see`
/// answers true once, at the event that completes the pair.
#[derive(Default)]
pub struct CodeStarted(std::sync::Mutex<(bool, bool, bool)>);

impl CodeStarted {
    pub fn see(&self, kind: &sandalyst::agent::EventKind) -> bool {
        use sandalyst::agent::{EventKind, SetupStage};
        let mut s = self.0.lock().unwrap();
        match kind {
            EventKind::ToolCall { .. } => s.0 = true,
            EventKind::Setup(SetupStage::SandboxReady { .. }) => s.1 = true,
            _ => {}
        }
        let now = s.0 && s.1 && !s.2;
        s.2 |= now;
        now
    }
}
