//! The files of a server's root that mention an identifier, for
//! `lsp_rename` and `lsp references`: found before the request, so that
//! files the server's project model does not cover can be opened in it
//! first (a cold basedpyright also answers references from the files it has
//! seen so far), and checked after it, so that every mention the rename did
//! not touch, or the references do not include, is listed rather than left
//! behind in silence.
//!
//! Invariants:
//! - the walk is bounded: at most [`MAX_FILES`] files of the server's
//!   languages and [`MAX_BYTES`] read; where it stops, [`Scan::stopped`] says
//!   so, and the caller repeats it;
//! - it honours `.gitignore` and `.ignore` (with or without a git
//!   repository), skips hidden entries and dependency folders;
//! - every file is read through the workspace's root handle;
//! - a mention is the identifier at word boundaries (`foo` in `foo_bar`,
//!   `$foo` or `foo2` is not one), so a count may include other symbols of
//!   the same name, and every message that shows one says so.
//!
//! Which servers get the mentioning files opened ([`model_may_miss`]):
//! clangd without a compile database (it knows only the files open in it),
//! and every server whose project model is set by a configuration we do not
//! read (pyright's `include`, tsconfig's `include`, a catalog addition);
//! rust-analyzer and gopls load the whole Cargo workspace or Go module.

pub(crate) mod decide;

use crate::planned_edit::PlannedEdit;
use crate::positioning;
use crate::source_walk::source_walk;
use crate::supervisor::{LspSupervisor, Target, Timeouts};
use std::path::{Path, PathBuf};
use tool_core::{ToolError, Workspace};

/// At most this many files of the server's languages are read.
pub(crate) const MAX_FILES: usize = 2_000;
/// At most this many bytes are read in all.
pub(crate) const MAX_BYTES: u64 = 20 * 1024 * 1024;

/// One file that mentions the identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mentioning {
    pub path: PathBuf,
    pub count: usize,
}

/// What a scan found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// By path.
    pub files: Vec<Mentioning>,
    /// Why the walk stopped before the end, if it did.
    pub stopped: Option<String>,
}

fn continues_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// How many times `ident` occurs in `text` at word boundaries.
pub(crate) fn count(text: &str, ident: &str) -> usize {
    if ident.is_empty() {
        return 0;
    }
    text.match_indices(ident)
        .filter(|(at, _)| {
            let before = text[..*at].chars().next_back();
            let after = text[at + ident.len()..].chars().next();
            !before.is_some_and(continues_word) && !after.is_some_and(continues_word)
        })
        .count()
}

/// The files under `root` with one of `extensions` that mention `ident`,
/// bounded by [`MAX_FILES`] and [`MAX_BYTES`]. Blocking: run it off the
/// async threads.
pub(crate) fn scan(ws: &Workspace, root: &Path, extensions: &[String], ident: &str) -> Scan {
    let walk = source_walk(root).build();
    let mut out = Scan::default();
    let (mut files, mut bytes) = (0usize, 0u64);
    for entry in walk.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let ours = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.iter().any(|x| x == e));
        if !ours {
            continue;
        }
        let len = entry.metadata().map_or(0, |m| m.len());
        if files == MAX_FILES || bytes + len > MAX_BYTES {
            out.stopped = Some(format!(
                "the search for other mentions stopped after {files} files ({} MiB) at {}; files past it were not checked",
                bytes / (1024 * 1024),
                ws.relative(path)
            ));
            break;
        }
        files += 1;
        bytes += len;
        let Ok(content) = ws.dir().read(path, MAX_BYTES) else {
            continue;
        };
        let Ok(text) = String::from_utf8(content) else {
            continue;
        };
        let n = count(&text, ident);
        if n > 0 {
            out.files.push(Mentioning {
                path: path.to_path_buf(),
                count: n,
            });
        }
    }
    out
}

/// At most this many mentioning files are opened in the server before a
/// rename; the rest are still checked after it.
pub(crate) const MAX_OPENED: usize = 200;
/// At most this many files are listed as not renamed.
pub(crate) const MAX_LISTED: usize = 30;

/// Whether `root` has what clangd needs to see every file of the project.
pub(crate) fn has_compile_database(root: &Path) -> bool {
    [
        "compile_commands.json",
        "compile_flags.txt",
        "build/compile_commands.json",
    ]
    .iter()
    .any(|f| root.join(f).is_file())
}

/// Whether the server for `entry_id` at `root` may not see, by itself,
/// every file of its root that a rename has to reach.
pub(crate) fn model_may_miss(entry_id: &str, root: &Path) -> bool {
    match entry_id {
        "rust" | "go" => false,
        "c" => !has_compile_database(root),
        _ => true,
    }
}

/// clangd without a compile command parses a header as Objective-C++, so a
/// C function declared there is another symbol to it than the one the `.c`
/// files use, and a rename from the header reaches no `.c` file. When no
/// mentioning file is C++, the mentioning headers get a C command over LSP
/// (clangd's `compilationDatabaseChanges`), and the open ones are waited
/// for (within `t.diagnostics`) until clangd has parsed them again.
async fn headers_as_c(sup: &LspSupervisor, t: &Timeouts, target: &Target, scan: &Scan) {
    let language = |p: &Path| sup.catalog().for_file(p).map(|(_, l)| l);
    if scan
        .files
        .iter()
        .any(|m| language(&m.path).as_deref() != Some("c"))
    {
        return;
    }
    let headers: Vec<&PathBuf> = scan
        .files
        .iter()
        .map(|m| &m.path)
        .filter(|p| p.extension().is_some_and(|e| e == "h"))
        .collect();
    if headers.is_empty() {
        return;
    }
    let client = &target.client;
    let root = target.slot.root.to_string_lossy().into_owned();
    let mut changes = serde_json::Map::new();
    for h in &headers {
        let file = h.to_string_lossy().into_owned();
        changes.insert(
            file.clone(),
            serde_json::json!({"workingDirectory": root, "compilationCommand": ["clang", "-xc-header", file]}),
        );
    }
    let seq = client.diag_seq();
    client.notify(
        "workspace/didChangeConfiguration",
        serde_json::json!({"settings": {"compilationDatabaseChanges": changes}}),
    );
    let mut open = Vec::new();
    for h in headers {
        let uri = crate::client::file_uri(h);
        if client.doc(&uri).await.is_some() {
            open.push(uri);
        }
    }
    let mut published = client.subscribe_diagnostics();
    let deadline = tokio::time::Instant::now() + t.diagnostics;
    while !open
        .iter()
        .all(|u| client.published(u).is_some_and(|p| p.seq > seq))
        && client.gone().is_none()
    {
        if tokio::time::timeout_at(deadline, published.changed())
            .await
            .is_err()
        {
            break;
        }
    }
}

/// What a rename or a reference search has to reach: the mentioning files
/// found before it.
pub(crate) struct Reach {
    pub symbol: String,
    pub scan: Scan,
    /// clangd without a compile database: a rename that leaves mentions is
    /// refused unless the call says `partial`.
    pub strict: bool,
}

impl Reach {
    /// Scan the target's root for `symbol`, open the mentioning files the
    /// server may not see, and, with `wait_analysed` (a rename, which must
    /// not miss one), wait (within `t.diagnostics` in all) until it has
    /// analysed them, then until it is idle. A reference search does not
    /// wait: a server reads its notifications in order, so the files are
    /// open in it before the request, and it reads them as it searches —
    /// but clangd without a compile database, which answers only from the
    /// files it has parsed, is waited for either way.
    pub(crate) async fn prepare(
        sup: &LspSupervisor,
        t: &Timeouts,
        target: &Target,
        symbol: &str,
        wait_analysed: bool,
    ) -> Result<Reach, ToolError> {
        let entry = &target.slot.entry;
        let root = target.slot.root.clone();
        let extensions: Vec<String> = entry.extensions.keys().cloned().collect();
        let ws = sup.workspace().clone();
        let ident = symbol.to_string();
        let scan = tokio::task::spawn_blocking(move || scan(&ws, &root, &extensions, &ident))
            .await
            .map_err(|e| ToolError::failed(format!("the search for mentions failed: {e}")))?;
        let root = &target.slot.root;
        let reach = Reach {
            symbol: symbol.to_string(),
            strict: entry.id == "c" && !has_compile_database(root),
            scan,
        };
        if !model_may_miss(&entry.id, root) {
            return Ok(reach);
        }
        let client = &target.client;
        if reach.strict {
            headers_as_c(sup, t, target, &reach.scan).await;
        }
        let mut opened = Vec::new();
        for m in reach.scan.files.iter().take(MAX_OPENED) {
            let uri = crate::client::file_uri(&m.path);
            if client.doc(&uri).await.is_some() {
                continue;
            }
            let language_id = sup
                .catalog()
                .for_file(&m.path)
                .map_or_else(|| target.language_id.clone(), |(_, l)| l);
            if let Ok(doc) = client.sync_file(&m.path, &language_id).await {
                opened.push((uri, doc));
            }
        }
        // clangd without a compile database answers from the files it has
        // parsed: a reference search waits for them as a rename does.
        if !(wait_analysed || reach.strict) {
            return Ok(reach);
        }
        // The server has analysed a file when it has published (or answers
        // a pull) for it; one that does not in time is still checked after.
        let deadline = std::time::Instant::now() + t.diagnostics;
        for (uri, doc) in &opened {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            let _ = crate::diagnostics::fresh(client, uri, doc, left).await;
        }
        if !opened.is_empty() {
            positioning::wait_ready(t, client).await?;
        }
        Ok(reach)
    }

    /// The mentioning files that still mention the symbol once `plan` is
    /// applied (a renamed file under its new name), with how many times.
    pub(crate) fn unrenamed(&self, plan: &PlannedEdit) -> Vec<Mentioning> {
        self.scan
            .files
            .iter()
            .filter_map(|m| {
                let (path, count) = match plan.text_after(&m.path) {
                    None => (m.path.clone(), m.count),
                    Some((path, text)) => (path, text.map_or(0, |t| count(t, &self.symbol))),
                };
                (count > 0).then_some(Mentioning { path, count })
            })
            .collect()
    }

    /// The symbol's definition as the server gives it at `p`'s position,
    /// and the moment the leftover mentions must be decided by.
    async fn anchor(
        ws: &Workspace,
        p: &positioning::Positioned,
        t: &Timeouts,
    ) -> (Vec<crate::render::Loc>, std::time::Instant) {
        let deadline = std::time::Instant::now() + t.request;
        let client = &p.target.client;
        let answer = client
            .request_as::<Option<lsp_types::GotoDefinitionResponse>>(
                "textDocument/definition",
                serde_json::json!({"textDocument": {"uri": p.uri}, "position": p.position}),
                t.request,
            )
            .await;
        let at = answer
            .ok()
            .map(|a| crate::render::locations(ws, a.as_ref()))
            .unwrap_or_default();
        (at, deadline)
    }

    /// A rename's leftover mentions decided by the server: those in
    /// `unrenamed` files that `plan` did not touch, each asked about.
    pub(crate) async fn decide_unrenamed(
        &self,
        ws: &Workspace,
        p: &positioning::Positioned,
        t: &Timeouts,
        plan: &PlannedEdit,
        new_name: &str,
        unrenamed: &[Mentioning],
    ) -> decide::Decided {
        if unrenamed.is_empty() {
            return decide::Decided::default();
        }
        let (at, deadline) = Self::anchor(ws, p, t).await;
        let mut files = Vec::new();
        let mut d = decide::Decided::default();
        for m in unrenamed {
            let before = ws
                .dir()
                .read(&m.path, MAX_BYTES)
                .ok()
                .and_then(|b| String::from_utf8(b).ok());
            let left = before
                .as_ref()
                .and_then(|before| match plan.text_after(&m.path) {
                    None => Some(decide::mentions_in(&m.path, before, &self.symbol)),
                    Some((path, Some(after))) if path == m.path => {
                        decide::left_by_rename(&m.path, before, after, &self.symbol, new_name)
                    }
                    Some(_) => None,
                });
            match (before, left) {
                (Some(before), Some(left)) => files.push((m.path.clone(), before, left)),
                _ => d.undecided.push((m.path.clone(), m.count)),
            }
        }
        let client = &p.target.client;
        let mut decided =
            decide::decide(ws, client, &p.target.language_id, files, &at, &[], deadline).await;
        decided.undecided.append(&mut d.undecided);
        decided.undecided.sort();
        decided
    }

    /// The mentions in `beyond` (files without a reference) decided by the
    /// server; `references` are those in hand.
    pub(crate) async fn decide_beyond(
        &self,
        ws: &Workspace,
        p: &positioning::Positioned,
        t: &Timeouts,
        beyond: &[Mentioning],
        references: &[crate::render::Loc],
    ) -> decide::Decided {
        if beyond.is_empty() {
            return decide::Decided::default();
        }
        let (at, deadline) = Self::anchor(ws, p, t).await;
        let mut files = Vec::new();
        let mut undecided = Vec::new();
        for m in beyond {
            match ws
                .dir()
                .read(&m.path, MAX_BYTES)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
            {
                Some(text) => {
                    let found = decide::mentions_in(&m.path, &text, &self.symbol);
                    files.push((m.path.clone(), text, found));
                }
                None => undecided.push((m.path.clone(), m.count)),
            }
        }
        let client = &p.target.client;
        let mut decided = decide::decide(
            ws,
            client,
            &p.target.language_id,
            files,
            &at,
            references,
            deadline,
        )
        .await;
        decided.undecided.extend(undecided);
        decided.undecided.sort();
        decided
    }

    /// The mentioning files that hold none of `references` (one path per
    /// reference): files the server may not have seen, or whose mentions
    /// are other symbols or text. A mention beside a reference (a doc
    /// comment naming its function) is not worth a line.
    pub(crate) fn beyond(&self, references: &[&Path]) -> Vec<Mentioning> {
        self.scan
            .files
            .iter()
            .filter(|m| !references.contains(&m.path.as_path()))
            .cloned()
            .collect()
    }

    /// The lines for mentions the server has decided (see
    /// [`decide::report`]), and where the scan stopped.
    pub(crate) fn report_decided(
        &self,
        ws: &Workspace,
        lead: &str,
        decided: &decide::Decided,
    ) -> Vec<String> {
        let mut rows = decide::report(ws, &self.symbol, lead, decided);
        rows.extend(self.scan.stopped.clone());
        rows
    }

    /// "not renamed — tests/t.py: 3 mentions of `foo` (may be other
    /// symbols)", one line a file (capped), and where the scan stopped.
    pub(crate) fn report(&self, ws: &Workspace, unrenamed: &[Mentioning]) -> Vec<String> {
        let rows: Vec<String> = unrenamed
            .iter()
            .map(|m| {
                format!(
                    "not renamed — {}: {} of `{}` (may be other symbols)",
                    ws.relative(&m.path),
                    tool_core::format::plural(m.count, "mention", "mentions"),
                    self.symbol
                )
            })
            .collect();
        let (mut rows, note) = tool_core::format::cap_list(
            rows,
            MAX_LISTED,
            "rename the rest one at a time, or search for them",
        );
        rows.extend(note);
        rows.extend(self.scan.stopped.clone());
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_count_only_whole_words() {
        let text = "foo(foo_bar, $foo, foo2, xfoo); foo.x = foo; // foo\nfoo";
        assert_eq!(count(text, "foo"), 5);
        assert_eq!(count("", "foo"), 0);
        assert_eq!(count("é foo é", "foo"), 1);
        assert_eq!(count("éfoo", "foo"), 0);
    }

    #[test]
    fn the_scan_honours_ignore_files_hidden_and_dependency_folders() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let root = ws.root().to_path_buf();
        for (p, text) in [
            ("a.py", "foo()\nfoo\n"),
            ("b.py", "foo_bar\n"),
            ("tests/t.py", "from a import foo\n"),
            ("notes.txt", "foo\n"),
            ("gen/x.py", "foo\n"),
            (".hidden/h.py", "foo\n"),
            ("node_modules/m/m.py", "foo\n"),
            (".gitignore", "gen/\n"),
        ] {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let s = scan(&ws, &root, &["py".into()], "foo");
        let got: Vec<(String, usize)> = s
            .files
            .iter()
            .map(|m| (ws.relative(&m.path), m.count))
            .collect();
        assert_eq!(
            got,
            vec![("a.py".into(), 2), ("tests/t.py".into(), 1)],
            "{:?}",
            s.stopped
        );
        assert_eq!(s.stopped, None);
    }
}
