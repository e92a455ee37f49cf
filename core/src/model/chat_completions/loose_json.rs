//! JSON as small models write it when they type a tool call into their text: the code
//! in Python triple quotes (`"""…"""`, `'''…'''`), strings in single quotes, trailing
//! commas, `True`/`False`/`None`. [`parse_prefix`] reads one such value from the start
//! of a text into a [`Value`], or gives up; strict JSON reads as serde_json reads it.
//!
//! A triple-quoted string is taken as the model meant it, code: its backslashes stay
//! as written (`print("a\nb")` keeps its `\n`), a first line break after the opening
//! quotes goes, and the common indentation of its lines goes (`textwrap.dedent`), so
//! code indented to sit inside the JSON runs at the top level. One that is never closed
//! (a small model writes the code and forgets the rest) runs to the end of the text,
//! and the objects and lists open around it count as closed there: that is the only
//! unfinished JSON read, so a reply cut off in the middle of a call is not run.

use serde_json::{Map, Number, Value};

/// How deep arrays and objects may nest: a call is two or three levels.
const MAX_DEPTH: usize = 32;

/// The value at the start of `text` (after white space) and the bytes it took,
/// white space before it included; `None` when it is not one.
pub fn parse_prefix(text: &str) -> Option<(Value, usize)> {
    let mut p = Parser {
        s: text,
        at: 0,
        open_code: false,
    };
    p.space();
    let v = p.value(0)?;
    Some((v, p.at))
}

/// The whole of `text` as one value (white space around it allowed).
pub fn parse(text: &str) -> Option<Value> {
    let (v, used) = parse_prefix(text)?;
    text[used..].trim().is_empty().then_some(v)
}

struct Parser<'a> {
    s: &'a str,
    at: usize,
    /// A triple-quoted string ran to the end of the text: what is open is closed.
    open_code: bool,
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.at..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, prefix: &str) -> bool {
        if self.rest().starts_with(prefix) {
            self.at += prefix.len();
            true
        } else {
            false
        }
    }

    /// The end of the text after code in triple quotes that were never closed.
    fn at_open_end(&self) -> bool {
        self.open_code && self.rest().trim().is_empty()
    }

    fn space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            '{' => self.object(depth),
            '[' => self.array(depth),
            '"' | '\'' => self.string().map(Value::String),
            c if c == '-' || c.is_ascii_digit() => self.number(),
            _ => {
                for (word, v) in [
                    ("true", Value::Bool(true)),
                    ("True", Value::Bool(true)),
                    ("false", Value::Bool(false)),
                    ("False", Value::Bool(false)),
                    ("null", Value::Null),
                    ("None", Value::Null),
                ] {
                    if self.eat(word) {
                        return Some(v);
                    }
                }
                None
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        self.bump(); // {
        let mut map = Map::new();
        loop {
            self.space();
            if self.eat("}") || self.at_open_end() {
                return Some(Value::Object(map));
            }
            let key = self.string()?;
            self.space();
            if !self.eat(":") {
                return None;
            }
            self.space();
            let v = self.value(depth + 1)?;
            map.insert(key, v);
            self.space();
            // A comma before the closing brace is allowed: `{"a": 1,}`.
            if !self.eat(",") && self.peek() != Some('}') && !self.at_open_end() {
                return None;
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        self.bump(); // [
        let mut list = Vec::new();
        loop {
            self.space();
            if self.eat("]") || self.at_open_end() {
                return Some(Value::Array(list));
            }
            list.push(self.value(depth + 1)?);
            self.space();
            if !self.eat(",") && self.peek() != Some(']') && !self.at_open_end() {
                return None;
            }
        }
    }

    fn number(&mut self) -> Option<Value> {
        let len = self
            .rest()
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')))
            .unwrap_or(self.rest().len());
        let n: Number = serde_json::from_str(&self.rest()[..len]).ok()?;
        self.at += len;
        Some(Value::Number(n))
    }

    fn string(&mut self) -> Option<String> {
        for triple in ["\"\"\"", "'''"] {
            if self.eat(triple) {
                let (body, used) = match self.rest().find(triple) {
                    Some(end) => (&self.rest()[..end], end + 3),
                    None => {
                        self.open_code = true;
                        (self.rest(), self.rest().len())
                    }
                };
                self.at += used;
                return Some(dedent(body.strip_prefix('\n').unwrap_or(body)));
            }
        }
        let quote = self.bump()?;
        if quote != '"' && quote != '\'' {
            return None;
        }
        let mut out = String::new();
        loop {
            match self.bump()? {
                c if c == quote => return Some(out),
                '\\' => match self.bump()? {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    '0' => out.push('\0'),
                    'u' => {
                        let hex = self.rest().get(..4)?;
                        let code = u32::from_str_radix(hex, 16).ok()?;
                        self.at += 4;
                        out.push(self.surrogate(code)?);
                    }
                    // `\"`, `\'`, `\\`, `\/`; any other escape keeps its backslash, as
                    // Python keeps it.
                    c @ ('"' | '\'' | '\\' | '/') => out.push(c),
                    c => {
                        out.push('\\');
                        out.push(c);
                    }
                },
                c => out.push(c),
            }
        }
    }

    /// A `\u` code, joined with the low half that follows a high surrogate.
    fn surrogate(&mut self, high: u32) -> Option<char> {
        if !(0xD800..0xDC00).contains(&high) {
            return char::from_u32(high);
        }
        let rest = self.rest().strip_prefix("\\u")?;
        let low = u32::from_str_radix(rest.get(..4)?, 16).ok()?;
        if !(0xDC00..0xE000).contains(&low) {
            return None;
        }
        self.at += 6;
        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    }
}

/// The lines of `s` without the indentation they all share (blank lines do not count).
pub fn dedent(s: &str) -> String {
    let indent = s
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    let mut out = String::with_capacity(s.len());
    for line in s.split_inclusive('\n') {
        let cut = indent.min(line.len() - line.trim_start_matches([' ', '\t']).len());
        out.push_str(&line[cut..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_json_reads_as_json() {
        let text = r#"{"name": "python", "arguments": {"code": "print(\"a\\nb\") \u00e9"}, "n": [1, -2.5e3, true, null]}"#;
        assert_eq!(parse(text), serde_json::from_str(text).ok());
    }

    #[test]
    fn python_spellings_are_read() {
        assert_eq!(
            parse("{'name': 'python', 'arguments': {'code': 'print(\\'hi\\')',},}"),
            Some(json!({"name": "python", "arguments": {"code": "print('hi')"}}))
        );
        assert_eq!(
            parse("[True, False, None,]"),
            Some(json!([true, false, null]))
        );
        let triple = "{\"code\": \"\"\"\n    import pandas as pd\n    if x:\n        print(\"a\\nb\")\n\"\"\"}";
        assert_eq!(
            parse(triple),
            Some(json!({"code": "import pandas as pd\nif x:\n    print(\"a\\nb\")\n"}))
        );
        assert_eq!(
            parse("{'code': '''x = 1'''}"),
            Some(json!({"code": "x = 1"}))
        );
    }

    #[test]
    fn a_prefix_is_read_and_junk_is_refused() {
        let (v, used) = parse_prefix("  {\"a\": 1} and more").unwrap();
        assert_eq!((v, used), (json!({"a": 1}), 10));
        assert_eq!(parse("{\"a\": 1} x"), None);
        assert_eq!(parse("{\"a\" 1}"), None);
        // Unfinished JSON is refused, but for code in triple quotes never closed.
        assert_eq!(parse("{\"a\": \"abc"), None);
        assert_eq!(parse("{\"a\": [1, 2"), None);
        assert_eq!(
            parse("{\"a\": {\"code\": \"\"\"\nprint(1)\n"),
            Some(json!({"a": {"code": "print(1)\n"}}))
        );
        assert_eq!(parse(&"[".repeat(100)), None);
        assert_eq!(parse("{a: 1}"), None);
    }
}
