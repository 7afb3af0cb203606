//! Fault suite, processes: nothing a run started outlives it, whatever ends
//! the run, including processes that left its process groups.
//!
//! Each test starts the release binary with a marker variable unique to the
//! test in its environment (every process it starts inherits it), makes it
//! start two vibe workers that each leave a `setsid` sleeper, an eval kernel
//! whose cell starts `setsid sleep`, and a debuggee (under debugpy) that
//! calls `setsid()` and stops at a breakpoint. Then the host is ended the
//! hard way: `kill -9` of `mcp`, SIGTERM of `batch`. Two seconds later no
//! process with the marker may be left.
//!
//! Shared servers (`[lsp] shared = true`) are the one thing meant to
//! outlive a run, for the other runs on the checkout: there, runs that
//! share one server are SIGKILLed and SIGTERMed, and after the last one
//! nothing of ours (server, keepers, broker, socket) may outlast the idle
//! timeout and the broker's linger.

use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use test_support::cli::stdout_lines;
use test_support::fixtures;
use test_support::shared_servers::{self, SharedCheckout, HOVER, HOVER_SIGNATURE};
use tool_core::process::signals::{self, Signal};

const MARKER: &str = "AGENT_TOOLS_FAULT_MARKER";

/// What every vibe worker runs: one sleeper in a new session, one in the
/// worker's group.
const WORKER: &str = "setsid sleep 600 & sleep 600";

/// The debuggee: leaves its session, starts a `setsid` child, and stops at
/// the breakpoint on line 9.
const DEBUGGEE: &str = "import os, subprocess, time
try:
    os.setsid()
except OSError:
    pass
child = subprocess.Popen(['setsid', 'sleep', '600'])
print('escaped', os.getsid(0) == os.getpid(), child.pid, flush=True)
time.sleep(0.2)
stopped_here = True
time.sleep(600)
";

/// The calls that start everything, as (tool, arguments).
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("vibe_spawn", json!({"brief": "first", "label": "one"})),
        ("vibe_spawn", json!({"brief": "second", "label": "two"})),
        (
            "eval",
            json!({
                "code": "import subprocess\np = subprocess.Popen(['setsid', 'sleep', '600'])\nprint(p.pid)",
                "language": "python",
                "description": "start a detached sleeper",
            }),
        ),
        (
            "debug",
            json!({"op": "breakpoints", "file": "escape.py", "lines": [9]}),
        ),
        ("debug", json!({"op": "launch", "program": "escape.py"})),
    ]
}

/// Whether the real components these tests need are installed (in CI they
/// must be).
fn prerequisites() -> bool {
    tests::built_agent_tools_bin();
    fixtures::require(&["debugpy"]).is_some() && fixtures::require(&["python3"]).is_some()
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("faults-processes-")
        .tempdir()
        .unwrap();
    std::fs::write(dir.path().join("escape.py"), DEBUGGEE).unwrap();
    // debugpy's root marker.
    std::fs::write(dir.path().join("requirements.txt"), "").unwrap();
    dir
}

fn unique_marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}-{nanos}", std::process::id())
}

/// The host binary with the marker, the fixture PATH, and stdio piped.
fn host(mode: &str, root: &Path, marker: &str) -> Child {
    Command::new(tests::agent_tools_bin())
        .arg(mode)
        .arg("--root")
        .arg(root)
        .arg("--vibe-fast")
        .arg(WORKER)
        .env(MARKER, marker)
        .env("PATH", fixtures::path_env())
        .env("AGENT_TOOLS_FIXTURES", fixtures::dir())
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(root.join("host.log")).unwrap())
        .env("RUST_LOG", "info")
        .spawn()
        .expect("start agent-tools")
}

/// Kills the host (and so, with keepers, its processes) if a test fails
/// before it did.
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = signals::send(self.0, Signal::Kill);
    }
}

fn next_line(rx: &mpsc::Receiver<String>, deadline: Instant) -> Value {
    let left = deadline.saturating_duration_since(Instant::now());
    let line = rx
        .recv_timeout(left)
        .expect("the host answered within the time limit");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// The live processes with the marker, described.
fn marked(marker: &str) -> Vec<String> {
    shared_servers::marked(MARKER, marker)
}

/// Wait up to 2 s for the marked processes to be gone; what is left.
fn survivors_after_two_seconds(marker: &str) -> Vec<String> {
    shared_servers::survivors_after(MARKER, marker, Duration::from_secs(2))
}

/// Wait until the scenario's sleepers run: two per worker, the cell's, and
/// the debuggee's.
fn wait_for_sleepers(marker: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let all = marked(marker);
        let sleepers = all.iter().filter(|p| p.contains("sleep 600")).count();
        if sleepers >= 6 || Instant::now() >= deadline {
            assert!(sleepers >= 6, "only {sleepers} sleepers started: {all:#?}");
            return all;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn send(stdin: &mut ChildStdin, msg: &Value) {
    writeln!(stdin, "{msg}").unwrap();
    stdin.flush().unwrap();
}

#[test]
fn nothing_survives_kill_9_of_the_mcp_host() {
    if !prerequisites() {
        return;
    }
    let dir = project();
    let marker = unique_marker();
    let mut child = host("mcp", dir.path(), &marker);
    let _guard = KillOnDrop(child.id());
    let rx = stdout_lines(&mut child);
    let mut stdin = child.stdin.take().unwrap();
    let deadline = Instant::now() + Duration::from_secs(40);

    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26",
            "capabilities": {},
            "clientInfo": {"name": "faults_processes", "version": "0"},
        }}),
    );
    loop {
        if next_line(&rx, deadline)["id"] == 0 {
            break;
        }
    }
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    for (i, (tool, args)) in calls().into_iter().enumerate() {
        let id = i + 1;
        send(
            &mut stdin,
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": tool, "arguments": args}}),
        );
        let answer = loop {
            let msg = next_line(&rx, deadline);
            if msg["id"] == id {
                break msg;
            }
        };
        assert_eq!(
            answer["result"]["isError"],
            json!(false),
            "{tool}: {answer}"
        );
    }
    let before = wait_for_sleepers(&marker);
    eprintln!("{} marked processes before kill -9", before.len());

    signals::send(child.id(), Signal::Kill).unwrap();
    child.wait().unwrap();
    let left = survivors_after_two_seconds(&marker);
    assert!(
        left.is_empty(),
        "{} of {} processes survived kill -9 of the host: {left:#?}",
        left.len(),
        before.len()
    );
}

#[test]
fn nothing_survives_sigterm_of_batch_and_it_exits_143() {
    if !prerequisites() {
        return;
    }
    let dir = project();
    let marker = unique_marker();
    let mut child = host("batch", dir.path(), &marker);
    let _guard = KillOnDrop(child.id());
    let rx = stdout_lines(&mut child);
    let mut stdin = child.stdin.take().unwrap();
    let deadline = Instant::now() + Duration::from_secs(40);
    for (tool, args) in calls() {
        send(&mut stdin, &json!({"tool": tool, "args": args}));
        let answer = next_line(&rx, deadline);
        assert_eq!(answer["ok"], json!(true), "{tool}: {answer}");
    }
    let before = wait_for_sleepers(&marker);
    eprintln!("{} marked processes before SIGTERM", before.len());

    // Standard input stays open: only the signal ends the run.
    signals::send(child.id(), Signal::Terminate).unwrap();
    let status = child.wait().unwrap();
    let left = survivors_after_two_seconds(&marker);
    assert!(
        left.is_empty(),
        "{} of {} processes survived SIGTERM of batch (which ended with {status}): {left:#?}",
        left.len(),
        before.len()
    );
    let log = std::fs::read_to_string(dir.path().join("host.log")).unwrap_or_default();
    assert_eq!(status.code(), Some(128 + 15), "{status}; its log:\n{log}");
    drop(stdin);
}

/// A `batch` run with `[lsp] shared = true` on `checkout` that has answered
/// the hover (its answer's text).
fn shared_run(checkout: &SharedCheckout, marker: &str, name: &str) -> (Child, String) {
    let log = checkout.dir.path().join(format!("{name}.log"));
    let mut child = Command::new(tests::agent_tools_bin())
        .args(["batch", "--root"])
        .arg(&checkout.root)
        .arg("--config")
        .arg(&checkout.shared)
        .arg("-")
        .env(MARKER, marker)
        .env("AGENT_TOOLS_BROKER_DIR", &checkout.broker_dir)
        .env("PATH", fixtures::path_env())
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("start agent-tools");
    let rx = stdout_lines(&mut child);
    let stdin = child.stdin.as_mut().unwrap();
    writeln!(stdin, "{HOVER}").unwrap();
    stdin.flush().unwrap();
    let answer = next_line(&rx, Instant::now() + Duration::from_mins(2));
    let text = answer["content"][0]["text"].as_str().unwrap_or_default();
    (child, text.to_string())
}

/// The broker's row of the orphan probe: two runs share one basedpyright
/// under the broker the first started; one is SIGKILLed, the other
/// SIGTERMed (neither detaches cleanly before its signal). Within the idle
/// timeout (2 s), the broker's linger (2 s) and a margin of 2 s, nothing
/// carrying the marker is left (server, keepers, broker) and the socket is
/// gone.
#[test]
fn nothing_of_the_broker_survives_shared_runs_killed_and_terminated() {
    tests::built_agent_tools_bin();
    if fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let checkout = SharedCheckout::new(2000);
    let marker = unique_marker();
    let (mut killed, first) = shared_run(&checkout, &marker, "killed");
    let _guard = KillOnDrop(killed.id());
    let (mut terminated, second) = shared_run(&checkout, &marker, "terminated");
    let _guard2 = KillOnDrop(terminated.id());
    for answer in [&first, &second] {
        assert_eq!(answer.lines().nth(1), Some(HOVER_SIGNATURE), "{answer}");
    }
    let servers = shared_servers::basedpyright_groups(MARKER, &marker);
    assert_eq!(servers.len(), 1, "one server for both runs: {servers:?}");
    let before = marked(&marker);
    assert!(
        before.iter().any(|p| p.ends_with(" lsp-broker")),
        "a broker runs: {before:#?}"
    );

    signals::send(killed.id(), Signal::Kill).unwrap();
    killed.wait().unwrap();
    // Standard input stays open (`wait` would close it): only the signal
    // ends the run.
    let stdin = terminated.stdin.take();
    signals::send(terminated.id(), Signal::Terminate).unwrap();
    let status = terminated.wait().unwrap();
    drop(stdin);
    let log = std::fs::read_to_string(checkout.dir.path().join("terminated.log")).unwrap();
    assert_eq!(status.code(), Some(128 + 15), "{status}; its log:\n{log}");
    let left = shared_servers::survivors_after(MARKER, &marker, Duration::from_secs(6));
    assert!(
        left.is_empty(),
        "{} of {} processes outlived the shared runs by 6 s: {left:#?}",
        left.len(),
        before.len()
    );
    assert!(
        !checkout.socket().exists(),
        "{} is left",
        checkout.socket().display()
    );
}
