//! The sandbox's way out, when it has one: a [`NetworkMode`] per session, and for
//! `allow:` an egress [`Proxy`] on the host that lets the code reach the listed hosts
//! and nothing else.
//!
//! The proxy speaks `CONNECT host:port` (a tunnel; TLS passes through untouched, the
//! proxy never sees inside it) and plain HTTP in absolute form (`GET http://host/path`,
//! forwarded in origin form, one request per connection). It checks the target by
//! host name against the [`Allowlist`], resolves it on the host with the [`Resolver`]
//! (the container asks no DNS), refuses loopback, private, link-local (cloud
//! metadata), CGNAT and the other non-public ranges unless the user pinned the name
//! to such an address, and connects to exactly the addresses it checked. Every
//! connection let through, every refusal and every end is an [`EgressEvent`].
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use std::sync::Arc;
//! use sandalyst::egress::{NetworkMode, Proxy, Resolver};
//! let mode: NetworkMode = "allow:@python-packages".parse()?;
//! let list = mode.allowlist().expect("allow mode").clone();
//! let at: std::net::SocketAddr = "127.0.0.1:0".parse()?;
//! let proxy = Proxy::start(at, list, Resolver::system(),
//!     Arc::new(|ev| println!("{ev:?}"))).await?;
//! println!("HTTPS_PROXY=http://{}", proxy.local_addr().expect("a TCP proxy"));
//! # Ok(()) }
//! ```
//!
//! # How a sandbox uses it
//!
//! - `off`: the container's network mode is `none`, no proxy.
//! - `allow:`: the container's network mode is still `none`; the proxy listens on a
//!   unix socket ([`Listen::Unix`]) that is mounted into the container, where a
//!   forwarder on its loopback makes it `HTTP(S)_PROXY` (`sandbox::docker::egress`;
//!   an engine network would leave the host's own addresses in reach, see
//!   docs/SECURITY.md). The events reach the session through
//!   `Sandbox::take_egress`, one batch per call.
//! - `full`: the engine's ordinary bridge network and no proxy: nothing is checked
//!   or recorded, which the settings page and `--help` say plainly
//!   ([`NetworkMode::exposure`]).

mod event;
mod head;
mod policy;
mod proxy;
mod resolve;

pub use event::{EgressEvent, EgressKind, Method, Refusal};
pub use policy::{
    presets, Allowlist, Host, NetworkMode, PolicyError, Preset, Rule, MAX_ENTRIES, MAX_NAME,
};
pub use proxy::{Listen, OnEvent, Proxy, ProxyHandle, ProxyLimits};
pub use resolve::{refused_range, AddressRange, Pin, Resolver, LOOKUP_TIMEOUT};

#[cfg(test)]
mod tests;
