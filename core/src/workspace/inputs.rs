//! What may be staged, decided before anything is opened. An input is looked at with
//! `lstat`/`stat` only: regular files and folders are staged; named pipes, sockets and
//! devices are refused (opening a FIFO blocks until a writer comes, reading
//! `/dev/zero` never ends). Inside an input folder a symlink is followed when it
//! points at a readable regular file or folder inside that folder; one that leaves
//! it is left out and said (a folder holding a link to `~/.ssh/id_ed25519` must not
//! hand the key to the model, as Docker's build context, git and rsync do not),
//! unless [`FollowLinks::Outside`] is chosen. A link given directly is the user's own
//! choice and followed. Files are then opened with [`open_input`], which cannot block
//! and checks that what it opened is still a regular file, so a path swapped for a
//! FIFO between the check and the read fails instead of hanging.

use std::fs::{File, FileType, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a path is, as `lstat` or `stat` tells it (typed in `protocol`, where the notes
/// that name it live).
pub use crate::protocol::FileKind as Kind;

impl Kind {
    pub fn of(ty: FileType) -> Kind {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if ty.is_fifo() {
                return Kind::Fifo;
            }
            if ty.is_socket() {
                return Kind::Socket;
            }
            if ty.is_char_device() {
                return Kind::CharDevice;
            }
            if ty.is_block_device() {
                return Kind::BlockDevice;
            }
        }
        if ty.is_symlink() {
            Kind::Symlink
        } else if ty.is_dir() {
            Kind::Dir
        } else if ty.is_file() {
            Kind::File
        } else {
            Kind::Other
        }
    }

    fn stageable(self) -> bool {
        matches!(self, Kind::File | Kind::Dir)
    }
}

pub use crate::protocol::FollowLinks;

pub use crate::protocol::input_notes::HOW_TO_FOLLOW;
pub use crate::protocol::{EntryProblem, InputNote, LinkProblem};

/// Why a path cannot be staged; shown after the path ("input X is ...").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// A FIFO, socket or device (or a link to one: `via` is the link's target).
    Special { kind: Kind, via: Option<PathBuf> },
    /// A link whose target does not exist.
    Dangling { target: PathBuf },
    /// A link that resolves to itself (directly or through other links or folders).
    Loop { target: PathBuf },
    /// A link that leaves the folder being staged (see [`FollowLinks`]).
    Outside { target: PathBuf },
    /// A link to a hidden entry of the folder (hidden entries are not staged).
    IntoHidden { target: PathBuf },
    /// Reading it (or its folder) failed: permission denied, an I/O error.
    Unreadable { reason: String },
    /// It was a regular file when checked and something else when opened.
    Changed { kind: Kind },
}

impl Why {
    /// The note that says `input/<dest>` was left out for this reason: a link's own
    /// problem (with its target), or the entry's.
    pub fn note(self, dest: String) -> InputNote {
        let link = |target, why| Err((target, why));
        let entry = |why| Ok(why);
        let split = match self {
            Why::Special {
                kind,
                via: Some(target),
            } => link(target, LinkProblem::Special { target_is: kind }),
            Why::Dangling { target } => link(target, LinkProblem::Dangling),
            Why::Loop { target } => link(target, LinkProblem::Loop),
            Why::Outside { target } => link(target, LinkProblem::Outside),
            Why::IntoHidden { target } => link(target, LinkProblem::HiddenTarget),
            Why::Special { kind, via: None } => entry(EntryProblem::Special { is: kind }),
            Why::Unreadable { reason } => entry(EntryProblem::Unreadable { reason }),
            Why::Changed { kind } => entry(EntryProblem::Changed { is: kind }),
        };
        match split {
            Ok(why) => InputNote::EntryLeftOut { dest, why },
            Err((target, why)) => InputNote::link_left_out(dest, target, why),
        }
    }
}

impl std::fmt::Display for Why {
    /// As the note says it, after the entry's name: "is a named pipe (FIFO); ...".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.clone().note(String::new()) {
            InputNote::LinkLeftOut { target, why, .. } => f.write_str(&why.says(&target)),
            InputNote::EntryLeftOut { why, .. } => why.fmt(f),
            other => unreachable!("a reason's note is a left-out entry: {other:?}"),
        }
    }
}

/// A path refused as an input, typed (the session reports it as `bad_input`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Refusal {
    pub path: PathBuf,
    pub why: Why,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.why {
            Why::Unreadable { reason } => {
                write!(f, "cannot read input {} ({reason})", self.path.display())
            }
            why => write!(f, "input {} {why}", self.path.display()),
        }
    }
}

impl Refusal {
    fn new(path: &Path, why: Why) -> Refusal {
        Refusal {
            path: path.to_path_buf(),
            why,
        }
    }

    fn io(path: &Path, e: &std::io::Error) -> Refusal {
        Refusal::new(
            path,
            Why::Unreadable {
                reason: io_reason(e),
            },
        )
    }
}

/// A top-level input: what it is, with links followed (a file or folder given by a
/// link is staged under the target's name, as before). Anything but a regular file
/// or folder is refused.
pub fn classify_top(path: &Path) -> Result<(Kind, Metadata), Refusal> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Refusal::new(
            path,
            Why::Unreadable {
                reason: "no such file or folder".into(),
            },
        ),
        _ if is_loop(&e) => Refusal::new(
            path,
            Why::Loop {
                target: std::fs::read_link(path).unwrap_or_else(|_| path.to_path_buf()),
            },
        ),
        _ => Refusal::io(path, &e),
    })?;
    let kind = Kind::of(meta.file_type());
    if !kind.stageable() {
        return Err(Refusal::new(path, Why::Special { kind, via: None }));
    }
    Ok((kind, meta))
}

/// An entry of an input folder, as found by `read_dir`.
#[derive(Debug, PartialEq, Eq)]
pub enum Entry {
    File,
    Dir,
    /// A link to a readable file or folder that may be followed: `target` is canonical.
    Link {
        target: PathBuf,
        kind: Kind,
    },
}

/// Classify `path`, an entry of the last folder of `walking` (the canonical folders
/// being walked, the input folder given first, links followed included), whose own
/// type `lstat` gave as `ty`; `follow` says which links may be followed.
pub fn classify_entry(
    path: &Path,
    ty: FileType,
    walking: &[PathBuf],
    follow: FollowLinks,
) -> Result<Entry, Why> {
    match Kind::of(ty) {
        Kind::File => return Ok(Entry::File),
        Kind::Dir => return Ok(Entry::Dir),
        Kind::Symlink => {}
        kind => return Err(Why::Special { kind, via: None }),
    }
    let shown = std::fs::read_link(path).unwrap_or_else(|_| path.to_path_buf());
    // The link as written, resolved against its folder, for the messages.
    let written = match path.parent() {
        Some(dir) if shown.is_relative() => dir.join(&shown),
        _ => shown.clone(),
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Why::Dangling { target: written })
        }
        Err(e) if is_loop(&e) => return Err(Why::Loop { target: written }),
        Err(e) => {
            return Err(Why::Unreadable {
                reason: io_reason(&e),
            })
        }
    };
    let target = std::fs::canonicalize(path).map_err(|e| Why::Unreadable {
        reason: io_reason(&e),
    })?;
    let kind = Kind::of(meta.file_type());
    if !kind.stageable() {
        return Err(Why::Special {
            kind,
            via: Some(target),
        });
    }
    // A folder that holds the link, or one being walked (links between two folders
    // that lead to each other), would be walked forever.
    if kind == Kind::Dir && walking.iter().any(|w| w.starts_with(&target)) {
        return Err(Why::Loop { target });
    }
    match walking
        .first()
        .and_then(|root| target.strip_prefix(root).ok())
    {
        // Checked before the target is opened: what is outside is not read at all.
        None if follow == FollowLinks::Inside => return Err(Why::Outside { target }),
        None => {}
        Some(rel) => {
            let hidden = rel
                .components()
                .any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
            if hidden {
                return Err(Why::IntoHidden { target });
            }
        }
    }
    // The user must be able to read what the link leads to: a folder is listed, a
    // file opened (without blocking, and checked again) and closed.
    match kind {
        Kind::Dir => {
            std::fs::read_dir(&target).map_err(|e| Why::Unreadable {
                reason: io_reason(&e),
            })?;
        }
        _ => {
            open_input(&target).map_err(|r| r.why)?;
        }
    }
    Ok(Entry::Link { target, kind })
}

/// Open an input for reading without ever blocking: `O_NONBLOCK` (a FIFO swapped in
/// since the check opens at once instead of waiting for a writer), `O_NOCTTY`, then
/// the opened file itself must be a regular file. Returns it with its metadata.
pub fn open_input(path: &Path) -> Result<(File, Metadata), Refusal> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Refusal::new(
            path,
            Why::Unreadable {
                reason: "no such file".into(),
            },
        ),
        _ => Refusal::io(path, &e),
    })?;
    let meta = file.metadata().map_err(|e| Refusal::io(path, &e))?;
    let kind = Kind::of(meta.file_type());
    if kind != Kind::File {
        return Err(Refusal::new(path, Why::Changed { kind }));
    }
    #[cfg(unix)]
    clear_nonblock(&file);
    Ok((file, meta))
}

/// Regular files ignore `O_NONBLOCK` on Linux, but not every file system promises it:
/// reads go back to blocking once the file is known to be regular.
#[cfg(unix)]
fn clear_nonblock(file: &File) {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function borrows, with integer arguments only.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
}

/// The SHA-256 of a regular input file (opened without blocking), in hex, unless
/// `stop` says to stop first (then an `Interrupted` error).
pub fn sha256_of(path: &Path, stop: &dyn Fn() -> bool) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    let (file, _) = open_input(path).map_err(std::io::Error::other)?;
    let mut hasher = Sha256::new();
    read_chunks(file, stop, |chunk| hasher.update(chunk))?;
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Read `file` to its end in chunks, giving each to `sink`; stops with `Interrupted`
/// as soon as `stop()` says so (the session closing), so a large input being hashed
/// never holds up the process's exit.
pub fn read_chunks(
    mut file: impl Read,
    stop: &dyn Fn() -> bool,
    mut sink: impl FnMut(&[u8]),
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    loop {
        if stop() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "stopped: the session is closing",
            ));
        }
        let n = match file.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        sink(&buf[..n]);
    }
}

fn is_loop(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// An I/O error as a short phrase: "permission denied".
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::NotFound => "no such file or folder".into(),
        _ => {
            let text = e.to_string();
            // "Permission denied (os error 13)" -> "permission denied"
            let text = text.split(" (os error").next().unwrap_or(&text);
            let mut chars = text.chars();
            match chars.next() {
                Some(c) => c.to_lowercase().chain(chars).collect(),
                None => text.to_string(),
            }
        }
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn fifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    fn entry(path: &Path, root: &Path) -> Result<Entry, Why> {
        entry_following(path, root, FollowLinks::Outside)
    }

    fn entry_following(path: &Path, root: &Path, follow: FollowLinks) -> Result<Entry, Why> {
        let ty = std::fs::symlink_metadata(path).unwrap().file_type();
        let here = path.parent().unwrap().canonicalize().unwrap();
        let mut walking = vec![root.to_path_buf()];
        if here != root {
            walking.push(here);
        }
        classify_entry(path, ty, &walking, follow)
    }

    #[test]
    fn special_files_are_named_and_refused_without_being_opened() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p");
        fifo(&p);
        // Opening this FIFO for reading would block (no writer): classify_top must not.
        let e = classify_top(&p).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "input {} is a named pipe (FIFO); only regular files and folders can be staged",
                p.display()
            )
        );
        let sock = dir.path().join("s.sock");
        let _l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        assert!(matches!(
            classify_top(&sock).unwrap_err().why,
            Why::Special {
                kind: Kind::Socket,
                via: None
            }
        ));
        assert!(matches!(
            classify_top(Path::new("/dev/zero")).unwrap_err().why,
            Why::Special {
                kind: Kind::CharDevice,
                ..
            }
        ));
        assert_eq!(classify_top(dir.path()).unwrap().0, Kind::Dir);
        let missing = classify_top(&dir.path().join("nope")).unwrap_err();
        assert!(missing.to_string().contains("no such file"), "{missing}");
    }

    #[test]
    fn open_input_never_blocks_and_checks_the_opened_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("swapped.csv");
        // As if a regular file had been swapped for a FIFO after the check.
        fifo(&p);
        let e = open_input(&p).unwrap_err();
        assert_eq!(e.why, Why::Changed { kind: Kind::Fifo });
        assert!(open_input(Path::new("/dev/zero")).is_err());
        let f = dir.path().join("ok.csv");
        std::fs::write(&f, "a,b\n").unwrap();
        let (mut file, meta) = open_input(&f).unwrap();
        assert_eq!(meta.len(), 4);
        let mut s = String::new();
        file.read_to_string(&mut s).unwrap();
        assert_eq!(s, "a,b\n");
    }

    #[test]
    fn links_in_a_folder_are_followed_or_refused_with_their_reason() {
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("x.csv");
        std::fs::write(&target, "1").unwrap();
        std::fs::create_dir(outside.path().join("sub")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let link = |name: &str, to: &Path| {
            let p = root.join(name);
            symlink(to, &p).unwrap();
            p
        };
        match entry(&link("latest.csv", &target), &root).unwrap() {
            Entry::Link { target: t, kind } => {
                assert_eq!(t, target.canonicalize().unwrap());
                assert_eq!(kind, Kind::File);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            entry(&link("d", &outside.path().join("sub")), &root).unwrap(),
            Entry::Link {
                kind: Kind::Dir,
                ..
            }
        ));
        let dangling = entry(&link("gone.csv", Path::new("/nonexistent/x.csv")), &root);
        assert_eq!(
            dangling.unwrap_err().to_string(),
            "is a link to /nonexistent/x.csv, which does not exist"
        );
        let zero = entry(&link("zero", Path::new("/dev/zero")), &root).unwrap_err();
        assert!(
            matches!(
                zero,
                Why::Special {
                    kind: Kind::CharDevice,
                    via: Some(_)
                }
            ),
            "{zero:?}"
        );
        // a -> b -> a
        let a = root.join("a");
        symlink(root.join("b"), &a).unwrap();
        symlink(&a, root.join("b")).unwrap();
        assert!(matches!(entry(&a, &root).unwrap_err(), Why::Loop { .. }));
        // A link to the folder itself, and to a folder above it, would be walked forever.
        assert!(matches!(
            entry(&link("self", Path::new(".")), &root).unwrap_err(),
            Why::Loop { .. }
        ));
        assert!(matches!(
            entry(&link("up", Path::new("..")), &root).unwrap_err(),
            Why::Loop { .. }
        ));
        std::fs::write(root.join("real.csv"), "2").unwrap();
        let alias = link("alias.csv", Path::new("real.csv"));
        for follow in [FollowLinks::Inside, FollowLinks::Outside] {
            assert_eq!(
                entry_following(&alias, &root, follow).unwrap(),
                Entry::Link {
                    target: root.join("real.csv"),
                    kind: Kind::File
                }
            );
        }
        // Outside the folder: left out unless the user allowed it.
        assert_eq!(
            entry_following(&root.join("latest.csv"), &root, FollowLinks::Inside).unwrap_err(),
            Why::Outside {
                target: target.canonicalize().unwrap()
            }
        );
        let p = root.join("pipe");
        fifo(&p);
        assert_eq!(
            entry(&p, &root).unwrap_err(),
            Why::Special {
                kind: Kind::Fifo,
                via: None
            }
        );
    }

    #[test]
    fn reading_in_chunks_stops_when_asked() {
        let data = vec![7u8; 3 << 20];
        let mut seen = 0;
        read_chunks(&data[..], &|| false, |c| seen += c.len()).unwrap();
        assert_eq!(seen, data.len());
        let calls = std::cell::Cell::new(0);
        let stop = || {
            calls.set(calls.get() + 1);
            calls.get() > 1
        };
        let e = read_chunks(&data[..], &stop, |_| {}).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::Interrupted);
    }
}
