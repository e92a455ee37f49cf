//! The inputs' shape in an LLM's first turn: the offline analyst's inspection (columns,
//! types, rows, missing values, a few rows, the time column and its interval) run in
//! the sandbox before the model is asked anything, and put in the first user message,
//! so a small model's first call can do real work instead of `df.head()`; and the cell
//! that loads them ([`crate::analyst::input_profile`]), run as the ask's first call.

use super::ask::AskHost;
use super::*;

/// The longest the profile may take; past it the ask goes on without one.
const PROFILE_TIMEOUT: Duration = Duration::from_secs(120);
/// The most of the profile's text the first message carries.
const MAX_PROFILE_CHARS: usize = 6000;

impl Session {
    /// The profile of the session's inputs as a note for the first message, and the
    /// cell that loads them; `None` (no inputs, or the code failed: the event says why).
    pub(super) async fn profile_inputs(
        &self,
        host: &AskHost<'_>,
        sandbox: &dyn Sandbox,
        cancel: &CancellationToken,
    ) -> Option<(String, Option<String>)> {
        if self.meta().files.is_empty() {
            return None;
        }
        let code = crate::analyst::input_profile_code();
        let started = Instant::now();
        let ran = sandbox
            .python(&code, PROFILE_TIMEOUT, cancel, &|_, _| {})
            .await;
        let duration_ms = started.elapsed().as_millis() as u64;
        let failed = match &ran {
            Err(e) => Some(format!("{e:#}")),
            Ok(r) if r.status != crate::sandbox::ExecStatus::Ok => Some(
                r.traceback
                    .as_deref()
                    .and_then(|t| t.lines().rev().find(|l| !l.trim().is_empty()))
                    .unwrap_or("the profile did not finish")
                    .to_string(),
            ),
            Ok(_) => None,
        };
        let profile = crate::analyst::input_profile(&ran.map(|r| r.stdout).unwrap_or_default());
        let text = profile.text;
        let tables = text.matches("\n== ").count() as u32;
        host.emit(EventKind::InputsProfiled {
            tables,
            duration_ms,
            failed: failed.clone(),
        });
        if failed.is_some() || text.trim().is_empty() {
            return None;
        }
        let note = crate::protocol::app_note(&format!(
            "The inputs, profiled before your first turn (no need to print their head, info or dtypes again):\n{}",
            crate::agent::observe::shorten(text.trim(), MAX_PROFILE_CHARS, "read the files for the rest")
        ));
        Some((note, profile.load_cell))
    }
}
