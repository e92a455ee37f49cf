//! The session's sandbox: started (with the workspace restored and the inputs
//! staged) when needed, released when idle, closed with the session.

use super::*;

impl Session {
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

    /// Keep the workspace and remove the container. The session can still be asked
    /// again: a new container starts with the workspace restored.
    pub async fn release(&self) {
        let mut slot = self.inner.sandbox.lock().await;
        if let Some(live) = slot.take() {
            let archive = self.inner.dir.join(ARCHIVE);
            let max = self.config().max_archive_bytes;
            if !self.inner.archived.load(Ordering::SeqCst) {
                if let Err(e) = live.sandbox.archive_workspace(&archive, max).await {
                    let reason = format!("{e:#}");
                    let disk_full = false;
                    self.notice(None, Notice::ArchiveNotKept { reason, disk_full });
                }
            }
            if let Err(e) = live.sandbox.close().await {
                let reason = format!("{e:#}");
                self.notice(None, Notice::SandboxNotClosed { reason });
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

    /// The running sandbox, started (and the workspace restored, and every input
    /// staged) if there is none.
    pub(super) async fn sandbox(&self) -> Result<Arc<dyn Sandbox>, SessionError> {
        let mut slot = self.inner.sandbox.lock().await;
        if slot.is_none() {
            // A sandbox writes the session (staging, archives): only its owner starts one.
            let started = match self.claim().await {
                Ok(()) => self.start_sandbox().await,
                Err(e) => Err(e),
            };
            match started {
                Ok(live) => {
                    tracing::info!(session = %self.id(), isolation = %live.sandbox.isolation(), "sandbox started");
                    *slot = Some(live)
                }
                Err(e) => {
                    tracing::warn!(session = %self.id(), code = %e.code(), "the sandbox did not start: {e}");
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

    pub(super) async fn start_sandbox(&self) -> Result<Live, SessionError> {
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
                &config.sandbox_config(),
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
            let inputs = (gone.iter())
                .map(|(src, name)| GoneInput {
                    name: name.clone(),
                    original: src.display().to_string(),
                })
                .collect();
            let notice = Notice::InputsNotRestaged { inputs };
            self.note(format!("{notice}."));
            self.notice(None, notice);
        }
        let all: Vec<String> = host.iter().map(|f| f.rel.clone()).collect();
        // What the model is told of the files: nothing on a first start, that all is
        // as it was, or (the user told too, typed) how the workspace was recovered.
        let (as_it_was, recovered) = match check {
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
                        (reopened, None)
                    } else {
                        let put = sandbox.upload_outputs(&outputs_dir, &newer).await;
                        let older = Notice::WorkspaceRecovered {
                            archive: ArchiveProblem::Older,
                            outputs: newer.len(),
                            not_put_back: put.err().map(|e| format!("{e:#}")),
                        };
                        (false, Some(older))
                    }
                }
                Err(e) => {
                    // Inputs are staged again by `sandbox()` (none is marked staged).
                    let reason = format!("{e:#}");
                    let why = ArchiveProblem::NotRestored { reason };
                    (
                        false,
                        Some(self.rebuild_outputs(sandbox.as_ref(), why, &all).await),
                    )
                }
            },
            ArchiveCheck::Unreadable { reason } => {
                let why = ArchiveProblem::Unreadable { reason };
                (
                    false,
                    Some(self.rebuild_outputs(sandbox.as_ref(), why, &all).await),
                )
            }
            ArchiveCheck::Missing if reopened || !all.is_empty() => {
                let why = ArchiveProblem::Missing;
                (
                    false,
                    Some(self.rebuild_outputs(sandbox.as_ref(), why, &all).await),
                )
            }
            ArchiveCheck::Missing => (false, None),
        };
        if as_it_was {
            self.note("The files: input/, output/ and the other files of the workspace were restored from the archive of the last ask, as they were.".into());
        }
        if let Some(notice) = recovered {
            self.note(format!("The files: {notice}."));
            self.notice(None, notice);
        }
        if sandbox.isolation() != crate::sandbox::Isolation::Auto {
            self.inner.run.lock().unwrap().meta.isolation = Some(sandbox.isolation().to_string());
        }
        let millis = started.elapsed().as_millis() as u64;
        self.broadcast(
            None,
            EventKind::Setup(SetupStage::SandboxReady {
                millis,
                warm_for_ms: None,
            }),
        );
        Ok(Live {
            sandbox,
            staged,
            ready: (millis, Instant::now()),
        })
    }

    /// Put the session's outputs (the app's copy) into a workspace started without
    /// its archive (`why`), and say what came back.
    pub(super) async fn rebuild_outputs(
        &self,
        sandbox: &dyn Sandbox,
        why: ArchiveProblem,
        files: &[String],
    ) -> Notice {
        let put = match files.is_empty() {
            true => Ok(()),
            false => sandbox.upload_outputs(&self.outputs_dir(), files).await,
        };
        Notice::WorkspaceRecovered {
            archive: why,
            outputs: files.len(),
            not_put_back: put.err().map(|e| format!("{e:#}")),
        }
    }

    /// Release the container once the session has been idle for `idle_release`.
    pub(super) fn spawn_idle_watch(&self) {
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
    pub(super) async fn record_staging(&self, report: &[StagedInput]) {
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
    pub(super) async fn check_changed_inputs(&self, sandbox: &dyn Sandbox) {
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
            let notice = Notice::InputChanged {
                name: f.name.clone(),
                bytes: f.bytes,
            };
            self.note(format!("{notice}."));
            self.notice(None, notice);
        }
        let _ = self.save_meta().await;
        self.hash_in_background(&fresh);
    }
}
