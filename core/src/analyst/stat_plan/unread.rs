//! The nets that decline: what this planner never computes, words that change what is
//! asked but that no part of the plan read, a count of every row that would leave
//! words out, a statistic of a word that names no column.

use super::asked::Asked;
use super::mentions::{camel_apart, is_numeric, Mention};
use super::reader::Reader;
use super::statistics::rate_of_a_statistic;
use super::words::{digits, find, has};
use super::StatName;
use super::{StatPlan, Task};
use crate::analyst::lexicon::LEXICON;
use crate::analyst::request::normalise;

impl Reader<'_> {
    /// Decline what this planner never computes: statistics after removing outliers,
    /// statistics and tests it does not know, a task outside every skill.
    pub(super) fn decline_what_is_never_computed(&mut self, asked: &Asked) {
        // "the mean fare excluding outliers": outliers are found, never removed first.
        if asked.outliers
            && find(&self.w, "outlier*")
                .into_iter()
                .chain(find(&self.w, "atipic*"))
                .any(|at| {
                    at > 0
                        && (LEXICON.handling.contains(&self.w[at - 1].as_str())
                            || self.w[at - 1] == "the"
                                && at > 1
                                && LEXICON.handling.contains(&self.w[at - 2].as_str()))
                })
        {
            self.not_understood.push(self.say(
                "statistics after removing outliers (I find outliers; I do not remove them first)",
                "estadísticas tras quitar los valores atípicos (los encuentro, no los quito antes)",
            ));
        }
        for p in &asked.unsupported {
            self.not_understood.push(self.say(
                &format!("\"{p}\": a statistic I do not compute"),
                &format!("\"{p}\": un cálculo que no sé hacer"),
            ));
        }
        if asked.out_of_scope {
            self.not_understood.push(self.say(
                "the part of the request that is not a statistic (a forecast, a prediction or another task outside my skills)",
                "la parte de la petición que no es una estadística (un pronóstico, una predicción u otra tarea fuera de lo que sé hacer)",
            ));
        }
    }

    /// Decline the words no part of the plan read: in a count of every row, and
    /// anywhere, those that change what is asked.
    pub(super) fn decline_unread(
        &mut self,
        plan: &StatPlan,
        stats: &[(usize, usize)],
        filled: bool,
    ) {
        let all_rows = plan.task == Task::Describe
            && plan.stats.iter().all(|s| s.name == StatName::Count)
            && plan.measures.is_empty()
            && plan.filters.is_empty();
        if all_rows {
            if let Some(said) = unread_in_a_row_count(self, stats) {
                self.not_understood.push(self.say(
                    &format!("the words \"{said}\": counting every row would leave them out"),
                    &format!("las palabras \"{said}\": contar todas las filas las dejaría fuera"),
                ));
            }
        }
        // A column the request names and no part of the plan uses ("which
        // department has the longest wait" answered with the overall mean).
        if plan.group.is_none() {
            if let Some(x) = self.unknown_grouping() {
                self.not_understood.push(self.say(
                    &format!("\"by {x}\": no column of the table holds it"),
                    &format!("\"por {x}\": ninguna columna de la tabla lo contiene"),
                ));
            }
        }
        // Only where nothing else is declined: it guards an answer, and a decline
        // already says what it could not read.
        if self.not_understood.is_empty() {
            for m in unplanned_columns(self, plan) {
                self.not_understood.push(self.say(
                    &format!("`{m}`: the request names it, but no part of my reading uses it"),
                    &format!(
                        "`{m}`: la petición la nombra, pero ninguna parte de mi lectura la usa"
                    ),
                ));
            }
        }
        for said in unread_words(
            self,
            stats,
            !plan.filters.is_empty(),
            filled,
            plan.group.is_some(),
        ) {
            self.not_understood.push(self.say(
                &format!(
                    "the words \"{said}\": they change what is asked, and I could not read them"
                ),
                &format!("las palabras \"{said}\": cambian lo que se pide y no supe leerlas"),
            ));
        }
    }
}

impl Reader<'_> {
    /// "satisfaction by gender" with no gender column: the word a grouping names when
    /// no column holds it (never "divided by", "by far", "por encima", "by IQR").
    fn unknown_grouping(&self) -> Option<String> {
        (0..self.w.len()).find_map(|i| {
            let prev = i.checked_sub(1).map_or("", |j| self.w[j].as_str());
            let after_op = LEXICON.operation_verbs.contains(&prev);
            (["by", "por"].contains(&self.w[i].as_str()) && !after_op)
                .then(|| self.unknown_noun_after(i, &LEXICON.not_a_group))
                .flatten()
        })
    }
}

/// The columns named in the request that the plan does not use, each once. A
/// mention whose words another part read ("per order" over one row an order) is used.
pub(super) fn unplanned_columns(r: &Reader, plan: &StatPlan) -> Vec<String> {
    let mut planned: Vec<&str> = Vec::new();
    for m in &plan.measures {
        planned.extend(m.column.as_deref());
        if let Some(d) = &m.derived {
            planned.extend([d.a.as_str(), d.b.as_str()]);
        }
    }
    planned.extend(plan.second.as_deref());
    planned.extend(plan.group.as_deref());
    for f in plan.filters.iter().chain(plan.share_of.as_ref()) {
        planned.push(&f.column);
        planned.extend(f.of.as_deref());
    }
    // A column that names the rows ("passengers" for a `passenger` of names, "a
    // contract" for `contract_name`) is how the request calls them, no part to place.
    let no_part = |m: &Mention| {
        let word = r.w[m.start].as_str();
        // "which branch issued the most loans": a date column's verb ("issued",
        // "ordered", "hired", "the listing price") tells how the rows came, not a part
        // to compute.
        let verb = m.end - m.start == 1
            && m.kind == "datetime"
            && (word.ends_with("ed") || word.ends_with("ing"));
        // "over all stations": the whole table, said.
        let pooled = LEXICON.pooled_before.iter().any(|p| {
            let p: Vec<&str> = p.split(' ').collect();
            m.start >= p.len()
                && r.w[m.start - p.len()..m.start]
                    .iter()
                    .zip(&p)
                    .all(|(a, b)| a == b)
        });
        if verb || pooled {
            return true;
        }
        m.end - m.start == 1 && LEXICON.row_nouns.contains(&word)
            || r.table.column_kinds.iter().any(|c| {
                c.name == m.column
                    && (c.id || c.kind == "text" && c.distinct * 10 >= r.table.rows * 9)
            })
    };
    // The words of the question's own task ("a normal distribution" on a table with
    // a `normal` column).
    let task_words: Vec<usize> = LEXICON
        .normal_task_words
        .iter()
        .flat_map(|p| {
            let len = p.split(' ').count();
            find(&r.w, p).into_iter().flat_map(move |at| at..at + len)
        })
        .collect();
    let mut out: Vec<String> = Vec::new();
    for m in &r.mentions {
        let read = (m.start..m.end).all(|k| r.used[k] || task_words.contains(&k));
        if !read && !no_part(m) && !planned.contains(&m.column.as_str()) && !out.contains(&m.column)
        {
            out.push(m.column.clone());
        }
    }
    out
}

fn unread_words(
    r: &Reader,
    stats: &[(usize, usize)],
    filtered: bool,
    filled: bool,
    grouped: bool,
) -> Vec<String> {
    let w = &r.w;
    let covered = |i: usize| {
        r.used[i]
            || r.mentions.iter().any(|m| m.start <= i && i < m.end)
            || stats.iter().any(|(s, e)| *s <= i && i < *e)
    };
    let mut out: Vec<String> = Vec::new();
    // A value of a column ("Denver", "female") that no condition took.
    let value = |x: &str| {
        x.len() >= 2
            && digits(x).is_none()
            && r.table.column_kinds.iter().any(|c| {
                c.kind != "numeric"
                    && c.values.iter().any(|v| {
                        let v = normalise(v);
                        v == x || x.strip_suffix('s') == Some(v.as_str())
                    })
            })
    };
    // A word that looks like a column's ("rainy" for `precipitation_mm` through
    // "rain") but was not read as it: a condition on it nobody read.
    let column_words: Vec<String> = r
        .table
        .column_kinds
        .iter()
        .filter(|c| !c.id)
        .flat_map(|c| {
            normalise(&c.name)
                .split(' ')
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .flat_map(|t| {
            let mut all = vec![t.clone()];
            all.extend(
                LEXICON
                    .synonyms
                    .iter()
                    .filter(|(_, en)| *en == t)
                    .map(|(es, _)| es.to_string()),
            );
            all
        })
        .filter(|t| t.len() >= 4)
        .collect();
    let looks_like_a_column = |x: &str| {
        x.len() >= 5
            && !LEXICON.task_words.contains(&x)
            && column_words.iter().any(|t| {
                // an adjective of the column's word ("rainy", "windy", "sunny"); a
                // plural or a verb form ("orders", "scored") is the row noun's
                x.strip_prefix(t.as_str()).is_some_and(|rest| {
                    LEXICON.adjective_suffixes.contains(&rest)
                        || rest.len() == 2 && rest.ends_with('y') && t.ends_with(&rest[..1])
                })
            })
    };
    let mut reported = 0;
    // A number nobody read ("a performance rating of 5") is a condition dropped;
    // the numbers of rounding, a significance level, a threshold or a quantile are read
    // elsewhere.
    let parameter = |i: usize| {
        let near = |words: &[&str], from: usize, to: usize| {
            w[from.min(w.len())..to.min(w.len())]
                .iter()
                .any(|x| words.iter().any(|p| x.starts_with(p)))
        };
        near(&LEXICON.rounding_units, i + 1, i + 3)
            || near(&LEXICON.parameter_words, i.saturating_sub(3), i + 3)
    };
    // "non-null values", "the non-missing values" from word `k` on.
    let non_missing = |k: usize| {
        let k = if w.get(k).is_some_and(|x| x == "the") {
            k + 1
        } else {
            k
        };
        w.get(k).is_some_and(|x| x == "non")
            && w.get(k + 1)
                .is_some_and(|x| LEXICON.missing_nouns.contains(&x.as_str()))
    };
    for (i, x) in w.iter().enumerate() {
        let number = digits(x).is_some() && !parameter(i);
        let trigger = LEXICON
            .triggers
            .iter()
            .any(|t| has(std::slice::from_ref(x), t))
            || value(x)
            || looks_like_a_column(x)
            || number;
        if covered(i) || !trigger {
            continue;
        }
        let prev = i.checked_sub(1).map(|j| w[j].as_str()).unwrap_or("");
        let next = w.get(i + 1).map(String::as_str).unwrap_or("");
        let after_values = if ["values", "valores"].contains(&next) {
            w.get(i + 2).map(String::as_str).unwrap_or("")
        } else {
            next
        };
        let fine = match x.as_str() {
            // "whether or not", "o no"
            "not" | "no" if ["or", "o"].contains(&prev) => true,
            // "per order" on a table of one row an order: the rows themselves
            "per" | "each" | "cada" if names_the_rows(r, next) => true,
            // the condition words of a condition that was read
            // ("excluding", "except" turn a condition around: never excused)
            // ... and "only the non-null values": missing values dropped, as always
            "only" | "solo" | "solamente" => filtered || non_missing(i + 1),
            "non" => LEXICON.missing_nouns.contains(&next),
            // "Electric cars have no engine size": a numeric column's values missing,
            // which a statistic drops as always (a count of them is another question).
            "no" => !r.counting && r.mention_at(i + 1).is_some_and(is_numeric),
            // "to the nearest integer" is read as 0 decimals; "nearest million" is not
            "nearest" => ["integer", "whole"].contains(&next),
            _ if rate_of_a_statistic(w, i) => true,
            // values side by side
            "compared" | "compare" | "versus" | "vs" => grouped,
            // "first quartile", "third quartile"
            _ if next.starts_with("quartil") || next.starts_with("cuartil") => true,
            // how missing values are handled, said
            "missing" | "null" | "nulls" | "nan" | "empty" | "faltantes" | "nulos" | "vacios" => {
                filled
                    || prev == "non"
                    || LEXICON.handling.contains(&prev)
                    || LEXICON.handling_after.contains(&after_values)
            }
            "fill" | "filling" | "rellena" | "rellenar" => filled,
            "sin" | "without" => next == "valores" || LEXICON.missing_nouns.contains(&next),
            // "between Age and Fare": two columns (a correlation, a difference).
            // ("between the average temperature and ...": a statistic's word may open
            // a column's description.)
            "between" | "entre" => {
                let mut k = i + 1;
                while k < w.len()
                    && !r.mentions.iter().any(|m| m.start == k)
                    && (LEXICON.articles.contains(&w[k].as_str())
                        || stats.iter().any(|(s, e)| *s <= k && k < *e))
                {
                    k += 1;
                }
                r.mentions.iter().any(|m| m.start == k)
            }
            // "or" matters before another value or number ("Pclass 1 or 2").
            "or" => !(digits(next).is_some() || value(next)),
            _ => false,
        };
        if fine {
            continue;
        }
        // One quote for words close together.
        if i < reported {
            continue;
        }
        let from = i.saturating_sub(2);
        let to = (i + 3).min(w.len());
        reported = to;
        out.push(w[from..to].join(" "));
    }
    out
}

/// "How many passengers are there?" counts the rows; in "¿cuántos pasajeros
/// sobrevivieron?" a word no part of the plan read is left over, and a count of every
/// row would answer another question. The noun right after the count is the rows'.
fn unread_in_a_row_count(r: &Reader, stats: &[(usize, usize)]) -> Option<String> {
    let (_, count_end) = stats.first().copied()?;
    let mut left = Vec::new();
    for (i, x) in r.w.iter().enumerate() {
        let covered = r.used[i]
            || r.mentions.iter().any(|m| m.start <= i && i < m.end)
            || stats.iter().any(|(s, e)| *s <= i && i < *e);
        if covered || i == count_end || LEXICON.row_count_frame.contains(&x.as_str()) {
            continue;
        }
        left.push(x.clone());
    }
    (!left.is_empty()).then(|| left.join(" "))
}

/// Whether `word` names what a row is: "order" for `order_id`, "row", "record",
/// "house" in `house_sales.csv`.
pub(super) fn names_the_rows(r: &Reader, word: &str) -> bool {
    let stemmed = |x: &str| x.strip_suffix('s').unwrap_or(x).to_string();
    let file = r.table.path.rsplit('/').next().unwrap_or("");
    let file = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let names = |name: &str| {
        normalise(&camel_apart(name))
            .split(' ')
            .any(|t| t.len() >= 3 && t != "id" && stemmed(t) == stemmed(word))
    };
    LEXICON.row_words.contains(&stemmed(word).as_str())
        || names(file)
        || r.table.column_kinds.iter().any(|c| c.id && names(&c.name))
}

/// Whether `word` is a plural for the rows themselves: an everyday one
/// ("passengers", "pacientes") or one [`names_the_rows`] reads from the table.
pub(super) fn is_rows_word(r: &Reader, word: &str) -> bool {
    LEXICON.row_nouns.contains(&word) || names_the_rows(r, word)
}

/// The word after "mean of (the) ..." when it names no column ("mean of salary").
pub(super) fn unknown_after_stat(r: &Reader) -> Option<String> {
    for (i, x) in r.w.iter().enumerate() {
        if x == "of" || x == "de" || x == "del" {
            let mut j = i + 1;
            while j < r.w.len() && LEXICON.column_fillers.contains(&r.w[j].as_str()) {
                j += 1;
            }
            if let Some(word) = r.w.get(j) {
                if i > 0
                    && LEXICON
                        .statistics
                        .iter()
                        .any(|(p, _)| p.split(' ').next_back() == Some(r.w[i - 1].as_str()))
                {
                    return Some(word.clone());
                }
            }
        }
    }
    None
}
