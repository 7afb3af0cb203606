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
pub use tool_core;
pub use toolset::{BindingState, Toolset, ToolsetBuilder};
