//! Every change of workspace files: a transaction over one or more files
//! that applies to all of them or to none.
//!
//! Invariants: every file is reached through the workspace root's handle
//! (see [`crate::fs`]: no link followed, only regular files), and written
//! atomically there (temporary file in the same directory handle, fsync,
//! `renameat`), permissions kept. A transaction opens every target's
//! directory once, checks through those handles that every file still holds
//! the content it was prepared against and is still a regular file (one that
//! became a link or a directory is refused), writes through the same
//! handles, and puts back the ones it already wrote if a later write fails.

use crate::fs::{DirHandle, FileKind, FsError, Root};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// One file's part in a [`FileTransaction`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Inside the transaction's root.
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
    /// A target is no longer a regular file (or no longer reachable without
    /// following a link); nothing was written.
    #[error("{source}; it changed since the edit was prepared, so nothing was written")]
    NotAFile { path: PathBuf, source: FsError },
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

/// A change to several files beneath one root that applies to all or none.
#[derive(Debug, Clone)]
pub struct FileTransaction {
    root: Root,
    changes: Vec<FileChange>,
}

/// A target's directory handle (none while a parent folder is missing) and
/// its name there.
struct Target {
    dir: Option<DirHandle>,
    name: OsString,
}

fn io_error(e: FsError) -> io::Error {
    match e {
        FsError::Io { source, .. } => source,
        other => io::Error::other(other.to_string()),
    }
}

impl Target {
    fn open(root: &Root, path: &Path) -> Result<Target, FsError> {
        match root.parent(path, false) {
            Ok((dir, name)) => Ok(Target {
                dir: Some(dir),
                name,
            }),
            // A missing parent folder, or one that is a file: the target does
            // not exist either.
            Err(FsError::NotFound { .. }) => Ok(Target::absent(path)),
            Err(FsError::Io { source, .. }) if source.kind() == io::ErrorKind::NotADirectory => {
                Ok(Target::absent(path))
            }
            Err(e) => Err(e),
        }
    }

    fn absent(path: &Path) -> Target {
        Target {
            dir: None,
            name: path.file_name().unwrap_or_default().to_os_string(),
        }
    }

    /// Whether the file still holds `expected`; a target that is not a
    /// regular file is an error.
    fn holds(&self, expected: &Option<Vec<u8>>) -> Result<bool, FsError> {
        let Some(dir) = &self.dir else {
            return Ok(expected.is_none());
        };
        match expected {
            None => match dir.child_kind(&self.name)? {
                None => Ok(true),
                Some((FileKind::Regular, _)) => Ok(false),
                Some((kind, _)) => Err(FsError::NotRegular {
                    path: dir.shown_child(&self.name),
                    kind,
                }),
            },
            Some(bytes) => match dir.read_child(&self.name, bytes.len() as u64) {
                Ok(Some(now)) => Ok(&now == bytes),
                Ok(None) | Err(FsError::TooLarge { .. }) => Ok(false),
                Err(e) => Err(e),
            },
        }
    }

    fn apply(&mut self, root: &Root, path: &Path, content: &Option<Vec<u8>>) -> io::Result<()> {
        match content {
            Some(bytes) => {
                if self.dir.is_none() {
                    let (dir, _) = root.parent(path, true).map_err(io_error)?;
                    self.dir = Some(dir);
                }
                let dir = self.dir.as_ref().expect("opened above");
                dir.replace_child(&self.name, bytes).map_err(io_error)
            }
            None => match &self.dir {
                None => Ok(()),
                Some(dir) => dir.remove_child(&self.name).map_err(io_error),
            },
        }
    }
}

impl FileTransaction {
    /// An empty transaction over files beneath `root`.
    pub fn new(root: &Root) -> Self {
        FileTransaction {
            root: root.clone(),
            changes: Vec::new(),
        }
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

    /// Open every target and check it: the files whose content is no longer
    /// what the change expects, or the first that is not a regular file.
    fn check(&self) -> Result<(Vec<Target>, Vec<PathBuf>), TransactionError> {
        let mut targets = Vec::new();
        let mut drifted = Vec::new();
        for c in &self.changes {
            let not_a_file = |source| TransactionError::NotAFile {
                path: c.path.clone(),
                source,
            };
            let t = Target::open(&self.root, &c.path).map_err(not_a_file)?;
            if !t.holds(&c.expected).map_err(not_a_file)? {
                drifted.push(c.path.clone());
            }
            targets.push(t);
        }
        Ok((targets, drifted))
    }

    /// The files whose content is no longer what the change expects.
    pub fn drifted(&self) -> Result<Vec<PathBuf>, TransactionError> {
        self.check().map(|(_, d)| d)
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
        let (mut targets, drifted) = self.check()?;
        if !drifted.is_empty() {
            return Err(TransactionError::Drifted(drifted));
        }
        for i in 0..self.changes.len() {
            let c = &self.changes[i];
            let result =
                before_write(i, c).and_then(|()| targets[i].apply(&self.root, &c.path, &c.new));
            if let Err(source) = result {
                let mut unrestored = Vec::new();
                let mut errors = Vec::new();
                for j in (0..i).rev() {
                    let done = &self.changes[j];
                    if let Err(e) = targets[j].apply(&self.root, &done.path, &done.expected) {
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
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    fn root(d: &tempfile::TempDir) -> Root {
        Root::new(&d.path().canonicalize().unwrap()).unwrap()
    }

    #[test]
    fn a_write_keeps_permissions_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let r = root(&d);
        let p = r.path().join("run.sh");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o751)).unwrap();
        r.write(&p, b"new").unwrap();
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
        r.write(&r.path().join("sub/new.txt"), b"x").unwrap();
        assert_eq!(fs::read(d.path().join("sub/new.txt")).unwrap(), b"x");
    }

    #[test]
    fn drift_in_any_file_writes_nothing() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        fs::write(&a, "a0").unwrap();
        fs::write(&b, "b0").unwrap();
        let mut tx = FileTransaction::new(&root(&d));
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
        let mut tx = FileTransaction::new(&root(&d));
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
        expect_test::expect!["writing <root>/blocker/b.txt failed (it is not a directory); every file already written was restored, nothing changed"].assert_eq(&err.to_string().replace(d.path().to_str().unwrap(), "<root>"));
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
        let mut tx = FileTransaction::new(&root(&d));
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

    /// A target replaced by a link (even to a file with the expected
    /// content) or by a folder after the change was prepared: refused, and
    /// nothing written.
    #[test]
    fn a_target_that_changed_kind_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.py"), d.path().join("b.py"));
        fs::write(&a, "a0").unwrap();
        fs::write(&b, "b0").unwrap();
        let mut tx = FileTransaction::new(&root(&d));
        tx.replace(a.clone(), b"a0".to_vec(), b"a1".to_vec());
        tx.replace(b.clone(), b"b0".to_vec(), b"b1".to_vec());
        fs::rename(&b, d.path().join("b.orig")).unwrap();
        std::os::unix::fs::symlink(d.path().join("b.orig"), &b).unwrap();
        let err = tx.commit().unwrap_err();
        assert!(
            matches!(&err, TransactionError::NotAFile { path, .. } if path == &b),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "`b.py` is a symbolic link, not a regular file; it changed since the edit was prepared, so nothing was written"
        );
        fs::remove_file(&b).unwrap();
        fs::create_dir(&b).unwrap();
        let err = tx.commit().unwrap_err();
        assert_eq!(
            err.to_string(),
            "`b.py` is a directory, not a regular file; it changed since the edit was prepared, so nothing was written"
        );
        assert_eq!(fs::read(&a).unwrap(), b"a0");
        assert_eq!(fs::read(d.path().join("b.orig")).unwrap(), b"b0");
        assert!(b.is_dir());
    }
}
