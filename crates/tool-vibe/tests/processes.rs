//! A running worker's processes: listed (pid and command line) in vibe_list
//! and in a wait that ran out, and all stopped, counted, with the worker.
//! Real `sh worker.sh` workers.

mod support;

use serde_json::json;
use support::{masked, read_pids, Run};
use tool_core::process::pid_alive;

#[tokio::test]
async fn a_running_workers_processes_are_listed_and_stopped_with_it() {
    let run = Run::capped(4);
    let pidfile = run.dir.path().join("children.pids");
    run.spawn("spawner", &format!("children {}", pidfile.display()))
        .await;
    // The worker shell, a sleeper, a subshell and the subshell's sleeper.
    let started = read_pids(&pidfile, 4).await;

    // A sleeper is listed with its shell's command line until it has
    // exec'd `sleep`: list again until both have (bounded).
    let mut list = run.ok("vibe_list", json!({})).await;
    for _ in 0..250 {
        if list.joined_text().matches("sleep 300").count() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        list = run.ok("vibe_list", json!({})).await;
    }
    expect_test::expect![[r#"
        vibe_list: 1 worker (1 running of at most 4)
        w1  spawner  fast  running  …s  (no result yet)
            pid …  sh -c sh ROOT/tests/fixtures/vibe/worker.sh fast
            pid …  sh ROOT/tests/fixtures/vibe/worker.sh fast
            pid …  sleep 300
            pid …  sh ROOT/tests/fixtures/vibe/worker.sh fast
            pid …  sleep 300"#]]
    .assert_eq(&masked(&list.joined_text(), run.dir.path()));
    // The listed pids are the `sh -c` of the command line and the four the
    // worker wrote down.
    let listed: Vec<u32> = list.structured.unwrap()["workers"][0]["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pid"].as_u64().unwrap() as u32)
        .collect();
    let mut worker_side = listed[1..].to_vec();
    worker_side.sort_unstable();
    let mut expected = started.clone();
    expected.sort_unstable();
    assert_eq!(worker_side, expected);
    assert_eq!(listed[1], started[0], "the worker shell under its `sh -c`");

    // A wait that runs out lists them too.
    let out = run
        .ok(
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_seconds": 0}),
        )
        .await;
    expect_test::expect![[r#"
        w1 "spawner" (fast, run 1) still running after waiting 0 s (this run has run …s); vibe_wait again, vibe_send to steer it, or vibe_kill it
        its processes:
          pid …  sh -c sh ROOT/tests/fixtures/vibe/worker.sh fast
          pid …  sh ROOT/tests/fixtures/vibe/worker.sh fast
          pid …  sleep 300
          pid …  sh ROOT/tests/fixtures/vibe/worker.sh fast
          pid …  sleep 300"#]]
    .assert_eq(&masked(&out.joined_text(), run.dir.path()));

    // vibe_kill stops every one of them and says how many.
    let out = run.ok("vibe_kill", json!({"worker_id": "w1"})).await;
    expect_test::expect![[r#"killed w1 "spawner" (fast, run 1) after …s: 5 processes stopped (the worker command and every process it started)"#]]
        .assert_eq(&masked(&out.joined_text(), run.dir.path()));
    let alive: Vec<u32> = listed.iter().copied().filter(|p| pid_alive(*p)).collect();
    assert_eq!(
        alive,
        Vec::<u32>::new(),
        "listed processes outlived the kill"
    );
    // A settled worker has no processes to list.
    expect_test::expect![[r#"
        vibe_list: 1 worker (0 running of at most 4)
        w1  spawner  fast  killed  …s  fast worker w1 run 1 (spawner)"#]]
    .assert_eq(&masked(
        &run.ok("vibe_list", json!({})).await.joined_text(),
        run.dir.path(),
    ));
}
