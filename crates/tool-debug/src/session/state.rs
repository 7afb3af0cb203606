//! The run state of one session: what the debuggee is doing, as a watch
//! channel every waiter can follow.
//!
//! Invariants: every change bumps the generation, so a waiter can tell
//! "changed since I asked"; once `Ended` the state never changes again; a
//! wait is always bounded, and an `exited` without `terminated` becomes the
//! end after [`EXIT_GRACE`].

use std::time::Duration;
use tokio::sync::watch;

/// After `exited`, how long to wait for `terminated` (and the last output).
const EXIT_GRACE: Duration = Duration::from_millis(1500);

/// Why a stop happened, and where to look for it.
#[derive(Debug, Clone, PartialEq)]
pub struct StopInfo {
    /// 1 for the first stop of the session, then counting.
    pub stop_id: u64,
    pub reason: String,
    pub description: Option<String>,
    pub text: Option<String>,
    pub thread_id: Option<u64>,
    /// What the stop is, in words, once the ops asked the adapter
    /// (`paused`, `stopped: signal SIGSEGV: …`, `stopped: panic: …`).
    pub words: Option<String>,
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    Exited {
        code: Option<i64>,
    },
    AdapterDied {
        why: String,
    },
    Expired {
        ttl: Duration,
    },
    Terminated,
    /// An attached session let go of a debuggee it did not start.
    Detached,
    Failed {
        why: String,
    },
}

impl Ending {
    pub fn describe(&self) -> String {
        match self {
            Ending::Exited { code: Some(c) } => format!("the program exited with code {c}"),
            Ending::Exited { code: None } => "the program ended (exit code not reported)".into(),
            Ending::AdapterDied { why } => format!("the debug adapter died: {why}"),
            Ending::Expired { ttl } => format!(
                "the session's TTL of {} ran out, so the program and its adapter were terminated",
                crate::format::duration(*ttl)
            ),
            Ending::Terminated => "terminated on request".into(),
            Ending::Detached => {
                "disconnected on request; the debuggee was started outside this run and was left running".into()
            }
            Ending::Failed { why } => format!("the launch failed: {why}"),
        }
    }
}

/// What the debuggee is doing.
#[derive(Debug, Clone, PartialEq)]
pub enum RunState {
    /// In the handshake.
    Starting,
    Running,
    Stopped(StopInfo),
    /// `exited` seen, `terminated` not yet.
    Exiting {
        code: Option<i64>,
    },
    Ended(Ending),
}

#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Bumped on every change, so a waiter can tell "changed since I asked".
    pub generation: u64,
    pub state: RunState,
}

/// What a bounded wait found.
#[derive(Debug, Clone)]
pub enum Settled {
    Stopped(StopInfo),
    Ended(Ending),
    StillRunning,
}

/// The run state and everyone waiting on it.
#[derive(Debug)]
pub(crate) struct RunStateCell {
    tx: watch::Sender<Snapshot>,
}

impl RunStateCell {
    pub(crate) fn new() -> Self {
        let (tx, _) = watch::channel(Snapshot {
            generation: 0,
            state: RunState::Starting,
        });
        RunStateCell { tx }
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        self.tx.borrow().clone()
    }

    /// Change the state unless the session already ended.
    pub(crate) fn set(&self, state: RunState) {
        self.tx.send_modify(|s| {
            if !matches!(s.state, RunState::Ended(_)) {
                s.state = state;
                s.generation += 1;
            }
        });
    }

    /// Change the state when `change` says so (it returns the new state).
    pub(crate) fn update(&self, change: impl FnOnce(&RunState) -> Option<RunState>) {
        self.tx.send_if_modified(|s| match change(&s.state) {
            Some(next) => {
                s.state = next;
                s.generation += 1;
                true
            }
            None => false,
        });
    }

    /// Say what the current stop is (its reason word and its words),
    /// if it is still `stop_id`. Waiters are not woken: nothing moved.
    pub(crate) fn explain(&self, stop_id: u64, reason: &str, words: &str) {
        self.tx.send_if_modified(|s| {
            if let RunState::Stopped(info) = &mut s.state {
                if info.stop_id == stop_id {
                    info.reason = reason.to_string();
                    info.words = Some(words.to_string());
                }
            }
            false
        });
    }

    /// End the session unless it ended already (the first reason stays).
    pub(crate) fn set_ended(&self, ending: Ending) {
        self.update(|s| (!matches!(s, RunState::Ended(_))).then_some(RunState::Ended(ending)));
    }

    /// Wait until the debuggee stops or ends after `since` (a generation),
    /// at most `within`.
    pub(crate) async fn wait_settled(&self, since: u64, within: Duration) -> Settled {
        let mut rx = self.tx.subscribe();
        let deadline = tokio::time::Instant::now() + within;
        let mut exit_by: Option<tokio::time::Instant> = None;
        loop {
            {
                let snap = rx.borrow_and_update();
                if snap.generation > since {
                    match &snap.state {
                        RunState::Stopped(s) => return Settled::Stopped(s.clone()),
                        RunState::Ended(e) => return Settled::Ended(e.clone()),
                        RunState::Exiting { .. } => {
                            exit_by.get_or_insert(tokio::time::Instant::now() + EXIT_GRACE);
                        }
                        _ => {}
                    }
                }
            }
            let until = exit_by.map_or(deadline, |e| e.min(deadline));
            match tokio::time::timeout_at(until, rx.changed()).await {
                Ok(Ok(())) => continue,
                Ok(Err(_)) => {
                    return Settled::Ended(Ending::AdapterDied {
                        why: "session dropped".into(),
                    })
                }
                Err(_) => {
                    if let RunState::Exiting { code } = self.snapshot().state {
                        // No `terminated` came: the exit is the end.
                        let ending = Ending::Exited { code };
                        self.set_ended(ending.clone());
                        return Settled::Ended(ending);
                    }
                    return Settled::StillRunning;
                }
            }
        }
    }
}
