//! The Python kernel's transport on Docker: one exec in the container whose stdin,
//! stdout and stderr carry the kernel's protocol (`sandbox::kernel`), and the
//! engine's answers for its exit code and for killing it.

use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use async_trait::async_trait;
use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::Docker;
use futures_util::{future, StreamExt};

use super::{engine_error, exec_quiet, DockerSandbox};
use crate::sandbox::image;
use crate::sandbox::kernel::{kernel_env, Frame, Kernel, KernelProcess, Spawned, KERNEL_SOURCE};

impl DockerSandbox {
    /// A new kernel in this sandbox's container, ready for code.
    pub(super) async fn start_kernel(&self) -> anyhow::Result<Kernel> {
        let cap = self.config.output_cap_bytes;
        Kernel::start(spawn(&self.docker, &self.container, cap).await?, cap).await
    }
}

/// Start the kernel as an exec attached to its stdin, stdout and stderr.
async fn spawn(docker: &Docker, container: &str, output_cap: usize) -> anyhow::Result<Spawned> {
    let doing = "starting the Python kernel";
    let env = kernel_env(output_cap);
    let exec = docker
        .create_exec(
            container,
            CreateExecOptions {
                cmd: Some(vec!["python3", "-u", "-c", KERNEL_SOURCE]),
                user: Some(image::USER),
                working_dir: Some(image::WORKDIR),
                env: Some(env.iter().map(String::as_str).collect()),
                attach_stdin: Some(true),
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                tty: Some(false),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| engine_error(doing, e))?;
    let StartExecResults::Attached { output, input } = docker
        .start_exec(&exec.id, None)
        .await
        .map_err(|e| engine_error(doing, e))?
    else {
        bail!("the Docker engine did not attach to the Python kernel");
    };
    // The stream ends at its first error: the kernel is then as good as gone.
    let frames = output
        .take_while(|f| future::ready(f.is_ok()))
        .filter_map(|f| {
            future::ready(match f {
                Ok(LogOutput::StdOut { message }) => Some(Frame::Stdout(message)),
                Ok(LogOutput::StdErr { message }) => Some(Frame::Stderr(message)),
                _ => None,
            })
        });
    Ok(Spawned {
        input,
        output: Box::pin(frames),
        process: Arc::new(ExecProcess {
            docker: docker.clone(),
            container: container.to_string(),
            exec_id: exec.id,
        }),
    })
}

/// The kernel's exec, for its exit code and for killing it.
struct ExecProcess {
    docker: Docker,
    container: String,
    exec_id: String,
}

#[async_trait]
impl KernelProcess for ExecProcess {
    async fn exit_code(&self) -> Option<i64> {
        for _ in 0..20 {
            if let Ok(info) = self.docker.inspect_exec(&self.exec_id).await {
                if info.running != Some(true) {
                    return info.exit_code;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        None
    }

    async fn kill(&self, pid: u32) {
        let cmd = format!("kill -KILL {pid} 2>/dev/null; kill -KILL -- -{pid} 2>/dev/null");
        let _ = exec_quiet(&self.docker, &self.container, &cmd).await;
    }
}
