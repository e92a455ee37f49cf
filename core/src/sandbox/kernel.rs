//! The host side of the persistent Python kernel (`kernel.py`), driven over one
//! exec's stdin/stdout inside the container.
//!
//! Replies are JSON lines on stdout: the cell's output while it runs (`stream`), its
//! result, and answers to side requests (`list_outputs`). Anything else the process
//! writes outside a cell is kept as "stray" output and handed to the next reply.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use base64::Engine;
use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::Docker;
use futures_util::StreamExt;
use serde::Deserialize;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::{OutputEntry, OutputSink, Stream};

/// The kernel's source, passed with `python3 -c` so it always matches this binary.
const KERNEL_SOURCE: &str = include_str!("kernel.py");
const STRAY_CAP: usize = 16 << 10;

/// The longest protocol line the host accepts: a reply holds two capped streams
/// (JSON escaping can make them six times longer) and a few base64 figures. A longer
/// line means the channel was written to by something else (the cell shares the
/// process): reading stops there and the kernel is restarted, so the app's memory
/// stays bounded whatever the code writes.
fn max_line(output_cap: usize) -> usize {
    (16 << 20usize).max(output_cap.saturating_mul(16))
}

#[derive(Debug, Deserialize)]
pub(crate) struct KernelReply {
    #[serde(default)]
    pub id: Option<u64>,
    pub status: String,
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
    exec_id: String,
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
    pub async fn start(
        docker: &Docker,
        container: &str,
        output_cap: usize,
    ) -> anyhow::Result<Kernel> {
        let exec = docker
            .create_exec(
                container,
                CreateExecOptions {
                    cmd: Some(vec!["python3", "-u", "-c", KERNEL_SOURCE]),
                    user: Some(super::image::USER),
                    working_dir: Some(super::image::WORKDIR),
                    env: Some(vec![
                        &format!("SANDALYST_OUTPUT_CAP={output_cap}"),
                        // IPython's profile folder: under the tmpfs, never the read-only root.
                        "IPYTHONDIR=/tmp/ipython",
                    ]),
                    attach_stdin: Some(true),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    tty: Some(false),
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| crate::sandbox::docker::engine_error("starting the Python kernel", e))?;
        let StartExecResults::Attached { mut output, input } = docker
            .start_exec(&exec.id, None)
            .await
            .map_err(|e| crate::sandbox::docker::engine_error("starting the Python kernel", e))?
        else {
            bail!("the Docker engine did not attach to the Python kernel");
        };
        let (tx, events) = mpsc::channel(16);
        let stray = Arc::new(Mutex::new(String::new()));
        let stray_w = stray.clone();
        let limit = max_line(output_cap);
        tokio::spawn(async move {
            let mut line = Vec::new();
            while let Some(frame) = output.next().await {
                match frame {
                    Ok(LogOutput::StdOut { message }) => {
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
                    Ok(LogOutput::StdErr { message }) => {
                        push_capped(&stray_w, &String::from_utf8_lossy(&message))
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send(Event::Exited).await;
        });
        let mut kernel = Kernel {
            input,
            events,
            stray,
            exec_id: exec.id,
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
    /// the exec id, since the kernel's writer is not `Sync`.
    pub fn exit_code(
        &self,
        docker: &Docker,
    ) -> impl std::future::Future<Output = Option<i64>> + Send + 'static {
        let (exec_id, docker) = (self.exec_id.clone(), docker.clone());
        async move {
            for _ in 0..20 {
                if let Ok(info) = docker.inspect_exec(&exec_id).await {
                    if info.running != Some(true) {
                        return info.exit_code;
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            None
        }
    }

    /// Close stdin and kill the process and its process group (the processes its
    /// cells started): dropping the stream alone leaves it running.
    pub async fn kill(mut self, docker: &Docker, container: &str) {
        // Each step bounded: a kernel that flooded its channel may leave the engine's
        // side of the connection stuck, and a call must still end.
        let _ = tokio::time::timeout(Duration::from_secs(2), self.input.shutdown()).await;
        let _ = tokio::time::timeout(
            Duration::from_secs(10),
            crate::sandbox::docker::exec_quiet(
                docker,
                container,
                &format!(
                    "kill -KILL {pid} 2>/dev/null; kill -KILL -- -{pid} 2>/dev/null",
                    pid = self.pid
                ),
            ),
        )
        .await;
    }
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
