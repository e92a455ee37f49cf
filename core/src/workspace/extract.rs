//! The one check of everything that comes out of a sandbox onto the host, whatever
//! the backend: the outputs collected when an ask ends (a tar stream of `output/`,
//! see [`collect_chosen`]) and the live copies made while a call runs
//! ([`keep_live_copy`]). Every entry is treated as hostile: regular files and folders
//! only, no absolute paths or `..`, never written through a link, size and count caps.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// Caps applied while unpacking outputs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CollectLimits {
    pub max_file_bytes: u64,
    pub max_total_bytes: u64,
    pub max_files: usize,
}

impl Default for CollectLimits {
    fn default() -> Self {
        CollectLimits {
            max_file_bytes: 512 << 20,
            max_total_bytes: 2 << 30,
            max_files: 2000,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectedFile {
    /// Relative to the output folder, '/'-separated.
    pub path: String,
    pub bytes: u64,
    /// What is wrong with it, when it is not what its name says (an empty file, a PNG
    /// that does not decode): see `artifacts::check`. Set once it is on the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refused {
    pub path: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Collected {
    pub files: Vec<CollectedFile>,
    pub refused: Vec<Refused>,
}

/// Unpack a tar of the output folder into `dest`. Entry names are expected under
/// `prefix` (e.g. `output/`), which is stripped. Only regular files and folders are
/// written; links, devices, unsafe paths and anything over the caps are refused.
/// An I/O error on the host (e.g. a full disk) aborts with a clear message and
/// removes the partly written file.
pub fn collect(
    reader: impl Read,
    prefix: &str,
    dest: &Path,
    limits: &CollectLimits,
) -> anyhow::Result<Collected> {
    collect_chosen(reader, prefix, dest, limits, None)
}

/// File extensions of what an analysis hands back (charts, tables, reports).
const ARTIFACTS: &[&str] = &[
    "png", "jpg", "jpeg", "svg", "gif", "webp", "pdf", "csv", "tsv", "xlsx", "json", "parquet",
    "md", "txt", "html",
];

/// How much a file matters when not everything can come back: top-level artifacts,
/// other top-level files, artifacts in subfolders, then the rest.
fn rank(path: &str) -> u8 {
    let top = !path.contains('/');
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let artifact = ext.is_some_and(|e| ARTIFACTS.contains(&e.as_str()));
    match (top, artifact) {
        (true, true) => 0,
        (true, false) => 1,
        (false, true) => 2,
        (false, false) => 3,
    }
}

/// Which of the listed output files (path relative to `output/`, size) come back
/// when they cannot all: the most important first (see [`rank`]), then by path,
/// within the count and total caps. Files over the per-file cap are never chosen.
pub fn choose_outputs(listed: &[(String, u64)], limits: &CollectLimits) -> Chosen {
    let mut order: Vec<&(String, u64)> = listed.iter().collect();
    order.sort_by(|a, b| rank(&a.0).cmp(&rank(&b.0)).then_with(|| a.0.cmp(&b.0)));
    let (mut chosen, mut total) = (std::collections::HashSet::new(), 0u64);
    for (path, size) in order {
        if chosen.len() >= limits.max_files {
            break;
        }
        if *size > limits.max_file_bytes || total + size > limits.max_total_bytes {
            continue;
        }
        total += size;
        chosen.insert(path.clone());
    }
    Chosen {
        paths: chosen,
        listed: listed.len(),
    }
}

/// The outcome of [`choose_outputs`].
#[derive(Clone, Debug, Default)]
pub struct Chosen {
    paths: std::collections::HashSet<String>,
    listed: usize,
}

/// [`collect`], taking only the files `chosen` names (when given) and refusing the
/// others with the reason they were left behind. A file that was not listed (it
/// appeared after the listing) comes back only where it takes no chosen file's place.
pub fn collect_chosen(
    reader: impl Read,
    prefix: &str,
    dest: &Path,
    limits: &CollectLimits,
    chosen: Option<&Chosen>,
) -> anyhow::Result<Collected> {
    let mut pending = chosen.map_or(0, |c| c.paths.len());
    std::fs::create_dir_all(dest)
        .with_context(|| format!("cannot create output folder {}", dest.display()))?;
    let mut out = Collected::default();
    let mut total = 0u64;
    let mut archive = tar::Archive::new(reader);
    for entry in archive.entries().context("reading the outputs archive")? {
        let mut entry = entry.context("reading the outputs archive")?;
        let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let name = raw.strip_prefix(prefix).unwrap_or(&raw).to_string();
        let kind = entry.header().entry_type();
        let refuse = |out: &mut Collected, reason: &str| {
            out.refused.push(Refused {
                path: name.clone(),
                reason: reason.into(),
            })
        };
        if name.is_empty() || name == "/" {
            continue;
        }
        let Some(rel) = safe_relative(&name) else {
            refuse(&mut out, "unsafe path (absolute or with ..)");
            continue;
        };
        if kind.is_dir() {
            std::fs::create_dir_all(dest.join(&rel))
                .with_context(|| format!("cannot create {}", dest.join(&rel).display()))?;
            continue;
        }
        if !kind.is_file() {
            refuse(&mut out, &format!("not a regular file ({kind:?})"));
            continue;
        }
        let size = entry.header().size().unwrap_or(u64::MAX);
        let rel_s = rel.to_string_lossy().replace('\\', "/");
        match chosen {
            Some(c) if c.paths.contains(&rel_s) => pending = pending.saturating_sub(1),
            Some(c) if out.files.len() + pending >= limits.max_files => {
                refuse(
                    &mut out,
                    &format!(
                        "left behind: output/ holds {} files, over the {}-file limit; top-level files and artifacts (images, tables, Markdown) were collected first",
                        c.listed, limits.max_files
                    ),
                );
                continue;
            }
            _ => {}
        }
        if out.files.len() >= limits.max_files {
            refuse(&mut out, "too many output files");
            continue;
        }
        if size > limits.max_file_bytes {
            refuse(
                &mut out,
                &format!(
                    "larger than the {} byte limit per file",
                    limits.max_file_bytes
                ),
            );
            continue;
        }
        if total + size > limits.max_total_bytes {
            refuse(
                &mut out,
                &format!(
                    "outputs exceed the {} byte total limit",
                    limits.max_total_bytes
                ),
            );
            continue;
        }
        let target = dest.join(&rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        write_file(&mut entry, &target, size)?;
        total += size;
        out.files.push(CollectedFile {
            path: rel.to_string_lossy().replace('\\', "/"),
            bytes: size,
            invalid: None,
        });
    }
    Ok(out)
}

fn write_file(entry: &mut impl Read, target: &Path, size: u64) -> anyhow::Result<()> {
    let result = (|| -> std::io::Result<()> {
        // create_new: never follow or overwrite something already at the target.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(target)?;
        std::io::copy(&mut entry.take(size), &mut file)?;
        file.sync_all()
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(target);
        // The io::Error stays in the chain: a full disk is told by its kind.
        anyhow::Error::new(e).context(format!("cannot write output {}", target.display()))
    })
}

/// Write one output file the sandbox reported (`rel` relative to `output/`) as
/// `dir/rel`, while the call that made it still runs: plain relative names only,
/// never through a link, and nothing left behind when it does not fit. The ask's
/// final collection replaces the folder with its own checked copy.
pub fn keep_live_copy(dir: &Path, rel: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let safe = !rel.is_empty()
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if !safe {
        anyhow::bail!("refused output name {rel:?}");
    }
    let dest = dir.join(rel);
    let parent = dest.parent().expect("has a parent");
    std::fs::create_dir_all(parent)?;
    if std::fs::symlink_metadata(&dest).is_ok_and(|m| !m.is_file()) {
        anyhow::bail!("refused output {rel:?}: not a regular file on the host");
    }
    let tmp = parent.join(format!(".{}.part", std::process::id()));
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, &dest));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    Ok(written?)
}

/// The path as normal components only, or None if it is absolute or climbs out.
fn safe_relative(name: &str) -> Option<PathBuf> {
    let mut rel = PathBuf::new();
    for c in Path::new(name).components() {
        match c {
            Component::Normal(part) => rel.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!rel.as_os_str().is_empty()).then_some(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(b: &mut tar::Builder<Vec<u8>>, name: &str, kind: tar::EntryType, data: &[u8]) {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        // Write the raw name so hostile paths reach the reader unchanged.
        let raw = &mut h.as_old_mut().name;
        raw[..name.len()].copy_from_slice(name.as_bytes());
        if kind == tar::EntryType::Symlink || kind == tar::EntryType::Link {
            h.set_link_name("/etc/passwd").unwrap();
        }
        h.set_cksum();
        b.append(&h, data).unwrap();
    }

    #[test]
    fn hostile_entries_are_refused_and_good_ones_written() {
        let mut b = tar::Builder::new(Vec::new());
        entry(&mut b, "output/", tar::EntryType::Directory, b"");
        entry(&mut b, "output/report.md", tar::EntryType::Regular, b"# hi");
        entry(&mut b, "output/sub/t.csv", tar::EntryType::Regular, b"a\n1");
        entry(&mut b, "output/../escape", tar::EntryType::Regular, b"x");
        entry(&mut b, "/etc/evil", tar::EntryType::Regular, b"x");
        entry(&mut b, "output/link", tar::EntryType::Symlink, b"");
        entry(&mut b, "output/hard", tar::EntryType::Link, b"");
        entry(&mut b, "output/dev", tar::EntryType::Char, b"");
        entry(
            &mut b,
            "output/big.bin",
            tar::EntryType::Regular,
            &[0u8; 100],
        );
        let bytes = b.into_inner().unwrap();

        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out");
        let limits = CollectLimits {
            max_file_bytes: 50,
            ..CollectLimits::default()
        };
        let got = collect(&bytes[..], "output/", &dest, &limits).unwrap();
        let paths: Vec<_> = got.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["report.md", "sub/t.csv"]);
        let refused: Vec<_> = got.refused.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            refused,
            ["../escape", "/etc/evil", "link", "hard", "dev", "big.bin"]
        );
        assert_eq!(
            std::fs::read_to_string(dest.join("report.md")).unwrap(),
            "# hi"
        );
        assert!(!dir.path().join("escape").exists());
        assert!(!dest.join("link").exists());
    }

    #[test]
    fn a_flood_in_a_subfolder_does_not_push_out_the_report() {
        let mut b = tar::Builder::new(Vec::new());
        let mut listed = Vec::new();
        // The walk order of a real tar: the scratch folder first, the report last.
        for i in 0..50 {
            let name = format!("scratch/s{i:03}.tmp");
            entry(
                &mut b,
                &format!("output/{name}"),
                tar::EntryType::Regular,
                b"x",
            );
            listed.push((name, 1));
        }
        for name in [
            "scratch/plot.png",
            "anomaly_report.md",
            "anomalies.csv",
            "notes.log",
        ] {
            entry(
                &mut b,
                &format!("output/{name}"),
                tar::EntryType::Regular,
                b"y",
            );
            listed.push((name.to_string(), 1));
        }
        let bytes = b.into_inner().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let limits = CollectLimits {
            max_files: 10,
            ..CollectLimits::default()
        };
        let chosen = choose_outputs(&listed, &limits);
        let got =
            collect_chosen(&bytes[..], "output/", dir.path(), &limits, Some(&chosen)).unwrap();
        let paths: Vec<_> = got.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(got.files.len(), 10);
        for p in [
            "anomaly_report.md",
            "anomalies.csv",
            "notes.log",
            "scratch/plot.png",
        ] {
            assert!(paths.contains(&p), "{p} missing from {paths:?}");
        }
        assert_eq!(got.refused.len(), 44);
        assert!(
            got.refused[0].reason.contains("left behind")
                && got.refused[0].reason.contains("54 files")
        );
        // Without the choice, the report would have been lost.
        let dir = tempfile::tempdir().unwrap();
        let got = collect(&bytes[..], "output/", dir.path(), &limits).unwrap();
        assert!(!got.files.iter().any(|f| f.path == "anomaly_report.md"));
    }

    #[test]
    fn caps_on_count_and_total() {
        let mut b = tar::Builder::new(Vec::new());
        for i in 0..5 {
            entry(
                &mut b,
                &format!("output/f{i}"),
                tar::EntryType::Regular,
                b"12345",
            );
        }
        let bytes = b.into_inner().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let limits = CollectLimits {
            max_file_bytes: 100,
            max_total_bytes: 12,
            max_files: 10,
        };
        let got = collect(&bytes[..], "output/", dir.path(), &limits).unwrap();
        assert_eq!(got.files.len(), 2);
        assert_eq!(got.refused.len(), 3);
    }

    #[test]
    fn live_copies_take_plain_names_only_and_never_follow_links() {
        let dir = tempfile::tempdir().unwrap();
        keep_live_copy(dir.path(), "sub/a.csv", b"x").unwrap();
        assert_eq!(std::fs::read(dir.path().join("sub/a.csv")).unwrap(), b"x");
        assert!(keep_live_copy(dir.path(), "../escape.txt", b"x").is_err());
        assert!(keep_live_copy(dir.path(), "/etc/x", b"x").is_err());
        #[cfg(unix)]
        {
            let target = dir.path().join("target.txt");
            std::fs::write(&target, b"keep").unwrap();
            std::os::unix::fs::symlink(&target, dir.path().join("link.txt")).unwrap();
            assert!(keep_live_copy(dir.path(), "link.txt", b"x").is_err());
            assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        }
    }
}
