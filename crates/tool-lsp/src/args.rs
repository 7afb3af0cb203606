//! The arguments of the `lsp` tool: which operation, where, and the bounds
//! of one call; and the caps on how many answers one call shows.

use schemars::JsonSchema;
use serde::Deserialize;
use tool_core::staging::DiffContext;
use tool_core::ToolError;

pub(crate) const REFERENCES_CAP: usize = 50;
pub(crate) const WORKSPACE_SYMBOLS_CAP: usize = 100;
pub(crate) const DOCUMENT_SYMBOLS_CAP: usize = 200;
pub(crate) const CODE_ACTIONS_CAP: usize = 30;
pub(crate) const CHECKER_CAP: usize = 200;

/// Which operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Op {
    /// Errors and warnings of `file`; of up to 20 files with a glob (`"src/**/*.py"`);
    /// with `file: "*"` the project checker runs.
    Diagnostics,
    /// Where the symbol is declared.
    Definition,
    /// Where its type is declared.
    TypeDefinition,
    /// Concrete implementations.
    Implementation,
    /// Every use (capped at 50).
    References,
    /// Signature and doc comment.
    Hover,
    /// Workspace search with `query` (capped at 100), or the symbols of `file` (capped at 200).
    Symbols,
    /// Quick fixes the server offers at the position.
    CodeActions,
    /// Which servers run, for which roots, and why others cannot start.
    Status,
    /// Restart the server for `file`'s root (all servers without `file`).
    Reload,
    /// Who calls the function at the position: each call site and its caller.
    IncomingCalls,
    /// What the function at the position calls: each callee and where.
    OutgoingCalls,
    /// The types the type at the position extends or implements.
    Supertypes,
    /// The types that extend or implement the type at the position.
    Subtypes,
    /// The signature of the call at the position, the active parameter marked.
    SignatureHelp,
    /// What each server for `file` advertises (why an op is refused).
    Capabilities,
}

impl Op {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::Diagnostics => "diagnostics",
            Op::Definition => "definition",
            Op::TypeDefinition => "type_definition",
            Op::Implementation => "implementation",
            Op::References => "references",
            Op::Hover => "hover",
            Op::Symbols => "symbols",
            Op::CodeActions => "code_actions",
            Op::Status => "status",
            Op::Reload => "reload",
            Op::IncomingCalls => "incoming_calls",
            Op::OutgoingCalls => "outgoing_calls",
            Op::Supertypes => "supertypes",
            Op::Subtypes => "subtypes",
            Op::SignatureHelp => "signature_help",
            Op::Capabilities => "capabilities",
        }
    }

    pub(crate) fn needs_position(self) -> bool {
        matches!(
            self,
            Op::Definition
                | Op::TypeDefinition
                | Op::Implementation
                | Op::References
                | Op::Hover
                | Op::CodeActions
        )
    }
}

/// Arguments of `lsp`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LspArgs {
    /// The operation.
    pub op: Op,
    /// File relative to the workspace root (`"*"` for project-wide diagnostics, a glob
    /// such as `"src/**/*.py"` for the diagnostics of up to 20 files).
    #[serde(default)]
    pub file: Option<String>,
    /// 1-based line of the symbol.
    #[serde(default)]
    pub line: Option<u32>,
    /// The identifier on that line the question is about (never a column).
    #[serde(default)]
    pub symbol: Option<String>,
    /// Which occurrence of `symbol` on the line, 1-based, when it occurs more than once.
    #[serde(default)]
    pub occurrence: Option<u32>,
    /// Workspace symbol search text (op `symbols`).
    #[serde(default)]
    pub query: Option<String>,
    /// Op `symbols` with `file`: each symbol's signature too, and the local
    /// variables and parameters of functions (`true`); by default the
    /// outline only: line, kind, name and nesting.
    #[serde(default)]
    pub detail: Option<bool>,
    /// How long this call may wait for the server, 5 to 300 seconds (default: the
    /// configured bounds, 20 s a request, 60 s for indexing). Not the project checker's.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

/// The range `timeout_seconds` may take.
pub(crate) const CALL_TIMEOUT_SECONDS: std::ops::RangeInclusive<u64> = 5..=300;

/// Arguments of `lsp_rename`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RenameArgs {
    /// File relative to the workspace root where the symbol is; or, with
    /// `new_path`, the file or folder to move.
    pub file: String,
    /// 1-based line of the symbol (a symbol rename).
    #[serde(default)]
    pub line: Option<u32>,
    /// The identifier on that line to rename (a symbol rename).
    #[serde(default)]
    pub symbol: Option<String>,
    /// What to call it (a symbol rename).
    #[serde(default)]
    pub new_name: Option<String>,
    /// Move `file` (a file, or a folder of at most 1,000 files) here,
    /// relative to the workspace root, updating imports in other files as
    /// the language servers say; give no line, symbol or new_name then.
    #[serde(default)]
    pub new_path: Option<String>,
    /// Which occurrence of `symbol` on the line, 1-based, when it occurs more than once.
    #[serde(default)]
    pub occurrence: Option<u32>,
    /// Rename even when files that mention the symbol would be left unrenamed
    /// (C/C++ without a compile database refuses that otherwise).
    #[serde(default)]
    pub partial: bool,
    /// How long this call may wait for the server, 5 to 300 seconds.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
    /// Stage the change instead of writing it: the answer names an
    /// `edit_id` and shows the diff and the diagnostics it would cause;
    /// `resolve` accepts or discards it.
    #[serde(default)]
    pub stage: bool,
    /// With `stage`: lines of unchanged text the preview shows around each
    /// change, 0 to 10; default 1 (or the run's `[staging] diff_context`).
    #[serde(default)]
    pub diff_context: Option<DiffContext>,
}

/// A symbol rename, its arguments checked.
#[derive(Debug, Clone)]
pub(crate) struct SymbolRename {
    pub file: String,
    pub line: u32,
    pub symbol: String,
    pub new_name: String,
    pub occurrence: Option<u32>,
    pub partial: bool,
    pub timeout_seconds: Option<u64>,
    pub stage: bool,
    pub diff_context: Option<DiffContext>,
}

impl RenameArgs {
    /// The symbol rename these arguments ask for: `line`, `symbol` and
    /// `new_name` all given.
    pub(crate) fn symbol_rename(self) -> Result<SymbolRename, ToolError> {
        let missing = |field: &str| {
            ToolError::bad_args(format!(
                "missing `{field}`: a symbol rename takes file, line, symbol and new_name; a file or folder move takes file and new_path"
            ))
        };
        Ok(SymbolRename {
            line: self.line.ok_or_else(|| missing("line"))?,
            symbol: self.symbol.ok_or_else(|| missing("symbol"))?,
            new_name: self.new_name.ok_or_else(|| missing("new_name"))?,
            file: self.file,
            occurrence: self.occurrence,
            partial: self.partial,
            timeout_seconds: self.timeout_seconds,
            stage: self.stage,
            diff_context: self.diff_context,
        })
    }
}
