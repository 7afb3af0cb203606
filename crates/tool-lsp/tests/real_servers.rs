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
        ref_files: 2,
        non_ascii_line: 8,
        typed_var: (6, "g"),
        type_decl: ("util.py", 1),
        implementation: None,
        hover_says: &[
            "def greet(name: str) -> str",
            "Return a friendly greeting for name.",
        ],
        doc_symbols: &["1: class Greeter", "method say", "11: function greet"],
        query: "Greet",
        query_finds: "util.py",
        broken_says: "broken.py:2:12 error",
        bad_code: "\n\ndef bad() -> int:\n    return \"oops\"\n",
        bad_says: "is not assignable to return type",
        comment: "# moved down",
        new_name: "salute",
        encoding: "utf-16",
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
        ref_files: 2,
        non_ascii_line: 7,
        typed_var: (5, "g"),
        type_decl: ("src/util.ts", 2),
        implementation: Some(((2, "Speaker"), ("src/util.ts", 7))),
        hover_says: &[
            "greet(name: string): string",
            "Return a friendly greeting for name.",
        ],
        doc_symbols: &["interface Speaker", "class Greeter", "function greet"],
        query: "Greet",
        query_finds: "src/util.ts",
        broken_says: "src/broken.ts:2:3 error",
        bad_code: "\nexport function bad(): number {\n  return \"oops\";\n}\n",
        bad_says: "is not assignable to type 'number'",
        comment: "// moved down",
        new_name: "salute",
        encoding: "utf-16",
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
        ref_files: 3,
        non_ascii_line: 6,
        typed_var: (4, "c"),
        type_decl: ("util.h", 4),
        implementation: None,
        hover_says: &["int add(int a, int b)", "Add two numbers."],
        doc_symbols: &["3: function add"],
        query: "add",
        query_finds: "util.c",
        broken_says: "broken.c:2:10 error",
        bad_code: "\nint bad(void) { return undefined_thing; }\n",
        bad_says: "undeclared identifier 'undefined_thing'",
        comment: "// moved down",
        new_name: "sum",
        encoding: "utf-8",
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
            ref_files: 2,
            non_ascii_line: 10,
            typed_var: (8, "g"),
            type_decl: ("src/util.rs", 7),
            implementation: Some(((2, "Speaker"), ("src/util.rs", 11))),
            hover_says: &[
                "pub fn greet(name: &str) -> String",
                "Return a friendly greeting for name.",
            ],
            doc_symbols: &["struct Greeter", "function greet"],
            query: "Greet",
            query_finds: "src/util.rs",
            broken_says: "src/broken.rs:2:5 error",
            bad_code: "\n#[allow(dead_code)]\nfn bad() -> i32 {\n    \"oops\"\n}\n",
            bad_says: "expected i32, found &",
            comment: "// moved down",
            new_name: "salute",
            encoding: "utf-8",
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
        ref_files: 2,
        non_ascii_line: 9,
        typed_var: (7, "g"),
        type_decl: ("util.go", 4),
        implementation: Some(((4, "Speaker"), ("util.go", 9))),
        hover_says: &[
            "func Greet(name string) string",
            "Greet returns a friendly greeting for name.",
        ],
        doc_symbols: &["interface Speaker", "struct Greeter", "function Greet"],
        query: "Greet",
        query_finds: "util.go",
        broken_says: "broken.go:4:9 error",
        bad_code: "\nfunc bad() int {\n\treturn \"oops\"\n}\n",
        bad_says: "cannot use \"oops\"",
        comment: "// moved down",
        new_name: "Salute",
        encoding: "utf-16",
    })
    .await;
}
