//! The HTTP side shared by the providers: one POST whose answer is an SSE stream (or,
//! from some servers, one JSON body), with timeouts, cancellation and retries.
//!
//! A provider supplies the request body and a [`Decoder`] that turns the events into a
//! [`Reply`]. A reply reaches the agent loop only once it is complete, so a stream that
//! breaks half-way has only been shown as live deltas: the whole request is simply sent
//! again, after a [`Delta::Retry`] that tells the live view to drop what the failed
//! attempt streamed. Retries cover 429, 5xx, dropped connections, idle timeouts and
//! streams that end early or carry garbage; they wait with exponential backoff and
//! jitter, or as long as the server asked (`retry-after-ms`, `Retry-After`).
//!
//! Every answer is read against the reply's caps ([`super::caps`]): content through the
//! decoder's [`Budget`], one SSE event, a whole body and an error body by size here; a
//! reply at its cap is returned cut (never retried) and the rest is not read.
//!
//! Failures come back as an [`anyhow::Error`] holding a [`ModelError`].

use std::marker::PhantomData;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use tokio_util::sync::CancellationToken;

use super::caps::{Budget, Capped, ReplyCaps};
use super::config::ProviderConfig;
use super::error::{self, Context, Fault, ModelError};
use super::network;
use super::pricing::Price;
use super::secret::{redact, Credentials};
use super::sse;
use super::{Delta, ImagePart, Model, Reply, Request};
use crate::conversation::CallMode;

/// How hard to try.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The wait before the first retry; doubled each time, with jitter.
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// The longest `Retry-After` honoured; a server asking for more ends the call.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based): base * 2^(retry-1), capped, then
    /// scaled by a random factor in [0.5, 1] so clients that failed together spread out.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << (retry.saturating_sub(1)).min(16));
        let capped = exp.min(self.max_delay);
        capped.mul_f64(0.5 + rand::random::<f64>() * 0.5)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct HttpSettings {
    pub connect_timeout: Duration,
    /// The longest silence allowed while waiting for the answer or between two chunks.
    /// Reasoning models can think for minutes before their first byte.
    pub idle_timeout: Duration,
    pub retry: RetryPolicy,
    /// How much of one reply is read (validated in [`Transport::new`]).
    pub caps: ReplyCaps,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            connect_timeout: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
            caps: ReplyCaps::default(),
        }
    }
}

/// How a provider reads the answer to one attempt. A fresh decoder is made per attempt.
pub trait Decoder {
    /// The caps this reply spends its content against: every piece of text, reasoning
    /// and arguments goes through it. The transport sets its caps before the first
    /// event and stops reading once it reports a cut.
    fn budget(&mut self) -> &mut Budget;

    /// One SSE event. Returns true when it was the last one (the reply is complete).
    fn event(&mut self, event: &sse::Event, ctx: &Context) -> Result<bool, Fault>;

    /// A whole JSON body, from servers that answer `stream: true` without streaming.
    fn json(&mut self, body: &str, _ctx: &Context) -> Result<(), Fault> {
        Err(Fault::transient(format!(
            "expected an event stream but got a JSON body: {}",
            body.chars().take(200).collect::<String>()
        )))
    }

    /// The body ended. `complete` says whether the last event was seen (or the JSON body
    /// was read); a decoder may accept a stream that lacks its final marker when what
    /// it got is whole.
    fn finish(&mut self, complete: bool) -> Result<Reply, Fault>;
}

/// A client for one provider endpoint.
pub struct Transport {
    client: reqwest::Client,
    pub settings: HttpSettings,
    /// Shown in messages, e.g. "OpenAI".
    pub provider: String,
    pub url: String,
    /// `url` fit for messages.
    endpoint: String,
    /// The proxy requests to `url` go through (from the environment or the system),
    /// for messages.
    proxy: Option<String>,
    pub model: String,
    pub credentials: Credentials,
    /// The variable that normally holds the key, for hints when none is set.
    pub key_var: String,
    /// Auth and version headers, marked sensitive so no Debug output shows them.
    headers: HeaderMap,
    /// The last body's size: the next one (the same history and more) is written into
    /// a buffer of that size at once, not one grown by doubling.
    last_body: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("provider", &self.provider)
            .field("url", &self.endpoint)
            .field("model", &self.model)
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

/// How the key goes on the wire.
pub enum Auth {
    /// `Authorization: Bearer <key>` (OpenAI and compatible servers).
    Bearer,
    /// A named header, e.g. `x-api-key` (Anthropic).
    Header(&'static str),
}

pub struct TransportSpec {
    pub provider: String,
    pub url: String,
    pub model: String,
    pub credentials: Credentials,
    pub key_var: String,
    pub auth: Auth,
    pub extra_headers: Vec<(&'static str, String)>,
    pub settings: HttpSettings,
}

impl Transport {
    pub fn new(spec: TransportSpec) -> anyhow::Result<Transport> {
        let TransportSpec {
            provider,
            url,
            model,
            credentials,
            key_var,
            auth,
            extra_headers,
            settings,
        } = spec;
        settings
            .caps
            .validate()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        reqwest::Url::parse(&url).map_err(|e| {
            anyhow::anyhow!(
                "the base URL for {provider} is not a URL ({e}): {}",
                display_url(&url)
            )
        })?;
        let mut headers = HeaderMap::new();
        if let Some(key) = &credentials.key {
            let (name, value) = match auth {
                Auth::Bearer => (
                    reqwest::header::AUTHORIZATION,
                    format!("Bearer {}", key.expose()),
                ),
                Auth::Header(h) => (HeaderName::from_static(h), key.expose().to_string()),
            };
            let mut value = HeaderValue::from_str(&value).map_err(|_| {
                anyhow::anyhow!(
                    "the API key in {} contains characters that cannot be sent in a header",
                    credentials.source.setting()
                )
            })?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        for (name, value) in extra_headers {
            headers.insert(
                HeaderName::from_static(name),
                HeaderValue::from_str(&value)?,
            );
        }
        let client = network::client(settings.connect_timeout)?;
        Ok(Transport {
            client,
            proxy: network::proxy_for(&url),
            settings,
            provider,
            endpoint: display_url(&url),
            url,
            model,
            credentials,
            key_var,
            headers,
            last_body: Default::default(),
        })
    }

    /// GET `url` with the endpoint's headers (its key) and read a JSON body of at most
    /// the body cap, within `timeout`: a server's list of models, say.
    pub async fn get_json(
        &self,
        url: &str,
        timeout: Duration,
    ) -> anyhow::Result<serde_json::Value> {
        let shown = display_url(url);
        let response = self
            .client
            .get(url)
            .headers(self.headers.clone())
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("{}", self.reach_error(&e, &shown)))?;
        let status = response.status();
        let cap = self.settings.caps.body_bytes;
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = futures_util::StreamExt::next(&mut stream).await {
            let chunk = chunk.map_err(|e| anyhow::anyhow!("reading {shown}: {e}"))?;
            if body.len() + chunk.len() > cap {
                anyhow::bail!("{shown} answered with more than {} bytes", cap);
            }
            body.extend_from_slice(&chunk);
        }
        let text = String::from_utf8_lossy(&body);
        if !status.is_success() {
            let hint = if status.as_u16() == 401 || status.as_u16() == 403 {
                format!(" (is {} set to a valid key?)", self.key_var)
            } else {
                String::new()
            };
            // Scrubbed as a model call's errors are: some servers echo the key back.
            anyhow::bail!(
                "{} at {shown} answered {status}{hint}: {}",
                self.provider,
                self.scrub(&text).chars().take(300).collect::<String>()
            );
        }
        serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{shown} did not answer JSON ({e})"))
    }

    fn context<'a>(&'a self, on_delta: &'a (dyn Fn(Delta) + Send + Sync)) -> Context<'a> {
        Context {
            provider: &self.provider,
            endpoint: &self.endpoint,
            model: &self.model,
            credentials: &self.credentials,
            key_var: &self.key_var,
            on_delta,
        }
    }

    /// POST `body` and decode the answer, retrying transient failures. The decoder
    /// reports the reply to `on_delta` as it streams; each retry is announced there too
    /// ([`Delta::Retry`], with the number of the attempt about to start).
    pub async fn call<D: Decoder>(
        &self,
        body: &serde_json::Value,
        mut decoder: impl FnMut() -> D,
        on_delta: &(dyn Fn(Delta) + Send + Sync),
        cancel: &CancellationToken,
    ) -> anyhow::Result<Reply> {
        use std::sync::atomic::Ordering::Relaxed;
        let body = encode(body, self.last_body.load(Relaxed))?;
        self.last_body.store(body.len(), Relaxed);
        let policy = &self.settings.retry;
        let mut attempt = 1;
        loop {
            let mut d = decoder();
            *d.budget() = Budget::new(self.settings.caps);
            let (message, after, rate_limited) = match self
                .attempt(&body, &mut d, on_delta, cancel)
                .await
            {
                Ok(reply) => return Ok(reply),
                Err(Fault::Cancelled) => return Err(ModelError::Cancelled.into()),
                Err(Fault::Fatal(e)) => {
                    let e = e.map_message(|m| self.scrub(m));
                    tracing::warn!(provider = %self.provider, url = %self.endpoint, attempt, "model request failed: {e}");
                    return Err(e.into());
                }
                Err(Fault::Transient {
                    message,
                    after,
                    rate_limited,
                }) => (self.scrub(&message), after, rate_limited),
            };
            // Scrubbed above: a key a server echoes back never reaches the log.
            tracing::warn!(provider = %self.provider, url = %self.endpoint, attempt, rate_limited, "model request failed: {message}");
            let gave_up = |message: String, retry_after: Option<Duration>| -> anyhow::Error {
                if rate_limited {
                    ModelError::RateLimited {
                        message,
                        retry_after_ms: retry_after.map(|d| d.as_millis() as u64),
                    }
                    .into()
                } else {
                    ModelError::Unavailable { message }.into()
                }
            };
            if attempt >= policy.max_attempts.max(1) {
                return Err(gave_up(
                    format!("{message} (gave up after {attempt} attempts)"),
                    after,
                ));
            }
            let wait = match after {
                Some(a) if a > policy.max_retry_after => {
                    return Err(gave_up(
                        format!(
                            "{message}; the server asks to wait {} s before trying again, longer than the {} s Sandalyst waits. Try again later",
                            a.as_secs(),
                            policy.max_retry_after.as_secs()
                        ),
                        Some(a),
                    ))
                }
                Some(a) => a,
                None => policy.backoff(attempt),
            };
            attempt += 1;
            on_delta(Delta::Retry {
                attempt,
                wait_ms: wait.as_millis() as u64,
                reason: message,
            });
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = cancel.cancelled() => return Err(ModelError::Cancelled.into()),
            }
        }
    }

    fn scrub(&self, message: &str) -> String {
        redact(message, self.credentials.key.as_ref())
    }

    async fn attempt<D: Decoder>(
        &self,
        body: &bytes::Bytes,
        decoder: &mut D,
        on_delta: &(dyn Fn(Delta) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<Reply, Fault> {
        let ctx = self.context(on_delta);
        let idle = self.settings.idle_timeout;
        let request = self
            .client
            .post(&self.url)
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(
                reqwest::header::ACCEPT,
                "text/event-stream, application/json",
            )
            // Shared, not copied: a retry sends the same bytes.
            .body(body.clone())
            .send();
        let response = tokio::select! {
            r = tokio::time::timeout(idle, request) => match r {
                Err(_) => return Err(Fault::transient(format!(
                    "{} at {} did not answer within {} s", self.provider, self.endpoint, idle.as_secs()))),
                Ok(Err(e)) => return Err(self.transport_fault(&e, "sending the request")),
                Ok(Ok(r)) => r,
            },
            _ = cancel.cancelled() => return Err(Fault::Cancelled),
        };
        let status = response.status();
        let headers = response.headers().clone();
        let mut stream = response.bytes_stream();
        // Read chunk by chunk so cancel and the idle timeout apply to every wait.
        let mut next = async || -> Result<Option<bytes::Bytes>, Fault> {
            tokio::select! {
                r = tokio::time::timeout(idle, stream.next()) => match r {
                    Err(_) => Err(Fault::transient(format!(
                        "{} went silent for {} s in the middle of the reply", self.provider, idle.as_secs()))),
                    Ok(None) => Ok(None),
                    Ok(Some(Err(e))) => Err(self.transport_fault(&e, "reading the reply")),
                    Ok(Some(Ok(b))) => Ok(Some(b)),
                },
                _ = cancel.cancelled() => Err(Fault::Cancelled),
            }
        };

        let caps = self.settings.caps;
        if !status.is_success() {
            let mut text = Vec::new();
            // An error body is small; a cut-off one still says enough.
            while let Ok(Some(chunk)) = next().await {
                let room = caps.error_body_bytes - text.len();
                text.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if text.len() >= caps.error_body_bytes {
                    break;
                }
            }
            if cancel.is_cancelled() {
                return Err(Fault::Cancelled);
            }
            return Err(error::from_status(
                status,
                &headers,
                &String::from_utf8_lossy(&text),
                &ctx,
            ));
        }

        let content_type = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        // A proxy, a login page or a base URL that points at a website.
        let web_page = || {
            Err(Fault::bad_request(format!(
                "{} at {} answered with a web page, not an event stream; check the base URL",
                self.provider, self.endpoint
            )))
        };
        if content_type.starts_with("text/html") {
            return web_page();
        }
        if content_type.starts_with("application/json") {
            let mut text = Vec::new();
            while let Some(chunk) = next().await? {
                // Half a JSON body cannot be read: past the cap the reply is refused.
                if text.len() + chunk.len() > caps.body_bytes {
                    return Err(Fault::Fatal(ModelError::ReplyTooLarge {
                        message: format!(
                            "{} at {} sent a reply larger than {}, the most Sandalyst reads of one reply",
                            self.provider,
                            self.endpoint,
                            super::caps::human(caps.body_bytes)
                        ),
                    }));
                }
                text.extend_from_slice(&chunk);
            }
            decoder.json(&String::from_utf8_lossy(&text), &ctx)?;
            return cut_or_whole(decoder);
        }

        let mut parser = sse::Parser::with_limit(caps.event_bytes);
        // Some portals label their page text/plain: its first bytes tell, however the
        // server splits them (a chunk of blank lines first, a page in the next).
        let mut head = Some(Vec::new());
        loop {
            let chunk = next().await?;
            if let Some(seen) = head.as_mut() {
                if let Some(c) = &chunk {
                    let room = SNIFF_BYTES.saturating_sub(seen.len());
                    seen.extend_from_slice(&c[..c.len().min(room)]);
                }
                if chunk.is_none() || sniffed_enough(seen) {
                    if looks_like_html(seen) {
                        return web_page();
                    }
                    head = None;
                }
            }
            let Some(chunk) = chunk else {
                let complete = match parser.finish() {
                    Some(ev) => decoder.event(&ev, &ctx)?,
                    None => false,
                };
                if decoder.budget().cut().is_some() {
                    return cut_or_whole(decoder);
                }
                return decoder.finish(complete);
            };
            for ev in parser.push(&chunk) {
                if decoder.event(&ev, &ctx)? || decoder.budget().cut().is_some() {
                    // The reply is whole, or at its cap: the rest is not read (returning
                    // drops the stream, which closes the connection).
                    return cut_or_whole(decoder);
                }
            }
            if parser.overflowed() {
                decoder.budget().cut_by(Capped::Event, caps.event_bytes);
                return cut_or_whole(decoder);
            }
        }
    }

    fn transport_fault(&self, e: &reqwest::Error, doing: &str) -> Fault {
        // The endpoint is named by us, cleaned of credentials and query; reqwest's own
        // text would repeat the raw URL.
        let detail = error_chain(e);
        let what = if network::is_untrusted_certificate(e) {
            // Trying again cannot help: the same certificate comes back.
            return Fault::Fatal(ModelError::Unavailable {
                message: self.reach_error(e, &self.endpoint),
            });
        } else if e.is_connect() {
            self.reach_error(e, &self.endpoint)
        } else if e.is_timeout() {
            format!(
                "{} at {} timed out while {doing}",
                self.provider, self.endpoint
            )
        } else {
            format!(
                "the connection to {} at {} dropped while {doing} ({detail})",
                self.provider, self.endpoint
            )
        };
        Fault::transient(what)
    }
}

impl Transport {
    /// Why a request to `shown` (this endpoint, or a URL beside it) got no answer,
    /// with what to check: the certificate's trust, the proxy, or the server and URL.
    fn reach_error(&self, e: &reqwest::Error, shown: &str) -> String {
        let detail = error_chain(e);
        let provider = &self.provider;
        if network::is_untrusted_certificate(e) {
            return format!(
                "the TLS certificate of {provider} at {shown} is not trusted ({detail}); {}",
                network::TRUST_HINT
            );
        }
        match &self.proxy {
            Some(proxy) if e.is_connect() => format!(
                "cannot reach {provider} at {shown} through the proxy {proxy} ({detail}); \
                 check the proxy set in {}, or list the host in NO_PROXY to connect directly",
                network::proxy_variables(&self.url)
            ),
            _ if e.is_connect() => format!(
                "cannot connect to {provider} at {shown} ({detail}); is the server running and the base URL right?"
            ),
            _ => format!("{provider} at {shown} did not answer ({detail})"),
        }
    }
}

/// The decoded reply, marked cut when the budget says so; a cut reply is what came up
/// to the cap, so it counts as complete.
fn cut_or_whole<D: Decoder>(decoder: &mut D) -> Result<Reply, Fault> {
    let cut = decoder.budget().cut();
    let mut reply = decoder.finish(true)?;
    reply.cut = cut;
    Ok(reply)
}

/// A reqwest error and its causes, without the URL (we name the endpoint ourselves).
fn error_chain(e: &reqwest::Error) -> String {
    use std::error::Error;
    let mut parts = Vec::new();
    let mut source: Option<&dyn Error> = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.contains(&text) {
            parts.push(text);
        }
        source = s.source();
    }
    if parts.is_empty() {
        // reqwest's own text includes the URL; name the kind instead.
        parts.push(if e.is_body() || e.is_decode() {
            "the body was cut off".to_string()
        } else {
            "request failed".to_string()
        });
    }
    parts.join(": ")
}

/// What sets one HTTP provider apart: where it posts, how it authenticates, the body it
/// sends and how it reads the answer. [`HttpModel`] does the rest.
pub trait WireFormat: 'static {
    /// The provider's type name, for Debug output.
    const NAME: &'static str;
    /// Reads the answer to one attempt; a fresh one is made per attempt.
    type Decoder: Decoder + Default + Send;
    /// What one model remembers between turns about how it is asked (Chat
    /// Completions: how its tool calls travel).
    type State: Send;
    /// Where and how to post, from the config.
    fn endpoint(config: &ProviderConfig) -> Endpoint;
    fn state(config: &ProviderConfig) -> Self::State;
    /// The JSON body for one turn. Images in tool outputs go only where
    /// [`ProviderConfig::takes_images`]; for other models they become a short note.
    fn body(config: &ProviderConfig, state: &Self::State, request: &Request) -> serde_json::Value;
    /// Where the reply's deltas go as it streams: `on_delta`, or a reading of them.
    fn live<'a>(
        _state: &mut Self::State,
        on_delta: &'a (dyn Fn(Delta) + Send + Sync),
    ) -> Box<dyn Fn(Delta) + Send + Sync + 'a> {
        Box::new(on_delta)
    }
    /// A last look at a decoded reply, with the request it answers (Chat Completions
    /// reads steps and calls written as text here). `Err` gives the reply back and
    /// asks the same request again: the state changed how it is asked.
    fn finish(
        _config: &ProviderConfig,
        _state: &mut Self::State,
        _request: &Request,
        reply: Reply,
    ) -> Result<Reply, Reply> {
        Ok(reply)
    }
    fn call_mode(_state: &Self::State) -> Option<(CallMode, String)> {
        None
    }
    fn resume_call_mode(_state: &mut Self::State, _mode: CallMode, _why: &str) {}
    fn learned_call_mode(_state: &Self::State) -> Option<CallMode> {
        None
    }
}

pub struct Endpoint {
    /// Shown in messages, e.g. "OpenAI".
    pub provider: &'static str,
    pub url: String,
    pub auth: Auth,
    pub extra_headers: Vec<(&'static str, String)>,
}

/// A [`Model`] speaking the wire format `W` over a [`Transport`].
pub struct HttpModel<W: WireFormat> {
    config: ProviderConfig,
    transport: Transport,
    state: W::State,
    wire: PhantomData<fn() -> W>,
}

impl<W: WireFormat> HttpModel<W> {
    /// The transport to this provider (for requests beside the model's turns).
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    pub fn new(config: ProviderConfig) -> anyhow::Result<HttpModel<W>> {
        let Endpoint {
            provider,
            url,
            auth,
            extra_headers,
        } = W::endpoint(&config);
        let transport = Transport::new(TransportSpec {
            provider: provider.into(),
            url,
            model: config.model.clone(),
            credentials: config.credentials.clone(),
            key_var: config.key_var.clone(),
            auth,
            extra_headers,
            settings: config.http.clone(),
        })?;
        Ok(HttpModel {
            state: W::state(&config),
            config,
            transport,
            wire: PhantomData,
        })
    }

    /// The JSON body for one turn.
    pub fn body(&self, request: &Request) -> serde_json::Value {
        W::body(&self.config, &self.state, request)
    }
}

impl<W: WireFormat> std::fmt::Debug for HttpModel<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(W::NAME)
            .field("transport", &self.transport)
            .finish()
    }
}

#[async_trait]
impl<W: WireFormat> Model for HttpModel<W> {
    fn describe(&self) -> String {
        self.config.describe()
    }

    fn price(&self) -> Option<Price> {
        self.config.price
    }

    fn vision(&self) -> bool {
        self.config.takes_images()
    }

    fn context_window(&self) -> Option<u64> {
        Some(self.config.context_tokens())
    }

    fn call_mode(&self) -> Option<(CallMode, String)> {
        W::call_mode(&self.state)
    }

    fn resume_call_mode(&mut self, mode: CallMode, why: &str) {
        W::resume_call_mode(&mut self.state, mode, why)
    }

    fn learned_call_mode(&self) -> Option<CallMode> {
        W::learned_call_mode(&self.state)
    }

    fn wants_input_profile(&self) -> bool {
        true
    }

    async fn respond(
        &mut self,
        request: Request<'_>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Reply> {
        // Asked again at most once: the wire format changed how it asks.
        for again in [false, true] {
            let body = self.body(&request);
            let live = W::live(&mut self.state, request.on_delta);
            let reply = self
                .transport
                .call(&body, W::Decoder::default, &*live, cancel)
                .await?;
            drop(live);
            match W::finish(&self.config, &mut self.state, &request, reply) {
                Ok(reply) => return Ok(reply),
                Err(reply) if again => return Ok(reply),
                Err(_) => (request.on_delta)(Delta::Retry {
                    attempt: 2,
                    wait_ms: 0,
                    reason:
                        "the model wrote its call as text; it is asked again for a structured step"
                            .into(),
                }),
            }
        }
        unreachable!("the loop returns")
    }
}

/// What of a tool output's images goes to the model: all of them for a model that
/// takes images; for one that does not, none, and the output text says so for each
/// (`[image output/x.png not shown: this model does not take images]`).
/// Whether a body starts as an HTML page (an event stream starts with a field name
/// or a comment, never with `<`).
fn looks_like_html(body: &[u8]) -> bool {
    let start: Vec<u8> = after_blanks(body)
        .take(HTML_MARK_BYTES)
        .map(u8::to_ascii_lowercase)
        .collect();
    start.starts_with(b"<!doctype html")
        || start.starts_with(b"<html")
        || start.starts_with(b"<head")
}

/// The longest mark [`looks_like_html`] reads (`<!doctype html`).
const HTML_MARK_BYTES: usize = 14;
/// The most of a reply's start kept to tell a web page (blank lines before it included).
const SNIFF_BYTES: usize = 1024;

/// Whether `head`, a reply's first bytes, says enough to tell a web page from a stream.
fn sniffed_enough(head: &[u8]) -> bool {
    head.len() >= SNIFF_BYTES || after_blanks(head).count() >= HTML_MARK_BYTES
}

/// The bytes after leading white space and a byte-order mark.
fn after_blanks(body: &[u8]) -> impl Iterator<Item = &u8> {
    body.iter()
        .skip_while(|b| b.is_ascii_whitespace() || **b == 0xef || **b == 0xbb || **b == 0xbf)
}

pub fn tool_images<'a>(
    output: &str,
    images: &'a [ImagePart],
    vision: bool,
) -> (String, &'a [ImagePart]) {
    if vision || images.is_empty() {
        return (output.to_string(), images);
    }
    let mut text = output.to_string();
    for image in images {
        if !text.is_empty() {
            text.push('\n');
        }
        let label = if image.label.is_empty() {
            "image"
        } else {
            image.label.as_str()
        };
        text.push_str(&format!(
            "[image {label} not shown: this model does not take images]"
        ));
    }
    (text, &[])
}

/// A request body as the bytes sent, written into a buffer of `size_hint` bytes (grown
/// if need be). Public for the benchmark of request building.
pub fn encode(body: &serde_json::Value, size_hint: usize) -> anyhow::Result<bytes::Bytes> {
    let mut buf = Vec::with_capacity(size_hint + (64 << 10));
    serde_json::to_writer(&mut buf, body)?;
    Ok(buf.into())
}

/// An image as a `data:` URL, the form the OpenAI formats take inline.
pub fn data_url(image: &ImagePart) -> String {
    format!("data:{};base64,{}", image.media_type, image.data)
}

/// A URL fit for messages and the run record: no user, password, query or fragment.
pub fn display_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string().trim_end_matches('/').to_string()
        }
        Err(_) => "(invalid URL)".to_string(),
    }
}

/// `base` + `path`, without doubling or dropping the slash between them.
pub fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_caps_and_jitters() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            ..RetryPolicy::default()
        };
        for _ in 0..50 {
            let d1 = p.backoff(1);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
            let d3 = p.backoff(3);
            assert!(d3 >= Duration::from_millis(200) && d3 <= Duration::from_millis(400));
            assert!(p.backoff(30) <= Duration::from_millis(1000));
        }
    }

    #[test]
    fn urls_are_shown_without_secrets() {
        assert_eq!(
            display_url("https://user:pw@example.com/v1?key=abc#x"),
            "https://example.com/v1"
        );
        assert_eq!(
            join_url("http://localhost:11434/v1/", "/chat/completions"),
            "http://localhost:11434/v1/chat/completions"
        );
    }
}
