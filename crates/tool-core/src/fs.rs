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

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::collections::{HashSet, VecDeque};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

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

/// 0: not tried yet, 1: the kernel has openat2, 2: it does not.
static OPENAT2: AtomicU8 = AtomicU8::new(0);

thread_local! {
    /// Tests force the component walk on their own thread.
    static FORCE_WALK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Use the `O_NOFOLLOW` component walk instead of `openat2` on this thread
/// (tests of the fallback).
#[doc(hidden)]
pub fn force_component_walk(on: bool) {
    FORCE_WALK.with(|f| f.set(on));
}

/// Whether opens on this thread use `openat2` (for reports and tests).
pub fn uses_openat2() -> bool {
    !FORCE_WALK.with(|f| f.get()) && OPENAT2.load(Ordering::Relaxed) != 2
}

const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// The normal components of a path relative to the root; `..` and absolute
/// parts are refused (a resolved path never has them).
fn components(rel: &Path) -> Result<Vec<&OsStr>, Errno> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => return Err(Errno::XDEV),
        }
    }
    Ok(out)
}

/// Open `rel` beneath `dir`, following no symbolic link.
fn open_beneath(dir: BorrowedFd<'_>, rel: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    // openat2 refuses O_PATH with other flags than these.
    let flags = if flags.contains(OFlags::PATH) {
        flags | OFlags::CLOEXEC
    } else {
        flags | OFlags::CLOEXEC | OFlags::NOCTTY
    };
    let names = components(rel)?;
    if uses_openat2() {
        let rel: &Path = if names.is_empty() {
            Path::new(".")
        } else {
            rel
        };
        for _ in 0..8 {
            match rustix::fs::openat2(dir, rel, flags, Mode::empty(), RESOLVE) {
                Err(Errno::NOSYS) => {
                    OPENAT2.store(2, Ordering::Relaxed);
                    break;
                }
                // The kernel could not rule out a race; it asks for a retry.
                Err(Errno::AGAIN) => continue,
                other => {
                    OPENAT2.store(1, Ordering::Relaxed);
                    return other;
                }
            }
        }
    }
    walk_beneath(dir, &names, flags)
}

/// The fallback: one `openat(O_NOFOLLOW)` per component.
fn walk_beneath(dir: BorrowedFd<'_>, names: &[&OsStr], flags: OFlags) -> Result<OwnedFd, Errno> {
    let Some((last, parents)) = names.split_last() else {
        return rustix::fs::openat(dir, ".", flags, Mode::empty());
    };
    let mut held: Option<OwnedFd> = None;
    for name in parents {
        let at = held.as_ref().map_or(dir, |f| f.as_fd());
        let next = open_child_dir(at, name)?;
        held = Some(next);
    }
    let at = held.as_ref().map_or(dir, |f| f.as_fd());
    rustix::fs::openat(at, *last, flags | OFlags::NOFOLLOW, Mode::empty())
}

/// Open the directory `name` in `at` without following a link (`ELOOP` if
/// it is one).
fn open_child_dir(at: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(at, name, flags, Mode::empty()) {
        Err(Errno::NOTDIR) | Err(Errno::LOOP) => {
            match rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if FileKind::of_mode(st.st_mode) == FileKind::Symlink => Err(Errno::LOOP),
                _ => Err(Errno::NOTDIR),
            }
        }
        other => other,
    }
}

/// The kind of an open handle.
fn kind_of(fd: BorrowedFd<'_>) -> Result<(FileKind, u64, u32), Errno> {
    let st = rustix::fs::fstat(fd)?;
    Ok((
        FileKind::of_mode(st.st_mode),
        st.st_size as u64,
        st.st_mode & 0o7777,
    ))
}

/// The workspace root's directory handle: every open starts here.
///
/// Two roots are equal when their paths are (a `Workspace` compares by path).
#[derive(Clone)]
pub struct Root {
    path: PathBuf,
    fd: Arc<OwnedFd>,
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
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Directories (device, inode, birth time) this process has swept of stale
/// temp files; the birth time tells a new folder from a removed one whose
/// inode number was reused.
static SWEPT: Mutex<Option<HashSet<DirIdentity>>> = Mutex::new(None);

/// (device, inode, birth seconds, birth nanoseconds) of a folder.
type DirIdentity = (u64, u64, i64, u32);

const TEMP_PREFIX: &str = ".agent-tools-";
const TEMP_SUFFIX: &str = ".tmp";
const LEGACY_TEMP_SUFFIX: &str = ".agent-tools.tmp";

/// A fresh temporary file name of this process.
fn temp_name() -> String {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{TEMP_PREFIX}{}-{n}{TEMP_SUFFIX}", std::process::id())
}

/// The process id in a temporary file name of ours, if it is one.
pub fn temp_owner(name: &str) -> Option<u32> {
    if let Some(mid) = name
        .strip_prefix(TEMP_PREFIX)
        .and_then(|r| r.strip_suffix(TEMP_SUFFIX))
    {
        let (pid, n) = mid.split_once('-')?;
        n.parse::<u64>().ok()?;
        return pid.parse().ok();
    }
    // The older shape: `.<target>.<pid>.<n>.agent-tools.tmp`.
    let rest = name.strip_prefix('.')?.strip_suffix(LEGACY_TEMP_SUFFIX)?;
    let mut parts = rest.rsplitn(3, '.');
    let n = parts.next()?;
    let pid = parts.next()?;
    parts.next()?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

fn join_shown(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

impl DirHandle {
    pub(crate) fn shown_child(&self, name: &OsStr) -> String {
        join_shown(&self.shown, &name.to_string_lossy())
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

    /// Remove this directory's stale temporary files of ours, once per
    /// process.
    fn sweep_once(&self) {
        let mask = rustix::fs::StatxFlags::INO | rustix::fs::StatxFlags::BTIME;
        let Ok(st) = rustix::fs::statx(&self.fd, "", AtFlags::EMPTY_PATH, mask) else {
            return;
        };
        let dev = (u64::from(st.stx_dev_major) << 32) | u64::from(st.stx_dev_minor);
        let key = (dev, st.stx_ino, st.stx_btime.tv_sec, st.stx_btime.tv_nsec);
        {
            let mut swept = SWEPT.lock().expect("swept lock");
            if !swept.get_or_insert_with(HashSet::new).insert(key) {
                return;
            }
        }
        self.sweep();
    }

    /// Remove stale temporary files of ours here; how many.
    fn sweep(&self) -> usize {
        let Ok(entries) = self.entries() else {
            return 0;
        };
        let me = std::process::id();
        let mut removed = 0;
        for (name, kind) in entries {
            if kind != FileKind::Regular {
                continue;
            }
            let Some(pid) = name.to_str().and_then(temp_owner) else {
                continue;
            };
            if pid == me || crate::process::pid_alive(pid) {
                continue;
            }
            if rustix::fs::unlinkat(&self.fd, name.as_os_str(), AtFlags::empty()).is_ok() {
                removed += 1;
            }
        }
        removed
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

/// Directories the start-up sweep never enters: trees of tools, not of the
/// user's writes.
const SWEEP_SKIP: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
];

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
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
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
            FileKind::Directory => Ok(Opened::Dir(DirHandle { fd, shown })),
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
            Err(Errno::NOENT) | Err(Errno::NOTDIR) => Ok(None),
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

    /// Remove stale temporary files of ours from the root and the folders
    /// below it, breadth first, visiting at most `max_dirs` folders and
    /// skipping tool trees (`.git`, `node_modules`, `target`, virtual envs).
    /// Returns how many files were removed.
    pub fn sweep_stale_temps(&self, max_dirs: usize) -> usize {
        let Ok(Opened::Dir(top)) = self.open(Path::new("")) else {
            return 0;
        };
        let mut queue = VecDeque::from([top]);
        let mut visited = 0;
        let mut removed = 0;
        while let Some(dir) = queue.pop_front() {
            if visited >= max_dirs {
                break;
            }
            visited += 1;
            removed += dir.sweep();
            let Ok(entries) = dir.entries() else { continue };
            for (name, kind) in entries {
                if kind != FileKind::Directory
                    || SWEEP_SKIP.contains(&name.to_str().unwrap_or(""))
                    || queue.len() + visited >= max_dirs
                {
                    continue;
                }
                if let Ok(fd) = open_child_dir(dir.fd.as_fd(), &name) {
                    queue.push_back(DirHandle {
                        shown: dir.shown_child(&name),
                        fd,
                    });
                }
            }
        }
        removed
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Workspace;
    use std::os::unix::fs::symlink;
    use std::time::{Duration, Instant};

    /// A workspace with `src/a.py`, and a folder outside it holding
    /// `secret.txt` (and `src/a.py`, so a path swapped over would match).
    fn setup() -> (tempfile::TempDir, tempfile::TempDir, Workspace) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("src")).unwrap();
        std::fs::write(d.path().join("src/a.py"), "inside\n").unwrap();
        let out = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(out.path().join("src")).unwrap();
        std::fs::write(out.path().join("secret.txt"), "outside\n").unwrap();
        std::fs::write(out.path().join("src/a.py"), "outside\n").unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        (d, out, ws)
    }

    /// Run `check` with openat2 and with the component walk.
    fn both_ways(check: impl Fn(&str)) {
        for walk in [false, true] {
            force_component_walk(walk);
            check(if walk { "walk" } else { "openat2" });
        }
        force_component_walk(false);
    }

    #[test]
    fn the_kernel_here_has_openat2() {
        let (_d, _o, ws) = setup();
        ws.dir().read(Path::new("src/a.py"), 100).unwrap();
        // Informational: CI kernels are 5.6+; the walk covers older ones.
        println!("openat2 in use: {}", uses_openat2());
    }

    #[test]
    fn special_files_are_refused_with_their_kind_without_blocking() {
        let (d, _o, ws) = setup();
        let fifo = d.path().join("pipe.py");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let _sock = std::os::unix::net::UnixListener::bind(d.path().join("sock.py")).unwrap();
        let dev = d.path().join("zero.py");
        let c = std::ffi::CString::new(dev.as_os_str().as_bytes()).unwrap();
        // /dev/zero's numbers (1, 5); needs CAP_MKNOD (CI runs as root).
        let have_dev =
            unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 5)) } == 0;
        if !have_dev {
            println!("skipping the character device case: mknod needs CAP_MKNOD here");
        }
        let mut cases = vec![
            ("pipe.py", "a FIFO (named pipe)"),
            ("sock.py", "a socket"),
            ("src", "a directory"),
        ];
        if have_dev {
            cases.push(("zero.py", "a character device"));
        }
        both_ways(|how| {
            for (name, kind) in &cases {
                let start = Instant::now();
                let err = ws.dir().read(&ws.root().join(name), 1 << 20).unwrap_err();
                assert_eq!(
                    err.to_string(),
                    format!("`{name}` is {kind}, not a regular file"),
                    "{how}"
                );
                if *name != "src" {
                    let err = ws.dir().write(&ws.root().join(name), b"x").unwrap_err();
                    assert_eq!(
                        err.to_string(),
                        format!("`{name}` is {kind}, not a regular file"),
                        "{how}"
                    );
                }
                assert!(start.elapsed() < Duration::from_secs(1), "{how} {name}");
            }
        });
        // Nothing was replaced.
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
    }

    #[test]
    fn links_out_of_the_workspace_are_never_followed() {
        let (d, out, ws) = setup();
        symlink(out.path(), d.path().join("link")).unwrap();
        symlink(out.path().join("secret.txt"), d.path().join("pw")).unwrap();
        both_ways(|how| {
            for p in ["link/secret.txt", "pw"] {
                let err = ws.dir().read(Path::new(p), 100).unwrap_err();
                assert!(
                    matches!(err, FsError::LinkInPath { .. }),
                    "{how} {p}: {err}"
                );
                let err = ws.dir().write(&ws.root().join(p), b"pwned").unwrap_err();
                assert!(
                    matches!(err, FsError::LinkInPath { .. } | FsError::NotRegular { .. }),
                    "{how} {p}: {err}"
                );
            }
            let err = ws
                .dir()
                .write(&ws.root().join("link/new.txt"), b"pwned")
                .unwrap_err();
            assert!(matches!(err, FsError::LinkInPath { .. }), "{how}: {err}");
        });
        assert_eq!(
            std::fs::read_to_string(out.path().join("secret.txt")).unwrap(),
            "outside\n"
        );
        assert!(!out.path().join("new.txt").exists());
    }

    /// The race the handles close: the path is checked while `src` is a
    /// folder, then `src` becomes a link to a folder outside.
    #[test]
    fn a_link_swapped_in_after_the_check_leads_nowhere() {
        let (d, out, ws) = setup();
        let checked = ws.resolve("src/a.py").unwrap();
        std::fs::rename(d.path().join("src"), d.path().join("src.real")).unwrap();
        symlink(out.path().join("src"), d.path().join("src")).unwrap();
        both_ways(|how| {
            let err = ws.dir().read(&checked, 100).unwrap_err();
            assert_eq!(
                err.to_string(),
                "`src/a.py` has a symbolic link in its path that was not there when the path was checked; nothing was read or written through it",
                "{how}"
            );
            let err = ws.dir().write(&checked, b"pwned").unwrap_err();
            assert!(matches!(err, FsError::LinkInPath { .. }), "{how}: {err}");
            let err = ws.dir().open(&ws.root().join("src")).unwrap_err();
            assert!(matches!(err, FsError::LinkInPath { .. }), "{how}: {err}");
        });
        assert_eq!(
            std::fs::read_to_string(out.path().join("src/a.py")).unwrap(),
            "outside\n"
        );
    }

    #[test]
    fn a_trailing_slash_names_a_directory() {
        let (_d, _o, ws) = setup();
        let err = ws.resolve_file("notes/").unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad arguments: `notes/` is a directory path; give a file (without the trailing `/`)"
        );
        assert!(ws.resolve_file("notes").is_ok());
    }

    #[test]
    fn size_is_decided_on_the_handle_before_reading() {
        let (d, _o, ws) = setup();
        let big = std::fs::File::create(d.path().join("big.txt")).unwrap();
        big.set_len(200 * 1024 * 1024).unwrap();
        let start = Instant::now();
        let f = ws.dir().open_file(Path::new("big.txt")).unwrap();
        assert_eq!(f.len(), 200 * 1024 * 1024);
        let err = f.read_capped(20 * 1024 * 1024).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`big.txt` is 209715200 bytes, over the limit of 20971520 bytes"
        );
        assert!(start.elapsed() < Duration::from_millis(100));
    }

    #[test]
    fn writes_make_folders_keep_modes_and_leave_no_temp() {
        let (d, _o, ws) = setup();
        both_ways(|how| {
            let p = ws.root().join(format!("new/{how}/deep/x.txt"));
            ws.dir().write(&p, b"one").unwrap();
            ws.dir().write(&p, b"two").unwrap();
            assert_eq!(std::fs::read(&p).unwrap(), b"two");
            let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, ["x.txt"], "{how}");
        });
        // A parent that is a file is refused, and nothing is made.
        let err = ws
            .dir()
            .write(&ws.root().join("src/a.py/x"), b"x")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot create a file under `src/a.py`: it is not a directory"
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("src/a.py")).unwrap(),
            "inside\n"
        );
    }

    /// A pid that certainly belonged to a process that is gone.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn stale_temps_of_ours_are_swept_and_nothing_else() {
        let (d, _o, ws) = setup();
        let dead = dead_pid();
        let me = std::process::id();
        std::fs::create_dir_all(d.path().join("deep/er")).unwrap();
        let stale = [
            format!("deep/er/.agent-tools-{dead}-7.tmp"),
            format!("src/.a.py.{dead}.0.agent-tools.tmp"),
        ];
        let kept = [
            format!("deep/.agent-tools-{me}-999.tmp"),
            "deep/.agent-tools-notes.tmp".to_string(),
            "deep/my.agent-tools.tmp".to_string(),
        ];
        for f in stale.iter().chain(&kept) {
            std::fs::write(d.path().join(f), "x").unwrap();
        }
        assert_eq!(ws.sweep_stale_temps(), 2);
        for f in &stale {
            assert!(!d.path().join(f).exists(), "{f}");
        }
        for f in &kept {
            assert!(d.path().join(f).exists(), "{f}");
        }
        // The first write into a folder sweeps it too.
        let late = d.path().join(format!("src/.agent-tools-{dead}-8.tmp"));
        std::fs::write(&late, "x").unwrap();
        ws.dir().write(&ws.root().join("src/b.py"), b"b").unwrap();
        assert!(!late.exists());
        assert_eq!(temp_owner(&temp_name()), Some(me));
    }
}
