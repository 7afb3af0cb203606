//! lsp, lsp_rename and diagnostics on write, over real language servers.
//!
//! One run's [`LspSupervisor`] starts a client per (server, root) lazily, on
//! the first call that needs it, from the [`catalog`] (root markers AND a
//! resolving binary, or a refusal naming the missing half). The `lsp` tool
//! asks it questions addressed by line and symbol, never by column;
//! `lsp_rename` applies a server rename all-or-nothing; [`DiagnosticsOnWrite`]
//! wraps the harness's write tools and folds newly introduced diagnostics
//! into their results.
//!
//! This crate never writes a file except through tool-core's transaction,
//! never starts a process except through tool-core's child helper, and never
//! leaves a server running after its supervisor is gone.
//!
//! Modules: [`catalog`] (which server for which file), [`config`] (the
//! config layers that change it, and the project's trust rule), [`transport`]
//! (framing), [`jsonrpc`] (request ids and pending replies over a stream),
//! [`client`] (one server session), [`supervisor`] (lifecycles),
//! [`position`] (line + symbol ↔ LSP positions), [`ops`] (the
//! operations, with [`enclosing`] naming the symbol around each location,
//! [`hierarchy`] for calls and types, [`signature`] and
//! [`capabilities`]), [`format`] (output, with [`symbols`] for symbol answers), [`diagnostics`] (freshness and the
//! ledger, with [`dependencies`], a note when a project's packages are not
//! installed), [`checker`] (project checkers), [`glob_diagnostics`] (a glob's files), [`rename`] (with
//! [`identifier`], the new name's check, and
//! [`mentions`], the files it must reach), [`file_move`] (moves of files
//! and folders), [`on_write`] (with [`save_check`], the save-time check's
//! rules, and [`format_on_write`]), [`preview`] (the
//! diagnostics delta of a staged change),
//! [`code_action`] (applying one), [`tools`] and [`binding`].

pub mod args;
pub mod binding;
pub mod capabilities;
pub mod catalog;
pub mod checker;
pub mod client;
pub mod code_action;
pub mod config;
pub mod dependencies;
pub mod diagnostics;
pub mod enclosing;
pub mod file_diagnostics;
pub mod file_move;
pub mod format;
pub mod format_on_write;
pub mod format_setting;
pub mod glob_diagnostics;
pub mod hierarchy;
pub mod identifier;
pub mod jsonrpc;
pub mod mentions;
pub mod on_write;
pub mod ops;
pub mod planned_edit;
pub mod position;
pub mod preview;
pub mod query_servers;
pub mod ready_probe;
pub mod rename;
pub mod request;
pub mod save_check;
pub mod signature;
pub mod source_walk;
pub mod staged_edit;
pub mod supervisor;
pub mod symbol_cache;
pub mod symbols;
pub mod tools;
pub mod transport;
pub mod warm_up;
pub mod write_checker;

pub use binding::LspBinding;
pub use catalog::{Catalog, ServerEntry};
pub use config::CatalogConfig;
pub use diagnostics::DiagnosticLedger;
pub use on_write::{DiagnosticsOnWrite, FormatOnWrite, RunLedger, TouchedPaths};
pub use position::PositionEncoding;
pub use supervisor::{LspSupervisor, Timeouts};
pub use tools::{LspCodeActionTool, LspRenameTool, LspTool};

/// This crate's tools as the host lists them before a resource is bound.
pub const FAMILY: tool_core::FamilyDecl = tool_core::FamilyDecl {
    tools: &[tools::LSP, tools::LSP_RENAME, tools::LSP_CODE_ACTION],
    resource: "language-server supervisor + working directory",
};
