//! Positioning a request: a file argument resolved inside the workspace, the
//! file synced to its server, a line and symbol turned into the server's
//! position, and the bounds of the call that asks.

use crate::args::{LspArgs, CALL_TIMEOUT_SECONDS};
use crate::client::{file_uri, LspClient};
use crate::position::{self, SymbolSpot};
use crate::supervisor::{LspSupervisor, Target, Timeouts};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tool_core::ToolError;

/// The bounds of one call: the configured ones, or every wait on the server
/// (indexing, one request, diagnostics) bounded by the call's
/// `timeout_seconds`. Checked before any server is started.
pub(crate) fn call_timeouts(
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
pub(crate) async fn within_call_timeout<T>(
    sup: &LspSupervisor,
    timeout_seconds: Option<u64>,
    file: Option<&str>,
    work: impl std::future::Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    let Some(secs) = timeout_seconds else {
        return work.await;
    };
    let started = std::time::Instant::now();
    if let Ok(r) =
        tokio::time::timeout(Duration::from_secs(secs) + Duration::from_secs(1), work).await
    {
        r
    } else {
        let server = file
            .and_then(|f| sup.catalog().for_file(Path::new(f)))
            .map_or_else(
                || "the language server".into(),
                |(e, _)| format!("the {} language server", e.id),
            );
        Err(ToolError::timed_out(format!(
            "{server} did not finish within timeout_seconds = {secs} ({:.1} s elapsed, starting, indexing or answering); it keeps running — retry, or give a larger timeout_seconds",
            started.elapsed().as_secs_f64()
        )))
    }
}

/// A file argument resolved inside the workspace, and how to show it.
pub(crate) struct FileArg {
    pub path: PathBuf,
    pub shown: String,
}

pub(crate) fn file_arg(
    sup: &LspSupervisor,
    file: Option<&str>,
    op: &str,
) -> Result<FileArg, ToolError> {
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
pub(crate) struct Positioned {
    pub target: Target,
    pub file: FileArg,
    pub uri: String,
    pub text: String,
    pub spot: SymbolSpot,
    pub position: lsp_types::Position,
    /// The symbol as the answer names it: what the call gave, or, when that
    /// only occurs inside a longer identifier there, that identifier.
    pub symbol: String,
    /// What the call gave, when it matched only inside [`Self::symbol`].
    pub widened_from: Option<String>,
    /// The whole identifier at the position (`method` for `.method`): what
    /// a search for its other mentions looks for.
    pub identifier: String,
}

impl Positioned {
    /// The document and position, as typed params hold them.
    pub(crate) fn text_document_position(&self) -> lsp_types::TextDocumentPositionParams {
        lsp_types::TextDocumentPositionParams::new(
            crate::client::text_document(&self.file.path),
            self.position,
        )
    }
}

/// The server for a file, its open documents re-synced from disk, the file
/// itself synced.
pub(crate) async fn synced(
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

pub(crate) async fn wait_ready(t: &Timeouts, client: &LspClient) -> Result<(), ToolError> {
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

pub(crate) async fn position(
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
    let run = position::identifier_at(line_text, spot.byte);
    let identifier = line_text[run].to_string();
    // `sign` given where the line has only `sign_value`: the answer is about
    // `sign_value`, and says so.
    let widened = position::inside_longer_identifier(line_text, spot, &symbol);
    let (symbol, widened_from) = if widened {
        (identifier.clone(), Some(symbol))
    } else {
        (symbol, None)
    };
    Ok(Positioned {
        uri: file_uri(&file.path),
        file,
        text: doc.text,
        spot,
        position: lsp_types::Position::new(spot.line, character),
        symbol,
        widened_from,
        identifier,
        target,
    })
}

/// A server younger than this may answer before it has analysed what a
/// question needs: its empty answers are probed (asked again) before they
/// are believed.
pub(crate) const COLD_SERVER: Duration = Duration::from_mins(1);
/// How long an empty answer of a cold server is probed, at most.
pub(crate) const PROBE_FOR: Duration = Duration::from_secs(10);
/// How often it is asked again meanwhile.
pub(crate) const PROBE_EVERY: Duration = Duration::from_millis(400);
