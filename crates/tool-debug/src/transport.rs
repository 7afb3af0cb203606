//! DAP framing and request bookkeeping, apart from what the requests mean.
//!
//! One reader task decodes `Content-Length` frames ([`tool_core::framing`],
//! strict: a broken header ends the connection) from the adapter (its
//! stdout, or a TCP stream for delve), hands each response to the request
//! waiting for it, forwards events in order on a channel, and answers reverse
//! requests itself. Every wait for a reply is bounded; when the stream ends
//! every pending request is failed with why, so nothing waits forever.

use crate::protocol::{AdapterEvent, Incoming, Response};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tool_core::framing::read_frame;

/// Why a request got no usable answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DapError {
    /// The adapter answered `success: false`.
    #[error("the adapter refused `{command}`: {message}")]
    Refused { command: String, message: String },
    #[error("the adapter did not answer `{command}` within {} ms", .after.as_millis())]
    Timeout { command: String, after: Duration },
    /// The stream ended (the adapter exited or closed the connection).
    #[error("the connection to the adapter is closed ({0})")]
    Closed(String),
    #[error("the adapter's answer to `{command}` could not be read: {why}")]
    BadBody { command: String, why: String },
}

/// One message as a frame ([`tool_core::framing`]).
pub fn encode_frame(message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).expect("JSON values always serialize");
    tool_core::framing::encode_frame(&body)
}

type Writer = Box<dyn AsyncWrite + Send + Unpin>;
type Pending = HashMap<u64, oneshot::Sender<Result<Response, DapError>>>;

struct Inner {
    writer: tokio::sync::Mutex<Writer>,
    seq: AtomicU64,
    pending: Mutex<Pending>,
    /// Set once the stream ended, with why.
    closed: Mutex<Option<String>>,
}

/// The client side of one DAP connection. Cheap to clone.
#[derive(Clone)]
pub struct DapClient {
    inner: Arc<Inner>,
    reader: Arc<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for DapClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DapClient").finish_non_exhaustive()
    }
}

impl DapClient {
    /// Start reading `reader`; events arrive in order on the returned channel,
    /// which closes when the stream ends.
    pub fn start<R, W>(reader: R, writer: W) -> (DapClient, mpsc::UnboundedReceiver<AdapterEvent>)
    where
        R: AsyncBufRead + Unpin + Send + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let inner = Arc::new(Inner {
            writer: tokio::sync::Mutex::new(Box::new(writer)),
            seq: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            closed: Mutex::new(None),
        });
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(read_loop(reader, inner.clone(), events_tx));
        (
            DapClient {
                inner,
                reader: Arc::new(task),
            },
            events_rx,
        )
    }

    /// Why the stream ended, if it did.
    pub fn closed(&self) -> Option<String> {
        self.inner.closed.lock().expect("closed lock").clone()
    }

    /// Send a request; the returned future waits (bounded) for its response.
    /// Sending happens before this returns, so the caller may go on to other
    /// requests and collect this reply later (launch does).
    pub async fn send(&self, command: &str, arguments: Value) -> Result<PendingReply, DapError> {
        if let Some(why) = self.closed() {
            return Err(DapError::Closed(why));
        }
        let seq = self.inner.seq.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.inner
            .pending
            .lock()
            .expect("pending lock")
            .insert(seq, tx);
        let frame = encode_frame(&json!({
            "seq": seq,
            "type": "request",
            "command": command,
            "arguments": arguments,
        }));
        tracing::trace!(seq, command, "dap request");
        if let Err(e) = self.write(&frame).await {
            self.inner
                .pending
                .lock()
                .expect("pending lock")
                .remove(&seq);
            return Err(DapError::Closed(format!(
                "writing to the adapter failed: {e}"
            )));
        }
        Ok(PendingReply {
            command: command.to_string(),
            rx,
        })
    }

    /// Send a request and wait up to `timeout` for a successful reply body.
    pub async fn request(
        &self,
        command: &str,
        arguments: Value,
        timeout: Duration,
    ) -> Result<Value, DapError> {
        self.send(command, arguments).await?.wait(timeout).await
    }

    /// A typed request: `dap-types` arguments in, its response type out.
    pub async fn typed<R: dap_types::requests::Request>(
        &self,
        arguments: &R::Arguments,
        timeout: Duration,
    ) -> Result<R::Response, DapError> {
        let body = self
            .request(R::COMMAND, request_arguments(arguments), timeout)
            .await?;
        decode_body(R::COMMAND, body)
    }

    /// Treat the connection as closed (the adapter process is gone even if
    /// a child of it still holds the pipe open): fail every pending request.
    pub fn close(&self, why: &str) {
        close_with(&self.inner, why.to_string());
    }

    async fn write(&self, frame: &[u8]) -> std::io::Result<()> {
        let mut w = self.inner.writer.lock().await;
        w.write_all(frame).await?;
        w.flush().await
    }
}

impl Drop for DapClient {
    fn drop(&mut self) {
        // The last clone stops the reader.
        if Arc::strong_count(&self.reader) == 1 {
            self.reader.abort();
        }
    }
}

/// A reply not yet collected.
pub struct PendingReply {
    command: String,
    rx: oneshot::Receiver<Result<Response, DapError>>,
}

impl PendingReply {
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Wait up to `timeout` for the reply; its body on success.
    pub async fn wait(self, timeout: Duration) -> Result<Value, DapError> {
        let command = self.command;
        match tokio::time::timeout(timeout, self.rx).await {
            Err(_) => Err(DapError::Timeout {
                command,
                after: timeout,
            }),
            Ok(Err(_)) => Err(DapError::Closed("the reader stopped".into())),
            Ok(Ok(Err(e))) => Err(e),
            Ok(Ok(Ok(r))) if r.success => Ok(r.body),
            Ok(Ok(Ok(r))) => Err(DapError::Refused {
                command,
                message: refusal_text(&r),
            }),
        }
    }
}

/// The adapter's words for a refusal: `message`, or the formatted error body.
fn refusal_text(r: &Response) -> String {
    let formatted = r
        .body
        .get("error")
        .and_then(|e| e.get("format"))
        .and_then(Value::as_str);
    match (r.message.as_deref(), formatted) {
        (_, Some(f)) => f.to_string(),
        (Some(m), None) if !m.is_empty() => m.to_string(),
        _ => "no reason given".to_string(),
    }
}

/// Typed arguments as sent: `dap-types` writes an unset optional field as
/// `null`, which adapters may refuse where the schema says "absent", so
/// nulls inside objects are left out; no arguments at all (`()`) are `{}`.
pub fn request_arguments<T: Serialize>(v: &T) -> Value {
    fn strip_nulls(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.retain(|_, v| !v.is_null());
                map.values_mut().for_each(strip_nulls);
            }
            Value::Array(items) => items.iter_mut().for_each(strip_nulls),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(v).expect("dap-types values serialize");
    if value.is_null() {
        return json!({});
    }
    strip_nulls(&mut value);
    value
}

pub fn decode_body<T: DeserializeOwned>(command: &str, body: Value) -> Result<T, DapError> {
    // A response type of `()` expects no body; adapters send `null` or `{}`.
    let body = if body.is_null() { json!({}) } else { body };
    serde_json::from_value(body.clone())
        .or_else(|first| serde_json::from_value(Value::Null).map_err(|_| first))
        .map_err(|e| DapError::BadBody {
            command: command.to_string(),
            why: e.to_string(),
        })
}

async fn read_loop<R>(mut reader: R, inner: Arc<Inner>, events: mpsc::UnboundedSender<AdapterEvent>)
where
    R: AsyncBufRead + Unpin + Send + 'static,
{
    let why = loop {
        let frame = match read_frame(&mut reader).await {
            Ok(Some(f)) => f,
            Ok(None) => break "the adapter closed its output".to_string(),
            Err(e) => break format!("reading from the adapter failed: {e}"),
        };
        let Ok(value) = serde_json::from_slice::<Value>(&frame) else {
            tracing::warn!(len = frame.len(), "adapter sent a frame that is not JSON");
            continue;
        };
        match Incoming::from_value(value) {
            Some(Incoming::Response(r)) => {
                let waiter = inner
                    .pending
                    .lock()
                    .expect("pending lock")
                    .remove(&r.request_seq);
                if let Some(tx) = waiter {
                    let _ = tx.send(Ok(r));
                }
            }
            Some(Incoming::Event(e)) => {
                let _ = events.send(*e);
            }
            Some(Incoming::Request {
                seq,
                command,
                arguments: _,
            }) => {
                // We advertise neither runInTerminal nor startDebugging, so a
                // well-behaved adapter never asks; one that does gets a clean
                // refusal it can fall back from instead of waiting forever.
                tracing::debug!(%command, "refusing reverse request");
                let reply = encode_frame(&json!({
                    "seq": inner.seq.fetch_add(1, Ordering::Relaxed),
                    "type": "response",
                    "request_seq": seq,
                    "success": false,
                    "command": command,
                    "message": format!("this client does not support `{command}`; run the debuggee in the adapter's own console"),
                }));
                let mut w = inner.writer.lock().await;
                let _ = w.write_all(&reply).await;
                let _ = w.flush().await;
            }
            None => tracing::warn!("adapter sent a message that is not DAP"),
        }
    };
    tracing::debug!(%why, "dap stream ended");
    close_with(&inner, why);
}

fn close_with(inner: &Inner, why: String) {
    {
        let mut closed = inner.closed.lock().expect("closed lock");
        if closed.is_none() {
            *closed = Some(why.clone());
        }
    }
    let waiters: Vec<_> = inner
        .pending
        .lock()
        .expect("pending lock")
        .drain()
        .collect();
    for (_, tx) in waiters {
        let _ = tx.send(Err(DapError::Closed(why.clone())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    #[tokio::test]
    async fn a_frame_without_a_length_ends_the_connection_and_says_why() {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (our_r, our_w) = tokio::io::split(ours);
        let (client, _events) = DapClient::start(BufReader::new(our_r), our_w);
        let (_their_r, mut their_w) = tokio::io::split(theirs);
        let pending = client.send("threads", json!({})).await.unwrap();
        their_w
            .write_all(b"Content-Type: x\r\n\r\n{}")
            .await
            .unwrap();
        let err = pending.wait(Duration::from_secs(5)).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "the connection to the adapter is closed (reading from the adapter failed: \
             malformed frame header: header without Content-Length)"
        );
    }

    #[tokio::test]
    async fn replies_reach_their_request_and_a_closed_stream_fails_the_rest() {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (our_r, our_w) = tokio::io::split(ours);
        let (client, mut events) = DapClient::start(BufReader::new(our_r), our_w);
        let (their_r, mut their_w) = tokio::io::split(theirs);
        let mut their_r = BufReader::new(their_r);

        let first = client.send("threads", json!({})).await.unwrap();
        let second = client.send("evaluate", json!({})).await.unwrap();
        let req: Value =
            serde_json::from_slice(&read_frame(&mut their_r).await.unwrap().unwrap()).unwrap();
        assert_eq!(req["command"], "threads");
        // The answer to the first comes after an event and an unknown event.
        for m in [
            json!({"seq": 1, "type": "event", "event": "somethingNew", "body": {}}),
            json!({"seq": 2, "type": "request", "command": "runInTerminal", "arguments": {}}),
            json!({"seq": 3, "type": "response", "request_seq": req["seq"], "success": true,
                   "command": "threads", "body": {"threads": [{"id": 1, "name": "main"}]}}),
        ] {
            their_w.write_all(&encode_frame(&m)).await.unwrap();
        }
        let body = first.wait(Duration::from_secs(5)).await.unwrap();
        assert_eq!(body["threads"][0]["name"], "main");
        assert!(matches!(
            events.recv().await,
            Some(AdapterEvent::Other { .. })
        ));
        // The reverse request was refused, not ignored.
        let _evaluate: Value =
            serde_json::from_slice(&read_frame(&mut their_r).await.unwrap().unwrap()).unwrap();
        let refusal: Value =
            serde_json::from_slice(&read_frame(&mut their_r).await.unwrap().unwrap()).unwrap();
        assert_eq!(refusal["type"], "response");
        assert_eq!(refusal["success"], false);
        assert_eq!(refusal["request_seq"], 2);

        drop(their_w);
        drop(their_r);
        let err = second.wait(Duration::from_secs(5)).await.unwrap_err();
        assert!(matches!(err, DapError::Closed(_)), "{err}");
        assert!(client.closed().is_some());
        let err = client
            .request("threads", json!({}), Duration::from_secs(1))
            .await
            .unwrap_err();
        assert!(matches!(err, DapError::Closed(_)), "{err}");
    }

    #[test]
    fn typed_arguments_leave_unset_fields_out() {
        let args = dap_types::StackTraceArguments {
            thread_id: 1,
            start_frame: Some(0),
            levels: None,
            format: None,
        };
        assert_eq!(
            request_arguments(&args),
            json!({"threadId": 1, "startFrame": 0})
        );
        assert_eq!(request_arguments(&()), json!({}));
    }

    #[tokio::test]
    async fn an_unanswered_request_times_out() {
        let (ours, _theirs) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(ours);
        let (client, _events) = DapClient::start(BufReader::new(r), w);
        let err = client
            .request("threads", json!({}), Duration::from_millis(50))
            .await
            .unwrap_err();
        assert!(matches!(err, DapError::Timeout { .. }), "{err}");
    }
}
