//! Every process a session started, found and killed.
//!
//! The adapter leads its own process group (tool-core's one helper), but
//! debuggees escape it: delve starts its target in a new group, and a
//! debuggee outlives an adapter that crashed. So the session records the
//! adapter's descendants while they are still its children — each with its
//! start time, so a recycled pid is never killed by mistake — and kills the
//! recorded set as well as the group when it ends.

use std::collections::BTreeMap;

/// (pid → start time in clock ticks since boot).
#[derive(Debug, Default, Clone)]
pub struct ProcessSet {
    known: BTreeMap<u32, u64>,
}

/// The parent pid and start time of a live process.
fn stat(pid: u32) -> Option<(u32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is the state (field 3 of stat), so field N is fields[N - 3].
    if matches!(fields.first(), Some(&"Z") | Some(&"X")) {
        return None;
    }
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, start))
}

/// Every live descendant of `root` (not `root` itself).
pub fn descendants(root: u32) -> Vec<u32> {
    let mut children: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if let Some((ppid, _)) = stat(pid) {
                children.entry(ppid).or_default().push(pid);
            }
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).into_iter().flatten() {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

impl ProcessSet {
    /// Remember `pid` (and its start time) if it is alive.
    pub fn add(&mut self, pid: u32) {
        if let Some((_, start)) = stat(pid) {
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
            .filter(|(pid, start)| stat(**pid).map(|(_, s)| s) == Some(**start))
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
            // SAFETY: plain syscall on a pid we verified is the process we
            // recorded (same start time).
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
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
