//! Estimated cost: a small built-in price table, per million tokens, in US dollars.
//!
//! Prices change; the table says when it was checked ([`PRICES_AS_OF`]) and the config
//! file can add or override entries (`[prices."openai:my-model"]`). Costs are estimates:
//! the table ignores batch discounts, regional uplifts, OpenAI's long-context tier (more
//! than 272K input tokens costs more) and Anthropic's cache-write premium (cache writes
//! are counted as plain input).

use super::Usage;
// The price is part of the Model trait, so it sits with the conversation; named here too.
pub use crate::conversation::Price;

/// When the built-in prices were taken from the providers' pricing pages.
pub const PRICES_AS_OF: &str = "2026-06";

/// (provider, model, price). Longer names come first where one is a prefix of another.
const TABLE: &[(&str, &str, Price)] = &[
    ("openai", "gpt-5.5", Price::new(5.00, 0.50, 30.00)),
    ("openai", "gpt-5.4-mini", Price::new(0.75, 0.075, 4.50)),
    ("openai", "gpt-5.4-nano", Price::new(0.20, 0.02, 1.25)),
    ("openai", "gpt-5.4", Price::new(2.50, 0.25, 15.00)),
    ("openai", "gpt-5.2", Price::new(1.75, 0.175, 14.00)),
    ("openai", "gpt-5.1", Price::new(1.25, 0.125, 10.00)),
    ("openai", "gpt-5-mini", Price::new(0.25, 0.025, 2.00)),
    ("openai", "gpt-5-nano", Price::new(0.05, 0.005, 0.40)),
    ("openai", "gpt-5", Price::new(1.25, 0.125, 10.00)),
    ("openai", "gpt-4.1-mini", Price::new(0.40, 0.10, 1.60)),
    ("openai", "gpt-4.1", Price::new(2.00, 0.50, 8.00)),
    ("openai", "gpt-4o-mini", Price::new(0.15, 0.075, 0.60)),
    ("openai", "gpt-4o", Price::new(2.50, 1.25, 10.00)),
    ("openai", "o4-mini", Price::new(1.10, 0.275, 4.40)),
    ("openai", "o3", Price::new(2.00, 0.50, 8.00)),
    (
        "anthropic",
        "claude-opus-4-6",
        Price::new(5.00, 0.50, 25.00),
    ),
    (
        "anthropic",
        "claude-opus-4-5",
        Price::new(5.00, 0.50, 25.00),
    ),
    (
        "anthropic",
        "claude-opus-4-1",
        Price::new(15.00, 1.50, 75.00),
    ),
    ("anthropic", "claude-opus-4", Price::new(15.00, 1.50, 75.00)),
    (
        "anthropic",
        "claude-sonnet-4-6",
        Price::new(3.00, 0.30, 15.00),
    ),
    (
        "anthropic",
        "claude-sonnet-4-5",
        Price::new(3.00, 0.30, 15.00),
    ),
    (
        "anthropic",
        "claude-sonnet-4",
        Price::new(3.00, 0.30, 15.00),
    ),
    (
        "anthropic",
        "claude-haiku-4-5",
        Price::new(1.00, 0.10, 5.00),
    ),
    (
        "anthropic",
        "claude-3-5-haiku",
        Price::new(0.80, 0.08, 4.00),
    ),
];

/// The built-in price of `model` at `provider`, if known. A dated snapshot name
/// (`gpt-5.4-2026-03-05`, `claude-sonnet-4-5-20250929`) or `-latest` matches its base.
pub fn lookup(provider: &str, model: &str) -> Option<Price> {
    TABLE
        .iter()
        .filter(|(p, _, _)| *p == provider)
        .find(|(_, name, _)| {
            model
                .strip_prefix(name)
                .is_some_and(|rest| rest.is_empty() || is_snapshot_suffix(rest))
        })
        .map(|(_, _, price)| *price)
}

/// `-2026-03-05`, `-20250929` or `-latest`.
fn is_snapshot_suffix(rest: &str) -> bool {
    let Some(s) = rest.strip_prefix('-') else {
        return false;
    };
    if s == "latest" {
        return true;
    }
    let digits: String = s.chars().filter(|c| *c != '-').collect();
    digits.len() == 8
        && digits.chars().all(|c| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_digit() || c == '-')
}

/// "$0.0123" with enough digits to be useful for small runs.
pub fn format_usd(cost: f64) -> String {
    if cost < 0.01 {
        format!("${cost:.4}")
    } else {
        format!("${cost:.2}")
    }
}

/// A run's token use as one line, with the estimated cost when known; None when the
/// model reported no tokens (the offline analyst).
pub fn usage_line(usage: &Usage, cost: Option<f64>) -> Option<String> {
    if usage.input_tokens + usage.output_tokens == 0 {
        return None;
    }
    let cost = cost.map_or(String::new(), |c| {
        format!(
            ", estimated cost {} (prices as of {PRICES_AS_OF})",
            format_usd(c)
        )
    });
    Some(format!(
        "tokens: {} in ({} cached), {} out{cost}",
        usage.input_tokens, usage.cached_tokens, usage.output_tokens
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_match_their_base_and_cost_counts_the_cache() {
        assert_eq!(
            lookup("openai", "gpt-5.4"),
            Some(Price::new(2.5, 0.25, 15.0))
        );
        assert_eq!(lookup("openai", "gpt-5.4-2026-03-05").unwrap().input, 2.5);
        assert_eq!(lookup("openai", "gpt-5.4-mini").unwrap().input, 0.75);
        assert_eq!(lookup("openai", "gpt-5.4-turbo"), None);
        assert_eq!(
            lookup("anthropic", "claude-opus-4-1-20250805")
                .unwrap()
                .input,
            15.0
        );
        assert_eq!(
            lookup("anthropic", "claude-opus-4-20250514").unwrap().input,
            15.0
        );
        assert_eq!(
            lookup("anthropic", "claude-sonnet-4-5").unwrap().output,
            15.0
        );
        assert_eq!(lookup("openai-compatible", "gpt-5.4"), None);
        let u = Usage {
            input_tokens: 1_000_000,
            cached_tokens: 400_000,
            output_tokens: 100_000,
        };
        let c = lookup("openai", "gpt-5.4").unwrap().cost(&u);
        assert!(
            (c - (0.6 * 2.5 + 0.4 * 0.25 + 0.1 * 15.0)).abs() < 1e-9,
            "{c}"
        );
        assert_eq!(format_usd(0.001234), "$0.0012");
        assert_eq!(format_usd(1.5), "$1.50");
    }
}
