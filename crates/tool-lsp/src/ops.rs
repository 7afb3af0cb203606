//! The operations of the `lsp` tool, on top of the supervisor.
//!
//! Every query first re-syncs open documents from disk (the harness may have
//! changed them behind the server's back), then waits, bounded, for indexing
//! to finish, so an answer is never an empty result that really meant "not
//! ready yet".

use crate::client::{file_uri, LspClient};
use crate::diagnostics::{self, DiagLine, NotReady};
use crate::enclosing;
use crate::format::{self, Loc};
use crate::position::{self, SymbolSpot};
use crate::supervisor::{LspSupervisor, Target, Timeouts};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tool_core::{ToolError, ToolOutput};

pub const REFERENCES_CAP: usize = 50;
pub const WORKSPACE_SYMBOLS_CAP: usize = 100;
pub const DOCUMENT_SYMBOLS_CAP: usize = 200;
pub const CODE_ACTIONS_CAP: usize = 30;
pub const CHECKER_CAP: usize = 200;

/// Which operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Errors and warnings of `file`; of up to 20 files with a glob (`"src/**/*.py"`);
    /// with `file: "*"` the project checker runs.
    Diagnostics,
    /// Where the symbol is declared.
    Definition,
    /// Where its type is declared.
    TypeDefinition,
    /// Concrete implementations.
    Implementation,
    /// Every use (capped at 50).
    References,
    /// Signature and doc comment.
    Hover,
    /// Workspace search with `query` (capped at 100), or the symbols of `file` (capped at 200).
    Symbols,
    /// Quick fixes the server offers at the position.
    CodeActions,
    /// Which servers run, for which roots, and why others cannot start.
    Status,
    /// Restart the server for `file`'s root (all servers without `file`).
    Reload,
    /// Who calls the function at the position: each call site and its caller.
    IncomingCalls,
    /// What the function at the position calls: each callee and where.
    OutgoingCalls,
    /// The types the type at the position extends or implements.
    Supertypes,
    /// The types that extend or implement the type at the position.
    Subtypes,
    /// The signature of the call at the position, the active parameter marked.
    SignatureHelp,
    /// What each server for `file` advertises (why an op is refused).
    Capabilities,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Diagnostics => "diagnostics",
            Op::Definition => "definition",
            Op::TypeDefinition => "type_definition",
            Op::Implementation => "implementation",
            Op::References => "references",
            Op::Hover => "hover",
            Op::Symbols => "symbols",
            Op::CodeActions => "code_actions",
            Op::Status => "status",
            Op::Reload => "reload",
            Op::IncomingCalls => "incoming_calls",
            Op::OutgoingCalls => "outgoing_calls",
            Op::Supertypes => "supertypes",
            Op::Subtypes => "subtypes",
            Op::SignatureHelp => "signature_help",
            Op::Capabilities => "capabilities",
        }
    }

    fn needs_position(self) -> bool {
        matches!(
            self,
            Op::Definition
                | Op::TypeDefinition
                | Op::Implementation
                | Op::References
                | Op::Hover
                | Op::CodeActions
        )
    }
}

/// Arguments of `lsp`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspArgs {
    /// The operation.
    pub op: Op,
    /// File relative to the workspace root (`"*"` for project-wide diagnostics, a glob
    /// such as `"src/**/*.py"` for the diagnostics of up to 20 files).
    #[serde(default)]
    pub file: Option<String>,
    /// 1-based line of the symbol.
    #[serde(default)]
    pub line: Option<u32>,
    /// The identifier on that line the question is about (never a column).
    #[serde(default)]
    pub symbol: Option<String>,
    /// Which occurrence of `symbol` on the line, 1-based, when it occurs more than once.
    #[serde(default)]
    pub occurrence: Option<u32>,
    /// Workspace symbol search text (op `symbols`).
    #[serde(default)]
    pub query: Option<String>,
    /// How long this call may wait for the server, 5 to 300 seconds (default: the
    /// configured bounds, 20 s a request, 60 s for indexing). Not the project checker's.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

/// The range `timeout_seconds` may take.
pub const CALL_TIMEOUT_SECONDS: std::ops::RangeInclusive<u64> = 5..=300;

/// The bounds of one call: the configured ones, or every wait on the server
/// (indexing, one request, diagnostics) bounded by the call's
/// `timeout_seconds`. Checked before any server is started.
pub fn call_timeouts(
    sup: &LspSupervisor,
    timeout_seconds: Option<u64>,
) -> Result<Timeouts, ToolError> {
    let Some(secs) = timeout_seconds else {
        return Ok(sup.timeouts);
    };
    if !CALL_TIMEOUT_SECONDS.contains(&secs) {
        return Err(ToolError::bad_args(format!(
            "`timeout_seconds` is {secs}; it must be from {} to {} seconds (leave it out for the configured bounds)",
            CALL_TIMEOUT_SECONDS.start(),
            CALL_TIMEOUT_SECONDS.end()
        )));
    }
    let d = Duration::from_secs(secs);
    Ok(Timeouts {
        request: d,
        index_wait: d,
        diagnostics: d,
        ..sup.timeouts
    })
}

/// Run `work` within the call's `timeout_seconds` (plus a second for the
/// answer of an inner bound, which names what it waited for, to win): past
/// it, a time-out naming the server for `file` and the time elapsed.
pub async fn within_call_timeout<T>(
    sup: &LspSupervisor,
    timeout_seconds: Option<u64>,
    file: Option<&str>,
    work: impl std::future::Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    let Some(secs) = timeout_seconds else {
        return work.await;
    };
    let started = std::time::Instant::now();
    match tokio::time::timeout(Duration::from_secs(secs) + Duration::from_secs(1), work).await {
        Ok(r) => r,
        Err(_) => {
            let server = file
                .and_then(|f| sup.catalog().for_file(Path::new(f)))
                .map(|(e, _)| format!("the {} language server", e.id))
                .unwrap_or_else(|| "the language server".into());
            Err(ToolError::timed_out(format!(
                "{server} did not finish within timeout_seconds = {secs} ({:.1} s elapsed, starting, indexing or answering); it keeps running — retry, or give a larger timeout_seconds",
                started.elapsed().as_secs_f64()
            )))
        }
    }
}

/// A file argument resolved inside the workspace, and how to show it.
pub struct FileArg {
    pub path: PathBuf,
    pub shown: String,
}

pub fn file_arg(sup: &LspSupervisor, file: Option<&str>, op: &str) -> Result<FileArg, ToolError> {
    let Some(file) = file else {
        return Err(ToolError::bad_args(format!(
            "op `{op}` needs `file` (a path relative to the workspace root)"
        )));
    };
    let path = sup.workspace().resolve_existing(file)?;
    if path.is_dir() {
        return Err(ToolError::bad_args(format!(
            "`{file}` is a directory; op `{op}` needs a source file"
        )));
    }
    // Decided on a handle before any server starts: a FIFO, socket or device
    // is refused here, never handed to a server or read.
    sup.workspace().dir().open_file(&path)?;
    Ok(FileArg {
        shown: sup.rel(&path),
        path,
    })
}

/// A position resolved in a synced document.
pub struct Positioned {
    pub target: Target,
    pub file: FileArg,
    pub uri: String,
    pub text: String,
    pub spot: SymbolSpot,
    pub position: Value,
    pub symbol: String,
}

/// The server for a file, its open documents re-synced from disk, the file
/// itself synced.
pub async fn synced(
    sup: &LspSupervisor,
    file: &FileArg,
) -> Result<(Target, crate::client::OpenDoc), ToolError> {
    let target = sup.target_for(&file.path).await?;
    target.client.resync_open().await;
    let doc = target
        .client
        .sync_file(&file.path, &target.language_id)
        .await
        .map_err(|e| ToolError::bad_args(format!("cannot read {}: {e}", file.shown)))?;
    Ok((target, doc))
}

pub async fn wait_ready(t: &Timeouts, client: &LspClient) -> Result<(), ToolError> {
    client
        .wait_until_idle(t.index_wait)
        .await
        .map_err(|(what, so_far)| {
            ToolError::timed_out(format!(
                "{} is still indexing ({} s so far: {what}); an answer now would be incomplete — retry in a moment",
                client.name,
                so_far.as_secs()
            ))
        })
}

pub async fn position(
    sup: &LspSupervisor,
    t: &Timeouts,
    args: &LspArgs,
) -> Result<Positioned, ToolError> {
    let op = args.op.name();
    let file = file_arg(sup, args.file.as_deref(), op)?;
    let Some(line) = args.line else {
        return Err(ToolError::bad_args(format!(
            "op `{op}` needs `line` (1-based) and `symbol` (the identifier on that line)"
        )));
    };
    let Some(symbol) = args.symbol.clone() else {
        return Err(ToolError::bad_args(format!(
            "op `{op}` needs `symbol`: the identifier on line {line} the question is about \
             (positions are never guessed from a column)"
        )));
    };
    // Check the position against the disk before starting any server.
    let text = crate::client::read_document(sup.workspace(), &file.path)
        .map_err(|e| ToolError::bad_args(format!("cannot read {}: {e}", file.shown)))?;
    position::locate(&text, &file.shown, line, &symbol, args.occurrence)?;
    let (target, doc) = synced(sup, &file).await?;
    let spot = position::locate(&doc.text, &file.shown, line, &symbol, args.occurrence)?;
    wait_ready(t, &target.client).await?;
    let line_text = position::lines(&doc.text)[spot.line as usize];
    let character = target.client.encoding.column_of(line_text, spot.byte);
    Ok(Positioned {
        uri: file_uri(&file.path),
        file,
        text: doc.text,
        spot,
        position: json!({"line": spot.line, "character": character}),
        symbol,
        target,
    })
}

/// A server younger than this may answer before it has analysed what a
/// question needs: its empty answers are probed (asked again) before they
/// are believed.
pub(crate) const COLD_SERVER: Duration = Duration::from_secs(60);
/// How long an empty answer of a cold server is probed, at most.
pub(crate) const PROBE_FOR: Duration = Duration::from_secs(10);
/// How often it is asked again meanwhile.
pub(crate) const PROBE_EVERY: Duration = Duration::from_millis(400);

/// `method` asked, and asked again while its answer is `empty` and the
/// server is cold (started less than [`COLD_SERVER`] ago): basedpyright
/// answers nothing for an imported name until it has analysed the import,
/// and a server that reports no progress gives no other sign. An empty
/// answer is believed once it holds for [`PROBE_FOR`] (at most the request
/// timeout) or from a warm server at once.
async fn request_probed(
    t: &Timeouts,
    client: &LspClient,
    method: &str,
    params: Value,
    empty: impl Fn(&Value) -> bool,
) -> Result<Value, ToolError> {
    let mut v = request(t, client, method, params.clone()).await?;
    let asked = std::time::Instant::now();
    while empty(&v)
        && client.started.elapsed() < COLD_SERVER
        && asked.elapsed() < PROBE_FOR.min(t.request)
    {
        tokio::time::sleep(PROBE_EVERY).await;
        v = request(t, client, method, params.clone()).await?;
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
pub async fn run(sup: &LspSupervisor, args: LspArgs) -> Result<ToolOutput, ToolError> {
    let t = call_timeouts(sup, args.timeout_seconds)?;
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
            return crate::hierarchy::run(sup, t, &args).await
        }
        Op::SignatureHelp => return crate::signature::run(sup, t, &args).await,
        Op::Capabilities => return crate::capabilities::run(sup, &args).await,
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
            Some("*") => crate::checker::run_all(sup).await,
            Some(g) if crate::glob_diagnostics::is_glob(g) => {
                crate::glob_diagnostics::run(sup, t, g).await
            }
            _ => file_diagnostics(sup, t, &args).await,
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
        "lsp {}  `{}` at {}:{}",
        args.op.name(),
        p.symbol,
        p.file.shown,
        p.spot.line + 1
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
            let v = request_probed(
                t,
                client,
                method,
                json!({"textDocument": td, "position": p.position}),
                |v| format::locations(ws, v).is_empty(),
            )
            .await?;
            let locs = format::locations(ws, &v);
            if locs.is_empty() {
                return Ok(ToolOutput::text(format!(
                    "{head}\nno {what} found (the server is ready and answered with none)"
                )));
            }
            let names = enclosing::labels(sup, t, &p.target, &locs, REFERENCES_CAP).await;
            let lines = format::render_locations_with(
                &locs,
                &names,
                REFERENCES_CAP,
                "narrow with a more specific symbol",
            );
            Ok(ToolOutput::text(format!("{head}\n{}", lines.join("\n"))))
        }
        Op::References => {
            let v = request_probed(t,
                client,
                "textDocument/references",
                json!({"textDocument": td, "position": p.position, "context": {"includeDeclaration": true}}),
                |v| format::locations(ws, v).is_empty(),
            )
            .await?;
            let locs: Vec<Loc> = format::locations(ws, &v);
            if locs.is_empty() {
                return Ok(ToolOutput::text(format!(
                    "{head}\nno references found (the server is ready and answered with none)"
                )));
            }
            let summary = format!(
                "{} in {}",
                tool_core::format::plural(locs.len(), "reference", "references"),
                tool_core::format::plural(format::files_in(&locs), "file", "files")
            );
            let names = enclosing::labels(sup, t, &p.target, &locs, REFERENCES_CAP).await;
            let lines = format::render_locations_with(
                &locs,
                &names,
                REFERENCES_CAP,
                "narrow with a more specific symbol, or look at one file with op `symbols`",
            );
            Ok(ToolOutput::text(format!(
                "{head} — {summary}\n{}",
                lines.join("\n")
            )))
        }
        Op::Hover => {
            let v = request_probed(
                t,
                client,
                "textDocument/hover",
                json!({"textDocument": td, "position": p.position}),
                |v| v.is_null() || format::hover_text(v).is_empty(),
            )
            .await?;
            let text = if v.is_null() {
                String::new()
            } else {
                format::hover_text(&v)
            };
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
pub async fn offered_actions(
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
    let enc = client.encoding;
    let range = json!({
        "start": p.position,
        "end": {"line": p.spot.line, "character": enc.column_of(line_text, p.spot.byte + p.spot.len)},
    });
    let v = request(t,
        client,
        "textDocument/codeAction",
        json!({"textDocument": {"uri": p.uri}, "range": range, "context": {"diagnostics": on_line, "triggerKind": 1}}),
    )
    .await?;
    Ok((
        v.as_array().cloned().unwrap_or_default(),
        !on_line.is_empty(),
    ))
}

async fn code_actions(
    sup: &LspSupervisor,
    t: &Timeouts,
    p: &Positioned,
    head: &str,
) -> Result<ToolOutput, ToolError> {
    let (actions, any_diagnostic) = offered_actions(t, p).await?;
    let ws = sup.workspace();
    let mut rows = Vec::new();
    for a in &actions {
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
            row.push_str(&format!(" — {}", crate::rename::edit_summary(ws, edit)));
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
        rows.push(row);
    }
    if rows.is_empty() {
        let why = if !any_diagnostic {
            " and there is no diagnostic on this line"
        } else {
            ""
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

/// One server's diagnostics of a file: its problems (sorted) and how many
/// hints or infos it also gave.
async fn diagnostics_of(
    t: &Timeouts,
    target: &Target,
    file: &FileArg,
) -> Result<(Vec<DiagLine>, usize), ToolError> {
    let client = &target.client;
    client.resync_open().await;
    let doc = client
        .sync_file(&file.path, &target.language_id)
        .await
        .map_err(|e| ToolError::bad_args(format!("cannot read {}: {e}", file.shown)))?;
    wait_ready(t, client).await?;
    let uri = file_uri(&file.path);
    let fresh = diagnostics::fresh(client, &uri, &doc, t.diagnostics)
        .await
        .map_err(|e| match e {
            NotReady::Timeout(after) => ToolError::timed_out(format!(
                "diagnostics of {} not ready after {} ms ({} is running but has not published for this version); retry in a moment",
                file.shown,
                after.as_millis(),
                client.name
            )),
            NotReady::Request(r) => r.into_tool_error(&client.name),
        })?;
    let mut lines: Vec<DiagLine> = fresh
        .diagnostics
        .iter()
        .filter(|d| diagnostics::is_problem(d))
        .map(|d| DiagLine::from_lsp(&file.shown, d, Some(&doc.text), client.encoding))
        .collect();
    lines.sort();
    let hidden = fresh.diagnostics.len() - lines.len();
    Ok((lines, hidden))
}

/// A file's diagnostics: its server's and, beside them, those of every
/// linter for the file that resolves here, merged, deduplicated (same
/// place, severity and message) and labelled by source when more than one
/// server answered. A server that fails is named with why, and the others'
/// answers are still given; "no errors" is said only when every server
/// answered.
pub(crate) async fn file_diagnostics(
    sup: &LspSupervisor,
    t: &Timeouts,
    args: &LspArgs,
) -> Result<ToolOutput, ToolError> {
    let file = file_arg(sup, args.file.as_deref(), "diagnostics")?;
    let linters: Vec<_> = sup
        .linter_slots_for(&file.path)
        .into_iter()
        .filter_map(|(_, slot)| slot.ok())
        .collect();
    let main = sup.server_slot_for(&file.path);
    if linters.is_empty() {
        // The file's server alone: its error is the call's.
        let (target, _) = synced(sup, &file).await?;
        let (lines, hidden) = diagnostics_of(t, &target, &file).await?;
        let sourced = lines.into_iter().map(|d| (d, String::new())).collect();
        let head = format!("lsp diagnostics  {} ({})", file.shown, target.slot.entry.id);
        return Ok(render_diagnostics(head, sourced, hidden, &[]));
    }
    let mut slots = Vec::new();
    let mut failed = Vec::new();
    match main {
        Ok((slot, language_id)) => slots.push((slot, language_id)),
        Err(e) => failed.push(format!("the file's server did not answer ({e})")),
    }
    for slot in linters {
        let language_id = slot.entry.language_of(&file.path).unwrap_or_default();
        slots.push((slot, language_id));
    }
    let answers = futures::future::join_all(slots.iter().map(|(slot, language_id)| {
        let file = &file;
        async move {
            let client = sup.ensure_running(slot).await?;
            let target = Target {
                client,
                slot: slot.clone(),
                language_id: language_id.clone(),
            };
            diagnostics_of(t, &target, file).await
        }
    }))
    .await;
    let mut sourced: Vec<(DiagLine, String)> = Vec::new();
    let mut hidden = 0;
    let mut answered = Vec::new();
    for ((slot, _), answer) in slots.iter().zip(answers) {
        let id = slot.entry.id.clone();
        match answer {
            Ok((lines, h)) => {
                hidden += h;
                sourced.extend(lines.into_iter().map(|d| (d, id.clone())));
                answered.push(id);
            }
            Err(e) => failed.push(format!("{id} did not answer ({e})")),
        }
    }
    let sourced = diagnostics::merge_labelled(sourced);
    let head = format!("lsp diagnostics  {} ({})", file.shown, answered.join(" + "));
    Ok(render_diagnostics(head, sourced, hidden, &failed))
}

/// The diagnostics answer: the head with the counts, one line per problem
/// (labelled `(source)` when the source is given), the failed servers.
fn render_diagnostics(
    mut head: String,
    lines: Vec<(DiagLine, String)>,
    hidden: usize,
    failed: &[String],
) -> ToolOutput {
    let mut out = Vec::new();
    if lines.is_empty() {
        if failed.is_empty() {
            out.push("no errors or warnings".to_string());
        } else {
            out.push("no errors or warnings from the servers that answered".to_string());
        }
    } else {
        let errors = lines.iter().filter(|(d, _)| d.severity == "error").count();
        head.push_str(&format!(
            " — {}, {}",
            tool_core::format::plural(errors, "error", "errors"),
            tool_core::format::plural(lines.len() - errors, "warning", "warnings")
        ));
        let rendered: Vec<String> = lines
            .iter()
            .map(|(d, src)| diagnostics::render_labelled(d, src))
            .collect();
        let (kept, note) =
            tool_core::format::cap_list(rendered, CHECKER_CAP, "fix the first ones and ask again");
        out.extend(kept);
        out.extend(note);
    }
    out.extend(failed.iter().cloned());
    if hidden > 0 {
        out.push(format!(
            "({} not shown)",
            tool_core::format::plural(hidden, "hint or info", "hints or infos")
        ));
    }
    ToolOutput::text(format!("{head}\n{}", out.join("\n")))
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
    let v = request(
        t,
        client,
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": file_uri(&file.path)}}),
    )
    .await?;
    let rows = format::document_symbols(&v);
    let head = format!("lsp symbols  {}", file.shown);
    if rows.is_empty() {
        return Ok(ToolOutput::text(format!("{head}\nno symbols in this file")));
    }
    // The header counts every symbol, as the footer's "showing N of M" does.
    let total = rows.len();
    let (rows, note) = tool_core::format::cap_list(
        rows,
        DOCUMENT_SYMBOLS_CAP,
        "use `query` to search for one by name",
    );
    let mut out = vec![format!(
        "{head} — {}",
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
    let mut targets: Vec<std::sync::Arc<LspClient>> = Vec::new();
    if let Some(f) = file {
        let file = file_arg(sup, Some(f), "symbols")?;
        let (t, _) = synced(sup, &file).await?;
        targets.push(t.client);
    } else {
        for slot in sup.slots() {
            if let Ok(c) = sup.ensure_running(&slot).await {
                targets.push(c);
            }
        }
        if targets.is_empty() {
            // Nothing running yet: start what the workspace root is a project for.
            let root = sup.workspace().root().to_path_buf();
            for entry in sup.catalog().entries().to_vec() {
                if let Ok(crate::catalog::Resolution::Ready { .. }) = sup.resolve(&entry, &root) {
                    let probe = root.join(format!(
                        "probe.{}",
                        entry
                            .extensions
                            .keys()
                            .next()
                            .map(String::as_str)
                            .unwrap_or("")
                    ));
                    if let Ok(t) = sup.target_for(&probe).await {
                        targets.push(t.client);
                    }
                }
            }
        }
        if targets.is_empty() {
            return Err(ToolError::unavailable(
                "no language server can start at the workspace root; pass `file` to search with the server for that file (op `status` says why)",
            ));
        }
    }
    let mut rows = Vec::new();
    for client in &targets {
        client.resync_open().await;
        wait_ready(t, client).await?;
        let v = request(t, client, "workspace/symbol", json!({"query": query})).await?;
        rows.extend(format::workspace_symbols(sup.workspace(), &v));
    }
    rows.sort();
    rows.dedup();
    let head = format!("lsp symbols  query `{query}`");
    if rows.is_empty() {
        return Ok(ToolOutput::text(format!(
            "{head}\nno symbols match (searched with {})",
            targets
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let total = rows.len();
    let width = rows
        .iter()
        .take(WORKSPACE_SYMBOLS_CAP)
        .map(|(p, l, _)| p.len() + l.to_string().len() + 1)
        .max()
        .unwrap_or(0);
    let mut out = vec![format!(
        "{head} — {}",
        tool_core::format::plural(total, "match", "matches")
    )];
    out.extend(
        rows.iter()
            .take(WORKSPACE_SYMBOLS_CAP)
            .map(|(p, l, t)| format!("{:<width$}    {t}", format!("{p}:{l}"))),
    );
    if total > WORKSPACE_SYMBOLS_CAP {
        out.push(tool_core::format::capped_note(
            WORKSPACE_SYMBOLS_CAP,
            total,
            "narrow with a longer query",
        ));
    }
    Ok(ToolOutput::text(out.join("\n")))
}

/// The file a path argument names, for the write wrapper and rename.
pub fn shown(sup: &LspSupervisor, p: &Path) -> String {
    format::show_path(sup.workspace(), p)
}

pub fn duration_ms(d: Duration) -> u128 {
    d.as_millis()
}
