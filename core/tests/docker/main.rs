//! The Docker tier: tests against the real engine and the sandbox image, through the
//! library and through the `sandalyst` command line, the end-to-end ones of `tests/`
//! included. Each test that needs the engine skips with one line when none answers,
//! and fails instead where `SANDALYST_REQUIRE_ENGINE=1` (CI); its tests that need no
//! engine run either way. `cargo test -p sandalyst --test docker`.

// The bench suite (bench_suite) brings its own copy of common/wire, as the bench
// target needs it standalone.
#![allow(clippy::duplicate_mod)]

#[path = "../common/mod.rs"]
mod common;

mod agent;
mod analyst_cases;
mod bench_suite;
mod custom_image;
mod egress;
mod engine_bounds;
mod engine_contexts;
mod engine_limits;
mod engine_loss;
mod engine_orphan;
mod engine_owner;
mod engine_tls;
mod explore_code;
mod faults;
mod gvisor;
mod hostile;
mod hostile_inputs;
mod image_formats;
mod kernel_ipython;
mod kernel_workspace;
mod provider_bounds;
mod provider_chat_cli;
mod provider_cli;
mod provider_e2e;
mod reproducible;
mod safe_output;
mod sandbox;
mod session_docker;
mod session_owner;
mod staging;
mod staging_env;
mod step_anomalies;
mod step_chart;

// End to end through the command line (the repository's `tests/`).
#[path = "../../../tests/chat.rs"]
mod chat;
#[path = "../../../tests/cli.rs"]
mod cli;
#[path = "../../../tests/offline_skills.rs"]
mod offline_skills;
