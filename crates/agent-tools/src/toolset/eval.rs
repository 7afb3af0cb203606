//! Binding the `eval` family's resource (crate `tool-eval`): a kernel factory.
//!
//! The binary binds kernels on the host, configured by the `[eval]` section of
//! the config file (interpreters, idle budgets, caps, a sandbox command
//! prefix). A harness whose conversation has an isolated environment binds
//! [`ToolsetBuilder::eval`] with an [`tool_eval::EvalBinding`] that carries
//! its [`tool_eval::Sandbox`]; the factory never starts one itself.

use super::NotBound;
use crate::options::parse_section;
use crate::{RunOptions, ToolsetBuilder};
use std::sync::Arc;
use tool_core::{Binding, RunContext};
use tool_eval::{EvalBinding, EvalConfig, Sandbox};

/// The `[eval]` config section, checked.
fn config(opts: &RunOptions) -> Result<EvalConfig, String> {
    let cfg: EvalConfig = parse_section("eval", opts.config.eval.as_ref())?;
    cfg.validate()?;
    Ok(cfg)
}

/// The binding the binary uses for this family: kernels on the host (or
/// inside the configured sandbox prefix).
pub(crate) fn default_binding(
    opts: &RunOptions,
    _run: &RunContext,
) -> Result<Box<dyn Binding>, NotBound> {
    Ok(Box::new(EvalBinding::new(
        config(opts).map_err(NotBound::Config)?,
    )))
}

impl ToolsetBuilder {
    /// Bind `eval` with a kernel factory you configured.
    pub fn eval(self, binding: EvalBinding) -> Self {
        self.bind("eval", Box::new(binding))
    }

    /// Bind `eval` with kernels that run inside the conversation's isolated
    /// environment.
    pub fn eval_in_sandbox(self, config: EvalConfig, sandbox: Arc<dyn Sandbox>) -> Self {
        self.eval(EvalBinding::new(config).with_sandbox(sandbox))
    }
}
