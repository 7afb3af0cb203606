//! The program's output as whole lines: a program that prints each line in
//! pieces while a logpoint fires between the pieces reads back with every
//! line whole (the program's and the logpoint's), in arrival order, and a
//! last line without its newline is kept when the program ends.

mod common;

use common::*;
use expect_test::{expect, Expect};
use serde_json::json;

/// A program printing `total N` in two pieces per line, a logpoint on the
/// line between the pieces, and what `output` reads.
struct Row {
    needs: &'static [&'static [&'static str]],
    fixture: &'static str,
    /// The file and line of the logpoint (between the pieces).
    file: &'static str,
    line: u32,
    program: &'static str,
    output: Expect,
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            needs: &[&["debugpy"], &["python3"]],
            fixture: "python",
            file: "pieces.py",
            line: 8,
            program: "pieces.py",
            output: expect![[r#"
            debug output  pieces.py
            i=0
            i=1
            total 0
            total 10
            i=2
            total 20
            no newline at the end
            (session ended: the program exited with code 0)"#]],
        },
        Row {
            needs: &[&["dlv"], &["go"]],
            fixture: "go",
            file: "cmd/pieces/main.go",
            line: 11,
            program: "cmd/pieces",
            output: expect![[r#"
            debug output  cmd/pieces
            Building <root>/cmd/pieces
            > [Go 1]: i=0
            total 0
            > [Go 1]: i=1
            total 10
            > [Go 1]: i=2
            total 20
            no newline at the end
            (session ended: the program exited with code 0)"#]],
        },
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_keeps_whole_lines_while_a_logpoint_fires() {
    for row in rows() {
        if row
            .needs
            .iter()
            .any(|any| test_support::fixtures::require(any).is_none())
        {
            continue;
        }
        let dir = copy_fixture(row.fixture);
        let b = bench(dir.path(), config());
        b.call(json!({"op": "breakpoints", "file": row.file,
            "lines": [{"line": row.line, "log_message": "i={i}"}]}))
            .await;
        let (text, s) = b
            .call(json!({"op": "launch", "program": row.program, "timeout_seconds": 60}))
            .await;
        assert_eq!(s["state"], "ended", "{text}");
        let (out, _) = b.call(json!({"op": "output"})).await;
        row.output.assert_eq(&masked(&b, &out));
        let recorded = b.processes().await;
        b.call(json!({"op": "terminate"})).await;
        assert_no_orphans(&b, &recorded).await;
    }
}
