//! The persistent Python kernel (`kernel.py`) from the host's side: its protocol,
//! whatever carries it.
//!
//! Requests are JSON lines on the kernel's stdin; replies are JSON lines on its
//! stdout: the cell's output while it runs (`stream`), its result, and answers to side
//! requests (`list_outputs`). Anything else the process writes (its stderr, a stdout
//! line that is no reply) is kept as "stray" output and handed to the next reply. A
//! channel that carries what no kernel sends (a line too long, a reply out of order)
//! is broken: the kernel is given up. [`run_cell`] decides how a call ends: its reply;
//! at the timeout or on cancel an interrupt and [`INTERRUPT_GRACE`] for the cell to
//! stop; or a kernel that died, broke the channel or would not stop, killed and
//! replaced at the next call.
//!
//! The transport is a [`Spawned`] kernel process that a backend starts: its stdin,
//! its stdout and stderr as [`Frame`]s, and a [`KernelProcess`] to learn its exit
//! code or kill it. A Docker exec is one (`docker::kernel_exec`); the unit tests here
//! drive the protocol over in-memory pipes.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use async_trait::async_trait;
use base64::Engine;
use futures_util::{Stream as FrameStream, StreamExt};
use serde::Deserialize;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{ExecResult, ExecStatus, OutputEntry, OutputSink, Stream};

/// The kernel's source, run with `python3 -u -c` so it always matches this binary.
pub(crate) const KERNEL_SOURCE: &str = include_str!("kernel.py");
const STRAY_CAP: usize = 16 << 10;
/// How long an interrupted call may take to stop before its kernel is killed.
pub(crate) const INTERRUPT_GRACE: Duration = Duration::from_secs(5);
/// How long a new kernel may take to say it is ready.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// The environment variables a kernel process starts with (`NAME=value`).
pub(crate) fn kernel_env(output_cap: usize) -> [String; 2] {
    [
        format!("SANDALYST_OUTPUT_CAP={output_cap}"),
        // IPython's profile folder: under the tmpfs, never the read-only root.
        "IPYTHONDIR=/tmp/ipython".to_string(),
    ]
}

/// A piece of what the kernel process wrote, as its transport delivers it (not
/// lines: a frame may hold part of a line, or many).
#[derive(Clone, Debug)]
pub(crate) enum Frame {
    Stdout(bytes::Bytes),
    Stderr(bytes::Bytes),
}

/// A kernel process a backend started: `python3 -u -c KERNEL_SOURCE` as the sandbox
/// user in the workspace, with [`kernel_env`].
pub(crate) struct Spawned {
    /// Its stdin.
    pub input: Pin<Box<dyn AsyncWrite + Send>>,
    /// Its stdout and stderr; the stream ends when the process is gone (or its
    /// transport failed, which is the same to the host).
    pub output: Pin<Box<dyn FrameStream<Item = Frame> + Send>>,
    pub process: Arc<dyn KernelProcess>,
}

/// What the host may do to a kernel process besides talking to it.
#[async_trait]
pub(crate) trait KernelProcess: Send + Sync {
    /// Its exit code once it has ended; `None` when that is not known soon.
    async fn exit_code(&self) -> Option<i64>;
    /// SIGKILL the process `pid` and its process group (what its cells started).
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
    /// It ran to its end.
    Ok,
    /// It stopped at an interrupt.
    Interrupted,
    /// It raised; also any status no kernel sends.
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
    /// What the namespace holds after the cell, bounded: "df (DataFrame 8760x4), …".
    #[serde(default)]
    pub names: Option<String>,
    /// What the kernel changed about the cell before it ran (a one-line cell of
    /// several statements, split), for the model.
    #[serde(default)]
    pub note: Option<String>,
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
    /// A process group asked to be killed is gone (or the kernel gave up on it).
    Killed(u64),
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
    /// `output_cap` is the one it was started with (see [`kernel_env`]).
    pub async fn start(spawned: Spawned, output_cap: usize) -> anyhow::Result<Kernel> {
        Kernel::attach(spawned, max_line(output_cap)).await
    }

    async fn attach(spawned: Spawned, limit: usize) -> anyhow::Result<Kernel> {
        let Spawned {
            input,
            output,
            process,
        } = spawned;
        let (tx, events) = mpsc::channel(16);
        let stray = Arc::new(Mutex::new(String::new()));
        tokio::spawn(read_frames(output, tx, stray.clone(), limit));
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
        match tokio::time::timeout(READY_WITHIN, kernel.events.recv()).await {
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
        let id = self.request("list_outputs", serde_json::json!({})).await?;
        let reply = self
            .reply(limit, |ev| match ev {
                Event::Outputs(o) if o.id == Some(id) => Some(o),
                _ => None,
            })
            .await?;
        let Some(o) = reply else { return Ok(None) };
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
        Ok(Some(entries))
    }

    /// Ask the idle kernel to SIGKILL a process group (see `kernel.py`) and wait up
    /// to `limit` for it to be gone: `false` if the kernel did not say so in time.
    pub async fn killpg(&mut self, pgid: u32, limit: Duration) -> anyhow::Result<bool> {
        let id = self
            .request("killpg", serde_json::json!({ "pgid": pgid }))
            .await?;
        let gone = self
            .reply(limit, |ev| {
                matches!(ev, Event::Killed(got) if got == id).then_some(())
            })
            .await?;
        Ok(gone.is_some())
    }

    /// Send a request of `kind` with `fields` and a new id; the id.
    async fn request(&mut self, kind: &str, mut fields: serde_json::Value) -> anyhow::Result<u64> {
        self.next_id += 1;
        fields["type"] = kind.into();
        fields["id"] = self.next_id.into();
        self.send(&fields).await?;
        Ok(self.next_id)
    }

    /// The first event `pick` takes within `limit` (`None` after it); any other is
    /// late output of an earlier, abandoned call.
    async fn reply<T>(
        &mut self,
        limit: Duration,
        mut pick: impl FnMut(Event) -> Option<T>,
    ) -> anyhow::Result<Option<T>> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Err(_) => return Ok(None),
                Ok(None) | Ok(Some(Event::Exited)) => bail!("the Python kernel stopped"),
                Ok(Some(Event::Broken(why))) => {
                    self.broken = Some(why);
                    bail!("the Python kernel's reply channel broke");
                }
                Ok(Some(ev)) => {
                    if let Some(t) = pick(ev) {
                        return Ok(Some(t));
                    }
                }
            }
        }
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

/// The reader of a kernel's output: stdout split into lines and parsed into events,
/// stderr and lines that are no reply kept as stray output; [`Event::Exited`] when
/// the output ends, [`Event::Broken`] (and nothing more) at a line over `limit`.
async fn read_frames(
    mut output: Pin<Box<dyn FrameStream<Item = Frame> + Send>>,
    tx: mpsc::Sender<Event>,
    stray: Arc<Mutex<String>>,
    limit: usize,
) {
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
                        None => push_capped(&stray, &String::from_utf8_lossy(&line)),
                    }
                }
            }
            Frame::Stderr(message) => push_capped(&stray, &String::from_utf8_lossy(&message)),
        }
    }
    let _ = tx.send(Event::Exited).await;
}

/// What a call needs besides its kernel.
pub(crate) struct Cell<'a> {
    pub code: &'a str,
    pub timeout: Duration,
    /// When the call began (its duration counts from here, waiting for the kernel
    /// included).
    pub started: Instant,
    /// Bytes of each stream forwarded live.
    pub live_cap: usize,
    /// The sandbox's memory limit, named when the kernel was killed for it.
    pub memory_bytes: i64,
}

const LOST: &str = "a fresh kernel will start on the next call; all variables and imports were lost (files in /workspace are kept)";

/// Run one cell in the kernel of `slot` (started with `start` when there is none).
///
/// The cell ends in one of four ways:
/// - its reply: the kernel is kept;
/// - at the timeout or on `cancel`, an interrupt, and the reply within
///   [`INTERRUPT_GRACE`]: the kernel and its state are kept;
/// - no reply within the grace: the kernel is killed and the slot left empty;
/// - the kernel exited or broke the channel: it is killed, the slot left empty, and
///   the note says why (its exit code, or what broke).
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
    let started = cell.started;
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
    // Empty is news too: nothing is defined (a NameError then says so).
    r.names = reply.names;
    if reply.note.is_some() {
        r.note = reply.note;
    }
    r
}

fn parse_line(line: &[u8]) -> Option<Event> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    match v.get("type")?.as_str()? {
        "ready" => Some(Event::Ready(v.get("pid")?.as_u64()? as u32)),
        "stream" => serde_json::from_value(v).ok().map(Event::Stream),
        "result" => serde_json::from_value(v).ok().map(Event::Reply),
        "outputs" => serde_json::from_value(v).ok().map(Event::Outputs),
        "killed" => Some(Event::Killed(v.get("id")?.as_u64()?)),
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
    use futures_util::future::ready;
    use serde_json::{json, Value};
    use std::sync::atomic::{AtomicU32, Ordering};
    use tokio::io::{AsyncBufReadExt, BufReader};
    use tokio_util::io::ReaderStream;

    /// The longest protocol line the stand-in's host accepts.
    const LIMIT: usize = 4096;
    const PID: u32 = 7;

    /// The process side of the stand-in kernel: once gone it looks killed by the
    /// OOM killer (exit code 137); `kill` records the pid it was given.
    #[derive(Default)]
    struct Process {
        killed: AtomicU32,
    }

    #[async_trait]
    impl KernelProcess for Process {
        async fn exit_code(&self) -> Option<i64> {
            Some(137)
        }
        async fn kill(&self, pid: u32) {
            self.killed.store(pid, Ordering::SeqCst);
        }
    }

    async fn write(pipe: &mut tokio::io::DuplexStream, v: Value) -> std::io::Result<()> {
        // In two pieces: frames are not lines.
        let line = format!("{v}\n");
        let (a, b) = line.split_at(line.len() / 2);
        pipe.write_all(a.as_bytes()).await?;
        tokio::task::yield_now().await;
        pipe.write_all(b.as_bytes()).await
    }

    /// A kernel speaking the protocol over in-memory pipes: its stdin, stdout and
    /// stderr are `tokio::io::duplex` pipes, read by the host in whatever pieces they
    /// come. Cells: `fail` raises; `hang` runs until interrupted; `stuck` does not
    /// stop even then; `ahead` replies for a call not yet made; `flood` writes a
    /// line longer than the host accepts; `die` writes on stderr and exits; any other
    /// code is printed, streamed in two chunks.
    fn stand_in(process: Arc<Process>) -> Spawned {
        let (host_in, kernel_in) = tokio::io::duplex(1 << 16);
        let (mut out, host_out) = tokio::io::duplex(1 << 16);
        let (mut err, host_err) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            write(&mut out, json!({"type": "ready", "pid": PID})).await?;
            let mut lines = BufReader::new(kernel_in).lines();
            let mut running = None;
            while let Some(line) = lines.next_line().await? {
                let v: Value = serde_json::from_str(&line)?;
                let id = v["id"].clone();
                let reply = match (v["type"].as_str(), v["code"].as_str()) {
                    (Some("execute"), Some("hang")) => {
                        running = Some(id);
                        continue;
                    }
                    (Some("execute"), Some("stuck")) => continue,
                    (Some("execute"), Some("die")) => {
                        err.write_all(b"Killed\n").await?;
                        return Ok(());
                    }
                    (Some("execute"), Some("flood")) => {
                        out.write_all(&[b'x'; LIMIT + 1]).await?;
                        continue;
                    }
                    (Some("execute"), Some("ahead")) => {
                        json!({"type": "result", "id": id.as_u64().unwrap() + 1, "status": "ok"})
                    }
                    (Some("execute"), Some("fail")) => json!({"type": "result", "id": id,
                        "status": "error", "traceback": "ValueError: no"}),
                    (Some("execute"), Some(code)) => {
                        let (a, b) = code.split_at(code.len() / 2);
                        for text in [a, b] {
                            let chunk = json!({"type": "stream", "id": id, "name": "stdout",
                                "text": text});
                            write(&mut out, chunk).await?;
                        }
                        json!({"type": "result", "id": id, "status": "ok", "stdout": code})
                    }
                    (Some("interrupt"), _) => match running.take() {
                        Some(id) => json!({"type": "result", "id": id, "status": "interrupted",
                            "traceback": "KeyboardInterrupt"}),
                        None => continue,
                    },
                    (Some("list_outputs"), _) => {
                        json!({"type": "outputs", "id": id, "entries": [["a.csv", 3, 5]]})
                    }
                    (Some("killpg"), _) => json!({"type": "killed", "id": id}),
                    _ => continue,
                };
                write(&mut out, reply).await?;
            }
            Ok::<_, std::io::Error>(())
        });
        let output = futures_util::stream::select(
            ReaderStream::new(host_out).filter_map(|r| ready(r.ok().map(Frame::Stdout))),
            ReaderStream::new(host_err).filter_map(|r| ready(r.ok().map(Frame::Stderr))),
        );
        Spawned {
            input: Box::pin(host_in),
            output: Box::pin(output),
            process,
        }
    }

    /// Kernels started so far, newest last.
    #[derive(Default)]
    struct Started(Mutex<Vec<Arc<Process>>>);

    impl Started {
        async fn start(&self) -> anyhow::Result<Kernel> {
            let process = Arc::new(Process::default());
            self.0.lock().unwrap().push(process.clone());
            Kernel::attach(stand_in(process), LIMIT).await
        }

        fn count(&self) -> usize {
            self.0.lock().unwrap().len()
        }

        fn last_killed(&self) -> u32 {
            let last = self.0.lock().unwrap().last().cloned().unwrap();
            last.killed.load(Ordering::SeqCst)
        }
    }

    /// One call through [`run_cell`]: its result and what was forwarded live.
    async fn run(
        slot: &mut Option<Kernel>,
        started: &Started,
        code: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> (ExecResult, String) {
        let live = Mutex::new(String::new());
        let on_output = |_: Stream, text: &str| live.lock().unwrap().push_str(text);
        let cell = Cell {
            code,
            timeout,
            started: Instant::now(),
            live_cap: 1 << 20,
            memory_bytes: 2 << 20,
        };
        let r = run_cell(slot, || started.start(), cell, cancel, &on_output)
            .await
            .unwrap();
        (r, live.into_inner().unwrap())
    }

    const LONG: Duration = Duration::from_secs(60);
    const SHORT: Duration = Duration::from_millis(200);

    #[tokio::test]
    async fn a_cell_streams_its_output_and_its_reply_keeps_the_kernel() {
        let (started, mut slot) = (Started::default(), None);
        let none = CancellationToken::new();
        let (r, live) = run(&mut slot, &started, "hello world", LONG, &none).await;
        assert_eq!(
            (r.status, r.stdout.as_str()),
            (ExecStatus::Ok, "hello world")
        );
        assert_eq!(live, "hello world", "both chunks forwarded live");
        let (r, _) = run(&mut slot, &started, "fail", LONG, &none).await;
        assert_eq!(r.status, ExecStatus::Error);
        assert_eq!(r.traceback.as_deref(), Some("ValueError: no"));
        let kernel = slot.as_mut().expect("the kernel is kept");
        let listed = kernel.list_outputs(LONG).await.unwrap().unwrap();
        assert_eq!(listed[0].path, "a.csv");
        assert_eq!((listed[0].bytes, listed[0].modified_ns), (3, 5));
        // A process group's end is awaited: the kernel says when it is gone.
        assert!(kernel.killpg(77, LONG).await.unwrap());
        assert_eq!(started.count(), 1, "one kernel for all three");
    }

    #[tokio::test]
    async fn an_interrupted_cell_keeps_the_kernel_and_one_that_will_not_stop_loses_it() {
        let (started, mut slot) = (Started::default(), None);
        let none = CancellationToken::new();
        // At the timeout: interrupted, state kept, and the next cell runs in it.
        let (r, _) = run(&mut slot, &started, "hang", SHORT, &none).await;
        assert_eq!(r.status, ExecStatus::Timeout);
        assert_eq!(r.traceback.as_deref(), Some("KeyboardInterrupt"));
        let note = r.note.unwrap();
        assert!(
            note.contains("time limit; the kernel's state is kept"),
            "{note}"
        );
        let (r, _) = run(&mut slot, &started, "after", LONG, &none).await;
        assert_eq!((r.status, r.stdout.as_str()), (ExecStatus::Ok, "after"));
        // On cancel: the same, said so.
        let cancelled = CancellationToken::new();
        cancelled.cancel();
        let (r, _) = run(&mut slot, &started, "hang", LONG, &cancelled).await;
        assert_eq!(r.status, ExecStatus::Cancelled);
        assert_eq!(
            r.note.as_deref(),
            Some("interrupted because the run was cancelled")
        );
        assert_eq!(started.count(), 1);
        // No reply within the grace: the kernel and its process group are killed.
        let (r, _) = run(&mut slot, &started, "stuck", SHORT, &none).await;
        assert_eq!(r.status, ExecStatus::Timeout);
        assert!(r.note.unwrap().contains("did not stop when interrupted"));
        assert!(slot.is_none());
        assert_eq!(started.last_killed(), PID);
        // The next call starts a fresh kernel.
        let (r, _) = run(&mut slot, &started, "again", LONG, &none).await;
        assert_eq!(r.status, ExecStatus::Ok);
        assert_eq!(started.count(), 2);
    }

    #[tokio::test]
    async fn a_broken_channel_or_a_dead_kernel_is_killed_and_replaced() {
        let (started, mut slot) = (Started::default(), None);
        let none = CancellationToken::new();
        for (code, said) in [
            (
                "ahead",
                "carried a reply out of order (id Some(2) while call 1 runs",
            ),
            ("flood", "carried a line longer than 0 MiB"),
            ("die", "exceeded the sandbox memory limit of 2 MiB"),
        ] {
            let before = started.count();
            let (r, _) = run(&mut slot, &started, code, LONG, &none).await;
            assert_eq!(r.status, ExecStatus::KernelRestarted, "{code}");
            let note = r.note.unwrap();
            assert!(note.contains(said), "{code}: {note}");
            assert!(note.ends_with("(files in /workspace are kept)"), "{note}");
            assert!(slot.is_none(), "{code}");
            assert_eq!(started.count(), before + 1, "{code}: a kernel of its own");
            assert_eq!(started.last_killed(), PID, "{code}");
            if code == "die" {
                // What it wrote outside the protocol comes with the result.
                assert_eq!(r.stderr, "Killed\n");
            }
        }
        let (r, _) = run(&mut slot, &started, "again", LONG, &none).await;
        assert_eq!(r.status, ExecStatus::Ok);
    }

    #[tokio::test]
    async fn a_kernel_that_exits_at_start_says_what_it_wrote() {
        let (host_in, _kernel_in) = tokio::io::duplex(64);
        let output = futures_util::stream::iter([Frame::Stderr(bytes::Bytes::from_static(
            b"ModuleNotFoundError: no IPython\n",
        ))]);
        let spawned = Spawned {
            input: Box::pin(host_in),
            output: Box::pin(output),
            process: Arc::new(Process::default()),
        };
        let err = Kernel::attach(spawned, LIMIT).await.err().unwrap();
        assert_eq!(
            err.to_string(),
            "the Python kernel exited at start: ModuleNotFoundError: no IPython"
        );
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
