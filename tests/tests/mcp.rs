//! `agent-tools mcp` end to end with a real MCP client that this project does
//! not write: the official Python SDK (`mcp` on PyPI, installed into
//! `target/fixtures/venv` by `cargo xtask fixtures`), driving the release
//! binary as a subprocess over stdio.
//!
//! Each test writes a plan for `tests/mcp/driver.py` (how to start the
//! server, what the client answers to elicitations, the steps), the driver
//! runs it in one session of `mcp.Client` and reports what it saw, and the
//! assertions are here. Every session also checks that the server exited on
//! its own when the client closed, leaving no process behind.

use expect_test::expect;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use test_support::fixtures;

/// The fixtures' Python with the `mcp` SDK, or `None` (skipped locally; a
/// failure in CI).
fn sdk_python() -> Option<PathBuf> {
    let venv = fixtures::dir().join("venv");
    let py = venv.join("bin/python");
    let has_sdk = std::fs::read_dir(venv.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|d| d.path().join("site-packages/mcp/client").is_dir());
    if py.exists() && has_sdk {
        return Some(py);
    }
    let msg = format!(
        "fixture missing: the MCP Python SDK in {}; run `cargo xtask fixtures`",
        venv.display()
    );
    assert!(!fixtures::in_ci(), "{msg}");
    eprintln!("skipping: {msg}");
    None
}

fn bin() -> PathBuf {
    tests::built_agent_tools_bin()
}

fn repo_root() -> PathBuf {
    tests::repo_root()
}

/// A fresh copy of the MCP fixture project (the tests write to it).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    tests::copy_mcp_project(dir.path());
    dir
}

/// How to start the server for a plan.
fn server(root: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "mcp".to_string(),
        "--root".to_string(),
        root.display().to_string(),
    ];
    args.extend(extra.iter().map(std::string::ToString::to_string));
    json!({
        "command": bin().display().to_string(),
        "args": args,
        "env": {
            "PATH": fixtures::path_env().to_string_lossy(),
            "RUST_LOG": "info",
            "AGENT_TOOLS_FIXTURES": fixtures::dir().display().to_string(),
        },
        "cwd": root.display().to_string(),
    })
}

/// Run one session and return the driver's report. The whole session is
/// bounded; the driver and the server are killed if it runs over.
fn run_session(py: &Path, mut plan: Value, limit: Duration) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let plan_path = dir.path().join("plan.json");
    if plan.get("steps").is_none() {
        plan["steps"] = json!([]);
    }
    std::fs::write(&plan_path, serde_json::to_vec_pretty(&plan).unwrap()).unwrap();
    let mut child = {
        use std::os::unix::process::CommandExt;
        Command::new(py)
            .arg(repo_root().join("tests/mcp/driver.py"))
            .arg(&plan_path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("start the Python driver")
    };
    let pgid = child.id();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut BufReader::new(stdout), &mut s).ok();
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut s).ok();
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > deadline {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(format!("-{pgid}"))
                .status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = out_t.join().unwrap();
    let err = err_t.join().unwrap();
    let Some(status) = status else {
        panic!(
            "the MCP session ran over {} s and was killed\n--- stderr\n{err}",
            limit.as_secs()
        );
    };
    assert!(
        status.success(),
        "the driver failed ({status})\n--- stdout\n{out}\n--- stderr\n{err}"
    );
    let report: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| {
        panic!("the driver printed no report ({e})\n--- stdout\n{out}\n--- stderr\n{err}")
    });
    // Every session: the server exits by itself when the client closes its
    // stdin (the SDK would terminate it after 2 s), and nothing it started
    // is left.
    assert_eq!(
        report["server_alive_after_close"], false,
        "server still alive\n{err}"
    );
    assert!(
        report["close_seconds"].as_f64().unwrap() < 1.9,
        "the server did not exit on its own when the client closed: {}\n{err}",
        report["close_seconds"]
    );
    assert_eq!(
        report["alive_after_close"],
        json!([]),
        "processes left after the client closed (seen {}):\n{err}",
        report["seen_descendants"]
    );
    report
}

fn step(report: &Value, i: usize) -> &Value {
    &report["steps"][i]
}

fn tool_names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// The text of a call's content items, joined.
fn text(call: &Value) -> String {
    call["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content in {call}"))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn ok_text(call: &Value) -> String {
    assert_eq!(call["is_error"], false, "the call failed: {call}");
    text(call)
}

/// What the facade registers for this root with the binary's defaults: the
/// oracle for `tools/list`.
fn registered_specs(root: &Path) -> Vec<tool_core::ToolSpec> {
    let opts = agent_tools::RunOptions::new(root);
    let toolset = agent_tools::ToolsetBuilder::new(root)
        .unwrap()
        .with_defaults(&opts)
        .build()
        .unwrap();
    toolset.registry().specs(tool_core::Surface::FULL)
}

#[test]
fn tools_list_follows_the_surface_with_annotations_from_the_tier() {
    let Some(py) = sdk_python() else { return };
    let proj = project();
    let specs = registered_specs(proj.path());

    let mut plan = server(proj.path(), &["--surface", "read"]);
    plan["steps"] = json!([
        {"op": "list_tools"},
        {"op": "call", "tool": "write", "args": {"path": "x.txt", "content": "no"}},
        {"op": "call", "tool": "read", "args": {"path": "calc.py", "limit": 1}},
    ]);
    let read = run_session(&py, plan, Duration::from_secs(90));

    let mut plan = server(proj.path(), &["--surface", "exec"]);
    plan["elicitation"] = json!([]);
    plan["steps"] = json!([{"op": "list_tools"}]);
    let exec = run_session(&py, plan, Duration::from_secs(90));

    assert_eq!(read["protocol_version"], "2025-11-25");
    assert_eq!(read["server_name"], "agent-tools");

    // read: exactly the read-tier tools, all marked read-only; ask_user is
    // absent because this client declared no elicitation.
    let listed = step(&read, 0);
    let mut expected: Vec<String> = specs
        .iter()
        .filter(|s| s.tier == tool_core::Tier::Read && s.name != "ask_user")
        .map(|s| s.name.clone())
        .collect();
    expected.sort();
    assert_eq!(tool_names(listed), expected);
    expect![[r#"
        ast_grep
        lsp
        read"#]]
    .assert_eq(&tool_names(listed).join("\n"));
    for t in listed["tools"].as_array().unwrap() {
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
        assert!(t["annotations"].get("destructiveHint").is_none(), "{t}");
    }
    // A hidden tool is refused exactly like an unknown one.
    let hidden = step(&read, 1);
    let err = hidden["protocol_error"].as_str().unwrap();
    expect!["MCPError: unknown tool `write`: no tool of that name is available here; available: ast_grep, lsp, read"].assert_eq(err);
    assert!(!proj.path().join("x.txt").exists());
    assert_eq!(ok_text(step(&read, 2)), "     1\tdef mean(xs: list[float]) -> float:\n… lines 1-1 of 8 in calc.py — pass offset 2 to read on");

    // exec: every registered tool, with input schemas and tier-derived hints;
    // ask_user too, since this client declared elicitation.
    let listed = step(&exec, 0);
    let mut all: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
    if !all.contains(&"ask_user".to_string()) {
        all.push("ask_user".into());
    }
    all.sort();
    assert_eq!(tool_names(listed), all);
    for t in listed["tools"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let spec = specs.iter().find(|s| s.name == name);
        let a = &t["annotations"];
        if let Some(spec) = spec {
            assert_eq!(t["inputSchema"], spec.input_schema, "{name}");
            assert_eq!(
                a["readOnlyHint"],
                spec.tier == tool_core::Tier::Read,
                "{name}: {a}"
            );
            if spec.tier != tool_core::Tier::Read {
                assert!(a["destructiveHint"].is_boolean(), "{name}: {a}");
                assert!(a["openWorldHint"].is_boolean(), "{name}: {a}");
            }
            if spec.tier == tool_core::Tier::Exec {
                assert_eq!(a["openWorldHint"], true, "{name}: {a}");
            }
        }
    }
    let by_name = |n: &str| {
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == n)
            .cloned()
            .unwrap()
    };
    assert_eq!(by_name("write")["annotations"]["destructiveHint"], true);
    assert_eq!(by_name("edit")["annotations"]["readOnlyHint"], false);
}

#[test]
fn file_tools_read_write_edit_with_errors_as_results() {
    let Some(py) = sdk_python() else { return };
    let proj = project();
    let mut plan = server(proj.path(), &[]);
    plan["steps"] = json!([
        {"op": "call", "tool": "write", "args": {"path": "notes/todo.txt", "content": "one\ntwo\n"}},
        {"op": "call", "tool": "edit", "args": {"path": "notes/todo.txt", "old_string": "two", "new_string": "2"}},
        {"op": "call", "tool": "read", "args": {"path": "notes/todo.txt"}},
        {"op": "call", "tool": "edit", "args": {"path": "calc.py", "old_string": "nothing like this", "new_string": "x"}},
        {"op": "call", "tool": "read", "args": {"path": "../outside.txt"}},
        {"op": "call", "tool": "read", "args": {"path": "calc.py", "colum": 3}},
        {"op": "call", "tool": "no_such_tool", "args": {}},
        // Integers as strings, as several clients send every argument.
        {"op": "call", "tool": "read", "args": {"path": "notes/todo.txt", "offset": "2", "limit": "1"}},
        {"op": "call", "tool": "read", "args": {"path": "notes/todo.txt", "limit": "one"}},
    ]);
    let r = run_session(&py, plan, Duration::from_secs(90));
    assert_eq!(
        ok_text(step(&r, 0)),
        "wrote notes/todo.txt (2 lines, 8 bytes; created)"
    );
    assert_eq!(
        ok_text(step(&r, 1)),
        "edited notes/todo.txt: 1 replacement (line 2)\n     1\tone\n     2\t2"
    );
    assert_eq!(ok_text(step(&r, 2)), "     1\tone\n     2\t2");
    assert_eq!(step(&r, 2)["structured"]["content"], "one\n2\n");
    assert_eq!(
        std::fs::read_to_string(proj.path().join("notes/todo.txt")).unwrap(),
        "one\n2\n"
    );
    // Tool errors are results the model reads, with isError.
    let mut errors = Vec::new();
    for i in 3..=5 {
        let c = step(&r, i);
        assert_eq!(c["is_error"], true, "{c}");
        errors.push(text(c).replace(&proj.path().display().to_string(), "ROOT"));
    }
    expect![[r#"
        [
            "bad arguments: `old_string` was not found in calc.py; read the file again and copy the text exactly, whitespace included",
            "bad arguments: `../outside.txt` is outside the workspace; only paths inside ROOT can be used (give them relative to it)",
            "bad arguments: argument `colum`: unknown field `colum`, expected one of `path`, `offset`, `limit`; check the tool's input schema",
        ]
    "#]].assert_debug_eq(&errors);
    assert_eq!(step(&r, 3)["structured"]["error"]["kind"], "bad_arguments");
    // An unknown tool is a protocol error.
    let e = step(&r, 6)["protocol_error"].as_str().unwrap();
    expect!["MCPError: unknown tool `no_such_tool`: no tool of that name is available here; available: ast_edit, ast_grep, debug, edit, eval, lsp, lsp_code_action, lsp_rename, read, resolve, write"].assert_eq(e);
    // A string that is exactly an integer is taken as one; another string
    // is refused, naming the type wanted and the value received.
    assert_eq!(
        ok_text(step(&r, 7)),
        "     2\t2\n… lines 2-2 of 2 in notes/todo.txt"
    );
    assert_eq!(step(&r, 8)["is_error"], true);
    expect![[r#"bad arguments: argument `limit`: invalid type: string "one", expected usize; check the tool's input schema"#]].assert_eq(&text(step(&r, 8)));
}

#[test]
fn ask_user_is_answered_through_the_clients_elicitation() {
    let Some(py) = sdk_python() else { return };
    let proj = project();
    let mut plan = server(proj.path(), &[]);
    plan["elicitation"] = json!([
        {"action": "accept", "content": {"choice": "postgres"}},
        {"action": "accept", "content": {"choices": ["lint", "test"], "answer": "and docs"}},
        {"action": "decline"},
        {"action": "cancel"},
    ]);
    let ask = |q: &str, extra: Value| {
        let mut args = json!({"question": q});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        json!({"op": "call", "tool": "ask_user", "args": args})
    };
    plan["steps"] = json!([
        ask(
            "Which database should the cache use?",
            json!({
                "context": "the schema migration depends on it",
                "options": [{"label": "sqlite", "description": "embedded, no server"}, {"label": "postgres"}]
            })
        ),
        ask(
            "Which checks should run?",
            json!({
                "options": [{"label": "lint"}, {"label": "test"}, {"label": "bench"}],
                "multi_select": true, "allow_free_text": true
            })
        ),
        ask(
            "What should the file be called?",
            json!({"allow_free_text": true})
        ),
        ask(
            "Proceed with the migration?",
            json!({"options": [{"label": "yes"}, {"label": "no"}]})
        ),
    ]);
    let r = run_session(&py, plan, Duration::from_secs(90));

    let first = &r["elicitations"][0];
    assert_eq!(
        first["message"],
        "Which database should the cache use?\n\nWhy: the schema migration depends on it"
    );
    assert_eq!(
        first["schema"]["properties"]["choice"]["oneOf"],
        json!([{"const": "sqlite", "title": "sqlite — embedded, no server"}, {"const": "postgres", "title": "postgres"}])
    );
    assert_eq!(first["schema"]["required"], json!(["choice"]));
    let answered = step(&r, 0);
    expect!["ask_user #1 answered: postgres"].assert_eq(&ok_text(answered));
    assert_eq!(answered["structured"]["choices"], json!(["postgres"]));

    let multi = step(&r, 1);
    assert_eq!(multi["structured"]["choices"], json!(["lint", "test"]));
    assert_eq!(multi["structured"]["text"], "and docs");

    // decline → declined, a success that tells the model how to go on.
    let declined = step(&r, 2);
    assert_eq!(declined["structured"]["outcome"], "declined");
    assert_eq!(
        ok_text(declined),
        "ask_user #3 declined: the operator declined to answer; proceed on an assumption you \
         state in your reply, and do not ask this question again."
    );

    // cancel (the dialog dismissed) → cancelled by the user, an error with
    // the same instruction (not "no answer within N s").
    let cancelled = step(&r, 3);
    assert_eq!(cancelled["is_error"], true, "{cancelled}");
    assert_eq!(
        text(cancelled),
        "cancelled: question #4 was cancelled by the user, who dismissed it without an answer; \
         proceed on an assumption you state in your reply, and do not ask this question again"
    );
    assert_eq!(r["elicitations"].as_array().unwrap().len(), 4);
}

#[test]
fn a_two_question_card_is_one_elicitation_with_a_field_per_question() {
    let Some(py) = sdk_python() else { return };
    let proj = project();
    let mut plan = server(proj.path(), &[]);
    plan["elicitation"] = json!([
        {"action": "accept", "content": {"db": "postgres", "scope": ["queries", "pages"], "_note": " nightly "}},
        {"action": "accept", "content": {"db": "sqlite", "_discuss": true}},
        {"action": "accept", "content": {"scope": [], "_note": "   "}},
    ]);
    let card = json!({"op": "call", "tool": "ask_user", "args": {
        "question": "Setting up the cache",
        "questions": [
            {"id": "db", "header": "Database", "question": "Which database?",
             "options": [{"label": "sqlite", "description": "embedded", "recommended": true}, {"label": "postgres"}]},
            {"id": "scope", "header": "Scope", "question": "What should it cache?",
             "options": [{"label": "pages"}, {"label": "queries"}], "multi": true}
        ]
    }});
    let secret = json!({"op": "call", "tool": "ask_user", "args": {
        "question": "The deploy token?", "allow_free_text": true, "secret": true
    }});
    plan["steps"] = json!([card.clone(), card.clone(), card, secret]);
    let r = run_session(&py, plan, Duration::from_secs(90));

    // One elicitation per card, one schema property per question.
    let asked = &r["elicitations"][0];
    assert_eq!(asked["message"], "Setting up the cache");
    expect![[r#"
        {
          "properties": {
            "_discuss": {
              "default": false,
              "title": "Discuss instead of choosing",
              "type": "boolean"
            },
            "_note": {
              "title": "Anything else — or your own answer to any question",
              "type": "string"
            },
            "db": {
              "default": "sqlite",
              "description": "Which database?",
              "oneOf": [
                {
                  "const": "sqlite",
                  "title": "sqlite — embedded"
                },
                {
                  "const": "postgres",
                  "title": "postgres"
                }
              ],
              "title": "Database",
              "type": "string"
            },
            "scope": {
              "description": "What should it cache?",
              "items": {
                "anyOf": [
                  {
                    "const": "pages",
                    "title": "pages"
                  },
                  {
                    "const": "queries",
                    "title": "queries"
                  }
                ]
              },
              "title": "Scope",
              "type": "array"
            }
          },
          "type": "object"
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&asked["schema"]).unwrap());
    let answered = step(&r, 0);
    expect![[r#"
        ask_user #1 answered:
        - db (Database): postgres
        - scope (Scope): pages, queries
        note: nightly"#]]
    .assert_eq(&ok_text(answered));
    assert_eq!(
        answered["structured"]["answers"],
        json!([{"id": "db", "choices": ["postgres"], "text": null}, {"id": "scope", "choices": ["pages", "queries"], "text": null}])
    );
    // Discuss instead: its own outcome, even with an option picked.
    assert_eq!(step(&r, 1)["structured"]["outcome"], "discuss");
    // A form with nothing in it is not an answer.
    assert_eq!(step(&r, 2)["structured"]["outcome"], "skipped");
    // A secret is never asked through elicitation.
    let refused = step(&r, 3);
    assert_eq!(refused["is_error"], true, "{refused}");
    expect!["not available here: no human can answer here (MCP elicitation must not be used to ask for secrets (the MCP specification), so a secret cannot be asked through this client), so nothing was asked; proceed on an assumption you state in your reply, and do not ask this question again"].assert_eq(&text(refused));
    assert_eq!(r["elicitations"].as_array().unwrap().len(), 3);
}

#[test]
fn approval_can_be_asked_through_elicitation() {
    let Some(py) = sdk_python() else { return };
    let proj = project();
    let config = proj.path().join("agent-tools.toml");
    std::fs::write(&config, "[mcp]\napproval = \"elicit\"\n").unwrap();
    let config = config.display().to_string();

    let mut plan = server(proj.path(), &["--config", &config]);
    plan["elicitation"] = json!([{"action": "decline"}, {"action": "accept", "content": {}}]);
    plan["steps"] = json!([
        {"op": "call", "tool": "write", "args": {"path": "a.txt", "content": "first"}},
        {"op": "call", "tool": "write", "args": {"path": "a.txt", "content": "second"}},
        {"op": "call", "tool": "read", "args": {"path": "a.txt"}},
    ]);
    let r = run_session(&py, plan, Duration::from_secs(90));
    let denied = step(&r, 0);
    assert_eq!(denied["is_error"], true, "{denied}");
    expect!["refused: the operator denied `write`: the person declined it; do not retry the same call, change the plan or ask the operator"].assert_eq(&text(denied));
    expect!["wrote a.txt (1 line, 6 bytes; created)"].assert_eq(&ok_text(step(&r, 1)));
    assert_eq!(ok_text(step(&r, 2)), "     1\tsecond");
    let asked = r["elicitations"][0]["message"].as_str().unwrap();
    assert!(
        asked.starts_with("Allow the write tool `write`?\nwrite 5 bytes to a.txt"),
        "{asked}"
    );
    // Reads are never asked about.
    assert_eq!(r["elicitations"].as_array().unwrap().len(), 2);

    // A client without elicitation cannot approve: fail closed.
    let mut plan = server(proj.path(), &["--config", &config]);
    plan["steps"] = json!([
        {"op": "call", "tool": "write", "args": {"path": "b.txt", "content": "x"}},
    ]);
    let r = run_session(&py, plan, Duration::from_secs(90));
    let denied = step(&r, 0);
    assert_eq!(denied["is_error"], true, "{denied}");
    expect![[r#"refused: the operator denied `write`: this host asks for approval through MCP elicitation, which the client does not support (set `approval = "client"` in the [mcp] config to rely on the client's own confirmation); do not retry the same call, change the plan or ask the operator"#]].assert_eq(&text(denied));
    assert!(!proj.path().join("b.txt").exists());
}

/// A raw JSON-RPC line client, for what the SDK cannot do: signal the server.
struct RawSession {
    child: std::process::Child,
    stdout: BufReader<std::process::ChildStdout>,
}

impl RawSession {
    fn start(root: &Path) -> RawSession {
        let mut child = Command::new(bin())
            .args(["mcp", "--root"])
            .arg(root)
            .env("PATH", fixtures::path_env())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = RawSession { child, stdout };
        s.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"}}}),
        );
        let init = s.recv();
        assert_eq!(
            init["result"]["serverInfo"]["name"], "agent-tools",
            "{init}"
        );
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, msg: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line:?}"))
    }

    fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(s) = self.child.try_wait().unwrap() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        None
    }
}

#[test]
fn sigterm_and_sigint_end_the_run_promptly() {
    let proj = project();
    for sig in ["-TERM", "-INT"] {
        let mut s = RawSession::start(proj.path());
        s.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        let list = s.recv();
        assert!(
            list["result"]["tools"].as_array().unwrap().len() >= 3,
            "{list}"
        );
        let status = Command::new("kill")
            .arg(sig)
            .arg(s.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
        let exit = s.wait_exit(Duration::from_secs(5));
        let exit = exit.unwrap_or_else(|| panic!("the server ignored SIG{sig}"));
        assert!(exit.success(), "{sig}: {exit}");
    }
}

/// The `edit_…` id a staged ast_edit result names.
fn edit_id(call: &Value) -> String {
    if let Some(id) = call["structured"]["edit_id"].as_str() {
        return id.to_string();
    }
    let t = text(call);
    let start = t
        .find("edit_")
        .unwrap_or_else(|| panic!("no edit id in {t}"));
    t[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

#[test]
fn ast_grep_then_ast_edit_and_resolve_accept_change_the_file() {
    let Some(py) = sdk_python() else { return };
    let proj = project();
    // Two sessions are one run each; the staged edit lives in the first, so
    // stage and resolve in one session: the edit id is known only at run
    // time, so the driver resolves the last staged edit itself.
    let mut plan = server(proj.path(), &[]);
    plan["steps"] = json!([
        {"op": "call", "tool": "ast_grep", "args": {"pattern": "print($X)", "path": "main.py"}},
        {"op": "call", "tool": "ast_edit", "args": {"pattern": "print($X)", "rewrite": "log($X)", "path": "main.py"}},
        {"op": "call", "tool": "resolve", "args": {"edit_id": "$LAST_EDIT_ID", "action": "accept"}},
    ]);
    let r = run_session(&py, plan, Duration::from_secs(90));
    expect![[r#"
        ast_grep  print($X)  [python] in main.py — 2 matches in 1 file (1 file searched)
        main.py:4:1  print(describe(values))  X=describe(values)
        main.py:5:1  print(mean(values))  X=mean(values)"#]]
    .assert_eq(&ok_text(step(&r, 0)));
    let staged = step(&r, 1);
    // The preview's diagnostics after the diff depend on how far the
    // language server got; the change itself is exact.
    let staged_text = ok_text(staged);
    let (change, _diagnostics) = staged_text
        .split_once("\nafter this change")
        .unwrap_or((&staged_text, ""));
    // (expect-test reads a line of only spaces as empty: the diff's blank
    // context line is compared trimmed.)
    let change: Vec<&str> = change.lines().map(str::trim_end).collect();
    let change = change.join("\n");
    expect![[r#"
        (proposed) 2 replacements in 1 file … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        ast_edit  print($X)  →  log($X)  [python] in main.py; nothing is written until accepted
        --- a/main.py
        +++ b/main.py
        @@ -3,3 +3,3 @@
         values = [1.0, 2.0, 3.0]
        -print(describe(values))
        -print(mean(values))
        +log(describe(values))
        +log(mean(values))"#]].assert_eq(&change);
    let id = edit_id(staged);
    let resolved = step(&r, 2);
    assert_eq!(resolved["resolved_edit_id"], id.as_str());
    ok_text(resolved);
    assert_eq!(
        std::fs::read_to_string(proj.path().join("main.py")).unwrap(),
        "from calc import describe, mean\n\nvalues = [1.0, 2.0, 3.0]\nlog(describe(values))\nlog(mean(values))\n"
    );
}

/// A config file in the project that makes the heartbeat frequent.
fn fast_progress_config(root: &Path) -> String {
    let config = root.join("agent-tools.toml");
    std::fs::write(&config, "[mcp]\nprogress_interval_ms = 500\n").unwrap();
    config.display().to_string()
}

#[test]
fn lsp_definition_and_a_write_that_breaks_types_returns_the_diagnostic() {
    let Some(py) = sdk_python() else { return };
    if fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let proj = project();
    let config = fast_progress_config(proj.path());
    let mut plan = server(proj.path(), &["--config", &config]);
    plan["steps"] = json!([
        {"op": "call", "tool": "lsp", "progress": true,
         "args": {"op": "definition", "file": "main.py", "line": 4, "symbol": "describe"}},
        {"op": "processes"},
        {"op": "call", "tool": "write", "args": {"path": "report.py",
         "content": "from calc import mean\n\ncount: int = mean([1.0, 2.0])\n"}},
    ]);
    let r = run_session(&py, plan, Duration::from_mins(4));
    let def = ok_text(step(&r, 0));
    expect![[r#"
        lsp definition  `describe` at main.py:4
        calc.py:6    def describe(xs: list[float]) -> str:  (in describe)"#]]
    .assert_eq(&def);
    assert!(
        !step(&r, 1)["descendants"].as_array().unwrap().is_empty(),
        "the language server runs as a child of the server"
    );
    let wrote = ok_text(step(&r, 2));
    // The new type error is folded into the write's result.
    expect![[r#"
        wrote report.py (3 lines, 53 bytes; created)
        lsp: 1 new problem in report.py after this write:
        report.py:3:14 error [reportAssignmentType] Type "float" is not assignable to declared type "int" (python)"#]].assert_eq(&wrote);
}

/// `text` with the fixtures' folder and the Python version after its major
/// masked (a kernel's start names its interpreter).
fn python_masked(text: &str) -> String {
    let text = text.replace(&fixtures::dir().display().to_string(), "FIXTURES");
    match text.split_once("Python 3.") {
        Some((before, after)) => format!(
            "{before}Python 3.x{}",
            after.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
        ),
        None => text,
    }
}

#[test]
fn eval_returns_a_figure_as_an_image_item_and_a_cancelled_cell_is_interrupted() {
    let Some(py) = sdk_python() else { return };
    let proj = project();
    let config = fast_progress_config(proj.path());
    let mut plan = server(proj.path(), &["--config", &config]);
    plan["steps"] = json!([
        {"op": "call", "tool": "eval", "args": {"code": "x = 41\nx", "description": "keep a variable for later"}},
        {"op": "call", "tool": "eval", "args": {"description": "plot a small figure",
         "code": "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2, 3], [1, 4, 9])\nplt.show()"}},
        {"op": "processes"},
        {"op": "call", "tool": "eval", "progress": true, "cancel_after": 3,
         "args": {"code": "import time\ntime.sleep(120)", "description": "sleep until cancelled"}},
        {"op": "call", "tool": "eval", "args": {"code": "x + 1", "description": "the variable survived the interrupt"}},
    ]);
    let r = run_session(&py, plan, Duration::from_mins(4));
    expect![[r#"
        eval python  keep a variable for later
        (started a python kernel: Python 3.x from FIXTURES/venv/bin/python3)
        41"#]]
    .assert_eq(&python_masked(&ok_text(step(&r, 0))));

    let figure = step(&r, 1);
    assert_eq!(figure["is_error"], false, "{figure}");
    let image = figure["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "image")
        .unwrap_or_else(|| panic!("no image content item: {figure}"));
    assert_eq!(image["mimeType"], "image/png");
    assert_eq!(image["png_signature"], true);
    assert!(image["bytes"].as_u64().unwrap() > 1000, "{image}");
    assert!(
        !step(&r, 2)["descendants"].as_array().unwrap().is_empty(),
        "the kernel runs as a child of the server"
    );

    let cancelled = step(&r, 3);
    assert_eq!(cancelled["cancelled"], true, "{cancelled}");
    assert!(
        !cancelled["progress"].as_array().unwrap().is_empty(),
        "a long cell reports progress: {cancelled}"
    );
    // The cell was interrupted, not the kernel restarted: the next cell runs
    // at once and still sees `x`.
    let after = step(&r, 4);
    expect![[r#"
        eval python  the variable survived the interrupt
        42"#]]
    .assert_eq(&ok_text(after));
    assert!(after["seconds"].as_f64().unwrap() < 30.0, "{after}");
}

#[test]
fn debug_session_stops_at_a_breakpoint() {
    let Some(py) = sdk_python() else { return };
    let proj = project();
    let mut plan = server(proj.path(), &[]);
    plan["steps"] = json!([
        {"op": "call", "tool": "debug", "args": {"op": "breakpoints", "file": "calc.py", "lines": [3]}},
        {"op": "call", "tool": "debug", "progress": true, "args": {"op": "launch", "program": "main.py"}},
        {"op": "processes"},
        {"op": "call", "tool": "debug", "args": {"op": "evaluate", "expression": "total"}},
    ]);
    let r = run_session(&py, plan, Duration::from_mins(4));
    expect![[r#"
        debug breakpoints  calc.py
        calc.py:3 set  | return total / len(xs)
        no session yet: they are sent to the adapter at launch"#]]
    .assert_eq(&ok_text(step(&r, 0)));
    let launched = step(&r, 1);
    let text = ok_text(launched);
    let s = &launched["structured"];
    assert_eq!(s["state"], "stopped", "{text}");
    assert_eq!(s["reason"], "breakpoint", "{text}");
    assert_eq!(
        (
            s["function"].as_str(),
            s["file"].as_str(),
            s["line"].as_u64()
        ),
        (Some("mean"), Some("calc.py"), Some(3)),
        "{text}"
    );
    assert!(
        step(&r, 2)["descendants"].as_array().unwrap().len() >= 2,
        "adapter and debuggee run under the server: {}",
        step(&r, 2)
    );
    expect![[r#"
        debug evaluate  `total` in top frame, mean at calc.py:3
        6.0 (float)"#]]
    .assert_eq(&ok_text(step(&r, 3)));
    // The session is left stopped: closing the client must still end the
    // adapter and the debuggee (checked by run_session).
}

/// Every live descendant of `pid`.
fn descendants(pid: u32) -> Vec<u32> {
    tool_core::process::descendants(pid)
}

fn all_dead_within(pids: &[u32], limit: Duration) -> Vec<u32> {
    let deadline = Instant::now() + limit;
    loop {
        let alive: Vec<u32> = pids
            .iter()
            .copied()
            .filter(|p| tool_core::process::pid_alive(*p))
            .collect();
        if alive.is_empty() || Instant::now() > deadline {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_signal_or_a_vanished_client_mid_call_leaves_no_child() {
    let Some(_py) = sdk_python() else { return };
    let proj = project();
    // SIGTERM while a kernel is idle; then a client that closes its end while
    // a cell is still running.
    for how in ["sigterm", "close-mid-call"] {
        let mut s = RawSession::start(proj.path());
        s.send(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "eval", "arguments": {"code": "x = 1\nx", "description": "start the kernel"}}}),
        );
        let started = s.recv();
        assert_eq!(started["id"], 2, "{started}");
        assert_eq!(started["result"]["isError"], false, "{started}");
        let kids = descendants(s.child.id());
        assert!(!kids.is_empty(), "the kernel runs under the server");
        if how == "sigterm" {
            let ok = Command::new("kill")
                .arg("-TERM")
                .arg(s.child.id().to_string())
                .status()
                .unwrap();
            assert!(ok.success());
        } else {
            s.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                "name": "eval", "arguments": {"code": "import time\ntime.sleep(120)", "description": "run long"}}}));
            std::thread::sleep(Duration::from_millis(500));
            drop(s.child.stdin.take());
        }
        let exit = s
            .wait_exit(Duration::from_secs(5))
            .unwrap_or_else(|| panic!("{how}: the server did not exit"));
        assert!(exit.success(), "{how}: {exit}");
        let left = all_dead_within(&kids, Duration::from_secs(3));
        assert!(
            left.is_empty(),
            "{how}: processes left: {left:?} of {kids:?}"
        );
    }
}

#[test]
fn a_finished_worker_is_pushed_as_a_log_notification_and_rides_on_the_next_result() {
    let Some(py) = sdk_python() else { return };
    let proj = project();
    let worker = repo_root().join("tests/fixtures/vibe/worker.sh");
    let fast = format!("sh {} fast", worker.display());
    let mut plan = server(proj.path(), &["--vibe-fast", &fast]);
    plan["steps"] = json!([
        {"op": "call", "tool": "vibe_spawn", "args": {"brief": "say all 4 tests pass", "label": "tests"}},
        {"op": "await_log", "logger": "vibe", "timeout": 30},
        {"op": "call", "tool": "vibe_list", "args": {}},
    ]);
    let r = run_session(&py, plan, Duration::from_secs(90));
    assert_eq!(step(&r, 1)["found"], true, "no notification came: {r}");
    let log = &r["log"][0];
    assert_eq!(
        (&log["level"], &log["logger"]),
        (&json!("info"), &json!("vibe")),
        "{log}"
    );
    let data = log["data"].as_str().unwrap();
    assert!(
        data.starts_with("worker w1 \"tests\" (fast, run 1) done after ")
            && data.ends_with(": fast worker w1 run 1 (tests) (vibe_wait w1 for all of it)"),
        "{data}"
    );
    // The next result carries it too, after the tool's own text.
    let list = ok_text(step(&r, 2));
    let (_, notices) = list
        .split_once("\n--- ")
        .unwrap_or_else(|| panic!("no notice block: {list}"));
    assert_eq!(
        tool_core::notices::mask_ages(notices),
        format!(
            "1 notice from elsewhere in this run (not part of this result) ---\n[vibe info, …] {data}"
        )
    );
}
