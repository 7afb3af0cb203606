//! One running language server: the process, the JSON-RPC session over its
//! stdio, what it told us (capabilities, progress, diagnostics), and the
//! documents we keep open in it.
//!
//! Invariants kept here:
//! - every request has a timeout, and an expired one is cancelled with
//!   `$/cancelRequest` so the server stops working on it;
//! - when the server exits, crashes or breaks the framing, every pending call
//!   fails at once with the reason, and every later call fails the same way;
//! - the server's own requests are always answered (an unanswered
//!   `workspace/configuration` stalls some servers forever);
//! - dropping the client kills the server's whole process group.

use crate::position::PositionEncoding;
use crate::transport::{self, FrameError};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};
use tool_core::fs::FsError;
use tool_core::process::signals::{self, Signal};
use tool_core::process::{ChildSpec, Io, OutputRing, SharedOutput};
use tool_core::Workspace;
use url::Url;

mod documents;
mod incoming;

pub use documents::{file_uri, normalize_uri, read_document, uri_path, MAX_DOCUMENT_BYTES};
use incoming::handle_incoming;

/// Why a request produced no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("the language server is gone: {0}")]
    Gone(String),
    #[error("`{method}` got no answer within {} ms (the request was cancelled)", after.as_millis())]
    TimedOut { method: String, after: Duration },
    #[error("the server answered `{method}` with error {code}: {message}")]
    Rpc {
        method: String,
        code: i64,
        message: String,
    },
}

impl RequestError {
    pub fn into_tool_error(self, server: &str) -> tool_core::ToolError {
        use tool_core::ToolError;
        match self {
            RequestError::Gone(why) => ToolError::failed(format!(
                "{server} is gone ({why}); the next call restarts it — retry the call, or run `lsp` op `status`"
            )),
            e @ RequestError::TimedOut { .. } => ToolError::timed_out(format!(
                "{server}: {e}; the server is still running — retry, or `lsp` op `reload` if it keeps happening"
            )),
            e @ RequestError::Rpc { .. } => ToolError::failed(format!("{server}: {e}")),
        }
    }
}

/// How many replaced publishes are remembered per document.
pub const EARLIER_PUBLISHES: usize = 8;

/// The last diagnostics a server published for one document.
#[derive(Debug, Clone)]
pub struct Published {
    pub version: Option<i32>,
    pub diagnostics: Vec<lsp_types::Diagnostic>,
    /// Position of this publish in the client's publish sequence.
    pub seq: u64,
    pub at: Instant,
}

/// A document we keep open in the server.
#[derive(Debug, Clone)]
pub struct OpenDoc {
    pub version: i32,
    pub text: String,
    pub language_id: String,
    /// The publish sequence number when this version was sent.
    pub sent_at_seq: u64,
}

/// What indexing the server reports.
#[derive(Debug, Default)]
struct Activity {
    /// `$/progress` tokens begun and not ended, with their title.
    tokens: BTreeMap<String, String>,
    /// rust-analyzer's `experimental/serverStatus`.
    quiescent: Option<bool>,
    status_message: Option<String>,
    busy_since: Option<Instant>,
    /// Whether the server ever reported progress or status.
    ever_reported: bool,
    /// The last progress runs: token, when begun, when ended.
    history: Vec<ProgressRun>,
}

/// One `$/progress` run, begin to end.
#[derive(Debug, Clone)]
pub struct ProgressRun {
    pub token: String,
    pub title: String,
    pub begun: Instant,
    pub ended: Option<Instant>,
}

/// How many finished progress runs are remembered.
const PROGRESS_HISTORY: usize = 64;

impl Activity {
    fn busy(&self) -> bool {
        !self.tokens.is_empty() || self.quiescent == Some(false)
    }
    fn describe(&self) -> String {
        let mut parts: Vec<String> = self.tokens.values().cloned().collect();
        if self.quiescent == Some(false) {
            parts.push(
                self.status_message
                    .clone()
                    .unwrap_or_else(|| "server not quiescent".into()),
            );
        }
        parts.join("; ")
    }
}

pub type Reply = Result<Value, RequestError>;

struct Shared {
    name: String,
    pending: Mutex<HashMap<i64, (String, oneshot::Sender<Reply>)>>,
    gone: watch::Sender<Option<String>>,
    activity: Mutex<Activity>,
    activity_seq: watch::Sender<u64>,
    diagnostics: Mutex<HashMap<String, Published>>,
    /// The publishes each one in `diagnostics` replaced, newest last (at
    /// most [`EARLIER_PUBLISHES`] per document).
    earlier: Mutex<HashMap<String, std::collections::VecDeque<Published>>>,
    diag_seq: watch::Sender<u64>,
    registrations: Mutex<HashSet<String>>,
    publishes_versions: AtomicBool,
    settings: Option<Value>,
    root_uri: String,
    root_name: String,
    stderr: SharedOutput,
    /// Set before a deliberate stop, so the exit is not counted as a crash.
    stopping: AtomicBool,
    /// The start of the log message that says the server finished starting.
    started_message: Option<String>,
    /// Whether it was seen.
    started: watch::Sender<bool>,
    /// While a command of lsp_code_action runs: the edits the server asks
    /// to apply (`workspace/applyEdit`), kept instead of written.
    captured: Mutex<Option<Vec<Value>>>,
}

impl Shared {
    fn mark_gone(&self, reason: String) {
        let mut first = false;
        self.gone.send_if_modified(|g| {
            if g.is_none() {
                *g = Some(reason.clone());
                first = true;
                true
            } else {
                false
            }
        });
        if first {
            tracing::info!(server = %self.name, %reason, "language server gone");
        }
        let why = self.gone.borrow().clone().unwrap_or(reason);
        let drained: Vec<_> = self.pending.lock().expect("pending").drain().collect();
        for (_, (_, tx)) in drained {
            let _ = tx.send(Err(RequestError::Gone(why.clone())));
        }
        // Waiters on progress or diagnostics re-check and see the exit.
        self.activity_seq.send_modify(|s| *s += 1);
        self.diag_seq.send_modify(|s| *s += 1);
    }

    fn stderr_tail(&self) -> String {
        let tail = self.stderr.lock().expect("stderr").tail(600);
        let tail = tail.trim();
        if tail.is_empty() {
            String::new()
        } else {
            let last: Vec<&str> = tail.lines().rev().take(4).collect();
            format!(
                "; last stderr: {}",
                last.into_iter().rev().collect::<Vec<_>>().join(" | ")
            )
        }
    }
}

/// How a start that ended before the server's started message reads.
pub const EXITED_BEFORE_STARTED: &str = "it exited before it said it had started";

/// Options for starting a server.
#[derive(Debug, Clone)]
pub struct StartSpec {
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub root: PathBuf,
    /// The run's workspace: documents are read through its root handle.
    pub workspace: Workspace,
    pub path_env: Option<OsString>,
    pub initialization_options: Option<Value>,
    pub settings: Option<Value>,
    pub init_timeout: Duration,
    /// A log message that proves the server finished starting (see
    /// [`crate::ServerEntry::started_message`]); awaited within
    /// `init_timeout` before the server is used.
    pub started_message: Option<String>,
    /// How long after the first opened document a server that has not
    /// reported progress yet is given to start before it counts as idle.
    pub settle: Duration,
    /// Environment variables set to a new folder of this server process's
    /// own (see [`crate::ServerEntry::own_dir_env`]).
    pub own_dir_env: Vec<String>,
    /// A command whose answer proves the server ready (see
    /// [`crate::ServerEntry::ready_probe`]).
    pub ready_probe: Option<crate::ready_probe::ReadyProbe>,
}

/// A running language server and our session with it.
pub struct LspClient {
    shared: Arc<Shared>,
    outgoing: mpsc::UnboundedSender<Value>,
    next_id: AtomicI64,
    pgid: u32,
    kill: Mutex<Option<oneshot::Sender<()>>>,
    pub name: String,
    pub root: PathBuf,
    workspace: Workspace,
    pub capabilities: Value,
    pub encoding: PositionEncoding,
    pub started: Instant,
    docs: tokio::sync::Mutex<HashMap<String, OpenDoc>>,
    /// Last full pull-diagnostics report per document.
    pulled: Mutex<HashMap<String, (Vec<lsp_types::Diagnostic>, Instant)>>,
    first_open: Mutex<Option<Instant>>,
    /// How long a fresh server may take to start reporting progress.
    settle: Duration,
    /// The folder of this server process's own (see
    /// [`crate::ServerEntry::own_dir_env`]), removed after the server is
    /// killed.
    _own_dir: Option<tool_core::scratch::ScratchDir>,
    ready_probe: Option<crate::ready_probe::ReadyProbe>,
}

impl std::fmt::Debug for LspClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspClient")
            .field("name", &self.name)
            .field("pid", &self.pgid)
            .finish_non_exhaustive()
    }
}

impl LspClient {
    /// Start the server and complete `initialize`.
    pub async fn start(spec: StartSpec) -> Result<Arc<LspClient>, String> {
        let mut child_spec = ChildSpec::new(&spec.program)
            .args(&spec.args)
            .cwd(&spec.root)
            .stdin(Io::Pipe)
            .stdout(Io::Pipe)
            .stderr(Io::Pipe);
        if let Some(p) = &spec.path_env {
            child_spec = child_spec.env("PATH", p);
        }
        let own_dir = if spec.own_dir_env.is_empty() {
            None
        } else {
            let dir = tool_core::scratch::ScratchDir::create("lsp")
                .map_err(|e| format!("cannot make {}'s own folder: {e}", spec.name))?;
            for var in &spec.own_dir_env {
                child_spec = child_spec.env(var, dir.path());
            }
            Some(dir)
        };
        let mut child = child_spec
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", child_spec.display()))?;
        let pgid = child.pid();
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let stderr_ring: SharedOutput = Arc::new(Mutex::new(OutputRing::new(16 * 1024)));
        tool_core::process::capture_into(stderr, stderr_ring.clone());

        let root_uri = file_uri(&spec.root);
        let shared = Arc::new(Shared {
            name: spec.name.clone(),
            pending: Mutex::default(),
            gone: watch::channel(None).0,
            activity: Mutex::default(),
            activity_seq: watch::channel(0).0,
            diagnostics: Mutex::default(),
            earlier: Mutex::default(),
            diag_seq: watch::channel(0).0,
            registrations: Mutex::default(),
            publishes_versions: AtomicBool::new(false),
            settings: spec.settings.clone(),
            root_uri: root_uri.clone(),
            root_name: spec
                .root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "root".into()),
            stderr: stderr_ring,
            stopping: AtomicBool::new(false),
            started_message: spec.started_message.clone(),
            started: watch::channel(false).0,
            captured: Mutex::default(),
        });

        // Writer: one task owns stdin, so frames never interleave.
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Value>();
        {
            let shared = shared.clone();
            tokio::spawn(async move {
                let mut stdin = stdin;
                while let Some(msg) = out_rx.recv().await {
                    tracing::trace!(server = %shared.name, %msg, "frame to the server");
                    if let Err(e) = transport::write_frame(&mut stdin, &msg).await {
                        shared.mark_gone(format!("writing to it failed: {e}"));
                        break;
                    }
                }
            });
        }

        // Waiter: owns the process, notices its exit at once, kills on request.
        let (kill_tx, kill_rx) = oneshot::channel::<()>();
        {
            let shared = shared.clone();
            tokio::spawn(async move {
                tokio::select! {
                    status = child.wait() => {
                        let status = match status {
                            Ok(s) => tool_core::process::describe_exit(s),
                            Err(e) => format!("wait failed: {e}"),
                        };
                        // Let stderr drain so the reason carries its last words.
                        tokio::time::sleep(Duration::from_millis(30)).await;
                        let reason = format!("{status}{}", shared.stderr_tail());
                        shared.mark_gone(reason);
                    }
                    _ = kill_rx => {
                        child.terminate(Duration::from_millis(500)).await;
                        shared.mark_gone("it was stopped".into());
                    }
                }
            });
        }

        // Reader: dispatches replies, answers server requests, records
        // notifications.
        {
            let shared = shared.clone();
            let out_tx = out_tx.clone();
            tokio::spawn(async move {
                let mut reader = tokio::io::BufReader::new(stdout);
                loop {
                    match transport::read_frame(&mut reader).await {
                        Ok(Some(msg)) => {
                            tracing::trace!(server = %shared.name, %msg, "frame from the server");
                            handle_incoming(&shared, &out_tx, msg)
                        }
                        Ok(None) => {
                            // Prefer the waiter's reason, which has the exit status.
                            let mut gone = shared.gone.subscribe();
                            let _ = tokio::time::timeout(
                                Duration::from_millis(500),
                                gone.wait_for(|g| g.is_some()),
                            )
                            .await;
                            shared
                                .mark_gone(format!("it closed its output{}", shared.stderr_tail()));
                            break;
                        }
                        Err(FrameError::BadBody { error, excerpt }) => {
                            tracing::warn!(server = %shared.name, %error, %excerpt, "skipped a frame that is not JSON");
                        }
                        Err(e) => {
                            // The stream cannot be resynchronized: drop the server
                            // (its keeper then ends what it started).
                            let _ = signals::send_group(pgid, Signal::Kill);
                            shared.mark_gone(format!("it broke the protocol ({e}) and was killed"));
                            break;
                        }
                    }
                }
            });
        }

        let mut client = LspClient {
            shared,
            outgoing: out_tx,
            next_id: AtomicI64::new(1),
            pgid,
            kill: Mutex::new(Some(kill_tx)),
            name: spec.name.clone(),
            root: spec.root.clone(),
            workspace: spec.workspace.clone(),
            capabilities: Value::Null,
            encoding: PositionEncoding::Utf16,
            started: Instant::now(),
            docs: Default::default(),
            pulled: Mutex::default(),
            first_open: Mutex::default(),
            settle: spec.settle,
            _own_dir: own_dir,
            ready_probe: spec.ready_probe.clone(),
        };
        let params = initialize_params(&spec, &root_uri, &client.shared.root_name);
        let result = client
            .request("initialize", params, spec.init_timeout)
            .await
            .map_err(|e| format!("`initialize` failed: {e}"))?;
        let capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        // LSP 3.17 `positionEncoding`, or clangd's older `offsetEncoding`
        // extension (clangd 14 answers only that one).
        let encoding = capabilities
            .get("positionEncoding")
            .or_else(|| result.get("offsetEncoding"))
            .and_then(Value::as_str)
            .map(PositionEncoding::from_lsp)
            .unwrap_or(PositionEncoding::Utf16);
        client.notify("initialized", json!({}));
        if let Some(settings) = &spec.settings {
            client.notify(
                "workspace/didChangeConfiguration",
                json!({ "settings": settings }),
            );
        }
        if let Some(message) = &spec.started_message {
            client.wait_started(message, spec.init_timeout).await?;
        }
        client.capabilities = capabilities;
        client.encoding = encoding;
        tracing::info!(server = %client.name, pid = pgid, encoding = encoding.name(), "language server ready");
        Ok(Arc::new(client))
    }

    pub fn pid(&self) -> u32 {
        self.pgid
    }

    /// Wait for the log message that says the server finished starting,
    /// at most `bound` (counted from the process start).
    async fn wait_started(&self, message: &str, bound: Duration) -> Result<(), String> {
        let mut started = self.shared.started.subscribe();
        let mut gone = self.shared.gone.subscribe();
        let deadline = tokio::time::Instant::from_std(self.started + bound);
        tokio::select! {
            seen = tokio::time::timeout_at(deadline, started.wait_for(|s| *s)) => match seen {
                Ok(_) => Ok(()),
                Err(_) => Err(format!(
                    "it did not say it had started (a log message \"{message}…\") within {} ms",
                    bound.as_millis()
                )),
            },
            _ = gone.wait_for(|g| g.is_some()) => Err(format!(
                "{EXITED_BEFORE_STARTED}: {}",
                self.gone().unwrap_or_default()
            )),
        }
    }

    /// The last of what the server wrote to stderr.
    pub fn stderr_tail(&self, bytes: usize) -> String {
        self.shared.stderr.lock().expect("stderr").tail(bytes)
    }

    /// Why the server is gone, if it is.
    pub fn gone(&self) -> Option<String> {
        self.shared.gone.borrow().clone()
    }

    /// Whether it went away on its own (not stopped by us).
    pub fn crashed(&self) -> bool {
        self.gone().is_some() && !self.shared.stopping.load(Ordering::SeqCst)
    }

    /// What it is busy with, if it reports indexing.
    pub fn busy(&self) -> Option<(String, Duration)> {
        let a = self.shared.activity.lock().expect("activity");
        a.busy().then(|| {
            (
                a.describe(),
                a.busy_since.map(|t| t.elapsed()).unwrap_or_default(),
            )
        })
    }

    pub fn notify(&self, method: &str, params: Value) {
        let _ = self
            .outgoing
            .send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Send a request and wait for its answer, at most `timeout`.
    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Reply {
        if let Some(why) = self.gone() {
            return Err(RequestError::Gone(why));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.shared
            .pending
            .lock()
            .expect("pending")
            .insert(id, (method.to_string(), tx));
        // Checked again: the server may have died between the check and the insert.
        if let Some(why) = self.gone() {
            self.shared.pending.lock().expect("pending").remove(&id);
            return Err(RequestError::Gone(why));
        }
        let _ = self
            .outgoing
            .send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(RequestError::Gone(
                self.gone().unwrap_or_else(|| "the session ended".into()),
            )),
            Err(_) => {
                self.shared.pending.lock().expect("pending").remove(&id);
                self.notify("$/cancelRequest", json!({ "id": id }));
                Err(RequestError::TimedOut {
                    method: method.to_string(),
                    after: timeout,
                })
            }
        }
    }

    /// Wait until the server reports no indexing, at most `bound`. `Err` holds
    /// what it is still doing and for how long.
    pub async fn wait_until_idle(&self, bound: Duration) -> Result<(), (String, Duration)> {
        let mut seq = self.shared.activity_seq.subscribe();
        let deadline = tokio::time::Instant::now() + bound;
        // A server that reports indexing starts doing so a moment after
        // `initialized`; a query sent before that would find it "idle" and
        // get an empty answer. So a fresh server gets a short grace period
        // to say it is busy.
        let since = self
            .first_open
            .lock()
            .expect("first_open")
            .unwrap_or(self.started)
            .max(self.started);
        let settle_until = tokio::time::Instant::from_std(since + self.settle);
        // The ready probe's answer ends the grace period as progress does.
        let probe = async {
            let file = self.docs.lock().await.keys().next().cloned();
            let path = file.and_then(|uri| url::Url::parse(&uri).ok()?.to_file_path().ok());
            match (&self.ready_probe, path) {
                (Some(probe), Some(path)) => {
                    let _ = self
                        .request("workspace/executeCommand", probe.params(&path), bound)
                        .await;
                }
                _ => std::future::pending().await,
            }
        };
        tokio::pin!(probe);
        let mut probed = false;
        while !probed
            && !self.shared.activity.lock().expect("activity").ever_reported
            && tokio::time::Instant::now() < settle_until.min(deadline)
            && self.gone().is_none()
        {
            tokio::select! {
                _ = tokio::time::timeout_at(settle_until.min(deadline), seq.changed()) => {}
                _ = &mut probe => probed = true,
            }
        }
        loop {
            if self.gone().is_some() {
                return Ok(()); // the request itself reports the exit
            }
            match self.busy() {
                None => return Ok(()),
                Some(state) => {
                    if tokio::time::timeout_at(deadline, seq.changed())
                        .await
                        .is_err()
                    {
                        return Err(state);
                    }
                }
            }
        }
    }

    /// Whether the server offers pull diagnostics (statically or registered).
    pub fn pull_diagnostics(&self) -> bool {
        self.capabilities
            .get("diagnosticProvider")
            .is_some_and(|v| !v.is_null())
            || self
                .shared
                .registrations
                .lock()
                .expect("registrations")
                .contains("textDocument/diagnostic")
    }

    /// Progress runs whose token starts with `prefix`, oldest first.
    pub fn progress_runs(&self, prefix: &str) -> Vec<ProgressRun> {
        let a = self.shared.activity.lock().expect("activity");
        a.history
            .iter()
            .filter(|r| r.token.starts_with(prefix))
            .cloned()
            .collect()
    }

    /// Whether rust-analyzer's `experimental/serverStatus` says it is busy.
    pub fn not_quiescent(&self) -> bool {
        self.shared.activity.lock().expect("activity").quiescent == Some(false)
    }

    pub fn subscribe_activity(&self) -> watch::Receiver<u64> {
        self.shared.activity_seq.subscribe()
    }

    /// Whether the server offers `workspace/executeCommand` for `command`.
    pub fn offers_command(&self, command: &str) -> bool {
        self.capabilities
            .pointer("/executeCommandProvider/commands")
            .and_then(Value::as_array)
            .is_some_and(|c| c.iter().any(|c| c.as_str() == Some(command)))
    }

    pub fn publishes_versions(&self) -> bool {
        self.shared.publishes_versions.load(Ordering::Relaxed)
    }

    pub fn has_capability(&self, key: &str) -> bool {
        self.capabilities
            .get(key)
            .is_some_and(|v| !v.is_null() && v != &Value::Bool(false))
    }

    /// The last publish for `uri` that came before `t` (the one in force
    /// then), if it is still remembered.
    pub fn published_before(&self, uri: &str, t: Instant) -> Option<Published> {
        if let Some(p) = self.published(uri).filter(|p| p.at < t) {
            return Some(p);
        }
        let earlier = self.shared.earlier.lock().expect("earlier");
        earlier.get(uri)?.iter().rev().find(|p| p.at < t).cloned()
    }

    pub fn published(&self, uri: &str) -> Option<Published> {
        self.shared
            .diagnostics
            .lock()
            .expect("diagnostics")
            .get(uri)
            .cloned()
    }

    pub fn diag_seq(&self) -> u64 {
        *self.shared.diag_seq.borrow()
    }

    pub fn subscribe_diagnostics(&self) -> watch::Receiver<u64> {
        self.shared.diag_seq.subscribe()
    }

    pub fn remember_pulled(&self, uri: &str, diags: Vec<lsp_types::Diagnostic>) {
        self.pulled
            .lock()
            .expect("pulled")
            .insert(uri.to_string(), (diags, Instant::now()));
    }

    pub fn last_pulled(&self, uri: &str) -> Option<Vec<lsp_types::Diagnostic>> {
        self.pulled
            .lock()
            .expect("pulled")
            .get(uri)
            .map(|(d, _)| d.clone())
    }

    /// When the server last delivered diagnostics for `uri` (a publish, or
    /// the answer to a pull): the benchmark's reference point.
    pub fn diagnostics_arrived(&self, uri: &str) -> Option<Instant> {
        let pushed = self.published(uri).map(|p| p.at);
        let pulled = self
            .pulled
            .lock()
            .expect("pulled")
            .get(uri)
            .map(|(_, t)| *t);
        pushed.max(pulled)
    }

    /// Run `workspace/executeCommand` and return its answer with the
    /// edits the server sent through `workspace/applyEdit` meanwhile
    /// (captured, not written).
    pub async fn execute_capturing(
        &self,
        command: &Value,
        timeout: Duration,
    ) -> (Reply, Vec<Value>) {
        *self.shared.captured.lock().expect("captured") = Some(Vec::new());
        let reply = self
            .request("workspace/executeCommand", command.clone(), timeout)
            .await;
        let edits = self
            .shared
            .captured
            .lock()
            .expect("captured")
            .take()
            .unwrap_or_default();
        (reply, edits)
    }

    /// Ask the server to shut down, then stop the process group.
    pub async fn stop(&self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        if self.gone().is_none() {
            let _ = self
                .request("shutdown", Value::Null, Duration::from_millis(800))
                .await;
            self.notify("exit", Value::Null);
            let mut gone = self.shared.gone.subscribe();
            let _ =
                tokio::time::timeout(Duration::from_millis(500), gone.wait_for(|g| g.is_some()))
                    .await;
        }
        if let Some(kill) = self.kill.lock().expect("kill").take() {
            let _ = kill.send(());
        }
        let mut gone = self.shared.gone.subscribe();
        let _ = tokio::time::timeout(Duration::from_secs(2), gone.wait_for(|g| g.is_some())).await;
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        // The waiter task may outlive us; the group must not.
        if self.gone().is_none() {
            let _ = signals::send_group(self.pgid, Signal::Kill);
        }
    }
}

fn initialize_params(spec: &StartSpec, root_uri: &str, root_name: &str) -> Value {
    let kinds = [
        "",
        "quickfix",
        "refactor",
        "refactor.extract",
        "refactor.inline",
        "refactor.rewrite",
        "source",
        "source.organizeImports",
        "source.fixAll",
    ];
    json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "agent-tools", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": root_uri,
        "rootPath": spec.root,
        "workspaceFolders": [{"uri": root_uri, "name": root_name}],
        "initializationOptions": spec.initialization_options,
        "capabilities": {
            "general": {"positionEncodings": ["utf-8", "utf-16"]},
            "window": {"workDoneProgress": true},
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "applyEdit": true,
                "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create", "rename", "delete"]},
                "didChangeWatchedFiles": {"dynamicRegistration": true},
                "fileOperations": {"willRename": true, "didRename": true},
                "symbol": {"dynamicRegistration": false},
            },
            "textDocument": {
                "synchronization": {"didSave": true, "dynamicRegistration": false},
                "hover": {"contentFormat": ["plaintext", "markdown"]},
                "definition": {"linkSupport": true},
                "typeDefinition": {"linkSupport": true},
                "implementation": {"linkSupport": true},
                "references": {},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                "codeAction": {
                    "codeActionLiteralSupport": {"codeActionKind": {"valueSet": kinds}},
                    "isPreferredSupport": true,
                },
                "rename": {"prepareSupport": true},
                "formatting": {"dynamicRegistration": false},
                "callHierarchy": {"dynamicRegistration": false},
                "typeHierarchy": {"dynamicRegistration": false},
                "signatureHelp": {"signatureInformation": {"activeParameterSupport": true,
                    "documentationFormat": ["plaintext", "markdown"]}},
                "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
                "diagnostic": {"dynamicRegistration": true, "relatedDocumentSupport": false},
            },
            "experimental": {"serverStatusNotification": true},
            "offsetEncoding": ["utf-8", "utf-16"],
        },
    })
}
