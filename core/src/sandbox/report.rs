//! What the front ends show of the sandbox images, typed: `sandalyst image status`
//! as an [`ImageReport`], `sandalyst image build` as an [`ImageBuild`] with its
//! [`BuildLine`]s. A backend fills them in ([`super::SandboxFactory::image_report`],
//! [`super::SandboxFactory::build_images`]); the shells only print them.

use serde::{Deserialize, Serialize};

use super::custom::{BuildOptions, BuildProgress, Packages};
use super::packages::PythonEnv;

/// The images runs use, as `sandalyst image status` prints them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImageReport {
    /// The built-in image's tag, as this binary wants it.
    pub tag: String,
    pub present: bool,
    pub size_bytes: Option<i64>,
    pub created: Option<String>,
    /// Other tags of the built-in image (older recipes), no longer used.
    pub stale_tags: Vec<String>,
    /// The derived image of the configured packages, when there are any.
    pub custom: Option<CustomImage>,
    /// The Python environment of the image runs use (the derived one when it is
    /// there, else the built-in one), when any of them is there.
    pub python: Option<ImagePython>,
}

/// The derived image of the user's packages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CustomImage {
    pub tag: String,
    /// The packages, as they are shown (`pip: a, b; apt: c`).
    pub packages: String,
    pub present: bool,
}

/// The Python interpreter and packages of one image, or why they are unknown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImagePython {
    pub tag: String,
    /// The environment, or the reason it could not be read.
    pub env: Result<PythonEnv, String>,
}

/// What `sandalyst image build` is asked to make.
#[derive(Clone, Debug, Default)]
pub struct ImageBuild {
    pub method: super::image::BuildMethod,
    /// The user's packages (empty: the built-in image only).
    pub packages: Packages,
    /// How the derived image is built here; `options.force` rebuilds it.
    pub options: BuildOptions,
}

/// Progress of [`super::SandboxFactory::build_images`], for a front end to print.
#[derive(Clone, Debug, PartialEq)]
pub enum BuildLine {
    /// The built-in image is there already.
    UpToDate { tag: String },
    /// A line of the built-in image's build.
    Base(String),
    /// A step or line of the derived image's build.
    Derived(BuildProgress),
    /// The derived image is ready.
    Ready { tag: String, packages: String },
}
