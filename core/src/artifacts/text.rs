//! Text that the desktop shows as it is (file names, cells, messages): HTML escaping,
//! and display names that cannot lie about what they are.
//!
//! The names come from model-written code, so they may hold markup, control characters
//! or Unicode bidi overrides (`report\u{202E}gpj.exe` displays as `reportexe.jpg`).

/// Escape `&`, `<`, `>`, `"` and `'`, so the text is inert both between tags and inside
/// a quoted attribute value.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A file name as plain text that shows what it is: control characters (including
/// newlines and the line/paragraph separators) become U+FFFD so their presence is
/// visible, and invisible characters that reorder or hide text are removed.
/// The result is NOT escaped; use [`safe_display_name`] to put it into HTML.
pub fn display_name(name: &str) -> String {
    name.chars()
        .filter(|&c| !is_invisible_format(c))
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                char::REPLACEMENT_CHARACTER
            } else {
                c
            }
        })
        .collect()
}

/// [`display_name`], HTML-escaped: ready to be placed into HTML as text or as a quoted
/// attribute value.
pub fn safe_display_name(name: &str) -> String {
    escape_html(&display_name(name))
}

/// Characters that render as nothing but change how the rest is shown or read.
/// Zero-width joiner and non-joiner (U+200C, U+200D) are kept: scripts such as Persian
/// and emoji sequences need them, and they cannot reorder text.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'                  // soft hyphen
        | '\u{061C}'                // Arabic letter mark
        | '\u{180E}'                // Mongolian vowel separator
        | '\u{200B}'                // zero-width space
        | '\u{200E}'..='\u{200F}'   // left-to-right / right-to-left marks
        | '\u{202A}'..='\u{202E}'   // bidi embeddings and overrides
        | '\u{2060}'..='\u{2064}'   // word joiner, invisible operators
        | '\u{2066}'..='\u{2069}'   // bidi isolates
        | '\u{FEFF}'                // byte order mark / zero-width no-break space
        | '\u{FFF9}'..='\u{FFFB}'   // interlinear annotations
        | '\u{E0000}'..='\u{E007F}' // tag characters ("ASCII smuggling")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_the_five_characters() {
        assert_eq!(
            escape_html(r#"<a href="x" title='y'>&</a>"#),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
        );
        assert_eq!(escape_html("plain ü"), "plain ü");
    }

    #[test]
    fn bidi_override_cannot_hide_the_extension() {
        assert_eq!(display_name("report\u{202E}gpj.exe"), "reportgpj.exe");
        assert_eq!(display_name("a\u{2066}b\u{2069}\u{200F}.png"), "ab.png");
        assert_eq!(
            display_name("two\nlines\u{2028}x"),
            "two\u{FFFD}lines\u{FFFD}x"
        );
        assert_eq!(
            safe_display_name("<img src=x onerror=alert(1)>\u{202E}.csv"),
            "&lt;img src=x onerror=alert(1)&gt;.csv"
        );
        // Legitimate text survives.
        assert_eq!(display_name("résumé 📈 داده.csv"), "résumé 📈 داده.csv");
    }
}
