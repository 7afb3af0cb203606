//! Cargo packages as files name them: the package a source file belongs to
//! (the nearest `Cargo.toml` with a `[package]`, never above the workspace
//! root) and its name. Used where a tool must know the crate of a file
//! without asking cargo: the debugger's test builds, a rename's `$crate::`
//! paths.

use std::path::{Path, PathBuf};

/// The nearest folder from `file`'s up to `root` whose `Cargo.toml` has a
/// `[package]` (a virtual workspace manifest has none).
pub fn package_root(file: &Path, root: &Path) -> Option<PathBuf> {
    let mut dir = file.parent();
    while let Some(d) = dir {
        let manifest = d.join("Cargo.toml");
        if std::fs::read_to_string(&manifest).is_ok_and(|t| package_name(&t).is_some()) {
            return Some(d.to_path_buf());
        }
        if d == root || !d.starts_with(root) {
            break;
        }
        dir = d.parent();
    }
    None
}

/// `[package] name` of a manifest's text.
pub fn package_name(manifest: &str) -> Option<String> {
    let value: toml::Value = toml::from_str(manifest).ok()?;
    value
        .get("package")?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_package_is_the_nearest_manifest_with_a_package_inside_the_root() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::write(root.join("Cargo.toml"), "[workspace]\nmembers = [\"a\"]\n").unwrap();
        std::fs::create_dir_all(root.join("a/src/m")).unwrap();
        std::fs::write(root.join("a/Cargo.toml"), "[package]\nname = \"a\"\n").unwrap();
        assert_eq!(
            package_root(&root.join("a/src/m/x.rs"), root),
            Some(root.join("a"))
        );
        assert_eq!(package_root(&root.join("b/x.rs"), root), None);
        assert_eq!(
            package_name("[package]\nname = \"stats\"\n").as_deref(),
            Some("stats")
        );
        assert_eq!(package_name("[workspace]\nmembers = []\n"), None);
    }
}
