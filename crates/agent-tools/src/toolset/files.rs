//! Binding the file tools (`read`, `write`, `edit`) to the run's workspace
//! root. Always compiled: every run has a root.

use super::NotBound;
use crate::file_tools::FileToolsBinding;
use crate::RunOptions;
use tool_core::{Binding, RunContext};

/// The binding the binary uses for this family.
pub(crate) fn default_binding(
    _opts: &RunOptions,
    _run: &RunContext,
) -> Result<Box<dyn Binding>, NotBound> {
    Ok(Box::new(FileToolsBinding))
}
