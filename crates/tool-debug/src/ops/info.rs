//! The ops that report and remember: `adapters`, `status`, `breakpoints`
//! (which work without a session) and `output`.

use super::results::{
    AdapterFilters, AdaptersResult, BreakpointLine, BreakpointsKept, BreakpointsSent, OutputResult,
    SessionSummary, StatusDetail, StatusResult,
};
use super::{done, relative_to, OpContext};
use crate::args::DebugArgs;
use crate::catalog::Catalog;
use crate::format;
use crate::session::{BreakpointStatus, RunState};
use std::path::Path;
use tool_core::{ToolError, ToolOutput};

/// One adapter of the catalog: usable here, or why not.
struct AdapterCheck {
    id: String,
    usable: bool,
    line: String,
}

fn check_adapters(catalog: &Catalog, root: &Path) -> Vec<AdapterCheck> {
    catalog
        .specs()
        .iter()
        .map(|spec| match catalog.resolve(spec, root, root) {
            Ok(r) => {
                let mut line = format!(
                    "{:<8} usable: `{}` (marker {})",
                    spec.id,
                    r.command
                        .iter()
                        .map(|a| a.to_string_lossy())
                        .collect::<Vec<_>>()
                        .join(" "),
                    r.marker
                );
                for n in &r.notes {
                    line.push_str(&format!("; {n}"));
                }
                AdapterCheck {
                    id: spec.id.clone(),
                    usable: true,
                    line: relative_to(&line, root),
                }
            }
            Err(n) => AdapterCheck {
                id: spec.id.clone(),
                usable: false,
                line: format!("{:<8} not usable: {}", spec.id, n.why),
            },
        })
        .collect()
}

/// For `doctor`: a line per adapter of a language the checkout has files
/// of (usable here or not, and why), the others one line per reason, as
/// lsp's doctor groups its servers; with `all`, a line for every adapter.
pub(crate) fn adapter_lines(catalog: &Catalog, root: &Path, all: bool) -> Vec<String> {
    let present = tool_core::source_walk::first_file_per_name(root);
    let (mut usable, mut no_project, mut not_installed) = (Vec::new(), Vec::new(), Vec::new());
    let mut lines = Vec::new();
    for (spec, check) in catalog.specs().iter().zip(check_adapters(catalog, root)) {
        if all || has_files_of(spec, &present) {
            lines.push(check.line);
            continue;
        }
        let group = if check.usable {
            &mut usable
        } else if check.line.contains("not usable: no root marker") {
            // The binary was found; only the project is missing.
            &mut no_project
        } else {
            &mut not_installed
        };
        group.push(check.id);
    }
    let groups = [
        ("usable, no files of theirs here", usable),
        ("no project of theirs here", no_project),
        ("not installed, no files of theirs here", not_installed),
    ];
    let grouped = groups.iter().any(|(_, ids)| !ids.is_empty());
    for (why, ids) in groups {
        if !ids.is_empty() {
            lines.push(format!("debug — {why} ({}): {}", ids.len(), ids.join(", ")));
        }
    }
    if grouped {
        lines
            .push("debug — `agent-tools doctor --all` gives each of those a line, with why".into());
    }
    lines.extend(set_aside_lines(catalog, root));
    lines
}

/// Whether the checkout has a file the adapter debugs or a file that marks
/// its project (`present`: the first file of each `.ext` and each name).
fn has_files_of(
    spec: &crate::catalog::AdapterSpec,
    present: &std::collections::BTreeMap<String, std::path::PathBuf>,
) -> bool {
    let ext = |x: &str| present.contains_key(&format!(".{x}"));
    spec.extensions.iter().any(|x| ext(x))
        || spec.markers.iter().any(|m| match m.strip_prefix("*.") {
            Some(x) => ext(x),
            None => present.contains_key(m),
        })
}

/// The project entries set aside (untrusted workspace), one notice each.
fn set_aside_lines(catalog: &Catalog, root: &Path) -> Vec<String> {
    catalog
        .untrusted()
        .iter()
        .map(|u| relative_to(&u.notice(), root))
        .collect()
}

/// A breakpoint answer as the model reads it.
/// `shown`: a path as the model reads it (relative inside the workspace).
pub(super) fn breakpoint_line(
    rel: &str,
    file: &Path,
    b: &BreakpointStatus,
    shown: &dyn Fn(&Path) -> String,
) -> BreakpointLine {
    let at = b.line.unwrap_or(b.asked.line);
    // An event may name the asked file again: only another file is a move.
    let same = |p: &Path| {
        p == file
            || matches!(
                (std::fs::canonicalize(p), std::fs::canonicalize(file)),
                (Ok(a), Ok(b)) if a == b
            )
    };
    let moved_file = b.file.as_deref().filter(|p| !same(p));
    // A line past the file's end, with no file named: the adapter put it in
    // other code (lldb-vscode-14, a blank line of a Rust file → inlined std).
    let file_lines = std::fs::read_to_string(file)
        .map(|t| t.lines().count() as u32)
        .ok();
    let past_end = match (moved_file, b.line, file_lines) {
        (None, Some(at), Some(n)) if at > n => Some(n),
        _ => None,
    };
    BreakpointLine {
        requested: b.asked.line,
        kind: b.asked.kind.clone(),
        line: b.line,
        verified: b.verified,
        file: rel.to_string(),
        moved_file: moved_file.map(shown),
        past_end,
        message: b.message.clone(),
        source: match past_end {
            Some(_) => None,
            None => format::source_line(moved_file.unwrap_or(file), u64::from(at)),
        },
    }
}

impl OpContext<'_> {
    pub(super) async fn adapters(&self) -> Result<ToolOutput, ToolError> {
        let catalog = self.supervisor.catalog().clone();
        let root = self.workspace.root().to_path_buf();
        let checks = tokio::task::spawn_blocking(move || check_adapters(&catalog, &root))
            .await
            .map_err(|e| ToolError::failed(format!("checking adapters failed: {e}")))?;
        let exception_filters = self.adapters_filters();
        done(AdaptersResult {
            usable: checks
                .iter()
                .filter(|c| c.usable)
                .map(|c| c.id.clone())
                .collect(),
            lines: checks.into_iter().map(|c| c.line).collect(),
            exception_filters,
            set_aside: set_aside_lines(self.supervisor.catalog(), self.workspace.root()),
        })
    }

    /// Each catalog adapter's exception filters, as announced when it
    /// started here or else as the catalog knows them.
    fn adapters_filters(&self) -> Vec<AdapterFilters> {
        self.supervisor
            .catalog()
            .specs()
            .iter()
            .map(|spec| {
                let (filters, announced) = self.supervisor.exception_filters(spec);
                AdapterFilters {
                    adapter: spec.id.clone(),
                    announced,
                    filters,
                }
            })
            .collect()
    }

    pub(super) fn status(&self) -> Result<ToolOutput, ToolError> {
        let bps: usize = self.conversation.breakpoints.values().map(Vec::len).sum();
        let set = self
            .conversation
            .breakpoints
            .iter()
            .map(|(f, l)| (self.rel(f), l.iter().map(|b| b.line).collect()))
            .collect();
        let mut functions: Vec<String> = self
            .conversation
            .function_breakpoints
            .iter()
            .map(|f| f.name.clone())
            .collect();
        let Some(s) = &self.conversation.session else {
            return done(StatusResult {
                state: "none",
                breakpoints: bps,
                set,
                session: None,
                exception_filters: Vec::new(),
                adapters_filters: self.adapters_filters(),
                chosen_filters: self.conversation.exception_filters.clone(),
                functions,
                set_aside: set_aside_lines(self.supervisor.catalog(), self.workspace.root()),
            });
        };
        functions.extend(
            s.default_functions()
                .iter()
                .map(|d| format!("{d} (default)")),
        );
        let exception_filters = s
            .exception_filters()
            .into_iter()
            .map(|f| {
                let on = match &self.conversation.exception_filters {
                    Some(asked) => asked.contains(&f.id),
                    None => f.default,
                };
                (f.id, on)
            })
            .collect();
        let (state, detail) = match s.snapshot().state {
            RunState::Starting => ("starting", StatusDetail::Starting),
            RunState::Running | RunState::Exiting { .. } => ("running", StatusDetail::Running),
            RunState::Stopped(stop) => ("stopped", StatusDetail::Stopped(stop)),
            RunState::Ended(e) => ("ended", StatusDetail::Ended(e.describe())),
        };
        let ended = matches!(detail, StatusDetail::Ended(_));
        done(StatusResult {
            state,
            breakpoints: bps,
            set,
            session: Some(SessionSummary {
                label: s.label().to_string(),
                adapter: s.adapter_id().to_string(),
                age: s.age(),
                ttl_left: (!ended).then(|| s.ttl_left()),
                detail,
            }),
            exception_filters,
            adapters_filters: Vec::new(),
            chosen_filters: None,
            functions,
            set_aside: Vec::new(),
        })
    }

    pub(super) async fn breakpoints(&mut self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let file = args.file.as_deref().ok_or_else(|| {
            ToolError::bad_args("breakpoints needs `file` (relative to the workspace root) and `lines` (1-based; [] clears the file)")
        })?;
        let lines = args.lines.clone().ok_or_else(|| {
            ToolError::bad_args(
                "breakpoints needs `lines`: 1-based line numbers, or [] to clear the file",
            )
        })?;
        let path = self.workspace.resolve_existing(file)?;
        if !path.is_file() {
            return Err(ToolError::bad_args(format!(
                "`{file}` is not a file; breakpoints go in source files"
            )));
        }
        if lines.iter().any(|l| l.line == 0) {
            return Err(ToolError::bad_args(
                "line 0 is not a line: lines are 1-based",
            ));
        }
        for b in &lines {
            b.kind
                .check(&format!("the breakpoint at line {}", b.line))
                .map_err(ToolError::bad_args)?;
        }
        let mut lines = lines;
        lines.sort_by_key(|b| b.line);
        lines.dedup();
        if let Some(w) = lines.windows(2).find(|w| w[0].line == w[1].line) {
            return Err(ToolError::bad_args(format!(
                "line {} is given twice, with different conditions; give each line once",
                w[0].line
            )));
        }
        let rel = self.rel(&path);
        let session = self.live().ok();
        // Sent first: a kind the adapter refuses changes nothing.
        let statuses = match &session {
            Some(s) => Some(s.set_breakpoints(&path, &lines).await?),
            None => None,
        };
        if lines.is_empty() {
            self.conversation.breakpoints.remove(&path);
        } else {
            self.conversation
                .breakpoints
                .insert(path.clone(), lines.clone());
        }
        match statuses {
            None => done(BreakpointsKept {
                sources: lines
                    .iter()
                    .map(|l| format::source_line(&path, u64::from(l.line)))
                    .collect(),
                file: rel,
                lines,
                sent: false,
            }),
            Some(statuses) => done(BreakpointsSent {
                breakpoints: statuses
                    .iter()
                    .map(|b| breakpoint_line(&rel, &path, b, &|p| self.rel(p)))
                    .collect(),
                file: rel,
                sent: true,
            }),
        }
    }

    pub(super) fn output(&self) -> Result<ToolOutput, ToolError> {
        let Some(s) = &self.conversation.session else {
            return Err(ToolError::refused(
                "no debug session has run in this conversation; launch a program first",
            ));
        };
        let chunk = s.take_new_output();
        let ended = match s.snapshot().state {
            RunState::Ended(e) => Some(e.describe()),
            _ => None,
        };
        done(OutputResult {
            text: chunk.text,
            cursor: chunk.cursor,
            dropped: chunk.dropped,
            label: s.label().to_string(),
            ended,
        })
    }
}
