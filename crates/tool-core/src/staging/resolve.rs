//! `resolve`: accept (write) or discard a change staged in the run's
//! [`EditStore`], whichever tool staged it.

use super::store::EditStore;
use crate::format::{list_capped, plural};
use crate::{
    async_trait, parse_args, schema_for, CallContext, Tier, Tool, ToolDecl, ToolError, ToolOutput,
    ToolSpec,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// `resolve`: writes an accepted change.
pub const RESOLVE: ToolDecl = ToolDecl::new("resolve", Tier::Write).hints(true, false, false);

/// What `resolve` does with a staged edit.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ResolveAction {
    /// Write every file of the edit, or none if any changed since staging.
    Accept,
    /// Drop the edit; nothing is written.
    Discard,
}

/// Arguments of `resolve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveArgs {
    /// The id an ast_edit result named, e.g. "edit_1".
    pub edit_id: String,
    /// `accept` or `discard`.
    pub action: ResolveAction,
}

/// `resolve`: apply or discard a staged edit.
pub struct ResolveTool {
    store: Arc<EditStore>,
}

impl ResolveTool {
    pub fn new(store: Arc<EditStore>) -> Self {
        ResolveTool { store }
    }
}

#[async_trait]
impl Tool for ResolveTool {
    fn spec(&self) -> ToolSpec {
        RESOLVE.spec(
            include_str!("../../descriptions/resolve.md").trim_end(),
            schema_for::<ResolveArgs>(),
        )
    }

    fn describe_call(&self, args: &Value) -> String {
        let id = args.get("edit_id").and_then(Value::as_str).unwrap_or("?");
        let action = args.get("action").and_then(Value::as_str).unwrap_or("?");
        match self.store.staged_files(id) {
            Some(files) if action == "accept" => format!(
                "accept {id}: write {} ({})",
                plural(files.len(), "file", "files"),
                list_capped(&files.iter().map(|f| f.rel.clone()).collect::<Vec<_>>(), 5)
            ),
            _ => format!("{action} {id}"),
        }
    }

    /// An accept writes the files of the change it accepts; a discard, or
    /// an id with nothing staged, writes none.
    fn writes(&self, args: &Value) -> Vec<String> {
        match parse_args::<ResolveArgs>(args.clone()) {
            Ok(a) if a.action == ResolveAction::Accept => self
                .store
                .staged_change(a.edit_id.trim())
                .map(|c| c.files.into_iter().map(|f| f.rel).collect())
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    async fn call(&self, _cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: ResolveArgs = parse_args(args)?;
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            resolve(&store, &args.edit_id, args.action == ResolveAction::Accept)
        })
        .await
        .map_err(|e| ToolError::failed(format!("the resolve thread failed: {e}")))?
    }
}

/// `resolve`: accept (write) or discard the change staged under `edit_id`.
pub fn resolve(store: &EditStore, edit_id: &str, accept: bool) -> Result<ToolOutput, ToolError> {
    let id = edit_id.trim();
    if id.is_empty() {
        return Err(ToolError::bad_args(
            "empty edit_id; pass the id an ast_edit result named, e.g. \"edit_1\"",
        ));
    }
    if accept {
        let done = store.accept(id)?;
        let text = format!(
            "resolve {id}: accepted — {} written to {}: {}",
            plural(done.replacements, "replacement", "replacements"),
            plural(done.files.len(), "file", "files"),
            list_capped(&done.files, 20)
        );
        Ok(ToolOutput::text(text).with_structured(json!({
            "edit_id": id,
            "action": "accept",
            "files": done.files,
            "replacements": done.replacements,
        })))
    } else {
        let done = store.discard(id)?;
        let text = format!(
            "resolve {id}: discarded — {} in {} dropped; nothing was written",
            plural(done.replacements, "replacement", "replacements"),
            plural(done.files, "file", "files"),
        );
        Ok(ToolOutput::text(text).with_structured(json!({
            "edit_id": id,
            "action": "discard",
            "files": done.files,
            "replacements": done.replacements,
        })))
    }
}
