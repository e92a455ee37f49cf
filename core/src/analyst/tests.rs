//! The planner, step by step through the Model trait, on made-up tool outputs.

use serde_json::{json, Value};

use super::numbers::fmt_num;
use super::outputs::{output_names, OutputNames};
use super::phase::{phase_of, Phase};
use super::profile::{choose_target, Profile};
use super::request::{recognise, Skill};
use super::scripts::{
    analysis_code, inspect_code, ANALYSE_PY, COMMON_PY, CONFIG_PLACEHOLDER, INSPECT_PY, VALIDATE_PY,
};
use super::transcript::{call_source, task_and_outputs};
use super::*;
use crate::conversation::ToolSpec;

const REFERENCE_TASK: &str = include_str!("../../../examples/anomaly_task.md");

fn tools() -> Vec<ToolSpec> {
    ["python", "shell"]
        .iter()
        .map(|n| ToolSpec {
            name: n.to_string(),
            description: String::new(),
            parameters: json!({}),
        })
        .collect()
}

#[tokio::test]
async fn a_follow_up_gets_its_own_skill() {
    let mut model = OfflineAnalyst::new();
    let mut items = vec![
        user(REFERENCE_TASK),
        Item::Assistant {
            text: "Found 3 events.".into(),
        },
        user("Now split it by weekday"),
    ];
    // Inspect again (the kernel may be new), then the aggregate script.
    let reply = step(&mut model, &items, &tools()).await;
    let (_, _, code) = the_call(&reply);
    assert_eq!(phase_of(&code), Some(Phase::Inspect));
    profiled(&mut items, &reply);
    let reply = step(&mut model, &items, &tools()).await;
    let (_, _, code) = the_call(&reply);
    assert_eq!(phase_of(&code), Some(Phase::Aggregate));
    let cfg = embedded_config(&code);
    assert_eq!(cfg["request"], "Now split it by weekday");
    assert_eq!(cfg["outputs"]["csv"], "output/answer.csv");
    assert!(code.contains("def _sandalyst_main():"));
    // A request outside every skill: the honest answer comes with the profile.
    let out = json!({"skill": "profile", "ok": true, "headline": "input/x.csv: 3 rows",
                     "files": [{"path": "output/profile.md", "what": "the profile report"}]});
    let mut poem = items[..2].to_vec();
    poem.push(user("Write me a poem about this data"));
    let r = step(&mut model, &poem, &tools()).await;
    profiled(&mut poem, &r);
    let r = step(&mut model, &poem, &tools()).await;
    assert_eq!(phase_of(&the_call(&r).2), Some(Phase::Profile));
    ran(&mut poem, &r, &format!("SANDALYST_ANSWER {out}"));
    let text = final_answer(&step(&mut model, &poem, &tools()).await);
    assert!(text.starts_with("I cannot answer that"), "{text}");
    assert!(
        text.contains("Settings in the app, or --model") && text.contains("input/x.csv: 3 rows")
    );
    assert!(!text.contains("anomalies.csv") && !text.contains("Found "));
}

async fn step(model: &mut OfflineAnalyst, items: &[Item], tools: &[ToolSpec]) -> Reply {
    model
        .respond(
            Request {
                instructions: "",
                items,
                tools,
                on_delta: &crate::conversation::no_deltas,
                answer: Default::default(),
                repeats: 0,
            },
            &CancellationToken::new(),
        )
        .await
        .unwrap()
}

/// The single tool call of a reply: (call_id, name, code or command).
fn the_call(reply: &Reply) -> (String, String, String) {
    let calls: Vec<_> = reply.tool_calls().collect();
    assert_eq!(calls.len(), 1, "{:?}", reply.items);
    let (id, name, args) = calls[0];
    (
        id.to_string(),
        name.to_string(),
        call_source(name, args).unwrap(),
    )
}

fn final_answer(reply: &Reply) -> String {
    assert_eq!(reply.tool_calls().count(), 0, "{:?}", reply.items);
    match reply.items.as_slice() {
        [Item::Assistant { text }] => text.clone(),
        other => panic!("expected one assistant text, got {other:?}"),
    }
}

/// Append the reply and a tool output for its call.
fn answer(items: &mut Vec<Item>, reply: &Reply, output: &str, is_error: bool) {
    let (id, _, _) = the_call(reply);
    items.extend(reply.items.iter().cloned());
    items.push(Item::ToolOutput {
        call_id: id.into(),
        output: output.into(),
        is_error,
        images: Vec::new(),
    });
}

/// Append the reply and a successful run printing `stdout`.
fn ran(items: &mut Vec<Item>, reply: &Reply, stdout: &str) {
    answer(
        items,
        reply,
        &format!("status: ok (0.42 s)\n[stdout]\n{stdout}\n"),
        false,
    );
}

/// Append the reply and a run that failed with the traceback's `last` line.
fn failed(items: &mut Vec<Item>, reply: &Reply, last: &str) {
    let output = format!(
        "status: error (0.10 s)\n[traceback]\nTraceback (most recent call last):\n  File \"<cell>\", line 3\n{last}\n"
    );
    answer(items, reply, &output, true);
}

/// Append the reply and an inspection that printed the reference profile.
fn profiled(items: &mut Vec<Item>, reply: &Reply) {
    ran(
        items,
        reply,
        &format!("SANDALYST_PROFILE {}", reference_profile()),
    );
}

fn user(text: &str) -> Item {
    Item::User { text: text.into() }
}

fn reference_profile() -> Value {
    json!({
        "version": 1,
        "files": [
            {"path": "input/notes.txt", "size": 6, "kind": null, "status": "not_tabular", "reason": "not a tabular file type"},
            {"path": "input/building_energy.csv", "size": 41969, "kind": "csv", "status": "ok", "reason": null}
        ],
        "tables": [{
            "path": "input/building_energy.csv", "sheet": null, "kind": "csv", "rows": 1344, "columns": 3,
            "column_names": ["timestamp", "energy_kwh", "outdoor_temp_c"], "missing_total": 0,
            "time": [{"name": "timestamp", "score": 2.5, "unit": null, "parsed_fraction": 1.0}],
            "measures": [{"name": "energy_kwh", "unit": "kWh", "kind": "energy", "reason": "name suggests energy/power",
                          "variance": 1012.0, "median": 46.26, "missing": 0, "score": 4.0}],
            "temperature": {"name": "outdoor_temp_c", "unit": "C", "unit_source": "column name"},
            "categories": [],
            "time_span": {"start": "2024-05-06 00:00:00", "end": "2024-06-30 23:00:00", "interval_seconds": 3600.0,
                          "duplicates": 0, "missing_intervals": 0}
        }]
    })
}

fn result_json() -> Value {
    json!({
        "mode": "full", "input": "input/building_energy.csv", "measure": "energy_kwh", "unit": "kWh",
        "excess_unit": "kWh", "rows": 1344, "intervals": 1344, "interval": "1 h", "missing": 0,
        "start": "2024-05-06 00:00", "end": "2024-06-30 23:00", "temperature": "outdoor_temp_c",
        "baseline": "expected baseline (hour of week median + temperature model)", "threshold": 3.5,
        "n_events": 2, "ignored": 3, "points_csv": "output/anomalies_points.csv",
        "columns": ["event_id", "start", "end"],
        "events": [
            {"event_id": 1, "start": "2024-05-25 22:00", "end": "2024-05-26 05:00",
             "when": "Saturday 2024-05-25 22:00 to Sunday 2024-05-26 05:00", "duration_hours": 8.0,
             "direction": "spike", "peak_value": 73.33, "expected_at_peak": 38.46, "peak_z": 25.0,
             "excess_energy": 264.2, "excess_pct": 86.0, "mean_temp": 15.2,
             "cause": "equipment, lighting or HVAC left running"},
            {"event_id": 2, "start": "2024-06-12 10:00", "end": "2024-06-12 14:00",
             "when": "Wednesday 2024-06-12 10:00 to 14:00", "duration_hours": 5.0,
             "direction": "drop", "peak_value": 0.24, "expected_at_peak": 108.2, "peak_z": -38.9,
             "excess_energy": -539.7, "excess_pct": -100.0, "mean_temp": 17.6,
             "cause": "power outage or meter fault"}
        ]
    })
}

/// The JSON configuration embedded in a composed script.
fn embedded_config(code: &str) -> Value {
    let line = code
        .lines()
        .find(|l| l.starts_with("CONFIG = json.loads("))
        .expect("a CONFIG line");
    let literal = line
        .trim_start_matches("CONFIG = json.loads(")
        .trim_end_matches(')');
    let inner: String = serde_json::from_str(literal).expect("a JSON string literal");
    serde_json::from_str(&inner).expect("JSON inside")
}

#[test]
fn output_names_from_the_reference_prompt() {
    let names = output_names(REFERENCE_TASK);
    assert_eq!(
        names,
        OutputNames {
            csv: "output/anomalies.csv".into(),
            png: "output/energy_anomalies.png".into(),
            md: "output/anomaly_report.md".into(),
        }
    );
}

#[test]
fn output_names_defaults_and_edge_cases() {
    assert_eq!(
        output_names("Find anomalies in input/x.csv."),
        OutputNames::default()
    );
    let n = output_names(
        "Write `output/charts/usage.PNG`, then /workspace/output/summary.md. Table: output/events_2024.csv.",
    );
    assert_eq!(n.png, "output/charts/usage.PNG");
    assert_eq!(n.md, "output/summary.md");
    assert_eq!(n.csv, "output/events_2024.csv");
    // Unsafe or odd paths are ignored; the first good one of each kind wins.
    let n = output_names(
        "output/../etc/x.csv myoutput/y.csv /tmp/output/z.csv output/.csv output/a.csv output/b.csv",
    );
    assert_eq!(n.csv, "output/a.csv");
    assert_eq!(n.png, OutputNames::default().png);
}

#[test]
fn anomalies_are_reported_in_spanish_when_asked_in_spanish() {
    // analyse.py writes its texts (when, direction, cadence, method) in the language.
    let mut r = result_json();
    r["cadence"] = json!("lecturas horarias");
    r["baseline_method"] = json!("la mediana por hora de la semana + modelo de temperatura");
    r["events"][0]["when"] = json!("sábado 2024-05-25 22:00 a domingo 2024-05-26 05:00");
    r["events"][1]["direction_text"] = json!("caída");
    let es = |ascii: bool| {
        let mut items = vec![];
        let task = if ascii {
            "Busca anomalías en el consumo, en ASCII"
        } else {
            "Busca anomalías en el consumo"
        };
        let rec = recognise(task);
        assert_eq!(
            (rec.skill, rec.lang, rec.ascii),
            (Skill::Anomalies, request::Lang::Es, ascii)
        );
        items.push(user(task));
        let mut t = anomalies::final_text(
            anomalies::words(rec.lang),
            &r,
            &OutputNames::default(),
            None,
            &Ok(json!({"ok": true})),
        );
        if rec.ascii {
            t = skills::to_ascii(&t);
        }
        t
    };
    let t = es(false);
    for needle in [
        "Analicé input/building_energy.csv (1344 filas): `energy_kwh`, lecturas horarias",
        "salen de la mediana por hora de la semana + modelo de temperatura",
        "Encontré 2 eventos anómalos",
        "sábado 2024-05-25 22:00 a domingo 2024-05-26 05:00",
        "+264.2 kWh",
        "caída",
        "Otras 3 desviaciones",
        "Archivos:",
        "Validación: todos los archivos",
        "no un LLM",
    ] {
        assert!(t.contains(needle), "{needle:?} not in {t}");
    }
    for english in ["Found", "peak", "expected", "Files", "Validation"] {
        assert!(!t.contains(english), "{english:?} in {t}");
    }
    let t = es(true);
    assert!(
        t.is_ascii() && t.contains("Encontre 2 eventos anomalos"),
        "{t}"
    );
}

#[test]
fn app_notes_after_the_request_are_not_the_task() {
    let items = vec![Item::User {
        text:
            "Describe el archivo\n\n[from the app] The Python state was lost; the files are there."
                .into(),
    }];
    assert_eq!(task_and_outputs(&items).0, "Describe el archivo");
}

#[test]
fn numbers_are_written_plainly() {
    assert_eq!(fmt_num(264.181), "264.2");
    assert_eq!(fmt_num(6.5), "6.5");
    assert_eq!(fmt_num(8.0), "8");
    assert_eq!(fmt_num(0.2412), "0.241");
    assert_eq!(fmt_num(-539.678), "-539.7");
    assert_eq!(fmt_num(11650.4), "11650.4");
    assert_eq!(fmt_num(f64::NAN), "?");
}

#[test]
fn templates_are_ascii_with_one_placeholder_each() {
    for (name, t) in [
        ("common", COMMON_PY),
        ("inspect", INSPECT_PY),
        ("analyse", ANALYSE_PY),
        ("validate", VALIDATE_PY),
    ] {
        assert!(t.is_ascii(), "{name}.py must be ASCII");
        let n = t.matches(CONFIG_PLACEHOLDER).count();
        assert_eq!(
            n,
            if name == "common" { 0 } else { 1 },
            "{name}.py placeholders"
        );
    }
}

#[test]
fn substituted_names_are_safely_quoted() {
    let mut target = choose_target(
        &serde_json::from_value(reference_profile()).unwrap(),
        "task",
    )
    .unwrap();
    let nasty = "energy \"kWh\" \\ 'x' \u{00b0}C \u{1F600}\nline";
    target.measure.name = nasty.into();
    let code = analysis_code(
        &target,
        &OutputNames::default(),
        false,
        &recognise("find anomalies"),
    );
    assert!(code.is_ascii());
    assert_eq!(embedded_config(&code)["measure_col"], nasty);
    assert!(
        !code.contains("__SANDALYST_"),
        "every placeholder is filled"
    );
    assert!(!inspect_code().contains("__SANDALYST_"));
    assert!(code.starts_with("# sandalyst-offline-phase: analyse\n# Sandalyst offline analyst"));
}

#[tokio::test]
async fn phases_progress_from_inspect_to_finish() {
    let mut model = OfflineAnalyst::new();
    assert!(model.describe().contains("not an LLM"));
    let tools = tools();
    let mut items = vec![user(REFERENCE_TASK)];

    // 1. inspect
    let reply = step(&mut model, &items, &tools).await;
    let (id, name, code) = the_call(&reply);
    assert_eq!(name, "python");
    assert_eq!(id, "offline-1", "the id says only which call it is");
    assert_eq!(phase_of(&code), Some(Phase::Inspect));
    assert!(code.contains("SANDALYST_PROFILE"));
    assert!(matches!(&reply.items[0], Item::Assistant { text } if text.contains("not an LLM")));
    let profile_line = format!(
        "== input/building_energy.csv ==\nrows: 1344\n\nSANDALYST_PROFILE {}",
        reference_profile()
    );
    ran(&mut items, &reply, &profile_line);

    // 2. analyse, with the detected columns and the requested output names
    let reply = step(&mut model, &items, &tools).await;
    let (id, _, code) = the_call(&reply);
    assert_eq!(id, "offline-2");
    assert_eq!(phase_of(&code), Some(Phase::Analyse));
    let cfg = embedded_config(&code);
    assert_eq!(cfg["input"], "input/building_energy.csv");
    assert_eq!(cfg["time_col"], "timestamp");
    assert_eq!(cfg["measure_col"], "energy_kwh");
    assert_eq!(cfg["measure_unit"], "kWh");
    assert_eq!(cfg["temp_col"], "outdoor_temp_c");
    assert_eq!(cfg["temp_unit"], "C");
    assert_eq!(cfg["mode"], "full");
    assert_eq!(cfg["outputs"]["csv"], "output/anomalies.csv");
    assert_eq!(cfg["outputs"]["png"], "output/energy_anomalies.png");
    assert_eq!(cfg["outputs"]["md"], "output/anomaly_report.md");
    for needle in [
        "energy_kwh",
        "outdoor_temp_c",
        "energy_anomalies.png",
        "def huber_fit",
    ] {
        assert!(code.contains(needle), "analysis code lacks {needle}");
    }
    let out = format!("Event 1: ...\nSANDALYST_RESULT {}", result_json());
    ran(&mut items, &reply, &out);

    // 3. validate the three files, expecting the events found
    let reply = step(&mut model, &items, &tools).await;
    let (_, _, code) = the_call(&reply);
    assert_eq!(phase_of(&code), Some(Phase::Validate));
    let cfg = embedded_config(&code);
    assert_eq!(cfg["outputs"]["md"], "output/anomaly_report.md");
    assert_eq!(
        cfg["event_starts"],
        json!(["2024-05-25 22:00", "2024-06-12 10:00"])
    );
    let verdict =
        json!({"ok": true, "checks": [{"name": "chart (PNG)", "ok": true, "detail": ""}]});
    ran(
        &mut items,
        &reply,
        &format!("PASS ...\nSANDALYST_VALIDATION {verdict}"),
    );

    // 4. finish: a summary naming the events and the files
    let text = final_answer(&step(&mut model, &items, &tools).await);
    for needle in [
        "Found 2 abnormal events",
        "Saturday 2024-05-25 22:00 to Sunday 2024-05-26 05:00",
        "+264.2 kWh",
        "Wednesday 2024-06-12 10:00",
        "output/anomalies.csv",
        "output/energy_anomalies.png",
        "output/anomaly_report.md",
        "all outputs reopened and checked",
        "3 other short deviations",
        "not an LLM",
    ] {
        assert!(
            text.contains(needle),
            "final text lacks {needle:?}:\n{text}"
        );
    }
}

#[tokio::test]
async fn analysis_error_falls_back_once_then_finishes() {
    let mut model = OfflineAnalyst::new();
    let tools = tools();
    let mut items = vec![user("Look for anomalies.")];
    let reply = step(&mut model, &items, &tools).await;
    profiled(&mut items, &reply);
    let reply = step(&mut model, &items, &tools).await;
    failed(
        &mut items,
        &reply,
        "ValueError: could not infer the reading interval",
    );

    // the fallback: same columns, simple mode, default output names
    let reply = step(&mut model, &items, &tools).await;
    let (id, _, code) = the_call(&reply);
    assert_eq!(id, "offline-3");
    assert_eq!(phase_of(&code), Some(Phase::AnalyseSimple));
    let cfg = embedded_config(&code);
    assert_eq!(cfg["mode"], "simple");
    assert_eq!(cfg["measure_col"], "energy_kwh");
    assert_eq!(cfg["outputs"]["md"], "output/report.md");
    assert!(
        matches!(&reply.items[0], Item::Assistant { text } if text.contains("could not infer the reading interval"))
    );
    failed(&mut items, &reply, "MemoryError: out of memory");

    // both failed: a clear final text, no more calls
    let text = final_answer(&step(&mut model, &items, &tools).await);
    assert!(text.contains("could not complete the analysis"), "{text}");
    assert!(
        text.contains("could not infer the reading interval"),
        "{text}"
    );
    assert!(text.contains("MemoryError"), "{text}");
}

#[tokio::test]
async fn fallback_success_is_validated_and_reported_as_fallback() {
    let mut model = OfflineAnalyst::new();
    let tools = tools();
    let mut items = vec![user("anomalies please")];
    let r = step(&mut model, &items, &tools).await;
    profiled(&mut items, &r);
    let r = step(&mut model, &items, &tools).await;
    failed(&mut items, &r, "KeyError: 'x'");
    let r = step(&mut model, &items, &tools).await;
    let mut result = result_json();
    result["mode"] = json!("simple");
    ran(&mut items, &r, &format!("SANDALYST_RESULT {result}"));
    let r = step(&mut model, &items, &tools).await;
    assert_eq!(phase_of(&the_call(&r).2), Some(Phase::Validate));
    let verdict = json!({"ok": false, "checks": [{"name": "chart (PNG)", "ok": false, "detail": "output/anomalies.png is missing"}]});
    ran(&mut items, &r, &format!("SANDALYST_VALIDATION {verdict}"));
    let text = final_answer(&step(&mut model, &items, &tools).await);
    assert!(text.contains("simplified"), "{text}");
    assert!(text.contains("KeyError"), "{text}");
    assert!(text.contains("output/anomalies.png is missing"), "{text}");
}

#[tokio::test]
async fn no_input_finishes_with_an_explanation() {
    let mut model = OfflineAnalyst::new();
    let tools = tools();
    let cases = [
        (json!({"files": [], "tables": []}), "no files under input/"),
        (
            json!({"files": [{"path": "input/a.pdf", "status": "not_tabular", "reason": "not a tabular file type"}], "tables": []}),
            "input/a.pdf (not a tabular file type)",
        ),
        (
            json!({"files": [{"path": "input/t.csv", "status": "ok"}], "tables": [
                {"path": "input/t.csv", "rows": 100, "time": [], "measures": [{"name": "x"}]}]}),
            "no column parses as dates/times",
        ),
        (
            json!({"files": [{"path": "input/t.csv", "status": "ok"}], "tables": [
                {"path": "input/t.csv", "rows": 100, "time": [{"name": "t"}], "measures": []}]}),
            "no usable numeric measure",
        ),
    ];
    for (profile, needle) in cases {
        let mut items = vec![user("Find anomalies")];
        let r = step(&mut model, &items, &tools).await;
        ran(&mut items, &r, &format!("SANDALYST_PROFILE {profile}"));
        let text = final_answer(&step(&mut model, &items, &tools).await);
        assert!(text.contains(needle), "{needle:?} not in {text}");
    }
}

#[tokio::test]
async fn failed_inspection_is_retried_once() {
    let mut model = OfflineAnalyst::new();
    let tools = tools();
    let mut items = vec![user("Find anomalies")];
    for attempt in 1..=2 {
        let r = step(&mut model, &items, &tools).await;
        let (id, _, code) = the_call(&r);
        assert_eq!(id, format!("offline-{attempt}"));
        assert_eq!(phase_of(&code), Some(Phase::Inspect));
        answer(
            &mut items,
            &r,
            "status: kernel_restarted (3.00 s)\n[note] the kernel died\n",
            true,
        );
    }
    let text = final_answer(&step(&mut model, &items, &tools).await);
    assert!(text.contains("failed twice"), "{text}");
    assert!(text.contains("kernel died"), "{text}");
}

#[tokio::test]
async fn shell_only_runs_python_through_a_heredoc() {
    let mut model = OfflineAnalyst::new();
    let shell_only: Vec<ToolSpec> = tools().into_iter().filter(|t| t.name == "shell").collect();
    let items = vec![user("Find anomalies")];
    let r = step(&mut model, &items, &shell_only).await;
    let (_, name, command) = the_call(&r);
    assert_eq!(name, "shell");
    assert!(command.starts_with("python3 - <<'SANDALYST_PY'\n# sandalyst-offline-phase: inspect\n"));
    assert!(command.ends_with("\nSANDALYST_PY\n"));
    assert_eq!(phase_of(&command), Some(Phase::Inspect));
}

/// Which step made a call is read from its code (the marker line), through python
/// or shell alike, never from its id; a call the analyst did not write has none.
#[tokio::test]
async fn a_calls_phase_is_read_from_its_code_not_its_id() {
    let mut model = OfflineAnalyst::new();
    let items = vec![user("Find anomalies")];
    for tools in [
        tools(),
        tools().into_iter().filter(|t| t.name == "shell").collect(),
    ] {
        let r = step(&mut model, &items, &tools).await;
        let (id, name, arguments) = r.tool_calls().next().unwrap();
        assert_eq!(id, "offline-1");
        assert_eq!(call_phase(name, arguments), Some("inspect"), "{name}");
    }
    let theirs = json!({"code": "print(1)"}).to_string();
    assert_eq!(call_phase("python", &theirs), None);
    assert_eq!(call_phase("python", "not json"), None);
}

#[test]
fn target_prefers_files_and_columns_named_in_the_task() {
    let profile: Profile = serde_json::from_value(json!({
        "files": [{"path": "input/a.csv", "status": "ok"}, {"path": "input/b.csv", "status": "ok"}],
        "tables": [
            {"path": "input/a.csv", "rows": 5000, "time": [{"name": "t"}], "measures": [{"name": "kw", "unit": "kW", "kind": "power"}]},
            {"path": "input/b.csv", "rows": 100, "time": [{"name": "when"}],
             "measures": [{"name": "load"}, {"name": "gas_m3"}],
             "categories": [{"name": "site", "distinct": 3}], "time_span": {"duplicates": 60}}
        ]
    }))
    .unwrap();
    let t = choose_target(&profile, "anomalies please").unwrap();
    assert_eq!(t.table.path, "input/a.csv");
    assert_eq!(t.category, None);
    let t = choose_target(&profile, "look at gas_m3 in input/b.csv").unwrap();
    assert_eq!(t.table.path, "input/b.csv");
    assert_eq!(t.measure.name, "gas_m3");
    assert_eq!(t.category.as_deref(), Some("site"));
}

#[tokio::test]
async fn never_more_than_max_calls() {
    let mut model = OfflineAnalyst::new();
    let tools = tools();
    let mut items = vec![user("Find anomalies")];
    // Feed garbage validation outputs forever: the planner must stop.
    let code = inspect_code();
    for i in 0..MAX_CALLS {
        let call = Item::ToolCall {
            call_id: format!("x{i}").into(),
            name: "python".into(),
            arguments: json!({ "code": code }).to_string(),
            form: CallForm::Structured,
        };
        items.push(call);
        items.push(Item::ToolOutput {
            call_id: format!("x{i}").into(),
            output: "status: error (0 s)".into(),
            is_error: true,
            images: Vec::new(),
        });
    }
    let text = final_answer(&step(&mut model, &items, &tools).await);
    assert!(text.contains("stopped"), "{text}");
}

#[tokio::test]
async fn cancelled_requests_return_at_once() {
    let mut model = OfflineAnalyst::new();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let items = vec![user("x")];
    let r = model
        .respond(
            Request {
                instructions: "",
                items: &items,
                tools: &[],
                on_delta: &crate::conversation::no_deltas,
                answer: Default::default(),
                repeats: 0,
            },
            &cancel,
        )
        .await;
    assert!(r.is_err());
}
