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
    let mut failures = Vec::new();
    for row in ROWS {
        if !common::row_selected(row.name) {
            continue;
        }
        if test_support::fixtures::require(&[row.binary]).is_none() {
            continue;
        }
        let got = answers(row).await;
        if std::env::var_os("ROWS_SHOW").is_some() {
            eprintln!("==== {}\n{got}\n", row.name);
        }
        if got != row.expect {
            failures.push(format!("{}: want\n{}\ngot\n{got}", row.name, row.expect));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
