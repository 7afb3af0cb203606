//! What the integration tests share: a copy of a fixture project, a run's
//! registry with the lsp binding and a plain `write` tool wrapped by
//! diagnostics on write, and a check that no server outlives the run.

#![allow(dead_code)]

use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;
use tool_core::{
    async_trait, AllowAll, Binding, CallContext, Registry, RunContext, Surface, Tier, Tool,
    ToolError, ToolOutput, ToolSpec, Workspace,
};
use tool_lsp::LspBinding;

/// A copy of `tests/fixtures/lsp/<name>` in a fresh temporary folder
/// (`*.in` files get `@DIR@` replaced by the copy's path).
pub(crate) fn project(name: &str) -> tempfile::TempDir {
    test_support::project::copy_fixture("lsp", name)
}

/// The harness's plain `write` tool, as the MCP host has it: `path` relative
/// to the root, the whole new `content`. (Real writes, through tool-core.)
pub(crate) struct PlainWriteTool {
    pub ws: Workspace,
}

#[derive(Deserialize)]
struct WriteArgs {
    path: String,
    content: String,
}

#[async_trait]
impl Tool for PlainWriteTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "write",
            "Write a file.",
            Tier::Write,
            json!({"type": "object"}),
        )
    }
    async fn call(&self, _cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let a: WriteArgs = tool_core::parse_args(args)?;
        let p = self.ws.resolve(&a.path)?;
        tool_core::fs::write_own_file(&p, a.content.as_bytes())?;
        Ok(ToolOutput::text(format!("wrote {}", a.path)).with_structured(json!({"path": a.path})))
    }
}

/// One run: a workspace, its registry, the binding (for its supervisor).
pub(crate) struct Run {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub registry: Registry,
    pub binding: Arc<LspBinding>,
}

struct SharedBinding(Arc<LspBinding>);
impl Binding for SharedBinding {
    fn resource(&self) -> &'static str {
        self.0.resource()
    }
    fn register(&self, run: &RunContext, r: &Registry) -> Result<(), tool_core::RegistryError> {
        self.0.register(run, r)
    }
    fn after_all(&self, run: &RunContext, r: &Registry) -> Result<(), tool_core::RegistryError> {
        self.0.after_all(run, r)
    }
}

impl Run {
    pub(crate) fn new(dir: tempfile::TempDir) -> Run {
        Self::with_binding(dir, LspBinding::new(Default::default()))
    }

    /// A run on a new folder holding `files` (path, text), with the
    /// diagnostics bound `diagnostics_wait_ms`. The folder's name is not
    /// hidden (tempdir's `.tmpXXXX`): gopls, as the go command, leaves out
    /// packages under a folder whose name begins with a dot.
    pub(crate) fn with_files(files: &[(&str, &str)], diagnostics_wait_ms: u64) -> Run {
        let dir = tempfile::Builder::new().prefix("run").tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let config = tool_lsp::CatalogConfig {
            diagnostics_wait_ms: Some(diagnostics_wait_ms),
            ..Default::default()
        };
        Self::with_binding(dir, LspBinding::new(config))
    }

    pub(crate) fn with_binding(dir: tempfile::TempDir, binding: LspBinding) -> Run {
        let ws = Workspace::new(dir.path()).unwrap();
        let run = RunContext {
            workspace: ws.clone(),
            conversation_id: None,
        };
        let binding = Arc::new(binding.with_path(Some(test_support::fixtures::path_env())));
        let registry = Registry::new();
        registry.set_approver(Some(Arc::new(AllowAll)));
        let b = SharedBinding(binding.clone());
        b.register(&run, &registry).unwrap();
        registry
            .register(Arc::new(PlainWriteTool { ws: ws.clone() }))
            .unwrap();
        b.after_all(&run, &registry).unwrap();
        Run {
            root: ws.root().to_path_buf(),
            dir,
            registry,
            binding,
        }
    }

    pub(crate) async fn call(&self, tool: &str, args: Value) -> Result<String, ToolError> {
        let shown = args.to_string();
        let out = self
            .registry
            .call(Surface::new(Tier::Exec), tool, args, CallContext::new())
            .await
            .map(|o| o.joined_text());
        // LSP_SHOW=1 prints every call and answer (for docs and debugging).
        if std::env::var_os("LSP_SHOW").is_some() {
            match &out {
                Ok(t) => eprintln!(">>> {tool} {shown}\n{t}\n"),
                Err(e) => eprintln!(">>> {tool} {shown}\nERROR {e}\n"),
            }
        }
        out
    }

    /// `lsp` with these args; panics with the error text on failure.
    pub(crate) async fn lsp(&self, args: Value) -> String {
        match self.call("lsp", args.clone()).await {
            Ok(t) => t,
            Err(e) => panic!("lsp {args} failed: {e}"),
        }
    }

    pub(crate) fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }

    pub(crate) async fn pids(&self) -> Vec<u32> {
        self.binding.supervisor().unwrap().pids().await
    }

    /// Stop every server and check that none of their processes survive.
    pub(crate) async fn finish(self) {
        let pids = self.pids().await;
        self.binding.supervisor().unwrap().shutdown().await;
        assert_all_dead(&pids).await;
    }
}

/// Every process of these groups is gone (within a second).
pub(crate) async fn assert_all_dead(pgids: &[u32]) {
    for _ in 0..50 {
        if pgids.iter().all(|&p| {
            !tool_core::process::pid_alive(p) && tool_core::process::group_members(p).is_empty()
        }) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    for &p in pgids {
        assert!(!tool_core::process::pid_alive(p), "server {p} still alive");
        assert!(
            tool_core::process::group_members(p).is_empty(),
            "children of server {p} still alive: {:?}",
            tool_core::process::group_members(p)
        );
    }
}

/// A 1-based line and a symbol on it.
pub(crate) type LineSymbol = (u32, &'static str);
/// A file and a 1-based line in it.
pub(crate) type FileLine = (&'static str, u32);

/// What one language's fixture must answer.
pub(crate) struct Scenario {
    pub fixture: &'static str,
    /// The server binaries (any one).
    pub servers: &'static [&'static str],
    pub app: &'static str,
    pub util: &'static str,
    pub broken: &'static str,
    /// (line, symbol) of a use of the greeting function in `app`.
    pub greet_use: (u32, &'static str),
    /// Where it is defined: file and line.
    pub greet_def: (&'static str, u32),
    /// How many files reference it (and a rename changes).
    pub ref_files: usize,
    /// The line in `app` with emoji and CJK before a call of it.
    pub non_ascii_line: u32,
    /// (line, symbol) in `app` of a variable, and where its type is declared.
    pub typed_var: (u32, &'static str),
    pub type_decl: (&'static str, u32),
    /// (line, symbol) in `util` of an interface or trait, and where it is implemented.
    pub implementation: Option<(LineSymbol, FileLine)>,
    pub hover_says: &'static [&'static str],
    pub doc_symbols: &'static [&'static str],
    pub query: &'static str,
    /// A file the workspace symbol search must find.
    pub query_finds: &'static str,
    pub broken_says: &'static str,
    /// Appended to `app` to introduce one error, and what the error says.
    pub bad_code: &'static str,
    pub bad_says: &'static str,
    /// A comment line, prepended to move code down.
    pub comment: &'static str,
    pub new_name: &'static str,
    /// The position encoding the server negotiates.
    pub encoding: &'static str,
}

/// Whether a table row named `name` runs: every row, or those `ROWS=a,b`
/// names.
pub(crate) fn row_selected(name: &str) -> bool {
    std::env::var("ROWS").map_or(true, |sel| sel.split(',').any(|s| s == name))
}

/// `text` with what changes from run to run masked, for a snapshot: the
/// run's folder (`ROOT`), the fixtures' folder (`FIXTURES`), the fault
/// server's path, pids (`pid PID`), measured times (`T s`; in ms only
/// with a fraction, as bounds are said in whole ms), and spaces at the ends
/// of lines.
pub(crate) fn masked(text: &str, root: &std::path::Path) -> String {
    let mut out = text.to_string();
    for dir in [root.canonicalize().unwrap_or_default(), root.to_path_buf()] {
        if !dir.as_os_str().is_empty() {
            out = out.replace(&dir.display().to_string(), "ROOT");
        }
    }
    out = out
        .replace(
            test_support::fault_server::fault_injecting_lsp(),
            "<fault-injecting-lsp>",
        )
        .replace(
            &test_support::fixtures::dir().display().to_string(),
            "FIXTURES",
        );
    let out = mask_numbers(&out);
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `pid 1234` → `pid PID`; `3 s`, `1.25 s` and `0.5 ms` → `T s`, `T ms`.
fn mask_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(|c: char| c.is_ascii_digit()) {
        let (before, from) = rest.split_at(i);
        let digits = from
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(from.len());
        let mut end = digits;
        if let Some(frac) = from[digits..].strip_prefix('.') {
            let n = frac
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(frac.len());
            if n > 0 {
                end = digits + 1 + n;
            }
        }
        let word_start = !before.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '.');
        let after = &from[end..];
        let unit =
            |u: &str| after.starts_with(u) && !after[u.len()..].starts_with(char::is_alphanumeric);
        let time = word_start && (unit(" s") || (end > digits && unit(" ms")));
        out.push_str(before);
        if before.ends_with("pid ") && word_start {
            out.push_str("PID");
        } else if time {
            out.push('T');
        } else {
            out.push_str(&from[..end]);
        }
        rest = &from[end..];
    }
    out.push_str(rest);
    out
}

/// Every assertion of a scenario, on one server (started once).
pub(crate) async fn run_scenario(s: &Scenario) {
    run_scenario_with(s, LspBinding::new(Default::default())).await;
}

pub(crate) async fn run_scenario_with(s: &Scenario, binding: LspBinding) {
    if test_support::fixtures::require(s.servers).is_none() {
        return;
    }
    let started = std::time::Instant::now();
    let run = Run::with_binding(project(s.fixture), binding);
    let (line, sym) = s.greet_use;
    let def = format!("{}:{}", s.greet_def.0, s.greet_def.1);
    // Every answer, masked, for one snapshot per language at the end.
    let mut said: Vec<String> = Vec::new();

    // definition
    said.push(
        run.lsp(json!({"op": "definition", "file": s.app, "line": line, "symbol": sym}))
            .await,
    );
    // non-ASCII (emoji, CJK) before the symbol on its line
    said.push(
        run.lsp(
            json!({"op": "definition", "file": s.app, "line": s.non_ascii_line, "symbol": sym}),
        )
        .await,
    );
    // references: the declaration and the uses
    said.push(
        run.lsp(json!({"op": "references", "file": s.app, "line": line, "symbol": sym}))
            .await,
    );
    // hover: signature and doc comment as plain text
    said.push(
        run.lsp(json!({"op": "hover", "file": s.app, "line": line, "symbol": sym}))
            .await,
    );
    // type definition
    let (tl, ts) = s.typed_var;
    said.push(
        run.lsp(json!({"op": "type_definition", "file": s.app, "line": tl, "symbol": ts}))
            .await,
    );
    // implementation
    if let Some(((il, is), _)) = s.implementation {
        said.push(
            run.lsp(json!({"op": "implementation", "file": s.util, "line": il, "symbol": is}))
                .await,
        );
    }
    // document and workspace symbols (of the workspace's own files: gopls
    // also lists matches in the toolchain, by absolute path, and pads the
    // column of places to their width)
    said.push(run.lsp(json!({"op": "symbols", "file": s.util})).await);
    let out = run.lsp(json!({"op": "symbols", "query": s.query})).await;
    let ours: Vec<String> = out
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with('/'))
        .map(|l| {
            let (place, what) = l.split_once(' ').unwrap_or((l, ""));
            format!("{place}  {}", what.trim_start())
        })
        .collect();
    said.push(format!(
        "lsp symbols  query `{}` (the workspace's matches)\n{}",
        s.query,
        ours.join("\n")
    ));
    // diagnostics of a file with a known error
    said.push(
        run.lsp(json!({"op": "diagnostics", "file": s.broken}))
            .await,
    );
    // status: the server's line
    let status = run.lsp(json!({"op": "status"})).await;
    let prefix = format!("{} at ", s.fixture_id());
    said.push(
        status
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line in:\n{status}"))
            .to_string(),
    );

    // the write wrapper: a new error reported once, not again after it moves
    let original = run.read(s.app);
    let broken = format!("{original}{}", s.bad_code);
    let moved = format!("{}\n{}\n{broken}", s.comment, s.comment);
    // Restored last, so the rename sees the original program.
    for content in [&broken, &moved, &original] {
        said.push(
            run.call("write", json!({"path": s.app, "content": content}))
                .await
                .unwrap(),
        );
    }

    // rename across files: the lines it changed in both files
    let def_before = run.read(s.greet_def.0);
    said.push(
        run.call(
            "lsp_rename",
            json!({"file": s.app, "line": line, "symbol": sym, "new_name": s.new_name}),
        )
        .await
        .unwrap_or_else(|e| panic!("rename failed: {e}")),
    );
    let mut changed = Vec::new();
    for (file, before) in [(s.app, &original), (s.greet_def.0, &def_before)] {
        let after = run.read(file);
        assert_eq!(after.lines().count(), before.lines().count(), "{after}");
        for (n, (old, new)) in before.lines().zip(after.lines()).enumerate() {
            if old != new {
                changed.push(format!("{file}:{}: {}", n + 1, new.trim_end()));
            }
        }
    }
    said.push(changed.join("\n"));
    // The server saw the rename: the new name resolves (clangd rebuilds the
    // header's preamble in the background, so allow it a moment).
    let at_def = format!("{def} ");
    let mut out = String::new();
    for _ in 0..30 {
        out = run
            .lsp(json!({"op": "definition", "file": s.app, "line": line, "symbol": s.new_name}))
            .await;
        if out.lines().nth(1).is_some_and(|l| l.starts_with(&at_def)) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    said.push(out);

    let said = masked(&said.join("\n\n"), &run.root);
    match s.fixture {
        "python" => expect_test::expect![[r#"
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

            lsp symbols  util.py — 7 symbols
            1: class Greeter
              4: method __init__
                4: variable word
              7: method say
              5: variable word
            11: function greet
              11: variable name

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
        "typescript" => expect_test::expect![[r#"
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
            not renamed — src/util.ts: 1 mention of `greet` (may be other symbols)

            src/app.ts:1: import { Greeter, salute, Speaker } from "./util";
            src/app.ts:4:   const message = salute("world");
            src/app.ts:7:   const s = "🙂漢字" + salute("x");
            src/util.ts:15: export function salute(name: string): string {

            lsp definition  `salute` at src/app.ts:4
            src/util.ts:15    export function salute(name: string): string {  (in salute)"#]],
        "c" => expect_test::expect![[r#"
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
            3: function add  int (int, int)

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
        "rust" => expect_test::expect![[r#"
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
              3: method say  fn(&self) -> String
            7: struct Greeter
              8: field word  String
            11: object impl Speaker for Greeter
              12: method say  fn(&self) -> String
            18: function greet  fn(name: &str) -> String

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
            not renamed — src/util.rs: 1 mention of `greet` (may be other symbols)

            src/main.rs:4: use util::{salute, Greeter, Speaker};
            src/main.rs:7:     let message = salute("world");
            src/main.rs:10:     let s = "🙂漢字".to_string() + &salute("x");
            src/util.rs:18: pub fn salute(name: &str) -> String {

            lsp definition  `salute` at src/main.rs:7
            src/util.rs:18    pub fn salute(name: &str) -> String {  (in salute)"#]],
        "go" => expect_test::expect![[r#"
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
            4: interface Speaker  interface{...}
              5: method Say  func() string
            9: struct Greeter  struct{...}
              10: field Word  string
            14: method (Greeter).Say  func() string
            19: function Greet  func(name string) string

            lsp symbols  query `Greet` (the workspace's matches)
            broken.go:3  function example.com/greeter.count (in example.com/greeter)
            main.go:5  function example.com/greeter.main (in example.com/greeter)
            util.go:4  interface example.com/greeter.Speaker (in example.com/greeter)
            util.go:5  method example.com/greeter.Speaker.Say (in example.com/greeter)
            util.go:9  struct Greeter (in example.com/greeter)
            util.go:10  field Greeter.Word (in example.com/greeter)
            util.go:14  method Greeter.Say (in example.com/greeter)
            util.go:19  function Greet (in example.com/greeter)

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
        other => panic!("no snapshot for the {other} scenario"),
    }
    .assert_eq(&said);

    eprintln!(
        "{} scenario: {:.1} s",
        s.fixture,
        started.elapsed().as_secs_f64()
    );
    run.finish().await;
}

impl Scenario {
    fn fixture_id(&self) -> &'static str {
        match self.fixture {
            "c" => "c",
            f => f,
        }
    }
}
