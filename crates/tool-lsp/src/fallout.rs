//! What a write broke in other files, as far as the servers that publish
//! for the whole project tell without being asked (rust-analyzer's
//! `cargo check` covers the crate and its tests; gopls the workspace's
//! packages): what each published for the files the write did not touch,
//! before the write and once its own diagnostics are in, compared by
//! severity, code and message as the ledger compares.
//!
//! The first step of judging a change where its damage lands. A server
//! that publishes for open files only adds nothing here, and nothing is
//! said of the files it was not asked about. A server is judged only when
//! its state before the write is known: it was running and had published
//! (for one with a save-time check, a run of it had ended) before the
//! write began; a cold server's first publishes are the project's
//! standing problems, not this write's.

use crate::client::{file_uri, uri_path, LspClient, Published};
use crate::diagnostics::{self, new_against, DiagLine, Labelled, QUIET_WINDOW};
use crate::supervisor::LspSupervisor;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How many other files' problems are listed line by line.
const FILES_AT_MOST: usize = 10;

/// How long the other files' publishes may take to settle after the
/// written file's diagnostics are in.
const SETTLE_AT_MOST: Duration = Duration::from_secs(1);

/// Each judged server's publishes before a write.
pub(crate) struct PublishedBefore {
    /// Each server, what it had published, and how long after a change
    /// it publishes for the other files.
    servers: Vec<(Arc<LspClient>, HashMap<String, Published>, Duration)>,
}

impl PublishedBefore {
    /// What each running server whose state is known had published, taken
    /// before the write (`call_started`).
    pub(crate) async fn take(sup: &LspSupervisor, call_started: Instant) -> PublishedBefore {
        let mut servers = Vec::new();
        for slot in sup.slots() {
            let Some(client) = slot.running_client().await else {
                continue;
            };
            let known = match &slot.entry.save_check_progress {
                Some(prefix) => client
                    .progress_runs(prefix)
                    .iter()
                    .any(|r| r.ended.is_some_and(|e| e < call_started)),
                None => client.diag_seq() > 0,
            };
            if known {
                let before = client.published_all();
                let delay =
                    Duration::from_millis(slot.entry.project_diagnostics_delay_ms.unwrap_or(0));
                servers.push((client, before, delay));
            }
        }
        PublishedBefore { servers }
    }

    /// The new problems in files other than `touched`, by file as shown,
    /// once each server's publishes have been quiet a moment, and its delay
    /// since `written` has passed.
    pub(crate) async fn new_problems(
        &self,
        sup: &LspSupervisor,
        (touched, written): (&[PathBuf], Instant),
    ) -> BTreeMap<String, Vec<Labelled>> {
        let touched: Vec<String> = touched.iter().map(|p| file_uri(p)).collect();
        let mut per_file: BTreeMap<String, Vec<Labelled>> = BTreeMap::new();
        for (client, before, delay) in &self.servers {
            settle(client, written + *delay).await;
            for (uri, now) in client.published_all() {
                if touched.contains(&uri) || before.get(&uri).is_some_and(|b| b.seq == now.seq) {
                    continue;
                }
                let Some(path) = uri_path(&uri).filter(|p| p.starts_with(sup.workspace().root()))
                else {
                    continue;
                };
                let shown = sup.rel(&path);
                let text = crate::client::read_document(sup.workspace(), &path).ok();
                let lines = |p: Option<&Published>| -> Vec<DiagLine> {
                    let diags = p.map(|p| p.diagnostics.as_slice()).unwrap_or_default();
                    diagnostics::problem_lines(&shown, diags, text.as_deref(), client.encoding)
                };
                let new = new_against(&lines(before.get(&uri)), &lines(Some(&now)));
                if !new.is_empty() {
                    per_file
                        .entry(shown)
                        .or_default()
                        .extend(new.into_iter().map(|d| (d, String::new())));
                }
            }
        }
        per_file
    }
}

/// The answer's lines for the new problems in other files (none when there
/// are none): a headline, then each file's lines, at most
/// [`FILES_AT_MOST`] files.
pub(crate) fn render(
    per_file: &BTreeMap<String, Vec<Labelled>>,
    (per_file_cap, flood): (usize, usize),
) -> Option<String> {
    if per_file.is_empty() {
        return None;
    }
    let count: usize = per_file.values().map(Vec::len).sum();
    let mut out = vec![format!(
        "lsp: {} in {} after this write:",
        tool_core::format::plural(count, "new problem", "new problems"),
        tool_core::format::plural(per_file.len(), "other file", "other files")
    )];
    for (shown, new) in per_file.iter().take(FILES_AT_MOST) {
        let new = diagnostics::merge_labelled(new.clone());
        out.extend(diagnostics::render_capped(shown, &new, per_file_cap, flood));
    }
    if per_file.len() > FILES_AT_MOST {
        let rest: Vec<String> = per_file.keys().skip(FILES_AT_MOST).cloned().collect();
        out.push(format!(
            "… and {} more: {}",
            tool_core::format::plural(rest.len(), "file", "files"),
            tool_core::format::list_capped(&rest, 10)
        ));
    }
    Some(out.join("\n"))
}

/// Until `client` has published nothing for [`QUIET_WINDOW`] once
/// `not_before` has passed, at most [`SETTLE_AT_MOST`] after that.
async fn settle(client: &LspClient, not_before: Instant) {
    let not_before = tokio::time::Instant::from_std(not_before);
    let deadline = not_before.max(tokio::time::Instant::now()) + SETTLE_AT_MOST;
    let mut changes = client.subscribe_diagnostics();
    tokio::time::sleep_until(not_before).await;
    loop {
        let quiet_until = (tokio::time::Instant::now() + QUIET_WINDOW).min(deadline);
        match tokio::time::timeout_at(quiet_until, changes.changed()).await {
            Ok(Ok(())) if tokio::time::Instant::now() < deadline => continue,
            _ => return,
        }
    }
}
