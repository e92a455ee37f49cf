//! What an aggregate or relationship question names, read once in Rust for the skills'
//! scripts (`aggregate.py`, `relate.py`), which match it against their data and never
//! read the request themselves: the columns named and the word before each, where a
//! value of the data may be named, months, years, a period, a grouping asked for by a
//! word no column holds, and measures named that a column may not hold.
//!
//! ```text
//! "Total revenue by region in March 2024"
//!   -> columns [revenue, region (after "by")], months [3], years [2024]
//! ```

use serde::Serialize;

use super::lexicon::LEXICON;
use super::profile::Table;
use super::request::normalise;
use super::stat_plan::{camel_apart, find, mentions, Mention};

/// A column the request names, and what the word before it says.
#[derive(Debug, PartialEq, Serialize)]
pub(super) struct Named {
    pub column: String,
    /// After `by_words` ("by region").
    pub by: bool,
    /// After `group_askers` ("which store").
    pub asks: bool,
    /// After `group_joiners` ("by region and product").
    pub joins: bool,
    /// After `how_many` ("how many units": counted in its units, not in rows).
    pub counted: bool,
}

/// Word sequences where a value of the data may be named.
#[derive(Debug, PartialEq, Serialize)]
pub(super) struct Phrase {
    pub at: usize,
    pub text: String,
    /// It starts outside the words of a column named.
    pub free: bool,
}

/// A measure the request names ("profit") and the columns that go by its words.
#[derive(Debug, PartialEq, Serialize)]
pub(super) struct MeasureSaid {
    pub word: String,
    pub held_by: Vec<String>,
}

/// What the request names, for the script that matches it against the data.
#[derive(Debug, Default, PartialEq, Serialize)]
pub(super) struct Reading {
    /// Each column named once, in the order named.
    pub columns: Vec<Named>,
    pub phrases: Vec<Phrase>,
    /// Months named (1-12), in the order named.
    pub months: Vec<u32>,
    pub years: Vec<i32>,
    /// The period a request groups or trends by (`skill_periods`).
    pub period: Option<&'static str>,
    /// A period said only as an adjective ("daily sales"), never as "per day".
    pub adjective_period: bool,
    /// The word after by/per that is no period and no filler ("satisfaction by
    /// gender"): a grouping the script declines when no column gives it.
    pub per_noun: Option<String>,
    /// Measures named (`absent_measures`) and the columns that hold one: when no
    /// measure column does, another column would answer another question.
    pub measures_said: Vec<MeasureSaid>,
    /// Columns whose words name money (`money_measures`): the measure when a question
    /// names none.
    pub money: Vec<String>,
    /// "time" is said (a trend over time, not a correlation).
    pub time_said: bool,
}

/// The longest value phrase, in words.
const PHRASE_WORDS: usize = 6;

/// Read `task` against the columns of `table`.
pub(super) fn read(task: &str, table: &Table) -> Reading {
    // Plain words: no formula read into them ("s / sqrt(n)" says no "by").
    let w: Vec<String> = normalise(task).split(' ').map(str::to_string).collect();
    let mut taken = mentions(&w, table);
    synonym_mentions(&w, table, &mut taken);
    taken.sort_by_key(|m| m.start);
    // The word before any mention of the column.
    let before = |column: &str, list: &[&str]| {
        taken
            .iter()
            .filter(|m| m.column == column && m.start > 0)
            .any(|m| list.contains(&w[m.start - 1].as_str()))
    };
    let mut columns: Vec<Named> = Vec::new();
    for m in &taken {
        if columns.iter().any(|c| c.column == m.column) {
            continue;
        }
        let c = m.column.as_str();
        columns.push(Named {
            column: c.to_string(),
            by: before(c, &LEXICON.by_words),
            asks: before(c, &LEXICON.group_askers),
            joins: before(c, &LEXICON.group_joiners),
            counted: before(c, &LEXICON.how_many),
        });
    }
    let inside = |i: usize| taken.iter().any(|m| m.start <= i && i < m.end);
    let phrases = (0..w.len())
        .flat_map(|i| (i + 1..=(i + PHRASE_WORDS).min(w.len())).map(move |e| (i, e)))
        .map(|(i, e)| Phrase {
            at: i,
            text: w[i..e].join(" "),
            free: !inside(i),
        })
        .collect();
    let said = |p: &str| said_at(&w, p).is_some();
    let per_period = LEXICON.per_words.iter().any(|b| {
        LEXICON
            .period_nouns
            .iter()
            .any(|p| said(&format!("{b} {p}")))
    });
    Reading {
        columns,
        phrases,
        months: months(&w),
        years: w.iter().filter_map(|x| year_in(x)).collect(),
        // Not a column's own name ("the Date column"), nor a type ("parse it as dates").
        period: LEXICON
            .skill_periods
            .iter()
            .find(|p| {
                p.words.iter().any(|x| {
                    said_at(&w, x).is_some_and(|at| {
                        let before = at.checked_sub(1).map_or("", |k| w[k].as_str());
                        !inside(at) && !LEXICON.cast_words.contains(&before)
                    })
                })
            })
            .map(|p| p.period.as_str()),
        adjective_period: LEXICON.adjective_periods.iter().any(|a| said(a)) && !per_period,
        per_noun: w.windows(2).find_map(|pair| {
            let next = pair[1].as_str();
            (LEXICON.per_words.contains(&pair[0].as_str())
                && next.len() >= 3
                && next.chars().all(|c| c.is_ascii_alphabetic())
                && !LEXICON.not_groups.contains(&next)
                && !LEXICON.period_nouns.contains(&next))
            .then(|| next.to_string())
        }),
        measures_said: LEXICON
            .column_synonyms
            .iter()
            .filter(|g| LEXICON.absent_measures.contains(&g[0]))
            .filter_map(|g| {
                let word = g.iter().find(|x| said(x))?;
                let held_by = table
                    .column_kinds
                    .iter()
                    .filter(|c| aliases(&c.name).iter().any(|a| g.contains(&a.as_str())))
                    .map(|c| c.name.clone())
                    .collect();
                Some(MeasureSaid {
                    word: word.to_string(),
                    held_by,
                })
            })
            .collect(),
        money: table
            .column_kinds
            .iter()
            .filter(|c| {
                aliases(&c.name)
                    .iter()
                    .any(|a| LEXICON.money_measures.contains(&a.as_str()))
            })
            .map(|c| c.name.clone())
            .collect(),
        time_said: said("time"),
    }
}

/// The first word where `phrase` is said, its last word also in the plural.
fn said_at(w: &[String], phrase: &str) -> Option<usize> {
    let mut p: Vec<String> = phrase.split(' ').map(str::to_string).collect();
    let last = p.pop()?;
    let mut forms = vec![format!("{last}s"), format!("{last}es"), last.clone()];
    if let Some(stem) = last.strip_suffix('y').filter(|_| last.len() > 3) {
        forms.push(format!("{stem}ies"));
    }
    forms
        .iter()
        .flat_map(|f| {
            let whole = if p.is_empty() {
                f.clone()
            } else {
                format!("{} {f}", p.join(" "))
            };
            find(w, &whole)
        })
        .min()
}

/// The group of `column_synonyms` a name is in.
fn group_of(name: &str) -> Option<&'static [&'static str]> {
    LEXICON
        .column_synonyms
        .iter()
        .find(|g| g.contains(&name))
        .map(|g| &g[..])
}

/// The words a column goes by: its name, its name without units (`unit_tokens`) and
/// their group of `column_synonyms` (the first `strong` ones); then each long word of a
/// longer name, and its group.
fn aliases_of(column: &str) -> (Vec<String>, usize) {
    let name = normalise(&camel_apart(column));
    let toks: Vec<&str> = name.split(' ').collect();
    let core: Vec<&str> = toks
        .iter()
        .copied()
        .filter(|t| !LEXICON.unit_tokens.contains(t))
        .collect();
    let core = if core.is_empty() { toks } else { core };
    let joined = core.join(" ");
    let mut out = vec![name.clone(), joined.clone()];
    out.extend(
        group_of(&joined)
            .or_else(|| group_of(&name))
            .unwrap_or_default()
            .iter()
            .map(|x| x.to_string()),
    );
    let strong = out.len();
    for t in core.iter().filter(|t| core.len() > 1 && t.len() >= 4) {
        out.push(t.to_string());
        out.extend(
            group_of(t)
                .unwrap_or_default()
                .iter()
                .map(|x| x.to_string()),
        );
    }
    (out, strong)
}

fn aliases(column: &str) -> Vec<String> {
    aliases_of(column).0
}

/// "by sales" for `revenue`: a column is named by the words of its name's group of
/// `column_synonyms`, where no other column is named.
fn synonym_mentions(w: &[String], table: &Table, taken: &mut Vec<Mention>) {
    for c in &table.column_kinds {
        let (all, strong) = aliases_of(&c.name);
        for alias in &all[..strong] {
            let Some(start) = said_at(w, alias) else {
                continue;
            };
            let end = start + alias.split(' ').count();
            if taken.iter().any(|m| start < m.end && m.start < end) {
                continue;
            }
            taken.push(Mention {
                column: c.name.clone(),
                kind: c.kind.clone(),
                start,
                end,
            });
        }
    }
}

/// Months named, in the order named. "may" and "mar" are also ordinary words: they
/// count after a preposition (`month_prepositions`) or before a year.
fn months(w: &[String]) -> Vec<u32> {
    let mut found: Vec<(usize, u32)> = Vec::new();
    for (m, names) in &LEXICON.month_names {
        let Ok(m) = m.parse::<u32>() else { continue };
        for name in names.iter() {
            let Some(at) = said_at(w, name) else { continue };
            if ["may", "mar"].contains(name) {
                let prev = at.checked_sub(1).map(|k| w[k].as_str());
                let next_is_year = w.get(at + 1).is_some_and(|x| year_in(x).is_some());
                if !prev.is_some_and(|p| LEXICON.month_prepositions.contains(&p)) && !next_is_year {
                    continue;
                }
            }
            found.push((at, m));
            break;
        }
    }
    found.sort();
    found.into_iter().map(|(_, m)| m).collect()
}

/// A year in a word: four digits from 1900 to 2099 ("2024", "fy2024").
fn year_in(x: &str) -> Option<i32> {
    let run = |s: &str| -> Option<i32> {
        (s.len() == 4 && (s.starts_with("19") || s.starts_with("20"))).then(|| s.parse().ok())?
    };
    x.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .find_map(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyst::profile::ColumnKind;

    /// A table of columns written "name:kind name:kind".
    fn table(columns: &str) -> Table {
        let kinds: Vec<ColumnKind> = columns
            .split(' ')
            .filter_map(|c| c.split_once(':'))
            .map(|(name, kind)| ColumnKind {
                name: name.to_string(),
                kind: kind.to_string(),
                ..ColumnKind::default()
            })
            .collect();
        Table {
            column_names: kinds.iter().map(|c| c.name.clone()).collect(),
            column_kinds: kinds,
            ..Table::default()
        }
    }

    #[test]
    fn columns_by_name_and_synonym_with_the_word_before() {
        let t = table("date:datetime region:text revenue:numeric");
        let r = read("Which region had the highest sales in March 2024?", &t);
        let named: Vec<(&str, bool, bool)> = r
            .columns
            .iter()
            .map(|c| (c.column.as_str(), c.by, c.asks))
            .collect();
        assert_eq!(named, [("region", false, true), ("revenue", false, false)]);
        assert_eq!((r.months, r.years), (vec![3], vec![2024]));
        let r = read("ventas por zona y mes", &t);
        assert_eq!(r.columns[0].column, "revenue");
        assert_eq!(r.period, Some("month"));
    }

    #[test]
    fn may_is_a_month_only_where_a_month_is_said() {
        let t = table("sales:numeric");
        assert_eq!(read("sales in May", &t).months, [5]);
        assert_eq!(
            read("may I see the sales by month?", &t).months,
            Vec::<u32>::new()
        );
        assert_eq!(read("sales from June to March 2023", &t).months, [6, 3]);
    }

    #[test]
    fn values_may_be_named_outside_the_column_words() {
        let t = table("store:text units:numeric");
        let r = read("units sold at the North store", &t);
        let north = r.phrases.iter().find(|p| p.text == "north").unwrap();
        assert!(north.free);
        assert!(!r.phrases.iter().find(|p| p.text == "units").unwrap().free);
        assert!(r.phrases.iter().any(|p| p.text == "north store"));
    }

    #[test]
    fn periods_groupings_and_absent_measures() {
        let t = table("day:datetime sales:numeric");
        let r = read("the median daily sales", &t);
        assert!(r.adjective_period);
        assert_eq!(r.period, Some("day"));
        assert!(!read("median sales per day", &t).adjective_period);
        assert_eq!(
            read("satisfaction by gender", &t).per_noun.as_deref(),
            Some("gender")
        );
        assert_eq!(read("sales by the hour", &t).per_noun, None);
        let r = read("total beneficio by store", &t);
        assert_eq!(
            r.measures_said,
            [MeasureSaid {
                word: "beneficio".into(),
                held_by: vec![]
            }]
        );
        assert_eq!(r.money, ["sales"]);
        let t = table("OrderDate:datetime UnitPrice:numeric TotalRevenueEUR:numeric");
        let r = read("the price by month", &t);
        assert_eq!(r.money, ["TotalRevenueEUR"]);
        assert_eq!(r.measures_said[0].held_by, ["UnitPrice"]);
        assert_eq!(r.columns[0].column, "UnitPrice");
        assert!(read("trend of sales over time", &t).time_said);
        assert_eq!(
            read("the 2019-06-01 report for fy2020", &t).years,
            [2019, 2020]
        );
    }
}
