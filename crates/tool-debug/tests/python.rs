//! debug over debugpy, the real adapter, on Python fixtures; the project
//! `.venv` is made by the test, without debugpy in it.

mod common;

use common::*;
use serde_json::json;
use std::time::Duration;

fn have_debugpy() -> bool {
    tool_core::fixtures::require(&["debugpy"]).is_some()
        && tool_core::fixtures::require(&["python3"]).is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_bug_is_found_end_to_end_in_a_project_venv() {
    if !have_debugpy() {
        return;
    }
    let dir = copy_fixture("python");
    // The project's own interpreter: a .venv without debugpy.
    let status = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(dir.path())
        .env("PATH", tool_core::fixtures::path_env())
        .status()
        .unwrap();
    assert!(status.success());
    let b = bench(dir.path(), config());

    let (text, s) = b.call(json!({"op": "adapters"})).await;
    assert!(
        s["usable"].as_array().unwrap().contains(&json!("debugpy")),
        "{text}"
    );
    assert!(text.contains(".venv/bin/python"), "{text}");

    let (text, _) = b
        .call(json!({"op": "breakpoints", "file": "avg.py", "lines": [6]}))
        .await;
    assert!(
        text.contains("avg.py:6 set") && text.contains("sent to the adapter at launch"),
        "{text}"
    );

    let (text, s) = b.call(json!({"op": "launch", "program": "avg.py"})).await;
    assert!(
        text.contains("debugpy is not installed in the project interpreter"),
        "{text}"
    );
    assert!(text.contains("breakpoint avg.py:6 verified"), "{text}");
    assert_eq!(s["state"], "stopped", "{text}");
    assert_eq!(s["reason"], "breakpoint");
    assert_eq!(
        (
            s["function"].as_str(),
            s["file"].as_str(),
            s["line"].as_u64()
        ),
        (Some("mean"), Some("avg.py"), Some(6))
    );
    assert!(text.contains("    6 |     total = 0"), "{text}");
    let recorded = b.processes().await;
    assert!(
        recorded.len() >= 2,
        "adapter and debuggee recorded: {recorded:?}"
    );

    let (text, stack) = b.call(json!({"op": "stack"})).await;
    assert!(
        text.contains("mean at avg.py:6") && text.contains("main at avg.py:15"),
        "{text}"
    );
    let frame = first_frame(&stack);

    let (text, scopes) = b.call(json!({"op": "scopes", "frame_id": frame})).await;
    assert!(text.contains("Locals"), "{text}");
    let locals = scopes["scopes"][0]["reference"].as_u64().unwrap();
    let (text, _) = b
        .call(json!({"op": "variables", "reference": locals}))
        .await;
    assert!(
        text.contains("xs (list) = [4, 8, 15, 16, 23, 42]"),
        "{text}"
    );

    let (text, s) = b
        .call(json!({"op": "evaluate", "expression": "len(xs)"}))
        .await;
    assert_eq!(s["result"], "6", "{text}");
    let (_, s) = b
        .call(json!({"op": "evaluate", "expression": "xs[0] + xs[1]", "frame_id": frame}))
        .await;
    assert_eq!(s["result"], "12");

    let (text, s) = b.call(json!({"op": "step_over"})).await;
    assert_eq!(
        (s["reason"].as_str(), s["line"].as_u64()),
        (Some("step"), Some(7)),
        "{text}"
    );
    assert!(text.contains("for i in range(1, len(xs)):"), "{text}");

    // The frame id of the previous stop is refused, never answered with
    // another frame's data.
    let err = b.err(json!({"op": "scopes", "frame_id": frame})).await;
    assert!(
        err.to_string().contains("from an earlier stop")
            && err.to_string().contains("call stack again"),
        "{err}"
    );
    let err = b.err(json!({"op": "variables", "reference": locals})).await;
    assert!(err.to_string().contains("from an earlier stop"), "{err}");

    let (text, s) = b.call(json!({"op": "continue"})).await;
    assert_eq!(s["state"], "ended", "{text}");
    assert_eq!(s["exit_code"], 0, "{text}");

    let (text, _) = b.call(json!({"op": "output"})).await;
    assert!(text.contains("mean: 17.333333333333332"), "{text}");
    assert!(
        text.contains(".venv"),
        "the program ran with the project .venv: {text}"
    );
    let (text, _) = b.call(json!({"op": "output"})).await;
    assert!(text.contains("no new output"), "{text}");

    assert_no_orphans(&b, &recorded).await;
    let (text, _) = b.call(json!({"op": "status"})).await;
    assert!(
        text.contains("ended: the program exited with code 0"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_launch_is_refused_with_the_state_of_the_first() {
    if !have_debugpy() {
        return;
    }
    let dir = copy_fixture("python");
    let b = bench(dir.path(), config());
    b.call(json!({"op": "breakpoints", "file": "avg.py", "lines": [9]}))
        .await;
    let (text, _) = b.call(json!({"op": "launch", "program": "avg.py"})).await;
    assert!(text.contains("avg.py:9"), "{text}");
    let recorded = b.processes().await;
    let err = b.err(json!({"op": "launch", "program": "quick.py"})).await;
    let msg = err.to_string();
    assert!(matches!(err, tool_core::ToolError::Refused(_)), "{msg}");
    assert!(
        msg.contains("already running") && msg.contains("avg.py under debugpy"),
        "{msg}"
    );
    assert!(
        msg.contains("stopped (breakpoint)") && msg.contains("mean at avg.py:9"),
        "{msg}"
    );
    // The first session is untouched.
    let (_, s) = b
        .call(json!({"op": "evaluate", "expression": "total"}))
        .await;
    assert_eq!(s["result"], "104");
    let (text, _) = b.call(json!({"op": "terminate"})).await;
    assert!(text.contains("terminated"), "{text}");
    assert_no_orphans(&b, &recorded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_exits_before_its_breakpoint_reports_exit_and_output() {
    if !have_debugpy() {
        return;
    }
    let dir = copy_fixture("python");
    let b = bench(dir.path(), config());
    b.call(json!({"op": "breakpoints", "file": "quick.py", "lines": [5]}))
        .await;
    let (text, s) = b.call(json!({"op": "launch", "program": "quick.py"})).await;
    assert_eq!(s["state"], "ended", "{text}");
    assert_eq!(s["exit_code"], 0, "{text}");
    assert!(
        text.contains("exited with code 0") && text.contains("quick exit"),
        "{text}"
    );
    let err = b.err(json!({"op": "stack"})).await;
    assert!(err.to_string().contains("has ended"), "{err}");
    assert!(b.processes().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_loop_is_still_running_within_the_bound_and_pause_stops_it() {
    if !have_debugpy() {
        return;
    }
    let dir = copy_fixture("python");
    let b = bench(dir.path(), config());
    let started = std::time::Instant::now();
    let (text, s) = b
        .call(json!({"op": "launch", "program": "spin.py", "timeout_seconds": 3}))
        .await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(s["state"], "running", "{text}");
    assert!(
        text.contains("still running after 3 s") && text.contains("call pause"),
        "{text}"
    );
    let recorded = b.processes().await;

    // Operations that need a stopped thread say so instead of hanging.
    let err = b.err(json!({"op": "stack"})).await;
    assert!(
        err.to_string().contains("needs a stopped program") && err.to_string().contains("pause"),
        "{err}"
    );
    let err = b.err(json!({"op": "step_over"})).await;
    assert!(err.to_string().contains("already running"), "{err}");
    let err = b.err(json!({"op": "pause", "thread_id": 4242})).await;
    assert!(
        err.to_string().contains("thread 4242 does not exist"),
        "{err}"
    );

    let (text, s) = b.call(json!({"op": "pause"})).await;
    assert_eq!(
        (s["state"].as_str(), s["reason"].as_str()),
        (Some("stopped"), Some("pause")),
        "{text}"
    );
    let (text, _) = b.call(json!({"op": "stack"})).await;
    // debugpy may report line 0 for a thread paused mid-line; the file is
    // still named.
    assert!(text.contains("<module> at spin.py"), "{text}");
    let (text, s) = b.call(json!({"op": "pause"})).await;
    assert!(text.contains("already stopped"), "{text}");
    assert_eq!(s["already"], true);
    let (_, s) = b
        .call(json!({"op": "evaluate", "expression": "n > 0"}))
        .await;
    assert_eq!(s["result"], "True");
    let (text, _) = b.call(json!({"op": "output"})).await;
    assert!(text.contains("spinning"), "{text}");
    let (_, threads) = b.call(json!({"op": "threads"})).await;
    assert!(!threads["threads"].as_array().unwrap().is_empty());
    b.call(json!({"op": "terminate"})).await;
    assert_no_orphans(&b, &recorded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ttl_ends_the_session_and_the_next_call_says_so() {
    if !have_debugpy() {
        return;
    }
    let dir = copy_fixture("python");
    let mut cfg = config();
    // Long enough for a launch on a loaded machine, short for a test.
    cfg.ttl = Duration::from_secs(20);
    let b = bench(dir.path(), cfg);
    b.call(json!({"op": "breakpoints", "file": "avg.py", "lines": [6]}))
        .await;
    let (_, s) = b.call(json!({"op": "launch", "program": "avg.py"})).await;
    assert_eq!(s["state"], "stopped");
    let recorded = b.processes().await;
    let launched = std::time::Instant::now();
    while !b.processes().await.is_empty() && launched.elapsed() < Duration::from_secs(40) {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(all_gone(&recorded).await, "the TTL left processes behind");
    let err = b.err(json!({"op": "stack"})).await;
    let msg = err.to_string();
    assert!(
        msg.contains("TTL of 20 s ran out") && msg.contains("launch again"),
        "{msg}"
    );
    let (text, _) = b.call(json!({"op": "status"})).await;
    assert!(text.contains("TTL of 20 s ran out"), "{text}");
    // The session's processes were recorded and are gone; nothing is left.
    assert_no_orphans(&b, &recorded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_clear_errors_and_changes_nothing() {
    if !have_debugpy() {
        return;
    }
    let dir = copy_fixture("python");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.py"), "print(1)\n").unwrap();
    let b = bench(dir.path(), config());
    let err = b.err(json!({"op": "frobnicate"})).await;
    assert!(
        err.to_string().contains("unknown variant `frobnicate`")
            && err.to_string().contains("launch"),
        "{err}"
    );
    let err = b.err(json!({"op": "launch"})).await;
    assert!(err.to_string().contains("launch needs `program`"), "{err}");
    let err = b
        .err(json!({"op": "launch", "program": "missing.py"}))
        .await;
    assert!(err.to_string().contains("does not exist"), "{err}");
    let err = b
        .err(json!({"op": "launch", "program": "requirements.txt"}))
        .await;
    assert!(
        err.to_string().contains("cannot tell which debugger"),
        "{err}"
    );
    let err = b
        .err(json!({"op": "launch", "program": "avg.py", "adapter": "gdb"}))
        .await;
    assert!(err.to_string().contains("unknown adapter `gdb`"), "{err}");
    let bad = outside.path().join("x.py");
    let err = b
        .err(json!({"op": "breakpoints", "file": bad.to_str().unwrap(), "lines": [1]}))
        .await;
    assert!(err.to_string().contains("outside the workspace"), "{err}");
    let err = b
        .err(json!({"op": "breakpoints", "file": "../x.py", "lines": [1]}))
        .await;
    assert!(err.to_string().contains("outside the workspace"), "{err}");
    let err = b
        .err(json!({"op": "breakpoints", "file": "avg.py", "lines": [0]}))
        .await;
    assert!(err.to_string().contains("1-based"), "{err}");
    let err = b.err(json!({"op": "stack"})).await;
    assert!(err.to_string().contains("no debug session"), "{err}");
    let err = b
        .err(json!({"op": "launch", "program": "avg.py", "colour": 1}))
        .await;
    assert!(err.to_string().contains("unknown field `colour`"), "{err}");
    let (text, s) = b.call(json!({"op": "status"})).await;
    assert_eq!(s["state"], "none", "{text}");
    assert_eq!(s["breakpoints"], 0, "{text}");

    // Breakpoints with empty lines clear the file; a live session hears it.
    b.call(json!({"op": "breakpoints", "file": "avg.py", "lines": [6, 9]}))
        .await;
    let (text, _) = b
        .call(json!({"op": "breakpoints", "file": "avg.py", "lines": []}))
        .await;
    assert!(text.contains("cleared"), "{text}");
    b.call(json!({"op": "breakpoints", "file": "avg.py", "lines": [6]}))
        .await;
    let (_, s) = b.call(json!({"op": "launch", "program": "avg.py"})).await;
    assert_eq!(s["line"], 6);
    let recorded = b.processes().await;
    let err = b.err(json!({"op": "stack", "thread_id": 999999})).await;
    assert!(
        err.to_string().contains("thread 999999 does not exist"),
        "{err}"
    );
    let err = b.err(json!({"op": "scopes", "frame_id": 987654})).await;
    assert!(err.to_string().contains("no frame 987654"), "{err}");
    let (text, _) = b
        .call(json!({"op": "breakpoints", "file": "avg.py", "lines": [9, 8]}))
        .await;
    assert!(
        text.contains("avg.py:8 verified") && text.contains("avg.py:9 verified"),
        "{text}"
    );
    let (text, _) = b
        .call(json!({"op": "breakpoints", "file": "avg.py", "lines": []}))
        .await;
    assert!(text.contains("cleared"), "{text}");
    let (text, s) = b.call(json!({"op": "continue"})).await;
    assert_eq!(
        s["state"], "ended",
        "no breakpoint is left to stop at: {text}"
    );
    assert_no_orphans(&b, &recorded).await;
}
