//! `diagnostics "*"`: each project checker runs for real and its output is
//! parsed into the same lines as a server's diagnostics.

mod common;

use common::{has, project, Run};
use serde_json::json;
use tool_lsp::{CatalogConfig, LspBinding};

async fn check(fixture: &str, tools: &[&str], says: &[&str]) {
    check_with(fixture, tools, says, LspBinding::new(Default::default())).await;
}

async fn check_with(fixture: &str, tools: &[&str], says: &[&str], binding: LspBinding) {
    if test_support::fixtures::require(tools).is_none() {
        return;
    }
    let run = Run::with_binding(project(fixture), binding);
    let out = run.lsp(json!({"op": "diagnostics", "file": "*"})).await;
    for s in says {
        has(&out, s);
    }
    // Checkers are one-shot processes: no server was started.
    assert!(run.pids().await.is_empty());
    run.finish().await;
}

#[tokio::test]
async fn basedpyright_checks_the_python_project() {
    check(
        "python",
        &["basedpyright", "pyright"],
        &[
            "lsp diagnostics *  python at . (basedpyright --outputjson)",
            "broken.py:2:12 error [reportReturnType]",
        ],
    )
    .await;
}

#[tokio::test]
async fn tsc_checks_the_typescript_project() {
    check(
        "typescript",
        &["tsc"],
        &[
            "typescript at . (tsc --noEmit --pretty false) — 1 error",
            "src/broken.ts:2:3 error [TS2322] Type 'string' is not assignable to type 'number'.",
        ],
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
        &[
            "rust at . (cargo check --message-format=json) — 1 error",
            "src/broken.rs:2:5 error [E0308] mismatched types",
        ],
        LspBinding::new(config),
    )
    .await;
}

#[tokio::test]
async fn go_vet_checks_the_go_project() {
    check(
        "go",
        &["go"],
        &["go at . (go vet ./...) — 1 error", "broken.go:4:9 error"],
    )
    .await;
}

#[tokio::test]
async fn clangd_checks_the_compile_database() {
    check(
        "c",
        &["clangd"],
        &[
            "c at . (clangd --check on 3 files of compile_commands.json)",
            "broken.c:2:1 problem [undeclared_var_use] use of undeclared identifier 'missing_name'",
        ],
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
    has(&out, "there is no project checker for C/C++ without a compile database: no compile_commands.json in .");
    run.finish().await;
}
