//! The [`Tool`] trait, its [`ToolSpec`], and the [`CallContext`] a call runs in.

use crate::{NoticeBoard, Registry, Surface, Tier, ToolError, ToolOutput, WeakRegistry};
use async_trait::async_trait;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What the model sees of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    /// What the model reads.
    pub description: String,
    pub tier: Tier,
    /// False for tools whose state spans calls (debug, eval): the Registry
    /// runs their calls one at a time.
    pub parallel_safe: bool,
    pub input_schema: Value,
}

impl ToolSpec {
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        tier: Tier,
        input_schema: Value,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            tier,
            parallel_safe: true,
            input_schema,
        }
    }

    pub fn serial(mut self) -> Self {
        self.parallel_safe = false;
        self
    }
}

/// A description file (`descriptions/<tool>.md`, read with `include_str!`)
/// as the model reads it: one paragraph. The file keeps one sentence group
/// a line, for review; its line breaks become spaces.
pub fn paragraph(text: &str) -> String {
    text.trim_end().replace('\n', " ")
}

/// A tool bound to one run's resource.
#[async_trait]
pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError>;

    /// One line for an approval card: what this call would do.
    fn describe_call(&self, args: &Value) -> String {
        let mut a = args.to_string();
        if a.len() > 300 {
            a = crate::format::cap_chars(&a, 300).into_owned();
        }
        format!("run `{}` with {a}", self.spec().name)
    }

    /// The workspace files a call with `args` writes, as far as they are
    /// known before it runs, each relative to the workspace root as the
    /// call names it: what a decorator that checks written files
    /// (diagnostics on write) checks after the call. A wrapper answers for
    /// the tool it wraps. Default: none — the tool writes no file, or
    /// reports on what it wrote itself.
    fn writes(&self, _args: &Value) -> Vec<String> {
        Vec::new()
    }
}

/// The files a patch names as written: `*** Add/Update/Delete File:` and
/// `*** Move to:` lines (the Codex patch format) and `+++ b/` lines
/// (unified diffs), sorted, once each; for a harness's `apply_patch` to
/// declare in [`Tool::writes`].
pub fn paths_in_patch(patch: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in patch.lines() {
        let l = line.trim_end();
        for prefix in [
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move to: ",
            "+++ b/",
            "+++ ",
        ] {
            if let Some(p) = l.strip_prefix(prefix) {
                let p = p.split('\t').next().unwrap_or(p).trim();
                if p != "/dev/null" && !p.is_empty() {
                    out.push(p.to_string());
                }
                break;
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A progress report from a long call.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub message: String,
    pub done: Option<f64>,
    pub total: Option<f64>,
}

/// Where progress of a long call goes (an MCP progress token, a terminal).
pub trait ProgressSink: Send + Sync {
    fn report(&self, progress: Progress);
}

/// What a call runs in. The Registry fills in the surface and itself before
/// handing it to the tool, so a tool that dispatches further (the eval bridge)
/// does so with the same surface and approval as the original call.
#[derive(Clone, Default)]
pub struct CallContext {
    surface: Surface,
    registry: Option<Registry>,
    /// Set instead of `registry` in a detached context.
    weak_registry: Option<WeakRegistry>,
    /// Cancelled when the caller gives up on the call.
    pub cancel: CancellationToken,
    pub progress: Option<Arc<dyn ProgressSink>>,
    /// The names of the tools this call was dispatched through (outermost
    /// first), so a bridge can refuse re-entering itself.
    pub call_stack: Vec<String>,
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("surface", &self.surface)
            .field("call_stack", &self.call_stack)
            .finish_non_exhaustive()
    }
}

impl CallContext {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    pub fn with_progress(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        self.progress = Some(sink);
        self
    }

    pub fn surface(&self) -> Surface {
        self.surface
    }

    /// The registry that dispatched this call, for bridged calls (`None`
    /// when there is none, or a detached context's run has ended).
    pub fn registry(&self) -> Option<Registry> {
        match &self.registry {
            Some(r) => Some(r.clone()),
            None => self.weak_registry.as_ref().and_then(WeakRegistry::upgrade),
        }
    }

    /// The run's notice board (`None` when no registry dispatched this
    /// call, or a detached context's run has ended).
    pub fn notices(&self) -> Option<NoticeBoard> {
        self.registry().map(|r| r.notices())
    }

    /// A context for work that outlives this call (a background cell): the
    /// same surface and call stack, its own cancellation, no progress, and
    /// the registry held weakly, so the work never keeps the run's tools
    /// alive.
    pub fn detached(&self, cancel: CancellationToken) -> CallContext {
        CallContext {
            surface: self.surface,
            registry: None,
            weak_registry: self
                .registry
                .as_ref()
                .map(Registry::downgrade)
                .or_else(|| self.weak_registry.clone()),
            cancel,
            progress: None,
            call_stack: self.call_stack.clone(),
        }
    }

    pub(crate) fn bind(&mut self, surface: Surface, registry: Registry, name: &str) {
        self.surface = surface;
        self.registry = Some(registry);
        self.weak_registry = None;
        self.call_stack.push(name.to_string());
    }

    /// A context for a call made from inside this one: same surface,
    /// registry, cancellation and progress.
    pub fn nested(&self) -> CallContext {
        self.clone()
    }

    pub fn report(&self, message: impl Into<String>) {
        if let Some(p) = &self.progress {
            p.report(Progress {
                message: message.into(),
                done: None,
                total: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_names_the_files_it_writes() {
        let patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** Add File: b.rs\n+fn f() {}\n*** End Patch\n";
        assert_eq!(paths_in_patch(patch), vec!["b.rs", "src/a.py"]);
        let diff = "--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n";
        assert_eq!(paths_in_patch(diff), vec!["x.go"]);
    }
}
