//! What the in-process backends share (Node.js under its inspector, the
//! JVM under its JDWP agent): each is a DAP adapter that runs inside this
//! process on one end of an in-memory pipe, and this module is that end's
//! plumbing — reading the session's requests, writing responses and
//! events with their sequence numbers, hanging up — and the debuggee's
//! process spec, which both start the same way.
//!
//! Invariants: messages are written whole, one at a time, in the order
//! they are sent; once the session's side is gone (or hung up) writes are
//! dropped, never an error the backend must handle.

use super::LaunchPlan;
use serde_json::{json, Value};
use std::ffi::OsString;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tool_core::process::{ChildSpec, Io};

/// A debuggee under an in-process backend, and the DAP client that
/// drives it.
pub(crate) struct Started {
    /// The debuggee, when we started it (not when attaching to one).
    pub child: Option<tool_core::process::ChildProcess>,
    pub client: crate::transport::DapClient,
    pub events: tokio::sync::mpsc::UnboundedReceiver<crate::protocol::AdapterEvent>,
    pub tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// The session's DAP client on `ours`, one end of the in-memory pipe
/// whose other end the backend serves.
pub(crate) fn started(
    child: Option<tool_core::process::ChildProcess>,
    ours: DuplexStream,
    tasks: Vec<tokio::task::JoinHandle<()>>,
) -> Started {
    let (read, write) = tokio::io::split(ours);
    let (client, events) = crate::transport::DapClient::start(BufReader::new(read), write);
    Started {
        child,
        client,
        events,
        tasks,
    }
}

/// One DAP request from the session.
#[derive(Debug)]
pub(crate) struct Request {
    pub seq: u64,
    pub command: String,
    pub arguments: Value,
}

/// The next request the session sent; `None` once its side closed.
pub(crate) async fn next_request(
    reader: &mut BufReader<ReadHalf<DuplexStream>>,
) -> Option<Request> {
    while let Ok(Some(frame)) = tool_core::framing::read_frame(reader).await {
        let Ok(msg) = serde_json::from_slice::<Value>(&frame) else {
            continue;
        };
        if msg.get("type").and_then(Value::as_str) != Some("request") {
            continue;
        }
        return Some(Request {
            seq: msg.get("seq").and_then(Value::as_u64).unwrap_or(0),
            command: msg
                .get("command")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            arguments: msg.get("arguments").cloned().unwrap_or(Value::Null),
        });
    }
    None
}

/// The backend's writing side of the DAP stream.
pub(crate) struct DapSide {
    out: tokio::sync::Mutex<Option<WriteHalf<DuplexStream>>>,
    seq: AtomicU64,
}

impl DapSide {
    pub(crate) fn new(write: WriteHalf<DuplexStream>) -> Self {
        DapSide {
            out: tokio::sync::Mutex::new(Some(write)),
            seq: AtomicU64::new(1),
        }
    }

    async fn write(&self, mut message: Value) {
        message["seq"] = json!(self.seq.fetch_add(1, Ordering::Relaxed));
        let frame = crate::transport::encode_frame(&message);
        let mut out = self.out.lock().await;
        if let Some(w) = out.as_mut() {
            if w.write_all(&frame).await.is_err() {
                *out = None;
            }
        }
    }

    /// The response to request `seq`: its body, or why it failed.
    pub(crate) async fn respond(&self, seq: u64, command: &str, answer: Result<Value, String>) {
        let message = match answer {
            Ok(body) => json!({"type": "response", "request_seq": seq, "success": true,
                "command": command, "body": body}),
            Err(why) => json!({"type": "response", "request_seq": seq, "success": false,
                "command": command, "message": why}),
        };
        self.write(message).await;
    }

    pub(crate) async fn event(&self, event: &str, body: Value) {
        self.write(json!({"type": "event", "event": event, "body": body}))
            .await;
    }

    /// End the DAP stream, as an adapter process's stdout closes when it
    /// exits: the session reads it as the adapter gone.
    pub(crate) async fn hang_up(&self) {
        if let Some(mut w) = self.out.lock().await.take() {
            let _ = w.shutdown().await;
        }
    }
}

/// The debuggee's process: `line` run in `cwd` with the run's `PATH`, the
/// adapter's and the plan's environment and the launch's `env`, its three
/// standard streams piped.
pub(crate) fn debuggee_spec(plan: &LaunchPlan, line: &[OsString], cwd: &Path) -> ChildSpec {
    let mut spec = ChildSpec::new(&line[0])
        .args(&line[1..])
        .cwd(cwd)
        .env("PATH", &plan.search_path)
        .stdin(Io::Pipe)
        .stdout(Io::Pipe)
        .stderr(Io::Pipe);
    for (k, v) in plan.adapter.env.iter().chain(&plan.env) {
        spec = spec.env(k, v);
    }
    for (k, v) in plan
        .arguments
        .get("env")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(v) = v.as_str() {
            spec = spec.env(k, v);
        }
    }
    spec
}

/// Write the launch's `stdin` text into the debuggee's standard input,
/// then close it (at once, without text): end of file either way.
pub(crate) fn feed_stdin(
    text: Option<String>,
    stdin: tokio::process::ChildStdin,
) -> Option<tokio::task::JoinHandle<()>> {
    let text = text?;
    Some(tokio::spawn(async move {
        let mut stdin = stdin;
        // A program that exits before reading it all closes the pipe.
        let _ = stdin.write_all(text.as_bytes()).await;
    }))
}

/// The exception filters a backend's `initialize` answer offers, by id:
/// its test checks they are the ones its catalog entry lists.
#[cfg(test)]
pub(crate) fn offered_filters(capabilities: &Value) -> Vec<String> {
    capabilities["exceptionBreakpointFilters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["filter"].as_str().map(String::from))
        .collect()
}

/// The exception filters the built-in catalog lists for adapter `id`.
#[cfg(test)]
pub(crate) fn catalog_filters(id: &str) -> Vec<String> {
    crate::adapters::builtin()
        .into_iter()
        .find(|s| s.id == id)
        .map(|s| s.exception_filters.into_iter().map(|f| f.id).collect())
        .unwrap_or_default()
}
