//! The read operations of issue 17 against the real servers: enclosing
//! symbols on every location, call and type hierarchy, signature help,
//! `capabilities` and diagnostics on a glob. Exact answers (snapshots).

mod common;

use common::{project, Run};
use expect_test::expect;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_locations_name_their_enclosing_symbol() {
    if test_support::fixtures::require(&["basedpyright-langserver"]).is_none() {
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
    if test_support::fixtures::require(&["typescript-language-server"]).is_none() {
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

/// A Python file of callers and callees beside the fixture's util.py.
const PY_CALLS: &str = "from util import Greeter, greet


def welcome(name: str) -> str:
    return greet(name) + Greeter(name).say()


def twice(name: str) -> str:
    return welcome(name) + welcome(name)


class Host:
    def open(self) -> str:
        return welcome(\"host\")
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_calls_signatures_and_capabilities() {
    if test_support::fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let run = Run::new(project("python"));
    std::fs::write(run.root.join("calls.py"), PY_CALLS).unwrap();
    let incoming = run
        .lsp(json!({"op": "incoming_calls", "file": "calls.py", "line": 4, "symbol": "welcome"}))
        .await;
    expect![[r#"
        lsp incoming_calls  `welcome` at calls.py:4 — 3 calls from 2 callers
        calls.py:9     return welcome(name) + welcome(name)  (in twice, 2 calls)
        calls.py:14    return welcome("host")  (in Host/open)"#]]
    .assert_eq(&incoming);
    let outgoing = run
        .lsp(json!({"op": "outgoing_calls", "file": "calls.py", "line": 4, "symbol": "welcome"}))
        .await;
    expect![[r#"
        lsp outgoing_calls  `welcome` at calls.py:4 — 3 callees
        util.py:1     class Greeter:  (Greeter, called at calls.py:5)
        util.py:7     def say(self) -> str:  (say, called at calls.py:5)
        util.py:11    def greet(name: str) -> str:  (greet, called at calls.py:5)"#]]
    .assert_eq(&outgoing);
    let sig = run
        .lsp(json!({"op": "signature_help", "file": "app.py", "line": 5, "symbol": "greet"}))
        .await;
    expect![[r#"
        lsp signature_help  `greet` at app.py:5
        greet(«name: str») -> str
        active parameter: name: str
        Return a friendly greeting for name."#]]
    .assert_eq(&sig);
    let caps = run
        .lsp(json!({"op": "capabilities", "file": "app.py"}))
        .await;
    expect![[r#"
        lsp capabilities  app.py
        python — basedpyright-langserver --stdio:
          navigation: definition, type_definition, implementation, references, hover
          symbols: symbols of a file, symbols by query
          hierarchy: incoming_calls/outgoing_calls; not offered: supertypes/subtypes
          signature_help: signature_help
          editing: lsp_rename, code_actions; not offered: formatting
          details: rename checks the position first (prepareRename); code action kinds: quickfix, source.organizeImports; signature help after ( , ); updates imports when files move (willRenameFiles)
          diagnostics: pulled (textDocument/diagnostic) and published; positions in utf-16
        ruff (linter) — ruff server:
          navigation: hover; not offered: definition, type_definition, implementation, references
          symbols: none (not offered: symbols of a file, symbols by query)
          hierarchy: none (not offered: incoming_calls/outgoing_calls, supertypes/subtypes)
          signature_help: none (not offered: signature_help)
          editing: code_actions, formatting; not offered: lsp_rename
          details: code action kinds: quickfix, source.fixAll.ruff, source.organizeImports.ruff, notebook.source.fixAll.ruff, notebook.source.organizeImports.ruff
          diagnostics: pulled (textDocument/diagnostic) and published; positions in utf-8"#]].assert_eq(&caps);
    // basedpyright has no type hierarchy: refused by name, nothing asked.
    let refused = run
        .call(
            "lsp",
            json!({"op": "supertypes", "file": "util.py", "line": 1, "symbol": "Greeter"}),
        )
        .await
        .unwrap_err();
    expect!["not available here: python (basedpyright-langserver --stdio) does not offer type hierarchy (no `typeHierarchyProvider` in its capabilities; op `capabilities` lists what it offers); op `implementation` (subtypes) or `hover` (the declaration) may answer instead"].assert_eq(&refused.to_string());
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_calls_types_and_signatures() {
    if test_support::fixtures::require(&["typescript-language-server"]).is_none() {
        return;
    }
    let run = Run::new(project("typescript"));
    let incoming = run
        .lsp(json!({"op": "incoming_calls", "file": "src/util.ts", "line": 15, "symbol": "greet"}))
        .await;
    expect![[r#"
        lsp incoming_calls  `greet` at src/util.ts:15 — 2 calls from 1 caller
        src/app.ts:4    const message = greet("world");  (in main)
        src/app.ts:7    const s = "🙂漢字" + greet("x");  (in main)"#]]
    .assert_eq(&incoming);
    let sig = run
        .lsp(json!({"op": "signature_help", "file": "src/app.ts", "line": 7, "symbol": "greet"}))
        .await;
    expect![[r#"
        lsp signature_help  `greet` at src/app.ts:7
        greet(«name: string»): string
        active parameter: name: string
        Return a friendly greeting for name."#]]
    .assert_eq(&sig);
    let caps = run
        .lsp(json!({"op": "capabilities", "file": "src/app.ts"}))
        .await;
    expect![[r#"
        lsp capabilities  src/app.ts
        typescript — typescript-language-server --stdio:
          navigation: definition, type_definition, implementation, references, hover
          symbols: symbols of a file, symbols by query
          hierarchy: incoming_calls/outgoing_calls; not offered: supertypes/subtypes
          signature_help: signature_help
          editing: lsp_rename, code_actions, formatting
          details: rename checks the position first (prepareRename); code action kinds: source.fixAll.ts, source.removeUnused.ts, source.addMissingImports.ts, source.organizeImports.ts, source.removeUnusedImports.ts, source.sortImports.ts, quickfix, refactor; signature help after ( , <; updates imports when files move (willRenameFiles)
          diagnostics: published (pushed) only; positions in utf-16
        biome (linter): not used here — no biome project root: none of biome.json, biome.jsonc found in src/app.ts or any folder above it up to the workspace root; add one of them (or open a file inside such a project)
        eslint (linter): not used here — no eslint project root: none of eslint.config.js, eslint.config.mjs, eslint.config.cjs, eslint.config.ts, .eslintrc.json, .eslintrc.js, .eslintrc.cjs, .eslintrc.yaml, .eslintrc.yml, .eslintrc found in src/app.ts or any folder above it up to the workspace root; add one of them (or open a file inside such a project)"#]].assert_eq(&caps);
    let subtypes = run
        .call(
            "lsp",
            json!({"op": "subtypes", "file": "src/util.ts", "line": 2, "symbol": "Speaker"}),
        )
        .await;
    expect![[r#"Err(Unavailable("typescript (typescript-language-server --stdio) does not offer type hierarchy (no `typeHierarchyProvider` in its capabilities; op `capabilities` lists what it offers); op `implementation` (subtypes) or `hover` (the declaration) may answer instead"))"#]].assert_eq(&format!("{subtypes:?}"));
    run.finish().await;
}

/// A C++ project of a base class and two derived ones, for clangd.
fn cpp_shapes() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("lsp-cpp-")
        .tempdir()
        .unwrap();
    std::fs::write(dir.path().join("compile_flags.txt"), "-std=c++17\n").unwrap();
    std::fs::write(
        dir.path().join("shapes.cpp"),
        "struct Shape {\n  virtual double area() const = 0;\n};\n\nstruct Square : Shape {\n  double side = 1;\n  double area() const override { return side * side; }\n};\n\nstruct Unit : Square {};\n\ndouble total(const Shape &a, const Shape &b) { return a.area() + b.area(); }\n\nint main() { Unit u; return (int)total(u, u); }\n",
    )
    .unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cpp_type_hierarchy_with_clangd() {
    if test_support::fixtures::require(&["clangd"]).is_none() {
        return;
    }
    let run = Run::new(cpp_shapes());
    let supertypes = run
        .lsp(json!({"op": "supertypes", "file": "shapes.cpp", "line": 10, "symbol": "Unit"}))
        .await;
    expect![[r#"
        lsp supertypes  `Unit` at shapes.cpp:10 — 1 type
        shapes.cpp:5    struct Square : Shape {  (struct Square)"#]]
    .assert_eq(&supertypes);
    let subtypes = run
        .lsp(json!({"op": "subtypes", "file": "shapes.cpp", "line": 1, "symbol": "Shape"}))
        .await;
    expect![[r#"
        lsp subtypes  `Shape` at shapes.cpp:1 — 1 type
        shapes.cpp:5    struct Square : Shape {  (struct Square)"#]]
    .assert_eq(&subtypes);
    let incoming = run
        .lsp(json!({"op": "incoming_calls", "file": "shapes.cpp", "line": 12, "symbol": "total"}))
        .await;
    expect![[r#"
        lsp incoming_calls  `total` at shapes.cpp:12 — 1 call from 1 caller
        shapes.cpp:14    int main() { Unit u; return (int)total(u, u); }  (in main)"#]]
    .assert_eq(&incoming);
    // clangd 14 advertises call hierarchy but answers incoming calls only.
    let outgoing = run
        .call(
            "lsp",
            json!({"op": "outgoing_calls", "file": "shapes.cpp", "line": 14, "symbol": "main"}),
        )
        .await;
    expect![[r#"Err(Unavailable("c (clangd) advertises call hierarchy but does not implement `callHierarchy/outgoingCalls` (method not found); op `references` lists every use instead"))"#]].assert_eq(&format!("{outgoing:?}"));
    let sig = run
        .lsp(json!({"op": "signature_help", "file": "shapes.cpp", "line": 14, "symbol": "u", "occurrence": 3}))
        .await;
    expect![[r#"
        lsp signature_help  `u` at shapes.cpp:14
        total(const Shape &a, «const Shape &b») -> double
        active parameter: const Shape &b"#]]
    .assert_eq(&sig);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_on_a_glob_are_capped_and_allowed_on_the_read_surface() {
    if test_support::fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let run = Run::new(project("python"));
    std::fs::create_dir(run.root.join("gen")).unwrap();
    for i in 0..25 {
        let text = if i == 0 {
            "x: int = \"a\"\n"
        } else {
            "y = 1\n"
        };
        std::fs::write(run.root.join(format!("gen/m{i:02}.py")), text).unwrap();
    }
    std::fs::write(run.root.join("notes.txt"), "hello\n").unwrap();
    let capped = run
        .lsp(json!({"op": "diagnostics", "file": "gen/*.py"}))
        .await;
    expect![[r#"
        lsp diagnostics  gen/*.py — 20 files checked of 25 matching, 1 with errors or warnings
        showing 20 of 25 files — narrow the glob
        gen/m00.py (python + ruff) — 1 error, 0 warnings
        gen/m00.py:1:10 error [reportAssignmentType] Type "Literal['a']" is not assignable to declared type "int" (python)
        no errors or warnings: gen/m01.py, gen/m02.py, gen/m03.py, gen/m04.py, gen/m05.py, gen/m06.py, gen/m07.py, gen/m08.py, gen/m09.py, gen/m10.py, gen/m11.py, gen/m12.py, gen/m13.py, gen/m14.py, gen/m15.py, gen/m16.py, gen/m17.py, gen/m18.py, gen/m19.py"#]].assert_eq(&capped);
    // Not project-wide checking: only language servers answer, so the read
    // surface may ask (while "*" stays refused there).
    let read = run
        .registry
        .call(
            tool_core::Surface::READ_ONLY,
            "lsp",
            json!({"op": "diagnostics", "file": "[abn]*.{py,txt}"}),
            Default::default(),
        )
        .await
        .map(|o| o.joined_text());
    expect![[r#"Ok("lsp diagnostics  [abn]*.{py,txt} — 3 files checked of 3 matching, 1 with errors or warnings\nbroken.py (python + ruff) — 1 error, 0 warnings\nbroken.py:2:12 error [reportReturnType] Type \"Literal['not a number']\" is not assignable to return type \"int\" (python)\nno errors or warnings: app.py\nno language server for: notes.txt (not checked)")"#]].assert_eq(&format!("{read:?}"));
    let none = run
        .call("lsp", json!({"op": "diagnostics", "file": "src/**/*.rs"}))
        .await;
    expect![[r#"Err(BadArgs("no file in the workspace matches `src/**/*.rs` (ignored and hidden files are left out; a pattern without `/` matches a file name at any depth)"))"#]].assert_eq(&format!("{none:?}"));
    run.finish().await;
}

/// A fresh checkout of a package whose packages are not installed: its
/// errors may come from that, and the diagnostics answer says so (the
/// import of a package that is not there is one of them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_diagnostics_say_when_the_packages_are_not_installed() {
    if test_support::fixtures::require(&["typescript-language-server"]).is_none() {
        return;
    }
    let run = Run::new(project("typescript"));
    std::fs::write(
        run.root.join("package.json"),
        r#"{"name": "fixture", "dependencies": {"left-pad": "^1.3.0"}}"#,
    )
    .unwrap();
    std::fs::write(
        run.root.join("src/pad.ts"),
        "import leftPad from \"left-pad\";\n\nexport const padded: string = leftPad(\"x\", 3);\n",
    )
    .unwrap();
    let out = run
        .lsp(json!({"op": "diagnostics", "file": "src/pad.ts"}))
        .await;
    expect![[r#"
        lsp diagnostics  src/pad.ts (typescript) — 1 error, 0 warnings
        note: package.json declares 1 package and none is installed (no node_modules beside it or above it): errors about imports, types and compiler settings (a tsconfig that extends a package) may come from that; install the packages (npm install) to see the project as its authors do
        src/pad.ts:1:21 error [2307] Cannot find module 'left-pad' or its corresponding type declarations."#]]
    .assert_eq(&out);
    // With a node_modules (empty here), nothing is said of the packages.
    std::fs::create_dir_all(run.root.join("node_modules/left-pad")).unwrap();
    let out = run
        .lsp(json!({"op": "diagnostics", "file": "src/pad.ts"}))
        .await;
    expect![[r#"
        lsp diagnostics  src/pad.ts (typescript) — 1 error, 0 warnings
        src/pad.ts:1:21 error [2307] Cannot find module 'left-pad' or its corresponding type declarations."#]]
    .assert_eq(&out);
    run.finish().await;
}
