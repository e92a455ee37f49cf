//! Whether a workspace archive on disk is whole, before anything trusts it: a tar cut
//! short (a kill or a full disk while it was written by an older version, a copy
//! that stopped) must not be restored as if it were the workspace.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::SystemTime;

/// What the archive at a path is.
#[derive(Debug)]
pub enum ArchiveCheck {
    Missing,
    /// It is there but not a complete tar; `reason` says what is wrong.
    Unreadable {
        reason: String,
    },
    Complete(ArchiveIndex),
}

/// A complete archive: when it was written and the files of `output/` it holds.
#[derive(Debug, Default)]
pub struct ArchiveIndex {
    pub modified: Option<SystemTime>,
    /// Path relative to `output/` and size, for each regular file under
    /// `workspace/output/`.
    pub outputs: BTreeMap<String, u64>,
}

/// Check that `path` reads as a whole tar: every header valid, every entry's data
/// present, and the end-of-archive blocks after the last one. Reads only the
/// headers (the data is skipped by seeking), so a 2 GB archive costs milliseconds.
pub fn check_archive(path: &Path) -> ArchiveCheck {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return ArchiveCheck::Missing,
        Err(e) => {
            return ArchiveCheck::Unreadable {
                reason: format!("it cannot be opened: {e}"),
            }
        }
    };
    match index(file) {
        Ok(index) => ArchiveCheck::Complete(index),
        Err(reason) => ArchiveCheck::Unreadable { reason },
    }
}

fn index(mut file: std::fs::File) -> Result<ArchiveIndex, String> {
    let meta = file.metadata().map_err(|e| e.to_string())?;
    let len = meta.len();
    let mut out = ArchiveIndex {
        modified: meta.modified().ok(),
        ..ArchiveIndex::default()
    };
    let cut = |what: &str| format!("it is cut short ({what})");
    let mut end = 0u64;
    {
        let mut archive = tar::Archive::new(&mut file);
        let entries = archive
            .entries_with_seek()
            .map_err(|e| cut(&e.to_string()))?;
        for entry in entries {
            let entry = entry.map_err(|e| cut(&e.to_string()))?;
            let size = entry.size();
            end = entry.raw_file_position() + size.div_ceil(512) * 512;
            if end > len {
                return Err(cut(&format!(
                    "{} needs {} bytes, the file has {}",
                    String::from_utf8_lossy(&entry.path_bytes()),
                    end,
                    len
                )));
            }
            let path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
            let kind = entry.header().entry_type();
            if let Some(rel) = path.strip_prefix("workspace/output/") {
                if (kind.is_file() || kind == tar::EntryType::Continuous) && !rel.is_empty() {
                    out.outputs.insert(rel.to_string(), size);
                }
            }
        }
    }
    // A tar ends with two zero blocks; one cut at an entry boundary has none.
    if len < end + 1024 {
        return Err(cut("no end-of-archive marker"));
    }
    file.seek(SeekFrom::Start(end)).map_err(|e| e.to_string())?;
    let mut marker = [0u8; 1024];
    file.read_exact(&mut marker)
        .map_err(|e| cut(&e.to_string()))?;
    if marker.iter().any(|b| *b != 0) {
        return Err(cut("no end-of-archive marker"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(files: &[(&str, usize)]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        for (name, size) in files {
            let mut h = tar::Header::new_gnu();
            h.set_size(*size as u64);
            h.set_mode(0o644);
            h.set_cksum();
            tar.append_data(&mut h, name, &vec![b'x'; *size][..])
                .unwrap();
        }
        tar.into_inner().unwrap()
    }

    #[test]
    fn whole_archives_pass_and_every_cut_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workspace.tar");
        assert!(matches!(check_archive(&path), ArchiveCheck::Missing));
        let long = format!("workspace/output/{}.csv", "n".repeat(150));
        let whole = archive(&[
            ("workspace/input/a.csv", 700),
            ("workspace/output/r.md", 3),
            (&long, 1500),
            ("workspace/scratch.bin", 5000),
        ]);
        std::fs::write(&path, &whole).unwrap();
        match check_archive(&path) {
            ArchiveCheck::Complete(i) => {
                assert_eq!(i.outputs.len(), 2);
                assert_eq!(i.outputs["r.md"], 3);
                assert_eq!(i.outputs[&long["workspace/output/".len()..]], 1500);
            }
            other => panic!("{other:?}"),
        }
        // Every cut, at a block boundary or not, inside data or headers.
        for cut in (0..whole.len() - 1024).step_by(97).chain([512, 1024, 1536]) {
            std::fs::write(&path, &whole[..cut]).unwrap();
            assert!(
                matches!(check_archive(&path), ArchiveCheck::Unreadable { .. }),
                "cut at {cut} of {} passed",
                whole.len()
            );
        }
        // Garbage where the end marker should be.
        let mut bad = whole.clone();
        let n = bad.len();
        bad[n - 700] = 1;
        std::fs::write(&path, &bad).unwrap();
        assert!(matches!(
            check_archive(&path),
            ArchiveCheck::Unreadable { .. }
        ));
        std::fs::write(&path, archive(&[])).unwrap();
        assert!(matches!(check_archive(&path), ArchiveCheck::Complete(_)));
    }
}
