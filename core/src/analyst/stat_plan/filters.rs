//! Numeric conditions ("older than 30", "price above 100", "houses with 2 bathrooms",
//! "between 20 and 40", "in 2019") and comparisons with a statistic ("fares higher
//! than the median"); the date and value conditions are read in their own modules.

use super::mentions::{camel_apart, is_code, is_numeric, Mention};
use super::reader::Reader;
use super::text::fmt_value;
use super::words::{digits, find, has, num};
use super::StatName;
use super::{Filter, FilterOp, Stat};
use crate::analyst::lexicon::LEXICON;
use crate::analyst::request::normalise;

impl Reader<'_> {
    /// Numeric conditions ("older than 30", "price above 100", "in 2019").
    pub(super) fn filters(&mut self) -> Vec<Filter> {
        let mut out = Vec::new();
        for (phrase, op, implied) in LEXICON.comparators.iter() {
            let op = FilterOp::of_code(op);
            let len = phrase.split(' ').count();
            for at in find(&self.w, phrase) {
                if self.used[at] {
                    continue;
                }
                // "more than 2 owners", "more than two owners".
                let Some(value) = self.w.get(at + len).and_then(|x| num(x)) else {
                    continue;
                };
                // "z-scores above 3": the outliers' threshold, not a condition (only in
                // an outliers question; "students who scored above 90" is a condition).
                // ("whose z-score is above 3", "a z-score whose absolute value is
                // greater than 3": linking words between.)
                let mut from = at;
                while from > 0 && at - from < 4 && {
                    let x = self.w[from - 1].as_str();
                    LEXICON.absolute.contains(&x)
                        || LEXICON.value_nouns.contains(&x)
                        || LEXICON.condition.contains(&x)
                        || LEXICON.condition_verbs.contains(&x)
                } {
                    from -= 1;
                }
                let from = from.saturating_sub(2);
                let before = &self.w[from..at];
                let z_said = LEXICON
                    .z_score
                    .iter()
                    .chain(LEXICON.threshold.iter())
                    .chain(LEXICON.z_marks.iter())
                    .any(|p| has(before, p));
                if z_said && self.outliers {
                    self.used[from..at + len + 1].fill(true);
                    // "rows whose z-score is above 3": the condition word is the threshold's.
                    if from > 0 && LEXICON.condition.contains(&self.w[from - 1].as_str()) {
                        self.used[from - 1] = true;
                    }
                    self.z_threshold = Some(value);
                    // "above 3 in absolute value": what a z-score threshold always is.
                    for p in LEXICON.absolute_value.iter() {
                        let n = p.split(' ').count();
                        if find(&self.w[at + len + 1..], p).first() == Some(&0) {
                            self.used[at + len + 1..at + len + 1 + n].fill(true);
                        }
                    }
                    continue;
                }
                let unit = self.w.get(at + len + 1).map(String::as_str).unwrap_or("");
                // "more than 3 standard deviations", "at least 2 decimals": no condition.
                if LEXICON.not_a_condition_unit.contains(&unit) {
                    self.used[at..at + len + 1].fill(true);
                    continue;
                }
                let implied = if LEXICON.age_units.contains(&unit) {
                    Some("age")
                } else {
                    *implied
                };
                // The column: named just before ("price above 100", "price is above"),
                // or the one the words imply (age for "older than").
                let mut j = self.back_over(at, &LEXICON.condition_verbs);
                // "the waterfront column equals 1": the column called what it is.
                if j > 0 && LEXICON.column_words.contains(&self.w[j - 1].as_str()) {
                    j -= 1;
                }
                // Or named after the number: "more than 3 bedrooms", "above 90 in
                // math", "more than 10 mm of precipitation".
                let after = self.mention_after_value(at + len + 1);
                let mut end = at + len + 1;
                let named_before = self
                    .mentions
                    .iter()
                    .find(|m| m.end == j && is_numeric(m))
                    .cloned();
                if let Some(m) = &named_before {
                    j = m.start;
                }
                let column = named_before
                    .map(|m| m.column)
                    .or_else(|| {
                        let m = after.clone()?;
                        end = m.end;
                        Some(m.column)
                    })
                    .or_else(|| implied.and_then(|_| self.age_column()));
                let Some(column) = column else {
                    self.not_understood.push(self.say(
                        &format!(
                            "the condition \"{phrase} {}\": which column it applies to",
                            fmt_value(value)
                        ),
                        &format!(
                            "la condición \"{phrase} {}\": a qué columna se aplica",
                            fmt_value(value)
                        ),
                    ));
                    self.used[at..at + len + 1].fill(true);
                    continue;
                };
                self.used[j..end].fill(true);
                out.push(Filter::num(column, op, value));
            }
        }
        self.comparisons_after_the_number(&mut out);
        // "houses with 2 bathrooms", "con 3 hijos": a number of the column named after it.
        for lead in LEXICON.having.iter() {
            for at in find(&self.w, lead) {
                if self.used[at] {
                    continue;
                }
                let Some(value) = self.w.get(at + 1).and_then(|x| digits(x)) else {
                    continue;
                };
                let Some(m) = self.mention_after_value(at + 2) else {
                    continue;
                };
                self.used[at..m.end].fill(true);
                out.push(Filter::num(m.column, FilterOp::Eq, value));
            }
        }
        // "a 3-bedroom house", "2 bathroom homes": a number just before a column of
        // a few whole numbers is its value.
        for i in 0..self.w.len() {
            let Some(value) = digits(&self.w[i]) else {
                continue;
            };
            let Some(m) = self.mention_at(i + 1).cloned() else {
                continue;
            };
            if self.used[i] || self.used[m.start] || !is_code(self.table, &m.column) {
                continue;
            }
            self.used[i..m.end].fill(true);
            out.push(Filter::num(m.column, FilterOp::Eq, value));
        }
        // "between 20 and 40" after a column
        for at in find(&self.w, "between")
            .into_iter()
            .chain(find(&self.w, "entre"))
        {
            if self.used[at] {
                continue;
            }
            let (Some(lo), Some(hi)) = (
                self.w.get(at + 1).and_then(|x| digits(x)),
                self.w.get(at + 3).and_then(|x| digits(x)),
            ) else {
                continue;
            };
            if let Some(m) = self.mention_before(at).filter(|m| is_numeric(m)).cloned() {
                self.used[m.start..at + 4].fill(true);
                out.push(Filter::num(m.column.clone(), FilterOp::Ge, lo));
                out.push(Filter::num(m.column, FilterOp::Le, hi));
            }
        }
        // "IsMgr = 1", "where holiday is 0": a column of a few whole numbers, `is` (the
        // words' `=`), then one of its values. Read before the yes/no words, which
        // would take the column alone.
        for m in self.mentions.clone() {
            let value = self.w.get(m.end + 1).and_then(|x| digits(x));
            let (Some("is"), Some(value)) = (self.w.get(m.end).map(String::as_str), value) else {
                continue;
            };
            if self.used[m.start] || self.used[m.end + 1] || !self.code_value(&m.column, value) {
                continue;
            }
            self.used[m.start..=m.end + 1].fill(true);
            out.push(Filter::num(m.column, FilterOp::Eq, value));
        }
        self.stat_filters(&mut out);
        self.date_filters(&mut out);
        self.yes_no_filters(&mut out);
        self.value_filters(&mut out);
        // "flights in Month 3", "Pclass 2 passengers": a column of a few whole numbers,
        // then one of its values.
        for m in self.mentions.clone() {
            let Some(value) = self.w.get(m.end).and_then(|x| digits(x)) else {
                continue;
            };
            if self.used[m.start] || self.used[m.end] || !self.code_value(&m.column, value) {
                continue;
            }
            self.used[m.start..=m.end].fill(true);
            out.push(Filter::num(m.column, FilterOp::Eq, value));
        }
        // A year: "in 2019", "en 2019", "during 2019" (below), and conditions this
        // planner does not read ("longer than a year", "before March"): declined.
        for word in LEXICON.comparison_words.iter() {
            for at in find(&self.w, word) {
                if !self.used[at] {
                    let end = (at + 3).min(self.w.len());
                    let start = at.saturating_sub(2);
                    let phrase = self.w[start..end].join(" ");
                    self.not_understood.push(self.say(
                        &format!("the condition \"{phrase}\""),
                        &format!("la condición \"{phrase}\""),
                    ));
                    self.used[at] = true;
                }
            }
        }
        for (i, x) in self.w.clone().iter().enumerate() {
            let Some(y) = digits(x).filter(|y| (1900.0..2100.0).contains(y) && y.fract() == 0.0)
            else {
                continue;
            };
            let prev = i.checked_sub(1).map(|j| self.w[j].as_str()).unwrap_or("");
            // "whose year is 2021": the year said with a verb of being.
            let year_is = i >= 2
                && LEXICON.definition_verbs.contains(&prev)
                && LEXICON.year_columns.contains(&self.w[i - 2].as_str());
            if !(LEXICON.year_prepositions.contains(&prev) || year_is) || self.used[i] {
                continue;
            }
            if year_is {
                self.used[i - 2] = true;
            }
            let year_col = self.year_column().map(|c| (c, FilterOp::Eq));
            let date_col = self
                .mentions
                .iter()
                .find(|m| m.kind == "datetime")
                .map(|m| m.column.clone())
                .or_else(|| self.datetime_columns().into_iter().next())
                .map(|c| (c, FilterOp::Year));
            self.used[i] = true;
            if i > 0 {
                self.used[i - 1] = true;
            }
            match year_col.or(date_col) {
                Some((column, op)) => out.push(Filter::num(column, op, y)),
                None => self.not_understood.push(self.say(
                    &format!("\"in {y}\": the table has no date or year column to filter on"),
                    &format!("\"en {y}\": la tabla no tiene columna de fecha ni de año por la que filtrar"),
                )),
            }
        }
        // "IsMgr = 1" on a 0/1 column is its yes; then a condition said twice is one:
        // "managers (IsMgr = 1)", "weekend flights (IsWeekend = 1)", the ticket's
        // restatement of the words before it.
        let mut kept: Vec<Filter> = Vec::new();
        for mut f in out {
            let zero_one = self.table.column_kinds.iter().any(|c| {
                c.name == f.column
                    && c.values.len() == 2
                    && c.values.iter().all(|v| v == "0" || v == "1")
            });
            if f.op == FilterOp::Eq && zero_one && f.date.is_none() && f.stat.is_none() {
                f.op = if f.value == 1.0 {
                    FilterOp::IsTrue
                } else {
                    FilterOp::IsFalse
                };
                f.value = 0.0;
            }
            if !kept.contains(&f) {
                kept.push(f);
            }
        }
        kept
    }

    /// "older than 60 or a BMI above 30", "a BMI above 30 or a missing BMI": rows that
    /// meet either condition. The plan keeps the rows that meet all of them, so two
    /// conditions joined by "or" are declined by name (one condition's values said with
    /// "or", "Pclass 1 or 2", are read as one condition before this).
    pub(super) fn decline_either(&mut self, filters: &[Filter], said: &[(usize, usize, Stat)]) {
        let missing_counted =
            self.counting && said.iter().any(|(_, _, s)| s.name == StatName::Missing);
        let conditions = filters.len() + usize::from(missing_counted);
        if conditions >= 2 && self.said_free(&LEXICON.either_joiners) {
            self.not_understood.push(self.say(
                "conditions joined by \"or\" (rows that meet either one): ask for each condition on its own",
                "condiciones unidas por \"o\" (filas que cumplen una u otra): pregunte por cada condición por separado",
            ));
        }
    }

    /// Whether `column` is a column of a few whole numbers and `value` one of them.
    fn code_value(&self, column: &str, value: f64) -> bool {
        is_code(self.table, column)
            && self.table.column_kinds.iter().any(|c| {
                c.name == column
                    && c.values
                        .iter()
                        .any(|v| v.parse::<f64>().is_ok_and(|x| x == value))
            })
    }

    /// "a Load Factor % of 90 or more", "3 bedrooms or fewer", "5 o más hijos": the
    /// comparison said after the number, the column before the number or between.
    fn comparisons_after_the_number(&mut self, out: &mut Vec<Filter>) {
        for (phrase, op) in LEXICON.after_number.iter() {
            let op = FilterOp::of_code(op);
            let len = phrase.split(' ').count();
            for at in find(&self.w, phrase) {
                if at == 0 || self.used[at] {
                    continue;
                }
                // "3 bedrooms or more": the column between the number and the words.
                let between = self
                    .mentions
                    .iter()
                    .find(|m| m.end == at && m.start > 0 && is_numeric(m))
                    .cloned();
                let number_at = between.as_ref().map_or(at - 1, |m| m.start - 1);
                let Some(value) = num(&self.w[number_at]) else {
                    continue;
                };
                let before = self.numeric_before(number_at, &LEXICON.linking);
                let (column, from) = match (between, before) {
                    (Some(m), _) => (m.column, number_at),
                    (None, Some(m)) => (m.column, m.start),
                    (None, None) => continue,
                };
                if self.used[from..at + len].iter().any(|u| *u) {
                    continue;
                }
                self.used[from..at + len].fill(true);
                out.push(Filter::num(column, op, value));
            }
        }
    }

    /// "fares higher than the median", "above the average order value", "por encima
    /// del precio medio": a column compared with its own (or another column's) mean or
    /// median, which the script computes on the rows the other conditions keep.
    fn stat_filters(&mut self, out: &mut Vec<Filter>) {
        // A mean or a median, said in one word ("the average fare").
        let stat_word = |x: &str| {
            let (_, code) = LEXICON.statistics.iter().find(|(p, _)| *p == x)?;
            Some(StatName::of_code(code)).filter(|s| matches!(s, StatName::Mean | StatName::Median))
        };
        for (phrase, op, implied) in LEXICON.comparators.iter() {
            let op = FilterOp::of_code(op);
            let len = phrase.split(' ').count();
            for at in find(&self.w, phrase) {
                if self.used[at] {
                    continue;
                }
                let mut k = at + len;
                while k < self.w.len() && LEXICON.stat_determiners.contains(&self.w[k].as_str()) {
                    k += 1;
                }
                // STAT [of the COLUMN] | COLUMN STAT
                let (stat, of, end) = if let Some(st) = self.w.get(k).and_then(|x| stat_word(x)) {
                    let mut e = k + 1;
                    if self.w.get(e).is_some_and(|x| x == "value" || x == "valor") {
                        e += 1;
                    }
                    match self.mention_after(k + 1).filter(|m| is_numeric(m)) {
                        Some(m) => (st, Some(m.column.clone()), m.end),
                        None => (st, None, e),
                    }
                } else if let Some(m) = self.mention_at(k).filter(|m| is_numeric(m)).cloned() {
                    match self.w.get(m.end).and_then(|x| stat_word(x)) {
                        Some(st) => (st, Some(m.column), m.end + 1),
                        None => continue,
                    }
                } else {
                    continue;
                };
                let before = self
                    .numeric_before(at, &LEXICON.stat_comparison_verbs)
                    .map(|m| (m.start, m.column));
                let implied_col = implied.and_then(|_| self.age_column());
                let start = before.as_ref().map_or(at, |b| b.0);
                let column = before.map(|b| b.1).or(implied_col).or(of.clone());
                self.used[start..end].fill(true);
                let Some(column) = column else {
                    let said = self.w[at..end].join(" ");
                    self.not_understood.push(self.say(
                        &format!("the condition \"{said}\": which column it applies to"),
                        &format!("la condición \"{said}\": a qué columna se aplica"),
                    ));
                    continue;
                };
                out.push(Filter {
                    of: Some(of.unwrap_or_else(|| column.clone())),
                    column,
                    op,
                    stat: Some(stat),
                    ..Filter::default()
                });
            }
        }
    }

    /// The numeric column named just before `at`, past the `skip` words between.
    fn numeric_before(&self, at: usize, skip: &[&str]) -> Option<Mention> {
        let j = self.back_over(at, skip);
        self.mentions
            .iter()
            .find(|m| m.end == j && is_numeric(m))
            .cloned()
    }

    /// The age column "older than 60" is about: one named age (or years), else the
    /// one numeric column with age in its name (`patient_age`).
    fn age_column(&self) -> Option<String> {
        let numeric = || {
            self.table
                .column_kinds
                .iter()
                .filter(|c| c.kind == "numeric")
        };
        if let Some(c) =
            numeric().find(|c| LEXICON.age_columns.contains(&normalise(&c.name).as_str()))
        {
            return Some(c.name.clone());
        }
        let with_age: Vec<_> = numeric()
            .filter(|c| {
                // `patient_age`, `AgeYrs`: a word of the name, camel case apart.
                normalise(&camel_apart(&c.name))
                    .split(' ')
                    .any(|t| t == "age" || t == "edad")
            })
            .collect();
        match with_age.as_slice() {
            [one] => Some(one.name.clone()),
            _ => None,
        }
    }
}
