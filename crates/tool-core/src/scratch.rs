//! Scratch folders: private folders under the system's temp dir that a run
//! keeps files in that belong to no workspace (a debuggee's stdin, eval's
//! saved images, a language server's own cache and daemon socket).
//!
//! Invariants: every folder is new (its name holds this process's id and a
//! number no other folder of the process uses), made with mode 0700, never
//! inside a workspace; a [`ScratchDir`] removes its folder when dropped.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Numbers the scratch folders of this process.
static MADE: AtomicU64 = AtomicU64::new(0);

/// Make a new private folder `agent-tools-<label>-<pid>-<n>` under the temp
/// dir and return its path; the caller removes it.
pub fn make_dir(label: &str) -> std::io::Result<PathBuf> {
    let path = std::env::temp_dir().join(format!(
        "agent-tools-{label}-{}-{}",
        std::process::id(),
        MADE.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&path)?;
    Ok(path)
}

/// A scratch folder removed, with everything in it, when this is dropped.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// A new folder (see [`make_dir`]).
    pub fn create(label: &str) -> std::io::Result<Self> {
        make_dir(label).map(|path| ScratchDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn each_folder_is_new_private_and_removed_when_dropped() {
        let a = ScratchDir::create("test").unwrap();
        let b = ScratchDir::create("test").unwrap();
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::write(a.path().join("socket"), b"x").unwrap();
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
        assert!(b.path().is_dir());
    }
}
