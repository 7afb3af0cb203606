//! The `[staging]` config section: how every staging tool (ast_edit,
//! lsp_rename staged or moving, lsp_code_action staged) shows its preview,
//! for the whole run. Read from the user's config file, then the harness's
//! (later winning); a project's `.agent-tools.toml` does not choose it. A
//! call's own `diff_context` wins over both.

use super::NotBound;
use crate::options::parse_section;
use crate::RunOptions;
use serde::Deserialize;
use tool_core::staging::DiffContext;

/// The `[staging]` section of one config layer.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StagingSection {
    /// Lines of unchanged text around each change of a preview's diff,
    /// 0 to 10 (default 1).
    diff_context: Option<DiffContext>,
}

/// The run's diff context by its config layers (`None`: none says).
pub(super) fn diff_context(opts: &RunOptions) -> Result<Option<DiffContext>, NotBound> {
    let mut chosen = None;
    if let Some(user) = &opts.user_config {
        let layer: StagingSection = parse_section("staging", user.staging.as_ref())
            .map_err(|e| NotBound::ConfigIn(user.error(e)))?;
        chosen = layer.diff_context.or(chosen);
    }
    let harness: StagingSection =
        parse_section("staging", opts.config.staging.as_ref()).map_err(NotBound::Config)?;
    Ok(harness.diff_context.or(chosen))
}
