//! Fault suite, MCP host (issue 13, item 7): the release binary
//! `agent-tools mcp` driven with raw JSON-RPC lines. A line that is not JSON
//! and a line over the 16 MiB limit each get an error reply, the host keeps
//! serving, and an over-long line is discarded as it streams in instead of
//! being held whole (its resident memory is watched while it arrives).

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
    fn start() -> Host {
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
        let mut host = Host {
            child,
            stdin,
            lines,
            _root: root,
        };
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
