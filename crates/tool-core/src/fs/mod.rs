//! Files of the workspace, opened through handles and never by name twice.
//!
//! [`Workspace::resolve`](crate::Workspace::resolve) checks a user's path by
//! name and gives the messages; this module does every later step on handles
//! held from the workspace root's directory handle ([`Root`]), so a symlink
//! swapped in after the check cannot lead anywhere else.
//!
//! Invariants:
//! - A path is opened beneath the root's handle, and no symbolic link is
//!   followed on the way: the resolved path is already canonical, so a link
//!   met now appeared after the check and the open is refused. Where the
//!   kernel has `openat2` (Linux 5.6+) it is called with `RESOLVE_BENEATH |
//!   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`; where it answers `ENOSYS`
//!   the path is walked one component at a time with `openat(O_NOFOLLOW)`.
//!   Both come from `rustix` (its `openat2` wrapper and `ResolveFlags`),
//!   not hand-written syscalls.
//! - Only regular files are read or replaced. Files are opened with
//!   `O_NONBLOCK | O_NOCTTY` (opening a FIFO cannot block), then `fstat` of
//!   the handle decides: a FIFO, socket, device or directory is refused with
//!   its kind. Sizes are decided on the handle before a byte is read, and a
//!   read never takes more than the cap, even from a file that grows.
//! - A write goes to a temporary file created (`O_CREAT | O_EXCL`) in the
//!   target's directory handle, is fsynced, `renameat`-ed over the target
//!   within that handle, and the directory fsynced; the replaced file's
//!   permission bits are kept. Missing parent folders are made with
//!   `mkdirat` one component at a time, never through a link.
//! - Temporary files are named `.agent-tools-<pid>-<n>.tmp`, a name no user
//!   file has. A directory's stale ones (their process is gone, or the name
//!   is the older `.<name>.<pid>.<n>.agent-tools.tmp`) are removed the first
//!   time this process writes into it, and [`Root::sweep_stale_temps`] sweeps
//!   a bounded part of the tree when a host starts.
//!
//! Not covered: a directory moved elsewhere while a handle to it is held is
//! still written through that handle (the mover could write there anyway).
//!
//! Rooms: `beneath` (opening beneath a handle: `openat2` or the component
//! walk), `dir` (what a directory handle does: read, replace, remove, list),
//! `root` (the same from the workspace root, by path), `temp` (temporary
//! file names and the stale-temp sweep), `own_file` (our own files outside
//! any workspace), `write_log` (what the run's tools wrote, for caches).

mod beneath;
mod dir;
mod own_file;
mod root;
mod temp;
#[cfg(test)]
mod tests;
mod write_log;

use beneath::{components, kind_of, open_beneath, open_child_dir};
pub use beneath::{force_component_walk, uses_openat2};
pub use own_file::{read_own_file, write_own_file};
use temp::temp_name;
pub use temp::temp_owner;
pub use write_log::{WriteLog, WritesSince};

use rustix::fs::FileType;
use rustix::io::Errno;
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;

/// What a path names, as `fstat`/`lstat` report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Regular,
    Directory,
    Symlink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    Unknown,
}

impl FileKind {
    fn of(t: FileType) -> FileKind {
        match t {
            FileType::RegularFile => FileKind::Regular,
            FileType::Directory => FileKind::Directory,
            FileType::Symlink => FileKind::Symlink,
            FileType::Fifo => FileKind::Fifo,
            FileType::Socket => FileKind::Socket,
            FileType::CharacterDevice => FileKind::CharDevice,
            FileType::BlockDevice => FileKind::BlockDevice,
            _ => FileKind::Unknown,
        }
    }

    fn of_mode(mode: u32) -> FileKind {
        FileKind::of(FileType::from_raw_mode(mode))
    }

    /// "a FIFO", "a directory", … for messages.
    pub fn a(self) -> &'static str {
        match self {
            FileKind::Regular => "a regular file",
            FileKind::Directory => "a directory",
            FileKind::Symlink => "a symbolic link",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Unknown => "a special file",
        }
    }
}

/// Why a file could not be opened, read or written; `path` as the model
/// reads it (relative to the root).
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error("`{path}` does not exist in the workspace")]
    NotFound { path: String },
    #[error("`{path}` is {}, not a regular file", .kind.a())]
    NotRegular { path: String, kind: FileKind },
    #[error("`{path}` is {len} bytes, over the limit of {max} bytes")]
    TooLarge { path: String, len: u64, max: u64 },
    #[error("`{path}` has a symbolic link in its path that was not there when the path was checked; nothing was read or written through it")]
    LinkInPath { path: String },
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        path: String,
        action: &'static str,
        source: io::Error,
    },
}

impl FsError {
    pub fn path(&self) -> &str {
        match self {
            FsError::NotFound { path }
            | FsError::NotRegular { path, .. }
            | FsError::TooLarge { path, .. }
            | FsError::LinkInPath { path }
            | FsError::Io { path, .. } => path,
        }
    }

    fn from_errno(e: Errno, path: &str, action: &'static str) -> FsError {
        let path = path.to_string();
        match e {
            Errno::NOENT => FsError::NotFound { path },
            Errno::LOOP | Errno::XDEV => FsError::LinkInPath { path },
            Errno::ISDIR => FsError::NotRegular {
                path,
                kind: FileKind::Directory,
            },
            e => FsError::Io {
                path,
                action,
                source: e.into(),
            },
        }
    }
}

impl From<FsError> for crate::ToolError {
    fn from(e: FsError) -> Self {
        match e {
            FsError::NotFound { path } => crate::ToolError::bad_args(format!(
                "`{path}` does not exist in the workspace; check the path (relative to the workspace root)"
            )),
            e @ FsError::NotRegular { .. } => {
                crate::ToolError::bad_args(format!("{e}; these tools work on regular files only"))
            }
            e @ FsError::TooLarge { .. } => crate::ToolError::bad_args(e.to_string()),
            e @ FsError::LinkInPath { .. } => crate::ToolError::refused(e.to_string()),
            e @ FsError::Io { .. } => crate::ToolError::failed(e.to_string()),
        }
    }
}

/// The workspace root's directory handle: every open starts here.
///
/// Two roots are equal when their paths are (a `Workspace` compares by path).
#[derive(Clone)]
pub struct Root {
    path: PathBuf,
    fd: Arc<OwnedFd>,
    /// Shared by every clone and every directory handle made from it.
    writes: Arc<WriteLog>,
}

impl fmt::Debug for Root {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Root").field("path", &self.path).finish()
    }
}

impl PartialEq for Root {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl Eq for Root {}

/// What a path names, opened: a regular file or a directory.
#[derive(Debug)]
pub enum Opened {
    File(RegularFile),
    Dir(DirHandle),
}

/// An open regular file, with the size `fstat` gave.
#[derive(Debug)]
pub struct RegularFile {
    file: File,
    len: u64,
    shown: String,
}

impl RegularFile {
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `fstat` of the open file (sizes, times, inode), for caches that
    /// must tell later whether the file changed.
    pub fn metadata(&self) -> io::Result<std::fs::Metadata> {
        self.file.metadata()
    }

    /// The whole file, refused unopened when it is over `max` bytes (by its
    /// `fstat` size, or because it grew past `max` while read).
    pub fn read_capped(mut self, max: u64) -> Result<Vec<u8>, FsError> {
        if self.len > max {
            return Err(FsError::TooLarge {
                path: self.shown,
                len: self.len,
                max,
            });
        }
        let mut buf = Vec::with_capacity(self.len as usize);
        (&mut self.file)
            .take(max + 1)
            .read_to_end(&mut buf)
            .map_err(|source| FsError::Io {
                path: self.shown.clone(),
                action: "read",
                source,
            })?;
        if buf.len() as u64 > max {
            return Err(FsError::TooLarge {
                path: self.shown,
                len: buf.len() as u64,
                max,
            });
        }
        Ok(buf)
    }
}

/// A directory's handle.
#[derive(Debug)]
pub struct DirHandle {
    fd: OwnedFd,
    /// The directory as the model reads it ("" for the root).
    shown: String,
    /// The root's log, when this folder is inside a workspace root.
    writes: Option<Arc<WriteLog>>,
}

fn join_shown(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

fn regular(fd: OwnedFd, shown: String) -> Result<RegularFile, FsError> {
    let (kind, len, _) =
        kind_of(fd.as_fd()).map_err(|e| FsError::from_errno(e, &shown, "inspect"))?;
    if kind != FileKind::Regular {
        return Err(FsError::NotRegular { path: shown, kind });
    }
    Ok(RegularFile {
        file: File::from(fd),
        len,
        shown,
    })
}
