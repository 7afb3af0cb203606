//! The Java table: each op of the debug tool against a real JVM under the
//! JDK's JDWP agent (the `java` backend). A row is a list of calls and the
//! transcript the model reads for them (each call as `> ARGS`, then its
//! answer or `error: …`); after every row the session is ended and none of
//! its processes may be left.

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
            name: "stop in another class, stack, locals, steps, exit code",
            calls: vec![
                json!({"op": "breakpoints", "file": "demo/Stats.java", "lines": [14]}),
                json!({"op": "launch", "program": "demo/Main.java"}),
                json!({"op": "stack"}),
                json!({"op": "locals"}),
                json!({"op": "variables", "reference": 3}),
                json!({"op": "evaluate", "expression": "xs[5]"}),
                json!({"op": "evaluate", "expression": "xs.length", "frame_id": 2}),
                json!({"op": "evaluate", "expression": "name"}),
                json!({"op": "evaluate", "expression": "stats.name", "frame_id": 2}),
                json!({"op": "evaluate", "expression": "xs[6]"}),
                json!({"op": "step_over"}),
                json!({"op": "step_over"}),
                json!({"op": "step_out"}),
                json!({"op": "locals"}),
                json!({"op": "continue"}),
            ],
            transcript: expect![[r#"
                > {"file":"demo/Stats.java","lines":[14],"op":"breakpoints"}
                debug breakpoints  demo/Stats.java
                demo/Stats.java:14 set  | int total = 0;
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"demo/Main.java"}
                debug launch  demo/Main.java under java (`<java>`)
                breakpoint demo/Stats.java:14 verified  | int total = 0;
                stopped (breakpoint) thread N in Stats.mean at demo/Stats.java:14
                   14 |         int total = 0;
                locals: this = Stats{name="mean", calls=1}, xs = [4, 8, 15, 16, 23, 42]

                > {"op":"stack"}
                debug stack  thread N, stop 1 (breakpoint)
                frame 1  Stats.mean at demo/Stats.java:14
                   14 |         int total = 0;
                frame 2  Main.main at demo/Main.java:7
                    7 |         double result = stats.mean(xs);
                pass a frame id to scopes or evaluate (valid until the program moves)

                > {"op":"locals"}
                debug locals  top frame, Stats.mean at demo/Stats.java:14 (2 variables)
                this (Stats) = Stats{name="mean", calls=1}  [reference 3]
                xs (int[]) = [4, 8, 15, 16, 23, 42]  [reference 4]

                > {"op":"variables","reference":3}
                debug variables  reference 3 (2 variables)
                name (String) = "mean"
                calls (int) = 1

                > {"expression":"xs[5]","op":"evaluate"}
                debug evaluate  `xs[5]` in top frame, Stats.mean at demo/Stats.java:14
                42 (int)

                > {"expression":"xs.length","frame_id":2,"op":"evaluate"}
                debug evaluate  `xs.length` in frame 2
                6 (int)

                > {"expression":"name","op":"evaluate"}
                debug evaluate  `name` in top frame, Stats.mean at demo/Stats.java:14
                "mean" (String)

                > {"expression":"stats.name","frame_id":2,"op":"evaluate"}
                debug evaluate  `stats.name` in frame 2
                "mean" (String)

                > {"expression":"xs[6]","op":"evaluate"}
                error: failed: evaluating `xs[6]` failed: the adapter refused `evaluate`: `xs` has 6 elements: [6] is out of bounds; check the name is in scope in that frame (scopes / variables list what is)

                > {"op":"step_over"}
                debug step_over  thread N
                stopped (step) thread N in Stats.mean at demo/Stats.java:15
                   15 |         for (int i = 0; i < xs.length; i++) {
                locals: this = Stats{name="mean", calls=1}, xs = [4, 8, 15, 16, 23, 42], total = 0

                > {"op":"step_over"}
                debug step_over  thread N
                stopped (step) thread N in Stats.mean at demo/Stats.java:16
                   16 |             total += xs[i];
                locals: this = Stats{name="mean", calls=1}, xs = [4, 8, 15, 16, 23, 42], total = 0, i = 0

                > {"op":"step_out"}
                debug step_out  thread N
                stopped (step) thread N in Main.main at demo/Main.java:7
                    7 |         double result = stats.mean(xs);
                locals: args = [], xs = [4, 8, 15, 16, 23, 42], stats = Stats{name="mean", calls=1}

                > {"op":"locals"}
                debug locals  top frame, Main.main at demo/Main.java:7 (3 variables)
                args (String[]) = []
                xs (int[]) = [4, 8, 15, 16, 23, 42]  [reference 5]
                stats (Stats) = Stats{name="mean", calls=1}  [reference 6]

                > {"op":"continue"}
                debug continue  thread N
                the program exited with code 3
                output (tail; the output op returns all of it):
                mean: 18.0"#]],
        },
        Row {
            name: "step into a method of another class, and out",
            calls: vec![
                json!({"op": "breakpoints", "file": "demo/Main.java", "lines": [7]}),
                json!({"op": "launch", "program": "demo/Main.java"}),
                json!({"op": "step_in"}),
                json!({"op": "step_out"}),
                json!({"op": "step_over"}),
                json!({"op": "continue"}),
            ],
            transcript: expect![[r#"
                > {"file":"demo/Main.java","lines":[7],"op":"breakpoints"}
                debug breakpoints  demo/Main.java
                demo/Main.java:7 set  | double result = stats.mean(xs);
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"demo/Main.java"}
                debug launch  demo/Main.java under java (`<java>`)
                breakpoint demo/Main.java:7 verified  | double result = stats.mean(xs);
                stopped (breakpoint) thread N in Main.main at demo/Main.java:7
                    7 |         double result = stats.mean(xs);
                locals: args = [], xs = [4, 8, 15, 16, 23, 42], stats = Stats{name="mean", calls=0}

                > {"op":"step_in"}
                debug step_in  thread N
                stopped (step) thread N in Stats.mean at demo/Stats.java:13
                   13 |         calls++;
                locals: this = Stats{name="mean", calls=0}, xs = [4, 8, 15, 16, 23, 42]

                > {"op":"step_out"}
                debug step_out  thread N
                stopped (step) thread N in Main.main at demo/Main.java:7
                    7 |         double result = stats.mean(xs);
                locals: args = [], xs = [4, 8, 15, 16, 23, 42], stats = Stats{name="mean", calls=1}

                > {"op":"step_over"}
                debug step_over  thread N
                stopped (step) thread N in Main.main at demo/Main.java:8
                    8 |         System.out.println("mean: " + result);
                locals: args = [], xs = [4, 8, 15, 16, 23, 42], stats = Stats{name="mean", calls=1}, result = 18.0

                > {"op":"continue"}
                debug continue  thread N
                the program exited with code 3
                output (tail; the output op returns all of it):
                mean: 18.0"#]],
        },
        Row {
            name: "a class loaded later, threads",
            calls: vec![
                json!({"op": "breakpoints", "file": "demo/Later.java", "lines": [6]}),
                json!({"op": "launch", "program": "demo/Main.java", "args": ["world"]}),
                json!({"op": "threads"}),
                json!({"op": "step_over"}),
                json!({"op": "continue"}),
            ],
            transcript: expect![[r#"
                > {"file":"demo/Later.java","lines":[6],"op":"breakpoints"}
                debug breakpoints  demo/Later.java
                demo/Later.java:6 set  | String text = "hello, " + who;
                no session yet: they are sent to the adapter at launch

                > {"args":["world"],"op":"launch","program":"demo/Main.java"}
                debug launch  demo/Main.java under java (`<java>`)
                breakpoint demo/Later.java:6 verified  | String text = "hello, " + who;
                stopped (breakpoint) thread N in Later.greet at demo/Later.java:6
                    6 |         String text = "hello, " + who;
                locals: who = "world"

                > {"op":"threads"}
                debug threads  6 threads
                     1  main  (stopped here)
                     2  Reference Handler
                     3  Finalizer
                     4  Signal Dispatcher
                     5  Notification Thread
                     6  Common-Cleaner

                > {"op":"step_over"}
                debug step_over  thread N
                stopped (step) thread N in Later.greet at demo/Later.java:7
                    7 |         return text;
                locals: who = "world", text = "hello, world"

                > {"op":"continue"}
                debug continue  thread N
                the program exited with code 3
                output (tail; the output op returns all of it):
                mean: 18.0
                hello, world"#]],
        },
        Row {
            name: "lines without code",
            calls: vec![
                json!({"op": "breakpoints", "file": "demo/Stats.java", "lines": [11, 18]}),
                json!({"op": "launch", "program": "demo/Main.java"}),
                json!({"op": "breakpoints", "file": "demo/Main.java", "lines": [2, 8]}),
                json!({"op": "continue"}),
                json!({"op": "continue"}),
            ],
            transcript: expect![[r#"
                > {"file":"demo/Stats.java","lines":[11,18],"op":"breakpoints"}
                debug breakpoints  demo/Stats.java
                demo/Stats.java:11 set  |
                demo/Stats.java:18 set  | return (double) total / xs.length;
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"demo/Main.java"}
                debug launch  demo/Main.java under java (`<java>`)
                breakpoint demo/Stats.java:11 pending (not set: line 11 of Stats.java has no code; the nearest lines with code are 10 and 13)  |
                breakpoint demo/Stats.java:18 verified  | return (double) total / xs.length;
                stopped (breakpoint) thread N in Stats.mean at demo/Stats.java:18
                   18 |         return (double) total / xs.length;
                locals: this = Stats{name="mean", calls=1}, xs = [4, 8, 15, 16, 23, 42], total = 108

                > {"file":"demo/Main.java","lines":[2,8],"op":"breakpoints"}
                debug breakpoints  demo/Main.java
                demo/Main.java:2 pending (not set: line 2 of Main.java has no code; the nearest line with code is 3)  |
                demo/Main.java:8 verified  | System.out.println("mean: " + result);

                > {"op":"continue"}
                debug continue  thread N
                stopped (breakpoint) thread N in Main.main at demo/Main.java:8
                    8 |         System.out.println("mean: " + result);
                locals: args = [], xs = [4, 8, 15, 16, 23, 42], stats = Stats{name="mean", calls=1}, result = 18.0

                > {"op":"continue"}
                debug continue  thread N
                the program exited with code 3
                output (tail; the output op returns all of it):
                mean: 18.0"#]],
        },
        Row {
            name: "uncaught exception",
            calls: vec![
                json!({"op": "launch", "program": "demo/Crash.java"}),
                json!({"op": "locals"}),
                json!({"op": "evaluate", "expression": "text.length()"}),
                json!({"op": "evaluate", "expression": "txt"}),
                json!({"op": "continue"}),
            ],
            transcript: expect![[r#"
                > {"op":"launch","program":"demo/Crash.java"}
                debug launch  demo/Crash.java under java (`<java>`)
                stopped: uncaught java.lang.IllegalArgumentException: empty text — thread N in Crash.parse at demo/Crash.java:6
                    6 |             throw new IllegalArgumentException("empty text");
                locals: text = ""

                > {"op":"locals"}
                debug locals  top frame, Crash.parse at demo/Crash.java:6 (1 variable)
                text (String) = ""

                > {"expression":"text.length()","op":"evaluate"}
                error: failed: evaluating `text.length()` failed: the adapter refused `evaluate`: the java backend reads variables, their fields and elements (`xs[2]`, `stats.name`, `xs.length`), not `text.length()`: JDWP has no expression evaluator; check the name is in scope in that frame (scopes / variables list what is)

                > {"expression":"txt","op":"evaluate"}
                error: failed: evaluating `txt` failed: the adapter refused `evaluate`: `txt` is not a local variable of that frame (nor a field of this); its locals: text; check the name is in scope in that frame (scopes / variables list what is)

                > {"op":"continue"}
                debug continue  thread N
                the program exited with code 1
                output (tail; the output op returns all of it):
                parsing
                Exception in thread "main" java.lang.IllegalArgumentException: empty text
                	at demo.Crash.parse(Crash.java:6)
                	at demo.Crash.main(Crash.java:13)"#]],
        },
        Row {
            name: "condition, hit count",
            calls: vec![
                json!({"op": "breakpoints", "file": "demo/Stats.java",
                    "lines": [{"line": 16, "condition": "i == 3"}]}),
                json!({"op": "launch", "program": "demo/Main.java"}),
                json!({"op": "breakpoints", "file": "demo/Stats.java",
                    "lines": [{"line": 16, "hit_condition": ">= 2"}]}),
                json!({"op": "continue"}),
                json!({"op": "breakpoints", "file": "demo/Stats.java",
                    "lines": [{"line": 16, "condition": "total + 1 > 3"}]}),
            ],
            transcript: expect![[r#"
                > {"file":"demo/Stats.java","lines":[{"condition":"i == 3","line":16}],"op":"breakpoints"}
                debug breakpoints  demo/Stats.java
                demo/Stats.java:16 set, if `i == 3`  | total += xs[i];
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"demo/Main.java"}
                debug launch  demo/Main.java under java (`<java>`)
                breakpoint demo/Stats.java:16 verified, if `i == 3`  | total += xs[i];
                stopped (breakpoint) thread N in Stats.mean at demo/Stats.java:16
                   16 |             total += xs[i];
                locals: this = Stats{name="mean", calls=1}, xs = [4, 8, 15, 16, 23, 42], total = 27, i = 3

                > {"file":"demo/Stats.java","lines":[{"hit_condition":">= 2","line":16}],"op":"breakpoints"}
                debug breakpoints  demo/Stats.java
                demo/Stats.java:16 verified, on hit >= 2  | total += xs[i];

                > {"op":"continue"}
                debug continue  thread N
                stopped (breakpoint) thread N in Stats.mean at demo/Stats.java:16
                   16 |             total += xs[i];
                locals: this = Stats{name="mean", calls=1}, xs = [4, 8, 15, 16, 23, 42], total = 66, i = 5

                > {"file":"demo/Stats.java","lines":[{"condition":"total + 1 > 3","line":16}],"op":"breakpoints"}
                debug breakpoints  demo/Stats.java
                demo/Stats.java:16 pending (condition `total + 1 > 3` cannot be read: the java backend has no expression evaluator; a condition is a variable path compared with a literal (`i == 3`, `name != null`, `total > 10.5`, `label == "x"`) or a boolean path alone), if `total + 1 > 3`  | total += xs[i];"#]],
        },
        Row {
            name: "set_variable",
            calls: vec![
                json!({"op": "breakpoints", "file": "demo/Stats.java",
                    "lines": [{"line": 16, "condition": "i == 3"}]}),
                json!({"op": "launch", "program": "demo/Main.java"}),
                json!({"op": "set_variable", "name": "total", "value": "100"}),
                json!({"op": "set_variable", "name": "total", "value": "lots"}),
                json!({"op": "locals"}),
                json!({"op": "set_variable", "reference": 1, "name": "name", "value": "\"avg\""}),
                json!({"op": "set_variable", "reference": 2, "name": "[0]", "value": "-4"}),
                json!({"op": "locals"}),
                json!({"op": "breakpoints", "file": "demo/Stats.java", "lines": []}),
                json!({"op": "continue"}),
            ],
            transcript: expect![[r#"
                > {"file":"demo/Stats.java","lines":[{"condition":"i == 3","line":16}],"op":"breakpoints"}
                debug breakpoints  demo/Stats.java
                demo/Stats.java:16 set, if `i == 3`  | total += xs[i];
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"demo/Main.java"}
                debug launch  demo/Main.java under java (`<java>`)
                breakpoint demo/Stats.java:16 verified, if `i == 3`  | total += xs[i];
                stopped (breakpoint) thread N in Stats.mean at demo/Stats.java:16
                   16 |             total += xs[i];
                locals: this = Stats{name="mean", calls=1}, xs = [4, 8, 15, 16, 23, 42], total = 27, i = 3

                > {"name":"total","op":"set_variable","value":"100"}
                debug set_variable  in the locals of Stats.mean at demo/Stats.java:16
                total (int) = 100

                > {"name":"total","op":"set_variable","value":"lots"}
                error: failed: the java adapter did not set `total` to `lots`: the adapter refused `setVariable`: `lots` is not an int literal; the variable keeps its value

                > {"op":"locals"}
                debug locals  top frame, Stats.mean at demo/Stats.java:16 (4 variables)
                this (Stats) = Stats{name="mean", calls=1}  [reference 1]
                xs (int[]) = [4, 8, 15, 16, 23, 42]  [reference 2]
                total (int) = 100
                i (int) = 3

                > {"name":"name","op":"set_variable","reference":1,"value":"\"avg\""}
                debug set_variable  in reference 1
                name (String) = "avg"

                > {"name":"[0]","op":"set_variable","reference":2,"value":"-4"}
                debug set_variable  in reference 2
                [0] (int) = -4

                > {"op":"locals"}
                debug locals  top frame, Stats.mean at demo/Stats.java:16 (4 variables)
                this (Stats) = Stats{name="avg", calls=1}  [reference 3]
                xs (int[]) = [-4, 8, 15, 16, 23, 42]  [reference 4]
                total (int) = 100
                i (int) = 3

                > {"file":"demo/Stats.java","lines":[],"op":"breakpoints"}
                debug breakpoints  demo/Stats.java
                cleared every breakpoint in demo/Stats.java

                > {"op":"continue"}
                debug continue  thread N
                the program exited with code 3
                output (tail; the output op returns all of it):
                mean: 30.166666666666668"#]],
        },
        Row {
            name: "logpoint",
            calls: vec![
                json!({"op": "breakpoints", "file": "demo/Stats.java",
                    "lines": [{"line": 16, "log_message": "i={i} total={total} of {this.name} {nope}"}, 18]}),
                json!({"op": "launch", "program": "demo/Main.java"}),
                json!({"op": "output"}),
            ],
            transcript: expect![[r#"
                > {"file":"demo/Stats.java","lines":[{"line":16,"log_message":"i={i} total={total} of {this.name} {nope}"},18],"op":"breakpoints"}
                debug breakpoints  demo/Stats.java
                demo/Stats.java:16 set, logs `i={i} total={total} of {this.name} {nope}` without stopping  | total += xs[i];
                demo/Stats.java:18 set  | return (double) total / xs.length;
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"demo/Main.java"}
                debug launch  demo/Main.java under java (`<java>`)
                breakpoint demo/Stats.java:16 verified, logs `i={i} total={total} of {this.name} {nope}` without stopping  | total += xs[i];
                breakpoint demo/Stats.java:18 verified  | return (double) total / xs.length;
                stopped (breakpoint) thread N in Stats.mean at demo/Stats.java:18
                   18 |         return (double) total / xs.length;
                locals: this = Stats{name="mean", calls=1}, xs = [4, 8, 15, 16, 23, 42], total = 108

                > {"op":"output"}
                debug output  demo/Main.java
                i=0 total=0 of mean <nope: `nope` is not a local variable of that frame (nor a field of this); its locals: this, xs, total, i>
                i=1 total=4 of mean <nope: `nope` is not a local variable of that frame (nor a field of this); its locals: this, xs, total, i>
                i=2 total=12 of mean <nope: `nope` is not a local variable of that frame (nor a field of this); its locals: this, xs, total, i>
                i=3 total=27 of mean <nope: `nope` is not a local variable of that frame (nor a field of this); its locals: this, xs, total, i>
                i=4 total=43 of mean <nope: `nope` is not a local variable of that frame (nor a field of this); its locals: this, xs, total, i>
                i=5 total=66 of mean <nope: `nope` is not a local variable of that frame (nor a field of this); its locals: this, xs, total, i>"#]],
        },
        Row {
            name: "stdin, and a caught exception under `caught`",
            calls: vec![
                json!({"op": "exception_breakpoints", "filters": ["caught"]}),
                json!({"op": "launch", "program": "demo/Input.java", "stdin": "forty\n"}),
                json!({"op": "continue"}),
            ],
            transcript: expect![[r#"
                > {"filters":["caught"],"op":"exception_breakpoints"}
                debug exception_breakpoints  caught; kept, checked and sent when a program is launched

                > {"op":"launch","program":"demo/Input.java","stdin":"forty\n"}
                debug launch  demo/Input.java under java (`<java>`)
                stopped: java.lang.IllegalStateException: not digits: forty — thread N in Input.parse at demo/Input.java:9
                    9 |             throw new IllegalStateException("not digits: " + text);
                locals: text = "forty"

                > {"op":"continue"}
                debug continue  thread N
                the program exited with code 0
                output (tail; the output op returns all of it):
                caught: not digits: forty"#]],
        },
        Row {
            name: "bad input",
            calls: vec![
                json!({"op": "launch", "program": "demo/Broken.java"}),
                json!({"op": "launch", "program": "demo/Nope.java"}),
                json!({"op": "launch", "program": "demo", "adapter": "java"}),
                json!({"op": "launch", "program": "demo/Main.java", "test": "mean"}),
            ],
            transcript: expect![[r#"
                > {"op":"launch","program":"demo/Broken.java"}
                error: refused: javac could not compile demo/Broken.java, so nothing was started:
                demo/Broken.java:5: error: incompatible types: String cannot be converted to int
                        int x = "not a number";
                                ^
                1 error

                > {"op":"launch","program":"demo/Nope.java"}
                error: bad arguments: program `demo/Nope.java` does not exist in the workspace; check the path (relative to the workspace root), or build it first

                > {"adapter":"java","op":"launch","program":"demo"}
                error: bad arguments: `demo` is not a Java source file; the java adapter launches a .java file with a main method (compiled with javac -g)

                > {"op":"launch","program":"demo/Main.java","test":"mean"}
                error: bad arguments: no test method `mean` in demo/Main.java; it has none (methods annotated @Test, @ParameterizedTest, @RepeatedTest, @TestFactory or @TestTemplate)"#]],
        },
    ]
}

/// The transcript of `calls` in a fresh copy of the Java fixture.
async fn transcript(b: &Bench, calls: &[Value]) -> String {
    let mut out = Vec::new();
    for args in calls {
        let answer = match b.try_call(args.clone()).await {
            Ok(o) => o.joined_text(),
            Err(e) => format!("error: {e}"),
        };
        out.push(format!("> {args}\n{}", masked_java(b, &answer)));
    }
    out.join("\n\n")
}

/// Model-facing text with what changes from run to run masked: the root,
/// thread ids, the JDK's path, session ages.
fn masked_java(b: &Bench, text: &str) -> String {
    let text = masked(b, text);
    let java = tool_core::jdk::find(11, None, Some(&test_support::fixtures::path_env()))
        .map(|j| j.bin().join("java").display().to_string())
        .unwrap_or_default();
    let text = text.replace(&java, "<java>");
    masked_after(&text, "(launched ", "AGE", |c| c != ')')
}

fn have_jdk() -> bool {
    tool_core::jdk::find(11, None, Some(&test_support::fixtures::path_env())).is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_op_against_a_real_jvm() {
    if !have_jdk() {
        return;
    }
    for row in rows() {
        eprintln!("=== {}", row.name);
        let dir = copy_fixture("java");
        let b = bench(dir.path(), config());
        let text = transcript(&b, &row.calls).await;
        let recorded = b.processes().await;
        let _ = b.try_call(json!({"op": "terminate"})).await;
        assert_no_orphans(&b, &recorded).await;
        row.transcript.assert_eq(&text);
    }
}

/// Ending a session kills the JVM, while it runs and while it is stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_leaves_no_jvm() {
    if !have_jdk() {
        return;
    }
    for stopped in [false, true] {
        let dir = copy_fixture("java");
        let b = bench(dir.path(), config());
        if stopped {
            b.call(json!({"op": "breakpoints", "file": "demo/Stats.java", "lines": [14]}))
                .await;
        }
        let program = if stopped {
            "demo/Main.java"
        } else {
            "demo/Spin.java"
        };
        let (_, s) = b
            .call(json!({"op": "launch", "program": program, "timeout_seconds": 2}))
            .await;
        assert_eq!(
            s["state"],
            if stopped { "stopped" } else { "running" },
            "{s}"
        );
        if !stopped {
            let (text, _) = b.call(json!({"op": "pause"})).await;
            assert!(text.contains("in Spin.main at demo/Spin.java:"), "{text}");
        }
        let jvm = b
            .supervisor
            .adapter_pid(&b.conversation)
            .await
            .expect("the JVM's pid");
        let recorded = b.processes().await;
        assert!(recorded.contains(&jvm), "{recorded:?}");
        let (text, _) = b.call(json!({"op": "terminate"})).await;
        assert!(
            text.ends_with(
                "terminated: the program, the adapter and every process they started are gone"
            ),
            "{text}"
        );
        assert_no_orphans(&b, &recorded).await;
        assert!(!tool_core::process::pid_alive(jvm));
    }
}

/// Started, the backend announces the exception filters its catalog entry
/// lists (what `adapters` says before a start).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filters_announced_are_the_catalog_s() {
    if !have_jdk() {
        return;
    }
    let dir = copy_fixture("java");
    let b = bench(dir.path(), config());
    let filters = |text: &str| -> String {
        let mut lines = text
            .lines()
            .skip_while(|l| l.split_whitespace().next() != Some("java"));
        lines.next();
        lines.next().unwrap_or_default().to_string()
    };
    let (before, _) = b.call(json!({"op": "adapters"})).await;
    b.call(json!({"op": "breakpoints", "file": "demo/Stats.java", "lines": [14]}))
        .await;
    b.call(json!({"op": "launch", "program": "demo/Main.java"}))
        .await;
    let (after, _) = b.call(json!({"op": "adapters"})).await;
    assert_eq!(
        filters(&before),
        "  exception filters (as the adapter announced when tested): caught, uncaught (on by default)"
    );
    assert_eq!(
        filters(&after),
        filters(&before).replace("when tested", "when it started in this run")
    );
    let recorded = b.processes().await;
    b.call(json!({"op": "terminate"})).await;
    assert_no_orphans(&b, &recorded).await;
}

/// Attaching to a JVM started with its JDWP agent on a port: pause it,
/// read a local, and let go of it running (it is not the session's to end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_to_a_jdwp_port_and_let_go() {
    let Ok(jdk) = tool_core::jdk::find(11, None, Some(&test_support::fixtures::path_env())) else {
        return;
    };
    let dir = copy_fixture("java");
    let classes = tempfile::tempdir().unwrap();
    let compiled = std::process::Command::new(jdk.bin().join("javac"))
        .args(["-g", "-d"])
        .arg(classes.path())
        .arg(dir.path().join("demo/Spin.java"))
        .status()
        .unwrap();
    assert!(compiled.success());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut spinner = std::process::Command::new(jdk.bin().join("java"))
        .arg(format!(
            "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{port}"
        ))
        .arg("-cp")
        .arg(classes.path())
        .arg("demo.Spin")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..500 {
        if tool_debug::session::port_listened_on(port) == Some(true) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let b = bench(dir.path(), config());
    let calls = [
        json!({"op": "attach", "port": port, "adapter": "java", "timeout_seconds": 1}),
        json!({"op": "pause"}),
        json!({"op": "evaluate", "expression": "args.length"}),
        json!({"op": "terminate"}),
        json!({"op": "attach", "pid": spinner.id(), "adapter": "java"}),
    ];
    let text = transcript(&b, &calls)
        .await
        .replace(&port.to_string(), "PORT")
        .replace(&format!("\"pid\":{}", spinner.id()), "\"pid\":PID");
    let text = masked_numbers(&text, "n = ", "COUNT");
    // Let go of, it runs on.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let alive = tool_core::process::pid_alive(spinner.id());
    let _ = spinner.kill();
    let _ = spinner.wait();
    expect![[r#"
        > {"adapter":"java","op":"attach","port":PORT,"timeout_seconds":1}
        debug attach  port PORT under java (`<java>`)
        still running after 1 s: no breakpoint was hit and the program did not exit; call pause to stop it where it is, or continue to keep waiting

        > {"op":"pause"}
        debug pause  thread N
        paused — thread N in Spin.main at demo/Spin.java:7
            7 |             n++;
        locals: args = [], n = COUNT

        > {"expression":"args.length","op":"evaluate"}
        debug evaluate  `args.length` in top frame, Spin.main at demo/Spin.java:7
        0 (int)

        > {"op":"terminate"}
        debug terminate  port PORT
        disconnected; the debuggee was started outside this run and was left running; the adapter is gone

        > {"adapter":"java","op":"attach","pid":PID}
        error: refused: the java backend attaches to a JVM started with -agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:PORT (pass that `port`), not to a pid"#]].assert_eq(&text);
    assert!(alive, "the attached program was ended");
}

/// The config of a JUnit run: Maven resolves offline from the fixtures'
/// local repository (`cargo xtask fixtures` fills it).
fn junit_config() -> tool_debug::DebugConfig {
    let mut cfg = config();
    let repo = test_support::fixtures::dir().join("m2");
    cfg.env.push((
        "MAVEN_OPTS".into(),
        format!("-Dmaven.repo.local={}", repo.display()),
    ));
    cfg
}

/// JUnit tests of `tests/fixtures/debug/junit` (a Maven project with
/// JUnit 5): one test method run alone under the console launcher, with
/// breakpoints in the test and in the code under test; a failing test's
/// result and exit code; names that are not tests of the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_junit_test_stops_at_its_breakpoints() {
    let launcher = "m2/org/junit/platform/junit-platform-console-standalone/1.14.1";
    if !have_jdk() || test_support::fixtures::require(&["mvn"]).is_none() {
        return;
    }
    if !test_support::fixtures::dir().join(launcher).is_dir() {
        assert!(
            !test_support::fixtures::in_ci(),
            "run `cargo xtask fixtures`: the JUnit artifacts are missing"
        );
        return;
    }
    let test = "src/test/java/demo/stats/StatsTest.java";
    let rows: [(&str, Vec<Value>, Expect); 3] = [
        (
            "a stop in the test, then in the code under test",
            vec![
                json!({"op": "breakpoints", "file": test, "lines": [12]}),
                json!({"op": "breakpoints", "file": "src/main/java/demo/stats/Stats.java", "lines": [12]}),
                json!({"op": "launch", "program": test, "test": "meanOfSix"}),
                json!({"op": "locals"}),
                json!({"op": "continue"}),
                json!({"op": "continue"}),
            ],
            expect![[r#"
                > {"file":"src/test/java/demo/stats/StatsTest.java","lines":[12],"op":"breakpoints"}
                debug breakpoints  src/test/java/demo/stats/StatsTest.java
                src/test/java/demo/stats/StatsTest.java:12 set  | assertEquals(18.0, result);
                no session yet: they are sent to the adapter at launch

                > {"file":"src/main/java/demo/stats/Stats.java","lines":[12],"op":"breakpoints"}
                debug breakpoints  src/main/java/demo/stats/Stats.java
                src/main/java/demo/stats/Stats.java:12 set  | return (double) total / xs.length;
                no session yet: they are sent to the adapter at launch

                > {"op":"launch","program":"src/test/java/demo/stats/StatsTest.java","test":"meanOfSix"}
                debug launch  junit demo.stats.StatsTest#meanOfSix under java (`<java>`)
                breakpoint src/main/java/demo/stats/Stats.java:12 verified  | return (double) total / xs.length;
                breakpoint src/test/java/demo/stats/StatsTest.java:12 verified  | assertEquals(18.0, result);
                stopped (breakpoint) thread N in Stats.mean at src/main/java/demo/stats/Stats.java:12
                   12 |         return (double) total / xs.length;
                locals: xs = [4, 8, 15, 16, 23, 42], total = 108

                > {"op":"locals"}
                debug locals  top frame, Stats.mean at src/main/java/demo/stats/Stats.java:12 (2 variables)
                xs (int[]) = [4, 8, 15, 16, 23, 42]  [reference 1]
                total (int) = 108

                > {"op":"continue"}
                debug continue  thread N
                stopped (breakpoint) thread N in StatsTest.meanOfSix at src/test/java/demo/stats/StatsTest.java:12
                   12 |         assertEquals(18.0, result);
                locals: this = StatsTest, values = [4, 8, 15, 16, 23, 42], result = 18.0

                > {"op":"continue"}
                debug continue  thread N
                the program exited with code 0
                output (tail; the output op returns all of it):
                ╷
                ├─ JUnit Platform Suite ✔
                ├─ JUnit Jupiter ✔
                │  └─ StatsTest ✔
                │     └─ meanOfSix() ✔
                └─ JUnit Vintage ✔

                Test run finished after MS ms
                [         4 containers found      ]
                [         0 containers skipped    ]
                [         4 containers started    ]
                [         0 containers aborted    ]
                [         4 containers successful ]
                [         0 containers failed     ]
                [         1 tests found           ]
                [         0 tests skipped         ]
                [         1 tests started         ]
                [         0 tests aborted         ]
                [         1 tests successful      ]
                [         0 tests failed          ]"#]],
        ),
        (
            "a failing test",
            vec![json!({"op": "launch", "program": test, "test": "StatsTest#medianOfFour"})],
            expect![[r#"
                > {"op":"launch","program":"src/test/java/demo/stats/StatsTest.java","test":"StatsTest#medianOfFour"}
                debug launch  junit demo.stats.StatsTest#medianOfFour under java (`<java>`)
                the program exited with code 1
                output (tail; the output op returns all of it):
                ╷
                ├─ JUnit Platform Suite ✔
                ├─ JUnit Jupiter ✔
                │  └─ StatsTest ✔
                │     └─ medianOfFour() ✘ median of 1,2,3,4 ==> expected: <2.5> but was: <3.0>
                └─ JUnit Vintage ✔

                Failures (1):
                  JUnit Jupiter:StatsTest:medianOfFour()
                    MethodSource [className = 'demo.stats.StatsTest', methodName = 'medianOfFour', methodParameterTypes = '']
                    => org.opentest4j.AssertionFailedError: median of 1,2,3,4 ==> expected: <2.5> but was: <3.0>
                       org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)
                       org.junit.jupiter.api.AssertionFailureBuilder.buildAndThrow(AssertionFailureBuilder.java:132)
                       org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)
                       org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:70)
                       org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:929)
                       demo.stats.StatsTest.medianOfFour(StatsTest.java:18)
                       java.base/java.lang.reflect.Method.invoke(Method.java:569)
                       java.base/java.util.ArrayList.forEach(ArrayList.java:1511)
                       java.base/java.util.ArrayList.forEach(ArrayList.java:1511)

                Test run finished after MS ms
                [         4 containers found      ]
                [         0 containers skipped    ]
                [         4 containers started    ]
                [         0 containers aborted    ]
                [         4 containers successful ]
                [         0 containers failed     ]
                [         1 tests found           ]
                [         0 tests skipped         ]
                [         1 tests started         ]
                [         0 tests aborted         ]
                [         0 tests successful      ]
                [         1 tests failed          ]"#]],
        ),
        (
            "names that are not tests of the file",
            vec![
                json!({"op": "launch", "program": test, "test": "none"}),
                json!({"op": "launch", "program": test, "test": "Other#meanOfSix"}),
            ],
            expect![[r#"
                > {"op":"launch","program":"src/test/java/demo/stats/StatsTest.java","test":"none"}
                error: bad arguments: no test method `none` in src/test/java/demo/stats/StatsTest.java; its tests: meanOfSix, medianOfFour

                > {"op":"launch","program":"src/test/java/demo/stats/StatsTest.java","test":"Other#meanOfSix"}
                error: bad arguments: `test` is `Other#meanOfSix`, and src/test/java/demo/stats/StatsTest.java holds the class demo.stats.StatsTest; name a test method of it (`StatsTest#METHOD` or `METHOD`)"#]],
        ),
    ];
    for (name, calls, transcript_expected) in rows {
        eprintln!("=== {name}");
        let dir = copy_fixture("junit");
        let b = bench(dir.path(), junit_config());
        let text = transcript(&b, &calls).await;
        let text = masked_numbers(&text, "Test run finished after ", "MS");
        let recorded = b.processes().await;
        let _ = b.try_call(json!({"op": "terminate"})).await;
        assert_no_orphans(&b, &recorded).await;
        transcript_expected.assert_eq(&text);
    }
}

/// A class a build compiled, launched by its name (`demo.Main`, from
/// `target/classes`, no source given): it runs as it is, and a breakpoint
/// in a source of the project stops it; a name no build has is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compiled_class_by_its_name() {
    let Ok(jdk) = tool_core::jdk::find(11, None, Some(&test_support::fixtures::path_env())) else {
        return;
    };
    let dir = copy_fixture("java");
    let compiled = std::process::Command::new(jdk.bin().join("javac"))
        .args(["-g", "-d", "target/classes", "-sourcepath", "."])
        .arg("demo/Main.java")
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(compiled.success());
    let b = bench(dir.path(), config());
    let calls = [
        json!({"op": "breakpoints", "file": "demo/Stats.java", "lines": [14]}),
        json!({"op": "launch", "program": "demo.Main"}),
        json!({"op": "continue"}),
        json!({"op": "launch", "program": "demo.Nope"}),
    ];
    let text = transcript(&b, &calls).await;
    let recorded = b.processes().await;
    let _ = b.try_call(json!({"op": "terminate"})).await;
    assert_no_orphans(&b, &recorded).await;
    expect![[r#"
        > {"file":"demo/Stats.java","lines":[14],"op":"breakpoints"}
        debug breakpoints  demo/Stats.java
        demo/Stats.java:14 set  | int total = 0;
        no session yet: they are sent to the adapter at launch

        > {"op":"launch","program":"demo.Main"}
        debug launch  target/classes/demo/Main.class under java (`<java>`)
        breakpoint demo/Stats.java:14 verified  | int total = 0;
        stopped (breakpoint) thread N in Stats.mean at demo/Stats.java:14
           14 |         int total = 0;
        locals: this = Stats{name="mean", calls=1}, xs = [4, 8, 15, 16, 23, 42]

        > {"op":"continue"}
        debug continue  thread N
        the program exited with code 3
        output (tail; the output op returns all of it):
        mean: 18.0

        > {"op":"launch","program":"demo.Nope"}
        error: bad arguments: program `demo.Nope` does not exist in the workspace; check the path (relative to the workspace root), or build it first"#]].assert_eq(&text);
}
