//! Staging: a proposed change of workspace files that is shown first and
//! written only when `resolve` accepts it — one idea, built once here for
//! every tool that stages (ast_edit, lsp_rename and its moves,
//! lsp_code_action).
//!
//! - [`change`]: what a staging tool proposes, a [`StagedChange`] — every
//!   file's content before and after ([`StagedFile`]), and the moves it
//!   makes. A file keeps its content in one of two ways
//!   ([`StagedContent`]): both texts whole (`None`: absent), as a rename
//!   or a move stages them, or only its replacements and the
//!   [`Fingerprint`] of the text they apply to, as ast_edit stages them,
//!   so that a wide rewrite holds its replacements and not every file
//!   twice; such a file's texts are read from disk when it is shown or
//!   written.
//! - [`diff`]: the one unified diff a preview shows ([`PREVIEW_LINES`] at
//!   most, with the change's [`DiffContext`]), and [`proposal`], the one
//!   sentence that names the id to resolve.
//! - [`store`]: the run's [`EditStore`], staged changes under ids
//!   (`edit_1`, …), accepted all-or-nothing or discarded; [`journal`], the
//!   crash journal that makes an accept survive a crash half way.
//! - [`resolve`]: the `resolve` tool over the store.
//! - [`link`]: one run's [`StagingLink`], made by the facade and handed to
//!   every binding: the store (opened by the first binding whose tools
//!   stage, which registers `resolve` with it) and the language servers'
//!   [`PreviewHook`]. So no tool that stages needs another family bound,
//!   and the tool crates never depend on each other.
//!
//! Invariants: a staged change never writes by itself; accepting one goes
//! through one [`FileTransaction`](crate::files::FileTransaction) (every
//! file checked against what it held at staging, then all written or none)
//! with a journal record written first; what a file held at staging is its
//! `old` text, or the text its fingerprint was taken of (same length, same
//! SHA-256), so any edit since is drift; an id is used once.

pub mod change;
pub mod diff;
pub mod journal;
pub mod link;
pub mod resolve;
pub mod store;

pub use change::{
    apply_replacements, FileTexts, Fingerprint, Replacement, StagedChange, StagedContent,
    StagedFile, StagedMove,
};
pub use diff::{diff_body_lines, DiffContext, DIFF_LINE_CHARS, PREVIEW_LINES};
pub use journal::{recover_interrupted, Journal, Recovery};
pub use link::{PreviewHook, PreviewSection, StagingLink};
pub use resolve::{resolve, ResolveAction, ResolveArgs, ResolveTool, RESOLVE};
pub use store::{Accepted, Discarded, EditStore, InjectedFault};

/// What the second line of a staged change's answer ends with, after the
/// staging tool's own headline.
pub const NOT_WRITTEN_YET: &str = "; nothing is written until accepted";

/// The first line of a staged change's answer: what is proposed (`edits`,
/// e.g. "3 replacements") in how many files, and how to resolve it.
pub fn proposal(edits: &str, files: usize, id: &str) -> String {
    format!(
        "(proposed) {edits} in {} … call resolve with edit_id \"{id}\" and action \"accept\" to write them, or \"discard\"",
        crate::format::plural(files, "file", "files"),
    )
}
