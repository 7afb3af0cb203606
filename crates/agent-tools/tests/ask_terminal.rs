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
    /// Every file the run wrote under its root.
    files: String,
}

fn under_pty(args: &[&str], script: serde_json::Value) -> Option<Typed> {
    under_pty_logging(args, script, "warn")
}

/// As [`under_pty`], with `RUST_LOG` set to `log` (the logs go to the
/// terminal, so they are in the transcript).
fn under_pty_logging(args: &[&str], script: serde_json::Value, log: &str) -> Option<Typed> {
    let python = test_support::fixtures::require(&["python3"])?;
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
        .env("RUST_LOG", log)
        .stdin(Stdio::null())
        .output()
        .expect("python3 runs");
    let mut files = String::new();
    collect_files(dir.path(), &out, &mut files);
    Some(Typed {
        status: result.status.code().unwrap_or(-1),
        transcript: String::from_utf8_lossy(&result.stdout).replace("\r\n", "\n"),
        stdout: std::fs::read_to_string(&out).unwrap_or_default(),
        files,
    })
}

/// The contents of every file under `dir` but `skip`, one after another.
fn collect_files(dir: &std::path::Path, skip: &std::path::Path, into: &mut String) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, skip, into);
        } else if path != skip {
            into.push_str(&String::from_utf8_lossy(
                &std::fs::read(&path).unwrap_or_default(),
            ));
        }
    }
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
        "type a number 1–3; s skips, d discusses instead",
        "> 7",
        "there is no option 7; type a number 1–3; s skips, d discusses instead",
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
fn an_empty_line_is_not_an_answer_and_s_skips() {
    // Each step waits for the prompt it answers: the empty line's complaint
    // ends with a new prompt, which the `s` waits for.
    let Some(t) = under_pty(
        &["call", "ask_user", &colours()],
        json!([
            ["\n> ", "  \n"],
            [
                "is not an answer; type a number 1–3; s skips, d discusses instead\r\n> ",
                "s\n"
            ]
        ]),
    ) else {
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
fn two_questions_are_typed_in_turn_and_d_discusses_instead() {
    let card = json!({
        "question": "Setting up the cache",
        "questions": [
            {"id": "db", "header": "Database", "question": "Which database?",
             "options": [{"label": "sqlite", "recommended": true}, {"label": "postgres"}]},
            {"id": "name", "header": "Name", "question": "What is it called?"}
        ]
    })
    .to_string();
    let Some(t) = under_pty(
        &["call", "ask_user", &card],
        json!([
            ["[1/2] Database> ", "2\n"],
            ["[2/2] Name> ", "\n"],
            ["[2/2] Name> ", "hot cache\n"]
        ]),
    ) else {
        return;
    };
    assert_eq!(t.status, 0, "{}", t.transcript);
    expect_test::expect![[r#"
        ask_user #1 answered:
        - db (Database): postgres
        - name (Name): (typed) hot cache"#]]
    .assert_eq(t.stdout.trim());
    assert!(
        t.transcript.contains("  1. sqlite (recommended)\n"),
        "{}",
        t.transcript
    );
    assert!(
        t.transcript
            .contains("an empty answer is not an answer; type your answer"),
        "{}",
        t.transcript
    );

    let Some(t) = under_pty(
        &["call", "ask_user", &card],
        json!([["[1/2] Database> ", "d\n"]]),
    ) else {
        return;
    };
    assert_eq!(t.status, 0, "{}", t.transcript);
    assert!(
        t.stdout
            .starts_with("ask_user #1: the operator chose to discuss this instead of choosing"),
        "{}",
        t.stdout
    );
    assert!(
        t.transcript.contains("(card #1 left to discuss)"),
        "{}",
        t.transcript
    );
}

#[test]
fn a_secret_is_masked_and_kept_out_of_logs_and_files() {
    let secret = "hunter2-XYZZY-4711";
    let args = json!({"question": "The deploy token?", "allow_free_text": true, "secret": true})
        .to_string();
    let Some(t) = under_pty_logging(
        &["call", "ask_user", &args],
        json!([["\n> ", format!("{secret}\n")]]),
        "trace",
    ) else {
        return;
    };
    assert_eq!(t.status, 0, "{}", t.transcript);
    // The caller gets it; the terminal (echo and every log line) and the
    // files of the run do not.
    assert_eq!(
        t.stdout.trim(),
        format!("ask_user #1 answered: (typed) {secret}")
    );
    assert!(
        t.transcript.contains("type the secret (it is not shown)"),
        "{}",
        t.transcript
    );
    assert!(
        t.transcript.contains("card settled"),
        "trace logs are on:\n{}",
        t.transcript
    );
    assert!(!t.transcript.contains(secret), "{}", t.transcript);
    assert!(!t.files.contains(secret));
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
