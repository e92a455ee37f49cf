//! An HTTP/1.1 server on 127.0.0.1 for provider tests: it records every request and
//! answers from a script, written by hand so a test can stream SSE chunk by chunk,
//! cut the connection in the middle or go silent. The provider under test is the real
//! one, talking HTTP to it.
#![allow(dead_code)]

pub mod chat;
pub mod endless;
pub mod messages;
pub mod reference;
pub mod responses;
pub mod scenarios;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sandalyst::agent::ToolSet;
use sandalyst::model::config::{ProviderConfig, ProviderKind};
use sandalyst::model::http::{HttpSettings, RetryPolicy};
use sandalyst::model::secret::{Credentials, KeySource};
use sandalyst::model::{CallForm, Delta, ImagePart, Item, Request, ToolSpec};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Answer {
    /// `text/event-stream`, chunked; each string is written and flushed on its own.
    Sse(Vec<String>),
    /// These chunks, then the connection is cut without the final empty chunk.
    SseThenDrop(Vec<String>),
    /// These chunks, then silence with the connection held open.
    SseThenHang(Vec<String>),
    /// `200`, chunked under this content type; each string written and flushed on its
    /// own (a login page that some proxies label `text/plain`, sent in pieces).
    Chunked {
        content_type: String,
        chunks: Vec<String>,
    },
    /// Any status with headers and a body.
    Status {
        code: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// `200 application/json`, not streamed.
    Json(Value),
    /// A provider that streams without end: `head`, then `piece` again and again
    /// (batched, without pacing) until the client stops reading or `limit` bytes were
    /// written, then `tail` and the end of the stream.
    Endless {
        head: Vec<String>,
        piece: String,
        limit: usize,
        tail: Vec<String>,
    },
}

impl Answer {
    pub fn status(code: u16, body: &str) -> Answer {
        Answer::Status {
            code,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
        }
    }

    pub fn status_with(code: u16, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut h: Vec<(String, String)> = vec![("content-type".into(), "application/json".into())];
        h.extend(headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        Answer::Status {
            code,
            headers: h,
            body: body.into(),
        }
    }
}

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Lower-cased names.
    pub headers: HashMap<String, String>,
    pub body: Value,
    /// When its head was read: what a test orders against other events.
    pub at: std::time::Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

pub struct WireServer {
    pub base: String,
    received: Arc<Mutex<Vec<Received>>>,
    /// Bytes of `Answer::Endless` pieces written so far.
    sent: Arc<std::sync::atomic::AtomicUsize>,
}

impl WireServer {
    pub async fn start(script: Vec<Answer>) -> WireServer {
        Self::paced(script, Duration::from_millis(1)).await
    }

    /// A server that waits `pace` between SSE chunks (`start`: 1 ms, so a client sees
    /// them apart); the benchmark's zero-latency model uses none.
    pub async fn paced(script: Vec<Answer>, pace: Duration) -> WireServer {
        Self::listen(script, pace, None).await
    }

    /// The same server behind HTTPS, with `tls`'s certificate: `base` is
    /// `https://127.0.0.1:PORT`. A client that refuses the certificate sends nothing.
    pub async fn start_tls(script: Vec<Answer>, tls: rustls::ServerConfig) -> WireServer {
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        Self::listen(script, Duration::from_millis(1), Some(acceptor)).await
    }

    async fn listen(
        script: Vec<Answer>,
        pace: Duration,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) -> WireServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let base = format!("{scheme}://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let rec = received.clone();
        let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = sent.clone();
        tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let (rec, script, counter) = (rec.clone(), script.clone(), counter.clone());
                let tls = tls.clone();
                tokio::spawn(async move {
                    let _ = match tls {
                        None => serve(sock, rec, script, pace, counter).await,
                        Some(acceptor) => {
                            let Ok(tls) = acceptor.accept(sock).await else {
                                return;
                            };
                            serve(tls, rec, script, pace, counter).await
                        }
                    };
                });
            }
        });
        WireServer {
            base,
            received,
            sent,
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Bytes of endless pieces written to clients so far.
    pub fn sent(&self) -> usize {
        self.sent.load(std::sync::atomic::Ordering::Relaxed)
    }
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    mut sock: S,
    rec: Arc<Mutex<Vec<Received>>>,
    script: Arc<Mutex<VecDeque<Answer>>>,
    pace: Duration,
    sent: Arc<std::sync::atomic::AtomicUsize>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let at = std::time::Instant::now();
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_string();
    let path = first.next().unwrap_or("").to_string();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
    rec.lock().unwrap().push(Received {
        method,
        path,
        headers,
        body,
        at,
    });
    let answer = script.lock().unwrap().pop_front();
    let answer = answer.unwrap_or_else(|| {
        Answer::status(
            599,
            r#"{"error":{"message":"the test script has no more answers"}}"#,
        )
    });
    let (chunks, end, content_type) = match answer {
        Answer::Status {
            code,
            headers,
            body,
        } => {
            let mut s = format!(
                "HTTP/1.1 {code} Scripted\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                s.push_str(&format!("{k}: {v}\r\n"));
            }
            s.push_str("\r\n");
            s.push_str(&body);
            return finish(sock, s.as_bytes()).await;
        }
        Answer::Json(v) => {
            let body = v.to_string();
            let s = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            return finish(sock, s.as_bytes()).await;
        }
        Answer::Endless {
            head,
            piece,
            limit,
            tail,
        } => {
            sock.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
            )
            .await?;
            for c in head {
                sock.write_all(format!("{:x}\r\n{c}\r\n", c.len()).as_bytes())
                    .await?;
            }
            let per_batch = (65536 / piece.len().max(1)).max(1);
            let mut written = 0;
            let mut n = 0u64;
            while written < limit {
                // `{n}` in a piece counts up, so the text never repeats itself (a
                // loop would be cut as a loop, before any cap).
                let batch: String = if piece.contains("{n}") {
                    (0..per_batch)
                        .map(|_| {
                            n += 1;
                            piece.replace("{n}", &(n - 1).to_string())
                        })
                        .collect()
                } else {
                    piece.repeat(per_batch)
                };
                let framed = format!("{:x}\r\n{batch}\r\n", batch.len());
                // A client that stopped reading closes the connection: the write fails.
                sock.write_all(framed.as_bytes()).await?;
                written += batch.len();
                sent.fetch_add(batch.len(), std::sync::atomic::Ordering::Relaxed);
            }
            for c in tail {
                sock.write_all(format!("{:x}\r\n{c}\r\n", c.len()).as_bytes())
                    .await?;
            }
            return finish(sock, b"0\r\n\r\n").await;
        }
        Answer::Sse(c) => (c, End::Close, "text/event-stream".to_string()),
        Answer::SseThenDrop(c) => (c, End::Drop, "text/event-stream".to_string()),
        Answer::SseThenHang(c) => (c, End::Hang, "text/event-stream".to_string()),
        Answer::Chunked {
            content_type,
            chunks,
        } => (chunks, End::Close, content_type),
    };
    sock.write_all(
        format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n").as_bytes(),
    )
    .await?;
    for c in chunks {
        sock.write_all(format!("{:x}\r\n{c}\r\n", c.len()).as_bytes())
            .await?;
        sock.flush().await?;
        // Separate network reads, so the client really sees the pieces apart.
        if !pace.is_zero() {
            tokio::time::sleep(pace).await;
        }
    }
    match end {
        End::Close => finish(sock, b"0\r\n\r\n").await,
        // Gone without the terminating chunk: a connection lost mid-stream.
        End::Drop => Ok(()),
        End::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(())
        }
    }
}

enum End {
    Close,
    Drop,
    Hang,
}

async fn finish<S: AsyncWrite + Unpin>(mut sock: S, bytes: &[u8]) -> std::io::Result<()> {
    sock.write_all(bytes).await?;
    sock.flush().await?;
    let _ = sock.shutdown().await;
    Ok(())
}

/// Retries that do not make tests slow.
pub fn fast_http() -> HttpSettings {
    HttpSettings {
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(20),
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
            max_retry_after: Duration::from_secs(5),
        },
        ..HttpSettings::default()
    }
}

pub const TEST_KEY: &str = "sk-test-0123456789abcdefSECRET";

/// A provider config pointing at `server`, with a key from `key_var`.
pub fn config(kind: ProviderKind, model: &str, base: &str, key_var: &str) -> ProviderConfig {
    let mut c = ProviderConfig::new(kind, model, base);
    c.credentials = Credentials {
        key: sandalyst::model::secret::ApiKey::new(TEST_KEY),
        source: KeySource::Env(key_var.into()),
    };
    c.key_var = key_var.into();
    c.http = fast_http();
    c
}

pub fn tools() -> Vec<ToolSpec> {
    ToolSet::default().specs(false)
}

pub const INSTRUCTIONS: &str = "You are a careful data analyst.";

pub fn request<'a>(items: &'a [Item], tools: &'a [ToolSpec]) -> Request<'a> {
    Request {
        instructions: INSTRUCTIONS,
        items,
        tools,
        on_delta: &sandalyst::model::no_deltas,
        answer: Default::default(),
        repeats: 0,
    }
}

pub fn user(text: &str) -> Vec<Item> {
    vec![Item::User { text: text.into() }]
}

pub const ROWS: &str = "The file has 1344 rows.";

/// The reply every provider's plain text stream in these tests decodes to.
pub fn rows() -> Vec<Item> {
    vec![Item::Assistant { text: ROWS.into() }]
}

/// A tool call as the loop receives it.
pub fn call(call_id: &str, name: &str, arguments: &str) -> Item {
    Item::ToolCall {
        call_id: call_id.into(),
        name: name.into(),
        arguments: arguments.into(),
        form: CallForm::Structured,
    }
}

/// A conversation after one turn with a call whose arguments were not JSON (an error
/// observation) and one that ran: what every provider must send back faithfully.
pub fn history() -> Vec<Item> {
    vec![
        Item::User {
            text: "Find anomalies in input/building_energy.csv".into(),
        },
        Item::Reasoning {
            summary: "Look at the file first.".into(),
            encrypted_content: Some("gAAAA-encrypted-blob".into()),
        },
        Item::Assistant {
            text: "I will inspect the file.".into(),
        },
        Item::ToolCall {
            call_id: "call_a".into(),
            name: "python".into(),
            arguments: r#"{"code": "print(1"#.into(),
            form: CallForm::Structured,
        },
        Item::ToolCall {
            call_id: "call_b".into(),
            name: "shell".into(),
            arguments: r#"{"command":"ls input"}"#.into(),
            form: CallForm::Structured,
        },
        Item::ToolOutput {
            call_id: "call_a".into(),
            output: "error: the arguments are not valid JSON".into(),
            is_error: true,
            images: vec![],
        },
        Item::ToolOutput {
            call_id: "call_b".into(),
            output: "status: ok (0.01 s)\n[stdout]\nbuilding_energy.csv".into(),
            is_error: false,
            images: vec![],
        },
    ]
}

/// A tiny PNG as a tool output's image (the bytes need not be a real picture here).
pub fn image() -> ImagePart {
    ImagePart {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
        label: "output/energy_anomalies.png".into(),
    }
}

/// The image as an OpenAI `data:` URL.
pub const IMAGE_URL: &str = "data:image/png;base64,iVBORw0KGgo=";

/// A call that saved a chart, and its result with the chart attached.
pub fn history_with_image() -> Vec<Item> {
    vec![
        Item::User {
            text: "Plot the anomalies".into(),
        },
        call(
            "call_p",
            "python",
            r#"{"code":"plt.savefig('output/energy_anomalies.png')"}"#,
        ),
        Item::ToolOutput {
            call_id: "call_p".into(),
            output: "status: ok (0.50 s)".into(),
            is_error: false,
            images: vec![image()],
        },
    ]
}

/// Deltas seen by an `on_delta`, shared with the test.
#[derive(Clone, Default)]
pub struct Seen(pub Arc<Mutex<Vec<Delta>>>);

impl Seen {
    pub fn record(&self) -> impl Fn(Delta) + Send + Sync + 'static {
        let seen = self.0.clone();
        move |d| seen.lock().unwrap().push(d)
    }

    pub fn get(&self) -> Vec<Delta> {
        self.0.lock().unwrap().clone()
    }
}

/// A text delta.
pub fn text(t: &str) -> Delta {
    Delta::Text { text: t.into() }
}

/// A tool-call delta.
pub fn args(call_id: &str, name: &str, arguments: &str) -> Delta {
    Delta::ToolCall {
        call_id: call_id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// `text` cut into pieces of at most `n` characters.
pub fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

/// Run `f` and say how long it took.
pub async fn timed<T>(f: impl std::future::Future<Output = T>) -> (T, Duration) {
    let t = std::time::Instant::now();
    let r = f.await;
    (r, t.elapsed())
}
