//! What the user is told about a dropped folder's entries, typed: a link followed, a
//! link left out (why, and how it can be included), an entry left out. Staging
//! (`workspace`) makes them; the session sends each as a `notice` event
//! ([`super::Notice::InputNote`]) and returns them from an add; the page words them
//! from their fields, the command line prints their [`Display`](std::fmt::Display),
//! and the model is told the same lines as a sentence.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a path is, as `lstat` or `stat` tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    Other,
}

impl FileKind {
    /// As a person names it: "a named pipe (FIFO)".
    pub fn name(self) -> &'static str {
        match self {
            FileKind::File => "a regular file",
            FileKind::Dir => "a folder",
            FileKind::Symlink => "a symbolic link",
            FileKind::Fifo => "a named pipe (FIFO)",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Other => "not a regular file or folder",
        }
    }
}

/// How a link left out for leaving its folder can be included, said with it.
pub const HOW_TO_FOLLOW: &str = "to include it, add the target itself, or set follow_links = \"outside\" in config.toml (desktop: Settings, \"Follow links that leave a dropped folder\")";

const ONLY: &str = "only regular files and folders can be staged";

/// One note about a dropped folder's entries (`kind` names it on the wire).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InputNote {
    /// `input/<dest>` is a link inside the folder, followed: its content comes from
    /// `target` (canonical).
    LinkFollowed { dest: String, target: PathBuf },
    /// `input/<dest>` is a link to `target`, not followed (`why`); `include` says how
    /// it can be included, when it can. Made by [`InputNote::link_left_out`].
    LinkLeftOut {
        dest: String,
        target: PathBuf,
        #[serde(flatten)]
        why: LinkProblem,
        include: Vec<Include>,
    },
    /// `input/<dest>` (not a link, or a link that could not be read) was not staged.
    EntryLeftOut {
        dest: String,
        #[serde(flatten)]
        why: EntryProblem,
    },
    /// Hidden entries (names starting with '.') of `input/<folder>` were not staged;
    /// `names` are their `input/` paths.
    HiddenLeftOut { folder: String, names: Vec<String> },
    /// Entries of `input/<folder>` whose names are not valid UTF-8 were not staged.
    BadNamesLeftOut { folder: String, count: usize },
    /// `count` more notes, not said one by one (a folder of thousands of links).
    MoreNotes { count: usize },
}

/// Why a link inside a dropped folder was not followed (`why` on the wire).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum LinkProblem {
    /// Its target is outside the folder dropped (see [`super::FollowLinks`]).
    Outside,
    /// Its target is a hidden entry of the folder (hidden entries are not staged).
    HiddenTarget,
    /// It leads back to itself (directly, or through other links or folders).
    Loop,
    /// Its target does not exist.
    Dangling,
    /// Its target is a FIFO, socket or device.
    Special { target_is: FileKind },
}

/// Why an entry of a dropped folder was not staged (`why` on the wire).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum EntryProblem {
    /// A FIFO, socket or device.
    Special { is: FileKind },
    /// Reading it failed: permission denied, an I/O error.
    Unreadable { reason: String },
    /// It was a regular file when checked and something else when opened.
    Changed { is: FileKind },
}

/// A way to include a link that was left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Include {
    /// Add the link's target itself (a link dropped directly is followed).
    AddTarget,
    /// `follow_links = "outside"` in config.toml, or the desktop's setting "Follow
    /// links that leave a dropped folder".
    FollowLinksOutside,
}

impl InputNote {
    /// The note of a link left out, with the ways it can be included.
    pub fn link_left_out(dest: String, target: PathBuf, why: LinkProblem) -> InputNote {
        let include = match why {
            LinkProblem::Outside => vec![Include::AddTarget, Include::FollowLinksOutside],
            _ => Vec::new(),
        };
        InputNote::LinkLeftOut {
            dest,
            target,
            why,
            include,
        }
    }
}

impl LinkProblem {
    /// What is said after the link's name: "is a link to /etc/shadow, outside the
    /// folder; ...".
    pub fn says(&self, target: &Path) -> String {
        let t = target.display();
        match self {
            LinkProblem::Outside => format!(
                "is a link to {t}, outside the folder; links that leave a dropped folder are not followed ({HOW_TO_FOLLOW})"
            ),
            LinkProblem::HiddenTarget => format!(
                "is a link to {t}, a hidden entry of the folder (hidden entries are not staged)"
            ),
            LinkProblem::Loop => format!("is a link to {t}, which leads back to itself (a loop)"),
            LinkProblem::Dangling => format!("is a link to {t}, which does not exist"),
            LinkProblem::Special { target_is } => {
                format!("is a link to {t}, which is {}; {ONLY}", target_is.name())
            }
        }
    }
}

impl std::fmt::Display for EntryProblem {
    /// What is said after the entry's name: "is a named pipe (FIFO); ...".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EntryProblem::Special { is } => write!(f, "is {}; {ONLY}", is.name()),
            EntryProblem::Unreadable { reason } => write!(f, "cannot be read ({reason})"),
            EntryProblem::Changed { is } => write!(
                f,
                "changed while it was being staged: it is now {}; {ONLY}",
                is.name()
            ),
        }
    }
}

impl std::fmt::Display for InputNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputNote::LinkFollowed { dest, target } => {
                write!(f, "input/{dest} -> {} (a link, followed)", target.display())
            }
            InputNote::LinkLeftOut {
                dest, target, why, ..
            } => write!(f, "left out input/{dest}: it {}", why.says(target)),
            InputNote::EntryLeftOut { dest, why } => write!(f, "left out input/{dest}: it {why}"),
            InputNote::HiddenLeftOut { folder, names } => {
                let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
                let more = names.len().saturating_sub(shown.len());
                write!(
                    f,
                    "left out {} hidden entr{} of input/{folder} ({}{})",
                    names.len(),
                    if names.len() == 1 { "y" } else { "ies" },
                    shown.join(", "),
                    if more > 0 {
                        format!(", and {more} more")
                    } else {
                        String::new()
                    }
                )
            }
            InputNote::BadNamesLeftOut { folder, count } => write!(
                f,
                "left out {count} entr{} of input/{folder} whose names are not valid UTF-8",
                if *count == 1 { "y" } else { "ies" }
            ),
            InputNote::MoreNotes { count } => {
                write!(f, "... and {count} more note(s) about the input folders")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each note on the wire (a `kind` and its fields, read back the same) and as the
    /// line the command line prints and the model is told.
    #[test]
    fn input_notes_are_typed_with_their_lines() {
        let cases = [
            (
                InputNote::LinkFollowed {
                    dest: "docs/latest.csv".into(),
                    target: "/data/x.csv".into(),
                },
                json!({"kind": "link_followed", "dest": "docs/latest.csv", "target": "/data/x.csv"}),
                "input/docs/latest.csv -> /data/x.csv (a link, followed)",
            ),
            (
                InputNote::link_left_out("docs/shadow".into(), "/etc/shadow".into(), LinkProblem::Outside),
                json!({"kind": "link_left_out", "dest": "docs/shadow", "target": "/etc/shadow",
                       "why": "outside", "include": ["add_target", "follow_links_outside"]}),
                "left out input/docs/shadow: it is a link to /etc/shadow, outside the folder; links that leave a dropped folder are not followed (to include it, add the target itself, or set follow_links = \"outside\" in config.toml (desktop: Settings, \"Follow links that leave a dropped folder\"))",
            ),
            (
                InputNote::link_left_out("docs/env.txt".into(), "/d/docs/.env".into(), LinkProblem::HiddenTarget),
                json!({"kind": "link_left_out", "dest": "docs/env.txt", "target": "/d/docs/.env",
                       "why": "hidden_target", "include": []}),
                "left out input/docs/env.txt: it is a link to /d/docs/.env, a hidden entry of the folder (hidden entries are not staged)",
            ),
            (
                InputNote::link_left_out("docs/self".into(), "/d/docs".into(), LinkProblem::Loop),
                json!({"kind": "link_left_out", "dest": "docs/self", "target": "/d/docs",
                       "why": "loop", "include": []}),
                "left out input/docs/self: it is a link to /d/docs, which leads back to itself (a loop)",
            ),
            (
                InputNote::link_left_out("docs/gone.csv".into(), "/nonexistent/z.csv".into(), LinkProblem::Dangling),
                json!({"kind": "link_left_out", "dest": "docs/gone.csv", "target": "/nonexistent/z.csv",
                       "why": "dangling", "include": []}),
                "left out input/docs/gone.csv: it is a link to /nonexistent/z.csv, which does not exist",
            ),
            (
                InputNote::link_left_out(
                    "docs/zero".into(),
                    "/dev/zero".into(),
                    LinkProblem::Special { target_is: FileKind::CharDevice },
                ),
                json!({"kind": "link_left_out", "dest": "docs/zero", "target": "/dev/zero",
                       "why": "special", "target_is": "char_device", "include": []}),
                "left out input/docs/zero: it is a link to /dev/zero, which is a character device; only regular files and folders can be staged",
            ),
            (
                InputNote::EntryLeftOut {
                    dest: "docs/pipe".into(),
                    why: EntryProblem::Special { is: FileKind::Fifo },
                },
                json!({"kind": "entry_left_out", "dest": "docs/pipe", "why": "special", "is": "fifo"}),
                "left out input/docs/pipe: it is a named pipe (FIFO); only regular files and folders can be staged",
            ),
            (
                InputNote::EntryLeftOut {
                    dest: "docs/secret".into(),
                    why: EntryProblem::Unreadable { reason: "permission denied".into() },
                },
                json!({"kind": "entry_left_out", "dest": "docs/secret", "why": "unreadable", "reason": "permission denied"}),
                "left out input/docs/secret: it cannot be read (permission denied)",
            ),
            (
                InputNote::HiddenLeftOut {
                    folder: "docs".into(),
                    names: vec!["docs/.DS_Store".into()],
                },
                json!({"kind": "hidden_left_out", "folder": "docs", "names": ["docs/.DS_Store"]}),
                "left out 1 hidden entry of input/docs (docs/.DS_Store)",
            ),
            (
                InputNote::BadNamesLeftOut { folder: "docs".into(), count: 2 },
                json!({"kind": "bad_names_left_out", "folder": "docs", "count": 2}),
                "left out 2 entries of input/docs whose names are not valid UTF-8",
            ),
            (
                InputNote::MoreNotes { count: 7 },
                json!({"kind": "more_notes", "count": 7}),
                "... and 7 more note(s) about the input folders",
            ),
        ];
        for (note, wire, line) in cases {
            assert_eq!(serde_json::to_value(&note).unwrap(), wire, "{note:?}");
            assert_eq!(serde_json::from_value::<InputNote>(wire).unwrap(), note);
            assert_eq!(note.to_string(), line);
        }
    }
}
