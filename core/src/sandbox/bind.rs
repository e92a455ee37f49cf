//! Zero-copy staging: which inputs a sandbox gets as read-only bind mounts, planned
//! here; the mounts in the engine's terms, and the check of what it made, are the
//! Docker backend's (`docker::bind`).
//!
//! On a local Docker Engine (a unix socket, not Podman, not an engine in a VM) a
//! world-readable regular file of at least [`BIND_MIN_BYTES`] is bind-mounted
//! read-only at `BOUND_DIR/<n>/<name>` and `input/<dest>` is a root-owned symlink to
//! it, so a 1 GB input costs a mount instead of a 1 GB copy. Everything else (remote
//! engines, files added to a running sandbox, unreadable or small files) is copied
//! as before; [`Plan::report`] says which path each input took and why.
//!
//! Why a symlink and not a mount at `input/<dest>` itself: a mount point cannot be
//! unlinked, so a removed input would stay visible. Removing the symlink and closing
//! its folder (`chmod 000`, root's in the sticky /tmp) hides the file for good.

use std::path::{Path, PathBuf};

use crate::workspace::{CopyReason, InputFile, Manifest, StagedInput, StagingMethod, StagingMode};

/// Where bind-mounted inputs live in the container: outside `/workspace`, so the
/// workspace archive does not carry them twice, and in the sticky /tmp, where the
/// sandbox user cannot rename or remove root's folders.
pub(crate) const BOUND_DIR: &str = "/tmp/.sandalyst-inputs";
/// Smaller files are copied: the copy is as cheap as the mount.
pub(crate) const BIND_MIN_BYTES: u64 = 1 << 20;
/// At most this many mounts per container (the largest files get them): thousands
/// of mounts would slow the start down more than copying small files does.
pub(crate) const BIND_MAX_FILES: usize = 32;

/// What identifies a host file's content cheaply: a change to any of these means
/// the sandbox no longer sees what was staged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileId {
    pub size: u64,
    pub mtime_ns: i128,
    pub ino: u64,
}

#[cfg(unix)]
pub(crate) fn file_id(meta: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    FileId {
        size: meta.len(),
        mtime_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
        ino: meta.ino(),
    }
}

#[cfg(not(unix))]
pub(crate) fn file_id(meta: &std::fs::Metadata) -> FileId {
    FileId {
        size: meta.len(),
        mtime_ns: 0,
        ino: 0,
    }
}

/// An input bind-mounted read-only into the container.
#[derive(Clone, Debug)]
pub(crate) struct Bound {
    /// Relative to `input/`.
    pub dest: String,
    /// The canonical host path.
    pub source: PathBuf,
    /// `BOUND_DIR/<n>/<file name>` in the container.
    pub target: String,
    /// The host file when it was planned.
    pub id: FileId,
    /// Still what `input/<dest>` shows (not removed, not replaced by a copy).
    pub live: bool,
}

impl Bound {
    /// The folder of the mount, closed when the input is removed.
    pub fn folder(&self) -> &str {
        self.target
            .rsplit_once('/')
            .map(|(d, _)| d)
            .unwrap_or(&self.target)
    }

    /// The host file as it is now, when it is no longer what was last seen (`None`
    /// inside when it is gone).
    pub fn changed(&self) -> Option<Option<FileId>> {
        let now = std::fs::metadata(&self.source).ok().map(|m| file_id(&m));
        (now != Some(self.id)).then_some(now)
    }
}

/// How a manifest is staged: what is mounted, what is copied, and the report.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub binds: Vec<Bound>,
    pub copies: Manifest,
    pub report: Vec<StagedInput>,
}

impl Plan {
    /// Everything copied, for `reason`.
    pub fn copy_all(manifest: &Manifest, reason: CopyReason) -> Plan {
        Plan {
            binds: Vec::new(),
            copies: manifest.clone(),
            report: manifest.inputs.iter().map(|f| copied(f, reason)).collect(),
        }
    }
}

fn copied(f: &InputFile, reason: CopyReason) -> StagedInput {
    StagedInput {
        dest: f.dest.clone(),
        method: StagingMethod::Copy,
        bytes: f.bytes,
        reason: Some(reason),
    }
}

/// The staging mode in force: the setting, or `SANDALYST_STAGING` over it.
pub(crate) fn mode(setting: StagingMode) -> StagingMode {
    setting.from_env_or(std::env::var("SANDALYST_STAGING").ok().as_deref())
}

/// A file that may be bind-mounted: its canonical path and identity; else why not.
type Verdict = Result<(PathBuf, FileId), CopyReason>;

fn file_allows_bind(f: &InputFile) -> Verdict {
    let source = f
        .source
        .canonicalize()
        .map_err(|_| CopyReason::NotRegularFile)?;
    let meta = std::fs::metadata(&source).map_err(|_| CopyReason::NotRegularFile)?;
    if !meta.is_file() {
        return Err(CopyReason::NotRegularFile);
    }
    if meta.len() < BIND_MIN_BYTES {
        return Err(CopyReason::Small);
    }
    // The sandbox's uid is not the host user's (or is, by chance): only "others"
    // may be relied on to read it.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o004 == 0 {
            return Err(CopyReason::NotWorldReadable);
        }
    }
    Ok((source, file_id(&meta)))
}

/// Split `manifest` into mounts and copies. `engine` is `Err` when the engine cannot
/// take bind mounts (then everything is copied for that reason).
pub(crate) fn plan(manifest: &Manifest, engine: Result<(), CopyReason>) -> Plan {
    if let Err(reason) = engine {
        return Plan::copy_all(manifest, reason);
    }
    let mut verdicts: Vec<(usize, Verdict)> = manifest
        .inputs
        .iter()
        .enumerate()
        .map(|(i, f)| (i, file_allows_bind(f)))
        .collect();
    // The largest files get the mounts when there are more candidates than mounts.
    let mut candidates: Vec<usize> = verdicts
        .iter()
        .filter(|(_, v)| v.is_ok())
        .map(|(i, _)| *i)
        .collect();
    candidates.sort_by_key(|&i| std::cmp::Reverse(manifest.inputs[i].bytes));
    for &i in candidates.iter().skip(BIND_MAX_FILES) {
        verdicts[i].1 = Err(CopyReason::TooManyFiles);
    }
    let mut plan = Plan::default();
    for (i, verdict) in verdicts {
        let f = &manifest.inputs[i];
        match verdict {
            Ok((source, id)) => {
                let name = Path::new(&f.dest)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "input".into());
                plan.binds.push(Bound {
                    dest: f.dest.clone(),
                    target: format!("{BOUND_DIR}/{}/{name}", plan.binds.len()),
                    source,
                    id,
                    live: true,
                });
                plan.report.push(StagedInput {
                    dest: f.dest.clone(),
                    method: StagingMethod::BindMount,
                    bytes: id.size,
                    reason: None,
                });
            }
            Err(reason) => {
                plan.copies.inputs.push(f.clone());
                plan.report.push(copied(f, reason));
            }
        }
    }
    plan
}

/// `stat -L -c '%s %Y %i'` lines of the mounted files, checked against the host
/// files: a local socket does not prove that the engine sees this machine's files
/// (this process may run in a container next to the engine).
/// `with_inode`: gVisor numbers the files it shows itself, so there the size and
/// the time must do.
pub(crate) fn same_files(binds: &[Bound], stat: &str, with_inode: bool) -> bool {
    let lines: Vec<&str> = stat.lines().collect();
    lines.len() == binds.len()
        && binds.iter().zip(lines).all(|(b, line)| {
            let f: Vec<&str> = line.split_whitespace().collect();
            f.len() == 3
                && f[0].parse() == Ok(b.id.size)
                && f[1].parse::<i128>().ok() == Some(b.id.mtime_ns.div_euclid(1_000_000_000))
                && (!with_inode || f[2].parse() == Ok(b.id.ino))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(dir: &Path, name: &str, bytes: usize, mode: u32) -> InputFile {
        let path = dir.join(name);
        std::fs::write(&path, vec![b'x'; bytes]).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        InputFile {
            source: path,
            dest: format!("d/{name}"),
            bytes: bytes as u64,
        }
    }

    #[test]
    fn only_large_world_readable_files_are_mounted_when_the_engine_allows() {
        let dir = tempfile::tempdir().unwrap();
        let big = 2 << 20;
        let m = Manifest {
            inputs: vec![
                input(dir.path(), "big.csv", big, 0o644),
                input(dir.path(), "small.csv", 10, 0o644),
                input(dir.path(), "private.csv", big, 0o600),
            ],
            ..Manifest::default()
        };
        let p = plan(&m, Ok(()));
        assert_eq!(p.binds.len(), 1);
        let b = &p.binds[0];
        assert_eq!(b.target, format!("{BOUND_DIR}/0/big.csv"));
        assert_eq!(b.folder(), format!("{BOUND_DIR}/0"));
        assert_eq!(b.changed(), None);
        let reasons: Vec<_> = p.report.iter().map(|r| (r.method, r.reason)).collect();
        assert_eq!(
            reasons,
            [
                (StagingMethod::BindMount, None),
                (StagingMethod::Copy, Some(CopyReason::Small)),
                (StagingMethod::Copy, Some(CopyReason::NotWorldReadable)),
            ]
        );
        let copied: Vec<_> = p.copies.inputs.iter().map(|f| f.dest.as_str()).collect();
        assert_eq!(copied, ["d/small.csv", "d/private.csv"]);

        let p = plan(&m, Err(CopyReason::RemoteEngine));
        assert!(p.binds.is_empty() && p.copies.inputs.len() == 3);
        assert!(p
            .report
            .iter()
            .all(|r| r.reason == Some(CopyReason::RemoteEngine)));

        std::fs::write(&m.inputs[0].source, "changed").unwrap();
        assert_eq!(b.changed().unwrap().unwrap().size, 7);
    }

    #[test]
    fn the_largest_files_get_the_mounts() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = (0..BIND_MAX_FILES + 2)
            .map(|i| input(dir.path(), &format!("f{i}"), (1 << 20) + i, 0o644))
            .collect();
        let p = plan(
            &Manifest {
                inputs,
                ..Manifest::default()
            },
            Ok(()),
        );
        assert_eq!(p.binds.len(), BIND_MAX_FILES);
        let too_many: Vec<_> = p
            .report
            .iter()
            .filter(|r| r.reason == Some(CopyReason::TooManyFiles))
            .map(|r| r.dest.as_str())
            .collect();
        assert_eq!(too_many, ["d/f0", "d/f1"]);
    }

    #[test]
    fn mounted_files_are_told_by_size_time_and_inode() {
        let b = Bound {
            dest: "x.csv".into(),
            source: "/data/x.csv".into(),
            target: format!("{BOUND_DIR}/0/x.csv"),
            id: FileId {
                size: 5,
                mtime_ns: 1_500_000_000_123,
                ino: 42,
            },
            live: true,
        };
        assert!(same_files(std::slice::from_ref(&b), "5 1500 42\n", true));
        assert!(!same_files(std::slice::from_ref(&b), "5 1500 43\n", true));
        assert!(!same_files(std::slice::from_ref(&b), "", true));
        // Under gVisor the inode is gVisor's own: size and time decide.
        assert!(same_files(std::slice::from_ref(&b), "5 1500 7\n", false));
        assert!(!same_files(std::slice::from_ref(&b), "6 1500 42\n", false));
    }
}
