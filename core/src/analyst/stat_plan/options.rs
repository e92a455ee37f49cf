//! How the statistics are computed and said, beyond which ones: rounding, sample or
//! population, missing values dropped or zero, a test's significance level.

use super::reader::Reader;
use super::words::{digits, has, has_any, num};
use super::MissingAs;
use crate::analyst::lexicon::LEXICON;

/// How the statistics are computed and said, read from the words.
pub(super) struct Options {
    /// Rounding.
    pub(super) decimals: Option<u32>,
    /// Population statistics (ddof 0), not sample ones.
    pub(super) population: bool,
    pub(super) missing: MissingAs,
}

impl Options {
    /// The options the words `w` say (the defaults where they say none); `filled` is
    /// what the missing values are filled with, read before ([`Reader::missing_filled`]).
    pub(super) fn read(w: &[String], filled: Option<MissingAs>) -> Options {
        let decimals = decimals(w);
        let population = has_any(w, &LEXICON.population);
        let missing = match filled {
            Some(with) => with,
            None if has_any(w, &LEXICON.missing_as_zero) => MissingAs::Zero,
            None => MissingAs::Drop,
        };
        Options {
            decimals,
            population,
            missing,
        }
    }
}

impl Reader<'_> {
    /// "Fill the missing values of BMI with the mean", "replace nulls by the median",
    /// "rellena los vacíos con la mediana": a fill verb, missing values named within a
    /// few words of it, then "with" and what they are filled with. Its words are the
    /// plan's (the mean it names is not a statistic to compute).
    pub(super) fn missing_filled(&mut self) -> Option<MissingAs> {
        let w = &self.w;
        let one = |k: usize, list: &[&str]| list.iter().any(|p| has(&w[k..=k], p));
        for verb in (0..w.len()).filter(|&i| !self.used[i] && one(i, &LEXICON.fill_verbs)) {
            let Some(with) =
                (verb + 1..(verb + 10).min(w.len())).find(|&j| one(j, &LEXICON.fill_with))
            else {
                continue;
            };
            let named_missing =
                (verb.saturating_sub(4)..with).any(|k| one(k, &LEXICON.missing_nouns));
            // What follows "with", past an article or "its": the first fill value.
            let value = (with + 1..(with + 4).min(w.len())).find_map(|k| {
                LEXICON
                    .fill_values
                    .iter()
                    .find(|(p, _)| has(&w[k..=k], p))
                    .map(|(_, v)| (k, MissingAs::of_code(v)))
            });
            let Some((at, value)) = value.filter(|_| named_missing) else {
                continue;
            };
            let from = verb.saturating_sub(4).min(
                (verb.saturating_sub(4)..verb)
                    .find(|&k| one(k, &LEXICON.missing_nouns))
                    .unwrap_or(verb),
            );
            self.used[from..=at].fill(true);
            return Some(value);
        }
        None
    }
}

impl Reader<'_> {
    /// "dropping rows where the KPI score is missing", "rows in which BMI is null": how
    /// missing values are handled (dropped, as always), not a condition on values.
    pub(super) fn missing_dropped(&mut self) {
        self.missing_said_dropped();
        for at in 0..self.w.len() {
            if self.used[at] || !LEXICON.condition.contains(&self.w[at].as_str()) {
                continue;
            }
            // Past a column named and linking words, a missing noun ends it.
            let mut k = at + 1;
            while k < self.w.len() && k < at + 8 {
                if let Some(m) = self.mention_at(k) {
                    k = m.end;
                } else if LEXICON.linking.contains(&self.w[k].as_str()) {
                    k += 1;
                } else {
                    break;
                }
            }
            // Handling only when said so ("dropping rows where", "... are ignored"):
            // "the patients whose BMI is missing" are rows to count, not to drop.
            let said = |x: &String| {
                LEXICON.handling.contains(&x.as_str())
                    || LEXICON.handling_after.contains(&x.as_str())
            };
            let handled = self.w[at.saturating_sub(5)..at].iter().any(said)
                || self.w[(k + 1).min(self.w.len())..].iter().take(3).any(said);
            let missing = self
                .w
                .get(k)
                .is_some_and(|x| LEXICON.missing_nouns.contains(&x.as_str()));
            if handled && missing {
                // The column keeps its words: it is still the measure it names.
                for j in at..=k {
                    let named = self.mentions.iter().any(|m| m.start <= j && j < m.end);
                    self.used[j] |= !named;
                }
            } else if missing && self.counting {
                // "Count the patients whose BMI is missing": the count of its missing
                // values; the condition word is read with them.
                self.used[at] = true;
            }
        }
        // "consider only the non-null values of BMI": the values kept, as always.
        for at in 0..self.w.len() {
            let mut j = at + 1;
            while self
                .w
                .get(j)
                .is_some_and(|x| LEXICON.linking.contains(&x.as_str()))
            {
                j += 1;
            }
            let kept = self
                .w
                .get(j)
                .is_some_and(|x| LEXICON.negation_words.contains(&x.as_str()))
                && self
                    .w
                    .get(j + 1)
                    .is_some_and(|x| LEXICON.missing_nouns.contains(&x.as_str()));
            if LEXICON.condition.contains(&self.w[at].as_str()) && !self.used[at] && kept {
                self.used[at] = true;
            }
        }
    }
}

impl Reader<'_> {
    /// A column's missing values named as rows to count ("have no PM2.5 value", "whose
    /// pm25 is missing", "missing pm25 values"): the column and the words' span.
    pub(super) fn missing_of(&self) -> Option<(String, usize, usize)> {
        let is_in =
            |k: usize, words: &[&str]| self.w.get(k).is_some_and(|x| words.contains(&x.as_str()));
        let (missing, values) = (&LEXICON.missing_nouns, &LEXICON.value_nouns);
        for m in &self.mentions {
            if self.used[m.start] {
                continue;
            }
            // "no pm25 value"
            if m.start > 0
                && LEXICON
                    .negation_words
                    .contains(&self.w[m.start - 1].as_str())
            {
                return Some((
                    m.column.clone(),
                    m.start - 1,
                    m.end + usize::from(is_in(m.end, values)),
                ));
            }
            // "pm25 (values) is missing"
            let mut k = m.end + usize::from(is_in(m.end, values));
            k += usize::from(is_in(k, &LEXICON.linking));
            if is_in(k, missing) {
                return Some((m.column.clone(), m.start, k + 1));
            }
            // "missing (values of) pm25"
            let mut j = m.start;
            while j > 0 && (is_in(j - 1, &LEXICON.linking) || is_in(j - 1, values)) {
                j -= 1;
            }
            if j > 0 && is_in(j - 1, missing) {
                return Some((m.column.clone(), j - 1, m.end));
            }
        }
        None
    }

    /// "with missing prices removed first", "missing values dropped": missing values
    /// (of a column) said dropped, after them. The column keeps its words.
    fn missing_said_dropped(&mut self) {
        for at in 0..self.w.len() {
            if self.used[at] || !LEXICON.missing_nouns.contains(&self.w[at].as_str()) {
                continue;
            }
            let (mut k, mut values) = (at + 1, false);
            if let Some(m) = self.mention_at(k) {
                k = m.end;
            } else if self
                .w
                .get(k)
                .is_some_and(|x| x == "values" || x == "valores")
            {
                (k, values) = (k + 1, true);
            }
            if !self
                .w
                .get(k)
                .is_some_and(|x| LEXICON.dropped_after.contains(&x.as_str()))
            {
                continue;
            }
            self.used[at] = true;
            self.used[k] = true;
            self.used[at + 1] |= values;
            if self
                .w
                .get(k + 1)
                .is_some_and(|x| LEXICON.beforehand.contains(&x.as_str()))
            {
                self.used[k + 1] = true;
            }
        }
    }
}

/// "rounded to 2 decimals", "con 3 decimales", "to the nearest integer".
pub(in crate::analyst) fn decimals(w: &[String]) -> Option<u32> {
    for (i, x) in w.iter().enumerate() {
        if x.starts_with("decimal") || x == "places" || x == "digits" || x == "cifras" {
            if let Some(v) = i.checked_sub(1).and_then(|j| num(&w[j])) {
                return Some(v as u32);
            }
        }
    }
    if has_any(w, &LEXICON.whole_number) {
        return Some(0);
    }
    None
}

/// The significance level said: "alpha 0.01", "alpha = 0.1", "at the 1% level",
/// "significance level of 0.01", "nivel de significación 0,01", "alfa del 10%".
pub(super) fn alpha(w: &[String]) -> Option<f64> {
    let as_level = |v: f64| if v >= 1.0 { v / 100.0 } else { v };
    let ok = |v: f64| (v > 0.0 && v < 0.5).then_some(v);
    for (i, x) in w.iter().enumerate() {
        if LEXICON.alpha_words.contains(&x.as_str()) {
            if let Some(v) = w[i + 1..(i + 5).min(w.len())]
                .iter()
                .find_map(|x| digits(x))
            {
                return ok(as_level(v));
            }
        }
        if x == "level" || x == "nivel" {
            if let Some(v) = i.checked_sub(1).and_then(|j| digits(&w[j])) {
                return ok(as_level(v));
            }
        }
    }
    None
}
