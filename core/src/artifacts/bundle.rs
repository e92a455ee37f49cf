//! A bundle of a session's results: its outputs folder (and optionally its transcript)
//! copied to a folder the user picked, or written as one zip file.
//!
//! Outputs were written by model code: only regular files and folders are taken
//! (links and anything else are skipped), and an existing destination is never
//! overwritten.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use zip::write::SimpleFileOptions;

/// Regular files under `root`, as (path relative to root with `/`, full path), sorted.
pub fn files_under(root: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), root.to_path_buf())];
    while let Some((prefix, dir)) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && prefix.is_empty() => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", dir.display())),
        };
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let ft = entry.file_type()?;
            if ft.is_dir() {
                stack.push((rel, entry.path()));
            } else if ft.is_file() {
                out.push((rel, entry.path()));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Copy `files` (relative name, source) into the new folder `dest`.
pub fn to_folder(files: &[(String, PathBuf)], dest: &Path) -> anyhow::Result<PathBuf> {
    if dest.exists() {
        bail!("{} already exists; pick another name", dest.display());
    }
    for (rel, src) in files {
        let to = dest.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::copy(src, &to).with_context(|| format!("cannot write {}", to.display()))?;
    }
    std::fs::create_dir_all(dest)?;
    Ok(dest.to_path_buf())
}

/// Write `files` (relative name, source) into the new zip file `dest`.
pub fn to_zip(files: &[(String, PathBuf)], dest: &Path) -> anyhow::Result<PathBuf> {
    if dest.exists() {
        bail!("{} already exists; pick another name", dest.display());
    }
    let out = File::create_new(dest).with_context(|| format!("cannot write {}", dest.display()))?;
    let mut zip = zip::ZipWriter::new(BufWriter::new(out));
    let opts = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    for (rel, src) in files {
        zip.start_file(rel.as_str(), opts)?;
        let mut f = File::open(src).with_context(|| format!("cannot read {}", src.display()))?;
        std::io::copy(&mut f, &mut zip)?;
    }
    zip.finish()?.flush()?;
    Ok(dest.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_and_zip_hold_the_regular_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("outputs");
        std::fs::create_dir_all(out.join("sub")).unwrap();
        std::fs::write(out.join("a.csv"), "x").unwrap();
        std::fs::write(out.join("sub/b.png"), "y").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/passwd", out.join("link")).unwrap();
        let files = files_under(&out).unwrap();
        let names: Vec<_> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a.csv", "sub/b.png"]);
        let f = to_folder(&files, &dir.path().join("exp")).unwrap();
        assert_eq!(std::fs::read_to_string(f.join("sub/b.png")).unwrap(), "y");
        assert!(to_folder(&files, &dir.path().join("exp")).is_err());
        let z = to_zip(&files, &dir.path().join("e.zip")).unwrap();
        let mut archive = zip::ZipArchive::new(File::open(z).unwrap()).unwrap();
        assert_eq!(archive.len(), 2);
        assert!(archive.by_name("sub/b.png").is_ok());
    }
}
