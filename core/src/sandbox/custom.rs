//! The user's own packages, and images the user brought.
//!
//! [`Packages`] (pip and apt names, checked where they enter the core) become a
//! derived image on top of the sandbox image: a Dockerfile generated here, built
//! from an in-memory context, tagged
//! `sandalyst-sandbox-custom:<hash of the base tag and the sorted lists>`, so an
//! unchanged list never rebuilds. Only the build has network; a run from the derived
//! image is as locked down as any other. A failed build names the tool's own message
//! (pip's, apt's) and leaves the default image untouched.
//!
//! An image named with `--image` was built elsewhere: its check runs its Python once,
//! with no network ([`CHECK_SCRIPT`]), and says what the kernel would miss
//! ([`ImageError::NoPython`], [`ImageError::KernelNeeds`]), each with a one-line fix.
//!
//! Here: the names, the tag, the Dockerfile, how a build's output and a check's are
//! read, and the errors. Building, checking and picking an image through the engine
//! are the Docker backend's (`docker::custom`).

use std::collections::HashSet;
use std::fmt;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::image;

/// Repository of derived images; the tag is [`derived_tag`]'s hash.
pub const CUSTOM_REPO: &str = "sandalyst-sandbox-custom";

/// Labels of a derived image: its base tag and its package lists (JSON).
pub const LABEL_BASE: &str = "org.sandalyst.base";
pub const LABEL_PIP: &str = "org.sandalyst.pip";
pub const LABEL_APT: &str = "org.sandalyst.apt";

/// Where the build's CA file goes inside the build (removed again by the last step).
const BUILD_CA_PATH: &str = "/tmp/sandalyst-build-ca.pem";

/// Which package manager a name is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Manager {
    Pip,
    Apt,
}

impl fmt::Display for Manager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Manager::Pip => "pip",
            Manager::Apt => "apt",
        })
    }
}

/// A package name refused where it enters the core.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` is not a valid {manager} package name: {why}")]
pub struct PackageError {
    pub manager: Manager,
    pub name: String,
    pub why: String,
}

/// Extra packages for the sandbox: sorted, without duplicates, every name checked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawPackages")]
pub struct Packages {
    pip: Vec<String>,
    apt: Vec<String>,
}

/// What a settings file holds, before the names are checked.
#[derive(Deserialize)]
struct RawPackages {
    #[serde(default)]
    pip: Vec<String>,
    #[serde(default)]
    apt: Vec<String>,
}

impl TryFrom<RawPackages> for Packages {
    type Error = PackageError;
    fn try_from(raw: RawPackages) -> Result<Packages, PackageError> {
        Packages::new(raw.pip, raw.apt)
    }
}

impl Packages {
    /// Check every name and normalise the lists (trimmed, sorted, deduplicated).
    pub fn new<P, A>(
        pip: impl IntoIterator<Item = P>,
        apt: impl IntoIterator<Item = A>,
    ) -> Result<Packages, PackageError>
    where
        P: AsRef<str>,
        A: AsRef<str>,
    {
        Ok(Packages {
            pip: checked(pip, Manager::Pip, check_pip)?,
            apt: checked(apt, Manager::Apt, check_apt)?,
        })
    }

    pub fn pip(&self) -> &[String] {
        &self.pip
    }

    pub fn apt(&self) -> &[String] {
        &self.apt
    }

    pub fn is_empty(&self) -> bool {
        self.pip.is_empty() && self.apt.is_empty()
    }
}

impl fmt::Display for Packages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if !self.pip.is_empty() {
            parts.push(format!("pip: {}", self.pip.join(" ")));
        }
        if !self.apt.is_empty() {
            parts.push(format!("apt: {}", self.apt.join(" ")));
        }
        f.write_str(&parts.join("; "))
    }
}

/// A pip requirement as a name, optional extras and an optional version clause
/// (`pandas`, `tabulate==0.9.0`, `scikit-learn>=1.4,<2`, `black[jupyter]`). URLs, paths,
/// options (`--index-url`) and anything a shell would read are refused.
/// The names trimmed, each checked (the first bad one is the error), sorted, once each.
fn checked<N: AsRef<str>>(
    names: impl IntoIterator<Item = N>,
    manager: Manager,
    check: fn(&str) -> Result<(), String>,
) -> Result<Vec<String>, PackageError> {
    let mut out = Vec::new();
    for name in names {
        let name = name.as_ref().trim();
        check(name).map_err(|why| PackageError {
            manager,
            name: name.to_string(),
            why,
        })?;
        out.push(name.to_string());
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn check_pip(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("it is empty".into());
    }
    if s.len() > 200 {
        return Err("it is longer than 200 characters".into());
    }
    if s.starts_with('-') {
        return Err("options are not package names".into());
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "._-[],=<>!~*+".contains(*c)))
    {
        return Err(format!(
            "it holds {c:?}; a name may have letters, digits, `.`, `_`, `-`, extras in [...] and a version such as ==1.2 or >=1,<2"
        ));
    }
    let name_end = s.find(|c: char| "[=<>!~".contains(c)).unwrap_or(s.len());
    let (name, rest) = s.split_at(name_end);
    if name.is_empty()
        || !name.starts_with(|c: char| c.is_ascii_alphanumeric())
        || !name.ends_with(|c: char| c.is_ascii_alphanumeric())
        || name.contains(['[', ']', ',', '*', '+'])
    {
        return Err("a name starts and ends with a letter or digit".into());
    }
    let version = match rest.strip_prefix('[') {
        Some(r) => {
            let Some((extras, after)) = r.split_once(']') else {
                return Err("its extras lack a closing `]`".into());
            };
            if extras.split(',').any(|e| e.is_empty()) || extras.contains(['[', '=', '<', '>']) {
                return Err("its extras are not a comma-separated list of names".into());
            }
            after
        }
        None => rest,
    };
    if version.contains(['[', ']']) {
        return Err("extras go right after the name".into());
    }
    for clause in version.split(',').filter(|_| !version.is_empty()) {
        let op_len = clause
            .find(|c: char| !"=<>!~".contains(c))
            .unwrap_or(clause.len());
        let (op, v) = clause.split_at(op_len);
        if !matches!(op, "==" | "!=" | ">=" | "<=" | ">" | "<" | "~=" | "===") || v.is_empty() {
            return Err(format!(
                "`{clause}` is not a version clause (==1.2, >=1.0, ~=2.1, <3)"
            ));
        }
    }
    Ok(())
}

/// A Debian package name (`[a-z0-9][a-z0-9+.-]+`), optionally `=version` or
/// `/release`. Options and anything a shell would read are refused.
fn check_apt(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("it is empty".into());
    }
    if s.len() > 200 {
        return Err("it is longer than 200 characters".into());
    }
    if s.starts_with('-') {
        return Err("options are not package names".into());
    }
    let (name, suffix) = match s.find(['=', '/']) {
        Some(i) => s.split_at(i),
        None => (s, ""),
    };
    let ok_name = name.len() >= 2
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c));
    if !ok_name {
        return Err(
            "Debian names are lowercase letters, digits, `+`, `-` and `.` (at least 2 characters)"
                .into(),
        );
    }
    let rest = suffix.get(1..).unwrap_or("");
    if !suffix.is_empty()
        && (rest.is_empty()
            || !rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.~:_".contains(c)))
    {
        return Err("a version (`=1.2-3`) or release (`/bookworm-backports`) may follow the name, nothing else".into());
    }
    Ok(())
}

/// `sandalyst-sandbox-custom:<12 hex digits>`: a hash of the base tag, the lists and
/// the generated Dockerfile (so a new way of building gives a new tag, as for the
/// built-in image). The build's CA file and network are not part of it.
pub fn derived_tag(base: &str, packages: &Packages) -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(dockerfile(base, packages, false).as_bytes());
    field(base.as_bytes());
    field(&(packages.pip.len() as u64).to_le_bytes());
    for p in &packages.pip {
        field(p.as_bytes());
    }
    field(&(packages.apt.len() as u64).to_le_bytes());
    for a in &packages.apt {
        field(a.as_bytes());
    }
    let digest = h.finalize();
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("{CUSTOM_REPO}:{hex}")
}

/// The one root step: apt, then pip, then the CA file gone. Its arguments are the
/// number of apt names, the apt names, then the pip names; they reach apt and pip as
/// arguments (the exec form of RUN), never as text a shell parses (`set -f`: no
/// globbing of the split apt list either).
const INSTALL_SCRIPT: &str = r#"set -ef
n=$1; shift; apt=''; i=0
while [ "$i" -lt "$n" ]; do apt="$apt $1"; shift; i=$((i+1)); done
ca=''
if [ -f /tmp/sandalyst-build-ca.pem ]; then
  ca='-o Acquire::https::CAInfo=/tmp/sandalyst-build-ca.pem'; export PIP_CERT=/tmp/sandalyst-build-ca.pem
fi
export DEBIAN_FRONTEND=noninteractive
if [ $# -gt 0 ] && ! python3 -m pip --version >/dev/null 2>&1; then
  echo 'pip is not in the base image: python3-pip comes from Debian'; apt="$apt python3-pip"
fi
if [ -n "$apt" ]; then
  echo "apt-get install$apt"
  apt-get $ca update -q
  apt-get $ca install -y -q --no-install-recommends $apt
  apt-get clean; rm -rf /var/lib/apt/lists; mkdir -p /var/lib/apt/lists/partial
fi
if [ $# -gt 0 ]; then
  echo "pip install $*"
  PIP_BREAK_SYSTEM_PACKAGES=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --no-input --progress-bar off "$@"
fi
rm -f /tmp/sandalyst-build-ca.pem"#;

fn json<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).expect("strings serialize")
}

/// The Dockerfile of the derived image. The base's ENTRYPOINT, CMD, ENV and WORKDIR
/// are inherited; USER goes back to the sandbox user at the end. Few steps: the
/// classic builder commits a layer per step (seconds each).
pub fn dockerfile(base: &str, packages: &Packages, with_ca: bool) -> String {
    // Validated names hold no quote or backslash, so JSON text is a safe label value.
    let mut d = format!(
        "FROM {base}\nLABEL {LABEL_BASE}={} {LABEL_PIP}={} {LABEL_APT}={} {}=derived\nUSER root\n",
        json(base),
        json(&json(&packages.pip)),
        json(&json(&packages.apt)),
        image::LABEL_METHOD
    );
    if with_ca {
        d.push_str(&format!("COPY build-ca.pem {BUILD_CA_PATH}\n"));
    }
    // Debian's Python has no pip and marks itself externally managed (PEP 668): pip
    // comes from apt, and installs into /usr/local beside Debian's packages.
    let mut argv: Vec<String> = vec![
        "sh".into(),
        "-c".into(),
        INSTALL_SCRIPT.into(),
        "sh".into(),
        packages.apt.len().to_string(),
    ];
    argv.extend(packages.apt.iter().cloned());
    argv.extend(packages.pip.iter().cloned());
    d.push_str(&format!("RUN {}\n", json(&argv)));
    d.push_str(&format!("USER {}\n", image::USER));
    // As the sandbox user: the kernel still starts (a pip package may have replaced
    // a library IPython or the analysis stack needs).
    d.push_str(&format!("RUN {}\n", json(&["python3", "-c", SELF_CHECK])));
    d
}

/// Run in the derived image at the end of its build (matplotlib's cache in a
/// throwaway folder: the image's /tmp/matplotlib is not the sandbox user's here).
const SELF_CHECK: &str =
    "import os, shutil, tempfile; d = tempfile.mkdtemp(); os.environ['MPLCONFIGDIR'] = d; \
import IPython, traitlets, numpy, pandas, matplotlib.pyplot; shutil.rmtree(d); \
print('self-check: the kernel, numpy, pandas and matplotlib import')";

/// How to build a derived image: facts of this machine's network, not of the image
/// (they do not change its tag).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BuildOptions {
    /// A CA file (PEM) the build trusts besides the image's own, for networks that
    /// intercept TLS (a company proxy). Used by apt and pip during the build only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// The build container's network mode (`host`, a network's name); `None` is the
    /// engine's default (bridge). Runs never have network, whatever this says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// Rebuild even when the tag is present.
    #[serde(skip)]
    pub force: bool,
}

/// The config file's `[image]` section as what a build takes.
impl crate::model::config::ImageSection {
    /// The package lists, every name checked.
    pub fn packages(&self) -> Result<Packages, PackageError> {
        Packages::new(&self.pip, &self.apt)
    }

    pub fn build_options(&self) -> BuildOptions {
        BuildOptions {
            ca_file: self.ca_file.clone(),
            network: self.build_network.clone().filter(|n| !n.trim().is_empty()),
            force: false,
        }
    }
}

/// Progress of a derived build, typed for a UI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BuildProgress {
    /// The build started: its tag and what goes in.
    Started {
        tag: String,
        base: String,
        packages: String,
    },
    /// Step `step` of `steps` of the Dockerfile began.
    Step { step: u32, steps: u32, what: String },
    /// A line of output (the engine's, apt's, pip's).
    Line { text: String },
    /// The image is there (built now, or already present when `cached`).
    Done {
        tag: String,
        seconds: f64,
        cached: bool,
    },
}

impl fmt::Display for BuildProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildProgress::Started {
                tag,
                base,
                packages,
            } => write!(f, "building {tag} on {base} ({packages})"),
            BuildProgress::Step { step, steps, what } => write!(f, "[{step}/{steps}] {what}"),
            BuildProgress::Line { text } => f.write_str(text),
            BuildProgress::Done {
                tag,
                seconds,
                cached: true,
                ..
            } => write!(f, "{tag} is already built ({seconds:.1} s)"),
            BuildProgress::Done { tag, seconds, .. } => {
                write!(f, "{tag} ready in {seconds:.0} s")
            }
        }
    }
}

/// Receives build progress.
pub type ProgressSink<'a> = &'a (dyn Fn(BuildProgress) + Send + Sync);

/// What can go wrong with a derived image or an image the user named; each message
/// ends with what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("{0}")]
    BadPackage(#[from] PackageError),
    /// The engine failed outside of the build itself.
    #[error("{message}")]
    Engine { message: String },
    /// The image to build on is not there.
    #[error("the base image {base} is not there; build it first with `sandalyst image build`")]
    BaseMissing { base: String },
    /// A build step failed; `tool` is `pip`, `apt` or `docker`, `message` its own words.
    #[error("building {tag} failed: {tool} said: {message}. The default image is unchanged; fix the package list and build again")]
    BuildFailed {
        tag: String,
        tool: String,
        message: String,
    },
    /// The build's CA file cannot be read.
    #[error("the CA file {path} cannot be read ({message}); give a readable PEM file")]
    CaFile { path: String, message: String },
    /// `--image` names an image the engine does not have.
    #[error("the image {image} is not in the engine; build or load it there (`docker images` lists what is), or leave out --image to use the built-in image")]
    NotFound { image: String },
    /// The image has no `python3` on its PATH.
    #[error("the image {image} has no python3 on its PATH: the sandbox runs Python. Fix: build it FROM an image with Python 3.8+ (e.g. FROM {default}), or leave out --image")]
    NoPython { image: String, default: String },
    /// The image's Python lacks what the kernel needs (`missing`, in words).
    #[error("the image {image} lacks what the sandbox's kernel needs: {}. Fix: {fix}", missing.join(", "))]
    KernelNeeds {
        image: String,
        missing: Vec<String>,
        fix: String,
    },
}

/// Read the CA file a build trusts, if one is given.
pub(crate) async fn read_ca(options: &BuildOptions) -> Result<Option<Vec<u8>>, ImageError> {
    let Some(path) = &options.ca_file else {
        return Ok(None);
    };
    let p = path.clone();
    let read = tokio::task::spawn_blocking(move || std::fs::read(&p))
        .await
        .map_err(|e| ImageError::Engine {
            message: e.to_string(),
        })?;
    Ok(Some(read.map_err(|e| ImageError::CaFile {
        path: path.display().to_string(),
        message: e.to_string(),
    })?))
}

/// A derived build's output as the engine streams it: progress for a UI, and what
/// is needed to say why the build failed (the tool that ran last, the lines of the
/// step that ran).
pub(crate) struct BuildLog {
    step_lines: Vec<String>,
    tool: &'static str,
}

impl BuildLog {
    pub fn new() -> BuildLog {
        BuildLog {
            step_lines: Vec::new(),
            tool: "docker",
        }
    }

    /// One piece of the engine's build output (a `stream` or `status` text).
    pub fn read(&mut self, text: &str, progress: ProgressSink<'_>) {
        // The classic builder colours a step's stderr (ESC[91m ... ESC[0m).
        let text = strip_ansi(text);
        // apt's and pip's progress rewrites its line with \r: each state is a line.
        for l in text
            .split(['\n', '\r'])
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
        {
            if let Some((step, steps, what)) = parse_step(l) {
                self.step_lines.clear();
                self.tool = if what.contains("self-check") {
                    "the self-check"
                } else {
                    "docker"
                };
                progress(BuildProgress::Step {
                    step,
                    steps,
                    what: describe_step(what),
                });
            } else {
                // The install script says which tool runs next.
                if l.starts_with("apt-get install ") {
                    self.tool = "apt";
                } else if l.starts_with("pip install ") {
                    self.tool = "pip";
                }
                self.step_lines.push(l.to_string());
                progress(BuildProgress::Line { text: l.into() });
            }
        }
    }

    /// The build failed; the engine said `engine_message`.
    pub fn failed(self, engine_message: String) -> Failed {
        Failed::new(self.tool, self.step_lines, engine_message)
    }
}

/// A failed build: the tool that ran last, its lines, and the engine's message.
pub(crate) struct Failed {
    tool: &'static str,
    step_lines: Vec<String>,
    engine_message: String,
}

impl Failed {
    fn new(tool: &'static str, step_lines: Vec<String>, engine_message: String) -> Failed {
        Failed {
            tool,
            step_lines,
            engine_message,
        }
    }

    /// The error a person reads: the tool's own words where they say it.
    pub fn into_error(self, tag: String) -> ImageError {
        let Failed {
            tool,
            step_lines,
            engine_message,
        } = self;
        let mut message =
            tool_message(tool, &step_lines).unwrap_or_else(|| engine_message.trim().to_string());
        // pip then says "no matching distribution", which hides the real cause.
        if step_lines.iter().any(|l| {
            l.contains("CERTIFICATE_VERIFY_FAILED") || l.contains("certificate verify failed")
        }) {
            message.push_str(&format!(
                " ({tool} could not verify the TLS certificate of the package server: where a proxy intercepts TLS, give its CA with --ca-file FILE or ca_file in [image])"
            ));
        }
        ImageError::BuildFailed {
            tag,
            tool: tool.into(),
            message,
        }
    }
}

/// `text` without terminal escape sequences (`ESC [ ... letter`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `Step 3/6 : RUN ...` (the classic builder's step lines).
fn parse_step(line: &str) -> Option<(u32, u32, &str)> {
    let rest = line.strip_prefix("Step ")?;
    let (nums, what) = rest.split_once(" : ")?;
    let (a, b) = nums.split_once('/')?;
    Some((a.parse().ok()?, b.parse().ok()?, what))
}

/// A step as a person reads it (not the whole generated script).
fn describe_step(what: &str) -> String {
    if what.contains("sandalyst-build-ca.pem") && what.starts_with("RUN") {
        "install the packages (apt, then pip)".into()
    } else if what.contains("self-check") {
        "self-check as the sandbox user: the kernel and the analysis libraries import".into()
    } else if what.starts_with("LABEL ") {
        "labels".into()
    } else {
        what.chars().take(120).collect()
    }
}

/// The failing tool's own explanation, from the output of the step that failed:
/// pip's `ERROR:` lines, apt's `E:` lines, a self-check's traceback end.
fn tool_message(tool: &str, lines: &[String]) -> Option<String> {
    let picked: Vec<&str> = match tool {
        "pip" => lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| l.starts_with("ERROR:") || l.starts_with("error:") || l.starts_with("E: "))
            .collect(),
        "apt" => lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| l.starts_with("E: "))
            .collect(),
        _ => lines.iter().rev().take(1).map(|l| l.trim()).collect(),
    };
    (!picked.is_empty()).then(|| picked.join(" "))
}

/// The build context: the Dockerfile and, when given, the CA file.
pub(crate) fn context_tar(dockerfile: &str, ca: Option<&[u8]>) -> std::io::Result<Vec<u8>> {
    let mut tar = tar::Builder::new(Vec::new());
    let mut files: Vec<(&str, &[u8])> = vec![("Dockerfile", dockerfile.as_bytes())];
    if let Some(ca) = ca {
        files.push(("build-ca.pem", ca));
    }
    for (path, data) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, path, data)?;
    }
    tar.into_inner()
}

/// What the check of an image found (see `docker::custom::check`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageReport {
    pub image: String,
    /// e.g. `3.11.2`.
    pub python: String,
    /// Analysis libraries the agent's instructions assume but the image lacks (the
    /// sandbox still works; the model's imports of them will fail).
    pub absent_libraries: Vec<String>,
}

/// Run in the image to check it: stdlib only, prints one JSON line.
pub(crate) const CHECK_SCRIPT: &str = r#"
import json, shutil, sys
r = {"python": sys.version.split()[0], "missing": [], "absent": []}
if sys.version_info < (3, 8):
    r["missing"].append("Python 3.8 or newer (it has %s)" % r["python"])
for mod in ("IPython.core.interactiveshell", "traitlets"):
    try:
        __import__(mod)
    except Exception as e:
        r["missing"].append("the Python module %s (%s)" % (mod.split(".")[0], type(e).__name__))
for prog in ("sh", "cat"):
    if shutil.which(prog) is None:
        r["missing"].append("the program %s on PATH" % prog)
# Found, not imported: the check stays fast, and these are not required.
import importlib.util
for mod in ("numpy", "pandas", "matplotlib"):
    if importlib.util.find_spec(mod) is None:
        r["absent"].append(mod)
print("SANDALYST-CHECK " + json.dumps(r))
"#;

/// Image ids already checked by this process (a session reopened in the desktop app
/// does not pay for the check twice).
static CHECKED: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// Whether this process already checked the image with this id.
pub fn already_checked(id: &str) -> bool {
    CHECKED
        .lock()
        .map(|s| s.as_ref().is_some_and(|s| s.contains(id)))
        .unwrap_or(false)
}

pub(crate) fn no_python(image_name: &str) -> ImageError {
    ImageError::NoPython {
        image: image_name.into(),
        default: image::default_tag(),
    }
}

/// Remember that the image with this id was checked.
pub(crate) fn mark_checked(id: String) {
    if let Ok(mut seen) = CHECKED.lock() {
        seen.get_or_insert_with(HashSet::new).insert(id);
    }
}

/// What [`CHECK_SCRIPT`] printed in a container that ended with `code` (its whole
/// output `out`): the report, or what the image lacks for the kernel.
pub(crate) fn read_check(
    image_name: &str,
    code: i64,
    out: &str,
) -> Result<ImageReport, ImageError> {
    let found = out
        .lines()
        .find_map(|l| l.strip_prefix("SANDALYST-CHECK "))
        .and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok());
    let Some(found) = found else {
        // 127: the shell of an engine that starts it anyway found no python3 (Podman).
        if code == 127 || out.contains("python3") && out.contains("not found") {
            return Err(no_python(image_name));
        }
        let last = out
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(ImageError::KernelNeeds {
            image: image_name.into(),
            missing: vec![format!("a working python3 (it exited with {code}: {last})")],
            fix: format!(
                "build it FROM an image with Python 3.8+ (e.g. FROM {}), or leave out --image",
                image::default_tag()
            ),
        });
    };
    let strings = |k: &str| -> Vec<String> {
        found[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let missing = strings("missing");
    if !missing.is_empty() {
        let fix = if missing.iter().any(|m| m.contains("module")) {
            "add `RUN python3 -m pip install ipython` to the image's Dockerfile (Debian: `apt-get install python3-ipython`), or leave out --image"
        } else {
            "add them to the image's Dockerfile, or leave out --image"
        };
        return Err(ImageError::KernelNeeds {
            image: image_name.into(),
            missing,
            fix: fix.into(),
        });
    }
    Ok(ImageReport {
        image: image_name.into(),
        python: found["python"].as_str().unwrap_or("").to_string(),
        absent_libraries: strings("absent"),
    })
}

/// An image error as the typed error front ends branch on.
impl From<ImageError> for crate::protocol::SessionError {
    fn from(e: ImageError) -> crate::protocol::SessionError {
        use crate::protocol::SessionError;
        use ImageError as E;
        let message = e.to_string();
        match e {
            E::BadPackage(_) => SessionError::BadInput { message },
            E::NoPython { .. } | E::KernelNeeds { .. } => SessionError::ImageUnusable { message },
            E::Engine { .. }
            | E::BaseMissing { .. }
            | E::BuildFailed { .. }
            | E::CaFile { .. }
            | E::NotFound { .. } => SessionError::ImageMissing { message },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_normalised() {
        let p = Packages::new(
            [
                " tabulate ",
                "scikit-learn>=1.4,<2",
                "black[jupyter]==24.1",
                "tabulate",
            ],
            [
                "fonts-noto-cjk",
                "libgomp1=12.2.0-14",
                "r-base/bookworm-backports",
            ],
        )
        .unwrap();
        assert_eq!(
            p.pip(),
            ["black[jupyter]==24.1", "scikit-learn>=1.4,<2", "tabulate"]
        );
        assert_eq!(
            p.apt(),
            [
                "fonts-noto-cjk",
                "libgomp1=12.2.0-14",
                "r-base/bookworm-backports"
            ]
        );
        for bad in [
            "",
            "tabulate; rm -rf /",
            "$(id)",
            "a`b`",
            "--index-url=http://x",
            "pkg @ http://x",
            "./local",
            "x|y",
            "a b",
            "x>",
            "==1",
            "pkg[",
            "pkg[a]]",
            "x\ny",
            "-e .",
            "a'b",
        ] {
            let e = Packages::new([bad], [] as [&str; 0]).unwrap_err();
            assert_eq!(e.manager, Manager::Pip, "{bad}");
            assert!(
                e.to_string().contains("is not a valid pip package name"),
                "{e}"
            );
        }
        for bad in [
            "", "Foo", "a", "x;y", "-y", "pkg=", "pkg/$(x)", "a&&b", "pkg name",
        ] {
            let e = Packages::new([] as [&str; 0], [bad]).unwrap_err();
            assert_eq!(e.manager, Manager::Apt, "{bad}");
        }
    }

    #[test]
    fn settings_files_cannot_smuggle_names_in() {
        let p: Packages = serde_json::from_str(r#"{"pip":["tabulate"]}"#).unwrap();
        assert_eq!(p.pip(), ["tabulate"]);
        assert!(p.apt().is_empty());
        let e = serde_json::from_str::<Packages>(r#"{"pip":["x; curl evil"]}"#).unwrap_err();
        assert!(
            e.to_string().contains("is not a valid pip package name"),
            "{e}"
        );
        let back: Packages = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn the_tag_hashes_the_base_and_the_sorted_lists() {
        let a = Packages::new(["b", "a"], ["x1"]).unwrap();
        let b = Packages::new(["a", "b", "a"], ["x1"]).unwrap();
        let t = derived_tag("sandalyst-sandbox:0123", &a);
        assert_eq!(t, derived_tag("sandalyst-sandbox:0123", &b));
        assert!(t.starts_with("sandalyst-sandbox-custom:"));
        assert_eq!(t.len(), "sandalyst-sandbox-custom:".len() + 12);
        assert_ne!(t, derived_tag("sandalyst-sandbox:4567", &a));
        // A name moved from one list to the other is another image.
        let c = Packages::new(["a", "b", "x1"], [] as [&str; 0]).unwrap();
        assert_ne!(t, derived_tag("sandalyst-sandbox:0123", &c));
    }

    #[test]
    fn the_dockerfile_passes_names_as_arguments_and_ends_as_the_sandbox_user() {
        let p = Packages::new(["tabulate>=0.9", "a==1.*"], ["fonts-noto-cjk"]).unwrap();
        let d = dockerfile("sandalyst-sandbox:abc", &p, false);
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines[0], "FROM sandalyst-sandbox:abc");
        assert_eq!(
            lines[1],
            r#"LABEL org.sandalyst.base="sandalyst-sandbox:abc" org.sandalyst.pip="[\"a==1.*\",\"tabulate>=0.9\"]" org.sandalyst.apt="[\"fonts-noto-cjk\"]" org.sandalyst.build-method=derived"#
        );
        assert_eq!(lines[2], "USER root");
        // Exec form: each RUN is a JSON array; the names are its last items.
        let runs: Vec<Vec<String>> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("RUN "))
            .map(|j| serde_json::from_str(j).unwrap())
            .collect();
        assert_eq!(runs.len(), 2, "{d}");
        assert_eq!(runs[0][..3], ["sh", "-c", INSTALL_SCRIPT]);
        assert_eq!(
            runs[0][3..],
            ["sh", "1", "fonts-noto-cjk", "a==1.*", "tabulate>=0.9"]
        );
        let user = lines.iter().position(|l| *l == "USER 1000:1000").unwrap();
        assert_eq!(user, lines.len() - 2, "{d}");
        assert_eq!(runs[1][..2], ["python3", "-c"]);
        assert!(runs[1][2].contains("import IPython"));
        assert!(!d.contains("ENTRYPOINT") && !d.contains("CMD") && !d.contains("WORKDIR"));
        assert!(!d.contains("COPY"));
        let d = dockerfile("b:1", &p, true);
        assert!(d.contains("USER root\nCOPY build-ca.pem /tmp/sandalyst-build-ca.pem\nRUN "));
    }

    /// The install script itself, under a real shell: names reach apt and pip as
    /// separate arguments, unexpanded, and pip is added when the image lacks it.
    #[cfg(unix)]
    #[test]
    fn the_install_script_splits_its_arguments() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path();
        // Fakes that record their arguments, one per line (rm too: the script's
        // clean-up must not touch this machine).
        let log_args = "printf ' <%s>' \"$@\" >> \"$LOG\"; echo >> \"$LOG\"";
        for (name, body) in [
            ("rm", format!("printf 'rm' >> \"$LOG\"; {log_args}")),
            ("mkdir", format!("printf 'mkdir' >> \"$LOG\"; {log_args}")),
            ("apt-get", format!("printf 'apt-get' >> \"$LOG\"; {log_args}")),
            (
                "python3",
                format!("[ \"$3\" = --version ] && exit 1; printf 'pip' >> \"$LOG\"; shift 2; {log_args}"),
            ),
        ] {
            let path = bin.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let log = bin.join("log");
        let out = std::process::Command::new("sh")
            .args([
                "-c",
                INSTALL_SCRIPT,
                "sh",
                "2",
                "fonts-x",
                "py*",
                "a==1.*",
                "b>=2",
            ])
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env("LOG", &log)
            .current_dir(bin)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let log = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(
            lines,
            [
                "apt-get <update> <-q>",
                // `py*` would match python3 in the working folder if it were globbed.
                "apt-get <install> <-y> <-q> <--no-install-recommends> <fonts-x> <py*> <python3-pip>",
                "apt-get <clean>",
                "rm <-rf> </var/lib/apt/lists>",
                "mkdir <-p> </var/lib/apt/lists/partial>",
                "pip <install> <--no-input> <--progress-bar> <off> <a==1.*> <b>=2>",
                "rm <-f> </tmp/sandalyst-build-ca.pem>",
            ]
        );
    }

    #[test]
    fn steps_and_tool_messages_are_read_from_the_log() {
        assert_eq!(
            parse_step("Step 3/6 : RUN [\"sh\",\"-c\",\"... pip install ...\"]"),
            Some((3, 6, "RUN [\"sh\",\"-c\",\"... pip install ...\"]"))
        );
        assert_eq!(parse_step("Successfully built 123"), None);
        assert_eq!(strip_ansi("\x1b[91mERROR: x\n\x1b[0m"), "ERROR: x\n");
        let log: Vec<String> = [
            "pip: installing no-such-package-xyz",
            "ERROR: Could not find a version that satisfies the requirement no-such-package-xyz (from versions: none)",
            "ERROR: No matching distribution found for no-such-package-xyz",
        ]
        .map(String::from)
        .to_vec();
        let m = tool_message("pip", &log).unwrap();
        assert!(m.starts_with("ERROR: Could not find a version"), "{m}");
        assert!(m.contains("No matching distribution found"), "{m}");
        let apt = [
            "Reading package lists...",
            "E: Unable to locate package nosuchpkg",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            tool_message("apt", &apt).unwrap(),
            "E: Unable to locate package nosuchpkg"
        );
    }

    #[test]
    fn errors_say_what_to_do_in_one_line() {
        let errors = [
            ImageError::NoPython {
                image: "x:1".into(),
                default: "sandalyst-sandbox:abc".into(),
            },
            ImageError::KernelNeeds {
                image: "x:1".into(),
                missing: vec!["the Python module IPython (ModuleNotFoundError)".into()],
                fix: "add ipython".into(),
            },
            ImageError::NotFound {
                image: "x:1".into(),
            },
        ];
        for e in errors {
            let s = e.to_string();
            assert_eq!(s.lines().count(), 1, "{s}");
            assert!(s.contains("x:1"), "{s}");
        }
    }
}
