//! Children run to their end on the caller's thread: a short probe (a
//! version check, gdb's injection test) in a process group of its own,
//! killed with its group when its bound runs out or its owner drops it
//! first; and a step of a command the user runs in the foreground (the
//! installer's npm, pip, go, rustup, apt-get), left in the user's process
//! group so that the terminal's Ctrl-C stops it with the command.
//!
//! Both are described by a [`ChildSpec`], as every child is. Long-lived
//! children of a run (servers, adapters, kernels, workers) are started by
//! [`ChildSpec::spawn`], under a keeper that reaps them whatever ends the
//! host.

use super::signals::{self, Signal};
use super::ChildSpec;
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStderr, ChildStdout, ExitStatus, Output};
use std::time::{Duration, Instant};

/// A probe's child, in a process group of its own: killed with its group
/// when dropped before it ended.
#[derive(Debug)]
pub struct BlockingChild {
    /// `None` once handed over ([`Self::wait_with_output`]).
    child: Option<Child>,
    ended: bool,
}

impl BlockingChild {
    /// Start `spec` leading a new process group (its extra pipes, if any,
    /// are refused: a probe has the standard three).
    pub fn spawn(spec: &ChildSpec) -> io::Result<BlockingChild> {
        if spec.has_extra_pipes() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a blocking child has no extra pipes",
            ));
        }
        let child = spec.command().process_group(0).spawn()?;
        Ok(BlockingChild {
            child: Some(child),
            ended: false,
        })
    }

    fn child(&mut self) -> &mut Child {
        self.child
            .as_mut()
            .expect("the child is handed over only when consumed")
    }

    /// Its pid, which is also its process group.
    pub fn id(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Its standard output, when piped and not taken yet.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child().stdout.take()
    }

    /// Its standard error, when piped and not taken yet.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child().stderr.take()
    }

    /// Wait at most `bound` for it to end: its status, or `None` when the
    /// bound ran out and its group was killed.
    pub fn wait_bounded(&mut self, bound: Duration) -> io::Result<Option<ExitStatus>> {
        let deadline = Instant::now() + bound;
        loop {
            if let Some(status) = self.child().try_wait()? {
                self.ended = true;
                return Ok(Some(status));
            }
            if Instant::now() >= deadline {
                self.kill();
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Its whole output once it ended (within [`Self::wait_bounded`], or
    /// killed), with its status.
    pub fn wait_with_output(mut self) -> io::Result<Output> {
        self.ended = true;
        let child = self.child.take().expect("not handed over before");
        child.wait_with_output()
    }

    /// Kill its group and reap it.
    pub fn kill(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        if let Some(child) = self.child.as_mut() {
            let _ = signals::send_group(child.id(), Signal::Kill);
            let _ = child.wait();
        }
    }
}

impl Drop for BlockingChild {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Run a foreground step of a command the user runs (the installer's) to
/// its end, with its output captured: in the user's process group, so the
/// terminal's signals reach it with the command.
pub fn foreground_output(spec: &ChildSpec) -> io::Result<Output> {
    spec.command().output()
}

#[cfg(test)]
mod tests {
    use super::BlockingChild;
    use crate::process::{ChildSpec, Io};
    use std::time::Duration;

    #[test]
    fn a_probe_past_its_bound_is_killed_with_its_group() {
        let mut child = BlockingChild::spawn(
            &ChildSpec::new("sh")
                .args(["-c", "sleep 300 & sleep 300"])
                .stdout(Io::Null)
                .stderr(Io::Inherit),
        )
        .unwrap();
        let pgid = child.id();
        // sh and its two sleeps.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while crate::process::group_members(pgid).len() < 3 && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(crate::process::group_members(pgid).len(), 3);
        assert_eq!(child.wait_bounded(Duration::from_millis(50)).unwrap(), None);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !crate::process::group_members(pgid).is_empty()
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(crate::process::group_members(pgid), Vec::<u32>::new());
    }

    #[test]
    fn a_probe_that_ends_gives_its_output() {
        let mut child = BlockingChild::spawn(
            &ChildSpec::new("echo")
                .arg("3.12")
                .stdin(Io::Inherit)
                .stderr(Io::Inherit),
        )
        .unwrap();
        let status = child.wait_bounded(Duration::from_secs(10)).unwrap();
        assert!(status.is_some_and(|s| s.success()));
        let out = child.wait_with_output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "3.12\n");
    }
}
