//! Every process a session started, found and killed.
//!
//! The adapter leads its own process group under tool-core's keeper, which
//! kills everything descended from it when the adapter's owner goes. Within
//! a session's life, though, debuggees escape the group and the adapter:
//! delve starts its target in a new group, and a debuggee outlives an adapter
//! that crashed. So the session records the
//! adapter's descendants while they are still its children — each with its
//! start time, so a recycled pid is never killed by mistake — and kills the
//! recorded set as well as the group when it ends.

use std::collections::BTreeMap;
use tool_core::process::procfs;
use tool_core::process::signals::{self, Signal};

pub use tool_core::process::descendants;

/// (pid → start time in clock ticks since boot).
#[derive(Debug, Default, Clone)]
pub struct ProcessSet {
    known: BTreeMap<u32, u64>,
}

/// The start time of a live process.
fn started(pid: u32) -> Option<u64> {
    procfs::live_stat(pid).map(|s| s.start_time)
}

impl ProcessSet {
    /// Remember `pid` (and its start time) if it is alive.
    pub fn add(&mut self, pid: u32) {
        if let Some(start) = started(pid) {
            self.known.insert(pid, start);
        }
    }

    /// Remember `root` and everything below it right now.
    pub fn record_tree(&mut self, root: u32) {
        self.add(root);
        for p in descendants(root) {
            self.add(p);
        }
    }

    /// Every recorded process that is still the same process and alive,
    /// with the processes it started since.
    pub fn alive(&self) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .known
            .iter()
            .filter(|(pid, start)| started(**pid) == Some(**start))
            .map(|(pid, _)| *pid)
            .collect();
        let extra: Vec<u32> = out.iter().flat_map(|p| descendants(*p)).collect();
        out.extend(extra);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// SIGKILL every recorded process still alive; returns the pids signalled.
    pub fn kill_all(&self) -> Vec<u32> {
        let pids = self.alive();
        for &pid in &pids {
            // A pid we verified is the process we recorded (same start time).
            let _ = signals::send(pid, Signal::Kill);
        }
        pids
    }

    pub fn pids(&self) -> Vec<u32> {
        self.known.keys().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_is_recorded_and_killed_even_outside_the_group() {
        // setsid puts the grandchild in its own session and group, as delve
        // does with its debuggee.
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("setsid sleep 300 & wait")
            .spawn()
            .unwrap();
        let me = child.id();
        let mut set = ProcessSet::default();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while descendants(me).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        set.record_tree(me);
        let grandchild = *descendants(me).first().expect("grandchild started");
        assert!(set.pids().contains(&grandchild));
        let killed = set.kill_all();
        assert!(killed.contains(&grandchild) && killed.contains(&me));
        let _ = child.wait();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while tool_core::process::pid_alive(grandchild) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!tool_core::process::pid_alive(grandchild));
        assert!(set.alive().is_empty());
    }
}
