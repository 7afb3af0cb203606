//! What the integration tests of ast_edit share: a temporary workspace
//! with given files, and an edit store whose journal lives beside it (not
//! inside the tree).

#![allow(dead_code)] // each test binary uses its own part

use std::path::PathBuf;
use tool_astgrep::ops;
use tool_core::staging::EditStore;
use tool_core::staging::Journal;
use tool_core::{CancellationToken, ToolError, ToolOutput, Workspace};

/// A temporary workspace and a store whose journal lives beside it.
pub(crate) struct Run {
    pub _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub ws: Workspace,
    pub store: EditStore,
    pub journal: PathBuf,
}

pub(crate) fn run_with<S: AsRef<str>>(files: &[(S, String)]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    for (rel, text) in files {
        let p = root.join(rel.as_ref());
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let journal = dir.path().join("journal");
    let ws = Workspace::new(&root).unwrap();
    let store = EditStore::open(Journal::at(&journal, &ws));
    Run {
        _dir: dir,
        root: ws.root().to_path_buf(),
        ws,
        store,
        journal,
    }
}

impl Run {
    pub(crate) fn stage(
        &self,
        pattern: &str,
        rewrite: &str,
        lang: Option<&str>,
    ) -> Result<ToolOutput, ToolError> {
        ops::stage(
            &self.ws,
            &self.store,
            pattern,
            rewrite,
            None,
            lang,
            &CancellationToken::new(),
        )
    }

    pub(crate) fn find(&self, pattern: &str, lang: Option<&str>) -> Result<ToolOutput, ToolError> {
        ops::find(
            &self.ws,
            pattern,
            None,
            lang,
            None,
            &CancellationToken::new(),
        )
    }
}

/// (path, line) of every match a result shows.
pub(crate) fn hits(out: &ToolOutput) -> Vec<(String, u64)> {
    out.structured.as_ref().unwrap()["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_string(),
                m["line"].as_u64().unwrap(),
            )
        })
        .collect()
}
