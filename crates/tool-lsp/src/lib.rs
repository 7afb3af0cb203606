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
//! The session layer — which server for which file, starting it, talking
//! to it, positions — is the lsp-session crate; this crate holds the tools,
//! in three rooms and what they share:
//! - [`read`]: the `lsp` tool's questions (definition, references, hover,
//!   symbols, calls, diagnostics of a file or a glob, project checks);
//! - [`edit`]: changes the servers compute — `lsp_rename`, moves,
//!   `lsp_code_action` — applied all-or-nothing or staged, and the
//!   diagnostics preview of a staged change;
//! - [`on_write`]: diagnostics on write, format on write, and the fallout
//!   of a change in the files that use what it changed;
//! - shared by them: [`args`] (the tools' arguments), [`positioning`] (a
//!   file argument synced to its server, a line and symbol turned into a
//!   position, the call's bounds), [`render`] (answers in the words the
//!   model reads), [`diagnostics`] (freshness and the run's ledger),
//!   [`mentions`] (the files that mention an identifier), [`planned_edit`]
//!   (a server's WorkspaceEdit played in memory first);
//! - [`tools`] (the tool declarations) and [`binding`] (the run's resource).
//!
//! Modules are private; what other crates use is re-exported below.

mod args;
mod binding;
mod diagnostics;
mod edit;
mod mentions;
mod on_write;
mod planned_edit;
mod positioning;
mod read;
mod render;
mod tools;

// The session layer (the lsp-session crate), under the names this crate's
// modules use: `crate::client`, ….
use lsp_session::{
    catalog, client, config, format_setting, position, source_walk, supervisor, symbol_cache,
};

pub use binding::LspBinding;
pub use catalog::{Catalog, ServerEntry};
pub use config::CatalogConfig;
pub use diagnostics::DiagnosticLedger;
pub use edit::preview::ServerPreview;
pub use on_write::{DiagnosticsOnWrite, FormatOnWrite, RunLedger};
pub use position::PositionEncoding;
pub use supervisor::{LspSupervisor, Timeouts};
pub use tools::{LspCodeActionTool, LspRenameTool, LspTool};

/// This crate's tools as the host lists them before a resource is bound.
pub const FAMILY: tool_core::FamilyDecl = tool_core::FamilyDecl {
    tools: &[tools::LSP, tools::LSP_RENAME, tools::LSP_CODE_ACTION],
    resource: "language-server supervisor + working directory",
};
