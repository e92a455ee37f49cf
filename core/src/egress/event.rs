//! What the proxy reports: one [`EgressEvent`] when a connection is let through or
//! refused, and one when a let-through connection ends. The window shows them and the
//! transcript keeps them, so their JSON shape is pinned by a test.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use serde::{Deserialize, Serialize};

use super::resolve::AddressRange;

/// One connection's fate.
///
/// `host`, `port` and `method` are the target as the request asked for it; for a
/// request that could not be read (a malformed or oversized head, or one over the
/// connection cap) the host is empty, the port 0 and the method `unknown`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressEvent {
    pub host: String,
    pub port: u16,
    pub method: Method,
    #[serde(flatten)]
    pub kind: EgressKind,
}

/// How the sandbox's code asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// `CONNECT host:port`: a tunnel (HTTPS; the TLS inside is passed through untouched).
    Connect,
    /// A plain-HTTP request in absolute form (`GET http://host/path`).
    Http,
    /// The request could not be read far enough to tell.
    Unknown,
}

/// Allowed, refused, or the end of an allowed connection (`"event"` in JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EgressKind {
    /// The host is in the list, its address is public (or pinned) and the proxy
    /// connected to `addr`.
    Allowed { addr: SocketAddr },
    /// Nothing was sent to the target; the code got an HTTP error with the reason.
    Refused { reason: Refusal },
    /// An allowed connection ended: bytes the code sent and received through it.
    Closed { bytes_up: u64, bytes_down: u64 },
}

/// Why a request was not let through (`"kind"` in JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Refusal {
    /// The host (with that port) is not in the session's allowlist.
    NotInAllowlist,
    /// The host is, or resolves only to, an address the sandbox may not reach
    /// (loopback, the LAN, link-local with cloud metadata, ...).
    PrivateAddress { addr: IpAddr, range: AddressRange },
    /// The name has no address (or the lookup failed or timed out).
    ResolveFailed { message: String },
    /// No address of the host accepted the connection.
    Unreachable { addr: SocketAddr, message: String },
    /// The host did not answer within the connect timeout.
    ConnectTimeout { addr: SocketAddr },
    /// The request is not one the proxy speaks (origin-form, `https://` without
    /// CONNECT, a bad header, credentials in the URL, ...).
    BadRequest { message: String },
    /// The request head is larger than `limit` bytes.
    HeadTooLarge { limit: usize },
    /// `limit` connections were already open.
    TooManyConnections { limit: usize },
}

impl Refusal {
    /// The status line the code gets.
    pub fn status(&self) -> &'static str {
        match self {
            Refusal::NotInAllowlist | Refusal::PrivateAddress { .. } => "403 Forbidden",
            Refusal::ResolveFailed { .. } | Refusal::Unreachable { .. } => "502 Bad Gateway",
            Refusal::ConnectTimeout { .. } => "504 Gateway Timeout",
            Refusal::BadRequest { .. } | Refusal::HeadTooLarge { .. } => "400 Bad Request",
            Refusal::TooManyConnections { .. } => "503 Service Unavailable",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotInAllowlist => f.write_str(
                "the host is not in this session's network allowlist (the user can add it in the session's network settings)",
            ),
            Refusal::PrivateAddress { addr, range } => write!(
                f,
                "{addr} is a {range} address, which the sandbox may not reach"
            ),
            Refusal::ResolveFailed { message } => write!(f, "the host name did not resolve: {message}"),
            Refusal::Unreachable { addr, message } => write!(f, "could not connect to {addr}: {message}"),
            Refusal::ConnectTimeout { addr } => write!(f, "{addr} did not answer in time"),
            Refusal::BadRequest { message } => write!(f, "bad proxy request: {message}"),
            Refusal::HeadTooLarge { limit } => {
                write!(f, "the request head is larger than {limit} bytes")
            }
            Refusal::TooManyConnections { limit } => {
                write!(f, "{limit} connections are already open through the proxy; try again when one has ended")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transcript keeps these, and the window reads them: the shape is a contract.
    #[test]
    fn events_serialise_to_a_pinned_shape() {
        let cases = [
            (
                EgressEvent {
                    host: "pypi.org".into(),
                    port: 443,
                    method: Method::Connect,
                    kind: EgressKind::Allowed {
                        addr: "151.101.0.223:443".parse().unwrap(),
                    },
                },
                r#"{"host":"pypi.org","port":443,"method":"connect","event":"allowed","addr":"151.101.0.223:443"}"#,
            ),
            (
                EgressEvent {
                    host: "pypi.org".into(),
                    port: 443,
                    method: Method::Connect,
                    kind: EgressKind::Closed {
                        bytes_up: 517,
                        bytes_down: 10_240,
                    },
                },
                r#"{"host":"pypi.org","port":443,"method":"connect","event":"closed","bytes_up":517,"bytes_down":10240}"#,
            ),
            (
                EgressEvent {
                    host: "other.test".into(),
                    port: 80,
                    method: Method::Http,
                    kind: EgressKind::Refused {
                        reason: Refusal::NotInAllowlist,
                    },
                },
                r#"{"host":"other.test","port":80,"method":"http","event":"refused","reason":{"kind":"not_in_allowlist"}}"#,
            ),
            (
                EgressEvent {
                    host: "169.254.169.254".into(),
                    port: 80,
                    method: Method::Http,
                    kind: EgressKind::Refused {
                        reason: Refusal::PrivateAddress {
                            addr: "169.254.169.254".parse().unwrap(),
                            range: AddressRange::LinkLocal,
                        },
                    },
                },
                r#"{"host":"169.254.169.254","port":80,"method":"http","event":"refused","reason":{"kind":"private_address","addr":"169.254.169.254","range":"link_local"}}"#,
            ),
            (
                EgressEvent {
                    host: String::new(),
                    port: 0,
                    method: Method::Unknown,
                    kind: EgressKind::Refused {
                        reason: Refusal::HeadTooLarge { limit: 16384 },
                    },
                },
                r#"{"host":"","port":0,"method":"unknown","event":"refused","reason":{"kind":"head_too_large","limit":16384}}"#,
            ),
        ];
        for (event, json) in cases {
            assert_eq!(serde_json::to_string(&event).unwrap(), json);
            assert_eq!(serde_json::from_str::<EgressEvent>(json).unwrap(), event);
        }
    }

    #[test]
    fn refusals_name_their_status() {
        assert_eq!(Refusal::NotInAllowlist.status(), "403 Forbidden");
        assert_eq!(
            Refusal::HeadTooLarge { limit: 1 }.status(),
            "400 Bad Request"
        );
        let r = Refusal::PrivateAddress {
            addr: "10.0.0.1".parse().unwrap(),
            range: AddressRange::Private,
        };
        assert_eq!(
            r.to_string(),
            "10.0.0.1 is a private (LAN) address, which the sandbox may not reach"
        );
    }
}
