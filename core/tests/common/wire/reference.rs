//! The reference case as a scripted model: the same three turns in each provider's
//! dialect. Turn one analyses input/building_energy.csv and writes the three outputs,
//! turn two validates them (two calls at once), turn three answers.

use serde_json::{json, Value};

use super::Answer;

pub const ANALYSIS: &str = include_str!("reference_analysis.py");
pub const VALIDATE: &str = r#"import pandas as pd
import matplotlib.image as mpimg
ev = pd.read_csv("output/anomalies.csv")
print("csv rows", len(ev), list(ev.columns)[:2])
print("png shape", mpimg.imread("output/energy_anomalies.png").shape)
text = open("output/anomaly_report.md").read()
print("report ascii", text.isascii(), "chars", len(text))
"#;
pub const FINAL: &str = "I found the abnormal events; see output/anomaly_report.md.";

/// The model's three turns, as (call id, tool, arguments) lists; the last is text only.
pub fn turns() -> [Vec<(&'static str, &'static str, String)>; 2] {
    [
        vec![("call_1", "python", json!({ "code": ANALYSIS }).to_string())],
        vec![
            ("call_2", "python", json!({ "code": VALIDATE }).to_string()),
            (
                "call_3",
                "shell",
                json!({"command": "ls output"}).to_string(),
            ),
        ],
    ]
}

/// Each tool turn starts with a reasoning item (summary and encrypted content
/// `enc-<turn>`) that later requests must carry back.
pub fn responses_script() -> Vec<Answer> {
    use super::responses::Events;
    let mut script: Vec<Answer> = turns()
        .iter()
        .enumerate()
        .map(|(turn, calls)| {
            let mut e = Events::new();
            e.reasoning(0, "Plan the next step.", &format!("enc-{turn}"));
            e.text(1, "Working on it.", 8);
            for (i, (id, name, args)) in calls.iter().enumerate() {
                e.call(i as u64 + 2, id, name, args, 40);
            }
            Answer::Sse(e.completed(1000, 800, 100))
        })
        .collect();
    script.push(Answer::Sse(
        Events::new().text(0, FINAL, 8).completed(1000, 800, 100),
    ));
    script
}

pub fn chat_script() -> Vec<Answer> {
    use super::chat::{call_chunks, chunk, text_stream, usage_chunk, DONE};
    let mut script: Vec<Answer> = turns()
        .iter()
        .map(|calls| {
            let mut c = vec![chunk(
                json!({"role": "assistant", "content": "Working on it."}),
                None,
            )];
            for (i, (id, name, args)) in calls.iter().enumerate() {
                c.extend(call_chunks(i as u64, id, name, args, 40));
            }
            c.push(chunk(json!({}), Some("tool_calls")));
            c.push(usage_chunk(1000, 800, 100));
            c.push(DONE.into());
            Answer::Sse(c)
        })
        .collect();
    script.push(Answer::Sse(text_stream(FINAL)));
    script
}

pub fn messages_script() -> Vec<Answer> {
    use super::messages::Events;
    let mut script: Vec<Answer> = turns()
        .iter()
        .map(|calls| {
            let mut e = Events::new(200, 800, 0);
            e.text("Working on it.");
            for (id, name, args) in calls {
                e.tool_use(id, name, args, 40);
            }
            Answer::Sse(e.end("tool_use", 100))
        })
        .collect();
    script.push(Answer::Sse(
        Events::new(200, 800, 0).text(FINAL).end("end_turn", 100),
    ));
    script
}

/// The output the server was sent for `call_id`, in each dialect.
pub fn result_of(body: &Value, call_id: &str) -> Option<String> {
    // A result with images is a list of parts; its text is what its text parts say.
    let text = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Array(parts) => Some(
                parts
                    .iter()
                    .filter(|p| p["type"] == "input_text" || p["type"] == "text")
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        }
    };
    let all = [&body["input"], &body["messages"]];
    let mut found = None;
    for list in all.iter().filter_map(|l| l.as_array()) {
        for m in list {
            // Responses: function_call_output items. Chat: tool messages.
            if m["call_id"] == call_id && m["type"] == "function_call_output" {
                found = text(&m["output"]);
            }
            if m["role"] == "tool" && m["tool_call_id"] == call_id {
                found = text(&m["content"]);
            }
            // Anthropic: tool_result blocks inside user messages.
            for b in m["content"].as_array().into_iter().flatten() {
                if b["type"] == "tool_result" && b["tool_use_id"] == call_id {
                    found = text(&b["content"]);
                }
            }
        }
    }
    found
}

/// How many images went to the model with the result of `call_id`: `input_image`
/// parts (Responses), `image` blocks in the `tool_result` (Anthropic), `image_url`
/// parts of the user message after the tool messages that names the call (Chat).
pub fn images_of(body: &Value, call_id: &str) -> usize {
    let all = [&body["input"], &body["messages"]];
    let mut n = 0;
    for list in all.iter().filter_map(|l| l.as_array()) {
        for m in list {
            if m["call_id"] == call_id && m["type"] == "function_call_output" {
                n += m["output"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["type"] == "input_image")
                    .count();
            }
            let blocks = m["content"].as_array().into_iter().flatten();
            for b in blocks.clone() {
                if b["type"] == "tool_result" && b["tool_use_id"] == call_id {
                    n += b["content"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|p| p["type"] == "image")
                        .count();
                }
            }
            if m["role"] == "user" {
                let parts: Vec<&Value> = blocks.collect();
                for (i, p) in parts.iter().enumerate() {
                    let names_call = p["text"]
                        .as_str()
                        .is_some_and(|t| t.ends_with(&format!("(from {call_id})")));
                    if names_call && parts.get(i + 1).is_some_and(|q| q["type"] == "image_url") {
                        n += 1;
                    }
                }
            }
        }
    }
    n
}
