//! Unpacking a sandbox's outputs onto the host, treating every entry as hostile.

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
        anyhow::anyhow!("cannot write output {}: {e}", target.display())
    })
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
}
