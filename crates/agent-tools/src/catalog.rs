//! Every tool family this project has, compiled in or not, with the resource
//! that must be bound for it to register. `doctor` prints from this.

use tool_core::Tier;

/// A group of tools that one resource brings.
#[derive(Debug, Clone, Copy)]
pub struct ToolFamily {
    /// The Cargo feature that compiles it in.
    pub feature: &'static str,
    pub tools: &'static [(&'static str, Tier)],
    /// The resource that must be bound for these tools to register.
    pub resource: &'static str,
    pub compiled: bool,
}

pub const FAMILIES: &[ToolFamily] = &[
    ToolFamily {
        feature: "files",
        tools: &[
            ("read", Tier::Read),
            ("write", Tier::Write),
            ("edit", Tier::Write),
        ],
        resource: "working directory (the standalone host's own file tools)",
        compiled: true,
    },
    ToolFamily {
        feature: "lsp",
        tools: &[
            ("lsp", Tier::Read),
            ("lsp_rename", Tier::Write),
            ("lsp_code_action", Tier::Write),
        ],
        resource: "language-server supervisor + working directory",
        compiled: cfg!(feature = "lsp"),
    },
    ToolFamily {
        feature: "astgrep",
        tools: &[
            ("ast_grep", Tier::Read),
            ("ast_edit", Tier::Write),
            ("resolve", Tier::Write),
        ],
        resource: "tree-sitter parser",
        compiled: cfg!(feature = "astgrep"),
    },
    ToolFamily {
        feature: "debug",
        tools: &[("debug", Tier::Exec)],
        resource: "debug-session supervisor + working directory + conversation id",
        compiled: cfg!(feature = "debug"),
    },
    ToolFamily {
        feature: "eval",
        tools: &[("eval", Tier::Exec)],
        resource: "kernel factory",
        compiled: cfg!(feature = "eval"),
    },
    ToolFamily {
        feature: "ask",
        tools: &[("ask_user", Tier::Read)],
        resource: "question port + target space",
        compiled: cfg!(feature = "ask"),
    },
    ToolFamily {
        feature: "vibe",
        tools: &[
            ("vibe_spawn", Tier::Read),
            ("vibe_send", Tier::Read),
            ("vibe_wait", Tier::Read),
            ("vibe_kill", Tier::Read),
            ("vibe_list", Tier::Read),
        ],
        resource: "vibe roster (vibe mode on)",
        compiled: cfg!(feature = "vibe"),
    },
];
