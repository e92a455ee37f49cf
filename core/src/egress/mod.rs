//! The sandbox's way out, when it has one: a [`NetworkMode`] per session, and for
//! `allow:` the [`Allowlist`] of host names it may reach.

mod policy;

pub use policy::{
    presets, Allowlist, Host, NetworkMode, PolicyError, Preset, Rule, MAX_ENTRIES, MAX_NAME,
};
