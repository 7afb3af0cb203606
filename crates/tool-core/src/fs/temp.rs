//! Temporary files: the names our writes use (`.agent-tools-<pid>-<n>.tmp`)
//! and the sweep that removes those a dead process left behind.

use super::{open_child_dir, DirHandle, FileKind, Opened, Root};
use rustix::fs::AtFlags;
use std::collections::{HashSet, VecDeque};
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

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
pub(super) fn temp_name() -> String {
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

impl DirHandle {
    /// Remove this directory's stale temporary files of ours, once per
    /// process.
    pub(super) fn sweep_once(&self) {
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

impl Root {
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
                        writes: dir.writes.clone(),
                    });
                }
            }
        }
        removed
    }
}
