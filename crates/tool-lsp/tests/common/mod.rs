//! What the integration tests share: a copy of a fixture project, a run's
//! registry with the lsp binding and a plain `write` tool wrapped by
//! diagnostics on write, and a check that no server outlives the run.

#![allow(dead_code)]

use serde::Deserialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tool_core::{
    async_trait, AllowAll, Binding, CallContext, Registry, RunContext, Surface, Tier, Tool,
    ToolError, ToolOutput, ToolSpec, Workspace,
};
use tool_lsp::LspBinding;

/// A copy of `tests/fixtures/lsp/<name>` in a fresh temporary folder
/// (`*.in` files get `@DIR@` replaced by the copy's path).
pub fn project(name: &str) -> tempfile::TempDir {
    let src = tool_core::fixtures::workspace_root()
        .join("tests/fixtures/lsp")
        .join(name);
    let dir = tempfile::Builder::new()
        .prefix(&format!("lsp-{name}-"))
        .tempdir()
        .unwrap();
    copy_dir(&src, dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            copy_dir(&p, &to.join(&name));
        } else if let Some(stem) = name.strip_suffix(".in") {
            let text = std::fs::read_to_string(&p).unwrap();
            let dir = to.canonicalize().unwrap();
            std::fs::write(to.join(stem), text.replace("@DIR@", dir.to_str().unwrap())).unwrap();
        } else {
            std::fs::copy(&p, to.join(&name)).unwrap();
        }
    }
}

/// The harness's plain `write` tool, as the MCP host has it: `path` relative
/// to the root, the whole new `content`. (Real writes, through tool-core.)
pub struct PlainWriteTool {
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
        tool_core::files::atomic_write(&p, a.content.as_bytes())?;
        Ok(ToolOutput::text(format!("wrote {}", a.path)).with_structured(json!({"path": a.path})))
    }
}

/// One run: a workspace, its registry, the binding (for its supervisor).
pub struct Run {
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
    pub fn new(dir: tempfile::TempDir) -> Run {
        Self::with_binding(dir, LspBinding::new(Default::default()))
    }

    pub fn with_binding(dir: tempfile::TempDir, binding: LspBinding) -> Run {
        let ws = Workspace::new(dir.path()).unwrap();
        let run = RunContext {
            workspace: ws.clone(),
            conversation_id: None,
        };
        let binding = Arc::new(binding.with_path(Some(tool_core::fixtures::path_env())));
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

    pub async fn call(&self, tool: &str, args: Value) -> Result<String, ToolError> {
        self.registry
            .call(Surface::new(Tier::Exec), tool, args, CallContext::new())
            .await
            .map(|o| o.joined_text())
    }

    /// `lsp` with these args; panics with the error text on failure.
    pub async fn lsp(&self, args: Value) -> String {
        match self.call("lsp", args.clone()).await {
            Ok(t) => t,
            Err(e) => panic!("lsp {args} failed: {e}"),
        }
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }

    pub async fn pids(&self) -> Vec<u32> {
        self.binding.supervisor().unwrap().pids().await
    }

    /// Stop every server and check that none of their processes survive.
    pub async fn finish(self) {
        let pids = self.pids().await;
        self.binding.supervisor().unwrap().shutdown().await;
        assert_all_dead(&pids).await;
    }
}

/// Every process of these groups is gone (within a second).
pub async fn assert_all_dead(pgids: &[u32]) {
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

/// What one language's fixture must answer.
pub struct Scenario {
    pub fixture: &'static str,
    /// The server binaries (any one).
    pub servers: &'static [&'static str],
    pub app: &'static str,
    pub util: &'static str,
    pub broken: &'static str,
    /// (line, symbol) of a use of `greet` in `app`, and the line of its declaration in `util`.
    pub greet_use: (u32, &'static str),
    pub greet_decl_line: u32,
    /// The line in `app` with emoji and CJK before a `greet` call.
    pub non_ascii_line: u32,
    /// (line, symbol) in `app` of a variable whose type is `Greeter`/`Speaker`, and where that type is declared in `util`.
    pub typed_var: (u32, &'static str),
    pub type_decl_line: u32,
    /// (line, symbol) in `util` of the interface/trait whose implementation is `Greeter`, and the implementing line.
    pub interface: Option<((u32, &'static str), u32)>,
    pub hover_says: &'static [&'static str],
    pub doc_symbols: &'static [&'static str],
    pub query: &'static str,
    pub broken_says: &'static str,
    /// Appended to `app` to introduce one error, and what the error says.
    pub bad_code: &'static str,
    pub bad_says: &'static str,
    /// A comment line, prepended to move code down.
    pub comment: &'static str,
    pub new_name: &'static str,
}

pub fn has(text: &str, needle: &str) {
    assert!(text.contains(needle), "expected {needle:?} in:\n{text}");
}

/// Every assertion of a scenario, on one server (started once).
pub async fn run_scenario(s: &Scenario) {
    if tool_core::fixtures::require(s.servers).is_none() {
        return;
    }
    let started = std::time::Instant::now();
    let run = Run::new(project(s.fixture));
    let (line, sym) = s.greet_use;

    // definition
    let out = run
        .lsp(json!({"op": "definition", "file": s.app, "line": line, "symbol": sym}))
        .await;
    has(&out, &format!("{}:{}", s.util, s.greet_decl_line));

    // non-ASCII before the symbol
    let out = run
        .lsp(json!({"op": "definition", "file": s.app, "line": s.non_ascii_line, "symbol": "greet", "occurrence": null}))
        .await;
    has(&out, &format!("{}:{}", s.util, s.greet_decl_line));

    // references: the declaration and the uses in both files
    let out = run
        .lsp(json!({"op": "references", "file": s.app, "line": line, "symbol": sym}))
        .await;
    has(&out, "in 2 files");
    has(&out, &format!("{}:{}", s.util, s.greet_decl_line));
    has(&out, &format!("{}:{}", s.app, line));
    has(&out, &format!("{}:{}", s.app, s.non_ascii_line));

    // hover: signature and doc comment as plain text
    let out = run
        .lsp(json!({"op": "hover", "file": s.app, "line": line, "symbol": sym}))
        .await;
    for w in s.hover_says {
        has(&out, w);
    }
    assert!(!out.contains("```"), "hover is plain text:\n{out}");

    // type definition
    let (tl, ts) = s.typed_var;
    let out = run
        .lsp(json!({"op": "type_definition", "file": s.app, "line": tl, "symbol": ts}))
        .await;
    has(&out, &format!("{}:{}", s.util, s.type_decl_line));

    // implementation
    if let Some(((il, is), impl_line)) = s.interface {
        let out = run
            .lsp(json!({"op": "implementation", "file": s.util, "line": il, "symbol": is}))
            .await;
        has(&out, &format!("{}:{}", s.util, impl_line));
    }

    // document and workspace symbols
    let out = run.lsp(json!({"op": "symbols", "file": s.util})).await;
    for w in s.doc_symbols {
        has(&out, w);
    }
    let out = run.lsp(json!({"op": "symbols", "query": s.query})).await;
    has(&out, &format!("{}:", s.util));

    // diagnostics of a file with a known error
    let out = run
        .lsp(json!({"op": "diagnostics", "file": s.broken}))
        .await;
    has(&out, s.broken_says);
    has(&out, &format!("{}:", s.broken));

    // status
    let out = run.lsp(json!({"op": "status"})).await;
    has(&out, "running");

    // the write wrapper: a new error reported once, not again after it moves
    let original = run.read(s.app);
    let broken = format!("{original}{}", s.bad_code);
    let out = run
        .call("write", json!({"path": s.app, "content": broken}))
        .await
        .unwrap();
    has(
        &out,
        &format!("lsp: 1 new problem in {} after this write", s.app),
    );
    has(&out, s.bad_says);
    let moved = format!("{}\n{}\n{broken}", s.comment, s.comment);
    let out = run
        .call("write", json!({"path": s.app, "content": moved}))
        .await
        .unwrap();
    has(
        &out,
        &format!("lsp: no new errors or warnings in {}", s.app),
    );
    // Restore, so the rename sees the original program.
    let out = run
        .call("write", json!({"path": s.app, "content": original}))
        .await
        .unwrap();
    has(&out, "no new errors or warnings");

    // rename across two files
    let out = run
        .call(
            "lsp_rename",
            json!({"file": s.app, "line": line, "symbol": sym, "new_name": s.new_name}),
        )
        .await
        .unwrap_or_else(|e| panic!("rename failed: {e}"));
    has(&out, "in 2 files");
    assert!(run.read(s.app).contains(s.new_name), "{}", run.read(s.app));
    assert!(
        run.read(s.util).contains(s.new_name),
        "{}",
        run.read(s.util)
    );
    assert!(
        !run.read(s.util).contains(&format!("{sym}(")),
        "{}",
        run.read(s.util)
    );
    // The server saw the rename: the new name resolves.
    let out = run
        .lsp(json!({"op": "definition", "file": s.app, "line": line, "symbol": s.new_name}))
        .await;
    has(&out, &format!("{}:{}", s.util, s.greet_decl_line));

    eprintln!(
        "{} scenario: {:.1} s",
        s.fixture,
        started.elapsed().as_secs_f64()
    );
    run.finish().await;
}
