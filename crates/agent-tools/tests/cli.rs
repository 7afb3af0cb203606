//! The `agent-tools` binary as a person runs it: doctor, call, batch.

use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agent-tools"))
}

fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null()).output().expect("agent-tools runs")
}

#[test]
fn doctor_prints_the_table_of_every_tool() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(bin().arg("doctor").arg("--root").arg(dir.path()));
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // The table: from its header to the first blank line (the sections
    // after it name the machine's servers and interpreters).
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("tool "))
        .take_while(|l| !l.is_empty())
        .map(str::trim_end)
        .collect();
    expect_test::expect![[r#"
        tool            tier   compiled  registered  why
        read            read   yes       yes         workspace root (file tools) bound
        write           write  yes       yes         workspace root (file tools) bound
        edit            write  yes       yes         workspace root (file tools) bound
        lsp             read   yes       yes         language-server supervisor bound
        lsp_rename      write  yes       yes         language-server supervisor bound
        lsp_code_action write  yes       yes         language-server supervisor bound
        ast_grep        read   yes       yes         tree-sitter parser bound
        ast_edit        write  yes       yes         tree-sitter parser bound
        resolve         write  yes       yes         tree-sitter parser bound
        debug           exec   yes       yes         debug-session supervisor bound
        eval            exec   yes       yes         kernel factory bound
        ask_user        read   yes       yes         question port + target space bound
        vibe_spawn      read   yes       no          needs vibe roster (vibe mode on): vibe mode is off: no worker command was given; pass --vibe-fast 'CMD' and/or --vibe-good 'CMD' (or set fast/good under [vibe] in the config file)
        vibe_send       read   yes       no          needs vibe roster (vibe mode on): vibe mode is off: no worker command was given; pass --vibe-fast 'CMD' and/or --vibe-good 'CMD' (or set fast/good under [vibe] in the config file)
        vibe_wait       read   yes       no          needs vibe roster (vibe mode on): vibe mode is off: no worker command was given; pass --vibe-fast 'CMD' and/or --vibe-good 'CMD' (or set fast/good under [vibe] in the config file)
        vibe_kill       read   yes       no          needs vibe roster (vibe mode on): vibe mode is off: no worker command was given; pass --vibe-fast 'CMD' and/or --vibe-good 'CMD' (or set fast/good under [vibe] in the config file)
        vibe_list       read   yes       no          needs vibe roster (vibe mode on): vibe mode is off: no worker command was given; pass --vibe-fast 'CMD' and/or --vibe-good 'CMD' (or set fast/good under [vibe] in the config file)"#]]
    .assert_eq(&table.join("\n"));
}

#[test]
fn call_of_an_unknown_tool_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(bin()
        .args(["call", "no_such_tool", "{}", "--root"])
        .arg(dir.path()));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    expect_test::expect!["agent-tools call no_such_tool: unknown tool `no_such_tool`: no tool of that name is available here; available: ask_user, ast_edit, ast_grep, debug, edit, eval, lsp, lsp_code_action, lsp_rename, read, resolve, write"].assert_eq(lines[0]);
}

#[test]
fn bad_usage_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(bin()
        .args(["call", "ast_grep", "{not json", "--root"])
        .arg(dir.path()));
    assert_eq!(out.status.code(), Some(2));
    expect_test::expect!["agent-tools call: the arguments are not valid JSON: key must be a string at line 1 column 2"].assert_eq(String::from_utf8_lossy(&out.stderr).trim_end());

    let out = run(bin()
        .args(["call", "ast_grep", "[1]", "--root"])
        .arg(dir.path()));
    assert_eq!(out.status.code(), Some(2));

    let out = run(bin()
        .args(["call", "ast_grep", "{}", "--surface", "admin", "--root"])
        .arg(dir.path()));
    assert_eq!(out.status.code(), Some(2));
    expect_test::expect!["agent-tools call: unknown tier `admin`: expected read, write or exec"]
        .assert_eq(String::from_utf8_lossy(&out.stderr).trim_end());
}

#[test]
fn batch_answers_one_json_line_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let out = test_support::cli::batch(
        bin().args(["batch", "-", "--root"]).arg(dir.path()),
        [r#"{"tool": "no_such_tool", "args": {}}"#, "", "not json"],
    );
    let text = &out.stdout;
    let lines = out.answers();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["ok"], false);
    assert_eq!(lines[0]["error"]["kind"], "unknown_tool");
    assert_eq!(lines[1]["error"]["kind"], "bad_arguments");
    assert_eq!(out.code(), 1);
}
