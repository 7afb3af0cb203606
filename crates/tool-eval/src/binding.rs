//! The kernel factory as a run resource: registers `eval` for a run, and says
//! in `doctor` which interpreters would run here.

use crate::config::{EvalConfig, Language};
use crate::kernel::KernelFactory;
use crate::sandbox::{CommandPrefix, Sandbox};
use crate::tool::EvalTool;
use std::sync::Arc;
use tool_core::{Binding, Registry, RegistryError, RunContext};

/// Binds `eval` to a run: the config and, when the conversation has an
/// isolated environment, the sandbox the kernels run in.
#[derive(Clone)]
pub struct EvalBinding {
    config: EvalConfig,
    sandbox: Option<Arc<dyn Sandbox>>,
}

impl std::fmt::Debug for EvalBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalBinding")
            .field("config", &self.config)
            .field("sandbox", &self.sandbox.as_ref().map(|s| s.describe()))
            .finish()
    }
}

impl EvalBinding {
    /// Kernels as `config` says; a non-empty `config.sandbox` prefix becomes
    /// the sandbox.
    pub fn new(config: EvalConfig) -> Self {
        let sandbox = CommandPrefix::new(config.sandbox.iter().cloned())
            .map(|p| Arc::new(p) as Arc<dyn Sandbox>);
        EvalBinding { config, sandbox }
    }

    /// Run the kernels inside the conversation's isolated environment.
    pub fn with_sandbox(mut self, sandbox: Arc<dyn Sandbox>) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// The tool this binding registers for a run rooted at `run`.
    pub fn tool(&self, run: &RunContext) -> EvalTool {
        EvalTool::new(Arc::new(KernelFactory::new(
            run.workspace.root(),
            self.config.clone(),
            self.sandbox.clone(),
        )))
    }
}

impl Binding for EvalBinding {
    fn resource(&self) -> &'static str {
        "kernel factory"
    }

    fn register(&self, run: &RunContext, registry: &Registry) -> Result<(), RegistryError> {
        registry.register(Arc::new(self.tool(run)))
    }

    fn doctor(&self, run: &RunContext) -> Vec<String> {
        let factory = KernelFactory::new(
            run.workspace.root(),
            self.config.clone(),
            self.sandbox.clone(),
        );
        let mut lines: Vec<String> = Language::ALL
            .iter()
            .map(|&lang| match factory.interpreter(lang) {
                Ok(i) => format!(
                    "eval {lang}: {} (from {}), started on first use",
                    i.program.display(),
                    i.origin
                ),
                Err(why) => format!("eval {lang}: unavailable — {why}"),
            })
            .collect();
        lines.push(match &self.sandbox {
            Some(s) => format!("eval kernels run {}", s.describe()),
            None => "eval kernels run on the host (no isolated environment bound)".into(),
        });
        lines
    }
}
