//! The container engine and the sandbox images as a front end shows them: is there an
//! engine, is the image there, build it with progress, which Python packages runs
//! get. The work is the sandbox factory's (Docker by default); this turns a front
//! end's request into the factory's terms.

use std::path::PathBuf;

use super::settings;
use crate::sandbox::custom::Packages;
use crate::sandbox::image::BuildMethod;
use crate::sandbox::report::ImageBuild;
use crate::sandbox::SandboxFactory;

pub use crate::sandbox::custom::BuildProgress;
pub use crate::sandbox::report::{BuildLine, CustomImage, ImagePython, ImageReport};
pub use crate::sandbox::EngineStatus;

/// How `sandalyst image build` builds, as its flags say.
#[derive(Clone, Debug, Default)]
pub struct BuildRequest {
    /// From Debian packages with mmdebstrap, or from `docker/Dockerfile`; neither:
    /// whichever works here.
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

/// Whether the engine answers, which one it is, and whether the image is there.
pub async fn status(factory: &dyn SandboxFactory) -> EngineStatus {
    factory.engine_status().await
}

/// Build the built-in image; `progress` gets each line of the build.
pub async fn build(
    factory: &dyn SandboxFactory,
    progress: &(dyn for<'s> Fn(&'s str) + Send + Sync),
) -> anyhow::Result<String> {
    factory.build_image(progress).await
}

/// Which image runs use and its Python packages, with the config file's `[image]`
/// packages.
pub async fn image_report(factory: &dyn SandboxFactory) -> anyhow::Result<ImageReport> {
    let packages = settings::image_section().await?.packages()?;
    factory.image_report(&packages).await
}

/// Build the built-in image unless it is up to date, then the derived image of the
/// packages; returns the tag runs use.
pub async fn build_images(
    factory: &dyn SandboxFactory,
    b: BuildRequest,
    progress: &(dyn Fn(BuildLine) + Send + Sync),
) -> anyhow::Result<String> {
    let method = match (b.offline, b.dockerfile) {
        (true, _) => BuildMethod::Offline,
        (_, true) => BuildMethod::Dockerfile,
        _ => BuildMethod::Auto,
    };
    let section = settings::image_section().await?;
    let packages = if b.pip.is_empty() && b.apt.is_empty() {
        section.packages()?
    } else {
        Packages::new(&b.pip, &b.apt)?
    };
    let mut options = section.build_options();
    options.ca_file = b.ca_file.or(options.ca_file);
    options.network = b.build_network.or(options.network);
    options.force = b.force;
    let build = ImageBuild {
        method,
        packages,
        options,
    };
    factory.build_images(&build, progress).await
}
