//! `sandalyst models` against local doubles of the two listing endpoints: Ollama's
//! own `GET /api/tags` and the OpenAI-style `GET /v1/models`, with the key sent.

use crate::common::wire::{self, Answer, WireServer};
use sandalyst::model::config::ProviderKind;
use sandalyst::model::listing;
use serde_json::json;

#[tokio::test]
async fn ollama_lists_its_tags_and_a_compatible_server_its_models() {
    let tags = json!({"models": [
        {"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b", "size": 4_683_087_332u64,
         "details": {"parameter_size": "7.6B", "quantization_level": "Q4_K_M"}},
        {"name": "llama3.2:1b", "size": 1_321_098_329u64}
    ]});
    let server = WireServer::start(vec![Answer::status(200, &tags.to_string())]).await;
    let c = wire::config(
        ProviderKind::OpenAiCompatible,
        "x",
        &format!("{}/v1", server.base),
        "SANDALYST_COMPATIBLE_API_KEY",
    );
    let listed = listing::list(&c, "ollama").await.unwrap();
    let specs: Vec<&str> = listed.iter().map(|m| m.spec.as_str()).collect();
    assert_eq!(specs, ["ollama:llama3.2:1b", "ollama:qwen2.5-coder:7b"]);
    assert_eq!(listed[1].detail.as_deref(), Some("7.6B, 4.7 GB"));
    let got = server.received();
    assert_eq!(
        (got[0].method.as_str(), got[0].path.as_str()),
        ("GET", "/api/tags")
    );

    // llama.cpp's server (and vLLM, LM Studio): /v1/models, with the key as a bearer.
    let models = json!({"object": "list", "data": [
        {"id": "qwen2.5-coder-1.5b", "object": "model", "owned_by": "llamacpp"}]});
    let server = WireServer::start(vec![Answer::status(200, &models.to_string())]).await;
    let c = wire::config(
        ProviderKind::OpenAiCompatible,
        "x",
        &format!("{}/v1", server.base),
        "SANDALYST_COMPATIBLE_API_KEY",
    );
    let listed = listing::list(&c, "openai-compatible").await.unwrap();
    assert_eq!(listed[0].spec, "openai-compatible:qwen2.5-coder-1.5b");
    let got = server.received();
    assert_eq!(got[0].path, "/v1/models");
    assert_eq!(
        got[0].header("authorization"),
        Some(format!("Bearer {}", wire::TEST_KEY).as_str())
    );

    // A server that refuses says so, with the variable to check; the key it echoes
    // back is not repeated (the message reaches the terminal and the log).
    let echo = format!(
        r#"{{"error": {{"message": "bad key {}"}}}}"#,
        wire::TEST_KEY
    );
    let server = WireServer::start(vec![Answer::status(401, &echo)]).await;
    let c = wire::config(
        ProviderKind::OpenAi,
        "x",
        &format!("{}/v1", server.base),
        "OPENAI_API_KEY",
    );
    let e = listing::list(&c, "openai").await.unwrap_err().to_string();
    assert!(
        e.contains("401") && e.contains("OPENAI_API_KEY") && e.contains("bad key"),
        "{e}"
    );
    assert!(
        !e.contains(wire::TEST_KEY) && e.contains("[redacted]"),
        "{e}"
    );
}
