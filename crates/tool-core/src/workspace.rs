//! The run's workspace root, and the one place user paths are resolved.
//!
//! Invariant: every path this returns is inside the root after symlinks are
//! followed. `..` that climbs out, absolute paths elsewhere, and symlinks whose
//! target leaves the root are refused with an error that says so.
//!
//! This is the check by name, and the source of the messages; a resolved path
//! is never opened by name afterwards. Files are opened through
//! [`Workspace::dir`], the root's directory handle (see [`crate::fs`]), which
//! refuses any symlink met on the way, so one swapped in after the check
//! leads nowhere.

use crate::fs::Root;
use crate::ToolError;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
    dir: Root,
}

/// Folders the start-up sweep of stale temporary files visits at most.
pub const SWEEP_MAX_DIRS: usize = 2000;

impl Workspace {
    /// `root` must exist; it is canonicalized once and its directory handle
    /// opened.
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Self> {
        let root = root.as_ref().canonicalize()?;
        let dir = Root::new(&root)?;
        Ok(Workspace { root, dir })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root's directory handle: every file of the workspace is opened
    /// and written through it.
    pub fn dir(&self) -> &Root {
        &self.dir
    }

    /// Remove temporary files that runs of ours killed mid-write left
    /// behind (a bounded walk; see [`Root::sweep_stale_temps`]).
    pub fn sweep_stale_temps(&self) -> usize {
        self.dir.sweep_stale_temps(SWEEP_MAX_DIRS)
    }

    /// [`resolve`](Self::resolve) a path that must name a file: one ending
    /// in `/` names a directory and is refused.
    pub fn resolve_file(&self, user: &str) -> Result<PathBuf, ToolError> {
        if user.ends_with('/') || user.ends_with("/.") || user == "." {
            return Err(ToolError::bad_args(format!(
                "`{user}` is a directory path; give a file (without the trailing `/`)"
            )));
        }
        self.resolve(user)
    }

    /// Resolve a path the user (or model) gave, relative to the root or
    /// absolute inside it. It need not exist.
    pub fn resolve(&self, user: &str) -> Result<PathBuf, ToolError> {
        if user.is_empty() {
            return Err(ToolError::bad_args(
                "empty path; give a path relative to the workspace root",
            ));
        }
        if user.contains('\0') {
            return Err(ToolError::bad_args("path contains a NUL byte"));
        }
        let given = Path::new(user);
        let joined = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.root.join(given)
        };
        // Lexical normalization first: `..` may not climb above the root.
        let mut normal = PathBuf::new();
        for comp in joined.components() {
            match comp {
                Component::ParentDir => {
                    if !normal.pop() || !normal.starts_with(&self.root) {
                        return Err(self.outside(user));
                    }
                }
                Component::CurDir => {}
                other => normal.push(other.as_os_str()),
            }
        }
        if !normal.starts_with(&self.root) {
            return Err(self.outside(user));
        }
        // Then follow symlinks on the part that exists.
        let mut existing = normal.as_path();
        let mut rest = Vec::new();
        loop {
            match existing.symlink_metadata() {
                Ok(_) => break,
                Err(_) => match (existing.parent(), existing.file_name()) {
                    (Some(parent), Some(name)) => {
                        rest.push(name.to_os_string());
                        existing = parent;
                    }
                    _ => return Err(self.outside(user)),
                },
            }
        }
        let canonical = existing
            .canonicalize()
            .map_err(|e| ToolError::bad_args(format!("cannot resolve `{user}`: {e}")))?;
        if !canonical.starts_with(&self.root) {
            return Err(ToolError::bad_args(format!(
                "`{user}` leads outside the workspace through a symlink (to {}); only paths inside {} can be used",
                canonical.display(),
                self.root.display()
            )));
        }
        let mut out = canonical;
        for name in rest.into_iter().rev() {
            out.push(name);
        }
        Ok(out)
    }

    /// Like [`resolve`](Self::resolve), and the path must exist.
    pub fn resolve_existing(&self, user: &str) -> Result<PathBuf, ToolError> {
        let p = self.resolve(user)?;
        if !p.exists() {
            return Err(ToolError::bad_args(format!(
                "`{user}` does not exist in the workspace; check the path (relative to the workspace root)"
            )));
        }
        Ok(p)
    }

    /// A path inside the root as the model should read it: relative, with `/`.
    pub fn relative(&self, path: &Path) -> String {
        let p = path.strip_prefix(&self.root).unwrap_or(path);
        let s = p.to_string_lossy().replace('\\', "/");
        if s.is_empty() {
            ".".into()
        } else {
            s
        }
    }

    pub fn contains(&self, path: &Path) -> bool {
        path.starts_with(&self.root)
    }

    fn outside(&self, user: &str) -> ToolError {
        ToolError::bad_args(format!(
            "`{user}` is outside the workspace; only paths inside {} can be used (give them relative to it)",
            self.root.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
        std::fs::write(dir.path().join("src/a.py"), "x").unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn inside_paths_resolve() {
        let (_d, ws) = ws();
        let p = ws.resolve("src/a.py").unwrap();
        assert_eq!(ws.relative(&p), "src/a.py");
        let p = ws.resolve("src/deep/../a.py").unwrap();
        assert_eq!(ws.relative(&p), "src/a.py");
        let p = ws.resolve("src/new/file.rs").unwrap();
        assert_eq!(ws.relative(&p), "src/new/file.rs");
        let abs = ws.root().join("src/a.py");
        assert_eq!(ws.resolve(abs.to_str().unwrap()).unwrap(), abs);
        assert_eq!(ws.relative(ws.root()), ".");
    }

    #[test]
    fn every_escape_is_refused() {
        let (d, ws) = ws();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("src/link")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", d.path().join("pw")).unwrap();
        for bad in [
            "../x",
            "src/../../x",
            "/etc/passwd",
            "src/link",
            "src/link/new.txt",
            "pw",
            "",
        ] {
            let err = ws.resolve(bad).unwrap_err();
            assert!(matches!(err, ToolError::BadArgs(_)), "{bad}: {err}");
            let msg = err.to_string();
            assert!(
                msg.contains("outside the workspace") || msg.contains("empty path"),
                "{bad}: {msg}"
            );
        }
        assert!(ws
            .resolve_existing("src/missing.py")
            .unwrap_err()
            .to_string()
            .contains("does not exist"));
    }
}
