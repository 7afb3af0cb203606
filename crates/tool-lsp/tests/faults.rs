//! Fault injection with `fault-injecting-lsp` (a tower-lsp server, crate
//! `fault-injecting-lsp`, built on demand by `test_support::fault_server`,
//! that crashes, hangs, sends a malformed frame or publishes late on
//! command): no call hangs past its bound, `status` shows the crash, the
//! next call recovers, and no process survives the run.

mod common;

use common::{assert_all_dead, masked, Run};
use serde_json::json;
use std::time::{Duration, Instant};
use test_support::fault_server::fault_injecting_lsp;
use tool_lsp::{CatalogConfig, LspBinding};

fn binding(request_ms: u64, diagnostics_ms: u64) -> LspBinding {
    let config: CatalogConfig = serde_json::from_value(json!({
        "servers": [{
            "id": "faulty", "extensions": {"fault": "fault"},
            "commands": [[fault_injecting_lsp()]], "root_markers": ["fault.toml"],
            "startup_settle_ms": 0
        }],
        "request_timeout_ms": request_ms,
        "diagnostics_wait_ms": diagnostics_ms,
        "index_wait_ms": 2000
    }))
    .unwrap();
    LspBinding::new(config)
}

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("fault.toml"), "").unwrap();
    std::fs::write(
        d.path().join("a.fault"),
        "fine here\ncrash here\nhang here\ngarbage here\n",
    )
    .unwrap();
    d
}

/// The `faulty` server's line of a `status` answer, masked (the other lines
/// list the built-in catalog, which servers of it are installed varies).
fn server_line(status: &str, root: &std::path::Path) -> String {
    let line = status
        .lines()
        .find(|l| l.starts_with("faulty "))
        .unwrap_or_else(|| panic!("no faulty line in:\n{status}"));
    masked(line, root)
}

fn hover(line: u32, symbol: &str) -> serde_json::Value {
    json!({"op": "hover", "file": "a.fault", "line": line, "symbol": symbol})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_answer_of_a_cold_server_is_asked_again_before_it_is_believed() {
    let dir = project();
    std::fs::write(dir.path().join("a.fault"), "cold here\n").unwrap();
    let run = Run::with_binding(dir, binding(20_000, 2_000));
    // The server answers nothing three times, as one that has not analysed
    // the file yet; the fourth answer is the one the model gets.
    let out = run.lsp(hover(1, "cold")).await;
    assert_eq!(
        out,
        "lsp hover  `cold` at a.fault:1\nfault-injecting hover for line 1"
    );
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_request_fails_at_once_and_the_next_call_recovers() {
    let run = Run::with_binding(project(), binding(20_000, 2_000));
    let out = run.lsp(hover(1, "fine")).await;
    expect_test::expect![[r#"
        lsp hover  `fine` at a.fault:1
        fault-injecting hover for line 1"#]]
    .assert_eq(&out);
    let first = run.pids().await;

    let started = Instant::now();
    let err = run
        .call("lsp", hover(2, "crash"))
        .await
        .unwrap_err()
        .to_string();
    // Noticed at the exit, not at the 20 s request timeout.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    expect_test::expect!["failed: faulty (<fault-injecting-lsp>) is gone (exit status 3); the next call restarts it — retry the call, or run `lsp` op `status`"].assert_eq(&masked(&err, &run.root));
    assert_all_dead(&first).await;

    let status = run.lsp(json!({"op": "status"})).await;
    expect_test::expect!["faulty at . (<fault-injecting-lsp>): crashed ×1 (last T s ago: exit status 3); the next call restarts it"].assert_eq(&server_line(&status, &run.root));

    let out = run.lsp(hover(1, "fine")).await;
    expect_test::expect![[r#"
        lsp hover  `fine` at a.fault:1
        fault-injecting hover for line 1"#]]
    .assert_eq(&out);
    let status = run.lsp(json!({"op": "status"})).await;
    expect_test::expect!["faulty at . (<fault-injecting-lsp>): running, pid PID, ready (utf-16 positions); restarted after it crashed ×1 (last T s ago: exit status 3)"].assert_eq(&server_line(&status, &run.root));
    assert_ne!(run.pids().await, first);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_request_times_out_is_cancelled_and_the_server_keeps_serving() {
    let run = Run::with_binding(project(), binding(1_000, 2_000));
    run.lsp(hover(1, "fine")).await;
    let pids = run.pids().await;
    let started = Instant::now();
    let err = run.call("lsp", hover(3, "hang")).await.unwrap_err();
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(4),
        "{took:?}"
    );
    let msg = err.to_string();
    assert!(matches!(err, tool_core::ToolError::TimedOut(_)), "{msg}");
    expect_test::expect!["timed out: faulty (<fault-injecting-lsp>): `textDocument/hover` got no answer within 1000 ms (the request was cancelled); the server is still running — retry, or `lsp` op `reload` if it keeps happening"].assert_eq(&masked(&msg, &run.root));
    // The server was told to stop working on it.
    let client = run.binding.supervisor().unwrap().clients().await.remove(0);
    for _ in 0..50 {
        if client
            .stderr_tail(4096)
            .lines()
            .any(|l| l == "fault-injecting-lsp: hover cancelled")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    expect_test::expect!["fault-injecting-lsp: hover cancelled"]
        .assert_eq(&masked(&client.stderr_tail(4096), &run.root));
    // Same process, still answering.
    let out = run.lsp(hover(1, "fine")).await;
    expect_test::expect![[r#"
        lsp hover  `fine` at a.fault:1
        fault-injecting hover for line 1"#]]
    .assert_eq(&out);
    assert_eq!(run.pids().await, pids);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_frame_drops_the_server_and_the_next_call_recovers() {
    let run = Run::with_binding(project(), binding(20_000, 2_000));
    run.lsp(hover(1, "fine")).await;
    let first = run.pids().await;
    let started = Instant::now();
    let err = run
        .call("lsp", hover(4, "garbage"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    expect_test::expect![[r#"failed: faulty (<fault-injecting-lsp>) is gone (it broke the protocol (malformed frame header: expected `Name: value`, got "this is not a header") and was killed); the next call restarts it — retry the call, or run `lsp` op `status`"#]].assert_eq(&masked(&err, &run.root));
    assert_all_dead(&first).await;
    let status = run.lsp(json!({"op": "status"})).await;
    expect_test::expect![[r#"faulty at . (<fault-injecting-lsp>): crashed ×1 (last T s ago: it broke the protocol (malformed frame header: expected `Name: value`, got "this is not a header") and was killed); the next call restarts it"#]].assert_eq(&server_line(&status, &run.root));
    let out = run.lsp(hover(1, "fine")).await;
    expect_test::expect![[r#"
        lsp hover  `fine` at a.fault:1
        fault-injecting hover for line 1"#]]
    .assert_eq(&out);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_diagnostics_are_waited_for_within_the_bound_and_said_when_not_ready() {
    let run = Run::with_binding(project(), binding(20_000, 1_000));
    // Published 300 ms late: inside the bound, reported.
    let out = run
        .call(
            "write",
            json!({"path": "b.fault", "content": "delay_ms=300\nok\n"}),
        )
        .await
        .unwrap();
    expect_test::expect![[r#"
        wrote b.fault
        lsp: no new errors or warnings in b.fault"#]]
    .assert_eq(&out);
    let out = run
        .call(
            "write",
            json!({"path": "b.fault", "content": "delay_ms=300\nok\nan ERROR\n"}),
        )
        .await
        .unwrap();
    expect_test::expect![[r#"
        wrote b.fault
        lsp: 1 new problem in b.fault after this write:
        b.fault:3:4 error [F001] fault: ERROR marker"#]]
    .assert_eq(&out);
    // Published 3 s late: the 1 s bound runs out and the result says so.
    let started = Instant::now();
    let out = run
        .call(
            "write",
            json!({"path": "b.fault", "content": "delay_ms=3000\nan ERROR\nan ERROR\n"}),
        )
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(2_500),
        "{:?}",
        started.elapsed()
    );
    expect_test::expect![[r#"
        wrote b.fault
        lsp: diagnostics still pending for b.fault after 1000 ms (faulty is still working); they will come with a later result"#]].assert_eq(&out);
    // The diagnostics op says the same rather than "no errors".
    let err = run
        .call("lsp", json!({"op": "diagnostics", "file": "b.fault"}))
        .await;
    match err {
        // The late publish may have landed by now; then it is complete.
        Ok(out) => expect_test::expect![[r#"
            lsp diagnostics  b.fault (faulty) — 2 errors, 0 warnings
            b.fault:2:4 error [F001] fault: ERROR marker
            b.fault:3:4 error [F001] fault: ERROR marker"#]]
        .assert_eq(&out),
        Err(e) => expect_test::expect!["timed out: diagnostics of b.fault not ready after 1000 ms (faulty (<fault-injecting-lsp>) is running but has not published for this version); retry in a moment"].assert_eq(&masked(&e.to_string(), &run.root)),
    }
    // When they come, they are posted on the run's notice board: the next
    // result of any tool carries them, once, after its own text.
    let board = run.registry.notices();
    let deadline = Instant::now() + Duration::from_secs(30);
    while board.pending_count() == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = run
        .call("write", json!({"path": "c.fault", "content": "ok\n"}))
        .await
        .unwrap();
    let out = tool_core::notices::mask_ages(&out);
    let (head, rest) = out
        .split_once(" s after it: ")
        .unwrap_or_else(|| panic!("no late diagnostics in:\n{out}"));
    let (head, _seconds) = head.rsplit_once(", ").unwrap();
    assert_eq!(
        format!("{head}, … s after it: {rest}"),
        "wrote c.fault\nlsp: no new errors or warnings in c.fault\n\
         --- 1 notice from elsewhere in this run (not part of this result) ---\n\
         [lsp warning, …] lsp: late diagnostics from your write to b.fault, … s after it: \
         1 new problem:\nb.fault:3:4 error [F001] fault: ERROR marker"
    );
    let out = run
        .call("write", json!({"path": "c.fault", "content": "ok\nok\n"}))
        .await
        .unwrap();
    assert_eq!(
        out,
        "wrote c.fault\nlsp: no new errors or warnings in c.fault"
    );
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_crashes_stop_restarts_until_reload() {
    let run = Run::with_binding(project(), binding(20_000, 2_000));
    let mut all_pids = Vec::new();
    for _ in 0..=lsp_session::supervisor::MAX_RESTARTS {
        run.lsp(hover(1, "fine")).await;
        all_pids.extend(run.pids().await);
        let _ = run.call("lsp", hover(2, "crash")).await.unwrap_err();
    }
    let err = run
        .call("lsp", hover(1, "fine"))
        .await
        .unwrap_err()
        .to_string();
    expect_test::expect!["failed: faulty (<fault-injecting-lsp>) at . crashed ×6 (last: exit status 3) and is not restarted again; run `lsp` op `reload` to start it afresh"].assert_eq(&masked(&err, &run.root));
    let status = run.lsp(json!({"op": "status"})).await;
    expect_test::expect!["faulty at . (<fault-injecting-lsp>): crashed ×6 (last T s ago: exit status 3); not restarted again — run `lsp` op `reload`"].assert_eq(&server_line(&status, &run.root));
    let out = run.lsp(json!({"op": "reload"})).await;
    expect_test::expect![[r#"
        lsp reload
        faulty at .: restarted (<fault-injecting-lsp>, pid PID)"#]]
    .assert_eq(&masked(&out, &run.root));
    let out = run.lsp(hover(1, "fine")).await;
    expect_test::expect![[r#"
        lsp hover  `fine` at a.fault:1
        fault-injecting hover for line 1"#]]
    .assert_eq(&out);
    assert_all_dead(&all_pids).await;
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_the_server_answers_with_no_edits_is_an_error_that_says_so() {
    let run = Run::with_binding(project(), binding(5_000, 2_000));
    let before = run.read("a.fault");
    let err = run
        .call(
            "lsp_rename",
            json!({"file": "a.fault", "line": 1, "symbol": "fine", "new_name": "good"}),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "refused");
    expect_test::expect!["refused: faulty (<fault-injecting-lsp>) answered the rename of `fine` at a.fault:1 to `good` with no edits: servers answer so when the symbol is not theirs to rename (a builtin, a name defined outside the workspace) or when they reject the new name; nothing was written"]
        .assert_eq(&err.to_string().replace(fault_injecting_lsp(), "<fault-injecting-lsp>"));
    assert_eq!(run.read("a.fault"), before);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_timeout_seconds_bounds_a_hung_request_and_names_the_server() {
    // The configured request bound is 60 s; the call's own is 5 s.
    let run = Run::with_binding(project(), binding(60_000, 2_000));
    run.lsp(hover(1, "fine")).await;
    let started = Instant::now();
    let mut args = hover(3, "hang");
    args["timeout_seconds"] = json!(5);
    let err = run.call("lsp", args).await.unwrap_err();
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(7),
        "{took:?}"
    );
    assert!(matches!(err, tool_core::ToolError::TimedOut(_)), "{err}");
    expect_test::expect!["timed out: faulty (<fault-injecting-lsp>): `textDocument/hover` got no answer within 5000 ms (the request was cancelled); the server is still running — retry, or `lsp` op `reload` if it keeps happening"]
        .assert_eq(&err.to_string().replace(fault_injecting_lsp(), "<fault-injecting-lsp>"));
    // The same server still answers.
    let out = run.lsp(hover(1, "fine")).await;
    expect_test::expect![[r#"
        lsp hover  `fine` at a.fault:1
        fault-injecting hover for line 1"#]]
    .assert_eq(&out);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_actions_timeout_seconds_bounds_the_whole_call_and_writes_nothing() {
    let dir = project();
    std::fs::write(dir.path().join("s.fault"), "slow here\n").unwrap();
    let run = Run::with_binding(dir, binding(60_000, 2_000));
    run.lsp(hover(1, "fine")).await;
    // The actions come after 3 s and the chosen one's command runs 3 s more:
    // each request within the call's 5 s, the call as a whole not.
    let started = Instant::now();
    let err = run
        .call(
            "lsp_code_action",
            json!({"file": "s.fault", "line": 1, "symbol": "slow", "action": 1, "timeout_seconds": 5}),
        )
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    expect_test::expect!["timed out: the faulty language server did not finish within timeout_seconds = 5 (T s elapsed, starting, indexing or answering); it keeps running — retry, or give a larger timeout_seconds"].assert_eq(&masked(&err.to_string(), &run.root));
    assert_eq!(run.read("s.fault"), "slow here\n");
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_write_without_a_baseline_says_so_rather_than_calling_all_new() {
    let dir = project();
    // Its text before the write is published only after 3 s: no baseline
    // within the 1 s bound. The written text is published at once.
    std::fs::write(dir.path().join("d.fault"), "delay_ms=3000\nan ERROR\n").unwrap();
    let run = Run::with_binding(dir, binding(20_000, 1_000));
    let out = run
        .call(
            "write",
            json!({"path": "d.fault", "content": "ok\nan ERROR\n"}),
        )
        .await
        .unwrap();
    expect_test::expect![[r#"
        wrote d.fault
        lsp: no baseline for d.fault: 1 diagnostic after the write, not known which are new — run `lsp` op `diagnostics` on it to see them"#]]
    .assert_eq(&out);
    // The ledger now holds the state after that write: a new error is new.
    let out = run
        .call(
            "write",
            json!({"path": "d.fault", "content": "ok\nan ERROR\nan ERROR\n"}),
        )
        .await
        .unwrap();
    expect_test::expect![[r#"
        wrote d.fault
        lsp: 1 new problem in d.fault after this write:
        d.fault:3:4 error [F001] fault: ERROR marker"#]]
    .assert_eq(&out);
    run.finish().await;
}

/// A server that, like biome, publishes a document's diagnostics without
/// its lint results while its configuration is still loading, and says when
/// it has loaded (a log message) before publishing everything again.
fn slow_config_binding(started_message: Option<&str>) -> LspBinding {
    let mut entry = json!({
        "id": "faulty", "extensions": {"fault": "fault"},
        "commands": [[fault_injecting_lsp(), "--configured-after-ms=1500"]], "root_markers": ["fault.toml"],
        "startup_settle_ms": 0
    });
    if let Some(m) = started_message {
        entry["started_message"] = json!(m);
    }
    let config: CatalogConfig = serde_json::from_value(json!({
        "servers": [entry],
        "diagnostics_wait_ms": 20_000,
        "index_wait_ms": 2000
    }))
    .unwrap();
    LspBinding::new(config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_still_loading_its_configuration_is_not_read_before_it_says_it_started() {
    let dir = project();
    std::fs::write(dir.path().join("l.fault"), "fine\nan ERROR\n").unwrap();
    let run = Run::with_binding(
        dir,
        slow_config_binding(Some("fault: configuration loaded")),
    );
    let out = run
        .lsp(json!({"op": "diagnostics", "file": "l.fault"}))
        .await;
    expect_test::expect![[r#"
        lsp diagnostics  l.fault (faulty) — 1 error, 0 warnings
        l.fault:2:4 error [F001] fault: ERROR marker"#]]
    .assert_eq(&out);
    run.finish().await;
}

/// A server whose progress ends only when something arrives on its stdin
/// (ccls: its main loop looks at its index counters only when a message or
/// an index update wakes it, so an indexer finishing a moment after the
/// last look leaves "indexing (1/2)" standing): a query is answered, not
/// refused as "still indexing" after the whole index wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progress_that_ends_only_when_the_server_is_woken_does_not_hold_a_query() {
    let config: CatalogConfig = serde_json::from_value(json!({
        "servers": [{
            "id": "faulty", "extensions": {"fault": "fault"},
            "commands": [[fault_injecting_lsp(), "--progress-stalls"]],
            "root_markers": ["fault.toml"], "startup_settle_ms": 0
        }],
        "index_wait_ms": 20_000
    }))
    .unwrap();
    let run = Run::with_binding(project(), LspBinding::new(config));
    // The first call opens the file; the progress begins after it.
    run.lsp(json!({"op": "diagnostics", "file": "a.fault"}))
        .await;
    // Until the progress stands (a wake sent while the first call waited
    // may already have ended it: then the hover below finds it idle).
    let began = Instant::now();
    while !server_line(&run.lsp(json!({"op": "status"})).await, &run.root)
        .split_once(", pid PID, ")
        .is_some_and(|(_, state)| state.starts_with("indexing (indexing (1/2)"))
        && began.elapsed() < Duration::from_secs(3)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = run
        .call("lsp", hover(1, "fine"))
        .await
        .unwrap_or_else(|e| e.to_string());
    expect_test::expect![[r#"
        lsp hover  `fine` at a.fault:1
        fault-injecting hover for line 1"#]]
    .assert_eq(&out);
    run.finish().await;
}

/// A server that serves diagnostics by pull alone and registers it as
/// pyright does (a second registration, then the first withdrawn), in each
/// order that leaves one standing: a write's new error is pulled, and so is
/// the `diagnostics` op's answer. Kept by method, the withdrawal dropped
/// pull, and the write waited for a publish that never came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_diagnostics_stand_while_any_registration_of_them_does() {
    let mut got = String::new();
    for script in [
        "reg:a,reg:b,unreg:a",
        "reg:a,unreg:a,reg:b",
        "reg:a,reg:b,unreg:b",
    ] {
        let config: CatalogConfig = serde_json::from_value(json!({
            "servers": [{
                "id": "faulty", "extensions": {"fault": "fault"},
                "commands": [[fault_injecting_lsp(), format!("--pull-registrations={script}")]],
                "root_markers": ["fault.toml"],
                "startup_settle_ms": 0
            }],
            "diagnostics_wait_ms": 5_000,
            "index_wait_ms": 2000
        }))
        .unwrap();
        let run = Run::with_binding(project(), LspBinding::new(config));
        // The server registers while the run starts; the first call comes
        // once it has.
        run.lsp(json!({"op": "diagnostics", "file": "a.fault"}))
            .await;
        let written = run
            .call(
                "write",
                json!({"path": "a.fault", "content": "fine\nan ERROR here\n"}),
            )
            .await
            .unwrap();
        let asked = run
            .lsp(json!({"op": "diagnostics", "file": "a.fault"}))
            .await;
        got.push_str(&format!("{script}:\n{written}\n{asked}\n"));
        run.finish().await;
    }
    expect_test::expect![[r#"
        reg:a,reg:b,unreg:a:
        wrote a.fault
        lsp: 1 new problem in a.fault after this write:
        a.fault:2:4 error [F001] fault: ERROR marker
        lsp diagnostics  a.fault (faulty) — 1 error, 0 warnings
        a.fault:2:4 error [F001] fault: ERROR marker
        reg:a,unreg:a,reg:b:
        wrote a.fault
        lsp: 1 new problem in a.fault after this write:
        a.fault:2:4 error [F001] fault: ERROR marker
        lsp diagnostics  a.fault (faulty) — 1 error, 0 warnings
        a.fault:2:4 error [F001] fault: ERROR marker
        reg:a,reg:b,unreg:b:
        wrote a.fault
        lsp: 1 new problem in a.fault after this write:
        a.fault:2:4 error [F001] fault: ERROR marker
        lsp diagnostics  a.fault (faulty) — 1 error, 0 warnings
        a.fault:2:4 error [F001] fault: ERROR marker
    "#]]
    .assert_eq(&got);
}

/// A server that answers neither the text before a write nor the written
/// one within the bound: the write waits one bound in all, baseline
/// included, and the written text's answer a moment more (it waited the
/// bound twice: 20 s for a silent server at the default 10 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_costs_a_write_one_bound_not_two() {
    let dir = project();
    std::fs::write(dir.path().join("e.fault"), "delay_ms=60000\nfine\n").unwrap();
    let run = Run::with_binding(dir, binding(20_000, 2_000));
    // The server is started first, so its start is not part of the wait.
    run.lsp(json!({"op": "status"})).await;
    run.call(
        "lsp",
        json!({"op": "hover", "file": "e.fault", "line": 2, "symbol": "fine"}),
    )
    .await
    .unwrap();
    let started = Instant::now();
    let out = run
        .call(
            "write",
            json!({"path": "e.fault", "content": "delay_ms=60000\nan ERROR\n"}),
        )
        .await
        .unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_millis(3_500), "{took:?}\n{out}");
    let digits_masked: String = out
        .chars()
        .map(|c| if c.is_ascii_digit() { '9' } else { c })
        .collect();
    expect_test::expect![[r#"
        wrote e.fault
        lsp: diagnostics still pending for e.fault after 9999 ms (faulty is still working); they will come with a later result"#]].assert_eq(&digits_masked);
    // Two waits ran out with nothing ever delivered: the server is said
    // not to deliver, once, and not waited for again.
    let mut later = Vec::new();
    for content in [
        "delay_ms=60000
ok
",
        "delay_ms=60000
ok again
",
    ] {
        let started = Instant::now();
        let out = run
            .call("write", json!({"path": "e.fault", "content": content}))
            .await
            .unwrap();
        assert!(started.elapsed() < Duration::from_millis(1_500), "{out}");
        later.push(out);
    }
    let status = run.lsp(json!({"op": "status"})).await;
    later.push(server_line(&status, &run.root));
    expect_test::expect![[r#"
        wrote e.fault
        lsp: e.fault not checked: faulty has sent no diagnostics for any file since it started (2 waits ran out); its files are not waited for again — `lsp` op `status` shows it
        wrote e.fault
        faulty at . (<fault-injecting-lsp>): running, pid PID, ready (utf-16 positions); has sent no diagnostics since it started (2 waits ran out): writes are not waited for"#]].assert_eq(&later.join("\n"));
    run.finish().await;
}

/// A server that, like intelephense, publishes without versions, checks a
/// change only after a debounce, and re-publishes the old text's set at
/// once when something else happens just after the change (its indexing
/// ends, another document opens): that publish answers the old text, and
/// a write that adds an error is not answered "no new errors" from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unversioned_publish_sooner_than_the_servers_debounce_is_not_the_changes() {
    let config: CatalogConfig = serde_json::from_value(json!({
        "servers": [{
            "id": "faulty", "extensions": {"fault": "fault"},
            "commands": [[fault_injecting_lsp(), "--debounced-changes-ms=600"]],
            "root_markers": ["fault.toml"], "startup_settle_ms": 0,
            "change_diagnostics_delay_ms": 600
        }],
        "diagnostics_wait_ms": 10_000
    }))
    .unwrap();
    let run = Run::with_binding(project(), LspBinding::new(config));
    let mut transcript = String::new();
    for content in ["fine\n", "fine\nan ERROR\n", "fine\n", "fine\nan ERROR\n"] {
        let out = run
            .call("write", json!({"path": "n.fault", "content": content}))
            .await
            .unwrap();
        transcript.push_str(&out);
        transcript.push('\n');
    }
    expect_test::expect![[r#"
        wrote n.fault
        lsp: no new errors or warnings in n.fault
        wrote n.fault
        lsp: 1 new problem in n.fault after this write:
        n.fault:2:4 error [F001] fault: ERROR marker
        wrote n.fault
        lsp: no new errors or warnings in n.fault
        wrote n.fault
        lsp: 1 new problem in n.fault after this write:
        n.fault:2:4 error [F001] fault: ERROR marker
    "#]]
    .assert_eq(&transcript);
    run.finish().await;
}

/// A save-time check that, like rust-analyzer's `cargo check` under load,
/// is cancelled by a restart right after it begins (a `begin` and an `end`
/// with nothing between), the restart beginning longer than a quiet window
/// later: the cancelled run is no proof, and the write waits for the run
/// that did the check (rust-analyzer's row of the matrix answered "no new
/// errors" for a write that added E0425, 1 run in 3 under load).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_save_check_run_cancelled_by_its_restart_is_not_the_check() {
    let config: CatalogConfig = serde_json::from_value(json!({
        "servers": [{
            "id": "faulty", "extensions": {"fault": "fault"},
            "commands": [[fault_injecting_lsp(), "--save-check-restarts-ms=600"]],
            "root_markers": ["fault.toml"], "startup_settle_ms": 0,
            "save_check_progress": "fault/check",
            "save_check_sources": ["fault-check"]
        }],
        "diagnostics_wait_ms": 10_000
    }))
    .unwrap();
    let run = Run::with_binding(project(), LspBinding::new(config));
    let mut transcript = String::new();
    for content in ["fine\n", "fine\nan ERROR\n", "fine\n"] {
        let out = run
            .call("write", json!({"path": "n.fault", "content": content}))
            .await
            .unwrap();
        transcript.push_str(&out.replace(fault_injecting_lsp(), "FAULT_LSP"));
        transcript.push('\n');
    }
    expect_test::expect![[r#"
        wrote n.fault
        lsp: no new errors or warnings in n.fault
        lsp: other files not checked: faulty (FAULT_LSP --save-check-restarts-ms=600) had not finished its first check of the project when this change began (later changes are judged)
        wrote n.fault
        lsp: 1 new problem in n.fault after this write:
        n.fault:2:4 error [F001] fault: ERROR marker
        wrote n.fault
        lsp: no new errors or warnings in n.fault
    "#]].assert_eq(&transcript);
    run.finish().await;
}
