//! Every tool family this project has, compiled in or not, with the resource
//! that must be bound for it to register. `doctor` prints from this, and
//! the MCP annotations read each tool's hints from it.
//!
//! Invariant: a tool's name, tier, MCP hints and its family's resource are
//! declared once, by the crate that has the tool (its `FAMILY`); this list
//! only names the Cargo feature each family comes with. A family whose
//! crate is not compiled in cannot be asked, so for it alone [`fallback`]
//! keeps the names and tiers `doctor` still lists.

use tool_core::{FamilyDecl, Tier, ToolDecl};

/// A group of tools that one resource brings.
#[derive(Debug, Clone, Copy)]
pub struct ToolFamily {
    /// The Cargo feature that compiles it in.
    pub feature: &'static str,
    pub tools: &'static [ToolDecl],
    /// The resource that must be bound for these tools to register.
    pub resource: &'static str,
    pub compiled: bool,
}

const fn family(feature: &'static str, decl: FamilyDecl, compiled: bool) -> ToolFamily {
    ToolFamily {
        feature,
        tools: decl.tools,
        resource: decl.resource,
        compiled,
    }
}

pub const FAMILIES: &[ToolFamily] = &[
    family("files", crate::file_tools::FAMILY, true),
    family("lsp", LSP, cfg!(feature = "lsp")),
    family("astgrep", ASTGREP, cfg!(feature = "astgrep")),
    family("debug", DEBUG, cfg!(feature = "debug")),
    family("eval", EVAL, cfg!(feature = "eval")),
    family("ask", ASK, cfg!(feature = "ask")),
    family("vibe", VIBE, cfg!(feature = "vibe")),
];

/// The declaration of a tool by its name, from the families compiled in.
pub fn declared(name: &str) -> Option<&'static ToolDecl> {
    FAMILIES
        .iter()
        .filter(|f| f.compiled)
        .flat_map(|f| f.tools)
        .find(|t| t.name == name)
}

#[cfg(feature = "lsp")]
const LSP: FamilyDecl = tool_lsp::FAMILY;
#[cfg(not(feature = "lsp"))]
const LSP: FamilyDecl = fallback::LSP;

#[cfg(feature = "astgrep")]
const ASTGREP: FamilyDecl = tool_astgrep::FAMILY;
#[cfg(not(feature = "astgrep"))]
const ASTGREP: FamilyDecl = fallback::ASTGREP;

#[cfg(feature = "debug")]
const DEBUG: FamilyDecl = tool_debug::FAMILY;
#[cfg(not(feature = "debug"))]
const DEBUG: FamilyDecl = fallback::DEBUG;

#[cfg(feature = "eval")]
const EVAL: FamilyDecl = tool_eval::FAMILY;
#[cfg(not(feature = "eval"))]
const EVAL: FamilyDecl = fallback::EVAL;

#[cfg(feature = "ask")]
const ASK: FamilyDecl = tool_ask::FAMILY;
#[cfg(not(feature = "ask"))]
const ASK: FamilyDecl = fallback::ASK;

#[cfg(feature = "vibe")]
const VIBE: FamilyDecl = tool_vibe::FAMILY;
#[cfg(not(feature = "vibe"))]
const VIBE: FamilyDecl = fallback::VIBE;

/// The only copy of the tools' names and tiers outside their crates: what
/// `doctor` lists for a family whose crate is not compiled in (and so
/// cannot be asked). Nothing else reads it; the test below keeps it equal
/// to the crates' own declarations.
#[allow(dead_code)] // In a build with every family, only the test reads it.
mod fallback {
    use super::{FamilyDecl, Tier, ToolDecl};

    const fn names(tools: &'static [ToolDecl]) -> FamilyDecl {
        FamilyDecl {
            tools,
            resource: "(not compiled in)",
        }
    }

    pub(super) const LSP: FamilyDecl = names(&[
        ToolDecl::new("lsp", Tier::Read),
        ToolDecl::new("lsp_rename", Tier::Write),
        ToolDecl::new("lsp_code_action", Tier::Write),
    ]);
    pub(super) const ASTGREP: FamilyDecl = names(&[
        ToolDecl::new("ast_grep", Tier::Read),
        ToolDecl::new("ast_edit", Tier::Write),
        ToolDecl::new("resolve", Tier::Write),
    ]);
    pub(super) const DEBUG: FamilyDecl = names(&[ToolDecl::new("debug", Tier::Exec)]);
    pub(super) const EVAL: FamilyDecl = names(&[ToolDecl::new("eval", Tier::Exec)]);
    pub(super) const ASK: FamilyDecl = names(&[ToolDecl::new("ask_user", Tier::Read)]);
    pub(super) const VIBE: FamilyDecl = names(&[
        ToolDecl::new("vibe_spawn", Tier::Read),
        ToolDecl::new("vibe_send", Tier::Read),
        ToolDecl::new("vibe_wait", Tier::Read),
        ToolDecl::new("vibe_kill", Tier::Read),
        ToolDecl::new("vibe_list", Tier::Read),
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_and_tiers(family: FamilyDecl) -> Vec<(&'static str, Tier)> {
        family.tools.iter().map(|t| (t.name, t.tier)).collect()
    }

    #[test]
    fn each_fallback_names_what_its_crate_declares() {
        for (compiled, fallback) in [
            (LSP, fallback::LSP),
            (ASTGREP, fallback::ASTGREP),
            (DEBUG, fallback::DEBUG),
            (EVAL, fallback::EVAL),
            (ASK, fallback::ASK),
            (VIBE, fallback::VIBE),
        ] {
            assert_eq!(names_and_tiers(compiled), names_and_tiers(fallback));
        }
    }

    #[test]
    fn a_declaration_is_found_by_name_among_the_compiled_families() {
        assert_eq!(declared("write"), Some(&crate::file_tools::WRITE));
        assert_eq!(declared("nope"), None);
    }
}
