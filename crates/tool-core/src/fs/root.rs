//! What the workspace root's handle does, by path relative to it: open,
//! read, inspect, find a parent folder (making it) and write.

use super::{
    components, kind_of, open_beneath, open_child_dir, regular, DirHandle, FileKind, FsError,
    Opened, RegularFile, Root, WriteLog,
};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

impl Root {
    /// Open the directory handle of `path`, which must be a directory (the
    /// canonical workspace root).
    pub fn new(path: &Path) -> io::Result<Root> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Root {
            path: path.to_path_buf(),
            fd: Arc::new(fd),
            writes: Arc::default(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the run's tools wrote or removed through this root (and its
    /// clones) so far.
    pub fn writes(&self) -> &Arc<WriteLog> {
        &self.writes
    }

    /// `path` (absolute inside the root, or relative to it) relative to the
    /// root, and as the model reads it.
    fn relative<'a>(&self, path: &'a Path) -> Result<(&'a Path, String), FsError> {
        let rel = if path.is_absolute() {
            path.strip_prefix(&self.path)
                .map_err(|_| FsError::LinkInPath {
                    path: path.display().to_string(),
                })?
        } else {
            path
        };
        let shown = rel.to_string_lossy().into_owned();
        if components(rel).is_err() {
            return Err(FsError::LinkInPath { path: shown });
        }
        Ok((rel, shown))
    }

    /// Open what `path` names: a regular file or a directory. Anything else
    /// is refused with its kind.
    pub fn open(&self, path: &Path) -> Result<Opened, FsError> {
        let (rel, shown) = self.relative(path)?;
        let flags = OFlags::RDONLY | OFlags::NONBLOCK;
        let fd = match open_beneath(self.fd.as_fd(), rel, flags) {
            Ok(fd) => fd,
            Err(e) => return Err(self.open_failure(rel, e, shown)),
        };
        let (kind, _, _) =
            kind_of(fd.as_fd()).map_err(|e| FsError::from_errno(e, &shown, "inspect"))?;
        match kind {
            FileKind::Directory => Ok(Opened::Dir(DirHandle {
                fd,
                shown,
                writes: Some(self.writes.clone()),
            })),
            _ => regular(fd, shown).map(Opened::File),
        }
    }

    /// Why an open beneath failed: the kind where the path names something
    /// that cannot be opened for reading (a socket), else the errno's words.
    fn open_failure(&self, rel: &Path, e: Errno, shown: String) -> FsError {
        if matches!(
            e,
            Errno::NXIO | Errno::OPNOTSUPP | Errno::ACCESS | Errno::PERM
        ) {
            if let Ok(fd) = open_beneath(self.fd.as_fd(), rel, OFlags::PATH) {
                if let Ok((kind, _, _)) = kind_of(fd.as_fd()) {
                    if kind != FileKind::Regular {
                        return FsError::NotRegular { path: shown, kind };
                    }
                }
            }
        }
        FsError::from_errno(e, &shown, "open")
    }

    /// Open the regular file `path` for reading.
    pub fn open_file(&self, path: &Path) -> Result<RegularFile, FsError> {
        match self.open(path)? {
            Opened::File(f) => Ok(f),
            Opened::Dir(d) => Err(FsError::NotRegular {
                path: d.shown,
                kind: FileKind::Directory,
            }),
        }
    }

    /// The content of the regular file `path`, refused over `max` bytes
    /// before a byte is read.
    pub fn read(&self, path: &Path, max: u64) -> Result<Vec<u8>, FsError> {
        self.open_file(path)?.read_capped(max)
    }

    /// Like [`read`](Self::read); `None` when the file (or a parent folder)
    /// does not exist.
    pub fn read_if_exists(&self, path: &Path, max: u64) -> Result<Option<Vec<u8>>, FsError> {
        match self.read(path, max) {
            Ok(b) => Ok(Some(b)),
            Err(FsError::NotFound { .. }) => Ok(None),
            Err(FsError::Io { source, .. }) if source.kind() == io::ErrorKind::NotADirectory => {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// What `path` names, not following a final link; `None` when absent.
    pub fn kind(&self, path: &Path) -> Result<Option<FileKind>, FsError> {
        let (rel, shown) = self.relative(path)?;
        match open_beneath(self.fd.as_fd(), rel, OFlags::PATH | OFlags::NOFOLLOW) {
            Ok(fd) => kind_of(fd.as_fd())
                .map(|(k, _, _)| Some(k))
                .map_err(|e| FsError::from_errno(e, &shown, "inspect")),
            Err(Errno::NOENT | Errno::NOTDIR) => Ok(None),
            Err(e) => Err(FsError::from_errno(e, &shown, "inspect")),
        }
    }

    /// The directory holding `path` and `path`'s last name. With `create`,
    /// missing folders are made (`mkdirat`, one component at a time, no link
    /// followed); without, a missing folder is `NotFound`.
    pub fn parent(&self, path: &Path, create: bool) -> Result<(DirHandle, OsString), FsError> {
        let (rel, shown) = self.relative(path)?;
        let names = components(rel).map_err(|e| FsError::from_errno(e, &shown, "open"))?;
        let Some((last, parents)) = names.split_last() else {
            return Err(FsError::NotRegular {
                path: ".".into(),
                kind: FileKind::Directory,
            });
        };
        let parent_shown = parents
            .iter()
            .map(|n| n.to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let fd = if create {
            let mut held: Option<OwnedFd> = None;
            for (i, name) in parents.iter().enumerate() {
                let at = held.as_ref().map_or(self.fd.as_fd(), |f| f.as_fd());
                let here = || {
                    parents[..=i]
                        .iter()
                        .map(|n| n.to_string_lossy())
                        .collect::<Vec<_>>()
                        .join("/")
                };
                let next = match open_child_dir(at, name) {
                    Err(Errno::NOENT) => {
                        match rustix::fs::mkdirat(at, *name, Mode::from_raw_mode(0o777)) {
                            Ok(()) | Err(Errno::EXIST) => {}
                            Err(e) => return Err(FsError::from_errno(e, &here(), "create folder")),
                        }
                        open_child_dir(at, name)
                    }
                    other => other,
                }
                .map_err(|e| match e {
                    Errno::NOTDIR => FsError::Io {
                        path: here(),
                        action: "create a file under",
                        source: io::Error::other("it is not a directory"),
                    },
                    e => FsError::from_errno(e, &here(), "open folder"),
                })?;
                held = Some(next);
            }
            match held {
                Some(fd) => fd,
                None => rustix::fs::openat(
                    &*self.fd,
                    ".",
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(|e| FsError::from_errno(e, ".", "open"))?,
            }
        } else {
            let parent_rel: PathBuf = parents.iter().collect();
            open_beneath(
                self.fd.as_fd(),
                &parent_rel,
                OFlags::RDONLY | OFlags::DIRECTORY,
            )
            .map_err(|e| {
                FsError::from_errno(
                    e,
                    if parent_shown.is_empty() {
                        "."
                    } else {
                        &parent_shown
                    },
                    "open folder",
                )
            })?
        };
        Ok((
            DirHandle {
                fd,
                shown: parent_shown,
                writes: Some(self.writes.clone()),
            },
            last.to_os_string(),
        ))
    }

    /// Write `bytes` to `path` atomically, making missing parent folders;
    /// only a regular file (or nothing) at `path` is replaced.
    pub fn write(&self, path: &Path, bytes: &[u8]) -> Result<(), FsError> {
        let (dir, name) = self.parent(path, true)?;
        dir.replace_child(&name, bytes)
    }
}
