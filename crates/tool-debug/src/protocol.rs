//! The messages that cross the wire, as we read them.
//!
//! Bodies use the `dap-types` structs; the envelope is our own enum so a
//! message we do not know (an adapter's private event such as debugpy's
//! `debugpySockets`, a reverse request we never advertised) is kept as raw
//! JSON instead of failing the whole stream. Known events whose body does not
//! fit the schema (lldb and delve both bend it) also fall back to raw.

use dap_types::{BreakpointEvent, OutputEvent, ProcessEvent, ThreadEvent};
use serde_json::Value;

/// One message from the adapter.
#[derive(Debug, Clone)]
pub enum Incoming {
    Response(Response),
    Event(Box<AdapterEvent>),
    /// A reverse request (`runInTerminal`, `startDebugging`, …).
    Request {
        seq: u64,
        command: String,
        arguments: Value,
    },
}

/// A response to one of our requests, body still raw: the caller knows
/// which type to read it as.
#[derive(Debug, Clone)]
pub struct Response {
    pub request_seq: u64,
    pub success: bool,
    pub command: String,
    pub message: Option<String>,
    pub body: Value,
}

/// A `stopped` event, read leniently: a stop is never dropped because its
/// body bends the schema (delve reports a panic with `hitBreakpointIds:
/// [-1]`, and may name its placeholder thread `-1`; an adapter may invent
/// a reason).
#[derive(Debug, Clone, PartialEq)]
pub struct Stopped {
    /// The adapter's reason word (`breakpoint`, `exception`, …); `other`
    /// when it gave none.
    pub reason: String,
    pub description: Option<String>,
    pub text: Option<String>,
    /// `None` when absent or not a real thread id (negative).
    pub thread_id: Option<u64>,
}

impl Stopped {
    fn from_body(body: &Value) -> Stopped {
        let text = |k: &str| {
            body.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(String::from)
        };
        Stopped {
            reason: text("reason").unwrap_or_else(|| "other".into()),
            description: text("description"),
            text: text("text"),
            thread_id: body.get("threadId").and_then(Value::as_u64),
        }
    }
}

/// The events this client acts on, and everything else as `Other`.
#[derive(Debug, Clone)]
pub enum AdapterEvent {
    Initialized,
    Stopped(Stopped),
    Continued {
        thread_id: Option<u64>,
    },
    /// `exitCode` is signed here: the schema's unsigned field cannot hold the
    /// negative codes some adapters report for signals.
    Exited {
        exit_code: Option<i64>,
    },
    Terminated,
    Thread(ThreadEvent),
    Output(OutputEvent),
    Breakpoint(BreakpointEvent),
    Process(ProcessEvent),
    Other {
        event: String,
        body: Value,
    },
}

impl Incoming {
    /// Read one decoded JSON message. `None` for something that is not a DAP
    /// message at all.
    pub fn from_value(v: Value) -> Option<Incoming> {
        let kind = v.get("type")?.as_str()?.to_string();
        match kind.as_str() {
            "response" => Some(Incoming::Response(Response {
                request_seq: v.get("request_seq")?.as_u64()?,
                success: v.get("success").and_then(Value::as_bool).unwrap_or(false),
                command: str_field(&v, "command"),
                message: v.get("message").and_then(Value::as_str).map(String::from),
                body: v.get("body").cloned().unwrap_or(Value::Null),
            })),
            "event" => {
                let event = str_field(&v, "event");
                let body = v.get("body").cloned().unwrap_or(Value::Null);
                Some(Incoming::Event(Box::new(AdapterEvent::decode(event, body))))
            }
            "request" => Some(Incoming::Request {
                seq: v.get("seq").and_then(Value::as_u64).unwrap_or(0),
                command: str_field(&v, "command"),
                arguments: v.get("arguments").cloned().unwrap_or(Value::Null),
            }),
            _ => None,
        }
    }
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

impl AdapterEvent {
    pub fn decode(event: String, body: Value) -> AdapterEvent {
        fn typed<T: serde::de::DeserializeOwned>(body: &Value) -> Option<T> {
            serde_json::from_value(body.clone()).ok()
        }
        let decoded = match event.as_str() {
            "initialized" => Some(AdapterEvent::Initialized),
            "stopped" => Some(AdapterEvent::Stopped(Stopped::from_body(&body))),
            "continued" => Some(AdapterEvent::Continued {
                thread_id: body.get("threadId").and_then(Value::as_u64),
            }),
            "exited" => Some(AdapterEvent::Exited {
                exit_code: body.get("exitCode").and_then(Value::as_i64),
            }),
            "terminated" => Some(AdapterEvent::Terminated),
            "thread" => typed(&body).map(AdapterEvent::Thread),
            "output" => typed(&body).map(AdapterEvent::Output),
            "breakpoint" => typed(&body).map(AdapterEvent::Breakpoint),
            "process" => typed(&body).map(AdapterEvent::Process),
            _ => None,
        };
        decoded.unwrap_or(AdapterEvent::Other { event, body })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_and_misshapen_events_are_kept_raw() {
        let m = Incoming::from_value(json!({"seq": 4, "type": "event", "event": "debugpySockets",
            "body": {"sockets": []}}))
        .unwrap();
        assert!(
            matches!(m, Incoming::Event(ref e) if matches!(**e, AdapterEvent::Other { ref event, .. } if event == "debugpySockets"))
        );
        // A stopped event that bends the schema is still a stop: without
        // its reason, or with delve's placeholder thread.
        let m = Incoming::from_value(json!({"seq": 0, "type": "event", "event": "stopped",
            "body": {"threadId": 1}}))
        .unwrap();
        assert!(
            matches!(m, Incoming::Event(ref e) if matches!(**e, AdapterEvent::Stopped(ref s) if s.reason == "other" && s.thread_id == Some(1)))
        );
        let m = Incoming::from_value(json!({"seq": 0, "type": "event", "event": "stopped",
            "body": {"reason": "exception", "threadId": -1, "description": "panic",
                "text": "assignment to entry in nil map", "hitBreakpointIds": [-1]}}))
        .unwrap();
        assert!(
            matches!(m, Incoming::Event(ref e) if matches!(**e, AdapterEvent::Stopped(ref s) if s.reason == "exception" && s.thread_id.is_none() && s.text.as_deref() == Some("assignment to entry in nil map")))
        );
        let m = Incoming::from_value(json!({"type": "event", "event": "exited",
            "body": {"exitCode": -9}}))
        .unwrap();
        assert!(
            matches!(m, Incoming::Event(ref e) if matches!(**e, AdapterEvent::Exited { exit_code: Some(-9) }))
        );
        let m = Incoming::from_value(json!({"type": "event", "event": "stopped",
            "body": {"reason": "breakpoint", "threadId": 7, "threadCausedFocus": true}}))
        .unwrap();
        assert!(
            matches!(m, Incoming::Event(ref e) if matches!(**e, AdapterEvent::Stopped(ref s) if s.thread_id == Some(7)))
        );
    }

    #[test]
    fn responses_and_reverse_requests_are_told_apart() {
        let m = Incoming::from_value(json!({"seq": 0, "type": "response", "request_seq": 3,
            "success": false, "command": "launch", "message": "no such file"}))
        .unwrap();
        assert!(
            matches!(m, Incoming::Response(ref r) if r.request_seq == 3 && !r.success && r.message.as_deref() == Some("no such file"))
        );
        let m = Incoming::from_value(
            json!({"seq": 9, "type": "request", "command": "runInTerminal",
            "arguments": {"args": ["x"]}}),
        )
        .unwrap();
        assert!(
            matches!(m, Incoming::Request { seq: 9, ref command, .. } if command == "runInTerminal")
        );
        assert!(Incoming::from_value(json!({"hello": 1})).is_none());
    }
}
