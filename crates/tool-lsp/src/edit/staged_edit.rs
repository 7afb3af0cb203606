//! `stage: true`: a change kept in the run's change store, answered with
//! its id, its diff and the diagnostics it would cause; nothing is written.

use serde_json::json;
use tool_core::staging::{proposal, DiffContext, NOT_WRITTEN_YET, PREVIEW_LINES};
use tool_core::{StagedChange, StagingLink, ToolError, ToolOutput, Workspace};

/// Files a preview checks, at most (each may wait the diagnostics bound).
pub(crate) const PREVIEW_FILES: usize = 20;

/// `diff_context` shapes a staged change's preview, so a call that writes
/// at once (no `stage`) and gives one is refused before anything is asked
/// of a server or written.
pub(crate) fn check_diff_context(stage: bool, asked: Option<DiffContext>) -> Result<(), ToolError> {
    match asked {
        Some(n) if !stage => Err(ToolError::bad_args(format!(
            "`diff_context` {n} sets the lines around each change of a staged preview, and this call writes at once, showing none; pass `stage: true` with it, or leave it out; nothing was written"
        ))),
        _ => Ok(()),
    }
}

/// Stage `change` in the run's change store and answer with its id, its
/// diff (with `diff_context` lines around each change, else the run's) and
/// the servers' diagnostics delta; nothing is written. `header` names what
/// is proposed (the tool and its target); the counts are said once, in the
/// proposal's line.
pub(crate) async fn staged_output(
    link: &StagingLink,
    ws: &Workspace,
    change: StagedChange,
    header: String,
    diff_context: Option<DiffContext>,
) -> Result<ToolOutput, ToolError> {
    let change = change.with_diff_context(link.diff_context_or(diff_context));
    let Some(store) = link.store() else {
        return Err(ToolError::unavailable(format!(
            "`stage: true` needs the run's `resolve` tool to accept the change, and this run has none (the tool was made without the run's staging link); nothing was staged or written — call {} without `stage` to write at once",
            change.tool
        )));
    };
    // Whole texts (what these tools stage) are never read from disk.
    let diff = change
        .diff(ws.dir(), PREVIEW_LINES)
        .map_err(|e| ToolError::failed(format!("{e}; nothing was staged")))?;
    let id = store.stage_change(change.clone());
    let mut text = vec![
        proposal(
            &tool_core::format::plural(change.edits(), "edit", "edits"),
            change.files.len(),
            &id,
        ),
        format!("{header}{NOT_WRITTEN_YET}"),
        diff,
    ];
    let delta = link.diagnostics_delta(&change).await.map(|s| s.text);
    text.extend(delta.clone());
    Ok(ToolOutput::text(text.join("\n")).with_structured(json!({
        "edit_id": id,
        "edits": change.edits(),
        "files": change.files.iter().map(|f| f.rel.clone()).collect::<Vec<_>>(),
        "moves": change.moves.iter().map(|m| json!({"from": m.from, "to": m.to})).collect::<Vec<_>>(),
        "diagnostics_after": delta,
    })))
}
