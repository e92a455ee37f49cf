//! The Podman tier: rootful and rootless Podman through their Docker-compatible
//! sockets, against services these tests start and stop themselves, and an image
//! build on an empty store. Podman is set up by `scripts/setup-podman.sh`
//! (scripts/test.sh runs it). Each test skips with one line when no Docker engine
//! (which holds the image) answers or Podman is not installed, and fails instead where
//! `SANDALYST_REQUIRE_ENGINE=1` (CI). `cargo test -p sandalyst --test podman`.

#[path = "../common/mod.rs"]
mod common;

mod build;
mod rootful;
mod rootless;
