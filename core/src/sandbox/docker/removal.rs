//! Removing what a sandbox made: its own container and volume at close (found by the
//! id the engine returned, or by this start's label), and the leftovers of runs that
//! are over (their owner process gone, or their run ended).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use bollard::query_parameters::{
    ListContainersOptionsBuilder, ListVolumesOptionsBuilder, RemoveContainerOptionsBuilder,
    RemoveVolumeOptionsBuilder, WaitContainerOptionsBuilder,
};
use bollard::Docker;
use futures_util::StreamExt;

use super::{DockerSandbox, OWNER_LABEL, RUN_LABEL, START_LABEL};
use crate::owner::{owner_id, owner_is_gone};

/// Run ids whose sandbox this process is running now.
pub(super) static ACTIVE: std::sync::Mutex<BTreeSet<String>> =
    std::sync::Mutex::new(BTreeSet::new());

/// A labelled container or volume is a leftover when its owner process is gone, or
/// when it is this process's but its run has ended (e.g. removal failed while the
/// engine was unreachable).
pub(super) fn is_leftover(labels: &HashMap<String, String>) -> bool {
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
            if remove_leftover(docker, &id).await {
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

/// Remove one leftover container; true when it is gone afterwards, whoever removed it.
/// The container of a process that was killed stops by itself (its lease, PID 1's
/// stdin, closes when the engine drops the dead client) while the next start sweeps:
/// a removal that meets that stop half-way can fail, so [`remove_patiently`] waits for
/// the stop and removes again. The sweep found it left by an earlier run either way,
/// and says so.
async fn remove_leftover(docker: &Docker, id: &str) -> bool {
    let opts = RemoveContainerOptionsBuilder::new().force(true).build();
    // Shorter than a run's own: a start waits for its sweep.
    remove_patiently(docker, id, opts, Duration::from_secs(30))
        .await
        .is_ok()
}

/// How long a run's own forced removal that the engine refuses is tried again.
const REMOVAL_PATIENCE: Duration = Duration::from_secs(90);

/// Remove container `id`, forced; gone already is fine. An engine can refuse a
/// forced removal for a while (a 5xx, or 409 while another removal of it is under
/// way, as a sweep can meet one): the container was stopping on its own (its
/// PID 1 ended), or its runtime is slow to kill it (gVisor with the thousands of
/// processes of a fork bomb refused twice in a row, half a second apart, and was
/// gone a minute later). Each refusal waits for the container to stop, then tries
/// again, for up to `patience`; then the last error is returned and the sweep of a
/// later start takes it.
async fn remove_patiently(
    docker: &Docker,
    id: &str,
    opts: bollard::query_parameters::RemoveContainerOptions,
    patience: Duration,
) -> Result<(), bollard::errors::Error> {
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        match docker.remove_container(id, Some(opts.clone())).await {
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => return Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError { status_code, .. })
                if (status_code >= 500 || status_code == 409)
                    && tokio::time::Instant::now() < deadline =>
            {
                let stopped = WaitContainerOptionsBuilder::new()
                    .condition("not-running")
                    .build();
                let stopped = docker
                    .wait_container(id, Some(stopped))
                    .for_each(|_| async {});
                let _ = tokio::time::timeout_at(deadline, stopped).await;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            r => return r,
        }
    }
}

/// Containers (running or not) labelled with this run id.
pub async fn containers_of_run(docker: &Docker, run_id: &str) -> anyhow::Result<Vec<String>> {
    let list = labelled(docker, format!("{RUN_LABEL}={run_id}")).await?;
    Ok(list.into_iter().filter_map(|c| c.id).collect())
}

/// Containers, running or not, that match a label filter (`key` or `key=value`).
pub(super) async fn labelled(
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
pub(super) const KNOWN_STATES: [&str; 7] = [
    "created",
    "restarting",
    "running",
    "removing",
    "paused",
    "exited",
    "dead",
];

impl DockerSandbox {
    pub(super) async fn remove_all(&self) -> anyhow::Result<()> {
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

    /// Remove container `id` (this sandbox's own) and its anonymous volumes.
    pub(super) async fn remove_container(&self, id: &str) -> Result<(), bollard::errors::Error> {
        let opts = RemoveContainerOptionsBuilder::new()
            .force(true)
            .v(true)
            .build();
        remove_patiently(&self.docker, id, opts, REMOVAL_PATIENCE).await
    }

    /// This start's label value: this process and the name's random suffix.
    pub(super) fn start_label(&self) -> String {
        let suffix = self.container.rsplit('-').next().unwrap_or_default();
        format!("{}/{suffix}", owner_id())
    }

    /// Remove the workspace volume this sandbox created, after checking that it is
    /// the one this start made (its start label).
    pub(super) async fn remove_own_volume(&self) {
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
