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

use crate::client::file_uri;
use crate::diagnostics::{self, DiagLine, DiagnosticLedger, NotReady};
use crate::supervisor::LspSupervisor;
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
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
    ledger: Mutex<DiagnosticLedger>,
    /// "cannot check" reasons already said once.
    said: Mutex<HashSet<String>>,
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
    /// content before the write), else of the file on disk (after it).
    async fn current(
        &self,
        path: &Path,
        save: bool,
        text: Option<String>,
    ) -> Result<Vec<DiagLine>, String> {
        let target = self.sup.target_for(path).await.map_err(|e| e.to_string())?;
        let client = &target.client;
        client.resync_open().await;
        let doc = match text {
            Some(text) => client.sync_text(path, &target.language_id, text).await,
            None => client
                .sync_file(path, &target.language_id)
                .await
                .map_err(|e| format!("cannot read it: {e}"))?,
        };
        let uri = file_uri(path);
        if save {
            client.did_save(&uri, &doc.text);
        }
        let fresh = diagnostics::fresh(client, &uri, &doc, self.sup.timeouts.diagnostics)
            .await
            .map_err(|e| match e {
                NotReady::Timeout(after) => format!(
                    "diagnostics not ready after {} ms ({} is still working); run `lsp` op `diagnostics` on it later",
                    after.as_millis(),
                    target.slot.entry.id
                ),
                NotReady::Request(r) => r.to_string(),
            })?;
        let shown = self.sup.rel(path);
        Ok(fresh
            .diagnostics
            .iter()
            .filter(|d| diagnostics::is_problem(d))
            .map(|d| DiagLine::from_lsp(&shown, d, Some(&doc.text), client.encoding))
            .collect())
    }

    /// The report for one touched file, or `None` when there is nothing to say.
    async fn report(&self, path: &Path) -> (Option<String>, Vec<DiagLine>) {
        let shown = self.sup.rel(path);
        if !path.exists() {
            if let Ok(t) = self.sup.target_for(path).await {
                t.client.close(&file_uri(path)).await;
            }
            return (None, Vec::new());
        }
        match self.current(path, true, None).await {
            Ok(diags) => {
                let new = self
                    .ledger
                    .ledger
                    .lock()
                    .expect("ledger")
                    .fold(path, &diags);
                if new.is_empty() {
                    return (
                        Some(format!("lsp: no new errors or warnings in {shown}")),
                        new,
                    );
                }
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
            Err(why) => {
                // Say a standing reason (no server here) once per run, a
                // passing one (not ready) every time.
                let standing = why.contains("not available here");
                if standing && !self.ledger.said.lock().expect("said").insert(why.clone()) {
                    return (None, Vec::new());
                }
                (Some(format!("lsp: {shown} not checked: {why}")), Vec::new())
            }
        }
    }
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
        for (p, before) in unknown {
            let baseline = match before {
                None => Some(Vec::new()),
                Some(text) => self.current(&p, false, Some(text)).await.ok(),
            };
            if let Some(b) = baseline {
                self.ledger.ledger.lock().expect("ledger").baseline(&p, &b);
            }
        }
        let mut all_new = Vec::new();
        for p in &paths {
            let (text, new) = self.report(p).await;
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
}
