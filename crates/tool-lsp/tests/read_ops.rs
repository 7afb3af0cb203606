//! The read operations of issue 17 against the real servers: enclosing
//! symbols on every location, call and type hierarchy, signature help,
//! `capabilities` and diagnostics on a glob. Exact answers (snapshots).

mod common;

use common::{project, Run};
use expect_test::expect;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_locations_name_their_enclosing_symbol() {
    if tool_core::fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let run = Run::new(project("python"));
    let refs = run
        .lsp(json!({"op": "references", "file": "app.py", "line": 5, "symbol": "greet"}))
        .await;
    expect![[r#"
        lsp references  `greet` at app.py:5 — 4 references in 2 files
        app.py:1      from util import Greeter, greet
        app.py:5      message = greet("world")  (in main)
        app.py:8      s = "🙂漢字" + greet("x")  (in main)
        util.py:11    def greet(name: str) -> str:  (in greet)"#]]
    .assert_eq(&refs);
    let def = run
        .lsp(json!({"op": "definition", "file": "app.py", "line": 7, "symbol": "say"}))
        .await;
    expect![[r#"
        lsp definition  `say` at app.py:7
        util.py:7    def say(self) -> str:  (in Greeter/say)"#]]
    .assert_eq(&def);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_locations_name_their_enclosing_symbol() {
    if tool_core::fixtures::require(&["typescript-language-server"]).is_none() {
        return;
    }
    let run = Run::new(project("typescript"));
    let refs = run
        .lsp(json!({"op": "references", "file": "src/app.ts", "line": 4, "symbol": "greet"}))
        .await;
    expect![[r#"
        lsp references  `greet` at src/app.ts:4 — 4 references in 2 files
        src/app.ts:1      import { Greeter, greet, Speaker } from "./util";
        src/app.ts:4      const message = greet("world");  (in main)
        src/app.ts:7      const s = "🙂漢字" + greet("x");  (in main)
        src/util.ts:15    export function greet(name: string): string {  (in greet)"#]]
    .assert_eq(&refs);
    let imp = run
        .lsp(json!({"op": "implementation", "file": "src/util.ts", "line": 3, "symbol": "say"}))
        .await;
    expect![[r#"
        lsp implementation  `say` at src/util.ts:3
        src/util.ts:9    say(): string {  (in Greeter/say)"#]]
    .assert_eq(&imp);
    run.finish().await;
}
