//! The run's scratch folder for eval: where a display value or an image too
//! big for an answer is saved, so the answer names a file instead of losing
//! what did not fit.
//!
//! Invariants: the folder is made on first use (mode 0700, under the
//! system's temp dir, never in the workspace), every saved file gets a name
//! no other save of this run uses, and the folder is removed with the tool
//! (when the run ends).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// One run's scratch folder.
#[derive(Debug, Default)]
pub struct Scratch {
    dir: Mutex<Option<PathBuf>>,
    saved: AtomicU64,
}

impl Scratch {
    pub fn new() -> Self {
        Self::default()
    }

    /// Save `bytes` as `<n>-<name>` and return its path.
    pub fn save(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
        let dir = self.dir()?;
        let n = self.saved.fetch_add(1, Ordering::Relaxed) + 1;
        let path = dir.join(format!("{n}-{name}"));
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }

    fn dir(&self) -> Result<PathBuf, String> {
        let mut dir = self
            .dir
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(d) = &*dir {
            return Ok(d.clone());
        }
        let path = tool_core::scratch::make_dir("eval")
            .map_err(|e| format!("cannot make the scratch folder: {e}"))?;
        *dir = Some(path.clone());
        Ok(path)
    }

    /// The folder, once something was saved.
    pub fn path(&self) -> Option<PathBuf> {
        self.dir
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
