//! The host's protocol behaviour, over an in-memory pipe with raw JSON-RPC
//! lines: progress while a call runs, cancellation reaching the tool, no
//! answer and no progress after a cancel, the run ending cancelling calls in
//! flight. The tools here are fakes for fault injection (a call that only
//! ends when cancelled, one that ignores cancellation); the real tools are
//! exercised end to end with the Python SDK in `tests/tests/mcp.rs`.

use super::*;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_core::{
    async_trait, AllowAll, CallContext, Registry, Surface, Tier, Tool, ToolError, ToolOutput,
    ToolSpec,
};

/// Fake: runs until its call is cancelled, then reports that it saw it.
struct FakeWaitsForCancel {
    saw_cancel: Arc<AtomicBool>,
}

#[async_trait]
impl Tool for FakeWaitsForCancel {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "fake_wait",
            "waits until cancelled",
            Tier::Exec,
            json!({"type": "object"}),
        )
    }
    async fn call(&self, cx: &CallContext, _args: Value) -> Result<ToolOutput, ToolError> {
        cx.report("started");
        cx.cancel.cancelled().await;
        self.saw_cancel.store(true, Ordering::SeqCst);
        Err(ToolError::Cancelled("interrupted".into()))
    }
}

/// Fake: ignores cancellation entirely.
struct FakeStubborn;

#[async_trait]
impl Tool for FakeStubborn {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "fake_stubborn",
            "ignores cancel",
            Tier::Read,
            json!({"type": "object"}),
        )
    }
    async fn call(&self, _cx: &CallContext, _args: Value) -> Result<ToolOutput, ToolError> {
        tokio::time::sleep(std::time::Duration::from_hours(1)).await;
        Ok(ToolOutput::text("never"))
    }
}

struct Wire {
    tx: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    rx: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Wire {
    async fn send(&mut self, v: Value) {
        self.tx
            .write_all(format!("{v}\n").as_bytes())
            .await
            .unwrap();
    }
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), self.rx.next_line())
            .await
            .expect("a message within 10 s")
            .unwrap()
            .expect("the server closed the pipe");
        serde_json::from_str(&line).unwrap()
    }
}

async fn start(
    registry: Registry,
    config: McpConfig,
) -> (Wire, CancellationToken, tokio::task::JoinHandle<()>) {
    let (client, server) = tokio::io::duplex(1 << 16);
    let link = ClientLink::new(config.elicitation_timeout());
    let host = McpHost::new(registry, Surface::FULL, config, link);
    let run = host.run_token();
    let (sr, sw) = tokio::io::split(server);
    let task = tokio::spawn({
        let run = run.clone();
        async move {
            let service = host.serve_with_ct((sr, sw), run).await.unwrap();
            let _ = service.waiting().await;
        }
    });
    let (cr, cw) = tokio::io::split(client);
    let mut wire = Wire {
        tx: cw,
        rx: BufReader::new(cr).lines(),
    };
    wire.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "wire", "version": "0"}}}),
    )
    .await;
    let init = wire.recv().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    (wire, run, task)
}

fn registry_with_fakes(saw_cancel: Arc<AtomicBool>) -> Registry {
    let r = Registry::new();
    r.set_approver(Some(Arc::new(AllowAll)));
    r.register(Arc::new(FakeWaitsForCancel { saw_cancel }))
        .unwrap();
    r.register(Arc::new(FakeStubborn)).unwrap();
    r
}

fn fast_config() -> McpConfig {
    McpConfig {
        progress_interval_ms: 100,
        cancel_grace_ms: 300,
        ..McpConfig::default()
    }
}

#[tokio::test]
async fn progress_flows_until_the_client_cancels_and_the_tool_sees_it() {
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let (mut wire, _run, _task) =
        start(registry_with_fakes(saw_cancel.clone()), fast_config()).await;
    wire.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "fake_wait", "arguments": {}, "_meta": {"progressToken": "p1"}}}),
    )
    .await;
    let mut values = Vec::new();
    let mut messages = Vec::new();
    while values.len() < 3 {
        let m = wire.recv().await;
        assert_eq!(m["method"], "notifications/progress", "{m}");
        assert_eq!(m["params"]["progressToken"], "p1");
        values.push(m["params"]["progress"].as_f64().unwrap());
        messages.push(m["params"]["message"].as_str().unwrap().to_string());
    }
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    assert_eq!(messages[0], "started");
    assert!(
        messages[1].starts_with("`fake_wait` running for"),
        "{messages:?}"
    );

    wire.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "user"}}),
    )
    .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while !saw_cancel.load(Ordering::SeqCst) {
        assert!(
            std::time::Instant::now() < deadline,
            "the tool never saw the cancel"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // The next answer is for the next request: nothing for id 2, and no
    // progress for its token once the call ended.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    wire.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}))
        .await;
    loop {
        let m = wire.recv().await;
        if m["id"] == 3 {
            assert_eq!(m["result"]["tools"].as_array().unwrap().len(), 2);
            break;
        }
        assert_ne!(m["id"], 2, "a cancelled request was answered: {m}");
        // Progress already in flight when the cancel arrived may still land.
        assert_eq!(m["method"], "notifications/progress", "{m}");
    }
}

#[tokio::test]
async fn a_call_that_ignores_cancellation_is_dropped_after_the_grace() {
    let (mut wire, _run, _task) = start(registry_with_fakes(Arc::default()), fast_config()).await;
    wire.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "fake_stubborn", "arguments": {}}}),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    wire.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2}}),
    )
    .await;
    // The host stays responsive, and the stubborn call does not hold the
    // session: a later call is answered.
    wire.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "no_such", "arguments": {}}}),
    )
    .await;
    let m = wire.recv().await;
    assert_eq!(m["id"], 3, "{m}");
    assert!(m["error"]["message"]
        .as_str()
        .unwrap()
        .contains("unknown tool `no_such`"));
}

#[tokio::test]
async fn ending_the_run_cancels_calls_in_flight() {
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let (mut wire, run, task) = start(registry_with_fakes(saw_cancel.clone()), fast_config()).await;
    wire.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "fake_wait", "arguments": {}}}),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    run.cancel();
    tokio::time::timeout(std::time::Duration::from_secs(5), task)
        .await
        .expect("the service ends after the run is cancelled")
        .unwrap();
    assert!(saw_cancel.load(Ordering::SeqCst));
}

#[tokio::test]
async fn a_tool_error_is_a_result_and_images_are_image_items() {
    struct FakeImage;
    #[async_trait]
    impl Tool for FakeImage {
        fn spec(&self) -> ToolSpec {
            ToolSpec::new("fake_image", "d", Tier::Read, json!({"type": "object"}))
        }
        async fn call(&self, _cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
            if args.get("fail").is_some() {
                return Err(ToolError::unavailable("no server here; run doctor"));
            }
            let mut out = ToolOutput::text("a figure");
            out.push_image("image/png", b"\x89PNG\r\n\x1a\n".to_vec());
            Ok(out)
        }
    }
    let r = Registry::new();
    r.register(Arc::new(FakeImage)).unwrap();
    let (mut wire, _run, _task) = start(r, fast_config()).await;
    wire.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "fake_image", "arguments": {}}}),
    )
    .await;
    let m = wire.recv().await;
    assert_eq!(
        m["result"]["content"],
        json!([{"type": "text", "text": "a figure"},
               {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}])
    );
    wire.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "fake_image", "arguments": {"fail": true}}}),
    )
    .await;
    let m = wire.recv().await;
    assert_eq!(m["result"]["isError"], true, "{m}");
    assert_eq!(
        m["result"]["content"][0]["text"],
        "not available here: no server here; run doctor"
    );
}

/// The host as `serve_stdio` runs it (the line filter in front of rmcp),
/// over an in-memory pipe; the task ends with the session.
async fn start_filtered(
    registry: Registry,
) -> (Wire, tokio::task::JoinHandle<Result<SessionEnd, String>>) {
    let (client, server) = tokio::io::duplex(1 << 16);
    let config = fast_config();
    let link = ClientLink::new(config.elicitation_timeout());
    let host = McpHost::new(registry, Surface::FULL, config, link);
    let (sr, sw) = tokio::io::split(server);
    let task = tokio::spawn(serve_on(host, sr, sw, CancellationToken::new()));
    let (cr, cw) = tokio::io::split(client);
    let mut wire = Wire {
        tx: cw,
        rx: BufReader::new(cr).lines(),
    };
    wire.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "wire", "version": "0"}}}),
    )
    .await;
    let init = wire.recv().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    (wire, task)
}

#[tokio::test]
async fn garbage_and_oversize_lines_are_answered_and_the_host_keeps_serving() {
    let (mut wire, task) = start_filtered(registry_with_fakes(Arc::default())).await;
    wire.tx.write_all(b"this is not json\n").await.unwrap();
    expect_test::expect![[r#"{"error":{"code":-32700,"message":"Parse error: the line is not JSON (expected ident at line 1 column 2); send one JSON-RPC message per line"},"id":null,"jsonrpc":"2.0"}"#]]
        .assert_eq(&wire.recv().await.to_string());

    // 20 MiB in one line, written in pieces as a client would stream it.
    let piece = vec![b'x'; 1 << 20];
    for _ in 0..20 {
        wire.tx.write_all(&piece).await.unwrap();
    }
    wire.tx.write_all(b"\n").await.unwrap();
    expect_test::expect![[r#"{"error":{"code":-32600,"message":"Invalid Request: a line of 20971520 bytes is over the limit of 16777216 bytes (16 MiB) for one message; it was discarded unread"},"id":null,"jsonrpc":"2.0"}"#]]
        .assert_eq(&wire.recv().await.to_string());

    // Blank lines are no messages; JSON that is no JSON-RPC message is
    // rmcp's to answer; then the host still serves.
    wire.tx.write_all(b"\r\n  \n[1, 2]\n").await.unwrap();
    let m = wire.recv().await;
    assert_eq!(m["error"]["code"], -32600, "{m}");
    wire.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}))
        .await;
    let m = wire.recv().await;
    assert_eq!(m["id"], 7, "{m}");
    assert_eq!(m["result"]["tools"].as_array().unwrap().len(), 2, "{m}");

    // Closing stdin still ends the session.
    wire.tx.shutdown().await.unwrap();
    let end = tokio::time::timeout(std::time::Duration::from_secs(5), task)
        .await
        .expect("the session ends when the client closes its end")
        .unwrap();
    assert_eq!(end, Ok(SessionEnd::ClientClosed));
}

#[tokio::test]
async fn a_posted_notice_is_a_log_notification_and_rides_on_the_next_result() {
    let registry = registry_with_fakes(Arc::default());
    let board = registry.notices();
    let (mut wire, run, _task) = start(registry, fast_config()).await;
    board.post(
        "vibe",
        tool_core::NoticeLevel::Warning,
        "w1 \"tests\" (fast, run 1) lost",
    );
    expect_test::expect![[r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"w1 \"tests\" (fast, run 1) lost","level":"warning","logger":"vibe"}}"#]]
        .assert_eq(&wire.recv().await.to_string());

    // A client that asks for warnings and above gets no info notice.
    wire.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
        "params": {"level": "warning"}}),
    )
    .await;
    assert_eq!(wire.recv().await["id"], 2);
    board.post("vibe", tool_core::NoticeLevel::Info, "w2 \"docs\" done");
    wire.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "no_such", "arguments": {}}}),
    )
    .await;
    let m = wire.recv().await;
    assert_eq!(m["id"], 3, "no notification for an info notice: {m}");

    // Both notices are still pending for the next result.
    struct FakeRead;
    #[async_trait]
    impl Tool for FakeRead {
        fn spec(&self) -> ToolSpec {
            ToolSpec::new("fake_read", "d", Tier::Read, json!({"type": "object"}))
        }
        async fn call(&self, _cx: &CallContext, _args: Value) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("read"))
        }
    }
    run.cancel();
    let r = Registry::new();
    r.register(Arc::new(FakeRead)).unwrap();
    r.notices()
        .post("vibe", tool_core::NoticeLevel::Info, "w3 done");
    let (mut wire, _run, _task) = start(r, fast_config()).await;
    wire.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "fake_read", "arguments": {}}}),
    )
    .await;
    let m = wire.recv().await;
    let content = &m["result"]["content"];
    assert_eq!(content[0]["text"], "read", "{m}");
    let block = content[1]["text"].as_str().unwrap();
    assert!(
        block.starts_with(
            "--- 1 notice from elsewhere in this run (not part of this result) ---\n[vibe info, "
        ) && block.ends_with(" s ago] w3 done"),
        "{block}"
    );
}
