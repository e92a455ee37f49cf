//! Tool-call arguments between our transcript (raw JSON text, possibly invalid) and
//! wire formats that want a JSON object.
//!
//! A model sometimes sends arguments that are not valid JSON; the transcript keeps them
//! as sent and the loop answers with an error observation. Sending that call back in the
//! history is where dialects differ: the Responses API takes any string, but Anthropic
//! needs an object for `tool_use.input` and Ollama parses Chat Completions arguments and
//! rejects the whole request when they do not parse. There the raw text is wrapped in
//! an object, so the model still sees what it sent next to the error it caused.

use serde_json::{json, Map, Value};

/// The key that carries unparsable arguments inside a wrapper object.
pub const UNPARSED: &str = "unparsed_arguments";

/// The arguments as a JSON object.
pub fn to_object(raw: &str) -> Map<String, Value> {
    if raw.trim().is_empty() {
        return Map::new();
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(m)) => m,
        _ => {
            let mut m = Map::new();
            m.insert(UNPARSED.into(), json!(raw));
            m
        }
    }
}

/// The arguments as JSON text that parses to an object (for Chat Completions history).
pub fn to_object_text(raw: &str) -> String {
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(_)) => raw.to_string(),
        _ => Value::Object(to_object(raw)).to_string(),
    }
}

/// Arguments some servers send as an object instead of a string, back to text.
pub fn from_wire(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// An id for a call the server sent without one; unique across the run, since later
/// turns send every earlier call back.
pub fn fresh_call_id(index: u64) -> String {
    format!("call_{:08x}_{index}", rand::random::<u32>())
}

/// The id the server gave the call at `index`, or a fresh one when it gave none.
pub fn call_id_or_fresh(id: String, index: u64) -> String {
    if id.is_empty() {
        fresh_call_id(index)
    } else {
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_arguments_are_wrapped_not_lost() {
        assert_eq!(to_object(r#"{"code":"1"}"#)["code"], "1");
        assert_eq!(to_object(r#"{"code": "#)[UNPARSED], r#"{"code": "#);
        assert_eq!(to_object(r#""a string""#)[UNPARSED], r#""a string""#);
        assert!(to_object("").is_empty());
        assert_eq!(to_object_text(r#"{"a":1}"#), r#"{"a":1}"#);
        assert_eq!(from_wire(&json!({"code": "x"})), r#"{"code":"x"}"#);
    }
}
