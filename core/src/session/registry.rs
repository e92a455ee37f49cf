//! The app's sessions: one place that creates, opens, reads, lists, renames and
//! deletes them.

use super::*;

/// A session as the history list shows it.
#[derive(Clone, Debug, Serialize)]
pub struct SessionSummary {
    pub id: SessionId,
    pub title: String,
    pub created: String,
    pub asks: usize,
    /// The latest ask's status; `None` while one runs or before the first.
    pub status: Option<RunStatus>,
    pub files: Vec<StagedFile>,
    /// How many output files its asks brought back.
    #[serde(default)]
    pub outputs: usize,
    /// Why the session's folder cannot be read, when it cannot (it is listed all the
    /// same, so nothing disappears from the history without a word).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
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

    /// Where these sessions' sandboxes come from.
    pub fn factory(&self) -> &dyn SandboxFactory {
        self.factory.as_ref()
    }

    pub async fn create(&self, config: SessionConfig) -> Result<Session, SessionError> {
        let config = config.settled()?;
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
        tracing::info!(session = %session.id(), "session created");
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
        tracing::info!(session = %id, unreadable_lines = unreadable, "session opened");
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

    /// Session `id` as stored and its settings, read without opening it or taking any
    /// lock (a re-run reads its source this way).
    pub async fn read(&self, id: &str) -> anyhow::Result<(RunDir, SessionConfig)> {
        let (store, id) = (self.store.clone(), id.to_string());
        blocking(move || {
            let run = store.open_run(&id)?;
            let config = std::fs::read_to_string(run.path.join(SETTINGS))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
            Ok((run, config))
        })
        .await
    }

    /// A new session whose record starts as `meta` (its files, a link to another
    /// session) with `config`, both on disk before it opens.
    pub async fn create_from(
        &self,
        meta: RunMeta,
        config: SessionConfig,
    ) -> Result<Session, SessionError> {
        let config = config.settled()?;
        let store = self.store.clone();
        let id = blocking(move || {
            let run = store.create_run(meta)?;
            crate::store::write_atomic(
                &run.path.join(SETTINGS),
                serde_json::to_string_pretty(&config)?.as_bytes(),
            )?;
            Ok(run.meta.id)
        })
        .await
        .map_err(SessionError::storage)?;
        self.open(&id).await
    }

    /// Every session, newest first; folders that cannot be read come last, with why.
    pub fn list(&self) -> anyhow::Result<Vec<SessionSummary>> {
        let listing = self.store.scan()?;
        let mut all: Vec<SessionSummary> = listing
            .runs
            .into_iter()
            .map(|m| SessionSummary {
                title: m.display_title(),
                id: m.id.into(),
                created: m.created,
                asks: m.asks.len().max(usize::from(!m.prompt.is_empty())),
                status: m.status,
                files: m.files,
                outputs: m.outputs.len(),
                unreadable: None,
            })
            .collect();
        all.reverse();
        all.extend(listing.unreadable.into_iter().map(|u| SessionSummary {
            title: crate::artifacts::display_name(&u.folder),
            id: u.folder.into(),
            created: String::new(),
            asks: 0,
            status: None,
            files: Vec::new(),
            outputs: 0,
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
