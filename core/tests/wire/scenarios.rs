//! What every provider must do the same way, run against any of them: the provider is
//! named by its wire format and where the test server stands in for it, and each
//! scenario takes that provider's own answers and expectations.

use std::marker::PhantomData;
use std::time::Duration;

use sandalyst::model::config::{ProviderConfig, ProviderKind};
use sandalyst::model::http::{HttpModel, WireFormat};
use sandalyst::model::{Item, Model, Reply, Usage};
use tokio_util::sync::CancellationToken;

use super::{Answer, Received, WireServer};

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
}

/// A 400 with `body` saying the conversation is too long: said plainly, not retried.
/// Returns the error for provider-specific checks.
pub async fn context_too_long<W: WireFormat>(p: &Provider<W>, body: &str) -> String {
    let server = WireServer::start(vec![Answer::status(400, body)]).await;
    let err = p.fails(&server, &super::user("hi")).await;
    assert!(
        err.contains("the conversation is longer than the model's context window"),
        "{err}"
    );
    assert_eq!(server.received().len(), 1);
    err
}

/// A reply that stops at its token cap with nothing useful in it: the error says so.
/// Returns the error for provider-specific checks.
pub async fn cut_off<W: WireFormat>(p: &Provider<W>, stream: Vec<String>) -> String {
    let server = WireServer::start(vec![Answer::Sse(stream)]).await;
    let err = p.fails(&server, &super::user("go")).await;
    assert!(err.contains("stopped the reply early"), "{err}");
    err
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
    assert_eq!(r.unwrap_err().to_string(), "cancelled");
    assert!(took < Duration::from_secs(10), "{took:?}");
}
