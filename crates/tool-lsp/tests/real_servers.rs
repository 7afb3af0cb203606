//! The `lsp` tool, `lsp_rename` and diagnostics on write against the real
//! servers `cargo xtask fixtures` installs, one small fixture project each.
//! Each scenario starts its server once and asks it everything.

mod common;

use common::{masked, run_scenario, run_scenario_with, scenario_answers, Run, Scenario};
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

const APP: &str = "src/main/java/m/App.java";
const GREETER: &str = "src/main/java/m/util/Greeter.java";
const SPEAKER: &str = "src/main/java/m/util/Speaker.java";
const LOUD: &str = "src/main/java/m/shout/Loud.java";
const TEST: &str = "src/test/java/m/util/GreeterTest.java";

/// Java: jdtls on a Maven project of three packages and a test folder
/// (`tests/fixtures/lsp/java`), one server for the scenario and then the
/// ops it leaves out: implementation of an interface method, supertypes and
/// subtypes, incoming and outgoing calls, code actions, formatting on write,
/// a signature change's fallout in the files of other packages. The
/// scenario's rename reaches every package and the test folder; Maven then
/// builds the renamed project offline (`test-compile`, with the deliberately
/// broken file left out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_jdtls() {
    if test_support::fixtures::require(&["jdtls"]).is_none() {
        return;
    }
    let config: tool_lsp::CatalogConfig =
        serde_json::from_value(json!({"format_on_write": {"java": true}})).unwrap();
    let run = Run::with_binding(common::project("java"), tool_lsp::LspBinding::new(config));
    let scenario = Scenario {
        fixture: "java",
        servers: &["jdtls"],
        app: APP,
        util: GREETER,
        broken: "src/main/java/m/Broken.java",
        greet_use: (9, "greet"),
        greet_def: (GREETER, 18),
        non_ascii_line: 12,
        typed_var: (10, "g"),
        implementation: Some(((4, "Speaker"), (GREETER, 4))),
        query: "Greet",
        bad_code: "\nclass Bad {\n    int bad() {\n        return \"oops\";\n    }\n}\n",
        comment: "// moved down",
        new_name: "salute",
        said: expect_test::expect![[r#"
            lsp definition  `greet` at src/main/java/m/App.java:9
            src/main/java/m/util/Greeter.java:18    public static String greet(String name) {  (in Greeter/greet(String))

            lsp definition  `greet` at src/main/java/m/App.java:12
            src/main/java/m/util/Greeter.java:18    public static String greet(String name) {  (in Greeter/greet(String))

            lsp references  `greet` at src/main/java/m/App.java:9 — 6 references in 4 files
            src/main/java/m/App.java:9                 String message = Greeter.greet("world");  (in App/main(String[]))
            src/main/java/m/App.java:12                String s = "🙂漢字" + Greeter.greet("x");  (in App/main(String[]))
            src/main/java/m/shout/Loud.java:12         return Greeter.greet(name).toUpperCase();  (in Loud/shout(String))
            src/main/java/m/util/Greeter.java:18       public static String greet(String name) {  (in Greeter/greet(String))
            src/test/java/m/util/GreeterTest.java:6    if (!Greeter.greet("x").equals("hello x")) {  (in GreeterTest/main(String[]))
            src/test/java/m/util/GreeterTest.java:7    throw new AssertionError(Greeter.greet("x"));  (in GreeterTest/main(String[]))

            lsp hover  `greet` at src/main/java/m/App.java:9
            String m.util.Greeter.greet(String name)

            Returns a friendly greeting for `name`.

            * **Parameters:**
              * **name**

            Source: *[m](file://ROOT/src/main/java/m/util/Greeter.java#18)*

            lsp type_definition  `g` at src/main/java/m/App.java:10
            src/main/java/m/util/Speaker.java:4    public interface Speaker {  (in Speaker)

            lsp implementation  `Speaker` at src/main/java/m/util/Greeter.java:4
            src/main/java/m/util/Greeter.java:4    public final class Greeter implements Speaker {  (in Greeter)

            lsp symbols  src/main/java/m/util/Greeter.java — 6 symbols
            1: package m.util
            4: class Greeter
              5: field word
              8: constructor Greeter(String)
              13: method say()
              18: method greet(String)

            lsp symbols  query `Greet` (the workspace's matches)
            src/main/java/m/util/Greeter.java:4  class Greeter
            src/test/java/m/util/GreeterTest.java:4  class GreeterTest

            lsp diagnostics  src/main/java/m/Broken.java (java) — 1 error, 0 warnings
            src/main/java/m/Broken.java:6:16 error [16777235] Type mismatch: cannot convert from String to int

            java at . (jdtls -data {own_dir}): running, pid PID, ready (utf-16 positions)

            wrote src/main/java/m/App.java
            lsp: format on write: src/main/java/m/App.java unchanged (java)
            lsp: 1 new problem in src/main/java/m/App.java after this write:
            src/main/java/m/App.java:19:16 error [16777235] Type mismatch: cannot convert from String to int

            wrote src/main/java/m/App.java
            lsp: format on write: src/main/java/m/App.java unchanged (java)
            lsp: no new errors or warnings in src/main/java/m/App.java

            wrote src/main/java/m/App.java
            lsp: format on write: src/main/java/m/App.java unchanged (java)
            lsp: no new errors or warnings in src/main/java/m/App.java

            lsp_rename  `greet` → `salute`: 4 edits in 4 files
            src/main/java/m/App.java (1 edit)
            src/main/java/m/shout/Loud.java (1 edit)
            src/main/java/m/util/Greeter.java (1 edit)
            src/test/java/m/util/GreeterTest.java (1 edit)

            src/main/java/m/App.java:9:         String message = Greeter.salute("world");
            src/main/java/m/App.java:12:         String s = "🙂漢字" + Greeter.salute("x");
            src/main/java/m/util/Greeter.java:18:     public static String salute(String name) {

            lsp definition  `salute` at src/main/java/m/App.java:9
            src/main/java/m/util/Greeter.java:18    public static String salute(String name) {  (in Greeter/salute(String))

            src/main/java/m/shout/Loud.java:12:         return Greeter.salute(name).toUpperCase();
            src/test/java/m/util/GreeterTest.java:6:         if (!Greeter.salute("x").equals("hello x")) {
            src/test/java/m/util/GreeterTest.java:7:             throw new AssertionError(Greeter.salute("x"));

            lsp implementation  `say` at src/main/java/m/util/Speaker.java:6
            src/main/java/m/util/Greeter.java:13    public String say() {  (in Greeter/say())

            lsp supertypes  `Greeter` at src/main/java/m/util/Greeter.java:4 — 1 type
            src/main/java/m/util/Speaker.java:4    public interface Speaker {  (interface Speaker)

            lsp subtypes  `Speaker` at src/main/java/m/util/Speaker.java:4 — 1 type
            src/main/java/m/util/Greeter.java:4    public final class Greeter implements Speaker {  (class Greeter)

            lsp incoming_calls  `salute` at src/main/java/m/util/Greeter.java:18 — 5 calls from 3 callers
            src/main/java/m/App.java:9                 String message = Greeter.salute("world");  (in App/main(String[]))
            src/main/java/m/App.java:12                String s = "🙂漢字" + Greeter.salute("x");  (in App/main(String[]))
            src/main/java/m/shout/Loud.java:12         return Greeter.salute(name).toUpperCase();  (in Loud/shout(String))
            src/test/java/m/util/GreeterTest.java:6    if (!Greeter.salute("x").equals("hello x")) {  (in GreeterTest/main(String[]))
            src/test/java/m/util/GreeterTest.java:7    throw new AssertionError(Greeter.salute("x"));  (in GreeterTest/main(String[]))

            lsp outgoing_calls  `main` at src/main/java/m/App.java:8 — 4 callees
            src/main/java/m/shout/Loud.java:11      public static String shout(String name) {  (shout(String) : String, called at src/main/java/m/App.java:11)
            src/main/java/m/util/Greeter.java:8     public Greeter(String word) {  (Greeter(String), called at src/main/java/m/App.java:10)
            src/main/java/m/util/Greeter.java:18    public static String salute(String name) {  (salute(String) : String, called at src/main/java/m/App.java:9, src/main/java/m/App.java:12)
            src/main/java/m/util/Speaker.java:6     String say();  (say() : String, called at src/main/java/m/App.java:11)

            lsp code_actions  `return` at src/main/java/m/Broken.java:6
            1. Change method return type to 'String' [quickfix] — edits src/main/java/m/Broken.java (1 edit)
            2. Add Javadoc comment [quickassist] — edits src/main/java/m/Broken.java (1 edit)
            3. Generate toString() [source.generate.toString] — edits src/main/java/m/Broken.java (1 edit)
            (listed only: nothing was applied; apply one with lsp_code_action and its number)

            wrote src/main/java/m/util/Speaker.java
            lsp: format on write: src/main/java/m/util/Speaker.java formatted by java (lines 4-6 differ from what you wrote; read it before editing it again)
            lsp: no new errors or warnings in src/main/java/m/util/Speaker.java

            package m.util;

            /** Something that says a word. */
            public interface Speaker {
                /** The word it says. */
                String say();
            }


            wrote src/main/java/m/util/Greeter.java
            lsp: format on write: src/main/java/m/util/Greeter.java unchanged (java)
            lsp: no new errors or warnings in src/main/java/m/util/Greeter.java
            lsp: 5 new problems in 3 other files after this write:
            src/main/java/m/App.java:9:34 error [67108979] The method salute(String, int) in the type Greeter is not applicable for the arguments (String)
            src/main/java/m/App.java:12:36 error [67108979] The method salute(String, int) in the type Greeter is not applicable for the arguments (String)
            src/main/java/m/shout/Loud.java:12:24 error [67108979] The method salute(String, int) in the type Greeter is not applicable for the arguments (String)
            src/test/java/m/util/GreeterTest.java:6:22 error [67108979] The method salute(String, int) in the type Greeter is not applicable for the arguments (String)
            src/test/java/m/util/GreeterTest.java:7:46 error [67108979] The method salute(String, int) in the type Greeter is not applicable for the arguments (String)

            wrote src/main/java/m/util/Greeter.java
            lsp: format on write: src/main/java/m/util/Greeter.java unchanged (java)
            lsp: no new errors or warnings in src/main/java/m/util/Greeter.java"#]],
    };
    let before = (run.read(LOUD), run.read(TEST));
    let mut said = scenario_answers(&scenario, &run).await;
    said.extend(java_beyond_the_scenario(&run, before).await);
    let said = masked(&said.join("\n\n"), &run.root);
    scenario.said.assert_eq(&said);
    maven_builds(&run.root);
    run.finish().await;
}

/// The Java test's calls after the scenario, on its server (`greet` is
/// `salute` by then): the lines the rename changed in the other packages,
/// the ops the scenario leaves out, formatting on write, and a signature
/// change's fallout.
async fn java_beyond_the_scenario(run: &Run, before: (String, String)) -> Vec<String> {
    let mut said = Vec::new();
    // The rename's other packages: the lines it changed there.
    let mut changed = Vec::new();
    for (file, before) in [(LOUD, &before.0), (TEST, &before.1)] {
        let after = run.read(file);
        for (n, (old, new)) in before.lines().zip(after.lines()).enumerate() {
            if old != new {
                changed.push(format!("{file}:{}: {}", n + 1, new.trim_end()));
            }
        }
    }
    said.push(changed.join("\n"));
    for args in [
        json!({"op": "implementation", "file": SPEAKER, "line": 6, "symbol": "say"}),
        json!({"op": "supertypes", "file": GREETER, "line": 4, "symbol": "Greeter"}),
        json!({"op": "subtypes", "file": SPEAKER, "line": 4, "symbol": "Speaker"}),
        json!({"op": "incoming_calls", "file": GREETER, "line": 18, "symbol": "salute"}),
        json!({"op": "outgoing_calls", "file": APP, "line": 8, "symbol": "main"}),
        json!({"op": "code_actions", "file": "src/main/java/m/Broken.java", "line": 6, "symbol": "return"}),
    ] {
        said.push(run.lsp(args).await);
    }
    // Formatting on write: a file written badly indented comes back formatted.
    let badly = "package m.util;\n\n/** Something that says a word. */\npublic interface Speaker{\n    /** The word it says. */\n    String say( );\n}\n";
    said.push(
        run.call("write", json!({"path": SPEAKER, "content": badly}))
            .await
            .unwrap(),
    );
    said.push(run.read(SPEAKER));
    // A signature change's fallout: the callers in two other packages (and
    // the test folder) no longer compile; restoring it clears them.
    let renamed = run.read(GREETER);
    let changed = renamed.replace("salute(String name)", "salute(String name, int times)");
    for content in [&changed, &renamed] {
        said.push(
            run.call("write", json!({"path": GREETER, "content": content}))
                .await
                .unwrap(),
        );
    }
    said
}

/// `mvn -q -o test-compile` passes in `root` (from the fixtures' Maven
/// repository), its deliberately broken file removed first. Said and
/// skipped where Maven is not installed.
fn maven_builds(root: &std::path::Path) {
    let Some(mvn) = which_mvn() else {
        eprintln!("java_jdtls: mvn not found on PATH: the renamed project's build is not checked");
        return;
    };
    std::fs::remove_file(root.join("src/main/java/m/Broken.java")).unwrap();
    let repo = test_support::fixtures::dir().join("m2");
    let out = std::process::Command::new(mvn)
        .args(["-q", "-o", "-B", "-Dstyle.color=never"])
        .arg(format!("-Dmaven.repo.local={}", repo.display()))
        .arg("test-compile")
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mvn test-compile after the rename:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn which_mvn() -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("mvn"))
        .find(|p| p.is_file())
}
