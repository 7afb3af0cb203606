//! The rules for a save-time check (rust-analyzer's `cargo check`, which
//! it runs on save and reports through `$/progress`; see
//! [`crate::ServerEntry::save_check_progress`]): when its run is done and its
//! results have settled, what a baseline taken before a write holds of it
//! (the results published before the write began), and which problems
//! only it reports.
//!
//! The check reads the disk, not the document the server was sent, so a
//! run that overlaps a write sees the written file whatever version it
//! publishes under: nothing here counts such a run for the text before the
//! write. Never wrong, sometimes over-cautious: a file the check found clean
//! before a cold write is taken as unchecked.

use crate::catalog::ServerEntry;
use crate::client::{LspClient, OpenDoc, Published, RequestError};
use crate::diagnostics::{self, problems, DiagLine, NotReady, QUIET_WINDOW};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// What the server published for `uri` before the write began
/// (`call_started`), when its entry has a save-time check: that check ran
/// on the disk as it was then.
pub(crate) fn published_before_write(
    client: &LspClient,
    entry: &ServerEntry,
    uri: &str,
    call_started: Instant,
) -> Option<Published> {
    entry.save_check_progress.as_ref()?;
    client.published_before(uri, call_started)
}

/// Whether a baseline lacks the save-time check's results for the file as
/// it was. A cold server's check runs on the disk as written: no check of
/// the file as it was ended before the write began (a publish before it may
/// hold the server's own diagnostics only, or a check the write's save
/// interrupted). A check's run ending proves nothing by itself (a save
/// cancels a run, which then ends without results): where the entry names
/// the check's sources, its results for this file must have been published
/// before the write began. A file the check found clean is thus taken as
/// unchecked too: over-cautious, never wrong.
pub(crate) fn baseline_lacks_check(
    client: &LspClient,
    entry: &ServerEntry,
    checked_before: Option<&Published>,
    call_started: Instant,
) -> bool {
    let Some(prefix) = &entry.save_check_progress else {
        return false;
    };
    let sources = &entry.save_check_sources;
    let ended_before = client
        .progress_runs(prefix)
        .iter()
        .any(|r| r.ended.is_some_and(|e| e < call_started));
    let results_before = sources.is_empty()
        || checked_before
            .is_some_and(|p| p.diagnostics.iter().any(|d| from_check_source(d, sources)));
    !(ended_before && results_before)
}

/// A baseline's diagnostics with the save-time check's as they were before
/// the write. A baseline read without a save (pulled, or the version's
/// publish) lacks what only the check reports: its results from before the
/// write add it. What the check published since the write began is dropped
/// (by `sources`): the check reads the disk, which already holds the
/// written file (a check running then reported the write's own errors under
/// the old text's version, and the write was judged clean).
pub(crate) fn baseline_with_check_before(
    mut diags: Vec<lsp_types::Diagnostic>,
    sources: &[String],
    checked_before: Option<Published>,
) -> Vec<lsp_types::Diagnostic> {
    if !sources.is_empty() {
        diags.retain(|d| !from_check_source(d, sources));
    }
    for d in checked_before.map(|p| p.diagnostics).unwrap_or_default() {
        if !diags.contains(&d) {
            diags.push(d);
        }
    }
    diags
}

/// When a save-time check run counts as the write's: one begun once the
/// written file was on disk, whether the save started it or not
/// (rust-analyzer may run one between the write and the save and start none
/// on the save). Never before the write call began (`call_started`): the
/// file's modification time comes from the kernel's coarse clock and can
/// read milliseconds before the write, and a run begun that early (a first
/// check seen running just before the call) may have read the file as it
/// was, so it is not counted; the save's run, or the one a nudge asks for,
/// is waited for instead.
pub(crate) fn counts_since(path: &Path, call_started: Instant, saved: Instant) -> Instant {
    written_at(path)
        .map_or(saved, |w| w.min(saved))
        .max(call_started)
}

/// Fresh diagnostics of `doc`, and after a save with a save-time check
/// (`check`: its progress token prefix), the state once that check ended.
/// A file's diagnostics once fresh: all of them, and those of the server's
/// own pass (before a save-time check added its results).
pub(crate) struct Settled {
    pub diags: Vec<lsp_types::Diagnostic>,
    pub own: Vec<lsp_types::Diagnostic>,
}

/// `(since, saved)`: a save-time check run begun at `since` or later counts;
/// the bound runs from `saved`. `check`: the check's progress prefix, the
/// sources of its diagnostics and the notification that starts one (see
/// [`crate::ServerEntry::save_check_nudge`]).
pub(crate) async fn settled(
    client: &LspClient,
    uri: &str,
    doc: &OpenDoc,
    check: Option<(&str, &[String], Option<&str>)>,
    (since, saved): (Instant, Instant),
    bound: Duration,
) -> Result<Settled, NotReady> {
    let deadline = tokio::time::Instant::from_std(saved + bound);
    let fresh = diagnostics::fresh(client, uri, doc, bound).await?;
    let Some((prefix, sources, nudge)) = check else {
        return Ok(Settled {
            own: fresh.diagnostics.clone(),
            diags: fresh.diagnostics,
        });
    };
    // Until a check's results have settled with no other check begun.
    loop {
        let nudge = nudge.map(|method| (method, uri));
        save_check_done(client, (prefix, sources), since, deadline, nudge).await?;
        if check_results_settled(client, uri, prefix, deadline).await {
            break;
        }
    }
    let diags = match client.published(uri) {
        Some(p) if p.version.is_none_or(|v| v >= doc.version) => p.diagnostics,
        _ => fresh.diagnostics.clone(),
    };
    Ok(Settled {
        diags,
        own: fresh.diagnostics,
    })
}

/// When the file at `path` was last written, as an `Instant` (from its
/// modification time).
fn written_at(path: &Path) -> Option<Instant> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let ago = std::time::SystemTime::now().duration_since(modified).ok()?;
    Instant::now().checked_sub(ago)
}

/// Of a settled file's diagnostics, those only the save-time check
/// reported (not in `own`, the server's own pass), as the model reads them,
/// and the check's name (its progress title: `cargo check`).
pub(crate) fn check_only(
    client: &LspClient,
    (prefix, sources): (&str, &[String]),
    shown: &str,
    diags: &[lsp_types::Diagnostic],
    own: &[lsp_types::Diagnostic],
    doc: &OpenDoc,
) -> (String, Vec<DiagLine>) {
    let name = client
        .progress_runs(prefix)
        .last()
        .map(|r| r.title.clone())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "the save-time check".into());
    // By source where the entry names the check's: a publish of the
    // server's own pass may still hold an earlier check's results.
    let only: Vec<_> = diags
        .iter()
        .filter(|d| match sources {
            [] => !own.contains(d),
            _ => from_check_source(d, sources),
        })
        .cloned()
        .collect();
    (name, problems(shown, &only, doc, client.encoding))
}

/// Whether `d` came from the save-time check (its source is one of the
/// entry's `save_check_sources`).
pub(crate) fn from_check_source(d: &lsp_types::Diagnostic, sources: &[String]) -> bool {
    d.source.as_ref().is_some_and(|s| sources.contains(s))
}

/// Splits the problems a write's check found new, for a checker whose
/// baseline lacks its save-time check (`only`: what only that check
/// reports), into those not known to be new and those that are: a check
/// result on a line the write changed is the write's; one elsewhere may
/// have been there before, which no check of the old file can tell now.
pub(crate) fn not_known_whether_new(
    found: Vec<DiagLine>,
    only: &[DiagLine],
    changed: Option<&crate::on_write::changed::ChangedLines>,
) -> (Vec<DiagLine>, Vec<DiagLine>) {
    found
        .into_iter()
        .partition(|d| only.contains(d) && changed.is_none_or(|c| !c.contains(d.line)))
}

/// rust-analyzer's proof after a save: a `cargo check` (flycheck) run whose
/// progress began after `saved` has ended having done work (a run cancelled
/// by a restart ends the same way, and its restart may begin more than a
/// quiet window later: seen 211 ms under load) and the server is quiescent
/// (its results may still be on their way: see [`check_results_settled`]).
/// `(token_prefix, sources)`: the check's progress prefix and the sources
/// of its diagnostics.
/// `Err` when the bound ran out first.
pub(crate) async fn save_check_done(
    client: &LspClient,
    (token_prefix, sources): (&str, &[String]),
    saved: Instant,
    deadline: tokio::time::Instant,
    nudge: Option<(&str, &str)>,
) -> Result<(), NotReady> {
    let mut activity = client.subscribe_activity();
    // A failed check's results may be published after its end: they, too,
    // prove the run did work.
    let mut published = client.subscribe_diagnostics();
    let mut nudged = false;
    loop {
        if let Some(why) = client.gone() {
            return Err(RequestError::Gone(why).into());
        }
        let runs = client.progress_runs(token_prefix);
        let idle = runs.iter().all(|r| r.ended.is_some()) && !client.not_quiescent();
        if idle
            && runs
                .iter()
                .any(|r| r.begun >= saved && r.ended.is_some() && r.did_work(sources))
        {
            return Ok(());
        }
        // No check of the written file begun and none running: the save
        // started none (rust-analyzer may skip it when a check ran between
        // the write and the save, on text it cannot tell old from new). Ask
        // for one, once, after a quiet moment for the save's own to begin.
        let quiet_since_save = Instant::now().saturating_duration_since(saved) >= QUIET_WINDOW;
        if let (Some((method, uri)), true, false, true) = (nudge, idle, nudged, quiet_since_save) {
            client.notify(method, json!({"textDocument": {"uri": uri}}));
            nudged = true;
        }
        let wake = if nudged || !idle {
            deadline
        } else {
            deadline.min(tokio::time::Instant::from_std(saved + QUIET_WINDOW))
        };
        let woke = tokio::select! {
            r = tokio::time::timeout_at(wake, activity.changed()) => r.is_ok(),
            r = tokio::time::timeout_at(wake, published.changed()) => r.is_ok(),
        };
        if !woke && tokio::time::Instant::now() >= deadline {
            let waited = Instant::now().saturating_duration_since(saved);
            return Err(NotReady::Timeout(waited));
        }
    }
}

/// How long a file must have had no new publish after a save-time check's
/// end before its results count as complete. Longer than [`QUIET_WINDOW`]:
/// rust-analyzer publishes a check's results file by file over several
/// loop turns, and under load (CI, load 5) a turn between a partial set
/// (`[line 5]`) and the whole (`[line 5, line 11]`) took more than 200 ms,
/// so the partial set was taken and the write's new error was missed.
const CHECK_SETTLE_WINDOW: Duration = Duration::from_millis(600);

/// After a save-time check's run ended: rust-analyzer 1.95 publishes the
/// run's results after its progress end, file by file over several loop
/// turns (seen: end, then `[E0382 line 4]`, then `[line 4, line 10]`), so
/// the publish in force at the end may hold none of them. Waits until `uri`
/// has had no new publish for [`CHECK_SETTLE_WINDOW`], at most `deadline`:
/// `true`.
/// `false` when another run of the check began meanwhile (it clears the
/// results first): wait for that one to end.
pub(crate) async fn check_results_settled(
    client: &LspClient,
    uri: &str,
    token_prefix: &str,
    deadline: tokio::time::Instant,
) -> bool {
    let runs = client.progress_runs(token_prefix).len();
    let mut last = client.published(uri).map(|p| p.seq);
    let mut changes = client.subscribe_diagnostics();
    let mut activity = client.subscribe_activity();
    loop {
        let quiet_until = (tokio::time::Instant::now() + CHECK_SETTLE_WINDOW).min(deadline);
        // Any publish or progress wakes the wait; only a publish for `uri`
        // restarts the window, and a new run ends it.
        loop {
            let woke = tokio::select! {
                r = tokio::time::timeout_at(quiet_until, changes.changed()) => r.map(|r| r.is_ok()),
                r = tokio::time::timeout_at(quiet_until, activity.changed()) => r.map(|r| r.is_ok()),
            };
            match woke {
                Ok(true) => {}
                // Quiet long enough, or the server is gone.
                Err(_) | Ok(false) => return true,
            }
            if client.progress_runs(token_prefix).len() != runs
                || client
                    .progress_runs(token_prefix)
                    .iter()
                    .any(|r| r.ended.is_none())
            {
                return false;
            }
            let now = client.published(uri).map(|p| p.seq);
            if now != last {
                last = now;
                break;
            }
        }
    }
}
