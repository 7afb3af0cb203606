//! Fresh diagnostics for one document version, and the per-run ledger that
//! decides which of them are new.
//!
//! "Fresh" means: of the version we just sent, complete (see [`fresh`] for
//! the proof used per server, and docs/lsp.md). A wait that runs out says
//! so; it never passes for "no diagnostics".

use crate::client::{LspClient, OpenDoc, RequestError};
use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub(crate) struct FreshDiagnostics {
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotReady {
    #[error("diagnostics not ready after {} ms", .0.as_millis())]
    Timeout(Duration),
    #[error("{0}")]
    Request(#[from] RequestError),
    /// The server logged an error while checking and answered with no
    /// diagnostics: not a clean result.
    #[error("not checked: the server reported an error while checking ({0})")]
    ServerFailed(String),
}

/// Cut a server's error message to one short line.
fn first_line(message: &str) -> String {
    let line = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    tool_core::format::cap_chars(line.trim(), 200).into_owned()
}

/// An empty answer after the server logged an error since `doc` was sent
/// is no answer (vscode-html-language-server's CSS check throws on a
/// missing setting, logs it, and answers `[]`).
fn checked(
    client: &LspClient,
    doc: &OpenDoc,
    fresh: FreshDiagnostics,
) -> Result<FreshDiagnostics, NotReady> {
    if fresh.diagnostics.is_empty() {
        if let Some(error) = client.error_logged_since(doc.sent_at) {
            return Err(NotReady::ServerFailed(first_line(&error)));
        }
    }
    Ok(fresh)
}

/// How long an unversioned server must stay silent after its first publish
/// before its set counts as complete (servers with no stronger proof only).
pub(crate) const QUIET_WINDOW: Duration = Duration::from_millis(200);

/// typescript-language-server's pass-through to tsserver.
pub(crate) const TSSERVER_REQUEST: &str = "typescript.tsserverRequest";

/// The server's diagnostics for `doc` (already synced), at most `bound`.
///
/// The proof of freshness, strongest first: tsserver's own synchronous
/// syntactic and semantic check of the file (through
/// `typescript.tsserverRequest`: the answer is the complete set for the text
/// tsserver holds, never a syntactic-only pass); a pull
/// (`textDocument/diagnostic`), also when the server registers it only after
/// the document was opened (basedpyright does, half a second in); a publish
/// carrying the version sent; else the first publish after the change and a
/// quiet window.
pub(crate) async fn fresh(
    client: &LspClient,
    uri: &str,
    doc: &OpenDoc,
    bound: Duration,
) -> Result<FreshDiagnostics, NotReady> {
    let fresh = fresh_unchecked(client, uri, doc, bound).await?;
    checked(client, doc, fresh)
}

async fn fresh_unchecked(
    client: &LspClient,
    uri: &str,
    doc: &OpenDoc,
    bound: Duration,
) -> Result<FreshDiagnostics, NotReady> {
    if client.offers_command(TSSERVER_REQUEST) {
        if let Some(path) = crate::client::uri_path(uri) {
            let diagnostics = tsserver_check(client, &path, bound).await?;
            return Ok(FreshDiagnostics { diagnostics });
        }
    }
    let deadline = tokio::time::Instant::now() + bound;
    let mut changes = client.subscribe_diagnostics();
    let mut pull_refused = false;
    loop {
        if let Some(why) = client.gone() {
            return Err(RequestError::Gone(why).into());
        }
        if !pull_refused && client.pull_diagnostics() {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match pull(client, uri, left).await {
                Ok(items) => {
                    return Ok(FreshDiagnostics {
                        diagnostics: with_published(client, uri, doc, items),
                    })
                }
                Err(RequestError::TimedOut { .. }) => return Err(NotReady::Timeout(bound)),
                Err(e @ RequestError::Gone(_)) => return Err(e.into()),
                // Content modified / server cancelled: the server was busy
                // (rust-analyzer during a cargo check); ask again shortly.
                Err(RequestError::Rpc { code, .. }) if RETRY_PULL.contains(&code) => {
                    if tokio::time::Instant::now() + PULL_RETRY_AFTER >= deadline {
                        return Err(NotReady::Timeout(bound));
                    }
                    tokio::time::sleep(PULL_RETRY_AFTER).await;
                    continue;
                }
                // Registered but refused: fall back to what it publishes.
                Err(RequestError::Rpc { .. } | RequestError::Malformed { .. }) => {
                    pull_refused = true;
                }
            }
        }
        if let Some(p) = client.published(uri) {
            match p.version {
                Some(v) if v >= doc.version => {
                    return Ok(FreshDiagnostics {
                        diagnostics: p.diagnostics,
                    })
                }
                None if answers_version(client, doc, &p) => {
                    let quiet_until = tokio::time::Instant::from_std(p.at + QUIET_WINDOW);
                    if tokio::time::Instant::now() >= quiet_until {
                        return Ok(FreshDiagnostics {
                            diagnostics: p.diagnostics,
                        });
                    }
                    // Wake at the end of the window, or earlier on a new publish.
                    let _ =
                        tokio::time::timeout_at(quiet_until.min(deadline), changes.changed()).await;
                    if tokio::time::Instant::now() >= deadline {
                        return Err(NotReady::Timeout(bound));
                    }
                    continue;
                }
                _ => {}
            }
        }
        // A publish, a registration of pull diagnostics, or the exit.
        if tokio::time::timeout_at(deadline, changes.changed())
            .await
            .is_err()
        {
            return Err(NotReady::Timeout(bound));
        }
    }
}

/// A pull's answer with what the server published for the same version:
/// a server may serve its diagnostics by both (rust-analyzer: its own
/// analysis by pull, `cargo check`'s results by publish), and the file's
/// one view holds both. A publish counts when it carries this version or
/// a later one, or, unversioned, came after this version was sent; what
/// the pull already holds is not repeated.
fn with_published(
    client: &LspClient,
    uri: &str,
    doc: &OpenDoc,
    mut pulled: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let Some(p) = client.published(uri) else {
        return pulled;
    };
    if answers_version(client, doc, &p) {
        for d in p.diagnostics {
            if !pulled.contains(&d) {
                pulled.push(d);
            }
        }
    }
    pulled
}

/// Whether publish `p` answers `doc`'s version: it carries that version
/// or a later one, or, unversioned, it came after the version was sent —
/// and, after a change to a server that debounces changes, no sooner than
/// its delay allows (intelephense re-publishes the old text's set when its
/// indexing ends or another document opens; its check of the change comes
/// 1 s after it). A tenth of the delay is left for the timer's precision.
fn answers_version(client: &LspClient, doc: &OpenDoc, p: &crate::client::Published) -> bool {
    if let Some(v) = p.version {
        return v >= doc.version;
    }
    let delay = client.change_diagnostics_delay();
    let is_change = doc.version > 1;
    p.seq > doc.sent_at_seq && (!is_change || p.at >= doc.sent_at + delay.mul_f64(0.9))
}

/// Error codes of a pull the server asks to be retried: ContentModified
/// and ServerCancelled (LSP 3.17).
const RETRY_PULL: [i64; 2] = [-32801, -32802];
/// How long after such an answer the pull is asked again.
const PULL_RETRY_AFTER: Duration = Duration::from_millis(100);

async fn pull(
    client: &LspClient,
    uri: &str,
    bound: Duration,
) -> Result<Vec<Diagnostic>, RequestError> {
    client.pull_diagnostics_of(uri, bound).await
}

/// tsserver's syntactic and semantic diagnostics of `path`, asked
/// synchronously: each answer comes after the project is loaded and the
/// check is done, so it is complete for the text tsserver holds (the
/// requests queue behind the document sync sent before them).
async fn tsserver_check(
    client: &LspClient,
    path: &std::path::Path,
    bound: Duration,
) -> Result<Vec<Diagnostic>, NotReady> {
    let deadline = Instant::now() + bound;
    let mut out = Vec::new();
    for command in ["syntacticDiagnosticsSync", "semanticDiagnosticsSync"] {
        let left = deadline.saturating_duration_since(Instant::now());
        let reply = client
            .request(
                "workspace/executeCommand",
                json!({"command": TSSERVER_REQUEST,
                       "arguments": [command, {"file": path, "includeLinePosition": false}]}),
                left,
            )
            .await
            .map_err(|e| match e {
                RequestError::TimedOut { .. } => NotReady::Timeout(bound),
                e => e.into(),
            })?;
        let body = reply.get("body").unwrap_or(&reply);
        out.extend(
            body.as_array()
                .into_iter()
                .flatten()
                .filter_map(tsserver_diagnostic),
        );
    }
    // Kept as a pull's answer is: when it came is the server's delivery.
    client.remember_pulled(&crate::client::file_uri(path), out.clone());
    Ok(out)
}

/// One tsserver diagnostic (1-based line and UTF-16 offset) as LSP's.
fn tsserver_diagnostic(d: &Value) -> Option<Diagnostic> {
    let pos = |v: &Value| -> Option<lsp_types::Position> {
        Some(lsp_types::Position {
            line: (v.get("line")?.as_u64()? as u32).saturating_sub(1),
            character: (v.get("offset")?.as_u64()? as u32).saturating_sub(1),
        })
    };
    let start = pos(d.get("start")?)?;
    let end = d.get("end").and_then(pos).unwrap_or(start);
    let severity = match d.get("category").and_then(Value::as_str) {
        Some("error") => DiagnosticSeverity::ERROR,
        Some("warning") => DiagnosticSeverity::WARNING,
        Some("suggestion") => DiagnosticSeverity::HINT,
        _ => DiagnosticSeverity::INFORMATION,
    };
    Some(Diagnostic {
        range: lsp_types::Range { start, end },
        severity: Some(severity),
        code: d
            .get("code")
            .and_then(Value::as_i64)
            .map(|c| NumberOrString::Number(c as i32)),
        source: Some("typescript".into()),
        message: d.get("text")?.as_str()?.to_string(),
        ..Default::default()
    })
}

pub(crate) fn severity_name(s: Option<DiagnosticSeverity>) -> &'static str {
    match s {
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        Some(DiagnosticSeverity::HINT) => "hint",
        _ => "error",
    }
}

/// Errors and warnings of `doc`, as the model reads them.
pub(crate) fn problems(
    shown: &str,
    diags: &[lsp_types::Diagnostic],
    doc: &OpenDoc,
    enc: crate::PositionEncoding,
) -> Vec<DiagLine> {
    problem_lines(shown, diags, Some(&doc.text), enc)
}

/// Errors and warnings of a file whose text is `text` (columns in
/// characters when it is known), as the model reads them.
pub(crate) fn problem_lines(
    shown: &str,
    diags: &[lsp_types::Diagnostic],
    text: Option<&str>,
    enc: crate::PositionEncoding,
) -> Vec<DiagLine> {
    diags
        .iter()
        .filter(|d| is_problem(d))
        .map(|d| DiagLine::from_lsp(shown, d, text, enc))
        .collect()
}

/// Codes the servers and linters give a syntax error: ruff's
/// `invalid-syntax`, rust-analyzer's `syntax-error`, pycodestyle's and
/// flake8's `E999`.
const SYNTAX_CODES: [&str; 3] = ["invalid-syntax", "syntax-error", "E999"];

/// Whether a problem that `server` (a catalog entry's id) reported is a
/// syntax error by its account: an error with one of [`SYNTAX_CODES`], or
/// whose message says so (`SyntaxError`, `syntax error`); from
/// typescript-language-server, a TS1xxx (its parser's codes); from
/// basedpyright or pyright, a code-less `Expected …` (their parse errors
/// carry no rule); from gopls, a code-less `expected …`.
pub(crate) fn is_syntax_error(d: &DiagLine, server: &str) -> bool {
    if d.severity != "error" {
        return false;
    }
    let message = d.message.trim_start();
    if message.starts_with("SyntaxError") || message.to_ascii_lowercase().contains("syntax error") {
        return true;
    }
    match (server, d.code.as_deref()) {
        (_, Some(code)) if SYNTAX_CODES.contains(&code) => true,
        ("typescript", Some(code)) => {
            code.len() == 4 && code.starts_with('1') && code.chars().all(|c| c.is_ascii_digit())
        }
        ("python", None) => message.starts_with("Expected "),
        // gopls: the Go parser's errors carry no code, its type errors do.
        ("go", None) => message.starts_with("expected "),
        _ => false,
    }
}

/// Errors and warnings: what the wrapper and `diagnostics` report by default.
pub(crate) fn is_problem(d: &Diagnostic) -> bool {
    matches!(
        d.severity,
        None | Some(DiagnosticSeverity::ERROR | DiagnosticSeverity::WARNING)
    )
}

pub(crate) fn code_text(code: &Option<NumberOrString>) -> Option<String> {
    match code {
        Some(NumberOrString::String(s)) => Some(s.clone()),
        Some(NumberOrString::Number(n)) => Some(n.to_string()),
        None => None,
    }
}

/// One diagnostic as the model reads it, from a line of the file (1-based
/// line; the column is in characters, 1-based).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DiagLine {
    pub path: String,
    pub line: u32,
    pub col: u32,
    pub severity: &'static str,
    pub code: Option<String>,
    pub message: String,
}

impl DiagLine {
    pub fn from_lsp(
        path: &str,
        d: &Diagnostic,
        text: Option<&str>,
        enc: crate::PositionEncoding,
    ) -> Self {
        let line = d.range.start.line;
        let col = text
            .and_then(|t| crate::position::lines(t).get(line as usize).copied())
            .map_or(d.range.start.character, |l| {
                let b = enc.byte_of(l, d.range.start.character);
                l[..b].chars().count() as u32
            });
        DiagLine {
            path: path.to_string(),
            line: line + 1,
            col: col + 1,
            severity: severity_name(d.severity),
            code: code_text(&d.code),
            message: d.message.clone(),
        }
    }

    pub fn render(&self) -> String {
        let first = self.message.lines().next().unwrap_or("").trim();
        let msg = tool_core::format::cap_chars(first, 300);
        match &self.code {
            Some(c) => format!(
                "{}:{}:{} {} [{c}] {msg}",
                self.path, self.line, self.col, self.severity
            ),
            None => format!(
                "{}:{}:{} {} {msg}",
                self.path, self.line, self.col, self.severity
            ),
        }
    }
}

/// Key of the ledger: severity, code and message, never position, so a
/// diagnostic that merely moved is not new.
type LedgerKey = (&'static str, Option<String>, String);

/// What the run has already been told, per file and server (a file's own
/// server and each linter beside it have their own baseline): how many
/// diagnostics of each key were present at the last check.
#[derive(Debug, Default)]
pub struct DiagnosticLedger {
    seen: HashMap<(PathBuf, String), HashMap<LedgerKey, usize>>,
}

fn key(d: &DiagLine) -> LedgerKey {
    (d.severity, d.code.clone(), d.message.clone())
}

fn slot(path: &Path, server: &str) -> (PathBuf, String) {
    (path.to_path_buf(), server.to_string())
}

impl DiagnosticLedger {
    pub fn knows(&self, path: &Path, server: &str) -> bool {
        self.seen.contains_key(&slot(path, server))
    }

    /// Record the file's current diagnostics from `server` without
    /// reporting them (the state before the run's first write to it).
    pub fn baseline(&mut self, path: &Path, server: &str, diags: &[DiagLine]) {
        let mut counts = HashMap::new();
        for d in diags {
            *counts.entry(key(d)).or_insert(0) += 1;
        }
        self.seen.insert(slot(path, server), counts);
    }

    /// The diagnostics of `diags` that are new, and record `diags` as the
    /// file's state from `server`. A key seen once and now present twice
    /// yields one new.
    pub fn fold(&mut self, path: &Path, server: &str, diags: &[DiagLine]) -> Vec<DiagLine> {
        let (new, _, counts) = self.compare(path, server, diags);
        self.seen.insert(slot(path, server), counts);
        new
    }

    /// What `diags` would change against what the run was told of the file
    /// by `server`, recording nothing: the new diagnostics, and the
    /// severities of those gone (one entry per diagnostic fixed).
    pub fn delta(
        &self,
        path: &Path,
        server: &str,
        diags: &[DiagLine],
    ) -> (Vec<DiagLine>, Vec<&'static str>) {
        let (new, gone, _) = self.compare(path, server, diags);
        (new, gone)
    }

    fn compare(
        &self,
        path: &Path,
        server: &str,
        diags: &[DiagLine],
    ) -> (Vec<DiagLine>, Vec<&'static str>, HashMap<LedgerKey, usize>) {
        let mut sorted = diags.to_vec();
        sorted.sort();
        let empty = HashMap::new();
        let old = self.seen.get(&slot(path, server)).unwrap_or(&empty);
        let mut counts: HashMap<LedgerKey, usize> = HashMap::new();
        let mut new = Vec::new();
        for d in sorted {
            let n = counts.entry(key(&d)).or_insert(0);
            *n += 1;
            if *n > old.get(&key(&d)).copied().unwrap_or(0) {
                new.push(d);
            }
        }
        let mut gone = Vec::new();
        for (k, &was) in old {
            let now = counts.get(k).copied().unwrap_or(0);
            gone.extend(std::iter::repeat_n(k.0, was.saturating_sub(now)));
        }
        gone.sort_unstable();
        (new, gone, counts)
    }
}

/// Of `after`, those not in `before`: counted by severity, code and message
/// (never position, as the ledger counts), in `after`'s sorted order.
pub(crate) fn new_against(before: &[DiagLine], after: &[DiagLine]) -> Vec<DiagLine> {
    let mut old: HashMap<LedgerKey, usize> = HashMap::new();
    for d in before {
        *old.entry(key(d)).or_insert(0) += 1;
    }
    let mut sorted = after.to_vec();
    sorted.sort();
    let mut counts: HashMap<LedgerKey, usize> = HashMap::new();
    sorted
        .into_iter()
        .filter(|d| {
            let n = counts.entry(key(d)).or_insert(0);
            *n += 1;
            *n > old.get(&key(d)).copied().unwrap_or(0)
        })
        .collect()
}

/// A diagnostic and the servers that reported it, as `(python)` or
/// `(ruff, python)` after its line; empty when the file has one server.
pub(crate) type Labelled = (DiagLine, String);

/// One labelled diagnostic as the model reads it.
pub(crate) fn render_labelled(d: &DiagLine, source: &str) -> String {
    match source {
        "" => d.render(),
        source => format!("{} ({source})", d.render()),
    }
}

/// Several servers' diagnostics of one file as one list, sorted: the same
/// diagnostic (place, severity and message) from two servers is listed
/// once, with both labels.
pub(crate) fn merge_labelled(lines: Vec<Labelled>) -> Vec<Labelled> {
    let mut out: Vec<Labelled> = Vec::new();
    for (d, source) in lines {
        let same = out.iter_mut().find(|(e, _)| {
            (e.line, e.col, e.severity, &e.message) == (d.line, d.col, d.severity, &d.message)
        });
        match same {
            Some((_, s)) if !source.is_empty() => {
                s.push_str(", ");
                s.push_str(&source);
            }
            Some(_) => {}
            None => out.push((d, source)),
        }
    }
    out.sort();
    out
}

/// Cap a file's new problems: at most `per_file` lines, and a flood (more than
/// `flood`) collapsed to one summary line.
pub(crate) fn render_capped(
    path: &str,
    new: &[Labelled],
    per_file: usize,
    flood: usize,
) -> Vec<String> {
    let errors = new.iter().filter(|(d, _)| d.severity == "error").count();
    let warnings = new.iter().filter(|(d, _)| d.severity == "warning").count();
    if new.len() > flood {
        let first = new
            .iter()
            .find(|(d, _)| d.severity == "error")
            .or(new.first())
            .map(|(d, src)| render_labelled(d, src))
            .unwrap_or_default();
        return vec![format!(
            "{path}: {} new problems ({errors} errors, {warnings} warnings) — likely one cause; the first: {first} — run `lsp` op `diagnostics` on the file for all",
            new.len()
        )];
    }
    let mut out: Vec<String> = new
        .iter()
        .take(per_file)
        .map(|(d, src)| render_labelled(d, src))
        .collect();
    if new.len() > per_file {
        out.push(format!(
            "… {} more new problems in {path} — run `lsp` op `diagnostics` on it for all",
            new.len() - per_file
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(line: u32, sev: &'static str, msg: &str) -> DiagLine {
        DiagLine {
            path: "a.py".into(),
            line,
            col: 1,
            severity: sev,
            code: Some("c".into()),
            message: msg.into(),
        }
    }

    #[test]
    fn moved_diagnostics_are_not_new_but_second_copies_are() {
        let p = Path::new("/w/a.py");
        let mut ledger = DiagnosticLedger::default();
        assert!(!ledger.knows(p, "python"));
        ledger.baseline(p, "python", &[d(3, "warning", "old")]);
        // Each server has its own baseline.
        assert!(!ledger.knows(p, "ruff"));
        let new = ledger.fold(
            p,
            "python",
            &[d(3, "warning", "old"), d(5, "error", "broke")],
        );
        assert_eq!(new, vec![d(5, "error", "broke")]);
        // The code above moved: same keys at other lines, nothing new.
        let new = ledger.fold(
            p,
            "python",
            &[d(7, "warning", "old"), d(9, "error", "broke")],
        );
        assert!(new.is_empty(), "{new:?}");
        // A second copy of the same message is new.
        let new = ledger.fold(
            p,
            "python",
            &[
                d(7, "warning", "old"),
                d(9, "error", "broke"),
                d(12, "error", "broke"),
            ],
        );
        assert_eq!(new, vec![d(12, "error", "broke")]);
        // A different severity is a different key.
        let new = ledger.fold(p, "python", &[d(7, "error", "old")]);
        assert_eq!(new, vec![d(7, "error", "old")]);
        // A delta compares without recording: one new, one error gone.
        let (new, gone) = ledger.delta(p, "python", &[d(1, "warning", "w")]);
        assert_eq!(new, vec![d(1, "warning", "w")]);
        assert_eq!(gone, ["error"]);
        assert_eq!(
            ledger.delta(p, "python", &[d(1, "warning", "w")]).0.len(),
            1
        );
        // Another server's state of the same file is its own.
        assert_eq!(ledger.fold(p, "ruff", &[d(7, "error", "old")]).len(), 1);
    }

    #[test]
    fn floods_collapse_and_long_lists_are_capped() {
        let many: Vec<Labelled> = (1..=30)
            .map(|i| (d(i, "error", &format!("e{i}")), String::new()))
            .collect();
        let out = render_capped("a.py", &many, 20, 100);
        assert_eq!(out.len(), 21);
        assert!(
            out[20].contains("10 more new problems in a.py"),
            "{}",
            out[20]
        );
        let flood: Vec<Labelled> = (1..=150)
            .map(|i| (d(i, "error", &format!("e{i}")), String::new()))
            .collect();
        let out = render_capped("a.py", &flood, 20, 100);
        assert_eq!(out.len(), 1);
        assert!(
            out[0].starts_with("a.py: 150 new problems (150 errors, 0 warnings)"),
            "{}",
            out[0]
        );
        assert_eq!(d(2, "error", "m\nmore").render(), "a.py:2:1 error [c] m");
    }
}
