//! A write's new problems in other files: from the servers that publish
//! for the whole project (rust-analyzer's cargo check, gopls), and from
//! the files that mention what the write changed, opened and asked before
//! and after it (basedpyright, tsserver), or opened before it and judged
//! by their next publish (clangd checks its open files again on a save). One table, a row per server. Each row starts a workspace whose other files call a
//! function (one of them also holds a problem of its own from before the
//! run), writes the function's file once unchanged in meaning (the
//! server starts and checks the project), then changes its signature: the
//! answer names exactly the callers' new problems, not the standing one.
//! The first write, on a cold server, says that other files were not
//! judged rather than implying them clean.
//!
//! A second table does the same through a staged `ast_edit`: its preview
//! names the callers' new problems (the servers sent the staged text as
//! unsaved only), callers that were broken already add nothing, a server
//! that judges other files only from the disk (rust-analyzer) is said not
//! to have judged them, and `resolve accept` reports what broke as a
//! write does.

mod common;

use common::{masked, Run};
use serde_json::json;

struct Row {
    name: &'static str,
    binary: &'static str,
    files: &'static [(&'static str, &'static str)],
    /// The function's file, its text again (the first write), and its
    /// text with the signature changed.
    change: (&'static str, &'static str, &'static str),
    /// The second write's answer.
    expect: &'static str,
}

const ROWS: &[Row] = &[
    Row {
        name: "rust",
        binary: "rust-analyzer",
        files: &[
            ("Cargo.toml", "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
            ("src/lib.rs", "pub fn f(x: i32) -> i32 {\n    x\n}\n"),
            ("tests/it.rs", "#[test]\nfn t() {\n    assert_eq!(m::f(1), 1);\n}\n"),
            ("tests/more.rs", "#[test]\nfn u() {\n    assert_eq!(m::f(2), 2);\n}\n\n#[test]\nfn standing() {\n    let _n: i32 = \"standing\";\n}\n"),
        ],
        change: (
            "src/lib.rs",
            "/// The identity.\npub fn f(x: i32) -> i32 {\n    x\n}\n",
            "/// The sum.\npub fn f(x: i32, y: i32) -> i32 {\n    x + y\n}\n",
        ),
        expect: r#"wrote src/lib.rs
lsp: no new errors or warnings in src/lib.rs
lsp: other files not checked: rust (rust-analyzer) had not finished its first check of the project when this change began (later changes are judged)
---
wrote src/lib.rs
lsp: no new errors or warnings in src/lib.rs
lsp: 2 new problems in 2 other files after this write:
tests/it.rs:3:16 error [E0061] this function takes 2 arguments but 1 argument was supplied
tests/more.rs:3:16 error [E0061] this function takes 2 arguments but 1 argument was supplied"#,
    },
    Row {
        name: "go",
        binary: "gopls",
        files: &[
            ("go.mod", "module m\n\ngo 1.21\n"),
            ("m.go", "package m\n\nfunc F(x int) int {\n\treturn x\n}\n"),
            ("use.go", "package m\n\nfunc G() int {\n\treturn F(2)\n}\n\nfunc H() int {\n\treturn \"standing\"\n}\n"),
            ("m_test.go", "package m\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {\n\tif F(1) != 1 {\n\t\tt.Fatal()\n\t}\n}\n"),
        ],
        change: (
            "m.go",
            "package m\n\n// F is the identity.\nfunc F(x int) int {\n\treturn x\n}\n",
            "package m\n\n// F is the sum.\nfunc F(x, y int) int {\n\treturn x + y\n}\n",
        ),
        expect: r#"wrote m.go
lsp: no new errors or warnings in m.go
lsp: other files not checked: go (gopls) had not finished its first check of the project when this change began (later changes are judged)
---
wrote m.go
lsp: no new errors or warnings in m.go
lsp: 2 new problems in 2 other files after this write:
m_test.go:6:8 error [WrongArgCount] not enough arguments in call to F
use.go:4:12 error [WrongArgCount] not enough arguments in call to F"#,
    },
    Row {
        name: "python",
        binary: "basedpyright-langserver",
        files: &[
            ("pyproject.toml", "[project]\nname = \"m\"\nversion = \"0\"\n"),
            ("m.py", "def f(x: int) -> int:\n    return x\n"),
            ("use.py", "from m import f\n\n\ndef g() -> int:\n    return f(2)\n"),
            ("test_m.py", "from m import f\n\n\ndef test_f() -> None:\n    assert f(1) == 1\n\n\ndef standing() -> int:\n    return \"standing\"\n"),
        ],
        change: (
            "m.py",
            "def f(x: int) -> int:\n    \"\"\"The identity.\"\"\"\n    return x\n",
            "def f(x: int, y: int) -> int:\n    \"\"\"The sum.\"\"\"\n    return x + y\n",
        ),
        expect: r#"wrote m.py
lsp: no new errors or warnings in m.py
---
wrote m.py
lsp: no new errors or warnings in m.py
lsp: 3 new problems in 2 other files after this write:
test_m.py:5:12 error [reportCallIssue] Argument missing for parameter "y"
use.py:5:12 error [reportCallIssue] Argument missing for parameter "y"
use.py:5:12 warning [reportUnknownVariableType] Return type is unknown"#,
    },
    Row {
        name: "typescript",
        binary: "typescript-language-server",
        files: &[
            ("package.json", "{\"name\": \"m\", \"private\": true}\n"),
            ("tsconfig.json", "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}}\n"),
            ("m.ts", "export function f(x: number): number {\n  return x;\n}\n"),
            ("use.ts", "import { f } from \"./m\";\n\nexport const g = (): number => f(2);\n"),
            ("m.test.ts", "import { f } from \"./m\";\n\nexport const t = (): boolean => f(1) === 1;\nexport const standing: number = \"standing\";\n"),
        ],
        change: (
            "m.ts",
            "/** The identity. */\nexport function f(x: number): number {\n  return x;\n}\n",
            "/** The sum. */\nexport function f(x: number, y: number): number {\n  return x + y;\n}\n",
        ),
        expect: r#"wrote m.ts
lsp: no new errors or warnings in m.ts
---
wrote m.ts
lsp: no new errors or warnings in m.ts
lsp: 2 new problems in 2 other files after this write:
m.test.ts:3:33 error [2554] Expected 2 arguments, but got 1.
use.ts:3:32 error [2554] Expected 2 arguments, but got 1."#,
    },
    Row {
        name: "c",
        binary: "clangd",
        files: &[
            ("Makefile", "all:\n"),
            ("util.h", "int f(int x);\n"),
            ("util.c", "#include \"util.h\"\nint f(int x) { return x; }\n"),
            ("use.c", "#include \"util.h\"\nint g(void) { return f(2); }\n"),
            ("test_util.c", "#include \"util.h\"\nint t(void) { return f(1) == 1; }\nint standing(void) { return undefined_thing; }\n"),
        ],
        change: (
            "util.h",
            "/* The identity. */\nint f(int x);\n",
            "/* The sum. */\nint f(int x, int y);\n",
        ),
        expect: r#"wrote util.h
lsp: no new errors or warnings in util.h
---
wrote util.h
lsp: no new errors or warnings in util.h
lsp: 3 new problems in 3 other files after this write:
test_util.c:2:25 error [typecheck_call_too_few_args] Too few arguments to function call, expected 2, have 1
use.c:2:25 error [typecheck_call_too_few_args] Too few arguments to function call, expected 2, have 1
util.c:2:5 error [conflicting_types] Conflicting types for 'f'"#,
    },
    // The dependents were not open before the write (the first write
    // changed another declaration): clangd reads the header from disk, so
    // their state before it cannot be asked, and the answer says so.
    Row {
        name: "c-unopened",
        binary: "clangd",
        files: &[
            ("Makefile", "all:\n"),
            ("util.h", "int f(int x);\nint k(void);\n"),
            ("util.c", "#include \"util.h\"\nint f(int x) { return x; }\n"),
            ("use.c", "#include \"util.h\"\nint g(void) { return f(2); }\n"),
            ("test_util.c", "#include \"util.h\"\nint t(void) { return f(1) == 1; }\nint standing(void) { return undefined_thing; }\n"),
        ],
        change: (
            "util.h",
            "int f(int x);\nlong k(void);\n",
            "int f(int x, int y);\nlong k(void);\n",
        ),
        expect: r#"wrote util.h
lsp: no new errors or warnings in util.h
---
wrote util.h
lsp: no new errors or warnings in util.h
lsp: 3 problems in 3 other files on lines that use `f`, not known whether new (they were not open in c (clangd) before this write, and it reads the written file from disk):
test_util.c:2:25 error [typecheck_call_too_few_args] Too few arguments to function call, expected 2, have 1
use.c:2:25 error [typecheck_call_too_few_args] Too few arguments to function call, expected 2, have 1
util.c:2:5 error [conflicting_types] Conflicting types for 'f'"#,
    },
];

async fn answers(row: &Row) -> String {
    let run = Run::with_files(row.files, 30_000);
    let (file, same, changed) = row.change;
    let mut out = Vec::new();
    for content in [same, changed] {
        let answer = run
            .call("write", json!({"path": file, "content": content}))
            .await
            .unwrap_or_else(|e| format!("error: {e}"));
        out.push(answer);
    }
    let root = run.root.clone();
    run.finish().await;
    masked(&out.join("\n---\n"), &root)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signature_change_names_the_callers_it_broke() {
    let rows = ROWS.iter().map(|r| ((r.name, r.binary, r.expect), r));
    check_rows(rows, answers).await;
}

/// Each selected row whose server is installed (`ROWS=a,b` selects;
/// `ROWS_SHOW=1` prints every answer), answered, against its expected text.
async fn check_rows<'r, R: 'r, F, Fut>(
    rows: impl Iterator<Item = ((&'static str, &'static str, &'static str), &'r R)>,
    answer: F,
) where
    F: Fn(&'r R) -> Fut,
    Fut: std::future::Future<Output = String>,
{
    let mut failures = Vec::new();
    for ((name, binary, expect), row) in rows {
        if !common::row_selected(name) {
            continue;
        }
        if test_support::fixtures::require(&[binary]).is_none() {
            continue;
        }
        let got = answer(row).await;
        if std::env::var_os("ROWS_SHOW").is_some() {
            eprintln!("==== {name}\n{got}\n");
        }
        if got != expect {
            failures.push(format!("{name}: want\n{expect}\ngot\n{got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A staged `ast_edit` that changes a signature: its preview names the
/// callers' new problems in other files (judged as a write's are), and
/// `resolve accept` reports them as a write does.
struct PreviewRow {
    name: &'static str,
    binary: &'static str,
    files: &'static [(&'static str, &'static str)],
    /// The function's file and its text again (a first write, which starts
    /// the server and has it check the project).
    warm: (&'static str, &'static str),
    /// `ast_edit`'s arguments.
    edit: (&'static str, &'static str, &'static str),
    /// The preview's diagnostics section (from its first `after this
    /// change`: the diff before it is tool-astgrep's), then the accept's
    /// answer.
    expect: &'static str,
}

const PY_F: &str = "def f(x: int) -> int:\n    return x\n";
const GO_F: &str = "package m\n\nfunc F(x int) int {\n\treturn x\n}\n";
const GO_MOD: &str = "module m\n\ngo 1.21\n";
const PYPROJECT: &str = "[project]\nname = \"m\"\nversion = \"0\"\n";
/// `ast_edit`'s arguments that add a required parameter `y`.
const PY_EDIT: (&str, &str, &str) = (
    "def f($X: int) -> int: $$$B",
    "def f($X: int, y: int) -> int:\n    $$$B",
    "m.py",
);
const GO_EDIT: (&str, &str, &str) = (
    "func F($X int) int { $$$B }",
    "func F($X, y int) int {\n\t$$$B\n}",
    "m.go",
);

const PREVIEW_ROWS: &[PreviewRow] = &[
    PreviewRow {
        name: "python",
        binary: "basedpyright-langserver",
        files: &[
            ("pyproject.toml", PYPROJECT),
            ("m.py", PY_F),
            ("use.py", "from m import f\n\n\ndef g() -> int:\n    return f(2)\n"),
            ("test_m.py", "from m import f\n\n\ndef test_f() -> None:\n    assert f(1) == 1\n\n\ndef standing() -> int:\n    return \"standing\"\n"),
        ],
        warm: ("m.py", PY_F),
        edit: PY_EDIT,
        expect: r#"after this change: 2 new errors, 1 new warning in 2 other files
  test_m.py:5:12 error [reportCallIssue] Argument missing for parameter "y"
  use.py:5:12 error [reportCallIssue] Argument missing for parameter "y"
  use.py:5:12 warning [reportUnknownVariableType] Return type is unknown
after this change: 1 new warning in the files it changes
  m.py:1:15 warning [reportUnusedParameter] "y" is not accessed
---
resolve edit_1: accepted — 1 replacement written to 1 file: m.py
lsp: 1 new problem in m.py after this write:
m.py:1:15 warning [reportUnusedParameter] "y" is not accessed (python)
lsp: 3 new problems in 2 other files after this write:
test_m.py:5:12 error [reportCallIssue] Argument missing for parameter "y"
use.py:5:12 error [reportCallIssue] Argument missing for parameter "y"
use.py:5:12 warning [reportUnknownVariableType] Return type is unknown"#,
    },
    // The callers were broken already (they pass the second argument
    // before the function takes it): nothing in them is new.
    PreviewRow {
        name: "python-callers-broken",
        binary: "basedpyright-langserver",
        files: &[
            ("pyproject.toml", PYPROJECT),
            ("m.py", PY_F),
            ("use.py", "from m import f\n\n\ndef g() -> int:\n    return f(2, 3)\n"),
            ("test_m.py", "from m import f\n\n\ndef test_f() -> None:\n    assert f(1, 0) == 1\n"),
        ],
        warm: ("m.py", PY_F),
        edit: PY_EDIT,
        expect: r#"after this change: 1 new warning
  m.py:1:15 warning [reportUnusedParameter] "y" is not accessed
---
resolve edit_1: accepted — 1 replacement written to 1 file: m.py
lsp: 1 new problem in m.py after this write:
m.py:1:15 warning [reportUnusedParameter] "y" is not accessed (python)"#,
    },
    PreviewRow {
        name: "go",
        binary: "gopls",
        files: &[
            ("go.mod", GO_MOD),
            ("m.go", GO_F),
            ("use.go", "package m\n\nfunc G() int {\n\treturn F(2)\n}\n\nfunc H() int {\n\treturn \"standing\"\n}\n"),
            ("m_test.go", "package m\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {\n\tif F(1) != 1 {\n\t\tt.Fatal()\n\t}\n}\n"),
        ],
        warm: ("m.go", GO_F),
        edit: GO_EDIT,
        expect: r#"after this change: 2 new errors in 2 other files
  m_test.go:6:8 error [WrongArgCount] not enough arguments in call to F
  use.go:4:12 error [WrongArgCount] not enough arguments in call to F
after this change: no new errors or warnings in the files it changes
---
resolve edit_1: accepted — 1 replacement written to 1 file: m.go
lsp: no new errors or warnings in m.go
lsp: 2 new problems in 2 other files after this write:
m_test.go:6:8 error [WrongArgCount] not enough arguments in call to F
use.go:4:12 error [WrongArgCount] not enough arguments in call to F"#,
    },
    PreviewRow {
        name: "go-callers-broken",
        binary: "gopls",
        files: &[
            ("go.mod", GO_MOD),
            ("m.go", GO_F),
            ("use.go", "package m\n\nfunc G() int {\n\treturn F(2, 3)\n}\n"),
            ("m_test.go", "package m\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {\n\tif F(1, 0) != 1 {\n\t\tt.Fatal()\n\t}\n}\n"),
        ],
        warm: ("m.go", GO_F),
        edit: GO_EDIT,
        expect: r#"after this change: no new errors or warnings
---
resolve edit_1: accepted — 1 replacement written to 1 file: m.go
lsp: no new errors or warnings in m.go"#,
    },
    // rust-analyzer judges other files by cargo check, which reads the
    // disk: the preview says so, and the accept names what broke.
    PreviewRow {
        name: "rust",
        binary: "rust-analyzer",
        files: &[
            ("Cargo.toml", "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
            ("src/lib.rs", "pub fn f(x: i32) -> i32 {\n    x\n}\n"),
            ("tests/it.rs", "#[test]\nfn t() {\n    assert_eq!(m::f(1), 1);\n}\n"),
        ],
        warm: ("src/lib.rs", "pub fn f(x: i32) -> i32 {\n    x\n}\n"),
        edit: ("pub fn f($X: i32) -> i32 { $$$B }", "pub fn f($X: i32, y: i32) -> i32 {\n    $$$B\n}", "src/lib.rs"),
        expect: r#"after this change: no new errors or warnings
after this change: other files not checked: rust (rust-analyzer) judges them only by its save-time check, which reads the disk, and a preview writes nothing (accepting the change checks them)
---
resolve edit_1: accepted — 1 replacement written to 1 file: src/lib.rs
lsp: 1 new problem in src/lib.rs after this write:
src/lib.rs:1:18 warning [unused_variables] unused variable: `y`
lsp: 1 new problem in 1 other file after this write:
tests/it.rs:3:16 error [E0061] this function takes 2 arguments but 1 argument was supplied"#,
    },
];

async fn preview_answers(row: &PreviewRow) -> String {
    let run = Run::with_files_and_staging(row.files, 30_000);
    let (file, text) = row.warm;
    let mut out = Vec::new();
    let warmed = run
        .call("write", json!({"path": file, "content": text}))
        .await;
    let (pattern, rewrite, path) = row.edit;
    let preview = run
        .call(
            "ast_edit",
            json!({"pattern": pattern, "rewrite": rewrite, "path": path}),
        )
        .await;
    out.push(match preview {
        Ok(text) => match text.find("\nafter this change") {
            Some(at) => text[at + 1..].to_string(),
            None => text,
        },
        Err(e) => format!("error: {e}"),
    });
    let accepted = run
        .call("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    out.push(accepted.unwrap_or_else(|e| format!("error: {e}")));
    if let Err(e) = warmed {
        out.push(format!("the first write failed: {e}"));
    }
    let root = run.root.clone();
    run.finish().await;
    masked(&out.join("\n---\n"), &root)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ast_edit_preview_names_the_callers_it_would_break() {
    let rows = PREVIEW_ROWS
        .iter()
        .map(|r| ((r.name, r.binary, r.expect), r));
    check_rows(rows, preview_answers).await;
}
