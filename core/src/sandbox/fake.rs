//! An in-memory [`Sandbox`] and its [`FakeFactory`], for testing the loop and
//! sessions without Docker.
//!
//! Its "Python" is a tiny line language, enough to show state kept between calls,
//! files made and read, output streamed while a call runs, figures, errors and
//! cancellation; the workspace is a map of paths to bytes, archived as a real tar:
//!
//! ```text
//! set NAME VALUE     keep a variable            get NAME        print it (NameError if unset)
//! write PATH TEXT    write a workspace file     cat PATH        print a file
//! print TEXT         print a line               stream N MS     print N lines, MS apart
//! sleep MS           wait (cancellable)         figure          display a 2x2 PNG figure
//! fail               raise an error             repeat N TEXT   print TEXT N times
//! png PATH           write a 2x2 PNG file
//! connect HOST PORT  a connection through the egress proxy: let through (and
//!                    closed) when HOST starts with `ok.`, refused otherwise
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::custom::Packages;
use super::factory::{EngineStatus, LineSink, SandboxFactory, SetupSink};
use super::packages::{PackagesError, PythonEnv};
use super::report::{BuildLine, ImageBuild, ImagePython, ImageReport};
use super::{
    Connections, ExecResult, ExecStatus, OutputEntry, OutputSink, Sandbox, SandboxConfig, Stream,
};
use crate::egress::{EgressEvent, EgressKind, Method, Refusal};
use crate::protocol::SessionError;
use crate::workspace::Manifest;

#[derive(Default)]
pub struct FakeSandbox {
    files: Mutex<BTreeMap<String, (Vec<u8>, u128)>>,
    vars: Mutex<BTreeMap<String, String>>,
    clock: AtomicUsize,
    pub closed: std::sync::atomic::AtomicBool,
    egress: Mutex<Vec<EgressEvent>>,
}

impl FakeSandbox {
    pub fn file(&self, rel: &str) -> Option<Vec<u8>> {
        self.files.lock().unwrap().get(rel).map(|(b, _)| b.clone())
    }

    fn put(&self, rel: &str, bytes: Vec<u8>) {
        let t = self.clock.fetch_add(1, Ordering::SeqCst) as u128 + 1;
        self.files
            .lock()
            .unwrap()
            .insert(rel.to_string(), (bytes, t));
    }

    async fn interpret(
        &self,
        code: &str,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
        r: &mut ExecResult,
        at: &mut (usize, String),
    ) -> Result<(), String> {
        let say = |r: &mut ExecResult, text: String| {
            on_output(Stream::Stdout, &text);
            r.stdout.push_str(&text);
        };
        for (n, line) in code.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            *at = (n + 1, line.to_string());
            let mut words = line.splitn(3, ' ');
            let (cmd, a, b) = (
                words.next().unwrap_or(""),
                words.next().unwrap_or(""),
                words.next().unwrap_or(""),
            );
            match cmd {
                "set" => {
                    self.vars.lock().unwrap().insert(a.into(), b.into());
                }
                "get" => {
                    let v = self.vars.lock().unwrap().get(a).cloned();
                    match v {
                        Some(v) => say(r, format!("{v}\n")),
                        None => return Err(format!("NameError: name '{a}' is not defined")),
                    }
                }
                "write" => self.put(a, b.as_bytes().to_vec()),
                "cat" => match self.file(a) {
                    Some(bytes) => say(r, String::from_utf8_lossy(&bytes).into_owned() + "\n"),
                    None => return Err(format!("FileNotFoundError: {a}")),
                },
                "print" => say(r, format!("{a} {b}").trim_end().to_string() + "\n"),
                "repeat" => {
                    let n: usize = a.parse().unwrap_or(1);
                    say(r, format!("{b}\n").repeat(n));
                }
                "stream" | "sleep" => {
                    let (n, ms): (u64, u64) = if cmd == "sleep" {
                        (1, a.parse().unwrap_or(0))
                    } else {
                        (a.parse().unwrap_or(1), b.parse().unwrap_or(0))
                    };
                    for i in 0..n {
                        tokio::select! {
                            _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                            _ = cancel.cancelled() => return Err("KeyboardInterrupt".into()),
                        }
                        if cmd == "stream" {
                            say(r, format!("line {i}\n"));
                        }
                    }
                }
                "figure" => r.figures.push(tiny_png()),
                "png" => self.put(a, tiny_png()),
                "connect" => {
                    let port = b.parse().unwrap_or(443);
                    let event = |kind| EgressEvent {
                        host: a.into(),
                        port,
                        method: Method::Connect,
                        kind,
                    };
                    let mut log = self.egress.lock().unwrap();
                    if a.starts_with("ok.") {
                        let addr = std::net::SocketAddr::from(([192, 0, 2, 1], port));
                        log.push(event(EgressKind::Allowed { addr }));
                        log.push(event(EgressKind::Closed {
                            bytes_up: 10,
                            bytes_down: 20,
                        }));
                    } else {
                        log.push(event(EgressKind::Refused {
                            reason: Refusal::NotInAllowlist,
                        }));
                    }
                }
                "fail" => return Err("ValueError: failed on purpose".into()),
                other => return Err(format!("SyntaxError: unknown statement {other:?}")),
            }
        }
        Ok(())
    }
}

/// A valid 2x2 PNG.
pub fn tiny_png() -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, 2, 2);
        enc.set_color(png::ColorType::Rgb);
        let mut w = enc.write_header().expect("png header");
        w.write_image_data(&[255; 12]).expect("png data");
    }
    out
}

#[async_trait]
impl Sandbox for FakeSandbox {
    async fn python(
        &self,
        code: &str,
        _timeout: Duration,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult> {
        let started = Instant::now();
        let mut r = ExecResult::empty(ExecStatus::Ok, 0);
        let mut at = (0, String::new());
        if let Err(e) = self
            .interpret(code, cancel, on_output, &mut r, &mut at)
            .await
        {
            r.status = if e == "KeyboardInterrupt" {
                ExecStatus::Cancelled
            } else {
                ExecStatus::Error
            };
            // Plain IPython's form: the cell's line, then the error.
            let (n, line) = at;
            r.traceback = Some(format!(
                "Traceback (most recent call last):\n  Cell In[1], line {n}\n    {line}\n{e}\n"
            ));
        }
        r.duration_ms = started.elapsed().as_millis() as u64;
        Ok(r)
    }

    async fn shell(
        &self,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult> {
        let mut r = self.python(command, timeout, cancel, on_output).await?;
        r.exit_code = Some(if r.status == ExecStatus::Ok { 0 } else { 1 });
        Ok(r)
    }

    async fn list_outputs(&self) -> anyhow::Result<Vec<OutputEntry>> {
        Ok(self
            .files
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(p, (b, t))| {
                p.strip_prefix("output/").map(|rel| OutputEntry {
                    path: rel.to_string(),
                    bytes: b.len() as u64,
                    modified_ns: *t,
                })
            })
            .collect())
    }

    async fn read_file(&self, rel: &str, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
        let bytes = self.file(rel).with_context(|| format!("no file {rel}"))?;
        if bytes.len() as u64 > max_bytes {
            bail!("{rel} is larger than {max_bytes} bytes");
        }
        Ok(bytes)
    }

    async fn write_file(&self, rel: &str, bytes: &[u8]) -> anyhow::Result<()> {
        self.put(rel, bytes.to_vec());
        Ok(())
    }

    async fn add_inputs(&self, manifest: &Manifest) -> anyhow::Result<()> {
        for f in &manifest.inputs {
            // As the Docker sandbox reads inputs: never blocking on a swapped-in FIFO.
            let source = f.source.clone();
            let bytes = tokio::task::spawn_blocking(move || -> anyhow::Result<Vec<u8>> {
                let (mut file, _) = crate::workspace::open_input(&source)?;
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut file, &mut bytes)?;
                Ok(bytes)
            })
            .await??;
            self.put(&format!("input/{}", f.dest), bytes);
        }
        Ok(())
    }

    async fn remove_input(&self, name: &str) -> anyhow::Result<()> {
        self.files.lock().unwrap().remove(&format!("input/{name}"));
        Ok(())
    }

    async fn restore_workspace(&self, archive: &Path) -> anyhow::Result<()> {
        let bytes = tokio::fs::read(archive).await?;
        let mut tar = tar::Archive::new(&bytes[..]);
        for entry in tar.entries()? {
            let mut entry = entry?;
            let path = entry.path()?.to_string_lossy().into_owned();
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut data)?;
            if let Some(rel) = path.strip_prefix("workspace/") {
                self.put(rel, data);
            }
        }
        Ok(())
    }

    async fn output_tar(&self) -> anyhow::Result<Box<dyn std::io::Read + Send>> {
        let mut tar = tar::Builder::new(Vec::new());
        for (path, (bytes, _)) in self.files.lock().unwrap().iter() {
            if path.starts_with("output/") {
                let mut h = tar::Header::new_gnu();
                h.set_size(bytes.len() as u64);
                h.set_mode(0o644);
                h.set_cksum();
                tar.append_data(&mut h, path, &bytes[..])?;
            }
        }
        Ok(Box::new(std::io::Cursor::new(tar.into_inner()?)))
    }

    async fn archive_workspace(&self, dest: &Path, _max_bytes: u64) -> anyhow::Result<u64> {
        let mut tar = tar::Builder::new(Vec::new());
        for (path, (bytes, _)) in self.files.lock().unwrap().iter() {
            let mut h = tar::Header::new_gnu();
            h.set_size(bytes.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            tar.append_data(&mut h, format!("workspace/{path}"), &bytes[..])?;
        }
        let data = tar.into_inner()?;
        let (path, len) = (dest.to_path_buf(), data.len() as u64);
        // Like the Docker backend: the last good archive stays until this one is whole.
        tokio::task::spawn_blocking(move || crate::store::write_atomic(&path, &data)).await??;
        Ok(len)
    }

    fn take_egress(&self) -> Connections {
        Connections {
            events: std::mem::take(&mut *self.egress.lock().unwrap()),
            dropped: 0,
        }
    }

    async fn close(&self) -> anyhow::Result<()> {
        self.closed.store(true, Ordering::SeqCst);
        Ok(())
    }
}

/// Starts [`FakeSandbox`]es and remembers them, so a test can look inside. Its
/// "engine" always answers and its one image, [`FAKE_IMAGE`], is always there.
#[derive(Default)]
pub struct FakeFactory {
    pub started: Mutex<Vec<Arc<FakeSandbox>>>,
    /// When set, starting fails with this error (e.g. an engine that does not answer).
    pub fail_with: Mutex<Option<SessionError>>,
    /// When set, each start waits for a permit of this semaphore before it goes on
    /// (or fails with `fail_with`, read then): a test holds a start to see what
    /// happens meanwhile.
    pub gate: Mutex<Option<Arc<tokio::sync::Semaphore>>>,
}

/// The tag the fake factory reports for every image.
pub const FAKE_IMAGE: &str = "sandalyst-fake:latest";

#[async_trait]
impl SandboxFactory for FakeFactory {
    async fn start(
        &self,
        _id: &str,
        _config: &SandboxConfig,
        manifest: &Manifest,
        _setup: SetupSink<'_>,
        _cancel: &CancellationToken,
    ) -> Result<Arc<dyn Sandbox>, SessionError> {
        let gate = self.gate.lock().unwrap().clone();
        if let Some(gate) = gate {
            // A closed gate lets every start through.
            let _ = gate.acquire().await.map(|p| p.forget());
        }
        if let Some(e) = self.fail_with.lock().unwrap().clone() {
            return Err(e);
        }
        let sb = Arc::new(FakeSandbox::default());
        sb.add_inputs(manifest)
            .await
            .map_err(|e| SessionError::Sandbox {
                message: format!("{e:#}"),
            })?;
        self.started.lock().unwrap().push(sb.clone());
        Ok(sb)
    }

    async fn cached_python_env(
        &self,
        _config: &SandboxConfig,
    ) -> Option<Result<PythonEnv, PackagesError>> {
        // What its sandboxes answer, known without one.
        Some(Err(PackagesError::Unsupported))
    }

    async fn prepare_image(
        &self,
        config: &SandboxConfig,
        _progress: LineSink<'_>,
    ) -> Result<String, SessionError> {
        if let Some(e) = self.fail_with.lock().unwrap().clone() {
            return Err(e);
        }
        Ok(match config.image.as_str() {
            "" => FAKE_IMAGE.to_string(),
            own => own.to_string(),
        })
    }

    async fn engine_status(&self) -> EngineStatus {
        EngineStatus {
            reachable: true,
            message: None,
            fix: None,
            engine: Some("in-memory sandbox".into()),
            missing: Vec::new(),
            image_tag: FAKE_IMAGE.into(),
            image_present: Some(true),
            image_bytes: None,
        }
    }

    async fn build_image(
        &self,
        progress: &(dyn for<'s> Fn(&'s str) + Send + Sync),
    ) -> anyhow::Result<String> {
        progress("nothing to build for the in-memory sandbox");
        Ok(FAKE_IMAGE.into())
    }

    async fn image_report(&self, _packages: &Packages) -> anyhow::Result<ImageReport> {
        Ok(ImageReport {
            tag: FAKE_IMAGE.into(),
            present: true,
            size_bytes: None,
            created: None,
            stale_tags: Vec::new(),
            custom: None,
            python: Some(ImagePython {
                tag: FAKE_IMAGE.into(),
                env: Err(PackagesError::Unsupported.to_string()),
            }),
        })
    }

    async fn build_images(
        &self,
        _build: &ImageBuild,
        progress: &(dyn Fn(BuildLine) + Send + Sync),
    ) -> anyhow::Result<String> {
        progress(BuildLine::UpToDate {
            tag: FAKE_IMAGE.into(),
        });
        Ok(FAKE_IMAGE.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::CollectLimits;

    #[tokio::test]
    async fn outputs_come_back_through_the_one_check() {
        let sb = FakeSandbox::default();
        sb.write_file("output/report.md", b"# hi").await.unwrap();
        sb.write_file("output/big.bin", &[0u8; 100]).await.unwrap();
        sb.write_file("scratch.txt", b"not an output")
            .await
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let limits = CollectLimits {
            max_file_bytes: 50,
            ..CollectLimits::default()
        };
        let got = sb.collect_outputs(dir.path(), &limits).await.unwrap();
        let files: Vec<_> = got.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(files, ["report.md"]);
        assert_eq!(got.refused.len(), 1);
        assert_eq!(got.refused[0].path, "big.bin");
        assert!(got.refused[0].reason.contains("50 byte limit per file"));
        assert!(!dir.path().join("big.bin").exists());
    }
}
