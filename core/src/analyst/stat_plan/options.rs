//! How the statistics are computed and said, beyond which ones: rounding, sample or
//! population, missing values dropped or zero, a test's significance level.

use super::words::{digits, has_any, num};
use crate::analyst::lexicon::LEXICON;

/// How the statistics are computed and said, read from the words.
pub(super) struct Options {
    /// Rounding.
    pub(super) decimals: Option<u32>,
    /// Population statistics (ddof 0), not sample ones.
    pub(super) population: bool,
    /// drop (the default) or zero
    pub(super) missing: &'static str,
}

impl Options {
    /// The options the words `w` say (the defaults where they say none).
    pub(super) fn read(w: &[String]) -> Options {
        let decimals = decimals(w);
        let population = has_any(w, &LEXICON.population);
        let missing = if has_any(w, &LEXICON.missing_as_zero) {
            "zero"
        } else {
            "drop"
        };
        Options {
            decimals,
            population,
            missing,
        }
    }
}

/// "rounded to 2 decimals", "con 3 decimales", "to the nearest integer".
pub(in crate::analyst) fn decimals(w: &[String]) -> Option<u32> {
    for (i, x) in w.iter().enumerate() {
        if x.starts_with("decimal") || x == "places" || x == "digits" || x == "cifras" {
            if let Some(v) = i.checked_sub(1).and_then(|j| num(&w[j])) {
                return Some(v as u32);
            }
        }
    }
    if has_any(w, &LEXICON.whole_number) {
        return Some(0);
    }
    None
}

/// The significance level said: "alpha 0.01", "alpha = 0.1", "at the 1% level",
/// "significance level of 0.01", "nivel de significación 0,01", "alfa del 10%".
pub(super) fn alpha(w: &[String]) -> Option<f64> {
    let as_level = |v: f64| if v >= 1.0 { v / 100.0 } else { v };
    let ok = |v: f64| (v > 0.0 && v < 0.5).then_some(v);
    for (i, x) in w.iter().enumerate() {
        if LEXICON.alpha_words.contains(&x.as_str()) {
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
