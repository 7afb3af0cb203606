//! Every catalog entry marked `tested = true` that the older scenario tests
//! (real_servers.rs) do not drive, against the real server `cargo xtask
//! fixtures` installs: one table, a row per server, one test body. Each row
//! writes its fixture files into a fresh workspace and runs with a catalog
//! of that entry alone, then asks: `status` says it is running, the
//! document symbols of the file, the diagnostic of a known error, and hover
//! where the server has it.

mod common;

use common::{masked, Run};
use serde_json::json;
use tool_lsp::{CatalogConfig, LspBinding};

/// One tested server.
struct Row {
    /// The catalog entry.
    id: &'static str,
    /// The binary (its fixture must be installed).
    binary: &'static str,
    /// Files written into the workspace: (relative path, content).
    files: &'static [(&'static str, &'static str)],
    /// The file asked about.
    file: &'static str,
    /// The entry's line of `status` after its first answer (masked; "…"
    /// at the end where the rest depends on timing).
    status: &'static str,
    /// The `symbols` answer for `file` (empty: not asked, the server has no
    /// document symbols, or none for this file).
    symbols: &'static str,
    /// A file with a known error, and the `diagnostics` answer for it.
    broken: (&'static str, &'static str),
    /// `hover` at (line, symbol), where the server hovers: the answer, or
    /// its first lines and "…" where the rest is long (an icon's data, a
    /// reference link).
    hover: Option<(u32, &'static str, &'static str)>,
}

/// A two-package Maven project without dependencies (jdtls imports it
/// offline): App calls Greeter across packages.
const JAVA_POM: (&str, &str) = ("pom.xml", "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n  <modelVersion>4.0.0</modelVersion>\n  <groupId>m</groupId>\n  <artifactId>m</artifactId>\n  <version>0</version>\n  <properties><maven.compiler.release>17</maven.compiler.release></properties>\n</project>\n");
const JAVA_APP: (&str, &str) = ("src/main/java/m/App.java", "package m;\n\nimport m.util.Greeter;\n\npublic class App {\n    public static void main(String[] args) {\n        System.out.println(Greeter.greet(\"world\"));\n    }\n}\n");
const JAVA_GREETER: (&str, &str) = ("src/main/java/m/util/Greeter.java", "package m.util;\n\n/** Says hello. */\npublic final class Greeter {\n    /** The greeting for {@code name}. */\n    public static String greet(String name) {\n        return \"hello \" + name;\n    }\n}\n");

const ROWS: &[Row] = &[
    Row {
        id: "bash",
        binary: "bash-language-server",
        files: &[
            ("run.sh", "#!/bin/bash\ngreet() {\n  echo \"hello $1\"\n}\ngreet world\n"),
            ("broken.sh", "#!/bin/bash\nif [ 1 = 1 ]; then\n  echo x\n"),
        ],
        file: "run.sh",
        status: "bash at . (bash-language-server start): running, pid PID, ready (utf-16 positions)",
        symbols: "",
        broken: ("broken.sh", "lsp diagnostics  broken.sh (bash) — 4 errors, 0 warnings\nbroken.sh:2:1 error [SC1046] Couldn't find 'fi' for this 'if'.\nbroken.sh:2:1 error [SC1073] Couldn't parse this if expression. Fix to allow more checks.\nbroken.sh:4:1 error [SC1047] Expected 'fi' matching previously mentioned 'if'.\nbroken.sh:4:1 error [SC1072] Expected 'fi'. Fix any mentioned problems and try again."),
        hover: Some((5, "greet", "lsp hover  `greet` at run.sh:5\nFunction: **greet** - *defined on line 2*\n\n!/bin/bash")),
    },
    Row {
        id: "yaml",
        binary: "yaml-language-server",
        files: &[
            ("config.yaml", "server:\n  port: 8080\n  name: demo\nitems:\n  - one\n"),
            ("broken.yaml", "a: [1, 2\nb: c\n"),
        ],
        file: "config.yaml",
        status: "yaml at . (yaml-language-server --stdio): running, pid PID, ready (utf-16 positions)",
        symbols: "lsp symbols  config.yaml — 5 symbols\n1: module server\n  2: number port\n  3: string name\n4: array items\n  5: string 0",
        broken: ("broken.yaml", "lsp diagnostics  broken.yaml (yaml) — 1 error, 0 warnings\nbroken.yaml:2:1 error [0] Flow sequence in block collection must be sufficiently indented and end with a ]"),
        hover: None,
    },
    Row {
        id: "html",
        binary: "vscode-html-language-server",
        files: &[
            ("index.html", "<!DOCTYPE html>\n<html>\n<head><title>Demo</title></head>\n<body>\n<div id=\"main\"><p>hi</p></div>\n</body>\n</html>\n"),
            ("broken.html", "<html>\n<body>\n<script>\nlet x = ;\n</script>\n</body>\n</html>\n"),
        ],
        file: "index.html",
        status: "html at . (vscode-html-language-server --stdio): running, pid PID, ready (utf-16 positions)",
        symbols: "lsp symbols  index.html — 6 symbols\n2: field html\n3: field head\n3: field title\n4: field body\n5: field div#main\n5: field p",
        broken: ("broken.html", "lsp diagnostics  broken.html (html) — 1 error, 0 warnings\nbroken.html:4:9 error Expression expected."),
        hover: Some((2, "html", "lsp hover  `html` at index.html:2\nThe html element represents the root of an HTML document.\n…")),
    },
    Row {
        id: "css",
        binary: "vscode-css-language-server",
        files: &[
            ("style.css", ".card {\n  color: red;\n}\n#main {\n  margin: 0;\n}\n"),
            ("broken.css", ".card {\n  color: red;\n  colr: blue;\n}\n"),
        ],
        file: "style.css",
        status: "css at . (vscode-css-language-server --stdio): running, pid PID, ready (utf-16 positions)",
        symbols: "lsp symbols  style.css — 2 symbols\n1: class .card\n4: class #main",
        broken: ("broken.css", "lsp diagnostics  broken.css (css) — 0 errors, 1 warning\nbroken.css:3:3 warning [unknownProperties] Unknown property: 'colr'"),
        hover: Some((2, "color", "lsp hover  `color` at style.css:2\nSets the color of an element's text\n…")),
    },
    Row {
        id: "json",
        binary: "vscode-json-language-server",
        files: &[
            ("data.json", "{\n  \"name\": \"demo\",\n  \"items\": [1, 2]\n}\n"),
            ("broken.json", "{\n  \"name\": \"demo\"\n  \"x\": 1\n}\n"),
        ],
        file: "data.json",
        status: "json at . (vscode-json-language-server --stdio): running, pid PID, ready (utf-16 positions)",
        symbols: "lsp symbols  data.json — 4 symbols\n2: string name\n3: array items\n  3: number 0\n  3: number 1",
        broken: ("broken.json", "lsp diagnostics  broken.json (json) — 1 error, 0 warnings\nbroken.json:3:3 error [514] Expected comma"),
        hover: None,
    },
    Row {
        id: "dockerfile",
        binary: "docker-langserver",
        files: &[
            ("Dockerfile", "FROM debian:12 AS base\nRUN echo hi\nWORKDIR /app\n"),
            ("broken.dockerfile", "FROM debian:12\nEXPOSE notaport\nWORKDIR\n"),
        ],
        file: "Dockerfile",
        status: "dockerfile at . (docker-langserver --stdio): running, pid PID, ready (utf-16 positions)",
        symbols: "lsp symbols  Dockerfile — 3 symbols\n1: function FROM\n2: function RUN\n3: function WORKDIR",
        broken: ("broken.dockerfile", "lsp diagnostics  broken.dockerfile (dockerfile) — 2 errors, 0 warnings\nbroken.dockerfile:2:8 error [24] Invalid containerPort: notaport\nbroken.dockerfile:3:1 error [2] Instruction has no arguments"),
        hover: Some((3, "WORKDIR", "lsp hover  `WORKDIR` at Dockerfile:3\nSet the working directory for any subsequent ADD, COPY, CMD, ENTRYPOINT, or RUN` instructions that follow it in the `Dockerfile`.\n\nWORKDIR /path/to/workdir\nWORKDIR relative/path")),
    },
    Row {
        id: "php",
        binary: "intelephense",
        files: &[
            ("composer.json", "{}\n"),
            ("app.php", "<?php\nclass Greeter {\n    public function say(string $name): string {\n        return \"hi \" . $name;\n    }\n}\nfunction greet(string $n): string { return $n; }\necho greet(\"x\");\n"),
            ("broken.php", "<?php\nfunction f() {\n    return 1\n}\n"),
        ],
        file: "app.php",
        status: "php at . (intelephense --stdio): running, pid PID, …",
        symbols: "lsp symbols  app.php — 3 symbols (2 locals of functions not shown: `detail: true` lists them)\n2: class Greeter\n  3: method say\n7: function greet",
        broken: ("broken.php", "lsp diagnostics  broken.php (php) — 1 error, 0 warnings\nbroken.php:4:1 error [P1001] Unexpected '}'. Expected ';'."),
        hover: Some((8, "greet", "lsp hover  `greet` at app.php:8\ngreet\n\nfunction greet(string $n): string { }\n\n@param string $n\n\n@return string")),
    },
    Row {
        id: "svelte",
        binary: "svelteserver",
        files: &[
            ("package.json", "{\"name\": \"demo\"}\n"),
            ("App.svelte", "<script>\n  let count = 0;\n  function inc() { count += 1; }\n</script>\n<button on:click={inc}>{count}</button>\n"),
            ("Broken.svelte", "<script>\n  let count = 0;\n</script>\n<button on:click={inc}>{count}</button>\n{#if count}\n"),
        ],
        file: "App.svelte",
        status: "svelte at . (svelteserver --stdio): running, pid PID, ready (utf-16 positions)",
        symbols: "lsp symbols  App.svelte — 4 symbols\n1: field script\n  2: variable count\n  3: function inc\n5: field button",
        broken: ("Broken.svelte", "lsp diagnostics  Broken.svelte (svelte) — 1 error, 0 warnings\nBroken.svelte:5:1 error [-1] Block was left open"),
        hover: Some((5, "count", "lsp hover  `count` at App.svelte:5\nlet count: number")),
    },
    Row {
        id: "graphql",
        binary: "graphql-lsp",
        files: &[
            (".graphqlrc.yml", "schema: schema.graphql\ndocuments: '*.graphql'\n"),
            ("schema.graphql", "type Query {\n  user(id: ID!): User\n}\ntype User {\n  id: ID!\n  name: String\n}\n"),
            ("broken.graphql", "query Q {\n  user(id: 1) {\n    nope\n  }\n}\n"),
        ],
        file: "schema.graphql",
        status: "graphql at . (graphql-lsp server -m stream): running, pid PID, ready (utf-16 positions)",
        symbols: "",
        broken: ("broken.graphql", "lsp diagnostics  broken.graphql (graphql) — 1 error, 0 warnings\nbroken.graphql:3:5 error Cannot query field \"nope\" on type \"User\". Did you mean \"name\"?"),
        hover: None,
    },
    Row {
        id: "sql",
        binary: "sql-language-server",
        files: &[
            ("q.sql", "SELECT id, name FROM users WHERE id = 1;\n"),
            ("broken.sql", "SELEC id FROM users;\n"),
        ],
        file: "q.sql",
        status: "sql at . (sql-language-server up --method stdio): running, pid PID, ready (utf-16 positions)",
        symbols: "",
        broken: ("broken.sql", "lsp diagnostics  broken.sql (sql) — 1 error, 0 warnings\nbroken.sql:1:2 error Expected \"$\", \"(\", \"--\", \"/*\", \"ALTER\", \"CREATE TABLE\", \"CREATE\", \"DELETE\", \"DROP TABLE\", \"DROP VIEW\", \"DROP\", \"INSERT\", \"REPLACE\", \"SELECT\", \"UPDATE\", \"WITH\", \"return\", [ \\t\\n\\r], or end of input but \"S\" found."),
        hover: None,
    },
    Row {
        id: "vim",
        binary: "vim-language-server",
        files: &[
            ("plugin.vim", "function! Greet(name) abort\n  echo 'hi ' . a:name\nendfunction\ncall Greet('x')\n"),
            ("broken.vim", "function! Broken(\n"),
        ],
        file: "plugin.vim",
        status: "vim at . (vim-language-server --stdio): running, pid PID, ready (utf-16 positions)",
        symbols: "",
        broken: ("broken.vim", "lsp diagnostics  broken.vim (vim) — 1 error, 0 warnings\nbroken.vim:1:18 error unexpected token: <EOL>"),
        hover: None,
    },
    Row {
        id: "python-jedi",
        binary: "jedi-language-server",
        files: &[
            ("pyproject.toml", "[project]\nname = \"x\"\n"),
            ("app.py", "def greet(name: str) -> str:\n    \"\"\"Say hi.\"\"\"\n    return name\n\n\nclass Greeter:\n    pass\n\n\ngreet(\"x\")\n"),
            ("broken.py", "def f(:\n    pass\n"),
        ],
        file: "app.py",
        status: "python-jedi at . (jedi-language-server): running, pid PID, ready (utf-8 positions)",
        symbols: "lsp symbols  app.py — 2 symbols\n1: function greet\n6: class Greeter",
        broken: ("broken.py", "lsp diagnostics  broken.py (python-jedi) — 1 error, 0 warnings\nbroken.py:1:7 error SyntaxError: invalid syntax (broken.py, line 1)"),
        hover: Some((10, "greet", "lsp hover  `greet` at app.py:10\ndef greet(name: str) -> str\n\nSay hi.\nFull name: app.greet")),
    },
    Row {
        id: "python-pylsp",
        binary: "pylsp",
        files: &[
            ("pyproject.toml", "[project]\nname = \"x\"\n"),
            ("app.py", "def greet(name: str) -> str:\n    \"\"\"Say hi.\"\"\"\n    return name\n\n\nclass Greeter:\n    pass\n\n\ngreet(\"x\")\n"),
            ("broken.py", "def f(:\n    pass\n"),
        ],
        file: "app.py",
        status: "python-pylsp at . (pylsp): running, pid PID, ready (utf-16 positions)",
        symbols: "lsp symbols  app.py — 2 symbols\n1: function greet\n6: class Greeter",
        broken: ("broken.py", "lsp diagnostics  broken.py (python-pylsp) — 1 error, 0 warnings\nbroken.py:1:8 error invalid syntax"),
        hover: Some((10, "greet", "lsp hover  `greet` at app.py:10\ngreet(name: str) -> str\n\nSay hi.")),
    },
    Row {
        id: "ruff",
        binary: "ruff",
        files: &[
            ("pyproject.toml", "[project]\nname = \"x\"\n"),
            ("app.py", "import os\n\n\ndef greet(name: str) -> str:\n    return name\n"),
            ("broken.py", "import os\nx = undefined_name\n"),
        ],
        file: "app.py",
        status: "ruff at . (ruff server): running, pid PID, ready (utf-8 positions)",
        symbols: "",
        broken: ("broken.py", "lsp diagnostics  broken.py (ruff) — 1 error, 2 warnings\nbroken.py:1:1 warning [I001] Import block is un-sorted or un-formatted\nbroken.py:1:8 warning [F401] `os` imported but unused\nbroken.py:2:5 error [F821] Undefined name `undefined_name`"),
        hover: None,
    },
    Row {
        id: "fortran",
        binary: "fortls",
        files: &[
            ("fpm.toml", "name = \"demo\"\n"),
            ("demo.f90", "module greet_mod\ncontains\n  subroutine greet(n)\n    integer, intent(in) :: n\n    print *, n\n  end subroutine greet\nend module greet_mod\n"),
            ("broken.f90", "program p\n  integer :: x\n  integer :: x\nend program p\n"),
        ],
        file: "demo.f90",
        status: "fortran at . (fortls): running, pid PID, ready (utf-16 positions)",
        symbols: "lsp symbols  demo.f90 — 2 symbols\n1: module greet_mod\n3: function greet",
        broken: ("broken.f90", "lsp diagnostics  broken.f90 (fortran) — 1 error, 0 warnings\nbroken.f90:3:14 error Variable \"x\" declared twice in scope"),
        hover: Some((3, "greet", "lsp hover  `greet` at demo.f90:3\nSUBROUTINE greet(n)\n INTEGER, INTENT(IN) :: n")),
    },
    Row {
        id: "c-ccls",
        binary: "ccls",
        files: &[
            ("compile_flags.txt", "-std=c11\n"),
            ("main.c", "int add(int a, int b) { return a + b; }\nstruct point { int x; };\nint main(void) { return add(1, 2); }\n"),
            ("broken.c", "int main(void) { return undefined_thing; }\n"),
        ],
        file: "main.c",
        status: "c-ccls at . (ccls): running, pid PID, ready (utf-32 positions)",
        symbols: "lsp symbols  main.c — 4 symbols\n1: function add\n2: struct point\n  2: field x\n3: function main",
        broken: ("broken.c", "lsp diagnostics  broken.c (c-ccls) — 1 error, 0 warnings\nbroken.c:1:25 error [2] use of undeclared identifier 'undefined_thing'"),
        hover: None,
    },
    Row {
        id: "biome",
        binary: "biome",
        files: &[
            ("biome.json", "{}\n"),
            ("app.ts", "export function greet(name: string): string {\n  return name;\n}\n"),
            ("broken.ts", "debugger;\nlet x = 1;\nexport { x };\n"),
        ],
        file: "app.ts",
        status: "biome at . (biome lsp-proxy): running, pid PID, ready (utf-8 positions)",
        symbols: "",
        broken: ("broken.ts", "lsp diagnostics  broken.ts (biome) — 1 error, 1 warning\nbroken.ts:1:1 error [lint/suspicious/noDebugger] This is an unexpected use of the debugger statement.\nbroken.ts:2:1 warning [lint/style/useConst] This let declares a variable that is only assigned once.\n(1 hint or info not shown)"),
        hover: None,
    },
    Row {
        id: "java",
        binary: "jdtls",
        files: &[
            JAVA_POM,
            JAVA_APP,
            JAVA_GREETER,
            ("src/main/java/m/Broken.java", "package m;\n\nclass Broken {\n    int f() {\n        return Greeter.greet(1);\n    }\n}\n"),
        ],
        file: "src/main/java/m/App.java",
        // Its background searches show as indexing a while after the
        // first answer.
        status: "java at . (jdtls -data {own_dir}): running, pid PID, …",
        symbols: "lsp symbols  src/main/java/m/App.java — 3 symbols\n1: package m\n5: class App\n  6: method main(String[])",
        broken: ("src/main/java/m/Broken.java", "lsp diagnostics  src/main/java/m/Broken.java (java) — 1 error, 0 warnings\nsrc/main/java/m/Broken.java:5:16 error [570425394] Greeter cannot be resolved"),
        hover: Some((7, "greet", "lsp hover  `greet` at src/main/java/m/App.java:7\nString m.util.Greeter.greet(String name)\n\nThe greeting for `name`.\n\n* **Parameters:**\n  * **name**\n…")),
    },
];

/// A config whose catalog is the built-in entry `id` alone (a linter
/// serving its files alone, as their server).
fn only(id: &str) -> CatalogConfig {
    let mut config = CatalogConfig::default();
    let builtin = lsp_session::catalog::builtin();
    config.disable = builtin
        .iter()
        .map(|e| e.id.clone())
        .filter(|e| e != id)
        .collect();
    let mut entry = builtin.into_iter().find(|e| e.id == id).unwrap();
    entry.role = lsp_session::catalog::Role::Server;
    config.servers.push(entry);
    // Servers that start slowly on a loaded machine get time to publish.
    config.diagnostics_wait_ms = Some(30_000);
    config
}

async fn check(row: &Row) -> Vec<String> {
    let mut failures = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in row.files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let run = Run::with_binding(dir, LspBinding::new(only(row.id)));
    let mut fail = |what: &str, want: &str, out: &str| {
        failures.push(format!("{}: {what}: want\n{want}\ngot\n{out}", row.id));
    };
    let show = std::env::var_os("ROWS_SHOW").is_some();
    let (broken, want) = row.broken;
    match run
        .call("lsp", json!({"op": "diagnostics", "file": broken}))
        .await
    {
        Ok(out) => {
            if show {
                eprintln!("{}: diagnostics\n{out}", row.id);
            }
            if out != want {
                fail("diagnostics", want, &out);
            }
        }
        Err(e) => fail("diagnostics failed", want, &e.to_string()),
    }
    let status = run.call("lsp", json!({"op": "status"})).await.unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(&format!("{} at ", row.id)))
        .map(|l| masked(l, &run.root))
        .unwrap_or_default();
    if show {
        eprintln!("{}: status\n{line}", row.id);
    }
    // "…" at the end: what follows depends on timing (still indexing).
    let same = match row.status.strip_suffix('…') {
        Some(head) => line.starts_with(head),
        None => line == row.status,
    };
    if !same {
        fail("status line", row.status, &status);
    }
    if !row.symbols.is_empty() {
        match run
            .call("lsp", json!({"op": "symbols", "file": row.file}))
            .await
        {
            Ok(out) => {
                if show {
                    eprintln!("{}: symbols\n{out}", row.id);
                }
                if out != row.symbols {
                    fail("symbols", row.symbols, &out);
                }
            }
            Err(e) => fail("symbols failed", row.symbols, &e.to_string()),
        }
    }
    if let Some((line, symbol, want)) = row.hover {
        match run
            .call(
                "lsp",
                json!({"op": "hover", "file": row.file, "line": line, "symbol": symbol}),
            )
            .await
        {
            Ok(out) => {
                if show {
                    eprintln!("{}: hover\n{out}", row.id);
                }
                // "\n…" at the end: the answer goes on past these lines.
                let (lines, more) = want
                    .strip_suffix("\n…")
                    .map_or((want, false), |w| (w, true));
                let n = if more {
                    lines.lines().count()
                } else {
                    usize::MAX
                };
                let head: Vec<&str> = out.lines().take(n).collect();
                if head.join("\n") != lines {
                    fail("hover", want, &out);
                }
            }
            Err(e) => fail("hover failed", want, &e.to_string()),
        }
    }
    run.finish().await;
    failures
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tested_catalog_server_answers() {
    let only_rows = std::env::var("ROWS").ok();
    let mut failures = Vec::new();
    for row in ROWS {
        if let Some(sel) = &only_rows {
            if !sel.split(',').any(|s| s == row.id) {
                continue;
            }
        }
        if test_support::fixtures::require(&[row.binary]).is_none() {
            continue;
        }
        failures.extend(check(row).await);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `diagnostics` of a file with both its server and a linter: the merged
/// answer, and the process groups to check after the run.
async fn merged_diagnostics(files: &[(&str, &str)], file: &str) -> String {
    let config = CatalogConfig {
        diagnostics_wait_ms: Some(30_000),
        ..CatalogConfig::default()
    };
    merged_diagnostics_with(config, files, file).await
}

async fn merged_diagnostics_with(
    config: CatalogConfig,
    files: &[(&str, &str)],
    file: &str,
) -> String {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        std::fs::write(dir.path().join(path), text).unwrap();
    }
    let run = Run::with_binding(dir, LspBinding::new(config));
    let out = run
        .call("lsp", json!({"op": "diagnostics", "file": file}))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    run.finish().await;
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ruff_runs_beside_basedpyright_merged_and_labelled() {
    if test_support::fixtures::require(&["basedpyright-langserver"]).is_none()
        || test_support::fixtures::require(&["ruff"]).is_none()
    {
        return;
    }
    let out = merged_diagnostics(
        &[
            ("pyproject.toml", "[project]\nname = \"x\"\n"),
            (
                "app.py",
                "import os\n\n\ndef f() -> int:\n    return \"x\"\n",
            ),
        ],
        "app.py",
    )
    .await;
    expect_test::expect![[r#"
        lsp diagnostics  app.py (python + ruff) — 1 error, 2 warnings
        app.py:1:8 warning [F401] `os` imported but unused (ruff)
        app.py:1:8 warning [reportUnusedImport] Import "os" is not accessed (python)
        app.py:5:12 error [reportReturnType] Type "Literal['x']" is not assignable to return type "int" (python)"#]].assert_eq(&out);
}

/// Diagnostics on write judge the file's linters too, each against its own
/// baseline: what ruff newly reports after a write comes beside what
/// basedpyright newly reports, labelled; what either reported before the
/// write (and only moved) is not new.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_reports_new_problems_from_the_files_linters_too() {
    if test_support::fixtures::require(&["basedpyright-langserver"]).is_none()
        || test_support::fixtures::require(&["ruff"]).is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[project]\nname = \"x\"\n",
    )
    .unwrap();
    // Before: one problem from each server (ruff F401, basedpyright's
    // reportUnusedImport on the same import).
    std::fs::write(
        dir.path().join("app.py"),
        "import os\n\n\ndef f() -> int:\n    return 1\n",
    )
    .unwrap();
    let config = CatalogConfig {
        diagnostics_wait_ms: Some(30_000),
        ..CatalogConfig::default()
    };
    let run = Run::with_binding(dir, LspBinding::new(config));
    // The old problems move down two lines; a new one from each server.
    let out = run
        .call(
            "write",
            json!({"path": "app.py", "content": "# moved\n# down\nimport os\nimport sys\n\n\ndef f() -> int:\n    return \"x\"\n"}),
        )
        .await
        .unwrap();
    expect_test::expect![[r#"
        wrote app.py
        lsp: 3 new problems in app.py after this write:
        app.py:4:8 warning [F401] `sys` imported but unused (ruff)
        app.py:4:8 warning [reportUnusedImport] Import "sys" is not accessed (python)
        app.py:8:12 error [reportReturnType] Type "Literal['x']" is not assignable to return type "int" (python)"#]]
    .assert_eq(&out);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn biome_runs_beside_typescript_merged_and_labelled() {
    if test_support::fixtures::require(&["typescript-language-server"]).is_none()
        || test_support::fixtures::require(&["biome"]).is_none()
    {
        return;
    }
    let out = merged_diagnostics(
        &[
            (
                "tsconfig.json",
                "{\"compilerOptions\": {\"strict\": true}}\n",
            ),
            ("biome.json", "{}\n"),
            ("app.ts", "debugger;\nexport const n: number = \"x\";\n"),
        ],
        "app.ts",
    )
    .await;
    expect_test::expect![[r#"
        lsp diagnostics  app.ts (typescript + biome) — 2 errors, 0 warnings
        app.ts:1:1 error [lint/suspicious/noDebugger] This is an unexpected use of the debugger statement. (biome)
        app.ts:2:14 error [2322] Type 'string' is not assignable to type 'number'. (typescript)"#]].assert_eq(&out);
}

/// eslint beside typescript-language-server on a JavaScript file: the
/// server loads the eslint library from the project's node_modules (here a
/// link to the fixtures' npm folder, as an installed project has it) and
/// its flat config; its problem comes merged and labelled, without waiting
/// out the index wait for tsserver (no tsconfig.json: no progress).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eslint_runs_beside_typescript_merged_and_labelled() {
    if test_support::fixtures::require(&["typescript-language-server"]).is_none()
        || test_support::fixtures::require(&["vscode-eslint-language-server"]).is_none()
    {
        return;
    }
    let modules = test_support::fixtures::dir().join("npm/node_modules");
    assert!(
        modules.join("eslint/package.json").is_file(),
        "the eslint library is not installed: cargo xtask fixtures"
    );
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&modules, dir.path().join("node_modules")).unwrap();
    for (path, text) in [
        (
            "package.json",
            "{\"name\": \"lint-me\", \"type\": \"module\"}\n",
        ),
        (
            "eslint.config.js",
            "export default [{ rules: { \"no-debugger\": \"error\" } }];\n",
        ),
        ("app.js", "debugger;\nexport const n = 1;\n"),
    ] {
        std::fs::write(dir.path().join(path), text).unwrap();
    }
    // tsserver reports no progress for a folder without tsconfig.json: its
    // ready probe, not the index wait (5 min here; it was waited out whole
    // before, 60 s by default), ends the wait for it.
    let config = CatalogConfig {
        diagnostics_wait_ms: Some(30_000),
        index_wait_ms: Some(300_000),
        ..CatalogConfig::default()
    };
    let run = Run::with_binding(dir, LspBinding::new(config));
    let started = std::time::Instant::now();
    let out = run
        .call("lsp", json!({"op": "diagnostics", "file": "app.js"}))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let took = started.elapsed();
    assert!(
        took < std::time::Duration::from_mins(2),
        "waited {took:?}: the index wait, not the ready probe"
    );
    expect_test::expect![[r#"
        lsp diagnostics  app.js (typescript + eslint) — 1 error, 0 warnings
        app.js:1:1 error [no-debugger] Unexpected 'debugger' statement. (eslint)"#]]
    .assert_eq(&out);
    run.finish().await;
}

/// biome's `lsp-proxy` joins a daemon found by a socket in the user's cache
/// folder, and the end of a run stops the daemon with the run's processes.
/// Each start of biome gets a cache folder of its own, so a run that ends
/// never cuts another run's biome off (before, the second run's proxy lost
/// its daemon: "exited before it said it had started", seen in CI).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runs_with_biome_at_once_each_keep_their_own_daemon() {
    if test_support::fixtures::require(&["typescript-language-server"]).is_none()
        || test_support::fixtures::require(&["biome"]).is_none()
    {
        return;
    }
    let files = [
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}}\n",
        ),
        ("biome.json", "{}\n"),
        ("app.ts", "export const n: number = 1;\n"),
    ];
    let start = || async {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            std::fs::write(dir.path().join(path), text).unwrap();
        }
        let config = CatalogConfig {
            diagnostics_wait_ms: Some(30_000),
            ..CatalogConfig::default()
        };
        let run = Run::with_binding(dir, LspBinding::new(config));
        let out = run
            .call("lsp", json!({"op": "diagnostics", "file": "app.ts"}))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        (run, out)
    };
    // The first run's biome starts the daemon; the second's would join it.
    let (first, first_out) = start().await;
    let (second, second_out) = start().await;
    let clean = "lsp diagnostics  app.ts (typescript + biome)\nno errors or warnings";
    assert_eq!((first_out.as_str(), second_out.as_str()), (clean, clean));
    first.finish().await;
    let out = second
        .call(
            "write",
            json!({"path": "app.ts", "content": "debugger;\nexport const n: number = 1;\n"}),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    expect_test::expect![[r#"
        wrote app.ts
        lsp: 1 new problem in app.ts after this write:
        app.ts:1:1 error [lint/suspicious/noDebugger] This is an unexpected use of the debugger statement. (biome)"#]]
    .assert_eq(&out);
    // Its biome never lost its daemon: not restarted (with one daemon per
    // user: "restarted after it crashed ×1 (last 0 s ago: exit status 0)").
    let status = second.call("lsp", json!({"op": "status"})).await.unwrap();
    let biome = status.lines().find(|l| l.starts_with("biome at")).unwrap();
    let pid = pid_in(biome);
    assert_eq!(
        biome.replace(&pid, "PID"),
        "biome at . (biome lsp-proxy): running, pid PID, ready (utf-8 positions)"
    );
    second.finish().await;
}

/// The number after "pid " in a status line.
fn pid_in(line: &str) -> String {
    let rest = &line[line.find("pid ").expect("a pid") + 4..];
    rest.chars().take_while(char::is_ascii_digit).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linter_that_fails_is_named_and_the_servers_answer_still_given() {
    if test_support::fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let config: CatalogConfig = serde_json::from_value(json!({
        "diagnostics_wait_ms": 30000,
        "disable": ["ruff"],
        "servers": [{"id": "broken-linter", "role": "linter", "extensions": {"py": "python"},
                     "commands": [["sh", "-c", "exit 3"]], "root_markers": ["pyproject.toml"]}]
    }))
    .unwrap();
    let out = merged_diagnostics_with(
        config,
        &[
            ("pyproject.toml", "[project]\nname = \"x\"\n"),
            ("app.py", "def f() -> int:\n    return \"x\"\n"),
        ],
        "app.py",
    )
    .await;
    // How the dead linter's end is seen (a broken pipe or its exit) is a
    // race; the rest is exact.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    expect_test::expect![[r#"
        lsp diagnostics  app.py (python) — 1 error, 0 warnings
        app.py:2:12 error [reportReturnType] Type "Literal['x']" is not assignable to return type "int" (python)"#]]
    .assert_eq(&lines[..2].join("\n"));
    assert!(
        lines[2].starts_with(
            "broken-linter did not answer (failed: broken-linter (sh -c exit 3) did not start at .: \
             `initialize` failed: the language server is gone"
        ),
        "{out}"
    );
}

/// A run of the json server alone (with `config`) on one small file: its
/// `symbols` asked once, the server's processes awaited gone (bounded by
/// `within`), then `status` (returned) and a call that must answer the same
/// from a new server. `None` when the server is not installed.
async fn json_server_stopped_then_started_again(
    config: CatalogConfig,
    within: std::time::Duration,
) -> Option<String> {
    test_support::fixtures::require(&["vscode-json-language-server"])?;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.json"), "{\n  \"name\": \"demo\"\n}\n").unwrap();
    let run = Run::with_binding(dir, LspBinding::new(config));
    let symbols = json!({"op": "symbols", "file": "data.json"});
    let first = run.lsp(symbols.clone()).await;
    expect_test::expect![[r#"
        lsp symbols  data.json — 1 symbol
        2: string name"#]]
    .assert_eq(&first);
    let pids = run.pids().await;
    assert_eq!(pids.len(), 1);
    let deadline = std::time::Instant::now() + within;
    while !run.pids().await.is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    common::assert_all_dead(&pids).await;
    let status = run.lsp(json!({"op": "status"})).await;
    // The next call answers, from a new server.
    let again = run.lsp(symbols).await;
    assert_eq!(again, first);
    let new_pids = run.pids().await;
    assert_eq!(new_pids.len(), 1);
    assert_ne!(new_pids, pids);
    run.finish().await;
    Some(status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_server_is_stopped_and_the_next_call_starts_it_again() {
    let mut config = only("json");
    config.idle_timeout_ms = Some(1_000);
    // Unused past the idle timeout: stopped, its processes gone.
    let Some(status) =
        json_server_stopped_then_started_again(config, std::time::Duration::from_secs(20)).await
    else {
        return;
    };
    let line = status.lines().find(|l| l.starts_with("json at ")).unwrap();
    expect_test::expect![[r#"json at . (vscode-json-language-server --stdio): stopped (idle: unused for N s, stopped N s ago; the next call that needs it starts it again)"#]].assert_eq(&digits_masked(line));
}

/// Every digit run of `text` as `N` (memory figures and ages vary).
fn digits_masked(text: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            out.push(c);
            in_number = false;
        }
    }
    out
}

/// A server over its memory ceiling (10 MiB here: node alone takes more)
/// is stopped with its processes, the next result carries a notice,
/// `status` says why, and the next call starts it afresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_over_its_memory_ceiling_is_stopped_told_and_started_again() {
    let mut config = only("json");
    config.memory_ceiling_mb = Some(10);
    // Sampled every 5 s: stopped, its processes gone.
    let Some(status) =
        json_server_stopped_then_started_again(config, std::time::Duration::from_secs(30)).await
    else {
        return;
    };
    let mut told: Vec<&str> = status
        .lines()
        .filter(|l| l.starts_with("json at "))
        .collect();
    told.extend(status.lines().filter(|l| l.starts_with("[lsp warning, ")));
    expect_test::expect![[r#"
        json at . (vscode-json-language-server --stdio): stopped: it went over its memory ceiling (last N s ago: N MiB > N MiB); the next call that needs it starts it again
        [lsp warning, N.N s ago] lsp: json at . used N MiB, over its memory ceiling of N MiB: stopped; the next call that needs it starts it afresh"#]].assert_eq(&digits_masked(&told.join("\n")));
}

/// jdtls across the packages of a Maven project, in one server: definition
/// and references of a method, then a signature change whose write names
/// the call it breaks in the other package.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_definition_references_and_a_signature_changes_fallout() {
    if test_support::fixtures::require(&["jdtls"]).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in [JAVA_POM, JAVA_APP, JAVA_GREETER] {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let run = Run::with_binding(dir, LspBinding::new(only("java")));
    let (app, greeter) = (JAVA_APP.0, JAVA_GREETER.0);
    let mut out = Vec::new();
    for args in [
        json!({"op": "definition", "file": app, "line": 7, "symbol": "greet"}),
        json!({"op": "references", "file": greeter, "line": 6, "symbol": "greet"}),
    ] {
        out.push(
            run.call("lsp", args)
                .await
                .unwrap_or_else(|e| e.to_string()),
        );
    }
    let changed = JAVA_GREETER
        .1
        .replace("greet(String name)", "greet(String name, int times)");
    out.push(
        run.call("write", json!({"path": greeter, "content": changed}))
            .await
            .unwrap_or_else(|e| e.to_string()),
    );
    let root = run.root.clone();
    run.finish().await;
    expect_test::expect![[r#"
        lsp definition  `greet` at src/main/java/m/App.java:7
        src/main/java/m/util/Greeter.java:6    public static String greet(String name) {  (in Greeter/greet(String))

        lsp references  `greet` at src/main/java/m/util/Greeter.java:6 — 2 references in 2 files
        src/main/java/m/App.java:7             System.out.println(Greeter.greet("world"));  (in App/main(String[]))
        src/main/java/m/util/Greeter.java:6    public static String greet(String name) {  (in Greeter/greet(String))

        wrote src/main/java/m/util/Greeter.java
        lsp: no new errors or warnings in src/main/java/m/util/Greeter.java
        lsp: 1 new problem in 1 other file after this write:
        src/main/java/m/App.java:7:36 error [67108979] The method greet(String, int) in the type Greeter is not applicable for the arguments (String)"#]].assert_eq(&masked(&out.join("\n\n"), &root));
}
