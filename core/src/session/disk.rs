//! The session on disk: the lock taken and the session read again, loading for
//! viewing, saving run.json and the settings, repairing a cut transcript.

use super::*;

impl Session {
    /// Only the owner writes: a save without the lock is refused (nothing calls one).
    pub(super) fn check_owned(&self) -> Result<(), SessionError> {
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

    pub(super) async fn save_meta(&self) -> Result<(), SessionError> {
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

    pub(super) async fn save_settings(&self) -> Result<(), SessionError> {
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
    pub(super) fn claim(&self) -> Result<(), SessionError> {
        let _one = self.claiming.lock().unwrap();
        if self.lock.lock().unwrap().is_some() {
            return Ok(());
        }
        let lock = SessionLock::try_acquire(&self.dir).map_err(|e| match e {
            LockError::Held { holder } => SessionError::SessionBusy {
                id: self.id.to_string(),
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
    pub(super) fn refresh(&self) -> anyhow::Result<()> {
        let _one = self.claiming.lock().unwrap();
        if self.lock.lock().unwrap().is_some() {
            return Ok(());
        }
        self.adopt(load_for_viewing(&self.dir)?);
        Ok(())
    }

    pub(super) fn adopt(&self, loaded: Loaded) {
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

pub(super) const REOPENED: &str =
    "This session was reopened in a new sandbox: the Python variables and \
     imports of earlier calls are gone.";

/// A session as read from its folder.
pub(super) struct Loaded {
    pub(super) run: RunDir,
    pub(super) items: Vec<Item>,
    /// `None` when `session.json` is missing or unreadable.
    pub(super) config: Option<SessionConfig>,
    /// Lines of the transcript that are not entries (kept on disk, left out).
    pub(super) unreadable: usize,
}

/// Read the session in `dir`: metadata, conversation and settings. Blocking.
pub(super) fn load(dir: &Path) -> anyhow::Result<Loaded> {
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
pub(super) fn load_for_viewing(dir: &Path) -> anyhow::Result<Loaded> {
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
pub(super) fn in_place<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// A transcript cut short by a crash may end with calls that have no output; every
/// provider refuses that, so each gets one saying what happened.
pub(super) fn repair(mut items: Vec<Item>) -> Vec<Item> {
    let answered: BTreeSet<CallId> = items
        .iter()
        .filter_map(|i| match i {
            Item::ToolOutput { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    let open: Vec<CallId> = items
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::CallForm;

    #[test]
    fn open_calls_get_an_output_on_repair() {
        let items = vec![
            Item::User { text: "t".into() },
            Item::ToolCall {
                call_id: "a".into(),
                name: "python".into(),
                arguments: "{}".into(),
                form: CallForm::Structured,
            },
        ];
        let fixed = repair(items);
        assert!(
            matches!(&fixed[2], Item::ToolOutput { call_id, is_error: true, .. } if call_id == "a")
        );
    }
}
