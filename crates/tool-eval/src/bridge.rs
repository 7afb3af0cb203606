//! The tool bridge: a `tool(name, args)` call from inside a cell, dispatched
//! through the run's Registry with the surface, approval and wrappers of the
//! eval call that runs the cell, and the reply sent back to the driver.

use base64::Engine;
use serde_json::{json, Value};
use tool_core::{CallContext, Content, ToolError};

/// The tool's own name: a bridged call to it is refused, since the eval call
/// that runs the cell holds the tool's serial lock and would wait for itself.
pub const EVAL_TOOL: &str = crate::EVAL.name;

/// Run one bridged call and build the reply the driver expects.
pub async fn dispatch(cx: CallContext, id: u64, name: String, args: Value) -> Value {
    let result = call(&cx, &name, args).await;
    match result {
        Ok(out) => {
            let images: Vec<Value> = out
                .content
                .iter()
                .filter_map(|c| match c {
                    Content::Image { mime, data } => Some(json!({
                        "mime": mime,
                        "data": base64::engine::general_purpose::STANDARD.encode(data),
                    })),
                    Content::Text(_) => None,
                })
                .collect();
            json!({
                "type": "tool_result",
                "id": id,
                "ok": true,
                "text": out.joined_text(),
                "images": images,
                "structured": out.structured,
            })
        }
        Err(e) => json!({
            "type": "tool_result",
            "id": id,
            "ok": false,
            "kind": e.kind(),
            "message": e.to_string(),
        }),
    }
}

async fn call(
    cx: &CallContext,
    name: &str,
    args: Value,
) -> Result<tool_core::ToolOutput, ToolError> {
    if name == EVAL_TOOL {
        return Err(ToolError::refused(
            "a cell cannot call `eval` through the bridge: the cell is itself an eval call, and eval \
             runs one cell at a time, so the call would wait for itself forever; run the code directly \
             in this cell instead",
        ));
    }
    let Some(registry) = cx.registry() else {
        return Err(ToolError::unavailable(
            "this eval call was not dispatched through a tool registry, so there are no tools to call \
             from the cell; call eval through the run's Registry",
        ));
    };
    let args = if args.is_null() { json!({}) } else { args };
    registry.call(cx.surface(), name, args, cx.nested()).await
}
