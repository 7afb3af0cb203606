//! The debug tool through the binary: `agent-tools batch` keeps one run, so a
//! debugpy session spans its calls, and nothing outlives the process.
#![cfg(all(feature = "debug", feature = "cli"))]

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use test_support::cli::text;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agent-tools"));
    c.env("PATH", test_support::fixtures::path_env());
    c
}

fn batch(root: &Path, extra: &[&str], calls: &[Value]) -> Vec<Value> {
    let out = test_support::cli::batch(
        bin().arg("batch").arg("--root").arg(root).args(extra),
        calls,
    );
    assert!(out.elapsed < Duration::from_mins(2));
    eprintln!("{}\n{}", out.stdout, out.stderr);
    out.answers()
}

/// Live processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    use tool_core::process::procfs;
    procfs::live_processes()
        .into_iter()
        .filter(|s| procfs::cmdline(s.pid).is_some_and(|c| c.contains(needle)))
        .map(|s| s.pid)
        .collect()
}

fn python_project() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("debug-batch-")
        .tempdir()
        .unwrap();
    let fixture = test_support::project::fixture("debug", "python");
    for f in ["avg.py", "requirements.txt"] {
        std::fs::copy(fixture.join(f), dir.path().join(f)).unwrap();
    }
    dir
}

#[test]
fn a_debug_session_spans_batch_calls_and_dies_with_the_process() {
    if test_support::fixtures::require(&["debugpy"]).is_none() {
        return;
    }
    let dir = python_project();
    let results = batch(
        dir.path(),
        &[],
        &[
            json!({"tool": "debug", "args": {"op": "breakpoints", "file": "avg.py", "lines": [9]}}),
            json!({"tool": "debug", "args": {"op": "launch", "program": "avg.py"}}),
            json!({"tool": "debug", "args": {"op": "evaluate", "expression": "total"}}),
            json!({"tool": "debug", "args": {"op": "launch", "program": "avg.py"}}),
            json!({"tool": "debug", "args": {"op": "continue"}}),
            json!({"tool": "debug", "args": {"op": "output"}}),
        ],
    );
    assert_eq!(results.len(), 6);
    assert!(results[0]["ok"].as_bool().unwrap());
    let launch = &results[1];
    assert_eq!(launch["structured"]["state"], "stopped", "{launch}");
    assert!(text(launch).contains("in mean at avg.py:9"), "{launch}");
    assert_eq!(results[2]["structured"]["result"], "104", "{}", results[2]);
    assert_eq!(results[3]["ok"], false);
    assert_eq!(results[3]["error"]["kind"], "refused", "{}", results[3]);
    assert_eq!(results[4]["structured"]["exit_code"], 0, "{}", results[4]);
    assert!(text(&results[5]).contains("mean: 17.33"), "{}", results[5]);
    let needle = dir.path().to_string_lossy().into_owned();
    assert!(processes_mentioning(&needle).is_empty());
}

#[test]
fn a_session_left_stopped_is_killed_when_batch_ends() {
    if test_support::fixtures::require(&["debugpy"]).is_none() {
        return;
    }
    let dir = python_project();
    let cfg = dir.path().join("agent-tools.toml");
    std::fs::write(&cfg, "[debug]\nttl_seconds = 600\nwait_seconds = 40\n").unwrap();
    let results = batch(
        dir.path(),
        &["--config", cfg.to_str().unwrap()],
        &[
            json!({"tool": "debug", "args": {"op": "breakpoints", "file": "avg.py", "lines": [6]}}),
            json!({"tool": "debug", "args": {"op": "launch", "program": "avg.py"}}),
            json!({"tool": "debug", "args": {"op": "status"}}),
        ],
    );
    assert_eq!(
        results[1]["structured"]["state"], "stopped",
        "{}",
        results[1]
    );
    assert!(
        text(&results[2]).contains("of its TTL left"),
        "{}",
        results[2]
    );
    // The process exited with the session still stopped: the debuggee and
    // the adapter went with it.
    let needle = dir.path().join("avg.py").to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_mentioning(&needle).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        processes_mentioning(&needle).is_empty(),
        "a debuggee outlived batch"
    );

    // A bad [debug] section is reported, not ignored.
    std::fs::write(&cfg, "[debug]\nttl = 5\n").unwrap();
    let out = bin()
        .args(["doctor", "--root"])
        .arg(dir.path())
        .arg("--config")
        .arg(&cfg)
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&out.stdout);
    assert!(doctor.contains("unknown field `ttl`"), "{doctor}");
}

#[test]
fn doctor_reports_which_adapters_are_usable_here() {
    let dir = python_project();
    let out = bin()
        .args(["doctor", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&out.stdout);
    assert!(doctor.contains("debug:"), "{doctor}");
    assert!(doctor.contains("delve    not usable"), "{doctor}");
    assert!(doctor.contains("lldb     not usable"), "{doctor}");
}
