//! Results of `function_breakpoints` and `exception_breakpoints`.

use super::Answer;
use serde::Serialize;

/// A function breakpoint as the model reads it.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct FunctionLine {
    pub name: String,
    #[serde(flatten)]
    pub kind: crate::breakpoint::BreakpointKind,
    /// `None` before launch (kept, not sent).
    pub verified: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `function_breakpoints`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct FunctionBreakpointsResult {
    pub functions: Vec<FunctionLine>,
    pub sent: bool,
    /// Set by default besides these (Rust: `rust_panic`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub defaults: Vec<String>,
}

impl Answer for FunctionBreakpointsResult {
    fn text(&self) -> String {
        let mut out = vec![format!(
            "debug function_breakpoints  {}",
            match (self.functions.len(), self.sent) {
                (0, _) => "cleared".to_string(),
                (n, true) => format!("{n} set"),
                (n, false) => format!("{n} kept; sent when a program is launched"),
            }
        )];
        for f in &self.functions {
            let state = match f.verified {
                None => "",
                Some(true) => " verified",
                Some(false) => " pending",
            };
            let why = f
                .message
                .as_deref()
                .filter(|m| !m.is_empty())
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            out.push(format!("{}{state}{why}{}", f.name, f.kind.words()));
        }
        if !self.defaults.is_empty() {
            out.push(format!("also set by default: {}", self.defaults.join(", ")));
        }
        out.join("\n")
    }
}

#[derive(Debug, Serialize)]
pub(in crate::ops) struct FilterLine {
    pub id: String,
    pub label: String,
    pub on: bool,
}

/// `exception_breakpoints`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct ExceptionFiltersResult {
    pub enabled: Vec<String>,
    pub sent: bool,
    /// The adapter's filters (known in a session only).
    pub available: Vec<FilterLine>,
}

impl Answer for ExceptionFiltersResult {
    fn text(&self) -> String {
        let enabled = if self.enabled.is_empty() {
            "none (no exception stops the program)".to_string()
        } else {
            self.enabled.join(", ")
        };
        let mut out = vec![format!(
            "debug exception_breakpoints  {enabled}{}",
            if self.sent {
                ""
            } else {
                "; kept, checked and sent when a program is launched"
            }
        )];
        for f in &self.available {
            out.push(format!(
                "[{}] {}  {}",
                if f.on { "x" } else { " " },
                f.id,
                f.label
            ));
        }
        out.join("\n")
    }
}
