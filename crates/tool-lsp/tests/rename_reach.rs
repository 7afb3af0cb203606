//! Renames and reference searches that are complete or say where they are
//! not, against the real servers on projects whose configuration leaves
//! files out of the server's own project model: C without a compile
//! database, Python and TypeScript with a tests/ folder outside
//! pyrightconfig's and tsconfig's `include`.

mod common;

use common::{project, Run};
use serde_json::json;

fn rename(file: &str, line: u32, symbol: &str, new_name: &str) -> serde_json::Value {
    json!({"file": file, "line": line, "symbol": symbol, "new_name": new_name})
}

/// The files whose content differs from the fixture's, sorted.
fn changed_files(run: &Run, fixture: &str) -> Vec<String> {
    let src = test_support::project::fixture("lsp", fixture);
    let mut out = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            if std::fs::read(&p).unwrap() != std::fs::read(run.root.join(&rel)).unwrap() {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_without_a_compile_database_a_rename_from_the_header_reaches_every_c_file() {
    let run = Run::new(project("rename_c"));
    let out = run
        .call("lsp_rename", rename("calc.h", 5, "add", "sum"))
        .await
        .unwrap();
    expect_test::expect![[r#"
        lsp_rename  `add` → `sum`: 4 edits in 3 files
        calc.c (1 edit)
        calc.h (1 edit)
        main.c (2 edits)"#]]
    .assert_eq(&out);
    assert_eq!(
        changed_files(&run, "rename_c"),
        ["calc.c", "calc.h", "main.c"]
    );
    assert_eq!(run.read("main.c").matches("sum(").count(), 2);
    run.finish().await;
}

/// A file with another `add` (a static function of its own) that no rename
/// of the header's `add` touches.
fn with_other_add(run: &Run) {
    std::fs::write(
        run.root.join("other.c"),
        "static int add(int x) { return x + 1; }\n\nint twice(int x) { return add(add(x)); }\n",
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_without_a_compile_database_a_rename_that_leaves_mentions_is_refused_unless_partial() {
    let run = Run::new(project("rename_c"));
    with_other_add(&run);
    let err = run
        .call("lsp_rename", rename("calc.h", 5, "add", "sum"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "refused");
    expect_test::expect![[r#"
        refused: c (clangd) has no compile database at . (no compile_commands.json or compile_flags.txt), so it sees only the files open in it, and its rename of `add` to `sum` would leave these:
        not renamed — other.c: 3 mentions of `add` (may be other symbols)
        nothing was written; pass `partial: true` to rename anyway, or give the project a compile_commands.json"#]].assert_eq(&err.to_string());
    assert_eq!(changed_files(&run, "rename_c"), Vec::<String>::new());

    let mut args = rename("calc.h", 5, "add", "sum");
    args["partial"] = json!(true);
    let out = run.call("lsp_rename", args).await.unwrap();
    expect_test::expect![[r#"
        lsp_rename  `add` → `sum`: 4 edits in 3 files
        calc.c (1 edit)
        calc.h (1 edit)
        main.c (2 edits)"#]]
    .assert_eq(&out);
    assert_eq!(
        changed_files(&run, "rename_c"),
        ["calc.c", "calc.h", "main.c"]
    );
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_a_tests_folder_outside_pyrightconfig_include_is_renamed_or_listed() {
    let run = Run::new(project("rename_python"));
    let out = run
        .call("lsp_rename", rename("pkg/core.py", 1, "greet", "salute"))
        .await
        .unwrap();
    expect_test::expect![[r#"
        lsp_rename  `greet` → `salute`: 7 edits in 3 files
        pkg/app.py (2 edits)
        pkg/core.py (1 edit)
        tests/test_core.py (4 edits)"#]]
    .assert_eq(&out);
    expect_test::expect![[r#"
        [
            "pkg/app.py",
            "pkg/core.py",
            "tests/test_core.py",
        ]
    "#]]
    .assert_debug_eq(&changed_files(&run, "rename_python"));
    // A symbol that occurs only inside a longer identifier is not renamed.
    let files = ["pkg/app.py", "pkg/core.py", "tests/test_core.py"];
    let before: Vec<String> = files.iter().map(|f| run.read(f)).collect();
    let err = run
        .call("lsp_rename", rename("pkg/core.py", 1, "salu", "hail"))
        .await
        .unwrap_err();
    expect_test::expect!["bad arguments: `salu` occurs on pkg/core.py:1 only inside `salute`; pass `salute` as the symbol to rename it; nothing was written"]
    .assert_eq(&err.to_string());
    let after: Vec<String> = files.iter().map(|f| run.read(f)).collect();
    assert_eq!(before, after);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_a_tests_folder_outside_tsconfig_include_is_renamed_or_listed() {
    let run = Run::new(project("rename_typescript"));
    let out = run
        .call("lsp_rename", rename("src/util.ts", 1, "greet", "salute"))
        .await
        .unwrap();
    expect_test::expect![[r#"
        lsp_rename  `greet` → `salute`: 6 edits in 3 files
        src/app.ts (2 edits)
        src/util.ts (1 edit)
        tests/util.test.ts (3 edits)"#]]
    .assert_eq(&out);
    expect_test::expect![[r#"
        [
            "src/app.ts",
            "src/util.ts",
            "tests/util.test.ts",
        ]
    "#]]
    .assert_debug_eq(&changed_files(&run, "rename_typescript"));
    run.finish().await;
}

/// A mention no server can resolve: in a comment, and in a string.
fn with_textual_greet(run: &Run, file: &str, comment: &str) {
    std::fs::write(
        run.root.join(file),
        format!("{comment} greet is said here\nNAME = \"greet\"\n"),
    )
    .unwrap();
}

/// The first call of a run, on a cold clangd without a compile database:
/// references from the header reach every `.c` file that calls it, one of
/// them through a macro's argument (as lua's `lvm.c` calls `luaH_getn`),
/// each parsed before the request is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_without_a_compile_database_references_from_the_header_reach_every_c_file() {
    let run = Run::new(project("rename_c"));
    std::fs::write(
        run.root.join("vm.c"),
        "#include \"calc.h\"\n\n#define TWICE(x) ((x) * 2)\n\nint vm(void) { return TWICE(add(1, 2)); }\n",
    )
    .unwrap();
    let out = run
        .lsp(json!({"op": "references", "file": "calc.h", "line": 5, "symbol": "add"}))
        .await;
    expect_test::expect![[r#"
        lsp references  `add` at calc.h:5 — 5 references in 4 files
        calc.c:3    int add(int a, int b) { return a + b; }  (in add)
        calc.h:5    int add(int a, int b);  (in add)
        main.c:5    int total = add(1, 2);  (in main)
        main.c:6    printf("%d\n", add(total, 3));  (in main)
        vm.c:5      int vm(void) { return TWICE(add(1, 2)); }  (in vm)"#]]
    .assert_eq(&out);
    run.finish().await;
}

/// The first call of a run, on a cold server: references reach the files
/// outside `include` (and, for basedpyright, the included ones it had not
/// read yet), and the mentions that are not references are named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_references_reach_a_tests_folder_outside_pyrightconfig_include() {
    let run = Run::new(project("rename_python"));
    with_textual_greet(&run, "tests/notes.py", "#");
    let out = run
        .lsp(json!({"op": "references", "file": "pkg/core.py", "line": 1, "symbol": "greet"}))
        .await;
    expect_test::expect![[r#"
        lsp references  `greet` at pkg/core.py:1 — 7 references in 3 files
        pkg/app.py:1            from pkg.core import greet
        pkg/app.py:3            print(greet("app"))
        pkg/core.py:1           def greet(name: str) -> str:  (in greet)
        tests/test_core.py:1    from pkg.core import greet
        tests/test_core.py:5    assert greet("x") == "hello x"  (in test_greet)
        tests/test_core.py:9    assert greet(greet("x")) != ""  (in test_greet_twice)
        tests/test_core.py:9    assert greet(greet("x")) != ""  (in test_greet_twice)
        also mentioned — `greet` in comments and strings: tests/notes.py:1, 2"#]]
    .assert_eq(&out);
    // Only inside a longer identifier: the answer names the one it is about.
    let out = run
        .lsp(json!({"op": "references", "file": "pkg/core.py", "line": 1, "symbol": "gree"}))
        .await;
    expect_test::expect!["lsp references  `greet` at pkg/core.py:1 (`gree` occurs there only inside it) — 7 references in 3 files"]
    .assert_eq(out.lines().next().unwrap());
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_references_reach_a_tests_folder_outside_tsconfig_include() {
    let run = Run::new(project("rename_typescript"));
    with_textual_greet(&run, "tests/notes.ts", "//");
    let out = run
        .lsp(json!({"op": "references", "file": "src/util.ts", "line": 1, "symbol": "greet"}))
        .await;
    expect_test::expect![[r#"
        lsp references  `greet` at src/util.ts:1 — 6 references in 3 files
        src/app.ts:1            import { greet } from "./util";
        src/app.ts:3            console.log(greet("app"));
        src/util.ts:1           export function greet(name: string): string {  (in greet)
        tests/util.test.ts:1    import { greet } from "../src/util";
        tests/util.test.ts:3    if (greet("x") !== "hello x") {
        tests/util.test.ts:4    throw new Error(greet("y"));
        also mentioned — `greet` in comments and strings: tests/notes.ts:1, 2"#]]
    .assert_eq(&out);
    run.finish().await;
}
