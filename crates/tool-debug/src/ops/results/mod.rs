//! One typed result per op: the structured answer is the result serialized,
//! and the text the model reads is rendered from the same result, so the two
//! cannot disagree. Fields the text needs but the structured answer does not
//! carry are `#[serde(skip)]`. The results are grouped as the ops are:
//! [`info`], [`run`] and [`inspect`]; the pieces they share are here.

mod catch;
mod info;
mod inspect;
mod machine;
mod run;

pub(super) use catch::*;
pub(super) use info::*;
pub(super) use inspect::*;
pub(super) use machine::*;
pub(super) use run::*;

use crate::session::StopInfo;
use serde::Serialize;
use tool_core::format::cap_chars;

/// Output shown inside a stop or exit answer.
pub(in crate::ops) const OUTPUT_IN_ANSWER: usize = 2000;
/// Output returned by one `output` call.
pub(in crate::ops) const OUTPUT_PER_CALL: usize = 16 * 1024;

/// An op's result: serialized for the structured answer, rendered for text.
pub(in crate::ops) trait Answer: Serialize {
    fn text(&self) -> String;
}

/// The first line of a stop: `stopped (breakpoint) thread 1 in mean at avg.py:6`.
pub(in crate::ops) fn stop_headline(stop: &StopInfo, place: Option<&str>) -> String {
    if let Some(words) = &stop.words {
        // `paused — thread 1 in main at spin.c:9`
        let mut line = cap_chars(words, 600).into_owned();
        let mut at = Vec::new();
        if let Some(t) = stop.thread_id {
            at.push(format!("thread {t}"));
        }
        if let Some(p) = place {
            at.push(format!("in {p}"));
        }
        if !at.is_empty() {
            line.push_str(&format!(" — {}", at.join(" ")));
        }
        return line;
    }
    let mut why = stop.reason.clone();
    if let Some(d) = stop
        .description
        .as_deref()
        .filter(|d| !d.eq_ignore_ascii_case(&stop.reason))
    {
        why = format!("{why}: {d}");
    }
    let mut line = format!("stopped ({why})");
    if let Some(t) = stop.thread_id {
        line.push_str(&format!(" thread {t}"));
    }
    if let Some(p) = place {
        line.push_str(&format!(" in {p}"));
    }
    if let Some(text) = stop.text.as_deref().filter(|t| !t.is_empty()) {
        line.push_str(&format!(" — {}", cap_chars(text, 400)));
    }
    line
}

/// `   6 |     total = 0`
pub(in crate::ops) fn quoted(line: u64, text: &str) -> String {
    format!("{line:>5} | {text}")
}

/// A breakpoint as the adapter answered it, where the model reads it.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct BreakpointLine {
    pub requested: u32,
    pub line: Option<u32>,
    pub verified: bool,
    #[serde(flatten)]
    pub kind: crate::breakpoint::BreakpointKind,
    #[serde(skip)]
    pub file: String,
    /// The file the adapter moved it to, when not the one asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_file: Option<String>,
    /// The asked file's line count, when the adapter moved the breakpoint
    /// past its end without naming a file.
    #[serde(skip)]
    pub past_end: Option<u32>,
    #[serde(skip)]
    pub message: Option<String>,
    /// The source text at the line it ended up on.
    #[serde(skip)]
    pub source: Option<String>,
}

impl BreakpointLine {
    /// `avg.py:6 moved to line 7 verified, if `i == 3`  | source`, or
    /// `… pending (why)` while the adapter has not placed it.
    pub(in crate::ops) fn text(&self) -> String {
        let mut s = format!("{}:{}", self.file, self.requested);
        match (&self.moved_file, self.line) {
            (Some(f), Some(at)) => s.push_str(&format!(" moved to {f}:{at}")),
            (Some(f), None) => s.push_str(&format!(" moved to {f}")),
            (None, Some(at)) if at != self.requested => {
                s.push_str(&format!(" moved to line {at}"));
            }
            _ => {}
        }
        s.push_str(if self.verified {
            " verified"
        } else {
            " pending"
        });
        if let Some(n) = self.past_end {
            s.push_str(&format!(
                " — past the end of {} ({n} lines): the adapter put it in other code \
                 without naming the file; put it on a line that has code",
                self.file
            ));
        }
        if let Some(m) = self.message.as_deref().filter(|m| !m.is_empty()) {
            s.push_str(&format!(" ({m})"));
        }
        s.push_str(&self.kind.words());
        if let Some(src) = &self.source {
            s.push_str(&format!("  | {}", src.trim()));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::BreakpointLine;

    fn line(requested: u32, at: Option<u32>, moved_file: Option<&str>) -> String {
        BreakpointLine {
            requested,
            line: at,
            verified: true,
            kind: Default::default(),
            file: "src/main.rs".into(),
            moved_file: moved_file.map(String::from),
            past_end: (at == Some(317) && moved_file.is_none()).then_some(15),
            message: None,
            source: None,
        }
        .text()
    }

    #[test]
    fn a_breakpoint_moved_into_another_file_names_that_file() {
        assert_eq!(line(9, Some(9), None), "src/main.rs:9 verified");
        assert_eq!(
            line(9, Some(11), None),
            "src/main.rs:9 moved to line 11 verified"
        );
        assert_eq!(
            line(9, Some(317), None),
            "src/main.rs:9 moved to line 317 verified — past the end of src/main.rs (15 lines): the adapter put it in other code without naming the file; put it on a line that has code"
        );
        assert_eq!(
            line(9, Some(317), Some("/rustc/library/core/src/fmt/mod.rs")),
            "src/main.rs:9 moved to /rustc/library/core/src/fmt/mod.rs:317 verified"
        );
    }
}
