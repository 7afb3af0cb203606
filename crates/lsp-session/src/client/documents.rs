//! The documents a server has open: read from the workspace, opened,
//! synced to the disk as new versions, saved and closed; and how a file is
//! named to a server (its URI).

use super::{json, FsError, Instant, LspClient, OpenDoc, Path, PathBuf, Url, Value, Workspace};

/// Documents larger than this are not sent to a server.
pub const MAX_DOCUMENT_BYTES: u64 = 20 * 1024 * 1024;

/// A workspace document's text, read through the root's handle: a regular
/// file (a FIFO or device is refused without blocking), at most
/// [`MAX_DOCUMENT_BYTES`], UTF-8. A plain read on this thread: source files
/// are small, and a blocking-pool hop per open document costs more than the
/// read itself (measured).
pub fn read_document(ws: &Workspace, path: &Path) -> std::io::Result<String> {
    let bytes = ws
        .dir()
        .read(path, MAX_DOCUMENT_BYTES)
        .map_err(|e| match e {
            FsError::NotFound { .. } => {
                std::io::Error::new(std::io::ErrorKind::NotFound, e.to_string())
            }
            other => std::io::Error::other(other.to_string()),
        })?;
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "the file is not UTF-8"))
}

pub fn file_uri(path: &Path) -> String {
    Url::from_file_path(path)
        .map_or_else(|()| format!("file://{}", path.display()), |u| u.to_string())
}

/// The document at `path` as typed params name it (by [`file_uri`]).
pub fn text_document(path: &Path) -> lsp_types::TextDocumentIdentifier {
    let uri = Url::parse(&file_uri(path)).expect("a file URI parses");
    lsp_types::TextDocumentIdentifier::new(uri)
}

pub fn uri_path(uri: &str) -> Option<PathBuf> {
    Url::parse(uri).ok()?.to_file_path().ok()
}

/// Servers spell the same file URI differently (`%3A`, drive case); compare
/// them by the path they name.
pub fn normalize_uri(uri: &str) -> String {
    match uri_path(uri) {
        Some(p) => file_uri(&p),
        None => uri.to_string(),
    }
}

impl LspClient {
    /// The open document's state, if open.
    pub async fn doc(&self, uri: &str) -> Option<OpenDoc> {
        self.docs.lock().await.get(uri).cloned()
    }

    /// Bring the server's copy of `path` in line with the disk: open it, or
    /// send the new text as a new version. Returns the document's state.
    pub async fn sync_file(&self, path: &Path, language_id: &str) -> std::io::Result<OpenDoc> {
        let text = read_document(&self.workspace, path)?;
        Ok(self.sync_text(path, language_id, text).await)
    }

    /// Bring the server's copy of `path` to `text` (which need not be on
    /// disk: the diagnostics-on-write baseline is the text before a write).
    pub async fn sync_text(&self, path: &Path, language_id: &str, text: String) -> OpenDoc {
        let uri = file_uri(path);
        let mut docs = self.docs.lock().await;
        let seq = self.diag_seq();
        match docs.get_mut(&uri) {
            None => {
                self.first_open
                    .lock()
                    .expect("first_open")
                    .get_or_insert_with(Instant::now);
                self.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": language_id, "version": 1, "text": text}}),
                );
                let doc = OpenDoc {
                    version: 1,
                    text,
                    language_id: language_id.to_string(),
                    sent_at_seq: seq,
                    sent_at: Instant::now(),
                };
                docs.insert(uri, doc.clone());
                doc
            }
            Some(doc) if doc.text != text => {
                doc.version += 1;
                doc.text = text;
                doc.sent_at_seq = seq;
                doc.sent_at = Instant::now();
                self.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": doc.version},
                           "contentChanges": [{"text": doc.text}]}),
                );
                doc.clone()
            }
            Some(doc) => doc.clone(),
        }
    }

    /// Re-read every open document from disk: a shell command or another
    /// tool may have changed it behind the server's back.
    pub async fn resync_open(&self) {
        let open: Vec<(String, String)> = self
            .docs
            .lock()
            .await
            .iter()
            .map(|(u, d)| (u.clone(), d.language_id.clone()))
            .collect();
        for (uri, lang) in open {
            let Some(path) = uri_path(&uri) else { continue };
            if path.exists() {
                let _ = self.sync_file(&path, &lang).await;
            } else {
                self.close(&uri).await;
            }
        }
    }

    /// The files open in the server, in path order.
    pub async fn open_paths(&self) -> Vec<std::path::PathBuf> {
        let mut paths: Vec<_> = self
            .docs
            .lock()
            .await
            .keys()
            .filter_map(|u| uri_path(u))
            .collect();
        paths.sort();
        paths
    }

    pub async fn close(&self, uri: &str) {
        if self.docs.lock().await.remove(uri).is_some() {
            self.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            );
        }
    }

    pub fn did_save(&self, uri: &str, text: &str) {
        let include = self.capabilities.save_includes_text();
        let mut params = json!({"textDocument": {"uri": uri}});
        if include {
            params["text"] = Value::String(text.to_string());
        }
        self.notify("textDocument/didSave", params);
    }
}
