//! The Anthropic Messages provider against a local server speaking the Messages
//! streaming wire format: requests checked, scripted event streams, failures.

use crate::common::wire;

use sandalyst::model::anthropic::Messages;
use sandalyst::model::config::ProviderKind;
use sandalyst::model::{Item, Usage};
use serde_json::json;
use wire::messages::{Events, MODEL};
use wire::scenarios::{self, Provider};
use wire::{args, pieces, rows, text, Answer, WireServer, TEST_KEY};

const P: Provider<Messages> =
    Provider::new(ProviderKind::Anthropic, MODEL, "", "ANTHROPIC_API_KEY");

fn text_reply() -> Vec<String> {
    Events::new(30, 2000, 100)
        .text(wire::ROWS)
        .end("end_turn", 12)
}

#[tokio::test]
async fn text_only_reply_and_the_request_on_the_wire() {
    // Cached and freshly cached input count as input, as with OpenAI.
    let req = scenarios::plain_reply(
        &P,
        text_reply(),
        Usage {
            input_tokens: 2130,
            output_tokens: 12,
            cached_tokens: 2000,
        },
        "/v1/messages",
    )
    .await;
    assert_eq!(req.header("x-api-key"), Some(TEST_KEY));
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(req.header("authorization"), None);
    let b = &req.body;
    assert_eq!(b["model"], MODEL);
    assert_eq!(b["max_tokens"], 8192);
    assert_eq!(b["system"], wire::INSTRUCTIONS);
    assert_eq!(b["stream"], true);
    assert_eq!(
        b["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "How many rows?", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
    let tools = b["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["name"], "python");
    assert_eq!(tools[0]["input_schema"]["required"], json!(["code"]));
    assert_eq!(tools[1]["name"], "shell");
    assert!(tools[0].get("type").is_none() && tools[0].get("parameters").is_none());
}

#[tokio::test]
async fn one_call_with_input_json_in_many_chunks() {
    let args = json!({"code": "import pandas as pd\nprint(pd.read_csv('input/building_energy.csv').describe())"}).to_string();
    let stream = Events::new(50, 0, 0)
        .text("Let me look.")
        .tool_use("toolu_01A", "python", &args, 2)
        .end("tool_use", 60);
    scenarios::decodes(
        &P,
        stream,
        &[
            Item::Assistant {
                text: "Let me look.".into(),
            },
            wire::call("toolu_01A", "python", &args),
        ],
    )
    .await;
}

#[tokio::test]
async fn several_calls_and_the_history_as_content_blocks() {
    let stream = Events::new(50, 0, 0)
        .tool_use("toolu_x", "python", r#"{"code": "print(df.dtypes)"}"#, 4)
        .tool_use("toolu_y", "shell", r#"{"command": "ls -la input"}"#, 4)
        .end("tool_use", 60);
    let server = WireServer::start(vec![Answer::Sse(stream)]).await;
    let reply = P.ask(&server, &wire::history()).await.unwrap();
    assert_eq!(
        reply.tool_calls().collect::<Vec<_>>(),
        vec![
            ("toolu_x", "python", r#"{"code": "print(df.dtypes)"}"#),
            ("toolu_y", "shell", r#"{"command": "ls -la input"}"#)
        ]
    );
    // Text and tool_use blocks in one assistant message; both results in one user
    // message; invalid arguments wrapped in an object; the cache breakpoint at the end.
    assert_eq!(
        server.received()[0].body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Find anomalies in input/building_energy.csv"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "I will inspect the file."},
                {"type": "tool_use", "id": "call_a", "name": "python", "input": {"unparsed_arguments": "{\"code\": \"print(1"}},
                {"type": "tool_use", "id": "call_b", "name": "shell", "input": {"command": "ls input"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_a", "content": "error: the arguments are not valid JSON", "is_error": true},
                {"type": "tool_result", "tool_use_id": "call_b", "content": "status: ok (0.01 s)\n[stdout]\nbuilding_energy.csv", "is_error": false,
                 "cache_control": {"type": "ephemeral"}},
            ]},
        ])
    );
}

#[tokio::test]
async fn invalid_json_arguments_reach_the_loop_as_sent() {
    let broken = r#"{"code": "print(1)"#;
    let stream = Events::new(5, 0, 0)
        .tool_use("toolu_1", "python", broken, 3)
        .end("max_tokens", 9);
    scenarios::arguments_pass_through(&P, stream, broken).await;
}

#[tokio::test]
async fn stop_reason_max_tokens_is_a_cut_off_reply() {
    scenarios::cut_off(
        &P,
        Events::new(5, 0, 0)
            .text("The file has")
            .end("max_tokens", 8192),
        &[Item::Assistant {
            text: "The file has".into(),
        }],
    )
    .await;
    let reply = scenarios::cut_off(&P, Events::new(5, 0, 0).end("max_tokens", 8192), &[]).await;
    assert_eq!(reply.usage.output_tokens, 8192);
    scenarios::not_cut_off(&P, text_reply()).await;
}

#[tokio::test]
async fn text_and_argument_deltas_arrive_before_the_reply_ends() {
    let code = r#"{"code":"print(df.shape)"}"#;
    let stream = Events::new(5, 0, 0)
        .text("Two checks.")
        .tool_use("toolu_1", "python", code, 5)
        .partial();
    let mut expected: Vec<_> = pieces("Two checks.", 5).iter().map(|p| text(p)).collect();
    expected.push(args("toolu_1", "python", ""));
    expected.extend(pieces(code, 5).iter().map(|p| args("toolu_1", "python", p)));
    scenarios::deltas_before_the_end(&P, stream, &expected).await;
}

#[tokio::test]
async fn retries_are_announced_as_deltas() {
    scenarios::retry_is_announced(&P, text_reply()).await;
}

#[tokio::test]
async fn rate_limited_on_every_attempt_is_a_typed_error() {
    scenarios::rate_limited_to_the_end(
        &P,
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
    )
    .await;
}

#[tokio::test]
async fn images_go_inside_the_tool_result() {
    let body = P
        .body_for(
            &wire::history_with_image(),
            &wire::tools(),
            text_reply(),
            |_| {},
        )
        .await;
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [{
            "type": "tool_result",
            "tool_use_id": "call_p",
            "content": [
                {"type": "text", "text": "status: ok (0.50 s)"},
                {"type": "text", "text": "output/energy_anomalies.png"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            ],
            "is_error": false,
            "cache_control": {"type": "ephemeral"},
        }]})
    );
}

#[tokio::test]
async fn a_model_without_vision_never_gets_images() {
    let body = P
        .body_for(
            &wire::history_with_image(),
            &wire::tools(),
            text_reply(),
            |c| c.vision = Some(false),
        )
        .await;
    assert_eq!(
        body["messages"][2]["content"][0]["content"],
        "status: ok (0.50 s)\n[image output/energy_anomalies.png not shown: this model does not take images]"
    );
    assert!(!body.to_string().contains("iVBORw0KGgo"));
}

#[tokio::test]
async fn a_turn_without_tools_names_the_used_ones_and_sets_tool_choice_none() {
    // The API refuses tool_use blocks in the history without tool definitions.
    let body = P
        .body_for(&wire::history(), &[], text_reply(), |_| {})
        .await;
    assert_eq!(body["tool_choice"], json!({"type": "none"}));
    let names: Vec<_> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["python", "shell"]);
    assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
    assert_eq!(body["messages"][1]["content"][1]["type"], "tool_use");

    // Without calls in the history there is nothing to define.
    let body = P
        .body_for(&wire::user("hi"), &[], text_reply(), |_| {})
        .await;
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
}

#[tokio::test]
async fn rate_limit_429_with_retry_after_then_success() {
    scenarios::rate_limit_then_success(
        &P,
        vec![Answer::status_with(
            429,
            &[("retry-after", "1"), ("anthropic-ratelimit-requests-remaining", "0")],
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
        )],
        text_reply(),
        &rows(),
    )
    .await;
}

#[tokio::test]
async fn server_errors_then_success_including_overloaded_mid_stream() {
    let mut overloaded = Events::new(5, 0, 0);
    overloaded.text("par");
    overloaded.push(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    scenarios::recovers(
        &P,
        vec![
            Answer::status(
                500,
                r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
            ),
            Answer::status(
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ),
            Answer::Sse(overloaded.partial()),
        ],
        text_reply(),
        &rows(),
    )
    .await;
}

#[tokio::test]
async fn connection_dropped_mid_stream_is_retried_then_reported() {
    let cut = Events::new(5, 0, 0)
        .tool_use("toolu_1", "python", r#"{"code":"print(1)"}"#, 3)
        .partial();
    scenarios::dropped_then_reported(&P, cut, text_reply(), &rows()).await;
}

#[tokio::test]
async fn a_stream_without_message_stop_or_with_garbage_is_retried() {
    scenarios::recovers(
        &P,
        vec![
            Answer::Sse(Events::new(5, 0, 0).text("The file").partial()),
            Answer::Sse(vec![
                "event: content_block_delta\ndata: {\"type\": \"content_block_delta\",\n\n".into(),
            ]),
        ],
        text_reply(),
        &rows(),
    )
    .await;
}

#[tokio::test]
async fn auth_error_names_the_variable_and_hides_the_key() {
    scenarios::auth_rejected(
        &P,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    )
    .await;
}

#[tokio::test]
async fn context_length_error_is_said_plainly() {
    let err = scenarios::context_too_long(
        &P,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210342 tokens > 200000 maximum"}}"#,
    )
    .await;
    assert!(err.contains("210342 tokens > 200000 maximum"), "{err}");
}

#[tokio::test]
async fn cancel_mid_stream_returns_promptly() {
    let hang = Events::new(5, 0, 0)
        .tool_use("toolu_1", "python", r#"{"code": "pri"#, 2)
        .partial();
    scenarios::cancel_mid_stream(&P, hang).await;
}

#[tokio::test]
async fn a_base_url_ending_in_v1_is_not_doubled() {
    let server = WireServer::start(vec![Answer::Sse(text_reply())]).await;
    Provider::<Messages>::new(ProviderKind::Anthropic, MODEL, "/v1/", "ANTHROPIC_API_KEY")
        .ask(&server, &wire::user("hi"))
        .await
        .unwrap();
    assert_eq!(server.received()[0].path, "/v1/messages");
}
