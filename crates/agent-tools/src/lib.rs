//! The facade of agent-tools: one crate a harness depends on.
//!
//! Cargo features decide which tool crates are compiled in; the [`Toolset`]
//! builder binds one run's resources and registers a tool only when its
//! resource is bound; call time decides what can actually start. The
//! `agent-tools` binary (`doctor`, `call`, `batch`, `mcp`) is built on the same
//! builder, from [`RunOptions`].

pub mod catalog;
pub mod file_tools;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod options;
pub mod toolset;

pub use catalog::{ToolFamily, FAMILIES};
pub use options::{RunConfig, RunOptions};
#[cfg(feature = "ask")]
pub use tool_ask;
#[cfg(feature = "astgrep")]
pub use tool_astgrep;
pub use tool_core;
#[cfg(feature = "debug")]
pub use tool_debug;
#[cfg(feature = "eval")]
pub use tool_eval;
#[cfg(feature = "lsp")]
pub use tool_lsp;
#[cfg(feature = "vibe")]
pub use tool_vibe;
pub use toolset::{BindingState, Toolset, ToolsetBuilder};
