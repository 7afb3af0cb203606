//! The three operations behind the tools: find, stage a rewrite, resolve.
//!
//! Each takes checked arguments, does the work synchronously (the tools run
//! it on a blocking thread) and returns the [`ToolOutput`] the model reads.

use crate::catalog::Lang;
use crate::excerpt::one_line;
use crate::format;
use crate::pattern::{check_text, compile, CompiledPattern, PatternError};
use crate::rewrite::{check_size, check_template, Rewriter};
use crate::search::{self, Scope, SearchOutcome, SearchPlan, DEFAULT_MAX_FILE_BYTES};
use crate::store::{EditStore, NewEdit, StagedFile};
use serde_json::json;
use tool_core::fs::FileKind;
use tool_core::{CancellationToken, ToolError, ToolOutput, Workspace};

/// The largest `max_results` accepted.
pub const MAX_RESULTS_LIMIT: usize = 1000;
pub const DEFAULT_MAX_RESULTS: usize = 50;

fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}

fn pattern_error(e: PatternError) -> ToolError {
    ToolError::bad_args(e.to_string())
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
    // by 29 grammars.
    check_text(pattern).map_err(pattern_error)?;
    let target = match path {
        None => ws.root().to_path_buf(),
        Some(p) if p.trim().is_empty() || p.trim() == "." => ws.root().to_path_buf(),
        Some(p) => ws.resolve_existing(p)?,
    };
    let shown = ws.relative(&target);
    // Decided on a handle, not followed through a link: only a regular file
    // or a directory is searched.
    let is_file = match ws.dir().kind(&target)? {
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
    let explicit = match language {
        Some(l) if !l.trim().is_empty() => Some(Lang::from_id(l).map_err(ToolError::bad_args)?),
        _ => None,
    };
    let (patterns, uncompiled, explicit_flag) = match (explicit, is_file) {
        (Some(lang), _) => (
            vec![compile(lang, pattern).map_err(pattern_error)?],
            Vec::new(),
            true,
        ),
        (None, true) => {
            let lang = Lang::from_path(&target).ok_or_else(|| {
                ToolError::bad_args(format!(
                    "cannot infer the language of `{shown}` from its extension; pass `language` (one of {})",
                    Lang::id_list()
                ))
            })?;
            (
                vec![compile(lang, pattern).map_err(pattern_error)?],
                Vec::new(),
                false,
            )
        }
        (None, false) => {
            let mut ok: Vec<CompiledPattern> = Vec::new();
            let mut failed = Vec::new();
            for lang in Lang::all() {
                match compile(lang, pattern) {
                    Ok(p) => ok.push(p),
                    Err(PatternError::Unparseable(_)) => failed.push(lang),
                    Err(e) => return Err(pattern_error(e)),
                }
            }
            if ok.is_empty() {
                return Err(ToolError::bad_args(format!(
                    "unparseable pattern: `{}` parses in none of the {} languages; pass `language` to see where it breaks in yours",
                    one_line(pattern.trim(), 80),
                    Lang::all().count()
                )));
            }
            (ok, failed, false)
        }
    };
    Ok(Scope {
        target,
        shown,
        plan: SearchPlan {
            patterns,
            uncompiled,
            explicit: explicit_flag,
            rewriters: None,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            threads: threads(),
        },
    })
}

fn run_search(
    scope: &Scope,
    ws: &Workspace,
    cancel: &CancellationToken,
) -> Result<SearchOutcome, ToolError> {
    search::run(&scope.plan, ws.dir(), &scope.target, cancel).map_err(|e| {
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
    let max = check_max_results(max_results)?;
    let scope = scope(ws, pattern, path, language)?;
    let outcome = run_search(&scope, ws, cancel)?;
    cancelled(&outcome)?;
    unparseable_in_scope(&outcome, pattern)?;
    let text = format::find_text(pattern.trim(), &scope, &outcome, max);
    let structured = format::find_structured(&scope, &outcome, max);
    Ok(ToolOutput::text(text).with_structured(structured))
}

/// What `ast_edit` was asked to do, checked by [`stage_with`].
#[derive(Debug, Clone, Default)]
pub struct EditRequest<'a> {
    pub pattern: &'a str,
    pub rewrite: &'a str,
    pub path: Option<&'a str>,
    pub language: Option<&'a str>,
    /// Stage files even where the rewrite introduces a syntax error.
    pub allow_parse_errors: bool,
}

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
        rewrite,
        path,
        language,
        allow_parse_errors: false,
    };
    stage_with(ws, store, &req, cancel)
}

/// `ast_edit` with every option: stage, never write. Every rewritten file is
/// parsed again first; one the rewrite leaves with a syntax error it did not
/// have is refused and named, unless `allow_parse_errors`.
pub fn stage_with(
    ws: &Workspace,
    store: &EditStore,
    req: &EditRequest<'_>,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let (pattern, rewrite) = (req.pattern, req.rewrite);
    check_text(pattern).map_err(pattern_error)?;
    check_size(rewrite).map_err(ToolError::bad_args)?;
    let mut scope = scope(ws, pattern, req.path, req.language)?;
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
        .map(|p| Rewriter::new(rewrite, p))
        .collect();
    scope.plan.rewriters = Some(rewriters);
    let outcome = run_search(&scope, ws, cancel)?;
    cancelled(&outcome)?;
    unparseable_in_scope(&outcome, pattern)?;

    let matches = outcome.total_matches();
    let mut files = Vec::new();
    let mut refused = Vec::new();
    let mut nested = 0;
    let mut unchanged_replacements = 0;
    for f in &outcome.files {
        let Some(rw) = &f.rewrite else { continue };
        nested += rw.nested;
        if rw.new == rw.old {
            unchanged_replacements += rw.replacements;
            continue;
        }
        if let Some(err) = &rw.introduced_error {
            if !req.allow_parse_errors {
                refused.push(format::RefusedFile {
                    rel: f.rel.clone(),
                    error: err.clone(),
                });
                continue;
            }
        }
        files.push(StagedFile::new(
            f.path.clone(),
            f.rel.clone(),
            rw.old.clone(),
            rw.new.clone(),
            rw.replacements,
        ));
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
    let edit = NewEdit {
        pattern: pattern.trim().to_string(),
        rewrite: rewrite.to_string(),
        files,
    };
    if edit.files.is_empty() {
        let text = format::no_edit_text(
            pattern.trim(),
            rewrite,
            &scope,
            &outcome,
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
    let replacements = edit.replacements();
    let preview = format::diff_preview(&edit.files, format::PREVIEW_LINES);
    let staged_files: Vec<String> = edit.files.iter().map(|f| f.rel.clone()).collect();
    let file_count = edit.files.len();
    let id = store.stage(edit);
    let text = format::staged_text(
        &format::StagedSummary {
            id: &id,
            pattern: pattern.trim(),
            rewrite,
            matches,
            replacements,
            nested,
            files: file_count,
            refused: &refused,
        },
        &scope,
        &outcome,
        &preview,
    );
    Ok(ToolOutput::text(text).with_structured(json!({
        "edit_id": id,
        "matches": matches,
        "replacements": replacements,
        "nested": nested,
        "files": staged_files,
        "refused": refused_json,
        "languages": format::language_ids(&outcome),
    })))
}

/// `resolve`.
pub fn resolve(store: &EditStore, edit_id: &str, accept: bool) -> Result<ToolOutput, ToolError> {
    let id = edit_id.trim();
    if id.is_empty() {
        return Err(ToolError::bad_args(
            "empty edit_id; pass the id an ast_edit result named, e.g. \"edit_1\"",
        ));
    }
    if accept {
        let done = store.accept(id)?;
        let text = format!(
            "resolve {id}: accepted — {} written to {}: {}",
            tool_core::format::plural(done.replacements, "replacement", "replacements"),
            tool_core::format::plural(done.files.len(), "file", "files"),
            format::list_capped(&done.files, 20)
        );
        Ok(ToolOutput::text(text).with_structured(json!({
            "edit_id": id,
            "action": "accept",
            "files": done.files,
            "replacements": done.replacements,
        })))
    } else {
        let done = store.discard(id)?;
        let text = format!(
            "resolve {id}: discarded — {} in {} dropped; nothing was written",
            tool_core::format::plural(done.replacements, "replacement", "replacements"),
            tool_core::format::plural(done.files, "file", "files"),
        );
        Ok(ToolOutput::text(text).with_structured(json!({
            "edit_id": id,
            "action": "discard",
            "files": done.files,
            "replacements": done.replacements,
        })))
    }
}
