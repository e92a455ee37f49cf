//! Reproducible analyses in the real sandbox: the reference case's notebook and script
//! exports validate (nbformat 4.5 schema) and run in the sandbox image to the same
//! outputs; a session of notebook habits (display, figures, `!cmd`, a shell call, a
//! failed cell) exports to a valid notebook and a script that runs; `sandalyst rerun`
//! replays the reference case on new data with no model request, stops at a cell that
//! fails on new data, and the new session continues with a model from there.

use crate::common;

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sandalyst::agent::RunStatus;
use sandalyst::analysis::{self, notebook, script};
use sandalyst::model::offline::OfflineAnalyst;
use sandalyst::model::scripted::{ScriptedModel, Step};
use sandalyst::model::Item;
use sandalyst::run::{self, RunRequest};
use sandalyst::sandbox::docker::DockerSandbox;
use sandalyst::sandbox::Sandbox;
use sandalyst::session::{DockerFactory, Sessions};
use sandalyst::store::Store;
use sandalyst::workspace::{CollectLimits, Manifest};
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(120);

/// One data folder per test binary, holding the sessions the tests share.
struct Shared {
    _dir: tempfile::TempDir,
    root: PathBuf,
    /// The reference case, run with the offline analyst.
    reference: String,
    /// A session of notebook habits (see `habits`).
    habits: String,
}

static SHARED: tokio::sync::OnceCell<Shared> = tokio::sync::OnceCell::const_new();

async fn shared() -> &'static Shared {
    SHARED
        .get_or_init(|| async {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().join("sessions");
            let reference = reference_case(&root).await;
            let habits = habits(&root).await;
            Shared {
                _dir: dir,
                root,
                reference,
                habits,
            }
        })
        .await
}

fn energy_csv() -> PathBuf {
    common::repo_root().join("examples/building_energy.csv")
}

async fn reference_case(root: &Path) -> String {
    let docker = common::engine().await;
    let store = Store::open(root.to_path_buf()).unwrap();
    let prompt =
        std::fs::read_to_string(common::repo_root().join("examples/anomaly_task.md")).unwrap();
    let mut req = RunRequest::new(vec![energy_csv()], prompt);
    req.config.sandbox = common::config(&docker).await;
    let mut model = OfflineAnalyst::new();
    let out = run::execute(
        &common::sessions(&store),
        req,
        &mut model,
        &|_| {},
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(out.status, RunStatus::Finished);
    out.run_id
}

/// A session as an analyst at a notebook leaves it: a table displayed, a figure shown,
/// `!cmd`, a magic, a shell call, a cell that failed, and a file made from variables
/// of earlier cells.
async fn habits(root: &Path) -> String {
    let docker = common::engine().await;
    let store = Store::open(root.to_path_buf()).unwrap();
    let steps = [
        "import pandas as pd\nimport matplotlib.pyplot as plt\ndf = pd.read_csv('/workspace/input/building_energy.csv', parse_dates=['timestamp'])\ndisplay(df.head(3))\nprint('rows', len(df))",
        "%matplotlib inline\ndaily = df.set_index('timestamp')['energy_kwh'].resample('D').sum()\nfig, ax = plt.subplots(figsize=(6, 3))\ndaily.plot(ax=ax)\nplt.show()",
        "!wc -l input/building_energy.csv\nlines = !wc -l input/building_energy.csv\nprint(lines)",
        "daily['no such column']",
    ];
    let mut script: Vec<Step> = steps
        .iter()
        .enumerate()
        .map(|(i, code)| ScriptedModel::python(&format!("h{}", i + 1), code))
        .collect();
    script.push(Step::Reply(vec![ScriptedModel::call(
        "h5",
        "shell",
        serde_json::json!({"command": "ls input && echo shell-ok"}),
    )]));
    script.push(ScriptedModel::python(
        "h6",
        "daily.round(2).to_csv('output/daily.csv')\nfig.savefig('output/daily.png', dpi=80)\nprint('saved')",
    ));
    script.push(ScriptedModel::python(
        "h7",
        "daily.round(1).to_csv('output/daily.csv')",
    ));
    script.push(Step::Reply(vec![Item::Assistant {
        text: "Daily totals are in output/daily.csv.".into(),
    }]));
    let mut model = ScriptedModel::new(script);
    let mut req = RunRequest::new(vec![energy_csv()], "Daily totals, please".into());
    req.config.sandbox = common::config(&docker).await;
    let out = run::execute(
        &common::sessions(&store),
        req,
        &mut model,
        &|_| {},
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(out.status, RunStatus::Finished);
    out.run_id
}

/// Start a sandbox with the reference input staged.
async fn sandbox(name: &str) -> DockerSandbox {
    let docker = common::engine().await;
    let manifest = Manifest::from_paths(&[energy_csv()]).unwrap();
    DockerSandbox::start(
        &docker,
        &common::run_id(name),
        &common::config(&docker).await,
        &manifest,
    )
    .await
    .unwrap()
}

async fn python(sb: &DockerSandbox, code: &str) -> sandalyst::sandbox::ExecResult {
    sb.python(code, TIMEOUT, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap()
}

async fn shell(sb: &DockerSandbox, cmd: &str) -> sandalyst::sandbox::ExecResult {
    sb.shell(cmd, TIMEOUT, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap()
}

async fn collect(sb: &DockerSandbox, dest: &Path) {
    sb.collect_outputs(dest, &CollectLimits::default())
        .await
        .unwrap();
}

/// The same files; tables equal, images the same size, text identical apart from
/// lines that hold times. Returns how many text lines differed (all with times).
fn same_outputs(expected: &Path, got: &Path) -> usize {
    let list = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = sandalyst::artifacts::bundle::files_under(d)
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        v.sort();
        v
    };
    assert_eq!(list(expected), list(got), "different files");
    let mut timed = 0;
    for name in list(expected) {
        let (a, b) = (expected.join(&name), got.join(&name));
        if name.ends_with(".csv") {
            let rows = |p: &Path| -> Vec<csv::StringRecord> {
                csv::Reader::from_path(p)
                    .unwrap()
                    .records()
                    .map(|r| r.unwrap())
                    .collect()
            };
            assert_eq!(rows(&a), rows(&b), "{name}: tables differ");
        } else if name.ends_with(".png") {
            assert_eq!(
                image::image_dimensions(&a).unwrap(),
                image::image_dimensions(&b).unwrap(),
                "{name}: images differ in size"
            );
        } else {
            let (ta, tb) = (
                std::fs::read_to_string(&a).unwrap(),
                std::fs::read_to_string(&b).unwrap(),
            );
            let (la, lb): (Vec<&str>, Vec<&str>) = (ta.lines().collect(), tb.lines().collect());
            assert_eq!(la.len(), lb.len(), "{name}: different line counts");
            for (x, y) in la.iter().zip(&lb) {
                if x != y {
                    assert!(
                        has_time(x) && has_time(y),
                        "{name}: lines differ beyond times:\n{x}\n{y}"
                    );
                    timed += 1;
                }
            }
        }
    }
    timed
}

/// A clock time (`12:34`) in the line.
fn has_time(line: &str) -> bool {
    let b = line.as_bytes();
    b.windows(5).any(|w| {
        w[0].is_ascii_digit()
            && w[1].is_ascii_digit()
            && w[2] == b':'
            && w[3].is_ascii_digit()
            && w[4].is_ascii_digit()
    })
}

fn open_run(root: &Path, id: &str) -> sandalyst::store::RunDir {
    Store::open(root.to_path_buf())
        .unwrap()
        .open_run(id)
        .unwrap()
}

#[tokio::test]
async fn provenance_maps_each_reference_output_to_the_cell_that_wrote_it() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let s = shared().await;
    let run = open_run(&s.root, &s.reference);
    let prov = analysis::provenance(&run.meta);
    let blocks = analysis::cells(&run).unwrap();
    for name in ["anomalies.csv", "energy_anomalies.png", "anomaly_report.md"] {
        let p = prov
            .get(name)
            .unwrap_or_else(|| panic!("no provenance for {name}"));
        let cell = analysis::code_cells(&blocks)
            .into_iter()
            .find(|c| c.call_id == p.call_id)
            .expect("the cell that made it is in the export");
        assert!(cell.code.contains(name), "{name} made by {}", p.call_id);
        assert_eq!(p.inputs[0].0, "building_energy.csv");
    }
    // A file rewritten by a later cell is traced to that cell.
    let habits = open_run(&s.root, &s.habits);
    let prov = analysis::provenance(&habits.meta);
    assert_eq!(prov["daily.csv"].call_id, "h7");
    // "made by cell 7": the seventh code cell of the notebook and the script.
    let (n, cell) = analysis::cell_of(&habits, "daily.csv").unwrap().unwrap();
    assert_eq!((n, cell.call_id.as_str()), (7, "h7"));
    assert!(script::build(&habits)
        .unwrap()
        .contains("# --- cell 7 (ask-1, call h7, python) ---"));
    assert!(analysis::cell_of(&habits, "nothing.csv").unwrap().is_none());
    assert_eq!(prov["daily.png"].call_id, "h6");
}

#[tokio::test]
async fn notebooks_validate_and_hold_every_kind_of_output() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let s = shared().await;
    for id in [&s.reference, &s.habits] {
        common::validate_notebook(&notebook::build(&open_run(&s.root, id)).unwrap());
    }
    let nb = notebook::build(&open_run(&s.root, &s.habits)).unwrap();
    let cells = nb["cells"].as_array().unwrap();
    let code: Vec<&serde_json::Value> = cells.iter().filter(|c| c["cell_type"] == "code").collect();
    assert_eq!(code.len(), 7);
    let kinds = |c: &serde_json::Value| -> Vec<String> {
        c["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["output_type"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(code[0]["source"][0]
        .as_str()
        .unwrap()
        .starts_with("import pandas"));
    assert!(
        kinds(code[1]).contains(&"display_data".to_string()),
        "{:?}",
        code[1]
    );
    assert!(code[1]["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o["data"]["image/png"]
            .as_str()
            .is_some_and(|d| d.len() > 1000)));
    assert_eq!(kinds(code[3]), ["error"]);
    assert_eq!(code[3]["outputs"][0]["ename"], "KeyError");
    assert_eq!(code[3]["metadata"]["tags"][0], "raises-exception");
    assert_eq!(code[4]["source"][0], "%%bash\n");
    assert!(code[4]["outputs"][0]["text"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l.as_str().unwrap().contains("shell-ok")));
    // Inputs by relative path.
    assert!(code[0]["source"][2]
        .as_str()
        .unwrap()
        .contains("'input/building_energy.csv'"));
    let md: String = cells
        .iter()
        .filter(|c| c["cell_type"] == "markdown")
        .flat_map(|c| c["source"].as_array().unwrap().clone())
        .map(|l| l.as_str().unwrap().to_string())
        .collect();
    assert!(md.contains("> Daily totals, please") && md.contains("Daily totals are in"));
}

#[tokio::test]
async fn the_reference_notebook_and_script_run_in_the_sandbox_to_the_same_outputs() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let s = shared().await;
    let run = open_run(&s.root, &s.reference);
    let expected = run.outputs_dir();
    let tmp = tempfile::tempdir().unwrap();
    let sb = sandbox("notebook").await;

    // The notebook's code cells, top to bottom, through the kernel.
    let nb = notebook::build(&run).unwrap();
    for cell in nb["cells"].as_array().unwrap() {
        if cell["cell_type"] != "code" {
            continue;
        }
        let source: String = cell["source"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        let r = python(&sb, &source).await;
        assert!(r.traceback.is_none(), "{:?}", r.traceback);
    }
    collect(&sb, &tmp.path().join("nb")).await;
    let timed_nb = same_outputs(&expected, &tmp.path().join("nb"));

    // The script, with `python3 analysis.py` from the folder that holds input/.
    let text = script::build(&run).unwrap();
    assert!(text.contains("input/building_energy.csv (41969 bytes, sha256 "));
    sb.write_file("analysis.py", text.as_bytes()).await.unwrap();
    let r = shell(&sb, "rm -rf output/* && python3 analysis.py > /tmp/script.log 2>&1; echo exit=$?; tail -5 /tmp/script.log").await;
    assert!(r.stdout.contains("exit=0"), "{}", r.stdout);
    collect(&sb, &tmp.path().join("py")).await;
    let timed_py = same_outputs(&expected, &tmp.path().join("py"));
    eprintln!("lines that differ only by times: notebook {timed_nb}, script {timed_py}");
    sb.close().await.unwrap();
}

#[tokio::test]
async fn notebook_habits_run_in_the_kernel_and_as_plain_python() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let s = shared().await;
    let run = open_run(&s.root, &s.habits);
    let text = script::build(&run).unwrap();
    assert!(
        text.contains("_shell(\"wc -l input/building_energy.csv\")"),
        "{text}"
    );
    assert!(text.contains("lines = _shell_lines("));
    assert!(text.contains("pass  # IPython magic, not run in a plain script: %matplotlib inline"));
    assert!(
        text.contains("# daily['no such column']"),
        "the failed cell is a comment"
    );
    assert!(text.contains("_shell(\"ls input && echo shell-ok\")"));
    let sb = sandbox("script").await;
    let tmp = tempfile::tempdir().unwrap();
    let expected = open_run(&s.root, &s.habits).outputs_dir();

    // The notebook through the kernel: display, the figure, `!cmd` and `%%bash` work;
    // only the cell tagged `raises-exception` raises.
    let nb = notebook::build(&run).unwrap();
    for cell in nb["cells"].as_array().unwrap() {
        if cell["cell_type"] != "code" {
            continue;
        }
        let source: String = cell["source"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        let r = python(&sb, &source).await;
        let tagged = cell["metadata"]["tags"][0] == "raises-exception";
        assert_eq!(r.traceback.is_some(), tagged, "{source}: {r:?}");
        if source.starts_with("%%bash") {
            assert!(r.stdout.contains("shell-ok"), "{r:?}");
        }
        if source.contains("plt.show()") {
            assert_eq!(r.figures.len(), 1, "the figure is shown again");
        }
    }
    collect(&sb, &tmp.path().join("nb")).await;
    same_outputs(&expected, &tmp.path().join("nb"));

    sb.write_file("analysis.py", text.as_bytes()).await.unwrap();
    let r = shell(&sb, "rm -rf output/* && python3 analysis.py").await;
    assert_eq!(r.status, sandalyst::sandbox::ExecStatus::Ok, "{r:?}");
    assert!(
        r.stdout.contains("shell-ok") && r.stdout.contains("saved"),
        "{}",
        r.stdout
    );
    collect(&sb, &tmp.path().join("py")).await;
    same_outputs(&expected, &tmp.path().join("py"));
    sb.close().await.unwrap();
}

/// A provider double on 127.0.0.1 that counts the connections it gets.
fn provider_double() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let count = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            count.fetch_add(1, Ordering::SeqCst);
            if let Ok(mut s) = stream {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf);
            }
        }
    });
    (url, hits)
}

fn sandalyst(root: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandalyst"));
    c.args(args)
        .env("SANDALYST_DATA_DIR", root)
        .env(
            "SANDALYST_CONFIG",
            "/nonexistent/sandalyst-test-config.toml",
        )
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("SANDALYST_IMAGE")
        .current_dir(common::repo_root());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn planted(events_json: &Path) -> Vec<(String, String)> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(events_json).unwrap()).unwrap();
    v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["start"].as_str().unwrap().to_string(),
                e["end"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn rerun_on_new_data_makes_the_three_files_without_a_model_request() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let s = shared().await;
    let (url, hits) = provider_double();
    let cfg = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        cfg.path(),
        format!(
            "model = \"openai-compatible:double\"\n\n[openai-compatible]\nbase_url = \"{url}\"\n"
        ),
    )
    .unwrap();
    let next = common::repo_root().join("tests/fixtures/building_energy_next.csv");
    let root = s.root.clone();
    let (reference, cfg_path, next_s) = (
        s.reference.clone(),
        cfg.path().display().to_string(),
        next.display().to_string(),
    );
    let url2 = url.clone();
    let out = tokio::task::spawn_blocking(move || {
        sandalyst(
            &root,
            &["rerun", &reference, "-i", &next_s],
            &[
                ("SANDALYST_CONFIG", &cfg_path),
                ("OPENAI_BASE_URL", &url2),
                ("OPENAI_API_KEY", "sk-test-not-used"),
            ],
        )
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the provider double was called"
    );
    let outputs = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    for f in ["anomalies.csv", "energy_anomalies.png", "anomaly_report.md"] {
        assert!(outputs.join(f).is_file(), "{f} missing after the re-run");
    }
    // The events of the new data, not the old.
    let table = std::fs::read_to_string(outputs.join("anomalies.csv")).unwrap();
    for (start, _) in
        planted(&common::repo_root().join("tests/fixtures/building_energy_next.events.json"))
    {
        assert!(table.contains(&start), "{start} not flagged:\n{table}");
    }
    assert!(!table.contains("2024-05-25"), "old events in the new table");
    let new_id = outputs
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let run = open_run(&s.root, &new_id);
    assert_eq!(run.meta.rerun_of.as_deref(), Some(s.reference.as_str()));
    assert_eq!(run.meta.files[0].name, "building_energy.csv");
    assert!(run.meta.files[0]
        .source
        .ends_with("building_energy_next.csv"));
    // Provenance of the new session names the new input's hash.
    let p = &run.meta.provenance["anomalies.csv"];
    assert_eq!(p.inputs[0].1, run.meta.files[0].sha256);
    assert!(stderr.contains("3 of 3 call(s) ran"), "{stderr}");
    // The replayed check step checked the new findings, not the old run's.
    let transcript = std::fs::read_to_string(run.path.join("transcript.jsonl")).unwrap();
    let verdict = transcript
        .lines()
        .find(|l| l.contains("\"tool_output\"") && l.contains("SANDALYST_VALIDATION"))
        .expect("the check step ran");
    assert!(
        verdict.contains("All outputs valid.") && !verdict.contains("not in the table"),
        "{verdict}"
    );
}

#[tokio::test]
async fn a_cell_failing_on_new_data_stops_the_replay_and_a_model_continues() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let s = shared().await;
    let docker = common::engine().await;
    let tmp = tempfile::tempdir().unwrap();
    let old = tmp.path().join("old");
    let new = tmp.path().join("new");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::create_dir_all(&new).unwrap();
    std::fs::write(old.join("sales.csv"), "region,amount\nN,3\nS,5\n").unwrap();
    std::fs::write(new.join("sales.csv"), "region,price\nN,7\nS,11\nE,2\n").unwrap();

    // The original session: two cells, the second needs the `amount` column.
    let store = Store::open(s.root.clone()).unwrap();
    let mut model = ScriptedModel::new([
        ScriptedModel::python(
            "s1",
            "import pandas as pd\ndf = pd.read_csv('input/sales.csv')\ndf.to_csv('output/clean.csv', index=False)\nprint(len(df), 'rows')",
        ),
        ScriptedModel::python(
            "s2",
            "total = df['amount'].sum()\nopen('output/total.txt', 'w').write(str(total))",
        ),
        Step::Reply(vec![Item::Assistant { text: "Total written.".into() }]),
    ]);
    let mut req = RunRequest::new(vec![old.join("sales.csv")], "Total sales".into());
    req.config.sandbox = common::config(&docker).await;
    let first = run::execute(
        &common::sessions(&store),
        req,
        &mut model,
        &|_| {},
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(first.outputs_dir.join("total.txt")).unwrap(),
        "8"
    );

    let new_csv = new.join("sales.csv").display().to_string();
    let root = s.root.clone();
    let id = first.run_id.clone();
    let out =
        tokio::task::spawn_blocking(move || sandalyst(&root, &["rerun", &id, "-i", &new_csv], &[]))
            .await
            .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("call 2 of 2 (s2"), "{stderr}");
    assert!(stderr.contains("KeyError: 'amount'"), "{stderr}");
    let outputs = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let new_id = outputs
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        stderr.contains(&format!("sandalyst ask {new_id} -p")),
        "{stderr}"
    );
    // The cell before the failure ran on the new data; the failing one wrote nothing.
    assert_eq!(
        std::fs::read_to_string(outputs.join("clean.csv"))
            .unwrap()
            .lines()
            .count(),
        4
    );
    assert!(!outputs.join("total.txt").exists());

    // Continue with a model: it sees the replay and the traceback, and goes on in the
    // same workspace.
    let sessions = Sessions::new(s.root.clone(), Arc::new(DockerFactory)).unwrap();
    let session = sessions.open(&new_id).await.unwrap();
    let model = ScriptedModel::new([
        ScriptedModel::python(
            "fix",
            "import pandas as pd\ndf = pd.read_csv('output/clean.csv')\nopen('output/total.txt', 'w').write(str(df['price'].sum()))",
        ),
        Step::Reply(vec![Item::Assistant { text: "The new export has `price`; total written.".into() }]),
    ]);
    let log = model.log.clone();
    let h = session
        .ask("Fix it for the new columns".into(), Box::new(model))
        .unwrap();
    let outcome = h.outcome().await;
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(
        std::fs::read_to_string(outcome.outputs_dir.join("total.txt")).unwrap(),
        "20"
    );
    let seen = log.lock().unwrap()[0].items.clone();
    assert!(matches!(&seen[0], Item::User { text } if text.starts_with("[re-run]")));
    assert!(seen.iter().any(|i| matches!(i, Item::ToolOutput { output, is_error: true, .. } if output.contains("KeyError: 'amount'"))));
    assert!(matches!(seen.last(), Some(Item::User { text }) if text.starts_with("Fix it")));
    session.close().await;
    let run = open_run(&s.root, &new_id);
    assert_eq!(run.meta.rerun_of.as_deref(), Some(first.run_id.as_str()));
    assert_eq!(run.meta.asks.len(), 2);
    assert_eq!(analysis::provenance(&run.meta)["total.txt"].call_id, "fix");
    // The replay's ask ended failed, saying where it stopped.
    let replay_status = run.meta.asks[0].status.clone();
    assert!(
        matches!(&replay_status, Some(RunStatus::Failed { message }) if message.starts_with("The replay stopped at call 2 of 2")),
        "{replay_status:?}"
    );
    let blocks = analysis::cells(&run).unwrap();
    assert_eq!(
        analysis::code_cells(&blocks).len(),
        3,
        "two replayed cells and the fix"
    );
}
