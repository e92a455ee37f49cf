//! The models behind the [`Model`] trait (defined in [`crate::conversation`]): the HTTP
//! providers (OpenAI Responses, Chat Completions servers, Anthropic Messages), scripted
//! test models, and which one a run uses ([`config`], from the table in [`providers`]).
//! The offline analyst is its own module, [`crate::analyst`]; it is named here too.

pub mod anthropic;
pub mod caps;
pub mod chat_completions;
pub mod config;
pub mod error;
pub mod http;
pub mod listing;
pub mod network;
pub mod openai_responses;
pub mod pricing;
pub mod providers;
pub mod scripted;
pub mod secret;
pub mod sse;
pub mod tool_args;

// The conversation's types and the trait live at the bottom of the core; they are
// named here too, where the code that uses them always found them.
pub use crate::conversation::{
    no_deltas, CallForm, Delta, ImagePart, Item, Model, Reply, Request, ToolSpec, Usage,
};

/// The offline analyst's old place, kept for the callers that still name it.
pub mod offline {
    pub use crate::analyst::{request, OfflineAnalyst, MAX_CALLS};
}
