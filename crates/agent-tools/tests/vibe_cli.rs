//! The vibe tools through the binary: `--vibe-fast`/`--vibe-good` (or the
//! config file) turn vibe mode on for `call` and `batch`, with the test
//! worker script as the real worker commands.
#![cfg(all(feature = "vibe", feature = "cli"))]

use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use test_support::cli::text;
use tool_core::process::pid_alive;

fn worker(tier: &str) -> String {
    let script = test_support::fixtures::workspace_root().join("tests/fixtures/vibe/worker.sh");
    assert!(script.is_file(), "{} is missing", script.display());
    format!("sh {} {tier}", script.display())
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agent-tools"))
}

/// Run `batch` with these calls; one JSON result per call.
fn batch(extra: &[String], root: &std::path::Path, calls: &[Value]) -> (i32, Vec<Value>) {
    let (code, lines, _) = batch_with_stderr(extra, root, calls);
    (code, lines)
}

/// `batch`, and what it said on stderr.
fn batch_with_stderr(
    extra: &[String],
    root: &std::path::Path,
    calls: &[Value],
) -> (i32, Vec<Value>, String) {
    let out = test_support::cli::batch(
        bin().arg("batch").arg("--root").arg(root).args(extra),
        calls,
    );
    assert!(out.elapsed < Duration::from_mins(1));
    (out.code(), out.answers(), out.stderr)
}

/// A config file in `dir` with this `[vibe]` section (and the fast worker).
fn vibe_config(dir: &std::path::Path, settings: &str) -> Vec<String> {
    let config = dir.join("agent-tools.toml");
    std::fs::write(
        &config,
        format!("[vibe]\nfast = {:?}\n{settings}", worker("fast")),
    )
    .unwrap();
    vec!["--config".into(), config.display().to_string()]
}

/// Elapsed times (`0.3s`, under a minute) and notice ages masked, for
/// snapshots.
fn masked(text: &str) -> String {
    tool_core::format::mask_elapsed(&tool_core::notices::mask_ages(text))
}

/// A process list's pids masked (`pid 4242  sleep 300` → `pid …  sleep
/// 300`), and the checkout's path as `ROOT`.
fn masked_pids(text: &str) -> String {
    let root = test_support::fixtures::workspace_root();
    let text = text.replace(&root.display().to_string(), "ROOT");
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let indent = &l[..l.len() - l.trim_start().len()];
            match l
                .trim_start()
                .strip_prefix("pid ")
                .and_then(|r| r.split_once("  "))
            {
                Some((_, command)) => format!("{indent}pid …  {command}"),
                None => l.to_string(),
            }
        })
        .collect();
    lines.join("\n")
}

#[test]
fn batch_spawns_waits_lists_and_no_worker_outlives_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile: PathBuf = dir.path().join("left.pid");
    // The input ends with w3 still running: batch waits 1 s for it, then
    // kills it and says so.
    let mut flags = vibe_config(dir.path(), "batch_wait_seconds = 1\n");
    flags.extend(["--vibe-good".to_string(), worker("good")]);
    let (code, results, stderr) = batch_with_stderr(
        &flags,
        dir.path(),
        &[
            json!({"tool": "vibe_spawn", "args": {"brief": "say ported 3 files", "label": "port"}}),
            json!({"tool": "vibe_spawn", "args": {"brief": "say looks fine", "label": "review", "tier": "good"}}),
            json!({"tool": "vibe_spawn", "args": {"brief": format!("children {}\n", pidfile.display()), "label": "forever"}}),
            json!({"tool": "vibe_wait", "args": {"worker_id": "w1", "timeout_seconds": 20}}),
            json!({"tool": "vibe_wait", "args": {"worker_id": "w2", "timeout_seconds": 20}}),
            json!({"tool": "vibe_wait", "args": {"worker_id": "w3", "timeout_seconds": 1}}),
            json!({"tool": "vibe_list"}),
        ],
    );
    assert_eq!(code, 1, "workers killed at the end: {results:#?}");
    let shown: Vec<String> = results[..7]
        .iter()
        .map(|r| masked_pids(&masked(&text(r))))
        .collect();
    expect_test::expect![[r#"
        [
            "spawned w1 \"port\" (fast, run 1); it runs in the background — vibe_wait w1 for its result, vibe_send to steer it",
            "spawned w2 \"review\" (good, run 1); it runs in the background — vibe_wait w2 for its result, vibe_send to steer it",
            "spawned w3 \"forever\" (fast, run 1); it runs in the background — vibe_wait w3 for its result, vibe_send to steer it",
            "w1 \"port\" (fast, run 1) done after …s\nresult:\nfast worker w1 run 1 (port)\nported 3 files\nfinished",
            "w2 \"review\" (good, run 1) done after …s\nresult:\ngood worker w2 run 1 (review)\nlooks fine\nfinished",
            "w3 \"forever\" (fast, run 1) still running after waiting 1 s (this run has run …s); vibe_wait again, vibe_send to steer it, or vibe_kill it\nits processes:\n  pid …  sh -c sh ROOT/tests/fixtures/vibe/worker.sh fast\n  pid …  sh ROOT/tests/fixtures/vibe/worker.sh fast\n  pid …  sleep 300\n  pid …  sh ROOT/tests/fixtures/vibe/worker.sh fast\n  pid …  sleep 300",
            "vibe_list: 3 workers (1 running of at most 4)\nw1  port     fast  done     …s  fast worker w1 run 1 (port)\nw2  review   good  done     …s  good worker w2 run 1 (review)\nw3  forever  fast  running  …s  (no result yet)\n    pid …  sh -c sh ROOT/tests/fixtures/vibe/worker.sh fast\n    pid …  sh ROOT/tests/fixtures/vibe/worker.sh fast\n    pid …  sleep 300\n    pid …  sh ROOT/tests/fixtures/vibe/worker.sh fast\n    pid …  sleep 300",
        ]
    "#]].assert_debug_eq(&shown);
    assert_eq!(results.len(), 8, "{results:#?}");
    assert_eq!(
        results[7]["after_input"],
        json!({"tool": "vibe_kill", "args": {"worker_id": "w3"}})
    );
    expect_test::expect![[r#"killed w3 "forever" (fast, run 1) after …s: 5 processes stopped (the worker command and every process it started)"#]]
        .assert_eq(&masked(&text(&results[7])));
    expect_test::expect![[r#"
        agent-tools batch: the input ended with 1 worker not finished (w3 running); waiting up to 1 s for them ([vibe] batch_wait_seconds), then killing what still runs
        agent-tools batch: killed 1 worker still unfinished after waiting 1 s: w3
    "#]]
    .assert_eq(&stderr);
    // The process has exited: the still-running worker and its children are
    // gone with it.
    let pids: Vec<u32> = std::fs::read_to_string(&pidfile)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 4);
    let deadline = Instant::now() + Duration::from_secs(3);
    while pids.iter().any(|p| pid_alive(*p)) {
        assert!(Instant::now() < deadline, "{pids:?} outlived the run");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn batch_waits_for_running_and_queued_workers_when_its_input_ends() {
    let dir = tempfile::tempdir().unwrap();
    // One worker at a time: w2 is queued behind w1.
    let flags = vibe_config(dir.path(), "max_workers = 1\n");
    let started = Instant::now();
    let (code, results, stderr) = batch_with_stderr(
        &flags,
        dir.path(),
        &[
            json!({"tool": "vibe_spawn", "args": {"brief": "sleep 2\nsay one done", "label": "one"}}),
            json!({"tool": "vibe_spawn", "args": {"brief": "say two done", "label": "two"}}),
        ],
    );
    assert!(started.elapsed() >= Duration::from_secs(1), "batch waited");
    assert_eq!(code, 0, "{results:#?}");
    let shown: Vec<String> = results.iter().map(|r| masked(&text(r))).collect();
    expect_test::expect![[r#"
        [
            "spawned w1 \"one\" (fast, run 1); it runs in the background — vibe_wait w1 for its result, vibe_send to steer it",
            "spawned w2 \"two\" (fast, run 1); queued (#1 in line; 1 running of at most 1; 1 queued): it starts when a running worker ends — vibe_wait w2 waits through the queue for its result",
            "w1 \"one\" (fast, run 1) done after …s\nresult:\nfast worker w1 run 1 (one)\none done\nfinished",
            "w2 \"two\" (fast, run 1) done after …s\nresult:\nfast worker w2 run 1 (two)\ntwo done\nfinished",
        ]
    "#]]
    .assert_debug_eq(&shown);
    assert_eq!(results[2]["after_input"]["tool"], "vibe_wait");
    assert_eq!(results[3]["after_input"]["args"]["worker_id"], "w2");
    expect_test::expect![[r#"
        agent-tools batch: the input ended with 2 workers not finished (w1 running, w2 queued); waiting up to 300 s for them ([vibe] batch_wait_seconds), then killing what still runs
    "#]]
    .assert_eq(&stderr);

    // The transcript (--text) shows the calls batch made on its own as such
    // (the worker outlives the input by far, even on a loaded machine).
    let spawn = json!({"tool": "vibe_spawn", "args": {"brief": "sleep 2\nsay hi", "label": "hi"}});
    let out = test_support::cli::batch(
        bin()
            .arg("batch")
            .arg("--text")
            .arg("--root")
            .arg(dir.path())
            .args(&flags),
        [spawn],
    );
    assert_eq!(out.code(), 0);
    let transcript = out.stdout;
    let tail = transcript.split_once("\n\n").unwrap().1;
    expect_test::expect![[r#"
        after the input ended: vibe_wait w1
        w1 "hi" (fast, run 1) done after …s
        result:
        fast worker w1 run 1 (hi)
        hi
        finished"#]]
    .assert_eq(&masked(tail));

    // A config that allows no worker at all is refused.
    let (code, _, stderr) = batch_with_stderr(
        &vibe_config(dir.path(), "max_workers = 0\n"),
        dir.path(),
        &[],
    );
    assert_eq!(code, 2);
    expect_test::expect![[r#"
        agent-tools batch: config TMP/agent-tools.toml: [vibe] max_workers = 0: must be at least 1
    "#]]
    .assert_eq(&stderr.replace(&dir.path().display().to_string(), "TMP"));
}

#[test]
fn the_config_file_turns_vibe_mode_on_and_without_it_the_tools_are_absent() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("agent-tools.toml");
    std::fs::write(&config, format!("[vibe]\nfast = {:?}\n", worker("fast"))).unwrap();
    let (code, results) = batch(
        &["--config".into(), config.display().to_string()],
        dir.path(),
        &[
            json!({"tool": "vibe_spawn", "args": {"brief": "say from the config", "label": "cfg"}}),
            json!({"tool": "vibe_wait", "args": {"worker_id": "w1"}}),
            json!({"tool": "vibe_spawn", "args": {"brief": "say x", "label": "x", "tier": "good"}}),
        ],
    );
    assert_eq!(code, 1, "the last call fails");
    expect_test::expect![[r#"
        w1 "cfg" (fast, run 1) done after …s
        result:
        fast worker w1 run 1 (cfg)
        from the config
        finished"#]]
    .assert_eq(&masked(&text(&results[1])));
    assert_eq!(results[2]["error"]["kind"], "unavailable");
    expect_test::expect!["not available here: no `good` worker command is configured in this run (configured: fast); use tier fast or ask the operator to start with --vibe-good"].assert_eq(results[2]["error"]["message"].as_str().unwrap());

    // No worker command: vibe mode is off and the tools do not exist.
    let out = bin()
        .args(["call", "vibe_list", "{}", "--root"])
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown tool is a usage error"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    expect_test::expect![[r#"
        agent-tools call vibe_list: unknown tool `vibe_list`: no tool of that name is available here; available: ask_user, ast_edit, ast_grep, debug, edit, eval, lsp, lsp_code_action, lsp_rename, read, resolve, write
    "#]].assert_eq(&err.replace(&dir.path().display().to_string(), "TMP"));
}
