//! The two tools as the model sees them: typed arguments, specs, and thin
//! `call`s that run the [`ops`](crate::ops) on a blocking thread. `resolve`
//! is tool-core's ([`tool_core::staging::ResolveTool`]).

use crate::index::SearchIndex;
use crate::ops;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use tool_core::staging::{DiffContext, EditStore};
use tool_core::{
    async_trait, parse_args, schema_for, CallContext, StagingLink, Tier, Tool, ToolDecl, ToolError,
    ToolOutput, ToolSpec, Workspace,
};

/// Files, directories or globs: one, or a list.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PathArg {
    One(String),
    Many(Vec<String>),
}

impl PathArg {
    /// Every entry, in order.
    pub fn entries(path: &Option<PathArg>) -> Vec<String> {
        match path {
            None => Vec::new(),
            Some(PathArg::One(p)) => vec![p.clone()],
            Some(PathArg::Many(v)) => v.clone(),
        }
    }
}

/// Arguments of `ast_grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstGrepArgs {
    /// Code fragment to find, with metavariables: `$NAME` matches one node,
    /// `$$$NAME` a run of siblings, `$_` anything without binding. A name
    /// used twice must match the same code, e.g. `$X == $X`. Give this or
    /// `rule`.
    #[serde(default)]
    pub pattern: Option<String>,
    /// An ast-grep rule instead of a pattern, as YAML or JSON text (or an
    /// object): `pattern` (with `context`/`selector`), `kind`, `regex`,
    /// `inside`/`has`/`precedes`/`follows` (with `stopBy`, `field`),
    /// `all`/`any`/`not`/`matches`, plus `constraints` and `utils` in a
    /// document with `rule:`. Needs `language` (or the rule's own).
    #[serde(default)]
    pub rule: Option<Value>,
    /// File, directory or glob (`src/**/*.py`) relative to the workspace
    /// root, or a list of them; default the whole workspace.
    #[serde(default)]
    pub path: Option<PathArg>,
    /// Grammar id (python, rust, typescript, tsx, javascript, go, java, c,
    /// cpp, dart, …); it overrides detection (cpp also reads `.h`).
    /// Inferred from the extension when `path` is one file; without it a
    /// directory is searched in every language the pattern parses in.
    #[serde(default)]
    pub language: Option<String>,
    /// Matches to show, 1 to 1000; default 50. The total is always counted.
    #[serde(default)]
    pub max_results: Option<u64>,
    /// Matches to pass over first (for paging; the order is fixed: by path,
    /// then position); default 0.
    #[serde(default)]
    pub skip: Option<u64>,
    /// Also show how the pattern parsed: the context it was read in, the
    /// syntax tree with node kinds, and where each metavariable sits.
    #[serde(default)]
    pub explain: bool,
}

/// Arguments of `ast_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstEditArgs {
    /// What to match, as in ast_grep. Give this or `rule`.
    #[serde(default)]
    pub pattern: Option<String>,
    /// An ast-grep rule instead of a pattern, as in ast_grep; its `fix` is
    /// the rewrite when `rewrite` is not given.
    #[serde(default)]
    pub rule: Option<Value>,
    /// What to put in place of each match; `$NAME` and `$$$NAME` are
    /// replaced by what they captured.
    #[serde(default)]
    pub rewrite: Option<String>,
    /// File, directory or glob, or a list of them, relative to the
    /// workspace root; default the whole workspace.
    #[serde(default)]
    pub path: Option<PathArg>,
    /// Grammar id, as in ast_grep.
    #[serde(default)]
    pub language: Option<String>,
    /// Stage files even where the rewrite leaves a syntax error the file did
    /// not have, by the grammar or the language servers; default false
    /// (such files are refused and named).
    #[serde(default)]
    pub allow_parse_errors: bool,
    /// Several rewrites staged together as one edit (accepted or discarded
    /// as one), instead of `pattern`/`rule` and `rewrite`: each is planned
    /// against the files as they are; two changing the same code is an
    /// error. At most 1,000 files per edit.
    #[serde(default)]
    pub operations: Vec<OperationArg>,
    /// Lines of unchanged text the preview shows around each change, 0 to
    /// 10; default 1 (or the run's `[staging] diff_context`).
    #[serde(default)]
    pub diff_context: Option<DiffContext>,
}

/// One rewrite of an ast_edit with several.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperationArg {
    /// What to match, as in ast_grep. Give this or `rule`.
    #[serde(default)]
    pub pattern: Option<String>,
    /// An ast-grep rule instead of a pattern; its `fix` is the rewrite when
    /// `rewrite` is not given.
    #[serde(default)]
    pub rule: Option<Value>,
    /// What to put in place of each match.
    #[serde(default)]
    pub rewrite: Option<String>,
}

/// `ast_grep`: search only.
pub const AST_GREP: ToolDecl = ToolDecl::new("ast_grep", Tier::Read);
/// `ast_edit`: only stages a change; nothing is written until `resolve`.
pub const AST_EDIT: ToolDecl = ToolDecl::new("ast_edit", Tier::Write).hints(false, false, false);

/// A description file's text: the prose as reviewed, without the trailing
/// newline an editor adds.
fn description(text: &'static str) -> &'static str {
    text.trim_end()
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::failed(format!("the search thread failed: {e}")))?
}

/// `ast_grep`: structural search.
pub struct AstGrepTool {
    workspace: Workspace,
    /// What the run's earlier searches read and parsed.
    index: Arc<SearchIndex>,
}

impl AstGrepTool {
    /// With an index of the default budget of its own.
    pub fn new(workspace: Workspace) -> Self {
        AstGrepTool::with_index(workspace, Arc::default())
    }

    pub fn with_index(workspace: Workspace, index: Arc<SearchIndex>) -> Self {
        AstGrepTool { workspace, index }
    }
}

#[async_trait]
impl Tool for AstGrepTool {
    fn spec(&self) -> ToolSpec {
        AST_GREP.spec(
            description(include_str!("../descriptions/ast_grep.md")),
            schema_for::<AstGrepArgs>(),
        )
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: AstGrepArgs = parse_args(args)?;
        let ws = self.workspace.clone();
        let cancel = cx.cancel.clone();
        let index = self.index.clone();
        blocking(move || {
            let req = ops::FindRequest {
                index: Some(&index),
                pattern: args.pattern.as_deref(),
                rule: args.rule.as_ref(),
                paths: PathArg::entries(&args.path),
                language: args.language.as_deref(),
                max_results: args.max_results,
                skip: args.skip,
                explain: args.explain,
            };
            ops::find_with(&ws, &req, &cancel)
        })
        .await
    }
}

/// `ast_edit`: structural rewrite, staged.
pub struct AstEditTool {
    workspace: Workspace,
    store: Arc<EditStore>,
    /// The run's search index, shared with `ast_grep`.
    index: Arc<SearchIndex>,
    /// Where the preview's diagnostics delta comes from, when linked.
    link: StagingLink,
}

impl AstEditTool {
    pub fn new(workspace: Workspace, store: Arc<EditStore>) -> Self {
        AstEditTool {
            workspace,
            store,
            index: Arc::default(),
            link: StagingLink::default(),
        }
    }

    /// Find files and matches through the run's index (`ast_grep`'s).
    pub fn with_index(mut self, index: Arc<SearchIndex>) -> Self {
        self.index = index;
        self
    }

    /// Add the language servers' diagnostics delta to every preview.
    pub fn with_link(mut self, link: StagingLink) -> Self {
        self.link = link;
        self
    }
}

#[async_trait]
impl Tool for AstEditTool {
    fn spec(&self) -> ToolSpec {
        AST_EDIT.spec(
            description(include_str!("../descriptions/ast_edit.md")),
            schema_for::<AstEditArgs>(),
        )
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: AstEditArgs = parse_args(args)?;
        let ws = self.workspace.clone();
        let store = self.store.clone();
        let cancel = cx.cancel.clone();
        let index = self.index.clone();
        let diff_context = self.link.diff_context_or(args.diff_context);
        let out = blocking(move || {
            let req = ops::EditRequest {
                index: Some(&index),
                pattern: args.pattern.as_deref().unwrap_or(""),
                rewrite: args.rewrite.as_deref(),
                path: None,
                language: args.language.as_deref(),
                allow_parse_errors: args.allow_parse_errors,
                rule: args.rule.as_ref(),
                paths: PathArg::entries(&args.path),
                operations: args
                    .operations
                    .iter()
                    .map(|o| ops::EditOperation {
                        pattern: o.pattern.as_deref(),
                        rule: o.rule.as_ref(),
                        rewrite: o.rewrite.as_deref(),
                    })
                    .collect(),
                diff_context,
            };
            ops::stage_with(&ws, &store, &req, &cancel)
        })
        .await?;
        with_diagnostics_delta(&self.link, &self.store, out, args.allow_parse_errors).await
    }
}

/// A staging result with the language servers' view of its change added:
/// the text section, and `diagnostics_after` in the structured part. A
/// change whose new problems include syntax errors by the servers' account
/// (a rewrite tree-sitter accepts that the language's own parser does not)
/// is discarded and refused like a grammar's parse failure, unless
/// `allow_parse_errors`.
pub async fn with_diagnostics_delta(
    link: &StagingLink,
    store: &EditStore,
    mut out: ToolOutput,
    allow_parse_errors: bool,
) -> Result<ToolOutput, ToolError> {
    let id = out
        .structured
        .as_ref()
        .and_then(|s| s.get("edit_id"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let Some((id, change)) = id.and_then(|id| Some((id.clone(), store.staged_change(&id)?))) else {
        return Ok(out);
    };
    if let Some(section) = link.diagnostics_delta(&change).await {
        if !section.syntax_errors.is_empty() && !allow_parse_errors {
            store.withdraw(
                &id,
                "its rewrite left syntax errors the language servers report",
            )?;
            let (mut rows, note) = tool_core::format::cap_list(
                section.syntax_errors,
                SYNTAX_ERRORS_LISTED,
                "narrow the edit",
            );
            rows.extend(note);
            return Err(ToolError::refused(format!(
                "the rewrite leaves syntax errors the language servers report (the grammar accepted it):\n{}\nnothing was staged; fix the rewrite, or pass allow_parse_errors: true to stage it anyway",
                rows.join("\n")
            )));
        }
        if let Some(Value::Object(obj)) = out.structured.as_mut() {
            obj.insert(
                "diagnostics_after".into(),
                Value::String(section.text.clone()),
            );
        }
        out.push_text(section.text);
    }
    Ok(out)
}

/// At most this many of a refused rewrite's syntax errors are listed.
const SYNTAX_ERRORS_LISTED: usize = 10;
