//! The column a description is grouped by ("by region") or whose label an argmax
//! answers ("which city has the highest score?"), and an extreme asked with no label:
//! the maximum or minimum itself.

use super::asked::Asked;
use super::mentions::{is_code, is_label_like, is_numeric, is_yes_no, Mention};
use super::reader::Reader;
use super::unread::is_rows_word;
use super::words::find;
use super::{Stat, StatName};
use crate::analyst::lexicon::LEXICON;

/// "highest", "lowest" and the like, said outside conditions and columns' names.
#[derive(Clone, Copy)]
pub(super) struct Extremes {
    pub(super) high: bool,
    pub(super) low: bool,
}

impl Extremes {
    pub(super) fn said(r: &Reader) -> Extremes {
        Extremes {
            high: r.said_free(&LEXICON.high),
            low: r.said_free(&LEXICON.low),
        }
    }

    pub(super) fn any(self) -> bool {
        self.high || self.low
    }
}

impl Reader<'_> {
    /// The group named after a group word ("by region", "for each passenger class").
    /// "of smokers and of non-smokers", "survivors and non-survivors": both sides of a
    /// yes/no column, side by side, are a group by it (read before the conditions,
    /// which would take one side for a filter).
    pub(super) fn both_sides(&mut self) -> Option<Mention> {
        let mentions = self.mentions.clone();
        for a in &mentions {
            if self.used[a.start] || !is_yes_no(self.table, &a.column) {
                continue;
            }
            let mut k = a.end;
            if self.w.get(k).map(String::as_str) != Some("and") {
                continue;
            }
            k += 1;
            while self
                .w
                .get(k)
                .is_some_and(|x| LEXICON.linking.contains(&x.as_str()) || x == "for" || x == "para")
            {
                k += 1;
            }
            if !self
                .w
                .get(k)
                .is_some_and(|x| LEXICON.negation_words.contains(&x.as_str()))
            {
                continue;
            }
            let Some(b) = mentions
                .iter()
                .find(|b| b.start == k + 1 && b.column == a.column)
            else {
                continue;
            };
            self.used[a.start..b.end].fill(true);
            self.both_sides = true;
            return Some(a.clone());
        }
        None
    }

    pub(super) fn group(&mut self) -> Option<Mention> {
        // Which column is the group (by X) or the label of an argmax (which X ...).
        let mut group: Option<Mention> = None;
        for g in LEXICON.group.iter() {
            let len = g.split(' ').count();
            for at in find(&self.w, g) {
                if self.used.get(at).copied().unwrap_or(true) {
                    continue;
                }
                let next = self.mention_after(at + len).cloned().or_else(|| {
                    // "for each passenger class": one word before the column's own.
                    self.mention_after(at + len + 1)
                        .filter(|m| m.start == at + len + 1 && is_code(self.table, &m.column))
                        .cloned()
                });
                if let Some(m) = next {
                    let unique = self.table.column_kinds.iter().any(|c| {
                        c.name == m.column && c.distinct >= self.table.rows && self.table.rows > 1
                    });
                    if unique {
                        // "per order" over one row an order: the rows themselves.
                        self.used[at..m.end].fill(true);
                        continue;
                    }
                    // A label: not a date, and not a plain number (a code or a category
                    // column is one).
                    let label = !is_numeric(&m)
                        || self.kind_of(&m.column) != "numeric"
                        || is_label_like(self.table, &m.column)
                        || is_code(self.table, &m.column);
                    if m.kind != "datetime" && label {
                        self.used[at..m.end].fill(true);
                        group = Some(m);
                        break;
                    }
                }
            }
            if group.is_some() {
                break;
            }
        }
        group
    }

    /// "the most passengers", "the fewest orders", "más pasajeros": an extreme of the
    /// rows themselves, named by a word for the rows (not a column, not a measure).
    pub(super) fn counts_rows(&self) -> bool {
        (0..self.w.len().saturating_sub(1)).any(|i| {
            // past a condition read already ("the most admitted patients")
            let mut j = i + 1;
            while j < self.w.len() - 1 && j <= i + 2 && self.used[j] {
                j += 1;
            }
            let next = self.w[j].as_str();
            LEXICON.quantity_extremes.contains(&self.w[i].as_str())
                && !self.used[j]
                && self.mention_at(j).is_none()
                && is_rows_word(self, next)
        })
    }

    /// The label a question about an extreme asks for, when no group word names it;
    /// `unmeasured`: the extreme needs no measure (a share, a number of rows).
    pub(super) fn asked_label(&self, unmeasured: bool) -> Option<Mention> {
        // "Which city has ...", "¿Qué ciudad tiene ...", "¿Cuál es la ciudad con ...":
        // a text column (or a code) named in the question.
        // The label is what the question word asks for ("which city", "¿cuál es la
        // ciudad ...?"), not any text column named ("the maximum age of passengers who
        // embarked at C" asks for an age).
        // A question word that opens the question or a clause of it ("which city",
        // "Among weekend flights, which carrier", "and on which date"), not a
        // relative one ("passengers who embarked", "que embarcaron").
        let asked = |m: &Mention| {
            (m.start.saturating_sub(3)..m.start).any(|k| {
                LEXICON.which.contains(&self.w[k].as_str())
                    && (k == 0
                        || self.clause_starts.contains(&k)
                        || LEXICON.before_which.contains(&self.w[k - 1].as_str()))
            })
        };
        let mut group = self
            .mentions
            .iter()
            .find(|m| {
                asked(m)
                    && !self.used[m.start]
                    && ((m.kind == "text" || m.kind == "bool")
                        || is_label_like(self.table, &m.column))
            })
            .cloned();
        // "Which passenger class has the highest average fare?": a small numeric
        // code (1, 2, 3) asked for right after the question word, with a measure.
        if group.is_none() {
            let code = self
                .mentions
                .iter()
                .find(|m| !self.used[m.start] && is_code(self.table, &m.column) && asked(m))
                .cloned();
            let measure = self
                .mentions
                .iter()
                .any(|m| is_numeric(m) && !self.used[m.start] && !is_code(self.table, &m.column));
            if measure || unmeasured {
                group = code;
            }
        }
        // "What was the highest closing price, and on which date?": the date is the label.
        if group.is_none() {
            group = self
                .mentions
                .iter()
                .find(|m| {
                    m.kind == "datetime"
                        && !self.used[m.start]
                        && m.start > 0
                        && LEXICON.question.contains(&self.w[m.start - 1].as_str())
                })
                .cloned();
        }
        group
    }

    /// An extreme with no label: "who" needs the column that names the rows; a
    /// question's extreme is the maximum or minimum itself.
    pub(super) fn extreme_without_label(
        &mut self,
        asked: &Asked,
        extremes: Extremes,
        argmax: bool,
        stats: &mut Vec<(usize, usize, Stat)>,
    ) {
        let Extremes { high, low } = extremes;
        if !argmax && (high || low) && self.w.first().is_some_and(|x| x == "who" || x == "quien") {
            // "Who scored the highest in math?" asks for a person, not the score.
            self.not_understood.push(self.say(
                "\"who\": which column names the rows (ask e.g. \"which student_id has the highest math_score\")",
                "\"quién\": qué columna nombra las filas (pregunte, por ejemplo, \"qué student_id tiene la math_score más alta\")",
            ));
        }
        if !argmax && (high || low) {
            // "Which pilot had the most delays?" with no pilot column: the label asked
            // for is not in the table; its maximum would answer another question.
            let asked_for = (0..self.w.len()).find_map(|i| {
                LEXICON
                    .which
                    .contains(&self.w[i].as_str())
                    .then(|| self.unknown_noun_after(i, &LEXICON.function_words))
                    .flatten()
            });
            if let Some(x) = asked_for {
                self.not_understood.push(self.say(
                    &format!("\"which {x}\": no column of the table holds it"),
                    &format!("\"qué {x}\": ninguna columna de la tabla lo contiene"),
                ));
            }
        }
        if asked.question && !argmax && (high || low) && asked.describing() {
            // "What is the highest score?": the maximum itself.
            let name = if high { StatName::Max } else { StatName::Min };
            if !stats.iter().any(|(_, _, s)| s.name == name) {
                stats.push((usize::MAX, usize::MAX, Stat::plain(name)));
            }
        }
    }
}
