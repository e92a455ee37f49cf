//! A session's settings and the check of every limit where it enters the core.

use super::*;

/// A session's settings: what the agent may do and within which limits.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionConfig {
    /// The user's own instructions, added to the built-in ones.
    pub instructions: String,
    pub tools: ToolSet,
    /// Per ask.
    pub limits: Limits,
    pub sandbox: SandboxConfig,
    pub collect: CollectLimits,
    /// Send charts and figures back to a model that takes images.
    pub show_images: bool,
    /// The container is released after this long without an ask (it comes back on the next).
    pub idle_release: Duration,
    /// Largest workspace archive kept after an ask, in bytes.
    pub max_archive_bytes: u64,
    /// Which calls wait for the analyst before they run.
    pub approval: crate::approval::ApprovalMode,
    /// Which links inside a dropped folder are followed.
    pub follow_links: crate::workspace::FollowLinks,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            instructions: String::new(),
            tools: ToolSet::default(),
            limits: Limits::default(),
            sandbox: SandboxConfig::default(),
            collect: CollectLimits::default(),
            show_images: true,
            idle_release: Duration::from_secs(30 * 60),
            max_archive_bytes: 2 << 30,
            approval: Default::default(),
            follow_links: Default::default(),
        }
    }
}

impl SessionConfig {
    /// The sandbox these settings start: the workspace (a tmpfs, counted against the
    /// memory limit) at most half the memory, so the code keeps room to run whoever
    /// set the two (a flag, the settings page, a session saved by an older version).
    pub fn sandbox_config(&self) -> SandboxConfig {
        let mut sandbox = self.sandbox.clone();
        let half = u64::try_from(sandbox.memory_bytes).unwrap_or(0) / 2;
        sandbox.workspace_bytes = sandbox.workspace_bytes.min(half);
        sandbox
    }

    /// These settings as a session keeps them: checked ([`SessionConfig::validate`]),
    /// with the sandbox's invariants applied.
    pub fn settled(mut self) -> Result<SessionConfig, SessionError> {
        self.sandbox = self.sandbox_config();
        self.validate()?;
        Ok(self)
    }

    /// Refuse limits that cannot work, where they enter the core.
    pub fn validate(&self) -> Result<(), SessionError> {
        let bad = |m: &str| Err(SessionError::BadInput { message: m.into() });
        let l = &self.limits;
        if l.max_turns == 0 || l.max_turns > 1000 {
            return bad("the turn limit must be between 1 and 1000");
        }
        if l.call_timeout < Duration::from_secs(1) || l.wall_time < Duration::from_secs(1) {
            return bad("time limits must be at least one second");
        }
        if l.max_cost_usd.is_some_and(|c| !(c > 0.0 && c.is_finite())) {
            return bad("the cost budget must be a positive amount");
        }
        if self.sandbox.memory_bytes < 128 << 20 {
            return bad("the sandbox needs at least 128 MiB of memory");
        }
        if self.sandbox.nano_cpus < 10_000_000 {
            return bad("the sandbox needs at least 0.01 CPU");
        }
        if self.sandbox.pids_limit < 16 {
            return bad("the sandbox needs a process limit of at least 16");
        }
        if self.sandbox.workspace_bytes < 1 << 20 || self.sandbox.tmp_bytes < 1 << 20 {
            return bad("the sandbox's workspace and /tmp need at least 1 MiB each");
        }
        if self.sandbox.output_cap_bytes < 1 << 10 {
            return bad("the output cap of a call must be at least 1 KiB");
        }
        if !self.tools.python && !self.tools.shell {
            return bad("allow at least one tool (python or shell)");
        }
        if self.idle_release < Duration::from_secs(1) {
            return bad("the idle release time must be at least one second");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_checked_where_they_enter() {
        let mut c = SessionConfig::default();
        assert!(c.validate().is_ok());
        c.limits.max_turns = 0;
        assert_eq!(c.validate().unwrap_err().code(), "bad_input");
        let mut c = SessionConfig::default();
        c.limits.max_cost_usd = Some(f64::NAN);
        assert!(c.validate().is_err());
        let c = SessionConfig {
            tools: ToolSet {
                python: false,
                shell: false,
            },
            ..SessionConfig::default()
        };
        assert!(c.validate().is_err());
    }

    #[test]
    fn the_workspace_is_at_most_half_the_memory_however_it_was_set() {
        let mut c = SessionConfig::default();
        c.sandbox.memory_bytes = 512 << 20;
        assert_eq!(c.sandbox.workspace_bytes, 1 << 30, "the default is larger");
        assert_eq!(c.sandbox_config().workspace_bytes, 256 << 20);
        let settled = c.clone().settled().unwrap();
        assert_eq!(settled.sandbox.workspace_bytes, 256 << 20);
        assert_eq!(settled.sandbox.memory_bytes, 512 << 20);
        // A workspace already smaller stays as it is.
        c.sandbox.workspace_bytes = 64 << 20;
        assert_eq!(c.sandbox_config().workspace_bytes, 64 << 20);
        // Too little memory is still refused, not hidden by the cap.
        c.sandbox.memory_bytes = 64 << 20;
        assert_eq!(c.settled().unwrap_err().code(), "bad_input");
    }
}
