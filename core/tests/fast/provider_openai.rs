//! The OpenAI Responses provider against a local server speaking the Responses
//! streaming wire format: requests checked, scripted event streams, failures.

use crate::common::wire;

use sandalyst::model::config::ProviderKind;
use sandalyst::model::openai_responses::Responses;
use sandalyst::model::{CallForm, Item, Usage};
use serde_json::json;
use wire::responses::Events;
use wire::scenarios::{self, Provider};
use wire::{args, pieces, rows, text, Answer, WireServer, IMAGE_URL, TEST_KEY};

const P: Provider<Responses> =
    Provider::new(ProviderKind::OpenAi, "gpt-5.4", "/v1", "OPENAI_API_KEY");

fn text_reply() -> Vec<String> {
    Events::new()
        .text(0, wire::ROWS, 4)
        .completed(1200, 1024, 15)
}

#[tokio::test]
async fn text_only_reply_and_the_request_on_the_wire() {
    let req = scenarios::plain_reply(
        &P,
        text_reply(),
        Usage {
            input_tokens: 1200,
            output_tokens: 15,
            cached_tokens: 1024,
        },
        "/v1/responses",
    )
    .await;
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    assert!(req
        .header("content-type")
        .unwrap()
        .starts_with("application/json"));
    let b = &req.body;
    assert_eq!(b["model"], "gpt-5.4");
    assert_eq!(b["instructions"], wire::INSTRUCTIONS);
    assert_eq!(b["stream"], true);
    assert_eq!(b["store"], false);
    assert_eq!(b["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(
        b["input"],
        json!([{"type": "message", "role": "user", "content": "How many rows?"}])
    );
    let tools = b["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["type"], "function");
    assert_eq!(tools[0]["name"], "python");
    assert_eq!(tools[0]["strict"], false);
    assert_eq!(tools[0]["parameters"]["required"], json!(["code"]));
    assert_eq!(tools[1]["name"], "shell");
    assert_eq!(
        tools[1]["parameters"]["properties"]["command"]["type"],
        "string"
    );
}

#[tokio::test]
async fn one_call_with_arguments_in_many_chunks() {
    let args = json!({"code": "import pandas as pd\ndf = pd.read_csv('input/building_energy.csv')\nprint(df.shape)"}).to_string();
    let stream = Events::new()
        .call(0, "call_1", "python", &args, 3)
        .completed(500, 0, 40);
    assert!(stream.len() > 30);
    scenarios::decodes(&P, stream, &[wire::call("call_1", "python", &args)]).await;
}

#[tokio::test]
async fn reasoning_text_and_several_calls_then_history_goes_back_statelessly() {
    let stream = Events::new()
        .reasoning(0, "Check the columns, then the units.", "gAAAA-new-blob")
        .text(1, "Two checks.", 50)
        .call(2, "call_x", "python", r#"{"code":"print(df.dtypes)"}"#, 7)
        .call(
            3,
            "call_y",
            "shell",
            r#"{"command":"wc -l input/*.csv"}"#,
            7,
        )
        .completed(900, 0, 80);
    let server = WireServer::start(vec![Answer::Sse(stream)]).await;
    let reply = P.ask(&server, &wire::history()).await.unwrap();
    assert_eq!(
        reply.items,
        vec![
            Item::Reasoning {
                summary: "Check the columns, then the units.".into(),
                encrypted_content: Some("gAAAA-new-blob".into())
            },
            Item::Assistant {
                text: "Two checks.".into()
            },
            Item::ToolCall {
                call_id: "call_x".into(),
                name: "python".into(),
                arguments: r#"{"code":"print(df.dtypes)"}"#.into(),
                form: CallForm::Structured,
            },
            Item::ToolCall {
                call_id: "call_y".into(),
                name: "shell".into(),
                arguments: r#"{"command":"wc -l input/*.csv"}"#.into(),
                form: CallForm::Structured,
            },
        ]
    );
    assert_eq!(reply.tool_calls().count(), 2);

    // The history as sent: reasoning with its encrypted content and no id, calls with
    // their raw arguments (even invalid ones), results keyed by call_id.
    let input = server.received()[0].body["input"].clone();
    assert_eq!(
        input,
        json!([
            {"type": "message", "role": "user", "content": "Find anomalies in input/building_energy.csv"},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Look at the file first."}], "encrypted_content": "gAAAA-encrypted-blob"},
            {"type": "message", "role": "assistant", "content": "I will inspect the file."},
            {"type": "function_call", "call_id": "call_a", "name": "python", "arguments": "{\"code\": \"print(1"},
            {"type": "function_call", "call_id": "call_b", "name": "shell", "arguments": "{\"command\":\"ls input\"}"},
            {"type": "function_call_output", "call_id": "call_a", "output": "error: the arguments are not valid JSON"},
            {"type": "function_call_output", "call_id": "call_b", "output": "status: ok (0.01 s)\n[stdout]\nbuilding_energy.csv"},
        ])
    );
}

#[tokio::test]
async fn invalid_json_arguments_reach_the_loop_as_sent() {
    let broken = r#"{"code": "print('unterminated)"#;
    let stream = Events::new()
        .call(0, "call_1", "python", broken, 4)
        .completed(10, 0, 10);
    scenarios::arguments_pass_through(&P, stream, broken).await;
}

fn incomplete(e: &mut Events, reason: &str) -> Vec<String> {
    e.push(json!({"type": "response.incomplete", "response": {"id": "resp_1", "status": "incomplete",
        "incomplete_details": {"reason": reason},
        "usage": {"input_tokens": 10, "output_tokens": 4096, "input_tokens_details": {"cached_tokens": 0}}}}));
    e.partial()
}

#[tokio::test]
async fn a_response_incomplete_at_max_output_tokens_is_a_cut_off_reply() {
    // With what it said before the cap, or with nothing at all.
    let mut e = Events::new();
    e.text(0, "The file has", 4);
    scenarios::cut_off(
        &P,
        incomplete(&mut e, "max_output_tokens"),
        &[Item::Assistant {
            text: "The file has".into(),
        }],
    )
    .await;
    let reply =
        scenarios::cut_off(&P, incomplete(&mut Events::new(), "max_output_tokens"), &[]).await;
    assert_eq!(reply.usage.output_tokens, 4096);
    scenarios::not_cut_off(&P, text_reply()).await;

    // Stopped for another reason with nothing said: an error that says why.
    let server = WireServer::start(vec![Answer::Sse(incomplete(
        &mut Events::new(),
        "content_filter",
    ))])
    .await;
    let err = P.fails(&server, &wire::user("go")).await;
    assert!(
        err.contains("stopped the reply early (content_filter)"),
        "{err}"
    );
}

#[tokio::test]
async fn text_and_argument_deltas_arrive_before_the_reply_ends() {
    let code = r#"{"code":"print(df.shape)"}"#;
    let mut e = Events::new();
    e.text(0, "Two checks.", 4)
        .call(1, "call_x", "python", code, 5);
    let mut expected: Vec<_> = pieces("Two checks.", 4).iter().map(|p| text(p)).collect();
    expected.push(args("call_x", "python", ""));
    expected.extend(pieces(code, 5).iter().map(|p| args("call_x", "python", p)));
    scenarios::deltas_before_the_end(&P, e.partial(), &expected).await;
}

#[tokio::test]
async fn retries_are_announced_as_deltas() {
    scenarios::retry_is_announced(&P, text_reply()).await;
}

#[tokio::test]
async fn rate_limited_on_every_attempt_is_a_typed_error() {
    scenarios::rate_limited_to_the_end(
        &P,
        r#"{"error":{"message":"Rate limit reached for gpt-5.4","code":"rate_limit_exceeded"}}"#,
    )
    .await;
}

#[tokio::test]
async fn images_go_back_in_the_function_call_output() {
    let tools = wire::tools();
    let body = P
        .body_for(&wire::history_with_image(), &tools, text_reply(), |_| {})
        .await;
    assert_eq!(
        body["input"][2],
        json!({"type": "function_call_output", "call_id": "call_p", "output": [
            {"type": "input_text", "text": "status: ok (0.50 s)"},
            {"type": "input_text", "text": "output/energy_anomalies.png"},
            {"type": "input_image", "image_url": IMAGE_URL, "detail": "auto"},
        ]})
    );
}

#[tokio::test]
async fn a_model_without_vision_never_gets_images() {
    let tools = wire::tools();
    let note = "status: ok (0.50 s)\n[image output/energy_anomalies.png not shown: this model does not take images]";
    // Marked so in the config, or known to the table.
    let marked = P
        .body_for(&wire::history_with_image(), &tools, text_reply(), |c| {
            c.vision = Some(false)
        })
        .await;
    let known =
        Provider::<Responses>::new(ProviderKind::OpenAi, "o3-mini", "/v1", "OPENAI_API_KEY")
            .body_for(&wire::history_with_image(), &tools, text_reply(), |_| {})
            .await;
    for body in [marked, known] {
        assert_eq!(body["input"][2]["output"], note);
        assert!(!body.to_string().contains("iVBORw0KGgo"));
    }
}

#[tokio::test]
async fn a_turn_without_tools_sends_none_and_keeps_the_calls_in_the_history() {
    let body = P
        .body_for(&wire::history(), &[], text_reply(), |_| {})
        .await;
    for key in ["tools", "tool_choice", "parallel_tool_calls"] {
        assert!(body.get(key).is_none(), "{key} in {body}");
    }
    let kinds: Vec<_> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output"
        ]
    );
}

#[tokio::test]
async fn rate_limit_429_honours_retry_after_then_succeeds() {
    // Retry-After: 1 is waited out; retry-after-ms takes precedence over the 30 s.
    scenarios::rate_limit_then_success(
        &P,
        vec![
            Answer::status_with(
                429,
                &[("retry-after", "1")],
                r#"{"error":{"message":"Rate limit reached for gpt-5.4","type":"requests","code":"rate_limit_exceeded"}}"#,
            ),
            Answer::status_with(
                429,
                &[("retry-after-ms", "20"), ("retry-after", "30")],
                r#"{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}"#,
            ),
        ],
        text_reply(),
        &rows(),
    )
    .await;
}

#[tokio::test]
async fn server_error_500_then_success() {
    scenarios::recovers(
        &P,
        vec![Answer::status(
            500,
            r#"{"error":{"message":"The server had an error","type":"server_error"}}"#,
        )],
        text_reply(),
        &rows(),
    )
    .await;
}

#[tokio::test]
async fn connection_dropped_mid_stream_is_retried_then_reported() {
    let mut cut = Events::new();
    cut.call(0, "call_1", "python", r#"{"code":"print(1)"}"#, 3);
    scenarios::dropped_then_reported(&P, cut.partial(), text_reply(), &rows()).await;
}

#[tokio::test]
async fn a_stream_that_ends_early_or_carries_garbage_is_retried() {
    let mut early = Events::new();
    early.text(0, "partial", 3);
    scenarios::recovers(
        &P,
        vec![
            Answer::Sse(early.partial()),
            Answer::Sse(vec![
                "event: response.output_text.delta\ndata: {not json\n\n".into(),
            ]),
        ],
        text_reply(),
        &rows(),
    )
    .await;

    let garbage = Answer::Sse(vec![
        "data: {\"type\": \"response.output_text.delta\", oops\n\n".into(),
    ]);
    let server = WireServer::start(vec![garbage.clone(), garbage.clone(), garbage]).await;
    let err = P.fails(&server, &wire::user("hi")).await;
    assert!(err.contains("malformed event"), "{err}");
}

#[tokio::test]
async fn auth_error_names_the_variable_and_hides_the_key() {
    scenarios::auth_rejected(
        &P,
        &format!(r#"{{"error":{{"message":"Incorrect API key provided: {TEST_KEY}. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#),
    )
    .await;
}

#[tokio::test]
async fn context_length_error_is_said_plainly_over_http_and_in_the_stream() {
    scenarios::context_too_long(
        &P,
        r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#,
    )
    .await;

    let mut failed = Events::new();
    failed.push(json!({"type": "response.failed", "response": {"id": "resp_1", "status": "failed", "error": {"code": "context_length_exceeded", "message": "Your input exceeds the context window of this model."}}}));
    let server = WireServer::start(vec![Answer::Sse(failed.partial())]).await;
    let err = P.fails(&server, &wire::user("hi")).await;
    assert!(
        err.contains("longer than the model's context window"),
        "{err}"
    );
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn an_error_event_mid_stream_is_retried_when_transient() {
    let mut err = Events::new();
    err.text(0, "half", 2);
    err.push(json!({"type": "error", "code": "server_error", "message": "An error occurred while processing your request.", "param": null}));
    scenarios::recovers(&P, vec![Answer::Sse(err.partial())], text_reply(), &rows()).await;
}

#[tokio::test]
async fn cancel_mid_stream_returns_promptly() {
    let mut hang = Events::new();
    hang.call(0, "call_1", "python", r#"{"code": "print("#, 2);
    scenarios::cancel_mid_stream(&P, hang.partial()).await;
}
