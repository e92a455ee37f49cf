//! Sessions: what the analyst sees as one conversation with their data. A session
//! owns one sandbox, one workspace and one conversation; the command line and the
//! desktop both drive it through this API.
//!
//! - Adding files starts the sandbox in the background, so it is warm (kernel up,
//!   files staged) while the user is still typing.
//! - [`Session::ask`] runs the agent loop on the same conversation, kernel and files
//!   and returns an [`AskHandle`]: the ask's id, its events, a cancel and the outcome.
//!   A second ask while one runs is refused with [`SessionError::Busy`].
//! - Everything is on disk as it happens (the run folder, see [`crate::store`]): a
//!   session closed, released after idling or crashed reopens in a new container with
//!   its workspace restored and its conversation intact, and the model is told that
//!   the Python state is gone.
//! - One process writes a session at a time: it holds the session's lock
//!   ([`crate::store::lock`]) from the first write (an ask, files added or removed, a
//!   rename, new settings, a sandbox start) for as long as a sandbox or an ask is
//!   live, and lets go when the sandbox is released. Opening a session to look at it
//!   takes no lock, so a window that only shows a session never stops a terminal from
//!   asking it. Another process that wants to write gets
//!   [`SessionError::SessionBusy`] naming the owner. Whenever this process takes the
//!   lock it reads the session again from disk, since another may have asked meanwhile.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use std::sync::Arc;
//! use sandalyst::session::{DockerFactory, SessionConfig, Sessions};
//! let sessions = Sessions::new(sandalyst::store::default_root()?, Arc::new(DockerFactory))?;
//! let session = sessions.create(SessionConfig::default()).await?;
//! session.add_files(vec!["examples/building_energy.csv".into()]).await?;
//! let model = Box::new(sandalyst::analyst::OfflineAnalyst::new());
//! let mut ask = session.ask("Find anomalies".into(), model)?;
//! while let Some(event) = ask.events.recv().await {
//!     println!("{}", serde_json::to_string(&event)?);
//! }
//! println!("{}", ask.outcome().await.status);
//! # Ok(()) }
//! ```

mod ask;
mod config;
mod disk;
mod error;
mod handle;
mod inputs;
mod lifecycle;
mod profile;
mod recover;
mod registry;
mod starting;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

#[cfg(any(test, feature = "test-support"))]
pub use crate::sandbox::FakeFactory;
pub use crate::sandbox::{DockerFactory, SandboxFactory, SetupSink};
pub use config::SessionConfig;
pub use error::{ErrorInfo, SessionError};
pub use handle::{pump, AskHandle, AskOutcome};
pub use inputs::Added;
pub use registry::{SessionSummary, Sessions};

// The parts of one session, each in its room, see each other's helpers.
use disk::*;
use handle::*;
use starting::Starting;

use crate::agent::instructions::{self, InputSummary};
use crate::agent::{
    Agent, BoxFuture, Event, EventKind, Host, Limits, RunStatus, SetupStage, ToolSet,
};
use crate::approval;
use crate::model::{Item, Model, Usage};
use crate::protocol::{
    ArchiveProblem, AskId, CallId, GoneInput, InputNote, Notice, SessionId, NOTICE_PATHS_SHOWN,
};
use crate::sandbox::{Sandbox, SandboxConfig};
use crate::store::lock::{LockError, SessionLock};
use crate::store::{
    ArchiveCheck, AskMeta, Provenance, RunDir, RunMeta, StagedFile, Store, ARCHIVE, FIGURES,
    SETTINGS,
};
use crate::workspace::{
    CollectLimits, CollectedFile, CopyReason, Manifest, StagedInput, StagingMethod,
};

/// One conversation. Cheap to clone; every clone is the same session.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

struct Inner {
    id: SessionId,
    dir: PathBuf,
    factory: Arc<dyn SandboxFactory>,
    config: Mutex<SessionConfig>,
    run: Mutex<RunDir>,
    /// The conversation, every ask's items in order.
    items: Mutex<Vec<Item>>,
    /// The sandbox and which inputs it holds; the lock is held while it starts, so an
    /// ask waits for a start already under way instead of starting a second one.
    sandbox: tokio::sync::Mutex<Option<Live>>,
    busy: AtomicBool,
    events: broadcast::Sender<Event>,
    /// Notes for the model, given with the next tool result or the next ask.
    notes: Mutex<Vec<String>>,
    /// Since the last ask ended or files were added (for the idle release).
    last_used: Mutex<Instant>,
    asks: AtomicU64,
    closed: AtomicBool,
    /// The workspace archive on disk matches the sandbox (nothing ran since).
    archived: AtomicBool,
    /// Saves of `run.json` one at a time, each writing the state as of its turn.
    saving: tokio::sync::Mutex<()>,
    /// The session's lock while this process owns it (see the module notes).
    lock: Mutex<Option<SessionLock>>,
    /// Takings of the lock (and reads of the session from disk) one at a time.
    claiming: Mutex<()>,
    /// Cancelled by [`Session::close`]: a start, a staging or a hash under way stops.
    closing: CancellationToken,
    /// The calls waiting for the analyst, and the tools always allowed.
    approvals: crate::approval::Gate,
    /// The inputs as the first ask's instructions described them: later asks of this
    /// process describe the same, so the system prompt stays byte for byte the same
    /// and the server's prompt cache holds (files added later are told in notes).
    described: Mutex<Option<Vec<InputSummary>>>,
}

struct Live {
    sandbox: Arc<dyn Sandbox>,
    staged: BTreeSet<String>,
    /// How long its start took (ms), and when it was ready.
    ready: (u64, Instant),
}

impl Session {
    fn new(
        run: RunDir,
        config: SessionConfig,
        items: Vec<Item>,
        factory: Arc<dyn SandboxFactory>,
    ) -> Session {
        let mut notes = Vec::new();
        if !items.is_empty() {
            // What became of the files is said when the sandbox starts (see start_sandbox).
            notes.push(REOPENED.to_string());
        }
        let asks = run.meta.asks.len() as u64;
        Session {
            inner: Arc::new(Inner {
                id: run.meta.id.clone().into(),
                dir: run.path.clone(),
                factory,
                config: Mutex::new(config),
                run: Mutex::new(run),
                items: Mutex::new(items),
                sandbox: tokio::sync::Mutex::new(None),
                busy: AtomicBool::new(false),
                events: broadcast::channel(1024).0,
                notes: Mutex::new(notes),
                last_used: Mutex::new(Instant::now()),
                asks: AtomicU64::new(asks),
                closed: AtomicBool::new(false),
                archived: AtomicBool::new(false),
                saving: tokio::sync::Mutex::new(()),
                lock: Mutex::new(None),
                claiming: Mutex::new(()),
                closing: CancellationToken::new(),
                approvals: Default::default(),
                described: Mutex::new(None),
            }),
        }
    }

    pub fn id(&self) -> &SessionId {
        &self.inner.id
    }

    /// The session's folder: `outputs/`, `transcript.jsonl`, `run.json`, `figures/`.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    pub fn outputs_dir(&self) -> PathBuf {
        self.inner.dir.join(crate::store::OUTPUTS)
    }

    pub fn is_busy(&self) -> bool {
        self.inner.busy.load(Ordering::SeqCst)
    }

    /// This process owns the session now (holds its lock): it may write it.
    pub fn is_owned(&self) -> bool {
        self.inner.lock.lock().unwrap().is_some()
    }

    /// Take the session's lock for this process (reading the session again from
    /// disk), unless it holds it already. Refused with [`SessionError::SessionBusy`]
    /// while another process owns it. Every write takes it; a front end may take it
    /// first to say "busy" before anything else happens.
    pub async fn claim(&self) -> Result<(), SessionError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || inner.claim())
            .await
            .map_err(|e| SessionError::Storage {
                message: format!("taking the session's lock: {e}"),
            })?
    }

    /// Let the lock go when nothing keeps it: no ask, no sandbox live or starting.
    fn let_go_if_idle(&self) {
        // A slot that is taken means a sandbox is starting or in use: it keeps the lock.
        if let Ok(slot) = self.inner.sandbox.try_lock() {
            self.let_go_with(&slot);
        }
    }

    /// [`Self::let_go_if_idle`] for a caller that holds the sandbox slot.
    fn let_go_with(&self, slot: &Option<Live>) {
        let mut lock = self.inner.lock.lock().unwrap();
        // Read under the lock's mutex: an ask sets `busy` under it before it relies
        // on holding the lock.
        if slot.is_none() && !self.is_busy() {
            lock.take();
        }
    }

    /// Mark the session busy (one ask at a time). Set under the lock's mutex, so a
    /// concurrent [`Self::let_go_with`] either sees it or has let go before the ask claims.
    fn start_busy(&self) -> Result<(), SessionError> {
        {
            let _lock = self.inner.lock.lock().unwrap();
            if self.inner.busy.swap(true, Ordering::SeqCst) {
                return Err(SessionError::Busy);
            }
        }
        Ok(())
    }

    fn end_busy(&self) {
        self.inner.busy.store(false, Ordering::SeqCst);
        self.let_go_if_idle();
    }

    /// The session's metadata as saved (title, files, asks, outputs).
    pub fn meta(&self) -> RunMeta {
        self.inner.run.lock().unwrap().meta.clone()
    }

    /// The conversation so far.
    pub fn items(&self) -> Vec<Item> {
        self.inner.items.lock().unwrap().clone()
    }

    pub fn config(&self) -> SessionConfig {
        self.inner.config.lock().unwrap().clone()
    }

    /// Change the settings; they apply from the next ask (sandbox ones from the next
    /// container).
    pub async fn set_config(&self, config: SessionConfig) -> Result<(), SessionError> {
        let config = config.settled()?;
        self.claim().await?;
        *self.inner.config.lock().unwrap() = config;
        let saved = self.save_settings().await;
        self.let_go_if_idle();
        saved
    }

    /// Answer a call of this session's ask that waits for the analyst.
    pub fn answer_approval(
        &self,
        call_id: &CallId,
        answer: approval::Answer,
    ) -> Result<(), approval::AnswerError> {
        self.inner.approvals.answer(call_id, answer)
    }

    /// The calls waiting for the analyst now.
    pub fn pending_approvals(&self) -> Vec<CallId> {
        self.inner
            .approvals
            .pending()
            .into_iter()
            .map(CallId::from)
            .collect()
    }

    /// Every event of the session: set-up, staging, and every ask's events.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }

    /// The session's own events (set-up, staging, engine errors: those of no ask) to
    /// `emit` as they come, until the session's events end or the task is aborted.
    pub fn watch(&self, emit: impl Fn(Event) + Send + 'static) -> tokio::task::JoinHandle<()> {
        let mut rx = self.subscribe();
        tokio::spawn(async move {
            while let Some(ev) = recv_setup(&mut rx).await {
                emit(ev);
            }
        })
    }

    fn note(&self, text: String) {
        self.inner.notes.lock().unwrap().push(text);
    }

    fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.inner.notes.lock().unwrap())
    }

    fn touch(&self) {
        *self.inner.last_used.lock().unwrap() = Instant::now();
    }

    fn broadcast(&self, ask_id: Option<&str>, kind: EventKind) {
        let _ = self.inner.events.send(Event::now(self.id(), ask_id, kind));
    }

    fn notice(&self, ask_id: Option<&str>, notice: Notice) {
        self.broadcast(ask_id, EventKind::Notice(notice));
    }
}

/// Blocking file work off the async runtime.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    tokio::task::spawn_blocking(f).await?
}
