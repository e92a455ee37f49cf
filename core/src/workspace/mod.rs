//! What goes into a sandbox's workspace and what comes out of it.
//!
//! In: a [`Manifest`] of the user's files (copies are staged as `input/...`; the
//! originals are only ever read) turned into a tar *stream*, so a 1 GB file is never
//! held in memory. Out: a tar stream of `output/` unpacked by [`collect`] with every
//! entry checked: regular files and folders only, no absolute paths or `..`, size
//! and count caps; anything else is refused and reported, never written. The same
//! module (`extract`) checks the live copies made while a call runs.

mod extract;
pub mod inputs;
mod stream;

pub use extract::{
    choose_outputs, collect, collect_chosen, keep_live_copy, Chosen, CollectLimits, Collected,
    CollectedFile, Refused,
};
pub use inputs::{open_input, FollowLinks, InputNote, Kind, Refusal};
pub use stream::{ChannelReader, ChannelWriter};

use inputs::Entry;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use bytes::Bytes;
use futures_util::Stream;
use serde::{Deserialize, Serialize};

/// The uid/gid that owns the workspace inside the sandbox.
pub const SANDBOX_UID: u64 = 1000;

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
    /// What the user is told about the folders' entries: links followed, entries left out.
    pub notes: Vec<InputNote>,
}

impl Manifest {
    /// Build a manifest from user-given paths: a file goes to `input/<name>`, a folder's
    /// files to `input/<folder>/<relative path>`. Each path is classified before it is
    /// opened ([`inputs`]): a given path that is not a regular file or folder is refused
    /// ([`Refusal`]); inside a folder, links are followed or left out and unsuitable
    /// entries left out, each with a [`InputNote`]. Links inside a folder are followed
    /// only to targets inside it ([`FollowLinks::Inside`]). Every file is opened
    /// (without blocking) now, so an unreadable input fails before any container
    /// exists. Blocking: call it off the async runtime.
    pub fn from_paths(paths: &[PathBuf]) -> anyhow::Result<Manifest> {
        Manifest::from_paths_following(paths, FollowLinks::default())
    }

    /// [`Manifest::from_paths`], with the links inside folders followed as `follow` says.
    pub fn from_paths_following(
        paths: &[PathBuf],
        follow: FollowLinks,
    ) -> anyhow::Result<Manifest> {
        let mut m = Manifest::default();
        for path in paths {
            let (kind, _) = inputs::classify_top(path)?;
            let name = file_name(path)?;
            if kind == Kind::Dir {
                let root = path
                    .canonicalize()
                    .with_context(|| format!("cannot read input {}", path.display()))?;
                let mut walk = Walk {
                    walking: vec![root.clone()],
                    follow,
                    hidden: Vec::new(),
                    bad_names: 0,
                    out: &mut m,
                };
                walk.dir(&root, &name, true)?;
                let (hidden, bad_names) = (walk.hidden, walk.bad_names);
                if !hidden.is_empty() {
                    m.notes.push(InputNote::HiddenLeftOut {
                        folder: name.clone(),
                        names: hidden,
                    });
                }
                if bad_names > 0 {
                    m.notes.push(InputNote::BadNamesLeftOut {
                        folder: name.clone(),
                        count: bad_names,
                    });
                }
            } else {
                m.inputs.push(input_file(path, name)?);
            }
        }
        let mut seen = BTreeSet::new();
        for f in &m.inputs {
            if !seen.insert(f.dest.as_str()) {
                bail!(
                    "two inputs would both be staged as input/{}; rename one of them",
                    f.dest
                );
            }
        }
        Ok(m)
    }

    /// A manifest of files already named (a session's inputs staged again): each
    /// `(source, dest)` is a file checked and opened now (without blocking) and staged
    /// as `input/<dest>`. Blocking: call it off the async runtime.
    pub fn from_named(files: &[(PathBuf, String)]) -> anyhow::Result<Manifest> {
        let inputs = files
            .iter()
            .map(|(source, dest)| {
                inputs::classify_top(source)?;
                input_file(source, dest.clone())
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Manifest {
            inputs,
            notes: Vec::new(),
        })
    }

    pub fn total_bytes(&self) -> u64 {
        self.inputs.iter().map(|f| f.bytes).sum()
    }

    /// The notes said to the user, at most `max` of them and a count of the rest
    /// ([`InputNote::MoreNotes`]: a folder of thousands of links is not thousands of
    /// lines).
    pub fn notes_said(&self, max: usize) -> Vec<InputNote> {
        let mut notes: Vec<InputNote> = self.notes.iter().take(max).cloned().collect();
        if self.notes.len() > max {
            notes.push(InputNote::MoreNotes {
                count: self.notes.len() - max,
            });
        }
        notes
    }

    /// [`Manifest::notes_said`] as the lines the command line prints.
    pub fn note_lines(&self, max: usize) -> Vec<String> {
        self.notes_said(max).iter().map(|n| n.to_string()).collect()
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
    let (_, meta) = open_input(source)?;
    Ok(InputFile {
        source: source.to_path_buf(),
        dest,
        bytes: meta.len(),
    })
}

/// One input folder being walked.
struct Walk<'a> {
    /// The folders being walked, canonical: the one given first, the one listed now last.
    walking: Vec<PathBuf>,
    follow: FollowLinks,
    /// Hidden entries left out, as `input/` paths.
    hidden: Vec<String>,
    bad_names: usize,
    out: &'a mut Manifest,
}

impl Walk<'_> {
    /// Stage the folder `dir` (canonically the last of `walking`) as `input/<prefix>`. A
    /// folder that cannot be listed fails the add when it is the one given (`given`),
    /// and is left out with a note when it is inside it.
    fn dir(&mut self, dir: &Path, prefix: &str, given: bool) -> anyhow::Result<()> {
        let listed = std::fs::read_dir(dir).and_then(|r| r.collect::<Result<Vec<_>, _>>());
        let mut entries = match listed {
            Ok(e) => e,
            Err(e) if given => {
                return Err(e)
                    .with_context(|| format!("cannot read input folder {}", dir.display()))
            }
            Err(e) => {
                self.left_out(
                    prefix,
                    inputs::Why::Unreadable {
                        reason: e.to_string(),
                    },
                );
                return Ok(());
            }
        };
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                self.bad_names += 1;
                continue;
            };
            let dest = format!("{prefix}/{name}");
            if name.starts_with('.') {
                self.hidden.push(dest);
                continue;
            }
            // lstat: what the entry itself is, links not followed, nothing opened.
            let ty = match entry.file_type() {
                Ok(t) => t,
                Err(e) => {
                    self.left_out(
                        &dest,
                        inputs::Why::Unreadable {
                            reason: e.to_string(),
                        },
                    );
                    continue;
                }
            };
            let path = entry.path();
            match inputs::classify_entry(&path, ty, &self.walking, self.follow) {
                Ok(Entry::File) => self.file(&path, dest),
                Ok(Entry::Dir) => {
                    let here = self.walking.last().map(|h| h.join(&name));
                    self.walk_into(&path, here.unwrap_or_default(), &dest)?
                }
                Ok(Entry::Link { target, kind }) => {
                    self.out.notes.push(InputNote::LinkFollowed {
                        dest: dest.clone(),
                        target: target.clone(),
                    });
                    if kind == Kind::Dir {
                        self.walk_into(&target, target.clone(), &dest)?;
                    } else {
                        self.file(&target, dest);
                    }
                }
                Err(why) => self.left_out(&dest, why),
            }
        }
        Ok(())
    }

    /// Stage the folder `dir` inside the one being walked, canonically `here`.
    fn walk_into(&mut self, dir: &Path, here: PathBuf, prefix: &str) -> anyhow::Result<()> {
        self.walking.push(here);
        let walked = self.dir(dir, prefix, false);
        self.walking.pop();
        walked
    }

    fn file(&mut self, source: &Path, dest: String) {
        match open_input(source) {
            Ok((_, meta)) => self.out.inputs.push(InputFile {
                source: source.to_path_buf(),
                dest,
                bytes: meta.len(),
            }),
            Err(r) => self.left_out(&dest, r.why),
        }
    }

    fn left_out(&mut self, dest: &str, why: inputs::Why) {
        self.out.notes.push(why.note(dest.to_string()));
    }
}

/// `top` and every folder above the files `rels` (relative to `top`), for the folder
/// entries a tar of those files needs first.
pub(crate) fn folders_of<'a>(top: &str, rels: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    let mut dirs = BTreeSet::from([top.to_string()]);
    for rel in rels {
        let mut path = Path::new(top).join(rel);
        while let Some(parent) = path.parent() {
            if parent.as_os_str().is_empty() {
                break;
            }
            dirs.insert(parent.to_string_lossy().into_owned());
            path = parent.to_path_buf();
        }
    }
    dirs
}

fn write_tar(writer: ChannelWriter, inputs: &[InputFile]) -> std::io::Result<()> {
    let mut tar = tar::Builder::new(writer);
    let mut dirs = folders_of("input", inputs.iter().map(|f| f.dest.as_str()));
    dirs.insert("output".to_string());
    for dir in &dirs {
        let mut h = header(tar::EntryType::Directory, 0o755, 0);
        tar.append_data(&mut h, format!("{dir}/"), std::io::empty())?;
    }
    for f in inputs {
        let (file, meta) = open_input(&f.source).map_err(std::io::Error::other)?;
        let len = meta.len();
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

    #[cfg(unix)]
    #[test]
    fn a_folder_says_what_it_followed_and_what_it_left_out() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.csv"), "1,2\n").unwrap();
        std::fs::create_dir(outside.path().join("more")).unwrap();
        std::fs::write(outside.path().join("more/y.csv"), "3\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let docs = dir.path().join("docs");
        std::fs::create_dir(&docs).unwrap();
        std::fs::write(docs.join("a.csv"), "a\n").unwrap();
        std::fs::write(docs.join(".DS_Store"), "").unwrap();
        symlink(outside.path().join("x.csv"), docs.join("latest.csv")).unwrap();
        symlink(outside.path().join("more"), docs.join("more")).unwrap();
        symlink("/nonexistent/z.csv", docs.join("gone.csv")).unwrap();
        symlink("/dev/zero", docs.join("zero")).unwrap();
        // Links that leave the folder are followed only when the user said so.
        let m = Manifest::from_paths_following(std::slice::from_ref(&docs), FollowLinks::Outside)
            .unwrap();
        let dests: Vec<_> = m.inputs.iter().map(|f| f.dest.as_str()).collect();
        assert_eq!(dests, ["docs/a.csv", "docs/latest.csv", "docs/more/y.csv"]);
        assert_eq!(m.inputs[1].bytes, 4);
        let lines = m.note_lines(10);
        let x = outside.path().canonicalize().unwrap().join("x.csv");
        assert!(
            lines.contains(&format!(
                "input/docs/latest.csv -> {} (a link, followed)",
                x.display()
            )),
            "{lines:?}"
        );
        assert!(lines.contains(
            &"left out input/docs/gone.csv: it is a link to /nonexistent/z.csv, which does not exist".to_string()
        ), "{lines:?}");
        assert!(
            lines.iter().any(|l| l.starts_with(
                "left out input/docs/zero: it is a link to /dev/zero, which is a character device"
            )),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("1 hidden entry") && l.contains("docs/.DS_Store")),
            "{lines:?}"
        );
        assert_eq!(m.note_lines(1).len(), 2);
        assert_eq!(
            m.notes_said(1)[1],
            InputNote::MoreNotes {
                count: m.notes.len() - 1
            }
        );
    }

    /// A dropped folder with links to a secret of the system, to a key in the user's
    /// home, to a CSV elsewhere and to a sibling: only the sibling is staged, and
    /// each link left out is named with how to include it.
    #[cfg(unix)]
    #[test]
    fn links_that_leave_a_dropped_folder_are_left_out_and_said() {
        use std::os::unix::fs::symlink;
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".ssh")).unwrap();
        let key = home.path().join(".ssh/id_ed25519");
        std::fs::write(&key, "-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let csv = elsewhere.path().join("sales.csv");
        std::fs::write(&csv, "region,units\nCentro,3\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let docs = dir.path().join("docs");
        std::fs::create_dir_all(docs.join("sub")).unwrap();
        std::fs::write(docs.join("a.csv"), "a\n").unwrap();
        std::fs::write(docs.join(".env"), "TOKEN=1\n").unwrap();
        symlink("/etc/shadow", docs.join("shadow")).unwrap();
        symlink(&key, docs.join("key")).unwrap();
        symlink(&csv, docs.join("sales.csv")).unwrap();
        symlink("a.csv", docs.join("alias.csv")).unwrap();
        symlink("../a.csv", docs.join("sub/up.csv")).unwrap();
        symlink(".env", docs.join("env.txt")).unwrap();

        let m = Manifest::from_paths(std::slice::from_ref(&docs)).unwrap();
        let staged: Vec<(&str, &Path)> = m
            .inputs
            .iter()
            .map(|f| (f.dest.as_str(), f.source.as_path()))
            .collect();
        let a = docs.canonicalize().unwrap().join("a.csv");
        assert_eq!(
            staged,
            [
                ("docs/a.csv", docs.join("a.csv").as_path()),
                ("docs/alias.csv", a.as_path()),
                ("docs/sub/up.csv", a.as_path()),
            ]
        );
        // Typed: the link, its target, why, and how it can be included.
        assert!(
            m.notes.contains(&InputNote::LinkLeftOut {
                dest: "docs/shadow".into(),
                target: "/etc/shadow".into(),
                why: crate::protocol::LinkProblem::Outside,
                include: vec![
                    crate::protocol::Include::AddTarget,
                    crate::protocol::Include::FollowLinksOutside
                ],
            }),
            "{:#?}",
            m.notes
        );
        let lines = m.note_lines(20);
        for (name, target) in [
            ("shadow", PathBuf::from("/etc/shadow")),
            ("key", key.canonicalize().unwrap()),
            ("sales.csv", csv.canonicalize().unwrap()),
        ] {
            let said = format!(
                "left out input/docs/{name}: it is a link to {}, outside the folder; links that leave a dropped folder are not followed (to include it, add the target itself, or set follow_links = \"outside\" in config.toml",
                target.display()
            );
            assert!(
                lines.iter().any(|l| l.starts_with(&said)),
                "{said}\n{lines:#?}"
            );
        }
        assert!(
            lines.iter().any(
                |l| l.starts_with("left out input/docs/env.txt: it is a link to")
                    && l.ends_with("a hidden entry of the folder (hidden entries are not staged)")
            ),
            "{lines:#?}"
        );
        assert!(
            lines.contains(&format!(
                "input/docs/alias.csv -> {} (a link, followed)",
                a.display()
            )),
            "{lines:#?}"
        );

        // With links outside allowed, the CSV elsewhere comes in; a link dropped
        // directly is followed either way.
        let all = Manifest::from_paths_following(std::slice::from_ref(&docs), FollowLinks::Outside)
            .unwrap();
        assert!(all.inputs.iter().any(|f| f.dest == "docs/sales.csv"));
        let direct = Manifest::from_paths(&[docs.join("sales.csv")]).unwrap();
        assert_eq!(direct.inputs[0].dest, "sales.csv");
        assert_eq!(direct.inputs[0].bytes, 22);
    }

    /// Two folders whose links lead to each other are walked once each, not forever.
    #[cfg(unix)]
    #[test]
    fn folders_that_link_to_each_other_are_a_loop() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let docs = dir.path().join("docs");
        for d in ["x", "y"] {
            std::fs::create_dir_all(docs.join(d)).unwrap();
            std::fs::write(docs.join(d).join("f.csv"), "1\n").unwrap();
        }
        symlink("../y", docs.join("x/to_y")).unwrap();
        symlink("../x", docs.join("y/to_x")).unwrap();
        let m = Manifest::from_paths(std::slice::from_ref(&docs)).unwrap();
        let dests: Vec<_> = m.inputs.iter().map(|f| f.dest.as_str()).collect();
        assert_eq!(
            dests,
            [
                "docs/x/f.csv",
                "docs/x/to_y/f.csv",
                "docs/y/f.csv",
                "docs/y/to_x/f.csv"
            ]
        );
        let loops = m
            .note_lines(20)
            .into_iter()
            .filter(|l| l.ends_with("which leads back to itself (a loop)"))
            .count();
        assert_eq!(loops, 2, "{:#?}", m.note_lines(20));
    }

    #[cfg(unix)]
    #[test]
    fn a_special_file_given_is_refused_and_typed() {
        let err = Manifest::from_paths(&[PathBuf::from("/dev/zero")]).unwrap_err();
        let refusal = err.downcast_ref::<Refusal>().expect("typed");
        assert_eq!(refusal.path, Path::new("/dev/zero"));
        assert_eq!(
            err.to_string(),
            "input /dev/zero is a character device; only regular files and folders can be staged"
        );
        let named = Manifest::from_named(&[("/dev/zero".into(), "zero".into())]).unwrap_err();
        assert!(named.downcast_ref::<Refusal>().is_some());
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
