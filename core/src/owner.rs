//! Which process owns a run or a container, and whether that process still lives.
//!
//! Runs and containers record their owner as `host/pid/start-time` (pids are reused,
//! start times are not), so a later start can tell a live run of another process
//! from the leftovers of one that was killed.

use std::sync::OnceLock;

/// This process's owner id, read once: clean-up compares it with every label.
pub fn owner_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let pid = std::process::id();
        format!("{}/{}/{}", hostname(), pid, start_time(pid).unwrap_or(0))
    })
}

fn hostname() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "unknown".into())
    })
}

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

/// True when `owner` names a process on this host that is no longer running.
/// Owners on other hosts (a shared engine) are never judged gone.
pub fn owner_is_gone(owner: &str) -> bool {
    let mut parts = owner.split('/');
    let (Some(host), Some(pid), Some(start)) = (parts.next(), parts.next(), parts.next()) else {
        return true;
    };
    if host != hostname() {
        return false;
    }
    let Ok(pid) = pid.parse::<u32>() else {
        return true;
    };
    start_time(pid).map(|s| s.to_string()) != Some(start.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_lives_and_a_dead_one_does_not() {
        assert!(!owner_is_gone(owner_id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let start = start_time(pid).unwrap_or(1);
        child.wait().unwrap();
        assert!(owner_is_gone(&format!("{}/{pid}/{start}", hostname())));
        assert!(!owner_is_gone("some-other-host/1/1"));
        assert!(owner_is_gone("garbage"));
    }
}
