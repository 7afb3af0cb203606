//! The [`Roster`]: one run's workers, and the switch that puts the vibe
//! tools into the Registry and takes them out again.
//!
//! Each worker has at most one run in flight, and at most `max_workers` runs
//! are in flight at once: a run beyond that waits in a first-in, first-out
//! queue (the worker is `queued`) and starts when a running one ends or is
//! killed. Killing a queued worker takes it out of the queue; it never
//! starts. A run is a tokio task driving
//! the backend; it reports back through a weak reference, so a roster that is
//! gone is never kept alive by its workers, and its drop cancels them all.
//! Each run carries a generation number: a run that was stopped (by send,
//! kill or vibe mode off) cannot overwrite the state of the run after it.
//!
//! Every run that ends (done, failed, lost, killed) is announced on the run's
//! notice board, keyed by worker and run, so the director hears of it in the
//! next result of any tool (and over MCP at once) without polling; a vibe
//! tool whose own answer tells the same news withdraws the notice.

use crate::record::{with_processes, worker_name, CurrentRun, Occupancy, RosterState, Worker};
use crate::{
    RunOutcome, RunProcesses, WorkerBackend, WorkerRun, WorkerSnapshot, WorkerState, WorkerTier,
};
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::watch;
use tool_core::{CancellationToken, NoticeBoard, Registry, RegistryError, ToolError};

/// How long a stopped run gets to end before its task is aborted (which
/// drops its child and SIGKILLs the group).
const STOP_WAIT: Duration = Duration::from_secs(5);

/// How many workers run at once unless the roster is told otherwise.
pub const DEFAULT_MAX_WORKERS: usize = 4;

/// One run's workers. Cheap to clone: clones are the same roster. The
/// harness keeps one to switch vibe mode; the Registry's tools hold only a
/// weak reference, so dropping the last clone ends every worker.
#[derive(Clone)]
pub struct Roster {
    inner: Arc<RosterInner>,
}

impl fmt::Debug for Roster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Roster")
            .field("vibe_mode", &self.vibe_mode())
            .field("workers", &self.snapshots().len())
            .finish_non_exhaustive()
    }
}

/// The tools vibe mode puts into a Registry and takes out again. The
/// binding gives them ([`crate::binding`]), so the roster names no tool.
pub(crate) trait VibeTools: Send + Sync {
    /// Register every tool not yet in `registry`, each steering `roster`.
    fn register(&self, roster: Weak<RosterInner>, registry: &Registry)
        -> Result<(), RegistryError>;
    /// Take every tool out of `registry`.
    fn unregister(&self, registry: &Registry);
}

pub(crate) struct RosterInner {
    backend: Arc<dyn WorkerBackend>,
    state: Mutex<RosterState>,
    /// The Registry attached to, and the tools switched in it.
    registry: Mutex<Option<(Registry, Arc<dyn VibeTools>)>>,
    /// The run's notice board, once attached: where ends are announced.
    notices: Mutex<Option<NoticeBoard>>,
    /// Spawn, send, kill and the mode switch run one at a time, so a send
    /// cannot restart a worker that a kill is stopping.
    control: tokio::sync::Mutex<()>,
}

/// The outcome of stopping a worker's run.
pub(crate) struct Stopped {
    pub(crate) was_running: bool,
    /// It was waiting in the queue (at this place) and never started.
    pub(crate) was_queued: Option<usize>,
    pub(crate) snapshot: WorkerSnapshot,
    /// Processes of the run that were running and are gone now, when the
    /// backend said.
    pub(crate) killed: Option<usize>,
    /// Processes of the run still running.
    pub(crate) survivors: Vec<u32>,
}

impl Roster {
    /// A roster with vibe mode on: binding it registers the five tools.
    pub fn new(backend: Arc<dyn WorkerBackend>) -> Self {
        Roster {
            inner: Arc::new(RosterInner {
                backend,
                state: Mutex::new(RosterState {
                    vibe_mode: true,
                    last_id: 0,
                    workers: BTreeMap::new(),
                    max_workers: DEFAULT_MAX_WORKERS,
                    queue: VecDeque::new(),
                }),
                registry: Mutex::new(None),
                notices: Mutex::new(None),
                control: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// Start with vibe mode off; [`Roster::set_vibe_mode`] turns it on.
    pub fn off(self) -> Self {
        self.inner.lock().vibe_mode = false;
        self
    }

    /// Run at most `n` workers at once (at least 1); the rest queue.
    pub fn max_workers(self, n: usize) -> Self {
        self.inner.lock().max_workers = n.max(1);
        self
    }

    /// How many workers may run at once.
    pub fn capacity(&self) -> usize {
        self.inner.lock().max_workers
    }

    pub fn vibe_mode(&self) -> bool {
        self.inner.lock().vibe_mode
    }

    pub fn backend(&self) -> &Arc<dyn WorkerBackend> {
        &self.inner.backend
    }

    /// Bind to a run's Registry with the tools vibe mode switches: they are
    /// registered now if vibe mode is on, and follow
    /// [`Roster::set_vibe_mode`] from here on.
    pub(crate) fn attach_tools(
        &self,
        registry: &Registry,
        tools: Arc<dyn VibeTools>,
    ) -> Result<(), RegistryError> {
        *self.inner.registry.lock().expect("registry lock") =
            Some((registry.clone(), tools.clone()));
        *self.inner.notices.lock().expect("notices lock") = Some(registry.notices());
        if self.vibe_mode() {
            tools.register(Arc::downgrade(&self.inner), registry)?;
        }
        Ok(())
    }

    /// Switch vibe mode. On registers the five tools; off unregisters them
    /// and kills every running worker, returning once their processes are
    /// gone. Workers keep their records (and ids keep counting) across a
    /// switch.
    pub async fn set_vibe_mode(&self, on: bool) -> Result<(), RegistryError> {
        let _control = self.inner.control.lock().await;
        self.inner.lock().vibe_mode = on;
        let registry = self.inner.registry.lock().expect("registry lock").clone();
        if on {
            if let Some((r, tools)) = &registry {
                tools.register(Arc::downgrade(&self.inner), r)?;
            }
            tracing::info!("vibe mode on");
            return Ok(());
        }
        if let Some((r, tools)) = &registry {
            tools.unregister(r);
        }
        self.inner.stop_all().await;
        tracing::info!("vibe mode off: tools unregistered, workers killed");
        Ok(())
    }

    /// Every worker, by id.
    pub fn snapshots(&self) -> Vec<WorkerSnapshot> {
        self.inner.snapshots()
    }

    /// One worker by its id (`w3`).
    pub fn snapshot(&self, worker_id: &str) -> Option<WorkerSnapshot> {
        let id = parse_id(worker_id)?;
        let found = {
            let state = self.inner.lock();
            state.workers.contains_key(&id).then(|| state.snapshot(id))
        };
        found.map(with_processes)
    }

    /// Kill every running worker and wait until their processes are gone
    /// (the end of a run, when dropping is not soon enough).
    pub async fn shutdown(&self) {
        let _control = self.inner.control.lock().await;
        self.inner.stop_all().await;
    }
}

fn parse_id(worker_id: &str) -> Option<u32> {
    worker_id.trim().strip_prefix('w')?.parse().ok()
}

impl RosterInner {
    fn lock(&self) -> std::sync::MutexGuard<'_, RosterState> {
        self.state.lock().expect("roster lock")
    }

    pub(crate) fn snapshots(&self) -> Vec<WorkerSnapshot> {
        let raw: Vec<_> = {
            let state = self.lock();
            state.workers.keys().map(|id| state.snapshot(*id)).collect()
        };
        raw.into_iter().map(with_processes).collect()
    }

    pub(crate) fn occupancy(&self) -> Occupancy {
        let state = self.lock();
        Occupancy {
            running: state.running(),
            queued: state.queue.len(),
            max_workers: state.max_workers,
        }
    }

    /// Stop every worker, the queued ones first so that none of them is
    /// started by a running one ending; nothing is started afterwards.
    async fn stop_all(&self) {
        let (queued, rest): (Vec<u32>, Vec<u32>) = {
            let state = self.lock();
            let queued: Vec<u32> = state.queue.iter().copied().collect();
            let rest = state
                .workers
                .keys()
                .copied()
                .filter(|id| !queued.contains(id))
                .collect();
            (queued, rest)
        };
        for id in queued.into_iter().chain(rest) {
            self.stop(id, WorkerState::Killed, true).await;
        }
    }

    pub(crate) fn tiers(&self) -> Vec<WorkerTier> {
        self.backend.tiers()
    }

    /// Refuse a call when vibe mode is off (a call that raced the switch).
    pub(crate) fn check_on(&self) -> Result<(), ToolError> {
        if self.lock().vibe_mode {
            Ok(())
        } else {
            Err(ToolError::unavailable(
                "vibe mode is off in this run, so there are no workers; do the work yourself",
            ))
        }
    }

    /// The worker's numeric id, or an error naming the known ones.
    pub(crate) fn resolve(&self, worker_id: &str) -> Result<u32, ToolError> {
        let state = self.lock();
        match parse_id(worker_id) {
            Some(id) if state.workers.contains_key(&id) => Ok(id),
            _ => {
                let known: Vec<String> = state.workers.keys().map(|i| worker_name(*i)).collect();
                Err(ToolError::bad_args(if known.is_empty() {
                    format!("no worker `{worker_id}`: none has been spawned in this run; start one with vibe_spawn")
                } else {
                    format!(
                        "no worker `{worker_id}`; the workers of this run are {} (vibe_list shows them)",
                        known.join(", ")
                    )
                }))
            }
        }
    }

    pub(crate) async fn control(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.control.lock().await
    }

    pub(crate) fn snapshot_of(&self, id: u32) -> WorkerSnapshot {
        let raw = self.lock().snapshot(id);
        with_processes(raw)
    }

    pub(crate) fn watch(&self, id: u32) -> watch::Receiver<u64> {
        self.lock().workers[&id].changed.subscribe()
    }

    /// Create a worker and start its first run, or queue it when as many
    /// workers run as allowed.
    pub(crate) fn spawn(
        self: &Arc<Self>,
        label: String,
        tier: WorkerTier,
        brief: String,
    ) -> WorkerSnapshot {
        let mut state = self.lock();
        state.last_id += 1;
        let id = state.last_id;
        let (changed, _) = watch::channel(0);
        let worker = Worker {
            id,
            label,
            tier,
            brief,
            state: WorkerState::Queued,
            started_at: SystemTime::now(),
            started: Instant::now(),
            settled: None,
            last_result: None,
            failure: None,
            runs: 0,
            generation: 0,
            current: None,
            changed,
        };
        let free = state.has_free_slot();
        state.workers.insert(id, worker);
        self.admit(&mut state, id, free);
        let raw = state.snapshot(id);
        drop(state);
        let snap = with_processes(raw);
        tracing::info!(worker = %snap.id, tier = %tier, state = %snap.state, "worker spawned");
        snap
    }

    /// If worker `id` is queued, append `message` to its brief (it keeps
    /// its place and runs with it) and answer its snapshot. Checked and done
    /// under one lock, so the worker cannot start in between.
    pub(crate) fn append_if_queued(&self, id: u32, message: &str) -> Option<WorkerSnapshot> {
        let mut state = self.lock();
        let worker = state.workers.get_mut(&id).expect("known worker");
        if worker.state != WorkerState::Queued {
            return None;
        }
        worker.brief = format!("{}\n\n{}", worker.brief.trim_end(), message.trim());
        worker.notify();
        let raw = state.snapshot(id);
        drop(state);
        Some(with_processes(raw))
    }

    /// Append `message` to the brief and start a new run (or queue it). The
    /// caller has stopped the run in flight: the worker is settled, and a
    /// settled worker is started only from here.
    pub(crate) fn rerun(self: &Arc<Self>, id: u32, message: &str) -> WorkerSnapshot {
        let mut state = self.lock();
        let free = state.has_free_slot();
        let worker = state.workers.get_mut(&id).expect("known worker");
        debug_assert!(worker.state.is_settled(), "rerun of an unsettled worker");
        worker.brief = format!("{}\n\n{}", worker.brief.trim_end(), message.trim());
        self.admit(&mut state, id, free);
        let raw = state.snapshot(id);
        drop(state);
        with_processes(raw)
    }

    /// A new run of worker `id`: started now when there is a `free` slot,
    /// else queued at the back.
    fn admit(self: &Arc<Self>, state: &mut RosterState, id: u32, free: bool) {
        let worker = state.workers.get_mut(&id).expect("known worker");
        worker.generation += 1;
        worker.runs += 1;
        worker.started_at = SystemTime::now();
        worker.started = Instant::now();
        worker.settled = None;
        if free {
            self.start_run(worker);
        } else {
            worker.state = WorkerState::Queued;
            worker.notify();
            state.queue.push_back(id);
            tracing::info!(worker = %worker_name(id), "worker queued");
        }
    }

    /// Start queued workers while there are free slots.
    pub(crate) fn start_queued(self: &Arc<Self>) {
        let mut state = self.lock();
        self.start_queued_locked(&mut state);
    }

    fn start_queued_locked(self: &Arc<Self>, state: &mut RosterState) {
        while state.has_free_slot() {
            let Some(id) = state.queue.pop_front() else {
                return;
            };
            let worker = state.workers.get_mut(&id).expect("known worker");
            if worker.state == WorkerState::Queued {
                tracing::info!(worker = %worker_name(id), "queued worker starts");
                self.start_run(worker);
            }
        }
    }

    /// Start the admitted run of `worker` (its generation and run number
    /// are set).
    fn start_run(self: &Arc<Self>, worker: &mut Worker) {
        worker.state = WorkerState::Running;
        worker.started_at = SystemTime::now();
        worker.started = Instant::now();
        worker.settled = None;
        let generation = worker.generation;
        let id = worker.id;
        let run = WorkerRun {
            worker_id: worker_name(id),
            label: worker.label.clone(),
            tier: worker.tier,
            brief: worker.brief.clone(),
            run: worker.runs,
            processes: RunProcesses::default(),
        };
        let processes = run.processes.clone();
        let cancel = CancellationToken::new();
        let backend = self.backend.clone();
        let roster: Weak<RosterInner> = Arc::downgrade(self);
        let token = cancel.clone();
        let task = tokio::spawn(async move {
            let outcome = backend.run(run, token).await;
            if let Some(roster) = roster.upgrade() {
                roster.settle(id, generation, &outcome);
            }
            outcome
        });
        worker.current = Some(CurrentRun {
            cancel,
            task,
            processes,
        });
        worker.notify();
    }

    /// Record how a run ended, unless a later run replaced it.
    /// A slot is free now: the next queued worker starts.
    fn settle(self: &Arc<Self>, id: u32, generation: u64, outcome: &RunOutcome) {
        let mut state = self.lock();
        let Some(worker) = state.workers.get_mut(&id) else {
            return;
        };
        if worker.generation != generation || worker.state.is_settled() {
            return;
        }
        let (new_state, result, failure) = match outcome {
            RunOutcome::Done { output } => (WorkerState::Done, output.clone(), None),
            RunOutcome::Lost { why, output } => {
                (WorkerState::Lost, output.clone(), Some(why.clone()))
            }
            RunOutcome::Failed { why, output } => {
                (WorkerState::Failed, output.clone(), Some(why.clone()))
            }
            RunOutcome::Cancelled { output, .. } => (WorkerState::Killed, output.clone(), None),
        };
        worker.state = new_state;
        worker.last_result = Some(result);
        worker.failure = failure;
        worker.settled = Some(Instant::now());
        worker.current = None;
        tracing::info!(worker = %worker_name(id), state = %new_state, "worker settled");
        worker.notify();
        let snap = worker.snapshot();
        self.start_queued_locked(&mut state);
        drop(state);
        self.announce(&snap);
    }

    /// The key of the notice announcing the end of a worker's run.
    pub(crate) fn notice_key(w: &WorkerSnapshot) -> String {
        format!("vibe {} run {}", w.id, w.runs)
    }

    /// Post the end of `w`'s run on the run's notice board.
    pub(crate) fn announce(&self, w: &WorkerSnapshot) {
        let board = self.notices.lock().expect("notices lock").clone();
        if let Some(board) = board {
            let (level, text) = crate::format::notice(w);
            board.post_keyed("vibe", level, text, Some(Self::notice_key(w)));
        }
    }

    /// Withdraw the notice of `w`'s run: the caller's answer tells it.
    pub(crate) fn withdraw(&self, w: &WorkerSnapshot) {
        let board = self.notices.lock().expect("notices lock").clone();
        if let Some(board) = board {
            board.withdraw(&Self::notice_key(w));
        }
    }

    /// Stop the worker's run in flight, if any, and wait until it ended.
    /// The worker is left in `final_state` (killed), its partial output kept;
    /// with `announce`, the end is posted on the notice board.
    pub(crate) async fn stop(&self, id: u32, final_state: WorkerState, announce: bool) -> Stopped {
        let current = {
            let mut state = self.lock();
            if state.workers[&id].state == WorkerState::Queued {
                let place = state.queue.iter().position(|q| *q == id).map(|i| i + 1);
                state.queue.retain(|q| *q != id);
                let worker = state.workers.get_mut(&id).expect("known worker");
                worker.generation += 1;
                worker.state = final_state;
                worker.settled = Some(Instant::now());
                tracing::info!(worker = %worker_name(id), "queued worker removed from the queue");
                worker.notify();
                let snapshot = worker.snapshot();
                drop(state);
                if announce {
                    self.announce(&snapshot);
                }
                return Stopped {
                    was_running: false,
                    was_queued: Some(place.unwrap_or(1)),
                    snapshot,
                    killed: None,
                    survivors: Vec::new(),
                };
            }
            let worker = state.workers.get_mut(&id).expect("known worker");
            if worker.state.is_settled() {
                None
            } else {
                // A new generation: the stopped run can no longer settle.
                worker.generation += 1;
                worker.current.take()
            }
        };
        let Some(CurrentRun { cancel, task, .. }) = current else {
            return Stopped {
                was_running: false,
                was_queued: None,
                snapshot: self.snapshot_of(id),
                killed: None,
                survivors: Vec::new(),
            };
        };
        cancel.cancel();
        let abort = task.abort_handle();
        let (output, killed, survivors) = match tokio::time::timeout(STOP_WAIT, task).await {
            Ok(Ok(RunOutcome::Cancelled {
                output,
                killed,
                survivors,
            })) => (Some(output), killed, survivors),
            Ok(Ok(
                RunOutcome::Done { output }
                | RunOutcome::Failed { output, .. }
                | RunOutcome::Lost { output, .. },
            )) => (Some(output), None, Vec::new()),
            Ok(Err(_)) => (None, None, Vec::new()),
            Err(_) => {
                // The backend ignored the token; dropping its future kills
                // its processes.
                abort.abort();
                (None, None, Vec::new())
            }
        };
        let mut state = self.lock();
        let worker = state.workers.get_mut(&id).expect("known worker");
        worker.state = final_state;
        worker.settled = Some(Instant::now());
        worker.failure = None;
        if let Some(o) = output.filter(|o| !o.is_empty()) {
            worker.last_result = Some(o);
        }
        tracing::info!(worker = %worker_name(id), "worker stopped");
        worker.notify();
        let snapshot = worker.snapshot();
        drop(state);
        if announce {
            self.announce(&snapshot);
        }
        Stopped {
            was_running: true,
            was_queued: None,
            snapshot,
            killed,
            survivors,
        }
    }
}

impl Drop for RosterInner {
    fn drop(&mut self) {
        // The run is over: no worker outlives it. Aborting a run's task drops
        // its child process, which SIGKILLs the whole group.
        let state = self.state.get_mut().expect("roster lock");
        for worker in state.workers.values_mut() {
            if let Some(run) = worker.current.take() {
                run.cancel.cancel();
                run.task.abort();
            }
        }
    }
}
