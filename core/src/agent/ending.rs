//! When a reply without tool calls may end the ask. Two things keep it from being
//! taken for the answer: it holds a call that no one could read (a small model's
//! malformed JSON, code in a fence it did not mean as a quote), and the files the task
//! names are missing, empty or not what their names say. Either is told to the model
//! in words that say exactly what is wrong; [`super::Agent`] decides how often.

use crate::artifacts::check::{self, MAX_CHECKED_BYTES};
use crate::conversation::write_line;
use crate::model::chat_completions::text_calls;
use crate::protocol::OutputProblem;
use crate::sandbox::{OutputEntry, Sandbox};

/// How to call a tool, for a model whose call was not recognised: the two forms that
/// are always read.
pub const HOW_TO_CALL: &str = "To run code, call the python tool through the tool-calling interface. \
If you cannot make a structured tool call, reply with only the code, in one fenced block, like this:\n\
```python\nimport pandas as pd\ndf = pd.read_csv(\"input/data.csv\")\nprint(df.head())\n```\n\
The code runs, you see its output, and then you go on.";

/// How to take a step, for a model whose steps are JSON objects (schema or text
/// mode) and whose reply was not one.
pub const HOW_TO_STEP: &str = "Reply with exactly one JSON object, for example \
{\"thought\": \"Load the data\", \"action\": \"python\", \"code\": [\"import pandas as pd\", \"df = pd.read_csv('input/data.csv')\", \"print(df.head())\"]}. \
The code runs, you see its output, and then you go on.";

/// One line after each call for a task that names its outputs: which are done,
/// which are missing or wrong, and the task's own words for the next one. `None`
/// when the task names none.
///
/// `names` is the kernel's namespace ("TEXT (str)", "df (DataFrame 10x2)"): where it
/// holds the placeholder the next file's way of writing names, that way is one line.
pub fn checklist(task: &str, problems: &[OutputProblem], names: &[String]) -> Option<String> {
    let named = named_outputs(task);
    if named.is_empty() {
        return None;
    }
    if problems.is_empty() {
        return Some(format!(
            "[checklist] all {} files the task names are written and valid; give the final answer once the task is done.",
            named.len()
        ));
    }
    let state: Vec<String> = named
        .iter()
        .map(|n| {
            let path = format!("output/{n}");
            match problems.iter().find(|p| p.path == path) {
                Some(p) => format!("{path} {}", p.problem),
                None => format!("{path} done"),
            }
        })
        .collect();
    let next = &problems[0].path;
    let words = sentence_naming(task, next)
        .map(|s| format!(" (the task: \"{s}\")"))
        .unwrap_or_default();
    // A table with a header and no rows: the filter that made it kept nothing, and a
    // small model writes the same empty table again unless told where to look.
    let empty = if problems[0].problem == check::NO_ROWS {
        " Its table has no rows: the condition that selected them kept none; print how many rows each condition keeps and loosen the one that keeps none."
    } else {
        ""
    };
    Some(format!(
        "[checklist] {}. Next: write {next}{words}{}.{empty}",
        state.join("; "),
        how_to_write(next, names)
    ))
}

/// How a file of `path`'s kind is written from the kernel ([`write_line`]), as a
/// pattern a small model can follow; empty for a kind without one obvious way. Once
/// the kernel holds the pattern's placeholder (a 1.5B model built `TEXT` eleven times
/// and never wrote it), the write alone is asked for.
fn how_to_write(path: &str, names: &[String]) -> String {
    let Some((how, name)) = write_line(path) else {
        return String::new();
    };
    let kind = if name == "TEXT" { "str" } else { "DataFrame" };
    if !name.is_empty()
        && names
            .iter()
            .any(|n| n.starts_with(&format!("{name} ({kind}")))
    {
        return format!(
            ": {name} is already in the kernel, so a cell of this one line writes it: {how}"
        );
    }
    format!(", in a cell that computes it and ends with {how}")
}

/// The sentence of the user's words that names `path`, shortened.
fn sentence_naming(task: &str, path: &str) -> Option<String> {
    let task = task.split(crate::protocol::APP_NOTE).next().unwrap_or("");
    let at = task.find(path)?;
    let start = task[..at]
        .rfind(['\n', '!', '?'])
        .map(|i| i + 1)
        .max(task[..at].rfind(". ").map(|i| i + 2))
        .unwrap_or(0);
    let after = at + path.len();
    let end = task[after..]
        .find(". ")
        .into_iter()
        .chain(task[after..].find('\n'))
        .min()
        .map_or(task.len(), |i| after + i);
    let sentence: String = task[start..end].trim().chars().take(240).collect();
    (!sentence.is_empty()).then_some(sentence.trim_end_matches('.').to_string())
}

/// The output files the task names (`output/NAME.ext`), relative to `output/`, each once.
/// Only the user's words count: the app's notes after them (files restored, added)
/// name files too.
pub fn named_outputs(task: &str) -> Vec<String> {
    let task = task.split(crate::protocol::APP_NOTE).next().unwrap_or("");
    let mut named = Vec::new();
    for (i, _) in task.match_indices("output/") {
        let name: String = task[i + 7..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
            .collect();
        let name = name.trim_end_matches(['.', '/']).to_string();
        if name.contains('.') && !named.contains(&name) {
            named.push(name);
        }
    }
    named
}

/// What is wrong with each output the task names, given the files in `output/`: not
/// there, empty, or not what its extension says (read back from the sandbox).
pub async fn output_problems(
    task: &str,
    outputs: &[OutputEntry],
    sandbox: &dyn Sandbox,
) -> Vec<OutputProblem> {
    let mut problems = Vec::new();
    for name in named_outputs(task) {
        let problem = match outputs.iter().find(|f| f.path == name) {
            None => Some("does not exist".to_string()),
            Some(f) if f.bytes > MAX_CHECKED_BYTES => None,
            Some(f) => match sandbox
                .read_file(&format!("output/{name}"), MAX_CHECKED_BYTES)
                .await
            {
                Ok(bytes) => check::problem(&name, f.bytes, &bytes),
                // Gone or replaced since it was listed (by a background process, say).
                Err(e) => Some(format!("cannot be read: {e}")),
            },
        };
        if let Some(problem) = problem {
            problems.push(OutputProblem {
                path: format!("output/{name}"),
                problem,
            });
        }
    }
    problems
}

/// What a table the task names holds, once after each call that wrote or changed it:
/// a model that saved the right table but printed nothing of it answered from memory
/// (a 1.5B model saved February's revenue by region and named another region); with
/// the file's first lines in front of it, the answer's numbers are the file's.
pub async fn written_tables(
    task: &str,
    outputs: &[OutputEntry],
    shown: &mut Vec<(String, u128)>,
    sandbox: &dyn Sandbox,
) -> Vec<String> {
    let mut out = Vec::new();
    for name in named_outputs(task) {
        let table = name
            .rsplit_once('.')
            .is_some_and(|(_, e)| ["csv", "tsv"].contains(&e.to_ascii_lowercase().as_str()));
        let Some(f) = outputs.iter().find(|f| f.path == name).filter(|_| table) else {
            continue;
        };
        let stamp = (f.path.clone(), f.modified_ns);
        if f.bytes == 0 || f.bytes > MAX_CHECKED_BYTES || shown.contains(&stamp) {
            continue;
        }
        shown.retain(|(p, _)| *p != f.path);
        shown.push(stamp);
        let Ok(bytes) = sandbox
            .read_file(&format!("output/{name}"), MAX_CHECKED_BYTES)
            .await
        else {
            continue;
        };
        let lines = bytecount_lines(&bytes);
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(PREVIEW_BYTES)]);
        out.push(preview(&name, lines, bytes.len() <= PREVIEW_BYTES, &head));
    }
    out
}

/// The first lines of a written table read back, at most this many bytes of them.
const PREVIEW_BYTES: usize = 1200;
const PREVIEW_LINES: usize = 12;

fn bytecount_lines(bytes: &[u8]) -> usize {
    let n = bytes.iter().filter(|b| **b == b'\n').count();
    n + usize::from(bytes.last().is_some_and(|b| *b != b'\n'))
}

/// `head`: the file's first bytes (all of it when `whole`); `lines`: how many it has.
fn preview(name: &str, lines: usize, whole: bool, head: &str) -> String {
    let mut shown: Vec<&str> = head.lines().collect();
    // A line cut by the byte bound is not shown half.
    if !whole && !head.ends_with('\n') {
        shown.pop();
    }
    shown.truncate(PREVIEW_LINES);
    let more = if shown.len() < lines {
        format!(" ({lines} lines), its first {}", shown.len())
    } else {
        String::new()
    };
    let mut out = format!("[written] output/{name}{more}:\n{}", shown.join("\n"));
    if unlabelled(&shown) {
        out.push_str(UNLABELLED);
    }
    out
}

/// Said of a table of one column of numbers: a 1.5B model saved February's revenue by
/// region with `index=False`, the regions went with the index, and its answer named
/// the wrong region beside the right total (r17).
const UNLABELLED: &str = "\n(One column of numbers, and nothing that says which row is \
     which: if the rows had labels in the index, `index=False` left them out; \
     `.reset_index()` first keeps them as a column.)";

/// Whether `lines` (a header, then rows) are one column, and every row a number.
fn unlabelled(lines: &[&str]) -> bool {
    let [header, rows @ ..] = lines else {
        return false;
    };
    !header.contains([',', '\t'])
        && rows.len() > 1
        && rows.iter().all(|r| r.trim().parse::<f64>().is_ok())
}

/// The note that reminds the model of the named outputs still wrong. Before code has
/// run it does not offer a way out ("or say why not" is taken at once by small models);
/// the last reminder after code ran does, since some files cannot be made from some data.
pub fn reminder(problems: &[OutputProblem], may_decline: bool) -> String {
    let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
    let mut s = format!(
        "Not done yet: {}. The task asks for these files with real content: an empty or \
         placeholder file does not count (a chart must be a real PNG image, a table a CSV \
         with rows, a report Markdown with text). Write them now with the python tool, read \
         them back to check, then give your final answer.",
        list.join("; ")
    );
    if may_decline {
        s.push_str(
            " If one of them truly cannot be made from this data, say why in your final \
             answer: the ask is then reported as incomplete.",
        );
    }
    s
}

/// Why a reply with no call looks like it meant one: it names a tool or is written as
/// a call, or (before any code has run in the ask) it holds code. `None` for an answer.
pub fn unrun_call(text: &str, ran_code: bool) -> Option<String> {
    const CALL_MARKS: [&str; 8] = [
        "<tool_call>",
        "<tools>",
        "<python>",
        "</python>",
        "<function=",
        "[TOOL_CALLS]",
        "<|python_tag|>",
        "functions.python",
    ];
    if let Some(mark) = CALL_MARKS.iter().find(|m| text.contains(**m)) {
        return Some(format!(
            "your reply has a tool call marker ({mark}) but no call in it could be read"
        ));
    }
    if names_a_tool(text) {
        return Some(
            "your reply looks like a tool call written as JSON, but it could not be read as one"
                .into(),
        );
    }
    if !ran_code && holds_code(text) {
        return Some("your reply holds code but calls no tool, so the code did not run".into());
    }
    None
}

/// A JSON-like call: a `name`/`tool` key naming python or shell, or `arguments` with
/// `code` or `command` beside it.
fn names_a_tool(text: &str) -> bool {
    let squeezed: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if c == '\'' { '"' } else { c })
        .collect();
    let named = [
        "\"name\":\"",
        "\"tool\":\"",
        "\"function\":\"",
        "\"tool_name\":\"",
    ]
    .iter()
    .any(|k| {
        ["python\"", "shell\""]
            .iter()
            .any(|t| squeezed.contains(&format!("{k}{t}")))
    });
    let args = squeezed.contains("\"arguments\":") || squeezed.contains("\"parameters\":");
    let code = squeezed.contains("\"code\":") || squeezed.contains("\"command\":");
    named || (args && code)
}

/// A fenced block in a language the tools run, or an untagged one that reads as Python
/// (the fences as text-call recovery reads them).
fn holds_code(text: &str) -> bool {
    text_calls::fenced_blocks(text).iter().any(|b| {
        let runnable = matches!(
            b.lang.as_str(),
            "python" | "py" | "python3" | "ipython" | "bash" | "sh" | "shell"
        );
        let pythonish = b.lang.is_empty()
            && ["import ", "pd.", "print(", "read_csv"]
                .iter()
                .any(|k| b.body.contains(k));
        (runnable && !b.body.trim().is_empty()) || pythonish
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_table_is_shown_whole_or_by_its_first_whole_lines() {
        let small = "region,revenue\nEast,9861.0\nNorth,8120.5\n";
        assert_eq!(bytecount_lines(small.as_bytes()), 3);
        assert_eq!(
            preview("by_region.csv", 3, true, small),
            "[written] output/by_region.csv:\nregion,revenue\nEast,9861.0\nNorth,8120.5"
        );
        // Only its first bytes shown: the half line at the cut is not.
        let part = "t,v\n1,2\n3,4\n5,";
        assert_eq!(
            preview("big.csv", 733, false, part),
            "[written] output/big.csv (733 lines), its first 3:\nt,v\n1,2\n3,4"
        );
        let long: String = (0..40).map(|i| format!("{i},x\n")).collect();
        let shown = preview("long.csv", bytecount_lines(long.as_bytes()), true, &long);
        assert!(shown.contains("(40 lines), its first 12:") && shown.ends_with("\n11,x"));
        // One column of numbers: the labels left in the index are named as the cause.
        let bare = "revenue\n9861.0\n8045.0\n";
        assert!(preview("by_region.csv", 3, true, bare).ends_with(UNLABELLED));
        assert!(!preview("by_region.csv", 3, true, small).contains("index=False"));
    }

    #[test]
    fn named_outputs_are_the_files_after_output_slash() {
        let task = "Save output/anomalies.csv, output/energy_anomalies.png and output/anomaly_report.md. Put the rest in output/.";
        assert_eq!(
            named_outputs(task),
            ["anomalies.csv", "energy_anomalies.png", "anomaly_report.md"]
        );
        assert!(named_outputs("put results in output/").is_empty());
        let with_note = format!(
            "look again\n\n{}",
            crate::protocol::app_note(
                "The outputs output/chart.png and output/a.csv were restored."
            )
        );
        assert!(named_outputs(&with_note).is_empty());
    }

    #[test]
    fn replies_that_meant_a_call_are_told_apart_from_answers() {
        // Real forms from small models, with the flaw that made them unreadable.
        let broken_json =
            "```json\n{\"name\": \"python\", \"arguments\": {\"code\": \"import pandas as pd\n```";
        assert!(unrun_call(broken_json, true).unwrap().contains("JSON"));
        // A real reply (replies/README.md): a bare call whose code string never closes.
        let unclosed = include_str!(
            "../model/chat_completions/replies/qwen0.5b-bare-call-string-never-closed.txt"
        );
        assert!(unrun_call(unclosed, true).unwrap().contains("JSON"));
        assert!(
            unrun_call("<tool_call>\n{\"name\": python}\n</tool_call>", true)
                .unwrap()
                .contains("<tool_call>")
        );
        let code =
            "Here is the code:\n```python\nimport pandas as pd\n```\nThis should solve the issue.";
        assert!(unrun_call(code, false).unwrap().contains("holds code"));
        // After code ran, an answer that quotes code is an answer.
        assert_eq!(unrun_call(code, true), None);
        assert_eq!(
            unrun_call(
                "The highest is Centro (1,204 units). See output/chart.png.",
                false
            ),
            None
        );
        assert_eq!(unrun_call("```\nregion,units\nCentro,3\n```", false), None);
    }

    #[test]
    fn the_checklist_says_what_is_done_and_the_tasks_words_for_the_next() {
        let task = "Find the anomalies in input/e.csv.\nSave them to output/anomalies.csv. Plot them as output/chart.png, one line per meter.";
        let problems = [OutputProblem {
            path: "output/chart.png".into(),
            problem: "does not exist".into(),
        }];
        assert_eq!(
            checklist(task, &problems, &[]).unwrap(),
            "[checklist] output/anomalies.csv done; output/chart.png does not exist. \
             Next: write output/chart.png (the task: \"Plot them as output/chart.png, one line per meter\"), \
             in a cell that computes it and ends with plt.savefig('output/chart.png')."
        );
        let csv = [OutputProblem {
            path: "output/anomalies.csv".into(),
            problem: "does not exist".into(),
        }];
        assert!(checklist(task, &csv, &[])
            .unwrap()
            .ends_with("ends with TABLE.to_csv('output/anomalies.csv', index=False)."));
        assert_eq!(how_to_write("output/data.bin", &[]), "");
        // The placeholder already built: the write alone.
        let names = ["df (DataFrame 10x2)".to_string(), "TEXT (str)".to_string()];
        assert_eq!(
            how_to_write("output/report.md", &names),
            ": TEXT is already in the kernel, so a cell of this one line writes it: \
             _ = open('output/report.md', 'w').write(TEXT if isinstance(TEXT, str) else '\\n'.join(map(str, TEXT)))"
        );
        assert!(how_to_write("output/a.csv", &names).starts_with(", in a cell that computes"));
        let empty = [OutputProblem {
            path: "output/anomalies.csv".into(),
            problem: check::NO_ROWS.into(),
        }];
        assert!(checklist(task, &empty, &[]).unwrap().ends_with(
            "print how many rows each condition keeps and loosen the one that keeps none."
        ));
        assert!(checklist(task, &[], &[]).unwrap().contains("all 2 files"));
        assert_eq!(checklist("What is the mean?", &[], &[]), None);
    }

    #[test]
    fn the_reminder_offers_a_way_out_only_when_asked() {
        let p = [OutputProblem {
            path: "output/chart.png".into(),
            problem: "is empty (0 bytes)".into(),
        }];
        let first = reminder(&p, false);
        assert!(first.starts_with("Not done yet: output/chart.png is empty (0 bytes)."));
        assert!(!first.contains("why"));
        assert!(reminder(&p, true).contains("say why"));
    }
}
