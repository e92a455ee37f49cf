//! The sandbox as one ask sees it: ready, or still starting. The container, the
//! kernel and the staging of the inputs do not depend on the model, nor the model's
//! first request on them, so an ask on a new workspace sends it at once (unless the
//! model takes the inputs' profile, which runs in the sandbox: see `Session::run_ask`);
//! each call of the sandbox waits for the start, then goes to the sandbox, and a start
//! that failed fails it with the start's own (typed) error.

use async_trait::async_trait;
use tokio::sync::{watch, OnceCell};

use super::*;
use crate::sandbox::packages::{PackagesError, PythonEnv};
use crate::sandbox::{Connections, ExecResult, ExecStatus, Isolation, OutputEntry, OutputSink};

/// What a start hands the ask: the sandbox, and what `output/` held before any call
/// of the ask ran (listed before the start counts as done).
pub(super) type Started = Result<(Arc<dyn Sandbox>, Arc<recover::OutputsBefore>), SessionError>;

/// A sandbox that may still be starting (see the module notes).
pub(super) struct Starting {
    /// The ask does not wait for the start before the model's first request (a new
    /// workspace, a start not done as the ask began).
    pub(super) early: bool,
    done: watch::Receiver<Option<Started>>,
    /// The ask's cancel: what waits for the start stops waiting (the start goes on).
    cancel: CancellationToken,
    factory: Arc<dyn SandboxFactory>,
    config: SandboxConfig,
    /// The image's Python as known without a sandbox, asked once.
    known_env: OnceCell<Option<Result<PythonEnv, PackagesError>>>,
}

impl Session {
    /// The session's sandbox, found or started in its own task: a cancelled ask stops
    /// waiting for it but does not drop it half-way (it would leave its container
    /// behind); it finishes, or stops and cleans up when the session closes. Once it
    /// is there, changed inputs are checked and the outputs listed, before any call
    /// of the ask can run.
    pub(super) fn starting(&self, cancel: &CancellationToken) -> Starting {
        let (tx, done) = watch::channel(None);
        let session = self.clone();
        tokio::spawn(async move {
            let started = match session.sandbox().await {
                Ok(sandbox) => {
                    session.check_changed_inputs(sandbox.as_ref()).await;
                    let before = session.outputs_before(sandbox.as_ref()).await;
                    Ok((sandbox, Arc::new(before)))
                }
                Err(e) => Err(e),
            };
            let _ = tx.send(Some(started));
        });
        Starting {
            early: false,
            done,
            cancel: cancel.clone(),
            factory: self.inner.factory.clone(),
            config: self.config().sandbox_config(),
            known_env: OnceCell::new(),
        }
    }

    /// Nothing was ever made in this session's workspace (its first ask, no outputs,
    /// no archive), so a sandbox starting for it has an empty `output/`: the ask need
    /// not list it, nor wait for the sandbox, before the model's first request.
    pub(super) async fn workspace_is_new(&self) -> bool {
        let meta = self.meta();
        if meta.asks.len() > 1 || !meta.outputs.is_empty() || !self.items().is_empty() {
            return false;
        }
        let (archive, outputs) = (self.inner.dir.join(ARCHIVE), self.outputs_dir());
        blocking(move || Ok(!archive.exists() && recover::host_outputs(&outputs).is_empty()))
            .await
            .unwrap_or(false)
    }
}

impl Starting {
    /// The start's outcome, waited for.
    pub(super) async fn ready(&self) -> Started {
        let mut done = self.done.clone();
        let started = match done.wait_for(Option::is_some).await {
            Ok(started) => started.clone().expect("waited for"),
            Err(_) => Err(SessionError::Sandbox {
                message: "starting the sandbox: its task ended without an answer".into(),
            }),
        };
        started
    }

    /// End `stop` when the start fails, so that an ask whose model is still answering
    /// ends with the sandbox's error at once. Returns when the start is done or `stop`
    /// has ended.
    pub(super) async fn stop_on_failure(&self, stop: &CancellationToken) {
        tokio::select! {
            started = self.ready() => if started.is_err() { stop.cancel() },
            _ = stop.cancelled() => {}
        }
    }

    /// The sandbox if it is ready now.
    fn now(&self) -> Option<Arc<dyn Sandbox>> {
        match &*self.done.borrow() {
            Some(Ok((sandbox, _))) => Some(sandbox.clone()),
            _ => None,
        }
    }

    /// The sandbox, waited for unless the ask is cancelled first (after a cancelled
    /// call the loop still lists outputs: it must not wait for a start to finish).
    async fn sandbox(&self) -> anyhow::Result<Arc<dyn Sandbox>> {
        tokio::select! {
            biased;
            started = self.ready() => Ok(started?.0),
            _ = self.cancel.cancelled() => anyhow::bail!("cancelled before the sandbox was ready"),
        }
    }

    /// The sandbox for a call, unless the call is cancelled while it waits (`None`).
    async fn for_call(
        &self,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Option<Arc<dyn Sandbox>>> {
        tokio::select! {
            started = self.ready() => Ok(Some(started?.0)),
            _ = cancel.cancelled() => Ok(None),
        }
    }
}

#[async_trait]
impl Sandbox for Starting {
    async fn python(
        &self,
        code: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult> {
        match self.for_call(cancel).await? {
            Some(sandbox) => sandbox.python(code, timeout, cancel, on_output).await,
            None => Ok(ExecResult::empty(ExecStatus::Cancelled, 0)),
        }
    }

    async fn shell(
        &self,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult> {
        match self.for_call(cancel).await? {
            Some(sandbox) => sandbox.shell(command, timeout, cancel, on_output).await,
            None => Ok(ExecResult::empty(ExecStatus::Cancelled, 0)),
        }
    }

    async fn list_outputs(&self) -> anyhow::Result<Vec<OutputEntry>> {
        self.sandbox().await?.list_outputs().await
    }

    async fn read_file(&self, rel: &str, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
        self.sandbox().await?.read_file(rel, max_bytes).await
    }

    async fn write_file(&self, rel: &str, bytes: &[u8]) -> anyhow::Result<()> {
        self.sandbox().await?.write_file(rel, bytes).await
    }

    async fn add_inputs(&self, manifest: &Manifest) -> anyhow::Result<()> {
        self.sandbox().await?.add_inputs(manifest).await
    }

    async fn remove_input(&self, name: &str) -> anyhow::Result<()> {
        self.sandbox().await?.remove_input(name).await
    }

    fn staging(&self) -> Vec<StagedInput> {
        self.now().map(|s| s.staging()).unwrap_or_default()
    }

    async fn changed_inputs(&self) -> Vec<String> {
        match self.sandbox().await {
            Ok(sandbox) => sandbox.changed_inputs().await,
            Err(_) => Vec::new(),
        }
    }

    async fn restore_workspace(&self, archive: &Path) -> anyhow::Result<()> {
        self.sandbox().await?.restore_workspace(archive).await
    }

    async fn upload_outputs(&self, src: &Path, files: &[String]) -> anyhow::Result<()> {
        self.sandbox().await?.upload_outputs(src, files).await
    }

    async fn output_tar(&self) -> anyhow::Result<Box<dyn std::io::Read + Send>> {
        self.sandbox().await?.output_tar().await
    }

    async fn archive_workspace(&self, dest: &Path, max_bytes: u64) -> anyhow::Result<u64> {
        self.sandbox()
            .await?
            .archive_workspace(dest, max_bytes)
            .await
    }

    /// Asked of the sandbox when it is there; while it starts, what the engine knows
    /// of the image without one, so the instructions need not wait for it.
    async fn python_env(&self) -> Result<PythonEnv, PackagesError> {
        if let Some(sandbox) = self.now() {
            return sandbox.python_env().await;
        }
        let known = self
            .known_env
            .get_or_init(|| self.factory.cached_python_env(&self.config))
            .await;
        if let Some(env) = known {
            return env.clone();
        }
        match self.sandbox().await {
            Ok(sandbox) => sandbox.python_env().await,
            Err(e) => Err(PackagesError::Failed(e.to_string())),
        }
    }

    fn isolation(&self) -> Isolation {
        self.now().map_or(Isolation::Auto, |s| s.isolation())
    }

    fn take_egress(&self) -> Connections {
        self.now().map(|s| s.take_egress()).unwrap_or_default()
    }

    /// The session owns the sandbox and closes it; an ask's view of it closes nothing.
    async fn close(&self) -> anyhow::Result<()> {
        Ok(())
    }
}
