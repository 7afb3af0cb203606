//! How a run binds the parser resource: `ast_grep`, `ast_edit`, and
//! `resolve` over the run's edit store, which the run's [`StagingLink`]
//! holds (opened, and its journal recovered, by the first binding whose
//! tools stage; see [`tool_core::staging`]); and the run's [`SearchIndex`],
//! which every `ast_grep` of the run shares.

use crate::catalog::Lang;
use crate::index::{SearchIndex, DEFAULT_CACHE_MB};
use crate::tools::{AstEditTool, AstGrepTool};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tool_core::staging::{EditStore, Recovery};
use tool_core::{Binding, Registry, RegistryError, RunContext, StagingLink};

/// The tree-sitter parser resource of one run.
#[derive(Debug, Default)]
pub struct AstGrepBinding {
    /// Where the apply journal lives; default
    /// [`Journal::for_root`](tool_core::staging::Journal::for_root).
    journal_dir: Option<PathBuf>,
    /// The run's staging link (a private one when the host gave none).
    link: Mutex<Option<StagingLink>>,
    /// The search index's budget in MiB; default [`DEFAULT_CACHE_MB`].
    cache_mb: Option<usize>,
    index: Mutex<Option<Arc<SearchIndex>>>,
}

impl AstGrepBinding {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keep the apply journal in `dir` instead of the default place (it is
    /// the run's: every staged change's accept is journalled there).
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

    /// The run's staging link, with this binding's journal folder said.
    fn staging_link(&self) -> StagingLink {
        let link = self
            .link
            .lock()
            .expect("link lock")
            .get_or_insert_with(StagingLink::default)
            .clone();
        if let Some(dir) = &self.journal_dir {
            link.set_journal_dir(dir);
        }
        link
    }

    /// The run's edit store, once registered.
    pub fn store(&self) -> Option<Arc<EditStore>> {
        self.staging_link().store().cloned()
    }
}

impl Binding for AstGrepBinding {
    fn resource(&self) -> &'static str {
        "tree-sitter parser"
    }

    fn link_staging(&self, link: &StagingLink) {
        *self.link.lock().expect("link lock") = Some(link.clone());
        // Said before any binding registers, so before the store opens.
        self.staging_link();
    }

    fn register(&self, run: &RunContext, registry: &Registry) -> Result<(), RegistryError> {
        let link = self.staging_link();
        let ws = run.workspace.clone();
        let index = Arc::new(SearchIndex::with_budget_mb(
            self.cache_mb.unwrap_or(DEFAULT_CACHE_MB),
        ));
        *self.index.lock().expect("index lock") = Some(index.clone());
        registry.register(Arc::new(AstGrepTool::with_index(ws.clone(), index.clone())))?;
        let store = link.register_resolve(&ws, registry)?;
        registry.register(Arc::new(
            AstEditTool::new(ws, store)
                .with_index(index)
                .with_link(link),
        ))?;
        Ok(())
    }

    fn doctor(&self, run: &RunContext) -> Vec<String> {
        let journal = self.staging_link().journal(&run.workspace);
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
