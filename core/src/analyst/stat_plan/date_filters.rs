//! Date conditions: before, after, since, until, between and in a day, a month, a
//! quarter, a half or a year, on a date column (or a year column).

use super::dates::{when_at, When};
use super::mentions::{is_numeric, Mention};
use super::reader::Reader;
use super::words::find;
use super::{Filter, FilterOp};
use crate::analyst::lexicon::LEXICON;
use crate::analyst::request::normalise;

impl Reader<'_> {
    /// Date conditions: "before March", "after 2020-06-01", "since 2019", "until June
    /// 2020", "between January and March", "from March to May 2020", "in Q2", "in the
    /// first half of 2019", and their Spanish ("antes de marzo", "entre enero y
    /// marzo", "en el primer semestre de 2019").
    pub(super) fn date_filters(&mut self, out: &mut Vec<Filter>) {
        for (lead, kind) in LEXICON.date_leads.iter() {
            let len = lead.split(' ').count();
            for at in find(&self.w, lead) {
                if self.used[at] || self.used.get(at + len).copied().unwrap_or(true) {
                    continue;
                }
                let Some((first, mut end)) = when_at(&self.w, at + len) else {
                    continue;
                };
                if *kind == "in" {
                    // "in 2019" is read below; "in March" alone is the aggregate skill's
                    // when the question is a plain total or mean.
                    if matches!(first, When::Year(_))
                        || (matches!(first, When::Months(None, lo, hi) if lo == hi)
                            && self.months_to_aggregate)
                    {
                        continue;
                    }
                }
                // The second end of a range: "between X and Y", "from X to Y".
                let mut second = None;
                let join = self.w.get(end).map(String::as_str).unwrap_or("");
                if LEXICON.range_joins.contains(&(join, *kind)) {
                    if let Some((w2, e2)) = when_at(&self.w, end + 1) {
                        second = Some(w2);
                        end = e2;
                    }
                }
                if *kind == "between" && second.is_none() {
                    continue;
                }
                // "between January and March 2020": the first end takes the year said.
                let first = match (first, second) {
                    (When::Months(None, lo, hi), Some(When::Months(Some(y), _, _))) => {
                        When::Months(Some(y), lo, hi)
                    }
                    _ => first,
                };
                let years_only = matches!(first, When::Year(_))
                    && second.is_none_or(|s| matches!(s, When::Year(_)));
                // "built after 2000" with `year_built`: a numeric column named just
                // before the year is the one compared.
                let named_year = self
                    .mentions
                    .iter()
                    .find(|m| {
                        m.end == at
                            && is_numeric(m)
                            && years_only
                            && normalise(&m.column)
                                .split(' ')
                                .any(|x| x == "years" || LEXICON.year_columns.contains(&x))
                    })
                    .map(|m| (m.start, m.column.clone()));
                let year_col = named_year
                    .as_ref()
                    .map(|(_, c)| c.clone())
                    .or_else(|| self.year_column().filter(|_| years_only));
                let target = match (&named_year, &year_col) {
                    (Some((s, c)), _) => Some((*s, c.clone())),
                    (None, Some(c)) => Some((at, c.clone())),
                    (None, None) => self.date_column(at),
                };
                let said = self.w[at..end].join(" ");
                // "arriving in July" where a text column holds the month's name: the
                // value's condition (value_filters.rs), not a date's.
                let a_value = self.table.column_kinds.iter().any(|c| {
                    c.kind == "text"
                        && c.values
                            .iter()
                            .any(|v| self.w[at..end].contains(&normalise(v)))
                });
                if target.is_none() && a_value {
                    continue;
                }
                let Some((start, column)) = target else {
                    self.used[at..end].fill(true);
                    self.not_understood.push(self.say(
                        &format!("\"{said}\": the table has no date column to filter on"),
                        &format!(
                            "\"{said}\": la tabla no tiene columna de fecha por la que filtrar"
                        ),
                    ));
                    continue;
                };
                self.used[start..end].fill(true);
                if let Some(col) = year_col {
                    let y = |w: When| match w {
                        When::Year(y) => y as f64,
                        _ => 0.0,
                    };
                    let v = y(first);
                    match (*kind, second) {
                        ("before", _) => out.push(Filter::num(col, FilterOp::Lt, v)),
                        ("after", _) => out.push(Filter::num(col, FilterOp::Gt, v)),
                        ("until", _) => out.push(Filter::num(col, FilterOp::Le, v)),
                        ("in", _) => out.push(Filter::num(col, FilterOp::Eq, v)),
                        (_, None) => out.push(Filter::num(col, FilterOp::Ge, v)),
                        (_, Some(s)) => {
                            out.push(Filter::num(col.clone(), FilterOp::Ge, v));
                            out.push(Filter::num(col, FilterOp::Le, y(s)));
                        }
                    }
                    continue;
                }
                let c = column.as_str();
                let month = |op: FilterOp, m: u32| Filter {
                    column: column.clone(),
                    op,
                    value: m as f64,
                    ..Filter::default()
                };
                let bounds = |w: When| match w {
                    When::Months(None, lo, hi) => (lo, hi),
                    _ => (0, 0),
                };
                match (*kind, first.span(), second) {
                    ("before", Some((a, _)), _) => {
                        out.push(Filter::on_day(c, FilterOp::DateBefore, a))
                    }
                    ("before", None, _) => out.push(month(FilterOp::MonthBefore, bounds(first).0)),
                    ("after", Some((_, b)), _) => {
                        out.push(Filter::on_day(c, FilterOp::DateFrom, b))
                    }
                    ("after", None, _) => {
                        out.push(month(FilterOp::MonthSince, bounds(first).1 + 1))
                    }
                    ("until", Some((_, b)), _) => {
                        out.push(Filter::on_day(c, FilterOp::DateBefore, b))
                    }
                    ("until", None, _) => {
                        out.push(month(FilterOp::MonthBefore, bounds(first).1 + 1))
                    }
                    ("in", Some((a, b)), _) => {
                        out.push(Filter::on_day(c, FilterOp::DateFrom, a));
                        out.push(Filter::on_day(c, FilterOp::DateBefore, b));
                    }
                    ("in", None, _) => {
                        out.push(month(FilterOp::MonthFrom, bounds(first).0));
                        out.push(month(FilterOp::MonthTo, bounds(first).1));
                    }
                    (_, Some((a, _)), None) => out.push(Filter::on_day(c, FilterOp::DateFrom, a)),
                    (_, None, None) => out.push(month(FilterOp::MonthSince, bounds(first).0)),
                    (_, Some((a, _)), Some(s)) => match s.span() {
                        Some((_, b)) if a < b => {
                            out.push(Filter::on_day(c, FilterOp::DateFrom, a));
                            out.push(Filter::on_day(c, FilterOp::DateBefore, b));
                        }
                        _ => self.not_understood.push(self.say(
                            &format!("the condition \"{said}\""),
                            &format!("la condición \"{said}\""),
                        )),
                    },
                    (_, None, Some(s)) => {
                        let (lo, hi) = (bounds(first).0, bounds(s).1);
                        if s.span().is_none() && lo <= hi {
                            out.push(month(FilterOp::MonthFrom, lo));
                            out.push(month(FilterOp::MonthTo, hi));
                        } else {
                            self.not_understood.push(self.say(
                                &format!("the condition \"{said}\""),
                                &format!("la condición \"{said}\""),
                            ));
                        }
                    }
                }
            }
        }
    }

    /// The date column a date condition at `at` applies to: the one named just
    /// before it, else a date column named and not otherwise used, else the first.
    fn date_column(&self, at: usize) -> Option<(usize, String)> {
        let j = self.back_over(at, &LEXICON.date_verbs);
        if let Some(m) = self
            .mentions
            .iter()
            .find(|m| m.end == j && m.kind == "datetime")
        {
            return Some((m.start, m.column.clone()));
        }
        let named: Vec<&Mention> = self
            .mentions
            .iter()
            .filter(|m| m.kind == "datetime")
            .collect();
        if let Some(m) = named.iter().find(|m| !self.used[m.start]) {
            return Some((at, m.column.clone()));
        }
        // A date column named elsewhere (by a derived measure), else the table's first
        // (an order's date before its delivery's); the answer names the one used.
        named
            .first()
            .map(|m| m.column.clone())
            .or_else(|| self.datetime_columns().into_iter().next())
            .map(|c| (at, c))
    }

    pub(super) fn year_column(&self) -> Option<String> {
        self.table
            .column_kinds
            .iter()
            .find(|c| {
                c.kind == "numeric" && LEXICON.year_columns.contains(&normalise(&c.name).as_str())
            })
            .map(|c| c.name.clone())
    }
}
