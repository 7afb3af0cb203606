//! The `Toolset` builder: binds one run's resources and registers a tool only
//! when its resource is bound.
//!
//! Each tool family has its own module here (compiled with its feature) that
//! adds a typed builder method for its resource and the default binding the
//! binary uses. This module knows none of their types.

use crate::{RunOptions, FAMILIES};
use std::path::Path;
use std::sync::Arc;
use tool_core::staging::DiffContext;
use tool_core::{Approver, Binding, Registry, RegistryError, RunContext, StagingLink, Workspace};

#[cfg(feature = "ask")]
pub(crate) mod ask;
#[cfg(feature = "astgrep")]
mod astgrep;
#[cfg(feature = "debug")]
mod debug;
#[cfg(feature = "eval")]
mod eval;
mod files;
#[cfg(feature = "lsp")]
mod lsp;
mod staging;
#[cfg(feature = "vibe")]
mod vibe;

/// Whether a tool family's resource is bound in this run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindingState {
    NotCompiled,
    Bound { resource: String },
    Unbound { why: String },
}

/// Why a family's default binding was not made.
pub(crate) enum NotBound {
    /// Its config section is wrong (the message names section, key and
    /// value): the binary refuses to start unless asked to be lenient.
    Config(String),
    /// Its config is wrong in a layer other than the harness's (the user's
    /// file, the project's): the message names that file itself.
    #[cfg_attr(not(feature = "debug"), allow(dead_code))]
    ConfigIn(String),
    /// Its resource is not available in this run (vibe mode off, no
    /// conversation id). Only some families make it, so a build with none
    /// of them compiled in never does.
    #[cfg_attr(not(any(feature = "vibe", feature = "debug")), allow(dead_code))]
    Unavailable(String),
}

/// Collects one run's resources.
pub struct ToolsetBuilder {
    run: RunContext,
    approver: Option<Arc<dyn Approver>>,
    bindings: Vec<(&'static str, Box<dyn Binding>)>,
    unbound: Vec<(&'static str, String)>,
    config_errors: Vec<(&'static str, String)>,
    /// The lines of context of the run's previews, when chosen.
    diff_context: Option<DiffContext>,
}

impl ToolsetBuilder {
    /// A run rooted at `workdir`, which must exist.
    pub fn new(workdir: impl AsRef<Path>) -> std::io::Result<Self> {
        let workspace = Workspace::new(workdir)?;
        // Temporary files a killed run of ours left mid-write are removed
        // (a bounded walk, on its own thread: it can take a few hundred ms
        // in a large tree). Each folder is also swept, before the write, the
        // first time this process writes into it.
        let sweeper = workspace.clone();
        let _ = std::thread::Builder::new()
            .name("sweep-stale-temps".into())
            .spawn(move || sweeper.sweep_stale_temps());
        Ok(ToolsetBuilder {
            run: RunContext {
                workspace,
                conversation_id: None,
            },
            approver: None,
            bindings: Vec::new(),
            unbound: Vec::new(),
            config_errors: Vec::new(),
            diff_context: None,
        })
    }

    pub fn conversation_id(mut self, id: impl Into<String>) -> Self {
        self.run.conversation_id = Some(id.into());
        self
    }

    /// Who is asked before write and exec tools run. Without one, they are
    /// refused (fail closed).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    pub fn run_context(&self) -> &RunContext {
        &self.run
    }

    /// Show every staged change's diff with `context` lines around each
    /// change unless a call asks otherwise (default 1).
    pub fn diff_context(mut self, context: DiffContext) -> Self {
        self.diff_context = Some(context);
        self
    }

    /// Bind a resource for a tool family (its feature name).
    pub fn bind(mut self, family: &'static str, binding: Box<dyn Binding>) -> Self {
        self.unbound.retain(|(f, _)| *f != family);
        self.bindings.push((family, binding));
        self
    }

    /// Record why a family's resource is not bound, for `doctor`.
    pub fn unbound(mut self, family: &'static str, why: impl Into<String>) -> Self {
        if !self.bindings.iter().any(|(f, _)| *f == family) {
            self.unbound.push((family, why.into()));
        }
        self
    }

    /// Bind every compiled family's default resource for these options, as
    /// the binary does.
    pub fn with_defaults(self, opts: &RunOptions) -> Self {
        let mut b = self;
        if let Some(id) = &opts.conversation_id {
            b.run.conversation_id = Some(id.clone());
        } else if b.run.conversation_id.is_none() {
            b.run.conversation_id = Some(format!("cli-{}", std::process::id()));
        }
        if b.diff_context.is_none() {
            match staging::diff_context(opts) {
                Ok(context) => b.diff_context = context,
                // A wrong `[staging]` leaves the default; the binary
                // refuses to start on it unless lenient.
                Err(NotBound::Config(why)) => {
                    b.config_errors.push(("staging", opts.config.error(why)));
                }
                Err(NotBound::ConfigIn(why) | NotBound::Unavailable(why)) => {
                    b.config_errors.push(("staging", why));
                }
            }
        }
        type Default = fn(&RunOptions, &RunContext) -> Result<Box<dyn Binding>, NotBound>;
        let defaults: Vec<(&'static str, Default)> = vec![
            ("files", files::default_binding),
            #[cfg(feature = "astgrep")]
            ("astgrep", astgrep::default_binding),
            #[cfg(feature = "lsp")]
            ("lsp", lsp::default_binding),
            #[cfg(feature = "debug")]
            ("debug", debug::default_binding),
            #[cfg(feature = "eval")]
            ("eval", eval::default_binding),
            #[cfg(feature = "ask")]
            ("ask", ask::default_binding),
            #[cfg(feature = "vibe")]
            ("vibe", vibe::default_binding),
        ];
        for (family, make) in defaults {
            if b.bindings.iter().any(|(f, _)| *f == family) {
                continue;
            }
            b = match make(opts, &b.run) {
                Ok(binding) => b.bind(family, binding),
                Err(NotBound::Unavailable(why)) => b.unbound(family, why),
                Err(NotBound::Config(why)) => {
                    let why = opts.config.error(why);
                    b.config_errors.push((family, why.clone()));
                    b.unbound(family, why)
                }
                Err(NotBound::ConfigIn(why)) => {
                    b.config_errors.push((family, why.clone()));
                    b.unbound(family, why)
                }
            };
        }
        b
    }

    /// The families whose config section is wrong, each with its one-line
    /// message (`config FILE: [eval] max_output_bytes = 100: …`). They are
    /// left unbound; the binary refuses to start with any unless lenient.
    pub fn config_errors(&self) -> &[(&'static str, String)] {
        &self.config_errors
    }

    /// Register every bound family's tools.
    pub fn build(self) -> Result<Toolset, RegistryError> {
        let registry = Registry::new();
        registry.set_approver(self.approver);
        // One staging link per run: one edit store, opened by the first
        // binding whose tools stage (which registers `resolve`), keeps what
        // ast_edit, lsp_rename and lsp_code_action stage, and the language
        // servers preview it, without any tool crate knowing another.
        let staging = StagingLink::default();
        if let Some(context) = self.diff_context {
            staging.set_diff_context(context);
        }
        for (_, binding) in &self.bindings {
            binding.link_staging(&staging);
        }
        for (_, binding) in &self.bindings {
            binding.register(&self.run, &registry)?;
        }
        for (_, binding) in &self.bindings {
            binding.after_all(&self.run, &registry)?;
        }
        Ok(Toolset {
            registry,
            run: self.run,
            bindings: self.bindings,
            unbound: self.unbound,
            config_errors: self.config_errors,
        })
    }
}

/// One run's bound tools.
pub struct Toolset {
    registry: Registry,
    run: RunContext,
    bindings: Vec<(&'static str, Box<dyn Binding>)>,
    unbound: Vec<(&'static str, String)>,
    config_errors: Vec<(&'static str, String)>,
}

impl Toolset {
    /// The families left unbound because their config section is wrong.
    pub fn config_errors(&self) -> &[(&'static str, String)] {
        &self.config_errors
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn run_context(&self) -> &RunContext {
        &self.run
    }

    pub fn workspace(&self) -> &Workspace {
        &self.run.workspace
    }

    /// Whether a family is compiled in and bound.
    pub fn state(&self, family: &str) -> BindingState {
        let compiled = FAMILIES.iter().any(|f| f.feature == family && f.compiled);
        if !compiled {
            return BindingState::NotCompiled;
        }
        if let Some((_, b)) = self.bindings.iter().find(|(f, _)| *f == family) {
            return BindingState::Bound {
                resource: b.resource().to_string(),
            };
        }
        let why = self.unbound.iter().find(|(f, _)| *f == family).map_or_else(
            || "its resource was not bound for this run".into(),
            |(_, w)| w.clone(),
        );
        BindingState::Unbound { why }
    }

    /// Start in the background what the first calls would wait for (the
    /// root's language servers): for hosts serving many calls on a surface
    /// that writes.
    pub fn warm_up(&self) {
        for (_, b) in &self.bindings {
            b.warm_up(&self.run);
        }
    }

    /// What a family's binding says about this root (servers, adapters).
    pub fn doctor_lines(&self, family: &str) -> Vec<String> {
        self.bindings
            .iter()
            .filter(|(f, _)| *f == family)
            .flat_map(|(_, b)| b.doctor(&self.run))
            .collect()
    }

    /// [`Self::doctor_lines`] with nothing grouped (`doctor --all`).
    pub fn doctor_lines_all(&self, family: &str) -> Vec<String> {
        self.bindings
            .iter()
            .filter(|(f, _)| *f == family)
            .flat_map(|(_, b)| b.doctor_all(&self.run))
            .collect()
    }
}
