//! How a run resource brings its tools into a [`Registry`].
//!
//! Each tool crate offers a binding for its resource (a language-server
//! supervisor, a parser, a kernel factory…). Binding decides what is
//! registered; whether the resource can really serve this checkout is decided
//! later, at call time, by the tools themselves.

use crate::staging::StagingLink;
use crate::{Registry, RegistryError, Workspace};

/// What every binding of one run shares.
#[derive(Debug, Clone)]
pub struct RunContext {
    pub workspace: Workspace,
    /// The conversation this run belongs to (the debug tool needs one).
    pub conversation_id: Option<String>,
}

/// A bound run resource.
pub trait Binding: Send + Sync {
    /// The resource, as `doctor` names it ("language-server supervisor").
    fn resource(&self) -> &'static str;

    /// The run's [`StagingLink`], given before [`register`](Self::register):
    /// a binding whose tools stage changes, keep them, or preview them
    /// keeps it and fills in its half there.
    fn link_staging(&self, _link: &StagingLink) {}

    /// Register this resource's tools.
    fn register(&self, run: &RunContext, registry: &Registry) -> Result<(), RegistryError>;

    /// Called once every binding has registered: for decorators that wrap
    /// other bindings' tools (diagnostics on write).
    fn after_all(&self, _run: &RunContext, _registry: &Registry) -> Result<(), RegistryError> {
        Ok(())
    }

    /// Start, in the background, what the first calls of a long run would
    /// otherwise wait for (language servers). Hosts that serve many calls on
    /// a surface that writes call it once, after every binding registered.
    /// It must return at once; it may do nothing.
    fn warm_up(&self, _run: &RunContext) {}

    /// Lines for `agent-tools doctor`: what resolves for this root, what does
    /// not, and why.
    fn doctor(&self, _run: &RunContext) -> Vec<String> {
        Vec::new()
    }

    /// `agent-tools doctor --all`: every line, where [`Binding::doctor`]
    /// groups those that do not concern this checkout.
    fn doctor_all(&self, run: &RunContext) -> Vec<String> {
        self.doctor(run)
    }
}
