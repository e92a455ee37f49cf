//! Model calls on the networks companies have: a Chat Completions server behind HTTPS
//! whose certificate a private CA of the test's own signs, and a `CONNECT` proxy of the
//! test's own on 127.0.0.1. The trust store and the proxy variables are a process's
//! environment, so each call runs in a child process of this test binary
//! ([`one_chat_turn_in_a_child_process`]) with `SSL_CERT_FILE` naming the only CA it
//! trusts; the servers stay in the test's process and record what reached them.

use crate::common::wire::{self, chat, Answer, WireServer, ROWS};

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sandalyst::model::chat_completions::Chat;
use sandalyst::model::config::ProviderKind;
use sandalyst::model::error::ModelError;
use sandalyst::model::http::HttpModel;
use sandalyst::model::{Item, Model};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// Where the child's line saying how the call went starts.
const OUTCOME: &str = "outcome: ";

/// Names the server for the child's call.
const CHILD_BASE: &str = "SANDALYST_TEST_CHAT_BASE";

/// Every variable that could send the child elsewhere or trust something else; a test
/// sets the ones it means.
const NETWORK_VARIABLES: [&str; 10] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// A CA named `name`, and a server certificate for 127.0.0.1 that it signs.
struct Pki {
    ca_pem: String,
    server: rustls::ServerConfig,
}

fn pki(name: &str) -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(rcgen::DnType::CommonName, name);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &ca_cert, &ca_key)
        .unwrap();
    let server = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![CertificateDer::from_pem_slice(leaf.pem().as_bytes()).unwrap()],
        PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap(),
    )
    .unwrap();
    Pki {
        ca_pem: ca_cert.pem(),
        server,
    }
}

/// How the child's call went: `answered: TEXT` or `failed (KIND): MESSAGE`.
async fn call_in_child(base: &str, env: &[(&str, &Path)], strings: &[(&str, &str)]) -> String {
    let mut cmd = tokio::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "model_network::one_chat_turn_in_a_child_process",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    for v in NETWORK_VARIABLES {
        cmd.env_remove(v);
    }
    cmd.env(CHILD_BASE, base);
    cmd.envs(env.iter().map(|(k, v)| (k, v.as_os_str())));
    cmd.envs(strings.iter().copied());
    let out = cmd.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the child did not run:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The harness prints the test's name on the same line.
    let outcome = stdout
        .lines()
        .find_map(|l| {
            l.find(OUTCOME)
                .map(|at| l[at + OUTCOME.len()..].to_string())
        })
        .unwrap_or_else(|| panic!("the child printed no outcome:\n{stdout}"));
    println!("child: {outcome}");
    outcome
}

/// The child's side: one Chat Completions turn against the server named by
/// [`CHILD_BASE`], with this process's trust store and proxy variables.
#[tokio::test]
#[ignore = "run by this file's tests in a process of its own, with the environment they set"]
async fn one_chat_turn_in_a_child_process() {
    let base = std::env::var(CHILD_BASE).expect("run by the network tests only");
    let config = wire::config(
        ProviderKind::OpenAiCompatible,
        chat::MODEL,
        &format!("{base}/v1"),
        "SANDALYST_COMPATIBLE_API_KEY",
    );
    let mut model = HttpModel::<Chat>::new(config).unwrap();
    let (items, tools) = (wire::user("How many rows?"), wire::tools());
    let reply = model
        .respond(wire::request(&items, &tools), &CancellationToken::new())
        .await;
    match reply {
        Ok(reply) => {
            let text: Vec<&str> = reply
                .items
                .iter()
                .filter_map(|i| match i {
                    Item::Assistant { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            println!("{OUTCOME}answered: {}", text.join(" "));
        }
        Err(e) => {
            let kind = e.downcast_ref::<ModelError>().map_or("?", |m| m.kind());
            println!("{OUTCOME}failed ({kind}): {e:#}");
        }
    }
}

#[tokio::test]
async fn a_model_behind_a_private_ca_answers_only_where_the_ca_is_trusted() {
    let pki = pki("Sandalyst test CA");
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    // A trust store that holds a CA, just not this one.
    let other = dir.path().join("other-ca.pem");
    std::fs::write(&other, self::pki("Another CA").ca_pem).unwrap();
    let server =
        WireServer::start_tls(vec![Answer::Sse(chat::text_stream(ROWS))], pki.server).await;

    let refused = call_in_child(&server.base, &[("SSL_CERT_FILE", &other)], &[]).await;
    assert!(
        refused.starts_with("failed (unavailable): the TLS certificate of")
            && refused.contains("is not trusted")
            && refused.contains("SSL_CERT_FILE")
            && refused.contains("trust store"),
        "{refused}"
    );
    assert!(
        !refused.contains("attempts"),
        "a certificate refused is not retried: {refused}"
    );
    assert!(
        server.received().is_empty(),
        "nothing is sent to a server not trusted"
    );

    let answered = call_in_child(&server.base, &[("SSL_CERT_FILE", &ca)], &[]).await;
    assert_eq!(answered, format!("answered: {ROWS}"));
    let got = server.received();
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].method.as_str(), got[0].path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(got[0].body["model"], chat::MODEL);
}

/// An HTTP proxy that only tunnels (`CONNECT host:port`), as a company's does for
/// HTTPS; it records each target, and refuses (403) those in `deny`.
struct ConnectProxy {
    url: String,
    targets: Arc<Mutex<Vec<String>>>,
}

impl ConnectProxy {
    async fn start(deny: &[&str]) -> ConnectProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let targets = Arc::new(Mutex::new(Vec::new()));
        let seen = targets.clone();
        let deny: Vec<String> = deny.iter().map(|d| d.to_string()).collect();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let (seen, deny) = (seen.clone(), deny.clone());
                tokio::spawn(async move {
                    let _ = tunnel(sock, seen, deny).await;
                });
            }
        });
        ConnectProxy { url, targets }
    }

    fn targets(&self) -> Vec<String> {
        self.targets.lock().unwrap().clone()
    }
}

async fn tunnel(
    sock: TcpStream,
    seen: Arc<Mutex<Vec<String>>>,
    deny: Vec<String>,
) -> std::io::Result<()> {
    let mut client = BufReader::new(sock);
    let mut request = String::new();
    client.read_line(&mut request).await?;
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        if client.read_line(&mut line).await? == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method != "CONNECT" {
        let mut sock = client.into_inner();
        sock.write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
            .await?;
        return Ok(());
    }
    seen.lock().unwrap().push(target.to_string());
    if deny.iter().any(|d| d == target) {
        let mut sock = client.into_inner();
        sock.write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
            .await?;
        return Ok(());
    }
    // Loopback only: the test's own server.
    assert!(target.starts_with("127.0.0.1:"), "{target}");
    let mut upstream = TcpStream::connect(target).await?;
    let mut sock = client.into_inner();
    sock.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await?;
    tokio::io::copy_bidirectional(&mut sock, &mut upstream).await?;
    Ok(())
}

#[tokio::test]
async fn model_calls_go_through_the_https_proxy_unless_no_proxy_names_the_host() {
    let pki = pki("Sandalyst test CA");
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let server = WireServer::start_tls(
        (0..3)
            .map(|_| Answer::Sse(chat::text_stream(ROWS)))
            .collect(),
        pki.server,
    )
    .await;
    let target = server.base.trim_start_matches("https://").to_string();
    let proxy = ConnectProxy::start(&[]).await;
    let trust = [("SSL_CERT_FILE", ca.as_path())];

    // Through the proxy: one tunnel to the server, TLS end to end inside it.
    let answered = call_in_child(&server.base, &trust, &[("HTTPS_PROXY", &proxy.url)]).await;
    assert_eq!(answered, format!("answered: {ROWS}"));
    assert_eq!(proxy.targets(), vec![target]);
    assert_eq!(server.received().len(), 1);

    // The lower-case spelling works the same.
    let answered = call_in_child(&server.base, &trust, &[("https_proxy", &proxy.url)]).await;
    assert_eq!(answered, format!("answered: {ROWS}"));
    assert_eq!(proxy.targets().len(), 2);

    // NO_PROXY names the host: straight to the server, the proxy sees nothing.
    let answered = call_in_child(
        &server.base,
        &trust,
        &[
            ("HTTPS_PROXY", &proxy.url),
            ("no_proxy", "localhost,127.0.0.1"),
        ],
    )
    .await;
    assert_eq!(answered, format!("answered: {ROWS}"));
    assert_eq!(proxy.targets().len(), 2);
    assert_eq!(server.received().len(), 3);
}

#[tokio::test]
async fn a_proxy_that_refuses_is_named_with_the_variable_to_check() {
    let pki = pki("Sandalyst test CA");
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let server = WireServer::start_tls(vec![], pki.server).await;
    let target = server.base.trim_start_matches("https://").to_string();
    let trust = [("SSL_CERT_FILE", ca.as_path())];

    // A proxy that answers CONNECT with 403 (its policy forbids the host).
    let proxy = ConnectProxy::start(&[&target]).await;
    let refused = call_in_child(&server.base, &trust, &[("HTTPS_PROXY", &proxy.url)]).await;
    assert!(
        refused.starts_with("failed (unavailable): cannot reach")
            && refused.contains(&format!("through the proxy {}", proxy.url))
            && refused.contains("HTTPS_PROXY")
            && refused.contains("NO_PROXY"),
        "{refused}"
    );
    // Tried again as any connection failure is (wire::fast_http: 3 attempts).
    assert_eq!(proxy.targets().len(), 3);

    // A proxy that is not there at all: a port just closed.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let refused = call_in_child(&server.base, &trust, &[("HTTPS_PROXY", &closed)]).await;
    assert!(
        refused.contains(&format!("through the proxy {closed}")) && refused.contains("HTTPS_PROXY"),
        "{refused}"
    );
    assert!(server.received().is_empty());
}
