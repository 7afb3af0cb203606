//! Whether a debuggee is blocked reading its standard input, read from
//! procfs: a thread whose current system call is `read` (0 on x86-64, 63 on
//! aarch64) on file descriptor 0.
//!
//! Invariant: a guess is never made. When procfs cannot be read (another
//! OS, no permission) the answer is `false`, and nothing is claimed.

use tool_core::process::procfs;

/// The number of `read` on this architecture.
#[cfg(target_arch = "aarch64")]
const READ_SYSCALL: &str = "63";
#[cfg(not(target_arch = "aarch64"))]
const READ_SYSCALL: &str = "0";

/// Whether any thread of `pid` or of its descendants is in `read(0, …)`.
pub fn reading_stdin(pid: u32) -> bool {
    let mut seen = Vec::new();
    let mut queue = vec![pid];
    while let Some(p) = queue.pop() {
        if seen.contains(&p) || seen.len() > 64 {
            continue;
        }
        seen.push(p);
        if procfs::threads(p)
            .iter()
            .any(|&t| procfs::thread_syscall(p, t).is_some_and(|s| in_stdin_read(&s)))
        {
            return true;
        }
        queue.extend(procfs::thread_children(p));
    }
    false
}

/// `0 0x0 0x55d… …`: the system call `read` on descriptor 0.
fn in_stdin_read(syscall: &str) -> bool {
    let mut fields = syscall.split_whitespace();
    fields.next() == Some(READ_SYSCALL) && fields.next() == Some("0x0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_on_descriptor_zero_is_waiting_for_input() {
        assert!(in_stdin_read(&format!(
            "{READ_SYSCALL} 0x0 0x7ffc 0x400 0 0 0 0x7ffc 0x7f"
        )));
        assert!(!in_stdin_read(&format!(
            "{READ_SYSCALL} 0x3 0x7ffc 0x400 0 0 0 0x7ffc 0x7f"
        )));
        assert!(!in_stdin_read("running"));
    }

    #[test]
    fn a_child_blocked_on_its_stdin_is_seen() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // sleep does not read: not waiting.
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(!reading_stdin(child.id()));
        let _ = child.kill();
        let _ = child.wait();
        let mut cat = std::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut waited = false;
        for _ in 0..50 {
            std::thread::sleep(std::time::Duration::from_millis(20));
            if reading_stdin(cat.id()) {
                waited = true;
                break;
            }
        }
        let _ = cat.kill();
        let _ = cat.wait();
        assert!(waited, "cat reading its stdin was not seen");
    }
}
