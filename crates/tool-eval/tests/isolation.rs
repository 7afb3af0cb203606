//! Output belongs to its cell: a flood of output is capped as it streams
//! (by both drivers before the pipe), drained before the cell answers, and
//! never shows up in a later cell.

mod common;
use common::*;
use std::time::Instant;

/// Held by each flood test: floods running side by side would time each
/// other, not the kernels.
static ONE_FLOOD_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The text of a result without its label line.
fn body(out: &tool_core::ToolOutput) -> String {
    let t = text(out);
    t.split_once('\n')
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

/// The one line of a capped answer that says how much was dropped.
fn dropped_line(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("dropped")).collect();
    assert_eq!(
        lines.len(),
        1,
        "one dropped line expected in: {}",
        &text[..300.min(text.len())]
    );
    lines[0].trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_javascript_flood_stays_in_its_cell() {
    let _alone = ONE_FLOOD_AT_A_TIME.lock().await;
    let Some(run) = Run::fixtures() else { return };
    run.js("1").await.unwrap();
    let started = Instant::now();
    let out = run
        .js("const chunk = 'x'.repeat(65535) + '\\n';\nfor (let i = 0; i < 2000; i++) process.stdout.write(chunk);\n'flooded'")
        .await
        .unwrap();
    eprintln!("javascript 2,000 x 64 KB cell: {:?}", started.elapsed());
    let t = text(&out);
    assert!(t.ends_with("\nflooded"), "{}", &t[t.len() - 300..]);
    expect_test::expect!["… 131039232 bytes of output dropped here (the first 16384 and last 16384 bytes are kept) — print less, or write the output to a file and read parts of it"].assert_eq(&dropped_line(&t));
    for i in 1..=3 {
        let out = run.js(&format!("console.log('small {i}')")).await.unwrap();
        assert_eq!(body(&out), format!("small {i}"));
    }
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_flood_stays_in_its_cell() {
    let _alone = ONE_FLOOD_AT_A_TIME.lock().await;
    let Some(run) = Run::fixtures() else { return };
    run.py("1").await.unwrap();
    let started = Instant::now();
    let out = run
        .py("import sys\nchunk = 'x' * 65535 + '\\n'\nfor i in range(2000):\n    sys.stdout.write(chunk)\n'flooded'")
        .await
        .unwrap();
    eprintln!("python 2,000 x 64 KB cell: {:?}", started.elapsed());
    let t = text(&out);
    assert!(t.ends_with("\n'flooded'"), "{}", &t[t.len() - 300..]);
    expect_test::expect!["… 131039232 bytes of output dropped here (the first 16384 and last 16384 bytes are kept) — print less, or write the output to a file and read parts of it"].assert_eq(&dropped_line(&t));
    for i in 1..=3 {
        let out = run.py(&format!("print('small {i}')")).await.unwrap();
        assert_eq!(body(&out), format!("small {i}"));
    }
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_megabyte_flood_answers_with_the_cap_stated() {
    let _alone = ONE_FLOOD_AT_A_TIME.lock().await;
    let Some(run) = Run::fixtures() else { return };
    run.js("1").await.unwrap();
    run.py("1").await.unwrap();
    let (mut js_best, mut py_best) = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        let started = Instant::now();
        let out = run
            .js("const mb = 'y'.repeat(1 << 20);\nfor (let i = 0; i < 100; i++) process.stdout.write(mb);")
            .await
            .unwrap();
        eprintln!("javascript 100 x 1 MB cell: {:?}", started.elapsed());
        js_best = js_best.min(started.elapsed().as_secs_f64());
        expect_test::expect!["… 104824832 bytes of output dropped here (the first 16384 and last 16384 bytes are kept) — print less, or write the output to a file and read parts of it"].assert_eq(&dropped_line(&text(&out)));
        let started = Instant::now();
        let out = run
            .py("import sys\nmb = 'y' * (1 << 20)\nfor i in range(100):\n    sys.stdout.write(mb)")
            .await
            .unwrap();
        eprintln!("python 100 x 1 MB cell: {:?}", started.elapsed());
        py_best = py_best.min(started.elapsed().as_secs_f64());
        expect_test::expect!["… 104824832 bytes of output dropped here (the first 16384 and last 16384 bytes are kept) — print less, or write the output to a file and read parts of it"].assert_eq(&dropped_line(&text(&out)));
    }
    // Both drivers cap the flood before the pipe: the best of three answers
    // well under half a second (slower single runs are the machine's load).
    assert!(
        js_best < 0.25,
        "javascript 100 x 1 MB best of 3: {js_best:.3} s"
    );
    assert!(
        py_best < 0.25,
        "python 100 x 1 MB best of 3: {py_best:.3} s"
    );
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_written_between_cells_is_labelled_in_the_next_one() {
    let Some(run) = Run::fixtures() else { return };
    run.js("1").await.unwrap();
    let out = run
        .js("setTimeout(() => console.log('from the timer'), 50);\nconsole.log('cell one')")
        .await
        .unwrap();
    assert_eq!(body(&out), "cell one");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let out = run.js("console.log('cell two')").await.unwrap();
    expect_test::expect![[r#"
        (written after an earlier cell ended, by something it left running — a timer, a thread, a process:)
        from the timer
        (this cell's output:)
        cell two"#]]
    .assert_eq(&body(&out));
    let out = run.js("console.log('cell three')").await.unwrap();
    assert_eq!(body(&out), "cell three");
    run.finish().await;
}
