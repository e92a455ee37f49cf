//! Run history on disk: one folder per run under the data directory.
//!
//! ```text
//! <root>/<run id>/run.json          metadata, rewritten atomically (see `atomic`)
//! <root>/<run id>/transcript.jsonl  one line per conversation item, appended and synced
//! <root>/<run id>/transcript.jsonl.torn  cut-off last lines set aside (see `transcript`)
//! <root>/<run id>/outputs/          what the agent wrote to output/
//! <root>/<run id>/workspace.tar     the whole workspace after the latest ask
//! <root>/<run id>/session.json      the session's settings (tools, limits, sandbox)
//! <root>/<run id>/figures/          figures that cells displayed
//! <root>/<run id>/lock              held by the one process that writes the session
//! ```
//! A run folder holds one session: a conversation of one or more asks. A new session
//! always gets a new folder; nothing here writes into another session's folder except
//! to mark a session whose process died in the middle of an ask as interrupted.

mod archive;
mod atomic;
pub mod call_modes;
pub mod lock;
mod render;
mod transcript;

pub use archive::{check_archive, ArchiveCheck, ArchiveIndex};
pub use atomic::{sync_dir, write_atomic, AtomicFile};
pub use render::render_transcript;
pub use transcript::torn_path;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::model::{Item, Usage};
use crate::protocol::RunStatus;
use crate::workspace::{CollectedFile, CopyReason, Refused, StagingMethod};

pub const META: &str = "run.json";
pub const TRANSCRIPT: &str = "transcript.jsonl";
pub const OUTPUTS: &str = "outputs";
pub const ARCHIVE: &str = "workspace.tar";
pub const SETTINGS: &str = "session.json";
pub const FIGURES: &str = "figures";

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunMeta {
    pub id: String,
    pub created: String,
    #[serde(default)]
    pub finished: Option<String>,
    /// The first ask's prompt.
    pub prompt: String,
    /// A short name for the history list: the first request, or what the user chose.
    #[serde(default)]
    pub title: String,
    pub inputs: Vec<String>,
    /// The files staged as `input/NAME`, with where they came from.
    #[serde(default)]
    pub files: Vec<StagedFile>,
    /// Every ask of the session, oldest first.
    #[serde(default)]
    pub asks: Vec<AskMeta>,
    pub model: String,
    pub image: String,
    pub network: bool,
    /// The isolation runtime the sandbox last ran under (`runc`, `gvisor`), as the
    /// engine resolved the session's choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
    pub max_turns: u32,
    /// None while the run is in progress.
    #[serde(default)]
    pub status: Option<RunStatus>,
    #[serde(default)]
    pub turns: u32,
    #[serde(default)]
    pub usage: Usage,
    /// Estimated cost in US dollars, when the model's prices are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default)]
    pub outputs: Vec<CollectedFile>,
    #[serde(default)]
    pub refused: Vec<Refused>,
    /// For each file in `output/`, the call that created or last changed it.
    #[serde(default)]
    pub provenance: std::collections::BTreeMap<String, Provenance>,
    /// host/pid/start-time of the process running it.
    #[serde(default)]
    pub owner: String,
    /// The session this one re-ran on new input files (`sandalyst rerun`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_of: Option<String>,
}

/// An input file of a session.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StagedFile {
    /// Relative to `input/`.
    pub name: String,
    pub bytes: u64,
    /// The original on the user's disk (never written).
    pub source: String,
    /// SHA-256 of the content when it was added (filled in the background).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sha256: String,
    /// How the latest sandbox got it: `bind_mount` (the host file itself, read-only)
    /// or `copy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staged_by: Option<StagingMethod>,
    /// Why it was copied, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_reason: Option<CopyReason>,
    /// The host file changed while a sandbox showed it through a bind mount, so the
    /// code may have read other bytes than first recorded; `bytes` and `sha256` were
    /// taken again after the change was seen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub changed_on_host: bool,
}

/// Which call made an output file, with what code, from which inputs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub ask: String,
    pub call_id: String,
    /// `python` or `shell`.
    pub tool: String,
    pub code: String,
    pub duration_ms: u64,
    pub bytes: u64,
    pub at: String,
    /// The inputs present then: (name under `input/`, SHA-256).
    pub inputs: Vec<(String, String)>,
}

/// One ask of a session.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AskMeta {
    pub id: String,
    pub prompt: String,
    pub model: String,
    pub created: String,
    #[serde(default)]
    pub finished: Option<String>,
    /// None while the ask runs.
    #[serde(default)]
    pub status: Option<RunStatus>,
    #[serde(default)]
    pub turns: u32,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// How each call that went through approval was decided (none in `auto` mode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<crate::approval::Record>,
    /// How the model's calls travelled at the end of the ask (Chat Completions), so a
    /// later ask of the session goes on in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_mode: Option<CallModeRecord>,
}

/// A call mode and why it was chosen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallModeRecord {
    pub mode: crate::conversation::CallMode,
    pub reason: String,
}

/// One line of `transcript.jsonl`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    pub at: String,
    /// The ask the item belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<String>,
    pub item: Item,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

pub struct Store {
    root: PathBuf,
}

/// The default place for run history: the user's data directory.
pub fn default_root() -> anyhow::Result<PathBuf> {
    let base =
        dirs::data_dir().context("cannot find the user's data directory; pass --data-dir")?;
    Ok(base.join("sandalyst").join("runs"))
}

impl Store {
    pub fn open(root: PathBuf) -> anyhow::Result<Store> {
        std::fs::create_dir_all(&root)
            .with_context(|| format!("cannot create the run history folder {}", root.display()))?;
        Ok(Store { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Create a fresh folder for a new run and write its metadata.
    pub fn create_run(&self, mut meta: RunMeta) -> anyhow::Result<RunDir> {
        for _ in 0..10 {
            let id = new_id();
            let path = self.root.join(&id);
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    meta.id = id;
                    meta.owner = crate::owner::owner_id().to_string();
                    let run = RunDir::new(path, meta);
                    run.save()?;
                    return Ok(run);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => bail!("cannot create a run folder in {}: {e}", self.root.display()),
            }
        }
        bail!("cannot find a free run id in {}", self.root.display())
    }

    /// Delete a run folder and everything in it.
    pub fn delete(&self, id: &str) -> anyhow::Result<()> {
        let run = self.open_run(id)?;
        std::fs::remove_dir_all(&run.path)
            .with_context(|| format!("cannot delete {}", run.path.display()))
    }

    pub fn open_run(&self, id: &str) -> anyhow::Result<RunDir> {
        if !is_run_id(id) {
            bail!(
                "no readable run with id {} in {}: run ids look like 20261201-013714-55a1",
                crate::terminal::escape(id),
                self.root.display()
            );
        }
        let path = self.root.join(id);
        let meta = checked_meta(&path, id)
            .with_context(|| format!("no readable run with id {id} in {}", self.root.display()))?;
        Ok(RunDir::new(path, meta))
    }

    /// All runs, oldest first. Unreadable folders are left out (see [`Store::scan`]).
    pub fn list(&self) -> anyhow::Result<Vec<RunMeta>> {
        Ok(self.scan()?.runs)
    }

    /// All runs, oldest first, and the folders that look like runs but cannot be read,
    /// each with the reason, so a listing can name them instead of hiding them.
    pub fn scan(&self) -> anyhow::Result<Listing> {
        let mut listing = Listing::default();
        for entry in std::fs::read_dir(&self.root)?.filter_map(|e| e.ok()) {
            let folder = entry.file_name().to_string_lossy().into_owned();
            if folder.starts_with('.') || !entry.path().is_dir() {
                continue;
            }
            match checked_meta(&entry.path(), &folder) {
                Ok(meta) => listing.runs.push(meta),
                // A folder that is neither named nor marked as a run is someone else's.
                Err(_) if !is_run_id(&folder) && !entry.path().join(META).exists() => {}
                Err(e) => listing.unreadable.push(Unreadable {
                    folder,
                    reason: format!("{e:#}"),
                }),
            }
        }
        listing.runs.sort_by(|a, b| a.id.cmp(&b.id));
        listing.unreadable.sort_by(|a, b| a.folder.cmp(&b.folder));
        Ok(listing)
    }

    /// Mark runs left "in progress" by a process that no longer exists as interrupted.
    /// A session's lock is held by whoever runs an ask in it, so a run whose lock is
    /// free was left by a process that is gone (see [`lock`]).
    pub fn mark_interrupted(&self) -> anyhow::Result<Vec<String>> {
        let mut marked = Vec::new();
        for meta in self.list()? {
            if !meta.in_progress() {
                continue;
            }
            let path = self.root.join(&meta.id);
            let Ok(_held) = lock::SessionLock::try_acquire(&path) else {
                continue; // a live owner (or an unreadable folder): not ours to change
            };
            // Read again under the lock: the owner may have ended the ask meanwhile.
            let mut run = RunDir::read(path)?;
            if run.meta.mark_interrupted() {
                run.save()?;
                marked.push(meta.id);
            }
        }
        Ok(marked)
    }
}

fn new_id() -> String {
    let now = chrono::Utc::now();
    format!(
        "{}-{:04x}",
        now.format("%Y%m%d-%H%M%S"),
        rand::random::<u16>()
    )
}

/// What [`Store::scan`] found.
#[derive(Clone, Debug, Default)]
pub struct Listing {
    pub runs: Vec<RunMeta>,
    pub unreadable: Vec<Unreadable>,
}

/// A folder of the history that is not a readable run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unreadable {
    /// The folder's name (raw: escape it before showing it).
    pub folder: String,
    /// Why, in one sentence.
    pub reason: String,
}

/// An id in the store's own format (`YYYYMMDD-HHMMSS-xxxx`, see `new_id`): the only
/// ids that are ever joined onto a path.
pub fn is_run_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 15 => c == b'-',
            0..=14 => c.is_ascii_digit(),
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
        })
}

fn read_meta(dir: &Path) -> anyhow::Result<RunMeta> {
    let text = std::fs::read_to_string(dir.join(META))
        .with_context(|| format!("its {META} cannot be read"))?;
    serde_json::from_str(&text).with_context(|| format!("its {META} is not valid"))
}

/// The metadata of folder `dir` named `folder`, refused unless the id it holds is a
/// run id and the folder's own name: ids from disk end up in paths and names.
fn checked_meta(dir: &Path, folder: &str) -> anyhow::Result<RunMeta> {
    let meta = read_meta(dir)?;
    if meta.id != folder {
        bail!(
            "its {META} names the id {:?}, not the folder's name {folder:?}",
            meta.id
        );
    }
    if !is_run_id(folder) {
        bail!("its name is not a run id (YYYYMMDD-HHMMSS-xxxx)");
    }
    Ok(meta)
}

pub struct RunDir {
    pub path: PathBuf,
    pub meta: RunMeta,
    /// The transcript's tail was checked (and a torn line set aside) since this
    /// folder was opened or an append last failed.
    tail_checked: std::sync::atomic::AtomicBool,
}

/// A transcript as read: the entries, and the lines that could not be read.
#[derive(Debug, Default)]
pub struct Transcript {
    pub entries: Vec<Entry>,
    /// 1-based numbers of lines that are not entries (kept in the file, not shown).
    pub unreadable: Vec<usize>,
}

/// The first line of a request, shortened to about 60 characters at a word.
pub fn title_from(prompt: &str) -> String {
    let line = prompt
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() <= 60 {
        return line.to_string();
    }
    let cut: String = line.chars().take(60).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(a, _)| a);
    format!("{cut}…")
}

impl RunMeta {
    /// The session's name as every front end shows it: its title, else the first line
    /// of its first request (shortened), else "New session".
    pub fn display_title(&self) -> String {
        if !self.title.is_empty() {
            self.title.clone()
        } else if !self.prompt.is_empty() {
            title_from(&self.prompt)
        } else {
            "New session".into()
        }
    }

    /// An ask was started and has not ended (as far as this file says).
    pub fn in_progress(&self) -> bool {
        // A session with no ask yet was not interrupted: nothing was running.
        let idle = self.asks.is_empty() && self.prompt.is_empty();
        (self.status.is_none() && !idle) || self.asks.iter().any(|a| a.status.is_none())
    }

    /// Mark what is in progress as interrupted; true when anything changed. Only for
    /// a caller holding the session's lock, which proves the last writer is gone.
    pub fn mark_interrupted(&mut self) -> bool {
        if !self.in_progress() {
            return false;
        }
        self.status = Some(RunStatus::Interrupted);
        for ask in self.asks.iter_mut().filter(|a| a.status.is_none()) {
            ask.status = Some(RunStatus::Interrupted);
        }
        true
    }
}

impl RunDir {
    pub fn new(path: PathBuf, meta: RunMeta) -> RunDir {
        RunDir {
            path,
            meta,
            tail_checked: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The run in folder `path`, read from disk.
    pub fn read(path: PathBuf) -> anyhow::Result<RunDir> {
        let meta = read_meta(&path)
            .with_context(|| format!("cannot read the session in {}", path.display()))?;
        Ok(RunDir::new(path, meta))
    }

    pub fn outputs_dir(&self) -> PathBuf {
        self.path.join(OUTPUTS)
    }

    /// Rewrite the metadata atomically, so a crash leaves the old or the new file.
    pub fn save(&self) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(&self.meta)?;
        write_atomic(&self.path.join(META), text.as_bytes())
            .with_context(|| format!("cannot save run metadata in {}", self.path.display()))
    }

    /// Append one item to the transcript (synced to disk a moment later, see
    /// [`sync_later`]).
    pub fn append(&self, item: &Item, usage: Option<&Usage>) -> anyhow::Result<()> {
        self.append_in(None, item, usage)
    }

    /// Append one item of ask `ask` to the transcript (synced a moment later).
    pub fn append_in(
        &self,
        ask: Option<&str>,
        item: &Item,
        usage: Option<&Usage>,
    ) -> anyhow::Result<()> {
        let entry = Entry {
            at: chrono::Utc::now().to_rfc3339(),
            ask: ask.map(str::to_string),
            item: item.clone(),
            usage: usage.copied(),
        };
        let mut line = serde_json::to_string(&entry)?;
        line.push('\n');
        let path = self.path.join(TRANSCRIPT);
        let checked = &self.tail_checked;
        let write = || -> std::io::Result<()> {
            if !checked.load(std::sync::atomic::Ordering::SeqCst) {
                self.repair_transcript()?;
            }
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)?;
            let before = f.metadata()?.len();
            if let Err(e) = f.write_all(line.as_bytes()) {
                // Part of the line may be on disk (a full disk): cut it off again, or
                // have the next append do it.
                if f.set_len(before).is_err() {
                    checked.store(false, std::sync::atomic::Ordering::SeqCst);
                }
                return Err(e);
            }
            Ok(())
        };
        write().with_context(|| {
            format!("cannot append to the transcript in {}", self.path.display())
        })?;
        sync_later(path);
        Ok(())
    }

    /// Set a torn last line of the transcript aside (into `transcript.jsonl.torn`)
    /// so the next append starts on a line of its own. Returns the bytes moved.
    /// Appends do this once by themselves; a caller may do it first to report it.
    pub fn repair_transcript(&self) -> std::io::Result<u64> {
        let moved = transcript::repair_tail(&self.path.join(TRANSCRIPT))?;
        self.tail_checked
            .store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(moved)
    }

    /// The transcript's entries; lines that cannot be read are left out (see
    /// [`RunDir::read_transcript`] for which).
    pub fn transcript(&self) -> anyhow::Result<Vec<Entry>> {
        Ok(self.read_transcript()?.entries)
    }

    /// The transcript's entries and the numbers of the lines that are not entries.
    pub fn read_transcript(&self) -> anyhow::Result<Transcript> {
        let text = match std::fs::read(self.path.join(TRANSCRIPT)) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let mut out = Transcript::default();
        for (i, line) in text.split(|b| *b == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            match serde_json::from_slice(line) {
                Ok(entry) => out.entries.push(entry),
                Err(_) => out.unreadable.push(i + 1),
            }
        }
        Ok(out)
    }

    /// Copy the run (metadata, transcript, outputs, archive) into `dest/<id>`, the id
    /// being the folder's own name (never one read from a file).
    pub fn copy_to(&self, dest: &Path) -> anyhow::Result<PathBuf> {
        let name = self.path.file_name().context("a run folder has a name")?;
        let target = dest.join(name);
        if target.exists() {
            bail!("{} already exists; choose another folder", target.display());
        }
        copy_dir(&self.path, &target)
            .with_context(|| format!("cannot export to {}", target.display()))?;
        Ok(target)
    }
}

/// Copy a folder tree of regular files; anything else is skipped.
pub fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let ty = entry.file_type()?;
        let target = to.join(entry.file_name());
        if ty.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if ty.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Make a transcript durable from one background thread, a moment after its append, so
/// the agent loop never waits for the disk (a sync per item was 6 of the loop's 8 ms
/// per turn). A killed app loses nothing (the page cache keeps what was written); a
/// power cut can lose the last moment's items, which the reader skips if cut short.
fn sync_later(path: PathBuf) {
    use std::sync::mpsc::{channel, Sender};
    static SYNCER: std::sync::OnceLock<Option<Sender<PathBuf>>> = std::sync::OnceLock::new();
    let syncer = SYNCER.get_or_init(|| {
        let (tx, rx) = channel::<PathBuf>();
        let worker = move || {
            while let Ok(first) = rx.recv() {
                // Appends that came meanwhile share one sync per file.
                let mut paths = std::collections::BTreeSet::from([first]);
                paths.extend(rx.try_iter());
                for p in paths {
                    sync_now(&p);
                }
            }
        };
        std::thread::Builder::new()
            .name("transcript-sync".into())
            .spawn(worker)
            .ok()
            .map(|_| tx)
    });
    match syncer {
        Some(tx) if tx.send(path.clone()).is_ok() => {}
        _ => sync_now(&path),
    }
}

fn sync_now(path: &Path) {
    // Opened for writing: Windows flushes only a file it may write.
    if let Ok(f) = std::fs::OpenOptions::new().append(true).open(path) {
        let _ = f.sync_data();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_short_first_lines() {
        assert_eq!(title_from("\n  Find anomalies\nmore"), "Find anomalies");
        let long = "look for abnormal energy-use events, ignore normal operating noise, explain the method";
        let t = title_from(long);
        assert!(t.ends_with('…') && t.chars().count() <= 61, "{t}");
        let mut m = RunMeta::default();
        assert_eq!(m.display_title(), "New session");
        m.prompt = long.into();
        assert_eq!(m.display_title(), t);
        m.title = "Mine".into();
        assert_eq!(m.display_title(), "Mine");
    }

    #[test]
    fn runs_are_created_listed_and_a_dead_owner_is_marked_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_path_buf()).unwrap();
        let run = store
            .create_run(RunMeta {
                prompt: "p".into(),
                ..Default::default()
            })
            .unwrap();
        run.append(
            &Item::User {
                text: "hello".into(),
            },
            None,
        )
        .unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(run.path.join(TRANSCRIPT))
            .unwrap()
            .write_all(b"{\"at\": \"cut sh")
            .unwrap();
        assert_eq!(run.transcript().unwrap().len(), 1);

        let idle = store.create_run(RunMeta::default()).unwrap();
        let mut other = store.create_run(RunMeta::default()).unwrap();
        other.meta.prompt = "q".into();
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        other.meta.owner = format!("{}/999999999/1", host.trim());
        other.save().unwrap();
        let mut idle = idle;
        idle.meta.owner = other.meta.owner.clone();
        idle.save().unwrap();
        assert_eq!(store.list().unwrap().len(), 3);
        // `run` is mid-ask in a live owner, which holds its lock; `other`'s is free.
        let held = lock::SessionLock::try_acquire(&run.path).unwrap();
        assert_eq!(
            store.mark_interrupted().unwrap(),
            vec![other.meta.id.clone()]
        );
        drop(held);
        assert_eq!(
            store.open_run(&other.meta.id).unwrap().meta.status,
            Some(RunStatus::Interrupted)
        );
        assert_eq!(store.open_run(&run.meta.id).unwrap().meta.status, None);
        // A session with no ask yet was not running anything.
        assert_eq!(store.open_run(&idle.meta.id).unwrap().meta.status, None);
        assert!(store.open_run("../etc").is_err());
    }

    #[test]
    fn ids_from_disk_must_be_the_folders_own_and_unreadable_runs_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_path_buf()).unwrap();
        let good = store.create_run(RunMeta::default()).unwrap();
        let folder = |name: &str, meta: &str| {
            std::fs::create_dir(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join(META), meta).unwrap();
        };
        let meta = |id: &str| {
            serde_json::to_string(&RunMeta {
                id: id.into(),
                ..Default::default()
            })
            .unwrap()
        };
        folder("20260101-000000-0001", &meta("/tmp/elsewhere"));
        folder("20260101-000000-0002", &meta("../../x"));
        folder("20260101-000000-0003", "{not json");
        // Named as the folder, but not a run id: refused too.
        folder("evil", &meta("evil"));
        std::fs::create_dir(dir.path().join("20260101-000000-0004")).unwrap();
        // Not a run: neither named nor marked as one.
        std::fs::create_dir(dir.path().join("cache")).unwrap();
        std::fs::write(dir.path().join("desktop-settings.json"), "{}").unwrap();

        let listing = store.scan().unwrap();
        let ids: Vec<&str> = listing.runs.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, vec![good.meta.id.as_str()]);
        let bad: Vec<(&str, &str)> = listing
            .unreadable
            .iter()
            .map(|u| (u.folder.as_str(), u.reason.as_str()))
            .collect();
        assert_eq!(bad.len(), 5, "{bad:?}");
        assert!(
            bad[0].1.contains("names the id \"/tmp/elsewhere\""),
            "{bad:?}"
        );
        assert!(bad[1].1.contains("names the id \"../../x\""), "{bad:?}");
        assert!(bad[2].1.starts_with("its run.json is not valid"), "{bad:?}");
        assert!(
            bad[3].1.starts_with("its run.json cannot be read"),
            "{bad:?}"
        );
        assert_eq!(
            bad[4],
            ("evil", "its name is not a run id (YYYYMMDD-HHMMSS-xxxx)")
        );
        assert_eq!(store.list().unwrap().len(), 1);
        for id in [
            "20260101-000000-0001",
            "20260101-000000-0003",
            "evil",
            "/tmp/x",
            "",
        ] {
            assert!(store.open_run(id).is_err(), "{id}");
        }
        assert!(is_run_id(&good.meta.id) && !is_run_id("20260101-000000-00g1"));
        // Exported under the folder's own name.
        let out = tempfile::tempdir().unwrap();
        let exported = store
            .open_run(&good.meta.id)
            .unwrap()
            .copy_to(out.path())
            .unwrap();
        assert_eq!(exported, out.path().join(&good.meta.id));
    }

    #[test]
    fn an_append_after_a_torn_line_starts_a_line_of_its_own_and_keeps_the_torn_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_path_buf()).unwrap();
        let run = store.create_run(RunMeta::default()).unwrap();
        let user = |t: &str| Item::User { text: t.into() };
        run.append(&user("first"), None).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(run.path.join(TRANSCRIPT))
            .unwrap()
            .write_all(b"{\"at\": \"cut sh")
            .unwrap();
        let read = run.read_transcript().unwrap();
        assert_eq!((read.entries.len(), read.unreadable), (1, vec![2]));
        // A folder opened again (a new process) checks the tail before its first append.
        let run = store.open_run(&run.meta.id).unwrap();
        run.append(&user("second"), None).unwrap();
        run.append(&user("third"), None).unwrap();
        let read = run.read_transcript().unwrap();
        assert!(read.unreadable.is_empty(), "{:?}", read.unreadable);
        let texts: Vec<String> = read
            .entries
            .iter()
            .map(|e| match &e.item {
                Item::User { text } => text.clone(),
                _ => String::new(),
            })
            .collect();
        assert_eq!(texts, ["first", "second", "third"]);
        assert_eq!(
            std::fs::read(torn_path(&run.path.join(TRANSCRIPT))).unwrap(),
            b"{\"at\": \"cut sh\n"
        );
    }
}
