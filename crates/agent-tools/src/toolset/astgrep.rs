//! Binding the `astgrep` family's resource (crate `tool-astgrep`).

use crate::RunOptions;
use tool_core::{Binding, RunContext};

/// The binding the binary uses for this family.
pub(crate) fn default_binding(
    _opts: &RunOptions,
    _run: &RunContext,
) -> Result<Box<dyn Binding>, String> {
    Err("not built yet: the tool-astgrep crate has no tools yet".into())
}
