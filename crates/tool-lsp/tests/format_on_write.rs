//! Format on write over real formatters: ruff's server (Python, beside
//! basedpyright), gopls (Go) and formatter commands. Each test asserts the
//! file's exact bytes after the write and the exact answer: formatted,
//! unchanged or failed, then the diagnostics of the formatted text.

mod common;

use common::Run;
use serde_json::{json, Value};
use tool_core::{CallContext, Surface, Tier};
use tool_lsp::{CatalogConfig, LspBinding};

const PYPROJECT: (&str, &str) = ("pyproject.toml", "[project]\nname = \"x\"\n");

/// Written as a model might: ruff's formatter changes lines 1-3, and the
/// function's return type is wrong (basedpyright reports it).
const UNFORMATTED_PY: &str = "x=1\ndef f( ) -> int:\n  return 'no'\n";
/// What ruff format makes of it.
const FORMATTED_PY: &str = "x = 1\n\n\ndef f() -> int:\n    return \"no\"\n";

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    // `.tmp`: tempfile's own prefix, as these projects always had.
    test_support::project::with_files(".tmp", files)
}

fn config(format_on_write: Value) -> CatalogConfig {
    serde_json::from_value(json!({
        "diagnostics_wait_ms": 60000,
        "format_on_write": format_on_write,
    }))
    .unwrap()
}

fn python_ready() -> bool {
    test_support::fixtures::require(&["basedpyright-langserver"]).is_some()
        && test_support::fixtures::require(&["ruff"]).is_some()
}

async fn write(run: &Run, path: &str, content: &str) -> String {
    run.call("write", json!({"path": path, "content": content}))
        .await
        .unwrap_or_else(|e| panic!("write {path}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_is_formatted_by_ruff_before_its_diagnostics_are_judged() {
    if !python_ready() {
        return;
    }
    let dir = project(&[PYPROJECT, ("app.py", "x = 1\n")]);
    let run = Run::with_binding(dir, LspBinding::new(config(json!({"python": true}))));
    // The model is told before its first write.
    let spec = run
        .registry
        .specs(Surface::new(Tier::Exec))
        .into_iter()
        .find(|s| s.name == "write")
        .unwrap();
    assert!(
        spec.description.ends_with(
            " Files in python are formatted first (format on write): the file on disk may then differ from what you wrote, and the answer says so."
        ),
        "{}",
        spec.description
    );
    let out = write(&run, "app.py", UNFORMATTED_PY).await;
    assert_eq!(run.read("app.py"), FORMATTED_PY);
    // The error is placed in the formatted text (line 5, not 3).
    expect_test::expect![[r#"
        wrote app.py
        lsp: format on write: app.py formatted by ruff (lines 1-5 differ from what you wrote; read it before editing it again)
        lsp: 1 new problem in app.py after this write:
        app.py:5:12 error [reportReturnType] Type "Literal['no']" is not assignable to return type "int" (python)"#]]
    .assert_eq(&out);

    // Already formatted: nothing to do, and the old error is not new.
    let again = run
        .registry
        .call(
            Surface::new(Tier::Exec),
            "write",
            json!({"path": "app.py", "content": FORMATTED_PY}),
            CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(run.read("app.py"), FORMATTED_PY);
    expect_test::expect![[r#"
        wrote app.py
        lsp: format on write: app.py unchanged (ruff)
        lsp: no new errors or warnings in app.py"#]]
    .assert_eq(&again.joined_text());
    expect_test::expect![[r#"
        [
          {
            "by": "ruff",
            "outcome": "unchanged",
            "path": "app.py"
          }
        ]"#]]
    .assert_eq(
        &serde_json::to_string_pretty(&again.structured.unwrap()["format_on_write"]).unwrap(),
    );
    run.finish().await;
}

/// Without `[lsp.format_on_write]` nothing is formatted: the bytes on disk
/// are the bytes written, and the answer says nothing about formatting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn format_on_write_is_off_unless_the_language_is_named() {
    if !python_ready() {
        return;
    }
    let dir = project(&[PYPROJECT, ("app.py", "x = 1\n")]);
    // Go is named, Python is not.
    let run = Run::with_binding(dir, LspBinding::new(config(json!({"go": true}))));
    let out = write(&run, "app.py", UNFORMATTED_PY).await;
    assert_eq!(run.read("app.py"), UNFORMATTED_PY);
    expect_test::expect![[r#"
        wrote app.py
        lsp: 1 new problem in app.py after this write:
        app.py:3:10 error [reportReturnType] Type "Literal['no']" is not assignable to return type "int" (python)"#]]
    .assert_eq(&out);
    run.finish().await;
}

/// A formatter command: the text on its stdin, `{file}` its path; its
/// stdout is the file. One that fails or hangs leaves the write as it was,
/// and the diagnostics are still judged (on the text as written).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_formatter_command_formats_and_one_that_fails_keeps_the_write() {
    if !python_ready() {
        return;
    }
    let dir = project(&[
        PYPROJECT,
        ("app.py", "x = 1\n"),
        ("b.py", "y = 2\n"),
        ("c.py", "z = 3\n"),
    ]);
    let binding = LspBinding::new(config(json!({
        "python": {"command": ["ruff", "format", "--stdin-filename", "{file}", "-"]}
    })));
    let run = Run::with_binding(dir, binding);
    let mode = |run: &Run| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(run.root.join("app.py"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    std::fs::set_permissions(
        run.root.join("app.py"),
        std::os::unix::fs::PermissionsExt::from_mode(0o751),
    )
    .unwrap();
    let out = write(&run, "app.py", UNFORMATTED_PY).await;
    assert_eq!(run.read("app.py"), FORMATTED_PY);
    // Written back in place of the file: its permissions are kept.
    assert_eq!(mode(&run), 0o751);
    expect_test::expect![[r#"
        wrote app.py
        lsp: format on write: app.py formatted by ruff format --stdin-filename app.py - (lines 1-5 differ from what you wrote; read it before editing it again)
        lsp: 1 new problem in app.py after this write:
        app.py:5:12 error [reportReturnType] Type "Literal['no']" is not assignable to return type "int" (python)"#]]
    .assert_eq(&out);
    run.finish().await;

    let dir = project(&[PYPROJECT, ("app.py", "x = 1\n")]);
    let binding = LspBinding::new(config(json!({
        "python": {"command": ["sh", "-c", "cat >/dev/null; echo 'cannot parse line 3' >&2; exit 2"]}
    })));
    let run = Run::with_binding(dir, binding);
    let out = write(&run, "app.py", UNFORMATTED_PY).await;
    assert_eq!(run.read("app.py"), UNFORMATTED_PY);
    expect_test::expect![[r#"
        wrote app.py
        lsp: format on write: app.py failed (sh -c cat >/dev/null; echo 'cannot parse line 3' >&2; exit 2): it ended with exit status 2: cannot parse line 3; the file stays as written
        lsp: 1 new problem in app.py after this write:
        app.py:3:10 error [reportReturnType] Type "Literal['no']" is not assignable to return type "int" (python)"#]]
    .assert_eq(&out);
    run.finish().await;

    // A command that hangs is killed at its bound; one that prints nothing
    // would empty the file and is refused.
    let dir = project(&[PYPROJECT, ("app.py", "x = 1\n")]);
    let binding = LspBinding::new(config(json!({
        "python": {"command": ["sleep", "30"], "timeout_ms": 300}
    })));
    let run = Run::with_binding(dir, binding);
    let out = write(&run, "app.py", "x=1\n").await;
    assert_eq!(run.read("app.py"), "x=1\n");
    expect_test::expect![[r#"
        wrote app.py
        lsp: format on write: app.py failed (sleep 30): it did not finish within 300 ms and was killed; the file stays as written
        lsp: no new errors or warnings in app.py"#]]
    .assert_eq(&out);
    run.finish().await;

    let dir = project(&[PYPROJECT, ("app.py", "x = 1\n")]);
    let binding = LspBinding::new(config(json!({"python": {"command": ["true"]}})));
    let run = Run::with_binding(dir, binding);
    let out = write(&run, "app.py", "x=1\n").await;
    assert_eq!(run.read("app.py"), "x=1\n");
    expect_test::expect![[r#"
        wrote app.py
        lsp: format on write: app.py failed (true): it printed nothing (a formatter command reads the file on stdin and prints all of it formatted); the file stays as written
        lsp: no new errors or warnings in app.py"#]]
    .assert_eq(&out);
    run.finish().await;
}

/// The formatted text goes back only over the text that was formatted: a
/// file changed by someone else meanwhile is left as they made it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_while_it_was_formatted_is_not_overwritten() {
    if !python_ready() {
        return;
    }
    let dir = project(&[PYPROJECT, ("app.py", "x = 1\n")]);
    let binding = LspBinding::new(config(json!({"python": {"command": [
        "sh", "-c", "sed 's/x=1/x = 1/'; echo '# theirs' >> {file}"
    ]}})));
    let run = Run::with_binding(dir, binding);
    let out = write(&run, "app.py", "x=1\n").await;
    assert_eq!(run.read("app.py"), "x=1\n# theirs\n");
    expect_test::expect![[r#"
        wrote app.py
        lsp: format on write: app.py failed (sh -c sed 's/x=1/x = 1/'; echo '# theirs' >> app.py): the file changed while it was formatted; it is left as it is now, not formatted
        lsp: no new errors or warnings in app.py"#]].assert_eq(&out);
    run.finish().await;
}

/// A server named to format that offers no formatting: said once per run,
/// and the file stays as written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_a_formatter_is_named_once() {
    if !python_ready() {
        return;
    }
    let dir = project(&[PYPROJECT, ("app.py", "x = 1\n")]);
    let run = Run::with_binding(
        dir,
        LspBinding::new(config(json!({"python": {"server": "python"}}))),
    );
    let out = write(&run, "app.py", "x=1\n").await;
    assert_eq!(run.read("app.py"), "x=1\n");
    expect_test::expect![[r#"
        wrote app.py
        lsp: format on write: app.py not formatted: python (basedpyright-langserver --stdio) has no formatter; name a formatter command in [lsp.format_on_write]
        lsp: no new errors or warnings in app.py"#]]
    .assert_eq(&out);
    // Said once per run, not once per file.
    let out = write(&run, "b.py", "y=2\n").await;
    assert_eq!(run.read("b.py"), "y=2\n");
    expect_test::expect![[r#"
        wrote b.py
        lsp: no new errors or warnings in b.py"#]]
    .assert_eq(&out);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_is_formatted_by_gopls() {
    if test_support::fixtures::require(&["gopls"]).is_none() {
        return;
    }
    let dir = project(&[
        ("go.mod", "module example.com/m\n\ngo 1.21\n"),
        ("main.go", "package main\n\nfunc main() {}\n"),
    ]);
    let run = Run::with_binding(dir, LspBinding::new(config(json!({"go": true}))));
    let written = "package main\n\nfunc main() {\n    x := 1\n  println( x )\n}\n";
    let out = write(&run, "main.go", written).await;
    assert_eq!(
        run.read("main.go"),
        "package main\n\nfunc main() {\n\tx := 1\n\tprintln(x)\n}\n"
    );
    expect_test::expect![[r#"
        wrote main.go
        lsp: format on write: main.go formatted by go (lines 4-5 differ from what you wrote; read it before editing it again)
        lsp: no new errors or warnings in main.go"#]]
    .assert_eq(&out);
    run.finish().await;
}

/// A project config (the checkout's text) naming a formatter command: in an
/// untrusted workspace it never runs, and the first write of one of its
/// files says so; trusted, it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_formatter_command_runs_only_in_a_trusted_workspace() {
    if !python_ready() {
        return;
    }
    let project_layer = || -> CatalogConfig {
        serde_json::from_value(json!({"format_on_write": {
            "python": {"command": ["sh", "-c", "touch project-formatter-ran; cat"]}
        }}))
        .unwrap()
    };
    for trusted in [false, true] {
        let dir = project(&[PYPROJECT, ("app.py", "x = 1\n")]);
        let marker = dir.path().join("project-formatter-ran");
        let config = config(json!({})).then_project(project_layer(), ".agent-tools.toml", trusted);
        let run = Run::with_binding(dir, LspBinding::new(config));
        let first = write(&run, "app.py", "x = 2\n").await;
        let second = write(&run, "app.py", "x = 3\n").await;
        assert_eq!(run.read("app.py"), "x = 3\n");
        if trusted {
            assert!(marker.exists(), "{first}");
            expect_test::expect![[r#"
                wrote app.py
                lsp: format on write: app.py unchanged (sh -c touch project-formatter-ran; cat)
                lsp: no new errors or warnings in app.py"#]]
            .assert_eq(&first);
        } else {
            assert!(!marker.exists(), "the untrusted project's formatter ran");
            expect_test::expect![[r#"
                wrote app.py
                lsp: .agent-tools.toml format_on_write.python (sh -c touch project-formatter-ran; cat): not run: project config names a command; trust the workspace to use it (--trust-workspace)
                lsp: no new errors or warnings in app.py"#]]
            .assert_eq(&first);
            expect_test::expect![[r#"
                wrote app.py
                lsp: no new errors or warnings in app.py"#]]
            .assert_eq(&second);
        }
        run.finish().await;
    }
}

/// TypeScript: typescript-language-server formats with the file's own
/// indentation (2 spaces here); prettier as a command finds the file's
/// kind from `{file}`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_is_formatted_by_its_server_or_by_prettier() {
    if test_support::fixtures::require(&["typescript-language-server"]).is_none()
        || test_support::fixtures::require(&["prettier"]).is_none()
    {
        return;
    }
    let written = "export function f( x:number ):number {\n  if (x>1) {\n      return x*2\n  }\n  return x;\n}\n";
    let files = [
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}}\n",
        ),
        ("app.ts", "export {};\n"),
    ];
    let run = Run::with_binding(
        project(&files),
        LspBinding::new(config(json!({"typescript": true}))),
    );
    let out = write(&run, "app.ts", written).await;
    expect_test::expect![[r#"
        export function f(x: number): number {
          if (x > 1) {
            return x * 2
          }
          return x;
        }
    "#]]
    .assert_eq(&run.read("app.ts"));
    expect_test::expect![[r#"
        wrote app.ts
        lsp: format on write: app.ts formatted by typescript (lines 1-3 differ from what you wrote; read it before editing it again)
        lsp: no new errors or warnings in app.ts"#]].assert_eq(&out);
    run.finish().await;

    let run = Run::with_binding(
        project(&files),
        LspBinding::new(config(json!({
            "typescript": {"command": ["prettier", "--stdin-filepath", "{file}"]}
        }))),
    );
    let out = write(&run, "app.ts", written).await;
    expect_test::expect![[r#"
        export function f(x: number): number {
          if (x > 1) {
            return x * 2;
          }
          return x;
        }
    "#]]
    .assert_eq(&run.read("app.ts"));
    expect_test::expect![[r#"
        wrote app.ts
        lsp: format on write: app.ts formatted by prettier --stdin-filepath app.ts (lines 1-3 differ from what you wrote; read it before editing it again)
        lsp: no new errors or warnings in app.ts"#]].assert_eq(&out);
    run.finish().await;
}
