//! A session as one plain Python script: a header (inputs, outputs, image, date), then
//! every Python call in order, shell calls as `subprocess.run`, and the few IPython-only
//! lines translated (`!cmd`, `%%bash`, `%%time`) or commented out (other magics), with
//! `display()` defined when IPython is not there. Runs with `python3 analysis.py`
//! from the folder that holds `input/` (in the sandbox, `/workspace`). Calls that
//! failed in the session are kept as comments.
//!
//! The code was written by a model and ran in the sandbox (no network, no privileges):
//! the script says so at the top and refuses to run anywhere but a Sandalyst sandbox
//! (which sets [`SANDBOX_MARKER`]) unless it is given [`OUTSIDE_FLAG`] or
//! [`OUTSIDE_VARIABLE`]`=1`. Every text that is not code (the header, the requests,
//! the assistant's words, failed calls) is a comment or docstring with its control
//! characters escaped, so no line of it can turn into code (Python also ends a line
//! at a lone `\r`) or act on a terminal that shows the file.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::{cells, header_lines, target, Block, Tool};
use crate::explore::code::py_str;
use crate::store::RunDir;
use crate::terminal::{escape, escape_lines};

/// The file name of the exported script.
pub const FILE: &str = "analysis.py";

/// The environment variable every sandbox sets to `1`; with `/workspace` there, the
/// script knows it is in one.
pub const SANDBOX_MARKER: &str = crate::sandbox::MARKER_ENV;
/// The command-line flag that lets the script run outside a sandbox.
pub const OUTSIDE_FLAG: &str = "--run-outside-sandbox";
/// The environment variable (`=1`) that lets the script run outside a sandbox.
pub const OUTSIDE_VARIABLE: &str = "SANDALYST_RUN_OUTSIDE_SANDBOX";

/// Write the session's script as `dir/analysis.py` (`dir` is created; an existing
/// script is not overwritten). Returns its path.
pub fn write(run: &RunDir, dir: &Path) -> anyhow::Result<PathBuf> {
    let text = build(run)?;
    let path = target(dir, FILE)?;
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// The first code of the script: nothing the model wrote runs before it.
fn guard(id: &str) -> String {
    let refusal = format!(
        "refused: this script holds code written by a model and is meant to run in the \
         Sandalyst sandbox (sandalyst rerun {} -i FILE); to run it on this machine, read it \
         first, then: python3 ",
        escape(id)
    );
    let how = format!(" {OUTSIDE_FLAG} (or set {OUTSIDE_VARIABLE}=1)");
    format!(
        r#"import os
import subprocess
import sys

# Code written by a model runs only in the sandbox it was written for, unless you say so.
if "{OUTSIDE_FLAG}" in sys.argv[1:]:
    sys.argv.remove("{OUTSIDE_FLAG}")
elif os.environ.get("{OUTSIDE_VARIABLE}") != "1" and not (
    os.environ.get("{SANDBOX_MARKER}") == "1" and os.path.isdir("/workspace")
):
    sys.exit({} + sys.argv[0] + {})
"#,
        py_str(&refusal),
        py_str(&how)
    )
}

const PRELUDE: &str = r#"
os.environ.setdefault("MPLBACKEND", "Agg")
os.makedirs("output", exist_ok=True)
if not os.path.isdir("input"):
    sys.exit("run this script from the folder that holds input/ (the session's input files)")

try:
    from IPython.display import display
except ImportError:  # plain Python: show objects as text
    def display(*objs, **kwargs):
        for obj in objs:
            print(obj)


def _shell(command):
    """A shell call of the session (sh -c), stopped on failure as the session was not."""
    subprocess.run(command, shell=True, check=True)


def _shell_lines(command):
    """IPython's `x = !cmd`: the command's output lines."""
    out = subprocess.run(command, shell=True, capture_output=True, text=True).stdout
    return out.splitlines()
"#;

/// The script's text.
pub fn build(run: &RunDir) -> anyhow::Result<String> {
    let meta = &run.meta;
    let blocks = cells(run)?;
    let (inputs, outputs) = header_lines(meta);
    let title = if meta.title.is_empty() {
        "Sandalyst analysis"
    } else {
        &meta.title
    };
    let id = escape(&meta.id);
    let mut s = String::from("#!/usr/bin/env python3\n");
    s.push_str(&format!(
        "\"\"\"{}\n\nExported from Sandalyst session {} on {}.\n",
        doc_safe(&escape(title)),
        doc_safe(&id),
        chrono::Utc::now().format("%Y-%m-%d %H:%M UTC")
    ));
    s.push_str(&format!(
        "\nWARNING: the code below was written by a language model. It ran in Sandalyst's\n\
         sandbox (no network, no privileges, a read-only system, limits), which is where\n\
         it is meant to run; this replays its calls there on new input files:\n\
         \n    sandalyst rerun {id} -i FILE\n\n\
         By default this script refuses to run outside a Sandalyst sandbox. Read it before\n\
         you run it anywhere else, where it has your files, network and permissions:\n\
         \n    cd FOLDER-THAT-HOLDS-input && python3 analysis.py {OUTSIDE_FLAG}\n\
         \n(or set {OUTSIDE_VARIABLE}=1 instead of the flag).\n",
        id = doc_safe(&id)
    ));
    let image = super::image_of(run);
    if !image.is_empty() {
        s.push_str(&format!(
            "\nImage: {} (Python 3 with numpy, pandas, scipy, matplotlib).\n",
            doc_safe(&escape(&image))
        ));
    }
    s.push_str("\nInputs (in input/ beside where you run this):\n");
    for l in &inputs {
        s.push_str(&format!("  {}\n", doc_safe(l)));
    }
    if !outputs.is_empty() {
        s.push_str("\nOutputs (written to output/):\n");
        for l in &outputs {
            s.push_str(&format!("  {}\n", doc_safe(l)));
        }
    }
    s.push_str("\"\"\"\n\n");
    s.push_str(&guard(&meta.id));
    s.push_str(PRELUDE);
    let mut n = 0;
    for block in &blocks {
        match block {
            Block::Ask { id, prompt } => {
                s.push_str(&format!(
                    "\n# {}\n# {}: the request\n",
                    "=".repeat(76),
                    escape(id)
                ));
                s.push_str(&comment(prompt));
            }
            Block::Text { text, .. } => {
                s.push('\n');
                s.push_str(&comment(text));
            }
            Block::Code(cell) => {
                n += 1;
                s.push_str(&format!(
                    "\n# --- cell {n} ({}, call {}, {}) ---\n",
                    escape(&cell.ask),
                    escape(&cell.call_id),
                    cell.tool.name()
                ));
                let code = match cell.tool {
                    Tool::Python => translate(&cell.code),
                    Tool::Shell => format!("_shell({})\n", py_str(&cell.code)),
                };
                if cell.ok() {
                    s.push_str(&code);
                    if !code.ends_with('\n') {
                        s.push('\n');
                    }
                } else {
                    s.push_str(&format!(
                        "# This call ended `{}` in the session; kept for the record, not run:\n",
                        cell.status
                    ));
                    s.push_str(&comment(&code));
                }
            }
        }
    }
    Ok(s)
}

/// Python cell code with IPython-only lines made plain Python.
pub fn translate(code: &str) -> String {
    // Cell magics take the whole cell.
    let first = code.lines().next().unwrap_or("").trim();
    if let Some(magic) = first.strip_prefix("%%") {
        let body: String = code.split_once('\n').map(|x| x.1).unwrap_or("").to_string();
        let name = magic.split_whitespace().next().unwrap_or("");
        return match name {
            "bash" | "sh" => format!(
                "subprocess.run([{}, \"-c\", {}], check=True)\n",
                py_str(name),
                py_str(&body)
            ),
            "time" | "timeit" | "capture" => translate(&body),
            _ => format!(
                "# IPython cell magic %%{magic}: not run in a plain script\n{}",
                comment(&body)
            ),
        };
    }
    let mut out = String::new();
    let mut in_string: Option<&str> = None;
    for line in code.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let plain = in_string.is_none();
        // Track triple-quoted strings roughly: a line inside one is never a magic.
        for q in ["\"\"\"", "'''"] {
            let count = line.matches(q).count();
            if count % 2 == 1 {
                in_string = match in_string {
                    None => Some(q),
                    Some(open) if open == q => None,
                    other => other,
                };
            }
        }
        if !plain {
            out.push_str(line);
        } else if let Some(cmd) = trimmed.strip_prefix('!') {
            out.push_str(&format!("{indent}_shell({})", py_str(cmd)));
        } else if let Some((var, cmd)) = shell_assignment(trimmed) {
            out.push_str(&format!("{indent}{var} = _shell_lines({})", py_str(cmd)));
        } else if trimmed.starts_with('%') && trimmed[1..].starts_with(char::is_alphabetic) {
            let magic = &trimmed[1..];
            let name = magic.split_whitespace().next().unwrap_or("");
            match name {
                "time" | "timeit" => {
                    out.push_str(&format!("{indent}{}", magic[name.len()..].trim_start()))
                }
                "cd" => out.push_str(&format!("{indent}os.chdir({})", py_str(magic[2..].trim()))),
                _ => out.push_str(&format!(
                    "{indent}pass  # IPython magic, not run in a plain script: %{magic}"
                )),
            }
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// `files = !ls input` as (`files`, `ls input`).
fn shell_assignment(line: &str) -> Option<(&str, &str)> {
    let (var, rest) = line.split_once('=')?;
    let var = var.trim();
    let cmd = rest.trim_start().strip_prefix('!')?;
    let ident = !var.is_empty()
        && var
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == ',' || c == ' ');
    ident.then_some((var, cmd))
}

/// Text as `# ` comment lines, control characters escaped (a lone `\r` or a form
/// feed would otherwise end the comment for Python, or act on a terminal).
fn comment(text: &str) -> String {
    let mut s = String::new();
    for l in text.trim_end().lines() {
        if l.is_empty() {
            s.push_str("#\n");
        } else {
            s.push_str(&format!("# {}\n", escape_lines(l)));
        }
    }
    s
}

/// Text safe inside the module docstring.
fn doc_safe(s: &str) -> String {
    s.replace('\\', "\\\\").replace("\"\"\"", "'''")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipython_lines_become_plain_python() {
        let code = "import pandas as pd\n!ls input\nfiles = !ls output\n%matplotlib inline\nfor i in range(2):\n    %time x = i\ns = \"\"\"\n%not a magic\n!nor this\n\"\"\"\ndisplay(pd)\n";
        let t = translate(code);
        assert!(t.contains("_shell(\"ls input\")"), "{t}");
        assert!(t.contains("files = _shell_lines(\"ls output\")"), "{t}");
        assert!(t.contains("pass  # IPython magic, not run in a plain script: %matplotlib inline"));
        assert!(t.contains("    x = i\n"), "{t}");
        assert!(t.contains("\n%not a magic\n!nor this\n"), "{t}");
        assert!(t.contains("display(pd)"));
        let bash = translate("%%bash\nwc -l input/*.csv\necho \"done\"\n");
        assert_eq!(
            bash,
            "subprocess.run([\"bash\", \"-c\", \"wc -l input/*.csv\\necho \\\"done\\\"\\n\"], check=True)\n"
        );
        assert_eq!(translate("%%time\nx = 1\n"), "x = 1\n");
        assert!(translate("%%html\n<b>x</b>").starts_with("# IPython cell magic %%html"));
    }
}
