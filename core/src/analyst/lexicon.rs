//! The words the offline analyst reads, as data: every phrase it recognises in a
//! request (statistics, comparators, rows nouns, periods, negations, units, the words
//! of each skill) lives in `lexicon.toml`, one concept a key, English and Spanish
//! forms together. Rust asks [`LEXICON`]; the scripts get the concepts they need in
//! their configuration ([`for_scripts`]). No word list lives in code (a test checks).
//!
//! Phrases are normalised (lower case, no accents, words apart by one space); a
//! trailing `*` matches any word that starts with the stem.
//!
//! ```ignore
//! use crate::analyst::lexicon::LEXICON;
//! assert!(LEXICON.row_nouns.contains(&"passengers"));
//! ```

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::LazyLock;

use serde::{Deserialize, Deserializer, Serialize};

/// The lexicon, parsed once from `lexicon.toml` (embedded in the binary).
pub(crate) static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| {
    toml::from_str(include_str!("lexicon.toml"))
        .unwrap_or_else(|e| panic!("core/src/analyst/lexicon.toml does not parse: {e}"))
});

/// A list of phrases. Parsed once and kept for the life of the program, so it reads
/// as a `&'static [&'static str]`.
#[derive(Debug, Serialize)]
pub(crate) struct Words(Vec<&'static str>);

impl Deref for Words {
    type Target = [&'static str];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Words {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let words = Vec::<String>::deserialize(d)?;
        Ok(Words(words.into_iter().map(leak).collect()))
    }
}

/// Phrases with what they stand for, in order (the first match wins):
/// `["standard deviation", "std"]`.
#[derive(Debug, Serialize)]
pub(crate) struct Pairs(Vec<(&'static str, &'static str)>);

impl Deref for Pairs {
    type Target = [(&'static str, &'static str)];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Pairs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let pairs = Vec::<(String, String)>::deserialize(d)?;
        Ok(Pairs(
            pairs.into_iter().map(|(a, b)| (leak(a), leak(b))).collect(),
        ))
    }
}

/// Phrases with two things they stand for, in order: `["ratio of", "to", "ratio"]`.
#[derive(Debug, Serialize)]
pub(crate) struct Triples(Vec<(&'static str, &'static str, &'static str)>);

impl Deref for Triples {
    type Target = [(&'static str, &'static str, &'static str)];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Triples {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let all = Vec::<(String, String, String)>::deserialize(d)?;
        Ok(Triples(
            all.into_iter()
                .map(|(a, b, c)| (leak(a), leak(b), leak(c)))
                .collect(),
        ))
    }
}

fn leak(s: String) -> &'static str {
    s.leak()
}

/// Comparators: their words, the operator, and the column they imply ("older than":
/// `gt`, `age`), from `{ words = "older than", op = "gt", implies = "age" }`.
#[derive(Debug, Serialize)]
pub(crate) struct Comparators(Vec<(&'static str, &'static str, Option<&'static str>)>);

impl Deref for Comparators {
    type Target = [(&'static str, &'static str, Option<&'static str>)];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Comparators {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Comparator {
            words: String,
            op: String,
            implies: Option<String>,
        }
        let all = Vec::<Comparator>::deserialize(d)?;
        Ok(Comparators(
            all.into_iter()
                .map(|c| (leak(c.words), leak(c.op), c.implies.map(leak)))
                .collect(),
        ))
    }
}

/// Every concept of `lexicon.toml`, one field each (the file's comments say what each
/// is for; a key the struct does not know, or a missing one, fails to parse).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Lexicon {
    // Which skill a request asks for (`request.rs`).
    pub out_of_scope: Words,
    pub anomaly: Words,
    pub again: Words,
    pub relate: Words,
    pub trend: Words,
    pub change: Words,
    pub aggregate: Words,
    pub profile: Words,
    pub operations: Pairs,
    pub top_n: Words,
    pub charts: Pairs,
    pub plain_ascii: Words,
    pub spanish_markers: Words,
    pub english_markers: Words,
    pub months: Words,
    // The statistics planner (`stat_plan/`).
    pub period_groups: Words,
    pub statistics: Pairs,
    pub rate_words: Words,
    pub duration_units: Words,
    pub count_of_measure: Words,
    pub measure_statistics: Words,
    pub truthy: Words,
    pub handling: Words,
    pub handling_after: Words,
    pub unsupported_statistics: Words,
    pub stat_anomaly: Words,
    pub question: Words,
    pub asking_verbs: Words,
    pub place_verbs: Words,
    pub which: Words,
    pub before_which: Words,
    pub function_words: Words,
    pub high: Words,
    pub low: Words,
    pub group: Words,
    pub periods: Words,
    pub condition: Words,
    pub comparators: Comparators,
    pub articles: Words,
    pub stat_determiners: Words,
    pub threshold: Words,
    pub age_units: Words,
    pub age_columns: Words,
    pub having: Words,
    pub comparison_words: Words,
    pub year_prepositions: Words,
    pub date_leads: Pairs,
    pub range_joins: Pairs,
    pub year_columns: Words,
    pub after_a_value: Words,
    pub noun_markers: Words,
    pub whose_rows: Words,
    pub relatives: Words,
    pub verb_negations: Words,
    pub predicate_openers: Pairs,
    pub negation_stops: Words,
    pub arithmetic: Pairs,
    pub two_column_measures: Triples,
    pub of_words: Words,
    pub duration: Words,
    pub period_starts: Words,
    pub period_ends: Words,
    pub hours: Words,
    pub equals: Words,
    pub not_a_name: Words,
    pub ranks: Words,
    pub quantity_extremes: Words,
    pub rounding_units: Words,
    pub row_words: Words,
    pub column_fillers: Words,
    pub synonyms: Pairs,
    pub half_day: Pairs,
    pub triggers: Words,
    pub row_nouns: Words,
    pub task_words: Words,
    pub parameter_words: Words,
    pub missing_as_zero: Words,
    pub fill_verbs: Words,
    pub fill_with: Words,
    pub fill_values: Pairs,
    pub missing_nouns: Words,
    pub whole_number: Words,
    pub population: Words,
    pub alpha_words: Words,
    pub ticket_labels: Words,
    pub ticket_method: Words,
    pub correlation_methods: Pairs,
    pub ddof_words: Pairs,
    pub joiners: Words,
    pub after_number: Pairs,
    pub linking: Words,
    pub condition_verbs: Words,
    pub stat_comparison_verbs: Words,
    pub date_verbs: Words,
    pub rule_if: Words,
    pub absolute: Words,
    pub default_interpolation: Words,
    pub pooled_before: Words,
    pub slot_integer: Words,
    pub slot_text: Words,
    pub slot_number: Words,
    pub formula_words: Words,
    pub unbiased: Words,
    pub slot_keys: Pairs,
    pub share_formula: Words,
    pub share_count_nouns: Words,
    pub share_count_words: Words,
    pub method_clause: Words,
    pub missing_fill: Words,
    pub z_score: Words,
    pub outlier_rule_words: Words,
    pub iqr_marks: Words,
    pub z_marks: Words,
    pub both_tails: Words,
    pub in_sigmas: Words,
    pub kolmogorov: Words,
    pub libraries: Words,
    pub absolute_value: Words,
    pub share_words: Words,
    pub aggregate_words: Words,
    pub period_words: Words,
    pub relation_words: Words,
    pub other_shape: Words,
    pub over_time: Words,
    pub precise_outliers: Words,
    pub derived_words: Words,
    pub create_words: Words,
    pub number_ops: Words,
    pub value_nouns: Words,
    pub negation_words: Words,
    pub default_off_steps: Words,
    pub inclusion_verbs: Words,
    pub all_words: Words,
    pub also_words: Words,
    pub answer_forms: Words,
    pub definition_verbs: Words,
    pub math_words: Words,
    pub percent_scale: Words,
    pub sign_words: Words,
    pub iqr_fences: Words,
    pub normal_reference: Words,
    pub mean_formula: Vec<Words>,
    pub either_joiners: Words,
    pub defining_verbs: Words,
    pub column_words: Words,
    pub normality_words: Words,
    pub correlation_precise: Words,
    pub correlation_words: Words,
    pub outlier_words: Words,
    pub significance_words: Words,
    pub period_column_words: Words,
    pub sold_words: Words,
    pub quantile_words: Words,
    pub not_a_condition_unit: Words,
    pub derived_ops_words: Words,
    pub category_words: Words,
    pub negators: Words,
    pub exclude_after: Words,
    pub dropped_after: Words,
    pub beforehand: Words,
    pub row_count_frame: Words,
    pub normal_task_words: Words,
    pub operation_verbs: Words,
    pub not_a_group: Words,
    pub unit_short_words: Words,
    pub stem_suffixes: Words,
    pub adjective_suffixes: Words,
    pub ordinal_suffixes: Words,
    pub significance_level: Words,
    // What the aggregate and relationship skills' questions name (`reading.rs`).
    pub by_words: Words,
    pub per_words: Words,
    pub group_askers: Words,
    pub group_joiners: Words,
    pub period_nouns: Words,
    pub cast_words: Words,
    pub not_groups: Words,
    pub month_prepositions: Words,
    pub how_many: Words,
    pub adjective_periods: Words,
    pub absent_measures: Words,
    pub unit_tokens: Words,
    pub money_measures: Words,
    pub column_synonyms: Vec<Words>,
    pub skill_periods: Vec<SkillPeriod>,
    pub month_names: BTreeMap<String, Words>,
    pub month_numbers: BTreeMap<String, u32>,
    pub number_words: BTreeMap<String, u32>,
    pub value_synonyms: BTreeMap<String, Words>,
    // Read by the Python scripts only, handed over as they are ([`for_scripts`]).
    pub scripts: toml::Table,
}

/// A period a request groups by, and its words.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SkillPeriod {
    pub period: String,
    pub words: Words,
}

/// The concepts the Python scripts read (`[scripts]` of `lexicon.toml`), as the JSON
/// that `common.py` loads into `LEXICON`.
pub(crate) fn for_scripts() -> serde_json::Value {
    serde_json::to_value(&LEXICON.scripts).expect("the lexicon's script words are JSON")
}

/// The guard of "no word list outside the lexicon": the word lists each analyst file
/// (`.rs`, `.py`) holds: a run of 3 or more lower-case word literals with nothing but
/// brackets, commas and spaces between them (`&["by", "per", "por"]`,
/// `("de", "del", "la")`), comments and docstrings aside.
#[cfg(test)]
pub(crate) fn word_lists_in(source: &str, python: bool) -> usize {
    let is_word = |s: &str| {
        let s = s.strip_suffix('*').unwrap_or(s);
        s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c == ' ' || c == '\'')
    };
    let chars: Vec<char> = source.chars().collect();
    let (mut i, mut lists, mut run, mut joined) = (0, 0, 0, true);
    while i < chars.len() {
        let c = chars[i];
        let rest = || chars[i..].iter().take(3).collect::<String>();
        if (python && c == '#') || (!python && rest().starts_with("//")) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if python && (rest() == "\"\"\"" || rest() == "'''") {
            let close = rest();
            i += 3;
            while i < chars.len() && chars[i..].iter().take(3).collect::<String>() != close {
                i += 1;
            }
            i += 3;
            joined = false;
        } else if c == '"' || (python && c == '\'') {
            let mut s = String::new();
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' {
                    i += 1;
                }
                s.extend(chars.get(i));
                i += 1;
            }
            i += 1;
            if is_word(&s) {
                run = if joined { run + 1 } else { 1 };
                if run == 3 {
                    lists += 1;
                }
            } else {
                run = 0;
            }
            joined = true;
            continue;
        } else if !(c.is_whitespace() || "[](){},&".contains(c)) {
            joined = false;
        }
        i += 1;
    }
    lists
}

#[cfg(test)]
mod tests {
    use super::{word_lists_in, LEXICON};

    #[test]
    fn the_lexicon_parses_and_has_no_duplicates_inside_a_concept() {
        let lex = &*LEXICON;
        assert!(lex.row_nouns.contains(&"passengers"));
        let text = include_str!("lexicon.toml");
        let table: toml::Table = toml::from_str(text).expect("lexicon.toml parses");
        for (key, value) in &table {
            let Some(items) = value.as_array() else {
                continue;
            };
            let mut seen = Vec::new();
            for item in items {
                assert!(
                    !seen.contains(&item),
                    "lexicon.toml: `{key}` lists {item} twice"
                );
                seen.push(item);
            }
        }
    }

    /// Lists the guard reads as words but that hold codes a script writes or matches
    /// on its own data, not words of a request: a file kind (`"csv", "tsv", "text"`),
    /// an event table's columns and directions, the statistics that need no number,
    /// the periods a trend groups by, the printed profile's header, a test's values.
    /// A count may only go down; a new list fails.
    const CODES: &[(&str, usize)] = &[
        ("analyse.py", 3),
        ("anomalies.rs", 1),
        ("common.py", 1),
        ("inspect.py", 1),
        ("relate.py", 1),
        ("stats.py", 1),
    ];

    #[test]
    fn no_word_list_outside_the_lexicon() {
        assert_eq!(word_lists_in(r#"x = &["by", "per", "por"];"#, false), 1);
        assert_eq!(word_lists_in("x = ('de', 'del', 'la')  # a, b", true), 1);
        assert_eq!(
            word_lists_in(r#"x = &["by", "per"]; // "a", "b", "c""#, false),
            0
        );
        assert_eq!(word_lists_in(r#"f("by", y, "per", "por")"#, false), 0);
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/analyst");
        let mut files = Vec::new();
        let mut dirs = vec![dir.clone()];
        while let Some(d) = dirs.pop() {
            for entry in std::fs::read_dir(&d).expect("src/analyst is readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    files.push(path);
                }
            }
        }
        let mut found = Vec::new();
        for path in files {
            let name = path
                .strip_prefix(&dir)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let python = name.ends_with(".py");
            // Tests, and this file (its tests hold the guard's own examples), aside.
            if !(python || name.ends_with(".rs"))
                || name.ends_with("tests.rs")
                || name == "lexicon.rs"
            {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("an analyst file is readable");
            let n = word_lists_in(&text, python);
            let allowed = CODES
                .iter()
                .find(|(f, _)| *f == name)
                .map_or(0, |(_, n)| *n);
            if n > allowed {
                found.push(format!("{name}: {n} word lists (at most {allowed})"));
            }
        }
        assert!(
            found.is_empty(),
            "word lists belong in lexicon.toml, not in code:\n{}",
            found.join("\n")
        );
    }
}
