//! The operations of the `lsp` tool, on top of the supervisor.
//!
//! Every query first re-syncs open documents from disk (the harness may have
//! changed them behind the server's back), then waits, bounded, for indexing
//! to finish, so an answer is never an empty result that really meant "not
//! ready yet".

use crate::args::{
    LspArgs, Op, CODE_ACTIONS_CAP, DOCUMENT_SYMBOLS_CAP, REFERENCES_CAP, WORKSPACE_SYMBOLS_CAP,
};
use crate::client::{Answer, LspClient, RequestError};
use crate::diagnostics;
use crate::position;
use crate::positioning::{
    call_timeouts, file_arg, position, synced, wait_ready, within_call_timeout, Positioned,
    COLD_SERVER, PROBE_EVERY, PROBE_FOR,
};
use crate::read::enclosing;
use crate::read::symbols;
use crate::render::{self, Loc};
use crate::supervisor::{LspSupervisor, Timeouts};
use lsp_types::request::{
    CodeActionRequest, HoverRequest, References, Request, WorkspaceSymbolRequest,
};
use lsp_types::{
    CodeActionContext, CodeActionParams, CodeActionTriggerKind, GotoDefinitionResponse,
    HoverParams, PartialResultParams, WorkDoneProgressParams, WorkspaceSymbolParams,
};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tool_core::{ToolError, ToolOutput};

/// `method` asked, and asked again while its answer is `empty` and the
/// server is cold (started less than [`COLD_SERVER`] ago): basedpyright
/// answers nothing for an imported name until it has analysed the import,
/// and a server that reports no progress gives no other sign. An empty
/// answer is believed once it holds for [`PROBE_FOR`] (at most the request
/// timeout) or from a warm server at once.
async fn request_probed<T: DeserializeOwned>(
    t: &Timeouts,
    client: &LspClient,
    method: &str,
    params: Value,
    empty: impl Fn(&T) -> bool,
) -> Result<T, ToolError> {
    let ask = || client.request_as::<T>(method, params.clone(), t.request);
    probed(t, client, ask, empty).await
}

/// [`request_probed`] for a request typed by `R`, its answer read leniently
/// (see [`Answer`]).
async fn request_probed_lenient<R: Request>(
    t: &Timeouts,
    client: &LspClient,
    params: &R::Params,
    empty: impl Fn(&Answer<R::Result>) -> bool,
) -> Result<Answer<R::Result>, ToolError>
where
    R::Params: Clone,
{
    let ask = || client.request_lenient::<R>(params.clone(), t.request);
    probed(t, client, ask, empty).await
}

/// `ask`, asked again while its answer is `empty` and the server is cold.
async fn probed<T, F: std::future::Future<Output = Result<T, RequestError>>>(
    t: &Timeouts,
    client: &LspClient,
    ask: impl Fn() -> F,
    empty: impl Fn(&T) -> bool,
) -> Result<T, ToolError> {
    let ask = || async { ask().await.map_err(|e| e.into_tool_error(&client.name)) };
    let mut v = ask().await?;
    let asked = std::time::Instant::now();
    while empty(&v)
        && client.started.elapsed() < COLD_SERVER
        && asked.elapsed() < PROBE_FOR.min(t.request)
    {
        tokio::time::sleep(PROBE_EVERY).await;
        v = ask().await?;
    }
    Ok(v)
}

async fn request(
    t: &Timeouts,
    client: &LspClient,
    method: &str,
    params: Value,
) -> Result<Value, ToolError> {
    client
        .request(method, params, t.request)
        .await
        .map_err(|e| e.into_tool_error(&client.name))
}

/// Run one `lsp` call.
pub(crate) async fn run(sup: &LspSupervisor, args: LspArgs) -> Result<ToolOutput, ToolError> {
    let t = call_timeouts(sup, args.timeout_seconds)?;
    if args.detail.is_some() && (args.op != Op::Symbols || args.query.is_some()) {
        return Err(ToolError::bad_args(
            "`detail` (true or false) applies to op `symbols` with `file` only: drop it, or ask for one file's symbols",
        ));
    }
    let (secs, file) = (args.timeout_seconds, args.file.clone());
    if file.as_deref() == Some("*") {
        // The project checker has its own bound and its own process to stop.
        return run_within(sup, &t, args).await;
    }
    within_call_timeout(sup, secs, file.as_deref(), run_within(sup, &t, args)).await
}

async fn run_within(
    sup: &LspSupervisor,
    t: &Timeouts,
    args: LspArgs,
) -> Result<ToolOutput, ToolError> {
    match args.op {
        Op::IncomingCalls | Op::OutgoingCalls | Op::Supertypes | Op::Subtypes => {
            return crate::read::hierarchy::run(sup, t, &args).await
        }
        Op::SignatureHelp => return crate::read::signature::run(sup, t, &args).await,
        Op::Capabilities => return crate::read::capabilities::run(sup, &args).await,
        _ => {}
    }
    if args.op.needs_position() {
        return navigate(sup, t, &args).await;
    }
    match args.op {
        Op::Status => {
            let lines = sup.status_lines().await;
            Ok(ToolOutput::text(format!(
                "lsp status\n{}",
                lines.join("\n")
            )))
        }
        Op::Reload => {
            let path = match args.file.as_deref() {
                Some(f) => Some(file_arg(sup, Some(f), "reload")?.path),
                None => None,
            };
            let lines = sup.reload(path.as_deref()).await?;
            Ok(ToolOutput::text(format!(
                "lsp reload\n{}",
                lines.join("\n")
            )))
        }
        Op::Diagnostics => match args.file.as_deref() {
            Some("*") => crate::read::project_checks::run_all(sup).await,
            Some(g) if crate::read::glob_diagnostics::is_glob(g) => {
                crate::read::glob_diagnostics::run(sup, t, g).await
            }
            _ => crate::read::file_diagnostics::file_diagnostics(sup, t, &args).await,
        },
        Op::Symbols => symbols(sup, t, &args).await,
        _ => unreachable!("positioned ops handled above"),
    }
}

async fn navigate(
    sup: &LspSupervisor,
    t: &Timeouts,
    args: &LspArgs,
) -> Result<ToolOutput, ToolError> {
    let p = position(sup, t, args).await?;
    let client = &p.target.client;
    let td = json!({"uri": p.uri});
    let head = format!(
        "lsp {}  `{}` at {}:{}{}",
        args.op.name(),
        p.symbol,
        p.file.shown,
        p.spot.line + 1,
        p.widened_from
            .as_ref()
            .map(|given| format!(" (`{given}` occurs there only inside it)"))
            .unwrap_or_default()
    );
    let ws = sup.workspace();
    match args.op {
        Op::Definition | Op::TypeDefinition | Op::Implementation => {
            let (method, cap_key, what) = match args.op {
                Op::Definition => (
                    "textDocument/definition",
                    "definitionProvider",
                    "definition",
                ),
                Op::TypeDefinition => (
                    "textDocument/typeDefinition",
                    "typeDefinitionProvider",
                    "type definition",
                ),
                _ => (
                    "textDocument/implementation",
                    "implementationProvider",
                    "implementation",
                ),
            };
            if !client.has_capability(cap_key) {
                return Err(ToolError::unavailable(format!(
                    "{} does not offer {what}s (no `{cap_key}` in its capabilities); try op `definition` or `references`",
                    client.name
                )));
            }
            // One shape for the three methods: `GotoDefinition`'s.
            let v: Option<GotoDefinitionResponse> = request_probed(
                t,
                client,
                method,
                json!({"textDocument": td, "position": p.position}),
                |v: &Option<GotoDefinitionResponse>| render::locations(ws, v.as_ref()).is_empty(),
            )
            .await?;
            let locs = render::locations(ws, v.as_ref());
            if locs.is_empty() {
                return Ok(ToolOutput::text(format!(
                    "{head}\nno {what} found (the server is ready and answered with none)"
                )));
            }
            let names = enclosing::labels(sup, t, &p.target, &locs, REFERENCES_CAP).await;
            let lines = render::render_locations_with(
                &locs,
                &names,
                REFERENCES_CAP,
                "narrow with a more specific symbol",
            );
            Ok(ToolOutput::text(format!("{head}\n{}", lines.join("\n"))))
        }
        Op::References => {
            // Files the server's project model may not cover (or a cold
            // server has not read yet) are opened first.
            let reach =
                crate::mentions::Reach::prepare(sup, t, &p.target, &p.identifier, false).await?;
            let references =
                |v: &Option<Vec<lsp_types::Location>>| v.clone().map(GotoDefinitionResponse::Array);
            let v = request_probed(t,
                client,
                References::METHOD,
                json!({"textDocument": td, "position": p.position, "context": {"includeDeclaration": true}}),
                |v| render::locations(ws, references(v).as_ref()).is_empty(),
            )
            .await?;
            let locs: Vec<Loc> = render::locations(ws, references(&v).as_ref());
            let paths: Vec<&std::path::Path> = locs.iter().map(|l| l.path.as_path()).collect();
            let decided = reach
                .decide_beyond(ws, &p, t, &reach.beyond(&paths), &locs)
                .await;
            let beyond = reach.report_decided(ws, "also mentioned", &decided);
            if locs.is_empty() {
                let mut out = format!(
                    "{head}\nno references found (the server is ready and answered with none)"
                );
                for line in beyond {
                    out.push('\n');
                    out.push_str(&line);
                }
                return Ok(ToolOutput::text(out));
            }
            let summary = format!(
                "{} in {}",
                tool_core::format::plural(locs.len(), "reference", "references"),
                tool_core::format::plural(render::files_in(&locs), "file", "files")
            );
            let names = enclosing::labels(sup, t, &p.target, &locs, REFERENCES_CAP).await;
            let lines = render::render_locations_with(
                &locs,
                &names,
                REFERENCES_CAP,
                "narrow with a more specific symbol, or look at one file with op `symbols`",
            );
            Ok(ToolOutput::text(format!(
                "{head} — {summary}\n{}",
                lines
                    .iter()
                    .chain(&beyond)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n")
            )))
        }
        Op::Hover => {
            let params = HoverParams {
                text_document_position_params: p.text_document_position(),
                work_done_progress_params: WorkDoneProgressParams::default(),
            };
            let answer = request_probed_lenient::<HoverRequest>(t, client, &params, |answer| {
                render::hover_text(answer).is_empty()
            })
            .await?;
            let text = render::hover_text(&answer);
            if text.is_empty() {
                return Ok(ToolOutput::text(format!("{head}\nno hover information (the server is ready and has nothing for this symbol)")));
            }
            Ok(ToolOutput::text(format!("{head}\n{text}")))
        }
        Op::CodeActions => code_actions(sup, t, &p, &head).await,
        _ => unreachable!(),
    }
}

/// The code actions the server offers at a position (for the quick fixes,
/// with the diagnostics on its line), and whether there were any such
/// diagnostics.
pub(crate) async fn offered_actions(
    t: &Timeouts,
    p: &Positioned,
) -> Result<(Vec<Value>, bool), ToolError> {
    let client = &p.target.client;
    if !client.has_capability("codeActionProvider") {
        return Err(ToolError::unavailable(format!(
            "{} does not offer code actions",
            client.name
        )));
    }
    // Quick fixes are offered for the diagnostics at the position.
    let doc = client.doc(&p.uri).await.expect("synced above");
    let diags = match diagnostics::fresh(client, &p.uri, &doc, t.diagnostics).await {
        Ok(f) => f.diagnostics,
        Err(_) => Vec::new(),
    };
    let on_line: Vec<&lsp_types::Diagnostic> = diags
        .iter()
        .filter(|d| d.range.start.line <= p.spot.line && p.spot.line <= d.range.end.line)
        .collect();
    let line_text = position::lines(&p.text)[p.spot.line as usize];
    let end = client
        .encoding
        .column_of(line_text, p.spot.byte + p.spot.len);
    let range = lsp_types::Range::new(p.position, lsp_types::Position::new(p.spot.line, end));
    let diagnostics = on_line.iter().map(|&d| d.clone()).collect();
    let params = code_action_params(&p.file.path, range, diagnostics);
    // The params are typed; each action offered is kept as the server sent
    // it, not as lsp-types' `CodeActionOrCommand`: `codeAction/resolve`
    // sends it back verbatim (with fields lsp-types does not know), and
    // its `edit` is read by `planned_edit`, which accepts WorkspaceEdit
    // shapes lsp-types rejects.
    let params = serde_json::to_value(params).expect("code action params serialize");
    let v = request(t, client, CodeActionRequest::METHOD, params).await?;
    Ok((
        v.as_array().cloned().unwrap_or_default(),
        !on_line.is_empty(),
    ))
}

/// The `textDocument/codeAction` params for `range` of the file at `path`,
/// with the diagnostics on its line, asked as the user would (invoked).
fn code_action_params(
    path: &std::path::Path,
    range: lsp_types::Range,
    diagnostics: Vec<lsp_types::Diagnostic>,
) -> CodeActionParams {
    CodeActionParams {
        text_document: crate::client::text_document(path),
        range,
        context: CodeActionContext {
            diagnostics,
            only: None,
            trigger_kind: Some(CodeActionTriggerKind::INVOKED),
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    }
}

/// One offered action (a `CodeAction`, or a bare `Command`) as listed:
/// `title [kind] (preferred) — what applying it does`.
fn offered_row(ws: &tool_core::Workspace, a: &Value) -> String {
    let title = a.get("title").and_then(Value::as_str).unwrap_or("?");
    let kind = a.get("kind").and_then(Value::as_str).unwrap_or("");
    let mut row = if kind.is_empty() {
        title.to_string()
    } else {
        format!("{title} [{kind}]")
    };
    if a.get("isPreferred").and_then(Value::as_bool) == Some(true) {
        row.push_str(" (preferred)");
    }
    if let Some(edit) = a.get("edit") {
        row.push_str(&format!(
            " — {}",
            crate::planned_edit::edit_summary(ws, edit)
        ));
    } else if a.get("command").is_some() || a.get("arguments").is_some() {
        let cmd = a
            .get("command")
            .and_then(|c| c.get("command").or(Some(c)))
            .and_then(Value::as_str)
            .unwrap_or("a server command");
        row.push_str(&format!(" — runs the server command `{cmd}`"));
    } else if a.get("data").is_some() {
        row.push_str(" — edit computed on resolve");
    }
    row
}

async fn code_actions(
    sup: &LspSupervisor,
    t: &Timeouts,
    p: &Positioned,
    head: &str,
) -> Result<ToolOutput, ToolError> {
    let (actions, any_diagnostic) = offered_actions(t, p).await?;
    let ws = sup.workspace();
    let rows: Vec<String> = actions.iter().map(|a| offered_row(ws, a)).collect();
    if rows.is_empty() {
        let why = if any_diagnostic {
            ""
        } else {
            " and there is no diagnostic on this line"
        };
        return Ok(ToolOutput::text(format!(
            "{head}\nno code actions offered here{why}"
        )));
    }
    let (rows, note) =
        tool_core::format::cap_list(rows, CODE_ACTIONS_CAP, "narrow to a more specific symbol");
    let mut out: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{}. {r}", i + 1))
        .collect();
    out.extend(note);
    out.push(
        "(listed only: nothing was applied; apply one with lsp_code_action and its number)".into(),
    );
    Ok(ToolOutput::text(format!("{head}\n{}", out.join("\n"))))
}

async fn symbols(
    sup: &LspSupervisor,
    t: &Timeouts,
    args: &LspArgs,
) -> Result<ToolOutput, ToolError> {
    if let Some(query) = &args.query {
        return workspace_symbols(sup, t, query, args.file.as_deref()).await;
    }
    let Some(_) = args.file.as_deref() else {
        return Err(ToolError::bad_args(
            "op `symbols` needs `query` (workspace search) or `file` (that file's symbols)",
        ));
    };
    let file = file_arg(sup, args.file.as_deref(), "symbols")?;
    let (target, _doc) = synced(sup, &file).await?;
    let client = &target.client;
    wait_ready(t, client).await?;
    let answer = symbols::document_symbols_of(client, &file.path, t.request)
        .await
        .map_err(|e| e.into_tool_error(&client.name))?;
    let (rows, locals) = symbols::document_symbols(&answer, args.detail.unwrap_or(false));
    let head = format!("lsp symbols  {}", file.shown);
    if rows.is_empty() && locals == 0 {
        return Ok(ToolOutput::text(format!("{head}\nno symbols in this file")));
    }
    // The header counts every symbol shown, as the footer's "showing N of
    // M" does, and says what the outline left out.
    let total = rows.len();
    let (rows, note) = tool_core::format::cap_list(
        rows,
        DOCUMENT_SYMBOLS_CAP,
        "use `query` to search for one by name",
    );
    let left_out = match locals {
        0 => String::new(),
        n => format!(
            " ({} of functions not shown: `detail: true` lists them)",
            tool_core::format::plural(n, "local", "locals")
        ),
    };
    let mut out = vec![format!(
        "{head} — {}{left_out}",
        tool_core::format::plural(total, "symbol", "symbols")
    )];
    out.extend(rows);
    out.extend(note);
    Ok(ToolOutput::text(out.join("\n")))
}

async fn workspace_symbols(
    sup: &LspSupervisor,
    t: &Timeouts,
    query: &str,
    file: Option<&str>,
) -> Result<ToolOutput, ToolError> {
    let targets = if let Some(f) = file {
        let file = file_arg(sup, Some(f), "symbols")?;
        let (t, _) = synced(sup, &file).await?;
        vec![(t.client, t.slot)]
    } else {
        let servers = crate::read::query_servers::servers_for_query(sup).await;
        if servers.is_empty() {
            return Err(ToolError::unavailable(
                "no language server can start for the workspace's files; pass `file` to search with the server for that file (op `status` says why)",
            ));
        }
        servers
    };
    // A server that fails or is not ready is named beside the others'
    // answers, and its error is the answer when no server answered.
    let mut rows = Vec::new();
    let mut not_searched = Vec::new();
    let mut first_error = None;
    let mut asked = Vec::new();
    for (client, slot) in &targets {
        // One that cannot answer at all is left out (the answer names the
        // servers that searched when nothing matched).
        if !slot.entry.workspace_symbols
            || !client.offers("workspaceSymbolProvider", "workspace/symbol")
        {
            continue;
        }
        match symbols_of(sup, t, client, query).await {
            Ok(found) => {
                rows.extend(found);
                asked.push(client.name.as_str());
                // clangd without a compile database indexes open files only.
                if slot.entry.id == "c" && !crate::mentions::has_compile_database(&slot.root) {
                    let open: Vec<String> = client
                        .open_paths()
                        .await
                        .iter()
                        .map(|p| sup.rel(p))
                        .collect();
                    not_searched.push(format!(
                        "{} has no compile database at {}, so it searched only the files open in it ({}); give the project a compile_commands.json to search all of it",
                        client.name,
                        sup.rel(&slot.root),
                        tool_core::format::list_capped(&open, 10)
                    ));
                }
            }
            Err(e) => {
                let why = e.to_string();
                let why = why
                    .split_once(&format!("{}: ", client.name))
                    .map_or(why.as_str(), |(_, rest)| rest);
                not_searched.push(format!("not searched — {}: {why}", client.name));
                first_error.get_or_insert(e);
            }
        }
    }
    if asked.is_empty() {
        return Err(first_error.unwrap_or_else(|| {
            ToolError::unavailable(format!(
                "no server here offers workspace symbols ({}); pass `file` and use op `symbols` without `query` for the symbols of one file",
                targets
                    .iter()
                    .map(|(c, _)| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }));
    }
    // The workspace's own symbols first (a server may answer with its
    // standard library's too: gopls's `New` has hundreds there), then the
    // rest; each part by path and line.
    rows.sort_by(|a, b| {
        (std::path::Path::new(&a.0).is_absolute(), a)
            .cmp(&(std::path::Path::new(&b.0).is_absolute(), b))
    });
    rows.dedup();
    let head = format!("lsp symbols  query `{query}`");
    if rows.is_empty() {
        let mut out = vec![format!(
            "{head}\nno symbols match (searched with {})",
            asked.join(", ")
        )];
        out.extend(not_searched);
        return Ok(ToolOutput::text(out.join("\n")));
    }
    let total = rows.len();
    let shown = &rows[..total.min(WORKSPACE_SYMBOLS_CAP)];
    let (common, lines) = symbols::render_workspace_rows(shown);
    let mut out = vec![format!(
        "{head} — {}{}",
        tool_core::format::plural(total, "match", "matches"),
        common.map(|c| format!(" in {c}")).unwrap_or_default()
    )];
    out.extend(lines);
    if total > WORKSPACE_SYMBOLS_CAP {
        out.push(tool_core::format::capped_note(
            WORKSPACE_SYMBOLS_CAP,
            total,
            "narrow with a longer query",
        ));
    }
    out.extend(not_searched);
    Ok(ToolOutput::text(out.join("\n")))
}

/// One server's answer to a workspace symbol query, as rows.
async fn symbols_of(
    sup: &LspSupervisor,
    t: &Timeouts,
    client: &LspClient,
    query: &str,
) -> Result<Vec<symbols::SymbolRow>, ToolError> {
    client.resync_open().await;
    wait_ready(t, client).await?;
    // A cold server's index may not hold the workspace's files yet
    // (basedpyright answered nothing for a while on a loaded machine).
    let ws = sup.workspace();
    let params = WorkspaceSymbolParams {
        query: query.to_string(),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    let answer = request_probed_lenient::<WorkspaceSymbolRequest>(t, client, &params, |a| {
        symbols::workspace_symbols(ws, a).is_empty()
    })
    .await?;
    Ok(symbols::workspace_symbols(ws, &answer))
}

#[cfg(test)]
mod tests;
