//! `[lsp] shared = true` through the binary, with real basedpyright: four
//! `batch` runs on one checkout share one server under the broker the
//! first of them started, answer as a private run does, keep answering
//! when one run is SIGKILLed, and once the last run ends the server and
//! the broker are gone within the idle timeout (nothing left that carries
//! the test's marker variable). The same with four `agent-tools mcp`
//! processes driven by the official MCP client (`lsp_broker_mcp.py`).

#![cfg(feature = "lsp")]

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};
use test_support::shared_servers::{self, SharedCheckout, HOVER, HOVER_SIGNATURE};
use test_support::{cli, fixtures};
use tool_core::process::procfs;

const MARK: &str = "BROKER_TEST_MARK";

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
        self.hover_with_lines().0
    }

    /// The hover's answer, and the other lines of the answer.
    fn hover_with_lines(&mut self) -> (String, Vec<String>) {
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
                // The rest of the answer (its notices): written with it in
                // one write, so in the pipe already.
                while let Ok(more) = self.lines.recv_timeout(Duration::from_secs(2)) {
                    seen.push(more);
                }
                return (line, seen);
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
    shared_servers::basedpyright_groups(MARK, marker)
}

/// A Python checkout with its configs (see [`SharedCheckout`]), the
/// test's marker and the environment of the runs (the broker's folder,
/// the marker).
struct Setup {
    checkout: SharedCheckout,
    root: std::path::PathBuf,
    shared: std::path::PathBuf,
    private: std::path::PathBuf,
    marker: String,
    env: [(&'static str, String); 2],
}

/// `idle_ms`: the shared config's idle timeout (a run's too).
fn setup(idle_ms: u64) -> Setup {
    let checkout = SharedCheckout::new(idle_ms);
    let marker = format!("{}-{}", std::process::id(), checkout.dir.path().display());
    let env = [
        (
            "AGENT_TOOLS_BROKER_DIR",
            checkout.broker_dir.display().to_string(),
        ),
        (MARK, marker.clone()),
    ];
    Setup {
        root: checkout.root.clone(),
        shared: checkout.shared.clone(),
        private: checkout.private.clone(),
        checkout,
        marker,
        env,
    }
}

/// Wait until nothing carrying the marker runs (bounded generously).
fn wait_for_none_left(marker: &str) {
    let left = shared_servers::survivors_after(MARK, marker, Duration::from_mins(1));
    assert!(left.is_empty(), "still running: {left:#?}");
}

/// Nothing carrying the marker runs any more and the socket is gone.
fn assert_all_gone(s: &Setup) {
    wait_for_none_left(&s.marker);
    let socket = s.checkout.socket();
    assert!(!socket.exists(), "{} is left", socket.display());
}

/// Two shared runs that have answered a hover, from one server.
fn two_shared_runs(s: &Setup) -> Vec<Run> {
    let mut runs: Vec<Run> = (0..2)
        .map(|_| Run::start(&s.root, &s.shared, &s.env))
        .collect();
    for run in &mut runs {
        assert_eq!(run.hover(), HOVER_SIGNATURE);
    }
    assert_eq!(server_groups(&s.marker).len(), 1);
    runs
}

/// The broker's pid (it leads its own session; its keepers do not).
fn broker_pid(marker: &str) -> Option<u32> {
    procfs::with_environment(MARK, marker)
        .into_iter()
        .filter(|pid| procfs::cmdline(*pid).is_some_and(|c| c.ends_with("lsp-broker")))
        .find(|pid| procfs::stat(*pid).is_some_and(|s| s.session == *pid))
}

#[test]
fn four_runs_share_one_server_and_nothing_outlives_the_last() {
    if fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let s = setup(5000);
    let mut alone = Run::start(&s.root, &s.private, &s.env);
    let expected = alone.hover();
    assert_eq!(expected, HOVER_SIGNATURE);
    alone.end();

    let mut runs: Vec<Run> = (0..4)
        .map(|_| Run::start(&s.root, &s.shared, &s.env))
        .collect();
    for run in &mut runs {
        assert_eq!(run.hover(), expected);
    }
    let groups = server_groups(&s.marker);
    assert_eq!(groups.len(), 1, "one server for four runs: {groups:?}");

    // SIGKILL one run: the others keep answering from the same server.
    let mut killed = runs.remove(0);
    killed.child.kill().unwrap();
    killed.child.wait().unwrap();
    for run in &mut runs {
        assert_eq!(run.hover(), expected);
    }
    assert_eq!(server_groups(&s.marker), groups);

    // The last run's end: the server, its keeper and the broker go within
    // the idle timeout (bounded generously).
    for run in runs {
        run.end();
    }
    assert_all_gone(&s);
}

#[test]
fn the_brokers_death_makes_runs_fall_back_with_a_notice() {
    if fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    // Long enough that no run's server stops for idleness meanwhile.
    let s = setup(60_000);
    let mut runs = two_shared_runs(&s);
    let broker = broker_pid(&s.marker).expect("a broker runs");
    tool_core::process::signals::send(broker, tool_core::process::Signal::Kill).unwrap();
    // Its server goes with it (its keeper's owner is gone).
    let until = Instant::now() + Duration::from_mins(1);
    while !server_groups(&s.marker).is_empty() {
        assert!(Instant::now() < until, "the broker's server outlived it");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Each run says so once and answers from a server of its own.
    for run in &mut runs {
        let (answer, before) = run.hover_with_lines();
        assert_eq!(answer, HOVER_SIGNATURE);
        let notices: Vec<&String> = before
            .iter()
            .filter(|l| l.contains("the shared-server broker is gone"))
            .collect();
        assert_eq!(notices.len(), 1, "{before:#?}");
    }
    assert_eq!(server_groups(&s.marker).len(), 2);
    // The next run starts a new broker (its server, started by a run with a
    // short idle timeout, ends soon after that run).
    let short = s.checkout.dir.path().join("short.toml");
    std::fs::write(&short, "[lsp]\nshared = true\nidle_timeout_ms = 3000\n").unwrap();
    let mut next = Run::start(&s.root, &short, &s.env);
    assert_eq!(next.hover(), HOVER_SIGNATURE);
    let again = broker_pid(&s.marker).expect("a new broker");
    assert_ne!(again, broker);
    assert_eq!(server_groups(&s.marker).len(), 3);
    next.end();
    for run in runs {
        run.end();
    }
    wait_for_none_left(&s.marker);
    drop(s.checkout);
}

/// The fixtures' Python with the MCP SDK (`mcp` on PyPI), or `None`
/// (skipped locally; a failure in CI).
fn sdk_python() -> Option<std::path::PathBuf> {
    let venv = fixtures::dir().join("venv");
    let has_sdk = std::fs::read_dir(venv.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|d| d.path().join("site-packages/mcp/client").is_dir());
    if has_sdk {
        return Some(venv.join("bin/python"));
    }
    let msg = format!("fixture missing: the MCP Python SDK in {}", venv.display());
    assert!(!fixtures::in_ci(), "{msg}");
    eprintln!("skipping: {msg}");
    None
}

/// Four `agent-tools mcp` processes, driven by the official MCP client
/// (`lsp_broker_mcp.py`), share one basedpyright: hover, definition and
/// diagnostics answer alike in all four; SIGKILL of one leaves the others
/// answering from the same server; after the last closes nothing carrying
/// the marker remains and the socket is gone.
#[test]
fn several_mcp_clients_share_one_server() {
    let Some(py) = sdk_python() else { return };
    if fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let s = setup(3000);
    let mut env: serde_json::Map<String, serde_json::Value> = s
        .env
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone().into()))
        .collect();
    env.insert("PATH".into(), fixtures::path_env().to_string_lossy().into());
    let plan = serde_json::json!({
        "command": env!("CARGO_BIN_EXE_agent-tools"),
        "args": ["mcp", "--root", s.root, "--config", s.shared],
        "env": env,
        "cwd": s.root,
        "clients": 4,
        "timeout": 180,
        "marker_var": MARK,
        "marker": s.marker,
        "calls": [
            {"op": "hover", "file": "app.py", "line": 5, "symbol": "greet"},
            {"op": "definition", "file": "app.py", "line": 5, "symbol": "greet"},
            {"op": "diagnostics", "file": "app.py"},
        ],
    });
    let plan_file = s.checkout.dir.path().join("plan.json");
    std::fs::write(&plan_file, plan.to_string()).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp_broker_mcp.py");
    let mut child = Command::new(py)
        .arg(script)
        .arg(&plan_file)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let lines = cli::stdout_lines(&mut child);
    let report = lines
        .recv_timeout(Duration::from_mins(5))
        .unwrap_or_else(|e| {
            let _ = child.kill();
            panic!("no report from the MCP driver ({e})")
        });
    let until = Instant::now() + Duration::from_mins(1);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < until, "the MCP driver did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
    let r: serde_json::Value = serde_json::from_str(&report).unwrap();
    let first = r["first"].as_array().unwrap();
    assert_eq!(first.len(), 4);
    expect_test::expect![[r#"
        [
          "lsp hover  `greet` at app.py:5\n(function) def greet(name: str) -> str",
          "lsp definition  `greet` at app.py:5\napp.py:1    def greet(name: str) -> str:  (in greet)",
          "lsp diagnostics  app.py (python + ruff)\nno errors or warnings"
        ]"#]]
    .assert_eq(&serde_json::to_string_pretty(&first[0]).unwrap());
    for answers in first {
        assert_eq!(answers, &first[0]);
    }
    let groups = r["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "one server for four clients: {groups:?}");
    let after = r["after_kill"].as_array().unwrap();
    assert_eq!(after.len(), 3);
    for answers in after {
        assert_eq!(answers, &first[0]);
    }
    assert_eq!(&r["groups_after_kill"], &r["groups"]);
    assert_all_gone(&s);
}

/// The orphan probe for the broker: every shared run ends by SIGKILL
/// (none detaches cleanly), and still, within the idle timeout, nothing
/// carrying the marker remains (server, keepers, broker) and the socket
/// is gone.
#[test]
fn nothing_outlives_shared_runs_that_are_all_sigkilled() {
    if fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let s = setup(2000);
    let runs = two_shared_runs(&s);
    assert!(broker_pid(&s.marker).is_some(), "a broker runs");
    for mut run in runs {
        run.child.kill().unwrap();
        run.child.wait().unwrap();
    }
    assert_all_gone(&s);
}
