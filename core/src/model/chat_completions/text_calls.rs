//! Tool calls that a model wrote as text, made into calls.
//!
//! Local models behind Chat Completions (Ollama, llama.cpp, LM Studio) often put their
//! call in the message text instead of a structured `tool_calls` entry, and the loop
//! would take that text for the final answer. When a reply has no structured call and
//! tools were offered, [`convert`] looks for, in this order:
//!
//! 1. the markers of chat templates: `<tool_call>{...}</tool_call>` (Hermes, Qwen),
//!    `<function=python>{...}</function>` and `<|python_tag|>` (Llama 3.1),
//!    `[TOOL_CALLS] [...]` (Mistral), and tags named after a tool, `<python>CODE
//!    </python>` or `<bash>`, alone or inside `<tools>…</tools>`;
//! 2. a JSON object naming an offered tool, the whole message, in a fenced block
//!    (```` ```json ````) or inside the prose: `{"name": "python", "arguments": {...}}`
//!    (or `parameters`, or the arguments as a JSON string), `{"tool": "python", "code":
//!    "..."}` (the arguments beside the name, under `tool`, `name`, `tool_name` or
//!    `function`), OpenAI's own `{"type": "function", "function": {...}}`, or a list
//!    of them (also in the doubled braces of Qwen's template example, `{{...}}`); read
//!    leniently ([`super::loose_json`]): small models write the code in Python triple
//!    quotes, strings in single quotes, trailing commas;
//! 3. fenced ```` ```python ```` blocks (the `python` tool's code) and ```` ```bash ````
//!    / ```` ```sh ```` blocks (the `shell` tool's command), one call each in order,
//!    when the prose around them is short, or, for several blocks, the prose up to the
//!    last one: a final answer that quotes the code it ran is longer and is left alone.
//!
//! The reply keeps the model's text exactly as it wrote it, calls included, so the
//! history shows the model the form that worked; [`prose`] is what a person reads of
//! it. Each call is marked [`CallForm::Text`] (its id is a fresh one starting with
//! [`PREFIX`], only so it cannot collide with a provider's). The mark is in the
//! transcript, so it survives a reopened session, and it is all the provider needs to
//! tell the model once how to call tools: when the history is sent, the result of the
//! *first* such call in the conversation carries [`NOTE`]. The loop has nothing to do;
//! it runs the call like any other (the `tool_call` event carries the form, so a UI can
//! say the call was recovered from text).
//!
//! ```
//! use sandalyst::model::chat_completions::text_calls::convert;
//! use sandalyst::model::{CallForm, Item, Reply, ToolSpec};
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
//! let (_, name, args) = reply.tool_calls().next().unwrap();
//! assert_eq!((name, args), ("python", r#"{"code":"print(1)"}"#));
//! assert!(matches!(reply.items[1], Item::ToolCall { form: CallForm::Text, .. }));
//! ```

use serde_json::{Map, Value};

use super::loose_json;
use crate::model::{CallForm, Item, Reply, ToolSpec};

/// How the id of a call recovered from text begins (an id apart from a provider's; the
/// call's [`CallForm`] says how it was made).
pub const PREFIX: &str = "text_call_";

/// What the model is told, once, with the result of its first call written as text.
pub const NOTE: &str = "[Note: you wrote this tool call as text in your message. It was recognised and run this time, \
but call tools through the tool-calling interface (a structured tool call), not as JSON or code in your message text: \
text that only looks like a call may be taken for your final answer.]";

/// The longest prose around fenced code blocks for them to count as calls.
const MAX_PROSE: usize = 600;

/// The id of the first call in `items` that was written as text: its result is the
/// one that carries [`NOTE`].
pub fn first_text_call(items: &[Item]) -> Option<&str> {
    items.iter().find_map(|i| match i {
        Item::ToolCall {
            call_id,
            form: CallForm::Text,
            ..
        } => Some(call_id.as_str()),
        _ => None,
    })
}

/// `reply` with tool calls written in its text made into calls (see the module doc);
/// unchanged when it has structured calls, no text call is found or no tools were
/// offered. The model's text stays as it wrote it, calls included: the history then
/// shows the model the form that worked (a person sees [`prose`]).
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
    let Some((calls, _)) = find(text, tools) else {
        return reply;
    };
    let nonce = format!("{:08x}", rand::random::<u32>());
    let calls = calls
        .into_iter()
        .enumerate()
        .map(|(n, (name, arguments))| Item::ToolCall {
            call_id: format!("{PREFIX}{nonce}_{n}").into(),
            name,
            arguments: Value::Object(arguments).to_string(),
            form: CallForm::Text,
        });
    reply.items.splice(pos + 1..pos + 1, calls);
    reply
}

/// What a person reads of a reply whose calls were written in its text: the prose
/// around them; `None` when `text` holds no call of `tools`.
pub fn prose(text: &str, tools: &[ToolSpec]) -> Option<String> {
    find(text, tools).map(|(_, prose)| prose)
}

/// What a person reads of `items[i]`: for assistant text followed by the calls that
/// were recovered from it, the prose around them; `None` for anything else (the item
/// is shown as it is).
pub fn shown_text(items: &[Item], i: usize) -> Option<String> {
    match items.get(i) {
        Some(Item::Assistant { text }) => shown(text, &items[i + 1..]),
        _ => None,
    }
}

/// The prose of assistant `text` when the items `following` it start with calls
/// recovered from it. The calls themselves say which tools and arguments to look
/// for, so this needs no tool list.
pub fn shown<'a>(text: &str, following: impl IntoIterator<Item = &'a Item>) -> Option<String> {
    let specs: Vec<ToolSpec> = following
        .into_iter()
        .map_while(|item| match item {
            Item::ToolCall {
                name,
                arguments,
                form: CallForm::Text,
                ..
            } => Some((name, arguments)),
            _ => None,
        })
        .map(|(name, arguments)| {
            let keys: Vec<String> = serde_json::from_str::<Map<String, Value>>(arguments)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            let props: Map<String, Value> = keys
                .iter()
                .map(|k| (k.clone(), serde_json::json!({"type": "string"})))
                .collect();
            ToolSpec {
                name: name.clone(),
                description: String::new(),
                parameters: serde_json::json!({"type": "object", "properties": props, "required": keys.first().map(|k| vec![k.clone()]).unwrap_or_default()}),
            }
        })
        .collect();
    if specs.is_empty() {
        return None;
    }
    prose(text, &specs)
}

type Call = (String, Map<String, Value>);

/// The calls written in `text` and the prose left around them.
fn find(text: &str, tools: &[ToolSpec]) -> Option<(Vec<Call>, String)> {
    // 1. The special markers of chat templates: Hermes and Qwen `<tool_call>{...}
    // </tool_call>`, Llama 3.1 `<function=NAME>{...}</function>` and
    // `<|python_tag|>CODE`, Mistral `[TOOL_CALLS] [...]`, and tags named after a
    // tool (`<tools><python>CODE</python></tools>`).
    if let Some(found) = tagged(text, tools) {
        return Some(found);
    }
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix("[TOOL_CALLS]") {
        let v = loose_json::parse(rest)?;
        return from_value(&v, tools).map(|c| (c, String::new()));
    }
    if let Some(rest) = trimmed.strip_prefix("<|python_tag|>") {
        let rest = rest.trim().trim_end_matches("<|eom_id|>").trim();
        if let Some(v) = loose_json::parse(rest) {
            return from_value(&v, tools).map(|c| (c, String::new()));
        }
        return code_call("python", rest, tools).map(|c| (vec![c], String::new()));
    }

    // 2. JSON, strict or as Python writes it (triple quotes, single quotes, trailing
    // commas): the whole text, fenced blocks, or an object inside the prose.
    if let Some(v) = loose_json::parse(text) {
        return from_value(&v, tools).map(|c| (c, String::new()));
    }
    let blocks = fenced_blocks(text);
    let mut calls = Vec::new();
    let mut spans = Vec::new();
    for b in &blocks {
        let jsonish = matches!(b.lang.as_str(), "" | "json" | "tool_call" | "tool")
            || (code_tool(&b.lang).is_some() && b.body.trim_start().starts_with('{'));
        if jsonish {
            if let Some(c) = loose_json::parse(&b.body).and_then(|v| from_value(&v, tools)) {
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
            if let Some((v, used)) = loose_json::parse_prefix(&text[i..]) {
                if let Some(c) = from_value(&v, tools) {
                    let (mut start, mut end) = (i, i + used);
                    // `{{"name": ...}}`: the doubled braces of the example call in
                    // Qwen's chat template, copied (the model closed only one of them).
                    if text[..start].ends_with('{') {
                        start -= 1;
                        let after = text[end..].trim_start();
                        if after.starts_with('}') {
                            end = text.len() - after.len() + 1;
                        }
                    }
                    return Some((c, tidy(&without(text, std::slice::from_ref(&(start..end))))));
                }
            }
        }
    }

    // 3. Fenced code blocks for the python or shell tool, run in order, when the
    // prose around them is short: a final answer that quotes the code it ran is
    // longer and is left alone.
    let code: Vec<&Block> = blocks
        .iter()
        .filter(|b| code_tool(&b.lang).is_some())
        .collect();
    if code.is_empty() || code.iter().all(|b| b.body.trim().is_empty()) {
        return None;
    }
    let spans: Vec<_> = code.iter().map(|b| b.span.clone()).collect();
    let prose = tidy(&without(text, &spans));
    // Several blocks with short steps between them are a plan to run, whatever the
    // model writes after the last one (small models go on to make up the results).
    let last = spans.last().map_or(0, |s| s.start);
    let before = tidy(&without(&text[..last], &spans[..spans.len() - 1]));
    let plan = code.len() > 1 && before.chars().count() <= MAX_PROSE;
    if prose.chars().count() > MAX_PROSE && !plan {
        return None;
    }
    let calls = code
        .iter()
        .filter(|b| !b.body.trim().is_empty())
        .map(|b| code_call(code_tool(&b.lang)?, &b.body, tools))
        .collect::<Option<Vec<_>>>()?;
    Some((calls, prose))
}

/// The tool a fenced block's language or a tag's name stands for.
fn code_tool(lang: &str) -> Option<&'static str> {
    match lang {
        "python" | "py" | "python3" | "ipython" => Some("python"),
        "bash" | "sh" | "shell" | "console" => Some("shell"),
        _ => None,
    }
}

/// A call of `tool` with `code` as its main argument (the code or the command).
fn code_call(tool: &str, code: &str, tools: &[ToolSpec]) -> Option<Call> {
    let spec = tools.iter().find(|t| t.name == tool)?;
    let mut args = Map::new();
    args.insert(main_param(spec)?, Value::String(code.to_string()));
    Some((spec.name.clone(), args))
}

/// The body of a tag, without a code fence around it (`<python>```python ...```</python>`).
fn unfenced(body: &str) -> String {
    let t = body.trim();
    if let [b] = fenced_blocks(t).as_slice() {
        if b.span.start == 0 && b.span.end >= t.len() {
            return b.body.clone();
        }
    }
    body.strip_prefix('\n').unwrap_or(body).to_string()
}

/// Calls between `<tool_call>` and `</tool_call>` (a JSON call), `<function=NAME>`
/// and `</function>` (the arguments), or a tag named after a tool (`<python>` code
/// `</python>`, `<bash>`), any of them inside `<tools>…</tools>`; and the prose around
/// them. None when there are none, or one does not parse (the text is then left as
/// it is).
fn tagged(text: &str, tools: &[ToolSpec]) -> Option<(Vec<Call>, String)> {
    const CODE_TAGS: [&str; 4] = ["python", "bash", "sh", "shell"];
    let mut calls = Vec::new();
    let mut prose = String::new();
    let mut rest = text;
    loop {
        // The first opening tag of any kind.
        let mut first: Option<(usize, &str)> = None;
        for tag in [
            "<tool_call>",
            "<function=",
            "<function ",
            "<tools>",
            "</tools>",
        ]
        .into_iter()
        .chain(["<python>", "<bash>", "<sh>", "<shell>"])
        {
            if let Some(at) = rest.find(tag) {
                if first.is_none_or(|(f, _)| at < f) {
                    first = Some((at, tag));
                }
            }
        }
        let Some((start, tag)) = first else { break };
        prose.push_str(&rest[..start]);
        let inner = &rest[start + tag.len()..];
        match tag {
            // The wrapper only groups calls; a JSON call may sit right inside it, as in
            // the tool list of the model's chat template.
            "<tools>" | "</tools>" => {
                rest = inner;
                let t = inner.trim_start();
                if tag == "<tools>" && (t.starts_with('{') || t.starts_with('[')) {
                    if let Some((v, used)) = loose_json::parse_prefix(inner) {
                        if let Some(c) = from_value(&v, tools) {
                            calls.extend(c);
                            rest = &inner[used..];
                        }
                    }
                }
            }
            "<tool_call>" => {
                let (body, after) = split_at_close(inner, "</tool_call>");
                let v = loose_json::parse(body)?;
                calls.extend(from_value(&v, tools)?);
                rest = after;
            }
            // `<function name="python" arguments='{"code": "..."}'>` (or `/>`), the
            // XML-like form a small model wrote inside `<tools>`.
            "<function " => {
                let (name, args, after) = function_tag(inner)?;
                let spec = tool_named(&name, tools)?;
                calls.push((spec.name.clone(), args));
                rest = after;
            }
            "<function=" => {
                let close = inner.find('>')?;
                let spec = tool_named(&inner[..close], tools)?;
                let (body, after) = split_at_close(&inner[close + 1..], "</function>");
                let Value::Object(args) = loose_json::parse(body)? else {
                    return None;
                };
                calls.push((spec.name.clone(), args));
                rest = after;
            }
            _ => {
                let name = tag.trim_matches(['<', '>']);
                debug_assert!(CODE_TAGS.contains(&name));
                let (body, after) = split_at_close(inner, &format!("</{name}>"));
                let body = unfenced(body);
                if body.trim().is_empty() {
                    return None;
                }
                calls.push(code_call(code_tool(name)?, &body, tools)?);
                rest = after;
            }
        }
    }
    if calls.is_empty() {
        return None;
    }
    prose.push_str(rest);
    Some((calls, tidy(&prose)))
}

/// The tool name, the arguments and what follows of `<function name="NAME"
/// arguments='{...}'>` (after `<function `). The arguments' quote may appear inside
/// them (code with quotes of its own), so they end at the first quote that closes a
/// JSON object and is followed by the tag's end.
fn function_tag(inner: &str) -> Option<(String, Map<String, Value>, &str)> {
    let name_at = inner.find("name=")? + 5;
    let q = inner[name_at..]
        .chars()
        .next()
        .filter(|c| *c == '"' || *c == '\'')?;
    let name_body = &inner[name_at + 1..];
    let name = name_body[..name_body.find(q)?].to_string();
    let args_at = inner.find("arguments=")? + 10;
    let q = inner[args_at..]
        .chars()
        .next()
        .filter(|c| *c == '"' || *c == '\'')?;
    let body = &inner[args_at + 1..];
    for (end, _) in body.match_indices(q) {
        let tail = body[end + 1..].trim_start();
        let close = if tail.starts_with("/>") {
            2
        } else if tail.starts_with('>') {
            1
        } else {
            continue;
        };
        if let Some(Value::Object(args)) = loose_json::parse(&body[..end]) {
            let after = &tail[close..];
            let after = after
                .trim_start()
                .strip_prefix("</function>")
                .unwrap_or(after);
            return Some((name, args, after));
        }
    }
    None
}

/// `inner` up to `close` and what follows it; all of it when the tag is not closed
/// (a reply that stopped there).
fn split_at_close<'t>(inner: &'t str, close: &str) -> (&'t str, &'t str) {
    match inner.find(close) {
        Some(end) => (&inner[..end], &inner[end + close.len()..]),
        None => (inner, ""),
    }
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

pub(crate) struct Block {
    /// Lower-cased, e.g. `python`; empty for a bare fence.
    pub(crate) lang: String,
    pub(crate) body: String,
    /// Byte range of the whole block, fences included.
    span: std::ops::Range<usize>,
}

/// The ```` ``` ```` blocks of `text` that are closed.
pub(crate) fn fenced_blocks(text: &str) -> Vec<Block> {
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
        let after = format!(
            "```python\nprint(1)\n```\n{}",
            "The anomalies are explained here. ".repeat(20)
        );
        assert_eq!(calls(&after), None);
        let quoted = format!(
            "{}\n```python\nprint(1)\n```\nthen\n```python\nprint(2)\n```\n",
            "The anomalies are explained below. ".repeat(20)
        );
        assert_eq!(calls(&quoted), None);
        assert_eq!(calls(r#"{"name": "Alice", "age": 3}"#), None);
        assert_eq!(calls(r#"{"tool": "python", "colour": "red"}"#), None);
        assert_eq!(calls("```json\n{\"rows\": 3}\n```"), None);
        assert_eq!(calls("Done. See output/report.md."), None);
    }

    #[test]
    fn several_code_blocks_are_calls_in_order_and_the_text_is_kept_whole() {
        let text = "First load it:\n```python\nimport pandas as pd\n```\nThen list:\n```bash\nls output\n```\n";
        assert_eq!(
            calls(text),
            Some((
                vec![
                    (
                        "python".to_string(),
                        json!({"code": "import pandas as pd\n"})
                    ),
                    ("shell".to_string(), json!({"command": "ls output\n"})),
                ],
                "First load it:\nThen list:".to_string()
            ))
        );
        let reply = Reply {
            items: vec![Item::Assistant { text: text.into() }],
            ..Reply::default()
        };
        let reply = convert(reply, &tools());
        assert_eq!(reply.items[0], Item::Assistant { text: text.into() });
        assert_eq!(reply.tool_calls().count(), 2);
        assert_eq!(
            prose(text, &tools()).as_deref(),
            Some("First load it:\nThen list:")
        );
    }

    /// Replies of a real model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, under llama.cpp's
    /// server: `scripts/real-model.sh`), copied from transcripts of Sandalyst's runs or
    /// from the server's answer to a request (`replies/README.md`).
    mod real_replies {
        use super::*;

        fn code_of(text: &str) -> (String, String) {
            let (calls, prose) = calls(text).unwrap_or_else(|| panic!("no call in:\n{text}"));
            assert_eq!(calls.len(), 1);
            assert_eq!(calls[0].0, "python");
            (calls[0].1["code"].as_str().unwrap().to_string(), prose)
        }

        /// Every call recovered from `text`, as (tool, code or command), and the prose.
        fn all_calls(text: &str) -> (Vec<(String, String)>, String) {
            let (calls, prose) = calls(text).unwrap_or_else(|| panic!("no call in:\n{text}"));
            let calls = calls
                .into_iter()
                .map(|(tool, args)| {
                    let key = if tool == "shell" { "command" } else { "code" };
                    let main = args[key].as_str().unwrap().to_string();
                    assert_eq!(args.as_object().unwrap().len(), 1, "{args}");
                    (tool, main)
                })
                .collect();
            (calls, prose)
        }

        fn py(code: &str) -> (String, String) {
            ("python".to_string(), code.to_string())
        }

        #[test]
        fn a_python_dict_with_single_quotes_and_trailing_commas() {
            // Request: requests/qwen-python-dict-single-quotes-trailing-commas.json.
            let text = include_str!("replies/qwen-python-dict-single-quotes-trailing-commas.txt");
            assert_eq!(
                all_calls(text),
                (
                    vec![py("import pandas as pd\n\n# Load the input file\ndf = pd.read_csv('input/building_energy.csv')\n\n# Group by date and sum the energy_kwh\ndaily_energy = df.groupby('timestamp')['energy_kwh'].sum().reset_index()\n\n# Rename the columns\ndaily_energy.columns = ['date', 'energy_kwh']\n\n# Save the daily totals to output/daily_energy.csv\ndaily_energy.to_csv('output/daily_energy.csv', index=False)\n")],
                    String::new()
                )
            );
        }

        #[test]
        fn a_json_call_inside_tools_tags_with_raw_line_breaks_in_its_code() {
            // Request: requests/qwen-json-in-tools-tags-raw-newlines.json. Two of the
            // code's line breaks are written as line breaks, the others as `\n`.
            let text = include_str!("replies/qwen-json-in-tools-tags-raw-newlines.txt");
            assert_eq!(
                all_calls(text),
                (
                    vec![py("import pandas as pd\nimport matplotlib.pyplot as plt\n\n# Load the data\ndata = pd.read_csv('input/building_energy.csv')\n\n# Show the first rows\nprint(data.head())\n\n# Compute the total energy_kwh per day\ndaily_energy = data.groupby('timestamp')['energy_kwh'].sum()\n\n# Plot the daily totals\nplt.figure(figsize=(10, 6))\ndaily_energy.plot(kind='bar', color='blue')\nplt.title('Daily Energy Consumption')\nplt.xlabel('Timestamp')\nplt.ylabel('Energy (kWh)')\nplt.xticks(rotation=45)\nplt.tight_layout()\nplt.savefig('output/daily_energy.png')\nplt.show()")],
                    String::new()
                )
            );
        }

        #[test]
        fn python_tags() {
            // Request: requests/qwen-python-tags.json (a system prompt naming the tags and
            // an earlier exchange in which a <bash> tag was used).
            let text = include_str!("replies/qwen-python-tags.txt");
            assert_eq!(
                all_calls(text),
                (
                    vec![py("import pandas as pd\n\n# Load the building_energy.csv file\ndf = pd.read_csv('input/building_energy.csv')\n\n# Convert the 'date' column to datetime\ndf['date'] = pd.to_datetime(df['date'])\n\n# Group by 'date' and sum the 'energy_kwh' column\ndaily_energy = df.groupby('date')['energy_kwh'].sum().reset_index()\n\n# Save the daily energy totals to output/daily_energy.csv\ndaily_energy.to_csv('output/daily_energy.csv', index=False)\n")],
                    String::new()
                )
            );
        }

        #[test]
        fn three_python_blocks_then_made_up_results() {
            // Request: requests/qwen-three-python-blocks-then-invented-results.json (a
            // system prompt saying each block is run, a three-step task). The reply
            // stopped at the request's cap of 450 tokens, inside the results it made up.
            let text = include_str!("replies/qwen-three-python-blocks-then-invented-results.txt");
            let (calls, prose) = all_calls(text);
            assert_eq!(
                calls,
                vec![
                    py("import pandas as pd\n\n# Load the data\ndf = pd.read_csv('input/building_energy.csv')\n\n# Display the first rows\nprint(df.head())\n\n# Display the column types\nprint(df.dtypes)\n"),
                    py("# Convert the timestamp column to datetime\ndf['timestamp'] = pd.to_datetime(df['timestamp'])\n\n# Set the timestamp as the index\ndf.set_index('timestamp', inplace=True)\n\n# Compute the total energy_kwh per day\ndaily_totals = df.resample('D').sum()\n\n# Display the daily totals\nprint(daily_totals)\n"),
                    py("import matplotlib.pyplot as plt\n\n# Plot the daily totals\ndaily_totals.plot(kind='bar', figsize=(10, 6))\nplt.title('Daily Energy Consumption')\nplt.xlabel('Date')\nplt.ylabel('Energy (kWh)')\nplt.grid(True)\nplt.tight_layout()\n\n# Save the chart as output/daily_energy.png\nplt.savefig('output/daily_energy.png')\n"),
                ]
            );
            assert!(
                prose.starts_with(
                    "First, let's inspect the input/building_energy.csv file:\n\nNext,"
                ),
                "{prose}"
            );
        }

        #[test]
        fn a_call_in_the_doubled_braces_of_the_chat_template() {
            // Request: requests/qwen-template-call-with-doubled-braces.json (no system
            // prompt: the template's own, whose example call is written `{{"name": ...}}`;
            // an earlier structured call and its real output in the history). The model
            // doubled the opening brace only.
            let text = include_str!("replies/qwen-template-call-with-doubled-braces.txt");
            assert_eq!(
                all_calls(text),
                (
                    vec![py("import pandas as pd\ndf = pd.read_csv('input/building_energy.csv')\ndf['timestamp'] = pd.to_datetime(df['timestamp'])\ndf.set_index('timestamp', inplace=True)\ndf['daily_energy'] = df['energy_kwh'].resample('D').sum()\ndf.to_csv('output/daily_energy.csv', index=False)\nprint(df.head())")],
                    String::new()
                )
            );
        }

        #[test]
        fn a_bare_call_whose_code_string_never_closes_is_not_run() {
            // Request: requests/qwen0.5b-bare-call-string-never-closed.json (the 0.5B
            // model; an earlier structured call, rendered by the template as
            // <tool_call>…</tool_call>, and its real output in the history). The model
            // dropped the tags, then ended (eos) with the code's string unclosed and one
            // brace: not a whole call, so nothing is run (the loop says so instead, see
            // agent::ending::unrun_call).
            let text = include_str!("replies/qwen0.5b-bare-call-string-never-closed.txt");
            assert!(text
                .starts_with("{\"name\": \"python\", \"arguments\": {\"code\": \"import pandas"));
            assert!(text.ends_with("index=False)}"));
            assert_eq!(calls(text), None);
        }

        #[test]
        fn fenced_json_with_the_code_in_triple_quotes() {
            let (code, prose) = code_of(include_str!("replies/qwen-fenced-json-triple-quotes.txt"));
            assert!(code.starts_with("import pandas as pd\nfrom matplotlib import pyplot as plt\n"));
            assert!(code.ends_with("plt.savefig('output/revenue_by_region.png')\n"));
            assert_eq!(prose, "");
        }

        #[test]
        fn fenced_json_whose_triple_quotes_never_close_then_prose() {
            let text = include_str!("replies/qwen-fenced-json-unclosed-triple-quotes.txt");
            let (code, prose) = code_of(text);
            assert!(code.starts_with("import pandas as pd\nimport numpy as np\n"));
            // The code runs to the fence; the model's escaped quote stays as it wrote it.
            assert!(code.contains(
                "f.write('The data is an hourly export from our building\\'s energy meter.\\n\\n')"
            ));
            assert!(code.trim_end().ends_with(
                "f.write(f'Event from {start} to {end} with energy used {energy} kWh.\\n')"
            ));
            assert!(prose.starts_with("### Output files"), "{prose}");
        }

        #[test]
        fn a_function_tag_with_the_arguments_in_an_attribute() {
            // The form of a reply of the reference case (seed 1): its first lines as the
            // model wrote them; the model then looped on imports, so the end here is
            // the form's own (the quote and the tag closed).
            let text = "<tools>\n  <function name=\"python\" arguments='{\"code\": \"import pandas as pd\\nimport numpy as np\\nimport matplotlib.pyplot as plt\\ndf = pd.read_csv('input/building_energy.csv')\\nprint(df[df['energy_kwh'] > 3].head())\"}'>\n  </function>\n</tools>";
            let (code, prose) = code_of(text);
            assert_eq!(
                code,
                "import pandas as pd\nimport numpy as np\nimport matplotlib.pyplot as plt\ndf = pd.read_csv('input/building_energy.csv')\nprint(df[df['energy_kwh'] > 3].head())"
            );
            assert_eq!(prose, "");
        }

        #[test]
        fn prose_then_fenced_json_with_triple_quotes() {
            let text = include_str!("replies/qwen-prose-then-fenced-json-triple-quotes.txt");
            let (code, prose) = code_of(text);
            assert!(code.ends_with("daily_totals.to_csv('output/daily_energy.csv', index=False)\n"));
            assert!(prose.starts_with("The output/daily_energy.csv file does not exist yet."));
        }

        #[test]
        fn unclosed_triple_quotes_then_an_invented_result() {
            let text =
                include_str!("replies/qwen-prose-fenced-json-unclosed-then-invented-result.txt");
            let (code, prose) = code_of(text);
            assert!(code
                .trim_end()
                .ends_with("plt.savefig('output/daily_energy.png')"));
            // The result it made up stays words; the code runs and shows the truth.
            assert!(
                prose.ends_with("The day with the most energy is: 2024-05-06"),
                "{prose}"
            );
        }
    }
}
