//! The two operations behind the tools: find, and stage a rewrite (`resolve`
//! is tool-core's, over the run's store).
//!
//! Each takes checked arguments, does the work synchronously (the tools run
//! it on a blocking thread) and returns the [`ToolOutput`] the model reads.

use crate::catalog::Lang;
use crate::excerpt::one_line;
use crate::format;
use crate::index::SearchIndex;
use crate::pattern::{check_text, compile, CompiledPattern, PatternError};
use crate::rewrite::{
    check_rewritten_text, check_size, check_template, plan_rewrite, FileRewrite, Rewriter,
};
use crate::rule::{self, RuleSpec};
use crate::search::{self, Keep, Scope, SearchOutcome, SearchPlan, DEFAULT_MAX_FILE_BYTES};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use tool_core::files::TransactionError;
use tool_core::format::thousands;
use tool_core::fs::FileKind;
use tool_core::staging::{DiffContext, EditStore, StagedChange, StagedFile, PREVIEW_LINES};
use tool_core::{CancellationToken, ToolError, ToolOutput, Workspace};

/// The largest `max_results` accepted.
pub const MAX_RESULTS_LIMIT: usize = 1000;
pub const DEFAULT_MAX_RESULTS: usize = 50;

fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, std::num::NonZero::get)
}

fn pattern_error(e: PatternError) -> ToolError {
    ToolError::bad_args(e.to_string())
}

/// What to search for: a pattern (compiled through the ladder) or a rule
/// (compiled by ast-grep-config).
#[derive(Debug, Clone)]
pub enum QuerySpec {
    Pattern(String),
    Rule(Box<RuleSpec>),
}

impl QuerySpec {
    /// Read `pattern` or `rule`: exactly one must be given.
    pub fn from_args(pattern: Option<&str>, rule: Option<&Value>) -> Result<QuerySpec, ToolError> {
        match (pattern, rule) {
            (Some(p), None) => {
                check_text(p).map_err(pattern_error)?;
                Ok(QuerySpec::Pattern(p.to_string()))
            }
            (None, Some(r)) => Ok(QuerySpec::Rule(Box::new(
                rule::read(r).map_err(ToolError::bad_args)?,
            ))),
            (Some(_), Some(_)) => Err(ToolError::bad_args(
                "give either `pattern` or `rule`, not both",
            )),
            (None, None) => Err(ToolError::bad_args(
                "give `pattern` (a code fragment such as `foo($X)`) or `rule` (ast-grep rule YAML)",
            )),
        }
    }

    /// The query as the result's header shows it.
    pub fn shown(&self) -> String {
        match self {
            QuerySpec::Pattern(p) => p.trim().to_string(),
            QuerySpec::Rule(r) => r.shown(),
        }
    }

    /// Compile for one language: `Ok(Err(why))` when it does not parse or
    /// compile there (another language may take it), `Err` when it is
    /// wrong whatever the language.
    fn compile(&self, lang: Lang) -> Result<Result<CompiledPattern, String>, ToolError> {
        match self {
            QuerySpec::Pattern(p) => match compile(lang, p) {
                Ok(c) => Ok(Ok(c)),
                Err(PatternError::Unparseable(why)) => Ok(Err(why)),
                Err(e) => Err(pattern_error(e)),
            },
            QuerySpec::Rule(r) => Ok(r.compile(lang)),
        }
    }

    /// The language the rule document names, if any.
    fn own_language(&self) -> Option<&str> {
        match self {
            QuerySpec::Pattern(_) => None,
            QuerySpec::Rule(r) => r.language.as_deref(),
        }
    }
}

/// Resolve `path` and `language` and compile the pattern for every language
/// that will be searched.
pub fn scope(
    ws: &Workspace,
    pattern: &str,
    path: Option<&str>,
    language: Option<&str>,
) -> Result<Scope, ToolError> {
    // Size and nesting first: a 10 MB pattern is refused before it is read
    // by 40 grammars.
    check_text(pattern).map_err(pattern_error)?;
    let paths: Vec<String> = path.into_iter().map(str::to_string).collect();
    scope_for(
        ws,
        &QuerySpec::Pattern(pattern.to_string()),
        &paths,
        language,
    )
}

/// Whether a `path` entry is a glob rather than a path.
fn is_glob(p: &str) -> bool {
    p.contains(['*', '?', '[', '{'])
}

/// Resolve the paths (files, directories, globs) and the language, and
/// compile the query for every language that will be searched.
pub fn scope_for(
    ws: &Workspace,
    query: &QuerySpec,
    paths: &[String],
    language: Option<&str>,
) -> Result<Scope, ToolError> {
    let mut targets = Vec::new();
    let mut globs = Vec::new();
    for p in paths {
        let p = p.trim();
        if p.is_empty() || p == "." {
            targets.push(ws.root().to_path_buf());
        } else if is_glob(p) {
            globs.push(p.to_string());
        } else {
            targets.push(ws.resolve_existing(p)?);
        }
    }
    if targets.is_empty() && globs.is_empty() {
        targets.push(ws.root().to_path_buf());
    }
    let globs = if globs.is_empty() {
        None
    } else {
        let mut b = ignore::overrides::OverrideBuilder::new(ws.root());
        for g in &globs {
            b.add(g).map_err(|e| {
                ToolError::bad_args(format!("argument `path`: `{g}` is not a valid glob: {e}"))
            })?;
        }
        Some(
            b.build()
                .map_err(|e| ToolError::bad_args(format!("argument `path`: {e}")))?,
        )
    };
    // Decided on a handle, not followed through a link: only a regular file
    // or a directory is searched.
    let mut kinds = Vec::new();
    for t in &targets {
        let shown = ws.relative(t);
        let is_file = match ws.dir().kind(t)? {
            Some(FileKind::Regular) => true,
            Some(FileKind::Directory) => false,
            Some(kind) => {
                return Err(ToolError::bad_args(format!(
                    "`{shown}` is {}, not a regular file or a directory; give a source file or a folder",
                    kind.a()
                )))
            }
            None => {
                return Err(ToolError::bad_args(format!(
                    "`{shown}` does not exist in the workspace; check the path (relative to the workspace root)"
                )))
            }
        };
        kinds.push(is_file);
    }
    // No target inside another (each file is searched once).
    let mut order: Vec<usize> = (0..targets.len()).collect();
    order.sort_by_key(|&i| targets[i].components().count());
    let mut kept: Vec<(PathBuf, bool)> = Vec::new();
    for i in order {
        let t = &targets[i];
        if !kept
            .iter()
            .any(|(k, is_file)| !is_file && t.starts_with(k) || k == t)
        {
            kept.push((t.clone(), kinds[i]));
        }
    }
    kept.sort();
    let mut shown: Vec<String> = kept.iter().map(|(t, _)| ws.relative(t)).collect();
    shown.extend(globs_shown(&globs, paths));
    let shown = shown.join(", ");
    let single_file = kept.len() == 1 && kept[0].1 && globs.is_none();
    if kept.is_empty() {
        // Only globs: they are matched from the root.
        kept.push((ws.root().to_path_buf(), false));
    }
    let language = match (language, query.own_language()) {
        (Some(l), Some(own)) if !l.trim().is_empty() => {
            let (a, b) = (
                Lang::from_id(l).map_err(ToolError::bad_args)?,
                Lang::from_id(own).map_err(ToolError::bad_args)?,
            );
            if a != b {
                return Err(ToolError::bad_args(format!(
                    "the rule says `language: {own}` but the call asks for `{l}`; give one language"
                )));
            }
            Some(l)
        }
        (Some(l), _) if !l.trim().is_empty() => Some(l),
        (_, own) => own,
    };
    let explicit = match language {
        Some(l) if !l.trim().is_empty() => Some(Lang::from_id(l).map_err(ToolError::bad_args)?),
        _ => None,
    };
    let must = |lang: Lang| -> Result<CompiledPattern, ToolError> {
        query.compile(lang)?.map_err(ToolError::bad_args)
    };
    let (patterns, uncompiled, explicit_flag) = match (explicit, single_file) {
        (Some(lang), _) => (vec![must(lang)?], Vec::new(), true),
        (None, true) => {
            let lang = Lang::from_path(&kept[0].0).ok_or_else(|| {
                ToolError::bad_args(format!(
                    "cannot infer the language of `{shown}` from its extension; pass `language` (one of {})",
                    Lang::id_list()
                ))
            })?;
            (vec![must(lang)?], Vec::new(), false)
        }
        (None, false) => {
            let mut ok: Vec<CompiledPattern> = Vec::new();
            let mut failed = Vec::new();
            for lang in Lang::all() {
                match query.compile(lang)? {
                    Ok(p) => ok.push(p),
                    Err(_) => failed.push(lang),
                }
            }
            if ok.is_empty() {
                return Err(ToolError::bad_args(format!(
                    "unparseable {}: `{}` parses in none of the {} languages; pass `language` to see where it breaks in yours",
                    if matches!(query, QuerySpec::Rule(_)) { "rule" } else { "pattern" },
                    one_line(&query.shown(), 80),
                    Lang::all().count()
                )));
            }
            (ok, failed, false)
        }
    };
    let mut targets: Vec<PathBuf> = kept.into_iter().map(|(t, _)| t).collect();
    if globs.is_some()
        && targets == [ws.root().to_path_buf()]
        && !paths.iter().any(|p| !is_glob(p.trim()))
    {
        // Only globs: the root is walked once, through them.
        targets.clear();
    }
    Ok(Scope {
        target: targets
            .first()
            .cloned()
            .unwrap_or_else(|| ws.root().to_path_buf()),
        targets,
        globs,
        shown,
        plan: SearchPlan {
            patterns,
            uncompiled,
            explicit: explicit_flag,
            rewriters: None,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            threads: threads(),
            keep: Keep::All,
        },
    })
}

/// The globs of `path`, as given.
fn globs_shown(globs: &Option<ignore::overrides::Override>, paths: &[String]) -> Vec<String> {
    if globs.is_none() {
        return Vec::new();
    }
    paths
        .iter()
        .map(|p| p.trim())
        .filter(|p| is_glob(p))
        .map(str::to_string)
        .collect()
}

fn run_search(
    scope: &Scope,
    ws: &Workspace,
    index: Option<&SearchIndex>,
    cancel: &CancellationToken,
) -> Result<SearchOutcome, ToolError> {
    search::run_indexed(
        &scope.plan,
        ws.dir(),
        &scope.targets,
        scope.globs.as_ref(),
        index,
        cancel,
    )
    .map_err(|e| {
        ToolError::failed(format!(
            "cannot start the search threads ({e}); nothing was searched — try again when the system has resources to spare"
        ))
    })
}

fn check_max_results(n: Option<u64>) -> Result<usize, ToolError> {
    match n {
        None => Ok(DEFAULT_MAX_RESULTS),
        Some(0) => Err(ToolError::bad_args(
            "argument `max_results`: 0 would show nothing; give 1 to 1000 (default 50)",
        )),
        Some(n) if n as usize > MAX_RESULTS_LIMIT => Err(ToolError::bad_args(format!(
            "argument `max_results`: {n} is more than the {MAX_RESULTS_LIMIT} a result may show; narrow with path or a more specific pattern instead"
        ))),
        Some(n) => Ok(n as usize),
    }
}

fn cancelled(outcome: &SearchOutcome) -> Result<(), ToolError> {
    if outcome.cancelled {
        return Err(ToolError::Cancelled(
            "the search was cancelled before it finished; nothing was staged".into(),
        ));
    }
    Ok(())
}

/// Nothing could be searched because the pattern parses in none of the
/// languages of the files in scope: an error, not an empty result.
fn unparseable_in_scope(outcome: &SearchOutcome, pattern: &str) -> Result<(), ToolError> {
    if outcome.files_searched > 0 || outcome.not_searched.is_empty() {
        return Ok(());
    }
    let langs: Vec<String> = outcome
        .not_searched
        .iter()
        .map(|c| {
            format!(
                "{} ({})",
                c.lang,
                tool_core::format::plural(c.files, "file", "files")
            )
        })
        .collect();
    Err(ToolError::bad_args(format!(
        "unparseable pattern: `{}` does not parse in the languages of the files in scope: {}; pass `language` to see where it breaks",
        one_line(pattern.trim(), 80),
        langs.join(", ")
    )))
}

/// `ast_grep`.
pub fn find(
    ws: &Workspace,
    pattern: &str,
    path: Option<&str>,
    language: Option<&str>,
    max_results: Option<u64>,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let req = FindRequest {
        pattern: Some(pattern),
        paths: path.into_iter().map(str::to_string).collect(),
        language,
        max_results,
        ..Default::default()
    };
    find_with(ws, &req, cancel)
}

/// What `ast_grep` was asked to do, checked by [`find_with`].
#[derive(Debug, Clone, Default)]
pub struct FindRequest<'a> {
    /// The run's index, when it has one (see [`crate::index`]).
    pub index: Option<&'a SearchIndex>,
    pub pattern: Option<&'a str>,
    /// An ast-grep rule (YAML or JSON text, or an object), instead of a pattern.
    pub rule: Option<&'a Value>,
    /// Files, directories or globs; none means the whole workspace.
    pub paths: Vec<String>,
    pub language: Option<&'a str>,
    pub max_results: Option<u64>,
    /// Matches to pass over before the first one shown.
    pub skip: Option<u64>,
    /// Show how the pattern parsed.
    pub explain: bool,
}

/// `ast_grep` with every option.
pub fn find_with(
    ws: &Workspace,
    req: &FindRequest<'_>,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let max = check_max_results(req.max_results)?;
    let skip = req.skip.unwrap_or(0) as usize;
    let query = QuerySpec::from_args(req.pattern, req.rule)?;
    let mut scope = scope_for(ws, &query, &req.paths, req.language)?;
    // Only the page is shown, so only the matches up to its end are kept.
    scope.plan.keep = Keep::First(skip.saturating_add(max));
    let outcome = run_search(&scope, ws, req.index, cancel)?;
    cancelled(&outcome)?;
    let shown = query.shown();
    unparseable_in_scope(&outcome, &shown)?;
    let page = format::Page { skip, max };
    let mut text = format::find_text(&shown, &scope, &outcome, page);
    let mut structured = format::find_structured(&scope, &outcome, page);
    if req.explain {
        text.push('\n');
        text.push_str(&format::explain_text(&scope, &outcome));
        structured["explain"] = format::explain_structured(&scope, &outcome);
    }
    Ok(ToolOutput::text(text).with_structured(structured))
}

/// What `ast_edit` was asked to do, checked by [`stage_with`].
#[derive(Debug, Clone, Default)]
pub struct EditRequest<'a> {
    /// The run's index, when it has one: the edit finds its files and
    /// matches as `ast_grep` does, by the same freshness rules (see
    /// [`crate::index`]).
    pub index: Option<&'a SearchIndex>,
    pub pattern: &'a str,
    /// `None` only with a rule that has a `fix`.
    pub rewrite: Option<&'a str>,
    pub path: Option<&'a str>,
    pub language: Option<&'a str>,
    /// Stage files even where the rewrite introduces a syntax error.
    pub allow_parse_errors: bool,
    /// An ast-grep rule instead of `pattern`; its `fix` is the rewrite
    /// when `rewrite` is not given.
    pub rule: Option<&'a Value>,
    /// Files, directories or globs besides `path`.
    pub paths: Vec<String>,
    /// Several operations staged as one edit, instead of `pattern`/`rule`
    /// and `rewrite`.
    pub operations: Vec<EditOperation<'a>>,
    /// Lines of context the preview's diff shows around each change (and
    /// every later showing of the staged change).
    pub diff_context: DiffContext,
}

/// One {pattern or rule, rewrite} of an ast_edit.
#[derive(Debug, Clone, Default)]
pub struct EditOperation<'a> {
    pub pattern: Option<&'a str>,
    pub rule: Option<&'a Value>,
    pub rewrite: Option<&'a str>,
}

/// The most files one edit may change: more is refused, so one accept
/// never rewrites a whole tree by accident.
pub const MAX_EDIT_FILES: usize = 1000;

/// `ast_edit`: stage, never write.
pub fn stage(
    ws: &Workspace,
    store: &EditStore,
    pattern: &str,
    rewrite: &str,
    path: Option<&str>,
    language: Option<&str>,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let req = EditRequest {
        pattern,
        rewrite: Some(rewrite),
        path,
        language,
        ..Default::default()
    };
    stage_with(ws, store, &req, cancel)
}

/// An edit that would change more files than [`MAX_EDIT_FILES`]; `count`
/// is how many ("1,204", or "at least 1,001" when the search stopped).
fn over_limit(count: &str) -> ToolError {
    ToolError::bad_args(format!(
        "the edit would change {count} files; the limit is {} per edit — narrow with path (a folder or a glob) and stage it in parts; nothing was staged",
        thousands(MAX_EDIT_FILES)
    ))
}

/// One operation searched: what it matched and would rewrite.
struct PlannedOperation {
    shown: String,
    rewrite: String,
    scope: Scope,
    outcome: SearchOutcome,
}

/// Check one operation and search with it (nothing is staged here).
fn plan_operation(
    ws: &Workspace,
    req: &EditRequest<'_>,
    op: &EditOperation<'_>,
    paths: &[String],
    cancel: &CancellationToken,
) -> Result<PlannedOperation, ToolError> {
    let (language, allow_parse_errors) = (req.language, req.allow_parse_errors);
    let query = QuerySpec::from_args(op.pattern, op.rule)?;
    let rewrite: &str = match (&query, op.rewrite) {
        (_, Some(rw)) => rw,
        (QuerySpec::Rule(r), None) => r.fix.as_deref().ok_or_else(|| {
            ToolError::bad_args("give `rewrite`, or a rule with `fix`; nothing was staged")
        })?,
        (QuerySpec::Pattern(_), None) => {
            return Err(ToolError::bad_args(
                "give `rewrite`: what to put in place of each match (\"\" deletes them); nothing was staged",
            ))
        }
    };
    check_size(rewrite).map_err(ToolError::bad_args)?;
    let mut scope = scope_for(ws, &query, paths, language)?;
    let shown = query.shown();
    // A template naming an unknown metavariable is an error before anything
    // is searched or staged. With an inferred language every compiled
    // pattern binds the same names, so the first one speaks for all.
    if let Some(first) = scope.plan.patterns.first() {
        check_template(rewrite, first).map_err(ToolError::bad_args)?;
    }
    let rewriters: Vec<Rewriter> = scope
        .plan
        .patterns
        .iter()
        .map(|p| Rewriter::new(rewrite, p).with_diff_context(req.diff_context))
        .collect();
    scope.plan.rewriters = Some(rewriters);
    // The search stops once more files would change than one edit may.
    scope.plan.keep = Keep::Changes {
        limit: MAX_EDIT_FILES,
        allow_parse_errors,
    };
    let outcome = run_search(&scope, ws, req.index, cancel)?;
    cancelled(&outcome)?;
    if let Some(reached) = outcome.over_limit {
        return Err(over_limit(&format!("at least {}", thousands(reached))));
    }
    unparseable_in_scope(&outcome, &shown)?;
    Ok(PlannedOperation {
        shown,
        rewrite: rewrite.to_string(),
        scope,
        outcome,
    })
}

/// One file's rewrite, merged over the operations.
struct MergedFile {
    path: PathBuf,
    rewrite: FileRewrite,
    /// Which operation made each edit, same order as `rewrite.edits`.
    ops: Vec<usize>,
}

/// A file that no longer holds what an operation planned against; nothing
/// was staged.
fn changed_while_planning(rel: &str) -> ToolError {
    ToolError::failed(format!(
        "{rel} changed while the edit was being planned; nothing was staged — try again"
    ))
}

/// Merge the operations' rewrites per file (taking them out of the
/// outcomes); two operations changing overlapping code is an error naming
/// both and the place. A file two operations change is read again: its text
/// was dropped once each operation had planned it.
fn merge_operations(
    ws: &Workspace,
    planned: &mut [PlannedOperation],
    context: DiffContext,
) -> Result<BTreeMap<String, MergedFile>, ToolError> {
    let mut merged: BTreeMap<String, MergedFile> = BTreeMap::new();
    for (i, op) in planned.iter_mut().enumerate() {
        for f in &mut op.outcome.files {
            let Some(rw) = f.rewrite.take() else { continue };
            match merged.get_mut(&f.rel) {
                None => {
                    merged.insert(
                        f.rel.clone(),
                        MergedFile {
                            path: f.path.clone(),
                            ops: vec![i; rw.edits.len()],
                            rewrite: rw,
                        },
                    );
                }
                Some(m) => {
                    if m.rewrite.original != rw.original {
                        return Err(changed_while_planning(&f.rel));
                    }
                    let old = rw
                        .original
                        .read_text(ws.dir(), &f.path)
                        .ok()
                        .flatten()
                        .ok_or_else(|| changed_while_planning(&f.rel))?;
                    let mut all: Vec<(usize, usize, String, usize)> = m
                        .rewrite
                        .edits
                        .drain(..)
                        .zip(m.ops.drain(..))
                        .map(|(r, o)| (r.start, r.end, r.text, o))
                        .chain(rw.edits.into_iter().map(|r| (r.start, r.end, r.text, i)))
                        .collect();
                    all.sort_by_key(|a| (a.0, std::cmp::Reverse(a.1)));
                    for w in all.windows(2) {
                        if w[1].0 < w[0].1 && w[0].3 != w[1].3 {
                            let line = old[..w[1].0].matches('\n').count() + 1;
                            return Err(ToolError::bad_args(format!(
                                "operations {} and {} both change {}:{line}; stage them as two edits, one after the other; nothing was staged",
                                w[0].3.min(w[1].3) + 1,
                                w[0].3.max(w[1].3) + 1,
                                f.rel
                            )));
                        }
                    }
                    let nested = m.rewrite.nested + rw.nested;
                    let ops: Vec<usize> = all.iter().map(|a| a.3).collect();
                    let edits = all.into_iter().map(|(s, e, t, _)| (s, e, t)).collect();
                    let mut rewrite = plan_rewrite(&old, edits, context, |new| {
                        check_rewritten_text(f.lang, &old, new)
                    });
                    rewrite.nested += nested;
                    m.ops = ops;
                    m.rewrite = rewrite;
                }
            }
        }
    }
    Ok(merged)
}

/// `ast_edit` with every option: stage, never write. Every rewritten file is
/// parsed again first; one the rewrite leaves with a syntax error it did not
/// have is refused and named, unless `allow_parse_errors`. Several
/// operations are planned one by one against the files as they are, and
/// staged together as one edit.
pub fn stage_with(
    ws: &Workspace,
    store: &EditStore,
    req: &EditRequest<'_>,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let single = EditOperation {
        pattern: (req.rule.is_none() || !req.pattern.is_empty()).then_some(req.pattern),
        rule: req.rule,
        rewrite: req.rewrite,
    };
    let operations: Vec<EditOperation<'_>> = if req.operations.is_empty() {
        vec![single]
    } else {
        if !req.pattern.is_empty() || req.rule.is_some() || req.rewrite.is_some() {
            return Err(ToolError::bad_args(
                "give `operations`, or `pattern`/`rule` with `rewrite`, not both",
            ));
        }
        req.operations.clone()
    };
    let mut paths: Vec<String> = req.path.into_iter().map(str::to_string).collect();
    paths.extend(req.paths.iter().cloned());
    let mut planned: Vec<PlannedOperation> = operations
        .iter()
        .enumerate()
        .map(|(i, op)| {
            plan_operation(ws, req, op, &paths, cancel).map_err(|e| match e {
                ToolError::BadArgs(m) if operations.len() > 1 => {
                    ToolError::BadArgs(format!("operation {}: {m}", i + 1))
                }
                other => other,
            })
        })
        .collect::<Result<_, _>>()?;
    let merged = merge_operations(ws, &mut planned, req.diff_context)?;
    let first = &planned[0];
    let pattern = planned
        .iter()
        .map(|p| p.shown.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let rewrite = planned
        .iter()
        .map(|p| p.rewrite.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let matches: usize = planned.iter().map(|p| p.outcome.total_matches()).sum();
    let mut files = Vec::new();
    let mut refused = Vec::new();
    let mut nested = 0;
    let mut unchanged_replacements = 0;
    for (rel, m) in merged {
        let rw = m.rewrite;
        nested += rw.nested;
        if !rw.changes {
            unchanged_replacements += rw.replacements();
            continue;
        }
        if let Some(err) = rw.introduced_error {
            if !req.allow_parse_errors {
                refused.push(format::RefusedFile { rel, error: err });
                continue;
            }
        }
        files.push(StagedFile::replaced(
            m.path,
            rel,
            rw.original,
            rw.edits,
            rw.diff_lines,
        ));
    }
    if files.len() > MAX_EDIT_FILES {
        return Err(over_limit(&thousands(files.len())));
    }
    let refused_json: Vec<serde_json::Value> = refused
        .iter()
        .map(|r| {
            json!({
                "path": r.rel,
                "line": r.error.line,
                "column": r.error.column,
                "error": r.error.what,
            })
        })
        .collect();
    if files.is_empty() {
        let text = format::no_edit_text(
            &pattern,
            &rewrite,
            &first.scope,
            &first.outcome,
            unchanged_replacements,
            &refused,
        );
        return Ok(ToolOutput::text(text).with_structured(json!({
            "edit_id": null,
            "matches": matches,
            "replacements": 0,
            "files": [],
            "refused": refused_json,
        })));
    }
    let mut change = StagedChange::new("ast_edit").with_diff_context(req.diff_context);
    change.files = files;
    let replacements = change.edits();
    // Only the files the preview shows are read again.
    let preview = change.diff(ws.dir(), PREVIEW_LINES).map_err(|e| {
        let path = match &e {
            TransactionError::Drifted(paths) => paths.first(),
            TransactionError::NotAFile { path, .. } => Some(path),
            _ => None,
        };
        changed_while_planning(path.and_then(|p| change.rel_of(p)).unwrap_or("a file"))
    })?;
    let staged_files: Vec<String> = change.files.iter().map(|f| f.rel.clone()).collect();
    let file_count = change.files.len();
    let id = store.stage_change(change);
    let text = format::staged_text(
        &format::StagedSummary {
            id: &id,
            pattern: &pattern,
            rewrite: &rewrite,
            matches,
            replacements,
            nested,
            files: file_count,
            refused: &refused,
        },
        &first.scope,
        &first.outcome,
        &preview,
    );
    Ok(ToolOutput::text(text).with_structured(json!({
        "edit_id": id,
        "matches": matches,
        "replacements": replacements,
        "nested": nested,
        "operations": planned.len(),
        "files": staged_files,
        "refused": refused_json,
        "languages": format::language_ids(&first.outcome),
    })))
}
