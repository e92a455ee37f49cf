//! A fresh start for a model stuck on its way to the files the task names. After
//! [`STALE_TURNS`] turns that wrote none of the missing outputs, ending on a failed
//! or repeated call (or [`LOST_TURNS`] turns whatever they ended on), the model's view
//! of the ask starts again after the app's first cell, with one note: what is written,
//! what is left, the last error. A small model copies its own history: in the issue-34
//! rounds a 1.5B model sent a failing line (`hour_of_week`, a column that does not
//! exist) through every note and fix for 15 turns, and the runs that finished were the
//! ones whose first cells went right. A view without the failed attempt is a new
//! first try with the kernel and the files it left.
//!
//! Only for step modes (a local model held to a schema, or read from text): a hosted
//! model reads its own mistakes and is not restarted. The transcript keeps every item;
//! only what the model is sent changes, and the start is announced as an event.

use std::borrow::Cow;

use crate::conversation::Item;
use crate::protocol::app_note;

/// Turns without a missing output written, the last one stuck, before a fresh start.
pub const STALE_TURNS: u32 = 6;
/// Turns without a missing output written before a fresh start however they ended.
pub const LOST_TURNS: u32 = 9;
/// Fresh starts in one ask.
pub const MAX_FRESH: u32 = 2;
/// A fresh start needs this many turns left to be worth it.
const MIN_TURNS_LEFT: u32 = 5;

/// The attempts of one ask.
#[derive(Debug, Default)]
pub struct Attempts {
    /// Where the model's own items of the ask begin (after the app's first cell).
    base: usize,
    /// Where the current attempt's items begin, and the note that opens it.
    current: Option<(usize, String)>,
    /// Fresh starts made in this ask.
    fresh: u32,
    /// The turn at which the attempt began or a missing output was last written.
    since: u32,
    /// The fewest named outputs missing so far (0 before the ask begins: nothing to do).
    fewest: usize,
}

impl Attempts {
    /// The ask's first attempt: the model's items begin at `base`.
    pub fn begin(base: usize, missing: usize) -> Attempts {
        Attempts {
            base,
            fewest: missing,
            ..Attempts::default()
        }
    }

    /// After a turn: `missing` named outputs are still missing or invalid.
    pub fn progress(&mut self, missing: usize, turn: u32) {
        if missing < self.fewest {
            self.fewest = missing;
            self.since = turn;
        }
    }

    /// Turns since the attempt began or a missing output was last written.
    pub fn stale(&self, turn: u32) -> u32 {
        turn.saturating_sub(self.since)
    }

    /// Whether the next turn should start afresh: outputs are missing, `stale` turns
    /// passed without one written and the model is `stuck` (its last call failed or
    /// came again), or more turns passed however they ended; and there are turns
    /// left to use it.
    pub fn due(&self, turn: u32, max_turns: u32, stuck: bool) -> bool {
        let stale = self.stale(turn);
        self.fewest > 0
            && self.fresh < MAX_FRESH
            && max_turns.saturating_sub(turn) >= MIN_TURNS_LEFT
            && (stale >= LOST_TURNS || stuck && stale >= STALE_TURNS)
    }

    /// Start afresh at item `at` (the next item the ask keeps), after `turn`: the
    /// model's view drops its items since the last start and opens with the note (the
    /// attempt's last exception, the checklist). Returns the new attempt's number (2 for
    /// the first fresh start) and the stale turns it gave up.
    pub fn start(
        &mut self,
        at: usize,
        turn: u32,
        error: Option<&str>,
        checklist: Option<&str>,
    ) -> (u32, u32) {
        let stale = self.stale(turn);
        self.fresh += 1;
        self.since = turn;
        let error = error
            .map(|e| format!(" (the last error: {e})"))
            .unwrap_or_default();
        let mut text = format!(
            "A fresh start: {stale} turns wrote none of the missing files{error}, so your cells after the app's first one are left out of what you see now \
             (the kernel still holds what they defined, and the files they wrote stay). \
             Begin again from the data as loaded, with the next missing file."
        );
        if let Some(line) = checklist {
            text.push(' ');
            text.push_str(line);
        }
        self.current = Some((at, app_note(&text)));
        (self.fresh + 1, stale)
    }

    /// What the model is sent of `items`: all of them, or, after a fresh start, those
    /// before the model's own items of the ask, the note, and the current attempt's.
    pub fn view<'a>(&self, items: &'a [Item]) -> Cow<'a, [Item]> {
        let Some((at, note)) = &self.current else {
            return Cow::Borrowed(items);
        };
        let (base, at) = (self.base.min(items.len()), (*at).min(items.len()));
        let mut view = items[..base].to_vec();
        view.push(Item::User { text: note.clone() });
        view.extend_from_slice(&items[at..]);
        Cow::Owned(view)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(t: &str) -> Item {
        Item::User { text: t.into() }
    }

    #[test]
    fn a_stuck_attempt_starts_afresh_and_progress_puts_it_off() {
        assert!(
            !Attempts::default().due(30, 40, true),
            "before the ask begins"
        );
        let mut a = Attempts::begin(2, 3);
        assert!(!a.due(5, 25, true), "five stale turns are not enough");
        assert!(a.due(6, 25, true), "six, the last stuck");
        assert!(!a.due(6, 25, false), "six that went on working");
        assert!(a.due(9, 25, false), "nine, however they ended");
        a.progress(2, 6);
        assert!(!a.due(11, 25, true), "a file was written at turn 6");
        a.progress(2, 11);
        assert!(a.due(12, 25, true), "the same count is no progress");
        assert!(!a.due(21, 25, true), "too few turns left");
        a.progress(0, 12);
        assert!(!a.due(20, 25, true), "nothing missing");
    }

    #[test]
    fn the_view_skips_the_given_up_attempt_and_keeps_its_count() {
        let items = vec![
            user("task"),
            user("prelude"),
            user("try 1"),
            user("try 1 again"),
        ];
        let mut a = Attempts::begin(2, 1);
        assert!(matches!(a.view(&items), Cow::Borrowed(_)));
        assert_eq!(
            a.start(4, 6, Some("KeyError: 'x'"), Some("[checklist] next")),
            (2, 6)
        );
        let mut items = items;
        items.push(user("try 2"));
        let view = a.view(&items);
        let texts: Vec<&str> = view
            .iter()
            .map(|i| match i {
                Item::User { text } => text.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(texts[..2], ["task", "prelude"]);
        assert!(
            texts[2].contains("A fresh start: 6 turns wrote none")
                && texts[2].contains("KeyError: 'x'")
        );
        assert!(texts[2].ends_with("[checklist] next"));
        assert_eq!(texts[3..], ["try 2"]);
        assert_eq!(a.start(5, 12, None, None), (3, 6));
        assert!(!a.due(24, 40, true), "at most two fresh starts");
    }
}
