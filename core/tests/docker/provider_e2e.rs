//! The reference case end to end through each real provider: a local server speaking
//! the provider's wire format plays a model whose tool calls analyse
//! input/building_energy.csv, `run::execute` runs them in the real Docker sandbox, and
//! the three artifacts, the run record and the requests the server saw are checked.

use crate::common;
use crate::common::wire;

use std::path::Path;
use std::time::Duration;

use sandalyst::agent::RunStatus;
use sandalyst::model::anthropic::Anthropic;
use sandalyst::model::chat_completions::ChatCompletions;
use sandalyst::model::config::ProviderKind;
use sandalyst::model::openai_responses::OpenAiResponses;
use sandalyst::model::{Item, Model, Usage};
use sandalyst::run::{self, RunRequest};
use sandalyst::store::Store;
use tokio_util::sync::CancellationToken;
use wire::reference::{chat_script, images_of, messages_script, responses_script, result_of};
use wire::WireServer;

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `prelude`: the app's first cell (the inputs loaded, after their profile) stands
/// after the task. A model whose calls have a mode (Chat Completions) waits for it; a
/// model of native calls only is asked while the sandbox still starts, without it
/// (the run's sandbox is never ready as the ask begins).
async fn reference_case(
    model: &mut dyn Model,
    server: &WireServer,
    expect_cost: bool,
    prelude: bool,
) {
    let vision = model.vision();
    let docker = common::engine().await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("runs")).unwrap();
    let root = common::repo_root();
    let prompt = std::fs::read_to_string(root.join("examples/anomaly_task.md")).unwrap();
    let mut req = RunRequest::new(
        vec![root.join("examples/building_energy.csv")],
        prompt.clone(),
    );
    req.config.sandbox = common::config(&docker).await;
    req.config.limits.call_timeout = Duration::from_secs(120);
    let outcome = run::execute(
        &common::sessions(&store),
        req,
        model,
        &|_| {},
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.status);
    assert_eq!(outcome.turns, 3);
    assert_eq!(
        common::containers_labelled(&docker, &outcome.run_id).await,
        0
    );

    // The three artifacts, small but real.
    let out = &outcome.outputs_dir;
    let mut names: Vec<_> = outcome.outputs.iter().map(|f| f.path.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        ["anomalies.csv", "anomaly_report.md", "energy_anomalies.png"]
    );
    let mut csv = csv::Reader::from_path(out.join("anomalies.csv")).unwrap();
    assert_eq!(&csv.headers().unwrap()[0], "start");
    let rows: Vec<_> = csv.records().map(|r| r.unwrap()).collect();
    assert!(
        rows.iter().any(|r| &r[0] == "2024-06-12 10:00"),
        "the outage is flagged"
    );
    let (w, h) = sandalyst::artifacts::png_dimensions(&out.join("energy_anomalies.png")).unwrap();
    assert!(w >= 400 && h >= 300, "{w}x{h}");
    let report = std::fs::read_to_string(out.join("anomaly_report.md")).unwrap();
    assert!(report.is_ascii() && report.contains("baseline") && report.contains("robust z"));
    assert!(report.contains("deg C"));

    // What the model was sent: the task, then the real results of its calls.
    let got = server.received();
    assert_eq!(got.len(), 3);
    assert!(got[0].body.to_string().contains("building_energy.csv"));
    let analysis = result_of(&got[1].body, "call_1").expect("result of call_1 sent back");
    assert!(
        analysis.contains("rows 1344") && analysis.contains("events"),
        "{analysis}"
    );
    // The chart the first call saved went back with its result, to a model that
    // takes images, in the provider's own form; never to one that does not.
    let charts = images_of(&got[1].body, "call_1");
    assert_eq!(charts > 0, vision, "{charts} images with call_1's result");
    assert_eq!(got[1].body.to_string().contains("iVBORw0KGgo"), vision);
    let validation = result_of(&got[2].body, "call_2").expect("result of call_2 sent back");
    assert!(validation.contains("report ascii True"), "{validation}");
    let listing = result_of(&got[2].body, "call_3").expect("result of call_3 sent back");
    assert!(listing.contains("energy_anomalies.png"), "{listing}");

    // The record: a provider-neutral transcript, usage and cost, and no key anywhere.
    let run = store.open_run(&outcome.run_id).unwrap();
    let items: Vec<Item> = run
        .transcript()
        .unwrap()
        .into_iter()
        .map(|e| e.item)
        .collect();
    // Reasoning items (OpenAI only) aside, every provider's transcript has one shape.
    let kinds: Vec<&str> = items
        .iter()
        .filter(|i| !matches!(i, Item::Reasoning { .. }))
        .map(|i| match i {
            Item::User { .. } => "user",
            Item::Assistant { .. } => "assistant",
            Item::ToolCall { .. } => "call",
            Item::ToolOutput { .. } => "output",
            Item::Reasoning { .. } => "reasoning",
        })
        .collect();
    let mut expected = vec!["user"];
    if prelude {
        // The app's first cell (the input loaded) stands after the task, as a call.
        expected.extend(["assistant", "call", "output"]);
    }
    expected.extend([
        "assistant",
        "call",
        "output",
        "assistant",
        "call",
        "call",
        "output",
        "output",
        "assistant",
    ]);
    assert_eq!(kinds, expected);
    if prelude {
        let Item::ToolCall {
            call_id, arguments, ..
        } = &items[2]
        else {
            panic!("{:?}", items[2])
        };
        assert_eq!(call_id, sandalyst::protocol::PRELUDE_CALL_ID);
        assert!(
            arguments.contains(
                "df = pd.read_csv('input/building_energy.csv', parse_dates=['timestamp']"
            ),
            "{arguments}"
        );
        assert!(
            matches!(&items[3], Item::ToolOutput { output, is_error: false, .. } if output.contains("(1344, 3)")),
            "{:?}",
            items[3]
        );
    } else {
        assert!(!items.iter().any(|i| matches!(i, Item::ToolCall { call_id, .. } if call_id == sandalyst::protocol::PRELUDE_CALL_ID)));
    }
    assert_eq!(run.meta.usage, outcome.usage);
    assert!(run.meta.usage.input_tokens > 0 && run.meta.usage.output_tokens > 0);
    assert_eq!(
        run.meta.cost_usd.is_some(),
        expect_cost,
        "{:?}",
        run.meta.cost_usd
    );
    if let (Some(cost), Some(price)) = (run.meta.cost_usd, model.price()) {
        assert!((cost - price.cost(&run.meta.usage)).abs() < 1e-12);
    }
    let shown = sandalyst::store::render_transcript(&run.meta, &run.transcript().unwrap());
    assert!(
        shown.contains("--- python (call_1)") && shown.contains("rows 1344"),
        "{shown}"
    );
    for f in files(&run.path) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !bytes.windows(6).any(|w| w == b"SECRET"),
            "the API key leaked into {}",
            f.display()
        );
    }
}

#[tokio::test]
async fn reference_case_through_openai_responses() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let server = WireServer::start(responses_script()).await;
    let cfg = wire::config(
        ProviderKind::OpenAi,
        "gpt-5.4",
        &format!("{}/v1", server.base),
        "OPENAI_API_KEY",
    );
    let mut model = OpenAiResponses::new(cfg).unwrap();
    reference_case(&mut model, &server, true, false).await;
    // Each turn sent the whole conversation, no server-side state: the reasoning of
    // earlier turns goes back as encrypted content, before the calls it led to.
    let got = server.received();
    for r in &got {
        assert_eq!(r.body["store"], false);
        assert!(r.body.get("previous_response_id").is_none());
    }
    let input = got[2].body["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    // (No app's first cell: this model was asked while the sandbox started.)
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "message",
            "function_call",
            "function_call_output",
            "reasoning",
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output"
        ]
    );
    assert_eq!(input[1]["encrypted_content"], "enc-0");
    assert_eq!(input[5]["encrypted_content"], "enc-1");
    assert!(input[1].get("id").is_none());
}

#[tokio::test]
async fn reference_case_through_chat_completions() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let server = WireServer::start(chat_script()).await;
    let cfg = wire::config(
        ProviderKind::OpenAiCompatible,
        wire::chat::MODEL,
        &format!("{}/v1", server.base),
        "SANDALYST_COMPATIBLE_API_KEY",
    );
    let mut model = ChatCompletions::new(cfg).unwrap();
    reference_case(&mut model, &server, false, true).await;
}

#[tokio::test]
async fn reference_case_through_anthropic_messages() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let server = WireServer::start(messages_script()).await;
    let cfg = wire::config(
        ProviderKind::Anthropic,
        wire::messages::MODEL,
        &server.base,
        "ANTHROPIC_API_KEY",
    );
    let mut model = Anthropic::new(cfg).unwrap();
    reference_case(&mut model, &server, true, false).await;
    assert_eq!(
        model.price().unwrap().cost(&Usage {
            input_tokens: 1_000_000,
            output_tokens: 0,
            cached_tokens: 0
        }),
        3.0
    );
}

/// Issue 38: `run` asks the model while the sandbox starts and the file stages. The
/// scripted server keeps when the first request came; the run's own `sandbox_ready`
/// event came after it, and the first call still ran in the sandbox once it was there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_asks_the_model_before_the_sandbox_is_ready() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let config = common::config(&docker).await;
    // The image's Python as the engine keeps it, so the instructions need no sandbox
    // (any earlier sandbox of the image leaves it; this one makes sure).
    sandalyst::sandbox::docker::packages::for_image(&docker, &config.image)
        .await
        .unwrap();
    let server = WireServer::start(responses_script()).await;
    let cfg = wire::config(
        ProviderKind::OpenAi,
        "gpt-5.4",
        &format!("{}/v1", server.base),
        "OPENAI_API_KEY",
    );
    let mut model = OpenAiResponses::new(cfg).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("runs")).unwrap();
    let root = common::repo_root();
    let prompt = std::fs::read_to_string(root.join("examples/anomaly_task.md")).unwrap();
    let mut req = RunRequest::new(vec![root.join("examples/building_energy.csv")], prompt);
    req.config.sandbox = config;
    req.config.limits.call_timeout = Duration::from_secs(120);
    let seen = std::sync::Mutex::new(Vec::new());
    let emit = |e: sandalyst::agent::Event| {
        seen.lock()
            .unwrap()
            .push((std::time::Instant::now(), e.kind))
    };
    let outcome = run::execute(
        &common::sessions(&store),
        req,
        &mut model,
        &emit,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{:?}", outcome.status);
    let seen = seen.into_inner().unwrap();
    use sandalyst::agent::{EventKind, SetupStage};
    let ready: Vec<std::time::Instant> = seen
        .iter()
        .filter(|(_, k)| {
            matches!(
                k,
                EventKind::Setup(SetupStage::SandboxReady {
                    warm_for_ms: None,
                    ..
                })
            )
        })
        .map(|(at, _)| *at)
        .collect();
    assert_eq!(ready.len(), 1, "one start, said once");
    let got = server.received();
    assert_eq!(got.len(), 3);
    assert!(
        got[0].at < ready[0],
        "the first request came {:?} after the sandbox was ready",
        got[0].at.duration_since(ready[0])
    );
    println!(
        "first model request {:?} before sandbox ready",
        ready[0].duration_since(got[0].at)
    );
    // The first call waited for the sandbox and ran there: its output went back.
    let first_output = seen
        .iter()
        .find(|(_, k)| matches!(k, EventKind::CellOutput { .. }))
        .map(|(at, _)| *at)
        .expect("the first call printed");
    assert!(first_output > ready[0]);
    let analysis = result_of(&got[1].body, "call_1").expect("result of call_1 sent back");
    assert!(analysis.contains("rows 1344"), "{analysis}");
}
