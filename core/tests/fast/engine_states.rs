//! Podman reports a container whose process ended as `stopped` (until its clean-up
//! makes it `exited`), a state the Engine API does not have, and refuses a `status`
//! filter naming a state it does not have (`restarting`, `dead`). Listing the
//! sandboxes must not fail on either: an engine double on loopback answers as Podman
//! 4.3 did in CI.

use std::collections::HashMap;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn summary(id: &str, state: &str) -> serde_json::Value {
    serde_json::json!({
        "Id": id,
        "Names": [format!("/{id}")],
        "Image": "sandalyst-sandbox:test",
        "State": state,
        "Status": state,
        "Labels": {"sandalyst.run": "run-1"},
    })
}

/// Answer every request with the container list: with a `status` filter, the listed
/// states' containers, or Podman's error for a state it does not know; without, all
/// of them, the `stopped` one too. The first two `exited` queries also hold the
/// `stopped` one, as Podman's did in CI until its clean-up made it `exited`.
/// Returns the queries seen.
async fn engine(listener: TcpListener, seen: tokio::sync::mpsc::UnboundedSender<String>) {
    let exited_asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    loop {
        let Ok((mut sock, _)) = listener.accept().await else {
            return;
        };
        let (seen, exited_asked) = (seen.clone(), exited_asked.clone());
        tokio::spawn(async move {
            let mut buf = vec![0u8; 16 << 10];
            let mut n = 0;
            while !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut buf[n..]).await {
                    Ok(0) | Err(_) => return,
                    Ok(k) => n += k,
                }
            }
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let target = head.split(' ').nth(1).unwrap_or("").to_string();
            let query = percent_decode(target.split_once('?').map_or("", |(_, q)| q));
            let _ = seen.send(query.clone());
            let all = [
                ("running1", "running"),
                ("exited1", "exited"),
                ("stopped1", "stopped"),
            ];
            let states = filters(&query).get("status").cloned();
            let (code, body) = match states {
                Some(states) => match states.iter().find(|s| PODMAN_REFUSES.contains(&s.as_str())) {
                    Some(bad) => (
                        "500 Internal Server Error",
                        serde_json::json!({
                            "cause": "invalid argument",
                            "message": format!("unknown container state: {bad}: invalid argument"),
                            "response": 500,
                        })
                        .to_string(),
                    ),
                    None => (
                        "200 OK",
                        serde_json::to_string(
                            &all.iter()
                                .filter(|(_, state)| {
                                    states.iter().any(|s| s == state)
                                        || (*state == "stopped"
                                            && states.iter().any(|s| s == "exited")
                                            && exited_asked
                                                .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                                                < 2)
                                })
                                .map(|(id, state)| summary(id, state))
                                .collect::<Vec<_>>(),
                        )
                        .unwrap(),
                    ),
                },
                None => (
                    "200 OK",
                    serde_json::to_string(
                        &all.iter()
                            .map(|(id, state)| summary(id, state))
                            .collect::<Vec<_>>(),
                    )
                    .unwrap(),
                ),
            };
            let reply = format!(
                "HTTP/1.1 {code}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        });
    }
}

/// States of the Engine API that Podman 4.3 refuses in a filter.
const PODMAN_REFUSES: [&str; 2] = ["restarting", "dead"];

/// The `filters` parameter of a decoded query.
fn filters(query: &str) -> HashMap<String, Vec<String>> {
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix("filters="))
        .map(|f| serde_json::from_str(f).unwrap())
        .unwrap_or_default()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn a_podman_stopped_container_does_not_break_the_listing() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(engine(listener, tx));
    let docker = bollard::Docker::connect_with_http(
        &format!("tcp://{addr}"),
        10,
        bollard::API_DEFAULT_VERSION,
    )
    .unwrap();

    let ids = sandalyst::sandbox::docker::containers_of_run(&docker, "run-1")
        .await
        .expect("the listing survives an unknown state");
    assert_eq!(ids, ["running1", "exited1"]);

    // First the plain list (which fails to parse), then one query per known state,
    // each with the label; never `stopped`.
    let queries: Vec<String> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
    assert!(!queries[0].contains("\"status\""), "{queries:?}");
    let asked: Vec<HashMap<String, Vec<String>>> =
        queries[1..].iter().map(|q| filters(q)).collect();
    assert!(
        asked.iter().all(|f| f["label"] == ["sandalyst.run=run-1"]),
        "{asked:?}"
    );
    assert!(asked.iter().all(|f| f["status"].len() == 1), "{asked:?}");
    let states: Vec<&str> = asked.iter().map(|f| f["status"][0].as_str()).collect();
    assert!(
        states.contains(&"exited") && states.contains(&"running"),
        "{states:?}"
    );
    assert!(
        states.contains(&"restarting"),
        "a state Podman refuses was asked and skipped"
    );
    assert!(!states.contains(&"stopped"), "{states:?}");
    // The `exited` query that also held the `stopped` container was asked again.
    assert_eq!(
        states.iter().filter(|s| **s == "exited").count(),
        3,
        "{states:?}"
    );
}
