//! What the host knows of a tool before any resource is bound: its name,
//! its tier and the MCP hints its tier alone does not say, declared once
//! per tool ([`ToolDecl`]) by the crate that has the tool, and a crate's
//! tools with the resource a run binds for them ([`FamilyDecl`]).
//!
//! Invariant: a tool's [`ToolSpec`] is made from its declaration
//! ([`ToolDecl::spec`]), so `doctor`'s listing, the MCP annotations and the
//! spec the model sees cannot disagree on a name or a tier.

use crate::{Tier, ToolSpec};
use serde_json::Value;

/// MCP annotations for a tool whose tier alone says too little (see
/// [`McpHints::of_tier`] for what the tier says).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpHints {
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl McpHints {
    /// The hints a tier gives a tool declared without its own.
    pub const fn of_tier(tier: Tier) -> McpHints {
        let (destructive, idempotent, open_world) = match tier {
            Tier::Read => (false, true, false),
            Tier::Write => (true, false, false),
            Tier::Exec => (true, false, true),
        };
        McpHints {
            destructive,
            idempotent,
            open_world,
        }
    }
}

/// One tool, as declared by the crate that has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolDecl {
    pub name: &'static str,
    pub tier: Tier,
    /// Set where the tier's hints would be wrong for this tool.
    pub hints: Option<McpHints>,
}

impl ToolDecl {
    pub const fn new(name: &'static str, tier: Tier) -> Self {
        ToolDecl {
            name,
            tier,
            hints: None,
        }
    }

    /// The MCP hints of this tool, where its tier's would be wrong.
    pub const fn hints(mut self, destructive: bool, idempotent: bool, open_world: bool) -> Self {
        self.hints = Some(McpHints {
            destructive,
            idempotent,
            open_world,
        });
        self
    }

    /// The MCP hints this tool gets: its own, or its tier's.
    pub fn mcp_hints(&self) -> McpHints {
        self.hints.unwrap_or(McpHints::of_tier(self.tier))
    }

    /// The spec of the tool this declares.
    pub fn spec(&self, description: impl Into<String>, input_schema: Value) -> ToolSpec {
        ToolSpec::new(self.name, description, self.tier, input_schema)
    }
}

/// A tool crate's tools, and the resource a run must bind for them to
/// register (as `doctor` names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FamilyDecl {
    pub tools: &'static [ToolDecl],
    pub resource: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_declaration_makes_the_spec_and_its_hints_default_to_the_tier() {
        const WRITE: ToolDecl = ToolDecl::new("write", Tier::Write).hints(true, true, false);
        const EVAL: ToolDecl = ToolDecl::new("eval", Tier::Exec);
        let spec = WRITE.spec("Write a file.", json!({"type": "object"}));
        assert_eq!(
            spec,
            ToolSpec::new(
                "write",
                "Write a file.",
                Tier::Write,
                json!({"type": "object"})
            )
        );
        assert_eq!(
            WRITE.mcp_hints(),
            McpHints {
                destructive: true,
                idempotent: true,
                open_world: false
            }
        );
        assert_eq!(
            EVAL.mcp_hints(),
            McpHints {
                destructive: true,
                idempotent: false,
                open_world: true
            }
        );
    }
}
