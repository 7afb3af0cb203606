//! The `lsp` tool's questions: each op answers from the servers without
//! changing a file.
//!
//! [`ops`] dispatches an op to its answer; beside it, [`capabilities`] (what
//! a server offers), [`enclosing`] (the symbol around each location),
//! [`hierarchy`] (calls and types), [`signature`], [`symbols`] (document and
//! workspace symbols), [`query_servers`] (which servers a query that names
//! no file asks), [`file_diagnostics`] and [`glob_diagnostics`] (one file's
//! or a glob's diagnostics, with [`dependencies`], a note when a project's
//! packages are not installed) and [`project_checks`] (the project checkers
//! `lsp check` runs).

pub(crate) mod capabilities;
pub(crate) mod dependencies;
pub(crate) mod enclosing;
pub(crate) mod file_diagnostics;
pub(crate) mod glob_diagnostics;
pub(crate) mod hierarchy;
pub(crate) mod ops;
pub(crate) mod project_checks;
pub(crate) mod query_servers;
pub(crate) mod signature;
pub(crate) mod symbols;
