//! Earlier sessions as the command line lists and shows them (`sandalyst runs list`,
//! `runs show`): rows and text, read from the store without taking any lock.

use serde::Serialize;

use super::{blocking, App, Error, SessionId};
use crate::store::{render_transcript, Entry, RunMeta, TRANSCRIPT};

/// One line of the listing.
#[derive(Clone, Debug, Serialize)]
pub struct RunRow {
    pub id: SessionId,
    /// `finished`, `failed: ...`, `in progress`, ...
    pub status: String,
    pub asks: usize,
    pub outputs: usize,
    pub title: String,
}

/// A folder of the data folder that cannot be read, named with why.
#[derive(Clone, Debug, Serialize)]
pub struct UnreadableRow {
    pub folder: String,
    pub reason: String,
}

/// Every session newest first, then the folders that cannot be read: the one listing
/// of the sessions ([`App::list_sessions`]), as rows.
#[derive(Clone, Debug, Serialize)]
pub struct RunList {
    pub runs: Vec<RunRow>,
    pub unreadable: Vec<UnreadableRow>,
}

/// A session as it is on disk: what `runs show` prints, as data.
#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    pub folder: std::path::PathBuf,
    /// run.json: title, files, asks with their status, tokens and cost.
    pub meta: RunMeta,
    /// transcript.jsonl's entries, in order.
    pub transcript: Vec<Entry>,
    /// 1-based numbers of the transcript's lines that are not entries.
    pub unreadable_lines: Vec<usize>,
}

impl App {
    pub async fn list_runs(&self) -> Result<RunList, Error> {
        let mut list = RunList {
            runs: Vec::new(),
            unreadable: Vec::new(),
        };
        for s in self.list_sessions().await? {
            match s.unreadable {
                Some(reason) => list.unreadable.push(UnreadableRow {
                    folder: s.id.into(),
                    reason,
                }),
                None => list.runs.push(RunRow {
                    status: s
                        .status
                        .as_ref()
                        .map(|st| st.to_string())
                        .unwrap_or_else(|| "in progress".into()),
                    asks: s.asks,
                    outputs: s.outputs,
                    title: s.title,
                    id: s.id,
                }),
            }
        }
        Ok(list)
    }

    /// Session `id` as data, for a script (`sandalyst runs show --json`): its record
    /// (run.json), its transcript's entries and which lines could not be read.
    pub async fn run_record(&self, id: &SessionId) -> Result<RunRecord, Error> {
        let (run, _) = self.sessions.read(id).await?;
        blocking(move || {
            let read = run.read_transcript()?;
            Ok(RunRecord {
                folder: run.path.clone(),
                meta: run.meta.clone(),
                transcript: read.entries,
                unreadable_lines: read.unreadable,
            })
        })
        .await
    }

    /// Session `id`'s transcript as text a person reads (safe to print on a terminal),
    /// with a note on lines that could not be read and the folder it is in.
    pub async fn show_run(&self, id: &SessionId) -> Result<String, Error> {
        // The record and its settings, read without opening the session or its lock.
        let (run, config) = self.sessions.read(id).await?;
        blocking(move || {
            let read = run.read_transcript()?;
            let mut text = render_transcript(&run.meta, &read.entries);
            text.push_str(&controls(&run, &config));
            if !read.unreadable.is_empty() {
                let lines: Vec<String> = read.unreadable.iter().map(|n| n.to_string()).collect();
                text.push_str(&format!(
                    "note: line(s) {} of {TRANSCRIPT} are not readable entries and are not shown above\n",
                    lines.join(", "),
                ));
            }
            text.push_str(&format!("folder: {}\n", run.path.display()));
            Ok(text)
        })
        .await
    }
}

/// The session's controls as set (isolation, network, approvals), and how each call
/// that went through approval was decided.
fn controls(run: &crate::store::RunDir, config: &crate::session::SessionConfig) -> String {
    let mut s = format!(
        "controls: isolation {}, network {}, approvals {}\n",
        match &run.meta.isolation {
            Some(used) => format!("{used} (in force; asked {})", config.sandbox.isolation),
            None => config.sandbox.isolation.to_string(),
        },
        config.sandbox.network,
        config.approval
    );
    for a in &run.meta.asks {
        for r in &a.approvals {
            s.push_str(&format!(
                "  {} {} ({}): {}{}\n",
                crate::terminal::escape(&a.id),
                crate::terminal::escape(&r.call_id),
                crate::terminal::escape(&r.tool),
                r.resolution.as_str(),
                r.reason
                    .as_ref()
                    .map(|why| format!(", {}", crate::terminal::escape(why)))
                    .unwrap_or_default()
                    + if r.always {
                        ", and always for this session"
                    } else {
                        ""
                    }
            ));
        }
    }
    s
}
