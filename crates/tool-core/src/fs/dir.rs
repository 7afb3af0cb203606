//! What a directory handle does: inspect, open, read, replace and remove
//! its children, and list them.

use super::{join_shown, regular, temp_name, DirHandle, FileKind, FsError, RegularFile};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;

impl DirHandle {
    pub(crate) fn shown_child(&self, name: &OsStr) -> String {
        join_shown(&self.shown, &name.to_string_lossy())
    }

    /// Tell the root's [`WriteLog`](super::WriteLog) that `shown` changed.
    fn noted(&self, shown: &str) {
        if let Some(log) = &self.writes {
            log.note(shown);
        }
    }

    /// The kind and permission bits of `name` here, not following a link;
    /// `None` when absent.
    pub fn child_kind(&self, name: &OsStr) -> Result<Option<(FileKind, u32)>, FsError> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some((FileKind::of_mode(st.st_mode), st.st_mode & 0o7777))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(FsError::from_errno(e, &self.shown_child(name), "inspect")),
        }
    }

    /// Open the regular file `name` here for reading (no link followed).
    pub fn open_file(&self, name: &OsStr) -> Result<RegularFile, FsError> {
        let shown = self.shown_child(name);
        let flags =
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::CLOEXEC;
        match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => regular(fd, shown),
            Err(e) => Err(self.open_failure(name, e, shown)),
        }
    }

    /// Why an open failed, naming the kind where it is not a regular file.
    fn open_failure(&self, name: &OsStr, e: Errno, shown: String) -> FsError {
        if let Ok(Some((kind, _))) = self.child_kind(name) {
            if kind != FileKind::Regular {
                return FsError::NotRegular { path: shown, kind };
            }
        }
        FsError::from_errno(e, &shown, "open")
    }

    /// `name`'s content if it is a regular file of at most `max` bytes,
    /// `None` if absent.
    pub fn read_child(&self, name: &OsStr, max: u64) -> Result<Option<Vec<u8>>, FsError> {
        match self.open_file(name) {
            Ok(f) => f.read_capped(max).map(Some),
            Err(FsError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Replace (or create) the regular file `name` here with `bytes`,
    /// atomically, keeping its permission bits. Anything else at `name` (a
    /// directory, a link, a FIFO) is refused and left alone.
    pub fn replace_child(&self, name: &OsStr, bytes: &[u8]) -> Result<(), FsError> {
        self.sweep_once();
        let shown = self.shown_child(name);
        let io_err = |action: &'static str| {
            let shown = shown.clone();
            move |e: Errno| FsError::from_errno(e, &shown, action)
        };
        let old_mode = match self.child_kind(name)? {
            None => None,
            Some((FileKind::Regular, mode)) => {
                // Refuse to replace what we may not write, as a plain write
                // would (O_NONBLOCK: it may have become a FIFO since).
                let flags = OFlags::WRONLY
                    | OFlags::NONBLOCK
                    | OFlags::NOFOLLOW
                    | OFlags::NOCTTY
                    | OFlags::CLOEXEC;
                let fd = rustix::fs::openat(&self.fd, name, flags, Mode::empty())
                    .map_err(|e| self.open_failure(name, e, shown.clone()))?;
                regular(fd, shown.clone())?;
                Some(mode)
            }
            Some((kind, _)) => {
                return Err(FsError::NotRegular {
                    path: shown.clone(),
                    kind,
                })
            }
        };
        let tmp = temp_name();
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NOCTTY;
        let fd = rustix::fs::openat(&self.fd, tmp.as_str(), flags, Mode::from_raw_mode(0o666))
            .map_err(io_err("create a temporary file beside"))?;
        let result = (|| {
            let mut file = File::from(fd);
            file.write_all(bytes).map_err(|source| FsError::Io {
                path: shown.clone(),
                action: "write",
                source,
            })?;
            if let Some(mode) = old_mode {
                rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))
                    .map_err(io_err("keep the permissions of"))?;
            }
            file.sync_all().map_err(|source| FsError::Io {
                path: shown.clone(),
                action: "sync",
                source,
            })?;
            drop(file);
            rustix::fs::renameat(&self.fd, tmp.as_str(), &self.fd, name)
                .map_err(io_err("replace"))?;
            Ok(())
        })();
        if result.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, tmp.as_str(), AtFlags::empty());
        } else {
            let _ = rustix::fs::fsync(&self.fd);
            self.noted(&shown);
        }
        result
    }

    /// Remove the file `name` here (absent is fine); a directory is refused.
    pub fn remove_child(&self, name: &OsStr) -> Result<(), FsError> {
        let shown = self.shown_child(name);
        match self.child_kind(name)? {
            None => Ok(()),
            Some((FileKind::Directory, _)) => Err(FsError::NotRegular {
                path: shown,
                kind: FileKind::Directory,
            }),
            Some(_) => match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {
                    let _ = rustix::fs::fsync(&self.fd);
                    self.noted(&shown);
                    Ok(())
                }
                Err(e) => Err(FsError::from_errno(e, &shown, "remove")),
            },
        }
    }

    /// The entries (name, kind), unsorted; `.` and `..` left out.
    pub fn entries(&self) -> Result<Vec<(OsString, FileKind)>, FsError> {
        let shown = if self.shown.is_empty() {
            "."
        } else {
            &self.shown
        };
        let err = |e: Errno| FsError::from_errno(e, shown, "list");
        let mut dir = rustix::fs::Dir::read_from(&self.fd).map_err(err)?;
        let mut out = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(err)?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => self
                    .child_kind(name)
                    .ok()
                    .flatten()
                    .map_or(FileKind::Unknown, |(k, _)| k),
                t => FileKind::of(t),
            };
            out.push((name.to_os_string(), kind));
        }
        Ok(out)
    }
}
