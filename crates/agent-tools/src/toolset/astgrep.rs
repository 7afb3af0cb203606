//! Binding the `astgrep` family's resource (crate `tool-astgrep`): the
//! tree-sitter parser, with every grammar compiled into the binary, so it is
//! always bound when the feature is on.

use super::NotBound;
use crate::options::parse_section;
use crate::{RunOptions, ToolsetBuilder};
use serde::Deserialize;
use std::path::PathBuf;
pub(super) use tool_astgrep::AstGrepBinding;
use tool_core::{Binding, RunContext};

impl ToolsetBuilder {
    /// Bind the parser resource: registers `ast_grep`, `ast_edit` and
    /// `resolve`, sharing one edit store for the run.
    pub fn astgrep(self, binding: AstGrepBinding) -> Self {
        self.bind("astgrep", Box::new(binding))
    }
}

/// The `[astgrep]` section of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AstGrepSection {
    /// The folder of the edit journal.
    journal_dir: Option<PathBuf>,
    /// The budget of the run's search index, in MiB.
    cache_mb: Option<usize>,
}

/// The binding the binary uses for this family. The config section
/// `[astgrep]` may set `journal_dir` and `cache_mb`.
pub(crate) fn default_binding(
    opts: &RunOptions,
    _run: &RunContext,
) -> Result<Box<dyn Binding>, NotBound> {
    let section: AstGrepSection =
        parse_section("astgrep", opts.config.astgrep.as_ref()).map_err(NotBound::Config)?;
    let mut binding = AstGrepBinding::new();
    if let Some(dir) = section.journal_dir {
        binding = binding.with_journal_dir(dir);
    }
    if let Some(mb) = section.cache_mb {
        binding = binding.with_cache_mb(mb);
    }
    Ok(Box::new(binding))
}
