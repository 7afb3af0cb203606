//! The program's output as whole lines: a program that prints each line in
//! pieces while a logpoint fires between the pieces reads back with every
//! line whole (the program's and the logpoint's), in arrival order, and a
//! last line without its newline is kept when the program ends.

mod common;

use common::*;
use expect_test::{expect, Expect};
use serde_json::json;

/// A program printing `total N` in two pieces per line, a logpoint on the
/// line between the pieces, and what `output` reads: the logpoint's
/// lines, `--`, the program's.
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
                i=0
                i=1
                i=2
                --
                debug output  pieces.py
                total 0
                total 10
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
                > [Go 1]: i=0
                > [Go 1]: i=1
                > [Go 1]: i=2
                --
                debug output  cmd/pieces
                Building <root>/cmd/pieces
                total 0
                total 10
                total 20
                no newline at the end
                (session ended: the program exited with code 0)"#]],
        },
        Row {
            needs: &[&["node"]],
            fixture: "node",
            file: "pieces.js",
            line: 5,
            program: "pieces.js",
            output: expect![[r#"
                i=0
                i=1
                i=2
                --
                debug output  pieces.js
                total 0
                total 10
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
        // The adapter decides how the two streams interleave (debugpy's
        // order varies from run to run); what must hold is that every line
        // is whole. So the snapshot shows the logpoint's lines, then the
        // program's, each in arrival order.
        let out = masked(&b, &out);
        let (logged, printed): (Vec<&str>, Vec<&str>) = out.lines().partition(|l| l.contains("i="));
        row.output.assert_eq(&format!(
            "{}\n--\n{}",
            logged.join("\n"),
            printed.join("\n")
        ));
        let recorded = b.processes().await;
        b.call(json!({"op": "terminate"})).await;
        assert_no_orphans(&b, &recorded).await;
    }
}
