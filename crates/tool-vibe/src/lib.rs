//! The five vibe_* tools and the [`Roster`] of background workers they steer.
//!
//! A worker is one brief handed to a [`WorkerBackend`] (shipped:
//! [`CommandBackend`], an agent CLI per tier started as a child process),
//! running in the background while the model goes on. `vibe_spawn` returns at
//! once; `vibe_wait` blocks, bounded, until the worker settles; `vibe_send`
//! appends to the brief and re-runs; `vibe_kill` stops it and everything it
//! started; `vibe_list` shows them all.
//!
//! Invariants kept here:
//! - the tools are in the Registry exactly while vibe mode is on; switching it
//!   off unregisters them and kills every worker;
//! - at most `max_workers` runs are in flight (default
//!   [`DEFAULT_MAX_WORKERS`]); a worker spawned or re-run beyond that waits
//!   in a first-in, first-out queue and starts when a running one ends;
//! - every run reaches a final state (done, failed, lost, killed), and no worker
//!   process outlives its run, its roster or the process (each run is a
//!   process group, killed as a group);
//! - all five tools are read tier: the gate sits on the worker's own tools,
//!   where the editing happens.

mod backend;
mod binding;
mod command;
mod format;
mod record;
mod roster;
mod tools;
mod worker;

pub use backend::{RunOutcome, RunProcesses, WorkerBackend, WorkerRun};

/// Set (to the worker's id) in the environment of every worker process and
/// everything it starts; `vibe_spawn` refuses to run where it is set, so
/// workers never start workers (depth 1).
pub const WORKER_MARKER: &str = "AGENT_TOOLS_VIBE_WORKER";
pub use binding::VibeBinding;
pub use command::CommandBackend;
pub use roster::{Roster, DEFAULT_MAX_WORKERS};
pub use tools::{KillArgs, ListArgs, SendArgs, SpawnArgs, WaitArgs, TOOLS, TOOL_NAMES};
pub use worker::{WorkerProcess, WorkerSnapshot, WorkerState, WorkerTier};

/// This crate's tools as the host lists them before a resource is bound.
pub const FAMILY: tool_core::FamilyDecl = tool_core::FamilyDecl {
    tools: &TOOLS,
    resource: "vibe roster (vibe mode on)",
};
