//! Every file write of every tool: atomic single writes, and a transaction
//! over several files that applies to all of them or to none.
//!
//! Invariants: a file is never seen half-written (temporary file beside the
//! target, fsync, rename); its permissions survive; a transaction checks every
//! file still holds the content it was prepared against before touching any,
//! and puts back the ones it already wrote if a later write fails.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn temp_path_for(target: &Path) -> io::Result<PathBuf> {
    let dir = target
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    Ok(dir.join(format!(
        ".{}.{}.{n}.agent-tools.tmp",
        name.to_string_lossy(),
        std::process::id()
    )))
}

/// Write `contents` to `path` atomically, keeping the permissions of the file
/// it replaces (new files get the process default). Parent directories are
/// created.
pub fn atomic_write(path: &Path, contents: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    // Refuse to replace something we cannot write, as a plain write would.
    let old_perms = match fs::metadata(path) {
        Ok(m) => {
            if m.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("{} is a directory", path.display()),
                ));
            }
            fs::OpenOptions::new().write(true).open(path)?;
            Some(m.permissions())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let tmp = temp_path_for(path)?;
    let result = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(contents)?;
        if let Some(p) = &old_perms {
            f.set_permissions(fs::Permissions::from_mode(p.mode()))?;
        }
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        if let Some(parent) = path.parent() {
            if let Ok(d) = fs::File::open(parent) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// One file's part in a [`FileTransaction`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    /// What the file held when the change was prepared; `None`: it did not
    /// exist.
    pub expected: Option<Vec<u8>>,
    /// What it should hold; `None`: delete it.
    pub new: Option<Vec<u8>>,
}

/// Why a transaction wrote nothing (or put everything back).
#[derive(Debug, thiserror::Error)]
pub enum TransactionError {
    #[error("{} changed since the edit was prepared: {}; nothing was written", if .0.len() == 1 { "a file" } else { "files" }, .0.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    Drifted(Vec<PathBuf>),
    #[error("writing {path} failed ({source}); every file already written was restored, nothing changed")]
    WriteFailed { path: PathBuf, source: io::Error },
    #[error("writing {path} failed ({source}) and restoring {} failed too: {restore_errors}", .unrestored.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    RestoreFailed {
        path: PathBuf,
        source: io::Error,
        unrestored: Vec<PathBuf>,
        restore_errors: String,
    },
}

/// A change to several files that applies to all or none.
#[derive(Debug, Default, Clone)]
pub struct FileTransaction {
    changes: Vec<FileChange>,
}

fn current(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        // A path under a non-directory does not exist either.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

fn apply(path: &Path, content: &Option<Vec<u8>>) -> io::Result<()> {
    match content {
        Some(bytes) => atomic_write(path, bytes),
        None => match fs::remove_file(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        },
    }
}

impl FileTransaction {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, change: FileChange) {
        self.changes.push(change);
    }

    /// Replace `path`, which held `expected` when the change was prepared.
    pub fn replace(&mut self, path: PathBuf, expected: Vec<u8>, new: Vec<u8>) {
        self.push(FileChange {
            path,
            expected: Some(expected),
            new: Some(new),
        });
    }

    pub fn changes(&self) -> &[FileChange] {
        &self.changes
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The files whose content is no longer what the change expects.
    pub fn drifted(&self) -> io::Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for c in &self.changes {
            if current(&c.path)? != c.expected {
                out.push(c.path.clone());
            }
        }
        Ok(out)
    }

    /// Check every file, then write them in order; on a failed write, put back
    /// what was already written.
    pub fn commit(&self) -> Result<(), TransactionError> {
        self.commit_with(|_, _| Ok(()))
    }

    /// [`commit`](Self::commit), calling `before_write(i, change)` before the
    /// i-th file is written: where a caller records progress in a journal,
    /// and where tests inject a crash or a failed write. An error from it is
    /// handled exactly as a failed write of that file.
    pub fn commit_with(
        &self,
        mut before_write: impl FnMut(usize, &FileChange) -> io::Result<()>,
    ) -> Result<(), TransactionError> {
        let drifted = self
            .drifted()
            .map_err(|source| TransactionError::WriteFailed {
                path: PathBuf::from("(reading)"),
                source,
            })?;
        if !drifted.is_empty() {
            return Err(TransactionError::Drifted(drifted));
        }
        for (i, c) in self.changes.iter().enumerate() {
            if let Err(source) = before_write(i, c).and_then(|()| apply(&c.path, &c.new)) {
                let mut unrestored = Vec::new();
                let mut errors = Vec::new();
                for done in self.changes[..i].iter().rev() {
                    if let Err(e) = apply(&done.path, &done.expected) {
                        unrestored.push(done.path.clone());
                        errors.push(e.to_string());
                    }
                }
                return Err(if unrestored.is_empty() {
                    TransactionError::WriteFailed {
                        path: c.path.clone(),
                        source,
                    }
                } else {
                    TransactionError::RestoreFailed {
                        path: c.path.clone(),
                        source,
                        unrestored,
                        restore_errors: errors.join("; "),
                    }
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_keeps_permissions_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("run.sh");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o751)).unwrap();
        atomic_write(&p, b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o751
        );
        let names: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["run.sh"]);
        atomic_write(&d.path().join("sub/new.txt"), b"x").unwrap();
        assert_eq!(fs::read(d.path().join("sub/new.txt")).unwrap(), b"x");
    }

    #[test]
    fn drift_in_any_file_writes_nothing() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        fs::write(&a, "a0").unwrap();
        fs::write(&b, "b0").unwrap();
        let mut tx = FileTransaction::new();
        tx.replace(a.clone(), b"a0".to_vec(), b"a1".to_vec());
        tx.replace(b.clone(), b"b0".to_vec(), b"b1".to_vec());
        fs::write(&b, "b-changed").unwrap();
        let err = tx.commit().unwrap_err();
        assert!(
            matches!(&err, TransactionError::Drifted(p) if p == std::slice::from_ref(&b)),
            "{err}"
        );
        assert_eq!(fs::read(&a).unwrap(), b"a0");
        assert_eq!(fs::read(&b).unwrap(), b"b-changed");
    }

    /// The middle target cannot be written by anyone, root included: its
    /// parent "directory" is a regular file. (A read-only mode would not stop
    /// root, and CI runs as root.)
    #[test]
    fn an_unwritable_file_in_the_middle_restores_the_ones_before() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a.txt");
        let c = d.path().join("c.txt");
        fs::write(&a, "a0").unwrap();
        fs::write(&c, "c0").unwrap();
        fs::write(d.path().join("blocker"), "not a directory").unwrap();
        let unwritable = d.path().join("blocker/b.txt");
        let created = d.path().join("created.txt");
        let mut tx = FileTransaction::new();
        tx.replace(a.clone(), b"a0".to_vec(), b"a1".to_vec());
        tx.push(FileChange {
            path: created.clone(),
            expected: None,
            new: Some(b"n".to_vec()),
        });
        tx.push(FileChange {
            path: unwritable.clone(),
            expected: None,
            new: Some(b"b1".to_vec()),
        });
        tx.replace(c.clone(), b"c0".to_vec(), b"c1".to_vec());
        let err = tx.commit().unwrap_err();
        match &err {
            TransactionError::WriteFailed { path, .. } => assert_eq!(path, &unwritable),
            other => panic!("expected a write failure, got {other}"),
        }
        assert!(err.to_string().contains("restored"), "{err}");
        assert_eq!(fs::read(&a).unwrap(), b"a0");
        assert!(!created.exists());
        assert_eq!(fs::read(&c).unwrap(), b"c0");
        let names: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 3, "no temporary files left: {names:?}");
    }

    #[test]
    fn deletes_and_creates_apply_together() {
        let d = tempfile::tempdir().unwrap();
        let old = d.path().join("old.rs");
        let new = d.path().join("new.rs");
        fs::write(&old, "fn a() {}").unwrap();
        let mut tx = FileTransaction::new();
        tx.push(FileChange {
            path: old.clone(),
            expected: Some(b"fn a() {}".to_vec()),
            new: None,
        });
        tx.push(FileChange {
            path: new.clone(),
            expected: None,
            new: Some(b"fn a() {}".to_vec()),
        });
        tx.commit().unwrap();
        assert!(!old.exists());
        assert_eq!(fs::read(&new).unwrap(), b"fn a() {}");
    }
}
