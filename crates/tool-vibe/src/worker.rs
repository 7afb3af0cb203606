//! What a worker is, as the tools and the harness see it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// Which command runs a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WorkerTier {
    /// Mechanical work with a clear spec.
    Fast,
    /// Design, judgement, or reviewing a fast worker's output.
    Good,
}

impl WorkerTier {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerTier::Fast => "fast",
            WorkerTier::Good => "good",
        }
    }
}

impl fmt::Display for WorkerTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a worker's current or last run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkerState {
    /// Waiting for a free slot: as many workers as the roster allows are
    /// running. It starts when one of them ends.
    Queued,
    Running,
    Done,
    Failed,
    /// Its process died without a word (see [`crate::RunOutcome::Lost`]).
    Lost,
    Killed,
}

impl WorkerState {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerState::Queued => "queued",
            WorkerState::Running => "running",
            WorkerState::Done => "done",
            WorkerState::Failed => "failed",
            WorkerState::Lost => "lost",
            WorkerState::Killed => "killed",
        }
    }

    /// Done, failed, lost or killed: neither queued nor running.
    pub fn is_settled(self) -> bool {
        !matches!(self, WorkerState::Queued | WorkerState::Running)
    }
}

impl fmt::Display for WorkerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A worker at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerSnapshot {
    /// `w1`, `w2`, … in spawn order.
    pub id: String,
    pub label: String,
    pub tier: WorkerTier,
    /// The whole brief, with every message vibe_send appended.
    pub brief: String,
    pub state: WorkerState,
    /// When the current (or last) run started, seconds since the Unix epoch.
    pub started_at_unix: f64,
    /// How long the current run has run, or how long the last one ran.
    #[serde(serialize_with = "as_secs")]
    pub elapsed: Duration,
    /// The last finished run's final output (capped), or a killed run's
    /// partial output.
    pub last_result: Option<String>,
    /// Why the last run failed (exit status and stderr tail).
    pub failure: Option<String>,
    /// How many runs were started or queued (1 + the re-runs vibe_send
    /// caused).
    pub runs: u32,
    /// While queued: its place in the queue, 1 for the next to start.
    pub queue_position: Option<usize>,
    /// While running: every live process of its run (the worker command
    /// first, then what it started, parents before children).
    pub processes: Vec<WorkerProcess>,
}

/// One process of a running worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkerProcess {
    pub pid: u32,
    /// Its command line, arguments joined by spaces.
    pub command: String,
}

fn as_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 10.0).round() / 10.0)
}
