//! `agent-tools batch` run over a list of calls: the lines go to its stdin,
//! which is then closed, and what it printed comes back as a [`BatchRun`].
//!
//! [`stdout_lines`] is for a host driven one line at a time instead (a
//! `batch` or `mcp` process kept open), each answer awaited with a bound.
//!
//! The caller builds the command line (`env!("CARGO_BIN_EXE_agent-tools")`
//! is only visible to agent-tools' own tests, and each test sets its own
//! root, flags and environment); this module owns the feeding and the
//! collecting.

use serde_json::Value;
use std::fmt::Display;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What one `batch` process printed, and how long it ran.
pub struct BatchRun {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// From the end of the input to the process's exit.
    pub elapsed: Duration,
}

/// Run `cmd` (an `agent-tools batch …` command line) with one line per
/// item of `lines` on its stdin (a call as JSON, or any text), stdin closed
/// after the last, until it exits.
pub fn batch<I>(cmd: &mut Command, lines: I) -> BatchRun
where
    I: IntoIterator,
    I::Item: Display,
{
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    BatchRun {
        elapsed: started.elapsed(),
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl BatchRun {
    /// The exit code (-1 when killed by a signal).
    pub fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }

    /// One JSON answer per stdout line; panics on a line that is not JSON.
    pub fn answers(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("not a JSON answer ({e}): {l}\n{}", self.stdout))
            })
            .collect()
    }
}

/// The first text block of an answer (`""` when it has none).
pub fn text(answer: &Value) -> String {
    answer["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The lines of `child`'s (piped) stdout as they come, read by a thread of
/// their own, so a test can wait for each with `recv_timeout`. The channel
/// closes when stdout does, or at the first read error.
pub fn stdout_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let out = child.stdout.take().expect("the child's stdout is piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}
