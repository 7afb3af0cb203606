//! `lsp_rename`: `textDocument/rename`, then the server's WorkspaceEdit
//! applied all-or-nothing through tool-core's transaction.
//!
//! The edit is first played against an in-memory copy of the files it
//! touches (text edits, creates, renames, deletes in the order given), so an
//! edit that does not apply cleanly, or reaches outside the workspace, is
//! refused before anything is written.

use crate::args::{LspArgs, Op, RenameArgs, SymbolRename};
use crate::client::RequestError;
use crate::edit::macro_paths;
use crate::edit::staged_edit::staged_output;
use crate::mentions::{self, Mentioning, Reach};
use crate::on_write::dependents::Dependents;
use crate::on_write::fallout::{PublishedBefore, Stage};
use crate::planned_edit::{announce, PlannedEdit};
use crate::positioning;
use crate::supervisor::{LspSupervisor, Timeouts};
use lsp_types::request::{PrepareRenameRequest, Request};
use lsp_types::PrepareRenameResponse;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

use tool_core::files::TransactionError;
use tool_core::{StagingLink, ToolError, ToolOutput};

/// The new name is an identifier of the file's language (when the language
/// has a rule), and not the old name: checked before any server is asked.
fn check_new_name(sup: &LspSupervisor, args: &SymbolRename) -> Result<(), ToolError> {
    if args.new_name == args.symbol {
        return Err(ToolError::bad_args(format!(
            "`new_name` is `{}`, the symbol's own name: there is nothing to rename; nothing was written",
            args.symbol
        )));
    }
    let language = sup
        .catalog()
        .for_file(Path::new(&args.file))
        .map(|(_, l)| l);
    if let Some(rule) = language
        .as_deref()
        .and_then(crate::edit::identifier::rule_for)
    {
        crate::edit::identifier::check(rule, &args.new_name).map_err(|why| {
            ToolError::bad_args(format!("{why}; nothing was asked of the server or written"))
        })?;
    }
    Ok(())
}

/// A rename ready to be written: the server's edit played in memory, and
/// the mentioning files it leaves.
struct Prepared {
    p: positioning::Positioned,
    plan: PlannedEdit,
    /// The files whose leftover mentions are reported.
    unrenamed: Vec<Mentioning>,
    /// The lines that report them.
    report: Vec<String>,
    /// Rust paths in macro bodies renamed beside the server's edit.
    macro_paths: usize,
}

/// Run one `lsp_rename` call; with `stage`, into `link`'s change store.
pub(crate) async fn run(
    sup: &LspSupervisor,
    link: &StagingLink,
    args: RenameArgs,
) -> Result<ToolOutput, ToolError> {
    crate::edit::staged_edit::check_diff_context(args.stage, args.diff_context)?;
    if args.new_path.is_some() {
        return crate::edit::file_move::run(sup, link, args).await;
    }
    let args = args.symbol_rename()?;
    if args.new_name.trim().is_empty() {
        return Err(ToolError::bad_args(
            "`new_name` is empty; give the new identifier",
        ));
    }
    check_new_name(sup, &args)?;
    let t = positioning::call_timeouts(sup, args.timeout_seconds)?;
    // Only what comes before the commit is cut short by timeout_seconds: a
    // rename that was written is always reported.
    let prepared = positioning::within_call_timeout(
        sup,
        args.timeout_seconds,
        Some(&args.file),
        prepare(sup, &t, &args),
    )
    .await?;
    if args.stage {
        return stage(sup, link, &args, prepared).await;
    }
    commit(sup, &t, &args, prepared).await
}

/// A rename with no edits: refused, whether staged or written.
fn no_edits(client: &str, p: &positioning::Positioned, args: &SymbolRename) -> ToolError {
    ToolError::refused(format!(
        "{client} answered the rename of `{}` at {}:{} to `{}` with no edits: \
         servers answer so when the symbol is not theirs to rename (a builtin, a name defined \
         outside the workspace) or when they reject the new name; nothing was written",
        p.symbol, p.file.shown, args.line, args.new_name
    ))
}

/// `stage: true`: keep the rename in the run's change store and show it,
/// with what the servers would report after it; nothing is written.
async fn stage(
    sup: &LspSupervisor,
    link: &StagingLink,
    args: &SymbolRename,
    prepared: Prepared,
) -> Result<ToolOutput, ToolError> {
    let Prepared {
        p,
        plan,
        unrenamed,
        report,
        ..
    } = prepared;
    let ws = sup.workspace();
    let change = plan.staged_change(ws, "lsp_rename");
    if change.files.is_empty() {
        return Err(no_edits(&p.target.client.name, &p, args));
    }
    // The counts are the proposal's line: said once.
    let header = format!("lsp_rename  `{}` → `{}`", p.symbol, args.new_name);
    let mut out = staged_output(link, ws, change, header, args.diff_context).await?;
    for line in report {
        out.push_text(line);
    }
    if let Some(Value::Object(obj)) = out.structured.as_mut() {
        obj.insert(
            "not_renamed".into(),
            json!(unrenamed
                .iter()
                .map(|m| ws.relative(&m.path))
                .collect::<Vec<_>>()),
        );
    }
    Ok(out)
}

async fn prepare(
    sup: &LspSupervisor,
    t: &Timeouts,
    args: &SymbolRename,
) -> Result<Prepared, ToolError> {
    let largs = LspArgs {
        op: Op::Definition,
        file: Some(args.file.clone()),
        line: Some(args.line),
        symbol: Some(args.symbol.clone()),
        occurrence: args.occurrence,
        query: None,
        detail: None,
        timeout_seconds: args.timeout_seconds,
    };
    let p = positioning::position(sup, t, &largs)
        .await
        .map_err(|e| match e {
            ToolError::BadArgs(m) => ToolError::BadArgs(m.replace("op `definition`", "lsp_rename")),
            other => other,
        })?;
    // A rename writes: it is never about an identifier the call did not name.
    if let Some(given) = &p.widened_from {
        return Err(ToolError::bad_args(format!(
            "`{given}` occurs on {}:{} only inside `{}`; pass `{}` as the symbol to rename it; nothing was written",
            p.file.shown, args.line, p.symbol, p.symbol
        )));
    }
    let client = &p.target.client;
    let td = json!({"uri": p.uri});
    let prepare = client.capabilities.rename_prepares();
    if !client.has_capability("renameProvider") {
        return Err(ToolError::unavailable(format!(
            "{} does not offer rename",
            client.name
        )));
    }
    if prepare {
        let ask = || {
            client.request_as::<Option<PrepareRenameResponse>>(
                PrepareRenameRequest::METHOD,
                json!({"textDocument": td, "position": p.position}),
                t.request,
            )
        };
        let mut v = ask().await;
        // A server that started moments ago may not have resolved the
        // symbol's module yet (basedpyright answers null for an imported
        // name until it has analysed the import): a refusal is believed
        // only once it holds after the server had time to look.
        let settle = crate::positioning::PROBE_FOR.min(t.request);
        let asked = Instant::now();
        while matches!(v, Ok(None))
            && client.started.elapsed() < crate::positioning::COLD_SERVER
            && asked.elapsed() < settle
        {
            tokio::time::sleep(crate::positioning::PROBE_EVERY).await;
            v = ask().await;
        }
        match v {
            Ok(None) => {
                return Err(ToolError::refused(format!(
                    "`{}` at {}:{} cannot be renamed (the server's prepareRename refused it: not a renamable symbol); nothing was written",
                    p.symbol, p.file.shown, args.line
                )))
            }
            Err(RequestError::Rpc { message, .. }) => {
                return Err(ToolError::refused(format!(
                    "`{}` at {}:{} cannot be renamed: {message}; nothing was written",
                    p.symbol, p.file.shown, args.line
                )))
            }
            // An answer of a shape lsp-types does not know refuses nothing:
            // the rename itself says.
            Ok(Some(_)) | Err(RequestError::Malformed { .. }) => {}
            Err(e) => return Err(e.into_tool_error(&client.name)),
        }
    }
    // Files the server's project model may not cover are opened first, so
    // that its rename sees them.
    let reach = Reach::prepare(sup, t, &p.target, &p.identifier, true).await?;
    let edit = client
        .request(
            "textDocument/rename",
            json!({"textDocument": td, "position": p.position, "newName": args.new_name}),
            t.request,
        )
        .await
        .map_err(|e| match e {
            crate::client::RequestError::Rpc { message, .. } => ToolError::refused(format!(
                "the server refused to rename `{}`: {message}; nothing was written",
                p.symbol
            )),
            other => other.into_tool_error(&client.name),
        })?;
    if edit.is_null() {
        return Err(ToolError::refused(format!(
            "the server has no rename for `{}` at {}:{}; nothing was written",
            p.symbol, p.file.shown, args.line
        )));
    }
    let ws = sup.workspace();
    let mut plan = PlannedEdit::play(ws, &edit, client.encoding).map_err(|why| {
        ToolError::refused(format!(
            "the server's rename cannot be applied: {why}; nothing was written"
        ))
    })?;
    let macro_paths = if p.target.slot.entry.id == "rust" {
        rename_macro_paths(sup, t, &p, &reach, &mut plan, args).await?
    } else {
        0
    };
    let unrenamed = reach.unrenamed(&plan);
    if reach.strict && !unrenamed.is_empty() && !args.partial {
        return Err(ToolError::refused(format!(
            "{} has no compile database at {} (no compile_commands.json or compile_flags.txt), so it \
             sees only the files open in it, and its rename of `{}` to `{}` would leave these:\n{}\n\
             nothing was written; pass `partial: true` to rename anyway, or give the project a compile_commands.json",
            client.name,
            sup.rel(&p.target.slot.root),
            p.symbol,
            args.new_name,
            reach.report(ws, &unrenamed).join("\n")
        )));
    }
    // What the rename left, decided by the server: other symbols of the
    // same name are not reported.
    let decided = reach
        .decide_unrenamed(ws, &p, t, &plan, &args.new_name, &unrenamed)
        .await;
    let report = reach.report_decided(ws, "not renamed", &decided);
    let unrenamed = unrenamed
        .into_iter()
        .filter(|m| decided.reported(&m.path))
        .collect();
    Ok(Prepared {
        p,
        plan,
        unrenamed,
        report,
        macro_paths,
    })
}

/// Rename, beside rust-analyzer's edit, the paths in `macro_rules!` bodies
/// that name the item without doubt (see [`macro_paths`]); refuse, unless
/// `partial`, when others in its package may name it. How many were
/// renamed.
async fn rename_macro_paths(
    sup: &LspSupervisor,
    t: &Timeouts,
    p: &positioning::Positioned,
    reach: &Reach,
    plan: &mut PlannedEdit,
    args: &SymbolRename,
) -> Result<usize, ToolError> {
    let ws = sup.workspace();
    let client = &p.target.client;
    let answer = client
        .request_as::<Option<lsp_types::GotoDefinitionResponse>>(
            "textDocument/definition",
            json!({"textDocument": {"uri": p.uri}, "position": p.position}),
            t.request,
        )
        .await
        .ok()
        .flatten();
    let definitions = crate::render::locations(ws, answer.as_ref());
    let [definition] = definitions.as_slice() else {
        return Ok(0);
    };
    let root = &p.target.slot.root;
    let Some((package, module)) = macro_paths::module_of(&definition.path, root) else {
        return Ok(0);
    };
    let Ok(def_text) = crate::client::read_document(ws, &definition.path) else {
        return Ok(0);
    };
    let top_level = macro_paths::declared_at_top_level(&def_text, definition.line);
    let mut renamed = 0;
    let mut doubtful = Vec::new();
    for m in &reach.scan.files {
        if tool_core::cargo::package_root(&m.path, root).as_deref() != Some(package.as_path()) {
            continue;
        }
        let text = match plan.text_after(&m.path) {
            Some((_, Some(text))) => text.to_string(),
            Some((_, None)) => continue,
            None => match crate::client::read_document(ws, &m.path) {
                Ok(text) => text,
                Err(_) => continue,
            },
        };
        let mut spans = Vec::new();
        for path in macro_paths::paths_to(&text, &p.symbol) {
            if top_level && path.names_module(&module) {
                spans.push((path.name.start, path.name.end, args.new_name.clone()));
            } else {
                doubtful.push(format!(
                    "{}:{} `{}{}`",
                    ws.relative(&m.path),
                    path.line,
                    path.prefix,
                    p.symbol
                ));
            }
        }
        renamed += spans.len();
        if !spans.is_empty() {
            plan.replace_spans(ws, &m.path, spans).map_err(|why| {
                ToolError::failed(format!(
                    "the rename's paths in macro bodies cannot be applied: {why}; nothing was written"
                ))
            })?;
        }
    }
    if !doubtful.is_empty() && !args.partial {
        let (mut rows, note) = tool_core::format::cap_list(
            doubtful,
            mentions::MAX_LISTED,
            "rename with `partial` and fix the rest by hand",
        );
        rows.extend(note);
        return Err(ToolError::refused(format!(
            "the rename of `{}` to `{}` by {} skips paths in macro bodies, which may name the same item \
             (the server resolves a macro's paths only where it is used):\n{}\n\
             nothing was written; pass `partial: true` to rename without them",
            p.symbol,
            args.new_name,
            client.name,
            rows.join("\n")
        )));
    }
    Ok(renamed)
}

async fn commit(
    sup: &LspSupervisor,
    t: &Timeouts,
    args: &SymbolRename,
    prepared: Prepared,
) -> Result<ToolOutput, ToolError> {
    let Prepared {
        p,
        plan,
        unrenamed,
        report,
        macro_paths,
        ..
    } = prepared;
    let client = &p.target.client;
    let ws = sup.workspace();
    let tx = plan.transaction(ws);
    if tx.is_empty() {
        return Err(no_edits(&client.name, &p, args));
    }
    // What the servers say of the project before the rename, to tell what
    // it broke elsewhere.
    let changed: Vec<PathBuf> = plan.changed().into_iter().map(|(p, _)| p).collect();
    crate::on_write::fallout::await_first_check(sup, &changed, t.diagnostics, Stage::Written).await;
    let published_before =
        PublishedBefore::take(sup, Instant::now(), &changed, Stage::Written).await;
    let mut dependents = Vec::new();
    for (path, old, new) in plan.texts() {
        if let Some(d) = Dependents::before(sup, &path, (&old, new), &[], Stage::Written).await {
            dependents.push(d);
        }
    }
    tx.commit().map_err(|e| match e {
        e @ TransactionError::NotAFile { .. } => ToolError::refused(e.to_string()),
        e => ToolError::failed(format!("{e}; re-run lsp_rename once the files are settled")),
    })?;

    // Before the servers are told: a server's diagnosis of the change
    // (gopls's run) begins when it is told.
    let written = Instant::now();
    announce(sup, client, &plan, &p.target.language_id).await;

    let mut out = vec![format!(
        "lsp_rename  `{}` → `{}`: {} in {}",
        p.symbol,
        args.new_name,
        tool_core::format::plural(plan.edit_count(), "edit", "edits"),
        tool_core::format::plural(plan.edits.len().max(plan.changed().len()), "file", "files"),
    )];
    for (path, n) in &plan.edits {
        out.push(format!(
            "{} ({})",
            ws.relative(path),
            tool_core::format::plural(*n, "edit", "edits")
        ));
    }
    if macro_paths > 0 {
        out.push(format!(
            "{} in macro bodies (the server renames a macro's paths only where it is used)",
            tool_core::format::plural(macro_paths, "of them a path", "of them paths"),
        ));
    }
    for (from, to) in &plan.renames {
        out.push(format!(
            "renamed {} → {}",
            ws.relative(from),
            ws.relative(to)
        ));
    }
    out.extend(report);
    // What the rename broke comes first: in any file, those it edited too
    // (rustc reports a macro's broken path where the macro is defined).
    let (broken, notes) =
        crate::on_write::fallout::judged(sup, (&published_before, &dependents), (&[], written))
            .await;
    let limits = crate::on_write::ReportLimits::default();
    if let Some(text) =
        crate::on_write::fallout::render(&broken, (limits.per_file, limits.flood), ("", "rename"))
    {
        out.insert(0, text);
    }
    out.extend(notes);
    Ok(ToolOutput::text(out.join("\n")).with_structured(json!({
        "not_renamed": unrenamed.iter().map(|m| ws.relative(&m.path)).collect::<Vec<_>>(),
        "edits": plan.edit_count(),
        "files": plan.edits.keys().map(|p| ws.relative(p)).collect::<Vec<_>>(),
        "new_problems_elsewhere": broken.values().map(Vec::len).sum::<usize>(),
    })))
}
