//! Reading the request: which skill it asks for, in which language, and (for the
//! aggregate and relationship skills) the operation it names. Everything here works on
//! the words of the request only; the columns, months and periods it names are read
//! against the table by [`super::reading`].
//!
//! Words are compared after [`normalise`]: lower case, accents dropped, punctuation as
//! spaces, so "Región", "region" and "REGION" are the same word.
//!
//! ```
//! use sandalyst::analyst::request::{recognise, Lang, Skill};
//! let r = recognise("¿Qué región tuvo más ventas en febrero?");
//! assert_eq!((r.skill, r.lang), (Skill::Aggregate, Lang::Es));
//! ```

use serde::Serialize;

use super::lexicon::LEXICON;

/// What the offline analyst can do, one planner each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Skill {
    /// Abnormal events in a time series (`analyse.py`).
    Anomalies,
    /// What is in the file (`profile.py`).
    Profile,
    /// Totals, means, counts, min/max by category or period (`aggregate.py`).
    Aggregate,
    /// Correlation between two columns, or a trend over time (`relate.py`).
    Relate,
    /// Nothing it can do: an honest answer plus the data profile.
    Unsupported,
}

impl Skill {
    pub fn name(self) -> &'static str {
        match self {
            Skill::Anomalies => "anomalies",
            Skill::Profile => "profile",
            Skill::Aggregate => "aggregate",
            Skill::Relate => "relate",
            Skill::Unsupported => "unsupported",
        }
    }
}

/// The language of the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    En,
    Es,
}

impl Lang {
    /// The English or the Spanish of a word or text.
    pub fn pick<T>(self, en: T, es: T) -> T {
        match self {
            Lang::En => en,
            Lang::Es => es,
        }
    }
}

/// What the request asks for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Recognised {
    pub skill: Skill,
    pub lang: Lang,
    /// The request asks for plain ASCII output.
    pub ascii: bool,
    pub intent: Intent,
    /// No word of any skill and none out of scope: the planner may still read it as
    /// an aggregate question when it names a column of the data ("revenue in March").
    pub unsure: bool,
}

/// The operation of an aggregate or relationship question, as far as the words say.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Intent {
    /// sum, mean, count, min, max, median; None: the skill picks (sum for amounts).
    pub op: Option<&'static str>,
    /// "top 5", "3 best": how many rows to keep.
    pub top_n: Option<u32>,
    /// The answer is the smallest (lowest, least, bottom) rather than the largest.
    pub lowest: bool,
    /// The question is about the extreme value (which ... highest / lowest).
    pub extreme: bool,
    /// Share of total (percent).
    pub share: bool,
    /// Change between periods.
    pub change: bool,
    /// Trend over time (relate skill).
    pub trend: bool,
    /// Chart asked for: "bar", "line" or "pie" (drawn as bars).
    pub chart: Option<&'static str>,
}

/// Lower case, accents dropped, anything but letters and digits as one space.
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().flat_map(char::to_lowercase) {
        let c = match c {
            'á' | 'à' | 'â' | 'ä' | 'ã' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'ö' | 'õ' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            'ñ' => 'n',
            'ç' => 'c',
            c if c.is_alphanumeric() => c,
            _ => ' ',
        };
        if c == ' ' && (out.is_empty() || out.ends_with(' ')) {
            continue;
        }
        out.push(c);
    }
    out.trim_end().to_string()
}

/// Whether the normalised request names a column (its words, `_` and `-` as spaces).
pub fn names_a_column(text: &str, columns: &[String]) -> bool {
    let n = normalise(text);
    columns.iter().any(|c| {
        let c = normalise(c);
        c.len() >= 3 && (has(&n, &c) || has(&n, &format!("{c}s")))
    })
}

/// Whether `phrase` (normalised words) occurs in `text` (normalised) as whole words;
/// a phrase ending in `*` matches any word starting with it.
fn has(text: &str, phrase: &str) -> bool {
    let padded = format!(" {text} ");
    match phrase.strip_suffix('*') {
        Some(stem) => padded.contains(&format!(" {stem}")),
        None => padded.contains(&format!(" {phrase} ")),
    }
}

fn any(text: &str, phrases: &[&str]) -> bool {
    phrases.iter().any(|p| has(text, p))
}

/// English unless the request reads as Spanish (or has ñ, ¿, ¡).
pub fn detect_lang(text: &str) -> Lang {
    if text.contains(['¿', '¡', 'ñ', 'Ñ']) {
        return Lang::Es;
    }
    let n = normalise(text);
    let words: Vec<&str> = n.split(' ').collect();
    let es = words
        .iter()
        .filter(|w| LEXICON.spanish_markers.contains(w))
        .count();
    let en = words
        .iter()
        .filter(|w| LEXICON.english_markers.contains(w))
        .count();
    if es > en {
        Lang::Es
    } else {
        Lang::En
    }
}

/// The request asks for plain ASCII (or "sin acentos").
pub fn wants_ascii(text: &str) -> bool {
    let n = normalise(text);
    any(&n, &LEXICON.plain_ascii)
}

/// Whether a request asks for abnormal readings or events (the anomaly skill's words):
/// an LLM's first step is then pointed at the app's method for them.
pub fn asks_for_anomalies(text: &str) -> bool {
    any(&normalise(text), &LEXICON.anomaly)
}

/// The skill, language and operation of a request.
pub fn recognise(text: &str) -> Recognised {
    // Courtesy is not grouping: "por favor" has no "por <column>" in it.
    let n = format!(" {} ", normalise(text))
        .replace(" por favor ", " ")
        .replace(" please ", " ")
        .trim()
        .to_string();
    let skill = if any(&n, &LEXICON.anomaly) {
        Skill::Anomalies
    } else if any(&n, &LEXICON.out_of_scope) {
        Skill::Unsupported
    } else if period_versus(&n) {
        Skill::Aggregate
    } else if any(&n, &LEXICON.relate) {
        Skill::Relate
    } else if any(&n, &LEXICON.profile) && !precise_aggregate(&n) {
        Skill::Profile
    } else if any(&n, &LEXICON.aggregate) || any(&n, &LEXICON.change) {
        Skill::Aggregate
    } else if any(&n, &LEXICON.again) {
        Skill::Anomalies
    } else {
        Skill::Unsupported
    };
    Recognised {
        skill,
        unsure: skill == Skill::Unsupported && !any(&n, &LEXICON.out_of_scope),
        lang: detect_lang(text),
        ascii: wants_ascii(text),
        intent: intent(&n),
    }
}

/// "January vs March", "enero versus febrero": a change, not a correlation.
fn period_versus(n: &str) -> bool {
    any(n, &["vs", "versus"]) && comparison_of_periods(n)
}

fn comparison_of_periods(n: &str) -> bool {
    !any(n, &LEXICON.relation_words) && (any(n, &LEXICON.period_words) || any(n, &LEXICON.months))
}

/// An operation word or an extreme: "summarise total sales by region" is an aggregate.
fn precise_aggregate(n: &str) -> bool {
    LEXICON.operations.iter().any(|(w, _)| has(n, w))
        || any(n, &LEXICON.high)
        || any(n, &LEXICON.low)
        || any(n, &LEXICON.aggregate_words)
}

fn number_word(w: &str) -> Option<u32> {
    let words = [
        ("one", 1),
        ("two", 2),
        ("three", 3),
        ("four", 4),
        ("five", 5),
        ("six", 6),
        ("seven", 7),
        ("eight", 8),
        ("nine", 9),
        ("ten", 10),
        ("uno", 1),
        ("dos", 2),
        ("tres", 3),
        ("cuatro", 4),
        ("cinco", 5),
        ("seis", 6),
        ("siete", 7),
        ("ocho", 8),
        ("nueve", 9),
        ("diez", 10),
    ];
    w.parse::<u32>()
        .ok()
        .filter(|n| (1..=100).contains(n))
        .or_else(|| words.iter().find(|(s, _)| *s == w).map(|(_, n)| *n))
}

/// The operation words of a normalised request.
fn intent(n: &str) -> Intent {
    let words: Vec<&str> = n.split(' ').collect();
    let mut top_n = None;
    for (i, w) in words.iter().enumerate() {
        if LEXICON.top_n.contains(w) || w.starts_with("mayor") || w.starts_with("menor") {
            // "top 5", "5 best", "los 5 productos con mayor": the nearest number
            let next = words.get(i + 1).and_then(|x| number_word(x));
            let prev = (i.saturating_sub(3)..i)
                .rev()
                .find_map(|j| words.get(j).and_then(|x| x.parse::<u32>().ok()))
                .filter(|n| (1..=100).contains(n))
                .or_else(|| i.checked_sub(1).and_then(|j| number_word(words[j])));
            if let Some(k) = next.or(prev) {
                top_n = Some(k);
                break;
            }
        }
    }
    let op = LEXICON
        .operations
        .iter()
        .find(|(w, _)| has(n, w))
        .map(|(_, op)| *op);
    let lowest = any(n, &LEXICON.low);
    let extreme = lowest || any(n, &LEXICON.high);
    // The kinds are in order, so the first kind any of whose words is said wins.
    let chart = LEXICON
        .charts
        .iter()
        .find(|(w, _)| has(n, w))
        .map(|(_, c)| *c);
    Intent {
        // "max"/"min" words are extremes of a total, unless nothing else names an op:
        // `operations` lists them last.
        op,
        top_n,
        lowest,
        extreme,
        share: any(n, &LEXICON.share_words),
        change: period_versus(n)
            || any(n, &LEXICON.change)
            || any(n, &["difference", "diferencia"]),
        trend: any(n, &LEXICON.trend),
        chart,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_drops_accents_and_punctuation() {
        assert_eq!(
            normalise("¿Qué Región  tuvo MÁS ventas?"),
            "que region tuvo mas ventas"
        );
        assert_eq!(normalise("units/quantity"), "units quantity");
    }

    #[test]
    fn skills_from_requests() {
        let cases = [
            (
                "Which region had the highest total revenue in February? Make a bar chart.",
                Skill::Aggregate,
            ),
            ("¿Qué región tuvo más ventas en febrero?", Skill::Aggregate),
            ("What is in this file?", Skill::Profile),
            ("Describe the data", Skill::Profile),
            ("Resume el archivo", Skill::Profile),
            ("Summarise total sales by region", Skill::Aggregate),
            ("Give me a summary of sales by region", Skill::Aggregate),
            ("Resume las ventas por región", Skill::Aggregate),
            ("Describe el archivo, por favor", Skill::Profile),
            ("Please describe this file", Skill::Profile),
            (
                "Is there a correlation between temperature and humidity?",
                Skill::Relate,
            ),
            ("What is the trend of visits over time?", Skill::Relate),
            ("Look for abnormal energy-use events", Skill::Anomalies),
            (
                "Find unusual power use in input/chiller_plant.csv.",
                Skill::Anomalies,
            ),
            ("Forecast next month's revenue", Skill::Unsupported),
            ("Write me a poem about this data", Skill::Unsupported),
            ("Now split it by weekday", Skill::Aggregate),
            ("Visits in January vs March", Skill::Aggregate),
            ("revenue vs units", Skill::Relate),
            (
                "Look for anomalies again with the new file",
                Skill::Anomalies,
            ),
            ("again please", Skill::Anomalies),
        ];
        for (text, skill) in cases {
            assert_eq!(recognise(text).skill, skill, "{text}");
        }
    }

    #[test]
    fn language_and_ascii() {
        assert_eq!(
            detect_lang("Which region had the highest revenue?"),
            Lang::En
        );
        assert_eq!(
            detect_lang("Cuál es el total de ventas por región"),
            Lang::Es
        );
        assert_eq!(detect_lang("¿Total?"), Lang::Es);
        assert!(wants_ascii("use plain ASCII (deg C)"));
        assert!(!wants_ascii("a chart please"));
    }

    #[test]
    fn operations_from_words() {
        let i = recognise("Top 3 products by units sold, as a bar chart").intent;
        assert_eq!((i.top_n, i.op, i.chart), (Some(3), None, Some("bar")));
        let i = recognise("Which store had the lowest average stock?").intent;
        assert_eq!((i.op, i.lowest, i.extreme), (Some("mean"), true, true));
        let i = recognise("Los 5 productos con mayor facturación").intent;
        assert_eq!((i.top_n, i.lowest), (Some(5), false));
        let i = recognise("share of total revenue by channel").intent;
        assert!(i.share && i.op == Some("sum"));
        let i = recognise("How did revenue change between January and March?").intent;
        assert!(i.change);
        let i = recognise("Maximum total revenue by region").intent;
        assert_eq!(i.op, Some("sum"));
        let i = recognise("How many responses per country?").intent;
        assert_eq!(i.op, Some("count"));
    }
}
