//! Fault suite for ast_grep and ast_edit (issue 13, items 3 and 4), against
//! the release binary: `agent-tools batch` gets one JSON call per line and
//! answers each with one line. Hostile input — a pattern nested 5,000 deep,
//! files nested 10,000 deep, a 10 MB pattern, a 10 MB rewrite — gets a clear
//! answer, quickly and in small memory, and the host answers the next call.

use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use test_support::cli::stdout_lines;
use tool_core::format::thousands;

/// Longest wait for one answer: far more than any of these calls needs, and
/// short enough that a wedged host fails the test instead of hanging it.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// A running `agent-tools batch` over a workspace. Dropped before
/// [`Batch::finish`] (a failed assertion), it kills and reaps the host, so
/// no test leaves one behind.
struct Batch {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: mpsc::Receiver<String>,
    reaped: bool,
}

impl Drop for Batch {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Batch {
    fn start(root: &Path) -> Batch {
        let bin = tests::built_agent_tools_bin();
        let mut child = Command::new(bin)
            .args(["batch", "-", "--surface", "write", "--root"])
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("agent-tools starts");
        let answers = stdout_lines(&mut child);
        Batch {
            stdin: child.stdin.take(),
            child,
            answers,
            reaped: false,
        }
    }

    /// Send one call; its answer line, and how long it took.
    fn call(&mut self, tool: &str, args: Value) -> (String, Duration) {
        let line = json!({"tool": tool, "args": args}).to_string();
        let started = Instant::now();
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        match self.answers.recv_timeout(ANSWER_WITHIN) {
            Ok(answer) => (answer, started.elapsed()),
            Err(e) => panic!(
                "no answer to {tool} within {ANSWER_WITHIN:?} ({e}); host exit status: {:?}",
                self.child.try_wait()
            ),
        }
    }

    /// The host is alive and serving: a small search gets its answer.
    fn assert_serving(&mut self) {
        let (answer, _) = self.call("ast_grep", json!({"pattern": "alive($X)"}));
        let v: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(v["ok"], true, "{answer}");
        assert_eq!(v["structured"]["total"], 1, "{answer}");
    }

    /// Close stdin and wait for the exit; the peak resident memory in KiB.
    fn finish(mut self) -> i64 {
        drop(self.stdin.take());
        let pid = self.child.id() as libc::pid_t;
        let deadline = Instant::now() + ANSWER_WITHIN;
        loop {
            let mut status = 0;
            // SAFETY: an all-zero rusage is a valid value to be overwritten.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: wait4 on our own child, with valid pointers.
            let done = unsafe { libc::wait4(pid, &raw mut status, libc::WNOHANG, &raw mut usage) };
            if done == pid {
                self.reaped = true;
                assert!(
                    libc::WIFEXITED(status),
                    "the host did not exit normally: status {status:#x}"
                );
                return usage.ru_maxrss;
            }
            assert_eq!(done, 0, "wait4 failed");
            assert!(
                Instant::now() <= deadline,
                "the host did not exit within {ANSWER_WITHIN:?} of stdin closing"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A workspace with these files and `alive.py`, the probe of
/// [`Batch::assert_serving`].
fn workspace(files: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("alive.py"), "alive(1)\n").unwrap();
    for (rel, text) in files {
        std::fs::write(dir.path().join(rel), text).unwrap();
    }
    dir
}

fn parse(answer: &str) -> Value {
    serde_json::from_str(answer).unwrap_or_else(|e| panic!("not JSON ({e}): {answer:.300}"))
}

#[test]
fn a_pattern_nested_5000_deep_is_refused_and_the_host_serves_on() {
    let dir = workspace(&[]);
    let mut host = Batch::start(dir.path());
    for (lang, open, close) in [
        (None, "[", "]"),
        (Some("javascript"), "(", ")"),
        (Some("c"), "{", "}"),
    ] {
        let pattern = format!("{}1{}", open.repeat(5000), close.repeat(5000));
        let mut args = json!({"pattern": pattern});
        if let Some(l) = lang {
            args["language"] = json!(l);
        }
        let (answer, took) = host.call("ast_grep", args);
        let v = parse(&answer);
        assert_eq!(v["ok"], false, "{answer:.300}");
        assert_eq!(
            v["error"]["message"],
            "bad arguments: pattern nested too deeply: 5,000 levels of brackets; the limit is 128 — match an inner piece with fewer levels, using `$_` for what it contains"
        );
        assert!(took < Duration::from_secs(1), "{took:?}");
        host.assert_serving();
    }
    // Nesting without brackets is refused too, by its tree's depth.
    let (answer, _) = host.call(
        "ast_grep",
        json!({"pattern": vec!["a"; 5000].join(" + "), "language": "python"}),
    );
    let v = parse(&answer);
    assert_eq!(
        v["error"]["message"],
        "bad arguments: pattern nested too deeply: its syntax tree for python is 5,002 levels deep; the limit is 320 — match a smaller piece of the code"
    );
    host.assert_serving();
    host.finish();
}

#[test]
fn files_nested_10000_deep_are_skipped_and_named_and_the_host_serves_on() {
    // `$X == $X` compares its two captures node by node, recursively: on
    // these files that is 10,000 levels, which overflowed the stack before.
    let py_side = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    let paren_side = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
    let dir = workspace(&[
        ("deep.py", format!("x = {py_side} == {py_side}\n")),
        ("deep.js", format!("x = {paren_side} == {paren_side};\n")),
        (
            "deep.c",
            format!("int f(void) {{ return {paren_side} == {paren_side}; }}\n"),
        ),
        ("ok.py", "same = a == a\n".into()),
    ]);
    let mut host = Batch::start(dir.path());
    let (answer, _) = host.call("ast_grep", json!({"pattern": "$X == $X"}));
    let v = parse(&answer);
    assert_eq!(v["ok"], true, "{answer:.500}");
    let text = v["content"][0]["text"].as_str().unwrap();
    let skipped: Vec<&str> = text.lines().filter(|l| l.starts_with("skipped ")).collect();
    assert_eq!(
        skipped,
        [
            "skipped deep.c: too deeply nested: 10,006 levels, limit 5,000",
            "skipped deep.js: too deeply nested: 10,005 levels, limit 5,000",
            "skipped deep.py: too deeply nested: 10,005 levels, limit 5,000",
        ],
        "{text}"
    );
    assert_eq!(v["structured"]["total"], 1, "{text}");
    assert_eq!(v["structured"]["matches"][0]["path"], "ok.py");
    // ast_edit over the same files stages the shallow one only.
    let (answer, _) = host.call(
        "ast_edit",
        json!({"pattern": "$X == $X", "rewrite": "True"}),
    );
    let v = parse(&answer);
    assert_eq!(v["ok"], true, "{answer:.500}");
    assert_eq!(v["structured"]["files"], json!(["ok.py"]));
    host.assert_serving();
    host.finish();
}

#[test]
fn a_10_mb_pattern_is_refused_in_under_a_second_in_small_memory() {
    let dir = workspace(&[("a.py", "foo(1)\n".into())]);
    let mut host = Batch::start(dir.path());
    let (answer, took) = host.call("ast_grep", json!({"pattern": "a".repeat(10 * 1024 * 1024)}));
    let v = parse(&answer);
    assert_eq!(
        v["error"]["message"],
        "bad arguments: pattern is 10,485,760 bytes; the limit is 65,536 — a pattern is one code fragment, so match a smaller piece of the code"
    );
    assert!(took < Duration::from_secs(1), "took {took:?}");
    host.assert_serving();
    let peak_kib = host.finish();
    // Before the cap: 23 s and 2.4 GB. The JSON line alone is 10 MB, read
    // and parsed once.
    assert!(peak_kib < 100 * 1024, "peak RSS {peak_kib} KiB");
}

#[test]
fn a_10_mb_rewrite_gets_a_small_answer() {
    // A 10 MB rewrite text is refused; a rewrite of a 9 MiB line (files over
    // 10 MiB are not searched) is staged whole, and its preview shows 240
    // characters of it.
    const LINE: usize = 9 * 1024 * 1024;
    let long = format!("x = \"{}\"\n", "a".repeat(LINE));
    let dir = workspace(&[("long.py", long)]);
    let mut host = Batch::start(dir.path());
    let (answer, took) = host.call(
        "ast_edit",
        json!({"pattern": "foo($X)", "rewrite": "b".repeat(10 * 1024 * 1024)}),
    );
    assert!(answer.len() < 1024, "{} bytes", answer.len());
    assert_eq!(
        parse(&answer)["error"]["message"],
        "bad arguments: rewrite is 10,485,760 bytes; the limit is 65,536 — stage a smaller replacement; nothing was staged"
    );
    assert!(took < Duration::from_secs(1), "took {took:?}");

    let (answer, _) = host.call(
        "ast_edit",
        json!({"pattern": "x = $V", "rewrite": "y = $V", "language": "python"}),
    );
    assert!(answer.len() < 64 * 1024, "{} bytes", answer.len());
    let v = parse(&answer);
    assert_eq!(v["ok"], true, "{answer:.500}");
    let text = v["content"][0]["text"].as_str().unwrap();
    let removed = text
        .lines()
        .find(|l| l.starts_with("-x = "))
        .unwrap_or_else(|| panic!("{text:.2000}"));
    // `-x = "` and the closing `"` around the line's `a`s.
    let marker = format!("… ({} more characters)", thousands(LINE + 7 - 240));
    assert!(removed.ends_with(&marker), "{removed}");
    assert_eq!(removed.chars().count(), 240 + marker.chars().count());
    // Accepting writes the whole line.
    let (answer, _) = host.call(
        "resolve",
        json!({"edit_id": v["structured"]["edit_id"], "action": "accept"}),
    );
    assert_eq!(parse(&answer)["ok"], true, "{answer}");
    let written = std::fs::read_to_string(dir.path().join("long.py")).unwrap();
    assert_eq!(written.len(), LINE + 7);
    assert!(written.starts_with("y = \"aaa"));
    host.assert_serving();
    host.finish();
}
