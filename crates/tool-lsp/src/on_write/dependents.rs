//! What a write broke in the files that use what it changed, for servers
//! that check the files open in them (basedpyright, tsserver): the
//! declarations on the lines a write changed are named, the files of the
//! server's root that mention one of them are opened and their diagnostics
//! taken while the server still holds the text before the write, then
//! asked again once it holds the written one; what is new is reported as
//! [`crate::on_write::fallout`] reports a project-wide server's.
//!
//! Bounded: at most [`MAX_DEPENDENTS`] files (nearest to the written one
//! first), within [`BUDGET`]; the files past either are named as not
//! checked, never implied clean. Only servers whose answer for a file that
//! did not change is fresh take part: by construction (a pull, or
//! tsserver's own check), or because a file opened again is checked
//! again, reading the written one (clangd: a dependent is closed and
//! opened after the write, and its first publish is its judgement); a
//! server that only publishes on its own would answer with what it said
//! before.
//!
//! In C and C++, a declaration names no keyword (`int add(int a);`): the
//! names there are those a `(` follows, and `#define`d ones.

use crate::client::{file_uri, read_document, LspClient, OpenDoc};
use crate::diagnostics::{self, new_against, DiagLine, Labelled, TSSERVER_REQUEST};
use crate::mentions;
use crate::on_write::fallout::{judges_other_files_from_disk, Stage};
use crate::supervisor::LspSupervisor;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// At most this many dependents are judged per write.
pub(crate) const MAX_DEPENDENTS: usize = 20;
/// How long their judging may take in all, before and after the write.
pub(crate) const BUDGET: Duration = Duration::from_secs(6);

/// Words that declare the name after them, across the languages whose
/// servers take part.
const DECLARING: [&str; 12] = [
    "def",
    "class",
    "function",
    "fn",
    "func",
    "interface",
    "type",
    "enum",
    "struct",
    "const",
    "let",
    "var",
];

/// The names declared on the lines `first..=last` (1-based) of `text`.
pub(crate) fn declared_on(text: &str, (first, last): (u32, u32)) -> Vec<String> {
    let mut names = Vec::new();
    for line in text
        .lines()
        .skip(first.saturating_sub(1) as usize)
        .take((last + 1).saturating_sub(first) as usize)
    {
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(2) {
            if DECLARING.contains(&pair[0])
                && pair[1].chars().next().is_some_and(|c| !c.is_ascii_digit())
                && !names.iter().any(|n| n == pair[1])
            {
                names.push(pair[1].to_string());
            }
        }
    }
    names
}

/// The names a change from `old` to `new` may alter: those `declared` on
/// the lines of each changed hunk, in the old text and in the new, read in
/// code only (a docstring's "the type of this" declares neither `of` nor
/// `this`); where a side of a hunk is empty, the line it sits at (a doc
/// comment added above `f` is a change of `f`). Hunk by hunk, not from
/// the first changed line to the last: a
/// rename that touches lines 37 and 551 of pallets/click's `core.py`
/// changed none of the declarations between them.
pub(crate) fn changed_names(
    path: &Path,
    (old, new): (&str, &str),
    declared: fn(&str, (u32, u32)) -> Vec<String>,
) -> Vec<String> {
    let (code_old, code_new) = (
        mentions::decide::code_only(path, old),
        mentions::decide::code_only(path, new),
    );
    let mut names: Vec<String> = Vec::new();
    for hunk in crate::on_write::changed::hunks(old, new) {
        for (code, range) in [(&code_old, hunk.old), (&code_new, hunk.new)] {
            // Where a side is empty (lines only added, or only removed),
            // the line the text opened or closed up at: a comment added
            // above a declaration changes that declaration's text.
            let first = range.start as u32 + 1;
            let lines = (first, (range.end as u32).max(first));
            for n in declared(code, lines) {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
    }
    names
}

/// Words a `(` may follow in C and C++ that name no function.
const C_NOT_NAMES: [&str; 8] = [
    "if", "while", "for", "switch", "return", "sizeof", "defined", "alignof",
];

/// The names declared on the lines `first..=last` (1-based) of C or C++
/// `text`: each identifier a `(` follows (a function declared, defined or
/// called there: a call's callee is judged too, which costs time, never
/// truth), each `#define`d name, and what [`declared_on`] finds (`struct`,
/// `enum`).
pub(crate) fn declared_in_c_on(text: &str, (first, last): (u32, u32)) -> Vec<String> {
    let mut names = declared_on(text, (first, last));
    let mut add = |name: &str| {
        let starts_as_name = name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        if starts_as_name && !C_NOT_NAMES.contains(&name) && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    };
    for line in text
        .lines()
        .skip(first.saturating_sub(1) as usize)
        .take((last + 1).saturating_sub(first) as usize)
    {
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        if let Some(rest) = line.trim_start().strip_prefix('#') {
            if let Some(defined) = rest.trim_start().strip_prefix("define") {
                let name: String = defined
                    .trim_start()
                    .chars()
                    .take_while(|c| is_word(*c))
                    .collect();
                add(&name);
            }
            continue;
        }
        let mut word_start = None;
        for (i, c) in line.char_indices() {
            if is_word(c) {
                word_start.get_or_insert(i);
                continue;
            }
            let word = word_start.take().map(|s| &line[s..i]);
            if let (Some(word), '(') = (word, c) {
                add(word);
            } else if let (Some(word), true) = (word, c.is_whitespace()) {
                // `add (1, 2)`: the `(` after spaces.
                if line[i..].trim_start().starts_with('(') {
                    add(word);
                }
            }
        }
    }
    names
}

/// The dependents of one written file, with their diagnostics before the
/// write.
pub(crate) struct Dependents {
    client: Arc<LspClient>,
    language_of: BTreeMap<PathBuf, String>,
    /// Each dependent and its problems before the write; `None` where they
    /// cannot be known (a server that reads the written file from disk,
    /// and the dependent was not open in it before the write).
    before: Vec<(PathBuf, Option<Vec<DiagLine>>)>,
    /// Files that mention a changed name and were not judged, and the names.
    unjudged: (usize, Vec<String>),
    started: Instant,
    /// Whether a dependent is judged after the write by opening it again
    /// (see [`crate::ServerEntry::dependents_by_reopen`]).
    by_reopen: bool,
}

/// Whether `client` answers for an unchanged file with fresh diagnostics.
fn answers_fresh(client: &LspClient) -> bool {
    client.pull_diagnostics() || client.offers_command(TSSERVER_REQUEST)
}

impl Dependents {
    /// Find the dependents of `path` (its text `old` before the change,
    /// `new` after; the change judged at `stage`) and take their
    /// diagnostics now, while the server holds `old`. `None` when nothing
    /// is to be judged (a server that judges them from the disk, at
    /// [`Stage::Unsaved`]: [`PublishedBefore`](crate::on_write::fallout::PublishedBefore)
    /// names it).
    pub(crate) async fn before(
        sup: &LspSupervisor,
        path: &Path,
        (old, new): (&str, &str),
        touched: &[PathBuf],
        stage: Stage,
    ) -> Option<Dependents> {
        let started = Instant::now();
        let (slot, _) = sup.server_slot_for(path).ok()?;
        let client = slot.running_client().await?;
        let by_reopen = slot.entry.dependents_by_reopen;
        if !(answers_fresh(&client) || by_reopen) || slot.entry.save_check_progress.is_some() {
            return None;
        }
        if stage == Stage::Unsaved && judges_other_files_from_disk(&slot.entry).is_some() {
            return None;
        }
        let declared: fn(&str, (u32, u32)) -> Vec<String> =
            match slot.entry.language_of(path).as_deref() {
                Some("c" | "cpp" | "objective-c" | "objective-cpp") => declared_in_c_on,
                _ => declared_on,
            };
        let names = changed_names(path, (old, new), declared);
        if names.is_empty() {
            return None;
        }
        // The dependents' state before the change is taken against `old`:
        // a server that no longer holds the file (closed since) would read
        // the disk, which a write has changed already.
        let uri = file_uri(path);
        if client.doc(&uri).await.is_none_or(|d| d.text != old) {
            let language = slot.entry.language_of(path)?;
            client.sync_text(path, &language, old.to_string()).await;
        }
        let extensions: Vec<String> = slot.entry.extensions.keys().cloned().collect();
        let ws = sup.workspace().clone();
        let root = slot.root.clone();
        let scan_names = names.clone();
        let found = tokio::task::spawn_blocking(move || {
            let mut files: Vec<PathBuf> = Vec::new();
            for name in &scan_names {
                for m in mentions::scan(&ws, &root, &extensions, name).files {
                    if !files.contains(&m.path) {
                        files.push(m.path);
                    }
                }
            }
            files
        })
        .await
        .ok()?;
        let mut files: Vec<PathBuf> = found.into_iter().filter(|f| !touched.contains(f)).collect();
        // Nearest first: the written file's folder, then by path.
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        files.sort_by_key(|f| (f.parent() != Some(dir.as_path()), f.clone()));
        let mut out = Dependents {
            client,
            language_of: BTreeMap::new(),
            before: Vec::new(),
            unjudged: (files.len().saturating_sub(MAX_DEPENDENTS), names),
            started,
            by_reopen,
        };
        let files: Vec<(PathBuf, String)> = files
            .into_iter()
            .take(MAX_DEPENDENTS)
            .filter_map(|f| slot.entry.language_of(&f).map(|l| (f, l)))
            .collect();
        // All open before any is asked, as they are after the change: a
        // server's answer for one may depend on which others it has open
        // (basedpyright's import cycles, seen on encode/httpx: reported
        // for `_content.py` once the rest of the cycle was open, and so
        // read as new).
        if !by_reopen {
            for (file, language) in &files {
                let _ = out.client.sync_file(file, language).await;
            }
        }
        for (file, language) in files {
            // The write is on disk already: a server that reads the files a
            // dependent uses from disk (clangd, its headers) would check a
            // dependent opened now against the written text.
            if by_reopen && out.client.doc(&file_uri(&file)).await.is_none() {
                out.language_of.insert(file.clone(), language);
                out.before.push((file, None));
                continue;
            }
            let Some(diags) = out.diagnostics(sup, &file, &language).await else {
                out.unjudged.0 += 1;
                continue;
            };
            out.language_of.insert(file.clone(), language);
            out.before.push((file, Some(diags)));
        }
        (!out.before.is_empty() || out.unjudged.0 > 0).then_some(out)
    }

    /// One dependent's problems now, within what is left of the budget.
    async fn diagnostics(
        &self,
        sup: &LspSupervisor,
        file: &Path,
        language: &str,
    ) -> Option<Vec<DiagLine>> {
        let left = BUDGET.checked_sub(self.started.elapsed())?;
        let doc: OpenDoc = self.client.sync_file(file, language).await.ok()?;
        let fresh = diagnostics::fresh(&self.client, &file_uri(file), &doc, left)
            .await
            .ok()?;
        Some(self.problem_lines(sup, file, &fresh.diagnostics))
    }

    /// A dependent's diagnostics as the problems the model reads.
    fn problem_lines(
        &self,
        sup: &LspSupervisor,
        file: &Path,
        diagnostics: &[lsp_types::Diagnostic],
    ) -> Vec<DiagLine> {
        let text = read_document(sup.workspace(), file).ok();
        diagnostics::problem_lines(
            &sup.rel(file),
            diagnostics,
            text.as_deref(),
            self.client.encoding,
        )
    }

    /// A dependent's problems once it is closed and opened again: its first
    /// publish after the open, within what is left of the budget. (By the
    /// publish's place in the sequence, as an open starts the versions
    /// again; and carrying a version from a server that sends them: clangd
    /// clears a closed file's diagnostics with an unversioned publish that
    /// arrives after the open.)
    async fn reopened(
        &self,
        sup: &LspSupervisor,
        file: &Path,
        language: &str,
    ) -> Option<Vec<DiagLine>> {
        let left = BUDGET.checked_sub(self.started.elapsed())?;
        let deadline = tokio::time::Instant::now() + left;
        let uri = file_uri(file);
        let mut changes = self.client.subscribe_diagnostics();
        let versioned = self.client.publishes_versions();
        self.client.close(&uri).await;
        let seq = self
            .client
            .sync_file(file, language)
            .await
            .ok()?
            .sent_at_seq;
        let published = loop {
            match self.client.published(&uri) {
                Some(p) if p.seq > seq && (p.version.is_some() || !versioned) => break p,
                _ => {}
            }
            tokio::time::timeout_at(deadline, changes.changed())
                .await
                .ok()?
                .ok()?;
        };
        Some(self.problem_lines(sup, file, &published.diagnostics))
    }

    /// Once the server holds the written text: each dependent's new
    /// problems, by file, the files judged, and lines for the rest: the
    /// problems on lines that use a changed name in dependents whose state
    /// before the write cannot be known, and what was not judged.
    pub(crate) async fn after(
        &self,
        sup: &LspSupervisor,
    ) -> (BTreeMap<String, Vec<Labelled>>, Vec<String>, Vec<String>) {
        let mut new_by_file = BTreeMap::new();
        let mut judged = Vec::new();
        let mut unknown: Vec<DiagLine> = Vec::new();
        let mut unjudged = self.unjudged.0;
        for (file, before) in &self.before {
            let language = &self.language_of[file];
            let now = if self.by_reopen {
                self.reopened(sup, file, language).await
            } else {
                self.diagnostics(sup, file, language).await
            };
            let Some(now) = now else {
                unjudged += 1;
                continue;
            };
            judged.push(sup.rel(file));
            let Some(before) = before else {
                unknown.extend(self.on_lines_using_names(sup, file, now));
                continue;
            };
            let new = new_against(before, &now);
            if !new.is_empty() {
                new_by_file.insert(
                    sup.rel(file),
                    new.into_iter().map(|d| (d, String::new())).collect(),
                );
            }
        }
        let mut notes = Vec::new();
        if !unknown.is_empty() {
            let files: std::collections::BTreeSet<&str> =
                unknown.iter().map(|d| d.path.as_str()).collect();
            notes.push(format!(
                "lsp: {} in {} on lines that use {}, not known whether new (they were not open in {} before this write, and it reads the written file from disk):",
                tool_core::format::plural(unknown.len(), "problem", "problems"),
                tool_core::format::plural(files.len(), "other file", "other files"),
                self.names_shown(),
                self.client.name,
            ));
            notes.extend(unknown.iter().map(DiagLine::render));
        }
        let note = (unjudged > 0).then(|| {
            format!(
                "lsp: not checked: {} more {} mentioning {} (the budget for other files was spent)",
                unjudged,
                if unjudged == 1 { "file" } else { "files" },
                self.names_shown()
            )
        });
        notes.extend(note);
        (new_by_file, judged, notes)
    }

    /// The changed names, as the model reads them: `a`, `b`.
    fn names_shown(&self) -> String {
        self.unjudged
            .1
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Of a dependent's problems, those on a line that uses one of the
    /// changed names (as a word).
    fn on_lines_using_names(
        &self,
        sup: &LspSupervisor,
        file: &Path,
        problems: Vec<DiagLine>,
    ) -> Vec<DiagLine> {
        let Ok(text) = read_document(sup.workspace(), file) else {
            return Vec::new();
        };
        let lines: Vec<&str> = text.lines().collect();
        let uses = |line: &str| {
            line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| self.unjudged.1.iter().any(|n| n == w))
        };
        problems
            .into_iter()
            .filter(|d| {
                lines
                    .get(d.line.saturating_sub(1) as usize)
                    .is_some_and(|l| uses(l))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{changed_names, declared_in_c_on, declared_on};
    use std::path::Path;

    /// The names a change alters are those declared on the lines it
    /// changed, hunk by hunk: a rename that touches two distant lines
    /// changes none of the declarations between them (as on pallets/click,
    /// where `get_current_context` → `current_context` named the enum
    /// members and tests of `core.py` between two calls).
    #[test]
    fn the_names_a_change_alters_are_those_on_its_hunks() {
        let old = "from enum import IntEnum, auto\n\
                   from .globals import get_current_context\n\
                   \n\
                   class Source(IntEnum):\n\
                   \x20   DEFAULT = auto()\n\
                   \n\
                   def test_context_meta():\n\
                   \x20   return get_current_context()\n\
                   \n\
                   def shown(): pass\n";
        let renamed = old.replace("get_current_context", "current_context");
        let moved = old.replace("def shown(): pass", "def shown(x): pass");
        let added = format!("{old}def more(): pass\n");
        let removed = old.replace(
            "def test_context_meta():\n    return get_current_context()\n",
            "",
        );
        let doc = old.replace("def shown", "# Shown.\ndef shown");
        let cases: &[(&str, &str, &[&str])] = &[
            // The import and the call: no declaration on either line.
            ("rename of a used name", &renamed, &[]),
            // A declaration's own line changed: its name.
            ("a signature", &moved, &["shown"]),
            ("a definition added", &added, &["more"]),
            ("a definition removed", &removed, &["test_context_meta"]),
            // Lines added or removed above a declaration: its name (the
            // side where nothing is left reads the line it sits at).
            ("a comment above a declaration", &doc, &["shown"]),
        ];
        let path = Path::new("core.py");
        for (what, new, want) in cases {
            assert_eq!(
                changed_names(path, (old, new), declared_on),
                *want,
                "{what}"
            );
        }
        // The declaration renamed: the old name and the new.
        let old = "def get_current_context():\n    pass\n\nclass Between: pass\n\nx = get_current_context()\n";
        let new = old.replace("get_current_context", "current_context");
        assert_eq!(
            changed_names(path, (old, &new), declared_on),
            ["get_current_context", "current_context"]
        );
    }

    #[test]
    fn the_names_declared_on_changed_lines() {
        let cases: &[(&str, (u32, u32), &[&str])] = &[
            ("def f(x):\n    return x\n", (1, 1), &["f"]),
            (
                "class A:\n    def run(self, y): ...\n",
                (1, 2),
                &["A", "run"],
            ),
            ("export function shallow(a, b) {}\n", (1, 1), &["shallow"]),
            ("export const g = (): number => 1;\n", (1, 1), &["g"]),
            (
                "pub fn set_max_level(level: LevelFilter) {\n",
                (1, 1),
                &["set_max_level"],
            ),
            ("x = f(1)\n", (1, 1), &[]),
            ("def f(): pass\ndef g(): pass\n", (2, 2), &["g"]),
        ];
        for (text, lines, want) in cases {
            assert_eq!(declared_on(text, *lines), *want, "{text}");
        }
        // Read in code only, a docstring or a comment declares nothing (as
        // in pallets/click's decorators.py, whose prose gave `of`, `this`
        // and `is`).
        let text = "def f():\n    \"\"\"The type of this function is T.\"\"\"\n    # a function is\n    return g(\"class X\")\n";
        let code = crate::mentions::decide::code_only(std::path::Path::new("a.py"), text);
        assert_eq!(declared_on(text, (1, 4)), ["f", "of", "is", "X"]);
        assert_eq!(declared_on(&code, (1, 4)), ["f"]);
        // Strings of any characters, an escape before one included, keep
        // their lines (the lexer steps by bytes).
        let text = "s = \"🙂漢字\" + f('\\é')\ndef g(): pass\n";
        let code = crate::mentions::decide::code_only(std::path::Path::new("a.py"), text);
        assert_eq!(code, "s =       + f(    )\ndef g(): pass\n");
        assert_eq!(declared_on(&code, (2, 2)), ["g"]);
        // C and C++: a declaration names no keyword.
        let cases: &[(&str, (u32, u32), &[&str])] = &[
            ("int add(int a, int b, int c);\n", (1, 1), &["add"]),
            (
                "static inline long twice (long x) { return x; }\n",
                (1, 1),
                &["twice"],
            ),
            ("#define LIMIT(x) ((x) + 1)\n", (1, 1), &["LIMIT"]),
            ("struct counter { int n; };\n", (1, 1), &["counter"]),
            ("    if (n > 0) return sizeof(int);\n", (1, 1), &[]),
            ("int x = 1;\nint f(void);\n", (1, 1), &[]),
        ];
        for (text, lines, want) in cases {
            assert_eq!(declared_in_c_on(text, *lines), *want, "{text}");
        }
    }
}
