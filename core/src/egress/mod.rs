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
//! let proxy = Proxy::start("172.30.0.1:0".parse()?, list, Resolver::system(),
//!     Arc::new(|ev| println!("{ev:?}"))).await?;
//! println!("HTTPS_PROXY=http://{}", proxy.local_addr());
//! # Ok(()) }
//! ```
//!
//! # How it is meant to be wired (not done here)
//!
//! - `off`: the container's network mode stays `none`, no proxy.
//! - `allow:`: the session creates an *internal* engine network
//!   (`docker network create --internal`, no route out and no DNS beyond the
//!   engine's own) and puts the container on it instead of `none`. It starts one
//!   proxy for the session listening on that network's gateway address on the host
//!   (`IPAM.Config[0].Gateway`, e.g. `172.30.0.1:PORT`; never `0.0.0.0`, or the LAN
//!   could use it) and stops it with the session. The container's environment gets
//!   `HTTP_PROXY`, `HTTPS_PROXY`, `http_proxy` and `https_proxy` =
//!   `http://GATEWAY:PORT` and an empty `NO_PROXY=` / `no_proxy=`, so pip, requests
//!   and urllib go through it. The events go to the session's event stream and
//!   transcript. If other containers can join that network, a per-session
//!   `Proxy-Authorization` token would be the next step (the proxy already drops that
//!   header rather than forwarding it).
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
