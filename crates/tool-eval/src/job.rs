//! Background cells. `background: true` starts a cell in a task that owns
//! its language's kernel until the cell ends, and the call answers at once
//! with the job's id; a look (`job`) takes the output that arrived since the
//! last look and says the state; `cancel` interrupts the cell.
//!
//! Invariants: while a job runs its kernel is nowhere else, so no other cell
//! can reach it (the tool refuses them, naming the job); the task holds the
//! run's registry only weakly (a detached call context), so it never keeps
//! the run alive; dropping a [`Job`] aborts its task, which drops — and so
//! kills — the kernel and everything its cells started.

use crate::cell::{self, CellEnd, CellLimits, CellRun};
use crate::config::Language;
use crate::kernel::KernelProcess;
use crate::output::{CellOutput, SharedOutput};
use crate::protocol::CellStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tool_core::{CallContext, CancellationToken};

/// Where a job is, as a look reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Running,
    /// The cell finished without an error.
    Done,
    /// The cell raised, or its kernel died.
    Failed,
    /// The cell was interrupted (cancelled, or over its idle budget).
    Interrupted,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Interrupted => "interrupted",
        }
    }

    fn of(end: &CellEnd) -> JobState {
        match end {
            CellEnd::Finished {
                status: CellStatus::Ok,
                ..
            } => JobState::Done,
            CellEnd::Finished {
                status: CellStatus::Interrupted,
                ..
            }
            | CellEnd::Interrupted { .. }
            | CellEnd::Killed { .. } => JobState::Interrupted,
            CellEnd::Finished { .. } | CellEnd::Died { .. } => JobState::Failed,
        }
    }
}

/// What a look at a job finds.
#[derive(Debug)]
pub enum Look {
    /// Still running: the output since the last look.
    Running {
        elapsed: Duration,
        output: CellOutput,
    },
    /// It ended and this is the first look since: the whole run's end, with
    /// the output no look took yet.
    Ended { state: JobState, run: CellRun },
    /// It ended and its end was shown already.
    Shown { state: JobState },
}

/// One background cell.
pub struct Job {
    pub id: u64,
    pub language: Language,
    pub description: String,
    pub kernel_pid: u32,
    started: Instant,
    output: SharedOutput,
    cancel: CancellationToken,
    task: Option<JoinHandle<(KernelProcess, CellRun)>>,
    /// Set once the task is reaped; the run is taken by the first look.
    ended: Option<(JobState, Option<CellRun>)>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("id", &self.id)
            .field("language", &self.language)
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}

impl Job {
    /// Start `code` on `kernel` in the background.
    pub fn start(
        id: u64,
        mut kernel: KernelProcess,
        code: String,
        limits: CellLimits,
        cx: &CallContext,
        description: String,
    ) -> Job {
        let cancel = CancellationToken::new();
        let cx = cx.detached(cancel.clone());
        let output: SharedOutput = Arc::new(Mutex::new(CellOutput::new(
            limits.max_output_bytes,
            limits.max_images,
        )));
        let shared = output.clone();
        let kernel_pid = kernel.pid();
        let language = kernel.language;
        let task = tokio::spawn(async move {
            let run = cell::run(&mut kernel, &code, limits, &cx, &shared).await;
            (kernel, run)
        });
        Job {
            id,
            language,
            description,
            kernel_pid,
            started: Instant::now(),
            output,
            cancel,
            task: Some(task),
            ended: None,
        }
    }

    pub fn state(&self) -> JobState {
        match &self.ended {
            Some((state, _)) => *state,
            None => JobState::Running,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Whether the cell ended but its kernel was not taken back yet.
    pub fn is_finished(&self) -> bool {
        self.task.as_ref().is_some_and(JoinHandle::is_finished)
    }

    /// Wait (at most `within`) for the cell to end; then its kernel comes
    /// back, unless the cell lost it. `None` while it still runs.
    pub async fn reap(&mut self, within: Duration) -> Option<Result<KernelProcess, String>> {
        let task = self.task.as_mut()?;
        let joined = tokio::time::timeout(within, task).await.ok()?;
        self.task = None;
        Some(match joined {
            Ok((kernel, run)) => {
                let state = JobState::of(&run.end);
                let lost = match &run.end {
                    CellEnd::Killed { .. } => {
                        Some("was killed after an interrupt it did not stop for".to_string())
                    }
                    CellEnd::Died { how } => Some(format!("died ({how})")),
                    _ => None,
                };
                self.ended = Some((state, Some(run)));
                match lost {
                    Some(why) => Err(why),
                    None => Ok(kernel),
                }
            }
            Err(e) => {
                self.ended = Some((JobState::Failed, None));
                Err(format!("was lost with its background job ({e})"))
            }
        })
    }

    /// Interrupt the cell (as a cancelled call would).
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// What a look finds now.
    pub fn look(&mut self) -> Look {
        match &mut self.ended {
            None => Look::Running {
                elapsed: self.elapsed(),
                output: self
                    .output
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take_for_look(),
            },
            Some((state, run)) => match run.take() {
                Some(run) => Look::Ended { state: *state, run },
                None => Look::Shown { state: *state },
            },
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}
