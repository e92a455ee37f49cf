//! The exit codes a script branches on, decided from typed outcomes (the ask's
//! [`RunStatus`], the error's type), never from a message's words.

use super::*;

/// The command did what it was asked.
pub(crate) const DONE: u8 = 0;
/// An error before or outside an ask: bad input, no engine, no image, a missing session.
pub(crate) const ERROR: u8 = 1;
/// A usage error (an unknown flag, a missing argument): clap's own code.
pub(crate) const USAGE: u8 = 2;
/// The ask (or re-run) ended without its answer: incomplete, stopped on a limit, failed.
pub(crate) const INCOMPLETE: u8 = 3;
/// Cancelled by Ctrl-C, SIGTERM or SIGHUP.
pub(crate) const CANCELLED: u8 = 130;

/// The code of an ask's (or run's, or re-run's) status.
pub(crate) fn of_status(status: &RunStatus) -> u8 {
    match status {
        RunStatus::Finished => DONE,
        RunStatus::Cancelled => CANCELLED,
        RunStatus::MaxTurns { .. }
        | RunStatus::TimeLimit { .. }
        | RunStatus::CostLimit { .. }
        | RunStatus::Failed { .. }
        | RunStatus::Interrupted
        | RunStatus::Incomplete { .. } => INCOMPLETE,
    }
}

/// The code of an error that ended the command before an ask had a status.
pub(crate) fn of_error(e: &anyhow::Error) -> u8 {
    // An API error carries its code; any other chain is read for a typed cause.
    let own = e.chain().find_map(|c| c.downcast_ref::<api::Error>());
    match own.map_or_else(|| api::error::code_of(e), |own| own.code) {
        api::ErrorCode::Cancelled => CANCELLED,
        _ => ERROR,
    }
}

/// The help's closing section (`-h`): the exit codes.
pub(crate) fn codes_help() -> String {
    format!(
        "Exit codes:\n  {DONE}    done (the ask finished with the outputs it names)\n  {ERROR}    error (bad input, no engine or image, a missing session, ...)\n  {USAGE}    usage error (an unknown flag, a missing argument)\n  {INCOMPLETE}    the ask ended incomplete, on a limit, or failed (a re-run: a call failed)\n  {CANCELLED}  cancelled (Ctrl-C, SIGTERM, SIGHUP)\n"
    )
}

/// `--help`'s closing section: the exit codes, every environment variable read, and
/// where the logs are.
pub(crate) fn long_help() -> String {
    let logs = match api::logs::log_dir() {
        Some(d) => d.display().to_string(),
        None => "none (this system has no log folder; set SANDALYST_LOG_DIR)".into(),
    };
    format!(
        "{}\nEnvironment:\n{}\nLogs: {logs}\n  one file a day (cli.YYYY-MM-DD.log), the last {} kept\n",
        codes_help(),
        api::environment::help_text(),
        api::logs::KEPT
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_but_finished_and_cancelled_is_incomplete() {
        assert_eq!(of_status(&RunStatus::Finished), 0);
        assert_eq!(of_status(&RunStatus::Cancelled), 130);
        let incomplete = RunStatus::Incomplete { problems: vec![] };
        assert_eq!(of_status(&incomplete), 3);
        let failed = RunStatus::Failed {
            message: "x".into(),
        };
        assert_eq!(of_status(&failed), 3);
        assert_eq!(of_error(&anyhow::Error::new(api::Cancelled)), 130);
        // Words are not a type: an error that says "cancelled" is an error.
        assert_eq!(of_error(&anyhow::anyhow!("cancelled")), 1);
    }
}
