//! The binary behaves like a Unix tool: a reader that goes away ends it
//! quietly (no panic, status 0), and its logs carry no colour codes when
//! stderr is not a terminal.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

/// Like `agent-tools doctor | head -0`: the reader closes its end before the
/// report is written.
#[test]
fn doctor_into_a_closed_pipe_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["doctor", "--root"])
        .arg(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(0) || out.status.signal() == Some(libc_sigpipe()),
        "status {:?}, stderr {stderr}",
        out.status
    );
    assert_eq!(stderr, "");
}

/// The pipeline itself, as the issue typed it.
#[test]
fn doctor_piped_into_head_prints_its_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(r#""$0" doctor --root "$1" | head -1; echo "doctor exited ${PIPESTATUS[0]}""#)
        .arg(BIN)
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let root = dir.path().canonicalize().unwrap();
    assert_eq!(
        stdout,
        format!(
            "agent-tools doctor — root {}\ndoctor exited 0\n",
            root.display()
        )
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

fn libc_sigpipe() -> i32 {
    13
}

/// `mcp` logs at info level when asked; stderr here is a pipe, so no ANSI.
#[test]
fn logs_have_no_colour_when_stderr_is_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    for no_color in [None, Some("1")] {
        let mut cmd = Command::new(BIN);
        cmd.args(["mcp", "--root"])
            .arg(dir.path())
            .env("RUST_LOG", "info")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null());
        if let Some(v) = no_color {
            cmd.env("NO_COLOR", v);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Each line without its timestamp (an ANSI code would show); the
        // warm-up's line comes at any point or not at all (the run may end
        // first), so it is left out.
        let logged: Vec<String> = stderr
            .lines()
            .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).trim_start())
            .filter(|l| !l.starts_with("INFO lsp warm-up: "))
            .map(|l| l.replace(&dir.path().display().to_string(), "ROOT"))
            .collect();
        expect_test::expect![[r#"
            INFO serving MCP on stdio root=ROOT surface=exec tools=11
            INFO stdin closed: the client is gone
            INFO client closed; run ended swept=0"#]]
        .assert_eq(&logged.join("\n"));
    }
}

/// Every flag `--help` shows, for every subcommand, is in the README.
#[test]
fn the_readme_lists_every_flag_of_the_binary() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let mut missing = Vec::new();
    for command in ["doctor", "call", "batch", "mcp"] {
        let out = Command::new(BIN)
            .args([command, "--help"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let help = String::from_utf8(out.stdout).unwrap();
        for flag in help
            .split_whitespace()
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .map(|w| w.trim_end_matches(','))
        {
            if flag != "--help" && !readme.contains(&format!("`{flag}")) {
                missing.push(format!("{command} {flag}"));
            }
        }
    }
    assert!(missing.is_empty(), "not in the README: {missing:?}");
}
