//! Results of `launch`, `attach`, `continue`, the steps, `pause` and
//! `terminate`: what was done, then where the program settled.

use super::{quoted, stop_headline, Answer, BreakpointLine, OUTPUT_IN_ANSWER};
use crate::format::{self, output_tail};
use crate::session::StopInfo;
use serde::Serialize;
use std::time::Duration;
use tool_core::format::plural;

/// Locals shown in a stop's answer.
pub(in crate::ops) const LOCALS_IN_STOP: usize = 4;
/// Characters of each value shown in a stop's answer.
const LOCAL_VALUE_IN_STOP: usize = 60;

/// A stop's first few locals (of the frame it shows).
#[derive(Debug, Default, Serialize)]
pub(in crate::ops) struct LocalsPreview {
    /// Name and value, the value cut short.
    pub shown: Vec<(String, String)>,
    /// How many the frame has.
    pub total: usize,
}

impl LocalsPreview {
    pub(in crate::ops) fn new(variables: &[dap_types::Variable], total: usize) -> Self {
        // debugpy groups (`special variables`, `function variables`) are
        // not variables; pytest's assertion rewriting leaves temporaries
        // (`@py_assert1`) the test's author never wrote (`locals` has them).
        let real: Vec<_> = variables
            .iter()
            .filter(|v| !v.name.contains(' ') && !v.name.starts_with("@py_"))
            .collect();
        let hidden = variables.len() - real.len();
        LocalsPreview {
            shown: real
                .iter()
                .take(LOCALS_IN_STOP)
                .map(|v| {
                    (
                        v.name.clone(),
                        tool_core::format::cap_chars(v.value.trim(), LOCAL_VALUE_IN_STOP)
                            .into_owned(),
                    )
                })
                .collect(),
            total: total - hidden,
        }
    }

    /// `locals: i = 3, total = 8 (and 2 more: call locals)`, or nothing.
    fn line(&self) -> Option<String> {
        if self.shown.is_empty() {
            return None;
        }
        let mut line = format!(
            "locals: {}",
            self.shown
                .iter()
                .map(|(n, v)| format!("{n} = {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if self.total > self.shown.len() {
            line.push_str(&format!(
                " (and {} more: call locals)",
                self.total - self.shown.len()
            ));
        }
        Some(line)
    }
}

/// Where a wait ended: a stop, the end, or still running.
#[derive(Debug, Serialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub(in crate::ops) enum Outcome {
    Stopped {
        stop: u64,
        reason: String,
        thread_id: Option<u64>,
        function: Option<String>,
        file: Option<String>,
        line: Option<u64>,
        /// What the stop is, in words (`paused`, `stopped: panic: …`).
        what: Option<String>,
        /// The top frame's first few locals.
        locals: LocalsPreview,
        #[serde(skip)]
        info: Box<StopInfo>,
        /// `mean at avg.py:6`
        #[serde(skip)]
        place: Option<String>,
        #[serde(skip)]
        source: Option<String>,
    },
    Ended {
        exit_code: Option<i64>,
        why: String,
        #[serde(skip)]
        output: String,
    },
    Running {
        #[serde(skip)]
        waited: Duration,
        /// The program is blocked reading its standard input.
        waiting_for_input: bool,
        #[serde(skip)]
        output: String,
    },
}

impl Outcome {
    fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            Outcome::Stopped {
                info,
                place,
                source,
                line,
                locals,
                ..
            } => {
                out.push(stop_headline(info, place.as_deref()));
                if let (Some(src), Some(l)) = (source, line) {
                    out.push(quoted(*l, src));
                }
                if let Some(l) = locals.line() {
                    out.push(l);
                }
            }
            Outcome::Ended { why, output, .. } => {
                out.push(why.clone());
                if !output.trim().is_empty() {
                    out.push("output (tail; the output op returns all of it):".into());
                    out.push(output_tail(output.trim_end(), OUTPUT_IN_ANSWER));
                }
            }
            Outcome::Running {
                waited,
                output,
                waiting_for_input,
            } => {
                let waited = format::duration(*waited);
                out.push(if *waiting_for_input {
                    format!("still running after {waited}: waiting for input on stdin; launch again with `stdin` (the text it reads, then end of file), or call pause to see where it reads")
                } else {
                    format!("still running after {waited}: no breakpoint was hit and the program did not exit; call pause to stop it where it is, or continue to keep waiting")
                });
                if !output.trim().is_empty() {
                    out.push("latest output:".into());
                    out.push(output_tail(output.trim_end(), OUTPUT_IN_ANSWER));
                }
            }
        }
        out
    }
}

/// `launch`, `attach`, `continue`, the steps and `pause`: what was done,
/// then where the program settled.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct RunResult {
    /// `launch  avg.py under debugpy (…)`, `continue  thread 1`
    #[serde(skip)]
    pub head: String,
    #[serde(skip)]
    pub previous_ending: Option<String>,
    #[serde(skip)]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub breakpoints: Vec<BreakpointLine>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl Answer for RunResult {
    fn text(&self) -> String {
        let mut out = vec![format!("debug {}", self.head)];
        if let Some(p) = &self.previous_ending {
            out.push(format!("(the previous session had ended: {p})"));
        }
        out.extend(self.notes.iter().map(|n| format!("note: {n}")));
        out.extend(
            self.breakpoints
                .iter()
                .map(|b| format!("breakpoint {}", b.text())),
        );
        out.extend(self.outcome.lines());
        out.join("\n")
    }
}

/// `pause` on a program already stopped.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct AlreadyStopped {
    pub state: &'static str,
    pub already: bool,
    pub thread_id: Option<u64>,
    #[serde(skip)]
    pub info: StopInfo,
    #[serde(skip)]
    pub place: Option<String>,
}

impl Answer for AlreadyStopped {
    fn text(&self) -> String {
        format!(
            "debug pause  already stopped; nothing to pause\n{}",
            stop_headline(&self.info, self.place.as_deref())
        )
    }
}

/// What `terminate` did to a debuggee it had attached to.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct Detached {
    /// The debuggee's pid, when the adapter reported it.
    pub pid: Option<u32>,
    /// Whether it is still alive after the disconnect.
    pub alive: Option<bool>,
}

/// `terminate`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct TerminateResult {
    pub left: Vec<u32>,
    /// Set after an `attach`: the session disconnected instead.
    pub detached: Option<Detached>,
    #[serde(skip)]
    pub label: String,
    /// How it had ended before, if it had.
    #[serde(skip)]
    pub had_ended: Option<String>,
}

impl Answer for TerminateResult {
    fn text(&self) -> String {
        let mut out = vec![format!("debug terminate  {}", self.label)];
        match (&self.had_ended, &self.detached) {
            (Some(why), _) => out.push(format!(
                "the session had already ended ({why}); its processes are gone"
            )),
            (None, Some(d)) => {
                let who = match d.pid {
                    Some(pid) => format!("the debuggee (pid {pid})"),
                    None => "the debuggee".to_string(),
                };
                let fate = match d.alive {
                    Some(true) => "is still running",
                    Some(false) => "has ended since",
                    None => "was left running",
                };
                out.push(format!(
                    "disconnected; {who} was started outside this run and {fate}; the adapter is gone"
                ));
            }
            (None, None) => out.push(
                "terminated: the program, the adapter and every process they started are gone"
                    .into(),
            ),
        }
        if !self.left.is_empty() {
            out.push(format!(
                "warning: {} still alive: {:?}",
                plural(self.left.len(), "process is", "processes are"),
                self.left
            ));
        }
        out.join("\n")
    }
}
