//! Safe text and safe exports, through the real command line: outputs named with
//! terminal escape sequences (clear screen, OSC 8 links, OSC 52 clipboard writes, an
//! 8-bit CSI, a bidi override) and model text full of them reach no terminal raw from
//! `run`, `runs list`, `runs show` or `runs export`, nor the exported headers; a hostile
//! `run.json` cannot make an export write outside its folder and is listed with its
//! reason; the exported script refuses to run on the host without an explicit flag or
//! variable and runs in the real sandbox; the notebook's Markdown loads nothing remote.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use sandalyst::model::{CallForm, Item};
use sandalyst::sandbox::docker::DockerSandbox;
use sandalyst::sandbox::{ExecStatus, Sandbox};
use sandalyst::store::{AskMeta, RunMeta, StagedFile, Store};
use sandalyst::workspace::{CollectLimits, Manifest};
use tokio_util::sync::CancellationToken;

/// The command, isolated from the developer's own configuration and keys.
fn sandalyst(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sandalyst"))
        .args(args)
        .env("SANDALYST_DATA_DIR", data)
        .env(
            "SANDALYST_CONFIG",
            "/nonexistent/sandalyst-test-config.toml",
        )
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("SANDALYST_IMAGE")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// What a terminal would act on: control characters other than newline and tab, and
/// the bidi controls that reorder what is shown.
fn assert_no_raw_controls(what: &str, bytes: &[u8]) {
    let t = text(bytes);
    let bad: Vec<(usize, char)> = t
        .char_indices()
        .filter(|&(_, c)| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: raw control characters {bad:?} in:\n{}",
        t.escape_debug()
    );
}

/// The output names, as the Python code spells them.
const NAMES_PY: &str = r#"[
    "clear\x1b[2J\x1b[H.txt",
    "link\x1b]8;;https:evil.example\x1b\\click\x1b]8;;\x1b\\.csv",
    "clip\x1b]52;c;ZXZpbA==\x07.md",
    "csi\x9b31m.txt",
    "bidi\u202egpj.exe",
]"#;

/// A replay that writes the hostile names and talks in escape sequences.
fn hostile_steps(dir: &Path) -> PathBuf {
    let code = format!(
        "# the model's comment, with a raw escape: \u{1b}[2J\u{1b}[H\n\
         names = {NAMES_PY}\n\
         for n in names:\n    \
             with open(\"/workspace/output/\" + n, \"w\") as f:\n        \
                 f.write(\"x\\n\")\n\
         print(\"printed \\x1b]52;c;cHduZWQ=\\x07 and \\x1b[31mred\\x1b[0m\")\n"
    );
    let say = "done \u{1b}[2J\u{1b}]8;;http://evil.example/\u{7}a link\u{1b}]8;;\u{7} \u{9b}1m";
    let steps = serde_json::json!([{ "python": code }, { "say": say }]);
    let path = dir.join("steps.json");
    std::fs::write(&path, steps.to_string()).unwrap();
    path
}

fn input_csv(dir: &Path) -> PathBuf {
    let path = dir.join("data.csv");
    std::fs::write(&path, "a,b\n1,2\n3,4\n").unwrap();
    path
}

#[test]
fn hostile_names_and_model_text_reach_no_terminal_raw_and_the_script_runs_only_where_it_may() {
    if common::no_engine_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let steps = hostile_steps(dir.path());
    let input = input_csv(dir.path());
    let replay = format!("replay:{}", steps.display());
    let run = sandalyst(
        &data,
        &[
            "run",
            "-i",
            input.to_str().unwrap(),
            "-p",
            "make files \u{1b}]52;c;cHJvbXB0\u{7}",
            "--model",
            &replay,
            "-v",
        ],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_no_raw_controls("run stdout", &run.stdout);
    assert_no_raw_controls("run stderr", &run.stderr);
    let err = text(&run.stderr);
    // The names are there, visibly escaped.
    for shown in [
        "wrote output/clear\\x1b[2J\\x1b[H.txt",
        "wrote output/clip\\x1b]52;c;ZXZpbA==\\x07.md",
        "wrote output/csi\\u{9b}31m.txt",
        "wrote output/bidi\\u{202e}gpj.exe",
        "printed \\x1b]52;c;cHduZWQ=\\x07",
    ] {
        assert!(err.contains(shown), "{shown} not in {err}");
    }
    assert!(err.contains("assistant: done \\x1b[2J\\x1b]8;;"), "{err}");

    let list = sandalyst(&data, &["runs", "list"]);
    assert!(list.status.success());
    assert_no_raw_controls("runs list", &list.stdout);
    let id = text(&list.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();

    let show = sandalyst(&data, &["runs", "show", &id]);
    assert!(show.status.success(), "{}", text(&show.stderr));
    assert_no_raw_controls("runs show", &show.stdout);
    let shown = text(&show.stdout);
    assert!(
        shown.contains("clip\\x1b]52;c;ZXZpbA==\\x07.md (2 bytes)"),
        "{shown}"
    );
    assert!(
        shown.contains("make files \\x1b]52;c;cHJvbXB0\\x07"),
        "{shown}"
    );

    let export = dir.path().join("export");
    let ex = sandalyst(
        &data,
        &[
            "runs",
            "export",
            &id,
            export.to_str().unwrap(),
            "--script",
            "--notebook",
        ],
    );
    assert!(ex.status.success(), "{}", text(&ex.stderr));
    assert_no_raw_controls("runs export", &ex.stdout);
    let script = std::fs::read_to_string(export.join("analysis.py")).unwrap();
    // The header (docstring and guard) and every line the export wrote as a comment.
    let header_end = script.find("os.environ.setdefault").unwrap();
    assert_no_raw_controls("script header", &script.as_bytes()[..header_end]);
    let ours: String = script
        .lines()
        .filter(|l| {
            l.starts_with("# --- cell") || l.starts_with("# ask-") || l.starts_with("# make")
        })
        .collect();
    assert_no_raw_controls("script comments", ours.as_bytes());
    assert!(script.contains("output/clip\\\\x1b]52"), "{script}");
    assert!(script.contains("written by a language model"));
    assert!(script.contains(&format!("sandalyst rerun {id} -i FILE")));
    let nb: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(export.join("analysis.ipynb")).unwrap())
            .unwrap();
    for cell in nb["cells"].as_array().unwrap() {
        if cell["cell_type"] == "markdown" {
            let source: String = cell["source"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap())
                .collect();
            assert_no_raw_controls("notebook markdown", source.as_bytes());
        }
    }

    // On the host: refused without the flag, and nothing of the model's code ran.
    let host = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = Command::new("python3");
        c.arg("analysis.py")
            .args(args)
            .current_dir(&export)
            .env_remove("SANDALYST_SANDBOX")
            .env_remove("SANDALYST_RUN_OUTSIDE_SANDBOX");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let refused = host(&[], &[]);
    let why = text(&refused.stderr);
    assert_ne!(refused.status.code(), Some(0), "{why}");
    assert!(
        why.starts_with("refused: this script holds code written by a model")
            && why.contains("python3 analysis.py --run-outside-sandbox")
            && why.contains("SANDALYST_RUN_OUTSIDE_SANDBOX=1")
            && why.trim_end().lines().count() == 1,
        "{why}"
    );
    assert!(!export.join("output").exists(), "no code ran");
    // The sandbox's marker alone, without /workspace, is not a sandbox.
    let marker_only = host(&[], &[("SANDALYST_SANDBOX", "1")]);
    assert_ne!(marker_only.status.code(), Some(0));
    assert!(!export.join("output").exists(), "no code ran");

    // With the flag (or the variable) it runs here.
    let ran = host(&["--run-outside-sandbox"], &[]);
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
    assert_eq!(std::fs::read_dir(export.join("output")).unwrap().count(), 5);
    std::fs::remove_dir_all(export.join("output")).unwrap();
    let ran = host(&[], &[("SANDALYST_RUN_OUTSIDE_SANDBOX", "1")]);
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
    assert!(text(&ran.stdout).contains("printed"));

    // In the real sandbox it runs as it is, from /workspace with input/ beside it.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let docker = common::engine().await;
        let manifest = Manifest::from_paths(std::slice::from_ref(&input)).unwrap();
        let sb = DockerSandbox::start(
            &docker,
            &common::run_id("safe-script"),
            &common::config(&docker).await,
            &manifest,
        )
        .await
        .unwrap();
        sb.write_file("analysis.py", script.as_bytes())
            .await
            .unwrap();
        let r = sb
            .shell(
                "python3 analysis.py",
                Duration::from_secs(120),
                &CancellationToken::new(),
                &|_, _| {},
            )
            .await
            .unwrap();
        assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
        assert!(r.stdout.contains("printed"), "{r:?}");
        let back = tempfile::tempdir().unwrap();
        sb.collect_outputs(back.path(), &CollectLimits::default())
            .await
            .unwrap();
        assert_eq!(std::fs::read_dir(back.path()).unwrap().count(), 5);
        sb.close().await.unwrap();
    });
}

/// A readable session written through the store, as a run of the app leaves it.
fn session(root: &Path, input: &Path, assistant: &str) -> String {
    let store = Store::open(root.to_path_buf()).unwrap();
    let run = store
        .create_run(RunMeta {
            prompt: "summarise".into(),
            files: vec![StagedFile {
                name: "data.csv".into(),
                bytes: std::fs::metadata(input).unwrap().len(),
                source: input.display().to_string(),
                ..Default::default()
            }],
            asks: vec![AskMeta {
                id: "ask-1".into(),
                prompt: "summarise".into(),
                ..Default::default()
            }],
            ..Default::default()
        })
        .unwrap();
    let ask = Some("ask-1");
    run.append_in(
        ask,
        &Item::User {
            text: "summarise".into(),
        },
        None,
    )
    .unwrap();
    run.append_in(
        ask,
        &Item::Assistant {
            text: assistant.into(),
        },
        None,
    )
    .unwrap();
    let code = "import os\nos.makedirs('output', exist_ok=True)\nopen('/workspace/output/ran.txt', 'w').write('ran')\n";
    run.append_in(
        ask,
        &Item::ToolCall {
            call_id: "c1".into(),
            name: "python".into(),
            arguments: serde_json::json!({ "code": code }).to_string(),
            form: CallForm::Structured,
        },
        None,
    )
    .unwrap();
    run.append_in(
        ask,
        &Item::ToolOutput {
            call_id: "c1".into(),
            output: "status: ok (0.01 s)\n".into(),
            is_error: false,
            images: Vec::new(),
        },
        None,
    )
    .unwrap();
    run.meta.id.clone()
}

#[test]
fn a_hostile_run_json_cannot_write_outside_the_export_folder_and_is_listed_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = input_csv(dir.path());
    let good = session(&data, &input, "fine");
    let outside = dir.path().join("outside");
    let write_meta = |folder: &str, meta: &RunMeta| {
        std::fs::create_dir_all(data.join(folder)).unwrap();
        std::fs::write(
            data.join(folder).join("run.json"),
            serde_json::to_string(meta).unwrap(),
        )
        .unwrap();
    };
    // An absolute id, an id with `..`, and a run.json that is not JSON.
    let absolute = "20260101-000000-0001";
    write_meta(
        absolute,
        &RunMeta {
            id: outside.display().to_string(),
            ..Default::default()
        },
    );
    let dotdot = "20260101-000000-0002";
    write_meta(
        dotdot,
        &RunMeta {
            id: "../../outside".into(),
            ..Default::default()
        },
    );
    std::fs::create_dir_all(data.join("20260101-000000-0003")).unwrap();
    std::fs::write(data.join("20260101-000000-0003/run.json"), "{\"id\": ").unwrap();
    // A readable run whose input name climbs out of input/.
    let climbing = "20260101-000000-0004";
    write_meta(
        climbing,
        &RunMeta {
            id: climbing.into(),
            files: vec![StagedFile {
                name: "../../outside.csv".into(),
                bytes: 12,
                source: input.display().to_string(),
                ..Default::default()
            }],
            ..Default::default()
        },
    );

    let dest = dir.path().join("exports").join("here");
    for id in [absolute, dotdot] {
        let o = sandalyst(&data, &["runs", "export", id, dest.to_str().unwrap()]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.starts_with(&format!("error: no readable run with id {id} in "))
                && err.contains("names the id")
                && err.trim_end().lines().count() == 1,
            "{err}"
        );
    }
    let o = sandalyst(
        &data,
        &[
            "runs",
            "export",
            climbing,
            dest.to_str().unwrap(),
            "--script",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("an input named \"../../outside.csv\""),
        "{err}"
    );
    // Nothing was written anywhere but under the export folder (nothing at all here).
    assert!(!outside.exists());
    assert!(!dir.path().join("outside.csv").exists());
    assert!(!dir.path().join("exports/outside.csv").exists());
    assert!(!dest.join("analysis.py").exists());

    // A plain copy goes to DIR/<the folder's own name>.
    let o = sandalyst(&data, &["runs", "export", climbing, dest.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout).trim(),
        dest.join(climbing).display().to_string()
    );
    let entries: Vec<_> = std::fs::read_dir(dir.path().join("exports"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, vec!["here"]);

    let list = sandalyst(&data, &["runs", "list"]);
    assert!(list.status.success(), "{}", text(&list.stderr));
    let listed = text(&list.stdout);
    let line = |folder: &str| {
        listed
            .lines()
            .find(|l| l.starts_with(folder))
            .unwrap_or_else(|| panic!("{folder} not listed: {listed}"))
            .to_string()
    };
    assert!(line(&good).contains("1 ask(s)"), "{listed}");
    assert!(line(climbing).contains("0 ask(s)"), "{listed}");
    assert!(
        line(absolute).contains(&format!(
            "unreadable: its run.json names the id {:?}",
            outside.display().to_string()
        )),
        "{listed}"
    );
    assert!(
        line(dotdot).contains("unreadable: its run.json names the id \"../../outside\""),
        "{listed}"
    );
    assert!(
        line("20260101-000000-0003").contains("unreadable: its run.json is not valid"),
        "{listed}"
    );
}

#[test]
fn the_notebooks_markdown_loads_nothing_remote() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = input_csv(dir.path());
    let assistant = "Here is the chart: ![trend](https://tracker.example/p.png?who=me)\n\n\
        Also ![ref][t] and ![rel](//cdn.example/x.gif) and our own ![chart](output/chart.png).\n\n\
        <img src=\"https://tracker.example/raw.png\"> <iframe src=\"https://evil.example\"></iframe>\n\n\
        <script>fetch('https://evil.example')</script>\n\n\
        [click](javascript:alert(1)) and [the docs](https://example.com/docs)\n\n\
        [t]: https://tracker.example/ref.png\n";
    let id = session(&data, &input, assistant);
    let export = dir.path().join("nb");
    let o = sandalyst(
        &data,
        &[
            "runs",
            "export",
            &id,
            export.to_str().unwrap(),
            "--notebook",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let nb: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(export.join("analysis.ipynb")).unwrap())
            .unwrap();
    let md: String = nb["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["cell_type"] == "markdown")
        .flat_map(|c| c["source"].as_array().unwrap().clone())
        .map(|l| l.as_str().unwrap().to_string())
        .collect();
    assert!(
        md.contains("trend \\[remote image blocked: https://tracker.example/p.png?who=me\\]"),
        "{md}"
    );
    assert!(
        md.contains("\\[remote image blocked: //cdn.example/x.gif\\]"),
        "{md}"
    );
    assert!(
        md.contains("![chart](output/chart.png)"),
        "the run's own image stays: {md}"
    );
    assert!(md.contains("[the docs](https://example.com/docs)"), "{md}");
    assert!(
        md.contains("click and"),
        "the link's text stays, not the link: {md}"
    );
    for gone in [
        "](https://tracker",
        "](//cdn",
        "<img",
        "<iframe",
        "<script",
        "javascript:",
    ] {
        assert!(!md.contains(gone), "{gone} in {md}");
    }
    assert!(md.contains("&lt;img src="), "raw HTML shown as text: {md}");
    assert!(md.contains("written by a language model"), "{md}");
}
