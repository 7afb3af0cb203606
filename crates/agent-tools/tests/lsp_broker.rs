//! `[lsp] shared = true` through the binary, with real basedpyright: four
//! `batch` runs on one checkout share one server under the broker the
//! first of them started, answer as a private run does, keep answering
//! when one run is SIGKILLed, and once the last run ends the server and
//! the broker are gone within the idle timeout (nothing left that carries
//! the test's marker variable).

#![cfg(feature = "lsp")]

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};
use test_support::{cli, fixtures};
use tool_core::process::procfs;

const HOVER: &str =
    r#"{"tool":"lsp","args":{"op":"hover","file":"app.py","line":5,"symbol":"greet"}}"#;

struct Run {
    child: Child,
    lines: Receiver<String>,
}

impl Run {
    fn start(root: &std::path::Path, config: &std::path::Path, env: &[(&str, String)]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-tools"));
        cmd.args(["batch", "--text", "--root"])
            .arg(root)
            .arg("--config")
            .arg(config)
            .arg("-")
            .env("PATH", fixtures::path_env())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let lines = cli::stdout_lines(&mut child);
        Run { child, lines }
    }

    /// The hover's answer: the line that shows the signature.
    fn hover(&mut self) -> String {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{HOVER}").unwrap();
        stdin.flush().unwrap();
        let until = Instant::now() + Duration::from_mins(2);
        let mut seen = Vec::new();
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no hover answer ({e}); saw {seen:#?}"));
            if line.starts_with("(function)") || line.starts_with("error") {
                return line;
            }
            seen.push(line);
        }
    }

    /// Close its input and wait for it to end.
    fn end(mut self) {
        drop(self.child.stdin.take());
        let until = Instant::now() + Duration::from_mins(1);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < until, "the run did not end");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The process groups of basedpyright servers started under the marker.
fn server_groups(marker: &str) -> std::collections::BTreeSet<u32> {
    procfs::with_environment("BROKER_TEST_MARK", marker)
        .into_iter()
        .filter(|pid| procfs::cmdline(*pid).is_some_and(|c| c.contains("langserver.index.js")))
        .filter_map(|pid| procfs::stat(pid).map(|s| s.pgrp))
        .collect()
}

#[test]
fn four_runs_share_one_server_and_nothing_outlives_the_last() {
    if fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
    std::fs::write(
        root.join("app.py"),
        "def greet(name: str) -> str:\n    return name\n\n\nx = greet(\"a\")\n",
    )
    .unwrap();
    let shared = dir.path().join("shared.toml");
    std::fs::write(&shared, "[lsp]\nshared = true\nidle_timeout_ms = 5000\n").unwrap();
    let private = dir.path().join("private.toml");
    std::fs::write(&private, "[lsp]\nshared = false\n").unwrap();
    let marker = format!("{}-{}", std::process::id(), dir.path().display());
    let env = [
        (
            "AGENT_TOOLS_BROKER_DIR",
            dir.path().join("broker").display().to_string(),
        ),
        ("BROKER_TEST_MARK", marker.clone()),
    ];

    let mut alone = Run::start(&root, &private, &env);
    let expected = alone.hover();
    assert_eq!(expected, "(function) def greet(name: str) -> str");
    alone.end();

    let mut runs: Vec<Run> = (0..4).map(|_| Run::start(&root, &shared, &env)).collect();
    for run in &mut runs {
        assert_eq!(run.hover(), expected);
    }
    let groups = server_groups(&marker);
    assert_eq!(groups.len(), 1, "one server for four runs: {groups:?}");

    // SIGKILL one run: the others keep answering from the same server.
    let mut killed = runs.remove(0);
    killed.child.kill().unwrap();
    killed.child.wait().unwrap();
    for run in &mut runs {
        assert_eq!(run.hover(), expected);
    }
    assert_eq!(server_groups(&marker), groups);

    // The last run's end: the server, its keeper and the broker go within
    // the idle timeout (bounded generously).
    for run in runs {
        run.end();
    }
    let until = Instant::now() + Duration::from_mins(1);
    loop {
        let left = procfs::with_environment("BROKER_TEST_MARK", &marker);
        if left.is_empty() {
            break;
        }
        let lines: Vec<String> = left
            .iter()
            .map(|p| format!("{p}: {}", procfs::cmdline(*p).unwrap_or_default()))
            .collect();
        assert!(Instant::now() < until, "still running: {lines:#?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(!dir
        .path()
        .join("broker")
        .join("lsp-broker-0.1.0.sock")
        .exists());
}
