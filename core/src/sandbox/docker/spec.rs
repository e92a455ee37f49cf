//! The container a sandbox asks for and the check that the engine made it so: no
//! network unless asked, uid 1000, all capabilities dropped, no-new-privileges,
//! read-only root, size-limited tmpfs mounts, memory/CPU/process limits.

use std::collections::HashMap;

use anyhow::bail;
use bollard::models::{
    ContainerCreateBody, HostConfig, Mount, MountType, ResourcesUlimits, VolumeCreateRequest,
};

use crate::sandbox::bind::Bound;
use crate::sandbox::{image, Isolation, NetworkMode, SandboxConfig};

/// The workspace volume: tmpfs-backed (writable under a read-only root), `room` bytes.
pub(super) fn volume(
    name: &str,
    labels: HashMap<String, String>,
    room: u64,
    podman: bool,
) -> VolumeCreateRequest {
    // Podman 4 takes `size=` on a volume as a disk quota (and fails without
    // project quotas); tmpfs's own `nr_blocks` (pages) gives it the same cap.
    let size = if podman {
        format!("nr_blocks={}", room.div_ceil(4096).max(1))
    } else {
        format!("size={room}")
    };
    VolumeCreateRequest {
        name: Some(name.to_string()),
        driver: Some("local".into()),
        driver_opts: Some(HashMap::from([
            ("type".to_string(), "tmpfs".to_string()),
            ("device".to_string(), "tmpfs".to_string()),
            (
                "o".to_string(),
                format!("{size},uid=1000,gid=1000,mode=0755,nosuid,nodev"),
            ),
        ])),
        labels: Some(labels),
        ..Default::default()
    }
}

/// The container for one sandbox: `volume` at `/workspace`, `binds` read-only, the
/// limits and switches of `c`, and `labels` naming its run, owner and start.
pub(super) fn container(
    c: &SandboxConfig,
    labels: HashMap<String, String>,
    volume: &str,
    binds: &[Bound],
    egress: Option<Mount>,
    podman: bool,
) -> ContainerCreateBody {
    let full = c.network == NetworkMode::Full;
    let host = HostConfig {
        runtime: c.isolation.runtime().map(String::from),
        // `allow:` too: its only way out is the proxy's socket (see `egress`).
        network_mode: Some(if full { "bridge" } else { "none" }.into()),
        memory: Some(c.memory_bytes),
        memory_swap: Some(c.memory_bytes),
        nano_cpus: Some(c.nano_cpus),
        pids_limit: Some(host_pids_limit(c)),
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
            if podman {
                for dir in ["/run", "/var/tmp"] {
                    t.insert(dir.to_string(), "ro,nosuid,nodev,noexec,size=64k".into());
                }
            }
            t
        }),
        mounts: Some(
            std::iter::once(Mount {
                target: Some(image::WORKDIR.into()),
                source: Some(volume.to_string()),
                typ: Some(MountType::VOLUME),
                ..Default::default()
            })
            .chain(binds.iter().map(super::bind::mount))
            .chain(egress)
            .collect(),
        ),
        // Podman raises the container's open-file and process rlimits to the
        // maximum, which fails where the engine itself may not raise them (no
        // CAP_SYS_RESOURCE); explicit, modest values work everywhere. The pids
        // limit above stays the real bound on processes.
        ulimits: ulimits(c, podman),
        ..Default::default()
    };
    ContainerCreateBody {
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
        network_disabled: Some(!full),
        host_config: Some(host),
        ..Default::default()
    }
}

/// Under gVisor the host's process limit counts the sandbox kernel's own threads too
/// (measured with runsc 2024-07: 254 processes inside took up to 768 host pids with
/// systrap and 1,536 with ptrace), and when it is reached that kernel dies with every
/// process in it. So there the limit on the code's processes is RLIMIT_NPROC, which
/// gVisor's kernel enforces like Linux does (fork fails with EAGAIN), and the host's
/// limit is only a backstop far above it.
pub(super) fn host_pids_limit(c: &SandboxConfig) -> i64 {
    match c.isolation {
        Isolation::Gvisor => c.pids_limit.saturating_mul(8).saturating_add(256),
        _ => c.pids_limit,
    }
}

/// Headroom between gVisor's per-process address-space cap and the container's
/// memory limit, for the sandbox kernel itself.
const GVISOR_MEMORY_HEADROOM: i64 = 128 << 20;

/// The container's rlimits. Podman raises the open-file and process rlimits to the
/// maximum, which fails where the engine itself may not raise them (no
/// CAP_SYS_RESOURCE); explicit, modest values work everywhere, and the pids limit stays
/// the real bound on processes. Under gVisor: the process limit (see
/// [`host_pids_limit`]), and each process's address space capped below the memory
/// limit, because gVisor has no OOM killer of its own: past the cgroup's limit the host
/// kills the whole sandbox, whereas an allocation over RLIMIT_AS fails in the code
/// (Python's MemoryError) and the kernel lives on.
fn ulimits(c: &SandboxConfig, podman: bool) -> Option<Vec<ResourcesUlimits>> {
    let limit = |name: &str, n: i64| ResourcesUlimits {
        name: Some(name.to_string()),
        soft: Some(n),
        hard: Some(n),
    };
    match c.isolation {
        Isolation::Gvisor => Some(vec![
            limit("nproc", c.pids_limit),
            limit(
                "as",
                (c.memory_bytes - GVISOR_MEMORY_HEADROOM).max(c.memory_bytes / 2),
            ),
        ]),
        _ if podman => Some(vec![limit("nofile", 4096), limit("nproc", 4096)]),
        _ => None,
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
            host_pids_limit(asked).to_string(),
            show(h.pids_limit),
        );
        if asked.isolation == Isolation::Gvisor {
            let want = ulimits(asked, false).unwrap_or_default();
            let got = h.ulimits.clone().unwrap_or_default();
            for w in want {
                let g = got.iter().find(|g| g.name == w.name);
                expect(
                    &format!("rlimit {}", w.name.clone().unwrap_or_default()),
                    show(w.hard),
                    show(g.and_then(|g| g.hard)),
                );
            }
        }
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
    if asked.network != NetworkMode::Full {
        expect(
            "network",
            "none".into(),
            h.network_mode.clone().unwrap_or_default(),
        );
    }
    if let Some(runtime) = asked.isolation.runtime() {
        expect(
            "runtime",
            runtime.into(),
            h.runtime.clone().unwrap_or_default(),
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

/// Where `pip install` puts packages in a sandbox with network.
pub(super) const USER_BASE: &str = "/workspace/.sandalyst/python";

/// The sandbox's environment. Numeric libraries start one thread per CPU they see,
/// which is the host's count, not the container's limit: on a many-core host a 1-CPU
/// sandbox would run dozens of OpenBLAS threads against its quota. They get the limit.
/// [`crate::sandbox::MARKER_ENV`] marks it as a sandbox.
pub(super) fn sandbox_env(c: &SandboxConfig) -> Vec<String> {
    let threads = (c.nano_cpus.max(1) as u64).div_ceil(1_000_000_000);
    let mut env = vec![
        "HOME=/tmp".to_string(),
        "MPLBACKEND=Agg".to_string(),
        format!("{}=1", crate::sandbox::MARKER_ENV),
    ];
    for var in ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"] {
        env.push(format!("{var}={threads}"));
    }
    if c.network.allowlist().is_some() {
        env.extend(super::egress::env());
    }
    if c.network != NetworkMode::Off {
        // With a way out, `pip install` works: into the workspace (the root is
        // read-only and /tmp is noexec, which compiled modules need), so it is kept
        // with the session's workspace and importable in the running kernel.
        env.extend([
            format!("PYTHONUSERBASE={USER_BASE}"),
            "PIP_USER=1".into(),
            "PIP_BREAK_SYSTEM_PACKAGES=1".into(),
            "PIP_DISABLE_PIP_VERSION_CHECK=1".into(),
            "PIP_NO_INPUT=1".into(),
        ]);
    }
    env
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
    fn under_gvisor_processes_and_memory_are_bounded_by_rlimits_and_read_back() {
        let c = SandboxConfig {
            isolation: Isolation::Gvisor,
            pids_limit: 256,
            memory_bytes: 1 << 30,
            ..SandboxConfig::default()
        };
        let made_c = container(&c, HashMap::new(), "v", &[], None, false);
        let h = made_c.host_config.unwrap();
        assert_eq!(h.runtime.as_deref(), Some("runsc"));
        assert_eq!(
            h.pids_limit,
            Some(256 * 8 + 256),
            "a backstop above gVisor's own threads"
        );
        let limits: Vec<_> = h
            .ulimits
            .clone()
            .unwrap()
            .into_iter()
            .map(|u| (u.name.unwrap(), u.soft.unwrap(), u.hard.unwrap()))
            .collect();
        assert_eq!(
            limits,
            vec![
                ("nproc".to_string(), 256, 256),
                (
                    "as".to_string(),
                    (1 << 30) - (128 << 20),
                    (1 << 30) - (128 << 20)
                ),
            ]
        );
        check_made(&c, Some(&h)).unwrap();
        // An engine that dropped the rlimits is refused, naming them.
        let dropped = HostConfig { ulimits: None, ..h };
        let e = check_made(&c, Some(&dropped)).unwrap_err().to_string();
        assert!(e.contains("rlimit nproc") && e.contains("rlimit as"), "{e}");
        // runc keeps the plain pids limit and no rlimits (RLIMIT_NPROC would count
        // every process of the uid on the host).
        let runc = container(
            &SandboxConfig::default(),
            HashMap::new(),
            "v",
            &[],
            None,
            false,
        );
        let h = runc.host_config.unwrap();
        assert_eq!(h.pids_limit, Some(SandboxConfig::default().pids_limit));
        assert!(h.ulimits.is_none());
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
