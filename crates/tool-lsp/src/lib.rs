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
//! Modules: the session layer — [`catalog`] (which server for which file),
//! [`config`], [`transport`], [`jsonrpc`], [`client`] (one server session),
//! [`supervisor`] (lifecycles), [`position`] (line + symbol ↔ LSP
//! positions) — is the lsp-session crate, re-exported here. This crate's
//! own: [`ops`] (the operations, with [`enclosing`] naming the symbol
//! around each location, [`hierarchy`] for calls and types, [`signature`]
//! and [`capabilities`]), [`format`] (output, with [`symbols`] for symbol
//! answers), [`diagnostics`] (freshness and the ledger, with
//! [`dependencies`], a note when a project's packages are not installed),
//! [`checker`] (project checkers), [`glob_diagnostics`] (a glob's files),
//! [`rename`] (with [`identifier`], the new name's check, and [`mentions`],
//! the files it must reach), [`file_move`] (moves of files and folders),
//! [`on_write`] (with [`save_check`], the save-time check's rules,
//! [`format_on_write`], and [`fallout`] with [`dependents`], new problems
//! in other files), [`preview`] (the diagnostics delta of a staged
//! change),
//! [`code_action`] (applying one), [`tools`] and [`binding`].

mod args;
mod binding;
mod capabilities;
mod checker;
mod code_action;
mod dependencies;
mod dependents;
mod diagnostics;
mod enclosing;
mod fallout;
mod file_diagnostics;
mod file_move;
mod format;
mod format_on_write;
mod glob_diagnostics;
mod hierarchy;
mod identifier;
mod macro_paths;
mod mentions;
mod on_write;
mod ops;
mod planned_edit;
mod preview;
mod query_servers;
mod rename;
mod request;
mod save_check;
mod signature;
mod staged_edit;
mod symbols;
mod tools;
mod write_checker;

// The session layer (the lsp-session crate), under the names this crate's
// modules use: `crate::client`, ….
use lsp_session::{
    catalog, client, config, format_setting, position, source_walk, supervisor, symbol_cache,
};

pub use binding::LspBinding;
pub use catalog::{Catalog, ServerEntry};
pub use config::CatalogConfig;
pub use diagnostics::DiagnosticLedger;
pub use on_write::{DiagnosticsOnWrite, FormatOnWrite, RunLedger, TouchedPaths};
pub use position::PositionEncoding;
pub use preview::ServerPreview;
pub use supervisor::{LspSupervisor, Timeouts};
pub use tools::{LspCodeActionTool, LspRenameTool, LspTool};

/// This crate's tools as the host lists them before a resource is bound.
pub const FAMILY: tool_core::FamilyDecl = tool_core::FamilyDecl {
    tools: &[tools::LSP, tools::LSP_RENAME, tools::LSP_CODE_ACTION],
    resource: "language-server supervisor + working directory",
};
