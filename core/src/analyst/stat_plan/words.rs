//! The words the planner knows: the vocabulary tables (statistics, extremes,
//! comparators, groupings, column synonyms, the words that change what is asked) and
//! small helpers that read the request's words (numbers, phrases).

use super::dates::iso_day_at;
use crate::analyst::lexicon::LEXICON;
use crate::analyst::request::normalise;

/// The word index at which each sentence after the first starts (a sentence ends at
/// ".", "?", "!" or ";" before a space, so "2.5" is no end).
pub(super) fn sentence_starts(text: &str) -> Vec<usize> {
    starts_after(text, &['.', '?', '!', ';'])
}

/// The word index at which each clause after the first starts: sentences, and the
/// parts a comma or a colon sets apart ("Among weekend flights, which carrier ...").
pub(super) fn clause_starts(text: &str) -> Vec<usize> {
    starts_after(text, &['.', '?', '!', ';', ',', ':'])
}

fn starts_after(text: &str, marks: &[char]) -> Vec<usize> {
    let chars: Vec<char> = text.chars().collect();
    let mut starts = Vec::new();
    let mut from = 0;
    for i in 0..chars.len() {
        let end = marks.contains(&chars[i]) && chars.get(i + 1).is_none_or(|c| c.is_whitespace());
        if end {
            let before: String = chars[..=i].iter().collect();
            let n = words_of(&before).len();
            if n > from {
                starts.push(n);
                from = n;
            }
        }
    }
    starts
}

/// The request's words: normalised, with decimals kept ("2.5" stays one word) and
/// arithmetic signs spelled out.
pub(in crate::analyst) fn words_of(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut skip = 0;
    let mut bars = false;
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
        // A single letter before a hyphen and a digit is a formula's ("n-1"), where
        // "COVID-19" is one name.
        let lone_letter =
            i > 0 && chars[i - 1].is_alphabetic() && (i < 2 || !chars[i - 2].is_alphanumeric());
        match c {
            '.' | ',' if digit_at(i.checked_sub(1)) && digit_at(Some(i + 1)) => out.push('d'),
            '*' | '\u{d7}' | '\u{b7}' | '\u{22c5}' => out.push_str(" times "),
            '/' | '\u{f7}' => out.push_str(" divided by "),
            // Formulas as typeset: minus signs, powers, sums, roots, bars over letters.
            '\u{2212}' => out.push_str(" minus "),
            '\u{2013}' if chars.get(i + 1) == Some(&' ') => out.push_str(" minus "),
            '-' if lone_letter && digit_at(Some(i + 1)) => out.push_str(" minus "),
            '\u{b2}' => out.push_str(" squared "),
            '^' if chars.get(i + 1) == Some(&'2') => {
                out.push_str(" squared ");
                skip = 1;
            }
            '\u{3a3}' | '\u{2211}' => out.push_str(" sum "),
            '\u{221a}' => out.push_str(" sqrt "),
            '\u{304}' => {}
            '\u{233}' => out.push('y'),
            '>' | '<' if chars.get(i + 1) == Some(&'=') => {
                out.push_str(if c == '>' { " at least " } else { " at most " });
                skip = 1;
            }
            '\u{2265}' => out.push_str(" at least "),
            '\u{2264}' => out.push_str(" at most "),
            // "|r|": the absolute value of what is between the bars.
            '|' => {
                bars = !bars;
                out.push_str(if bars { " abs " } else { " " });
            }
            '=' => out.push_str(" is "),
            '+' => out.push_str(" plus "),
            '>' => out.push_str(" greater than "),
            '<' => out.push_str(" less than "),
            '-' if chars.get(i + 1) == Some(&' ') && i > 0 && chars[i - 1] == ' ' => {
                out.push_str(" minus ")
            }
            c => out.push(c),
        }
    }
    let n = format!(" {} ", normalise(&out))
        .replace(" i e ", " ie ")
        .replace(" e g ", " eg ")
        .replace(" por favor ", " ")
        .replace(" please ", " ")
        .replace(" square feet ", " sqft ")
        .replace(" square foot ", " sqft ")
        .replace(" sq ft ", " sqft ");
    n.split_whitespace().map(undotted).collect()
}

/// A name with a decimal point in it ("PM2.5", read "pm2d5") as its column would be
/// written, "pm25"; a number ("2.5", "2.5th") keeps its point.
fn undotted(w: &str) -> String {
    let c: Vec<char> = w.chars().collect();
    if !c.first().is_some_and(|ch| ch.is_alphabetic()) {
        return w.to_string();
    }
    let digit = |j: usize| c.get(j).is_some_and(char::is_ascii_digit);
    c.iter()
        .enumerate()
        .filter(|&(i, &ch)| !(ch == 'd' && i > 0 && digit(i - 1) && digit(i + 1)))
        .map(|(_, &ch)| ch)
        .collect()
}

/// A number word ("30", "2d5" for 2.5, "two").
fn number(w: &str) -> Option<f64> {
    LEXICON.number_words.get(w).map(|n| f64::from(*n))
}

/// A number written in digits ("30", "2d5", "90th").
pub(super) fn digits(w: &str) -> Option<f64> {
    let core = LEXICON
        .ordinal_suffixes
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

pub(in crate::analyst) fn num(w: &str) -> Option<f64> {
    digits(w).or_else(|| number(w))
}

/// Positions where `phrase` (normalised words; a trailing `*` matches a prefix)
/// occurs in `w`.
pub(in crate::analyst) fn find(w: &[String], phrase: &str) -> Vec<usize> {
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

pub(super) fn has(w: &[String], phrase: &str) -> bool {
    !find(w, phrase).is_empty()
}

pub(super) fn has_any(w: &[String], phrases: &[&str]) -> bool {
    phrases.iter().any(|p| has(w, p))
}
