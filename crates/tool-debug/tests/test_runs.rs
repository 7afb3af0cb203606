//! Tests under the debugger, as data: each case is a fixture project, the
//! breakpoints and exception filters set first, then calls in order with
//! the text the model reads after each. Every case ends with `terminate`
//! and no process left. Python cases run real pytest and unittest under
//! real debugpy; Rust cases build with real cargo and run under real lldb.

mod common;

use common::*;
use expect_test::{expect, Expect};
use serde_json::{json, Value};

/// One debugging session over a test, and what the model must read.
struct Case {
    name: &'static str,
    fixture: &'static str,
    /// Tools the case needs (each inner list: any one of them).
    needs: &'static [&'static [&'static str]],
    /// Run in the workspace copy first (a project `.venv`, a build).
    prepare: Option<fn(&std::path::Path)>,
    /// Breakpoints set before the launch: file, lines.
    breakpoints: &'static [(&'static str, &'static [u32])],
    /// Exception filters set before the launch (`None`: the defaults).
    filters: Option<&'static [&'static str]>,
    /// The calls, in order, each with its answer (masked).
    calls: Vec<(Value, Expect)>,
}

/// Answers as a snapshot shows them: [`masked`], pytest's timings as
/// `TIME`, and its lines that name versions and plugins left out.
fn shown(b: &Bench, text: &str) -> String {
    let text = masked(b, text);
    // A Rust test binary's hash (`deps/mean-5aba84649365cb3d`), and
    // libtest's timings (`finished in 0.00s`).
    let text = masked_after(&text, "deps/mean-", "HASH", |c| c.is_ascii_hexdigit());
    let text = masked_after(&text, "deps/stats-", "HASH", |c| c.is_ascii_hexdigit());
    let text = masked_after(&text, "finished in ", "TIME", |c| {
        c.is_ascii_digit() || c == '.'
    });
    // The panicking thread's id (`thread 'median_of_four' (30683)`), lldb's
    // addresses (the stack moves with the environment's size), and which
    // lldb this machine has.
    let text = masked_after(&text, "' (", "TID", |c| c.is_ascii_digit());
    let text = masked_after(&text, "0x", "ADDR", |c| c.is_ascii_hexdigit());
    let text = masked_after(&text, " under lldb (`", "LLDB", |c| c != '`');
    let text = masked_after(&text, " in ", "TIME", |c| c.is_ascii_digit() || c == '.');
    text.replace(" in TIMEs", " in TIME")
        .lines()
        .filter(|l| {
            !["platform ", "rootdir: ", "plugins: "]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A project `.venv` without pytest (and without pip): unittest runs.
fn venv_without_pytest(dir: &std::path::Path) {
    let status = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(dir)
        .env("PATH", test_support::fixtures::path_env())
        .status()
        .unwrap();
    assert!(status.success());
}

#[allow(
    clippy::too_many_lines,
    reason = "a table: one row literal per case, no logic to split"
)]
fn python_cases() -> Vec<Case> {
    const PY: &[&[&str]] = &[&["debugpy"], &["python3"]];
    vec![
        Case {
            name:
                "a pytest test by name in its file: stops in the test, then in the code under test",
            fixture: "pytests",
            needs: PY,
            prepare: None,
            breakpoints: &[("tests/test_stats.py", &[6]), ("stats.py", &[5])],
            filters: None,
            calls: vec![
                (
                    json!({"op": "launch", "program": "tests/test_stats.py", "test": "test_mean"}),
                    expect![[r#"
                        debug launch  pytest tests/test_stats.py::test_mean under debugpy (`<fixtures>/venv/bin/python3 -m debugpy.adapter`)
                        note: adapter and program run with <fixtures>/venv/bin/python3 (python3 on PATH, debugpy VERSION)
                        breakpoint stats.py:5 verified  | return total / len(xs)
                        breakpoint tests/test_stats.py:6 verified  | result = mean(values)
                        stopped (breakpoint) thread N in test_mean at tests/test_stats.py:6
                            6 |     result = mean(values)
                        locals: values = [4, 8, 15, 16, 23, 42]"#]],
                ),
                (
                    json!({"op": "continue"}),
                    expect![[r#"
                    debug continue  thread N
                    stopped (breakpoint) thread N in mean at stats.py:5
                        5 |     return total / len(xs)
                    locals: total = 108, x = 42, xs = [4, 8, 15, 16, 23, 42]"#]],
                ),
                (
                    json!({"op": "continue"}),
                    expect![[r#"
                    debug continue  thread N
                    the program exited with code 0
                    output (tail; the output op returns all of it):
                    ============================= test session starts ==============================
                    configfile: pyproject.toml
                    collected 1 item

                    tests/test_stats.py .                                                    [100%]

                    ============================== 1 passed in TIME ==============================="#]],
                ),
            ],
        },
        Case {
            name: "a failing assertion, by node id, stops where it failed with its values",
            fixture: "pytests",
            needs: PY,
            prepare: None,
            breakpoints: &[],
            filters: Some(&["userUnhandled"]),
            calls: vec![
                (
                    json!({"op": "launch", "test": "tests/test_stats.py::test_median"}),
                    expect![[r#"
                        debug launch  pytest tests/test_stats.py::test_median under debugpy (`<fixtures>/venv/bin/python3 -m debugpy.adapter`)
                        note: adapter and program run with <fixtures>/venv/bin/python3 (python3 on PATH, debugpy VERSION)
                        stopped: AssertionError: assert 3 == 2.5 — thread N in test_median at tests/test_stats.py:13
                           13 |     assert got == 2.5
                        locals: got = 3, values = [1, 2, 3, 4]"#]],
                ),
                (
                    json!({"op": "continue"}),
                    expect![[r#"
                    debug continue  thread N
                    the program exited with code 1
                    output (tail; the output op returns all of it):
                    ============================= test session starts ==============================
                    configfile: pyproject.toml
                    collected 1 item

                    tests/test_stats.py F                                                    [100%]

                    =================================== FAILURES ===================================
                    _________________________________ test_median __________________________________

                        def test_median():
                            values = [1, 2, 3, 4]
                            got = median(values)
                    >       assert got == 2.5
                    E       assert 3 == 2.5

                    tests/test_stats.py:13: AssertionError
                    =========================== short test summary info ============================
                    FAILED tests/test_stats.py::test_median - assert 3 == 2.5
                    ============================== 1 failed in TIME ==============================="#]],
                ),
            ],
        },
        Case {
            name: "a unittest test where the project interpreter has no pytest",
            fixture: "pytests",
            needs: PY,
            prepare: Some(venv_without_pytest),
            breakpoints: &[("stats.py", &[5])],
            filters: None,
            calls: vec![
                (
                    json!({"op": "launch", "program": "tests/test_units.py", "test": "test_mean"}),
                    expect![[r#"
                        debug launch  unittest tests.test_units.MeanTest.test_mean under debugpy (`<fixtures>/venv/bin/python3 -m debugpy.adapter`)
                        note: debugpy is not installed in the project interpreter .venv/bin/python (project .venv); the adapter runs with <fixtures>/venv/bin/python3 (debugpy VERSION) and the program still runs with .venv/bin/python
                        breakpoint stats.py:5 verified  | return total / len(xs)
                        stopped (breakpoint) thread N in mean at stats.py:5
                            5 |     return total / len(xs)
                        locals: total = 12, x = 6, xs = [1, 2, 3, 6]"#]],
                ),
                (
                    json!({"op": "continue"}),
                    expect![[r#"
                    debug continue  thread N
                    the program exited with code 0
                    output (tail; the output op returns all of it):
                    .
                    ----------------------------------------------------------------------
                    Ran 1 test in TIME

                    OK"#]],
                ),
            ],
        },
        Case {
            name: "a module: python -m pytest -k",
            fixture: "pytests",
            needs: PY,
            prepare: None,
            breakpoints: &[("stats.py", &[11])],
            filters: None,
            calls: vec![(
                json!({"op": "launch", "module": "pytest", "args": ["tests/test_stats.py", "-k", "median"]}),
                expect![[r#"
                        debug launch  python -m pytest tests/test_stats.py -k median under debugpy (`<fixtures>/venv/bin/python3 -m debugpy.adapter`)
                        note: adapter and program run with <fixtures>/venv/bin/python3 (python3 on PATH, debugpy VERSION)
                        breakpoint stats.py:11 verified  | return ordered[middle]
                        stopped (breakpoint) thread N in median at stats.py:11
                           11 |     return ordered[middle]
                        locals: middle = 2, ordered = [1, 2, 3, 4], xs = [1, 2, 3, 4]"#]],
            )],
        },
        Case {
            name: "a test that hangs is reported at the bound",
            fixture: "pytests",
            needs: PY,
            prepare: None,
            breakpoints: &[],
            filters: None,
            calls: vec![(
                json!({"op": "launch", "test": "tests/test_hang.py::test_forever", "timeout_seconds": 4}),
                expect![[r#"
                    debug launch  pytest tests/test_hang.py::test_forever under debugpy (`<fixtures>/venv/bin/python3 -m debugpy.adapter`)
                    note: adapter and program run with <fixtures>/venv/bin/python3 (python3 on PATH, debugpy VERSION)
                    still running after 4 s: no breakpoint was hit and the program did not exit; call pause to stop it where it is, or continue to keep waiting
                    latest output:
                    ============================= test session starts ==============================
                    configfile: pyproject.toml
                    collected 1 item

                    tests/test_hang.py"#]],
            )],
        },
    ]
}

const LLDB: &[&[&str]] = &[&["lldb-dap", "lldb-vscode-14", "lldb-vscode"], &["cargo"]];

fn rust_cases() -> Vec<Case> {
    vec![
        Case {
            name: "an integration test by name: stops in the test, then in the code under test",
            fixture: "rusttests",
            needs: LLDB,
            prepare: None,
            breakpoints: &[("tests/mean.rs", &[6]), ("src/lib.rs", &[6])],
            filters: None,
            calls: vec![
                (
                    json!({"op": "launch", "program": "tests/mean.rs", "test": "mean_of_six"}),
                    expect![[r#"
                        debug launch  cargo test --test mean -- mean_of_six --exact under lldb (`LLDB`)
                        breakpoint src/lib.rs:6 verified  | total / xs.len() as i64
                        breakpoint tests/mean.rs:6 verified  | let result = mean(&values);
                        stopped (breakpoint: breakpoint 2.1) thread N in mean::mean_of_six at tests/mean.rs:6
                            6 |     let result = mean(&values);
                        locals: values = size=6"#]],
                ),
                (
                    json!({"op": "continue"}),
                    expect![[r#"
                    debug continue  thread N
                    stopped (breakpoint: breakpoint 1.1) thread N in stats::mean at src/lib.rs:6
                        6 |     total / xs.len() as i64
                    locals: xs = size=6, total = 108"#]],
                ),
                (
                    json!({"op": "continue"}),
                    expect![[r#"
                    debug continue  thread N
                    the program exited with code 0
                    output (tail; the output op returns all of it):

                    running 1 test
                    test mean_of_six ... ok

                    test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 1 filtered out; finished in TIME"#]],
                ),
            ],
        },
        Case {
            name: "a failing assert_eq! stops at the panic with its message",
            fixture: "rusttests",
            needs: LLDB,
            prepare: None,
            breakpoints: &[],
            filters: None,
            calls: vec![
                (
                    // The panic's message without the backtrace a
                    // RUST_BACKTRACE in the test run's environment adds.
                    json!({"op": "launch", "program": "tests/mean.rs", "test": "median_of_four",
                        "env": {"RUST_BACKTRACE": "0"}}),
                    expect![[r#"
                        debug launch  cargo test --test mean -- median_of_four --exact under lldb (`LLDB`)
                        stopped: panic: assertion `left == right` failed: median of [1, 2, 3, 4] (at tests/mean.rs:14:5) — thread N in mean::median_of_four at tests/mean.rs:14 (below 8 frames outside the workspace; stack shows all)
                           14 |     assert_eq!(got, 2, "median of {values:?}");
                        locals: values = size=4, got = 3, left_val = 0xADDR, right_val = 0xADDR (and 1 more: call locals)"#]],
                ),
                (
                    json!({"op": "continue"}),
                    expect![[r#"
                    debug continue  thread N
                    the program exited with code 101
                    output (tail; the output op returns all of it):

                    running 1 test
                    test median_of_four ...
                    thread 'median_of_four' (TID) panicked at tests/mean.rs:14:5:
                    assertion `left == right` failed: median of [1, 2, 3, 4]
                      left: 3
                     right: 2
                    note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
                    FAILED

                    failures:

                    failures:
                        median_of_four

                    test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 1 filtered out; finished in TIME"#]],
                ),
            ],
        },
        Case {
            name: "a unit test of the library, by its short name in src/lib.rs",
            fixture: "rusttests",
            needs: LLDB,
            prepare: None,
            breakpoints: &[("src/lib.rs", &[22])],
            filters: None,
            calls: vec![(
                json!({"op": "launch", "program": "src/lib.rs", "test": "mean_of_one"}),
                expect![[r#"
                    debug launch  cargo test --lib -- tests::mean_of_one --exact under lldb (`LLDB`)
                    breakpoint src/lib.rs:22 verified  | assert_eq!(mean(&one), 7);
                    stopped (breakpoint: breakpoint 1.1) thread N in stats::tests::mean_of_one at src/lib.rs:22
                       22 |         assert_eq!(mean(&one), 7);
                    locals: one = long[1] @ 0xADDR"#]],
            )],
        },
    ]
}

async fn run(case: Case) {
    for any in case.needs {
        if test_support::fixtures::require(any).is_none() {
            return;
        }
    }
    eprintln!("== {}", case.name);
    let dir = copy_fixture(case.fixture);
    if let Some(prepare) = case.prepare {
        prepare(dir.path());
    }
    let b = bench(dir.path(), config());
    for (file, lines) in case.breakpoints {
        b.call(json!({"op": "breakpoints", "file": file, "lines": lines}))
            .await;
    }
    if let Some(filters) = case.filters {
        b.call(json!({"op": "exception_breakpoints", "filters": filters}))
            .await;
    }
    for (args, expected) in case.calls {
        let (text, _) = b.call(args).await;
        expected.assert_eq(&shown(&b, &text));
    }
    let recorded = b.processes().await;
    b.call(json!({"op": "terminate"})).await;
    assert_no_orphans(&b, &recorded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_tests_under_debugpy() {
    for case in python_cases() {
        run(case).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_tests_under_lldb() {
    for case in rust_cases() {
        run(case).await;
    }
}

/// A Rust test launch that cannot run is answered with why before lldb
/// starts (the compiler's errors, the binary's tests), and no session or
/// process is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_rust_test_launches_are_answered_and_start_nothing() {
    for any in LLDB {
        if test_support::fixtures::require(any).is_none() {
            return;
        }
    }
    let dir = copy_fixture("rusttests");
    let b = bench(dir.path(), config());
    let mut said = Vec::new();
    let refusals = [
        json!({"op": "launch", "program": "tests/mean.rs", "test": "mean_of_seven"}),
        json!({"op": "launch", "program": "tests/mean.rs", "test": "--list"}),
        json!({"op": "launch", "program": "tests/mean.rs", "test": "mean_of_six", "mode": "test"}),
        json!({"op": "launch", "program": "Cargo.toml", "test": "mean_of_six"}),
    ];
    for args in refusals {
        said.push(shown(&b, &b.err(args).await.to_string()));
    }
    let lib = dir.path().join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(
        &lib,
        text.replace("let mut total = 0;", "let mut total: i64 = \"0\";"),
    )
    .unwrap();
    said.push(shown(
        &b,
        &b.err(json!({"op": "launch", "program": "tests/mean.rs", "test": "mean_of_six"}))
            .await
            .to_string(),
    ));
    expect![[r#"
        bad arguments: cannot run test `mean_of_seven` of tests/mean.rs (target/debug/deps/mean-HASH): no test is named `mean_of_seven`; the binary holds 2: mean_of_six, median_of_four
        bad arguments: `test` is `--list`, not a Rust test name (like mean_of_six, or tests::mean_of_one)
        bad arguments: `mode` is for Go programs under delve, and `tests/mean.rs` is a Rust test file run under lldb; leave it out
        bad arguments: cannot tell which debugger runs `Cargo.toml`: it is not a .py, .go, .js, .mjs, .cjs, .dart or .java file, a Go package or a compiled executable; pass `adapter` (one of debugpy, lldb, delve, dart, node, java), or for C/C++ launch the executable built with -g
        failed: `cargo test --no-run --test mean` failed:
        error[E0308]: mismatched types
         --> src/lib.rs:2:26
          |
        2 |     let mut total: i64 = "0";
          |                    ---   ^^^ expected `i64`, found `&str`
          |                    |
          |                    expected due to this"#]]
    .assert_eq(&said.join("\n"));
    assert_status_without_session(&b).await;
    assert!(b.processes().await.is_empty());
}

/// A test launch that cannot run is refused before anything starts, with
/// why, and no session is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_test_launches_are_refused_and_change_nothing() {
    if test_support::fixtures::require(&["debugpy"]).is_none()
        || test_support::fixtures::require(&["python3"]).is_none()
    {
        return;
    }
    let dir = copy_fixture("pytests");
    venv_without_pytest(dir.path());
    std::fs::write(
        dir.path().join("tests/test_marked.py"),
        "import pytest\n\n\ndef test_one():\n    assert True\n",
    )
    .unwrap();
    let b = bench(dir.path(), config());
    let refusals = [
        json!({"op": "launch", "module": "pytest", "program": "tests/test_stats.py"}),
        json!({"op": "launch", "module": "-m pytest"}),
        json!({"op": "launch", "program": "tests", "test": "test_mean"}),
        json!({"op": "launch", "program": "stats.py", "test": "tests/test_stats.py::test_mean"}),
        json!({"op": "launch", "test": "tests/test_nothing.py::test_mean"}),
        json!({"op": "launch", "program": "tests/test_units.py", "test": "-k mean"}),
        json!({"op": "launch", "program": "tests/test_units.py", "test": "test_median"}),
        json!({"op": "launch", "program": "tests/test_marked.py", "test": "test_one"}),
        json!({"op": "launch", "program": "tests/test_units.py", "test": "test_mean", "mode": "test"}),
    ];
    let mut said = Vec::new();
    for args in refusals {
        said.push(masked(&b, &b.err(args).await.to_string()));
    }
    expect![[r#"
        bad arguments: `module` runs python -m pytest with `args`, so `program` does not fit with it; leave `program` out (a pytest selection goes in args: ["tests/test_x.py", "-k", "mean"])
        bad arguments: `module` is `-m pytest`, not a Python module name (like pytest, http.server or mypkg.cli)
        bad arguments: cannot tell which debugger runs `tests`: it is not a .py, .go, .js, .mjs, .cjs, .dart or .java file, a Go package or a compiled executable; pass `adapter` (one of debugpy, lldb, delve, dart, node, java), or for C/C++ launch the executable built with -g
        bad arguments: `test` names the file tests/test_stats.py and `program` is stats.py; leave `program` out (the node id names the file), or pass only the test's name
        bad arguments: program `tests/test_nothing.py` does not exist in the workspace; check the path (relative to the workspace root), or build it first
        bad arguments: cannot run test `-k mean` of tests/test_units.py: `test` is `-k mean`, not a test name (like test_mean, TestStats::test_mean, or tests/test_stats.py::test_mean)
        bad arguments: cannot run test `test_median` of tests/test_units.py: no method `test_median` in a class of tests/test_units.py; name it as Class.test_median
        not available here: tests/test_marked.py imports pytest, and the project interpreter .venv/bin/python cannot import it; install it there (`.venv/bin/python -m pip install pytest`)
        bad arguments: `mode` is for Go programs under delve, and `tests/test_units.py` goes to the debugpy adapter; leave it out (`test` runs a Python test, `module` runs python -m)"#]]
    .assert_eq(&said.join("\n"));
    assert_status_without_session(&b).await;
    assert!(b.processes().await.is_empty());
}
