//! The run's edit store: staged changes under ids (`edit_1`, `edit_2`, …),
//! accepted all-or-nothing or discarded. It keeps any [`StagedChange`] — an
//! ast_edit rewrite, a staged rename, file move or code action — and the
//! run's [`StagingLink`](super::StagingLink) hands it to every binding.
//!
//! Edits live in memory for the run; only the apply journal touches disk.
//! An ast_edit keeps each file's replacements and the fingerprint of the
//! text they apply to, not its texts, which are read again at accept.
//! Invariants: an edit is written only if every one of its files still
//! holds what it held at staging (and a file it creates is still absent);
//! it is written through one `FileTransaction` (all files or none); an id is
//! used once — after accept, discard or rejection it answers with what
//! happened to it.

use super::change::{StagedChange, StagedFile};
use super::journal::{Journal, Recovery};
use crate::files::TransactionError;
use crate::format::plural;
use crate::ToolError;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

#[derive(Debug)]
enum EditState {
    Staged(StagedChange),
    Accepted { files: usize, tool: String },
    Discarded { tool: String },
    Rejected { why: String, tool: String },
}

/// A fault to inject into the next accept, for tests of crash safety and of
/// the all-or-nothing write. Never set outside tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectedFault {
    /// Abort the process just before writing file `n` (0-based).
    AbortBeforeWrite(usize),
    /// Fail the write of file `n` as an I/O error would.
    FailWrite(usize),
}

/// What an accept wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub id: String,
    pub files: Vec<String>,
    pub replacements: usize,
}

/// What a discard dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discarded {
    pub id: String,
    pub files: usize,
    pub replacements: usize,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    edits: BTreeMap<String, EditState>,
}

/// One run's staged edits.
#[derive(Debug)]
pub struct EditStore {
    journal: Journal,
    inner: Mutex<Inner>,
    recovered: Vec<Recovery>,
    fault: Mutex<Option<InjectedFault>>,
}

impl EditStore {
    /// Open the store, first recovering any apply a crashed process left
    /// half done (see [`super::journal`]).
    pub fn open(journal: Journal) -> EditStore {
        let recovered = journal.recover();
        for r in &recovered {
            tracing::warn!(journal = %journal.dir().display(), "{}", r.describe());
        }
        EditStore {
            journal,
            inner: Mutex::default(),
            recovered,
            fault: Mutex::new(None),
        }
    }

    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// What recovery did when this store opened.
    pub fn recovered(&self) -> &[Recovery] {
        &self.recovered
    }

    #[doc(hidden)]
    pub fn inject_fault(&self, fault: Option<InjectedFault>) {
        *self.fault.lock().expect("fault lock") = fault;
    }

    /// Keep `change` under a new id, which is returned.
    pub fn stage_change(&self, change: StagedChange) -> String {
        let mut inner = self.inner.lock().expect("store lock");
        inner.next += 1;
        let id = format!("edit_{}", inner.next);
        inner.edits.insert(id.clone(), EditState::Staged(change));
        id
    }

    /// A change still staged under `id`.
    pub fn staged_change(&self, id: &str) -> Option<StagedChange> {
        match self.inner.lock().expect("store lock").edits.get(id) {
            Some(EditState::Staged(c)) => Some(c.clone()),
            _ => None,
        }
    }

    /// A staged edit's files, for previews and tests.
    pub fn staged_files(&self, id: &str) -> Option<Vec<StagedFile>> {
        self.staged_change(id).map(|c| c.files)
    }

    fn take_staged(&self, inner: &mut Inner, id: &str) -> Result<StagedChange, ToolError> {
        match inner.edits.get(id) {
            None => {
                let staged: Vec<&str> = inner
                    .edits
                    .iter()
                    .filter(|(_, s)| matches!(s, EditState::Staged(_)))
                    .map(|(k, _)| k.as_str())
                    .collect();
                Err(ToolError::bad_args(format!(
                    "unknown edit_id `{id}`; {}",
                    if staged.is_empty() {
                        "nothing is staged in this run — call ast_edit (or lsp_rename with `stage: true`) first".to_string()
                    } else {
                        format!("staged in this run: {}", staged.join(", "))
                    }
                )))
            }
            Some(EditState::Accepted { files, tool }) => Err(ToolError::refused(format!(
                "{id} was already accepted ({} written); there is nothing left to resolve — call {tool} again for a new change",
                plural(*files, "file", "files")
            ))),
            Some(EditState::Discarded { tool }) => Err(ToolError::refused(format!(
                "{id} was already discarded; nothing of it can be applied — call {tool} again to stage it anew"
            ))),
            Some(EditState::Rejected { why, tool }) => Err(ToolError::refused(format!(
                "{id} was rejected ({why}); call {tool} again to stage it against the current files"
            ))),
            Some(EditState::Staged(_)) => match inner.edits.remove(id) {
                Some(EditState::Staged(e)) => Ok(e),
                _ => unreachable!("checked above"),
            },
        }
    }

    /// Drop a staged edit that its own staging call refused (`why`): its
    /// id answers so from then on.
    pub fn withdraw(&self, id: &str, why: &str) -> Result<(), ToolError> {
        let mut inner = self.inner.lock().expect("store lock");
        let edit = self.take_staged(&mut inner, id)?;
        inner.edits.insert(
            id.to_string(),
            EditState::Rejected {
                why: why.to_string(),
                tool: edit.tool.clone(),
            },
        );
        Ok(())
    }

    /// Drop a staged edit.
    pub fn discard(&self, id: &str) -> Result<Discarded, ToolError> {
        let mut inner = self.inner.lock().expect("store lock");
        let edit = self.take_staged(&mut inner, id)?;
        inner.edits.insert(
            id.to_string(),
            EditState::Discarded {
                tool: edit.tool.clone(),
            },
        );
        Ok(Discarded {
            id: id.to_string(),
            files: edit.files.len(),
            replacements: edit.edits(),
        })
    }

    /// Write a staged edit: all files or none.
    pub fn accept(&self, id: &str) -> Result<Accepted, ToolError> {
        let mut inner = self.inner.lock().expect("store lock");
        let edit = self.take_staged(&mut inner, id)?;
        let tool = edit.tool.clone();
        let rel = |p: &PathBuf| {
            edit.rel_of(p)
                .map_or_else(|| p.display().to_string(), str::to_string)
        };
        let rejected = |inner: &mut Inner, why: String| {
            inner.edits.insert(
                id.to_string(),
                EditState::Rejected {
                    why: why.clone(),
                    tool: tool.clone(),
                },
            );
            ToolError::refused(format!(
                "{id} rejected: {why}; nothing was written. Call {tool} again to stage the change against the current content"
            ))
        };

        // Compare every file with its content at staging (a file staged as
        // replacements is read now, and checked against its fingerprint). A
        // file that is no longer a regular file (a link now) counts as
        // changed, as it would to any reader.
        let checked = edit.transaction(self.journal.root()).and_then(|tx| {
            let drifted = tx.drifted()?;
            Ok((tx, drifted))
        });
        let changed = |d: Vec<PathBuf>| {
            format!(
                "{} changed since staging: {}",
                plural(d.len(), "file", "files"),
                d.iter().map(rel).collect::<Vec<_>>().join(", ")
            )
        };
        let tx = match checked {
            Ok((tx, d)) if d.is_empty() => tx,
            Ok((_, d)) | Err(TransactionError::Drifted(d)) => {
                return Err(rejected(&mut inner, changed(d)))
            }
            Err(TransactionError::NotAFile { path, .. }) => {
                return Err(rejected(&mut inner, changed(vec![path])))
            }
            Err(e) => return Err(rejected(&mut inner, e.to_string())),
        };

        let record = self.journal.begin_transaction(id, &tx);
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                inner.edits.insert(id.to_string(), EditState::Staged(edit));
                return Err(ToolError::failed(format!(
                    "cannot write the apply journal in {} ({e}); nothing was written and {id} is still staged — fix the cause and call resolve again",
                    self.journal.dir().display()
                )));
            }
        };
        let fault = *self.fault.lock().expect("fault lock");
        let result = tx.commit_with(|i, _| match fault {
            Some(InjectedFault::AbortBeforeWrite(n)) if n == i => std::process::abort(),
            Some(InjectedFault::FailWrite(n)) if n == i => {
                Err(std::io::Error::other("injected write failure"))
            }
            _ => Ok(()),
        });
        match result {
            Ok(()) => {
                let _ = self.journal.finish(record);
                let files: Vec<String> = edit.files.iter().map(|f| f.rel.clone()).collect();
                let replacements = edit.edits();
                inner.edits.insert(
                    id.to_string(),
                    EditState::Accepted {
                        files: files.len(),
                        tool: tool.clone(),
                    },
                );
                Ok(Accepted {
                    id: id.to_string(),
                    files,
                    replacements,
                })
            }
            Err(TransactionError::Drifted(paths)) => {
                let _ = self.journal.finish(record);
                let why = format!(
                    "changed while applying: {}",
                    paths.iter().map(rel).collect::<Vec<_>>().join(", ")
                );
                Err(rejected(&mut inner, why))
            }
            Err(TransactionError::NotAFile { path, source }) => {
                // A target became a link, a directory or a special file.
                let _ = self.journal.finish(record);
                let why = format!(
                    "{} is no longer the regular file it was at staging ({source})",
                    rel(&path)
                );
                Err(rejected(&mut inner, why))
            }
            Err(e @ TransactionError::WriteFailed { .. }) => {
                let _ = self.journal.finish(record);
                inner.edits.insert(id.to_string(), EditState::Staged(edit));
                Err(ToolError::failed(format!(
                    "{id} not applied: {e}; {id} is still staged — fix the cause (permissions, disk space) and call resolve again, or discard it"
                )))
            }
            Err(e @ TransactionError::RestoreFailed { .. }) => {
                // The record stays: the next start (or doctor) finishes the
                // restore.
                self.journal.abandon(record);
                inner.edits.insert(
                    id.to_string(),
                    EditState::Rejected {
                        why: "its apply failed half way".into(),
                        tool,
                    },
                );
                Err(ToolError::failed(format!(
                    "{id} failed half way: {e}. The journal in {} holds every file's old content; run `agent-tools doctor` to restore them",
                    self.journal.dir().display()
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::staging::StagedContent;
    use crate::Workspace;

    /// A move staged as another tool would: `a.ts` deleted, `lib/a.ts`
    /// created, `main.ts` edited.
    fn setup() -> (tempfile::TempDir, EditStore, StagedChange) {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::write(root.join("a.ts"), "export const a = 1;\n").unwrap();
        std::fs::write(root.join("main.ts"), "import { a } from './a';\n").unwrap();
        let ws = Workspace::new(&root).unwrap();
        let store = EditStore::open(Journal::at(root.join(".journal"), &ws));
        let change =
            crate::staging::change::a_staged_move(&root, |old, new| usize::from(old && new));
        (d, store, change)
    }

    fn read(d: &tempfile::TempDir, rel: &str) -> Option<String> {
        std::fs::read_to_string(d.path().join(rel)).ok()
    }

    #[test]
    fn a_staged_move_is_accepted_whole() {
        let (d, store, change) = setup();
        let id = store.stage_change(change.clone());
        assert_eq!(store.staged_change(&id), Some(change));
        let done = store.accept(&id).unwrap();
        assert_eq!(done.files, ["a.ts", "lib/a.ts", "main.ts"]);
        assert_eq!(read(&d, "a.ts"), None);
        assert_eq!(read(&d, "lib/a.ts").unwrap(), "export const a = 1;\n");
        assert_eq!(
            read(&d, "main.ts").unwrap(),
            "import { a } from './lib/a';\n"
        );
        let again = store.accept(&id).unwrap_err();
        expect_test::expect!["refused: edit_1 was already accepted (3 files written); there is nothing left to resolve — call lsp_rename again for a new change"]
            .assert_eq(&again.to_string());
    }

    #[test]
    fn a_staged_move_after_drift_is_refused_naming_its_tool() {
        let (d, store, change) = setup();
        let id = store.stage_change(change);
        // Someone creates the move's target meanwhile.
        std::fs::create_dir(d.path().join("lib")).unwrap();
        std::fs::write(d.path().join("lib/a.ts"), "// mine\n").unwrap();
        let err = store.accept(&id).unwrap_err();
        expect_test::expect!["refused: edit_1 rejected: 1 file changed since staging: lib/a.ts; nothing was written. Call lsp_rename again to stage the change against the current content"]
            .assert_eq(&err.to_string());
        assert_eq!(read(&d, "a.ts").unwrap(), "export const a = 1;\n");
        assert_eq!(read(&d, "main.ts").unwrap(), "import { a } from './a';\n");
        assert_eq!(read(&d, "lib/a.ts").unwrap(), "// mine\n");
    }

    /// Fault injection: the move's second part (creating the target) fails;
    /// the deleted source is put back and nothing else is written.
    #[test]
    fn a_move_whose_second_part_fails_is_rolled_back_completely() {
        let (d, store, change) = setup();
        let id = store.stage_change(change);
        store.inject_fault(Some(InjectedFault::FailWrite(1)));
        let err = store.accept(&id).unwrap_err();
        let root = d.path().canonicalize().unwrap();
        expect_test::expect!["failed: edit_1 not applied: writing <root>/lib/a.ts failed (injected write failure); every file already written was restored, nothing changed; edit_1 is still staged — fix the cause (permissions, disk space) and call resolve again, or discard it"]
            .assert_eq(&err.to_string().replace(root.to_str().unwrap(), "<root>"));
        assert_eq!(read(&d, "a.ts").unwrap(), "export const a = 1;\n");
        assert_eq!(read(&d, "lib/a.ts"), None);
        assert_eq!(read(&d, "main.ts").unwrap(), "import { a } from './a';\n");
        assert!(store.journal().pending().is_empty());
        store.inject_fault(None);
        store.accept(&id).unwrap();
        assert_eq!(read(&d, "a.ts"), None);
    }

    /// A crash half way through a move: recovery deletes the created file
    /// and puts back the deleted one.
    #[test]
    fn recovery_undoes_a_half_applied_move() {
        let (d, store, change) = setup();
        let entries: Vec<(PathBuf, Option<&str>, Option<&str>)> = change
            .files
            .iter()
            .map(|f| match &f.content {
                StagedContent::Texts { old, new } => {
                    (f.path.clone(), old.as_deref(), new.as_deref())
                }
                StagedContent::Replaced { .. } => unreachable!("a move is staged whole"),
            })
            .collect();
        let record = store.journal().begin_change("edit_9", &entries).unwrap();
        std::fs::remove_file(d.path().join("a.ts")).unwrap();
        std::fs::create_dir(d.path().join("lib")).unwrap();
        std::fs::write(d.path().join("lib/a.ts"), "export const a = 1;\n").unwrap();
        store.journal().abandon(record);
        let r = store.journal().recover();
        assert!(
            matches!(&r[..], [Recovery::RolledBack { restored, .. }] if restored.len() == 2),
            "{r:?}"
        );
        assert_eq!(read(&d, "a.ts").unwrap(), "export const a = 1;\n");
        assert_eq!(read(&d, "lib/a.ts"), None);
        assert_eq!(read(&d, "main.ts").unwrap(), "import { a } from './a';\n");
    }
}
