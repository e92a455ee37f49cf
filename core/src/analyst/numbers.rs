//! Numbers as the answers write them.

use serde_json::Value;

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
