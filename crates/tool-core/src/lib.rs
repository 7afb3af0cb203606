//! The shared foundation of agent-tools.
//!
//! Everything two tool crates would otherwise both write lives here: the
//! [`Tool`] trait and its [`ToolSpec`], each tool's [`declaration`] (name,
//! tier, MCP hints) the spec is made from, approval [`Tier`]s and the
//! [`Surface`]s they gate, the [`Registry`] that lists and dispatches one run's
//! tools, [`ToolOutput`] and [`ToolError`], the [`Workspace`] that keeps every
//! path inside the run's root, the handle-based file access every tool opens
//! workspace files with ([`fs`]), all-or-nothing file writes ([`files`]), the
//! one child-process helper every crate starts processes with, and the
//! `Content-Length` [`framing`] the LSP and DAP clients share, and
//! [`staging`]: every staged change, the run's store of them, its crash
//! journal and the `resolve` tool, linked to the language servers' preview
//! of a change, and
//! the run's [`notices`] board, whose news rides on the next tool result, and
//! the private [`scratch`] folders a run keeps non-workspace files in, and
//! the fold of config [`layers`] over a built-in catalog, with its trust
//! rule, and input [`schema`]s any JSON Schema validator accepts, and the
//! [`source_walk`] over a root's source files (which languages it holds),
//! and the idle process's release of its executable's resident pages
//! ([`code_pages`]).
//!
//! This crate must never depend on a `tool-*` crate, and never start a process
//! or write a file other than through [`process`], [`fs`] and [`files`] (the
//! journal's own records aside, which [`staging::journal`] removes or sets
//! aside itself).

pub mod args;
pub mod binding;
pub mod cargo;
pub mod code_pages;
pub mod declaration;
pub mod error;
pub mod files;
pub mod format;
pub mod framing;
pub mod fs;
pub mod install;
pub mod jdk;
pub mod layers;
pub mod notices;
pub mod output;
pub mod process;
pub mod programs;
pub mod registry;
pub mod schema;
pub mod scratch;
pub mod source_walk;
pub mod staging;
pub mod tier;
pub mod tool;
pub mod workspace;

pub use args::{coerce_to_schema, parse_args, schema_for};
pub use binding::{Binding, RunContext};
pub use declaration::{FamilyDecl, McpHints, ToolDecl};
pub use error::ToolError;
pub use notices::{Notice, NoticeBoard, NoticeLevel};
pub use output::{Content, ToolOutput};
pub use registry::{
    AllowAll, Approval, ApprovalRequest, Approver, Registry, RegistryError, WeakRegistry,
};
pub use staging::{PreviewHook, PreviewSection, StagedChange, StagingLink};
pub use tier::{Surface, Tier};
pub use tool::paths_in_patch;
pub use tool::{CallContext, Progress, ProgressSink, Tool, ToolSpec};
pub use workspace::Workspace;

/// Re-exported so tool crates name one version of these.
pub use async_trait::async_trait;
pub use schemars;
pub use tokio_util::sync::CancellationToken;
