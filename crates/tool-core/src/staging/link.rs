//! One run's staging: the [`EditStore`] every staging tool keeps its
//! changes in and `resolve` accepts them from, the language servers'
//! [`PreviewHook`], and the run's [`DiffContext`] (a call may ask another).

use super::change::StagedChange;
use super::diff::DiffContext;
use super::journal::Journal;
use super::resolve::ResolveTool;
use super::store::EditStore;
use crate::{Registry, RegistryError, Workspace};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

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
    async fn diagnostics_delta(&self, change: &StagedChange) -> Option<PreviewSection>;
}

/// A preview's diagnostics section, and of its new problems those that are
/// syntax errors by the servers' own account (a rewrite the grammar
/// accepted may still not parse for the language's tools).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreviewSection {
    pub text: String,
    /// Each as the model reads it (`path:line:col error [code] message`).
    pub syntax_errors: Vec<String>,
}

/// One run's staging, made by the facade and handed to every binding
/// before any registers (a binding given none makes its own): the run's
/// [`EditStore`], opened by the first binding whose tools stage, which
/// registers `resolve` over it, and the preview hook the language-server
/// binding sets. Each binding reads the other's half at call time.
#[derive(Clone, Default)]
pub struct StagingLink {
    /// Where the store's journal is kept, when a binding's config says.
    journal_dir: Arc<OnceLock<PathBuf>>,
    store: Arc<OnceLock<Arc<EditStore>>>,
    /// Whether this link registered `resolve` (once per run).
    resolve_registered: Arc<AtomicBool>,
    hook: Arc<OnceLock<Arc<dyn PreviewHook>>>,
    /// The diff context of the run's previews, when its config says.
    diff_context: Arc<OnceLock<DiffContext>>,
}

impl std::fmt::Debug for StagingLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagingLink")
            .field("journal_dir", &self.journal_dir.get())
            .field("store", &self.store.get().is_some())
            .field("hook", &self.hook.get().is_some())
            .field("diff_context", &self.diff_context())
            .finish()
    }
}

impl StagingLink {
    /// Keep the apply journal in `dir` instead of [`Journal::for_root`]'s
    /// place. Said before the store opens (a binding's `link_staging`);
    /// once it is open, a different folder is refused with a warning in
    /// the log, as is a second folder.
    pub fn set_journal_dir(&self, dir: impl Into<PathBuf>) {
        let dir = dir.into();
        let taken = self.store.get().is_none() && self.journal_dir.set(dir.clone()).is_ok();
        if !taken && self.journal_dir.get() != Some(&dir) {
            tracing::warn!(
                asked = %dir.display(),
                "the run's apply journal is already set; this folder is not used"
            );
        }
    }

    /// Show the run's previews with `context` lines around each change
    /// unless a call asks otherwise (`[staging] diff_context`). Said once,
    /// before any tool stages; a second, different value is refused with a
    /// warning in the log.
    pub fn set_diff_context(&self, context: DiffContext) {
        if self.diff_context.set(context).is_err() && self.diff_context() != context {
            tracing::warn!(
                asked = %context,
                "the run's diff context is already set; this value is not used"
            );
        }
    }

    /// The lines of context a preview shows: what the call asked, else the
    /// run's, else [`DiffContext::default`].
    pub fn diff_context_or(&self, asked: Option<DiffContext>) -> DiffContext {
        asked.unwrap_or_else(|| self.diff_context())
    }

    /// The run's diff context (the default unless its config set one).
    pub fn diff_context(&self) -> DiffContext {
        self.diff_context.get().copied().unwrap_or_default()
    }

    /// The journal the run's store keeps (or will keep) for `ws`.
    pub fn journal(&self, ws: &Workspace) -> Journal {
        match self.journal_dir.get() {
            Some(dir) => Journal::at(dir, ws),
            None => Journal::for_root(ws),
        }
    }

    /// The run's store, opened on first use (recovering what a crashed
    /// apply left in its journal).
    pub fn open_store(&self, ws: &Workspace) -> Arc<EditStore> {
        self.store
            .get_or_init(|| Arc::new(EditStore::open(self.journal(ws))))
            .clone()
    }

    /// Open the run's store and register `resolve` over it, once per link:
    /// every binding whose tools stage calls this when it registers, so
    /// whichever families are bound, their staged changes can be resolved.
    /// A `resolve` registered by another link is a duplicate (two stores in
    /// one run would each hold changes the other's `resolve` cannot find).
    pub fn register_resolve(
        &self,
        ws: &Workspace,
        registry: &Registry,
    ) -> Result<Arc<EditStore>, RegistryError> {
        let store = self.open_store(ws);
        if !self.resolve_registered.swap(true, Ordering::SeqCst) {
            if let Err(e) = registry.register(Arc::new(ResolveTool::new(store.clone()))) {
                self.resolve_registered.store(false, Ordering::SeqCst);
                return Err(e);
            }
        }
        Ok(store)
    }

    /// The run's store, once a binding opened it.
    pub fn store(&self) -> Option<&Arc<EditStore>> {
        self.store.get()
    }

    pub fn set_hook(&self, hook: Arc<dyn PreviewHook>) {
        let _ = self.hook.set(hook);
    }

    pub fn hook(&self) -> Option<&Arc<dyn PreviewHook>> {
        self.hook.get()
    }

    /// The preview's diagnostics section of `change`, when a hook is linked
    /// and has something to say.
    pub async fn diagnostics_delta(&self, change: &StagedChange) -> Option<PreviewSection> {
        match self.hook.get() {
            Some(h) => h.diagnostics_delta(change).await,
            None => None,
        }
    }
}
