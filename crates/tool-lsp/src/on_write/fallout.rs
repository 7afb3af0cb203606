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
//!
//! A change is judged [`Stage::Written`] (on disk and saved: a write, a
//! rename, an accepted staged change) or [`Stage::Unsaved`] (its texts sent
//! as unsaved documents: a preview). A server that judges other files only
//! from the disk (rust-analyzer's `cargo check`; clangd, which reads a
//! header from disk when it opens a file that includes it) cannot judge an
//! unsaved change there: its other files are named not computed.

use crate::catalog::ServerEntry;
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

/// Where a change is when the servers judge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// On disk and saved (a write, a rename, an accepted staged change).
    Written,
    /// Sent as unsaved documents only (a preview): the disk still holds
    /// the text before it.
    Unsaved,
}

/// How a server of `entry` judges other files only from the disk, said as
/// the model reads it; `None` when it judges them from the documents it
/// was sent.
pub(crate) fn judges_other_files_from_disk(entry: &ServerEntry) -> Option<&'static str> {
    if entry.save_check_progress.is_some() {
        Some("by its save-time check, which reads the disk")
    } else if entry.dependents_by_reopen {
        Some("by opening them, which reads the changed file from the disk")
    } else {
        None
    }
}

/// One server judged: what it had published before a write.
struct Judged {
    client: Arc<LspClient>,
    before: HashMap<String, Published>,
    /// How long after a change it publishes for the other files.
    delay: Duration,
    /// The progress prefix of its save-time check (`cargo check`), whose
    /// run after the write is waited for, and the sources of its
    /// diagnostics.
    check: Option<(String, Vec<String>)>,
    /// The title its diagnosis of a change runs under (see
    /// `ServerEntry::project_diagnostics_progress`): that run's end, not a
    /// delay, says its publishes are in.
    diagnosis: Option<String>,
    /// Whether the change went to it (a file it serves was touched): a
    /// server sent nothing diagnoses nothing, and is not waited for.
    changed: bool,
}

/// Each judged server's publishes before a write.
pub(crate) struct PublishedBefore {
    servers: Vec<Judged>,
    /// The servers of written files that publish for the whole project but
    /// whose state before the write was not known (not running, or their
    /// first check had not ended): what they publish after it cannot be
    /// told new, and the answer says so.
    unknown: Vec<String>,
    /// Of an unsaved change, the servers of its files that judge other
    /// files only from the disk, each with how (see
    /// [`judges_other_files_from_disk`]).
    disk_only: Vec<(String, &'static str)>,
}

/// Whether a server of `entry` publishes for the project's files beyond
/// those open in it (rust-analyzer's save-time check, gopls's package
/// diagnostics).
fn publishes_for_project(entry: &ServerEntry) -> bool {
    entry.save_check_progress.is_some() || entry.project_diagnostics_delay_ms.is_some()
}

/// Whether `root` holds a file with one of `extensions` besides
/// `touched` (a walk that stops at the first; at most
/// [`OTHER_SOURCES_LOOKED_AT`] entries, past which there may be one).
fn has_other_sources(
    root: &std::path::Path,
    extensions: &BTreeMap<String, String>,
    touched: &[PathBuf],
) -> bool {
    for (seen, entry) in crate::source_walk::source_walk(root)
        .build()
        .flatten()
        .enumerate()
    {
        if seen >= OTHER_SOURCES_LOOKED_AT {
            return true;
        }
        let path = entry.path();
        let ours = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.contains_key(e));
        if ours
            && entry.file_type().is_some_and(|t| t.is_file())
            && !touched.iter().any(|t| t == path)
        {
            return true;
        }
    }
    false
}

/// How many entries of a root are looked at for another source file.
const OTHER_SOURCES_LOOKED_AT: usize = 10_000;

impl PublishedBefore {
    /// What each running server whose state is known had published, taken
    /// before the change (`call_started`) of `touched`, which is judged at
    /// `stage`.
    pub(crate) async fn take(
        sup: &LspSupervisor,
        call_started: Instant,
        touched: &[PathBuf],
        stage: Stage,
    ) -> PublishedBefore {
        let mut servers = Vec::new();
        for slot in sup.slots() {
            let Some(client) = slot.running_client().await else {
                continue;
            };
            if stage == Stage::Unsaved && slot.entry.save_check_progress.is_some() {
                continue;
            }
            // tsserver's publishes are no judgement: a syntactic-only one
            // comes first, and an unchanged set is not published again (a
            // file's standing error read as new after a rename, 1 run in 5
            // under load); its dependents are judged by its own check.
            if client.offers_command(crate::diagnostics::TSSERVER_REQUEST) {
                continue;
            }
            let diagnosis = slot.entry.project_diagnostics_progress.clone();
            let known = match (&slot.entry.save_check_progress, &diagnosis) {
                (Some(prefix), _) => client.progress_runs(prefix).iter().any(|r| {
                    r.ended.is_some_and(|e| e < call_started)
                        && r.did_work(&slot.entry.save_check_sources)
                }),
                // Once the diagnosis of an earlier change (or of the
                // workspace's first load) has ended, its publishes are the
                // state before this change.
                (None, Some(title)) => {
                    let deadline = tokio::time::Instant::now() + sup.timeouts.diagnostics;
                    diagnosis_done(&client, title, None, deadline).await
                        && client
                            .progress_runs_titled(title)
                            .iter()
                            .any(|r| r.ended.is_some())
                }
                // Started by the change itself (a preview starts the
                // servers of its files): its first publishes are still
                // coming, the project's standing problems among them (seen
                // on gorilla/mux: a cold preview missed mux_test.go's
                // three broken calls, which came after the settle).
                (None, None) => client.diag_seq() > 0 && client.started < call_started,
            };
            if known {
                let changed = touched.iter().any(|p| {
                    sup.server_slot_for(p)
                        .is_ok_and(|(s, _)| s.entry.id == slot.entry.id && s.root == slot.root)
                });
                servers.push(Judged {
                    before: client.published_all(),
                    delay: Duration::from_millis(
                        slot.entry.project_diagnostics_delay_ms.unwrap_or(0),
                    ),
                    check: slot
                        .entry
                        .save_check_progress
                        .clone()
                        .map(|prefix| (prefix, slot.entry.save_check_sources.clone())),
                    diagnosis,
                    changed,
                    client,
                });
            }
        }
        let mut unknown = Vec::new();
        let mut disk_only: Vec<(String, &'static str)> = Vec::new();
        for p in touched {
            let Ok((slot, _)) = sup.server_slot_for(p) else {
                continue;
            };
            let from_disk = match stage {
                Stage::Unsaved => judges_other_files_from_disk(&slot.entry),
                Stage::Written => None,
            };
            if !publishes_for_project(&slot.entry) && from_disk.is_none() {
                continue;
            }
            let (root, extensions) = (slot.root.clone(), slot.entry.extensions.clone());
            let touched = touched.to_vec();
            let others = tokio::task::spawn_blocking(move || {
                has_other_sources(&root, &extensions, &touched)
            })
            .await
            .unwrap_or(true);
            if !others {
                continue;
            }
            if let Some(how) = from_disk {
                let name = match slot.running_client().await {
                    Some(c) => c.name.clone(),
                    None => format!("{} ({})", slot.entry.id, slot.display()),
                };
                if !disk_only.iter().any(|(n, _)| *n == name) {
                    disk_only.push((name, how));
                }
                continue;
            }
            let name = match slot.running_client().await {
                Some(c) if servers.iter().any(|j| Arc::ptr_eq(&j.client, &c)) => continue,
                Some(c) => c.name.clone(),
                None => format!("{} ({})", slot.entry.id, slot.display()),
            };
            if !unknown.contains(&name) {
                unknown.push(name);
            }
        }
        tracing::debug!(
            judged = servers.len(),
            ?unknown,
            "fallout: the servers' state before the change"
        );
        PublishedBefore {
            servers,
            unknown,
            disk_only,
        }
    }

    /// Once a preview has put the servers' view back to the disk's: until
    /// each judged server has published again for the files it changed
    /// meanwhile (after its delay, then quiet a moment), so that a later
    /// change's state before it is the disk's, never the preview's.
    pub(crate) async fn settle_after_restore(&self, sup: &LspSupervisor, restored: Instant) {
        let deadline = tokio::time::Instant::from_std(restored + sup.timeouts.diagnostics);
        for judged in self.servers.iter().filter(|j| j.changed) {
            match &judged.diagnosis {
                Some(title) => {
                    diagnosis_done(&judged.client, title, Some(restored), deadline).await;
                }
                None => settle(&judged.client, restored + judged.delay).await,
            }
        }
    }

    /// The new problems in files other than `touched`, by file as shown,
    /// once each server's save-time check begun after `written` has ended
    /// (within the diagnostics bound), its publishes have been quiet a
    /// moment, and its delay since `written` has passed; and a line for
    /// each server whose other files were not judged.
    pub(crate) async fn new_problems(
        &self,
        sup: &LspSupervisor,
        (touched, written): (&[PathBuf], Instant),
    ) -> (BTreeMap<String, Vec<Labelled>>, Vec<String>) {
        let touched: Vec<String> = touched.iter().map(|p| file_uri(p)).collect();
        let mut per_file: BTreeMap<String, Vec<Labelled>> = BTreeMap::new();
        let mut notes: Vec<String> = self
            .unknown
            .iter()
            .map(|name| {
                format!(
                    "lsp: other files not checked: {name} had not finished its first check of the project when this change began (later changes are judged)"
                )
            })
            .collect();
        notes.extend(self.disk_only.iter().map(|(name, how)| {
            format!(
                "lsp: other files not checked: {name} judges them only {how}, and a preview writes nothing (accepting the change checks them)"
            )
        }));
        let deadline = tokio::time::Instant::from_std(written + sup.timeouts.diagnostics);
        for judged in &self.servers {
            let Judged {
                client,
                before,
                delay,
                check,
                diagnosis,
                changed,
            } = judged;
            if let Some((prefix, sources)) = check {
                if crate::on_write::save_check::save_check_done(
                    client,
                    (prefix, sources),
                    written,
                    deadline,
                    None,
                )
                .await
                .is_err()
                {
                    notes.push(format!(
                        "lsp: other files not checked: the check of {} after this change had not ended in {} s",
                        client.name,
                        sup.timeouts.diagnostics.as_secs()
                    ));
                    continue;
                }
            }
            match (diagnosis, changed) {
                (Some(title), true) => {
                    if !diagnosis_done(client, title, Some(written), deadline).await {
                        notes.push(format!(
                            "lsp: other files not checked: the diagnosis of {} after this change had not ended in {} s",
                            client.name,
                            sup.timeouts.diagnostics.as_secs()
                        ));
                        continue;
                    }
                }
                // Sent nothing: it publishes nothing new.
                (Some(_), false) => {}
                (None, _) => settle(client, written + *delay).await,
            }
            tracing::debug!(
                server = %client.name,
                files = client.published_all().len(),
                "fallout: publishes after the change"
            );
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
        (per_file, notes)
    }
}

/// Before a change that is not a write of the model's (a rename): wait,
/// within `bound`, until the running servers of `paths` that publish for
/// the whole project have a state to judge it against (rust-analyzer's
/// first `cargo check` has ended, started if none ran; gopls has
/// published), so that its fallout can be told. At [`Stage::Unsaved`], a
/// server that judges other files only from the disk is not waited for.
pub(crate) async fn await_first_check(
    sup: &LspSupervisor,
    paths: &[PathBuf],
    bound: Duration,
    stage: Stage,
) {
    let deadline = tokio::time::Instant::now() + bound;
    let mut seen: Vec<Arc<LspClient>> = Vec::new();
    for p in paths {
        let Ok((slot, _)) = sup.server_slot_for(p) else {
            continue;
        };
        let from_disk = judges_other_files_from_disk(&slot.entry).is_some();
        if !publishes_for_project(&slot.entry) || (stage == Stage::Unsaved && from_disk) {
            continue;
        }
        let Some(client) = slot.running_client().await else {
            continue;
        };
        if seen.iter().any(|c| Arc::ptr_eq(c, &client)) {
            continue;
        }
        seen.push(client.clone());
        if let Some(prefix) = &slot.entry.save_check_progress {
            let uri = file_uri(p);
            let nudge = slot
                .entry
                .save_check_nudge
                .as_deref()
                .map(|m| (m, uri.as_str()));
            let done = crate::on_write::save_check::save_check_done(
                &client,
                (prefix, &slot.entry.save_check_sources),
                client.started,
                deadline,
                nudge,
            )
            .await;
            tracing::debug!(server = %client.name, ?done, "fallout: first check");
        } else {
            let mut published = client.subscribe_diagnostics();
            while client.diag_seq() == 0 && client.gone().is_none() {
                if tokio::time::timeout_at(deadline, published.changed())
                    .await
                    .is_err()
                {
                    break;
                }
            }
        }
    }
}

/// What a change broke, once it is on the disk and told to the servers:
/// the project-wide servers' new problems in files other than `touched`
/// (see [`PublishedBefore::new_problems`]) and each set of dependents' new
/// problems, by file, with a line for each part that was not judged.
pub(crate) async fn judged(
    sup: &LspSupervisor,
    (before, dependents): (&PublishedBefore, &[crate::on_write::dependents::Dependents]),
    (touched, written): (&[PathBuf], Instant),
) -> (BTreeMap<String, Vec<Labelled>>, Vec<String>) {
    let (mut per_file, mut notes) = before.new_problems(sup, (touched, written)).await;
    for d in dependents {
        let (new, judged, note) = d.after(sup).await;
        // A dependent's own judgement (its state taken just before the
        // change) stands for that file over the publishes compared.
        for file in judged {
            per_file.remove(&file);
        }
        for (file, lines) in new {
            per_file.entry(file).or_default().extend(lines);
        }
        notes.extend(note);
    }
    (per_file, notes)
}

/// The answer's lines for the new problems in other files (none when there
/// are none): a headline (`… in 2 other files after this write:`; `files`
/// says what the files are), then each file's lines, at most
/// [`FILES_AT_MOST`] files.
pub(crate) fn render(
    per_file: &BTreeMap<String, Vec<Labelled>>,
    (per_file_cap, flood): (usize, usize),
    (files, change): (&str, &str),
) -> Option<String> {
    if per_file.is_empty() {
        return None;
    }
    let count: usize = per_file.values().map(Vec::len).sum();
    let mut out = vec![format!(
        "lsp: {} in {} after this {change}:",
        tool_core::format::plural(count, "new problem", "new problems"),
        tool_core::format::plural(
            per_file.len(),
            format!("{files} file").trim_start(),
            format!("{files} files").trim_start()
        )
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

/// Until the runs of `client` whose title starts with `title` have all
/// ended and, with `since`, one begun at or after it has (the diagnosis of
/// a change sent since): `true`; `false` when `deadline` came first or the
/// server is gone. The server publishes a run's diagnostics before its
/// end, so they are in when it is seen.
async fn diagnosis_done(
    client: &LspClient,
    title: &str,
    since: Option<Instant>,
    deadline: tokio::time::Instant,
) -> bool {
    let mut activity = client.subscribe_activity();
    loop {
        if client.gone().is_some() {
            return false;
        }
        let runs = client.progress_runs_titled(title);
        let idle = runs.iter().all(|r| r.ended.is_some());
        let begun = since.is_none_or(|since| runs.iter().any(|r| r.begun >= since));
        if idle && begun {
            return true;
        }
        match tokio::time::timeout_at(deadline, activity.changed()).await {
            Ok(Ok(())) => {}
            _ => return false,
        }
    }
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
