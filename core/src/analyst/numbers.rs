//! Numbers as the answers write them.

use serde_json::Value;

use super::request::Lang;

pub(super) fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

/// A number as a person would write it: 3 significant digits or so, no trailing zeros.
pub(super) fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "?".into();
    }
    let a = x.abs();
    let decimals = if a >= 100.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{x:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// A number written with a dot, as the answer's language writes it: Spanish writes a
/// decimal comma and, from five digits on, groups of three separated by a non-breaking
/// space ("12\u{a0}345,5"), as the RAE recommends. The same rule as `local_num` of
/// the skills' Python.
pub(super) fn local(s: &str, lang: Lang) -> String {
    if lang != Lang::Es {
        return s.to_string();
    }
    let (sign, rest) = match s.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", s),
    };
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    if digits_end == 0 {
        return s.to_string();
    }
    let (int, tail) = rest.split_at(digits_end);
    let int = if int.len() >= 5 {
        let head = match int.len() % 3 {
            0 => 3,
            h => h,
        };
        let mut parts = vec![&int[..head]];
        parts.extend((head..int.len()).step_by(3).map(|i| &int[i..i + 3]));
        parts.join("\u{a0}")
    } else {
        int.to_string()
    };
    let tail = match tail.strip_prefix('.') {
        Some(f) if f.starts_with(|c: char| c.is_ascii_digit()) => format!(",{f}"),
        _ => tail.to_string(),
    };
    format!("{sign}{int}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spanish_numbers_have_a_decimal_comma_and_grouped_thousands() {
        assert_eq!(local("12.5", Lang::Es), "12,5");
        assert_eq!(local("-1234.25", Lang::Es), "-1234,25");
        assert_eq!(local("1234567.5", Lang::Es), "1\u{a0}234\u{a0}567,5");
        assert_eq!(local("12345", Lang::Es), "12\u{a0}345");
        assert_eq!(local("12.5", Lang::En), "12.5");
        assert_eq!(local("?", Lang::Es), "?");
    }
}
