//! What goes into a sandbox's workspace and what comes out of it.
//!
//! In: a [`Manifest`] of the user's files (copies are staged as `input/...`; the
//! originals are only ever read) turned into a tar *stream*, so a 1 GB file is never
//! held in memory. Out: a tar stream of `output/` unpacked by [`collect`] with every
//! entry checked: regular files and folders only, no absolute paths or `..`, size
//! and count caps; anything else is refused and reported, never written.

mod collect;
mod stream;

pub use collect::{
    choose_outputs, collect, collect_chosen, Chosen, CollectLimits, Collected, CollectedFile,
    Refused,
};
pub use stream::{ChannelReader, ChannelWriter};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use bytes::Bytes;
use futures_util::Stream;
use serde::{Deserialize, Serialize};

/// The uid/gid that owns the workspace inside the sandbox.
pub const SANDBOX_UID: u64 = crate::sandbox::image::UID as u64;

/// One file to stage: where it is on the host and where it goes under `input/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputFile {
    pub source: PathBuf,
    /// Relative path under `input/`, '/'-separated.
    pub dest: String,
    pub bytes: u64,
}

/// How an input reached `input/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StagingMethod {
    /// The host file itself, bind-mounted read-only (zero copy; local engines only).
    BindMount,
    /// Copied into the workspace as a tar stream through the Engine API.
    Copy,
}

impl std::fmt::Display for StagingMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StagingMethod::BindMount => "bind mount",
            StagingMethod::Copy => "copy",
        })
    }
}

/// Why an input was copied rather than bind-mounted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CopyReason {
    /// `SANDALYST_STAGING=copy` or the sandbox setting `staging: copy`.
    Forced,
    /// The engine is not reached over a local unix socket (TCP, SSH, a named pipe).
    RemoteEngine,
    /// The engine runs in a VM (Docker Desktop, Colima, Rancher Desktop) or is one
    /// whose bind mounts are not known to behave (Podman, unknown engines).
    EngineNotSupported,
    /// The engine, though local, saw a different file at the host path (e.g. this
    /// process runs in a container next to the engine).
    EngineSeesOtherFiles,
    /// Other users may not read the file: the sandbox's user could not either.
    NotWorldReadable,
    /// Not a regular file (a device, a pipe).
    NotRegularFile,
    /// Small enough that copying costs nothing worth a mount.
    Small,
    /// More inputs than the mounts a container is given; the smallest are copied.
    TooManyFiles,
    /// Added to a running sandbox, which cannot get new mounts.
    AddedLater,
    /// Restored from the workspace archive of an earlier container.
    Restored,
}

impl std::fmt::Display for CopyReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CopyReason::Forced => "copy forced by SANDALYST_STAGING=copy or the staging setting",
            CopyReason::RemoteEngine => "the engine is not on a local unix socket",
            CopyReason::EngineNotSupported => {
                "the engine runs in a VM or is not Docker Engine (Podman, Docker Desktop)"
            }
            CopyReason::EngineSeesOtherFiles => "the engine saw a different file at that path",
            CopyReason::NotWorldReadable => "the file is not readable by other users",
            CopyReason::NotRegularFile => "not a regular file",
            CopyReason::Small => "small file",
            CopyReason::TooManyFiles => "more files than bind mounts allowed",
            CopyReason::AddedLater => "added to a running sandbox",
            CopyReason::Restored => "restored from the workspace archive",
        })
    }
}

/// How one input was staged, as a sandbox reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StagedInput {
    /// Relative to `input/`.
    pub dest: String,
    pub method: StagingMethod,
    pub bytes: u64,
    /// Set when `method` is `Copy`.
    pub reason: Option<CopyReason>,
}

/// Which staging a sandbox may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StagingMode {
    /// Bind mounts where the engine and the file allow them, copies otherwise.
    #[default]
    Auto,
    /// Always copy (as for a remote engine).
    Copy,
}

impl StagingMode {
    /// The setting, unless `SANDALYST_STAGING` (`copy` or `auto`) overrides it.
    pub fn from_env_or(self, env: Option<&str>) -> StagingMode {
        match env.map(str::trim) {
            Some(v) if v.eq_ignore_ascii_case("copy") => StagingMode::Copy,
            Some(v) if v.eq_ignore_ascii_case("auto") => StagingMode::Auto,
            _ => self,
        }
    }
}

/// The typed list of what a run stages into its workspace.
#[derive(Clone, Debug, Default)]
pub struct Manifest {
    pub inputs: Vec<InputFile>,
}

impl Manifest {
    /// Build a manifest from user-given paths: a file goes to `input/<name>`, a folder's
    /// files to `input/<folder>/<relative path>`. Every file is opened now, so an
    /// unreadable input fails before any container exists.
    pub fn from_paths(paths: &[PathBuf]) -> anyhow::Result<Manifest> {
        let mut inputs = Vec::new();
        for path in paths {
            let meta = std::fs::metadata(path)
                .with_context(|| format!("cannot read input {}", path.display()))?;
            let name = file_name(path)?;
            if meta.is_dir() {
                add_dir(path, &name, &mut inputs)?;
            } else {
                inputs.push(input_file(path, name)?);
            }
        }
        let mut seen = BTreeSet::new();
        for f in &inputs {
            if !seen.insert(f.dest.as_str()) {
                bail!(
                    "two inputs would both be staged as input/{}; rename one of them",
                    f.dest
                );
            }
        }
        Ok(Manifest { inputs })
    }

    /// A manifest of files already named (a session's inputs staged again): each
    /// `(source, dest)` is a file read now and staged as `input/<dest>`.
    pub fn from_named(files: &[(PathBuf, String)]) -> anyhow::Result<Manifest> {
        let inputs = files
            .iter()
            .map(|(source, dest)| input_file(source, dest.clone()))
            .collect::<anyhow::Result<_>>()?;
        Ok(Manifest { inputs })
    }

    pub fn total_bytes(&self) -> u64 {
        self.inputs.iter().map(|f| f.bytes).sum()
    }

    /// The workspace as a tar stream: `input/` with the staged files and an empty
    /// `output/`, all owned by the sandbox user. Files are read in chunks as the
    /// stream is consumed.
    pub fn tar_stream(&self) -> impl Stream<Item = std::io::Result<Bytes>> + Send + 'static {
        let inputs = self.inputs.clone();
        let (writer, stream) = ChannelWriter::pair(8);
        let fail = writer.failer();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = write_tar(writer, &inputs) {
                fail(e);
            }
        });
        stream
    }
}

fn file_name(path: &Path) -> anyhow::Result<String> {
    let canonical = path
        .canonicalize()
        .with_context(|| format!("cannot read input {}", path.display()))?;
    canonical
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned)
        .with_context(|| format!("input {} has no usable file name", path.display()))
}

fn input_file(source: &Path, dest: String) -> anyhow::Result<InputFile> {
    let file = std::fs::File::open(source)
        .with_context(|| format!("cannot read input {}", source.display()))?;
    let bytes = file.metadata()?.len();
    Ok(InputFile {
        source: source.to_path_buf(),
        dest,
        bytes,
    })
}

fn add_dir(dir: &Path, prefix: &str, out: &mut Vec<InputFile>) -> anyhow::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read input folder {}", dir.display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let ty = entry.file_type()?;
        let dest = format!("{prefix}/{name}");
        if ty.is_dir() {
            add_dir(&entry.path(), &dest, out)?;
        } else if ty.is_file() {
            out.push(input_file(&entry.path(), dest)?);
        }
        // Symlinks inside a staged folder are skipped: they may point anywhere.
    }
    Ok(())
}

fn write_tar(writer: ChannelWriter, inputs: &[InputFile]) -> std::io::Result<()> {
    let mut tar = tar::Builder::new(writer);
    let mut dirs = BTreeSet::new();
    dirs.insert("input".to_string());
    dirs.insert("output".to_string());
    for f in inputs {
        let mut path = Path::new("input").join(&f.dest);
        while let Some(parent) = path.parent() {
            if parent.as_os_str().is_empty() {
                break;
            }
            dirs.insert(parent.to_string_lossy().into_owned());
            path = parent.to_path_buf();
        }
    }
    for dir in &dirs {
        let mut h = header(tar::EntryType::Directory, 0o755, 0);
        tar.append_data(&mut h, format!("{dir}/"), std::io::empty())?;
    }
    for f in inputs {
        let file = std::fs::File::open(&f.source)?;
        let len = file.metadata()?.len();
        let mut h = header(tar::EntryType::Regular, 0o644, len);
        // A file that grows while being staged is cut at the size it had when opened.
        tar.append_data(
            &mut h,
            format!("input/{}", f.dest),
            std::io::Read::take(file, len),
        )?;
    }
    tar.into_inner()?.finish();
    Ok(())
}

fn header(kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_uid(SANDBOX_UID);
    h.set_gid(SANDBOX_UID);
    h.set_mtime(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    );
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    #[tokio::test]
    async fn folder_inputs_keep_their_structure_and_tar_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(data.join("sub")).unwrap();
        std::fs::write(data.join("a.csv"), "x,y\n1,2\n").unwrap();
        std::fs::write(data.join("sub/b.txt"), "hello").unwrap();
        std::fs::write(data.join(".hidden"), "no").unwrap();
        let m = Manifest::from_paths(&[data]).unwrap();
        let dests: Vec<_> = m.inputs.iter().map(|f| f.dest.as_str()).collect();
        assert_eq!(dests, ["data/a.csv", "data/sub/b.txt"]);

        let mut bytes = Vec::new();
        let mut s = Box::pin(m.tar_stream());
        while let Some(chunk) = s.next().await {
            bytes.extend_from_slice(&chunk.unwrap());
        }
        let mut ar = tar::Archive::new(&bytes[..]);
        let names: Vec<String> = ar
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        assert!(names.contains(&"input/data/sub/b.txt".to_string()));
        assert!(names.contains(&"output/".to_string()));
    }

    #[test]
    fn the_environment_can_force_copies() {
        assert_eq!(StagingMode::Auto.from_env_or(None), StagingMode::Auto);
        assert_eq!(
            StagingMode::Auto.from_env_or(Some("copy")),
            StagingMode::Copy
        );
        assert_eq!(
            StagingMode::Auto.from_env_or(Some(" COPY ")),
            StagingMode::Copy
        );
        assert_eq!(
            StagingMode::Copy.from_env_or(Some("auto")),
            StagingMode::Auto
        );
        assert_eq!(
            StagingMode::Copy.from_env_or(Some("other")),
            StagingMode::Copy
        );
        let json = serde_json::to_string(&CopyReason::NotWorldReadable).unwrap();
        assert_eq!(json, "\"not_world_readable\"");
    }

    #[test]
    fn missing_input_is_a_clear_error() {
        let err = Manifest::from_paths(&[PathBuf::from("/nonexistent/x.csv")]).unwrap_err();
        assert!(format!("{err:#}").contains("cannot read input /nonexistent/x.csv"));
    }

    #[test]
    fn duplicate_destinations_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["a", "b"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
            std::fs::write(dir.path().join(sub).join("x.csv"), "1").unwrap();
        }
        let err = Manifest::from_paths(&[dir.path().join("a/x.csv"), dir.path().join("b/x.csv")])
            .unwrap_err();
        assert!(err.to_string().contains("input/x.csv"));
    }
}
