//! `cargo xtask bench lsp`: the `lsp` tool against a bare client on the same
//! server in the same run, and the write wrapper against the server's own
//! diagnostics delivery.
//!
//! - hover and references on the Python (basedpyright), Rust
//!   (rust-analyzer), TypeScript (typescript-language-server), C (clangd)
//!   and Go (gopls) fixtures: the same request, once through the tool
//!   (re-sync from disk, symbol lookup, idle check, formatting) and once
//!   sent straight to the same server process on its session; alternated,
//!   median of N. Target: overhead under 5%.
//! - the write wrapper: from the start of a `write` call to its result with
//!   the new diagnostics, against the moment the server delivered those
//!   diagnostics. Target: within 50 ms of the server.
//! - the preview of a staged change: from the start of its diagnostics delta
//!   (the staged text sent as an unsaved change, diagnostics awaited, the
//!   server's view put back) to its section, against the moment the server
//!   delivered the staged text's diagnostics.
//! - footprint: the host's own RSS, and its servers', with five servers
//!   started (json, yaml, css, html, bash), and again after they pass the
//!   idle timeout (15 s here) and are stopped. Target: host under 30 MB.
//!   `LSP_BENCH=footprint` runs this part alone.
//! - the first write of a run (Python fixture, basedpyright and ruff), from
//!   a fresh run each time: cold (nothing started), and warmed up (the
//!   binding's warm-up asked at bind time, then a 3 s pause standing for
//!   the model's first turn). Median of 3 each. `LSP_BENCH=cold` runs this
//!   part alone.
//! - cold queries: definition, hover and references of the Python fixture
//!   from a fresh run each time, through the tool, against a bare client
//!   started fresh on the same server (initialize, initialized, didOpen,
//!   then the request, asked again every 50 ms while its answer is empty).
//!   Median of 3 each. Target: within 10% of the bare client.
//!   `LSP_BENCH=coldquery` runs this part alone.
//! - shared servers ([`shared`]): eight concurrent runs of the release
//!   binary on one public checkout, private and shared, against one run:
//!   servers, memory (RSS and PSS), first queries. `LSP_BENCH=shared` runs
//!   this part alone; it needs `LSP_BENCH_PROJECTS`.
//! - Java (jdtls on `tests/fixtures/lsp/java`): a cold first definition
//!   through the tool against a bare client of the same jdtls on the same
//!   JDK (median of 3), and the write wrapper on the warm server.
//!   `LSP_BENCH=java` runs this part alone.

#[path = "bench/shared.rs"]
mod shared;

use lsp_session::client::file_uri;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tool_core::staging::StagedFile;
use tool_core::{
    async_trait, AllowAll, Binding, CallContext, Registry, RunContext, Surface, Tier, Tool,
    ToolError, ToolOutput, ToolSpec, Workspace,
};
use tool_core::{PreviewHook, StagedChange};
use tool_lsp::ServerPreview;
use tool_lsp::{CatalogConfig, LspBinding, RunLedger};

const N: usize = 25;

struct PlainWrite(Workspace);

#[async_trait]
impl Tool for PlainWrite {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "write",
            "Write a file.",
            Tier::Write,
            json!({"type": "object"}),
        )
    }
    // The file it writes, for the write wrapper (without it the wrapper
    // sees no file and adds no `lsp:` lines).
    fn writes(&self, args: &Value) -> Vec<String> {
        args["path"]
            .as_str()
            .map(str::to_string)
            .into_iter()
            .collect()
    }
    async fn call(&self, _cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let p = self.0.resolve(args["path"].as_str().unwrap_or(""))?;
        tool_core::fs::write_own_file(&p, args["content"].as_str().unwrap_or("").as_bytes())?;
        Ok(ToolOutput::text("wrote"))
    }
}

fn copy_fixture(name: &str) -> tempfile::TempDir {
    let src = test_support::fixtures::workspace_root()
        .join("tests/fixtures/lsp")
        .join(name);
    let dir = tempfile::tempdir().unwrap();
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.path().is_dir() {
                copy(&e.path(), &to.join(e.file_name()));
            } else {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    }
    copy(&src, dir.path());
    let template = dir.path().join("compile_commands.json.in");
    if let Ok(text) = std::fs::read_to_string(&template) {
        let root = dir.path().to_string_lossy();
        std::fs::write(
            dir.path().join("compile_commands.json"),
            text.replace("@DIR@", &root),
        )
        .unwrap();
    }
    dir
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Setup {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    registry: Registry,
    binding: Arc<LspBinding>,
}

fn setup(fixture: &str, config: CatalogConfig) -> Setup {
    setup_dir(copy_fixture(fixture), config)
}

fn setup_dir(dir: tempfile::TempDir, config: CatalogConfig) -> Setup {
    let ws = Workspace::new(dir.path()).unwrap();
    let run = RunContext {
        workspace: ws.clone(),
        conversation_id: None,
    };
    let binding =
        Arc::new(LspBinding::new(config).with_path(Some(test_support::fixtures::path_env())));
    let registry = Registry::new();
    registry.set_approver(Some(Arc::new(AllowAll)));
    binding.register(&run, &registry).unwrap();
    registry.register(Arc::new(PlainWrite(ws.clone()))).unwrap();
    binding.after_all(&run, &registry).unwrap();
    Setup {
        root: ws.root().to_path_buf(),
        _dir: dir,
        registry,
        binding,
    }
}

async fn call(s: &Setup, tool: &str, args: Value) -> String {
    s.registry
        .call(
            Surface::new(Tier::Exec),
            tool,
            args.clone(),
            CallContext::new(),
        )
        .await
        .unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
        .joined_text()
}

/// (tool median, bare median) for one op.
async fn query(
    s: &Setup,
    op: &str,
    method: &str,
    file: &str,
    line: u32,
    symbol: &str,
) -> (Duration, Duration) {
    let args = json!({"op": op, "file": file, "line": line, "symbol": symbol});
    call(s, "lsp", args.clone()).await; // warm: starts and indexes
    let client = s.binding.supervisor().unwrap().clients().await.remove(0);
    let path = s.root.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let line_text = text.lines().nth(line as usize - 1).unwrap();
    let byte = line_text.find(symbol).unwrap();
    let mut params = json!({
        "textDocument": {"uri": file_uri(&path)},
        "position": {"line": line - 1, "character": client.encoding.column_of(line_text, byte)},
    });
    if op == "references" {
        params["context"] = json!({"includeDeclaration": true});
    }
    let (mut tool, mut bare) = (Vec::new(), Vec::new());
    // Alternate which goes first, so neither always meets a warm cache.
    for i in 0..N {
        for tool_first in [i % 2 == 0, i % 2 != 0] {
            let t = Instant::now();
            if tool_first {
                call(s, "lsp", args.clone()).await;
                tool.push(t.elapsed());
            } else {
                client
                    .request(method, params.clone(), Duration::from_secs(20))
                    .await
                    .unwrap();
                bare.push(t.elapsed());
            }
        }
    }
    (median(tool), median(bare))
}

/// (write → result, write → server delivered) medians.
async fn wrapper(s: &Setup, file: &str, bad: &str) -> (Duration, Duration) {
    let path = s.root.join(file);
    let original = std::fs::read_to_string(&path).unwrap();
    let uri = file_uri(&path);
    let (mut total, mut server) = (Vec::new(), Vec::new());
    for i in 0..N + 2 {
        let content = if i % 2 == 0 {
            format!("{original}{bad}")
        } else {
            original.clone()
        };
        let t = Instant::now();
        let out = call(s, "write", json!({"path": file, "content": content})).await;
        let done = Instant::now();
        assert!(out.contains("lsp: "), "{out}");
        let client = s.binding.supervisor().unwrap().clients().await.remove(0);
        let arrived = client
            .diagnostics_arrived(&uri)
            .expect("diagnostics arrived");
        if i >= 2 {
            total.push(done - t);
            server.push(arrived.saturating_duration_since(t));
        }
    }
    // The file as it was, for the preview that follows.
    call(s, "write", json!({"path": file, "content": original})).await;
    (median(total), median(server))
}

/// (preview start → delta section, preview start → server delivered) medians.
async fn preview(s: &Setup, file: &str, bad: &str) -> (Duration, Duration) {
    let path = s.root.join(file);
    let original = std::fs::read_to_string(&path).unwrap();
    let uri = file_uri(&path);
    let sup = s.binding.supervisor().unwrap().clone();
    let hook = ServerPreview::new(sup.clone(), Arc::new(RunLedger::default()));
    let change = StagedChange {
        tool: "bench".into(),
        files: vec![StagedFile::whole(
            path.clone(),
            file.into(),
            Some(original.clone()),
            Some(format!("{original}{bad}")),
            1,
        )],
        moves: Vec::new(),
        diff_context: Default::default(),
    };
    let (mut total, mut server) = (Vec::new(), Vec::new());
    for i in 0..N + 2 {
        let t = Instant::now();
        let section = hook
            .diagnostics_delta(&change)
            .await
            .map(|s| s.text)
            .unwrap_or_default();
        let done = Instant::now();
        assert!(
            section.starts_with("after this change: 1 new "),
            "preview {i}: {section}"
        );
        let client = sup.clients().await.remove(0);
        let arrived = client
            .diagnostics_arrived(&uri)
            .expect("diagnostics arrived");
        if i >= 2 {
            total.push(done - t);
            server.push(arrived.saturating_duration_since(t));
        }
    }
    (median(total), median(server))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // `LSP_BENCH=PART` runs one part alone.
    match std::env::var("LSP_BENCH").as_deref() {
        Ok("footprint") => return footprint().await,
        Ok("cold") => return first_write().await,
        Ok("coldquery") => return cold_queries().await,
        Ok("java") => return java_rows().await,
        Ok("fallout") => return fallout().await,
        Ok("shared") => return tokio::task::spawn_blocking(shared::run).await.unwrap(),
        _ => {}
    }
    println!(
        "lsp bench: median of {N}, tool and bare client alternated on the same server process"
    );
    println!(
        "{:<8} {:<11} {:>9} {:>9} {:>7}",
        "fixture", "op", "tool ms", "bare ms", "ratio"
    );
    let mut rows = Vec::new();

    let rust_config: CatalogConfig = serde_json::from_value(json!({"servers": [{
        "id": "rust", "extensions": {"rs": "rust"}, "commands": [["rust-analyzer"]],
        "root_markers": ["Cargo.toml"], "root_rule": "cargo_workspace", "reports_progress": true,
        "initialization_options": {"checkOnSave": false}, "settings": {"rust-analyzer": {"checkOnSave": false}}
    }]}))
    .unwrap();
    let cases: Vec<(&str, CatalogConfig, &str, u32, &str, &str)> = vec![
        (
            "python",
            CatalogConfig::default(),
            "app.py",
            5,
            "greet",
            "\n\ndef bad() -> int:\n    return \"oops\"\n",
        ),
        (
            "rust",
            rust_config,
            "src/main.rs",
            7,
            "greet",
            "\n#[allow(dead_code)]\nfn bad() -> i32 {\n    \"oops\"\n}\n",
        ),
        (
            "typescript",
            CatalogConfig::default(),
            "src/app.ts",
            4,
            "greet",
            "\nexport function bad(): number {\n  return \"oops\";\n}\n",
        ),
        (
            "c",
            CatalogConfig::default(),
            "main.c",
            5,
            "add",
            "\nint bad(void) { return undefined_name; }\n",
        ),
        (
            "go",
            CatalogConfig::default(),
            "main.go",
            6,
            "Greet",
            "\nfunc bad() int {\n\treturn \"oops\"\n}\n",
        ),
    ];
    let only = std::env::var("LSP_BENCH_FIXTURES").ok();
    for (fixture, config, file, line, symbol, bad) in cases {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|f| f == fixture))
        {
            continue;
        }
        let server = match fixture {
            "python" => "basedpyright-langserver",
            "rust" => "rust-analyzer",
            "typescript" => "typescript-language-server",
            "c" => "clangd",
            _ => "gopls",
        };
        if test_support::fixtures::find(server).is_none() {
            println!("{fixture}: skipped, {server} not installed (cargo xtask fixtures)");
            continue;
        }
        let s = setup(fixture, config);
        for (op, method) in [
            ("hover", "textDocument/hover"),
            ("references", "textDocument/references"),
        ] {
            let (tool, bare) = query(&s, op, method, file, line, symbol).await;
            let ratio = tool.as_secs_f64() / bare.as_secs_f64();
            println!(
                "{:<8} {:<11} {:>9.2} {:>9.2} {:>7.3}",
                fixture,
                op,
                ms(tool),
                ms(bare),
                ratio
            );
            rows.push((fixture, op, ratio, ms(tool) - ms(bare)));
        }
        let (total, server) = wrapper(&s, file, bad).await;
        println!(
            "{:<8} {:<11} write→reported {:.1} ms, write→server delivered {:.1} ms: wrapper latency {:+.1} ms",
            fixture,
            "write",
            ms(total),
            ms(server),
            ms(total) - ms(server)
        );
        let (total, server) = preview(&s, file, bad).await;
        println!(
            "{:<8} {:<11} preview delta {:.1} ms (staged text sent, diagnostics awaited, view restored), server delivered the staged text's diagnostics at {:.1} ms",
            fixture,
            "preview",
            ms(total),
            ms(server),
        );
        s.binding.supervisor().unwrap().shutdown().await;
    }
    for (fixture, op, ratio, extra) in rows {
        let verdict = if ratio < 1.05 {
            "within the 5% target"
        } else {
            "over the 5% target"
        };
        println!(
            "{fixture} {op}: overhead {:+.1}% ({extra:+.2} ms) {verdict}",
            (ratio - 1.0) * 100.0
        );
    }
    first_write().await;
    cold_queries().await;
    java_rows().await;
    footprint().await;
    tokio::task::spawn_blocking(shared::run).await.unwrap();
}

/// The Java rows (jdtls on the Maven fixture
/// `tests/fixtures/lsp/java`): a cold first definition through the tool
/// from a fresh run, against a bare client that starts the same jdtls on
/// the same JDK (`-data` a fresh folder) and asks until the answer is not
/// empty (the Maven import runs first either way), medians of 3; then
/// write → diagnostics on a warm server, as the other fixtures' write rows.
async fn java_rows() {
    let Some(program) = test_support::fixtures::find("jdtls") else {
        println!("java: skipped, jdtls not installed (cargo xtask fixtures)");
        return;
    };
    let path_env = test_support::fixtures::path_env();
    let Ok(jdk) = tool_core::jdk::find(21, None, Some(&path_env)) else {
        println!("java: skipped, no JDK 21+ for jdtls");
        return;
    };
    let mut bare_path = vec![jdk.bin()];
    bare_path.extend(std::env::split_paths(&path_env));
    let (file, line, symbol) = ("src/main/java/m/App.java", 9, "greet");
    let (mut tool, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let s = setup("java", CatalogConfig::default());
        let t = Instant::now();
        let out = call(
            &s,
            "lsp",
            json!({"op": "definition", "file": file, "line": line, "symbol": symbol}),
        )
        .await;
        tool.push(t.elapsed());
        assert!(out.contains("Greeter.java:18"), "{out}");
        s.binding.supervisor().unwrap().shutdown().await;

        let dir = copy_fixture("java");
        let data = tempfile::tempdir().unwrap();
        let server = BareServer {
            args: vec!["-data".into(), data.path().display().to_string()],
            language: "java",
            path_env: std::env::join_paths(&bare_path).unwrap(),
            env: vec![("JAVA_HOME".into(), jdk.home.clone().into_os_string())],
            patience: Duration::from_mins(3),
        };
        let t = Instant::now();
        let answer = bare_cold_on(
            &program,
            &server,
            dir.path(),
            "textDocument/definition",
            file,
            line,
            symbol,
        )
        .await;
        bare.push(t.elapsed());
        assert!(answer.to_string().contains("Greeter.java"), "{answer}");
    }
    let (tool, bare) = (median(tool), median(bare));
    println!(
        "cold definition (java, jdtls on JDK {}, fresh process each): tool {:.0} ms, bare client {:.0} ms, ratio {:.3}",
        jdk.version,
        ms(tool),
        ms(bare),
        tool.as_secs_f64() / bare.as_secs_f64()
    );
    // Write → diagnostics on the warm server (its import done by a first
    // definition), against the moment jdtls delivered them.
    let s = setup("java", CatalogConfig::default());
    call(
        &s,
        "lsp",
        json!({"op": "definition", "file": file, "line": line, "symbol": symbol}),
    )
    .await;
    let bad = "\nclass Bad {\n    int bad() {\n        return \"oops\";\n    }\n}\n";
    let (total, server) = wrapper(&s, file, bad).await;
    println!(
        "write (java, median of {N}): write→reported {:.1} ms, write→server delivered {:.1} ms: wrapper latency {:+.1} ms",
        ms(total),
        ms(server),
        ms(total) - ms(server)
    );
    s.binding.supervisor().unwrap().shutdown().await;
}

/// Cold definition, hover and references on the Python fixture: a fresh
/// run through the tool against a fresh bare client (medians of 3).
async fn cold_queries() {
    let Some(program) = test_support::fixtures::find("basedpyright-langserver") else {
        println!("cold queries: skipped, basedpyright not installed (cargo xtask fixtures)");
        return;
    };
    let (file, line, symbol) = ("app.py", 5, "greet");
    for (op, method) in [
        ("definition", "textDocument/definition"),
        ("hover", "textDocument/hover"),
        ("references", "textDocument/references"),
    ] {
        let (mut tool, mut bare) = (Vec::new(), Vec::new());
        // For references: how many locations each side answered with.
        let (mut tool_found, mut bare_found) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let s = setup("python", CatalogConfig::default());
            let t = Instant::now();
            let out = call(
                &s,
                "lsp",
                json!({"op": op, "file": file, "line": line, "symbol": symbol}),
            )
            .await;
            tool.push(t.elapsed());
            assert!(!out.contains("no result"), "{out}");
            tool_found.push(out.lines().skip(1).filter(|l| l.contains(".py:")).count());
            s.binding.supervisor().unwrap().shutdown().await;

            let dir = copy_fixture("python");
            let t = Instant::now();
            let answer = bare_cold(&program, dir.path(), method, file, line, symbol).await;
            bare.push(t.elapsed());
            bare_found.push(answer.as_array().map_or(0, Vec::len));
        }
        let (tool, bare) = (median(tool), median(bare));
        let found = if op == "references" {
            format!(
                "; locations answered: tool {tool_found:?}, bare client {bare_found:?} (a cold server answers from the files it has read so far)"
            )
        } else {
            String::new()
        };
        println!(
            "cold {op} (python, fresh process each): tool {:.0} ms, bare client {:.0} ms, ratio {:.3}{found}",
            ms(tool),
            ms(bare),
            tool.as_secs_f64() / bare.as_secs_f64()
        );
    }
}

/// A bare client's cold query: start the server, initialize, open the
/// file, ask until the answer is not empty.
async fn bare_cold(
    program: &Path,
    root: &Path,
    method: &str,
    file: &str,
    line: u32,
    symbol: &str,
) -> Value {
    let server = BareServer {
        args: vec!["--stdio".into()],
        language: "python",
        path_env: test_support::fixtures::path_env(),
        env: Vec::new(),
        patience: Duration::from_secs(30),
    };
    bare_cold_on(program, &server, root, method, file, line, symbol).await
}

/// How a bare client starts a server: its arguments, the file's language
/// id, its PATH and environment, how long it asks while answers are empty.
struct BareServer {
    args: Vec<String>,
    language: &'static str,
    path_env: std::ffi::OsString,
    env: Vec<(String, std::ffi::OsString)>,
    patience: Duration,
}

/// [`bare_cold`] for any server.
async fn bare_cold_on(
    program: &Path,
    server: &BareServer,
    root: &Path,
    method: &str,
    file: &str,
    line: u32,
    symbol: &str,
) -> Value {
    let ws = Workspace::new(root).unwrap();
    let client = lsp_session::client::LspClient::start(lsp_session::client::StartSpec {
        name: "bare".into(),
        program: program.to_path_buf(),
        args: server.args.clone(),
        root: root.to_path_buf(),
        workspace: ws,
        path_env: Some(server.path_env.clone()),
        initialization_options: None,
        settings: None,
        init_timeout: server.patience,
        started_message: None,
        settle: Duration::ZERO,
        own_dir_env: Vec::new(),
        env: server.env.clone(),
        ready_probe: None,
        change_diagnostics_delay: std::time::Duration::ZERO,
        diagnosis_progress: None,
        broker: None,
    })
    .await
    .unwrap();
    let path = root.join(file);
    let doc = client.sync_file(&path, server.language).await.unwrap();
    let line_text = doc.text.lines().nth(line as usize - 1).unwrap();
    let byte = line_text.find(symbol).unwrap();
    let mut params = json!({
        "textDocument": {"uri": file_uri(&path)},
        "position": {"line": line - 1, "character": client.encoding.column_of(line_text, byte)},
    });
    if method == "textDocument/references" {
        params["context"] = json!({"includeDeclaration": true});
    }
    let deadline = Instant::now() + server.patience;
    let answer = loop {
        let answer = client
            .request(method, params.clone(), Duration::from_secs(20))
            .await
            .unwrap();
        let empty = answer.is_null() || answer.as_array().is_some_and(std::vec::Vec::is_empty);
        if !empty || Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    client.stop().await;
    answer
}

/// One language's project for the fallout bench: the function's file, its
/// text and its text with a second parameter, a caller's file (`{i}` is
/// its number), the server, and the project's own checker.
struct FalloutCase {
    name: &'static str,
    server: &'static str,
    files: &'static [(&'static str, &'static str)],
    function: (&'static str, &'static str, &'static str),
    caller: (&'static str, &'static str),
    checker: &'static [&'static str],
}

/// How many files call the changed function.
const CALLERS: usize = 20;

const FALLOUT_CASES: &[FalloutCase] = &[
    FalloutCase {
        name: "rust",
        server: "rust-analyzer",
        files: &[(
            "Cargo.toml",
            "[package]\nname = \"calls\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )],
        function: (
            "src/lib.rs",
            "pub fn f(x: i32) -> i32 {\n    x\n}\n",
            "pub fn f(x: i32, y: i32) -> i32 {\n    x + y\n}\n",
        ),
        caller: (
            "tests/c{i}.rs",
            "#[test]\nfn t() {\n    assert_eq!(calls::f({i}), {i});\n}\n",
        ),
        checker: &["cargo", "check", "--tests", "--quiet"],
    },
    FalloutCase {
        name: "go",
        server: "gopls",
        files: &[("go.mod", "module calls\n\ngo 1.21\n")],
        function: (
            "f.go",
            "package calls\n\nfunc F(x int) int {\n\treturn x\n}\n",
            "package calls\n\nfunc F(x, y int) int {\n\treturn x + y\n}\n",
        ),
        caller: (
            "c{i}.go",
            "package calls\n\nfunc C{i}() int {\n\treturn F({i})\n}\n",
        ),
        checker: &["go", "vet", "./..."],
    },
    FalloutCase {
        name: "python",
        server: "basedpyright-langserver",
        files: &[(
            "pyproject.toml",
            "[project]\nname = \"calls\"\nversion = \"0\"\n",
        )],
        function: (
            "f.py",
            "def f(x: int) -> int:\n    return x\n",
            "def f(x: int, y: int) -> int:\n    return x + y\n",
        ),
        caller: (
            "c{i}.py",
            "from f import f\n\n\ndef c{i}() -> int:\n    return f({i})\n",
        ),
        checker: &["basedpyright"],
    },
    FalloutCase {
        name: "typescript",
        server: "typescript-language-server",
        files: &[
            ("package.json", "{\"name\": \"calls\", \"private\": true}\n"),
            (
                "tsconfig.json",
                "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}}\n",
            ),
        ],
        function: (
            "f.ts",
            "export function f(x: number): number {\n  return x;\n}\n",
            "export function f(x: number, y: number): number {\n  return x + y;\n}\n",
        ),
        caller: (
            "c{i}.ts",
            "import { f } from \"./f\";\n\nexport const c{i} = (): number => f({i});\n",
        ),
        checker: &["tsc", "--noEmit", "-p", "."],
    },
];

/// The project's checker on `root`, timed (its exit status is not asked:
/// it fails on the broken tree). Cargo builds into a target folder of its
/// own.
fn checker_time(checker: &[&str], root: &Path) -> Option<Duration> {
    let program = test_support::fixtures::find(checker[0])?;
    let t = Instant::now();
    let mut command = std::process::Command::new(program);
    command
        .args(&checker[1..])
        .current_dir(root)
        .env("PATH", test_support::fixtures::path_env())
        // Not the server's target/: its cargo check's results would be
        // replayed from there.
        .env("CARGO_TARGET_DIR", root.join("checker-target"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    command.output().ok()?;
    Some(t.elapsed())
}

/// A signature change in a public project: its checkout's folder name
/// under `LSP_BENCH_PROJECTS` (a clone of the repository), the file, the
/// declaration line before and after, the server and the checker.
struct RealFalloutCase {
    name: &'static str,
    checkout: &'static str,
    server: &'static str,
    file: &'static str,
    declaration: (&'static str, &'static str),
    checker: &'static [&'static str],
}

const REAL_FALLOUT_CASES: &[RealFalloutCase] = &[
    RealFalloutCase {
        name: "httpx",
        checkout: "encode+httpx",
        server: "basedpyright-langserver",
        file: "httpx/_utils.py",
        declaration: (
            "def primitive_value_to_str(value: PrimitiveData) -> str:",
            "def primitive_value_to_str(value: PrimitiveData, strict: bool) -> str:",
        ),
        checker: &["basedpyright"],
    },
    RealFalloutCase {
        name: "mux",
        checkout: "gorilla+mux",
        server: "gopls",
        file: "mux.go",
        declaration: (
            "func Vars(r *http.Request) map[string]string {",
            "func Vars(r *http.Request, strict bool) map[string]string {",
        ),
        checker: &["go", "vet", "./..."],
    },
    RealFalloutCase {
        name: "log",
        checkout: "rust-lang+log",
        server: "rust-analyzer",
        file: "src/lib.rs",
        declaration: (
            "pub fn set_max_level(level: LevelFilter) {",
            "pub fn set_max_level(level: LevelFilter, strict: bool) {",
        ),
        checker: &["cargo", "check", "--tests", "--quiet"],
    },
];

/// A copy of `from` in a new folder (not hidden: gopls leaves out packages
/// under a dot folder), without `.git` and `target`.
fn copy_checkout(from: &Path) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let name = e.file_name();
            if name == ".git" || name == "target" {
                continue;
            }
            let (src, dst) = (e.path(), to.join(&name));
            if e.file_type().unwrap().is_dir() {
                copy(&src, &dst);
            } else if e.file_type().unwrap().is_file() {
                std::fs::copy(&src, &dst).unwrap();
            }
        }
    }
    let dir = tempfile::Builder::new()
        .prefix("fallout")
        .tempdir()
        .unwrap();
    copy(from, dir.path());
    dir
}

/// One project to measure: its folder, the file, its text and its text
/// with the signature changed, the checker.
struct FalloutProject<'a> {
    name: &'a str,
    dir: tempfile::TempDir,
    file: &'a str,
    same: String,
    changed: String,
    checker: &'a [&'a str],
}

/// The fallout bench's projects: the synthetic ones with [`CALLERS`]
/// callers, then the public ones whose checkouts `LSP_BENCH_PROJECTS`
/// holds; `LSP_BENCH_FIXTURES` picks by name.
fn fallout_projects() -> Vec<FalloutProject<'static>> {
    let only = std::env::var("LSP_BENCH_FIXTURES").ok();
    let picked = |name: &str, server: &str, checker: &str| {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|f| f == name))
        {
            return false;
        }
        let installed = test_support::fixtures::find(server).is_some()
            && test_support::fixtures::find(checker).is_some();
        if !installed {
            println!("{name:<11} skipped: {server} or {checker} not installed");
        }
        installed
    };
    let mut out = Vec::new();
    for case in FALLOUT_CASES {
        if !picked(case.name, case.server, case.checker[0]) {
            continue;
        }
        let dir = tempfile::Builder::new()
            .prefix("fallout")
            .tempdir()
            .unwrap();
        let (file, same, changed) = case.function;
        let mut files: Vec<(String, String)> = case
            .files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        files.push((file.to_string(), same.to_string()));
        for i in 0..CALLERS {
            let i = i.to_string();
            files.push((
                case.caller.0.replace("{i}", &i),
                case.caller.1.replace("{i}", &i),
            ));
        }
        for (path, text) in &files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        out.push(FalloutProject {
            name: case.name,
            dir,
            file,
            same: same.to_string(),
            changed: changed.to_string(),
            checker: case.checker,
        });
    }
    let Some(projects) = std::env::var_os("LSP_BENCH_PROJECTS") else {
        return out;
    };
    for case in REAL_FALLOUT_CASES {
        let from = Path::new(&projects).join(case.checkout);
        if !from.is_dir() || !picked(case.name, case.server, case.checker[0]) {
            continue;
        }
        let dir = copy_checkout(&from);
        let same = std::fs::read_to_string(dir.path().join(case.file)).unwrap();
        let (before, after) = case.declaration;
        assert!(same.contains(before), "{}: {before}", case.name);
        out.push(FalloutProject {
            name: case.name,
            dir,
            file: case.file,
            changed: same.replacen(before, after, 1),
            same,
            checker: case.checker,
        });
    }
    out
}

/// A write that breaks the callers of a function, warm: from the call to
/// its answer (the callers' new problems included) against the project's
/// checker on the same tree (itself warm: run once before). Median of 3;
/// each round writes the signature back first. `LSP_BENCH_PROJECTS`: a
/// folder with clones of encode/httpx, gorilla/mux and rust-lang/log
/// (named `owner+name`), measured after the synthetic projects.
async fn fallout() {
    println!(
        "fallout: a signature change breaking its callers ({CALLERS} in the synthetic projects), warm, median of 3: the write's answer against the project's checker"
    );
    println!(
        "{:<11} {:>9} {:>11} {:>7}  checker",
        "project", "write ms", "checker ms", "ratio"
    );
    for project in fallout_projects() {
        let FalloutProject {
            name,
            dir,
            file,
            same,
            changed,
            checker,
        } = project;
        let config = CatalogConfig {
            diagnostics_wait_ms: Some(60_000),
            ..CatalogConfig::default()
        };
        let s = setup_dir(dir, config);
        // Warm: the server checked the project, the checker ran once.
        call(&s, "write", json!({"path": file, "content": same})).await;
        call(&s, "write", json!({"path": file, "content": same})).await;
        checker_time(checker, &s.root);
        let (mut writes, mut checks) = (Vec::new(), Vec::new());
        let mut reported = String::new();
        for _ in 0..3 {
            let t = Instant::now();
            let out = call(&s, "write", json!({"path": file, "content": changed})).await;
            writes.push(t.elapsed());
            // "lsp: 20 new problems in 20 other files after this write:"
            reported = out
                .lines()
                .find_map(|l| {
                    let said = l
                        .strip_prefix("lsp: ")?
                        .strip_suffix(" after this write:")?;
                    (said.ends_with(" other file") || said.ends_with(" other files"))
                        .then(|| said.to_string())
                })
                .unwrap_or_else(|| "nothing in other files".to_string());
            if std::env::var_os("LSP_BENCH_SHOW").is_some() {
                println!("{out}");
            }
            if let Some(d) = checker_time(checker, &s.root) {
                checks.push(d);
            }
            call(&s, "write", json!({"path": file, "content": same})).await;
        }
        let (w, c) = (median(writes), median(checks));
        println!(
            "{:<11} {:>9.0} {:>11.0} {:>7.2}  {} (reported: {reported})",
            name,
            ms(w),
            ms(c),
            w.as_secs_f64() / c.as_secs_f64(),
            checker.join(" ")
        );
        s.binding.supervisor().unwrap().shutdown().await;
    }
}

/// The first write of a fresh run, cold and warmed up (medians of 3).
async fn first_write() {
    if test_support::fixtures::find("basedpyright-langserver").is_none() {
        println!("first write: skipped, basedpyright not installed (cargo xtask fixtures)");
        return;
    }
    let bad = "\n\ndef bad() -> int:\n    return \"oops\"\n";
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        for warmed in [false, true] {
            let s = setup("python", CatalogConfig::default());
            if warmed {
                let run = RunContext {
                    workspace: Workspace::new(&s.root).unwrap(),
                    conversation_id: None,
                };
                Binding::warm_up(&*s.binding, &run);
                tokio::time::sleep(Duration::from_secs(3)).await;
            }
            let original = std::fs::read_to_string(s.root.join("app.py")).unwrap();
            let t = Instant::now();
            let out = call(
                &s,
                "write",
                json!({"path": "app.py", "content": format!("{original}{bad}")}),
            )
            .await;
            let took = t.elapsed();
            assert!(out.contains("1 new problem"), "{out}");
            if warmed { &mut warm } else { &mut cold }.push(took);
            s.binding.supervisor().unwrap().shutdown().await;
        }
    }
    println!(
        "first write of a run (python, its new diagnostics included): cold {:.0} ms, warmed up (3 s after binding) {:.0} ms",
        ms(median(cold)),
        ms(median(warm))
    );
}

/// RSS of every process in the groups `pgids` lead (a server and its
/// children), in KiB.
fn servers_rss_kib(pgids: &[u32]) -> u64 {
    pgids
        .iter()
        .map(|&g| tool_core::process::group_rss_kib(g))
        .sum()
}

async fn footprint() {
    let servers = [
        ("json", "data.json", "{\n  \"a\": 1\n}\n"),
        ("yaml", "c.yaml", "a: 1\n"),
        ("css", "s.css", ".a {\n  color: red;\n}\n"),
        ("html", "i.html", "<html>\n<body></body>\n</html>\n"),
        ("bash", "r.sh", "#!/bin/bash\necho hi\n"),
    ];
    if let Some((_, missing)) = [
        ("json", "vscode-json-language-server"),
        ("yaml", "yaml-language-server"),
        ("bash", "bash-language-server"),
    ]
    .iter()
    .find(|(_, b)| test_support::fixtures::find(b).is_none())
    {
        println!("footprint: skipped, {missing} not installed (cargo xtask fixtures)");
        return;
    }
    let config = CatalogConfig {
        idle_timeout_ms: Some(15_000),
        ..CatalogConfig::default()
    };
    let s = setup("python", config);
    let host_before = tool_core::process::rss_kib(std::process::id()).unwrap_or(0);
    for (_, file, text) in servers {
        std::fs::write(s.root.join(file), text).unwrap();
        call(&s, "lsp", json!({"op": "symbols", "file": file})).await;
    }
    let sup = s.binding.supervisor().unwrap().clone();
    let pids = sup.pids().await;
    let (host_started, servers_started) = (
        tool_core::process::rss_kib(std::process::id()).unwrap_or(0),
        servers_rss_kib(&pids),
    );
    let deadline = Instant::now() + Duration::from_mins(1);
    while !sup.pids().await.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (host_idle, servers_idle) = (
        tool_core::process::rss_kib(std::process::id()).unwrap_or(0),
        servers_rss_kib(&pids),
    );
    let mb = |k: u64| k as f64 / 1024.0;
    println!(
        "footprint: host RSS {:.1} MB before, {:.1} MB with {} servers started (servers {:.1} MB), \
         {:.1} MB after the idle timeout stopped them (servers {:.1} MB){}",
        mb(host_before),
        mb(host_started),
        pids.len(),
        mb(servers_started),
        mb(host_idle),
        mb(servers_idle),
        if host_idle < 30 * 1024 {
            ": host within the 30 MB target"
        } else {
            ": host over the 30 MB target"
        }
    );
    sup.shutdown().await;
}
