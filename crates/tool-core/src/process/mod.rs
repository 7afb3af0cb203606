//! The one owner of every child process: starting it, watching it, stopping
//! it and everything it started, and reading `/proc` about it.
//!
//! - [`spawn`]: [`ChildSpec`] (how to start a program) and [`ChildProcess`]
//!   (the running program, owned; dropping it kills its whole tree);
//! - `keeper`: the process between us and each program that kills the tree
//!   when the program ends, when its owner is dropped, or when the host
//!   dies, even by SIGKILL;
//! - [`procfs`]: parsing `/proc` (stat, liveness, groups, descendants,
//!   environment markers);
//! - [`signals`]: the only place signals are sent;
//! - [`output`]: bounded capture of a child's output;
//! - [`blocking`]: children run to their end on the caller's thread
//!   (bounded probes in a group of their own; the installer's foreground
//!   steps);
//! - [`fifo`]: a named pipe held open, for a program we do not start
//!   ourselves to read as its standard input.
//!
//! Invariant: no process started through this module outlives its owner or
//! the run, whatever ends it (drop, kill, panic, SIGTERM or SIGKILL of the
//! host), including descendants that call `setsid()` or double-fork.

pub mod blocking;
pub mod fifo;
mod keeper;
pub mod output;
pub mod procfs;
pub mod signals;
pub mod spawn;

pub use blocking::BlockingChild;
pub use fifo::HeldFifo;
pub use output::{capture_into, OutputChunk, OutputRing, SharedOutput};
pub use procfs::{
    descendants, group_members, group_rss_kib, pid_alive, pss_kib, rss_kib, ProcessLine, Stat,
};
pub use signals::{describe_exit, signal_name, Signal};
pub use spawn::{
    spawn_detached, ChildProcess, ChildSpec, ExtraPipe, ExtraPipeEnd, Io, Stopped, TreeProbe,
};

#[cfg(test)]
mod tests;
