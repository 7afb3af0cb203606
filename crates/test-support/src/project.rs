//! Throwaway projects for a test to work in: a copy of a fixture project of
//! `tests/fixtures/`, or a folder holding the files a test lists.

use std::path::{Path, PathBuf};

/// `tests/fixtures/<family>/<name>` of this workspace.
pub fn fixture(family: &str, name: &str) -> PathBuf {
    crate::fixtures::workspace_root()
        .join("tests/fixtures")
        .join(family)
        .join(name)
}

/// A copy of [`fixture`]`(family, name)` in a fresh temporary folder named
/// `<family>-<name>-…`. A file `X.in` is written as `X` with `@DIR@`
/// replaced by the copy's canonical path (a compile database names its
/// folder).
pub fn copy_fixture(family: &str, name: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix(&format!("{family}-{name}-"))
        .tempdir()
        .unwrap();
    copy_dir(&fixture(family, name), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            copy_dir(&p, &to.join(&name));
        } else if let Some(stem) = name.strip_suffix(".in") {
            let text = std::fs::read_to_string(&p).unwrap();
            let dir = to.canonicalize().unwrap();
            std::fs::write(to.join(stem), text.replace("@DIR@", dir.to_str().unwrap())).unwrap();
        } else {
            std::fs::copy(&p, to.join(&name)).unwrap();
        }
    }
}

/// A fresh temporary folder named `<prefix>…` holding `files` (path
/// relative to it, text), their folders made as needed.
pub fn with_files(prefix: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}
