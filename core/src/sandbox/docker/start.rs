//! Making a sandbox: its workspace volume, the hardened container (see `spec`), the
//! lease that stops it when this process dies, the kernel and the staged inputs.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use anyhow::{bail, Context};
use bollard::query_parameters::CreateContainerOptionsBuilder;
use bollard::Docker;
use futures_util::StreamExt;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::{
    bind, engine_error, spec, tars, DockerSandbox, ACTIVE, OWNER_LABEL, RUN_LABEL, START_LABEL,
};
use crate::owner::owner_id;
use crate::sandbox::bind::Plan;
use crate::sandbox::{Sandbox, SandboxConfig};
use crate::workspace::CopyReason;

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
pub(super) async fn engine_allows_binds(docker: &Docker, podman: bool) -> Result<(), CopyReason> {
    if !cfg!(unix) {
        return Err(CopyReason::RemoteEngine);
    }
    // The client does not say where it connected; `engine::connect`, which made
    // every client of this process, remembers it.
    let Some(source) = super::engine::connected_source() else {
        return Err(CopyReason::RemoteEngine);
    };
    if !source.host().starts_with("unix://") {
        return Err(CopyReason::RemoteEngine);
    }
    if podman {
        return Err(CopyReason::EngineNotSupported);
    }
    match super::engine::describe(docker, &source).await {
        Ok(info)
            if info.kind == crate::sandbox::engine::EngineKind::DockerEngine && !info.remote =>
        {
            Ok(())
        }
        _ => Err(CopyReason::EngineNotSupported),
    }
}

impl DockerSandbox {
    pub(super) async fn start_planned(
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
        // `allow:` mode's proxy socket is bind-mounted, so it needs the engine on
        // this machine, as bind-mounted inputs do.
        if config.network.allowlist().is_some() {
            if let Err(why) = engine_allows_binds(docker, podman).await {
                ACTIVE.lock().unwrap().remove(run_id);
                bail!("network mode allow: needs a Docker Engine on this machine (its proxy's socket is mounted into the sandbox); this engine cannot take it ({why}). Use --network off, or full");
            }
        }
        let egress = super::egress::Egress::start(config, run_id)
            .await
            .inspect_err(|_| {
                ACTIVE.lock().unwrap().remove(run_id);
            })?;
        // Bind-mounted inputs take no room in the workspace.
        let room = config.workspace_bytes + plan.copies.total_bytes();
        docker
            .create_volume(spec::volume(&name, labels.clone(), room, podman))
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
            egress,
        };
        match sandbox.create_and_stage(labels, &plan, cancel).await {
            Ok(()) => Ok(sandbox),
            Err(e) => {
                let _ = sandbox.close().await;
                Err(e)
            }
        }
    }

    pub(super) async fn create_and_stage(
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
        let egress_mount = self.egress.as_ref().map(|e| e.mount());
        let wants_socket = egress_mount.is_some();
        let body = spec::container(
            c,
            labels,
            &self.volume,
            &plan.binds,
            egress_mount,
            self.podman,
        );
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
        spec::check_made(c, made.host_config.as_ref())?;
        let (socket, mounts) = super::egress::split_mounts(made.mounts.as_ref());
        if wants_socket && socket.is_none() {
            bail!("the engine did not mount the network proxy's socket into the sandbox; refusing to run code in it");
        }
        if let Err(wrong) = bind::check_mounts(&plan.binds, Some(&mounts)) {
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
        if let Some(egress) = &self.egress {
            egress
                .start_forwarder(&self.docker, &self.container)
                .await?;
        }
        if self.config.network != crate::sandbox::NetworkMode::Off {
            // Python puts the user site on its path only if it exists at start-up:
            // made before the kernel starts, packages installed later import at once.
            let make = "python3 -c 'import os, site; os.makedirs(site.getusersitepackages(), exist_ok=True)'";
            super::exec_quiet(&self.docker, &self.container, make).await?;
        }
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
            tokio::join!(self.start_kernel(), async {
                self.upload(tars::workspace_tar(&plan.copies, true, links))
                    .await?;
                self.check_bound(&plan.binds).await
            })
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
            kernel.kill().await;
            return Err(e.context("staging the input files into the workspace"));
        }
        *self.kernel.lock().await = Some(kernel);
        Ok(())
    }

    /// Attach to PID 1's stdin and keep it open for as long as the sandbox is ours.
    pub(super) async fn take_lease(&self) -> anyhow::Result<()> {
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
}
