//! Files of our own outside any workspace (state and journal folders, a
//! library source a language server pointed at), by name.

use super::{regular, DirHandle, FsError};
use rustix::fs::{Mode, OFlags};
use std::io::{self};
use std::path::Path;

/// Write `contents` to `path` atomically, by name: for files of our own
/// (state and journal folders outside any workspace). Workspace files go
/// through [`Root::write`].
pub fn write_own_file(path: &Path, contents: &[u8]) -> io::Result<()> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    std::fs::create_dir_all(parent)?;
    let dir = DirHandle {
        writes: None,
        fd: rustix::fs::open(
            parent,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?,
        shown: parent.display().to_string(),
    };
    dir.replace_child(name, contents).map_err(|e| match e {
        FsError::Io { source, .. } => source,
        other => io::Error::other(other.to_string()),
    })
}

/// Read a regular file outside the workspace by name (a library source a
/// language server pointed at), with `O_NONBLOCK`, refusing anything that
/// is not a regular file or is over `max` bytes.
pub fn read_own_file(path: &Path, max: u64) -> Result<Vec<u8>, FsError> {
    let shown = path.display().to_string();
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| FsError::from_errno(e, &shown, "open"))?;
    regular(fd, shown)?.read_capped(max)
}
