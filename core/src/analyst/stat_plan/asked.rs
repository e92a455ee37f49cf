//! The first look at a request: what it asks for (statistics, a test, an extreme, a
//! derived measure, a task outside statistics), and whether it is this planner's
//! question or another skill's.

use super::mentions::{camel_apart, Mention};
use super::reader::Reader;
use super::words::{find, has, has_any};
use super::StatName;
use super::{Filter, Stat};
use crate::analyst::lexicon::LEXICON;
use crate::analyst::profile::Table;
use crate::analyst::request::normalise;

/// What a request asks for at first sight, before any of its words is read as a part
/// of the plan.
pub(super) struct Asked {
    /// Statistics and tests named that this planner does not compute.
    pub(super) unsupported: Vec<&'static str>,
    pub(super) correlation: bool,
    /// A correlation's method, coefficient or p-value named.
    corr_precise: bool,
    pub(super) outliers: bool,
    /// Outliers by a method named (IQR, z-scores).
    precise_outliers: bool,
    pub(super) normality: bool,
    /// A question word ("which", "what", "who").
    pub(super) question: bool,
    /// "highest", "lowest" and the like, anywhere (in a column's name too).
    extreme: bool,
    /// Words that may make a derived measure ("times", "minus", "days between").
    pub(super) derived_words: bool,
    /// A task outside every skill (a forecast, a translation).
    pub(super) out_of_scope: bool,
}

/// Every interpolation the words name is the linear one, pandas' and numpy's default
/// ("(linear interpolation)", "its default (linear) interpolation"): no other method.
pub(in crate::analyst) fn default_interpolation(w: &[String]) -> bool {
    w.iter().enumerate().all(|(i, x)| {
        !x.starts_with("interpola")
            || w[i.saturating_sub(2)..i]
                .iter()
                .any(|b| LEXICON.default_interpolation.contains(&b.as_str()))
    })
}

impl Asked {
    /// What the words `w` ask for.
    pub(super) fn read(w: &[String]) -> Asked {
        let unsupported: Vec<&'static str> = LEXICON
            .unsupported_statistics
            .iter()
            .copied()
            .filter(|p| has(w, p))
            .filter(|p| !(p.starts_with("interpola") && default_interpolation(w)))
            .collect();
        // "Kendall's tau between x and y": a method's name asks for a correlation.
        let correlation = has_any(w, &LEXICON.correlation_words)
            || LEXICON.correlation_methods.iter().any(|(p, _)| has(w, p));
        let corr_precise = has_any(w, &LEXICON.correlation_precise);
        // "How many rows have a z-score above 3": outliers by z-score.
        let outliers =
            has_any(w, &LEXICON.outlier_words) || LEXICON.z_score.iter().any(|p| has(w, p));
        let normality = has_any(w, &LEXICON.normality_words);
        let question = has_any(w, &LEXICON.question)
            || w.first()
                .is_some_and(|x| LEXICON.asking_verbs.contains(&x.as_str()));
        let high0 = has_any(w, &LEXICON.high);
        let low0 = has_any(w, &LEXICON.low);
        let derived_words = has_any(w, &LEXICON.derived_words);
        let out_of_scope = has_any(w, &LEXICON.out_of_scope);
        let precise_outliers = outliers && has_any(w, &LEXICON.precise_outliers);
        // A significance test of anything but a correlation (whose p-value is
        // computed) is no statistic of this planner: it is declined, never routed to
        // another skill as a plain difference.
        let mut unsupported = unsupported;
        let level = has_any(w, &LEXICON.significance_level);
        if !correlation
            && !normality
            && !level
            && unsupported.is_empty()
            && has_any(w, &LEXICON.significance_words)
        {
            unsupported.push("significance test");
        }
        Asked {
            unsupported,
            correlation,
            corr_precise,
            outliers,
            precise_outliers,
            normality,
            question,
            extreme: high0 || low0,
            derived_words,
            out_of_scope,
        }
    }

    /// Statistics of measures are asked (no correlation, outliers or normality).
    pub(super) fn describing(&self) -> bool {
        !self.correlation && !self.outliers && !self.normality
    }

    /// Whether the request is another skill's at first sight: an anomaly search, a task
    /// outside every skill with no statistic, nothing this planner answers, or a
    /// grouping by a period of the time column.
    pub(super) fn is_theirs(
        &self,
        w: &[String],
        table: &Table,
        mentions: &[Mention],
        stats: &[(usize, usize, Stat)],
    ) -> bool {
        if has_any(w, &LEXICON.stat_anomaly) || (self.out_of_scope && stats.is_empty()) {
            return true;
        }
        let conditioned = w.iter().any(|x| {
            x.len() >= 2
                && table
                    .column_kinds
                    .iter()
                    .any(|c| c.kind != "numeric" && c.values.iter().any(|v| normalise(v) == *x))
        }) || LEXICON.comparators.iter().any(|(p, _, _)| has(w, p));
        let mine_signal = !stats.is_empty()
            || (self.correlation && conditioned)
            || !self.unsupported.is_empty()
            || (self.correlation && self.corr_precise)
            || self.precise_outliers
            || (self.outliers && table.time.is_empty())
            || self.normality
            || (self.question && self.extreme);
        if !mine_signal {
            return true;
        }
        // Grouping by a period of the time column ("which weekday", "per month") is the
        // aggregate skill's, unless the period is a column of its own that was named.
        let by_period = has_any(w, &LEXICON.period_groups);
        // A word of the column's name, not any part of it ("holiday", "times" are not).
        let period_column = mentions.iter().any(|m| {
            normalise(&camel_apart(&m.column))
                .split(' ')
                .any(|t| LEXICON.period_column_words.contains(&t))
        });
        by_period && !table.time.is_empty() && !period_column
    }
}

impl Reader<'_> {
    /// A share of rows where a yes/no column or a value holds; "what share of total
    /// revenue" is the aggregate skill's share of a total.
    /// ("What percentage of the houses are in condition 5?": a share of the rows a
    /// condition keeps, when every column named is the condition's.)
    pub(super) fn asks_a_share(&self, stats: &[(usize, usize, Stat)], filters: &[Filter]) -> bool {
        let said_value = self.w.iter().any(|x| {
            self.table.column_kinds.iter().any(|c| {
                c.kind != "numeric" && c.values.iter().any(|v| normalise(v) == *x && x.len() >= 2)
            })
        });
        let yes_no_named = self.mentions.iter().any(|m| {
            self.table
                .column_kinds
                .iter()
                .any(|c| c.name == m.column && c.distinct == 2)
        });
        let only_conditions =
            !filters.is_empty() && self.mentions.iter().all(|m| self.used[m.start]);
        stats.iter().any(|(_, _, s)| s.name == StatName::Share)
            && (said_value || yes_no_named || only_conditions || self.missing_of().is_some())
    }

    /// The other skills' questions stay theirs: periods, months, shares, changes,
    /// trends, top N, and a plain grouped total/mean/count that aggregate.py answers.
    pub(super) fn is_another_skills(&self, asked: &Asked, share: bool, derived: bool) -> bool {
        let by_period = LEXICON.group.iter().any(|g| {
            find(&self.w, g).into_iter().any(|at| {
                self.w
                    .get(at + 1)
                    .is_some_and(|x| LEXICON.periods.contains(&x.as_str()))
            })
        }) || has_any(&self.w, &LEXICON.over_time);
        // ("the mean harvest loss percentage" of `harvest_loss_pct`: a column's word.)
        let other_shape = self.said_free(&LEXICON.other_shape) || self.said_free(&LEXICON.months);
        (by_period || (other_shape && !share))
            && !derived
            && asked.describing()
            && self.not_understood.is_empty()
    }
}
