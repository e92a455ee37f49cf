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
    pub spanish_markers: Words,
    pub english_markers: Words,
    pub months: Words,
    // The statistics planner (`stat_plan/`).
    pub period_groups: Words,
    pub statistics: Pairs,
    pub truthy: Words,
    pub handling: Words,
    pub handling_after: Words,
    pub unsupported_statistics: Words,
    pub stat_anomaly: Words,
    pub question: Words,
    pub high: Words,
    pub low: Words,
    pub group: Words,
    pub periods: Words,
    pub condition: Words,
    pub comparators: Comparators,
    pub synonyms: Pairs,
    pub triggers: Words,
    pub row_nouns: Words,
    pub month_numbers: BTreeMap<String, u32>,
    pub value_synonyms: BTreeMap<String, Words>,
    // Read by the Python scripts only, handed over as they are ([`for_scripts`]).
    pub scripts: toml::Table,
}

/// The concepts the Python scripts read (`[scripts]` of `lexicon.toml`), as the JSON
/// that `common.py` loads into `LEXICON`.
pub(crate) fn for_scripts() -> serde_json::Value {
    serde_json::to_value(&LEXICON.scripts).expect("the lexicon's script words are JSON")
}

#[cfg(test)]
mod tests {
    use super::LEXICON;

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
}
