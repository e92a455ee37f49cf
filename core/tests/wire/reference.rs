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
    let all = [&body["input"], &body["messages"]];
    let mut found = None;
    for list in all.iter().filter_map(|l| l.as_array()) {
        for m in list {
            // Responses: function_call_output items. Chat: tool messages.
            if m["call_id"] == call_id && m["type"] == "function_call_output" {
                found = m["output"].as_str().map(str::to_owned);
            }
            if m["role"] == "tool" && m["tool_call_id"] == call_id {
                found = m["content"].as_str().map(str::to_owned);
            }
            // Anthropic: tool_result blocks inside user messages.
            for b in m["content"].as_array().into_iter().flatten() {
                if b["type"] == "tool_result" && b["tool_use_id"] == call_id {
                    found = b["content"].as_str().map(str::to_owned);
                }
            }
        }
    }
    found
}
