//! Background cells: `background: true` answers at once with a job id; a
//! look (`job`) returns the output since the last look and the state; `cancel`
//! interrupts; while a job runs, other cells of its language are refused.

mod common;
use common::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// `2.3 s` and `42 s` become `<t>`, so answers can be compared whole.
fn no_times(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(" s") {
        let head = &rest[..i];
        let num_start = head
            .rfind(|c: char| !(c.is_ascii_digit() || c == '.'))
            .map_or(0, |j| j + 1);
        if num_start < head.len() && head[num_start..].starts_with(|c: char| c.is_ascii_digit()) {
            out.push_str(&head[..num_start]);
            out.push_str("<t>");
        } else {
            out.push_str(head);
            out.push_str(" s");
        }
        rest = &rest[i + 2..];
    }
    out.push_str(rest);
    out
}

fn look(id: u64) -> Value {
    json!({"job": id, "description": "look at the background job"})
}

fn background(code: &str, language: &str) -> Value {
    json!({"code": code, "language": language, "background": true, "description": "count slowly in the background"})
}

fn state(out: &tool_core::ToolOutput) -> String {
    out.structured.as_ref().unwrap()["state"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The output lines of a look (after its label and state lines).
fn output_lines(out: &tool_core::ToolOutput) -> Vec<String> {
    text(out).lines().skip(2).map(str::to_string).collect()
}

/// Look at job `id` every 200 ms until it is no longer running, adding the
/// output of the running looks to `seen`; the look that found its end.
async fn look_until_it_ends(run: &Run, id: u64, seen: &mut Vec<String>) -> tool_core::ToolOutput {
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let out = run.call(look(id)).await.unwrap();
        if state(&out) != "running" {
            return out;
        }
        seen.extend(output_lines(&out));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_background_cell_runs_is_looked_at_and_ends() {
    let Some(run) = Run::fixtures() else { return };
    let first = run.py("import time\nstarted = True").await.unwrap();
    let pid = kernel_pid(&first);

    let t0 = Instant::now();
    let out = run
        .call(background(
            "for i in range(6):\n    print(i, flush=True)\n    time.sleep(0.5)\n'counted'",
            "python",
        ))
        .await
        .unwrap();
    assert!(
        t0.elapsed() < Duration::from_millis(500),
        "answers at once: {:?}",
        t0.elapsed()
    );
    expect_test::expect![[r#"
        eval python  count slowly in the background
        (started background job 1; look at it with {"job": 1}, stop it with {"job": 1, "cancel": true}; other python cells are refused until it ends)"#]]
    .assert_eq(&text(&out));

    // Another python cell, inspect, and reset are refused, naming the job.
    let e = run.py("1 + 1").await.unwrap_err();
    expect_test::expect![[r#"refused: cell not run: the python kernel is running background job 1 (count slowly in the background, <t> so far). Look at it with {"job": 1}, or stop it with {"job": 1, "cancel": true}; then run this again"#]]
        .assert_eq(&no_times(&err_text(&e)));
    let e = run
        .call(json!({"inspect": true, "description": "what the kernel holds now"}))
        .await
        .unwrap_err();
    assert!(
        err_text(&e).starts_with("refused: inspect: the python kernel is running background job 1"),
        "{e}"
    );

    // Looks take the output since the last look; together they are all of it.
    let out = loop {
        let out = run.call(look(1)).await.unwrap();
        assert_eq!(state(&out), "running");
        if !output_lines(&out).is_empty() {
            break out;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut seen = output_lines(&out);
    assert!(!seen.is_empty() && seen.len() < 6, "{}", text(&out));
    assert!(
        no_times(&text(&out)).starts_with("eval python  job 1: count slowly in the background\n(job 1 is running, <t> so far; its output since the last look:)\n0"),
        "{}",
        text(&out)
    );
    // The other language is free meanwhile.
    let out = run.js("console.log('js meanwhile')").await.unwrap();
    assert_eq!(text(&out).lines().last(), Some("js meanwhile"));
    let ended = look_until_it_ends(&run, 1, &mut seen).await;
    assert_eq!(state(&ended), "done");
    let t = text(&ended);
    assert!(
        no_times(&t).starts_with("eval python  job 1: count slowly in the background\n(job 1 ended: done after <t>; its output since the last look:)\n"),
        "{t}"
    );
    assert!(t.ends_with("\n'counted'"), "{t}");
    let last: Vec<String> = output_lines(&ended)
        .into_iter()
        .filter(|l| l != "'counted'")
        .collect();
    seen.extend(last);
    assert_eq!(seen, ["0", "1", "2", "3", "4", "5"]);
    expect_test::expect![[r#"
        eval python  job 1: count slowly in the background
        (job 1 ended (done); its end was shown in an earlier look)"#]]
    .assert_eq(&text(&run.call(look(1)).await.unwrap()));

    // The kernel is back, with what the job defined.
    let out = run.py("i").await.unwrap();
    assert_eq!(text(&out).lines().last(), Some("5"));
    assert_eq!(kernel_pid(&out), pid);

    // A failing job says so at its end.
    run.call(background(
        "time.sleep(0.2)\nraise ValueError('boom')",
        "python",
    ))
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let e = run.call(look(2)).await.unwrap_err();
    let t = no_times(&err_text(&e));
    expect_test::expect![[r#"
        failed: eval python  job 2: count slowly in the background
        (job 2 ended: failed after <t>; its output since the last look:)
        Traceback (most recent call last):
          File "<cell 4>", line 2, in <module>
            raise ValueError('boom')
        ValueError: boom
        The cell raised an error; what it assigned before the error is kept. Fix the cell and run it again."#]].assert_eq(&t);

    // Unknown ids and misplaced arguments are refused.
    let e = run.call(look(9)).await.unwrap_err();
    expect_test::expect!["bad arguments: argument `job`: there is no background job 9 in this run; its jobs are 1 (python done), 2 (python failed)"]
        .assert_eq(&err_text(&e));
    let e = run
        .call(json!({"job": 1, "code": "1", "description": "look and run at once"}))
        .await
        .unwrap_err();
    assert!(
        err_text(&e).starts_with("bad arguments: argument `job`"),
        "{e}"
    );
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_cell_is_cancelled_and_its_kernel_lives() {
    let Some(run) = Run::fixtures() else { return };
    run.py("import time\nkept = 41").await.unwrap();
    run.call(background("while True:\n    time.sleep(0.05)", "python"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t0 = Instant::now();
    let e = run
        .call(json!({"job": 1, "cancel": true, "description": "stop the background job"}))
        .await
        .unwrap_err();
    // It stops on the interrupt, well within the grace before a kill.
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    let t = no_times(&err_text(&e));
    // The frame the interrupt landed in (the sleep, or the loop's head)
    // is left out.
    let t: Vec<&str> = t.lines().filter(|l| !l.starts_with("  ")).collect();
    let t = t.join("\n");
    expect_test::expect![[r#"
        cancelled: eval python  job 1: count slowly in the background
        (job 1 was cancelled: interrupted after <t>; its output since the last look:)
        Traceback (most recent call last):
        KeyboardInterrupt
        The call was cancelled, so the cell was interrupted; the python kernel and its variables survive."#]].assert_eq(&t);
    let out = run.py("kept + 1").await.unwrap();
    assert_eq!(text(&out).lines().last(), Some("42"));

    // JavaScript: the same life cycle.
    run.js("let n = 0").await.unwrap();
    let out = run
        .call(background("for (let i = 0; i < 3; i++) { console.log('js ' + i); await new Promise(r => setTimeout(r, 100)); }\nn = 3", "javascript"))
        .await
        .unwrap();
    assert_eq!(out.structured.as_ref().unwrap()["job"], 2);
    let e = run.js("n").await.unwrap_err();
    assert!(
        err_text(&e).starts_with(
            "refused: cell not run: the javascript kernel is running background job 2"
        ),
        "{e}"
    );
    let mut seen = Vec::new();
    let out = look_until_it_ends(&run, 2, &mut seen).await;
    assert_eq!(state(&out), "done");
    seen.extend(output_lines(&out));
    assert_eq!(seen, ["js 0", "js 1", "js 2", "3"]);
    assert_eq!(text(&run.js("n").await.unwrap()).lines().last(), Some("3"));
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_dropped_while_a_job_runs_leaves_no_kernel_behind() {
    let Some(run) = Run::fixtures() else { return };
    run.call(background(
        "import time\nwhile True:\n    time.sleep(0.05)",
        "python",
    ))
    .await
    .unwrap();
    // `finish` drops the registry and the tool, and checks every kernel is gone.
    run.finish().await;
}
