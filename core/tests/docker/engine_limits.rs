//! The limits a sandbox asked for are read back from the created container: a start
//! succeeds only when the engine applied them (the mismatch case is
//! `docker::made_tests` and the rootless Podman test, where the engine drops them).
//! Their check in the core, with no engine, is `fast::session`.

use crate::common;

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

/// `sandalyst run --memory 512` gets a workspace of at most half that, read back from
/// inside the container (the workspace is a tmpfs, counted against the memory limit;
/// the command line once kept the 1 GiB default whatever the memory).
#[tokio::test(flavor = "multi_thread")]
async fn the_command_lines_memory_limit_caps_its_workspace_at_half() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("t.csv");
    std::fs::write(&input, "a\n1\n").unwrap();
    let measure = "import os\ns = os.statvfs('/workspace')\nopen('output/size.txt', 'w').write(str(s.f_blocks * s.f_frsize))";
    let steps = dir.path().join("steps.json");
    let script = serde_json::json!([{ "python": measure }, { "say": "measured" }]);
    std::fs::write(&steps, script.to_string()).unwrap();
    let model = format!("replay:{}", steps.display());
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_sandalyst"))
        .env(
            "SANDALYST_CONFIG",
            "/nonexistent/sandalyst-test-config.toml",
        )
        .env("SANDALYST_DATA_DIR", dir.path().join("data"))
        .env_remove("SANDALYST_IMAGE")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .args(["run", "-p", "measure the workspace", "--model", &model])
        .args(["--memory", "512", "-i"])
        .arg(&input)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(180), run)
        .await
        .expect("the run ends")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let outputs = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let size: u64 = std::fs::read_to_string(outputs.join("size.txt"))
        .unwrap()
        .parse()
        .unwrap();
    eprintln!("workspace under --memory 512: {size} bytes");
    // Half of 512 MiB, and the room of the copied input (a few bytes, in pages).
    assert!(size <= (256 << 20) + (1 << 20), "{size} bytes\n{stderr}");
    assert!(size >= 200 << 20, "{size} bytes");
}
