//! The run's edit store: staged rewrites under ids (`edit_1`, `edit_2`, …),
//! accepted all-or-nothing or discarded.
//!
//! Edits live in memory for the run; only the apply journal touches disk.
//! Invariants: an edit is written only if every one of its files still has
//! the fingerprint it had at staging; it is written through one
//! `FileTransaction` (all files or none); an id is used once — after accept,
//! discard or rejection it answers with what happened to it.

use crate::journal::{fingerprint, Journal, Recovery};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use tool_core::files::{FileTransaction, TransactionError};
use tool_core::ToolError;

/// One file of a staged edit.
#[derive(Debug, Clone)]
pub struct StagedFile {
    pub path: PathBuf,
    /// Relative to the workspace root.
    pub rel: String,
    /// SHA-256 of `old`, taken at staging.
    pub fingerprint: String,
    pub old: String,
    pub new: String,
    pub replacements: usize,
}

/// A staged edit, before it gets an id.
#[derive(Debug, Clone)]
pub struct NewEdit {
    pub pattern: String,
    pub rewrite: String,
    pub files: Vec<StagedFile>,
}

impl NewEdit {
    pub fn replacements(&self) -> usize {
        self.files.iter().map(|f| f.replacements).sum()
    }
}

impl StagedFile {
    pub fn new(path: PathBuf, rel: String, old: String, new: String, replacements: usize) -> Self {
        StagedFile {
            fingerprint: fingerprint(old.as_bytes()),
            path,
            rel,
            old,
            new,
            replacements,
        }
    }
}

#[derive(Debug)]
enum EditState {
    Staged(NewEdit),
    Accepted { files: usize },
    Discarded,
    Rejected { why: String },
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
    /// half done (see [`crate::journal`]).
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

    /// Stage an edit; returns its id.
    pub fn stage(&self, edit: NewEdit) -> String {
        let mut inner = self.inner.lock().expect("store lock");
        inner.next += 1;
        let id = format!("edit_{}", inner.next);
        inner.edits.insert(id.clone(), EditState::Staged(edit));
        id
    }

    /// A staged edit's files, for previews and tests.
    pub fn staged_files(&self, id: &str) -> Option<Vec<StagedFile>> {
        match self.inner.lock().expect("store lock").edits.get(id) {
            Some(EditState::Staged(e)) => Some(e.files.clone()),
            _ => None,
        }
    }

    fn take_staged(&self, inner: &mut Inner, id: &str) -> Result<NewEdit, ToolError> {
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
                        "nothing is staged in this run — call ast_edit first".to_string()
                    } else {
                        format!("staged in this run: {}", staged.join(", "))
                    }
                )))
            }
            Some(EditState::Accepted { files }) => Err(ToolError::refused(format!(
                "{id} was already accepted ({} written); there is nothing left to resolve — call ast_edit again for a new change",
                tool_core::format::plural(*files, "file", "files")
            ))),
            Some(EditState::Discarded) => Err(ToolError::refused(format!(
                "{id} was already discarded; nothing of it can be applied — call ast_edit again to stage it anew"
            ))),
            Some(EditState::Rejected { why }) => Err(ToolError::refused(format!(
                "{id} was rejected ({why}); call ast_edit again to stage it against the current files"
            ))),
            Some(EditState::Staged(_)) => match inner.edits.remove(id) {
                Some(EditState::Staged(e)) => Ok(e),
                _ => unreachable!("checked above"),
            },
        }
    }

    /// Drop a staged edit.
    pub fn discard(&self, id: &str) -> Result<Discarded, ToolError> {
        let mut inner = self.inner.lock().expect("store lock");
        let edit = self.take_staged(&mut inner, id)?;
        inner.edits.insert(id.to_string(), EditState::Discarded);
        Ok(Discarded {
            id: id.to_string(),
            files: edit.files.len(),
            replacements: edit.replacements(),
        })
    }

    /// Write a staged edit: all files or none.
    pub fn accept(&self, id: &str) -> Result<Accepted, ToolError> {
        let mut inner = self.inner.lock().expect("store lock");
        let edit = self.take_staged(&mut inner, id)?;

        // Compare every file with its fingerprint at staging.
        let drifted: Vec<String> = edit
            .files
            .iter()
            .filter(|f| {
                self.journal
                    .root()
                    .read(&f.path, f.old.len() as u64)
                    .map(|b| fingerprint(&b) != f.fingerprint)
                    .unwrap_or(true)
            })
            .map(|f| f.rel.clone())
            .collect();
        if !drifted.is_empty() {
            let why = format!(
                "{} changed since staging: {}",
                tool_core::format::plural(drifted.len(), "file", "files"),
                drifted.join(", ")
            );
            inner
                .edits
                .insert(id.to_string(), EditState::Rejected { why: why.clone() });
            return Err(ToolError::refused(format!(
                "{id} rejected: {why}; nothing was written. Call ast_edit again to stage the change against the current content"
            )));
        }

        let mut tx = FileTransaction::new(self.journal.root());
        for f in &edit.files {
            tx.replace(
                f.path.clone(),
                f.old.clone().into_bytes(),
                f.new.clone().into_bytes(),
            );
        }
        let entries: Vec<(PathBuf, &str, &str)> = edit
            .files
            .iter()
            .map(|f| (f.path.clone(), f.old.as_str(), f.new.as_str()))
            .collect();
        let record = match self.journal.begin(id, &entries) {
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
                let replacements = edit.replacements();
                inner
                    .edits
                    .insert(id.to_string(), EditState::Accepted { files: files.len() });
                Ok(Accepted {
                    id: id.to_string(),
                    files,
                    replacements,
                })
            }
            Err(TransactionError::Drifted(paths)) => {
                let _ = self.journal.finish(record);
                let rels: Vec<String> = paths
                    .iter()
                    .map(|p| {
                        edit.files
                            .iter()
                            .find(|f| &f.path == p)
                            .map(|f| f.rel.clone())
                            .unwrap_or_else(|| p.display().to_string())
                    })
                    .collect();
                let why = format!("changed while applying: {}", rels.join(", "));
                inner
                    .edits
                    .insert(id.to_string(), EditState::Rejected { why: why.clone() });
                Err(ToolError::refused(format!(
                    "{id} rejected: {why}; nothing was written. Call ast_edit again"
                )))
            }
            Err(TransactionError::NotAFile { path, source }) => {
                // A target became a link, a directory or a special file.
                let _ = self.journal.finish(record);
                let shown = edit
                    .files
                    .iter()
                    .find(|f| f.path == path)
                    .map_or_else(|| path.display().to_string(), |f| f.rel.clone());
                let why =
                    format!("{shown} is no longer the regular file it was at staging ({source})");
                inner
                    .edits
                    .insert(id.to_string(), EditState::Rejected { why: why.clone() });
                Err(ToolError::refused(format!(
                    "{id} rejected: {why}; nothing was written. Call ast_edit again"
                )))
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
