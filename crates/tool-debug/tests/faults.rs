//! Fault injection: a FAKE adapter script (tests/fixtures/debug/fake_adapter)
//! that dies mid-session after starting a process outside its group, and asks
//! a reverse request we never advertised.

mod common;

use common::*;
use expect_test::expect;
use serde_json::json;
use tool_debug::AdapterSpec;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adapter_that_dies_mid_session_is_reported_and_leaves_no_orphan() {
    let Some(python) = test_support::fixtures::require(&["python3"]) else {
        return;
    };
    let script = fixture("fake_adapter/crashing_adapter.py");
    let dir = copy_fixture("python");
    let mut cfg = config();
    cfg.adapters.push(AdapterSpec::custom(
        "fake-crashing",
        vec![
            python.to_string_lossy().into_owned(),
            script.to_string_lossy().into_owned(),
        ],
        &["requirements.txt"],
        &[],
    ));
    let b = bench(dir.path(), cfg);
    // The adapter's command line names the interpreter found on PATH.
    let shown = |text: &str| masked(&b, &text.replace(&*python.to_string_lossy(), "<python>"));
    let (text, _) = b.call(json!({"op": "adapters"})).await;
    expect!["fake-crashing usable: `<python> <checkout>/tests/fixtures/debug/fake_adapter/crashing_adapter.py` (marker requirements.txt)"].assert_eq(&shown(&adapter_lines(&text, "fake-crashing")));
    b.call(json!({"op": "breakpoints", "file": "avg.py", "lines": [6]}))
        .await;
    let (text, s) = b
        .call(json!({"op": "launch", "program": "avg.py", "adapter": "fake-crashing"}))
        .await;
    assert_eq!(s["state"], "stopped", "{text}");
    expect![[r#"
        debug launch  avg.py under fake-crashing (`<python> <checkout>/tests/fixtures/debug/fake_adapter/crashing_adapter.py`)
        breakpoint avg.py:6 verified  | total = 0
        stopped (breakpoint) thread N in mean at avg.py:6
            6 |     total = 0"#]].assert_eq(&shown(&text));
    let recorded = b.processes().await;
    assert!(
        recorded.len() >= 2,
        "adapter and stand-in debuggee: {recorded:?}"
    );

    // The reverse request was answered with a refusal, not left hanging.
    let (text, _) = b.call(json!({"op": "output"})).await;
    check(
        &b,
        &text,
        expect![[r#"
        debug output  avg.py
        reverse request answered: success=False"#]],
    );

    let (text, s) = b.call(json!({"op": "continue"})).await;
    assert_eq!(s["state"], "ended", "{text}");
    expect![[r#"
        debug continue  thread N
        the debug adapter died: it ended (exit status 3); its last words: fake adapter: crashing on purpose
        output (tail; the output op returns all of it):
        reverse request answered: success=False"#]].assert_eq(&masked(&b, &text));
    assert_no_orphans(&b, &recorded).await;

    let err = b.err(json!({"op": "stack"})).await;
    check(&b, &err.to_string(), expect!["refused: the debug session of avg.py has ended: the debug adapter died: it ended (exit status 3); its last words: fake adapter: crashing on purpose; launch again to start a new one"]);
    // A new launch is allowed once the dead session is reported.
    let err = b
        .err(json!({"op": "launch", "program": "avg.py", "adapter": "lldb"}))
        .await;
    // Refused for what lldb makes of a Python file, not for a session
    // still running.
    expect!["bad arguments: `avg.py` is not a compiled program; lldb runs executables: a Python file runs under debugpy: launch it without `adapter`, or with `adapter: debugpy`"].assert_eq(&masked(&b, &err.to_string()));
}
