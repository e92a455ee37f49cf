//! The instructions given to the model, built for each ask from what is true of
//! this sandbox: the input files, the tools offered, the network, the limits and
//! the libraries. The user's own instructions are added, never replacing these.

use super::{Limits, ToolSet};

/// What the instructions say is installed when the sandbox cannot list its image's
/// packages (see [`crate::sandbox::Sandbox::python_env`], which names them with
/// their versions): the libraries every Sandalyst image has.
pub const LIBRARIES: &str = "numpy, pandas, scipy, matplotlib (Agg backend) and IPython";

/// A staged input as the instructions describe it.
#[derive(Clone, Debug, Default)]
pub struct InputSummary {
    /// Relative to `input/`.
    pub name: String,
    pub bytes: u64,
    /// The first lines of a text file (a CSV's header and a few rows), if any.
    pub head: Option<String>,
}

/// Everything the instructions of one ask depend on.
pub struct Context<'a> {
    pub inputs: &'a [InputSummary],
    pub tools: ToolSet,
    pub vision: bool,
    pub network: bool,
    pub limits: &'a Limits,
    pub memory_mib: u64,
    pub libraries: &'a str,
    /// The user's own instructions (a setting), added at the end.
    pub extra: &'a str,
}

pub fn build(c: &Context<'_>) -> String {
    let mut s = String::from(
        "You are a careful data analyst working in a sandboxed Linux container.\n\n\
         Workspace: the current directory is /workspace. The user's files are in input/ \
         (read-only; a large one may be a symlink to a read-only mount: read it as usual). \
         Save every file you produce under output/: only output/ is \
         returned to the user.\n",
    );
    if c.inputs.is_empty() {
        s.push_str("\nNo input files have been added yet.\n");
    } else {
        s.push_str("\nInput files:\n");
        for f in c.inputs {
            s.push_str(&format!("- input/{} ({})\n", f.name, human_bytes(f.bytes)));
            if let Some(head) = &f.head {
                for line in head.lines() {
                    s.push_str(&format!("    | {line}\n"));
                }
            }
        }
    }
    s.push_str("\nTools:\n");
    if c.tools.python {
        s.push_str(&format!(
            "- python: runs code in a persistent IPython kernel (variables and imports survive \
             between calls, like a notebook; display(), `!cmd` and magics work). Installed: {}. \
             Figures shown with plt.show() are displayed to the user; save charts you want to \
             keep as PNG files in output/. Print what you need to see; keep printed output short \
             (a result longer than about 12,000 characters is cut).\n",
            c.libraries
        ));
    }
    if c.tools.shell {
        s.push_str("- shell: runs a shell command (sh -c) in /workspace.\n");
    }
    if c.vision {
        s.push_str(
            "- view_image: look at an image file. Images you write to output/ are shown to you \
             after the call that wrote them: check your charts.\n",
        );
    }
    s.push_str(if c.network {
        "The sandbox has network access.\n"
    } else {
        "There is no network access and nothing can be installed.\n"
    });
    s.push_str(&format!(
        "\nLimits: {} turns for this request, {} s per call (longer code is interrupted), \
         {} MiB of memory.\n",
        c.limits.max_turns,
        c.limits.call_timeout.as_secs(),
        c.memory_mib
    ));
    s.push_str(
        "\nWork step by step: inspect the inputs first (rows, columns, types, missing values), \
         then analyse, save charts as PNG, tables as CSV and reports as Markdown, and check \
         your outputs by reading them back. The user cannot answer questions mid-task: state \
         your assumptions and go on. When you are done, reply with no tool call: that final \
         message is the answer the user reads, so give the key numbers and name the files \
         you wrote.\n",
    );
    if !c.extra.trim().is_empty() {
        s.push_str("\nThe user's own instructions:\n");
        s.push_str(c.extra.trim());
        s.push('\n');
    }
    s
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} bytes"),
    }
}

/// The instructions of an ask with default settings and no inputs (tests, replays).
pub fn default_for(limits: &Limits) -> String {
    build(&Context {
        inputs: &[],
        tools: ToolSet::default(),
        vision: false,
        network: false,
        limits,
        memory_mib: 2048,
        libraries: LIBRARIES,
        extra: "",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_say_what_is_true_of_this_ask() {
        let limits = Limits {
            max_turns: 7,
            ..Limits::default()
        };
        let inputs = [InputSummary {
            name: "sales.csv".into(),
            bytes: 2048,
            head: Some("date,region,revenue\n2024-01-01,North,10".into()),
        }];
        let s = build(&Context {
            inputs: &inputs,
            tools: ToolSet {
                python: true,
                shell: false,
            },
            vision: true,
            network: false,
            limits: &limits,
            memory_mib: 512,
            libraries: LIBRARIES,
            extra: "Answer in French.",
        });
        assert!(s.contains("- input/sales.csv (2.0 KiB)"));
        assert!(s.contains("    | date,region,revenue"));
        assert!(s.contains("- python:") && !s.contains("- shell:"));
        assert!(s.contains("- view_image:"));
        assert!(s.contains("no network access"));
        assert!(s.contains("7 turns") && s.contains("512 MiB"));
        assert!(s.contains("state your assumptions"));
        assert!(s.ends_with("Answer in French.\n"));
    }
}
