//! The walk over a root's source files that warm-up and the rename
//! completeness scan share: ignore-aware like ripgrep, hidden files and
//! symlinks left out, in path order, dependency and build folders skipped.

use std::path::Path;

/// Folders of dependencies and build output, never walked even when no
/// ignore file names them.
pub(crate) const SKIPPED_DIRS: &[&str] = &["node_modules", "__pycache__", "venv", "target"];

/// A walk of `root` (the caller may bound its depth).
pub(crate) fn source_walk(root: &Path) -> ignore::WalkBuilder {
    let mut walk = ignore::WalkBuilder::new(root);
    walk.require_git(false)
        .hidden(true)
        .follow_links(false)
        .sort_by_file_name(std::cmp::Ord::cmp)
        .filter_entry(|e| {
            !(e.file_type().is_some_and(|t| t.is_dir())
                && SKIPPED_DIRS.iter().any(|d| e.file_name() == *d))
        });
    walk
}
