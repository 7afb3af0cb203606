//! The minimal `read`, `write` and `edit` tools over the run's workspace.
//!
//! They exist so that a host without file tools of its own (an MCP client
//! that only has these servers' tools, the eval bridge's `tool("read", …)`)
//! has them, and so the diagnostics-on-write decorator has tools to wrap:
//! their args carry `path` relative to the workspace root.
//!
//! Invariants: every path goes through [`Workspace::resolve`], every write
//! through `tool_core::files` (atomic, permissions kept); an `edit` is checked
//! against the content it was computed from, so a file changed in between is
//! refused instead of overwritten.

use serde::Deserialize;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use tool_core::files::{FileTransaction, TransactionError};
use tool_core::format::{cap_chars, plural};
use tool_core::fs::{DirHandle, FileKind, FsError, Opened, RegularFile};
use tool_core::schemars::JsonSchema;
use tool_core::{
    async_trait, parse_args, schema_for, Binding, CallContext, FamilyDecl, Registry, RegistryError,
    RunContext, Tier, Tool, ToolDecl, ToolError, ToolOutput, ToolSpec, Workspace,
};

/// `read`: reads only.
pub const READ: ToolDecl = ToolDecl::new("read", Tier::Read);
/// `write`: overwrites the whole file, but the same call twice gives the
/// same file.
pub const WRITE: ToolDecl = ToolDecl::new("write", Tier::Write).hints(true, true, false);
/// `edit`: changes part of a file.
pub const EDIT: ToolDecl = ToolDecl::new("edit", Tier::Write).hints(true, false, false);

/// The standalone host's own file tools, as `doctor` lists them.
pub const FAMILY: FamilyDecl = FamilyDecl {
    tools: &[READ, WRITE, EDIT],
    resource: "working directory (the standalone host's own file tools)",
};

/// Lines `read` returns when no `limit` is given.
pub const DEFAULT_READ_LINES: usize = 2000;
/// Characters of one line `read` shows before cutting it.
pub const MAX_LINE_CHARS: usize = 2000;
/// Files larger than this are refused by `read` and `edit`.
pub const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;
/// Entries `read` lists for a directory.
pub const MAX_DIR_ENTRIES: usize = 500;

/// The binding that registers `read`, `write` and `edit` for a run's
/// workspace root.
#[derive(Debug, Default, Clone, Copy)]
pub struct FileToolsBinding;

impl Binding for FileToolsBinding {
    fn resource(&self) -> &'static str {
        "workspace root (file tools)"
    }

    fn register(&self, run: &RunContext, registry: &Registry) -> Result<(), RegistryError> {
        let ws = run.workspace.clone();
        registry.register(Arc::new(ReadTool::new(ws.clone())))?;
        registry.register(Arc::new(WriteTool::new(ws.clone())))?;
        registry.register(Arc::new(EditTool::new(ws)))?;
        Ok(())
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "tool_core::schemars")]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// The file (or directory) to read, relative to the workspace root.
    path: String,
    /// The first line to return, 1-based (default 1).
    #[serde(default)]
    offset: Option<usize>,
    /// How many lines to return (default 2000).
    #[serde(default)]
    limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "tool_core::schemars")]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    /// The file to write, relative to the workspace root; parent folders are
    /// created.
    path: String,
    /// The whole new content of the file.
    content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "tool_core::schemars")]
#[serde(deny_unknown_fields)]
struct EditArgs {
    /// The file to edit, relative to the workspace root.
    path: String,
    /// The exact text to replace, whitespace and indentation included. It
    /// must occur exactly once unless `replace_all` is true.
    old_string: String,
    /// The text to put in its place.
    new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    replace_all: bool,
}

/// `read`: a file's lines, numbered, or a directory's entries.
pub struct ReadTool {
    ws: Workspace,
}

impl ReadTool {
    pub fn new(ws: Workspace) -> Self {
        ReadTool { ws }
    }
}

/// `write`: replace or create a whole file.
pub struct WriteTool {
    ws: Workspace,
}

impl WriteTool {
    pub fn new(ws: Workspace) -> Self {
        WriteTool { ws }
    }
}

/// `edit`: replace an exact piece of text in a file.
pub struct EditTool {
    ws: Workspace,
}

impl EditTool {
    pub fn new(ws: Workspace) -> Self {
        EditTool { ws }
    }
}

/// The "too large" refusal, decided from the handle's size.
fn too_large(user: &str, len: u64) -> ToolError {
    ToolError::bad_args(format!(
        "`{user}` is {len} bytes, over the {} MiB these tools handle; look at it with a search tool or a script instead",
        MAX_FILE_BYTES / (1024 * 1024)
    ))
}

/// Read an opened text file the tools may work on: not too large (decided
/// before a byte is read), not binary, UTF-8.
fn read_text(
    ws: &Workspace,
    user: &str,
    path: &Path,
    file: RegularFile,
) -> Result<String, ToolError> {
    if file.len() > MAX_FILE_BYTES {
        return Err(too_large(user, file.len()));
    }
    let bytes = file.read_capped(MAX_FILE_BYTES).map_err(|e| match e {
        FsError::TooLarge { len, .. } => too_large(user, len),
        other => other.into(),
    })?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err(ToolError::bad_args(format!(
            "`{}` is a binary file; these tools read and edit text only",
            ws.relative(path)
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        ToolError::bad_args(format!(
            "`{}` is not UTF-8 (invalid byte at offset {}); these tools read and edit UTF-8 text only",
            ws.relative(path),
            e.utf8_error().valid_up_to()
        ))
    })
}

fn list_dir(ws: &Workspace, path: &Path, dir: DirHandle) -> Result<ToolOutput, ToolError> {
    let rel = ws.relative(path);
    let mut entries: Vec<String> = dir
        .entries()?
        .into_iter()
        .map(|(name, kind)| {
            let name = name.to_string_lossy().into_owned();
            if kind == FileKind::Directory {
                format!("{name}/")
            } else {
                name
            }
        })
        .collect();
    entries.sort();
    let total = entries.len();
    let (shown, note) = tool_core::format::cap_list(
        entries,
        MAX_DIR_ENTRIES,
        "read a subfolder to narrow the listing",
    );
    let mut text = format!(
        "{rel}/ is a directory ({}):\n",
        plural(total, "entry", "entries")
    );
    for e in &shown {
        text.push_str(e);
        text.push('\n');
    }
    if let Some(n) = note {
        text.push_str(&n);
        text.push('\n');
    }
    Ok(ToolOutput::text(text.trim_end().to_string())
        .with_structured(json!({"path": rel, "entries": shown, "total": total})))
}

#[async_trait]
impl Tool for ReadTool {
    fn spec(&self) -> ToolSpec {
        READ.spec(
            "Read a text file of the workspace: its lines, numbered from 1 (`offset` and `limit` \
             select a range, default the first 2000 lines). A directory path lists its entries.",
            schema_for::<ReadArgs>(),
        )
    }

    async fn call(&self, _cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: ReadArgs = parse_args(args)?;
        let path = self.ws.resolve_existing(&args.path)?;
        let file = match self.ws.dir().open(&path)? {
            Opened::Dir(dir) => return list_dir(&self.ws, &path, dir),
            Opened::File(file) => file,
        };
        let rel = self.ws.relative(&path);
        let text = read_text(&self.ws, &args.path, &path, file)?;
        let offset = args.offset.unwrap_or(1);
        if offset == 0 {
            return Err(ToolError::bad_args(
                "`offset` is 1-based: the first line is 1",
            ));
        }
        let limit = args.limit.unwrap_or(DEFAULT_READ_LINES);
        if limit == 0 {
            return Err(ToolError::bad_args(
                "`limit` must be at least 1; omit it to read up to 2000 lines",
            ));
        }
        let lines: Vec<&str> = text.lines().collect();
        let total = lines.len();
        if total == 0 {
            return Ok(ToolOutput::text(format!("{rel} is empty (0 lines)")).with_structured(
                json!({"path": rel, "content": "", "start_line": 0, "end_line": 0, "total_lines": 0}),
            ));
        }
        if offset > total {
            return Err(ToolError::bad_args(format!(
                "`offset` {offset} is past the end of {rel}, which has {}; pass an offset from 1 to {total}",
                plural(total, "line", "lines")
            )));
        }
        let end = (offset - 1 + limit).min(total);
        let mut out = String::new();
        let mut raw = String::new();
        for (i, line) in lines[offset - 1..end].iter().enumerate() {
            out.push_str(&format!(
                "{:>6}\t{}\n",
                offset + i,
                cap_chars(line, MAX_LINE_CHARS)
            ));
            raw.push_str(line);
            raw.push('\n');
        }
        if end == total && !text.ends_with('\n') {
            raw.pop();
        }
        if end < total || offset > 1 {
            out.push_str(&format!("… lines {offset}-{end} of {total} in {rel}"));
            if end < total {
                out.push_str(&format!(" — pass offset {} to read on", end + 1));
            }
            out.push('\n');
        }
        Ok(
            ToolOutput::text(out.trim_end_matches('\n').to_string()).with_structured(json!({
                "path": rel,
                "content": raw,
                "start_line": offset,
                "end_line": end,
                "total_lines": total,
            })),
        )
    }
}

#[async_trait]
impl Tool for WriteTool {
    fn spec(&self) -> ToolSpec {
        WRITE.spec(
            "Write a whole file of the workspace (created with its folders if missing, replaced \
             if present). To change part of a file, use `edit`.",
            schema_for::<WriteArgs>(),
        )
    }

    fn describe_call(&self, args: &Value) -> String {
        let path = args.get("path").and_then(Value::as_str).unwrap_or("?");
        let len = args
            .get("content")
            .and_then(Value::as_str)
            .map_or(0, str::len);
        format!("write {len} bytes to {path}")
    }

    fn writes(&self, args: &Value) -> Vec<String> {
        parse_args::<WriteArgs>(args.clone())
            .map(|a| vec![a.path])
            .unwrap_or_default()
    }

    async fn call(&self, _cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: WriteArgs = parse_args(args)?;
        let path = self.ws.resolve_file(&args.path)?;
        if path.is_dir() {
            return Err(ToolError::bad_args(format!(
                "`{}` is a directory; give the path of a file",
                args.path
            )));
        }
        let rel = self.ws.relative(&path);
        let (dir, name) = self.ws.dir().parent(&path, true)?;
        // What it replaces, for the answer: its lines when it is small enough
        // to read, its size otherwise (never read whole).
        let before = match dir.child_kind(&name)? {
            None => None,
            Some((FileKind::Regular, _)) => {
                let file = dir.open_file(&name)?;
                let len = file.len();
                Some(if len <= MAX_FILE_BYTES {
                    Ok(file.read_capped(MAX_FILE_BYTES).unwrap_or_default())
                } else {
                    Err(len)
                })
            }
            Some((kind, _)) => return Err(FsError::NotRegular { path: rel, kind }.into()),
        };
        dir.replace_child(&name, args.content.as_bytes())
            .map_err(|e| match e {
                e @ FsError::Io { .. } => {
                    ToolError::failed(format!("writing {rel} failed: {e}; nothing changed"))
                }
                other => other.into(),
            })?;
        let lines = args.content.lines().count();
        let what = match &before {
            None => "created".to_string(),
            Some(Ok(old)) if old == args.content.as_bytes() => {
                "unchanged: same content".to_string()
            }
            Some(Ok(old)) => format!(
                "replaced; it had {}",
                plural(
                    String::from_utf8_lossy(old).lines().count(),
                    "line",
                    "lines"
                )
            ),
            Some(Err(len)) => format!(
                "replaced; it had {}",
                plural(*len as usize, "byte", "bytes")
            ),
        };
        Ok(ToolOutput::text(format!(
            "wrote {rel} ({}, {}; {what})",
            plural(lines, "line", "lines"),
            plural(args.content.len(), "byte", "bytes")
        ))
        .with_structured(json!({
            "path": rel,
            "created": before.is_none(),
            "lines": lines,
            "bytes": args.content.len(),
        })))
    }
}

/// 1-based line of a byte offset.
fn line_of(text: &str, byte: usize) -> usize {
    text[..byte].matches('\n').count() + 1
}

/// Where a missed `old_string` probably was: lines holding its first line,
/// ignoring indentation.
fn near_misses(text: &str, old: &str) -> Vec<usize> {
    let first = old.lines().find(|l| !l.trim().is_empty()).map(str::trim);
    let Some(first) = first else {
        return Vec::new();
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == first)
        .map(|(i, _)| i + 1)
        .take(5)
        .collect()
}

#[async_trait]
impl Tool for EditTool {
    fn spec(&self) -> ToolSpec {
        EDIT.spec(
            "Replace an exact piece of text in a file of the workspace. `old_string` must match \
             the file exactly (whitespace and indentation included) and occur once, unless \
             `replace_all` is true. Read the file first to copy the text.",
            schema_for::<EditArgs>(),
        )
    }

    fn describe_call(&self, args: &Value) -> String {
        let path = args.get("path").and_then(Value::as_str).unwrap_or("?");
        let old = args.get("old_string").and_then(Value::as_str).unwrap_or("");
        format!("edit {path}: replace `{}`", cap_chars(old, 80))
    }

    fn writes(&self, args: &Value) -> Vec<String> {
        parse_args::<EditArgs>(args.clone())
            .map(|a| vec![a.path])
            .unwrap_or_default()
    }

    async fn call(&self, _cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: EditArgs = parse_args(args)?;
        if args.old_string.is_empty() {
            return Err(ToolError::bad_args(
                "`old_string` is empty; give the exact text to replace, or use `write` to create a file",
            ));
        }
        if args.old_string == args.new_string {
            return Err(ToolError::bad_args(
                "`old_string` and `new_string` are the same; nothing would change",
            ));
        }
        let path = self.ws.resolve_file(&args.path)?;
        if !path.exists() {
            return Err(ToolError::bad_args(format!(
                "`{}` does not exist in the workspace; check the path (relative to the workspace root)",
                args.path
            )));
        }
        if path.is_dir() {
            return Err(ToolError::bad_args(format!(
                "`{}` is a directory; give the path of a file",
                args.path
            )));
        }
        let rel = self.ws.relative(&path);
        let file = self.ws.dir().open_file(&path)?;
        let text = read_text(&self.ws, &args.path, &path, file)?;
        let starts: Vec<usize> = text
            .match_indices(&args.old_string)
            .map(|(i, _)| i)
            .collect();
        if starts.is_empty() {
            let near = near_misses(&text, &args.old_string);
            let hint = if near.is_empty() {
                String::new()
            } else {
                format!(
                    "; its first line (ignoring indentation) is at {rel}:{}",
                    near.iter()
                        .map(std::string::ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Err(ToolError::bad_args(format!(
                "`old_string` was not found in {rel}{hint}; read the file again and copy the text exactly, whitespace included"
            )));
        }
        if starts.len() > 1 && !args.replace_all {
            let lines: Vec<String> = starts
                .iter()
                .take(10)
                .map(|&s| line_of(&text, s).to_string())
                .collect();
            return Err(ToolError::bad_args(format!(
                "`old_string` occurs {} times in {rel} (lines {}); include more surrounding lines to make it unique, or pass replace_all: true",
                starts.len(),
                lines.join(", ")
            )));
        }
        let new_text = if args.replace_all {
            text.replace(&args.old_string, &args.new_string)
        } else {
            text.replacen(&args.old_string, &args.new_string, 1)
        };
        let mut tx = FileTransaction::new(self.ws.dir());
        tx.replace(
            path.clone(),
            text.clone().into_bytes(),
            new_text.clone().into_bytes(),
        );
        tx.commit().map_err(|e| match e {
            TransactionError::Drifted(_) => ToolError::refused(format!(
                "{rel} changed while the edit was prepared; nothing was written — read it again and retry"
            )),
            e @ TransactionError::NotAFile { .. } => ToolError::refused(e.to_string()),
            other => ToolError::failed(other.to_string()),
        })?;

        // Show the edited region as it is now, numbered, so the caller sees
        // the result without another read.
        let first_line = line_of(&text, starts[0]);
        let shift = new_text.len() as isize - text.len() as isize;
        let mut out = format!(
            "edited {rel}: {} ({} {})",
            plural(starts.len(), "replacement", "replacements"),
            if starts.len() == 1 { "line" } else { "lines" },
            starts
                .iter()
                .take(10)
                .map(|&s| line_of(&text, s).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        if starts.len() == 1 {
            let new_lines = args.new_string.lines().count().max(1);
            let all: Vec<&str> = new_text.lines().collect();
            let from = first_line.saturating_sub(2).max(1);
            let to = (first_line + new_lines + 1).min(all.len());
            if to >= from && to - from < 30 {
                out.push('\n');
                for n in from..=to {
                    out.push_str(&format!(
                        "{:>6}\t{}\n",
                        n,
                        cap_chars(all[n - 1], MAX_LINE_CHARS)
                    ));
                }
            }
        }
        Ok(
            ToolOutput::text(out.trim_end().to_string()).with_structured(json!({
                "path": rel,
                "replacements": starts.len(),
                "first_line": first_line,
                "bytes_changed": shift,
            })),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Registry) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/app.py"),
            "def main():\n    x = 1\n    print(x)\n    x = 1\n",
        )
        .unwrap();
        let run = RunContext {
            workspace: Workspace::new(dir.path()).unwrap(),
            conversation_id: None,
        };
        let registry = Registry::new();
        registry.set_approver(Some(Arc::new(tool_core::AllowAll)));
        FileToolsBinding.register(&run, &registry).unwrap();
        (dir, registry)
    }

    async fn call(r: &Registry, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
        r.call(tool_core::Surface::FULL, tool, args, CallContext::new())
            .await
    }

    #[tokio::test]
    async fn read_numbers_lines_and_pages() {
        let (d, r) = setup();
        let out = call(&r, "read", json!({"path": "src/app.py"}))
            .await
            .unwrap();
        assert_eq!(
            out.joined_text(),
            "     1\tdef main():\n     2\t    x = 1\n     3\t    print(x)\n     4\t    x = 1"
        );
        assert_eq!(
            out.structured.as_ref().unwrap()["content"],
            "def main():\n    x = 1\n    print(x)\n    x = 1\n"
        );
        let out = call(
            &r,
            "read",
            json!({"path": "src/app.py", "offset": 2, "limit": 2}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.joined_text(),
            "     2\t    x = 1\n     3\t    print(x)\n… lines 2-3 of 4 in src/app.py — pass offset 4 to read on"
        );
        let out = call(&r, "read", json!({"path": "."})).await.unwrap();
        assert_eq!(out.joined_text(), "./ is a directory (1 entry):\nsrc/");
        let err = call(&r, "read", json!({"path": "../etc/passwd"}))
            .await
            .unwrap_err();
        expect_test::expect!["bad arguments: `../etc/passwd` is outside the workspace; only paths inside <root> can be used (give them relative to it)"].assert_eq(&err.to_string().replace(d.path().to_str().unwrap(), "<root>"));
        let err = call(&r, "read", json!({"path": "src/app.py", "offset": 9}))
            .await
            .unwrap_err();
        expect_test::expect!["bad arguments: `offset` 9 is past the end of src/app.py, which has 4 lines; pass an offset from 1 to 4"].assert_eq(&err.to_string());
    }

    #[tokio::test]
    async fn read_refuses_binary_and_non_utf8() {
        let (d, r) = setup();
        std::fs::write(d.path().join("b.bin"), b"\x00\x01\x02").unwrap();
        std::fs::write(d.path().join("l.txt"), b"caf\xe9").unwrap();
        let err = call(&r, "read", json!({"path": "b.bin"}))
            .await
            .unwrap_err();
        expect_test::expect![
            "bad arguments: `b.bin` is a binary file; these tools read and edit text only"
        ]
        .assert_eq(&err.to_string());
        let err = call(&r, "read", json!({"path": "l.txt"}))
            .await
            .unwrap_err();
        expect_test::expect!["bad arguments: `l.txt` is not UTF-8 (invalid byte at offset 3); these tools read and edit UTF-8 text only"].assert_eq(&err.to_string());
    }

    #[tokio::test]
    async fn write_creates_and_replaces() {
        let (d, r) = setup();
        let out = call(
            &r,
            "write",
            json!({"path": "new/dir/a.txt", "content": "a\nb\n"}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.joined_text(),
            "wrote new/dir/a.txt (2 lines, 4 bytes; created)"
        );
        let out = call(
            &r,
            "write",
            json!({"path": "new/dir/a.txt", "content": "c\n"}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.joined_text(),
            "wrote new/dir/a.txt (1 line, 2 bytes; replaced; it had 2 lines)"
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("new/dir/a.txt")).unwrap(),
            "c\n"
        );
        let err = call(&r, "write", json!({"path": "/tmp/x", "content": ""}))
            .await
            .unwrap_err();
        expect_test::expect!["bad arguments: `/tmp/x` is outside the workspace; only paths inside <root> can be used (give them relative to it)"].assert_eq(&err.to_string().replace(d.path().to_str().unwrap(), "<root>"));
    }

    #[tokio::test]
    async fn edit_requires_a_unique_exact_match() {
        let (d, r) = setup();
        let err = call(
            &r,
            "edit",
            json!({"path": "src/app.py", "old_string": "x = 1", "new_string": "x = 2"}),
        )
        .await
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("occurs 2 times in src/app.py (lines 2, 4)"),
            "{err}"
        );
        let err = call(
            &r,
            "edit",
            json!({"path": "src/app.py", "old_string": "print(y)", "new_string": "z"}),
        )
        .await
        .unwrap_err();
        expect_test::expect!["bad arguments: `old_string` was not found in src/app.py; read the file again and copy the text exactly, whitespace included"].assert_eq(&err.to_string());
        let err = call(
            &r,
            "edit",
            json!({"path": "src/app.py", "old_string": "  print(x)\n", "new_string": "z", "colum": 1}),
        )
        .await
        .unwrap_err();
        expect_test::expect!["bad arguments: argument `colum`: unknown field `colum`, expected one of `path`, `old_string`, `new_string`, `replace_all`; check the tool's input schema"].assert_eq(&err.to_string());

        let out = call(
            &r,
            "edit",
            json!({"path": "src/app.py", "old_string": "print(x)", "new_string": "print(x + 1)"}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.joined_text(),
            "edited src/app.py: 1 replacement (line 3)\n     1\tdef main():\n     2\t    x = 1\n     3\t    print(x + 1)\n     4\t    x = 1"
        );
        let out = call(
            &r,
            "edit",
            json!({"path": "src/app.py", "old_string": "x = 1", "new_string": "x = 3", "replace_all": true}),
        )
        .await
        .unwrap();
        assert!(
            out.joined_text()
                .starts_with("edited src/app.py: 2 replacements (lines 2, 4)"),
            "{}",
            out.joined_text()
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("src/app.py")).unwrap(),
            "def main():\n    x = 3\n    print(x + 1)\n    x = 3\n"
        );
    }

    #[tokio::test]
    async fn write_and_edit_are_write_tier() {
        let (_d, r) = setup();
        let names: Vec<String> = r
            .specs(tool_core::Surface::READ_ONLY)
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["read"]);
        let err = r
            .call(
                tool_core::Surface::READ_ONLY,
                "write",
                json!({"path": "a", "content": ""}),
                CallContext::new(),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::UnknownTool { .. }), "{err}");
    }

    /// What diagnostics on write checks after a call: the file it names.
    #[test]
    fn write_and_edit_declare_the_file_they_write() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let write = WriteTool::new(ws.clone());
        assert_eq!(
            write.writes(&json!({"path": "src/a.py", "content": "x"})),
            vec!["src/a.py"]
        );
        let edit = EditTool::new(ws);
        assert_eq!(
            edit.writes(&json!({"path": "b.rs", "old_string": "a", "new_string": "b"})),
            vec!["b.rs"]
        );
        // Arguments the call would refuse name nothing.
        assert!(write.writes(&json!({"file": "src/a.py"})).is_empty());
    }
}
