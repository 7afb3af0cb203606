//! The tool structs themselves, thin: spec, argument parsing, cancellation.
//! The work is in [`crate::read::ops`] and [`crate::edit::rename`].

use crate::args::LspArgs;
use crate::args::RenameArgs;
use crate::edit::rename;
use crate::read::ops;
use crate::supervisor::LspSupervisor;
use serde_json::Value;
use std::sync::Arc;
use tool_core::{
    async_trait, CallContext, StagingLink, Tier, Tool, ToolDecl, ToolError, ToolOutput, ToolSpec,
};
use tracing::Instrument;

const LSP_DESCRIPTION: &str = include_str!("../descriptions/lsp.md");

const RENAME_DESCRIPTION: &str = include_str!("../descriptions/lsp_rename.md");

const CODE_ACTION_DESCRIPTION: &str = include_str!("../descriptions/lsp_code_action.md");

/// `lsp`: queries only.
pub(crate) const LSP: ToolDecl = ToolDecl::new("lsp", Tier::Read);
/// `lsp_rename`: writes every file the rename reaches.
pub(crate) const LSP_RENAME: ToolDecl =
    ToolDecl::new("lsp_rename", Tier::Write).hints(true, false, false);
/// `lsp_code_action`: writes the action's edits.
pub(crate) const LSP_CODE_ACTION: ToolDecl =
    ToolDecl::new("lsp_code_action", Tier::Write).hints(true, false, false);

async fn cancellable(
    cx: &CallContext,
    work: impl std::future::Future<Output = Result<ToolOutput, ToolError>>,
) -> Result<ToolOutput, ToolError> {
    tokio::select! {
        r = work => r,
        () = cx.cancel.cancelled() => Err(ToolError::Cancelled(
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
        LSP.spec(
            tool_core::tool::paragraph(LSP_DESCRIPTION),
            tool_core::schema_for::<LspArgs>(),
        )
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: LspArgs = tool_core::parse_args(args)?;
        if args.op == crate::args::Op::Diagnostics && args.file.as_deref() == Some("*") {
            crate::read::project_checks::allowed_on(cx.surface())?;
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
        LSP_RENAME.spec(
            tool_core::tool::paragraph(RENAME_DESCRIPTION),
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
        LSP_CODE_ACTION.spec(
            tool_core::tool::paragraph(CODE_ACTION_DESCRIPTION),
            tool_core::schema_for::<crate::edit::code_action::CodeActionArgs>(),
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

    /// The file the action is asked at, unless it is staged (a staged
    /// action writes nothing; its preview carries its delta). Files the
    /// server's edit reaches beyond it are not known before the call.
    fn writes(&self, args: &Value) -> Vec<String> {
        match tool_core::parse_args::<crate::edit::code_action::CodeActionArgs>(args.clone()) {
            Ok(a) if !a.stage => vec![a.file],
            _ => Vec::new(),
        }
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: crate::edit::code_action::CodeActionArgs = tool_core::parse_args(args)?;
        // Not cancellable half-way: the transaction commits or it does not.
        let _ = cx;
        crate::edit::code_action::run(&self.sup, &self.link, args).await
    }
}
