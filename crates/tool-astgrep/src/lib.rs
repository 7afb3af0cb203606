//! ast_grep, ast_edit and resolve: structural search and staged,
//! all-or-nothing rewrites over every grammar ast-grep ships.
//!
//! Layout: [`catalog`] (language ids), [`skeleton`] and [`pattern`] (the
//! pattern compiler), [`search`] (the parallel, pre-filtered walk),
//! [`rewrite`] (templates and replacements), [`store`] and [`journal`]
//! (staged edits and crash-safe apply), [`format`] (what the model reads),
//! [`tools`] and [`binding`] (the three tools and how a run binds them).
//!
//! This crate never writes a file except through tool-core's
//! `FileTransaction`, and never writes one that `resolve` did not accept.

pub mod binding;
pub mod catalog;
pub mod format;
pub mod journal;
pub mod ops;
pub mod pattern;
pub mod rewrite;
pub mod search;
pub mod skeleton;
pub mod store;
pub mod tools;

pub use binding::{recover_interrupted, AstGrepBinding};
pub use catalog::Lang;
pub use pattern::{compile, CompiledPattern, PatternError};
pub use store::EditStore;
