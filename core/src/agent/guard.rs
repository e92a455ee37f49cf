//! Whether an ask goes on, decided in one place: the counters of one ask and their
//! policies. The turn and spend limits; how often a named output still missing is
//! reminded of; how often a reply holding a call no one could read is told so; how
//! many replies in a row may pass a cap; how often the same call came again. The loop
//! ([`super::Agent`]) asks; the guard answers go on, tell the model, or end.

use crate::model::caps::{Capped, Cut};
use crate::protocol::RunStatus;

use super::Limits;

/// How many times one ask reminds the model of named outputs that are missing or
/// invalid before it ends `Incomplete`.
pub const MAX_REMINDERS: u32 = 2;
/// How many replies of one ask that hold a call no one could read are told "nothing
/// was run" instead of being taken for the answer.
pub const MAX_NUDGES: u32 = 2;
/// Replies in a row cut as loops before the ask stops.
pub const MAX_LOOPS: u32 = 3;
/// Replies in a row cut at a size cap before the ask stops.
pub const MAX_CUTS: u32 = 2;
/// How many calls back a call that comes again (or fails again) is recognised.
const CALL_MEMORY: usize = 8;

/// Put `call` last in `calls` (once), keeping the newest [`CALL_MEMORY`].
fn remember(calls: &mut Vec<(String, String)>, call: (String, String)) {
    calls.retain(|c| *c != call);
    calls.push(call);
    if calls.len() > CALL_MEMORY {
        calls.remove(0);
    }
}

/// The counters of one ask.
#[derive(Debug, Default)]
pub struct Guard {
    /// Reminders of the named outputs still missing or invalid.
    reminders: u32,
    /// Replies with a call that could not be read, told to the model.
    nudges: u32,
    /// Replies in a row that passed a cap ([`crate::model::caps`]).
    cuts: u32,
    /// The last call run (tool and code), and how many times in a row it came again
    /// (a reply cut as a loop counts too: the next turn is sampled warmer).
    last_call: Option<(String, String)>,
    repeats: u32,
    /// The last failed calls (tool and code), newest last.
    failed: Vec<(String, String)>,
    /// The last calls run (tool and code), newest last, and how many calls in a row
    /// were one of them again: a model can cycle through two calls (a 1.5B model ran
    /// a chart cell and a failing shell line by turns, 24 turns, its file written).
    recent: Vec<(String, String)>,
    cycle: u32,
}

impl Guard {
    /// The turn and spend limits, checked before each turn (the time limit interrupts
    /// the turn it runs out in): the status that ends the ask, if one is reached.
    pub fn limit(&self, turns: u32, limits: &Limits, spent: Option<f64>) -> Option<RunStatus> {
        if turns >= limits.max_turns {
            return Some(RunStatus::MaxTurns {
                turns,
                missing: vec![],
            });
        }
        let (max, spent) = (limits.max_cost_usd?, spent?);
        (spent >= max).then_some(RunStatus::CostLimit {
            usd: max,
            missing: vec![],
        })
    }

    /// A reply that passed a cap: `Err` with the sentence that ends the ask when it is
    /// one too many in a row (the model keeps running away), else the model is told.
    pub fn cut(&mut self, cut: Cut) -> Result<(), String> {
        self.cuts += 1;
        let looped = cut.what == Capped::Repetition;
        if looped {
            self.repeats += 1;
        }
        if looped && self.cuts >= MAX_LOOPS {
            return Err(format!(
                "the model's replies fell into a loop {MAX_LOOPS} times in a row (the last: {}); the ask stops",
                cut.describe()
            ));
        }
        if !looped && self.cuts >= MAX_CUTS {
            return Err(format!(
                "the model's replies passed the app's size limit twice in a row (the last: {}); the ask stops",
                cut.describe()
            ));
        }
        Ok(())
    }

    /// A reply that passed no cap: the run of cut ones is over.
    pub fn whole(&mut self) {
        self.cuts = 0;
    }

    /// Whether a reply that looks like it meant a call (`why`) is told so, or taken
    /// for the answer (after [`MAX_NUDGES`] of them).
    pub fn nudge(&mut self, why: Option<String>) -> Option<String> {
        if self.nudges >= MAX_NUDGES {
            return None;
        }
        let why = why?;
        self.nudges += 1;
        Some(why)
    }

    /// Whether an answer with named outputs still wrong gets a reminder (`Some(last)`,
    /// `last` for the final one), or ends the ask `Incomplete` (`None`).
    pub fn remind(&mut self) -> Option<bool> {
        if self.reminders >= MAX_REMINDERS {
            return None;
        }
        self.reminders += 1;
        Some(self.reminders == MAX_REMINDERS)
    }

    /// Whether the model was reminded of its outputs in this ask.
    pub fn reminded(&self) -> bool {
        self.reminders > 0
    }

    /// A call that ran: how many times in a row before it the same one came (0: new).
    pub fn ran(&mut self, tool: &str, source: String) -> u32 {
        let this = (tool.to_string(), source);
        self.repeats = if self.last_call.as_ref() == Some(&this) {
            self.repeats + 1
        } else {
            0
        };
        self.cycle = if self.recent.contains(&this) {
            self.cycle + 1
        } else {
            0
        };
        remember(&mut self.recent, this.clone());
        self.last_call = Some(this);
        self.repeats
    }

    /// Whether the last call was one of the recent ones again, not the one just
    /// before it (that is a repeat): the model goes round in a cycle.
    pub fn cycled(&self) -> bool {
        self.cycle > 0 && self.repeats == 0
    }

    /// A call that ran and `failed`: whether the same call failed before, not just
    /// the one before it (a small model can alternate two failing cells: one that
    /// defines a name with a wrong function, one that uses the name). Such a call
    /// counts as stuck, like a repeat.
    pub fn failed_again(&mut self, tool: &str, source: String, failed: bool) -> bool {
        if !failed {
            return false;
        }
        let this = (tool.to_string(), source);
        let again = self.failed.contains(&this);
        if again && self.repeats == 0 {
            self.repeats = 1;
        }
        remember(&mut self.failed, this);
        again
    }

    /// How stuck the model is: the same call, or loops, in a row; or calls in a row
    /// that each came before (two calls by turns count from their second round).
    pub fn repeats(&self) -> u32 {
        self.repeats.max(self.cycle.saturating_sub(1))
    }

    /// A fresh start ([`super::attempt`]): the calls of the attempt given up are out
    /// of the model's view, so none of them counts as repeated or failed before.
    /// Reminders and nudges stay counted for the ask.
    pub fn fresh(&mut self) {
        self.repeats = 0;
        self.cuts = 0;
        self.last_call = None;
        self.failed.clear();
        self.recent.clear();
        self.cycle = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_calls_by_turns_count_as_stuck_from_their_second_round() {
        let mut g = Guard::default();
        let (a, b) = ("plot()".to_string(), "show()".to_string());
        let mut seen = Vec::new();
        for code in [&a, &b, &a, &b, &a] {
            g.ran("python", code.clone());
            seen.push((g.cycled(), g.repeats()));
        }
        assert_eq!(
            seen,
            [(false, 0), (false, 0), (true, 0), (true, 1), (true, 2)]
        );
        // A new call ends the cycle; the same call twice is a repeat, not a cycle.
        g.ran("python", "new()".into());
        assert_eq!((g.cycled(), g.repeats()), (false, 0));
        g.ran("python", "new()".into());
        assert_eq!((g.cycled(), g.repeats()), (false, 1));
        g.fresh();
        g.ran("python", a.clone());
        assert_eq!((g.cycled(), g.repeats()), (false, 0));
    }

    #[test]
    fn a_cell_that_fails_again_after_another_counts_as_stuck() {
        let mut g = Guard::default();
        let (a, b) = ("x = f(y)".to_string(), "print(x)".to_string());
        for (code, ran) in [(&a, true), (&b, true)] {
            assert_eq!(g.ran("python", code.clone()), 0);
            assert!(!g.failed_again("python", code.clone(), ran));
        }
        // A again, failing the same way: not a repeat in a row, but stuck.
        assert_eq!(g.ran("python", a.clone()), 0);
        assert!(g.failed_again("python", a.clone(), true));
        assert_eq!(g.repeats(), 1);
        // A call that worked is never "failed again".
        assert!(!g.failed_again("python", b.clone(), false));
        // A new call starts over.
        assert_eq!(g.ran("python", "print(2)".into()), 0);
        assert_eq!(g.repeats(), 0);
    }

    #[test]
    fn cuts_in_a_row_end_the_ask_and_a_whole_reply_starts_again() {
        let size = Cut {
            what: Capped::Text,
            cap: 1 << 20,
        };
        let mut g = Guard::default();
        assert!(g.cut(size).is_ok());
        g.whole();
        assert!(g.cut(size).is_ok());
        let e = g.cut(size).unwrap_err();
        assert!(e.contains("twice in a row"), "{e}");
        let looped = Cut {
            what: Capped::Repetition,
            cap: 14,
        };
        let mut g = Guard::default();
        assert!(g.cut(looped).is_ok() && g.cut(looped).is_ok());
        assert_eq!(g.repeats(), 2, "a loop counts as stuck");
        assert!(g.cut(looped).unwrap_err().contains("loop 3 times"));
    }

    #[test]
    fn nudges_reminders_and_repeats_each_have_their_bound() {
        let mut g = Guard::default();
        assert_eq!(g.nudge(None), None, "nothing to tell: not counted");
        assert_eq!(g.nudge(Some("a".into())).as_deref(), Some("a"));
        assert_eq!(g.nudge(Some("b".into())).as_deref(), Some("b"));
        assert_eq!(g.nudge(Some("c".into())), None, "then it is the answer");
        assert!(!g.reminded());
        assert_eq!(
            (g.remind(), g.remind(), g.remind()),
            (Some(false), Some(true), None)
        );
        assert!(g.reminded());
        assert_eq!(g.ran("python", "print(1)".into()), 0);
        assert_eq!(g.ran("python", "print(1)".into()), 1);
        assert_eq!(g.ran("shell", "print(1)".into()), 0);
        let limits = Limits {
            max_turns: 2,
            max_cost_usd: Some(1.0),
            ..Limits::default()
        };
        assert_eq!(g.limit(1, &limits, Some(0.5)), None);
        assert!(matches!(
            g.limit(2, &limits, None),
            Some(RunStatus::MaxTurns { turns: 2, .. })
        ));
        assert!(matches!(
            g.limit(1, &limits, Some(1.0)),
            Some(RunStatus::CostLimit { .. })
        ));
    }
}
