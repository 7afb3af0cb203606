//! `LSP_BENCH=shared`: eight concurrent runs on one checkout through the
//! release binary (`agent-tools batch`), with private servers and with
//! `[lsp] shared = true`, against one run alone.
//!
//! For each public project whose clone `LSP_BENCH_PROJECTS` holds
//! (pallets/click with basedpyright, rust-lang/log with rust-analyzer):
//! the servers started, the memory of every process the runs started (the
//! runs, their keepers, the broker, the servers) 12 s after all have
//! answered their first query (idle), and each run's first query from its
//! start to its answer. In the shared case run 1 starts alone (and starts
//! the broker); runs 2–8 start together once it has answered. The shared
//! case is measured twice: as shipped, and with
//! `AGENT_TOOLS_KEEP_IDLE_PAGES` set (an idle run keeps its binary's
//! pages resident), the figures before `tool_core::code_pages`.
//!
//! Memory is said twice: RSS, which counts a page every process maps once
//! per process (eight runs of one binary count its text eight times), and
//! PSS (`smaps_rollup`), which divides each shared page among the processes
//! that map it, so a sum over processes is the memory they take together.
//! Every process is found by a marker variable in its environment, which
//! the runs pass to everything they start.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};
use tool_core::process::procfs;

const RUNS: usize = 8;
const MARKER: &str = "AGENT_TOOLS_BENCH_MARK";

/// A project: its clone's folder under `LSP_BENCH_PROJECTS`, the server,
/// and the query (a hover) every run asks first.
struct SharedCase {
    name: &'static str,
    checkout: &'static str,
    server: &'static str,
    file: &'static str,
    /// The query's line is the first that holds this text.
    line_text: &'static str,
    symbol: &'static str,
}

const CASES: &[SharedCase] = &[
    SharedCase {
        name: "click",
        checkout: "pallets+click",
        server: "basedpyright-langserver",
        file: "src/click/decorators.py",
        line_text: "def command(name: _AnyCallable) -> Command: ...",
        symbol: "Command",
    },
    SharedCase {
        name: "log",
        checkout: "rust-lang+log",
        server: "rust-analyzer",
        file: "src/lib.rs",
        line_text: "pub fn set_max_level(level: LevelFilter) {",
        symbol: "LevelFilter",
    },
];

/// The binary: `$AGENT_TOOLS_BIN`, else the release build in
/// `$CARGO_TARGET_DIR` or `target/` (`cargo xtask bench lsp` builds it).
fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("AGENT_TOOLS_BIN") {
        return PathBuf::from(p);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || test_support::fixtures::workspace_root().join("target"),
        PathBuf::from,
    );
    target.join("release/agent-tools")
}

/// One `agent-tools batch` run kept open, its answers read as they come.
struct BatchRun {
    child: Child,
    lines: Receiver<String>,
    started: Instant,
}

impl BatchRun {
    /// Start a run and send `query` at once.
    fn start(root: &Path, config: &Path, env: &[(&str, String)], query: &Value) -> BatchRun {
        let mut cmd = Command::new(binary());
        cmd.args(["batch", "--root"])
            .arg(root)
            .arg("--config")
            .arg(config)
            .arg("-")
            .env("PATH", test_support::fixtures::path_env())
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary().display()));
        let lines = test_support::cli::stdout_lines(&mut child);
        use std::io::Write;
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(stdin, "{query}").unwrap();
        stdin.flush().unwrap();
        BatchRun {
            child,
            lines,
            started,
        }
    }

    /// The first query's answer text and the time from the run's start.
    fn answer(&self) -> (String, Duration) {
        let line = self
            .lines
            .recv_timeout(Duration::from_mins(10))
            .expect("the run answered within 10 minutes");
        let took = self.started.elapsed();
        let answer: Value = serde_json::from_str(&line).unwrap();
        (test_support::cli::text(&answer), took)
    }

    fn end(mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// The memory of the marked processes, by kind, in KiB: (RSS, PSS).
#[derive(Default, Clone, Copy)]
struct Footprint {
    runs: (u64, u64),
    keepers: (u64, u64),
    broker: (u64, u64),
    servers: (u64, u64),
    server_groups: usize,
}

impl Footprint {
    fn total(&self) -> (u64, u64) {
        let all = [self.runs, self.keepers, self.broker, self.servers];
        (all.iter().map(|m| m.0).sum(), all.iter().map(|m| m.1).sum())
    }

    /// Every process carrying `marker`: the runs are `run_pids`; the broker
    /// runs `lsp-broker` and leads its session; other processes of the
    /// binary are keepers (forks that never exec); the rest are servers.
    fn of(marker: &str, run_pids: &[u32], server: &str) -> Footprint {
        let exe = std::fs::canonicalize(binary()).unwrap();
        let mut f = Footprint::default();
        let mut groups = std::collections::BTreeSet::new();
        for pid in procfs::with_environment(MARKER, marker) {
            let mem = (
                procfs::rss_kib(pid).unwrap_or(0),
                procfs::pss_kib(pid).unwrap_or(0),
            );
            let ours = procfs::exe(pid).as_ref() == Some(&exe);
            let cmdline = procfs::cmdline(pid).unwrap_or_default();
            let leads_session = procfs::stat(pid).is_some_and(|s| s.session == pid);
            let kind = if run_pids.contains(&pid) {
                &mut f.runs
            } else if ours && cmdline.ends_with("lsp-broker") && leads_session {
                &mut f.broker
            } else if ours {
                &mut f.keepers
            } else {
                if cmdline.contains(server) || cmdline.contains("langserver.index.js") {
                    groups.insert(procfs::stat(pid).map_or(pid, |s| s.pgrp));
                }
                &mut f.servers
            };
            kind.0 += mem.0;
            kind.1 += mem.1;
        }
        f.server_groups = groups.len();
        f
    }
}

/// What one way of running measured.
struct Outcome {
    footprint: Footprint,
    /// Each run's first query, in the order the runs started.
    firsts: Vec<Duration>,
    /// Answers that differ from run 1's.
    differing: usize,
    first_answer: String,
}

/// Wait until nothing carries `marker` (the idle timeout ends shared
/// servers and the broker), bounded; then kill what is left.
fn wait_none_left(marker: &str, bound: Duration) {
    let until = Instant::now() + bound;
    loop {
        let left = procfs::with_environment(MARKER, marker);
        if left.is_empty() {
            return;
        }
        if Instant::now() >= until {
            println!("  (killed {} processes left after {bound:?})", left.len());
            for p in left {
                let _ = tool_core::process::signals::send(p, tool_core::process::Signal::Kill);
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `runs` runs on `root` with `config` and `more_env`; with `one_first`,
/// run 1 answers before the others start together.
fn measure(
    root: &Path,
    config: &Path,
    case: &SharedCase,
    runs: usize,
    one_first: bool,
    more_env: &[(&str, String)],
) -> Outcome {
    let marker = format!("{}-{}", std::process::id(), config.display());
    let broker_dir = config.with_extension("broker");
    let mut env = vec![
        (MARKER, marker.clone()),
        ("AGENT_TOOLS_BROKER_DIR", broker_dir.display().to_string()),
    ];
    env.extend(more_env.iter().cloned());
    let text = std::fs::read_to_string(root.join(case.file)).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains(case.line_text))
        .unwrap_or_else(|| panic!("{}: no line `{}`", case.file, case.line_text))
        + 1;
    let query = json!({"tool": "lsp", "args": {"op": "hover", "file": case.file, "line": line, "symbol": case.symbol}});
    let mut started = Vec::new();
    let mut answers = Vec::new();
    if one_first {
        let first = BatchRun::start(root, config, &env, &query);
        answers.push(first.answer());
        started.push(first);
    }
    let rest: Vec<BatchRun> = (started.len()..runs)
        .map(|_| BatchRun::start(root, config, &env, &query))
        .collect();
    answers.extend(rest.iter().map(BatchRun::answer));
    started.extend(rest);
    // Settled: what an idle run holds, not what answering took (a run
    // idle for 5 s gives back its binary's pages; see
    // `tool_core::code_pages`).
    std::thread::sleep(Duration::from_secs(12));
    let pids: Vec<u32> = started.iter().map(|r| r.child.id()).collect();
    let footprint = Footprint::of(&marker, &pids, case.server);
    for run in started {
        run.end();
    }
    // A shared server would stay the idle timeout after its last run:
    // end the broker, whose keepers end its servers.
    for pid in procfs::with_environment(MARKER, &marker) {
        if procfs::cmdline(pid).is_some_and(|c| c.ends_with("lsp-broker"))
            && procfs::stat(pid).is_some_and(|s| s.session == pid)
        {
            let _ = tool_core::process::signals::send(pid, tool_core::process::Signal::Terminate);
        }
    }
    wait_none_left(&marker, Duration::from_secs(30));
    let first_answer = answers[0].0.clone();
    Outcome {
        footprint,
        differing: answers.iter().filter(|a| a.0 != first_answer).count(),
        firsts: answers.into_iter().map(|a| a.1).collect(),
        first_answer,
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn print_row(label: &str, o: &Outcome, one: (u64, u64)) {
    let f = &o.footprint;
    let (rss, pss) = f.total();
    let s = |d: Duration| d.as_secs_f64();
    let later = &o.firsts[1.min(o.firsts.len() - 1)..];
    let (lo, hi) = (
        later.iter().min().copied().unwrap_or_default(),
        later.iter().max().copied().unwrap_or_default(),
    );
    println!(
        "{label:<18} {:>7} {:>9.0} {:>5.2}× {:>9.0} {:>5.2}×  {:>6.0}/{:<6.0} {:>5.0}/{:<5.0} {:>5.0}/{:<5.0} {:>6.0}/{:<6.0}  {:>7.2} {:>5.2}–{:<5.2}{}",
        f.server_groups,
        mib(rss),
        rss as f64 / one.0 as f64,
        mib(pss),
        pss as f64 / one.1 as f64,
        mib(f.runs.0),
        mib(f.runs.1),
        mib(f.keepers.0),
        mib(f.keepers.1),
        mib(f.broker.0),
        mib(f.broker.1),
        mib(f.servers.0),
        mib(f.servers.1),
        s(o.firsts[0]),
        s(lo),
        s(hi),
        if o.differing > 0 {
            format!("  ({} answers differ from run 1's)", o.differing)
        } else {
            String::new()
        }
    );
}

/// The table for every project whose clone is under `LSP_BENCH_PROJECTS`.
pub(crate) fn run() {
    let bin = binary();
    if !bin.exists() {
        println!(
            "shared: skipped, {} is missing (cargo build --release -p agent-tools)",
            bin.display()
        );
        return;
    }
    let Some(projects) = std::env::var_os("LSP_BENCH_PROJECTS") else {
        println!(
            "shared: skipped, LSP_BENCH_PROJECTS (a folder of clones named owner+name) is not set"
        );
        return;
    };
    println!(
        "shared: {RUNS} concurrent runs (agent-tools batch, release) on one checkout, each asking one hover first; \
         memory in MiB once all answered (RSS counts the binary's pages once per process, PSS shares them out), \
         ratios against one run alone; first query from the run's start to its answer, in s"
    );
    println!(
        "{:<18} {:>7} {:>9} {:>6} {:>9} {:>6}  {:>13} {:>11} {:>11} {:>13}  {:>7} {:>11}",
        "project/mode",
        "servers",
        "RSS",
        "",
        "PSS",
        "",
        "runs RSS/PSS",
        "keepers",
        "broker",
        "servers",
        "run 1",
        "runs 2–8"
    );
    for case in CASES {
        let from = Path::new(&projects).join(case.checkout);
        if !from.is_dir() {
            println!("{:<18} skipped: no clone at {}", case.name, from.display());
            continue;
        }
        if test_support::fixtures::find(case.server).is_none() {
            println!("{:<18} skipped: {} not installed", case.name, case.server);
            continue;
        }
        let dir = super::copy_checkout(&from);
        let configs = tempfile::tempdir().unwrap();
        let config = |name: &str, shared: bool| {
            let p = configs.path().join(format!("{name}.toml"));
            std::fs::write(
                &p,
                format!("[lsp]\nshared = {shared}\nidle_timeout_ms = 600000\n"),
            )
            .unwrap();
            p
        };
        let one = measure(dir.path(), &config("one", false), case, 1, true, &[]);
        let one_total = one.footprint.total();
        print_row(&format!("{} 1 run", case.name), &one, one_total);
        let private = measure(
            dir.path(),
            &config("private", false),
            case,
            RUNS,
            false,
            &[],
        );
        print_row(&format!("{} private", case.name), &private, one_total);
        let shared = measure(dir.path(), &config("shared", true), case, RUNS, true, &[]);
        print_row(&format!("{} shared", case.name), &shared, one_total);
        let kept = [("AGENT_TOOLS_KEEP_IDLE_PAGES", "1".to_string())];
        let shared = measure(dir.path(), &config("kept", true), case, RUNS, true, &kept);
        print_row(&format!("{} shared, kept", case.name), &shared, one_total);
        let first_line = one.first_answer.lines().nth(1).unwrap_or_default();
        println!("{:<18} (the hover's second line: {first_line})", "");
    }
}
