//! Warm-up: the servers a root will need, started before the first call
//! needs them, so the first write of a long run rarely finds them cold.
//!
//! A host that serves many calls on a surface that writes (`mcp`, `batch`)
//! asks for it once, right after binding. The root is walked shallowly,
//! ignore-aware and bounded ([`MAX_ENTRIES`] entries, [`MAX_DEPTH`] levels,
//! top-level files first); each file the catalog has a server for names the
//! slot that file's first call would use, and its linters (data and config
//! formats are left out). At most
//! [`MAX_SERVERS`] distinct servers are started, in the background; a
//! server that cannot start here (no binary, no project root) is skipped
//! without a word, and its first real call says why as it always does.

use crate::source_walk::source_walk;
use std::path::{Path, PathBuf};

/// Entries of the root looked at, at most.
pub const MAX_ENTRIES: usize = 2_000;
/// Folder levels below the root looked into.
pub const MAX_DEPTH: usize = 4;
/// Distinct servers (language servers and linters) a warm-up starts.
pub const MAX_SERVERS: usize = 6;
/// Data and configuration formats: their files are not looked at (every
/// project has a few, few runs write them, and their servers start fast
/// when a call asks).
pub const NOT_WARMED: &[&str] = &[
    "json", "jsonc", "yaml", "yml", "toml", "xml", "md", "markdown", "txt", "lock", "cfg", "ini",
];

/// The files of `root` a warm-up looks at, shallowest first, bounded.
/// Blocking: run it off the async threads.
pub fn candidate_files(root: &Path) -> Vec<PathBuf> {
    let walk = source_walk(root).max_depth(Some(MAX_DEPTH)).build();
    let mut files: Vec<(usize, PathBuf)> = walk
        .flatten()
        .take(MAX_ENTRIES)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter(|e| {
            !e.path()
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| NOT_WARMED.contains(&x))
        })
        .map(|e| (e.depth(), e.into_path()))
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    files.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shallow_files_come_first_and_skipped_folders_are_not_entered() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "b/deep.py",
            "a.ts",
            "node_modules/x/i.js",
            "z.py",
            "b/c/d.rs",
            "package.json",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let got: Vec<String> = candidate_files(root)
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(got, ["a.ts", "z.py", "b/deep.py", "b/c/d.rs"]);
    }
}
