//! The one way every crate starts a child process.
//!
//! Invariants: every child leads its own process group, and the whole group
//! (the child and everything it forked) is killed when the [`ChildProcess`]
//! is dropped or killed on request. Output is captured into bounded buffers,
//! never an unbounded `Vec`.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::unix::pipe;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// What one of the standard streams is connected to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    Null,
    Pipe,
    Inherit,
}

impl Io {
    fn stdio(self) -> Stdio {
        match self {
            Io::Null => Stdio::null(),
            Io::Pipe => Stdio::piped(),
            Io::Inherit => Stdio::inherit(),
        }
    }
}

/// An extra pipe beyond stdin/stdout/stderr, at a fixed descriptor number in
/// the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraPipe {
    /// The child reads fd `n`; we write.
    ToChild(RawFd),
    /// The child writes fd `n`; we read.
    FromChild(RawFd),
}

/// How to start a child.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    program: OsString,
    args: Vec<OsString>,
    cwd: Option<PathBuf>,
    env: Vec<(OsString, Option<OsString>)>,
    env_clear: bool,
    stdin: Io,
    stdout: Io,
    stderr: Io,
    extra: Vec<ExtraPipe>,
}

impl ChildSpec {
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        ChildSpec {
            program: program.as_ref().to_os_string(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            env_clear: false,
            stdin: Io::Null,
            stdout: Io::Pipe,
            stderr: Io::Pipe,
            extra: Vec::new(),
        }
    }

    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.args.push(a.as_ref().to_os_string());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_path_buf());
        self
    }

    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Self {
        self.env
            .push((k.as_ref().to_os_string(), Some(v.as_ref().to_os_string())));
        self
    }

    pub fn env_remove(mut self, k: impl AsRef<OsStr>) -> Self {
        self.env.push((k.as_ref().to_os_string(), None));
        self
    }

    pub fn env_clear(mut self) -> Self {
        self.env_clear = true;
        self
    }

    pub fn stdin(mut self, io: Io) -> Self {
        self.stdin = io;
        self
    }

    pub fn stdout(mut self, io: Io) -> Self {
        self.stdout = io;
        self
    }

    pub fn stderr(mut self, io: Io) -> Self {
        self.stderr = io;
        self
    }

    pub fn extra_pipe(mut self, pipe: ExtraPipe) -> Self {
        self.extra.push(pipe);
        self
    }

    /// Run this command through a wrapper (a sandbox's `exec` prefix): the
    /// wrapper's program and args come first, then this command's.
    pub fn wrapped_in(mut self, wrapper: &[OsString]) -> Self {
        if let Some((first, rest)) = wrapper.split_first() {
            let mut args: Vec<OsString> = rest.to_vec();
            args.push(std::mem::replace(&mut self.program, first.clone()));
            args.append(&mut self.args);
            self.args = args;
        }
        self
    }

    pub fn program(&self) -> &OsStr {
        &self.program
    }

    pub fn arguments(&self) -> &[OsString] {
        &self.args
    }

    /// The command line as a person would type it, for messages.
    pub fn display(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Start it. Must be called inside a tokio runtime.
    pub fn spawn(&self) -> io::Result<ChildProcess> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .stdin(self.stdin.stdio())
            .stdout(self.stdout.stdio())
            .stderr(self.stderr.stdio())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        if self.env_clear {
            cmd.env_clear();
        }
        for (k, v) in &self.env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }

        // Pipes: (target fd in child, child's end, our end, direction).
        let mut child_ends: Vec<(RawFd, OwnedFd)> = Vec::new();
        let mut ours: Vec<(ExtraPipe, OwnedFd)> = Vec::new();
        for p in &self.extra {
            let (read, write) = make_pipe()?;
            match *p {
                ExtraPipe::ToChild(n) => {
                    child_ends.push((n, read));
                    ours.push((*p, write));
                }
                ExtraPipe::FromChild(n) => {
                    child_ends.push((n, write));
                    ours.push((*p, read));
                }
            }
        }
        if !child_ends.is_empty() {
            let plan: Vec<(RawFd, RawFd)> = child_ends
                .iter()
                .map(|(n, fd)| (*n, fd.as_raw_fd()))
                .collect();
            // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork
            // and exec, on descriptors we own.
            unsafe {
                cmd.pre_exec(move || {
                    // First move every source above any target so a dup2 never
                    // clobbers a source still to be placed.
                    let mut moved = Vec::with_capacity(plan.len());
                    for &(target, src) in &plan {
                        let high = libc::fcntl(src, libc::F_DUPFD_CLOEXEC, 64);
                        if high < 0 {
                            return Err(io::Error::last_os_error());
                        }
                        moved.push((target, high));
                    }
                    for (target, high) in moved {
                        if libc::dup2(high, target) < 0 {
                            return Err(io::Error::last_os_error());
                        }
                    }
                    Ok(())
                });
            }
        }
        let mut child = cmd.spawn().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot start `{}`: {e}", self.program.to_string_lossy()),
            )
        })?;
        drop(child_ends);
        let pid = child.id().unwrap_or(0) as i32;
        let mut pipes = Vec::new();
        for (p, fd) in ours {
            pipes.push(match p {
                ExtraPipe::ToChild(n) => ExtraPipeEnd::Writer(n, pipe::Sender::from_owned_fd(fd)?),
                ExtraPipe::FromChild(n) => {
                    ExtraPipeEnd::Reader(n, pipe::Receiver::from_owned_fd(fd)?)
                }
            });
        }
        tracing::debug!(pid, cmd = %self.display(), "child started");
        Ok(ChildProcess {
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
            pipes,
            child,
            pgid: pid,
            command: self.display(),
        })
    }
}

fn make_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: fds is a valid two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 just returned these two fresh descriptors.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Our end of an extra pipe, with the child's descriptor number.
#[derive(Debug)]
pub enum ExtraPipeEnd {
    Writer(RawFd, pipe::Sender),
    Reader(RawFd, pipe::Receiver),
}

/// A running child and its process group. Dropping it kills the group.
#[derive(Debug)]
pub struct ChildProcess {
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
    pipes: Vec<ExtraPipeEnd>,
    child: Child,
    pgid: i32,
    command: String,
}

impl ChildProcess {
    pub fn pid(&self) -> u32 {
        self.pgid as u32
    }

    pub fn command(&self) -> &str {
        &self.command
    }

    /// Take our writing end of the pipe the child reads as fd `n`.
    pub fn take_writer(&mut self, n: RawFd) -> Option<pipe::Sender> {
        let i = self
            .pipes
            .iter()
            .position(|p| matches!(p, ExtraPipeEnd::Writer(m, _) if *m == n))?;
        match self.pipes.remove(i) {
            ExtraPipeEnd::Writer(_, w) => Some(w),
            ExtraPipeEnd::Reader(..) => None,
        }
    }

    /// Take our reading end of the pipe the child writes as fd `n`.
    pub fn take_reader(&mut self, n: RawFd) -> Option<pipe::Receiver> {
        let i = self
            .pipes
            .iter()
            .position(|p| matches!(p, ExtraPipeEnd::Reader(m, _) if *m == n))?;
        match self.pipes.remove(i) {
            ExtraPipeEnd::Reader(_, r) => Some(r),
            ExtraPipeEnd::Writer(..) => None,
        }
    }

    /// Send a signal to the child alone.
    pub fn signal(&self, sig: i32) -> io::Result<()> {
        // SAFETY: plain syscall.
        if unsafe { libc::kill(self.pgid, sig) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Send a signal to the whole group.
    pub fn signal_group(&self, sig: i32) -> io::Result<()> {
        // SAFETY: plain syscall.
        if unsafe { libc::killpg(self.pgid, sig) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Kill the whole group now and reap the child.
    pub async fn kill(&mut self) {
        let _ = self.signal_group(libc::SIGKILL);
        let _ = self.child.kill().await;
    }

    /// SIGTERM the group, wait up to `grace`, then SIGKILL it.
    pub async fn terminate(&mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        let _ = self.signal_group(libc::SIGTERM);
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => {
                let _ = self.signal_group(libc::SIGKILL);
                Some(status)
            }
            _ => {
                self.kill().await;
                self.child.try_wait().ok().flatten()
            }
        }
    }

    pub async fn wait(&mut self) -> io::Result<std::process::ExitStatus> {
        self.child.wait().await
    }

    pub fn try_wait(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        self.child.try_wait()
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if self.pgid > 0 {
            // SAFETY: plain syscall; the group is ours.
            unsafe {
                libc::killpg(self.pgid, libc::SIGKILL);
            }
        }
    }
}

/// Whether a process exists and is not a zombie.
pub fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state follows the parenthesised command name.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, r)| r.trim().chars().next());
            !matches!(state, Some('Z') | Some('X') | None)
        }
        Err(_) => false,
    }
}

/// The pids of every live process in a process group.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            if let Some((_, rest)) = stat.rsplit_once(')') {
                let fields: Vec<&str> = rest.split_whitespace().collect();
                // fields[0] state, [1] ppid, [2] pgrp
                if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
                    && !matches!(fields.first(), Some(&"Z") | Some(&"X"))
                {
                    out.push(pid);
                }
            }
        }
    }
    out
}

/// A bounded ring of output bytes with a cursor, so a reader can ask for what
/// is new since its last read. Oldest bytes are dropped past the capacity.
#[derive(Debug)]
pub struct OutputRing {
    buf: VecDeque<u8>,
    capacity: usize,
    /// Bytes ever written; the cursor space.
    written: u64,
}

/// What [`OutputRing::read_since`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputChunk {
    pub text: String,
    /// Pass this as the next cursor.
    pub cursor: u64,
    /// Bytes between the given cursor and what is still kept, now lost.
    pub dropped: u64,
}

impl OutputRing {
    pub fn new(capacity: usize) -> Self {
        OutputRing {
            buf: VecDeque::with_capacity(capacity.min(64 * 1024)),
            capacity,
            written: 0,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.written += bytes.len() as u64;
        let bytes = if bytes.len() > self.capacity {
            &bytes[bytes.len() - self.capacity..]
        } else {
            bytes
        };
        let overflow = (self.buf.len() + bytes.len()).saturating_sub(self.capacity);
        self.buf.drain(..overflow);
        self.buf.extend(bytes);
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    /// Everything kept after `cursor`.
    pub fn read_since(&self, cursor: u64) -> OutputChunk {
        let start = self.written - self.buf.len() as u64;
        let from = cursor.max(start).min(self.written);
        let skip = (from - start) as usize;
        let bytes: Vec<u8> = self.buf.iter().skip(skip).copied().collect();
        OutputChunk {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            cursor: self.written,
            dropped: from - cursor.min(from),
        }
    }

    /// The last `n` bytes kept, as text.
    pub fn tail(&self, n: usize) -> String {
        let skip = self.buf.len().saturating_sub(n);
        let bytes: Vec<u8> = self.buf.iter().skip(skip).copied().collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// A shared ring several readers feed.
pub type SharedOutput = Arc<Mutex<OutputRing>>;

/// Copy a stream into a shared ring until it ends. Returns the task.
pub fn capture_into<R>(mut reader: R, ring: SharedOutput) -> tokio::task::JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => ring.lock().expect("output lock").push(&buf[..n]),
            }
        }
    })
}

#[cfg(test)]
mod tests;
