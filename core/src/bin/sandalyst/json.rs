//! `--json`: what each command prints for a script, as typed structs serialized by
//! serde (strings escaped by JSON itself, so nothing reaches a terminal raw). One
//! document per command; `chat` writes one line per ask. The shapes are pinned by the
//! tests below: a change to them is a change to what scripts read.

use std::path::PathBuf;

use sandalyst::api::engine::ImageReport;
use sandalyst::api::runs::UnreadableRow;
use sandalyst::api::CollectedFile;
use sandalyst::api::Usage;
use sandalyst::api::{Listed, RunStatus, SessionSummary};
use sandalyst::protocol::ErrorInfo;
use serde::Serialize;

use super::exit;

/// Write `value` as one line of JSON on stdout; a reader that went away (`| head`)
/// ends the command quietly, as for text.
pub(crate) fn print<T: Serialize>(value: &T) {
    let line = serde_json::to_string(value).expect("the output types serialize");
    super::write_stdout(&format!("{}\n", terminal_safe(&line)));
}

/// JSON escapes the C0 controls but not C1 ones (U+009B starts a terminal sequence)
/// nor the bidirectional overrides; written as `\uXXXX`, they read back the same.
fn terminal_safe(json: &str) -> String {
    let mut s = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') {
            s.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            s.push(c);
        }
    }
    s
}

/// How an ask, a run or a re-run ended.
#[derive(Serialize)]
pub(crate) struct Status {
    /// The status's stable name: `finished`, `incomplete`, `failed`, `max_turns`, ...
    pub(crate) status: &'static str,
    /// The same as a sentence, what the text output says.
    pub(crate) status_text: String,
    /// Every field of the status (the missing outputs, the limit, the failure).
    pub(crate) status_detail: RunStatus,
    /// The code the command exits with.
    pub(crate) exit_code: u8,
}

impl Status {
    pub(crate) fn of(status: &RunStatus) -> Status {
        Status {
            status: status.code(),
            status_text: status.to_string(),
            status_detail: status.clone(),
            exit_code: exit::of_status(status),
        }
    }
}

/// The result of `run`, `ask`, and of each ask of `chat`.
#[derive(Serialize)]
pub(crate) struct AskResult {
    pub(crate) session_id: String,
    pub(crate) ask_id: Option<String>,
    #[serde(flatten)]
    pub(crate) status: Status,
    pub(crate) turns: u32,
    pub(crate) usage: Usage,
    pub(crate) cost_usd: Option<f64>,
    /// The model's final answer, when there is one.
    pub(crate) answer: Option<String>,
    /// The outputs' folder (`--out DIR` when given).
    pub(crate) outputs_dir: PathBuf,
    pub(crate) outputs: Vec<CollectedFile>,
    /// The typed error behind a `failed` status.
    pub(crate) error: Option<ErrorInfo>,
}

impl AskResult {
    pub(crate) fn of_ask(o: &sandalyst::api::AskOutcome) -> AskResult {
        AskResult {
            session_id: o.session_id.to_string(),
            ask_id: Some(o.ask_id.to_string()),
            status: Status::of(&o.status),
            turns: o.turns,
            usage: o.usage,
            cost_usd: o.cost_usd,
            answer: o.answer.clone(),
            outputs_dir: o.outputs_dir.clone(),
            outputs: o.outputs.clone(),
            error: o.error.as_ref().map(|e| e.info()),
        }
    }
}

/// `runs list`: sessions newest first, then the folders that cannot be read.
#[derive(Serialize)]
pub(crate) struct RunsList {
    pub(crate) runs: Vec<RunEntry>,
    pub(crate) unreadable: Vec<UnreadableRow>,
}

#[derive(Serialize)]
pub(crate) struct RunEntry {
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) created: String,
    /// The latest ask's status name; `in_progress` while one runs or before the first.
    pub(crate) status: &'static str,
    pub(crate) status_text: String,
    pub(crate) asks: usize,
    pub(crate) outputs: usize,
    /// The input files' names under `input/`.
    pub(crate) files: Vec<String>,
}

impl RunsList {
    pub(crate) fn of(sessions: Vec<SessionSummary>) -> RunsList {
        let mut list = RunsList {
            runs: Vec::new(),
            unreadable: Vec::new(),
        };
        for s in sessions {
            match s.unreadable {
                Some(reason) => list.unreadable.push(UnreadableRow {
                    folder: s.id.into(),
                    reason,
                }),
                None => list.runs.push(RunEntry {
                    status: s.status.as_ref().map_or("in_progress", RunStatus::code),
                    status_text: s
                        .status
                        .as_ref()
                        .map_or("in progress".into(), ToString::to_string),
                    files: s.files.into_iter().map(|f| f.name).collect(),
                    id: s.id.into(),
                    title: s.title,
                    created: s.created,
                    asks: s.asks,
                    outputs: s.outputs,
                }),
            }
        }
        list
    }
}

/// `models`: what `--model` takes, the server's name, and what else it says.
#[derive(Serialize)]
pub(crate) struct Models {
    pub(crate) models: Vec<Listed>,
}

/// `image status`.
#[derive(Serialize)]
pub(crate) struct ImageStatus {
    pub(crate) tag: String,
    pub(crate) present: bool,
    pub(crate) size_bytes: Option<i64>,
    pub(crate) created: Option<String>,
    /// Older tags of the built-in image, no longer used.
    pub(crate) stale_tags: Vec<String>,
    pub(crate) custom: Option<CustomImage>,
    pub(crate) python: Option<Python>,
}

#[derive(Serialize)]
pub(crate) struct CustomImage {
    pub(crate) tag: String,
    pub(crate) packages: String,
    pub(crate) present: bool,
}

/// The Python of the image runs use: its version and packages, or why they are unknown.
#[derive(Serialize)]
pub(crate) struct Python {
    pub(crate) tag: String,
    pub(crate) version: Option<String>,
    pub(crate) packages: Vec<Package>,
    pub(crate) error: Option<String>,
}

#[derive(Serialize)]
pub(crate) struct Package {
    pub(crate) name: String,
    pub(crate) version: String,
}

impl ImageStatus {
    pub(crate) fn of(st: ImageReport) -> ImageStatus {
        ImageStatus {
            tag: st.tag,
            present: st.present,
            size_bytes: st.size_bytes,
            created: st.created,
            stale_tags: st.stale_tags,
            custom: st.custom.map(|c| CustomImage {
                tag: c.tag,
                packages: c.packages,
                present: c.present,
            }),
            python: st.python.map(|p| match p.env {
                Ok(env) => Python {
                    tag: p.tag,
                    version: Some(env.python),
                    packages: env
                        .packages
                        .into_iter()
                        .map(|p| Package {
                            name: p.name,
                            version: p.version,
                        })
                        .collect(),
                    error: None,
                },
                Err(e) => Python {
                    tag: p.tag,
                    version: None,
                    packages: Vec::new(),
                    error: Some(e),
                },
            }),
        }
    }
}

/// `image build`: the tag runs will use.
#[derive(Serialize)]
pub(crate) struct Built {
    pub(crate) tag: String,
}

/// `runs export`: the files or folder written, and what the report left out (only
/// with `--report`, when it left something out).
#[derive(Serialize)]
pub(crate) struct Exported {
    pub(crate) paths: Vec<PathBuf>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) notes: Vec<String>,
}

/// `rerun`.
#[derive(Serialize)]
pub(crate) struct Rerun {
    pub(crate) session_id: String,
    pub(crate) source: String,
    #[serde(flatten)]
    pub(crate) status: Status,
    pub(crate) cells: usize,
    pub(crate) ran: usize,
    pub(crate) skipped: usize,
    pub(crate) failed: Option<sandalyst::api::FailedCell>,
    pub(crate) outputs_dir: PathBuf,
    pub(crate) outputs: Vec<CollectedFile>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandalyst::api::OutputProblem;
    use serde_json::json;

    /// The shape scripts read, field by field: a change here is a change for them.
    #[test]
    fn an_incomplete_ask_as_a_script_reads_it() {
        let status = RunStatus::Incomplete {
            problems: vec![OutputProblem {
                path: "output/chart.png".into(),
                problem: "does not exist".into(),
            }],
        };
        let r = AskResult {
            session_id: "s1".into(),
            ask_id: Some("a1".into()),
            status: Status::of(&status),
            turns: 2,
            usage: Usage {
                input_tokens: 10,
                output_tokens: 5,
                cached_tokens: 0,
            },
            cost_usd: None,
            answer: Some("done".into()),
            outputs_dir: "/d/s1/outputs".into(),
            outputs: vec![CollectedFile {
                path: "t.csv".into(),
                bytes: 3,
                invalid: None,
            }],
            error: None,
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({
                "session_id": "s1",
                "ask_id": "a1",
                "status": "incomplete",
                "status_text": "incomplete: output/chart.png does not exist",
                "status_detail": {"status": "incomplete", "problems": [
                    {"path": "output/chart.png", "problem": "does not exist"}
                ]},
                "exit_code": 3,
                "turns": 2,
                "usage": {"input_tokens": 10, "output_tokens": 5, "cached_tokens": 0},
                "cost_usd": null,
                "answer": "done",
                "outputs_dir": "/d/s1/outputs",
                "outputs": [{"path": "t.csv", "bytes": 3}],
                "error": null
            })
        );
    }

    #[test]
    fn what_a_terminal_would_act_on_is_escaped_and_reads_back_the_same() {
        let title = "a\u{9b}31mred\u{202e}txt.exe\x1b[0m";
        let line = terminal_safe(&serde_json::to_string(&json!({ "title": title })).unwrap());
        assert!(line.is_ascii(), "{line}");
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back["title"], title);
    }

    #[test]
    fn a_listing_of_runs_as_a_script_reads_it() {
        let list = RunsList {
            runs: vec![RunEntry {
                id: "r1".into(),
                title: "Total sales".into(),
                created: "2026-01-01T00:00:00Z".into(),
                status: "finished",
                status_text: "finished".into(),
                asks: 1,
                outputs: 2,
                files: vec!["sales.csv".into()],
            }],
            unreadable: vec![UnreadableRow {
                folder: "bad".into(),
                reason: "run.json is not JSON".into(),
            }],
        };
        assert_eq!(
            serde_json::to_value(&list).unwrap(),
            json!({
                "runs": [{"id": "r1", "title": "Total sales", "created": "2026-01-01T00:00:00Z",
                          "status": "finished", "status_text": "finished", "asks": 1,
                          "outputs": 2, "files": ["sales.csv"]}],
                "unreadable": [{"folder": "bad", "reason": "run.json is not JSON"}]
            })
        );
    }

    #[test]
    fn an_export_as_a_script_reads_it() {
        let plain = Exported {
            paths: vec!["/tmp/a/analysis.ipynb".into()],
            notes: vec![],
        };
        assert_eq!(
            serde_json::to_value(&plain).unwrap(),
            json!({"paths": ["/tmp/a/analysis.ipynb"]})
        );
        let report = Exported {
            paths: vec!["/tmp/r.html".into()],
            notes: vec!["big.png: too large".into()],
        };
        assert_eq!(
            serde_json::to_value(&report).unwrap(),
            json!({"paths": ["/tmp/r.html"], "notes": ["big.png: too large"]})
        );
    }

    #[test]
    fn an_image_whose_packages_cannot_be_read_says_why() {
        let st = ImageStatus {
            tag: "sandalyst-sandbox:1".into(),
            present: true,
            size_bytes: Some(1 << 20),
            created: Some("2026-01-01".into()),
            stale_tags: vec![],
            custom: None,
            python: Some(Python {
                tag: "sandalyst-sandbox:1".into(),
                version: None,
                packages: vec![],
                error: Some("no engine".into()),
            }),
        };
        assert_eq!(
            serde_json::to_value(&st).unwrap(),
            json!({"tag": "sandalyst-sandbox:1", "present": true, "size_bytes": 1048576,
                   "created": "2026-01-01", "stale_tags": [], "custom": null,
                   "python": {"tag": "sandalyst-sandbox:1", "version": null, "packages": [],
                              "error": "no engine"}})
        );
        assert_eq!(
            serde_json::to_value(Models { models: vec![] }).unwrap(),
            json!({"models": []})
        );
    }
}
