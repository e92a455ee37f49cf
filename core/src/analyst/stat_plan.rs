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

/// A calendar day (proleptic Gregorian).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
struct Day {
    y: i32,
    m: u32,
    d: u32,
}

impl Day {
    fn iso(self) -> String {
        format!("{:04}-{:02}-{:02}", self.y, self.m, self.d)
    }

    fn month_len(y: i32, m: u32) -> u32 {
        match m {
            2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }

    fn next(self) -> Day {
        if self.d < Day::month_len(self.y, self.m) {
            Day {
                d: self.d + 1,
                ..self
            }
        } else if self.m < 12 {
            Day {
                m: self.m + 1,
                d: 1,
                ..self
            }
        } else {
            Day {
                y: self.y + 1,
                m: 1,
                d: 1,
            }
        }
    }

    /// The first day of the month `m` of year `y` (months past 12 roll into the next year).
    fn first(y: i32, m: u32) -> Day {
        Day {
            y: y + ((m - 1) / 12) as i32,
            m: (m - 1) % 12 + 1,
            d: 1,
        }
    }
}

/// A time said in a condition: a day, a run of months (in a year, or in any year),
/// or a year.
#[derive(Clone, Copy, Debug, PartialEq)]
enum When {
    Day(Day),
    /// Months `lo..=hi`, of the year when said.
    Months(Option<i32>, u32, u32),
    Year(i32),
}

impl When {
    /// The first day it covers, and the first day after it (None: no year said).
    fn span(self) -> Option<(Day, Day)> {
        match self {
            When::Day(d) => Some((d, d.next())),
            When::Months(Some(y), lo, hi) => Some((Day::first(y, lo), Day::first(y, hi + 1))),
            When::Months(None, _, _) => None,
            When::Year(y) => Some((Day::first(y, 1), Day::first(y + 1, 1))),
        }
    }
}

/// Month names, English and Spanish, normalised, with their numbers.
const MONTH_NUMBERS: &[(&str, u32)] = &[
    ("january", 1),
    ("february", 2),
    ("march", 3),
    ("april", 4),
    ("may", 5),
    ("june", 6),
    ("july", 7),
    ("august", 8),
    ("september", 9),
    ("october", 10),
    ("november", 11),
    ("december", 12),
    ("enero", 1),
    ("febrero", 2),
    ("marzo", 3),
    ("abril", 4),
    ("mayo", 5),
    ("junio", 6),
    ("julio", 7),
    ("agosto", 8),
    ("septiembre", 9),
    ("setiembre", 9),
    ("octubre", 10),
    ("noviembre", 11),
    ("diciembre", 12),
];

fn month_number(w: &str) -> Option<u32> {
    MONTH_NUMBERS.iter().find(|(n, _)| *n == w).map(|(_, m)| *m)
}

fn year_of(w: &str) -> Option<i32> {
    digits(w)
        .filter(|y| (1900.0..2100.0).contains(y) && y.fract() == 0.0)
        .map(|y| y as i32)
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

/// Phrases that group by a period of a time column (normalised, whole words).
const PERIOD_GROUPS: &[&str] = &[
    "which weekday",
    "which day of the week",
    "which day of week",
    "which month",
    "which hour",
    "which week",
    "which year",
    "which quarter",
    "what weekday",
    "what day of the week",
    "what month",
    "what hour",
    "by weekday",
    "by day of week",
    "by day of the week",
    "by month",
    "by hour",
    "by week",
    "by year",
    "per weekday",
    "per month",
    "per hour",
    "per week",
    "per year",
    "each month",
    "each weekday",
    "each hour",
    "que dia de la semana",
    "que mes",
    "que hora",
    "por dia de la semana",
    "por mes",
    "por hora",
    "por semana",
    "cada mes",
];

/// Statistics by the words that ask for them (normalised, whole words).
const STAT_WORDS: &[(&str, &str)] = &[
    ("standard deviation", "std"),
    ("std dev", "std"),
    ("stdev", "std"),
    ("std", "std"),
    ("desviacion estandar", "std"),
    ("desviacion tipica", "std"),
    ("variance", "var"),
    ("varianza", "var"),
    ("interquartile range", "iqr"),
    ("rango intercuartilico", "iqr"),
    ("iqr", "iqr"),
    ("average", "mean"),
    ("mean", "mean"),
    ("promedio", "mean"),
    ("media", "mean"),
    ("valor medio", "mean"),
    ("medio", "mean"),
    ("median", "median"),
    ("mediana", "median"),
    ("most common value", "mode"),
    ("most frequent value", "mode"),
    ("valor mas frecuente", "mode"),
    ("most common", "mode"),
    ("most frequent", "mode"),
    ("mas comun", "mode"),
    ("mas frecuente", "mode"),
    ("percentage of", "share"),
    ("percent of", "share"),
    ("proportion of", "share"),
    ("fraction of", "share"),
    ("share of", "share"),
    ("rate", "share"),
    ("porcentaje de", "share"),
    ("proporcion de", "share"),
    ("tasa de", "share"),
    ("missing values", "missing"),
    ("missing entries", "missing"),
    ("null values", "missing"),
    ("nan values", "missing"),
    ("missing", "missing"),
    ("nulls", "missing"),
    ("valores faltantes", "missing"),
    ("valores nulos", "missing"),
    ("valores vacios", "missing"),
    ("faltantes", "missing"),
    ("mode", "mode"),
    ("moda", "mode"),
    ("minimum", "min"),
    ("min", "min"),
    ("minimo", "min"),
    ("minima", "min"),
    ("maximum", "max"),
    ("max", "max"),
    ("maximo", "max"),
    ("maxima", "max"),
    ("range", "range"),
    ("rango", "range"),
    ("distinct", "distinct"),
    ("unique", "distinct"),
    ("different", "distinct"),
    ("distintos", "distinct"),
    ("distintas", "distinct"),
    ("diferentes", "distinct"),
    ("unicos", "distinct"),
    ("unicas", "distinct"),
    ("how many", "count"),
    ("count", "count"),
    ("number of", "count"),
    ("cuantos", "count"),
    ("cuantas", "count"),
    ("numero de", "count"),
    ("sum", "sum"),
    ("total", "sum"),
    ("suma", "sum"),
    ("skewness", "skew"),
    ("skew", "skew"),
    ("asimetria", "skew"),
    ("kurtosis", "kurt"),
    ("curtosis", "kurt"),
];

/// The values of a yes/no column (as the script reads them).
const TRUTHY: &[&str] = &[
    "0",
    "1",
    "0 0",
    "1 0",
    "true",
    "false",
    "yes",
    "no",
    "y",
    "n",
    "t",
    "f",
    "si",
    "s",
    "verdadero",
    "falso",
];

/// Words before "missing values" that say how to handle them, not to count them.
const HANDLING: &[&str] = &[
    "ignoring",
    "ignore",
    "excluding",
    "exclude",
    "dropping",
    "drop",
    "without",
    "skipping",
    "skip",
    "omitting",
    "omit",
    "removing",
    "remove",
    "fill",
    "filling",
    "sin",
    "ignorando",
    "excluyendo",
    "descartando",
    "omitiendo",
];
const HANDLING_AFTER: &[&str] = &[
    "as", "como", "dropped", "removed", "excluded", "ignored", "omitted",
];

/// Statistics and tests this planner does not compute: named, they are declined.
const UNSUPPORTED_STATS: &[&str] = &[
    "geometric mean",
    "harmonic mean",
    "media geometrica",
    "media armonica",
    "weighted",
    "ponderad*",
    "moving average",
    "rolling",
    "media movil",
    "cumulative",
    "acumulad*",
    "t test",
    "significant difference",
    "significantly different",
    "significantly higher",
    "significantly lower",
    "hypothesis",
    "diferencia significativa",
    "ttest",
    "anova",
    "chi square",
    "chi squared",
    "chi cuadrado",
    "regression",
    "regresion",
    "confidence interval",
    "intervalo de confianza",
    "mann whitney",
    "wilcoxon",
    "kendall",
    "anderson",
    "median absolute deviation",
    "entropy",
    "entropia",
    "gini",
    "trimmed",
    "recortada",
    "coefficient of variation",
    "coeficiente de variacion",
    "jarque",
    "lilliefors",
    "impute",
    "imputa*",
    "interpolat*",
    "interpola*",
];

/// An anomaly search (with a time column): the anomaly skill's, never statistics.
const ANOMALY_WORDS: &[&str] = &[
    "anomal*",
    "abnormal*",
    "unusual",
    "spike*",
    "anormal*",
    "inusual*",
];

/// Tasks outside every skill: with a statistic in the same request, it is declined.
const OUT_OF_SCOPE: &[&str] = &[
    "forecast*",
    "predict*",
    "pronostic*",
    "predec*",
    "predic*",
    "prevision*",
    "translate*",
    "traduc*",
    "poem*",
    "poema*",
    "cluster*",
    "machine learning",
    "classif*",
    "clasific*",
];

const QUESTION_WORDS: &[&str] = &["which", "what", "who", "cual", "cuales", "que", "quien"];
const HIGH_WORDS: &[&str] = &[
    "highest",
    "hottest",
    "warmest",
    "higher",
    "larger",
    "bigger",
    "greater",
    "largest",
    "biggest",
    "greatest",
    "most",
    "mas alto",
    "mas alta",
    "mas altos",
    "mas altas",
    "mas grande",
    "mayor",
    "mayores",
    "mas",
    "maxima",
    "maximo",
    "maximum",
    "max",
];
const LOW_WORDS: &[&str] = &[
    "lowest",
    "coldest",
    "cheapest",
    "lower",
    "smaller",
    "smallest",
    "least",
    "fewest",
    "mas bajo",
    "mas baja",
    "mas bajos",
    "mas bajas",
    "mas pequeno",
    "menor",
    "menores",
    "minima",
    "minimo",
    "minimum",
    "min",
];
const GROUP_WORDS: &[&str] = &[
    "by",
    "per",
    "por",
    "each",
    "cada",
    "across",
    "segun",
    "for each",
    "para cada",
];
const PERIODS: &[&str] = &[
    "month",
    "months",
    "monthly",
    "mes",
    "meses",
    "week",
    "weeks",
    "weekly",
    "semana",
    "day",
    "days",
    "daily",
    "dia",
    "weekday",
    "hour",
    "hora",
    "quarter",
    "trimestre",
    "year",
    "years",
    "ano",
    "anos",
];
/// Words that introduce a condition the planner must read (else it declines).
const CONDITION_WORDS: &[&str] = &[
    "where",
    "whose",
    "only",
    "excluding",
    "except",
    "donde",
    "cuyo",
    "cuya",
    "cuyos",
    "cuyas",
    "solo",
    "solamente",
    "excepto",
    "salvo",
];

/// Comparators: words, the operator, and the column they imply (age for "older").
const COMPARATORS: &[(&str, &str, Option<&str>)] = &[
    ("older than", "gt", Some("age")),
    ("younger than", "lt", Some("age")),
    ("at least", "ge", None),
    ("at most", "le", None),
    ("no more than", "le", None),
    ("no less than", "ge", None),
    ("greater than or equal to", "ge", None),
    ("less than or equal to", "le", None),
    ("greater than", "gt", None),
    ("more than", "gt", None),
    ("higher than", "gt", None),
    ("larger than", "gt", None),
    ("bigger than", "gt", None),
    ("above", "gt", None),
    ("over", "gt", None),
    ("exceeding", "gt", None),
    ("less than", "lt", None),
    ("lower than", "lt", None),
    ("smaller than", "lt", None),
    ("fewer than", "lt", None),
    ("below", "lt", None),
    ("under", "lt", None),
    ("equal to", "eq", None),
    ("equals", "eq", None),
    ("exceed", "gt", None),
    ("exceeds", "gt", None),
    ("supera", "gt", None),
    ("superan", "gt", None),
    ("superen", "gt", None),
    ("mayores de", "gt", Some("age")),
    ("mayores que", "gt", None),
    ("mayor de", "gt", Some("age")),
    ("mayor que", "gt", None),
    ("menores de", "lt", Some("age")),
    ("menores que", "lt", None),
    ("menor de", "lt", Some("age")),
    ("menor que", "lt", None),
    ("mas de", "gt", None),
    ("mas que", "gt", None),
    ("menos de", "lt", None),
    ("menos que", "lt", None),
    ("superior a", "gt", None),
    ("superiores a", "gt", None),
    ("inferior a", "lt", None),
    ("inferiores a", "lt", None),
    ("por encima de", "gt", None),
    ("por debajo de", "lt", None),
    ("al menos", "ge", None),
    ("como minimo", "ge", None),
    ("como maximo", "le", None),
    ("igual a", "eq", None),
];

/// The request's words: normalised, with decimals kept ("2.5" stays one word) and
/// arithmetic signs spelled out.
pub(super) fn words_of(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut skip = 0;
    for (i, &c) in chars.iter().enumerate() {
        if skip > 0 {
            skip -= 1;
            continue;
        }
        // An ISO day ("2020-06-01") is one word, "iso20200601".
        if let Some(day) = iso_day_at(&chars, i) {
            out.push_str(&format!(" iso{} ", day.iso().replace('-', "")));
            skip = 9;
            continue;
        }
        let digit_at = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(char::is_ascii_digit)
        };
        match c {
            '.' | ',' if digit_at(i.checked_sub(1)) && digit_at(Some(i + 1)) => out.push('d'),
            '*' | '\u{d7}' => out.push_str(" times "),
            '/' | '\u{f7}' => out.push_str(" divided by "),
            '=' => out.push_str(" is "),
            '>' => out.push_str(" greater than "),
            '<' => out.push_str(" less than "),
            '-' if chars.get(i + 1) == Some(&' ') && i > 0 && chars[i - 1] == ' ' => {
                out.push_str(" minus ")
            }
            c => out.push(c),
        }
    }
    let n = format!(" {} ", normalise(&out))
        .replace(" por favor ", " ")
        .replace(" please ", " ")
        .replace(" square feet ", " sqft ")
        .replace(" square foot ", " sqft ")
        .replace(" sq ft ", " sqft ");
    n.split_whitespace().map(str::to_string).collect()
}

/// "YYYY-MM-DD" starting at `i` (not inside a longer run of digits).
fn iso_day_at(chars: &[char], i: usize) -> Option<Day> {
    if i > 0 && chars[i - 1].is_ascii_alphanumeric() {
        return None;
    }
    let t: String = chars.get(i..i + 10)?.iter().collect();
    if chars.get(i + 10).is_some_and(char::is_ascii_digit) {
        return None;
    }
    let b = t.as_bytes();
    if b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (
        t[0..4].parse::<i32>().ok()?,
        t[5..7].parse::<u32>().ok()?,
        t[8..10].parse::<u32>().ok()?,
    );
    ((1..=12).contains(&m) && d >= 1 && d <= Day::month_len(y, m)).then_some(Day { y, m, d })
}

fn iso_word(w: &str) -> Option<Day> {
    let t = w.strip_prefix("iso").filter(|t| t.len() == 8)?;
    Some(Day {
        y: t[0..4].parse().ok()?,
        m: t[4..6].parse().ok()?,
        d: t[6..8].parse().ok()?,
    })
}

/// A number word ("30", "2d5" for 2.5, "two").
fn number(w: &str) -> Option<f64> {
    let names = [
        ("zero", 0.0),
        ("one", 1.0),
        ("two", 2.0),
        ("three", 3.0),
        ("four", 4.0),
        ("five", 5.0),
        ("cero", 0.0),
        ("uno", 1.0),
        ("una", 1.0),
        ("dos", 2.0),
        ("tres", 3.0),
        ("cuatro", 4.0),
        ("cinco", 5.0),
    ];
    names.iter().find(|(n, _)| *n == w).map(|(_, v)| *v)
}

/// A number written in digits ("30", "2d5", "90th").
fn digits(w: &str) -> Option<f64> {
    let core = ["th", "st", "nd", "rd", "o", "a"]
        .iter()
        .find_map(|s| {
            w.strip_suffix(s)
                .filter(|c| c.chars().all(|ch| ch.is_ascii_digit() || ch == 'd'))
        })
        .unwrap_or(w);
    if core.is_empty() || !core.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    core.replacen('d', ".", 1).parse().ok()
}

fn num(w: &str) -> Option<f64> {
    digits(w).or_else(|| number(w))
}

/// Positions where `phrase` (normalised words; a trailing `*` matches a prefix)
/// occurs in `w`.
fn find(w: &[String], phrase: &str) -> Vec<usize> {
    let p: Vec<&str> = phrase.split(' ').collect();
    if p.is_empty() || w.len() < p.len() {
        return Vec::new();
    }
    (0..=w.len() - p.len())
        .filter(|&i| {
            p.iter()
                .enumerate()
                .all(|(k, pw)| match pw.strip_suffix('*') {
                    Some(stem) => w[i + k].starts_with(stem),
                    None => w[i + k] == *pw,
                })
        })
        .collect()
}

fn has(w: &[String], phrase: &str) -> bool {
    !find(w, phrase).is_empty()
}

fn has_any(w: &[String], phrases: &[&str]) -> bool {
    phrases.iter().any(|p| has(w, p))
}

/// A column named in the request: its words span `start..end`.
#[derive(Clone, Debug)]
struct Mention {
    column: String,
    kind: String,
    start: usize,
    end: usize,
}

/// Words a request may use for a column's word: abbreviations, and Spanish for the
/// English names of everyday columns (and back).
const SYNONYMS: &[(&str, &str)] = &[
    ("quantity", "qty"),
    ("percent", "pct"),
    ("temperature", "temp"),
    ("number", "num"),
    ("amount", "amt"),
    ("pais", "country"),
    ("paises", "country"),
    ("satisfaccion", "satisfaction"),
    ("ciudad", "city"),
    ("ciudades", "city"),
    ("precio", "price"),
    ("edad", "age"),
    ("ventas", "sales"),
    ("ingresos", "revenue"),
    ("unidades", "units"),
    ("cantidad", "quantity"),
    ("temperatura", "temperature"),
    ("humedad", "humidity"),
    ("puntuacion", "score"),
    ("producto", "product"),
    ("categoria", "category"),
    ("coste", "cost"),
    ("costo", "cost"),
    ("clase", "class"),
    ("tarifa", "fare"),
    ("visitas", "visits"),
    ("valor", "value"),
    ("fecha", "date"),
    ("tienda", "store"),
    ("almacen", "warehouse"),
    ("cliente", "customer"),
    ("pedido", "order"),
    ("aged", "age"),
    ("genero", "gender"),
    ("sexo", "sex"),
    ("rain", "precipitation"),
    ("rainfall", "precipitation"),
    ("lluvia", "precipitation"),
    ("precipitacion", "precipitation"),
    ("dormitorios", "bedrooms"),
    ("habitaciones", "bedrooms"),
    ("banos", "bathrooms"),
    ("sobrevivieron", "survived"),
    ("sobrevivio", "survived"),
    ("sobrevivientes", "survived"),
    ("supervivientes", "survived"),
    ("devolvieron", "returned"),
    ("devueltos", "returned"),
    ("devuelto", "returned"),
    ("departamento", "department"),
    ("salario", "salary"),
    ("sueldo", "salary"),
    ("descuento", "discount"),
    ("construidas", "built"),
    ("construida", "built"),
    ("construidos", "built"),
    ("construido", "built"),
    ("superficie", "area"),
    ("poblacion", "population"),
    ("esperanza", "expectancy"),
    ("volumen", "volume"),
    ("cierre", "close"),
    ("viento", "wind"),
    ("lectura", "reading"),
    ("escritura", "writing"),
    ("matematicas", "math"),
];

/// Short words of column names that are units or abbreviations, never the column.
const NOT_A_NAME: &[&str] = &[
    "usd", "eur", "gbp", "kwh", "avg", "max", "min", "sum", "num", "pct", "qty", "std", "var",
    "the", "and", "per", "day", "kmh", "mph", "sqm",
];

/// Column words a request may use for a column: its normalised name (singular or
/// plural) and, for a name of several words, each long word unique to it.
fn mentions(w: &[String], table: &Table) -> Vec<Mention> {
    let columns: Vec<(String, String)> = if table.column_kinds.is_empty() {
        table
            .column_names
            .iter()
            .map(|c| (c.clone(), String::new()))
            .collect()
    } else {
        table
            .column_kinds
            .iter()
            .map(|c| (c.name.clone(), c.kind.clone()))
            .collect()
    };
    let toks: Vec<Vec<String>> = columns
        .iter()
        .map(|(c, _)| {
            normalise(&camel_apart(c))
                .split(' ')
                .map(str::to_string)
                .collect()
        })
        .collect();
    let same = |a: &str, b: &str| {
        a == b
            || a.strip_suffix('s') == Some(b)
            || a.strip_suffix("es") == Some(b)
            || b.strip_suffix('s') == Some(a)
            || SYNONYMS
                .iter()
                .any(|(x, y)| (a == *x && b == *y) || (a == *y && b == *x))
            || stem(a).is_some_and(|sa| stem(b) == Some(sa))
    };
    let is_id = |ci: usize| {
        table
            .column_kinds
            .iter()
            .any(|c| c.name == columns[ci].0 && c.id)
    };
    // (strength, length, start, column index)
    let mut found: Vec<(u8, usize, usize, usize)> = Vec::new();
    // "SibSp", "pclass": the whole name as one word.
    for (ci, (c, _)) in columns.iter().enumerate() {
        let joined = normalise(c).replace(' ', "");
        for (i, x) in w.iter().enumerate() {
            if joined.len() >= 3 && (*x == joined || x.strip_suffix('s') == Some(joined.as_str())) {
                found.push((2, 1, i, ci));
            }
        }
    }
    for (ci, t) in toks.iter().enumerate() {
        if t.is_empty() || t[0].is_empty() {
            continue;
        }
        for i in 0..w.len() {
            if i + t.len() <= w.len() && t.iter().enumerate().all(|(k, tw)| same(&w[i + k], tw)) {
                found.push((2, t.len(), i, ci));
            }
        }
        // "passenger class" for `Pclass`: a word that ends a one-word name.
        if t.len() == 1 && !is_id(ci) {
            for (i, x) in w.iter().enumerate() {
                let english = SYNONYMS
                    .iter()
                    .find(|(es, _)| es == x)
                    .map_or(x.as_str(), |(_, en)| *en);
                for x in [x.as_str(), english] {
                    if x.len() >= 4
                        && t[0].len() > x.len()
                        && t[0].len() - x.len() <= 2
                        && t[0].ends_with(x)
                    {
                        found.push((1, 1, i, ci));
                    }
                }
            }
        }
        // A word of an identifier's name ("students" for `student_id`) names the
        // rows, not the identifier.
        if t.len() > 1 && !is_id(ci) {
            let long = |tw: &&String| {
                tw.len() >= 4
                    || (tw.len() == 3
                        && tw.chars().all(|c| c.is_ascii_alphabetic())
                        && !NOT_A_NAME.contains(&tw.as_str()))
            };
            for tw in t.iter().filter(long) {
                let unique = toks
                    .iter()
                    .enumerate()
                    .all(|(cj, o)| cj == ci || !o.iter().any(|x| same(x, tw)));
                if !unique {
                    continue;
                }
                for (i, x) in w.iter().enumerate() {
                    if same(x, tw) {
                        found.push((1, 1, i, ci));
                    }
                }
            }
        }
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut taken: Vec<Mention> = Vec::new();
    for (_, len, start, ci) in found {
        if taken.iter().any(|m| start < m.end && m.start < start + len) {
            continue;
        }
        taken.push(Mention {
            column: columns[ci].0.clone(),
            kind: columns[ci].1.clone(),
            start,
            end: start + len,
        });
    }
    taken.sort_by_key(|m| m.start);
    taken
}

/// "PerformanceRating" as "Performance Rating", "HireDate" as "Hire Date" (a run of
/// capitals stays one word: "EmployeeID" is "Employee ID").
fn camel_apart(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if i > 0 && c.is_uppercase() && chars[i - 1].is_lowercase() {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// A word's stem for matching it with a column's word ("closing" and `Close`,
/// "embarkation" and `Embarked`, "survival" and `Survived`); none below 4 letters.
fn stem(w: &str) -> Option<&str> {
    let s = [
        "ation", "ely", "ors", "ing", "ion", "or", "ly", "ed", "al", "es", "s", "e",
    ]
    .iter()
    .find_map(|x| w.strip_suffix(x))
    .unwrap_or(w);
    (s.len() >= 4 && w.len() >= 5).then_some(s)
}

fn is_numeric(m: &Mention) -> bool {
    m.kind == "numeric" || m.kind.is_empty()
}

/// The words of a statistic found at `at`, in request order, with their spans.
fn statistics(w: &[String]) -> Vec<(usize, usize, Stat)> {
    statistics_with(w, true)
}

/// `durations`: whether "how many days" may be a duration (the table has two date
/// columns); else it counts the rows (days) that match.
fn statistics_with(w: &[String], durations: bool) -> Vec<(usize, usize, Stat)> {
    let mut out: Vec<(usize, usize, Stat)> = Vec::new();
    let free = |out: &Vec<(usize, usize, Stat)>, s: usize, e: usize| {
        !out.iter().any(|(a, b, _)| s < *b && *a < e)
    };
    for (phrase, name) in STAT_WORDS {
        let len = phrase.split(' ').count();
        for at in find(w, phrase) {
            // "number of days between ...": a duration, not a count.
            let next = w.get(at + len).map(String::as_str).unwrap_or("");
            if *name == "count" && ["days", "hours", "dias", "horas"].contains(&next) && durations {
                continue;
            }
            // "the average number of siblings": the count names the measure.
            if *name == "count"
                && ["number of", "numero de"].contains(phrase)
                && at > 0
                && [
                    "average", "mean", "median", "avg", "media", "promedio", "mediana", "total",
                ]
                .contains(&w[at - 1].as_str())
            {
                continue;
            }
            // "ignoring missing values", "missing as zero": how to handle them, not a count.
            let prev = at.checked_sub(1).map(|j| w[j].as_str()).unwrap_or("");
            if *name == "missing" && (HANDLING.contains(&prev) || HANDLING_AFTER.contains(&next)) {
                continue;
            }
            if free(&out, at, at + len) {
                out.push((at, at + len, Stat::plain(name)));
            }
        }
    }
    // Quantiles: "90th percentile", "percentile 90", "p90", "quartiles".
    for (i, x) in w.iter().enumerate() {
        let quantile_word = [
            "percentile",
            "percentiles",
            "percentil",
            "quantile",
            "quantiles",
            "cuantil",
            "cuantiles",
        ]
        .contains(&x.as_str());
        // "the 25th and 75th percentiles", "the 10th, 50th and 90th percentile": the
        // earlier ones too (the one just before is read below).
        if quantile_word {
            let mut j = i.checked_sub(2);
            while let Some(k) = j {
                if !["and", "y"].contains(&w[k].as_str()) && digits(&w[k]).is_none() {
                    break;
                }
                if let Some(v) = digits(&w[k]).map(|v| if v > 1.0 { v / 100.0 } else { v }) {
                    if (0.0..=1.0).contains(&v) {
                        out.push((
                            k,
                            k + 1,
                            Stat {
                                name: "quantile",
                                q: Some(v),
                            },
                        ));
                    }
                }
                j = k.checked_sub(1);
            }
        }
        let q = if quantile_word {
            let after = w.get(i + 1).and_then(|n| digits(n));
            let before = i.checked_sub(1).and_then(|j| digits(&w[j]));
            after
                .or(before)
                .map(|v| if v > 1.0 { v / 100.0 } else { v })
        } else if let Some(rest) = x.strip_prefix('p').filter(|r| r.len() == 2) {
            rest.parse::<f64>().ok().map(|v| v / 100.0)
        } else {
            None
        };
        if let Some(q) = q.filter(|q| (0.0..=1.0).contains(q)) {
            out.push((
                i,
                i + 1,
                Stat {
                    name: "quantile",
                    q: Some(q),
                },
            ));
        }
        if x == "quartiles" || x == "cuartiles" {
            for q in [0.25, 0.5, 0.75] {
                out.push((
                    i,
                    i + 1,
                    Stat {
                        name: "quantile",
                        q: Some(q),
                    },
                ));
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
                out.push((
                    i,
                    i + 1,
                    Stat {
                        name: "quantile",
                        q: Some(q),
                    },
                ));
            }
        }
    }
    out.sort_by_key(|(s, _, _)| *s);
    out
}

/// "rounded to 2 decimals", "con 3 decimales", "to the nearest integer".
fn decimals(w: &[String]) -> Option<u32> {
    for (i, x) in w.iter().enumerate() {
        if x.starts_with("decimal") || x == "places" || x == "digits" || x == "cifras" {
            if let Some(v) = i.checked_sub(1).and_then(|j| num(&w[j])) {
                return Some(v as u32);
            }
        }
    }
    if has_any(
        w,
        &[
            "nearest integer",
            "whole number",
            "sin decimales",
            "nearest whole",
            "entero mas cercano",
            "al entero",
        ],
    ) {
        return Some(0);
    }
    None
}

/// The significance level said: "alpha 0.01", "alpha = 0.1", "at the 1% level",
/// "significance level of 0.01", "nivel de significación 0,01", "alfa del 10%".
fn alpha(w: &[String]) -> Option<f64> {
    let as_level = |v: f64| if v >= 1.0 { v / 100.0 } else { v };
    let ok = |v: f64| (v > 0.0 && v < 0.5).then_some(v);
    for (i, x) in w.iter().enumerate() {
        if [
            "alpha",
            "alfa",
            "significance",
            "significancia",
            "significacion",
        ]
        .contains(&x.as_str())
        {
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

struct Reader<'a> {
    w: Vec<String>,
    table: &'a Table,
    mentions: Vec<Mention>,
    /// Word positions the plan has used (statistics, conditions, derived measures).
    used: Vec<bool>,
    not_understood: Vec<String>,
    lang: Lang,
    /// "in March" with a plain total or mean is the aggregate skill's question.
    months_to_aggregate: bool,
    /// A count is asked ("how many passengers survived").
    counting: bool,
    /// Where the count's words start.
    count_at: Option<usize>,
    /// Statistics of measures are asked (no correlation, outliers or normality).
    describing: bool,
    /// "z-scores above 3", "a z-score threshold of 2.5": the outliers' threshold.
    z_threshold: Option<f64>,
    /// An outliers question.
    outliers: bool,
}

impl Reader<'_> {
    fn say(&self, en: &str, es: &str) -> String {
        match self.lang {
            Lang::En => en.to_string(),
            Lang::Es => es.to_string(),
        }
    }

    fn mention_at(&self, start: usize) -> Option<&Mention> {
        self.mentions.iter().find(|m| m.start == start)
    }

    /// The mention ending just before `at` (articles skipped).
    fn mention_before(&self, at: usize) -> Option<&Mention> {
        let mut j = at;
        while j > 0 && ["the", "el", "la", "los", "las"].contains(&self.w[j - 1].as_str()) {
            j -= 1;
        }
        self.mentions.iter().find(|m| m.end == j)
    }

    fn mention_after(&self, at: usize) -> Option<&Mention> {
        let mut j = at;
        while j < self.w.len()
            && ["the", "el", "la", "los", "las", "of", "de", "del"].contains(&self.w[j].as_str())
        {
            j += 1;
        }
        self.mention_at(j)
    }

    /// A numeric column named just after a condition's value, past a unit or a
    /// preposition ("3 bedrooms", "90 in math", "10 mm of precipitation").
    fn mention_after_value(&self, at: usize) -> Option<Mention> {
        const BETWEEN: &[&str] = &[
            "in", "of", "de", "en", "del", "the", "el", "la", "mm", "cm", "m", "km", "kg", "g",
            "usd", "eur", "dollars", "euros", "points", "puntos", "percent", "pct", "units",
            "unidades", "kmh", "mph",
        ];
        let mut k = at;
        while k < self.w.len() && k < at + 2 && self.mention_at(k).is_none() {
            if !BETWEEN.contains(&self.w[k].as_str()) {
                return None;
            }
            k += 1;
        }
        self.mention_at(k)
            .filter(|m| is_numeric(m) && !self.used[m.start])
            .cloned()
    }

    fn kind_of(&self, column: &str) -> String {
        self.table
            .column_kinds
            .iter()
            .find(|c| c.name == column)
            .map(|c| c.kind.clone())
            .unwrap_or_default()
    }

    fn datetime_columns(&self) -> Vec<String> {
        self.table
            .column_kinds
            .iter()
            .filter(|c| c.kind == "datetime")
            .map(|c| c.name.clone())
            .collect()
    }

    /// "revenue is units times unit_price", "profit = revenue - cost", "the length of
    /// a contract" (end minus start): a derived measure, with the words that name it.
    fn derived(&mut self) -> Option<(Derived, Option<String>)> {
        let ops: &[(&str, &str)] = &[
            ("times", "product"),
            ("multiplied by", "product"),
            ("multiplicado por", "product"),
            ("por", "product"),
            ("x", "product"),
            ("minus", "difference"),
            ("menos", "difference"),
            ("divided by", "ratio"),
            ("dividido por", "ratio"),
            ("dividido entre", "ratio"),
            ("entre", "ratio"),
            ("per", "ratio"),
        ];
        for (phrase, op) in ops {
            let len = phrase.split(' ').count();
            for at in find(&self.w, phrase) {
                let (Some(a), Some(b)) = (
                    self.mention_before(at).cloned(),
                    self.mention_after(at + len).cloned(),
                ) else {
                    continue;
                };
                let dates = a.kind == "datetime" && b.kind == "datetime";
                if !(is_numeric(&a) && is_numeric(&b) || dates && *op == "difference") {
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
                    [
                        "class",
                        "type",
                        "group",
                        "category",
                        "level",
                        "grade",
                        "tier",
                        "segment",
                        "cluster",
                        "code",
                        "kind",
                        "clase",
                        "tipo",
                        "grupo",
                        "categoria",
                        "nivel",
                    ]
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
                let mut j = a.start;
                while j > 0
                    && ["of", "de", "del", "the", "el", "la"].contains(&self.w[j - 1].as_str())
                {
                    j -= 1;
                }
                if let Some(j) = j.checked_sub(1) {
                    if [
                        "range",
                        "rango",
                        "spread",
                        "gap",
                        "difference",
                        "diferencia",
                        "ratio",
                        "cociente",
                        "quotient",
                        "product",
                        "producto",
                    ]
                    .contains(&self.w[j].as_str())
                    {
                        self.used[j] = true;
                    }
                }
                let op = if dates { self.date_unit() } else { op };
                self.used[a.start..b.end].fill(true);
                let name = self.derived_name(a.start);
                let d = Derived {
                    op,
                    a: a.column,
                    b: b.column,
                };
                return Some((d, name));
            }
        }
        // "difference between A and B", "ratio of A to B", "days between A and B"
        let pairs: &[(&str, &str, &str)] = &[
            ("difference between", "and", "difference"),
            ("diferencia entre", "y", "difference"),
            ("ratio of", "to", "ratio"),
            ("ratio between", "and", "ratio"),
            ("cociente entre", "y", "ratio"),
            ("days between", "and", "days"),
            ("from", "to", "days"),
            ("desde", "hasta", "days"),
            ("hours between", "and", "hours"),
            ("time between", "and", "days"),
            ("dias entre", "y", "days"),
            ("horas entre", "y", "hours"),
            ("tiempo entre", "y", "days"),
        ];
        for (lead, join, op) in pairs {
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
                let op = match (*op, dates) {
                    ("difference" | "days", true) => self.date_unit(),
                    ("hours", true) => "hours",
                    ("difference" | "ratio", false) if is_numeric(&a) && is_numeric(&b) => op,
                    _ => continue,
                };
                for k in at..b.end {
                    self.used[k] = true;
                }
                let d = if dates {
                    Derived {
                        op,
                        a: b.column,
                        b: a.column,
                    }
                } else {
                    Derived {
                        op,
                        a: a.column,
                        b: b.column,
                    }
                };
                return Some((d, None));
            }
        }
        // "length"/"duration" with a start and an end date column.
        let duration = [
            "length", "duration", "how long", "duracion", "long", "lasted", "last",
        ];
        if has_any(&self.w, &duration) {
            let dates = self.datetime_columns();
            let role = |c: &str, words: &[&str]| {
                let n = normalise(c);
                words.iter().any(|w| n.split(' ').any(|x| x == *w))
            };
            let start = dates.iter().find(|c| {
                role(
                    c,
                    &[
                        "start", "begin", "from", "inicio", "desde", "alta", "opened", "signed",
                    ],
                )
            });
            let end = dates.iter().find(|c| {
                role(
                    c,
                    &[
                        "end", "finish", "to", "until", "fin", "hasta", "baja", "closed", "expiry",
                    ],
                )
            });
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
                    },
                    None,
                ));
            }
        }
        None
    }

    /// "fares higher than the median", "above the average order value", "por encima
    /// del precio medio": a column compared with its own (or another column's) mean or
    /// median, which the script computes on the rows the other conditions keep.
    fn stat_filters(&mut self, out: &mut Vec<Filter>) {
        let stat_word = |x: &str| match x {
            "mean" | "average" | "avg" | "promedio" | "media" | "medio" => Some("mean"),
            "median" | "mediana" => Some("median"),
            _ => None,
        };
        for (phrase, op, implied) in COMPARATORS {
            let len = phrase.split(' ').count();
            for at in find(&self.w, phrase) {
                if self.used[at] {
                    continue;
                }
                let mut k = at + len;
                while k < self.w.len()
                    && [
                        "the", "el", "la", "los", "las", "del", "de", "al", "a", "its", "su",
                    ]
                    .contains(&self.w[k].as_str())
                {
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
                let mut j = at;
                while j > 0
                    && [
                        "is", "are", "was", "were", "es", "son", "sea", "with", "con", "paid",
                        "pagaron", "pago", "cost", "costs", "costaron",
                    ]
                    .contains(&self.w[j - 1].as_str())
                {
                    j -= 1;
                }
                let before = self
                    .mentions
                    .iter()
                    .find(|m| m.end == j && is_numeric(m))
                    .map(|m| (m.start, m.column.clone()));
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

    fn age_column(&self) -> Option<String> {
        self.table
            .column_kinds
            .iter()
            .find(|c| {
                c.kind == "numeric"
                    && ["age", "edad", "years", "anos"].contains(&normalise(&c.name).as_str())
            })
            .map(|c| c.name.clone())
    }

    /// The time said at `i` (articles skipped): "2020-06-01", "March", "March 2020",
    /// "March 1, 2020", "1 de marzo de 2020", "2020", "Q2", "Q2 2020", "the second
    /// quarter of 2020", "the first half of 2019", "el primer semestre de 2019"; with
    /// the index just past its words.
    fn when_at(&self, i: usize) -> Option<(When, usize)> {
        let w = &self.w;
        let mut i = i;
        while i < w.len() && ["the", "el", "la", "los"].contains(&w[i].as_str()) {
            i += 1;
        }
        let x = w.get(i)?;
        let year_after = |k: usize| -> (Option<i32>, usize) {
            let mut j = k;
            if w.get(j)
                .is_some_and(|x| ["of", "de", "del"].contains(&x.as_str()))
            {
                j += 1;
            }
            match w.get(j).and_then(|x| year_of(x)) {
                Some(y) => (Some(y), j + 1),
                None => (None, k),
            }
        };
        let day_num = |x: &str| {
            digits(x)
                .filter(|d| d.fract() == 0.0 && (1.0..=31.0).contains(d))
                .map(|d| d as u32)
        };
        if let Some(d) = iso_word(x) {
            return Some((When::Day(d), i + 1));
        }
        if let Some(y) = year_of(x) {
            return Some((When::Year(y), i + 1));
        }
        if let Some(d) = day_num(x) {
            // "1 March 2020", "1 de marzo de 2020": a day needs its year.
            let mut j = i + 1;
            if w.get(j).is_some_and(|x| x == "of" || x == "de") {
                j += 1;
            }
            let m = w.get(j).and_then(|x| month_number(x))?;
            let (y, end) = year_after(j + 1);
            let y = y?;
            return (d <= Day::month_len(y, m)).then_some((When::Day(Day { y, m, d }), end));
        }
        if let Some(m) = month_number(x) {
            if let Some(d) = w.get(i + 1).and_then(|x| day_num(x)) {
                let y = w.get(i + 2).and_then(|x| year_of(x))?;
                return (d <= Day::month_len(y, m)).then_some((When::Day(Day { y, m, d }), i + 3));
            }
            let (y, end) = year_after(i + 1);
            return Some((When::Months(y, m, m), end));
        }
        let ordinal = |x: &str| match x {
            "first" | "1st" | "primer" | "primera" | "primero" => Some(1),
            "second" | "2nd" | "segundo" | "segunda" => Some(2),
            "third" | "3rd" | "tercer" | "tercero" | "tercera" => Some(3),
            "fourth" | "4th" | "cuarto" | "cuarta" => Some(4),
            _ => None,
        };
        let short = |p: char, top: u32| {
            x.strip_prefix(p)
                .and_then(|r| r.parse::<u32>().ok())
                .filter(|n| (1..=top).contains(n))
        };
        let part = if let Some(q) = short('q', 4) {
            Some((3 * q - 2, 3 * q, i + 1))
        } else if let Some(h) = short('h', 2) {
            Some((6 * h - 5, 6 * h, i + 1))
        } else if let Some(n) = ordinal(x) {
            match w.get(i + 1).map(String::as_str) {
                Some("quarter" | "trimestre") => Some((3 * n - 2, 3 * n, i + 2)),
                Some("half" | "semestre" | "mitad") if n <= 2 => Some((6 * n - 5, 6 * n, i + 2)),
                _ => None,
            }
        } else {
            None
        };
        let (lo, hi, k) = part?;
        let (y, end) = year_after(k);
        Some((When::Months(y, lo, hi), end))
    }

    /// The date column a date condition at `at` applies to: the one named just
    /// before it, else a date column named and not otherwise used, else the first.
    fn date_column(&self, at: usize) -> Option<(usize, String)> {
        let mut j = at;
        while j > 0
            && [
                "is", "was", "were", "are", "es", "fue", "fueron", "on", "el",
            ]
            .contains(&self.w[j - 1].as_str())
        {
            j -= 1;
        }
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

    fn year_column(&self) -> Option<String> {
        self.table
            .column_kinds
            .iter()
            .find(|c| {
                c.kind == "numeric"
                    && ["year", "ano", "anio"].contains(&normalise(&c.name).as_str())
            })
            .map(|c| c.name.clone())
    }

    /// Date conditions: "before March", "after 2020-06-01", "since 2019", "until June
    /// 2020", "between January and March", "from March to May 2020", "in Q2", "in the
    /// first half of 2019", and their Spanish ("antes de marzo", "entre enero y
    /// marzo", "en el primer semestre de 2019").
    fn date_filters(&mut self, out: &mut Vec<Filter>) {
        let leads: &[(&str, &str)] = &[
            ("before", "before"),
            ("prior to", "before"),
            ("antes de", "before"),
            ("antes del", "before"),
            ("after", "after"),
            ("despues de", "after"),
            ("despues del", "after"),
            ("since", "since"),
            ("from", "since"),
            ("starting", "since"),
            ("desde", "since"),
            ("a partir de", "since"),
            ("a partir del", "since"),
            ("until", "until"),
            ("till", "until"),
            ("through", "until"),
            ("up to", "until"),
            ("hasta", "until"),
            ("between", "between"),
            ("entre", "between"),
            ("in", "in"),
            ("during", "in"),
            ("en", "in"),
            ("durante", "in"),
        ];
        for (lead, kind) in leads {
            let len = lead.split(' ').count();
            for at in find(&self.w, lead) {
                if self.used[at] || self.used.get(at + len).copied().unwrap_or(true) {
                    continue;
                }
                let Some((first, mut end)) = self.when_at(at + len) else {
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
                if ["between", "since"].contains(kind) {
                    let join = self.w.get(end).map(String::as_str).unwrap_or("");
                    let joins: &[&str] = if *kind == "between" {
                        &["and", "y"]
                    } else {
                        &["to", "until", "through", "a", "hasta"]
                    };
                    if joins.contains(&join) {
                        if let Some((w2, e2)) = self.when_at(end + 1) {
                            second = Some(w2);
                            end = e2;
                        }
                    }
                    if *kind == "between" && second.is_none() {
                        continue;
                    }
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
                                .any(|x| ["year", "years", "ano", "anio"].contains(&x))
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
                        ("before", _) => out.push(Filter::num(col, "lt", v)),
                        ("after", _) => out.push(Filter::num(col, "gt", v)),
                        ("until", _) => out.push(Filter::num(col, "le", v)),
                        ("in", _) => out.push(Filter::num(col, "eq", v)),
                        (_, None) => out.push(Filter::num(col, "ge", v)),
                        (_, Some(s)) => {
                            out.push(Filter::num(col.clone(), "ge", v));
                            out.push(Filter::num(col, "le", y(s)));
                        }
                    }
                    continue;
                }
                let c = column.as_str();
                let month = |op: &'static str, m: u32| Filter {
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
                    ("before", Some((a, _)), _) => out.push(Filter::on_day(c, "date_before", a)),
                    ("before", None, _) => out.push(month("month_before", bounds(first).0)),
                    ("after", Some((_, b)), _) => out.push(Filter::on_day(c, "date_from", b)),
                    ("after", None, _) => out.push(month("month_since", bounds(first).1 + 1)),
                    ("until", Some((_, b)), _) => out.push(Filter::on_day(c, "date_before", b)),
                    ("until", None, _) => out.push(month("month_before", bounds(first).1 + 1)),
                    ("in", Some((a, b)), _) => {
                        out.push(Filter::on_day(c, "date_from", a));
                        out.push(Filter::on_day(c, "date_before", b));
                    }
                    ("in", None, _) => {
                        out.push(month("month_from", bounds(first).0));
                        out.push(month("month_to", bounds(first).1));
                    }
                    (_, Some((a, _)), None) => out.push(Filter::on_day(c, "date_from", a)),
                    (_, None, None) => out.push(month("month_since", bounds(first).0)),
                    (_, Some((a, _)), Some(s)) => match s.span() {
                        Some((_, b)) if a < b => {
                            out.push(Filter::on_day(c, "date_from", a));
                            out.push(Filter::on_day(c, "date_before", b));
                        }
                        _ => self.not_understood.push(self.say(
                            &format!("the condition \"{said}\""),
                            &format!("la condición \"{said}\""),
                        )),
                    },
                    (_, None, Some(s)) => {
                        let (lo, hi) = (bounds(first).0, bounds(s).1);
                        if s.span().is_none() && lo <= hi {
                            out.push(month("month_from", lo));
                            out.push(month("month_to", hi));
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

    /// "passengers who survived", "who did not survive", "que no sobrevivieron": a
    /// yes/no column (two values) named after who/that/que.
    fn yes_no_filters(&mut self, out: &mut Vec<Filter>) {
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
                    || before.is_some_and(|b| QUESTION_WORDS.contains(&b))
                    || self.used[m.start]
                    || before.is_none_or(|b| {
                        [
                            "of", "de", "del", "the", "el", "la", "los", "las", "count", "number",
                        ]
                        .contains(&b)
                    })
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
                    op: if negated { "is_false" } else { "is_true" },
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
                let mut j = m.start;
                while j > 0 && ["the", "los", "las", "el", "la"].contains(&self.w[j - 1].as_str()) {
                    j -= 1;
                }
                let before = j.checked_sub(1).map(|j| self.w[j].as_str());
                let measure_before = self.mentions.iter().any(|o| {
                    o.end <= m.start && o.column != m.column && is_numeric(o) && !self.used[o.start]
                });
                if ones
                    && !self.used[m.start]
                    && measure_before
                    && before
                        .is_some_and(|b| ["of", "for", "among", "de", "para", "entre"].contains(&b))
                {
                    self.used[m.start..m.end].fill(true);
                    out.push(Filter {
                        column: m.column.clone(),
                        op: "is_true",
                        ..Filter::default()
                    });
                }
            }
        }
        for at in 0..self.w.len() {
            // "Which gender has ...": a question, not "passengers which survived".
            if !["who", "that", "which", "que", "quienes"].contains(&self.w[at].as_str())
                || self.used[at]
                || at == 0
            {
                continue;
            }
            let mut k = at + 1;
            let mut negated = false;
            for neg in [
                &["did", "not"][..],
                &["didn", "t"],
                &["did", "n't"],
                &["no"],
                &["not"],
            ] {
                if self
                    .w
                    .get(k..k + neg.len())
                    .is_some_and(|s| s.iter().zip(neg).all(|(a, b)| a == b))
                {
                    negated = true;
                    k += neg.len();
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
                op: if negated { "is_false" } else { "is_true" },
                ..Filter::default()
            });
        }
    }

    /// Values of a column with few of them, said in the request: "female
    /// passengers", "students who completed the course" (`completed`), "en Bilbao",
    /// "first class" on a class column of 1, 2 and 3. A word that names values of two
    /// columns is not guessed at.
    fn value_filters(&mut self, out: &mut Vec<Filter>) {
        const SAME: &[(&str, &[&str])] = &[
            (
                "female",
                &[
                    "women", "woman", "femenino", "femenina", "mujer", "mujeres", "females",
                ],
            ),
            (
                "male",
                &["men", "man", "masculino", "hombre", "hombres", "males"],
            ),
            ("f", &["female", "females", "women", "femenino", "mujeres"]),
            ("m", &["male", "males", "men", "masculino", "hombres"]),
            ("yes", &["si"]),
        ];
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
                for (k, alts) in SAME {
                    if n == *k {
                        said.extend(alts.iter().map(|a| a.to_string()));
                    }
                }
                // "Widgets" for the value `Widget`
                if n.len() >= 3 && !n.contains(' ') && !n.ends_with('s') {
                    said.push(format!("{n}s"));
                }
                // "Ventas" for the value `Sales`
                said.extend(
                    SYNONYMS
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
                        let inside = self
                            .mentions
                            .iter()
                            .any(|m| at < m.end && m.start < at + len);
                        if (at..at + len).any(|k| self.used[k]) || inside || self.stat_at(at) {
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
            let (value, start, end) = match (before, after) {
                (Some(v), _) => (v, m.start - 1, m.end),
                (None, Some(v)) => (v, m.start, m.end + 1),
                _ => continue,
            };
            let known = c
                .values
                .iter()
                .any(|x| x.parse::<f64>().ok() == Some(value));
            if !known || (start..end).any(|k| self.used[k]) {
                continue;
            }
            self.used[start..end].fill(true);
            if start > 0 && ["in", "en"].contains(&self.w[start - 1].as_str()) {
                self.used[start - 1] = true;
            }
            out.push(Filter::num(m.column.clone(), "eq", value));
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
            for (c, v, at, end) in &hits {
                if *c == col && !hits.iter().any(|(c2, _, a2, _)| a2 == at && c2 != c) {
                    self.used[*at..*end].fill(true);
                    if !values.contains(v) {
                        values.push(v.clone());
                    }
                }
            }
            out.push(Filter {
                column: col,
                op: "in",
                values,
                ..Filter::default()
            });
        }
    }

    /// Whether a statistic's words cover position `at` ("standard" of "standard
    /// deviation" is never the value `standard` of a column).
    fn stat_at(&self, at: usize) -> bool {
        statistics(&self.w)
            .iter()
            .any(|(s, e, _)| *s <= at && at < *e)
    }

    fn date_unit(&self) -> &'static str {
        if has_any(&self.w, &["hour*", "hora*"]) {
            "hours"
        } else {
            "days"
        }
    }

    /// Whether the words before `at` define a measure ("revenue is", "ingresos es").
    fn names_a_measure(&self, at: usize) -> bool {
        at >= 2 && ["is", "es", "equals", "means", "son", "are"].contains(&self.w[at - 1].as_str())
    }

    /// "revenue is ...", "profit = ...": the one word before is/es/equals at `at`.
    fn derived_name(&mut self, at: usize) -> Option<String> {
        let verb = at.checked_sub(1)?;
        if !["is", "es", "equals", "means", "son", "are"].contains(&self.w[verb].as_str()) {
            return None;
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
            !STAT_WORDS.iter().any(|(p, _)| *p == x)
                && ![
                    "the", "a", "of", "el", "la", "de", "is", "es", "what", "que",
                ]
                .contains(&x)
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

    /// Numeric conditions ("older than 30", "price above 100", "in 2019").
    fn filters(&mut self) -> Vec<Filter> {
        let mut out = Vec::new();
        for (phrase, op, implied) in COMPARATORS {
            let len = phrase.split(' ').count();
            for at in find(&self.w, phrase) {
                if self.used[at] {
                    continue;
                }
                let Some(value) = self.w.get(at + len).and_then(|x| digits(x)) else {
                    continue;
                };
                // "z-scores above 3": the outliers' threshold, not a condition (only in
                // an outliers question; "students who scored above 90" is a condition).
                let before = &self.w[at.saturating_sub(2)..at];
                let z_said = before
                    .windows(2)
                    .any(|p| p[0] == "z" && p[1].starts_with("score"))
                    || before.iter().any(|x| {
                        ["zscore", "zscores", "threshold", "umbral"].contains(&x.as_str())
                    });
                if z_said && self.outliers {
                    self.used[at.saturating_sub(2)..at + len + 1].fill(true);
                    self.z_threshold = Some(value);
                    continue;
                }
                let unit = self.w.get(at + len + 1).map(String::as_str).unwrap_or("");
                // "more than 3 standard deviations", "at least 2 decimals": no condition.
                if [
                    "standard",
                    "desviaciones",
                    "desviacion",
                    "sigma",
                    "sd",
                    "std",
                    "decimal",
                    "decimals",
                    "decimales",
                    "places",
                    "times",
                    "veces",
                ]
                .contains(&unit)
                {
                    for k in at..at + len + 1 {
                        self.used[k] = true;
                    }
                    continue;
                }
                let implied = if ["years", "anos", "year"].contains(&unit) {
                    Some("age")
                } else {
                    *implied
                };
                // The column: named just before ("price above 100", "price is above"),
                // or the one the words imply (age for "older than").
                let mut j = at;
                while j > 0
                    && [
                        "is", "are", "was", "es", "son", "sea", "with", "con", "of", "de",
                    ]
                    .contains(&self.w[j - 1].as_str())
                {
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
                    .or_else(|| {
                        implied
                            .and_then(|_| {
                                self.table.column_kinds.iter().find(|c| {
                                    c.kind == "numeric"
                                        && ["age", "edad", "years", "anos"]
                                            .contains(&normalise(&c.name).as_str())
                                })
                            })
                            .map(|c| c.name.clone())
                    });
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
                    for k in at..at + len + 1 {
                        self.used[k] = true;
                    }
                    continue;
                };
                for k in j..end {
                    self.used[k] = true;
                }
                out.push(Filter::num(column, op, value));
            }
        }
        // "houses with 2 bathrooms", "con 3 hijos": a number of the column named after it.
        for lead in ["with", "having", "con"] {
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
                out.push(Filter::num(m.column, "eq", value));
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
            out.push(Filter::num(m.column, "eq", value));
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
                for k in m.start..at + 4 {
                    self.used[k] = true;
                }
                out.push(Filter::num(m.column.clone(), "ge", lo));
                out.push(Filter::num(m.column, "le", hi));
            }
        }
        self.stat_filters(&mut out);
        self.date_filters(&mut out);
        self.yes_no_filters(&mut out);
        self.value_filters(&mut out);
        // A year: "in 2019", "en 2019", "during 2019" (below), and conditions this
        // planner does not read ("longer than a year", "before March"): declined.
        for word in [
            "than", "before", "after", "since", "until", "antes", "despues", "desde", "hasta",
        ] {
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
            if !["in", "en", "during", "durante", "del", "de", "for", "of"].contains(&prev)
                || self.used[i]
            {
                continue;
            }
            let year_col = self
                .table
                .column_kinds
                .iter()
                .find(|c| {
                    c.kind == "numeric"
                        && ["year", "ano", "anio"].contains(&normalise(&c.name).as_str())
                })
                .map(|c| (c.name.clone(), "eq"));
            let date_col = self
                .mentions
                .iter()
                .find(|m| m.kind == "datetime")
                .map(|m| m.column.clone())
                .or_else(|| self.datetime_columns().into_iter().next())
                .map(|c| (c, "year"));
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
        out
    }
}

fn fmt_value(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
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

/// The parts of a plan as the decline says them ("mean", "of `price`", "by `region`").
pub(super) fn described(plan: &StatPlan, lang: Lang) -> Vec<String> {
    let mut out: Vec<String> = plan.stats.iter().map(|s| stat_word(s, lang)).collect();
    match (plan.task, lang) {
        (Task::Argmax, Lang::En) => out.push("the label with the highest value".into()),
        (Task::Argmax, Lang::Es) => out.push("la etiqueta con el valor más alto".into()),
        (Task::Argmin, Lang::En) => out.push("the label with the lowest value".into()),
        (Task::Argmin, Lang::Es) => out.push("la etiqueta con el valor más bajo".into()),
        (Task::Correlation, _) => out.push(plan.method.unwrap_or("pearson").to_string()),
        (Task::Outliers, Lang::En) => out.push("outliers".into()),
        (Task::Outliers, Lang::Es) => out.push("valores atípicos".into()),
        (Task::Normality, Lang::En) => out.push("normality".into()),
        (Task::Normality, Lang::Es) => out.push("normalidad".into()),
        (Task::Describe, _) => {}
    }
    let (of, by) = match lang {
        Lang::En => ("of", "by"),
        Lang::Es => ("de", "por"),
    };
    for m in &plan.measures {
        out.push(format!("{of} `{}`", m.name));
    }
    if let Some(g) = &plan.group {
        out.push(format!("{by} `{g}`"));
    }
    for f in &plan.filters {
        let rhs = match (&f.date, f.stat, &f.of) {
            _ if f.op == "in" => f.values.join(" / "),
            _ if f.op == "is_true" || f.op == "is_false" => {
                out.push(format!("`{}` {}", f.column, f.op));
                continue;
            }
            (Some(d), _, _) => d.clone(),
            (_, Some(st), Some(of)) => format!("{} `{of}`", stat_word(&Stat::plain(st), lang)),
            _ => fmt_value(f.value),
        };
        out.push(format!("`{}` {} {rhs}", f.column, f.op));
    }
    out
}

/// Words that change what is asked ("per", "rate", "first", "fill", "only", "not"),
/// left over once the plan is read: each is said back with a few words around it,
/// since a plan that skipped it would answer another question ("average price per
/// square foot" is not the average price).
const TRIGGERS: &[&str] = &[
    "per",
    "rate",
    "rates",
    "ratio",
    "proportion",
    "fraction",
    "fill",
    "filling",
    "replace",
    "replacing",
    "impute",
    "only",
    "excluding",
    "except",
    "without",
    "not",
    "never",
    "first",
    "second",
    "third",
    "last",
    "each",
    "every",
    "cumulative",
    "growth",
    "return",
    "returns",
    "increase",
    "decrease",
    "normalized",
    "normalised",
    "log",
    "squared",
    "absolute",
    "missing",
    "null",
    "nulls",
    "nan",
    "empty",
    "unless",
    "weekly",
    "monthly",
    "yearly",
    "annual",
    "annually",
    "between",
    "entre",
    "or",
    "plus",
    "nearest",
    "million",
    "millions",
    "thousand",
    "thousands",
    "hundred",
    "hundreds",
    "millon",
    "millones",
    "miles",
    "summer",
    "winter",
    "spring",
    "autumn",
    "verano",
    "invierno",
    "primavera",
    "otono",
    "rank",
    "ranked",
    "ranking",
    "sort",
    "sorted",
    "ordena*",
    "clasifica*",
    "compared",
    "compare",
    "versus",
    "vs",
    "tasa",
    "rellena*",
    "reemplaz*",
    "sustitu*",
    "solo",
    "solamente",
    "excepto",
    "salvo",
    "sin",
    "no",
    "nunca",
    "primer*",
    "segund*",
    "tercer*",
    "ultim*",
    "cada",
    "acumulad*",
    "crecimiento",
    "aumento",
    "disminucion",
    "faltantes",
    "nulos",
    "vacios",
    "mensual*",
    "semanal*",
    "anual*",
];

fn unread_words(
    r: &Reader,
    stats: &[(usize, usize)],
    filtered: bool,
    zero: bool,
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
                SYNONYMS
                    .iter()
                    .filter(|(_, en)| *en == t)
                    .map(|(es, _)| es.to_string()),
            );
            all
        })
        .filter(|t| t.len() >= 4)
        .collect();
    const TASK_WORDS: &[&str] = &[
        "normally",
        "normality",
        "normalidad",
        "correlated",
        "correlation",
        "correlacion",
        "outliers",
        "outlier",
        "distributed",
        "distribution",
        "percentile",
        "percentiles",
        "quartile",
        "quartiles",
        "average",
        "averages",
        "totals",
        "counts",
        "medians",
    ];
    let looks_like_a_column = |x: &str| {
        x.len() >= 5
            && !TASK_WORDS.contains(&x)
            && column_words.iter().any(|t| {
                // an adjective of the column's word ("rainy", "windy", "sunny"); a
                // plural or a verb form ("orders", "scored") is the row noun's
                x.strip_prefix(t.as_str()).is_some_and(|rest| {
                    ["y", "ier", "iest", "ily"].contains(&rest)
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
        near(&["decimal", "place", "digit", "cifra"], i + 1, i + 3)
            || near(
                &[
                    "alpha",
                    "alfa",
                    "significan",
                    "level",
                    "nivel",
                    "threshold",
                    "umbral",
                    "score",
                    "zscore",
                    "standard",
                    "desviacion",
                    "sigma",
                    "percentil",
                    "quantil",
                    "cuantil",
                    "quartil",
                ],
                i.saturating_sub(3),
                i + 3,
            )
    };
    for (i, x) in w.iter().enumerate() {
        let number = digits(x).is_some() && !parameter(i);
        let trigger = TRIGGERS.iter().any(|t| has(std::slice::from_ref(x), t))
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
            "only" | "solo" | "solamente" => filtered,
            // "to the nearest integer" is read as 0 decimals; "nearest million" is not
            "nearest" => ["integer", "whole"].contains(&next),
            // values side by side
            "compared" | "compare" | "versus" | "vs" => grouped,
            // "first quartile", "third quartile"
            _ if next.starts_with("quartil") || next.starts_with("cuartil") => true,
            // how missing values are handled, said
            "missing" | "null" | "nulls" | "nan" | "empty" | "faltantes" | "nulos" | "vacios" => {
                zero || HANDLING.contains(&prev) || HANDLING_AFTER.contains(&after_values)
            }
            "fill" | "filling" | "rellena" | "rellenar" => zero,
            "sin" => ["valores", "vacios", "faltantes", "nulos"].contains(&next),
            "without" => ["missing", "null", "nan", "nulls"].contains(&next),
            // "between Age and Fare": two columns (a correlation, a difference).
            "between" | "entre" => r.mentions.iter().any(|m| {
                m.start == i + 1 || m.start == i + 2 && ["the", "el", "la"].contains(&next)
            }),
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

/// A numeric column of a few whole numbers (a class 1, 2, 3): a label when asked for.
fn is_code(table: &Table, column: &str) -> bool {
    table.column_kinds.iter().any(|c| {
        c.name == column
            && c.kind == "numeric"
            && !c.values.is_empty()
            && c.values.len() <= 12
            && c.values
                .iter()
                .all(|v| v.parse::<f64>().is_ok_and(|x| x.fract() == 0.0))
    })
}

/// "How many passengers are there?" counts the rows; in "¿cuántos pasajeros
/// sobrevivieron?" a word no part of the plan read is left over, and a count of every
/// row would answer another question. The noun right after the count is the rows'.
fn unread_in_a_row_count(r: &Reader, stats: &[(usize, usize)]) -> Option<String> {
    const FRAME: &[&str] = &[
        "are",
        "is",
        "there",
        "were",
        "was",
        "rows",
        "row",
        "records",
        "record",
        "entries",
        "in",
        "the",
        "a",
        "an",
        "file",
        "table",
        "dataset",
        "data",
        "total",
        "altogether",
        "overall",
        "hay",
        "filas",
        "registros",
        "en",
        "el",
        "la",
        "los",
        "las",
        "archivo",
        "tabla",
        "datos",
        "have",
        "has",
        "does",
        "do",
        "did",
        "tiene",
        "tienen",
        "of",
        "de",
        "del",
        "this",
        "these",
        "esta",
        "este",
        "what",
        "que",
        "cual",
        "es",
        "son",
        "listed",
        "contain",
        "contains",
        "hay",
        "it",
        "all",
        "todos",
        "todas",
        "en",
        "total",
    ];
    let (_, count_end) = stats.first().copied()?;
    let mut left = Vec::new();
    for (i, x) in r.w.iter().enumerate() {
        let covered = r.used[i]
            || r.mentions.iter().any(|m| m.start <= i && i < m.end)
            || stats.iter().any(|(s, e)| *s <= i && i < *e);
        if covered || i == count_end || FRAME.contains(&x.as_str()) {
            continue;
        }
        left.push(x.clone());
    }
    (!left.is_empty()).then(|| left.join(" "))
}

/// Whether `word` names what a row is: "order" for `order_id`, "row", "record".
fn names_the_rows(r: &Reader, word: &str) -> bool {
    let stemmed = |x: &str| x.strip_suffix('s').unwrap_or(x).to_string();
    ["row", "record", "entry", "fila", "registro"].contains(&stemmed(word).as_str())
        || r.table.column_kinds.iter().any(|c| {
            c.id && normalise(&c.name)
                .split(' ')
                .any(|t| t.len() >= 3 && t != "id" && stemmed(t) == stemmed(word))
        })
}

/// A numeric id-like column (a code, a year) can label rows.
fn is_label_like(table: &Table, column: &str) -> bool {
    table.categories.iter().any(|c| c.name == column)
}

/// The word after "mean of (the) ..." when it names no column ("mean of salary").
fn unknown_after_stat(r: &Reader) -> Option<String> {
    let stop = [
        "the", "el", "la", "los", "las", "column", "columna", "value", "values", "valores",
    ];
    for (i, x) in r.w.iter().enumerate() {
        if x == "of" || x == "de" || x == "del" {
            let mut j = i + 1;
            while j < r.w.len() && stop.contains(&r.w[j].as_str()) {
                j += 1;
            }
            if let Some(word) = r.w.get(j) {
                if i > 0
                    && STAT_WORDS
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

/// A statistic as said in the answer.
pub(super) fn stat_word(s: &Stat, lang: Lang) -> String {
    let (en, es) = match s.name {
        "mean" => ("mean", "media"),
        "median" => ("median", "mediana"),
        "mode" => ("mode", "moda"),
        "std" => ("standard deviation", "desviación estándar"),
        "var" => ("variance", "varianza"),
        "min" => ("minimum", "mínimo"),
        "max" => ("maximum", "máximo"),
        "range" => ("range", "rango"),
        "iqr" => ("interquartile range", "rango intercuartílico"),
        "count" => ("count", "recuento"),
        "distinct" => ("distinct count", "valores distintos"),
        "sum" => ("sum", "suma"),
        "skew" => ("skewness", "asimetría"),
        "kurt" => ("kurtosis", "curtosis"),
        "missing" => ("number of missing values", "número de valores vacíos"),
        "share" => ("share of the rows", "porcentaje de las filas"),
        "quantile" => {
            let p = s.q.unwrap_or(0.5) * 100.0;
            return match lang {
                Lang::En => format!("{} percentile", fmt_value((p * 100.0).round() / 100.0)),
                Lang::Es => format!("percentil {}", fmt_value((p * 100.0).round() / 100.0)),
            };
        }
        other => (other, other),
    };
    match lang {
        Lang::En => en.into(),
        Lang::Es => es.into(),
    }
}

/// The honest decline: what was understood, what not, and what the analyst can do.
pub(super) fn decline_text(d: &Decline, table: &Table, lang: Lang) -> String {
    let columns: Vec<String> = table
        .column_kinds
        .iter()
        .map(|c| format!("`{}` ({})", c.name, c.kind))
        .collect();
    let columns = if columns.is_empty() {
        table
            .column_names
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        columns.join(", ")
    };
    let understood = if d.understood.is_empty() {
        "-".to_string()
    } else {
        d.understood.join(", ")
    };
    let missing = d
        .not_understood
        .iter()
        .map(|s| s.trim_end_matches('.'))
        .collect::<Vec<_>>()
        .join("; ");
    match lang {
        Lang::En => format!(
            "I cannot answer that as asked, and I will not answer a different question instead.\n\n\
- What I understood: {understood}.\n\
- What I could not: {missing}.\n\n\
The table {} has these columns: {columns}.\n\n\
What I can do: mean, median, mode, standard deviation and variance (sample by default, population when asked), \
minimum, maximum, range, quantiles, count, distinct count, sum, skewness and kurtosis of a column or of a measure \
derived from two (\"revenue is units times unit_price\", \"days between start and end\"), optionally by a category \
and under conditions (\"older than 30\", \"in 2019\", \"before March 2022\", \"in Q3\", \"above the median\"); which label has the highest or lowest value; correlation \
(Pearson or Spearman) with its p-value; outliers by IQR or z-score; normality by skewness, Shapiro-Wilk or \
Kolmogorov-Smirnov. Ask again naming the statistic and the column, e.g. \"mean and standard deviation of price\".\n\n\
(Built-in offline analyst: rule-based, not an LLM. For other questions configure a model: --model openai:MODEL \
with OPENAI_API_KEY, --model anthropic:MODEL with ANTHROPIC_API_KEY, or --model ollama:MODEL; in the desktop app, Settings.)",
            table.path
        ),
        Lang::Es => format!(
            "No puedo responder a eso tal como está pedido, y no responderé a otra pregunta en su lugar.\n\n\
- Lo que entendí: {understood}.\n\
- Lo que no pude entender: {missing}.\n\n\
La tabla {} tiene estas columnas: {columns}.\n\n\
Lo que sé hacer: media, mediana, moda, desviación estándar y varianza (muestrales por defecto, poblacionales si se pide), \
mínimo, máximo, rango, cuantiles, recuento, valores distintos, suma, asimetría y curtosis de una columna o de una medida \
derivada de dos (\"ingresos es unidades por precio\", \"días entre inicio y fin\"), por categoría si se pide y con \
condiciones (\"mayores de 30\", \"en 2019\", \"antes de marzo de 2022\", \"en el tercer trimestre\", \"por encima de la mediana\"); qué etiqueta tiene el valor más alto o más bajo; correlación (Pearson o \
Spearman) con su valor p; valores atípicos por IQR o puntuación z; normalidad por asimetría, Shapiro-Wilk o \
Kolmogorov-Smirnov. Vuelva a preguntar nombrando la estadística y la columna, por ejemplo \"media y desviación estándar del precio\".\n\n\
(Analista sin conexión integrado: basado en reglas, no un LLM. Para otras preguntas configure un modelo: --model openai:MODELO \
con OPENAI_API_KEY, --model anthropic:MODELO con ANTHROPIC_API_KEY o --model ollama:MODELO; en la aplicación, Ajustes.)",
            table.path
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyst::profile::ColumnKind;
    use crate::analyst::request::detect_lang;

    fn table(path: &str, rows: u64, cols: &[(&str, &str, u64)]) -> Table {
        Table {
            path: path.into(),
            rows,
            column_names: cols.iter().map(|c| c.0.to_string()).collect(),
            column_kinds: cols
                .iter()
                .map(|(n, k, d)| ColumnKind {
                    name: n.to_string(),
                    kind: k.to_string(),
                    distinct: *d,
                    missing: 0,
                    ..ColumnKind::default()
                })
                .collect(),
            ..Table::default()
        }
    }

    fn passengers() -> Table {
        let mut t = table(
            "input/passengers.csv",
            150,
            &[
                ("passenger", "text", 150),
                ("age", "numeric", 70),
                ("fare", "numeric", 140),
                ("class", "text", 3),
                ("boarded", "datetime", 140),
            ],
        );
        // The inspection lists the values of a column with few of them.
        t.column_kinds[3].values = vec!["First".into(), "Second".into(), "Third".into()];
        t
    }

    fn plan(task: &str, t: &Table) -> StatPlan {
        match understand(task, t, detect_lang(task)) {
            Understood::Plan(p) => *p,
            other => panic!("{task}: {other:?}"),
        }
    }

    fn names(p: &StatPlan) -> Vec<&str> {
        p.stats.iter().map(|s| s.name).collect()
    }

    /// "Which weekday uses the most energy on average?" groups by a period of the
    /// time column: the aggregate skill's question, never an overall mean and max.
    #[test]
    fn a_period_of_the_time_column_goes_to_the_aggregate_skill() {
        let mut energy = table(
            "input/building_energy.csv",
            1344,
            &[
                ("timestamp", "datetime", 1344),
                ("energy_kwh", "numeric", 900),
            ],
        );
        energy.time = vec![crate::analyst::profile::TimeCandidate {
            name: "timestamp".into(),
            unit: None,
        }];
        for task in [
            "Which weekday uses the most energy on average? Show a bar chart",
            "What is the mean energy_kwh per month?",
            "¿Qué día de la semana tiene el mayor consumo medio?",
        ] {
            assert_eq!(
                understand(task, &energy, detect_lang(task)),
                Understood::NotMine,
                "{task}"
            );
        }
        // Without that period word it stays a statistic of the whole column.
        let p = plan("What is the mean of energy_kwh?", &energy);
        assert_eq!(names(&p), vec!["mean"]);
    }

    #[test]
    fn several_statistics_of_one_measure() {
        let p = plan(
            "Calculate the mean and standard deviation of the fare",
            &passengers(),
        );
        assert_eq!(
            (p.task, names(&p), p.ddof),
            (Task::Describe, vec!["mean", "std"], 1)
        );
        assert_eq!(p.measures[0].column.as_deref(), Some("fare"));
        let p = plan(
            "What is the population standard deviation of fare?",
            &passengers(),
        );
        assert_eq!(p.ddof, 0);
        let p = plan("What are the quartiles of the fare?", &passengers());
        assert_eq!(
            p.stats.iter().filter_map(|s| s.q).collect::<Vec<_>>(),
            vec![0.25, 0.5, 0.75]
        );
        let p = plan(
            "What is the 90th percentile of fare, rounded to 2 decimals?",
            &passengers(),
        );
        assert_eq!((p.stats[0].q, p.decimals), (Some(0.9), Some(2)));
        let p = plan("How many distinct classes are there?", &passengers());
        assert_eq!(
            (names(&p), p.measures[0].name.as_str()),
            (vec!["distinct"], "class")
        );
    }

    /// A passenger list as analysts download it: codes and yes/no columns as numbers,
    /// the values of the columns with few of them listed by the inspection.
    fn boarders() -> Table {
        let mut t = table(
            "input/boarders.csv",
            240,
            &[
                ("PassengerId", "numeric", 240),
                ("Survived", "numeric", 2),
                ("Pclass", "numeric", 3),
                ("Sex", "text", 2),
                ("Age", "numeric", 180),
                ("Fare", "numeric", 200),
                ("Embarked", "text", 3),
                ("lunch", "text", 2),
            ],
        );
        t.column_kinds[0].id = true;
        for (i, values) in [
            (1, &["0", "1"][..]),
            (2, &["1", "2", "3"]),
            (3, &["male", "female"]),
            (6, &["S", "C", "Q"]),
            (7, &["standard", "free/reduced"]),
        ] {
            t.column_kinds[i].values = values.iter().map(|v| v.to_string()).collect();
        }
        t
    }

    /// Each of these once got an answer to another question; now the plan holds every
    /// part of it, or the request is declined.
    #[test]
    fn every_part_of_the_request_is_in_the_plan() {
        let t = boarders();
        let p = plan("How many passengers survived?", &t);
        assert_eq!(
            (names(&p), p.measures.len(), p.filters[0].op),
            (vec!["count"], 0, "is_true")
        );
        let p = plan("How many passengers did not survive?", &t);
        assert_eq!(p.filters[0].op, "is_false");
        let p = plan("How many missing values are in the Age column?", &t);
        assert_eq!(
            (names(&p), p.measures[0].name.as_str()),
            (vec!["missing"], "Age")
        );
        let p = plan(
            "Mean and standard deviation of Age, ignoring missing values",
            &t,
        );
        assert_eq!(names(&p), vec!["mean", "std"]);
        let p = plan("What is the most common port of embarkation?", &t);
        assert_eq!(
            (names(&p), p.measures[0].name.as_str()),
            (vec!["mode"], "Embarked")
        );
        let p = plan("Which passenger class has the highest average fare?", &t);
        assert_eq!(
            (p.task, p.group.as_deref(), p.label_op),
            (Task::Argmax, Some("Pclass"), Some("mean"))
        );
        let p = plan("What is the median age of passengers in first class?", &t);
        assert_eq!(
            (p.filters[0].column.as_str(), p.filters[0].value),
            ("Pclass", 1.0)
        );
        let p = plan("Average age of female passengers", &t);
        assert_eq!(p.filters[0].values, vec!["female".to_string()]);
        let p = plan("¿Cuál es la edad media de las mujeres?", &t);
        assert_eq!(p.filters[0].values, vec!["female".to_string()]);
        // "standard" of "standard deviation" is not the lunch `standard`.
        let p = plan("What is the standard deviation of Fare?", &t);
        assert!(p.filters.is_empty(), "{:?}", p.filters);
        let p = plan("What percentage of passengers survived?", &t);
        let share = p.share_of.clone().unwrap();
        assert_eq!(
            (names(&p), share.column.as_str(), share.op),
            (vec!["share"], "Survived", "is_true")
        );
        let p = plan("What is the survival rate of female passengers?", &t);
        assert_eq!(
            (
                p.share_of.unwrap().column.as_str(),
                p.filters[0].values.clone()
            ),
            ("Survived", vec!["female".to_string()])
        );
        let p = plan("What percentage of passengers are female?", &t);
        assert_eq!(p.share_of.unwrap().values, vec!["female".to_string()]);
        let p = plan("¿Cuántos pasajeros sobrevivieron?", &t);
        assert_eq!(p.filters[0].op, "is_true");
        // One letter is a value only next to its column.
        let p = plan(
            "What is the maximum age of passengers who embarked at port C?",
            &t,
        );
        assert_eq!(
            (p.task, names(&p), p.filters[0].values.clone()),
            (Task::Describe, vec!["max"], vec!["C".to_string()])
        );
        let p = plan("What is the average fare for each passenger class?", &t);
        assert_eq!(
            (p.group.as_deref(), names(&p)),
            (Some("Pclass"), vec!["mean"])
        );
        // "Which sex ..." asks for the label; it is no yes/no condition.
        let task = "Which sex has the lower survival count?";
        if let Understood::Decline(d) = understand(task, &t, detect_lang(task)) {
            assert!(!d.understood.iter().any(|u| u.contains("`Sex`")), "{d:?}");
        }
        // A name in camel case is read word by word; a number nobody read is no
        // dropped condition: the request is declined.
        let mut staff = table(
            "input/staff.csv",
            180,
            &[
                ("EmployeeID", "text", 180),
                ("PerformanceRating", "numeric", 5),
                ("Salary", "numeric", 170),
                ("discount", "numeric", 3),
            ],
        );
        staff.column_kinds[0].id = true;
        staff.column_kinds[1].values = ["1", "2", "3", "4", "5"].map(String::from).to_vec();
        let p = plan("What is the median salary by performance rating?", &staff);
        assert_eq!(p.group.as_deref(), Some("PerformanceRating"));
        for task in [
            "What is the average salary of employees with a rating of 5 stars?",
            "How many orders had a discount?",
        ] {
            assert!(
                matches!(
                    understand(task, &staff, detect_lang(task)),
                    Understood::Decline(_)
                ),
                "{task}"
            );
        }
        let p = plan(
            "Are there outliers in Salary based on z-scores above 2.5?",
            &staff,
        );
        assert_eq!((p.task, p.z), (Task::Outliers, 2.5));
        // A word that changes the question and that the plan cannot read: declined.
        for task in [
            "Fill the missing ages with the median age and then report the mean age",
            "What is the mean Fare per passenger class only for those not embarked",
            "What is the average daily return of Fare?",
        ] {
            assert!(
                matches!(
                    understand(task, &t, detect_lang(task)),
                    Understood::Decline(_)
                ),
                "{task}"
            );
        }
        let homes = table(
            "input/homes.csv",
            160,
            &[
                ("price", "numeric", 160),
                ("area_sqft", "numeric", 150),
                ("bedrooms", "numeric", 6),
                ("year_built", "numeric", 70),
                ("listed_date", "datetime", 150),
                ("sold_date", "datetime", 150),
            ],
        );
        let p = plan("What is the average price per square foot?", &homes);
        let d = p.measures[0].derived.clone().unwrap();
        assert_eq!(
            (d.op, d.a.as_str(), d.b.as_str()),
            ("ratio", "price", "area_sqft")
        );
        let p = plan("How many houses have more than 3 bedrooms?", &homes);
        assert_eq!(
            (p.filters[0].column.as_str(), p.filters[0].op),
            ("bedrooms", "gt")
        );
        let p = plan(
            "What is the average price of houses built after 2000?",
            &homes,
        );
        assert_eq!(
            (
                p.filters[0].column.as_str(),
                p.filters[0].op,
                p.measures.len()
            ),
            ("year_built", "gt", 1)
        );
        let p = plan("What is the price per bedroom on average?", &homes);
        assert_eq!(p.measures[0].derived.clone().unwrap().b, "bedrooms");
        let p = plan(
            "What is the average area_sqft of houses with 2 bedrooms?",
            &homes,
        );
        assert_eq!(
            (
                p.filters[0].column.as_str(),
                p.filters[0].op,
                p.filters[0].value
            ),
            ("bedrooms", "eq", 2.0)
        );
        let p = plan(
            "How many days did it take to sell a house, from listed_date to sold_date, on average?",
            &homes,
        );
        let d = p.measures[0].derived.clone().unwrap();
        assert_eq!(
            (d.op, d.a.as_str(), d.b.as_str()),
            ("days", "sold_date", "listed_date")
        );
    }

    #[test]
    fn conditions_are_read_or_declined() {
        let p = plan(
            "What is the mean fare for passengers older than 30?",
            &passengers(),
        );
        assert_eq!(p.filters, vec![Filter::num("age".into(), "gt", 30.0)]);
        let p = plan("Average fare in 2019", &passengers());
        assert_eq!(
            p.filters,
            vec![Filter::num("boarded".into(), "year", 2019.0)]
        );
        let p = plan("Mean fare where age is at least 60.5", &passengers());
        assert_eq!(p.filters[0].op, "ge");
        assert_eq!(p.filters[0].value, 60.5);
        // A value the inspection listed is a condition the plan names.
        let p = plan("Mean fare for First class passengers", &passengers());
        assert_eq!(
            (p.filters[0].op, p.filters[0].values.clone()),
            ("in", vec!["First".to_string()])
        );
        let p = plan("Mean fare only for the Third class", &passengers());
        assert_eq!(p.filters[0].values, vec!["Third".to_string()]);
        assert!(!p.needs_value_filter);
        for task in [
            "Mean fare for passengers longer than a year",
            "Mean fare for passengers boarded before the war",
        ] {
            assert!(
                matches!(
                    understand(task, &passengers(), Lang::En),
                    Understood::Decline(_)
                ),
                "{task}"
            );
        }
    }

    fn ops(p: &StatPlan) -> Vec<(&str, String)> {
        p.filters
            .iter()
            .map(|f| {
                let rhs = match (&f.date, f.stat, &f.of) {
                    (Some(d), _, _) => d.clone(),
                    (_, Some(st), Some(of)) => format!("{st} {of}"),
                    _ => fmt_value(f.value),
                };
                (f.op, format!("{} {rhs}", f.column))
            })
            .collect()
    }

    #[test]
    fn date_ranges_are_read() {
        let t = passengers();
        let cases: &[(&str, &[(&str, &str)])] = &[
            (
                "Mean fare for passengers boarded before March",
                &[("month_before", "boarded 3")],
            ),
            (
                "Median fare after 2020-06-01",
                &[("date_from", "boarded 2020-06-02")],
            ),
            (
                "Mean fare since 2019-12-31",
                &[("date_from", "boarded 2019-12-31")],
            ),
            (
                "Standard deviation of fare until February 2020",
                &[("date_before", "boarded 2020-03-01")],
            ),
            (
                "Mean fare between January and March",
                &[("month_from", "boarded 1"), ("month_to", "boarded 3")],
            ),
            (
                "Mean fare between January and March 2019",
                &[
                    ("date_from", "boarded 2019-01-01"),
                    ("date_before", "boarded 2019-04-01"),
                ],
            ),
            (
                "Mean fare in Q2",
                &[("month_from", "boarded 4"), ("month_to", "boarded 6")],
            ),
            (
                "Median fare in the first half of 2019",
                &[
                    ("date_from", "boarded 2019-01-01"),
                    ("date_before", "boarded 2019-07-01"),
                ],
            ),
            (
                "Mean fare from 1 March 2019 to 31 May 2019",
                &[
                    ("date_from", "boarded 2019-03-01"),
                    ("date_before", "boarded 2019-06-01"),
                ],
            ),
            (
                "Mean fare before 2019",
                &[("date_before", "boarded 2019-01-01")],
            ),
            (
                "Media de fare antes de marzo de 2020",
                &[("date_before", "boarded 2020-03-01")],
            ),
            (
                "Mediana de fare en el segundo trimestre de 2019",
                &[
                    ("date_from", "boarded 2019-04-01"),
                    ("date_before", "boarded 2019-07-01"),
                ],
            ),
            (
                "Media de fare entre enero y marzo",
                &[("month_from", "boarded 1"), ("month_to", "boarded 3")],
            ),
        ];
        for (task, want) in cases {
            let p = plan(task, &t);
            let want: Vec<(&str, String)> = want.iter().map(|(o, r)| (*o, r.to_string())).collect();
            assert_eq!(ops(&p), want, "{task}");
            assert_eq!(p.measures[0].name, "fare", "{task}");
        }
        // "in March" with a plain mean stays the aggregate skill's question.
        assert_eq!(
            understand("Average fare in March", &t, Lang::En),
            Understood::NotMine
        );
        // A year on a numeric year column.
        let yearly = table(
            "input/yearly.csv",
            64,
            &[("year", "numeric", 8), ("visitors", "numeric", 60)],
        );
        let p = plan("Median visitors before 2019", &yearly);
        assert_eq!(ops(&p), vec![("lt", "year 2019".to_string())]);
    }

    #[test]
    fn comparisons_with_a_statistic_are_read() {
        let t = passengers();
        let p = plan("Mean fare for fares higher than the median", &t);
        assert_eq!(
            (names(&p), ops(&p)),
            (vec!["mean"], vec![("gt", "fare median fare".to_string())])
        );
        let p = plan("How many passengers paid more than the average fare?", &t);
        assert_eq!(
            (names(&p), ops(&p)),
            (vec!["count"], vec![("gt", "fare mean fare".to_string())])
        );
        let p = plan("Median fare of passengers older than the average age", &t);
        assert_eq!(
            (names(&p), ops(&p)),
            (vec!["median"], vec![("gt", "age mean age".to_string())])
        );
        let p = plan(
            "¿Cuántos pasajeros tienen una edad por encima de la media?",
            &t,
        );
        assert_eq!(
            (names(&p), ops(&p)),
            (vec!["count"], vec![("gt", "age mean age".to_string())])
        );
        let survived = table(
            "input/titanic.csv",
            100,
            &[
                ("age", "numeric", 60),
                ("survived", "numeric", 2),
                ("fare", "numeric", 90),
            ],
        );
        let p = plan(
            "What's the median age of passengers who survived?",
            &survived,
        );
        assert_eq!(
            (names(&p), ops(&p), p.measures.len()),
            (
                vec!["median"],
                vec![("is_true", "survived 0".to_string())],
                1
            )
        );
        let p = plan("Mean fare of passengers who did not survive", &survived);
        assert_eq!(ops(&p), vec![("is_false", "survived 0".to_string())]);
    }

    #[test]
    fn a_significance_level_is_read() {
        let s = table("input/s.csv", 200, &[("normal", "numeric", 200)]);
        let p = plan("Shapiro-Wilk test of normal at alpha 0.01", &s);
        assert_eq!((p.alpha, p.alpha_said), (0.01, true));
        let p = plan("Is normal normally distributed at the 10% level?", &s);
        assert_eq!(p.alpha, 0.1);
        let p = plan("Prueba de Shapiro-Wilk de normal", &s);
        assert_eq!((p.alpha, p.alpha_said), (0.05, false));
    }

    #[test]
    fn argmax_and_derived_measures() {
        let cities = table(
            "input/cities.csv",
            12,
            &[("city", "text", 12), ("score", "numeric", 10)],
        );
        let p = plan("Which city has the highest score?", &cities);
        assert_eq!(
            (p.task, p.group.as_deref(), p.label_op),
            (Task::Argmax, Some("city"), None)
        );
        let p = plan("¿Qué city tiene el menor score?", &cities);
        assert_eq!(p.task, Task::Argmin);
        let p = plan("What is the highest score?", &cities);
        assert_eq!((p.task, names(&p)), (Task::Describe, vec!["max"]));
        let orders = table(
            "input/orders.csv",
            80,
            &[
                ("order_id", "text", 80),
                ("region", "text", 4),
                ("units", "numeric", 40),
                ("unit_price", "numeric", 80),
                ("cost", "numeric", 80),
            ],
        );
        let p = plan(
            "Which region had the highest revenue? Revenue is units times unit_price.",
            &orders,
        );
        assert_eq!((p.task, p.group.as_deref()), (Task::Argmax, Some("region")));
        let d = p.measures[0].derived.clone().unwrap();
        assert_eq!(
            (d.op, d.a.as_str(), d.b.as_str()),
            ("product", "units", "unit_price")
        );
        assert_eq!(p.measures[0].name, "revenue");
        let p = plan(
            "What is the mean revenue per order? Revenue = units * unit_price",
            &orders,
        );
        assert_eq!(
            (p.task, p.group.clone(), names(&p)),
            (Task::Describe, None, vec!["mean"])
        );
        let p = plan(
            "Mean of the difference between unit_price and cost",
            &orders,
        );
        assert_eq!(p.measures[0].derived.as_ref().unwrap().op, "difference");
        let p = plan("¿Cuál es la media de cost dividido entre units?", &orders);
        assert_eq!(p.measures[0].derived.as_ref().unwrap().op, "ratio");
        let contracts = table(
            "input/contracts.csv",
            40,
            &[
                ("contract_name", "text", 40),
                ("start_date", "datetime", 40),
                ("end_date", "datetime", 40),
            ],
        );
        let p = plan("What is the average length of a contract?", &contracts);
        let d = p.measures[0].derived.clone().unwrap();
        assert_eq!(
            (d.op, d.a.as_str(), d.b.as_str()),
            ("days", "end_date", "start_date")
        );
        let p = plan(
            "Median number of hours between start_date and end_date",
            &contracts,
        );
        assert_eq!(
            (names(&p), p.measures[0].derived.as_ref().unwrap().op),
            (vec!["median"], "hours")
        );
    }

    #[test]
    fn tests_and_correlations() {
        let t = table(
            "input/s.csv",
            200,
            &[
                ("x", "numeric", 200),
                ("y", "numeric", 200),
                ("code", "numeric", 200),
            ],
        );
        let p = plan("Spearman correlation between x and y", &t);
        assert_eq!(
            (p.task, p.method, p.second.as_deref()),
            (Task::Correlation, Some("spearman"), Some("y"))
        );
        let p = plan("How many outliers does y have by the IQR rule?", &t);
        assert_eq!((p.task, p.method), (Task::Outliers, Some("iqr")));
        let p = plan(
            "Outliers of y more than 2.5 standard deviations from the mean",
            &t,
        );
        assert_eq!((p.method, p.z), (Some("z"), 2.5));
        let p = plan("Is y normally distributed? Use a Shapiro-Wilk test", &t);
        assert_eq!((p.task, p.method), (Task::Normality, Some("shapiro")));
        let p = plan("What is the mean of code?", &t);
        assert_eq!(p.task, Task::Describe);
    }

    #[test]
    fn declines_say_what_was_and_was_not_understood() {
        let d = match understand(
            "What is the geometric mean of fare?",
            &passengers(),
            Lang::En,
        ) {
            Understood::Decline(d) => d,
            other => panic!("{other:?}"),
        };
        assert!(d.not_understood[0].contains("geometric mean"), "{d:?}");
        let text = decline_text(&d, &passengers(), Lang::En);
        assert!(
            text.contains("I cannot answer that as asked") && text.contains("`fare` (numeric)")
        );
        for (task, word) in [
            ("What is the mean of ticket_price?", "ticket"),
            ("What is the mean of class?", "text column"),
            ("Media del salario", "salario"),
            ("Mean fare and predict next year's fare", "forecast"),
        ] {
            match understand(task, &passengers(), detect_lang(task)) {
                Understood::Decline(d) => {
                    assert!(d.not_understood.join(" ").contains(word), "{task}: {d:?}")
                }
                other => panic!("{task}: {other:?}"),
            }
        }
        let es = match understand("Media del salario", &passengers(), Lang::Es) {
            Understood::Decline(d) => decline_text(&d, &passengers(), Lang::Es),
            other => panic!("{other:?}"),
        };
        assert!(es.starts_with("No puedo responder"));
    }

    /// The requests of the other skills' fixtures (tests/fixtures/skills) stay theirs.
    #[test]
    fn other_skills_keep_their_questions() {
        let sales = table(
            "input/sales.csv",
            120,
            &[
                ("date", "datetime", 90),
                ("region", "text", 4),
                ("product", "text", 3),
                ("units", "numeric", 50),
                ("revenue", "numeric", 118),
            ],
        );
        let inventory = table(
            "input/inventory.csv",
            40,
            &[
                ("sku", "text", 40),
                ("product", "text", 40),
                ("category", "text", 4),
                ("warehouse", "text", 3),
                ("stock_qty", "numeric", 30),
                ("unit_cost", "numeric", 40),
            ],
        );
        let sensors = table(
            "input/sensors.csv",
            500,
            &[
                ("timestamp", "datetime", 500),
                ("sensor", "text", 3),
                ("temperature_c", "numeric", 300),
                ("humidity_pct", "numeric", 300),
            ],
        );
        let survey = table(
            "input/survey.csv",
            200,
            &[
                ("respondent_id", "numeric", 200),
                ("country", "text", 5),
                ("age", "numeric", 50),
                ("satisfaction", "numeric", 10),
                ("would_recommend", "text", 2),
            ],
        );
        let web = table(
            "input/web_traffic.csv",
            300,
            &[
                ("date", "datetime", 100),
                ("page", "text", 3),
                ("visits", "numeric", 200),
                ("bounce_rate", "numeric", 200),
            ],
        );
        let ventas = table(
            "input/ventas.csv",
            100,
            &[
                ("fecha", "datetime", 90),
                ("región", "text", 4),
                ("producto", "text", 3),
                ("unidades", "numeric", 40),
                ("importe", "numeric", 99),
            ],
        );
        let theirs = [
            (
                &sales,
                "Which region had the highest total revenue in February? Make a bar chart.",
            ),
            (&sales, "Total sales by month as a line chart"),
            (&sales, "Top 2 products by quantity sold"),
            (&sales, "Now split it by region"),
            (&sales, "What share of total revenue does each region have?"),
            (&sales, "Show me revenue by region and product"),
            (&sales, "Compare North and South revenue"),
            (&sales, "revenue in March for Gadget"),
            (&sales, "Forecast next month's revenue for each region"),
            (&sales, "Describe this workbook"),
            (
                &ventas,
                "¿Qué región tuvo más ingresos en febrero? Haz un gráfico de barras.",
            ),
            (&ventas, "Total de unidades por producto, solo texto ASCII"),
            (&ventas, "¿Cuántas unidades se vendieron en marzo?"),
            (&ventas, "Describe el archivo"),
            (&inventory, "Total stock by warehouse"),
            (
                &inventory,
                "Stock quantity per warehouse; save the table as output/stock.csv",
            ),
            (
                &inventory,
                "Which category has the highest average unit cost?",
            ),
            (&inventory, "How many products per category?"),
            (&inventory, "Translate the column names into French"),
            (&web, "Share of visits by page"),
            (&web, "Which day of the week has the most visits?"),
            (&web, "How did visits change between January and March?"),
            (&web, "Find anomalies in the visits"),
            (&web, "Busca anomalías en las visitas"),
            (&web, "What is the weekly trend of visits?"),
            (
                &sensors,
                "Is temperature correlated with humidity? Show a scatter plot.",
            ),
            (&sensors, "Average temperature by sensor"),
            (&sensors, "¿Qué hay en este archivo?"),
            (
                &sensors,
                "Busca anomalías en la humedad; responde solo en ASCII",
            ),
            (&survey, "How many responses per country?"),
            (&survey, "¿Cuál es la satisfacción media por país?"),
            (&survey, "Is satisfaction related to country?"),
            (&survey, "What is in this file?"),
            (&survey, "Predice la satisfacción del año que viene"),
            (&survey, "Write me a poem about this data"),
            (&sales, include_str!("../../../examples/anomaly_task.md")),
        ];
        for (t, task) in theirs {
            let u = understand(task, t, detect_lang(task));
            assert_eq!(u, Understood::NotMine, "{task}");
        }
        // The one plain statistic among them is a statistics plan now.
        let p = plan("What is the minimum stock quantity?", &inventory);
        assert_eq!(
            (names(&p), p.measures[0].name.as_str()),
            (vec!["min"], "stock_qty")
        );
    }

    #[test]
    fn a_statistic_word_in_a_column_name_is_the_column() {
        let t = table(
            "input/d.csv",
            30,
            &[
                ("day", "datetime", 30),
                ("daily_count", "numeric", 20),
                ("total_sales", "numeric", 30),
            ],
        );
        let p = plan("Mean and standard deviation of the daily count", &t);
        assert_eq!(names(&p), vec!["mean", "std"]);
        assert_eq!(p.measures[0].name, "daily_count");
        let p = plan("What is the median of total sales?", &t);
        assert_eq!(
            (names(&p), p.measures[0].name.as_str()),
            (vec!["median"], "total_sales")
        );
    }

    #[test]
    fn words_keep_decimals_and_signs() {
        assert_eq!(words_of("a*b = 2.5"), vec!["a", "times", "b", "is", "2d5"]);
        assert_eq!(digits("2d5"), Some(2.5));
        assert_eq!(digits("90th"), Some(90.0));
        assert_eq!(
            stat_word(
                &Stat {
                    name: "quantile",
                    q: Some(0.9)
                },
                Lang::En
            ),
            "90 percentile"
        );
    }
}
