//! The sandbox's way out, when it has one: a [`NetworkMode`] per session, and for
//! `allow:` the [`Allowlist`] of host names it may reach, the [`Resolver`] that turns
//! them into addresses (never a private or link-local one unless pinned), and the
//! [`EgressEvent`]s that record every connection.

mod event;
mod policy;
mod resolve;

pub use event::{EgressEvent, EgressKind, Method, Refusal};
pub use policy::{
    presets, Allowlist, Host, NetworkMode, PolicyError, Preset, Rule, MAX_ENTRIES, MAX_NAME,
};
pub use resolve::{refused_range, AddressRange, Resolver, LOOKUP_TIMEOUT};
