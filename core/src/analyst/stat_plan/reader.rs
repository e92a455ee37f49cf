//! The reader of one request: its words, the columns they name, which words a part
//! of the plan has used, and what it could not read; with the helpers that find the
//! column named next to a word.

use super::asked::Asked;
use super::mentions::{is_numeric, Mention};
use super::statistics::statistics;
use super::words::find;
use super::Stat;
use super::StatName;
use crate::analyst::lexicon::LEXICON;
use crate::analyst::profile::Table;
use crate::analyst::request::Lang;

/// A request being read into a plan.
pub(super) struct Reader<'a> {
    pub(super) w: Vec<String>,
    pub(super) table: &'a Table,
    pub(super) mentions: Vec<Mention>,
    /// Word positions the plan has used (statistics, conditions, derived measures).
    pub(super) used: Vec<bool>,
    pub(super) not_understood: Vec<String>,
    pub(super) lang: Lang,
    /// "in March" with a plain total or mean is the aggregate skill's question.
    pub(super) months_to_aggregate: bool,
    /// A count is asked ("how many passengers survived").
    pub(super) counting: bool,
    /// Where the count's words start.
    pub(super) count_at: Option<usize>,
    /// Statistics of measures are asked (no correlation, outliers or normality).
    pub(super) describing: bool,
    /// Where each sentence of the request starts, in words ("Revenue is units times
    /// price. Which region ...": "which" opens a question).
    pub(super) sentence_starts: Vec<usize>,
    /// Where clauses start (sentences, and after a comma or a colon).
    pub(super) clause_starts: Vec<usize>,
    /// "z-scores above 3", "a z-score threshold of 2.5": the outliers' threshold.
    pub(super) z_threshold: Option<f64>,
    /// An outliers question.
    pub(super) outliers: bool,
    /// A condition restated the share's own ("where Smoker is Yes"): its words are read.
    pub(super) share_restated: bool,
    /// Both sides of a yes/no column were asked for ("smokers and non-smokers"): the
    /// group is this planner's to answer, each side in its own slot.
    pub(super) both_sides: bool,
}

impl<'a> Reader<'a> {
    /// A reader of the words `w`, which name the columns `mentions` and ask for the
    /// statistics `stats`.
    pub(super) fn new(
        w: Vec<String>,
        table: &'a Table,
        mentions: Vec<Mention>,
        lang: Lang,
        asked: &Asked,
        stats: &[(usize, usize, Stat)],
    ) -> Reader<'a> {
        Reader {
            mentions,
            used: vec![false; w.len()],
            w,
            table,
            not_understood: Vec::new(),
            lang,
            months_to_aggregate: (stats.is_empty()
                || stats.len() == 1 && stats[0].2.name.aggregates())
                && !asked.derived_words,
            counting: stats.iter().any(|(_, _, s)| s.name == StatName::Count),
            describing: asked.describing(),
            sentence_starts: Vec::new(),
            clause_starts: Vec::new(),
            z_threshold: None,
            outliers: asked.outliers,
            share_restated: false,
            both_sides: false,
            count_at: stats
                .iter()
                .find(|(_, _, s)| s.name == StatName::Count)
                .map(|(at, _, _)| *at),
        }
    }
}

impl Reader<'_> {
    pub(super) fn say(&self, en: &str, es: &str) -> String {
        self.lang.pick(en, es).to_string()
    }

    pub(super) fn mention_at(&self, start: usize) -> Option<&Mention> {
        self.mentions.iter().find(|m| m.start == start)
    }

    /// Where the run of `skip` words just before `at` starts ("price *is* above").
    pub(super) fn back_over(&self, at: usize, skip: &[&str]) -> usize {
        let mut j = at;
        while j > 0 && skip.contains(&self.w[j - 1].as_str()) {
            j -= 1;
        }
        j
    }

    /// The mention ending just before `at` (articles skipped).
    pub(super) fn mention_before(&self, at: usize) -> Option<&Mention> {
        let j = self.back_over(at, &LEXICON.articles);
        self.mentions.iter().find(|m| m.end == j)
    }

    pub(super) fn mention_after(&self, at: usize) -> Option<&Mention> {
        let mut j = at;
        while j < self.w.len() && LEXICON.of_words.contains(&self.w[j].as_str()) {
            j += 1;
        }
        self.mention_at(j)
    }

    /// A numeric column named just after a condition's value, past a unit or a
    /// preposition ("3 bedrooms", "90 in math", "10 mm of precipitation").
    pub(super) fn mention_after_value(&self, at: usize) -> Option<Mention> {
        let mut k = at;
        while k < self.w.len() && k < at + 2 && self.mention_at(k).is_none() {
            if !LEXICON.after_a_value.contains(&self.w[k].as_str()) {
                return None;
            }
            k += 1;
        }
        self.mention_at(k)
            .filter(|m| is_numeric(m) && !self.used[m.start])
            .cloned()
    }

    pub(super) fn kind_of(&self, column: &str) -> String {
        self.table
            .column_kinds
            .iter()
            .find(|c| c.name == column)
            .map(|c| c.kind.clone())
            .unwrap_or_default()
    }

    pub(super) fn datetime_columns(&self) -> Vec<String> {
        self.table
            .column_kinds
            .iter()
            .filter(|c| c.kind == "datetime")
            .map(|c| c.name.clone())
            .collect()
    }

    /// Whether a statistic's words cover position `at` ("standard" of "standard
    /// deviation" is never the value `standard` of a column).
    pub(super) fn stat_at(&self, at: usize) -> bool {
        statistics(&self.w)
            .iter()
            .any(|(s, e, _)| *s <= at && at < *e)
    }

    /// Whether one of `words` is said outside the parts read so far; a word inside a
    /// column's name ("max" of `temp_max`) is the column's.
    /// The word after `at` when it looks like a noun that names no column and was not
    /// read ("which pilot", "by gender"): unread, alphabetic, not in `stop`, and not
    /// the first word of a statistic.
    pub(super) fn unknown_noun_after(&self, at: usize, stop: &[&str]) -> Option<String> {
        let next = self.w.get(at + 1)?.as_str();
        let noun = !self.used[at]
            && !self.used[at + 1]
            && self.mention_at(at + 1).is_none()
            && next.len() >= 3
            && next.chars().all(|c| c.is_alphabetic())
            && !stop.contains(&next)
            && !LEXICON
                .statistics
                .iter()
                .any(|(p, _)| p.split(' ').next() == Some(next));
        noun.then(|| next.to_string())
    }

    /// Mark every occurrence of `phrases` as read.
    pub(super) fn read_phrases(&mut self, phrases: &[&str]) {
        for p in phrases {
            let n = p.split(' ').count();
            for at in find(&self.w, p) {
                self.used[at..at + n].iter_mut().for_each(|u| *u = true);
            }
        }
    }

    pub(super) fn said_free(&self, words: &[&str]) -> bool {
        words.iter().any(|p| {
            find(&self.w, p).into_iter().any(|at| {
                !self.used[at] && !self.mentions.iter().any(|m| m.start <= at && at < m.end)
            })
        })
    }
}
