//! Binding the `lsp` family's resource (crate `tool-lsp`): a language-server
//! supervisor for the run's root, configured by the `[lsp]` config section
//! (extra or replaced catalog entries, disabled ones, timeouts).

use super::NotBound;
use crate::options::parse_section;
use crate::RunOptions;
use tool_core::{Binding, RunContext};
use tool_lsp::{CatalogConfig, LspBinding};

/// The binding the binary uses for this family.
pub(crate) fn default_binding(
    opts: &RunOptions,
    _run: &RunContext,
) -> Result<Box<dyn Binding>, NotBound> {
    let config: CatalogConfig =
        parse_section("lsp", opts.config.lsp.as_ref()).map_err(NotBound::Config)?;
    Ok(Box::new(LspBinding::new(config)))
}
