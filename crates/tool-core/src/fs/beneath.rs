//! Opening a path beneath a directory handle without following a link:
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`
//! where the kernel has it, else one `openat(O_NOFOLLOW)` per component.

use super::FileKind;
use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};
use std::sync::atomic::{AtomicU8, Ordering};

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
    !FORCE_WALK.with(std::cell::Cell::get) && OPENAT2.load(Ordering::Relaxed) != 2
}

const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// The normal components of a path relative to the root; `..` and absolute
/// parts are refused (a resolved path never has them).
pub(super) fn components(rel: &Path) -> Result<Vec<&OsStr>, Errno> {
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
pub(super) fn open_beneath(
    dir: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
) -> Result<OwnedFd, Errno> {
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
pub(super) fn walk_beneath(
    dir: BorrowedFd<'_>,
    names: &[&OsStr],
    flags: OFlags,
) -> Result<OwnedFd, Errno> {
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
pub(super) fn open_child_dir(at: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(at, name, flags, Mode::empty()) {
        Err(Errno::NOTDIR | Errno::LOOP) => {
            match rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if FileKind::of_mode(st.st_mode) == FileKind::Symlink => Err(Errno::LOOP),
                _ => Err(Errno::NOTDIR),
            }
        }
        other => other,
    }
}

/// The kind of an open handle.
pub(super) fn kind_of(fd: BorrowedFd<'_>) -> Result<(FileKind, u64, u32), Errno> {
    let st = rustix::fs::fstat(fd)?;
    Ok((
        FileKind::of_mode(st.st_mode),
        st.st_size as u64,
        st.st_mode & 0o7777,
    ))
}
