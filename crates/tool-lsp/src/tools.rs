//! The tool structs themselves, thin: spec, argument parsing, cancellation.
//! The work is in [`crate::ops`] and [`crate::rename`].

use crate::args::LspArgs;
use crate::args::RenameArgs;
use crate::ops;
use crate::rename;
use crate::supervisor::LspSupervisor;
use serde_json::Value;
use std::sync::Arc;
use tool_core::{
    async_trait, CallContext, StagingLink, Tier, Tool, ToolError, ToolOutput, ToolSpec,
};
use tracing::Instrument;

const LSP_DESCRIPTION: &str = "Ask the project's language server. Positions are `line` (1-based) plus `symbol` \
(the identifier on that line), never a column; if the symbol occurs twice on the line pass `occurrence`. \
Ops: diagnostics (file; a glob such as \"src/**/*.py\" for up to 20 files, the truncation stated; or \"*\" \
for the project checker — it runs the project's build, so only on a surface with exec tools), definition, type_definition, implementation, \
references (capped at 50), hover, symbols (`query` for a workspace search capped at 100, or `file` for its symbols \
capped at 200), code_actions (quick fixes at the position, listed not applied), status (which servers run, \
for which roots, and why others cannot start), reload (restart the server for `file`'s root, or all), \
incoming_calls / outgoing_calls (callers with each call site, or callees, of the function at the position), \
supertypes / subtypes (of the type at the position), signature_help (at a called name or an argument; the \
active parameter marked «…»), capabilities (what each server for `file` offers, so you see why an op is \
refused). Locations name their enclosing symbol `(in Class/method)`. \
`timeout_seconds` (5–300) bounds this call's wait on the server.";

const RENAME_DESCRIPTION: &str = "Rename a symbol across the project with the language server: every reference in \
every file changes at once, or nothing does. Give the `file`, the 1-based `line`, the `symbol` on that line and \
the `new_name`. Files the server's project model may not cover (a tests/ folder outside its configuration, C \
without a compile database) are opened in it first. Answers with the files changed and the number of edits, and \
lists every file that still mentions the old name (\"not renamed — …\"). For C/C++ without a compile database, a \
rename that would leave such mentions is refused unless `partial: true`. `timeout_seconds` (5–300) bounds the wait \
on the server. With `stage: true` nothing is written: the answer names an `edit_id`, shows the diff and the errors and \
warnings the language servers would report after it, and `resolve` accepts (all files or none, refused if any \
changed since) or discards it. To move a file or a folder (at most 1,000 files) give `file` and `new_path` instead \
of line, symbol and new_name: imports in other files are updated as the language servers say, and the edits and \
the move are written together or not at all.";

const CODE_ACTION_DESCRIPTION: &str = "Apply one code action (quick fix, refactoring) the language server offers at a \
position: `file`, 1-based `line` and the `symbol` on it as in `lsp`, and `action` — its number in the list `lsp` op \
`code_actions` gives there, or a piece of its title matching exactly one. The action's edit and the edits its command \
sends are written together, or not at all. With `stage: true` nothing is written: the answer names an `edit_id`, \
shows the diff and the diagnostics after it, and `resolve` accepts or discards it.";

async fn cancellable(
    cx: &CallContext,
    work: impl std::future::Future<Output = Result<ToolOutput, ToolError>>,
) -> Result<ToolOutput, ToolError> {
    tokio::select! {
        r = work => r,
        _ = cx.cancel.cancelled() => Err(ToolError::Cancelled(
            "the call was cancelled; the language server keeps running".into(),
        )),
    }
}

/// `lsp`: read-tier queries.
pub struct LspTool {
    sup: Arc<LspSupervisor>,
}

impl LspTool {
    pub fn new(sup: Arc<LspSupervisor>) -> Self {
        LspTool { sup }
    }
}

#[async_trait]
impl Tool for LspTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "lsp",
            LSP_DESCRIPTION,
            Tier::Read,
            tool_core::schema_for::<LspArgs>(),
        )
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: LspArgs = tool_core::parse_args(args)?;
        if args.op == crate::args::Op::Diagnostics && args.file.as_deref() == Some("*") {
            crate::checker::allowed_on(cx.surface())?;
        }
        let span = tracing::info_span!("lsp", op = args.op.name());
        cancellable(cx, ops::run(&self.sup, args))
            .instrument(span)
            .await
    }
}

/// `lsp_rename`: write tier, so a read-only surface never sees it.
pub struct LspRenameTool {
    sup: Arc<LspSupervisor>,
    /// Where `stage: true` keeps the rename.
    link: StagingLink,
}

impl LspRenameTool {
    pub fn new(sup: Arc<LspSupervisor>) -> Self {
        LspRenameTool {
            sup,
            link: StagingLink::default(),
        }
    }

    pub fn with_link(mut self, link: StagingLink) -> Self {
        self.link = link;
        self
    }
}

#[async_trait]
impl Tool for LspRenameTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "lsp_rename",
            RENAME_DESCRIPTION,
            Tier::Write,
            tool_core::schema_for::<RenameArgs>(),
        )
    }

    fn describe_call(&self, args: &Value) -> String {
        let get = |k: &str| {
            args.get(k)
                .map(|v| v.to_string().trim_matches('"').to_string())
                .unwrap_or_default()
        };
        if args.get("new_path").is_some() {
            return format!(
                "move {} to {}, updating imports across the project",
                get("file"),
                get("new_path")
            );
        }
        let staged = if args.get("stage").and_then(Value::as_bool) == Some(true) {
            " (staged: nothing is written until resolve accepts it)"
        } else {
            ""
        };
        format!(
            "rename `{}` at {}:{} to `{}` across the project{staged}",
            get("symbol"),
            get("file"),
            get("line"),
            get("new_name")
        )
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: RenameArgs = tool_core::parse_args(args)?;
        // Not cancellable half-way: the transaction commits or it does not.
        let _ = cx;
        rename::run(&self.sup, &self.link, args).await
    }
}

/// `lsp_code_action`: write tier; applies or stages one code action.
pub struct LspCodeActionTool {
    sup: Arc<LspSupervisor>,
    link: StagingLink,
}

impl LspCodeActionTool {
    pub fn new(sup: Arc<LspSupervisor>, link: StagingLink) -> Self {
        LspCodeActionTool { sup, link }
    }
}

#[async_trait]
impl Tool for LspCodeActionTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "lsp_code_action",
            CODE_ACTION_DESCRIPTION,
            Tier::Write,
            tool_core::schema_for::<crate::code_action::CodeActionArgs>(),
        )
    }

    fn describe_call(&self, args: &Value) -> String {
        let get = |k: &str| {
            args.get(k)
                .map(|v| v.to_string().trim_matches('"').to_string())
                .unwrap_or_default()
        };
        format!(
            "apply code action {} at {}:{} (`{}`)",
            get("action"),
            get("file"),
            get("line"),
            get("symbol")
        )
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: crate::code_action::CodeActionArgs = tool_core::parse_args(args)?;
        // Not cancellable half-way: the transaction commits or it does not.
        let _ = cx;
        crate::code_action::run(&self.sup, &self.link, args).await
    }
}
