//! The `lsp` tool, `lsp_rename` and diagnostics on write against the real
//! servers `cargo xtask fixtures` installs, one small fixture project each.
//! Each scenario starts its server once and asks it everything.

mod common;

use common::{run_scenario, run_scenario_with, Scenario};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_basedpyright() {
    run_scenario(&Scenario {
        fixture: "python",
        servers: &["basedpyright-langserver", "pyright-langserver"],
        app: "app.py",
        util: "util.py",
        broken: "broken.py",
        greet_use: (5, "greet"),
        greet_def: ("util.py", 11),
        non_ascii_line: 8,
        typed_var: (6, "g"),
        implementation: None,
        query: "Greet",
        bad_code: "\n\ndef bad() -> int:\n    return \"oops\"\n",
        comment: "# moved down",
        new_name: "salute",
        said: expect_test::expect![[r#"
            lsp definition  `greet` at app.py:5
            util.py:11    def greet(name: str) -> str:  (in greet)

            lsp definition  `greet` at app.py:8
            util.py:11    def greet(name: str) -> str:  (in greet)

            lsp references  `greet` at app.py:5 — 4 references in 2 files
            app.py:1      from util import Greeter, greet
            app.py:5      message = greet("world")  (in main)
            app.py:8      s = "🙂漢字" + greet("x")  (in main)
            util.py:11    def greet(name: str) -> str:  (in greet)

            lsp hover  `greet` at app.py:5
            (function) def greet(name: str) -> str

            Return a friendly greeting for name.

            lsp type_definition  `g` at app.py:6
            util.py:1    class Greeter:  (in Greeter)

            lsp symbols  util.py — 5 symbols (2 locals of functions not shown: `detail: true` lists them)
            1: class Greeter
              4: method __init__
              7: method say
              5: variable word
            11: function greet

            lsp symbols  query `Greet` (the workspace's matches)
            util.py:1  class Greeter
            util.py:11  function greet

            lsp diagnostics  broken.py (python + ruff) — 1 error, 0 warnings
            broken.py:2:12 error [reportReturnType] Type "Literal['not a number']" is not assignable to return type "int" (python)

            python at . (basedpyright-langserver --stdio): running, pid PID, ready (utf-16 positions)

            wrote app.py
            lsp: 1 new problem in app.py after this write:
            app.py:13:12 error [reportReturnType] Type "Literal['oops']" is not assignable to return type "int" (python)

            wrote app.py
            lsp: no new errors or warnings in app.py

            wrote app.py
            lsp: no new errors or warnings in app.py

            lsp_rename  `greet` → `salute`: 4 edits in 2 files
            app.py (3 edits)
            util.py (1 edit)

            app.py:1: from util import Greeter, salute
            app.py:5:     message = salute("world")
            app.py:8:     s = "🙂漢字" + salute("x")
            util.py:11: def salute(name: str) -> str:

            lsp definition  `salute` at app.py:5
            util.py:11    def salute(name: str) -> str:  (in salute)"#]],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_language_server() {
    run_scenario(&Scenario {
        fixture: "typescript",
        servers: &["typescript-language-server"],
        app: "src/app.ts",
        util: "src/util.ts",
        broken: "src/broken.ts",
        greet_use: (4, "greet"),
        greet_def: ("src/util.ts", 15),
        non_ascii_line: 7,
        typed_var: (5, "g"),
        implementation: Some(((2, "Speaker"), ("src/util.ts", 7))),
        query: "Greet",
        bad_code: "\nexport function bad(): number {\n  return \"oops\";\n}\n",
        comment: "// moved down",
        new_name: "salute",
        said: expect_test::expect![[r#"
            lsp definition  `greet` at src/app.ts:4
            src/util.ts:15    export function greet(name: string): string {  (in greet)

            lsp definition  `greet` at src/app.ts:7
            src/util.ts:15    export function greet(name: string): string {  (in greet)

            lsp references  `greet` at src/app.ts:4 — 4 references in 2 files
            src/app.ts:1      import { Greeter, greet, Speaker } from "./util";
            src/app.ts:4      const message = greet("world");  (in main)
            src/app.ts:7      const s = "🙂漢字" + greet("x");  (in main)
            src/util.ts:15    export function greet(name: string): string {  (in greet)

            lsp hover  `greet` at src/app.ts:4
            (alias) greet(name: string): string
            import greet
            Return a friendly greeting for name.

            lsp type_definition  `g` at src/app.ts:5
            src/util.ts:2    export interface Speaker {  (in Speaker)

            lsp implementation  `Speaker` at src/util.ts:2
            src/util.ts:7    export class Greeter implements Speaker {  (in Greeter)

            lsp symbols  src/util.ts — 7 symbols
            15: function greet
            7: class Greeter
              8: constructor constructor
              9: method say
              8: property word
            2: interface Speaker
              3: method say

            lsp symbols  query `Greet` (the workspace's matches)
            src/util.ts:7  class Greeter
            src/util.ts:15  function greet

            lsp diagnostics  src/broken.ts (typescript) — 1 error, 0 warnings
            src/broken.ts:2:3 error [2322] Type 'string' is not assignable to type 'number'.

            typescript at . (typescript-language-server --stdio): running, pid PID, ready (utf-16 positions)

            wrote src/app.ts
            lsp: 1 new problem in src/app.ts after this write:
            src/app.ts:12:3 error [2322] Type 'string' is not assignable to type 'number'.

            wrote src/app.ts
            lsp: no new errors or warnings in src/app.ts

            wrote src/app.ts
            lsp: no new errors or warnings in src/app.ts

            lsp_rename  `greet` → `salute`: 4 edits in 2 files
            src/app.ts (3 edits)
            src/util.ts (1 edit)
            not renamed — `greet` in comments and strings: src/util.ts:1

            src/app.ts:1: import { Greeter, salute, Speaker } from "./util";
            src/app.ts:4:   const message = salute("world");
            src/app.ts:7:   const s = "🙂漢字" + salute("x");
            src/util.ts:15: export function salute(name: string): string {

            lsp definition  `salute` at src/app.ts:4
            src/util.ts:15    export function salute(name: string): string {  (in salute)"#]],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_clangd_with_compile_commands() {
    run_scenario(&Scenario {
        fixture: "c",
        servers: &["clangd"],
        app: "main.c",
        util: "util.c",
        broken: "broken.c",
        greet_use: (5, "add"),
        greet_def: ("util.c", 3),
        non_ascii_line: 6,
        typed_var: (4, "c"),
        implementation: None,
        query: "add",
        bad_code: "\nint bad(void) { return undefined_thing; }\n",
        comment: "// moved down",
        new_name: "sum",
        said: expect_test::expect![[r#"
            lsp definition  `add` at main.c:5
            util.c:3    int add(int a, int b) { return a + b; }  (in add)

            lsp definition  `add` at main.c:6
            util.c:3    int add(int a, int b) { return a + b; }  (in add)

            lsp references  `add` at main.c:5 — 4 references in 3 files
            main.c:5    c.n = add(1, 2);  (in main)
            main.c:6    const char *s = "🙂漢字"; int t = add(c.n, 3);  (in main)
            util.c:3    int add(int a, int b) { return a + b; }  (in add)
            util.h:8    int add(int a, int b);  (in add)

            lsp hover  `add` at main.c:5
            function add

            → int
            Parameters:
            - int a
            - int b
            Add two numbers.

            int add(int a, int b)

            lsp type_definition  `c` at main.c:4
            util.h:4    struct counter {  (in counter)

            lsp symbols  util.c — 1 symbol
            3: function add

            lsp symbols  query `add` (the workspace's matches)
            util.c:3  function add

            lsp diagnostics  broken.c (c) — 1 error, 0 warnings
            broken.c:2:10 error [undeclared_var_use] Use of undeclared identifier 'missing_name'

            c at . (clangd): running, pid PID, ready (utf-8 positions)

            wrote main.c
            lsp: 1 new problem in main.c after this write:
            main.c:10:24 error [undeclared_var_use] Use of undeclared identifier 'undefined_thing'

            wrote main.c
            lsp: no new errors or warnings in main.c

            wrote main.c
            lsp: no new errors or warnings in main.c

            lsp_rename  `add` → `sum`: 4 edits in 3 files
            main.c (2 edits)
            util.c (1 edit)
            util.h (1 edit)

            main.c:5:   c.n = sum(1, 2);
            main.c:6:   const char *s = "🙂漢字"; int t = sum(c.n, 3);
            util.c:3: int sum(int a, int b) { return a + b; }

            lsp definition  `sum` at main.c:5
            util.c:3    int sum(int a, int b) { return a + b; }  (in sum)"#]],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_analyzer() {
    // cargo check on save (flycheck) would add its own copies of the errors
    // seconds later; the scenario checks rust-analyzer's own diagnostics.
    let config: tool_lsp::CatalogConfig = serde_json::from_value(json!({
        "servers": [{
            "id": "rust", "extensions": {"rs": "rust"}, "commands": [["rust-analyzer"]],
            "root_markers": ["Cargo.toml"], "root_rule": "cargo_workspace",
            "checker": {"commands": [["cargo", "check", "--message-format=json"]], "format": "cargo_json"},
            "initialization_options": {"checkOnSave": false, "cachePriming": {"enable": false}},
            "settings": {"rust-analyzer": {"checkOnSave": false}},
            "reports_progress": true
        }]
    }))
    .unwrap();
    run_scenario_with(
        &Scenario {
            fixture: "rust",
            servers: &["rust-analyzer"],
            app: "src/main.rs",
            util: "src/util.rs",
            broken: "src/broken.rs",
            greet_use: (7, "greet"),
            greet_def: ("src/util.rs", 18),
            non_ascii_line: 10,
            typed_var: (8, "g"),
            implementation: Some(((2, "Speaker"), ("src/util.rs", 11))),
            query: "Greet",
            bad_code: "\n#[allow(dead_code)]\nfn bad() -> i32 {\n    \"oops\"\n}\n",
            comment: "// moved down",
            new_name: "salute",
            said: expect_test::expect![[r#"
            lsp definition  `greet` at src/main.rs:7
            src/util.rs:18    pub fn greet(name: &str) -> String {  (in greet)

            lsp definition  `greet` at src/main.rs:10
            src/util.rs:18    pub fn greet(name: &str) -> String {  (in greet)

            lsp references  `greet` at src/main.rs:7 — 4 references in 2 files
            src/main.rs:4     use util::{greet, Greeter, Speaker};
            src/main.rs:7     let message = greet("world");  (in main)
            src/main.rs:10    let s = "🙂漢字".to_string() + &greet("x");  (in main)
            src/util.rs:18    pub fn greet(name: &str) -> String {  (in greet)

            lsp hover  `greet` at src/main.rs:7
            greeter::util

            pub fn greet(name: &str) -> String

            Return a friendly greeting for name.

            lsp type_definition  `g` at src/main.rs:8
            src/util.rs:7    pub struct Greeter {  (in Greeter)

            lsp implementation  `Speaker` at src/util.rs:2
            src/util.rs:11    impl Speaker for Greeter {  (in impl Speaker for Greeter)

            lsp symbols  src/util.rs — 7 symbols
            2: interface Speaker
              3: method say
            7: struct Greeter
              8: field word
            11: object impl Speaker for Greeter
              12: method say
            18: function greet

            lsp symbols  query `Greet` (the workspace's matches)
            src/util.rs:7  struct Greeter

            lsp diagnostics  src/broken.rs (rust) — 1 error, 0 warnings
            src/broken.rs:2:5 error [E0308] expected i32, found &'static str

            rust at . (rust-analyzer): running, pid PID, ready (utf-8 positions)

            wrote src/main.rs
            lsp: 1 new problem in src/main.rs after this write:
            src/main.rs:16:5 error [E0308] expected i32, found &'static str

            wrote src/main.rs
            lsp: no new errors or warnings in src/main.rs

            wrote src/main.rs
            lsp: no new errors or warnings in src/main.rs

            lsp_rename  `greet` → `salute`: 4 edits in 2 files
            src/main.rs (3 edits)
            src/util.rs (1 edit)
            not renamed — `greet` in comments and strings: src/util.rs:1

            src/main.rs:4: use util::{salute, Greeter, Speaker};
            src/main.rs:7:     let message = salute("world");
            src/main.rs:10:     let s = "🙂漢字".to_string() + &salute("x");
            src/util.rs:18: pub fn salute(name: &str) -> String {

            lsp definition  `salute` at src/main.rs:7
            src/util.rs:18    pub fn salute(name: &str) -> String {  (in salute)"#]],
        },
        tool_lsp::LspBinding::new(config),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_gopls() {
    run_scenario(&Scenario {
        fixture: "go",
        servers: &["gopls"],
        app: "main.go",
        util: "util.go",
        broken: "broken.go",
        greet_use: (6, "Greet"),
        greet_def: ("util.go", 19),
        non_ascii_line: 9,
        typed_var: (7, "g"),
        implementation: Some(((4, "Speaker"), ("util.go", 9))),
        query: "Greet",
        bad_code: "\nfunc bad() int {\n\treturn \"oops\"\n}\n",
        comment: "// moved down",
        new_name: "Salute",
        said: expect_test::expect![[r#"
            lsp definition  `Greet` at main.go:6
            util.go:19    func Greet(name string) string {  (in Greet)

            lsp definition  `Greet` at main.go:9
            util.go:19    func Greet(name string) string {  (in Greet)

            lsp references  `Greet` at main.go:6 — 3 references in 2 files
            main.go:6     message := Greet("world")  (in main)
            main.go:9     s := "🙂漢字" + Greet("x")  (in main)
            util.go:19    func Greet(name string) string {  (in Greet)

            lsp hover  `Greet` at main.go:6
            func Greet(name string) string
            Greet returns a friendly greeting for name.

            lsp type_definition  `g` at main.go:7
            util.go:4    type Speaker interface {  (in Speaker)

            lsp implementation  `Speaker` at util.go:4
            util.go:9    type Greeter struct {  (in Greeter)

            lsp symbols  util.go — 6 symbols
            4: interface Speaker
              5: method Say
            9: struct Greeter
              10: field Word
            14: method (Greeter).Say
            19: function Greet

            lsp symbols  query `Greet` (the workspace's matches)
            broken.go:3  function example.com/greeter.count
            main.go:5  function example.com/greeter.main
            util.go:4  interface example.com/greeter.Speaker
            util.go:5  method example.com/greeter.Speaker.Say
            util.go:9  struct Greeter
            util.go:10  field Greeter.Word
            util.go:14  method Greeter.Say
            util.go:19  function Greet

            lsp diagnostics  broken.go (go) — 1 error, 0 warnings
            broken.go:4:9 error [IncompatibleAssign] cannot use "not a number" (untyped string constant) as int value in return statement

            go at . (gopls): running, pid PID, ready (utf-16 positions)

            wrote main.go
            lsp: 1 new problem in main.go after this write:
            main.go:14:9 error [IncompatibleAssign] cannot use "oops" (untyped string constant) as int value in return statement

            wrote main.go
            lsp: no new errors or warnings in main.go

            wrote main.go
            lsp: no new errors or warnings in main.go

            lsp_rename  `Greet` → `Salute`: 4 edits in 2 files
            main.go (2 edits)
            util.go (2 edits)

            main.go:6: 	message := Salute("world")
            main.go:9: 	s := "🙂漢字" + Salute("x")
            util.go:18: // Salute returns a friendly greeting for name.
            util.go:19: func Salute(name string) string {

            lsp definition  `Salute` at main.go:6
            util.go:19    func Salute(name string) string {  (in Salute)"#]],
    })
    .await;
}
