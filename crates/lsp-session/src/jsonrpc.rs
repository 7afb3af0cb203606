//! A JSON-RPC connection over any byte stream pair: request ids, pending
//! replies, the peer's requests answered, its notifications handed over, and
//! how the connection ends. Nothing here knows a process or the LSP state;
//! [`crate::client`] starts a server and puts its session on top.
//!
//! Invariants kept here:
//! - every request has a timeout, and an expired one leaves no pending entry
//!   and is cancelled with `$/cancelRequest` so the peer stops working on it;
//! - when the connection closes (end of stream, a broken frame header, a
//!   failed write, or [`JsonRpc::close`]), every pending request fails at
//!   once with the first reason, and every later request fails the same way;
//! - every request of the peer gets an answer (the [`Handler`]'s, or its
//!   error), since an unanswered one can stall a server forever;
//! - one task owns the writer, so frames never interleave.

use crate::transport::{self, FrameError};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};

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
    /// The answer came, but not in the shape the request's type says.
    #[error("the server's answer to `{method}` could not be read: {error}")]
    Malformed { method: String, error: String },
}

pub type Reply = Result<Value, RequestError>;

/// How the incoming stream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// A clean end of stream: the peer closed its output.
    Closed,
    /// A broken frame header or a failed read: the stream cannot be
    /// resynchronized.
    Broken(String),
}

/// What the connection asks of its owner.
pub trait Handler: Send + Sync + 'static {
    /// Answer a request of the peer: its result, or an error code and message.
    fn request(&self, method: &str, params: &Value) -> Result<Value, (i64, String)>;
    /// Take a notification of the peer.
    fn notification(&self, method: &str, params: Value);
    /// The incoming stream ended: the reason every pending and later
    /// request fails with (unless the connection was closed already).
    fn ended(&self, conn: &JsonRpc, end: StreamEnd) -> impl Future<Output = String> + Send;
}

struct Inner {
    /// Who the peer is, for the trace.
    name: String,
    outgoing: mpsc::UnboundedSender<Value>,
    next_id: AtomicI64,
    pending: Mutex<HashMap<i64, (String, oneshot::Sender<Reply>)>>,
    closed: watch::Sender<Option<String>>,
}

/// One JSON-RPC connection; clones share it.
#[derive(Clone)]
pub struct JsonRpc {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for JsonRpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonRpc")
            .field("name", &self.inner.name)
            .field("closed", &self.closed())
            .finish_non_exhaustive()
    }
}

impl JsonRpc {
    /// Start the connection: a writer task owns `writer`, a reader task
    /// reads `reader`, routes replies to their requests and hands the rest
    /// to `handler`. Both end when the stream does.
    pub fn start<R, W, H>(name: &str, reader: R, writer: W, handler: H) -> JsonRpc
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
        H: Handler,
    {
        let (out_tx, out_rx) = mpsc::unbounded_channel::<Value>();
        let conn = JsonRpc {
            inner: Arc::new(Inner {
                name: name.to_string(),
                outgoing: out_tx,
                next_id: AtomicI64::new(1),
                pending: Mutex::default(),
                closed: watch::channel(None).0,
            }),
        };
        tokio::spawn(write_loop(conn.clone(), writer, out_rx));
        tokio::spawn(read_loop(conn.clone(), reader, handler));
        conn
    }

    /// Why the connection closed, if it did.
    pub fn closed(&self) -> Option<String> {
        self.inner.closed.borrow().clone()
    }

    /// Changes when the connection closes.
    pub fn subscribe_closed(&self) -> watch::Receiver<Option<String>> {
        self.inner.closed.subscribe()
    }

    /// How many requests await their reply.
    pub fn pending(&self) -> usize {
        self.inner.pending.lock().expect("pending").len()
    }

    /// Close the connection: the first reason stays, and every pending
    /// request fails with it.
    pub fn close(&self, reason: String) {
        let mut first = false;
        self.inner.closed.send_if_modified(|c| {
            if c.is_none() {
                *c = Some(reason.clone());
                first = true;
                true
            } else {
                false
            }
        });
        if first {
            tracing::info!(server = %self.inner.name, %reason, "language server gone");
        }
        let why = self.closed().unwrap_or(reason);
        let drained: Vec<_> = self
            .inner
            .pending
            .lock()
            .expect("pending")
            .drain()
            .collect();
        for (_, (_, tx)) in drained {
            let _ = tx.send(Err(RequestError::Gone(why.clone())));
        }
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn send(&self, msg: Value) {
        let _ = self.inner.outgoing.send(msg);
    }

    /// Send a request and wait for its answer, at most `timeout`.
    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Reply {
        if let Some(why) = self.closed() {
            return Err(RequestError::Gone(why));
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.inner
            .pending
            .lock()
            .expect("pending")
            .insert(id, (method.to_string(), tx));
        // Checked again: the connection may have closed between the check
        // and the insert.
        if let Some(why) = self.closed() {
            self.inner.pending.lock().expect("pending").remove(&id);
            return Err(RequestError::Gone(why));
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(RequestError::Gone(
                self.closed().unwrap_or_else(|| "the session ended".into()),
            )),
            Err(_) => {
                self.inner.pending.lock().expect("pending").remove(&id);
                self.notify("$/cancelRequest", json!({ "id": id }));
                Err(RequestError::TimedOut {
                    method: method.to_string(),
                    after: timeout,
                })
            }
        }
    }

    /// A reply of the peer: to the request that waits for it, if one does.
    fn route_reply(&self, id: &Value, msg: &Value) {
        let Some(id) = id.as_i64() else { return };
        let Some((method, tx)) = self.inner.pending.lock().expect("pending").remove(&id) else {
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

    fn dispatch(&self, handler: &impl Handler, msg: Value) {
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id");
        match (method, id) {
            (None, Some(id)) => self.route_reply(id, &msg),
            (Some(method), Some(id)) => {
                let params = msg.get("params").cloned().unwrap_or(Value::Null);
                let reply = match handler.request(method, &params) {
                    Ok(v) => json!({"jsonrpc": "2.0", "id": id, "result": v}),
                    Err((code, message)) => {
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                    }
                };
                self.send(reply);
            }
            (Some(method), None) => {
                let params = msg.get("params").cloned().unwrap_or(Value::Null);
                handler.notification(method, params);
            }
            (None, None) => {}
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    conn: JsonRpc,
    mut writer: W,
    mut out_rx: mpsc::UnboundedReceiver<Value>,
) {
    // `conn` holds a sender, so the channel never ends on its own: the loop
    // ends when the connection closes (what was queued before goes first).
    let mut closed = conn.subscribe_closed();
    loop {
        let msg = tokio::select! {
            biased;
            msg = out_rx.recv() => msg,
            _ = closed.wait_for(Option::is_some) => None,
        };
        let Some(msg) = msg else { break };
        tracing::trace!(server = %conn.inner.name, %msg, "frame to the server");
        if let Err(e) = transport::write_frame(&mut writer, &msg).await {
            conn.close(format!("writing to it failed: {e}"));
            break;
        }
    }
}

async fn read_loop<R: AsyncRead + Unpin, H: Handler>(conn: JsonRpc, reader: R, handler: H) {
    let mut reader = tokio::io::BufReader::new(reader);
    let end = loop {
        match transport::read_frame(&mut reader).await {
            Ok(Some(msg)) => {
                tracing::trace!(server = %conn.inner.name, %msg, "frame from the server");
                conn.dispatch(&handler, msg);
            }
            Ok(None) => break StreamEnd::Closed,
            // A server that exits while writing ends its stream inside a
            // frame: it went away, it did not break the protocol.
            Err(FrameError::Truncated(_)) => break StreamEnd::Closed,
            Err(FrameError::BadBody { error, excerpt }) => {
                tracing::warn!(server = %conn.inner.name, %error, %excerpt, "skipped a frame that is not JSON");
            }
            Err(e) => break StreamEnd::Broken(e.to_string()),
        }
    };
    let reason = handler.ended(&conn, end).await;
    conn.close(reason);
}
