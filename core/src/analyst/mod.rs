//! The built-in offline analyst: a deterministic, rule-based planner. **It is not an
//! LLM** and never calls one; it is the default model when no provider is configured
//! and the model of the end-to-end tests. The rest of the core only constructs it
//! ([`OfflineAnalyst::new`]) and talks to it through the [`Model`] trait.
//!
//! It drives the same tool protocol as a real model, with real Python it writes from
//! templates (the `*.py` files beside this module, pulled in with `include_str!`). It plans from the latest
//! user message (app notes, `[from the app] ...`, are not the task), which
//! [`request::recognise`] reads as one of its skills, in English or Spanish:
//!
//! | Skill | Asked as | Planner | Script |
//! |---|---|---|---|
//! | anomalies in a time series | "find abnormal events", "busca anomalías" | this module | `analyse.py`, `validate.py` |
//! | data profile | "what is in this file?", "describe", "resume" | `skills.rs` | `profile.py` |
//! | statistics | "mean and standard deviation of price", "which city has the highest score?" | `stat_plan/` | `stats.py` |
//! | aggregate questions | "which region had the highest revenue in February?" | `reading.rs`, `skills.rs` | `aggregate.py` |
//! | correlation, trend | "is temperature correlated with humidity?", "weekly trend of visits" | `reading.rs`, `skills.rs` | `relate.py` |
//! | none of these | "forecast next month" | `skills.rs` | `profile.py`, after an honest "I cannot" |
//!
//! Every ask starts with the same inspection; the question skills then run one script
//! that writes a table, a chart and a report and prints `SANDALYST_ANSWER {json}`, from
//! which the final message is written in the request's language (ASCII when asked).
//! A follow-up in a session is a new ask: it gets its own skill, and its script reuses
//! the table the kernel already loaded (or reads the file again in a new kernel). The
//! anomaly skill, unchanged in its findings:
//!
//! 1. **Inspect** (`offline/inspect.py`): list every file under `input/`, read each
//!    tabular one (CSV/TSV, Excel if openpyxl is installed, JSON, Parquet if pyarrow is
//!    installed), print a profile (rows, columns, dtypes, missing values, time range)
//!    and one machine-readable line `SANDALYST_PROFILE {json}` naming the time column,
//!    the ranked numeric measures (energy/power names first, then variance) and an
//!    outdoor-temperature column with its unit (C or F, from the name or value range).
//! 2. **Analyse** (`offline/analyse.py`, filled in with the chosen file and columns):
//!    regular time grid at the median interval (missing readings stay missing), a
//!    leave-one-out median profile by time of week, a Huber-fitted heating/cooling
//!    degree model of outdoor temperature (backfitted with the profile), robust
//!    z-scores of the residuals (1.4826 x MAD at the same hour of day +/- 1 h,
//!    weekdays and weekends apart), readings with
//!    |z| >= 3.5 grouped into events (gaps up to 1 h, extended while |z| >= 2), events
//!    dropped as normal noise when they are a single reading with |z| < 6 or deviate
//!    by less than 10 % of the typical level, runs of identical readings (>= 3 h)
//!    reported as stuck-meter events. Each event gets a plausible explanation drawn
//!    only from its timestamps, values and temperature. Writes the event table (CSV,
//!    one row per event, plus `<stem>_points.csv` with every reading inside an event),
//!    a chart (PNG) and a report (Markdown) in the request's language, with the words
//!    of `texts.toml`'s `[anomaly]` (English is plain ASCII, Spanish too when asked;
//!    the event table stays English); prints `SANDALYST_RESULT`.
//! 3. **Validate** (`offline/validate.py`): reopen the three files and check them;
//!    prints `SANDALYST_VALIDATION`.
//! 4. **Finish**: a final answer (no tool call) summarising the events and the files,
//!    in the request's language ([`anomalies`]: one builder, a table of words a
//!    language).
//!
//! The planner is stateless over the conversation: each turn it finds its own earlier
//! calls by the `# sandalyst-offline-phase: <phase>` marker line in their code, reads
//! the matching tool outputs and decides the next step. Failures are handled once and
//! deterministically: a failed inspection is retried once; a failed analysis falls
//! back once to a simplified analysis (no temperature model, simpler chart); if that
//! fails too, or no usable time series is found, it finishes with an explanation; a
//! failed validation is reported in the final answer. It never makes more than
//! [`MAX_CALLS`] calls.
//!
//! Output names come from the task: the first `output/<name>.csv`, `.png` and `.md`
//! mentioned in it, else `output/anomalies.csv`, `output/anomalies.png` and
//! `output/report.md` (`output/answer.*` for questions, `output/profile.*` for the
//! profile).
//!
//! Statistics questions are read against the inspected table before any other skill
//! ([`stat_plan::understand`]): a plan runs `stats.py`; a request with a part the plan
//! cannot cover gets an honest decline (what was understood, what not, what the
//! analyst can do), never an answer to another question.
//!
//! Aggregate and relationship questions are read by [`reading::read`] (the columns named
//! and the word before each, months, years, a period, where a value may be named); their
//! scripts match that reading against the data and never read the request.
//!
//! Where each part lives: `request` reads the task's words, `transcript` reads the
//! conversation (the task, the planner's earlier calls and their outputs), `plan`
//! decides the next step, `scripts` composes its Python, `profile` holds what the
//! inspection found and picks the anomaly skill's columns, `skills` and `anomalies`
//! write the answers (with `numbers` and `outputs`), and this file answers the
//! [`Model`] trait.

use async_trait::async_trait;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::conversation::{CallForm, Item, Model, Reply, Request};

mod anomalies;
mod lexicon;
mod load;
pub use load::{input_profile, InputProfile};
pub use request::asks_for_anomalies;
mod numbers;
mod outputs;
mod phase;
mod plan;
mod profile;
mod reading;
pub mod request;
mod scripts;
pub use scripts::input_profile_code;
mod skills;
mod stat_plan;
mod texts;
mod ticket;
mod transcript;

use plan::{plan, Next};
use transcript::own_turns;

/// Hard cap on the planner's tool calls in one run (inspect x2, analyse x2, validate).
pub const MAX_CALLS: usize = 6;

/// The step of the offline analyst that made a call (`"inspect"`, `"analyse"`,
/// `"stats"`, ...), read from the marker line of its code or command as the analyst
/// itself reads it; `None` for a call the analyst did not write. A call's id says
/// nothing of it.
pub fn call_phase(name: &str, arguments: &str) -> Option<&'static str> {
    transcript::call_source(name, arguments)
        .as_deref()
        .and_then(phase::phase_of)
        .map(phase::Phase::name)
}

/// The built-in offline analyst (rule-based, not an LLM). See the module docs.
#[derive(Clone, Debug, Default)]
pub struct OfflineAnalyst {
    _private: (),
}

impl OfflineAnalyst {
    pub fn new() -> Self {
        OfflineAnalyst::default()
    }
}

/// Wrap Python for the shell tool when the python tool is not offered.
fn as_shell(code: &str) -> String {
    format!("python3 - <<'SANDALYST_PY'\n{code}\nSANDALYST_PY\n")
}

#[async_trait]
impl Model for OfflineAnalyst {
    fn describe(&self) -> String {
        "offline analyst (built-in, rule-based, not an LLM)".into()
    }

    async fn respond(
        &mut self,
        request: Request<'_>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Reply> {
        if cancel.is_cancelled() {
            anyhow::bail!("cancelled");
        }
        let items = match plan(request.items) {
            Next::Finish(text) => vec![Item::Assistant { text }],
            Next::Call(step, code, narration) => {
                // Which step made the call is said by its code's marker line only.
                debug_assert_eq!(phase::phase_of(&code), Some(step), "{code}");
                let has = |n: &str| request.tools.iter().any(|t| t.name == n);
                // No tools listed means the defaults: python.
                let (name, arguments) = if request.tools.is_empty() || has("python") {
                    ("python", json!({ "code": code }))
                } else if has("shell") {
                    ("shell", json!({ "command": as_shell(&code) }))
                } else {
                    return Ok(Reply {
                        items: vec![Item::Assistant {
                            text:
                                "I need the python tool (or the shell tool) to analyse the files, \
                                   but neither is enabled for this run."
                                    .into(),
                        }],
                        ..Reply::default()
                    });
                };
                let n = own_turns(request.items).len() + 1;
                vec![
                    Item::Assistant { text: narration },
                    Item::ToolCall {
                        call_id: format!("offline-{n}").into(),
                        name: name.into(),
                        arguments: arguments.to_string(),
                        form: CallForm::Structured,
                    },
                ]
            }
        };
        Ok(Reply {
            items,
            ..Reply::default()
        })
    }
}

/// How the analyst reads `prompt` against one table (`table`: the inspection's
/// profile of it, `{path, rows, column_kinds: [{name, kind, distinct, values}]}`),
/// without running anything: `{"plan": ..., "slots": [...]}`, `{"decline": [what it
/// could not read]}` or `{"skill": "other", "reading": ...}` (another skill's question,
/// and what it names for that skill's script). The fast tier checks its
/// question→plan cases with it.
pub fn read_question(prompt: &str, table: &serde_json::Value) -> anyhow::Result<serde_json::Value> {
    let table: profile::Table = serde_json::from_value(table.clone())?;
    let t = ticket::read(prompt, &table.column_names);
    let lang = request::detect_lang(&t.question);
    let slots: Vec<&str> = t.slots.iter().map(|s| s.name.as_str()).collect();
    let slot_decimals: Vec<i64> = t
        .slots
        .iter()
        .map(|s| s.decimals.map_or(-1, i64::from))
        .collect();
    Ok(match stat_plan::understand(&t.question, &table, lang) {
        stat_plan::Understood::NotMine => {
            json!({ "skill": "other", "reading": reading::read(&t.question, &table) })
        }
        stat_plan::Understood::Decline(d) => json!({ "decline": d.not_understood }),
        stat_plan::Understood::Plan(mut p) => match t.apply(&mut p, lang) {
            Err(why) => json!({ "decline": [why] }),
            Ok(()) => json!({ "plan": p, "slots": slots, "slot_decimals": slot_decimals }),
        },
    })
}

#[cfg(test)]
mod tests;
