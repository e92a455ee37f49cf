//! Sandalyst's core: everything that is not UI, usable headless.
//!
//! A session stages the user's files into a hardened sandbox ([`sandbox`],
//! [`workspace`]) and keeps one conversation with them ([`session`]): each ask lets a
//! [`conversation::Model`] (a provider of [`model`], or the rule-based [`analyst`])
//! drive the [`agent`] loop of Python and shell calls, streams typed
//! [`agent::Event`]s, brings the outputs back and keeps everything on disk
//! ([`store`]). The command line and the desktop shell call [`api`] only, and show
//! the same events. The modules form layers, each using only those below it
//! (`core/tests/layers.rs` holds the order).
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use sandalyst::api::{self, App, OfflineAnalyst, RunRequest};
//! let app = App::open(api::data_root(None)?)?;
//! let request = RunRequest::new(vec!["examples/building_energy.csv".into()], "Find anomalies".into());
//! let mut model = OfflineAnalyst::new();
//! let outcome = app.run(request, &mut model, &|ev| println!("{ev:?}"), &Default::default()).await?;
//! println!("{}", outcome.status);
//! # Ok(()) }
//! ```

pub mod agent;
pub mod analysis;
pub mod analyst;
pub mod api;
pub mod approval;
pub mod artifacts;
pub mod conversation;
pub mod egress;
pub mod explore;
pub mod model;
pub mod owner;
pub mod protocol;
pub mod rerun;
pub mod run;
pub mod sandbox;
pub mod session;
pub mod store;
pub mod terminal;
pub mod workspace;
