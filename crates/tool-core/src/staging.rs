//! Staged changes: a proposed change of workspace files that is shown first
//! and written only when `resolve` accepts it.
//!
//! A [`StagedChange`] is what any staging tool proposes (a structural
//! rewrite, a rename, a file move, a code action): every file's content
//! before and after (`None`: absent), and the moves it makes. A
//! [`ChangeStore`] keeps staged changes under ids; a [`PreviewHook`] computes
//! what the language servers would report after a change, without touching
//! the disk. The two live in different tool crates, which never depend on
//! each other: a [`StagingLink`] made by the facade for one run connects
//! them.
//!
//! Invariants: a staged change never writes by itself; accepting one goes
//! through one [`FileTransaction`] (every file checked against `before`,
//! then all written or none); `before` is what the file held when the change
//! was staged, so any edit since is drift.

use crate::files::{FileChange, FileTransaction};
use crate::format::{plural, thousands};
use crate::fs::Root;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// One file of a staged change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagedFile {
    pub path: PathBuf,
    /// Relative to the workspace root, as the model reads it.
    pub rel: String,
    /// Its content at staging; `None`: it did not exist (the change creates it).
    pub old: Option<String>,
    /// Its content after the change; `None`: the change deletes it.
    pub new: Option<String>,
    /// Replacements or text edits in it (0 for a file only moved).
    pub edits: usize,
}

/// A file or folder the change moves (relative paths).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagedMove {
    pub from: PathBuf,
    pub to: PathBuf,
}

/// A proposed change of workspace files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagedChange {
    /// The tool that staged it, named when it must be staged again
    /// ("call lsp_rename again").
    pub tool: String,
    pub files: Vec<StagedFile>,
    pub moves: Vec<StagedMove>,
}

impl StagedChange {
    pub fn new(tool: impl Into<String>) -> Self {
        StagedChange {
            tool: tool.into(),
            files: Vec::new(),
            moves: Vec::new(),
        }
    }

    /// Replacements or text edits over every file.
    pub fn edits(&self) -> usize {
        self.files.iter().map(|f| f.edits).sum()
    }

    /// The transaction that writes the change beneath `root`: every file
    /// expected to still hold `old`.
    pub fn transaction(&self, root: &Root) -> FileTransaction {
        let mut tx = FileTransaction::new(root);
        for f in &self.files {
            tx.push(FileChange {
                path: f.path.clone(),
                expected: f.old.clone().map(String::into_bytes),
                new: f.new.clone().map(String::into_bytes),
            });
        }
        tx
    }

    /// The relative name of `path`, when it is one of the change's files.
    pub fn rel_of(&self, path: &std::path::Path) -> Option<&str> {
        self.files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.rel.as_str())
    }

    /// A unified diff of the change, at most `max_lines` lines of at most
    /// [`DIFF_LINE_CHARS`] characters, ending with what was left out. A
    /// created file diffs against `/dev/null`, a deleted one to it.
    pub fn diff(&self, max_lines: usize) -> String {
        let mut shown: Vec<String> = Vec::new();
        let (mut hidden_lines, mut hidden_files) = (0, 0);
        for m in &self.moves {
            shown.push(format!("move {} → {}", m.from.display(), m.to.display()));
        }
        for f in &self.files {
            let from = f
                .old
                .as_ref()
                .map_or("/dev/null".into(), |_| format!("a/{}", f.rel));
            let to = f
                .new
                .as_ref()
                .map_or("/dev/null".into(), |_| format!("b/{}", f.rel));
            let (old, new) = (
                f.old.as_deref().unwrap_or(""),
                f.new.as_deref().unwrap_or(""),
            );
            let text = similar::TextDiff::from_lines(old, new)
                .unified_diff()
                .context_radius(2)
                .header(&from, &to)
                .to_string();
            let lines: Vec<&str> = text.lines().collect();
            let room = max_lines.saturating_sub(shown.len());
            if lines.len() > room {
                hidden_lines += lines.len() - room;
                hidden_files += 1;
            }
            shown.extend(lines.iter().take(room).map(|l| cap_diff_line(l)));
        }
        if hidden_lines > 0 {
            shown.push(format!(
                "… preview capped: {} in {} not shown (all of them are staged)",
                plural(hidden_lines, "diff line", "diff lines"),
                plural(hidden_files, "file", "files")
            ));
        }
        shown.join("\n")
    }
}

/// Characters shown of one diff line; the rest is counted.
pub const DIFF_LINE_CHARS: usize = 240;

fn cap_diff_line(line: &str) -> String {
    match line.char_indices().nth(DIFF_LINE_CHARS) {
        None => line.to_string(),
        Some((cut, _)) => format!(
            "{}… ({} more characters)",
            &line[..cut],
            thousands(line[cut..].chars().count())
        ),
    }
}

/// Where staged changes wait for `resolve`.
pub trait ChangeStore: Send + Sync {
    /// Keep `change` under a new id, which is returned.
    fn stage_change(&self, change: StagedChange) -> String;
    /// A change still staged under `id`.
    fn staged_change(&self, id: &str) -> Option<StagedChange>;
}

/// What the language servers would report after a staged change.
///
/// Contract: the change's new contents reach the servers as unsaved
/// documents only, never the disk; the wait is bounded; afterwards every
/// server's view of the files is what it was (the disk's). The answer is one
/// section of the preview ("after this change: …"), saying "not computed: …
/// not ready" when the bound ran out; `None` when no file of the change has
/// a server.
#[async_trait::async_trait]
pub trait PreviewHook: Send + Sync {
    async fn diagnostics_delta(&self, change: &StagedChange) -> Option<String>;
}

/// The connection of one run's change store and preview hook, made by the
/// facade and handed to every binding; each side fills in its half when it
/// registers and reads the other's at call time.
#[derive(Clone, Default)]
pub struct StagingLink {
    store: Arc<OnceLock<Arc<dyn ChangeStore>>>,
    hook: Arc<OnceLock<Arc<dyn PreviewHook>>>,
}

impl std::fmt::Debug for StagingLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagingLink")
            .field("store", &self.store.get().is_some())
            .field("hook", &self.hook.get().is_some())
            .finish()
    }
}

impl StagingLink {
    /// Set the run's change store; a second one is ignored (one run, one store).
    pub fn set_store(&self, store: Arc<dyn ChangeStore>) {
        let _ = self.store.set(store);
    }

    pub fn set_hook(&self, hook: Arc<dyn PreviewHook>) {
        let _ = self.hook.set(hook);
    }

    pub fn store(&self) -> Option<&Arc<dyn ChangeStore>> {
        self.store.get()
    }

    pub fn hook(&self) -> Option<&Arc<dyn PreviewHook>> {
        self.hook.get()
    }

    /// The preview's diagnostics section of `change`, when a hook is linked
    /// and has something to say.
    pub async fn diagnostics_delta(&self, change: &StagedChange) -> Option<String> {
        match self.hook.get() {
            Some(h) => h.diagnostics_delta(change).await,
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(rel: &str, old: Option<&str>, new: Option<&str>) -> StagedFile {
        StagedFile {
            path: PathBuf::from("/w").join(rel),
            rel: rel.into(),
            old: old.map(Into::into),
            new: new.map(Into::into),
            edits: 1,
        }
    }

    #[test]
    fn the_diff_shows_moves_creates_and_deletes() {
        let change = StagedChange {
            tool: "lsp_rename".into(),
            files: vec![
                file("a.ts", Some("export const a = 1;\n"), None),
                file("lib/a.ts", None, Some("export const a = 1;\n")),
                file(
                    "main.ts",
                    Some("import { a } from './a';\n"),
                    Some("import { a } from './lib/a';\n"),
                ),
            ],
            moves: vec![StagedMove {
                from: "a.ts".into(),
                to: "lib/a.ts".into(),
            }],
        };
        expect_test::expect![[r#"
            move a.ts → lib/a.ts
            --- a/a.ts
            +++ /dev/null
            @@ -1 +0,0 @@
            -export const a = 1;
            --- /dev/null
            +++ b/lib/a.ts
            @@ -0,0 +1 @@
            +export const a = 1;
            --- a/main.ts
            +++ b/main.ts
            @@ -1 +1 @@
            -import { a } from './a';
            +import { a } from './lib/a';"#]]
        .assert_eq(&change.diff(200));
        expect_test::expect![[r#"
            move a.ts → lib/a.ts
            --- a/a.ts
            +++ /dev/null
            … preview capped: 11 diff lines in 3 files not shown (all of them are staged)"#]]
        .assert_eq(&change.diff(3));
        assert_eq!(change.edits(), 3);
    }

    #[test]
    fn the_transaction_expects_what_was_staged() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(&d.path().canonicalize().unwrap()).unwrap();
        let a = root.path().join("a.txt");
        std::fs::write(&a, "one").unwrap();
        let change = StagedChange {
            tool: "t".into(),
            files: vec![
                StagedFile {
                    path: a.clone(),
                    rel: "a.txt".into(),
                    old: Some("one".into()),
                    new: None,
                    edits: 0,
                },
                StagedFile {
                    path: root.path().join("sub/b.txt"),
                    rel: "sub/b.txt".into(),
                    old: None,
                    new: Some("one".into()),
                    edits: 0,
                },
            ],
            moves: Vec::new(),
        };
        std::fs::write(&a, "two").unwrap();
        let tx = change.transaction(&root);
        assert_eq!(tx.drifted().unwrap(), vec![a.clone()]);
        std::fs::write(&a, "one").unwrap();
        tx.commit().unwrap();
        assert!(!a.exists());
        assert_eq!(
            std::fs::read_to_string(root.path().join("sub/b.txt")).unwrap(),
            "one"
        );
    }
}
