//! One live debug session: the adapter process, its DAP connection, what
//! the debuggee is doing, and everything it started.
//!
//! Invariants kept here:
//! - the handshake follows the order real adapters need: initialize →
//!   launch/attach (reply not awaited) → `initialized` → setBreakpoints for
//!   every file → setExceptionBreakpoints → configurationDone → the reply;
//! - every wait is bounded, and a dead stream ends the session instead of
//!   leaving a waiter behind;
//! - frame ids and variable references handed to the model are our own
//!   numbers, never reused, each tagged with the stop it came from, so a
//!   stale one is refused instead of answered with another frame's data;
//! - when the session ends (exit, adapter death, TTL, terminate) the adapter,
//!   the debuggee and everything they started are killed.

use crate::catalog::{Connect, ResolvedAdapter};
use crate::procs::ProcessSet;
use crate::protocol::AdapterEvent;
use crate::transport::{DapClient, DapError};
use dap_types::OutputEventCategory;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;
use tool_core::process::{capture_into, ChildProcess, ChildSpec, Io, OutputRing, SharedOutput};
use tool_core::ToolError;

/// Bytes of debuggee output kept.
const OUTPUT_CAPACITY: usize = 256 * 1024;

/// How long the adapter may take to say goodbye before it is killed.
const DISCONNECT_GRACE: Duration = Duration::from_millis(1500);

/// After `exited`, how long to wait for `terminated` (and the last output).
const EXIT_GRACE: Duration = Duration::from_millis(1500);

/// Bounds of one session.
#[derive(Debug, Clone)]
pub struct SessionLimits {
    pub ttl: Duration,
    /// initialize → the launch reply (delve compiles the program in there).
    pub handshake: Duration,
    /// Any other request.
    pub request: Duration,
}

/// Why a stop happened, and where to look for it.
#[derive(Debug, Clone, PartialEq)]
pub struct StopInfo {
    /// 1 for the first stop of the session, then counting.
    pub stop_id: u64,
    pub reason: String,
    pub description: Option<String>,
    pub text: Option<String>,
    pub thread_id: Option<u64>,
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    Exited { code: Option<i64> },
    AdapterDied { why: String },
    Expired { ttl: Duration },
    Terminated,
    Failed { why: String },
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

/// A breakpoint as the adapter answered it.
#[derive(Debug, Clone, PartialEq)]
pub struct BreakpointStatus {
    pub requested: u32,
    pub id: Option<u64>,
    pub verified: bool,
    /// Where the adapter put it (differs from `requested` when moved).
    pub line: Option<u32>,
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
    pub breakpoints: BTreeMap<PathBuf, Vec<u32>>,
    /// Connect to this port instead of starting the adapter (delve attach:
    /// a headless `dlv` speaks DAP itself).
    pub connect_to: Option<u16>,
    /// Removed when the session ends (delve's build output).
    pub scratch_dir: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub search_path: std::ffi::OsString,
}

/// What a handle given to the model stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleKind {
    Frame,
    Variables,
}

#[derive(Debug, Clone, Copy)]
struct Handle {
    stop_id: u64,
    kind: HandleKind,
    dap_id: u64,
    /// Frames: the thread they belong to.
    thread_id: Option<u64>,
}

/// Our numbers for frames and variable references.
#[derive(Debug, Default)]
struct HandleTable {
    next: u64,
    entries: HashMap<u64, Handle>,
}

/// A resolved handle.
#[derive(Debug, Clone, Copy)]
pub struct Resolved {
    pub dap_id: u64,
    pub thread_id: Option<u64>,
}

struct Inner {
    adapter_id: String,
    label: String,
    adapter_command: String,
    client: DapClient,
    state: watch::Sender<Snapshot>,
    initialized: watch::Sender<bool>,
    output: SharedOutput,
    adapter_log: SharedOutput,
    output_cursor: Mutex<u64>,
    handles: Mutex<HandleTable>,
    processes: Mutex<ProcessSet>,
    child: Mutex<Option<ChildProcess>>,
    adapter_pid: Option<u32>,
    started: Instant,
    limits: SessionLimits,
    breakpoints: Mutex<BTreeMap<PathBuf, Vec<BreakpointStatus>>>,
    capabilities: Mutex<Value>,
    evaluate_context: String,
    scratch_dir: Option<PathBuf>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The event pump, awaited at shutdown so the last events are applied.
    pump: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Serializes shutdown, and is set once it finished.
    shut: tokio::sync::Mutex<bool>,
}

/// A live (or ended) session. Cheap to clone.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("adapter", &self.inner.adapter_id)
            .field("label", &self.inner.label)
            .finish_non_exhaustive()
    }
}

/// What the handshake reports besides the session.
#[derive(Debug, Clone, Default)]
pub struct StartReport {
    pub breakpoints: BTreeMap<PathBuf, Vec<BreakpointStatus>>,
}

fn dap_to_tool(e: DapError, log_tail: String) -> ToolError {
    let tail = if log_tail.trim().is_empty() {
        String::new()
    } else {
        format!("; adapter log: {}", log_tail.trim())
    };
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
    /// Start the adapter, run the handshake, and return once the launch
    /// reply came (the first stop is waited for by the caller).
    pub async fn start(
        plan: LaunchPlan,
        limits: SessionLimits,
    ) -> Result<(Session, StartReport), ToolError> {
        let output: SharedOutput = Arc::new(Mutex::new(OutputRing::new(OUTPUT_CAPACITY)));
        let adapter_log: SharedOutput = Arc::new(Mutex::new(OutputRing::new(16 * 1024)));
        let mut tasks = Vec::new();
        let adapter_command = plan
            .adapter
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");

        let (child, client, events) = if let Some(port) = plan.connect_to {
            let stream = tokio::time::timeout(limits.request, tokio::net::TcpStream::connect(("127.0.0.1", port)))
                .await
                .map_err(|_| ToolError::timed_out(format!("connecting to 127.0.0.1:{port} did not finish within {} ms; is the debug server listening there?", limits.request.as_millis())))?
                .map_err(|e| ToolError::failed(format!("cannot connect to 127.0.0.1:{port}: {e}; start the debug server first (e.g. `dlv --headless --listen 127.0.0.1:{port} debug`)")))?;
            let (r, w) = stream.into_split();
            let (client, events) = DapClient::start(BufReader::new(r), w);
            (None, client, events)
        } else {
            let (program, args) = plan
                .adapter
                .command
                .split_first()
                .ok_or_else(|| ToolError::failed("the adapter has no command line"))?;
            let mut spec = ChildSpec::new(program)
                .args(args)
                .cwd(&plan.adapter.project_dir)
                .env("PATH", adapter_path(&plan))
                .stdin(Io::Pipe)
                .stdout(Io::Pipe)
                .stderr(Io::Pipe);
            for (k, v) in plan.adapter.env.iter().chain(&plan.env) {
                spec = spec.env(k, v);
            }
            let mut child = spec.spawn().map_err(|e| {
                ToolError::failed(format!(
                    "{e}; check `debug adapters` for what resolves here"
                ))
            })?;
            let stdout = child.stdout.take().expect("stdout piped");
            let stderr = child.stderr.take().expect("stderr piped");
            let stdin = child.stdin.take().expect("stdin piped");
            match plan.adapter.spec.connect {
                Connect::Stdio => {
                    tasks.push(capture_into(stderr, adapter_log.clone()));
                    let (client, events) = DapClient::start(BufReader::new(stdout), stdin);
                    (Some(child), client, events)
                }
                Connect::TcpListen => {
                    // Its stdout and stderr are the debuggee's once the
                    // address line is read.
                    tasks.push(capture_into(stderr, output.clone()));
                    let mut lines = BufReader::new(stdout);
                    let addr = tokio::time::timeout(limits.request, async {
                        let mut line = String::new();
                        loop {
                            line.clear();
                            if lines.read_line(&mut line).await.ok()? == 0 {
                                return None;
                            }
                            adapter_log.lock().expect("log lock").push(line.as_bytes());
                            if let Some(addr) = listen_address(&line) {
                                return Some(addr);
                            }
                        }
                    })
                    .await
                    .ok()
                    .flatten();
                    let Some(addr) = addr else {
                        let log = adapter_log.lock().expect("log lock").tail(2000);
                        return Err(ToolError::failed(format!(
                            "`{adapter_command}` did not print the address it listens on; its output: {}",
                            log.trim()
                        )));
                    };
                    drop(stdin);
                    tasks.push(capture_into(lines, output.clone()));
                    let stream = tokio::net::TcpStream::connect(&addr).await.map_err(|e| {
                        ToolError::failed(format!("cannot connect to the adapter at {addr}: {e}"))
                    })?;
                    let (r, w) = stream.into_split();
                    let (client, events) = DapClient::start(BufReader::new(r), w);
                    (Some(child), client, events)
                }
            }
        };

        let adapter_pid = child.as_ref().map(|c| c.pid());
        let mut processes = ProcessSet::default();
        if let Some(pid) = adapter_pid {
            processes.add(pid);
        }
        let (state, _) = watch::channel(Snapshot {
            generation: 0,
            state: RunState::Starting,
        });
        let (initialized, _) = watch::channel(false);
        let inner = Arc::new(Inner {
            adapter_id: plan.adapter.spec.id.clone(),
            label: plan.label.clone(),
            adapter_command,
            client: client.clone(),
            state,
            initialized,
            output,
            adapter_log,
            output_cursor: Mutex::new(0),
            handles: Mutex::new(HandleTable::default()),
            processes: Mutex::new(processes),
            child: Mutex::new(child),
            adapter_pid,
            started: Instant::now(),
            limits: limits.clone(),
            breakpoints: Mutex::new(BTreeMap::new()),
            capabilities: Mutex::new(Value::Null),
            evaluate_context: plan.adapter.spec.evaluate_context.clone(),
            scratch_dir: plan.scratch_dir.clone(),
            tasks: Mutex::new(Vec::new()),
            pump: Mutex::new(None),
            shut: tokio::sync::Mutex::new(false),
        });
        *inner.pump.lock().expect("pump lock") =
            Some(tokio::spawn(pump_events(events, Arc::downgrade(&inner))));
        if inner.adapter_pid.is_some() {
            tasks.push(tokio::spawn(watch_adapter(Arc::downgrade(&inner))));
        }
        let weak = Arc::downgrade(&inner);
        let ttl = limits.ttl;
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(ttl).await;
            if let Some(inner) = weak.upgrade() {
                tracing::info!("debug session TTL ran out");
                Session { inner }.shutdown(Ending::Expired { ttl }).await;
            }
        }));
        inner.tasks.lock().expect("tasks lock").extend(tasks);
        let session = Session { inner };

        match session.handshake(&plan).await {
            Ok(report) => Ok((session, report)),
            Err(e) => {
                let log = session.adapter_log_tail();
                session
                    .shutdown(Ending::Failed { why: e.to_string() })
                    .await;
                let mut msg = match &e {
                    ToolError::TimedOut(m) | ToolError::BadArgs(m) | ToolError::Failed(m) => {
                        m.clone()
                    }
                    other => other.to_string(),
                };
                if !log.trim().is_empty() && !msg.contains("adapter log") {
                    msg.push_str(&format!("; adapter log: {}", log.trim()));
                }
                Err(match e {
                    ToolError::TimedOut(_) => ToolError::TimedOut(msg),
                    ToolError::BadArgs(_) => ToolError::BadArgs(msg),
                    _ => ToolError::Failed(msg),
                })
            }
        }
    }

    async fn handshake(&self, plan: &LaunchPlan) -> Result<StartReport, ToolError> {
        let limits = &self.inner.limits;
        let client = &self.inner.client;
        let log = || self.adapter_log_tail();
        let caps = client
            .request(
                "initialize",
                json!({
                    "clientID": "agent-tools",
                    "clientName": "agent-tools debug",
                    "adapterID": plan.adapter.spec.id,
                    "locale": "en-US",
                    "linesStartAt1": true,
                    "columnsStartAt1": true,
                    "pathFormat": "path",
                    "supportsVariableType": true,
                    "supportsRunInTerminalRequest": false,
                    "supportsStartDebuggingRequest": false,
                    "supportsProgressReporting": false,
                    "supportsInvalidatedEvent": false,
                }),
                limits.handshake,
            )
            .await
            .map_err(|e| dap_to_tool(e, log()))?;
        *self.inner.capabilities.lock().expect("caps lock") = caps.clone();

        // Real adapters differ: debugpy sends `initialized` only after it got
        // the launch request and answers launch after configurationDone;
        // lldb answers launch first. So launch is sent and its reply
        // collected at the end.
        let launch = client
            .send(plan.request, plan.arguments.clone())
            .await
            .map_err(|e| dap_to_tool(e, log()))?;
        let mut launch_reply = Box::pin(launch.wait(limits.handshake));
        let mut launch_result: Option<Result<Value, DapError>> = None;
        let deadline = tokio::time::Instant::now() + limits.handshake;
        let mut init_rx = self.inner.initialized.subscribe();
        loop {
            if *init_rx.borrow_and_update() {
                break;
            }
            if let Some(Err(e)) = &launch_result {
                return Err(self.launch_error(plan, e.clone()));
            }
            if let Some(why) = client.closed() {
                return Err(ToolError::failed(format!(
                    "the adapter ended the connection before it was ready ({why}); adapter log: {}",
                    log().trim()
                )));
            }
            tokio::select! {
                r = &mut launch_reply, if launch_result.is_none() => {
                    if let Err(e) = r {
                        return Err(self.launch_error(plan, e));
                    }
                    launch_result = Some(r);
                }
                changed = init_rx.changed() => {
                    if changed.is_err() { break; }
                }
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(ToolError::timed_out(format!(
                        "the adapter did not become ready (no `initialized` event) within {} ms; adapter log: {}",
                        limits.handshake.as_millis(),
                        log().trim()
                    )));
                }
            }
        }

        let mut report = StartReport::default();
        for (file, lines) in &plan.breakpoints {
            let statuses = self.set_breakpoints(file, lines).await?;
            report.breakpoints.insert(file.clone(), statuses);
        }
        if let Some(filters) = caps
            .get("exceptionBreakpointFilters")
            .and_then(Value::as_array)
        {
            // What an IDE does: the filters the adapter enables by default
            // (debugpy: stop on uncaught exceptions).
            let defaults: Vec<&str> = filters
                .iter()
                .filter(|f| f.get("default").and_then(Value::as_bool) == Some(true))
                .filter_map(|f| f.get("filter").and_then(Value::as_str))
                .collect();
            let _ = client
                .request(
                    "setExceptionBreakpoints",
                    json!({ "filters": defaults }),
                    limits.request,
                )
                .await;
        }
        if caps
            .get("supportsConfigurationDoneRequest")
            .and_then(Value::as_bool)
            == Some(true)
        {
            client
                .request("configurationDone", json!({}), limits.request)
                .await
                .map_err(|e| dap_to_tool(e, log()))?;
        }
        let reply = match launch_result {
            Some(r) => r,
            None => launch_reply.await,
        };
        if let Err(e) = reply {
            return Err(self.launch_error(plan, e));
        }
        self.inner.state.send_modify(|s| {
            if s.state == RunState::Starting {
                s.state = RunState::Running;
                s.generation += 1;
            }
        });
        self.record_processes();
        Ok(report)
    }

    fn launch_error(&self, plan: &LaunchPlan, e: DapError) -> ToolError {
        match e {
            DapError::Refused { message, .. } => ToolError::failed(format!(
                "the {} adapter refused to {} {}: {message}",
                plan.adapter.spec.id, plan.request, plan.label
            )),
            other => dap_to_tool(other, self.adapter_log_tail()),
        }
    }

    /// Send one file's breakpoints; the adapter's answer per line.
    pub async fn set_breakpoints(
        &self,
        file: &std::path::Path,
        lines: &[u32],
    ) -> Result<Vec<BreakpointStatus>, ToolError> {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
        let body = self
            .request(
                "setBreakpoints",
                json!({
                    "source": {"path": file, "name": name},
                    "breakpoints": lines.iter().map(|l| json!({"line": l})).collect::<Vec<_>>(),
                    "sourceModified": false,
                }),
            )
            .await?;
        let answered: dap_types::SetBreakpointsResponse =
            crate::transport::decode_body("setBreakpoints", body)
                .map_err(|e| ToolError::failed(e.to_string()))?;
        let statuses: Vec<BreakpointStatus> = lines
            .iter()
            .enumerate()
            .map(|(i, &requested)| {
                let b = answered.breakpoints.get(i);
                BreakpointStatus {
                    requested,
                    id: b.and_then(|b| b.id),
                    verified: b.map(|b| b.verified).unwrap_or(false),
                    line: b.and_then(|b| b.line).map(|l| l as u32),
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

    /// A request with the session's bound, errors in the model's words.
    pub async fn request(&self, command: &str, args: Value) -> Result<Value, ToolError> {
        self.request_within(command, args, self.inner.limits.request)
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
            .map_err(|e| match e {
                DapError::Closed(_) => match self.snapshot().state {
                    RunState::Ended(end) => ToolError::failed(format!(
                        "the session has ended: {}; launch again",
                        end.describe()
                    )),
                    _ => dap_to_tool(e, self.adapter_log_tail()),
                },
                other => dap_to_tool(other, self.adapter_log_tail()),
            })
    }

    /// Whether the connection to the adapter is gone.
    pub fn connection_closed(&self) -> bool {
        self.inner.client.closed().is_some()
    }

    pub fn snapshot(&self) -> Snapshot {
        self.inner.state.borrow().clone()
    }

    pub fn is_ended(&self) -> bool {
        matches!(self.snapshot().state, RunState::Ended(_))
    }

    /// Mark the debuggee running after a continue/step reply, unless a new
    /// stop already arrived (adapters may send it before the reply).
    pub fn mark_running(&self, from_stop: u64) {
        self.inner.state.send_if_modified(|s| match &s.state {
            RunState::Stopped(info) if info.stop_id == from_stop => {
                s.state = RunState::Running;
                s.generation += 1;
                true
            }
            _ => false,
        });
    }

    /// Wait until the debuggee stops or ends after `since` (a generation),
    /// at most `within`.
    pub async fn wait_settled(&self, since: u64, within: Duration) -> Settled {
        let mut rx = self.inner.state.subscribe();
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
                    if let Some(code) = match self.snapshot().state {
                        RunState::Exiting { code } => Some(code),
                        _ => None,
                    } {
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

    fn set_ended(&self, ending: Ending) {
        self.inner.state.send_if_modified(|s| {
            if matches!(s.state, RunState::Ended(_)) {
                return false;
            }
            s.state = RunState::Ended(ending);
            s.generation += 1;
            true
        });
    }

    /// End the session: ask the adapter to end the debuggee, then kill the
    /// adapter's group and every process it was seen to start. Idempotent.
    pub async fn shutdown(&self, ending: Ending) {
        let mut shut = self.inner.shut.lock().await;
        if *shut {
            return;
        }
        self.record_processes();
        let alive = self.inner.client.closed().is_none();
        // Mark it ended first, so a concurrent reader sees why.
        self.set_ended(ending);
        if alive {
            let _ = self
                .inner
                .client
                .request(
                    "disconnect",
                    json!({"restart": false, "terminateDebuggee": true}),
                    DISCONNECT_GRACE,
                )
                .await;
        }
        self.record_processes();
        let child = self.inner.child.lock().expect("child lock").take();
        if let Some(mut child) = child {
            child.terminate(Duration::from_millis(500)).await;
        }
        let processes = self.inner.processes.lock().expect("procs lock").clone();
        processes.kill_all();
        let deadline = Instant::now() + Duration::from_secs(3);
        while !processes.alive().is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if let Some(dir) = &self.inner.scratch_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        // The stream is closed now; let the pump apply what was still queued
        // (delve reports the exit status after `terminated`).
        let pump = self.inner.pump.lock().expect("pump lock").take();
        if let Some(mut pump) = pump {
            if tokio::time::timeout(Duration::from_secs(1), &mut pump)
                .await
                .is_err()
            {
                pump.abort();
            }
        }
        // Capture tasks end with their streams; the TTL timer would fire
        // into an ended session, so stop it.
        for t in self.inner.tasks.lock().expect("tasks lock").iter() {
            t.abort();
        }
        *shut = true;
    }

    /// Remember the adapter's process tree as it is now.
    pub fn record_processes(&self) {
        if let Some(pid) = self.inner.adapter_pid {
            self.inner
                .processes
                .lock()
                .expect("procs lock")
                .record_tree(pid);
        }
    }

    /// Every process this session started that is still alive.
    pub fn live_processes(&self) -> Vec<u32> {
        self.record_processes();
        self.inner.processes.lock().expect("procs lock").alive()
    }

    pub fn adapter_pid(&self) -> Option<u32> {
        self.inner.adapter_pid
    }

    pub fn adapter_id(&self) -> &str {
        &self.inner.adapter_id
    }

    pub fn adapter_command(&self) -> &str {
        &self.inner.adapter_command
    }

    pub fn label(&self) -> &str {
        &self.inner.label
    }

    pub fn age(&self) -> Duration {
        self.inner.started.elapsed()
    }

    pub fn ttl_left(&self) -> Duration {
        self.inner.limits.ttl.saturating_sub(self.age())
    }

    pub fn evaluate_context(&self) -> &str {
        &self.inner.evaluate_context
    }

    pub fn adapter_log_tail(&self) -> String {
        self.inner.adapter_log.lock().expect("log lock").tail(1500)
    }

    /// Output since the last call (and the bytes lost in between).
    pub fn take_new_output(&self) -> tool_core::process::OutputChunk {
        let mut cursor = self.inner.output_cursor.lock().expect("cursor lock");
        let chunk = self
            .inner
            .output
            .lock()
            .expect("output lock")
            .read_since(*cursor);
        *cursor = chunk.cursor;
        chunk
    }

    pub fn output_tail(&self, bytes: usize) -> String {
        self.inner.output.lock().expect("output lock").tail(bytes)
    }

    /// Hand out a new handle for something of the current stop.
    pub fn issue(
        &self,
        stop_id: u64,
        kind: HandleKind,
        dap_id: u64,
        thread_id: Option<u64>,
    ) -> u64 {
        let mut t = self.inner.handles.lock().expect("handles lock");
        // Only the current stop's handles are kept; older ones are recognised
        // as stale by being below `next` and absent.
        t.entries.retain(|_, h| h.stop_id == stop_id);
        t.next += 1;
        let id = t.next;
        t.entries.insert(
            id,
            Handle {
                stop_id,
                kind,
                dap_id,
                thread_id,
            },
        );
        id
    }

    /// Look a handle up for the current stop, or say why it cannot be used.
    pub fn resolve_handle(&self, id: u64, kind: HandleKind) -> Result<Resolved, ToolError> {
        let what = match kind {
            HandleKind::Frame => "frame",
            HandleKind::Variables => "variables reference",
        };
        let again = match kind {
            HandleKind::Frame => "call stack again",
            HandleKind::Variables => "call stack and scopes again",
        };
        let current = match self.snapshot().state {
            RunState::Stopped(s) => s.stop_id,
            RunState::Ended(e) => {
                return Err(ToolError::refused(format!(
                    "{what} {id} is from a session that has ended ({}); launch again",
                    e.describe()
                )))
            }
            _ => {
                return Err(ToolError::refused(format!(
                    "{what} {id} is from an earlier stop and the program is running now; call pause (or wait for a breakpoint), then {again}"
                )))
            }
        };
        let t = self.inner.handles.lock().expect("handles lock");
        match t.entries.get(&id) {
            Some(h) if h.stop_id == current && h.kind == kind => Ok(Resolved {
                dap_id: h.dap_id,
                thread_id: h.thread_id,
            }),
            Some(h) if h.stop_id == current => Err(ToolError::bad_args(format!(
                "{id} is a {}, not a {what}; pass the id from the right listing",
                match h.kind {
                    HandleKind::Frame => "frame id",
                    HandleKind::Variables => "variables reference",
                }
            ))),
            Some(_) => Err(stale(what, id, current, again)),
            None if id >= 1 && id <= t.next => Err(stale(what, id, current, again)),
            None => Err(ToolError::bad_args(format!(
                "there is no {what} {id}; take ids from stack, scopes or variables of the current stop"
            ))),
        }
    }
}

fn stale(what: &str, id: u64, current: u64, again: &str) -> ToolError {
    ToolError::refused(format!(
        "that {what} ({id}) is from an earlier stop; the program is now at stop {current}; {again}"
    ))
}

/// The adapter's PATH: the search path, behind the adapter's own prefix.
fn adapter_path(plan: &LaunchPlan) -> std::ffi::OsString {
    match &plan.adapter.path_prefix {
        None => plan.search_path.clone(),
        Some(prefix) => {
            let mut p = prefix.clone().into_os_string();
            p.push(":");
            p.push(&plan.search_path);
            p
        }
    }
}

/// `DAP server listening at: 127.0.0.1:40123` → `127.0.0.1:40123`.
pub fn listen_address(line: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    let at = lower.find("listening at")?;
    let rest = line[at + "listening at".len()..].trim_start_matches([':', ' ']);
    let addr = rest.split_whitespace().next()?;
    addr.rsplit_once(':')
        .filter(|(_, port)| port.parse::<u16>().is_ok())
        .map(|_| addr.to_string())
}

/// Exit status from delve's console line `Process 123 has exited with status 3`.
fn exit_status_line(text: &str) -> Option<i64> {
    let at = text.find("has exited with status ")?;
    text[at + "has exited with status ".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Apply the adapter's events, in order, to the session's state.
async fn pump_events(
    mut events: tokio::sync::mpsc::UnboundedReceiver<AdapterEvent>,
    session: Weak<Inner>,
) {
    let mut stops: u64 = 0;
    let mut exit_code: Option<i64> = None;
    while let Some(event) = events.recv().await {
        let Some(inner) = session.upgrade() else {
            return;
        };
        let set = |state: RunState| {
            inner.state.send_modify(|s| {
                if !matches!(s.state, RunState::Ended(_)) {
                    s.state = state;
                    s.generation += 1;
                }
            })
        };
        match event {
            AdapterEvent::Initialized => {
                inner.initialized.send_replace(true);
            }
            AdapterEvent::Stopped(s) => {
                stops += 1;
                if let Some(pid) = inner.adapter_pid {
                    inner.processes.lock().expect("procs lock").record_tree(pid);
                }
                set(RunState::Stopped(StopInfo {
                    stop_id: stops,
                    reason: stop_reason(&s),
                    description: s.description.clone(),
                    text: s.text.clone(),
                    thread_id: s.thread_id,
                }));
            }
            AdapterEvent::Continued { .. } => {
                inner.state.send_if_modified(|s| {
                    if matches!(s.state, RunState::Stopped(_)) {
                        s.state = RunState::Running;
                        s.generation += 1;
                        true
                    } else {
                        false
                    }
                });
            }
            AdapterEvent::Exited { exit_code: code } => {
                exit_code = code.or(exit_code);
                set(RunState::Exiting { code: exit_code });
            }
            AdapterEvent::Terminated => {
                set(RunState::Ended(Ending::Exited { code: exit_code }));
                let s = Session {
                    inner: inner.clone(),
                };
                tokio::spawn(async move { s.shutdown(Ending::Exited { code: exit_code }).await });
            }
            AdapterEvent::Output(o) => match o.category {
                Some(OutputEventCategory::Stdout) | Some(OutputEventCategory::Stderr) => {
                    let text = o.output.replace("\r\n", "\n");
                    inner
                        .output
                        .lock()
                        .expect("output lock")
                        .push(text.as_bytes());
                }
                Some(OutputEventCategory::Telemetry) => {}
                _ => {
                    if let Some(code) = exit_status_line(&o.output) {
                        exit_code = Some(code);
                        // Delve says this after `terminated`.
                        inner.state.send_if_modified(|s| {
                            if s.state == RunState::Ended(Ending::Exited { code: None }) {
                                s.state = RunState::Ended(Ending::Exited { code: Some(code) });
                                s.generation += 1;
                                true
                            } else {
                                false
                            }
                        });
                    }
                    inner
                        .adapter_log
                        .lock()
                        .expect("log lock")
                        .push(o.output.as_bytes());
                }
            },
            AdapterEvent::Process(p) => {
                if let Some(pid) = p.system_process_id {
                    inner.processes.lock().expect("procs lock").add(pid as u32);
                }
            }
            AdapterEvent::Breakpoint(b) => {
                let Some(id) = b.breakpoint.id else { continue };
                let mut all = inner.breakpoints.lock().expect("bp lock");
                for status in all.values_mut().flatten() {
                    if status.id == Some(id) {
                        status.verified = b.breakpoint.verified;
                        if let Some(line) = b.breakpoint.line {
                            status.line = Some(line as u32);
                        }
                        if b.breakpoint.message.is_some() {
                            status.message = b.breakpoint.message.clone();
                        }
                    }
                }
            }
            AdapterEvent::Thread(_) | AdapterEvent::Other { .. } => {}
        }
    }
    // The stream ended. If nothing ended the session first, the adapter died.
    if let Some(inner) = session.upgrade() {
        adapter_died(inner);
    }
}

/// The adapter process can exit while a child of it still holds its stdout
/// open (a debuggee inherits it), so the stream alone does not tell; poll
/// the process too.
async fn watch_adapter(session: Weak<Inner>) {
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let Some(inner) = session.upgrade() else {
            return;
        };
        let exited = match inner.child.lock().expect("child lock").as_mut() {
            None => return, // shut down
            Some(c) => c.try_wait().ok().flatten(),
        };
        if let Some(status) = exited {
            // Ended first, then the waiters woken: they read why.
            adapter_died(inner.clone());
            inner
                .client
                .close(&format!("the adapter process exited ({status})"));
            return;
        }
    }
}

/// End a session whose adapter is gone, unless something ended it first.
fn adapter_died(inner: Arc<Inner>) {
    let s = Session { inner };
    if s.is_ended() {
        return;
    }
    let status = s
        .inner
        .child
        .lock()
        .expect("child lock")
        .as_mut()
        .and_then(|c| c.try_wait().ok().flatten());
    let mut why = match status {
        Some(st) => format!("it exited ({st})"),
        None => s
            .inner
            .client
            .closed()
            .unwrap_or_else(|| "its connection closed".into()),
    };
    let log = s.adapter_log_tail();
    if !log.trim().is_empty() {
        why.push_str(&format!(
            "; its last words: {}",
            tool_core::format::cap_chars(log.trim(), 600)
        ));
    }
    tracing::warn!(%why, "debug adapter died");
    let ending = Ending::AdapterDied { why };
    // Mark it now so the call that is waiting sees why at once.
    s.set_ended(ending.clone());
    tokio::spawn(async move { s.shutdown(ending).await });
}

fn stop_reason(s: &dap_types::StoppedEvent) -> String {
    use dap_types::StoppedEventReason as R;
    match &s.reason {
        R::Step => "step",
        R::Breakpoint => "breakpoint",
        R::Exception => "exception",
        R::Pause => "pause",
        R::Entry => "entry",
        R::Goto => "goto",
        R::FunctionBreakpoint => "function breakpoint",
        R::DataBreakpoint => "data breakpoint",
        R::InstructionBreakpoint => "instruction breakpoint",
        _ => "other",
    }
    .to_string()
}

impl Drop for Inner {
    fn drop(&mut self) {
        // A session dropped without shutdown (the run ended): the adapter's
        // group dies with its ChildProcess; kill what escaped the group.
        if let Some(pid) = self.adapter_pid {
            if let Ok(mut p) = self.processes.lock() {
                p.record_tree(pid);
                p.kill_all();
            }
        }
        if let Some(dir) = &self.scratch_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        if let Ok(tasks) = self.tasks.lock() {
            for t in tasks.iter() {
                t.abort();
            }
        }
        if let Ok(Some(pump)) = self.pump.lock().map(|mut p| p.take()) {
            pump.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delve_addresses_and_exit_lines_are_read() {
        assert_eq!(
            listen_address("DAP server listening at: 127.0.0.1:33101\n").as_deref(),
            Some("127.0.0.1:33101")
        );
        assert_eq!(
            listen_address("API server listening at: [::1]:40000").as_deref(),
            Some("[::1]:40000")
        );
        assert!(listen_address("hello").is_none());
        assert_eq!(
            exit_status_line("Process 15737 has exited with status 3\n"),
            Some(3)
        );
        assert_eq!(exit_status_line("Detaching\n"), None);
    }
}
