//! What the roster keeps: each worker's record, the running slots and the
//! queue, and snapshots of them. The rules that change them (start, queue,
//! settle, stop) live in [`crate::roster`].

use crate::{RunOutcome, RunProcesses, WorkerSnapshot, WorkerState, WorkerTier};
use std::collections::{BTreeMap, VecDeque};
use std::time::{Instant, SystemTime};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tool_core::CancellationToken;

pub(crate) struct RosterState {
    pub(crate) vibe_mode: bool,
    pub(crate) last_id: u32,
    pub(crate) workers: BTreeMap<u32, Worker>,
    /// At most this many workers are running.
    pub(crate) max_workers: usize,
    /// Queued workers, the next to start first.
    pub(crate) queue: VecDeque<u32>,
}

impl RosterState {
    pub(crate) fn running(&self) -> usize {
        self.workers
            .values()
            .filter(|w| w.state == WorkerState::Running)
            .count()
    }

    pub(crate) fn has_free_slot(&self) -> bool {
        self.vibe_mode && self.running() < self.max_workers
    }

    /// A worker's snapshot, with its place in the queue, and where to list
    /// its processes from (read after the lock is released).
    pub(crate) fn snapshot(&self, id: u32) -> (WorkerSnapshot, Option<RunProcesses>) {
        let worker = &self.workers[&id];
        let mut snap = worker.snapshot();
        if worker.state == WorkerState::Queued {
            snap.queue_position = self.queue.iter().position(|q| *q == id).map(|i| i + 1);
        }
        let processes = worker.current.as_ref().map(|c| c.processes.clone());
        (snap, processes)
    }
}

/// Fill in the processes of a snapshot, outside the roster lock (reading
/// /proc takes a while).
pub(crate) fn with_processes(
    (mut snap, processes): (WorkerSnapshot, Option<RunProcesses>),
) -> WorkerSnapshot {
    if snap.state == WorkerState::Running {
        if let Some(p) = processes {
            snap.processes = p.list();
        }
    }
    snap
}

/// The running and queued workers, and the cap, at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Occupancy {
    pub(crate) running: usize,
    pub(crate) queued: usize,
    pub(crate) max_workers: usize,
}

pub(crate) struct Worker {
    pub(crate) id: u32,
    pub(crate) label: String,
    pub(crate) tier: WorkerTier,
    pub(crate) brief: String,
    pub(crate) state: WorkerState,
    pub(crate) started_at: SystemTime,
    pub(crate) started: Instant,
    pub(crate) settled: Option<Instant>,
    pub(crate) last_result: Option<String>,
    pub(crate) failure: Option<String>,
    pub(crate) runs: u32,
    pub(crate) generation: u64,
    pub(crate) current: Option<CurrentRun>,
    /// Bumped on every change of state; vibe_wait watches it.
    pub(crate) changed: watch::Sender<u64>,
}

pub(crate) struct CurrentRun {
    pub(crate) cancel: CancellationToken,
    pub(crate) task: JoinHandle<RunOutcome>,
    pub(crate) processes: RunProcesses,
}

impl Worker {
    pub(crate) fn snapshot(&self) -> WorkerSnapshot {
        let elapsed = match self.settled {
            Some(end) => end.duration_since(self.started),
            None => self.started.elapsed(),
        };
        WorkerSnapshot {
            id: worker_name(self.id),
            label: self.label.clone(),
            tier: self.tier,
            brief: self.brief.clone(),
            state: self.state,
            started_at_unix: self
                .started_at
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            elapsed,
            last_result: self.last_result.clone(),
            failure: self.failure.clone(),
            runs: self.runs,
            queue_position: None,
            processes: Vec::new(),
        }
    }

    pub(crate) fn notify(&self) {
        self.changed.send_modify(|n| *n += 1);
    }
}

pub(crate) fn worker_name(id: u32) -> String {
    format!("w{id}")
}
