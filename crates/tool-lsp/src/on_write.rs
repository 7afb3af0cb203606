//! Diagnostics on write: a decorator around any tool that writes files.
//!
//! After the inner tool succeeds, each file it touched is synced into its
//! language server (a new version, then didSave), the diagnostics of that
//! version are awaited (bounded), and only the ones the run's ledger has not
//! seen are folded into the tool's result. The agent learns it broke the
//! build when it broke it, without having to ask.
//!
//! The inner tool runs first: a call it refuses (bad path, a FIFO, a file
//! too large, an `old_string` not found) returns at once and never starts or
//! waits for a language server. The baseline of a file the run has not
//! written before is the text read just before the call, sent to the server
//! after the write succeeded.

use crate::client::{file_uri, OpenDoc};
use crate::diagnostics::{self, DiagLine, DiagnosticLedger, NotReady};
use crate::supervisor::LspSupervisor;
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tool_core::{async_trait, CallContext, Tool, ToolError, ToolOutput, ToolSpec};

/// Names the files a call of the wrapped tool writes, from its arguments
/// (paths as the model gave them, relative to the workspace root).
pub type TouchedPaths = Arc<dyn Fn(&Value) -> Vec<String> + Send + Sync>;

/// How much the wrapper reports.
#[derive(Debug, Clone, Copy)]
pub struct ReportLimits {
    pub per_file: usize,
    /// More new problems than this in one file collapse to a summary line.
    pub flood: usize,
}

impl Default for ReportLimits {
    fn default() -> Self {
        ReportLimits {
            per_file: 20,
            flood: 100,
        }
    }
}

/// What the run has been told so far; shared by every wrapped tool.
#[derive(Default)]
pub struct RunLedger {
    pub(crate) ledger: Mutex<DiagnosticLedger>,
    /// "cannot check" reasons already said once.
    said: Mutex<HashSet<String>>,
    /// Diagnostics that arrived after their write's bound ran out, not yet
    /// told: the next result of any wrapped tool carries them.
    late: Mutex<Vec<String>>,
}

impl RunLedger {
    /// Whether a standing "cannot check" reason is said for the first time
    /// in this run (it is then remembered).
    pub(crate) fn first_time(&self, why: &str) -> bool {
        self.said.lock().expect("said").insert(why.to_string())
    }

    fn take_late(&self) -> Vec<String> {
        std::mem::take(&mut *self.late.lock().expect("late"))
    }
}

/// How long diagnostics still pending after a write's bound are waited for
/// in the background.
pub const LATE_BOUND: Duration = Duration::from_secs(120);

/// What a check of one written file found.
struct Checked {
    /// Errors and warnings, in the file's current text.
    diags: Vec<DiagLine>,
    /// The 0-based lines the write changed (first, last), in the new text.
    changed: Option<(u32, u32)>,
}

/// Why a check of one written file has no answer.
enum Unchecked {
    /// The bound ran out; the wait goes on in the background.
    Pending(String),
    Failed(String),
}

/// A write tool whose successful calls report newly introduced diagnostics.
pub struct DiagnosticsOnWrite {
    inner: Arc<dyn Tool>,
    sup: Arc<LspSupervisor>,
    ledger: Arc<RunLedger>,
    touched: TouchedPaths,
    limits: ReportLimits,
}

impl DiagnosticsOnWrite {
    pub fn new(
        inner: Arc<dyn Tool>,
        sup: Arc<LspSupervisor>,
        ledger: Arc<RunLedger>,
        touched: TouchedPaths,
    ) -> Self {
        DiagnosticsOnWrite {
            inner,
            sup,
            ledger,
            touched,
            limits: ReportLimits::default(),
        }
    }

    pub fn with_limits(mut self, limits: ReportLimits) -> Self {
        self.limits = limits;
        self
    }

    fn paths(&self, args: &Value) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = (self.touched)(args)
            .iter()
            .filter_map(|p| self.sup.workspace().resolve(p).ok())
            .filter(|p| self.sup.catalog().for_file(p).is_some())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The file's diagnostics: of `text` when given (the baseline, the
    /// content before the write), else of the file on disk (after it, saved).
    async fn current(&self, path: &Path, text: Option<String>) -> Result<Checked, Unchecked> {
        let target = self
            .sup
            .target_for(path)
            .await
            .map_err(|e| Unchecked::Failed(e.to_string()))?;
        let client = &target.client;
        let save = text.is_none();
        // Not for the baseline: the file on disk is already the written one,
        // and sending it before the old text costs the server two versions.
        if save {
            client.resync_open().await;
        }
        let uri = file_uri(path);
        let before = client.doc(&uri).await.map(|d| d.text);
        let doc = match text {
            Some(text) => client.sync_text(path, &target.language_id, text).await,
            None => client
                .sync_file(path, &target.language_id)
                .await
                .map_err(|e| Unchecked::Failed(format!("cannot read it: {e}")))?,
        };
        let saved = Instant::now();
        if save {
            client.did_save(&uri, &doc.text);
        }
        let check = if save {
            target.slot.entry.save_check_progress.clone()
        } else {
            None
        };
        let bound = self.sup.timeouts.diagnostics;
        match settled(client, &uri, &doc, check.as_deref(), saved, bound).await {
            Ok(diags) => Ok(Checked {
                diags: problems(&self.sup.rel(path), &diags, &doc, client.encoding),
                changed: before.map(|b| changed_lines(&b, &doc.text)),
            }),
            Err(NotReady::Timeout(after)) => {
                let server = target.slot.entry.id.clone();
                if save {
                    self.wait_late(target.client.clone(), path, doc, check, saved, before);
                }
                Err(Unchecked::Pending(format!(
                    "diagnostics still pending for {} after {} ms ({server} is still working); they will come with a later result",
                    self.sup.rel(path),
                    after.as_millis()
                )))
            }
            Err(NotReady::Request(r)) => Err(Unchecked::Failed(r.to_string())),
        }
    }

    /// Go on waiting for a write's diagnostics in the background; when they
    /// come, fold them into the ledger and queue what is new for the next
    /// result. Dropped when the file was written again meanwhile.
    fn wait_late(
        &self,
        client: Arc<crate::client::LspClient>,
        path: &Path,
        doc: OpenDoc,
        check: Option<String>,
        saved: Instant,
        before: Option<String>,
    ) {
        let ledger = self.ledger.clone();
        let shown = self.sup.rel(path);
        let path = path.to_path_buf();
        let limits = self.limits;
        tokio::spawn(async move {
            let uri = file_uri(&path);
            let Ok(diags) = settled(&client, &uri, &doc, check.as_deref(), saved, LATE_BOUND).await
            else {
                return;
            };
            if client.doc(&uri).await.map(|d| d.version) != Some(doc.version) {
                return; // written again: that write's check tells
            }
            let lines = problems(&shown, &diags, &doc, client.encoding);
            let changed = before.map(|b| changed_lines(&b, &doc.text));
            let after = saved.elapsed().as_secs_f64();
            let mut new = ledger.ledger.lock().expect("ledger").fold(&path, &lines);
            nearest_first(&mut new, changed);
            let mut text = format!(
                "lsp: late diagnostics from your write to {shown}, {after:.1} s after it: "
            );
            if new.is_empty() {
                text.push_str("no new errors or warnings");
            } else {
                text.push_str(&tool_core::format::plural(
                    new.len(),
                    "new problem",
                    "new problems",
                ));
                text.push(':');
                for l in diagnostics::render_capped(&shown, &new, limits.per_file, limits.flood) {
                    text.push('\n');
                    text.push_str(&l);
                }
            }
            ledger.late.lock().expect("late").push(text);
        });
    }

    /// The report for one touched file, or `None` when there is nothing to
    /// say. `no_baseline`: its state before the write could not be had.
    async fn report(&self, path: &Path, no_baseline: bool) -> (Option<String>, Vec<DiagLine>) {
        let shown = self.sup.rel(path);
        if !path.exists() {
            if let Ok(t) = self.sup.target_for(path).await {
                t.client.close(&file_uri(path)).await;
            }
            return (None, Vec::new());
        }
        match self.current(path, None).await {
            Ok(checked) => {
                let mut new = self
                    .ledger
                    .ledger
                    .lock()
                    .expect("ledger")
                    .fold(path, &checked.diags);
                if no_baseline && !checked.diags.is_empty() {
                    return (
                        Some(format!(
                            "lsp: no baseline for {shown}: {} after the write, not known which are new — run `lsp` op `diagnostics` on it to see them",
                            tool_core::format::plural(checked.diags.len(), "diagnostic", "diagnostics")
                        )),
                        Vec::new(),
                    );
                }
                if new.is_empty() {
                    return (
                        Some(format!("lsp: no new errors or warnings in {shown}")),
                        new,
                    );
                }
                nearest_first(&mut new, checked.changed);
                let mut lines = vec![format!(
                    "lsp: {} in {shown} after this write:",
                    tool_core::format::plural(new.len(), "new problem", "new problems")
                )];
                lines.extend(diagnostics::render_capped(
                    &shown,
                    &new,
                    self.limits.per_file,
                    self.limits.flood,
                ));
                (Some(lines.join("\n")), new)
            }
            Err(Unchecked::Pending(why)) => (Some(format!("lsp: {why}")), Vec::new()),
            Err(Unchecked::Failed(why)) => {
                // Say a standing reason (no server here) once per run, a
                // passing one every time.
                let standing = why.contains("not available here");
                if standing && !self.ledger.first_time(&why) {
                    return (None, Vec::new());
                }
                (Some(format!("lsp: {shown} not checked: {why}")), Vec::new())
            }
        }
    }
}

/// Fresh diagnostics of `doc`, and after a save with a save-time check
/// (`check`: its progress token prefix), the state once that check ended.
async fn settled(
    client: &crate::client::LspClient,
    uri: &str,
    doc: &OpenDoc,
    check: Option<&str>,
    saved: Instant,
    bound: Duration,
) -> Result<Vec<lsp_types::Diagnostic>, NotReady> {
    let deadline = tokio::time::Instant::from_std(saved + bound);
    let fresh = diagnostics::fresh(client, uri, doc, bound).await?;
    let Some(prefix) = check else {
        return Ok(fresh.diagnostics);
    };
    diagnostics::save_check_done(client, prefix, saved, deadline).await?;
    Ok(match client.published(uri) {
        Some(p) if p.version.is_none_or(|v| v >= doc.version) => p.diagnostics,
        _ => fresh.diagnostics,
    })
}

/// Errors and warnings of `doc`, as the model reads them.
pub(crate) fn problems(
    shown: &str,
    diags: &[lsp_types::Diagnostic],
    doc: &OpenDoc,
    enc: crate::PositionEncoding,
) -> Vec<DiagLine> {
    diags
        .iter()
        .filter(|d| diagnostics::is_problem(d))
        .map(|d| DiagLine::from_lsp(shown, d, Some(&doc.text), enc))
        .collect()
}

/// The 1-based lines of `after` that differ from `before` (first, last),
/// by their common leading and trailing lines.
pub fn changed_lines(before: &str, after: &str) -> (u32, u32) {
    let b: Vec<&str> = before.lines().collect();
    let a: Vec<&str> = after.lines().collect();
    let head = b.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let tail = b[head..]
        .iter()
        .rev()
        .zip(a[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let first = head as u32 + 1;
    let last = (a.len() - tail).max(head + 1) as u32;
    (first, last)
}

/// Order new problems by their distance to the changed lines, so the ones
/// the write caused come before any cap. Ties keep line order.
pub fn nearest_first(new: &mut [DiagLine], changed: Option<(u32, u32)>) {
    let Some((first, last)) = changed else { return };
    new.sort_by_key(|d| {
        let distance = if d.line < first {
            first - d.line
        } else {
            d.line.saturating_sub(last)
        };
        (distance, d.line, d.col)
    });
}

#[async_trait]
impl Tool for DiagnosticsOnWrite {
    fn spec(&self) -> ToolSpec {
        let mut spec = self.inner.spec();
        spec.description.push_str(
            "\nAfter a successful call, errors and warnings the language server newly reports for the written files are appended.",
        );
        spec
    }

    fn describe_call(&self, args: &Value) -> String {
        self.inner.describe_call(args)
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let paths = self.paths(&args);
        // The state before the run's first write to a file is its baseline,
        // so errors it already had are not blamed on this write. Its text is
        // read now (no server involved); `None`: it did not exist.
        let mut unknown: Vec<(PathBuf, Option<String>)> = Vec::new();
        for p in &paths {
            let known = self.ledger.ledger.lock().expect("ledger").knows(p);
            if !known {
                match crate::client::read_document(self.sup.workspace(), p) {
                    Ok(text) => unknown.push((p.clone(), Some(text))),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        unknown.push((p.clone(), None))
                    }
                    // Unreadable: the inner tool says why, or no baseline.
                    Err(_) => {}
                }
            }
        }
        // The inner tool first: a refused call returns before any server is
        // started or waited for.
        let mut out = self.inner.call(cx, args).await?;
        for late in self.ledger.take_late() {
            out.push_text(late);
        }
        let mut no_baseline = HashSet::new();
        for (p, before) in unknown {
            let baseline = match before {
                None => Some(Vec::new()),
                Some(text) => self.current(&p, Some(text)).await.ok().map(|c| c.diags),
            };
            match baseline {
                Some(b) => self.ledger.ledger.lock().expect("ledger").baseline(&p, &b),
                None => {
                    no_baseline.insert(p);
                }
            }
        }
        let mut all_new = Vec::new();
        for p in &paths {
            let (text, new) = self.report(p, no_baseline.contains(p)).await;
            if let Some(t) = text {
                out.push_text(t);
            }
            all_new.extend(new);
        }
        if let Some(Value::Object(obj)) = out.structured.as_mut() {
            obj.insert(
                "new_diagnostics".into(),
                Value::Array(all_new.iter().map(|d| Value::String(d.render())).collect()),
            );
        }
        Ok(out)
    }
}

/// The paths a `write` or `edit` call names (`path`, or `file_path`/`file`).
pub fn path_argument(args: &Value) -> Vec<String> {
    ["path", "file_path", "file"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
        .map(|p| vec![p.to_string()])
        .unwrap_or_default()
}

/// The paths an `apply_patch` call names: `*** Add/Update/Delete File:`,
/// `*** Move to:` (the Codex patch format) and `+++ b/` (unified diffs).
pub fn patch_paths(args: &Value) -> Vec<String> {
    let text = ["patch", "input", "diff"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
        .unwrap_or("");
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim_end();
        for prefix in [
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move to: ",
            "+++ b/",
            "+++ ",
        ] {
            if let Some(p) = l.strip_prefix(prefix) {
                let p = p.split('\t').next().unwrap_or(p).trim();
                if p != "/dev/null" && !p.is_empty() {
                    out.push(p.to_string());
                }
                break;
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// How long the wrapper waits, for messages.
pub fn wait_bound(sup: &LspSupervisor) -> Duration {
    sup.timeouts.diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn touched_paths_come_from_the_arguments() {
        assert_eq!(
            path_argument(&json!({"path": "src/a.py", "content": "x"})),
            vec!["src/a.py"]
        );
        let patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** Add File: b.rs\n+fn f() {}\n*** End Patch\n";
        assert_eq!(
            patch_paths(&json!({"patch": patch})),
            vec!["b.rs", "src/a.py"]
        );
        let diff = "--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n";
        assert_eq!(patch_paths(&json!({"input": diff})), vec!["x.go"]);
    }

    fn line(n: u32, msg: &str) -> DiagLine {
        DiagLine {
            path: "a.py".into(),
            line: n,
            col: 1,
            severity: "error",
            code: None,
            message: msg.into(),
        }
    }

    #[test]
    fn changed_lines_are_found_between_common_head_and_tail() {
        assert_eq!(changed_lines("a\nb\nc\n", "a\nX\nY\nc\n"), (2, 3));
        assert_eq!(changed_lines("a\nb\n", "# 1\n# 2\na\nb\n"), (1, 2));
        assert_eq!(changed_lines("a\nb\n", "a\nb\nc\n"), (3, 3));
        // A deletion: the line where the text closed up.
        assert_eq!(changed_lines("a\nb\nc\n", "a\nc\n"), (2, 2));
    }

    #[test]
    fn new_problems_nearest_the_change_come_first() {
        let mut new: Vec<DiagLine> = [1, 40, 70, 72, 100]
            .iter()
            .map(|&n| line(n, &format!("e{n}")))
            .collect();
        nearest_first(&mut new, Some((71, 71)));
        let shown: Vec<String> = new.iter().map(|d| d.render()).collect();
        expect_test::expect![[r#"
            [
                "a.py:70:1 error e70",
                "a.py:72:1 error e72",
                "a.py:100:1 error e100",
                "a.py:40:1 error e40",
                "a.py:1:1 error e1",
            ]
        "#]]
        .assert_debug_eq(&shown);
    }
}
