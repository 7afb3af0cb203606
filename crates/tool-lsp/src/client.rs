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

/// Documents larger than this are not sent to a server.
pub const MAX_DOCUMENT_BYTES: u64 = 20 * 1024 * 1024;

/// A workspace document's text, read through the root's handle: a regular
/// file (a FIFO or device is refused without blocking), at most
/// [`MAX_DOCUMENT_BYTES`], UTF-8. A plain read on this thread: source files
/// are small, and a blocking-pool hop per open document costs more than the
/// read itself (measured).
pub fn read_document(ws: &Workspace, path: &Path) -> std::io::Result<String> {
    let bytes = ws
        .dir()
        .read(path, MAX_DOCUMENT_BYTES)
        .map_err(|e| match e {
            FsError::NotFound { .. } => {
                std::io::Error::new(std::io::ErrorKind::NotFound, e.to_string())
            }
            other => std::io::Error::other(other.to_string()),
        })?;
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "the file is not UTF-8"))
}

pub fn file_uri(path: &Path) -> String {
    Url::from_file_path(path)
        .map(|u| u.to_string())
        .unwrap_or_else(|_| format!("file://{}", path.display()))
}

pub fn uri_path(uri: &str) -> Option<PathBuf> {
    Url::parse(uri).ok()?.to_file_path().ok()
}

/// Look up `section` (`a.b.c`) in the settings tree.
fn setting(settings: &Option<Value>, section: Option<&str>) -> Value {
    let Some(root) = settings else {
        return Value::Null;
    };
    let Some(section) = section.filter(|s| !s.is_empty()) else {
        return root.clone();
    };
    let mut v = root;
    for part in section.split('.') {
        match v.get(part) {
            Some(next) => v = next,
            None => return Value::Null,
        }
    }
    v.clone()
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
                "it exited before it said it had started: {}",
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

    /// The open document's state, if open.
    pub async fn doc(&self, uri: &str) -> Option<OpenDoc> {
        self.docs.lock().await.get(uri).cloned()
    }

    /// Bring the server's copy of `path` in line with the disk: open it, or
    /// send the new text as a new version. Returns the document's state.
    pub async fn sync_file(&self, path: &Path, language_id: &str) -> std::io::Result<OpenDoc> {
        let text = read_document(&self.workspace, path)?;
        Ok(self.sync_text(path, language_id, text).await)
    }

    /// Bring the server's copy of `path` to `text` (which need not be on
    /// disk: the diagnostics-on-write baseline is the text before a write).
    pub async fn sync_text(&self, path: &Path, language_id: &str, text: String) -> OpenDoc {
        let uri = file_uri(path);
        let mut docs = self.docs.lock().await;
        let seq = self.diag_seq();
        match docs.get_mut(&uri) {
            None => {
                self.first_open
                    .lock()
                    .expect("first_open")
                    .get_or_insert_with(Instant::now);
                self.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": language_id, "version": 1, "text": text}}),
                );
                let doc = OpenDoc {
                    version: 1,
                    text,
                    language_id: language_id.to_string(),
                    sent_at_seq: seq,
                };
                docs.insert(uri, doc.clone());
                doc
            }
            Some(doc) if doc.text != text => {
                doc.version += 1;
                doc.text = text;
                doc.sent_at_seq = seq;
                self.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": doc.version},
                           "contentChanges": [{"text": doc.text}]}),
                );
                doc.clone()
            }
            Some(doc) => doc.clone(),
        }
    }

    /// Re-read every open document from disk: a shell command or another
    /// tool may have changed it behind the server's back.
    pub async fn resync_open(&self) {
        let open: Vec<(String, String)> = self
            .docs
            .lock()
            .await
            .iter()
            .map(|(u, d)| (u.clone(), d.language_id.clone()))
            .collect();
        for (uri, lang) in open {
            let Some(path) = uri_path(&uri) else { continue };
            if path.exists() {
                let _ = self.sync_file(&path, &lang).await;
            } else {
                self.close(&uri).await;
            }
        }
    }

    pub async fn close(&self, uri: &str) {
        if self.docs.lock().await.remove(uri).is_some() {
            self.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            );
        }
    }

    pub fn did_save(&self, uri: &str, text: &str) {
        let include = self
            .capabilities
            .pointer("/textDocumentSync/save/includeText")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let mut params = json!({"textDocument": {"uri": uri}});
        if include {
            params["text"] = Value::String(text.to_string());
        }
        self.notify("textDocument/didSave", params);
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

fn handle_incoming(shared: &Shared, out: &mpsc::UnboundedSender<Value>, msg: Value) {
    let method = msg.get("method").and_then(Value::as_str);
    let id = msg.get("id").cloned();
    match (method, id) {
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return };
            let Some((method, tx)) = shared.pending.lock().expect("pending").remove(&id) else {
                return; // answered after we gave up on it
            };
            let reply = if let Some(err) = msg.get("error") {
                Err(RequestError::Rpc {
                    method,
                    code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: err
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                })
            } else {
                Ok(msg.get("result").cloned().unwrap_or(Value::Null))
            };
            let _ = tx.send(reply);
        }
        (Some(method), Some(id)) => {
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            let result = answer_server_request(shared, method, &params);
            let reply = match result {
                Ok(v) => json!({"jsonrpc": "2.0", "id": id, "result": v}),
                Err((code, message)) => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                }
            };
            let _ = out.send(reply);
        }
        (Some(method), None) => {
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            handle_notification(shared, method, params);
        }
        (None, None) => {}
    }
}

fn answer_server_request(
    shared: &Shared,
    method: &str,
    params: &Value,
) -> Result<Value, (i64, String)> {
    match method {
        "workspace/configuration" => {
            let items = params
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            Ok(Value::Array(
                items
                    .iter()
                    .map(|i| setting(&shared.settings, i.get("section").and_then(Value::as_str)))
                    .collect(),
            ))
        }
        "window/workDoneProgress/create" => Ok(Value::Null),
        "client/registerCapability" => {
            let mut regs = shared.registrations.lock().expect("registrations");
            for r in params
                .get("registrations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(m) = r.get("method").and_then(Value::as_str) {
                    regs.insert(m.to_string());
                }
            }
            drop(regs);
            // A diagnostics wait re-checks: pull may be offered now.
            shared.diag_seq.send_modify(|s| *s += 1);
            Ok(Value::Null)
        }
        "client/unregisterCapability" => {
            let mut regs = shared.registrations.lock().expect("registrations");
            for r in params
                .get("unregisterations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(m) = r.get("method").and_then(Value::as_str) {
                    regs.remove(m);
                }
            }
            Ok(Value::Null)
        }
        // Edits reach the disk only through the write-tier tools (approved,
        // all-or-nothing): while lsp_code_action runs a command, the edits
        // it sends are captured into that change; otherwise refused.
        "workspace/applyEdit" => match shared.captured.lock().expect("captured").as_mut() {
            Some(edits) => {
                edits.push(params.get("edit").cloned().unwrap_or(Value::Null));
                Ok(json!({"applied": true}))
            }
            None => Ok(json!({
                "applied": false,
                "failureReason": "this client applies edits only through its write tools"
            })),
        },
        "workspace/workspaceFolders" => {
            Ok(json!([{"uri": shared.root_uri, "name": shared.root_name}]))
        }
        "window/showMessageRequest" | "window/showDocument" => Ok(Value::Null),
        m if m.ends_with("/refresh") => Ok(Value::Null),
        _ => Err((
            -32601,
            format!("method not supported by this client: {method}"),
        )),
    }
}

fn handle_notification(shared: &Shared, method: &str, params: Value) {
    match method {
        "textDocument/publishDiagnostics" => {
            let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                return;
            };
            let version = params
                .get("version")
                .and_then(Value::as_i64)
                .map(|v| v as i32);
            if version.is_some() {
                shared.publishes_versions.store(true, Ordering::Relaxed);
            }
            let diagnostics: Vec<lsp_types::Diagnostic> = params
                .get("diagnostics")
                .cloned()
                .and_then(|d| serde_json::from_value(d).ok())
                .unwrap_or_default();
            let uri = normalize_uri(uri);
            let mut store = shared.diagnostics.lock().expect("diagnostics");
            let seq = *shared.diag_seq.borrow() + 1;
            store.insert(
                uri,
                Published {
                    version,
                    diagnostics,
                    seq,
                    at: Instant::now(),
                },
            );
            drop(store);
            shared.diag_seq.send_replace(seq);
        }
        "$/progress" => {
            let token = match params.get("token") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => return,
            };
            let value = params.get("value").cloned().unwrap_or(Value::Null);
            let mut a = shared.activity.lock().expect("activity");
            match value.get("kind").and_then(Value::as_str) {
                Some("begin") => {
                    let title = value
                        .get("title")
                        .and_then(Value::as_str)
                        .unwrap_or("working")
                        .to_string();
                    if !a.busy() {
                        a.busy_since = Some(Instant::now());
                    }
                    a.ever_reported = true;
                    if a.history.len() >= PROGRESS_HISTORY {
                        a.history.remove(0);
                    }
                    a.history.push(ProgressRun {
                        token: token.clone(),
                        title: title.clone(),
                        begun: Instant::now(),
                        ended: None,
                    });
                    a.tokens.insert(token, title);
                }
                Some("report") => {
                    if let (Some(t), Some(msg)) = (
                        a.tokens.get_mut(&token),
                        value.get("message").and_then(Value::as_str),
                    ) {
                        let title = t.split(" (").next().unwrap_or("").to_string();
                        *t = format!("{title} ({msg})");
                    }
                }
                Some("end") => {
                    a.tokens.remove(&token);
                    if let Some(run) = a
                        .history
                        .iter_mut()
                        .rev()
                        .find(|r| r.token == token && r.ended.is_none())
                    {
                        run.ended = Some(Instant::now());
                    }
                }
                _ => {}
            }
            drop(a);
            shared.activity_seq.send_modify(|s| *s += 1);
        }
        "window/logMessage" => {
            let said = params.get("message").and_then(Value::as_str).unwrap_or("");
            if let Some(m) = &shared.started_message {
                if said.starts_with(m.as_str()) {
                    shared.started.send_replace(true);
                }
            }
        }
        "experimental/serverStatus" => {
            let mut a = shared.activity.lock().expect("activity");
            let quiescent = params.get("quiescent").and_then(Value::as_bool);
            if quiescent == Some(false) && !a.busy() {
                a.busy_since = Some(Instant::now());
            }
            a.quiescent = quiescent;
            a.ever_reported = true;
            a.status_message = params
                .get("message")
                .and_then(Value::as_str)
                .map(String::from);
            drop(a);
            shared.activity_seq.send_modify(|s| *s += 1);
        }
        _ => {}
    }
}

/// Servers spell the same file URI differently (`%3A`, drive case); compare
/// them by the path they name.
pub fn normalize_uri(uri: &str) -> String {
    match uri_path(uri) {
        Some(p) => file_uri(&p),
        None => uri.to_string(),
    }
}
