//! One live debug session: the adapter process, its DAP connection, what
//! the debuggee is doing, and everything it started.
//!
//! The parts, one concern each: [`connect`] (reaching the adapter),
//! [`handshake`] (starting a session), [`state`] (the run state and bounded
//! waits on it), [`handles`] (our ids for frames and references), [`pump`]
//! (applying the adapter's events) and [`owned`] (the processes and files it
//! must end). This module holds them together
//! and answers the requests the ops make.
//!
//! Invariants kept here:
//! - every wait is bounded, and a dead stream ends the session instead of
//!   leaving a waiter behind;
//! - when the session ends (exit, adapter death, TTL, terminate) the adapter,
//!   the debuggee and everything they started are killed, and the scratch
//!   folder is removed; a session dropped without ending does the same.

mod catch;
mod connect;
mod handles;
mod handshake;
mod inproc;
pub mod inspector;
pub mod jdwp;
pub(crate) mod lines;
mod owned;
mod pump;
mod state;

pub use connect::{listen_address, port_listened_on, refuse_closed_port};
pub use handles::{HandleKind, Resolved};
pub use state::{Ending, RunState, Settled, Snapshot, StopInfo};

use crate::breakpoint::LineBreakpoint;
use crate::catalog::ResolvedAdapter;
use crate::transport::{DapClient, DapError};
use handles::HandleTable;
use owned::Owned;
use serde_json::Value;
use state::RunStateCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tool_core::process::{OutputRing, SharedOutput};
use tool_core::ToolError;

/// Bytes of debuggee output kept.
const OUTPUT_CAPACITY: usize = 256 * 1024;

/// Bytes of the adapter's own log kept.
const ADAPTER_LOG_CAPACITY: usize = 16 * 1024;

/// How long the adapter may take to say goodbye before it is killed.
const DISCONNECT_GRACE: Duration = Duration::from_millis(1500);

/// Bounds of one session.
#[derive(Debug, Clone)]
pub struct SessionLimits {
    pub ttl: Duration,
    /// initialize → the launch reply (delve compiles the program in there).
    pub handshake: Duration,
    /// Any other request.
    pub request: Duration,
}

/// A breakpoint as the adapter answered it.
#[derive(Debug, Clone, PartialEq)]
pub struct BreakpointStatus {
    /// What was asked for: the line and its kind.
    pub asked: LineBreakpoint,
    pub id: Option<u64>,
    pub verified: bool,
    /// Where the adapter put it (differs from the asked line when moved).
    pub line: Option<u32>,
    /// The file it put it in, when not the one asked for (lldb moves a
    /// breakpoint on a line without code into inlined library code).
    pub file: Option<PathBuf>,
    pub message: Option<String>,
}

/// A function breakpoint as the adapter answered it.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionStatus {
    pub asked: crate::breakpoint::FunctionBreakpoint,
    pub verified: bool,
    pub message: Option<String>,
}

/// Everything `start` needs.
#[derive(Debug, Clone)]
pub struct LaunchPlan {
    pub adapter: ResolvedAdapter,
    /// `launch` or `attach`.
    pub request: &'static str,
    pub arguments: Value,
    /// What the model called it: a relative program path, or "port N".
    pub label: String,
    pub breakpoints: BTreeMap<PathBuf, Vec<LineBreakpoint>>,
    pub function_breakpoints: Vec<crate::breakpoint::FunctionBreakpoint>,
    /// Function breakpoints every session of this program has (Rust:
    /// `rust_panic`), besides the model's.
    pub default_functions: Vec<String>,
    /// `None`: the filters the adapter enables by default.
    pub exception_filters: Option<Vec<String>>,
    /// Connect to this port instead of starting the adapter (delve attach:
    /// a headless `dlv` speaks DAP itself).
    pub connect_to: Option<u16>,
    /// Removed when the session ends (delve's build output).
    pub scratch_dir: Option<PathBuf>,
    /// The process an attach by pid reaches (not ours to end).
    pub debuggee_pid: Option<u32>,
    /// Written to the adapter's stdin, then end of file: the debuggee
    /// inherits it (delve's `stdin`).
    pub adapter_stdin: Option<String>,
    /// A pipe the debuggee reads as its standard input when no `stdin`
    /// was given (debugpy, whose launcher would give it /dev/null): held
    /// open, so a read waits and is seen waiting.
    pub held_stdin: Option<std::sync::Arc<tool_core::process::HeldFifo>>,
    pub env: Vec<(String, String)>,
    pub search_path: std::ffi::OsString,
}

/// What the handshake reports besides the session.
#[derive(Debug, Clone, Default)]
pub struct StartReport {
    pub breakpoints: BTreeMap<PathBuf, Vec<BreakpointStatus>>,
    pub functions: Vec<FunctionStatus>,
}

/// What a session is, fixed at its start.
struct SessionInfo {
    /// An attach: the debuggee was started outside this run, and ending
    /// the session disconnects from it instead of ending it.
    attached: bool,
    adapter_id: String,
    adapter_kind: crate::catalog::AdapterKind,
    label: String,
    adapter_command: String,
    evaluate_context: String,
    started: Instant,
    limits: SessionLimits,
}

/// The debuggee's output and the adapter's log.
struct OutputBuffers {
    output: Arc<lines::LineOutput>,
    adapter_log: SharedOutput,
    /// Where the last `output` call stopped reading.
    output_cursor: Mutex<u64>,
}

impl OutputBuffers {
    fn new() -> Self {
        OutputBuffers {
            output: Arc::new(lines::LineOutput::new(OUTPUT_CAPACITY)),
            adapter_log: Arc::new(Mutex::new(OutputRing::new(ADAPTER_LOG_CAPACITY))),
            output_cursor: Mutex::new(0),
        }
    }

    fn push_output(&self, stream: lines::Stream, bytes: &[u8]) {
        self.output.push(stream, bytes);
    }

    fn push_log(&self, bytes: &[u8]) {
        self.adapter_log.lock().expect("log lock").push(bytes);
    }
}

/// The session's background tasks.
#[derive(Default)]
struct Background {
    /// Output capture, the adapter watch and the TTL timer.
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// The event pump, awaited at shutdown so the last events are applied.
    pump: Mutex<Option<JoinHandle<()>>>,
    /// Serializes shutdown, and is set once it finished.
    shut: tokio::sync::Mutex<bool>,
}

struct Inner {
    info: SessionInfo,
    client: DapClient,
    run: RunStateCell,
    /// Set by the adapter's `initialized` event.
    initialized: watch::Sender<bool>,
    io: OutputBuffers,
    handles: Mutex<HandleTable>,
    owned: Owned,
    breakpoints: Mutex<BTreeMap<PathBuf, Vec<BreakpointStatus>>>,
    /// Function breakpoints set by default (not the model's).
    default_functions: Vec<String>,
    capabilities: Mutex<Value>,
    /// From the adapter's `process` event.
    debuggee_pid: Mutex<Option<u32>>,
    background: Background,
}

/// A live (or ended) session. Cheap to clone.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("adapter", &self.inner.info.adapter_id)
            .field("label", &self.inner.info.label)
            .finish_non_exhaustive()
    }
}

/// `; adapter log: …` to end a message with, or nothing when the adapter
/// wrote nothing.
pub(crate) fn log_suffix(log: &str) -> String {
    if log.trim().is_empty() {
        String::new()
    } else {
        format!("; adapter log: {}", log.trim())
    }
}

/// A DAP error in the model's words, with the adapter's log when it has one.
fn dap_to_tool(e: DapError, log_tail: String) -> ToolError {
    let tail = log_suffix(&log_tail);
    match e {
        DapError::Refused { .. } => ToolError::failed(format!("{e}{tail}")),
        DapError::Timeout { .. } => ToolError::timed_out(format!(
            "{e}; the session is still alive: call status, or terminate{tail}"
        )),
        DapError::Closed(_) => ToolError::failed(format!("{e}; the session has ended{tail}")),
        DapError::BadBody { .. } => ToolError::failed(format!("{e}{tail}")),
    }
}

impl Session {
    /// Why the adapter cannot take these breakpoints (a condition, hit
    /// count or logpoint it does not announce), naming it; `None` when it can.
    pub fn refuses_kinds<'a>(
        &self,
        kinds: impl IntoIterator<Item = &'a crate::breakpoint::BreakpointKind>,
    ) -> Option<String> {
        let caps = self.inner.capabilities.lock().expect("caps lock");
        crate::breakpoint::unsupported(self.adapter_id(), &caps, kinds)
    }

    /// Send one file's breakpoints; the adapter's answer per line. Kinds
    /// the adapter does not support are refused before anything is sent.
    pub async fn set_breakpoints(
        &self,
        file: &std::path::Path,
        lines: &[LineBreakpoint],
    ) -> Result<Vec<BreakpointStatus>, ToolError> {
        if let Some(why) = self.refuses_kinds(lines.iter().map(|b| &b.kind)) {
            return Err(ToolError::refused(why));
        }
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
        let answered = self
            .typed::<dap_types::requests::SetBreakpoints>(&dap_types::SetBreakpointsArguments {
                source: dap_types::Source {
                    name,
                    path: Some(file.to_string_lossy().into_owned()),
                    source_reference: None,
                    presentation_hint: None,
                    origin: None,
                    sources: None,
                    adapter_data: None,
                    checksums: None,
                },
                breakpoints: Some(
                    lines
                        .iter()
                        .map(|b| dap_types::SourceBreakpoint {
                            line: u64::from(b.line),
                            column: None,
                            condition: b.kind.condition.clone(),
                            hit_condition: b.kind.hit_condition.clone(),
                            log_message: b.kind.log_message.clone(),
                            mode: None,
                        })
                        .collect(),
                ),
                lines: None,
                source_modified: Some(false),
            })
            .await?;
        let statuses: Vec<BreakpointStatus> = lines
            .iter()
            .enumerate()
            .map(|(i, asked)| {
                let b = answered.breakpoints.get(i);
                BreakpointStatus {
                    asked: asked.clone(),
                    id: b.and_then(|b| b.id),
                    verified: b.is_some_and(|b| b.verified),
                    line: b.and_then(|b| b.line).map(|l| l as u32),
                    file: b
                        .and_then(|b| b.source.as_ref())
                        .and_then(|s| s.path.as_deref())
                        .map(PathBuf::from)
                        .filter(|p| p != file),
                    message: b.and_then(|b| b.message.clone()),
                }
            })
            .collect();
        let mut all = self.inner.breakpoints.lock().expect("bp lock");
        if statuses.is_empty() {
            all.remove(file);
        } else {
            all.insert(file.to_path_buf(), statuses.clone());
        }
        Ok(statuses)
    }

    /// The adapter's latest word on every breakpoint (events update it).
    pub fn breakpoint_statuses(&self) -> BTreeMap<PathBuf, Vec<BreakpointStatus>> {
        self.inner.breakpoints.lock().expect("bp lock").clone()
    }

    /// A typed request with the session's bound, errors in the model's words.
    pub async fn typed<R: dap_types::requests::Request>(
        &self,
        arguments: &R::Arguments,
    ) -> Result<R::Response, ToolError> {
        self.inner
            .client
            .typed::<R>(arguments, self.inner.info.limits.request)
            .await
            .map_err(|e| self.request_error(e))
    }

    /// An untyped request with the session's bound.
    pub async fn request(&self, command: &str, args: Value) -> Result<Value, ToolError> {
        self.request_within(command, args, self.inner.info.limits.request)
            .await
    }

    pub async fn request_within(
        &self,
        command: &str,
        args: Value,
        within: Duration,
    ) -> Result<Value, ToolError> {
        self.inner
            .client
            .request(command, args, within)
            .await
            .map_err(|e| self.request_error(e))
    }

    fn request_error(&self, e: DapError) -> ToolError {
        match e {
            DapError::Closed(_) => match self.snapshot().state {
                RunState::Ended(end) => ToolError::failed(format!(
                    "the session has ended: {}; launch again",
                    end.describe()
                )),
                _ => dap_to_tool(e, self.adapter_log_tail()),
            },
            other => dap_to_tool(other, self.adapter_log_tail()),
        }
    }

    /// Whether the connection to the adapter is gone.
    pub fn connection_closed(&self) -> bool {
        self.inner.client.closed().is_some()
    }

    pub fn snapshot(&self) -> Snapshot {
        self.inner.run.snapshot()
    }

    /// Record what the current stop is, in words (see [`StopInfo::words`]).
    pub fn explain_stop(&self, stop_id: u64, reason: &str, words: &str) {
        self.inner.run.explain(stop_id, reason, words);
    }

    /// Whether the adapter announced `capability` in its `initialize` answer.
    pub fn supports(&self, capability: &str) -> bool {
        self.inner
            .capabilities
            .lock()
            .expect("caps lock")
            .get(capability)
            .and_then(Value::as_bool)
            == Some(true)
    }

    /// Whether the session attached to a debuggee started outside this run.
    pub fn attached(&self) -> bool {
        self.inner.info.attached
    }

    /// The debuggee's pid, when the adapter reported it (`process` event)
    /// or it was found otherwise ([`Session::find_served_debuggee`]).
    pub fn debuggee_pid(&self) -> Option<u32> {
        *self.inner.debuggee_pid.lock().expect("pid lock")
    }

    /// After an attach to a debug server on `port` whose adapter named no
    /// process (a headless `dlv`): the debuggee is the one process that
    /// the server listening there traces (ptrace). Left unknown when that
    /// is not exactly one process.
    pub async fn find_served_debuggee(&self, port: u16) {
        if self.debuggee_pid().is_some() {
            return;
        }
        let found = tokio::task::spawn_blocking(move || {
            use tool_core::process::procfs;
            let [server] = procfs::listening_on(port)[..] else {
                return None;
            };
            match procfs::traced_by(server)[..] {
                [debuggee] => Some(debuggee),
                _ => None,
            }
        })
        .await
        .ok()
        .flatten();
        if let Some(pid) = found {
            self.inner
                .debuggee_pid
                .lock()
                .expect("pid lock")
                .get_or_insert(pid);
        }
    }

    pub fn adapter_kind(&self) -> crate::catalog::AdapterKind {
        self.inner.info.adapter_kind
    }

    pub fn is_ended(&self) -> bool {
        matches!(self.snapshot().state, RunState::Ended(_))
    }

    /// Mark the debuggee running after a continue/step reply, unless a new
    /// stop already arrived (adapters may send it before the reply).
    pub fn mark_running(&self, from_stop: u64) {
        self.inner.run.update(|s| match s {
            RunState::Stopped(info) if info.stop_id == from_stop => Some(RunState::Running),
            _ => None,
        });
    }

    /// Wait until the debuggee stops or ends after `since` (a generation),
    /// at most `within`.
    pub async fn wait_settled(&self, since: u64, within: Duration) -> Settled {
        self.inner.run.wait_settled(since, within).await
    }

    /// End the session: ask the adapter to end the debuggee, then kill the
    /// adapter's group and every process it was seen to start. Idempotent.
    pub async fn shutdown(&self, ending: Ending) {
        let mut shut = self.inner.background.shut.lock().await;
        if *shut {
            return;
        }
        self.record_processes();
        // A start that failed (an adapter that did not answer in time) is
        // not asked to say goodbye: it is killed at once.
        let alive =
            self.inner.client.closed().is_none() && !matches!(ending, Ending::Failed { .. });
        let stopped = match self.snapshot().state {
            RunState::Stopped(stop) => Some(stop.thread_id.unwrap_or(1)),
            _ => None,
        };
        // Mark it ended first, so a concurrent reader sees why.
        self.inner.run.set_ended(ending);
        if alive && self.inner.info.attached {
            if let Some(thread) = stopped {
                // A debuggee we let go of is left running, not halted where
                // it stopped (a headless dlv would keep it halted).
                let _ = self
                    .inner
                    .client
                    .request(
                        "continue",
                        serde_json::json!({ "threadId": thread }),
                        DISCONNECT_GRACE,
                    )
                    .await;
            }
        }
        if alive {
            let _ = self
                .inner
                .client
                .typed::<dap_types::requests::Disconnect>(
                    &dap_types::DisconnectArguments {
                        restart: Some(false),
                        // A debuggee we did not start is left running.
                        terminate_debuggee: Some(!self.inner.info.attached),
                        suspend_debuggee: None,
                    },
                    DISCONNECT_GRACE,
                )
                .await;
        }
        self.inner.owned.end().await;
        // The stream is closed now; let the pump apply what was still queued
        // (delve reports the exit status after `terminated`).
        let pump = self.inner.background.pump.lock().expect("pump lock").take();
        if let Some(mut pump) = pump {
            if tokio::time::timeout(Duration::from_secs(1), &mut pump)
                .await
                .is_err()
            {
                pump.abort();
            }
        }
        // Nothing will finish a line the program left unfinished.
        self.inner.io.output.flush();
        // Capture tasks end with their streams; the TTL timer would fire
        // into an ended session, so stop it.
        for t in self
            .inner
            .background
            .tasks
            .lock()
            .expect("tasks lock")
            .iter()
        {
            t.abort();
        }
        *shut = true;
    }

    /// Remember the adapter's process tree as it is now.
    pub fn record_processes(&self) {
        self.inner.owned.record_tree();
    }

    /// Every process this session started that is still alive.
    pub fn live_processes(&self) -> Vec<u32> {
        self.inner.owned.alive()
    }

    pub fn adapter_pid(&self) -> Option<u32> {
        self.inner.owned.adapter_pid
    }

    pub fn adapter_id(&self) -> &str {
        &self.inner.info.adapter_id
    }

    pub fn adapter_command(&self) -> &str {
        &self.inner.info.adapter_command
    }

    pub fn label(&self) -> &str {
        &self.inner.info.label
    }

    pub fn age(&self) -> Duration {
        self.inner.info.started.elapsed()
    }

    pub fn ttl_left(&self) -> Duration {
        self.inner.info.limits.ttl.saturating_sub(self.age())
    }

    pub fn evaluate_context(&self) -> &str {
        &self.inner.info.evaluate_context
    }

    pub fn adapter_log_tail(&self) -> String {
        self.inner
            .io
            .adapter_log
            .lock()
            .expect("log lock")
            .tail(1500)
    }

    /// Output since the last call (and the bytes lost in between).
    pub fn take_new_output(&self) -> tool_core::process::OutputChunk {
        let io = &self.inner.io;
        let mut cursor = io.output_cursor.lock().expect("cursor lock");
        let mut chunk = io.output.read_since(*cursor);
        *cursor = chunk.cursor;
        chunk.text = self.adapter_kind().adapter().tidy_output(chunk.text);
        chunk
    }

    pub fn output_tail(&self, bytes: usize) -> String {
        let tail = self.inner.io.output.tail(bytes);
        self.adapter_kind().adapter().tidy_output(tail)
    }

    /// Hand out a new handle for something of the current stop.
    pub fn issue(
        &self,
        stop_id: u64,
        kind: HandleKind,
        dap_id: u64,
        thread_id: Option<u64>,
    ) -> u64 {
        self.inner
            .handles
            .lock()
            .expect("handles lock")
            .issue(stop_id, kind, dap_id, thread_id)
    }

    /// Look a handle up for the current stop, or say why it cannot be used.
    pub fn resolve_handle(&self, id: u64, kind: HandleKind) -> Result<Resolved, ToolError> {
        let state = self.snapshot().state;
        self.inner
            .handles
            .lock()
            .expect("handles lock")
            .resolve(id, kind, &state)
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // A session dropped without shutdown (the run ended): the adapter's
        // group dies with its ChildProcess; kill what escaped the group.
        self.owned.end_now();
        if let Ok(tasks) = self.background.tasks.lock() {
            for t in tasks.iter() {
                t.abort();
            }
        }
        if let Ok(Some(pump)) = self.background.pump.lock().map(|mut p| p.take()) {
            pump.abort();
        }
    }
}
