//! Every path that comes from a front end is checked here before a file is touched.
//!
//! The page names a file as a session id plus a path relative to that session's
//! folder (`outputs/energy_anomalies.png`). A name is accepted only when it is a plain
//! relative path (no `..`, no `.`, no empty or absolute parts, no backslashes, drive
//! letters or NUL), no part of it on disk is a symbolic link, the file is a regular
//! file, and its canonical path is still inside the session's canonical folder.

use std::path::{Component, Path, PathBuf};

/// Why a path from the page was refused, in words for the person at the window.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    BadSessionId,
    NotRelative,
    Symlink,
    NotAFile,
    Outside,
    Missing,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refused::BadSessionId => "that is not a session of this app",
            Refused::NotRelative => "only files inside the session's folder can be opened",
            Refused::Symlink => "links are not followed: the file is not shown",
            Refused::NotAFile => "that is not a regular file",
            Refused::Outside => "that file is outside the session's folder",
            Refused::Missing => "the file does not exist (any more)",
        })
    }
}

impl std::error::Error for Refused {}

/// Session ids are made by the core: letters, digits, `-` and `_`.
pub fn check_session_id(id: &str) -> Result<&str, Refused> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(id)
    } else {
        Err(Refused::BadSessionId)
    }
}

/// Resolve `rel` inside `root` following the rules of this module.
pub fn resolve_inside(root: &Path, rel: &str) -> Result<PathBuf, Refused> {
    if rel.is_empty()
        || rel.len() > 4096
        || rel.contains('\0')
        || rel.contains('\\')
        || rel.starts_with('/')
        || rel.contains(':')
    {
        return Err(Refused::NotRelative);
    }
    let mut path = root.to_path_buf();
    for part in rel.split('/') {
        if part.is_empty() || part == "." || part == ".." {
            return Err(Refused::NotRelative);
        }
        let mut comps = Path::new(part).components();
        if !matches!(
            (comps.next(), comps.next()),
            (Some(Component::Normal(_)), None)
        ) {
            return Err(Refused::NotRelative);
        }
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => return Err(Refused::Symlink),
            Ok(_) => {}
            Err(_) => return Err(Refused::Missing),
        }
    }
    let meta = std::fs::symlink_metadata(&path).map_err(|_| Refused::Missing)?;
    if !meta.file_type().is_file() {
        return Err(Refused::NotAFile);
    }
    let canon_root = root.canonicalize().map_err(|_| Refused::Missing)?;
    let canon = path.canonicalize().map_err(|_| Refused::Missing)?;
    if !canon.starts_with(&canon_root) {
        return Err(Refused::Outside);
    }
    Ok(canon)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_relative_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s1");
        std::fs::create_dir_all(root.join("outputs/sub")).unwrap();
        std::fs::write(root.join("outputs/a.png"), b"x").unwrap();
        std::fs::write(root.join("outputs/sub/b.csv"), b"x").unwrap();
        std::fs::write(dir.path().join("secret.txt"), b"s").unwrap();

        assert!(resolve_inside(&root, "outputs/a.png").is_ok());
        assert!(resolve_inside(&root, "outputs/sub/b.csv").is_ok());
        for bad in [
            "",
            "../secret.txt",
            "outputs/../../secret.txt",
            "outputs/./a.png",
            "/etc/passwd",
            "outputs//a.png",
            "outputs\\a.png",
            "C:/x",
            "outputs/a.png\0",
        ] {
            assert_eq!(
                resolve_inside(&root, bad),
                Err(Refused::NotRelative),
                "{bad:?}"
            );
        }
        assert_eq!(resolve_inside(&root, "outputs"), Err(Refused::NotAFile));
        assert_eq!(
            resolve_inside(&root, "outputs/none.png"),
            Err(Refused::Missing)
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_refused_anywhere_in_the_path() {
        #[cfg(unix)]
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s1");
        std::fs::create_dir_all(root.join("outputs")).unwrap();
        std::fs::write(dir.path().join("secret.txt"), b"s").unwrap();
        symlink(dir.path().join("secret.txt"), root.join("outputs/l.txt")).unwrap();
        symlink(dir.path(), root.join("up")).unwrap();
        assert_eq!(
            resolve_inside(&root, "outputs/l.txt"),
            Err(Refused::Symlink)
        );
        assert_eq!(
            resolve_inside(&root, "up/secret.txt"),
            Err(Refused::Symlink)
        );
    }

    #[test]
    fn session_ids() {
        assert!(check_session_id("2026-12-01_abc").is_ok());
        for bad in ["", "..", "a/b", "a b", "<x>"] {
            assert!(check_session_id(bad).is_err());
        }
    }
}
