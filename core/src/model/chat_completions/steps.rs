//! Structured steps: each turn one JSON object, `{"thought": …, "action": …, …}`,
//! where the action is one of the session's tools (its arguments beside it) or the
//! end of the ask. In [`CallMode::Schema`] the object is held to a JSON schema sent as
//! `response_format` (llama.cpp turns it into a grammar, so a small model's reply can
//! be nothing else); in [`CallMode::Text`] the same form is asked for in words and read
//! leniently. Either way the reply becomes the same typed items as a native call
//! (assistant text for the thought, a [`Item::ToolCall`]), so the transcript,
//! approvals, re-runs and notebooks do not change.
//!
//! The history goes back in the same form: a call as the step object the model would
//! have written, its result as a user message, so a server that never saw `tools` is
//! never sent `tool_calls` or `tool` messages.

use serde_json::{json, Map, Value};

use super::anomalies::{self, Anomalies};
use super::loose_json;
use super::mend::{self, Mend};
use crate::conversation::{Answer, CallForm, CallMode, Delta, Ending, ImagePart, Item, ToolSpec};
use crate::model::http::{data_url, tool_images};
use crate::model::tool_args;
use crate::protocol::{tool_source, PRELUDE_CALL_ID, TEXT_CUT};

/// The step's own keys; a tool's arguments sit beside them.
const THOUGHT: &str = "thought";
const ACTION: &str = "action";
/// The two ends of an ask, and what each carries.
pub const FINAL_ANSWER: &str = "final_answer";
pub const CANNOT_FINISH: &str = "cannot_finish";
/// A thought is a sentence or two: bounded so a small model cannot think forever.
const THOUGHT_MAX: u64 = 400;
/// One argument's text (a cell's code): bounded, so a model that loops inside its
/// code string still closes the object, and the step runs and fails where it was
/// cut instead of running to the token cap unread.
pub const ARGUMENT_MAX: u64 = 4000;
/// The argument a step writes as a list of lines, one JSON string a line: a cell's
/// code. Written as one string, a 1.5B model put whole cells on one line (no `\n`
/// escapes) and looped inside it; a line per string is how code is read and written.
pub const LINES_ARG: &str = "code";
/// Bounds of the lines: a model that loops still closes the object.
pub const LINES_MAX: u64 = 60;
pub const LINE_MAX: u64 = 1000;

/// The JSON schema of one step: one branch per tool, then the end the turn allows
/// (the final answer when no named output is missing, `cannot_finish` when the model
/// may say why they cannot be made, none otherwise). After a repeated call, while a
/// named output is missing, a tool step's thought is the app's: the model's code
/// follows a thought it did not write ([`guided_thought`]); else the caller's `guide`
/// ([`anomalies::thought`]). The app's [`Mend`] comes beside the tools, or alone when
/// the model is stuck; `method`: its method for abnormal events beside the code tool.
pub fn schema(
    tools: &[ToolSpec],
    answer: &Answer,
    repeats: u32,
    failed: Option<&str>,
    mend: Option<&Mend>,
    method: bool,
    guide: Option<&str>,
) -> Value {
    let fixing = matches!(mend, Some(Mend::Fix(_)));
    let guided =
        guided_thought(answer, repeats, failed, fixing).or_else(|| guide.map(str::to_string));
    let thought = match guided {
        Some(g) => json!({"type": "string", "enum": [g]}),
        None => json!({"type": "string", "maxLength": THOUGHT_MAX}),
    };
    let tools = if mend.is_some_and(Mend::alone) || answer_only(answer, repeats) {
        &[][..]
    } else {
        tools
    };
    let mut branches: Vec<Value> = tools
        .iter()
        .map(|t| {
            let mut props = Map::new();
            props.insert(THOUGHT.into(), thought.clone());
            props.insert(ACTION.into(), json!({"type": "string", "enum": [t.name]}));
            let mut required = vec![json!(THOUGHT), json!(ACTION)];
            if let Some(p) = t.parameters.get("properties").and_then(Value::as_object) {
                for (k, v) in p {
                    let mut v = v.clone();
                    if k == LINES_ARG && v["type"] == "string" {
                        v = json!({
                            "type": "array",
                            "items": {"type": "string", "maxLength": LINE_MAX},
                            "maxItems": LINES_MAX,
                        });
                    } else if v["type"] == "string" && v.get("maxLength").is_none() {
                        v["maxLength"] = json!(ARGUMENT_MAX);
                    }
                    props.insert(k.clone(), v);
                }
            }
            if let Some(r) = t.parameters.get("required").and_then(Value::as_array) {
                required.extend(r.iter().cloned());
            }
            branch(props, required)
        })
        .collect();
    // The app's method for abnormal events, in an ask for them, goes with the code tool.
    if method && mend::code_tool(tools).is_some() {
        branches.push(anomalies::branch(thought.clone()));
    }
    if let Some(mend) = mend {
        branches.push(mend.branch(thought));
    }
    if let Some((action, field)) = end_of(answer) {
        let mut props = Map::new();
        props.insert(
            THOUGHT.into(),
            json!({"type": "string", "maxLength": THOUGHT_MAX}),
        );
        props.insert(ACTION.into(), json!({"type": "string", "enum": [action]}));
        props.insert(field.into(), json!({"type": "string"}));
        branches.push(branch(
            props,
            vec![json!(THOUGHT), json!(ACTION), json!(field)],
        ));
    }
    if branches.len() == 1 {
        return branches.remove(0);
    }
    json!({"anyOf": branches})
}

/// Calls that repeated earlier ones, in a row or by turns, after which a turn whose
/// answer is allowed offers only the answer: the calls go round and the task's files
/// are written (a 1.5B model cycled through two calls for 24 turns after its chart was
/// saved, r22). The write-up a turn limit asks for, sooner.
pub const ANSWER_AFTER_REPEATS: u32 = 2;

/// Whether this turn offers only the final answer ([`ANSWER_AFTER_REPEATS`]).
pub fn answer_only(answer: &Answer, repeats: u32) -> bool {
    *answer == Answer::Open && repeats >= ANSWER_AFTER_REPEATS
}

/// The thought a step must start with after the model repeated its call (or its
/// reply looped) while a named output is missing: a 1.5B model ran
/// `baseline.dropna(inplace=True)` fifteen times, told each time; with the next file
/// as its thought its code turns to it. After a failed cell, the thought names its
/// error and where (`failed`, from [`last_error`]): told "do not run it again", a
/// 1.5B model ran the same failing cell again; its own thought is what it follows.
pub fn guided_thought(
    answer: &Answer,
    repeats: u32,
    failed: Option<&str>,
    fixing: bool,
) -> Option<String> {
    let missing = match answer {
        Answer::NotYet { missing } | Answer::OrWhyNot { missing } => missing,
        Answer::Open => return None,
    };
    let next = missing.first().filter(|_| repeats > 0)?;
    Some(match failed {
        Some(error) if fixing => format!(
            "The last cell failed ({error}); that line written another way, so the cell writes {next}."
        ),
        Some(error) => format!(
            "The last cell failed ({error}); a new cell that avoids that error and writes {next}."
        ),
        None => format!("A new step, not the last one again: the code that writes {next}."),
    })
}

/// The error of the last step, when the last thing in the conversation is a failed
/// call's result: its exception line and the line of code it points at, shortened.
pub fn last_error(items: &[Item]) -> Option<String> {
    let (exception, at) = last_failure(items)?;
    let said = match at {
        Some(code) => format!("{exception} at `{code}`"),
        None => exception.to_string(),
    };
    Some(said.chars().take(200).collect())
}

/// The exception line alone of [`last_error`]: where the failing line, shown again,
/// would be copied.
pub fn last_exception(items: &[Item]) -> Option<String> {
    last_failure(items).map(|(exception, _)| exception.chars().take(200).collect())
}

/// The last failed call's exception line, and the cell's line the traceback points at
/// (the line after `Cell In[7], line 3`).
fn last_failure(items: &[Item]) -> Option<(&str, Option<&str>)> {
    let Some(Item::ToolOutput {
        output,
        is_error: true,
        ..
    }) = items.last()
    else {
        return None;
    };
    let lines: Vec<&str> = output.lines().map(str::trim).collect();
    let exception = *lines.iter().rev().find(|l| {
        l.split_once(':')
            .is_some_and(|(k, _)| k.ends_with("Error") || k.ends_with("Exception"))
    })?;
    let at = lines
        .iter()
        .rposition(|l| l.starts_with("Cell In["))
        .and_then(|i| lines.get(i + 1).copied())
        .filter(|l| !l.is_empty());
    Some((exception, at))
}

fn branch(props: Map<String, Value>, required: Vec<Value>) -> Value {
    json!({
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    })
}

/// The end a turn may take, and the key of its text.
fn end_of(answer: &Answer) -> Option<(&'static str, &'static str)> {
    match answer {
        Answer::Open => Some((FINAL_ANSWER, "answer")),
        Answer::OrWhyNot { .. } => Some((CANNOT_FINISH, "reason")),
        Answer::NotYet { .. } => None,
    }
}

/// `response_format` for a schema turn: OpenAI's form, which llama.cpp, vLLM, LM
/// Studio and Ollama's compatible endpoint take too.
pub fn response_format(schema: Value) -> Value {
    json!({
        "type": "json_schema",
        "json_schema": {"name": "step", "strict": true, "schema": schema},
    })
}

/// What the system message adds in a step mode: the form, the session's actions and
/// how a task ends. The same on every turn of an ask, so a local server's prompt
/// cache keeps the whole history (a system message that changed with the files
/// still missing made llama.cpp read the whole prompt again: minutes on a CPU); what
/// this turn allows is [`turn_note`], at the end. Short: a small model's context is
/// small. `method`: the app's method for abnormal events is offered ([`anomalies::offered`]).
pub fn format_note(tools: &[ToolSpec], method: bool) -> String {
    let mut actions: Vec<String> = tools
        .iter()
        .map(|t| {
            let args: Vec<String> = t
                .parameters
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(|k| format!("\"{k}\"")).collect())
                .unwrap_or_default();
            format!(
                "\"{}\" (with {}): {}",
                t.name,
                args.join(", "),
                t.description
            )
        })
        .collect();
    if method {
        actions.push(anomalies::described());
    }
    actions.push(format!(
        "\"{FINAL_ANSWER}\" (with \"answer\"): the answer for the user, once the work is done \
         and every file the task names is written"
    ));
    format!(
        "Reply with exactly one JSON object per turn, nothing else:\n\
         {{\"thought\":\"one short sentence: what this step does\",\"action\":\"python\",\"code\":[\"total = df['x'].sum()\",\"print(total)\"]}}\n\
         Actions:\n- {}\n\
         Each step runs, you see its output in the next message, then you take the next step. \
         Write the code as a list of lines, one JSON string a line (in Python, prefer single \
         quotes); at most {LINES_MAX} lines a step (write a long file over several steps).",
        actions.join("\n- ")
    )
}

/// What this turn allows, when it is not every action: said after the last message
/// (the schema enforces it; the words tell the model why).
pub fn turn_note(answer: &Answer, repeats: u32) -> Option<String> {
    match answer {
        Answer::Open if answer_only(answer, repeats) => Some(
            "(This turn: the final answer, from the results above: your last calls repeated ones you had made.)"
                .into(),
        ),
        Answer::Open => None,
        Answer::NotYet { missing } => Some(format!(
            "(This turn: no final answer yet; {} must be written first.)",
            missing.join(", ")
        )),
        Answer::OrWhyNot { missing } => Some(format!(
            "(This turn: no final answer yet; {} must be written first. Only if one truly \
             cannot be made from this data: the action \"{CANNOT_FINISH}\" (with \"reason\") says why.)",
            missing.join(", ")
        )),
    }
}

/// Whether the model has taken no step yet in this ask: no call since the last user
/// message but the app's own first cell.
pub fn first_step(items: &[Item]) -> bool {
    !items
        .iter()
        .rev()
        .take_while(|i| !matches!(i, Item::User { .. }))
        .any(|i| matches!(i, Item::ToolCall { call_id, .. } if call_id != PRELUDE_CALL_ID))
}

/// Add this turn's note at the end of the conversation: to the last user message, or
/// as one of its own.
pub fn add_turn_note(messages: &mut Vec<Value>, note: &str) {
    match messages.last_mut() {
        Some(m) if m["role"] == "user" => match &mut m["content"] {
            Value::String(text) => {
                text.push_str("\n\n");
                text.push_str(note);
            }
            Value::Array(parts) => parts.push(json!({"type": "text", "text": note})),
            _ => messages.push(json!({"role": "user", "content": note})),
        },
        _ => messages.push(json!({"role": "user", "content": note})),
    }
}

/// A step reply's text as items and how it ended, its call under `call_id`; `None`
/// when it is not a step object naming an offered tool or an end. An end the turn did
/// not offer (text mode cannot forbid it) is still read: the loop decides what a
/// premature answer gets.
pub fn parse(
    text: &str,
    tools: &[ToolSpec],
    call_id: &str,
    mend: Option<&Mend>,
) -> Option<(Vec<Item>, Ending)> {
    let exact = serde_json::from_str::<Value>(text.trim()).ok();
    let written = exact.is_some().then(|| text.trim());
    let v = exact
        .or_else(|| loose_json::parse(strip_fence(text)))
        .or_else(|| first_object(strip_fence(text)))?;
    let mut obj = match v {
        Value::Object(o) => o,
        Value::Array(a) => match a.into_iter().next()? {
            Value::Object(o) => o,
            _ => return None,
        },
        _ => return None,
    };
    let action = obj.remove(ACTION)?.as_str()?.to_string();
    let thought = match obj.remove(THOUGHT) {
        Some(Value::String(s)) => s.trim().to_string(),
        _ => String::new(),
    };
    if let Some((name, field)) = [(FINAL_ANSWER, "answer"), (CANNOT_FINISH, "reason")]
        .into_iter()
        .find(|(name, _)| *name == action)
    {
        let said = obj
            .remove(field)
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let mut items = Vec::new();
        if !thought.is_empty() {
            items.push(Item::Reasoning {
                summary: thought,
                encrypted_content: None,
            });
        }
        items.push(Item::Assistant { text: said });
        let ending = if name == FINAL_ANSWER {
            Ending::Answer
        } else {
            Ending::CannotFinish
        };
        return Some((items, ending));
    }
    // The app's step is a call of the code tool, with the whole cell.
    if let Some(mend) = mend.filter(|m| m.action() == action) {
        let (tool, code) = mend.apply(&obj)?;
        let mut arguments = json!({ LINES_ARG: code });
        if let Some(step) = written {
            arguments[AS_WRITTEN] = json!(step);
        }
        let arguments = arguments.to_string();
        return Some((
            call_items(thought, call_id, tool, arguments),
            Ending::Unmarked,
        ));
    }
    // The app's method: a call of the code tool with the cell it writes.
    if action == anomalies::ACTION {
        let tool = mend::code_tool(tools)?;
        let mut arguments = json!({ LINES_ARG: Anomalies::from_step(&obj)?.code() });
        if let Some(step) = written {
            arguments[AS_WRITTEN] = json!(step);
        }
        return Some((
            call_items(thought, call_id, tool, arguments.to_string()),
            Ending::Unmarked,
        ));
    }
    let tool = tools.iter().find(|t| t.name == action)?;
    // Arguments beside the action, or (a model's habit) nested under `arguments`.
    let mut arguments = match obj.remove("arguments") {
        Some(Value::Object(inner)) if obj.is_empty() => inner,
        Some(other) => {
            obj.insert("arguments".into(), other);
            obj
        }
        None => obj,
    };
    // A string argument written as a list of lines (the code's form, which a model
    // also used for the shell's command) is its lines joined.
    let strings = tool.parameters.get("properties").and_then(Value::as_object);
    for (k, v) in arguments.iter_mut() {
        let string = strings
            .and_then(|p| p.get(k))
            .is_some_and(|p| p["type"] == "string");
        if let (true, Value::Array(lines)) = (string, &*v) {
            let lines: Vec<String> = lines
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
            let lines = if k == LINES_ARG {
                mend::once(lines)
            } else {
                lines
            };
            *v = json!(lines.join("\n"));
        }
    }
    // A cell that sets the next file's placeholder ends with its write.
    let code = arguments.get(LINES_ARG).and_then(Value::as_str);
    if let Some(done) = mend.zip(code).and_then(|(m, c)| m.complete(&action, c)) {
        arguments.insert(LINES_ARG.into(), json!(done));
    }
    // A cell that calls the app's method gets its function (the history shows the
    // step as the model wrote it, not the function).
    let code = arguments.get(LINES_ARG).and_then(Value::as_str);
    if let Some(done) = code.and_then(anomalies::complete_cell) {
        arguments.insert(LINES_ARG.into(), json!(done));
        if let Some(step) = written {
            arguments.insert(AS_WRITTEN.into(), json!(step));
        }
    }
    let arguments = Value::Object(arguments).to_string();
    Some((
        call_items(thought, call_id, action, arguments),
        Ending::Unmarked,
    ))
}

/// A step's call as items: its thought (when it has one) as assistant text, then the call.
fn call_items(thought: String, call_id: &str, name: String, arguments: String) -> Vec<Item> {
    let mut items = Vec::new();
    if !thought.is_empty() {
        items.push(Item::Assistant { text: thought });
    }
    items.push(Item::ToolCall {
        call_id: call_id.into(),
        name,
        arguments,
        form: CallForm::Structured,
    });
    items
}

/// The first of several step objects written one after another (text mode: a 1.5B
/// model wrote its whole plan as four steps in one reply, and none of them ran). The
/// next turn shows what the first one did.
fn first_object(text: &str) -> Option<Value> {
    let at = text.find('{')?;
    let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
    values.next()?.ok().filter(Value::is_object)
}

/// Beside the code of a call the app made from its own step (`fix`, `write`): the
/// step as the model wrote it, which the history sends back as it was. Shown as the
/// `python` cell the app made of it, the step broke a server's prompt cache at the
/// model's reply, and a report's `TEXT` came back as Python with its escapes, which a
/// 1.5B model copied with them doubled at each turn (r23). The code tool reads only
/// its own field.
const AS_WRITTEN: &str = "step_as_written";

/// The comment that opens a step the app ran from a reply cut as a loop.
pub const SALVAGED: &str = "# (the app ran this step's lines up to where they began to repeat)";

/// A step whose reply was cut as a loop, as the step it meant: its thought, its
/// action and the lines of its code up to where they began to repeat (one copy of
/// the repeated block), under a comment that says so. A 1.5B model writing a good
/// cell repeated its last line until the cut; three such cuts ended the ask with
/// nothing run. `None` without a tool's action and at least one whole line.
pub fn salvage(text: &str, tools: &[ToolSpec], mend: Option<&Mend>) -> Option<String> {
    let action = string_after(text, ACTION)?;
    // The app's step keeps the field the schema held to one value (its line or file).
    let (lines_key, held) = match mend.filter(|m| m.action() == action) {
        Some(m) => {
            let (lines_key, key, value) = m.fields();
            (lines_key, Some((key, value.to_string())))
        }
        None => {
            tools.iter().find(|t| t.name == action)?;
            (LINES_ARG, None)
        }
    };
    let thought = string_after(text, THOUGHT).unwrap_or_default();
    let at = text.find(&format!("\"{lines_key}\""))?;
    let rest = text[at..].split_once('[')?.1;
    // The whole strings of the list, in order; the one the cut left open is dropped.
    let (mut lines, mut rest) = (Vec::new(), rest);
    loop {
        let mut de = serde_json::Deserializer::from_str(rest).into_iter::<String>();
        let Some(Ok(line)) = de.next() else {
            break;
        };
        lines.push(line);
        let Some(next) = rest[de.byte_offset()..].trim_start().strip_prefix(',') else {
            break;
        };
        rest = next;
    }
    let kept = before_the_loop(&lines);
    if kept.is_empty() {
        return None;
    }
    let mut code = vec![SALVAGED.to_string()];
    code.extend(kept.iter().cloned());
    let mut step = json!({THOUGHT: thought, ACTION: action, lines_key: code});
    if let Some((key, value)) = held {
        step[key] = json!(value);
    }
    Some(step.to_string())
}

/// What a report's text step (the app's `write` of a text file, [`Mend::text_key`])
/// cut by the token cap or a loop had written: the text up to its last whole line and a
/// line that says it was cut; or, when its lines ended repeating a block, up to one
/// copy of it, whole. A 1.5B model's 3,000-character report ran to the 2,048-token cap twice (r16)
/// and nothing of it was kept. `None` for any other step, or without a whole line.
pub fn salvage_text(text: &str, mend: Option<&Mend>, looped: bool) -> Option<String> {
    let key = mend?.text_key()?;
    if string_after(text, ACTION)? != mend?.action() {
        return None;
    }
    let at = text.find(&format!("\"{key}\""))? + key.len() + 2;
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    let body = rest.strip_prefix('"')?;
    // The JSON string as far as it goes: close it where it was cut (an escape cut in
    // half is dropped) and read it.
    let open = (0..=body.len().min(8)).find_map(|drop| {
        let end = body.len() - drop;
        body.is_char_boundary(end)
            .then(|| serde_json::from_str::<String>(&format!("\"{}\"", &body[..end])).ok())
            .flatten()
    });
    let (written, whole) = match string_after(text, key) {
        Some(w) => (w, true),
        None => (open?, false),
    };
    let mut lines: Vec<String> = written.lines().map(str::to_string).collect();
    if !whole {
        lines.pop(); // the line the cut ended inside
    }
    // A text that ends in a block of lines written again and again was ended by its
    // loop, not by the cap: it is kept to one copy of the block, whole (a 1.5B model's
    // limitations ran four lines round to the cap in three reports of one run, each
    // refused as cut, r25).
    let kept = before_the_loop(&lines).to_vec();
    let repeated = lines[kept.len()..]
        .iter()
        .filter(|l| !l.trim().is_empty())
        .count();
    if kept.iter().all(|l| l.trim().is_empty()) {
        return None;
    }
    let mut report = kept.join("\n").trim_end().to_string();
    if (looped || !whole) && repeated < 2 {
        report = format!("{report}\n\n{TEXT_CUT}\n");
    }
    let thought = string_after(text, THOUGHT).unwrap_or_default();
    let (_, held_key, held) = mend?.fields();
    Some(json!({THOUGHT: thought, ACTION: mend?.action(), held_key: held, key: report}).to_string())
}

/// `lines` up to where they begin to repeat a block to their end, with one copy of it.
fn before_the_loop(lines: &[String]) -> &[String] {
    let n = lines.len();
    for start in 0..n {
        for p in 1..=(n - start) / 2 {
            if (start + p..n).all(|i| lines[i] == lines[i - p]) {
                return &lines[..start + p];
            }
        }
    }
    lines
}

/// The JSON string value of `"key":` in a partial object.
fn string_after(text: &str, key: &str) -> Option<String> {
    let at = text.find(&format!("\"{key}\""))? + key.len() + 2;
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    serde_json::Deserializer::from_str(rest)
        .into_iter::<String>()
        .next()?
        .ok()
}

/// A step written inside a fence (text mode): the fence's body.
fn strip_fence(text: &str) -> &str {
    let t = text.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let body = rest.split_once('\n').map_or("", |(_, b)| b);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

/// The conversation as step-mode messages: the instructions and the form as the
/// system message; each call as the step object it stands for (the assistant text
/// before it as its thought); each result as a user message, with its images for a
/// model that takes them. The app's own first cell (the inputs loaded) is told in the
/// user's message, not shown as a step: a small model copies the step before its own.
/// A run of the same call is shown once, with the last result (which says how often
/// it came): each copy in the history makes the next one likelier.
pub fn messages(
    instructions: &str,
    note: &str,
    items: &[Item],
    sent: &SentNotes,
    vision: bool,
) -> Vec<Value> {
    let mut out = vec![json!({"role": "system", "content": format!("{instructions}\n\n{note}")})];
    let mut thought: Option<String> = None;
    for (at, item) in collapse_repeats(items) {
        match item {
            Item::ToolCall {
                call_id, arguments, ..
            } if call_id == PRELUDE_CALL_ID => {
                thought = None;
                append_to_user(
                    &mut out,
                    &format!(
                        "{} Before your first turn the app ran this cell; what it defined is in the kernel:\n```python\n{}\n```",
                        crate::protocol::APP_NOTE,
                        tool_source(arguments).trim_end()
                    ),
                );
            }
            Item::ToolOutput {
                call_id, output, ..
            } if call_id == PRELUDE_CALL_ID => {
                append_to_user(&mut out, &format!("Its output:\n{}", output.trim_end()));
                sent.repeat(&mut out, at, item);
            }
            Item::User { text } => {
                // The assistant's words before a note come before it: a history that
                // ends with an assistant message is a prefill to a server.
                if let Some(t) = thought.take() {
                    out.push(json!({"role": "assistant", "content": t}));
                }
                out.push(json!({"role": "user", "content": text}));
                sent.repeat(&mut out, at, item);
            }
            Item::Assistant { text } => {
                if let Some(t) = thought.take() {
                    out.push(json!({"role": "assistant", "content": t}));
                }
                thought = Some(text.clone());
            }
            Item::Reasoning { .. } => {}
            Item::ToolCall { arguments, .. }
                if tool_args::to_object(arguments)
                    .get(AS_WRITTEN)
                    .is_some_and(Value::is_string) =>
            {
                thought = None; // it is inside the step
                let step = tool_args::to_object(arguments)[AS_WRITTEN].clone();
                out.push(json!({"role": "assistant", "content": step}));
            }
            Item::ToolCall {
                name, arguments, ..
            } => {
                let mut step = Map::new();
                step.insert(THOUGHT.into(), json!(thought.take().unwrap_or_default()));
                step.insert(ACTION.into(), json!(name));
                for (k, v) in tool_args::to_object(arguments) {
                    // The code as the lines the form asks for.
                    let v = match v.as_str() {
                        Some(code) if k == LINES_ARG => json!(code.lines().collect::<Vec<_>>()),
                        _ => v,
                    };
                    step.insert(k, v);
                }
                out.push(json!({"role": "assistant", "content": Value::Object(step).to_string()}));
            }
            Item::ToolOutput { output, images, .. } => {
                if let Some(t) = thought.take() {
                    out.push(json!({"role": "assistant", "content": t}));
                }
                let (text, shown) = tool_images(output, images, vision);
                out.push(result_message(&text, shown));
                sent.repeat(&mut out, at, item);
            }
        }
    }
    if let Some(t) = thought {
        out.push(json!({"role": "assistant", "content": t}));
    }
    out
}

/// `items` with each run of identical consecutive calls kept once: the first call
/// (and its thought) with the last call's result. Each with its index in `items`.
fn collapse_repeats(items: &[Item]) -> Vec<(usize, &Item)> {
    let mut out: Vec<(usize, &Item)> = Vec::new();
    // The last call kept, and where its result is in `out`.
    let mut last: Option<(&str, String, usize)> = None;
    let mut replace_at: Option<usize> = None;
    for (n, item) in items.iter().enumerate() {
        match item {
            Item::ToolCall {
                name, arguments, ..
            } => {
                let source = tool_source(arguments);
                if let Some((name_kept, s, at)) = &last {
                    if name_kept == name && *s == source && *at != usize::MAX {
                        // Its thought goes with it.
                        out.truncate(*at + 1);
                        replace_at = Some(*at);
                        continue;
                    }
                }
                last = Some((name, source, usize::MAX));
                out.push((n, item));
            }
            Item::ToolOutput { .. } => match replace_at.take() {
                Some(at) => out[at] = (n, item),
                None => {
                    out.push((n, item));
                    if let Some(l) = last.as_mut() {
                        l.2 = out.len() - 1;
                    }
                }
            },
            Item::Assistant { .. } | Item::Reasoning { .. } => out.push((n, item)),
            Item::User { .. } => {
                last = None;
                out.push((n, item));
            }
        }
    }
    out
}

/// The notes earlier turns ended with ([`turn_note`], the app's step), kept so each
/// request repeats them where they were: the history a server is sent then only grows
/// at its end, and its prompt cache keeps the model's last reply. Sent once and then
/// left out, a note made llama.cpp read the last reply and result again every turn
/// (the cached prefix ended where the note had begun).
#[derive(Clone, Debug, Default)]
pub struct SentNotes(Vec<SentNote>);

#[derive(Clone, Debug)]
struct SentNote {
    /// The index of the item the note followed, and a hash of that item: a view that
    /// changed (a fresh start) does not take a note that followed another item.
    at: usize,
    anchor: u64,
    notes: Vec<String>,
}

impl SentNotes {
    /// `notes` ended the request whose items were `items`. Only after a result or a
    /// user message, where [`add_turn_note`] added them to that message.
    pub fn sent(&mut self, items: &[Item], notes: Vec<String>) {
        let Some(last) = items.last() else { return };
        if notes.is_empty() || !matches!(last, Item::ToolOutput { .. } | Item::User { .. }) {
            return;
        }
        let at = items.len() - 1;
        self.0.retain(|n| n.at < at);
        self.0.push(SentNote {
            at,
            anchor: anchor(last),
            notes,
        });
    }

    /// After item `at` was written as the last message: the notes that followed it.
    fn repeat(&self, out: &mut Vec<Value>, at: usize, item: &Item) {
        if let Some(n) = self
            .0
            .iter()
            .find(|n| n.at == at && n.anchor == anchor(item))
        {
            for note in &n.notes {
                add_turn_note(out, note);
            }
        }
    }
}

fn anchor(item: &Item) -> u64 {
    use std::hash::{Hash, Hasher};
    // Fixed keys: the same item hashes the same on every turn.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(item).unwrap_or_default().hash(&mut h);
    h.finish()
}

/// Add `text` to the last message, a user message with text content.
fn append_to_user(out: &mut Vec<Value>, text: &str) {
    match out.last_mut() {
        Some(m) if m["role"] == "user" && m["content"].is_string() => {
            let joined = format!("{}\n\n{text}", m["content"].as_str().unwrap_or(""));
            m["content"] = json!(joined);
        }
        _ => out.push(json!({"role": "user", "content": text})),
    }
}

fn result_message(text: &str, images: &[ImagePart]) -> Value {
    let text = format!("Output of the step:\n{text}");
    if images.is_empty() {
        return json!({"role": "user", "content": text});
    }
    let mut parts = vec![json!({"type": "text", "text": text})];
    for image in images {
        parts.push(json!({"type": "image_url", "image_url": {"url": data_url(image)}}));
    }
    json!({"role": "user", "content": parts})
}

/// A step's raw text as it streams, passed on as the live view expects it: nothing
/// until the action is known, then the call's arguments (the raw object, from which
/// the view reads the code) as [`Delta::ToolCall`] pieces. An answer shows when whole.
pub struct StepStream<'a> {
    inner: &'a (dyn Fn(Delta) + Send + Sync),
    state: std::sync::Mutex<StreamState>,
}

#[derive(Default)]
struct StreamState {
    text: String,
    /// The tool the step calls, once its action is read, and how much was passed on.
    tool: Option<String>,
    sent: usize,
    call_id: String,
}

impl<'a> StepStream<'a> {
    pub fn new(inner: &'a (dyn Fn(Delta) + Send + Sync), call_id: String) -> StepStream<'a> {
        StepStream {
            inner,
            state: std::sync::Mutex::new(StreamState {
                call_id,
                ..StreamState::default()
            }),
        }
    }

    pub fn on_delta(&self, d: Delta) {
        let Delta::Text { text } = d else {
            return (self.inner)(d);
        };
        let mut s = self.state.lock().unwrap();
        s.text.push_str(&text);
        if s.tool.is_none() {
            s.tool = action_in(&s.text);
        }
        match s.tool.as_deref() {
            // The app's steps are whole only once it has finished the cell.
            None
            | Some(FINAL_ANSWER)
            | Some(CANNOT_FINISH)
            | Some(mend::FIX | mend::WRITE | anomalies::ACTION) => {}
            Some(name) => {
                let piece = s.text[s.sent..].to_string();
                let (call_id, name) = (s.call_id.clone(), name.to_string());
                s.sent = s.text.len();
                drop(s);
                (self.inner)(Delta::ToolCall {
                    call_id: call_id.into(),
                    name,
                    arguments: piece,
                });
            }
        }
    }
}

/// The action a partial step names, once its string is closed.
fn action_in(text: &str) -> Option<String> {
    let at = text.find("\"action\"")?;
    let rest = text[at + 8..].trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    Some(rest[..end].to_string())
}

/// The mode's name in sentences.
pub fn describe(mode: CallMode) -> &'static str {
    match mode {
        CallMode::Native => "native tool calls",
        CallMode::Schema => "steps held to a JSON schema",
        CallMode::Text => "steps written as JSON text",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<ToolSpec> {
        crate::agent::ToolSet::default().specs(false)
    }

    /// A call's result that ran without an error.
    fn ok(id: &str) -> Item {
        Item::ToolOutput {
            call_id: id.into(),
            output: "status: ok".into(),
            is_error: false,
            images: vec![],
        }
    }

    /// A turn while `path` is missing.
    fn missing(path: &str) -> Answer {
        Answer::NotYet {
            missing: vec![path.into()],
        }
    }

    #[test]
    fn the_schema_offers_the_sessions_tools_and_the_end_the_turn_allows() {
        let open = schema(&tools(), &Answer::Open, 0, None, None, true, None);
        let branches = open["anyOf"].as_array().unwrap();
        let actions: Vec<&str> = branches
            .iter()
            .map(|b| b["properties"]["action"]["enum"][0].as_str().unwrap())
            .collect();
        assert_eq!(
            actions,
            ["python", "shell", anomalies::ACTION, FINAL_ANSWER]
        );
        // The thought comes first, so the model says what it does before it does it.
        let python = &branches[0];
        let keys: Vec<&String> = python["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["thought", "action", "code"]);
        assert_eq!(python["required"], json!(["thought", "action", "code"]));
        assert_eq!(python["additionalProperties"], json!(false));
        // The code as a list of lines, each bounded, and a bounded list.
        assert_eq!(
            python["properties"]["code"],
            json!({"type": "array", "items": {"type": "string", "maxLength": LINE_MAX}, "maxItems": LINES_MAX})
        );
        // Other string arguments (the shell's command) stay one bounded string.
        assert_eq!(
            branches[1]["properties"]["command"]["maxLength"],
            json!(ARGUMENT_MAX)
        );
        // Named outputs missing: no answer at all, or only `cannot_finish`.
        let missing = vec!["output/chart.png".to_string()];
        let not_yet = schema(
            &tools(),
            &Answer::NotYet {
                missing: missing.clone(),
            },
            0,
            None,
            None,
            true,
            None,
        );
        assert!(!not_yet.to_string().contains(FINAL_ANSWER));
        assert!(!not_yet.to_string().contains(CANNOT_FINISH));
        let why_not = schema(
            &tools(),
            &Answer::OrWhyNot {
                missing: missing.clone(),
            },
            0,
            None,
            None,
            true,
            None,
        );
        assert!(!why_not.to_string().contains(FINAL_ANSWER));
        assert_eq!(
            why_not["anyOf"][3]["properties"]["action"]["enum"],
            json!([CANNOT_FINISH])
        );
        // Only the shell offered and no end: one object, no anyOf (the app's method
        // for abnormal events goes with the code tool).
        let only = &tools()[1..2];
        let one = schema(
            only,
            &Answer::NotYet { missing: vec![] },
            0,
            None,
            None,
            true,
            None,
        );
        assert_eq!(one["properties"]["action"]["enum"], json!(["shell"]));
        // Only python offered, no method, no end: one object too.
        let none = Answer::NotYet { missing: vec![] };
        let one = schema(&tools()[..1], &none, 0, None, None, false, None);
        assert_eq!(one["properties"]["action"]["enum"], json!(["python"]));
        // After a repeated call, a tool step's thought is the app's, naming the next file.
        let guided = schema(
            &tools(),
            &Answer::NotYet {
                missing: missing.clone(),
            },
            1,
            None,
            None,
            true,
            None,
        );
        assert_eq!(
            guided["anyOf"][0]["properties"]["thought"]["enum"],
            json!(["A new step, not the last one again: the code that writes output/chart.png."])
        );
        assert_eq!(guided_thought(&Answer::Open, 3, None, false), None);
        // After a failed cell, the thought names its error and where.
        let failed = Item::ToolOutput {
            call_id: "c".into(),
            output: "status: error (0.01 s)\n[traceback]\nTraceback (most recent call last):\n  Cell In[7], line 3\n    baseline = baseline.sort_values(by='timestamp')\n  File /usr/lib/frame.py:7189 in sort_values\n    k = self._get(by[0])\nKeyError: 'timestamp'\n[note] The cell failed".into(),
            is_error: true,
            images: vec![],
        };
        let error = last_error(std::slice::from_ref(&failed)).unwrap();
        assert_eq!(
            error,
            "KeyError: 'timestamp' at `baseline = baseline.sort_values(by='timestamp')`"
        );
        let fix = schema(
            &tools(),
            &Answer::NotYet { missing },
            1,
            Some(&error),
            None,
            true,
            None,
        );
        assert_eq!(
            fix["anyOf"][0]["properties"]["thought"]["enum"][0],
            json!(format!("The last cell failed ({error}); a new cell that avoids that error and writes output/chart.png."))
        );
    }

    #[test]
    fn a_step_cut_as_a_loop_runs_up_to_where_its_lines_began_to_repeat() {
        let looped = format!(
            r#"{{"thought":"Flag the events","action":"python","code":["z = (df['x'] - df['x'].mean()) / df['x'].std()", "events = df[z.abs() > 3]",{} "events.to_c"#,
            r#" "events.to_csv('output/a.csv', index=False)", "print(len(events))","#.repeat(12)
        );
        let step = salvage(&looped, &tools(), None).unwrap();
        let v: Value = serde_json::from_str(&step).unwrap();
        assert_eq!(v["thought"], "Flag the events");
        assert_eq!(
            v["code"],
            json!([
                SALVAGED,
                "z = (df['x'] - df['x'].mean()) / df['x'].std()",
                "events = df[z.abs() > 3]",
                "events.to_csv('output/a.csv', index=False)",
                "print(len(events))"
            ])
        );
        // No tool, or no whole line: nothing to run.
        assert!(salvage(
            r#"{"thought":"a","action":"rm","code":["x = 1", "#,
            &tools(),
            None
        )
        .is_none());
        assert!(salvage(
            r#"{"thought":"a","action":"python","code":["x = 1"#,
            &tools(),
            None
        )
        .is_none());
        assert_eq!(before_the_loop(&["a".into(), "b".into()]), ["a", "b"]);
    }

    #[test]
    fn a_reports_text_cut_by_the_token_cap_is_written_as_far_as_it_went() {
        let items = vec![ok("c1"), ok("c2")];
        let answer = missing("output/r.md");
        let mend = Mend::of(&items, &tools(), &answer, 0).unwrap();
        let cut = r##"{"thought":"Report","action":"write","path":"output/r.md","TEXT":"# Report\n\nThree events.\n| a | b |\n| 1 | 2"##;
        let step = salvage_text(cut, Some(&mend), false).unwrap();
        let v: Value = serde_json::from_str(&step).unwrap();
        assert_eq!(v["path"], "output/r.md");
        assert_eq!(
            v["TEXT"],
            format!("# Report\n\nThree events.\n| a | b |\n\n{TEXT_CUT}\n")
        );
        // An escape cut in half is dropped, not a reason to lose the text.
        let half = format!("{}\\", &cut[..cut.len() - 8]);
        assert!(salvage_text(&half, Some(&mend), false).is_some());
        // Cut while its last lines went round: one copy of them, and whole.
        let round = "- no holidays.\\n- no weather.\\n".repeat(6);
        let looped = format!(
            r##"{{"thought":"Report","action":"write","path":"output/r.md","TEXT":"# Report\n\n## Limits\n{round}- no hol"##
        );
        let v: Value =
            serde_json::from_str(&salvage_text(&looped, Some(&mend), false).unwrap()).unwrap();
        assert_eq!(
            v["TEXT"],
            "# Report\n\n## Limits\n- no holidays.\n- no weather."
        );
        // A tool's step, or no mend: nothing.
        assert!(salvage_text(r#"{"action":"python","code":["x"#, Some(&mend), false).is_none());
        assert!(salvage_text(cut, None, false).is_none());
    }

    #[test]
    fn the_apps_own_step_goes_back_as_the_model_wrote_it() {
        let items = vec![
            Item::User {
                text: "task".into(),
            },
            ok("c0"),
        ];
        let mend = Mend::of(&items, &tools(), &missing("output/r.md"), 0).unwrap();
        let reply = r##"{"thought":"Report","action":"write","path":"output/r.md","TEXT":"# Report\n\nThree events."}"##;
        let (step, _) = parse(reply, &tools(), "c1", Some(&mend)).unwrap();
        let Some(Item::ToolCall { arguments, .. }) = step.last() else {
            panic!("{step:?}")
        };
        // The code tool runs the app's cell; the history shows the step as written.
        assert!(tool_source(arguments).starts_with("TEXT = "), "{arguments}");
        let mut history = items.clone();
        history.extend(step);
        let m = messages("sys", "NOTE", &history, &SentNotes::default(), false);
        assert_eq!(m.last().unwrap()["content"], json!(reply));
        assert_eq!(m.last().unwrap()["role"], "assistant");
    }

    #[test]
    fn the_apps_write_step_cut_as_a_loop_runs_too_and_a_cells_looped_lines_come_once() {
        // The write of output/a.csv, offered beside the tools; the reply loops in its code.
        let items = vec![ok("c0")];
        let answer = missing("output/a.csv");
        let mend = Mend::of(&items, &tools(), &answer, 0).unwrap();
        let looped = format!(
            r#"{{"thought":"t","action":"write","path":"output/a.csv","code":["events = df[df.x > 3]",{} "print(ev"#,
            r#" "print(events)","#.repeat(12)
        );
        let step = salvage(&looped, &tools(), Some(&mend)).unwrap();
        let (items, _) = parse(&step, &tools(), "c1", Some(&mend)).unwrap();
        let Item::ToolCall { arguments, .. } = &items[1] else {
            panic!("{items:?}")
        };
        let code = tool_source(arguments);
        assert!(
            code.contains("events = df[df.x > 3]\nprint(events)\n"),
            "{code}"
        );
        assert!(
            code.ends_with("TABLE.to_csv('output/a.csv', index=False)"),
            "{code}"
        );
        // A step's line written three times or more runs once; twice is kept.
        let args = call_arguments(
            r#"{"thought":"t","action":"python","code":["a()","print(a())","a()","a()","b()","b()"]}"#,
        );
        assert_eq!(args["code"], "a()\nprint(a())\nb()\nb()");
    }

    /// The arguments of the call a one-step reply `text` makes.
    fn call_arguments(text: &str) -> Value {
        let (items, _) = parse(text, &tools(), "c1", None).unwrap();
        let Item::ToolCall { arguments, .. } = &items[1] else {
            panic!("{items:?}")
        };
        serde_json::from_str(arguments).unwrap()
    }

    #[test]
    fn any_string_argument_written_as_lines_is_its_lines_joined() {
        let text = r#"{"thought": "t", "action": "shell", "command": ["ls output", "wc -l output/a.csv"]}"#;
        assert_eq!(
            call_arguments(text),
            json!({"command": "ls output\nwc -l output/a.csv"})
        );
    }

    #[test]
    fn of_several_steps_in_one_reply_the_first_runs() {
        let text = "{\"thought\": \"a\", \"action\": \"python\", \"code\": [\"x = 1\"]}\n{\"thought\": \"b\", \"action\": \"python\", \"code\": [\"print(x)\"]}";
        assert_eq!(call_arguments(text), json!({"code": "x = 1"}));
    }

    #[test]
    fn code_as_lines_is_one_cell_and_goes_back_as_lines() {
        let text = r#"{"thought": "t", "action": "python", "code": ["x = 'a'", "print(x)"]}"#;
        assert_eq!(call_arguments(text), json!({"code": "x = 'a'\nprint(x)"}));
        let (items, _) = parse(text, &tools(), "c1", None).unwrap();
        let m = messages("sys", "NOTE", &items, &SentNotes::default(), false);
        let step: Value = serde_json::from_str(m[1]["content"].as_str().unwrap()).unwrap();
        assert_eq!(step["code"], json!(["x = 'a'", "print(x)"]));
    }

    #[test]
    fn a_step_becomes_the_items_of_a_native_call() {
        let text = r#"{"thought": "Load the data", "action": "python", "code": "import pandas as pd\nprint(1)"}"#;
        let (items, ending) = parse(text, &tools(), "c1", None).unwrap();
        assert_eq!(ending, Ending::Unmarked);
        assert_eq!(
            items[0],
            Item::Assistant {
                text: "Load the data".into()
            }
        );
        let Item::ToolCall {
            name, arguments, ..
        } = &items[1]
        else {
            panic!("{items:?}")
        };
        assert_eq!(name, "python");
        assert_eq!(
            serde_json::from_str::<Value>(arguments).unwrap(),
            json!({"code": "import pandas as pd\nprint(1)"})
        );
        let (items, ending) = parse(
            r#"{"thought": "", "action": "cannot_finish", "reason": "no time column"}"#,
            &tools(),
            "c2",
            None,
        )
        .unwrap();
        assert_eq!(ending, Ending::CannotFinish);
        assert_eq!(
            items,
            [Item::Assistant {
                text: "no time column".into()
            }]
        );
        // Text mode: Python triple quotes in a fence, read leniently.
        let loose = "```json\n{\"thought\": \"x\", \"action\": \"python\", \"code\": \"\"\"print('a')\"\"\"}\n```";
        let (items, _) = parse(loose, &tools(), "c3", None).unwrap();
        assert!(
            matches!(&items[1], Item::ToolCall { arguments, .. } if arguments.contains("print('a')"))
        );
        // An action no one offered is not a step.
        assert!(parse(r#"{"action": "rm", "code": "x"}"#, &tools(), "c4", None).is_none());
        assert!(parse("The answer is 42.", &tools(), "c5", None).is_none());
    }

    #[test]
    fn an_anomaly_step_is_a_call_of_the_code_tool_with_the_apps_cell() {
        let text = r#"{"thought":"Find the events","action":"find_anomalies","data":"df","time":"timestamp","value":"energy_kwh","context":["outdoor_temp_c"]}"#;
        let (items, ending) = parse(text, &tools(), "c1", None).unwrap();
        assert_eq!(ending, Ending::Unmarked);
        let Item::ToolCall {
            name, arguments, ..
        } = &items[1]
        else {
            panic!("{items:?}")
        };
        assert_eq!(name, "python");
        let code = tool_source(arguments);
        assert!(code.starts_with("# The app wrote this cell from the step"));
        assert!(code.contains("def find_anomalies("));
        // The history shows the step as the model wrote it, not the app's cell.
        let m = messages("sys", "NOTE", &items, &SentNotes::default(), false);
        assert_eq!(m.last().unwrap()["content"], json!(text));
        // Offered and described only with the code tool.
        assert!(format_note(&tools(), true).contains("\"find_anomalies\" (with \"data\""));
        assert!(!format_note(&tools(), false).contains("find_anomalies"));
        assert!(parse(text, &tools()[1..2], "c2", None).is_none());
        // Without a value column it is not a step.
        let partial = r#"{"thought":"","action":"find_anomalies","data":"df","time":"t","value":"","context":[]}"#;
        assert!(parse(partial, &tools(), "c3", None).is_none());
    }

    #[test]
    fn the_first_step_is_the_one_before_any_call_of_the_models_in_this_ask() {
        let user = |t: &str| Item::User { text: t.into() };
        let call = |id: &str| Item::ToolCall {
            call_id: id.into(),
            name: "python".into(),
            arguments: "{}".into(),
            form: CallForm::Structured,
        };
        assert!(first_step(&[user("task")]));
        // The app's own first cell is not a step of the model's.
        assert!(first_step(&[
            user("task"),
            call(PRELUDE_CALL_ID),
            ok(PRELUDE_CALL_ID)
        ]));
        assert!(!first_step(&[user("task"), call("c1"), ok("c1")]));
        // A second ask starts afresh.
        assert!(first_step(&[user("a"), call("c1"), ok("c1"), user("b")]));
        // An ask for abnormal events: its thought is the app's, naming the method,
        // where the code tool is offered.
        let items = [user("Look for abnormal energy-use events in input/e.csv")];
        let guide = anomalies::thought(&items, anomalies::offered(&items, &tools()), &Answer::Open);
        let first = schema(
            &tools(),
            &Answer::Open,
            0,
            None,
            None,
            true,
            guide.as_deref(),
        );
        assert_eq!(
            first["anyOf"][0]["properties"]["thought"]["enum"],
            json!([anomalies::FIRST_THOUGHT])
        );
        assert_eq!(
            anomalies::thought(
                &items,
                anomalies::offered(&items, &tools()[1..2]),
                &Answer::Open
            ),
            None
        );
        // A task that asks for something else gets no guide.
        let sales = [user("Which region had the highest total revenue?")];
        assert_eq!(
            anomalies::thought(&sales, anomalies::offered(&sales, &tools()), &Answer::Open),
            None
        );
    }

    #[test]
    fn the_system_message_is_the_same_every_turn_and_the_turn_note_comes_last() {
        // A local server reuses the prompt it has cached only up to the first change:
        // what the turn allows must not change the system message.
        let missing = vec!["output/chart.png".to_string()];
        let note = format_note(&tools(), true);
        assert!(note.contains(FINAL_ANSWER) && !note.contains(CANNOT_FINISH));
        let items = vec![Item::User {
            text: "task".into(),
        }];
        let mut m = messages("sys", &note, &items, &SentNotes::default(), false);
        let why_not = turn_note(
            &Answer::OrWhyNot {
                missing: missing.clone(),
            },
            0,
        )
        .unwrap();
        add_turn_note(&mut m, &why_not);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0]["content"], format!("sys\n\n{note}"));
        let last = m[1]["content"].as_str().unwrap();
        assert!(last.starts_with("task\n\n(This turn: no final answer yet; output/chart.png"));
        assert!(last.contains(CANNOT_FINISH));
        assert!(!turn_note(&Answer::NotYet { missing }, 0)
            .unwrap()
            .contains(CANNOT_FINISH));
        assert_eq!(turn_note(&Answer::Open, 1), None);
        // Calls that go round with the answer allowed: the answer alone.
        assert!(turn_note(&Answer::Open, ANSWER_AFTER_REPEATS)
            .unwrap()
            .starts_with("(This turn: the final answer"));
        let only = schema(
            &tools(),
            &Answer::Open,
            ANSWER_AFTER_REPEATS,
            None,
            None,
            true,
            None,
        );
        assert_eq!(only["properties"]["action"]["enum"], json!([FINAL_ANSWER]));
        // After an assistant message, the note is a user message of its own.
        let mut m = vec![json!({"role": "assistant", "content": "x"})];
        add_turn_note(&mut m, "n");
        assert_eq!(m[1], json!({"role": "user", "content": "n"}));
    }

    #[test]
    fn history_goes_back_as_steps_and_user_messages() {
        let items = vec![
            Item::User {
                text: "task".into(),
            },
            Item::Assistant {
                text: "Look".into(),
            },
            Item::ToolCall {
                call_id: "c1".into(),
                name: "python".into(),
                arguments: r#"{"code":"print(1)"}"#.into(),
                form: CallForm::Structured,
            },
            Item::ToolOutput {
                call_id: "c1".into(),
                output: "1".into(),
                is_error: false,
                images: vec![],
            },
            // A reply that was no step, then the app's note on it.
            Item::Assistant {
                text: "{\"thought\": \"cut".into(),
            },
            Item::User {
                text: "note".into(),
            },
        ];
        let m = messages("sys", "NOTE", &items, &SentNotes::default(), false);
        // Never ends on an assistant message (a server takes that for a prefill).
        assert_eq!(m[4]["role"], "assistant");
        assert_eq!(m[5], json!({"role": "user", "content": "note"}));
        assert_eq!(m[0]["content"], "sys\n\nNOTE");
        assert_eq!(m[1]["role"], "user");
        assert_eq!(m[2]["role"], "assistant");
        assert_eq!(
            serde_json::from_str::<Value>(m[2]["content"].as_str().unwrap()).unwrap(),
            json!({"thought": "Look", "action": "python", "code": ["print(1)"]})
        );
        assert_eq!(
            m[3],
            json!({"role": "user", "content": "Output of the step:\n1"})
        );
        assert!(m.iter().all(|x| x.get("tool_calls").is_none()));
    }

    #[test]
    fn the_apps_first_cell_is_told_in_the_users_message_not_shown_as_a_step() {
        let items = vec![
            Item::User {
                text: "task".into(),
            },
            Item::Assistant {
                text: "The app loads the inputs".into(),
            },
            Item::ToolCall {
                call_id: PRELUDE_CALL_ID.into(),
                name: "python".into(),
                arguments: r#"{"code":"df = pd.read_csv('input/a.csv')\n"}"#.into(),
                form: CallForm::Structured,
            },
            Item::ToolOutput {
                call_id: PRELUDE_CALL_ID.into(),
                output: "df: (3, 2)\n".into(),
                is_error: false,
                images: vec![],
            },
            Item::ToolCall {
                call_id: "c1".into(),
                name: "python".into(),
                arguments: r#"{"code":"print(df.shape)"}"#.into(),
                form: CallForm::Structured,
            },
        ];
        let m = messages("sys", "NOTE", &items, &SentNotes::default(), false);
        let roles: Vec<&str> = m.iter().map(|x| x["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["system", "user", "assistant"]);
        assert_eq!(
            m[1]["content"],
            "task\n\n[from the app] Before your first turn the app ran this cell; what it defined is in the kernel:\n\
             ```python\ndf = pd.read_csv('input/a.csv')\n```\n\nIts output:\ndf: (3, 2)"
        );
        // The model's own first step has no thought of the app's.
        assert_eq!(
            serde_json::from_str::<Value>(m[2]["content"].as_str().unwrap()).unwrap(),
            json!({"thought": "", "action": "python", "code": ["print(df.shape)"]})
        );
    }

    #[test]
    fn a_run_of_the_same_call_is_shown_once_with_its_last_result() {
        let call = |id: &str, code: &str| Item::ToolCall {
            call_id: id.into(),
            name: "python".into(),
            arguments: json!({ "code": code }).to_string(),
            form: CallForm::Structured,
        };
        let output = |id: &str, text: &str| Item::ToolOutput {
            call_id: id.into(),
            output: text.into(),
            is_error: false,
            images: vec![],
        };
        let thought = |t: &str| Item::Assistant { text: t.into() };
        let items = vec![
            Item::User {
                text: "task".into(),
            },
            thought("look"),
            call("c1", "df.describe()"),
            output("c1", "table"),
            thought("look again"),
            call("c2", "df.describe()"),
            output("c2", "table\n[note] the same call 2 times in a row"),
            thought("and again"),
            call("c3", "df.describe()"),
            output("c3", "table\n[note] the same call 3 times in a row"),
            thought("next"),
            call("c4", "df.plot()"),
            output("c4", "plotted"),
            // A note between breaks the run: the same call after it is shown.
            Item::User {
                text: "note".into(),
            },
            call("c5", "df.plot()"),
            output("c5", "plotted"),
        ];
        let m = messages("sys", "NOTE", &items, &SentNotes::default(), false);
        let contents: Vec<String> = m[1..]
            .iter()
            .map(|x| x["content"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(contents.len(), 8, "{contents:#?}");
        assert_eq!(
            serde_json::from_str::<Value>(&contents[1]).unwrap(),
            json!({"thought": "look", "action": "python", "code": ["df.describe()"]})
        );
        assert_eq!(
            contents[2],
            "Output of the step:\ntable\n[note] the same call 3 times in a row"
        );
        assert!(contents[3].contains("df.plot()") && contents[3].contains("next"));
        assert_eq!(contents[5], "note");
        assert!(contents[6].contains("df.plot()"));
    }

    #[test]
    fn the_live_view_gets_the_call_once_its_action_is_known() {
        let seen = std::sync::Mutex::new(Vec::new());
        let sink = |d: Delta| seen.lock().unwrap().push(d);
        let stream = StepStream::new(&sink, "c9".into());
        for piece in [
            "{\"thought\": \"a\", \"act",
            "ion\": \"python\", \"co",
            "de\": \"print(1)\"}",
        ] {
            stream.on_delta(Delta::Text { text: piece.into() });
        }
        let seen = seen.lock().unwrap();
        let raw: String = seen
            .iter()
            .map(|d| match d {
                Delta::ToolCall {
                    call_id,
                    name,
                    arguments,
                } => {
                    assert_eq!((call_id.as_str(), name.as_str()), ("c9", "python"));
                    arguments.clone()
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            raw,
            "{\"thought\": \"a\", \"action\": \"python\", \"code\": \"print(1)\"}"
        );
    }

    #[test]
    fn each_turn_only_adds_to_what_the_server_was_sent_before() {
        // A server's prompt cache keeps the longest prefix a request shares with the
        // last one and its reply: the history must grow only at its end.
        let tools = tools();
        let missing = Answer::NotYet {
            missing: vec!["output/a.csv".into()],
        };
        let mut sent = SentNotes::default();
        let mut items = vec![Item::User {
            text: "task".into(),
        }];
        let mut before: Option<(Vec<Value>, String)> = None;
        for (turn, reply) in [
            r#"{"thought":"look","action":"python","code":["print(1)"]}"#,
            r#"{"thought":"write it","action":"python","code":["x = 2","print(x)"]}"#,
            r#"{"thought":"again","action":"python","code":["print(3)"]}"#,
        ]
        .iter()
        .enumerate()
        {
            // What the request of this turn is, as `body` makes it.
            let mut request = messages("sys", "NOTE", &items, &sent, false);
            let notes = vec![turn_note(&missing, 0).unwrap()];
            for n in &notes {
                add_turn_note(&mut request, n);
            }
            sent.sent(&items, notes);
            if let Some((earlier, earlier_reply)) = &before {
                assert_eq!(request[..earlier.len()], earlier[..], "turn {turn}");
                assert_eq!(request[earlier.len()]["content"], json!(earlier_reply));
            }
            let call_id = format!("c{turn}");
            let (step, _) = parse(reply, &tools, &call_id, None).unwrap();
            items.extend(step);
            items.push(Item::ToolOutput {
                call_id: call_id.into(),
                output: format!("{turn}"),
                is_error: false,
                images: vec![],
            });
            before = Some((request, reply.to_string()));
        }
        // A view that changed (a fresh start) does not take the notes of another.
        let fresh = vec![
            items[0].clone(),
            Item::User {
                text: "start again".into(),
            },
        ];
        let m = messages("sys", "NOTE", &fresh, &sent, false);
        assert_eq!(
            m[1]["content"],
            json!(format!("task\n\n{}", turn_note(&missing, 0).unwrap()))
        );
        assert_eq!(m[2]["content"], json!("start again"));
        // The form's example is written as the history writes a step.
        let example = format_note(&tools, true);
        assert!(
            example.contains(r#"{"thought":"one short sentence"#),
            "{example}"
        );
    }
}
