//! The walk over a root's source files that warm-up, the rename
//! completeness scan and the search for which languages a workspace holds
//! (lsp's and debug's doctor lines) share: ignore-aware like ripgrep, hidden files and
//! symlinks left out, in path order, dependency and build folders skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Folders of dependencies and build output, never walked even when no
/// ignore file names them.
pub const SKIPPED_DIRS: &[&str] = &["node_modules", "__pycache__", "venv", "target"];

/// A walk of `root` (the caller may bound its depth).
pub fn source_walk(root: &Path) -> ignore::WalkBuilder {
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

/// At most this many entries of a workspace are looked at to find which
/// languages it holds.
const MAX_WALKED: usize = 20_000;
/// Nor deeper than this.
const MAX_DEPTH: usize = 8;

/// The first file of each extension (as `.ext`) and each whole file name
/// under `root`: the shallowest, then the first in path order.
pub fn first_file_per_name(root: &Path) -> BTreeMap<String, PathBuf> {
    let mut first: BTreeMap<String, (usize, PathBuf)> = BTreeMap::new();
    let walk = source_walk(root).max_depth(Some(MAX_DEPTH)).build();
    for entry in walk.take(MAX_WALKED).flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let (path, depth) = (entry.path(), entry.depth());
        let mut keep = |key: String| {
            let slot = first.entry(key).or_insert((depth, path.to_path_buf()));
            if depth < slot.0 {
                *slot = (depth, path.to_path_buf());
            }
        };
        if let Some(ext) = path.extension() {
            keep(format!(".{}", ext.to_string_lossy()));
        }
        keep(entry.file_name().to_string_lossy().into_owned());
    }
    first.into_iter().map(|(k, (_, p))| (k, p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shallowest_file_of_each_extension_and_name_then_path_order() {
        let d = tempfile::tempdir().unwrap();
        for f in [
            "b/z.c",
            "a/y.c",
            "a/Makefile",
            "node_modules/x.ts",
            "s.sh",
            "a/b/t.sh",
            "w.c",
        ] {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let first = first_file_per_name(d.path());
        let shown: Vec<String> = first
            .iter()
            .map(|(k, p)| format!("{k} {}", p.strip_prefix(d.path()).unwrap().display()))
            .collect();
        assert_eq!(
            shown,
            [
                ".c w.c",
                ".sh s.sh",
                "Makefile a/Makefile",
                "s.sh s.sh",
                "t.sh a/b/t.sh",
                "w.c w.c",
                "y.c a/y.c",
                "z.c b/z.c"
            ]
        );
    }
}
