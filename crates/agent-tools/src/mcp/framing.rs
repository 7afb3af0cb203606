//! The line framing of MCP over stdio, done by us before rmcp sees a byte:
//! input is split into lines with a cap, and each line is judged (a message,
//! a blank line, or not JSON at all), so the host can answer what rmcp would
//! drop in silence.
//!
//! Each JSON line is then routed by the [`Session`]: a message rmcp can read
//! goes on to it, and the rest is answered here, so that every answer to a
//! request carries the request's id (rmcp answers a message it cannot read
//! without one), and a request before `initialize` is told to initialize
//! first (rmcp would take it for the session-less protocol it is not
//! serving).
//!
//! Invariants:
//! - an answer made here to a message with a readable `id` (a string or a
//!   number) carries that id; `null` only where none can be read;
//! - before `initialize`, only `initialize` and `ping` reach rmcp;
//! - [`LineSplitter`] never holds more than `cap` bytes of a line: a line
//!   that grows past the cap is discarded as it streams in and reported once,
//!   with its length, when it ends;
//! - lines up to the cap come out exactly as a plain split on `\n` gives them
//!   (the `\n` removed, nothing else);
//! - the functions here are pure: no I/O, no panics on any input.

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, InitializeRequestParams,
};
use serde_json::Value;

/// The longest line the host reads, its end of line not counted: 16 MiB.
/// Longer lines are discarded unread and answered with [`oversize_reply`].
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// JSON-RPC's code for input that is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for a message that cannot be a request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's code for a request whose params do not fit its method.
pub const INVALID_PARAMS: i64 = -32602;

/// One line framed out of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framed {
    /// A whole line of at most the cap, without its `\n`.
    Line(Vec<u8>),
    /// A line longer than the cap, already discarded; `len` is its length
    /// without the `\n`.
    Oversize { len: u64 },
}

/// Splits a byte stream into lines, holding at most `cap` bytes of the line
/// in progress.
#[derive(Debug)]
pub struct LineSplitter {
    cap: usize,
    /// The line in progress while it is within the cap.
    partial: Vec<u8>,
    /// The length so far of a line in progress that went over the cap.
    discarding: Option<u64>,
}

impl LineSplitter {
    pub fn new(cap: usize) -> Self {
        LineSplitter {
            cap,
            partial: Vec::new(),
            discarding: None,
        }
    }

    /// Bytes held for the line in progress (its allocation, not only its
    /// length): never more than the cap.
    pub fn held(&self) -> usize {
        self.partial.capacity()
    }

    /// Feed the next bytes of the stream; every line they complete is pushed
    /// onto `out`, in order.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<Framed>) {
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&b| b == b'\n');
            let (piece, rest) = match newline {
                Some(i) => (&chunk[..i], &chunk[i + 1..]),
                None => (chunk, &[][..]),
            };
            self.take_in(piece);
            if newline.is_some() {
                out.push(self.end_line());
            }
            chunk = rest;
        }
    }

    /// The end of the stream: the last line if it had no `\n`.
    pub fn finish(&mut self) -> Option<Framed> {
        if self.discarding.is_none() && self.partial.is_empty() {
            return None;
        }
        Some(self.end_line())
    }

    fn take_in(&mut self, piece: &[u8]) {
        if let Some(len) = &mut self.discarding {
            *len += piece.len() as u64;
            return;
        }
        let needed = self.partial.len() + piece.len();
        if needed > self.cap {
            tracing::warn!(
                cap = self.cap,
                "an input line is over the cap; discarding it"
            );
            self.discarding = Some(needed as u64);
            // Give the memory back at once, not when the line ends.
            self.partial = Vec::new();
            return;
        }
        if needed > self.partial.capacity() {
            // Grow by doubling, but never past the cap.
            let target = needed.max(self.partial.capacity() * 2).min(self.cap);
            self.partial.reserve_exact(target - self.partial.len());
        }
        self.partial.extend_from_slice(piece);
    }

    fn end_line(&mut self) -> Framed {
        match self.discarding.take() {
            Some(len) => Framed::Oversize { len },
            None => Framed::Line(std::mem::take(&mut self.partial)),
        }
    }
}

/// What one line of input is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict<'a> {
    /// Only whitespace: nothing to answer.
    Blank,
    /// One JSON value, without a trailing `\r` or a leading byte-order mark:
    /// for rmcp, which answers any shape that is not a JSON-RPC message.
    Json(&'a [u8]),
    /// Not JSON; why, in serde_json's words.
    NotJson(String),
}

/// Judge one line (without its `\n`).
pub fn judge(line: &[u8]) -> Verdict<'_> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Blank;
    }
    if let Err(e) = std::str::from_utf8(line) {
        return Verdict::NotJson(format!("invalid UTF-8 at byte {}", e.valid_up_to()));
    }
    match serde_json::from_slice::<serde::de::IgnoredAny>(line) {
        Ok(_) => Verdict::Json(line),
        Err(e) => Verdict::NotJson(e.to_string()),
    }
}

fn error_reply(code: i64, message: String) -> Vec<u8> {
    error_reply_to(&Value::Null, code, message)
}

fn error_reply_to(id: &Value, code: i64, message: String) -> Vec<u8> {
    let mut line = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    }))
    .expect("a JSON value serializes");
    line.push(b'\n');
    line
}

/// The answer to a line that is not JSON (a whole line, `\n` included).
pub fn parse_error_reply(why: &str) -> Vec<u8> {
    error_reply(
        PARSE_ERROR,
        format!("Parse error: the line is not JSON ({why}); send one JSON-RPC message per line"),
    )
}

/// The answer to a line over [`MAX_LINE`] (a whole line, `\n` included).
pub fn oversize_reply(len: u64) -> Vec<u8> {
    error_reply(
        INVALID_REQUEST,
        format!(
            "Invalid Request: a line of {len} bytes is over the limit of {MAX_LINE} bytes (16 MiB) \
             for one message; it was discarded unread"
        ),
    )
}

/// What becomes of one JSON message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// rmcp reads it and answers.
    Forward,
    /// Answered here (a whole line, `\n` included); rmcp never sees it.
    Answer(Vec<u8>),
    /// A notification or a response that nothing can use; why, for the log.
    Drop(&'static str),
}

/// The session as the framing sees it: whether `initialize` went by yet.
#[derive(Debug, Default)]
pub struct Session {
    initialize_sent: bool,
}

impl Session {
    /// Route one message (a line [`judge`]d JSON).
    pub fn route(&mut self, message: &[u8]) -> Route {
        let Ok(parsed) = serde_json::from_slice::<ClientJsonRpcMessage>(message) else {
            let value: Value = match serde_json::from_slice(message) {
                Ok(v) => v,
                Err(e) => return Route::Answer(parse_error_reply(&e.to_string())),
            };
            return match malformed(&value) {
                Some((code, why)) => Route::Answer(error_reply_to(&readable_id(&value), code, why)),
                None => Route::Drop("a notification rmcp cannot read"),
            };
        };
        if let ClientJsonRpcMessage::Request(r) = &parsed {
            if let Some(why) = misfit_params(&r.request) {
                let id = serde_json::to_value(&r.id).unwrap_or(Value::Null);
                return Route::Answer(error_reply_to(&id, INVALID_PARAMS, why));
            }
        }
        if self.initialize_sent {
            return Route::Forward;
        }
        match parsed {
            ClientJsonRpcMessage::Request(r) => match r.request {
                ClientRequest::InitializeRequest(_) => {
                    self.initialize_sent = true;
                    Route::Forward
                }
                ClientRequest::PingRequest(_) => Route::Forward,
                other => Route::Answer(error_reply_to(
                    &serde_json::to_value(&r.id).unwrap_or(Value::Null),
                    INVALID_REQUEST,
                    format!(
                        "Invalid Request: initialize first: `{}` came before `initialize`; \
                         send `initialize`, then `notifications/initialized`, then other requests",
                        other.method()
                    ),
                )),
            },
            _ => Route::Drop("a notification or response before initialize"),
        }
    }
}

/// Why a request for `tools/call` or `initialize` whose params do not fit is
/// refused (rmcp would take it for an unknown method and answer "method not
/// found").
fn misfit_params(request: &ClientRequest) -> Option<String> {
    let ClientRequest::CustomRequest(r) = request else {
        return None;
    };
    let params = r.params.clone().unwrap_or(Value::Null);
    let why = match r.method.as_str() {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err()?,
        "initialize" => serde_json::from_value::<InitializeRequestParams>(params).err()?,
        _ => return None,
    };
    Some(format!("Invalid params for `{}`: {why}", r.method))
}

/// The `id` of a message as it can be read: a string or a number, else null.
fn readable_id(message: &Value) -> Value {
    match message.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    }
}

/// Why rmcp cannot read `message`, as a JSON-RPC error code and message;
/// `None` for a notification (it gets no answer).
fn malformed(message: &Value) -> Option<(i64, String)> {
    let invalid = |why: &str| Some((INVALID_REQUEST, format!("Invalid Request: {why}")));
    let Value::Object(obj) = message else {
        return invalid(match message {
            Value::Array(_) => "a message is one JSON object; batches are not supported",
            _ => "a message is one JSON object",
        });
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("\"jsonrpc\" must be \"2.0\"");
    }
    let id = obj.get("id");
    if id.is_some_and(|id| !(id.is_string() || id.is_i64() || id.is_u64())) {
        return invalid("\"id\" must be a string or an integer");
    }
    match obj.get("method") {
        Some(Value::String(method)) => {
            id?;
            let mut request = serde_json::Map::new();
            request.insert("method".into(), Value::String(method.clone()));
            if let Some(params) = obj.get("params") {
                request.insert("params".into(), params.clone());
            }
            let why = match obj.get("params") {
                Some(p) if !p.is_object() => "params must be an object".to_string(),
                _ => match serde_json::from_value::<ClientRequest>(Value::Object(request)) {
                    Err(e) => e.to_string(),
                    Ok(_) => "the message does not fit a request".to_string(),
                },
            };
            Some((
                INVALID_PARAMS,
                format!("Invalid params for `{method}`: {why}"),
            ))
        }
        Some(_) => invalid("\"method\" must be a string"),
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
            invalid("a malformed response")
        }
        None => invalid("no \"method\": neither a request nor a notification"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn split_all(cap: usize, chunks: &[&[u8]]) -> Vec<Framed> {
        let mut s = LineSplitter::new(cap);
        let mut out = Vec::new();
        for c in chunks {
            s.push(c, &mut out);
            assert!(s.held() <= cap, "held {} over the cap {cap}", s.held());
        }
        out.extend(s.finish());
        out
    }

    fn line(s: &str) -> Framed {
        Framed::Line(s.as_bytes().to_vec())
    }

    #[test]
    fn lines_split_across_chunks_and_long_ones_are_dropped_with_their_length() {
        assert_eq!(
            split_all(8, &[b"ab", b"c\n\nde", b"f\n0123456789", b"xyz\nlast"]),
            vec![
                line("abc"),
                line(""),
                line("def"),
                Framed::Oversize { len: 13 },
                line("last")
            ]
        );
        // Exactly the cap is a line; one byte more is not.
        assert_eq!(
            split_all(4, &[b"abcd\nabcde\n"]),
            vec![line("abcd"), Framed::Oversize { len: 5 }]
        );
        // An oversize line at the end of input is still reported.
        assert_eq!(
            split_all(2, &[b"ok\n", b"too long"]),
            vec![line("ok"), Framed::Oversize { len: 8 }]
        );
        assert_eq!(split_all(2, &[b"", b"a\n"]), vec![line("a")]);
    }

    #[test]
    fn lines_are_judged_and_errors_are_json_rpc_lines() {
        assert_eq!(judge(b""), Verdict::Blank);
        assert_eq!(judge(b" \t\r"), Verdict::Blank);
        assert_eq!(
            judge(b"\xEF\xBB\xBF{\"a\": 1}\r"),
            Verdict::Json(b"{\"a\": 1}")
        );
        assert_eq!(judge(b"[1, 2]"), Verdict::Json(b"[1, 2]"));
        assert_eq!(
            judge(b"hello there"),
            Verdict::NotJson("expected value at line 1 column 1".into())
        );
        assert_eq!(
            judge(b"{\"a\": 1} {"),
            Verdict::NotJson("trailing characters at line 1 column 10".into())
        );
        assert_eq!(
            judge(b"\"caf\xE9\""),
            Verdict::NotJson("invalid UTF-8 at byte 4".into())
        );
        expect_test::expect![[r#"
            {"error":{"code":-32700,"message":"Parse error: the line is not JSON (expected value at line 1 column 1); send one JSON-RPC message per line"},"id":null,"jsonrpc":"2.0"}
        "#]]
        .assert_eq(&String::from_utf8(parse_error_reply("expected value at line 1 column 1")).unwrap());
        expect_test::expect![[r#"
            {"error":{"code":-32600,"message":"Invalid Request: a line of 20971520 bytes is over the limit of 16777216 bytes (16 MiB) for one message; it was discarded unread"},"id":null,"jsonrpc":"2.0"}
        "#]]
        .assert_eq(&String::from_utf8(oversize_reply(20 * 1024 * 1024)).unwrap());
    }

    /// Each message through one session, in order, and what became of it.
    fn routes(messages: &[&str]) -> String {
        let mut session = Session::default();
        let mut out = String::new();
        for m in messages {
            let said = match session.route(m.as_bytes()) {
                Route::Forward => "-> rmcp".to_string(),
                Route::Drop(why) => format!("dropped: {why}"),
                Route::Answer(line) => String::from_utf8(line).unwrap().trim_end().to_string(),
            };
            out.push_str(&format!("{m}\n    {said}\n"));
        }
        out
    }

    #[test]
    fn every_answer_made_here_carries_the_id_and_requests_wait_for_initialize() {
        expect_test::expect![[r#"
            {"jsonrpc":"2.0","id":1,"method":"tools/list"}
                {"error":{"code":-32600,"message":"Invalid Request: initialize first: `tools/list` came before `initialize`; send `initialize`, then `notifications/initialized`, then other requests"},"id":1,"jsonrpc":"2.0"}
            {"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"read","arguments":{}}}
                {"error":{"code":-32600,"message":"Invalid Request: initialize first: `tools/call` came before `initialize`; send `initialize`, then `notifications/initialized`, then other requests"},"id":"a","jsonrpc":"2.0"}
            {"jsonrpc":"2.0","method":"notifications/initialized"}
                dropped: a notification or response before initialize
            {"jsonrpc":"2.0","id":2,"method":"ping"}
                -> rmcp
            {"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}
                -> rmcp
            {"jsonrpc":"2.0","method":"notifications/initialized"}
                -> rmcp
            {"jsonrpc":"2.0","id":4,"method":"tools/list"}
                -> rmcp
            {"id":9,"method":"ping"}
                {"error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be \"2.0\""},"id":9,"jsonrpc":"2.0"}
            {"jsonrpc":"1.0","id":"x","method":"ping"}
                {"error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be \"2.0\""},"id":"x","jsonrpc":"2.0"}
            {"jsonrpc":"2.0","id":10,"method":5}
                {"error":{"code":-32600,"message":"Invalid Request: \"method\" must be a string"},"id":10,"jsonrpc":"2.0"}
            {"jsonrpc":"2.0","id":11}
                {"error":{"code":-32600,"message":"Invalid Request: no \"method\": neither a request nor a notification"},"id":11,"jsonrpc":"2.0"}
            {"jsonrpc":"2.0","id":null,"method":"ping"}
                {"error":{"code":-32600,"message":"Invalid Request: \"id\" must be a string or an integer"},"id":null,"jsonrpc":"2.0"}
            {"jsonrpc":"2.0","id":{"a":1},"method":"ping"}
                {"error":{"code":-32600,"message":"Invalid Request: \"id\" must be a string or an integer"},"id":null,"jsonrpc":"2.0"}
            {"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":5}}
                {"error":{"code":-32602,"message":"Invalid params for `tools/call`: invalid type: integer `5`, expected a string"},"id":12,"jsonrpc":"2.0"}
            {"jsonrpc":"2.0","id":13,"method":"tools/call"}
                {"error":{"code":-32602,"message":"Invalid params for `tools/call`: invalid type: null, expected struct CallToolRequestParams"},"id":13,"jsonrpc":"2.0"}
            {"jsonrpc":"2.0","id":14,"result":5}
                -> rmcp
            [{"jsonrpc":"2.0","id":15,"method":"ping"}]
                {"error":{"code":-32600,"message":"Invalid Request: a message is one JSON object; batches are not supported"},"id":null,"jsonrpc":"2.0"}
            "hello"
                {"error":{"code":-32600,"message":"Invalid Request: a message is one JSON object"},"id":null,"jsonrpc":"2.0"}
            {"jsonrpc":"2.0","method":"notifications/cancelled","params":5}
                dropped: a notification rmcp cannot read
            {"jsonrpc":"2.0","id":16,"method":"some/custom"}
                -> rmcp
        "#]]
        .assert_eq(&routes(&[
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"read","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
            r#"{"id":9,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":11}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":14,"result":5}"#,
            r#"[{"jsonrpc":"2.0","id":15,"method":"ping"}]"#,
            r#""hello""#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#,
            r#"{"jsonrpc":"2.0","id":16,"method":"some/custom"}"#,
        ]));
    }

    /// A stream cut into chunks at arbitrary points.
    fn chunked(bytes: Vec<u8>, cuts: Vec<usize>) -> Vec<Vec<u8>> {
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut out = Vec::new();
        let mut at = 0;
        for c in cuts {
            out.push(bytes[at..c].to_vec());
            at = c;
        }
        out.push(bytes[at..].to_vec());
        out
    }

    /// Bytes rich in newlines, so lines of every length occur.
    fn stream() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop_oneof![3 => Just(b'\n'), 1 => Just(b'\r'), 8 => any::<u8>()],
            0..400,
        )
    }

    // proptest's default 256 cases per property; `cargo xtask fuzz` runs
    // them with PROPTEST_CASES set for volume.
    proptest! {
        /// Any bytes, any cuts, any cap: no panic, never more than the cap
        /// held, every line accounted for (kept or reported with its length).
        #[test]
        fn any_stream_is_framed_within_the_cap(
            bytes in stream(),
            cuts in prop::collection::vec(any::<usize>(), 0..8),
            cap in 0usize..40,
        ) {
            let chunks = chunked(bytes.clone(), cuts);
            let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
            let framed = split_all(cap, &refs);
            let mut naive: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
            if naive.last().is_some_and(|l| l.is_empty()) {
                naive.pop();
            }
            prop_assert_eq!(framed.len(), naive.len());
            for (f, n) in framed.iter().zip(&naive) {
                match f {
                    Framed::Line(l) => {
                        prop_assert!(l.len() <= cap);
                        prop_assert_eq!(l.as_slice(), *n);
                    }
                    Framed::Oversize { len } => {
                        prop_assert!(n.len() > cap);
                        prop_assert_eq!(*len, n.len() as u64);
                    }
                }
            }
            for l in &naive {
                let _ = judge(l);
            }
        }

        /// With no line over the cap, the lines are exactly a naive split's.
        #[test]
        fn within_the_cap_lines_are_a_naive_split(
            bytes in stream(),
            cuts in prop::collection::vec(any::<usize>(), 0..8),
        ) {
            let chunks = chunked(bytes.clone(), cuts);
            let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
            let framed = split_all(MAX_LINE, &refs);
            let mut naive: Vec<Framed> = bytes
                .split(|&b| b == b'\n')
                .map(|l| Framed::Line(l.to_vec()))
                .collect();
            if naive.last() == Some(&Framed::Line(Vec::new())) {
                naive.pop();
            }
            prop_assert_eq!(framed, naive);
        }
    }
}
