//! The staged inputs of a running sandbox: checking bind mounts show the host's
//! files, adding copies, removing one, and noticing a bound file that changed.

use std::collections::BTreeSet;

use anyhow::{bail, Context};

use super::{files, tars, DockerSandbox, StagingError};
use crate::sandbox::bind::{self, Bound};
use crate::sandbox::image;
use crate::workspace::{CopyReason, Manifest, StagedInput, StagingMethod};

impl DockerSandbox {
    /// The bind-mounted files as the container sees them must be the host's files.
    pub(super) async fn check_bound(&self, binds: &[Bound]) -> anyhow::Result<()> {
        if binds.is_empty() {
            return Ok(());
        }
        let mut cmd = vec!["stat", "-L", "-c", "%s %Y %i", "--"];
        cmd.extend(binds.iter().map(|b| b.target.as_str()));
        let (_, out, err) = self.exec_output(image::USER, cmd, 64 << 10).await?;
        let out = String::from_utf8_lossy(&out);
        let with_inode = self.config.isolation != crate::sandbox::Isolation::Gvisor;
        if !bind::same_files(binds, &out, with_inode) {
            let err = String::from_utf8_lossy(&err);
            return Err(StagingError::OtherFiles(format!("{} {}", out.trim(), err.trim())).into());
        }
        Ok(())
    }

    pub(super) async fn add_copies(&self, manifest: &Manifest) -> anyhow::Result<()> {
        // A running container cannot get new mounts: added files are copied.
        self.upload(tars::workspace_tar(manifest, false, Vec::new()))
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

    pub(super) async fn changed_bound(&self) -> Vec<String> {
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

    pub(super) async fn remove_one(&self, name: &str) -> anyhow::Result<()> {
        files::check_rel(name)?;
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
}
