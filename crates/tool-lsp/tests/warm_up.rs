//! Warm-up (issue 14): a long run that writes starts the root's servers as
//! it binds, before any call, so its first write finds them running.

mod common;

use common::Run;
use serde_json::json;
use std::time::{Duration, Instant};
use tool_core::{Binding, RunContext, Workspace};

/// A root with a Python project at the top and a TypeScript one below.
fn two_projects() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("lsp-warm-")
        .tempdir()
        .unwrap();
    for (rel, text) in [
        ("pyproject.toml", "[project]\nname = \"warm\"\n"),
        ("app.py", "def greet(name: str) -> str:\n    return name\n"),
        (
            "web/tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}}\n",
        ),
        ("web/index.ts", "export const n: number = 1;\n"),
        ("node_modules/x/skipped.ts", "export const s = 1;\n"),
    ] {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_of_the_roots_files_start_before_any_call() {
    let run = Run::new(two_projects());
    let started = run.binding.supervisor().unwrap().warm_up().await;
    assert_eq!(started, ["python at .", "ruff at .", "typescript at web"]);
    assert_eq!(run.pids().await.len(), 3);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warmed_up_run_answers_its_first_write_from_the_running_server() {
    let run = Run::new(two_projects());
    let ctx = RunContext {
        workspace: Workspace::new(&run.root).unwrap(),
        conversation_id: None,
    };
    // What the MCP host does after binding: returns at once, servers start
    // in the background.
    let asked = Instant::now();
    Binding::warm_up(&*run.binding, &ctx);
    assert!(asked.elapsed() < Duration::from_secs(1));
    let deadline = Instant::now() + Duration::from_mins(2);
    while run.pids().await.len() < 3 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let warm = run.pids().await;
    assert_eq!(warm.len(), 3, "servers running after the warm-up");
    let out = run
        .call(
            "write",
            json!({"path": "app.py", "content": "def greet(name: str) -> int:\n    return name\n"}),
        )
        .await
        .unwrap();
    expect_test::expect![[r#"
        wrote app.py
        lsp: 1 new problem in app.py after this write:
        app.py:2:12 error [reportReturnType] Type "str" is not assignable to return type "int" (python)"#]]
    .assert_eq(&out);
    assert_eq!(
        run.pids().await,
        warm,
        "the write used the warmed-up servers"
    );
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_up_false_in_the_config_starts_nothing() {
    let config: tool_lsp::CatalogConfig =
        serde_json::from_value(json!({"warm_up": false})).unwrap();
    let off = Run::with_binding(two_projects(), tool_lsp::LspBinding::new(config));
    // The control: the same root with the default setting, asked at the
    // same moment; once its servers run, the other run's would have too.
    let control = Run::new(two_projects());
    for run in [&off, &control] {
        let ctx = RunContext {
            workspace: Workspace::new(&run.root).unwrap(),
            conversation_id: None,
        };
        Binding::warm_up(&*run.binding, &ctx);
    }
    let deadline = Instant::now() + Duration::from_mins(2);
    while control.pids().await.len() < 3 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(control.pids().await.len(), 3);
    assert_eq!(off.pids().await, Vec::<u32>::new());
    off.finish().await;
    control.finish().await;
}
