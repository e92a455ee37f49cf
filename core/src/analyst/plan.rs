//! Deciding the next step from the conversation: which skill the task asks for, what
//! the planner's earlier calls gave, and so the next script to run or the final
//! answer. Failures are handled here, once each (see the module docs of the analyst).

use serde_json::Value;

use super::outputs::{output_names, OutputNames};
use super::phase::Phase;
use super::profile::{choose_target, Profile, Table, MIN_ROWS};
use super::request::{self, recognise, Recognised, Skill};
use super::scripts::{analysis_code, inspect_code, validation_code};
use super::stat_plan::{self, Decline, Understood};
use super::ticket::{self, Ticket};
use super::transcript::{error_summary, own_turns, tagged_json, task_and_outputs, Turn};
use super::{anomalies, skills, MAX_CALLS};
use crate::conversation::Item;

/// What the planner does next.
#[derive(Debug)]
pub(super) enum Next {
    Call(Phase, String, String),
    Finish(String),
}

/// What the planner knows when it decides the next step.
struct Plan<'a> {
    /// The question (a ticket's method sentences and answer format taken out).
    task: String,
    ticket: Ticket,
    /// The skill, language and operation of the task.
    rec: Recognised,
    outputs: OutputNames,
    turns: Vec<Turn<'a>>,
    /// The latest successful inspection, if any.
    profile: Option<Profile>,
    /// The answer to the previous question in this conversation, if any: a follow-up
    /// ("now by month") keeps its table, measure and operation.
    previous: Option<Value>,
}

pub(super) fn plan(items: &[Item]) -> Next {
    let (prompt, mut outputs, start) = task_and_outputs(items);
    let turns = own_turns(&items[start..]);
    let profile = turns
        .iter()
        .rev()
        .filter(|t| t.phase == Phase::Inspect)
        .find_map(|t| t.printed("SANDALYST_PROFILE"))
        .and_then(|v| serde_json::from_value::<Profile>(v).ok());
    let columns: Vec<String> = profile
        .iter()
        .flat_map(|p| p.tables.iter())
        .flat_map(|t| t.column_names.iter().cloned())
        .collect();
    // A ticket's method sentences and answer format are not the question.
    let ticket = ticket::read(&prompt, &columns);
    let task = ticket.question.clone();
    let mut rec = recognise(&task);
    if rec.skill != Skill::Anomalies {
        outputs = output_names(&prompt);
    }
    let Some(last) = turns.last().copied() else {
        let narration = if rec.skill == Skill::Anomalies {
            anomalies::words(rec.lang).step1.to_string()
        } else {
            skills::inspect_narration(rec.lang)
        };
        return Next::Call(Phase::Inspect, inspect_code(), narration);
    };
    if turns.len() >= MAX_CALLS {
        let (steps, why) = (turns.len().to_string(), error_summary(last.output));
        let stopped = &anomalies::words(rec.lang).stopped;
        return Next::Finish(anomalies::fill(stopped, &[&steps, last.phase.name(), &why]));
    }
    if rec.unsure && request::names_a_column(&task, &columns) {
        rec.skill = Skill::Aggregate;
    }
    let previous = items[..start].iter().rev().find_map(|i| match i {
        Item::ToolOutput {
            output,
            is_error: false,
            ..
        } => tagged_json(output, "SANDALYST_ANSWER").filter(is_ok),
        _ => None,
    });
    let plan = Plan {
        task,
        ticket,
        rec,
        outputs,
        turns,
        profile,
        previous,
    };
    if last.phase == Phase::Inspect {
        // A statistics question is read before any skill is chosen by its words.
        if let Some(next) = plan.stats_step() {
            return next;
        }
    }
    match last.phase {
        Phase::Stats => plan.after_stats(last),
        Phase::Inspect if plan.rec.skill != Skill::Anomalies && plan.profile.is_some() => {
            plan.skill_step(skills::phase_of_skill(plan.rec.skill))
        }
        Phase::Inspect => plan.after_inspect(last),
        Phase::Analyse | Phase::AnalyseSimple => plan.after_analysis(last),
        Phase::Validate => plan.after_validation(last),
        Phase::Profile | Phase::Aggregate | Phase::Relate => plan.after_skill(last),
    }
}

impl Plan<'_> {
    /// The table a question is about, from the latest inspection.
    fn question_table(&self) -> Option<&Table> {
        let profile = self.profile.as_ref()?;
        let earlier = self
            .previous
            .as_ref()
            .and_then(|a| a.get("input"))
            .and_then(Value::as_str);
        skills::choose_table(&profile.tables, &self.task, earlier)
    }

    /// Run the statistics plan of the question, decline it, or None when the
    /// question is not about statistics.
    fn stats_step(&self) -> Option<Next> {
        let table = self.question_table()?;
        match stat_plan::understand(&self.task, table, self.rec.lang) {
            Understood::NotMine => None,
            Understood::Decline(d) => Some(Next::Finish(self.declined(&d, table))),
            Understood::Plan(mut p) => {
                if let Err(why) = self.ticket.apply(&mut p, self.rec.lang) {
                    let d = Decline {
                        understood: stat_plan::described(&p, self.rec.lang),
                        not_understood: vec![why],
                    };
                    return Some(Next::Finish(self.declined(&d, table)));
                }
                let outputs = skills::outputs_for(Phase::Stats, &self.outputs);
                Some(Next::Call(
                    Phase::Stats,
                    skills::stats_code(table, &self.task, &self.rec, &p, &outputs),
                    skills::narration(Phase::Stats, table, self.rec.lang),
                ))
            }
        }
    }

    /// `text` after the answer in the format the ticket asked for, when it asked.
    fn with_answer_format(&self, answer: &Value, text: String) -> String {
        let values = answer.get("values").cloned().unwrap_or_default();
        match self.ticket.answer_lines(answer.get("plan"), &values) {
            Some(lines) => format!(
                "{}\n{lines}\n\n{text}",
                skills::in_the_format(self.rec.lang)
            ),
            None => text,
        }
    }

    fn declined(&self, d: &Decline, table: &Table) -> String {
        let text = stat_plan::decline_text(d, table, self.rec.lang);
        if self.rec.ascii {
            skills::to_ascii(&text)
        } else {
            text
        }
    }

    /// The statistics answer, or the script's reason to decline (the data did not
    /// fit the plan: a text column, several rows a label, no row left).
    fn after_stats(&self, last: Turn) -> Next {
        if let Some(a) = last.printed("SANDALYST_ANSWER").filter(is_ok) {
            let text = skills::answer_text(&self.rec, &a, None);
            return Next::Finish(self.with_answer_format(&a, text));
        }
        let why = last.why_not();
        let Some(table) = self.question_table() else {
            return Next::Finish(why);
        };
        let understood = match stat_plan::understand(&self.task, table, self.rec.lang) {
            Understood::Plan(p) => stat_plan::described(&p, self.rec.lang),
            _ => Vec::new(),
        };
        let d = Decline {
            understood,
            not_understood: vec![why],
        };
        Next::Finish(self.declined(&d, table))
    }

    /// Run a skill's script on the table the task is about, or explain why not.
    fn skill_step(&self, phase: Phase) -> Next {
        let profile = self.profile.as_ref().expect("checked by the caller");
        let Some(table) = self.question_table() else {
            // No table: the anomaly planner's explanations cover every case.
            return match choose_target(profile, &self.task) {
                Err(why) => Next::Finish(anomalies::no_target_text(self.words(), profile, why)),
                Ok(_) => Next::Finish("I found no table to answer from.".into()),
            };
        };
        let others: Vec<&Table> = profile
            .tables
            .iter()
            .filter(|t| t.path != table.path)
            .collect();
        let outputs = skills::outputs_for(phase, &self.outputs);
        Next::Call(
            phase,
            skills::skill_code(
                phase,
                table,
                &others,
                &self.task,
                &self.rec,
                self.previous.as_ref(),
                &outputs,
            ),
            skills::narration(phase, table, self.rec.lang),
        )
    }

    /// The answer from a skill's script; a question the data cannot answer gets the
    /// profile instead, once.
    fn after_skill(&self, last: Turn) -> Next {
        let lang = self.rec.lang;
        if let Some(answer) = last.printed("SANDALYST_ANSWER").filter(is_ok) {
            let prefix = if last.phase != Phase::Profile {
                None
            } else if let Some(why) = self.skill_failure() {
                Some(skills::fallback_note(lang, &why))
            } else if self.rec.skill == Skill::Unsupported {
                Some(skills::cannot_text(lang).to_string())
            } else {
                None
            };
            let text = skills::answer_text(&self.rec, &answer, prefix.as_deref());
            return Next::Finish(if last.phase == Phase::Profile {
                text
            } else {
                self.with_answer_format(&answer, text)
            });
        }
        let why = last.why_not();
        if last.phase != Phase::Profile && self.count(Phase::Profile) == 0 {
            return self.skill_step(Phase::Profile);
        }
        let mut text = match self.rec.skill {
            Skill::Unsupported => format!("{}\n\n", skills::cannot_text(lang)),
            _ => String::new(),
        };
        text.push_str(&lang.pick(
            format!("I could not profile the data ({why})."),
            format!("No pude describir los datos ({why})."),
        ));
        Next::Finish(text)
    }

    /// Why the skill's own script did not answer, when the profile stands in for it.
    fn skill_failure(&self) -> Option<String> {
        self.turns
            .iter()
            .find(|t| matches!(t.phase, Phase::Aggregate | Phase::Relate))
            .map(Turn::why_not)
    }

    /// The anomaly skill's words in the request's language.
    fn words(&self) -> &'static anomalies::Words {
        anomalies::words(self.rec.lang)
    }

    fn count(&self, phase: Phase) -> usize {
        self.turns.iter().filter(|t| t.phase == phase).count()
    }

    /// Analyse what the inspection found, retry it once, or explain why not.
    fn after_inspect(&self, last: Turn) -> Next {
        if let Some(profile) = &self.profile {
            match choose_target(profile, &self.task) {
                Ok(target) => Next::Call(
                    Phase::Analyse,
                    analysis_code(&target, &self.outputs, false, &self.rec),
                    anomalies::analysis_narration(self.words(), &target, &self.outputs),
                ),
                Err(why) => Next::Finish(anomalies::no_target_text(self.words(), profile, why)),
            }
        } else if self.count(Phase::Inspect) < 2 {
            let why = error_summary(last.output);
            let narration = anomalies::fill(&self.words().inspect_retry, &[&why]);
            Next::Call(Phase::Inspect, inspect_code(), narration)
        } else {
            let why = error_summary(last.output);
            Next::Finish(anomalies::fill(&self.words().inspect_failed, &[&why]))
        }
    }

    /// Validate the outputs, fall back once to the simple analysis, or explain.
    fn after_analysis(&self, last: Turn) -> Next {
        let o = &self.outputs;
        if let Some(result) = last.printed("SANDALYST_RESULT") {
            return Next::Call(
                Phase::Validate,
                validation_code(&self.outputs, &result, &self.rec),
                anomalies::fill(&self.words().step3, &[&o.csv, &o.png, &o.md]),
            );
        }
        let target = self
            .profile
            .as_ref()
            .and_then(|p| choose_target(p, &self.task).ok());
        match (last.phase, target) {
            (Phase::Analyse, Some(target)) if self.count(Phase::AnalyseSimple) == 0 => Next::Call(
                Phase::AnalyseSimple,
                analysis_code(&target, &self.outputs, true, &self.rec),
                anomalies::fill(&self.words().fallback_step, &[&error_summary(last.output)]),
            ),
            _ => {
                let first = self
                    .turns
                    .iter()
                    .find(|t| t.phase == Phase::Analyse)
                    .map(|t| error_summary(t.output));
                let w = self.words();
                let why = error_summary(last.output);
                let mut s = w.not_completed.to_string();
                s.push_str(&match (first, last.phase) {
                    (Some(f), Phase::AnalyseSimple) => anomalies::fill(&w.both_failed, &[&f, &why]),
                    _ => anomalies::fill(&w.step_failed, &[&why]),
                });
                s.push_str(&anomalies::fill(
                    &w.may_be_missing,
                    &[&o.csv, &o.png, &o.md],
                ));
                Next::Finish(s)
            }
        }
    }

    /// Summarise the run for the user.
    fn after_validation(&self, last: Turn) -> Next {
        let analysis = self
            .turns
            .iter()
            .rev()
            .filter(|t| matches!(t.phase, Phase::Analyse | Phase::AnalyseSimple))
            .find_map(|t| t.printed("SANDALYST_RESULT"));
        let fallback_reason = self
            .turns
            .iter()
            .find(|t| t.phase == Phase::Analyse && t.is_error)
            .map(|t| error_summary(t.output));
        let validation = if last.is_error {
            Err(error_summary(last.output))
        } else {
            last.output
                .and_then(|o| tagged_json(o, "SANDALYST_VALIDATION"))
                .ok_or_else(|| "the validation printed no verdict".to_string())
        };
        match analysis {
            Some(result) => {
                let mut text = anomalies::final_text(
                    self.words(),
                    &result,
                    &self.outputs,
                    fallback_reason.as_deref(),
                    &validation,
                );
                let analysed = result.get("input").and_then(Value::as_str).unwrap_or("");
                let others: Vec<String> = self
                    .profile
                    .iter()
                    .flat_map(|p| p.tables.iter())
                    .filter(|t| {
                        t.path != analysed
                            && !t.time.is_empty()
                            && !t.measures.is_empty()
                            && t.rows >= MIN_ROWS
                    })
                    .map(|t| t.path.clone())
                    .collect();
                if !others.is_empty() {
                    text.push_str(&anomalies::also_inspected(self.words(), &others));
                }
                if self.rec.ascii {
                    text = skills::to_ascii(&text);
                }
                Next::Finish(text)
            }
            None => Next::Finish(self.words().no_result.clone()),
        }
    }
}

/// Whether a script's answer says it answered.
fn is_ok(answer: &Value) -> bool {
    answer.get("ok").and_then(Value::as_bool) == Some(true)
}
