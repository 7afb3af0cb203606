//! Binding the `lsp` family's resource (crate `tool-lsp`): a language-server
//! supervisor for the run's root, configured by the `[lsp]` config section
//! (extra or replaced catalog entries, disabled ones, timeouts).

use crate::RunOptions;
use tool_core::{Binding, RunContext};
use tool_lsp::{CatalogConfig, LspBinding};

/// The binding the binary uses for this family.
pub(crate) fn default_binding(
    opts: &RunOptions,
    _run: &RunContext,
) -> Result<Box<dyn Binding>, String> {
    let config: CatalogConfig = match &opts.config.lsp {
        Some(section) => section
            .clone()
            .try_into()
            .map_err(|e| format!("the [lsp] config section is invalid: {e}"))?,
        None => CatalogConfig::default(),
    };
    Ok(Box::new(LspBinding::new(config)))
}
