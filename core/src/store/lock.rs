//! One writer per session folder: `<session>/lock`, an exclusive OS lock
//! (`File::try_lock`) held by the process that writes the session. The operating
//! system drops it when that process ends, however it ends, so a free lock proves
//! that whoever held it is gone. The file says who holds it (for the busy message);
//! readers never take it, so history can be listed, shown and exported meanwhile.
//!
//! The file is never removed: removing a lock file while another process is opening
//! it would let two processes hold "the" lock on two different files.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

pub const LOCK: &str = "lock";

/// How many times (50 ms apart) a lock held in this process's own name is tried again.
const OWN_RETRIES: u32 = 20;

/// The held lock of one session folder; dropping it lets another process write.
#[derive(Debug)]
pub struct SessionLock {
    _file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process (or another handle of this one) holds it.
    #[error("the session is in use by {holder}")]
    Held { holder: String },
    #[error("cannot open the session lock {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl SessionLock {
    /// Take the lock of the session folder `dir` without waiting.
    pub fn try_acquire(dir: &Path) -> Result<SessionLock, LockError> {
        let path = dir.join(LOCK);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        let mut tries = 0;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    let mut text = String::new();
                    // Windows refuses reads of a locked file: then the holder is unnamed.
                    let _ = file.rewind().and_then(|_| file.read_to_string(&mut text));
                    // Held in this process's name just after it let go: a child being
                    // started on another thread holds a copy of the descriptor until its
                    // exec closes it (milliseconds, longer on a loaded machine).
                    if held_by_this_process(&text) && tries < OWN_RETRIES {
                        tries += 1;
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        continue;
                    }
                    return Err(LockError::Held {
                        holder: holder_of(&text),
                    });
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
        }
        // Who holds it, for the message another process shows. Written after taking
        // the lock, so a holder's line is never overwritten by a process that lost.
        let line = format!("{}\n{}\n", describe_self(), crate::owner::owner_id());
        let written = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(line.as_bytes()));
        written.map_err(io)?;
        Ok(SessionLock { _file: file })
    }
}

/// "sandalyst ask, pid 1234 on laptop, since 13:05 UTC".
fn describe_self() -> String {
    let mut args = std::env::args();
    let program = args
        .next()
        .and_then(|a| {
            Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "sandalyst".into());
    let what = match args.next() {
        Some(sub) if !sub.starts_with('-') && sub.len() <= 20 => format!("{program} {sub}"),
        _ => program,
    };
    let host = crate::owner::owner_id()
        .split('/')
        .next()
        .unwrap_or("this machine")
        .to_string();
    format!(
        "{what}, pid {} on {host}, since {}",
        std::process::id(),
        chrono::Utc::now().format("%H:%M UTC")
    )
}

/// The lock file names this process (its second line is our owner id).
fn held_by_this_process(text: &str) -> bool {
    text.lines().nth(1) == Some(crate::owner::owner_id())
}

/// The holder's line as read from the file, made safe to print (it comes from disk).
fn holder_of(text: &str) -> String {
    let line: String = text
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(200)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if line.trim().is_empty() {
        "another process".into()
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_refused_naming_its_holder_and_freed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let held = SessionLock::try_acquire(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(LOCK)).unwrap();
        assert!(text.contains(crate::owner::owner_id()), "{text}");
        assert!(
            text.contains(&format!("pid {}", std::process::id())),
            "{text}"
        );
        // A second handle conflicts like a second process (flock is per open file).
        match SessionLock::try_acquire(dir.path()) {
            Err(LockError::Held { holder }) => {
                assert!(holder.contains(&format!("pid {}", std::process::id())));
                assert!(!holder.contains('\n'));
            }
            other => panic!("a held lock was taken again: {other:?}"),
        }
        drop(held);
        let again = SessionLock::try_acquire(dir.path()).expect("freed on drop");
        drop(again);
        assert!(dir.path().join(LOCK).exists(), "the file stays");
    }

    #[test]
    fn a_holder_line_from_disk_is_one_printable_line() {
        assert_eq!(holder_of(""), "another process");
        assert_eq!(holder_of("a\x1b]52;c;x\x07b\nowner"), "a?]52;c;x?b");
        assert_eq!(holder_of(&"x".repeat(500)).len(), 200);
    }
}
