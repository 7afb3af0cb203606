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
        // The read ops of issue 17 take the same positions and files.
        (
            json!({"op": "incoming_calls", "file": "app.py", "line": 5}),
            "op `incoming_calls` needs `symbol`",
        ),
        (
            json!({"op": "outgoing_calls", "file": "app.py", "symbol": "greet"}),
            "op `outgoing_calls` needs `line`",
        ),
        (
            json!({"op": "supertypes", "file": "app.py", "line": 6, "symbol": "greet"}),
            "it occurs on nearby lines:\n  5: message = greet(\"world\")",
        ),
        (
            json!({"op": "subtypes", "file": "../outside.py", "line": 1, "symbol": "x"}),
            "outside the workspace",
        ),
        (
            json!({"op": "signature_help", "file": "app.py", "line": 99, "symbol": "greet"}),
            "line 99 is past the end of app.py",
        ),
        (
            json!({"op": "capabilities"}),
            "op `capabilities` needs `file`",
        ),
        (
            json!({"op": "capabilities", "file": "/etc/passwd"}),
            "outside the workspace",
        ),
        (
            json!({"op": "call_graph", "file": "app.py"}),
            "unknown variant `call_graph`",
        ),
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
    // Entries with no project root here share one line.
    has(
        &status,
        "no project root at the workspace root (each starts for a file inside its kind of project; \
         `doctor` lists what each looks for): typescript, rust, c, go, dart",
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
            test_support::fixtures::workspace_root().join("tests/fixtures/lsp/python/app.py")
        )
        .unwrap()
    );
    run.finish().await;
}

#[tokio::test]
async fn a_new_name_that_is_no_identifier_is_refused_before_any_server_starts() {
    let run = Run::new(project("python"));
    let before = run.read("app.py");
    let mut said = Vec::new();
    for new_name in ["1bad name", "class", "greet"] {
        let e = run
            .call(
                "lsp_rename",
                json!({"file": "app.py", "line": 5, "symbol": "greet", "new_name": new_name}),
            )
            .await
            .unwrap_err();
        assert_eq!(e.kind(), "bad_arguments");
        said.push(e.to_string());
    }
    expect_test::expect![[r#"
        bad arguments: `1bad name` is not a Python identifier: it starts with `1`; an identifier starts with a letter or `_`; nothing was asked of the server or written
        bad arguments: `class` is not a Python identifier: it is a reserved word in Python; nothing was asked of the server or written
        bad arguments: `new_name` is `greet`, the symbol's own name: there is nothing to rename; nothing was written"#]].assert_eq(&said.join("\n"));
    assert!(run.pids().await.is_empty());
    assert_eq!(run.read("app.py"), before);
    run.finish().await;
}

#[tokio::test]
async fn project_wide_checking_is_refused_below_the_exec_surface() {
    let run = Run::new(project("python"));
    let mut said = Vec::new();
    for surface in [Surface::READ_ONLY, Surface::WRITE] {
        let e = run
            .registry
            .call(
                surface,
                "lsp",
                json!({"op": "diagnostics", "file": "*"}),
                Default::default(),
            )
            .await
            .unwrap_err();
        assert_eq!(e.kind(), "refused");
        said.push(e.to_string());
    }
    expect_test::expect![[r#"
        refused: project-wide checking (`diagnostics` with file "*") runs the project's own build (cargo check runs build scripts and proc macros, go vet compiles cgo, tsc and pyright may be the checkout's own binaries); it runs on the exec surface — this call came from the read surface. Ask `diagnostics` for one file instead (its language server answers)
        refused: project-wide checking (`diagnostics` with file "*") runs the project's own build (cargo check runs build scripts and proc macros, go vet compiles cgo, tsc and pyright may be the checkout's own binaries); it runs on the exec surface — this call came from the write surface. Ask `diagnostics` for one file instead (its language server answers)"#]].assert_eq(&said.join("\n"));
    // No checker ran and no server started.
    assert!(run.pids().await.is_empty());
    run.finish().await;
}

#[tokio::test]
async fn status_and_doctor_name_a_project_local_server_binary() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "").unwrap();
    let bin = dir.path().join(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let server = bin.join("basedpyright-langserver");
    std::fs::write(&server, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = Run::new(dir);
    let status = run.lsp(json!({"op": "status"})).await;
    let python: Vec<&str> = status
        .lines()
        .filter(|l| l.starts_with("python "))
        .collect();
    expect_test::expect!["python at . (basedpyright-langserver --stdio, project-local binary .venv/bin/basedpyright-langserver): not started (starts on the first call for one of its files)"].assert_eq(&python.join("\n"));
    let ctx = tool_core::RunContext {
        workspace: tool_core::Workspace::new(&run.root).unwrap(),
        conversation_id: None,
    };
    let doctor = tool_core::Binding::doctor(&*run.binding, &ctx);
    let python: Vec<String> = doctor
        .into_iter()
        .filter(|l| l.starts_with("lsp python:"))
        .map(|l| l.replace(&run.root.display().to_string(), "<root>"))
        .collect();
    expect_test::expect!["lsp python: usable, starts at . (basedpyright-langserver --stdio → <root>/.venv/bin/basedpyright-langserver, project-local binary .venv/bin/basedpyright-langserver)"].assert_eq(&python.join("\n"));
    assert!(run.pids().await.is_empty());
    run.finish().await;
}

#[tokio::test]
async fn a_timeout_outside_5_to_300_seconds_is_refused_before_any_server_starts() {
    let run = Run::new(project("python"));
    let hover = json!({"op": "hover", "file": "app.py", "line": 5, "symbol": "greet", "timeout_seconds": 4});
    let e = err(&run, hover).await;
    assert!(matches!(e, ToolError::BadArgs(_)), "{e}");
    expect_test::expect!["bad arguments: `timeout_seconds` is 4; it must be from 5 to 300 seconds (leave it out for the configured bounds)"]
        .assert_eq(&e.to_string());
    let rename = json!({"file": "app.py", "line": 5, "symbol": "greet", "new_name": "salute", "timeout_seconds": 301});
    let e = run.call("lsp_rename", rename).await.unwrap_err();
    expect_test::expect!["bad arguments: `timeout_seconds` is 301; it must be from 5 to 300 seconds (leave it out for the configured bounds)"]
        .assert_eq(&e.to_string());
    assert!(run.pids().await.is_empty());
    assert_eq!(
        run.read("app.py"),
        std::fs::read_to_string(
            test_support::fixtures::workspace_root().join("tests/fixtures/lsp/python/app.py"),
        )
        .unwrap()
    );
    run.finish().await;
}
