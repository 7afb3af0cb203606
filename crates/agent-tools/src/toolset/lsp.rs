//! Binding the `lsp` family's resource (crate `tool-lsp`): a language-server
//! supervisor for the run's root, configured by the `[lsp]` sections of the
//! config layers, later winning: the user's config file, the project's
//! `.agent-tools.toml` (a command it names is used only with
//! `trust_workspace`; otherwise reported, never run), the harness-supplied
//! config (extra or replaced catalog entries, disabled ones, timeouts). On a
//! read-only run, servers are started so they do not run the project's code.

use super::NotBound;
use crate::options::{parse_section, PROJECT_CONFIG};
use crate::{RunConfig, RunOptions};
use tool_core::{Binding, RunContext, Tier};
use tool_lsp::{CatalogConfig, LspBinding};

/// The run's `[lsp]` config: every layer folded, the project's under the
/// trust rule.
pub(crate) fn layered_config(opts: &RunOptions) -> Result<CatalogConfig, String> {
    let mut config = CatalogConfig::default();
    if let Some(user) = &opts.user_config {
        let layer: CatalogConfig =
            parse_section("lsp", user.lsp.as_ref()).map_err(|e| user.error(e))?;
        config = config.then(layer);
    }
    if let Some(section) = RunConfig::project_lsp(&opts.root)? {
        let layer: CatalogConfig = parse_section("lsp", Some(&section))
            .map_err(|e| format!("project config {PROJECT_CONFIG}: {e}"))?;
        config = config.then_project(layer, PROJECT_CONFIG, opts.trust_workspace);
    }
    let harness: CatalogConfig = parse_section("lsp", opts.config.lsp.as_ref())?;
    Ok(config.then(harness))
}

/// The binding the binary uses for this family.
pub(crate) fn default_binding(
    opts: &RunOptions,
    _run: &RunContext,
) -> Result<Box<dyn Binding>, NotBound> {
    let mut config = layered_config(opts).map_err(NotBound::Config)?;
    // The read surface never runs the project's code.
    if opts.surface == Some(Tier::Read) {
        config = config.without_project_code();
    }
    Ok(Box::new(LspBinding::new(config)))
}
