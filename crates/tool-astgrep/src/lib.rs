//! ast_grep and ast_edit: structural search and staged, all-or-nothing
//! rewrites over every grammar ast-grep ships; the run's `resolve`, store
//! and journal are tool-core's ([`tool_core::staging`]).
//!
//! Layout: [`catalog`] (language ids), [`skeleton`] and [`pattern`] (the
//! pattern compiler), [`search`] (the parallel, pre-filtered walk),
//! [`rewrite`] (templates and replacements), [`format`] (what the model
//! reads), [`tools`] and [`binding`] (the two tools and how a run binds
//! them).
//! The model-facing tool descriptions are prose in `descriptions/<tool>.md`.
//!
//! Module order: a module uses only modules before it, so there is no import
//! circle (check with `grep -n "crate::" src/*.rs`):
//!
//! 1. [`grammars`] (the extra tree-sitter grammars), [`excerpt`],
//!    [`nesting`], [`parser_memory`], `top_level` (where a Python file's
//!    top-level statements begin), `top_level_c` (a C file's top-level
//!    items) — no crate imports; [`catalog`] — grammars;
//!    [`embedded`] (macro bodies searched on their own), `enclosing` (the
//!    scope a match sits in) — catalog, excerpt;
//! 2. [`skeleton`] — catalog;
//! 3. [`pattern`] — catalog, excerpt, nesting, skeleton;
//! 4. [`rewrite`] — pattern; [`rule`] (ast-grep rules) — catalog, pattern,
//!    rewrite, skeleton;
//! 5. `matching` (one source: its tree, or a Python module's statements
//!    or a C file's items holding the literal) — catalog, embedded,
//!    enclosing, excerpt, nesting, pattern, rewrite, top_level, top_level_c; [`collect`] (what a search keeps of what
//!    it found) — catalog, matching, rewrite; [`index`] (what a run's
//!    searches keep: texts, trees, results) — matching, pattern, rewrite;
//!    [`search`] (the walk) — catalog, collect, index, matching, nesting,
//!    pattern, rewrite;
//! 6. [`format`] — embedded, excerpt, nesting, rewrite, search;
//! 7. [`ops`] — catalog, excerpt, format, index, pattern, rewrite, search;
//! 8. [`tools`] — format, index, ops;
//! 9. [`binding`] — catalog, index, tools.
//!
//! This crate never writes a file except through tool-core's
//! `FileTransaction`, and never writes one that `resolve` did not accept.

pub mod binding;
pub mod catalog;
pub mod collect;
pub mod embedded;
mod enclosing;
pub mod excerpt;
pub mod format;
pub mod grammars;
pub mod index;
mod matching;
pub mod nesting;
pub mod ops;
pub mod parser_memory;
pub mod pattern;
pub mod rewrite;
pub mod rule;
pub mod search;
pub mod skeleton;
pub mod tools;
mod top_level;
mod top_level_c;

pub use binding::AstGrepBinding;
pub use catalog::Lang;
pub use index::SearchIndex;
pub use pattern::{compile, CompiledPattern, PatternError};

/// This crate's tools as the host lists them before a resource is bound.
pub const FAMILY: tool_core::FamilyDecl = tool_core::FamilyDecl {
    tools: &[
        tools::AST_GREP,
        tools::AST_EDIT,
        tool_core::staging::RESOLVE,
    ],
    resource: "tree-sitter parser",
};
