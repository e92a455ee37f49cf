//! The one API every front end calls: the command line (`src/bin/sandalyst/`) and
//! the desktop shell (`src-tauri`) only translate to and from it (flags in, lines
//! out; commands in, channel events out) and reach no other module of the core.
//!
//! [`App`] holds the sessions of one data folder and the sandbox factory they start
//! their sandboxes from (Docker by default; a test passes the in-memory one):
//!
//! - sessions: [`App::create_session`], [`App::session`], [`App::list_sessions`],
//!   [`App::rename_session`], [`App::delete_session`], [`App::view`] (a session with
//!   its past asks as the same events live asks send, [`history`]);
//! - asks: [`App::ask`] returns an [`Ask`] whose events [`Ask::follow`] pumps, and
//!   [`App::cancel`] stops a session's running ask or re-run by its id; [`App::run`]
//!   is a session with one ask, [`App::rerun`] a replay on new data;
//! - files and previews: [`App::add_files`], [`App::remove_file`], [`App::preview`];
//!   the data explorer: [`App::explore_page`], [`App::explore_summary`],
//!   [`App::explore_code`] ([`crate::explore`]); exports: [`exports`]; settings:
//!   [`settings`]; the engine and the image: [`engine`].
//!
//! Every event a front end is sent goes through [`shown`] (the offline analyst's
//! machine lines stay in the transcript and out of the window).
//!
//! Errors cross into a front end as [`Error`], `{code, message}`, the code read from
//! the typed error in the chain.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use sandalyst::api::{App, SessionConfig};
//! let app = App::open(sandalyst::api::data_root(None)?)?;
//! let session = app.create_session(SessionConfig::default()).await?;
//! app.add_files(session.id(), vec!["examples/building_energy.csv".into()]).await?;
//! let model = Box::new(sandalyst::api::OfflineAnalyst::new());
//! let ask = app.ask(&session, "Find anomalies".into(), model)?;
//! let outcome = ask.follow(&|event| println!("{}", serde_json::to_string(&event).unwrap())).await;
//! println!("{}", outcome.status);
//! # Ok(()) }
//! ```

pub mod engine;
pub mod environment;
pub mod error;
pub mod explore;
pub mod exports;
pub mod files;
pub mod history;
pub mod launch;
pub mod logs;
pub mod notice;
pub mod preview;
pub mod runs;
pub mod settings;
pub mod shown;
pub mod window;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

pub use error::{Cancelled, Error, ErrorCode};

// What a front end shows or passes back, so that it needs no other module of the core.
pub use crate::agent::{ArtifactKind, Event, EventKind, SetupStage};
pub use crate::analyst::OfflineAnalyst;
pub use crate::approval::{Answer, ApprovalMode, Decision};
pub use crate::artifacts::table::CsvPage;
pub use crate::conversation::{CallForm, Usage};
pub use crate::egress::{EgressEvent, EgressKind, NetworkMode, Pin};
pub use crate::model::config::{config_path, ConfigFile, UpdatesSection};
pub use crate::model::listing::Listed;
pub use crate::model::pricing::usage_line;
pub use crate::model::Model;
pub use crate::protocol::{
    AskId, CallId, GoneInput, InputNote, Notice, OutputProblem, RunStatus, SessionError, SessionId,
};
pub use crate::rerun::{FailedCell, Rerun, RerunOutcome};
pub use crate::run::{RunOutcome, RunRequest};
pub use crate::sandbox::Isolation;
pub use crate::session::{
    Added, AskOutcome, SandboxFactory, Session, SessionConfig, SessionSummary,
};
pub use crate::store::StagedFile;
pub use crate::terminal::{escape, escape_lines};
pub use crate::workspace::CollectedFile;

use crate::session::{AskHandle, DockerFactory, Sessions};

/// Where sessions are kept: `dir` when given, else `SANDALYST_DATA_DIR`, else the
/// user's data folder (the command line and the desktop share it).
pub fn data_root(dir: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(d) = dir {
        return Ok(d);
    }
    match std::env::var_os("SANDALYST_DATA_DIR").filter(|d| !d.is_empty()) {
        Some(d) => Ok(PathBuf::from(d)),
        None => crate::store::default_root(),
    }
}

/// Sandboxes from the container engine that `DOCKER_HOST` (or the local socket)
/// names: what the shells use, for sessions and for the engine and image reports.
pub fn default_factory() -> Arc<dyn SandboxFactory> {
    Arc::new(DockerFactory)
}

/// The sessions of one data folder, and the asks running in this process.
#[derive(Clone)]
pub struct App {
    sessions: Sessions,
    /// The cancel of each session's running ask or re-run.
    running: Running,
    /// The task forwarding each session's set-up events (one per session).
    watchers: Arc<Mutex<HashMap<String, tokio::task::JoinHandle<()>>>>,
}

/// A session with what a front end draws: its files and its earlier asks.
#[derive(Serialize)]
pub struct SessionView {
    pub id: SessionId,
    pub title: String,
    pub files: Vec<StagedFile>,
    pub busy: bool,
    /// Which calls wait for the analyst in this session.
    pub approval: ApprovalMode,
    /// The isolation runtime: the one in force when the sandbox has run (`runc`,
    /// `gvisor`), else the session's choice (`auto`, ...).
    pub isolation: String,
    /// The network mode in its text form: `off`, `full`, `allow:pypi.org,…`.
    pub network: String,
    /// Earlier asks, each as the events a front end replays to draw it.
    pub asks: Vec<history::PastAsk>,
}

/// The session's files after an add, and what was said about the folders' entries
/// (links followed, entries left out).
#[derive(Serialize)]
pub struct AddedFiles {
    pub files: Vec<StagedFile>,
    /// Typed: `{kind, ...}` as in the `input_note` notice (`docs/EVENTS.md`).
    pub notes: Vec<InputNote>,
}

/// Per session: the id of the ask (or re-run) running in this process, and its cancel.
type Running = Arc<Mutex<HashMap<String, (String, CancellationToken)>>>;

/// Forget a finished ask, unless a newer one of the session took its place.
fn done(running: &Running, session_id: &str, ask_id: &str) {
    let mut map = running.lock().unwrap();
    if map.get(session_id).is_some_and(|(a, _)| a == ask_id) {
        map.remove(session_id);
    }
}

/// A running ask (or re-run) of this process.
pub struct Ask {
    pub session_id: SessionId,
    handle: AskHandle,
    running: Running,
}

impl Ask {
    /// The ask's id in its session (`ask-3`).
    pub fn ask_id(&self) -> &AskId {
        &self.handle.ask_id
    }

    /// Stop the model and interrupt the running code.
    pub fn cancel(&self) {
        self.handle.cancel();
    }

    /// A token that cancels this ask (for a Ctrl-C handler).
    pub fn canceller(&self) -> CancellationToken {
        self.handle.canceller()
    }

    /// Every event of the ask to `emit` as it happens, then how it ended.
    pub async fn follow(self, emit: &(dyn Fn(Event) + Send + Sync)) -> AskOutcome {
        let Ask {
            handle,
            running,
            session_id,
        } = self;
        let ask_id = handle.ask_id.clone();
        let shown = shown::Shown::default();
        let outcome = handle.follow(None, &|ev: Event| shown.pass(ev, emit)).await;
        done(&running, &session_id, &ask_id);
        outcome
    }
}

impl App {
    /// The sessions of `root`, whose sandboxes are containers of the engine that
    /// `DOCKER_HOST` (or the local socket) names.
    pub fn open(root: PathBuf) -> anyhow::Result<App> {
        App::with_factory(root, default_factory())
    }

    /// The sessions of `root`, with sandboxes from `factory`. Asks left in progress by
    /// a process that is gone are marked interrupted.
    pub fn with_factory(root: PathBuf, factory: Arc<dyn SandboxFactory>) -> anyhow::Result<App> {
        std::fs::create_dir_all(&root)?;
        Ok(App {
            sessions: Sessions::new(root, factory)?,
            running: Arc::default(),
            watchers: Arc::default(),
        })
    }

    /// The data folder.
    pub fn root(&self) -> &Path {
        self.sessions.root()
    }

    /// Where this app's sandboxes come from (for [`engine`]'s reports and builds).
    pub fn factory(&self) -> &dyn SandboxFactory {
        self.sessions.factory()
    }

    // ---- sessions ----------------------------------------------------------------------

    pub async fn create_session(&self, config: SessionConfig) -> Result<Session, SessionError> {
        self.sessions.create(config).await
    }

    /// The session `id` (an id a front end sent is checked first).
    pub async fn session(&self, id: &SessionId) -> Result<Session, Error> {
        files::check_session_id(id).map_err(|e| Error::new(ErrorCode::NotFound, e.to_string()))?;
        Ok(self.sessions.open(id).await?)
    }

    /// The folder of session `id`, if it is a session of this data folder.
    pub fn session_dir(&self, id: &SessionId) -> Option<PathBuf> {
        files::check_session_id(id).ok()?;
        let dir = self.root().join(id);
        dir.is_dir().then_some(dir)
    }

    fn dir_of(&self, id: &SessionId) -> Result<PathBuf, Error> {
        self.session_dir(id)
            .ok_or_else(|| Error::new(ErrorCode::NotFound, "that session no longer exists"))
    }

    /// Every session, newest first; folders that cannot be read come last, with why.
    pub async fn list_sessions(&self) -> Result<Vec<SessionSummary>, Error> {
        let sessions = self.sessions.clone();
        blocking(move || sessions.list()).await
    }

    pub async fn rename_session(&self, id: &SessionId, title: &str) -> Result<(), Error> {
        files::check_session_id(id).map_err(|e| Error::new(ErrorCode::NotFound, e.to_string()))?;
        Ok(self.sessions.rename(id, title).await?)
    }

    /// Delete a session (refused while an ask runs), its container and its folder.
    pub async fn delete_session(&self, id: &SessionId) -> Result<(), Error> {
        files::check_session_id(id).map_err(|e| Error::new(ErrorCode::NotFound, e.to_string()))?;
        if let Some(w) = self.watchers.lock().unwrap().remove(id.as_str()) {
            w.abort();
        }
        Ok(self.sessions.delete(id).await?)
    }

    /// A session with its files and past asks (read off the async runtime).
    pub async fn view(&self, id: &SessionId) -> Result<SessionView, Error> {
        let s = self.session(id).await?;
        tokio::task::spawn_blocking(move || {
            let meta = s.meta();
            SessionView {
                id: s.id().clone(),
                title: meta.display_title(),
                files: meta.files.clone(),
                busy: s.is_busy(),
                approval: s.config().approval,
                isolation: meta
                    .isolation
                    .clone()
                    .unwrap_or_else(|| s.config().sandbox.isolation.to_string()),
                network: s.config().sandbox.network.to_string(),
                asks: history::past_asks(&s),
            }
        })
        .await
        .map_err(|e| Error::from(anyhow::Error::from(e)))
    }

    /// The session's own events (set-up, staging, engine errors) to `emit` as they
    /// come, until another watch of the same session starts.
    pub async fn watch(
        &self,
        id: &SessionId,
        emit: impl Fn(Event) + Send + 'static,
    ) -> Result<(), Error> {
        let s = self.session(id).await?;
        let task = s.watch(emit);
        if let Some(old) = self.watchers.lock().unwrap().insert(id.to_string(), task) {
            old.abort();
        }
        Ok(())
    }

    /// Release every open session's container (the app is closing).
    pub async fn close_all(&self) {
        self.sessions.close_all().await
    }

    // ---- files -------------------------------------------------------------------------

    /// Stage files or folders into the session; its sandbox starts in the background.
    /// A FIFO, socket or device is refused with a sentence.
    pub async fn add_files(
        &self,
        id: &SessionId,
        paths: Vec<PathBuf>,
    ) -> Result<AddedFiles, Error> {
        let s = self.session(id).await?;
        let added = s.add_inputs(paths).await?;
        Ok(AddedFiles {
            files: s.meta().files,
            notes: added.notes,
        })
    }

    pub async fn remove_file(&self, id: &SessionId, name: &str) -> Result<Vec<StagedFile>, Error> {
        let s = self.session(id).await?;
        s.remove_file(name).await?;
        Ok(s.meta().files)
    }

    /// The file of session `id` at `path` (relative to its folder), checked, for the
    /// system to open or a file manager to show selected.
    pub fn file_to_open(&self, id: &SessionId, path: &str) -> Result<PathBuf, Error> {
        let root = self.dir_of(id)?;
        Ok(files::resolve_inside(&root, path).map_err(anyhow::Error::from)?)
    }

    /// The original of the input file `name` of a session (the user chose it).
    async fn input_source(&self, id: &SessionId, name: &str) -> Result<PathBuf, Error> {
        let s = self.session(id).await?;
        s.meta()
            .files
            .into_iter()
            .find(|f| f.name == name)
            .map(|f| PathBuf::from(f.source))
            .ok_or_else(|| Error::bad_input(format!("{name} is not a file of this session")))
    }

    /// A preview of a file of the session folder (`path` relative to it; its images
    /// under `url_base`), or of an input file (`input`: `path` is its name).
    pub async fn preview(
        &self,
        id: &SessionId,
        path: String,
        input: bool,
        url_base: String,
    ) -> Result<preview::FilePreview, Error> {
        if input {
            let source = self.input_source(id, &path).await?;
            return blocking(move || preview::preview_input(&source, &path)).await;
        }
        let root = self.dir_of(id)?;
        blocking(move || preview::preview(&url_base, &root, &path)).await
    }

    /// The assistant's text `markdown` of session `id` as sanitised HTML
    /// ([`preview::answer_html`]); its images come from the session's outputs, which a
    /// front end finds under `url_base` (`sandalyst://localhost/<id>/`).
    pub async fn answer_html(
        &self,
        id: &SessionId,
        markdown: String,
        url_base: String,
    ) -> Result<String, Error> {
        files::check_session_id(id).map_err(|e| Error::new(ErrorCode::NotFound, e.to_string()))?;
        let outputs = format!("{url_base}{}/", crate::store::OUTPUTS);
        blocking(move || Ok(preview::answer_html(&markdown, &outputs))).await
    }

    /// The bytes of an image of the session folder (`path` relative to it), for a front
    /// end that puts it on the clipboard; only images, at most
    /// [`preview::MAX_IMAGE_BYTES`].
    pub async fn image_bytes(&self, id: &SessionId, path: String) -> Result<Vec<u8>, Error> {
        let root = self.dir_of(id)?;
        blocking(move || preview::image_bytes(&root, &path)).await
    }

    /// The file a request names: an input's original, or a path in the session folder.
    async fn table_file(&self, id: &SessionId, path: &str, input: bool) -> Result<PathBuf, Error> {
        let file = if input {
            self.input_source(id, path).await?
        } else {
            files::resolve_inside(&self.dir_of(id)?, path).map_err(anyhow::Error::from)?
        };
        let (f, name) = (file.clone(), path.to_string());
        blocking(move || explore::check_file(&f, &name)).await?;
        Ok(file)
    }

    /// A page of a view (filters, sort) of a table file of the session or an input
    /// (`input`: `path` is its name).
    pub async fn explore_page(
        &self,
        id: &SessionId,
        path: String,
        input: bool,
        req: crate::explore::PageRequest,
    ) -> Result<crate::explore::ViewPage, Error> {
        let file = self.table_file(id, &path, input).await?;
        blocking(move || explore::page(&file, req)).await
    }

    /// The summary of each column over the rows a view's filters keep.
    pub async fn explore_summary(
        &self,
        id: &SessionId,
        path: String,
        input: bool,
        view: crate::explore::ViewSpec,
    ) -> Result<crate::explore::Summary, Error> {
        let file = self.table_file(id, &path, input).await?;
        blocking(move || explore::summary(&file, &view)).await
    }

    /// A view in words and as pandas code for the agent's sandbox.
    pub async fn explore_code(
        &self,
        id: &SessionId,
        path: String,
        input: bool,
        view: crate::explore::ViewSpec,
    ) -> Result<crate::explore::Code, Error> {
        let file = self.table_file(id, &path, input).await?;
        blocking(move || explore::code(&file, &path, input, &view)).await
    }

    /// Every row of a view (its filters and sort) saved as `format` at `dest`, which
    /// the person chose in a save dialog. Returns the rows written.
    pub async fn explore_save(
        &self,
        id: &SessionId,
        path: String,
        input: bool,
        view: crate::explore::ViewSpec,
        dest: std::path::PathBuf,
        format: crate::explore::SaveAs,
    ) -> Result<usize, Error> {
        exports::absolute(&dest)?;
        let file = self.table_file(id, &path, input).await?;
        blocking(move || crate::explore::save(format, &file, &view, &dest)).await
    }

    // ---- asks --------------------------------------------------------------------------

    /// Ask `session` with `model`; the ask's events come from [`Ask::follow`], and
    /// [`App::cancel`] stops it.
    pub fn ask(
        &self,
        session: &Session,
        prompt: String,
        model: Box<dyn Model>,
    ) -> Result<Ask, SessionError> {
        let handle = session.ask(prompt, model)?;
        self.running.lock().unwrap().insert(
            session.id().to_string(),
            (handle.ask_id.to_string(), handle.canceller()),
        );
        Ok(Ask {
            session_id: session.id().clone(),
            handle,
            running: self.running.clone(),
        })
    }

    /// Ask session `id` as the desktop does: the model `model` (a spec such as
    /// `openai:gpt-5.4`, or `offline`) and the session settings of `settings`, which
    /// apply from this ask unless one is running. `approval` is the session's own
    /// choice of which calls wait for the analyst (`None`: the mode it has).
    pub async fn ask_with_settings(
        &self,
        id: &SessionId,
        prompt: String,
        model: String,
        settings: &settings::Settings,
        approval: Option<ApprovalMode>,
    ) -> Result<Ask, Error> {
        if prompt.trim().is_empty() {
            return Err(SessionError::EmptyPrompt.into());
        }
        let s = self.session(id).await?;
        let current = settings.clone();
        let model = blocking(move || settings::open_model(&model, &current)).await?;
        if !s.is_busy() {
            let mut config = settings::desktop_config(settings).await?;
            config.approval = approval.unwrap_or(s.config().approval);
            s.set_config(config).await?;
        }
        Ok(self.ask(&s, prompt, model)?)
    }

    /// Answer call `call_id` of session `id`'s ask, which waits for the analyst
    /// (an `approval_requested` event): approve, edit and approve, or reject.
    pub async fn answer_approval(
        &self,
        id: &SessionId,
        call_id: &CallId,
        answer: Answer,
    ) -> Result<(), Error> {
        let s = self.session(id).await?;
        s.answer_approval(call_id, answer).map_err(|e| {
            let code = match e {
                crate::approval::AnswerError::NotPending { .. } => ErrorCode::NotPending,
                crate::approval::AnswerError::EmptyEdit => ErrorCode::BadInput,
            };
            Error::new(code, e.to_string())
        })
    }

    /// Stop the session's running ask or re-run: the model stream ends and the code is
    /// interrupted. False when nothing runs there in this process.
    pub fn cancel(&self, session_id: &SessionId) -> bool {
        match self.running.lock().unwrap().get(session_id.as_str()) {
            Some((_, c)) => {
                c.cancel();
                true
            }
            None => false,
        }
    }

    /// One task from start to end (`sandalyst run`): a session with one ask.
    pub async fn run(
        &self,
        request: RunRequest,
        model: &mut dyn Model,
        emit: &(dyn Fn(Event) + Send + Sync),
        cancel: &CancellationToken,
    ) -> anyhow::Result<RunOutcome> {
        let shown = shown::Shown::default();
        let emit = |ev: Event| shown.pass(ev, emit);
        crate::run::execute(&self.sessions, request, model, &emit, cancel).await
    }

    /// Prepare a re-run of session `source` on new `inputs`: the new session exists
    /// (in the history) when this returns; [`App::replay`] runs it.
    pub async fn rerun(&self, source: &SessionId, inputs: Vec<PathBuf>) -> anyhow::Result<Rerun> {
        files::check_session_id(source)
            .map_err(|e| anyhow::Error::new(Error::new(ErrorCode::NotFound, e.to_string())))?;
        crate::rerun::prepare(&self.sessions, source, inputs).await
    }

    /// Check that `--out DIR` can be made and written, before any work.
    pub async fn check_out_dir(&self, dir: &std::path::Path) -> anyhow::Result<()> {
        let dir = dir.to_path_buf();
        tokio::task::spawn_blocking(move || crate::run::check_writable(&dir)).await?
    }

    /// Copy a session's outputs folder into `dir` (`--out`).
    pub async fn copy_outputs(
        &self,
        from: &std::path::Path,
        dir: &std::path::Path,
    ) -> anyhow::Result<()> {
        let (from, to) = (from.to_path_buf(), dir.to_path_buf());
        tokio::task::spawn_blocking(move || crate::store::copy_dir(&from, &to))
            .await?
            .map_err(|e| anyhow::anyhow!("copying the outputs to {}: {e}", dir.display()))
    }

    /// Replay a prepared re-run; [`App::cancel`] with its session id stops it.
    pub async fn replay(
        &self,
        rerun: Rerun,
        emit: &(dyn Fn(Event) + Send + Sync),
        cancel: Option<CancellationToken>,
    ) -> anyhow::Result<RerunOutcome> {
        let id = rerun.session_id().to_string();
        let cancel = cancel.unwrap_or_default();
        self.running
            .lock()
            .unwrap()
            .insert(id.clone(), ("rerun".into(), cancel.clone()));
        let shown = shown::Shown::default();
        let outcome = rerun.run(&|ev: Event| shown.pass(ev, emit), &cancel).await;
        done(&self.running, &id, "rerun");
        outcome
    }
}

/// `f` off the async runtime (file and keychain work), its error as an [`Error`].
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> Result<T, Error> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(anyhow::Error::from)?
        .map_err(Error::from)
}
