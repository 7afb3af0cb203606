//! Results of `threads`, `stack`, `scopes`, `variables` and `evaluate`.

use super::{quoted, Answer};
use serde::Serialize;
use tool_core::format::{capped_note, plural};

#[derive(Debug, Serialize)]
pub(in crate::ops) struct ThreadEntry {
    pub id: u64,
    /// As the adapter names it.
    pub name: String,
    /// delve: the goroutine this thread id stands for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goroutine: Option<u64>,
    /// delve: the OS thread the goroutine runs on, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub os_thread: Option<u64>,
    /// delve: `function at file:line` of its first frame in the workspace
    /// (its top frame when none is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
    /// Whether `place` is in the workspace's code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_code: Option<bool>,
    /// The function it is in now, when `place` is further out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub now_in: Option<String>,
}

impl ThreadEntry {
    /// `goroutine 3  main.worker at main.go:8  (now in runtime.gopark)`,
    /// or the adapter's name.
    fn described(&self, stopped_here: bool) -> String {
        let mut notes = Vec::new();
        if stopped_here {
            notes.push("stopped here".to_string());
        }
        let line = match (self.goroutine, &self.place) {
            (Some(g), Some(place)) => {
                if let Some(f) = &self.now_in {
                    notes.push(format!("now in {f}"));
                }
                if self.user_code == Some(false) {
                    notes.push("runtime or library code only".into());
                }
                format!("goroutine {g}  {place}")
            }
            _ => self.name.clone(),
        };
        if let (Some(_), Some(t)) = (self.goroutine, self.os_thread) {
            notes.push(format!("on OS thread {t}"));
        }
        if notes.is_empty() {
            line
        } else {
            format!("{line}  ({})", notes.join("; "))
        }
    }
}

/// `threads`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct ThreadsResult {
    pub threads: Vec<ThreadEntry>,
    #[serde(skip)]
    pub stopped: Option<u64>,
    /// While running, the adapter listed only placeholders (delve's -1):
    /// its id.
    #[serde(skip)]
    pub placeholders: Option<String>,
    /// delve: the threads are goroutines.
    #[serde(skip)]
    pub goroutines: bool,
}

impl Answer for ThreadsResult {
    fn text(&self) -> String {
        if self.threads.is_empty() {
            if let Some(adapter) = &self.placeholders {
                return format!(
                    "debug threads  none listed while the program runs: the {adapter} adapter lists only a placeholder (thread -1) then; call pause, then threads"
                );
            }
        }
        let mut out = vec![if self.goroutines {
            format!(
                "debug threads  {} (delve lists each goroutine as a thread; pass the id on the left as thread_id)",
                plural(self.threads.len(), "goroutine", "goroutines")
            )
        } else {
            format!(
                "debug threads  {}",
                plural(self.threads.len(), "thread", "threads")
            )
        }];
        for t in &self.threads {
            out.push(format!(
                "{:>6}  {}",
                t.id,
                t.described(Some(t.id) == self.stopped)
            ));
        }
        out.join("\n")
    }
}

#[derive(Debug, Serialize)]
pub(in crate::ops) struct FrameEntry {
    pub frame_id: u64,
    pub function: String,
    pub file: Option<String>,
    pub line: Option<u64>,
    #[serde(skip)]
    pub place: String,
    #[serde(skip)]
    pub source: Option<String>,
}

/// `stack`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct StackResult {
    pub thread_id: u64,
    /// delve: the goroutine of the thread id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goroutine: Option<u64>,
    pub stop: u64,
    pub frames: Vec<FrameEntry>,
    #[serde(skip)]
    pub reason: String,
    /// Frames the adapter has, shown or not.
    #[serde(skip)]
    pub total: usize,
    #[serde(skip)]
    pub cap: usize,
}

impl Answer for StackResult {
    fn text(&self) -> String {
        let whose = match self.goroutine {
            Some(g) => format!("goroutine {g} (thread {})", self.thread_id),
            None => format!("thread {}", self.thread_id),
        };
        let mut out = vec![format!(
            "debug stack  {whose}, stop {} ({})",
            self.stop, self.reason
        )];
        for f in &self.frames {
            out.push(format!("frame {}  {}", f.frame_id, f.place));
            if let (Some(src), Some(l)) = (&f.source, f.line) {
                out.push(quoted(l, src));
            }
        }
        if self.total > self.cap {
            out.push(capped_note(
                self.cap,
                self.total,
                "the innermost frames are shown; the rest are callers further out",
            ));
        }
        out.push("pass a frame id to scopes or evaluate (valid until the program moves)".into());
        out.join("\n")
    }
}

#[derive(Debug, Serialize)]
pub(in crate::ops) struct ScopeEntry {
    pub name: String,
    pub reference: u64,
}

#[derive(Debug)]
pub(in crate::ops) struct ScopeLine {
    pub name: String,
    /// `None` for an empty scope.
    pub reference: Option<u64>,
    pub variables: Option<u64>,
    pub expensive: bool,
}

/// `scopes`: the structured answer lists the scopes that have a reference.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct ScopesResult {
    pub scopes: Vec<ScopeEntry>,
    #[serde(skip)]
    pub frame_id: u64,
    #[serde(skip)]
    pub lines: Vec<ScopeLine>,
}

impl Answer for ScopesResult {
    fn text(&self) -> String {
        let mut out = vec![format!("debug scopes  frame {}", self.frame_id)];
        for s in &self.lines {
            let Some(r) = s.reference else {
                out.push(format!("{}  (empty)", s.name));
                continue;
            };
            let count = s
                .variables
                .map(|n| format!(", {}", plural(n as usize, "variable", "variables")))
                .unwrap_or_default();
            let expensive = if s.expensive { ", expensive" } else { "" };
            out.push(format!("{}  reference {r}{count}{expensive}", s.name));
        }
        out.push("pass a reference to variables".into());
        out.join("\n")
    }
}

#[derive(Debug, Serialize)]
pub(in crate::ops) struct VariableEntry {
    pub name: String,
    pub value: String,
    #[serde(rename = "type")]
    pub type_: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<u64>,
    /// Where it lives, for read_memory (adapters give it for some values).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_reference: Option<String>,
}

impl VariableEntry {
    /// `xs (list) = [4, 8]  [reference 6]  [memory 0xc000012345]`
    pub(in crate::ops) fn text(&self) -> String {
        format!(
            "{}{} = {}{}{}",
            self.name,
            type_suffix(self.type_.as_deref()),
            self.value,
            reference_suffix(self.reference),
            self.memory_reference
                .as_deref()
                .map(|m| format!("  [memory {m}]"))
                .unwrap_or_default()
        )
    }
}

/// `(int)`, or nothing for an unknown or empty type.
fn type_suffix(ty: Option<&str>) -> String {
    ty.filter(|t| !t.is_empty())
        .map(|t| format!(" ({t})"))
        .unwrap_or_default()
}

/// `  [reference 7]`, or nothing.
fn reference_suffix(r: Option<u64>) -> String {
    r.map(|r| format!("  [reference {r}]")).unwrap_or_default()
}

/// A head line with the count, one line per variable, and the cap note
/// saying how to see the rest: what `variables` and `locals` answer.
fn variable_list(
    head: String,
    variables: &[VariableEntry],
    total: usize,
    cap: usize,
    narrow: &str,
) -> String {
    let mut out = vec![format!(
        "{head} ({})",
        plural(total, "variable", "variables")
    )];
    out.extend(variables.iter().map(VariableEntry::text));
    if total > cap {
        out.push(capped_note(cap, total, narrow));
    }
    out.join("\n")
}

/// `variables`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct VariablesResult {
    pub variables: Vec<VariableEntry>,
    pub total: usize,
    #[serde(skip)]
    pub reference: u64,
    #[serde(skip)]
    pub cap: usize,
}

impl Answer for VariablesResult {
    fn text(&self) -> String {
        variable_list(
            format!("debug variables  reference {}", self.reference),
            &self.variables,
            self.total,
            self.cap,
            "evaluate a narrower expression (an element, a field) to see the rest",
        )
    }
}

/// `locals`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct LocalsResult {
    pub variables: Vec<VariableEntry>,
    pub total: usize,
    /// `frame 3`, `top frame, mean at avg.py:6`
    #[serde(skip)]
    pub frame: String,
    #[serde(skip)]
    pub cap: usize,
}

impl Answer for LocalsResult {
    fn text(&self) -> String {
        variable_list(
            format!("debug locals  {}", self.frame),
            &self.variables,
            self.total,
            self.cap,
            "evaluate a name to see one that is not shown",
        )
    }
}

/// `evaluate`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct EvaluateResult {
    pub result: String,
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub reference: Option<u64>,
    #[serde(skip)]
    pub expression: String,
    /// `frame 3`, `top frame, mean at avg.py:6`
    #[serde(skip)]
    pub frame: String,
}

impl Answer for EvaluateResult {
    fn text(&self) -> String {
        format!(
            "debug evaluate  `{}` in {}\n{}{}{}",
            self.expression,
            self.frame,
            self.result,
            type_suffix(self.type_.as_deref()),
            reference_suffix(self.reference)
        )
    }
}

/// `set_variable`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct SetVariableResult {
    pub variable: VariableEntry,
    /// `reference 4`, `the locals of mean at avg.py:6`
    #[serde(skip)]
    pub place: String,
}

impl Answer for SetVariableResult {
    fn text(&self) -> String {
        format!(
            "debug set_variable  in {}\n{}",
            self.place,
            self.variable.text()
        )
    }
}
