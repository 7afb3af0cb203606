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
    let cell = kernel.next_cell();
    let output = Collector(shared);
    let mut bridge: JoinSet<Value> = JoinSet::new();
    let mut bridged_calls = 0usize;
    let mut phase = Phase::Running;
    let mut idle_deadline = started + limits.idle_budget;
    let mut done: Option<(CellStatus, Option<String>)> = None;
    let mut drain_until = Instant::now();
    let mut ends = 0u8;
    let mut closed_streams = 0u8;
    let mut replies_closed = false;
    let mut between = Vec::new();
    let mut between_bytes = 0u64;
    let mut late_bytes = 0u64;
    let mut undrained = false;
    // Whether the cell's begin marker arrived (the driver started running it).
    let mut began = false;

    if kernel
        .send(&json!({"type": "exec", "cell": cell, "code": code, "max_output_bytes": limits.max_output_bytes}))
        .await
        .is_err()
    {
        let how = finish_dead(kernel).await;
        return CellRun {
            cell,
            end: CellEnd::Died { how },
            output: output.rest(),
            elapsed: started.elapsed(),
            bridged_calls,
            between,
            between_bytes,
            late_bytes,
            undrained,
        };
    }

    let end = loop {
        if done.is_some() && (ends >= 2 || closed_streams >= 2) {
            break finished(done.take().expect("done"), &phase);
        }
        let idle_counts = done.is_none() && bridge.is_empty() && matches!(phase, Phase::Running);
        let interrupt_until = match phase {
            Phase::Interrupting { until, .. } if done.is_none() => Some(until),
            _ => None,
        };
        tokio::select! {
            ev = kernel.next_event() => {
                let Some(ev) = ev else {
                    replies_closed = true;
                    closed_streams = 2;
                    continue;
                };
                let alive = match ev {
                    KernelEvent::Text(_, Frame::Cell(c), t) => {
                        if c == cell {
                            output.get().push_text(&t);
                            if done.is_some() {
                                drain_until = Instant::now() + DRAIN_QUIET;
                            }
                            true
                        } else {
                            late_bytes += t.len() as u64;
                            false
                        }
                    }
                    KernelEvent::Text(_, Frame::Between, t) => {
                        between_bytes += t.len() as u64;
                        let room = BETWEEN_CAP.saturating_sub(between.len());
                        between.extend_from_slice(&t[..room.min(t.len())]);
                        true
                    }
                    KernelEvent::Output(_, OutputPiece::Display { cell: c, seq }) => {
                        if c == cell { output.get().mark_display(seq); }
                        true
                    }
                    // The cell began: the budget counts from here, not
                    // from when it was sent (a loaded kernel may take a
                    // while to read it).
                    KernelEvent::Output(_, OutputPiece::Begin { cell: c }) => {
                        if c == cell && !began {
                            began = true;
                            // An interrupt sent before the cell began found
                            // nothing of it to stop: send it again, and give
                            // the cell its grace from now.
                            if let Phase::Interrupting { why, .. } = phase {
                                if done.is_none() {
                                    tracing::info!(cell, "the cell began after it was interrupted; interrupting it again");
                                    kernel.interrupt().await;
                                    phase = Phase::Interrupting { why, until: Instant::now() + limits.grace };
                                }
                            }
                        }
                        c == cell
                    }
                    KernelEvent::Output(_, OutputPiece::End { cell: c }) => {
                        if c == cell { ends += 1; }
                        false
                    }
                    KernelEvent::Output(_, OutputPiece::Skipped { cell: c, bytes }) => {
                        if c == cell {
                            output.get().skip(bytes);
                            if done.is_some() {
                                drain_until = Instant::now() + DRAIN_QUIET;
                            }
                        }
                        c == cell
                    }
                    KernelEvent::Output(_, OutputPiece::Text(_)) => false,
                    KernelEvent::Message(DriverMessage::Display { cell: c, seq, echo, text, images }) => {
                        if c == cell { output.get().add_display(seq, echo, Display { text, images }); }
                        true
                    }
                    KernelEvent::Message(DriverMessage::ToolCall { id, name, args, .. }) => {
                        if matches!(phase, Phase::Running) && done.is_none() {
                            bridged_calls += 1;
                            tracing::debug!(tool = %name, id, "bridged call");
                            bridge.spawn(bridge::dispatch(cx.nested(), id, name, args));
                        } else {
                            let reply = json!({"type": "tool_result", "id": id, "ok": false, "kind": "cancelled",
                                "message": "the cell was interrupted; bridged calls are no longer served"});
                            let _ = kernel.send(&reply).await;
                        }
                        false
                    }
                    KernelEvent::Message(DriverMessage::Done { cell: c, status, error }) => {
                        if c == cell {
                            done = Some((status, error));
                            drain_until = Instant::now() + DRAIN_QUIET;
                        }
                        false
                    }
                    KernelEvent::Message(DriverMessage::Ready { .. } | DriverMessage::Inspect { .. }) => false,
                    KernelEvent::RepliesClosed => { replies_closed = true; false }
                    KernelEvent::StreamClosed(_) => { closed_streams += 1; false }
                };
                if alive && bridge.is_empty() {
                    idle_deadline = Instant::now() + limits.idle_budget;
                }
                if replies_closed && done.is_none() {
                    // The driver is gone; find out how the process ended.
                    let how = finish_dead(kernel).await;
                    drain_output(kernel, &output).await;
                    break match phase {
                        Phase::Interrupting { why, .. } => CellEnd::Killed { why },
                        Phase::Running => CellEnd::Died { how },
                    };
                }
            }
            Some(joined) = bridge.join_next(), if !bridge.is_empty() => {
                if let Ok(reply) = joined {
                    if kernel.send(&reply).await.is_err() {
                        replies_closed = true;
                    }
                }
                if bridge.is_empty() {
                    idle_deadline = Instant::now() + limits.idle_budget;
                }
            }
            () = sleep_until(idle_deadline), if idle_counts => {
                tracing::info!(cell, budget_ms = limits.idle_budget.as_millis() as u64, "idle budget ran out; interrupting");
                kernel.interrupt().await;
                phase = Phase::Interrupting { why: StopReason::IdleBudget(limits.idle_budget), until: Instant::now() + limits.grace };
            }
            () = cx.cancel.cancelled(), if matches!(phase, Phase::Running) && done.is_none() => {
                tracing::info!(cell, "call cancelled; interrupting the cell");
                bridge.abort_all();
                kernel.interrupt().await;
                phase = Phase::Interrupting { why: StopReason::Cancelled, until: Instant::now() + limits.grace };
            }
            () = sleep_until(interrupt_until.unwrap_or(started)), if interrupt_until.is_some() => {
                let Phase::Interrupting { why, .. } = phase else { unreachable!() };
                tracing::info!(cell, "the cell did not stop after the interrupt; killing the kernel");
                kernel.kill().await;
                kernel.exited = kernel.child.try_wait().ok().flatten();
                drain_output(kernel, &output).await;
                break CellEnd::Killed { why };
            }
            () = sleep_until(drain_until), if done.is_some() => {
                tracing::warn!(cell, ends, "the cell's end markers did not arrive; answering without them");
                undrained = true;
                break finished(done.take().expect("done"), &phase);
            }
        }
    };
    bridge.abort_all();
    CellRun {
        cell,
        end,
        output: output.rest(),
        elapsed: started.elapsed(),
        bridged_calls,
        between,
        between_bytes,
        late_bytes,
        undrained,
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
