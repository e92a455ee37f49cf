//! End to end through the `sandalyst` command line, with the offline analyst and the
//! real Docker sandbox; and the command line's answers to bad input.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The command, isolated from the developer's own configuration and keys.
pub(crate) fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandalyst"));
    c.env(
        "SANDALYST_CONFIG",
        "/nonexistent/sandalyst-test-config.toml",
    )
    .env_remove("OPENAI_API_KEY")
    .env_remove("ANTHROPIC_API_KEY")
    .env_remove("SANDALYST_IMAGE");
    c
}

fn sandalyst(args: &[&str], data_dir: &Path) -> Output {
    let mut c = command();
    // A run that names its isolation gets what it names, `auto` included: the test
    // run's SANDALYST_ISOLATION (scripts/test.sh: runc) is for the others.
    if args.contains(&"--isolation") {
        c.env_remove("SANDALYST_ISOLATION");
    }
    c.args(args)
        .env("SANDALYST_DATA_DIR", data_dir)
        .current_dir(repo())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Events the generator planted, as (start, end) "YYYY-MM-DD HH:MM" strings.
fn planted(events_json: &Path) -> Vec<(String, String, String)> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(events_json).unwrap()).unwrap();
    v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap().to_string(),
                e["start"].as_str().unwrap().to_string(),
                e["end"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Rows of the anomalies CSV as (start, end) minute strings, whatever the column order.
fn flagged_spans(csv_path: &Path) -> Vec<(String, String)> {
    let mut rdr = csv::Reader::from_path(csv_path).unwrap();
    let headers = rdr.headers().unwrap().clone();
    let col = |names: &[&str]| {
        headers
            .iter()
            .position(|h| names.contains(&h))
            .unwrap_or_else(|| panic!("no {names:?} column in {headers:?}"))
    };
    let (s, e) = (col(&["start", "event_start"]), col(&["end", "event_end"]));
    rdr.records()
        .map(|r| {
            let r = r.unwrap();
            (r[s][..16].to_string(), r[e][..16].to_string())
        })
        .collect()
}

fn overlaps(a: &(String, String), start: &str, end: &str) -> bool {
    a.0.as_str() <= end && start <= a.1.as_str()
}

/// Run the offline analyst on `input` and check the three artifacts against the
/// generator's planted events.
fn check_reference_case(input: &Path, events: &Path, names: [&str; 3], prompt: &str, unit: &str) {
    check_reference_case_in(input, events, names, prompt, unit, &[], &|_| {});
}

/// The reference case (examples/) with the command's environment changed by `env`
/// (another engine, say); returns the run's output for more checks.
pub(crate) fn reference_case_in(env: &dyn Fn(&mut Command)) -> Output {
    let r = repo();
    let prompt = std::fs::read_to_string(r.join("examples/anomaly_task.md")).unwrap();
    check_reference_case_in(
        &r.join("examples/building_energy.csv"),
        &r.join("examples/building_energy.events.json"),
        ["anomalies.csv", "energy_anomalies.png", "anomaly_report.md"],
        &prompt,
        "deg C",
        &[],
        env,
    )
}

/// [`check_reference_case`] with more arguments for `sandalyst run` and the command's
/// environment changed by `env`.
fn check_reference_case_in(
    input: &Path,
    events: &Path,
    names: [&str; 3],
    prompt: &str,
    unit: &str,
    extra: &[&str],
    env: &dyn Fn(&mut Command),
) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_s = out.to_str().unwrap();
    let mut args = vec![
        "run",
        "--input",
        input.to_str().unwrap(),
        "--prompt",
        prompt,
        "--out",
        out_s,
    ];
    args.extend_from_slice(extra);
    let mut c = command();
    c.args(&args)
        .env("SANDALYST_DATA_DIR", dir.path().join("data"))
        .current_dir(repo());
    env(&mut c);
    let o = c.output().unwrap();
    assert!(o.status.success(), "stderr:\n{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout).trim(),
        out_s,
        "stdout names where the outputs are"
    );

    let [csv_name, png_name, md_name] = names;
    let spans = flagged_spans(&out.join(csv_name));
    for (id, start, end) in planted(events) {
        assert!(
            spans.iter().any(|s| overlaps(s, &start, &end)),
            "planted event {id} ({start}..{end}) not in {spans:?}"
        );
    }
    assert!(
        spans.len() <= planted(events).len() + 2,
        "too many events flagged: {spans:?}"
    );
    // No false positive: every flagged span is a planted event; normal noise is not flagged.
    let planted_spans = planted(events);
    for s in &spans {
        assert!(
            planted_spans.iter().any(|(_, a, b)| overlaps(s, a, b)),
            "false positive {s:?}"
        );
    }
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(events).unwrap()).unwrap();
    for n in truth["normal_noise"].as_array().unwrap() {
        let t = n["time"].as_str().unwrap();
        assert!(
            !spans.iter().any(|s| overlaps(s, t, t)),
            "normal noise at {t} flagged"
        );
    }
    // The analyst reopened and checked its own outputs before answering.
    let run = std::fs::read_dir(dir.path().join("data"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let transcript = std::fs::read_to_string(run.join("transcript.jsonl")).unwrap();
    assert!(
        transcript.contains("all outputs reopened and checked"),
        "no validation in the final answer"
    );

    let (w, h) = sandalyst::artifacts::png_dimensions(&out.join(png_name)).unwrap();
    assert!(w >= 400 && h >= 300, "{w}x{h}");

    let report = std::fs::read_to_string(out.join(md_name)).unwrap();
    assert!(report.is_ascii(), "the report must be plain ASCII");
    let lower = report.to_lowercase();
    assert!(
        lower.contains("baseline") && (lower.contains("z-score") || lower.contains("robust z")),
        "method missing:\n{report}"
    );
    assert!(report.contains(unit), "temperature unit {unit} missing");
    for (id, start, _) in planted(events) {
        assert!(
            report.contains(&start[..10]),
            "report does not name event {id} on {}",
            &start[..10]
        );
    }
    o
}

#[test]
fn reference_case_through_the_command_line() {
    if common::no_engine_skip() {
        return;
    }
    reference_case_in(&|_| {});
}

/// The reference case with every call under gVisor, where the engine has runsc
/// (`scripts/setup.sh --gvisor`; required with SANDALYST_REQUIRE_GVISOR=1): the app's
/// own choice (`auto`) there.
#[test]
fn reference_case_under_gvisor() {
    if common::no_engine_skip() {
        return;
    }
    let runtimes = std::process::Command::new("docker")
        .args(["info", "--format", "{{json .Runtimes}}"])
        .output()
        .map(|o| text(&o.stdout))
        .unwrap_or_default();
    if !runtimes.contains("\"runsc\"") {
        assert!(
            std::env::var_os("SANDALYST_REQUIRE_GVISOR").is_none(),
            "SANDALYST_REQUIRE_GVISOR is set but the engine has no runsc runtime"
        );
        eprintln!("skipped: the engine has no runsc runtime (scripts/setup.sh --gvisor)");
        return;
    }
    // No --isolation and no SANDALYST_ISOLATION: the app's own choice.
    let o = reference_case_in(&|c| {
        c.env_remove("SANDALYST_ISOLATION");
    });
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("; isolation gVisor (runsc)"),
        "auto is gVisor where runsc is registered:\n{stderr}"
    );
}

#[test]
fn offline_analyst_on_a_file_it_has_never_seen() {
    if common::no_engine_skip() {
        return;
    }
    let r = repo();
    check_reference_case(
        &r.join("tests/fixtures/chiller_plant.csv"),
        &r.join("tests/fixtures/chiller_plant.events.json"),
        ["plant_events.csv", "plant_chart.png", "plant_report.md"],
        "Find unusual power use in input/chiller_plant.csv. Save output/plant_events.csv, output/plant_chart.png and output/plant_report.md.",
        "deg F",
    );
}

#[test]
fn a_spanish_request_gets_the_same_events_with_a_spanish_report_and_answer() {
    if common::no_engine_skip() {
        return;
    }
    let r = repo();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = sandalyst(
        &[
            "run",
            "--input",
            r.join("examples/building_energy.csv").to_str().unwrap(),
            "--prompt",
            "Busca eventos anómalos de consumo de energía en input/building_energy.csv y explica el método.",
            "--out",
            out.to_str().unwrap(),
        ],
        &dir.path().join("data"),
    );
    assert!(o.status.success(), "stderr:\n{}", text(&o.stderr));
    // The findings do not depend on the language: the planted events, nothing else.
    let events = r.join("examples/building_energy.events.json");
    let spans = flagged_spans(&out.join("anomalies.csv"));
    let planted = planted(&events);
    assert_eq!(spans.len(), planted.len(), "{spans:?}");
    for (id, start, end) in &planted {
        assert!(
            spans.iter().any(|s| overlaps(s, start, end)),
            "planted event {id} not in {spans:?}"
        );
    }
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    for words in [
        "# Eventos anómalos de consumo de energía: building_energy.csv",
        "## Método",
        "## Eventos",
        "## Limitaciones",
        "sábado 2024-05-25 22:00 a domingo 2024-05-26 05:00",
        "- Explicación plausible: Ocurre en la noche del sábado al domingo (fin de semana)",
    ] {
        assert!(
            report.contains(words),
            "{words:?} not in the report:\n{report}"
        );
    }
    assert!(!report.contains("## Method"), "{report}");
    let run = std::fs::read_dir(dir.path().join("data"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let transcript = std::fs::read_to_string(run.join("transcript.jsonl")).unwrap();
    for words in [
        "Encontré 3 eventos anómalos",
        "causa probable: ",
        "Validación: todos los archivos se reabrieron y comprobaron",
    ] {
        assert!(transcript.contains(words), "{words:?} not in the answer");
    }
}

#[test]
fn runs_list_show_and_export() {
    if common::no_engine_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = dir.path().join("t.csv");
    std::fs::write(
        &input,
        "time,value\n2024-01-01 00:00,1\n2024-01-01 01:00,2\n",
    )
    .unwrap();
    let o = sandalyst(
        &["run", "-i", input.to_str().unwrap(), "-p", "summarise"],
        &data,
    );
    let list = text(&sandalyst(&["runs", "list"], &data).stdout);
    let id = list
        .split_whitespace()
        .next()
        .unwrap_or_else(|| panic!("no run listed; run said {}", text(&o.stderr)))
        .to_string();
    let show = sandalyst(&["runs", "show", &id], &data);
    assert!(show.status.success());
    let shown = text(&show.stdout);
    assert!(
        shown.contains("--- user") && shown.contains("--- python"),
        "{shown}"
    );
    let export = dir.path().join("export");
    let o = sandalyst(&["runs", "export", &id, export.to_str().unwrap()], &data);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        export.join(&id).join("run.json").exists()
            && export.join(&id).join("transcript.jsonl").exists()
    );
    let again = sandalyst(&["runs", "export", &id, export.to_str().unwrap()], &data);
    assert!(!again.status.success() && text(&again.stderr).contains("already exists"));
}

#[test]
fn image_status_lists_the_python_packages_read_from_the_image() {
    if common::no_engine_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = sandalyst(&["image", "status"], dir.path());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("present: yes"), "{out}");
    // One "  name  version" line a package.
    let version = |name: &str| {
        out.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (l.starts_with("  ") && w.next() == Some(name))
                .then(|| w.next().map(str::to_string))
                .flatten()
        })
    };
    for name in [
        "numpy",
        "pandas",
        "scipy",
        "matplotlib",
        "seaborn",
        "statsmodels",
        "scikit-learn",
        "pyarrow",
        "openpyxl",
        "xlrd",
        "odfpy",
        "tabulate",
        "ipython",
    ] {
        assert!(version(name).is_some(), "{name} missing from\n{out}");
    }
    assert!(version("pandas").unwrap().starts_with("2."), "{out}");
    assert!(version("numpy").unwrap().starts_with("2."), "{out}");
    assert!(out.contains("python:  3.1"), "{out}");
}

fn assert_clear_failure(o: &Output, needle: &str) {
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains(needle), "expected {needle:?} in:\n{err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
}

#[test]
fn bad_input_gets_one_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let good = dir.path().join("ok.csv");
    std::fs::write(&good, "a\n1\n").unwrap();
    let g = good.to_str().unwrap();

    let o = sandalyst(&["run", "-i", "/nonexistent/energy.csv", "-p", "x"], &data);
    assert_clear_failure(&o, "cannot read input /nonexistent/energy.csv");
    let o = sandalyst(&["run", "-i", g, "-p", "   "], &data);
    assert_clear_failure(&o, "the prompt is empty");
    let o = sandalyst(
        &["run", "-i", g, "--prompt-file", "/nonexistent/p.md"],
        &data,
    );
    assert_clear_failure(&o, "cannot read the prompt file");
    let o = sandalyst(
        &["run", "-i", g, "-p", "x", "--out", "/proc/sandalyst-out"],
        &data,
    );
    assert_clear_failure(&o, "/proc/sandalyst-out");
    let o = sandalyst(&["run", "-i", g, "-p", "x", "--model", "nonsense"], &data);
    assert_clear_failure(&o, "unknown model");
    let o = sandalyst(&["runs", "show", "nope"], &data);
    assert_clear_failure(&o, "no readable run with id nope");

    let o = command()
        .args(["run", "-i", g, "-p", "x"])
        .env("SANDALYST_DATA_DIR", &data)
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .unwrap();
    assert_clear_failure(&o, "DOCKER_HOST=unix:///nonexistent/docker.sock");
    // None of these failures left a run folder behind.
    assert!(std::fs::read_dir(&data).map(|d| d.count()).unwrap_or(0) == 0);
}

/// Start `sandalyst run` on a replayed Python step that keeps running; return the
/// process, the input file, the data dir and the run folder once the code runs.
fn start_slow_run(dir: &Path, code: &str) -> (std::process::Child, PathBuf, PathBuf, PathBuf) {
    let data = dir.join("data");
    let input = dir.join("energy.csv");
    std::fs::write(&input, "t,v\n1,2\n").unwrap();
    let slow = dir.join("slow.json");
    std::fs::write(&slow, serde_json::json!([{ "python": code }]).to_string()).unwrap();
    let child = command()
        .args([
            "run",
            "-i",
            input.to_str().unwrap(),
            "-p",
            "slow",
            "--model",
        ])
        .arg(format!("replay:{}", slow.display()))
        .env("SANDALYST_DATA_DIR", &data)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run_dir = wait_until_code_runs(&data);
    std::thread::sleep(std::time::Duration::from_secs(1));
    (child, input, data, run_dir)
}

/// The folder of the one run under `data`, once its first tool call is recorded.
fn wait_until_code_runs(data: &Path) -> PathBuf {
    for _ in 0..300 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let found = std::fs::read_dir(data)
            .ok()
            .and_then(|d| d.filter_map(|e| e.ok()).next());
        if let Some(e) = found {
            let t = std::fs::read_to_string(e.path().join("transcript.jsonl")).unwrap_or_default();
            // The call is kept when the model makes it, which may be before the
            // sandbox is there (the model is asked while it starts); the inputs'
            // staging is saved once it has started.
            let meta = std::fs::read_to_string(e.path().join("run.json")).unwrap_or_default();
            if t.contains("tool_call") && meta.contains("staged_by") {
                return e.path();
            }
        }
    }
    panic!("the run did not start");
}

/// Containers labelled with `run_id`, asked of the engine the tests use.
fn containers_of(run_id: &str) -> usize {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let docker = sandalyst::sandbox::docker::connect().await.unwrap();
        sandalyst::sandbox::docker::containers_of_run(&docker, run_id)
            .await
            .unwrap()
            .len()
    })
}

/// Tests that sweep the engine's leftovers and assert what their own start found. Any
/// sandbox start on the engine sweeps the containers of dead owners, so another test
/// running beside one of these could take its orphan first: `scripts/test.sh` runs them
/// alone, after the rest (`cargo test --test docker -- engine_alone::`).
mod engine_alone {
    use super::*;

    #[test]
    fn the_app_killed_mid_run_is_marked_interrupted_and_its_container_removed_at_next_start() {
        if common::no_engine_skip() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let code = "open('output/early.txt','w').write('early')\nimport time\ntime.sleep(120)";
        let (mut child, input, data, run_dir) = start_slow_run(dir.path(), code);
        let before = std::fs::read(&input).unwrap();
        child.kill().unwrap(); // SIGKILL: no clean-up of any kind
        child.wait().unwrap();
        let id = run_dir.file_name().unwrap().to_str().unwrap().to_string();
        // It may have stopped by itself already; only the next start removes it.
        assert_eq!(
            containers_of(&id),
            1,
            "the orphan is there until the next start"
        );

        let list = text(&sandalyst(&["runs", "list"], &data).stdout);
        assert!(list.contains(&id) && list.contains("interrupted"), "{list}");
        let shown = text(&sandalyst(&["runs", "show", &id], &data).stdout);
        assert!(
            shown.contains("time.sleep(120)"),
            "the transcript so far is kept: {shown}"
        );

        let done = dir.path().join("done.json");
        std::fs::write(&done, r#"[{"say": "nothing to do"}]"#).unwrap();
        let o = command()
            .args([
                "run",
                "-i",
                input.to_str().unwrap(),
                "-p",
                "next",
                "--model",
            ])
            .arg(format!("replay:{}", done.display()))
            .env("SANDALYST_DATA_DIR", &data)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        // One outcome whatever the order of the orphan's own stop (its lease closed with
        // the killed process) and this start's sweep: the container is never removed
        // by its own stop, so this start's sweep removes it and says so.
        assert!(
            text(&o.stderr).contains("removed 1 container(s) left by an earlier run"),
            "{}",
            text(&o.stderr)
        );
        assert_eq!(containers_of(&id), 0, "the orphan container was removed");
        assert_eq!(std::fs::read(&input).unwrap(), before);
    }
}

#[test]
fn ctrl_c_interrupts_the_code_removes_the_container_and_exits_130() {
    if common::no_engine_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (child, _, _, run_dir) = start_slow_run(dir.path(), "import time\ntime.sleep(120)");
    let started = std::time::Instant::now();
    // The shell's builtin kill: no procps needed on a minimal machine.
    let kill = Command::new("sh")
        .args(["-c", &format!("kill -INT {}", child.id())])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "cancel took {:?}",
        started.elapsed()
    );
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("ask cancelled"),
        "{}",
        text(&o.stderr)
    );
    let id = run_dir.file_name().unwrap().to_str().unwrap().to_string();
    assert_eq!(containers_of(&id), 0);
    let meta = std::fs::read_to_string(run_dir.join("run.json")).unwrap();
    assert!(meta.contains("\"cancelled\""), "{meta}");
}

/// The user's own packages through the command line: `image build --pip` builds (or
/// finds, by its hash) the derived image; a run with `[image] pip` in the config file
/// uses it and imports the package with no network; `image status` names it; names
/// that are not package names are refused in one line, from the flags or the file.
#[test]
fn own_packages_from_image_build_and_the_config_file() {
    if common::no_engine_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // Behind a proxy that intercepts TLS the build needs its CA; the host's trust
    // store holds it (and the public CAs) wherever the host itself reaches PyPI.
    let ca = std::env::var("SANDALYST_BUILD_CA_FILE").unwrap_or_else(|_| {
        let host = "/etc/ssl/certs/ca-certificates.crt";
        if Path::new(host).exists() { host } else { "" }.to_string()
    });
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[image]\npip = [\"termcolor\"]\n").unwrap();
    let with_config = |args: &[&str]| {
        command()
            .args(args)
            .env("SANDALYST_CONFIG", &config)
            .env("SANDALYST_DATA_DIR", &data)
            .env("SANDALYST_BUILD_CA_FILE", &ca)
            .output()
            .unwrap()
    };

    let o = with_config(&["image", "build", "--pip", "termcolor"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let tag = text(&o.stdout).trim().to_string();
    assert!(tag.starts_with("sandalyst-sandbox-custom:"), "{tag}");
    let o = with_config(&["image", "status"]);
    let status = text(&o.stdout);
    assert!(
        status.contains(&format!("custom:  {tag} (pip: termcolor)")),
        "{status}"
    );

    let input = dir.path().join("t.csv");
    std::fs::write(&input, "a\n1\n").unwrap();
    let steps = dir.path().join("steps.json");
    let code = "import socket, termcolor\nprint('TERMCOLOR', termcolor.__file__)\n\
                try:\n    socket.create_connection(('pypi.org', 443), timeout=5)\n    print('NETWORK:', 'yes')\n\
                except OSError:\n    print('NETWORK:', 'no')";
    std::fs::write(&steps, serde_json::json!([{ "python": code }]).to_string()).unwrap();
    let replay = format!("replay:{}", steps.display());
    let o = with_config(&[
        "run",
        "-i",
        input.to_str().unwrap(),
        "-p",
        "termcolor",
        "--model",
        &replay,
        "-v",
    ]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("TERMCOLOR /usr/local/lib/python3"), "{err}");
    assert!(
        err.contains("NETWORK: no") && !err.contains("NETWORK: yes"),
        "{err}"
    );

    let o = with_config(&["image", "build", "--pip", "tabulate;reboot"]);
    assert_clear_failure(&o, "`tabulate;reboot` is not a valid pip package name");
    std::fs::write(&config, "[image]\napt = [\"$(id)\"]\n").unwrap();
    let o = with_config(&["run", "-i", input.to_str().unwrap(), "-p", "x"]);
    assert_clear_failure(&o, "[image] `$(id)` is not a valid apt package name");
}
