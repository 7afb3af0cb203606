//! debug over lldb (lldb-dap, or Debian's lldb-vscode-14) on a C fixture
//! compiled with `-g -O0`.

mod common;

use common::*;
use expect_test::expect;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_c_bug_is_found_end_to_end_under_lldb() {
    if tool_core::fixtures::require(&["lldb-dap", "lldb-vscode-14", "lldb-vscode"]).is_none()
        || tool_core::fixtures::require(&["gcc"]).is_none()
    {
        return;
    }
    let dir = copy_fixture("c");
    let built = std::process::Command::new("gcc")
        .args(["-g", "-O0", "-o", "avg", "avg.c"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(built.success());
    let b = bench(dir.path(), config());

    let (text, s) = b.call(json!({"op": "adapters"})).await;
    assert!(
        s["usable"].as_array().unwrap().contains(&json!("lldb")),
        "{text}"
    );

    // Source is not a program lldb can run.
    let err = b
        .err(json!({"op": "launch", "program": "avg.c", "adapter": "lldb"}))
        .await;
    check(&b, &err.to_string(), expect!["bad arguments: `avg.c` is not a compiled program; lldb runs executables: build it with debug info (e.g. `gcc -g -O0 -o prog avg.c` or `cargo build`) and launch the executable"]);

    b.call(json!({"op": "breakpoints", "file": "avg.c", "lines": [5]}))
        .await;
    let (text, s) = b.call(json!({"op": "launch", "program": "avg"})).await;
    assert!(text.contains("under lldb"), "{text}");
    assert!(text.contains("breakpoint avg.c:5 verified"), "{text}");
    assert_eq!(s["state"], "stopped", "{text}");
    assert_eq!(
        (
            s["function"].as_str(),
            s["file"].as_str(),
            s["line"].as_u64()
        ),
        (Some("mean"), Some("avg.c"), Some(5)),
        "{text}"
    );
    assert!(text.contains("    5 |     int total = 0;"), "{text}");
    let recorded = b.processes().await;
    assert!(
        recorded.len() >= 2,
        "adapter and debuggee recorded: {recorded:?}"
    );

    let (text, stack) = b.call(json!({"op": "stack"})).await;
    assert!(
        text.contains("mean at avg.c:5") && text.contains("main at avg.c:16"),
        "{text}"
    );
    let frame = first_frame(&stack);
    let (text, scopes) = b.call(json!({"op": "scopes", "frame_id": frame})).await;
    assert!(text.contains("Locals"), "{text}");
    let locals = scopes["scopes"][0]["reference"].as_u64().unwrap();
    let (text, _) = b
        .call(json!({"op": "variables", "reference": locals}))
        .await;
    assert!(text.contains("n (int) = 6"), "{text}");

    let (text, s) = b
        .call(json!({"op": "evaluate", "expression": "xs[1] + n"}))
        .await;
    assert_eq!(s["result"], "14", "{text}");

    let (text, s) = b.call(json!({"op": "step_over"})).await;
    assert_eq!(
        (s["reason"].as_str(), s["line"].as_u64()),
        (Some("step"), Some(6)),
        "{text}"
    );
    let err = b
        .err(json!({"op": "evaluate", "expression": "n", "frame_id": frame}))
        .await;
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
        debug output  avg
        values: 6
        mean: 17.33
        (session ended: the program exited with code 0)"#]],
    );
    assert_no_orphans(&b, &recorded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_values_print_readably_with_the_toolchain_formatters() {
    if tool_core::fixtures::require(&["lldb-dap", "lldb-vscode-14", "lldb-vscode"]).is_none()
        || tool_core::fixtures::require(&["rustc"]).is_none()
    {
        return;
    }
    let dir = copy_fixture("rust");
    let built = std::process::Command::new("rustc")
        .args(["-g", "-C", "opt-level=0", "-o", "avg", "src/main.rs"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(built.success());
    let b = bench(dir.path(), config());
    b.call(json!({"op": "breakpoints", "file": "src/main.rs", "lines": [13]}))
        .await;
    let (text, s) = b.call(json!({"op": "launch", "program": "avg"})).await;
    assert_eq!(s["state"], "stopped", "{text}");
    assert_eq!(s["file"], "src/main.rs", "{text}");
    let recorded = b.processes().await;
    let (_, stack) = b.call(json!({"op": "stack"})).await;
    let (_, scopes) = b
        .call(json!({"op": "scopes", "frame_id": first_frame(&stack)}))
        .await;
    let locals = scopes["scopes"][0]["reference"].as_u64().unwrap();
    let (text, _) = b
        .call(json!({"op": "variables", "reference": locals}))
        .await;
    // With rust-lldb's formatters a Vec shows its length and a String its
    // text, instead of raw buf/ptr/cap fields.
    assert!(
        text.contains("values (alloc::vec::Vec<long, alloc::alloc::Global>) = size=6"),
        "{text}"
    );
    assert!(
        text.contains("label (alloc::string::String) = \"mean\""),
        "{text}"
    );
    let (text, s) = b
        .call(json!({"op": "evaluate", "expression": "values[5]"}))
        .await;
    assert_eq!(s["result"], "42", "{text}");
    b.call(json!({"op": "terminate"})).await;
    assert_no_orphans(&b, &recorded).await;
}
