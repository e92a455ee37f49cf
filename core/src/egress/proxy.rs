//! The proxy itself: a TCP listener on the host that reads one request head per
//! connection, checks it (allowlist by name, then the resolver's addresses), and then
//! either tunnels (`CONNECT`: `200`, then bytes both ways untouched, so TLS passes
//! through end to end) or forwards one plain-HTTP request (origin-form, hop-by-hop
//! headers dropped, `Connection: close`, and the connection closed after the
//! response). Refusals are answered with a short plain-text HTTP error and reported
//! as an [`EgressEvent`], like every allowed connection and its end.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, Semaphore};
use tokio::task::{JoinHandle, JoinSet};

use super::event::{EgressEvent, EgressKind, Method, Refusal};
use super::head::{self, HeadError, Request};
use super::policy::Allowlist;
use super::resolve::Resolver;

/// Called for every event, from the connection's task: it should be quick (hand the
/// event to a channel).
pub type OnEvent = Arc<dyn Fn(EgressEvent) + Send + Sync>;

/// The bounds of the proxy; the defaults suit `pip install`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyLimits {
    /// The largest request head read (request line and headers).
    pub max_head: usize,
    /// How long the head may take to arrive.
    pub head_timeout: Duration,
    /// How long connecting to the target may take, over all its addresses.
    pub connect_timeout: Duration,
    /// A connection with no byte in either direction for this long is closed.
    pub idle_timeout: Duration,
    /// Connections open at once; one more is answered `503`.
    pub max_connections: usize,
}

impl Default for ProxyLimits {
    fn default() -> Self {
        ProxyLimits {
            max_head: 16 * 1024,
            head_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            max_connections: 64,
        }
    }
}

/// How long a refused connection is given to read its answer.
const LINGER: Duration = Duration::from_secs(2);

/// Where the proxy listens: a TCP address (port 0 picks one), or a unix socket path
/// (how a sandbox with no network interface reaches it: the socket is bind-mounted
/// into the container, see `sandbox::docker::egress`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    Tcp(SocketAddr),
    /// Created by the proxy (an old socket file at the path is replaced) and removed
    /// when it stops; the caller chooses its folder and who may open it.
    Unix(PathBuf),
}

impl From<SocketAddr> for Listen {
    fn from(addr: SocketAddr) -> Listen {
        Listen::Tcp(addr)
    }
}

/// Starts proxies; see [`Proxy::start`].
pub struct Proxy;

impl Proxy {
    /// Listens on `listen` with the default [`ProxyLimits`].
    pub async fn start(
        listen: impl Into<Listen>,
        allowlist: Allowlist,
        resolver: Resolver,
        on_event: OnEvent,
    ) -> anyhow::Result<ProxyHandle> {
        Proxy::start_with_limits(
            listen,
            allowlist,
            resolver,
            ProxyLimits::default(),
            on_event,
        )
        .await
    }

    pub async fn start_with_limits(
        listen: impl Into<Listen>,
        allowlist: Allowlist,
        resolver: Resolver,
        limits: ProxyLimits,
        on_event: OnEvent,
    ) -> anyhow::Result<ProxyHandle> {
        let (listener, addr, path) = match listen.into() {
            Listen::Tcp(at) => {
                let l = TcpListener::bind(at)
                    .await
                    .with_context(|| format!("the egress proxy could not listen on {at}"))?;
                let addr = l.local_addr()?;
                (Listener::Tcp(l), Some(addr), None)
            }
            #[cfg(unix)]
            Listen::Unix(path) => {
                let _ = std::fs::remove_file(&path);
                let l = tokio::net::UnixListener::bind(&path).with_context(|| {
                    format!("the egress proxy could not listen on {}", path.display())
                })?;
                (Listener::Unix(l), None, Some(path))
            }
            #[cfg(not(unix))]
            Listen::Unix(path) => anyhow::bail!(
                "the egress proxy cannot listen on {}: unix sockets need a unix host",
                path.display()
            ),
        };
        let (stop, stopped) = oneshot::channel();
        let ctx = Arc::new(Ctx {
            allowlist,
            resolver,
            limits,
            on_event,
        });
        let task = tokio::spawn(accept(listener, ctx, stopped));
        Ok(ProxyHandle {
            addr,
            path,
            stop: Some(stop),
            task,
        })
    }
}

/// A running proxy. Dropping it stops the listener and every connection (without
/// waiting); [`stop`](ProxyHandle::stop) does the same and waits until all are closed.
pub struct ProxyHandle {
    addr: Option<SocketAddr>,
    path: Option<PathBuf>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl ProxyHandle {
    /// Where a TCP proxy listens (the port chosen, when asked for port 0).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.addr
    }

    /// Where a unix-socket proxy listens.
    pub fn socket_path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Closes the listener and every connection through the proxy, and waits for it.
    /// Connections cut this way report no `closed` event.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        // The accept loop owns the connections' JoinSet, whose drop aborts them.
        self.task.abort();
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The listening socket, either kind.
enum Listener {
    Tcp(TcpListener),
    #[cfg(unix)]
    Unix(tokio::net::UnixListener),
}

/// One connection from the sandbox, whichever socket it came through.
trait Conn: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Conn for T {}
type Client = Box<dyn Conn>;

impl Listener {
    async fn accept(&self) -> std::io::Result<Client> {
        match self {
            Listener::Tcp(l) => {
                let (stream, _) = l.accept().await?;
                let _ = stream.set_nodelay(true);
                Ok(Box::new(stream))
            }
            #[cfg(unix)]
            Listener::Unix(l) => Ok(Box::new(l.accept().await?.0)),
        }
    }
}

struct Ctx {
    allowlist: Allowlist,
    resolver: Resolver,
    limits: ProxyLimits,
    on_event: OnEvent,
}

/// The target as asked, for events and answers.
struct Target {
    host: String,
    port: u16,
    method: Method,
}

impl Target {
    fn unknown(method: Method) -> Target {
        Target {
            host: String::new(),
            port: 0,
            method,
        }
    }

    fn of(req: &Request) -> Target {
        Target {
            host: req.host.to_string(),
            port: req.port,
            method: req.method,
        }
    }
}

impl Ctx {
    fn emit(&self, t: &Target, kind: EgressKind) {
        (self.on_event)(EgressEvent {
            host: t.host.clone(),
            port: t.port,
            method: t.method,
            kind,
        });
    }
}

async fn accept(listener: Listener, ctx: Arc<Ctx>, mut stopped: oneshot::Receiver<()>) {
    let open = Arc::new(Semaphore::new(ctx.limits.max_connections));
    // Answering the ones over the cap is bounded too; past that they are just closed.
    let refusing = Arc::new(Semaphore::new(ctx.limits.max_connections));
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok(stream) => {
                    let ctx = ctx.clone();
                    if let Ok(permit) = open.clone().try_acquire_owned() {
                        conns.spawn(async move {
                            serve(stream, &ctx).await;
                            drop(permit);
                        });
                    } else if let Ok(permit) = refusing.clone().try_acquire_owned() {
                        conns.spawn(async move {
                            over_cap(stream, &ctx).await;
                            drop(permit);
                        });
                    }
                }
                // Out of descriptors, say: wait a little rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
        }
    }
    drop(listener);
    conns.shutdown().await;
}

/// One connection from the sandbox, start to end.
async fn serve(mut client: Client, ctx: &Ctx) {
    let limits = &ctx.limits;
    let (head, rest) =
        match head::read_head(&mut client, limits.max_head, limits.head_timeout).await {
            Ok(read) => read,
            Err(HeadError::Nothing) => return,
            Err(HeadError::TooLarge) => {
                let reason = Refusal::HeadTooLarge {
                    limit: limits.max_head,
                };
                return refuse(client, ctx, &Target::unknown(Method::Unknown), reason).await;
            }
            Err(HeadError::Incomplete) => {
                let reason = Refusal::BadRequest {
                    message: "the request head did not end (closed or timed out)".into(),
                };
                return refuse(client, ctx, &Target::unknown(Method::Unknown), reason).await;
            }
        };
    let req = match head::parse(&head) {
        Ok(req) => req,
        Err(bad) => {
            let reason = Refusal::BadRequest {
                message: bad.message,
            };
            return refuse(client, ctx, &Target::unknown(bad.method), reason).await;
        }
    };
    let target = Target::of(&req);
    if !ctx.allowlist.allows(&req.host, req.port) {
        return refuse(client, ctx, &target, Refusal::NotInAllowlist).await;
    }
    let addrs = match ctx.resolver.resolve(&req.host, req.port).await {
        Ok(addrs) => addrs,
        Err(reason) => return refuse(client, ctx, &target, reason).await,
    };
    let (mut upstream, addr) = match connect(&addrs, limits.connect_timeout).await {
        Ok(connected) => connected,
        Err(reason) => return refuse(client, ctx, &target, reason).await,
    };
    ctx.emit(&target, EgressKind::Allowed { addr });
    let (bytes_up, bytes_down) = match req.method {
        Method::Connect => {
            let established = b"HTTP/1.1 200 Connection established\r\n\r\n";
            match client.write_all(established).await {
                Ok(()) => {
                    pass(
                        &mut client,
                        &mut upstream,
                        &rest,
                        limits.idle_timeout,
                        false,
                    )
                    .await
                }
                Err(_) => (0, 0),
            }
        }
        _ => {
            let mut first = head::forward_head(&req);
            first.extend_from_slice(&rest);
            pass(
                &mut client,
                &mut upstream,
                &first,
                limits.idle_timeout,
                true,
            )
            .await
        }
    };
    ctx.emit(
        &target,
        EgressKind::Closed {
            bytes_up,
            bytes_down,
        },
    );
}

/// A connection over the cap: its head is read (briefly) so the event can say what
/// it asked for, then it gets a `503`.
async fn over_cap(mut client: Client, ctx: &Ctx) {
    let target = match head::read_head(&mut client, ctx.limits.max_head, LINGER).await {
        Ok((head, _)) => match head::parse(&head) {
            Ok(req) => Target::of(&req),
            Err(bad) => Target::unknown(bad.method),
        },
        Err(_) => Target::unknown(Method::Unknown),
    };
    let reason = Refusal::TooManyConnections {
        limit: ctx.limits.max_connections,
    };
    refuse(client, ctx, &target, reason).await;
}

/// Reports the refusal and answers it: a status and one plain-text line, then the
/// connection is closed once the code has had a moment to read it.
async fn refuse(mut client: Client, ctx: &Ctx, target: &Target, reason: Refusal) {
    let what = match target.host.as_str() {
        "" => "the request".to_string(),
        h if h.contains(':') => format!("[{h}]:{}", target.port),
        h => format!("{h}:{}", target.port),
    };
    let body = format!("Sandalyst's network proxy refused {what}: {reason}\n");
    let answer = format!(
        "HTTP/1.1 {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        reason.status(),
        body.len()
    );
    ctx.emit(target, EgressKind::Refused { reason });
    let _ = tokio::time::timeout(LINGER, async {
        client.write_all(answer.as_bytes()).await?;
        client.shutdown().await?;
        // Read what is left of the request, so closing does not reset the
        // connection before the answer is read.
        let mut sink = [0u8; 4096];
        let mut left: usize = 64 * 1024;
        while left > 0 {
            match client.read(&mut sink).await? {
                0 => break,
                n => left = left.saturating_sub(n),
            }
        }
        std::io::Result::Ok(())
    })
    .await;
}

/// The first of `addrs` that accepts, within `time` for all of them.
async fn connect(addrs: &[SocketAddr], time: Duration) -> Result<(TcpStream, SocketAddr), Refusal> {
    let deadline = tokio::time::Instant::now() + time;
    let mut failed = Refusal::ResolveFailed {
        message: "no address".into(),
    };
    for &addr in addrs {
        // The unit tests run only against listeners of their own on this machine; a
        // test that would reach anything else is a bug in the proxy or the test.
        if cfg!(test) {
            assert!(
                addr.ip().is_loopback(),
                "a test made the proxy connect to {addr}"
            );
        }
        match tokio::time::timeout_at(deadline, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                return Ok((stream, addr));
            }
            Ok(Err(e)) => {
                failed = Refusal::Unreachable {
                    addr,
                    message: e.to_string(),
                }
            }
            Err(_) => return Err(Refusal::ConnectTimeout { addr }),
        }
    }
    Err(failed)
}

/// Bytes both ways, untouched, after sending `first` to the target: until both sides
/// have closed (a tunnel; each side's end is passed on as a half-close), until the
/// target has closed (`until_target_closes`, one plain-HTTP response), or until
/// `idle` passes with no byte either way. Returns the bytes sent to the target and
/// received from it.
async fn pass(
    client: &mut Client,
    target: &mut TcpStream,
    first: &[u8],
    idle: Duration,
    until_target_closes: bool,
) -> (u64, u64) {
    let (mut up, mut down) = (0u64, 0u64);
    let (mut client_r, mut client_w) = tokio::io::split(client);
    let (mut target_r, mut target_w) = target.split();
    if !first.is_empty() {
        match tokio::time::timeout(idle, target_w.write_all(first)).await {
            Ok(Ok(())) => up += first.len() as u64,
            _ => return (up, down),
        }
    }
    let mut up_buf = vec![0u8; 16 * 1024];
    let mut down_buf = vec![0u8; 16 * 1024];
    let (mut client_open, mut target_open) = (true, true);
    while client_open || target_open {
        let step = tokio::time::timeout(idle, async {
            tokio::select! {
                r = client_r.read(&mut up_buf), if client_open => (true, r),
                r = target_r.read(&mut down_buf), if target_open => (false, r),
            }
        })
        .await;
        let Ok((from_client, read)) = step else {
            break; // idle
        };
        match (from_client, read) {
            (_, Err(_)) => break,
            (true, Ok(0)) => {
                client_open = false;
                let _ = target_w.shutdown().await;
            }
            (false, Ok(0)) => {
                target_open = false;
                let _ = client_w.shutdown().await;
                if until_target_closes {
                    break;
                }
            }
            (true, Ok(n)) => {
                match tokio::time::timeout(idle, target_w.write_all(&up_buf[..n])).await {
                    Ok(Ok(())) => up += n as u64,
                    _ => break,
                }
            }
            (false, Ok(n)) => {
                match tokio::time::timeout(idle, client_w.write_all(&down_buf[..n])).await {
                    Ok(Ok(())) => down += n as u64,
                    _ => break,
                }
            }
        }
    }
    (up, down)
}
