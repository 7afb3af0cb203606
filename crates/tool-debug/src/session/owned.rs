//! What a session started and must end: the adapter process, every process
//! it was seen to start (the debuggee and its children, which may leave the
//! adapter's process group), the scratch folder, and the pipe held open as
//! the debuggee's standard input.
//!
//! Invariants: the adapter's process tree is recorded at every stop and
//! before the end, so what it started is known when it is killed; ending is
//! bounded (a grace for the adapter, then SIGKILL, then at most 3 s of
//! waiting); a session dropped without ending kills everything at once.

use crate::procs::ProcessSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tool_core::process::{ChildProcess, HeldFifo};

/// What the session started and must end: the adapter, every process it
/// was seen to start, and the scratch folder.
pub(super) struct Owned {
    pub(super) child: Mutex<Option<ChildProcess>>,
    pub(super) adapter_pid: Option<u32>,
    pub(super) processes: Mutex<ProcessSet>,
    scratch_dir: Option<PathBuf>,
    /// The debuggee's standard input when no `stdin` was given: held open
    /// until the session ends.
    held_stdin: Mutex<Option<Arc<HeldFifo>>>,
}

impl Owned {
    pub(super) fn new(
        child: Option<ChildProcess>,
        adapter_pid: Option<u32>,
        scratch: Option<PathBuf>,
        held_stdin: Option<Arc<HeldFifo>>,
    ) -> Self {
        let mut processes = ProcessSet::default();
        if let Some(pid) = adapter_pid {
            processes.add(pid);
        }
        Owned {
            child: Mutex::new(child),
            adapter_pid,
            processes: Mutex::new(processes),
            scratch_dir: scratch,
            held_stdin: Mutex::new(held_stdin),
        }
    }

    pub(super) fn add(&self, pid: u32) {
        self.processes.lock().expect("procs lock").add(pid);
    }

    /// Remember the adapter's process tree as it is now.
    pub(super) fn record_tree(&self) {
        if let Some(pid) = self.adapter_pid {
            self.processes.lock().expect("procs lock").record_tree(pid);
        }
    }

    /// Every recorded process still alive (the tree recorded first).
    pub(super) fn alive(&self) -> Vec<u32> {
        self.record_tree();
        self.processes.lock().expect("procs lock").alive()
    }

    /// End everything: the adapter (with a grace), then every recorded
    /// process, then the scratch folder.
    pub(super) async fn end(&self) {
        self.record_tree();
        let child = self.child.lock().expect("child lock").take();
        if let Some(mut child) = child {
            child.terminate(Duration::from_millis(500)).await;
        }
        let processes = self.processes.lock().expect("procs lock").clone();
        processes.kill_all();
        let deadline = Instant::now() + Duration::from_secs(3);
        while !processes.alive().is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.remove_scratch();
    }

    /// End everything now, without waiting (the session was dropped): the
    /// adapter's group dies with its `ChildProcess`; kill what escaped it.
    pub(super) fn end_now(&self) {
        if let Some(pid) = self.adapter_pid {
            if let Ok(mut p) = self.processes.lock() {
                p.record_tree(pid);
                p.kill_all();
            }
        }
        self.remove_scratch();
    }

    fn remove_scratch(&self) {
        if let Ok(mut held) = self.held_stdin.lock() {
            held.take();
        }
        if let Some(dir) = &self.scratch_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
