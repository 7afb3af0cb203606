//! What `tools/list` shows: each visible [`ToolSpec`] as an MCP tool, with
//! annotations derived from its tier and, where the tier says too little, from
//! what the tool really does.

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use std::sync::Arc;
use tool_core::{McpHints, Tier, ToolSpec};

/// The MCP annotations of a tool: its declared hints (see
/// [`crate::catalog`]), or, for a tool not declared there or declared
/// without its own, its tier's. A read-tier tool is never destructive.
pub fn annotations(spec: &ToolSpec) -> ToolAnnotations {
    let read_only = spec.tier == Tier::Read;
    let McpHints {
        destructive,
        idempotent,
        open_world,
    } = crate::catalog::declared(&spec.name)
        .and_then(|d| d.hints)
        .unwrap_or(McpHints::of_tier(spec.tier));
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
    let schema: JsonObject = if let serde_json::Value::Object(o) = &spec.input_schema {
        o.clone()
    } else {
        let mut o = JsonObject::new();
        o.insert("type".into(), "object".into());
        o
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
