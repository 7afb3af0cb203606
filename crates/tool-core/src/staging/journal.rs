//! The apply journal: what makes an accepted edit survive a crash in the
//! middle of writing its files.
//!
//! Before the first file of an accepted edit is written, one record holding
//! every file's old and new content (and their fingerprints) is written
//! atomically; it is removed once the transaction returns. A record found
//! later means a process died while applying. Recovery then puts the tree
//! back into one whole state: if every file already holds its new content the
//! edit stands (it was complete), otherwise every file holding new content is
//! restored to its old content — the caller never received "accepted", so
//! the old tree is the one it knows. A file holding neither (edited by
//! someone since) is left alone, reported, and the record kept beside it.
//!
//! Where: `<root>/.git/agent-tools/astgrep-journal/` when the root has a
//! `.git` directory (invisible to the user's tree and to searches), else
//! `$XDG_STATE_HOME/agent-tools/astgrep-journal/<hash of the root>/`
//! (`~/.local/state` when unset).

use crate::files::{FileChange, FileTransaction};
use crate::format::plural;
use crate::fs::{write_own_file, Root};
use crate::Workspace;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Records this process is applying right now: recovery leaves them alone.
static OPEN_RECORDS: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// A content fingerprint: SHA-256, hex.
pub fn fingerprint(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Files larger than this are never restored from a record (the tools
/// stage none this large).
const MAX_RECORDED_FILE: u64 = 64 * 1024 * 1024;

/// The journal folder of one workspace root, and that root's handle (the
/// files it restores are written through it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    dir: PathBuf,
    root: Root,
}

#[derive(Debug, Serialize, Deserialize)]
struct Record {
    version: u32,
    pid: u32,
    edit_id: String,
    files: Vec<RecordFile>,
}

#[derive(Debug, Serialize, Deserialize)]
struct RecordFile {
    path: PathBuf,
    /// `None`: the file did not exist before (after) the apply.
    old: Option<String>,
    new: Option<String>,
    old_sha: Option<String>,
    new_sha: Option<String>,
}

impl RecordFile {
    fn new(path: &Path, old: Option<&[u8]>, new: Option<&[u8]>) -> RecordFile {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        RecordFile {
            path: path.to_path_buf(),
            old: old.map(text),
            new: new.map(text),
            old_sha: old.map(fingerprint),
            new_sha: new.map(fingerprint),
        }
    }
}

/// An open record: remove it with [`Journal::finish`] when the apply returns.
#[derive(Debug)]
pub struct OpenRecord {
    path: PathBuf,
}

/// What recovery did with one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// Every file already held its new content: the edit stands.
    Completed { edit_id: String, files: usize },
    /// Files holding new content were put back to their old content.
    RolledBack {
        edit_id: String,
        restored: Vec<PathBuf>,
    },
    /// Some files hold neither version; those were left alone.
    Conflict {
        edit_id: String,
        restored: Vec<PathBuf>,
        untouched: Vec<PathBuf>,
        record: PathBuf,
    },
    /// The record could not be read or acted on.
    Failed { record: PathBuf, why: String },
}

impl Recovery {
    /// One line for doctor and logs.
    pub fn describe(&self) -> String {
        let list = |v: &[PathBuf]| {
            v.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Recovery::Completed { edit_id, files } => format!(
                "interrupted apply of {edit_id} had written all {files} files; it stands"
            ),
            Recovery::RolledBack { edit_id, restored } => format!(
                "interrupted apply of {edit_id} rolled back: restored {} ({})",
                plural(restored.len(), "file", "files"),
                list(restored)
            ),
            Recovery::Conflict {
                edit_id,
                restored,
                untouched,
                record,
            } => format!(
                "interrupted apply of {edit_id}: restored {}; {} changed by someone since and left alone ({}); old and new contents kept in {}",
                plural(restored.len(), "file", "files"),
                plural(untouched.len(), "file", "files"),
                list(untouched),
                record.display()
            ),
            Recovery::Failed { record, why } => {
                format!("journal record {} could not be recovered: {why}", record.display())
            }
        }
    }
}

impl Journal {
    /// The journal of a workspace root (see the module docs for where).
    pub fn for_root(ws: &Workspace) -> Journal {
        let root = ws.root();
        let git = root.join(".git");
        if git.is_dir() {
            return Journal::at(git.join("agent-tools").join("astgrep-journal"), ws);
        }
        let state = std::env::var_os("XDG_STATE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
            .unwrap_or_else(|| std::env::temp_dir().join("agent-tools-state"));
        let key = &fingerprint(root.as_os_str().as_encoded_bytes())[..16];
        Journal::at(
            state.join("agent-tools").join("astgrep-journal").join(key),
            ws,
        )
    }

    /// A journal kept in `dir` for the files of `ws`.
    pub fn at(dir: impl Into<PathBuf>, ws: &Workspace) -> Journal {
        Journal {
            dir: dir.into(),
            root: ws.dir().clone(),
        }
    }

    /// The workspace root's handle the journal's files are reached through.
    pub fn root(&self) -> &Root {
        &self.root
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Record an apply about to start. `files`: (path, old, new).
    pub fn begin(&self, edit_id: &str, files: &[(PathBuf, &str, &str)]) -> io::Result<OpenRecord> {
        let files: Vec<(PathBuf, Option<&str>, Option<&str>)> = files
            .iter()
            .map(|(p, old, new)| (p.clone(), Some(*old), Some(*new)))
            .collect();
        self.begin_change(edit_id, &files)
    }

    /// Record an apply about to start that may create (`old` is `None`) or
    /// delete (`new` is `None`) files.
    pub fn begin_change(
        &self,
        edit_id: &str,
        files: &[(PathBuf, Option<&str>, Option<&str>)],
    ) -> io::Result<OpenRecord> {
        let files = files
            .iter()
            .map(|(p, old, new)| RecordFile::new(p, old.map(str::as_bytes), new.map(str::as_bytes)))
            .collect();
        self.write_record(edit_id, files)
    }

    /// Record the apply of `tx` about to start, with every file's texts as
    /// the transaction holds them (each a text: staged whole, or read and
    /// matched with a text's fingerprint).
    pub fn begin_transaction(&self, edit_id: &str, tx: &FileTransaction) -> io::Result<OpenRecord> {
        let files = tx
            .changes()
            .iter()
            .map(|c| RecordFile::new(&c.path, c.expected.as_deref(), c.new.as_deref()))
            .collect();
        self.write_record(edit_id, files)
    }

    fn write_record(&self, edit_id: &str, files: Vec<RecordFile>) -> io::Result<OpenRecord> {
        let record = Record {
            version: 1,
            pid: std::process::id(),
            edit_id: edit_id.to_string(),
            files,
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = self
            .dir
            .join(format!("{edit_id}-{}-{nanos}.json", std::process::id()));
        let bytes = serde_json::to_vec(&record).map_err(io::Error::other)?;
        write_own_file(&path, &bytes)?;
        OPEN_RECORDS
            .lock()
            .expect("open records")
            .insert(path.clone());
        Ok(OpenRecord { path })
    }

    /// The apply returned (written, or failed and restored): drop the record.
    pub fn finish(&self, record: OpenRecord) -> io::Result<()> {
        OPEN_RECORDS
            .lock()
            .expect("open records")
            .remove(&record.path);
        match std::fs::remove_file(&record.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Forget an open record without removing it, as a crash would: for
    /// tests of recovery inside one process.
    #[doc(hidden)]
    pub fn abandon(&self, record: OpenRecord) {
        OPEN_RECORDS
            .lock()
            .expect("open records")
            .remove(&record.path);
    }

    /// Records left by processes that died while applying.
    pub fn pending(&self) -> Vec<PathBuf> {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = dir
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.ends_with(".json") && !name.ends_with(".conflict.json")
            })
            .collect();
        out.sort();
        out
    }

    /// Recover every record whose process is gone. Records of a live
    /// process (another run applying right now) are left to it.
    pub fn recover(&self) -> Vec<Recovery> {
        let mut out = Vec::new();
        for path in self.pending() {
            let record: Record = match std::fs::read(&path)
                .map_err(|e| e.to_string())
                .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
            {
                Ok(r) => r,
                Err(why) => {
                    out.push(Recovery::Failed { record: path, why });
                    continue;
                }
            };
            let live = if record.pid == std::process::id() {
                OPEN_RECORDS.lock().expect("open records").contains(&path)
            } else {
                crate::process::pid_alive(record.pid)
            };
            if live {
                continue;
            }
            out.push(self.recover_one(&path, record));
        }
        out
    }

    fn recover_one(&self, path: &Path, record: Record) -> Recovery {
        enum State {
            Old,
            New,
            Other,
        }
        let mut states = Vec::new();
        for f in &record.files {
            let current = self
                .root
                .read_if_exists(&f.path, MAX_RECORDED_FILE)
                .ok()
                .flatten();
            let sha = current.as_deref().map(fingerprint);
            let state = if sha == f.new_sha {
                State::New
            } else if sha == f.old_sha {
                State::Old
            } else {
                State::Other
            };
            states.push(state);
        }
        if states.iter().all(|s| matches!(s, State::New)) {
            return match std::fs::remove_file(path) {
                Ok(()) => Recovery::Completed {
                    edit_id: record.edit_id,
                    files: record.files.len(),
                },
                Err(e) => Recovery::Failed {
                    record: path.to_path_buf(),
                    why: e.to_string(),
                },
            };
        }
        let mut tx = FileTransaction::new(&self.root);
        let mut restored = Vec::new();
        let mut untouched = Vec::new();
        for (f, s) in record.files.iter().zip(&states) {
            match s {
                State::New => {
                    tx.push(FileChange {
                        path: f.path.clone(),
                        expected: f.new.clone().map(String::into_bytes),
                        new: f.old.clone().map(String::into_bytes),
                    });
                    restored.push(f.path.clone());
                }
                State::Old => {}
                State::Other => untouched.push(f.path.clone()),
            }
        }
        if let Err(e) = tx.commit() {
            return Recovery::Failed {
                record: path.to_path_buf(),
                why: format!("restoring old contents failed: {e}"),
            };
        }
        if untouched.is_empty() {
            if let Err(e) = std::fs::remove_file(path) {
                return Recovery::Failed {
                    record: path.to_path_buf(),
                    why: e.to_string(),
                };
            }
            Recovery::RolledBack {
                edit_id: record.edit_id,
                restored,
            }
        } else {
            let kept = path.with_extension("conflict.json");
            let record_path = match std::fs::rename(path, &kept) {
                Ok(()) => kept,
                Err(_) => path.to_path_buf(),
            };
            Recovery::Conflict {
                edit_id: record.edit_id,
                restored,
                untouched,
                record: record_path,
            }
        }
    }
}

/// Recover interrupted applies under a workspace root (for `agent-tools
/// doctor` and hosts without a binding): one line per record acted on.
pub fn recover_interrupted(root: &Path) -> Vec<String> {
    let ws = match Workspace::new(root) {
        Ok(ws) => ws,
        Err(e) => return vec![format!("cannot open {}: {e}", root.display())],
    };
    Journal::for_root(&ws)
        .recover()
        .iter()
        .map(Recovery::describe)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Journal, Vec<PathBuf>) {
        let d = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = (0..3).map(|i| d.path().join(format!("f{i}.py"))).collect();
        for f in &files {
            std::fs::write(f, "old\n").unwrap();
        }
        let j = Journal::at(d.path().join("journal"), &Workspace::new(d.path()).unwrap());
        (d, j, files)
    }

    fn begin(j: &Journal, files: &[PathBuf]) -> OpenRecord {
        let entries: Vec<(PathBuf, &str, &str)> = files
            .iter()
            .map(|f| (f.clone(), "old\n", "new\n"))
            .collect();
        j.begin("edit_1", &entries).unwrap()
    }

    #[test]
    fn a_half_applied_edit_is_rolled_back() {
        let (_d, j, files) = setup();
        let open = begin(&j, &files);
        std::fs::write(&files[0], "new\n").unwrap();
        assert!(j.recover().is_empty(), "an apply in flight is left alone");
        j.abandon(open);
        let r = j.recover();
        assert!(
            matches!(&r[..], [Recovery::RolledBack { restored, .. }] if restored.len() == 1),
            "{r:?}"
        );
        for f in &files {
            assert_eq!(std::fs::read_to_string(f).unwrap(), "old\n");
        }
        assert!(j.pending().is_empty());
        assert!(j.recover().is_empty());
    }

    #[test]
    fn a_fully_written_edit_stands_and_a_foreign_change_is_kept() {
        let (_d, j, files) = setup();
        let open = begin(&j, &files);
        for f in &files {
            std::fs::write(f, "new\n").unwrap();
        }
        j.abandon(open);
        let r = j.recover();
        assert!(
            matches!(&r[..], [Recovery::Completed { files: 3, .. }]),
            "{r:?}"
        );

        for f in &files {
            std::fs::write(f, "old\n").unwrap();
        }
        j.abandon(begin(&j, &files));
        std::fs::write(&files[0], "new\n").unwrap();
        std::fs::write(&files[1], "someone else\n").unwrap();
        let r = j.recover();
        let Recovery::Conflict {
            untouched, record, ..
        } = &r[0]
        else {
            panic!("{r:?}")
        };
        assert_eq!(untouched, &vec![files[1].clone()]);
        assert!(record.exists());
        assert_eq!(std::fs::read_to_string(&files[0]).unwrap(), "old\n");
        assert_eq!(
            std::fs::read_to_string(&files[1]).unwrap(),
            "someone else\n"
        );
        assert!(
            r[0].describe().contains("left alone"),
            "{}",
            r[0].describe()
        );
    }

    #[test]
    fn location_prefers_the_git_dir() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join(".git")).unwrap();
        assert_eq!(
            Journal::for_root(&Workspace::new(d.path()).unwrap()).dir(),
            d.path().join(".git/agent-tools/astgrep-journal")
        );
        let plain = tempfile::tempdir().unwrap();
        let j = Journal::for_root(&Workspace::new(plain.path()).unwrap());
        assert!(!j.dir().starts_with(plain.path()), "{:?}", j.dir());
        assert!(j
            .dir()
            .to_string_lossy()
            .contains("agent-tools/astgrep-journal"));
    }
}
