//! Binding the `lsp` family's resource (crate `tool-lsp`): a language-server
//! supervisor for the run's root, configured by the `[lsp]` config section
//! (extra or replaced catalog entries, disabled ones, timeouts). On a
//! read-only run, servers are started so they do not run the project's code.

use super::NotBound;
use crate::options::parse_section;
use crate::RunOptions;
use tool_core::{Binding, RunContext, Tier};
use tool_lsp::{CatalogConfig, LspBinding};

/// The binding the binary uses for this family.
pub(crate) fn default_binding(
    opts: &RunOptions,
    _run: &RunContext,
) -> Result<Box<dyn Binding>, NotBound> {
    let mut config: CatalogConfig =
        parse_section("lsp", opts.config.lsp.as_ref()).map_err(NotBound::Config)?;
    // The read surface never runs the project's code.
    if opts.surface == Some(Tier::Read) {
        config = config.without_project_code();
    }
    Ok(Box::new(LspBinding::new(config)))
}
