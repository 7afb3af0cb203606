//! The JavaScript table: each op of the debug tool against a real Node.js
//! program under its V8 inspector (the `node` backend). A row is a list of
//! calls and the transcript the model reads for them (each call as `>
//! ARGS`, then its answer or `error: …`); after every row the session is
//! ended and none of its processes may be left.

mod common;

use common::*;
use expect_test::{expect, Expect};
use serde_json::{json, Value};

struct Row {
    name: &'static str,
    calls: Vec<Value>,
    transcript: Expect,
}

#[allow(
    clippy::too_many_lines,
    reason = "a table: one row literal per case, no logic to split"
)]
fn rows() -> Vec<Row> {
    vec![
        Row {
            name: "conditional stop, evaluate, set_variable, continue",
            calls: vec![
                json!({"op": "breakpoints", "file": "avg.js", "lines": [{"line": 5, "condition": "i == 3"}]}),
                json!({"op": "launch", "program": "avg.js"}),
                json!({"op": "evaluate", "expression": "xs[0] + xs[1]"}),
                json!({"op": "set_variable", "name": "total", "value": "100"}),
                json!({"op": "continue"}),
            ],
            transcript: expect![[r#"
                > {"file":"avg.js","lines":[{"condition":"i == 3","line":5}],"op":"breakpoints"}
                debug breakpoints  avg.js
                avg.js:5 set, if `i == 3`  | total += xs[i];
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"avg.js"}
                debug launch  avg.js under node (`<node>`)
                breakpoint avg.js:5 verified, if `i == 3`  | total += xs[i];
                stopped (breakpoint) thread N in mean at avg.js:5
                    5 |     total += xs[i];
                locals: i = 3, total = 23, xs = [4, 8, 15, 16, 23, 42]

                > {"expression":"xs[0] + xs[1]","op":"evaluate"}
                debug evaluate  `xs[0] + xs[1]` in top frame, mean at avg.js:5
                12 (number)

                > {"name":"total","op":"set_variable","value":"100"}
                debug set_variable  in the locals of mean at avg.js:5
                total (number) = 100

                > {"op":"continue"}
                debug continue  thread N
                the program exited with code 0
                output (tail; the output op returns all of it):
                mean: 30.166666666666668"#]],
        },
        Row {
            name: "hit count",
            calls: vec![
                json!({"op": "breakpoints", "file": "avg.js", "lines": [{"line": 5, "hit_condition": "4"}]}),
                json!({"op": "launch", "program": "avg.js"}),
                json!({"op": "breakpoints", "file": "avg.js", "lines": [{"line": 5, "hit_condition": "often"}]}),
            ],
            transcript: expect![[r#"
                > {"file":"avg.js","lines":[{"hit_condition":"4","line":5}],"op":"breakpoints"}
                debug breakpoints  avg.js
                avg.js:5 set, on hit 4  | total += xs[i];
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"avg.js"}
                debug launch  avg.js under node (`<node>`)
                breakpoint avg.js:5 verified, on hit 4  | total += xs[i];
                stopped (breakpoint) thread N in mean at avg.js:5
                    5 |     total += xs[i];
                locals: i = 4, total = 39, xs = [4, 8, 15, 16, 23, 42]

                > {"file":"avg.js","lines":[{"hit_condition":"often","line":5}],"op":"breakpoints"}
                debug breakpoints  avg.js
                avg.js:5 pending (hit condition `often` is not a count: write 5 (the fifth hit), >= 5, > 5, < 5, <= 5 or % 5 (every fifth)), on hit often  | total += xs[i];"#]],
        },
        Row {
            name: "logpoint",
            calls: vec![
                json!({"op": "breakpoints", "file": "avg.js",
                    "lines": [{"line": 5, "log_message": "i={i} total={total}"}, 7]}),
                json!({"op": "launch", "program": "avg.js"}),
                json!({"op": "output"}),
            ],
            transcript: expect![[r#"
                > {"file":"avg.js","lines":[{"line":5,"log_message":"i={i} total={total}"},7],"op":"breakpoints"}
                debug breakpoints  avg.js
                avg.js:5 set, logs `i={i} total={total}` without stopping  | total += xs[i];
                avg.js:7 set  | return total / xs.length;
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"avg.js"}
                debug launch  avg.js under node (`<node>`)
                breakpoint avg.js:5 verified, logs `i={i} total={total}` without stopping  | total += xs[i];
                breakpoint avg.js:7 verified  | return total / xs.length;
                stopped (breakpoint) thread N in mean at avg.js:7
                    7 |   return total / xs.length;
                locals: total = 104, xs = [4, 8, 15, 16, 23, 42]

                > {"op":"output"}
                debug output  avg.js
                i=1 total=0
                i=2 total=8
                i=3 total=23
                i=4 total=39
                i=5 total=62"#]],
        },
        Row {
            name: "stack, scopes, variables, locals",
            calls: vec![
                json!({"op": "breakpoints", "file": "avg.js", "lines": [7]}),
                json!({"op": "launch", "program": "avg.js"}),
                json!({"op": "stack"}),
                json!({"op": "scopes", "frame_id": 2}),
                json!({"op": "variables", "reference": 4}),
                json!({"op": "evaluate", "expression": "values.length", "frame_id": 2}),
                json!({"op": "evaluate", "expression": "nope + 1"}),
                json!({"op": "locals"}),
            ],
            transcript: expect![[r#"
                > {"file":"avg.js","lines":[7],"op":"breakpoints"}
                debug breakpoints  avg.js
                avg.js:7 set  | return total / xs.length;
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"avg.js"}
                debug launch  avg.js under node (`<node>`)
                breakpoint avg.js:7 verified  | return total / xs.length;
                stopped (breakpoint) thread N in mean at avg.js:7
                    7 |   return total / xs.length;
                locals: total = 104, xs = [4, 8, 15, 16, 23, 42]

                > {"op":"stack"}
                debug stack  thread N, stop 1 (breakpoint)
                frame 1  mean at avg.js:7
                    7 |   return total / xs.length;
                frame 2  main at avg.js:12
                   12 |   const result = mean(values);
                frame 3  <module> at avg.js:16
                   16 | main();
                pass a frame id to scopes or evaluate (valid until the program moves)

                > {"frame_id":2,"op":"scopes"}
                debug scopes  frame 2
                Locals  reference 4
                Closure  reference 5
                Global  reference 6, expensive
                pass a reference to variables

                > {"op":"variables","reference":4}
                debug variables  reference 4 (2 variables)
                result (undefined) = undefined
                values (Array) = [4, 8, 15, 16, 23, 42]  [reference 7]

                > {"expression":"values.length","frame_id":2,"op":"evaluate"}
                debug evaluate  `values.length` in frame 2
                6 (number)

                > {"expression":"nope + 1","op":"evaluate"}
                error: failed: evaluating `nope + 1` failed: the adapter refused `evaluate`: ReferenceError: nope is not defined; check the name is in scope in that frame (scopes / variables list what is)

                > {"op":"locals"}
                debug locals  top frame, mean at avg.js:7 (2 variables)
                total (number) = 104
                xs (Array) = [4, 8, 15, 16, 23, 42]  [reference 8]"#]],
        },
        Row {
            name: "uncaught exception",
            calls: vec![
                json!({"op": "launch", "program": "crash.js"}),
                json!({"op": "continue"}),
            ],
            transcript: expect![[r#"
                > {"op":"launch","program":"crash.js"}
                debug launch  crash.js under node (`<node>`)
                stopped: uncaught TypeError: not a number: forty-two — thread N in parse at crash.js:4
                    4 |   if (Number.isNaN(n)) throw new TypeError(`not a number: ${text}`);
                locals: n = NaN, text = "forty-two"

                > {"op":"continue"}
                debug continue  thread N
                the program exited with code 1
                output (tail; the output op returns all of it):
                parsing
                <root>/crash.js:4
                  if (Number.isNaN(n)) throw new TypeError(`not a number: ${text}`);
                                       ^

                TypeError: not a number: forty-two
                    at parse (<root>/crash.js:4:30)
                    at Object.<anonymous> (<root>/crash.js:9:13)
                    at Module._compile (node:internal/…)
                    at Module._extensions..js (node:internal/…)
                    at Module.load (node:internal/…)
                    at Module._load (node:internal/…)
                    at Function.executeUserEntryPoint [as runMain] (node:internal/…)
                    at node:internal/…

                Node.js vVERSION"#]],
        },
        Row {
            name: "caught exception under `all`",
            calls: vec![
                json!({"op": "exception_breakpoints", "filters": ["all"]}),
                json!({"op": "launch", "program": "caught.js"}),
                json!({"op": "continue"}),
            ],
            transcript: expect![[r#"
                > {"filters":["all"],"op":"exception_breakpoints"}
                debug exception_breakpoints  all; kept, checked and sent when a program is launched

                > {"op":"launch","program":"caught.js"}
                debug launch  caught.js under node (`<node>`)
                stopped: SyntaxError: Expected property name or '}' in JSON at position 1 — thread N in parse at caught.js:4
                    4 |     return JSON.parse(text);
                locals: text = "{oops"

                > {"op":"continue"}
                debug continue  thread N
                the program exited with code 0
                output (tail; the output op returns all of it):
                parsed 0"#]],
        },
        Row {
            name: "steps",
            calls: vec![
                json!({"op": "breakpoints", "file": "avg.js", "lines": [12]}),
                json!({"op": "launch", "program": "avg.js"}),
                json!({"op": "step_in"}),
                json!({"op": "step_over"}),
                json!({"op": "step_out"}),
            ],
            transcript: expect![[r#"
                > {"file":"avg.js","lines":[12],"op":"breakpoints"}
                debug breakpoints  avg.js
                avg.js:12 set  | const result = mean(values);
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"avg.js"}
                debug launch  avg.js under node (`<node>`)
                breakpoint avg.js:12 verified  | const result = mean(values);
                stopped (breakpoint) thread N in main at avg.js:12
                   12 |   const result = mean(values);
                locals: result = undefined, values = [4, 8, 15, 16, 23, 42]

                > {"op":"step_in"}
                debug step_in  thread N
                stopped (step) thread N in mean at avg.js:3
                    3 |   let total = 0;
                locals: total = undefined, xs = [4, 8, 15, 16, 23, 42]

                > {"op":"step_over"}
                debug step_over  thread N
                stopped (step) thread N in mean at avg.js:4
                    4 |   for (let i = 1; i < xs.length; i++) {
                locals: i = undefined, total = 0, xs = [4, 8, 15, 16, 23, 42]

                > {"op":"step_out"}
                debug step_out  thread N
                stopped (step) thread N in main at avg.js:13
                   13 |   console.log("mean:", result);
                locals: result = 17.333333333333332, values = [4, 8, 15, 16, 23, 42]"#]],
        },
        Row {
            name: "a breakpoint on a line without code moves",
            calls: vec![
                json!({"op": "breakpoints", "file": "avg.js", "lines": [3]}),
                json!({"op": "launch", "program": "avg.js"}),
                json!({"op": "breakpoints", "file": "avg.js", "lines": [9]}),
            ],
            transcript: expect![[r#"
                > {"file":"avg.js","lines":[3],"op":"breakpoints"}
                debug breakpoints  avg.js
                avg.js:3 set  | let total = 0;
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"avg.js"}
                debug launch  avg.js under node (`<node>`)
                breakpoint avg.js:3 verified  | let total = 0;
                stopped (breakpoint) thread N in mean at avg.js:3
                    3 |   let total = 0;
                locals: total = undefined, xs = [4, 8, 15, 16, 23, 42]

                > {"file":"avg.js","lines":[9],"op":"breakpoints"}
                debug breakpoints  avg.js
                avg.js:9 moved to line 11 verified  | const values = [4, 8, 15, 16, 23, 42];"#]],
        },
        Row {
            name: "ES module and CommonJS by extension",
            calls: vec![
                json!({"op": "breakpoints", "file": "stats.mjs", "lines": [5]}),
                json!({"op": "launch", "program": "stats.mjs"}),
                json!({"op": "stack"}),
                json!({"op": "terminate"}),
                json!({"op": "breakpoints", "file": "count.cjs", "lines": [6]}),
                json!({"op": "launch", "program": "count.cjs"}),
            ],
            transcript: expect![[r#"
                > {"file":"stats.mjs","lines":[5],"op":"breakpoints"}
                debug breakpoints  stats.mjs
                stats.mjs:5 set  | total += x;
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"stats.mjs"}
                debug launch  stats.mjs under node (`<node>`)
                breakpoint stats.mjs:5 verified  | total += x;
                stopped (breakpoint) thread N in mean at stats.mjs:5
                    5 |     total += x;
                locals: total = 0, x = 1, xs = [1, 2, 3, 4]

                > {"op":"stack"}
                debug stack  thread N, stop 1 (breakpoint)
                frame 1  mean at stats.mjs:5
                    5 |     total += x;
                frame 2  <module> at stats.mjs:10
                   10 | const result = mean([1, 2, 3, 4]);
                pass a frame id to scopes or evaluate (valid until the program moves)

                > {"op":"terminate"}
                debug terminate  stats.mjs
                terminated: the program, the adapter and every process they started are gone

                > {"file":"count.cjs","lines":[6],"op":"breakpoints"}
                debug breakpoints  count.cjs
                count.cjs:6 set  | count += word.length;
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"count.cjs"}
                debug launch  count.cjs under node (`<node>`)
                (the previous session had ended: terminated on request)
                breakpoint count.cjs:6 verified  | count += word.length;
                breakpoint stats.mjs:5 verified  | total += x;
                stopped (breakpoint) thread N in <module> at count.cjs:6
                    6 |   count += word.length;
                locals: basename = ƒ basename(path, suffix), count = 0, word = "a""#]],
        },
        Row {
            name: "a runaway loop, paused",
            calls: vec![
                json!({"op": "launch", "program": "spin.js", "timeout_seconds": 2}),
                json!({"op": "pause"}),
                json!({"op": "evaluate", "expression": "n > 0"}),
            ],
            transcript: expect![[r#"
                > {"op":"launch","program":"spin.js","timeout_seconds":2}
                debug launch  spin.js under node (`<node>`)
                still running after 2 s: no breakpoint was hit and the program did not exit; call pause to stop it where it is, or continue to keep waiting
                latest output:
                spinning

                > {"op":"pause"}
                debug pause  thread N
                paused — thread N in <module> at spin.js:4
                    4 | while (true) {
                locals: n = COUNT

                > {"expression":"n > 0","op":"evaluate"}
                debug evaluate  `n > 0` in top frame, <module> at spin.js:4
                true (boolean)"#]],
        },
        Row {
            name: "an ES module's uncaught exception, rethrown by Node's loader",
            calls: vec![json!({"op": "launch", "program": "fails.mjs"})],
            transcript: expect![[r#"
                > {"op":"launch","program":"fails.mjs"}
                debug launch  fails.mjs under node (`<node>`)
                stopped: uncaught RangeError: negative: -1 (thrown at check (<root>/fails.mjs:3:20); Node's module loader rethrew it, so the program's frames are gone: set a breakpoint there, or use the `all` filter to stop at the throw) — thread N in run at node:internal/… (no path)
                locals: breakOnSigint = false, timeout = -1"#]],
        },
        Row {
            name: "one node:test test by name, stopped at its breakpoint",
            calls: vec![
                json!({"op": "breakpoints", "file": "test/stats.test.js", "lines": [12]}),
                json!({"op": "launch", "program": "test/stats.test.js", "test": "median of three"}),
                json!({"op": "continue"}),
            ],
            transcript: expect![[r#"
                > {"file":"test/stats.test.js","lines":[12],"op":"breakpoints"}
                debug breakpoints  test/stats.test.js
                test/stats.test.js:12 set  | assert.strictEqual(got, 2);
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"test/stats.test.js","test":"median of three"}
                debug launch  node:test test/stats.test.js › median of three under node (`<node>`)
                breakpoint test/stats.test.js:12 verified  | assert.strictEqual(got, 2);
                stopped (breakpoint) thread N in (anonymous) at test/stats.test.js:12
                   12 |   assert.strictEqual(got, 2);
                locals: got = 2

                > {"op":"continue"}
                debug continue  thread N
                the program exited with code 0
                output (tail; the output op returns all of it):
                TAP version 13
                # Subtest: median of three
                ok 1 - median of three
                  ---
                  duration_ms MS
                  ...
                # Subtest: median of four
                ok 2 - median of four # SKIP test name does not match pattern
                  ---
                  duration_ms MS
                  ...
                1..2
                # tests 2
                # suites 0
                # pass 1
                # fail 0
                # cancelled 0
                # skipped 1
                # todo 0
                # duration_ms MS"#]],
        },
        Row {
            name: "a failing node:test assertion under `all`",
            calls: vec![
                json!({"op": "exception_breakpoints", "filters": ["all"]}),
                json!({"op": "launch", "program": "test/stats.test.js", "test": "median of four"}),
                json!({"op": "stack"}),
                json!({"op": "terminate"}),
                json!({"op": "launch", "program": "test/stats.test.js", "test": "mean"}),
                json!({"op": "launch", "program": "avg.js", "mode": "test"}),
            ],
            transcript: expect![[r#"
                > {"filters":["all"],"op":"exception_breakpoints"}
                debug exception_breakpoints  all; kept, checked and sent when a program is launched

                > {"op":"launch","program":"test/stats.test.js","test":"median of four"}
                debug launch  node:test test/stats.test.js › median of four under node (`<node>`)
                stopped: AssertionError [ERR_ASSERTION]: median of 1,2,3,4 — thread N in (anonymous) at test/stats.test.js:18
                   18 |   assert.strictEqual(got, 2.5, `median of ${values}`);
                locals: got = 3, values = [1, 2, 3, 4]

                > {"op":"stack"}
                debug stack  thread N, stop 1 (exception)
                frame 1  (anonymous) at test/stats.test.js:18
                   18 |   assert.strictEqual(got, 2.5, `median of ${values}`);
                pass a frame id to scopes or evaluate (valid until the program moves)

                > {"op":"terminate"}
                debug terminate  node:test test/stats.test.js › median of four
                terminated: the program, the adapter and every process they started are gone

                > {"op":"launch","program":"test/stats.test.js","test":"mean"}
                error: bad arguments: cannot run test `mean` of test/stats.test.js: no test named `mean` is written in it (as test('mean', …) or it('mean', …)); pass a test's exact name

                > {"mode":"test","op":"launch","program":"avg.js"}
                error: bad arguments: `mode` is for Go programs under delve, and `avg.js` runs under Node.js; leave it out (`test` runs one node:test test of the file)"#]],
        },
        Row {
            name: "stdin, exit codes and bad programs",
            calls: vec![
                json!({"op": "launch", "program": "greet.js", "stdin": "Ada\n"}),
                json!({"op": "launch", "program": "quits.js"}),
                json!({"op": "launch", "program": "broken.js"}),
                json!({"op": "launch", "program": "nope.js"}),
                json!({"op": "launch", "program": "package.json", "adapter": "node"}),
            ],
            transcript: expect![[r#"
                > {"op":"launch","program":"greet.js","stdin":"Ada\n"}
                debug launch  greet.js under node (`<node>`)
                the program exited with code 0
                output (tail; the output op returns all of it):
                hello Ada!

                > {"op":"launch","program":"quits.js"}
                debug launch  quits.js under node (`<node>`)
                (the previous session had ended: the program exited with code 0)
                the program exited with code 3
                output (tail; the output op returns all of it):
                bye

                > {"op":"launch","program":"broken.js"}
                debug launch  broken.js under node (`<node>`)
                (the previous session had ended: the program exited with code 3)
                the program exited with code 1
                output (tail; the output op returns all of it):
                <root>/broken.js:4
                )
                ^

                SyntaxError: Unexpected token ')'
                    at wrapSafe (node:internal/…)
                    at Module._compile (node:internal/…)
                    at Module._extensions..js (node:internal/…)
                    at Module.load (node:internal/…)
                    at Module._load (node:internal/…)
                    at Function.executeUserEntryPoint [as runMain] (node:internal/…)
                    at node:internal/…

                Node.js vVERSION

                > {"op":"launch","program":"nope.js"}
                error: bad arguments: program `nope.js` does not exist in the workspace; check the path (relative to the workspace root), or build it first

                > {"adapter":"node","op":"launch","program":"package.json"}
                error: bad arguments: `package.json` is not a JavaScript file; Node.js runs .js, .mjs and .cjs files (or a script without an extension that starts with #!/usr/bin/env node)"#]],
        },
    ]
}

/// The transcript of `calls` in a fresh copy of the Node.js fixture.
async fn transcript(b: &Bench, calls: &[Value]) -> String {
    let mut out = Vec::new();
    for args in calls {
        let answer = match b.try_call(args.clone()).await {
            Ok(o) => o.joined_text(),
            Err(e) => format!("error: {e}"),
        };
        out.push(format!("> {args}\n{}", masked_node(b, &answer)));
    }
    out.join("\n\n")
}

/// Model-facing text with what changes from run to run masked: the root,
/// thread ids, Node's path and version, session ages.
fn masked_node(b: &Bench, text: &str) -> String {
    let text = masked(b, text);
    let node = test_support::fixtures::require(&["node"]).expect("node");
    let text = text.replace(&node.display().to_string(), "<node>");
    let text = masked_after(&text, "Node.js v", "VERSION", |c| {
        c.is_ascii_digit() || c == '.'
    });
    let text = masked_after(&text, "(launched ", "AGE", |c| c != ')');
    // The spinning loop's counter, and the test runner's timings.
    let text = masked_numbers(&text, "n = ", "COUNT");
    let text = masked_after(&text, "duration_ms", " MS", |c| {
        c == ':' || c == ' ' || c.is_ascii_digit() || c == '.'
    });
    masked_after(&text, "node:internal/", "…", |c| {
        c != ')' && !c.is_whitespace()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_op_against_a_real_node_program() {
    if test_support::fixtures::require(&["node"]).is_none() {
        return;
    }
    for row in rows() {
        eprintln!("=== {}", row.name);
        let dir = copy_fixture("node");
        let b = bench(dir.path(), config());
        let text = transcript(&b, &row.calls).await;
        let recorded = b.processes().await;
        let _ = b.try_call(json!({"op": "terminate"})).await;
        assert_no_orphans(&b, &recorded).await;
        row.transcript.assert_eq(&text);
    }
}

/// Both of Node's streams, each line written in pieces: every line whole,
/// each stream's lines in their order, Node's own inspector lines left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_streams_keep_whole_lines() {
    if test_support::fixtures::require(&["node"]).is_none() {
        return;
    }
    let dir = copy_fixture("node");
    let b = bench(dir.path(), config());
    let (text, s) = b
        .call(json!({"op": "launch", "program": "streams.js"}))
        .await;
    assert_eq!(s["state"], "ended", "{text}");
    let (out, _) = b.call(json!({"op": "output"})).await;
    let lines: Vec<&str> = out.lines().skip(1).collect();
    let of = |prefix: &str| -> Vec<&str> {
        lines
            .iter()
            .copied()
            .filter(|l| l.starts_with(prefix))
            .collect()
    };
    assert_eq!(
        of("out "),
        ["out 0 done", "out 1 done", "out 2 done"],
        "{out}"
    );
    assert_eq!(
        of("err "),
        ["err 0 done", "err 1 done", "err 2 done"],
        "{out}"
    );
    assert_eq!(
        lines.len(),
        7,
        "only the program's lines and the ending: {out}"
    );
}

/// Ending a session kills Node and everything the program started, while
/// it runs and while it is stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_leaves_no_process() {
    if test_support::fixtures::require(&["node"]).is_none() {
        return;
    }
    for stopped in [false, true] {
        let dir = copy_fixture("node");
        let b = bench(dir.path(), config());
        if stopped {
            b.call(json!({"op": "breakpoints", "file": "avg.js", "lines": [5]}))
                .await;
        }
        let program = if stopped { "avg.js" } else { "spin.js" };
        let (_, s) = b
            .call(json!({"op": "launch", "program": program, "timeout_seconds": 1}))
            .await;
        assert_eq!(
            s["state"],
            if stopped { "stopped" } else { "running" },
            "{s}"
        );
        let node = b
            .supervisor
            .adapter_pid(&b.conversation)
            .await
            .expect("node's pid");
        let recorded = b.processes().await;
        assert!(recorded.contains(&node), "{recorded:?}");
        let (text, _) = b.call(json!({"op": "terminate"})).await;
        assert!(
            text.ends_with(
                "terminated: the program, the adapter and every process they started are gone"
            ),
            "{text}"
        );
        assert_no_orphans(&b, &recorded).await;
        assert!(!tool_core::process::pid_alive(node));
    }
}

/// Attaching to a Node.js started with `--inspect` on a port: pause it,
/// evaluate, and let go of it running (it is not the session's to end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_to_an_inspect_port_and_let_go() {
    let Some(node) = test_support::fixtures::require(&["node"]) else {
        return;
    };
    let dir = copy_fixture("node");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut spinner = std::process::Command::new(node)
        .arg(format!("--inspect=127.0.0.1:{port}"))
        .arg("spin.js")
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..250 {
        if tool_debug::session::port_listened_on(port) == Some(true) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let b = bench(dir.path(), config());
    let calls = [
        json!({"op": "attach", "port": port, "adapter": "node", "timeout_seconds": 1}),
        json!({"op": "pause"}),
        json!({"op": "evaluate", "expression": "n > 0"}),
        json!({"op": "terminate"}),
        json!({"op": "attach", "pid": spinner.id(), "adapter": "node"}),
    ];
    let text = transcript(&b, &calls)
        .await
        .replace(&port.to_string(), "PORT")
        .replace(&format!("\"pid\":{}", spinner.id()), "\"pid\":PID");
    let alive = tool_core::process::pid_alive(spinner.id());
    let _ = spinner.kill();
    let _ = spinner.wait();
    expect![[r#"
        > {"adapter":"node","op":"attach","port":PORT,"timeout_seconds":1}
        debug attach  port PORT under node (`<node>`)
        still running after 1 s: no breakpoint was hit and the program did not exit; call pause to stop it where it is, or continue to keep waiting

        > {"op":"pause"}
        debug pause  thread N
        paused — thread N in <module> at spin.js:4
            4 | while (true) {
        locals: n = COUNT

        > {"expression":"n > 0","op":"evaluate"}
        debug evaluate  `n > 0` in top frame, <module> at spin.js:4
        true (boolean)

        > {"op":"terminate"}
        debug terminate  port PORT
        disconnected; the debuggee was started outside this run and was left running; the adapter is gone

        > {"adapter":"node","op":"attach","pid":PID}
        error: refused: the node backend attaches to a Node.js started with --inspect=127.0.0.1:PORT (pass that `port`), not to a pid"#]].assert_eq(&text);
    assert!(alive, "the attached program was ended");
}

/// TypeScript built by `tsc` with source maps (the fixture's `dist/` is
/// its output, checked in): breakpoints in the `.ts`, stops, stack and
/// steps read in `.ts` lines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_through_its_source_maps() {
    if test_support::fixtures::require(&["node"]).is_none() {
        return;
    }
    let dir = copy_fixture("typescript");
    let b = bench(dir.path(), config());
    let calls = [
        json!({"op": "breakpoints", "file": "src/avg.ts", "lines": [{"line": 10, "condition": "i == 3"}]}),
        json!({"op": "launch", "program": "dist/avg.js"}),
        json!({"op": "stack"}),
        json!({"op": "step_over"}),
        json!({"op": "breakpoints", "file": "src/avg.ts", "lines": [14]}),
        json!({"op": "continue"}),
    ];
    let text = transcript(&b, &calls).await;
    let recorded = b.processes().await;
    let _ = b.try_call(json!({"op": "terminate"})).await;
    assert_no_orphans(&b, &recorded).await;
    expect![[r#"
        > {"file":"src/avg.ts","lines":[{"condition":"i == 3","line":10}],"op":"breakpoints"}
        debug breakpoints  src/avg.ts
        src/avg.ts:10 set, if `i == 3`  | total += xs[i];
        no session yet: they are sent to the adapter at launch

        > {"op":"launch","program":"dist/avg.js"}
        debug launch  dist/avg.js under node (`<node>`)
        breakpoint src/avg.ts:10 verified, if `i == 3`  | total += xs[i];
        stopped (breakpoint) thread N in mean at src/avg.ts:10
           10 |     total += xs[i];
        locals: i = 3, total = 23, xs = [4, 8, 15, 16, 23, 42]

        > {"op":"stack"}
        debug stack  thread N, stop 1 (breakpoint)
        frame 1  mean at src/avg.ts:10
           10 |     total += xs[i];
        frame 2  <module> at src/avg.ts:16
           16 | console.log(`${sample.label}: ${mean(sample.values)}`);
        pass a frame id to scopes or evaluate (valid until the program moves)

        > {"op":"step_over"}
        debug step_over  thread N
        stopped (step) thread N in mean at src/avg.ts:9
            9 |   for (let i = 1; i < xs.length; i++) {
        locals: i = 3, total = 39, xs = [4, 8, 15, 16, 23, 42]

        > {"file":"src/avg.ts","lines":[14],"op":"breakpoints"}
        debug breakpoints  src/avg.ts
        src/avg.ts:14 moved to line 15 verified  | const sample: Sample = { label: "six", values: [4, 8, 15, 16, 23, 42] };

        > {"op":"continue"}
        debug continue  thread N
        the program exited with code 0
        output (tail; the output op returns all of it):
        six: 17.333333333333332"#]].assert_eq(&text);
}
