//! The Chat Completions provider against a local server speaking the OpenAI-compatible
//! streaming format, in the variants real servers produce (OpenAI, Ollama, llama.cpp,
//! vLLM, gateways): requests checked, scripted chunk streams, failures.

use crate::common::wire;

use std::time::Duration;

use sandalyst::model::chat_completions::text_calls;
use sandalyst::model::chat_completions::Chat;
use sandalyst::model::config::ProviderKind;
use sandalyst::model::{CallForm, Item, Usage};
use serde_json::json;
use wire::chat::{call_chunks, chunk, text_stream, usage_chunk, DONE, MODEL};
use wire::scenarios::{self, Provider};
use wire::{args, pieces, rows, text, Answer, WireServer, IMAGE_URL, ROWS, TEST_KEY};

const P: Provider<Chat> = Provider::new(
    ProviderKind::OpenAiCompatible,
    MODEL,
    "/v1/",
    "OPENROUTER_API_KEY",
);

#[tokio::test]
async fn text_only_reply_and_the_request_on_the_wire() {
    let req = scenarios::plain_reply(
        &P,
        text_stream(ROWS),
        Usage {
            input_tokens: 800,
            output_tokens: 9,
            cached_tokens: 512,
        },
        "/v1/chat/completions",
    )
    .await;
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    let b = &req.body;
    assert_eq!(b["model"], MODEL);
    assert_eq!(b["stream"], true);
    assert_eq!(b["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        b["messages"],
        json!([
            {"role": "system", "content": wire::INSTRUCTIONS},
            {"role": "user", "content": "How many rows?"},
        ])
    );
    let tools = b["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["type"], "function");
    assert_eq!(tools[0]["function"]["name"], "python");
    assert_eq!(
        tools[0]["function"]["parameters"]["required"],
        json!(["code"])
    );
    assert_eq!(tools[1]["function"]["name"], "shell");
}

#[tokio::test]
async fn one_call_with_arguments_in_many_chunks() {
    let args = json!({"code": "import pandas as pd\nprint(pd.read_csv('input/building_energy.csv').shape)"}).to_string();
    let mut s = call_chunks(0, "call_1", "python", &args, 2);
    s.push(chunk(json!({}), Some("tool_calls")));
    s.push(DONE.into());
    scenarios::decodes(&P, s, &[wire::call("call_1", "python", &args)]).await;
}

#[tokio::test]
async fn several_calls_interleaved_by_index_and_the_history_sent_back() {
    let a = r#"{"code":"print(df.dtypes)"}"#;
    let b = r#"{"command":"wc -l input/building_energy.csv"}"#;
    let (ca, cb) = (
        call_chunks(0, "call_x", "python", a, 3),
        call_chunks(1, "call_y", "shell", b, 3),
    );
    // Deltas of the two calls alternate, as some servers send parallel calls.
    let mut s = vec![chunk(
        json!({"role": "assistant", "content": "Two checks."}),
        None,
    )];
    for i in 0..ca.len().max(cb.len()) {
        s.extend(ca.get(i).cloned());
        s.extend(cb.get(i).cloned());
    }
    s.push(chunk(json!({}), Some("tool_calls")));
    s.push(usage_chunk(100, 0, 50));
    s.push(DONE.into());
    let server = WireServer::start(vec![Answer::Sse(s)]).await;
    let reply = P.ask(&server, &wire::history()).await.unwrap();
    assert_eq!(
        reply.items,
        vec![
            Item::Assistant {
                text: "Two checks.".into()
            },
            Item::ToolCall {
                call_id: "call_x".into(),
                name: "python".into(),
                arguments: a.into(),
                form: CallForm::Structured,
            },
            Item::ToolCall {
                call_id: "call_y".into(),
                name: "shell".into(),
                arguments: b.into(),
                form: CallForm::Structured,
            },
        ]
    );

    // Assistant text and its calls as one message; invalid arguments wrapped so servers
    // that parse them (Ollama) accept the history; reasoning not sent; results as tool
    // messages.
    assert_eq!(
        server.received()[0].body["messages"],
        json!([
            {"role": "system", "content": wire::INSTRUCTIONS},
            {"role": "user", "content": "Find anomalies in input/building_energy.csv"},
            {"role": "assistant", "content": "I will inspect the file.", "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "python", "arguments": "{\"unparsed_arguments\":\"{\\\"code\\\": \\\"print(1\"}"}},
                {"id": "call_b", "type": "function", "function": {"name": "shell", "arguments": "{\"command\":\"ls input\"}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_a", "content": "error: the arguments are not valid JSON"},
            {"role": "tool", "tool_call_id": "call_b", "content": "status: ok (0.01 s)\n[stdout]\nbuilding_energy.csv"},
        ])
    );
}

#[tokio::test]
async fn ollama_style_whole_calls_in_one_chunk_without_usage_or_done() {
    // Ollama: each call complete in one chunk, no usage unless asked, and here the
    // server just closes after the finish_reason.
    let s = vec![
        chunk(
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_o1", "index": 0, "type": "function", "function": {"name": "python", "arguments": "{\"code\":\"print(1)\"}"}},
                {"id": "call_o2", "index": 1, "type": "function", "function": {"name": "shell", "arguments": "{\"command\":\"ls\"}"}},
            ]}),
            None,
        ),
        chunk(
            json!({"role": "assistant", "content": ""}),
            Some("tool_calls"),
        ),
    ];
    let server = WireServer::start(vec![Answer::Sse(s)]).await;
    let reply = P.ask(&server, &wire::user("go")).await.unwrap();
    let calls: Vec<_> = reply.tool_calls().collect();
    assert_eq!(
        calls,
        vec![
            ("call_o1", "python", "{\"code\":\"print(1)\"}"),
            ("call_o2", "shell", "{\"command\":\"ls\"}")
        ]
    );
    assert_eq!(reply.usage, Usage::default());
}

#[tokio::test]
async fn calls_without_index_or_id_and_object_arguments_are_accepted() {
    let s = vec![
        chunk(
            json!({"tool_calls": [{"type": "function", "function": {"name": "python", "arguments": {"code": "1+1"}}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"id": "second", "type": "function", "function": {"name": "shell", "arguments": "{\"command\":"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"function": {"arguments": "\"ls\"}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        DONE.into(),
    ];
    let server = WireServer::start(vec![Answer::Sse(s)]).await;
    let reply = P.ask(&server, &wire::user("go")).await.unwrap();
    let calls: Vec<_> = reply.tool_calls().collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[0].0.starts_with("call_"), "a missing id is made up");
    assert_eq!((calls[0].1, calls[0].2), ("python", r#"{"code":"1+1"}"#));
    assert_eq!(calls[1], ("second", "shell", r#"{"command":"ls"}"#));
}

#[tokio::test]
async fn a_single_non_streamed_json_reply_works() {
    let body = json!({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 1_700_000_000, "model": MODEL,
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_j", "type": "function", "function": {"name": "python", "arguments": "{\"code\":\"print(2)\"}"}}]
        }}],
        "usage": {"prompt_tokens": 70, "completion_tokens": 12, "total_tokens": 82}
    });
    let server = WireServer::start(vec![Answer::Json(body)]).await;
    let reply = P.ask(&server, &wire::user("go")).await.unwrap();
    assert_eq!(
        reply.tool_calls().collect::<Vec<_>>(),
        vec![("call_j", "python", "{\"code\":\"print(2)\"}")]
    );
    assert_eq!(reply.usage.input_tokens, 70);
}

#[tokio::test]
async fn reasoning_content_is_kept_for_the_transcript() {
    let s = vec![
        chunk(
            json!({"role": "assistant", "reasoning_content": "Think "}),
            None,
        ),
        chunk(json!({"reasoning_content": "briefly."}), None),
        chunk(json!({"content": "Answer."}), Some("stop")),
        DONE.into(),
    ];
    scenarios::decodes(
        &P,
        s,
        &[
            Item::Reasoning {
                summary: "Think briefly.".into(),
                encrypted_content: None,
            },
            Item::Assistant {
                text: "Answer.".into(),
            },
        ],
    )
    .await;
}

#[tokio::test]
async fn thinking_written_into_the_content_is_kept_apart_from_the_answer() {
    let reasoning = |t: &str| Item::Reasoning {
        summary: t.into(),
        encrypted_content: None,
    };
    scenarios::decodes(
        &P,
        text_stream(&format!("<think>\nCount the rows.\n</think>\n\n{ROWS}")),
        &[reasoning("Count the rows."), rows()[0].clone()],
    )
    .await;
    // llama.cpp with DeepSeek-R1's template: the opening tag is in the prompt.
    scenarios::decodes(
        &P,
        text_stream(&format!("Count the rows.</think>{ROWS}")),
        &[reasoning("Count the rows."), rows()[0].clone()],
    )
    .await;
    // A call written as text after the thinking is still found.
    let server = WireServer::start(vec![Answer::Sse(text_stream(
        "<think>Use python.</think>\n```python\nprint(1)\n```",
    ))])
    .await;
    let reply = P.ask(&server, &wire::user("go")).await.unwrap();
    assert_eq!(reply.items[0], reasoning("Use python."));
    assert_eq!(
        reply.tool_calls().next().unwrap().2,
        r#"{"code":"print(1)\n"}"#
    );
}

#[tokio::test]
async fn invalid_json_arguments_reach_the_loop_as_sent() {
    let broken = r#"{"code": "print(1)"#;
    let mut s = call_chunks(0, "call_1", "python", broken, 3);
    s.push(chunk(json!({}), Some("tool_calls")));
    s.push(DONE.into());
    scenarios::arguments_pass_through(&P, s, broken).await;
}

#[tokio::test]
async fn rate_limit_429_with_retry_after_then_success() {
    scenarios::rate_limit_then_success(
        &P,
        vec![Answer::status_with(
            429,
            &[("retry-after", "1")],
            r#"{"error":{"message":"Rate limit exceeded: free-models-per-min","code":429}}"#,
        )],
        text_stream(ROWS),
        &rows(),
    )
    .await;
}

#[tokio::test]
async fn server_errors_then_success_including_an_error_chunk_mid_stream() {
    scenarios::recovers(
        &P,
        vec![
            Answer::status(
                500,
                r#"{"error":{"message":"Internal Server Error","type":"server_error"}}"#,
            ),
            Answer::status(503, "<html>Service Unavailable</html>"),
        ],
        text_stream(ROWS),
        &rows(),
    )
    .await;

    // OpenRouter reports an upstream failure inside a 200 stream.
    scenarios::recovers(
        &P,
        vec![Answer::Sse(vec![
            chunk(json!({"content": "par"}), None),
            format!(
                "data: {}\n\n",
                json!({"error": {"code": 502, "message": "Provider returned error"}})
            ),
        ])],
        text_stream(ROWS),
        &rows(),
    )
    .await;
}

#[tokio::test]
async fn connection_dropped_mid_stream_is_retried_then_reported() {
    let cut = call_chunks(0, "call_1", "python", r#"{"code":"print(1)"}"#, 3);
    scenarios::dropped_then_reported(&P, cut, text_stream(ROWS), &rows()).await;
}

#[tokio::test]
async fn a_stream_cut_before_any_finish_is_incomplete_and_retried() {
    scenarios::recovers(
        &P,
        vec![
            Answer::Sse(vec![chunk(json!({"content": "The file"}), None)]),
            Answer::Sse(vec!["data: {\"choices\": [oops\n\n".into()]),
        ],
        text_stream(ROWS),
        &rows(),
    )
    .await;
}

#[tokio::test]
async fn auth_error_names_the_configured_variable_and_hides_the_key() {
    scenarios::auth_rejected(
        &P,
        &format!(
            r#"{{"error":{{"message":"No auth credentials found for key {TEST_KEY}","code":401}}}}"#
        ),
    )
    .await;
}

#[tokio::test]
async fn no_key_sends_no_authorization_header() {
    let server = WireServer::start(vec![Answer::Sse(text_stream("ok"))]).await;
    P.ask_with(&server, &wire::user("hi"), |c| {
        c.credentials = sandalyst::model::secret::Credentials::none()
    })
    .await
    .unwrap();
    assert_eq!(server.received()[0].header("authorization"), None);
}

#[tokio::test]
async fn context_length_errors_of_vllm_and_llama_cpp_are_said_plainly() {
    for body in [
        r#"{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens in the messages, Please reduce the length of the messages.","type":"BadRequestError","param":null,"code":400}"#,
        r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}"#,
    ] {
        scenarios::context_too_long(&P, body).await;
    }
}

#[tokio::test]
async fn a_wrong_base_url_says_what_to_check() {
    let server = WireServer::start(vec![Answer::status(404, "404 page not found")]).await;
    let err = P.fails(&server, &wire::user("hi")).await;
    assert!(err.contains("404") && err.contains("base URL"), "{err}");
}

#[tokio::test]
async fn finish_reason_length_is_a_cut_off_reply() {
    let s = vec![
        chunk(json!({"role": "assistant", "content": "The file"}), None),
        chunk(json!({}), Some("length")),
        DONE.into(),
    ];
    scenarios::cut_off(
        &P,
        s,
        &[Item::Assistant {
            text: "The file".into(),
        }],
    )
    .await;
    let empty = vec![
        chunk(json!({"role": "assistant", "content": ""}), Some("length")),
        DONE.into(),
    ];
    scenarios::cut_off(&P, empty, &[]).await;
    scenarios::not_cut_off(&P, text_stream(ROWS)).await;
}

#[tokio::test]
async fn text_and_argument_deltas_arrive_before_the_reply_ends() {
    let code = r#"{"code":"print(df.shape)"}"#;
    let mut s = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    s.extend(
        pieces("Two checks.", 4)
            .into_iter()
            .map(|p| chunk(json!({"content": p}), None)),
    );
    s.extend(call_chunks(0, "call_1", "python", code, 5));
    let mut expected: Vec<_> = pieces("Two checks.", 4).iter().map(|p| text(p)).collect();
    expected.push(args("call_1", "python", ""));
    expected.extend(pieces(code, 5).iter().map(|p| args("call_1", "python", p)));
    scenarios::deltas_before_the_end(&P, s, &expected).await;
}

#[tokio::test]
async fn retries_are_announced_as_deltas() {
    scenarios::retry_is_announced(&P, text_stream(ROWS)).await;
}

#[tokio::test]
async fn rate_limited_on_every_attempt_is_a_typed_error() {
    scenarios::rate_limited_to_the_end(
        &P,
        r#"{"error":{"message":"Rate limit exceeded: free-models-per-min","code":429}}"#,
    )
    .await;
}

#[tokio::test]
async fn images_follow_the_tool_messages_as_a_user_message() {
    let tools = wire::tools();
    let vision = Provider::<Chat>::new(
        ProviderKind::OpenAiCompatible,
        "qwen2.5-vl:7b",
        "/v1/",
        "OPENROUTER_API_KEY",
    );
    let mut history = wire::history_with_image();
    history.push(Item::User {
        text: "and by weekday?".into(),
    });
    let body = vision
        .body_for(&history, &tools, text_stream(ROWS), |_| {})
        .await;
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": wire::INSTRUCTIONS},
            {"role": "user", "content": "Plot the anomalies"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_p", "type": "function", "function": {"name": "python", "arguments": "{\"code\":\"plt.savefig('output/energy_anomalies.png')\"}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_p", "content": "status: ok (0.50 s)"},
            {"role": "user", "content": [
                {"type": "text", "text": "Images from the tool results above:"},
                {"type": "text", "text": "output/energy_anomalies.png (from call_p)"},
                {"type": "image_url", "image_url": {"url": IMAGE_URL}},
            ]},
            {"role": "user", "content": "and by weekday?"},
        ])
    );
    // A model the config says takes images gets them too.
    let body = P
        .body_for(
            &wire::history_with_image(),
            &tools,
            text_stream(ROWS),
            |c| c.vision = Some(true),
        )
        .await;
    assert_eq!(
        body["messages"][4]["content"][2]["image_url"]["url"],
        IMAGE_URL
    );
}

#[tokio::test]
async fn a_model_without_vision_never_gets_images() {
    let tools = wire::tools();
    // A local model the table does not know, and one the config marks.
    let unknown = P
        .body_for(
            &wire::history_with_image(),
            &tools,
            text_stream(ROWS),
            |_| {},
        )
        .await;
    let marked = Provider::<Chat>::new(
        ProviderKind::OpenAiCompatible,
        "openai/gpt-4o",
        "/v1/",
        "OPENROUTER_API_KEY",
    )
    .body_for(
        &wire::history_with_image(),
        &tools,
        text_stream(ROWS),
        |c| c.vision = Some(false),
    )
    .await;
    for body in [unknown, marked] {
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 4, "no image message: {messages:?}");
        assert_eq!(
            messages[3]["content"],
            "status: ok (0.50 s)\n[image output/energy_anomalies.png not shown: this model does not take images]"
        );
        assert!(!body.to_string().contains("iVBORw0KGgo"));
    }
}

#[tokio::test]
async fn a_turn_without_tools_sends_none_and_keeps_the_calls_in_the_history() {
    let body = P
        .body_for(&wire::history(), &[], text_stream(ROWS), |_| {})
        .await;
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
    assert_eq!(
        body["messages"][2]["tool_calls"].as_array().unwrap().len(),
        2
    );
    assert_eq!(body["messages"][3]["role"], "tool");
}

/// The python call a local model wrote in its text, as the loop receives it.
async fn text_call(reply_text: &str) -> (String, String, Vec<Item>) {
    let server = WireServer::start(vec![Answer::Sse(text_stream(reply_text))]).await;
    let reply = P.ask(&server, &wire::user("go")).await.unwrap();
    let calls: Vec<_> = reply.tool_calls().collect();
    assert_eq!(calls.len(), 1, "{reply_text}: {:?}", reply.items);
    let (id, name, arguments) = calls[0];
    assert!(
        reply.items.iter().any(
            |i| matches!(i, Item::ToolCall { call_id, form: CallForm::Text, .. } if call_id == id)
        ),
        "{:?}",
        reply.items
    );
    assert_eq!(name, "python");
    (id.to_string(), arguments.to_string(), reply.items.clone())
}

#[tokio::test]
async fn tool_calls_written_as_text_become_calls() {
    let code = "import pandas as pd\nprint(pd.read_csv('input/building_energy.csv').shape)";
    let want = json!({ "code": code }).to_string();

    // A bare JSON object, with the arguments under "arguments".
    let object = json!({"name": "python", "arguments": {"code": code}}).to_string();
    let (_, arguments, items) = text_call(&object).await;
    assert_eq!(arguments, want);
    // The model's text stays as it wrote it, for the history; a person reads nothing
    // of it but the cell.
    assert_eq!(
        items[0],
        Item::Assistant {
            text: object.clone()
        }
    );
    assert_eq!(text_calls::shown_text(&items, 0).as_deref(), Some(""));

    // Fenced JSON with the arguments beside the tool's name, after some prose.
    let fenced = format!(
        "Let me load the file.\n```json\n{}\n```",
        json!({"tool": "python", "code": code})
    );
    let (_, arguments, items) = text_call(&fenced).await;
    assert_eq!(arguments, want);
    assert_eq!(
        items[0],
        Item::Assistant {
            text: fenced.clone()
        }
    );
    assert_eq!(
        text_calls::shown_text(&items, 0).as_deref(),
        Some("Let me load the file.")
    );

    // A fenced python block.
    let (_, arguments, _) = text_call(&format!("```python\n{code}\n```")).await;
    assert_eq!(
        arguments,
        json!({ "code": format!("{code}\n") }).to_string()
    );

    // A structured call is left as it is; a plain answer stays an answer.
    let mut s = call_chunks(0, "call_1", "python", &want, 7);
    s.push(chunk(json!({}), Some("tool_calls")));
    s.push(DONE.into());
    scenarios::decodes(&P, s, &[wire::call("call_1", "python", &want)]).await;
    scenarios::decodes(&P, text_stream(ROWS), &rows()).await;
}

#[tokio::test]
async fn the_model_is_told_once_how_to_call_tools() {
    // Two turns whose calls were written as text: the result of the first carries the
    // note when the history goes back, the second does not.
    let (first, _, items1) =
        text_call(&json!({"name": "python", "arguments": {"code": "1"}}).to_string()).await;
    let (second, _, items2) = text_call("```python\n2\n```").await;
    // The calls as the provider made them: marked as recovered from text.
    let call = |items: &[Item]| {
        items
            .iter()
            .find(|i| matches!(i, Item::ToolCall { .. }))
            .cloned()
            .unwrap()
    };
    let history = vec![
        Item::User { text: "go".into() },
        call(&items1),
        Item::ToolOutput {
            call_id: first.clone().into(),
            output: "[stdout]\n1".into(),
            is_error: false,
            images: vec![],
        },
        call(&items2),
        Item::ToolOutput {
            call_id: second.clone().into(),
            output: "[stdout]\n2".into(),
            is_error: false,
            images: vec![],
        },
    ];
    let body = P
        .body_for(&history, &wire::tools(), text_stream(ROWS), |_| {})
        .await;
    let m = &body["messages"];
    assert_eq!(m[3]["tool_call_id"], first.as_str());
    assert_eq!(
        m[3]["content"],
        format!("[stdout]\n1\n\n{}", text_calls::NOTE)
    );
    assert_eq!(m[5]["content"], "[stdout]\n2");
    assert_eq!(
        body.to_string().matches("tool-calling interface").count(),
        1
    );
}

#[tokio::test]
async fn a_web_page_instead_of_an_api_says_to_check_the_base_url() {
    let server = WireServer::start(vec![Answer::Status {
        code: 200,
        headers: vec![("content-type".into(), "text/html; charset=utf-8".into())],
        body: "<html><body>Welcome to nginx!</body></html>".into(),
    }])
    .await;
    let err = P.fails(&server, &wire::user("hi")).await;
    assert!(
        err.contains("web page") && err.contains("check the base URL"),
        "{err}"
    );
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_login_page_labelled_plain_text_is_a_web_page_at_the_first_request() {
    // Captive portals and some proxies label their page text/plain.
    let server = WireServer::start(vec![Answer::Status {
        code: 200,
        headers: vec![("content-type".into(), "text/plain".into())],
        body: "\n<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Wi-Fi login</body></html>".into(),
    }])
    .await;
    let err = P.fails(&server, &wire::user("hi")).await;
    assert!(
        err.contains("web page") && err.contains("check the base URL"),
        "{err}"
    );
    // Not retried: the same page would come back.
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_login_page_in_pieces_after_blank_lines_is_a_web_page_at_the_first_request() {
    // The first chunk holds only blank lines; the page comes in the next ones, each
    // read on its own (the server waits between them).
    let page = Answer::Chunked {
        content_type: "text/plain; charset=utf-8".into(),
        chunks: vec![
            "\r\n\n  ".into(),
            "<!DOC".into(),
            "TYPE html>\n<html><head><title>Sign in</title></head>".into(),
            "<body>Wi-Fi login</body></html>".into(),
        ],
    };
    let server = WireServer::paced(vec![page], Duration::from_millis(30)).await;
    let err = P.fails(&server, &wire::user("hi")).await;
    assert!(
        err.contains("web page") && err.contains("check the base URL"),
        "{err}"
    );
    assert_eq!(server.received().len(), 1, "not retried");
}

#[tokio::test]
async fn cancel_mid_stream_returns_promptly() {
    scenarios::cancel_mid_stream(&P, call_chunks(0, "c", "python", "{\"code\":", 2)).await;
}

#[tokio::test]
async fn a_server_that_goes_silent_hits_the_idle_timeout() {
    let server = WireServer::start(vec![
        Answer::SseThenHang(vec![chunk(json!({"content": "thinking"}), None)]),
        Answer::Sse(text_stream(ROWS)),
    ])
    .await;
    let reply = P
        .ask_with(&server, &wire::user("hi"), |c| {
            c.http.idle_timeout = Duration::from_millis(300)
        })
        .await
        .unwrap();
    assert_eq!(reply.items, rows());
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn replies_are_bounded_and_sampled_as_configured() {
    // Nothing configured: a reply cap and a low temperature, and nothing else.
    let body = P
        .body_for(&wire::user("go"), &[], text_stream(ROWS), |_| {})
        .await;
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["temperature"], 0.2);
    assert!(body.get("seed").is_none() && body.get("repeat_penalty").is_none());
    // A seed and llama.cpp's repeat penalty when the config file sets them.
    let body = P
        .body_for(&wire::user("go"), &[], text_stream(ROWS), |c| {
            c.sampling = sandalyst::model::config::Sampling {
                max_tokens: Some(1024),
                temperature: Some(0.0),
                seed: Some(7),
                repeat_penalty: Some(1.1),
                ..Default::default()
            }
        })
        .await;
    assert_eq!(
        (
            &body["max_tokens"],
            &body["temperature"],
            &body["seed"],
            &body["repeat_penalty"]
        ),
        (&json!(1024), &json!(0.0), &json!(7), &json!(1.1))
    );
}

#[tokio::test]
async fn llama_cpp_timings_count_as_cached_tokens() {
    // llama.cpp's last chunk: usage without prompt_tokens_details, and its timings.
    let mut s = text_stream("Hi.");
    s.insert(s.len() - 1, chunk_with_timings());
    let server = WireServer::start(vec![Answer::Sse(s)]).await;
    let reply = P.ask(&server, &wire::user("go")).await.unwrap();
    assert_eq!(reply.usage.cached_tokens, 1200);
    assert_eq!(reply.usage.input_tokens, 1300);
}

fn chunk_with_timings() -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "x", "object": "chat.completion.chunk", "model": MODEL, "choices": [],
               "usage": {"prompt_tokens": 1300, "completion_tokens": 3, "total_tokens": 1303},
               "timings": {"cache_n": 1200, "prompt_n": 100, "prompt_ms": 1500.0, "predicted_n": 3}})
    )
}
