//! The persistent Python kernel (`kernel.py`) from the host's side: the protocol,
//! whatever process carries it.
//!
//! Requests are JSON lines on the kernel's stdin; replies are JSON lines on its
//! stdout: the cell's output while it runs (`stream`), its result, and answers to side
//! requests (`list_outputs`). Anything else the process writes outside a cell is kept
//! as "stray" output and handed to the next reply. [`run_cell`] decides how a call
//! ends: its reply, an interrupt at the timeout or on cancel (with a grace period),
//! or a kernel that died or broke the protocol and is replaced.
//!
//! The transport is a [`Spawned`] kernel a backend starts: its stdin, its stdout and
//! stderr as [`Frame`]s, and a [`KernelProcess`] to learn its exit code or kill it.
//! A Docker exec is one (see `docker::kernel_exec`).

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use async_trait::async_trait;
use base64::Engine;
use futures_util::{Stream as FuturesStream, StreamExt};
use serde::Deserialize;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{ExecResult, ExecStatus, OutputEntry, OutputSink, Stream};

/// The kernel's source, passed with `python3 -u -c` so it always matches this binary.
pub(crate) const KERNEL_SOURCE: &str = include_str!("kernel.py");
const STRAY_CAP: usize = 16 << 10;
/// How long an interrupted call may take to stop before its kernel is killed.
const INTERRUPT_GRACE: Duration = Duration::from_secs(5);

/// The environment the kernel process is started with.
pub(crate) fn kernel_env(output_cap: usize) -> Vec<String> {
    vec![
        format!("SANDALYST_OUTPUT_CAP={output_cap}"),
        // IPython's profile folder: under the tmpfs, never the read-only root.
        "IPYTHONDIR=/tmp/ipython".to_string(),
    ]
}

/// A piece of what the kernel process wrote.
pub(crate) enum Frame {
    Stdout(bytes::Bytes),
    Stderr(bytes::Bytes),
}

/// A kernel process a backend started (`python3 -u -c KERNEL_SOURCE` as the sandbox
/// user in the workspace, with [`kernel_env`]).
pub(crate) struct Spawned {
    pub input: Pin<Box<dyn AsyncWrite + Send>>,
    /// Ends when the process is gone (or its transport failed).
    pub output: Pin<Box<dyn FuturesStream<Item = Frame> + Send>>,
    pub process: Arc<dyn KernelProcess>,
}

/// What the host may do to a kernel process besides talking to it.
#[async_trait]
pub(crate) trait KernelProcess: Send + Sync {
    /// Its exit code once it has ended; `None` when that is not known soon.
    async fn exit_code(&self) -> Option<i64>;
    /// SIGKILL process `pid` and its process group (the processes its cells started).
    async fn kill(&self, pid: u32);
}

/// The longest protocol line the host accepts: a reply holds two capped streams
/// (JSON escaping can make them six times longer) and a few base64 figures. A longer
/// line means the channel was written to by something else (the cell shares the
/// process): reading stops there and the kernel is restarted, so the app's memory
/// stays bounded whatever the code writes.
fn max_line(output_cap: usize) -> usize {
    (16 << 20usize).max(output_cap.saturating_mul(16))
}

/// How a cell ended, as the kernel says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ReplyStatus {
    Ok,
    /// It stopped at an interrupt.
    Interrupted,
    /// It raised (also any status no kernel sends).
    #[serde(other)]
    Error,
}

#[derive(Debug, Deserialize)]
pub(crate) struct KernelReply {
    #[serde(default)]
    pub id: Option<u64>,
    pub status: ReplyStatus,
    #[serde(default)]
    pub stdout: String,
    #[serde(default)]
    pub stderr: String,
    #[serde(default)]
    pub traceback: String,
    /// Base64 PNGs the cell displayed.
    #[serde(default)]
    pub figures: Vec<String>,
}

impl KernelReply {
    /// The figures as PNG bytes (an entry that is not base64 is dropped).
    pub fn png_figures(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.figures)
            .iter()
            .filter_map(|f| base64::engine::general_purpose::STANDARD.decode(f).ok())
            .collect()
    }
}

#[derive(Deserialize)]
struct StreamChunk {
    #[serde(default)]
    id: Option<u64>,
    name: String,
    text: String,
}

#[derive(Deserialize)]
struct OutputsReply {
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    entries: Vec<(String, u64, u128)>,
    #[serde(default)]
    error: Option<String>,
}

enum Event {
    Ready(u32),
    Stream(StreamChunk),
    Reply(KernelReply),
    Outputs(OutputsReply),
    /// The output stream ended: the kernel process is gone.
    Exited,
    /// The protocol channel carried something no kernel sends (the reason).
    Broken(String),
}

pub(crate) struct Kernel {
    input: Pin<Box<dyn AsyncWrite + Send>>,
    events: mpsc::Receiver<Event>,
    stray: Arc<Mutex<String>>,
    process: Arc<dyn KernelProcess>,
    pub pid: u32,
    next_id: u64,
    /// The id of the cell running now (its stream chunks and reply carry it).
    current: u64,
    /// Live output forwarded for the current cell: a second cap behind the kernel's.
    live: [LiveCap; 2],
    /// Why the protocol channel can no longer be trusted, once it cannot.
    broken: Option<String>,
}

/// What may be forwarded live of one stream of one call: `cap` bytes, then one
/// truncation marker, then nothing.
#[derive(Clone, Copy, Default)]
pub(crate) struct LiveCap {
    cap: usize,
    sent: usize,
    cut: bool,
}

pub(crate) const TRUNCATED_CHUNK: &str = "\n[... output truncated ...]\n";

impl LiveCap {
    pub fn new(cap: usize) -> Self {
        LiveCap {
            cap,
            sent: 0,
            cut: false,
        }
    }

    /// Bytes that may still be forwarded.
    pub fn room(&self) -> usize {
        if self.cut {
            0
        } else {
            self.cap.saturating_sub(self.sent)
        }
    }

    /// Forward `text` to `sink` as far as the cap allows.
    pub fn forward(&mut self, sink: OutputSink<'_>, stream: Stream, text: &str) {
        if self.cut || text.is_empty() {
            return;
        }
        let room = self.cap.saturating_sub(self.sent);
        if text.len() <= room {
            self.sent += text.len();
            sink(stream, text);
            return;
        }
        let mut cut = room;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut > 0 {
            sink(stream, &text[..cut]);
        }
        self.sent = self.cap;
        self.cut = true;
        sink(stream, TRUNCATED_CHUNK);
    }
}

/// How waiting for a reply ended.
pub(crate) enum Wait {
    Reply(KernelReply),
    Exited,
    TimedOut,
}

impl Kernel {
    /// Take over a spawned kernel process and wait (up to 60 s) for it to be ready.
    pub async fn start(spawned: Spawned, output_cap: usize) -> anyhow::Result<Kernel> {
        let Spawned {
            input,
            mut output,
            process,
        } = spawned;
        let (tx, events) = mpsc::channel(16);
        let stray = Arc::new(Mutex::new(String::new()));
        let stray_w = stray.clone();
        let limit = max_line(output_cap);
        tokio::spawn(async move {
            let mut line = Vec::new();
            while let Some(frame) = output.next().await {
                match frame {
                    Frame::Stdout(message) => {
                        // Frames are not lines: buffer and split on newlines.
                        for &b in message.iter() {
                            if b != b'\n' {
                                line.push(b);
                                if line.len() > limit {
                                    let why = format!(
                                        "the kernel's reply channel carried a line longer than {} MiB (something in the cell wrote to it)",
                                        limit >> 20
                                    );
                                    let _ = tx.send(Event::Broken(why)).await;
                                    return;
                                }
                                continue;
                            }
                            let event = parse_line(&line);
                            line.clear();
                            match event {
                                Some(ev) => {
                                    if tx.send(ev).await.is_err() {
                                        return;
                                    }
                                }
                                None => push_capped(&stray_w, &String::from_utf8_lossy(&line)),
                            }
                        }
                    }
                    Frame::Stderr(message) => {
                        push_capped(&stray_w, &String::from_utf8_lossy(&message))
                    }
                }
            }
            let _ = tx.send(Event::Exited).await;
        });
        let mut kernel = Kernel {
            input,
            events,
            stray,
            process,
            pid: 0,
            next_id: 0,
            current: 0,
            live: [LiveCap::default(); 2],
            broken: None,
        };
        match tokio::time::timeout(Duration::from_secs(60), kernel.events.recv()).await {
            Ok(Some(Event::Ready(pid))) => kernel.pid = pid,
            Ok(_) => bail!(
                "the Python kernel exited at start: {}",
                kernel.take_stray().trim()
            ),
            Err(_) => bail!("the Python kernel did not start within 60 s"),
        }
        Ok(kernel)
    }

    /// Send code to run; then call [`Kernel::wait`]. Live output is forwarded up to
    /// `live_cap` bytes per stream (the kernel caps it too, in characters).
    pub async fn send_execute(&mut self, code: &str, live_cap: usize) -> anyhow::Result<()> {
        self.next_id += 1;
        self.current = self.next_id;
        self.live = [LiveCap::new(live_cap); 2];
        let msg = serde_json::json!({"type": "execute", "id": self.next_id, "code": code});
        self.send(&msg).await
    }

    /// Every regular file under `/workspace/output` (path, bytes, mtime in ns), asked
    /// of the idle kernel: no new process. `None` if it does not answer in `limit`.
    pub async fn list_outputs(
        &mut self,
        limit: Duration,
    ) -> anyhow::Result<Option<Vec<OutputEntry>>> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&serde_json::json!({"type": "list_outputs", "id": id}))
            .await?;
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Err(_) => return Ok(None),
                Ok(None) | Ok(Some(Event::Exited)) => bail!("the Python kernel stopped"),
                Ok(Some(Event::Broken(why))) => {
                    self.broken = Some(why);
                    bail!("the Python kernel's reply channel broke");
                }
                Ok(Some(Event::Outputs(o))) if o.id == Some(id) => {
                    if let Some(e) = o.error {
                        bail!("listing the outputs failed in the kernel: {e}");
                    }
                    let entries = o
                        .entries
                        .into_iter()
                        .map(|(path, bytes, modified_ns)| OutputEntry {
                            path,
                            bytes,
                            modified_ns,
                        })
                        .collect();
                    return Ok(Some(entries));
                }
                Ok(Some(_)) => continue, // late output of an earlier, abandoned call
            }
        }
    }

    /// Ask the kernel to SIGKILL a process group (see `kernel.py`).
    pub async fn send_killpg(&mut self, pgid: u32) -> anyhow::Result<()> {
        self.send(&serde_json::json!({"type": "killpg", "pgid": pgid}))
            .await
    }

    pub async fn send_interrupt(&mut self) -> anyhow::Result<()> {
        self.send(&serde_json::json!({"type": "interrupt"})).await
    }

    async fn send(&mut self, msg: &serde_json::Value) -> anyhow::Result<()> {
        let mut line = msg.to_string();
        line.push('\n');
        self.input
            .write_all(line.as_bytes())
            .await
            .context("the Python kernel's input is closed")?;
        self.input.flush().await?;
        Ok(())
    }

    /// Wait up to `limit` for the reply to the running cell, handing its output to
    /// `on_output` as it comes.
    pub async fn wait(&mut self, limit: Duration, on_output: OutputSink<'_>) -> Wait {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Err(_) => return Wait::TimedOut,
                Ok(None) | Ok(Some(Event::Exited)) => return Wait::Exited,
                Ok(Some(Event::Broken(why))) => {
                    self.broken = Some(why);
                    return Wait::Exited;
                }
                Ok(Some(Event::Stream(c))) if c.id == Some(self.current) => {
                    let (i, stream) = match c.name.as_str() {
                        "stderr" => (1, Stream::Stderr),
                        _ => (0, Stream::Stdout),
                    };
                    self.live[i].forward(on_output, stream, &c.text);
                }
                Ok(Some(Event::Reply(r))) if r.id == Some(self.current) => return Wait::Reply(r),
                // Replies of earlier, abandoned calls come late; a reply to a call not
                // yet made, or to none, comes from no kernel.
                Ok(Some(Event::Reply(r))) if r.id.is_none_or(|id| id > self.current) => {
                    self.broken = Some(format!(
                        "the kernel's reply channel carried a reply out of order (id {:?} while call {} runs; something in the cell wrote to it)",
                        r.id, self.current
                    ));
                    return Wait::Exited;
                }
                // Ready, outputs, or what an earlier abandoned call left behind.
                Ok(Some(_)) => continue,
            }
        }
    }

    /// Why the protocol channel was given up on, if it was: the kernel must go.
    pub fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// Output written outside the protocol since the last call.
    pub fn take_stray(&self) -> String {
        std::mem::take(&mut *self.stray.lock().unwrap())
    }

    /// The exit code of the kernel process, once it has ended. The future holds only
    /// the process handle, since the kernel's writer is not `Sync`.
    pub fn exit_code(&self) -> impl std::future::Future<Output = Option<i64>> + Send + 'static {
        let process = self.process.clone();
        async move { process.exit_code().await }
    }

    /// Close stdin and kill the process and its process group (the processes its
    /// cells started): closing the stream alone leaves it running.
    pub async fn kill(mut self) {
        // Each step bounded: a kernel that flooded its channel may leave the other
        // side of the connection stuck, and a call must still end.
        let _ = tokio::time::timeout(Duration::from_secs(2), self.input.shutdown()).await;
        let _ = tokio::time::timeout(Duration::from_secs(10), self.process.kill(self.pid)).await;
    }
}

/// What a call needs besides its code.
pub(crate) struct Cell<'a> {
    pub code: &'a str,
    pub timeout: Duration,
    /// Bytes of each stream forwarded live.
    pub live_cap: usize,
    /// The sandbox's memory limit, named when the kernel was killed for it.
    pub memory_bytes: i64,
}

const LOST: &str = "a fresh kernel will start on the next call; all variables and imports were lost (files in /workspace are kept)";

/// Run one cell in the kernel of `slot` (started with `start` when there is none):
/// its reply; on timeout or `cancel` an interrupt and up to [`INTERRUPT_GRACE`] for
/// it to stop; a kernel that died, broke the protocol or would not stop is killed
/// and the slot left empty, with a note saying the state was lost.
pub(crate) async fn run_cell<F>(
    slot: &mut Option<Kernel>,
    start: impl FnOnce() -> F,
    cell: Cell<'_>,
    cancel: &CancellationToken,
    on_output: OutputSink<'_>,
) -> anyhow::Result<ExecResult>
where
    F: std::future::Future<Output = anyhow::Result<Kernel>>,
{
    let started = Instant::now();
    if slot.is_none() {
        *slot = Some(start().await?);
    }
    let kernel = slot.as_mut().expect("kernel just started");
    kernel.take_stray();
    let first = match kernel.send_execute(cell.code, cell.live_cap).await {
        Err(_) => Wait::Exited,
        Ok(()) => tokio::select! {
            w = kernel.wait(cell.timeout, on_output) => w,
            _ = cancel.cancelled() => Wait::TimedOut,
        },
    };
    let interrupted_as = if cancel.is_cancelled() {
        ExecStatus::Cancelled
    } else {
        ExecStatus::Timeout
    };
    let outcome = match first {
        Wait::TimedOut => {
            let _ = kernel.send_interrupt().await;
            match kernel.wait(INTERRUPT_GRACE, on_output).await {
                Wait::Reply(reply) => {
                    let mut r = fill(result(interrupted_as, started), reply, kernel.take_stray());
                    r.note = Some(match interrupted_as {
                        ExecStatus::Timeout => format!(
                            "interrupted after the {} s time limit; the kernel's state is kept",
                            cell.timeout.as_secs()
                        ),
                        _ => "interrupted because the run was cancelled".into(),
                    });
                    return Ok(r);
                }
                other => other,
            }
        }
        w => w,
    };
    let kernel = slot.take().expect("kernel present");
    match outcome {
        Wait::Reply(reply) => {
            let status = match reply.status {
                ReplyStatus::Ok => ExecStatus::Ok,
                ReplyStatus::Interrupted => interrupted_as,
                ReplyStatus::Error => ExecStatus::Error,
            };
            let stray = kernel.take_stray();
            *slot = Some(kernel);
            Ok(fill(result(status, started), reply, stray))
        }
        Wait::Exited => {
            let mut r = result(ExecStatus::KernelRestarted, started);
            r.stderr = kernel.take_stray();
            r.note = Some(match kernel.broken() {
                Some(why) => format!("{why}, so the kernel was restarted; {LOST}"),
                None => {
                    let code = kernel.exit_code().await;
                    format!("{}; {LOST}", memory_note(code, cell.memory_bytes))
                }
            });
            kernel.kill().await;
            Ok(r)
        }
        Wait::TimedOut => {
            let mut r = result(interrupted_as, started);
            r.stderr = kernel.take_stray();
            r.note = Some(format!(
                "the code did not stop when interrupted (e.g. a long call in C code), so the kernel was killed; {LOST}"
            ));
            kernel.kill().await;
            Ok(r)
        }
    }
}

/// Why the kernel process ended, from its exit code.
fn memory_note(code: Option<i64>, memory_bytes: i64) -> String {
    match code {
        Some(137) => format!(
            "the Python kernel was killed (exit code 137), most likely because it exceeded the sandbox memory limit of {} MiB",
            memory_bytes >> 20
        ),
        Some(c) => format!("the Python kernel exited with code {c}"),
        None => "the Python kernel stopped".to_string(),
    }
}

fn result(status: ExecStatus, started: Instant) -> ExecResult {
    ExecResult::empty(status, started.elapsed().as_millis() as u64)
}

fn fill(mut r: ExecResult, mut reply: KernelReply, stray: String) -> ExecResult {
    r.figures = reply.png_figures();
    r.stdout = reply.stdout;
    r.stderr = reply.stderr + &stray;
    r.traceback = (!reply.traceback.is_empty()).then_some(reply.traceback);
    r
}

fn parse_line(line: &[u8]) -> Option<Event> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    match v.get("type")?.as_str()? {
        "ready" => Some(Event::Ready(v.get("pid")?.as_u64()? as u32)),
        "stream" => serde_json::from_value(v).ok().map(Event::Stream),
        "result" => serde_json::from_value(v).ok().map(Event::Reply),
        "outputs" => serde_json::from_value(v).ok().map(Event::Outputs),
        _ => None,
    }
}

fn push_capped(buf: &Mutex<String>, text: &str) {
    let mut b = buf.lock().unwrap();
    if b.len() < STRAY_CAP {
        let room = STRAY_CAP - b.len();
        let mut cut = text.len().min(room);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        b.push_str(&text[..cut]);
        if cut < text.len() {
            b.push_str("\n[... further stray output dropped ...]\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use tokio::io::{AsyncBufReadExt, BufReader};

    /// The process side of the stand-in kernel: it exited as the OOM killer leaves it.
    #[derive(Default)]
    struct Process {
        killed: AtomicBool,
    }

    #[async_trait]
    impl KernelProcess for Process {
        async fn exit_code(&self) -> Option<i64> {
            Some(137)
        }
        async fn kill(&self, _pid: u32) {
            self.killed.store(true, Ordering::SeqCst);
        }
    }

    /// A kernel speaking the protocol over in-memory pipes, no container: a cell
    /// `fail` raises, `hang` runs until interrupted, `die` ends the process, anything
    /// else is printed back.
    fn stand_in() -> (Spawned, Arc<Process>) {
        let (host, kernel) = tokio::io::duplex(1 << 16);
        let (tx, rx) = mpsc::channel::<Frame>(16);
        let out = |v: serde_json::Value| Frame::Stdout(format!("{v}\n").into());
        tokio::spawn(async move {
            let _ = tx
                .send(out(serde_json::json!({"type": "ready", "pid": 7})))
                .await;
            let mut lines = BufReader::new(kernel).lines();
            let mut running = None;
            while let Ok(Some(line)) = lines.next_line().await {
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                let reply = match (v["type"].as_str(), v["code"].as_str()) {
                    (Some("execute"), Some("hang")) => {
                        running = v["id"].as_u64();
                        continue;
                    }
                    (Some("execute"), Some("die")) => return,
                    (Some("execute"), Some("fail")) => serde_json::json!({"type": "result",
                        "id": v["id"], "status": "error", "traceback": "ValueError"}),
                    (Some("execute"), Some(code)) => {
                        let chunk = serde_json::json!({"type": "stream", "id": v["id"],
                            "name": "stdout", "text": code});
                        let _ = tx.send(out(chunk)).await;
                        serde_json::json!({"type": "result", "id": v["id"], "status": "ok",
                            "stdout": code})
                    }
                    (Some("interrupt"), _) => serde_json::json!({"type": "result",
                        "id": running.take(), "status": "interrupted"}),
                    _ => continue,
                };
                let _ = tx.send(out(reply)).await;
            }
        });
        let output =
            futures_util::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|f| (f, rx)) },
            );
        let process = Arc::new(Process::default());
        let spawned = Spawned {
            input: Box::pin(host),
            output: Box::pin(output),
            process: process.clone(),
        };
        (spawned, process)
    }

    async fn run(slot: &mut Option<Kernel>, code: &str, live: &Mutex<String>) -> ExecResult {
        let cell = Cell {
            code,
            timeout: Duration::from_millis(200),
            live_cap: 1 << 20,
            memory_bytes: 2 << 20,
        };
        let on_output = |_: Stream, text: &str| live.lock().unwrap().push_str(text);
        let start = || async { Kernel::start(stand_in().0, 1 << 20).await };
        let cancel = CancellationToken::new();
        run_cell(slot, start, cell, &cancel, &on_output)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn the_protocol_runs_over_any_transport() {
        let live = Mutex::new(String::new());
        let (spawned, process) = stand_in();
        let mut slot = Some(Kernel::start(spawned, 1 << 20).await.unwrap());
        let r = run(&mut slot, "hello", &live).await;
        assert_eq!((r.status, r.stdout.as_str()), (ExecStatus::Ok, "hello"));
        assert_eq!(live.lock().unwrap().as_str(), "hello");
        let r = run(&mut slot, "fail", &live).await;
        assert_eq!(r.status, ExecStatus::Error);
        assert_eq!(r.traceback.as_deref(), Some("ValueError"));
        // At the timeout the cell is interrupted and the kernel kept.
        let r = run(&mut slot, "hang", &live).await;
        assert_eq!(r.status, ExecStatus::Timeout);
        assert!(r.note.unwrap().contains("the kernel's state is kept"));
        assert!(slot.is_some());
        // A kernel that dies is killed, named by its exit code, and replaced next time.
        let r = run(&mut slot, "die", &live).await;
        assert_eq!(r.status, ExecStatus::KernelRestarted);
        assert!(r.note.unwrap().contains("memory limit of 2 MiB"), "note");
        assert!(process.killed.load(Ordering::SeqCst) && slot.is_none());
        let r = run(&mut slot, "again", &live).await;
        assert_eq!(r.status, ExecStatus::Ok);
    }

    #[test]
    fn reply_statuses_are_typed() {
        let status = |s: &str| {
            serde_json::from_str::<KernelReply>(&format!(r#"{{"status": "{s}"}}"#))
                .unwrap()
                .status
        };
        assert_eq!(status("ok"), ReplyStatus::Ok);
        assert_eq!(status("interrupted"), ReplyStatus::Interrupted);
        assert_eq!(status("error"), ReplyStatus::Error);
        assert_eq!(status("something else"), ReplyStatus::Error);
    }
}
