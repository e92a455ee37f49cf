//! The container engine and the sandbox image as a front end shows them: is there an
//! engine, is the image there, build it with progress. The work is the sandbox
//! layer's; this only shapes it.

use std::path::PathBuf;

use super::settings;
use crate::sandbox::{custom, docker, engine, image, packages};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct EngineStatus {
    pub reachable: bool,
    /// What is wrong, in a sentence, when the engine does not answer.
    pub message: Option<String>,
    /// How to fix it on this OS.
    pub fix: Option<String>,
    /// Which engine answers, in one line (`Docker Engine 28.2.2 (API 1.50; ...)`).
    pub engine: Option<String>,
    /// Guarantees this engine cannot give (e.g. limits on rootless cgroup v1), as
    /// sentences; runs there are refused unless the user accepts it.
    pub missing: Vec<String>,
    pub image_tag: String,
    pub image_present: Option<bool>,
    pub image_bytes: Option<i64>,
}

pub fn fix_for_this_os() -> String {
    if cfg!(target_os = "macos") {
        "Start Docker Desktop (or `colima start`), then press Retry.".into()
    } else if cfg!(windows) {
        "Start Docker Desktop, then press Retry.".into()
    } else {
        "Start the engine with `sudo systemctl start docker` (or install it with `sudo apt-get install docker.io`), or point DOCKER_HOST at a running engine, then press Retry.".into()
    }
}

pub async fn status() -> EngineStatus {
    let tag = image::default_tag();
    match engine::connect().await {
        Ok((d, place)) => {
            let img = image::status(&d).await.ok();
            let info = engine::describe(&d, &place).await.ok();
            EngineStatus {
                reachable: true,
                message: None,
                fix: None,
                engine: info
                    .as_ref()
                    .map(|i| format!("{} {}", i.name(), i.details())),
                missing: info.map(|i| i.missing).unwrap_or_default(),
                image_tag: tag,
                image_present: img.as_ref().map(|i| i.present),
                image_bytes: img.and_then(|i| i.size_bytes),
            }
        }
        Err(e) => EngineStatus {
            reachable: false,
            message: Some(e.to_string()),
            fix: Some(fix_for_this_os()),
            engine: None,
            missing: Vec::new(),
            image_tag: tag,
            image_present: None,
            image_bytes: None,
        },
    }
}

/// Build the image; `progress` gets each line of the build.
pub async fn build(progress: impl Fn(&str) + Send + Sync) -> anyhow::Result<String> {
    let d = docker::connect().await?;
    image::build(&d, image::BuildMethod::Auto, &progress).await
}

/// The image runs use, as `sandalyst image status` reports it.
#[derive(Debug, Serialize)]
pub struct ImageReport {
    /// The built-in image of this version.
    pub tag: String,
    pub present: bool,
    pub size_bytes: Option<i64>,
    pub created: Option<String>,
    /// Older built-in tags, no longer used.
    pub stale_tags: Vec<String>,
    /// The derived image of the config file's `[image]` packages, when there are any.
    pub custom: Option<CustomImage>,
    /// The Python and packages of the image runs use (the derived one when it is
    /// there, else the built-in one); `None` when neither is there.
    pub python: Option<Result<Python, String>>,
}

#[derive(Debug, Serialize)]
pub struct CustomImage {
    pub tag: String,
    /// The packages, as a person reads them.
    pub packages: String,
    pub present: bool,
}

#[derive(Debug, Serialize)]
pub struct Python {
    /// The image it was read from.
    pub tag: String,
    pub version: String,
    /// Name and version of every installed distribution.
    pub packages: Vec<(String, String)>,
}

/// What `sandalyst image status` says: which image, whether it is there, and its
/// Python packages (read from the image itself, cached by image id).
pub async fn image_report() -> anyhow::Result<ImageReport> {
    let engine = docker::connect().await?;
    let st = image::status(&engine).await?;
    let mut used = st.present.then(|| st.tag.clone());
    let packages = settings::image_section().await?.packages()?;
    let custom = if packages.is_empty() {
        None
    } else {
        let tag = custom::derived_tag(&st.tag, &packages);
        let present = custom::present(&engine, &tag).await?.is_some();
        if present {
            used = Some(tag.clone());
        }
        Some(CustomImage {
            tag,
            packages: packages.to_string(),
            present,
        })
    };
    let python = match used {
        None => None,
        Some(tag) => Some(match packages::for_image(&engine, &tag).await {
            Ok(env) => Ok(Python {
                tag,
                version: env.python,
                packages: env
                    .packages
                    .into_iter()
                    .map(|p| (p.name, p.version))
                    .collect(),
            }),
            Err(e) => Err(e.to_string()),
        }),
    };
    Ok(ImageReport {
        tag: st.tag,
        present: st.present,
        size_bytes: st.size_bytes,
        created: st.created,
        stale_tags: st.stale_tags,
        custom,
        python,
    })
}

/// How `sandalyst image build` builds.
#[derive(Clone, Debug, Default)]
pub struct ImageBuild {
    /// Debian packages with mmdebstrap (`offline`), `docker/Dockerfile`, or whichever
    /// works here.
    pub offline: bool,
    pub dockerfile: bool,
    /// Packages instead of the config file's `[image]` lists (as a whole).
    pub pip: Vec<String>,
    pub apt: Vec<String>,
    pub ca_file: Option<PathBuf>,
    pub build_network: Option<String>,
    /// Build the derived image again even if it is there.
    pub force: bool,
}

/// What a build says as it goes.
pub enum BuildNote<'a> {
    /// The built-in image is there already.
    UpToDate(&'a str),
    /// A line of the built-in image's build.
    Base(&'a str),
    /// The derived image's progress: a step (flush left) or its output (`line`).
    Derived { text: String, line: bool },
    /// The derived image is ready.
    Ready { tag: &'a str, packages: String },
}

/// Build the built-in image unless it is up to date, then the derived image of the
/// packages; returns the tag runs use.
pub async fn build_images(
    b: ImageBuild,
    note: &(dyn Fn(BuildNote<'_>) + Send + Sync),
) -> anyhow::Result<String> {
    let engine = docker::connect().await?;
    let method = match (b.offline, b.dockerfile) {
        (true, _) => image::BuildMethod::Offline,
        (_, true) => image::BuildMethod::Dockerfile,
        _ => image::BuildMethod::Auto,
    };
    let section = settings::image_section().await?;
    let packages = if b.pip.is_empty() && b.apt.is_empty() {
        section.packages()?
    } else {
        custom::Packages::new(&b.pip, &b.apt)?
    };
    let mut options = section.build_options();
    options.ca_file = b.ca_file.or(options.ca_file);
    options.network = b.build_network.or(options.network);
    options.force = b.force;
    let st = image::status(&engine).await?;
    let base = if st.present {
        note(BuildNote::UpToDate(&st.tag));
        st.tag
    } else {
        image::build(&engine, method, &|line| note(BuildNote::Base(line))).await?
    };
    if packages.is_empty() {
        return Ok(base);
    }
    let progress = |p: custom::BuildProgress| {
        note(match &p {
            custom::BuildProgress::Line { text } => BuildNote::Derived {
                text: text.clone(),
                line: true,
            },
            _ => BuildNote::Derived {
                text: p.to_string(),
                line: false,
            },
        })
    };
    let tag = custom::ensure(&engine, &base, &packages, &options, &progress).await?;
    note(BuildNote::Ready {
        tag: &tag,
        packages: packages.to_string(),
    });
    Ok(tag)
}
