//! `ask_user` through the binary's terminal port, as a person at a terminal
//! answers it: the binary runs under a real pseudo-terminal (Python's `pty`
//! module drives it), the card is drawn there, and the answer is typed.
#![cfg(all(feature = "ask", feature = "cli"))]

use serde_json::json;
use std::process::{Command, Output, Stdio};

/// Runs argv[1:] under a pseudo-terminal that is its controlling terminal and
/// stdin; stdout goes to $OUT so the result stays apart from the card. For
/// each [expect, type] pair in $SCRIPT it waits for `expect` to appear on the
/// terminal after everything the previous steps waited for, then types `type`
/// (nothing when it is empty). A step that answers a prompt waits for that
/// prompt itself, so typing never races the prompt it answers. Prints the terminal transcript; exits with the child's
/// code (124 if anything took longer than 20 s).
const PTY_DRIVER: &str = r#"
import json, os, pty, select, signal, sys, time
argv = sys.argv[1:]
pid, master = pty.fork()
if pid == 0:
    fd = os.open(os.environ["OUT"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.execv(argv[0], argv)
deadline = time.time() + 20
buf = b""
def pump(timeout):
    global buf
    r, _, _ = select.select([master], [], [], timeout)
    if r:
        try:
            data = os.read(master, 4096)
        except OSError:
            return False
        if not data:
            return False
        buf += data
    return True
def give_up(why):
    os.killpg(pid, signal.SIGKILL)
    sys.stdout.write(buf.decode(errors="replace") + "\n[driver: " + why + "]\n")
    sys.exit(124)
seen = 0
for expect, typed in json.loads(os.environ["SCRIPT"]):
    want = expect.encode()
    while buf.find(want, seen) < 0:
        if time.time() > deadline or not pump(0.1):
            give_up("never saw " + repr(expect) + " after byte " + str(seen))
    seen = buf.find(want, seen) + len(want)
    if typed:
        os.write(master, typed.encode())
while time.time() < deadline:
    if not pump(0.1):
        break
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        while pump(0.05):
            pass
        sys.stdout.write(buf.decode(errors="replace"))
        sys.exit(os.waitstatus_to_exitcode(status))
done, status = os.waitpid(pid, 0) if time.time() < deadline else (0, 0)
if not done:
    give_up("the child did not exit")
sys.stdout.write(buf.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;

struct Typed {
    status: i32,
    transcript: String,
    stdout: String,
}

fn under_pty(args: &[&str], script: serde_json::Value) -> Option<Typed> {
    let python = tool_core::fixtures::require(&["python3"])?;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stdout.txt");
    let result = Command::new(python)
        .arg("-c")
        .arg(PTY_DRIVER)
        .arg(env!("CARGO_BIN_EXE_agent-tools"))
        .args(args)
        .arg("--root")
        .arg(dir.path())
        .env("OUT", &out)
        .env("SCRIPT", script.to_string())
        .stdin(Stdio::null())
        .output()
        .expect("python3 runs");
    Some(Typed {
        status: result.status.code().unwrap_or(-1),
        transcript: String::from_utf8_lossy(&result.stdout).replace("\r\n", "\n"),
        stdout: std::fs::read_to_string(&out).unwrap_or_default(),
    })
}

fn colours() -> String {
    json!({
        "question": "Which colour should the badge use?",
        "context": "the CSS variable is named after it",
        "options": [
            {"label": "red", "description": "matches the error banner"},
            {"label": "green"},
            {"label": "blue"}
        ]
    })
    .to_string()
}

#[test]
fn a_card_is_answered_by_typing_its_number() {
    let Some(t) = under_pty(
        &["call", "ask_user", &colours()],
        json!([
            ["\n> ", "7\n"],
            ["there is no option 7", ""],
            ["\n> ", "2\n"]
        ]),
    ) else {
        return;
    };
    assert_eq!(t.status, 0, "transcript:\n{}", t.transcript);
    assert_eq!(t.stdout.trim(), "ask_user #1 answered: green");
    // What the person saw on the terminal, in order.
    let card = [
        "── question #1 ",
        "Which colour should the badge use?",
        "  why: the CSS variable is named after it",
        "  1. red — matches the error banner",
        "  2. green",
        "  3. blue",
        "type a number 1–3; an empty line or s skips",
        "> 7",
        "there is no option 7; type a number 1–3; an empty line or s skips",
        "> 2",
        "(card #1 answered)",
    ];
    let mut at = 0;
    for line in card {
        match t.transcript[at..].find(line) {
            Some(i) => at += i + line.len(),
            None => panic!("`{line}` missing after byte {at}:\n{}", t.transcript),
        }
    }
    assert!(
        !t.transcript.contains("ask_user #1 answered"),
        "the result goes to stdout, not the terminal"
    );
}

#[test]
fn several_options_and_free_text_are_typed_too() {
    let mut args: serde_json::Value = serde_json::from_str(&colours()).unwrap();
    args["multi_select"] = json!(true);
    let Some(t) = under_pty(
        &["call", "ask_user", &args.to_string()],
        json!([["\n> ", "3, 1\n"]]),
    ) else {
        return;
    };
    assert_eq!(t.status, 0, "{}", t.transcript);
    assert_eq!(t.stdout.trim(), "ask_user #1 answered: red, blue");
    assert!(t
        .transcript
        .contains("type one or more numbers 1–3 (like 1,3)"));

    let free = json!({"question": "What should the release be called?", "allow_free_text": true});
    let Some(t) = under_pty(
        &["call", "ask_user", &free.to_string()],
        json!([["\n> ", "Quiet Otter\n"]]),
    ) else {
        return;
    };
    assert_eq!(t.status, 0, "{}", t.transcript);
    assert_eq!(t.stdout.trim(), "ask_user #1 answered: (typed) Quiet Otter");
}

#[test]
fn an_empty_line_skips_and_skipping_succeeds() {
    let Some(t) = under_pty(&["call", "ask_user", &colours()], json!([["\n> ", "\n"]])) else {
        return;
    };
    assert_eq!(t.status, 0, "{}", t.transcript);
    assert!(
        t.stdout
            .starts_with("ask_user #1 skipped: the operator chose not to answer"),
        "{}",
        t.stdout
    );
    assert!(t.transcript.contains("(card #1 skipped)"));
}

#[test]
fn an_unanswered_card_expires_with_the_configured_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("agent-tools.toml");
    std::fs::write(&config, "[ask]\nexpiry_seconds = 1\n").unwrap();
    let Some(t) = under_pty(
        &[
            "call",
            "ask_user",
            &colours(),
            "--config",
            config.to_str().unwrap(),
        ],
        json!([["\n> ", ""]]),
    ) else {
        return;
    };
    assert_eq!(t.status, 1, "a timeout is an error:\n{}", t.transcript);
    assert!(
        t.transcript
            .contains("(card #1 expired or was withdrawn; no answer taken)"),
        "{}",
        t.transcript
    );
    assert!(t
        .transcript
        .contains("question #1 got no answer within 1 s"));
}

#[test]
fn without_a_terminal_the_call_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out: Output = Command::new(env!("CARGO_BIN_EXE_agent-tools"))
        .args(["call", "ask_user", &colours(), "--root"])
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "not available here: no human can answer here (the terminal port has no human attached)"
        ),
        "{err}"
    );
    assert!(err.contains("do not ask this question again"), "{err}");
}
