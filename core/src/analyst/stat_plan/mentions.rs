//! The table's columns as the request names them (by name, plural, synonym or a word
//! of the name), and what kind of column each is.

use super::words::num;
use crate::analyst::lexicon::LEXICON;
use crate::analyst::profile::Table;
use crate::analyst::request::normalise;

/// A column named in the request: its words span `start..end`.
#[derive(Clone, Debug)]
pub(in crate::analyst) struct Mention {
    pub(in crate::analyst) column: String,
    pub(in crate::analyst) kind: String,
    pub(in crate::analyst) start: usize,
    pub(in crate::analyst) end: usize,
}

/// Column words a request may use for a column: its normalised name (singular or
/// plural) and, for a name of several words, each long word unique to it.
pub(in crate::analyst) fn mentions(w: &[String], table: &Table) -> Vec<Mention> {
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
            || plural_y(a, b)
            || plural_y(b, a)
            || b.strip_suffix('s') == Some(a)
            || LEXICON
                .synonyms
                .iter()
                .any(|(x, y)| (a == *x && b == *y) || (a == *y && b == *x))
            || stem(a).is_some_and(|sa| stem(b) == Some(sa))
            || abbreviates(b, a)
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
            } else if t.len() > 1 {
                // "years of service" for `YrsSvc`, "annual salary" for `AnnSal`: every
                // word of the name, in order, each as written or abbreviated, a linking
                // word allowed between; the whole name is the evidence, so a word the
                // analyst reads otherwise ("annual") may be one of them.
                if let Some(len) = spelled_out(&w[i..], t, &same) {
                    found.push((2, len, i, ci));
                } else if let Some(len) = spelled_loosely(&w[i..], t, &same) {
                    found.push((1, len, i, ci));
                }
            }
        }
        // "afternoon humidity" for `Humidity3pm`: the name's word beside the half of
        // the day its hour falls in.
        if let Some((word, half)) = t.last().and_then(|x| half_day_of(x)) {
            for i in 0..w.len().saturating_sub(1) {
                let pair = [(&w[i], &w[i + 1]), (&w[i + 1], &w[i])];
                if pair.iter().any(|(a, b)| {
                    same(a, word) && LEXICON.half_day.iter().any(|(d, h)| d == b && *h == half)
                }) {
                    found.push((2, 2, i, ci));
                }
            }
        }
        // "average daily rate" for `adr`, "body mass index" for `BMI`: a one-word name
        // that is the initials of as many words of three letters or more, in order.
        if t.len() == 1 && !is_id(ci) {
            if let Some(at) = initials_at(w, &t[0]) {
                found.push((2, t[0].len(), at, ci));
            }
        }
        // "passenger class" for `Pclass`: a word that ends a one-word name.
        if t.len() == 1 && !is_id(ci) {
            for (i, x) in w.iter().enumerate() {
                let english = LEXICON
                    .synonyms
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
                        && !LEXICON.unit_short_words.contains(&tw.as_str()))
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
                    // "patients" for `patient_age`: a plural word for the rows names
                    // the rows, not a column one of whose words it is.
                    let rows = LEXICON.row_nouns.contains(&x.as_str()) && x.as_str() != tw.as_str();
                    // "the default rate" asks for a share, not `interest_rate`.
                    let statistic = LEXICON.statistics.iter().any(|(p, _)| p == x);
                    // "1.5 times IQR" is an operation, not `lead_time`.
                    let number_near = |k: Option<usize>| {
                        k.and_then(|k| w.get(k)).is_some_and(|n| num(n).is_some())
                    };
                    let operation = LEXICON.number_ops.contains(&x.as_str())
                        && (number_near(i.checked_sub(1)) || number_near(Some(i + 1)));
                    if same(x, tw) && !rows && !statistic && !operation {
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
    // "departure delay" for `DepDelayMin`: two words of one column side by side are
    // one mention of it.
    taken.dedup_by(|b, a| {
        let joined = a.column == b.column && a.end == b.start;
        if joined {
            a.end = b.end;
        }
        joined
    });
    // "the average temperature" for `AvgTempC`: the word before a mention that spells
    // the name's first part, when no word of the mention does, is the mention's.
    for k in 0..taken.len() {
        let m = &taken[k];
        let Some(first) = toks
            .iter()
            .zip(&columns)
            .find(|(_, (c, _))| *c == m.column)
            .and_then(|(t, _)| t.first())
        else {
            continue;
        };
        let whole = normalise(&m.column).replace(' ', "");
        // ("minus" never opens `MinTemp`: an operation's word is the operation's.)
        let opens = |x: &String| {
            *x != whole
                && !LEXICON.arithmetic.iter().any(|(p, _)| p == x)
                && (same(x, first) || short_form(first, x))
        };
        let free = k == 0 || taken[k - 1].end < m.start;
        if m.start > 0 && free && opens(&w[m.start - 1]) && !w[m.start..m.end].iter().any(opens) {
            taken[k].start -= 1;
        }
    }
    taken
}

/// How many words from the start of `w` hold the column's words that are not linking
/// words, in order, with at most two other words between them in all ("total number of
/// special requests" for `total_of_special_requests`); none of those a statistic or a
/// word of a condition.
fn spelled_loosely(w: &[String], t: &[String], same: &dyn Fn(&str, &str) -> bool) -> Option<usize> {
    let content: Vec<&String> = t
        .iter()
        .filter(|x| !LEXICON.linking.contains(&x.as_str()))
        .collect();
    if content.len() < 2 || !w.first().is_some_and(|x| same(x, content[0])) {
        return None;
    }
    let (mut at, mut gaps) = (1, 0);
    for tw in &content[1..] {
        while !w.get(at).is_some_and(|x| same(x, tw)) {
            let x = w.get(at)?.as_str();
            let reads_otherwise =
                LEXICON.statistics.iter().any(|(p, _)| *p == x) || LEXICON.condition.contains(&x);
            gaps += 1;
            if gaps > 2 || reads_otherwise {
                return None;
            }
            at += 1;
        }
        at += 1;
    }
    Some(at)
}

/// "countries" for `country`: a plural in -ies of a word in -y.
fn plural_y(plural: &str, word: &str) -> bool {
    plural
        .strip_suffix("ies")
        .zip(word.strip_suffix('y'))
        .is_some_and(|(a, b)| a == b && !a.is_empty())
}

/// Where words of `w` spell `name` by their initials ("average daily rate" for `adr`):
/// a name of three to five letters, each word at least three letters long and none a
/// word for the rows.
fn initials_at(w: &[String], name: &str) -> Option<usize> {
    let n = name.len();
    if !(3..=5).contains(&n) || !name.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    (0..(w.len() + 1).saturating_sub(n)).find(|&i| {
        w[i..i + n].iter().zip(name.chars()).all(|(x, c)| {
            x.len() >= 3 && x.starts_with(c) && !LEXICON.row_nouns.contains(&x.as_str())
        })
    })
}

/// How many words from the start of `w` spell out the column's words `t` in order
/// (each the same, or abbreviated by the column's word), with at most one linking word
/// between two of them ("years of service").
fn spelled_out(w: &[String], t: &[String], same: &dyn Fn(&str, &str) -> bool) -> Option<usize> {
    let mut at = 0;
    for (k, tw) in t.iter().enumerate() {
        let fits = |x: &String| same(x, tw) || short_form(tw, x);
        match w.get(at) {
            Some(x) if fits(x) => at += 1,
            Some(link) if k > 0 && LEXICON.linking.contains(&link.as_str()) => {
                if !w.get(at + 1).is_some_and(fits) {
                    return None;
                }
                at += 2;
            }
            _ => return None,
        }
    }
    Some(at)
}

/// A column's short word for the request's long one: "dep" for "departure", "temp" for
/// "temperature" (at least three letters, and not a unit or a statistic's short form).
fn abbreviates(short: &str, long: &str) -> bool {
    shortens(short, long)
        // "including" is no `inc` column: a word the analyst reads otherwise.
        && ![
            &LEXICON.ticket_method,
            &LEXICON.triggers,
            &LEXICON.handling,
            &LEXICON.condition,
            &LEXICON.place_verbs,
        ]
            .iter()
            .any(|list| list.contains(&long))
}

/// Whether `short` is a short form of `long`: its start ("dep" for "departure") or a
/// start and then consonants of the rest in order, the last near its end ("yrs" for
/// "years", "trng" for "training", "dept" for "department", "mgr" for "managers").
fn shortens(short: &str, long: &str) -> bool {
    !LEXICON.unit_short_words.contains(&short) && short_form(short, long)
}

/// [`shortens`] by the letters alone, units and statistics' short forms too ("pct" for
/// "percentage", "avg" for "average"): where a whole name spelled out is the evidence.
fn short_form(short: &str, long: &str) -> bool {
    if short.len() < 3
        || long.len() < short.len() + 2
        || !short.chars().all(|c| c.is_ascii_alphabetic())
    {
        return false;
    }
    if long.starts_with(short) {
        return true;
    }
    // A start of `long`, then only consonants of the rest, in order ("dep" + "t").
    let vowel = |c: char| "aeiou".contains(c);
    let common = short
        .chars()
        .zip(long.chars())
        .take_while(|(a, b)| a == b)
        .count();
    if common == 0 || short.len() > 4 || short.chars().skip(common).any(vowel) {
        return false;
    }
    let tail: Vec<char> = short.chars().skip(common).collect();
    let mut rest = long.char_indices().skip(common);
    let mut last = 0;
    for (k, &c) in tail.iter().enumerate() {
        // The last letter as late as it comes ("t" of "department" is its last).
        let at = if k + 1 == tail.len() {
            rest.by_ref().filter(|(_, l)| *l == c).last()
        } else {
            rest.find(|(_, l)| *l == c)
        };
        match at {
            Some((i, _)) => last = i,
            None => return false,
        }
    }
    // ("pct" for "percentage": its last letter four from the end.)
    long.len() - last <= 4
}

/// "PerformanceRating" as "Performance Rating", "HireDate" as "Hire Date" (a run of
/// capitals stays one word: "EmployeeID" is "Employee ID", "KPIScore" "KPI Score").
pub(in crate::analyst) fn camel_apart(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        // "KPIScore" as "KPI Score": the capital that starts a word after a run of them.
        let after_run = i > 0
            && chars[i - 1].is_uppercase()
            && chars.get(i + 1).is_some_and(|n| n.is_lowercase());
        if i > 0 && c.is_uppercase() && (chars[i - 1].is_lowercase() || after_run) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// "humidity3pm" as ("humidity", "pm"): a word, then an hour of the clock.
fn half_day_of(token: &str) -> Option<(&str, &str)> {
    let half = ["am", "pm"].into_iter().find(|h| token.ends_with(h))?;
    let body = &token[..token.len() - 2];
    let word = body.trim_end_matches(|c: char| c.is_ascii_digit());
    let hour = body.len() - word.len();
    ((1..=2).contains(&hour) && word.len() >= 3).then_some((word, half))
}

/// A word's stem for matching it with a column's word ("closing" and `Close`,
/// "embarkation" and `Embarked`, "survival" and `Survived`); none below 4 letters.
fn stem(w: &str) -> Option<&str> {
    let s = LEXICON
        .stem_suffixes
        .iter()
        .find_map(|x| w.strip_suffix(x))
        .unwrap_or(w);
    (s.len() >= 4 && w.len() >= 5).then_some(s)
}

pub(super) fn is_numeric(m: &Mention) -> bool {
    m.kind == "numeric" || m.kind.is_empty()
}

/// A numeric column of a few whole numbers (a class 1, 2, 3): a label when asked for.
pub(super) fn is_code(table: &Table, column: &str) -> bool {
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

/// A column of two values that read as yes and no (yes/no, True/False, 0/1, sí/no).
pub(super) fn is_yes_no(table: &Table, column: &str) -> bool {
    table.column_kinds.iter().any(|c| {
        c.name == column
            && c.distinct == 2
            && c.values
                .iter()
                .all(|v| LEXICON.truthy.contains(&normalise(v).as_str()))
    })
}

/// A numeric id-like column (a code, a year) can label rows.
pub(super) fn is_label_like(table: &Table, column: &str) -> bool {
    table.categories.iter().any(|c| c.name == column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_forms_of_column_words() {
        let pairs = |text: &'static str| {
            text.split(", ")
                .map(|p| p.split_once(' ').unwrap())
                .collect::<Vec<_>>()
        };
        let short_forms = "dep departure, dept department, yrs years, svc service, \
                           trng training, hrs hours, mgr managers, sal salary";
        for (short, long) in pairs(short_forms) {
            assert!(shortens(short, long), "{short} for {long}");
        }
        // Not a start, vowels after it, the last letter far from the end, too short.
        for (short, long) in pairs("dpt adapter, yrs yearly, ab about") {
            assert!(!shortens(short, long), "{short} for {long}");
        }
        assert_eq!(camel_apart("KPIScore"), "KPI Score");
        assert_eq!(camel_apart("EmployeeID"), "Employee ID");
    }
}
