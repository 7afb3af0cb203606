//! The V8 inspector protocol (Chrome DevTools Protocol) as far as the
//! Node.js backend uses it: typed commands of the `Debugger` and `Runtime`
//! domains, the events it acts on, and a client over the inspector's
//! WebSocket.
//!
//! Why our own types and not a generated crate: `chromiumoxide_cdp` types
//! every domain of Chrome (5.8 MB of generated source, minutes of build on
//! the project's small machines) for the fifteen commands used here.
//!
//! Invariants: every command waits for its answer within a bound; when the
//! socket closes every pending command is failed with why; an event whose
//! parameters do not read as its type is kept as [`CdpEvent::Other`], never
//! dropped silently.

use futures_util::{SinkExt, StreamExt};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// One command: its method name and the type of its answer.
pub trait Command: Serialize {
    const METHOD: &'static str;
    type Reply: DeserializeOwned;
}

/// An answer with nothing in it.
#[derive(Debug, Deserialize)]
pub struct Empty {}

macro_rules! command {
    ($ty:ident, $method:literal, $reply:ty) => {
        impl Command for $ty {
            const METHOD: &'static str = $method;
            type Reply = $reply;
        }
    };
}

// ---- Runtime ----

/// `Runtime.RemoteObject`: a value in the debuggee.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RemoteObject {
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtype: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unserializable_value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<ObjectPreview>,
    /// Node adds it to the exception of a `paused` event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncaught: Option<bool>,
}

/// `Runtime.ObjectPreview`: a shallow look at an object.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ObjectPreview {
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(default)]
    pub subtype: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub overflow: bool,
    #[serde(default)]
    pub properties: Vec<PropertyPreview>,
    #[serde(default)]
    pub entries: Vec<EntryPreview>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PropertyPreview {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub subtype: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct EntryPreview {
    #[serde(default)]
    pub key: Option<ObjectPreview>,
    pub value: ObjectPreview,
}

/// `Runtime.CallArgument`: a value handed to the debuggee.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CallArgument {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unserializable_value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
}

impl CallArgument {
    /// The argument that passes `object` itself.
    pub fn of(object: &RemoteObject) -> CallArgument {
        if let Some(id) = &object.object_id {
            return CallArgument {
                object_id: Some(id.clone()),
                ..Default::default()
            };
        }
        if let Some(u) = &object.unserializable_value {
            return CallArgument {
                unserializable_value: Some(u.clone()),
                ..Default::default()
            };
        }
        match object.type_.as_str() {
            // `undefined` has no value to send; an empty argument is it.
            "undefined" => CallArgument::default(),
            _ => CallArgument {
                value: Some(object.value.clone().unwrap_or(Value::Null)),
                ..Default::default()
            },
        }
    }
}

/// `Runtime.ExceptionDetails`, as much as an answer needs.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ExceptionDetails {
    pub text: String,
    #[serde(default)]
    pub exception: Option<RemoteObject>,
}

impl ExceptionDetails {
    /// `ReferenceError: nope is not defined`.
    pub fn message(&self) -> String {
        self.exception
            .as_ref()
            .and_then(|e| e.description.as_deref())
            .and_then(|d| d.lines().next())
            .map_or_else(|| self.text.clone(), String::from)
    }
}

#[derive(Debug, Serialize)]
pub struct RuntimeEnable {}
command!(RuntimeEnable, "Runtime.enable", Empty);

#[derive(Debug, Serialize)]
pub struct RunIfWaitingForDebugger {}
command!(
    RunIfWaitingForDebugger,
    "Runtime.runIfWaitingForDebugger",
    Empty
);

#[derive(Debug, Serialize)]
pub struct AddBinding {
    pub name: String,
}
command!(AddBinding, "Runtime.addBinding", Empty);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evaluate {
    pub expression: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generate_preview: Option<bool>,
}
command!(Evaluate, "Runtime.evaluate", Evaluated);

/// The answer of an evaluation or a call.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Evaluated {
    pub result: RemoteObject,
    #[serde(default)]
    pub exception_details: Option<ExceptionDetails>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetProperties {
    pub object_id: String,
    pub own_properties: bool,
    pub generate_preview: bool,
}
command!(GetProperties, "Runtime.getProperties", Properties);

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Properties {
    pub result: Vec<PropertyDescriptor>,
    #[serde(default)]
    pub internal_properties: Vec<InternalPropertyDescriptor>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PropertyDescriptor {
    pub name: String,
    #[serde(default)]
    pub value: Option<RemoteObject>,
    #[serde(default)]
    pub get: Option<RemoteObject>,
    #[serde(default)]
    pub is_own: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct InternalPropertyDescriptor {
    pub name: String,
    #[serde(default)]
    pub value: Option<RemoteObject>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallFunctionOn {
    pub function_declaration: String,
    pub object_id: String,
    pub arguments: Vec<CallArgument>,
    pub generate_preview: bool,
}
command!(CallFunctionOn, "Runtime.callFunctionOn", Evaluated);

// ---- Debugger ----

#[derive(Debug, Serialize)]
pub struct DebuggerEnable {}
command!(DebuggerEnable, "Debugger.enable", Value);

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    pub script_id: String,
    /// 0-based.
    pub line_number: u32,
    #[serde(default)]
    pub column_number: Option<u32>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetBreakpointByUrl {
    /// 0-based.
    pub line_number: u32,
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}
command!(
    SetBreakpointByUrl,
    "Debugger.setBreakpointByUrl",
    BreakpointSet
);

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BreakpointSet {
    pub breakpoint_id: String,
    #[serde(default)]
    pub locations: Vec<Location>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoveBreakpoint {
    pub breakpoint_id: String,
}
command!(RemoveBreakpoint, "Debugger.removeBreakpoint", Empty);

/// `none`, `uncaught`, `caught` or `all`.
#[derive(Debug, Serialize)]
pub struct SetPauseOnExceptions {
    pub state: &'static str,
}
command!(SetPauseOnExceptions, "Debugger.setPauseOnExceptions", Empty);

macro_rules! bare_command {
    ($ty:ident, $method:literal) => {
        #[derive(Debug, Serialize)]
        pub struct $ty {}
        command!($ty, $method, Empty);
    };
}
bare_command!(Resume, "Debugger.resume");
bare_command!(StepOver, "Debugger.stepOver");
bare_command!(StepInto, "Debugger.stepInto");
bare_command!(StepOut, "Debugger.stepOut");
bare_command!(Pause, "Debugger.pause");

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateOnCallFrame {
    pub call_frame_id: String,
    pub expression: String,
    pub generate_preview: bool,
}
command!(
    EvaluateOnCallFrame,
    "Debugger.evaluateOnCallFrame",
    Evaluated
);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetVariableValue {
    pub scope_number: usize,
    pub variable_name: String,
    pub new_value: CallArgument,
    pub call_frame_id: String,
}
command!(SetVariableValue, "Debugger.setVariableValue", Empty);

// ---- events ----

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// `global`, `local`, `with`, `closure`, `catch`, `block`, `script`,
    /// `eval`, `module`, `wasm-expression-stack`.
    #[serde(rename = "type")]
    pub type_: String,
    pub object: RemoteObject,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallFrame {
    pub call_frame_id: String,
    pub function_name: String,
    pub location: Location,
    #[serde(default)]
    pub url: String,
    pub scope_chain: Vec<Scope>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Paused {
    pub call_frames: Vec<CallFrame>,
    pub reason: String,
    #[serde(default)]
    pub data: Option<RemoteObject>,
    #[serde(default)]
    pub hit_breakpoints: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScriptParsed {
    pub script_id: String,
    pub url: String,
    /// The script's `//# sourceMappingURL=`, empty without one.
    #[serde(default, rename = "sourceMapURL")]
    pub source_map_url: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BreakpointResolved {
    pub breakpoint_id: String,
    pub location: Location,
}

#[derive(Debug, Clone, Deserialize)]
pub struct BindingCalled {
    pub name: String,
    pub payload: String,
}

/// The events the backend acts on, and everything else.
#[derive(Debug, Clone)]
pub enum CdpEvent {
    Paused(Box<Paused>),
    Resumed,
    ScriptParsed(ScriptParsed),
    BreakpointResolved(BreakpointResolved),
    BindingCalled(BindingCalled),
    /// A JavaScript context came to be; `default` is the program's own
    /// (not a `vm` context of its).
    ContextCreated {
        id: i64,
        default: bool,
    },
    /// A context is gone; the program's own going means it finished (Node
    /// then waits for the client to let go). `None`: all of them.
    ContextDestroyed(Option<i64>),
    Other {
        method: String,
    },
}

impl CdpEvent {
    fn decode(method: &str, params: Value) -> CdpEvent {
        Self::read_as(method, params.clone()).unwrap_or_else(|| CdpEvent::Other {
            method: method.to_string(),
        })
    }

    fn read_as(method: &str, params: Value) -> Option<CdpEvent> {
        fn read<T: DeserializeOwned>(params: Value) -> Option<T> {
            serde_json::from_value(params).ok()
        }
        let decoded = match method {
            "Debugger.paused" => read(params).map(|p| CdpEvent::Paused(Box::new(p))),
            "Debugger.resumed" => Some(CdpEvent::Resumed),
            "Debugger.scriptParsed" => read(params).map(CdpEvent::ScriptParsed),
            "Debugger.breakpointResolved" => read(params).map(CdpEvent::BreakpointResolved),
            "Runtime.bindingCalled" => read(params).map(CdpEvent::BindingCalled),
            "Runtime.executionContextCreated" => {
                let c = params.get("context")?;
                Some(CdpEvent::ContextCreated {
                    id: c.get("id")?.as_i64()?,
                    default: c.pointer("/auxData/isDefault").and_then(Value::as_bool)
                        != Some(false),
                })
            }
            "Runtime.executionContextDestroyed" => Some(CdpEvent::ContextDestroyed(
                params.get("executionContextId").and_then(Value::as_i64),
            )),
            "Runtime.executionContextsCleared" => Some(CdpEvent::ContextDestroyed(None)),
            _ => None,
        };
        decoded
    }
}

// ---- the client ----

/// Why a command got no usable answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CdpError {
    /// The inspector answered with an error (a bad expression, no such
    /// breakpoint).
    #[error("{0}")]
    Refused(String),
    #[error("the inspector did not answer `{method}` within {} ms", .after.as_millis())]
    Timeout {
        method: &'static str,
        after: Duration,
    },
    #[error("the inspector connection is closed ({0})")]
    Closed(String),
    #[error("the inspector's answer to `{method}` could not be read: {why}")]
    BadAnswer { method: &'static str, why: String },
}

type Pending = HashMap<u64, oneshot::Sender<Result<Value, CdpError>>>;

struct Inner {
    out: mpsc::UnboundedSender<Message>,
    next_id: AtomicU64,
    pending: Mutex<Pending>,
    closed: Mutex<Option<String>>,
    bound: Duration,
}

/// One inspector connection. Cheap to clone.
#[derive(Clone)]
pub struct CdpClient {
    inner: Arc<Inner>,
}

impl CdpClient {
    /// Connect to `url` within `within`; events arrive in order on the
    /// returned channel, which closes with the socket. Each command then
    /// waits at most `bound`.
    pub async fn connect(
        url: &str,
        within: Duration,
        bound: Duration,
    ) -> Result<(CdpClient, mpsc::UnboundedReceiver<CdpEvent>), String> {
        let socket = tokio::time::timeout(within, async {
            let host = url
                .strip_prefix("ws://")
                .and_then(|rest| rest.split('/').next())
                .ok_or_else(|| format!("`{url}` is not a ws:// address"))?;
            let tcp = tokio::net::TcpStream::connect(host)
                .await
                .map_err(|e| format!("cannot connect to the inspector at {url}: {e}"))?;
            // Small messages, each waited for: Nagle's algorithm and
            // delayed ACKs would hold each one ~40 ms on loopback.
            let _ = tcp.set_nodelay(true);
            let (socket, _) = tokio_tungstenite::client_async_with_config(url, QuickAck(tcp), None)
                .await
                .map_err(|e| format!("cannot connect to the inspector at {url}: {e}"))?;
            Ok::<_, String>(socket)
        })
        .await
        .map_err(|_| {
            format!(
                "connecting to the inspector at {url} did not finish within {} ms",
                within.as_millis()
            )
        })??;
        let (mut sink, mut stream) = socket.split();
        let (out, mut out_rx) = mpsc::unbounded_channel::<Message>();
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let inner = Arc::new(Inner {
            out,
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            closed: Mutex::new(None),
            bound,
        });
        // Once we let go, the reader stops too: the socket closes only when
        // both halves are gone, and Node, which does not answer a close
        // frame, keeps a finished program waiting until it does.
        let let_go = Arc::new(tokio::sync::Notify::new());
        let writer_let_go = let_go.clone();
        tokio::spawn(async move {
            while let Some(m) = out_rx.recv().await {
                let close = matches!(m, Message::Close(_));
                if sink.send(m).await.is_err() || close {
                    break;
                }
            }
            let _ = sink.close().await;
            drop(sink);
            writer_let_go.notify_one();
        });
        let reader = inner.clone();
        tokio::spawn(async move {
            let why = loop {
                let next = tokio::select! {
                    next = stream.next() => next,
                    () = let_go.notified() => break "the inspector connection was let go".to_string(),
                };
                match next {
                    None => break "the inspector closed the socket".to_string(),
                    Some(Err(e)) => break format!("the inspector socket failed: {e}"),
                    Some(Ok(Message::Text(text))) => {
                        let Ok(v) = serde_json::from_str::<Value>(&text) else {
                            continue;
                        };
                        dispatch(&reader, v, &events_tx);
                    }
                    Some(Ok(Message::Close(_))) => {
                        break "the inspector closed the socket".to_string()
                    }
                    Some(Ok(_)) => {}
                }
            };
            fail_all(&reader, &why);
        });
        Ok((CdpClient { inner }, events_rx))
    }

    /// Send `command` and wait for its answer, within the client's bound.
    pub async fn call<C: Command>(&self, command: &C) -> Result<C::Reply, CdpError> {
        let value = self.call_raw(C::METHOD, command).await?;
        serde_json::from_value(value).map_err(|e| CdpError::BadAnswer {
            method: C::METHOD,
            why: e.to_string(),
        })
    }

    async fn call_raw<P: Serialize>(
        &self,
        method: &'static str,
        params: &P,
    ) -> Result<Value, CdpError> {
        if let Some(why) = self.closed() {
            return Err(CdpError::Closed(why));
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.inner
            .pending
            .lock()
            .expect("pending lock")
            .insert(id, tx);
        let text = json!({"id": id, "method": method, "params": params}).to_string();
        if self.inner.out.send(Message::Text(text.into())).is_err() {
            self.inner.pending.lock().expect("pending lock").remove(&id);
            return Err(CdpError::Closed("the socket writer ended".into()));
        }
        match tokio::time::timeout(self.inner.bound, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(CdpError::Closed(
                self.closed().unwrap_or_else(|| "no answer".into()),
            )),
            Err(_) => {
                self.inner.pending.lock().expect("pending lock").remove(&id);
                Err(CdpError::Timeout {
                    method,
                    after: self.inner.bound,
                })
            }
        }
    }

    /// Why the connection closed, once it has.
    pub fn closed(&self) -> Option<String> {
        self.inner.closed.lock().expect("closed lock").clone()
    }

    /// Let go of the debuggee: Node ends a program that finished once its
    /// client is gone.
    pub fn close(&self) {
        let _ = self.inner.out.send(Message::Close(None));
    }
}

/// The inspector's TCP stream, acknowledging what it reads at once. Node
/// writes an event right after an answer (`Debugger.resumed`, then
/// `Debugger.paused`); with Nagle on Node's side, the event waits for the
/// answer's ACK, which Linux delays ~40 ms when we have nothing to send.
struct QuickAck(tokio::net::TcpStream);

impl QuickAck {
    fn ack_now(&self) {
        use std::os::fd::AsRawFd;
        quick_ack(self.0.as_raw_fd());
    }
}

/// Ask Linux to acknowledge what arrived on socket `fd` at once, for now
/// (it leaves quick-ACK mode on its own, so callers ask after each read).
/// Failure is harmless: the ACK only comes later.
pub fn quick_ack(fd: std::os::fd::RawFd) {
    let one: libc::c_int = 1;
    // SAFETY: setsockopt with an int option value that lives across the
    // call; a bad fd only makes it fail.
    unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_QUICKACK,
            std::ptr::from_ref(&one).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

impl tokio::io::AsyncRead for QuickAck {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let polled = std::pin::Pin::new(&mut self.0).poll_read(cx, buf);
        if polled.is_ready() {
            // Linux leaves quick-ACK mode on its own; set it again.
            self.ack_now();
        }
        polled
    }
}

impl tokio::io::AsyncWrite for QuickAck {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

fn dispatch(inner: &Inner, v: Value, events: &mpsc::UnboundedSender<CdpEvent>) {
    if let Some(id) = v.get("id").and_then(Value::as_u64) {
        let waiter = inner.pending.lock().expect("pending lock").remove(&id);
        if let Some(tx) = waiter {
            let answer = match v.get("error") {
                Some(e) => Err(CdpError::Refused(
                    e.get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("refused")
                        .to_string(),
                )),
                None => Ok(v.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = tx.send(answer);
        }
        return;
    }
    if let Some(method) = v.get("method").and_then(Value::as_str) {
        let params = v.get("params").cloned().unwrap_or(Value::Null);
        let _ = events.send(CdpEvent::decode(method, params));
    }
}

fn fail_all(inner: &Inner, why: &str) {
    *inner.closed.lock().expect("closed lock") = Some(why.to_string());
    let pending: Vec<_> = inner
        .pending
        .lock()
        .expect("pending lock")
        .drain()
        .collect();
    for (_, tx) in pending {
        let _ = tx.send(Err(CdpError::Closed(why.to_string())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paused_event_reads_as_its_type() {
        let params = json!({
            "callFrames": [{
                "callFrameId": "cf-0", "functionName": "mean",
                "location": {"scriptId": "42", "lineNumber": 7, "columnNumber": 4},
                "url": "file:///w/avg.js",
                "scopeChain": [{"type": "local", "object": {"type": "object", "objectId": "o-1"}}],
                "this": {"type": "undefined"}
            }],
            "reason": "other",
            "hitBreakpoints": ["1:7:0:file:///w/avg.js"]
        });
        let CdpEvent::Paused(p) = CdpEvent::decode("Debugger.paused", params) else {
            panic!("not read as paused")
        };
        assert_eq!(p.call_frames[0].location.line_number, 7);
        assert_eq!(p.hit_breakpoints.len(), 1);
        // A body that does not fit is kept, named.
        assert!(matches!(
            CdpEvent::decode("Debugger.paused", json!({"reason": 3})),
            CdpEvent::Other { .. }
        ));
    }
}
