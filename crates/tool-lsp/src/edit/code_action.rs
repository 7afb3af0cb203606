//! `lsp_code_action`: one of the code actions `lsp` op `code_actions`
//! lists, applied or staged.
//!
//! The action is picked by its number in that list or by a title substring
//! that matches exactly one; resolved (`codeAction/resolve`) when the server
//! computes its edit lazily; its WorkspaceEdit played in memory; its command
//! run with every `workspace/applyEdit` the server sends meanwhile captured
//! into the same change. The whole change is then written in one
//! transaction, or staged for `resolve`.
//!
//! Invariants: nothing reaches the disk except through that transaction or
//! `resolve`; an ambiguous or unknown choice is refused listing the
//! actions, before any command runs.

use crate::args::{LspArgs, Op};
use crate::edit::staged_edit;
use crate::planned_edit::{self, PlannedEdit};
use crate::positioning;
use crate::read::ops;
use crate::supervisor::LspSupervisor;
use lsp_types::request::{CodeActionResolveRequest, Request};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tool_core::files::TransactionError;
use tool_core::format::plural;
use tool_core::staging::DiffContext;
use tool_core::{StagingLink, ToolError, ToolOutput};

/// Which action: its number in the list, or a title substring.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum ActionChoice {
    /// 1-based, as `code_actions` numbers them.
    Number(u32),
    /// A piece of the title (case-insensitive) that matches exactly one.
    Title(String),
}

/// Arguments of `lsp_code_action`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CodeActionArgs {
    /// File relative to the workspace root.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// The identifier on that line the action is for (never a column).
    pub symbol: String,
    /// Which occurrence of `symbol` on the line, 1-based.
    #[serde(default)]
    pub occurrence: Option<u32>,
    /// The action: its number in the `code_actions` list, or a title
    /// substring matching exactly one.
    pub action: ActionChoice,
    /// Stage the change for `resolve` instead of writing it.
    #[serde(default)]
    pub stage: bool,
    /// With `stage`: lines of unchanged text the preview shows around each
    /// change, 0 to 10; default 1 (or the run's `[staging] diff_context`).
    #[serde(default)]
    pub diff_context: Option<DiffContext>,
    /// How long this call may wait for the server, 5 to 300 seconds.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

fn title(a: &Value) -> &str {
    a.get("title").and_then(Value::as_str).unwrap_or("?")
}

/// The chosen action, or a refusal that lists them.
fn choose<'a>(actions: &'a [Value], choice: &ActionChoice) -> Result<&'a Value, ToolError> {
    let listed = || {
        actions
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{}. {}", i + 1, title(a)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    match choice {
        ActionChoice::Number(n) => actions.get((*n as usize).wrapping_sub(1)).ok_or_else(|| {
            ToolError::bad_args(format!(
                "`action` {n}: there {} here:\n{}",
                match actions.len() {
                    1 => "is 1 action".to_string(),
                    n => format!("are {n} actions"),
                },
                listed()
            ))
        }),
        ActionChoice::Title(t) => {
            let needle = t.to_lowercase();
            let hits: Vec<&Value> = actions
                .iter()
                .filter(|a| title(a).to_lowercase().contains(&needle))
                .collect();
            match hits[..] {
                [one] => Ok(one),
                [] => Err(ToolError::bad_args(format!(
                    "`action` \"{t}\" matches no action here:\n{}",
                    listed()
                ))),
                _ => Err(ToolError::bad_args(format!(
                    "`action` \"{t}\" matches {} actions; give more of the title or the number:\n{}",
                    hits.len(),
                    listed()
                ))),
            }
        }
    }
}

/// Run one `lsp_code_action` call.
pub(crate) async fn run(
    sup: &LspSupervisor,
    link: &StagingLink,
    args: CodeActionArgs,
) -> Result<ToolOutput, ToolError> {
    staged_edit::check_diff_context(args.stage, args.diff_context)?;
    let t = positioning::call_timeouts(sup, args.timeout_seconds)?;
    let largs = LspArgs {
        op: Op::CodeActions,
        file: Some(args.file.clone()),
        line: Some(args.line),
        symbol: Some(args.symbol.clone()),
        occurrence: args.occurrence,
        query: None,
        detail: None,
        timeout_seconds: args.timeout_seconds,
    };
    // Everything that waits on the server is bounded by `timeout_seconds`;
    // the write that follows is not (it is never cut off half done).
    let (p, action, plan) = positioning::within_call_timeout(
        sup,
        args.timeout_seconds,
        Some(args.file.as_str()),
        async {
            let p = positioning::position(sup, &t, &largs).await?;
            let client = &p.target.client;
            let (actions, _) = ops::offered_actions(&t, &p).await?;
            if actions.is_empty() {
                return Err(ToolError::refused(format!(
                    "{} offers no code actions for `{}` at {}:{}; nothing was written",
                    client.name, p.symbol, p.file.shown, args.line
                )));
            }
            let mut action = choose(&actions, &args.action)?.clone();
            let resolvable = client.capabilities.code_action_resolves();
            if action.get("edit").is_none() && action.get("data").is_some() && resolvable {
                // Sent back as the server sent it (see `ops::offered_actions`).
                action = client
                    .request(CodeActionResolveRequest::METHOD, action.clone(), t.request)
                    .await
                    .map_err(|e| e.into_tool_error(&client.name))?;
            }
            let ws = sup.workspace();
            let mut plan = PlannedEdit::default();
            let cannot = |why: String| {
                ToolError::refused(format!(
                    "the action's edit cannot be applied: {why}; nothing was written"
                ))
            };
            if let Some(edit) = action.get("edit") {
                plan.add(ws, edit, client.encoding).map_err(cannot)?;
            }
            // A bare Command, or an action's command.
            let command = match action.get("command") {
                Some(Value::String(_)) => Some(action.clone()),
                Some(c @ Value::Object(_)) => Some(c.clone()),
                _ => None,
            };
            if let Some(c) = command {
                let arguments = c.get("arguments").cloned().unwrap_or(json!([]));
                let params = json!({"command": c.get("command"), "arguments": arguments});
                let (reply, edits) = client.execute_capturing(&params, t.request).await;
                reply.map_err(|e| e.into_tool_error(&client.name))?;
                for e in &edits {
                    plan.add(ws, e, client.encoding).map_err(cannot)?;
                }
            }
            Ok((p, action, plan))
        },
    )
    .await?;
    let client = &p.target.client;
    let ws = sup.workspace();
    let what = format!(
        "lsp_code_action  \"{}\" at {}:{}",
        title(&action),
        p.file.shown,
        args.line,
    );
    let header = format!(
        "{what}: {} in {}",
        plural(plan.edit_count(), "edit", "edits"),
        plural(plan.edits.len(), "file", "files"),
    );
    let tx = plan.transaction(ws);
    if tx.is_empty() {
        return Err(ToolError::refused(format!(
            "\"{}\" changes no file (the server's edit is empty); nothing was written",
            title(&action)
        )));
    }
    if args.stage {
        let change = plan.staged_change(ws, "lsp_code_action");
        // The counts are the proposal's line: said once.
        return staged_edit::staged_output(link, ws, change, what, args.diff_context).await;
    }
    tx.commit().map_err(|e| match e {
        e @ (TransactionError::NotAFile { .. } | TransactionError::Drifted(_)) => {
            ToolError::refused(e.to_string())
        }
        e => ToolError::failed(format!(
            "{e}; re-run lsp_code_action once the files are settled"
        )),
    })?;
    planned_edit::announce(sup, client, &plan, &p.target.language_id).await;
    let mut out = vec![header];
    for (path, n) in &plan.edits {
        out.push(format!(
            "{} ({})",
            ws.relative(path),
            plural(*n, "edit", "edits")
        ));
    }
    Ok(ToolOutput::text(out.join("\n")).with_structured(json!({
        "action": title(&action),
        "edits": plan.edit_count(),
        "files": plan.edits.keys().map(|p| ws.relative(p)).collect::<Vec<_>>(),
    })))
}
