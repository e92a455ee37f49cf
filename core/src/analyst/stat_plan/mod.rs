//! Reading a statistics question into an explicit plan, matched against the table's
//! real columns and their kinds: which statistics, of which measure (a column or a
//! measure derived from two), grouped by what, under which conditions, with what
//! answer shape and rounding. A request is read word by word; when a part of it is
//! a statistic, a condition or a column this planner cannot read, the outcome is a
//! [`Decline`] naming what was understood and what not, never a plan for some other
//! question. Requests that are not about statistics (a profile, a share of total, a
//! change between periods, a trend, an anomaly search) are left to the other skills
//! ([`Understood::NotMine`]), as are the plain grouped totals and means that
//! `aggregate.py` answers.
//!
//! ```text
//! "Calculate the mean and standard deviation of the price"
//!   -> describe: [mean, std (sample)] of `price`
//! "Which region had the highest revenue? Revenue is units times unit_price."
//!   -> argmax over `region` of total(units x unit_price)
//! ```

use serde::Serialize;

use super::profile::Table;
use super::request::{normalise, Lang};
use dates::Day;
use mentions::{is_code, is_label_like, is_numeric, mentions, Mention};
use options::{alpha, decimals};
use reader::Reader;
use statistics::statistics_with;
pub(super) use text::{decline_text, described};
use unread::{unknown_after_stat, unread_in_a_row_count, unread_words};
use words::{
    digits, find, has, has_any, num, words_of, ANOMALY_WORDS, COMPARATORS, CONDITION_WORDS,
    GROUP_WORDS, HANDLING, HIGH_WORDS, LOW_WORDS, OUT_OF_SCOPE, PERIODS, PERIOD_GROUPS,
    QUESTION_WORDS, TRUTHY, UNSUPPORTED_STATS,
};

mod date_filters;
mod dates;
mod derived;
mod filters;
mod mentions;
mod options;
mod reader;
mod statistics;
mod text;
mod unread;
mod value_filters;
mod words;

/// The answer's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Task {
    /// One or more statistics of one or more measures (per group when grouped).
    Describe,
    /// The label(s) with the highest value of the measure (all ties).
    Argmax,
    /// The label(s) with the lowest value.
    Argmin,
    /// Correlation between two measures with its p-value.
    Correlation,
    /// Outliers of the measure and their count.
    Outliers,
    /// Whether the measure looks normally distributed.
    Normality,
}

/// One statistic; `q` for quantiles (0..1).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(super) struct Stat {
    pub name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q: Option<f64>,
}

impl Stat {
    fn plain(name: &'static str) -> Stat {
        Stat { name, q: None }
    }
}

/// A measure derived from two columns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(super) struct Derived {
    /// product, difference, ratio, days, hours
    pub op: &'static str,
    pub a: String,
    pub b: String,
}

/// What a statistic is computed over: a column, or a measure derived from two.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(super) struct MeasureSpec {
    /// The name said in the answer (the column, or the derived measure's name).
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub derived: Option<Derived>,
}

/// A condition on the rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(super) struct Filter {
    pub column: String,
    /// gt, ge, lt, le, eq against `value` (or against a statistic, `stat`); year (of a
    /// date column); date_from / date_before (on or after / before the day `date`);
    /// month_from / month_to (the month of the year, any year, inclusive);
    /// month_since / month_before (a month named without its year: the script
    /// applies it only when the dates are all of one year)
    pub op: &'static str,
    pub value: f64,
    /// The day of a date condition, YYYY-MM-DD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Compared against this statistic (mean, median) of the column `of`, computed on
    /// the rows the other conditions keep ("fares higher than the median").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stat: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub of: Option<String>,
    /// For `in`: the column's values the request names ("female", "en Bilbao").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

impl Filter {
    fn num(column: String, op: &'static str, value: f64) -> Filter {
        Filter {
            column,
            op,
            value,
            ..Filter::default()
        }
    }

    fn on_day(column: &str, op: &'static str, day: Day) -> Filter {
        Filter {
            column: column.to_string(),
            op,
            date: Some(day.iso()),
            ..Filter::default()
        }
    }
}

/// The plan the statistics script carries out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(super) struct StatPlan {
    pub task: Task,
    pub stats: Vec<Stat>,
    pub measures: Vec<MeasureSpec>,
    /// The second measure of a correlation.
    pub second: Option<String>,
    /// The column the statistics are grouped by, or whose label an argmax answers.
    pub group: Option<String>,
    /// How rows of one label are combined before an argmax (None: the rows are the
    /// labels; the script checks there is one row per label).
    pub label_op: Option<&'static str>,
    pub filters: Vec<Filter>,
    /// 1: sample statistics (the default), 0: population.
    pub ddof: u8,
    pub decimals: Option<u32>,
    /// drop (the default) or zero
    pub missing: &'static str,
    /// pearson/spearman, iqr/z, skew/shapiro/ks
    pub method: Option<&'static str>,
    /// The z-score threshold of outliers by z-score.
    pub z: f64,
    /// The significance level of a normality test (0.05 unless the request says).
    pub alpha: f64,
    pub alpha_said: bool,
    /// A condition word was read but no numeric condition: the script must find the
    /// value it names in a text column, or decline.
    pub needs_value_filter: bool,
    /// Every column the request names (the script does not read their names as
    /// values to filter on).
    pub named_columns: Vec<String>,
    /// For the statistic `share`: the condition whose share of the rows (those the
    /// other conditions keep) is asked ("what percentage of passengers survived").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_of: Option<Filter>,
}

/// What could not be read, for an honest decline.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Decline {
    /// The parts that were understood ("mean", "of `price`").
    pub understood: Vec<String>,
    /// The parts that were not, said in the request's language.
    pub not_understood: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Understood {
    Plan(Box<StatPlan>),
    Decline(Decline),
    /// Not a statistics question: another skill answers it.
    NotMine,
}

/// Read `task` against `table`: a plan, a decline, or not a statistics question.
pub(super) fn understand(task: &str, table: &Table, lang: Lang) -> Understood {
    let w = words_of(task);
    let found_mentions = mentions(&w, table);
    // A statistic's word inside a column's name ("daily count", "total sales") is
    // the column, not a statistic.
    let dates = table
        .column_kinds
        .iter()
        .filter(|c| c.kind == "datetime")
        .count();
    let stats_found: Vec<(usize, usize, Stat)> = statistics_with(&w, dates >= 2)
        .into_iter()
        .filter(|(s, e, _)| !found_mentions.iter().any(|m| *s < m.end && m.start < *e))
        .collect();
    let unsupported: Vec<&str> = UNSUPPORTED_STATS
        .iter()
        .copied()
        .filter(|p| has(&w, p))
        .collect();
    let correlation = has_any(&w, &["correlat*", "correlac*"]);
    let corr_precise = has_any(
        &w,
        &[
            "pearson",
            "spearman",
            "p value",
            "pvalue",
            "p valor",
            "valor p",
            "coefficient",
            "coeficiente",
            "significan*",
        ],
    );
    let outliers = has_any(&w, &["outlier*", "atipic*", "valores extremos"]);
    let normality = has_any(
        &w,
        &[
            "normality",
            "normally",
            "normalidad",
            "normal distribution",
            "distribucion normal",
            "gaussian*",
            "shapiro",
            "kolmogorov",
            "ks test",
        ],
    );
    let question = has_any(&w, QUESTION_WORDS);
    let high0 = has_any(&w, HIGH_WORDS);
    let low0 = has_any(&w, LOW_WORDS);
    let derived_words = has_any(
        &w,
        &[
            "times",
            "multiplied",
            "multiplicado",
            "minus",
            "menos",
            "por",
            "x",
            "entre",
            "divided",
            "dividido",
            "difference between",
            "diferencia entre",
            "ratio",
            "cociente",
            "length",
            "duration",
            "duracion",
            "days between",
            "dias entre",
            "hours between",
            "horas entre",
            "per",
            "from",
            "desde",
        ],
    );
    let out_of_scope = has_any(&w, OUT_OF_SCOPE);
    let precise_outliers = outliers
        && has_any(
            &w,
            &[
                "iqr",
                "interquartile",
                "intercuartil*",
                "z score",
                "zscore",
                "z scores",
                "standard deviations",
                "desviaciones",
            ],
        );
    if has_any(&w, ANOMALY_WORDS) || (out_of_scope && stats_found.is_empty()) {
        return Understood::NotMine;
    }
    let conditioned = w.iter().any(|x| {
        x.len() >= 2
            && table
                .column_kinds
                .iter()
                .any(|c| c.kind != "numeric" && c.values.iter().any(|v| normalise(v) == *x))
    }) || COMPARATORS.iter().any(|(p, _, _)| has(&w, p));
    let mine_signal = !stats_found.is_empty()
        || (correlation && conditioned)
        || !unsupported.is_empty()
        || (correlation && corr_precise)
        || precise_outliers
        || (outliers && table.time.is_empty())
        || normality
        || (question && (high0 || low0));
    if !mine_signal {
        return Understood::NotMine;
    }
    // Grouping by a period of the time column ("which weekday", "per month") is the
    // aggregate skill's, unless the period is a column of its own that was named.
    let by_period = has_any(&w, PERIOD_GROUPS);
    let period_column = found_mentions.iter().any(|m| {
        let c = m.column.to_lowercase();
        [
            "weekday", "day", "month", "hour", "year", "week", "quarter", "dia", "mes", "hora",
            "semana",
        ]
        .iter()
        .any(|p| c.contains(p))
    });
    if by_period && !table.time.is_empty() && !period_column {
        return Understood::NotMine;
    }
    let mut r = Reader {
        mentions: found_mentions,
        used: vec![false; w.len()],
        w,
        table,
        not_understood: Vec::new(),
        lang,
        months_to_aggregate: (stats_found.is_empty()
            || stats_found.len() == 1
                && ["sum", "mean", "median", "count", "min", "max"]
                    .contains(&stats_found[0].2.name))
            && !derived_words,
        counting: stats_found.iter().any(|(_, _, s)| s.name == "count"),
        describing: !correlation && !outliers && !normality,
        z_threshold: None,
        outliers,
        count_at: stats_found
            .iter()
            .find(|(_, _, s)| s.name == "count")
            .map(|(at, _, _)| *at),
    };
    // "the mean fare excluding outliers": outliers are found, never removed first.
    if outliers
        && find(&r.w, "outlier*")
            .into_iter()
            .chain(find(&r.w, "atipic*"))
            .any(|at| {
                at > 0
                    && (HANDLING.contains(&r.w[at - 1].as_str())
                        || r.w[at - 1] == "the"
                            && at > 1
                            && HANDLING.contains(&r.w[at - 2].as_str()))
            })
    {
        r.not_understood.push(r.say(
            "statistics after removing outliers (I find outliers; I do not remove them first)",
            "estadísticas tras quitar los valores atípicos (los encuentro, no los quito antes)",
        ));
    }
    for p in &unsupported {
        r.not_understood.push(r.say(
            &format!("\"{p}\": a statistic I do not compute"),
            &format!("\"{p}\": un cálculo que no sé hacer"),
        ));
    }
    if out_of_scope {
        r.not_understood.push(r.say(
            "the part of the request that is not a statistic (a forecast, a prediction or another task outside my skills)",
            "la parte de la petición que no es una estadística (un pronóstico, una predicción u otra tarea fuera de lo que sé hacer)",
        ));
    }
    let stats_spans: Vec<(usize, usize)> = stats_found.iter().map(|(s, e, _)| (*s, *e)).collect();
    let derived = if derived_words { r.derived() } else { None };
    let filters = r.filters();
    // A statistic said inside a condition ("above the average fare") is the
    // condition's, not one to compute.
    let stats_found: Vec<(usize, usize, Stat)> = stats_found
        .into_iter()
        .filter(|(s, _, _)| !r.used[*s])
        .collect();
    // Extremes said outside conditions and outside "most common value".
    for (s, e, st) in &stats_found {
        if st.name == "mode" {
            for k in *s..*e {
                r.used[k] = true;
            }
        }
    }
    // A word inside a column's name ("max" of `temp_max`) is the column's.
    let free = |r: &Reader, words: &[&str]| {
        words.iter().any(|p| {
            find(&r.w, p)
                .into_iter()
                .any(|at| !r.used[at] && !r.mentions.iter().any(|m| m.start <= at && at < m.end))
        })
    };
    let high = free(&r, HIGH_WORDS);
    let low = free(&r, LOW_WORDS);
    let decimals = decimals(&r.w);
    let population = has_any(&r.w, &["population", "poblacion", "poblacional"]);
    let missing = if has_any(
        &r.w,
        &[
            "missing as zero",
            "missing as 0",
            "missing values as zero",
            "missing values as 0",
            "fill missing with 0",
            "fill missing with zero",
            "vacios como cero",
            "vacios como 0",
            "faltantes como cero",
            "faltantes como 0",
            "nulos como cero",
            "nulos como 0",
        ],
    ) {
        "zero"
    } else {
        "drop"
    };

    // The other skills' questions stay theirs: periods, months, shares, changes,
    // trends, top N, and a plain grouped total/mean/count that aggregate.py answers.
    let by_period = GROUP_WORDS.iter().any(|g| {
        find(&r.w, g).into_iter().any(|at| {
            r.w.get(at + 1)
                .is_some_and(|x| PERIODS.contains(&x.as_str()))
        })
    }) || has_any(
        &r.w,
        &[
            "day of the week",
            "dia de la semana",
            "over time",
            "a lo largo del tiempo",
        ],
    );
    let other_shape = has_any(
        &r.w,
        &[
            "share",
            "percentage",
            "porcentaje",
            "proporcion",
            "change",
            "cambio",
            "trend*",
            "tendencia*",
            "top",
            "bottom",
        ],
    ) || free(&r, super::request::MONTHS);
    // A share of rows where a yes/no column or a value holds; "what share of total
    // revenue" is the aggregate skill's share of a total.
    let said_value = r.w.iter().any(|x| {
        table.column_kinds.iter().any(|c| {
            c.kind != "numeric" && c.values.iter().any(|v| normalise(v) == *x && x.len() >= 2)
        })
    });
    let yes_no_named = r.mentions.iter().any(|m| {
        table
            .column_kinds
            .iter()
            .any(|c| c.name == m.column && c.distinct == 2)
    });
    let share =
        stats_found.iter().any(|(_, _, s)| s.name == "share") && (said_value || yes_no_named);
    if (by_period || (other_shape && !share))
        && derived.is_none()
        && !correlation
        && !outliers
        && !normality
        && r.not_understood.is_empty()
    {
        return Understood::NotMine;
    }

    // Which column is the group (by X) or the label of an argmax (which X ...).
    let mut group: Option<Mention> = None;
    for g in GROUP_WORDS {
        let len = g.split(' ').count();
        for at in find(&r.w, g) {
            if r.used.get(at).copied().unwrap_or(true) {
                continue;
            }
            let next = r.mention_after(at + len).cloned().or_else(|| {
                // "for each passenger class": one word before the column's own.
                r.mention_after(at + len + 1)
                    .filter(|m| m.start == at + len + 1 && is_code(table, &m.column))
                    .cloned()
            });
            if let Some(m) = next {
                let unique = table
                    .column_kinds
                    .iter()
                    .any(|c| c.name == m.column && c.distinct >= table.rows && table.rows > 1);
                if unique {
                    // "per order" over one row an order: the rows themselves.
                    for k in at..m.end {
                        r.used[k] = true;
                    }
                    continue;
                }
                // A label: not a date, and not a plain number (a code or a category
                // column is one).
                let label = !is_numeric(&m)
                    || r.kind_of(&m.column) != "numeric"
                    || is_label_like(table, &m.column)
                    || is_code(table, &m.column);
                if m.kind != "datetime" && label {
                    for k in at..m.end {
                        r.used[k] = true;
                    }
                    group = Some(m);
                    break;
                }
            }
        }
        if group.is_some() {
            break;
        }
    }
    let argmax = question && (high || low) && !correlation && !outliers && !normality;
    if argmax && group.is_none() {
        // "Which city has ...", "¿Qué ciudad tiene ...", "¿Cuál es la ciudad con ...":
        // a text column (or a code) named in the question.
        // The label is what the question word asks for ("which city", "¿cuál es la
        // ciudad ...?"), not any text column named ("the maximum age of passengers who
        // embarked at C" asks for an age).
        // A question word that opens the question ("which city", "and on which
        // date"), not a relative one ("passengers who embarked", "que embarcaron").
        let asked = |m: &Mention| {
            (m.start.saturating_sub(3)..m.start).any(|k| {
                ["which", "what", "cual", "cuales", "que"].contains(&r.w[k].as_str())
                    && (k == 0
                        || [
                            "in", "of", "en", "de", "and", "y", "for", "para", "on", "at", "by",
                        ]
                        .contains(&r.w[k - 1].as_str()))
            })
        };
        group = r
            .mentions
            .iter()
            .find(|m| {
                asked(m)
                    && !r.used[m.start]
                    && ((m.kind == "text" || m.kind == "bool") || is_label_like(table, &m.column))
            })
            .cloned();
        // "Which passenger class has the highest average fare?": a small numeric
        // code (1, 2, 3) asked for right after the question word, with a measure.
        if group.is_none() {
            let code = r
                .mentions
                .iter()
                .find(|m| !r.used[m.start] && is_code(table, &m.column) && asked(m))
                .cloned();
            let measure = r
                .mentions
                .iter()
                .any(|m| is_numeric(m) && !r.used[m.start] && !is_code(table, &m.column));
            if measure {
                group = code;
            }
        }
        // "What was the highest closing price, and on which date?": the date is the label.
        if group.is_none() {
            group = r
                .mentions
                .iter()
                .find(|m| {
                    m.kind == "datetime"
                        && !r.used[m.start]
                        && m.start > 0
                        && QUESTION_WORDS.contains(&r.w[m.start - 1].as_str())
                })
                .cloned();
        }
    }
    let argmax = argmax && group.is_some();
    let mut stats_found = stats_found;
    if !argmax && (high || low) && r.w.first().is_some_and(|x| x == "who" || x == "quien") {
        // "Who scored the highest in math?" asks for a person, not the score.
        r.not_understood.push(r.say(
            "\"who\": which column names the rows (ask e.g. \"which student_id has the highest math_score\")",
            "\"quién\": qué columna nombra las filas (pregunte, por ejemplo, \"qué student_id tiene la math_score más alta\")",
        ));
    }
    if question && !argmax && (high || low) && !correlation && !outliers && !normality {
        // "What is the highest score?": the maximum itself.
        let name = if high { "max" } else { "min" };
        if !stats_found.iter().any(|(_, _, s)| s.name == name) {
            stats_found.push((usize::MAX, usize::MAX, Stat::plain(name)));
        }
    }

    // The measures: the numeric columns named that are not used by a condition,
    // the group, or a derived measure.
    let group_col = group.as_ref().map(|g| g.column.clone());
    let measure_mentions: Vec<Mention> = r
        .mentions
        .iter()
        .filter(|m| !r.used[m.start] && Some(&m.column) != group_col.as_ref())
        .cloned()
        .collect();
    let mut measures: Vec<MeasureSpec> = Vec::new();
    if let Some((d, name)) = &derived {
        let symbol = match d.op {
            "product" => "x",
            "difference" | "days" | "hours" => "-",
            _ => "/",
        };
        let name = name
            .clone()
            .unwrap_or_else(|| format!("{} {symbol} {}", d.a, d.b));
        measures.push(MeasureSpec {
            name,
            column: None,
            derived: Some(d.clone()),
        });
    }
    let mut text_measures = Vec::new();
    for m in &measure_mentions {
        if measures
            .iter()
            .any(|x| x.column.as_deref() == Some(&m.column))
        {
            continue;
        }
        if is_numeric(m) {
            measures.push(MeasureSpec {
                name: m.column.clone(),
                column: Some(m.column.clone()),
                derived: None,
            });
        } else {
            text_measures.push(m.clone());
        }
    }

    let stat_names: Vec<&str> = stats_found.iter().map(|(_, _, s)| s.name).collect();
    let only_counts = !stat_names.is_empty()
        && stat_names
            .iter()
            .all(|s| ["count", "distinct", "mode", "missing"].contains(s));
    if only_counts && measures.is_empty() {
        // Counting or the mode of a text column is fine ("how many distinct cities").
        if let Some(t) = text_measures.first() {
            measures.push(MeasureSpec {
                name: t.column.clone(),
                column: Some(t.column.clone()),
                derived: None,
            });
        }
    } else if !text_measures.is_empty() && measures.is_empty() && !argmax && !share {
        let t = &text_measures[0];
        r.not_understood.push(r.say(
            &format!(
                "`{}` is a text column: I cannot compute {} of it",
                t.column,
                stat_names.join(", ")
            ),
            &format!(
                "`{}` es una columna de texto: no puedo calcular {} de ella",
                t.column,
                stat_names.join(", ")
            ),
        ));
    }

    let task_kind = if correlation {
        Task::Correlation
    } else if outliers {
        Task::Outliers
    } else if normality {
        Task::Normality
    } else if argmax {
        if low && !high {
            Task::Argmin
        } else if high && low {
            // "highest" and "lowest" both: the first said wins.
            let first_high = HIGH_WORDS.iter().flat_map(|p| find(&r.w, p)).min();
            let first_low = LOW_WORDS.iter().flat_map(|p| find(&r.w, p)).min();
            if first_low < first_high {
                Task::Argmin
            } else {
                Task::Argmax
            }
        } else {
            Task::Argmax
        }
    } else {
        Task::Describe
    };

    let mut stats: Vec<Stat> = Vec::new();
    for (_, _, s) in &stats_found {
        if !stats.contains(s) {
            stats.push(s.clone());
        }
    }
    // "how many distinct cities": the distinct count, not also the count of rows.
    if stats
        .iter()
        .any(|s| ["distinct", "missing"].contains(&s.name))
    {
        stats.retain(|s| s.name != "count");
    }
    let mut plan = StatPlan {
        task: task_kind,
        stats: Vec::new(),
        measures: Vec::new(),
        second: None,
        group: group_col.clone(),
        label_op: None,
        filters,
        ddof: if population { 0 } else { 1 },
        decimals,
        missing,
        method: None,
        z: 3.0,
        alpha: 0.05,
        alpha_said: false,
        needs_value_filter: false,
        named_columns: r.mentions.iter().map(|m| m.column.clone()).collect(),
        share_of: None,
    };
    match task_kind {
        Task::Correlation => {
            let nums: Vec<&MeasureSpec> = measures.iter().filter(|m| m.column.is_some()).collect();
            if nums.len() < 2 {
                r.not_understood.push(r.say(
                    "which two numeric columns to correlate (name both)",
                    "qué dos columnas numéricas correlacionar (nombre las dos)",
                ));
            } else {
                plan.measures = vec![nums[0].clone()];
                plan.second = nums[1].column.clone();
            }
            plan.method = Some(
                if has(&r.w, "spearman") || has_any(&r.w, &["rank*", "rango*"]) {
                    "spearman"
                } else {
                    "pearson"
                },
            );
            plan.group = None;
        }
        Task::Outliers | Task::Normality => {
            if task_kind == Task::Outliers {
                let z = has_any(
                    &r.w,
                    &[
                        "z score",
                        "zscore",
                        "z scores",
                        "standard deviations",
                        "desviaciones",
                    ],
                );
                plan.method = Some(if z { "z" } else { "iqr" });
                if z {
                    for (i, x) in r.w.iter().enumerate() {
                        if x.starts_with("standard") || x.starts_with("desviacion") || x == "sigma"
                        {
                            if let Some(v) = i.checked_sub(1).and_then(|j| num(&r.w[j])) {
                                plan.z = v;
                            }
                        }
                    }
                    // "a z-score threshold of 2.5", "umbral de 2,5"
                    for (i, x) in r.w.iter().enumerate() {
                        if x == "threshold" || x == "umbral" {
                            let mut k = i + 1;
                            if r.w.get(k).is_some_and(|x| x == "of" || x == "de") {
                                k += 1;
                            }
                            if let Some(v) = r.w.get(k).and_then(|x| digits(x)) {
                                plan.z = v;
                            }
                        }
                    }
                    if let Some(v) = r.z_threshold {
                        plan.z = v;
                    }
                }
            } else {
                if let Some(a) = alpha(&r.w) {
                    (plan.alpha, plan.alpha_said) = (a, true);
                }
                plan.method = Some(if has(&r.w, "shapiro") {
                    "shapiro"
                } else if has_any(&r.w, &["kolmogorov", "ks test", "ks"]) {
                    "ks"
                } else {
                    "skew"
                });
            }
            plan.measures = measures.into_iter().take(1).collect();
            plan.group = None;
        }
        Task::Argmax | Task::Argmin => {
            // The statistic, if said, is how a label's rows are combined ("highest
            // average score"); "highest"/"maximum" themselves are the argmax.
            let combine: Vec<&Stat> = stats
                .iter()
                .filter(|s| !["max", "min"].contains(&s.name))
                .collect();
            match combine.as_slice() {
                [] => {}
                [s] if ["sum", "mean", "median", "count"].contains(&s.name) => plan.label_op = Some(s.name),
                [s, ..] => r.not_understood.push(r.say(
                    &format!("which label is highest or lowest by {}: I can rank labels by a total, a mean, a median or a count", s.name),
                    &format!("qué etiqueta es la más alta o baja según {}: sé ordenar por total, media, mediana o recuento", s.name),
                )),
            }
            // "Which sex has the lower survival count?": the count of a 0/1 column's
            // ones is its total, not the rows.
            let ones = measures.first().is_some_and(|m| {
                table.column_kinds.iter().any(|c| {
                    Some(&c.name) == m.column.as_ref()
                        && c.values.len() == 2
                        && c.values.iter().all(|v| v == "0" || v == "1")
                })
            });
            if plan.label_op == Some("count") && ones {
                plan.label_op = Some("sum");
            }
            if plan.label_op.is_some()
                && derived.is_none()
                && plan.filters.is_empty()
                && r.not_understood.is_empty()
                && !plan.group.as_deref().is_some_and(|g| is_code(table, g))
                && !ones
            {
                // "Which category has the highest average unit cost?": aggregate.py.
                return Understood::NotMine;
            }
            if plan.label_op.is_none() && derived.as_ref().is_some_and(|(d, _)| d.op == "product") {
                // "revenue is units times price" over several rows a label: its total.
                plan.label_op = Some("sum_if_repeated");
            }
            let quantity = (0..r.w.len()).any(|i| {
                ["most", "least", "fewest", "mas"].contains(&r.w[i].as_str())
                    && r.mention_at(i + 1).is_some()
            }) || has_any(
                &r.w,
                &[
                    "sold",
                    "sell",
                    "sells",
                    "vendio",
                    "vendieron",
                    "vende",
                    "venden",
                    "vendido",
                ],
            );
            if plan.label_op.is_none() && quantity {
                // "Which product sold the most units?": a quantity adds up over a
                // label's rows; with no condition, the aggregate skill's question.
                if derived.is_none() && plan.filters.is_empty() && r.not_understood.is_empty() {
                    return Understood::NotMine;
                }
                plan.label_op = Some("sum_if_repeated");
            }
            if plan.group.is_none() {
                r.not_understood.push(r.say(
                    "which column holds the labels to compare (e.g. \"which city\")",
                    "qué columna tiene las etiquetas a comparar (por ejemplo, \"qué ciudad\")",
                ));
            }
            if plan.label_op == Some("count") {
                plan.measures = measures.into_iter().take(1).collect();
            } else {
                plan.measures = measures.into_iter().take(1).collect();
                if plan.measures.is_empty() {
                    r.not_understood.push(r.say(
                        "which numeric value to compare the labels by (name its column)",
                        "por qué valor numérico comparar las etiquetas (nombre su columna)",
                    ));
                }
            }
        }
        Task::Describe if share => {
            // The share's condition: a yes/no column named ("survived", "survival"),
            // else the one value condition ("are female").
            let yes_no = r
                .mentions
                .iter()
                .find(|m| {
                    !r.used[m.start]
                        && table.column_kinds.iter().any(|c| {
                            c.name == m.column
                                && c.distinct == 2
                                && c.values
                                    .iter()
                                    .all(|v| TRUTHY.contains(&normalise(v).as_str()))
                        })
                })
                .map(|m| Filter {
                    column: m.column.clone(),
                    op: "is_true",
                    ..Filter::default()
                });
            let truth = plan
                .filters
                .iter()
                .position(|f| ["is_true", "is_false"].contains(&f.op));
            let values: Vec<usize> = (0..plan.filters.len())
                .filter(|&i| plan.filters[i].op == "in")
                .collect();
            plan.share_of = match (yes_no, truth, values.as_slice()) {
                (Some(f), _, _) => Some(f),
                (None, Some(i), _) => Some(plan.filters.remove(i)),
                (None, None, [i]) => Some(plan.filters.remove(*i)),
                _ => None,
            };
            if plan.share_of.is_none() {
                r.not_understood.push(r.say(
                    "the share of which rows: name a yes/no column or a value (\"what percentage of passengers survived\", \"are female\")",
                    "el porcentaje de qué filas: nombre una columna de sí/no o un valor (\"qué porcentaje de pasajeros sobrevivió\", \"son mujeres\")",
                ));
            }
            if stats.iter().any(|s| s.name != "share" && s.name != "count")
                || !measures.is_empty()
                    && plan.share_of.as_ref().is_some_and(|f| {
                        !measures
                            .iter()
                            .all(|m| m.column.as_deref() == Some(f.column.as_str()))
                    })
            {
                r.not_understood.push(r.say(
                    "a share together with another statistic or measure",
                    "un porcentaje junto con otra estadística o medida",
                ));
            }
            plan.stats = vec![Stat::plain("share")];
        }
        Task::Describe => {
            plan.stats = stats.clone();
            plan.measures = measures;
            // "price in Austin compared to Denver", "in Austin and Portland": each
            // value's own statistic, side by side (never one pooled number).
            if plan.group.is_none() {
                if let Some(f) = plan
                    .filters
                    .iter()
                    .find(|f| f.op == "in" && f.values.len() >= 2)
                {
                    plan.group = Some(f.column.clone());
                }
            }
            let needs_measure = plan.stats.iter().any(|s| s.name != "count");
            if plan.stats.is_empty() {
                r.not_understood
                    .push(r.say("which statistic to compute", "qué estadística calcular"));
            } else if plan.measures.is_empty() && needs_measure {
                let after = unknown_after_stat(&r);
                r.not_understood.push(match after {
                    Some(x) => r.say(
                        &format!("\"{x}\": no column of the table has that name"),
                        &format!("\"{x}\": ninguna columna de la tabla se llama así"),
                    ),
                    None => r.say(
                        "of which column: the request names none of the table's columns",
                        "de qué columna: la petición no nombra ninguna columna de la tabla",
                    ),
                });
            }
            // A plain total/mean/median/count/min/max by a group of a column is
            // aggregate.py's question.
            let plain = plan.stats.len() == 1
                && ["sum", "mean", "median", "count", "min", "max"].contains(&plan.stats[0].name)
                && plan.measures.len() <= 1
                && plan.measures.iter().all(|m| m.derived.is_none())
                && plan.filters.is_empty()
                && decimals.is_none();
            // "How many orders had a discount?": the rows with which values of it?
            // (Counting its non-missing values answers another question.)
            if plan.stats.len() == 1 && plan.stats[0].name == "count" && plan.group.is_none() {
                for m in &measure_mentions {
                    let having = (m.start.saturating_sub(2)..m.start).any(|k| {
                        [
                            "had", "have", "has", "having", "with", "got", "tienen", "tiene",
                            "tuvieron", "con",
                        ]
                        .contains(&r.w[k].as_str())
                    });
                    if having && is_numeric(m) {
                        r.not_understood.push(r.say(
                            &format!(
                                "which values of `{}` count (say e.g. \"more than 0\")",
                                m.column
                            ),
                            &format!(
                                "qué valores de `{}` cuentan (diga, por ejemplo, \"más de 0\")",
                                m.column
                            ),
                        ));
                    }
                }
            }
            let code = plan.group.as_deref().is_some_and(|g| is_code(table, g));
            if plain && plan.group.is_some() && r.not_understood.is_empty() && !code {
                return Understood::NotMine;
            }
        }
    }
    if has_any(&r.w, CONDITION_WORDS) && plan.filters.is_empty() {
        plan.needs_value_filter = true;
    }
    let all_rows = plan.task == Task::Describe
        && plan.stats.iter().all(|s| s.name == "count")
        && plan.measures.is_empty()
        && plan.filters.is_empty();
    if all_rows {
        if let Some(said) = unread_in_a_row_count(&r, &stats_spans) {
            r.not_understood.push(r.say(
                &format!("the words \"{said}\": counting every row would leave them out"),
                &format!("las palabras \"{said}\": contar todas las filas las dejaría fuera"),
            ));
        }
    }
    for said in unread_words(
        &r,
        &stats_spans,
        !plan.filters.is_empty(),
        missing == "zero",
        plan.group.is_some(),
    ) {
        r.not_understood.push(r.say(
            &format!("the words \"{said}\": they change what is asked, and I could not read them"),
            &format!("las palabras \"{said}\": cambian lo que se pide y no supe leerlas"),
        ));
    }
    if !r.not_understood.is_empty() {
        return Understood::Decline(Decline {
            understood: described(&plan, r.lang),
            not_understood: r.not_understood,
        });
    }
    Understood::Plan(Box::new(plan))
}

#[cfg(test)]
mod tests;
