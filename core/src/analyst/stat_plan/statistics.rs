//! The statistics a request asks for, by their words ("mean", "standard deviation",
//! "90th percentile", "quartiles"), with where they are said.

use super::mentions::Mention;
use super::reader::Reader;
use super::words::{digits, find};
use super::Stat;
use super::StatName;
use crate::analyst::lexicon::LEXICON;
use crate::analyst::profile::Table;

/// The statistics said outside the columns' names.
pub(super) fn statistics_said(
    w: &[String],
    table: &Table,
    mentions: &[Mention],
) -> Vec<(usize, usize, Stat)> {
    // A statistic's word inside a column's name ("daily count", "total sales") is
    // the column, not a statistic.
    let dates = table
        .column_kinds
        .iter()
        .filter(|c| c.kind == "datetime")
        .count();
    let all = statistics_with(w, dates >= 2);
    let outside: Vec<_> = all
        .iter()
        .filter(|(s, e, _)| !mentions.iter().any(|m| *s < m.end && m.start < *e))
        .cloned()
        .collect();
    // "What is the average temperature?" of `AvgTempC`: the word that opens the name is
    // also the statistic, when it is the only one said.
    if outside.is_empty() {
        if let Some(opening) = all
            .iter()
            .find(|(s, e, _)| e - s == 1 && mentions.iter().any(|m| m.start == *s && m.end > *e))
        {
            return vec![opening.clone()];
        }
    }
    outside
}

/// "the median fertilizer application rate": a rate a few words after another
/// statistic names what that statistic is of, not a share.
pub(super) fn rate_of_a_statistic(w: &[String], at: usize) -> bool {
    LEXICON.rate_words.contains(&w[at].as_str())
        && w[at.saturating_sub(4)..at].iter().any(|x| {
            LEXICON
                .statistics
                .iter()
                .any(|(p, n)| p == x && !["share", "count"].contains(n))
        })
}

/// Each statistic once, in the order said.
pub(super) fn distinct_statistics(said: &[(usize, usize, Stat)]) -> Vec<Stat> {
    let mut stats: Vec<Stat> = Vec::new();
    for (_, _, s) in said {
        if !stats.contains(s) {
            stats.push(s.clone());
        }
    }
    // "how many distinct cities": the distinct count, not also the count of rows.
    if stats
        .iter()
        .any(|s| matches!(s.name, StatName::Distinct | StatName::Missing))
    {
        stats.retain(|s| s.name != StatName::Count);
    }
    stats
}

impl Reader<'_> {
    /// The statistics said outside the conditions; a mode's words are taken, so that
    /// "most common value" says no extreme.
    pub(super) fn statistics_outside_conditions(
        &mut self,
        said: Vec<(usize, usize, Stat)>,
    ) -> Vec<(usize, usize, Stat)> {
        // A statistic said inside a condition ("above the average fare") is the
        // condition's, not one to compute.
        let said: Vec<(usize, usize, Stat)> = said
            .into_iter()
            .filter(|(s, _, _)| !self.used[*s])
            .collect();
        // Extremes said outside conditions and outside "most common value".
        for (s, e, st) in &said {
            if st.name == StatName::Mode {
                self.used[*s..*e].fill(true);
            }
        }
        said
    }
}

/// The words of a statistic found at `at`, in request order, with their spans.
pub(super) fn statistics(w: &[String]) -> Vec<(usize, usize, Stat)> {
    statistics_with(w, true)
}

/// The names of the statistics the words ask for, in order, each once.
pub(in crate::analyst) fn statistics_named(w: &[String]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (_, _, s) in statistics(w) {
        if !out.contains(&s.name.code()) {
            out.push(s.name.code());
        }
    }
    out
}

/// `durations`: whether "how many days" may be a duration (the table has two date
/// columns); else it counts the rows (days) that match.
fn statistics_with(w: &[String], durations: bool) -> Vec<(usize, usize, Stat)> {
    let mut out: Vec<(usize, usize, Stat)> = Vec::new();
    let free = |out: &Vec<(usize, usize, Stat)>, s: usize, e: usize| {
        !out.iter().any(|(a, b, _)| s < *b && *a < e)
    };
    for (phrase, name) in LEXICON.statistics.iter() {
        let len = phrase.split(' ').count();
        for at in find(w, phrase) {
            // "number of days between ...": a duration, not a count.
            let next = w.get(at + len).map(String::as_str).unwrap_or("");
            if *name == "count" && LEXICON.duration_units.contains(&next) && durations {
                continue;
            }
            // "the average number of siblings": the count names the measure.
            if *name == "count"
                && LEXICON.count_of_measure.contains(phrase)
                && at > 0
                && LEXICON.measure_statistics.contains(&w[at - 1].as_str())
            {
                continue;
            }
            // "ignoring missing values", "missing as zero": how to handle them, not a count.
            let prev = at.checked_sub(1).map(|j| w[j].as_str()).unwrap_or("");
            // ("the non-null values": the values present.)
            if *name == "missing"
                && (prev == "non"
                    || LEXICON.handling.contains(&prev)
                    || LEXICON.handling_after.contains(&next))
            {
                continue;
            }
            if *name == "share" && rate_of_a_statistic(w, at) {
                continue;
            }
            if free(&out, at, at + len) {
                out.push((at, at + len, Stat::plain(StatName::of_code(name))));
            }
        }
    }
    // Quantiles: "90th percentile", "percentile 90", "p90", "quartiles"; said as a
    // percent (90) or a fraction (0.9).
    let fraction = |v: f64| Some(if v > 1.0 { v / 100.0 } else { v }).filter(|q| *q <= 1.0);
    for (i, x) in w.iter().enumerate() {
        let quantile_word = LEXICON.quantile_words.contains(&x.as_str());
        // "the 25th and 75th percentiles", "the 10th, 50th and 90th percentile": the
        // earlier ones too (the one just before is read below).
        if quantile_word {
            let mut j = i.checked_sub(2);
            while let Some(k) = j {
                if !["and", "y"].contains(&w[k].as_str()) && digits(&w[k]).is_none() {
                    break;
                }
                if let Some(v) = digits(&w[k]).and_then(fraction) {
                    out.push((k, k + 1, Stat::quantile(v)));
                }
                j = k.checked_sub(1);
            }
        }
        let q = if quantile_word {
            let after = w.get(i + 1).and_then(|n| digits(n));
            let before = i.checked_sub(1).and_then(|j| digits(&w[j]));
            after.or(before).and_then(fraction)
        } else if let Some(rest) = x.strip_prefix('p').filter(|r| r.len() == 2) {
            rest.parse::<f64>().ok().map(|v| v / 100.0)
        } else {
            None
        };
        if let Some(q) = q.filter(|q| (0.0..=1.0).contains(q)) {
            out.push((i, i + 1, Stat::quantile(q)));
        }
        if x == "quartiles" || x == "cuartiles" {
            for q in [0.25, 0.5, 0.75] {
                out.push((i, i + 1, Stat::quantile(q)));
            }
        }
        if x == "quartile" || x == "cuartil" {
            let prev = i.checked_sub(1).map(|j| w[j].as_str()).unwrap_or("");
            let q = match prev {
                "first" | "lower" | "primer" | "1st" => Some(0.25),
                "third" | "upper" | "tercer" | "3rd" => Some(0.75),
                _ => None,
            };
            if let Some(q) = q {
                out.push((i, i + 1, Stat::quantile(q)));
            }
        }
    }
    out.sort_by_key(|(s, _, _)| *s);
    out
}
