//! What every provider must do the same way, run against any of them: the provider is
//! named by its wire format and where the test server stands in for it, and each
//! scenario takes that provider's own answers and expectations.

use std::marker::PhantomData;
use std::time::Duration;

use sandalyst::model::config::{ProviderConfig, ProviderKind};
use sandalyst::model::error::ModelError;
use sandalyst::model::http::{HttpModel, WireFormat};
use sandalyst::model::{Delta, Item, Model, Reply, Request, ToolSpec, Usage};
use tokio_util::sync::CancellationToken;

use super::{Answer, Received, Seen, WireServer};

/// How a test reaches its provider on a [`WireServer`].
pub struct Provider<W> {
    pub kind: ProviderKind,
    pub model: &'static str,
    /// Appended to the server's address to make the base URL, e.g. "/v1".
    pub path: &'static str,
    pub key_var: &'static str,
    pub wire: PhantomData<W>,
}

impl<W: WireFormat> Provider<W> {
    pub const fn new(
        kind: ProviderKind,
        model: &'static str,
        path: &'static str,
        key_var: &'static str,
    ) -> Provider<W> {
        Provider {
            kind,
            model,
            path,
            key_var,
            wire: PhantomData,
        }
    }

    /// The provider's config pointing at `server`.
    pub fn config(&self, server: &WireServer) -> ProviderConfig {
        super::config(
            self.kind,
            self.model,
            &format!("{}{}", server.base, self.path),
            self.key_var,
        )
    }

    pub fn model(&self, server: &WireServer) -> HttpModel<W> {
        HttpModel::new(self.config(server)).unwrap()
    }

    /// One turn with `items`, the standard tools and no cancellation.
    pub async fn ask(&self, server: &WireServer, items: &[Item]) -> anyhow::Result<Reply> {
        self.ask_with(server, items, |_| {}).await
    }

    /// [`Provider::ask`] with the config changed by `change` first.
    pub async fn ask_with(
        &self,
        server: &WireServer,
        items: &[Item],
        change: impl FnOnce(&mut ProviderConfig),
    ) -> anyhow::Result<Reply> {
        let mut cfg = self.config(server);
        change(&mut cfg);
        let tools = super::tools();
        HttpModel::<W>::new(cfg)
            .unwrap()
            .respond(super::request(items, &tools), &CancellationToken::new())
            .await
    }

    /// The error of a turn that must fail.
    pub async fn fails(&self, server: &WireServer, items: &[Item]) -> String {
        self.ask(server, items).await.unwrap_err().to_string()
    }

    /// One turn with `tools`, the config changed by `change`, and the deltas recorded.
    pub async fn ask_full(
        &self,
        server: &WireServer,
        items: &[Item],
        tools: &[ToolSpec],
        change: impl FnOnce(&mut ProviderConfig),
    ) -> (anyhow::Result<Reply>, Vec<Delta>) {
        let mut cfg = self.config(server);
        change(&mut cfg);
        let seen = Seen::default();
        let on_delta = seen.record();
        let request = Request {
            instructions: super::INSTRUCTIONS,
            items,
            tools,
            on_delta: &on_delta,
            answer: Default::default(),
            repeats: 0,
        };
        let r = HttpModel::<W>::new(cfg)
            .unwrap()
            .respond(request, &CancellationToken::new())
            .await;
        (r, seen.get())
    }

    /// The request body sent for one turn on `items` (the server answers `ok`).
    pub async fn body_for(
        &self,
        items: &[Item],
        tools: &[ToolSpec],
        ok: Vec<String>,
        change: impl FnOnce(&mut ProviderConfig),
    ) -> serde_json::Value {
        let server = WireServer::start(vec![Answer::Sse(ok)]).await;
        self.ask_full(&server, items, tools, change)
            .await
            .0
            .unwrap();
        server.received().remove(0).body
    }
}

/// The server streams `partial` and then holds the reply open: `expected` reaches
/// `on_delta` while the reply has not ended (the turn is still waiting for the rest).
pub async fn deltas_before_the_end<W: WireFormat>(
    p: &Provider<W>,
    partial: Vec<String>,
    expected: &[Delta],
) {
    let server = WireServer::start(vec![Answer::SseThenHang(partial)]).await;
    let seen = Seen::default();
    let on_delta = seen.record();
    let tools = super::tools();
    let items = super::user("go");
    let mut model = p.model(&server);
    let request = Request {
        instructions: super::INSTRUCTIONS,
        items: &items,
        tools: &tools,
        on_delta: &on_delta,
        answer: Default::default(),
        repeats: 0,
    };
    let cancel = CancellationToken::new();
    let respond = model.respond(request, &cancel);
    let watch = async {
        let start = std::time::Instant::now();
        while seen.get().len() < expected.len() && start.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::select! {
        r = respond => panic!("the reply ended before its deltas were checked: {:?}", r.map(|r| r.items)),
        _ = watch => {}
    }
    assert_eq!(seen.get(), expected);
}

/// A 500 then `ok`: the retry is announced (attempt 2, a short wait, the reason)
/// before the deltas of the attempt that succeeds.
pub async fn retry_is_announced<W: WireFormat>(p: &Provider<W>, ok: Vec<String>) {
    let server = WireServer::start(vec![
        Answer::status(500, r#"{"error":{"message":"boom","type":"server_error"}}"#),
        Answer::Sse(ok),
    ])
    .await;
    let (r, deltas) = p
        .ask_full(&server, &super::user("hi"), &super::tools(), |_| {})
        .await;
    r.unwrap();
    match &deltas[0] {
        Delta::Retry {
            attempt: 2,
            wait_ms,
            reason,
        } => {
            assert!(*wait_ms <= 50, "{wait_ms}");
            assert!(
                reason.contains("500") && reason.contains("boom"),
                "{reason}"
            );
        }
        other => panic!("{other:?} in {deltas:?}"),
    }
    assert!(deltas[1..]
        .iter()
        .all(|d| !matches!(d, Delta::Retry { .. })));
    assert!(deltas.len() > 1, "{deltas:?}");

    // A wait the server asked for is the one announced.
    let server = WireServer::start(vec![
        Answer::status_with(429, &[("retry-after-ms", "120")], "{}"),
        Answer::status_with(429, &[("retry-after-ms", "130")], "{}"),
        Answer::status(599, "{}"),
    ])
    .await;
    let (r, deltas) = p
        .ask_full(&server, &super::user("hi"), &super::tools(), |_| {})
        .await;
    let retries: Vec<_> = deltas
        .iter()
        .filter_map(|d| match d {
            Delta::Retry {
                attempt, wait_ms, ..
            } => Some((*attempt, *wait_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(retries, vec![(2, 120), (3, 130)]);
    // The last failure was a 599: not a rate limit.
    assert!(matches!(
        r.unwrap_err().downcast_ref::<ModelError>(),
        Some(ModelError::Unavailable { .. })
    ));
}

/// 429 on every attempt: a typed [`ModelError::RateLimited`] with the server's words.
pub async fn rate_limited_to_the_end<W: WireFormat>(p: &Provider<W>, body: &str) {
    let answer = Answer::status_with(429, &[("retry-after-ms", "10")], body);
    let server = WireServer::start(vec![answer.clone(), answer.clone(), answer]).await;
    let err = p.ask(&server, &super::user("hi")).await.unwrap_err();
    match err.downcast_ref::<ModelError>() {
        Some(ModelError::RateLimited {
            message,
            retry_after_ms,
        }) => {
            assert!(
                message.contains("429") && message.contains("gave up after 3 attempts"),
                "{message}"
            );
            assert_eq!(*retry_after_ms, Some(10));
        }
        other => panic!("{other:?}: {err:#}"),
    }
    assert_eq!(
        err.to_string(),
        err.downcast_ref::<ModelError>().unwrap().to_string()
    );
}

/// A plain reply to "How many rows?": `stream` decodes to [`super::rows`] with `usage`,
/// and the question went as one POST to `path`. Returns the request for the checks of
/// the provider's own format.
pub async fn plain_reply<W: WireFormat>(
    p: &Provider<W>,
    stream: Vec<String>,
    usage: Usage,
    path: &str,
) -> Received {
    let server = WireServer::start(vec![Answer::Sse(stream)]).await;
    let reply = p
        .ask(&server, &super::user("How many rows?"))
        .await
        .unwrap();
    assert_eq!(reply.items, super::rows());
    assert_eq!(reply.usage, usage);
    let req = server.received().remove(0);
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", path));
    req
}

/// `stream`, in answer to "go", decodes to `expected`. Returns the reply.
pub async fn decodes<W: WireFormat>(
    p: &Provider<W>,
    stream: Vec<String>,
    expected: &[Item],
) -> Reply {
    let server = WireServer::start(vec![Answer::Sse(stream)]).await;
    let reply = p.ask(&server, &super::user("go")).await.unwrap();
    assert_eq!(reply.items, expected);
    reply
}

/// The server answers `failures` (each worth a retry), then `ok`: the reply is
/// `expected`, reached after one request per answer, with enough attempts allowed.
pub async fn recovers<W: WireFormat>(
    p: &Provider<W>,
    failures: Vec<Answer>,
    ok: Vec<String>,
    expected: &[Item],
) {
    let mut script = failures;
    script.push(Answer::Sse(ok));
    let n = script.len();
    let server = WireServer::start(script).await;
    let reply = p
        .ask_with(&server, &super::user("hi"), |c| {
            c.http.retry.max_attempts = c.http.retry.max_attempts.max(n as u32);
        })
        .await
        .unwrap();
    assert_eq!(reply.items, expected);
    assert_eq!(server.received().len(), n);
}

/// `limited` (429s asking to wait at least a second), then `ok`: the wait is honoured.
pub async fn rate_limit_then_success<W: WireFormat>(
    p: &Provider<W>,
    limited: Vec<Answer>,
    ok: Vec<String>,
    expected: &[Item],
) {
    let n = limited.len() + 1;
    let mut script = limited;
    script.push(Answer::Sse(ok));
    let server = WireServer::start(script).await;
    let (reply, took) = super::timed(p.ask(&server, &super::user("hi"))).await;
    assert_eq!(reply.unwrap().items, expected);
    assert_eq!(server.received().len(), n);
    assert!(took >= Duration::from_millis(950), "{took:?}");
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// A connection cut after `cut` is retried (and what it streamed is not kept); cut on
/// every attempt, it is a clear error once the retries are used up.
pub async fn dropped_then_reported<W: WireFormat>(
    p: &Provider<W>,
    cut: Vec<String>,
    ok: Vec<String>,
    expected: &[Item],
) {
    let server = WireServer::start(vec![Answer::SseThenDrop(cut.clone()), Answer::Sse(ok)]).await;
    assert_eq!(
        p.ask(&server, &super::user("hi")).await.unwrap().items,
        expected,
        "the half-streamed output of the dropped attempt is not kept"
    );

    let server = WireServer::start(vec![
        Answer::SseThenDrop(cut.clone()),
        Answer::SseThenDrop(cut.clone()),
        Answer::SseThenDrop(cut),
    ])
    .await;
    let err = p.fails(&server, &super::user("hi")).await;
    assert!(
        err.contains("dropped") && err.contains("gave up after 3 attempts"),
        "{err}"
    );
    assert_eq!(server.received().len(), 3);
}

/// A 401 with `body`: the error names the key's variable, shows no part of the key,
/// and is not retried.
pub async fn auth_rejected<W: WireFormat>(p: &Provider<W>, body: &str) {
    let server = WireServer::start(vec![Answer::status(401, body)]).await;
    let err = p.ask(&server, &super::user("hi")).await.unwrap_err();
    let text = format!("{err:#} {err:?}");
    assert!(
        text.contains(&format!("{} was rejected", p.key_var)),
        "{text}"
    );
    assert!(
        !text.contains("0123456789abcdef") && !text.contains("SECRET"),
        "{text}"
    );
    assert_eq!(server.received().len(), 1, "no retry on 401");
    assert!(!format!("{:?}", p.model(&server)).contains("SECRET"));
    match err.downcast_ref::<ModelError>() {
        Some(e @ ModelError::Auth { message }) => {
            assert_eq!(e.kind(), "auth");
            assert_eq!(message, &err.to_string());
        }
        other => panic!("not typed as auth: {other:?}"),
    }
}

/// A 400 with `body` saying the conversation is too long: said plainly, not retried.
/// Returns the error for provider-specific checks.
pub async fn context_too_long<W: WireFormat>(p: &Provider<W>, body: &str) -> String {
    let server = WireServer::start(vec![Answer::status(400, body)]).await;
    let error = p.ask(&server, &super::user("hi")).await.unwrap_err();
    let err = error.to_string();
    assert!(
        err.contains("the conversation is longer than the model's context window"),
        "{err}"
    );
    assert!(
        matches!(
            error.downcast_ref::<ModelError>(),
            Some(ModelError::ContextTooLong { .. })
        ),
        "{error:?}"
    );
    assert_eq!(server.received().len(), 1);
    err
}

/// A reply that stops at its token cap: not an error but a reply marked cut off,
/// holding what was said before the cap (maybe nothing).
pub async fn cut_off<W: WireFormat>(
    p: &Provider<W>,
    stream: Vec<String>,
    expected: &[Item],
) -> Reply {
    let server = WireServer::start(vec![Answer::Sse(stream)]).await;
    let reply = p.ask(&server, &super::user("go")).await.unwrap();
    assert!(reply.cut_off, "{reply:?}");
    assert_eq!(reply.items, expected);
    reply
}

/// A whole reply is not cut off.
pub async fn not_cut_off<W: WireFormat>(p: &Provider<W>, stream: Vec<String>) {
    let server = WireServer::start(vec![Answer::Sse(stream)]).await;
    assert!(!p.ask(&server, &super::user("go")).await.unwrap().cut_off);
}

/// Arguments that are not valid JSON reach the loop exactly as sent.
pub async fn arguments_pass_through<W: WireFormat>(
    p: &Provider<W>,
    stream: Vec<String>,
    broken: &str,
) {
    let server = WireServer::start(vec![Answer::Sse(stream)]).await;
    let reply = p.ask(&server, &super::user("go")).await.unwrap();
    assert_eq!(reply.tool_calls().next().unwrap().2, broken);
}

/// A stream that goes silent after `hang` is abandoned promptly when cancelled.
pub async fn cancel_mid_stream<W: WireFormat>(p: &Provider<W>, hang: Vec<String>) {
    let server = WireServer::start(vec![Answer::SseThenHang(hang)]).await;
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        c.cancel();
    });
    let tools = super::tools();
    let items = super::user("hi");
    let mut m = p.model(&server);
    let (r, took) = super::timed(m.respond(super::request(&items, &tools), &cancel)).await;
    let err = r.unwrap_err();
    assert_eq!(err.to_string(), "cancelled");
    assert_eq!(
        err.downcast_ref::<ModelError>(),
        Some(&ModelError::Cancelled)
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}
