//! The session's input files: staging them (into a live sandbox too), hashing them
//! in the background, removing them, and what the model is told about them.

use super::*;

/// At most this many notes about an add's folders are said (the rest as a count).
pub(super) const MAX_NOTES: usize = 50;

/// What [`Session::add_inputs`] staged, and what it said about the folders' entries.
#[derive(Clone, Debug, Serialize)]
pub struct Added {
    pub files: Vec<StagedFile>,
    /// Typed (a link followed, a link or an entry left out); each line as said, e.g.
    /// "input/docs/latest.csv -> /data/x.csv (a link, followed)".
    pub notes: Vec<InputNote>,
}

impl Session {
    /// Stage files (or folders) as `input/NAME`. The sandbox starts in the background
    /// if it is not running; a running one receives them at once, and the model is
    /// told on its next turn. A path that is not a regular file or folder is refused
    /// (`bad_input`); what was said about the folders' entries (links followed,
    /// entries left out) goes out as `notice` events ([`Notice::InputNote`]).
    pub async fn add_files(&self, paths: Vec<PathBuf>) -> Result<Vec<StagedFile>, SessionError> {
        self.add_inputs(paths).await.map(|a| a.files)
    }

    /// [`Session::add_files`], also returning the notes about the folders' entries
    /// (for a front end that shows them beside the files).
    pub async fn add_inputs(&self, paths: Vec<PathBuf>) -> Result<Added, SessionError> {
        // Classified and opened (without blocking) off the async runtime.
        let follow = self.config().follow_links;
        let manifest = blocking(move || Manifest::from_paths_following(&paths, follow))
            .await
            .map_err(SessionError::bad_input)?;
        let notes = manifest.notes_said(MAX_NOTES);
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
        for note in &notes {
            self.notice(None, Notice::InputNote(note.clone()));
        }
        if !notes.is_empty() {
            // The model hears it too, as the same lines: a folder it looks at may lack
            // files the user sees.
            let lines: Vec<String> = notes.iter().map(|n| n.to_string()).collect();
            self.note(format!(
                "While staging the user's folders: {}.",
                lines.join("; ")
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
    pub(super) fn hash_in_background(&self, files: &[StagedFile]) {
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

    pub(super) async fn remove_file_owned(&self, name: &str) -> Result<(), SessionError> {
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

    pub(super) async fn input_summaries(&self) -> Vec<InputSummary> {
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
}

/// The first lines of a text file (a CSV's header and rows), for the instructions.
/// Opened without blocking: a path that is no longer a regular file has no head.
pub(super) fn text_head(path: &Path) -> Option<String> {
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
