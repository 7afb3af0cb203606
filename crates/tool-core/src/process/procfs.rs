//! Reading `/proc`: the one place that parses it, for every crate and test.
//!
//! Invariants: a process that is gone or a zombie counts as not alive; a
//! pid is identified together with its start time ([`Stat::start_time`]),
//! so a recycled pid is never taken for the process that was recorded.
//! Nothing here allocates per field: `stat` is parsed after the last `)`,
//! because the command name in parentheses may itself hold spaces and `)`.

use std::collections::BTreeMap;

/// The fields of `/proc/<pid>/stat` this project uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub pid: u32,
    /// `R`, `S`, `D`, `Z`, `T`, ...
    pub state: char,
    pub ppid: u32,
    /// The process group.
    pub pgrp: u32,
    pub session: u32,
    /// Clock ticks since boot when it started.
    pub start_time: u64,
}

impl Stat {
    /// Parse the text of `/proc/<pid>/stat`.
    pub fn parse(pid: u32, text: &str) -> Option<Stat> {
        let (_, rest) = text.rsplit_once(')')?;
        let f: Vec<&str> = rest.split_whitespace().collect();
        // f[0] is field 3 of stat(5) (the state), so field N is f[N - 3].
        Some(Stat {
            pid,
            state: f.first()?.chars().next()?,
            ppid: f.get(1)?.parse().ok()?,
            pgrp: f.get(2)?.parse().ok()?,
            session: f.get(3)?.parse().ok()?,
            start_time: f.get(19)?.parse().ok()?,
        })
    }

    /// Not a zombie, not dead.
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// The stat of `pid`, alive or zombie; `None` when there is no such process.
pub fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Stat::parse(pid, &text)
}

/// The stat of `pid` if it is alive (not a zombie).
pub fn live_stat(pid: u32) -> Option<Stat> {
    stat(pid).filter(Stat::is_live)
}

/// Whether a process exists and is not a zombie.
pub fn pid_alive(pid: u32) -> bool {
    live_stat(pid).is_some()
}

/// Every pid in `/proc` right now.
pub fn pids() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()))
        .collect()
}

/// Every live process (not zombies), sorted by pid.
pub fn live_processes() -> Vec<Stat> {
    let mut out: Vec<Stat> = pids().into_iter().filter_map(live_stat).collect();
    out.sort_unstable_by_key(|s| s.pid);
    out
}

/// The pids of every live process in a process group.
pub fn group_members(pgid: u32) -> Vec<u32> {
    live_processes()
        .into_iter()
        .filter(|s| s.pgrp == pgid)
        .map(|s| s.pid)
        .collect()
}

/// The resident memory of `pid` in KiB (`VmRSS` of its status), `None`
/// when it is gone (or a kernel thread, which has none).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The proportional set size of `pid` in KiB (`Pss` of its
/// `smaps_rollup`): its resident pages, each shared page divided by the
/// number of processes that map it, so a sum over processes counts a
/// binary several processes run once. `None` when it is gone.
pub fn pss_kib(pid: u32) -> Option<u64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    rollup
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The text of `/proc/<pid>/smaps`: each mapping and its memory.
pub fn smaps(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/smaps")).ok()
}

/// The CPU time `pid` used so far, user and system, in clock ticks.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 of stat(5); f[0] is field 3.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// The resident memory of the process group `pgid` (its leader and every
/// live member), in KiB.
pub fn group_rss_kib(pgid: u32) -> u64 {
    let mut members = group_members(pgid);
    members.push(pgid);
    members.sort_unstable();
    members.dedup();
    members.into_iter().filter_map(rss_kib).sum()
}

/// Every live direct child of `parent`.
pub fn children(parent: u32) -> Vec<Stat> {
    live_processes()
        .into_iter()
        .filter(|s| s.ppid == parent)
        .collect()
}

/// Every live descendant of `root` (not `root` itself), parents before
/// their children.
pub fn descendants(root: u32) -> Vec<u32> {
    let mut by_parent: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for s in live_processes() {
        by_parent.entry(s.ppid).or_default().push(s.pid);
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for &c in by_parent.get(&p).into_iter().flatten() {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

/// The command line of `pid`, arguments joined by spaces.
pub fn cmdline(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let parts: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    Some(parts.join(" "))
}

/// A process and its command line, for listing what a tree runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessLine {
    pub pid: u32,
    /// The arguments joined by spaces; `[name]` from `stat` when the
    /// command line is empty (a kernel thread, a process mid-exec).
    pub command: String,
}

/// Each process of `stats` that is still there, with its command line, in
/// the same order.
pub fn with_command_lines(stats: &[Stat]) -> Vec<ProcessLine> {
    stats
        .iter()
        .filter_map(|s| {
            let command = cmdline(s.pid).filter(|c| !c.is_empty()).or_else(|| {
                let text = std::fs::read_to_string(format!("/proc/{}/comm", s.pid)).ok()?;
                Some(format!("[{}]", text.trim_end()))
            })?;
            Some(ProcessLine {
                pid: s.pid,
                command,
            })
        })
        .collect()
}

/// Whether the environment `pid` started with holds `entry` (`NAME=value`)
/// exactly. A process whose environment cannot be read does not.
pub fn environ_contains(pid: u32, entry: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|raw| raw.split(|b| *b == 0).any(|e| e == entry.as_bytes()))
}

/// Every live process whose environment holds `NAME=value`: a test puts a
/// marker variable in the environment of what it starts, and everything
/// those processes start inherits it.
pub fn with_environment(name: &str, value: &str) -> Vec<u32> {
    let entry = format!("{name}={value}");
    live_processes()
        .into_iter()
        .filter(|s| environ_contains(s.pid, &entry))
        .map(|s| s.pid)
        .collect()
}

/// The inodes of the TCP sockets listening on `port` (IPv4 and IPv6), from
/// the kernel's socket tables; `None` where no table can be read.
pub fn tcp_listeners(port: u16) -> Option<Vec<u64>> {
    let mut readable = false;
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        readable = true;
        // `sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode`
        // e.g. `0: 0100007F:1F90 00000000:0000 0A … 0 0 123456 …`
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let local_port = cols
                .get(1)
                .and_then(|l| l.rsplit_once(':'))
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if cols.get(3) == Some(&"0A") && local_port == Some(port) {
                inodes.extend(cols.get(9).and_then(|i| i.parse::<u64>().ok()));
            }
        }
    }
    readable.then_some(inodes)
}

/// The live processes holding a TCP socket that listens on `port` (the
/// debug server there), sorted by pid; empty where none can be seen.
pub fn listening_on(port: u16) -> Vec<u32> {
    let inodes = tcp_listeners(port).unwrap_or_default();
    if inodes.is_empty() {
        return Vec::new();
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    live_processes()
        .into_iter()
        .map(|s| s.pid)
        .filter(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|fd| {
                    std::fs::read_link(fd.path())
                        .is_ok_and(|l| wanted.iter().any(|w| l.as_os_str() == w.as_str()))
                })
        })
        .collect()
}

/// The thread ids of `pid` (`/proc/<pid>/task`).
pub fn threads(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// The current system call of thread `tid` of `pid`, as the kernel shows
/// it (`/proc/<pid>/task/<tid>/syscall`: its number and arguments, or
/// `running`); `None` when it cannot be read.
pub fn thread_syscall(pid: u32, tid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall")).ok()
}

/// The children of `pid`, as each of its threads lists them
/// (`/proc/<pid>/task/<tid>/children`).
pub fn thread_children(pid: u32) -> Vec<u32> {
    threads(pid)
        .iter()
        .filter_map(|t| std::fs::read_to_string(format!("/proc/{pid}/task/{t}/children")).ok())
        .flat_map(|s| {
            s.split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// The executable `pid` runs (`/proc/<pid>/exe`).
pub fn exe(pid: u32) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// The thread that traces `pid` (ptrace), from `TracerPid` in
/// `/proc/<pid>/status`; `None` when it is not traced or is gone.
pub fn tracer(pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let tid: u32 = text
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))?
        .trim()
        .parse()
        .ok()?;
    (tid != 0).then_some(tid)
}

/// The live processes that `tracer` (any of its threads) traces with
/// ptrace: a debugger's debuggees. The kernel names the tracing thread,
/// not its process, so every thread of `tracer` counts.
pub fn traced_by(tracer_pid: u32) -> Vec<u32> {
    let tids = threads(tracer_pid);
    if tids.is_empty() {
        return Vec::new();
    }
    live_processes()
        .into_iter()
        .map(|s| s.pid)
        .filter(|&p| p != tracer_pid && tracer(p).is_some_and(|t| tids.contains(&t)))
        .collect()
}
