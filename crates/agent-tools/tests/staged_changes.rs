//! Staged changes through the facade against real language servers
//! (basedpyright, typescript-language-server, rust-analyzer): a
//! staged `lsp_rename` and an `ast_edit` show their diff and the
//! diagnostics the servers would report after them, touch nothing on disk
//! (bytes and mtime) until `resolve` accepts, are refused after drift, and
//! `resolve` reports the diagnostics after the real write.

#![cfg(all(feature = "lsp", feature = "astgrep"))]

use agent_tools::{RunOptions, Toolset, ToolsetBuilder};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;
use tool_astgrep::AstGrepBinding;
use tool_core::{AllowAll, CallContext, Surface, Tier, ToolError, ToolOutput};
use tool_lsp::{CatalogConfig, LspBinding};

struct Project {
    dir: tempfile::TempDir,
    toolset: Toolset,
}

impl Project {
    fn new(files: &[(&str, &str)]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let opts = RunOptions::new(dir.path());
        Project::in_dir(dir, &opts)
    }

    /// A run over `dir` bound by `opts` (its config), as the binary binds it.
    fn in_dir(dir: tempfile::TempDir, opts: &RunOptions) -> Project {
        // A generous bound: these machines are shared, and a cold server's
        // first check can take more than the default 10 s there.
        let config = CatalogConfig {
            diagnostics_wait_ms: Some(60_000),
            ..CatalogConfig::default()
        };
        let lsp = LspBinding::new(config).with_path(Some(test_support::fixtures::path_env()));
        let toolset = ToolsetBuilder::new(dir.path())
            .unwrap()
            .approver(Arc::new(AllowAll))
            .bind("lsp", Box::new(lsp))
            .astgrep(AstGrepBinding::new().with_journal_dir(dir.path().join(".journal")))
            .with_defaults(opts)
            .build()
            .unwrap();
        Project { dir, toolset }
    }

    async fn call(&self, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
        self.toolset
            .registry()
            .call(Surface::new(Tier::Exec), tool, args, CallContext::new())
            .await
    }

    async fn text(&self, tool: &str, args: Value) -> String {
        match self.call(tool, args.clone()).await {
            Ok(out) => out.joined_text(),
            Err(e) => panic!("{tool} {args}: {e}"),
        }
    }

    /// A call retried while the server is still indexing (tsserver loads
    /// its project in the background first).
    async fn until_indexed(&self, tool: &str, args: Value) -> ToolOutput {
        for _ in 0..60 {
            match self.call(tool, args.clone()).await {
                Err(ToolError::TimedOut(why)) if why.contains("still indexing") => {
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                }
                other => return other.unwrap_or_else(|e| panic!("{tool} {args}: {e}")),
            }
        }
        panic!("{tool}: the server was still indexing after 30 s")
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(rel)).unwrap()
    }

    /// Every file's bytes and mtime, the journal aside (and cargo's own
    /// output, `target/` and `Cargo.lock`, which rust-analyzer's cargo
    /// check writes).
    fn disk(&self) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
        fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, (Vec<u8>, SystemTime)>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.ends_with(".journal") || p.ends_with("target") || p.ends_with("Cargo.lock") {
                    continue;
                }
                if p.is_dir() {
                    walk(&p, out);
                } else {
                    let m = std::fs::metadata(&p).unwrap().modified().unwrap();
                    out.insert(p.clone(), (std::fs::read(&p).unwrap(), m));
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(self.dir.path(), &mut out);
        out
    }
}

const PY_UTIL: &str = "def greet(name: str) -> str:\n    return \"hello \" + name\n";
const PY_APP: &str = "from util import greet\n\nprint(greet(\"world\"))\n";

fn python() -> Option<Project> {
    test_support::fixtures::require(&["basedpyright-langserver"])?;
    Some(Project::new(&[
        ("pyproject.toml", "[project]\nname = \"x\"\n"),
        ("util.py", PY_UTIL),
        ("app.py", PY_APP),
    ]))
}

/// As on pallets/click: `except $E:` → `except $E as _exc:` also matches
/// `except OSError as e:` (the pattern's `$E` takes `OSError as e`), which
/// tree-sitter-python parses but Python does not. The servers' syntax
/// errors refuse it, nothing staged; `allow_parse_errors` stages it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_the_grammar_accepts_but_python_does_not_is_refused() {
    let Some(p) = python() else { return };
    let code = "def f() -> None:\n    try:\n        pass\n    except OSError as e:\n        print(e)\n    except ValueError:\n        pass\n";
    std::fs::write(p.dir.path().join("errors.py"), code).unwrap();
    let before = p.disk();
    let args = json!({"pattern": "except $E:\n    $$$B", "rewrite": "except $E as _exc:\n    $$$B", "path": "errors.py", "language": "python"});
    let err = p.call("ast_edit", args.clone()).await.unwrap_err();
    expect_test::expect![[r#"
        refused: the rewrite leaves syntax errors the language servers report (the grammar accepted it):
        errors.py:4:25 error Expected ":"
        nothing was staged; fix the rewrite, or pass allow_parse_errors: true to stage it anyway"#]]
    .assert_eq(&err.to_string());
    assert_eq!(p.disk(), before, "nothing is written");
    let err = p
        .call("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await
        .unwrap_err();
    expect_test::expect!["refused: edit_1 was rejected (its rewrite left syntax errors the language servers report); call ast_edit again to stage it against the current files"].assert_eq(&err.to_string());
    assert_eq!(p.disk(), before, "the refused edit cannot be accepted");

    let mut allowed = args;
    allowed["allow_parse_errors"] = json!(true);
    let out = p.text("ast_edit", allowed).await;
    assert!(
        out.starts_with("(proposed) 2 replacements in 1 file"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staged_python_rename_shows_its_delta_writes_nothing_and_accept_applies_it() {
    let Some(p) = python() else { return };
    let before = p.disk();
    let out = p
        .text(
            "lsp_rename",
            json!({"file": "util.py", "line": 1, "symbol": "greet", "new_name": "welcome", "stage": true}),
        )
        .await;
    expect_test::expect![[r#"
        (proposed) 3 edits in 2 files … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        lsp_rename  `greet` → `welcome`; nothing is written until accepted
        --- a/app.py
        +++ b/app.py
        @@ -1,3 +1,3 @@
        -from util import greet
        +from util import welcome
         
        -print(greet("world"))
        +print(welcome("world"))
        --- a/util.py
        +++ b/util.py
        @@ -1,2 +1,2 @@
        -def greet(name: str) -> str:
        +def welcome(name: str) -> str:
             return "hello " + name
        after this change: no new errors or warnings"#]]
    .assert_eq(&out);
    assert_eq!(p.disk(), before, "a staged rename touches nothing");

    let out = p
        .text("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    expect_test::expect![[r#"
        resolve edit_1: accepted — 3 replacements written to 2 files: app.py, util.py
        lsp: no new errors or warnings in app.py
        lsp: no new errors or warnings in util.py"#]]
    .assert_eq(&out);
    assert_eq!(p.read("util.py"), PY_UTIL.replace("greet", "welcome"));
    assert_eq!(p.read("app.py"), PY_APP.replace("greet", "welcome"));

    // Staged again, then the file changes: the accept is refused whole.
    p.text(
        "lsp_rename",
        json!({"file": "util.py", "line": 1, "symbol": "welcome", "new_name": "hail", "stage": true}),
    )
    .await;
    std::fs::write(p.dir.path().join("app.py"), "# edited\n").unwrap();
    let err = p
        .call("resolve", json!({"edit_id": "edit_2", "action": "accept"}))
        .await
        .unwrap_err();
    expect_test::expect!["refused: edit_2 rejected: 1 file changed since staging: app.py; nothing was written. Call lsp_rename again to stage the change against the current content"]
        .assert_eq(&err.to_string());
    assert_eq!(p.read("util.py"), PY_UTIL.replace("greet", "welcome"));
}

/// The rename_python fixture (tests/ outside pyrightconfig's include) in a
/// run whose config file says `config`.
fn rename_python(config: &str) -> Option<Project> {
    test_support::fixtures::require(&["basedpyright-langserver"])?;
    let dir = test_support::project::copy_fixture("lsp", "rename_python");
    let file = dir.path().join(".agent-tools-harness.toml");
    std::fs::write(&file, config).unwrap();
    let mut opts = RunOptions::new(dir.path());
    opts.config = agent_tools::RunConfig::load(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    Some(Project::in_dir(dir, &opts))
}

/// A staged rename's preview shows the lines of context the call asks,
/// else the config's `[staging] diff_context`; a value out of range, or one
/// given without `stage`, is refused before the server is asked, and
/// nothing is staged or written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staged_rename_shows_the_diff_context_of_the_call_or_the_config() {
    let Some(p) = rename_python("[staging]\ndiff_context = 3\n") else {
        return;
    };
    let before = p.disk();
    let rename = |extra: Value| {
        let mut args = json!({"file": "pkg/core.py", "line": 1, "symbol": "greet", "new_name": "salute", "stage": true});
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        args
    };
    let mut shown = Vec::new();
    for extra in [
        json!({}),
        json!({"diff_context": 0}),
        json!({"diff_context": 1}),
    ] {
        let out = p.until_indexed("lsp_rename", rename(extra.clone())).await;
        shown.push(format!("{extra}:\n{}", out.joined_text()));
    }
    expect_test::expect![[r#"
        {}:
        (proposed) 7 edits in 3 files … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        lsp_rename  `greet` → `salute`; nothing is written until accepted
        --- a/pkg/app.py
        +++ b/pkg/app.py
        @@ -1,3 +1,3 @@
        -from pkg.core import greet
        +from pkg.core import salute
         
        -print(greet("app"))
        +print(salute("app"))
        --- a/pkg/core.py
        +++ b/pkg/core.py
        @@ -1,2 +1,2 @@
        -def greet(name: str) -> str:
        +def salute(name: str) -> str:
             return "hello " + name
        --- a/tests/test_core.py
        +++ b/tests/test_core.py
        @@ -1,9 +1,9 @@
        -from pkg.core import greet
        +from pkg.core import salute
         
         
         def test_greet() -> None:
        -    assert greet("x") == "hello x"
        +    assert salute("x") == "hello x"
         
         
         def test_greet_twice() -> None:
        -    assert greet(greet("x")) != ""
        +    assert salute(salute("x")) != ""
        after this change: no new errors or warnings

        {"diff_context":0}:
        (proposed) 7 edits in 3 files … call resolve with edit_id "edit_2" and action "accept" to write them, or "discard"
        lsp_rename  `greet` → `salute`; nothing is written until accepted
        --- a/pkg/app.py
        +++ b/pkg/app.py
        @@ -1 +1 @@
        -from pkg.core import greet
        +from pkg.core import salute
        @@ -3 +3 @@
        -print(greet("app"))
        +print(salute("app"))
        --- a/pkg/core.py
        +++ b/pkg/core.py
        @@ -1 +1 @@
        -def greet(name: str) -> str:
        +def salute(name: str) -> str:
        --- a/tests/test_core.py
        +++ b/tests/test_core.py
        @@ -1 +1 @@
        -from pkg.core import greet
        +from pkg.core import salute
        @@ -5 +5 @@
        -    assert greet("x") == "hello x"
        +    assert salute("x") == "hello x"
        @@ -9 +9 @@
        -    assert greet(greet("x")) != ""
        +    assert salute(salute("x")) != ""
        after this change: no new errors or warnings

        {"diff_context":1}:
        (proposed) 7 edits in 3 files … call resolve with edit_id "edit_3" and action "accept" to write them, or "discard"
        lsp_rename  `greet` → `salute`; nothing is written until accepted
        --- a/pkg/app.py
        +++ b/pkg/app.py
        @@ -1,3 +1,3 @@
        -from pkg.core import greet
        +from pkg.core import salute
         
        -print(greet("app"))
        +print(salute("app"))
        --- a/pkg/core.py
        +++ b/pkg/core.py
        @@ -1,2 +1,2 @@
        -def greet(name: str) -> str:
        +def salute(name: str) -> str:
             return "hello " + name
        --- a/tests/test_core.py
        +++ b/tests/test_core.py
        @@ -1,2 +1,2 @@
        -from pkg.core import greet
        +from pkg.core import salute
         
        @@ -4,3 +4,3 @@
         def test_greet() -> None:
        -    assert greet("x") == "hello x"
        +    assert salute("x") == "hello x"
         
        @@ -8,2 +8,2 @@
         def test_greet_twice() -> None:
        -    assert greet(greet("x")) != ""
        +    assert salute(salute("x")) != ""
        after this change: no new errors or warnings"#]].assert_eq(&shown.join("\n\n"));
    let mut refused = Vec::new();
    for extra in [
        json!({"diff_context": 11}),
        json!({"diff_context": -1}),
        json!({"diff_context": "x"}),
        json!({"diff_context": 2, "stage": false}),
    ] {
        let err = p.call("lsp_rename", rename(extra)).await.unwrap_err();
        refused.push(err.to_string());
    }
    expect_test::expect![[r#"
        bad arguments: argument `diff_context`: invalid value: integer `11`, expected an integer from 0 to 10 (lines of context around each change; default 1); check the tool's input schema
        bad arguments: argument `diff_context`: invalid value: integer `-1`, expected an integer from 0 to 10 (lines of context around each change; default 1); check the tool's input schema
        bad arguments: argument `diff_context`: invalid type: string "x", expected an integer from 0 to 10 (lines of context around each change; default 1); check the tool's input schema
        bad arguments: `diff_context` 2 sets the lines around each change of a staged preview, and this call writes at once, showing none; pass `stage: true` with it, or leave it out; nothing was written"#]].assert_eq(&refused.join("\n"));
    let err = p
        .call("resolve", json!({"edit_id": "edit_4", "action": "accept"}))
        .await
        .unwrap_err();
    expect_test::expect![
        "bad arguments: unknown edit_id `edit_4`; staged in this run: edit_1, edit_2, edit_3"
    ]
    .assert_eq(&err.to_string());
    assert_eq!(p.disk(), before, "nothing is written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ast_edit_that_breaks_types_shows_the_new_error_before_anything_is_written() {
    let Some(p) = python() else { return };
    let before = p.disk();
    let out = p
        .text(
            "ast_edit",
            json!({"pattern": "greet($X)", "rewrite": "greet($X, 2)", "path": "app.py"}),
        )
        .await;
    expect_test::expect![[r#"
        (proposed) 1 replacement in 1 file … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        ast_edit  greet($X)  →  greet($X, 2)  [python] in app.py; nothing is written until accepted
        --- a/app.py
        +++ b/app.py
        @@ -2,2 +2,2 @@
         
        -print(greet("world"))
        +print(greet("world", 2))
        after this change: 1 new error, 1 new warning
          app.py:3:7 warning [reportUnknownArgumentType] Argument type is unknown
          app.py:3:22 error [reportCallIssue] Expected 1 positional argument"#]]
    .assert_eq(&out);
    assert_eq!(p.disk(), before, "a staged edit touches nothing");
    // The servers' view was put back: the file on disk has no error.
    let diags = p
        .text("lsp", json!({"op": "diagnostics", "file": "app.py"}))
        .await;
    expect_test::expect![[r#"
        lsp diagnostics  app.py (python + ruff)
        no errors or warnings"#]]
    .assert_eq(&diags);

    let out = p
        .text("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    expect_test::expect![[r#"
        resolve edit_1: accepted — 1 replacement written to 1 file: app.py
        lsp: 2 new problems in app.py after this write:
        app.py:3:7 warning [reportUnknownArgumentType] Argument type is unknown (python)
        app.py:3:22 error [reportCallIssue] Expected 1 positional argument (python)"#]]
    .assert_eq(&out);
    assert_eq!(
        p.read("app.py"),
        PY_APP.replace("\"world\")", "\"world\", 2)")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staged_typescript_rename_is_applied_on_accept_and_refused_after_drift() {
    if test_support::fixtures::require(&["typescript-language-server"]).is_none() {
        return;
    }
    let util = "export function greet(name: string): string {\n  return \"hello \" + name;\n}\n";
    let app = "import { greet } from \"./util\";\n\nconsole.log(greet(\"world\"));\n";
    let p = Project::new(&[
        ("tsconfig.json", TS_CONFIG),
        ("src/util.ts", util),
        ("src/app.ts", app),
    ]);
    let before = p.disk();
    let out = p
        .until_indexed(
            "lsp_rename",
            json!({"file": "src/util.ts", "line": 1, "symbol": "greet", "new_name": "welcome", "stage": true}),
        )
        .await;
    let s = out.structured.clone().unwrap();
    assert_eq!(s["edit_id"], "edit_1");
    assert_eq!(s["files"], json!(["src/app.ts", "src/util.ts"]));
    assert_eq!(
        s["diagnostics_after"],
        "after this change: no new errors or warnings"
    );
    assert_eq!(p.disk(), before, "a staged rename touches nothing");
    let out = p
        .text("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    assert!(
        out.starts_with(
            "resolve edit_1: accepted — 3 replacements written to 2 files: src/app.ts, src/util.ts"
        ),
        "{out}"
    );
    assert_eq!(p.read("src/util.ts"), util.replace("greet", "welcome"));
    assert_eq!(p.read("src/app.ts"), app.replace("greet", "welcome"));

    p.text(
        "lsp_rename",
        json!({"file": "src/util.ts", "line": 1, "symbol": "welcome", "new_name": "hail", "stage": true}),
    )
    .await;
    std::fs::write(p.dir.path().join("src/util.ts"), "export {};\n").unwrap();
    let err = p
        .call("resolve", json!({"edit_id": "edit_2", "action": "accept"}))
        .await
        .unwrap_err();
    expect_test::expect!["refused: edit_2 rejected: 1 file changed since staging: src/util.ts; nothing was written. Call lsp_rename again to stage the change against the current content"]
        .assert_eq(&err.to_string());
    assert_eq!(p.read("src/app.ts"), app.replace("greet", "welcome"));
}

const TS_CONFIG: &str = "{\"compilerOptions\": {\"strict\": true, \"target\": \"es2020\", \"module\": \"commonjs\"}, \"include\": [\"src\"]}\n";
const TS_UTIL: &str =
    "export function greet(name: string): string {\n  return \"hello \" + name;\n}\n";
const TS_APP: &str = "import { greet } from \"./lib/util\";\n\nconsole.log(greet(\"world\"));\n";

fn typescript_with_lib() -> Option<Project> {
    test_support::fixtures::require(&["typescript-language-server"])?;
    Some(Project::new(&[
        ("tsconfig.json", TS_CONFIG),
        ("src/lib/util.ts", TS_UTIL),
        ("src/app.ts", TS_APP),
    ]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typescript_file_move_updates_the_imports_in_other_files() {
    let Some(p) = typescript_with_lib() else {
        return;
    };
    let out = p
        .until_indexed(
            "lsp_rename",
            json!({"file": "src/lib/util.ts", "new_path": "src/greeting.ts"}),
        )
        .await;
    expect_test::expect![[r#"
        lsp_rename  move src/lib/util.ts → src/greeting.ts: 1 file moved, 1 edit in 1 file (edits from typescript)
        src/app.ts (1 edit)"#]]
    .assert_eq(&out.joined_text());
    assert_eq!(p.read("src/greeting.ts"), TS_UTIL);
    assert!(!p.dir.path().join("src/lib/util.ts").exists());
    assert_eq!(
        p.read("src/app.ts"),
        TS_APP.replace("./lib/util", "./greeting")
    );
    // The server follows: the moved function's definition is found at its new place.
    let def = p
        .text(
            "lsp",
            json!({"op": "definition", "file": "src/app.ts", "line": 3, "symbol": "greet"}),
        )
        .await;
    expect_test::expect![[r#"
        lsp definition  `greet` at src/app.ts:3
        src/greeting.ts:1    export function greet(name: string): string {  (in greet)"#]]
    .assert_eq(&def);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staged_folder_move_touches_nothing_until_accepted_and_is_refused_after_drift() {
    let Some(p) = typescript_with_lib() else {
        return;
    };
    let before = p.disk();
    let out = p
        .until_indexed(
            "lsp_rename",
            json!({"file": "src/lib", "new_path": "src/core", "stage": true}),
        )
        .await;
    let s = out.structured.clone().unwrap();
    assert_eq!(s["edit_id"], "edit_1", "{}", out.joined_text());
    assert_eq!(
        s["files"],
        json!(["src/app.ts", "src/core/util.ts", "src/lib/util.ts"])
    );
    assert_eq!(s["moves"], json!([{"from": "src/lib", "to": "src/core"}]));
    expect_test::expect!["after this change: not computed: it creates the folder src/core/, not on disk yet, and language servers look for files in the disk's folders, which a preview never touches — resolve accept reports the diagnostics after the write"].assert_eq(s["diagnostics_after"].as_str().unwrap());
    assert_eq!(p.disk(), before, "a staged move touches nothing");

    // The target appears meanwhile: refused, nothing written.
    std::fs::create_dir_all(p.dir.path().join("src/core")).unwrap();
    std::fs::write(p.dir.path().join("src/core/util.ts"), "export {};\n").unwrap();
    let err = p
        .call("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await
        .unwrap_err();
    expect_test::expect!["refused: edit_1 rejected: 1 file changed since staging: src/core/util.ts; nothing was written. Call lsp_rename again to stage the change against the current content"]
        .assert_eq(&err.to_string());
    assert_eq!(p.read("src/lib/util.ts"), TS_UTIL);
    assert_eq!(p.read("src/app.ts"), TS_APP);

    std::fs::remove_dir_all(p.dir.path().join("src/core")).unwrap();
    p.until_indexed(
        "lsp_rename",
        json!({"file": "src/lib", "new_path": "src/core", "stage": true}),
    )
    .await;
    let out = p
        .text("resolve", json!({"edit_id": "edit_2", "action": "accept"}))
        .await;
    assert!(
        out.starts_with("resolve edit_2: accepted — 1 replacement written to 3 files"),
        "{out}"
    );
    assert_eq!(p.read("src/core/util.ts"), TS_UTIL);
    assert!(!p.dir.path().join("src/lib/util.ts").exists());
    assert_eq!(
        p.read("src/app.ts"),
        TS_APP.replace("./lib/util", "./core/util")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_of_more_than_a_thousand_files_is_refused_and_nothing_moves() {
    let names: Vec<String> = (0..1001).map(|i| format!("big/f{i:04}.txt")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "x\n")).collect();
    let p = Project::new(&files);
    let before = p.disk();
    let err = p
        .call("lsp_rename", json!({"file": "big", "new_path": "moved"}))
        .await
        .unwrap_err();
    expect_test::expect!["refused: `big` holds more than 1,000 files, more than one move takes; nothing was moved — move it with a shell command and fix imports with lsp_rename on the files that need it"]
        .assert_eq(&err.to_string());
    assert_eq!(p.disk(), before);
    let err = p
        .call(
            "lsp_rename",
            json!({"file": "big", "new_path": "moved", "line": 1}),
        )
        .await
        .unwrap_err();
    expect_test::expect!["bad arguments: a move takes `file` and `new_path` only; leave out line, symbol and new_name (or leave out new_path to rename a symbol)"]
        .assert_eq(&err.to_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typescript_add_missing_import_is_applied_and_staged_like_the_others() {
    if test_support::fixtures::require(&["typescript-language-server"]).is_none() {
        return;
    }
    let app = "console.log(greet(\"world\"));\n";
    let p = Project::new(&[
        ("tsconfig.json", TS_CONFIG),
        ("src/util.ts", TS_UTIL),
        ("src/app.ts", app),
    ]);
    let listed = p
        .until_indexed(
            "lsp",
            json!({"op": "code_actions", "file": "src/app.ts", "line": 1, "symbol": "greet"}),
        )
        .await
        .joined_text();
    expect_test::expect![[r#"
        lsp code_actions  `greet` at src/app.ts:1
        1. Add import from "./util" [quickfix] — runs the server command `_typescript.applyWorkspaceEdit`
        2. Add missing function declaration 'greet' [quickfix] — runs the server command `_typescript.applyWorkspaceEdit`
        3. Move to a new file [refactor.move] — runs the server command `_typescript.applyRefactoring`
        (listed only: nothing was applied; apply one with lsp_code_action and its number)"#]].assert_eq(&listed);

    // Staged first: nothing written, the preview says the error goes away.
    let before = p.disk();
    let out = p
        .until_indexed(
            "lsp_code_action",
            json!({"file": "src/app.ts", "line": 1, "symbol": "greet", "action": "add import from", "stage": true}),
        )
        .await;
    expect_test::expect![[r#"
        (proposed) 1 edit in 1 file … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        lsp_code_action  "Add import from "./util"" at src/app.ts:1; nothing is written until accepted
        --- a/src/app.ts
        +++ b/src/app.ts
        @@ -1 +1,3 @@
        +import { greet } from "./util";
        +
         console.log(greet("world"));
        after this change: 1 error fixed"#]]
    .assert_eq(&out.joined_text());
    assert_eq!(p.disk(), before, "a staged code action touches nothing");
    p.text("resolve", json!({"edit_id": "edit_1", "action": "discard"}))
        .await;
    // With no line of context.
    let out = p
        .until_indexed(
            "lsp_code_action",
            json!({"file": "src/app.ts", "line": 1, "symbol": "greet", "action": "add import from", "stage": true, "diff_context": 0}),
        )
        .await;
    expect_test::expect![[r#"
        (proposed) 1 edit in 1 file … call resolve with edit_id "edit_2" and action "accept" to write them, or "discard"
        lsp_code_action  "Add import from "./util"" at src/app.ts:1; nothing is written until accepted
        --- a/src/app.ts
        +++ b/src/app.ts
        @@ -0,0 +1,2 @@
        +import { greet } from "./util";
        +
        after this change: 1 error fixed"#]].assert_eq(&out.joined_text());
    p.text("resolve", json!({"edit_id": "edit_2", "action": "discard"}))
        .await;

    // Applied at once.
    let out = p
        .text(
            "lsp_code_action",
            json!({"file": "src/app.ts", "line": 1, "symbol": "greet", "action": "add import from"}),
        )
        .await;
    assert!(
        out.starts_with("lsp_code_action  \"Add import from \"./util\"\" at src/app.ts:1: 1 edit in 1 file\nsrc/app.ts (1 edit)"),
        "{out}"
    );
    assert_eq!(
        p.read("src/app.ts"),
        format!("import {{ greet }} from \"./util\";\n\n{app}")
    );
}

/// basedpyright (the fixture's Python server) offers no "remove unused
/// import"; its quick fix for an unused import is the ignore comment, and
/// that is what is applied here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_quick_fix_for_an_unused_import_is_applied() {
    let Some(p) = python() else { return };
    let app = "import os\nfrom util import greet\n\nprint(greet(\"world\"))\n";
    std::fs::write(p.dir.path().join("app.py"), app).unwrap();
    let listed = p
        .text(
            "lsp",
            json!({"op": "code_actions", "file": "app.py", "line": 1, "symbol": "os"}),
        )
        .await;
    expect_test::expect![[r#"
        lsp code_actions  `os` at app.py:1
        1. Add `# pyright: ignore[reportUnusedImport]` [quickfix] — edits app.py (1 edit)
        (listed only: nothing was applied; apply one with lsp_code_action and its number)"#]]
    .assert_eq(&listed);
    let err = p
        .call(
            "lsp_code_action",
            json!({"file": "app.py", "line": 1, "symbol": "os", "action": 2}),
        )
        .await
        .unwrap_err();
    expect_test::expect![[r#"
        bad arguments: `action` 2: there is 1 action here:
        1. Add `# pyright: ignore[reportUnusedImport]`"#]]
    .assert_eq(&err.to_string());
    let out = p
        .text(
            "lsp_code_action",
            json!({"file": "app.py", "line": 1, "symbol": "os", "action": 1}),
        )
        .await;
    expect_test::expect![[r#"
        lsp_code_action  "Add `# pyright: ignore[reportUnusedImport]`" at app.py:1: 1 edit in 1 file
        app.py (1 edit)
        lsp: no new errors or warnings in app.py"#]]
    .assert_eq(&out);
    assert_eq!(
        p.read("app.py"),
        app.replacen(
            "import os\n",
            "import os  # pyright: ignore[reportUnusedImport]\n",
            1
        )
    );
}

const RS_CARGO: &str =
    "[package]\nname = \"staged\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";
const RS_UTIL: &str = "pub fn greet(name: &str) -> String {\n    format!(\"hello {name}\")\n}\n";
const RS_MAIN: &str =
    "mod util;\n\nuse util::greet;\n\nfn main() {\n    println!(\"{}\", greet(\"world\"));\n}\n";

fn rust() -> Option<Project> {
    test_support::fixtures::require(&["rust-analyzer"])?;
    Some(Project::new(&[
        ("Cargo.toml", RS_CARGO),
        ("src/util.rs", RS_UTIL),
        ("src/main.rs", RS_MAIN),
    ]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staged_rust_rename_shows_its_delta_writes_nothing_and_accept_applies_it_whole() {
    let Some(p) = rust() else { return };
    let before = p.disk();
    let out = p
        .until_indexed(
            "lsp_rename",
            json!({"file": "src/util.rs", "line": 1, "symbol": "greet", "new_name": "welcome", "stage": true}),
        )
        .await;
    expect_test::expect![[r#"
        (proposed) 3 edits in 2 files … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        lsp_rename  `greet` → `welcome`; nothing is written until accepted
        --- a/src/main.rs
        +++ b/src/main.rs
        @@ -2,6 +2,6 @@
         
        -use util::greet;
        +use util::welcome;
         
         fn main() {
        -    println!("{}", greet("world"));
        +    println!("{}", welcome("world"));
         }
        --- a/src/util.rs
        +++ b/src/util.rs
        @@ -1,2 +1,2 @@
        -pub fn greet(name: &str) -> String {
        +pub fn welcome(name: &str) -> String {
             format!("hello {name}")
        after this change: no new errors or warnings"#]]
    .assert_eq(&out.joined_text());
    assert_eq!(p.disk(), before, "a staged rename touches nothing");

    let out = p
        .text("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    expect_test::expect![[r#"
        resolve edit_1: accepted — 3 replacements written to 2 files: src/main.rs, src/util.rs
        lsp: no new errors or warnings in src/main.rs
        lsp: no new errors or warnings in src/util.rs"#]]
    .assert_eq(&out);
    assert_eq!(p.read("src/util.rs"), RS_UTIL.replace("greet", "welcome"));
    assert_eq!(p.read("src/main.rs"), RS_MAIN.replace("greet", "welcome"));

    // Staged again, then one of its two files changes: the accept is
    // refused whole, and the other file keeps its text.
    p.until_indexed(
        "lsp_rename",
        json!({"file": "src/util.rs", "line": 1, "symbol": "welcome", "new_name": "hail", "stage": true}),
    )
    .await;
    std::fs::write(p.dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let err = p
        .call("resolve", json!({"edit_id": "edit_2", "action": "accept"}))
        .await
        .unwrap_err();
    expect_test::expect!["refused: edit_2 rejected: 1 file changed since staging: src/main.rs; nothing was written. Call lsp_rename again to stage the change against the current content"]
        .assert_eq(&err.to_string());
    assert_eq!(p.read("src/util.rs"), RS_UTIL.replace("greet", "welcome"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_ast_edit_that_breaks_types_shows_rust_analyzers_error_before_anything_is_written() {
    let Some(p) = rust() else { return };
    let before = p.disk();
    let out = p
        .text(
            "ast_edit",
            json!({"pattern": "greet($X)", "rewrite": "greet($X, 2)", "path": "src/main.rs"}),
        )
        .await;
    expect_test::expect![[r#"
        (proposed) 1 replacement in 1 file … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        ast_edit  greet($X)  →  greet($X, 2)  [rust] in src/main.rs; nothing is written until accepted
        --- a/src/main.rs
        +++ b/src/main.rs
        @@ -5,3 +5,3 @@
         fn main() {
        -    println!("{}", greet("world"));
        +    println!("{}", greet("world", 2));
         }
        after this change: 1 new error
          src/main.rs:6:35 error [E0107] expected 1 argument, found 2
        after this change: other files not checked: rust (rust-analyzer) judges them only by its save-time check, which reads the disk, and a preview writes nothing (accepting the change checks them)"#]].assert_eq(&out);
    assert_eq!(p.disk(), before, "a staged edit touches nothing");

    // The preview has rust-analyzer's own error (it waited for the cold
    // server to load the project: an empty set before that is no answer);
    // the real write is saved, so cargo check's error comes with it, and
    // rust-analyzer reports that one in place of its own.
    let out = p
        .text("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    expect_test::expect![[r#"
        resolve edit_1: accepted — 1 replacement written to 1 file: src/main.rs
        lsp: 1 new problem in src/main.rs after this write:
        src/main.rs:6:20 error [E0061] this function takes 1 argument but 2 arguments were supplied"#]].assert_eq(&out);
    assert_eq!(
        p.read("src/main.rs"),
        RS_MAIN.replace("\"world\")", "\"world\", 2)")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staged_typescript_move_previews_what_the_server_reports_after_it() {
    if test_support::fixtures::require(&["typescript-language-server"]).is_none() {
        return;
    }
    // The moved file imports one file that stays beside it (the server
    // rewrites that import) and one it lacks there but finds at its new
    // place (an error the move fixes).
    let util = "import { dep } from \"./dep\";\nimport { helper } from \"./helper\";\nexport function greet(name: string): string {\n  return helper(\"hello \" + name + dep);\n}\n";
    let p = Project::new(&[
        ("tsconfig.json", TS_CONFIG),
        ("src/lib/util.ts", util),
        ("src/lib/dep.ts", "export const dep = \"!\";\n"),
        (
            "src/helper.ts",
            "export function helper(s: string): string {\n  return s;\n}\n",
        ),
        ("src/app.ts", TS_APP),
    ]);
    let before = p.disk();
    let out = p
        .until_indexed(
            "lsp_rename",
            json!({"file": "src/lib/util.ts", "new_path": "src/greeting.ts", "stage": true}),
        )
        .await;
    expect_test::expect![[r#"
        (proposed) 2 edits in 3 files … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        lsp_rename  move src/lib/util.ts → src/greeting.ts: 1 file moved (edits from typescript); nothing is written until accepted
        move src/lib/util.ts → src/greeting.ts
        --- a/src/app.ts
        +++ b/src/app.ts
        @@ -1,2 +1,2 @@
        -import { greet } from "./lib/util";
        +import { greet } from "./greeting";
         
        --- /dev/null
        +++ b/src/greeting.ts
        @@ -0,0 +1,5 @@
        +import { dep } from "./lib/dep";
        +import { helper } from "./helper";
        +export function greet(name: string): string {
        +  return helper("hello " + name + dep);
        +}
        --- a/src/lib/util.ts
        +++ /dev/null
        @@ -1,5 +0,0 @@
        -import { dep } from "./dep";
        -import { helper } from "./helper";
        -export function greet(name: string): string {
        -  return helper("hello " + name + dep);
        -}
        after this change: 1 error fixed"#]].assert_eq(&out.joined_text());
    assert_eq!(p.disk(), before, "a staged move touches nothing");
    // The servers' view was put back: the disk's files, no error.
    let diags = p
        .text("lsp", json!({"op": "diagnostics", "file": "src/app.ts"}))
        .await;
    expect_test::expect![[r#"
        lsp diagnostics  src/app.ts (typescript)
        no errors or warnings"#]]
    .assert_eq(&diags);

    let out = p
        .text("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    expect_test::expect![[r#"
        resolve edit_1: accepted — 2 replacements written to 3 files: src/app.ts, src/greeting.ts, src/lib/util.ts
        lsp: no new errors or warnings in src/app.ts
        lsp: no new errors or warnings in src/greeting.ts"#]].assert_eq(&out);
    assert_eq!(
        p.read("src/app.ts"),
        TS_APP.replace("./lib/util", "./greeting")
    );
}

/// basedpyright offers `willRenameFiles` but answers it with no edits, so
/// a moved module's importers are left as they were; while the moved file
/// is still on disk no server can tell that they break, so the preview
/// names them instead of calling the change clean, and accepting checks
/// them before and after the write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staged_python_move_names_the_importers_no_server_edited() {
    let Some(p) = python() else { return };
    let before = p.disk();
    let out = p
        .text(
            "lsp_rename",
            json!({"file": "util.py", "new_path": "greeting.py", "stage": true}),
        )
        .await;
    expect_test::expect![[r#"
        (proposed) 0 edits in 2 files … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        lsp_rename  move util.py → greeting.py: 1 file moved (edits from python); nothing is written until accepted
        move util.py → greeting.py
        --- /dev/null
        +++ b/greeting.py
        @@ -0,0 +1,2 @@
        +def greet(name: str) -> str:
        +    return "hello " + name
        --- a/util.py
        +++ /dev/null
        @@ -1,2 +0,0 @@
        -def greet(name: str) -> str:
        -    return "hello " + name
        after this change: no new errors or warnings
        after this change: not computed: app.py (mentions `util` of the moved util.py) — no server edited it, and a preview cannot tell whether its imports break, as the moved files stay on disk until accepted; accepting checks it"#]].assert_eq(&out);
    assert_eq!(p.disk(), before, "a staged move touches nothing");
    let out = p
        .text("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    expect_test::expect![[r#"
        resolve edit_1: accepted — 0 replacements written to 2 files: greeting.py, util.py
        lsp: 3 new problems in app.py after the move (it mentions `util` of the moved util.py, and no server edited it):
        app.py:1:6 error [reportMissingImports] Import "util" could not be resolved
        app.py:1:18 warning [reportUnknownVariableType] Type of "greet" is unknown
        app.py:3:7 warning [reportUnknownArgumentType] Argument type is unknown
        lsp: no new errors or warnings in greeting.py"#]]
    .assert_eq(&out);
    // The importer is broken indeed, as accepting said.
    let diags = p
        .text("lsp", json!({"op": "diagnostics", "file": "app.py"}))
        .await;
    expect_test::expect![[r#"
        lsp diagnostics  app.py (python + ruff) — 1 error, 2 warnings
        app.py:1:6 error [reportMissingImports] Import "util" could not be resolved (python)
        app.py:1:18 warning [reportUnknownVariableType] Type of "greet" is unknown (python)
        app.py:3:7 warning [reportUnknownArgumentType] Argument type is unknown (python)"#]]
    .assert_eq(&diags);
}

/// rust-analyzer edits `mod` and `use` for a moved module file, and finds
/// the moved file open under its new path (else its preview would carry
/// E0583 "unresolved module").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staged_rust_module_move_previews_rust_analyzers_answer_and_accept_applies_it() {
    let Some(p) = rust() else { return };
    let before = p.disk();
    let out = p
        .until_indexed(
            "lsp_rename",
            json!({"file": "src/util.rs", "new_path": "src/greeting.rs", "stage": true}),
        )
        .await;
    expect_test::expect![[r#"
        (proposed) 2 edits in 3 files … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        lsp_rename  move src/util.rs → src/greeting.rs: 1 file moved (edits from rust); nothing is written until accepted
        move src/util.rs → src/greeting.rs
        --- /dev/null
        +++ b/src/greeting.rs
        @@ -0,0 +1,3 @@
        +pub fn greet(name: &str) -> String {
        +    format!("hello {name}")
        +}
        --- a/src/main.rs
        +++ b/src/main.rs
        @@ -1,4 +1,4 @@
        -mod util;
        +mod greeting;
         
        -use util::greet;
        +use greeting::greet;
         
        --- a/src/util.rs
        +++ /dev/null
        @@ -1,3 +0,0 @@
        -pub fn greet(name: &str) -> String {
        -    format!("hello {name}")
        -}
        after this change: no new errors or warnings"#]].assert_eq(&out.joined_text());
    assert_eq!(p.disk(), before, "a staged move touches nothing");
    let out = p
        .text("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    expect_test::expect![[r#"
        resolve edit_1: accepted — 2 replacements written to 3 files: src/greeting.rs, src/main.rs, src/util.rs
        lsp: no new errors or warnings in src/greeting.rs
        lsp: no new errors or warnings in src/main.rs"#]].assert_eq(&out);
    assert_eq!(p.read("src/greeting.rs"), RS_UTIL);
    assert!(!p.dir.path().join("src/util.rs").exists());
    assert_eq!(p.read("src/main.rs"), RS_MAIN.replace("util", "greeting"));
}

const C_MAIN: &str =
    "int add(int a, int b) { return a + b; }\n\nint main(void) {\n  return add(1, 2);\n}\n";

/// clangd publishes per version, builds only the latest of versions sent
/// close together, and does not publish a version whose text is the one it
/// last built. A preview ends by putting the file back: unless that
/// version is built, the next preview of the same change sends the text
/// clangd last built and waits for a publish that never comes (before:
/// "not computed: main.c (c not ready after 10000 ms)" from the second
/// preview on, after a write).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_change_previewed_again_on_clangd_is_computed_each_time() {
    if test_support::fixtures::require(&["clangd"]).is_none() {
        return;
    }
    let p = Project::new(&[("main.c", C_MAIN), ("compile_flags.txt", "-std=c11\n")]);
    let broken = format!("{C_MAIN}\nint bad(void) {{ return undefined_name; }}\n");
    for content in [broken.as_str(), C_MAIN] {
        p.text("write", json!({"path": "main.c", "content": content}))
            .await;
    }
    let mut previews = Vec::new();
    for n in 1..=3 {
        let out = p
            .text(
                "ast_edit",
                json!({"pattern": "add($A, $B)", "rewrite": "add($A, $B, 1)", "path": "main.c", "language": "c"}),
            )
            .await;
        previews.push(out.lines().last().unwrap_or_default().trim().to_string());
        p.text(
            "resolve",
            json!({"edit_id": format!("edit_{n}"), "action": "discard"}),
        )
        .await;
    }
    expect_test::expect![[r#"
          main.c:4:20 error [typecheck_call_too_many_args] Too many arguments to function call, expected 2, have 3
          main.c:4:20 error [typecheck_call_too_many_args] Too many arguments to function call, expected 2, have 3
          main.c:4:20 error [typecheck_call_too_many_args] Too many arguments to function call, expected 2, have 3"#]].assert_eq(&previews.join("\n"));
}
