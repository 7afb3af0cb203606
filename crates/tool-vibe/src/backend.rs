//! The [`WorkerBackend`] trait: what runs one worker run.

use crate::{WorkerProcess, WorkerTier};
use async_trait::async_trait;
use std::sync::{Arc, Mutex};
use tool_core::process::TreeProbe;
use tool_core::CancellationToken;

/// One run of a worker: its brief in, its result out.
#[derive(Debug, Clone)]
pub struct WorkerRun {
    pub worker_id: String,
    pub label: String,
    pub tier: WorkerTier,
    pub brief: String,
    /// 1 for the first run, then one more per vibe_send.
    pub run: u32,
    /// Where the run publishes its process tree, so vibe_list can show
    /// what the worker runs.
    pub processes: RunProcesses,
}

/// A run's process tree, published by the backend once it started the
/// run's processes and read by the roster to list them. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct RunProcesses {
    probe: Arc<Mutex<Option<TreeProbe>>>,
}

impl RunProcesses {
    /// The run's processes are the tree behind `probe`.
    pub fn publish(&self, probe: TreeProbe) {
        *self.probe.lock().expect("probe lock") = Some(probe);
    }

    /// Every live process of the run, the worker command first; none before
    /// the backend published its tree or once the tree is gone.
    pub fn list(&self) -> Vec<WorkerProcess> {
        let probe = *self.probe.lock().expect("probe lock");
        probe
            .map(|p| p.listed())
            .unwrap_or_default()
            .into_iter()
            .map(|l| WorkerProcess {
                pid: l.pid,
                command: l.command,
            })
            .collect()
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// Finished well; `output` is its final output.
    Done { output: String },
    /// Finished badly and said so: `why` says how (exit status, stderr
    /// tail).
    Failed { why: String, output: String },
    /// Died without a word: killed by a signal nobody here sent, or exited
    /// non-zero with nothing on stderr. `why` says how it ended.
    Lost { why: String, output: String },
    /// Stopped because the cancellation token fired; what it had written,
    /// and what stopping it took.
    Cancelled {
        output: String,
        /// Processes of the run that were running and are gone now, when
        /// the backend can tell.
        killed: Option<usize>,
        /// Processes of the run that are still running (should be none).
        survivors: Vec<u32>,
    },
}

/// Runs worker runs.
///
/// Contract: `run` resolves when the run ends. When `cancel` fires it stops
/// the run, including every process the run started, and resolves promptly
/// with [`RunOutcome::Cancelled`]. If the future is dropped instead, the run
/// must still stop (own its processes through tool-core's `ChildProcess`,
/// which kills the group on drop).
#[async_trait]
pub trait WorkerBackend: Send + Sync {
    async fn run(&self, run: WorkerRun, cancel: CancellationToken) -> RunOutcome;

    /// The tiers this backend can run, for validation and messages.
    fn tiers(&self) -> Vec<WorkerTier>;

    /// One line per tier for `doctor`: what runs it.
    fn describe(&self) -> Vec<String> {
        Vec::new()
    }
}
