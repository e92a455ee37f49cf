//! A prompt pasted from a ticket: the question, then constraints on the method (the
//! statistic restated, sample or population, the library, the rounding, a formula in
//! words), then the answer format (`@mean_fare[value] where "value" is a number
//! rounded to two decimal places`). It is split into its parts before any planner
//! reads it:
//!
//! - the **answer slots** (`@name[placeholder]` and what the format says of each);
//! - the **method**: every sentence after the first that says only how to compute
//!   (its words are statistics, method and library words, rounding, numbers of a
//!   formula and the table's columns) is read here and taken out of the question;
//! - the **question**: the rest, which the planners read as before, so a sentence that
//!   adds a condition or another statistic is read, or declined, there.
//!
//! The method is then checked against the plan ([`Ticket::apply`]): what it fixes is
//! followed (rounding, sample or population, the correlation's method, scipy's biased
//! skewness), and what the plan cannot follow is named in a decline. The answer ends
//! with the slots filled from the script's values ([`Ticket::answer_lines`]).

use serde_json::Value;

use super::lexicon::LEXICON;
use super::request::{normalise, Lang};
use super::stat_plan::{
    camel_apart, decimals_said, default_interpolation, find, num, statistics_named, words_of,
    FilterOp, LabelOp, StatMethod, StatName, StatPlan, Task,
};

/// A ticket's parts.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Ticket {
    /// What the planners read: the question and every sentence that is not only a
    /// method.
    pub question: String,
    pub method: Method,
    pub slots: Vec<Slot>,
}

/// What the method sentences fix.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Method {
    pub decimals: Option<u32>,
    /// 1: sample, 0: population.
    pub ddof: Option<u8>,
    pub correlation: Option<StatMethod>,
    /// scipy's skewness and kurtosis, biased unless `bias=False`.
    pub biased: Option<bool>,
    /// A formula times 100: the coefficient of variation as a percentage.
    pub percent: bool,
    /// Statistics a method sentence names outside a formula ("use the arithmetic mean").
    pub statistics: Vec<&'static str>,
    /// Rules that name a text answer from the test's numbers ("consider the
    /// relationship linear if the p-value is less than 0.05 and |r| >= 0.5").
    pub rules: Vec<Rule>,
    /// The method sentences, as written.
    pub sentences: Vec<String>,
    /// What a method sentence asks for (statistics, a correlation, a p-value).
    asks: Vec<&'static str>,
    /// Whether it names a column.
    names_column: bool,
    /// Whether it says how to compute (a library, a formula, rounding, sample or
    /// population, a correlation's method, missing values), not only what: only such a
    /// clause is taken out of a sentence ("with Pclass 1 or 2" is a condition).
    says_how: bool,
}

/// One `@name[placeholder]` of the answer format.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Slot {
    pub name: String,
    pub placeholder: String,
    pub decimals: Option<u32>,
    pub kind: SlotKind,
    /// The values a text slot may take, as the format quotes them ("linear",
    /// "nonlinear" or "none"), normalised.
    pub allowed: Vec<String>,
}

/// A label given when every condition holds; `None` is "the value no other rule
/// names" ("if p >= 0.05, report that there is no significant correlation").
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Rule {
    pub label: Option<String>,
    pub conditions: Vec<Condition>,
}

/// A condition on a test's number: `p_value < 0.05`, `|r| >= 0.5`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Condition {
    pub quantity: &'static str,
    pub absolute: bool,
    pub op: FilterOp,
    pub value: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SlotKind {
    Number,
    Integer,
    Text,
}

/// Split `prompt` into its parts; `columns` are the names of the table's columns (a
/// method sentence may name them: "Load Factor has missing values; ignore them").
pub(super) fn read(prompt: &str, columns: &[String]) -> Ticket {
    let (body, format) = match format_start(prompt) {
        Some(at) => (&prompt[..at], &prompt[at..]),
        None => (prompt, ""),
    };
    let body = strip_trailing_label(body);
    let slots = slots(format);
    // Each column as written ("depdelaymin") and apart ("dep delay min").
    let columns: Vec<Vec<String>> = columns
        .iter()
        .flat_map(|c| [words_of(c), words_of(&camel_apart(c))])
        .collect();
    let mut method = Method::default();
    let mut question: Vec<String> = Vec::new();
    // What the question asks for so far: a method sentence that asks for more (the
    // p-value, a second statistic) or names the column the question leaves unnamed is
    // part of the question.
    let mut asked: Vec<&'static str> = Vec::new();
    let mut column_named = false;
    let allowed: Vec<&String> = slots.iter().flat_map(|s| &s.allowed).collect();
    for (i, sentence) in sentences(body).into_iter().enumerate() {
        // A rule a clause ("linear if ...; nonlinear if ...; none otherwise").
        if i > 0 && rule_of(sentence, &allowed).is_some() {
            let rules = sentence.split(';').filter_map(|c| rule_of(c, &allowed));
            method.rules.extend(rules);
            method.sentences.push(sentence.trim().to_string());
            continue;
        }
        // "1." of numbered steps.
        let bare = strip_label(sentence).trim().trim_end_matches(['.', ')']);
        if !bare.is_empty() && bare.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if i > 0 && restates_the_default(&words_of(strip_label(sentence))) {
            method.sentences.push(sentence.trim().to_string());
            continue;
        }
        let sentence = equations_apart(strip_label(sentence), &columns, &mut method);
        let sentence = formula_apart(&sentence, &columns, &mut method);
        let (head, clauses) = method_clauses(&sentence, &columns, &asked);
        for (text, m) in clauses {
            method.merge(m, text);
        }
        if head.trim().is_empty() {
            continue;
        }
        match method_of(head, &columns).filter(|m| {
            i > 0 && m.asks.iter().all(|q| asked.contains(q)) && (column_named || !m.names_column)
        }) {
            Some(m) => method.merge(m, head),
            None => {
                let w = words_of(head);
                asked.extend(quantities(&w));
                column_named |= names_a_column(&w, &columns);
                question.push(head.trim().to_string());
            }
        }
    }
    Ticket {
        question: if slots.is_empty() && method.sentences.is_empty() {
            prompt.to_string()
        } else {
            question.join(" ")
        },
        method,
        slots,
    }
}

/// Whether a sentence after the question only says again what the analyst does anyway:
/// a step it never takes unless asked, negated ("Do not remove outliers", "do not fill
/// them"), or every row ("Include canceled bookings as well", "consider every
/// booking"); never with a word that restricts the rows ("only", "where").
fn restates_the_default(w: &[String]) -> bool {
    let lx = &*LEXICON;
    let has = |list: &[&str], x: &String| list.contains(&x.as_str());
    // "An outlier is a value below Q1 - 1.5 * IQR or above Q3 + 1.5 * IQR": the IQR
    // rule as the analyst applies it (another multiple than 1.5 is not this).
    let iqr_rule = lx.iqr_fences.iter().all(|f| w.iter().any(|x| x == f))
        && w.iter().filter_map(|x| num(x)).all(|n| n == 1.5)
        && w.iter().any(|x| num(x).is_some());
    if iqr_rule {
        return true;
    }
    if w.iter().any(|x| has(&lx.condition, x)) {
        return false;
    }
    let negated_step = w
        .windows(2)
        .any(|p| has(&lx.negation_words, &p[0]) && has(&lx.default_off_steps, &p[1]));
    let every_row = w.first().is_some_and(|x| has(&lx.inclusion_verbs, x))
        && (w.last().is_some_and(|x| has(&lx.also_words, x))
            || w.iter().any(|x| has(&lx.all_words, x)));
    negated_step || every_row
}

/// A sentence without its equations ("s = sqrt(Σ(x_i − x̄)² / (n − 1))", "IQR = Q3 −
/// Q1", "var = ... for i from 1 to n"), each taken as the method's: a short name, "=",
/// then an expression of operators, numbers, short symbols and math words. A right
/// side without an operator is a condition or a parameter ("Region = North", "ddof =
/// 1"), and one naming a column defines a measure ("ratio = adr / age"): both stay.
fn equations_apart(sentence: &str, columns: &[Vec<String>], method: &mut Method) -> String {
    let chars: Vec<(usize, char)> = sentence.char_indices().collect();
    let mut out = sentence.to_string();
    for (k, &(at, c)) in chars.iter().enumerate().rev() {
        let prev = k.checked_sub(1).map(|j| chars[j].1);
        let next = chars.get(k + 1).map(|&(_, n)| n);
        if c != '=' || matches!(prev, Some('<' | '>' | '!' | '=')) || next == Some('=') {
            continue;
        }
        // The name: the token before "=", short ("s", "σ²", "x̄", "IQR", "var").
        let mut from = k;
        while from > 0 && chars[from - 1].1 == ' ' {
            from -= 1;
        }
        let name_end = from;
        while from > 0 && !chars[from - 1].1.is_whitespace() && chars[from - 1].1 != '(' {
            from -= 1;
        }
        let name: String = chars[from..name_end].iter().map(|&(_, c)| c).collect();
        if name.is_empty() || name.chars().filter(|c| c.is_alphabetic()).count() > 4 {
            continue;
        }
        // The expression: until a long word that is no math word, a comparison, or a
        // sentence's end.
        let mut to = k + 1;
        let mut depth = 0i32;
        while to < chars.len() {
            let ch = chars[to].1;
            if ch.is_alphabetic() {
                let word: String = chars[to..]
                    .iter()
                    .map(|&(_, c)| c)
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let letters = word.chars().filter(|c| c.is_alphabetic()).count();
                if letters > 3 && !LEXICON.math_words.contains(&normalise(&word).as_str()) {
                    break;
                }
                to += word.chars().count();
                continue;
            }
            let end = match ch {
                '(' | '[' => {
                    depth += 1;
                    false
                }
                ')' | ']' => {
                    depth -= 1;
                    depth < 0
                }
                '.' | ',' | ';' | ':' => {
                    depth == 0 && chars.get(to + 1).is_none_or(|&(_, n)| n.is_whitespace())
                }
                '<' | '>' | '\u{2264}' | '\u{2265}' | '"' | '\'' | '@' => true,
                _ => false,
            };
            if end {
                break;
            }
            to += 1;
        }
        let stop = chars.get(to).map_or(sentence.len(), |&(i, _)| i);
        let rhs = &sentence[at + 1..stop];
        let w = words_of(rhs);
        let operator = rhs
            .chars()
            .any(|c| "+-\u{2212}*/^\u{b2}\u{221a}\u{3a3}\u{2211}\u{d7}(".contains(c))
            || LEXICON
                .formula_words
                .iter()
                .any(|p| !find(&w, p).is_empty());
        // "age = 2024 - model_year" stops at the column's name: an operator left open.
        let open = rhs
            .trim_end()
            .ends_with(['+', '-', '\u{2212}', '*', '/', '^', '\u{d7}', '(']);
        if depth > 0 || !operator || open || names_a_column(&w, columns) {
            continue;
        }
        let start = chars[from].0;
        let equation = sentence[start..stop].trim().to_string();
        if let Some(d) = ddof_said(&words_of(&equation)) {
            method.ddof.get_or_insert(d);
        }
        method.sentences.push(equation);
        // The equation's place keeps the word "formula": what is around it explains
        // its symbols ("IQR = Q3 - Q1, where Q1 and Q3 are the 25th and 75th ...").
        out = format!(
            "{} formula {}",
            out[..start].trim_end(),
            out[stop..].trim_start()
        );
    }
    out
}

/// A sentence without a parenthesis that restates what it asks as a formula ("the
/// coefficient of variation (standard deviation divided by the mean) of CholTotal")
/// or says how to compute it: the method's, and its statistics are not asked again.
fn formula_apart(sentence: &str, columns: &[Vec<String>], method: &mut Method) -> String {
    let Some(open) = sentence.find('(') else {
        return sentence.to_string();
    };
    // The parenthesis that closes this one: a formula nests ("(n(n² − 1))").
    let mut depth = 0;
    let close = sentence[open..].char_indices().find_map(|(i, c)| {
        depth += match c {
            '(' => 1,
            ')' => -1,
            _ => 0,
        };
        (depth == 0).then_some(open + i)
    });
    let Some(close) = close else {
        return sentence.to_string();
    };
    let inner = &sentence[open + 1..close];
    let w = words_of(inner);
    // "(not a fraction)": only which form of the answer is not wanted.
    let not_this_form = w
        .first()
        .is_some_and(|x| LEXICON.negation_words.contains(&x.as_str()))
        && w[1..]
            .iter()
            .any(|x| LEXICON.answer_forms.contains(&x.as_str()))
        && w[1..].iter().all(|x| {
            LEXICON.answer_forms.contains(&x.as_str())
                || LEXICON.ticket_method.contains(&x.as_str())
        });
    // "(the kurtosis of a normal distribution is 0.0)": the excess kurtosis, scipy's
    // own (a 3 there is Pearson's, another statistic, and stays to be declined).
    // ("Fisher's definition (normal = 0.0) of the kurt()": the reference and the
    // statistic may be said around it.)
    let outer = words_of(sentence);
    let referred = |w: &[String]| {
        LEXICON
            .normal_reference
            .iter()
            .any(|p| !find(w, p).is_empty())
    };
    let normal = w.iter().any(|x| {
        LEXICON
            .normal_reference
            .iter()
            .any(|p| p.split(' ').next() == Some(x.as_str()))
    });
    let kurt = |w: &[String]| quantities(w).iter().all(|q| *q == "kurt");
    let fishers = (referred(&w) && quantities(&w) == ["kurt"]
        || normal && referred(&outer) && quantities(&w).is_empty() && kurt(&outer))
        && w.iter().filter_map(|x| num(x)).all(|n| n == 0.0)
        && w.iter().any(|x| num(x).is_some());
    if not_this_form || fishers {
        method.sentences.push(inner.to_string());
        return format!(
            "{} {}",
            sentence[..open].trim_end(),
            sentence[close + 1..].trim_start()
        );
    }
    let formula = has_formula(&w);
    // ... or says only how to compute what the rest asks ("the skewness of price
    // (scipy.stats.skew with default settings, missing prices removed first)").
    let outside = words_of(&format!("{} {}", &sentence[..open], &sentence[close + 1..]));
    let outside_asks = quantities(&outside);
    // A formula over the data's columns ("(220 minus SeatsSold)") defines the
    // measure asked about; it restates nothing.
    let defines = names_a_column(&w, columns);
    match method_of(inner, columns).filter(|m| {
        formula && m.asks.is_empty() && !defines
            || m.says_how && !m.asks.is_empty() && m.asks.iter().all(|q| outside_asks.contains(q))
    }) {
        Some(m) => {
            method.merge(m, inner);
            format!(
                "{} {}",
                sentence[..open].trim_end(),
                sentence[close + 1..].trim_start()
            )
        }
        None => sentence.to_string(),
    }
}

/// A sentence without the clauses at its end that say only how to compute
/// ("Calculate the std of age, using the formula ..."), and those clauses read.
fn method_clauses<'a>(
    sentence: &'a str,
    columns: &[Vec<String>],
    asked: &[&'static str],
) -> (&'a str, Vec<(&'a str, Method)>) {
    let starts = sentence.char_indices().filter(|&(i, c)| {
        !c.is_whitespace() && i > 0 && sentence[..i].ends_with(char::is_whitespace)
    });
    for (at, _) in starts {
        let word = sentence[at..]
            .split(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or("");
        if !LEXICON.method_clause.contains(&normalise(word).as_str()) {
            continue;
        }
        let (head, tail) = sentence.split_at(at);
        let head_words = words_of(head);
        let head_asks = quantities(&head_words);
        // A clause that names the columns the head leaves unnamed is the request itself
        // ("Using pandas' corr with method='spearman', find the correlation of a and b").
        let head_names = names_a_column(&head_words, columns);
        // "..., defined as SeatsSold divided by Distance km": a formula over the
        // columns defines the measure; it is the request, not a way to compute it.
        let tail_words = words_of(tail);
        if has_formula(&tail_words)
            && names_a_column(&tail_words, columns)
            && !is_mean_formula(&tail_words)
        {
            continue;
        }
        if let Some(m) = method_of(tail, columns).filter(|m| {
            m.says_how
                && (head_names || !m.names_column)
                && m.asks
                    .iter()
                    .all(|q| asked.contains(q) || head_asks.contains(q))
        }) {
            let head = head.trim_end().trim_end_matches(',');
            return (head, vec![(tail, m)]);
        }
    }
    (sentence, Vec::new())
}

/// Whether the words name a column, loosely: a word of its name, or a word its short
/// word abbreviates ("departure" for `DepDelayMin`).
/// Whether words hold a formula ("divided by", "minus", "times").
/// Whether words spell out the mean: a sum, a division, a count, in that order.
fn is_mean_formula(w: &[String]) -> bool {
    mean_formula_count_at(w).is_some()
}

/// Where the count of a spelled-out mean is (see [`is_mean_formula`]).
fn mean_formula_count_at(w: &[String]) -> Option<usize> {
    let mut at = 0;
    for part in &LEXICON.mean_formula {
        at += w[at..].iter().position(|x| part.contains(&x.as_str()))? + 1;
    }
    Some(at - 1)
}

fn has_formula(w: &[String]) -> bool {
    LEXICON.formula_words.iter().any(|p| !find(w, p).is_empty())
}

fn names_a_column(w: &[String], columns: &[Vec<String>]) -> bool {
    // A name's signs read as words ("fertilizer kg/ha" as "kg divided by ha") name nothing.
    let signs = |t: &String| LEXICON.sign_words.contains(&t.as_str());
    columns.iter().flatten().filter(|t| !signs(t)).any(|t| {
        w.iter().any(|x| {
            x == t
                || t.len() >= 3
                    && t.chars().all(|c| c.is_alphabetic())
                    && x.starts_with(t.as_str())
                    && !LEXICON.statistics.iter().any(|(p, _)| p == t)
        })
    })
}

/// The quantities words ask for: statistics (the largest as the maximum), a
/// correlation, a p-value.
fn quantities(w: &[String]) -> Vec<&'static str> {
    // "the sum of the values divided by their number" is the mean, not a sum and a count.
    if is_mean_formula(w) {
        return vec!["mean"];
    }
    let mut out: Vec<&'static str> = statistics_named(w)
        .into_iter()
        .filter(|s| *s != "missing")
        .collect();
    let any = |list: &[&str]| list.iter().any(|p| !find(w, p).is_empty());
    if any(&LEXICON.high) {
        out.push("max");
    }
    if any(&LEXICON.low) {
        out.push("min");
    }
    // A z-score is made of the mean and the standard deviation.
    if any(&LEXICON.z_score) {
        out.extend(["mean", "std"]);
    }
    for (word, key) in LEXICON.slot_keys.iter().filter(|(_, k)| *k != "count") {
        if w.iter()
            .any(|x| x == word || word.len() > 3 && x.starts_with(word))
        {
            out.push(key);
        }
    }
    out.sort();
    out.dedup();
    out
}

impl Method {
    fn merge(&mut self, m: Method, sentence: &str) {
        self.decimals = m.decimals.or(self.decimals);
        self.ddof = m.ddof.or(self.ddof);
        self.correlation = m.correlation.or(self.correlation);
        self.biased = m.biased.or(self.biased);
        self.percent |= m.percent;
        self.statistics.extend(m.statistics);
        self.rules.extend(m.rules);
        self.sentences.push(sentence.trim().to_string());
    }
}

/// Where the answer format starts: the first `@name[`, or the label before it on its
/// line ("Answer format: @...").
fn format_start(prompt: &str) -> Option<usize> {
    let b = prompt.as_bytes();
    (0..b.len()).find(|&i| {
        b[i] == b'@' && {
            let name_end = (i + 1..b.len())
                .find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_'))
                .unwrap_or(b.len());
            name_end > i + 1 && prompt[name_end..].trim_start().starts_with('[')
        }
    })
}

/// The body without a label left at its end ("... decimals. Answer format:").
fn strip_trailing_label(body: &str) -> &str {
    let t = body.trim_end();
    let Some(before) = t.strip_suffix(':') else {
        return body;
    };
    let cut = before
        .rfind(['.', '?', '!', '\n', ';'])
        .map_or(0, |i| i + 1);
    if LEXICON
        .ticket_labels
        .contains(&normalise(&before[cut..]).as_str())
    {
        &body[..cut]
    } else {
        body
    }
}

/// A sentence without the label that opens it ("Constraints: use ...").
fn strip_label(sentence: &str) -> &str {
    match sentence.split_once(':') {
        Some((label, rest)) if LEXICON.ticket_labels.contains(&normalise(label).as_str()) => rest,
        _ => sentence,
    }
}

/// The sentences of `text`: a sentence ends at `.`, `?`, `!` or `;` before a space or
/// the end (so `scipy.stats.pearsonr` and `2.5` are no ends), or at a line break.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        let next = chars.get(k + 1).map(|&(_, n)| n);
        let end =
            c == '\n' || ("?!;".contains(c) || c == '.') && next.is_none_or(char::is_whitespace);
        if end {
            let to = i + c.len_utf8();
            out.push(&text[from..to]);
            from = to;
        }
    }
    if from < text.len() {
        out.push(&text[from..]);
    }
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

/// The slots of the answer format, with what its text says of each.
fn slots(format: &str) -> Vec<Slot> {
    let mut found: Vec<(String, String, usize)> = Vec::new();
    let mut rest = format;
    let mut offset = 0;
    while let Some(at) = format_start(rest) {
        let after = &rest[at + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let tail = after[name_len..].trim_start();
        let Some(close) = tail.find(']') else { break };
        let placeholder = tail[1..close].trim().to_string();
        let end = rest.len() - tail.len() + close + 1;
        found.push((name.to_string(), placeholder, offset + end));
        offset += end;
        rest = &rest[end..];
    }
    // What the format says after the slots, one part for each placeholder it quotes
    // ("where "r" is ... and "p" is ...").
    let described: String = {
        let mut t = String::new();
        let mut from = 0;
        for (_, _, end) in &found {
            let start = format[from..*end].rfind('@').map_or(*end, |i| from + i);
            t.push_str(&format[from..start]);
            t.push(' ');
            from = *end;
        }
        t.push_str(&format[from..]);
        t
    };
    let text = normalise(&described);
    // The quoted words of the format that are no placeholder: the values a text slot
    // may take ("linear", "nonlinear", or "none").
    let placeholders: Vec<String> = found.iter().map(|(_, p, _)| normalise(p)).collect();
    let quoted: Vec<String> = described
        .split(['"', '\'', '“', '”'])
        .skip(1)
        .step_by(2)
        .map(normalise)
        .filter(|q| !q.is_empty() && q.split(' ').count() <= 3 && !placeholders.contains(q))
        .collect();
    let mut marks: Vec<(usize, usize)> = found
        .iter()
        .enumerate()
        .filter_map(|(k, (_, p, _))| {
            let p = normalise(p);
            (!p.is_empty())
                .then(|| find_word(&text, &p))
                .flatten()
                .map(|at| (at, k))
        })
        .collect();
    marks.sort();
    // Each quoted placeholder's part runs to the next one; a part that says nothing
    // but its placeholder and a joiner ("mean" and "std" are numbers rounded to two
    // decimal places) shares the next part's description.
    let mut parts: Vec<&str> = vec![""; marks.len()];
    for m in (0..marks.len()).rev() {
        let from = marks[m].0;
        let to = marks.get(m + 1).map_or(text.len(), |(at, _)| *at);
        let own = &text[from..to];
        let said = own
            .split(' ')
            .skip(normalise(&found[marks[m].1].1).split(' ').count())
            .all(|x| x.is_empty() || LEXICON.joiners.contains(&x));
        parts[m] = if said && m + 1 < marks.len() {
            parts[m + 1]
        } else {
            own
        };
    }
    found
        .iter()
        .enumerate()
        .map(|(k, (name, placeholder, _))| {
            let part = match marks.iter().position(|(_, j)| *j == k) {
                Some(m) => parts[m],
                // Not quoted: what the format says of all its slots.
                None => text.as_str(),
            };
            let w: Vec<String> = part.split(' ').map(str::to_string).collect();
            // `@carrier[name]`, `@top_group[group_name]`: the slot's own last word.
            let own = |t: &str| {
                let t = normalise(&t.replace('_', " "));
                t.rsplit(' ')
                    .next()
                    .is_some_and(|last| LEXICON.slot_text.contains(&last))
            };
            // "one of "linear", "nonlinear" or "none"": quoted words to choose from.
            let padded = format!(" {part} ");
            let choices = quoted
                .iter()
                .filter(|q| num(q).is_none() && padded.contains(&format!(" {q} ")))
                .count();
            let kind = if LEXICON.slot_integer.iter().any(|p| !find(&w, p).is_empty()) {
                SlotKind::Integer
            } else if choices >= 2
                || own(placeholder)
                || own(name)
                || LEXICON.slot_text.iter().any(|p| !find(&w, p).is_empty())
                    && !LEXICON
                        .slot_number
                        .iter()
                        .any(|x| w.contains(&x.to_string()))
            {
                SlotKind::Text
            } else {
                SlotKind::Number
            };
            let decimals = decimals_said(&w).or((kind == SlotKind::Integer).then_some(0));
            let allowed = if kind == SlotKind::Text {
                quoted
                    .iter()
                    .filter(|q| padded.contains(&format!(" {q} ")))
                    .cloned()
                    .collect()
            } else {
                Vec::new()
            };
            Slot {
                name: name.clone(),
                placeholder: placeholder.clone(),
                decimals,
                kind,
                allowed,
            }
        })
        .collect()
}

/// A sentence that names a text answer by conditions on a test's numbers: "Consider
/// the relationship to be linear if the p-value is less than 0.05 and the absolute
/// value of r is greater than or equal to 0.5"; "If the p-value is at least 0.05,
/// report that there is no significant correlation" (the value no other rule names).
fn rule_of(sentence: &str, allowed: &[&String]) -> Option<Rule> {
    if allowed.is_empty() {
        return None;
    }
    let w = words_of(sentence);
    if !w.iter().any(|x| LEXICON.rule_if.contains(&x.as_str())) {
        return None;
    }
    let label = allowed
        .iter()
        .find(|a| !find(&w, a).is_empty())
        .map(|a| a.to_string());
    let mut conditions = Vec::new();
    let mut i = 0;
    while i < w.len() {
        let Some((quantity, len)) = test_number_at(&w, i) else {
            i += 1;
            continue;
        };
        // "the absolute value of r", "|r|" (written "abs r").
        let absolute = w[i.saturating_sub(3)..i]
            .iter()
            .any(|x| LEXICON.absolute.contains(&x.as_str()));
        // The comparison within a few words after ("is greater than or equal to 0.5").
        let after = &w[i + len..(i + len + 8).min(w.len())];
        let compared = LEXICON.comparators.iter().find_map(|(p, op, _)| {
            let at = find(after, p).into_iter().next()?;
            let n = p.split(' ').count();
            let value = after[at + n..].iter().take(2).find_map(|x| num(x))?;
            Some((FilterOp::of_code(op), value, at + n))
        });
        // "the correlation strong if |r| >= 0.5": the number nearest the comparison
        // is the one compared.
        let nearer = compared.is_some_and(|(_, _, used)| {
            (i + len..i + len + used)
                .any(|k| test_number_at(&w, k).is_some_and(|(q, _)| q == quantity))
        });
        match compared.filter(|_| !nearer) {
            Some((op, value, used)) => {
                conditions.push(Condition {
                    quantity,
                    absolute,
                    op,
                    value,
                });
                i += len + used;
            }
            None => i += len,
        }
    }
    (!conditions.is_empty()).then_some(Rule { label, conditions })
}

/// A test's number named at `i` (the p-value, r), with its length in words: the
/// answer slots' own words for them ("p value", "r", "correlation coefficient").
fn test_number_at(w: &[String], i: usize) -> Option<(&'static str, usize)> {
    let key = |x: &str| {
        LEXICON
            .slot_keys
            .iter()
            .find(|(word, k)| *word == x && (*k == "p_value" || *k == "r"))
            .map(|(_, k)| *k)
    };
    let here = key(&w[i])?;
    let len = match w.get(i + 1).map(String::as_str) {
        Some(next) if key(next) == Some(here) => 2,
        Some("value" | "valor") if here == "p_value" => 2,
        _ => 1,
    };
    Some((here, len))
}

impl Rule {
    /// Whether every condition holds for the script's `values` (`r`, or `rho`/`tau`,
    /// and `p_value`); None when a number is missing.
    fn holds(&self, values: &Value) -> Option<bool> {
        let mut all = true;
        for c in &self.conditions {
            let v = match c.quantity {
                "r" => LEXICON
                    .slot_keys
                    .iter()
                    .filter(|(_, k)| *k == "r")
                    .find_map(|(word, _)| values.get(*word).and_then(Value::as_f64))?,
                q => values.get(q).and_then(Value::as_f64)?,
            };
            let v = if c.absolute { v.abs() } else { v };
            all &= match c.op {
                FilterOp::Gt => v > c.value,
                FilterOp::Ge => v >= c.value,
                FilterOp::Lt => v < c.value,
                FilterOp::Le => v <= c.value,
                FilterOp::Eq => v == c.value,
                _ => return None,
            };
        }
        Some(all)
    }
}

/// The byte offset of `word` (normalised words) as whole words in `text`.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let padded = format!(" {text} ");
    padded.find(&format!(" {word} "))
}

/// The method a sentence says, when it says nothing but a method.
fn method_of(sentence: &str, columns: &[Vec<String>]) -> Option<Method> {
    let w = words_of(sentence);
    if w.is_empty() {
        return None;
    }
    let mut covered = vec![false; w.len()];
    let cover = |phrase: &[String], covered: &mut Vec<bool>| {
        let p = phrase.join(" ");
        for at in find(&w, &p) {
            covered[at..at + phrase.len()]
                .iter_mut()
                .for_each(|c| *c = true);
        }
    };
    let mut column_said = false;
    for c in columns.iter().filter(|c| !c.is_empty()) {
        let before = covered.clone();
        cover(c, &mut covered);
        column_said |= before != covered;
    }
    // A word of a column's name ("missing prices" for `price_usd`), in a clause that
    // names no whole column.
    if !column_said {
        for (i, x) in w.iter().enumerate() {
            let plain = LEXICON.row_nouns.contains(&x.as_str())
                || LEXICON.ticket_method.contains(&x.as_str());
            if !covered[i] && !plain && names_a_column(std::slice::from_ref(x), columns) {
                covered[i] = true;
                column_said = true;
            }
        }
    }
    let statistics = LEXICON.statistics.iter().map(|(p, _)| p);
    for phrase in statistics
        .chain(LEXICON.high.iter())
        .chain(LEXICON.low.iter())
    {
        let p: Vec<String> = phrase.split(' ').map(str::to_string).collect();
        cover(&p, &mut covered);
    }
    let method_word = |x: &str| {
        LEXICON.ticket_method.contains(&x)
            || x.strip_suffix('s')
                .is_some_and(|x| LEXICON.ticket_method.contains(&x))
    };
    for (i, x) in w.iter().enumerate() {
        if method_word(x)
            || LEXICON.handling.contains(&x.as_str())
            || LEXICON.row_nouns.contains(&x.as_str())
            || num(x).is_some()
        {
            covered[i] = true;
        }
    }
    // "... divided by the number of bookings": what is counted are the rows.
    if let Some(at) = mean_formula_count_at(&w) {
        covered[at..].iter_mut().for_each(|c| *c = true);
    }
    // Missing values as zero: the planners read it; so is a quantile method other than
    // the default (declined there).
    let fills = LEXICON.missing_fill.iter().any(|p| !find(&w, p).is_empty());
    if covered.iter().any(|c| !c) || fills || !default_interpolation(&w) {
        return None;
    }
    // A condition ("only rows where IsWeekend is 1", "above 3") is the question's.
    let has_number = w.iter().any(|x| num(x).is_some());
    let condition = LEXICON.condition.iter().any(|p| !find(&w, p).is_empty());
    let compares = LEXICON.comparators.iter().any(|(p, _, _)| {
        let n = p.split(' ').count();
        find(&w, p)
            .into_iter()
            .any(|at| w[at + n..].iter().take(2).any(|x| num(x).is_some()))
    });
    let said = |list: &[&str]| list.iter().any(|p| !find(&w, p).is_empty());
    // "The median is the middle value of the sorted values": a statistic defined, as
    // a formula restates one; what it is defined by is not asked.
    let defined = defined_statistic(&w);
    let formula = said(&LEXICON.formula_words) || defined.is_some();
    // "irrigated is 1 for irrigated fields and 0 otherwise": a yes/no column's coding.
    let numbers: Vec<f64> = w.iter().filter_map(|x| num(x)).collect();
    let coding = column_said
        && numbers.contains(&0.0)
        && numbers.contains(&1.0)
        && numbers.iter().all(|n| *n == 0.0 || *n == 1.0);
    // ("where n is the number of rows", "for i = 1 to n": a formula's own words.)
    if compares || condition && (column_said || has_number) && !formula {
        return None;
    }
    let decimals = decimals_said(&w);
    let ddof = ddof_said(&w);
    // "Spearman's rho is the Pearson correlation of the ranked values": Spearman's,
    // defined; two methods named otherwise say neither.
    let methods: Vec<StatMethod> = LEXICON
        .correlation_methods
        .iter()
        .filter(|(p, _)| !find(&w, p).is_empty())
        .map(|(_, m)| StatMethod::of_code(m))
        .fold(Vec::new(), |mut v, m| {
            if !v.contains(&m) {
                v.push(m);
            }
            v
        });
    let ranked = LEXICON.ranks.iter().any(|p| !find(&w, p).is_empty());
    let correlation = match methods.as_slice() {
        [one] => Some(*one),
        many if ranked && many.contains(&StatMethod::Spearman) => Some(StatMethod::Spearman),
        _ => None,
    };
    // A number a method does not explain (a rounding, ddof, a formula's constant, a
    // percentile) is a condition's ("houses with 2 bedrooms", "ignore rows of 0").
    let parameter = w
        .iter()
        .any(|x| LEXICON.parameter_words.iter().any(|p| x.starts_with(p)));
    if has_number && !formula && !coding && decimals.is_none() && ddof.is_none() && !parameter {
        return None;
    }
    let scipy = w.iter().any(|x| x == "scipy");
    let shape = statistics_named(&w)
        .iter()
        .any(|s| *s == "skew" || *s == "kurt");
    let unbiased = LEXICON.unbiased.iter().any(|p| !find(&w, p).is_empty());
    let biased = (shape && (scipy || unbiased)).then_some(!unbiased);
    let says_how = formula
        || decimals.is_some()
        || ddof.is_some()
        || correlation.is_some()
        || biased.is_some()
        || said(&LEXICON.libraries)
        || said(&LEXICON.handling);
    Some(Method {
        decimals,
        ddof,
        correlation,
        biased,
        percent: said(&LEXICON.percent_scale),
        statistics: if formula {
            Vec::new()
        } else {
            statistics_named(&w)
                .into_iter()
                .filter(|s| *s != "missing")
                .collect()
        },
        rules: Vec::new(),
        sentences: Vec::new(),
        asks: match defined {
            Some(s) => vec![s],
            None if formula => Vec::new(),
            None => quantities(&w),
        },
        names_column: column_said,
        says_how,
    })
}

/// The statistic a sentence defines: one at its start (after articles), then a verb
/// of being or defining ("the median is ...", "IQR = Q3 - Q1", "la media es ...").
fn defined_statistic(w: &[String]) -> Option<&'static str> {
    let start = w
        .iter()
        .position(|x| !LEXICON.articles.contains(&x.as_str()))?;
    LEXICON.statistics.iter().find_map(|(p, name)| {
        let len = p.split(' ').count();
        let verb = w.get(start + len)?;
        // ("Missing values are excluded" says how, it defines nothing.)
        (*name != "missing"
            && find(&w[start..(start + len).min(w.len())], p) == [0]
            && LEXICON.definition_verbs.contains(&verb.as_str()))
        .then_some(*name)
    })
}

/// Sample (1) or population (0), as the words say it: a form negated ("divide by N,
/// not N-1") says the other, "divided by n" followed by "minus 1" is the sample's, and
/// forms that disagree say nothing.
fn ddof_said(w: &[String]) -> Option<u8> {
    let mut said: Option<u8> = None;
    for (phrase, v) in LEXICON.ddof_words.iter() {
        let len = phrase.split(' ').count();
        for at in find(w, phrase) {
            let Ok(mut v) = v.parse::<u8>() else { continue };
            let next = w.get(at + len).map(String::as_str);
            if phrase.ends_with(" n") && matches!(next, Some("minus" | "menos")) {
                continue;
            }
            let negated = w[at.saturating_sub(2)..at]
                .iter()
                .any(|x| LEXICON.negation_words.contains(&x.as_str()));
            if negated {
                v = 1 - v.min(1);
            }
            match said {
                Some(s) if s != v => return None,
                _ => said = Some(v),
            }
        }
    }
    said
}

impl Ticket {
    /// Follow the method in `plan`, or say what of it the plan cannot follow.
    pub(super) fn apply(&self, plan: &mut StatPlan, lang: Lang) -> Result<(), String> {
        let m = &self.method;
        let primary = self
            .slots
            .iter()
            .find(|s| s.kind != SlotKind::Text && slot_key(s, plan) != Some("p_value"));
        if let Some(d) = primary.and_then(|s| s.decimals).or(m.decimals) {
            plan.decimals = Some(d);
        }
        if let Some(ddof) = m.ddof {
            plan.ddof = ddof;
        }
        if let Some(method) = m.correlation {
            if plan.task != Task::Correlation {
                return Err(lang.pick(
                    format!("the method names a {method} correlation, but the question asks for no correlation"),
                    format!("el método nombra una correlación de {method}, pero la pregunta no pide una correlación"),
                ));
            }
            plan.method = Some(method);
        }
        if let Some(biased) = m.biased {
            plan.biased = biased;
        }
        // (A share is a percentage already: "(count / total) × 100" restates it.)
        let is = |n: &str| plan.stats.iter().any(|s| s.name.code() == n);
        if m.percent && !is("share") {
            if !is("cv") {
                return Err(lang.pick(
                    "the method multiplies by 100, which only the coefficient of variation takes here",
                    "el método multiplica por 100, y aquí solo lo admite el coeficiente de variación",
                ).into());
            }
            plan.percent = true;
        }
        if !m.rules.is_empty() && plan.task != Task::Correlation {
            return Err(lang.pick(
                "the method names an answer by a test's p-value and coefficient, but the question asks for no correlation",
                "el método nombra una respuesta por el valor p y el coeficiente de una prueba, pero la pregunta no pide una correlación",
            ).into());
        }
        let computed = |s: &str| {
            plan.stats.iter().any(|x| x.name.code() == s)
                || LabelOp::of(StatName::of_code(s)).is_some_and(|op| plan.label_op == Some(op))
                || s == "count" && plan.stats.is_empty()
                || s == "std" && plan.task == Task::Outliers
                // ("CV = sd / mean, using the sample standard deviation": its parts.)
                || ["std", "mean"].contains(&s) && plan.stats.iter().any(|x| x.name == StatName::Cv)
                || s == "std" && plan.stats.iter().any(|x| x.name == StatName::Sem)
        };
        if let Some(s) = m.statistics.iter().find(|s| !computed(s)) {
            return Err(lang.pick(
                format!(
                    "the method names the statistic `{s}`, which the question does not ask for"
                ),
                format!("el método nombra la estadística `{s}`, que la pregunta no pide"),
            ));
        }
        Ok(())
    }

    /// The answer in the format asked (`@mean_fare[34.65]`), one line a slot it can
    /// fill from the script's `values`; None when no slot was asked.
    pub(super) fn answer_lines(&self, plan: Option<&Value>, values: &Value) -> Option<String> {
        if self.slots.is_empty() {
            return None;
        }
        let stats: Vec<String> = plan
            .and_then(|p| p.get("stats"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.get("name").and_then(Value::as_str).map(str::to_string))
            .collect();
        let group = plan
            .and_then(|p| p.get("group"))
            .or_else(|| values.get("group"))
            .and_then(Value::as_str);
        let lines: Vec<String> = self
            .slots
            .iter()
            .filter_map(|s| {
                if let Some(label) = self.ruled(s, values) {
                    return Some(format!("@{}[{label}]", s.name));
                }
                // A slot named for the column the rows are grouped by ("@month[m]" by
                // `Month`) wants the group's label, even a number.
                let label = values.get("label").filter(|v| !v.is_null());
                if let (Some(group), Some(label)) = (group, label) {
                    if names_group(s, group) {
                        return Some(format!("@{}[{}]", s.name, show(label, None)));
                    }
                }
                let key = slot_key_of(s, &stats, values)?;
                let v = values.get(key).filter(|v| !v.is_null())?;
                // A name into a name's slot, a number into a number's: never across.
                if (v.is_array() || v.is_string()) != (s.kind == SlotKind::Text) {
                    return None;
                }
                Some(format!("@{}[{}]", s.name, show(v, s.decimals)))
            })
            .collect();
        (!lines.is_empty()).then(|| lines.join("\n"))
    }

    /// A text slot's value by the method's rules: the first rule that holds, its label
    /// or the one allowed value no rule names.
    fn ruled(&self, slot: &Slot, values: &Value) -> Option<String> {
        let rules = &self.method.rules;
        if slot.kind != SlotKind::Text || slot.allowed.is_empty() || rules.is_empty() {
            return None;
        }
        // The one allowed value no rule names: a rule without a label, or "weak
        // otherwise" when no rule holds.
        let unnamed = || {
            let named: Vec<&String> = rules.iter().filter_map(|r| r.label.as_ref()).collect();
            match slot
                .allowed
                .iter()
                .filter(|a| !named.contains(a))
                .collect::<Vec<_>>()[..]
            {
                [one] => Some(one.clone()),
                _ => None,
            }
        };
        let Some(rule) = rules.iter().find(|r| r.holds(values) == Some(true)) else {
            let all_labelled_and_false = rules
                .iter()
                .all(|r| r.holds(values) == Some(false) && r.label.is_some());
            return all_labelled_and_false.then(unnamed).flatten();
        };
        match &rule.label {
            Some(l) if slot.allowed.contains(l) => Some(l.clone()),
            Some(_) => None,
            None => unnamed(),
        }
    }
}

/// The words of a slot's name and placeholder.
fn slot_words(slot: &Slot) -> Vec<String> {
    words_of(&format!("{} {}", slot.name, slot.placeholder).replace('_', " "))
}

/// Whether a slot's name or placeholder is the group column's name ("month" for
/// `Month`, "carrier_name" for `Carrier`).
fn names_group(slot: &Slot, group: &str) -> bool {
    let w = slot_words(slot);
    let g = words_of(&camel_apart(group));
    !g.is_empty() && g.iter().all(|x| w.contains(x))
}

/// The value a slot asks for, by the words of its name and placeholder.
fn slot_key(slot: &Slot, plan: &StatPlan) -> Option<&'static str> {
    let stats: Vec<String> = plan.stats.iter().map(|s| s.name.to_string()).collect();
    slot_key_of(slot, &stats, &Value::Null)
}

fn slot_key_of(slot: &Slot, stats: &[String], values: &Value) -> Option<&'static str> {
    let w = slot_words(slot);
    let present = |k: &str| values.is_null() || values.get(k).is_some();
    let keyed = |key: &str| {
        LEXICON
            .slot_keys
            .iter()
            .any(|(word, k)| *k == key && w.iter().any(|x| x == word))
            && present(key)
    };
    if keyed("p_value") {
        return Some("p_value");
    }
    if slot.kind == SlotKind::Text && present("label") {
        return Some("label");
    }
    if keyed("r") {
        return Some("r");
    }
    // A statistic the slot names, else the plan's one statistic.
    let named = statistics_named(&w);
    if let Some(s) = named.iter().find(|s| values.get(**s).is_some()) {
        return Some(s);
    }
    // A slot for a coefficient or a p-value that the answer lacks takes nothing else
    // (a total in `@spearman_rho[...]` answers another question).
    let names_key = |key: &str| {
        LEXICON
            .slot_keys
            .iter()
            .any(|(word, k)| *k == key && w.iter().any(|x| x == word))
    };
    if !values.is_null() && (names_key("p_value") || names_key("r")) {
        return None;
    }
    if keyed("count") {
        return Some("count");
    }
    if let [one] = stats {
        if let Some((k, _)) = values
            .as_object()
            .and_then(|o| o.get_key_value(one.as_str()))
        {
            return LEXICON.statistics.iter().map(|(_, n)| *n).find(|n| n == k);
        }
    }
    present("value").then_some("value")
}

/// A value as the slot wants it: rounded to its decimals, a label as written.
fn show(v: &Value, decimals: Option<u32>) -> String {
    match v {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            match decimals {
                Some(d) => format!("{x:.*}", d as usize),
                None => {
                    let s = format!("{x:.6}");
                    let s = s.trim_end_matches('0').trim_end_matches('.');
                    if s == "-0" {
                        "0".into()
                    } else {
                        s.to_string()
                    }
                }
            }
        }
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .map(|x| show(x, decimals))
            .collect::<Vec<_>>()
            .join(", "),
        Value::Bool(b) => b.to_string(),
        Value::Null | Value::Object(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn splits_question_method_and_answer_format() {
        let t = read(
            "Calculate the mean departure delay (DepDelayMin) of all flights. Use the \
             arithmetic mean and ignore missing values. @mean_delay[mean_value] where \
             \"mean_value\" is a number rounded to two decimal places.",
            &cols(&["DepDelayMin", "Carrier"]),
        );
        assert_eq!(
            t.question,
            "Calculate the mean departure delay (DepDelayMin) of all flights."
        );
        assert_eq!(t.method.statistics, vec!["mean"]);
        assert_eq!(t.slots.len(), 1);
        assert_eq!(t.slots[0].name, "mean_delay");
        assert_eq!(t.slots[0].decimals, Some(2));
        assert_eq!(t.slots[0].kind, SlotKind::Number);
    }

    #[test]
    fn each_slot_gets_its_own_description() {
        let t = read(
            "Is AgeYrs related to Systolic BP? Calculate the Pearson correlation coefficient (r) \
             and its p-value using scipy.stats.pearsonr. @correlation_coefficient[r_value] \
             @p_value[p_value] where \"r_value\" is a number between -1 and 1 rounded to two \
             decimal places and \"p_value\" is a number rounded to four decimal places.",
            &cols(&["AgeYrs", "Systolic BP"]),
        );
        // The second sentence asks for more than the first (the p-value): it stays,
        // without its clause of method.
        assert_eq!(
            t.question,
            "Is AgeYrs related to Systolic BP? Calculate the Pearson correlation coefficient (r) \
             and its p-value"
        );
        assert_eq!(t.method.correlation, Some(StatMethod::Pearson));
        let d: Vec<Option<u32>> = t.slots.iter().map(|s| s.decimals).collect();
        assert_eq!(d, vec![Some(2), Some(4)]);
    }

    #[test]
    fn a_sentence_with_a_condition_stays_with_the_question() {
        let t = read(
            "What is the mean of SeatsSold? Only consider flights where IsWeekend is 1. \
             Round to 2 decimals.",
            &cols(&["SeatsSold", "IsWeekend"]),
        );
        assert_eq!(
            t.question,
            "What is the mean of SeatsSold? Only consider flights where IsWeekend is 1."
        );
        assert_eq!(t.method.decimals, Some(2));
        let t = read(
            "How many rows have a z-score of fare above 3? Use the sample standard deviation.",
            &cols(&["fare"]),
        );
        assert_eq!(t.method.ddof, Some(1));
        assert!(t.question.contains("above 3"));
    }

    #[test]
    fn a_clause_of_a_column_and_a_number_is_a_condition() {
        for p in [
            "What is the mean Fare for passengers with Pclass 1 or 2?",
            "What is the average area of houses with 2 bedrooms?",
        ] {
            let t = read(p, &cols(&["Fare", "Pclass", "area", "bedrooms"]));
            assert_eq!(t.question, p);
        }
        let t = read(
            "What is the mean Fare, rounded to 2 decimals?",
            &cols(&["Fare"]),
        );
        assert_eq!(t.question, "What is the mean Fare");
        assert_eq!(t.method.decimals, Some(2));
    }

    #[test]
    fn a_formula_restates_without_asking_for_more() {
        let t = read(
            "Calculate the standard deviation of AgeYrs, using the formula sqrt(sum((x_i - mean)^2) \
             / (n - 1)) for i from 1 to n. @std_age[value] where value is rounded to 2 decimal places.",
            &cols(&["AgeYrs"]),
        );
        // One sentence: the first is always the question.
        assert!(t.question.starts_with("Calculate the standard deviation"));
        let t = read(
            "What is the standard deviation of AgeYrs? It is sqrt(sum((x_i - mean)^2) / (n - 1)) \
             for i from 1 to n.",
            &cols(&["AgeYrs"]),
        );
        assert_eq!(t.method.ddof, Some(1));
        assert!(t.method.statistics.is_empty());
    }

    #[test]
    fn a_prompt_without_ticket_parts_is_left_whole() {
        let p = "Which region had the highest revenue? Revenue is units times unit_price.";
        let t = read(p, &cols(&["region", "units", "unit_price"]));
        assert_eq!(t.question, p);
        assert!(t.slots.is_empty() && t.method.sentences.is_empty());
    }

    #[test]
    fn answer_lines_fill_slots_by_their_words() {
        let t = read(
            "Correlation of a and b? @r[r_value] @p_value[p] where \"r_value\" is rounded to 2 \
             decimals and \"p\" is rounded to 4 decimals.",
            &cols(&["a", "b"]),
        );
        let values =
            serde_json::json!({"r": 0.12345, "p_value": 0.000123, "n": 40, "value": 0.12345});
        assert_eq!(
            t.answer_lines(None, &values).unwrap(),
            "@r[0.12]\n@p_value[0.0001]"
        );
        let t = read("Which carrier? @carrier[name] where name is a string.", &[]);
        let values = serde_json::json!({"label": ["Aerolux"], "value": 3.0});
        assert_eq!(t.answer_lines(None, &values).unwrap(), "@carrier[Aerolux]");
        // A slot named for the group column wants the group's label, a number too.
        let t = read(
            "Group by Month and sum SeatsSold. Which month has the largest total? @month[m] \
             where m is an integer.",
            &cols(&["Month", "SeatsSold"]),
        );
        let values = serde_json::json!({"label": ["4"], "value": 8751.0, "group": "Month"});
        assert_eq!(t.answer_lines(None, &values).unwrap(), "@month[4]");
    }

    #[test]
    fn a_text_answer_named_by_rules_on_the_tests_numbers() {
        let t = read(
            "Is there a correlation between a and b? Calculate the Pearson correlation \
             coefficient (r). Report the p-value. Consider the relationship to be linear if \
             the p-value is less than 0.05 and the absolute value of r is greater than or \
             equal to 0.5. Consider the relationship to be nonlinear if the p-value is less \
             than 0.05 and the absolute value of r is less than 0.5. If the p-value is \
             greater than or equal to 0.05, report that there is no significant correlation. \
             @correlation_coefficient[r_value] @p_value[p_value] \
             @relationship_type[relationship_type] where \"r_value\" is rounded to two decimal \
             places, \"p_value\" is rounded to four decimal places, and \"relationship_type\" \
             is a string that can either be \"linear\", \"nonlinear\", or \"none\".",
            &cols(&["a", "b"]),
        );
        assert_eq!(t.method.rules.len(), 3, "{:?}", t.method.rules);
        assert!(!t.question.contains("Consider"), "{}", t.question);
        assert_eq!(t.slots[2].allowed.join("/"), "linear/nonlinear/none");
        assert_eq!(t.slots[2].kind, SlotKind::Text);
        let lines = |r: f64, p: f64| {
            t.answer_lines(None, &serde_json::json!({"r": r, "p_value": p, "n": 50}))
                .unwrap()
        };
        assert!(lines(0.03, 0.4759).ends_with("@relationship_type[none]"));
        assert!(lines(-0.71, 0.0001).ends_with("@relationship_type[linear]"));
        assert!(lines(0.2, 0.01).ends_with("@relationship_type[nonlinear]"));
        assert!(lines(0.2, 0.01).starts_with("@correlation_coefficient[0.20]\n@p_value[0.0100]"));
        // Without a value to pick from, a rule names nothing.
        let t = read(
            "Correlation of a and b? Call it strong if r is above 0.5. @kind[k] where k is a \
             string.",
            &cols(&["a", "b"]),
        );
        assert!(t.method.rules.is_empty());
    }

    #[test]
    fn a_rule_and_its_otherwise_on_the_nearest_number() {
        let t = read(
            "What is the correlation coefficient between a and b? Consider the correlation \
             strong if |r| >= 0.5, weak otherwise. @correlation[r] @strength[label] where r \
             is rounded to 2 decimals and label is \"strong\" or \"weak\".",
            &cols(&["a", "b"]),
        );
        assert_eq!(t.method.rules.len(), 1, "{:?}", t.method.rules);
        let c = &t.method.rules[0].conditions[0];
        assert_eq!(
            (c.quantity, c.absolute, c.op, c.value),
            ("r", true, FilterOp::Ge, 0.5)
        );
        let lines = |r: f64| {
            t.answer_lines(None, &serde_json::json!({"r": r, "p_value": 0.01}))
                .unwrap()
        };
        assert_eq!(lines(0.28), "@correlation[0.28]\n@strength[weak]");
        assert_eq!(lines(-0.5), "@correlation[-0.50]\n@strength[strong]");
        // A slot for a coefficient is never filled with another number.
        assert_eq!(
            t.answer_lines(None, &serde_json::json!({"sum": 3357.67})),
            None
        );
    }

    #[test]
    fn typeset_formulas_definitions_and_numbered_steps_are_the_method() {
        let c: Vec<String> = "rain,yield,irrigated"
            .split(',')
            .map(str::to_string)
            .collect();
        let t = read(
            "What is the standard deviation of rain? Use the sample standard deviation \
             s = sqrt( \u{3a3} (x_i \u{2212} x\u{304})\u{b2} / (n \u{2212} 1) ). @s[v]",
            &c,
        );
        assert_eq!(t.question, "What is the standard deviation of rain?");
        assert_eq!(t.method.ddof, Some(1));
        let t = read(
            "Compute the population standard deviation of rain. \u{3c3} = sqrt((1/N) * \
             sum((x - mu)^2)), i.e. divide by N, not N-1. @s[v]",
            &c,
        );
        assert_eq!(t.method.ddof, Some(0), "{:?}", t.method);
        let t = read(
            "What is the median of rain? The median is the middle value of the sorted \
             values (the average of the two middle values when n is even). Missing values \
             are excluded. @m[v]",
            &c,
        );
        assert_eq!(t.question, "What is the median of rain?");
        let t = read(
            "What share of the rows is irrigated? irrigated is 1 for irrigated rows and 0 \
             otherwise. @p[v]",
            &c,
        );
        assert_eq!(t.question, "What share of the rows is irrigated?");
        let t = read(
            "Compute the mean rain. Constraints: 1. Load the data with pandas.read_csv. 2. \
             Drop missing values in the rain column. 3. Round the result to two decimal \
             places. Format: @m[v]",
            &c,
        );
        assert_eq!(t.question, "Compute the mean rain.");
        assert_eq!(t.method.decimals, Some(2));
        // A condition in a sentence after the question stays the question's.
        let t = read(
            "What is the mean rain? Only rows where irrigated is 1. @m[v]",
            &c,
        );
        assert!(t.question.contains("irrigated is 1"), "{}", t.question);
        // Sample and population disagreeing say neither.
        assert_eq!(ddof_said(&words_of("the sample, divided by n")), None);
    }

    #[test]
    fn one_description_for_two_slots_and_a_formula_in_parentheses() {
        let t = read(
            "Calculate the mean and standard deviation of x. @mean_x[mean] @std_x[std] where \
             \"mean\" and \"std\" are numbers rounded to two decimal places.",
            &cols(&["x"]),
        );
        assert_eq!(t.slots[0].decimals, Some(2));
        assert_eq!(t.slots[1].decimals, Some(2));
        let t = read(
            "Calculate the coefficient of variation (standard deviation divided by the mean) \
             of x. @cv[value] where value is rounded to 4 decimal places.",
            &cols(&["x"]),
        );
        assert_eq!(t.question, "Calculate the coefficient of variation of x.");
        assert_eq!(
            t.method.sentences,
            ["standard deviation divided by the mean"]
        );
    }

    #[test]
    fn spanish_tickets_are_read_too() {
        let t = read(
            "¿Cuál es la media de la humedad (humidity_pct)? Redondee a dos decimales. \
             @media_humedad[valor] donde \"valor\" es un número redondeado a dos decimales.",
            &cols(&["humidity_pct"]),
        );
        assert_eq!(
            t.question,
            "¿Cuál es la media de la humedad (humidity_pct)?"
        );
        assert_eq!(t.slots[0].decimals, Some(2));
        assert_eq!(t.method.decimals, Some(2));
    }
}
