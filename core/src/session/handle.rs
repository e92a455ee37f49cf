//! A running ask as its caller holds it: id, events, cancel, outcome, and the one
//! event pump every front end uses.

use super::*;

/// How an ask ended, for the caller that owns its handle.
#[derive(Clone, Debug, Serialize)]
pub struct AskOutcome {
    pub session_id: SessionId,
    pub ask_id: AskId,
    pub status: RunStatus,
    pub turns: u32,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    /// The model's final answer, when there is one.
    pub answer: Option<String>,
    /// Where the session's outputs are on the host (`<session>/outputs`).
    pub outputs_dir: PathBuf,
    /// Every file in `output/` after the ask.
    pub outputs: Vec<CollectedFile>,
    /// The error behind a `Failed` status, typed.
    pub error: Option<SessionError>,
}

/// A running ask: its id, its events as they happen, a cancel and the outcome.
pub struct AskHandle {
    pub ask_id: AskId,
    pub events: mpsc::UnboundedReceiver<Event>,
    pub(super) cancel: CancellationToken,
    pub(super) task: tokio::task::JoinHandle<AskOutcome>,
}

impl AskHandle {
    /// Stop the model and interrupt the running code at once.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// A token that cancels this ask, for whoever keeps it apart from the handle.
    pub fn canceller(&self) -> CancellationToken {
        self.cancel.clone()
    }

    pub async fn outcome(self) -> AskOutcome {
        self.task.await.expect("the ask task panicked")
    }

    /// Every event of this ask to `emit` as it happens, with `setup`'s too (see
    /// [`pump`]); then the outcome.
    pub async fn follow(
        mut self,
        setup: Option<broadcast::Receiver<Event>>,
        emit: &(dyn Fn(Event) + Send + Sync),
    ) -> AskOutcome {
        let task = &mut self.task;
        let done = async { task.await.expect("the ask task panicked") };
        pump(done, &mut self.events, setup, emit).await
    }
}

/// The one event pump: while `work` (an ask) runs, each of its `events` goes to
/// `emit` as it happens, and with `setup` (a [`Session::subscribe`] taken before the
/// work began) the session's own events too (set-up, staging: those of no ask).
/// What is still queued when the work ends follows it; then the work's result.
pub async fn pump<T>(
    work: impl std::future::Future<Output = T>,
    events: &mut mpsc::UnboundedReceiver<Event>,
    mut setup: Option<broadcast::Receiver<Event>>,
    emit: &(dyn Fn(Event) + Send + Sync),
) -> T {
    tokio::pin!(work);
    let result = loop {
        tokio::select! {
            r = &mut work => break r,
            Some(ev) = events.recv() => emit(ev),
            Some(ev) = next_setup(&mut setup) => emit(ev),
        }
    };
    while let Ok(ev) = events.try_recv() {
        emit(ev);
    }
    while let Some(ev) = setup.as_mut().and_then(|rx| rx.try_recv().ok()) {
        if ev.ask_id.is_none() {
            emit(ev);
        }
    }
    result
}

/// The next event of no ask from `setup`; never, when there is no `setup` (the pump
/// then waits on the ask alone).
pub(super) async fn next_setup(setup: &mut Option<broadcast::Receiver<Event>>) -> Option<Event> {
    match setup {
        Some(rx) => recv_setup(rx).await,
        None => std::future::pending().await,
    }
}

/// The next event of no ask; `None` once the session's events end.
pub(super) async fn recv_setup(rx: &mut broadcast::Receiver<Event>) -> Option<Event> {
    use broadcast::error::RecvError;
    loop {
        match rx.recv().await {
            Ok(ev) if ev.ask_id.is_none() => return Some(ev),
            Ok(_) | Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => return None,
        }
    }
}
