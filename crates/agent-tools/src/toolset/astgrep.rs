//! Binding the `astgrep` family's resource (crate `tool-astgrep`): the
//! tree-sitter parser, with every grammar compiled into the binary, so it is
//! always bound when the feature is on.

use crate::{RunOptions, ToolsetBuilder};
pub use tool_astgrep::AstGrepBinding;
use tool_core::{Binding, RunContext};

impl ToolsetBuilder {
    /// Bind the parser resource: registers `ast_grep`, `ast_edit` and
    /// `resolve`, sharing one edit store for the run.
    pub fn astgrep(self, binding: AstGrepBinding) -> Self {
        self.bind("astgrep", Box::new(binding))
    }
}

/// The binding the binary uses for this family. The config section
/// `[astgrep]` may set `journal_dir`.
pub(crate) fn default_binding(
    opts: &RunOptions,
    _run: &RunContext,
) -> Result<Box<dyn Binding>, String> {
    let mut binding = AstGrepBinding::new();
    if let Some(section) = &opts.config.astgrep {
        let table = section
            .as_table()
            .ok_or("config [astgrep] must be a table")?;
        for (key, value) in table {
            match (key.as_str(), value.as_str()) {
                ("journal_dir", Some(dir)) => binding = binding.with_journal_dir(dir),
                ("journal_dir", None) => {
                    return Err("config astgrep.journal_dir must be a string (a folder)".into())
                }
                (other, _) => {
                    return Err(format!(
                        "unknown key `{other}` in config [astgrep]; known: journal_dir"
                    ))
                }
            }
        }
    }
    Ok(Box::new(binding))
}
