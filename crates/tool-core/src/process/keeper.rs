//! The keeper: a small process between the host and every program it
//! starts, which makes sure nothing the program started outlives it.
//!
//! [`split`] runs as the last `pre_exec` step in the child that `spawn`
//! forked. It forks once more: the new process (the *program*) leads its own
//! process group and returns to `exec` the command; the process it forked
//! from never execs and becomes the keeper. The keeper
//!
//! - is a child subreaper, so every descendant of the program that is
//!   orphaned (a double fork, a `setsid` daemon whose parent exited) is
//!   re-parented to it rather than to init;
//! - sends the program's pid to the owner over a socket, then closes every
//!   other descriptor (the spawn error pipe, the stdio and extra pipes are not
//!   held open by it);
//! - waits, in `ppoll` with signals unblocked atomically, for one of: the
//!   program exiting; a byte from the owner ("kill the tree now"); the
//!   owner's end of the socket closing (the owner was dropped, or the whole
//!   host died, even by SIGKILL: the kernel closes the socket); SIGTERM,
//!   SIGINT or SIGHUP sent to the keeper itself;
//! - then kills the tree: it SIGKILLs every process whose parent is the
//!   keeper, reaps, and scans again (the children of a killed process are
//!   re-parented to it) until `waitpid` says no children are left;
//! - exits as the program did: the same exit code, or the same signal
//!   re-raised with its default action (and no core dump).
//!
//! Invariants: between `fork` and `_exit` only async-signal-safe system calls
//! are made: no allocation, no locks, no std I/O. Buffers are on the stack.
//! The keeper is its own process group, so signals meant for the program's
//! group never reach it, and it never outlives its program's tree: when it
//! exits, the tree is gone.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// The byte the owner writes to ask the keeper to kill the tree now.
pub(super) const KILL_REQUEST: u8 = b'K';

/// Set by SIGTERM/SIGINT/SIGHUP in the keeper (never in the host).
static END_REQUESTED: AtomicBool = AtomicBool::new(false);

/// Split the spawned child into keeper and program. Returns `Ok` only in the
/// program, which then execs; the keeper never returns.
///
/// # Safety
/// Must run in the child of a `fork`, before `exec`, with `link` the
/// keeper's end of the owner's socket.
pub(super) unsafe fn split(link: RawFd) -> io::Result<()> {
    // SAFETY (whole function): plain system calls in a single-threaded child.
    unsafe {
        // Before forking, so no orphan can slip past to init.
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        let program = libc::fork();
        if program < 0 {
            return Err(io::Error::last_os_error());
        }
        if program == 0 {
            // The program leads its own group: the owner's group signals
            // (interrupt, terminate) reach it and what it starts, not us.
            if libc::setpgid(0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            return Ok(());
        }
        keep(program, link)
    }
}

extern "C" fn on_end(_: libc::c_int) {
    END_REQUESTED.store(true, Ordering::SeqCst);
}

extern "C" fn on_child(_: libc::c_int) {}

/// The keeper's life; see the module documentation.
unsafe fn keep(program: libc::pid_t, link: RawFd) -> ! {
    // SAFETY (whole function): async-signal-safe system calls on stack data.
    unsafe {
        // The owner reads this once `spawn` returns, which is only after the
        // program exec'd and we closed our copy of the error pipe below.
        write_all(link, &(program as u32).to_ne_bytes());
        let waiting_mask = settle_signals();
        if link != 0 && libc::dup2(link, 0) < 0 {
            libc::_exit(126);
        }
        close_from(1);
        libc::prctl(libc::PR_SET_NAME, c"agent-keeper".as_ptr(), 0, 0, 0);

        let mut status: Option<libc::c_int> = None;
        loop {
            reap(program, &mut status);
            if status.is_some() || END_REQUESTED.load(Ordering::SeqCst) {
                break;
            }
            let mut fd = libc::pollfd {
                fd: 0,
                events: libc::POLLIN,
                revents: 0,
            };
            let timeout = libc::timespec {
                tv_sec: 1,
                tv_nsec: 0,
            };
            if libc::ppoll(&raw mut fd, 1, &raw const timeout, &raw const waiting_mask) > 0 {
                // A request byte, or the owner hung up: either ends the tree.
                break;
            }
        }
        kill_tree(program, &mut status);
        libc::close(0);
        exit_as(status)
    }
}

/// Ignore every catchable signal but the ones the keeper acts on; block
/// those outside `ppoll`. Returns the mask to wait with.
unsafe fn settle_signals() -> libc::sigset_t {
    // SAFETY (whole function): sigaction/sigprocmask on stack structures.
    unsafe {
        for sig in 1..=64 {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            libc::sigemptyset(&raw mut sa.sa_mask);
            sa.sa_sigaction = match sig {
                libc::SIGCHLD => {
                    sa.sa_flags = libc::SA_NOCLDSTOP;
                    on_child as *const () as usize
                }
                libc::SIGTERM | libc::SIGINT | libc::SIGHUP => on_end as *const () as usize,
                libc::SIGSEGV
                | libc::SIGBUS
                | libc::SIGFPE
                | libc::SIGILL
                | libc::SIGABRT
                | libc::SIGTRAP
                | libc::SIGSYS => libc::SIG_DFL,
                _ => libc::SIG_IGN,
            };
            // Fails for the signals the C library reserves; nothing to do.
            libc::sigaction(sig, &raw const sa, std::ptr::null_mut());
        }
        let mut block: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut block);
        for sig in [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&raw mut block, sig);
        }
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigprocmask(libc::SIG_BLOCK, &raw const block, &raw mut before);
        before
    }
}

/// Reap every child that has exited, noting the program's status. Returns
/// whether children are left.
unsafe fn reap(program: libc::pid_t, status: &mut Option<libc::c_int>) -> bool {
    loop {
        let mut st: libc::c_int = 0;
        // SAFETY: plain syscall with a stack out-parameter.
        let r = unsafe { libc::waitpid(-1, &raw mut st, libc::WNOHANG) };
        if r > 0 {
            if r == program {
                *status = Some(st);
            }
            continue;
        }
        if r == 0 {
            return true;
        }
        if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return false;
    }
}

/// SIGKILL every child, reap, and repeat until no child is left.
unsafe fn kill_tree(program: libc::pid_t, status: &mut Option<libc::c_int>) {
    // SAFETY (whole function): plain system calls.
    unsafe {
        // Most often the program exited alone: no child left, no scan.
        while reap(program, status) {
            if kill_children() == 0 {
                // Cannot scan /proc: at least the program's group.
                libc::kill(-program, libc::SIGKILL);
            }
            if !reap(program, status) {
                return;
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: 2_000_000,
            };
            libc::nanosleep(&raw const pause, std::ptr::null_mut());
        }
    }
}

/// SIGKILL every live process whose parent is this one. Returns 0 when
/// `/proc` cannot be read, else 1 + the number signalled.
unsafe fn kill_children() -> usize {
    // SAFETY (whole function): raw directory reads into a stack buffer.
    unsafe {
        let me = libc::getpid();
        let dir = libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if dir < 0 {
            return 0;
        }
        #[repr(C, align(8))]
        struct Buf([u8; 4096]);
        let mut buf = Buf([0; 4096]);
        let mut signalled = 1;
        loop {
            let n = libc::syscall(libc::SYS_getdents64, dir, buf.0.as_mut_ptr(), buf.0.len());
            if n <= 0 {
                break;
            }
            let n = n as usize;
            let mut off = 0;
            // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name.
            while off + 19 < n {
                let reclen = u16::from_ne_bytes([buf.0[off + 16], buf.0[off + 17]]) as usize;
                if reclen == 0 {
                    break;
                }
                let name = &buf.0[off + 19..(off + reclen).min(n)];
                if let Some(pid) = parse_pid(name) {
                    if pid != me && parent_of(pid) == Some(me) {
                        libc::kill(pid, libc::SIGKILL);
                        signalled += 1;
                    }
                }
                off += reclen;
            }
        }
        libc::close(dir);
        signalled
    }
}

/// A directory entry name (NUL-terminated) that is all digits.
fn parse_pid(name: &[u8]) -> Option<libc::pid_t> {
    let mut pid: libc::pid_t = 0;
    let mut digits = 0;
    for &b in name {
        match b {
            0 => break,
            b'0'..=b'9' => {
                pid = pid
                    .checked_mul(10)?
                    .checked_add(libc::pid_t::from(b - b'0'))?;
                digits += 1;
            }
            _ => return None,
        }
    }
    (digits > 0).then_some(pid)
}

/// The parent of a live (not zombie) process, from `/proc/<pid>/stat`.
unsafe fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let mut path = [0u8; 32];
    let mut len = 0;
    for &b in b"/proc/" {
        path[len] = b;
        len += 1;
    }
    let mut digits = [0u8; 12];
    let mut n = 0;
    let mut v = pid;
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    while n > 0 {
        n -= 1;
        path[len] = digits[n];
        len += 1;
    }
    for &b in b"/stat\0" {
        path[len] = b;
        len += 1;
    }
    let mut text = [0u8; 512];
    // SAFETY: open/read/close on a NUL-terminated stack path and buffer.
    let got = unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let got = libc::read(fd, text.as_mut_ptr().cast(), text.len());
        libc::close(fd);
        got
    };
    if got <= 0 {
        return None;
    }
    let text = &text[..got as usize];
    // "pid (comm) S ppid ...": the state and ppid follow the last ')'.
    let close = text.iter().rposition(|&b| b == b')')?;
    let rest = text.get(close + 2..)?;
    let state = *rest.first()?;
    if matches!(state, b'Z' | b'X' | b'x') {
        return None;
    }
    let mut ppid: libc::pid_t = 0;
    let mut seen = false;
    for &b in rest.get(2..)? {
        match b {
            b'0'..=b'9' => {
                ppid = ppid * 10 + libc::pid_t::from(b - b'0');
                seen = true;
            }
            _ => break,
        }
    }
    seen.then_some(ppid)
}

/// Close every descriptor from `first` up.
unsafe fn close_from(first: libc::c_uint) {
    // SAFETY (whole function): closing descriptors of this process.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) == 0 {
            return;
        }
        let mut limit: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) == 0 {
            limit.rlim_cur.min(65_536) as libc::c_int
        } else {
            4096
        };
        for fd in first as libc::c_int..max {
            libc::close(fd);
        }
    }
}

unsafe fn write_all(fd: RawFd, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writing from a live slice.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
        } else if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        } else {
            return;
        }
    }
}

/// Exit the way the program did.
unsafe fn exit_as(status: Option<libc::c_int>) -> ! {
    // SAFETY (whole function): plain system calls, then _exit.
    unsafe {
        match status {
            Some(st) if libc::WIFEXITED(st) => libc::_exit(libc::WEXITSTATUS(st)),
            Some(st) if libc::WIFSIGNALED(st) => {
                let sig = libc::WTERMSIG(st);
                let none = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &raw const none);
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &raw const sa, std::ptr::null_mut());
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&raw mut set);
                libc::sigaddset(&raw mut set, sig);
                libc::sigprocmask(libc::SIG_UNBLOCK, &raw const set, std::ptr::null_mut());
                libc::kill(libc::getpid(), sig);
                libc::_exit(128 + sig)
            }
            _ => libc::_exit(127),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_pid;

    #[test]
    fn only_all_digit_names_are_pids() {
        assert_eq!(parse_pid(b"1234\0junk"), Some(1234));
        assert_eq!(parse_pid(b"self\0"), None);
        assert_eq!(parse_pid(b"\0"), None);
        assert_eq!(parse_pid(b"12a\0"), None);
    }
}
