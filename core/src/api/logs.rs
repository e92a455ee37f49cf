//! The log files both shells write: where they are (the platform's log folder, or
//! `SANDALYST_LOG_DIR`), what goes in them (`SANDALYST_LOG`, a filter such as `debug`
//! or `sandalyst=trace,info`; `info` by default), one file a day per shell with the
//! last [`KEPT`] kept, and a panic hook that writes the panic's report there before
//! the process goes down. What the core logs is a few events per ask (session opened,
//! ask started and ended, sandbox started, a provider's failures); keys never appear in
//! them: providers' messages are redacted before they are logged.

use std::path::PathBuf;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use super::environment::{LOG, LOG_DIR};

/// Daily files kept per shell (a week).
pub const KEPT: usize = 7;

/// The folder of the log files: `SANDALYST_LOG_DIR`, else `~/Library/Logs/Sandalyst`
/// on macOS, `%LOCALAPPDATA%\Sandalyst\logs` on Windows, and
/// `$XDG_STATE_HOME/sandalyst/logs` (`~/.local/state/...`) elsewhere.
pub fn log_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os(LOG_DIR).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if cfg!(target_os = "macos") {
        return dirs::home_dir().map(|h| h.join("Library").join("Logs").join("Sandalyst"));
    }
    if cfg!(windows) {
        return dirs::data_local_dir().map(|d| d.join("Sandalyst").join("logs"));
    }
    dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .map(|d| d.join("sandalyst").join("logs"))
}

/// How a shell logs.
pub struct Options {
    /// The files' prefix: `cli` writes `cli.2026-12-05.log`, `desktop` its own.
    pub shell: &'static str,
    /// Also write to stderr (the command line's `-v`, or `SANDALYST_LOG` set).
    pub stderr: bool,
}

/// What [`init`] set up: the folder written to (none when it cannot be), and what went
/// wrong (a folder that cannot be written, a filter that does not parse); the shell
/// runs either way.
pub struct Logging {
    pub dir: Option<PathBuf>,
    pub problem: Option<String>,
}

/// The filter of `SANDALYST_LOG` (an invalid one is said, and `info` used).
fn filter() -> (EnvFilter, Option<String>) {
    match std::env::var(LOG).ok().filter(|f| !f.trim().is_empty()) {
        None => (EnvFilter::new("info"), None),
        Some(f) => match EnvFilter::try_new(&f) {
            Ok(filter) => (filter, None),
            Err(e) => (
                EnvFilter::new("info"),
                Some(format!(
                    "{LOG}={f:?} is not a filter ({e}); logging at info"
                )),
            ),
        },
    }
}

/// Start logging for this process: the daily file in [`log_dir`], stderr when asked,
/// and the panic hook. Called once, first thing, by each shell.
pub fn init(options: Options) -> Logging {
    init_in(log_dir(), options)
}

/// [`init`] with the files in `dir` (none: no files).
fn init_in(dir: Option<PathBuf>, options: Options) -> Logging {
    let (file_filter, bad_filter) = filter();
    let mut problem = bad_filter;
    let file = dir.as_ref().and_then(|dir| {
        // Made first: the appender looks for old files to remove before it makes it.
        let appender = std::fs::create_dir_all(dir)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                tracing_appender::rolling::Builder::new()
                    .rotation(tracing_appender::rolling::Rotation::DAILY)
                    .filename_prefix(options.shell)
                    .filename_suffix("log")
                    .max_log_files(KEPT)
                    .build(dir)
                    .map_err(|e| e.to_string())
            });
        match appender {
            // Written as each event happens (not through a background thread): the
            // last lines before an exit or a crash are the ones a bug report needs.
            Ok(appender) => Some(
                tracing_subscriber::fmt::layer()
                    .with_writer(appender)
                    .with_ansi(false)
                    .with_filter(file_filter),
            ),
            Err(e) => {
                problem.get_or_insert(format!("cannot write logs in {}: {e}", dir.display()));
                None
            }
        }
    });
    let stderr = (options.stderr || std::env::var_os(LOG).is_some()).then(|| {
        use std::io::IsTerminal;
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .with_filter(filter().0)
    });
    let writing = file.is_some();
    // A second init (a test that starts the shell twice) keeps the first.
    let _ = tracing_subscriber::registry()
        .with(file)
        .with(stderr)
        .try_init();
    install_panic_hook();
    Logging {
        dir: dir.filter(|_| writing),
        problem,
    }
}

/// A panic's report (message, place, backtrace) to the log, then the default hook
/// (stderr), so a crash leaves something to attach to a bug report.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let backtrace = std::backtrace::Backtrace::force_capture();
        let thread = std::thread::current();
        tracing::error!(
            target: "sandalyst::panic",
            thread = thread.name().unwrap_or("unnamed"),
            "panic: {info}\n{backtrace}"
        );
        previous(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The only test of this binary that sets the process's subscriber and hook.
    #[test]
    fn a_panic_leaves_its_report_in_the_log_file() {
        let dir = tempfile::tempdir().unwrap();
        let logging = init_in(
            Some(dir.path().to_path_buf()),
            Options {
                shell: "test",
                stderr: false,
            },
        );
        assert_eq!(logging.dir.as_deref(), Some(dir.path()));
        assert!(logging.problem.is_none());
        let doomed = std::thread::Builder::new()
            .name("doomed".into())
            .spawn(|| panic!("forced for the test"))
            .unwrap();
        assert!(doomed.join().is_err());
        let mut text = String::new();
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                name.starts_with("test.") && name.ends_with(".log"),
                "{name}"
            );
            text.push_str(&std::fs::read_to_string(path).unwrap());
        }
        assert!(text.contains("ERROR"), "{text}");
        assert!(
            text.contains("panic: ") && text.contains("forced for the test"),
            "{text}"
        );
        assert!(text.contains("thread=\"doomed\""), "{text}");
        assert!(text.contains("src/api/logs.rs"), "the place: {text}");
    }
}
