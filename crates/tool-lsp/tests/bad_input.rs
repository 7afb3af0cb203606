//! Bad input gets a clear error and changes nothing; refusals say which half
//! (root marker or binary) is missing and what was looked for.

mod common;

use common::{has, project, Run};
use serde_json::json;
use tool_core::{Surface, ToolError};
use tool_lsp::{CatalogConfig, LspBinding};

async fn err(run: &Run, args: serde_json::Value) -> ToolError {
    match run.call("lsp", args.clone()).await {
        Ok(out) => panic!("expected an error for {args}, got:\n{out}"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn bad_arguments_are_refused_before_any_server_starts() {
    let run = Run::new(project("python"));
    let cases: &[(serde_json::Value, &str)] = &[
        (json!({"op": "fly"}), "unknown variant `fly`"),
        (json!({"file": "app.py"}), "missing field `op`"),
        (
            json!({"op": "hover", "file": "app.py", "line": "five", "symbol": "greet"}),
            "argument `line`",
        ),
        (
            json!({"op": "hover", "file": "app.py", "line": 5, "symbol": "greet", "column": 3}),
            "unknown field `column`",
        ),
        (
            json!({"op": "definition", "file": "app.py", "line": 5}),
            "needs `symbol`",
        ),
        (
            json!({"op": "definition", "file": "app.py", "symbol": "greet"}),
            "needs `line`",
        ),
        (
            json!({"op": "hover", "line": 5, "symbol": "greet"}),
            "needs `file`",
        ),
        (
            json!({"op": "hover", "file": "../outside.py", "line": 1, "symbol": "x"}),
            "outside the workspace",
        ),
        (
            json!({"op": "hover", "file": "/etc/passwd", "line": 1, "symbol": "root"}),
            "outside the workspace",
        ),
        (
            json!({"op": "hover", "file": "missing.py", "line": 1, "symbol": "x"}),
            "does not exist",
        ),
        (
            json!({"op": "hover", "file": "app.py", "line": 99, "symbol": "greet"}),
            "line 99 is past the end of app.py, which has 9 lines",
        ),
        (
            json!({"op": "hover", "file": "app.py", "line": 0, "symbol": "greet"}),
            "1-based",
        ),
        (
            json!({"op": "hover", "file": "app.py", "line": 6, "symbol": "greet"}),
            "it occurs on nearby lines:\n  5: message = greet(\"world\")",
        ),
        (json!({"op": "symbols"}), "needs `query`"),
    ];
    for (args, says) in cases {
        let e = err(&run, args.clone()).await;
        assert!(matches!(e, ToolError::BadArgs(_)), "{args}: {e}");
        has(&e.to_string(), says);
    }
    // Two occurrences on one line: listed, and `occurrence` picks one.
    std::fs::write(
        run.root.join("twice.py"),
        "def f(url):\n    return g(url=url)\n",
    )
    .unwrap();
    let e = err(
        &run,
        json!({"op": "hover", "file": "twice.py", "line": 2, "symbol": "url"}),
    )
    .await;
    has(&e.to_string(), "`url` occurs 2 times on twice.py:2");
    has(&e.to_string(), "1: return g([url]=url)");
    has(&e.to_string(), "pass \"occurrence\": 1 or 2");
    // No server was started for any of it.
    assert!(run.pids().await.is_empty());

    // A language with no catalog entry.
    std::fs::write(run.root.join("notes.txt"), "hello\n").unwrap();
    let e = err(
        &run,
        json!({"op": "hover", "file": "notes.txt", "line": 1, "symbol": "hello"}),
    )
    .await;
    assert!(matches!(e, ToolError::Unavailable(_)), "{e}");
    has(
        &e.to_string(),
        "no language server in the catalog for `.txt` files",
    );
    has(&e.to_string(), ".py");
    run.finish().await;
}

#[tokio::test]
async fn status_and_refusals_name_the_missing_half() {
    // A Python file with no root marker, and an entry whose binary is missing.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("loose.py"), "x = 1\n").unwrap();
    std::fs::write(dir.path().join("build.zig"), "").unwrap();
    std::fs::write(dir.path().join("main.zig"), "const x = 1;\n").unwrap();
    let config: CatalogConfig = serde_json::from_value(json!({
        "servers": [{"id": "zig", "extensions": {"zig": "zig"}, "commands": [["definitely-not-installed-zls"]],
                     "root_markers": ["build.zig"]}]
    }))
    .unwrap();
    let run = Run::with_binding(dir, LspBinding::new(config));
    let e = err(
        &run,
        json!({"op": "hover", "file": "loose.py", "line": 1, "symbol": "x"}),
    )
    .await;
    assert!(matches!(e, ToolError::Unavailable(_)), "{e}");
    has(&e.to_string(), "no python project root: none of pyproject.toml, setup.py, setup.cfg, requirements.txt, pyrightconfig.json found");
    let e = err(
        &run,
        json!({"op": "hover", "file": "main.zig", "line": 1, "symbol": "x"}),
    )
    .await;
    has(&e.to_string(), "the zig project root is . but no server binary resolves: looked for definitely-not-installed-zls");
    let status = run.lsp(json!({"op": "status"})).await;
    has(
        &status,
        "zig: cannot start (the zig project root is . but no server binary resolves",
    );
    has(&status, "python: cannot start (no python project root");
    has(
        &status,
        "rust: cannot start (no rust project root: none of Cargo.toml",
    );
    assert!(run.pids().await.is_empty());
    let out = run.lsp(json!({"op": "diagnostics", "file": "*"})).await;
    has(
        &out,
        "lsp diagnostics *  zig at .: the zig entry has no project checker",
    );
    run.finish().await;
}

#[tokio::test]
async fn rename_is_write_tier_and_hidden_from_read_only_surfaces() {
    let run = Run::new(project("python"));
    let names: Vec<String> = run
        .registry
        .specs(Surface::READ_ONLY)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(names.contains(&"lsp".to_string()), "{names:?}");
    assert!(!names.contains(&"lsp_rename".to_string()), "{names:?}");
    let e = run
        .registry
        .call(
            Surface::READ_ONLY,
            "lsp_rename",
            json!({}),
            Default::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::UnknownTool { .. }), "{e}");
    let e = run
        .call(
            "lsp_rename",
            json!({"file": "app.py", "line": 5, "symbol": "greet", "new_name": " "}),
        )
        .await
        .unwrap_err();
    has(&e.to_string(), "`new_name` is empty");
    assert_eq!(
        run.read("app.py"),
        std::fs::read_to_string(
            tool_core::fixtures::workspace_root().join("tests/fixtures/lsp/python/app.py")
        )
        .unwrap()
    );
    run.finish().await;
}
