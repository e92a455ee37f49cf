//! Conditions named by a value: a yes/no column said as a verb ("passengers who
//! survived"), and the values of a column with few of them ("female passengers", "en
//! Bilbao", "first class").

use super::mentions::{is_numeric, is_yes_no};
use super::reader::Reader;
use super::text::fmt_value;
use super::unread::is_rows_word;
use super::words::{digits, find};
use super::{Filter, FilterOp};
use crate::analyst::lexicon::LEXICON;
use crate::analyst::request::{normalise, Lang};

impl Reader<'_> {
    /// "passengers who survived", "who did not survive", "que no sobrevivieron": a
    /// yes/no column (two values) named after who/that/que.
    pub(super) fn yes_no_filters(&mut self, out: &mut Vec<Filter>) {
        // "How many passengers survived?", "how many did not survive": a yes/no
        // column said as a verb in a count (not "count of survived").
        if self.counting {
            for m in self.mentions.clone() {
                let two = self
                    .table
                    .column_kinds
                    .iter()
                    .any(|c| c.name == m.column && c.distinct == 2);
                let before = m.start.checked_sub(1).map(|j| self.w[j].as_str());
                // After the count ("how many passengers survived"), never the label
                // a question asks for ("which sex has ...").
                let after_count = self.count_at.is_some_and(|c| m.start > c);
                if !two
                    || !after_count
                    || before.is_some_and(|b| LEXICON.question.contains(&b))
                    || self.used[m.start]
                    || before.is_none_or(|b| LEXICON.noun_markers.contains(&b))
                {
                    continue;
                }
                let negated = matches!(before, Some("not" | "no" | "never" | "nunca"));
                self.used[m.start..m.end].fill(true);
                if negated {
                    self.used[m.start - 1] = true;
                }
                out.push(Filter {
                    column: m.column.clone(),
                    op: if negated {
                        FilterOp::IsFalse
                    } else {
                        FilterOp::IsTrue
                    },
                    ..Filter::default()
                });
            }
        }
        // "the average age of survivors", "mean fare for survivors": a 0/1 column
        // named after the measure is whose rows, not a second measure.
        if self.describing {
            for m in self.mentions.clone() {
                let ones = self.table.column_kinds.iter().any(|c| {
                    c.name == m.column
                        && c.values.len() == 2
                        && c.values.iter().all(|v| v == "0" || v == "1")
                });
                let j = self.back_over(m.start, &LEXICON.articles);
                let before = j.checked_sub(1).map(|j| self.w[j].as_str());
                let measure_before = self.mentions.iter().any(|o| {
                    o.end <= m.start && o.column != m.column && is_numeric(o) && !self.used[o.start]
                });
                if ones
                    && !self.used[m.start]
                    && measure_before
                    && before.is_some_and(|b| LEXICON.whose_rows.contains(&b))
                {
                    self.used[m.start..m.end].fill(true);
                    out.push(Filter {
                        column: m.column.clone(),
                        op: FilterOp::IsTrue,
                        ..Filter::default()
                    });
                }
            }
        }
        self.yes_no_adjectives(out);
        for at in 0..self.w.len() {
            // "Which gender has ...": a question, not "passengers which survived".
            if !LEXICON.relatives.contains(&self.w[at].as_str()) || self.used[at] || at == 0 {
                continue;
            }
            let mut k = at + 1;
            let mut negated = false;
            for neg in LEXICON.verb_negations.iter() {
                if find(&self.w[k..], neg).first() == Some(&0) {
                    negated = true;
                    k += neg.split(' ').count();
                    break;
                }
            }
            let Some(x) = self.w.get(k).cloned() else {
                continue;
            };
            let stem = |s: &str| -> String {
                let s = s
                    .strip_suffix("ed")
                    .or_else(|| s.strip_suffix("ieron"))
                    .unwrap_or(s);
                let s = s
                    .strip_suffix('d')
                    .or_else(|| s.strip_suffix('e'))
                    .or_else(|| s.strip_suffix('o'))
                    .unwrap_or(s);
                s.to_string()
            };
            let col = self.table.column_kinds.iter().find(|c| {
                let n = normalise(&c.name);
                c.distinct == 2
                    && !n.contains(' ')
                    && n.len() >= 4
                    && (n == x || stem(&n) == stem(&x))
            });
            let Some(col) = col.map(|c| c.name.clone()) else {
                continue;
            };
            self.used[at..=k].fill(true);
            out.push(Filter {
                column: col,
                op: if negated {
                    FilterOp::IsFalse
                } else {
                    FilterOp::IsTrue
                },
                ..Filter::default()
            });
        }
    }

    /// "admitted patients", "remote employees", "pacientes ingresados", "employees
    /// who are not remote": a yes/no column said as an adjective of the rows.
    fn yes_no_adjectives(&mut self, out: &mut Vec<Filter>) {
        if !self.describing && !self.counting {
            return;
        }
        for m in self.mentions.clone() {
            if !is_yes_no(self.table, &m.column) || self.used[m.start] {
                continue;
            }
            let word = |k: Option<usize>| k.and_then(|k| self.w.get(k)).map_or("", |x| x.as_str());
            let negated = LEXICON
                .negation_words
                .contains(&word(m.start.checked_sub(1)));
            let from = if negated { m.start - 1 } else { m.start };
            let rows = |x: &str| is_rows_word(self, x);
            let before = (word(from.checked_sub(2)), word(from.checked_sub(1)));
            let predicate = LEXICON.predicate_openers.contains(&before);
            let start = if predicate {
                from - 2
            } else if rows(word(Some(m.end))) || rows(before.1) {
                from
            } else {
                continue;
            };
            self.used[start..m.end].fill(true);
            out.push(Filter {
                column: m.column.clone(),
                op: if negated {
                    FilterOp::IsFalse
                } else {
                    FilterOp::IsTrue
                },
                ..Filter::default()
            });
        }
    }

    /// Values of a column with few of them, said in the request: "female
    /// passengers", "students who completed the course" (`completed`), "en Bilbao",
    /// "first class" on a class column of 1, 2 and 3. A word that names values of two
    /// columns is not guessed at.
    pub(super) fn value_filters(&mut self, out: &mut Vec<Filter>) {
        let mut hits: Vec<(String, String, usize, usize)> = Vec::new();
        for c in &self.table.column_kinds {
            if c.kind == "numeric" || c.kind == "datetime" || c.values.is_empty() {
                continue;
            }
            for v in &c.values {
                let n = normalise(v);
                if n.is_empty() || digits(&n).is_some() {
                    continue;
                }
                let mut said: Vec<String> = vec![n.clone()];
                if let Some(alts) = LEXICON.value_synonyms.get(&n) {
                    said.extend(alts.iter().map(|a| a.to_string()));
                }
                // "Widgets" for the value `Widget`
                if n.len() >= 3 && !n.contains(' ') && !n.ends_with('s') {
                    said.push(format!("{n}s"));
                }
                // "Ventas" for the value `Sales`
                said.extend(
                    LEXICON
                        .synonyms
                        .iter()
                        .filter(|(_, en)| *en == n)
                        .map(|(es, _)| es.to_string()),
                );
                for phrase in said {
                    let len = phrase.split(' ').count();
                    for at in find(&self.w, &phrase) {
                        // One letter ("S", "C") is a value only just after its column
                        // ("embarked at port C", "Embarked = C"): elsewhere "a", "s" and
                        // "x" are words of the request.
                        let near_its_column = self
                            .mentions
                            .iter()
                            .any(|m| m.column == c.name && m.end <= at && at - m.end <= 2);
                        if phrase.len() < 2 && !near_its_column {
                            continue;
                        }
                        // A word of the value that names its own column ("Resort Hotel"
                        // of `hotel`) is the value's.
                        let inside = self.mentions.iter().any(|m| {
                            let own = m.column == c.name && at <= m.start && m.end <= at + len;
                            at < m.end && m.start < at + len && !own
                        });
                        if (at..at + len).any(|k| self.used[k]) || inside || self.stat_at(at) {
                            continue;
                        }
                        // "have no engine size", "no missing values": "no" before a
                        // column or missing values is a determiner, not the value No.
                        let determiner = LEXICON.negators.contains(&phrase.as_str())
                            && (self
                                .mention_at(at + len)
                                .is_some_and(|m| m.column != c.name)
                                || self
                                    .w
                                    .get(at + len)
                                    .is_some_and(|x| LEXICON.missing_nouns.contains(&x.as_str())));
                        if determiner {
                            continue;
                        }
                        hits.push((c.name.clone(), v.clone(), at, at + len));
                    }
                }
            }
        }
        // "first class", "2nd class", "class 1": a small numeric code column.
        for m in self.mentions.clone() {
            let Some(c) = self.table.column_kinds.iter().find(|c| {
                c.name == m.column
                    && c.kind == "numeric"
                    && !c.values.is_empty()
                    && c.values.len() <= 10
            }) else {
                continue;
            };
            let ordinal = |x: &str| match x {
                "first" | "1st" | "primera" | "primer" | "primero" => Some(1.0),
                "second" | "2nd" | "segunda" | "segundo" => Some(2.0),
                "third" | "3rd" | "tercera" | "tercer" | "tercero" => Some(3.0),
                _ => None,
            };
            let before = m.start.checked_sub(1).and_then(|j| ordinal(&self.w[j]));
            let after = self.w.get(m.end).and_then(|x| digits(x));
            let (value, start, mut end) = match (before, after) {
                (Some(v), _) => (v, m.start - 1, m.end),
                (None, Some(v)) => (v, m.start, m.end + 1),
                _ => continue,
            };
            let known = |v: f64| c.values.iter().any(|x| x.parse::<f64>().ok() == Some(v));
            if !known(value) || (start..end).any(|k| self.used[k]) {
                continue;
            }
            // "Pclass 1 or 2": one condition of several values.
            let mut values = vec![value];
            while self
                .w
                .get(end)
                .is_some_and(|x| LEXICON.either_joiners.contains(&x.as_str()))
            {
                match self.w.get(end + 1).and_then(|x| digits(x)) {
                    Some(v) if known(v) && !self.used[end + 1] => {
                        values.push(v);
                        end += 2;
                    }
                    _ => break,
                }
            }
            self.used[start..end].fill(true);
            let mut from = start;
            if start > 0 && ["in", "en"].contains(&self.w[start - 1].as_str()) {
                self.used[start - 1] = true;
                from = start - 1;
            }
            let negated = self.negator_before(from, &m.column);
            if let Some(k) = negated {
                self.used[k..from].fill(true);
            }
            out.push(if values.len() == 1 && negated.is_none() {
                Filter::num(m.column.clone(), FilterOp::Eq, value)
            } else {
                Filter {
                    column: m.column.clone(),
                    op: if negated.is_some() {
                        FilterOp::NotIn
                    } else {
                        FilterOp::In
                    },
                    values: values.iter().map(|v| fmt_value(*v)).collect(),
                    either: true,
                    ..Filter::default()
                }
            });
        }
        let mut columns: Vec<String> = Vec::new();
        for (col, _, at, _) in &hits {
            let others = hits.iter().any(|(c2, _, a2, _)| a2 == at && c2 != col);
            if others {
                let said = self.w[*at].clone();
                self.not_understood.push(self.say(
                    &format!("\"{said}\": a value of several columns; name the column"),
                    &format!("\"{said}\": un valor de varias columnas; nombre la columna"),
                ));
                self.used[*at] = true;
                continue;
            }
            if !columns.contains(col) {
                columns.push(col.clone());
            }
        }
        for col in columns {
            let mut values: Vec<String> = Vec::new();
            let mut spans: Vec<(usize, usize)> = Vec::new();
            for (c, v, at, end) in &hits {
                if *c == col && !hits.iter().any(|(c2, _, a2, _)| a2 == at && c2 != c) {
                    self.used[*at..*end].fill(true);
                    spans.push((*at, *end));
                    if !values.contains(v) {
                        values.push(v.clone());
                    }
                }
            }
            spans.sort();
            // "male or female": the "or" between two values of one condition is read.
            let mut either = false;
            for pair in spans.windows(2) {
                let between = &self.w[pair[0].1..pair[1].0];
                if between.len() == 1 && LEXICON.either_joiners.contains(&between[0].as_str()) {
                    self.used[pair[0].1] = true;
                    either = true;
                }
            }
            // "not female", "who are not female", "other than those who embarked at
            // port S": the values are excluded.
            let negated = spans
                .first()
                .and_then(|(at, _)| self.negator_before(*at, &col));
            if let (Some(k), Some((at, _))) = (negated, spans.first()) {
                self.used[k..*at].fill(true);
            }
            let negated = negated.or_else(|| {
                let (_, end) = *spans.last()?;
                self.excluded_after(end)
            });
            out.push(Filter {
                column: col,
                op: if negated.is_some() {
                    FilterOp::NotIn
                } else {
                    FilterOp::In
                },
                values,
                either,
                ..Filter::default()
            });
        }
    }

    /// "Electric cars have no engine size; leave them out": an exclusion later in the
    /// sentence of the values ending at `end`, or opening the next one, its words taken.
    fn excluded_after(&mut self, end: usize) -> Option<usize> {
        let next = self.sentence_starts.iter().copied().find(|&s| s >= end);
        let stop = next.unwrap_or(self.w.len());
        for p in LEXICON.exclude_after.iter() {
            let len = p.split(' ').count();
            let found = find(&self.w[end..], p)
                .into_iter()
                .map(|k| end + k)
                .find(|&at| at < stop || Some(at) == next);
            if let Some(at) = found {
                if !self.used[at] {
                    self.used[at..at + len].fill(true);
                    return Some(at);
                }
            }
        }
        None
    }

    /// Where a negation of the value at `at` starts ("not", "other than", "except",
    /// "excluding"), when only a few connecting words or the value's own column's
    /// name stand between them: "who are not female", "other than those who embarked
    /// at port S". Another column, a number or a conjunction in between ends the search.
    fn negator_before(&self, at: usize, column: &str) -> Option<usize> {
        let own = |k: usize| {
            self.mentions
                .iter()
                .any(|m| m.column == column && m.start <= k && k < m.end)
        };
        for k in (at.saturating_sub(7)..at).rev() {
            let x = self.w[k].as_str();
            if k >= 1 && x == "than" && self.w[k - 1] == "other" && !self.used[k - 1] {
                return Some(k - 1);
            }
            if LEXICON.negators.contains(&x) && !self.used[k] {
                // "no" is Spanish "not" only before a verb or a value ("que no son
                // mujeres"), never "no missing values".
                return (x != "no" || self.lang == Lang::Es).then_some(k);
            }
            let other_column = self.mentions.iter().any(|m| m.start <= k && k < m.end) && !own(k);
            if other_column
                || digits(x).is_some()
                || LEXICON.negation_stops.contains(&x)
                || self.used[k]
            {
                return None;
            }
        }
        None
    }
}
