//! The resident pages of this process's own executable, given back while
//! the process is idle.
//!
//! A run that waits for its next call (many at once when runs share their
//! language servers through the broker) keeps resident the pages of its
//! binary that its start and its last calls touched: about 17 MiB of an
//! idle `agent-tools batch`'s 20 MiB were the binary's code and read-only
//! data, against under 1 MiB of heap. Those pages are clean copies of the
//! file, held once in the page cache however many processes map them, but
//! each process's RSS counts them again. [`release`] drops them from this
//! process's page tables (`MADV_DONTNEED`); the next call that needs one
//! maps it again from the page cache (a minor fault, about 1 ms for what a
//! query touches).
//!
//! Invariant: only mappings of our own executable that are not writable
//! and hold no page of ours (no copy-on-write copy: `Anonymous: 0 kB` in
//! `smaps`) are released, so nothing is lost, only unmapped; the
//! executable cannot change under us (`ETXTBSY`).

use crate::process::procfs;
use std::time::Duration;

/// Release the resident pages of this process's executable (see the
/// module doc), and the heap's free pages (`malloc_trim`). How many KiB of
/// the executable were resident before.
pub fn release() -> std::io::Result<u64> {
    let me = std::process::id();
    let unreadable = || std::io::Error::other("this process's mappings cannot be read");
    let exe = procfs::exe(me).ok_or_else(unreadable)?;
    let exe = exe.to_string_lossy().into_owned();
    let smaps = procfs::smaps(me).ok_or_else(unreadable)?;
    let mut released = 0;
    for m in clean_mappings_of(&smaps, &exe) {
        // SAFETY: the range is a whole mapping of the executable with no
        // private page: dropping its pages loses nothing, the next touch
        // maps the file's page again.
        let rc = unsafe {
            libc::madvise(
                m.start as *mut libc::c_void,
                m.end - m.start,
                libc::MADV_DONTNEED,
            )
        };
        if rc == 0 {
            released += m.rss_kib;
        }
    }
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only returns free heap memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
    Ok(released)
}

/// A mapping that can be released.
#[derive(Debug, PartialEq, Eq)]
struct CleanMapping {
    start: usize,
    end: usize,
    rss_kib: u64,
}

/// The mappings of `path` in the text of `/proc/self/smaps` that are
/// readable, not writable, and hold no anonymous page.
fn clean_mappings_of(smaps: &str, path: &str) -> Vec<CleanMapping> {
    let mut out = Vec::new();
    let mut current: Option<(CleanMapping, bool)> = None;
    let finish = |c: Option<(CleanMapping, bool)>, out: &mut Vec<CleanMapping>| {
        if let Some((m, true)) = c {
            if m.rss_kib > 0 {
                out.push(m);
            }
        }
    };
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if let Some((start, end)) = first.split_once('-').and_then(|(a, b)| {
            Some((
                usize::from_str_radix(a, 16).ok()?,
                usize::from_str_radix(b, 16).ok()?,
            ))
        }) {
            finish(current.take(), &mut out);
            let perms = fields.next().unwrap_or_default();
            let name = fields.nth(3).unwrap_or_default();
            let candidate = name == path && perms.starts_with('r') && !perms.contains('w');
            current = Some((
                CleanMapping {
                    start,
                    end,
                    rss_kib: 0,
                },
                candidate,
            ));
            continue;
        }
        let Some((m, candidate)) = current.as_mut() else {
            continue;
        };
        let kib = || fields.clone().next().and_then(|v| v.parse::<u64>().ok());
        match first {
            "Rss:" => m.rss_kib = kib().unwrap_or(0),
            "Anonymous:" if kib() != Some(0) => *candidate = false,
            _ => {}
        }
    }
    finish(current.take(), &mut out);
    out
}

/// This process's CPU time so far, in clock ticks (user and system).
fn cpu_ticks() -> Option<u64> {
    procfs::cpu_ticks(std::process::id())
}

/// A thread that calls [`release`] each time the process has used no CPU
/// time (under one clock tick, 10 ms) for `quiet` after it was last busy.
pub fn release_when_idle(quiet: Duration) {
    let spawned = std::thread::Builder::new()
        .name("code-pages".into())
        .spawn(move || {
            let mut last = cpu_ticks();
            let mut released = false;
            loop {
                std::thread::sleep(quiet);
                let now = cpu_ticks();
                if now != last {
                    released = false;
                } else if !released {
                    match release() {
                        Ok(kib) => tracing::debug!(kib, "idle: released the executable's pages"),
                        Err(e) => tracing::debug!(error = %e, "idle: could not release pages"),
                    }
                    released = true;
                }
                // What this thread itself used is not activity.
                last = cpu_ticks();
            }
        });
    if let Err(e) = spawned {
        tracing::debug!(error = %e, "no thread to release idle pages");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_clean_read_only_mappings_of_the_executable_are_released() {
        let smaps = "\
55d0a0000000-55d0a4000000 r--p 00000000 fe:00 42  /usr/bin/agent-tools
Rss:                3200 kB
Anonymous:             0 kB
55d0a4000000-55d0a5000000 r-xp 04000000 fe:00 42  /usr/bin/agent-tools
Rss:               13800 kB
Anonymous:             0 kB
55d0a5000000-55d0a5100000 r--p 05000000 fe:00 42  /usr/bin/agent-tools
Rss:                 900 kB
Anonymous:           900 kB
55d0a5100000-55d0a5200000 rw-p 05100000 fe:00 42  /usr/bin/agent-tools
Rss:                  40 kB
Anonymous:            40 kB
55d0a5200000-55d0a5300000 r--p 00000000 fe:00 43  /usr/lib/libc.so.6
Rss:                1400 kB
Anonymous:             0 kB
55d0a5300000-55d0a5400000 r-xp 00000000 fe:00 42  /usr/bin/agent-tools
Rss:                   0 kB
Anonymous:             0 kB
";
        assert_eq!(
            clean_mappings_of(smaps, "/usr/bin/agent-tools"),
            vec![
                CleanMapping {
                    start: 0x55d0_a000_0000,
                    end: 0x55d0_a400_0000,
                    rss_kib: 3200
                },
                CleanMapping {
                    start: 0x55d0_a400_0000,
                    end: 0x55d0_a500_0000,
                    rss_kib: 13800
                },
            ]
        );
    }

    #[test]
    fn the_executables_pages_are_released_and_it_runs_on() {
        let released = release().unwrap();
        // This test's binary had pages of its code resident; they are
        // mapped again from the file as the tests run on.
        assert!(released > 0, "{released} KiB");
        assert!(release().is_ok());
    }
}
