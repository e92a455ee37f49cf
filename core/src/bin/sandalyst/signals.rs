//! Ctrl-C, SIGTERM and SIGHUP: the first cancels the current run and lets it clean up,
//! a second (or the end of the grace period) quits at once.

use super::*;

/// Waits for Ctrl-C, or (on Unix) SIGTERM or SIGHUP, which are handled the same way:
/// a `kill` or a closed terminal cancels the run and removes its container.
pub(crate) struct Interrupts {
    #[cfg(unix)]
    pub(crate) term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    pub(crate) hup: Option<tokio::signal::unix::Signal>,
}

impl Interrupts {
    pub(crate) fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            // SIGINT's handler too, now (tokio::signal::ctrl_c() below shares it).
            let _ = signal(SignalKind::interrupt());
            Interrupts {
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        Interrupts {}
    }

    /// The next interrupt: `Some(true)` for SIGTERM or SIGHUP (end the process),
    /// `Some(false)` for Ctrl-C; `None` when signals cannot be listened for.
    pub(crate) async fn next(&mut self) -> Option<bool> {
        #[cfg(unix)]
        {
            async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                r = tokio::signal::ctrl_c() => r.is_ok().then_some(false),
                _ = recv(&mut self.term) => Some(true),
                _ = recv(&mut self.hup) => Some(true),
            }
        }
        #[cfg(not(unix))]
        tokio::signal::ctrl_c().await.is_ok().then_some(false)
    }
}

/// How long the first interrupt's cancel and clean-up may take before the process
/// exits anyway (an engine that stopped answering must not keep it alive).
pub(crate) const GRACE: Duration = Duration::from_secs(10);

/// The first Ctrl-C (or SIGTERM, SIGHUP) cancels whatever token is current; a second
/// one quits at once, and so does the end of [`GRACE`].
pub(crate) fn on_ctrl_c(current: Arc<Mutex<Option<CancellationToken>>>) {
    on_signals(current, None)
}

/// [`on_ctrl_c`], where SIGTERM and SIGHUP also cancel `quit` (the chat ends after
/// the ask, where Ctrl-C stops only the ask).
pub(crate) fn on_signals(
    current: Arc<Mutex<Option<CancellationToken>>>,
    quit: Option<CancellationToken>,
) {
    // Listening from now on, not from whenever the task first runs: a signal that
    // came before would kill the process with nothing cleaned up.
    let mut interrupts = Interrupts::new();
    tokio::spawn(async move {
        while let Some(terminate) = interrupts.next().await {
            if let (true, Some(quit)) = (terminate, &quit) {
                quit.cancel();
            }
            match current.lock().unwrap().take() {
                Some(token) => {
                    eprintln!("\ncancelling (press Ctrl-C again to quit at once)...");
                    token.cancel();
                    // Not when only the ask stops (Ctrl-C in a chat): the chat goes on.
                    let ends_process = terminate || quit.is_none();
                    // A plain thread: it fires even if the async runtime is stuck.
                    ends_process.then(|| {
                        std::thread::spawn(|| {
                            std::thread::sleep(GRACE);
                            eprintln!(
                                "the clean-up did not finish in {} s; quitting",
                                GRACE.as_secs()
                            );
                            std::process::exit(exit::CANCELLED.into());
                        })
                    });
                }
                None => {
                    eprintln!();
                    std::process::exit(exit::CANCELLED.into());
                }
            }
        }
    });
}

/// `work`, unless `token` is cancelled first (then `None`).
pub(crate) async fn unless_cancelled<T>(
    token: &CancellationToken,
    work: impl std::future::Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        biased;
        _ = token.cancelled() => None,
        r = work => Some(r),
    }
}
