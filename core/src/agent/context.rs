//! Keeping the conversation inside the model's context window: before a request
//! would come near the limit, the oldest tool outputs are replaced by a one-line
//! stub (and their images dropped), newest last, so an ask never fails on context
//! length while the history can still shrink.

use crate::model::caps::{Capped, Cut};
use crate::model::{CallForm, Item};

/// Start shrinking above this share of the window, down to [`TARGET`].
const HIGH: f64 = 0.8;
const TARGET: f64 = 0.6;
/// The most recent tool outputs are never stubbed: the model is working with them.
const KEEP_RECENT: usize = 2;
/// What an image costs in tokens, roughly (a 1568 px image is about 1,600).
const IMAGE_TOKENS: u64 = 1_600;

/// A rough token count: about four characters a token for English and code.
pub fn estimate(instructions: &str, items: &[Item]) -> u64 {
    let chars: usize = instructions.len()
        + items
            .iter()
            .map(|i| match i {
                Item::User { text } | Item::Assistant { text } => text.len(),
                Item::ToolCall { arguments, .. } => arguments.len() + 32,
                Item::ToolOutput { output, .. } => output.len() + 16,
                Item::Reasoning { summary, .. } => summary.len(),
            })
            .sum::<usize>();
    let images: usize = items
        .iter()
        .map(|i| match i {
            Item::ToolOutput { images, .. } => images.len(),
            _ => 0,
        })
        .sum();
    chars as u64 / 4 + images as u64 * IMAGE_TOKENS
}

/// Stub the oldest tool outputs until the conversation fits `window` with room to
/// spare. Returns how many were stubbed. `None`: the window is unknown, nothing done.
pub fn fit(items: &mut [Item], instructions: &str, window: Option<u64>) -> usize {
    let Some(window) = window else { return 0 };
    if (estimate(instructions, items) as f64) < window as f64 * HIGH {
        return 0;
    }
    shrink(items, instructions, (window as f64 * TARGET) as u64)
}

/// Stub old outputs until the estimate is at most `target` (or nothing is left to stub).
pub fn shrink(items: &mut [Item], instructions: &str, target: u64) -> usize {
    let outputs: Vec<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, Item::ToolOutput { .. }))
        .map(|(n, _)| n)
        .collect();
    let old = outputs.len().saturating_sub(KEEP_RECENT);
    let mut stubbed = 0;
    for &n in &outputs[..old] {
        if estimate(instructions, items) <= target {
            break;
        }
        if let Item::ToolOutput { output, images, .. } = &mut items[n] {
            if output.starts_with(STUB) {
                continue;
            }
            *output = format!(
                "{STUB} {} characters{} removed to save context; run the code again if you need it]",
                output.len(),
                if images.is_empty() { "" } else { " and the images" }
            );
            images.clear();
            stubbed += 1;
        }
    }
    stubbed
}

const STUB: &str = "[earlier output:";

#[cfg(test)]
mod tests {
    use super::*;

    fn convo(n: usize, size: usize) -> Vec<Item> {
        let mut items = vec![Item::User {
            text: "task".into(),
        }];
        for i in 0..n {
            items.push(Item::ToolCall {
                call_id: format!("c{i}").into(),
                name: "python".into(),
                arguments: "{}".into(),
                form: CallForm::Structured,
            });
            items.push(Item::ToolOutput {
                call_id: format!("c{i}").into(),
                output: "x".repeat(size),
                is_error: false,
                images: vec![],
            });
        }
        items
    }

    #[test]
    fn old_outputs_are_stubbed_newest_kept() {
        let mut items = convo(10, 40_000); // about 100k tokens
        assert_eq!(fit(&mut items, "", None), 0);
        assert_eq!(fit(&mut items, "", Some(1_000_000)), 0);
        let stubbed = fit(&mut items, "", Some(64_000));
        assert!(stubbed > 0);
        assert!(estimate("", &items) <= 38_400);
        let last_two: Vec<_> = items
            .iter()
            .rev()
            .filter_map(|i| match i {
                Item::ToolOutput { output, .. } => Some(output.len()),
                _ => None,
            })
            .take(2)
            .collect();
        assert_eq!(last_two, [40_000, 40_000]);
        match &items[2] {
            Item::ToolOutput { output, .. } => assert!(output.starts_with(STUB)),
            _ => unreachable!(),
        }
    }
}

/// What of a reply cut at a size cap stays in the conversation: at most this much of
/// its text, and none of its calls' arguments, so the next requests do not resend
/// megabytes the model cannot use (the user saw them stream by).
const CUT_KEEP: usize = 16 << 10;

/// What the history keeps of a runaway reply (one caught in a loop, or stopped at
/// the output-token limit with no call in it): a model shown its own loop in full
/// tends to go on with it.
pub const RUNAWAY_KEEP: usize = 1200;

/// The item of a reply cut by the app (see [`CUT_KEEP`]; a loop keeps only
/// [`RUNAWAY_KEEP`]) as the history keeps it.
pub fn stub_cut(item: Item, cut: Cut) -> Item {
    let (keep, why) = if cut.what == Capped::Repetition {
        (RUNAWAY_KEEP, "it kept repeating itself")
    } else {
        (CUT_KEEP, "it passed the size limit of one reply")
    };
    match item {
        Item::Assistant { text } => Item::Assistant {
            text: excerpt(text, keep, why),
        },
        Item::ToolCall { call_id, name, .. } => Item::ToolCall {
            call_id,
            name,
            arguments: r#"{"note": "the arguments passed the app's size limit of one reply and were cut; the call was not run"}"#.into(),
            form: CallForm::Structured,
        },
        Item::Reasoning { summary, .. } => Item::Reasoning {
            summary: excerpt(summary, keep, why),
            encrypted_content: None,
        },
        other => other,
    }
}

/// The first `keep` bytes of `text` (on a character boundary) and a note saying how
/// much was left out and `why`; `text` itself when it is short.
pub fn excerpt(text: String, keep: usize, why: &str) -> String {
    if text.len() <= keep {
        return text;
    }
    let mut end = keep;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let left = text[end..].chars().count();
    format!(
        "{}\n[... the app left out the other {left} characters of this reply: {why}]",
        &text[..end]
    )
}

#[cfg(test)]
mod cut_tests {
    use super::*;

    #[test]
    fn a_cut_reply_keeps_a_short_text_and_no_arguments() {
        let long = "é".repeat(CUT_KEEP); // two bytes a char: the cut lands inside one
        let size = Cut {
            what: Capped::Text,
            cap: CUT_KEEP,
        };
        let Item::Assistant { text } = stub_cut(Item::Assistant { text: long }, size) else {
            panic!()
        };
        assert!(text.len() < CUT_KEEP + 200 && text.ends_with("size limit of one reply]"));
        let looped = Cut {
            what: Capped::Repetition,
            cap: 6,
        };
        let Item::Assistant { text } = stub_cut(
            Item::Assistant {
                text: "Noisy ".repeat(1000),
            },
            looped,
        ) else {
            panic!()
        };
        assert!(
            text.ends_with("other 4800 characters of this reply: it kept repeating itself]"),
            "{text}"
        );
        let call = stub_cut(
            Item::ToolCall {
                call_id: "c".into(),
                name: "python".into(),
                arguments: format!("{{\"code\": \"{}", "x".repeat(4 << 20)),
                form: CallForm::Structured,
            },
            size,
        );
        let Item::ToolCall {
            arguments, name, ..
        } = call
        else {
            panic!()
        };
        assert_eq!(name, "python");
        let v: serde_json::Value = serde_json::from_str(&arguments).unwrap();
        assert!(v["note"].as_str().unwrap().contains("not run"));
        let short = Item::Assistant { text: "ok".into() };
        assert_eq!(stub_cut(short.clone(), size), short);
    }
}
