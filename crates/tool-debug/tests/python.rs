//! debug over debugpy, the real adapter, on Python fixtures; the project
//! `.venv` is made by the test, without debugpy in it.

mod common;

use common::*;
use expect_test::expect;
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
    check(
        &b,
        &text,
        expect![[r#"
        debug breakpoints  avg.py
        avg.py:6 set  | total = 0
        no session yet: they are sent to the adapter at launch"#]],
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
    check(
        &b,
        &text,
        expect![[r#"
        debug stack  thread 1, stop 1 (breakpoint)
        frame 1  mean at avg.py:6
            6 |     total = 0
        frame 2  main at avg.py:15
           15 |     result = mean(values)
        frame 3  <module> at avg.py:20
           20 |     main()
        pass a frame id to scopes or evaluate (valid until the program moves)"#]],
    );
    let frame = first_frame(&stack);

    let (text, scopes) = b.call(json!({"op": "scopes", "frame_id": frame})).await;
    check(
        &b,
        &text,
        expect![[r#"
        debug scopes  frame 1
        Locals  reference 4
        Globals  reference 5
        pass a reference to variables"#]],
    );
    let locals = scopes["scopes"][0]["reference"].as_u64().unwrap();
    let (text, _) = b
        .call(json!({"op": "variables", "reference": locals}))
        .await;
    check(
        &b,
        &text,
        expect![[r#"
        debug variables  reference 4 (1 variable)
        xs (list) = [4, 8, 15, 16, 23, 42]  [reference 6]"#]],
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
    check(
        &b,
        &text,
        expect![[r#"
            debug step_over  thread 1
            stopped (step) thread 1 in mean at avg.py:7
                7 |     for i in range(1, len(xs)):
            locals: total = 0, xs = [4, 8, 15, 16, 23, 42]"#]],
    );

    // The frame id of the previous stop is refused, never answered with
    // another frame's data.
    let err = b.err(json!({"op": "scopes", "frame_id": frame})).await;
    check(&b, &err.to_string(), expect!["refused: that frame (1) is from an earlier stop; the program is now at stop 2; call stack again"]);
    let err = b.err(json!({"op": "variables", "reference": locals})).await;
    check(&b, &err.to_string(), expect!["refused: that variables reference (4) is from an earlier stop; the program is now at stop 2; call stack and scopes again"]);

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
    check(
        &b,
        &text,
        expect![[r#"
        debug output  avg.py
        (no new output since the last call)
        (session ended: the program exited with code 0)"#]],
    );

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
    // Everything but the session's age.
    let (before_age, _) = msg.split_once(" (launched ").expect("the age is said");
    check(&b, before_age, expect!["refused: a debug session is already running for this conversation: avg.py under debugpy, stopped (breakpoint) thread 1 in mean at avg.py:9"]);
    // The first session is untouched.
    let (_, s) = b
        .call(json!({"op": "evaluate", "expression": "total"}))
        .await;
    assert_eq!(s["result"], "104");
    let (text, _) = b.call(json!({"op": "terminate"})).await;
    check(
        &b,
        &text,
        expect![[r#"
        debug terminate  avg.py
        terminated: the program, the adapter and every process they started are gone"#]],
    );
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
    // Past the headline and the note on the interpreter (both name the
    // machine's paths and versions).
    let rest: Vec<&str> = text
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("note: "))
        .collect();
    check(
        &b,
        &rest.join("\n"),
        expect![[r#"
        breakpoint quick.py:5 verified  | return "unreachable"
        the program exited with code 0
        output (tail; the output op returns all of it):
        quick exit"#]],
    );
    let err = b.err(json!({"op": "stack"})).await;
    check(&b, &err.to_string(), expect!["refused: the debug session of quick.py has ended: the program exited with code 0; launch again to start a new one"]);
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
    let mut errors = Vec::new();
    for args in [
        json!({"op": "stack"}),
        json!({"op": "step_over"}),
        json!({"op": "pause", "thread_id": 4242}),
    ] {
        errors.push(normalized(&b, &b.err(args).await.to_string()));
    }
    expect![[r#"
        [
            "refused: `stack` needs a stopped program, and spin.py is running; call pause to stop it where it is, or wait for a breakpoint with continue",
            "refused: spin.py is already running; `step_over` needs it stopped: call pause to stop it where it is",
            "bad arguments: thread 4242 does not exist; threads are: 1 (MainThread)",
        ]
    "#]].assert_debug_eq(&errors);

    // Under load the bound can run out before the program reached its
    // loop; `n` exists once "spinning" is out (the flake: `NameError: n`
    // from a pause that came first).
    let mut printed = String::new();
    for _ in 0..200 {
        printed.push_str(&b.call(json!({"op": "output"})).await.0);
        if printed.contains("spinning") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(printed.contains("spinning"), "{printed}");
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
    assert!(
        text.starts_with("debug pause  already stopped; nothing to pause\npaused — thread 1"),
        "{text}"
    );
    assert_eq!(s["already"], true);
    let (_, s) = b
        .call(json!({"op": "evaluate", "expression": "n > 0"}))
        .await;
    assert_eq!(s["result"], "True");
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
    check(&b, &err.to_string(), expect!["refused: the debug session of avg.py has ended: the session's TTL of 20 s ran out, so the program and its adapter were terminated; launch again to start a new one"]);
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
    let mut errors = Vec::new();
    for args in [
        json!({"op": "frobnicate"}),
        json!({"op": "launch"}),
        json!({"op": "launch", "program": "missing.py"}),
        json!({"op": "launch", "program": "requirements.txt"}),
        json!({"op": "launch", "program": "avg.py", "adapter": "gdb"}),
        json!({"op": "breakpoints", "file": outside.path().join("x.py"), "lines": [1]}),
        json!({"op": "breakpoints", "file": "../x.py", "lines": [1]}),
        json!({"op": "breakpoints", "file": "avg.py", "lines": [0]}),
        json!({"op": "breakpoints", "file": "avg.py", "lines": [{"line": 6, "when": "x"}]}),
        json!({"op": "breakpoints", "file": "avg.py", "lines": ["6"]}),
        json!({"op": "breakpoints", "file": "avg.py", "lines": [{"line": 6, "condition": " "}]}),
        json!({"op": "breakpoints", "file": "avg.py", "lines": [6, {"line": 6, "hit_condition": "2"}]}),
        json!({"op": "stack"}),
        json!({"op": "launch", "program": "avg.py", "colour": 1}),
    ] {
        let err = b.err(args).await.to_string();
        let outside = outside.path().canonicalize().unwrap();
        errors.push(normalized(&b, &err).replace(outside.to_str().unwrap(), "<outside>"));
    }
    expect![[r#"
        [
            "bad arguments: argument `op`: unknown variant `frobnicate`, expected one of `adapters`, `status`, `breakpoints`, `function_breakpoints`, `exception_breakpoints`, `launch`, `restart`, `attach`, `continue`, `pause`, `step_over`, `step_in`, `step_out`, `threads`, `stack`, `scopes`, `variables`, `locals`, `evaluate`, `set_variable`, `modules`, `disassemble`, `read_memory`, `output`, `terminate`; check the tool's input schema",
            "bad arguments: launch needs `program`: the file to run (a .py or .go file, a Go package folder, or a compiled executable), relative to the workspace root",
            "bad arguments: program `missing.py` does not exist in the workspace; check the path (relative to the workspace root), or build it first",
            "bad arguments: cannot tell which debugger runs `requirements.txt`: it is not a .py, .go or .dart file, a Go package or a compiled executable; pass `adapter` (one of debugpy, lldb, delve, dart), or for C/C++ launch the executable built with -g",
            "bad arguments: unknown adapter `gdb`; known: debugpy, lldb, delve, dart",
            "bad arguments: `<outside>/x.py` is outside the workspace; only paths inside <root> can be used (give them relative to it)",
            "bad arguments: `../x.py` is outside the workspace; only paths inside <root> can be used (give them relative to it)",
            "bad arguments: line 0 is not a line: lines are 1-based",
            "bad arguments: argument `lines[0]`: unknown field `when`, expected one of `line`, `condition`, `hit_condition`, `log_message`; check the tool's input schema",
            "bad arguments: argument `lines[0]`: a breakpoint is a line number or an object like {\"line\": 12, \"condition\": \"x > 3\"}, not \"6\"; check the tool's input schema",
            "bad arguments: the breakpoint at line 6: `condition` is empty; leave it out, or give it text",
            "bad arguments: line 6 is given twice, with different conditions; give each line once",
            "refused: no debug session is running; set breakpoints and launch a program first",
            "bad arguments: argument `colour`: unknown field `colour`, expected one of `op`, `file`, `lines`, `functions`, `filters`, `program`, `args`, `stdin`, `env`, `cwd`, `mode`, `test`, `adapter`, `port`, `pid`, `thread_id`, `frame_id`, `reference`, `expression`, `context`, `name`, `value`, `memory_reference`, `count`, `timeout_seconds`; check the tool's input schema",
        ]
    "#]].assert_debug_eq(&errors);
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
    check(
        &b,
        &err.to_string(),
        expect!["bad arguments: thread 999999 does not exist; threads are: 1 (MainThread)"],
    );
    let err = b.err(json!({"op": "scopes", "frame_id": 987654})).await;
    check(&b, &err.to_string(), expect!["bad arguments: there is no frame 987654; take ids from stack, scopes or variables of the current stop"]);
    let (text, _) = b
        .call(json!({"op": "breakpoints", "file": "avg.py", "lines": [9, 8]}))
        .await;
    check(
        &b,
        &text,
        expect![[r#"
        debug breakpoints  avg.py
        avg.py:8 verified  | total += xs[i]
        avg.py:9 verified  | return total / len(xs)"#]],
    );
    let (text, _) = b
        .call(json!({"op": "breakpoints", "file": "avg.py", "lines": []}))
        .await;
    check(
        &b,
        &text,
        expect![[r#"
        debug breakpoints  avg.py
        cleared every breakpoint in avg.py"#]],
    );
    let (text, s) = b.call(json!({"op": "continue"})).await;
    assert_eq!(
        s["state"], "ended",
        "no breakpoint is left to stop at: {text}"
    );
    assert_no_orphans(&b, &recorded).await;
}
