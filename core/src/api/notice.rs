//! What the system notification says when an ask ends while the analyst is in another
//! window: whether there is one at all, its title, and the answer's first line.
//! The desktop shell asks [`ask_ended`] and shows what it returns; nothing else here.

use serde::Serialize;

use crate::protocol::RunStatus;

/// The longest body shown (notification servers cut long ones anyway, mid-word).
pub const MAX_BODY_CHARS: usize = 160;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Notice {
    pub title: String,
    pub body: String,
}

/// The notice for an ask that ended with `status` and `answer`, or none: none while the
/// window has the focus (the analyst sees it end), none for a stop (the analyst pressed
/// it) or an ask found interrupted (no ask ended just now).
pub fn ask_ended(focused: bool, status: &RunStatus, answer: Option<&str>) -> Option<Notice> {
    if focused {
        return None;
    }
    let title = match status {
        RunStatus::Finished => "The answer is ready",
        RunStatus::Incomplete { .. } => "The ask ended incomplete",
        RunStatus::MaxTurns { .. } | RunStatus::TimeLimit { .. } | RunStatus::CostLimit { .. } => {
            "The ask stopped at a limit"
        }
        RunStatus::Failed { .. } => "The ask failed",
        RunStatus::Cancelled | RunStatus::Interrupted => return None,
    };
    let body = answer
        .and_then(first_line)
        .unwrap_or_else(|| sentence(&status.to_string()));
    Some(Notice {
        title: title.to_string(),
        body: clip(&body),
    })
}

/// The first line of `text` with words in it, without the Markdown marks that start it
/// (headings, quotes, list bullets, emphasis), or none.
pub fn first_line(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let mut l = line.trim();
        loop {
            let before = l;
            l = l.trim_start_matches(['#', '>', '*', '_', '`']).trim_start();
            if let Some(rest) = l.strip_prefix("- ").or_else(|| l.strip_prefix("+ ")) {
                l = rest.trim_start();
            }
            if l == before {
                break;
            }
        }
        let l = l.trim_end_matches(['*', '_', '`', ' ', '#']);
        // A fence or a rule (``` or ---) has no words.
        l.chars()
            .any(char::is_alphanumeric)
            .then(|| l.replace("**", "").replace('`', ""))
    })
}

fn sentence(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() <= MAX_BODY_CHARS {
        return s.to_string();
    }
    let cut: String = s.chars().take(MAX_BODY_CHARS - 1).collect();
    // At a word's end where there is one near.
    let cut = match cut.rfind(' ') {
        Some(i) if i > MAX_BODY_CHARS / 2 => cut[..i].to_string(),
        _ => cut,
    };
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfocused_and_finished_gives_the_answers_first_line() {
        let answer = "\n## Found 3 abnormal events\n\nDetails follow.";
        let n = ask_ended(false, &RunStatus::Finished, Some(answer)).unwrap();
        assert_eq!(n.title, "The answer is ready");
        assert_eq!(n.body, "Found 3 abnormal events");
    }

    #[test]
    fn focused_or_stopped_gives_none() {
        assert_eq!(ask_ended(true, &RunStatus::Finished, Some("Done.")), None);
        assert_eq!(ask_ended(false, &RunStatus::Cancelled, Some("Done.")), None);
        assert_eq!(ask_ended(false, &RunStatus::Interrupted, None), None);
    }

    #[test]
    fn a_failure_without_answer_says_why() {
        let failed = RunStatus::Failed {
            message: "the engine is not reachable".into(),
        };
        let n = ask_ended(false, &failed, None).unwrap();
        assert_eq!(n.title, "The ask failed");
        assert_eq!(n.body, "Failed: the engine is not reachable");
        let limit = RunStatus::MaxTurns {
            turns: 25,
            missing: vec![],
        };
        let n = ask_ended(false, &limit, Some("   \n")).unwrap();
        assert_eq!(n.title, "The ask stopped at a limit");
        assert_eq!(n.body, "Stopped: reached the limit of 25 turns");
    }

    #[test]
    fn markdown_marks_and_long_lines() {
        assert_eq!(
            first_line("```\n---\n> **Peak** at `14:00`").as_deref(),
            Some("Peak at 14:00")
        );
        assert_eq!(first_line("- 1. item").as_deref(), Some("1. item"));
        assert_eq!(first_line("\n\n"), None);
        let long = "word ".repeat(100);
        let n = ask_ended(false, &RunStatus::Finished, Some(&long)).unwrap();
        assert!(n.body.chars().count() <= MAX_BODY_CHARS, "{}", n.body);
        assert!(n.body.ends_with("word…"), "{}", n.body);
    }
}
