//! `lsp_rename`: `textDocument/rename`, then the server's WorkspaceEdit
//! applied all-or-nothing through tool-core's transaction.
//!
//! The edit is first played against an in-memory copy of the files it
//! touches (text edits, creates, renames, deletes in the order given), so an
//! edit that does not apply cleanly, or reaches outside the workspace, is
//! refused before anything is written.

use crate::args::{LspArgs, Op};
use crate::client::{file_uri, uri_path};
use crate::mentions::{Mentioning, RenameReach};
use crate::position::{self, PositionEncoding};
use crate::request;
use crate::supervisor::{LspSupervisor, Timeouts};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use tool_core::files::{FileChange, FileTransaction, TransactionError};
use tool_core::staging::{StagedFile, StagedMove};
use tool_core::{StagedChange, StagingLink, ToolError, ToolOutput, Workspace};

/// Arguments of `lsp_rename`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameArgs {
    /// File relative to the workspace root where the symbol is; or, with
    /// `new_path`, the file or folder to move.
    pub file: String,
    /// 1-based line of the symbol (a symbol rename).
    #[serde(default)]
    pub line: Option<u32>,
    /// The identifier on that line to rename (a symbol rename).
    #[serde(default)]
    pub symbol: Option<String>,
    /// What to call it (a symbol rename).
    #[serde(default)]
    pub new_name: Option<String>,
    /// Move `file` (a file, or a folder of at most 1,000 files) here,
    /// relative to the workspace root, updating imports in other files as
    /// the language servers say; give no line, symbol or new_name then.
    #[serde(default)]
    pub new_path: Option<String>,
    /// Which occurrence of `symbol` on the line, 1-based, when it occurs more than once.
    #[serde(default)]
    pub occurrence: Option<u32>,
    /// Rename even when files that mention the symbol would be left unrenamed
    /// (C/C++ without a compile database refuses that otherwise).
    #[serde(default)]
    pub partial: bool,
    /// How long this call may wait for the server, 5 to 300 seconds.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
    /// Stage the change instead of writing it: the answer names an
    /// `edit_id` and shows the diff and the diagnostics it would cause;
    /// `resolve` accepts or discards it.
    #[serde(default)]
    pub stage: bool,
}

/// A symbol rename, its arguments checked.
#[derive(Debug, Clone)]
pub struct SymbolRename {
    pub file: String,
    pub line: u32,
    pub symbol: String,
    pub new_name: String,
    pub occurrence: Option<u32>,
    pub partial: bool,
    pub timeout_seconds: Option<u64>,
    pub stage: bool,
}

impl RenameArgs {
    /// The symbol rename these arguments ask for: `line`, `symbol` and
    /// `new_name` all given.
    fn symbol_rename(self) -> Result<SymbolRename, ToolError> {
        let missing = |field: &str| {
            ToolError::bad_args(format!(
                "missing `{field}`: a symbol rename takes file, line, symbol and new_name; a file or folder move takes file and new_path"
            ))
        };
        Ok(SymbolRename {
            line: self.line.ok_or_else(|| missing("line"))?,
            symbol: self.symbol.ok_or_else(|| missing("symbol"))?,
            new_name: self.new_name.ok_or_else(|| missing("new_name"))?,
            file: self.file,
            occurrence: self.occurrence,
            partial: self.partial,
            timeout_seconds: self.timeout_seconds,
            stage: self.stage,
        })
    }
}

/// The files an edit touches, played in memory.
#[derive(Debug, Default)]
pub struct PlannedEdit {
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
        // Apply from the end so earlier offsets stay valid; overlaps are refused.
        spans.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        for w in spans.windows(2) {
            if w[1].1 > w[0].0 {
                return Err(format!("two edits overlap in {}", ws.relative(&path)));
            }
        }
        for (start, end, new) in &spans {
            text.replace_range(*start..*end, new);
        }
        *self.edits.entry(path).or_insert(0) += spans.len();
        Ok(())
    }

    /// Play a WorkspaceEdit (`changes` and/or `documentChanges`).
    pub fn play(
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
    pub fn move_file(&mut self, ws: &Workspace, from: &Path, to: &Path) -> Result<(), String> {
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
    pub fn add(
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
                    edits.as_array().map(Vec::as_slice).unwrap_or(&[]),
                    enc,
                )?;
            }
        }
        Ok(())
    }

    /// Where `path` ends up once the plan is applied and its text there
    /// (`None`: deleted); `None` when the plan does not touch it.
    pub fn text_after(&self, path: &Path) -> Option<(PathBuf, Option<&str>)> {
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

    pub fn edit_count(&self) -> usize {
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
    pub fn staged_change(&self, ws: &Workspace, tool: &str) -> StagedChange {
        let mut change = StagedChange::new(tool);
        for c in self.file_changes() {
            let text = |b: Option<Vec<u8>>| b.map(|b| String::from_utf8_lossy(&b).into_owned());
            change.files.push(StagedFile {
                rel: ws.relative(&c.path),
                edits: self.edits.get(&c.path).copied().unwrap_or(0),
                path: c.path,
                old: text(c.expected),
                new: text(c.new),
            });
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
    pub fn transaction(&self, ws: &Workspace) -> FileTransaction {
        let mut tx = FileTransaction::new(ws.dir());
        for c in self.file_changes() {
            tx.push(c);
        }
        tx
    }

    /// (path, exists after) for every file whose content changes.
    pub fn changed(&self) -> Vec<(PathBuf, bool)> {
        self.file_changes()
            .iter()
            .map(|c| (c.path.clone(), c.new.is_some()))
            .collect()
    }
}

/// "edits 2 files: a.py (3), b.py (1)" for a code action's edit.
pub fn edit_summary(ws: &Workspace, edit: &Value) -> String {
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
    if let Some(rule) = language.as_deref().and_then(crate::identifier::rule_for) {
        crate::identifier::check(rule, &args.new_name).map_err(|why| {
            ToolError::bad_args(format!("{why}; nothing was asked of the server or written"))
        })?;
    }
    Ok(())
}

/// A rename ready to be written: the server's edit played in memory, and
/// the mentioning files it leaves.
struct Prepared {
    p: request::Positioned,
    plan: PlannedEdit,
    reach: RenameReach,
    unrenamed: Vec<Mentioning>,
}

/// Run one `lsp_rename` call; with `stage`, into `link`'s change store.
pub async fn run(
    sup: &LspSupervisor,
    link: &StagingLink,
    args: RenameArgs,
) -> Result<ToolOutput, ToolError> {
    if args.new_path.is_some() {
        return crate::file_move::run(sup, link, args).await;
    }
    let args = args.symbol_rename()?;
    if args.new_name.trim().is_empty() {
        return Err(ToolError::bad_args(
            "`new_name` is empty; give the new identifier",
        ));
    }
    check_new_name(sup, &args)?;
    let t = request::call_timeouts(sup, args.timeout_seconds)?;
    // Only what comes before the commit is cut short by timeout_seconds: a
    // rename that was written is always reported.
    let prepared = request::within_call_timeout(
        sup,
        args.timeout_seconds,
        Some(&args.file),
        prepare(sup, &t, &args),
    )
    .await?;
    if args.stage {
        return stage(sup, link, &args, prepared).await;
    }
    commit(sup, &args, prepared).await
}

/// A rename with no edits: refused, whether staged or written.
fn no_edits(client: &str, p: &request::Positioned, args: &SymbolRename) -> ToolError {
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
        reach,
        unrenamed,
    } = prepared;
    let ws = sup.workspace();
    let change = plan.staged_change(ws, "lsp_rename");
    if change.files.is_empty() {
        return Err(no_edits(&p.target.client.name, &p, args));
    }
    let header = format!(
        "lsp_rename  `{}` → `{}`: {} in {}",
        p.symbol,
        args.new_name,
        tool_core::format::plural(change.edits(), "edit", "edits"),
        tool_core::format::plural(change.files.len(), "file", "files"),
    );
    let mut out = staged_output(link, change, header).await?;
    for line in reach.report(ws, &unrenamed) {
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

/// Lines of diff a staged change's preview shows.
pub const PREVIEW_LINES: usize = 200;

/// Stage `change` in the run's change store and answer with its id, its
/// diff and the servers' diagnostics delta; nothing is written.
pub async fn staged_output(
    link: &StagingLink,
    change: StagedChange,
    header: String,
) -> Result<ToolOutput, ToolError> {
    let Some(store) = link.store() else {
        return Err(ToolError::unavailable(format!(
            "`stage: true` needs the run's `resolve` tool to accept the change, and this run has none (the astgrep family is not bound); nothing was staged or written — call {} without `stage` to write at once",
            change.tool
        )));
    };
    let id = store.stage_change(change.clone());
    let mut text = vec![
        format!(
            "(proposed) {} in {} … call resolve with edit_id \"{id}\" and action \"accept\" to write them, or \"discard\"",
            tool_core::format::plural(change.edits(), "edit", "edits"),
            tool_core::format::plural(change.files.len(), "file", "files"),
        ),
        format!("{header}; nothing is written until accepted"),
        change.diff(PREVIEW_LINES),
    ];
    let delta = link.diagnostics_delta(&change).await;
    text.extend(delta.clone());
    Ok(ToolOutput::text(text.join("\n")).with_structured(json!({
        "edit_id": id,
        "edits": change.edits(),
        "files": change.files.iter().map(|f| f.rel.clone()).collect::<Vec<_>>(),
        "moves": change.moves.iter().map(|m| json!({"from": m.from, "to": m.to})).collect::<Vec<_>>(),
        "diagnostics_after": delta,
    })))
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
        timeout_seconds: args.timeout_seconds,
    };
    let p = request::position(sup, t, &largs)
        .await
        .map_err(|e| match e {
            ToolError::BadArgs(m) => ToolError::BadArgs(m.replace("op `definition`", "lsp_rename")),
            other => other,
        })?;
    let client = &p.target.client;
    let td = json!({"uri": p.uri});
    let prepare = client
        .capabilities
        .pointer("/renameProvider/prepareProvider")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if !client.has_capability("renameProvider") {
        return Err(ToolError::unavailable(format!(
            "{} does not offer rename",
            client.name
        )));
    }
    if prepare {
        let ask = || {
            client.request(
                "textDocument/prepareRename",
                json!({"textDocument": td, "position": p.position}),
                t.request,
            )
        };
        let mut v = ask().await;
        // A server that started moments ago may not have resolved the
        // symbol's module yet (basedpyright answers null for an imported
        // name until it has analysed the import): a refusal is believed
        // only once it holds after the server had time to look.
        let settle = crate::request::PROBE_FOR.min(t.request);
        let asked = Instant::now();
        while matches!(v, Ok(Value::Null))
            && client.started.elapsed() < crate::request::COLD_SERVER
            && asked.elapsed() < settle
        {
            tokio::time::sleep(crate::request::PROBE_EVERY).await;
            v = ask().await;
        }
        match v {
            Ok(Value::Null) => {
                return Err(ToolError::refused(format!(
                    "`{}` at {}:{} cannot be renamed (the server's prepareRename refused it: not a renamable symbol); nothing was written",
                    p.symbol, p.file.shown, args.line
                )))
            }
            Err(crate::client::RequestError::Rpc { message, .. }) => {
                return Err(ToolError::refused(format!(
                    "`{}` at {}:{} cannot be renamed: {message}; nothing was written",
                    p.symbol, p.file.shown, args.line
                )))
            }
            Err(e) => return Err(e.into_tool_error(&client.name)),
            Ok(_) => {}
        }
    }
    // Files the server's project model may not cover are opened first, so
    // that its rename sees them.
    let reach = RenameReach::prepare(sup, t, &p.target, &p.symbol).await?;
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
    let plan = PlannedEdit::play(ws, &edit, client.encoding).map_err(|why| {
        ToolError::refused(format!(
            "the server's rename cannot be applied: {why}; nothing was written"
        ))
    })?;
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
    Ok(Prepared {
        p,
        plan,
        reach,
        unrenamed,
    })
}

/// Tell a server what a written plan changed: open documents get the new
/// text and a save, renamed ones are closed and reopened, the rest are
/// announced as changed files. `language_id`: for files the catalog does
/// not name.
pub async fn announce(
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
            .map(|(_, l)| l)
            .unwrap_or_else(|| language_id.to_string());
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

async fn commit(
    sup: &LspSupervisor,
    args: &SymbolRename,
    prepared: Prepared,
) -> Result<ToolOutput, ToolError> {
    let Prepared {
        p,
        plan,
        reach,
        unrenamed,
    } = prepared;
    let client = &p.target.client;
    let ws = sup.workspace();
    let tx = plan.transaction(ws);
    if tx.is_empty() {
        return Err(no_edits(&client.name, &p, args));
    }
    tx.commit().map_err(|e| match e {
        e @ TransactionError::NotAFile { .. } => ToolError::refused(e.to_string()),
        e => ToolError::failed(format!("{e}; re-run lsp_rename once the files are settled")),
    })?;

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
    for (from, to) in &plan.renames {
        out.push(format!(
            "renamed {} → {}",
            ws.relative(from),
            ws.relative(to)
        ));
    }
    out.extend(reach.report(ws, &unrenamed));
    Ok(ToolOutput::text(out.join("\n")).with_structured(json!({
        "not_renamed": unrenamed.iter().map(|m| ws.relative(&m.path)).collect::<Vec<_>>(),
        "edits": plan.edit_count(),
        "files": plan.edits.keys().map(|p| ws.relative(p)).collect::<Vec<_>>(),
    })))
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
        assert!(err.contains("outside the workspace"), "{err}");
    }
}
