//! Sending signals: the one place that calls `kill(2)` and `killpg(2)`.
//!
//! Invariant: a pid or group of 0 or 1 is never signalled (0 would mean our
//! own group, 1 init or "every process" with `-1`): asking for it is an
//! error, so a bug upstream cannot turn into killing the wrong processes.

use std::io;

/// The signals this project sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT, a terminal's Ctrl-C.
    Interrupt,
    /// SIGTERM, a polite stop.
    Terminate,
    /// SIGHUP.
    Hangup,
    /// SIGKILL.
    Kill,
}

impl Signal {
    pub fn number(self) -> i32 {
        match self {
            Signal::Interrupt => libc::SIGINT,
            Signal::Terminate => libc::SIGTERM,
            Signal::Hangup => libc::SIGHUP,
            Signal::Kill => libc::SIGKILL,
        }
    }
}

fn checked(id: u32, what: &str) -> io::Result<i32> {
    match i32::try_from(id) {
        Ok(n) if n > 1 => Ok(n),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to signal {what} {id}"),
        )),
    }
}

/// Send `sig` to the process `pid` alone.
pub fn send(pid: u32, sig: Signal) -> io::Result<()> {
    let pid = checked(pid, "process")?;
    // SAFETY: plain syscall with a checked pid.
    if unsafe { libc::kill(pid, sig.number()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Send `sig` to every process in the group `pgid`.
pub fn send_group(pgid: u32, sig: Signal) -> io::Result<()> {
    let pgid = checked(pgid, "process group")?;
    // SAFETY: plain syscall with a checked group id.
    if unsafe { libc::killpg(pgid, sig.number()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The process group this process is in.
pub fn own_group() -> u32 {
    // SAFETY: plain syscall without arguments.
    unsafe { libc::getpgrp() as u32 }
}

/// Make this process a child subreaper (Linux): a process whose parent dies
/// is re-parented to it instead of to init, so it can be found and stopped.
pub fn become_subreaper() -> io::Result<()> {
    // SAFETY: plain prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The name of signal `sig` (`SIGKILL`), or `None` for one without a
/// well-known name.
pub fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return None,
    })
}

/// How a process ended, in words: "exit status 3", or "killed by signal 9
/// (SIGKILL)".
pub fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    match status.signal() {
        Some(sig) => match signal_name(sig) {
            Some(name) => format!("killed by signal {sig} ({name})"),
            None => format!("killed by signal {sig}"),
        },
        None => "ended".into(),
    }
}

#[cfg(test)]
mod describe_tests {
    use super::describe_exit;
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    #[test]
    fn an_end_is_said_in_words_with_the_signal_named() {
        let said: Vec<String> = [
            ExitStatus::from_raw(3 << 8),
            ExitStatus::from_raw(libc::SIGKILL),
            ExitStatus::from_raw(libc::SIGSEGV),
            ExitStatus::from_raw(40),
        ]
        .into_iter()
        .map(describe_exit)
        .collect();
        assert_eq!(
            said,
            [
                "exit status 3",
                "killed by signal 9 (SIGKILL)",
                "killed by signal 11 (SIGSEGV)",
                "killed by signal 40",
            ]
        );
    }
}
