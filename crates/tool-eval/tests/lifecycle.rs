//! Idle budgets, interrupts, kernels that die, reset, cancellation, and that
//! no kernel process (or anything a cell started) outlives the run.

mod common;
use common::*;
use expect_test::expect;
use serde_json::json;
use std::time::{Duration, Instant};
use tool_core::process::pid_alive;
use tool_core::{CallContext, CancellationToken, Surface, ToolError};
use tool_eval::EvalConfig;

fn quick_run() -> Option<Run> {
    let python = fixture_python()?;
    let node = node()?;
    Some(Run::new(EvalConfig {
        python: Some(python),
        node: Some(node),
        // The default: a loaded machine needs it to unwind an interrupted
        // cell (the kill after it is what the stubborn cell tests).
        interrupt_grace_seconds: 3.0,
        ..EvalConfig::default()
    }))
}

fn cell(code: &str, language: &str, timeout: f64) -> serde_json::Value {
    json!({"code": code, "language": language, "timeout_seconds": timeout, "description": "a lifecycle test cell here"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_budget_pauses_for_bridged_calls_and_output() {
    let Some(run) = quick_run() else { return };
    std::fs::write(run.root().join("data.txt"), "x\n").unwrap();
    run.py("import time\nkept = 'still here'").await.unwrap();

    // 2 s inside a bridged call is not idle time.
    let out = run
        .call(cell(
            "r = tool('read_file', {'path': 'data.txt', 'delay_ms': 2000})\nr",
            "python",
            1.0,
        ))
        .await
        .unwrap();
    assert!(text(&out).ends_with("\nx"), "{}", text(&out));

    // Output shows the cell is alive: 10 × 0.2 s with prints fits a 1 s budget
    // (0.8 s of room between prints for a loaded machine).
    let out = run
        .call(cell(
            "for i in range(10):\n    print('tick', i, flush=True)\n    time.sleep(0.2)",
            "python",
            1.0,
        ))
        .await
        .unwrap();
    let t = text(&out);
    expect![[r#"
        eval python  a lifecycle test cell here
        tick 0
        tick 1
        tick 2
        tick 3
        tick 4
        tick 5
        tick 6
        tick 7
        tick 8
        tick 9"#]]
    .assert_eq(&masked(&t, run.root()));

    // 10 s of silent sleep is not: interrupted at ~1 s, the kernel survives.
    let started = Instant::now();
    let e = run
        .call(cell("time.sleep(10)", "python", 1.0))
        .await
        .unwrap_err();
    let took = started.elapsed();
    let ToolError::TimedOut(t) = &e else {
        panic!("{e:?}")
    };
    expect![[r#"
        eval python  a lifecycle test cell here
        Traceback (most recent call last):
          File "<cell 4>", line 1, in <module>
            time.sleep(10)
        KeyboardInterrupt
        The cell ran for T with no output and no bridged call pending (its idle budget), so it was interrupted; the python kernel and its variables survive. If the work is slow but fine, pass a larger timeout_seconds (at most 3600) or have it print progress."#]].assert_eq(&masked(t, run.root()));
    assert!(
        took < Duration::from_secs(8),
        "interrupted well before the sleep ended: {took:?}"
    );
    assert!(text(&run.py("kept").await.unwrap()).ends_with("'still here'"));

    // The same for JavaScript: a bridged wait is fine, a silent timer is not.
    let out = run
        .call(cell("const r = await tool('read_file', { path: 'data.txt', delay_ms: 2000 }); r.text.length", "javascript", 1.0))
        .await
        .unwrap();
    assert!(text(&out).ends_with("\n2"), "{}", text(&out));
    let e = run
        .call(cell(
            "let jsKept = 7;\nawait new Promise((r) => setTimeout(r, 10000))",
            "javascript",
            1.0,
        ))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::TimedOut(_)), "{e:?}");
    let t = err_text(&e);
    expect![[r#"
        timed out: eval javascript  a lifecycle test cell here
        Interrupted: the cell was still waiting (on a promise or timer) when it was interrupted; pending callbacks may still run later
        The cell ran for T with no output and no bridged call pending (its idle budget), so it was interrupted; the javascript kernel and its variables survive. If the work is slow but fine, pass a larger timeout_seconds (at most 3600) or have it print progress."#]].assert_eq(&masked(&t, run.root()));
    assert!(text(&run.js("jsKept").await.unwrap()).ends_with("\n7"));
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_loops_are_interrupted_and_stubborn_cells_killed() {
    let Some(run) = quick_run() else { return };
    run.py("counter = 41").await.unwrap();
    let e = run
        .call(cell("while True:\n    pass", "python", 1.0))
        .await
        .unwrap_err();
    let ToolError::TimedOut(t) = &e else {
        panic!("{e:?}")
    };
    // The interrupt lands on either line of the loop: frames left out.
    let t: Vec<&str> = t.lines().filter(|l| !l.starts_with("  ")).collect();
    let t = t.join("\n");
    expect![[r#"
        eval python  a lifecycle test cell here
        Traceback (most recent call last):
        KeyboardInterrupt
        The cell ran for T with no output and no bridged call pending (its idle budget), so it was interrupted; the python kernel and its variables survive. If the work is slow but fine, pass a larger timeout_seconds (at most 3600) or have it print progress."#]].assert_eq(&masked(&t, run.root()));
    let out = run.py("counter + 1").await.unwrap();
    assert!(text(&out).ends_with("\n42"));
    let pid = kernel_pid(&out);

    // A cell that swallows the interrupt is killed after the grace period;
    // the next cell starts a fresh kernel and says the state was lost.
    let e = run
        .call(cell("import time\nwhile True:\n    try:\n        time.sleep(10)\n    except KeyboardInterrupt:\n        pass", "python", 1.0))
        .await
        .unwrap_err();
    let t = err_text(&e);
    expect![[r#"
        timed out: eval python  a lifecycle test cell here
        The cell ran for T with no output and no bridged call pending (its idle budget) and was interrupted, but it did not stop, so the python kernel was killed: its variables are lost and the next cell starts a fresh kernel. If the work is slow but fine, pass a larger timeout_seconds (at most 3600) or have it print progress."#]].assert_eq(&masked(&t, run.root()));
    assert!(!pid_alive(pid), "the old kernel is gone");
    let e = run.py("counter").await.unwrap_err();
    let t = err_text(&e);
    expect![[r#"
        failed: eval python  a test cell in python here
        (new python kernel: the previous one was killed after an interrupt it did not stop for; variables from earlier cells are gone — run the cells that defined them again)
        (started a python kernel: Python 3.x from FIXTURES/venv/bin/python (config))
        Traceback (most recent call last):
          File "<cell 1>", line 1, in <module>
            counter
        NameError: name 'counter' is not defined
        The cell raised an error; what it assigned before the error is kept. Fix the cell and run it again."#]].assert_eq(&masked(&t, run.root()));

    // JavaScript: a synchronous busy loop is terminated and state survives.
    run.js("const jsState = 'kept';").await.unwrap();
    let e = run
        .call(cell("while (true) {}", "javascript", 1.0))
        .await
        .unwrap_err();
    let ToolError::TimedOut(t) = &e else {
        panic!("{e:?}")
    };
    expect![[r#"
        eval javascript  a lifecycle test cell here
        Interrupted: the running script was terminated
        The cell ran for T with no output and no bridged call pending (its idle budget), so it was interrupted; the javascript kernel and its variables survive. If the work is slow but fine, pass a larger timeout_seconds (at most 3600) or have it print progress."#]].assert_eq(&masked(t, run.root()));
    let t = text(&run.js("jsState").await.unwrap());
    expect![[r#"
        eval javascript  a test cell in javascript here
        kept"#]]
    .assert_eq(&masked(&t, run.root()));
    // A subprocess the cell waits on is stopped by the interrupt too.
    let started = Instant::now();
    let e = run
        .call(cell(
            "require('child_process').execSync('sleep 30')",
            "javascript",
            1.0,
        ))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10), "{e}");
    let t = err_text(&e);
    expect![[r#"
        timed out: eval javascript  a lifecycle test cell here
        Error: Command failed: sleep 30
            at cell4.js:1:26
        The cell ran for T with no output and no bridged call pending (its idle budget), so it was interrupted; the javascript kernel and its variables survive. If the work is slow but fine, pass a larger timeout_seconds (at most 3600) or have it print progress."#]].assert_eq(&masked(&t, run.root()));
    let t = text(&run.js("jsState").await.unwrap());
    expect![[r#"
        eval javascript  a test cell in javascript here
        kept"#]]
    .assert_eq(&masked(&t, run.root()));
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_kernels_are_reported_and_replaced() {
    let Some(run) = quick_run() else { return };
    run.py("gone = 1").await.unwrap();
    let e = run
        .py("import os\nprint('last words', flush=True)\nos._exit(1)")
        .await
        .unwrap_err();
    let t = err_text(&e);
    expect![[r#"
        failed: eval python  a test cell in python here
        last words
        The python kernel died while running this cell (exit status 1): its variables are lost and the next cell starts a fresh kernel. Avoid what killed it (os._exit, process.exit, a crash in native code, running out of memory) and run the needed cells again."#]].assert_eq(&masked(&t, run.root()));
    let e = run.py("gone").await.unwrap_err();
    let t = err_text(&e);
    expect![[r#"
        failed: eval python  a test cell in python here
        (new python kernel: the previous one died (exit status 1); variables from earlier cells are gone — run the cells that defined them again)
        (started a python kernel: Python 3.x from FIXTURES/venv/bin/python (config))
        Traceback (most recent call last):
          File "<cell 1>", line 1, in <module>
            gone
        NameError: name 'gone' is not defined
        The cell raised an error; what it assigned before the error is kept. Fix the cell and run it again."#]].assert_eq(&masked(&t, run.root()));
    assert!(text(&run.py("'fresh'").await.unwrap()).ends_with("'fresh'"));

    // A crash in native code.
    let e = run
        .py("import ctypes\nctypes.string_at(0)")
        .await
        .unwrap_err();
    let t = err_text(&e);
    expect![[r#"
        failed: eval python  a test cell in python here
        The python kernel died while running this cell (killed by signal 11 (SIGSEGV), a crash in native code): its variables are lost and the next cell starts a fresh kernel. Avoid what killed it (os._exit, process.exit, a crash in native code, running out of memory) and run the needed cells again."#]].assert_eq(&masked(&t, run.root()));

    let e = run.js("process.exit(3)").await.unwrap_err();
    let t = err_text(&e);
    expect![[r#"
        failed: eval javascript  a test cell in javascript here
        (started a javascript kernel: Node.js N from NODE (config))
        The javascript kernel died while running this cell (exit status 3): its variables are lost and the next cell starts a fresh kernel. Avoid what killed it (os._exit, process.exit, a crash in native code, running out of memory) and run the needed cells again."#]].assert_eq(&masked(&t, run.root()));
    let t = text(&run.js("1 + 1").await.unwrap());
    expect![[r#"
        eval javascript  a test cell in javascript here
        (new javascript kernel: the previous one died (exit status 3); variables from earlier cells are gone — run the cells that defined them again)
        (started a javascript kernel: Node.js N from NODE (config))
        2"#]].assert_eq(&masked(&t, run.root()));
    run.finish().await;
}

/// What a successful cell's structured result says of the variables, beside
/// the text's note about the kernel.
fn kept(out: &tool_core::ToolOutput) -> (bool, bool) {
    let said_gone = text(out).contains("variables from earlier cells are gone")
        || text(out).contains("this cell runs in a clean one");
    let kept = out.structured.as_ref().expect("structured")["variables_kept"]
        .as_bool()
        .expect("variables_kept is a boolean");
    (kept, said_gone)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_cell_of_a_replaced_or_reset_kernel_keeps_no_variables() {
    let Some(run) = quick_run() else { return };
    // (variables_kept, the text says they are gone), cell by cell.
    let mut seen = vec![kept(&run.py("a = 1").await.unwrap())];
    run.py("import os\nos._exit(1)").await.unwrap_err();
    let first = run.py("2 + 2").await.unwrap();
    expect![[r#"
        eval python  a test cell in python here
        (new python kernel: the previous one died (exit status 1); variables from earlier cells are gone — run the cells that defined them again)
        (started a python kernel: Python 3.x from FIXTURES/venv/bin/python (config))
        4"#]]
    .assert_eq(&masked(&text(&first), run.root()));
    seen.push(kept(&first));
    seen.push(kept(&run.py("b = 2").await.unwrap()));
    let reset = json!({"code": "c = 3", "reset": true, "description": "a reset cell"});
    seen.push(kept(&run.call(reset).await.unwrap()));
    seen.push(kept(&run.py("c").await.unwrap()));
    assert_eq!(
        seen,
        vec![
            (true, false),
            (false, true),
            (true, false),
            (false, true),
            (true, false)
        ]
    );
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_cancel_and_no_survivors() {
    let Some(run) = quick_run() else { return };
    let out = run.py("state = 'old'").await.unwrap();
    let first = kernel_pid(&out);
    let out = run
        .call(json!({"code": "'state' in globals()", "reset": true, "description": "check a clean kernel after reset"}))
        .await
        .unwrap();
    let t = text(&out);
    expect![[r#"
        eval python  check a clean kernel after reset
        (reset: the previous python kernel was stopped; this cell runs in a clean one)
        (started a python kernel: Python 3.x from FIXTURES/venv/bin/python (config))
        False"#]]
    .assert_eq(&masked(&t, run.root()));
    assert_ne!(kernel_pid(&out), first);
    assert!(!pid_alive(first));

    // Cancelling the call interrupts the cell; the kernel survives.
    run.py("import time\nalive = True").await.unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let e = run
        .registry
        .call(
            Surface::FULL,
            "eval",
            json!({"code": "time.sleep(30)", "description": "a cell that will be cancelled"}),
            CallContext::new().with_cancel(cancel),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::Cancelled(_)), "{e:?}");
    assert!(text(&run.py("alive").await.unwrap()).ends_with("True"));

    // Processes the cells started die with the run.
    let out = run
        .py("import subprocess\nchild = subprocess.Popen(['sleep', '300'])\nchild.pid")
        .await
        .unwrap();
    let py_child: u32 = text(&out)
        .rsplit('\n')
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let out = run
        .js("const c = require('child_process').spawn('sleep', ['300']); c.pid")
        .await
        .unwrap();
    let js_child: u32 = text(&out)
        .rsplit('\n')
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(pid_alive(py_child) && pid_alive(js_child));
    let kernels: Vec<u32> = run
        .eval
        .kernel_pids()
        .await
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    assert_eq!(kernels.len(), 2);
    run.finish().await;
    assert_no_survivors(&[py_child, js_child]).await;
    assert_no_survivors(&kernels).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_stops_what_cells_started_in_other_sessions() {
    let Some(run) = quick_run() else { return };
    // A `setsid` child of the kernel, and a double-forked `setsid` one whose
    // parent has exited.
    let out = run
        .py("import subprocess\n\
             a = subprocess.Popen(['setsid', 'sleep', '300'])\n\
             b = subprocess.run(['sh', '-c', 'setsid sleep 300 >/dev/null 2>&1 & echo $!'], \
             capture_output=True, text=True).stdout.strip()\n\
             print(a.pid, b)")
        .await
        .unwrap();
    let t = text(&out);
    let escaped: Vec<u32> = t
        .lines()
        .last()
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(escaped.len(), 2, "{t}");
    assert!(escaped.iter().all(|p| pid_alive(*p)), "{escaped:?} running");
    run.call(json!({"code": "1", "reset": true, "description": "reset the kernel"}))
        .await
        .unwrap();
    assert_no_survivors(&escaped).await;
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_budgets_are_refused() {
    let Some(run) = quick_run() else { return };
    let e = run.call(cell("1", "python", 100_000.0)).await.unwrap_err();
    expect!["bad arguments: argument `timeout_seconds`: 100000 is above the maximum of 3600 s; pass at most that, or have the cell print progress (output keeps it alive)"].assert_eq(&err_text(&e));
    let e = run.call(cell("1", "python", 0.0)).await.unwrap_err();
    expect!["bad arguments: argument `timeout_seconds`: must be a positive number of seconds"]
        .assert_eq(&err_text(&e));
    let e = run
        .call(json!({"code": "1", "language": "ruby", "description": "an unknown language here"}))
        .await
        .unwrap_err();
    expect!["bad arguments: argument `language`: unknown variant `ruby`, expected one of `py`, `python`, `javascript`, `js`, `node`; check the tool's input schema"].assert_eq(&err_text(&e));
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_first_javascript_cell_is_interrupted_and_the_kernel_lives() {
    // Cold: the very first cell of a fresh kernel is the endless loop.
    let interrupted = expect![[r#"
        timed out: eval javascript  a lifecycle test cell here
        (started a javascript kernel: Node.js N from NODE (config))
        Interrupted: the running script was terminated
        The cell ran for T with no output and no bridged call pending (its idle budget), so it was interrupted; the javascript kernel and its variables survive. If the work is slow but fine, pass a larger timeout_seconds (at most 3600) or have it print progress."#]];
    // The same kernel after it: no word of a new one.
    let next = expect![[r#"
        eval javascript  a test cell in javascript here
        2"#]];
    for _ in 0..3 {
        let Some(run) = quick_run() else { return };
        let e = run
            .call(cell("while (true) {}", "javascript", 0.5))
            .await
            .unwrap_err();
        assert!(matches!(e, ToolError::TimedOut(_)), "{e:?}");
        interrupted.assert_eq(&masked(&err_text(&e), run.root()));
        let t = text(&run.js("1 + 1").await.unwrap());
        next.assert_eq(&masked(&t, run.root()));
        run.finish().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cells_are_interruptible_when_the_harness_ignores_sigint() {
    // A harness started as a background job of a shell inherits SIGINT
    // ignored, and so would its kernels.
    let Some(python) = fixture_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("python-ignoring-sigint");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ntrap '' INT\nexec '{}' \"$@\"\n",
            python.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = Run::new(EvalConfig {
        python: Some(wrapper),
        interrupt_grace_seconds: 3.0,
        ..EvalConfig::default()
    });
    run.py("kept = 1").await.unwrap();
    let e = run
        .call(cell("import time\ntime.sleep(30)", "python", 0.5))
        .await
        .unwrap_err();
    let t = err_text(&e);
    expect![[r#"
        timed out: eval python  a lifecycle test cell here
        Traceback (most recent call last):
          File "<cell 2>", line 2, in <module>
            time.sleep(30)
        KeyboardInterrupt
        The cell ran for T with no output and no bridged call pending (its idle budget), so it was interrupted; the python kernel and its variables survive. If the work is slow but fine, pass a larger timeout_seconds (at most 3600) or have it print progress."#]].assert_eq(&masked(&t, run.root()));
    run.finish().await;
}
