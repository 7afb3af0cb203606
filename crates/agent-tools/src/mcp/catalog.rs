//! What `tools/list` shows: each visible [`ToolSpec`] as an MCP tool, with
//! annotations derived from its tier and, where the tier says too little, from
//! what the tool really does.

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use std::sync::Arc;
use tool_core::{Tier, ToolSpec};

/// `(destructive, idempotent, open_world)` for tools whose tier alone does not
/// say it. A read-tier tool is never destructive; a tool missing here gets
/// its tier's default.
fn known_hints(name: &str) -> Option<(bool, bool, bool)> {
    Some(match name {
        // Overwrites the whole file, but the same call twice gives the same file.
        "write" => (true, true, false),
        "edit" => (true, false, false),
        // Only stages a change: nothing is written until `resolve`.
        "ast_edit" => (false, false, false),
        "resolve" => (true, false, false),
        "lsp_rename" | "lsp_code_action" => (true, false, false),
        // Runs the user's program / arbitrary code, which can reach anything.
        "debug" => (true, false, true),
        "eval" => (true, false, true),
        // Start or instruct a background worker, an external agent process.
        "vibe_spawn" | "vibe_send" => (false, false, true),
        _ => return None,
    })
}

/// The MCP annotations of a tool.
pub fn annotations(spec: &ToolSpec) -> ToolAnnotations {
    let read_only = spec.tier == Tier::Read;
    let (destructive, idempotent, open_world) =
        known_hints(&spec.name).unwrap_or(match spec.tier {
            Tier::Read => (false, true, false),
            Tier::Write => (true, false, false),
            Tier::Exec => (true, false, true),
        });
    let mut a = ToolAnnotations::new()
        .read_only(read_only)
        .open_world(open_world);
    // The spec defines destructive and idempotent only for tools that are
    // not read-only.
    if !read_only {
        a = a.destructive(destructive).idempotent(idempotent);
    }
    a
}

/// One tool as `tools/list` shows it.
pub fn mcp_tool(spec: &ToolSpec) -> Tool {
    let schema: JsonObject = match &spec.input_schema {
        serde_json::Value::Object(o) => o.clone(),
        _ => {
            let mut o = JsonObject::new();
            o.insert("type".into(), "object".into());
            o
        }
    };
    Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(schema),
    )
    .with_annotations(annotations(spec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(name: &str, tier: Tier) -> ToolSpec {
        ToolSpec::new(name, "d", tier, json!({"type": "object", "properties": {}}))
    }

    #[test]
    fn tiers_become_hints() {
        let a = serde_json::to_value(annotations(&spec("lsp", Tier::Read))).unwrap();
        assert_eq!(a, json!({"readOnlyHint": true, "openWorldHint": false}));
        let a = serde_json::to_value(annotations(&spec("ast_edit", Tier::Write))).unwrap();
        assert_eq!(
            a,
            json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false})
        );
        let a = serde_json::to_value(annotations(&spec("eval", Tier::Exec))).unwrap();
        assert_eq!(a["destructiveHint"], true);
        assert_eq!(a["openWorldHint"], true);
        let a = serde_json::to_value(annotations(&spec("something_new", Tier::Write))).unwrap();
        assert_eq!(a["destructiveHint"], true);
        let t = serde_json::to_value(mcp_tool(&spec("lsp", Tier::Read))).unwrap();
        assert_eq!(
            t["inputSchema"],
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(t["name"], "lsp");
    }
}
