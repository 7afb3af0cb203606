//! Running one cell on a kernel: send it, collect its output, serve its
//! bridged tool calls, and keep its idle budget.
//!
//! The idle budget counts only while the cell runs with no bridged call
//! pending; any output restarts it (output shows the cell is alive), and so
//! does the cell's begin marker (the time it waited to be read is not its). When it
//! runs out, the cell is interrupted; if it has not stopped after the grace
//! period, the kernel is killed.

use crate::bridge;
use crate::kernel::{describe_exit, Frame, KernelEvent, KernelProcess, Stream};
use crate::output::{CellOutput, Display, SharedOutput};
use crate::protocol::{CellStatus, DriverMessage, OutputPiece};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::{sleep_until, Instant};
use tool_core::CallContext;

/// How long to wait, with none of the cell's output arriving, for the end
/// markers on stdout and stderr once the driver said the cell is done. The
/// wait restarts with every piece of the cell's output, so a flood still
/// in the pipes is drained whole (capped as it streams) before the answer.
const DRAIN_QUIET: Duration = Duration::from_secs(2);

/// How much of the output written between cells a cell shows.
const BETWEEN_CAP: usize = 2048;

/// The limits one cell runs under.
#[derive(Debug, Clone, Copy)]
pub struct CellLimits {
    pub idle_budget: Duration,
    pub grace: Duration,
    pub max_output_bytes: usize,
    pub max_images: usize,
}

/// Why the host stopped a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    IdleBudget(Duration),
    Cancelled,
}

/// How a cell ended.
#[derive(Debug)]
pub enum CellEnd {
    /// The driver finished the cell on its own (it may have raised).
    Finished {
        status: CellStatus,
        error: Option<String>,
    },
    /// The host interrupted the cell and it stopped; the kernel lives on.
    Interrupted {
        why: StopReason,
        error: Option<String>,
    },
    /// The host interrupted the cell, it did not stop, and the kernel was killed.
    Killed { why: StopReason },
    /// The kernel died on its own.
    Died { how: String },
}

/// One cell's run.
#[derive(Debug)]
pub struct CellRun {
    pub cell: u64,
    pub end: CellEnd,
    pub output: CellOutput,
    pub elapsed: Duration,
    pub bridged_calls: usize,
    /// Output written outside every cell's frame since the last cell (by a
    /// timer, thread or process an earlier cell left running), capped.
    pub between: Vec<u8>,
    /// All bytes written between cells, shown or not.
    pub between_bytes: u64,
    /// Bytes of an earlier cell's output that arrived after it answered
    /// (dropped: they are not this cell's).
    pub late_bytes: u64,
    /// The end markers did not arrive: output may be missing at the end.
    pub undrained: bool,
}

enum Phase {
    Running,
    Interrupting { why: StopReason, until: Instant },
}

/// One cell's run while its events come in: what it said, how far it got.
struct CellState<'a> {
    cell: u64,
    started: Instant,
    output: Collector<'a>,
    bridge: JoinSet<Value>,
    bridged_calls: usize,
    phase: Phase,
    done: Option<(CellStatus, Option<String>)>,
    drain_until: Instant,
    ends: u8,
    closed_streams: u8,
    replies_closed: bool,
    between: Vec<u8>,
    between_bytes: u64,
    late_bytes: u64,
    undrained: bool,
    /// Whether the cell's begin marker arrived (the driver started running it).
    began: bool,
}

/// Run `code` as the next cell of `kernel`; its output collects in `shared`
/// (a look may take part of it meanwhile) and what is left is the run's.
pub async fn run(
    kernel: &mut KernelProcess,
    code: &str,
    limits: CellLimits,
    cx: &CallContext,
    shared: &SharedOutput,
) -> CellRun {
    let started = Instant::now();
    let mut st = CellState {
        cell: kernel.next_cell(),
        started,
        output: Collector(shared),
        bridge: JoinSet::new(),
        bridged_calls: 0,
        phase: Phase::Running,
        done: None,
        drain_until: started,
        ends: 0,
        closed_streams: 0,
        replies_closed: false,
        between: Vec::new(),
        between_bytes: 0,
        late_bytes: 0,
        undrained: false,
        began: false,
    };
    let cell = st.cell;
    let mut idle_deadline = started + limits.idle_budget;

    if kernel
        .send(&json!({"type": "exec", "cell": cell, "code": code, "max_output_bytes": limits.max_output_bytes}))
        .await
        .is_err()
    {
        let how = finish_dead(kernel).await;
        return st.into_run(CellEnd::Died { how });
    }

    let end = loop {
        if st.done.is_some() && (st.ends >= 2 || st.closed_streams >= 2) {
            break finished(st.done.take().expect("done"), &st.phase);
        }
        let idle_counts =
            st.done.is_none() && st.bridge.is_empty() && matches!(st.phase, Phase::Running);
        let interrupt_until = match st.phase {
            Phase::Interrupting { until, .. } if st.done.is_none() => Some(until),
            _ => None,
        };
        tokio::select! {
            ev = kernel.next_event() => {
                let Some(ev) = ev else {
                    st.replies_closed = true;
                    st.closed_streams = 2;
                    continue;
                };
                let alive = st.on_event(ev, kernel, cx, &limits).await;
                if alive && st.bridge.is_empty() {
                    idle_deadline = Instant::now() + limits.idle_budget;
                }
                if st.replies_closed && st.done.is_none() {
                    // The driver is gone; find out how the process ended.
                    let how = finish_dead(kernel).await;
                    drain_output(kernel, &st.output).await;
                    break match st.phase {
                        Phase::Interrupting { why, .. } => CellEnd::Killed { why },
                        Phase::Running => CellEnd::Died { how },
                    };
                }
            }
            Some(joined) = st.bridge.join_next(), if !st.bridge.is_empty() => {
                if let Ok(reply) = joined {
                    if kernel.send(&reply).await.is_err() {
                        st.replies_closed = true;
                    }
                }
                if st.bridge.is_empty() {
                    idle_deadline = Instant::now() + limits.idle_budget;
                }
            }
            () = sleep_until(idle_deadline), if idle_counts => {
                tracing::info!(cell, budget_ms = limits.idle_budget.as_millis() as u64, "idle budget ran out; interrupting");
                kernel.interrupt().await;
                st.phase = Phase::Interrupting { why: StopReason::IdleBudget(limits.idle_budget), until: Instant::now() + limits.grace };
            }
            () = cx.cancel.cancelled(), if matches!(st.phase, Phase::Running) && st.done.is_none() => {
                tracing::info!(cell, "call cancelled; interrupting the cell");
                st.bridge.abort_all();
                kernel.interrupt().await;
                st.phase = Phase::Interrupting { why: StopReason::Cancelled, until: Instant::now() + limits.grace };
            }
            () = sleep_until(interrupt_until.unwrap_or(started)), if interrupt_until.is_some() => {
                let Phase::Interrupting { why, .. } = st.phase else { unreachable!() };
                tracing::info!(cell, "the cell did not stop after the interrupt; killing the kernel");
                kernel.kill().await;
                kernel.exited = kernel.child.try_wait().ok().flatten();
                drain_output(kernel, &st.output).await;
                break CellEnd::Killed { why };
            }
            () = sleep_until(st.drain_until), if st.done.is_some() => {
                tracing::warn!(cell, ends = st.ends, "the cell's end markers did not arrive; answering without them");
                st.undrained = true;
                break finished(st.done.take().expect("done"), &st.phase);
            }
        }
    };
    st.bridge.abort_all();
    st.into_run(end)
}

impl CellState<'_> {
    /// Take one event of the kernel; `true` when it shows the cell alive
    /// (its idle budget starts again).
    async fn on_event(
        &mut self,
        ev: KernelEvent,
        kernel: &mut KernelProcess,
        cx: &CallContext,
        limits: &CellLimits,
    ) -> bool {
        let cell = self.cell;
        match ev {
            KernelEvent::Text(_, Frame::Cell(c), t) => {
                if c == cell {
                    self.output.get().push_text(&t);
                    if self.done.is_some() {
                        self.drain_until = Instant::now() + DRAIN_QUIET;
                    }
                    true
                } else {
                    self.late_bytes += t.len() as u64;
                    false
                }
            }
            KernelEvent::Text(_, Frame::Between, t) => {
                self.between_bytes += t.len() as u64;
                let room = BETWEEN_CAP.saturating_sub(self.between.len());
                self.between.extend_from_slice(&t[..room.min(t.len())]);
                true
            }
            KernelEvent::Output(_, OutputPiece::Display { cell: c, seq }) => {
                if c == cell {
                    self.output.get().mark_display(seq);
                }
                true
            }
            // The cell began: the budget counts from here, not from when it
            // was sent (a loaded kernel may take a while to read it).
            KernelEvent::Output(_, OutputPiece::Begin { cell: c }) => {
                if c == cell && !self.began {
                    self.began = true;
                    // An interrupt sent before the cell began found nothing
                    // of it to stop: send it again, and give the cell its
                    // grace from now.
                    if let Phase::Interrupting { why, .. } = self.phase {
                        if self.done.is_none() {
                            tracing::info!(
                                cell,
                                "the cell began after it was interrupted; interrupting it again"
                            );
                            kernel.interrupt().await;
                            self.phase = Phase::Interrupting {
                                why,
                                until: Instant::now() + limits.grace,
                            };
                        }
                    }
                }
                c == cell
            }
            KernelEvent::Output(_, OutputPiece::End { cell: c }) => {
                if c == cell {
                    self.ends += 1;
                }
                false
            }
            KernelEvent::Output(_, OutputPiece::Skipped { cell: c, bytes }) => {
                if c == cell {
                    self.output.get().skip(bytes);
                    if self.done.is_some() {
                        self.drain_until = Instant::now() + DRAIN_QUIET;
                    }
                }
                c == cell
            }
            KernelEvent::Output(_, OutputPiece::Text(_)) => false,
            KernelEvent::Message(DriverMessage::Display {
                cell: c,
                seq,
                echo,
                text,
                images,
            }) => {
                if c == cell {
                    self.output
                        .get()
                        .add_display(seq, echo, Display { text, images });
                }
                true
            }
            KernelEvent::Message(DriverMessage::ToolCall { id, name, args, .. }) => {
                if matches!(self.phase, Phase::Running) && self.done.is_none() {
                    self.bridged_calls += 1;
                    tracing::debug!(tool = %name, id, "bridged call");
                    self.bridge
                        .spawn(bridge::dispatch(cx.nested(), id, name, args));
                } else {
                    let reply = json!({"type": "tool_result", "id": id, "ok": false, "kind": "cancelled",
                        "message": "the cell was interrupted; bridged calls are no longer served"});
                    let _ = kernel.send(&reply).await;
                }
                false
            }
            KernelEvent::Message(DriverMessage::Done {
                cell: c,
                status,
                error,
            }) => {
                if c == cell {
                    self.done = Some((status, error));
                    self.drain_until = Instant::now() + DRAIN_QUIET;
                }
                false
            }
            KernelEvent::Message(DriverMessage::Ready { .. } | DriverMessage::Inspect { .. }) => {
                false
            }
            KernelEvent::RepliesClosed => {
                self.replies_closed = true;
                false
            }
            KernelEvent::StreamClosed(_) => {
                self.closed_streams += 1;
                false
            }
        }
    }

    /// The run's answer, ended as `end`.
    fn into_run(self, end: CellEnd) -> CellRun {
        CellRun {
            cell: self.cell,
            end,
            output: self.output.rest(),
            elapsed: self.started.elapsed(),
            bridged_calls: self.bridged_calls,
            between: self.between,
            between_bytes: self.between_bytes,
            late_bytes: self.late_bytes,
            undrained: self.undrained,
        }
    }
}

fn finished((status, error): (CellStatus, Option<String>), phase: &Phase) -> CellEnd {
    match phase {
        // A cell that finished cleanly just as it was interrupted finished.
        Phase::Interrupting { why, .. } if status != CellStatus::Ok => {
            CellEnd::Interrupted { why: *why, error }
        }
        _ => CellEnd::Finished { status, error },
    }
}

/// The driver is gone: wait briefly for the process to end and say how.
async fn finish_dead(kernel: &mut KernelProcess) -> String {
    let status = tokio::time::timeout(Duration::from_secs(2), kernel.child.wait()).await;
    if let Ok(Ok(s)) = status {
        kernel.exited = Some(s);
        describe_exit(s)
    } else {
        // The driver closed its pipe but the process lingers: end it.
        kernel.kill().await;
        "its driver stopped answering".into()
    }
}

/// Take what is still buffered from the dead kernel's streams.
async fn drain_output(kernel: &mut KernelProcess, output: &Collector<'_>) {
    let until = Instant::now() + Duration::from_millis(500);
    let mut closed = 0;
    while closed < 2 {
        match tokio::time::timeout_at(until, kernel.next_event()).await {
            Ok(Some(KernelEvent::Text(_, _, t))) => output.get().push_text(&t),
            Ok(Some(KernelEvent::StreamClosed(Stream::Stdout | Stream::Stderr))) => closed += 1,
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
}

/// The cell's side of its shared output.
struct Collector<'a>(&'a SharedOutput);

impl Collector<'_> {
    fn get(&self) -> std::sync::MutexGuard<'_, CellOutput> {
        // A look that panicked leaves the output as it was: keep using it.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What no look has taken yet.
    fn rest(&self) -> CellOutput {
        self.get().take()
    }
}
