//! Results of `adapters`, `status`, `breakpoints` and `output`.

use super::{stop_headline, Answer, BreakpointLine, OUTPUT_PER_CALL};
use crate::catalog::ExceptionFilter;
use crate::format::{self, output_tail};
use crate::session::StopInfo;
use serde::Serialize;
use std::time::Duration;
use tool_core::format::plural;

/// `adapters`: one line per adapter, and its exception filters under it.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct AdaptersResult {
    pub usable: Vec<String>,
    #[serde(skip)]
    pub lines: Vec<String>,
    /// Per adapter of `lines`, in the same order.
    pub exception_filters: Vec<AdapterFilters>,
    /// Project entries not used because the workspace is not trusted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set_aside: Vec<String>,
}

/// An adapter's exception breakpoint filters, and where they are known from.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct AdapterFilters {
    pub adapter: String,
    /// `true`: announced by the adapter when it started in this run;
    /// `false`: the catalog's, as the adapter announced them when tested.
    pub announced: bool,
    pub filters: Vec<ExceptionFilter>,
}

impl AdapterFilters {
    /// `  exception filters (as …): raised, uncaught (on by default)`, or
    /// nothing for an adapter without any known.
    fn text(&self) -> Option<String> {
        if self.filters.is_empty() {
            return (self.announced)
                .then(|| "  exception filters: none (the adapter announced none)".to_string());
        }
        let list: Vec<String> = self
            .filters
            .iter()
            .map(|f| {
                if f.default {
                    format!("{} (on by default)", f.id)
                } else {
                    f.id.clone()
                }
            })
            .collect();
        let source = if self.announced {
            "as the adapter announced when it started in this run"
        } else {
            "as the adapter announced when tested"
        };
        Some(format!(
            "  exception filters ({source}): {}",
            list.join(", ")
        ))
    }
}

impl Answer for AdaptersResult {
    fn text(&self) -> String {
        let mut out = vec!["debug adapters  (root markers looked for in the workspace root; a launched program's own folder is checked up to the root)".to_string()];
        for (line, filters) in self.lines.iter().zip(&self.exception_filters) {
            out.push(line.clone());
            out.extend(filters.text());
        }
        out.extend(self.set_aside.iter().cloned());
        out.push(
            "choose exception filters with exception_breakpoints (before or after launch)".into(),
        );
        out.join("\n")
    }
}

/// A live or ended session as `status` describes it.
#[derive(Debug)]
pub(in crate::ops) struct SessionSummary {
    pub label: String,
    pub adapter: String,
    pub age: Duration,
    /// `None` once ended.
    pub ttl_left: Option<Duration>,
    pub detail: StatusDetail,
}

#[derive(Debug)]
pub(in crate::ops) enum StatusDetail {
    Starting,
    Running,
    Stopped(StopInfo),
    Ended(String),
}

/// `status`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct StatusResult {
    pub state: &'static str,
    pub breakpoints: usize,
    /// Relative file and its lines.
    #[serde(skip)]
    pub set: Vec<(String, Vec<u32>)>,
    #[serde(skip)]
    pub session: Option<SessionSummary>,
    /// The adapter's exception filters, each with whether it is on (in a
    /// session only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exception_filters: Vec<(String, bool)>,
    /// Before a start: each adapter's known filters.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub adapters_filters: Vec<AdapterFilters>,
    /// The filters the model chose (`None`: each adapter's defaults).
    #[serde(skip)]
    pub chosen_filters: Option<Vec<String>>,
    /// Function breakpoints, the model's and the defaults.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<String>,
    /// Before a start: project adapters not used because the workspace is
    /// not trusted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set_aside: Vec<String>,
}

impl Answer for StatusResult {
    fn text(&self) -> String {
        let mut bp_note = format!(
            "{} set",
            plural(self.breakpoints, "breakpoint", "breakpoints")
        );
        if self.breakpoints > 0 {
            let files: Vec<String> = self
                .set
                .iter()
                .map(|(f, l)| {
                    let lines: Vec<String> = l.iter().map(u32::to_string).collect();
                    format!("{f}:{}", lines.join(","))
                })
                .collect();
            bp_note.push_str(&format!(" ({})", files.join(" ")));
        }
        let Some(s) = &self.session else {
            let mut out = vec![
                format!("debug status  no session; {bp_note}"),
                "launch a program to start one".to_string(),
            ];
            if !self.functions.is_empty() {
                out.push(format!(
                    "function breakpoints: {}",
                    self.functions.join(", ")
                ));
            }
            if let Some(chosen) = &self.chosen_filters {
                out.push(format!(
                    "exception filters chosen: {}",
                    if chosen.is_empty() {
                        "none (stop on no exception)".to_string()
                    } else {
                        chosen.join(", ")
                    }
                ));
            }
            out.extend(self.adapters_filters.iter().filter_map(|a| {
                a.text()
                    .map(|t| format!("{}: {}", a.adapter, t.trim_start()))
            }));
            out.extend(self.set_aside.iter().cloned());
            return out.join("\n");
        };
        let ttl = s
            .ttl_left
            .map(|t| format!(", {} of its TTL left", format::duration(t)))
            .unwrap_or_default();
        let mut out = vec![format!(
            "debug status  {} under {} (launched {} ago{ttl})",
            s.label,
            s.adapter,
            format::duration(s.age),
        )];
        match &s.detail {
            StatusDetail::Starting => out.push("starting".into()),
            StatusDetail::Running => {
                out.push(
                    "running; call pause to stop it, or continue waiting with continue".into(),
                );
            }
            StatusDetail::Stopped(stop) => {
                out.push(stop_headline(stop, None));
                out.push("call stack for where, or continue / step_over".into());
            }
            StatusDetail::Ended(why) => out.push(format!("ended: {why}")),
        }
        out.push(bp_note);
        if !self.functions.is_empty() {
            out.push(format!(
                "function breakpoints: {}",
                self.functions.join(", ")
            ));
        }
        if !self.exception_filters.is_empty() {
            let filters: Vec<String> = self
                .exception_filters
                .iter()
                .map(|(id, on)| format!("{id} ({})", if *on { "on" } else { "off" }))
                .collect();
            out.push(format!(
                "exception filters: {} (change with exception_breakpoints)",
                filters.join(", ")
            ));
        }
        out.join("\n")
    }
}

/// `breakpoints` before a session: what was remembered.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct BreakpointsKept {
    pub file: String,
    pub lines: Vec<crate::breakpoint::LineBreakpoint>,
    pub sent: bool,
    /// Each line's source text (`None` past the end of the file).
    #[serde(skip)]
    pub sources: Vec<Option<String>>,
}

impl Answer for BreakpointsKept {
    fn text(&self) -> String {
        let rel = &self.file;
        let mut out = vec![format!("debug breakpoints  {rel}")];
        if self.lines.is_empty() {
            out.push(format!("cleared every breakpoint in {rel}"));
            return out.join("\n");
        }
        for (l, src) in self.lines.iter().zip(&self.sources) {
            let src = src.as_ref().map_or_else(
                || "  (past the end of the file)".into(),
                |t| format!("  | {}", t.trim()),
            );
            out.push(format!("{rel}:{} set{}{src}", l.line, l.kind.words()));
        }
        out.push("no session yet: they are sent to the adapter at launch".into());
        out.join("\n")
    }
}

/// `breakpoints` in a live session: the adapter's answer.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct BreakpointsSent {
    pub file: String,
    pub sent: bool,
    pub breakpoints: Vec<BreakpointLine>,
}

impl Answer for BreakpointsSent {
    fn text(&self) -> String {
        let mut out = vec![format!("debug breakpoints  {}", self.file)];
        if self.breakpoints.is_empty() {
            out.push(format!("cleared every breakpoint in {}", self.file));
        }
        out.extend(self.breakpoints.iter().map(BreakpointLine::text));
        out.join("\n")
    }
}

/// `output`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct OutputResult {
    pub text: String,
    pub cursor: u64,
    pub dropped: u64,
    #[serde(skip)]
    pub label: String,
    #[serde(skip)]
    pub ended: Option<String>,
}

impl Answer for OutputResult {
    fn text(&self) -> String {
        let mut out = vec![format!("debug output  {}", self.label)];
        if self.dropped > 0 {
            out.push(format!(
                "… {} bytes were dropped before this (the buffer keeps the latest 256 KiB)",
                self.dropped
            ));
        }
        if self.text.is_empty() {
            out.push("(no new output since the last call)".into());
        } else {
            out.push(output_tail(
                self.text.trim_end_matches('\n'),
                OUTPUT_PER_CALL,
            ));
        }
        if let Some(why) = &self.ended {
            out.push(format!("(session ended: {why})"));
        }
        out.join("\n")
    }
}
