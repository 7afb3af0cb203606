//! A server's WorkspaceEdit played against an in-memory copy of the files
//! it touches (text edits, creates, renames, deletes in the order given),
//! so an edit that does not apply cleanly, or reaches outside the
//! workspace, is refused before anything is written; and a written plan
//! told to the server that made it.

use crate::client::{file_uri, uri_path};
use crate::position::{self, PositionEncoding};
use crate::supervisor::LspSupervisor;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tool_core::files::{FileChange, FileTransaction};
use tool_core::staging::{StagedFile, StagedMove};
use tool_core::StagedChange;
use tool_core::Workspace;

/// The files an edit touches, played in memory.
#[derive(Debug, Default)]
pub(crate) struct PlannedEdit {
    /// Disk content before (None: absent) and after (None: deleted).
    files: BTreeMap<PathBuf, (Option<Vec<u8>>, Option<String>)>,
    /// Text edits per final file.
    pub edits: BTreeMap<PathBuf, usize>,
    pub renames: Vec<(PathBuf, PathBuf)>,
}

impl PlannedEdit {
    fn load(&mut self, ws: &Workspace, path: &Path) -> Result<(), String> {
        if !ws.contains(path) {
            return Err(format!(
                "it edits {}, outside the workspace",
                path.display()
            ));
        }
        if !self.files.contains_key(path) {
            let before = ws
                .dir()
                .read_if_exists(path, crate::client::MAX_DOCUMENT_BYTES)
                .map_err(|e| format!("cannot read {}: {e}", ws.relative(path)))?;
            let text = match &before {
                Some(b) => Some(
                    String::from_utf8(b.clone())
                        .map_err(|_| format!("{} is not UTF-8", ws.relative(path)))?,
                ),
                None => None,
            };
            self.files.insert(path.to_path_buf(), (before, text));
        }
        Ok(())
    }

    fn text_edits(
        &mut self,
        ws: &Workspace,
        uri: &str,
        edits: &[Value],
        enc: PositionEncoding,
    ) -> Result<(), String> {
        let path = uri_path(uri).ok_or_else(|| format!("the server named a non-file URI {uri}"))?;
        self.load(ws, &path)?;
        let entry = self.files.get_mut(&path).expect("loaded");
        let Some(text) = entry.1.as_mut() else {
            return Err(format!(
                "it edits {}, which does not exist",
                ws.relative(&path)
            ));
        };
        let mut spans = Vec::new();
        for e in edits {
            let r = e.get("range").ok_or("a text edit without a range")?;
            let get = |p: &str| r.pointer(p).and_then(Value::as_u64).unwrap_or(0) as u32;
            let start = position::offset_of(text, get("/start/line"), get("/start/character"), enc);
            let end = position::offset_of(text, get("/end/line"), get("/end/character"), enc);
            let new = e
                .get("newText")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if end < start {
                return Err("a text edit ends before it starts".into());
            }
            spans.push((start, end, new));
        }
        self.replace_spans(ws, &path, spans)
    }

    /// Replace byte ranges of `path`'s text as played so far (`start`,
    /// `end`, new text), each counted as one edit; overlapping ranges, or
    /// ranges off the text or off a character boundary, are refused.
    pub(crate) fn replace_spans(
        &mut self,
        ws: &Workspace,
        path: &Path,
        mut spans: Vec<(usize, usize, String)>,
    ) -> Result<(), String> {
        self.load(ws, path)?;
        let entry = self.files.get_mut(path).expect("loaded");
        let Some(text) = entry.1.as_mut() else {
            return Err(format!(
                "it edits {}, which does not exist",
                ws.relative(path)
            ));
        };
        // Apply from the end so earlier offsets stay valid; overlaps are refused.
        spans.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        for w in spans.windows(2) {
            if w[1].1 > w[0].0 {
                return Err(format!("two edits overlap in {}", ws.relative(path)));
            }
        }
        for (start, end, _) in &spans {
            if *end > text.len() || !text.is_char_boundary(*start) || !text.is_char_boundary(*end) {
                return Err(format!(
                    "an edit of {} is not on the text",
                    ws.relative(path)
                ));
            }
        }
        for (start, end, new) in &spans {
            text.replace_range(*start..*end, new);
        }
        *self.edits.entry(path.to_path_buf()).or_insert(0) += spans.len();
        Ok(())
    }

    /// Play a WorkspaceEdit (`changes` and/or `documentChanges`).
    pub(crate) fn play(
        ws: &Workspace,
        edit: &Value,
        enc: PositionEncoding,
    ) -> Result<PlannedEdit, String> {
        let mut plan = PlannedEdit::default();
        plan.add(ws, edit, enc)?;
        Ok(plan)
    }

    /// Move `from` to `to` (neither a folder), after the edits played so
    /// far: the file's text, edits included, ends up at `to`.
    pub(crate) fn move_file(
        &mut self,
        ws: &Workspace,
        from: &Path,
        to: &Path,
    ) -> Result<(), String> {
        self.load(ws, from)?;
        self.load(ws, to)?;
        if self.files[to].1.is_some() {
            return Err(format!("{} exists", ws.relative(to)));
        }
        let text = self.files.get_mut(from).expect("loaded").1.take();
        if text.is_none() {
            return Err(format!("{} does not exist", ws.relative(from)));
        }
        self.files.get_mut(to).expect("loaded").1 = text;
        if let Some(n) = self.edits.remove(from) {
            self.edits.insert(to.to_path_buf(), n);
        }
        self.renames.push((from.to_path_buf(), to.to_path_buf()));
        Ok(())
    }

    /// Play one more WorkspaceEdit on top of what is planned (edits from
    /// several servers merge; two that overlap in one file are refused).
    pub(crate) fn add(
        &mut self,
        ws: &Workspace,
        edit: &Value,
        enc: PositionEncoding,
    ) -> Result<(), String> {
        let plan = self;
        if let Some(dc) = edit.get("documentChanges").and_then(Value::as_array) {
            for op in dc {
                match op.get("kind").and_then(Value::as_str) {
                    None => {
                        let uri = op
                            .pointer("/textDocument/uri")
                            .and_then(Value::as_str)
                            .ok_or("an edit without a document")?;
                        let edits = op
                            .get("edits")
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default();
                        plan.text_edits(ws, uri, &edits, enc)?;
                    }
                    Some("create") => {
                        let uri = op.get("uri").and_then(Value::as_str).unwrap_or("");
                        let path = uri_path(uri).ok_or("a create without a file URI")?;
                        plan.load(ws, &path)?;
                        let e = plan.files.get_mut(&path).expect("loaded");
                        let overwrite = op
                            .pointer("/options/overwrite")
                            .and_then(Value::as_bool)
                            .unwrap_or(false);
                        if e.1.is_none() || overwrite {
                            e.1 = Some(String::new());
                        }
                    }
                    Some("rename") => {
                        let from = op
                            .get("oldUri")
                            .and_then(Value::as_str)
                            .and_then(uri_path)
                            .ok_or("a rename without oldUri")?;
                        let to = op
                            .get("newUri")
                            .and_then(Value::as_str)
                            .and_then(uri_path)
                            .ok_or("a rename without newUri")?;
                        plan.load(ws, &from)?;
                        plan.load(ws, &to)?;
                        let overwrite = op
                            .pointer("/options/overwrite")
                            .and_then(Value::as_bool)
                            .unwrap_or(false);
                        if plan.files[&to].1.is_some() && !overwrite {
                            return Err(format!(
                                "it renames onto {}, which exists",
                                ws.relative(&to)
                            ));
                        }
                        let text = plan.files.get_mut(&from).expect("loaded").1.take();
                        if text.is_none() {
                            return Err(format!(
                                "it renames {}, which does not exist",
                                ws.relative(&from)
                            ));
                        }
                        plan.files.get_mut(&to).expect("loaded").1 = text;
                        if let Some(n) = plan.edits.remove(&from) {
                            plan.edits.insert(to.clone(), n);
                        }
                        plan.renames.push((from, to));
                    }
                    Some("delete") => {
                        let path = op
                            .get("uri")
                            .and_then(Value::as_str)
                            .and_then(uri_path)
                            .ok_or("a delete without a file URI")?;
                        plan.load(ws, &path)?;
                        plan.files.get_mut(&path).expect("loaded").1 = None;
                        plan.edits.remove(&path);
                    }
                    Some(other) => return Err(format!("unknown document change `{other}`")),
                }
            }
        } else if let Some(changes) = edit.get("changes").and_then(Value::as_object) {
            for (uri, edits) in changes {
                plan.text_edits(
                    ws,
                    uri,
                    edits.as_array().map_or(&[][..], Vec::as_slice),
                    enc,
                )?;
            }
        }
        Ok(())
    }

    /// Where `path` ends up once the plan is applied and its text there
    /// (`None`: deleted); `None` when the plan does not touch it.
    pub(crate) fn text_after(&self, path: &Path) -> Option<(PathBuf, Option<&str>)> {
        let mut path = path.to_path_buf();
        self.files.get(&path)?;
        for (from, to) in &self.renames {
            if from == &path {
                path = to.clone();
            }
        }
        let text = self
            .files
            .get(&path)
            .and_then(|(_, after)| after.as_deref());
        Some((path, text))
    }

    pub(crate) fn edit_count(&self) -> usize {
        self.edits.values().sum()
    }

    /// The files whose content changes.
    fn file_changes(&self) -> Vec<FileChange> {
        let mut out = Vec::new();
        for (path, (before, after)) in &self.files {
            let after_bytes = after.as_ref().map(|s| s.as_bytes().to_vec());
            if before == &after_bytes {
                continue;
            }
            out.push(FileChange {
                path: path.clone(),
                expected: before.clone(),
                new: after_bytes,
            });
        }
        out
    }

    /// The plan as a staged change of `tool`: every file whose content
    /// changes, with its text before and after, and the renames as moves.
    pub(crate) fn staged_change(&self, ws: &Workspace, tool: &str) -> StagedChange {
        let mut change = StagedChange::new(tool);
        for c in self.file_changes() {
            let text = |b: Option<Vec<u8>>| b.map(|b| String::from_utf8_lossy(&b).into_owned());
            change.files.push(StagedFile::whole(
                c.path.clone(),
                ws.relative(&c.path),
                text(c.expected),
                text(c.new),
                self.edits.get(&c.path).copied().unwrap_or(0),
            ));
        }
        change.moves = self
            .renames
            .iter()
            .map(|(from, to)| StagedMove {
                from: ws.relative(from).into(),
                to: ws.relative(to).into(),
            })
            .collect();
        change
    }

    /// The transaction that writes the plan beneath the workspace root.
    pub(crate) fn transaction(&self, ws: &Workspace) -> FileTransaction {
        let mut tx = FileTransaction::new(ws.dir());
        for c in self.file_changes() {
            tx.push(c);
        }
        tx
    }

    /// (path, exists after) for every file whose content changes.
    /// Each file edited in place, with its text before and after (files
    /// created, deleted or moved are left out).
    pub(crate) fn texts(&self) -> Vec<(PathBuf, String, &str)> {
        self.files
            .iter()
            .filter(|(path, _)| !self.renames.iter().any(|(f, t)| f == *path || t == *path))
            .filter_map(|(path, (before, after))| {
                let before = String::from_utf8(before.clone()?).ok()?;
                let after = after.as_deref()?;
                (before != after).then(|| (path.clone(), before, after))
            })
            .collect()
    }

    pub(crate) fn changed(&self) -> Vec<(PathBuf, bool)> {
        self.file_changes()
            .iter()
            .map(|c| (c.path.clone(), c.new.is_some()))
            .collect()
    }
}

/// "edits 2 files: a.py (3), b.py (1)" for a code action's edit.
pub(crate) fn edit_summary(ws: &Workspace, edit: &Value) -> String {
    match PlannedEdit::play(ws, edit, PositionEncoding::Utf16) {
        Ok(plan) => {
            let parts: Vec<String> = plan
                .edits
                .iter()
                .map(|(p, n)| {
                    format!(
                        "{} ({})",
                        ws.relative(p),
                        tool_core::format::plural(*n, "edit", "edits")
                    )
                })
                .collect();
            if parts.is_empty() {
                "no text edits".into()
            } else {
                format!("edits {}", parts.join(", "))
            }
        }
        Err(e) => format!("an edit that cannot be applied here ({e})"),
    }
}

/// Tell a server what a written plan changed: open documents get the new
/// text and a save, renamed ones are closed and reopened, the rest are
/// announced as changed files. `language_id`: for files the catalog does
/// not name.
pub(crate) async fn announce(
    sup: &LspSupervisor,
    client: &crate::client::LspClient,
    plan: &PlannedEdit,
    language_id: &str,
) {
    let mut watched = Vec::new();
    for (from, to) in &plan.renames {
        client.close(&file_uri(from)).await;
        watched.push(json!({"uri": file_uri(from), "type": 3}));
        watched.push(json!({"uri": file_uri(to), "type": 1}));
    }
    // Every changed file is opened in the server (if it was not) with its
    // new text and saved: a server that caches other files' contents
    // (clangd's preambles, an unopened header) sees the rename at once.
    for (path, exists) in plan.changed() {
        let uri = file_uri(&path);
        if !exists {
            client.close(&uri).await;
            continue;
        }
        let was_open = client.doc(&uri).await.is_some();
        let language_id = sup
            .catalog()
            .for_file(&path)
            .map_or_else(|| language_id.to_string(), |(_, l)| l);
        if let Ok(doc) = client.sync_file(&path, &language_id).await {
            client.did_save(&uri, &doc.text);
        }
        if !was_open {
            watched.push(json!({"uri": uri, "type": 2}));
        }
    }
    if !watched.is_empty() {
        client.notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": watched}),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_edits_play_in_memory_with_renames_and_refuse_escapes() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let a = ws.root().join("a.py");
        std::fs::write(&a, "x = 1\nprint(x, \"🙂\", x)\n").unwrap();
        let uri = file_uri(&a);
        let b_uri = file_uri(&ws.root().join("b.py"));
        let edit = json!({"documentChanges": [
            {"textDocument": {"uri": uri, "version": 1}, "edits": [
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "newText": "yy"},
                {"range": {"start": {"line": 1, "character": 6}, "end": {"line": 1, "character": 7}}, "newText": "yy"},
                {"range": {"start": {"line": 1, "character": 15}, "end": {"line": 1, "character": 16}}, "newText": "yy"}
            ]},
            {"kind": "rename", "oldUri": uri, "newUri": b_uri}
        ]});
        let plan = PlannedEdit::play(&ws, &edit, PositionEncoding::Utf16).unwrap();
        assert_eq!(plan.edit_count(), 3);
        plan.transaction(&ws).commit().unwrap();
        assert!(!a.exists());
        assert_eq!(
            std::fs::read_to_string(ws.root().join("b.py")).unwrap(),
            "yy = 1\nprint(yy, \"🙂\", yy)\n"
        );
        let outside = json!({"changes": {"file:///etc/passwd": [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "newText": "x"}]}});
        let err = PlannedEdit::play(&ws, &outside, PositionEncoding::Utf16).unwrap_err();
        expect_test::expect!["it edits /etc/passwd, outside the workspace"].assert_eq(&err);
    }
}
