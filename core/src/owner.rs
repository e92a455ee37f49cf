//! Which process owns a run or a container, and whether that process still lives.
//!
//! Runs and containers record their owner as `host/pid/token` (pids are reused,
//! tokens are not), so a later start can tell a live run of another process from the
//! leftovers of one that was killed. On Linux the token is the process's start time
//! (from `/proc`); elsewhere it is random.
//!
//! Liveness works the same on Linux, macOS and Windows: each process holds an
//! exclusive lock on a file of its own (`<temp>/sandalyst-owners/<pid>-<token>.lock`)
//! for as long as it lives, and the operating system drops the lock when it dies,
//! however it dies. An owner whose file can be locked by someone else is gone. On
//! Linux, an owner without a lock file (another user's temp folder, or a label from
//! an older version) is judged from `/proc` as before.

use std::fs::File;
use std::path::PathBuf;
use std::sync::OnceLock;

/// This process's owner id, made once: clean-up compares it with every label. The
/// first call also takes this process's lock file (see the module notes).
pub fn owner_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let pid = std::process::id();
        let token = start_time(pid).unwrap_or_else(rand::random::<u64>);
        hold_lock(pid, token);
        format!("{}/{}/{}", hostname(), pid, token)
    })
}

fn hostname() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        let from_proc = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_string());
        from_proc
            .or_else(|| std::env::var("COMPUTERNAME").ok())
            .or_else(|| std::env::var("HOSTNAME").ok())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unknown".into())
    })
}

/// Where owners keep their lock files.
fn owners_dir() -> PathBuf {
    std::env::temp_dir().join("sandalyst-owners")
}

/// The lock file of the owner `pid`/`token`.
pub fn lock_path(pid: u32, token: u64) -> PathBuf {
    owners_dir().join(format!("{pid}-{token}.lock"))
}

/// Create and lock this process's file; the lock is held until the process ends.
fn hold_lock(pid: u32, token: u64) {
    static HELD: OnceLock<Option<File>> = OnceLock::new();
    HELD.get_or_init(|| {
        let dir = owners_dir();
        std::fs::create_dir_all(&dir).ok()?;
        #[cfg(unix)]
        {
            // Shared by the users of a machine (like /tmp itself).
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777));
        }
        let file = File::create(lock_path(pid, token)).ok()?;
        file.try_lock().ok()?;
        Some(file)
    });
}

#[cfg(target_os = "linux")]
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22, counted after the parenthesised command name, which may hold spaces.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn start_time(_pid: u32) -> Option<u64> {
    None
}

/// What the owner's lock file says: Some(true) gone, Some(false) alive, None no file.
fn lock_says_gone(pid: u32, token: u64) -> Option<bool> {
    let path = lock_path(pid, token);
    let file = File::open(&path).ok()?;
    match file.try_lock() {
        Ok(()) => {
            // Nobody holds it: the owner is gone; its file goes too.
            let _ = file.unlock();
            drop(file);
            let _ = std::fs::remove_file(&path);
            Some(true)
        }
        Err(std::fs::TryLockError::WouldBlock) => Some(false),
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// True when `owner` names a process on this host that is no longer running.
/// Owners on other hosts (a shared engine) are never judged gone.
pub fn owner_is_gone(owner: &str) -> bool {
    let mut parts = owner.split('/');
    let (Some(host), Some(pid), Some(token)) = (parts.next(), parts.next(), parts.next()) else {
        return true;
    };
    if host != hostname() {
        return false;
    }
    let (Ok(pid), Ok(token)) = (pid.parse::<u32>(), token.parse::<u64>()) else {
        return true;
    };
    if let Some(gone) = lock_says_gone(pid, token) {
        return gone;
    }
    gone_without_lock(pid, token)
}

#[cfg(target_os = "linux")]
fn gone_without_lock(pid: u32, token: u64) -> bool {
    start_time(pid) != Some(token)
}

#[cfg(not(target_os = "linux"))]
fn gone_without_lock(_pid: u32, _token: u64) -> bool {
    // No lock file: the process never made one or it was removed with the process.
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_lives_and_garbage_or_other_hosts_are_judged() {
        assert!(!owner_is_gone(owner_id()));
        let token: u64 = owner_id().rsplit('/').next().unwrap().parse().unwrap();
        assert!(lock_path(std::process::id(), token).exists());
        assert!(!owner_is_gone("some-other-host/1/1"));
        assert!(owner_is_gone("garbage"));
    }
}
