//! Sandalyst's core: everything that is not UI, usable headless.
//!
//! A session stages the user's files into a hardened Docker sandbox ([`sandbox`],
//! [`workspace`]) and keeps one conversation with them ([`session`]): each ask lets a
//! [`model`] drive the [`agent`] loop of Python and shell calls, streams typed
//! [`agent::Event`]s, brings the outputs back and keeps everything on disk
//! ([`store`]). The command line and the desktop shell both call [`session`] (and
//! [`run::execute`], a session with one ask) and show the same events.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use sandalyst::{model::offline::OfflineAnalyst, run, store::Store};
//! let store = Store::open(sandalyst::store::default_root()?)?;
//! let request = run::RunRequest::new(vec!["examples/building_energy.csv".into()], "Find anomalies".into());
//! let mut model = OfflineAnalyst::new();
//! let outcome = run::execute(&store, request, &mut model, &|ev| println!("{ev:?}"), &Default::default()).await?;
//! println!("{}", outcome.status);
//! # Ok(()) }
//! ```

pub mod agent;
pub mod analyst;
pub mod artifacts;
pub mod conversation;
pub mod export;
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
