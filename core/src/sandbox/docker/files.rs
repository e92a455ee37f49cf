//! Files in and out of the workspace through the engine's archive API: uploads of tar
//! streams, reading and writing one file, listing and collecting `output/`, and the
//! workspace archive.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context};
use bollard::query_parameters::{
    DownloadFromContainerOptionsBuilder, UploadToContainerOptionsBuilder,
};
use futures_util::StreamExt;

use super::tars::{self, CountingWriter};
use super::{engine_error, DockerSandbox};
use crate::sandbox::{image, OutputEntry};
use crate::store::AtomicFile;
use crate::workspace::{ChannelReader, ChannelWriter};

impl DockerSandbox {
    /// Unpack a tar stream into `/workspace` (the archive API writes only to volumes).
    pub(super) async fn upload(
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

    /// `list_outputs` without the kernel: one `find` in the container.
    pub(super) async fn list_outputs_by_exec(&self) -> anyhow::Result<Vec<OutputEntry>> {
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
    pub(super) async fn write_archive(&self, dest: &Path, max_bytes: u64) -> anyhow::Result<u64> {
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
                tars::resolve_links(reader, out, &links)?
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

    /// A folder or file of the container as the engine's tar stream, for a blocking
    /// reader; the download stops when the reader is dropped.
    pub(super) fn download(&self, path: &str) -> Download {
        let opts = DownloadFromContainerOptionsBuilder::new()
            .path(path)
            .build();
        let stream = self
            .docker
            .download_from_container(&self.container, Some(opts));
        let (reader, pump) = pump_to_reader(stream);
        Download { reader, pump }
    }

    pub(super) async fn list_output_files(&self) -> anyhow::Result<Vec<OutputEntry>> {
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

    pub(super) async fn read_one(&self, rel: &str, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
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

    pub(super) async fn write_one(&self, rel: &str, bytes: &[u8]) -> anyhow::Result<()> {
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

    pub(super) async fn restore_from(&self, archive: &Path) -> anyhow::Result<()> {
        let file = std::fs::File::open(archive)
            .with_context(|| format!("cannot read the workspace archive {}", archive.display()))?;
        let (writer, stream) = ChannelWriter::pair(8);
        let fail = writer.failer();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = tars::rewrite_archive(file, writer) {
                fail(e);
            }
        });
        self.upload(stream)
            .await
            .with_context(|| format!("restoring the workspace from {}", archive.display()))
    }

    pub(super) async fn upload_output_files(
        &self,
        src: &Path,
        files: &[String],
    ) -> anyhow::Result<()> {
        let (writer, stream) = ChannelWriter::pair(8);
        let fail = writer.failer();
        let (src, files) = (src.to_path_buf(), files.to_vec());
        tokio::task::spawn_blocking(move || {
            if let Err(e) = tars::write_outputs_tar(writer, &src, &files) {
                fail(e);
            }
        });
        self.upload(stream)
            .await
            .context("copying the session's outputs into output/")
    }
}

/// Feeds an engine download into a blocking reader (for tar parsing off the runtime);
/// abort the task once the reader is done.
pub(super) fn pump_to_reader(
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

/// A path relative to `/workspace`: not empty, not absolute, no `..`, no NUL.
pub(super) fn check_rel(rel: &str) -> anyhow::Result<()> {
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
pub(super) fn parse_find(out: &[u8]) -> Vec<OutputEntry> {
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

/// An engine download read as a blocking reader; dropping it ends the download.
pub(super) struct Download {
    reader: ChannelReader,
    pump: tokio::task::JoinHandle<()>,
}

impl std::io::Read for Download {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.reader.read(buf)
    }
}

impl Drop for Download {
    fn drop(&mut self) {
        self.pump.abort();
    }
}
