//! One scenario table, a row per adapter (debugpy on Python, lldb on C,
//! lldb on a Rust crate built by cargo, delve on Go), driven by one test body: what a program that crashes, a
//! program that spins and an attach to a closed port look like under each.
//! Every row names its own programs and its expected answers; the body is
//! the same for all.

mod common;

use common::*;
use expect_test::{expect, Expect};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// Starts a debug server with the spinning program on a port.
type DebugServer = fn(&Path, u16) -> std::process::Child;

/// Starts the spinning program on its own, outside any debugger.
type Spinner = fn(&Path) -> std::process::Child;

/// Which process a debug server debugs.
#[derive(Clone, Copy)]
enum Debuggee {
    /// The server process itself (`python -m debugpy --listen … spin.py`).
    Server,
    /// Its child running this executable (`lldb-server gdbserver`, a
    /// headless `dlv`, which has a telemetry child besides).
    Child(&'static str),
}

/// A debuggee started with its debug server listening on a port.
struct Listening {
    start: DebugServer,
    debuggee: Debuggee,
    /// `terminate`'s answer after attaching to it.
    said: Expect,
}

/// A program with a loop, for the breakpoint kinds.
struct Looping {
    file: &'static str,
    line: u32,
    program: &'static str,
}

/// One adapter's programs and what the model must read for them.
struct Row {
    adapter: &'static str,
    /// Tools the row needs (each inner list: any one of them).
    needs: &'static [&'static [&'static str]],
    fixture: &'static str,
    /// Run in the workspace copy before anything (compiling C).
    build: Option<fn(&Path)>,
    /// A program that crashes (uncaught exception, segfault, panic),
    /// launched without naming the adapter.
    crash: &'static str,
    /// The same crash as a compiled program the adapter must be routed to
    /// by its content (a Go executable by its build info), built by `build`.
    crash_built: Option<&'static str>,
    /// The first lines of the crash's stop.
    crash_stop: Expect,
    /// A source file launched without naming the adapter, and the refusal.
    source: Option<(&'static str, Expect)>,
    /// A program that spins forever after printing "spinning".
    spin: &'static str,
    /// The answer of `pause` on it (the stop line).
    pause_stop: Expect,
    /// A loop: the file, the line inside it, the program that runs it, and
    /// the loop variable's name (it counts 1, 2, 3, …).
    looping: Looping,
    /// The locals line of the conditional stop (addresses masked).
    condition_locals: Expect,
    /// A program that greets the name it reads from stdin.
    greet: &'static str,
    /// How its launch without `stdin` settles (the first line).
    greet_without_stdin: Option<Expect>,
    /// The adapter's refusal of `stdin`, where it cannot give it.
    stdin_refused: Option<Expect>,
    /// The adapter's refusal of a logpoint, where it lacks them.
    logpoint_refused: Option<Expect>,
    /// `attach` to a port where nothing listens.
    closed_port: Expect,
    /// The spinning program under a debug server listening on a port.
    listening: Option<Listening>,
    /// Starts the spinning program alone, for `attach` by `pid`.
    spinner: Option<Spinner>,
    /// A Go test function: the `_test.go` file, a line in the test, the
    /// test's name.
    go_test: Option<(&'static str, u32, &'static str)>,
    /// The looping program's function, as a function breakpoint names it.
    function: &'static str,
    /// The launch refused for an exception filter the adapter lacks.
    unknown_filter: Expect,
    /// Refusals of the ops the adapter lacks: modules, disassemble,
    /// read_memory (`None`: it has them).
    modules_refused: Option<Expect>,
    disassemble_refused: Option<Expect>,
    read_memory_refused: Option<Expect>,
}

/// The fixtures' Python (the one with debugpy).
fn python() -> std::path::PathBuf {
    tool_core::fixtures::require(&["python3"]).expect("python3")
}

/// `python -m debugpy --listen 127.0.0.1:PORT --wait-for-client spin.py`.
fn debugpy_server(dir: &Path, port: u16) -> std::process::Child {
    std::process::Command::new(python())
        .args(["-m", "debugpy", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--wait-for-client", "spin.py"])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// `lldb-server gdbserver 127.0.0.1:PORT ./spin`.
fn lldb_server(dir: &Path, port: u16) -> std::process::Child {
    gdbserver(dir, port, "./spin")
}

/// `lldb-server gdbserver 127.0.0.1:PORT target/debug/spin`.
fn lldb_server_rust(dir: &Path, port: u16) -> std::process::Child {
    gdbserver(dir, port, "target/debug/spin")
}

fn gdbserver(dir: &Path, port: u16, program: &str) -> std::process::Child {
    let server =
        tool_core::fixtures::require(&["lldb-server", "lldb-server-14"]).expect("lldb-server");
    std::process::Command::new(server)
        .args(["gdbserver", &format!("127.0.0.1:{port}"), program])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// `dlv --headless --listen 127.0.0.1:PORT exec ./spin-bin`.
fn headless_dlv(dir: &Path, port: u16) -> std::process::Child {
    let dlv = tool_core::fixtures::require(&["dlv"]).expect("dlv");
    std::process::Command::new(dlv)
        .args(["--headless", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--accept-multiclient", "exec", "./spin-bin"])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn spawn_quiet(dir: &Path, program: &Path, args: &[&str]) -> std::process::Child {
    std::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn python_spinner(dir: &Path) -> std::process::Child {
    spawn_quiet(dir, &python(), &["spin.py"])
}

fn c_spinner(dir: &Path) -> std::process::Child {
    spawn_quiet(dir, &dir.join("spin"), &[])
}

fn rust_spinner(dir: &Path) -> std::process::Child {
    spawn_quiet(dir, &dir.join("target/debug/spin"), &[])
}

fn go_spinner(dir: &Path) -> std::process::Child {
    spawn_quiet(dir, &dir.join("spin-bin"), &[])
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| {
                    let after = s.rsplit_once(')')?.1.to_string();
                    after.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(pid)
        })
        .collect()
}

fn gcc(dir: &Path) {
    for name in ["crash", "spin", "avg", "greet"] {
        let built = std::process::Command::new("gcc")
            .args(["-g", "-O0", "-o", name, &format!("{name}.c")])
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(built.success(), "gcc {name}.c");
    }
}

fn cargo_build(dir: &Path) {
    let built = std::process::Command::new("cargo")
        .args(["build", "--offline", "--quiet", "--bins"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(built.success(), "cargo build");
}

fn go_build(dir: &Path) {
    for name in ["crash", "spin"] {
        let built = std::process::Command::new("go")
            .args(["build", "-gcflags=all=-N -l", "-o"])
            .arg(format!("{name}-bin"))
            .arg(format!("./cmd/{name}"))
            .env("GOPROXY", "off")
            .env("GOTOOLCHAIN", "local")
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(built.success(), "go build ./cmd/{name}");
    }
}

fn debugpy_row() -> Row {
    Row {
        adapter: "debugpy",
        needs: &[],
        fixture: "python",
        build: None,
        crash: "crash.py",
        crash_built: None,
        source: None,
        crash_stop: expect![[r#"
            stopped: uncaught ValueError: invalid literal for int() with base 10: 'forty-two' — thread N in parse at crash.py:5
                5 |     return int(text)"#]],
        spin: "spin.py",
        looping: Looping {
            file: "avg.py",
            line: 8,
            program: "avg.py",
        },
        logpoint_refused: None,
        condition_locals: expect!["locals: i = 3, total = 23, xs = [4, 8, 15, 16, 23, 42]"],
        greet: "greet.py",
        greet_without_stdin: Some(expect!["still running after 3 s: waiting for input on stdin; launch again with `stdin` (the text it reads, then end of file), or call pause to see where it reads"]),
        stdin_refused: None,
        pause_stop: expect!["paused — thread N"],
        listening: Some(Listening {
            start: debugpy_server,
            debuggee: Debuggee::Server,
            said: expect![[r#"
            debug terminate  port PORT
            disconnected; the debuggee (pid DEBUGGEE) was started outside this run and is still running; the adapter is gone"#]],
        }),
        spinner: Some(python_spinner),
        go_test: None,
        function: "mean",
        unknown_filter: expect!["refused: cannot launch with the exception breakpoints set: the debugpy adapter has no exception filter `no-such-filter`; its filters are: raised, uncaught, userUnhandled"],
        modules_refused: None,
        disassemble_refused: Some(expect!["refused: the debugpy adapter does not support disassembly (its `initialize` answer lacks `supportsDisassembleRequest`)"]),
        read_memory_refused: Some(expect!["refused: the debugpy adapter does not support reading memory (its `initialize` answer lacks `supportsReadMemoryRequest`)"]),
        closed_port: expect!["failed: cannot connect to 127.0.0.1:PORT: Connection refused (os error 111); nothing listens there: start the debuggee's debug server first (e.g. `python -m debugpy --listen 127.0.0.1:PORT --wait-for-client prog.py`, `dlv --headless --listen 127.0.0.1:PORT debug`)"],
    }
}

fn lldb_row() -> Row {
    Row {
        adapter: "lldb",
        needs: &[&["lldb-dap", "lldb-vscode-14", "lldb-vscode"], &["gcc"]],
        fixture: "c",
        build: Some(gcc),
        crash: "crash",
        crash_built: None,
        source: Some(("crash.c", expect!["bad arguments: `crash.c` is not a compiled program; lldb runs executables: build it with debug info (e.g. `gcc -g -O0 -o prog crash.c` or `cargo build`) and launch the executable"])),
        crash_stop: expect![[r#"
            stopped: signal SIGSEGV: invalid address (fault address: 0x0) — thread N in store at crash.c:5
                5 |     *p = v;"#]],
        spin: "spin",
        looping: Looping {
            file: "avg.c",
            line: 7,
            program: "avg",
        },
        condition_locals: expect!["locals: xs = 0xADDR, n = 6, total = 23, i = 3"],
        greet: "greet",
        greet_without_stdin: Some(expect!["still running after 3 s: waiting for input on stdin; launch again with `stdin` (the text it reads, then end of file), or call pause to see where it reads"]),
        stdin_refused: None,
        logpoint_refused: Some(expect!["refused: cannot launch with the breakpoints of avg.c: the lldb adapter does not support logpoints (it would stop on the line instead of logging) (its `initialize` answer lacks `supportsLogPoints`); remove them, or use a plain breakpoint"]),
        pause_stop: expect!["paused — thread N"],
        listening: Some(Listening {
            start: lldb_server,
            debuggee: Debuggee::Child("spin"),
            said: expect![[r#"
            debug terminate  port PORT
            disconnected; the debuggee (pid DEBUGGEE) was started outside this run and is still running; the adapter is gone"#]],
        }),
        spinner: Some(c_spinner),
        go_test: None,
        function: "mean",
        unknown_filter: expect!["refused: cannot launch with the exception breakpoints set: the lldb adapter has no exception filter `no-such-filter`; its filters are: cpp_catch, cpp_throw, objc_catch, objc_throw, swift_catch, swift_throw"],
        modules_refused: None,
        disassemble_refused: Some(expect!["refused: the lldb adapter does not support disassembly (its `initialize` answer lacks `supportsDisassembleRequest`)"]),
        read_memory_refused: Some(expect!["refused: the lldb adapter does not support reading memory (its `initialize` answer lacks `supportsReadMemoryRequest`)"]),
        closed_port: expect!["failed: cannot connect to 127.0.0.1:PORT: Connection refused (os error 111); nothing listens there: start the debuggee's debug server first (e.g. `python -m debugpy --listen 127.0.0.1:PORT --wait-for-client prog.py`, `dlv --headless --listen 127.0.0.1:PORT debug`)"],
    }
}

fn lldb_rust_row() -> Row {
    Row {
        adapter: "lldb",
        needs: &[&["lldb-dap", "lldb-vscode-14", "lldb-vscode"], &["cargo"]],
        fixture: "rust",
        build: Some(cargo_build),
        crash: "target/debug/crash",
        crash_built: None,
        source: Some(("src/bin/crash.rs", expect!["bad arguments: `src/bin/crash.rs` is not a compiled program; lldb runs executables: build it with debug info (e.g. `gcc -g -O0 -o prog src/bin/crash.rs` or `cargo build`) and launch the executable"])),
        crash_stop: expect![[r#"
            stopped: panic: index out of bounds: the len is 3 but the index is 5 (at src/bin/crash.rs:3:5) — thread N in crash::pick at src/bin/crash.rs:3 (below 7 frames outside the workspace; stack shows all)
                3 |     xs[i]"#]],
        spin: "target/debug/spin",
        looping: Looping {
            file: "src/bin/loop.rs",
            line: 5,
            program: "target/debug/loop",
        },
        condition_locals: expect!["locals: xs = size=6, total = 23, iter = core::ops::range::Range<unsigned long> @ 0xADDR, i = 3"],
        greet: "target/debug/greet",
        greet_without_stdin: Some(expect!["still running after 3 s: waiting for input on stdin; launch again with `stdin` (the text it reads, then end of file), or call pause to see where it reads"]),
        stdin_refused: None,
        logpoint_refused: Some(expect!["refused: cannot launch with the breakpoints of src/bin/loop.rs: the lldb adapter does not support logpoints (it would stop on the line instead of logging) (its `initialize` answer lacks `supportsLogPoints`); remove them, or use a plain breakpoint"]),
        pause_stop: expect!["paused — thread N"],
        listening: Some(Listening {
            start: lldb_server_rust,
            debuggee: Debuggee::Child("spin"),
            said: expect![[r#"
                debug terminate  port PORT
                disconnected; the debuggee (pid DEBUGGEE) was started outside this run and is still running; the adapter is gone"#]],
        }),
        spinner: Some(rust_spinner),
        go_test: None,
        function: "mean",
        unknown_filter: expect!["refused: cannot launch with the exception breakpoints set: the lldb adapter has no exception filter `no-such-filter`; its filters are: cpp_catch, cpp_throw, objc_catch, objc_throw, swift_catch, swift_throw"],
        modules_refused: None,
        disassemble_refused: Some(expect!["refused: the lldb adapter does not support disassembly (its `initialize` answer lacks `supportsDisassembleRequest`)"]),
        read_memory_refused: Some(expect!["refused: the lldb adapter does not support reading memory (its `initialize` answer lacks `supportsReadMemoryRequest`)"]),
        closed_port: expect!["failed: cannot connect to 127.0.0.1:PORT: Connection refused (os error 111); nothing listens there: start the debuggee's debug server first (e.g. `python -m debugpy --listen 127.0.0.1:PORT --wait-for-client prog.py`, `dlv --headless --listen 127.0.0.1:PORT debug`)"],
    }
}

fn delve_row() -> Row {
    Row {
        adapter: "delve",
        needs: &[&["dlv"], &["go"]],
        fixture: "go",
        build: Some(go_build),
        crash: "cmd/crash",
        crash_built: Some("crash-bin"),
        source: None,
        crash_stop: expect![[r#"
            stopped: panic: assignment to entry in nil map — thread N in main.store at cmd/crash/main.go:7 (below 3 frames outside the workspace; stack shows all)
                7 | 	m[k] = 42"#]],
        spin: "cmd/spin",
        looping: Looping {
            file: "main.go",
            line: 9,
            program: ".",
        },
        logpoint_refused: None,
        condition_locals: expect!["locals: xs = []int len: 6, cap: 6, [4,8,15,16,23,42], ~r0 = 0, total = 23, i = 3"],
        greet: "cmd/greet",
        greet_without_stdin: Some(expect!["the program exited with code 0"]),
        stdin_refused: None,
        pause_stop: expect!["paused — thread N"],
        listening: Some(Listening {
            start: headless_dlv,
            debuggee: Debuggee::Child("spin-bin"),
            // A headless dlv names no process to its DAP client: the
            // debuggee is the process the server on the port traces.
            said: expect![[r#"
            debug terminate  port PORT
            disconnected; the debuggee (pid DEBUGGEE) was started outside this run and is still running; the adapter is gone"#]],
        }),
        spinner: Some(go_spinner),
        go_test: Some(("main_test.go", 8, "TestMean")),
        function: "main.mean",
        unknown_filter: expect!["refused: cannot launch with the exception breakpoints set: the delve adapter has no exception filter `no-such-filter`; its filters are: unrecovered-panic, runtime-fatal-throw"],
        modules_refused: Some(expect!["refused: the delve adapter does not support listing modules (its `initialize` answer lacks `supportsModulesRequest`)"]),
        disassemble_refused: None,
        read_memory_refused: None,
        closed_port: expect!["failed: cannot connect to 127.0.0.1:PORT: Connection refused (os error 111); nothing listens there: start the debuggee's debug server first (e.g. `python -m debugpy --listen 127.0.0.1:PORT --wait-for-client prog.py`, `dlv --headless --listen 127.0.0.1:PORT debug`)"],
    }
}

/// Machine-dependent numbers out of a stop line: lldb's thread ids are the
/// OS's, a closed port is whatever the OS handed out.
fn stable(text: &str, port: Option<u16>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(" thread ") {
        let (head, tail) = rest.split_at(at + " thread ".len());
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            out.push('N');
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    match port {
        Some(p) => out.replace(&p.to_string(), "PORT"),
        None => out,
    }
}

/// The lines of an answer after its `debug …` head and its notes, up to `n`.
fn after_head(text: &str, n: usize) -> String {
    text.lines()
        .skip(1)
        .filter(|l| !l.starts_with("note: ") && !l.starts_with("(the previous"))
        .take(n)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Wait (bounded) until the program has printed `what`.
async fn wait_for_output(b: &Bench, what: &str) -> String {
    let mut seen = String::new();
    for _ in 0..200 {
        let (text, _) = b.call(json!({"op": "output"})).await;
        seen.push_str(&text);
        if seen.contains(what) {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the program never printed {what:?}; output calls said:\n{seen}");
}

/// A port nothing listens on: bound, then closed.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// `0x7ffd5c1e` → `0xADDR`: stack addresses differ from run to run.
fn masked_addresses(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("0x") {
        out.push_str(&rest[..at]);
        let hex = rest[at + 2..]
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .count();
        out.push_str("0xADDR");
        rest = &rest[at + 2 + hex..];
    }
    out.push_str(rest);
    out
}

/// Launch the loop with one breakpoint of a kind; the answer.
async fn launch_with(
    b: &Bench,
    row: &Row,
    breakpoint: serde_json::Value,
) -> (String, serde_json::Value) {
    let l = &row.looping;
    b.call(json!({"op": "breakpoints", "file": l.file, "lines": [breakpoint]}))
        .await;
    b.call(json!({"op": "launch", "program": l.program, "timeout_seconds": 60}))
        .await
}

/// The loop variable `i` where the program stopped.
async fn loop_variable(b: &Bench) -> String {
    let (_, s) = b.call(json!({"op": "evaluate", "expression": "i"})).await;
    s["result"].as_str().unwrap().to_string()
}

async fn end(b: &Bench) {
    let recorded = b.processes().await;
    b.call(json!({"op": "terminate"})).await;
    assert_no_orphans(b, &recorded).await;
}

/// A condition stops on the right iteration, a hit count on the right hit,
/// and a logpoint prints without stopping (or is refused by name).
async fn breakpoint_kinds(b: &Bench, row: &Row) {
    let line = row.looping.line;
    let (text, s) = launch_with(b, row, json!({"line": line, "condition": "i == 3"})).await;
    assert_eq!(
        (s["state"].as_str(), s["line"].as_u64()),
        (Some("stopped"), Some(line as u64)),
        "{text}"
    );
    assert!(
        text.contains(&format!(":{line} verified, if `i == 3`")),
        "{text}"
    );
    assert_eq!(loop_variable(b).await, "3");
    let preview = text
        .lines()
        .find(|l| l.starts_with("locals: "))
        .unwrap_or_default();
    row.condition_locals.assert_eq(&masked_addresses(preview));
    // `locals` reads the same frame in one call.
    let (text, s) = b.call(json!({"op": "locals"})).await;
    let value = |name: &str| {
        s["variables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .map(|v| v["value"].as_str().unwrap().to_string())
    };
    assert_eq!(
        (value("i").as_deref(), value("total").as_deref()),
        (Some("3"), Some("23")),
        "{text}"
    );
    end(b).await;

    let (text, s) = launch_with(b, row, json!({"line": line, "hit_condition": "4"})).await;
    assert_eq!(s["state"], "stopped", "{text}");
    assert_eq!(loop_variable(b).await, "4");
    end(b).await;

    let logpoint = json!({"line": line, "log_message": "total={total}"});
    match &row.logpoint_refused {
        None => {
            let (text, s) = launch_with(b, row, logpoint).await;
            assert_eq!(s["state"], "ended", "{text}");
            let (out, _) = b.call(json!({"op": "output"})).await;
            // The messages, whatever the adapter puts around them (delve:
            // `> [Go 1]: `) and however they interleave with the program's.
            let logged: Vec<String> = out
                .split("total=")
                .skip(1)
                .map(|rest| {
                    let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    format!("total={n}")
                })
                .collect();
            assert_eq!(
                logged.join(" "),
                "total=0 total=8 total=23 total=39 total=62",
                "{out}"
            );
        }
        Some(refusal) => {
            let l = &row.looping;
            b.call(json!({"op": "breakpoints", "file": l.file, "lines": [logpoint]}))
                .await;
            let err = b
                .err(json!({"op": "launch", "program": l.program, "timeout_seconds": 60}))
                .await;
            refusal.assert_eq(&normalized(b, &err.to_string()));
            assert!(b.processes().await.is_empty());
        }
    }
    b.call(json!({"op": "breakpoints", "file": row.looping.file, "lines": []}))
        .await;
}

/// A program that reads stdin: without input it waits (and is said to) or
/// reads end of file at once; with `stdin` it reads the text.
async fn standard_input(b: &Bench, row: &Row) {
    if let Some(without) = &row.greet_without_stdin {
        let (text, _) = b
            .call(json!({"op": "launch", "program": row.greet, "timeout_seconds": 3}))
            .await;
        without.assert_eq(&after_head(&text, 1));
        end(b).await;
    }
    let with =
        json!({"op": "launch", "program": row.greet, "stdin": "Ada\n", "timeout_seconds": 60});
    match &row.stdin_refused {
        None => {
            let (text, s) = b.call(with).await;
            assert_eq!(s["state"], "ended", "{text}");
            assert!(text.contains("hello Ada!"), "{text}");
            end(b).await;
        }
        Some(refusal) => {
            refusal.assert_eq(&b.err(with).await.to_string());
            assert!(b.processes().await.is_empty());
        }
    }
}

/// The ops an IDE has beyond breakpoints and steps: a function
/// breakpoint, exception filters checked against the adapter's list,
/// evaluate in a context, set_variable (and its bad input), modules,
/// disassemble and read_memory (or their refusal, by name), and restart.
async fn deeper_ops(dir: &Path, row: &Row) {
    let b = bench(dir, config());
    let l = &row.looping;
    let (before, _) = b.call(json!({"op": "adapters"})).await;

    // Bad input to the new ops: a clear error, nothing kept.
    let err = b
        .err(json!({"op": "function_breakpoints", "functions": [""]}))
        .await;
    expect!["bad arguments: a function breakpoint needs a name; an empty one names no function"]
        .assert_eq(&err.to_string());
    let err = b.err(json!({"op": "exception_breakpoints"})).await;
    assert!(matches!(err, tool_core::ToolError::BadArgs(_)), "{err}");
    let err = b.err(json!({"op": "disassemble", "count": 0})).await;
    expect!["bad arguments: `count` is 0; give between 1 and 200"].assert_eq(&err.to_string());
    let err = b.err(json!({"op": "restart"})).await;
    expect!["refused: restart launches the last program again, and nothing was launched in this conversation; launch one first"].assert_eq(&err.to_string());
    let (text, _) = b.call(json!({"op": "status"})).await;
    assert!(!text.contains("function breakpoints"), "{text}");

    // A function breakpoint stops in the function.
    let (text, _) = b
        .call(json!({"op": "function_breakpoints", "functions": [row.function]}))
        .await;
    assert!(
        text.contains("kept; sent when a program is launched"),
        "{text}"
    );
    let (text, s) = b
        .call(json!({"op": "launch", "program": l.program, "timeout_seconds": 60}))
        .await;
    assert_eq!(s["state"], "stopped", "{text}");
    assert!(
        s["function"].as_str().unwrap_or_default().contains("mean"),
        "{text}"
    );
    // Started, the adapter announced the filters the catalog lists for it.
    let (after, _) = b.call(json!({"op": "adapters"})).await;
    assert_eq!(
        filter_line(&after, row.adapter),
        filter_line(&before, row.adapter).replace("when tested", "when it started in this run"),
        "the catalog's filters for {} are not those it announces",
        row.adapter
    );
    let (text, _) = b.call(json!({"op": "status"})).await;
    assert!(
        text.contains(&format!("function breakpoints: {}", row.function)),
        "{text}"
    );
    let (text, s) = b
        .call(json!({"op": "function_breakpoints", "functions": []}))
        .await;
    assert_eq!(s["sent"], true, "{text}");
    end(&b).await;

    // An exception filter the adapter lacks: the launch says which it has.
    b.call(json!({"op": "exception_breakpoints", "filters": ["no-such-filter"]}))
        .await;
    let err = b
        .err(json!({"op": "launch", "program": l.program, "timeout_seconds": 60}))
        .await;
    row.unknown_filter.assert_eq(&err.to_string());
    assert!(b.processes().await.is_empty());
    b.call(json!({"op": "exception_breakpoints", "filters": []}))
        .await;

    // At the third iteration: evaluate as a hover, set a variable.
    let (text, s) = launch_with(&b, row, json!({"line": l.line, "condition": "i == 3"})).await;
    assert_eq!(s["state"], "stopped", "{text}");
    let (_, s) = b
        .call(json!({"op": "evaluate", "expression": "i", "context": "hover"}))
        .await;
    assert_eq!(s["result"], "3");
    let (text, s) = b
        .call(json!({"op": "set_variable", "name": "total", "value": "100"}))
        .await;
    assert_eq!(s["variable"]["value"], "100", "{text}");
    let (_, s) = b
        .call(json!({"op": "evaluate", "expression": "total"}))
        .await;
    assert_eq!(s["result"], "100");
    let err = b
        .err(json!({"op": "set_variable", "name": "nosuch", "value": "1"}))
        .await;
    assert!(
        err.to_string()
            .starts_with("bad arguments: there is no variable `nosuch` in the locals of "),
        "{err}"
    );
    let err = b
        .err(json!({"op": "set_variable", "name": "total", "value": "1", "reference": 999}))
        .await;
    assert!(matches!(err, tool_core::ToolError::BadArgs(_)), "{err}");
    let (_, s) = b
        .call(json!({"op": "evaluate", "expression": "total"}))
        .await;
    assert_eq!(s["result"], "100", "bad input changed the variable");

    match &row.modules_refused {
        None => {
            let (text, s) = b.call(json!({"op": "modules"})).await;
            assert!(s["total"].as_u64().unwrap_or(0) > 0, "{text}");
        }
        Some(refusal) => refusal.assert_eq(&b.err(json!({"op": "modules"})).await.to_string()),
    }
    match &row.disassemble_refused {
        None => {
            let (text, s) = b.call(json!({"op": "disassemble", "count": 4})).await;
            assert_eq!(
                s["instructions"].as_array().map(Vec::len),
                Some(4),
                "{text}"
            );
            // The slice `xs` lives where its memory reference says: 4, 8, …
            let (text, s) = b.call(json!({"op": "locals"})).await;
            let at = s["variables"]
                .as_array()
                .unwrap()
                .iter()
                .find(|v| v["name"] == "xs")
                .and_then(|v| v["memory_reference"].as_str())
                .unwrap_or_else(|| panic!("no memory reference for xs: {text}"))
                .to_string();
            let (text, s) = b
                .call(json!({"op": "read_memory", "memory_reference": at, "count": 16}))
                .await;
            // delve reads at most the slice's length in bytes (6 here).
            assert_eq!(s["hex"], "040000000000", "{text}");
        }
        Some(refusal) => refusal.assert_eq(&b.err(json!({"op": "disassemble"})).await.to_string()),
    }
    if let Some(refusal) = &row.read_memory_refused {
        let err = b
            .err(json!({"op": "read_memory", "memory_reference": "0x1000"}))
            .await;
        refusal.assert_eq(&err.to_string());
    }

    // restart: the same program and breakpoints, from the start.
    let (text, s) = b
        .call(json!({"op": "restart", "timeout_seconds": 60}))
        .await;
    assert!(text.starts_with("debug restart  "), "{text}");
    assert_eq!(s["state"], "stopped", "{text}");
    assert_eq!(loop_variable(&b).await, "3");
    let (_, s) = b
        .call(json!({"op": "evaluate", "expression": "total"}))
        .await;
    assert_eq!(s["result"], "23", "{text}");
    end(&b).await;
}

/// One Go test function debugged by name: it stops in the test, and only
/// that test runs.
async fn go_test_function(dir: &Path, file: &str, line: u32, test: &str) {
    let b = bench(dir, config());
    b.call(json!({"op": "breakpoints", "file": file, "lines": [line]}))
        .await;
    let (text, s) = b
        .call(json!({"op": "launch", "program": file, "test": test, "timeout_seconds": 90}))
        .await;
    assert_eq!(
        (
            s["state"].as_str(),
            s["function"].as_str(),
            s["line"].as_u64()
        ),
        (Some("stopped"), Some("avg.TestMean"), Some(line as u64)),
        "{text}"
    );
    let (_, s) = b.call(json!({"op": "evaluate", "expression": "got"})).await;
    assert_eq!(s["result"], "17.333333333333332");
    b.call(json!({"op": "breakpoints", "file": file, "lines": []}))
        .await;
    let (text, s) = b.call(json!({"op": "continue"})).await;
    assert_eq!(s["state"], "ended", "{text}");
    let (out, _) = b.call(json!({"op": "output"})).await;
    assert!(out.contains("mean = 17.333333333333332, want 18"), "{out}");
    assert!(!out.contains("nothing to see"), "only TestMean ran: {out}");
    end(&b).await;

    // A mode that does not fit the program: a clear error, nothing started.
    let err = b
        .err(json!({"op": "launch", "program": file, "mode": "exec"}))
        .await;
    expect!["bad arguments: cannot launch `main_test.go` under delve: mode exec runs a compiled Go program, and this is not one; use mode debug for a package or .go file"]
        .assert_eq(&err.to_string());
    assert!(b.processes().await.is_empty());
}

async fn scenario(row: Row) {
    for any in row.needs {
        if tool_core::fixtures::require(any).is_none() {
            return;
        }
    }
    if row.adapter == "debugpy" && tool_core::fixtures::require(&["python3"]).is_none() {
        return;
    }
    let dir = copy_fixture(row.fixture);
    if let Some(build) = row.build {
        build(dir.path());
    }
    let b = bench(dir.path(), config());

    // A source lldb cannot run says how to build it.
    if let Some((source, refusal)) = &row.source {
        let err = b.err(json!({"op": "launch", "program": source})).await;
        refusal.assert_eq(&err.to_string());
    }

    breakpoint_kinds(&b, &row).await;
    deeper_ops(dir.path(), &row).await;
    if let Some((file, line, test)) = row.go_test {
        go_test_function(dir.path(), file, line, test).await;
    }
    standard_input(&b, &row).await;

    // A crash stops where it happened and says what happened, without
    // naming the adapter.
    for program in std::iter::once(row.crash).chain(row.crash_built) {
        let (text, s) = b
            .call(json!({"op": "launch", "program": program, "timeout_seconds": 60}))
            .await;
        assert!(text.contains(&format!("under {}", row.adapter)), "{text}");
        assert_eq!(s["state"], "stopped", "{text}");
        row.crash_stop
            .assert_eq(&stable(&after_head(&text, 2), None));
        let recorded = b.processes().await;
        b.call(json!({"op": "terminate"})).await;
        assert_no_orphans(&b, &recorded).await;
    }

    // An endless loop is still running at the bound; pause stops it.
    let (text, s) = b
        .call(json!({"op": "launch", "program": row.spin, "timeout_seconds": 2}))
        .await;
    assert_eq!(s["state"], "running", "{text}");
    wait_for_output(&b, "spinning").await;
    let (text, s) = b.call(json!({"op": "pause"})).await;
    assert_eq!(
        (s["state"].as_str(), s["reason"].as_str()),
        (Some("stopped"), Some("pause")),
        "{text}"
    );
    let first = text.lines().nth(1).unwrap_or_default();
    let upto_in = first.split(" in ").next().unwrap_or_default();
    row.pause_stop.assert_eq(&stable(upto_in, None));
    let recorded = b.processes().await;
    b.call(json!({"op": "terminate"})).await;
    assert_no_orphans(&b, &recorded).await;

    // Nothing listens: refused at once, with the connection error.
    let port = closed_port();
    let started = Instant::now();
    let err = b
        .err(json!({"op": "attach", "port": port, "adapter": row.adapter, "timeout_seconds": 5}))
        .await;
    let took = started.elapsed();
    row.closed_port
        .assert_eq(&stable(&normalized(&b, &err.to_string()), Some(port)));
    assert!(took < Duration::from_secs(1), "refused after {took:?}");
    assert!(b.processes().await.is_empty());

    // Something listens but never answers: the attach gives up at the
    // bound, and says so.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let started = Instant::now();
    let err = b
        .err(json!({"op": "attach", "port": port, "adapter": row.adapter, "timeout_seconds": 2}))
        .await;
    let took = started.elapsed();
    let said = err.to_string();
    assert!(
        matches!(err, tool_core::ToolError::TimedOut(_))
            && said
                .contains("within 2000 ms; gave up, and nothing of this session is left running"),
        "{said}"
    );
    assert!(took < Duration::from_secs(5), "gave up after {took:?}");
    assert!(b.processes().await.is_empty());
    drop(silent);

    // Attached to a debuggee started outside the run, `terminate`
    // disconnects and leaves it running.
    if let Some(listening) = &row.listening {
        let port = closed_port();
        let mut server = (listening.start)(dir.path(), port);
        for _ in 0..200 {
            if tool_debug::session::port_listened_on(port) == Some(true) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let (text, _) = b
            .call(
                json!({"op": "attach", "port": port, "adapter": row.adapter, "timeout_seconds": 5}),
            )
            .await;
        assert!(text.contains(&format!("attach  port {port}")), "{text}");
        let debuggee = match listening.debuggee {
            Debuggee::Server => server.id(),
            Debuggee::Child(exe) => {
                let children: Vec<u32> = children_of(server.id())
                    .into_iter()
                    .filter(|c| {
                        std::fs::read_link(format!("/proc/{c}/exe"))
                            .is_ok_and(|p| p.file_name().is_some_and(|n| n == exe))
                    })
                    .collect();
                assert_eq!(children.len(), 1, "the debug server's debuggee");
                children[0]
            }
        };
        wait_for_pause(&b).await;
        let (text, s) = b.call(json!({"op": "terminate"})).await;
        assert_eq!(
            (
                s["detached"]["pid"].as_u64(),
                s["detached"]["alive"].as_bool()
            ),
            (Some(debuggee as u64), Some(true)),
            "{text}"
        );
        let text = text.replace(&debuggee.to_string(), "DEBUGGEE");
        listening.said.assert_eq(&stable(&text, Some(port)));
        assert!(
            tool_core::process::pid_alive(debuggee),
            "the debuggee was killed"
        );
        kill(debuggee);
        let _ = server.kill();
        let _ = server.wait();
    }

    // Attached to a running process by its pid: it can be paused, and
    // `terminate` leaves it running.
    if let Some(spinner) = row.spinner {
        let mut program = spinner(dir.path());
        let pid = program.id();
        // Without `adapter`: routed by what the process runs.
        let (text, _) = b
            .call(json!({"op": "attach", "pid": pid, "timeout_seconds": 20}))
            .await;
        assert!(
            text.contains(&format!("attach  pid {pid} under {}", row.adapter)),
            "{text}"
        );
        wait_for_pause(&b).await;
        let recorded = b.processes().await;
        assert!(
            !recorded.contains(&pid),
            "the debuggee is not the session's"
        );
        let (text, s) = b.call(json!({"op": "terminate"})).await;
        expect![[r#"
            debug terminate  pid PID
            disconnected; the debuggee (pid PID) was started outside this run and is still running; the adapter is gone"#]]
        .assert_eq(&text.replace(&pid.to_string(), "PID"));
        assert_eq!(s["detached"]["alive"], true, "{text}");
        assert!(
            tool_core::process::pid_alive(pid),
            "the debuggee was killed"
        );
        assert_no_orphans(&b, &recorded).await;
        kill(pid);
        let _ = program.wait();
    }

    // Bad input to attach changes nothing.
    let err = b.err(json!({"op": "attach", "port": 1, "pid": 1})).await;
    expect!["bad arguments: attach takes `port` or `pid`, not both: a debug server's port, or the id of a running process"].assert_eq(&err.to_string());
    let gone = {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    };
    let err = b.err(json!({"op": "attach", "pid": gone})).await;
    assert_eq!(
        err.to_string(),
        format!("bad arguments: no running process has pid {gone}; check it with `ps`")
    );
    assert!(b.processes().await.is_empty());
}

/// The exception filter line under `adapter`'s line in an `adapters` answer.
fn filter_line(text: &str, adapter: &str) -> String {
    let mut lines = text
        .lines()
        .skip_while(|l| l.split_whitespace().next() != Some(adapter));
    lines.next();
    lines
        .next()
        .filter(|l| l.starts_with("  exception filters"))
        .unwrap_or_else(|| panic!("no exception filters under {adapter}: {text}"))
        .to_string()
}

/// `adapters` and `status` list each adapter's exception filters before
/// any adapter started: as the catalog knows them, said to be what the
/// adapter announced when tested.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exception_filters_are_listed_before_a_start() {
    let dir = copy_fixture("python");
    let b = bench(dir.path(), config());
    let (text, s) = b.call(json!({"op": "adapters"})).await;
    // Whether each adapter is usable depends on the machine: its id only.
    let shown: Vec<String> = text
        .lines()
        .map(|l| match l.split_whitespace().next() {
            Some(id)
                if !l.starts_with(' ')
                    && s["exception_filters"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|a| a["adapter"] == id) =>
            {
                format!("{id} …")
            }
            _ => l.to_string(),
        })
        .collect();
    expect![[r#"
        debug adapters  (root markers looked for in the workspace root; a launched program's own folder is checked up to the root)
        debugpy …
          exception filters (as the adapter announced when tested): raised, uncaught (on by default), userUnhandled
        lldb …
          exception filters (as the adapter announced when tested): cpp_catch, cpp_throw, objc_catch, objc_throw, swift_catch, swift_throw
        delve …
          exception filters (as the adapter announced when tested): unrecovered-panic (on by default), runtime-fatal-throw (on by default)
        dart …
        choose exception filters with exception_breakpoints (before or after launch)"#]].assert_eq(&shown.join("\n"));
    assert_eq!(
        s["exception_filters"][0]["filters"][1],
        json!({"id": "uncaught", "label": "Uncaught Exceptions", "default": true})
    );

    let (text, _) = b.call(json!({"op": "status"})).await;
    expect![[r#"
        debug status  no session; 0 breakpoints set
        launch a program to start one
        debugpy: exception filters (as the adapter announced when tested): raised, uncaught (on by default), userUnhandled
        lldb: exception filters (as the adapter announced when tested): cpp_catch, cpp_throw, objc_catch, objc_throw, swift_catch, swift_throw
        delve: exception filters (as the adapter announced when tested): unrecovered-panic (on by default), runtime-fatal-throw (on by default)"#]].assert_eq(&text);
    b.call(json!({"op": "exception_breakpoints", "filters": ["raised"]}))
        .await;
    let (text, _) = b.call(json!({"op": "status"})).await;
    expect![[r#"
        debug status  no session; 0 breakpoints set
        launch a program to start one
        exception filters chosen: raised
        debugpy: exception filters (as the adapter announced when tested): raised, uncaught (on by default), userUnhandled
        lldb: exception filters (as the adapter announced when tested): cpp_catch, cpp_throw, objc_catch, objc_throw, swift_catch, swift_throw
        delve: exception filters (as the adapter announced when tested): unrecovered-panic (on by default), runtime-fatal-throw (on by default)"#]].assert_eq(&text);
}

/// The attached program, running, is paused (it may have been stopped
/// by the attach itself; then it is continued first).
async fn wait_for_pause(b: &Bench) {
    let (text, s) = b.call(json!({"op": "status"})).await;
    if s["state"] == "stopped" {
        b.call(json!({"op": "continue", "timeout_seconds": 1}))
            .await;
    } else {
        assert_eq!(s["state"], "running", "{text}");
    }
    let (text, s) = b.call(json!({"op": "pause", "timeout_seconds": 20})).await;
    assert_eq!(s["state"], "stopped", "{text}");
}

fn kill(pid: u32) {
    let _ = tool_core::process::signals::send(pid, tool_core::process::signals::Signal::Kill);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenario_debugpy() {
    scenario(debugpy_row()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenario_lldb_on_c() {
    scenario(lldb_row()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenario_lldb_on_rust() {
    scenario(lldb_rust_row()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenario_delve() {
    scenario(delve_row()).await;
}

/// delve lists goroutines as threads: `threads` names each goroutine with
/// its place in the program's code, `stack` says whose stack it is, and
/// while the program runs the placeholder thread is said to be one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delve_names_goroutines() {
    for any in [&["dlv"][..], &["go"][..]] {
        if tool_core::fixtures::require(any).is_none() {
            return;
        }
    }
    let dir = copy_fixture("go");
    let b = bench(dir.path(), config());
    b.call(json!({"op": "breakpoints", "file": "cmd/workers/main.go", "lines": [18]}))
        .await;
    let (text, s) = b
        .call(json!({"op": "launch", "program": "cmd/workers", "timeout_seconds": 90}))
        .await;
    assert_eq!(s["state"], "stopped", "{text}");
    let (text, s) = b.call(json!({"op": "threads"})).await;
    // The program's own goroutines (the runtime's vary with Go's version).
    let os_thread = s["threads"][0]["os_thread"].as_u64().unwrap_or_default();
    // main's goroutine; the workers' ids, and whether each has started
    // yet (`main.worker`) or not (`main.main.gowrap1`), vary from run to run.
    let mut lines = text.lines();
    let head: Vec<&str> = lines.by_ref().take(1).collect();
    let rest: Vec<&str> = lines.collect();
    assert!(head[0].starts_with("debug threads  ") && head[0].contains(" goroutines (delve lists each goroutine as a thread; pass the id on the left as thread_id)"), "{text}");
    let main_line = rest.iter().find(|l| l.contains("goroutine 1 ")).unwrap();
    expect![
        "     1  goroutine 1  main.main at cmd/workers/main.go:18  (stopped here; on OS thread T)"
    ]
    .assert_eq(&main_line.replace(&os_thread.to_string(), "T"));
    let workers = rest
        .iter()
        .filter(|l| {
            l.contains("main.worker at cmd/workers/main.go:")
                || l.contains("main.main.gowrap1 at cmd/workers/main.go:16")
                || l.contains("main.main.gowrap2 at cmd/workers/main.go:17")
        })
        .count();
    assert_eq!(workers, 2, "{text}");
    let (text, _) = b.call(json!({"op": "stack"})).await;
    assert!(
        text.starts_with("debug stack  goroutine 1 (thread 1), stop 1 (breakpoint)"),
        "{text}"
    );
    end(&b).await;

    b.call(json!({"op": "breakpoints", "file": "cmd/workers/main.go", "lines": []}))
        .await;
    let (text, s) = b
        .call(json!({"op": "launch", "program": "cmd/spin", "timeout_seconds": 2}))
        .await;
    assert_eq!(s["state"], "running", "{text}");
    let (text, _) = b.call(json!({"op": "threads"})).await;
    expect!["debug threads  none listed while the program runs: the delve adapter lists only a placeholder (thread -1) then; call pause, then threads"].assert_eq(&text);
    end(&b).await;
}
