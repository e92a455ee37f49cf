//! Tool calls that a model wrote as text, made into calls.
//!
//! Local models behind Chat Completions (Ollama, llama.cpp, LM Studio) often put their
//! call in the message text instead of a structured `tool_calls` entry, and the loop
//! would take that text for the final answer. When a reply has no structured call and
//! tools were offered, [`convert`] looks for, in this order:
//!
//! 1. the markers of chat templates: `<tool_call>{...}</tool_call>` (Hermes, Qwen),
//!    `<function=python>{...}</function>` and `<|python_tag|>` (Llama 3.1),
//!    `[TOOL_CALLS] [...]` (Mistral);
//! 2. a JSON object naming an offered tool, the whole message, in a fenced block
//!    (```` ```json ````) or inside the prose: `{"name": "python", "arguments": {...}}`
//!    (or `parameters`, or the arguments as a JSON string), `{"tool": "python", "code":
//!    "..."}` (the arguments beside the name, under `tool`, `name`, `tool_name` or
//!    `function`), OpenAI's own `{"type": "function", "function": {...}}`, or a list
//!    of them;
//! 3. one fenced ```` ```python ```` block (the `python` tool's code) or ```` ```bash ````
//!    / ```` ```sh ```` block (the `shell` tool's command), when it is the only code
//!    block and the prose around it is short: a final answer that quotes the code it
//!    ran is longer and is left alone.
//!
//! The JSON or block that was the call leaves the assistant text (the prose around it
//! stays), and each call gets a fresh id starting with [`PREFIX`]: that id is the flag.
//! It is in the transcript, so it survives a reopened session, and it is all the
//! provider needs to tell the model once how to call tools: when the history is sent,
//! the result of the *first* such call in the conversation carries [`NOTE`]. The loop
//! has nothing to do; it runs the call like any other ([`is_text_call`] lets a UI
//! say the call was recovered from text).
//!
//! ```
//! use sandalyst::model::chat_completions::text_calls::{convert, is_text_call};
//! use sandalyst::model::{Item, Reply, ToolSpec};
//! let tools = [ToolSpec {
//!     name: "python".into(),
//!     description: "Run Python".into(),
//!     parameters: serde_json::json!({"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}),
//! }];
//! let reply = Reply {
//!     items: vec![Item::Assistant { text: r#"{"name": "python", "arguments": {"code": "print(1)"}}"#.into() }],
//!     ..Reply::default()
//! };
//! let reply = convert(reply, &tools);
//! let (id, name, args) = reply.tool_calls().next().unwrap();
//! assert!(is_text_call(id));
//! assert_eq!((name, args), ("python", r#"{"code":"print(1)"}"#));
//! ```

use serde_json::{Map, Value};

use crate::model::{Item, Reply, ToolSpec};

/// How the id of a call recovered from text begins.
pub const PREFIX: &str = "text_call_";

/// What the model is told, once, with the result of its first call written as text.
pub const NOTE: &str = "[Note: you wrote this tool call as text in your message. It was recognised and run this time, \
but call tools through the tool-calling interface (a structured tool call), not as JSON or code in your message text: \
text that only looks like a call may be taken for your final answer.]";

/// The longest prose around a lone fenced code block for it to count as a call.
const MAX_PROSE: usize = 400;

/// Whether the call with this id was written as text and recovered.
pub fn is_text_call(call_id: &str) -> bool {
    call_id.starts_with(PREFIX)
}

/// The id of the first call in `items` that was written as text: its result is the
/// one that carries [`NOTE`].
pub fn first_text_call(items: &[Item]) -> Option<&str> {
    items.iter().find_map(|i| match i {
        Item::ToolCall { call_id, .. } if is_text_call(call_id) => Some(call_id.as_str()),
        _ => None,
    })
}

/// `reply` with tool calls written in its text made into calls (see the module doc);
/// unchanged when it has structured calls, no text call is found or no tools were
/// offered.
pub fn convert(mut reply: Reply, tools: &[ToolSpec]) -> Reply {
    if tools.is_empty() || reply.tool_calls().next().is_some() {
        return reply;
    }
    let Some(pos) = reply
        .items
        .iter()
        .position(|i| matches!(i, Item::Assistant { .. }))
    else {
        return reply;
    };
    let Item::Assistant { text } = &reply.items[pos] else {
        return reply;
    };
    let Some((calls, prose)) = find(text, tools) else {
        return reply;
    };
    let nonce = format!("{:08x}", rand::random::<u32>());
    let mut replacement = Vec::new();
    if !prose.is_empty() {
        replacement.push(Item::Assistant { text: prose });
    }
    replacement.extend(calls.into_iter().enumerate().map(|(n, (name, arguments))| {
        Item::ToolCall {
            call_id: format!("{PREFIX}{nonce}_{n}"),
            name,
            arguments: Value::Object(arguments).to_string(),
        }
    }));
    reply.items.splice(pos..=pos, replacement);
    reply
}

type Call = (String, Map<String, Value>);

/// The calls written in `text` and the prose left around them.
fn find(text: &str, tools: &[ToolSpec]) -> Option<(Vec<Call>, String)> {
    // 1. The special markers of chat templates: Hermes and Qwen `<tool_call>{...}
    // </tool_call>`, Llama 3.1 `<function=NAME>{...}</function>` and
    // `<|python_tag|>CODE`, Mistral `[TOOL_CALLS] [...]`.
    if let Some(found) = tagged(text, tools) {
        return Some(found);
    }
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix("[TOOL_CALLS]") {
        let v: Value = serde_json::from_str(rest.trim()).ok()?;
        return from_value(&v, tools).map(|c| (c, String::new()));
    }
    if let Some(rest) = trimmed.strip_prefix("<|python_tag|>") {
        let rest = rest.trim().trim_end_matches("<|eom_id|>").trim();
        if let Ok(v) = serde_json::from_str::<Value>(rest) {
            return from_value(&v, tools).map(|c| (c, String::new()));
        }
        let spec = tools.iter().find(|t| t.name == "python")?;
        let mut args = Map::new();
        args.insert(main_param(spec)?, Value::String(rest.to_string()));
        return Some((vec![(spec.name.clone(), args)], String::new()));
    }

    // 2. JSON: the whole text, fenced blocks, or an object inside the prose.
    if let Ok(v) = serde_json::from_str::<Value>(text.trim()) {
        return from_value(&v, tools).map(|c| (c, String::new()));
    }
    let blocks = fenced_blocks(text);
    let mut calls = Vec::new();
    let mut spans = Vec::new();
    for b in &blocks {
        if matches!(b.lang.as_str(), "" | "json" | "tool_call" | "tool") {
            if let Some(c) = serde_json::from_str::<Value>(b.body.trim())
                .ok()
                .and_then(|v| from_value(&v, tools))
            {
                calls.extend(c);
                spans.push(b.span.clone());
            }
        }
    }
    if !calls.is_empty() {
        return Some((calls, tidy(&without(text, &spans))));
    }
    if blocks.is_empty() {
        for (i, _) in text.match_indices('{') {
            let mut it = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
            if let Some(Ok(v)) = it.next() {
                if let Some(c) = from_value(&v, tools) {
                    let end = i + it.byte_offset();
                    return Some((c, tidy(&without(text, std::slice::from_ref(&(i..end))))));
                }
            }
        }
    }

    // 3. One fenced code block for the python or shell tool, with little prose.
    if let [b] = blocks.as_slice() {
        let tool = match b.lang.as_str() {
            "python" | "py" | "python3" | "ipython" => "python",
            "bash" | "sh" | "shell" | "console" => "shell",
            _ => return None,
        };
        let spec = tools.iter().find(|t| t.name == tool)?;
        let prose = tidy(&without(text, std::slice::from_ref(&b.span)));
        if prose.chars().count() > MAX_PROSE || b.body.trim().is_empty() {
            return None;
        }
        let mut args = Map::new();
        args.insert(main_param(spec)?, Value::String(b.body.clone()));
        return Some((vec![(spec.name.clone(), args)], prose));
    }
    None
}

/// Calls between `<tool_call>` and `</tool_call>` (a JSON call) or `<function=NAME>`
/// and `</function>` (the arguments), and the prose around them; None when there are
/// none, or one does not parse (the text is then left as it is).
fn tagged(text: &str, tools: &[ToolSpec]) -> Option<(Vec<Call>, String)> {
    let mut calls = Vec::new();
    let mut prose = String::new();
    let mut rest = text;
    loop {
        let hermes = rest.find("<tool_call>");
        let llama = rest.find("<function=");
        let (start, is_hermes) = match (hermes, llama) {
            (Some(h), Some(l)) => (h.min(l), h < l),
            (Some(h), None) => (h, true),
            (None, Some(l)) => (l, false),
            (None, None) => break,
        };
        prose.push_str(&rest[..start]);
        if is_hermes {
            let inner = &rest[start + "<tool_call>".len()..];
            let (body, after) = match inner.find("</tool_call>") {
                Some(end) => (&inner[..end], &inner[end + "</tool_call>".len()..]),
                None => (inner, ""),
            };
            let v: Value = serde_json::from_str(body.trim()).ok()?;
            calls.extend(from_value(&v, tools)?);
            rest = after;
        } else {
            let inner = &rest[start + "<function=".len()..];
            let close = inner.find('>')?;
            let spec = tool_named(&inner[..close], tools)?;
            let inner = &inner[close + 1..];
            let (body, after) = match inner.find("</function>") {
                Some(end) => (&inner[..end], &inner[end + "</function>".len()..]),
                None => (inner, ""),
            };
            let args = match serde_json::from_str::<Value>(body.trim()).ok()? {
                Value::Object(m) => m,
                _ => return None,
            };
            calls.push((spec.name.clone(), args));
            rest = after;
        }
    }
    if calls.is_empty() {
        return None;
    }
    prose.push_str(rest);
    Some((calls, tidy(&prose)))
}

/// The calls a JSON value describes, if every part of it is a call of an offered tool.
fn from_value(v: &Value, tools: &[ToolSpec]) -> Option<Vec<Call>> {
    match v {
        Value::Array(list) if !list.is_empty() => list.iter().map(|c| one_call(c, tools)).collect(),
        Value::Object(_) => one_call(v, tools).map(|c| vec![c]),
        _ => None,
    }
}

fn one_call(v: &Value, tools: &[ToolSpec]) -> Option<Call> {
    let obj = v.as_object()?;
    // OpenAI's own shape, written out: {"type": "function", "function": {...}}.
    if let Some(inner @ Value::Object(_)) = obj.get("function") {
        return one_call(inner, tools);
    }
    let (name_key, name) = ["name", "tool", "tool_name", "function", "recipient_name"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str).map(|n| (*k, n)))?;
    let spec = tool_named(name, tools)?;
    let explicit = ["arguments", "parameters", "args", "input", "tool_input"]
        .iter()
        .find_map(|k| obj.get(*k));
    let args = match explicit {
        Some(Value::Object(m)) => m.clone(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => m,
            // The bare code or command as the arguments.
            _ => {
                let mut m = Map::new();
                m.insert(main_param(spec)?, Value::String(s.clone()));
                m
            }
        },
        Some(Value::Null) | None => {
            let props = spec.parameters.get("properties").and_then(Value::as_object);
            let rest: Map<String, Value> = obj
                .iter()
                .filter(|(k, _)| k.as_str() != name_key && k.as_str() != "type")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            // Beside the name must be the tool's own arguments, not just any keys.
            let known = |k: &String| props.is_some_and(|p| p.contains_key(k));
            if !rest.is_empty() && !rest.keys().any(known) {
                return None;
            }
            if rest.is_empty() && required(spec) > 0 {
                return None;
            }
            rest
        }
        Some(_) => return None,
    };
    Some((spec.name.clone(), args))
}

fn tool_named<'a>(name: &str, tools: &'a [ToolSpec]) -> Option<&'a ToolSpec> {
    let name = name.trim();
    let name = name.strip_prefix("functions.").unwrap_or(name);
    tools
        .iter()
        .find(|t| t.name == name)
        .or_else(|| tools.iter().find(|t| t.name.eq_ignore_ascii_case(name)))
}

fn required(spec: &ToolSpec) -> usize {
    spec.parameters
        .get("required")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

/// The argument a bare code block or string fills: the first required one, else the
/// only one.
fn main_param(spec: &ToolSpec) -> Option<String> {
    let p = &spec.parameters;
    if let Some(r) = p
        .get("required")
        .and_then(Value::as_array)
        .and_then(|r| r.first())
        .and_then(Value::as_str)
    {
        return Some(r.to_string());
    }
    match p.get("properties").and_then(Value::as_object) {
        Some(props) if props.len() == 1 => props.keys().next().cloned(),
        _ => None,
    }
}

struct Block {
    /// Lower-cased, e.g. `python`; empty for a bare fence.
    lang: String,
    body: String,
    /// Byte range of the whole block, fences included.
    span: std::ops::Range<usize>,
}

/// The ```` ``` ```` blocks of `text` that are closed.
fn fenced_blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String, usize)> = None; // start, lang, body start
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if let Some(fence) = t.strip_prefix("```") {
            match open.take() {
                None => {
                    let lang = fence.trim().to_ascii_lowercase();
                    open = Some((offset, lang, offset + line.len()));
                }
                Some((start, lang, body_start)) if fence.trim().is_empty() => {
                    out.push(Block {
                        lang,
                        body: text[body_start..offset].to_string(),
                        span: start..offset + line.len(),
                    });
                }
                // A fence opening another block inside an unclosed one: start over.
                Some(_) => {
                    let lang = fence.trim().to_ascii_lowercase();
                    open = Some((offset, lang, offset + line.len()));
                }
            }
        }
        offset += line.len();
    }
    out
}

/// `text` without the byte ranges `spans` (sorted, not overlapping).
fn without(text: &str, spans: &[std::ops::Range<usize>]) -> String {
    let mut out = String::new();
    let mut at = 0;
    for s in spans {
        out.push_str(&text[at..s.start]);
        at = s.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Prose left after the calls are taken out: trimmed, without runs of blank lines.
fn tidy(s: &str) -> String {
    let mut out = String::new();
    let mut blank = 0;
    for line in s.trim().lines() {
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<ToolSpec> {
        vec![
            ToolSpec {
                name: "python".into(),
                description: String::new(),
                parameters: json!({"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}),
            },
            ToolSpec {
                name: "shell".into(),
                description: String::new(),
                parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
            },
        ]
    }

    fn calls(text: &str) -> Option<(Vec<(String, Value)>, String)> {
        find(text, &tools()).map(|(c, p)| {
            (
                c.into_iter().map(|(n, a)| (n, Value::Object(a))).collect(),
                p,
            )
        })
    }

    #[test]
    fn the_common_shapes_are_recognised() {
        let py = |code: &str| ("python".to_string(), json!({"code": code}));
        assert_eq!(
            calls(r#"{"name":"python","arguments":{"code":"print(1)"}}"#),
            Some((vec![py("print(1)")], String::new()))
        );
        assert_eq!(
            calls(r#"{"tool": "python", "code": "print(2)"}"#),
            Some((vec![py("print(2)")], String::new()))
        );
        assert_eq!(
            calls("I will look.\n```json\n{\"name\": \"python\", \"parameters\": \"{\\\"code\\\": \\\"x=1\\\"}\"}\n```\n"),
            Some((vec![py("x=1")], "I will look.".to_string()))
        );
        assert_eq!(
            calls("<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>"),
            Some((
                vec![("shell".to_string(), json!({"command": "ls"}))],
                String::new()
            ))
        );
        assert_eq!(
            calls("Checking.\n<function=python>{\"code\": \"print(4)\"}</function>"),
            Some((vec![py("print(4)")], "Checking.".to_string()))
        );
        assert_eq!(
            calls("<|python_tag|>print(5)<|eom_id|>"),
            Some((vec![py("print(5)")], String::new()))
        );
        assert_eq!(
            calls("[TOOL_CALLS] [{\"name\": \"python\", \"arguments\": {\"code\": \"print(6)\"}}]"),
            Some((vec![py("print(6)")], String::new()))
        );
        assert_eq!(
            calls("Load it:\n```python\nimport pandas as pd\n```\n"),
            Some((vec![py("import pandas as pd\n")], "Load it:".to_string()))
        );
        assert_eq!(
            calls(
                r#"Running {"type":"function","function":{"name":"python","arguments":"print(3)"}} now"#
            ),
            Some((vec![py("print(3)")], "Running  now".to_string()))
        );
    }

    #[test]
    fn answers_that_only_mention_code_or_json_are_left_alone() {
        let long = format!(
            "{}\n```python\nprint(1)\n```\n",
            "The anomalies are explained below. ".repeat(20)
        );
        assert_eq!(calls(&long), None);
        assert_eq!(calls("```python\na\n```\nand\n```python\nb\n```"), None);
        assert_eq!(calls(r#"{"name": "Alice", "age": 3}"#), None);
        assert_eq!(calls(r#"{"tool": "python", "colour": "red"}"#), None);
        assert_eq!(calls("```json\n{\"rows\": 3}\n```"), None);
        assert_eq!(calls("Done. See output/report.md."), None);
    }
}
