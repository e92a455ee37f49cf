//! What the host still has of a session's workspace, and what the model is told
//! about it: the host's copy of `output/` (the session's `outputs/`) is the record
//! that survives a lost or stale archive, and it is never replaced by less.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::SystemTime;

use crate::store::ArchiveIndex;
use crate::workspace::CollectedFile;

/// One file of the session's `outputs/`.
#[derive(Clone, Debug)]
pub(super) struct HostFile {
    /// Relative to `outputs/`, with `/` separators.
    pub rel: String,
    pub bytes: u64,
    pub modified: Option<SystemTime>,
}

/// Every regular file under `dir` (links and special files are not the app's).
pub(super) fn host_outputs(dir: &Path) -> Vec<HostFile> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<HostFile>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            if meta.is_dir() {
                walk(root, &e.path(), out);
            } else if meta.is_file() {
                let rel = e.path().strip_prefix(root).map(|r| {
                    r.components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join("/")
                });
                if let Ok(rel) = rel {
                    out.push(HostFile {
                        rel,
                        bytes: meta.len(),
                        modified: meta.modified().ok(),
                    });
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

/// A crash between the two renames that swap in new outputs leaves `old` and no
/// `dest`: the old copy (whole, and the one the archive matches) goes back rather
/// than being removed as a leftover.
pub(super) fn recover_swap(dest: &Path, old: &Path) -> std::io::Result<bool> {
    if std::fs::symlink_metadata(dest).is_err() && old.is_dir() {
        std::fs::rename(old, dest)?;
        return Ok(true);
    }
    Ok(false)
}

/// The host's output files that a restored archive lacks or holds an older copy
/// of: the archive is from an earlier ask than the last collection (its write was
/// killed, failed or was over the size cap), so these must be put back.
pub(super) fn newer_than_archive(host: &[HostFile], index: &ArchiveIndex) -> Vec<String> {
    host.iter()
        .filter(|f| {
            let newer = match (f.modified, index.modified) {
                (Some(file), Some(archive)) => file > archive,
                _ => true,
            };
            newer || !index.outputs.contains_key(&f.rel)
        })
        .map(|f| f.rel.clone())
        .collect()
}

/// What `output/` held when an ask began, on the host and in the sandbox.
#[derive(Debug, Default)]
pub(super) struct OutputsBefore {
    pub host: Vec<HostFile>,
    /// None when the sandbox could not list them: then the code is taken to have
    /// seen none, so no host file is dropped on its account.
    pub visible: Option<BTreeSet<String>>,
}

/// Files of the host's `outputs/` from before the ask that the code cannot have
/// deleted: the sandbox did not show them at the start, or still has them (left
/// behind by the collection's caps). `collected` are the files just brought back,
/// `now` what the sandbox lists after the ask (None when it could not say).
pub(super) fn to_keep(
    before: &OutputsBefore,
    collected: &[CollectedFile],
    now: Option<&BTreeSet<String>>,
) -> Vec<HostFile> {
    let fresh: BTreeSet<&str> = collected.iter().map(|f| f.path.as_str()).collect();
    before
        .host
        .iter()
        .filter(|f| !fresh.contains(f.rel.as_str()))
        .filter(|f| {
            let seen = before.visible.as_ref().is_some_and(|v| v.contains(&f.rel));
            let still_there = now.is_none_or(|n| n.contains(&f.rel));
            !seen || still_there
        })
        .cloned()
        .collect()
}

/// Put `keep` (files of `old`) into `fresh`, linked where the filesystem allows and
/// copied otherwise. Returns the files kept; a name the new outputs use for a
/// folder is reported as not kept.
pub(super) fn carry_over(
    old: &Path,
    fresh: &Path,
    keep: &[HostFile],
) -> std::io::Result<(Vec<CollectedFile>, Vec<String>)> {
    let (mut kept, mut clashed) = (Vec::new(), Vec::new());
    for f in keep {
        let (from, to) = (old.join(&f.rel), fresh.join(&f.rel));
        if let Some(parent) = to.parent() {
            if std::fs::create_dir_all(parent).is_err() {
                clashed.push(f.rel.clone());
                continue;
            }
        }
        if std::fs::symlink_metadata(&to).is_ok() {
            clashed.push(f.rel.clone());
            continue;
        }
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to)?;
        }
        kept.push(CollectedFile {
            path: f.rel.clone(),
            bytes: f.bytes,
            invalid: None,
        });
    }
    Ok((kept, clashed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn hf(rel: &str, at: u64) -> HostFile {
        HostFile {
            rel: rel.into(),
            bytes: 1,
            modified: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(at)),
        }
    }

    #[test]
    fn only_files_the_code_saw_and_removed_are_dropped() {
        let before = OutputsBefore {
            host: vec![hf("seen_removed", 1), hf("unseen", 1), hf("left_behind", 1)],
            visible: Some(["seen_removed", "left_behind"].map(String::from).into()),
        };
        let now: BTreeSet<String> = ["left_behind".to_string()].into();
        let keep: Vec<String> = to_keep(&before, &[], Some(&now))
            .into_iter()
            .map(|f| f.rel)
            .collect();
        assert_eq!(keep, ["unseen", "left_behind"]);
        // A sandbox that could not list: nothing is dropped.
        let blind = OutputsBefore {
            visible: None,
            ..before
        };
        assert_eq!(to_keep(&blind, &[], None).len(), 3);
        // What came back is not kept twice.
        let back = [CollectedFile {
            path: "unseen".into(),
            bytes: 1,
            invalid: None,
        }];
        assert_eq!(to_keep(&blind, &back, None).len(), 2);
    }

    #[test]
    fn files_newer_than_the_archive_or_not_in_it_go_back() {
        let index = ArchiveIndex {
            modified: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(10)),
            outputs: [("old.csv".to_string(), 1), ("changed.csv".to_string(), 1)].into(),
        };
        let host = [hf("old.csv", 5), hf("changed.csv", 20), hf("new.md", 5)];
        assert_eq!(newer_than_archive(&host, &index), ["changed.csv", "new.md"]);
    }

    #[test]
    fn a_swap_cut_between_its_renames_gets_the_old_outputs_back() {
        let dir = tempfile::tempdir().unwrap();
        let (dest, old) = (dir.path().join("outputs"), dir.path().join("outputs.old"));
        std::fs::create_dir(&old).unwrap();
        std::fs::write(old.join("r.md"), "kept").unwrap();
        assert!(recover_swap(&dest, &old).unwrap());
        assert_eq!(std::fs::read(dest.join("r.md")).unwrap(), b"kept");
        // With outputs/ in place, an outputs.old is a leftover and stays one.
        std::fs::create_dir(&old).unwrap();
        assert!(!recover_swap(&dest, &old).unwrap());
    }

    #[test]
    fn kept_files_are_carried_into_the_new_outputs() {
        let dir = tempfile::tempdir().unwrap();
        let (old, fresh) = (dir.path().join("outputs"), dir.path().join("outputs.new"));
        std::fs::create_dir_all(old.join("sub")).unwrap();
        std::fs::write(old.join("sub/a.csv"), "x,y\n").unwrap();
        std::fs::write(old.join("b.md"), "# b").unwrap();
        std::fs::create_dir_all(fresh.join("b.md")).unwrap();
        let host = host_outputs(&old);
        assert_eq!(host.len(), 2);
        let (kept, clashed) = carry_over(&old, &fresh, &host).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(clashed, ["b.md"]);
        assert_eq!(std::fs::read(fresh.join("sub/a.csv")).unwrap(), b"x,y\n");
    }
}
