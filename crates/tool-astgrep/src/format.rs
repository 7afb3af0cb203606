//! Text shaping for results the model reads: match lines, scope notes,
//! the lines around an ast_edit preview (whose diff is
//! [`tool_core::StagedChange::diff`]).

use crate::embedded::RegionKind;
use crate::excerpt::one_line;
use crate::rewrite::SyntaxBreak;
use crate::search::{MatchRecord, Scope, SearchOutcome, Skipped};
use serde_json::{json, Value};
use tool_core::format::{plural, thousands};
use tool_core::staging;

const NARROW: &str = "narrow with path or a more specific pattern";

pub use tool_core::format::list_capped;

/// The ids of the languages searched.
pub fn language_ids(outcome: &SearchOutcome) -> Vec<&'static str> {
    outcome.searched.iter().map(|c| c.lang.id()).collect()
}

fn languages_label(outcome: &SearchOutcome) -> String {
    let ids = language_ids(outcome);
    if ids.is_empty() {
        "no files of a searchable language".into()
    } else {
        ids.join(", ")
    }
}

fn skipped_line(s: &Skipped) -> Option<String> {
    if s.total() == 0 {
        return None;
    }
    let mut parts = Vec::new();
    if s.binary > 0 {
        parts.push(format!("{} binary", s.binary));
    }
    if s.not_utf8 > 0 {
        parts.push(format!("{} not UTF-8", s.not_utf8));
    }
    if s.too_large > 0 {
        parts.push(format!(
            "{} over {} MiB",
            s.too_large,
            crate::search::DEFAULT_MAX_FILE_BYTES / (1024 * 1024)
        ));
    }
    if s.unreadable > 0 {
        parts.push(format!("{} unreadable", s.unreadable));
    }
    if !s.too_deep.is_empty() {
        parts.push(format!("{} too deeply nested", s.too_deep.len()));
    }
    Some(format!(
        "({} skipped: {})",
        plural(s.total(), "file", "files"),
        parts.join(", ")
    ))
}

/// Deep files named in the text, at most.
const DEEP_FILES_SHOWN: usize = 5;

/// One line per file skipped for its nesting, so the model knows which
/// files were not searched and why.
fn too_deep_lines(s: &Skipped, out: &mut Vec<String>) {
    for f in s.too_deep.iter().take(DEEP_FILES_SHOWN) {
        out.push(format!(
            "skipped {}: too deeply nested: {} levels, limit {}",
            f.rel,
            thousands(f.depth),
            thousands(f.limit)
        ));
    }
    if s.too_deep.len() > DEEP_FILES_SHOWN {
        out.push(format!(
            "… and {} more too deeply nested",
            plural(s.too_deep.len() - DEEP_FILES_SHOWN, "file", "files")
        ));
    }
}

/// The skipped-files summary and the deep files by name.
fn skipped_lines(s: &Skipped, out: &mut Vec<String>) {
    out.extend(skipped_line(s));
    too_deep_lines(s, out);
}

/// Lines about how the pattern was read and which languages were searched.
fn scope_lines(scope: &Scope, outcome: &SearchOutcome, out: &mut Vec<String>) {
    for p in &scope.plan.patterns {
        if let Some(note) = p.context_note() {
            // With many languages, only those with files in scope are worth
            // a line: a note on how the pattern was read matters most when
            // it found nothing there.
            let searched = outcome
                .searched
                .iter()
                .any(|c| c.lang == p.lang && c.files > 0);
            if searched || scope.plan.patterns.len() == 1 {
                let comma = if note.contains(", ") { "," } else { "" };
                out.push(format!("(pattern {note}{comma} in {})", p.lang));
            }
        }
    }
    if !scope.plan.explicit && scope.plan.patterns.len() > 1 {
        let searched: Vec<String> = outcome
            .searched
            .iter()
            .map(|c| format!("{} ({})", c.lang, plural(c.files, "file", "files")))
            .collect();
        if !searched.is_empty() {
            out.push(format!("searched: {}", searched.join(", ")));
        }
    }
    if !outcome.not_searched.is_empty() {
        let ns: Vec<String> = outcome
            .not_searched
            .iter()
            .map(|c| format!("{} ({})", c.lang, plural(c.files, "file", "files")))
            .collect();
        out.push(format!(
            "not searched: {} — the pattern does not parse in those languages",
            ns.join(", ")
        ));
    }
}

fn match_line(rel: &str, m: &MatchRecord) -> String {
    let mut line = format!("{rel}:{}:{}  {}", m.line, m.column, m.text);
    if !m.captures.is_empty() {
        let caps: Vec<String> = m.captures.iter().map(|(k, v)| format!("{k}={v}")).collect();
        line.push_str("  ");
        line.push_str(&caps.join(" "));
    }
    if let Some(scope) = &m.enclosing {
        line.push_str("  in ");
        line.push_str(scope);
    }
    line
}

/// Candidates named in the text, at most.
const CANDIDATES_SHOWN: usize = 10;

/// "16 textual candidates inside macro invocations were not searched
/// structurally: src/lib.rs:40, …", one line per kind of region.
fn unsearched_lines(outcome: &SearchOutcome, out: &mut Vec<String>) {
    let mut kinds: Vec<RegionKind> = outcome
        .files
        .iter()
        .flat_map(|f| f.unsearched.iter().map(|c| c.kind))
        .collect();
    kinds.sort();
    kinds.dedup();
    for kind in kinds {
        let places: Vec<String> = outcome
            .files
            .iter()
            .flat_map(|f| {
                f.unsearched
                    .iter()
                    .filter(move |c| c.kind == kind)
                    .map(move |c| format!("{}:{}", f.rel, c.line))
            })
            .collect();
        out.push(format!(
            "{} inside {} {} not searched structurally: {}",
            plural(places.len(), "textual candidate", "textual candidates"),
            kind.plural(),
            if places.len() == 1 { "was" } else { "were" },
            list_capped(&places, CANDIDATES_SHOWN)
        ));
    }
}

/// Which matches a result shows, in the sorted order: `max` of them after
/// the first `skip`.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub skip: usize,
    pub max: usize,
}

impl Page {
    /// Every match in order with its file, the page's slice only.
    fn matches(
        self,
        outcome: &SearchOutcome,
    ) -> impl Iterator<Item = (&crate::search::FileResult, &MatchRecord)> {
        outcome
            .files
            .iter()
            .flat_map(|f| f.matches.iter().map(move |m| (f, m)))
            .skip(self.skip)
            .take(self.max)
    }
}

/// The text of an ast_grep result.
pub fn find_text(pattern: &str, scope: &Scope, outcome: &SearchOutcome, page: Page) -> String {
    let total = outcome.total_matches();
    let files_with = outcome.files_with_matches();
    let mut out = vec![format!(
        "ast_grep  {}  [{}] in {} — {} in {} ({} searched)",
        one_line(pattern, 80),
        languages_label(outcome),
        scope.shown,
        plural(total, "match", "matches"),
        plural(files_with, "file", "files"),
        plural(outcome.files_searched, "file", "files"),
    )];
    scope_lines(scope, outcome, &mut out);
    let mut shown = 0;
    for (f, m) in page.matches(outcome) {
        out.push(match_line(&f.rel, m));
        shown += 1;
    }
    let first = page.skip + 1;
    if page.skip > 0 && total > 0 {
        if shown == 0 {
            out.push(format!(
                "… skip {} passes every one of the {total} matches; give a smaller skip",
                page.skip
            ));
        } else if page.skip + shown < total {
            out.push(format!(
                "… showing matches {first} to {} of {total} — pass skip {} for the next ones",
                page.skip + shown,
                page.skip + shown
            ));
        } else {
            out.push(format!(
                "… showing matches {first} to {} of {total} (the last ones)",
                page.skip + shown
            ));
        }
    } else if total > shown {
        out.push(format!(
            "… showing {shown} of {total} matches in {} — {NARROW}, or pass skip {shown} for the next ones",
            plural(files_with, "file", "files")
        ));
    }
    if total == 0 {
        out.push(format!(
            "no matches in {} of {}",
            plural(outcome.files_searched, "file", "files"),
            languages_label(outcome)
        ));
    }
    unsearched_lines(outcome, &mut out);
    skipped_lines(&outcome.skipped, &mut out);
    out.join("\n")
}

/// The structured part of an ast_grep result.
pub fn find_structured(scope: &Scope, outcome: &SearchOutcome, page: Page) -> Value {
    let mut matches = Vec::new();
    {
        for (f, m) in page.matches(outcome) {
            let caps: serde_json::Map<String, Value> = m
                .captures
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            matches.push(json!({
                "path": f.rel,
                "line": m.line,
                "column": m.column,
                "text": m.text,
                "captures": caps,
                "enclosing": m.enclosing,
            }));
        }
    }
    let contexts: serde_json::Map<String, Value> = scope
        .plan
        .patterns
        .iter()
        .filter_map(|p| {
            p.context_note()
                .map(|_| (p.lang.id().to_string(), json!(p.context.name())))
        })
        .collect();
    // The rung each searched language's pattern was read in, always.
    let rungs: serde_json::Map<String, Value> = scope
        .plan
        .patterns
        .iter()
        .filter(|p| outcome.searched.iter().any(|c| c.lang == p.lang))
        .map(|p| (p.lang.id().to_string(), p.rung_json()))
        .collect();
    json!({
        "total": outcome.total_matches(),
        "skip": page.skip,
        "files_with_matches": outcome.files_with_matches(),
        "unsearched_candidates": outcome
            .files
            .iter()
            .flat_map(|f| f.unsearched.iter().map(|c| json!({"path": f.rel, "line": c.line})))
            .collect::<Vec<_>>(),
        "files_searched": outcome.files_searched,
        "languages": language_ids(outcome),
        "contexts": contexts,
        "rungs": rungs,
        "skipped": {
            "binary": outcome.skipped.binary,
            "not_utf8": outcome.skipped.not_utf8,
            "too_large": outcome.skipped.too_large,
            "unreadable": outcome.skipped.unreadable,
            "too_deep": outcome
                .skipped
                .too_deep
                .iter()
                .map(|f| json!({"path": f.rel, "depth": f.depth}))
                .collect::<Vec<_>>(),
        },
        "matches": matches,
    })
}

/// A file ast_edit did not stage because the rewrite would break it.
#[derive(Debug, Clone)]
pub struct RefusedFile {
    pub rel: String,
    pub error: SyntaxBreak,
}

/// Refused files named in the text, at most.
const REFUSED_SHOWN: usize = 10;

/// The refused files, each with where it would stop parsing.
fn refused_lines(refused: &[RefusedFile], out: &mut Vec<String>) {
    if refused.is_empty() {
        return;
    }
    out.push(format!(
        "refused {} the rewrite would leave with a syntax error (pass allow_parse_errors: true to stage it anyway):",
        plural(refused.len(), "file", "files")
    ));
    for r in refused.iter().take(REFUSED_SHOWN) {
        out.push(format!(
            "  {}:{}:{}: {} — {}",
            r.rel, r.error.line, r.error.column, r.error.what, r.error.line_text
        ));
    }
    if refused.len() > REFUSED_SHOWN {
        out.push(format!(
            "  … and {} more",
            plural(refused.len() - REFUSED_SHOWN, "file", "files")
        ));
    }
}

/// The compiled queries `explain` describes: the searched languages' (all
/// of them when the language was named).
fn explained<'s>(
    scope: &'s Scope,
    outcome: &'s SearchOutcome,
) -> impl Iterator<Item = &'s crate::pattern::CompiledPattern> {
    scope.plan.patterns.iter().filter(move |p| {
        scope.plan.explicit
            || outcome
                .searched
                .iter()
                .any(|c| c.lang == p.lang && c.files > 0)
    })
}

/// `explain: true`: how the query was read, per language searched — the
/// rung, what was appended or implied, the rungs that failed first, and the
/// tree with kinds and where each metavariable sits.
pub fn explain_text(scope: &Scope, outcome: &SearchOutcome) -> String {
    let mut out = Vec::new();
    for p in explained(scope, outcome) {
        if p.tree.is_empty() {
            let vars: Vec<String> = p.all_vars().iter().map(|v| format!("${v}")).collect();
            out.push(format!(
                "explain ({}): an ast-grep rule, compiled by ast-grep-config; metavariables: {}",
                p.lang,
                if vars.is_empty() {
                    "none".to_string()
                } else {
                    vars.join(", ")
                }
            ));
            continue;
        }
        let how = p
            .context_note()
            .unwrap_or_else(|| format!("parsed as {}", p.context.with_article()));
        out.push(format!("explain ({}): {how}", p.lang));
        for t in &p.tried {
            out.push(format!("  not {t}"));
        }
        for line in &p.tree {
            out.push(format!("  {line}"));
        }
    }
    out.join("\n")
}

/// `explain: true` in the structured answer, per language.
pub fn explain_structured(scope: &Scope, outcome: &SearchOutcome) -> Value {
    let map: serde_json::Map<String, Value> = explained(scope, outcome)
        .map(|p| {
            let mut v = p.rung_json();
            v["tried"] = json!(p.tried);
            v["tree"] = json!(p.tree);
            (p.lang.id().to_string(), v)
        })
        .collect();
    Value::Object(map)
}

/// ast_edit found nothing to change.
pub fn no_edit_text(
    pattern: &str,
    rewrite: &str,
    scope: &Scope,
    outcome: &SearchOutcome,
    unchanged: usize,
    refused: &[RefusedFile],
) -> String {
    let mut out = vec![format!(
        "ast_edit  {}  →  {}  [{}] in {}",
        one_line(pattern, 60),
        one_line(rewrite, 60),
        languages_label(outcome),
        scope.shown
    )];
    scope_lines(scope, outcome, &mut out);
    refused_lines(refused, &mut out);
    if !refused.is_empty() {
        out.push("nothing staged".into());
    } else if unchanged > 0 {
        out.push(format!(
            "{} would leave the code as it is; nothing staged",
            plural(unchanged, "replacement", "replacements")
        ));
    } else {
        out.push(format!(
            "no matches in {}; nothing staged",
            plural(outcome.files_searched, "file", "files")
        ));
    }
    skipped_lines(&outcome.skipped, &mut out);
    out.join("\n")
}

/// The numbers of a staged edit.
pub struct StagedSummary<'a> {
    pub id: &'a str,
    pub pattern: &'a str,
    pub rewrite: &'a str,
    pub matches: usize,
    pub replacements: usize,
    pub nested: usize,
    pub files: usize,
    pub refused: &'a [RefusedFile],
}

/// The text of an ast_edit result.
pub fn staged_text(
    s: &StagedSummary<'_>,
    scope: &Scope,
    outcome: &SearchOutcome,
    preview: &str,
) -> String {
    let mut out = vec![staging::proposal(
        &plural(s.replacements, "replacement", "replacements"),
        s.files,
        s.id,
    )];
    out.push(format!(
        "ast_edit  {}  →  {}  [{}] in {}{}",
        one_line(s.pattern, 60),
        one_line(s.rewrite, 60),
        languages_label(outcome),
        scope.shown,
        staging::NOT_WRITTEN_YET
    ));
    scope_lines(scope, outcome, &mut out);
    if s.nested > 0 {
        out.push(format!(
            "{} → {} ({} nested inside others, rerun to rewrite them)",
            plural(s.matches, "match", "matches"),
            plural(s.replacements, "replacement", "replacements"),
            s.nested
        ));
    }
    refused_lines(s.refused, &mut out);
    skipped_lines(&outcome.skipped, &mut out);
    out.push(preview.to_string());
    out.join("\n")
}
