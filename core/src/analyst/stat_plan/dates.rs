//! Times said in a request: calendar days, runs of months, years, and the words that
//! say them ("2020-06-01", "March 2020", "Q2", "the first half of 2019").

use super::words::digits;
use crate::analyst::lexicon::LEXICON;

/// A calendar day (proleptic Gregorian).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub(super) struct Day {
    y: i32,
    m: u32,
    d: u32,
}

impl Day {
    pub(super) fn iso(self) -> String {
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
pub(super) enum When {
    Day(Day),
    /// Months `lo..=hi`, of the year when said.
    Months(Option<i32>, u32, u32),
    Year(i32),
}

impl When {
    /// The first day it covers, and the first day after it (None: no year said).
    pub(super) fn span(self) -> Option<(Day, Day)> {
        match self {
            When::Day(d) => Some((d, d.next())),
            When::Months(Some(y), lo, hi) => Some((Day::first(y, lo), Day::first(y, hi + 1))),
            When::Months(None, _, _) => None,
            When::Year(y) => Some((Day::first(y, 1), Day::first(y + 1, 1))),
        }
    }
}

fn month_number(w: &str) -> Option<u32> {
    LEXICON.month_numbers.get(w).copied()
}

fn year_of(w: &str) -> Option<i32> {
    digits(w)
        .filter(|y| (1900.0..2100.0).contains(y) && y.fract() == 0.0)
        .map(|y| y as i32)
}

/// "YYYY-MM-DD" starting at `i` (not inside a longer run of digits).
pub(super) fn iso_day_at(chars: &[char], i: usize) -> Option<Day> {
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

/// The time said at `i` (articles skipped): "2020-06-01", "March", "March 2020",
/// "March 1, 2020", "1 de marzo de 2020", "2020", "Q2", "Q2 2020", "the second
/// quarter of 2020", "the first half of 2019", "el primer semestre de 2019"; with
/// the index just past its words.
pub(super) fn when_at(w: &[String], i: usize) -> Option<(When, usize)> {
    let mut i = i;
    while i < w.len() && LEXICON.articles.contains(&w[i].as_str()) {
        i += 1;
    }
    let x = w.get(i)?;
    let year_after = |k: usize| -> (Option<i32>, usize) {
        let mut j = k;
        if w.get(j)
            .is_some_and(|x| LEXICON.of_words.contains(&x.as_str()))
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
