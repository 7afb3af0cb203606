//! How a run binds the parser resource: one [`EditStore`] shared by
//! `ast_grep`, `ast_edit` and `resolve`, opened (and its journal recovered)
//! when the tools register, and set as the run's change store in its
//! [`StagingLink`] so other tools' staged changes reach `resolve` too; and
//! the run's [`SearchIndex`], which every `ast_grep` of the run shares.

use crate::catalog::Lang;
use crate::index::{SearchIndex, DEFAULT_CACHE_MB};
use crate::journal::{Journal, Recovery};
use crate::store::EditStore;
use crate::tools::{AstEditTool, AstGrepTool, ResolveTool};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tool_core::{Binding, Registry, RegistryError, RunContext, StagingLink, Workspace};

/// The tree-sitter parser resource of one run.
#[derive(Debug, Default)]
pub struct AstGrepBinding {
    /// Where the apply journal lives; default [`Journal::for_root`].
    journal_dir: Option<PathBuf>,
    store: Mutex<Option<Arc<EditStore>>>,
    /// The run's staging link, when the host gave one.
    link: Mutex<Option<StagingLink>>,
    /// The search index's budget in MiB; default [`DEFAULT_CACHE_MB`].
    cache_mb: Option<usize>,
    index: Mutex<Option<Arc<SearchIndex>>>,
}

impl AstGrepBinding {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keep the apply journal in `dir` instead of the default place.
    pub fn with_journal_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.journal_dir = Some(dir.into());
        self
    }

    /// Keep the run's search index within `mb` MiB (`[astgrep] cache_mb`).
    pub fn with_cache_mb(mut self, mb: usize) -> Self {
        self.cache_mb = Some(mb);
        self
    }

    /// The run's search index, once registered.
    pub fn index(&self) -> Option<Arc<SearchIndex>> {
        self.index.lock().expect("index lock").clone()
    }

    fn journal(&self, run: &RunContext) -> Journal {
        match &self.journal_dir {
            Some(d) => Journal::at(d, &run.workspace),
            None => Journal::for_root(&run.workspace),
        }
    }

    /// The run's edit store, once registered.
    pub fn store(&self) -> Option<Arc<EditStore>> {
        self.store.lock().expect("store lock").clone()
    }
}

impl Binding for AstGrepBinding {
    fn resource(&self) -> &'static str {
        "tree-sitter parser"
    }

    fn link_staging(&self, link: &StagingLink) {
        *self.link.lock().expect("link lock") = Some(link.clone());
    }

    fn register(&self, run: &RunContext, registry: &Registry) -> Result<(), RegistryError> {
        let store = Arc::new(EditStore::open(self.journal(run)));
        *self.store.lock().expect("store lock") = Some(store.clone());
        let link = self
            .link
            .lock()
            .expect("link lock")
            .clone()
            .unwrap_or_default();
        link.set_store(store.clone());
        let ws = run.workspace.clone();
        let index = Arc::new(SearchIndex::with_budget_mb(
            self.cache_mb.unwrap_or(DEFAULT_CACHE_MB),
        ));
        *self.index.lock().expect("index lock") = Some(index.clone());
        registry.register(Arc::new(AstGrepTool::with_index(ws.clone(), index.clone())))?;
        registry.register(Arc::new(
            AstEditTool::new(ws, store.clone())
                .with_index(index)
                .with_link(link),
        ))?;
        registry.register(Arc::new(ResolveTool::new(store)))?;
        Ok(())
    }

    fn doctor(&self, run: &RunContext) -> Vec<String> {
        let journal = self.journal(run);
        let mut lines = vec![
            format!(
                "{} grammars shipped: {}",
                Lang::all().count(),
                Lang::id_list()
            ),
            format!("apply journal: {}", journal.dir().display()),
            format!(
                "search index: up to {} MiB of texts and trees per run ([astgrep] cache_mb)",
                self.cache_mb.unwrap_or(DEFAULT_CACHE_MB)
            ),
        ];
        let mut recovered: Vec<Recovery> = self
            .store()
            .map(|s| s.recovered().to_vec())
            .unwrap_or_default();
        recovered.extend(journal.recover());
        if recovered.is_empty() {
            lines.push("no interrupted edits".into());
        }
        lines.extend(recovered.iter().map(Recovery::describe));
        lines
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
