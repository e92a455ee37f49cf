//! The Docker backend of [`Sandbox`], through the Engine API (`bollard`).
//!
//! One hardened container per run: no network unless asked, uid 1000, all
//! capabilities dropped, no-new-privileges, read-only root, a size-limited tmpfs
//! volume at `/workspace` and a tmpfs `/tmp`, memory/CPU/process limits; inputs
//! copied in, or on a local engine bind-mounted read-only (see `bind`). Every
//! container and volume carries the run id and its owner process as labels, so
//! leftovers of a process that died are found and removed at the next start. Names
//! are unique to one start of one process (`sandalyst-<run>-<random>`), and a sandbox
//! removes only what it made: its container by the id the engine returned, its volume
//! after checking that the volume's owner label is this process.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use async_trait::async_trait;
use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::models::{
    ContainerCreateBody, HostConfig, Mount, MountType, ResourcesUlimits, VolumeCreateRequest,
};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, DownloadFromContainerOptionsBuilder,
    ListContainersOptionsBuilder, ListVolumesOptionsBuilder, RemoveContainerOptionsBuilder,
    RemoveVolumeOptionsBuilder, UploadToContainerOptionsBuilder,
};
use bollard::Docker;
use futures_util::StreamExt;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::bind::{self, Bound, Plan};
use super::kernel::{Kernel, LiveCap, Wait};
use super::packages::{self, PackagesError, PythonEnv};
use super::{
    image, ExecResult, ExecStatus, OutputEntry, OutputSink, Sandbox, SandboxConfig, Stream,
};
use crate::owner::{owner_id, owner_is_gone};
use crate::store::AtomicFile;
use crate::workspace::{
    ChannelReader, ChannelWriter, CollectLimits, Collected, CopyReason, InputFile, Manifest,
    StagedInput, StagingMethod, StagingMode,
};

pub const RUN_LABEL: &str = "sandalyst.run";
const OWNER_LABEL: &str = "sandalyst.owner";
/// Which start of which process made a container or volume (its name's suffix).
const START_LABEL: &str = "sandalyst.start";
/// How long an interrupted call may take to stop before its kernel is killed.
const INTERRUPT_GRACE: Duration = Duration::from_secs(5);

/// Connect to the engine that `DOCKER_HOST` names (or the local socket) and check
/// that it answers.
pub async fn connect() -> anyhow::Result<Docker> {
    // The search order (DOCKER_HOST, Docker's socket, Podman's rootful then rootless
    // socket) lives in `engine`.
    Ok(super::engine::connect().await?.0)
}

/// An engine error as a user reads it: what was being done and what went wrong,
/// naming the two faults that matter (the engine gone, the container gone).
pub(crate) fn engine_error(doing: &str, e: bollard::errors::Error) -> anyhow::Error {
    use bollard::errors::Error as E;
    match &e {
        E::DockerResponseServerError {
            status_code: 409,
            message,
        } if message.contains("not running") => {
            anyhow::anyhow!("{doing}: the sandbox container is no longer running (it was stopped or killed from outside)")
        }
        E::DockerResponseServerError {
            status_code: 404, ..
        } => {
            anyhow::anyhow!(
                "{doing}: the sandbox container no longer exists (it was removed from outside)"
            )
        }
        E::DockerResponseServerError { message, .. } => anyhow::anyhow!("{doing}: {message}"),
        E::HyperLegacyError { .. }
        | E::IOError { .. }
        | E::RequestTimeoutError
        | E::SocketNotFoundError(_) => {
            anyhow::anyhow!("{doing}: the Docker engine stopped answering ({e})")
        }
        _ => anyhow::anyhow!("{doing}: {e}"),
    }
}

/// Run ids whose sandbox this process is running now.
static ACTIVE: std::sync::Mutex<BTreeSet<String>> = std::sync::Mutex::new(BTreeSet::new());

/// A labelled container or volume is a leftover when its owner process is gone, or
/// when it is this process's but its run has ended (e.g. removal failed while the
/// engine was unreachable).
fn is_leftover(labels: &HashMap<String, String>) -> bool {
    let owner = labels.get(OWNER_LABEL).map(String::as_str).unwrap_or("");
    if owner == owner_id() {
        let run = labels.get(RUN_LABEL).map(String::as_str).unwrap_or("");
        return !ACTIVE.lock().unwrap().contains(run);
    }
    owner_is_gone(owner)
}

/// Remove containers and volumes left by runs that are over: their owner process is
/// gone, or they are this process's but their run has ended.
/// Returns how many containers were removed.
pub async fn remove_leftovers(docker: &Docker) -> anyhow::Result<usize> {
    let list = labelled(docker, RUN_LABEL.to_string()).await?;
    let mut removed = 0;
    for c in list {
        if !is_leftover(&c.labels.unwrap_or_default()) {
            continue;
        }
        if let Some(id) = c.id {
            let opts = RemoveContainerOptionsBuilder::new().force(true).build();
            if docker.remove_container(&id, Some(opts)).await.is_ok() {
                removed += 1;
            }
        }
    }
    let filters = HashMap::from([("label".to_string(), vec![RUN_LABEL.to_string()])]);
    let vols = docker
        .list_volumes(Some(
            ListVolumesOptionsBuilder::new().filters(&filters).build(),
        ))
        .await
        .context("listing Sandalyst volumes")?;
    for v in vols.volumes.unwrap_or_default() {
        if is_leftover(&v.labels) {
            let _ = docker
                .remove_volume(
                    &v.name,
                    Some(RemoveVolumeOptionsBuilder::new().force(true).build()),
                )
                .await;
        }
    }
    Ok(removed)
}

/// Containers (running or not) labelled with this run id.
pub async fn containers_of_run(docker: &Docker, run_id: &str) -> anyhow::Result<Vec<String>> {
    let list = labelled(docker, format!("{RUN_LABEL}={run_id}")).await?;
    Ok(list.into_iter().filter_map(|c| c.id).collect())
}

/// Containers, running or not, that match a label filter (`key` or `key=value`).
async fn labelled(
    docker: &Docker,
    filter: String,
) -> anyhow::Result<Vec<bollard::models::ContainerSummary>> {
    let list = |states: Option<&[&str]>| {
        let mut filters = HashMap::from([("label".to_string(), vec![filter.clone()])]);
        if let Some(states) = states {
            let states = states.iter().map(|s| s.to_string()).collect();
            filters.insert("status".to_string(), states);
        }
        let opts = ListContainersOptionsBuilder::new()
            .all(true)
            .filters(&filters)
            .build();
        docker.list_containers(Some(opts))
    };
    match list(None).await {
        // Podman reports a container whose process ended as `stopped` until its
        // clean-up makes it `exited`, a state the Engine API (and bollard) do not
        // know: list the known states only; the stopped ones are not running, and
        // the next sweep sees them as `exited`. One state a query: Podman refuses a
        // filter naming a state it does not have (`restarting`, `dead`).
        Err(bollard::errors::Error::JsonDataError { .. }) => {
            let mut found = Vec::new();
            let mut refused = None;
            for state in KNOWN_STATES {
                // Podman's `exited` filter also matches its `stopped` containers: a
                // moment later its clean-up has made them `exited`; past that they are
                // left for the next sweep (they are not running).
                for attempt in 0..5 {
                    match list(Some(&[state])).await {
                        Ok(l) => found.extend(l),
                        Err(bollard::errors::Error::JsonDataError { .. }) if attempt < 4 => {
                            tokio::time::sleep(Duration::from_millis(200)).await;
                            continue;
                        }
                        Err(bollard::errors::Error::JsonDataError { .. }) => {}
                        Err(
                            e @ bollard::errors::Error::DockerResponseServerError {
                                status_code: 400 | 500,
                                ..
                            },
                        ) => refused = Some(e),
                        Err(e) => return Err(e).context("listing Sandalyst containers"),
                    }
                    break;
                }
            }
            match refused {
                Some(e) if found.is_empty() => Err(e).context("listing Sandalyst containers"),
                _ => Ok(found),
            }
        }
        r => r.context("listing Sandalyst containers"),
    }
}

/// The container states of the Engine API.
const KNOWN_STATES: [&str; 7] = [
    "created",
    "restarting",
    "running",
    "removing",
    "paused",
    "exited",
    "dead",
];

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

pub struct DockerSandbox {
    docker: Docker,
    run_id: String,
    /// The container's name, unique to this start (see the module notes).
    container: String,
    /// The id the engine gave the container, once it was created: what `close` removes.
    container_id: std::sync::OnceLock<String>,
    volume: String,
    config: SandboxConfig,
    kernel: Mutex<Option<Kernel>>,
    closed: AtomicBool,
    /// The engine is Podman (volume options and rlimits differ).
    podman: bool,
    /// PID 1's stdin: the container stops by itself once this closes (see `take_lease`).
    lease: Mutex<Option<std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>>>,
    /// What `python_env` found (or why it failed), asked once per sandbox.
    python_env: tokio::sync::OnceCell<Result<PythonEnv, PackagesError>>,
    /// The inputs bind-mounted at creation (see `bind`).
    bound: std::sync::Mutex<Vec<Bound>>,
    /// How each input now in `input/` was staged.
    staged: std::sync::Mutex<Vec<StagedInput>>,
}

/// Why zero-copy staging could not be used for a sandbox that asked for it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StagingError {
    /// The engine's bind mounts showed other files than this machine's at the same
    /// paths (e.g. this process runs in a container next to the engine).
    #[error("the engine's bind mounts do not show this machine's files ({0})")]
    OtherFiles(String),
}

/// Whether the engine behind `docker` can take bind mounts of this machine's files:
/// a local unix socket, Docker Engine (not Podman, not an engine in a VM such as
/// Docker Desktop, Colima or Rancher Desktop, whose files live elsewhere).
async fn engine_allows_binds(docker: &Docker, podman: bool) -> Result<(), CopyReason> {
    if !cfg!(unix) {
        return Err(CopyReason::RemoteEngine);
    }
    // The client does not say where it connected. `engine::connect` (which every
    // caller uses) tries `engine::candidates` in order; an engine that is not Podman
    // is at the first of them: DOCKER_HOST, else Docker's own socket.
    let place = super::engine::candidates()
        .into_iter()
        .next()
        .unwrap_or_default();
    if !place.starts_with("unix://") {
        return Err(CopyReason::RemoteEngine);
    }
    if podman {
        return Err(CopyReason::EngineNotSupported);
    }
    match super::engine::describe(docker, &place).await {
        Ok(info) if info.kind == super::engine::EngineKind::DockerEngine && !info.remote => Ok(()),
        _ => Err(CopyReason::EngineNotSupported),
    }
}

impl DockerSandbox {
    /// Create the container for `run_id`, stage the manifest's files into
    /// `/workspace/input`, and start the Python kernel. On any failure, whatever was
    /// created is removed again. Inputs are bind-mounted read-only where the engine
    /// and the file allow it and copied otherwise ([`Sandbox::staging`] says which);
    /// an engine whose mounts show other files is retried with copies.
    pub async fn start(
        docker: &Docker,
        run_id: &str,
        config: &SandboxConfig,
        manifest: &Manifest,
    ) -> anyhow::Result<DockerSandbox> {
        Self::start_or_cancel(docker, run_id, config, manifest, &CancellationToken::new()).await
    }

    /// [`DockerSandbox::start`] that stops when `cancel` fires: at the next step (a
    /// staging upload at once), with the container and volume it made removed.
    pub async fn start_or_cancel(
        docker: &Docker,
        run_id: &str,
        config: &SandboxConfig,
        manifest: &Manifest,
        cancel: &CancellationToken,
    ) -> anyhow::Result<DockerSandbox> {
        let podman = super::engine::is_podman(docker).await;
        let plan = if manifest.inputs.is_empty() {
            Plan::default()
        } else if bind::mode(config.staging) == StagingMode::Copy {
            Plan::copy_all(manifest, CopyReason::Forced)
        } else {
            let engine = engine_allows_binds(docker, podman).await;
            let manifest = manifest.clone();
            tokio::task::spawn_blocking(move || bind::plan(&manifest, engine))
                .await
                .context("planning the staging of the inputs")?
        };
        if plan.binds.is_empty() {
            return Self::start_planned(docker, run_id, config, plan, podman, cancel).await;
        }
        match Self::start_planned(docker, run_id, config, plan, podman, cancel).await {
            Err(e) if e.downcast_ref::<StagingError>().is_some() && !cancel.is_cancelled() => {
                // Copies work wherever the engine is.
                let plan = Plan::copy_all(manifest, CopyReason::EngineSeesOtherFiles);
                Self::start_planned(docker, run_id, config, plan, podman, cancel).await
            }
            r => r,
        }
    }

    async fn start_planned(
        docker: &Docker,
        run_id: &str,
        config: &SandboxConfig,
        plan: Plan,
        podman: bool,
        cancel: &CancellationToken,
    ) -> anyhow::Result<DockerSandbox> {
        if cancel.is_cancelled() {
            bail!("cancelled before the sandbox was made");
        }
        // Unique to this start: another process (or an earlier start) with the same
        // session never collides with it, and it never names theirs.
        let start = format!("{:08x}", rand::random::<u32>());
        let name = format!("sandalyst-{run_id}-{start}");
        // Registered before anything exists, so a concurrent clean-up never takes it.
        ACTIVE.lock().unwrap().insert(run_id.to_string());
        let labels = HashMap::from([
            (RUN_LABEL.to_string(), run_id.to_string()),
            (OWNER_LABEL.to_string(), owner_id().to_string()),
            (START_LABEL.to_string(), format!("{}/{start}", owner_id())),
        ]);
        // Bind-mounted inputs take no room in the workspace.
        let room = config.workspace_bytes + plan.copies.total_bytes();
        // Podman 4 takes `size=` on a volume as a disk quota (and fails without
        // project quotas); tmpfs's own `nr_blocks` (pages) gives it the same cap.
        let size = if podman {
            format!("nr_blocks={}", room.div_ceil(4096).max(1))
        } else {
            format!("size={room}")
        };
        // A tmpfs-backed volume: writable under a read-only root, with a size cap.
        docker
            .create_volume(VolumeCreateRequest {
                name: Some(name.clone()),
                driver: Some("local".into()),
                driver_opts: Some(HashMap::from([
                    ("type".to_string(), "tmpfs".to_string()),
                    ("device".to_string(), "tmpfs".to_string()),
                    (
                        "o".to_string(),
                        format!("{size},uid=1000,gid=1000,mode=0755,nosuid,nodev"),
                    ),
                ])),
                labels: Some(labels.clone()),
                ..Default::default()
            })
            .await
            .context("creating the workspace volume")
            .inspect_err(|_| {
                ACTIVE.lock().unwrap().remove(run_id);
            })?;
        let sandbox = DockerSandbox {
            docker: docker.clone(),
            run_id: run_id.to_string(),
            container: name.clone(),
            container_id: std::sync::OnceLock::new(),
            volume: name.clone(),
            config: config.clone(),
            kernel: Mutex::new(None),
            closed: AtomicBool::new(false),
            podman,
            lease: Mutex::new(None),
            python_env: tokio::sync::OnceCell::new(),
            bound: std::sync::Mutex::new(plan.binds.clone()),
            staged: std::sync::Mutex::new(plan.report.clone()),
        };
        match sandbox.create_and_stage(labels, &plan, cancel).await {
            Ok(()) => Ok(sandbox),
            Err(e) => {
                let _ = sandbox.close().await;
                Err(e)
            }
        }
    }

    async fn create_and_stage(
        &self,
        labels: HashMap<String, String>,
        plan: &Plan,
        cancel: &CancellationToken,
    ) -> anyhow::Result<()> {
        // Engine requests that create something are never dropped half-way (the
        // engine would finish them after the clean-up): the cancel is looked at
        // between them, and drops only the kernel start and the uploads.
        let stop = || -> anyhow::Result<()> {
            if cancel.is_cancelled() {
                bail!("cancelled while the sandbox was starting");
            }
            Ok(())
        };
        let c = &self.config;
        let host = HostConfig {
            network_mode: Some(if c.network { "bridge" } else { "none" }.into()),
            memory: Some(c.memory_bytes),
            memory_swap: Some(c.memory_bytes),
            nano_cpus: Some(c.nano_cpus),
            pids_limit: Some(c.pids_limit),
            cap_drop: Some(vec!["ALL".into()]),
            security_opt: Some(vec!["no-new-privileges".into()]),
            readonly_rootfs: Some(true),
            tmpfs: Some({
                let mut t = HashMap::from([(
                    "/tmp".to_string(),
                    format!("rw,nosuid,nodev,noexec,size={}", c.tmp_bytes),
                )]);
                // Podman puts writable, unbounded tmpfs mounts on /run and /var/tmp
                // of a read-only container; read-only ones of our own replace them,
                // so only /workspace and /tmp are writable, as on Docker.
                if self.podman {
                    for dir in ["/run", "/var/tmp"] {
                        t.insert(dir.to_string(), "ro,nosuid,nodev,noexec,size=64k".into());
                    }
                }
                t
            }),
            mounts: Some(
                std::iter::once(Mount {
                    target: Some(image::WORKDIR.into()),
                    source: Some(self.volume.clone()),
                    typ: Some(MountType::VOLUME),
                    ..Default::default()
                })
                .chain(plan.binds.iter().map(Bound::mount))
                .collect(),
            ),
            // Podman raises the container's open-file and process rlimits to the
            // maximum, which fails where the engine itself may not raise them (no
            // CAP_SYS_RESOURCE); explicit, modest values work everywhere. The pids
            // limit above stays the real bound on processes.
            ulimits: self.podman.then(|| {
                ["nofile", "nproc"]
                    .iter()
                    .map(|n| ResourcesUlimits {
                        name: Some(n.to_string()),
                        soft: Some(4096),
                        hard: Some(4096),
                    })
                    .collect()
            }),
            ..Default::default()
        };
        let body = ContainerCreateBody {
            image: Some(c.image.clone()),
            // PID 1 (under the image's tini) lives as long as its stdin is open. This
            // process holds that stdin (the lease, attached below); when it dies
            // without cleaning up (SIGKILL, a crash), the engine closes the stdin of
            // its only attached client (StdinOnce), `cat` ends and the container
            // stops by itself.
            cmd: Some(vec!["sh".into(), "-c".into(), "cat >/dev/null".into()]),
            open_stdin: Some(true),
            stdin_once: Some(true),
            attach_stdin: Some(true),
            user: Some(image::USER.into()),
            working_dir: Some(image::WORKDIR.into()),
            env: Some(sandbox_env(c)),
            labels: Some(labels),
            network_disabled: Some(!c.network),
            host_config: Some(host),
            ..Default::default()
        };
        let opts = CreateContainerOptionsBuilder::new()
            .name(&self.container)
            .build();
        stop()?;
        let created = self
            .docker
            .create_container(Some(opts), body)
            .await
            .with_context(|| format!("creating the sandbox container from image {}", c.image))?;
        let _ = self.container_id.set(created.id);
        // What the engine made, not what was asked: a limit it dropped fails the start.
        let made = self
            .docker
            .inspect_container(&self.container, None)
            .await
            .map_err(|e| engine_error("inspecting the sandbox container", e))?;
        check_made(c, made.host_config.as_ref())?;
        if let Err(wrong) = bind::check_mounts(&plan.binds, made.mounts.as_ref()) {
            bail!("the engine did not apply the sandbox's settings ({wrong}); refusing to run code in it");
        }
        stop()?;
        self.docker
            .start_container(
                &self.container,
                None::<bollard::query_parameters::StartContainerOptions>,
            )
            .await
            .context("starting the sandbox container")?;
        self.take_lease().await?;
        stop()?;
        // The kernel starts (and IPython loads) while the inputs are uploaded and the
        // mounts checked.
        // Absolute targets: a relative one would leave `/workspace`, the folder the
        // engine unpacks into, which it refuses.
        let links = plan
            .binds
            .iter()
            .map(|b| (b.dest.clone(), b.target.clone()))
            .collect();
        let started = async {
            tokio::join!(
                Kernel::start(&self.docker, &self.container, c.output_cap_bytes),
                async {
                    self.upload(workspace_tar(&plan.copies, true, links))
                        .await?;
                    self.check_bound(&plan.binds).await
                }
            )
        };
        // Dropping the upload ends its tar stream: the thread reading the inputs
        // stops at its next chunk.
        let (kernel, staged) = tokio::select! {
            biased;
            _ = cancel.cancelled() => bail!("cancelled while the inputs were being staged"),
            r = started => r,
        };
        let kernel = kernel?;
        if let Err(e) = staged {
            kernel.kill(&self.docker, &self.container).await;
            return Err(e.context("staging the input files into the workspace"));
        }
        *self.kernel.lock().await = Some(kernel);
        Ok(())
    }

    /// The bind-mounted files as the container sees them must be the host's files.
    async fn check_bound(&self, binds: &[Bound]) -> anyhow::Result<()> {
        if binds.is_empty() {
            return Ok(());
        }
        let mut cmd = vec!["stat", "-L", "-c", "%s %Y %i", "--"];
        cmd.extend(binds.iter().map(|b| b.target.as_str()));
        let (_, out, err) = self.exec_output(image::USER, cmd, 64 << 10).await?;
        let out = String::from_utf8_lossy(&out);
        if !bind::same_files(binds, &out) {
            let err = String::from_utf8_lossy(&err);
            return Err(StagingError::OtherFiles(format!("{} {}", out.trim(), err.trim())).into());
        }
        Ok(())
    }

    /// Attach to PID 1's stdin and keep it open for as long as the sandbox is ours.
    async fn take_lease(&self) -> anyhow::Result<()> {
        let opts = bollard::query_parameters::AttachContainerOptionsBuilder::new()
            .stdin(true)
            .stream(true)
            .build();
        let attached = self
            .docker
            .attach_container(&self.container, Some(opts))
            .await
            .map_err(|e| engine_error("attaching to the sandbox container", e))?;
        let mut output = attached.output;
        // Nothing comes out (only stdin is attached); drained so the connection lives.
        tokio::spawn(async move { while output.next().await.is_some() {} });
        *self.lease.lock().await = Some(attached.input);
        Ok(())
    }

    /// Unpack a tar stream into `/workspace` (the archive API writes only to volumes).
    async fn upload(
        &self,
        tar: impl futures_util::Stream<Item = std::io::Result<bytes::Bytes>> + Send + 'static,
    ) -> anyhow::Result<()> {
        let upload = UploadToContainerOptionsBuilder::new()
            .path(image::WORKDIR)
            .build();
        self.docker
            .upload_to_container(&self.container, Some(upload), bollard::body_try_stream(tar))
            .await
            .map_err(|e| engine_error("uploading into the workspace", e))
    }

    /// Run a command in the container as `user` and return its exit code, stdout and
    /// stderr (each capped at `cap` bytes).
    async fn exec_output(
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
    async fn read_python_env(&self) -> Result<PythonEnv, PackagesError> {
        let id = packages::image_id(&self.docker, &self.config.image).await?;
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

    /// `list_outputs` without the kernel: one `find` in the container.
    async fn list_outputs_by_exec(&self) -> anyhow::Result<Vec<OutputEntry>> {
        let (_, out, _) = self
            .exec_output(
                image::USER,
                vec![
                    "find",
                    "/workspace/output",
                    "-type",
                    "f",
                    "-printf",
                    "%P\\0%s\\0%T@\\0",
                ],
                64 << 20,
            )
            .await?;
        Ok(parse_find(&out))
    }

    /// Stream the workspace into a temporary file beside `dest` and rename it over
    /// `dest` only once it is whole and within `max_bytes`: the last good archive
    /// stays until then, and a failed or killed write leaves no half archive under
    /// the real name.
    async fn write_archive(&self, dest: &Path, max_bytes: u64) -> anyhow::Result<u64> {
        let opts = DownloadFromContainerOptionsBuilder::new()
            .path(image::WORKDIR)
            .build();
        let stream = self
            .docker
            .download_from_container(&self.container, Some(opts));
        // Bind-mounted inputs are symlinks in the workspace: the archive holds their
        // content instead, as it would for copies (a restored workspace has no mounts).
        let links: HashMap<String, std::path::PathBuf> = self
            .bound
            .lock()
            .unwrap()
            .iter()
            .filter(|b| b.live)
            .map(|b| (format!("workspace/input/{}", b.dest), b.source.clone()))
            .collect();
        let (reader, pump) = pump_to_reader(stream);
        let path = dest.to_path_buf();
        let written = tokio::task::spawn_blocking(move || -> anyhow::Result<u64> {
            let file = AtomicFile::create(&path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let out = CountingWriter {
                inner: std::io::BufWriter::new(file),
                written: 0,
                max: max_bytes,
            };
            let out = if links.is_empty() {
                let mut out = out;
                std::io::copy(&mut { reader }, &mut out)
                    .context("writing the workspace archive")?;
                out
            } else {
                resolve_links(reader, out, &links)?
            };
            let written = out.written;
            let file = out
                .inner
                .into_inner()
                .map_err(|e| e.into_error())
                .context("writing the workspace archive")?;
            // The engine may end a stream early without an error: only a whole tar
            // may replace the last good one.
            if let crate::store::ArchiveCheck::Unreadable { reason } =
                crate::store::check_archive(file.temp_path())
            {
                bail!("the engine sent an incomplete workspace archive: {reason}");
            }
            file.commit().context("saving the workspace archive")?;
            Ok(written)
        })
        .await
        .context("writing the workspace archive")?;
        pump.abort();
        written.with_context(|| format!("cannot write {}", dest.display()))
    }

    /// Kill a process group in the container. Asked of the running kernel first: it
    /// needs no new process, and a fork bomb may hold every pid the container has.
    async fn kill_group(&self, pgid: u32) {
        if let Some(kernel) = self.kernel.lock().await.as_mut() {
            if kernel.send_killpg(pgid).await.is_ok() {
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

    fn memory_note(&self, code: Option<i64>) -> String {
        match code {
            Some(137) => format!(
                "the Python kernel was killed (exit code 137), most likely because it exceeded the sandbox memory limit of {} MiB",
                self.config.memory_bytes >> 20
            ),
            Some(c) => format!("the Python kernel exited with code {c}"),
            None => "the Python kernel stopped".to_string(),
        }
    }
}

fn result(status: ExecStatus, started: Instant) -> ExecResult {
    ExecResult::empty(status, started.elapsed().as_millis() as u64)
}

fn fill(mut r: ExecResult, mut reply: super::kernel::KernelReply, stray: String) -> ExecResult {
    r.figures = reply.png_figures();
    r.stdout = reply.stdout;
    r.stderr = reply.stderr + &stray;
    r.traceback = (!reply.traceback.is_empty()).then_some(reply.traceback);
    r
}

const LOST: &str = "a fresh kernel will start on the next call; all variables and imports were lost (files in /workspace are kept)";

#[async_trait]
impl Sandbox for DockerSandbox {
    async fn python(
        &self,
        code: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult> {
        let started = Instant::now();
        let mut slot = self.kernel.lock().await;
        if slot.is_none() {
            *slot = Some(
                Kernel::start(&self.docker, &self.container, self.config.output_cap_bytes).await?,
            );
        }
        let kernel = slot.as_mut().expect("kernel just started");
        kernel.take_stray();
        let first = match kernel
            .send_execute(code, self.config.output_cap_bytes)
            .await
        {
            Err(_) => Wait::Exited,
            Ok(()) => tokio::select! {
                w = kernel.wait(timeout, on_output) => w,
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
                        let mut r =
                            fill(result(interrupted_as, started), reply, kernel.take_stray());
                        r.note = Some(match interrupted_as {
                            ExecStatus::Timeout => format!(
                                "interrupted after the {} s time limit; the kernel's state is kept",
                                timeout.as_secs()
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
                let status = match reply.status.as_str() {
                    "ok" => ExecStatus::Ok,
                    "interrupted" => interrupted_as,
                    _ => ExecStatus::Error,
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
                        let code = kernel.exit_code(&self.docker).await;
                        format!("{}; {LOST}", self.memory_note(code))
                    }
                });
                kernel.kill(&self.docker, &self.container).await;
                Ok(r)
            }
            Wait::TimedOut => {
                let mut r = result(interrupted_as, started);
                r.stderr = kernel.take_stray();
                r.note = Some(format!(
                    "the code did not stop when interrupted (e.g. a long call in C code), so the kernel was killed; {LOST}"
                ));
                kernel.kill(&self.docker, &self.container).await;
                Ok(r)
            }
        }
    }

    async fn shell(
        &self,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        on_output: OutputSink<'_>,
    ) -> anyhow::Result<ExecResult> {
        let started = Instant::now();
        // `timeout` makes itself a process-group leader; its pid comes first on stderr
        // so that the whole group (background children too) can be killed afterwards.
        let script = format!(
            "echo $$ >&2; exec timeout -s KILL {} sh -c \"$0\"",
            timeout.as_secs().max(1)
        );
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
        let (mut cancelled, mut killed) = (false, false);
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
            }
            // On cancel, kill as soon as the group is known (it is the first line out).
            if let (true, false, Some(pgid)) = (cancelled, killed, group.id) {
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
        let timed_out = code == Some(137) && started.elapsed() >= timeout;
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

    async fn collect_outputs(
        &self,
        dest: &Path,
        limits: &CollectLimits,
    ) -> anyhow::Result<Collected> {
        // When output/ holds more than may come back, the files that matter most
        // (top-level files, images, tables, Markdown) are chosen before the walk.
        let listed: Vec<(String, u64)> = self
            .list_outputs()
            .await
            .map(|l| l.into_iter().map(|e| (e.path, e.bytes)).collect())
            .unwrap_or_default();
        let total: u64 = listed.iter().map(|e| e.1).sum();
        let chosen = (listed.len() > limits.max_files || total > limits.max_total_bytes)
            .then(|| crate::workspace::choose_outputs(&listed, limits));
        let opts = DownloadFromContainerOptionsBuilder::new()
            .path("/workspace/output")
            .build();
        let stream = self
            .docker
            .download_from_container(&self.container, Some(opts));
        let (reader, pump) = pump_to_reader(stream);
        let (dest, limits) = (dest.to_path_buf(), limits.clone());
        let collected = tokio::task::spawn_blocking(move || {
            crate::workspace::collect_chosen(reader, "output/", &dest, &limits, chosen.as_ref())
        })
        .await
        .context("collecting outputs")?;
        pump.abort();
        collected
    }

    async fn archive_workspace(&self, dest: &Path, max_bytes: u64) -> anyhow::Result<u64> {
        self.write_archive(dest, max_bytes).await
    }

    async fn list_outputs(&self) -> anyhow::Result<Vec<OutputEntry>> {
        let listed = match self.kernel.lock().await.as_mut() {
            Some(kernel) => kernel
                .list_outputs(Duration::from_secs(5))
                .await
                .ok()
                .flatten(),
            None => None,
        };
        let mut entries = match listed {
            Some(entries) => entries,
            None => self.list_outputs_by_exec().await?,
        };
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(entries)
    }

    async fn read_file(&self, rel: &str, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
        check_rel(rel)?;
        let opts = DownloadFromContainerOptionsBuilder::new()
            .path(&format!("{}/{rel}", image::WORKDIR))
            .build();
        let mut stream = self
            .docker
            .download_from_container(&self.container, Some(opts));
        // The tar holds one header (two with a long name) and padding around the data.
        let limit = max_bytes.saturating_add(16 << 10);
        let mut tar = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| match e {
                bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                } => anyhow::anyhow!("{rel}: no such file in the workspace"),
                e => engine_error(&format!("reading {rel} from the workspace"), e),
            })?;
            tar.extend_from_slice(&chunk);
            if tar.len() as u64 > limit {
                bail!("{rel} is larger than {max_bytes} bytes");
            }
        }
        let mut archive = tar::Archive::new(tar.as_slice());
        let mut entry = archive
            .entries()?
            .next()
            .with_context(|| format!("{rel}: the engine sent an empty archive"))??;
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            bail!("{rel} is not a regular file");
        }
        let size = entry.size();
        if size > max_bytes {
            bail!("{rel} is larger than {max_bytes} bytes ({size} bytes)");
        }
        let mut data = Vec::with_capacity(size as usize);
        std::io::Read::read_to_end(&mut entry, &mut data)?;
        Ok(data)
    }

    async fn write_file(&self, rel: &str, bytes: &[u8]) -> anyhow::Result<()> {
        check_rel(rel)?;
        if rel.split('/').find(|c| !c.is_empty() && *c != ".") == Some("input") {
            bail!("refused {rel:?}: input/ is read-only");
        }
        // One tar with the file and its folders, owned by the sandbox user.
        let mut tar = tar::Builder::new(Vec::new());
        let parts: Vec<&str> = rel.split('/').filter(|c| !c.is_empty()).collect();
        for i in 1..parts.len() {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Directory);
            h.set_mode(0o755);
            h.set_uid(image::UID.into());
            h.set_gid(image::GID.into());
            h.set_size(0);
            h.set_cksum();
            tar.append_data(&mut h, parts[..i].join("/"), std::io::empty())?;
        }
        let mut h = tar::Header::new_gnu();
        h.set_mode(0o644);
        h.set_uid(image::UID.into());
        h.set_gid(image::GID.into());
        h.set_size(bytes.len() as u64);
        h.set_cksum();
        tar.append_data(&mut h, parts.join("/"), bytes)?;
        let data = bytes::Bytes::from(tar.into_inner()?);
        self.upload(futures_util::stream::once(async move { Ok(data) }))
            .await
            .with_context(|| format!("writing {rel} into the workspace"))
    }

    async fn add_inputs(&self, manifest: &Manifest) -> anyhow::Result<()> {
        // A running container cannot get new mounts: added files are copied.
        self.upload(workspace_tar(manifest, false, Vec::new()))
            .await
            .context("staging more input files into the workspace")?;
        let added: BTreeSet<&str> = manifest.inputs.iter().map(|f| f.dest.as_str()).collect();
        for b in self.bound.lock().unwrap().iter_mut() {
            if added.contains(b.dest.as_str()) {
                b.live = false; // its symlink was replaced by the copy
            }
        }
        let mut staged = self.staged.lock().unwrap();
        staged.retain(|s| !added.contains(s.dest.as_str()));
        staged.extend(manifest.inputs.iter().map(|f| StagedInput {
            dest: f.dest.clone(),
            method: StagingMethod::Copy,
            bytes: f.bytes,
            reason: Some(CopyReason::AddedLater),
        }));
        Ok(())
    }

    fn staging(&self) -> Vec<StagedInput> {
        self.staged.lock().unwrap().clone()
    }

    async fn changed_inputs(&self) -> Vec<String> {
        let live: Vec<Bound> = self
            .bound
            .lock()
            .unwrap()
            .iter()
            .filter(|b| b.live)
            .cloned()
            .collect();
        let changed: Vec<(String, Option<bind::FileId>)> = tokio::task::spawn_blocking(move || {
            live.into_iter()
                .filter_map(|b| Some((b.dest.clone(), b.changed()?)))
                .collect()
        })
        .await
        .unwrap_or_default();
        // Each change is reported once: what is seen now is the new reference.
        let mut bound = self.bound.lock().unwrap();
        for (dest, now) in &changed {
            if let (Some(b), Some(now)) = (bound.iter_mut().find(|b| &b.dest == dest), now) {
                b.id = *now;
            }
        }
        changed.into_iter().map(|(dest, _)| dest).collect()
    }

    async fn remove_input(&self, name: &str) -> anyhow::Result<()> {
        check_rel(name)?;
        let name = name.trim_end_matches('/');
        // A bind-mounted input cannot be unlinked: its symlink goes, and the folder of
        // its mount is closed (root's, in the sticky /tmp), so the sandbox user can
        // reach it no more.
        let closing: Vec<String> = self
            .bound
            .lock()
            .unwrap()
            .iter()
            .filter(|b| b.live && (b.dest == name || b.dest.starts_with(&format!("{name}/"))))
            .map(|b| b.folder().to_string())
            .collect();
        // Inputs are root's and read-only; root in the container (no capabilities, but
        // their owner) makes the folder writable for a moment.
        let script = r#"p="input/$1"; d=$(dirname "$p"); shift
[ -e "$p" ] || [ -L "$p" ] || { echo "no such input: $p" >&2; exit 3; }
chmod u+w "$d" || exit 1
if [ -d "$p" ] && [ ! -L "$p" ]; then chmod -R u+w "$p"; fi
rm -rf -- "$p"; rc=$?
chmod u-w "$d"
if [ $rc -eq 0 ] && [ $# -gt 0 ]; then chmod 000 -- "$@" || rc=1; fi
exit $rc"#;
        let mut cmd = vec!["sh", "-c", script, "sh", name];
        cmd.extend(closing.iter().map(String::as_str));
        let (code, _, err) = self.exec_output("0:0", cmd, 4096).await?;
        if code != Some(0) {
            bail!(
                "removing input/{name} failed: {}",
                String::from_utf8_lossy(&err).trim()
            );
        }
        let gone = |dest: &str| dest == name || dest.starts_with(&format!("{name}/"));
        for b in self.bound.lock().unwrap().iter_mut() {
            if gone(&b.dest) {
                b.live = false;
            }
        }
        self.staged.lock().unwrap().retain(|s| !gone(&s.dest));
        Ok(())
    }

    async fn restore_workspace(&self, archive: &Path) -> anyhow::Result<()> {
        let file = std::fs::File::open(archive)
            .with_context(|| format!("cannot read the workspace archive {}", archive.display()))?;
        let (writer, stream) = ChannelWriter::pair(8);
        let fail = writer.failer();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = rewrite_archive(file, writer) {
                fail(e);
            }
        });
        self.upload(stream)
            .await
            .with_context(|| format!("restoring the workspace from {}", archive.display()))
    }

    async fn upload_outputs(&self, src: &Path, files: &[String]) -> anyhow::Result<()> {
        let (writer, stream) = ChannelWriter::pair(8);
        let fail = writer.failer();
        let (src, files) = (src.to_path_buf(), files.to_vec());
        tokio::task::spawn_blocking(move || {
            if let Err(e) = write_outputs_tar(writer, &src, &files) {
                fail(e);
            }
        });
        self.upload(stream)
            .await
            .context("copying the session's outputs into output/")
    }

    async fn python_env(&self) -> Result<PythonEnv, PackagesError> {
        self.python_env
            .get_or_init(|| self.read_python_env())
            .await
            .clone()
    }

    async fn close(&self) -> anyhow::Result<()> {
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        // From here on the run is over: if removal fails (engine gone), the next
        // clean-up of this or another process takes the container as a leftover.
        ACTIVE.lock().unwrap().remove(&self.run_id);
        if let Some(k) = self.kernel.lock().await.take() {
            // Closing stdin lets the kernel exit; the container removal below kills the rest.
            drop(k);
        }
        // Held until the container is gone: closing it first would make the container
        // stop by itself while it is being removed (Podman then refuses the removal).
        let lease = self.lease.lock().await.take();
        let removed = match self.container_id.get() {
            Some(id) => self.remove_container(id).await,
            // Not created, or its creation's answer was lost: what this start made, if
            // anything, is found by its start label (never by its name).
            None => {
                // An engine that does not answer leaves it to the sweep.
                let mine = format!("{START_LABEL}={}", self.start_label());
                let found = labelled(&self.docker, mine).await.unwrap_or_default();
                for id in found.into_iter().filter_map(|c| c.id) {
                    let _ = self.remove_container(&id).await;
                }
                Ok(())
            }
        };
        drop(lease);
        self.remove_own_volume().await;
        removed
            .map_err(|e| anyhow::anyhow!("removing the sandbox container {}: {e}", self.container))
    }
}

impl DockerSandbox {
    /// The container's id as the engine gave it (None before it was created).
    pub fn container_id(&self) -> Option<&str> {
        self.container_id.get().map(String::as_str)
    }

    /// Remove container `id` (this sandbox's own); gone already is fine.
    async fn remove_container(&self, id: &str) -> Result<(), bollard::errors::Error> {
        let opts = RemoveContainerOptionsBuilder::new()
            .force(true)
            .v(true)
            .build();
        let mut removed = self.docker.remove_container(id, Some(opts.clone())).await;
        if matches!(&removed, Err(bollard::errors::Error::DockerResponseServerError { status_code, .. }) if *status_code >= 500)
        {
            // A container that was stopping on its own (e.g. its PID 1 ended) can
            // refuse a forced removal for a moment.
            tokio::time::sleep(Duration::from_millis(500)).await;
            removed = self.docker.remove_container(id, Some(opts)).await;
        }
        match removed {
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            r => r,
        }
    }

    /// This start's label value: this process and the name's random suffix.
    fn start_label(&self) -> String {
        let suffix = self.container.rsplit('-').next().unwrap_or_default();
        format!("{}/{suffix}", owner_id())
    }

    /// Remove the workspace volume this sandbox created, after checking that it is
    /// the one this start made (its start label).
    async fn remove_own_volume(&self) {
        let Ok(vol) = self.docker.inspect_volume(&self.volume).await else {
            return; // gone already, or the engine does not answer: the sweep takes it
        };
        if vol.labels.get(START_LABEL) == Some(&self.start_label()) {
            let _ = self
                .docker
                .remove_volume(
                    &self.volume,
                    Some(RemoveVolumeOptionsBuilder::new().force(true).build()),
                )
                .await;
        }
    }
}

impl Drop for DockerSandbox {
    fn drop(&mut self) {
        // Dropped without close (e.g. a cancelled future): leave it to the next clean-up.
        ACTIVE.lock().unwrap().remove(&self.run_id);
    }
}

/// Reads the shell wrapper's first stderr line: the process group id.
#[derive(Default)]
struct GroupId {
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
struct Capped {
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
struct Live {
    stream: Stream,
    cap: LiveCap,
    pending: Vec<u8>,
}

/// How often a shell call's live output is forwarded (the contract: every 200 ms).
const LIVE_EVERY: Duration = Duration::from_millis(100);

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

/// Compare the limits and switches of a created container (its inspected host
/// config) with what was asked; every difference is named.
pub(crate) fn check_made(asked: &SandboxConfig, made: Option<&HostConfig>) -> anyhow::Result<()> {
    let Some(h) = made else {
        bail!("the engine did not report the sandbox container's settings; refusing to run code in it");
    };
    let mut wrong = Vec::new();
    let mut expect = |what: &str, want: String, got: String| {
        if want != got {
            wrong.push(format!("{what}: asked {want}, got {got}"));
        }
    };
    let show = |v: Option<i64>| v.map_or("none".to_string(), |v| v.to_string());
    // Resource limits, unless the user accepted running without them (an engine
    // that cannot enforce them, e.g. rootless Podman on cgroup v1, reports them as 0).
    if !asked.allow_no_limits {
        expect("memory", asked.memory_bytes.to_string(), show(h.memory));
        expect(
            "memory+swap",
            asked.memory_bytes.to_string(),
            show(h.memory_swap),
        );
        expect(
            "process limit",
            asked.pids_limit.to_string(),
            show(h.pids_limit),
        );
        // CPU as nano-CPUs, or as the quota/period an engine may turn it into.
        let cpus = match (h.nano_cpus, h.cpu_quota, h.cpu_period) {
            (Some(n), _, _) if n > 0 => Some(n),
            (_, Some(q), Some(p)) if q > 0 && p > 0 => Some(q * 1_000_000_000 / p),
            _ => None,
        };
        expect("CPU (nano-CPUs)", asked.nano_cpus.to_string(), show(cpus));
    }
    expect(
        "read-only root",
        "true".into(),
        h.readonly_rootfs.unwrap_or(false).to_string(),
    );
    if !asked.network {
        expect(
            "network",
            "none".into(),
            h.network_mode.clone().unwrap_or_default(),
        );
    }
    let opts = h.security_opt.clone().unwrap_or_default();
    if !opts.iter().any(|o| o.starts_with("no-new-privileges")) {
        wrong.push(format!("no-new-privileges: asked, got {opts:?}"));
    }
    if !wrong.is_empty() {
        bail!(
            "the engine did not apply the sandbox's settings ({}); refusing to run code in it",
            wrong.join("; ")
        );
    }
    Ok(())
}

/// A path relative to `/workspace`: not empty, not absolute, no `..`, no NUL.
/// The sandbox's environment. Numeric libraries start one thread per CPU they see,
/// which is the host's count, not the container's limit: on a many-core host a 1-CPU
/// sandbox would run dozens of OpenBLAS threads against its quota. They get the limit.
/// [`super::MARKER_ENV`] marks it as a sandbox.
fn sandbox_env(c: &SandboxConfig) -> Vec<String> {
    let threads = (c.nano_cpus.max(1) as u64).div_ceil(1_000_000_000);
    let mut env = vec![
        "HOME=/tmp".to_string(),
        "MPLBACKEND=Agg".to_string(),
        format!("{}=1", super::MARKER_ENV),
    ];
    for var in ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"] {
        env.push(format!("{var}={threads}"));
    }
    env
}

/// Feeds an engine download into a blocking reader (for tar parsing off the runtime);
/// abort the task once the reader is done.
fn pump_to_reader(
    mut stream: impl futures_util::Stream<Item = Result<bytes::Bytes, bollard::errors::Error>>
        + Send
        + Unpin
        + 'static,
) -> (ChannelReader, tokio::task::JoinHandle<()>) {
    let (tx, reader) = ChannelReader::pair(8);
    let pump = tokio::spawn(async move {
        while let Some(chunk) = stream.next().await {
            let item = chunk.map_err(std::io::Error::other);
            let stop = item.is_err();
            if tx.send(item).await.is_err() || stop {
                break;
            }
        }
    });
    (reader, pump)
}

fn check_rel(rel: &str) -> anyhow::Result<()> {
    if rel.is_empty()
        || rel.starts_with('/')
        || rel.contains('\0')
        || rel.split('/').any(|c| c == "..")
        || rel.split('/').all(|c| c.is_empty() || c == ".")
    {
        bail!("refused path {rel:?}: it must be relative to the workspace, without '..'");
    }
    Ok(())
}

/// `find -printf '%P\0%s\0%T@\0'` output as entries.
fn parse_find(out: &[u8]) -> Vec<OutputEntry> {
    let fields: Vec<&[u8]> = out.split(|&b| b == 0).collect();
    fields
        .chunks_exact(3)
        .filter_map(|f| {
            let path = String::from_utf8_lossy(f[0]).into_owned();
            let bytes = std::str::from_utf8(f[1]).ok()?.parse().ok()?;
            let time = std::str::from_utf8(f[2]).ok()?;
            let (secs, frac) = time.split_once('.').unwrap_or((time, "0"));
            let mut frac: String = frac.chars().take(9).collect();
            while frac.len() < 9 {
                frac.push('0');
            }
            let modified_ns =
                secs.parse::<u128>().ok()? * 1_000_000_000 + frac.parse::<u128>().ok()?;
            Some(OutputEntry {
                path,
                bytes,
                modified_ns,
            })
        })
        .collect()
}

const ROOT: u64 = 0;

fn tar_header(kind: tar::EntryType, mode: u32, size: u64, owner: u64, mtime: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_uid(owner);
    h.set_gid(owner);
    h.set_mtime(mtime);
    h
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The manifest as a tar stream for `/workspace`, read only for the sandbox user:
/// `input/` and its folders root's 0555, files root's 0444 (the user can read them
/// but not change, remove or add any). With `output` (at start), an empty `output/`
/// owned by the user. Files are read in chunks as the stream is consumed.
fn workspace_tar(
    manifest: &Manifest,
    output: bool,
    links: Vec<(String, String)>,
) -> impl futures_util::Stream<Item = std::io::Result<bytes::Bytes>> + Send + 'static {
    let inputs = manifest.inputs.clone();
    let (writer, stream) = ChannelWriter::pair(8);
    let fail = writer.failer();
    tokio::task::spawn_blocking(move || {
        if let Err(e) = write_workspace_tar(writer, &inputs, output, &links) {
            fail(e);
        }
    });
    stream
}

fn write_workspace_tar(
    writer: ChannelWriter,
    inputs: &[InputFile],
    output: bool,
    links: &[(String, String)],
) -> std::io::Result<()> {
    let mtime = now_secs();
    let mut tar = tar::Builder::new(writer);
    let mut dirs = BTreeSet::from(["input".to_string()]);
    let dests = inputs
        .iter()
        .map(|f| &f.dest)
        .chain(links.iter().map(|l| &l.0));
    for dest in dests {
        let mut path = Path::new("input").join(dest);
        while let Some(parent) = path.parent() {
            if parent.as_os_str().is_empty() {
                break;
            }
            dirs.insert(parent.to_string_lossy().into_owned());
            path = parent.to_path_buf();
        }
    }
    if output {
        let mut h = tar_header(
            tar::EntryType::Directory,
            0o755,
            0,
            crate::workspace::SANDBOX_UID,
            mtime,
        );
        tar.append_data(&mut h, "output/", std::io::empty())?;
    }
    for dir in &dirs {
        let mut h = tar_header(tar::EntryType::Directory, 0o555, 0, ROOT, mtime);
        tar.append_data(&mut h, format!("{dir}/"), std::io::empty())?;
    }
    for f in inputs {
        // Never blocks, and refuses a file that is no longer regular (a FIFO swapped in).
        let (file, meta) =
            crate::workspace::open_input(&f.source).map_err(std::io::Error::other)?;
        let len = meta.len();
        let mut h = tar_header(tar::EntryType::Regular, 0o444, len, ROOT, mtime);
        // A file that grows while being staged is cut at the size it had when opened.
        tar.append_data(
            &mut h,
            format!("input/{}", f.dest),
            std::io::Read::take(file, len),
        )?;
    }
    // Root's symlinks in root's folders: the sandbox user cannot remove or change
    // them, only read through them to the read-only mount.
    for (dest, target) in links {
        let mut h = tar_header(tar::EntryType::Symlink, 0o777, 0, ROOT, mtime);
        tar.append_link(&mut h, format!("input/{dest}"), target)?;
    }
    tar.into_inner()?.finish();
    Ok(())
}

/// Files of the host's copy of `output/` (paths relative to `src`) as a tar for
/// `/workspace`, owned and writable by the sandbox user as the code made them.
/// Regular files only: a link on the host is never followed into the sandbox.
fn write_outputs_tar(writer: ChannelWriter, src: &Path, files: &[String]) -> std::io::Result<()> {
    let (mtime, uid) = (now_secs(), crate::workspace::SANDBOX_UID);
    let mut tar = tar::Builder::new(writer);
    let dirs = crate::workspace::folders_of("output", files.iter().map(String::as_str));
    for dir in &dirs {
        let mut h = tar_header(tar::EntryType::Directory, 0o755, 0, uid, mtime);
        tar.append_data(&mut h, format!("{dir}/"), std::io::empty())?;
    }
    for rel in files {
        let path = src.join(rel);
        if !std::fs::symlink_metadata(&path)?.is_file() {
            continue;
        }
        let file = std::fs::File::open(&path)?;
        let len = file.metadata()?.len();
        let mut h = tar_header(tar::EntryType::Regular, 0o644, len, uid, mtime);
        tar.append_data(
            &mut h,
            format!("output/{rel}"),
            std::io::Read::take(file, len),
        )?;
    }
    tar.into_inner()?.finish();
    Ok(())
}

/// Copy a workspace tar (as the engine sends it) to `out`, with each symlink named in
/// `links` (archive path -> host file) replaced by the host file's content as a
/// read-only regular file. Returns the bytes written.
fn resolve_links(
    reader: ChannelReader,
    out: CountingWriter<std::io::BufWriter<AtomicFile>>,
    links: &HashMap<String, std::path::PathBuf>,
) -> anyhow::Result<CountingWriter<std::io::BufWriter<AtomicFile>>> {
    let mut archive = tar::Archive::new(reader);
    let mut tar = tar::Builder::new(out);
    for entry in archive.entries().context("reading the workspace archive")? {
        let mut entry = entry.context("reading the workspace archive")?;
        let path = entry.path()?.into_owned();
        let kind = entry.header().entry_type();
        let mut h = entry.header().clone();
        let source = links.get(path.to_string_lossy().as_ref());
        match (source, kind) {
            (Some(source), tar::EntryType::Symlink) => {
                let (file, meta) = crate::workspace::open_input(source)?;
                let mtime = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs());
                let mut h = tar_header(tar::EntryType::Regular, 0o444, meta.len(), ROOT, mtime);
                tar.append_data(&mut h, &path, std::io::Read::take(file, meta.len()))?;
            }
            (_, tar::EntryType::Symlink | tar::EntryType::Link) => {
                let target = entry
                    .link_name()?
                    .map(|t| t.into_owned())
                    .unwrap_or_default();
                h.set_size(0);
                tar.append_link(&mut h, &path, target)?;
            }
            _ => {
                h.set_size(entry.size());
                tar.append_data(&mut h, &path, &mut entry)?;
            }
        }
    }
    Ok(tar.into_inner()?)
}

/// A writer that counts what passes and fails past `max` bytes.
struct CountingWriter<W> {
    inner: W,
    written: u64,
    max: u64,
}

impl<W: std::io::Write> std::io::Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.written += buf.len() as u64;
        if self.written > self.max {
            return Err(std::io::Error::other(format!(
                "the workspace is larger than the {} byte archive limit; it was not kept",
                self.max
            )));
        }
        self.inner.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Rewrite an `archive_workspace` tar (entries under `workspace/`) for an upload into
/// `/workspace`: folders and regular files only, no absolute paths or `..`; inputs
/// read-only as when staged, everything else the sandbox user's.
fn rewrite_archive(file: std::fs::File, writer: ChannelWriter) -> std::io::Result<()> {
    let mut archive = tar::Archive::new(std::io::BufReader::new(file));
    let mut out = tar::Builder::new(writer);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.into_owned();
        let Ok(rel) = path.strip_prefix("workspace") else {
            continue;
        };
        let unsafe_path = rel.components().any(|c| {
            !matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
        let rel = rel.to_string_lossy().replace('\\', "/");
        if unsafe_path || rel.is_empty() {
            continue;
        }
        let kind = entry.header().entry_type();
        let dir = kind.is_dir();
        if !(dir || kind.is_file() || kind == tar::EntryType::Continuous) {
            continue; // links, devices, fifos: never restored
        }
        let input = rel == "input" || rel.starts_with("input/");
        let mtime = entry.header().mtime().unwrap_or(0);
        let (owner, mode) = match (input, dir) {
            (true, true) => (ROOT, 0o555),
            (true, false) => (ROOT, 0o444),
            (false, _) => (
                crate::workspace::SANDBOX_UID,
                entry.header().mode().unwrap_or(0o644) & 0o777,
            ),
        };
        let kind = if dir {
            tar::EntryType::Directory
        } else {
            tar::EntryType::Regular
        };
        let size = if dir { 0 } else { entry.size() };
        let mut h = tar_header(kind, mode, size, owner, mtime);
        if dir {
            out.append_data(&mut h, format!("{rel}/"), std::io::empty())?;
        } else {
            out.append_data(&mut h, &rel, &mut entry)?;
        }
    }
    out.into_inner()?.finish();
    Ok(())
}

#[cfg(test)]
mod made_tests {
    use super::*;

    fn made(c: &SandboxConfig) -> HostConfig {
        HostConfig {
            memory: Some(c.memory_bytes),
            memory_swap: Some(c.memory_bytes),
            nano_cpus: Some(c.nano_cpus),
            pids_limit: Some(c.pids_limit),
            readonly_rootfs: Some(true),
            network_mode: Some("none".into()),
            security_opt: Some(vec!["no-new-privileges".into()]),
            ..Default::default()
        }
    }

    #[test]
    fn numeric_libraries_get_as_many_threads_as_the_cpu_limit() {
        let with = |nano_cpus| {
            sandbox_env(&SandboxConfig {
                nano_cpus,
                ..SandboxConfig::default()
            })
        };
        assert!(with(1_000_000_000).contains(&"OPENBLAS_NUM_THREADS=1".to_string()));
        assert!(with(500_000_000).contains(&"OMP_NUM_THREADS=1".to_string()));
        assert!(with(2_500_000_000).contains(&"MKL_NUM_THREADS=3".to_string()));
        assert!(with(1_000_000_000).contains(&"MPLBACKEND=Agg".to_string()));
        assert!(with(1_000_000_000).contains(&"SANDALYST_SANDBOX=1".to_string()));
    }

    #[test]
    fn a_dropped_or_changed_limit_fails_the_start_and_is_named() {
        let c = SandboxConfig::default();
        check_made(&c, Some(&made(&c))).unwrap();
        // CPU given back as quota/period is the same limit.
        let h = HostConfig {
            nano_cpus: Some(0),
            cpu_quota: Some(100_000),
            cpu_period: Some(100_000),
            ..made(&c)
        };
        check_made(&c, Some(&h)).unwrap();
        let h = HostConfig {
            memory: Some(0),
            pids_limit: None,
            readonly_rootfs: Some(false),
            network_mode: Some("bridge".into()),
            ..made(&c)
        };
        let e = check_made(&c, Some(&h)).unwrap_err().to_string();
        for what in [
            "memory: asked 2147483648, got 0",
            "process limit: asked 256, got none",
            "read-only root: asked true, got false",
            "network: asked none, got bridge",
        ] {
            assert!(e.contains(what), "{e}");
        }
        assert!(check_made(&c, None).is_err());
        // Accepted to run without limits: only the limits may be missing.
        let accepted = SandboxConfig {
            allow_no_limits: true,
            ..c.clone()
        };
        let h = HostConfig {
            memory: Some(0),
            pids_limit: Some(0),
            ..made(&c)
        };
        check_made(&accepted, Some(&h)).unwrap();
        let h = HostConfig {
            readonly_rootfs: Some(false),
            ..h
        };
        assert!(check_made(&accepted, Some(&h)).is_err());
    }
}
