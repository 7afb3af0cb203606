//! Diagnostics on write: a decorator around any tool that writes files.
//!
//! The files a call writes are those the inner tool declares for its
//! arguments ([`Tool::writes`]). After the inner tool succeeds, each is synced into its
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
//!
//! With format on write on for a file's language (see
//! [`crate::on_write::formatter`]), the written file is formatted after the
//! baselines are taken and before its diagnostics are judged, so they are
//! the formatted text's; the answer says formatted, unchanged or failed.

//!
//! Its parts: [`save_check`] (rust-analyzer's save-time `cargo check`: when
//! its results count), [`formatter`] (format on write), [`judges`] (the
//! servers and linters that judge a written file), [`fallout`] with
//! [`dependents`] (new problems in the files that use what changed).

pub(crate) mod changed;
pub(crate) mod dependents;
pub(crate) mod fallout;
pub(crate) mod formatter;
pub(crate) mod judges;
pub(crate) mod save_check;

use crate::client::{file_uri, read_document, OpenDoc};
use crate::config::UntrustedFormatter;
use crate::diagnostics::{self, problems, DiagLine, DiagnosticLedger, Labelled, NotReady};
use crate::on_write::changed::ChangedLines;
use crate::on_write::dependents::Dependents;
use crate::on_write::formatter::{FileFormat, FormatSetting, Outcome};
use crate::on_write::judges::{Checker, Unchecked};
use crate::on_write::save_check::{check_only, not_known_whether_new, settled, Settled};
use crate::supervisor::{LspSupervisor, Target};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tool_core::notices::{NoticeBoard, NoticeLevel};
use tool_core::{async_trait, CallContext, Tool, ToolError, ToolOutput, ToolSpec};

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
    /// told, when the run has no notice board: the next result of a wrapped
    /// tool carries them.
    late: Mutex<Vec<String>>,
    /// The run's notice board: late diagnostics are posted there, so the
    /// next result of any tool carries them and the MCP host pushes them.
    board: Mutex<Option<NoticeBoard>>,
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

    /// Post late diagnostics on this notice board from now on.
    pub fn set_notice_board(&self, board: NoticeBoard) {
        *self.board.lock().expect("board") = Some(board);
    }

    /// Tell late diagnostics: on the notice board (a warning when they hold
    /// new problems), else queued for the next wrapped result.
    fn tell_late(&self, text: String, new_problems: bool) {
        let board = self.board.lock().expect("board").clone();
        match board {
            Some(board) => {
                let level = if new_problems {
                    NoticeLevel::Warning
                } else {
                    NoticeLevel::Info
                };
                board.post("lsp", level, text);
            }
            None => self.late.lock().expect("late").push(text),
        }
    }
}

/// The least a write's answer waits for the written text's diagnostics
/// when its baseline spent the bound (`diagnostics_wait_ms`): a call waits
/// at most the bound and this.
pub(crate) const AFTER_BASELINE_AT_LEAST: Duration = Duration::from_millis(500);

/// How long diagnostics still pending after a write's bound are waited for
/// in the background.
pub(crate) const LATE_BOUND: Duration = Duration::from_mins(2);

/// What the baselines of one written file's checkers left to know, by
/// checker id.
#[derive(Debug, Clone, Default)]
struct Baselines {
    /// Whose state before the write could not be had.
    missing: HashSet<String>,
    /// Whose baseline lacks their save-time check's results (see
    /// [`Checked::check_missing`]).
    check_missing: HashSet<String>,
    /// How long each baseline waited for its diagnostics: the write's
    /// answer waits the rest of the one bound (`diagnostics_wait_ms`).
    waited: HashMap<String, Duration>,
}

/// What a check of one written file found.
struct Checked {
    /// Errors and warnings, in the file's current text.
    diags: Vec<DiagLine>,
    /// The 1-based lines the write changed, in the new text.
    changed: Option<ChangedLines>,
    /// Of `diags`, those only the save-time check reported (not the
    /// server's own pass), and the check's name (`cargo check`).
    from_check: Option<(String, Vec<DiagLine>)>,
    /// A baseline without the save-time check's results: the server started
    /// after the write began, so its check never saw the file as it was.
    check_missing: bool,
}

/// Which languages are formatted on write, and how (`[lsp.format_on_write]`).
#[derive(Debug, Clone, Default)]
pub struct FormatOnWrite {
    /// Per LSP language id.
    pub settings: BTreeMap<String, FormatSetting>,
    /// Project formatter commands not used (the workspace is not trusted):
    /// said on the first write of one of their files.
    pub untrusted: Vec<UntrustedFormatter>,
}

/// A write tool whose successful calls report newly introduced diagnostics.
pub struct DiagnosticsOnWrite {
    inner: Arc<dyn Tool>,
    sup: Arc<LspSupervisor>,
    ledger: Arc<RunLedger>,
    limits: ReportLimits,
    format: Option<Arc<FormatOnWrite>>,
}

impl DiagnosticsOnWrite {
    pub fn new(inner: Arc<dyn Tool>, sup: Arc<LspSupervisor>, ledger: Arc<RunLedger>) -> Self {
        DiagnosticsOnWrite {
            inner,
            sup,
            ledger,
            limits: ReportLimits::default(),
            format: None,
        }
    }

    /// Format the written files of the languages `format` names before
    /// their diagnostics are judged.
    pub fn with_format(mut self, format: Arc<FormatOnWrite>) -> Self {
        self.format = Some(format);
        self
    }

    pub fn with_limits(mut self, limits: ReportLimits) -> Self {
        self.limits = limits;
        self
    }

    fn paths(&self, args: &Value) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .inner
            .writes(args)
            .iter()
            .filter_map(|p| self.sup.workspace().resolve(p).ok())
            .filter(|p| self.sup.catalog().for_file(p).is_some())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// One server's diagnostics of the file before the write: of `text`
    /// (the content before the write, sent to the server now), with the
    /// save-time check's results from before `call_started` (when the write
    /// began; see [`save_check`]).
    async fn baseline(
        &self,
        checker: &Checker,
        path: &Path,
        text: String,
        call_started: Instant,
        waited: &mut Duration,
    ) -> Result<Checked, Unchecked> {
        let target = checker.target(&self.sup).await?;
        let client = &target.client;
        let entry = &target.slot.entry;
        if client.never_delivers().is_some() {
            // Not waited for: the write's own check says why.
            return Err(Unchecked::Pending(String::new()));
        }
        // Not re-synced first: the file on disk is already the written one,
        // and sending it before the old text costs the server two versions.
        let uri = file_uri(path);
        let checked_before = save_check::published_before_write(client, entry, &uri, call_started);
        let before = client.doc(&uri).await.map(|d| d.text);
        let doc = client.sync_text(path, &target.language_id, text).await;
        let saved = Instant::now();
        let check_missing =
            save_check::baseline_lacks_check(client, entry, checked_before.as_ref(), call_started);
        let bound = self.sup.timeouts.diagnostics;
        let settling = settled(client, &uri, &doc, None, (saved, saved), bound).await;
        *waited = saved.elapsed();
        match settling {
            Ok(Settled { diags, .. }) => {
                let diags = save_check::baseline_with_check_before(
                    diags,
                    &entry.save_check_sources,
                    checked_before,
                );
                Ok(Checked {
                    from_check: None,
                    check_missing,
                    diags: problems(&self.sup.rel(path), &diags, &doc, client.encoding),
                    changed: before.map(|b| ChangedLines::between(&b, &doc.text)),
                })
            }
            Err(NotReady::Timeout(after)) => {
                client.diagnostics_wait_ran_out();
                Err(self.still_pending(path, &target, after))
            }
            Err(NotReady::Request(r)) => Err(Unchecked::Failed(r.to_string())),
            Err(NotReady::ServerFailed(why)) => Err(Unchecked::Failed(format!(
                "{} reported an error while checking it ({why})",
                target.slot.entry.id
            ))),
        }
    }

    /// One server's diagnostics of the file on disk after the write: synced
    /// and saved, then awaited (with the save-time check's run, if any).
    /// `prior`: the text the server had before this write, when formatting
    /// has sent it the unformatted one since. Past the bound, the wait goes
    /// on in the background ([`Self::wait_late`]).
    async fn after_write(
        &self,
        checker: &Checker,
        path: &Path,
        check_missing_before: bool,
        prior: Option<Option<String>>,
        (call_started, bound, spent): (Instant, Duration, Duration),
    ) -> Result<Checked, Unchecked> {
        let target = checker.target(&self.sup).await?;
        let client = &target.client;
        let entry = &target.slot.entry;
        if let Some(waits) = client.never_delivers() {
            return Err(Unchecked::Silent(format!(
                "{} has sent no diagnostics for any file since it started ({waits} waits ran out); its files are not waited for again — `lsp` op `status` shows it",
                entry.id
            )));
        }
        let uri = file_uri(path);
        // The text the server had before this write (read before the
        // re-sync below sends it the written one).
        let before = match prior {
            Some(prior) => prior,
            None => client.doc(&uri).await.map(|d| d.text),
        };
        client.resync_open().await;
        let doc = client
            .sync_file(path, &target.language_id)
            .await
            .map_err(|e| Unchecked::Failed(format!("cannot read it: {e}")))?;
        let saved = Instant::now();
        client.did_save(&uri, &doc.text);
        let check = entry.save_check_progress.clone();
        let since = save_check::counts_since(path, call_started, saved);
        let nudge = entry.save_check_nudge.as_deref();
        let sources = entry.save_check_sources.as_slice();
        let checked_by = check.as_deref().map(|prefix| (prefix, sources, nudge));
        match settled(client, &uri, &doc, checked_by, (since, saved), bound).await {
            Ok(Settled { diags, own }) => Ok(Checked {
                from_check: check.as_deref().map(|prefix| {
                    check_only(
                        client,
                        (prefix, &entry.save_check_sources),
                        &self.sup.rel(path),
                        &diags,
                        &own,
                        &doc,
                    )
                }),
                check_missing: false,
                diags: problems(&self.sup.rel(path), &diags, &doc, client.encoding),
                changed: before.map(|b| ChangedLines::between(&b, &doc.text)),
            }),
            Err(NotReady::Timeout(after)) => {
                client.diagnostics_wait_ran_out();
                let label = checker.label.clone();
                self.wait_late(
                    &target,
                    label,
                    path,
                    doc,
                    (check, check_missing_before),
                    saved,
                    before,
                );
                // Said as the whole wait of the call, baseline included.
                Err(self.still_pending(path, &target, after + spent))
            }
            Err(NotReady::Request(r)) => Err(Unchecked::Failed(r.to_string())),
            Err(NotReady::ServerFailed(why)) => Err(Unchecked::Failed(format!(
                "{} reported an error while checking it ({why})",
                target.slot.entry.id
            ))),
        }
    }

    fn still_pending(&self, path: &Path, target: &Target, after: Duration) -> Unchecked {
        Unchecked::Pending(format!(
            "diagnostics still pending for {} after {} ms ({} is still working); they will come with a later result",
            self.sup.rel(path),
            after.as_millis(),
            target.slot.entry.id
        ))
    }

    /// Go on waiting for a write's diagnostics in the background; when they
    /// come, fold them into the ledger and queue what is new for the next
    /// result. Dropped when the file was written again meanwhile.
    #[allow(clippy::too_many_arguments)]
    fn wait_late(
        &self,
        target: &Target,
        label: String,
        path: &Path,
        doc: OpenDoc,
        (check, check_missing): (Option<String>, bool),
        saved: Instant,
        before: Option<String>,
    ) {
        let client = target.client.clone();
        let server = target.slot.entry.id.clone();
        let sources = target.slot.entry.save_check_sources.clone();
        let ledger = self.ledger.clone();
        let shown = self.sup.rel(path);
        let path = path.to_path_buf();
        let limits = self.limits;
        tokio::spawn(async move {
            let uri = file_uri(&path);
            let Ok(Settled { diags, own }) = settled(
                &client,
                &uri,
                &doc,
                check.as_deref().map(|p| (p, sources.as_slice(), None)),
                (saved, saved),
                LATE_BOUND,
            )
            .await
            else {
                return;
            };
            if client.doc(&uri).await.map(|d| d.version) != Some(doc.version) {
                return; // written again: that write's check tells
            }
            let lines = problems(&shown, &diags, &doc, client.encoding);
            let changed = before.map(|b| ChangedLines::between(&b, &doc.text));
            let after = saved.elapsed().as_secs_f64();
            let new = ledger
                .ledger
                .lock()
                .expect("ledger")
                .fold(&path, &server, &lines);
            let (new, unknown) = match check.as_deref() {
                Some(prefix) if check_missing => {
                    let (name, only) =
                        check_only(&client, (prefix, &sources), &shown, &diags, &own, &doc);
                    let (unknown, new) = not_known_whether_new(new, &only, changed.as_ref());
                    (new, Some((name, unknown)))
                }
                _ => (new, None),
            };
            let mut new = labelled(new, &label);
            nearest_first(&mut new, changed.as_ref());
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
            if let Some((name, unknown)) = unknown.filter(|(_, u)| !u.is_empty()) {
                text.push('\n');
                text.push_str(&unknown_note(
                    &name,
                    &shown,
                    "",
                    &server,
                    unknown,
                    &label,
                    changed.as_ref(),
                    limits,
                ));
            }
            ledger.tell_late(text, !new.is_empty());
        });
    }

    /// The report for one touched file, or `None` when there is nothing to
    /// say: each of its checkers (its server, then its linters) asked in
    /// parallel, each judged against its own baseline (`baselines`: what
    /// they left to know, and the time they spent of the call's bound).
    async fn report(
        &self,
        path: &Path,
        checkers: &[Checker],
        baselines: &Baselines,
        server_before: Option<&(String, Option<String>)>,
        call_started: Instant,
    ) -> (Option<String>, Vec<Labelled>) {
        let (no_baseline, check_missing) = (&baselines.missing, &baselines.check_missing);
        let shown = self.sup.rel(path);
        if !path.exists() {
            for checker in checkers {
                if let Ok(t) = checker.target(&self.sup).await {
                    t.client.close(&file_uri(path)).await;
                }
            }
            return (None, Vec::new());
        }
        let answers = futures::future::join_all(checkers.iter().map(|checker| {
            let prior = server_before
                .filter(|(id, _)| *id == checker.id)
                .map(|(_, before)| before.clone());
            // One bound per call: what the baseline waited is spent; the
            // written text's own answer is still given a moment.
            let waited = baselines.waited.get(&checker.id).copied();
            let bound = self
                .sup
                .timeouts
                .diagnostics
                .saturating_sub(waited.unwrap_or_default())
                .max(AFTER_BASELINE_AT_LEAST);
            let spent = waited.unwrap_or_default();
            self.after_write(
                checker,
                path,
                check_missing.contains(&checker.id),
                prior,
                (call_started, bound, spent),
            )
        }))
        .await;
        let several = checkers.len() > 1;
        let mut new: Vec<Labelled> = Vec::new();
        let mut changed = None;
        let mut answered = Vec::new();
        let mut notes = Vec::new();
        for (checker, answer) in checkers.iter().zip(answers) {
            let by = if several {
                format!(" (by {})", checker.id)
            } else {
                String::new()
            };
            match answer {
                Ok(checked) => {
                    let found = self.ledger.ledger.lock().expect("ledger").fold(
                        path,
                        &checker.id,
                        &checked.diags,
                    );
                    changed = changed.or(checked.changed.clone());
                    if no_baseline.contains(&checker.id) && !checked.diags.is_empty() {
                        notes.push(format!(
                            "lsp: no baseline for {shown}{by}: {} after the write, not known which are new — run `lsp` op `diagnostics` on it to see them",
                            tool_core::format::plural(checked.diags.len(), "diagnostic", "diagnostics")
                        ));
                        continue;
                    }
                    let (found, unknown) = match (&checked.from_check, checked.changed.as_ref()) {
                        (Some((name, only)), changed) if check_missing.contains(&checker.id) => {
                            let (unknown, found) = not_known_whether_new(found, only, changed);
                            (found, Some((name.clone(), unknown)))
                        }
                        _ => (found, None),
                    };
                    new.extend(labelled(found, &checker.label));
                    answered.push(checker.id.clone());
                    if let Some((name, unknown)) = unknown.filter(|(_, u)| !u.is_empty()) {
                        notes.push(unknown_note(
                            &name,
                            &shown,
                            &by,
                            &checker.id,
                            unknown,
                            &checker.label,
                            checked.changed.as_ref(),
                            self.limits,
                        ));
                    }
                }
                Err(Unchecked::Pending(why)) => notes.push(format!("lsp: {why}")),
                Err(Unchecked::Silent(why)) => {
                    if self.ledger.first_time(&why) {
                        notes.push(format!("lsp: {shown} not checked{by}: {why}"));
                    }
                }
                Err(Unchecked::Failed(why)) => {
                    // Say a standing reason (no server here) once per run, a
                    // passing one every time.
                    let standing = why.contains("not available here");
                    if standing && !self.ledger.first_time(&why) {
                        continue;
                    }
                    notes.push(format!("lsp: {shown} not checked{by}: {why}"));
                }
            }
        }
        let mut lines = Vec::new();
        let new = diagnostics::merge_labelled(new);
        if !new.is_empty() {
            let mut new = new;
            nearest_first(&mut new, changed.as_ref());
            lines.push(format!(
                "lsp: {} in {shown} after this write:",
                tool_core::format::plural(new.len(), "new problem", "new problems")
            ));
            lines.extend(diagnostics::render_capped(
                &shown,
                &new,
                self.limits.per_file,
                self.limits.flood,
            ));
            lines.extend(notes);
            return (Some(lines.join("\n")), new);
        }
        if !answered.is_empty() {
            let from = if several && answered.len() < checkers.len() {
                format!(" from {}", answered.join(" + "))
            } else {
                String::new()
            };
            // Every answer from a server that checks less than a full
            // check (jedi: syntax only) says what it covered.
            let partial: Vec<(String, String)> = checkers
                .iter()
                .filter(|c| answered.contains(&c.id))
                .map(Checker::partial_cover)
                .collect::<Option<_>>()
                .unwrap_or_default();
            match partial.first() {
                Some((covers, _)) => lines.push(format!(
                    "lsp: no new {covers} errors in {shown}{from} ({})",
                    partial
                        .iter()
                        .map(|(_, n)| n.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                )),
                None => lines.push(format!("lsp: no new errors or warnings in {shown}{from}")),
            }
        }
        lines.extend(notes);
        if lines.is_empty() {
            return (None, Vec::new());
        }
        (Some(lines.join("\n")), Vec::new())
    }
}

/// New problems with the label of the server that found them.
fn labelled(new: Vec<DiagLine>, label: &str) -> Vec<Labelled> {
    new.into_iter().map(|d| (d, label.to_string())).collect()
}

/// What is said of the check results not known to be new (see
/// [`not_known_whether_new`]), nearest the change first.
#[allow(clippy::too_many_arguments)]
fn unknown_note(
    name: &str,
    shown: &str,
    by: &str,
    server: &str,
    unknown: Vec<DiagLine>,
    label: &str,
    changed: Option<&ChangedLines>,
    limits: ReportLimits,
) -> String {
    let mut unknown = labelled(unknown, label);
    nearest_first(&mut unknown, changed);
    let mut note = vec![format!(
        "lsp: {} from {name} in {shown}{by}, not known whether new: {server} had no {name} results for the file from before this write (it started cold, or its first {name} was still running), and none is on a line the write changed:",
        tool_core::format::plural(unknown.len(), "problem", "problems"),
    )];
    note.extend(diagnostics::render_capped(
        shown,
        &unknown,
        limits.per_file,
        limits.flood,
    ));
    note.join("\n")
}

/// Order new problems by their distance to the changed lines, so the ones
/// the write caused come before any cap. Ties keep line order.
pub(crate) fn nearest_first(new: &mut [Labelled], changed: Option<&ChangedLines>) {
    let Some(changed) = changed else { return };
    new.sort_by_key(|(d, _)| (changed.distance(d.line), d.line, d.col));
}

#[async_trait]
impl Tool for DiagnosticsOnWrite {
    fn spec(&self) -> ToolSpec {
        let mut spec = self.inner.spec();
        spec.description.push_str(
            "\nAfter a successful call, errors and warnings the language server newly reports for the written files are appended.",
        );
        let formatted: Vec<&str> = self
            .format
            .iter()
            .flat_map(|f| f.settings.iter())
            .filter(|(_, s)| s.enabled)
            .map(|(language, _)| language.as_str())
            .collect();
        if !formatted.is_empty() {
            spec.description.push_str(&format!(
                " Files in {} are formatted first (format on write): the file on disk may then differ from what you wrote, and the answer says so.",
                formatted.join(", ")
            ));
        }
        spec
    }

    fn describe_call(&self, args: &Value) -> String {
        self.inner.describe_call(args)
    }

    fn writes(&self, args: &Value) -> Vec<String> {
        self.inner.writes(args)
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let files: Vec<(PathBuf, Vec<Checker>)> = self
            .paths(&args)
            .into_iter()
            .map(|p| {
                let checkers = Checker::of(&self.sup, &p);
                (p, checkers)
            })
            .collect();
        // The state before the run's first write to a file is its baseline
        // (per checker), so errors it already had are not blamed on this
        // write. Its text is read now (no server involved); `None`: it did
        // not exist.
        let mut unknown: Vec<(usize, Option<String>)> = Vec::new();
        for (i, (p, checkers)) in files.iter().enumerate() {
            let known = {
                let ledger = self.ledger.ledger.lock().expect("ledger");
                checkers.iter().all(|c| ledger.knows(p, &c.id))
            };
            if !known {
                match crate::client::read_document(self.sup.workspace(), p) {
                    Ok(text) => unknown.push((i, Some(text))),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => unknown.push((i, None)),
                    // Unreadable: the inner tool says why, or no baseline.
                    Err(_) => {}
                }
            }
        }
        let mut baselines = vec![Baselines::default(); files.len()];
        // Every file's text before the write, for its dependents: the
        // server may not hold it (a preview closed the file it had
        // opened, and its baseline is known).
        let before_texts: HashMap<usize, Option<String>> = files
            .iter()
            .enumerate()
            .map(|(i, (p, _))| match unknown.iter().find(|(u, _)| *u == i) {
                Some((_, text)) => (i, text.clone()),
                None => (i, read_document(self.sup.workspace(), p).ok()),
            })
            .collect();
        // A server that reads a document from the disk when it is opened
        // (fortls) is asked for its baseline before the write reaches the
        // disk: after it, the old text sent would not be what it checks.
        for (i, before) in &unknown {
            let (p, checkers) = &files[*i];
            let readers: Vec<&Checker> =
                checkers.iter().filter(|c| c.reads_disk_on_open()).collect();
            if let (Some(text), false) = (before, readers.is_empty()) {
                self.take_baselines(p, Some(text), readers, Instant::now(), &mut baselines[*i])
                    .await;
            }
        }
        // What the servers that publish for the whole project said before.
        let touched: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
        let published_before = crate::on_write::fallout::PublishedBefore::take(
            &self.sup,
            Instant::now(),
            &touched,
            crate::on_write::fallout::Stage::Written,
        )
        .await;
        // The inner tool first: a refused call returns before any other
        // server is started or waited for.
        let call_started = Instant::now();
        let mut out = self.inner.call(cx, args).await?;
        let written = Instant::now();
        for late in self.ledger.take_late() {
            out.push_text(late);
        }
        for (i, before) in unknown {
            let (p, checkers) = &files[i];
            let all = checkers.iter().collect();
            self.take_baselines(p, before.as_ref(), all, call_started, &mut baselines[i])
                .await;
        }
        // The files that use what the writes changed, judged while the
        // servers still hold the text before them.
        let mut dependents = Vec::new();
        for (i, (p, _)) in files.iter().enumerate() {
            let (Some(Some(old)), Ok(new)) =
                (before_texts.get(&i), read_document(self.sup.workspace(), p))
            else {
                continue;
            };
            let stage = crate::on_write::fallout::Stage::Written;
            if let Some(d) = Dependents::before(&self.sup, p, (old, &new), &touched, stage).await {
                dependents.push(d);
            }
        }
        let formats = self.format_files(&files, &mut out).await;
        let mut all_new = Vec::new();
        for (i, (p, checkers)) in files.iter().enumerate() {
            let server_before = formats[i].as_ref().and_then(|f| f.server_before.as_ref());
            let (text, new) = self
                .report(p, checkers, &baselines[i], server_before, call_started)
                .await;
            if let Some(t) = text {
                out.push_text(t);
            }
            all_new.extend(new);
        }
        let (other_files, not_judged) = crate::on_write::fallout::judged(
            &self.sup,
            (&published_before, &dependents),
            (&touched, written),
        )
        .await;
        let limits = (self.limits.per_file, self.limits.flood);
        if let Some(text) =
            crate::on_write::fallout::render(&other_files, limits, ("other", "write"))
        {
            out.push_text(text);
        }
        for note in not_judged {
            out.push_text(note);
        }
        if let Some(Value::Object(obj)) = out.structured.as_mut() {
            obj.insert(
                "new_diagnostics".into(),
                Value::Array(
                    all_new
                        .iter()
                        .map(|(d, src)| Value::String(diagnostics::render_labelled(d, src)))
                        .collect(),
                ),
            );
            let formatted: Vec<Value> = files
                .iter()
                .zip(&formats)
                .filter_map(|((p, _), f)| {
                    let f = f.as_ref()?;
                    Some(serde_json::json!({
                        "path": self.sup.rel(p),
                        "outcome": f.word(),
                        "by": f.by,
                    }))
                })
                .collect();
            if self.format.is_some() {
                obj.insert("format_on_write".into(), Value::Array(formatted));
            }
        }
        Ok(out)
    }
}

impl DiagnosticsOnWrite {
    /// The baselines of `p` for those of `checkers` the ledger does not
    /// know yet, each taken and put in the ledger: `before` is the file's
    /// text before the write (`None`: it did not exist). What is left to
    /// know goes into `out`.
    async fn take_baselines(
        &self,
        p: &Path,
        before: Option<&String>,
        checkers: Vec<&Checker>,
        call_started: Instant,
        out: &mut Baselines,
    ) {
        let todo: Vec<&Checker> = {
            let ledger = self.ledger.ledger.lock().expect("ledger");
            checkers
                .into_iter()
                .filter(|c| !ledger.knows(p, &c.id))
                .collect()
        };
        let baselines = futures::future::join_all(todo.iter().map(|c| async move {
            let mut waited = Duration::ZERO;
            let baseline = match before {
                None => Some((Vec::new(), false)),
                Some(text) => self
                    .baseline(c, p, text.clone(), call_started, &mut waited)
                    .await
                    .ok()
                    .map(|c| (c.diags, c.check_missing)),
            };
            (baseline, waited)
        }))
        .await;
        for (c, (baseline, waited)) in todo.into_iter().zip(baselines) {
            out.waited.insert(c.id.clone(), waited);
            match baseline {
                Some((b, missing)) => {
                    if missing {
                        out.check_missing.insert(c.id.clone());
                    }
                    self.ledger
                        .ledger
                        .lock()
                        .expect("ledger")
                        .baseline(p, &c.id, &b);
                }
                None => {
                    out.missing.insert(c.id.clone());
                }
            }
        }
    }

    /// Format each written file whose language has format on write, and
    /// say how it went in `out` (a file's line before its diagnostics).
    /// A standing reason (no formatter, a command not trusted) is said once
    /// per run.
    async fn format_files(
        &self,
        files: &[(PathBuf, Vec<Checker>)],
        out: &mut ToolOutput,
    ) -> Vec<Option<FileFormat>> {
        let mut formats = vec![None; files.len()];
        let Some(format) = &self.format else {
            return formats;
        };
        for (i, (p, checkers)) in files.iter().enumerate() {
            let Some((_, language)) = self.sup.catalog().for_file(p) else {
                continue;
            };
            for u in format.untrusted.iter().filter(|u| u.language == language) {
                let notice = format!("lsp: {}", u.notice());
                if self.ledger.first_time(&notice) {
                    out.push_text(notice);
                }
            }
            let Some(setting) = format.settings.get(&language).filter(|s| s.enabled) else {
                continue;
            };
            let Some(done) = formatter::format_file(&self.sup, p, setting, checkers).await else {
                continue;
            };
            let said = match &done.outcome {
                Outcome::NotFormatted(why) => self.ledger.first_time(&format!("format: {why}")),
                _ => true,
            };
            if said {
                out.push_text(done.render(&self.sup.rel(p)));
            }
            formats[i] = Some(done);
        }
        formats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A check result the cold baseline lacks is the write's only on a
    /// line the write changed: one between two distant changes may have
    /// been there before, and is said to be not known whether new.
    #[test]
    fn check_results_between_two_changes_are_not_known_whether_new() {
        let old: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        let written = old
            .replace("line 2\n", "changed 2\n")
            .replace("line 9\n", "changed 9\n");
        let changed = ChangedLines::between(&old, &written);
        let found: Vec<DiagLine> = [2, 5, 9].iter().map(|&n| line(n, "e")).collect();
        let (unknown, new) = not_known_whether_new(found.clone(), &found, Some(&changed));
        let lines = |d: &[DiagLine]| d.iter().map(|d| d.line).collect::<Vec<_>>();
        assert_eq!((lines(&unknown), lines(&new)), (vec![5], vec![2, 9]));
    }

    /// Nearest a changed hunk first (each hunk by itself: a problem
    /// between two distant changes is as far as the nearer one).
    #[test]
    fn new_problems_nearest_the_change_come_first() {
        let old: String = (1..=100).map(|n| format!("line {n}\n")).collect();
        let changing = |lines: &[u32]| {
            let written = lines.iter().fold(old.clone(), |t, n| {
                t.replace(&format!("line {n}\n"), &format!("changed {n}\n"))
            });
            ChangedLines::between(&old, &written)
        };
        let cases: &[(&[u32], &[u32])] = &[
            (&[71], &[70, 72, 100, 40, 1]),
            (&[10, 71], &[70, 72, 1, 100, 40]),
        ];
        for (changed, want) in cases {
            let mut new: Vec<Labelled> = [1, 40, 70, 72, 100]
                .iter()
                .map(|&n| (line(n, &format!("e{n}")), String::new()))
                .collect();
            nearest_first(&mut new, Some(&changing(changed)));
            let order: Vec<u32> = new.iter().map(|(d, _)| d.line).collect();
            assert_eq!(order, *want, "changed {changed:?}");
        }
    }
}
