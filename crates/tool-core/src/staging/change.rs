//! A [`StagedChange`]: what a staging tool proposes, file by file, and the
//! [`FileTransaction`] that writes it once accepted — every file expected
//! to hold what it held at staging.

use super::diff::DiffContext;
use crate::files::{FileChange, FileTransaction, TransactionError};
use crate::fs::{FsError, Root};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// A text known by its length and SHA-256, without holding it: what a file
/// staged as replacements keeps of the text they apply to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    pub len: u64,
    pub sha256: [u8; 32],
}

impl Fingerprint {
    pub fn of(bytes: &[u8]) -> Fingerprint {
        Fingerprint {
            len: bytes.len() as u64,
            sha256: Sha256::digest(bytes).into(),
        }
    }

    /// Whether `bytes` is the text this was taken of.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        bytes.len() as u64 == self.len && Sha256::digest(bytes)[..] == self.sha256
    }

    /// The text this was taken of, read from `path` beneath `root`;
    /// `Ok(None)` when the file no longer holds it (absent, longer, other
    /// bytes), an error when it cannot be read as a regular file.
    pub fn read_text(&self, root: &Root, path: &Path) -> Result<Option<String>, FsError> {
        match root.read_if_exists(path, self.len) {
            Ok(Some(bytes)) if self.matches(&bytes) => Ok(String::from_utf8(bytes).ok()),
            Ok(_) | Err(FsError::TooLarge { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl std::fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hex: String = self.sha256[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        write!(f, "Fingerprint({} bytes, sha256 {hex}…)", self.len)
    }
}

/// Bytes `start..end` of a file's text, to be replaced by `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// `old` with `replacements` (in order, none overlapping another) made.
pub fn apply_replacements(old: &str, replacements: &[Replacement]) -> String {
    let grows: usize = replacements.iter().map(|r| r.text.len()).sum();
    let mut out = String::with_capacity(old.len() + grows);
    let mut cursor = 0;
    for r in replacements {
        out.push_str(&old[cursor..r.start]);
        out.push_str(&r.text);
        cursor = r.end;
    }
    out.push_str(&old[cursor..]);
    out
}

/// What a staged file keeps of its content before and after the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StagedContent {
    /// Both texts whole; `None`: the file is absent (the change creates or
    /// deletes it). What a rename, a move or a code action stages.
    Texts {
        old: Option<String>,
        new: Option<String>,
    },
    /// Replacements in the text the file held at staging, which is kept
    /// only as its fingerprint: both texts are read from disk when shown or
    /// written, and a file that no longer matches the fingerprint has
    /// changed since staging. What ast_edit stages.
    Replaced {
        original: Fingerprint,
        replacements: Vec<Replacement>,
        /// Lines of the file's diff below its header (see
        /// [`diff_body_lines`](super::diff_body_lines)), counted while the
        /// texts were in hand with the change's [`DiffContext`], so a
        /// preview that has no room for the file counts it without reading
        /// it.
        diff_lines: usize,
    },
}

/// One file of a staged change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagedFile {
    pub path: PathBuf,
    /// Relative to the workspace root, as the model reads it.
    pub rel: String,
    pub content: StagedContent,
    /// Replacements or text edits in it (0 for a file only moved).
    pub edits: usize,
}

/// A staged file's texts, in hand (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileTexts<'a> {
    pub old: Option<Cow<'a, str>>,
    pub new: Option<Cow<'a, str>>,
}

impl StagedFile {
    /// A file staged with both its texts whole (`None`: absent).
    pub fn whole(
        path: PathBuf,
        rel: String,
        old: Option<String>,
        new: Option<String>,
        edits: usize,
    ) -> StagedFile {
        StagedFile {
            path,
            rel,
            content: StagedContent::Texts { old, new },
            edits,
        }
    }

    /// A file staged as `replacements` in the text `original` was taken of.
    pub fn replaced(
        path: PathBuf,
        rel: String,
        original: Fingerprint,
        replacements: Vec<Replacement>,
        diff_lines: usize,
    ) -> StagedFile {
        StagedFile {
            path,
            rel,
            edits: replacements.len(),
            content: StagedContent::Replaced {
                original,
                replacements,
                diff_lines,
            },
        }
    }

    /// Whether the file exists before the change.
    pub fn existed(&self) -> bool {
        match &self.content {
            StagedContent::Texts { old, .. } => old.is_some(),
            StagedContent::Replaced { .. } => true,
        }
    }

    /// Whether the file exists after the change.
    pub fn remains(&self) -> bool {
        match &self.content {
            StagedContent::Texts { new, .. } => new.is_some(),
            StagedContent::Replaced { .. } => true,
        }
    }

    /// Its texts before and after the change: as staged, or read beneath
    /// `root` and checked against the fingerprint. A file that no longer
    /// holds what it held at staging is `Drifted`; one that is no longer a
    /// regular file (or cannot be read) is `NotAFile`, as a transaction
    /// would find it.
    pub fn texts(&self, root: &Root) -> Result<FileTexts<'_>, TransactionError> {
        let (original, replacements) = match &self.content {
            StagedContent::Texts { old, new } => {
                return Ok(FileTexts {
                    old: old.as_deref().map(Cow::Borrowed),
                    new: new.as_deref().map(Cow::Borrowed),
                })
            }
            StagedContent::Replaced {
                original,
                replacements,
                ..
            } => (original, replacements),
        };
        let old = original
            .read_text(root, &self.path)
            .map_err(|source| TransactionError::NotAFile {
                path: self.path.clone(),
                source,
            })?
            .ok_or_else(|| TransactionError::Drifted(vec![self.path.clone()]))?;
        let new = apply_replacements(&old, replacements);
        Ok(FileTexts {
            old: Some(Cow::Owned(old)),
            new: Some(Cow::Owned(new)),
        })
    }
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
    /// The lines of context its diff shows, as chosen when it was staged
    /// (the `diff_lines` of files staged as replacements were counted with
    /// it): every later showing uses the same.
    pub diff_context: DiffContext,
}

impl StagedChange {
    pub fn new(tool: impl Into<String>) -> Self {
        StagedChange {
            tool: tool.into(),
            files: Vec::new(),
            moves: Vec::new(),
            diff_context: DiffContext::default(),
        }
    }

    /// The change shown with `context` lines around each change.
    pub fn with_diff_context(mut self, context: DiffContext) -> Self {
        self.diff_context = context;
        self
    }

    /// Replacements or text edits over every file.
    pub fn edits(&self) -> usize {
        self.files.iter().map(|f| f.edits).sum()
    }

    /// The transaction that writes the change beneath `root`: every file
    /// expected to still hold what it held at staging. The texts of files
    /// staged as replacements are read now; when one of them no longer
    /// matches its fingerprint, `Drifted` names every file that changed.
    pub fn transaction(&self, root: &Root) -> Result<FileTransaction, TransactionError> {
        let mut tx = FileTransaction::new(root);
        let mut drifted = Vec::new();
        for f in &self.files {
            let texts = match f.texts(root) {
                Ok(t) => t,
                Err(TransactionError::Drifted(paths)) => {
                    drifted.extend(paths);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let bytes = |t: Option<Cow<'_, str>>| t.map(|t| t.into_owned().into_bytes());
            tx.push(FileChange {
                path: f.path.clone(),
                expected: bytes(texts.old),
                new: bytes(texts.new),
            });
        }
        if drifted.is_empty() {
            return Ok(tx);
        }
        // Named in the change's order, with the whole texts that drifted too.
        drifted.extend(tx.drifted()?);
        let at = |p: &PathBuf| self.files.iter().position(|f| &f.path == p);
        drifted.sort_by_key(at);
        Err(TransactionError::Drifted(drifted))
    }

    /// The relative name of `path`, when it is one of the change's files.
    pub fn rel_of(&self, path: &std::path::Path) -> Option<&str> {
        self.files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.rel.as_str())
    }
}

/// A move staged as lsp_rename stages one, for tests: `a.ts` deleted,
/// `lib/a.ts` created, `main.ts` edited, beneath `root`; each file counts
/// `edits(existed, remains)` edits.
#[cfg(test)]
pub(crate) fn a_staged_move(root: &Path, edits: fn(bool, bool) -> usize) -> StagedChange {
    let file = |rel: &str, old: Option<&str>, new: Option<&str>| {
        StagedFile::whole(
            root.join(rel),
            rel.into(),
            old.map(Into::into),
            new.map(Into::into),
            edits(old.is_some(), new.is_some()),
        )
    };
    StagedChange {
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
        diff_context: DiffContext::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::staging::diff::diff_body_lines;

    fn temp_root() -> (tempfile::TempDir, Root) {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(&d.path().canonicalize().unwrap()).unwrap();
        (d, root)
    }

    /// `rel` written beneath `root` with `old`, staged as `(start, end,
    /// text)` replacements in it, its diff counted with one line of context.
    fn replaced(root: &Root, rel: &str, old: &str, edits: &[(usize, usize, &str)]) -> StagedFile {
        replaced_with(root, rel, old, edits, DiffContext::default())
    }

    /// [`replaced`], its diff counted with `context`.
    fn replaced_with(
        root: &Root,
        rel: &str,
        old: &str,
        edits: &[(usize, usize, &str)],
        context: DiffContext,
    ) -> StagedFile {
        let path = root.path().join(rel);
        std::fs::write(&path, old).unwrap();
        let replacements: Vec<Replacement> = edits
            .iter()
            .map(|&(start, end, text)| Replacement {
                start,
                end,
                text: text.into(),
            })
            .collect();
        let new = apply_replacements(old, &replacements);
        StagedFile::replaced(
            path,
            rel.into(),
            Fingerprint::of(old.as_bytes()),
            replacements,
            diff_body_lines(old, &new, context),
        )
    }

    #[test]
    fn the_diff_shows_moves_creates_and_deletes() {
        let (_d, root) = temp_root();
        let change = a_staged_move(Path::new("/w"), |_, _| 1);
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
        .assert_eq(&change.diff(&root, 200).unwrap());
        expect_test::expect![[r#"
            move a.ts → lib/a.ts
            --- a/a.ts
            +++ /dev/null
            … preview capped: 11 diff lines in 3 files not shown (all of them are staged)"#]]
        .assert_eq(&change.diff(&root, 3).unwrap());
        assert_eq!(change.edits(), 3);
    }

    /// A file staged as replacements diffs as the same file staged whole,
    /// at every cap: the files the preview has no room for are counted from
    /// what was counted at staging, and never read.
    #[test]
    fn replacements_diff_as_their_whole_texts() {
        let (_d, root) = temp_root();
        let a_old = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n";
        let b_old = "x = f(1)\ny = f(2)\n";
        let a = replaced(&root, "a.py", a_old, &[(4, 7, "TWO"), (24, 27, "SIX")]);
        let b = replaced(&root, "b.py", b_old, &[(4, 8, "g(1)"), (13, 17, "g(2)")]);
        let whole = |f: &StagedFile| {
            let t = f.texts(&root).unwrap();
            StagedFile::whole(
                f.path.clone(),
                f.rel.clone(),
                t.old.map(Cow::into_owned),
                t.new.map(Cow::into_owned),
                f.edits,
            )
        };
        let mut staged = StagedChange::new("ast_edit");
        staged.files = vec![a, b];
        let mut texts = StagedChange::new("ast_edit");
        texts.files = staged.files.iter().map(whole).collect();
        expect_test::expect![[r#"
            --- a/a.py
            +++ b/a.py
            @@ -1,3 +1,3 @@
             one
            -two
            +TWO
             three
            @@ -5,3 +5,3 @@
             five
            -six
            +SIX
             seven
            --- a/b.py
            +++ b/b.py
            @@ -1,2 +1,2 @@
            -x = f(1)
            -y = f(2)
            +x = g(1)
            +y = g(2)"#]]
        .assert_eq(&staged.diff(&root, 200).unwrap());
        for max in 0..22 {
            assert_eq!(
                staged.diff(&root, max).unwrap(),
                texts.diff(&root, max).unwrap(),
                "at {max} lines"
            );
        }
        // So with every diff context, counted at staging with the one the
        // change keeps.
        for lines in [0, 3, 10] {
            let context = DiffContext::new(lines).unwrap();
            let mut staged = StagedChange::new("ast_edit").with_diff_context(context);
            staged.files = vec![
                replaced_with(
                    &root,
                    "a.py",
                    a_old,
                    &[(4, 7, "TWO"), (24, 27, "SIX")],
                    context,
                ),
                replaced_with(
                    &root,
                    "b.py",
                    b_old,
                    &[(4, 8, "g(1)"), (13, 17, "g(2)")],
                    context,
                ),
            ];
            let mut texts = StagedChange::new("ast_edit").with_diff_context(context);
            texts.files = staged.files.iter().map(whole).collect();
            for max in 0..30 {
                assert_eq!(
                    staged.diff(&root, max).unwrap(),
                    texts.diff(&root, max).unwrap(),
                    "at {max} lines, {lines} lines of context"
                );
            }
        }
        // b.py is not read when there is no room for it.
        std::fs::remove_file(root.path().join("b.py")).unwrap();
        assert!(staged.diff(&root, 12).unwrap().ends_with(
            "… preview capped: 7 diff lines in 1 file not shown (all of them are staged)"
        ));
        assert!(matches!(
            staged.diff(&root, 13),
            Err(TransactionError::Drifted(p)) if p == [root.path().join("b.py")]
        ));
    }

    /// A file staged as replacements keeps no text: it is read at accept
    /// and must still be the text its fingerprint was taken of, byte for
    /// byte in length and SHA-256, or the change is refused naming it.
    #[test]
    fn replacements_are_applied_only_to_the_text_they_were_staged_against() {
        let (_d, root) = temp_root();
        let a = replaced(&root, "a.py", "foo(1)\n", &[(0, 3, "bar")]);
        let b = replaced(&root, "b.py", "foo(2)\n", &[(0, 3, "bar")]);
        let c = replaced(&root, "c.py", "foo(3)\n", &[(0, 3, "bar")]);
        let StagedContent::Replaced { original, .. } = &a.content else {
            panic!("{a:?}")
        };
        assert_eq!(original.len, 7);
        let mut change = StagedChange::new("ast_edit");
        change.files = vec![a, b, c];
        // Same length, other bytes; and a file grown by a byte.
        std::fs::write(root.path().join("b.py"), "foo(9)\n").unwrap();
        std::fs::write(root.path().join("c.py"), "foo(3)\n\n").unwrap();
        assert!(matches!(
            change.transaction(&root),
            Err(TransactionError::Drifted(p))
                if p == [root.path().join("b.py"), root.path().join("c.py")]
        ));
        std::fs::remove_file(root.path().join("b.py")).unwrap();
        std::fs::write(root.path().join("c.py"), "foo(3)\n").unwrap();
        assert!(matches!(
            change.transaction(&root),
            Err(TransactionError::Drifted(p)) if p == [root.path().join("b.py")]
        ));
        std::fs::write(root.path().join("b.py"), "foo(2)\n").unwrap();
        change.transaction(&root).unwrap().commit().unwrap();
        for (rel, now) in [
            ("a.py", "bar(1)\n"),
            ("b.py", "bar(2)\n"),
            ("c.py", "bar(3)\n"),
        ] {
            assert_eq!(std::fs::read_to_string(root.path().join(rel)).unwrap(), now);
        }
    }

    #[test]
    fn the_transaction_expects_what_was_staged() {
        let (_d, root) = temp_root();
        let a = root.path().join("a.txt");
        std::fs::write(&a, "one").unwrap();
        let change = StagedChange {
            tool: "t".into(),
            files: vec![
                StagedFile::whole(a.clone(), "a.txt".into(), Some("one".into()), None, 0),
                StagedFile::whole(
                    root.path().join("sub/b.txt"),
                    "sub/b.txt".into(),
                    None,
                    Some("one".into()),
                    0,
                ),
            ],
            moves: Vec::new(),
            diff_context: DiffContext::default(),
        };
        std::fs::write(&a, "two").unwrap();
        let tx = change.transaction(&root).unwrap();
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
