//! The vibe tools through the binary: `--vibe-fast`/`--vibe-good` (or the
//! config file) turn vibe mode on for `call` and `batch`, with the test
//! worker script as the real worker commands.
#![cfg(all(feature = "vibe", feature = "cli"))]

use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tool_core::process::pid_alive;

fn worker(tier: &str) -> String {
    let script = tool_core::fixtures::workspace_root().join("tests/fixtures/vibe/worker.sh");
    assert!(script.is_file(), "{} is missing", script.display());
    format!("sh {} {tier}", script.display())
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agent-tools"))
}

/// Run `batch` with these calls; one JSON result per call.
fn batch(extra: &[String], root: &std::path::Path, calls: &[Value]) -> (i32, Vec<Value>) {
    let mut child = bin()
        .arg("batch")
        .arg("--root")
        .arg(root)
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for c in calls {
        writeln!(stdin, "{c}").unwrap();
    }
    drop(stdin);
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(60));
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code().unwrap_or(-1), lines)
}

fn text(v: &Value) -> String {
    v["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn batch_spawns_waits_lists_and_no_worker_outlives_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile: PathBuf = dir.path().join("left.pid");
    let flags = vec![
        "--vibe-fast".to_string(),
        worker("fast"),
        "--vibe-good".to_string(),
        worker("good"),
    ];
    let (code, results) = batch(
        &flags,
        dir.path(),
        &[
            json!({"tool": "vibe_spawn", "args": {"brief": "say ported 3 files", "label": "port"}}),
            json!({"tool": "vibe_spawn", "args": {"brief": "say looks fine", "label": "review", "tier": "good"}}),
            json!({"tool": "vibe_spawn", "args": {"brief": format!("children {}\n", pidfile.display()), "label": "forever"}}),
            json!({"tool": "vibe_wait", "args": {"worker_id": "w1", "timeout_seconds": 20}}),
            json!({"tool": "vibe_wait", "args": {"worker_id": "w2", "timeout_seconds": 20}}),
            json!({"tool": "vibe_wait", "args": {"worker_id": "w3", "timeout_seconds": 1}}),
            json!({"tool": "vibe_list"}),
        ],
    );
    assert_eq!(code, 0, "{results:#?}");
    assert!(text(&results[0]).starts_with("spawned w1 \"port\" (fast, run 1)"));
    assert!(text(&results[3]).contains("result:\nfast worker w1 run 1 (port)\nported 3 files"));
    assert!(text(&results[4]).contains("good worker w2 run 1 (review)\nlooks fine"));
    assert!(text(&results[5]).contains("still running after waiting 1 s"));
    let list = text(&results[6]);
    assert!(
        list.starts_with("vibe_list: 3 workers (1 running)"),
        "{list}"
    );
    // The process has exited: the still-running worker and its children are
    // gone with it.
    let pids: Vec<u32> = std::fs::read_to_string(&pidfile)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 4);
    let deadline = Instant::now() + Duration::from_secs(3);
    while pids.iter().any(|p| pid_alive(*p)) {
        assert!(Instant::now() < deadline, "{pids:?} outlived the run");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_config_file_turns_vibe_mode_on_and_without_it_the_tools_are_absent() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("agent-tools.toml");
    std::fs::write(&config, format!("[vibe]\nfast = {:?}\n", worker("fast"))).unwrap();
    let (code, results) = batch(
        &["--config".into(), config.display().to_string()],
        dir.path(),
        &[
            json!({"tool": "vibe_spawn", "args": {"brief": "say from the config", "label": "cfg"}}),
            json!({"tool": "vibe_wait", "args": {"worker_id": "w1"}}),
            json!({"tool": "vibe_spawn", "args": {"brief": "say x", "label": "x", "tier": "good"}}),
        ],
    );
    assert_eq!(code, 1, "the last call fails");
    assert!(text(&results[1]).contains("from the config"));
    assert_eq!(results[2]["error"]["kind"], "unavailable");
    assert!(results[2]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no `good` worker command is configured in this run (configured: fast)"));

    // No worker command: vibe mode is off and the tools do not exist.
    let out = bin()
        .args(["call", "vibe_list", "{}", "--root"])
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown tool is a usage error"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown tool `vibe_list`"), "{err}");
}
