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
    let (text, _) = b.call(json!({"op": "adapters"})).await;
    assert!(text.contains("fake-crashing usable"), "{text}");
    b.call(json!({"op": "breakpoints", "file": "avg.py", "lines": [6]}))
        .await;
    let (text, s) = b
        .call(json!({"op": "launch", "program": "avg.py", "adapter": "fake-crashing"}))
        .await;
    assert_eq!(s["state"], "stopped", "{text}");
    assert!(text.contains("mean at avg.py:6"), "{text}");
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
    assert!(text.contains("the debug adapter died"), "{text}");
    assert!(text.contains("crashing on purpose"), "{text}");
    assert_no_orphans(&b, &recorded).await;

    let err = b.err(json!({"op": "stack"})).await;
    check(&b, &err.to_string(), expect!["refused: the debug session of avg.py has ended: the debug adapter died: it ended (exit status 3); its last words: fake adapter: crashing on purpose; launch again to start a new one"]);
    // A new launch is allowed once the dead session is reported.
    let err = b
        .err(json!({"op": "launch", "program": "avg.py", "adapter": "lldb"}))
        .await;
    assert!(!err.to_string().contains("already running"), "{err}");
}
