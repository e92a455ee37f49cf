//! The instructions given to the model, built for each ask from what is true of
//! this sandbox: the input files, the tools offered, the network, the limits and
//! the libraries. The user's own instructions are added, never replacing these.

use super::{Limits, ToolSet};
use crate::sandbox::NetworkMode;

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
    pub network: &'a NetworkMode,
    pub limits: &'a Limits,
    pub memory_mib: u64,
    pub libraries: &'a str,
    /// The image has plotly: the model may save an interactive chart as HTML, which the
    /// desktop shows live in a sandboxed frame with no network.
    pub interactive_charts: bool,
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
    describe_inputs(&mut s, c.inputs);
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
        if c.interactive_charts {
            s.push_str(
                "  When hovering over values, zooming or toggling series helps, you may also save \
                 ONE interactive chart as a self-contained HTML file: \
                 `fig.write_html('output/NAME.html', include_plotlyjs=True)` with plotly \
                 (the library inlined; never include_plotlyjs='cdn' or any other URL: the \
                 window that shows it has no network, so a chart that loads a script from \
                 elsewhere stays blank). Save the same chart as PNG too.\n",
            );
        }
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
    match c.network {
        NetworkMode::Off => {
            s.push_str("There is no network access and nothing can be installed.\n")
        }
        NetworkMode::Full => s.push_str(
            "The sandbox has network access; `pip install NAME` (in a shell, or `%pip install NAME` in python) installs into the workspace and imports at once.\n",
        ),
        NetworkMode::Allow(list) => s.push_str(&format!(
            "The sandbox reaches only these hosts, through a proxy that is already configured \
             (HTTP_PROXY/HTTPS_PROXY; requests, urllib and pip use it): {list}. Anything else is \
             refused with HTTP 403. When the list includes the Python package index, `%pip \
             install NAME` in python installs into the workspace and imports at once.\n"
        )),
    }
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
    // Small models answer a "total" with a count of rows and quote numbers from memory;
    // the words below are the habits that tell them apart.
    s.push_str(
        "Compute what the words ask: a total is the sum of a value column \
         (df.groupby(KEY)[VALUE].sum()), an average its mean; count rows only when asked how \
         many. Take every number of the answer from output your code printed.\n",
    );
    if !c.extra.trim().is_empty() {
        s.push_str("\nThe user's own instructions:\n");
        s.push_str(c.extra.trim());
        s.push('\n');
    }
    s
}

/// How many inputs the instructions describe one by one (name, size, first lines);
/// the rest are counted by folder and file type, so that a folder of thousands of
/// files costs a few lines of every request, not a line (and a head) per file.
pub const DETAILED_INPUTS: usize = 30;
/// The first lines of all detailed inputs together, in bytes.
const HEADS_BUDGET: usize = 6 * 1024;
/// Folders named in the count of the rest; smaller ones are counted together.
const MAX_FOLDERS: usize = 20;
/// File types named per folder; the rest are "other".
const MAX_TYPES: usize = 6;
/// A longer name is shortened where it is shown.
const MAX_NAME: usize = 160;

/// The inputs described in detail, as indices into `inputs`, in the order shown:
/// top-level files first, then by path, at most [`DETAILED_INPUTS`]. Only these are
/// opened for their first lines.
pub fn in_detail(inputs: &[InputSummary]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..inputs.len()).collect();
    let key = |i: &usize| (inputs[*i].name.matches('/').count(), &inputs[*i].name);
    if order.len() > DETAILED_INPUTS {
        order.select_nth_unstable_by(DETAILED_INPUTS, |a, b| key(a).cmp(&key(b)));
        order.truncate(DETAILED_INPUTS);
    }
    order.sort_by(|a, b| key(a).cmp(&key(b)));
    order
}

fn describe_inputs(s: &mut String, inputs: &[InputSummary]) {
    if inputs.is_empty() {
        s.push_str("\nNo input files have been added yet.\n");
        return;
    }
    let detailed = in_detail(inputs);
    if detailed.len() == inputs.len() {
        s.push_str("\nInput files:\n");
    } else {
        let total: u64 = inputs.iter().map(|f| f.bytes).sum();
        s.push_str(&format!(
            "\nInput files: {} files, {} in all. The first {} (top-level files first):\n",
            thousands(inputs.len()),
            human_bytes(total),
            detailed.len()
        ));
    }
    let mut heads = HEADS_BUDGET;
    for &i in &detailed {
        let f = &inputs[i];
        s.push_str(&format!(
            "- input/{} ({})\n",
            shorten(&f.name),
            human_bytes(f.bytes)
        ));
        let Some(head) = &f.head else { continue };
        for line in head.lines() {
            if line.len() + 7 > heads {
                heads = 0;
                break;
            }
            heads -= line.len() + 7;
            s.push_str(&format!("    | {line}\n"));
        }
    }
    if detailed.len() < inputs.len() {
        let mut shown = vec![false; inputs.len()];
        for &i in &detailed {
            shown[i] = true;
        }
        let rest: Vec<&InputSummary> = inputs
            .iter()
            .zip(&shown)
            .filter(|(_, shown)| !**shown)
            .map(|(f, _)| f)
            .collect();
        s.push_str(&format!(
            "The other {}, by folder and type (list and read them with code when you need them):\n",
            thousands(rest.len())
        ));
        for line in count_by_folder(&rest) {
            s.push_str(&format!("- {line}\n"));
        }
    }
}

/// The files added to a session, for the note the model reads before its next ask:
/// the first [`DETAILED_INPUTS`] by name and size, the rest counted by folder and type.
pub fn added_files(added: &[InputSummary]) -> String {
    let detailed = in_detail(added);
    let mut parts: Vec<String> = detailed
        .iter()
        .map(|&i| {
            format!(
                "input/{} ({} bytes)",
                shorten(&added[i].name),
                added[i].bytes
            )
        })
        .collect();
    if detailed.len() < added.len() {
        let rest: Vec<&InputSummary> = added
            .iter()
            .enumerate()
            .filter(|(i, _)| !detailed.contains(i))
            .map(|(_, f)| f)
            .collect();
        parts.push(format!(
            "and {} more ({})",
            thousands(rest.len()),
            count_by_folder(&rest).join("; ")
        ));
    }
    parts.join(", ")
}

#[derive(Default)]
struct Group {
    files: usize,
    bytes: u64,
    types: std::collections::BTreeMap<String, usize>,
}

impl Group {
    fn add(&mut self, f: &InputSummary) {
        self.files += 1;
        self.bytes += f.bytes;
        *self.types.entry(file_type(&f.name)).or_default() += 1;
    }

    fn absorb(&mut self, other: Group) {
        self.files += other.files;
        self.bytes += other.bytes;
        for (t, n) in other.types {
            *self.types.entry(t).or_default() += n;
        }
    }

    fn describe(&self) -> String {
        let mut types: Vec<(&String, &usize)> = self.types.iter().collect();
        types.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let mut named: Vec<String> = types
            .iter()
            .take(MAX_TYPES)
            .map(|(t, n)| format!("{} {t}", thousands(**n)))
            .collect();
        let other: usize = types.iter().skip(MAX_TYPES).map(|(_, n)| **n).sum();
        if other > 0 {
            named.push(format!("{} of other types", thousands(other)));
        }
        format!(
            "{} {}, {} ({})",
            thousands(self.files),
            if self.files == 1 { "file" } else { "files" },
            human_bytes(self.bytes),
            named.join(", ")
        )
    }
}

/// Lines like `input/docs/: 19,950 files, 78.1 MiB (19,000 .txt, 950 .pdf)`: by the
/// folder a file is in; by top-level folder when that makes too many lines; at most
/// [`MAX_FOLDERS`] lines, the smallest folders counted together.
fn count_by_folder(files: &[&InputSummary]) -> Vec<String> {
    use std::collections::BTreeMap;
    let group = |depth: Option<usize>| {
        let mut groups: BTreeMap<String, Group> = BTreeMap::new();
        for f in files {
            let folder = match f.name.rsplit_once('/') {
                None => String::new(),
                Some((dir, _)) => match depth {
                    Some(d) => dir.split('/').take(d).collect::<Vec<_>>().join("/"),
                    None => dir.to_string(),
                },
            };
            groups.entry(folder).or_default().add(f);
        }
        groups
    };
    let mut groups = group(None);
    if groups.len() > MAX_FOLDERS {
        groups = group(Some(1));
    }
    let mut groups: Vec<(String, Group)> = groups.into_iter().collect();
    let mut others = Group::default();
    let mut other_folders = 0;
    if groups.len() > MAX_FOLDERS {
        groups.sort_by(|a, b| b.1.files.cmp(&a.1.files).then(a.0.cmp(&b.0)));
        for (_, g) in groups.split_off(MAX_FOLDERS - 1) {
            others.absorb(g);
            other_folders += 1;
        }
        groups.sort_by(|a, b| a.0.cmp(&b.0));
    }
    let mut lines: Vec<String> = groups
        .iter()
        .map(|(folder, g)| {
            let folder = if folder.is_empty() {
                "input/".to_string()
            } else {
                format!("input/{}/", shorten(folder))
            };
            format!("{folder}: {}", g.describe())
        })
        .collect();
    if other_folders > 0 {
        lines.push(format!(
            "{} other folders: {}",
            thousands(other_folders),
            others.describe()
        ));
    }
    lines
}

/// `.csv`, `.txt`, ... lower-cased; "no extension" or "other" for names without a
/// short plain one.
fn file_type(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    match base.rsplit_once('.') {
        Some((stem, ext))
            if !stem.is_empty()
                && !ext.is_empty()
                && ext.len() <= 10
                && ext.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            format!(".{}", ext.to_ascii_lowercase())
        }
        Some((stem, _)) if !stem.is_empty() => "other".into(),
        _ => "no extension".into(),
    }
}

fn shorten(name: &str) -> String {
    if name.chars().count() <= MAX_NAME {
        return name.to_string();
    }
    let cut: String = name.chars().take(MAX_NAME).collect();
    format!("{cut}…")
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
        network: &NetworkMode::Off,
        limits,
        memory_mib: 2048,
        libraries: LIBRARIES,
        interactive_charts: false,
        extra: "",
    })
}

/// 19950 as "19,950".
fn thousands(n: usize) -> String {
    crate::artifacts::thousands(n as u64)
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
            network: &NetworkMode::Off,
            limits: &limits,
            memory_mib: 512,
            libraries: LIBRARIES,
            interactive_charts: false,
            extra: "Answer in French.",
        });
        assert!(s.contains("- input/sales.csv (2.0 KiB)"));
        assert!(s.contains("    | date,region,revenue"));
        assert!(s.contains("- python:") && !s.contains("- shell:"));
        assert!(s.contains("- view_image:"));
        assert!(s.contains("no network access"));
        assert!(s.contains("7 turns") && s.contains("512 MiB"));
        assert!(s.contains("state your assumptions"));
        assert!(s.contains("a total is the sum of a value column"));
        assert!(s.ends_with("Answer in French.\n"));
        assert!(!s.contains("write_html"), "no plotly, no interactive chart");
    }

    #[test]
    fn an_image_with_plotly_offers_one_interactive_chart_with_the_library_inlined() {
        let limits = Limits::default();
        let s = build(&Context {
            inputs: &[],
            tools: ToolSet {
                python: true,
                shell: false,
            },
            vision: false,
            network: &NetworkMode::Off,
            limits: &limits,
            memory_mib: 512,
            libraries: "Python 3.13.5 with pandas 2.2.3 and plotly 5.20.0",
            interactive_charts: true,
            extra: "",
        });
        assert!(s.contains("ONE interactive chart"), "{s}");
        assert!(
            s.contains("fig.write_html('output/NAME.html', include_plotlyjs=True)"),
            "{s}"
        );
        assert!(s.contains("never include_plotlyjs='cdn'"), "{s}");
        assert!(s.contains("Save the same chart as PNG too"), "{s}");
    }

    fn many(n: usize) -> Vec<InputSummary> {
        let mut inputs: Vec<InputSummary> = (0..n)
            .map(|i| InputSummary {
                name: format!(
                    "docs/part{}/note_{i:05}.{}",
                    i % 3,
                    if i % 20 == 0 { "pdf" } else { "txt" }
                ),
                bytes: 1000,
                head: Some("a first line\na second line".into()),
            })
            .collect();
        inputs.push(InputSummary {
            name: "sales.csv".into(),
            bytes: 2048,
            head: Some("date,region,revenue".into()),
        });
        inputs
    }

    #[test]
    fn thousands_of_inputs_cost_a_few_lines_and_top_level_files_come_first() {
        let inputs = many(20_000);
        let detailed = in_detail(&inputs);
        assert_eq!(detailed.len(), DETAILED_INPUTS);
        assert_eq!(inputs[detailed[0]].name, "sales.csv");
        let s = build(&Context {
            inputs: &inputs,
            tools: ToolSet::default(),
            vision: false,
            network: &NetworkMode::Off,
            limits: &Limits::default(),
            memory_mib: 512,
            libraries: LIBRARIES,
            interactive_charts: false,
            extra: "",
        });
        assert!(s.len() < 8_000, "{} bytes:\n{s}", s.len());
        assert!(s.contains("Input files: 20,001 files, 19.1 MiB in all. The first 30"));
        assert!(s.contains("- input/sales.csv (2.0 KiB)\n    | date,region,revenue\n"));
        assert!(s.contains("- input/docs/part0/note_00000.pdf (1000 bytes)"));
        assert!(s.contains("The other 19,971, by folder and type"));
        // 20,000 / 3 folders; the 29 detailed files were all in part0.
        assert!(
            s.contains("- input/docs/part1/: 6,667 files, 6.4 MiB (6,334 .txt, 333 .pdf)"),
            "{s}"
        );
        assert!(s.contains("- input/docs/part0/: 6,638 files"), "{s}");
    }

    #[test]
    fn many_folders_are_counted_by_top_folder_then_together() {
        // 500 folders of one file each: by top-level folder, 500 lines would still be
        // too many, so the 19 largest are named and the rest counted together.
        let inputs: Vec<InputSummary> = (0..500)
            .map(|i| InputSummary {
                name: format!("f{i:03}/x/data.json"),
                bytes: 10,
                head: None,
            })
            .chain((0..40).map(|i| InputSummary {
                name: format!("big/{i}.CSV"),
                bytes: 10,
                head: None,
            }))
            .collect();
        let rest: Vec<&InputSummary> = inputs.iter().collect();
        let lines = count_by_folder(&rest);
        assert_eq!(lines.len(), MAX_FOLDERS);
        assert_eq!(lines[0], "input/big/: 40 files, 400 bytes (40 .csv)");
        assert_eq!(
            lines.last().unwrap(),
            "482 other folders: 482 files, 4.7 KiB (482 .json)"
        );
        assert_eq!(file_type("a/README"), "no extension");
        assert_eq!(file_type("a/.hidden"), "no extension");
        assert_eq!(file_type("x.tar.gz"), ".gz");
        assert_eq!(file_type("x.we ird"), "other");
        assert_eq!(thousands(1_234_567), "1,234,567");
        let note = added_files(&inputs);
        assert!(note.starts_with("input/big/0.CSV (10 bytes), "), "{note}");
        assert!(
            note.contains("and 510 more (input/big/: 10 files"),
            "{note}"
        );
    }
}
