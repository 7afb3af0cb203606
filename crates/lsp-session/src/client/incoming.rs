//! What the server sends unasked, as the connection hands it over: its
//! own requests answered, its notifications (diagnostics, progress, logs)
//! recorded, and why its stream ended.

use super::activity::Said;
use super::{
    json, normalize_uri, signals, Arc, Duration, Instant, Ordering, ProgressRun, Published, Shared,
    Signal, Value, PROGRESS_HISTORY,
};
use crate::jsonrpc::{Handler, JsonRpc, StreamEnd};

/// Look up `section` (`a.b.c`) in the settings tree.
pub fn setting(settings: &Option<Value>, section: Option<&str>) -> Value {
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

/// The LSP side of the connection to one server process.
pub(super) struct Session {
    shared: Arc<Shared>,
    /// The server's process group, when the process is ours to kill.
    pgid: Option<u32>,
}

impl Session {
    pub(super) fn new(shared: Arc<Shared>, pgid: Option<u32>) -> Session {
        Session { shared, pgid }
    }
}

impl Handler for Session {
    fn request(&self, method: &str, params: &Value) -> Result<Value, (i64, String)> {
        answer_server_request(&self.shared, method, params)
    }

    fn notification(&self, method: &str, params: Value) {
        handle_notification(&self.shared, method, params);
    }

    async fn ended(&self, conn: &JsonRpc, end: StreamEnd) -> String {
        match end {
            StreamEnd::Closed if self.pgid.is_none() => {
                match self.shared.broker_end.lock().expect("broker end").clone() {
                    Some(why) => format!("the shared server ended ({})", why.describe()),
                    None => "the connection to the shared-server broker closed".to_string(),
                }
            }
            StreamEnd::Broken(e) if self.pgid.is_none() => {
                format!("the broker's stream broke ({e})")
            }
            StreamEnd::Closed => {
                // Prefer the exit watcher's reason, which has the exit status.
                let mut closed = conn.subscribe_closed();
                let _ = tokio::time::timeout(
                    Duration::from_millis(500),
                    closed.wait_for(Option::is_some),
                )
                .await;
                format!("it closed its output{}", self.shared.stderr_tail())
            }
            StreamEnd::Broken(e) => {
                // The stream cannot be resynchronized: drop the server (its
                // keeper then ends what it started).
                if let Some(pgid) = self.pgid {
                    let _ = signals::send_group(pgid, Signal::Kill);
                }
                format!("it broke the protocol ({e}) and was killed")
            }
        }
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
            shared
                .registrations
                .lock()
                .expect("registrations")
                .register(params);
            // A diagnostics wait re-checks: pull may be offered now.
            shared.diag_seq.send_modify(|s| *s += 1);
            Ok(Value::Null)
        }
        "client/unregisterCapability" => {
            shared
                .registrations
                .lock()
                .expect("registrations")
                .unregister(params);
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
        "workspace/diagnostic/refresh" => {
            shared.refreshes.send_modify(|s| *s += 1);
            Ok(Value::Null)
        }
        m if m.ends_with("/refresh") => Ok(Value::Null),
        _ => Err((
            -32601,
            format!("method not supported by this client: {method}"),
        )),
    }
}

/// A `textDocument/publishDiagnostics`: kept as the document's latest
/// (the one it replaces among the earlier ones), its sources noted on the
/// progress runs it may belong to.
fn on_publish(shared: &Shared, params: &Value) {
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
    shared.delivered.store(true, Ordering::Relaxed);
    let diagnostics: Vec<lsp_types::Diagnostic> = params
        .get("diagnostics")
        .cloned()
        .and_then(|d| serde_json::from_value(d).ok())
        .unwrap_or_default();
    let uri = normalize_uri(uri);
    {
        // Each run still open, and each ended one no later run of
        // its token has followed (rust-analyzer publishes a check's
        // results during its run or just after its end).
        let mut a = shared.activity.lock().expect("activity");
        let latest: Vec<bool> = (0..a.history.len())
            .map(|i| {
                let token = &a.history[i].token;
                !a.history[i + 1..].iter().any(|r| &r.token == token)
            })
            .collect();
        for (run, latest) in a.history.iter_mut().zip(latest) {
            if run.ended.is_none() || latest {
                let sources = diagnostics.iter().filter_map(|d| d.source.clone());
                run.sources_published.extend(sources);
            }
        }
    }
    let mut store = shared.diagnostics.lock().expect("diagnostics");
    let seq = *shared.diag_seq.borrow() + 1;
    let replaced = store.insert(
        uri.clone(),
        Published {
            version,
            diagnostics,
            seq,
            at: Instant::now(),
        },
    );
    drop(store);
    if let Some(old) = replaced {
        let mut earlier = shared.earlier.lock().expect("earlier");
        let kept = earlier.entry(uri).or_default();
        if kept.len() >= super::EARLIER_PUBLISHES {
            kept.pop_front();
        }
        kept.push_back(old);
    }
    shared.diag_seq.send_replace(seq);
}

fn handle_notification(shared: &Shared, method: &str, params: Value) {
    match method {
        "textDocument/publishDiagnostics" => on_publish(shared, &params),
        crate::broker_link::SERVER_GONE => {
            let end = serde_json::from_value(params["end"].clone()).unwrap_or_else(|_| {
                crate::broker_link::ServerEnd::Exited {
                    how: params["reason"]
                        .as_str()
                        .unwrap_or("no reason given")
                        .into(),
                }
            });
            *shared.broker_end.lock().expect("broker end") = Some(end);
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
                    let diagnosis = shared
                        .diagnosis_progress
                        .as_deref()
                        .is_some_and(|p| title.starts_with(p));
                    if !a.busy() && !diagnosis {
                        a.busy_since = Some(Instant::now());
                    }
                    a.ever_reported |= !diagnosis;
                    if a.history.len() >= PROGRESS_HISTORY {
                        a.history.remove(0);
                    }
                    a.history.push(ProgressRun {
                        token: token.clone(),
                        title: title.clone(),
                        begun: Instant::now(),
                        ended: None,
                        reported: false,
                        sources_published: std::collections::BTreeSet::new(),
                    });
                    let message = value
                        .get("message")
                        .and_then(Value::as_str)
                        .map(String::from);
                    if !diagnosis {
                        a.tokens.insert(token, Said { title, message });
                    }
                }
                Some("report") => {
                    if let Some(run) = a
                        .history
                        .iter_mut()
                        .rev()
                        .find(|r| r.token == token && r.ended.is_none())
                    {
                        run.reported = true;
                    }
                    if let (Some(said), Some(msg)) = (
                        a.tokens.get_mut(&token),
                        value.get("message").and_then(Value::as_str),
                    ) {
                        said.message = Some(msg.to_string());
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
        "window/logMessage" | "window/showMessage" => {
            let said = params.get("message").and_then(Value::as_str).unwrap_or("");
            if params.get("type").and_then(Value::as_i64) == Some(1) {
                let mut logged = shared.errors_logged.lock().expect("errors_logged");
                if logged.len() >= super::ERRORS_LOGGED {
                    logged.pop_front();
                }
                logged.push_back((Instant::now(), said.to_string()));
            }
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
