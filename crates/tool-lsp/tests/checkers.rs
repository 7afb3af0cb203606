//! `diagnostics "*"`: each project checker runs for real and its output is
//! parsed into the same lines as a server's diagnostics.

mod common;

use common::{masked, project, Run};
use expect_test::{expect, Expect};
use serde_json::json;
use tool_lsp::{CatalogConfig, LspBinding};

async fn check(fixture: &str, tools: &[&str], says: Expect) {
    check_with(fixture, tools, says, LspBinding::new(Default::default())).await;
}

/// `diagnostics "*"` on the fixture: the whole answer (the run's folder
/// masked).
async fn check_with(fixture: &str, tools: &[&str], says: Expect, binding: LspBinding) {
    if test_support::fixtures::require(tools).is_none() {
        return;
    }
    let run = Run::with_binding(project(fixture), binding);
    let out = run.lsp(json!({"op": "diagnostics", "file": "*"})).await;
    says.assert_eq(&masked(&out, &run.root));
    // Checkers are one-shot processes: no server was started.
    assert!(run.pids().await.is_empty());
    run.finish().await;
}

#[tokio::test]
async fn basedpyright_checks_the_python_project() {
    check(
        "python",
        &["basedpyright", "pyright"],
        expect![[r#"
            lsp diagnostics *  python at . (basedpyright --outputjson) — 1 error, 1 other in 2 files
            broken.py:2:12 error [reportReturnType] Type "Literal['not a number']" is not assignable to return type "int"
            util.py:5:14 warning [reportUnannotatedClassAttribute] Type annotation for attribute `word` is required because this class is not decorated with `@final`"#]],
    )
    .await;
}

#[tokio::test]
async fn tsc_checks_the_typescript_project() {
    check(
        "typescript",
        &["tsc"],
        expect![[r#"
            lsp diagnostics *  typescript at . (tsc --noEmit --pretty false) — 1 error, 0 others in 1 file
            src/broken.ts:2:3 error [TS2322] Type 'string' is not assignable to type 'number'."#]],
    )
    .await;
}

#[tokio::test]
async fn cargo_check_checks_the_rust_project() {
    // The test inherits this workspace's CARGO_TARGET_DIR, whose lock the
    // running `cargo test` holds; the checker gets its own (through the
    // catalog config, as a harness would set it).
    let target = tempfile::tempdir().unwrap();
    let config: CatalogConfig = serde_json::from_value(json!({"servers": [{
        "id": "rust", "extensions": {"rs": "rust"}, "commands": [["rust-analyzer"]],
        "root_markers": ["Cargo.toml"], "root_rule": "cargo_workspace",
        "checker": {"commands": [["cargo", "check", "--message-format=json"]], "format": "cargo_json",
                    "env": {"CARGO_TARGET_DIR": target.path().to_str().unwrap()}}
    }]}))
    .unwrap();
    check_with(
        "rust",
        &["cargo"],
        expect![[r#"
            lsp diagnostics *  rust at . (cargo check --message-format=json) — 1 error, 0 others in 1 file
            src/broken.rs:2:5 error [E0308] mismatched types"#]],
        LspBinding::new(config),
    )
    .await;
}

#[tokio::test]
async fn go_vet_checks_the_go_project() {
    check(
        "go",
        &["go"],
        expect![[r#"
            lsp diagnostics *  go at . (go vet ./...) — 1 error, 0 others in 1 file
            broken.go:4:9 error cannot use "not a number" (untyped string constant) as int value in return statement"#]],
    )
    .await;
}

#[tokio::test]
async fn clangd_checks_the_compile_database() {
    check(
        "c",
        &["clangd"],
        expect![[r#"
            lsp diagnostics *  c at . (clangd --check on 3 files of compile_commands.json) — 0 errors, 1 other in 1 file
            broken.c:2:1 problem [undeclared_var_use] use of undeclared identifier 'missing_name'"#]],
    )
    .await;
}

#[tokio::test]
async fn c_without_a_compile_database_says_there_is_no_checker() {
    if test_support::fixtures::require(&["clangd"]).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("compile_flags.txt"), "-std=c11\n").unwrap();
    std::fs::write(dir.path().join("a.c"), "int main(void) { return 0; }\n").unwrap();
    let run = Run::new(dir);
    let out = run.lsp(json!({"op": "diagnostics", "file": "*"})).await;
    expect!["lsp diagnostics *  c at .: there is no project checker for C/C++ without a compile database: no compile_commands.json in .; generate one (cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON, bear) or use op `diagnostics` on one file"].assert_eq(&masked(&out, &run.root));
    run.finish().await;
}
