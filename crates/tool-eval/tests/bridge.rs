//! The tool bridge: `tool(name, args)` from inside real Python and Node.js
//! cells, dispatched through the run's Registry with its surface and approval.

mod common;
use common::*;
use expect_test::expect;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;
use tool_core::{async_trait, Approval, ApprovalRequest, Approver};

const DATA: &str = "alpha\nbeta\ngamma\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_cells_call_registered_tools() {
    let Some(run) = Run::fixtures() else { return };
    std::fs::write(run.root().join("data.txt"), DATA).unwrap();

    let out = run
        .py("r = tool('read_file', {'path': 'data.txt'})\nprint(r.upper().split())\nr.structured")
        .await
        .unwrap();
    let t = text(&out);
    expect![[r#"
        eval python  a test cell in python here
        (started a python kernel: Python 3.x from FIXTURES/venv/bin/python (config))
        ['ALPHA', 'BETA', 'GAMMA']
        {'lines': 3}"#]]
    .assert_eq(&masked(&t, run.root()));
    assert_eq!(out.structured.as_ref().unwrap()["bridged_calls"], 1);

    // Several calls in flight at once from a thread pool.
    let started = Instant::now();
    let t = text(
        &run.py("from concurrent.futures import ThreadPoolExecutor\nwith ThreadPoolExecutor(4) as pool:\n    got = list(pool.map(lambda i: tool('read_file', path='data.txt', delay_ms=600), range(4)))\n[len(g) for g in got]")
            .await
            .unwrap(),
    );
    assert!(t.ends_with("[17, 17, 17, 17]"), "{t}");
    let took = started.elapsed();
    assert!(
        took.as_millis() < 2000,
        "the four 600 ms calls overlapped: {took:?}"
    );

    // Errors of the called tool arrive as ToolError with its kind.
    let t = text(
        &run.py("try:\n    tool('read_file', {'path': 'missing.txt'})\nexcept ToolError as e:\n    print(e.kind, '|', e.message)")
            .await
            .unwrap(),
    );
    expect![[r#"
        eval python  a test cell in python here
        failed | failed: missing.txt: No such file or directory (os error 2)"#]]
    .assert_eq(&masked(&t, run.root()));
    let t = text(
        &run.py(
            "try:\n    tool('read_file', {'pth': 'x'})\nexcept ToolError as e:\n    print(e.kind)",
        )
        .await
        .unwrap(),
    );
    expect![[r#"
        eval python  a test cell in python here
        bad_arguments"#]]
    .assert_eq(&masked(&t, run.root()));

    // A tool this surface cannot see is refused with the words of an unknown one.
    let t = text(&run.py("try:\n    tool('secret_tool', {})\nexcept ToolError as e:\n    print(e.kind, '|', e.message)").await.unwrap());
    expect![[r#"
        eval python  a test cell in python here
        unknown_tool | unknown tool `secret_tool`: no tool of that name is available here; available: eval, read_file, touch"#]].assert_eq(&masked(&t, run.root()));

    // Calling eval from a cell is refused instead of deadlocking.
    let started = Instant::now();
    let t = text(
        &run.py("try:\n    tool('eval', {'code': '1', 'description': 'nested cell inside a cell'})\nexcept ToolError as e:\n    print(e.kind, '|', e.message)")
            .await
            .unwrap(),
    );
    expect![[r#"
        eval python  a test cell in python here
        refused | refused: a cell cannot call `eval` through the bridge: the cell is itself an eval call, and eval runs one cell at a time, so the call would wait for itself forever; run the code directly in this cell instead"#]].assert_eq(&masked(&t, run.root()));
    assert!(started.elapsed().as_secs() < 10);

    // The exception's own text says "refused" once, uncaught as well.
    let t = text(
        &run.py("try:
    tool('eval', {'code': '1', 'description': 'nested cell inside a cell'})
except ToolError as e:
    print(str(e))")
            .await
            .unwrap(),
    );
    expect![[r#"
        eval python  a test cell in python here
        refused: a cell cannot call `eval` through the bridge: the cell is itself an eval call, and eval runs one cell at a time, so the call would wait for itself forever; run the code directly in this cell instead"#]]
        .assert_eq(t.trim());

    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_cells_await_registered_tools() {
    let Some(run) = Run::fixtures() else { return };
    std::fs::write(run.root().join("data.txt"), DATA).unwrap();

    let t = text(
        &run.js("const r = await tool('read_file', { path: 'data.txt' });\nconsole.log(r.text.trim().split('\\n').length, r.structured.lines);\nr")
            .await
            .unwrap(),
    );
    expect![[r#"
        eval javascript  a test cell in javascript here
        (started a javascript kernel: Node.js N from NODE (config))
        3 3
        alpha
        beta
        gamma"#]]
    .assert_eq(&masked(&t, run.root()));

    let started = Instant::now();
    let t = text(
        &run.js("const all = await Promise.all([1, 2, 3, 4].map(() => tool('read_file', { path: 'data.txt', delay_ms: 600 })));\nall.map((r) => r.text.length)")
            .await
            .unwrap(),
    );
    assert!(t.ends_with("[ 17, 17, 17, 17 ]"), "{t}");
    assert!(
        started.elapsed().as_millis() < 2000,
        "{:?}",
        started.elapsed()
    );

    let t = text(
        &run.js("try { await tool('secret_tool', {}) } catch (e) { console.log(e.name, e.kind, e.message) }")
            .await
            .unwrap(),
    );
    expect![[r#"
        eval javascript  a test cell in javascript here
        ToolError unknown_tool unknown tool `secret_tool`: no tool of that name is available here; available: eval, read_file, touch"#]].assert_eq(&masked(&t, run.root()));
    let t = text(
        &run.js("try { await tool('eval', { code: '1', description: 'nested' }) } catch (e) { console.log(e.kind, '|', String(e)) }")
            .await
            .unwrap(),
    );
    expect![[r#"
        eval javascript  a test cell in javascript here
        refused | ToolError: refused: a cell cannot call `eval` through the bridge: the cell is itself an eval call, and eval runs one cell at a time, so the call would wait for itself forever; run the code directly in this cell instead"#]]
        .assert_eq(t.trim());

    run.finish().await;
}

/// Approves eval and reads, denies everything else: bridged calls must meet it.
struct OnlyEvalAndReads;

#[async_trait]
impl Approver for OnlyEvalAndReads {
    async fn approve(&self, request: &ApprovalRequest) -> Approval {
        if request.tool == "eval" {
            Approval::Approved
        } else {
            Approval::Denied {
                reason: format!("{} is not allowed in this test", request.tool),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridged_calls_meet_the_same_approval() {
    let Some(run) = Run::fixtures() else { return };
    run.registry.set_approver(Some(Arc::new(OnlyEvalAndReads)));
    // The write-tier `touch` is asked about and denied, exactly as from the model.
    let direct = run
        .registry
        .call(
            tool_core::Surface::FULL,
            "touch",
            json!({}),
            tool_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    let t = text(
        &run.py("try:\n    tool('touch', {})\nexcept ToolError as e:\n    print(e.kind, '|', e.message)")
            .await
            .unwrap(),
    );
    // The same words as the direct call's.
    expect![[r#"
        eval python  a test cell in python here
        (started a python kernel: Python 3.x from FIXTURES/venv/bin/python (config))
        refused | refused: the operator denied `touch`: touch is not allowed in this test; do not retry the same call, change the plan or ask the operator"#]].assert_eq(&masked(&t, run.root()));
    expect!["refused: the operator denied `touch`: touch is not allowed in this test; do not retry the same call, change the plan or ask the operator"].assert_eq(&direct.to_string());
    run.finish().await;
}
