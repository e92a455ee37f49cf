//! The sandbox image: its tag, whether it is present, and how to build it.
//!
//! The recipe lives in `docker/` and is embedded into the binary, so the tag is a hash
//! of exactly what goes into the image: a change to `docker/` (or to the image settings
//! below) gives a new tag, an unchanged recipe never rebuilds.
//!
//! Two ways to build the same image:
//! - [`BuildMethod::Dockerfile`]: `docker/Dockerfile` (`FROM python:3.12-slim`, pinned
//!   pip wheels), for machines that reach a container registry.
//! - [`BuildMethod::Offline`]: `docker/offline/build-rootfs.sh` builds a root
//!   filesystem from Debian 13 (trixie) packages with `mmdebstrap` (plus the pinned
//!   pyarrow wheel from the Python package index), which is then imported
//!   (`docker import`) with the settings of [`IMAGE_ENV`] and friends. Needs no registry.
//!
//! [`BuildMethod::Auto`] never probes a registry over the network: it uses the
//! Dockerfile only when its base image is already present locally, the offline recipe
//! when `mmdebstrap` is installed, and otherwise says what to install.
//!
//! Inside the image (both methods): `python3` on PATH, uid/gid 1000 (`analyst`),
//! working directory `/workspace`, `HOME=/tmp`, `MPLCONFIGDIR=/tmp/matplotlib` (seeded at
//! interpreter start-up from a font list baked into the image, so a read-only root with
//! a fresh tmpfs /tmp neither warns nor rebuilds the font cache), tini as PID 1.
//!
//! Here: the recipe, its tag, the choice of method and the root filesystem build;
//! the engine's side (is the image there, `docker build`, the import) is the Docker
//! backend's (`docker::image`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Repository name of the sandbox image; the tag is the recipe hash.
pub const REPO: &str = "sandalyst-sandbox";

/// Base image of `docker/Dockerfile`.
pub const BASE_IMAGE: &str = "python:3.12-slim";

/// User the sandbox runs as (`analyst`), as `uid:gid`.
pub const USER: &str = "1000:1000";
pub const UID: u32 = crate::workspace::SANDBOX_UID as u32;
pub const GID: u32 = 1000;

/// The working directory and workspace mount point.
pub const WORKDIR: &str = "/workspace";

/// Environment of the image (the Dockerfile sets the same values).
pub const IMAGE_ENV: &[(&str, &str)] = &[
    (
        "PATH",
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    ),
    ("LANG", "C.UTF-8"),
    ("HOME", "/tmp"),
    ("MPLBACKEND", "Agg"),
    ("MPLCONFIGDIR", "/tmp/matplotlib"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
    ("PYTHONUNBUFFERED", "1"),
];

/// PID 1 of the image: tini reaps children and forwards signals (fast stop).
pub const ENTRYPOINT: &[&str] = &["/usr/bin/tini", "--"];
pub const CMD: &[&str] = &["python3"];

/// Image label holding the recipe hash, and one telling how the image was built.
pub const LABEL_RECIPE: &str = "org.sandalyst.recipe";
pub const LABEL_METHOD: &str = "org.sandalyst.build-method";

/// One file of the recipe: path relative to `docker/`, Unix mode, content.
struct RecipeFile {
    path: &'static str,
    mode: u32,
    data: &'static [u8],
}

/// Everything in `docker/` that goes into the image, embedded at compile time.
/// A unit test checks that no file of `docker/` is missing from this list.
const RECIPE: &[RecipeFile] = &[
    RecipeFile {
        path: "Dockerfile",
        mode: 0o644,
        data: include_bytes!("../../../docker/Dockerfile"),
    },
    RecipeFile {
        path: "offline/build-rootfs.sh",
        mode: 0o755,
        data: include_bytes!("../../../docker/offline/build-rootfs.sh"),
    },
    RecipeFile {
        path: "offline/customize-rootfs.sh",
        mode: 0o755,
        data: include_bytes!("../../../docker/offline/customize-rootfs.sh"),
    },
    RecipeFile {
        path: "python/sandalyst_site.py",
        mode: 0o644,
        data: include_bytes!("../../../docker/python/sandalyst_site.py"),
    },
    RecipeFile {
        path: "python/sandalyst.pth",
        mode: 0o644,
        data: include_bytes!("../../../docker/python/sandalyst.pth"),
    },
    RecipeFile {
        path: "python/matplotlibrc",
        mode: 0o644,
        data: include_bytes!("../../../docker/python/matplotlibrc"),
    },
];

/// Bumped when the way the recipe becomes an image changes outside `docker/`.
const RECIPE_FORMAT: &str = "sandalyst-image-v1";

/// How to build the image.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BuildMethod {
    #[default]
    /// Dockerfile if its base image is present locally, else offline if `mmdebstrap`
    /// is installed, else an error saying what to do.
    Auto,
    /// Debian packages with `mmdebstrap`, then an image import. No registry needed.
    Offline,
    /// `docker/Dockerfile`; the engine pulls `python:3.12-slim` if it is missing.
    Dockerfile,
}

/// What the engine holds of the sandbox image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageStatus {
    /// The tag this binary wants ([`default_tag`]).
    pub tag: String,
    pub present: bool,
    pub id: Option<String>,
    pub size_bytes: Option<i64>,
    pub created: Option<String>,
    /// Other `sandalyst-sandbox:*` tags (older recipes), safe to remove.
    pub stale_tags: Vec<String>,
}

/// The import settings (`docker import --change ...`), without the recipe label.
fn import_changes() -> Vec<String> {
    let mut changes = vec![format!("USER {USER}"), format!("WORKDIR {WORKDIR}")];
    for (k, v) in IMAGE_ENV {
        changes.push(format!("ENV {k}={v}"));
    }
    changes.push(format!("ENTRYPOINT {}", json_array(ENTRYPOINT)));
    changes.push(format!("CMD {}", json_array(CMD)));
    changes
}

fn json_array(items: &[&str]) -> String {
    serde_json::to_string(items).expect("strings serialize")
}

/// The proxy variables an image build passes on, upper and lower case, as Docker's
/// predefined build arguments: apt and pip in the build go through the proxy this
/// process was given. Docker takes them without an `ARG` line and keeps them out of
/// `docker history`; they are facts of this machine, not of the image, so the tag does
/// not depend on them. (The offline recipe runs on the host and inherits them.)
pub const PROXY_VARIABLES: [&str; 8] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "NO_PROXY",
    "no_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// The build arguments for [`PROXY_VARIABLES`] set (and not empty) in `env`.
pub fn proxy_build_args(env: &dyn Fn(&str) -> Option<String>) -> HashMap<String, String> {
    PROXY_VARIABLES
        .iter()
        .filter_map(|name| Some((name.to_string(), env(name).filter(|v| !v.is_empty())?)))
        .collect()
}

/// Hash (first 12 hex digits of a SHA-256) of the embedded recipe and image settings.
pub fn recipe_hash() -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(RECIPE_FORMAT.as_bytes());
    for f in RECIPE {
        field(f.path.as_bytes());
        field(&f.mode.to_le_bytes());
        field(f.data);
    }
    for change in import_changes() {
        field(change.as_bytes());
    }
    let digest = h.finalize();
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// `sandalyst-sandbox:<recipe hash>`.
/// Whether `tag` is one this app makes (the built-in image of any version, or a
/// derived image of the user's packages), as opposed to an image the user named.
pub fn is_ours(tag: &str) -> bool {
    let repo = tag.split_once(':').map_or(tag, |(r, _)| r);
    repo == REPO || repo == super::custom::CUSTOM_REPO
}

pub fn default_tag() -> String {
    format!("{REPO}:{}", recipe_hash())
}

/// Take the machine-wide build lock (a locked file in the build folder), waiting for
/// another process's build if need be. Released when the file is dropped.
pub(crate) async fn lock_builds(progress: &(dyn Fn(&str) + Send + Sync)) -> Result<std::fs::File> {
    let dir = build_parent_dir();
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the build folder {}", dir.display()))?;
    let path = dir.join("build.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open the build lock {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => return Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {}
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("cannot lock {}", path.display()))
        }
    }
    progress("another sandalyst process is building the sandbox image: waiting for it");
    tokio::task::spawn_blocking(move || file.lock().map(|()| file))
        .await?
        .with_context(|| format!("cannot lock {}", path.display()))
}

pub(crate) fn choose(base_present: bool, have_mmdebstrap: bool) -> Result<BuildMethod> {
    if base_present {
        return Ok(BuildMethod::Dockerfile);
    }
    if have_mmdebstrap {
        return Ok(BuildMethod::Offline);
    }
    bail!(
        "cannot build the sandbox image here: install mmdebstrap (`apt-get install mmdebstrap`) to build it from Debian packages, \
         or on a machine that reaches a container registry run `sandalyst image build --dockerfile`"
    )
}

pub(crate) fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The embedded `docker/` folder as an uncompressed tar (a few KB): the build context.
pub(crate) fn context_tar() -> Result<Vec<u8>> {
    let mut tar = tar::Builder::new(Vec::new());
    for f in RECIPE {
        let mut header = tar::Header::new_gnu();
        header.set_size(f.data.len() as u64);
        header.set_mode(f.mode);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, f.path, f.data)?;
    }
    Ok(tar.into_inner()?)
}

/// A folder removed (recursively) when dropped, whatever happened.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Sandalyst's cache folder for images: builds and the cached package lists.
pub(crate) fn cache_dir() -> PathBuf {
    build_parent_dir()
}

/// Where the offline build works: about 2 GB at its peak, so not /tmp (often RAM).
fn build_parent_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SANDALYST_BUILD_DIR") {
        return PathBuf::from(dir);
    }
    dirs::cache_dir()
        .map(|d| d.join("sandalyst"))
        .unwrap_or_else(std::env::temp_dir)
}

fn write_recipe(dir: &Path) -> Result<()> {
    for f in RECIPE {
        let path = dir.join(f.path);
        std::fs::create_dir_all(path.parent().expect("recipe paths have a parent"))?;
        std::fs::write(&path, f.data)?;
        // Modes matter where the recipe runs (mmdebstrap, Linux); elsewhere they do not exist.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(f.mode))?;
        }
    }
    Ok(())
}

/// The offline recipe's root filesystem, built: a tar in a work folder that goes
/// when this is dropped.
pub(crate) struct Rootfs {
    _work: TempDir,
    /// The tar, to be imported as the image.
    pub tar: PathBuf,
}

/// Step 1 of the offline build: the root filesystem from Debian packages
/// (`docker/offline/build-rootfs.sh` under `mmdebstrap`), with the script's output as
/// progress. `tag` is what it will be imported as.
pub(crate) async fn build_rootfs(
    tag: &str,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<Rootfs> {
    if find_on_path("mmdebstrap").is_none() {
        bail!("the offline build needs mmdebstrap: install it with `apt-get install mmdebstrap` and retry");
    }
    let parent = build_parent_dir();
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("cannot create the build folder {}", parent.display()))?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let work = TempDir(parent.join(format!("image-build-{}-{nanos:08x}", std::process::id())));
    std::fs::create_dir(&work.0)
        .with_context(|| format!("cannot create the build folder {}", work.0.display()))?;
    write_recipe(&work.0.join("docker"))
        .with_context(|| format!("cannot write the image recipe into {}", work.0.display()))?;
    let rootfs = work.0.join("rootfs.tar");
    progress(&format!(
        "building the sandbox root filesystem from Debian packages in {} (about 3 to 5 minutes)",
        work.0.display()
    ));
    let started = Instant::now();
    run_script(
        &work.0.join("docker/offline/build-rootfs.sh"),
        &rootfs,
        progress,
    )
    .await?;
    let tar_len = std::fs::metadata(&rootfs)
        .with_context(|| "the root filesystem build reported success but wrote no tar")?
        .len();
    progress(&format!(
        "root filesystem: {} MB in {:.0} s; importing it as {tag}",
        tar_len >> 20,
        started.elapsed().as_secs_f64()
    ));
    Ok(Rootfs {
        _work: work,
        tar: rootfs,
    })
}

/// The settings an imported root filesystem gets (`docker import --change ...`): the
/// image's, and the labels of the offline recipe.
pub(crate) fn offline_changes() -> Vec<String> {
    let mut changes = import_changes();
    changes.push(format!("LABEL {LABEL_RECIPE}={}", recipe_hash()));
    changes.push(format!("LABEL {LABEL_METHOD}=offline"));
    changes
}

/// A build context holding only `Dockerfile`.
pub(crate) fn dockerfile_tar(text: &str) -> Result<Vec<u8>> {
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(text.len() as u64);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut header, "Dockerfile", text.as_bytes())?;
    Ok(tar.into_inner()?)
}

/// Run the rootfs script, forwarding each output line to `progress`; on failure, an
/// error that quotes the script's own explanation.
async fn run_script(
    script: &Path,
    out: &Path,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<()> {
    let mut child = tokio::process::Command::new("sh")
        .arg(script)
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0)
        .spawn()
        .context("cannot start sh to run the root filesystem build")?;
    // If this future is dropped (cancelled), stop mmdebstrap too, not only `sh`.
    let mut group = KillGroup(child.id());
    // Both pipes feed one channel, so lines arrive in about the order they were written.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    for pipe in [
        Box::new(stdout) as Box<dyn tokio::io::AsyncRead + Send + Unpin>,
        Box::new(stderr),
    ] {
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    drop(tx);
    let mut cause: Option<String> = None;
    let mut last = String::new();
    while let Some(line) = rx.recv().await {
        let line = line.trim_end();
        if line.is_empty() {
            continue;
        }
        if line.contains("error:") || line.contains("FAILED") || line.starts_with("E: ") {
            // Keep the first, most specific explanation.
            cause.get_or_insert_with(|| line.to_string());
        }
        progress(line);
        last = line.to_string();
    }
    let status = child
        .wait()
        .await
        .context("waiting for the root filesystem build")?;
    group.0 = None;
    if !status.success() {
        let why = cause.unwrap_or(last);
        bail!("building the sandbox root filesystem failed ({status}): {why}");
    }
    Ok(())
}

/// Sends SIGTERM to a process group when dropped, unless disarmed (`.0 = None`).
struct KillGroup(Option<u32>);

impl Drop for KillGroup {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", "--", &format!("-{pgid}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn builds_get_the_proxy_variables_that_are_set() {
        let env = |name: &str| match name {
            "HTTPS_PROXY" => Some("http://proxy.corp:3128".to_string()),
            "no_proxy" => Some("localhost,.corp".to_string()),
            "HTTP_PROXY" => Some(String::new()),
            _ => None,
        };
        let args = proxy_build_args(&env);
        assert_eq!(args.len(), 2, "{args:?}");
        assert_eq!(args["HTTPS_PROXY"], "http://proxy.corp:3128");
        assert_eq!(args["no_proxy"], "localhost,.corp");
        assert!(proxy_build_args(&|_| None).is_empty());
    }
    use super::*;

    #[test]
    fn our_tags_are_told_by_their_repository() {
        assert!(is_ours(&default_tag()));
        assert!(is_ours("sandalyst-sandbox-custom:0123456789ab"));
        assert!(!is_ours("sandalyst-sandbox-mine:1"));
        assert!(!is_ours("python:3.12-slim"));
        assert!(!is_ours("registry.example/sandalyst-sandbox:1"));
    }

    #[test]
    fn hash_is_stable_and_short_hex() {
        let a = recipe_hash();
        assert_eq!(a, recipe_hash());
        assert_eq!(a.len(), 12);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    #[test]
    fn tag_is_repo_colon_hash() {
        assert_eq!(
            default_tag(),
            format!("sandalyst-sandbox:{}", recipe_hash())
        );
    }

    #[test]
    fn every_recipe_file_is_embedded() {
        // A file added to docker/ without being embedded would not change the tag.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docker");
        let mut on_disk = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_none_or(|e| e != "md") {
                    let rel = path.strip_prefix(&root).unwrap();
                    on_disk.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        for file in &on_disk {
            let f = RECIPE.iter().find(|f| f.path == file);
            let f = f.unwrap_or_else(|| panic!("docker/{file} is not embedded in RECIPE"));
            assert_eq!(f.data, std::fs::read(root.join(file)).unwrap().as_slice());
        }
        assert_eq!(on_disk.len(), RECIPE.len());
    }

    #[test]
    fn dockerfile_sets_the_same_settings_as_the_import() {
        let dockerfile = std::str::from_utf8(RECIPE[0].data)
            .unwrap()
            .replace("\", \"", "\",\"");
        assert!(dockerfile.contains(&format!("FROM {BASE_IMAGE}")));
        for (k, v) in IMAGE_ENV {
            if *k == "PATH" || *k == "LANG" {
                continue; // the python base image sets its own
            }
            assert!(
                dockerfile.contains(&format!("{k}={v}")),
                "Dockerfile lacks {k}={v}"
            );
        }
        assert!(dockerfile.contains(&format!("USER {USER}")));
        assert!(dockerfile.contains(&format!("WORKDIR {WORKDIR}")));
        assert!(dockerfile.contains(&format!("ENTRYPOINT {}", json_array(ENTRYPOINT))));
        assert!(dockerfile.contains(&format!("CMD {}", json_array(CMD))));
    }

    /// The `name==version` pins of the offline recipe (its `PINS="..."`, which its
    /// self-check holds the installed packages to) and of the Dockerfile.
    fn pins(text: &str) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = text
            .split(|c: char| c.is_whitespace() || c == '"' || c == '\\')
            .filter_map(|w| w.split_once("=="))
            .filter(|(n, v)| !n.is_empty() && !v.is_empty())
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn both_recipes_install_the_same_python_libraries_at_the_same_versions() {
        let dockerfile = std::str::from_utf8(RECIPE[0].data).unwrap();
        let offline = std::str::from_utf8(RECIPE[1].data).unwrap();
        let block = offline
            .split_once("PINS=\"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .expect("build-rootfs.sh sets PINS=\"...\"")
            .0;
        let offline_pins = pins(block);
        assert_eq!(
            pins(dockerfile),
            offline_pins,
            "docker/Dockerfile and PINS differ"
        );
        // Everything the issue promises an analyst, in both. The kernel needs IPython
        // (and matplotlib-inline, which it brings).
        let names: Vec<&str> = offline_pins.iter().map(|(n, _)| n.as_str()).collect();
        for lib in [
            "numpy",
            "scipy",
            "pandas",
            "matplotlib",
            "seaborn",
            "statsmodels",
            "scikit-learn",
            "pyarrow",
            "openpyxl",
            "xlrd",
            "odfpy",
            "tabulate",
            "ipython",
            "plotly",
        ] {
            assert!(names.contains(&lib), "PINS lack {lib}");
        }
        // The offline recipe installs each from Debian, except pyarrow (a pinned wheel).
        for (name, _) in &offline_pins {
            let package = match name.as_str() {
                "scikit-learn" => "python3-sklearn".to_string(),
                "odfpy" => "python3-odf".to_string(),
                "pyarrow" => {
                    assert!(
                        offline.contains("PYARROW_SHA256="),
                        "pyarrow's wheel is not pinned by hash"
                    );
                    continue;
                }
                n => format!("python3-{n}"),
            };
            assert!(
                offline.contains(&format!("{package},")),
                "the offline recipe lacks {package}"
            );
        }
        for font in ["fonts-dejavu-core", "fonts-wqy-microhei"] {
            assert!(
                dockerfile.contains(font) && offline.contains(font),
                "{font}"
            );
        }
    }

    #[test]
    fn import_changes_are_valid_instructions() {
        let changes = import_changes();
        assert!(changes.contains(&"USER 1000:1000".to_string()));
        assert!(changes.contains(&"ENV MPLBACKEND=Agg".to_string()));
        assert!(changes.contains(&r#"ENTRYPOINT ["/usr/bin/tini","--"]"#.to_string()));
        assert!(changes.iter().all(|c| !c.contains('\n')));
    }

    #[test]
    fn context_tar_holds_the_recipe() {
        let bytes = context_tar().unwrap();
        let mut archive = tar::Archive::new(bytes.as_slice());
        let names: Vec<String> = archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned())
            .collect();
        let expected: Vec<&str> = RECIPE.iter().map(|f| f.path).collect();
        assert_eq!(names, expected);
    }

    #[test]
    fn auto_prefers_a_local_base_then_mmdebstrap_then_explains() {
        assert_eq!(choose(true, true).unwrap(), BuildMethod::Dockerfile);
        assert_eq!(choose(true, false).unwrap(), BuildMethod::Dockerfile);
        assert_eq!(choose(false, true).unwrap(), BuildMethod::Offline);
        let err = choose(false, false).unwrap_err().to_string();
        assert!(err.contains("apt-get install mmdebstrap"), "{err}");
        assert!(err.contains("--dockerfile"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
