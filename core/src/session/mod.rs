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
//! let model = Box::new(sandalyst::model::offline::OfflineAnalyst::new());
//! let mut ask = session.ask("Find anomalies".into(), model)?;
//! while let Some(event) = ask.events.recv().await {
//!     println!("{}", serde_json::to_string(&event)?);
//! }
//! println!("{}", ask.outcome().await.status);
//! # Ok(()) }
//! ```

mod error;
mod recover;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

pub use crate::sandbox::{DockerFactory, FakeFactory, SandboxFactory, SetupSink};
pub use error::{ErrorInfo, SessionError};

use crate::agent::instructions::{self, InputSummary};
use crate::agent::{Agent, Event, EventKind, Host, Limits, RunStatus, SetupStage, ToolSet};
use crate::model::{Item, Model, Usage};
use crate::sandbox::{Sandbox, SandboxConfig};
use crate::store::lock::{LockError, SessionLock};
use crate::store::{
    ArchiveCheck, AskMeta, Provenance, RunDir, RunMeta, StagedFile, Store, ARCHIVE, FIGURES,
    SETTINGS,
};
use crate::workspace::{
    CollectLimits, CollectedFile, CopyReason, Manifest, StagedInput, StagingMethod,
};

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
        }
    }
}

impl SessionConfig {
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

/// At most this many notes about an add's folders are said (the rest as a count).
const MAX_NOTES: usize = 50;

/// What [`Session::add_inputs`] staged, and what it said about the folders' entries.
#[derive(Clone, Debug, Serialize)]
pub struct Added {
    pub files: Vec<StagedFile>,
    /// One line each: "input/docs/latest.csv -> /data/x.csv (a link, followed)",
    /// "left out input/docs/pipe: it is a named pipe (FIFO); ...".
    pub notes: Vec<String>,
}

/// A session as the history list shows it.
#[derive(Clone, Debug, Serialize)]
pub struct SessionSummary {
    pub id: String,
    pub title: String,
    pub created: String,
    pub asks: usize,
    /// The latest ask's status; `None` while one runs or before the first.
    pub status: Option<RunStatus>,
    pub files: Vec<StagedFile>,
    /// Why the session's folder cannot be read, when it cannot (it is listed all the
    /// same, so nothing disappears from the history without a word).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// How an ask ended, for the caller that owns its handle.
#[derive(Clone, Debug, Serialize)]
pub struct AskOutcome {
    pub session_id: String,
    pub ask_id: String,
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
    pub ask_id: String,
    pub events: mpsc::UnboundedReceiver<Event>,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<AskOutcome>,
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
}

/// The app's sessions: one place that creates, opens, lists and deletes them.
#[derive(Clone)]
pub struct Sessions {
    store: Arc<Store>,
    factory: Arc<dyn SandboxFactory>,
    open: Arc<Mutex<HashMap<String, Session>>>,
}

impl Sessions {
    /// Sessions stored under `root`; sessions left mid-ask by a process that died are
    /// marked interrupted.
    pub fn new(root: PathBuf, factory: Arc<dyn SandboxFactory>) -> anyhow::Result<Sessions> {
        let store = Store::open(root)?;
        store.mark_interrupted()?;
        Ok(Sessions {
            store: Arc::new(store),
            factory,
            open: Arc::default(),
        })
    }

    pub fn root(&self) -> &Path {
        self.store.root()
    }

    pub async fn create(&self, config: SessionConfig) -> Result<Session, SessionError> {
        config.validate()?;
        let store = self.store.clone();
        let (run, lock) = blocking(move || {
            let run = store.create_run(RunMeta {
                created: chrono::Utc::now().to_rfc3339(),
                ..RunMeta::default()
            })?;
            // Nobody else knows the new id yet: the lock is free.
            let lock = SessionLock::try_acquire(&run.path)?;
            Ok((run, lock))
        })
        .await
        .map_err(SessionError::storage)?;
        let session = Session::new(run, config, Vec::new(), self.factory.clone());
        *session.inner.lock.lock().unwrap() = Some(lock);
        let saved = session.save_settings().await;
        session.let_go_if_idle();
        saved?;
        self.open
            .lock()
            .unwrap()
            .insert(session.id().to_string(), session.clone());
        Ok(session)
    }

    /// The session `id`: the open one, or reopened from disk (no container yet: one
    /// starts on the next ask or file, with the last workspace restored). Opening takes
    /// no lock and writes nothing, except that an ask left in progress by a process
    /// that is gone (its lock is free) is marked interrupted, under the lock. A session
    /// open here but owned by no process is read again, as another may have asked it.
    pub async fn open(&self, id: &str) -> Result<Session, SessionError> {
        let not_found = |_| SessionError::NotFound { id: id.into() };
        let cached = self.open.lock().unwrap().get(id).cloned();
        if let Some(s) = cached {
            let inner = s.inner.clone();
            blocking(move || inner.refresh()).await.map_err(not_found)?;
            return Ok(s);
        }
        let (store, owned) = (self.store.clone(), id.to_string());
        let loaded = blocking(move || {
            let run = store.open_run(&owned)?;
            load_for_viewing(&run.path)
        })
        .await
        .map_err(not_found)?;
        let unreadable = loaded.unreadable;
        let session = Session::new(
            loaded.run,
            loaded.config.unwrap_or_default(),
            loaded.items,
            self.factory.clone(),
        );
        if unreadable > 0 {
            // Nothing is left out without a word (a cut last line is set aside and
            // reported at the next ask).
            session.note(format!(
                "{unreadable} line(s) of the saved conversation could not be read and are left out of it (kept on disk)."
            ));
        }
        let mut open = self.open.lock().unwrap();
        Ok(open.entry(id.to_string()).or_insert(session).clone())
    }

    /// Every session, newest first; folders that cannot be read come last, with why.
    pub fn list(&self) -> anyhow::Result<Vec<SessionSummary>> {
        let listing = self.store.scan()?;
        let mut all: Vec<SessionSummary> = listing
            .runs
            .into_iter()
            .map(|m| SessionSummary {
                title: title_of(&m),
                id: m.id,
                created: m.created,
                asks: m.asks.len().max(usize::from(!m.prompt.is_empty())),
                status: m.status,
                files: m.files,
                unreadable: None,
            })
            .collect();
        all.reverse();
        all.extend(listing.unreadable.into_iter().map(|u| SessionSummary {
            title: crate::artifacts::display_name(&u.folder),
            id: u.folder,
            created: String::new(),
            asks: 0,
            status: None,
            files: Vec::new(),
            unreadable: Some(u.reason),
        }));
        Ok(all)
    }

    pub async fn rename(&self, id: &str, title: &str) -> Result<(), SessionError> {
        let title = title.trim();
        if title.is_empty() || title.chars().count() > 200 {
            return Err(SessionError::BadInput {
                message: "a title must have 1 to 200 characters".into(),
            });
        }
        let session = self.open(id).await?;
        session.claim().await?;
        session.inner.run.lock().unwrap().meta.title = title.to_string();
        let saved = session.save_meta().await;
        session.let_go_if_idle();
        saved
    }

    /// Remove the session's container and its folder. Refused while an ask runs.
    pub async fn delete(&self, id: &str) -> Result<(), SessionError> {
        let session = self.open(id).await?;
        if session.is_busy() {
            return Err(SessionError::Busy);
        }
        session.claim().await?;
        // Held until the folder is gone, so no other process starts writing it meanwhile.
        let lock = session.inner.lock.lock().unwrap().take();
        session.close().await;
        self.open.lock().unwrap().remove(id);
        let (store, id) = (self.store.clone(), id.to_string());
        blocking(move || {
            let deleted = store.delete(&id);
            drop(lock);
            deleted
        })
        .await
        .map_err(SessionError::storage)
    }

    /// Release every open session's container (the app is closing).
    pub async fn close_all(&self) {
        let all: Vec<Session> = self.open.lock().unwrap().values().cloned().collect();
        for s in all {
            s.close().await;
        }
    }
}

/// One conversation. Cheap to clone; every clone is the same session.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

struct Inner {
    id: String,
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
}

struct Live {
    sandbox: Arc<dyn Sandbox>,
    staged: BTreeSet<String>,
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
                id: run.meta.id.clone(),
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
            }),
        }
    }

    pub fn id(&self) -> &str {
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
        config.validate()?;
        self.claim().await?;
        *self.inner.config.lock().unwrap() = config;
        let saved = self.save_settings().await;
        self.let_go_if_idle();
        saved
    }

    /// Every event of the session: set-up, staging, and every ask's events.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }

    /// Stage files (or folders) as `input/NAME`. The sandbox starts in the background
    /// if it is not running; a running one receives them at once, and the model is
    /// told on its next turn. A path that is not a regular file or folder is refused
    /// (`bad_input`); what was said about the folders' entries (links followed,
    /// entries left out) goes out as status events.
    pub async fn add_files(&self, paths: Vec<PathBuf>) -> Result<Vec<StagedFile>, SessionError> {
        self.add_inputs(paths).await.map(|a| a.files)
    }

    /// [`Session::add_files`], also returning the notes about the folders' entries
    /// (for a front end that shows them beside the files).
    pub async fn add_inputs(&self, paths: Vec<PathBuf>) -> Result<Added, SessionError> {
        // Classified and opened (without blocking) off the async runtime.
        let manifest = blocking(move || Manifest::from_paths(&paths))
            .await
            .map_err(SessionError::bad_input)?;
        let notes = manifest.note_lines(MAX_NOTES);
        let added: Vec<StagedFile> = manifest
            .inputs
            .iter()
            .map(|f| StagedFile {
                name: f.dest.clone(),
                bytes: f.bytes,
                source: f.source.display().to_string(),
                ..Default::default()
            })
            .collect();
        self.claim().await?;
        // The sandbox (started below) keeps the lock; a refusal here lets it go.
        let refuse = |e: SessionError| {
            self.let_go_if_idle();
            Err(e)
        };
        {
            let mut run = self.inner.run.lock().unwrap();
            for f in &added {
                if run.meta.files.iter().any(|g| g.name == f.name) {
                    drop(run);
                    return refuse(SessionError::BadInput {
                        message: format!(
                            "input/{} is already in this session; remove it first or rename the new file",
                            f.name
                        ),
                    });
                }
            }
            run.meta.files.extend(added.iter().cloned());
            run.meta
                .inputs
                .extend(added.iter().map(|f| f.source.clone()));
        }
        if let Err(e) = self.save_meta().await {
            return refuse(e);
        }
        if !self.inner.items.lock().unwrap().is_empty() {
            let names: Vec<InputSummary> = added
                .iter()
                .map(|f| InputSummary {
                    name: f.name.clone(),
                    bytes: f.bytes,
                    head: None,
                })
                .collect();
            let names = instructions::added_files(&names);
            self.note(format!("The user added files: {names}."));
        }
        for line in &notes {
            self.status(None, line.clone());
        }
        if !notes.is_empty() {
            // The model hears it too: a folder it looks at may lack files the user sees.
            self.note(format!(
                "While staging the user's folders: {}.",
                notes.join("; ")
            ));
        }
        self.touch();
        self.warm();
        self.hash_in_background(&added);
        Ok(Added {
            files: added,
            notes,
        })
    }

    /// Fill in the inputs' SHA-256 (for provenance) without holding up the caller; it
    /// stops when the session closes, so a large input never holds up an exit.
    fn hash_in_background(&self, files: &[StagedFile]) {
        let (session, files) = (self.clone(), files.to_vec());
        let closing = self.inner.closing.clone();
        tokio::spawn(async move {
            let hashed = blocking(move || {
                let stop = || closing.is_cancelled();
                Ok(files
                    .into_iter()
                    .filter_map(|f| {
                        Some((
                            f.name,
                            crate::workspace::inputs::sha256_of(Path::new(&f.source), &stop)
                                .ok()?,
                        ))
                    })
                    .collect::<Vec<_>>())
            })
            .await
            .unwrap_or_default();
            // Written only by the owner; if another process owns the session by now,
            // these hashes are left unrecorded (the file is not ours to rewrite).
            if session.claim().await.is_err() {
                return;
            }
            {
                let mut run = session.inner.run.lock().unwrap();
                for (name, hash) in hashed {
                    if let Some(f) = run.meta.files.iter_mut().find(|f| f.name == name) {
                        f.sha256 = hash;
                    }
                }
            }
            let _ = session.save_meta().await;
            session.let_go_if_idle();
        });
    }

    /// Remove an input file from the session (the original is untouched).
    pub async fn remove_file(&self, name: &str) -> Result<(), SessionError> {
        self.claim().await?;
        let removed = self.remove_file_owned(name).await;
        self.let_go_if_idle();
        removed
    }

    async fn remove_file_owned(&self, name: &str) -> Result<(), SessionError> {
        {
            let mut run = self.inner.run.lock().unwrap();
            let before = run.meta.files.len();
            run.meta.files.retain(|f| f.name != name);
            if run.meta.files.len() == before {
                return Err(SessionError::BadInput {
                    message: format!("input/{name} is not in this session"),
                });
            }
        }
        self.save_meta().await?;
        let mut slot = self.inner.sandbox.lock().await;
        if let Some(live) = slot.as_mut() {
            if live.staged.remove(name) {
                live.sandbox
                    .remove_input(name)
                    .await
                    .map_err(|e| SessionError::Sandbox {
                        message: format!("{e:#}"),
                    })?;
            }
        }
        if !self.inner.items.lock().unwrap().is_empty() {
            self.note(format!("The user removed input/{name}."));
        }
        Ok(())
    }

    /// Start the sandbox in the background (if it is not running), reporting progress
    /// and failures as events.
    pub fn warm(&self) {
        let session = self.clone();
        tokio::spawn(async move {
            if let Err(e) = session.sandbox().await {
                // A start stopped by the session closing is no error to report.
                if !session.inner.closing.is_cancelled() {
                    session.broadcast(None, EventKind::Error { error: e.info() });
                }
            }
        });
    }

    /// Ask: run the agent loop on this conversation with `model`. Returns at once; the
    /// work happens in a spawned task that the handle owns.
    pub fn ask(&self, prompt: String, model: Box<dyn Model>) -> Result<AskHandle, SessionError> {
        if prompt.trim().is_empty() {
            return Err(SessionError::EmptyPrompt);
        }
        self.start_busy()?;
        // The ask's id comes from the session as on disk, so the lock is taken here
        // (a short read, off the runtime's threads where the runtime allows it).
        let inner = self.inner.clone();
        if let Err(e) = in_place(move || inner.claim()) {
            self.end_busy();
            return Err(e);
        }
        let ask_id = format!("ask-{}", self.inner.asks.fetch_add(1, Ordering::SeqCst) + 1);
        let (tx, events) = mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let (session, id, token) = (self.clone(), ask_id.clone(), cancel.clone());
        let task = tokio::spawn(async move {
            let mut model = model;
            let outcome = session
                .run_ask(&id, &prompt, model.as_mut(), Some(tx), &token)
                .await;
            session.end_busy();
            outcome
        });
        Ok(AskHandle {
            ask_id,
            events,
            cancel,
            task,
        })
    }

    /// Ask with a borrowed model, awaited in place (the one-shot `run` path).
    pub async fn ask_with(
        &self,
        prompt: &str,
        model: &mut dyn Model,
        events: Option<mpsc::UnboundedSender<Event>>,
        cancel: &CancellationToken,
    ) -> Result<AskOutcome, SessionError> {
        if prompt.trim().is_empty() {
            return Err(SessionError::EmptyPrompt);
        }
        self.start_busy()?;
        if let Err(e) = self.claim().await {
            self.end_busy();
            return Err(e);
        }
        let ask_id = format!("ask-{}", self.inner.asks.fetch_add(1, Ordering::SeqCst) + 1);
        let outcome = self.run_ask(&ask_id, prompt, model, events, cancel).await;
        self.end_busy();
        Ok(outcome)
    }

    /// Keep the workspace and remove the container. The session can still be asked
    /// again: a new container starts with the workspace restored.
    pub async fn release(&self) {
        let mut slot = self.inner.sandbox.lock().await;
        if let Some(live) = slot.take() {
            let archive = self.inner.dir.join(ARCHIVE);
            let max = self.config().max_archive_bytes;
            if !self.inner.archived.load(Ordering::SeqCst) {
                if let Err(e) = live.sandbox.archive_workspace(&archive, max).await {
                    self.status(None, format!("workspace archive not kept: {e:#}"));
                }
            }
            if let Err(e) = live.sandbox.close().await {
                self.status(None, format!("{e:#}"));
            }
            self.note(
                "The sandbox was restarted after a pause: the Python variables and imports of \
                 earlier calls are gone."
                    .into(),
            );
        }
        // Without a sandbox (and no ask), another process may have the session.
        self.let_go_with(&slot);
    }

    /// Release the container for good (the app closes the session). A sandbox still
    /// starting or staging stops at once and removes what it made; hashing stops.
    pub async fn close(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        self.inner.closing.cancel();
        self.release().await;
    }

    // ---- the ask ----------------------------------------------------------------------

    async fn run_ask(
        &self,
        ask_id: &str,
        prompt: &str,
        model: &mut dyn Model,
        tx: Option<mpsc::UnboundedSender<Event>>,
        cancel: &CancellationToken,
    ) -> AskOutcome {
        let host = AskHost {
            session: self,
            ask_id,
            tx,
            calls: Mutex::default(),
        };
        let config = self.config();
        host.emit(EventKind::AskStarted {
            prompt: prompt.into(),
            model: model.describe(),
        });
        let begun = self.begin_ask(ask_id, prompt, &model.describe()).await;
        let sandbox = match begun {
            // The start runs in its own task: a cancelled ask stops waiting for it but
            // does not drop it half-way (it would leave its container behind); it
            // finishes, or stops and cleans up when the session closes.
            Ok(()) => {
                let session = self.clone();
                let start = tokio::spawn(async move { session.sandbox().await });
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => Err(SessionError::Sandbox { message: "cancelled before the sandbox was ready".into() }),
                    s = start => s.unwrap_or_else(|e| Err(SessionError::Sandbox { message: format!("starting the sandbox: {e}") })),
                }
            }
            Err(e) => Err(e),
        };
        let (mut status, mut error, mut turns, mut usage) =
            (RunStatus::Cancelled, None, 0, Usage::default());
        if let Ok(sandbox) = &sandbox {
            // Before the inputs are described to the model: their sizes may have moved.
            self.check_changed_inputs(sandbox.as_ref()).await;
            let summaries = self.input_summaries().await;
            // What the image holds, read once per sandbox; the fixed sentence where the
            // sandbox cannot say (the in-memory fake, a broken custom image).
            let libraries = match sandbox.python_env().await {
                Ok(env) => crate::sandbox::packages::describe(&env),
                Err(_) => instructions::LIBRARIES.to_string(),
            };
            let mut agent = Agent::new(model, sandbox.as_ref(), &host, self.items());
            agent.instructions = instructions::build(&instructions::Context {
                inputs: &summaries,
                tools: config.tools,
                vision: config.show_images && agent.model.vision(),
                network: config.sandbox.network,
                limits: &config.limits,
                memory_mib: (config.sandbox.memory_bytes >> 20) as u64,
                libraries: &libraries,
                extra: &config.instructions,
            });
            agent.tools = config.tools;
            agent.limits = config.limits.clone();
            agent.show_images = config.show_images;
            let before = self.outputs_before(sandbox.as_ref()).await;
            let notes = self.take_notes();
            let task = if notes.is_empty() {
                prompt.to_string()
            } else {
                format!(
                    "{prompt}\n\n{}",
                    crate::protocol::app_note(&notes.join(" "))
                )
            };
            status = agent.run(&task, cancel).await;
            (turns, usage) = (agent.turns, agent.usage);
            error = agent.failure.take().map(|e| SessionError::from_failure(&e));
            // A disk that filled up says so in the status too, not only in the error.
            if let (RunStatus::Failed { message }, Some(SessionError::Storage { message: m })) =
                (&mut status, &error)
            {
                message.clone_from(m);
            }
            *self.inner.items.lock().unwrap() = std::mem::take(&mut agent.items);
            self.check_changed_inputs(sandbox.as_ref()).await;
            self.collect(&host, sandbox.as_ref(), &config, &before, &mut status)
                .await;
        }
        if let Err(e) = &sandbox {
            if !cancel.is_cancelled() {
                status = RunStatus::Failed {
                    message: e.to_string(),
                };
                error = Some(e.clone());
            }
        }
        if let (RunStatus::Failed { message }, None) = (&status, &error) {
            error = Some(SessionError::Storage {
                message: message.clone(),
            });
        }
        if let Some(e) = &error {
            host.emit(EventKind::Error { error: e.info() });
        }
        let answer = self.last_answer();
        let cost_usd = model.price().map(|p| p.cost(&usage));
        let outputs = match self.end_ask(ask_id, &status, turns, usage, cost_usd).await {
            Ok(outputs) => outputs,
            // run.json keeps its last good state; the ask did not end as recorded.
            Err(e) => {
                if error.is_none() {
                    host.emit(EventKind::Error { error: e.info() });
                }
                status = RunStatus::Failed {
                    message: e.to_string(),
                };
                error = error.or(Some(e));
                self.meta().outputs
            }
        };
        self.touch();
        host.emit(EventKind::AskFinished {
            status: status.clone(),
            turns,
            answer: answer.clone(),
            outputs_dir: self.outputs_dir().display().to_string(),
        });
        AskOutcome {
            session_id: self.id().to_string(),
            ask_id: ask_id.to_string(),
            status,
            turns,
            usage,
            cost_usd,
            answer,
            outputs_dir: self.outputs_dir(),
            outputs,
            error,
        }
    }

    async fn begin_ask(&self, ask_id: &str, prompt: &str, model: &str) -> Result<(), SessionError> {
        self.repair_transcript(ask_id).await?;
        {
            let mut run = self.inner.run.lock().unwrap();
            let m = &mut run.meta;
            if m.prompt.is_empty() {
                m.prompt = prompt.to_string();
                m.model = model.to_string();
            }
            if m.title.is_empty() {
                m.title = title_from(prompt);
            }
            m.status = None;
            self.inner.archived.store(false, Ordering::SeqCst);
            m.asks.push(AskMeta {
                id: ask_id.to_string(),
                prompt: prompt.to_string(),
                model: model.to_string(),
                created: chrono::Utc::now().to_rfc3339(),
                ..AskMeta::default()
            });
        }
        self.save_meta().await
    }

    /// Bring `output/` back into the session folder and keep the workspace archive.
    async fn collect(
        &self,
        host: &AskHost<'_>,
        sandbox: &dyn Sandbox,
        config: &SessionConfig,
        before: &recover::OutputsBefore,
        status: &mut RunStatus,
    ) {
        // Collected beside the last outputs, then swapped in: files the code deleted
        // go, and a failed collection leaves the last good outputs in place.
        let fresh = self.inner.dir.join("outputs.new");
        let _ = tokio::fs::remove_dir_all(&fresh).await;
        let collected = match sandbox.collect_outputs(&fresh, &config.collect).await {
            Ok(c) => {
                self.keep_earlier_outputs(host, sandbox, before, &fresh, c)
                    .await
            }
            Err(e) => Err(e),
        };
        let collected = match collected {
            Ok(c) => swap_dirs(&fresh, &self.outputs_dir()).await.map(|()| c),
            Err(e) => Err(e),
        };
        match collected {
            Ok(collected) => {
                for r in &collected.refused {
                    host.emit(EventKind::Status {
                        message: format!("refused output {}: {}", r.path, r.reason),
                    });
                }
                let mut run = self.inner.run.lock().unwrap();
                run.meta.outputs = collected.files;
                run.meta.refused = collected.refused;
            }
            Err(e) => {
                // What was written of the new copy goes: on a full disk it holds the
                // room the rest of the ask needs.
                let _ = tokio::fs::remove_dir_all(&fresh).await;
                if !matches!(status, RunStatus::Failed { .. }) {
                    let e = e.context("collecting outputs (the earlier outputs are kept)");
                    *status = RunStatus::Failed {
                        message: error::storage_message(&e),
                    };
                }
            }
        }
        let archive = self.inner.dir.join(ARCHIVE);
        match sandbox
            .archive_workspace(&archive, config.max_archive_bytes)
            .await
        {
            Ok(_) => self.inner.archived.store(true, Ordering::SeqCst),
            Err(e) if error::disk_full(&e) => {
                let e = e.context("the workspace archive was not kept (an earlier one stays)");
                let message = error::storage_message(&e);
                host.emit(EventKind::Status {
                    message: message.clone(),
                });
                if !matches!(status, RunStatus::Failed { .. }) {
                    *status = RunStatus::Failed { message };
                }
            }
            Err(e) => host.emit(EventKind::Status {
                message: format!("workspace archive not kept: {e:#}"),
            }),
        }
    }

    /// Files of the host's outputs from before the ask that the code could not
    /// have deleted (it never saw them, or they are still there but did not come
    /// back) are carried into the new copy, so `outputs/` never loses them.
    async fn keep_earlier_outputs(
        &self,
        host: &AskHost<'_>,
        sandbox: &dyn Sandbox,
        before: &recover::OutputsBefore,
        fresh: &Path,
        mut collected: crate::workspace::Collected,
    ) -> anyhow::Result<crate::workspace::Collected> {
        let now: Option<BTreeSet<String>> = sandbox
            .list_outputs()
            .await
            .ok()
            .map(|l| l.into_iter().map(|e| e.path).collect());
        let keep = recover::to_keep(before, &collected.files, now.as_ref());
        if keep.is_empty() {
            return Ok(collected);
        }
        let (old, new) = (self.outputs_dir(), fresh.to_path_buf());
        let (kept, clashed) = blocking(move || Ok(recover::carry_over(&old, &new, &keep)?))
            .await
            .map_err(|e| e.context("keeping the earlier outputs"))?;
        if !kept.is_empty() {
            let names: Vec<&str> = kept.iter().take(10).map(|f| f.path.as_str()).collect();
            host.emit(EventKind::Status {
                message: format!(
                    "kept {} earlier output(s) the sandbox did not have: {}{}",
                    kept.len(),
                    names.join(", "),
                    if kept.len() > names.len() {
                        ", ..."
                    } else {
                        ""
                    }
                ),
            });
        }
        for name in clashed {
            host.emit(EventKind::Status {
                message: format!(
                    "the earlier output {name} was replaced: the code made a folder of that name"
                ),
            });
        }
        collected.files.extend(kept);
        collected.files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(collected)
    }

    /// What `output/` holds as the ask begins, on the host and in the sandbox.
    async fn outputs_before(&self, sandbox: &dyn Sandbox) -> recover::OutputsBefore {
        let dir = self.outputs_dir();
        let host = blocking(move || Ok(recover::host_outputs(&dir)))
            .await
            .unwrap_or_default();
        let visible = sandbox
            .list_outputs()
            .await
            .ok()
            .map(|l| l.into_iter().map(|e| e.path).collect());
        recover::OutputsBefore { host, visible }
    }

    /// Set a torn last transcript line aside before this ask appends, and say so.
    async fn repair_transcript(&self, ask_id: &str) -> Result<(), SessionError> {
        let session = self.clone();
        let moved = blocking(move || Ok(session.inner.run.lock().unwrap().repair_transcript()?))
            .await
            .map_err(SessionError::storage)?;
        if moved > 0 {
            let text = format!(
                "the last line of this session's transcript was cut short by an earlier crash; its {moved} bytes were set aside in {} and the conversation goes on from the line before",
                crate::store::torn_path(Path::new(crate::store::TRANSCRIPT)).display()
            );
            self.status(Some(ask_id), text.clone());
            self.note(format!("The {text}."));
        }
        Ok(())
    }

    async fn end_ask(
        &self,
        ask_id: &str,
        status: &RunStatus,
        turns: u32,
        usage: Usage,
        cost_usd: Option<f64>,
    ) -> Result<Vec<CollectedFile>, SessionError> {
        let outputs = {
            let mut run = self.inner.run.lock().unwrap();
            let m = &mut run.meta;
            let now = chrono::Utc::now().to_rfc3339();
            if let Some(a) = m.asks.iter_mut().find(|a| a.id == ask_id) {
                a.status = Some(status.clone());
                a.finished = Some(now.clone());
                a.turns = turns;
                a.usage = usage;
                a.cost_usd = cost_usd;
            }
            m.status = Some(status.clone());
            m.finished = Some(now);
            m.turns += turns;
            m.usage += usage;
            m.cost_usd = match (m.cost_usd, cost_usd) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
            m.outputs.clone()
        };
        self.save_meta().await?;
        Ok(outputs)
    }

    /// The last assistant text since the user's latest words: the ask's answer.
    fn last_answer(&self) -> Option<String> {
        let items = self.inner.items.lock().unwrap();
        let last_user = items.iter().rposition(
            |i| matches!(i, Item::User { text } if !crate::protocol::is_app_note(text)),
        )?;
        items[last_user..].iter().rev().find_map(|i| match i {
            Item::Assistant { text } if !text.trim().is_empty() => Some(text.clone()),
            _ => None,
        })
    }

    // ---- the sandbox ------------------------------------------------------------------

    /// The running sandbox, started (and the workspace restored, and every input
    /// staged) if there is none.
    async fn sandbox(&self) -> Result<Arc<dyn Sandbox>, SessionError> {
        let mut slot = self.inner.sandbox.lock().await;
        if slot.is_none() {
            // A sandbox writes the session (staging, archives): only its owner starts one.
            let started = match self.claim().await {
                Ok(()) => self.start_sandbox().await,
                Err(e) => Err(e),
            };
            match started {
                Ok(live) => *slot = Some(live),
                Err(e) => {
                    self.let_go_with(&slot);
                    return Err(e);
                }
            }
            self.spawn_idle_watch();
        }
        let live = slot.as_mut().expect("just started");
        let wanted: Vec<StagedFile> = self.meta().files;
        let missing: Vec<&StagedFile> = wanted
            .iter()
            .filter(|f| !live.staged.contains(&f.name))
            .collect();
        if !missing.is_empty() {
            let paths: Vec<(PathBuf, String)> = missing
                .iter()
                .map(|f| (PathBuf::from(&f.source), f.name.clone()))
                .collect();
            let manifest = blocking(move || Manifest::from_named(&paths))
                .await
                .map_err(SessionError::bad_input)?;
            self.broadcast(
                None,
                EventKind::Setup(SetupStage::Staging {
                    files: manifest.inputs.len(),
                    bytes: manifest.total_bytes(),
                }),
            );
            let staged = tokio::select! {
                r = live.sandbox.add_inputs(&manifest) => r,
                _ = self.inner.closing.cancelled() => Err(anyhow::anyhow!("the session is closing")),
            };
            staged.map_err(|e| SessionError::Sandbox {
                message: format!("staging the new files: {e:#}"),
            })?;
            live.staged.extend(missing.iter().map(|f| f.name.clone()));
            let added: BTreeSet<&str> = manifest.inputs.iter().map(|f| f.dest.as_str()).collect();
            let report: Vec<StagedInput> = live
                .sandbox
                .staging()
                .into_iter()
                .filter(|s| added.contains(s.dest.as_str()))
                .collect();
            self.record_staging(&report).await;
            self.inner.archived.store(false, Ordering::SeqCst);
        }
        Ok(live.sandbox.clone())
    }

    async fn start_sandbox(&self) -> Result<Live, SessionError> {
        let started = Instant::now();
        let config = self.config();
        let archive = self.inner.dir.join(ARCHIVE);
        let outputs_dir = self.outputs_dir();
        let meta = self.meta();
        // An earlier ask ran (not the one starting now): its workspace is expected back.
        let reopened = meta.asks.iter().any(|a| a.status.is_some())
            || (meta.asks.is_empty() && !meta.prompt.is_empty());
        let (check, host) = {
            let (archive, outputs_dir) = (archive.clone(), outputs_dir.clone());
            blocking(move || {
                recover::recover_swap(&outputs_dir, &outputs_dir.with_extension("old"))?;
                Ok((
                    crate::store::check_archive(&archive),
                    recover::host_outputs(&outputs_dir),
                ))
            })
            .await
            .map_err(SessionError::storage)?
        };
        let complete = matches!(check, ArchiveCheck::Complete(_));
        // A whole archive holds the inputs already; otherwise stage them fresh.
        let files = meta.files;
        // On a rebuild, an input whose original is gone from the user's disk is left
        // out (and said) rather than failing every later ask of the session.
        let (manifest, gone) = if complete {
            (Manifest::default(), Vec::new())
        } else {
            let paths: Vec<(PathBuf, String)> = files
                .iter()
                .map(|f| (PathBuf::from(&f.source), f.name.clone()))
                .collect();
            blocking(move || {
                let (there, gone): (Vec<_>, Vec<_>) = paths
                    .into_iter()
                    .partition(|(src, _)| !reopened || std::fs::symlink_metadata(src).is_ok());
                Ok((Manifest::from_named(&there)?, gone))
            })
            .await
            .map_err(SessionError::bad_input)?
        };
        let me = self.clone();
        let setup = move |stage: SetupStage| me.broadcast(None, EventKind::Setup(stage));
        let sandbox = self
            .inner
            .factory
            .start(
                self.id(),
                &config.sandbox,
                &manifest,
                &setup,
                &self.inner.closing,
            )
            .await?;
        let mut staged: BTreeSet<String> = manifest.inputs.iter().map(|f| f.dest.clone()).collect();
        self.record_staging(&sandbox.staging()).await;
        if !gone.is_empty() {
            // Counted as staged: nothing to stage until the user adds them again.
            staged.extend(gone.iter().map(|(_, name)| name.clone()));
            let list: Vec<String> = gone
                .iter()
                .map(|(src, name)| format!("input/{name} (its original {} is gone)", src.display()))
                .collect();
            let text = format!(
                "{} input file(s) could not be staged again: {}",
                gone.len(),
                list.join(", ")
            );
            self.status(None, text.clone());
            self.note(format!("{text}."));
        }
        let all: Vec<String> = host.iter().map(|f| f.rel.clone()).collect();
        // What the model is told of the files (None: a first start, nothing to say),
        // and whether the user hears it too (not when all is as it was).
        let (story, unusual) = match check {
            ArchiveCheck::Complete(index) => match sandbox.restore_workspace(&archive).await {
                Ok(()) => {
                    staged.extend(files.iter().map(|f| f.name.clone()));
                    self.broadcast(None, EventKind::Setup(SetupStage::WorkspaceRestored));
                    let restored: Vec<StagedInput> = files
                        .iter()
                        .map(|f| StagedInput {
                            dest: f.name.clone(),
                            method: StagingMethod::Copy,
                            bytes: f.bytes,
                            reason: Some(CopyReason::Restored),
                        })
                        .collect();
                    self.record_staging(&restored).await;
                    let newer = recover::newer_than_archive(&host, &index);
                    if newer.is_empty() {
                        let story = "input/, output/ and the other files of the workspace were restored from the archive of the last ask, as they were";
                        (reopened.then(|| story.to_string()), false)
                    } else {
                        let n = newer.len();
                        let story = match sandbox.upload_outputs(&outputs_dir, &newer).await {
                            Ok(()) => format!(
                                "the workspace was restored from its archive, which is older than the session's last outputs: {n} file(s) of output/ were brought up to date from the app's copy; other files written since that archive are gone"
                            ),
                            Err(e) => format!(
                                "the workspace was restored from its archive, which is older than the session's last outputs, and the {n} newer file(s) of output/ could not be put back ({e:#}); the app still has them"
                            ),
                        };
                        (Some(story), true)
                    }
                }
                Err(e) => {
                    // Inputs are staged again by `sandbox()` (none is marked staged).
                    let why = format!("the workspace archive could not be restored ({e:#})");
                    (
                        Some(self.rebuild_outputs(sandbox.as_ref(), &why, &all).await),
                        true,
                    )
                }
            },
            ArchiveCheck::Unreadable { reason } => {
                let why = format!("the workspace archive could not be read ({reason})");
                (
                    Some(self.rebuild_outputs(sandbox.as_ref(), &why, &all).await),
                    true,
                )
            }
            ArchiveCheck::Missing if reopened || !all.is_empty() => {
                let why = "the workspace archive was missing";
                (
                    Some(self.rebuild_outputs(sandbox.as_ref(), why, &all).await),
                    true,
                )
            }
            ArchiveCheck::Missing => (None, false),
        };
        if let Some(story) = story {
            if unusual {
                self.status(None, story.clone());
            }
            self.note(format!("The files: {story}."));
        }
        self.broadcast(
            None,
            EventKind::Setup(SetupStage::SandboxReady {
                millis: started.elapsed().as_millis() as u64,
            }),
        );
        Ok(Live { sandbox, staged })
    }

    /// Put the session's outputs (the app's copy) into a workspace started without
    /// its archive, and say what came back.
    async fn rebuild_outputs(&self, sandbox: &dyn Sandbox, why: &str, files: &[String]) -> String {
        if files.is_empty() {
            return recover::rebuilt(why, 0);
        }
        match sandbox.upload_outputs(&self.outputs_dir(), files).await {
            Ok(()) => recover::rebuilt(why, files.len()),
            Err(e) => format!(
                "{why}; input/ was staged again from the user's files, but the {} file(s) of output/ could not be put back ({e:#}); the app still has them; files written elsewhere in the workspace are gone",
                files.len()
            ),
        }
    }

    /// Release the container once the session has been idle for `idle_release`.
    fn spawn_idle_watch(&self) {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            loop {
                let Some(inner) = weak.upgrade() else { return };
                let idle = inner.config.lock().unwrap().idle_release;
                let since = inner.last_used.lock().unwrap().elapsed();
                let wait = idle.saturating_sub(since).max(Duration::from_millis(200));
                drop(inner);
                tokio::time::sleep(wait).await;
                let Some(inner) = weak.upgrade() else { return };
                let session = Session { inner };
                if session.inner.closed.load(Ordering::SeqCst) {
                    return;
                }
                let idle_for = session.inner.last_used.lock().unwrap().elapsed();
                if !session.is_busy() && idle_for >= idle {
                    let running = session.inner.sandbox.lock().await.is_some();
                    if running {
                        session.release().await;
                        session.broadcast(None, EventKind::Setup(SetupStage::SandboxReleased));
                    }
                    return; // a new watch starts with the next sandbox
                }
            }
        });
    }

    /// Say how inputs were staged: one `staged` event per method (and reason), and
    /// each file's method in `run.json`.
    async fn record_staging(&self, report: &[StagedInput]) {
        if report.is_empty() {
            return;
        }
        for stage in SetupStage::staged(report) {
            self.broadcast(None, EventKind::Setup(stage));
        }
        {
            let mut run = self.inner.run.lock().unwrap();
            for f in run.meta.files.iter_mut() {
                if let Some(s) = report.iter().find(|s| s.dest == f.name) {
                    f.staged_by = Some(s.method);
                    f.copy_reason = s.reason;
                }
            }
        }
        let _ = self.save_meta().await;
    }

    /// Bind-mounted inputs whose host file changed: the code now reads other bytes
    /// than were recorded, so `run.json` says so (size and hash taken again), the
    /// model is told, and a status line shows it.
    async fn check_changed_inputs(&self, sandbox: &dyn Sandbox) {
        let changed = sandbox.changed_inputs().await;
        if changed.is_empty() {
            return;
        }
        let sources: Vec<(String, PathBuf)> = self
            .meta()
            .files
            .iter()
            .filter(|f| changed.contains(&f.name))
            .map(|f| (f.name.clone(), PathBuf::from(&f.source)))
            .collect();
        let sizes: Vec<(String, u64)> = blocking(move || {
            Ok(sources
                .into_iter()
                .map(|(name, source)| (name, std::fs::metadata(source).map_or(0, |m| m.len())))
                .collect())
        })
        .await
        .unwrap_or_default();
        let fresh: Vec<StagedFile> = {
            let mut run = self.inner.run.lock().unwrap();
            run.meta
                .files
                .iter_mut()
                .filter_map(|f| {
                    let (_, bytes) = sizes.iter().find(|(name, _)| *name == f.name)?;
                    f.changed_on_host = true;
                    f.bytes = *bytes;
                    f.sha256.clear();
                    Some(f.clone())
                })
                .collect()
        };
        for f in &fresh {
            let text = format!(
                "input/{} changed on the user's disk during the session (it is mounted, not copied); it now has {} bytes",
                f.name, f.bytes
            );
            self.status(None, text.clone());
            self.note(format!("{text}."));
        }
        let _ = self.save_meta().await;
        self.hash_in_background(&fresh);
    }

    // ---- small helpers ----------------------------------------------------------------

    async fn input_summaries(&self) -> Vec<InputSummary> {
        let files = self.meta().files;
        blocking(move || {
            let mut summaries: Vec<InputSummary> = files
                .iter()
                .map(|f| InputSummary {
                    name: f.name.clone(),
                    bytes: f.bytes,
                    head: None,
                })
                .collect();
            // Only the inputs described in detail are opened.
            for i in instructions::in_detail(&summaries) {
                summaries[i].head = text_head(Path::new(&files[i].source));
            }
            Ok(summaries)
        })
        .await
        .unwrap_or_default()
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

    fn status(&self, ask_id: Option<&str>, message: String) {
        self.broadcast(ask_id, EventKind::Status { message });
    }

    /// Only the owner writes: a save without the lock is refused (nothing calls one).
    fn check_owned(&self) -> Result<(), SessionError> {
        if self.is_owned() {
            return Ok(());
        }
        Err(SessionError::Storage {
            message: format!(
                "session {} was not saved: this process does not own it (no lock)",
                self.id()
            ),
        })
    }

    async fn save_meta(&self) -> Result<(), SessionError> {
        self.check_owned()?;
        let _turn = self.inner.saving.lock().await;
        let (path, meta) = {
            let run = self.inner.run.lock().unwrap();
            (run.path.clone(), run.meta.clone())
        };
        blocking(move || RunDir::new(path, meta).save())
            .await
            .map_err(SessionError::storage)
    }

    async fn save_settings(&self) -> Result<(), SessionError> {
        self.check_owned()?;
        let text = serde_json::to_string_pretty(&self.config()).expect("settings serialize");
        let path = self.inner.dir.join(SETTINGS);
        blocking(move || Ok(crate::store::write_atomic(&path, text.as_bytes())?))
            .await
            .map_err(SessionError::storage)
    }
}

impl Inner {
    /// Take the lock unless held, then adopt the session as on disk (see
    /// [`Session::claim`]). Blocking: called off the runtime's threads.
    fn claim(&self) -> Result<(), SessionError> {
        let _one = self.claiming.lock().unwrap();
        if self.lock.lock().unwrap().is_some() {
            return Ok(());
        }
        let lock = SessionLock::try_acquire(&self.dir).map_err(|e| match e {
            LockError::Held { holder } => SessionError::SessionBusy {
                id: self.id.clone(),
                owner: holder,
            },
            e @ LockError::Io { .. } => SessionError::Storage {
                message: e.to_string(),
            },
        })?;
        let mut loaded = load(&self.dir).map_err(SessionError::storage)?;
        // The lock was free, so whoever left an ask in progress is gone.
        if loaded.run.meta.mark_interrupted() {
            loaded.run.save().map_err(SessionError::storage)?;
        }
        loaded.run.meta.owner = crate::owner::owner_id().to_string();
        self.adopt(loaded);
        *self.lock.lock().unwrap() = Some(lock);
        Ok(())
    }

    /// Read the session again when no process of ours owns it (it may have been
    /// asked elsewhere). Blocking.
    fn refresh(&self) -> anyhow::Result<()> {
        let _one = self.claiming.lock().unwrap();
        if self.lock.lock().unwrap().is_some() {
            return Ok(());
        }
        self.adopt(load_for_viewing(&self.dir)?);
        Ok(())
    }

    fn adopt(&self, loaded: Loaded) {
        let had_items = !self.items.lock().unwrap().is_empty();
        if !had_items && !loaded.items.is_empty() {
            self.notes.lock().unwrap().push(REOPENED.to_string());
        }
        self.asks
            .store(loaded.run.meta.asks.len() as u64, Ordering::SeqCst);
        *self.run.lock().unwrap() = loaded.run;
        *self.items.lock().unwrap() = loaded.items;
        if let Some(config) = loaded.config {
            *self.config.lock().unwrap() = config;
        }
    }
}

const REOPENED: &str = "This session was reopened in a new sandbox: the Python variables and \
     imports of earlier calls are gone.";

/// A session as read from its folder.
struct Loaded {
    run: RunDir,
    items: Vec<Item>,
    /// `None` when `session.json` is missing or unreadable.
    config: Option<SessionConfig>,
    /// Lines of the transcript that are not entries (kept on disk, left out).
    unreadable: usize,
}

/// Read the session in `dir`: metadata, conversation and settings. Blocking.
fn load(dir: &Path) -> anyhow::Result<Loaded> {
    let mut run = RunDir::read(dir.to_path_buf())?;
    if run.meta.files.is_empty() {
        // Runs from before sessions recorded only the paths given.
        run.meta.files = run
            .meta
            .inputs
            .iter()
            .map(|p| StagedFile {
                name: Path::new(p)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                bytes: 0,
                source: p.clone(),
                ..Default::default()
            })
            .collect();
    }
    let read = run.read_transcript()?;
    let items = repair(read.entries.into_iter().map(|e| e.item).collect());
    let config = std::fs::read_to_string(dir.join(SETTINGS))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    Ok(Loaded {
        run,
        items,
        config,
        unreadable: read.unreadable.len(),
    })
}

/// [`load`] for a session opened to be looked at: no lock is kept, but an ask left in
/// progress by a process that is gone (the lock is free) is marked interrupted.
fn load_for_viewing(dir: &Path) -> anyhow::Result<Loaded> {
    let loaded = load(dir)?;
    if !loaded.run.meta.in_progress() {
        return Ok(loaded);
    }
    let Ok(_held) = SessionLock::try_acquire(dir) else {
        return Ok(loaded); // its owner is at work
    };
    let mut loaded = load(dir)?;
    if loaded.run.meta.mark_interrupted() {
        loaded.run.save()?;
    }
    Ok(loaded)
}

/// Run short blocking work from synchronous code on the runtime: moved off the
/// worker thread on a multi-threaded runtime, inline on a single-threaded one.
fn in_place<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// The loop's view of the session during one ask.
struct AskHost<'a> {
    session: &'a Session,
    ask_id: &'a str,
    tx: Option<mpsc::UnboundedSender<Event>>,
    /// Each call's tool and code, then its duration, for the provenance of artifacts.
    calls: Mutex<HashMap<String, (String, String, u64)>>,
}

impl AskHost<'_> {
    /// Remember which call made an output file (kept in `run.json` with the ask).
    fn trace(&self, kind: &EventKind) {
        let mut calls = self.calls.lock().unwrap();
        match kind {
            EventKind::ToolCall {
                call_id,
                name,
                code,
            } => {
                calls.insert(call_id.clone(), (name.clone(), code.clone(), 0));
            }
            EventKind::CellResult {
                call_id,
                duration_ms,
                ..
            } => {
                if let Some(c) = calls.get_mut(call_id) {
                    c.2 = *duration_ms;
                }
            }
            EventKind::Artifact {
                call_id,
                path,
                bytes,
                ..
            } => {
                let Some((tool, code, duration_ms)) = calls.get(call_id).cloned() else {
                    return;
                };
                let mut run = self.session.inner.run.lock().unwrap();
                let inputs = run
                    .meta
                    .files
                    .iter()
                    .map(|f| (f.name.clone(), f.sha256.clone()))
                    .collect();
                run.meta.provenance.insert(
                    path.clone(),
                    Provenance {
                        ask: self.ask_id.to_string(),
                        call_id: call_id.clone(),
                        tool,
                        code,
                        duration_ms,
                        bytes: *bytes,
                        at: chrono::Utc::now().to_rfc3339(),
                        inputs,
                    },
                );
            }
            _ => {}
        }
    }
}

impl Host for AskHost<'_> {
    fn emit(&self, kind: EventKind) {
        self.trace(&kind);
        let event = Event::now(self.session.id(), Some(self.ask_id), kind);
        if let Some(tx) = &self.tx {
            let _ = tx.send(event.clone());
        }
        let _ = self.session.inner.events.send(event);
    }

    fn record(&self, item: &Item, usage: Option<&Usage>) -> anyhow::Result<()> {
        self.session
            .inner
            .run
            .lock()
            .unwrap()
            .append_in(Some(self.ask_id), item, usage)
    }

    fn take_notes(&self) -> Vec<String> {
        self.session.take_notes()
    }

    fn outputs_dir(&self) -> Option<PathBuf> {
        Some(self.session.outputs_dir())
    }

    fn save_figure(&self, call_id: &str, index: usize, png: &[u8]) -> anyhow::Result<String> {
        let safe: String = call_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let rel = format!("{FIGURES}/{}-{safe}-{index}.png", self.ask_id);
        let path = self.session.inner.dir.join(&rel);
        std::fs::create_dir_all(path.parent().expect("has a parent"))?;
        std::fs::write(&path, png)?;
        Ok(rel)
    }
}

/// Replace `dest` with `fresh` (both folders of the session).
async fn swap_dirs(fresh: &Path, dest: &Path) -> anyhow::Result<()> {
    let old = dest.with_extension("old");
    let (d, o) = (dest.to_path_buf(), old.clone());
    blocking(move || Ok(recover::recover_swap(&d, &o)?)).await?;
    let _ = tokio::fs::remove_dir_all(&old).await;
    if tokio::fs::try_exists(dest).await.unwrap_or(false) {
        tokio::fs::rename(dest, &old).await?;
    }
    if !tokio::fs::try_exists(fresh).await.unwrap_or(false) {
        tokio::fs::create_dir_all(fresh).await?;
    }
    tokio::fs::rename(fresh, dest).await?;
    let _ = tokio::fs::remove_dir_all(&old).await;
    // The renames are on disk before the archive and run.json speak of them.
    let parent = dest
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    blocking(move || Ok(crate::store::sync_dir(&parent)?)).await
}

/// A transcript cut short by a crash may end with calls that have no output; every
/// provider refuses that, so each gets one saying what happened.
fn repair(mut items: Vec<Item>) -> Vec<Item> {
    let answered: BTreeSet<String> = items
        .iter()
        .filter_map(|i| match i {
            Item::ToolOutput { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    let open: Vec<String> = items
        .iter()
        .filter_map(|i| match i {
            Item::ToolCall { call_id, .. } if !answered.contains(call_id) => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    for call_id in open {
        items.push(Item::ToolOutput {
            call_id,
            output: "[the app stopped before this call finished; its result is unknown]".into(),
            is_error: true,
            images: Vec::new(),
        });
    }
    items
}

fn title_of(m: &RunMeta) -> String {
    if !m.title.is_empty() {
        m.title.clone()
    } else if !m.prompt.is_empty() {
        title_from(&m.prompt)
    } else {
        "New session".into()
    }
}

/// The first line of a request, shortened to about 60 characters at a word.
fn title_from(prompt: &str) -> String {
    let line = prompt
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() <= 60 {
        return line.to_string();
    }
    let cut: String = line.chars().take(60).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(a, _)| a);
    format!("{cut}…")
}

/// The first lines of a text file (a CSV's header and rows), for the instructions.
/// Opened without blocking: a path that is no longer a regular file has no head.
fn text_head(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut buf = vec![0u8; 2048];
    let (file, _) = crate::workspace::open_input(path).ok()?;
    let n = file.take(buf.len() as u64).read(&mut buf).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    if text.contains('\0') {
        return None;
    }
    let lines: Vec<String> = text
        .lines()
        .take(6)
        .map(|l| l.chars().take(200).collect())
        .collect();
    Some(lines.join("\n"))
}

/// Blocking file work off the async runtime.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    tokio::task::spawn_blocking(f).await?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_short_first_lines() {
        assert_eq!(title_from("\n  Find anomalies\nmore"), "Find anomalies");
        let long = "look for abnormal energy-use events, ignore normal operating noise, explain the method";
        let t = title_from(long);
        assert!(t.ends_with('…') && t.chars().count() <= 61, "{t}");
    }

    #[test]
    fn open_calls_get_an_output_on_repair() {
        let items = vec![
            Item::User { text: "t".into() },
            Item::ToolCall {
                call_id: "a".into(),
                name: "python".into(),
                arguments: "{}".into(),
            },
        ];
        let fixed = repair(items);
        assert!(
            matches!(&fixed[2], Item::ToolOutput { call_id, is_error: true, .. } if call_id == "a")
        );
    }

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
}
