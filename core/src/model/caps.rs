//! How much of one model reply the app reads: the caps, in one place, and the
//! [`Budget`] every provider's decoder spends as the reply streams.
//!
//! A provider that streams without end (a runaway model, a broken gateway, a hostile
//! server) must not grow the process: each kind of content has its own cap per reply
//! (text, reasoning, tool-call arguments), one SSE event may not pass
//! [`ReplyCaps::event_bytes`], and a body that is not streamed may not pass
//! [`ReplyCaps::body_bytes`]. Once a cap is reached the decoder keeps what came up to
//! it, the transport stops reading (the stream is dropped), and the reply comes back
//! with [`crate::model::Reply::cut`] set; the agent loop tells the model and the user,
//! and does not run a call whose arguments may be incomplete.

use serde::{Deserialize, Serialize};

// A cut is part of the reply, so its types sit with the conversation; named here too.
pub use crate::conversation::{human, Capped, Cut};

/// The caps of one reply, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyCaps {
    /// Assistant text (a refusal counts as text).
    pub text_bytes: usize,
    /// Reasoning: summaries, thinking and the provider's encrypted copy.
    pub reasoning_bytes: usize,
    /// Tool-call arguments, all the reply's calls together.
    pub arguments_bytes: usize,
    /// One SSE event (its lines together). A final event may repeat the whole reply
    /// (`response.completed`), so this is above the three caps together.
    pub event_bytes: usize,
    /// A whole JSON body from a server that does not stream.
    pub body_bytes: usize,
    /// The body of an error answer (4xx, 5xx): a cut one still says enough.
    pub error_body_bytes: usize,
}

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

impl Default for ReplyCaps {
    fn default() -> Self {
        ReplyCaps {
            text_bytes: MIB,
            reasoning_bytes: MIB,
            arguments_bytes: 4 * MIB,
            event_bytes: 16 * MIB,
            body_bytes: 16 * MIB,
            error_body_bytes: 64 * KIB,
        }
    }
}

/// The smallest and largest value a cap may take: below, no real reply fits; above,
/// the cap no longer protects the process.
pub const MIN_CAP: usize = KIB;
pub const MAX_CAP: usize = 256 * MIB;

impl ReplyCaps {
    /// Every cap within [`MIN_CAP`, `MAX_CAP`], and an event large enough to carry
    /// the largest piece of content (servers send a call's arguments in one event).
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("text", self.text_bytes),
            ("reasoning", self.reasoning_bytes),
            ("tool-call arguments", self.arguments_bytes),
            ("one event", self.event_bytes),
            ("a whole body", self.body_bytes),
            ("an error body", self.error_body_bytes),
        ] {
            if !(MIN_CAP..=MAX_CAP).contains(&v) {
                return Err(format!(
                    "the reply cap for {name} is {v} bytes; it must be between {} and {}",
                    human(MIN_CAP),
                    human(MAX_CAP)
                ));
            }
        }
        let largest = self
            .text_bytes
            .max(self.reasoning_bytes)
            .max(self.arguments_bytes);
        if self.event_bytes < largest || self.body_bytes < largest {
            return Err(format!(
                "the reply caps for one event ({}) and a whole body ({}) must be at least the largest content cap ({})",
                human(self.event_bytes),
                human(self.body_bytes),
                human(largest)
            ));
        }
        Ok(())
    }
}

/// The content parts a budget counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Text,
    Reasoning,
    Arguments,
}

/// What one reply has used of its caps. A decoder sends every piece of content
/// through it; after the first cut nothing more is taken.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    caps: ReplyCaps,
    used: [usize; 3],
    cut: Option<Cut>,
    /// The text's length at which it is next looked at for a loop.
    next_loop_check: usize,
}

/// Text shorter than this is never taken for a loop.
const LOOP_MIN_SPAN: usize = 2000;
/// A loop repeats its stretch at least this many times.
const LOOP_MIN_REPEATS: usize = 8;
/// The longest stretch looked for.
const LOOP_MAX_PERIOD: usize = 400;
/// How much more text arrives between two looks.
const LOOP_CHECK_EVERY: usize = 256;

/// The length of the stretch the end of `text` keeps repeating, if it does: the last
/// `max(2000, 8 × p)` bytes equal themselves shifted by `p`. Real answers, tables and
/// code do not repeat one stretch that long; a runaway model does ("Noisy Noisy
/// Noisy ..."), until the server's own cap.
pub fn repeating_tail(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    (1..=LOOP_MAX_PERIOD).find(|&p| {
        let span = (LOOP_MIN_REPEATS * p).max(LOOP_MIN_SPAN);
        span + p <= b.len() && b[b.len() - span..] == b[b.len() - span - p..b.len() - p]
    })
}

impl Budget {
    pub fn new(caps: ReplyCaps) -> Budget {
        Budget {
            caps,
            ..Budget::default()
        }
    }

    pub fn caps(&self) -> &ReplyCaps {
        &self.caps
    }

    /// The first cap reached, if any: the transport stops reading.
    pub fn cut(&self) -> Option<Cut> {
        self.cut
    }

    /// Mark the reply cut by something the budget does not count (an event too large).
    pub fn cut_by(&mut self, what: Capped, cap: usize) {
        self.cut.get_or_insert(Cut { what, cap });
    }

    /// Append as much of `piece` to `into` as the cap of `part` allows; returns the
    /// part taken (for the live view), which is all of it until the cap is reached.
    pub fn append<'p>(&mut self, part: Part, into: &mut String, piece: &'p str) -> &'p str {
        let kept = self.take(part, piece);
        into.push_str(kept);
        // Text caught in a loop is cut like text over its cap: nothing after is read.
        if part == Part::Text && self.cut.is_none() && into.len() >= self.next_loop_check {
            self.next_loop_check = into.len().max(LOOP_MIN_SPAN) + LOOP_CHECK_EVERY;
            if let Some(period) = repeating_tail(into) {
                self.cut = Some(Cut {
                    what: Capped::Repetition,
                    cap: period,
                });
            }
        }
        kept
    }

    /// Replace `into` with as much of `new` as the cap allows (a final copy of content
    /// that deltas already gave, or that came whole).
    pub fn replace(&mut self, part: Part, into: &mut String, new: &str) {
        if self.cut.is_some() {
            return;
        }
        self.release(part, into.len());
        into.clear();
        let kept = self.take(part, new);
        into.push_str(kept);
    }

    /// `n` bytes counted against `part` are no longer held (content about to be
    /// replaced by its final copy).
    pub fn release(&mut self, part: Part, n: usize) {
        let i = part as usize;
        self.used[i] -= n.min(self.used[i]);
    }

    /// Count `piece` against `part`: the prefix that fits, cut on a character boundary.
    pub fn take<'p>(&mut self, part: Part, piece: &'p str) -> &'p str {
        if self.cut.is_some() {
            return "";
        }
        let (i, cap, what) = match part {
            Part::Text => (0, self.caps.text_bytes, Capped::Text),
            Part::Reasoning => (1, self.caps.reasoning_bytes, Capped::Reasoning),
            Part::Arguments => (2, self.caps.arguments_bytes, Capped::Arguments),
        };
        let room = cap.saturating_sub(self.used[i]);
        let kept = if piece.len() <= room {
            piece
        } else {
            self.cut = Some(Cut { what, cap });
            &piece[..floor_boundary(piece, room)]
        };
        self.used[i] += kept.len();
        kept
    }
}

/// The largest index at most `at` that is a character boundary of `s`.
fn floor_boundary(s: &str, at: usize) -> usize {
    let mut i = at.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> ReplyCaps {
        ReplyCaps {
            text_bytes: 10,
            reasoning_bytes: 4,
            arguments_bytes: 6,
            ..ReplyCaps::default()
        }
    }

    #[test]
    fn content_is_kept_up_to_its_cap_and_nothing_after() {
        let mut b = Budget::new(small());
        let mut text = String::new();
        assert_eq!(b.append(Part::Text, &mut text, "hello "), "hello ");
        // 4 bytes are left: "w", the two of "ö", "r".
        assert_eq!(b.append(Part::Text, &mut text, "wörld"), "wör");
        assert_eq!(text, "hello wör");
        assert_eq!(
            b.cut(),
            Some(Cut {
                what: Capped::Text,
                cap: 10
            })
        );
        // After the cut nothing is taken, of any part.
        let mut args = String::new();
        assert_eq!(b.append(Part::Arguments, &mut args, "{}"), "");
        assert_eq!(b.cut().unwrap().describe(), "its text passed 10 bytes");
    }

    #[test]
    fn a_split_character_is_not_kept_and_replacing_frees_the_old_copy() {
        let mut b = Budget::new(small());
        let mut r = String::new();
        // "aé" is 3 bytes; the second "é" would straddle the cap of 4.
        assert_eq!(b.append(Part::Reasoning, &mut r, "aéé"), "aé");
        assert!(b.cut().is_some());

        let mut b = Budget::new(small());
        let mut args = String::new();
        b.append(Part::Arguments, &mut args, "{\"a\":");
        // The final copy replaces the deltas: only its own length counts.
        b.replace(Part::Arguments, &mut args, "{\"a\":1}");
        assert_eq!(args, "{\"a\":1");
        assert_eq!(b.cut().unwrap().what, Capped::Arguments);
    }

    #[test]
    fn a_reply_caught_in_a_loop_is_cut_and_real_text_is_not() {
        let mut b = Budget::new(ReplyCaps::default());
        let mut text = String::from("The data has three columns. ");
        let mut cut_at = None;
        for i in 0..2000 {
            b.append(Part::Text, &mut text, "Noisy Noisy Data Limit ");
            if b.cut().is_some() {
                cut_at = Some(i);
                break;
            }
        }
        assert_eq!(
            b.cut(),
            Some(Cut {
                what: Capped::Repetition,
                cap: 23
            })
        );
        // Cut soon after the loop passed 2,000 bytes, not at the server's cap.
        assert!(cut_at.unwrap() < 110, "{cut_at:?}");
        assert!(b
            .cut()
            .unwrap()
            .describe()
            .contains("repeating the same 23 characters"));

        // A long table and long code are not loops.
        let table: String = (0..400)
            .map(|i| format!("| {i} | {} |\n", i * 7 % 13))
            .collect();
        assert_eq!(repeating_tail(&table), None);
        let code = "df = pd.read_csv('input/a.csv')\nprint(df.describe())\n".repeat(30);
        // Two lines said 30 times (1,590 bytes) are short of a loop; 60 times are one.
        assert_eq!(repeating_tail(&code), None);
        assert_eq!(repeating_tail(&code.repeat(2)), Some(53));
    }

    #[test]
    fn caps_are_validated() {
        assert!(ReplyCaps::default().validate().is_ok());
        let zero = ReplyCaps {
            text_bytes: 0,
            ..ReplyCaps::default()
        };
        assert!(zero.validate().unwrap_err().contains("for text is 0 bytes"));
        let small_event = ReplyCaps {
            event_bytes: 2 * MIB,
            ..ReplyCaps::default()
        };
        assert!(small_event.validate().is_err());
        assert_eq!(human(MIB), "1.0 MiB");
    }
}
