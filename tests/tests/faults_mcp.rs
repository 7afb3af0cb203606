//! Fault suite, MCP host (issue 13, item 7): the release binary
//! `agent-tools mcp` driven with raw JSON-RPC lines. A line that is not JSON
//! and a line over the 16 MiB limit each get an error reply, the host keeps
//! serving, and an over-long line is discarded as it streams in instead of
//! being held whole (its resident memory is watched while it arrives).
//! A malformed request is answered with its own id, and a request before
//! `initialize` is told to initialize first (issue 37).

use serde_json::{json, Value};
use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use test_support::cli::stdout_lines;
use tool_core::process::procfs;

/// One `agent-tools mcp` on a fresh root, killed if the test fails.
struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    _root: tempfile::TempDir,
}

impl Host {
    /// The host, initialized.
    fn start() -> Host {
        let mut host = Host::spawn();
        host.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "faults", "version": "0"}}}),
        );
        let init = host.recv();
        assert_eq!(init["id"], 1, "{init}");
        host.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        host
    }

    /// The host, before any message.
    fn spawn() -> Host {
        let bin = tests::built_agent_tools_bin();
        let root = tempfile::tempdir().unwrap();
        let mut child = Command::new(bin)
            .args(["mcp", "--root"])
            .arg(root.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start agent-tools mcp");
        let lines = stdout_lines(&mut child);
        let stdin = child.stdin.take();
        Host {
            child,
            stdin,
            lines,
            _root: root,
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, v: &Value) {
        self.write(format!("{v}\n").as_bytes());
    }

    fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(10))
            .expect("a reply within 10 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// `tools/list` is answered with the run's tools.
    fn still_serves(&mut self, id: u64) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        let m = self.recv();
        assert_eq!(m["id"], id, "{m}");
        let tools = m["result"]["tools"].as_array().expect("a tool list");
        assert!(tools.iter().any(|t| t["name"] == "read"), "{m}");
    }

    fn rss_kib(&self) -> u64 {
        procfs::rss_kib(self.child.id()).expect("VmRSS in /proc/<pid>/status")
    }

    /// Close stdin: the host ends on its own, successfully.
    fn close(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "the host exited with {status}");
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the host did not exit after stdin closed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn garbage_and_oversize_lines_are_answered_and_the_host_keeps_serving() {
    let mut host = Host::start();

    host.write(b"this is not json {\n");
    expect_test::expect![[r#"{"error":{"code":-32700,"message":"Parse error: the line is not JSON (expected ident at line 1 column 2); send one JSON-RPC message per line"},"id":null,"jsonrpc":"2.0"}"#]].assert_eq(&host.recv().to_string());

    // 20 MiB in one line.
    host.write(&vec![b'x'; 20 << 20]);
    host.write(b"\n");
    expect_test::expect![[r#"{"error":{"code":-32600,"message":"Invalid Request: a line of 20971520 bytes is over the limit of 16777216 bytes (16 MiB) for one message; it was discarded unread"},"id":null,"jsonrpc":"2.0"}"#]].assert_eq(&host.recv().to_string());

    host.still_serves(2);
    host.close();
}

#[test]
fn a_slowly_fed_oversize_line_is_not_held_whole() {
    let mut host = Host::start();
    host.still_serves(2);
    let baseline = host.rss_kib();
    // 64 MiB, four times the limit, so holding it whole could not pass,
    // in 256 KiB pieces over about two seconds.
    let piece = vec![b'y'; 256 << 10];
    let mut peak = baseline;
    for _ in 0..256 {
        host.write(&piece);
        std::thread::sleep(Duration::from_millis(5));
        peak = peak.max(host.rss_kib());
    }
    host.write(b"\n");
    let m = host.recv();
    assert_eq!(m["error"]["code"], -32600, "{m}");
    expect_test::expect!["Invalid Request: a line of 67108864 bytes is over the limit of 16777216 bytes (16 MiB) for one message; it was discarded unread"].assert_eq(m["error"]["message"].as_str().unwrap());
    peak = peak.max(host.rss_kib());
    let grew_mib = (peak - baseline) as f64 / 1024.0;
    eprintln!("resident: {baseline} KiB before, {peak} KiB at the peak (+{grew_mib:.1} MiB)");
    assert!(
        grew_mib < 40.0,
        "the host grew by {grew_mib:.1} MiB while a 64 MiB line streamed in"
    );
    host.still_serves(3);
    host.close();
}

/// Each line sent, and the one answer it got.
fn exchange(host: &mut Host, lines: &[&str]) -> String {
    let mut out = String::new();
    for line in lines {
        host.write(format!("{line}\n").as_bytes());
        out.push_str(&format!("{line}\n    {}\n", host.recv()));
    }
    out
}

#[test]
fn requests_before_initialize_are_told_to_initialize_first() {
    let mut host = Host::spawn();
    expect_test::expect![[r#"
        {"jsonrpc":"2.0","id":1,"method":"tools/list"}
            {"error":{"code":-32600,"message":"Invalid Request: initialize first: `tools/list` came before `initialize`; send `initialize`, then `notifications/initialized`, then other requests"},"id":1,"jsonrpc":"2.0"}
        {"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"read","arguments":{"path":"x"}}}
            {"error":{"code":-32600,"message":"Invalid Request: initialize first: `tools/call` came before `initialize`; send `initialize`, then `notifications/initialized`, then other requests"},"id":"c","jsonrpc":"2.0"}
        {"jsonrpc":"2.0","id":2,"method":"ping"}
            {"id":2,"jsonrpc":"2.0","result":{}}
    "#]]
    .assert_eq(&exchange(
        &mut host,
        &[
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"read","arguments":{"path":"x"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        ],
    ));
    // A notification before initialize is dropped, not fatal: the handshake
    // still works afterwards.
    host.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    host.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "faults", "version": "0"}}}),
    );
    let init = host.recv();
    assert_eq!(init["id"], 3, "{init}");
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    host.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    host.still_serves(4);
    host.close();
}

#[test]
fn malformed_requests_get_their_own_id_back_and_the_host_keeps_serving() {
    let mut host = Host::start();
    expect_test::expect![[r#"
        {"id":9,"method":"ping"}
            {"error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be \"2.0\""},"id":9,"jsonrpc":"2.0"}
        {"jsonrpc":"1.0","id":"nine","method":"ping"}
            {"error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be \"2.0\""},"id":"nine","jsonrpc":"2.0"}
        {"jsonrpc":"2.0","id":10,"method":["ping"]}
            {"error":{"code":-32600,"message":"Invalid Request: \"method\" must be a string"},"id":10,"jsonrpc":"2.0"}
        {"jsonrpc":"2.0","id":11}
            {"error":{"code":-32600,"message":"Invalid Request: no \"method\": neither a request nor a notification"},"id":11,"jsonrpc":"2.0"}
        {"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":5}}
            {"error":{"code":-32602,"message":"Invalid params for `tools/call`: invalid type: integer `5`, expected a string"},"id":12,"jsonrpc":"2.0"}
        {"jsonrpc":"2.0","id":13,"method":"tools/call"}
            {"error":{"code":-32602,"message":"Invalid params for `tools/call`: invalid type: null, expected struct CallToolRequestParams"},"id":13,"jsonrpc":"2.0"}
        {"jsonrpc":"2.0","id":14,"method":"tools/list","params":[1]}
            {"error":{"code":-32602,"message":"Invalid params for `tools/list`: params must be an object"},"id":14,"jsonrpc":"2.0"}
        {"jsonrpc":"2.0","id":null,"method":"ping"}
            {"error":{"code":-32600,"message":"Invalid Request: \"id\" must be a string or an integer"},"id":null,"jsonrpc":"2.0"}
        [{"jsonrpc":"2.0","id":15,"method":"ping"}]
            {"error":{"code":-32600,"message":"Invalid Request: a message is one JSON object; batches are not supported"},"id":null,"jsonrpc":"2.0"}
        {"jsonrpc":"2.0","id":16,"method":"no/such/method"}
            {"error":{"code":-32601,"message":"no/such/method"},"id":16,"jsonrpc":"2.0"}
        {"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt","limit":"one"}}}
            {"id":17,"jsonrpc":"2.0","result":{"content":[{"text":"bad arguments: argument `limit`: invalid type: string \"one\", expected usize; check the tool's input schema","type":"text"}],"isError":true,"structuredContent":{"error":{"kind":"bad_arguments","message":"bad arguments: argument `limit`: invalid type: string \"one\", expected usize; check the tool's input schema"}}}}
    "#]]
    .assert_eq(&exchange(
        &mut host,
        &[
            r#"{"id":9,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":"nine","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":["ping"]}"#,
            r#"{"jsonrpc":"2.0","id":11}"#,
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":14,"method":"tools/list","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"[{"jsonrpc":"2.0","id":15,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":16,"method":"no/such/method"}"#,
            r#"{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt","limit":"one"}}}"#,
        ],
    ));
    host.still_serves(18);
    host.close();
}
