//! The fast tier: everything that runs with no container engine. The loop and sessions
//! on the in-memory sandbox, the providers against local model servers, the engine's
//! discovery and listing against doubles, the source checks, and hostile artifacts.
//! `cargo test -p sandalyst --test fast` runs it; the engine tiers are `docker` and
//! `podman` (the lib's unit tests and `layers` need no engine either).

#[path = "../common/mod.rs"]
mod common;

mod analyst_questions;
mod artifacts_hostile;
mod ask_overlap;
mod cli;
mod engine_discovery;
mod engine_portability;
mod engine_states;
mod explore;
mod keychain;
mod model_listing;
mod model_network;
mod provider_anthropic;
mod provider_bounds;
mod provider_chat;
mod provider_config;
mod provider_loop;
mod provider_openai;
mod round_trip;
mod session;
