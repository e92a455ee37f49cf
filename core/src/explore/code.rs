//! A view in words ("Rows of input/orders.csv where region is Centro or Norte ...") and
//! as pandas code that keeps exactly the view's rows in its order.
//!
//! The code reads a CSV file or a sheet as text (`dtype=str`), as the explorer does,
//! and converts a column where it is compared: `pd.to_numeric` for numbers (after
//! turning decimal commas into points), `pd.to_datetime(format="ISO8601", utc=True)`
//! for dates, which is how the explorer reads them too (a time without a zone as UTC).
//! Parquet and JSON keep their types; their non-text cells are compared in the text the
//! explorer shows (`as_text`). Every name and value is a Python string literal written
//! by [`py_str`], so quotes, backslashes and line breaks in them stay data.

use serde::Serialize;

use super::cell::{self, Kind};
use super::filter::instant_bound;
use super::source::{Format, Profile, Table};
use super::spec::{bound_number, FilterOp, ViewSpec};
use crate::artifacts::thousands;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Code {
    pub sentence: String,
    pub pandas: String,
}

/// `s` as a Python string literal in double quotes.
pub fn py_str(s: &str) -> String {
    py_literal(s, '"')
}

/// `s` as a Python string literal between `quote`s (`"` or `'`).
pub fn py_literal(s: &str, quote: char) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            // Line and paragraph separators are fine in a literal, but shown escaped
            // so the code reads as one line per statement.
            '\u{2028}' | '\u{2029}' | '\u{85}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A float as a Python literal.
fn py_num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n:?}")
    }
}

struct Writer<'a> {
    t: &'a Table,
    p: &'a Profile,
    needs_as_text: bool,
}

impl Writer<'_> {
    /// The column `c` of frame `df`: by name when the name is unambiguous, else by
    /// position (pandas renames repeated and empty headers).
    fn col(&self, df: &str, c: usize) -> String {
        let name = &self.t.headers[c];
        let unique = self.t.headers.iter().filter(|h| *h == name).count() == 1;
        let renamed = match self.t.format {
            Format::Csv | Format::Tsv => name.is_empty(),
            // A workbook's header cell that is a number is a number in pandas.
            Format::Sheet => name.is_empty() || cell::number(name.as_bytes(), false).is_some(),
            _ => false,
        };
        if unique && !renamed {
            format!("{df}[{}]", py_str(name))
        } else {
            format!("{df}[{df}.columns[{c}]]")
        }
    }

    fn label(&self, c: usize) -> String {
        self.t.headers[c].clone()
    }

    fn kind(&self, c: usize) -> Kind {
        self.p.kinds.get(c).copied().unwrap_or(Kind::Text)
    }

    fn read_as_text(&self) -> bool {
        matches!(self.t.format, Format::Csv | Format::Tsv | Format::Sheet)
    }

    fn num(&self, s: &str) -> String {
        if !self.read_as_text() {
            return format!("pd.to_numeric({s})");
        }
        if self.t.decimal_comma {
            format!("pd.to_numeric({s}.str.strip().str.replace(\",\", \".\", regex=False))")
        } else {
            format!("pd.to_numeric({s}.str.strip())")
        }
    }

    fn time(&self, s: &str) -> String {
        format!("pd.to_datetime({s}, format=\"ISO8601\", utc=True)")
    }

    /// The column as the text the explorer shows.
    fn text(&mut self, s: &str, c: usize) -> String {
        let as_is = match self.t.format {
            Format::Csv | Format::Tsv | Format::Sheet => true,
            Format::Parquet => self.kind(c) == Kind::Text || self.kind(c) == Kind::Empty,
            Format::Json | Format::Jsonl => false,
        };
        if as_is {
            s.to_string()
        } else {
            self.needs_as_text = true;
            format!("{s}.map(as_text, na_action=\"ignore\")")
        }
    }

    fn timestamp(b: &str, upper: bool) -> Option<String> {
        let (t, open) = instant_bound(b, upper)?;
        let has_zone = {
            let tail = b.trim().get(10..).unwrap_or("");
            tail.ends_with('Z')
                || tail
                    .get(1..)
                    .is_some_and(|r| r.contains('+') || r.contains('-'))
        };
        let lit = if open {
            // The day after a date given as the upper bound.
            py_str(&cell::iso_date((t / 86_400.0).floor() as i64))
        } else {
            py_str(b.trim())
        };
        Some(if has_zone && !open {
            format!("pd.Timestamp({lit})")
        } else {
            format!("pd.Timestamp({lit}, tz=\"UTC\")")
        })
    }

    /// One filter as a boolean Series over `df`, and in words.
    fn condition(&mut self, f: &super::spec::Filter) -> (String, String, bool) {
        let c = f.column;
        let s = self.col("df", c);
        let kind = self.kind(c);
        let name = self.label(c);
        // (code, words, whether the code needs parentheses to be combined with &)
        match &f.op {
            FilterOp::Missing => (format!("{s}.isna()"), format!("{name} is missing"), false),
            FilterOp::NotMissing => (
                format!("{s}.notna()"),
                format!("{name} is not missing"),
                false,
            ),
            FilterOp::Contains { text } => (
                format!(
                    "{}.str.contains({}, case=False, regex=False, na=False)",
                    self.text(&s, c),
                    py_str(text)
                ),
                format!("{name} contains {text:?}"),
                false,
            ),
            FilterOp::Values { values } => {
                let missing = values.iter().any(|v| v.is_empty());
                let shown: Vec<&str> = values
                    .iter()
                    .filter(|v| !v.is_empty())
                    .map(String::as_str)
                    .collect();
                let test = if kind.is_numeric() {
                    let nums: Vec<String> = shown
                        .iter()
                        .filter_map(|v| bound_number(v, self.t.decimal_comma))
                        .map(py_num)
                        .collect();
                    format!("{}.isin([{}])", self.num(&s), nums.join(", "))
                } else if kind.is_temporal() {
                    let lits: Vec<String> = shown
                        .iter()
                        .filter(|v| cell::instant(v.as_bytes()).is_some())
                        .map(|v| py_str(v))
                        .collect();
                    format!(
                        "{}.isin(pd.to_datetime([{}], format=\"ISO8601\", utc=True))",
                        self.time(&s),
                        lits.join(", ")
                    )
                } else {
                    let lits: Vec<String> = shown.iter().map(|v| py_str(v)).collect();
                    format!("{}.isin([{}])", self.text(&s, c), lits.join(", "))
                };
                let mut words: Vec<String> = shown.iter().take(5).map(|v| v.to_string()).collect();
                if shown.len() > 5 {
                    words = vec![format!("one of {} values", shown.len())];
                }
                if missing {
                    words.push("missing".into());
                }
                let words = format!("{name} is {}", join_or(&words));
                match (missing, shown.is_empty()) {
                    (true, true) => (format!("{s}.isna()"), words, false),
                    (true, false) => (format!("{test} | {s}.isna()"), words, true),
                    _ => (test, words, false),
                }
            }
            FilterOp::Range { min, max } => {
                let (lo, hi) = (min.as_deref(), max.as_deref());
                let words = match (lo, hi) {
                    (Some(a), Some(b)) => format!("{name} is between {a} and {b}"),
                    (Some(a), None) => format!("{name} is at least {a}"),
                    (None, Some(b)) => format!("{name} is at most {b}"),
                    (None, None) => name.clone(),
                };
                if kind.is_numeric() {
                    let n = self.num(&s);
                    let lo = lo
                        .and_then(|b| bound_number(b, self.t.decimal_comma))
                        .map(py_num);
                    let hi = hi
                        .and_then(|b| bound_number(b, self.t.decimal_comma))
                        .map(py_num);
                    match (lo, hi) {
                        (Some(a), Some(b)) => (format!("{n}.between({a}, {b})"), words, false),
                        (Some(a), None) => (format!("{n} >= {a}"), words, true),
                        (None, Some(b)) => (format!("{n} <= {b}"), words, true),
                        (None, None) => (format!("{s}.notna()"), words, false),
                    }
                } else if kind.is_temporal() {
                    let t = self.time(&s);
                    let mut parts = Vec::new();
                    if let Some(a) = lo.and_then(|b| Self::timestamp(b, false)) {
                        parts.push(format!("({t} >= {a})"));
                    }
                    if let Some(b) = hi {
                        let open = instant_bound(b, true).is_some_and(|x| x.1);
                        if let Some(lit) = Self::timestamp(b, true) {
                            parts.push(format!("({t} {} {lit})", if open { "<" } else { "<=" }));
                        }
                    }
                    (parts.join(" & "), words, true)
                } else {
                    let x = self.text(&s, c);
                    let mut parts = Vec::new();
                    if let Some(a) = lo {
                        parts.push(format!("({x} >= {})", py_str(a)));
                    }
                    if let Some(b) = hi {
                        parts.push(format!("({x} <= {})", py_str(b)));
                    }
                    (parts.join(" & "), words, true)
                }
            }
        }
    }
}

fn join_or(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [a] => a.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// The sentence and the code of `view` over table `t`, which keeps `kept` rows.
pub fn write(t: &Table, p: &Profile, python_path: &str, view: &ViewSpec, kept: usize) -> Code {
    let mut w = Writer {
        t,
        p,
        needs_as_text: false,
    };
    let path = py_str(python_path);
    let read = match t.format {
        Format::Csv | Format::Tsv => {
            let mut args = vec![path.clone()];
            match t.delimiter {
                Some(',') | None => {}
                Some(d) => args.push(format!("sep={}", py_str(&d.to_string()))),
            }
            args.push("dtype=str".into());
            if p.non_utf8 {
                args.push("encoding_errors=\"replace\"".into());
            }
            if p.long_rows {
                // Rows longer than the header: the explorer keeps the header's columns.
                args.push("index_col=False".into());
                args.push("engine=\"python\"".into());
                args.push(format!(
                    "on_bad_lines=lambda cells: cells[:{}]",
                    t.headers.len()
                ));
            }
            format!("df = pd.read_csv({})", args.join(", "))
        }
        Format::Sheet => format!(
            "df = pd.read_excel({path}, sheet_name={}, dtype=str)",
            py_str(t.sheet.as_deref().unwrap_or_default())
        ),
        Format::Parquet => format!("df = pd.read_parquet({path})"),
        Format::Json => format!(
            "df = pd.read_json({path}, dtype=False, convert_dates=False, precise_float=True)"
        ),
        Format::Jsonl => {
            format!("df = pd.read_json({path}, lines=True, dtype=False, convert_dates=False, precise_float=True)")
        }
    };
    let mut lines = Vec::new();
    if w.read_as_text() {
        lines.push(
            "# Every column is read as text, as the explorer reads it; numbers and dates are"
                .to_string(),
        );
        lines.push("# converted where they are compared.".to_string());
    }
    lines.push(read);
    if p.blank_cells && t.format.is_text() {
        lines.push("# Cells of only spaces are missing, as in the explorer.".into());
        lines.push("df = df.replace(r\"^[ \\t\\n\\f\\r]+$\", float(\"nan\"), regex=True)".into());
    }
    let mut words = Vec::new();
    let mut conds = Vec::new();
    for f in &view.filters {
        let (code, said, compound) = w.condition(f);
        words.push(said);
        conds.push(if compound && view.filters.len() > 1 {
            format!("({code})")
        } else {
            code
        });
    }
    match conds.len() {
        0 => lines.push("view = df".into()),
        _ => {
            let one = format!("view = df[{}]", conds.join(" & "));
            if one.len() <= 100 {
                lines.push(one);
            } else {
                lines.push("view = df[".into());
                for (i, c) in conds.iter().enumerate() {
                    lines.push(format!("    {}{c}", if i == 0 { "" } else { "& " }));
                }
                lines.push("]".into());
            }
        }
    }
    let mut sort_words = Vec::new();
    if !view.sort.is_empty() {
        let by: Vec<String> = view
            .sort
            .iter()
            .map(|s| {
                let col = w.col("view", s.column);
                // `view["x"]` names the column; `view[view.columns[2]]` its position.
                match col.strip_prefix("view[").and_then(|c| c.strip_suffix(']')) {
                    Some(inner) => inner.to_string(),
                    None => col,
                }
            })
            .collect();
        let asc: Vec<&str> = view
            .sort
            .iter()
            .map(|s| if s.descending { "False" } else { "True" })
            .collect();
        let mut keys = Vec::new();
        for s in &view.sort {
            let k = w.kind(s.column);
            let name = py_str(&t.headers[s.column]);
            let conv = if k.is_numeric() {
                Some(w.num("s"))
            } else if k.is_temporal() {
                Some(w.time("s"))
            } else {
                let x = w.text("s", s.column);
                (x != "s").then_some(x)
            };
            if let Some(conv) = conv {
                let entry = format!("    {name}: lambda s: {conv},");
                if !keys.contains(&entry) {
                    keys.push(entry);
                }
            }
            sort_words.push(format!(
                "{} ({})",
                t.headers[s.column],
                if s.descending {
                    "descending"
                } else {
                    "ascending"
                }
            ));
        }
        let key = if keys.is_empty() {
            String::new()
        } else {
            lines.push(
                "# Numbers sort by value and dates by instant; text by its characters.".into(),
            );
            lines.push("keys = {".into());
            lines.extend(keys);
            lines.push("}".into());
            ", key=lambda s: keys.get(s.name, lambda s: s)(s)".into()
        };
        lines.push(format!(
            "view = view.sort_values([{}], ascending=[{}], kind=\"stable\", na_position=\"last\"{key})",
            by.join(", "),
            asc.join(", ")
        ));
    }
    lines.push("view".into());
    let mut head = vec!["import pandas as pd".to_string()];
    if w.needs_as_text {
        head.push("import json".into());
        head.push(String::new());
        head.push(String::new());
        head.push("def as_text(v):".into());
        head.push(
            "    # A cell as the explorer shows it: text as is, other values as JSON writes them."
                .into(),
        );
        head.push("    if isinstance(v, str):".into());
        head.push("        return v".into());
        head.push("    if hasattr(v, \"item\"):".into());
        head.push("        v = v.item()".into());
        head.push("    if isinstance(v, (bool, int, float, list, dict)):".into());
        head.push(
            "        return json.dumps(v, ensure_ascii=False, separators=(\",\", \":\"))".into(),
        );
        head.push("    return str(v)".into());
        head.push(String::new());
    }
    head.push(String::new());
    let pandas = format!("{}\n{}", head.join("\n"), lines.join("\n"));
    let mut sentence = if words.is_empty() {
        format!("Rows of {python_path}")
    } else {
        format!("Rows of {python_path} where {}", words.join(" and "))
    };
    if !sort_words.is_empty() {
        sentence.push_str(&format!(", sorted by {}", sort_words.join(" then ")));
    }
    sentence.push_str(&format!(
        ": {} of {} rows.",
        thousands(kept as u64),
        thousands(t.total_rows as u64)
    ));
    Code { sentence, pandas }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_literals_keep_quotes_backslashes_and_breaks_as_data() {
        assert_eq!(py_str("a\"b\\c\nd\té"), "\"a\\\"b\\\\c\\nd\\té\"");
        assert_eq!(py_str("\u{1}"), "\"\\x01\"");
        assert_eq!(py_literal("a'b\"", '\''), "'a\\'b\"'");
        assert_eq!(py_num(10.0), "10");
        assert_eq!(py_num(2.5), "2.5");
        assert_eq!(py_num(-1e20), "-1e20");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(join_or(&["a".into(), "b".into(), "c".into()]), "a, b or c");
    }
}
