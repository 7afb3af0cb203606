//! `cargo xtask bench debug`: launch-to-first-stop through the `debug` tool
//! against a bare DAP client driving the same adapter on the same program
//! (for Node.js, a bare inspector client driving `node --inspect-brk`;
//! for Java, the JDK's own `jdb` after the same `javac -g`),
//! in the same run, interleaved so machine noise hits both alike.
//!
//! "First stop" means: the client knows where the program stopped — the
//! `stopped` event and the top frame (`stackTrace`), which is what the tool's
//! answer contains. The bare client does nothing else: no catalog, no
//! checks, no formatting — but the same protocol work: it also sends the
//! adapter's default exception filters, which the tool sends as IDEs do
//! (debugpy's `uncaught` filter alone costs it ~0.5 s of start-up here);
//! and for a Rust test under lldb, the same rust-lldb formatters and the
//! Python environment they need, since Rust values read wrong without
//! them. Target: the tool adds under 50 ms.
//!
//! `DEBUG_BENCH_CASES=cargo,node` runs only the rows whose name holds one
//! of the words (and no conditional-breakpoint table).
//!
//! Then the cost of a conditional breakpoint against none, per adapter,
//! through the tool: a loop whose line runs [`HOT_HITS`] times, launched to
//! its exit without a breakpoint and with a breakpoint whose condition is
//! never true (so the adapter evaluates it on every hit and never stops);
//! the difference over the hits is what one evaluated hit costs. A plain
//! breakpoint costs nothing until it stops: that is the first table.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};
use tool_core::{CallContext, Tool, Workspace};
use tool_debug::{DebugConfig, DebugSupervisor};

const ROUNDS: usize = 9;

/// The smallest client that gets an adapter to the first stop.
struct BareClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    seq: u64,
}

impl BareClient {
    fn start(command: &[String], env: &[(String, String)], cwd: &Path) -> BareClient {
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .current_dir(cwd)
            .env("PATH", test_support::fixtures::path_env())
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("adapter starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        BareClient {
            child,
            stdin,
            stdout,
            seq: 0,
        }
    }

    fn send(&mut self, command: &str, arguments: Value) -> u64 {
        self.seq += 1;
        let body =
            json!({"seq": self.seq, "type": "request", "command": command, "arguments": arguments})
                .to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
        self.seq
    }

    fn read(&mut self) -> Value {
        let mut len = 0usize;
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "adapter closed"
            );
            let line = line.trim();
            if line.is_empty() {
                if len > 0 {
                    break;
                }
                continue;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().unwrap();
                }
            }
        }
        let mut body = vec![0; len];
        self.stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            let m = self.read();
            if pred(&m) {
                return m;
            }
        }
    }

    fn response(&mut self, seq: u64) -> Value {
        self.until(|m| m["type"] == "response" && m["request_seq"] == seq)
    }

    /// Spawn to knowing the top frame of the first stop.
    fn first_stop(
        (command, env): (&[String], &[(String, String)]),
        cwd: &Path,
        launch: Value,
        file: &Path,
        line: u32,
    ) -> Duration {
        let started = Instant::now();
        let mut c = BareClient::start(command, env, cwd);
        let init = c.send("initialize", json!({"adapterID": "bench", "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path"}));
        let caps = c.response(init);
        c.send("launch", launch);
        c.until(|m| m["event"] == "initialized");
        let bp = c.send(
            "setBreakpoints",
            json!({"source": {"path": file}, "breakpoints": [{"line": line}]}),
        );
        c.response(bp);
        // The same protocol work as the tool: the filters the adapter
        // enables by default (debugpy: uncaught exceptions), as IDEs send.
        let defaults: Vec<Value> = caps["body"]["exceptionBreakpointFilters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f["default"] == true)
            .map(|f| f["filter"].clone())
            .collect();
        if caps["body"]["exceptionBreakpointFilters"].is_array() {
            let ex = c.send("setExceptionBreakpoints", json!({"filters": defaults}));
            c.response(ex);
        }
        c.send("configurationDone", json!({}));
        let stop = c.until(|m| m["event"] == "stopped");
        let st = c.send(
            "stackTrace",
            json!({"threadId": stop["body"]["threadId"], "levels": 1}),
        );
        let frames = c.response(st);
        let elapsed = started.elapsed();
        assert_eq!(frames["body"]["stackFrames"][0]["line"], line, "{frames}");
        c.send("disconnect", json!({"terminateDebuggee": true}));
        std::thread::sleep(Duration::from_millis(50));
        // SAFETY: plain syscall on our own child's pid.
        let _ = c.child.kill();
        let _ = c.child.wait();
        elapsed
    }
}

struct Case {
    name: &'static str,
    root: tempfile::TempDir,
    program: &'static str,
    /// The test to run in `program` (launch's `test`), if any.
    test: Option<&'static str>,
    file: PathBuf,
    line: u32,
    bare_command: Vec<String>,
    /// A command the bare client runs first, timed with it: what a user of
    /// the bare debugger must run too (`cargo test --no-run`, which the
    /// tool runs on each launch).
    bare_build: Option<Vec<String>>,
    /// The bare adapter's environment (PATH, when given, replaces the
    /// fixtures' one).
    bare_env: Vec<(String, String)>,
    /// The DAP launch arguments; `Null`: `bare_command` is Node, driven
    /// through its inspector ([`inspector_first_stop`]).
    bare_launch: Value,
}

/// The smallest inspector client that gets Node to the first stop: start
/// `node --inspect-brk`, read its address, then what the tool's backend
/// sends (enable, run, breakpoint by URL, resume) up to the `paused`
/// event, which carries the top frame.
fn inspector_first_stop(node: &str, cwd: &Path, file: &Path, line: u32) -> Duration {
    use tungstenite::stream::MaybeTlsStream;
    use tungstenite::Message;
    let started = Instant::now();
    // Killed when dropped, so a bench that fails leaves no Node paused.
    struct Killed(Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Command::new(node)
        .args(["--inspect-brk=127.0.0.1:0", "--enable-source-maps"])
        .arg(file)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let child = Killed(child);
    let url = loop {
        let mut l = String::new();
        assert!(
            stderr.read_line(&mut l).unwrap() > 0,
            "node said no address"
        );
        if let Some(u) = l.trim().strip_prefix("Debugger listening on ") {
            break u.to_string();
        }
    };
    let (mut ws, _) = tungstenite::connect(url.as_str()).expect("inspector connects");
    if let MaybeTlsStream::Plain(s) = ws.get_ref() {
        // A bench that hangs says so instead.
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.set_nodelay(true).unwrap();
    }
    let mut id = 0;
    let mut send = |ws: &mut tungstenite::WebSocket<_>, method: &str, params: Value| {
        id += 1;
        let text = json!({"id": id, "method": method, "params": params}).to_string();
        ws.send(Message::Text(text.into())).unwrap();
    };
    // The same socket options as the tool's client (no Nagle, quick ACKs),
    // so the comparison is of the work, not of TCP's timers.
    let quick_ack = |ws: &tungstenite::WebSocket<MaybeTlsStream<std::net::TcpStream>>| {
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            use std::os::fd::AsRawFd;
            tool_debug::inspector::cdp::quick_ack(s.as_raw_fd());
        }
    };
    let until = |ws: &mut tungstenite::WebSocket<_>, what: &str, pred: &dyn Fn(&Value) -> bool| loop {
        let message = ws
            .read()
            .unwrap_or_else(|e| panic!("no {what} from the inspector within 20 s: {e}"));
        quick_ack(ws);
        if let Message::Text(t) = message {
            let v: Value = serde_json::from_str(&t).unwrap();
            if pred(&v) {
                return v;
            }
        }
    };
    send(&mut ws, "Runtime.enable", json!({}));
    send(&mut ws, "Debugger.enable", json!({}));
    // By URL before the program runs, as the tool sets them; Node may
    // pause on start first, or not.
    let url = format!("file://{}", file.display());
    send(
        &mut ws,
        "Debugger.setBreakpointByUrl",
        json!({"lineNumber": line - 1, "url": url}),
    );
    send(&mut ws, "Runtime.runIfWaitingForDebugger", json!({}));
    let stop = loop {
        let paused = until(&mut ws, "a stop", &|v| v["method"] == "Debugger.paused");
        if paused["params"]["reason"] != "Break on start" {
            break paused;
        }
        send(&mut ws, "Debugger.resume", json!({}));
    };
    let elapsed = started.elapsed();
    assert_eq!(
        stop["params"]["callFrames"][0]["location"]["lineNumber"],
        line - 1,
        "{stop}"
    );
    drop(child);
    elapsed
}

/// The JDK's own debugger to the first stop: `jdb -classpath CLASSES
/// MAIN` (its launching connector starts the JVM under JDWP, held), then
/// `stop at CLASS:LINE` and `run`, up to its `Breakpoint hit:` line, which
/// names the top frame (`"thread=main", demo.Stats.mean(), line=14`).
fn jdb_first_stop(command: &[String], cwd: &Path, at: &str) -> Duration {
    let started = Instant::now();
    struct Killed(Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("jdb starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let child = Killed(child);
    write!(stdin, "stop at {at}\nrun\n").unwrap();
    stdin.flush().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stdout.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "jdb ended before its breakpoint: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen);
        if let Some(hit) = text.find("Breakpoint hit:") {
            if text[hit..].contains("line=") {
                break;
            }
        }
    }
    let elapsed = started.elapsed();
    drop(child);
    elapsed
}

/// Copy the folder `from` into `to`, recursively.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "a table: one row literal per case, no logic to split"
)]
fn cases() -> Vec<Case> {
    let fixtures = test_support::fixtures::workspace_root().join("tests/fixtures/debug");
    let mut out = Vec::new();
    if let Some(python) = test_support::fixtures::find("python3")
        .filter(|_| test_support::fixtures::find("debugpy").is_some())
    {
        let root = tempfile::tempdir().unwrap();
        for f in ["avg.py", "requirements.txt"] {
            std::fs::copy(fixtures.join("python").join(f), root.path().join(f)).unwrap();
        }
        let file = root.path().canonicalize().unwrap().join("avg.py");
        out.push(Case {
            name: "debugpy  avg.py",
            program: "avg.py",
            test: None,
            line: 6,
            bare_command: vec![python.to_string_lossy().into_owned(), "-m".into(), "debugpy.adapter".into()],
            bare_build: None,
            bare_env: Vec::new(),
            bare_launch: json!({"type": "python", "request": "launch", "program": file, "cwd": root.path(),
                "python": [python], "console": "internalConsole", "justMyCode": true}),
            file,
            root,
        });
    } else {
        println!("skipping debugpy: not installed (cargo xtask fixtures)");
    }
    let lldb = ["lldb-dap", "lldb-vscode-14", "lldb-vscode"]
        .iter()
        .find_map(|n| test_support::fixtures::find(n));
    if let (Some(lldb), Some(gcc)) = (lldb, test_support::fixtures::find("gcc")) {
        let root = tempfile::tempdir().unwrap();
        for f in ["avg.c", "Makefile"] {
            std::fs::copy(fixtures.join("c").join(f), root.path().join(f)).unwrap();
        }
        let ok = Command::new(gcc)
            .args(["-g", "-O0", "-o", "avg", "avg.c"])
            .current_dir(root.path())
            .status()
            .unwrap();
        assert!(ok.success());
        let dir = root.path().canonicalize().unwrap();
        out.push(Case {
            name: "lldb     avg (C)",
            program: "avg",
            test: None,
            line: 5,
            bare_command: vec![lldb.to_string_lossy().into_owned()],
            bare_build: None,
            bare_env: Vec::new(),
            bare_launch: json!({"program": dir.join("avg"), "cwd": dir, "stopOnEntry": false}),
            file: dir.join("avg.c"),
            root,
        });
    } else {
        println!("skipping lldb: lldb-dap/lldb-vscode or gcc not installed");
    }
    if let Some(python) = test_support::fixtures::find("python3")
        .filter(|_| test_support::fixtures::find("debugpy").is_some())
        .filter(|_| test_support::fixtures::find("pytest").is_some())
    {
        let root = tempfile::tempdir().unwrap();
        copy_tree(&fixtures.join("pytests"), root.path());
        let dir = root.path().canonicalize().unwrap();
        out.push(Case {
            name: "pytest   test_mean",
            program: "tests/test_stats.py",
            test: Some("test_mean"),
            line: 6,
            bare_command: vec![
                python.to_string_lossy().into_owned(),
                "-m".into(),
                "debugpy.adapter".into(),
            ],
            bare_build: None,
            bare_env: Vec::new(),
            bare_launch: json!({"type": "python", "request": "launch", "module": "pytest",
                "args": ["tests/test_stats.py::test_mean"], "cwd": dir,
                "python": [python], "console": "internalConsole", "justMyCode": true}),
            file: dir.join("tests/test_stats.py"),
            root,
        });
    } else {
        println!("skipping pytest: debugpy or pytest not installed (cargo xtask fixtures)");
    }
    let lldb_dap = ["lldb-dap", "lldb-vscode-14", "lldb-vscode"]
        .iter()
        .find_map(|n| test_support::fixtures::find(n));
    if let (Some(lldb), Some(cargo)) = (lldb_dap, test_support::fixtures::find("cargo")) {
        // Built first, for both sides: the tool's `cargo test --no-run`
        // then finds it fresh, and the bare client launches the binary
        // cargo names.
        let root = tempfile::tempdir().unwrap();
        copy_tree(&fixtures.join("rusttests"), root.path());
        let dir = root.path().canonicalize().unwrap();
        let built = Command::new(cargo)
            .args([
                "test",
                "--no-run",
                "--test",
                "mean",
                "--message-format=json",
            ])
            .current_dir(&dir)
            .output()
            .unwrap();
        let binary = String::from_utf8_lossy(&built.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v["executable"].as_str().map(PathBuf::from))
            .expect("cargo names the test binary");
        // Like for like: Rust values need rust-lldb's formatters, so the
        // bare client gets what the tool gives lldb in a Cargo project —
        // the same `initCommands` and the environment lldb's embedded
        // Python needs to start at all (Debian's lldb-vscode-14 looks for
        // its `lldb` module in the wrong place; without it, `values` shows
        // as raw fields and Python's ~100 ms start-up is skipped).
        let catalog =
            tool_debug::Catalog::new(Vec::new(), test_support::fixtures::path_env(), Vec::new());
        let lldb_spec = catalog.spec("lldb").expect("lldb is built in").clone();
        let setup = catalog
            .resolve(&lldb_spec, &dir, &dir)
            .expect("lldb resolves for the Cargo project");
        assert!(
            !setup.init_commands.is_empty(),
            "the tool loads Rust formatters here"
        );
        let mut bare_env = setup.env.clone();
        // The bare client's PYTHONPATH is the package where the LLVM
        // install keeps it; the tool's is its own copy with the bytecode
        // compiled, which is part of what is measured.
        if let Some(package) = llvm_python_package(&lldb) {
            for (k, v) in &mut bare_env {
                if k == "PYTHONPATH" {
                    let rest = v.split_once(':').map(|(_, r)| r.to_string());
                    *v = package.to_string_lossy().into_owned();
                    if let Some(rest) = rest {
                        v.push(':');
                        v.push_str(&rest);
                    }
                }
            }
        }
        if let Some(prefix) = &setup.path_prefix {
            let mut path = prefix.clone().into_os_string();
            path.push(":");
            path.push(test_support::fixtures::path_env());
            bare_env.push(("PATH".into(), path.to_string_lossy().into_owned()));
        }
        out.push(Case {
            name: "lldb     cargo test",
            program: "tests/mean.rs",
            test: Some("mean_of_six"),
            line: 7,
            bare_command: vec![lldb.to_string_lossy().into_owned()],
            bare_build: Some(
                [
                    "cargo",
                    "test",
                    "--no-run",
                    "--test",
                    "mean",
                    "--message-format=json",
                ]
                .map(String::from)
                .to_vec(),
            ),
            bare_env,
            bare_launch: json!({"program": binary, "cwd": dir, "stopOnEntry": false,
                "initCommands": setup.init_commands,
                "args": ["mean_of_six", "--exact", "--nocapture", "--test-threads=1"]}),
            file: dir.join("tests/mean.rs"),
            root,
        });
    } else {
        println!("skipping cargo test: lldb-dap/lldb-vscode or cargo not found");
    }
    if let Some(node) = test_support::fixtures::find("node") {
        let root = tempfile::tempdir().unwrap();
        for f in ["avg.js", "package.json"] {
            std::fs::copy(fixtures.join("node").join(f), root.path().join(f)).unwrap();
        }
        let file = root.path().canonicalize().unwrap().join("avg.js");
        out.push(Case {
            name: "node     avg.js",
            program: "avg.js",
            test: None,
            line: 7,
            bare_command: vec![node.to_string_lossy().into_owned()],
            bare_build: None,
            bare_env: Vec::new(),
            bare_launch: Value::Null,
            file,
            root,
        });
    } else {
        println!("skipping node: not installed");
    }
    let jdk = tool_core::jdk::find(11, None, Some(&test_support::fixtures::path_env()));
    if let Ok(jdk) = jdk
        .as_ref()
        .map(|j| (j.bin().join("javac"), j.bin().join("jdb")))
    {
        let root = tempfile::tempdir().unwrap();
        copy_tree(&fixtures.join("java"), root.path());
        let dir = root.path().canonicalize().unwrap();
        let classes = dir.join("bench-classes");
        let text = |p: &Path| p.to_string_lossy().into_owned();
        out.push(Case {
            name: "java     Main.java",
            program: "demo/Main.java",
            test: None,
            line: 14,
            bare_command: vec![
                text(&jdk.1),
                "-classpath".into(),
                text(&classes),
                "demo.Main".into(),
            ],
            // javac -g, as the tool compiles the program on each launch.
            bare_build: Some(vec![
                text(&jdk.0),
                "-g".into(),
                "-d".into(),
                text(&classes),
                "-sourcepath".into(),
                text(&dir),
                "demo/Main.java".into(),
            ]),
            bare_env: Vec::new(),
            bare_launch: json!({"jdb": "demo.Stats:14"}),
            file: dir.join("demo/Stats.java"),
            root,
        });
    } else {
        println!("skipping java: no JDK 11+ with javac");
    }
    out
}

/// The folder of lldb's Python package in the LLVM install of the adapter
/// `binary` (`…/llvm-14/lib/python3.11/dist-packages`).
fn llvm_python_package(binary: &Path) -> Option<PathBuf> {
    let llvm = binary
        .canonicalize()
        .ok()?
        .parent()?
        .parent()?
        .to_path_buf();
    let mut found: Vec<PathBuf> = std::fs::read_dir(llvm.join("lib"))
        .ok()?
        .flatten()
        .map(|e| e.path().join("dist-packages"))
        .filter(|p| p.join("lldb/__init__.py").is_file())
        .collect();
    found.sort();
    found.pop()
}

/// How the bare client starts: the adapter's command line, a build run
/// first (timed with it), the adapter's extra environment.
type BareStart<'a> = (&'a [String], Option<&'a [String]>, &'a [(String, String)]);

/// The bare client's launch to first stop for `case`.
fn bare_first_stop(
    (command, build, env): BareStart<'_>,
    cwd: &Path,
    launch: Value,
    file: &Path,
    line: u32,
) -> Duration {
    if let Some(build) = build {
        let started = Instant::now();
        let built = Command::new(&build[0])
            .args(&build[1..])
            .current_dir(cwd)
            .output()
            .unwrap();
        assert!(built.status.success(), "{build:?} failed");
        return started.elapsed() + bare_first_stop((command, None, env), cwd, launch, file, line);
    }
    if let Some(at) = launch.get("jdb").and_then(Value::as_str) {
        jdb_first_stop(command, cwd, at)
    } else if launch.is_null() {
        inspector_first_stop(&command[0], cwd, file, line)
    } else {
        BareClient::first_stop((command, env), cwd, launch, file, line)
    }
}

async fn through_tool(
    case: &Case,
    supervisor: &std::sync::Arc<DebugSupervisor>,
    round: usize,
) -> Duration {
    // A conversation per case: its breakpoints are not the next case's.
    let conversation = format!(
        "bench-{}-{round}",
        case.name.split_whitespace().next().unwrap_or("")
    );
    let tool = supervisor.tool(Workspace::new(case.root.path()).unwrap(), &conversation);
    let cx = CallContext::new();
    let root = case.root.path().canonicalize().unwrap();
    let rel = case
        .file
        .strip_prefix(&root)
        .unwrap_or(&case.file)
        .to_string_lossy()
        .into_owned();
    tool.call(
        &cx,
        json!({"op": "breakpoints", "file": rel, "lines": [case.line]}),
    )
    .await
    .unwrap();
    let started = Instant::now();
    let out = tool
        .call(&cx, {
            let mut launch = json!({"op": "launch", "program": case.program});
            if let Some(test) = case.test {
                launch["test"] = json!(test);
            }
            launch
        })
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let s = out.structured.clone().unwrap();
    assert_eq!(
        (s["state"].as_str(), s["line"].as_u64()),
        (Some("stopped"), Some(u64::from(case.line))),
        "{}",
        out.joined_text()
    );
    tool.call(&cx, json!({"op": "terminate"})).await.unwrap();
    elapsed
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// How many times the hot loop's line runs.
const HOT_HITS: u32 = 500;
const HOT_ROUNDS: usize = 3;

/// A hot loop under one adapter: the program to launch and its line.
struct HotCase {
    name: &'static str,
    root: tempfile::TempDir,
    program: &'static str,
    file: &'static str,
    line: u32,
}

fn hot_cases() -> Vec<HotCase> {
    let fixtures = test_support::fixtures::workspace_root().join("tests/fixtures/debug");
    let mut out = Vec::new();
    if test_support::fixtures::find("debugpy").is_some() {
        let root = tempfile::tempdir().unwrap();
        for f in ["hot.py", "requirements.txt"] {
            std::fs::copy(fixtures.join("python").join(f), root.path().join(f)).unwrap();
        }
        out.push(HotCase {
            name: "debugpy  hot.py",
            root,
            program: "hot.py",
            file: "hot.py",
            line: 6,
        });
    }
    let lldb = ["lldb-dap", "lldb-vscode-14", "lldb-vscode"]
        .iter()
        .find_map(|n| test_support::fixtures::find(n));
    if let (Some(_), Some(gcc)) = (lldb, test_support::fixtures::find("gcc")) {
        let root = tempfile::tempdir().unwrap();
        for f in ["hot.c", "Makefile"] {
            std::fs::copy(fixtures.join("c").join(f), root.path().join(f)).unwrap();
        }
        let ok = Command::new(gcc)
            .args(["-g", "-O0", "-o", "hot", "hot.c"])
            .current_dir(root.path())
            .status()
            .unwrap();
        assert!(ok.success());
        out.push(HotCase {
            name: "lldb     hot (C)",
            root,
            program: "hot",
            file: "hot.c",
            line: 7,
        });
    }
    if test_support::fixtures::find("node").is_some() {
        let root = tempfile::tempdir().unwrap();
        for f in ["hot.js", "package.json"] {
            std::fs::copy(fixtures.join("node").join(f), root.path().join(f)).unwrap();
        }
        out.push(HotCase {
            name: "node     hot.js",
            root,
            program: "hot.js",
            file: "hot.js",
            line: 6,
        });
    }
    if test_support::fixtures::find("dlv").is_some() && test_support::fixtures::find("go").is_some()
    {
        let root = tempfile::tempdir().unwrap();
        std::fs::copy(fixtures.join("go/go.mod"), root.path().join("go.mod")).unwrap();
        std::fs::create_dir_all(root.path().join("cmd/hot")).unwrap();
        std::fs::copy(
            fixtures.join("go/cmd/hot/main.go"),
            root.path().join("cmd/hot/main.go"),
        )
        .unwrap();
        out.push(HotCase {
            name: "delve    cmd/hot",
            root,
            program: "cmd/hot",
            file: "cmd/hot/main.go",
            line: 9,
        });
    }
    out
}

/// Launch to the program's exit, with `lines` as the breakpoints.
async fn launch_to_exit(
    case: &HotCase,
    supervisor: &std::sync::Arc<DebugSupervisor>,
    conversation: &str,
    lines: Value,
) -> Duration {
    let tool = supervisor.tool(Workspace::new(case.root.path()).unwrap(), conversation);
    let cx = CallContext::new();
    tool.call(
        &cx,
        json!({"op": "breakpoints", "file": case.file, "lines": lines}),
    )
    .await
    .unwrap();
    let started = Instant::now();
    let out = tool
        .call(
            &cx,
            json!({"op": "launch", "program": case.program, "timeout_seconds": 300}),
        )
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let s = out.structured.clone().unwrap();
    assert_eq!(s["state"], "ended", "{}", out.joined_text());
    let _ = tool.call(&cx, json!({"op": "terminate"})).await;
    elapsed
}

async fn conditional_cost(supervisor: &std::sync::Arc<DebugSupervisor>) {
    println!();
    println!("conditional breakpoint: launch to exit of a loop whose line runs {HOT_HITS} times, with no breakpoint and with `i < 0` (never true) on that line; {HOT_ROUNDS} rounds, median");
    println!(
        "{:<18} {:>14} {:>16} {:>16}",
        "adapter/program", "no bp ms", "condition ms", "per hit"
    );
    for case in hot_cases() {
        let never = json!([{"line": case.line, "condition": "i < 0"}]);
        let _ = launch_to_exit(&case, supervisor, "hot-warm", json!([])).await;
        let (mut none, mut cond) = (Vec::new(), Vec::new());
        for round in 0..HOT_ROUNDS {
            let conversation = format!("hot-{round}");
            none.push(launch_to_exit(&case, supervisor, &conversation, json!([])).await);
            cond.push(launch_to_exit(&case, supervisor, &conversation, never.clone()).await);
        }
        let (n, c) = (median(none), median(cond));
        let per_hit = (ms(c) - ms(n)) / f64::from(HOT_HITS);
        println!(
            "{:<18} {:>14.1} {:>16.1} {:>13.3} ms",
            case.name,
            ms(n),
            ms(c),
            per_hit
        );
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let supervisor = DebugSupervisor::new(DebugConfig {
        search_path: Some(test_support::fixtures::path_env()),
        // Go builds offline, with the toolchain that is here.
        env: vec![
            ("GOPROXY".into(), "off".into()),
            ("GOTOOLCHAIN".into(), "local".into()),
        ],
        ..DebugConfig::default()
    });
    println!("debug bench: launch to first stop (stopped event + top frame), {ROUNDS} rounds each after one warm-up, interleaved (alternating who goes first); median and min");
    println!(
        "{:<18} {:<7} {:>12} {:>12} {:>10} {:>8}",
        "adapter/program", "", "bare ms", "tool ms", "overhead", "ratio"
    );
    // `DEBUG_BENCH_CASES=cargo,node`: only the rows whose name holds one
    // of these words, and no conditional-breakpoint table.
    let only: Option<Vec<String>> = std::env::var("DEBUG_BENCH_CASES")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    for case in cases() {
        if let Some(only) = &only {
            if !only.iter().any(|w| case.name.contains(w.as_str())) {
                continue;
            }
        }
        // Warm-up: first starts pay disk caches (and the tool its one-time
        // interpreter probe, cached after).
        let _ = bare_first_stop(
            (
                &case.bare_command,
                case.bare_build.as_deref(),
                &case.bare_env,
            ),
            case.root.path(),
            case.bare_launch.clone(),
            &case.file,
            case.line,
        );
        let _ = through_tool(&case, &supervisor, 0).await;
        let (mut bare, mut tool) = (Vec::new(), Vec::new());
        for round in 1..=ROUNDS {
            let (cmd, build, env, cwd, launch, file, line) = (
                case.bare_command.clone(),
                case.bare_build.clone(),
                case.bare_env.clone(),
                case.root.path().to_path_buf(),
                case.bare_launch.clone(),
                case.file.clone(),
                case.line,
            );
            let bare_run = move || {
                tokio::task::spawn_blocking(move || {
                    bare_first_stop((&cmd, build.as_deref(), &env), &cwd, launch, &file, line)
                })
            };
            // Alternate who goes first, so neither always gets warm caches.
            if round % 2 == 0 {
                bare.push(bare_run().await.unwrap());
                tool.push(through_tool(&case, &supervisor, round).await);
            } else {
                tool.push(through_tool(&case, &supervisor, round).await);
                bare.push(bare_run().await.unwrap());
            }
        }
        let (bmin, tmin) = (*bare.iter().min().unwrap(), *tool.iter().min().unwrap());
        let (b, t) = (median(bare), median(tool));
        for (what, b, t) in [("median", b, t), ("min", bmin, tmin)] {
            println!(
                "{:<18} {:<7} {:>12.1} {:>12.1} {:>+9.1}ms {:>7.3}x",
                case.name,
                what,
                ms(b),
                ms(t),
                ms(t) - ms(b),
                t.as_secs_f64() / b.as_secs_f64()
            );
        }
    }
    if only.is_none() {
        conditional_cost(&supervisor).await;
    }
    supervisor.shutdown_all().await;
}
