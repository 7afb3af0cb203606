//! eval: persistent Python and JavaScript kernels with the tool bridge.
//!
//! A kernel is a child process of a real interpreter (the project's Python,
//! Node.js) running a small driver embedded in this crate, one per language
//! per run, started on first use. Host and driver talk newline-delimited JSON
//! on dedicated pipes (fds 3, 4, 5) — no port, no socket, no secret — while the
//! cell's own stdout and stderr are captured apart, so output written straight
//! to fd 1 and 2 by subprocesses and C extensions is kept.
//!
//! Modules: [`config`] (the `[eval]` section, languages), [`interpreter`]
//! (which interpreter), [`sandbox`] (where it runs), [`protocol`] (messages and
//! output markers), [`kernel`] (the process and its readers), [`cell`] (one
//! cell: idle budget, interrupts, the bridge loop), [`job`] (background
//! cells), [`bridge`] (dispatching
//! `tool()` calls), [`output`] and [`format`] (what the model reads),
//! [`image_fit`] (images downscaled to the answer's budget),
//! [`scratch`] (where what does not fit an answer is saved),
//! [`tool`] (the `eval` tool), [`binding`] (the run resource).
//!
//! This crate must never start an isolated environment itself (the harness
//! hands over a [`Sandbox`] that wraps commands), never let a bridged call
//! reach a tool the calling surface cannot see (it dispatches through the
//! Registry), and never leave a kernel process behind (each kernel leads a
//! process group that is killed when the kernel is dropped).

pub mod binding;
pub mod bridge;
pub mod cell;
pub mod config;
pub mod format;
pub mod image_fit;
pub mod interpreter;
pub mod job;
pub mod kernel;
pub mod output;
pub mod protocol;
pub mod sandbox;
pub mod scratch;
pub mod tool;

pub use binding::EvalBinding;
pub use config::{EvalConfig, Language};
pub use kernel::{KernelFactory, KernelProcess};
pub use sandbox::{CommandPrefix, Sandbox};
pub use tool::{EvalArgs, EvalTool};

/// `eval`: runs arbitrary code, which can reach anything.
pub const EVAL: tool_core::ToolDecl =
    tool_core::ToolDecl::new("eval", tool_core::Tier::Exec).hints(true, false, true);

/// This crate's tools as the host lists them before a resource is bound.
pub const FAMILY: tool_core::FamilyDecl = tool_core::FamilyDecl {
    tools: &[EVAL],
    resource: "kernel factory",
};
