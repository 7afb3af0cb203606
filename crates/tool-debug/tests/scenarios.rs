//! One scenario table, a row per adapter (debugpy on Python, lldb on C,
//! lldb on a Rust crate built by cargo, delve on Go), driven by one test
//! body: the known bug found end to end, the breakpoint kinds, exception
//! filters, launch's `stdin`, `env` and `cwd`, the deeper ops, the TTL, a
//! crash, a spin paused, and attaches (a closed port, a silent one, a debug
//! server, a pid). Every row names its own programs and its expected
//! answers; the body is the same for all, and a row says `None` where its
//! adapter lacks a thing (and why). The few tests after the table are
//! about one adapter only (debugpy's project `.venv`, delve's goroutines)
//! or about no adapter (bad input before a session, the filters listed).

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
    /// `attach`'s answer (the port as `PORT`; a stop as `stopped`).
    attached: Expect,
    /// `terminate`'s answer after attaching to it.
    said: Expect,
}

/// A program with a loop, for the breakpoint kinds.
struct Looping {
    file: &'static str,
    line: u32,
    program: &'static str,
    /// The launch answer with a breakpoint `if i == 3` (its head without
    /// the adapter's command line, addresses masked).
    condition_stop: Expect,
    /// The launch answer with a breakpoint whose condition never holds.
    never_stops: Expect,
    /// The stop at a function breakpoint on `Row::function`: its first
    /// two lines.
    function_stop: Expect,
    /// `status` while stopped there.
    function_status: Expect,
    /// `status` once the session's TTL ran out.
    ttl_status: Expect,
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
    /// The first lines of the crash's stop, after the head (`launch
    /// <program> under <adapter>`).
    crash_stop: Expect,
    /// A source file launched without naming the adapter, and the refusal.
    source: Option<(&'static str, Expect)>,
    /// A program that spins forever after printing "spinning".
    spin: &'static str,
    /// The answer of `pause` on it: its head and the stop line.
    pause_head: &'static str,
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
    /// The launch answer with `stdin` (where the adapter gives it).
    greeted: Expect,
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
    /// The program with the known bug, found end to end.
    walk: Walk,
    /// Where a paused spin stands: a line of its stack and an expression
    /// true there (`None`: the pause may land in a runtime or C library
    /// frame, where neither is steady).
    paused_in: Option<(&'static str, &'static str, &'static str)>,
    /// An exception filter that stops on a caught exception, where the
    /// adapter has one for this language.
    caught: Option<Caught>,
    /// An expression whose evaluation blocks, for `evaluate`'s bound
    /// (`None`: the adapter answers nothing else while it evaluates, so
    /// the session cannot be shown to still answer).
    blocking: Option<&'static str>,
    /// A program that prints `GREETING: $GREETING` and `cwd: <its cwd>`.
    env_program: &'static str,
}

/// The program with the known bug (a mean that skips the first element):
/// a breakpoint on the first line of `mean`, then what an IDE user does.
struct Walk {
    file: &'static str,
    line: u32,
    program: &'static str,
    /// The function the stop names.
    function: &'static str,
    /// The launch answer's breakpoint line, stop line and quoted source.
    stop: Expect,
    /// A second launch's refusal while it is stopped (up to its age).
    busy: Expect,
    stack: Expect,
    scopes: Expect,
    /// Lines the first scope's `variables` answer holds.
    variables: &'static [&'static str],
    /// An expression in the stopped frame and its value.
    evaluate: (&'static str, &'static str),
    /// `step_over`'s stop line and quoted source.
    step: Expect,
    /// A breakpoint set while stopped on a line without code: the line
    /// asked for, the line the adapter moved it to (`None`: it left it
    /// pending), and the answer.
    moved: (u32, Option<u32>, Expect),
    /// Lines the program printed (the workspace root as `<root>`).
    printed: &'static [&'static str],
    /// `status` once it ended.
    ended_status: Expect,
}

/// A program that raises an exception and catches it, under a filter.
struct Caught {
    filter: &'static str,
    program: &'static str,
    /// The stop line and quoted source.
    stop: Expect,
    /// A line it prints after catching it.
    printed: &'static str,
}

/// The fixtures' Python (the one with debugpy).
fn python() -> std::path::PathBuf {
    test_support::fixtures::require(&["python3"]).expect("python3")
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
        test_support::fixtures::require(&["lldb-server", "lldb-server-14"]).expect("lldb-server");
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
    let dlv = test_support::fixtures::require(&["dlv"]).expect("dlv");
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
    for name in ["crash", "spin", "avg", "greet", "env"] {
        let built = std::process::Command::new("gcc")
            .args(["-g", "-O0", "-o", name, &format!("{name}.c")])
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(built.success(), "gcc {name}.c");
    }
}

fn cargo_build(dir: &Path) {
    // The debuggee is built as a plain `cargo build` would, whatever the
    // test run's own settings: CARGO_INCREMENTAL=0 changes the codegen
    // units and with them the statics lldb lists as Globals, and a target
    // dir elsewhere would move `target/debug/<bin>`.
    let built = std::process::Command::new("cargo")
        .args(["build", "--offline", "--quiet", "--bins"])
        .env_remove("CARGO_INCREMENTAL")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
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
            condition_stop: expect![[r#"
                debug launch  avg.py under debugpy
                breakpoint avg.py:8 verified, if `i == 3`  | total += xs[i]
                stopped (breakpoint) thread N in mean at avg.py:8
                    8 |         total += xs[i]
                locals: i = 3, total = 23, xs = [4, 8, 15, 16, 23, 42]"#]],
            never_stops: expect![[r#"
                debug launch  avg.py under debugpy
                breakpoint avg.py:8 verified, if `i == 99`  | total += xs[i]
                the program exited with code 0
                output (tail; the output op returns all of it):
                interpreter prefix: <fixtures>/venv
                mean: 17.333333333333332"#]],
            function_stop: expect![[r#"
                stopped (function breakpoint) thread N in mean at avg.py:5
                    5 | def mean(xs):"#]],
            function_status: expect![[r#"
                debug status  avg.py under debugpy
                stopped (function breakpoint) thread N
                call stack for where, or continue / step_over
                0 breakpoints set
                function breakpoints: mean
                exception filters: raised (off), uncaught (on), userUnhandled (off) (change with exception_breakpoints)"#]],
            ttl_status: expect![[r#"
                debug status  avg.py under debugpy
                ended: the session's TTL of 20 s ran out, so the program and its adapter were terminated
                1 breakpoint set (avg.py:8)
                exception filters: raised (off), uncaught (on), userUnhandled (off) (change with exception_breakpoints)"#]],
        },
        logpoint_refused: None,
        condition_locals: expect!["locals: i = 3, total = 23, xs = [4, 8, 15, 16, 23, 42]"],
        greet: "greet.py",
        greet_without_stdin: Some(expect!["still running after 10 s: waiting for input on stdin; launch again with `stdin` (the text it reads, then end of file), or call pause to see where it reads"]),
        stdin_refused: None,
        greeted: expect![[r#"
            debug launch  greet.py under debugpy
            the program exited with code 0
            output (tail; the output op returns all of it):
            hello Ada!"#]],
        pause_head: "debug pause  thread N",
        pause_stop: expect!["paused — thread N"],
        listening: Some(Listening {
            start: debugpy_server,
            debuggee: Debuggee::Server,
            attached: expect![[r#"
                debug attach  port PORT under debugpy
                still running after 5 s: no breakpoint was hit and the program did not exit; call pause to stop it where it is, or continue to keep waiting"#]],
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
        walk: Walk {
            file: "avg.py",
            line: 6,
            program: "avg.py",
            function: "mean",
            stop: expect![[r#"
                breakpoint avg.py:6 verified  | total = 0
                stopped (breakpoint) thread N in mean at avg.py:6
                    6 |     total = 0"#]],
            busy: expect!["refused: a debug session is already running for this conversation: avg.py under debugpy, stopped (breakpoint) thread N in mean at avg.py:6"],
            stack: expect![[r#"
                debug stack  thread N, stop 1 (breakpoint)
                frame 1  mean at avg.py:6
                    6 |     total = 0
                frame 2  main at avg.py:15
                   15 |     result = mean(values)
                frame 3  <module> at avg.py:20
                   20 |     main()
                pass a frame id to scopes or evaluate (valid until the program moves)"#]],
            scopes: expect![[r#"
                debug scopes  frame 1
                Locals  reference N
                Globals  reference N
                pass a reference to variables"#]],
            variables: &["xs (list) = [4, 8, 15, 16, 23, 42]  [reference N]"],
            evaluate: ("xs[0] + xs[1]", "12"),
            step: expect![[r#"
                stopped (step) thread N in mean at avg.py:7
                    7 |     for i in range(1, len(xs)):"#]],
            moved: (10, Some(9), expect![[r#"
                debug breakpoints  avg.py
                avg.py:10 moved to line 9 verified  | return total / len(xs)"#]]),
            printed: &["mean: 17.333333333333332"],
            ended_status: expect![[r#"
                debug status  avg.py under debugpy
                ended: the program exited with code 0
                0 breakpoints set
                exception filters: raised (off), uncaught (on), userUnhandled (off) (change with exception_breakpoints)"#]],
        },
        paused_in: Some(("<module> at spin.py", "n > 0", "True")),
        caught: Some(Caught {
            filter: "raised",
            program: "caught.py",
            stop: expect![[r#"
                stopped: ValueError: invalid literal for int() with base 10: 'forty-two' — thread N in parse at caught.py:6
                    6 |         return int(text)"#]],
            printed: "parsed 0",
        }),
        blocking: Some("__import__('time').sleep(60)"),
        env_program: "env.py",
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
        source: Some(("crash.c", expect!["bad arguments: `crash.c` is not a compiled program; lldb runs executables: build it with debug info (`gcc -g -O0 -o prog crash.c`) and launch `prog`"])),
        crash_stop: expect![[r#"
            stopped: signal SIGSEGV: invalid address (fault address: 0x0) — thread N in store at crash.c:5
                5 |     *p = v;"#]],
        spin: "spin",
        looping: Looping {
            file: "avg.c",
            line: 7,
            program: "avg",
            condition_stop: expect![[r#"
                debug launch  avg under lldb
                breakpoint avg.c:7 verified, if `i == 3`  | total += xs[i];
                stopped (breakpoint: breakpoint 1.1) thread N in mean at avg.c:7
                    7 |         total += xs[i];
                locals: xs = 0xADDR, n = 6, total = 23, i = 3"#]],
            never_stops: expect![[r#"
                debug launch  avg under lldb
                breakpoint avg.c:7 verified, if `i == 99`  | total += xs[i];
                the program exited with code 0
                output (tail; the output op returns all of it):
                values: 6
                mean: 17.33"#]],
            function_stop: expect![[r#"
                stopped (breakpoint: breakpoint 1.1) thread N in mean at avg.c:5
                    5 |     int total = 0;"#]],
            function_status: expect![[r#"
                debug status  avg under lldb
                stopped (breakpoint: breakpoint 1.1) thread N
                call stack for where, or continue / step_over
                0 breakpoints set
                function breakpoints: mean
                exception filters: cpp_catch (off), cpp_throw (off), objc_catch (off), objc_throw (off), swift_catch (off), swift_throw (off) (change with exception_breakpoints)"#]],
            ttl_status: expect![[r#"
                debug status  avg under lldb
                ended: the session's TTL of 20 s ran out, so the program and its adapter were terminated
                1 breakpoint set (avg.c:7)
                exception filters: cpp_catch (off), cpp_throw (off), objc_catch (off), objc_throw (off), swift_catch (off), swift_throw (off) (change with exception_breakpoints)"#]],
        },
        condition_locals: expect!["locals: xs = 0xADDR, n = 6, total = 23, i = 3"],
        greet: "greet",
        greet_without_stdin: Some(expect!["still running after 10 s: waiting for input on stdin; launch again with `stdin` (the text it reads, then end of file), or call pause to see where it reads"]),
        stdin_refused: None,
        greeted: expect![[r#"
            debug launch  greet under lldb
            the program exited with code 0
            output (tail; the output op returns all of it):
            hello Ada!"#]],
        logpoint_refused: Some(expect!["refused: cannot launch with the breakpoints of avg.c: the lldb adapter does not support logpoints (it would stop on the line instead of logging) (its `initialize` answer lacks `supportsLogPoints`); remove them, or use a plain breakpoint"]),
        pause_head: "debug pause  thread N",
        pause_stop: expect!["paused — thread N"],
        listening: Some(Listening {
            start: lldb_server,
            debuggee: Debuggee::Child("spin"),
            attached: expect![[r#"
                debug attach  port PORT under lldb
                stopped"#]],
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
        walk: Walk {
            file: "avg.c",
            line: 5,
            program: "avg",
            function: "mean",
            stop: expect![[r#"
                breakpoint avg.c:5 verified  | int total = 0;
                stopped (breakpoint: breakpoint 1.1) thread N in mean at avg.c:5
                    5 |     int total = 0;"#]],
            busy: expect!["refused: a debug session is already running for this conversation: avg under lldb, stopped (breakpoint: breakpoint 1.1) thread N in mean at avg.c:5"],
            stack: expect![[r#"
                debug stack  thread N, stop 1 (breakpoint)
                frame 1  mean at avg.c:5
                    5 |     int total = 0;
                frame 2  main at avg.c:16
                   16 |     double result = mean(values, n);
                pass a frame id to scopes or evaluate (valid until the program moves)"#]],
            scopes: expect![[r#"
                debug scopes  frame 1
                Locals  reference N, 3 variables
                Globals  reference N, 0 variables
                pass a reference to variables"#]],
            variables: &["n (int) = 6"],
            evaluate: ("xs[1] + n", "14"),
            step: expect![[r#"
                stopped (step) thread N in mean at avg.c:6
                    6 |     for (int i = 1; i < n; i++) {"#]],
            moved: (11, Some(13), expect![[r#"
                debug breakpoints  avg.c
                avg.c:11 moved to line 13 verified  | int values[] = {4, 8, 15, 16, 23, 42};"#]]),
            printed: &["values: 6", "mean: 17.33"],
            ended_status: expect![[r#"
                debug status  avg under lldb
                ended: the program exited with code 0
                0 breakpoints set
                exception filters: cpp_catch (off), cpp_throw (off), objc_catch (off), objc_throw (off), swift_catch (off), swift_throw (off) (change with exception_breakpoints)"#]],
        },
        paused_in: None,
        caught: None,
        // lldb-vscode-14 cuts a called `sleep` short itself ("Execution
        // was interrupted"), so nothing blocks for the bound to cut off.
        blocking: None,
        env_program: "env",
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
        source: Some(("src/bin/crash.rs", expect!["bad arguments: `src/bin/crash.rs` is not a compiled program; lldb runs executables: build the crate (`cargo build`) and launch its executable under target/debug/"])),
        crash_stop: expect![[r#"
            stopped: panic: index out of bounds: the len is 3 but the index is 5 (at src/bin/crash.rs:3:5) — thread N in crash::pick at src/bin/crash.rs:3 (below 7 frames outside the workspace; stack shows all)
                3 |     xs[i]"#]],
        spin: "target/debug/spin",
        looping: Looping {
            file: "src/bin/loop.rs",
            line: 5,
            program: "target/debug/loop",
            condition_stop: expect![[r#"
                debug launch  target/debug/loop under lldb
                breakpoint src/bin/loop.rs:5 verified, if `i == 3`  | total += xs[i];
                stopped (breakpoint: breakpoint 1.1) thread N in loop::mean at src/bin/loop.rs:5
                    5 |         total += xs[i];
                locals: xs = size=6, total = 23, iter = core::ops::range::Range<unsigned long> @ 0xADDR, i = 3"#]],
            never_stops: expect![[r#"
                debug launch  target/debug/loop under lldb
                breakpoint src/bin/loop.rs:5 verified, if `i == 99`  | total += xs[i];
                the program exited with code 0
                output (tail; the output op returns all of it):
                values: 6
                mean: 17.33"#]],
            function_stop: expect![[r#"
                stopped (breakpoint: breakpoint 1.1) thread N in loop::mean at src/bin/loop.rs:3
                    3 |     let mut total = 0;"#]],
            function_status: expect![[r#"
                debug status  target/debug/loop under lldb
                stopped (breakpoint: breakpoint 1.1) thread N
                call stack for where, or continue / step_over
                0 breakpoints set
                function breakpoints: mean, rust_panic (default)
                exception filters: cpp_catch (off), cpp_throw (off), objc_catch (off), objc_throw (off), swift_catch (off), swift_throw (off) (change with exception_breakpoints)"#]],
            ttl_status: expect![[r#"
                debug status  target/debug/loop under lldb
                ended: the session's TTL of 20 s ran out, so the program and its adapter were terminated
                1 breakpoint set (src/bin/loop.rs:5)
                function breakpoints: rust_panic (default)
                exception filters: cpp_catch (off), cpp_throw (off), objc_catch (off), objc_throw (off), swift_catch (off), swift_throw (off) (change with exception_breakpoints)"#]],
        },
        condition_locals: expect!["locals: xs = size=6, total = 23, iter = core::ops::range::Range<unsigned long> @ 0xADDR, i = 3"],
        greet: "target/debug/greet",
        greet_without_stdin: Some(expect!["still running after 10 s: waiting for input on stdin; launch again with `stdin` (the text it reads, then end of file), or call pause to see where it reads"]),
        stdin_refused: None,
        greeted: expect![[r#"
            debug launch  target/debug/greet under lldb
            the program exited with code 0
            output (tail; the output op returns all of it):
            hello Ada!"#]],
        logpoint_refused: Some(expect!["refused: cannot launch with the breakpoints of src/bin/loop.rs: the lldb adapter does not support logpoints (it would stop on the line instead of logging) (its `initialize` answer lacks `supportsLogPoints`); remove them, or use a plain breakpoint"]),
        pause_head: "debug pause  thread N",
        pause_stop: expect!["paused — thread N"],
        listening: Some(Listening {
            start: lldb_server_rust,
            debuggee: Debuggee::Child("spin"),
            attached: expect![[r#"
                debug attach  port PORT under lldb
                stopped"#]],
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
        walk: Walk {
            file: "src/main.rs",
            line: 13,
            program: "target/debug/avg",
            function: "avg::main",
            stop: expect![[r#"
                breakpoint src/main.rs:13 verified  | let result = mean(&values);
                stopped (breakpoint: breakpoint 1.1) thread N in avg::main at src/main.rs:13
                   13 |     let result = mean(&values);"#]],
            busy: expect!["refused: a debug session is already running for this conversation: target/debug/avg under lldb, stopped (breakpoint: breakpoint 1.1) thread N in avg::main at src/main.rs:13"],
            stack: expect![[r#"
                debug stack  thread N, stop 1 (breakpoint)
                frame 1  avg::main at src/main.rs:13
                   13 |     let result = mean(&values);
                pass a frame id to scopes or evaluate (valid until the program moves)"#]],
            scopes: expect![[r#"
                debug scopes  frame 1
                Locals  reference N, 2 variables
                Globals  reference N, 0 variables
                pass a reference to variables"#]],
            // rust-lldb's formatters: a Vec shows its length, a String its
            // text, not raw buf/ptr/cap fields.
            variables: &[
                "values (alloc::vec::Vec<long, alloc::alloc::Global>) = size=6  [reference N]",
                "label (alloc::string::String) = \"mean\"  [reference N]",
            ],
            evaluate: ("values[5]", "42"),
            step: expect![[r#"
                stopped (step) thread N in avg::main at src/main.rs:14
                   14 |     println!("{label}: {result:.2}");"#]],
            moved: (1, Some(3), expect![[r#"
                debug breakpoints  src/main.rs
                src/main.rs:1 moved to line 3 verified  | let mut total = 0;"#]]),
            printed: &["mean: 17.33"],
            ended_status: expect![[r#"
                debug status  target/debug/avg under lldb
                ended: the program exited with code 0
                0 breakpoints set
                function breakpoints: rust_panic (default)
                exception filters: cpp_catch (off), cpp_throw (off), objc_catch (off), objc_throw (off), swift_catch (off), swift_throw (off) (change with exception_breakpoints)"#]],
        },
        paused_in: None,
        caught: None,
        // As on C: lldb cuts a blocking call short itself.
        blocking: None,
        env_program: "target/debug/env",
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
            condition_stop: expect![[r#"
                debug launch  . under delve
                breakpoint main.go:9 verified, if `i == 3`  | total += xs[i]
                stopped (breakpoint) thread N in main.mean at main.go:9
                    9 | 		total += xs[i]
                locals: xs = []int len: 6, cap: 6, [4,8,15,16,23,42], ~r0 = 0, total = 23, i = 3"#]],
            never_stops: expect![[r#"
                debug launch  . under delve
                breakpoint main.go:9 verified, if `i == 99`  | total += xs[i]
                the program exited with code 0
                output (tail; the output op returns all of it):
                Building <root>
                values: 6
                mean: 17.333333333333332"#]],
            function_stop: expect![[r#"
                stopped (function breakpoint) thread N in main.mean at main.go:6
                    6 | func mean(xs []int) float64 {"#]],
            function_status: expect![[r#"
                debug status  . under delve
                stopped (function breakpoint) thread N
                call stack for where, or continue / step_over
                0 breakpoints set
                function breakpoints: main.mean
                exception filters: unrecovered-panic (on), runtime-fatal-throw (on) (change with exception_breakpoints)"#]],
            ttl_status: expect![[r#"
                debug status  . under delve
                ended: the session's TTL of 20 s ran out, so the program and its adapter were terminated
                1 breakpoint set (main.go:9)
                exception filters: unrecovered-panic (on), runtime-fatal-throw (on) (change with exception_breakpoints)"#]],
        },
        logpoint_refused: None,
        condition_locals: expect!["locals: xs = []int len: 6, cap: 6, [4,8,15,16,23,42], ~r0 = 0, total = 23, i = 3"],
        greet: "cmd/greet",
        greet_without_stdin: Some(expect!["the program exited with code 0"]),
        stdin_refused: None,
        greeted: expect![[r#"
            debug launch  cmd/greet under delve
            the program exited with code 0
            output (tail; the output op returns all of it):
            Building <root>/cmd/greet
            hello Ada!"#]],
        pause_head: "debug pause  the whole program",
        pause_stop: expect!["paused — thread N"],
        listening: Some(Listening {
            start: headless_dlv,
            debuggee: Debuggee::Child("spin-bin"),
            // A headless dlv names no process to its DAP client: the
            // debuggee is the process the server on the port traces.
            attached: expect![[r#"
                debug attach  port PORT under delve
                still running after 5 s: no breakpoint was hit and the program did not exit; call pause to stop it where it is, or continue to keep waiting"#]],
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
        walk: Walk {
            file: "main.go",
            line: 7,
            program: "main.go",
            function: "main.mean",
            stop: expect![[r#"
                breakpoint main.go:7 verified  | total := 0
                stopped (breakpoint) thread N in main.mean at main.go:7
                    7 | 	total := 0"#]],
            busy: expect!["refused: a debug session is already running for this conversation: main.go under delve, stopped (breakpoint) thread N in main.mean at main.go:7"],
            stack: expect![[r#"
                debug stack  goroutine 1 (thread 1), stop 1 (breakpoint)
                frame 1  main.mean at main.go:7
                    7 | 	total := 0
                frame 2  main.main at main.go:17
                   17 | 	result := mean(values)
                pass a frame id to scopes or evaluate (valid until the program moves)"#]],
            scopes: expect![[r#"
                debug scopes  frame 1
                Locals  reference N
                pass a reference to variables"#]],
            variables: &["xs ([]int) = []int len: 6, cap: 6, [4,8,15,16,23,42]  [reference N]  [memory 0xADDR]"],
            evaluate: ("len(xs)", "6"),
            step: expect![[r#"
                stopped (step) thread N in main.mean at main.go:8
                    8 | 	for i := 1; i < len(xs); i++ {"#]],
            // delve places no breakpoint on a line without a statement.
            moved: (13, None, expect![[r#"
                debug breakpoints  main.go
                main.go:13 pending (could not find statement at <root>/main.go:13, please use a line with a statement)  | "#]]),
            printed: &["Building <root>/main.go", "values: 6", "mean: 17.333333333333332"],
            ended_status: expect![[r#"
                debug status  main.go under delve
                ended: the program exited with code 0
                0 breakpoints set
                exception filters: unrecovered-panic (on), runtime-fatal-throw (on) (change with exception_breakpoints)"#]],
        },
        paused_in: None,
        // delve has no filter for a recovered panic.
        caught: None,
        // Not tried yet: delve calls a function only through its `call`
        // command, so a blocking evaluate needs a row of its own shape.
        blocking: None,
        env_program: "cmd/env",
    }
}

/// Machine-dependent numbers out of a stop line: lldb's thread ids are the
/// OS's, a closed port is whatever the OS handed out.
fn stable(text: &str, port: Option<u16>) -> String {
    let out = masked_numbers(text, " thread ", "N");
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

/// An answer's first line without what follows its program and adapter
/// (the adapter's command line, the session's age): `launch  avg.py under
/// debugpy`.
fn head(text: &str) -> &str {
    let first = text.lines().next().unwrap_or_default();
    first.split_once(" (").map_or(first, |(h, _)| h)
}

/// An answer as a snapshot shows it: its head without the adapter's
/// command line or the session's age, the rest without notes, the
/// workspace root as `<root>`, thread ids, pids and addresses masked.
fn seen(b: &Bench, text: &str) -> String {
    let rest = after_head(text, usize::MAX);
    masked_addresses(&masked(b, &format!("{}\n{rest}", head(text))))
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
        (Some("stopped"), Some(u64::from(line))),
        "{text}"
    );
    row.looping.condition_stop.assert_eq(&seen(b, &text));
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
    // `terminate` ends the program and everything the session started.
    let recorded = b.processes().await;
    let (text, _) = b.call(json!({"op": "terminate"})).await;
    assert_eq!(
        text,
        format!(
            "debug terminate  {}\nterminated: the program, the adapter and every process they started are gone",
            row.looping.program
        )
    );
    assert_no_orphans(b, &recorded).await;

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

    // A breakpoint whose condition never holds: the program runs to its
    // end, and the answer says how it ended and what it printed.
    let (text, s) = launch_with(b, row, json!({"line": line, "condition": "i == 99"})).await;
    assert_eq!(
        (s["state"].as_str(), s["exit_code"].as_i64()),
        (Some("ended"), Some(0)),
        "{text}"
    );
    row.looping.never_stops.assert_eq(&seen(b, &text));
    let err = b.err(json!({"op": "stack"})).await;
    assert_eq!(err.to_string(), format!("refused: the debug session of {} has ended: the program exited with code 0; launch again to start a new one", row.looping.program));
    assert!(b.processes().await.is_empty());
    b.call(json!({"op": "breakpoints", "file": row.looping.file, "lines": []}))
        .await;
}

/// A program that reads stdin: without input it waits (and is said to) or
/// reads end of file at once; with `stdin` it reads the text.
async fn standard_input(b: &Bench, row: &Row) {
    if let Some(without) = &row.greet_without_stdin {
        // The bound leaves a loaded machine time to start the program
        // under its debugger and reach the read (3 s did not, with four
        // rows on two cores).
        let (text, _) = b
            .call(json!({"op": "launch", "program": row.greet, "timeout_seconds": 10}))
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
            row.greeted.assert_eq(&seen(b, &text));
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
    // No function breakpoint is kept (the adapters' filter lines that
    // follow are snapshotted by exception_filters_are_listed_before_a_start).
    let (text, _) = b.call(json!({"op": "status"})).await;
    let kept: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("debugpy: "))
        .collect();
    expect![[r#"
        debug status  no session; 0 breakpoints set
        launch a program to start one"#]]
    .assert_eq(&kept.join("\n"));

    // A function breakpoint stops in the function.
    let (text, _) = b
        .call(json!({"op": "function_breakpoints", "functions": [row.function]}))
        .await;
    expect![[r#"
        debug function_breakpoints  1 kept; sent when a program is launched
        FUNCTION"#]]
    .assert_eq(&text.replace(row.function, "FUNCTION"));
    let (text, s) = b
        .call(json!({"op": "launch", "program": l.program, "timeout_seconds": 60}))
        .await;
    assert_eq!(s["state"], "stopped", "{text}");
    l.function_stop
        .assert_eq(&stable(&after_head(&text, 2), None));
    // Started, the adapter announced the filters the catalog lists for it.
    let (after, _) = b.call(json!({"op": "adapters"})).await;
    assert_eq!(
        filter_line(&after, row.adapter),
        filter_line(&before, row.adapter).replace("when tested", "when it started in this run"),
        "the catalog's filters for {} are not those it announces",
        row.adapter
    );
    let (text, _) = b.call(json!({"op": "status"})).await;
    l.function_status.assert_eq(&seen(&b, &text));
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
    assert_eq!(s["state"], "stopped", "{text}");
    // The same stop as the first launch with this breakpoint.
    let again = seen(&b, &text);
    l.condition_stop
        .assert_eq(&again.replacen("debug restart  ", "debug launch  ", 1));
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
        (Some("stopped"), Some("avg.TestMean"), Some(u64::from(line))),
        "{text}"
    );
    let (_, s) = b.call(json!({"op": "evaluate", "expression": "got"})).await;
    assert_eq!(s["result"], "17.333333333333332");
    b.call(json!({"op": "breakpoints", "file": file, "lines": []}))
        .await;
    let (text, s) = b.call(json!({"op": "continue"})).await;
    assert_eq!(s["state"], "ended", "{text}");
    // Only TestMean ran; its failure and go test's verdict, the time it
    // took masked.
    let (out, _) = b.call(json!({"op": "output"})).await;
    expect![[r#"
        debug output  main_test.go
        Building tests of <root>
        --- FAIL: TestMean (…s)
            main_test.go:9: mean = 17.333333333333332, want 18
        FAIL
        (session ended: the program exited with code 1)"#]]
    .assert_eq(&masked_test_times(&normalized(&b, &out)));
    end(&b).await;

    // A mode that does not fit the program: a clear error, nothing started.
    let err = b
        .err(json!({"op": "launch", "program": file, "mode": "exec"}))
        .await;
    expect!["bad arguments: cannot launch `main_test.go` under delve: mode exec runs a compiled Go program, and this is not one; use mode debug for a package or .go file"]
        .assert_eq(&err.to_string());
    assert!(b.processes().await.is_empty());
}

/// `--- FAIL: TestMean (0.01s)` → `(…s)`: how long a Go test took.
fn masked_test_times(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('(') {
        let (head, tail) = rest.split_at(at + 1);
        out.push_str(head);
        let time = tail
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .count();
        if time > 0 && tail[time..].starts_with("s)") {
            out.push('…');
            rest = &tail[time..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// A `stack` answer with only the frames in the workspace (a relative path
/// and the source quoted): the C library's, the runtime's and the
/// toolchain's vary by machine.
fn workspace_frames(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let quote = |i: usize| lines.get(i).is_some_and(|l| l.contains(" | "));
    let mut kept = Vec::new();
    let mut skipping = false;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("frame ") {
            skipping = line.contains(" at /") || !quote(i + 1);
        } else if !quote(i) {
            skipping = false;
        }
        if !skipping {
            kept.push(*line);
        }
    }
    kept.join("\n")
}

/// `reference 22` → `reference N`: handles count every one issued before,
/// as many as the frames outside the workspace.
fn masked_references(text: &str) -> String {
    masked_numbers(text, "reference ", "N")
}

/// The workspace's files, every level, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                todo.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The bug found end to end: a breakpoint set before launch, the stop, a
/// second launch refused, stack, scopes, variables and an expression, bad
/// ids, a step, the earlier stop's ids refused, breakpoints changed while
/// stopped (one on a line without code, moved by the adapter), the end,
/// the output read once, and the workspace as it was.
async fn walk(dir: &Path, row: &Row) {
    let w = &row.walk;
    let b = bench(dir, config());
    let (text, s) = b.call(json!({"op": "adapters"})).await;
    assert!(
        s["usable"]
            .as_array()
            .unwrap()
            .contains(&json!(row.adapter)),
        "{text}"
    );
    let (text, _) = b
        .call(json!({"op": "breakpoints", "file": w.file, "lines": [w.line]}))
        .await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0], format!("debug breakpoints  {}", w.file));
    assert!(
        lines[1].starts_with(&format!("{}:{} set  | ", w.file, w.line)),
        "{text}"
    );
    assert_eq!(
        lines[2],
        "no session yet: they are sent to the adapter at launch"
    );
    let files = listing(dir);

    let (text, s) = b
        .call(json!({"op": "launch", "program": w.program, "timeout_seconds": 60}))
        .await;
    assert_eq!(
        head(&text),
        format!("debug launch  {} under {}", w.program, row.adapter)
    );
    assert_eq!(
        (
            s["state"].as_str(),
            s["reason"].as_str(),
            s["function"].as_str(),
            s["file"].as_str(),
            s["line"].as_u64()
        ),
        (
            Some("stopped"),
            Some("breakpoint"),
            Some(w.function),
            Some(w.file),
            Some(u64::from(w.line))
        ),
        "{text}"
    );
    w.stop.assert_eq(&stable(&after_head(&text, 3), None));
    let recorded = b.processes().await;
    assert!(
        recorded.len() >= 2,
        "adapter and debuggee recorded: {recorded:?}"
    );

    // A second launch is refused with the state of the first, which is
    // left as it was.
    let err = b
        .err(json!({"op": "launch", "program": row.looping.program}))
        .await;
    assert!(matches!(err, tool_core::ToolError::Refused(_)), "{err}");
    let said = err.to_string();
    let (before_age, _) = said.split_once(" (launched ").expect("the age is said");
    w.busy.assert_eq(&stable(before_age, None));

    let (text, stack) = b.call(json!({"op": "stack"})).await;
    w.stack.assert_eq(&stable(&workspace_frames(&text), None));
    let frame = first_frame(&stack);
    let (text, scopes) = b.call(json!({"op": "scopes", "frame_id": frame})).await;
    // The register sets lldb lists depend on the CPU.
    let shown: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("Registers "))
        .collect();
    w.scopes.assert_eq(&masked_references(&shown.join("\n")));
    let locals = scopes["scopes"][0]["reference"].as_u64().unwrap();
    let (text, _) = b
        .call(json!({"op": "variables", "reference": locals}))
        .await;
    let text = masked_addresses(&masked_references(&text));
    for line in w.variables {
        assert!(text.lines().any(|l| l == *line), "no {line:?} in:\n{text}");
    }
    let (expression, value) = w.evaluate;
    let (text, s) = b
        .call(json!({"op": "evaluate", "expression": expression, "frame_id": frame}))
        .await;
    assert_eq!(s["result"], value, "{text}");

    // Ids that never were: refused, naming what there is.
    let err = b.err(json!({"op": "stack", "thread_id": 999999})).await;
    assert_bad_thread(&err.to_string(), 999999);
    let err = b.err(json!({"op": "scopes", "frame_id": 987654})).await;
    assert_eq!(err.to_string(), "bad arguments: there is no frame 987654; take ids from stack, scopes or variables of the current stop");

    let (text, s) = b.call(json!({"op": "step_over"})).await;
    assert_eq!(s["reason"], "step", "{text}");
    w.step.assert_eq(&stable(&after_head(&text, 2), None));

    // The earlier stop's ids are refused, never answered with another
    // frame's data.
    let stale_frame = format!("refused: that frame ({frame}) is from an earlier stop; the program is now at stop 2; call stack again");
    let err = b.err(json!({"op": "scopes", "frame_id": frame})).await;
    assert_eq!(err.to_string(), stale_frame);
    let err = b
        .err(json!({"op": "evaluate", "expression": expression, "frame_id": frame}))
        .await;
    assert_eq!(err.to_string(), stale_frame);
    let err = b.err(json!({"op": "variables", "reference": locals})).await;
    assert_eq!(err.to_string(), format!("refused: that variables reference ({locals}) is from an earlier stop; the program is now at stop 2; call stack and scopes again"));

    // Breakpoints changed while stopped reach the adapter: one on a line
    // without code is moved, and the answer says where.
    let (requested, moved_to, answer) = &w.moved;
    let (text, s) = b
        .call(json!({"op": "breakpoints", "file": w.file, "lines": [requested]}))
        .await;
    answer.assert_eq(&normalized(&b, &text));
    assert_eq!(
        s["breakpoints"][0]["line"].as_u64(),
        moved_to.map(u64::from),
        "{text}"
    );
    let (text, _) = b
        .call(json!({"op": "breakpoints", "file": w.file, "lines": []}))
        .await;
    assert_eq!(
        text,
        format!(
            "debug breakpoints  {}\ncleared every breakpoint in {}",
            w.file, w.file
        )
    );
    let (text, s) = b.call(json!({"op": "continue"})).await;
    assert_eq!(
        (s["state"].as_str(), s["exit_code"].as_i64()),
        (Some("ended"), Some(0)),
        "no breakpoint is left to stop at: {text}"
    );
    let (text, _) = b.call(json!({"op": "output"})).await;
    let out = normalized(&b, &text);
    for line in w.printed {
        assert!(out.lines().any(|l| l == *line), "no {line:?} in:\n{out}");
    }
    let (text, _) = b.call(json!({"op": "output"})).await;
    assert_eq!(
        text,
        format!(
            "debug output  {}\n(no new output since the last call)\n(session ended: the program exited with code 0)",
            w.program
        )
    );
    assert_no_orphans(&b, &recorded).await;
    let (text, _) = b.call(json!({"op": "status"})).await;
    w.ended_status.assert_eq(&seen(&b, &text));
    assert_eq!(listing(dir), files, "debugging left files in the workspace");
}

/// An exception filter that stops on a caught exception: the program stops
/// where it raised, and runs on to its end once the filter is cleared. (A
/// bench of its own: the filters chosen outlive the session.)
async fn caught_exception(dir: &Path, row: &Row) {
    let Some(c) = &row.caught else {
        return;
    };
    let b = &bench(dir, config());
    b.call(json!({"op": "exception_breakpoints", "filters": [c.filter]}))
        .await;
    let (text, s) = b
        .call(json!({"op": "launch", "program": c.program, "timeout_seconds": 60}))
        .await;
    assert_eq!(
        (s["state"].as_str(), s["reason"].as_str()),
        (Some("stopped"), Some("exception")),
        "{text}"
    );
    c.stop.assert_eq(&stable(&after_head(&text, 2), None));
    b.call(json!({"op": "exception_breakpoints", "filters": []}))
        .await;
    let (text, s) = b.call(json!({"op": "continue"})).await;
    assert_eq!(s["state"], "ended", "{text}");
    let (out, _) = b.call(json!({"op": "output"})).await;
    assert!(out.lines().any(|l| l == c.printed), "{out}");
    end(b).await;
}

/// An evaluation that blocks is cut off at its bound, and the session
/// still answers and ends cleanly.
async fn blocking_evaluate(b: &Bench, row: &Row) {
    let Some(expression) = row.blocking else {
        return;
    };
    let l = &row.looping;
    let (text, s) = launch_with(b, row, json!({"line": l.line, "condition": "i == 3"})).await;
    assert_eq!(s["state"], "stopped", "{text}");
    let started = Instant::now();
    let err = b
        .err(json!({"op": "evaluate", "expression": expression, "timeout_seconds": 1}))
        .await;
    let took = started.elapsed();
    assert!(matches!(err, tool_core::ToolError::TimedOut(_)), "{err}");
    assert_eq!(err.to_string(), format!("timed out: evaluating `{expression}` did not finish within 1 s (a getter or call that blocks?); the adapter may still be running it: call status, and terminate if the session no longer answers"));
    assert!(took < Duration::from_secs(10), "cut off after {took:?}");
    let (text, s) = b.call(json!({"op": "threads"})).await;
    assert!(
        !s["threads"].as_array().unwrap().is_empty(),
        "the session no longer answers: {text}"
    );
    let (text, s) = b.call(json!({"op": "status"})).await;
    assert_eq!(s["state"], "stopped", "{text}");
    end(b).await;
    b.call(json!({"op": "breakpoints", "file": l.file, "lines": []}))
        .await;
}

/// launch's `env` and `cwd` reach the program.
async fn environment(dir: &Path, row: &Row) {
    std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
    let b = bench(dir, config());
    let (text, s) = b
        .call(json!({
            "op": "launch",
            "program": row.env_program,
            "env": {"GREETING": "hello from env"},
            "cwd": "elsewhere",
            "timeout_seconds": 60
        }))
        .await;
    assert_eq!(s["state"], "ended", "{text}");
    let (text, _) = b.call(json!({"op": "output"})).await;
    let out = normalized(&b, &text);
    let printed: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("GREETING: ") || l.starts_with("cwd: "))
        .collect();
    assert_eq!(
        printed,
        ["GREETING: hello from env", "cwd: <root>/elsewhere"],
        "{out}"
    );
    end(&b).await;
}

/// The session's TTL ends it: its processes are gone, and the next call
/// says why.
async fn ttl_ends_the_session(dir: &Path, row: &Row) {
    let mut cfg = config();
    // Long enough for a launch on a loaded machine, short for a test.
    cfg.ttl = Duration::from_secs(20);
    let b = bench(dir, cfg);
    let l = &row.looping;
    let (text, s) = launch_with(&b, row, json!({"line": l.line, "condition": "i == 3"})).await;
    assert_eq!(s["state"], "stopped", "{text}");
    let recorded = b.processes().await;
    let launched = Instant::now();
    while !b.processes().await.is_empty() && launched.elapsed() < Duration::from_secs(40) {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(all_gone(&recorded).await, "the TTL left processes behind");
    let err = b.err(json!({"op": "stack"})).await;
    assert_eq!(err.to_string(), format!("refused: the debug session of {} has ended: the session's TTL of 20 s ran out, so the program and its adapter were terminated; launch again to start a new one", l.program));
    let (text, _) = b.call(json!({"op": "status"})).await;
    l.ttl_status.assert_eq(&seen(&b, &text));
    assert_no_orphans(&b, &recorded).await;
}

async fn scenario(row: Row) {
    for any in row.needs {
        if test_support::fixtures::require(any).is_none() {
            return;
        }
    }
    if row.adapter == "debugpy" && test_support::fixtures::require(&["python3"]).is_none() {
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

    walk(dir.path(), &row).await;
    breakpoint_kinds(&b, &row).await;
    caught_exception(dir.path(), &row).await;
    blocking_evaluate(&b, &row).await;
    environment(dir.path(), &row).await;
    ttl_ends_the_session(dir.path(), &row).await;
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
        assert_eq!(
            head(&text),
            format!("debug launch  {program} under {}", row.adapter)
        );
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
    assert_eq!(
        after_head(&text, 1),
        "still running after 2 s: no breakpoint was hit and the program did not exit; call pause to stop it where it is, or continue to keep waiting"
    );
    // Ops that need a stopped program say so instead of hanging.
    let err = b.err(json!({"op": "stack"})).await;
    assert_eq!(err.to_string(), format!("refused: `stack` needs a stopped program, and {} is running; call pause to stop it where it is, or wait for a breakpoint with continue", row.spin));
    let err = b.err(json!({"op": "step_over"})).await;
    assert_eq!(err.to_string(), format!("refused: {} is already running; `step_over` needs it stopped: call pause to stop it where it is", row.spin));
    let err = b.err(json!({"op": "pause", "thread_id": 4242})).await;
    assert_bad_thread(&err.to_string(), 4242);
    wait_for_output(&b, "spinning").await;
    let (text, s) = b.call(json!({"op": "pause"})).await;
    assert_eq!(
        (s["state"].as_str(), s["reason"].as_str()),
        (Some("stopped"), Some("pause")),
        "{text}"
    );
    // Never delve's placeholder thread -1: a thread the model can name.
    assert_eq!(
        masked_numbers(text.lines().next().unwrap_or_default(), "thread ", "N"),
        row.pause_head,
        "{text}"
    );
    let first = text.lines().nth(1).unwrap_or_default();
    let upto_in = first.split(" in ").next().unwrap_or_default();
    row.pause_stop.assert_eq(&stable(upto_in, None));
    let (text, s) = b.call(json!({"op": "pause"})).await;
    let mut lines = text.lines();
    expect!["debug pause  already stopped; nothing to pause"]
        .assert_eq(lines.next().unwrap_or_default());
    // It names the thread it stands on (delve's pause names none: the
    // first real thread is named).
    let again = lines.next().unwrap_or_default();
    assert!(again.starts_with("paused — thread "), "{text}");
    assert!(!again.contains("thread -"), "{text}");
    assert_eq!(s["already"], true, "{text}");
    let (text, s) = b.call(json!({"op": "threads"})).await;
    assert!(!s["threads"].as_array().unwrap().is_empty(), "{text}");
    if let Some((frame, expression, value)) = row.paused_in {
        // The line in the loop it paused at varies.
        let (text, _) = b.call(json!({"op": "stack"})).await;
        let top = text.lines().find(|l| l.starts_with("frame "));
        assert_eq!(
            top.and_then(|l| l.split_once(':')).map(|(f, _)| f),
            Some(format!("frame 1  {frame}").as_str()),
            "{text}"
        );
        let (text, s) = b
            .call(json!({"op": "evaluate", "expression": expression}))
            .await;
        assert_eq!(s["result"], value, "{text}");
    }
    let recorded = b.processes().await;
    b.call(json!({"op": "terminate"})).await;
    assert_no_orphans(&b, &recorded).await;

    attach(&b, dir.path(), &row).await;
}

/// Attaching: to nothing, to a silent listener, then to running ones.
async fn attach(b: &Bench, dir: &Path, row: &Row) {
    // Nothing listens: refused at once, with the connection error.
    let port = closed_port();
    let started = Instant::now();
    let err = b
        .err(json!({"op": "attach", "port": port, "adapter": row.adapter, "timeout_seconds": 5}))
        .await;
    let took = started.elapsed();
    row.closed_port
        .assert_eq(&stable(&normalized(b, &err.to_string()), Some(port)));
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
    assert!(matches!(err, tool_core::ToolError::TimedOut(_)), "{err}");
    // Which step of the handshake the bound cut off depends on the
    // adapter and on how loaded the machine is.
    let said = err.to_string();
    let (step, after) = said
        .strip_prefix("timed out: the adapter did not ")
        .and_then(|rest| rest.split_once(" within 2000 ms; "))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        matches!(
            step,
            "answer `initialize`" | "answer `attach`" | "become ready (no `initialized` event)"
        ),
        "{said}"
    );
    expect!["gave up, and nothing of this session is left running"]
        .assert_eq(after.split(';').next().unwrap_or_default());
    assert!(took < Duration::from_secs(5), "gave up after {took:?}");
    assert!(b.processes().await.is_empty());
    drop(silent);
    attach_running(b, dir, row).await;
}

/// Attaching to a debuggee started outside the run, and to a running
/// process by its pid: `terminate` lets each go on running.
async fn attach_running(b: &Bench, dir: &Path, row: &Row) {
    // Attached to a debuggee started outside the run, `terminate`
    // disconnects and leaves it running.
    if let Some(listening) = &row.listening {
        let port = closed_port();
        let mut server = (listening.start)(dir, port);
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
        // Where an attach that stops stands, and why, varies: lldb-server
        // starts the program stopped at its entry, and it stops again in the
        // loader, so the stop is said up to its reason.
        let said: Vec<String> = stable(&seen(b, &text), Some(port))
            .lines()
            .map(|l| match l.split_once(" (") {
                Some((stopped, _)) if stopped == "stopped" => stopped.to_string(),
                _ => l.to_string(),
            })
            .collect();
        listening.attached.assert_eq(&said.join("\n"));
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
        wait_for_pause(b).await;
        let (text, s) = b.call(json!({"op": "terminate"})).await;
        assert_eq!(
            (
                s["detached"]["pid"].as_u64(),
                s["detached"]["alive"].as_bool()
            ),
            (Some(u64::from(debuggee)), Some(true)),
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
    // debugpy attaches by pid through gdb, which some machines refuse (a
    // virtual CPU's register state gdb cannot write back): there the attach
    // is refused at once, saying so, instead of waiting for nothing.
    let gdb_refused = match row.adapter {
        "debugpy" => tool_debug::adapters::debugpy::gdb_can_inject().err(),
        _ => None,
    };
    if let (Some(spinner), Some(why)) = (row.spinner, gdb_refused) {
        let mut program = spinner(dir);
        let pid = program.id();
        let err = b
            .err(json!({"op": "attach", "pid": pid, "timeout_seconds": 20}))
            .await;
        assert_eq!(
            err.to_string(),
            format!(
                "refused: {}",
                tool_debug::adapters::debugpy::pid_attach_refusal(&why)
            )
        );
        assert!(tool_core::process::pid_alive(pid), "the process was harmed");
        kill(pid);
        let _ = program.wait();
    } else if let Some(spinner) = row.spinner {
        let mut program = spinner(dir);
        let pid = program.id();
        // Without `adapter`: routed by what the process runs.
        let (text, _) = b
            .call(json!({"op": "attach", "pid": pid, "timeout_seconds": 20}))
            .await;
        assert_eq!(
            head(&text),
            format!("debug attach  pid {pid} under {}", row.adapter)
        );
        wait_for_pause(b).await;
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
        assert_no_orphans(b, &recorded).await;
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
        node …
          exception filters (as the adapter announced when tested): all, uncaught (on by default)
        java …
          exception filters (as the adapter announced when tested): caught, uncaught (on by default)
        choose exception filters with exception_breakpoints (before or after launch)"#]].assert_eq(&shown.join("\n"));
    assert_eq!(
        s["exception_filters"][0]["filters"][1],
        json!({"id": "uncaught", "label": "Uncaught Exceptions", "default": true})
    );

    assert_status_without_session(&b).await;
    b.call(json!({"op": "exception_breakpoints", "filters": ["raised"]}))
        .await;
    let (text, _) = b.call(json!({"op": "status"})).await;
    expect![[r#"
        debug status  no session; 0 breakpoints set
        launch a program to start one
        exception filters chosen: raised
        debugpy: exception filters (as the adapter announced when tested): raised, uncaught (on by default), userUnhandled
        lldb: exception filters (as the adapter announced when tested): cpp_catch, cpp_throw, objc_catch, objc_throw, swift_catch, swift_throw
        delve: exception filters (as the adapter announced when tested): unrecovered-panic (on by default), runtime-fatal-throw (on by default)
        node: exception filters (as the adapter announced when tested): all, uncaught (on by default)
        java: exception filters (as the adapter announced when tested): caught, uncaught (on by default)"#]].assert_eq(&text);
}

/// The attached program, running, is paused. The attach itself may have
/// stopped it — lldb-server launches it stopped at its entry, and it stops
/// again (SIGSTOP) in the loader — so it is continued until it runs
/// (bounded); a program detached while still in the loader did not survive
/// the detach in a clean-clone CI run.
async fn wait_for_pause(b: &Bench) {
    let (mut text, mut s) = b.call(json!({"op": "status"})).await;
    for _ in 0..5 {
        if s["state"] != "stopped" {
            break;
        }
        (text, s) = b
            .call(json!({"op": "continue", "timeout_seconds": 1}))
            .await;
    }
    assert_eq!(s["state"], "running", "{text}");
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

/// debugpy with a project `.venv` that lacks it: the adapter runs with the
/// fixtures' debugpy, the program with the project's interpreter, and the
/// launch says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_runs_the_program_with_the_project_venv() {
    if test_support::fixtures::require(&["debugpy"]).is_none()
        || test_support::fixtures::require(&["python3"]).is_none()
    {
        return;
    }
    let dir = copy_fixture("python");
    let status = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(dir.path())
        .env("PATH", test_support::fixtures::path_env())
        .status()
        .unwrap();
    assert!(status.success());
    let b = bench(dir.path(), config());
    let (text, _) = b.call(json!({"op": "adapters"})).await;
    expect![[r#"
        debugpy  usable: `<fixtures>/venv/bin/python3 -m debugpy.adapter` (marker requirements.txt); debugpy is not installed in the project interpreter .venv/bin/python (project .venv); the adapter runs with <fixtures>/venv/bin/python3 (debugpy VERSION) and the program still runs with .venv/bin/python
          exception filters (as the adapter announced when tested): raised, uncaught (on by default), userUnhandled"#]].assert_eq(&masked(&b, &adapter_lines(&text, "debugpy")));
    b.call(json!({"op": "breakpoints", "file": "avg.py", "lines": [6]}))
        .await;
    let (text, s) = b.call(json!({"op": "launch", "program": "avg.py"})).await;
    // With its note on which interpreter runs what.
    let rest: Vec<&str> = text.lines().skip(1).collect();
    expect![[r#"
        debug launch  avg.py under debugpy
        note: debugpy is not installed in the project interpreter .venv/bin/python (project .venv); the adapter runs with <fixtures>/venv/bin/python3 (debugpy VERSION) and the program still runs with .venv/bin/python
        breakpoint avg.py:6 verified  | total = 0
        stopped (breakpoint) thread N in mean at avg.py:6
            6 |     total = 0
        locals: xs = [4, 8, 15, 16, 23, 42]"#]]
    .assert_eq(&masked(
        &b,
        &format!("{}\n{}", head(&text), rest.join("\n")),
    ));
    assert_eq!(
        (s["state"].as_str(), s["line"].as_u64()),
        (Some("stopped"), Some(6)),
        "{text}"
    );
    let (text, s) = b.call(json!({"op": "continue"})).await;
    assert_eq!(s["state"], "ended", "{text}");
    // The program ran with the project .venv.
    let (text, _) = b.call(json!({"op": "output"})).await;
    expect![[r#"
        debug output  avg.py
        interpreter prefix: <root>/.venv
        mean: 17.333333333333332
        (session ended: the program exited with code 0)"#]]
    .assert_eq(&masked(&b, &text));
    end(&b).await;
}

/// Bad input, before any session: a clear error each, and nothing kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_clear_errors_and_changes_nothing() {
    let dir = copy_fixture("python");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.py"), "print(1)\n").unwrap();
    let b = bench(dir.path(), config());
    let mut errors = Vec::new();
    for args in [
        json!({"op": "frobnicate"}),
        json!({"op": "launch"}),
        json!({"op": "launch", "program": "missing.py"}),
        json!({"op": "launch", "program": "requirements.txt"}),
        json!({"op": "launch", "program": "avg.py", "adapter": "gdb"}),
        json!({"op": "breakpoints", "file": outside.path().join("x.py"), "lines": [1]}),
        json!({"op": "breakpoints", "file": "../x.py", "lines": [1]}),
        json!({"op": "breakpoints", "file": "avg.py", "lines": [0]}),
        json!({"op": "breakpoints", "file": "avg.py", "lines": [{"line": 6, "when": "x"}]}),
        json!({"op": "breakpoints", "file": "avg.py", "lines": ["6"]}),
        json!({"op": "breakpoints", "file": "avg.py", "lines": [{"line": 6, "condition": " "}]}),
        json!({"op": "breakpoints", "file": "avg.py", "lines": [6, {"line": 6, "hit_condition": "2"}]}),
        json!({"op": "stack"}),
        json!({"op": "launch", "program": "avg.py", "colour": 1}),
    ] {
        let err = b.err(args).await.to_string();
        let outside = outside.path().canonicalize().unwrap();
        errors.push(normalized(&b, &err).replace(outside.to_str().unwrap(), "<outside>"));
    }
    expect![[r#"
        [
            "bad arguments: argument `op`: unknown variant `frobnicate`, expected one of `adapters`, `status`, `breakpoints`, `function_breakpoints`, `exception_breakpoints`, `launch`, `restart`, `attach`, `continue`, `pause`, `step_over`, `step_in`, `step_out`, `threads`, `stack`, `scopes`, `variables`, `locals`, `evaluate`, `set_variable`, `modules`, `disassemble`, `read_memory`, `output`, `terminate`; check the tool's input schema",
            "bad arguments: launch needs `program`: the file to run (a .py, .go, .js or .java file, a Go package folder, or a compiled executable), relative to the workspace root; or `module` (Python's `python -m MODULE`), or `test` as a pytest node id (tests/test_x.py::test_y)",
            "bad arguments: program `missing.py` does not exist in the workspace; check the path (relative to the workspace root), or build it first",
            "bad arguments: cannot tell which debugger runs `requirements.txt`: it is not a .py, .go, .js, .mjs, .cjs, .dart or .java file, a Go package or a compiled executable; pass `adapter` (one of debugpy, lldb, delve, dart, node, java), or for C/C++ launch the executable built with -g",
            "bad arguments: unknown adapter `gdb`; known: debugpy, lldb, delve, dart, node, java",
            "bad arguments: `<outside>/x.py` is outside the workspace; only paths inside <root> can be used (give them relative to it)",
            "bad arguments: `../x.py` is outside the workspace; only paths inside <root> can be used (give them relative to it)",
            "bad arguments: line 0 is not a line: lines are 1-based",
            "bad arguments: argument `lines[0]`: unknown field `when`, expected one of `line`, `condition`, `hit_condition`, `log_message`; check the tool's input schema",
            "bad arguments: argument `lines[0]`: a breakpoint is a line number or an object like {\"line\": 12, \"condition\": \"x > 3\"}, not \"6\"; check the tool's input schema",
            "bad arguments: the breakpoint at line 6: `condition` is empty; leave it out, or give it text",
            "bad arguments: line 6 is given twice, with different conditions; give each line once",
            "refused: no debug session is running; set breakpoints and launch a program first",
            "bad arguments: argument `colour`: unknown field `colour`, expected one of `op`, `file`, `lines`, `functions`, `filters`, `program`, `args`, `stdin`, `env`, `cwd`, `mode`, `test`, `module`, `adapter`, `port`, `pid`, `thread_id`, `frame_id`, `reference`, `expression`, `context`, `name`, `value`, `memory_reference`, `count`, `timeout_seconds`; check the tool's input schema",
        ]
    "#]].assert_debug_eq(&errors);
    let (text, s) = b.call(json!({"op": "status"})).await;
    assert_eq!(s["state"], "none", "{text}");
    assert_eq!(s["breakpoints"], 0, "{text}");

    // Breakpoints with empty lines clear the file.
    b.call(json!({"op": "breakpoints", "file": "avg.py", "lines": [6, 9]}))
        .await;
    let (text, _) = b
        .call(json!({"op": "breakpoints", "file": "avg.py", "lines": []}))
        .await;
    assert_eq!(
        text,
        "debug breakpoints  avg.py\ncleared every breakpoint in avg.py"
    );
    let (text, s) = b.call(json!({"op": "status"})).await;
    assert_eq!(s["breakpoints"], 0, "{text}");
}

/// delve lists goroutines as threads: `threads` names each goroutine with
/// its place in the program's code, `stack` says whose stack it is, and
/// while the program runs the placeholder thread is said to be one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delve_names_goroutines() {
    for any in [&["dlv"][..], &["go"][..]] {
        if test_support::fixtures::require(any).is_none() {
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
    // The head (the count of the runtime's goroutines masked) and the
    // lines in the program's code, each worker as `worker` with its id
    // masked.
    let (count, said) = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("debug threads  "))
        .and_then(|l| l.split_once(' '))
        .unwrap_or_else(|| panic!("no goroutine count: {text}"));
    assert!(count.parse::<u32>().is_ok(), "{text}");
    let mut shown = vec![format!("debug threads  N {said}")];
    for line in text.lines().skip(1) {
        let Some((who, at)) = line.split_once(" at ") else {
            continue;
        };
        let place = at.split_whitespace().next().unwrap_or_default();
        let worker = [
            ("main.worker", "cmd/workers/main.go:"),
            ("main.main.gowrap1", "cmd/workers/main.go:16"),
            ("main.main.gowrap2", "cmd/workers/main.go:17"),
        ]
        .iter()
        .any(|(function, line)| who.ends_with(&format!("  {function}")) && place.starts_with(line));
        if worker {
            shown.push("worker goroutine".to_string());
        } else if at.starts_with("cmd/workers/") {
            shown.push(line.replace(&os_thread.to_string(), "T"));
        }
    }
    expect![[r#"
        debug threads  N goroutines (delve lists each goroutine as a thread; pass the id on the left as thread_id)
             1  goroutine 1  main.main at cmd/workers/main.go:18  (stopped here; on OS thread T)
        worker goroutine
        worker goroutine"#]].assert_eq(&shown.join("\n"));
    let (text, _) = b.call(json!({"op": "stack"})).await;
    expect![[r#"
        debug stack  goroutine 1 (thread 1), stop 1 (breakpoint)
        frame 1  main.main at cmd/workers/main.go:18
           18 | 	fmt.Println("workers started")
        pass a frame id to scopes or evaluate (valid until the program moves)"#]]
    .assert_eq(&workspace_frames(&text));
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

/// A thread id that does not exist is refused, naming the threads there
/// are, or saying the adapter lists none at the moment (delve while the
/// program runs).
fn assert_bad_thread(err: &str, id: u64) {
    let none = format!("bad arguments: thread {id} does not exist; the adapter lists no threads at the moment (some list them only while the program is stopped: call pause, then threads)");
    let listed = format!("bad arguments: thread {id} does not exist; threads are: ");
    assert!(
        err == none
            || err
                .strip_prefix(&listed)
                .is_some_and(|list| !list.is_empty()),
        "{err}"
    );
}
