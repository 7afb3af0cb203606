//! debug over delve (`dlv dap`, reached over TCP) on a standard-library-only
//! Go fixture.

mod common;

use common::*;
use expect_test::expect;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_go_bug_is_found_end_to_end_under_delve() {
    if tool_core::fixtures::require(&["dlv"]).is_none()
        || tool_core::fixtures::require(&["go"]).is_none()
    {
        return;
    }
    let dir = copy_fixture("go");
    let b = bench(dir.path(), config());
    let (text, s) = b.call(json!({"op": "adapters"})).await;
    assert!(
        s["usable"].as_array().unwrap().contains(&json!("delve")),
        "{text}"
    );

    b.call(json!({"op": "breakpoints", "file": "main.go", "lines": [7]}))
        .await;
    let (text, s) = b
        .call(json!({"op": "launch", "program": "main.go", "timeout_seconds": 60}))
        .await;
    assert!(text.contains("under delve"), "{text}");
    assert!(text.contains("breakpoint main.go:7 verified"), "{text}");
    assert_eq!(s["state"], "stopped", "{text}");
    assert_eq!(
        (
            s["function"].as_str(),
            s["file"].as_str(),
            s["line"].as_u64()
        ),
        (Some("main.mean"), Some("main.go"), Some(7)),
        "{text}"
    );
    let recorded = b.processes().await;
    assert!(
        recorded.len() >= 2,
        "adapter and debuggee recorded: {recorded:?}"
    );

    let (text, stack) = b.call(json!({"op": "stack"})).await;
    assert!(
        text.contains("main.mean at main.go:7") && text.contains("main.main at main.go:17"),
        "{text}"
    );
    let frame = first_frame(&stack);
    let (_, scopes) = b.call(json!({"op": "scopes", "frame_id": frame})).await;
    let locals = scopes["scopes"][0]["reference"].as_u64().unwrap();
    let (text, _) = b
        .call(json!({"op": "variables", "reference": locals}))
        .await;
    assert!(
        text.contains("xs ([]int) = []int len: 6, cap: 6, [4,8,15,16,23,42]"),
        "{text}"
    );

    let (text, s) = b
        .call(json!({"op": "evaluate", "expression": "len(xs)"}))
        .await;
    assert_eq!(s["result"], "6", "{text}");
    let (text, s) = b.call(json!({"op": "step_over"})).await;
    assert_eq!(
        (s["reason"].as_str(), s["line"].as_u64()),
        (Some("step"), Some(8)),
        "{text}"
    );
    let err = b.err(json!({"op": "scopes", "frame_id": frame})).await;
    check(&b, &err.to_string(), expect!["refused: that frame (1) is from an earlier stop; the program is now at stop 2; call stack again"]);

    let (text, s) = b.call(json!({"op": "continue"})).await;
    assert_eq!(
        (s["state"].as_str(), s["exit_code"].as_i64()),
        (Some("ended"), Some(0)),
        "{text}"
    );
    let (text, _) = b.call(json!({"op": "output"})).await;
    check(
        &b,
        &text,
        expect![[r#"
        debug output  main.go
        Building <root>/main.go
        values: 6
        mean: 17.333333333333332
        (session ended: the program exited with code 0)"#]],
    );
    assert_no_orphans(&b, &recorded).await;
    // The build went to a scratch folder, not into the workspace.
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["cmd", "go.mod", "main.go", "main_test.go"]);
}
