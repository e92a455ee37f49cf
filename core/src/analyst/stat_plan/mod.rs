//! Reading a statistics question into an explicit plan, matched against the table's
//! real columns and their kinds: which statistics, of which measure (a column or a
//! measure derived from two), grouped by what, under which conditions, with what
//! answer shape and rounding. A request is read word by word; when a part of it is
//! a statistic, a condition or a column this planner cannot read, the outcome is a
//! [`Decline`] naming what was understood and what not, never a plan for some other
//! question. Requests that are not about statistics (a profile, a share of total, a
//! change between periods, a trend, an anomaly search) are left to the other skills
//! ([`Understood::NotMine`]), as are the plain grouped totals and means that
//! `aggregate.py` answers.
//!
//! ```text
//! "Calculate the mean and standard deviation of the price"
//!   -> describe: [mean, std (sample)] of `price`
//! "Which region had the highest revenue? Revenue is units times unit_price."
//!   -> argmax over `region` of total(units x unit_price)
//! ```
//!
//! [`understand`] reads in this order, a module a step: the words and the columns and
//! statistics they name (`words`, `dates`, `mentions`, `statistics`), a first look at
//! what is asked (`asked`), the parts that take their words first (`derived`,
//! `filters`, `date_filters`, `value_filters`), the group or label (`group`), the
//! measures (`measures`), the task's part of the plan (`tasks`, with `options`), and
//! the nets that decline what no part read (`unread`); `reader` holds the words
//! being read, and `text` says a plan and a decline to the user.

use crate::analyst::lexicon::LEXICON;
use serde::Serialize;

use super::profile::Table;
use super::request::Lang;
pub(super) use asked::default_interpolation;
use asked::Asked;
pub(super) use codes::{DerivedOp, FilterOp, LabelOp, MissingAs, StatMethod, StatName};
use dates::Day;
use group::Extremes;
pub(super) use mentions::{camel_apart, mentions, Mention};
pub(super) use options::decimals as decimals_said;
use options::Options;
use reader::Reader;
pub(super) use statistics::statistics_named;
use statistics::{distinct_statistics, statistics_said};
use tasks::{task_of, Parts};
pub(super) use text::{decline_text, described};
use words::{clause_starts, sentence_starts};
pub(super) use words::{find, num, words_of};

mod asked;
mod codes;
mod date_filters;
mod dates;
mod derived;
mod filters;
mod group;
mod measures;
mod mentions;
mod options;
mod reader;
mod statistics;
mod tasks;
mod text;
mod unread;
mod value_filters;
mod words;

/// The answer's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Task {
    /// One or more statistics of one or more measures (per group when grouped).
    Describe,
    /// The label(s) with the highest value of the measure (all ties).
    Argmax,
    /// The label(s) with the lowest value.
    Argmin,
    /// Correlation between two measures with its p-value.
    Correlation,
    /// Outliers of the measure and their count.
    Outliers,
    /// Whether the measure looks normally distributed.
    Normality,
}

/// One statistic; `q` for quantiles (0..1).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(super) struct Stat {
    pub name: StatName,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q: Option<f64>,
}

impl Stat {
    fn plain(name: StatName) -> Stat {
        Stat { name, q: None }
    }

    fn quantile(q: f64) -> Stat {
        Stat {
            name: StatName::Quantile,
            q: Some(q),
        }
    }
}

/// A measure derived from two columns, or from a column and a number.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(super) struct Derived {
    pub op: DerivedOp,
    /// The columns, or a number's text where the side is a number (`a_value`).
    pub a: String,
    pub b: String,
    /// A side that is a number ("2024 - model_year").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a_value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_value: Option<f64>,
}

/// What a statistic is computed over: a column, or a measure derived from two.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(super) struct MeasureSpec {
    /// The name said in the answer (the column, or the derived measure's name).
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub derived: Option<Derived>,
}

/// A condition on the rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(super) struct Filter {
    pub column: String,
    /// Against `value` (or against a statistic, `stat`), a day, a month, `values`.
    pub op: FilterOp,
    pub value: f64,
    /// The day of a date condition, YYYY-MM-DD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Compared against this statistic (mean, median) of the column `of`, computed on
    /// the rows the other conditions keep ("fares higher than the median").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stat: Option<StatName>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub of: Option<String>,
    /// For `in`: the column's values the request names ("female", "en Bilbao").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// The values were said with "or" ("Pclass 1 or 2"): one pooled condition, not
    /// values compared side by side.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub either: bool,
}

impl Filter {
    fn num(column: String, op: FilterOp, value: f64) -> Filter {
        Filter {
            column,
            op,
            value,
            ..Filter::default()
        }
    }

    fn on_day(column: &str, op: FilterOp, day: Day) -> Filter {
        Filter {
            column: column.to_string(),
            op,
            date: Some(day.iso()),
            ..Filter::default()
        }
    }
}

/// The plan the statistics script carries out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(super) struct StatPlan {
    pub task: Task,
    pub stats: Vec<Stat>,
    pub measures: Vec<MeasureSpec>,
    /// The second measure of a correlation.
    pub second: Option<String>,
    /// The column the statistics are grouped by, or whose label an argmax answers.
    pub group: Option<String>,
    /// How rows of one label are combined before an argmax (None: the rows are the
    /// labels; the script checks there is one row per label).
    pub label_op: Option<LabelOp>,
    pub filters: Vec<Filter>,
    /// 1: sample statistics (the default), 0: population.
    pub ddof: u8,
    pub decimals: Option<u32>,
    pub missing: MissingAs,
    pub method: Option<StatMethod>,
    /// Skewness and kurtosis as scipy computes them by default (biased), not pandas'.
    pub biased: bool,
    /// The coefficient of variation as a percentage ("CV = sd / mean × 100").
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub percent: bool,
    /// The z-score threshold of outliers by z-score.
    pub z: f64,
    /// The significance level of a normality test (0.05 unless the request says).
    pub alpha: f64,
    pub alpha_said: bool,
    /// A condition word was read but no numeric condition: the script must find the
    /// value it names in a text column, or decline.
    pub needs_value_filter: bool,
    /// Every column the request names (the script does not read their names as
    /// values to filter on).
    pub named_columns: Vec<String>,
    /// For the statistic `share`: the condition whose share of the rows (those the
    /// other conditions keep) is asked ("what percentage of passengers survived").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_of: Option<Filter>,
}

/// What could not be read, for an honest decline.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Decline {
    /// The parts that were understood ("mean", "of `price`").
    pub understood: Vec<String>,
    /// The parts that were not, said in the request's language.
    pub not_understood: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Understood {
    Plan(Box<StatPlan>),
    Decline(Decline),
    /// Not a statistics question: another skill answers it.
    NotMine,
}

/// Another skill's question, found partway through reading one.
struct Theirs;

/// Read `task` against `table`: a plan, a decline, or not a statistics question.
pub(super) fn understand(task: &str, table: &Table, lang: Lang) -> Understood {
    // The words, the columns they name and the statistics they ask for; at first
    // sight, whether the question is this planner's at all.
    let w = words_of(task);
    let named = mentions(&w, table);
    let said = statistics_said(&w, table, &named);
    let mut asked = Asked::read(&w);
    // "market segment" for `market_segment`: a column's words are the column, not a
    // task outside the skills (segmenting the customers).
    if asked.out_of_scope {
        let free: Vec<String> = (0..w.len())
            .filter(|&i| !named.iter().any(|m| m.start <= i && i < m.end))
            .map(|i| w[i].clone())
            .collect();
        asked.out_of_scope = words::has_any(&free, &LEXICON.out_of_scope);
    }
    if asked.is_theirs(&w, table, &named, &said) {
        return Understood::NotMine;
    }
    let mut r = Reader::new(w, table, named, lang, &asked, &said);
    r.sentence_starts = sentence_starts(task);
    r.clause_starts = clause_starts(task);
    r.decline_what_is_never_computed(&asked);
    let said_spans: Vec<(usize, usize)> = said.iter().map(|(s, e, _)| (*s, *e)).collect();

    // The parts that take their words first (a derived measure, the conditions), then
    // what is left: the statistics, the extremes, how to compute, a share.
    let derived = if asked.derived_words {
        r.derived()
    } else {
        None
    };
    let both_sides = r.both_sides();
    let filters = r.filters();
    let filled = r.missing_filled();
    r.missing_dropped();
    let mut said = r.statistics_outside_conditions(said);
    r.decline_either(&filters, &said);
    let extremes = Extremes::said(&r);
    let options = Options::read(&r.w, filled);
    let share = r.asks_a_share(&said, &filters);
    if share {
        // "divide by the number of rows and multiply by 100": the share restated.
        r.read_phrases(&LEXICON.share_formula);
        r.share_counts_restated();
        said.retain(|(s, _, _)| !r.used[*s]);
    }
    if r.is_another_skills(&asked, share, derived.is_some()) {
        return Understood::NotMine;
    }

    // The group or the label, the measures, the task.
    let extreme_asked = asked.question && extremes.any() && asked.describing();
    let mut group = both_sides.or_else(|| r.group());
    // "Filter the rows by hotel equal to "City Hotel"": one value of a column kept by
    // a condition is not also a group.
    if group.as_ref().is_some_and(|g| {
        filters
            .iter()
            .any(|f| f.column == g.column && f.op == FilterOp::In && f.values.len() == 1)
    }) {
        group = None;
    }
    if extreme_asked && group.is_none() {
        group = r.asked_label(share || r.counts_rows());
    }
    let argmax = extreme_asked && group.is_some();
    r.extreme_without_label(&asked, extremes, argmax, &mut said);
    let group = group.map(|g| g.column);
    let mut measures = r.measures(derived.as_ref(), group.as_ref());
    r.text_measure(&mut measures, &said, argmax, share);
    let task = task_of(&asked, argmax, extremes, &r.w);

    // The plan: the task's own parts, then every word read or an honest decline.
    let named_columns = r.mentions.iter().map(|m| m.column.clone()).collect();
    let mut plan = StatPlan::new(task, group, filters, &options, named_columns);
    let parts = Parts {
        stats: distinct_statistics(&said),
        measures,
        derived,
        share,
    };
    if r.plan_task(&mut plan, parts).is_err() {
        return Understood::NotMine;
    }
    if r.said_free(&LEXICON.condition) && plan.filters.is_empty() && !r.share_restated {
        plan.needs_value_filter = true;
    }
    r.decline_unread(&plan, &said_spans, options.missing != MissingAs::Drop);
    if !r.not_understood.is_empty() {
        return Understood::Decline(Decline {
            understood: described(&plan, r.lang),
            not_understood: r.not_understood,
        });
    }
    Understood::Plan(Box::new(plan))
}

#[cfg(test)]
mod tests;
