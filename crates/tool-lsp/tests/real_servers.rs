//! The `lsp` tool, `lsp_rename` and diagnostics on write against the real
//! servers `cargo xtask fixtures` installs, one small fixture project each.

mod common;

use common::{run_scenario, Scenario};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_basedpyright() {
    run_scenario(&Scenario {
        fixture: "python",
        servers: &["basedpyright-langserver", "pyright-langserver"],
        app: "app.py",
        util: "util.py",
        broken: "broken.py",
        greet_use: (5, "greet"),
        greet_decl_line: 11,
        non_ascii_line: 8,
        typed_var: (6, "g"),
        type_decl_line: 1,
        interface: None,
        hover_says: &[
            "def greet(name: str) -> str",
            "Return a friendly greeting for name.",
        ],
        doc_symbols: &["1: class Greeter", "method say", "11: function greet"],
        query: "Greet",
        broken_says: "broken.py:2:12 error",
        bad_code: "\n\ndef bad() -> int:\n    return \"oops\"\n",
        bad_says: "is not assignable to return type",
        comment: "# moved down",
        new_name: "salute",
    })
    .await;
}
