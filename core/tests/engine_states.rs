//! Podman reports a container whose process ended as `stopped` (until its clean-up
//! makes it `exited`), a state the Engine API does not have. Listing the sandboxes
//! must not fail on it: an engine double on loopback answers the container list with
//! such a container, as Podman 4.3 did in CI.

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
/// states' containers; without, also the `stopped` one. Returns the queries seen.
async fn engine(listener: TcpListener, seen: tokio::sync::mpsc::UnboundedSender<String>) {
    loop {
        let Ok((mut sock, _)) = listener.accept().await else {
            return;
        };
        let seen = seen.clone();
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
            let mut list = vec![summary("running1", "running"), summary("exited1", "exited")];
            if !query.contains("\"status\"") {
                list.push(summary("stopped1", "stopped"));
            }
            let body = serde_json::to_string(&list).unwrap();
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        });
    }
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

    // First the plain list (which fails to parse), then one restricted to known states.
    let queries: Vec<String> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
    assert_eq!(queries.len(), 2, "{queries:?}");
    assert!(!queries[0].contains("\"status\""), "{queries:?}");
    let filters: HashMap<String, Vec<String>> = serde_json::from_str(
        queries[1]
            .split('&')
            .find_map(|kv| kv.strip_prefix("filters="))
            .unwrap(),
    )
    .unwrap();
    assert!(filters["status"].contains(&"exited".to_string()));
    assert!(!filters["status"].contains(&"stopped".to_string()));
    assert_eq!(filters["label"], ["sandalyst.run=run-1"]);
}
