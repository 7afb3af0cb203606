//! The debug tool through the binary: `agent-tools batch` keeps one run, so a
//! debugpy session spans its calls, and nothing outlives the process.
#![cfg(all(feature = "debug", feature = "cli"))]

use expect_test::expect;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use test_support::cli::text;

/// A word after `thread` or `debugpy` masked: `thread 1` → `thread N`,
/// `debugpy 1.8.22)` → `debugpy VERSION)`.
fn masked_word(previous: Option<&str>, word: &str) -> String {
    let version = word.trim_end_matches(|c: char| !c.is_ascii_digit()).len();
    match previous {
        Some("thread") if word.parse::<u64>().is_ok() => "N".to_string(),
        Some("debugpy") if word.starts_with(|c: char| c.is_ascii_digit()) => {
            format!("VERSION{}", &word[version..])
        }
        _ => word.to_string(),
    }
}

/// `text` as a snapshot shows it: the project folder as `<root>`, the
/// fixtures' as `<fixtures>`, thread ids and debugpy's version masked,
/// lines without trailing spaces.
fn masked(text: &str, root: &Path) -> String {
    let mut out = text.replace(
        &test_support::fixtures::dir().display().to_string(),
        "<fixtures>",
    );
    for dir in [root.canonicalize().unwrap_or_default(), root.to_path_buf()] {
        if !dir.as_os_str().is_empty() {
            out = out.replace(&dir.display().to_string(), "<root>");
        }
    }
    let lines: Vec<String> = out
        .lines()
        .map(|line| {
            let words: Vec<&str> = line.trim_end().split(' ').collect();
            let masked: Vec<String> = words
                .iter()
                .enumerate()
                .map(|(i, w)| masked_word(i.checked_sub(1).map(|p| words[p]), w))
                .collect();
            masked.join(" ")
        })
        .collect();
    lines.join("\n")
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agent-tools"));
    c.env("PATH", test_support::fixtures::path_env());
    c
}

fn batch(root: &Path, extra: &[&str], calls: &[Value]) -> Vec<Value> {
    let out = test_support::cli::batch(
        bin().arg("batch").arg("--root").arg(root).args(extra),
        calls,
    );
    assert!(out.elapsed < Duration::from_mins(2));
    eprintln!("{}\n{}", out.stdout, out.stderr);
    out.answers()
}

/// Live processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    use tool_core::process::procfs;
    procfs::live_processes()
        .into_iter()
        .filter(|s| procfs::cmdline(s.pid).is_some_and(|c| c.contains(needle)))
        .map(|s| s.pid)
        .collect()
}

fn python_project() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("debug-batch-")
        .tempdir()
        .unwrap();
    let fixture = test_support::project::fixture("debug", "python");
    for f in ["avg.py", "requirements.txt"] {
        std::fs::copy(fixture.join(f), dir.path().join(f)).unwrap();
    }
    dir
}

#[test]
fn a_debug_session_spans_batch_calls_and_dies_with_the_process() {
    if test_support::fixtures::require(&["debugpy"]).is_none() {
        return;
    }
    let dir = python_project();
    let results = batch(
        dir.path(),
        &[],
        &[
            json!({"tool": "debug", "args": {"op": "breakpoints", "file": "avg.py", "lines": [9]}}),
            json!({"tool": "debug", "args": {"op": "launch", "program": "avg.py"}}),
            json!({"tool": "debug", "args": {"op": "evaluate", "expression": "total"}}),
            json!({"tool": "debug", "args": {"op": "launch", "program": "avg.py"}}),
            json!({"tool": "debug", "args": {"op": "continue"}}),
            json!({"tool": "debug", "args": {"op": "output"}}),
        ],
    );
    assert_eq!(results.len(), 6);
    assert!(results[0]["ok"].as_bool().unwrap());
    let launch = &results[1];
    assert_eq!(launch["structured"]["state"], "stopped", "{launch}");
    expect![[r#"
        debug launch  avg.py under debugpy (`<fixtures>/venv/bin/python3 -m debugpy.adapter`)
        note: adapter and program run with <fixtures>/venv/bin/python3 (python3 on PATH, debugpy VERSION)
        breakpoint avg.py:9 verified  | return total / len(xs)
        stopped (breakpoint) thread N in mean at avg.py:9
            9 |     return total / len(xs)
        locals: i = 5, total = 104, xs = [4, 8, 15, 16, 23, 42]"#]].assert_eq(&masked(&text(launch), dir.path()));
    assert_eq!(results[2]["structured"]["result"], "104", "{}", results[2]);
    assert_eq!(results[3]["ok"], false);
    assert_eq!(results[3]["error"]["kind"], "refused", "{}", results[3]);
    assert_eq!(results[4]["structured"]["exit_code"], 0, "{}", results[4]);
    expect![[r#"
        debug output  avg.py
        interpreter prefix: <fixtures>/venv
        mean: 17.333333333333332
        (session ended: the program exited with code 0)"#]]
    .assert_eq(&masked(&text(&results[5]), dir.path()));
    let needle = dir.path().to_string_lossy().into_owned();
    assert!(processes_mentioning(&needle).is_empty());
}

#[test]
fn a_session_left_stopped_is_killed_when_batch_ends() {
    if test_support::fixtures::require(&["debugpy"]).is_none() {
        return;
    }
    let dir = python_project();
    let cfg = dir.path().join("agent-tools.toml");
    std::fs::write(&cfg, "[debug]\nttl_seconds = 600\nwait_seconds = 40\n").unwrap();
    let results = batch(
        dir.path(),
        &["--config", cfg.to_str().unwrap()],
        &[
            json!({"tool": "debug", "args": {"op": "breakpoints", "file": "avg.py", "lines": [6]}}),
            json!({"tool": "debug", "args": {"op": "launch", "program": "avg.py"}}),
            json!({"tool": "debug", "args": {"op": "status"}}),
        ],
    );
    assert_eq!(
        results[1]["structured"]["state"], "stopped",
        "{}",
        results[1]
    );
    // The session's age, and the seconds of its TTL left, vary; the
    // minutes show the configured TTL (600 s).
    let status = masked(&text(&results[2]), dir.path());
    let (head, rest) = status.split_once('\n').unwrap();
    let (launched, ttl) = head.split_once(" (launched ").unwrap();
    let (_, ttl) = ttl.split_once(" ago, ").unwrap();
    let (minutes, seconds) = ttl.split_once(" min ").unwrap();
    assert_eq!(
        seconds.split_once(" s ").map(|(_, s)| s),
        Some("of its TTL left)"),
        "{status}"
    );
    expect![[r#"
        debug status  avg.py under debugpy (launched … ago, 9 min … s of its TTL left)
        stopped (breakpoint) thread N
        call stack for where, or continue / step_over
        1 breakpoint set (avg.py:6)
        exception filters: raised (off), uncaught (on), userUnhandled (off) (change with exception_breakpoints)"#]]
    .assert_eq(&format!("{launched} (launched … ago, {minutes} min … s of its TTL left)\n{rest}"));
    // The process exited with the session still stopped: the debuggee and
    // the adapter went with it.
    let needle = dir.path().join("avg.py").to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_mentioning(&needle).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        processes_mentioning(&needle).is_empty(),
        "a debuggee outlived batch"
    );

    // A bad [debug] section is reported, not ignored.
    std::fs::write(&cfg, "[debug]\nttl = 5\n").unwrap();
    let out = bin()
        .args(["doctor", "--root"])
        .arg(dir.path())
        .arg("--config")
        .arg(&cfg)
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&out.stdout);
    // The table's debug row.
    let row = doctor
        .lines()
        .find(|l| l.split_whitespace().next() == Some("debug"))
        .unwrap_or_else(|| panic!("no debug row: {doctor}"));
    expect!["debug           exec   yes       no          needs debug-session supervisor + working directory + conversation id: config <root>/agent-tools.toml: [debug] ttl = 5: unknown field `ttl`, expected one of `ttl_seconds`, `wait_seconds`, `handshake_seconds`, `adapters`, `disable`"].assert_eq(&masked(row, dir.path()));
}

#[test]
fn doctor_reports_which_adapters_are_usable_here() {
    let dir = python_project();
    // `--all`: a line for each adapter, those of other languages too (plain
    // `doctor` groups them; tests/cli.rs snapshots that).
    let out = bin()
        .args(["doctor", "--all", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&out.stdout);
    // The debug section, the lines of the adapters a Python project cannot
    // use up to why (what else is installed depends on the machine).
    let section: Vec<&str> = doctor
        .lines()
        .skip_while(|l| *l != "debug:")
        .take_while(|l| !l.is_empty())
        .filter_map(|l| match l.split_whitespace().next() {
            Some("debug:") => Some(l),
            Some("lldb" | "delve") => l.split_once(':').map(|(usable, _)| usable),
            _ => None,
        })
        .collect();
    expect![[r#"
        debug:
          lldb     not usable
          delve    not usable"#]]
    .assert_eq(&section.join("\n"));
}
