//! A measure derived from two columns: defined ("revenue is units times unit_price"),
//! asked ("the difference between A and B", "days between start and end") or implied
//! ("the length of a contract": its end minus its start).

use super::mentions::{is_code, is_label_like, is_numeric};
use super::reader::Reader;
use super::text::fmt_value;
use super::words::{digits, find, has_any};
use super::{Derived, DerivedOp};
use crate::analyst::lexicon::LEXICON;
use crate::analyst::request::normalise;

impl Reader<'_> {
    /// "revenue is units times unit_price", "profit = revenue - cost", "the length of
    /// a contract" (end minus start): a derived measure, with the words that name it.
    pub(super) fn derived(&mut self) -> Option<(Derived, Option<String>)> {
        for (phrase, op) in LEXICON.arithmetic.iter() {
            let op = DerivedOp::of_code(op);
            let len = phrase.split(' ').count();
            for at in find(&self.w, phrase) {
                if let Some(found) = self.with_a_number(at, phrase, op) {
                    return Some(found);
                }
                let (Some(a), Some(b)) = (
                    self.mention_before(at).cloned(),
                    self.mention_after(at + len).cloned(),
                ) else {
                    continue;
                };
                let dates = a.kind == "datetime" && b.kind == "datetime";
                if !(is_numeric(&a) && is_numeric(&b) || dates && op == DerivedOp::Difference) {
                    continue;
                }
                // "precio por edad" is also "price by age": "por" and "x" make a
                // product only in a definition ("ingresos es unidades por precio").
                if ["por", "x"].contains(phrase) && !self.names_a_measure(a.start) {
                    continue;
                }
                // "price per sqft" is a ratio; "fare per class" is a grouping.
                let few = |c: &str| {
                    self.table
                        .column_kinds
                        .iter()
                        .any(|k| k.name == c && !k.values.is_empty())
                        || is_label_like(self.table, c)
                };
                let category = |c: &str| {
                    let n = normalise(c);
                    LEXICON
                        .category_words
                        .iter()
                        .any(|k| n.split(' ').any(|t| t.ends_with(k)))
                };
                // "price per bedroom" divides; "fare per class" groups.
                if *phrase == "per"
                    && (dates
                        || (few(&b.column) && !is_code(self.table, &b.column))
                        || category(&b.column))
                {
                    continue;
                }
                // "temperature range (max minus min)": the word before names the
                // measure; it is not a statistic to compute as well.
                // "the ratio of cost divided by units": the same measure, named.
                let j = self.back_over(a.start, &LEXICON.of_words);
                if let Some(j) = j.checked_sub(1) {
                    if LEXICON.derived_ops_words.contains(&self.w[j].as_str()) {
                        self.used[j] = true;
                    }
                }
                let op = if dates { self.date_unit() } else { op };
                let d = Derived {
                    op,
                    a: a.column,
                    b: b.column,
                    ..Derived::default()
                };
                return Some(self.defined(d, a.start, b.end));
            }
        }
        // "difference between A and B", "ratio of A to B", "days between A and B"
        for (lead, join, op) in LEXICON.two_column_measures.iter() {
            let len = lead.split(' ').count();
            for at in find(&self.w, lead) {
                let Some(a) = self.mention_after(at + len).cloned() else {
                    continue;
                };
                if self.w.get(a.end).map(String::as_str) != Some(join) {
                    continue;
                }
                let Some(b) = self.mention_after(a.end + 1).cloned() else {
                    continue;
                };
                let dates = a.kind == "datetime" && b.kind == "datetime";
                let op = match (DerivedOp::of_code(op), dates) {
                    (DerivedOp::Difference | DerivedOp::Days, true) => self.date_unit(),
                    (DerivedOp::Hours, true) => DerivedOp::Hours,
                    (op @ (DerivedOp::Difference | DerivedOp::Ratio | DerivedOp::Sum), false)
                        if is_numeric(&a) && is_numeric(&b) =>
                    {
                        op
                    }
                    _ => continue,
                };
                self.used[at..b.end].fill(true);
                let end = b.end;
                let (a, b) = if dates {
                    (b.column, a.column)
                } else {
                    (a.column, b.column)
                };
                let d = Derived {
                    op,
                    a,
                    b,
                    ..Derived::default()
                };
                // "Create a new column total_nights as the sum of A and B": named.
                return Some(self.defined(d, at, end));
            }
        }
        // "length"/"duration" with a start and an end date column.
        let duration = &LEXICON.duration;
        if has_any(&self.w, duration) {
            let dates = self.datetime_columns();
            let role = |c: &str, words: &[&str]| {
                let n = normalise(c);
                words.iter().any(|w| n.split(' ').any(|x| x == *w))
            };
            let start = dates.iter().find(|c| role(c, &LEXICON.period_starts));
            let end = dates.iter().find(|c| role(c, &LEXICON.period_ends));
            if let (Some(s), Some(e)) = (start, end) {
                for k in 0..self.w.len() {
                    if duration.contains(&self.w[k].as_str()) {
                        self.used[k] = true;
                    }
                }
                return Some((
                    Derived {
                        op: self.date_unit(),
                        a: e.clone(),
                        b: s.clone(),
                        ..Derived::default()
                    },
                    None,
                ));
            }
        }
        None
    }

    /// "2024 - model_year", "220 minus SeatsSold", "price divided by 1000": a
    /// numeric column and a number on either side of an arithmetic word.
    fn with_a_number(
        &mut self,
        at: usize,
        phrase: &str,
        op: DerivedOp,
    ) -> Option<(Derived, Option<String>)> {
        if !LEXICON.number_ops.contains(&phrase) {
            return None;
        }
        let len = phrase.split(' ').count();
        let number = |k: usize| self.w.get(k).and_then(|x| digits(x));
        let before = self.mention_before(at).filter(|m| is_numeric(m)).cloned();
        let after = self
            .mention_after(at + len)
            .filter(|m| is_numeric(m))
            .cloned();
        let (d, start, end) = match (before, after) {
            (None, Some(b)) => {
                let k = at.checked_sub(1)?;
                let x = number(k)?;
                let d = Derived {
                    op,
                    a: fmt_value(x),
                    a_value: Some(x),
                    b: b.column,
                    ..Derived::default()
                };
                (d, k, b.end)
            }
            (Some(a), None) => {
                let x = number(at + len)?;
                let d = Derived {
                    op,
                    a: a.column,
                    b: fmt_value(x),
                    b_value: Some(x),
                    ..Derived::default()
                };
                (d, a.start, at + len + 1)
            }
            _ => return None,
        };
        Some(self.defined(d, start, end))
    }

    /// The words `start..end` are the measure `d`: taken, with its name ("revenue is
    /// ...") and the sentence that makes it ("Create a new column ...").
    fn defined(&mut self, d: Derived, start: usize, end: usize) -> (Derived, Option<String>) {
        self.used[start..end].fill(true);
        let name = self.derived_name(start);
        if name.is_some() {
            self.statistic_named(start);
        }
        self.creation(start);
        (d, name)
    }

    /// "where the range of a day is MaxTemp minus MinTemp": a statistic's word in the
    /// name defined names the measure, there and wherever the request says it ("the
    /// mean daily temperature range"); it is no statistic to compute.
    fn statistic_named(&mut self, start: usize) {
        // Within the sentence or clause of the definition.
        let opens = self.sentence_starts.iter().chain(&self.clause_starts);
        let from = opens
            .filter(|&&k| k < start)
            .max()
            .map_or(0, |&k| k)
            .max(start.saturating_sub(7));
        let opener = (from..start.saturating_sub(1))
            .rev()
            .find(|&k| LEXICON.condition.contains(&self.w[k].as_str()));
        let named: Vec<String> = (opener.map_or(from, |k| k + 1)..start.saturating_sub(1))
            .filter(|&k| {
                let x = self.w[k].as_str();
                LEXICON.statistics.iter().any(|(p, _)| *p == x)
            })
            .map(|k| self.w[k].clone())
            .collect();
        // "where" opens the definition of the name here, not a condition.
        if let Some(k) = opener.filter(|_| !named.is_empty()) {
            self.used[k] = true;
        }
        for k in 0..self.w.len() {
            if named.contains(&self.w[k]) {
                self.used[k] = true;
            }
        }
    }

    /// "Create a new column age = ...", "Add a column with the number of empty seats
    /// (220 minus SeatsSold)": a ticket's sentence that makes the measure; its words
    /// before the formula describe what the formula says.
    fn creation(&mut self, start: usize) {
        let from = start.saturating_sub(16);
        let made = (from..start).rev().find(|&k| {
            LEXICON.create_words.contains(&self.w[k].as_str())
                && self.w[k + 1..(k + 4).min(start)]
                    .iter()
                    .any(|x| LEXICON.column_words.contains(&x.as_str()))
        });
        if let Some(k) = made {
            self.used[k..start].fill(true);
        }
    }

    fn date_unit(&self) -> DerivedOp {
        if has_any(&self.w, &LEXICON.hours) {
            DerivedOp::Hours
        } else {
            DerivedOp::Days
        }
    }

    /// Whether the words before `at` define a measure ("revenue is", "ingresos es").
    fn names_a_measure(&self, at: usize) -> bool {
        at >= 2 && LEXICON.equals.contains(&self.w[at - 1].as_str())
    }

    /// "revenue is ...", "profit = ...": the one word before is/es/equals at `at`.
    fn derived_name(&mut self, at: usize) -> Option<String> {
        let verb = at.checked_sub(1)?;
        // "SeatsPerKm defined as ...": two words of the verb.
        let defined_as = self.w[verb] == "as"
            && verb >= 1
            && LEXICON.defining_verbs.contains(&self.w[verb - 1].as_str());
        let verb = if defined_as { verb - 1 } else { verb };
        if !defined_as && !LEXICON.equals.contains(&self.w[verb].as_str()) {
            return None;
        }
        if defined_as {
            self.used[verb + 1] = true;
        }
        let name_at = verb.checked_sub(1)?;
        let name = self.w[name_at].clone();
        if self
            .mentions
            .iter()
            .any(|m| m.start <= name_at && name_at < m.end)
        {
            return None;
        }
        self.used[verb] = true;
        // "GDP per capita is ...": the longest run of words before the verb that the
        // request also says elsewhere is the name.
        // Its words may name a column too ("GDP" of `gdp_usd`): defined here, they are
        // the measure's name, not that column.
        let plain = |k: usize| {
            let x = self.w[k].as_str();
            !LEXICON.statistics.iter().any(|(p, _)| *p == x) && !LEXICON.not_a_name.contains(&x)
        };
        let mut phrase: Vec<String> = vec![name.clone()];
        for len in (2..=3).rev() {
            let Some(from) = (name_at + 1).checked_sub(len) else {
                continue;
            };
            let p: Vec<String> = self.w[from..=name_at].to_vec();
            if (from..=name_at).all(plain) && find(&self.w, &p.join(" ")).len() >= 2 {
                phrase = p;
                break;
            }
        }
        // Every mention of the name is the derived measure.
        let joined = phrase.join(" ");
        for at in find(&self.w, &joined) {
            self.used[at..at + phrase.len()].fill(true);
        }
        for k in 0..self.w.len() {
            if phrase.len() == 1 && (self.w[k] == name || self.w[k] == format!("{name}s")) {
                self.used[k] = true;
            }
        }
        Some(joined)
    }
}
