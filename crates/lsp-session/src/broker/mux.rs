//! One server shared by the runs attached to it: the broker's side of the
//! JSON-RPC multiplexing.
//!
//! - Requests of a run go to the server under an id of the broker's; the
//!   answer goes back to that run under the run's id. `initialize` reaches
//!   the server once (its `processId` the broker's, since servers exit when
//!   that process does); later runs get its answer. `shutdown` and `exit`
//!   detach the run and never reach the server.
//! - Notifications of the server reach every run (publishes routed by
//!   [`super::docs`]); progress begun and registrations made before a run
//!   attached are replayed to it.
//! - Requests of the server are answered by the broker when it can
//!   (`workspace/configuration` from the shared settings, registrations),
//!   else asked of every run and answered with the best answer (an edit
//!   applied by the run that captures it), bounded.
//! - While the server holds one run's speculative text, other runs'
//!   messages wait in a queue (bounded by their own request timeouts, and
//!   [`PREVIEW_HOLD`] at most): no other run's query is answered from it.

use super::docs::{Docs, RunId};
use super::{ServerCommand, ServerEnd};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// How long one run's speculative text may keep others waiting.
pub const PREVIEW_HOLD: Duration = Duration::from_mins(1);

/// How many of the server's log messages are kept for runs that attach
/// later.
const LOGS_KEPT: usize = 64;

/// How long a request of the server waits for the runs' answers.
const ASK_BOUND: Duration = Duration::from_secs(10);

/// A request of the server put to the runs.
struct Ask {
    server_id: Value,
    method: String,
    waiting: BTreeSet<RunId>,
    answers: Vec<Value>,
}

#[derive(Default)]
enum Init {
    #[default]
    NotSent,
    /// Sent under this broker id; runs waiting for the answer.
    Pending(i64, Vec<(RunId, Value)>),
    Done(Value),
}

#[derive(Default)]
struct MuxState {
    runs: BTreeMap<RunId, mpsc::UnboundedSender<Value>>,
    next_id: i64,
    next_ask: u64,
    /// Broker id → (run, the run's id).
    pending: HashMap<i64, (RunId, Value)>,
    asks: HashMap<String, Ask>,
    init: Init,
    initialized_sent: bool,
    configured: bool,
    registrations: Vec<Value>,
    /// Progress begun and not ended: token → its begin and latest report.
    progress: BTreeMap<String, Vec<Value>>,
    /// The last progress that ended (its begin and end), and rust-analyzer's
    /// last `experimental/serverStatus`: a run that attaches after the
    /// indexing learns that the server reported it and is done, instead of
    /// waiting for a report that came before it.
    last_ended: Option<Vec<Value>>,
    server_status: Option<Value>,
    /// The server's latest log messages other than errors, for runs that
    /// attach later (a server's "started" message among them; an error
    /// logged before a run came is not that run's).
    logs: VecDeque<Value>,
    docs: Docs,
    preview: Option<(RunId, Instant)>,
    queue: VecDeque<(RunId, Value)>,
    /// When the last run detached (while none is attached).
    unused_since: Option<Instant>,
}

/// One server of the broker and the runs attached to it.
pub struct SharedServer {
    pub key: String,
    pub pid: u32,
    pub command: ServerCommand,
    settings: Option<Value>,
    to_server: mpsc::UnboundedSender<Value>,
    state: Mutex<MuxState>,
    gone: watch::Sender<Option<String>>,
    stop: Mutex<Option<tokio::sync::oneshot::Sender<ServerEnd>>>,
    /// The lowest memory ceiling in MiB any of its runs asked for
    /// (`u64::MAX`: none).
    ceiling_mb: AtomicU64,
}

fn read_disk(uri: &str) -> Option<String> {
    let path = crate::client::uri_path(uri)?;
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > crate::client::MAX_DOCUMENT_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

fn reply(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

impl SharedServer {
    /// Start the server of `command`; it ends when [`SharedServer::stop`]
    /// is called or the broker goes.
    pub fn start(
        key: String,
        command: ServerCommand,
        settings: Option<Value>,
    ) -> Result<Arc<SharedServer>, String> {
        let process = crate::client::spawn_server(&command)?;
        let (to_server, out_rx) = mpsc::unbounded_channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
        let server = Arc::new(SharedServer {
            key,
            pid: process.pgid,
            command,
            settings,
            to_server,
            state: Mutex::default(),
            gone: watch::channel(None).0,
            stop: Mutex::new(Some(stop_tx)),
            ceiling_mb: AtomicU64::new(u64::MAX),
        });
        tokio::spawn(write_server(process.stdin, out_rx, server.gone.subscribe()));
        tokio::spawn(read_server(server.clone(), process.stdout));
        tokio::spawn(watch_server(
            server.clone(),
            (process.child, process.own_dir),
            stop_rx,
        ));
        tracing::info!(pid = server.pid, server = %server.command.name, "broker started a shared server");
        Ok(server)
    }

    /// Why the server is gone, if it is.
    pub fn gone(&self) -> Option<String> {
        self.gone.borrow().clone()
    }

    pub fn subscribe_gone(&self) -> watch::Receiver<Option<String>> {
        self.gone.subscribe()
    }

    /// Stop the server for `why` (its runs are told, and their
    /// connections close).
    pub fn stop(&self, why: ServerEnd) {
        if let Some(tx) = self.stop.lock().expect("stop").take() {
            let _ = tx.send(why);
        }
    }

    /// Whether it was asked to stop (it may not be gone yet).
    pub fn stopping(&self) -> bool {
        self.stop.lock().expect("stop").is_none()
    }

    /// A run's memory ceiling: the lowest asked for is kept.
    pub fn lower_ceiling(&self, mb: Option<u64>) {
        if let Some(mb) = mb {
            self.ceiling_mb.fetch_min(mb, Ordering::SeqCst);
        }
    }

    /// The memory ceiling in MiB, if a run asked for one.
    pub fn ceiling_mb(&self) -> Option<u64> {
        Some(self.ceiling_mb.load(Ordering::SeqCst)).filter(|&mb| mb != u64::MAX)
    }

    /// How many runs are attached.
    pub fn runs(&self) -> usize {
        self.state.lock().expect("state").runs.len()
    }

    /// How long no run has been attached, if none is.
    pub fn unused_for(&self) -> Option<Duration> {
        self.state
            .lock()
            .expect("state")
            .unused_since
            .map(|t| t.elapsed())
    }

    fn to_server(&self, msg: Value) {
        let _ = self.to_server.send(msg);
    }

    /// Attach a run whose messages go to `tx`; log messages, registrations
    /// and progress made before it came are replayed to it.
    pub fn attach(&self, run: RunId, tx: mpsc::UnboundedSender<Value>) {
        let mut st = self.state.lock().expect("state");
        for log in &st.logs {
            let _ = tx.send(log.clone());
        }
        for (i, params) in st.registrations.iter().enumerate() {
            let _ = tx.send(json!({"jsonrpc": "2.0", "id": format!("broker-replay-{i}"),
                "method": "client/registerCapability", "params": params}));
        }
        if st.progress.is_empty() {
            for m in st.last_ended.iter().flatten() {
                let _ = tx.send(m.clone());
            }
        }
        for msgs in st.progress.values() {
            for m in msgs {
                let _ = tx.send(m.clone());
            }
        }
        if let Some(status) = &st.server_status {
            let _ = tx.send(status.clone());
        }
        st.runs.insert(run, tx);
        st.unused_since = None;
    }

    /// The run's connection ended.
    pub fn detach(&self, run: RunId) {
        let mut st = self.state.lock().expect("state");
        self.detach_locked(&mut st, run);
    }

    fn detach_locked(&self, st: &mut MuxState, run: RunId) {
        if st.runs.remove(&run).is_none() {
            return;
        }
        let cancelled: Vec<i64> = st
            .pending
            .iter()
            .filter(|(_, (r, _))| *r == run)
            .map(|(id, _)| *id)
            .collect();
        for id in cancelled {
            st.pending.remove(&id);
            self.to_server(
                json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}),
            );
        }
        let done: Vec<String> = st
            .asks
            .iter_mut()
            .filter_map(|(k, a)| {
                (a.waiting.remove(&run) && a.waiting.is_empty()).then(|| k.clone())
            })
            .collect();
        for k in done {
            self.finish_ask(st, &k);
        }
        for m in st.docs.detach(run, &read_disk) {
            self.to_server(m);
        }
        st.queue.retain(|(r, _)| *r != run);
        if st.preview.is_some_and(|(r, _)| r == run) {
            st.preview = None;
            self.drain(st);
        }
        if st.runs.is_empty() {
            st.unused_since = Some(Instant::now());
        }
    }

    /// A message of a run.
    pub fn from_run(&self, run: RunId, msg: Value) {
        let mut st = self.state.lock().expect("state");
        let method = msg.get("method").and_then(Value::as_str);
        // The broker's own questions never wait for another run's preview.
        let held_by_other = st.preview.is_some_and(|(r, _)| r != run)
            && !matches!(method, Some("$/broker/status" | super::RELOAD));
        if held_by_other && method.is_some() {
            if method == Some("$/cancelRequest") {
                let id = &msg["params"]["id"];
                let before = st.queue.len();
                st.queue
                    .retain(|(r, m)| !(*r == run && m.get("id") == Some(id)));
                if st.queue.len() < before {
                    return;
                }
            }
            st.queue.push_back((run, msg));
            return;
        }
        self.handle_run_msg(&mut st, run, msg);
    }

    fn send_run(st: &MuxState, run: RunId, msg: Value) {
        if let Some(tx) = st.runs.get(&run) {
            let _ = tx.send(msg);
        }
    }

    fn handle_run_msg(&self, st: &mut MuxState, run: RunId, mut msg: Value) {
        let (method, id) = method_and_id(&msg);
        match (method.as_deref(), id) {
            (None, Some(id)) => self.answer_ask(st, run, &id, msg),
            (Some("initialize"), Some(id)) => match &mut st.init {
                Init::Done(answer) => {
                    let mut answer = answer.clone();
                    answer["id"] = id;
                    Self::send_run(st, run, answer);
                }
                Init::Pending(_, waiting) => waiting.push((run, id)),
                Init::NotSent => {
                    let bid = self.next_id(st);
                    st.init = Init::Pending(bid, vec![(run, id)]);
                    msg["id"] = json!(bid);
                    msg["params"]["processId"] = json!(std::process::id());
                    self.to_server(msg);
                }
            },
            (Some("shutdown"), Some(id)) => Self::send_run(st, run, reply(&id, Value::Null)),
            (Some("$/broker/status"), Some(id)) => {
                let status = json!({"pid": self.pid, "runs": st.runs.len()});
                Self::send_run(st, run, reply(&id, status));
            }
            (Some(super::RELOAD), Some(id)) => {
                // Answered before the stop, so the answer is on its way
                // before the connection closes.
                let others = st.runs.len().saturating_sub(1);
                Self::send_run(
                    st,
                    run,
                    reply(&id, json!({"pid": self.pid, "others": others})),
                );
                tracing::info!(
                    run,
                    pid = self.pid,
                    "a run's reload restarts a shared server"
                );
                self.stop(ServerEnd::Reloaded);
            }
            (Some(_), Some(id)) => {
                let bid = self.next_id(st);
                st.pending.insert(bid, (run, id));
                msg["id"] = json!(bid);
                self.to_server(msg);
            }
            (Some("initialized"), None) if !st.initialized_sent => {
                st.initialized_sent = true;
                self.to_server(msg);
            }
            (Some("workspace/didChangeConfiguration"), None) if !st.configured => {
                st.configured = true;
                self.to_server(msg);
            }
            (Some("initialized" | "workspace/didChangeConfiguration"), None) => {}
            (Some("exit"), None) => self.detach_locked(st, run),
            (Some("$/cancelRequest"), None) => {
                let theirs = &msg["params"]["id"];
                let ours = st
                    .pending
                    .iter()
                    .find(|(_, (r, id))| *r == run && id == theirs)
                    .map(|(b, _)| *b);
                if let Some(b) = ours {
                    st.pending.remove(&b);
                    self.to_server(
                        json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": b}}),
                    );
                }
            }
            (Some("textDocument/didOpen" | "textDocument/didChange"), None) => {
                self.sync(st, run, &msg);
            }
            (Some("textDocument/didClose"), None) => {
                let uri = doc_uri(&msg);
                for m in st.docs.close(run, &uri, read_disk(&uri).as_deref()) {
                    self.to_server(m);
                }
                self.release_if_done(st, run);
            }
            (Some(_), None) => self.to_server(msg),
            (None, None) => {}
        }
    }

    fn next_id(&self, st: &mut MuxState) -> i64 {
        st.next_id += 1;
        st.next_id
    }

    fn sync(&self, st: &mut MuxState, run: RunId, msg: &Value) {
        let params = &msg["params"];
        let uri = doc_uri(msg);
        let version = params["textDocument"]["version"]
            .as_i64()
            .and_then(|v| i32::try_from(v).ok())
            .unwrap_or(0);
        let full_change = params["contentChanges"]
            .as_array()
            .and_then(|c| c.last())
            .filter(|c| c.get("range").is_none())
            .and_then(|c| c["text"].as_str());
        let Some(text) = params["textDocument"]["text"].as_str().or(full_change) else {
            tracing::warn!(%uri, "an incremental change reached the broker; forwarded as is");
            self.to_server(msg.clone());
            return;
        };
        let text = text.to_string();
        let language_id = params["textDocument"]["languageId"]
            .as_str()
            .map(str::to_string)
            .or_else(|| st.docs.language_of(&uri).map(str::to_string))
            .unwrap_or_default();
        let disk = read_disk(&uri);
        let out = st
            .docs
            .sync(run, &uri, (version, text, &language_id), disk.as_deref());
        for m in out.to_server {
            self.to_server(m);
        }
        if let Some(publish) = out.to_run {
            Self::send_run(
                st,
                run,
                json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": publish}),
            );
        }
        if st.docs.holds_speculation_of(run) {
            if st.preview.is_none() {
                st.preview = Some((run, Instant::now()));
            }
        } else {
            self.release_if_done(st, run);
        }
    }

    fn release_if_done(&self, st: &mut MuxState, run: RunId) {
        if st.preview.is_some_and(|(r, _)| r == run) && !st.docs.holds_speculation_of(run) {
            st.preview = None;
            self.drain(st);
        }
    }

    /// Handle the queued messages while no run holds speculation.
    fn drain(&self, st: &mut MuxState) {
        while st.preview.is_none() {
            let Some((run, msg)) = st.queue.pop_front() else {
                break;
            };
            if st.runs.contains_key(&run) {
                self.handle_run_msg(st, run, msg);
            }
        }
    }

    /// A run's speculation held longer than [`PREVIEW_HOLD`] while others
    /// wait: put back to the disk's text, and the others go on.
    pub fn expire_preview(&self) {
        let mut st = self.state.lock().expect("state");
        let Some((run, since)) = st.preview else {
            return;
        };
        if since.elapsed() < PREVIEW_HOLD || st.queue.is_empty() {
            return;
        }
        tracing::warn!(
            run,
            "a run held speculative text past the bound; reverted to the disk"
        );
        for m in st.docs.revert(run, &read_disk) {
            self.to_server(m);
        }
        st.preview = None;
        self.drain(&mut st);
    }

    fn answer_ask(&self, st: &mut MuxState, run: RunId, id: &Value, msg: Value) {
        let Some(key) = id.as_str() else { return };
        let Some(ask) = st.asks.get_mut(key) else {
            return; // a replayed registration's answer, or one too late
        };
        if ask.waiting.remove(&run) {
            ask.answers.push(msg);
        }
        if ask.waiting.is_empty() {
            let key = key.to_string();
            self.finish_ask(st, &key);
        }
    }

    /// Answer the server's request with the best of the runs' answers.
    fn finish_ask(&self, st: &mut MuxState, key: &str) {
        let Some(ask) = st.asks.remove(key) else {
            return;
        };
        let applied = |m: &&Value| m["result"]["applied"] == json!(true);
        let best = match ask.method.as_str() {
            "workspace/applyEdit" => ask.answers.iter().find(applied),
            _ => ask.answers.iter().find(|m| m.get("result").is_some()),
        }
        .or(ask.answers.first());
        let mut answer = match best {
            Some(m) => m.clone(),
            None if ask.method == "workspace/applyEdit" => reply(
                &Value::Null,
                json!({"applied": false, "failureReason": "no run is attached to apply it"}),
            ),
            None => reply(&Value::Null, Value::Null),
        };
        answer["id"] = ask.server_id;
        self.to_server(answer);
    }

    /// A message of the server.
    pub fn from_server(self: &Arc<Self>, mut msg: Value) {
        let mut st = self.state.lock().expect("state");
        let (method, id) = method_and_id(&msg);
        match (method.as_deref(), id) {
            (None, Some(id)) => {
                let Some(bid) = id.as_i64() else { return };
                if let Init::Pending(init_id, waiting) = &st.init {
                    if *init_id == bid {
                        let waiting = waiting.clone();
                        st.init = Init::Done(msg.clone());
                        for (run, theirs) in waiting {
                            msg["id"] = theirs;
                            Self::send_run(&st, run, msg.clone());
                        }
                        return;
                    }
                }
                if let Some((run, theirs)) = st.pending.remove(&bid) {
                    msg["id"] = theirs;
                    Self::send_run(&st, run, msg);
                }
            }
            (Some(m), Some(id)) => self.server_request(&mut st, m, id, msg),
            (Some("textDocument/publishDiagnostics"), None) => {
                let runs: Vec<RunId> = st.runs.keys().copied().collect();
                for (run, params) in st.docs.route_publish(&msg["params"], &runs) {
                    Self::send_run(
                        &st,
                        run,
                        json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params}),
                    );
                }
            }
            (Some(m), None) => {
                if m == "$/progress" {
                    if let Some(ended) = record_progress(&mut st.progress, &msg) {
                        st.last_ended = Some(ended);
                    }
                }
                if m == "experimental/serverStatus" {
                    st.server_status = Some(msg.clone());
                }
                if m == "window/logMessage" && msg["params"]["type"] != json!(1) {
                    if st.logs.len() == LOGS_KEPT {
                        st.logs.pop_front();
                    }
                    st.logs.push_back(msg.clone());
                }
                for tx in st.runs.values() {
                    let _ = tx.send(msg.clone());
                }
            }
            (None, None) => {}
        }
    }

    fn server_request(self: &Arc<Self>, st: &mut MuxState, method: &str, id: Value, msg: Value) {
        match method {
            "workspace/configuration" => {
                let items = msg["params"]["items"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let answer: Vec<Value> = items
                    .iter()
                    .map(|i| crate::client::setting(&self.settings, i["section"].as_str()))
                    .collect();
                self.to_server(reply(&id, Value::Array(answer)));
            }
            "window/workDoneProgress/create" => self.to_server(reply(&id, Value::Null)),
            "client/registerCapability" | "client/unregisterCapability" => {
                if method == "client/registerCapability" {
                    st.registrations.push(msg["params"].clone());
                } else {
                    let gone: Vec<&Value> = msg["params"]["unregisterations"]
                        .as_array()
                        .map(|a| a.iter().map(|u| &u["id"]).collect())
                        .unwrap_or_default();
                    st.registrations.retain(|r| {
                        !r["registrations"]
                            .as_array()
                            .is_some_and(|a| a.iter().any(|x| gone.contains(&&x["id"])))
                    });
                }
                st.next_ask += 1;
                let ask_id = format!("broker-replay-r{}", st.next_ask);
                for tx in st.runs.values() {
                    let mut m = msg.clone();
                    m["id"] = json!(ask_id);
                    let _ = tx.send(m);
                }
                self.to_server(reply(&id, Value::Null));
            }
            _ => {
                st.next_ask += 1;
                let key = format!("broker-{}", st.next_ask);
                st.asks.insert(
                    key.clone(),
                    Ask {
                        server_id: id,
                        method: method.to_string(),
                        waiting: st.runs.keys().copied().collect(),
                        answers: Vec::new(),
                    },
                );
                if st.runs.is_empty() {
                    self.finish_ask(st, &key);
                    return;
                }
                for tx in st.runs.values() {
                    let mut m = msg.clone();
                    m["id"] = json!(key);
                    let _ = tx.send(m);
                }
                let me = self.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(ASK_BOUND).await;
                    let mut st = me.state.lock().expect("state");
                    me.finish_ask(&mut st, &key);
                });
            }
        }
    }

    /// The server is gone: every run is told why and its connection closes.
    fn end_runs(&self, why: &ServerEnd) {
        let mut st = self.state.lock().expect("state");
        for tx in st.runs.values() {
            let _ = tx.send(json!({"jsonrpc": "2.0", "method": super::SERVER_GONE,
                                   "params": {"reason": why.describe(), "end": why}}));
        }
        st.runs.clear();
        st.unused_since = Some(Instant::now());
    }
}

/// A message's method (none for an answer) and id (none for a
/// notification).
fn method_and_id(msg: &Value) -> (Option<String>, Option<Value>) {
    let method = msg.get("method").and_then(Value::as_str);
    (method.map(str::to_string), msg.get("id").cloned())
}

fn doc_uri(msg: &Value) -> String {
    crate::client::normalize_uri(
        msg["params"]["textDocument"]["uri"]
            .as_str()
            .unwrap_or_default(),
    )
}

/// Keep a `$/progress` begun and not ended (its begin, its latest
/// report); at its end, its begin and end.
fn record_progress(progress: &mut BTreeMap<String, Vec<Value>>, msg: &Value) -> Option<Vec<Value>> {
    let token = msg["params"]["token"].to_string();
    match msg["params"]["value"]["kind"].as_str() {
        Some("begin") => {
            progress.insert(token, vec![msg.clone()]);
        }
        Some("report") => {
            if let Some(kept) = progress.get_mut(&token) {
                kept.truncate(1);
                kept.push(msg.clone());
            }
        }
        Some("end") => {
            let mut kept = progress.remove(&token)?;
            kept.truncate(1);
            kept.push(msg.clone());
            return Some(kept);
        }
        _ => {}
    }
    None
}

async fn write_server(
    mut stdin: tokio::process::ChildStdin,
    mut rx: mpsc::UnboundedReceiver<Value>,
    mut gone: watch::Receiver<Option<String>>,
) {
    loop {
        let msg = tokio::select! {
            biased;
            m = rx.recv() => m,
            _ = gone.wait_for(Option::is_some) => None,
        };
        let Some(msg) = msg else { break };
        if crate::transport::write_frame(&mut stdin, &msg)
            .await
            .is_err()
        {
            break;
        }
    }
}

async fn read_server(server: Arc<SharedServer>, stdout: tokio::process::ChildStdout) {
    let mut reader = tokio::io::BufReader::new(stdout);
    loop {
        match crate::transport::read_frame(&mut reader).await {
            Ok(Some(msg)) => server.from_server(msg),
            Err(crate::transport::FrameError::BadBody { .. }) => {}
            Ok(None) | Err(_) => break,
        }
    }
}

async fn watch_server(
    server: Arc<SharedServer>,
    (mut child, own_dir): (
        tool_core::process::ChildProcess,
        Option<tool_core::scratch::ScratchDir>,
    ),
    stop: tokio::sync::oneshot::Receiver<ServerEnd>,
) {
    let why = tokio::select! {
        status = child.wait() => ServerEnd::Exited { how: match status {
            Ok(s) => tool_core::process::describe_exit(s),
            Err(e) => format!("wait failed: {e}"),
        }},
        why = stop => {
            child.terminate(Duration::from_millis(500)).await;
            why.unwrap_or(ServerEnd::Stopped)
        }
    };
    drop(own_dir);
    server.end_runs(&why);
    server.gone.send_replace(Some(why.describe()));
}
