//! Running things in the container: Python cells in the kernel (how a cell ends is
//! `sandbox::kernel`'s), shell commands with their process group, and short commands
//! whose output is read whole.

use std::time::{Duration, Instant};

use anyhow::bail;
use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::Docker;
use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::{engine_error, DockerSandbox};
use crate::sandbox::kernel::{self, Cell, LiveCap};
use crate::sandbox::packages::{self, PackagesError, PythonEnv};
use crate::sandbox::{image, ExecResult, ExecStatus, OutputSink, Stream};

/// Run a short shell command as the sandbox user, ignoring its output.
pub(crate) async fn exec_quiet(
    docker: &Docker,
    container: &str,
    command: &str,
) -> anyhow::Result<()> {
    let exec = docker
        .create_exec(
            container,
            CreateExecOptions {
                cmd: Some(vec!["sh", "-c", command]),
                user: Some(image::USER),
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                ..Default::default()
            },
        )
        .await?;
    if let StartExecResults::Attached { mut output, .. } = docker.start_exec(&exec.id, None).await?
    {
        while output.next().await.is_some() {}
    }
    Ok(())
}

impl DockerSandbox {
    /// Run a command in the container as `user` and return its exit code, stdout and
    /// stderr (each capped at `cap` bytes).
    pub(super) async fn exec_output(
        &self,
        user: &str,
        cmd: Vec<&str>,
        cap: usize,
    ) -> anyhow::Result<(Option<i64>, Vec<u8>, Vec<u8>)> {
        let doing = "running a command in the sandbox";
        let exec = self
            .docker
            .create_exec(
                &self.container,
                CreateExecOptions {
                    cmd: Some(cmd),
                    user: Some(user),
                    working_dir: Some(image::WORKDIR),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| engine_error(doing, e))?;
        let StartExecResults::Attached { mut output, .. } = self
            .docker
            .start_exec(&exec.id, None)
            .await
            .map_err(|e| engine_error(doing, e))?
        else {
            bail!("the Docker engine did not attach to a command in the sandbox");
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        while let Some(frame) = output.next().await {
            let (buf, message) = match frame {
                Ok(LogOutput::StdOut { message }) => (&mut out, message),
                Ok(LogOutput::StdErr { message }) => (&mut err, message),
                Ok(_) => continue,
                Err(e) => return Err(engine_error(doing, e)),
            };
            let room = cap.saturating_sub(buf.len());
            buf.extend_from_slice(&message[..message.len().min(room)]);
        }
        let code = self
            .docker
            .inspect_exec(&exec.id)
            .await
            .ok()
            .and_then(|i| i.exit_code);
        Ok((code, out, err))
    }

    /// The image's interpreter and packages: the cache of the image id, else
    /// `importlib.metadata` run in this container (as the sandbox user, next to the
    /// kernel, not in it: the model's namespace stays untouched).
    pub(super) async fn read_python_env(&self) -> Result<PythonEnv, PackagesError> {
        let id = super::packages::image_id(&self.docker, &self.config.image).await?;
        if let Some(env) = packages::cached(&id).await {
            return Ok(env);
        }
        let exec = self.exec_output(
            image::USER,
            vec!["python3", "-c", packages::SCRIPT],
            4 << 20,
        );
        let (code, out, err) = tokio::time::timeout(Duration::from_secs(60), exec)
            .await
            .map_err(|_| PackagesError::Failed("python3 did not answer within 60 s".into()))?
            .map_err(|e| PackagesError::Failed(format!("{e:#}")))?;
        if code != Some(0) {
            let err = String::from_utf8_lossy(&err);
            let last = err.lines().last().unwrap_or("no message");
            return Err(PackagesError::Failed(format!(
                "python3 exited with {code:?}: {last}"
            )));
        }
        let env = packages::parse(&out)?;
        packages::store(&id, &env).await;
        Ok(env)
    }

    /// Kill a process group in the container. Asked of the running kernel first: it
    /// needs no new process, and a fork bomb may hold every pid the container has.
    /// Its answer is awaited, so that the call which started the group pays for it.
    pub(super) async fn kill_group(&self, pgid: u32) {
        if let Some(kernel) = self.kernel.lock().await.as_mut() {
            if kernel.killpg(pgid, KILL_GROUP_WAIT).await.is_ok() {
                return;
            }
        }
        for _ in 0..10 {
            let cmd = format!("kill -KILL -- -{pgid} 2>/dev/null");
            if exec_quiet(&self.docker, &self.container, &cmd)
                .await
                .is_ok()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub(super) async fn run_python(
        &self,
        code: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult> {
        let started = Instant::now();
        let mut slot = self.kernel.lock().await;
        let cell = Cell {
            code,
            timeout,
            started,
            live_cap: self.config.output_cap_bytes,
            memory_bytes: self.config.memory_bytes,
        };
        kernel::run_cell(&mut slot, || self.start_kernel(), cell, cancel, on_output).await
    }

    pub(super) async fn run_shell(
        &self,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult> {
        let started = Instant::now();
        let deadline = tokio::time::Instant::now() + timeout;
        let script = shell_wrapper(timeout);
        let exec = self
            .docker
            .create_exec(
                &self.container,
                CreateExecOptions {
                    cmd: Some(vec!["sh", "-c", &script, command]),
                    user: Some(image::USER),
                    working_dir: Some(image::WORKDIR),
                    attach_stdin: Some(false),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| engine_error("starting a shell command in the sandbox", e))?;
        let StartExecResults::Attached { mut output, .. } = self
            .docker
            .start_exec(&exec.id, None)
            .await
            .map_err(|e| engine_error("starting a shell command in the sandbox", e))?
        else {
            bail!("the Docker engine did not attach to the shell command");
        };
        let cap = self.config.output_cap_bytes;
        let (mut out, mut err) = (Capped::new(cap), Capped::new(cap));
        let mut live = [
            Live::new(cap, Stream::Stdout),
            Live::new(cap, Stream::Stderr),
        ];
        let mut tick = tokio::time::interval(LIVE_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut group = GroupId::default();
        let (mut cancelled, mut killed, mut expired) = (false, false, false);
        loop {
            tokio::select! {
                frame = output.next() => match frame {
                    Some(Ok(LogOutput::StdOut { message })) => {
                        out.push(&message);
                        live[0].push(&message);
                    }
                    Some(Ok(LogOutput::StdErr { message })) => {
                        let rest = group.feed(&message);
                        err.push(rest);
                        live[1].push(rest);
                    }
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => break,
                },
                _ = tick.tick() => live.iter_mut().for_each(|l| l.flush(on_output)),
                _ = cancel.cancelled(), if !cancelled => cancelled = true,
                _ = tokio::time::sleep_until(deadline), if !expired => expired = true,
            }
            // On cancel or at the time limit, kill as soon as the group is known (it is
            // the first line out).
            if let (true, false, Some(pgid)) = (cancelled || expired, killed, group.id) {
                self.kill_group(pgid).await;
                killed = true;
            }
        }
        live.iter_mut().for_each(|l| l.flush(on_output));
        // Whatever the command left running in the background goes with it.
        if let Some(pgid) = group.id {
            self.kill_group(pgid).await;
        }
        let code = self
            .docker
            .inspect_exec(&exec.id)
            .await
            .ok()
            .and_then(|i| i.exit_code);
        let timed_out = code != Some(0)
            && ((expired && killed) || (code == Some(137) && started.elapsed() >= timeout));
        let status = match (cancelled, timed_out, code) {
            (true, _, _) => ExecStatus::Cancelled,
            (_, true, _) => ExecStatus::Timeout,
            (_, _, Some(0)) => ExecStatus::Ok,
            _ => ExecStatus::Error,
        };
        let mut r = result(status, started);
        r.stdout = out.text();
        r.stderr = err.text();
        r.exit_code = code;
        if timed_out {
            r.note = Some(format!("killed at the {} s time limit", timeout.as_secs()));
        }
        Ok(r)
    }
}

/// The shell call's wrapper (`sh -c WRAPPER COMMAND`). Its first line on stderr is its
/// pid (before anything that could write there), the id of the process group the
/// command runs in, so that the whole group (background children too) can be killed at
/// the time limit, on cancel and when the call ends. Docker's exec (runc and gVisor alike) starts the wrapper as the leader of
/// its own session and group: it then replaces itself with `sh -c COMMAND` and the time
/// limit is this process's to enforce. Elsewhere `timeout` makes itself the leader (and
/// enforces the limit in the container too). Under gVisor each process a call starts
/// costs about 25 ms, and `timeout` about 65 ms more (BENCHMARKS.md, Issue 38).
fn shell_wrapper(timeout: Duration) -> String {
    format!(
        "echo $$ >&2; read -r _ _ _ _ g _ 2>/dev/null </proc/$$/stat; \
         [ \"$g\" = \"$$\" ] && exec sh -c \"$0\"; \
         exec timeout -s KILL {} sh -c \"$0\"",
        timeout.as_secs().max(1)
    )
}

pub(super) fn result(status: ExecStatus, started: Instant) -> ExecResult {
    ExecResult::empty(status, started.elapsed().as_millis() as u64)
}

/// Reads the shell wrapper's first stderr line: the process group id.
#[derive(Default)]
pub(super) struct GroupId {
    line: Vec<u8>,
    id: Option<u32>,
}

impl GroupId {
    /// Consume the id line from the start of stderr; return the rest of `data`.
    fn feed<'a>(&mut self, data: &'a [u8]) -> &'a [u8] {
        if self.id.is_some() || self.line.len() > 32 {
            return data;
        }
        match data.iter().position(|&b| b == b'\n') {
            Some(n) => {
                self.line.extend_from_slice(&data[..n]);
                self.id = String::from_utf8_lossy(&self.line).trim().parse().ok();
                &data[n + 1..]
            }
            None => {
                self.line.extend_from_slice(data);
                &[]
            }
        }
    }
}

/// Keeps the first `cap` bytes of a stream and counts the rest.
pub(super) struct Capped {
    cap: usize,
    buf: Vec<u8>,
    total: usize,
}

impl Capped {
    fn new(cap: usize) -> Self {
        Capped {
            cap,
            buf: Vec::new(),
            total: 0,
        }
    }

    fn push(&mut self, data: &[u8]) {
        self.total += data.len();
        let room = self.cap.saturating_sub(self.buf.len());
        self.buf.extend_from_slice(&data[..data.len().min(room)]);
    }

    fn text(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.buf).into_owned();
        if self.total > self.buf.len() {
            s.push_str(&format!(
                "\n[... output truncated: {} of {} bytes omitted ...]\n",
                self.total - self.buf.len(),
                self.total
            ));
        }
        s
    }
}

/// Forwards one stream of a shell call live: whole UTF-8 characters only, capped,
/// gathered into one chunk per [`LIVE_EVERY`] (as the kernel does for Python).
pub(super) struct Live {
    stream: Stream,
    cap: LiveCap,
    pending: Vec<u8>,
}

/// How often a shell call's live output is forwarded (the contract: every 200 ms).
const LIVE_EVERY: Duration = Duration::from_millis(100);
/// How long a call's end waits for the kernel to empty its process group: the kernel
/// itself gives up after 3 s (`kernel.py` `_killpg`).
const KILL_GROUP_WAIT: Duration = Duration::from_secs(5);

impl Live {
    fn new(cap: usize, stream: Stream) -> Self {
        Live {
            stream,
            cap: LiveCap::new(cap),
            pending: Vec::new(),
        }
    }

    fn push(&mut self, data: &[u8]) {
        // Nothing far beyond the cap is kept: it would never be forwarded (one byte
        // more than the room, so that the cut and its marker still happen).
        let room = (self.cap.room() + 4).saturating_sub(self.pending.len());
        self.pending
            .extend_from_slice(&data[..data.len().min(room.max(1))]);
    }

    /// Forward what is pending, keeping an incomplete character for the next time.
    fn flush(&mut self, sink: OutputSink<'_>) {
        if self.pending.is_empty() {
            return;
        }
        let keep = match std::str::from_utf8(&self.pending) {
            Ok(_) => 0,
            Err(e) if e.error_len().is_none() => self.pending.len() - e.valid_up_to(),
            Err(_) => 0,
        };
        let cut = self.pending.len() - keep;
        let text = String::from_utf8_lossy(&self.pending[..cut]).into_owned();
        self.pending.drain(..cut);
        self.cap.forward(sink, self.stream, &text);
    }
}
