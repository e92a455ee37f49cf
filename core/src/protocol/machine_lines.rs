//! The offline analyst's machine lines, and how they are kept out of what a person sees.
//!
//! The analyst's scripts end by printing one line of JSON for its planner, behind a
//! tag (`SANDALYST_ANSWER {...}`, `SANDALYST_PROFILE {...}`, `SANDALYST_RESULT {...}`,
//! `SANDALYST_VALIDATION {...}`). The planner reads them from the observations in the
//! transcript, and a re-run's planner reads them there again, so the transcript keeps
//! them as printed. What front ends show (the live cell output, a reopened session's
//! cells, an exported notebook) goes through [`strip`] or a [`LineFilter`] instead.
//!
//! A machine line is narrow on purpose: a tag, one space and a JSON object or array,
//! alone on its line. Code that merely mentions a tag is untouched.
//!
//! ```
//! use sandalyst::protocol::machine_lines::strip;
//! let out = "Tuesday uses the most.\nSANDALYST_ANSWER {\"ok\": true}\n";
//! assert_eq!(strip(out), "Tuesday uses the most.\n");
//! ```

use std::borrow::Cow;

/// The tags the analyst's scripts print (`core/src/analyst/*.py`; a unit test checks
/// that none is missing).
pub const TAGS: &[&str] = &[
    "SANDALYST_ANSWER",
    "SANDALYST_PROFILE",
    "SANDALYST_RESULT",
    "SANDALYST_VALIDATION",
];

/// Whether `line` (without its newline) is a machine line.
pub fn is_machine_line(line: &str) -> bool {
    let t = line.trim_start();
    TAGS.iter().any(|tag| {
        t.strip_prefix(tag)
            .and_then(|rest| rest.strip_prefix(' '))
            .is_some_and(|json| json.trim_start().starts_with(['{', '[']))
    })
}

/// Whether the start of a line, `partial`, may still turn out to be a machine line
/// once the rest of it arrives.
fn may_become_machine_line(partial: &str) -> bool {
    let t = partial.trim_start();
    if is_machine_line(t) {
        return true;
    }
    TAGS.iter().any(|tag| {
        let head = format!("{tag} ");
        // Still writing the tag, or the tag and the space with no JSON yet.
        head.starts_with(t)
            || t.strip_prefix(head.as_str())
                .is_some_and(|r| r.trim().is_empty())
    })
}

/// `text` without its machine lines (each with its newline); the rest as it was.
pub fn strip(text: &str) -> Cow<'_, str> {
    if !TAGS.iter().any(|t| text.contains(t)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if !is_machine_line(line.trim_end_matches(['\n', '\r'])) {
            out.push_str(line);
        }
    }
    Cow::Owned(out)
}

/// [`strip`] for a stream that arrives in chunks cut anywhere (a cell's output as it
/// runs): the start of a line that may be a machine line is held back until the line
/// ends or proves to be something else; anything else passes at once.
#[derive(Debug, Default)]
pub struct LineFilter {
    /// The start of the current line, held back.
    held: String,
    /// The current line was already shown in part: the rest of it passes.
    shown_line: bool,
}

impl LineFilter {
    /// What of `chunk` can be shown now.
    pub fn push(&mut self, chunk: &str) -> String {
        let mut out = String::new();
        for piece in chunk.split_inclusive('\n') {
            let ends = piece.ends_with('\n');
            if self.shown_line {
                out.push_str(piece);
            } else {
                self.held.push_str(piece);
                if ends {
                    if !is_machine_line(self.held.trim_end_matches(['\n', '\r'])) {
                        out.push_str(&self.held);
                    }
                    self.held.clear();
                } else if !may_become_machine_line(&self.held) {
                    out.push_str(&self.held);
                    self.held.clear();
                    self.shown_line = true;
                }
            }
            if ends {
                self.shown_line = false;
            }
        }
        out
    }

    /// The stream ended: what was held back, unless it is a machine line.
    pub fn finish(&mut self) -> String {
        let held = std::mem::take(&mut self.held);
        self.shown_line = false;
        if is_machine_line(&held) {
            String::new()
        } else {
            held
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANSWER: &str =
        "SANDALYST_ANSWER {\"skill\": \"aggregate\", \"ok\": true, \"table\": [[1, 2]]}";

    #[test]
    fn strips_only_whole_machine_lines() {
        let out = format!("== weekday ==\nTuesday 77.3\n{ANSWER}\n");
        assert_eq!(strip(&out), "== weekday ==\nTuesday 77.3\n");
        let profile = "rows: 1344\n\nSANDALYST_PROFILE {\"rows\": 1344}";
        assert_eq!(strip(profile), "rows: 1344\n\n");
        assert_eq!(strip("  SANDALYST_RESULT [1]\r\nok\n"), "ok\n");
        // Mentions are not machine lines: code, prose, a tag without JSON.
        for kept in [
            "print(\"SANDALYST_ANSWER \" + json.dumps(answer))\n",
            "the SANDALYST_ANSWER {x} line\n",
            "SANDALYST_ANSWER\n",
            "SANDALYST_ANSWERS {\"a\": 1}\n",
            "SANDALYST_VALIDATION ok\n",
        ] {
            assert_eq!(strip(kept), kept);
        }
        assert!(matches!(strip("no tags here\n"), Cow::Borrowed(_)));
    }

    /// The stream's visible text is the same wherever the chunks are cut.
    #[test]
    fn a_stream_cut_anywhere_shows_what_strip_shows() {
        let text = format!(
            "Loading...\nSAND is not a tag\n{ANSWER}\n  SANDALYST_PROFILE {{\"rows\": 3}}\nx SANDALYST_RESULT {{}}\nlast line, no newline"
        );
        let want = strip(&text).into_owned();
        assert!(!want.contains("SANDALYST_ANSWER"));
        assert!(want.contains("x SANDALYST_RESULT {}"));
        for size in 1..=text.len() {
            let mut f = LineFilter::default();
            let mut got = String::new();
            let mut rest = text.as_str();
            while !rest.is_empty() {
                let mut cut = size.min(rest.len());
                while !rest.is_char_boundary(cut) {
                    cut += 1;
                }
                got.push_str(&f.push(&rest[..cut]));
                rest = &rest[cut..];
            }
            got.push_str(&f.finish());
            assert_eq!(got, want, "chunks of {size}");
        }
    }

    #[test]
    fn ordinary_output_is_not_held_back() {
        let mut f = LineFilter::default();
        assert_eq!(f.push("50% done"), "50% done");
        assert_eq!(f.push(" SANDALYST_ANSWER {}"), " SANDALYST_ANSWER {}");
        assert_eq!(f.push("\nSANDAL"), "\n");
        assert_eq!(f.push("WOOD\n"), "SANDALWOOD\n");
        assert_eq!(f.push("SANDALYST_ANSWER {\"ok\": tr"), "");
        assert_eq!(f.finish(), "");
    }

    /// Every tag the analyst's scripts print is one this module knows.
    #[test]
    fn every_tag_the_analyst_prints_is_known() {
        let scripts = [
            include_str!("../analyst/inspect.py"),
            include_str!("../analyst/analyse.py"),
            include_str!("../analyst/validate.py"),
            include_str!("../analyst/skills.py"),
        ];
        let mut printed = Vec::new();
        for s in scripts {
            for (at, _) in s.match_indices("\"SANDALYST_") {
                let tag: String = s[at + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                    .collect();
                // Only tags followed by the space a machine line has.
                if s[at + 1 + tag.len()..].starts_with(' ') {
                    printed.push(tag);
                }
            }
            for (at, _) in s.match_indices("\"\\nSANDALYST_") {
                let tag: String = s[at + 3..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                    .collect();
                printed.push(tag);
            }
        }
        assert!(printed.len() >= 4, "{printed:?}");
        for tag in &printed {
            assert!(
                TAGS.contains(&tag.as_str()),
                "{tag} is printed but not filtered"
            );
        }
    }
}
