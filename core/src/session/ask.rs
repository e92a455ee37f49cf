//! One ask: the loop run on the session's conversation, its outputs brought back and
//! kept with their provenance, and the loop's view of the session ([`AskHost`]).

use super::*;

impl Session {
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
            ask_id: ask_id.into(),
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

    pub(super) async fn run_ask(
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
        // The prompt's length, not its words: they may be the analyst's data.
        tracing::info!(session = %self.id(), ask = ask_id, model = %model.describe(), prompt_chars = prompt.chars().count(), "ask started");
        let started = std::time::Instant::now();
        host.emit(EventKind::AskStarted {
            prompt: prompt.into(),
            model: model.describe(),
        });
        // The inputs' profile runs in the sandbox, so a model that takes it waits for
        // the sandbox. Worth it for a model whose calls have a mode (Chat Completions:
        // the small local models it was made for, issue 34); a model of native calls
        // only may be asked while the sandbox starts, without it, and inspects the
        // files itself.
        let may_go_first = !model.wants_input_profile() || model.call_mode().is_none();
        let sandbox = match self.begin_ask(ask_id, prompt, &model.describe()).await {
            Ok(()) => self.ask_sandbox(may_go_first, cancel).await,
            Err(e) => Err(e),
        };
        let mut ran = match &sandbox {
            Ok(sandbox) => self.drive(&host, sandbox, model, prompt, cancel).await,
            Err(_) if cancel.is_cancelled() => Ran::default(),
            Err(e) => Ran {
                status: RunStatus::Failed {
                    message: e.to_string(),
                },
                error: Some(e.clone()),
                ..Ran::default()
            },
        };
        if let (RunStatus::Failed { message }, None) = (&ran.status, &ran.error) {
            ran.error = Some(SessionError::Storage {
                message: message.clone(),
            });
        }
        if let Some(e) = &ran.error {
            host.emit(EventKind::Error { error: e.info() });
        }
        let Ran {
            mut status,
            mut error,
            turns,
            usage,
        } = ran;
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
        let seconds = started.elapsed().as_secs_f64();
        match &error {
            Some(e) => {
                tracing::warn!(session = %self.id(), ask = ask_id, status = status.code(), code = %e.code(), turns, seconds, "ask ended: {e}")
            }
            None => {
                tracing::info!(session = %self.id(), ask = ask_id, status = status.code(), turns, input_tokens = usage.input_tokens, output_tokens = usage.output_tokens, seconds, "ask ended")
            }
        }
        host.emit(EventKind::AskFinished {
            status: status.clone(),
            turns,
            answer: answer.clone(),
            outputs_dir: self.outputs_dir().display().to_string(),
        });
        AskOutcome {
            session_id: self.id().clone(),
            ask_id: ask_id.into(),
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

    /// The session's sandbox for this ask (see [`Session::starting`]). On a new
    /// workspace, for a model that `may_go_first`, a sandbox still starting is not
    /// waited for: the model's first request goes out while it starts, and its calls
    /// wait for it. Otherwise it is ready before the ask goes on, and one started
    /// before the ask says so.
    async fn ask_sandbox(
        &self,
        may_go_first: bool,
        cancel: &CancellationToken,
    ) -> Result<Starting, SessionError> {
        // Warm: started before this ask asked for it, and ready (not still starting).
        let warm = match self.inner.sandbox.try_lock() {
            Ok(slot) => slot.as_ref().map(|live| live.ready),
            Err(_) => None,
        };
        let mut starting = self.starting(cancel);
        if warm.is_none() && may_go_first && self.workspace_is_new().await {
            starting.early = true;
            return Ok(starting);
        }
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(SessionError::Sandbox { message: "cancelled before the sandbox was ready".into() }),
            started = starting.ready() => started?,
        };
        if let Some((millis, at)) = warm {
            let warm_for_ms = Some(at.elapsed().as_millis() as u64);
            let ready = SetupStage::SandboxReady {
                millis,
                warm_for_ms,
            };
            self.broadcast(None, EventKind::Setup(ready));
        }
        Ok(starting)
    }

    /// The loop on this conversation, then its outputs brought back. The sandbox may
    /// still be starting (see [`Self::ask_sandbox`]): a start that fails ends the ask
    /// with the start's error, whatever the model was doing.
    async fn drive(
        &self,
        host: &AskHost<'_>,
        sandbox: &Starting,
        model: &mut dyn Model,
        prompt: &str,
        cancel: &CancellationToken,
    ) -> Ran {
        let config = self.config();
        let instructions = self.instructions(sandbox, &config, model.vision()).await;
        self.resume_call_mode(model).await;
        let first = self.items().is_empty();
        // Not when the model goes first: the profile would wait for the sandbox.
        let profile = if first && model.wants_input_profile() && !sandbox.early {
            self.profile_inputs(host, sandbox, cancel).await
        } else {
            None
        };
        let mut agent = Agent::new(model, sandbox, host, self.items());
        agent.instructions = instructions;
        agent.tools = config.tools;
        agent.limits = config.limits.clone();
        agent.show_images = config.show_images;
        // Going first is for a new workspace: nothing in output/.
        agent.outputs_known = sandbox.early;
        let notes = self.take_notes();
        let mut task = prompt.to_string();
        if !notes.is_empty() {
            task = format!("{task}\n\n{}", crate::protocol::app_note(&notes.join(" ")));
        }
        if let Some((note, load_cell)) = profile {
            task = format!("{task}\n\n{note}");
            agent.prelude = load_cell.filter(|_| agent.tools.python);
        }
        let stop = cancel.child_token();
        let (ended, ()) = tokio::join!(agent.run(&task, &stop), sandbox.stop_on_failure(&stop));
        let crate::agent::Ended {
            mut status,
            failure,
        } = ended;
        let (turns, usage) = (agent.turns, agent.usage);
        if let (Some(mode), Some(root)) = (agent.model.learned_call_mode(), self.store_root()) {
            let described = agent.model.describe();
            // A cache: if it cannot be written, the next session learns it again.
            let _ = blocking(move || Ok(crate::store::call_modes::learn(&root, &described, mode)?))
                .await;
        }
        *self.inner.items.lock().unwrap() = std::mem::take(&mut agent.items);
        // A cancelled ask does not wait for a start still under way.
        let started = tokio::select! {
            biased;
            started = sandbox.ready() => started,
            _ = cancel.cancelled() => return Ran { turns, usage, ..Ran::default() },
        };
        let (live, before) = match started {
            Ok(started) => started,
            Err(_) if cancel.is_cancelled() => {
                return Ran {
                    turns,
                    usage,
                    ..Ran::default()
                }
            }
            // The start's own error, whatever the model did meanwhile.
            Err(e) => {
                return Ran {
                    status: RunStatus::Failed {
                        message: e.to_string(),
                    },
                    error: Some(e),
                    turns,
                    usage,
                }
            }
        };
        let error = failure.map(|e| SessionError::from_failure(&e));
        // A disk that filled up says so in the status too, not only in the error.
        if let (RunStatus::Failed { message }, Some(SessionError::Storage { message: m })) =
            (&mut status, &error)
        {
            message.clone_from(m);
        }
        self.check_changed_inputs(live.as_ref()).await;
        self.collect(host, live.as_ref(), &config, &before, &mut status)
            .await;
        Ran {
            status,
            error,
            turns,
            usage,
        }
    }

    /// A later ask goes on in the call mode an earlier one settled on; a new session
    /// in the one `auto` learned for this model before (read only for a model whose
    /// calls have a mode).
    async fn resume_call_mode(&self, model: &mut dyn Model) {
        if model.call_mode().is_none() {
            return;
        }
        let settled = self
            .meta()
            .asks
            .iter()
            .rev()
            .find_map(|a| a.call_mode.clone());
        if let Some(record) = settled {
            return model.resume_call_mode(record.mode, "as earlier in this session");
        }
        let Some(root) = self.store_root() else {
            return;
        };
        let key = model.describe();
        let learned = blocking(move || Ok(crate::store::call_modes::learned(&root, &key)))
            .await
            .ok()
            .flatten();
        if let Some(l) = learned {
            let day = l.at.get(..10).unwrap_or(&l.at);
            model.resume_call_mode(
                l.mode,
                &format!("as this model's earlier sessions did (learned {day})"),
            );
        }
    }

    /// The folder that holds this session's folder (and what is kept beside sessions).
    fn store_root(&self) -> Option<PathBuf> {
        self.dir().parent().map(Path::to_path_buf)
    }

    /// The system prompt for this sandbox: the inputs, tools, limits and what the
    /// image holds (read once per sandbox; the fixed sentence where the sandbox cannot
    /// say: the in-memory fake, a broken custom image).
    async fn instructions(
        &self,
        sandbox: &dyn Sandbox,
        config: &SessionConfig,
        model_vision: bool,
    ) -> String {
        let frozen = self.inner.described.lock().unwrap().clone();
        let summaries = match frozen {
            Some(s) => s,
            None => {
                let s = self.input_summaries().await;
                *self.inner.described.lock().unwrap() = Some(s.clone());
                s
            }
        };
        let (libraries, interactive_charts) = match sandbox.python_env().await {
            Ok(env) => (
                crate::sandbox::packages::describe(&env),
                env.version_of("plotly").is_some(),
            ),
            Err(_) => (instructions::LIBRARIES.to_string(), false),
        };
        instructions::build(&instructions::Context {
            inputs: &summaries,
            tools: config.tools,
            vision: config.show_images && model_vision,
            network: &config.sandbox.network,
            limits: &config.limits,
            memory_mib: (config.sandbox.memory_bytes >> 20) as u64,
            libraries: &libraries,
            interactive_charts,
            extra: &config.instructions,
        })
    }

    pub(super) async fn begin_ask(
        &self,
        ask_id: &str,
        prompt: &str,
        model: &str,
    ) -> Result<(), SessionError> {
        self.repair_transcript(ask_id).await?;
        {
            let mut run = self.inner.run.lock().unwrap();
            let m = &mut run.meta;
            if m.prompt.is_empty() {
                m.prompt = prompt.to_string();
                m.model = model.to_string();
            }
            if m.title.is_empty() {
                m.title = crate::store::title_from(prompt);
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
    pub(super) async fn collect(
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
        let collected = match collected {
            Ok(mut c) => {
                // Each file kept is checked once, so the history can mark what is not
                // what its name says.
                let dir = self.outputs_dir();
                let names: Vec<String> = c.files.iter().map(|f| f.path.clone()).collect();
                let checked = super::blocking(move || {
                    Ok(names
                        .iter()
                        .map(|n| crate::artifacts::check::file_problem(&dir.join(n), n))
                        .collect::<Vec<_>>())
                })
                .await;
                for (f, problem) in c.files.iter_mut().zip(checked.unwrap_or_default()) {
                    f.invalid = problem;
                }
                Ok(c)
            }
            Err(e) => Err(e),
        };
        match collected {
            Ok(collected) => {
                if !collected.refused.is_empty() {
                    host.emit(EventKind::OutputsRefused {
                        count: collected.refused.len(),
                        refused: collected
                            .refused
                            .iter()
                            .take(crate::agent::events::MAX_REFUSED_SHOWN)
                            .cloned()
                            .collect(),
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
                host.emit(EventKind::Notice(Notice::ArchiveNotKept {
                    reason: message.clone(),
                    disk_full: true,
                }));
                if !matches!(status, RunStatus::Failed { .. }) {
                    *status = RunStatus::Failed { message };
                }
            }
            Err(e) => host.emit(EventKind::Notice(Notice::ArchiveNotKept {
                reason: format!("{e:#}"),
                disk_full: false,
            })),
        }
    }

    /// Files of the host's outputs from before the ask that the code could not
    /// have deleted (it never saw them, or they are still there but did not come
    /// back) are carried into the new copy, so `outputs/` never loses them.
    pub(super) async fn keep_earlier_outputs(
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
            host.emit(EventKind::Notice(Notice::EarlierOutputsKept {
                count: kept.len(),
                paths: (kept.iter().take(NOTICE_PATHS_SHOWN))
                    .map(|f| f.path.clone())
                    .collect(),
            }));
        }
        for path in clashed {
            host.emit(EventKind::Notice(Notice::EarlierOutputReplaced { path }));
        }
        collected.files.extend(kept);
        collected.files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(collected)
    }

    /// What `output/` holds as the ask begins, on the host and in the sandbox.
    pub(super) async fn outputs_before(&self, sandbox: &dyn Sandbox) -> recover::OutputsBefore {
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
    pub(super) async fn repair_transcript(&self, ask_id: &str) -> Result<(), SessionError> {
        let session = self.clone();
        let moved = blocking(move || Ok(session.inner.run.lock().unwrap().repair_transcript()?))
            .await
            .map_err(SessionError::storage)?;
        if moved > 0 {
            let notice = Notice::TranscriptRepaired {
                bytes: moved as u64,
                set_aside: (crate::store::torn_path(Path::new(crate::store::TRANSCRIPT)))
                    .display()
                    .to_string(),
            };
            self.note(format!("The {notice}."));
            self.notice(Some(ask_id), notice);
        }
        Ok(())
    }

    pub(super) async fn end_ask(
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
    pub(super) fn last_answer(&self) -> Option<String> {
        let items = self.inner.items.lock().unwrap();
        let last_user = items.iter().rposition(
            |i| matches!(i, Item::User { text } if !crate::protocol::is_app_note(text)),
        )?;
        items[last_user..].iter().rev().find_map(|i| match i {
            Item::Assistant { text } if !text.trim().is_empty() => Some(text.clone()),
            _ => None,
        })
    }
}

/// The loop's view of the session during one ask.
pub(super) struct AskHost<'a> {
    session: &'a Session,
    ask_id: &'a str,
    tx: Option<mpsc::UnboundedSender<Event>>,
    /// Each call's tool and code, then its duration, for the provenance of artifacts.
    calls: Mutex<HashMap<String, (String, String, u64)>>,
}

impl AskHost<'_> {
    /// Remember which call made an output file (kept in `run.json` with the ask).
    pub(super) fn trace(&self, kind: &EventKind) {
        let mut calls = self.calls.lock().unwrap();
        match kind {
            EventKind::ToolCall {
                call_id,
                name,
                code,
                ..
            } => {
                calls.insert(call_id.to_string(), (name.clone(), code.clone(), 0));
            }
            EventKind::CellResult {
                call_id,
                duration_ms,
                ..
            } => {
                if let Some(c) = calls.get_mut(call_id.as_str()) {
                    c.2 = *duration_ms;
                }
            }
            EventKind::Artifact {
                call_id,
                path,
                bytes,
                ..
            } => {
                let Some((tool, code, duration_ms)) = calls.get(call_id.as_str()).cloned() else {
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
                        call_id: call_id.to_string(),
                        tool,
                        code,
                        duration_ms,
                        bytes: *bytes,
                        at: chrono::Utc::now().to_rfc3339(),
                        inputs,
                    },
                );
            }
            EventKind::CallMode { mode, reason } => {
                let mut run = self.session.inner.run.lock().unwrap();
                if let Some(a) = run.meta.asks.iter_mut().find(|a| a.id == self.ask_id) {
                    a.call_mode = Some(crate::store::CallModeRecord {
                        mode: *mode,
                        reason: reason.clone(),
                    });
                }
            }
            _ => {}
        }
    }
}

impl AskHost<'_> {
    /// A call through the session's gate: on at once when the mode (or an "always
    /// allow") lets it through; else announced, then waited for until the analyst
    /// answers through the API or the ask is cancelled. Each decision is kept with
    /// the ask (run.json).
    async fn approval(
        &self,
        request: approval::PendingCall,
        cancel: &CancellationToken,
    ) -> Option<approval::Decision> {
        use approval::{Decision, Resolution};
        let mode = self.session.config().approval;
        let gate = &self.session.inner.approvals;
        let Some(answer) = gate.wait_for(mode, &request.call_id, &request.tool) else {
            if mode != approval::ApprovalMode::Auto {
                self.keep_approval(&request, Resolution::Allowed, None, false);
            }
            return Some(Decision::Approve);
        };
        self.emit(EventKind::ApprovalRequested {
            call_id: request.call_id.clone(),
            tool: request.tool.clone(),
            code: request.code.clone(),
            reason: request.reason.clone(),
        });
        let answer = tokio::select! {
            a = answer => a.ok(),
            _ = cancel.cancelled() => None,
        };
        let Some(answer) = answer else {
            gate.withdraw(&request.call_id);
            return None;
        };
        let (resolution, reason) = match &answer.decision {
            Decision::Approve => (Resolution::Approved, None),
            Decision::Edit { .. } => (Resolution::Edited, None),
            Decision::Reject { reason } => (Resolution::Rejected, Some(reason.clone())),
        };
        self.emit(EventKind::ApprovalResolved {
            call_id: request.call_id.clone(),
            resolution,
            reason: reason.clone(),
            always: answer.always,
        });
        let always = answer.always && resolution != approval::Resolution::Rejected;
        self.keep_approval(&request, resolution, reason, always);
        Some(answer.decision)
    }

    fn keep_approval(
        &self,
        request: &approval::PendingCall,
        resolution: approval::Resolution,
        reason: Option<String>,
        always: bool,
    ) {
        let mut run = self.session.inner.run.lock().unwrap();
        if let Some(a) = run.meta.asks.iter_mut().find(|a| a.id == self.ask_id) {
            a.approvals.push(approval::Record {
                call_id: request.call_id.clone(),
                tool: request.tool.clone(),
                resolution,
                reason,
                always,
            });
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
        // Typed here, where it is known to be the transcript on disk that failed.
        self.session
            .inner
            .run
            .lock()
            .unwrap()
            .append_in(Some(self.ask_id), item, usage)
            .map_err(|e| SessionError::storage(e).into())
    }

    fn take_notes(&self) -> Vec<String> {
        self.session.take_notes()
    }

    fn outputs_dir(&self) -> Option<PathBuf> {
        Some(self.session.outputs_dir())
    }

    fn approve<'a>(
        &'a self,
        request: approval::PendingCall,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<approval::Decision>> {
        Box::pin(self.approval(request, cancel))
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
        let saved = std::fs::create_dir_all(path.parent().expect("has a parent"))
            .and_then(|()| std::fs::write(&path, png));
        saved.map_err(|e| SessionError::storage(anyhow::Error::new(e)))?;
        Ok(rel)
    }
}

/// Replace `dest` with `fresh` (both folders of the session).
pub(super) async fn swap_dirs(fresh: &Path, dest: &Path) -> anyhow::Result<()> {
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

/// How the loop part of an ask ended (a cancelled ask before its sandbox was ready is
/// the default: nothing ran).
struct Ran {
    status: RunStatus,
    error: Option<SessionError>,
    turns: u32,
    usage: Usage,
}

impl Default for Ran {
    fn default() -> Ran {
        Ran {
            status: RunStatus::Cancelled,
            error: None,
            turns: 0,
            usage: Usage::default(),
        }
    }
}
