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
    fn writes(&self, args: &Value) -> Vec<String> {
        tool_core::parse_args::<WriteArgs>(args.clone())
            .map(|a| vec![a.path])
            .unwrap_or_default()
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
    fn link_staging(&self, link: &tool_core::StagingLink) {
        self.0.link_staging(link);
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
        let (dir, binding) = Self::files_and_binding(files, diagnostics_wait_ms);
        Self::with_bindings(dir, binding, false)
    }

    /// As [`Run::with_files`], with tool-astgrep's `ast_edit` and `resolve`
    /// bound too, over one staging link with the lsp binding (as the facade
    /// links them): a staged change's preview and its accept.
    pub(crate) fn with_files_and_staging(files: &[(&str, &str)], diagnostics_wait_ms: u64) -> Run {
        let (dir, binding) = Self::files_and_binding(files, diagnostics_wait_ms);
        Self::with_bindings(dir, binding, true)
    }

    fn files_and_binding(
        files: &[(&str, &str)],
        diagnostics_wait_ms: u64,
    ) -> (tempfile::TempDir, LspBinding) {
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
        (dir, LspBinding::new(config))
    }

    pub(crate) fn with_binding(dir: tempfile::TempDir, binding: LspBinding) -> Run {
        Self::with_bindings(dir, binding, false)
    }

    fn with_bindings(dir: tempfile::TempDir, binding: LspBinding, staging: bool) -> Run {
        let ws = Workspace::new(dir.path()).unwrap();
        let run = RunContext {
            workspace: ws.clone(),
            conversation_id: None,
        };
        let binding = Arc::new(binding.with_path(Some(test_support::fixtures::path_env())));
        let registry = Registry::new();
        registry.set_approver(Some(Arc::new(AllowAll)));
        let b = SharedBinding(binding.clone());
        let astgrep = staging.then(|| {
            tool_astgrep::AstGrepBinding::new().with_journal_dir(dir.path().join(".journal"))
        });
        let mut bindings: Vec<&dyn Binding> = vec![&b];
        bindings.extend(astgrep.iter().map(|a| a as &dyn Binding));
        let link = tool_core::StagingLink::default();
        for b in &bindings {
            b.link_staging(&link);
        }
        for b in &bindings {
            b.register(&run, &registry).unwrap();
        }
        registry
            .register(Arc::new(PlainWriteTool { ws: ws.clone() }))
            .unwrap();
        for b in &bindings {
            b.after_all(&run, &registry).unwrap();
        }
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
    /// The line in `app` with emoji and CJK before a call of it.
    pub non_ascii_line: u32,
    /// (line, symbol) in `app` of a variable.
    pub typed_var: (u32, &'static str),
    /// (line, symbol) in `util` of an interface or trait, and where it is implemented.
    pub implementation: Option<(LineSymbol, FileLine)>,
    pub query: &'static str,
    /// Appended to `app` to introduce one error.
    pub bad_code: &'static str,
    /// A comment line, prepended to move code down.
    pub comment: &'static str,
    pub new_name: &'static str,
    /// Every answer of the scenario, masked, in order.
    pub said: expect_test::Expect,
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
    let said = scenario_answers(s, &run).await;
    let said = masked(&said.join("\n\n"), &run.root);
    s.said.assert_eq(&said);

    eprintln!(
        "{} scenario: {:.1} s",
        s.fixture,
        started.elapsed().as_secs_f64()
    );
    run.finish().await;
}

/// The scenario's calls on `run` (its server started by the first), each
/// answer unmasked, in order: for a language that adds its own calls on the
/// same server before the one snapshot.
pub(crate) async fn scenario_answers(s: &Scenario, run: &Run) -> Vec<String> {
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
    // Rows grouped under their file read back as `path:line  kind name`.
    let mut file = String::new();
    let mut ours: Vec<String> = Vec::new();
    for l in out.lines().skip(1) {
        if let Some(row) = l.strip_prefix("  ") {
            let (line, what) = row.split_once(": ").unwrap_or((row, ""));
            ours.push(format!("{file}:{line}  {what}"));
        } else if l.contains("  ") {
            ours.push(l.to_string());
        } else {
            file = l.to_string();
        }
    }
    ours.retain(|l| !l.starts_with('/'));
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
    said
}

impl Scenario {
    fn fixture_id(&self) -> &'static str {
        match self.fixture {
            "c" => "c",
            f => f,
        }
    }
}
