//! Starting a child: [`ChildSpec`] says how, [`ChildProcess`] owns it.
//!
//! Invariants: every program runs under its own [keeper](super::keeper),
//! which leads a process group of its own; the program leads another. The
//! owner talks to the keeper over a socket pair: dropping the owner (or the
//! death of the whole host, however it dies) closes the socket and the
//! keeper kills the program and every process descended from it, including
//! those that called `setsid()` or double-forked. [`ChildProcess::pid`] is
//! the program's pid and its process group; [`ChildProcess::wait`] returns
//! the program's status once the whole tree is gone.

use super::keeper;
use super::procfs::{self, Stat};
use super::signals::{self, Signal};
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::net::unix::pipe;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// How long the keeper gets to kill a tree before the owner falls back to
/// killing the program's group itself.
const KEEPER_GRACE: Duration = Duration::from_secs(5);

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

impl ExtraPipe {
    /// The descriptor number in the child.
    pub fn fd(&self) -> RawFd {
        match *self {
            ExtraPipe::ToChild(n) | ExtraPipe::FromChild(n) => n,
        }
    }
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

    /// Whether it asks for pipes beyond the standard three.
    pub(super) fn has_extra_pipes(&self) -> bool {
        !self.extra.is_empty()
    }

    /// The program, its arguments, working directory, environment and
    /// standard streams as a `std` command (extra pipes are placed by
    /// [`Self::spawn`] only).
    pub(super) fn command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(&self.program);
        cmd.args(&self.args)
            .stdin(self.stdin.stdio())
            .stdout(self.stdout.stdio())
            .stderr(self.stderr.stdio());
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
        cmd
    }

    /// Start it. Must be called inside a tokio runtime.
    pub fn spawn(&self) -> io::Result<ChildProcess> {
        let mut cmd = Command::from(self.command());
        // The keeper leads this group; the program makes its own.
        cmd.process_group(0)
            // Never SIGKILL the keeper: it must outlive the program to kill
            // what the program left. Dropping the link ends it instead.
            .kill_on_drop(false);

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
        // The link to the keeper, placed above every descriptor the child
        // is to receive so no dup2 above clobbers it.
        let (owner_end, keeper_end) = UnixStream::pair()?;
        let lowest = self.extra.iter().map(ExtraPipe::fd).max().unwrap_or(2) + 1;
        let keeper_end = dup_at_least(&keeper_end.into(), lowest)?;
        let keeper_raw = keeper_end.as_raw_fd();
        // SAFETY: `split` makes only async-signal-safe calls; registered last,
        // after the pipe placement, so the program inherits the placed pipes.
        unsafe {
            cmd.pre_exec(move || keeper::split(keeper_raw));
        }
        let mut child = cmd.spawn().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot start `{}`: {e}", self.program.to_string_lossy()),
            )
        })?;
        drop(child_ends);
        drop(keeper_end);
        let keeper_pid = child.id().unwrap_or(0);
        // Written before the keeper closed the spawn error pipe, so it is
        // there now.
        let mut link = owner_end;
        let mut pid = [0u8; 4];
        link.set_read_timeout(Some(KEEPER_GRACE))?;
        if let Err(e) = link.read_exact(&mut pid) {
            let _ = child.start_kill();
            return Err(io::Error::other(format!(
                "cannot start `{}`: its keeper did not report: {e}",
                self.program.to_string_lossy()
            )));
        }
        link.set_nonblocking(true)?;
        let pid = u32::from_ne_bytes(pid);
        let keeper_start = procfs::stat(keeper_pid).map_or(0, |s| s.start_time);
        let mut pipes = Vec::new();
        for (p, fd) in ours {
            pipes.push(match p {
                ExtraPipe::ToChild(n) => ExtraPipeEnd::Writer(n, pipe::Sender::from_owned_fd(fd)?),
                ExtraPipe::FromChild(n) => {
                    ExtraPipeEnd::Reader(n, pipe::Receiver::from_owned_fd(fd)?)
                }
            });
        }
        tracing::debug!(pid, keeper = keeper_pid, cmd = %self.display(), "child started");
        Ok(ChildProcess {
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
            pipes,
            child,
            pid,
            keeper: keeper_pid,
            keeper_start,
            link: Some(link),
            command: self.display(),
        })
    }
}

/// A duplicate of `fd` numbered `lowest` or higher, closed on exec.
fn dup_at_least(fd: &OwnedFd, lowest: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: fcntl on a descriptor we own; the result is fresh.
    let n = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, lowest) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fcntl just returned this fresh descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(n) })
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

/// What stopping a tree did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// The program's status, when it could be collected.
    pub status: Option<ExitStatus>,
    /// Processes of the tree (the program and its descendants) that were
    /// running when the stop began and are gone now.
    pub killed: usize,
    /// Processes of the tree still running afterwards (should be none).
    pub survivors: Vec<u32>,
}

/// A way to list a [`ChildProcess`]'s tree without owning it: its keeper's
/// pid and start time, so a recycled pid is never taken for the keeper.
/// Once the tree is gone it lists nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeProbe {
    keeper: u32,
    keeper_start: u64,
}

impl TreeProbe {
    /// Every live process of the tree: the program and all its descendants,
    /// wherever they re-parented, parents before their children.
    pub fn members(&self) -> Vec<Stat> {
        let keeper_runs =
            procfs::live_stat(self.keeper).map(|s| s.start_time) == Some(self.keeper_start);
        if !keeper_runs {
            // The keeper exits only once the tree is gone.
            return Vec::new();
        }
        procfs::descendants(self.keeper)
            .into_iter()
            .filter_map(procfs::live_stat)
            .collect()
    }

    /// [`members`](Self::members) with their command lines.
    pub fn listed(&self) -> Vec<procfs::ProcessLine> {
        procfs::with_command_lines(&self.members())
    }
}

/// A running program, its keeper, and everything it starts. Dropping it
/// kills them all.
#[derive(Debug)]
pub struct ChildProcess {
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
    pipes: Vec<ExtraPipeEnd>,
    /// The keeper; its exit status is the program's.
    child: Child,
    /// The program, leader of its own process group.
    pid: u32,
    keeper: u32,
    /// The keeper's start time, so a recycled pid is never taken for it.
    keeper_start: u64,
    /// Our end of the keeper's socket; closing it ends the tree.
    link: Option<UnixStream>,
    command: String,
}

impl ChildProcess {
    /// The program's pid, which is also its process group.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The pid of the program's keeper.
    pub fn keeper_pid(&self) -> u32 {
        self.keeper
    }

    pub fn command(&self) -> &str {
        &self.command
    }

    /// Every live process of the tree: the program and all its descendants,
    /// wherever they re-parented, with their start times.
    pub fn tree(&self) -> Vec<Stat> {
        self.probe().members()
    }

    /// A handle for listing this tree from elsewhere (another task, while
    /// this owner waits on the program).
    pub fn probe(&self) -> TreeProbe {
        TreeProbe {
            keeper: self.keeper,
            keeper_start: self.keeper_start,
        }
    }

    /// Whether the program still runs (it leads its own group, so a pid
    /// recycled since is not taken for it).
    fn program_running(&self) -> bool {
        procfs::live_stat(self.pid).is_some_and(|s| s.pgrp == self.pid)
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

    /// Send a signal to the program alone.
    pub fn signal(&self, sig: Signal) -> io::Result<()> {
        signals::send(self.pid, sig)
    }

    /// Send a signal to the program's process group (what it started and
    /// did not move to another group or session).
    pub fn signal_group(&self, sig: Signal) -> io::Result<()> {
        signals::send_group(self.pid, sig)
    }

    /// Have the tree killed now: by the keeper, or, when the keeper is gone,
    /// by killing the program's group ourselves.
    fn end_tree_now(&mut self) {
        if !self.request_kill() && self.program_running() {
            let _ = self.signal_group(Signal::Kill);
        }
    }

    /// Ask the keeper to kill the tree now. False when it is gone.
    fn request_kill(&mut self) -> bool {
        let Some(link) = &self.link else {
            return false;
        };
        let byte = [keeper::KILL_REQUEST];
        // SAFETY: send on our own socket; MSG_NOSIGNAL so a closed peer is an
        // error, not SIGPIPE.
        let n = unsafe {
            libc::send(
                link.as_raw_fd(),
                byte.as_ptr().cast(),
                1,
                libc::MSG_NOSIGNAL,
            )
        };
        n == 1
    }

    /// Wait for the keeper (so the whole tree) to be gone; when it does not
    /// finish within [`KEEPER_GRACE`], kill the program's group and the
    /// keeper ourselves.
    async fn finish(&mut self) -> Option<ExitStatus> {
        if let Ok(Ok(status)) = tokio::time::timeout(KEEPER_GRACE, self.child.wait()).await {
            Some(status)
        } else {
            tracing::warn!(
                pid = self.pid,
                keeper = self.keeper,
                "the keeper did not finish; killing the group"
            );
            let _ = self.signal_group(Signal::Kill);
            let _ = self.child.kill().await;
            self.child.try_wait().ok().flatten()
        }
    }

    /// What became of `before` now that the stop is over.
    fn account(&self, before: &[Stat], status: Option<ExitStatus>) -> Stopped {
        let survivors: Vec<u32> = before
            .iter()
            .filter(|s| procfs::live_stat(s.pid).map(|n| n.start_time) == Some(s.start_time))
            .map(|s| s.pid)
            .collect();
        if !survivors.is_empty() {
            tracing::warn!(pid = self.pid, ?survivors, "processes survived a stop");
        }
        Stopped {
            status,
            killed: before.len() - survivors.len(),
            survivors,
        }
    }

    /// Kill the program and everything it started, now, and wait until they
    /// are gone.
    pub async fn kill(&mut self) -> Stopped {
        let before = self.tree();
        self.end_tree_now();
        let status = self.finish().await;
        self.link = None;
        self.account(&before, status)
    }

    /// SIGTERM the program's group, wait up to `grace` for the program to
    /// exit, then kill whatever of the tree is left.
    pub async fn terminate(&mut self, grace: Duration) -> Stopped {
        let before = self.tree();
        if self.program_running() {
            let _ = self.signal_group(Signal::Terminate);
        }
        let status = if let Ok(Ok(status)) = tokio::time::timeout(grace, self.child.wait()).await {
            Some(status)
        } else {
            self.end_tree_now();
            self.finish().await
        };
        self.link = None;
        self.account(&before, status)
    }

    /// Wait for the program to exit; the rest of its tree is killed before
    /// this returns.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        self.child.wait().await
    }

    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // Closing the link tells the keeper to kill the tree; tokio reaps
        // the keeper in the background.
        self.link = None;
        // A keeper that was killed cannot do it: fall back to the program's
        // group, the most that can still be reached.
        if matches!(self.child.try_wait(), Ok(Some(_))) && self.program_running() {
            let _ = self.signal_group(Signal::Kill);
        }
    }
}

/// Start a daemon: `spec`'s program in a process group and session of its
/// own, its standard streams on `/dev/null`, with no keeper — the one
/// exception to this module's invariant, for a process that must outlive
/// the run that started it (the shared-server broker) and ends itself.
/// Reaped by a thread of ours while we live; re-parented after. Returns
/// its pid.
pub fn spawn_detached(spec: &ChildSpec) -> io::Result<u32> {
    use std::os::unix::process::CommandExt;
    let mut cmd = spec.command();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot start `{}`: {e}", spec.program.to_string_lossy()),
        )
    })?;
    let pid = child.id();
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(pid)
}
