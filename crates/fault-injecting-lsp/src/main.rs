//! A language server for fault-injection tests only: it misbehaves on
//! command, so the tests can prove that no call hangs past its bound, that
//! crashes are noticed and recovered from, and that late diagnostics are
//! reported honestly.
//!
//! Commands are words in the document, on the line a hover asks about:
//! - `crash`   — the process exits in the middle of the hover request;
//! - `hang`    — the hover is never answered (until cancelled);
//! - `garbage` — a malformed frame is written to stdout, then nothing;
//! - `cold`    — the first three hovers are answered with nothing (as a
//!   server that has not analysed the file yet), the fourth normally;
//! - anything else — a normal hover answer.
//!
//! Every rename is answered with an edit that changes nothing (a server
//! that finds nothing it may rename).
//!
//! File moves: it offers `willRenameFiles` for `*.fault` files, answered
//! with no edits, and `didRenameFiles`, whose every (old, new) pair it
//! keeps; once one came, every hover answer ends with a line naming them
//! all (relative to the root), so a test sees what the server was told.
//!
//! Code actions: on a `slow` line one action is offered after 3 s, whose
//! command takes 3 s more to run (each answer within a 5 s request bound,
//! the two together not); elsewhere none.
//!
//! Diagnostics: every line containing `ERROR` gets an error, published with
//! the document version after the delay a `delay_ms=N` line asks for.
//!
//! `--configured-after-ms=N` makes it start as biome does: its configuration
//! loads N ms after `initialized`; until then a document's diagnostics are
//! published without the `ERROR` ones (biome publishes syntax only), then it
//! logs `fault: configuration loaded` and publishes every open document
//! again, complete.
//!
//! `--pull-registrations=reg:a,reg:b,unreg:a` makes it serve diagnostics by
//! pull only, as pyright does: after `initialized` it registers
//! `textDocument/diagnostic` and withdraws registrations by id in the order
//! given, answers pulls with the `ERROR` markers, and never publishes.
//!
//! `--debounced-changes-ms=N` makes it publish as intelephense does,
//! without versions: an open is checked at once; a change is checked N ms
//! after it, and at the change the previous text's set is published again
//! at once (intelephense re-publishes the old text's set when its indexing
//! ends or another document opens, often just after a change).
//!
//! `--save-check-restarts-ms=N` makes it check on save as rust-analyzer
//! runs `cargo check`, restarting once: its own pass (at open and change)
//! finds nothing; at each save a progress run of token `fault/check` begins
//! and ends at once with no report (a run cancelled by a restart), then N
//! ms later another begins, reports, publishes the `ERROR` markers (source
//! `fault-check`, unversioned) and ends.
//!
//! `--progress-stalls` makes it report progress as ccls does when its
//! indexer finishes a moment after its main loop last looked: at the first
//! `didOpen` it begins an "indexing" progress at "1/2", and ends it only
//! when the next bytes arrive on stdin (ccls's main loop checks its counters
//! only when a message or an index update wakes it).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tower_lsp::jsonrpc::Result;
use tower_lsp::lsp_types::notification::Progress;
use tower_lsp::lsp_types::{
    CodeActionOrCommand, CodeActionParams, CodeActionProviderCapability, CodeActionResponse,
    Command, Diagnostic, DiagnosticSeverity, DidChangeTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, DocumentDiagnosticParams,
    DocumentDiagnosticReport, DocumentDiagnosticReportResult, ExecuteCommandOptions,
    ExecuteCommandParams, FileOperationFilter, FileOperationPattern,
    FileOperationRegistrationOptions, FullDocumentDiagnosticReport, Hover, HoverContents,
    HoverParams, HoverProviderCapability, InitializeParams, InitializeResult, InitializedParams,
    MarkupContent, MarkupKind, MessageType, NumberOrString, OneOf, Position, ProgressParams,
    ProgressParamsValue, Range, RelatedFullDocumentDiagnosticReport, RenameFilesParams,
    RenameParams, ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    Url, WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport,
    WorkspaceEdit, WorkspaceFileOperationsServerCapabilities, WorkspaceServerCapabilities,
};
use tower_lsp::{Client, LanguageServer, LspService, Server};

struct FaultServer {
    client: Client,
    docs: Arc<Mutex<std::collections::HashMap<Url, (String, i32)>>>,
    cancelled: Arc<AtomicUsize>,
    /// `--configured-after-ms`: when the configuration loads.
    configured_after: Option<Duration>,
    configured: Arc<AtomicBool>,
    /// Hovers asked on a `cold` line so far.
    cold_hovers: AtomicUsize,
    /// The root's URI, from `initialize`.
    root: std::sync::Mutex<String>,
    /// Every `didRenameFiles` pair so far, relative to the root.
    renamed: std::sync::Mutex<Vec<String>>,
    /// `--progress-stalls`: the count of reads from stdin, which a stalled
    /// progress waits on; `None` without the flag.
    stdin_reads: Option<tokio::sync::watch::Receiver<u64>>,
    stalled_once: AtomicBool,
    /// `--pull-registrations`: each step, `true` to register under the id,
    /// `false` to withdraw it; `None` without the flag (it publishes).
    pull_script: Option<Vec<(bool, String)>>,
    /// `--debounced-changes-ms`: the delay of a change's check; `None`
    /// without the flag (versioned publishes, at once).
    debounced_changes: Option<Duration>,
    /// `--save-check-restarts-ms`: the delay before the save-time check's
    /// second run; `None` without the flag.
    save_check_restarts: Option<Duration>,
}

impl FaultServer {
    async fn publish(&self, uri: Url, text: String, version: i32) {
        if self.save_check_restarts.is_some() {
            // Its own pass finds nothing; the save-time check does.
            self.client
                .publish_diagnostics(uri, Vec::new(), Some(version))
                .await;
        } else if self.pull_script.is_none() {
            publish(&self.client, &self.configured, uri, text, version).await;
        }
    }
}

/// An error on every line holding `ERROR` (none until configured).
fn error_markers(text: &str, configured: &AtomicBool) -> Vec<Diagnostic> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains("ERROR") && configured.load(Ordering::SeqCst))
        .map(|(i, l)| Diagnostic {
            range: Range::new(
                Position::new(i as u32, l.find("ERROR").unwrap_or(0) as u32),
                Position::new(i as u32, (l.find("ERROR").unwrap_or(0) + 5) as u32),
            ),
            severity: Some(DiagnosticSeverity::ERROR),
            code: Some(NumberOrString::String("F001".into())),
            source: Some("fault".into()),
            message: "fault: ERROR marker".into(),
            ..Default::default()
        })
        .collect()
}

/// Register and withdraw `textDocument/diagnostic` as the script says.
async fn run_pull_script(client: &Client, script: &[(bool, String)]) {
    use tower_lsp::lsp_types::{Registration, Unregistration};
    for (register, id) in script {
        let method = "textDocument/diagnostic".to_string();
        if *register {
            let options = serde_json::json!({
                "documentSelector": null,
                "interFileDependencies": false,
                "workspaceDiagnostics": false,
            });
            let _ = client
                .register_capability(vec![Registration {
                    id: id.clone(),
                    method,
                    register_options: Some(options),
                }])
                .await;
        } else {
            let _ = client
                .unregister_capability(vec![Unregistration {
                    id: id.clone(),
                    method,
                }])
                .await;
        }
    }
}

async fn publish(client: &Client, configured: &AtomicBool, uri: Url, text: String, version: i32) {
    let delay = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("delay_ms="))
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let diags = error_markers(&text, configured);
    let client = client.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(delay)).await;
        client.publish_diagnostics(uri, diags, Some(version)).await;
    });
}

#[tower_lsp::async_trait]
impl LanguageServer for FaultServer {
    #[allow(deprecated)] // root_uri: what this client sends
    async fn initialize(&self, p: InitializeParams) -> Result<InitializeResult> {
        if let Some(root) = p.root_uri {
            *self.root.lock().unwrap() = root.to_string().trim_end_matches('/').to_string();
        }
        let fault_files = || FileOperationRegistrationOptions {
            filters: vec![FileOperationFilter {
                scheme: Some("file".into()),
                pattern: FileOperationPattern {
                    glob: "**/*.fault".into(),
                    matches: None,
                    options: None,
                },
            }],
        };
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Kind(
                    TextDocumentSyncKind::FULL,
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                rename_provider: Some(OneOf::Left(true)),
                code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec!["fault.slow".into()],
                    ..Default::default()
                }),
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: None,
                    file_operations: Some(WorkspaceFileOperationsServerCapabilities {
                        will_rename: Some(fault_files()),
                        did_rename: Some(fault_files()),
                        ..Default::default()
                    }),
                }),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "fault-injecting-lsp".into(),
                version: None,
            }),
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        if let Some(script) = self.pull_script.clone() {
            let client = self.client.clone();
            tokio::spawn(async move { run_pull_script(&client, &script).await });
        }
        let Some(after) = self.configured_after else {
            return;
        };
        let (client, docs, configured) = (
            self.client.clone(),
            self.docs.clone(),
            self.configured.clone(),
        );
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            configured.store(true, Ordering::SeqCst);
            client
                .log_message(MessageType::INFO, "fault: configuration loaded")
                .await;
            let open: Vec<_> = docs.lock().await.clone().into_iter().collect();
            for (uri, (text, version)) in open {
                publish(&client, &configured, uri, text, version).await;
            }
        });
    }

    async fn did_save(&self, p: DidSaveTextDocumentParams) {
        let Some(delay) = self.save_check_restarts else {
            return;
        };
        let uri = p.text_document.uri;
        let text = self
            .docs
            .lock()
            .await
            .get(&uri)
            .map(|(t, _)| t.clone())
            .unwrap_or_default();
        let mut diags = error_markers(&text, &self.configured);
        for d in &mut diags {
            d.source = Some("fault-check".into());
        }
        let client = self.client.clone();
        tokio::spawn(async move {
            let progress = |value: WorkDoneProgress| ProgressParams {
                token: NumberOrString::String("fault/check".into()),
                value: ProgressParamsValue::WorkDone(value),
            };
            let begin = || {
                WorkDoneProgress::Begin(WorkDoneProgressBegin {
                    title: "fault check".into(),
                    ..Default::default()
                })
            };
            let end = || WorkDoneProgress::End(WorkDoneProgressEnd::default());
            client
                .send_notification::<Progress>(progress(begin()))
                .await;
            client.send_notification::<Progress>(progress(end())).await;
            tokio::time::sleep(delay).await;
            client
                .send_notification::<Progress>(progress(begin()))
                .await;
            let report = WorkDoneProgress::Report(WorkDoneProgressReport {
                message: Some("fault (lib)".into()),
                ..Default::default()
            });
            client.send_notification::<Progress>(progress(report)).await;
            client.publish_diagnostics(uri, diags, None).await;
            client.send_notification::<Progress>(progress(end())).await;
        });
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, p: DidOpenTextDocumentParams) {
        let d = p.text_document;
        self.docs
            .lock()
            .await
            .insert(d.uri.clone(), (d.text.clone(), d.version));
        if self.debounced_changes.is_some() {
            let diags = error_markers(&d.text, &self.configured);
            self.client.publish_diagnostics(d.uri, diags, None).await;
        } else {
            self.publish(d.uri, d.text, d.version).await;
        }
        if let Some(reads) = &self.stdin_reads {
            if !self.stalled_once.swap(true, Ordering::SeqCst) {
                tokio::spawn(stall_progress(self.client.clone(), reads.clone()));
            }
        }
    }

    async fn did_change(&self, p: DidChangeTextDocumentParams) {
        if let Some(c) = p.content_changes.into_iter().last() {
            let uri = p.text_document.uri;
            let before = self
                .docs
                .lock()
                .await
                .insert(uri.clone(), (c.text.clone(), p.text_document.version));
            if let Some(delay) = self.debounced_changes {
                let stale = error_markers(&before.unwrap_or_default().0, &self.configured);
                self.client
                    .publish_diagnostics(uri.clone(), stale, None)
                    .await;
                let fresh = error_markers(&c.text, &self.configured);
                let client = self.client.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    client.publish_diagnostics(uri, fresh, None).await;
                });
                return;
            }
            self.publish(uri, c.text, p.text_document.version).await;
        }
    }

    async fn diagnostic(
        &self,
        p: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        let text = self
            .docs
            .lock()
            .await
            .get(&p.text_document.uri)
            .map(|(t, _)| t.clone())
            .unwrap_or_default();
        Ok(DocumentDiagnosticReportResult::Report(
            DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
                related_documents: None,
                full_document_diagnostic_report: FullDocumentDiagnosticReport {
                    result_id: None,
                    items: error_markers(&text, &self.configured),
                },
            }),
        ))
    }

    async fn code_action(&self, p: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let line = self
            .docs
            .lock()
            .await
            .get(&p.text_document.uri)
            .and_then(|(t, _)| t.lines().nth(p.range.start.line as usize).map(String::from))
            .unwrap_or_default();
        if !line.contains("slow") {
            return Ok(Some(Vec::new()));
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
        Ok(Some(vec![CodeActionOrCommand::Command(Command {
            title: "slow fix".into(),
            command: "fault.slow".into(),
            arguments: None,
        })]))
    }

    async fn execute_command(&self, _: ExecuteCommandParams) -> Result<Option<serde_json::Value>> {
        tokio::time::sleep(Duration::from_secs(3)).await;
        Ok(None)
    }

    async fn rename(&self, _: RenameParams) -> Result<Option<WorkspaceEdit>> {
        Ok(Some(WorkspaceEdit::default()))
    }

    async fn will_rename_files(&self, _: RenameFilesParams) -> Result<Option<WorkspaceEdit>> {
        Ok(None)
    }

    async fn did_rename_files(&self, p: RenameFilesParams) {
        let root = format!("{}/", self.root.lock().unwrap());
        let rel = |uri: &str| uri.strip_prefix(&root).unwrap_or(uri).to_string();
        let mut renamed = self.renamed.lock().unwrap();
        for f in p.files {
            renamed.push(format!("{} → {}", rel(&f.old_uri), rel(&f.new_uri)));
        }
    }

    async fn hover(&self, p: HoverParams) -> Result<Option<Hover>> {
        let pos = p.text_document_position_params;
        let line = self
            .docs
            .lock()
            .await
            .get(&pos.text_document.uri)
            .and_then(|(t, _)| t.lines().nth(pos.position.line as usize).map(String::from))
            .unwrap_or_default();
        if line.contains("crash") {
            std::process::exit(3);
        }
        if line.contains("hang") {
            // tower-lsp drops this future when $/cancelRequest arrives.
            struct CountOnDrop(Arc<AtomicUsize>);
            impl Drop for CountOnDrop {
                fn drop(&mut self) {
                    self.0.fetch_add(1, Ordering::SeqCst);
                    eprintln!("fault-injecting-lsp: hover cancelled");
                }
            }
            let _count = CountOnDrop(self.cancelled.clone());
            std::future::pending::<()>().await;
        }
        if line.contains("cold") && self.cold_hovers.fetch_add(1, Ordering::SeqCst) < 3 {
            return Ok(None);
        }
        if line.contains("garbage") {
            {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(b"this is not a header\r\n\r\n{\"jsonrpc\":");
                let _ = out.flush();
            }
            std::future::pending::<()>().await;
        }
        let mut value = format!("fault-injecting hover for line {}", pos.position.line + 1);
        let renamed = self.renamed.lock().unwrap().join(", ");
        if !renamed.is_empty() {
            value.push_str(&format!("\nfiles renamed (didRenameFiles): {renamed}"));
        }
        Ok(Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::PlainText,
                value,
            }),
            range: None,
        }))
    }
}

/// Begin an "indexing" progress at "1/2" and end it at the next read from
/// stdin after that (see `--progress-stalls`).
async fn stall_progress(client: Client, mut reads: tokio::sync::watch::Receiver<u64>) {
    use tower_lsp::lsp_types::{
        notification::Progress, request::WorkDoneProgressCreate, ProgressParams,
        ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressCreateParams,
        WorkDoneProgressEnd, WorkDoneProgressReport,
    };
    let token = NumberOrString::String("index".into());
    let _ = client
        .send_request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
            token: token.clone(),
        })
        .await;
    let progress = |value| ProgressParams {
        token: token.clone(),
        value: ProgressParamsValue::WorkDone(value),
    };
    client
        .send_notification::<Progress>(progress(WorkDoneProgress::Begin(WorkDoneProgressBegin {
            title: "indexing".into(),
            ..Default::default()
        })))
        .await;
    client
        .send_notification::<Progress>(progress(WorkDoneProgress::Report(WorkDoneProgressReport {
            message: Some("1/2".into()),
            ..Default::default()
        })))
        .await;
    reads.borrow_and_update();
    let _ = reads.changed().await;
    client
        .send_notification::<Progress>(progress(WorkDoneProgress::End(WorkDoneProgressEnd {
            message: None,
        })))
        .await;
}

/// Stdin, counting its reads for `--progress-stalls`.
struct CountedStdin {
    stdin: tokio::io::Stdin,
    reads: tokio::sync::watch::Sender<u64>,
}

impl tokio::io::AsyncRead for CountedStdin {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.stdin).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.reads.send_modify(|n| *n += 1);
        }
        polled
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let configured_after = std::env::args()
        .find_map(|a| {
            a.strip_prefix("--configured-after-ms=")
                .and_then(|n| n.parse().ok())
        })
        .map(Duration::from_millis);
    let (reads, stdin_reads) = tokio::sync::watch::channel(0);
    let stalls = std::env::args().any(|a| a == "--progress-stalls");
    let pull_script = std::env::args().find_map(|a| {
        a.strip_prefix("--pull-registrations=").map(|steps| {
            steps
                .split(',')
                .filter_map(|step| match step.split_once(':') {
                    Some(("reg", id)) => Some((true, id.to_string())),
                    Some(("unreg", id)) => Some((false, id.to_string())),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
    });
    let debounced_changes = std::env::args()
        .find_map(|a| {
            a.strip_prefix("--debounced-changes-ms=")
                .and_then(|n| n.parse().ok())
        })
        .map(Duration::from_millis);
    let save_check_restarts = std::env::args()
        .find_map(|a| {
            a.strip_prefix("--save-check-restarts-ms=")
                .and_then(|n| n.parse().ok())
        })
        .map(Duration::from_millis);
    let (service, socket) = LspService::new(|client| FaultServer {
        client,
        docs: Arc::default(),
        cancelled: Arc::default(),
        configured_after,
        configured: Arc::new(AtomicBool::new(configured_after.is_none())),
        cold_hovers: AtomicUsize::new(0),
        root: Default::default(),
        renamed: Default::default(),
        stdin_reads: stalls.then_some(stdin_reads.clone()),
        stalled_once: AtomicBool::new(false),
        pull_script,
        debounced_changes,
        save_check_restarts,
    });
    let stdin = CountedStdin {
        stdin: tokio::io::stdin(),
        reads,
    };
    Server::new(stdin, tokio::io::stdout(), socket)
        .serve(service)
        .await;
}
