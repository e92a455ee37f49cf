//! The tar streams the Docker backend writes: the staged inputs, the session's
//! outputs put back, a workspace archive with bound inputs resolved, and an archive
//! rewritten for a restore (folders and regular files only).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use anyhow::Context;

use crate::store::AtomicFile;
use crate::workspace::{ChannelReader, ChannelWriter, InputFile, Manifest};

pub(super) const ROOT: u64 = 0;

pub(super) fn tar_header(
    kind: tar::EntryType,
    mode: u32,
    size: u64,
    owner: u64,
    mtime: u64,
) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_uid(owner);
    h.set_gid(owner);
    h.set_mtime(mtime);
    h
}

pub(super) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The manifest as a tar stream for `/workspace`, read only for the sandbox user:
/// `input/` and its folders root's 0555, files root's 0444 (the user can read them
/// but not change, remove or add any). With `output` (at start), an empty `output/`
/// owned by the user. Files are read in chunks as the stream is consumed.
pub(super) fn workspace_tar(
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

pub(super) fn write_workspace_tar(
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
pub(super) fn write_outputs_tar(
    writer: ChannelWriter,
    src: &Path,
    files: &[String],
) -> std::io::Result<()> {
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
pub(super) fn resolve_links(
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
pub(super) struct CountingWriter<W> {
    pub(super) inner: W,
    pub(super) written: u64,
    pub(super) max: u64,
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
pub(super) fn rewrite_archive(file: std::fs::File, writer: ChannelWriter) -> std::io::Result<()> {
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
