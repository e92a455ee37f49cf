//! Text made safe to print on a terminal, or to write into a file that someone may
//! `cat`: file names, model text and cell outputs come from model-written code and may
//! hold escape sequences (clear the screen, OSC 8 links that lie about their target,
//! OSC 52 writes to the clipboard) or bidi overrides that reorder what is shown.
//!
//! Control characters become visible escapes (`\x1b`, `\x7f`, `\u{9b}`), so the text
//! still says what was there and nothing reaches the terminal that it would act on.
//! The backslash itself is left alone: a name that spells `\x1b` is harmless.

use std::borrow::Cow;

/// One line: every control character is escaped, `\n` and `\t` included.
pub fn escape(s: &str) -> Cow<'_, str> {
    escape_with(s, false)
}

/// Multi-line text (model text, cell output): like [`escape`], but `\n`, `\t` and a
/// `\r` that ends a line (`\r\n`) are kept.
pub fn escape_lines(s: &str) -> Cow<'_, str> {
    escape_with(s, true)
}

fn escape_with(s: &str, lines: bool) -> Cow<'_, str> {
    let keep = |c: char, next: Option<char>| {
        lines && (c == '\n' || c == '\t' || (c == '\r' && next == Some('\n')))
    };
    let mut chars = s.chars().peekable();
    let mut first_bad = None;
    let mut at = 0;
    while let Some(c) = chars.next() {
        if needs_escape(c) && !keep(c, chars.peek().copied()) {
            first_bad = Some(at);
            break;
        }
        at += c.len_utf8();
    }
    let Some(start) = first_bad else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..start]);
    let mut chars = s[start..].chars().peekable();
    while let Some(c) = chars.next() {
        if !needs_escape(c) || keep(c, chars.peek().copied()) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

/// C0 and C1 controls, DEL, the line and paragraph separators, and the invisible
/// characters that reorder text (bidi embeddings, overrides, isolates and marks).
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{2028}' | '\u{2029}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_visible_text() {
        // Clear screen, an OSC 8 link, an OSC 52 clipboard write, an 8-bit CSI, DEL.
        assert_eq!(escape("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(
            escape("\x1b]8;;http://x\x1b\\y\x1b]8;;\x07"),
            "\\x1b]8;;http://x\\x1b\\y\\x1b]8;;\\x07"
        );
        assert_eq!(escape("\x1b]52;c;ZXZpbA==\x07"), "\\x1b]52;c;ZXZpbA==\\x07");
        assert_eq!(escape("x\u{9b}31m\u{7f}"), "x\\u{9b}31m\\x7f");
        assert_eq!(escape("report\u{202E}gpj.exe"), "report\\u{202e}gpj.exe");
        assert_eq!(escape("two\nlines\tx\r"), "two\\x0alines\\x09x\\x0d");
        assert!(matches!(
            escape("plain résumé 📈 داده.csv"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn multi_line_text_keeps_its_lines() {
        assert_eq!(escape_lines("a\n\tb\r\nc"), "a\n\tb\r\nc");
        assert_eq!(escape_lines("ok\rFAILED\n\x1bc"), "ok\\x0dFAILED\n\\x1bc");
        assert_eq!(escape_lines("\u{2028}\0"), "\\u{2028}\\x00");
    }
}
