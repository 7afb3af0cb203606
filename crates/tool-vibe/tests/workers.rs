//! The vibe tools against real subprocess workers: `sh worker.sh fast|good`
//! from tests/fixtures/vibe, run through CommandBackend, called through the
//! Registry on a read-only surface (all five are read tier).

mod support;

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{masked, read_pids, worker_script};
use tool_core::process::{group_members, pid_alive, procfs};
use tool_core::{CallContext, Registry, Surface, ToolError, ToolOutput};
use tool_vibe::{CommandBackend, Roster, WorkerState, TOOL_NAMES};

struct Run {
    roster: Roster,
    registry: Registry,
    dir: tempfile::TempDir,
}

impl Run {
    fn new() -> Run {
        Run::with(true)
    }

    /// `good` too, or only `fast`.
    fn with(good: bool) -> Run {
        let dir = tempfile::tempdir().unwrap();
        let script = worker_script();
        assert!(script.is_file(), "{} is missing", script.display());
        let mut backend = CommandBackend::new(dir.path())
            .fast(format!("sh {} fast", script.display()))
            .env("VIBE_PID_DIR", dir.path());
        if good {
            backend = backend.good(format!("sh {} good", script.display()));
        }
        let roster = Roster::new(Arc::new(backend));
        let registry = Registry::new();
        roster.attach(&registry).unwrap();
        Run {
            roster,
            registry,
            dir,
        }
    }

    async fn call(&self, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
        self.registry
            .call(Surface::READ_ONLY, tool, args, CallContext::new())
            .await
    }

    async fn ok(&self, tool: &str, args: Value) -> ToolOutput {
        match self.call(tool, args.clone()).await {
            Ok(o) => o,
            Err(e) => panic!("{tool} {args}: {e}"),
        }
    }

    async fn spawn(&self, label: &str, brief: &str) -> String {
        let out = self
            .ok("vibe_spawn", json!({"brief": brief, "label": label}))
            .await;
        out.structured.unwrap()["id"].as_str().unwrap().to_string()
    }

    /// The pid the worker shell wrote for one of its runs.
    async fn run_pid(&self, id: &str, run: u32) -> u32 {
        let f = self.dir.path().join(format!("{id}.{run}"));
        read_pids(&f, 1).await[0]
    }
}

/// The process group of a process.
fn pgid_of(pid: u32) -> u32 {
    procfs::stat(pid).expect("a live process").pgrp
}

/// The text of a `vibe_kill` answer without its elapsed time.
fn without_elapsed(text: &str) -> String {
    let (head, rest) = text.split_once(" after ").expect("an elapsed time");
    let (_, tail) = rest.split_once(':').expect("a count");
    format!("{head} after …:{tail}")
}

/// Wait up to 3 s for every pid to be gone.
async fn all_gone(pids: &[u32]) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if pids.iter().all(|p| !pid_alive(*p)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn spawn_returns_at_once_and_wait_answers_running_then_the_result() {
    let run = Run::new();
    let started = Instant::now();
    let out = run
        .ok(
            "vibe_spawn",
            json!({"brief": "sleep 1.5\nsay all 4 tests pass", "label": "fix tests"}),
        )
        .await;
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "spawn must not wait"
    );
    assert_eq!(
        out.joined_text(),
        "spawned w1 \"fix tests\" (fast, run 1); it runs in the background — vibe_wait w1 for \
         its result, vibe_send to steer it"
    );
    let s = out.structured.unwrap();
    assert_eq!(
        (s["state"].as_str(), s["tier"].as_str()),
        (Some("running"), Some("fast"))
    );

    let waited = Instant::now();
    let out = run
        .ok(
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_seconds": 0}),
        )
        .await;
    assert!(waited.elapsed() < Duration::from_millis(500));
    // The first line; the process list below it depends on how far the
    // worker's script got.
    let text = masked(&out.joined_text(), run.dir.path());
    expect_test::expect![[r#"w1 "fix tests" (fast, run 1) still running after waiting 0 s (this run has run …s); vibe_wait again, vibe_send to steer it, or vibe_kill it"#]].assert_eq(text.lines().next().unwrap_or_default());
    assert_eq!(out.structured.unwrap()["state"], "running");

    let out = run
        .ok(
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_seconds": 20}),
        )
        .await;
    assert!(started.elapsed() >= Duration::from_millis(1500));
    let text = out.joined_text();
    let header = text.lines().next().unwrap();
    assert!(
        header.starts_with("w1 \"fix tests\" (fast, run 1) done after 1."),
        "{text}"
    );
    assert_eq!(
        text.lines().skip(1).collect::<Vec<_>>(),
        [
            "result:",
            "fast worker w1 run 1 (fix tests)",
            "all 4 tests pass",
            "finished"
        ]
    );
    // Waiting on a finished worker answers at once with the same result.
    let again = Instant::now();
    let out = run.ok("vibe_wait", json!({"worker_id": "w1"})).await;
    assert!(again.elapsed() < Duration::from_millis(200));
    expect_test::expect![[r#"
        w1 "fix tests" (fast, run 1) done after …s
        result:
        fast worker w1 run 1 (fix tests)
        all 4 tests pass
        finished"#]]
    .assert_eq(&masked(&out.joined_text(), run.dir.path()));
}

#[tokio::test]
async fn the_good_tier_runs_the_good_command() {
    let run = Run::new();
    run.ok(
        "vibe_spawn",
        json!({"brief": "say looks right", "label": "review", "tier": "good"}),
    )
    .await;
    let out = run.ok("vibe_wait", json!({"worker_id": "w1"})).await;
    expect_test::expect![[r#"
        w1 "review" (good, run 1) done after …:
        good worker w1 run 1 (review)
        looks right
        finished"#]]
    .assert_eq(&without_elapsed(&out.joined_text()));
    assert_eq!(out.structured.unwrap()["tier"], "good");
}

#[tokio::test]
async fn send_to_a_running_worker_stops_it_and_reruns_with_the_appended_brief() {
    let run = Run::new();
    let id = run.spawn("port", "stall 30\nsay porting the module").await;
    let first = run.run_pid(&id, 1).await;
    assert!(pid_alive(first));

    let out = run
        .ok(
            "vibe_send",
            json!({"worker_id": "w1", "message": "say also update the docs"}),
        )
        .await;
    expect_test::expect!["w1 was still running: stopped its current run (run 1, after …s) and re-ran it with the message appended (run 2); vibe_wait w1 for the new result"].assert_eq(&masked(&out.joined_text(), run.dir.path()));
    assert_eq!(
        out.structured.as_ref().unwrap()["stopped_running_run"],
        true
    );
    assert!(all_gone(&[first]).await, "the first run's process is gone");

    let out = run
        .ok(
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_seconds": 20}),
        )
        .await;
    expect_test::expect![[r#"
        w1 "port" (fast, run 2) done after …s
        result:
        fast worker w1 run 2 (port)
        porting the module
        also update the docs
        finished"#]]
    .assert_eq(&masked(&out.joined_text(), run.dir.path()));
    let s = out.structured.unwrap();
    assert_eq!(s["runs"], 2);
    assert_eq!(
        s["brief"],
        "stall 30\nsay porting the module\n\nsay also update the docs"
    );

    // Sending to a settled worker simply re-runs it.
    let out = run
        .ok(
            "vibe_send",
            json!({"worker_id": "w1", "message": "say one more thing"}),
        )
        .await;
    expect_test::expect!["w1 was done: re-running it with the message appended (run 3); vibe_wait w1 for the new result"].assert_eq(&masked(&out.joined_text(), run.dir.path()));
    let out = run.ok("vibe_wait", json!({"worker_id": "w1"})).await;
    expect_test::expect![[r#"
        w1 "port" (fast, run 3) done after …s
        result:
        fast worker w1 run 3 (port)
        porting the module
        also update the docs
        one more thing
        finished"#]]
    .assert_eq(&masked(&out.joined_text(), run.dir.path()));
}

#[tokio::test]
async fn kill_reaps_a_worker_and_every_process_it_started() {
    let run = Run::new();
    let pidfile = run.dir.path().join("children.pids");
    let id = run
        .spawn("spawner", &format!("children {}", pidfile.display()))
        .await;
    // The shell, a sleeper, a subshell and the subshell's sleeper.
    let pids = read_pids(&pidfile, 4).await;
    assert!(pids.iter().all(|p| pid_alive(*p)), "{pids:?} all running");
    let group = pgid_of(pids[0]);
    let members = group_members(group);
    assert!(
        pids.iter().all(|p| members.contains(p)),
        "{pids:?} all in the worker's process group {group}: {members:?}"
    );

    let out = run.ok("vibe_kill", json!({"worker_id": id})).await;
    assert_eq!(
        without_elapsed(&out.joined_text()),
        "killed w1 \"spawner\" (fast, run 1) after …: 5 processes stopped (the worker command and every process it started)"
    );
    // The `sh -c` of the command line, and the four above.
    assert_eq!(out.structured.as_ref().unwrap()["processes_killed"], 5);
    // vibe_kill returns once the run is stopped: nothing of it is left.
    assert!(all_gone(&pids).await, "{pids:?} survived the kill");
    assert!(group_members(group).is_empty());
    assert_eq!(
        run.roster.snapshot("w1").unwrap().state,
        WorkerState::Killed
    );

    let out = run.ok("vibe_kill", json!({"worker_id": "w1"})).await;
    assert_eq!(out.joined_text(), "w1 was already killed; nothing to stop");
    let out = run.ok("vibe_wait", json!({"worker_id": "w1"})).await;
    // The first line; whether the output below it caught the worker's
    // header depends on how far it got.
    let text = masked(&out.joined_text(), run.dir.path());
    expect_test::expect![[r#"w1 "spawner" (fast, run 1) killed after …s"#]]
        .assert_eq(text.lines().next().unwrap_or_default());
}

#[tokio::test]
async fn kill_reaches_processes_that_left_the_group_and_says_how_many() {
    let run = Run::new();
    let pidfile = run.dir.path().join("escaped.pids");
    let id = run
        .spawn("escaper", &format!("escape {}", pidfile.display()))
        .await;
    // The shell, a `setsid` sleeper, and a double-forked `setsid` sleeper
    // (and the `sh -c` of the command line above them).
    let pids = read_pids(&pidfile, 3).await;
    assert!(pids.iter().all(|p| pid_alive(*p)), "{pids:?} all running");
    let shell_group = pgid_of(pids[0]);
    assert!(
        pids[1..].iter().all(|p| pgid_of(*p) != shell_group),
        "{pids:?} the sleepers left the worker's group"
    );

    let out = run.ok("vibe_kill", json!({"worker_id": id})).await;
    assert_eq!(
        without_elapsed(&out.joined_text()),
        "killed w1 \"escaper\" (fast, run 1) after …: 4 processes stopped (the worker command and every process it started)"
    );
    assert_eq!(out.structured.as_ref().unwrap()["survivors"], json!([]));
    let alive: Vec<u32> = pids.iter().copied().filter(|p| pid_alive(*p)).collect();
    assert!(alive.is_empty(), "{alive:?} survived vibe_kill");
}

#[tokio::test]
async fn a_finished_worker_leaves_nothing_running() {
    let run = Run::new();
    let pidfile = run.dir.path().join("linger.pid");
    run.spawn("leaves a sleeper", &format!("linger {}", pidfile.display()))
        .await;
    let sleeper = read_pids(&pidfile, 1).await[0];
    let out = run
        .ok(
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_seconds": 10}),
        )
        .await;
    assert_eq!(out.structured.unwrap()["state"], "done");
    assert!(
        all_gone(&[sleeper]).await,
        "the background sleeper outlived its run"
    );
}

#[tokio::test]
async fn list_shows_every_worker_with_state_tier_elapsed_and_first_line() {
    let run = Run::new();
    assert_eq!(
        run.ok("vibe_list", json!({})).await.joined_text(),
        "vibe_list: no workers yet; start one with vibe_spawn (at most 4 run at once)"
    );
    run.spawn("quick", "say quick one").await;
    run.ok(
        "vibe_spawn",
        json!({"brief": "say trying\nfail cannot find src/lib.rs", "label": "broken", "tier": "good"}),
    )
    .await;
    run.spawn("slow", "sleep 30").await;
    for id in ["w1", "w2"] {
        run.ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 10}))
            .await;
    }
    let out = run.ok("vibe_list", json!({})).await;
    let text = out.joined_text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "vibe_list: 3 workers (1 running of at most 4)");
    let cols = |l: &str| l.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let w1 = cols(lines[1]);
    assert_eq!(&w1[..4], ["w1", "quick", "fast", "done"], "{text}");
    assert!(w1[4].ends_with('s'), "elapsed in {text}");
    assert_eq!(w1[5..].join(" "), "fast worker w1 run 1 (quick)");
    let w2 = cols(lines[2]);
    assert_eq!(&w2[..4], ["w2", "broken", "good", "failed"], "{text}");
    assert!(
        lines[2].ends_with("the worker command ended (exit status 3); stderr tail:"),
        "{text}"
    );
    let w3 = cols(lines[3]);
    assert_eq!(&w3[..4], ["w3", "slow", "fast", "running"], "{text}");
    // Columns line up.
    let at = |l: &str| l.find("fast").or_else(|| l.find("good")).unwrap();
    assert_eq!(at(lines[1]), at(lines[2]));
    assert_eq!(at(lines[1]), at(lines[3]));
    let workers = &out.structured.unwrap()["workers"];
    assert_eq!(workers.as_array().unwrap().len(), 3);
    assert!(workers[2]["elapsed"].as_f64().unwrap() >= 0.0);

    // The failed worker's wait answer carries its stderr tail and output.
    let out = run.ok("vibe_wait", json!({"worker_id": "w2"})).await;
    expect_test::expect![[r#"
        w2 "broken" (good, run 1) failed after …s: the worker command ended (exit status 3); stderr tail:
        cannot find src/lib.rs
        output:
        good worker w2 run 1 (broken)
        trying"#]].assert_eq(&masked(&out.joined_text(), run.dir.path()));
    run.roster.shutdown().await;
    assert_eq!(
        run.roster.snapshot("w3").unwrap().state,
        WorkerState::Killed
    );
}

#[tokio::test]
async fn done_failed_lost_and_killed_are_distinct_ends() {
    let run = Run::new();
    run.spawn("done", "say all good\nmarker").await;
    run.spawn("failed", "say trying\nfail cannot find src/lib.rs")
        .await;
    run.spawn("died", "say working\ndie").await;
    run.spawn("quiet", "say working\nquit").await;
    run.spawn("killed", "sleep 30").await;
    for id in ["w1", "w2", "w3", "w4"] {
        run.ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 10}))
            .await;
    }
    run.ok("vibe_kill", json!({"worker_id": "w5"})).await;
    let states: Vec<WorkerState> = ["w1", "w2", "w3", "w4", "w5"]
        .iter()
        .map(|id| run.roster.snapshot(id).unwrap().state)
        .collect();
    assert_eq!(
        states,
        [
            WorkerState::Done,
            WorkerState::Failed,
            WorkerState::Lost,
            WorkerState::Lost,
            WorkerState::Killed,
        ]
    );
    // Every worker's environment carries the depth marker, its own id.
    let out = run.ok("vibe_wait", json!({"worker_id": "w1"})).await;
    expect_test::expect![[r#"
        w1 "done" (fast, run 1) done after …s
        result:
        fast worker w1 run 1 (done)
        all good
        marker=w1
        finished"#]]
    .assert_eq(&masked(&out.joined_text(), run.dir.path()));
    // A lost worker's answer says how it ended, and what it wrote before.
    let text = without_elapsed(
        &run.ok("vibe_wait", json!({"worker_id": "w3"}))
            .await
            .joined_text(),
    );
    expect_test::expect![[r#"
        w3 "died" (fast, run 1) lost after …: the worker command was killed by signal 9 (SIGKILL) (exit status 137); stderr tail:
        Killed
        output:
        fast worker w3 run 1 (died)
        working"#]]
    .assert_eq(&text);
    let text = run.ok("vibe_list", json!({})).await.joined_text();
    // w5's last column: whether it printed its header before it was
    // killed depends on timing.
    let shown: Vec<String> = text
        .lines()
        .map(|l| match l.strip_prefix("w5  ") {
            Some(_) => l.split_whitespace().take(5).collect::<Vec<_>>().join("  "),
            None => l.to_string(),
        })
        .collect();
    expect_test::expect![[r#"
        vibe_list: 5 workers (0 running of at most 4)
        w1  done    fast  done    …s  fast worker w1 run 1 (done)
        w2  failed  fast  failed  …s  the worker command ended (exit status 3); stderr tail:
        w3  died    fast  lost    …s  the worker command was killed by signal 9 (SIGKILL) (exit status 137); stderr tail:
        w4  quiet   fast  lost    …s  the worker command ended (exit status 4) without a word (nothing on stderr)
        w5  killed  fast  killed  …s"#]]
    .assert_eq(&masked(&shown.join("\n"), run.dir.path()));
    run.roster.shutdown().await;
}

#[tokio::test]
async fn vibe_mode_off_removes_the_tools_and_kills_the_workers() {
    let run = Run::new();
    let names = |r: &Registry| -> Vec<String> {
        r.specs(Surface::READ_ONLY)
            .into_iter()
            .map(|s| s.name)
            .collect()
    };
    let mut expected: Vec<String> = TOOL_NAMES
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
    expected.sort();
    assert_eq!(
        names(&run.registry),
        expected,
        "all five on a read-only surface"
    );

    let a = run.spawn("a", "sleep 30").await;
    let b = run.spawn("b", "sleep 30").await;
    let pids = [run.run_pid(&a, 1).await, run.run_pid(&b, 1).await];
    assert!(pids.iter().all(|p| pid_alive(*p)));

    run.roster.set_vibe_mode(false).await.unwrap();
    assert!(names(&run.registry).is_empty(), "no vibe tool is listed");
    let err = run.call("vibe_list", json!({})).await.unwrap_err();
    assert_eq!(err.kind(), "unknown_tool");
    assert!(all_gone(&pids).await, "switching off killed every worker");
    assert!(run
        .roster
        .snapshots()
        .iter()
        .all(|w| w.state == WorkerState::Killed));

    run.roster.set_vibe_mode(true).await.unwrap();
    assert_eq!(names(&run.registry), expected);
    let text = run.ok("vibe_list", json!({})).await.joined_text();
    // Each worker's id, label, tier, state and elapsed time (whether it
    // printed its header before it was killed depends on timing).
    let shown: Vec<String> = text
        .lines()
        .take(3)
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            if cols[0] == "vibe_list:" {
                l.to_string()
            } else {
                cols[..5].join("  ")
            }
        })
        .collect();
    expect_test::expect![[r#"
        vibe_list: 2 workers (0 running of at most 4)
        w1  a  fast  killed  …s
        w2  b  fast  killed  …s"#]]
    .assert_eq(&masked(&shown.join("\n"), run.dir.path()));
    assert_eq!(run.spawn("c", "say back").await, "w3", "ids keep counting");
}

#[tokio::test]
async fn a_roster_off_from_the_start_registers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let roster = Roster::new(Arc::new(CommandBackend::new(dir.path()).fast("cat"))).off();
    let registry = Registry::new();
    roster.attach(&registry).unwrap();
    assert!(registry.names().is_empty());
    roster.set_vibe_mode(true).await.unwrap();
    assert_eq!(registry.names().len(), 5);
}

#[tokio::test]
async fn dropping_the_roster_ends_its_workers() {
    let run = Run::new();
    let id = run.spawn("orphan?", "sleep 30").await;
    let pid = run.run_pid(&id, 1).await;
    let Run {
        roster,
        registry,
        dir,
    } = run;
    drop(roster);
    // The tools hold the roster weakly: with the harness's handle gone the
    // roster is gone, and so is its worker.
    assert!(all_gone(&[pid]).await, "the worker outlived its roster");
    let err = registry
        .call(Surface::FULL, "vibe_list", json!({}), CallContext::new())
        .await
        .unwrap_err();
    expect_test::expect![
        "not available here: this run's vibe roster has ended; there are no workers"
    ]
    .assert_eq(&err.to_string());
    drop(dir);
}

#[tokio::test]
async fn a_long_result_is_capped_to_its_end() {
    let run = Run::new();
    run.spawn("chatty", "burst 2000\nsay the last words").await;
    let out = run
        .ok(
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_seconds": 20}),
        )
        .await;
    let result = out.structured.unwrap()["last_result"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(result.len() < 17 * 1024, "{} bytes", result.len());
    // Its first line says what was cut; the end is kept whole.
    let lines: Vec<&str> = result.lines().collect();
    let shown = [&lines[..1], &lines[lines.len() - 3..]].concat().join("\n");
    assert!(result.ends_with('\n'), "{shown}");
    expect_test::expect![[r#"
        … (102560 earlier bytes not kept)
        filler line 1999 of the burst, padded to be a little longer
        the last words
        finished"#]]
    .assert_eq(&shown);
}

#[tokio::test]
async fn bad_calls_get_clear_errors() {
    let run = Run::with(false);
    let err = |r: Result<ToolOutput, ToolError>| r.unwrap_err();
    let e = err(run.call("vibe_wait", json!({"worker_id": "w9"})).await);
    assert_eq!(e.kind(), "bad_arguments");
    expect_test::expect!["bad arguments: no worker `w9`: none has been spawned in this run; start one with vibe_spawn"].assert_eq(&e.to_string());
    run.spawn("one", "say hi").await;
    let mut unknown = Vec::new();
    for tool in ["vibe_wait", "vibe_kill", "vibe_send"] {
        let args = if tool == "vibe_send" {
            json!({"worker_id": "w7", "message": "x"})
        } else {
            json!({"worker_id": "w7"})
        };
        unknown.push(err(run.call(tool, args).await).to_string());
    }
    expect_test::expect![[r#"
        [
            "bad arguments: no worker `w7`; the workers of this run are w1 (vibe_list shows them)",
            "bad arguments: no worker `w7`; the workers of this run are w1 (vibe_list shows them)",
            "bad arguments: no worker `w7`; the workers of this run are w1 (vibe_list shows them)",
        ]
    "#]]
    .assert_debug_eq(&unknown);
    let cases: Vec<(&str, Value)> = vec![
        ("vibe_spawn", json!({"brief": "  ", "label": "x"})),
        ("vibe_spawn", json!({"brief": "say x", "label": ""})),
        (
            "vibe_spawn",
            json!({"brief": "say x", "label": "x", "tier": "best"}),
        ),
        (
            "vibe_spawn",
            json!({"brief": "say x", "label": "x", "tier": "good"}),
        ),
        ("vibe_spawn", json!({"brief": "say x"})),
        ("vibe_send", json!({"worker_id": "w1", "message": " "})),
        (
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_seconds": 601}),
        ),
        ("vibe_list", json!({"all": true})),
    ];
    let mut messages = Vec::new();
    for (tool, args) in cases {
        messages.push(err(run.call(tool, args).await).to_string());
    }
    expect_test::expect![[r#"
        [
            "bad arguments: `brief` is empty; write the task the worker should do",
            "bad arguments: `label` is empty; give the worker a short name",
            "bad arguments: argument `tier`: unknown variant `best`, expected `fast` or `good`; check the tool's input schema",
            "not available here: no `good` worker command is configured in this run (configured: fast); use tier fast or ask the operator to start with --vibe-good",
            "bad arguments: missing field `label`; check the tool's input schema",
            "bad arguments: `message` is empty; write what the worker should add to its brief",
            "bad arguments: `timeout_seconds` is 601, more than the maximum 600; wait in steps of at most 600 s",
            "bad arguments: argument `all`: unknown field `all`, there are no fields; check the tool's input schema",
        ]
    "#]].assert_debug_eq(&messages);
    assert_eq!(
        run.roster.snapshots().len(),
        1,
        "no bad call spawned a worker"
    );
}

/// Any read tool of the run: answers `read`.
struct ProbeRead;

#[tool_core::async_trait]
impl tool_core::Tool for ProbeRead {
    fn spec(&self) -> tool_core::ToolSpec {
        tool_core::ToolSpec::new(
            "probe_read",
            "any read tool",
            tool_core::Tier::Read,
            json!({"type": "object"}),
        )
    }
    async fn call(&self, _cx: &CallContext, _args: Value) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("read"))
    }
}

/// Text with each notice's age and each worker's elapsed time replaced by
/// `…`.
fn without_times(text: &str) -> String {
    tool_core::notices::mask_ages(text)
        .lines()
        .map(|l| {
            let mut l = l.to_string();
            if let Some(a) = l.find(" after ") {
                if let Some(b) = l[a..].find(": ") {
                    l = format!("{} after …{}", &l[..a], &l[a + b..]);
                }
            }
            l
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Wait up to 20 s for a worker to settle, without a vibe tool.
async fn settled(run: &Run, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !run.roster.snapshot(id).unwrap().state.is_settled() {
        assert!(Instant::now() < deadline, "{id} never settled");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_finished_worker_is_announced_in_the_next_result_of_any_tool_once() {
    let run = Run::new();
    run.registry.register(Arc::new(ProbeRead)).unwrap();
    run.spawn("tests", "say all 4 tests pass").await;
    run.spawn("broken", "say trying\nfail cannot find src/lib.rs")
        .await;
    run.spawn("died", "die").await;
    for id in ["w1", "w2", "w3"] {
        settled(&run, id).await;
    }
    let mut lines: Vec<String> =
        without_times(&run.ok("probe_read", json!({})).await.joined_text())
            .lines()
            .map(str::to_string)
            .collect();
    // The three ended in any order; the block lists them as they ended.
    lines[2..].sort();
    expect_test::expect![[r#"
        read
        --- 3 notices from elsewhere in this run (not part of this result) ---
        [vibe info, …] worker w1 "tests" (fast, run 1) done after …: fast worker w1 run 1 (tests) (vibe_wait w1 for all of it)
        [vibe warning, …] worker w2 "broken" (fast, run 1) failed after …: the worker command ended (exit status 3); stderr tail: cannot find src/lib.rs (vibe_wait w2 for all of it)
        [vibe warning, …] worker w3 "died" (fast, run 1) lost after …: the worker command was killed by signal 9 (SIGKILL) (exit status 137); stderr tail: Killed (vibe_wait w3 for all of it)"#]]
    .assert_eq(&lines.join("\n"));
    assert_eq!(
        run.ok("probe_read", json!({})).await.joined_text(),
        "read",
        "announced once"
    );

    // An end the director hears from vibe_wait or vibe_kill is not
    // announced again.
    run.spawn("waited", "say waited for").await;
    run.spawn("killed", "sleep 30").await;
    run.ok(
        "vibe_wait",
        json!({"worker_id": "w4", "timeout_seconds": 20}),
    )
    .await;
    run.ok("vibe_kill", json!({"worker_id": "w5"})).await;
    assert_eq!(run.ok("probe_read", json!({})).await.joined_text(), "read");
    run.roster.shutdown().await;
}
