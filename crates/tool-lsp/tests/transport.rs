//! The JSON-RPC connection in memory: a scripted peer at the other end of a
//! `tokio::io::duplex`, each test asserting the exact outcome.

use lsp_session::jsonrpc::{Handler, JsonRpc, RequestError, StreamEnd};
use lsp_session::transport::{read_frame, write_frame};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

/// Answers `client/ask` with its params, records notifications and the end.
#[derive(Clone, Default)]
struct Recorder {
    notes: Arc<Mutex<Vec<(String, Value)>>>,
    ends: Arc<Mutex<Vec<StreamEnd>>>,
}

impl Handler for Recorder {
    fn request(&self, method: &str, params: &Value) -> Result<Value, (i64, String)> {
        match method {
            "client/ask" => Ok(json!({"echo": params})),
            _ => Err((-32601, format!("no {method}"))),
        }
    }
    fn notification(&self, method: &str, params: Value) {
        self.notes
            .lock()
            .unwrap()
            .push((method.to_string(), params));
    }
    async fn ended(&self, _conn: &JsonRpc, end: StreamEnd) -> String {
        self.ends.lock().unwrap().push(end.clone());
        match end {
            StreamEnd::Closed => "closed".into(),
            StreamEnd::Broken(why) => format!("broken: {why}"),
        }
    }
}

/// The scripted peer's two halves.
struct Peer {
    from_client: BufReader<ReadHalf<DuplexStream>>,
    to_client: WriteHalf<DuplexStream>,
}

impl Peer {
    async fn next(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(5), read_frame(&mut self.from_client))
            .await
            .expect("a frame within 5 s")
            .expect("a well-framed message")
            .expect("no end of stream")
    }
    async fn send(&mut self, msg: Value) {
        write_frame(&mut self.to_client, &msg).await.unwrap();
    }
}

fn connect() -> (JsonRpc, Recorder, Peer) {
    let (client_end, peer_end) = tokio::io::duplex(64 * 1024);
    let (client_read, client_write) = tokio::io::split(client_end);
    let (peer_read, peer_write) = tokio::io::split(peer_end);
    let recorder = Recorder::default();
    let conn = JsonRpc::start("peer", client_read, client_write, recorder.clone());
    let peer = Peer {
        from_client: BufReader::new(peer_read),
        to_client: peer_write,
    };
    (conn, recorder, peer)
}

const LONG: Duration = Duration::from_secs(5);

#[tokio::test]
async fn replies_reach_their_request_by_id_even_out_of_order() {
    let (conn, _, mut peer) = connect();
    let first = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("a/first", json!(1), LONG).await }
    });
    let asked_first = peer.next().await;
    let second = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("a/second", json!(2), LONG).await }
    });
    let asked_second = peer.next().await;
    assert_eq!(
        asked_first,
        json!({"jsonrpc": "2.0", "id": 1, "method": "a/first", "params": 1})
    );
    assert_eq!(
        asked_second,
        json!({"jsonrpc": "2.0", "id": 2, "method": "a/second", "params": 2})
    );
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "result": "two"}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32800, "message": "nope"}}))
        .await;
    assert_eq!(second.await.unwrap(), Ok(json!("two")));
    assert_eq!(
        first.await.unwrap(),
        Err(RequestError::Rpc {
            method: "a/first".into(),
            code: -32800,
            message: "nope".into()
        })
    );
    assert_eq!(conn.pending(), 0);
}

#[tokio::test]
async fn the_peers_requests_are_answered_and_notifications_handed_over() {
    let (conn, recorder, mut peer) = connect();
    peer.send(json!({"jsonrpc": "2.0", "id": "s1", "method": "client/ask", "params": [1]}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": 7, "method": "client/other"}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "method": "note/this", "params": {"x": 1}}))
        .await;
    assert_eq!(
        peer.next().await,
        json!({"jsonrpc": "2.0", "id": "s1", "result": {"echo": [1]}})
    );
    assert_eq!(
        peer.next().await,
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "no client/other"}})
    );
    // A request of ours goes out after both answers, so the notification,
    // sent before them, has been handed over by the time it is answered.
    let ask = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("a/ping", Value::Null, LONG).await }
    });
    let id = peer.next().await["id"].clone();
    peer.send(json!({"jsonrpc": "2.0", "id": id})).await;
    assert_eq!(ask.await.unwrap(), Ok(Value::Null));
    assert_eq!(
        *recorder.notes.lock().unwrap(),
        vec![("note/this".to_string(), json!({"x": 1}))]
    );
}

#[tokio::test]
async fn a_malformed_header_ends_the_connection_for_every_pending_request() {
    let (conn, recorder, mut peer) = connect();
    let asks: Vec<_> = ["a/one", "a/two"]
        .into_iter()
        .map(|m| {
            let conn = conn.clone();
            tokio::spawn(async move { conn.request(m, Value::Null, LONG).await })
        })
        .collect();
    peer.next().await;
    peer.next().await;
    assert_eq!(conn.pending(), 2);
    peer.to_client
        .write_all(b"garbage without colon\r\n\r\n{}")
        .await
        .unwrap();
    let why =
        "broken: malformed frame header: expected `Name: value`, got \"garbage without colon\"";
    for ask in asks {
        assert_eq!(ask.await.unwrap(), Err(RequestError::Gone(why.into())));
    }
    assert_eq!(conn.closed().as_deref(), Some(why));
    assert_eq!(conn.pending(), 0);
    assert_eq!(
        *recorder.ends.lock().unwrap(),
        vec![StreamEnd::Broken(why["broken: ".len()..].to_string())]
    );
    // Later requests fail the same way, without being sent.
    assert_eq!(
        conn.request("a/later", Value::Null, LONG).await,
        Err(RequestError::Gone(why.into()))
    );
}

#[tokio::test]
async fn the_end_of_the_stream_is_reported_to_pending_requests() {
    let (conn, recorder, mut peer) = connect();
    let ask = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("a/one", Value::Null, LONG).await }
    });
    peer.next().await;
    drop(peer);
    assert_eq!(ask.await.unwrap(), Err(RequestError::Gone("closed".into())));
    assert_eq!(*recorder.ends.lock().unwrap(), vec![StreamEnd::Closed]);
}

/// A peer that goes away in the middle of writing a frame (a server that
/// exits while a message is half out) closed its stream; it did not break
/// the protocol (and its exit status, not a framing error, is the reason a
/// real server's client gives).
#[tokio::test]
async fn a_stream_that_ends_inside_a_frame_is_a_close_not_a_break() {
    let (conn, recorder, mut peer) = connect();
    let ask = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("a/one", Value::Null, LONG).await }
    });
    peer.next().await;
    peer.to_client
        .write_all(b"Content-Length: 139\r\n\r\n{\"jsonrpc\":")
        .await
        .unwrap();
    drop(peer);
    assert_eq!(ask.await.unwrap(), Err(RequestError::Gone("closed".into())));
    assert_eq!(*recorder.ends.lock().unwrap(), vec![StreamEnd::Closed]);
}

#[tokio::test]
async fn a_timeout_leaves_no_pending_entry_and_cancels_the_request() {
    let (conn, _, mut peer) = connect();
    let ask = tokio::spawn({
        let conn = conn.clone();
        async move {
            conn.request("a/slow", Value::Null, Duration::from_millis(50))
                .await
        }
    });
    let asked = peer.next().await;
    assert_eq!(
        ask.await.unwrap(),
        Err(RequestError::TimedOut {
            method: "a/slow".into(),
            after: Duration::from_millis(50)
        })
    );
    assert_eq!(conn.pending(), 0);
    assert_eq!(
        peer.next().await,
        json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": asked["id"]}})
    );
    // A late answer is dropped; the connection goes on.
    peer.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": 1}))
        .await;
    let next = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("a/next", Value::Null, LONG).await }
    });
    let id = peer.next().await["id"].clone();
    peer.send(json!({"jsonrpc": "2.0", "id": id, "result": 2}))
        .await;
    assert_eq!(next.await.unwrap(), Ok(json!(2)));
    assert_eq!(conn.pending(), 0);
    assert_eq!(conn.closed(), None);
}
