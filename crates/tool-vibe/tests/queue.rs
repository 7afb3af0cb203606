//! The cap on running workers: beyond it, workers queue and start, first in
//! first out, as running ones end. Real `sh worker.sh` workers.

mod support;

use serde_json::json;
use support::{masked, Run};
use tool_vibe::WorkerState;

/// vibe_list without the processes of running workers (when the worker
/// shell forks its `sleep` is a race; tests/processes.rs covers them).
fn list_without_processes(text: &str, run: &Run) -> String {
    masked(text, run.dir.path())
        .lines()
        .filter(|l| !l.starts_with("    pid "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn beyond_the_cap_workers_queue_and_start_when_a_running_one_ends() {
    let run = Run::capped(1);
    expect_test::expect![[r#"spawned w1 "first" (fast, run 1); it runs in the background — vibe_wait w1 for its result, vibe_send to steer it"#]]
        .assert_eq(&run.spawn("first", "sleep 2\nsay first done").await);
    expect_test::expect![[r#"spawned w2 "second" (fast, run 1); queued (#1 in line; 1 running of at most 1; 1 queued): it starts when a running worker ends — vibe_wait w2 waits through the queue for its result"#]]
        .assert_eq(&run.spawn("second", "say second done").await);
    run.spawn("third", "say third done").await;

    let list = run.ok("vibe_list", json!({})).await;
    expect_test::expect![[r#"
        vibe_list: 3 workers (1 running of at most 1; 2 queued)
        w1  first   fast  running  …s  (no result yet)
        w2  second  fast  queued   …s  (queued, #1 in line; starts when a running worker ends)
        w3  third   fast  queued   …s  (queued, #2 in line; starts when a running worker ends)"#]]
    .assert_eq(&list_without_processes(&list.joined_text(), &run));
    let s = list.structured.unwrap();
    assert_eq!(
        (&s["running"], &s["queued"], &s["max_workers"]),
        (&json!(1), &json!(2), &json!(1))
    );
    assert_eq!(s["workers"][2]["queue_position"], 2);

    // Waiting on a queued worker answers where it stands when time runs out.
    let out = run
        .ok(
            "vibe_wait",
            json!({"worker_id": "w2", "timeout_seconds": 0}),
        )
        .await;
    expect_test::expect![[r#"w2 "second" (fast, run 1) still queued after waiting 0 s (#1 in line; 1 running of at most 1; 2 queued); vibe_wait again, or vibe_kill it to take it out of the queue"#]]
        .assert_eq(&out.joined_text());

    // Killing a queued worker takes it out of the queue; it never starts.
    let out = run.ok("vibe_kill", json!({"worker_id": "w3"})).await;
    expect_test::expect![[r#"killed w3 "third" (fast, run 1) while it was queued (#2 in line): taken out of the queue, it never started"#]]
        .assert_eq(&out.joined_text());
    assert_eq!(out.structured.unwrap()["was_queued"], true);

    // vibe_wait waits through the queue: w2 starts once w1 is done.
    let out = run
        .ok(
            "vibe_wait",
            json!({"worker_id": "w2", "timeout_seconds": 20}),
        )
        .await;
    expect_test::expect![[r#"
        w2 "second" (fast, run 1) done after …s
        result:
        fast worker w2 run 1 (second)
        second done
        finished
        --- 1 notice from elsewhere in this run (not part of this result) ---
        [vibe info, …] worker w1 "first" (fast, run 1) done after …s: fast worker w1 run 1 (first) (vibe_wait w1 for all of it)"#]]
    .assert_eq(&masked(&out.joined_text(), run.dir.path()));
    let first = run.roster.snapshot("w1").unwrap();
    let second = run.roster.snapshot("w2").unwrap();
    assert_eq!(first.state, WorkerState::Done);
    let first_ended = first.started_at_unix + first.elapsed.as_secs_f64();
    assert!(
        second.started_at_unix + 0.05 >= first_ended,
        "w2 started at {} before w1 ended at {first_ended}",
        second.started_at_unix
    );
    // The killed one never ran: no pid file for its run, no result.
    assert!(!run.dir.path().join("w3.1").exists());
    let third = run.roster.snapshot("w3").unwrap();
    assert_eq!(
        (third.state, third.last_result),
        (WorkerState::Killed, None)
    );

    let list = run.ok("vibe_list", json!({})).await;
    expect_test::expect![[r#"
        vibe_list: 3 workers (0 running of at most 1)
        w1  first   fast  done    …s  fast worker w1 run 1 (first)
        w2  second  fast  done    …s  fast worker w2 run 1 (second)
        w3  third   fast  killed  …s  (no result yet)"#]]
    .assert_eq(&list_without_processes(&list.joined_text(), &run));
}

#[tokio::test]
async fn a_queued_worker_keeps_its_place_when_sent_a_message_and_a_rerun_queues_too() {
    let run = Run::capped(1);
    run.spawn("blocker", "sleep 30").await;
    run.spawn("waiting", "say first words").await;
    let out = run
        .ok(
            "vibe_send",
            json!({"worker_id": "w2", "message": "say more words"}),
        )
        .await;
    expect_test::expect!["w2 is queued (#1 in line): appended the message to its brief; it runs with it when it starts (vibe_wait w2 for its result)"]
        .assert_eq(&out.joined_text());

    // Killing the running worker frees its slot: the queued one starts.
    run.ok("vibe_kill", json!({"worker_id": "w1"})).await;
    let out = run
        .ok(
            "vibe_wait",
            json!({"worker_id": "w2", "timeout_seconds": 20}),
        )
        .await;
    assert!(
        out.joined_text()
            .ends_with("first words\nmore words\nfinished"),
        "{}",
        out.joined_text()
    );

    // A re-run while the one slot is taken waits in the queue.
    run.spawn("blocker 2", "sleep 30").await;
    let out = run
        .ok(
            "vibe_send",
            json!({"worker_id": "w2", "message": "say again"}),
        )
        .await;
    expect_test::expect!["w2 was done: its new run (run 2) is queued (#1 in line; 1 running of at most 1; 1 queued); vibe_wait w2 waits through the queue"]
        .assert_eq(&out.joined_text());

    // Vibe mode off kills running and queued workers; none is started.
    run.roster.set_vibe_mode(false).await.unwrap();
    let states: Vec<(String, WorkerState, u32)> = run
        .roster
        .snapshots()
        .into_iter()
        .map(|w| (w.id, w.state, w.runs))
        .collect();
    assert_eq!(
        states,
        [
            ("w1".to_string(), WorkerState::Killed, 1),
            ("w2".to_string(), WorkerState::Killed, 2),
            ("w3".to_string(), WorkerState::Killed, 1),
        ]
    );
    assert!(
        !run.dir.path().join("w2.2").exists(),
        "w2's re-run never ran"
    );
}
