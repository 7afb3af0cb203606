//! The diagnostics delta of a staged change: what the language servers
//! would report after it, computed without touching the disk.
//!
//! For each file the change leaves or creates that has a server, the
//! staged text goes to the server as an unsaved document (`didChange`, or
//! `didOpen` under a new path), its diagnostics are awaited by the same
//! freshness proofs the write wrapper uses ([`crate::diagnostics::fresh`]),
//! and compared with the run's ledger (a file the run has not written is
//! first given its baseline, from its text at staging — none for a file the
//! change creates — as the write wrapper does). A file the change deletes
//! is closed meanwhile. A move is both: its target opened with the moved
//! text before its importers get theirs (tsserver resolves an import to a
//! file it has open even when the disk lacks it), its source closed. Then
//! the server's view is put back: the disk's text for a file it had open,
//! closed otherwise (a created file is not on the disk).
//!
//! Invariants: nothing is written and nothing is saved (`didSave` would
//! make a server check the disk); the ledger is read, never folded, so the
//! real write still reports what is new; each file's wait is bounded by
//! the write wrapper's diagnostics bound (from when its server runs), at
//! most [`PREVIEW_FILES`] files are checked, and a file whose server runs
//! out of it, or is still indexing after it, is named "not computed",
//! never passed off as clean. Save-time checks (rust-analyzer's
//! `cargo check`) see only the disk, so a preview has a server's own
//! diagnostics, not those.
//!
//! Its fallout in other files is judged by the write's own mechanism
//! ([`crate::on_write::fallout`] and [`crate::on_write::dependents`], at
//! [`Stage::Unsaved`]): the project-wide servers' publishes (gopls) and the
//! dependents of each changed file (basedpyright, tsserver) are taken while
//! the servers hold the texts before the change, and again once they hold
//! the staged ones; a server that judges other files only from the disk
//! (rust-analyzer's `cargo check`, clangd) is named, its other files not
//! computed. After the restore, a project-wide server is waited for until
//! it published the disk's state again, so that a later write's state
//! before it is never the preview's.

use crate::client::{file_uri, read_document};
use crate::diagnostics::{self, problems, DiagLine, Labelled, NotReady};
use crate::edit::staged_edit::PREVIEW_FILES;
use crate::on_write::dependents::Dependents;
use crate::on_write::fallout::{PublishedBefore, Stage};
use crate::on_write::RunLedger;
use crate::supervisor::{LspSupervisor, Target};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tool_core::files::TransactionError;
use tool_core::format::plural;
use tool_core::staging::{StagedChange, StagedFile};
use tool_core::{async_trait, PreviewHook, PreviewSection, ToolError};

/// New problems listed in a preview, at most.
pub(crate) const PREVIEW_PROBLEMS: usize = 20;

/// tool-lsp's [`PreviewHook`]: the run's supervisor and ledger.
pub struct ServerPreview {
    sup: Arc<LspSupervisor>,
    ledger: Arc<RunLedger>,
}

/// One file's delta.
struct FileDelta {
    /// The id of the catalog entry whose server reported it.
    server: String,
    new: Vec<DiagLine>,
    fixed: Vec<&'static str>,
}

/// One file of the change in its server, while the preview runs.
struct Opened<'a> {
    file: &'a StagedFile,
    target: Target,
    uri: String,
    /// Whether the server had it open before the preview.
    was_open: bool,
}

impl ServerPreview {
    /// A file created in a folder the disk lacks is not found by a server
    /// that lists folders before files (tsserver): its importers would be
    /// reported broken. Said so, never passed off as an error.
    fn creates_folders(&self, change: &StagedChange) -> Option<PreviewSection> {
        let mut new_folders: Vec<String> = change
            .files
            .iter()
            .filter(|f| !f.existed())
            .filter(|f| self.sup.catalog().for_file(&f.path).is_some())
            .filter_map(|f| missing_folder(&f.path))
            .map(|dir| format!("{}/", self.sup.rel(&dir)))
            .collect();
        new_folders.sort();
        new_folders.dedup();
        if new_folders.is_empty() {
            return None;
        }
        Some(PreviewSection {
            text: format!(
                "after this change: not computed: it creates {} {}, not on disk yet, and language servers look for files in the disk's folders, which a preview never touches — resolve accept reports the diagnostics after the write",
                if new_folders.len() == 1 { "the folder" } else { "the folders" },
                new_folders.join(", ")
            ),
            syntax_errors: Vec::new(),
        })
    }

    /// The servers of `opened` still indexing once the diagnostics bound
    /// has passed, each with what it was doing; each server waited for once.
    async fn still_indexing(
        &self,
        opened: &[Opened<'_>],
    ) -> Vec<(Arc<crate::client::LspClient>, String)> {
        let mut indexing: Vec<(Arc<crate::client::LspClient>, String)> = Vec::new();
        let mut idle: Vec<Arc<crate::client::LspClient>> = Vec::new();
        for o in opened {
            let client = &o.target.client;
            if idle
                .iter()
                .chain(indexing.iter().map(|(c, _)| c))
                .any(|c| Arc::ptr_eq(c, client))
            {
                continue;
            }
            match client.wait_until_idle(self.sup.timeouts.diagnostics).await {
                Ok(()) => idle.push(client.clone()),
                Err((what, _)) => indexing.push((client.clone(), what)),
            }
        }
        indexing
    }

    pub fn new(sup: Arc<LspSupervisor>, ledger: Arc<RunLedger>) -> Self {
        ServerPreview { sup, ledger }
    }

    fn not_ready(&self, o: &Opened<'_>, e: NotReady) -> String {
        let server = &o.target.slot.entry.id;
        match e {
            NotReady::Timeout(_) => format!(
                "{} ({server} not ready after {} ms)",
                o.file.rel,
                self.sup.timeouts.diagnostics.as_millis()
            ),
            NotReady::Request(r) => format!("{} ({server}: {r})", o.file.rel),
            e @ NotReady::ServerFailed(_) => format!("{} ({server}: {e})", o.file.rel),
        }
    }

    /// The file's diagnostics for `text`, sent as an unsaved change.
    async fn diagnostics_of(&self, o: &Opened<'_>, text: String) -> Result<Vec<DiagLine>, String> {
        let client = &o.target.client;
        let doc = client
            .sync_text(&o.file.path, &o.target.language_id, text)
            .await;
        let fresh = diagnostics::fresh(client, &o.uri, &doc, self.sup.timeouts.diagnostics)
            .await
            .map_err(|e| self.not_ready(o, e))?;
        Ok(problems(
            &o.file.rel,
            &fresh.diagnostics,
            &doc,
            client.encoding,
        ))
    }

    /// A file the run has not written gets its baseline first, from its
    /// text at staging (the write wrapper does the same before a write);
    /// a move's target, which had no text, from its source's (`source`):
    /// what a file had before it moved is not new after.
    async fn baseline(&self, o: &Opened<'_>, source: Option<&StagedFile>) -> Result<(), String> {
        if self
            .ledger
            .ledger
            .lock()
            .expect("ledger")
            .knows(&o.file.path, &o.target.slot.entry.id)
        {
            return Ok(());
        }
        let root = self.sup.workspace().dir();
        let old = o.file.texts(root).map_err(|e| unreadable(o.file, e))?.old;
        let baseline = match (old, source) {
            (Some(before), _) => self.diagnostics_of(o, before.into_owned()).await?,
            (None, Some(source)) => {
                let at_source = Opened {
                    file: source,
                    target: o.target.clone(),
                    uri: file_uri(&source.path),
                    was_open: false,
                };
                let before = source.texts(root).map_err(|e| unreadable(source, e))?.old;
                self.diagnostics_of(&at_source, before.map(Cow::into_owned).unwrap_or_default())
                    .await?
            }
            (None, None) => Vec::new(),
        };
        self.ledger.ledger.lock().expect("ledger").baseline(
            &o.file.path,
            &o.target.slot.entry.id,
            &baseline,
        );
        Ok(())
    }

    /// Files outside the change that mention a moved file's name (an
    /// import no server edited, maybe): a preview cannot judge them, as
    /// every server still finds the moved file on disk, where it stays
    /// until accept. Named, at most [`PREVIEW_PROBLEMS`], as not computed.
    async fn unedited_mentions(
        &self,
        change: &StagedChange,
        moves: &[(std::path::PathBuf, std::path::PathBuf)],
    ) -> Option<String> {
        let named = crate::edit::file_move::unedited_mentions(&self.sup, change, moves).await;
        if named.is_empty() {
            return None;
        }
        let ws = self.sup.workspace();
        let shown: Vec<String> = named
            .iter()
            .take(PREVIEW_PROBLEMS)
            .map(|m| m.describe(ws))
            .collect();
        let more = named.len().saturating_sub(PREVIEW_PROBLEMS);
        Some(format!(
            "{}{} — no server edited {}, and a preview cannot tell whether {} imports break, as the moved files stay on disk until accepted; accepting checks {}",
            shown.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() },
            if named.len() == 1 { "it" } else { "them" },
            if named.len() == 1 { "its" } else { "their" },
            if named.len() == 1 { "it" } else { "them" },
        ))
    }

    /// Before the staged texts are sent, while the servers hold the texts
    /// before the change: the project-wide servers' publishes and the
    /// dependents of each file about to change, by the write's mechanism.
    async fn other_files_before(
        &self,
        change: &StagedChange,
        ready: &[(&Opened<'_>, String)],
        preview_started: Instant,
    ) -> (PublishedBefore, Vec<Dependents>) {
        let touched: Vec<PathBuf> = change.files.iter().map(|f| f.path.clone()).collect();
        let paths: Vec<PathBuf> = ready.iter().map(|(o, _)| o.file.path.clone()).collect();
        let bound = self.sup.timeouts.diagnostics;
        crate::on_write::fallout::await_first_check(&self.sup, &paths, bound, Stage::Unsaved).await;
        // As of the preview's start: a server it started is not judged.
        let before =
            PublishedBefore::take(&self.sup, preview_started, &touched, Stage::Unsaved).await;
        let root = self.sup.workspace().dir();
        let mut dependents = Vec::new();
        for (o, after) in ready {
            let Ok(Some(old)) = o.file.texts(root).map(|t| t.old) else {
                continue;
            };
            let path = &o.file.path;
            let found =
                Dependents::before(&self.sup, path, (&old, after), &touched, Stage::Unsaved).await;
            dependents.extend(found);
        }
        (before, dependents)
    }

    /// Once the servers hold the staged texts (sent at `sent`): the new
    /// problems in other files, by file, and what was said of those not
    /// judged, in the preview's words ("lsp: other files not checked: …"
    /// → "other files not checked: …").
    async fn other_files_after(
        &self,
        change: &StagedChange,
        before: (&PublishedBefore, &[Dependents]),
        sent: Instant,
    ) -> (BTreeMap<String, Vec<Labelled>>, Vec<String>) {
        let touched: Vec<PathBuf> = change.files.iter().map(|f| f.path.clone()).collect();
        let (other_files, notes) =
            crate::on_write::fallout::judged(&self.sup, before, (&touched, sent)).await;
        let notes = notes
            .iter()
            .map(|n| n.strip_prefix("lsp: ").unwrap_or(n).to_string())
            .collect();
        (other_files, notes)
    }

    /// Put the server's view of the file back to the disk's. A server that
    /// publishes per version gets the restored version built before the
    /// preview ends (bounded by the diagnostics wait): clangd, sent the
    /// restored text and at once the next change, builds only the latest,
    /// and does not publish a version whose text is the last one it built —
    /// so the next preview of the same change, or the write that accepts
    /// it, waited for a publish that never came ("not ready after 10000
    /// ms", seen after a write then two previews).
    async fn restore(&self, o: &Opened<'_>) {
        let client = &o.target.client;
        match (
            o.was_open,
            read_document(self.sup.workspace(), &o.file.path),
        ) {
            (true, Ok(text)) => {
                let doc = client
                    .sync_text(&o.file.path, &o.target.language_id, text)
                    .await;
                if client.publishes_versions() {
                    let _ = diagnostics::fresh(client, &o.uri, &doc, self.sup.timeouts.diagnostics)
                        .await;
                }
            }
            _ => client.close(&o.uri).await,
        }
    }
}

/// Why a file staged as replacements could not be previewed: it changed
/// on disk since staging, or is no longer a readable regular file.
fn unreadable(f: &StagedFile, e: TransactionError) -> String {
    match e {
        TransactionError::NotAFile { source, .. } => format!("{} ({source})", f.rel),
        _ => format!("{} (changed since staging)", f.rel),
    }
}

/// The outermost missing folder above `path`, when its folder is missing.
fn missing_folder(path: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut missing = None;
    let mut dir = path.parent();
    while let Some(d) = dir.filter(|d| !d.exists()) {
        missing = Some(d.to_path_buf());
        dir = d.parent();
    }
    missing
}

/// Problems as the preview lists them, indented, at most
/// [`PREVIEW_PROBLEMS`], then how many more.
fn listed(problems: &[&DiagLine]) -> Vec<String> {
    let mut lines: Vec<String> = problems
        .iter()
        .take(PREVIEW_PROBLEMS)
        .map(|d| format!("  {}", d.render()))
        .collect();
    if problems.len() > PREVIEW_PROBLEMS {
        lines.push(format!(
            "  … {} more new problems",
            problems.len() - PREVIEW_PROBLEMS
        ));
    }
    lines
}

/// "2 new errors, 1 new warning" of these severities (`word`: "new ").
fn counted(severities: impl Iterator<Item = &'static str>, word: &str) -> String {
    let (mut errors, mut warnings) = (0, 0);
    for s in severities {
        if s == "error" {
            errors += 1;
        } else {
            warnings += 1;
        }
    }
    let mut parts = Vec::new();
    if errors > 0 {
        parts.push(plural(
            errors,
            &format!("{word}error"),
            &format!("{word}errors"),
        ));
    }
    if warnings > 0 {
        parts.push(plural(
            warnings,
            &format!("{word}warning"),
            &format!("{word}warnings"),
        ));
    }
    parts.join(", ")
}

/// The preview's section from each file's delta, the new problems in
/// other files (by file as shown) with what was said of those not judged,
/// and what was not computed. What the change breaks elsewhere comes
/// first, as a rename's answer puts it.
fn render(
    deltas: &[FileDelta],
    (other_files, other_notes): (&BTreeMap<String, Vec<Labelled>>, &[String]),
    not_computed: &[String],
) -> String {
    let new: Vec<&DiagLine> = deltas.iter().flat_map(|d| &d.new).collect();
    let fixed = counted(deltas.iter().flat_map(|d| d.fixed.iter().copied()), "");
    let mut head = Vec::new();
    if !new.is_empty() {
        head.push(counted(new.iter().map(|d| d.severity), "new "));
    }
    if !fixed.is_empty() {
        head.push(format!("{fixed} fixed"));
    }
    let mut lines = Vec::new();
    let elsewhere: Vec<&DiagLine> = other_files.values().flatten().map(|(d, _)| d).collect();
    if !elsewhere.is_empty() {
        lines.push(format!(
            "after this change: {} in {}",
            counted(elsewhere.iter().map(|d| d.severity), "new "),
            plural(other_files.len(), "other file", "other files")
        ));
        lines.extend(listed(&elsewhere));
    }
    let in_its_files = if elsewhere.is_empty() {
        ""
    } else {
        " in the files it changes"
    };
    if !deltas.is_empty() {
        lines.push(if head.is_empty() {
            format!("after this change: no new errors or warnings{in_its_files}")
        } else {
            format!("after this change: {}{in_its_files}", head.join("; "))
        });
    }
    lines.extend(listed(&new));
    lines.extend(
        not_computed
            .iter()
            .map(|why| format!("after this change: not computed: {why}")),
    );
    lines.extend(
        other_notes
            .iter()
            .map(|note| format!("after this change: {note}")),
    );
    lines.join("\n")
}

#[async_trait]
impl PreviewHook for ServerPreview {
    /// In phases, so that every file is checked against the others' new
    /// text: baselines of the old texts, then the files the change deletes
    /// (a move's sources) closed, every new text sent — the files it
    /// creates (a move's targets) first, so that a server resolving an
    /// import finds them open (tsserver does) — then each file's
    /// diagnostics, then every file restored.
    async fn diagnostics_delta(&self, change: &StagedChange) -> Option<PreviewSection> {
        let started = Instant::now();
        let has_server = |f: &&StagedFile| self.sup.catalog().for_file(&f.path).is_some();
        if let Some(refusal) = self.creates_folders(change) {
            return Some(refusal);
        }
        let mut files: Vec<&StagedFile> = change
            .files
            .iter()
            .filter(|f| f.remains())
            .filter(has_server)
            .collect();
        // Stable: created files first, each group still by path.
        files.sort_by_key(|f| f.existed());
        let deleted: Vec<&StagedFile> = change
            .files
            .iter()
            .filter(|f| !f.remains())
            .filter(has_server)
            .collect();
        let mut not_computed = Vec::new();
        let skipped = files.len().saturating_sub(PREVIEW_FILES);
        let mut opened = Vec::new();
        for f in files.into_iter().take(PREVIEW_FILES) {
            match self.sup.target_for(&f.path).await {
                Ok(target) => {
                    let uri = file_uri(&f.path);
                    let was_open = target.client.doc(&uri).await.is_some();
                    opened.push(Opened {
                        file: f,
                        target,
                        uri,
                        was_open,
                    });
                }
                // No server can run for this file here (no root marker, no
                // binary): the preview makes no claim about it, and says
                // nothing — the write wrapper names that reason once.
                Err(ToolError::Unavailable(_)) => {}
                Err(e) => not_computed.push(format!("{} ({e})", f.rel)),
            }
        }
        // A server still loading its project publishes an empty set for
        // any file (rust-analyzer before its workspace is loaded): that
        // would be passed off as clean. Each server is waited for until it
        // reports no indexing, within the diagnostics bound.
        let indexing = self.still_indexing(&opened).await;
        // A deleted file is closed for the preview (after the baselines,
        // which may open a move's source): the server then sees the disk,
        // which still holds it, as for files the change leaves alone.
        let mut closed = Vec::new();
        for f in deleted {
            let Ok(target) = self.sup.target_for(&f.path).await else {
                continue;
            };
            let uri = file_uri(&f.path);
            let was_open = target.client.doc(&uri).await.is_some();
            closed.push(Opened {
                file: f,
                target,
                uri,
                was_open,
            });
        }
        let moves = crate::edit::file_move::staged_move_pairs(self.sup.workspace(), change);
        not_computed.extend(self.unedited_mentions(change, &moves).await);
        let source_of = |o: &Opened<'_>| {
            let (from, _) = moves.iter().find(|(_, to)| to == &o.file.path)?;
            change.files.iter().find(|f| &f.path == from)
        };
        let mut ready = Vec::new();
        for o in &opened {
            if let Some((_, what)) = indexing
                .iter()
                .find(|(c, _)| Arc::ptr_eq(c, &o.target.client))
            {
                not_computed.push(format!(
                    "{} ({} still indexing after {} ms: {what})",
                    o.file.rel,
                    o.target.slot.entry.id,
                    self.sup.timeouts.diagnostics.as_millis()
                ));
                continue;
            }
            let after = match o.file.texts(self.sup.workspace().dir()) {
                Ok(t) => t.new.map(Cow::into_owned).unwrap_or_default(),
                Err(e) => {
                    not_computed.push(unreadable(o.file, e));
                    continue;
                }
            };
            match self.baseline(o, source_of(o)).await {
                Ok(()) => ready.push((o, after)),
                Err(why) => not_computed.push(why),
            }
        }
        let (published_before, dependents) = self.other_files_before(change, &ready, started).await;
        for o in &closed {
            o.target.client.close(&o.uri).await;
        }
        let sent = Instant::now();
        for (o, after) in &ready {
            o.target
                .client
                .sync_text(&o.file.path, &o.target.language_id, after.clone())
                .await;
        }
        let mut deltas = Vec::new();
        for (o, after) in ready {
            match self.diagnostics_of(o, after).await {
                Ok(lines) => {
                    let (new, fixed) = self.ledger.ledger.lock().expect("ledger").delta(
                        &o.file.path,
                        &o.target.slot.entry.id,
                        &lines,
                    );
                    deltas.push(FileDelta {
                        server: o.target.slot.entry.id.clone(),
                        new,
                        fixed,
                    });
                }
                Err(why) => not_computed.push(why),
            }
        }
        let (other_files, other_notes) = self
            .other_files_after(change, (&published_before, &dependents), sent)
            .await;
        let restoring = Instant::now();
        for o in opened.iter().chain(&closed) {
            self.restore(o).await;
        }
        published_before
            .settle_after_restore(&self.sup, restoring)
            .await;
        if skipped > 0 {
            not_computed.push(format!(
                "{} more (a preview checks at most {PREVIEW_FILES} files)",
                plural(skipped, "file", "files")
            ));
        }
        if deltas.is_empty()
            && not_computed.is_empty()
            && other_files.is_empty()
            && other_notes.is_empty()
        {
            return None;
        }
        let syntax_errors = deltas
            .iter()
            .flat_map(|delta| delta.new.iter().map(move |d| (&delta.server, d)))
            .filter(|(server, d)| diagnostics::is_syntax_error(d, server))
            .map(|(_, d)| d.render())
            .collect();
        Some(PreviewSection {
            text: render(&deltas, (&other_files, &other_notes), &not_computed),
            syntax_errors,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: u32, severity: &'static str, code: &str, msg: &str) -> DiagLine {
        DiagLine {
            path: "src/a.py".into(),
            line: n,
            col: 5,
            severity,
            code: Some(code.into()),
            message: msg.into(),
        }
    }

    #[test]
    fn the_section_counts_new_and_fixed_and_names_what_was_not_computed() {
        let deltas = [
            FileDelta {
                server: "python".into(),
                new: vec![
                    line(
                        14,
                        "error",
                        "reportAttributeAccessIssue",
                        "Cannot access attribute \"x\"",
                    ),
                    line(
                        20,
                        "error",
                        "reportCallIssue",
                        "Expected 1 positional argument",
                    ),
                ],
                fixed: vec!["error"],
            },
            FileDelta {
                server: "typescript".into(),
                new: Vec::new(),
                fixed: Vec::new(),
            },
        ];
        let not = ["src/b.ts (typescript not ready after 10000 ms)".to_string()];
        expect_test::expect![[r#"
            after this change: 2 new errors; 1 error fixed
              src/a.py:14:5 error [reportAttributeAccessIssue] Cannot access attribute "x"
              src/a.py:20:5 error [reportCallIssue] Expected 1 positional argument
            after this change: not computed: src/b.ts (typescript not ready after 10000 ms)"#]]
        .assert_eq(&render(&deltas, (&BTreeMap::new(), &[]), &not));
        expect_test::expect!["after this change: no new errors or warnings"].assert_eq(&render(
            &deltas[1..],
            (&BTreeMap::new(), &[]),
            &[],
        ));
        // What the change breaks elsewhere comes first; what was not
        // judged there is said in the preview's words.
        let mut caller = line(
            5,
            "error",
            "reportCallIssue",
            "Argument missing for parameter \"y\"",
        );
        caller.path = "use.py".into();
        let others = BTreeMap::from([("use.py".to_string(), vec![(caller, String::new())])]);
        let notes = [
            "not checked: 3 more files mentioning `f` (the budget for other files was spent)"
                .to_string(),
        ];
        expect_test::expect![[r#"
            after this change: 1 new error in 1 other file
              use.py:5:5 error [reportCallIssue] Argument missing for parameter "y"
            after this change: no new errors or warnings in the files it changes
            after this change: not checked: 3 more files mentioning `f` (the budget for other files was spent)"#]]
        .assert_eq(&render(&deltas[1..], (&others, &notes), &[]));
    }

    #[test]
    fn syntax_errors_are_known_by_code_message_and_server() {
        let cases: &[(&str, &str, Option<&str>, &str, bool)] = &[
            ("python", "error", None, "Expected \":\"", true),
            (
                "python",
                "error",
                Some("reportCallIssue"),
                "Expected 1 positional argument",
                false,
            ),
            (
                "ruff",
                "error",
                Some("invalid-syntax"),
                "Expected ':', found 'as'",
                true,
            ),
            (
                "ruff",
                "warning",
                Some("invalid-syntax"),
                "Expected ':'",
                false,
            ),
            ("typescript", "error", Some("1005"), "';' expected.", true),
            (
                "typescript",
                "error",
                Some("2554"),
                "Expected 2 arguments, but got 1.",
                false,
            ),
            ("php", "error", Some("1009"), "Undefined type 'X'.", false),
            (
                "rust",
                "error",
                Some("syntax-error"),
                "expected SEMICOLON",
                true,
            ),
            (
                "python-pylsp",
                "error",
                Some("E999"),
                "SyntaxError: invalid syntax",
                true,
            ),
            ("go", "error", None, "expected ';', found 'as'", true),
            (
                "go",
                "error",
                Some("WrongArgCount"),
                "not enough arguments in call to F",
                false,
            ),
            (
                "bash",
                "error",
                None,
                "Couldn't parse: syntax error near `)`",
                true,
            ),
        ];
        for (server, severity, code, message, want) in cases {
            let mut d = line(1, severity, "", message);
            d.code = code.map(str::to_string);
            assert_eq!(
                diagnostics::is_syntax_error(&d, server),
                *want,
                "{server} {code:?} {message}"
            );
        }
    }
}
