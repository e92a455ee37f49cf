//! Crash-safe rewrites: a file is written under a temporary name in its own folder,
//! synced, renamed over the old one and the folder synced, so a crash, a kill or a
//! full disk leaves the old file or the new one, never a mix. Temporary files of a
//! process that died are removed the next time the same file is written.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Write `bytes` as `path`, replacing what was there only once all of it is on disk.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// A file being written beside `dest`; it replaces `dest` on [`AtomicFile::commit`]
/// and is removed if dropped before.
pub struct AtomicFile {
    file: Option<File>,
    tmp: PathBuf,
    dest: PathBuf,
}

impl AtomicFile {
    pub fn create(dest: &Path) -> std::io::Result<AtomicFile> {
        let (dir, name) = split(dest)?;
        remove_leftovers(dir, &name);
        static N: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = N.fetch_add(1, Ordering::Relaxed);
            let tmp = dir.join(format!(".{name}.{}.{n}.tmp", owner_tag()));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
            {
                Ok(file) => {
                    return Ok(AtomicFile {
                        file: Some(file),
                        tmp,
                        dest: dest.to_path_buf(),
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Where the bytes go until the commit.
    pub fn temp_path(&self) -> &Path {
        &self.tmp
    }

    /// Sync the file, rename it over `dest` and sync the folder.
    pub fn commit(mut self) -> std::io::Result<()> {
        let file = self.file.take().expect("not committed yet");
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.tmp, &self.dest)?;
        sync_dir(self.dest.parent().unwrap_or(Path::new(".")))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.as_mut().expect("not committed").write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().expect("not committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Make a rename or a new file in `dir` durable. Filesystems that cannot sync a
/// folder (some network and FUSE mounts) say so with EINVAL; that is not a failure.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        match File::open(dir).and_then(|d| d.sync_all()) {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::InvalidInput | std::io::ErrorKind::Unsupported
                ) =>
            {
                Ok(())
            }
            other => other,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

fn split(dest: &Path) -> std::io::Result<(&Path, String)> {
    let name = dest.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} names no file", dest.display()),
        )
    })?;
    let dir = dest.parent().filter(|p| !p.as_os_str().is_empty());
    Ok((
        dir.unwrap_or(Path::new(".")),
        name.to_string_lossy().into_owned(),
    ))
}

/// `pid-token` of this process (see [`crate::owner`]): a temporary file names its
/// writer, so a later writer can tell a live one's file from a dead one's.
fn owner_tag() -> String {
    let id = crate::owner::owner_id();
    id.split_once('/')
        .map_or(id, |(_, rest)| rest)
        .replace('/', "-")
}

/// Remove temporary files of `name` in `dir` left by processes that no longer run.
fn remove_leftovers(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    let mine = owner_tag();
    let host = crate::owner::owner_id()
        .split_once('/')
        .map_or("", |(h, _)| h)
        .to_string();
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(tag) = file
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .and_then(|rest| rest.rsplit_once('.'))
            .map(|(tag, _n)| tag)
        else {
            continue;
        };
        let Some((pid, token)) = tag.split_once('-') else {
            continue;
        };
        if tag != mine && crate::owner::owner_is_gone(&format!("{host}/{pid}/{token}")) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_write_replaces_the_file_whole_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        write_atomic(&path, b"old").unwrap();
        write_atomic(&path, b"new and longer").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new and longer");
        assert_eq!(names(dir.path()), vec!["run.json"]);
    }

    #[test]
    fn an_unfinished_write_keeps_the_old_file_and_removes_its_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workspace.tar");
        write_atomic(&path, b"last good").unwrap();
        {
            let mut f = AtomicFile::create(&path).unwrap();
            f.write_all(b"half of a new").unwrap();
            assert!(f.temp_path().exists());
            assert_eq!(std::fs::read(&path).unwrap(), b"last good");
            // dropped without commit: a failed write
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"last good");
        assert_eq!(names(dir.path()), vec!["workspace.tar"]);
    }

    #[test]
    fn a_dead_writers_temp_is_removed_next_time_and_a_live_ones_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workspace.tar");
        // pid 999999999 never runs; this process does.
        let dead = dir.path().join(".workspace.tar.999999999-1.0.tmp");
        std::fs::write(&dead, b"cut short by a kill").unwrap();
        let live = dir
            .path()
            .join(format!(".workspace.tar.{}.7.tmp", owner_tag()));
        std::fs::write(&live, b"still being written").unwrap();
        let other = dir.path().join(".run.json.999999999-1.0.tmp");
        std::fs::write(&other, b"another file's").unwrap();
        write_atomic(&path, b"whole").unwrap();
        assert!(!dead.exists(), "the dead writer's temp is gone");
        assert!(live.exists(), "a live writer's temp is kept");
        assert!(other.exists(), "only temps of the same file are looked at");
        assert_eq!(std::fs::read(&path).unwrap(), b"whole");
    }

    #[test]
    fn two_writers_at_once_each_write_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.json");
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let text = format!("{i}").repeat(10_000);
                    write_atomic(&path, text.as_bytes()).unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let got = std::fs::read_to_string(&path).unwrap();
        assert_eq!(got.len(), 10_000);
        let first = got.chars().next().unwrap();
        assert!(got.chars().all(|c| c == first), "a mix of two writes");
        assert_eq!(names(dir.path()), vec!["session.json"]);
    }
}
