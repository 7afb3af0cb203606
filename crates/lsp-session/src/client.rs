//! One running language server: the LSP session over a [`JsonRpc`]
//! connection to its stdio, what it told us (capabilities, progress,
//! diagnostics), and the documents we keep open in it.
//!
//! Request ids, pending replies and how a connection ends live in
//! [`crate::jsonrpc`]; starting and stopping the process in
//! [`server_process`]. Invariants kept here:
//! - when the server exits, crashes or breaks the framing, the connection
//!   closes with the reason (its exit status and last stderr when known);
//! - the server's own requests are answered ([`incoming`]: an unanswered
//!   `workspace/configuration` stalls some servers forever);
//! - dropping the client kills the server's whole process group.

use crate::jsonrpc::JsonRpc;
use crate::position::PositionEncoding;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch};
use tool_core::fs::FsError;
use tool_core::process::signals::{self, Signal};
use tool_core::process::SharedOutput;
use tool_core::Workspace;
use url::Url;

mod activity;
mod answer;
mod caps;
mod documents;
mod incoming;
mod initialize;
mod registrations;
mod server_process;

pub use crate::jsonrpc::{Reply, RequestError};
pub use activity::ProgressRun;
use activity::{Activity, PROGRESS_HISTORY};
pub use answer::Answer;
pub use caps::ServerCaps;
pub use documents::{
    file_uri, normalize_uri, read_document, text_document, uri_path, MAX_DOCUMENT_BYTES,
};
pub use incoming::setting;
pub use server_process::{spawn_server, ServerProcess};

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
            e @ (RequestError::Rpc { .. } | RequestError::Malformed { .. }) => {
                ToolError::failed(format!("{server}: {e}"))
            }
        }
    }
}

/// How long a server may say it is busy with nothing changing before it is
/// sent a message to wake it (see `LspClient::wake`).
const WAKE_AFTER: Duration = Duration::from_secs(1);

/// How many diagnostics waits must run out, with nothing ever delivered,
/// before a server is taken as one that does not deliver diagnostics.
pub const SILENT_AFTER_WAITS: u32 = 2;

/// How many error-level log messages are remembered.
const ERRORS_LOGGED: usize = 8;

/// How many documents a `workspace/diagnostic/refresh` pulls again.
const REPULL_AT_MOST: usize = 16;
/// How long each of those pulls may take.
const REPULL_BOUND: Duration = Duration::from_secs(10);

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
    /// When this version was sent.
    pub sent_at: Instant,
}

struct Shared {
    activity: Mutex<Activity>,
    activity_seq: watch::Sender<u64>,
    diagnostics: Mutex<HashMap<String, Published>>,
    /// The publishes each one in `diagnostics` replaced, newest last (at
    /// most [`EARLIER_PUBLISHES`] per document).
    earlier: Mutex<HashMap<String, std::collections::VecDeque<Published>>>,
    diag_seq: watch::Sender<u64>,
    registrations: Mutex<registrations::Registrations>,
    publishes_versions: AtomicBool,
    settings: Option<Value>,
    root_uri: String,
    root_name: String,
    stderr: SharedOutput,
    /// The error-level log messages (`window/logMessage` and
    /// `window/showMessage` of type Error), newest last, at most
    /// [`ERRORS_LOGGED`]: a server that fails inside a check says so there
    /// and may answer with an empty list.
    errors_logged: Mutex<std::collections::VecDeque<(Instant, String)>>,
    /// Whether the server ever delivered diagnostics (a publish, or an
    /// answer to a pull or to tsserver's check).
    delivered: AtomicBool,
    /// How many diagnostics waits ran out before it ever delivered any.
    silent_waits: std::sync::atomic::AtomicU32,
    /// Counts the server's `workspace/diagnostic/refresh` requests: each
    /// has the documents pulled before pulled again.
    refreshes: watch::Sender<u64>,
    /// Set before a deliberate stop, so the exit is not counted as a crash.
    stopping: AtomicBool,
    /// Attached to a shared server: why the broker said the server ended,
    /// if it did (a connection that closes without it lost the broker).
    broker_end: Mutex<Option<crate::broker_link::ServerEnd>>,
    /// The start of the log message that says the server finished starting.
    started_message: Option<String>,
    /// Whether it was seen.
    started: watch::Sender<bool>,
    /// See [`StartSpec::diagnosis_progress`].
    diagnosis_progress: Option<String>,
    /// While a command of lsp_code_action runs: the edits the server asks
    /// to apply (`workspace/applyEdit`), kept instead of written.
    captured: Mutex<Option<Vec<Value>>>,
}

impl Shared {
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
    /// More environment variables of the server process (a Java server's
    /// `JAVA_HOME`).
    pub env: Vec<(String, OsString)>,
    /// A command whose answer proves the server ready (see
    /// [`crate::ServerEntry::ready_probe`]).
    pub ready_probe: Option<crate::ready_probe::ReadyProbe>,
    /// How long after a change the server's publish for it can come at the
    /// soonest (see [`crate::ServerEntry::change_diagnostics_delay_ms`]).
    pub change_diagnostics_delay: Duration,
    /// The start of the title of its progress runs that diagnose a change
    /// (see [`crate::ServerEntry::project_diagnostics_progress`]): kept in
    /// the history, never counted as busy (it is no indexing, and a query
    /// need not wait for it).
    pub diagnosis_progress: Option<String>,
    /// Attach to the broker's shared server instead of starting one.
    pub broker: Option<crate::broker_link::BrokerRoute>,
}

/// A running language server and our session with it.
pub struct LspClient {
    shared: Arc<Shared>,
    rpc: JsonRpc,
    pgid: u32,
    /// Attached to the broker's shared server (its process is not ours).
    attached: Option<crate::broker_link::Attached>,
    kill: Mutex<Option<oneshot::Sender<()>>>,
    pub name: String,
    pub root: PathBuf,
    workspace: Workspace,
    pub capabilities: ServerCaps,
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
    change_diagnostics_delay: Duration,
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
        let link = match &spec.broker {
            Some(route) => server_process::attach_shared(&spec, route).await?,
            None => server_process::Link::Own(Box::new(server_process::spawn(&spec)?)),
        };
        let (pgid, stderr, attached) = match &link {
            server_process::Link::Own(p) => (p.pgid, p.stderr.clone(), None),
            server_process::Link::Shared(_, a) => (
                a.pid,
                Arc::new(Mutex::new(tool_core::process::OutputRing::new(1024))),
                Some(a.clone()),
            ),
        };
        let root_uri = file_uri(&spec.root);
        let shared = Arc::new(Shared {
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
                .map_or_else(|| "root".into(), |n| n.to_string_lossy().into_owned()),
            stderr,
            refreshes: watch::channel(0).0,
            delivered: AtomicBool::new(false),
            silent_waits: std::sync::atomic::AtomicU32::new(0),
            errors_logged: Mutex::default(),
            stopping: AtomicBool::new(false),
            broker_end: Mutex::default(),
            started_message: spec.started_message.clone(),
            diagnosis_progress: spec.diagnosis_progress.clone(),
            started: watch::channel(false).0,
            captured: Mutex::default(),
        });
        let (rpc, kill_tx, own_dir) = match link {
            server_process::Link::Own(process) => {
                let rpc = JsonRpc::start(
                    &spec.name,
                    process.stdout,
                    process.stdin,
                    incoming::Session::new(shared.clone(), Some(pgid)),
                );
                let kill_tx =
                    server_process::watch_exit(process.child, rpc.clone(), shared.clone());
                (rpc, kill_tx, process.own_dir)
            }
            server_process::Link::Shared(stream, _) => {
                let (read, write) = stream.into_split();
                let rpc = JsonRpc::start(
                    &spec.name,
                    read,
                    write,
                    incoming::Session::new(shared.clone(), None),
                );
                (rpc.clone(), server_process::watch_detach(rpc), None)
            }
        };
        // Waiters on progress or diagnostics re-check and see the end.
        {
            let shared = shared.clone();
            let mut closed = rpc.subscribe_closed();
            tokio::spawn(async move {
                let _ = closed.wait_for(Option::is_some).await;
                shared.activity_seq.send_modify(|s| *s += 1);
                shared.diag_seq.send_modify(|s| *s += 1);
            });
        }

        let mut client = LspClient {
            shared,
            rpc,
            pgid,
            attached,
            kill: Mutex::new(Some(kill_tx)),
            name: spec.name.clone(),
            root: spec.root.clone(),
            workspace: spec.workspace.clone(),
            capabilities: ServerCaps::default(),
            encoding: PositionEncoding::Utf16,
            started: Instant::now(),
            docs: Default::default(),
            pulled: Mutex::default(),
            first_open: Mutex::default(),
            settle: spec.settle,
            _own_dir: own_dir,
            ready_probe: spec.ready_probe.clone(),
            change_diagnostics_delay: spec.change_diagnostics_delay,
        };
        let params = initialize::initialize_params(
            &spec.root,
            &root_uri,
            &client.shared.root_name,
            spec.initialization_options.as_ref(),
        );
        let result = client
            .request(
                <lsp_types::request::Initialize as lsp_types::request::Request>::METHOD,
                params,
                spec.init_timeout,
            )
            .await
            .map_err(|e| format!("`initialize` failed: {e}"))?;
        let capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        // LSP 3.17 `positionEncoding`, or clangd's older `offsetEncoding`
        // extension (clangd 14 answers only that one).
        let encoding = capabilities
            .get("positionEncoding")
            .or_else(|| result.get("offsetEncoding"))
            .and_then(Value::as_str)
            .map_or(PositionEncoding::Utf16, PositionEncoding::from_lsp);
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
        client.capabilities = ServerCaps::new(capabilities);
        client.encoding = encoding;
        tracing::info!(server = %client.name, pid = pgid, encoding = encoding.name(), "language server ready");
        let client = Arc::new(client);
        client.repull_on_refresh();
        Ok(client)
    }

    pub fn pid(&self) -> u32 {
        self.pgid
    }

    /// What the broker said when this run attached to its shared server
    /// (`None`: the server is this run's own).
    pub fn attached(&self) -> Option<&crate::broker_link::Attached> {
        self.attached.as_ref()
    }

    /// How many runs share the server now (asked of the broker), if shared.
    pub async fn shared_runs(&self) -> Option<usize> {
        self.attached.as_ref()?;
        let status = self
            .request("$/broker/status", Value::Null, Duration::from_secs(2))
            .await
            .ok()?;
        status["runs"].as_u64().map(|n| n as usize)
    }

    /// Whether this run was attached to a shared server and lost the
    /// broker (not the server: the broker says so when a server ends).
    pub fn broker_lost(&self) -> bool {
        self.attached.is_some() && self.crashed() && self.ended_by_broker().is_none()
    }

    /// Why the broker said the shared server ended, if it did.
    pub fn ended_by_broker(&self) -> Option<crate::broker_link::ServerEnd> {
        self.shared.broker_end.lock().expect("broker end").clone()
    }

    /// Restart the shared server for every run attached to it (`reload`):
    /// the broker stops it and tells the others; the next attach starts a
    /// new one. How many other runs were told.
    pub async fn restart_shared(&self) -> Result<usize, String> {
        let answer = self
            .request(
                crate::broker_link::RELOAD,
                Value::Null,
                Duration::from_secs(10),
            )
            .await
            .map_err(|e| format!("the broker did not restart it: {e}"))?;
        Ok(answer["others"].as_u64().unwrap_or(0) as usize)
    }

    /// Wait for the log message that says the server finished starting,
    /// at most `bound` (counted from the process start).
    async fn wait_started(&self, message: &str, bound: Duration) -> Result<(), String> {
        let mut started = self.shared.started.subscribe();
        let mut gone = self.rpc.subscribe_closed();
        let deadline = tokio::time::Instant::from_std(self.started + bound);
        tokio::select! {
            seen = tokio::time::timeout_at(deadline, started.wait_for(|s| *s)) => match seen {
                Ok(_) => Ok(()),
                Err(_) => Err(format!(
                    "it did not say it had started (a log message \"{message}…\") within {} ms",
                    bound.as_millis()
                )),
            },
            _ = gone.wait_for(std::option::Option::is_some) => Err(format!(
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
        self.rpc.closed()
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
        self.rpc.notify(method, params);
    }

    /// Send a request and wait for its answer, at most `timeout`.
    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Reply {
        self.rpc.request(method, params, timeout).await
    }

    /// A request whose answer is read as `T`: `method` for a caller that
    /// picks it at run time among methods of one shape.
    pub async fn request_as<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        params: impl serde::Serialize,
        timeout: Duration,
    ) -> Result<T, RequestError> {
        let params = serde_json::to_value(params).expect("request params serialize");
        let answer = self.request(method, params, timeout).await?;
        serde_json::from_value(answer).map_err(|e| RequestError::Malformed {
            method: method.to_string(),
            error: e.to_string(),
        })
    }

    /// A request typed by its [`lsp_types::request::Request`].
    pub async fn request_typed<R: lsp_types::request::Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<R::Result, RequestError> {
        self.request_as(R::METHOD, params, timeout).await
    }

    /// A request with typed params whose answer is typed when it decodes
    /// and kept raw when it does not (see [`Answer`]).
    pub async fn request_lenient<R: lsp_types::request::Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<Answer<R::Result>, RequestError> {
        let params = serde_json::to_value(params).expect("request params serialize");
        let answer = self.request(R::METHOD, params, timeout).await?;
        Ok(Answer::decode(R::METHOD, answer))
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
                () = &mut probe => probed = true,
            }
        }
        loop {
            if self.gone().is_some() {
                return Ok(()); // the request itself reports the exit
            }
            if self.busy().is_none() {
                return Ok(());
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return self.busy().map_or(Ok(()), Err);
            }
            let wake_at = (now + WAKE_AFTER).min(deadline);
            if tokio::time::timeout_at(wake_at, seq.changed())
                .await
                .is_err()
                && wake_at < deadline
            {
                self.wake();
            }
        }
    }

    /// Send the server a message that asks nothing, so that one which looks
    /// at its own state only when a message arrives looks again. ccls does:
    /// its main loop reports indexing progress only when woken by a message
    /// or an index update, and an indexer job that ends just after the loop
    /// last looked (or that had nothing to do) leaves "indexing (1/2)"
    /// standing until something else arrives. A `$/cancelRequest` for an id
    /// this client never uses is ignored by every server.
    fn wake(&self) {
        self.notify("$/cancelRequest", json!({"id": "agent-tools:wake"}));
    }

    /// Whether the server offers a request: in its capabilities under
    /// `capability`, or registered later under `method`.
    pub fn offers(&self, capability: &str, method: &str) -> bool {
        self.has_capability(capability)
            || self
                .shared
                .registrations
                .lock()
                .expect("registrations")
                .offers(method)
    }

    /// Whether the server offers pull diagnostics (statically or registered).
    /// How long after a change the server's publish for it can come at the
    /// soonest: an unversioned publish sooner than that answers an earlier
    /// text.
    pub fn change_diagnostics_delay(&self) -> Duration {
        self.change_diagnostics_delay
    }

    pub fn pull_diagnostics(&self) -> bool {
        self.capabilities.pulls_diagnostics()
            || self
                .shared
                .registrations
                .lock()
                .expect("registrations")
                .offers("textDocument/diagnostic")
    }

    /// Progress runs whose token starts with `prefix`, oldest first.
    pub fn progress_runs(&self, prefix: &str) -> Vec<ProgressRun> {
        self.progress_runs_where(|r| r.token.starts_with(prefix))
    }

    /// Progress runs whose title starts with `prefix`, oldest first (gopls
    /// names its runs by what they do, under tokens of its own making).
    pub fn progress_runs_titled(&self, prefix: &str) -> Vec<ProgressRun> {
        self.progress_runs_where(|r| r.title.starts_with(prefix))
    }

    fn progress_runs_where(&self, keep: impl Fn(&ProgressRun) -> bool) -> Vec<ProgressRun> {
        let a = self.shared.activity.lock().expect("activity");
        a.history.iter().filter(|r| keep(r)).cloned().collect()
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
        self.capabilities.offers_command(command)
    }

    pub fn publishes_versions(&self) -> bool {
        self.shared.publishes_versions.load(Ordering::Relaxed)
    }

    pub fn has_capability(&self, key: &str) -> bool {
        self.capabilities.offers(key)
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

    /// Every document's last publish, by URI: what the server has said of
    /// the project so far, open files or not.
    pub fn published_all(&self) -> HashMap<String, Published> {
        self.shared.diagnostics.lock().expect("diagnostics").clone()
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

    /// Pull `uri`'s diagnostics (`textDocument/diagnostic`), remember the
    /// answer and return it.
    pub async fn pull_diagnostics_of(
        &self,
        uri: &str,
        bound: Duration,
    ) -> Result<Vec<lsp_types::Diagnostic>, RequestError> {
        let report = self
            .request(
                "textDocument/diagnostic",
                json!({"textDocument": {"uri": uri}}),
                bound,
            )
            .await?;
        let items: Vec<lsp_types::Diagnostic> = match report.get("kind").and_then(Value::as_str) {
            Some("unchanged") => self.last_pulled(uri).unwrap_or_default(),
            _ => report
                .get("items")
                .cloned()
                .and_then(|i| serde_json::from_value(i).ok())
                .unwrap_or_default(),
        };
        self.remember_pulled(uri, items.clone());
        Ok(items)
    }

    /// On each `workspace/diagnostic/refresh`, pull again the documents
    /// pulled before (the newest [`REPULL_AT_MOST`]), so what is
    /// remembered of them is the server's latest; waiters on diagnostics
    /// are woken after. Ends with the client.
    fn repull_on_refresh(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let mut refreshes = self.shared.refreshes.subscribe();
        tokio::spawn(async move {
            while refreshes.changed().await.is_ok() {
                let Some(client) = weak.upgrade() else { return };
                if client.gone().is_some() {
                    return;
                }
                let mut uris: Vec<(String, Instant)> = client
                    .pulled
                    .lock()
                    .expect("pulled")
                    .iter()
                    .map(|(uri, (_, at))| (uri.clone(), *at))
                    .collect();
                uris.sort_by_key(|(_, at)| std::cmp::Reverse(*at));
                for (uri, _) in uris.into_iter().take(REPULL_AT_MOST) {
                    if client.doc(&uri).await.is_some() {
                        let _ = client.pull_diagnostics_of(&uri, REPULL_BOUND).await;
                    }
                }
                client.shared.diag_seq.send_modify(|s| *s += 1);
            }
        });
    }

    /// The last error the server logged since `t`, if any.
    pub fn error_logged_since(&self, t: Instant) -> Option<String> {
        let logged = self.shared.errors_logged.lock().expect("errors_logged");
        logged
            .iter()
            .rev()
            .find(|(at, _)| *at >= t)
            .map(|(_, m)| m.clone())
    }

    /// A diagnostics wait ran out: counted while the server has never
    /// delivered any.
    pub fn diagnostics_wait_ran_out(&self) {
        if !self.shared.delivered.load(Ordering::Relaxed) {
            self.shared.silent_waits.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How many diagnostics waits ran out while the server has delivered
    /// no diagnostics at all since it started, once there were
    /// [`SILENT_AFTER_WAITS`]: a server that never publishes (seen:
    /// cmake-language-server) is then not waited for again.
    pub fn never_delivers(&self) -> Option<u32> {
        let waits = self.shared.silent_waits.load(Ordering::Relaxed);
        (!self.shared.delivered.load(Ordering::Relaxed) && waits >= SILENT_AFTER_WAITS)
            .then_some(waits)
    }

    pub fn remember_pulled(&self, uri: &str, diags: Vec<lsp_types::Diagnostic>) {
        self.shared.delivered.store(true, Ordering::Relaxed);
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
                .request_typed::<lsp_types::request::Shutdown>((), Duration::from_millis(800))
                .await;
            self.notify("exit", Value::Null);
            let mut gone = self.rpc.subscribe_closed();
            let _ = tokio::time::timeout(
                Duration::from_millis(500),
                gone.wait_for(std::option::Option::is_some),
            )
            .await;
        }
        if let Some(kill) = self.kill.lock().expect("kill").take() {
            let _ = kill.send(());
        }
        let mut gone = self.rpc.subscribe_closed();
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            gone.wait_for(std::option::Option::is_some),
        )
        .await;
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        // The waiter task may outlive us; the group must not (a shared
        // server is not ours: dropping the link detaches from it).
        if self.gone().is_none() && self.attached.is_none() {
            let _ = signals::send_group(self.pgid, Signal::Kill);
        }
    }
}
