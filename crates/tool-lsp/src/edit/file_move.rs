//! `lsp_rename` with `file` and `new_path`: a file or a folder moved, with
//! the edits the language servers give for it.
//!
//! `workspace/willRenameFiles` goes to every server that handles one of the
//! moved files (and offers it); their edits are played in memory against
//! the old paths and merged, then the move is played on top, so the whole
//! change — edits and move — is one [`tool_core::files::FileTransaction`]:
//! written entirely, or rolled back entirely. `workspace/didRenameFiles`
//! follows a written move. With `stage`, the same change is staged for
//! `resolve` instead, and [`ResolveAnnouncingMoves`] sends
//! `didRenameFiles` when `resolve` writes it — never at staging, nor for a
//! change discarded or refused.
//!
//! Invariants: the target does not exist and is not inside the source; a
//! folder holds at most [`MAX_MOVED_FILES`] files, each a regular UTF-8
//! text file (a link or a binary file is refused, naming it); nothing is
//! written before every server has answered.

use crate::args::RenameArgs;
use crate::client::{file_uri, LspClient};
use crate::diagnostics::{problems, DiagLine};
use crate::edit::staged_edit;
use crate::on_write::RunLedger;
use crate::planned_edit::{self, PlannedEdit};
use crate::supervisor::{LspSupervisor, Target};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tool_core::files::TransactionError;
use tool_core::format::plural;
use tool_core::fs::FileKind;
use tool_core::staging::{ResolveAction, ResolveArgs, StagedChange};
use tool_core::{
    async_trait, CallContext, StagingLink, Tool, ToolError, ToolOutput, ToolSpec, Workspace,
};

/// The most files a folder move takes.
pub(crate) const MAX_MOVED_FILES: usize = 1000;

/// Every (from, to) pair of regular files a move of `from` to `to` makes.
fn moved_files(
    ws: &Workspace,
    from: &Path,
    to: &Path,
) -> Result<Vec<(PathBuf, PathBuf)>, ToolError> {
    let shown = ws.relative(from);
    match ws.dir().kind(from)? {
        Some(FileKind::Regular) => return Ok(vec![(from.to_path_buf(), to.to_path_buf())]),
        Some(FileKind::Directory) => {}
        Some(kind) => {
            return Err(ToolError::bad_args(format!(
                "`{shown}` is {}, not a file or a folder; nothing was moved",
                kind.a()
            )))
        }
        None => {
            return Err(ToolError::bad_args(format!(
                "`{shown}` does not exist in the workspace; nothing was moved"
            )))
        }
    }
    let mut out = Vec::new();
    let mut dirs = vec![from.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| ToolError::failed(format!("cannot list {}: {e}", ws.relative(&dir))))?;
        for e in entries {
            let e = e.map_err(|e| ToolError::failed(format!("cannot list {shown}: {e}")))?;
            let path = e.path();
            let kind = e
                .file_type()
                .map_err(|e| ToolError::failed(format!("cannot list {shown}: {e}")))?;
            if kind.is_dir() {
                dirs.push(path);
            } else if kind.is_file() {
                let rel = path.strip_prefix(from).expect("beneath the folder");
                out.push((path.clone(), to.join(rel)));
                if out.len() > MAX_MOVED_FILES {
                    return Err(ToolError::refused(format!(
                        "`{shown}` holds more than {} files, more than one move takes; nothing was moved — move it with a shell command and fix imports with lsp_rename on the files that need it",
                        tool_core::format::thousands(MAX_MOVED_FILES)
                    )));
                }
            } else {
                return Err(ToolError::refused(format!(
                    "`{}` is not a regular file (a link or a special file), which this move cannot carry; nothing was moved",
                    ws.relative(&path)
                )));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The servers that handle any of the moved files, each with its files.
async fn servers_for(
    sup: &LspSupervisor,
    pairs: &[(PathBuf, PathBuf)],
) -> Vec<(Target, Vec<(PathBuf, PathBuf)>)> {
    let mut out: Vec<(Target, Vec<(PathBuf, PathBuf)>)> = Vec::new();
    for (from, to) in pairs {
        if sup.catalog().for_file(from).is_none() {
            continue;
        }
        // A file no server can run for here gets no edits from one.
        let Ok(target) = sup.target_for(from).await else {
            continue;
        };
        match out
            .iter_mut()
            .find(|(t, _)| Arc::ptr_eq(&t.client, &target.client))
        {
            Some((_, files)) => files.push((from.clone(), to.clone())),
            None => out.push((target, vec![(from.clone(), to.clone())])),
        }
    }
    out
}

fn file_renames(files: &[(PathBuf, PathBuf)]) -> Value {
    json!({"files": files
        .iter()
        .map(|(f, t)| json!({"oldUri": file_uri(f), "newUri": file_uri(t)}))
        .collect::<Vec<_>>()})
}

fn offers_will_rename(client: &LspClient) -> bool {
    client.capabilities.will_rename_files()
}

/// `workspace/didRenameFiles` for written moves, to a server that asks for it.
fn did_rename(client: &LspClient, files: &[(PathBuf, PathBuf)]) {
    if client.capabilities.did_rename_files() {
        client.notify("workspace/didRenameFiles", file_renames(files));
    }
}

/// The (from, to) pairs of regular files a staged change moves: each file
/// it deletes at or beneath one of its moves' sources, with its place at
/// the target.
pub(crate) fn staged_move_pairs(ws: &Workspace, change: &StagedChange) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for m in &change.moves {
        let (from, to) = (ws.root().join(&m.from), ws.root().join(&m.to));
        for f in change.files.iter().filter(|f| !f.remains()) {
            if let Ok(rest) = f.path.strip_prefix(&from) {
                let target = if rest.as_os_str().is_empty() {
                    to.clone()
                } else {
                    to.join(rest)
                };
                out.push((f.path.clone(), target));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A file outside a staged change that mentions a moved file's name: an
/// import of it that no server edited, maybe.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct UneditedMention {
    pub path: PathBuf,
    /// The moved file's stem, as mentioned.
    pub stem: String,
    /// The moved file, relative.
    pub moved: String,
}

impl UneditedMention {
    pub(crate) fn describe(&self, ws: &Workspace) -> String {
        format!(
            "{} (mentions `{}` of the moved {})",
            ws.relative(&self.path),
            self.stem,
            self.moved
        )
    }
}

/// The files of the moved files' languages, outside `change`, that mention
/// a moved file's stem (a bounded walk, see [`crate::mentions::scan`]),
/// by path, each once.
pub(crate) async fn unedited_mentions(
    sup: &LspSupervisor,
    change: &StagedChange,
    moves: &[(PathBuf, PathBuf)],
) -> Vec<UneditedMention> {
    let ws = sup.workspace().clone();
    let mut out: Vec<UneditedMention> = Vec::new();
    for (from, _) in moves {
        let Some((entry, _)) = sup.catalog().for_file(from) else {
            continue;
        };
        // A folder's own module file is imported by the folder's name.
        let named_by_folder = ["mod", "index", "__init__"];
        let stem = match from.file_stem().and_then(|s| s.to_str()) {
            Some(s) if named_by_folder.contains(&s) => from
                .parent()
                .and_then(|d| d.file_name())
                .and_then(|s| s.to_str()),
            other => other,
        };
        let Some(stem) = stem else {
            continue;
        };
        let extensions: Vec<String> = entry.extensions.keys().cloned().collect();
        let (w, ident, root) = (ws.clone(), stem.to_string(), ws.root().to_path_buf());
        let Ok(scan) = tokio::task::spawn_blocking(move || {
            crate::mentions::scan(&w, &root, &extensions, &ident)
        })
        .await
        else {
            continue;
        };
        for m in scan.files {
            if change.files.iter().all(|f| f.path != m.path) {
                out.push(UneditedMention {
                    path: m.path,
                    stem: stem.to_string(),
                    moved: ws.relative(from),
                });
            }
        }
    }
    out.sort();
    out.dedup_by(|a, b| a.path == b.path);
    out
}

/// Tell the servers of moves `resolve` just wrote: `didRenameFiles` (to
/// those that ask for it), the old documents closed, and the files gone
/// and created announced as watched-file events. The moved and edited
/// files' new texts reach the servers through diagnostics on write, which
/// wraps `resolve` outside this.
async fn announce_written_moves(sup: &LspSupervisor, pairs: &[(PathBuf, PathBuf)]) {
    for (target, files) in servers_for(sup, pairs).await {
        let client = &target.client;
        did_rename(client, &files);
        let mut watched = Vec::new();
        for (from, to) in &files {
            client.close(&file_uri(from)).await;
            watched.push(json!({"uri": file_uri(from), "type": 3}));
            watched.push(json!({"uri": file_uri(to), "type": 1}));
        }
        client.notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": watched}),
        );
    }
}

/// `resolve`, followed by the servers: a change it accepts that moves
/// files is announced to them as a move written at once is
/// ([`announce_written_moves`]), and a moved folder left empty is removed.
/// Files outside the change that mention a moved file (an import no server
/// edited) are checked before and after the write, and what the move
/// broke in them is reported, as diagnostics on write does for the files
/// written.
pub(crate) struct ResolveAnnouncingMoves {
    inner: Arc<dyn Tool>,
    sup: Arc<LspSupervisor>,
    link: StagingLink,
    ledger: Arc<RunLedger>,
}

impl ResolveAnnouncingMoves {
    pub(crate) fn new(
        inner: Arc<dyn Tool>,
        sup: Arc<LspSupervisor>,
        link: StagingLink,
        ledger: Arc<RunLedger>,
    ) -> Self {
        ResolveAnnouncingMoves {
            inner,
            sup,
            link,
            ledger,
        }
    }

    /// A file's problems as its server reports them now, and who reports.
    async fn problems_now(
        &self,
        path: &Path,
        reopen: bool,
    ) -> Result<(String, Vec<DiagLine>), String> {
        let target = self.sup.target_for(path).await.map_err(|e| e.to_string())?;
        let client = &target.client;
        let uri = file_uri(path);
        let bound = self.sup.timeouts.diagnostics;
        // Its text does not change, only what it imports: a server that
        // only publishes is asked by closing and opening it again, and its
        // answer is the first publish after that.
        let on_demand = client.pull_diagnostics()
            || client.offers_command(crate::diagnostics::TSSERVER_REQUEST);
        if reopen && !on_demand {
            client.close(&uri).await;
        }
        let doc = client
            .sync_file(path, &target.language_id)
            .await
            .map_err(|e| format!("cannot read it: {e}"))?;
        let diags = if on_demand || !reopen {
            crate::diagnostics::fresh(client, &uri, &doc, bound)
                .await
                .map_err(|e| e.to_string())?
                .diagnostics
        } else {
            let mut seq = client.subscribe_diagnostics();
            let deadline = tokio::time::Instant::now() + bound;
            loop {
                match client.published(&uri) {
                    Some(p) if p.seq > doc.sent_at_seq => break p.diagnostics,
                    _ => {}
                }
                if tokio::time::timeout_at(deadline, seq.changed())
                    .await
                    .is_err()
                {
                    return Err(format!("no diagnostics after {} ms", bound.as_millis()));
                }
            }
        };
        let rel = self.sup.rel(path);
        Ok((
            target.slot.entry.id.clone(),
            problems(&rel, &diags, &doc, client.encoding),
        ))
    }
}

#[async_trait]
impl Tool for ResolveAnnouncingMoves {
    fn spec(&self) -> ToolSpec {
        self.inner.spec()
    }

    fn describe_call(&self, args: &Value) -> String {
        self.inner.describe_call(args)
    }

    fn writes(&self, args: &Value) -> Vec<String> {
        self.inner.writes(args)
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        // Read before the call: an accepted change leaves the store.
        let ws = self.sup.workspace();
        let accepted = match tool_core::parse_args::<ResolveArgs>(args.clone()) {
            Ok(a) if a.action == ResolveAction::Accept => self
                .link
                .store()
                .and_then(|s| s.staged_change(a.edit_id.trim())),
            _ => None,
        };
        let Some(change) = accepted else {
            return self.inner.call(cx, args).await;
        };
        let pairs = staged_move_pairs(ws, &change);
        // Files that mention a moved file and that no server edited: their
        // state before the write is their baseline (when the run has none),
        // so that what the move breaks in them is reported after it.
        let mentions: Vec<UneditedMention> = unedited_mentions(&self.sup, &change, &pairs)
            .await
            .into_iter()
            .take(crate::edit::staged_edit::PREVIEW_FILES)
            .collect();
        // All at once: each waits at most the diagnostics bound.
        let before =
            futures::future::join_all(mentions.iter().map(|m| self.problems_now(&m.path, false)))
                .await;
        let mut baselined = Vec::new();
        for (m, now) in mentions.iter().zip(before) {
            if let Ok((server, now)) = now {
                let mut ledger = self.ledger.ledger.lock().expect("ledger");
                if !ledger.knows(&m.path, &server) {
                    ledger.baseline(&m.path, &server, &now);
                }
                baselined.push(m);
            }
        }
        let mut out = self.inner.call(cx, args).await?;
        // A moved folder is left empty by the write, as at once: removed.
        for m in &change.moves {
            let from = ws.root().join(&m.from);
            if from.is_dir() {
                remove_empty_folders(&from);
            }
        }
        if !pairs.is_empty() {
            announce_written_moves(&self.sup, &pairs).await;
        }
        let after =
            futures::future::join_all(baselined.iter().map(|m| self.problems_now(&m.path, true)))
                .await;
        for (m, after) in baselined.into_iter().zip(after) {
            let rel = ws.relative(&m.path);
            let why = format!("it mentions `{}` of the moved {}", m.stem, m.moved);
            match after {
                Ok((server, after)) => {
                    let new = self
                        .ledger
                        .ledger
                        .lock()
                        .expect("ledger")
                        .fold(&m.path, &server, &after);
                    if new.is_empty() {
                        out.push_text(format!("lsp: no new errors or warnings in {rel} ({why})"));
                    } else {
                        let mut lines = vec![format!(
                            "lsp: {} in {rel} after the move ({why}, and no server edited it):",
                            plural(new.len(), "new problem", "new problems")
                        )];
                        lines.extend(new.iter().map(DiagLine::render));
                        out.push_text(lines.join("\n"));
                    }
                }
                Err(e) => out.push_text(format!(
                    "lsp: {rel} not checked after the move ({why}): {e}"
                )),
            }
        }
        Ok(out)
    }
}

/// Run a move.
pub(crate) async fn run(
    sup: &LspSupervisor,
    link: &StagingLink,
    args: RenameArgs,
) -> Result<ToolOutput, ToolError> {
    if args.line.is_some() || args.symbol.is_some() || args.new_name.is_some() {
        return Err(ToolError::bad_args(
            "a move takes `file` and `new_path` only; leave out line, symbol and new_name (or leave out new_path to rename a symbol)",
        ));
    }
    let ws = sup.workspace();
    let new_path = args.new_path.as_deref().unwrap_or("");
    let from = ws.resolve_existing(&args.file)?;
    let to = ws.resolve(new_path)?;
    if from == ws.root() {
        return Err(ToolError::bad_args(
            "the workspace root cannot be moved; nothing was moved",
        ));
    }
    if ws.dir().kind(&to)?.is_some() {
        return Err(ToolError::bad_args(format!(
            "`{}` exists; a move never replaces a file or a folder — nothing was moved",
            ws.relative(&to)
        )));
    }
    if to.starts_with(&from) {
        return Err(ToolError::bad_args(format!(
            "`{}` is inside `{}`: a folder cannot move into itself; nothing was moved",
            ws.relative(&to),
            ws.relative(&from)
        )));
    }
    let t = crate::positioning::call_timeouts(sup, args.timeout_seconds)?;
    let pairs = moved_files(ws, &from, &to)?;

    let servers = ops_within(sup, &args, servers_for(sup, &pairs)).await?;
    let mut plan = PlannedEdit::default();
    let mut asked = Vec::new();
    for (target, files) in &servers {
        let client = &target.client;
        if !offers_will_rename(client) {
            continue;
        }
        // A server answers for the projects it has loaded (tsserver loads
        // one when a file of it opens): open the first moved file, and let
        // the server finish indexing, bounded.
        if let Some((first, _)) = files.first() {
            let _ = client.sync_file(first, &target.language_id).await;
        }
        if let Err((what, waited)) = client.wait_until_idle(t.index_wait).await {
            return Err(ToolError::timed_out(format!(
                "{} is still indexing ({} s so far: {what}); nothing was moved — retry in a moment",
                target.slot.entry.id,
                waited.as_secs()
            )));
        }
        let edit = client
            .request("workspace/willRenameFiles", file_renames(files), t.request)
            .await
            .map_err(|e| e.into_tool_error(&client.name))?;
        asked.push(target.slot.entry.id.clone());
        if edit.is_null() {
            continue;
        }
        plan.add(ws, &edit, client.encoding).map_err(|why| {
            ToolError::refused(format!(
                "{}'s edits for the move cannot be applied: {why}; nothing was moved",
                client.name
            ))
        })?;
    }
    for (f, t) in &pairs {
        plan.move_file(ws, f, t).map_err(|why| {
            ToolError::refused(format!("the move cannot be made: {why}; nothing was moved"))
        })?;
    }
    let edited: Vec<String> = plan
        .edits
        .iter()
        .map(|(p, n)| format!("{} ({})", ws.relative(p), plural(*n, "edit", "edits")))
        .collect();
    let moved = format!(
        "lsp_rename  move {} → {}: {} moved",
        ws.relative(&from),
        ws.relative(&to),
        plural(pairs.len(), "file", "files"),
    );
    let offered = if asked.is_empty() {
        " (no language server offers edits for moved files here)".to_string()
    } else {
        format!(" (edits from {})", asked.join(", "))
    };
    let header = format!(
        "{moved}, {} in {}{offered}",
        plural(plan.edit_count(), "edit", "edits"),
        plural(plan.edits.len(), "file", "files"),
    );
    if args.stage {
        let mut change = plan.staged_change(ws, "lsp_rename");
        // One move line for a folder, not one per file.
        if pairs.len() > 1 || from != pairs[0].0 {
            change.moves = vec![tool_core::staging::StagedMove {
                from: ws.relative(&from).into(),
                to: ws.relative(&to).into(),
            }];
        }
        // The edit counts are the proposal's line: said once.
        let header = format!("{moved}{offered}");
        return staged_edit::staged_output(link, ws, change, header, args.diff_context).await;
    }

    plan.transaction(ws).commit().map_err(|e| match e {
        e @ TransactionError::NotAFile { .. } => ToolError::refused(e.to_string()),
        e @ TransactionError::Drifted(_) => ToolError::refused(e.to_string()),
        e => ToolError::failed(format!("{e}; re-run lsp_rename once the files are settled")),
    })?;
    if from != pairs.first().map(|p| p.0.clone()).unwrap_or_default() {
        remove_empty_folders(&from);
    }
    for (target, files) in &servers {
        did_rename(&target.client, files);
        planned_edit::announce(sup, &target.client, &plan, &target.language_id).await;
    }
    let mut out = vec![header];
    out.extend(edited.iter().cloned());
    Ok(ToolOutput::text(out.join("\n")).with_structured(json!({
        "moved": {"from": ws.relative(&from), "to": ws.relative(&to)},
        "files_moved": pairs.len(),
        "edits": plan.edit_count(),
        "files": plan.edits.keys().map(|p| ws.relative(p)).collect::<Vec<_>>(),
    })))
}

async fn ops_within<T>(
    sup: &LspSupervisor,
    args: &RenameArgs,
    work: impl std::future::Future<Output = T>,
) -> Result<T, ToolError> {
    crate::positioning::within_call_timeout(sup, args.timeout_seconds, Some(&args.file), async {
        Ok(work.await)
    })
    .await
}

/// The moved folder's empty directories, deepest first (a folder holding
/// anything new is left alone).
fn remove_empty_folders(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_folders(&e.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::staging::{StagedFile, StagedMove};

    fn file(ws: &Workspace, rel: &str, old: Option<&str>, new: Option<&str>) -> StagedFile {
        StagedFile::whole(
            ws.root().join(rel),
            rel.into(),
            old.map(Into::into),
            new.map(Into::into),
            0,
        )
    }

    #[test]
    fn a_staged_move_gives_one_pair_per_moved_file_and_none_for_edited_ones() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let mut change = StagedChange::new("lsp_rename");
        change.files = vec![
            file(&ws, "app.ts", Some("a"), Some("b")),
            file(&ws, "core/x.ts", None, Some("x")),
            file(&ws, "core/sub/y.ts", None, Some("y")),
            file(&ws, "lib/sub/y.ts", Some("y"), None),
            file(&ws, "lib/x.ts", Some("x"), None),
            file(&ws, "one.ts", Some("1"), None),
            file(&ws, "two.ts", None, Some("1")),
        ];
        change.moves = vec![
            StagedMove {
                from: "lib".into(),
                to: "core".into(),
            },
            StagedMove {
                from: "one.ts".into(),
                to: "two.ts".into(),
            },
        ];
        let rel = |p: &PathBuf| ws.relative(p);
        let pairs: Vec<(String, String)> = staged_move_pairs(&ws, &change)
            .iter()
            .map(|(f, t)| (rel(f), rel(t)))
            .collect();
        assert_eq!(
            pairs,
            [
                ("lib/sub/y.ts".to_string(), "core/sub/y.ts".to_string()),
                ("lib/x.ts".into(), "core/x.ts".into()),
                ("one.ts".into(), "two.ts".into()),
            ]
        );
        // `lib` is not a prefix of `library`: no pair for it.
        change
            .files
            .push(file(&ws, "library/z.ts", Some("z"), None));
        assert_eq!(staged_move_pairs(&ws, &change).len(), 3);
    }
}
