//! Rewrite templates: checking them against the pattern, substituting the
//! captures, and applying the replacements of one file.
//!
//! Substitution is ast-grep's template engine, which re-indents multi-line
//! replacements and multi-line captures to the column of the match. Matches
//! nested inside (or overlapping) an earlier match are not rewritten in the
//! same pass — their text is part of the outer replacement — and are counted
//! so the result can say to rerun.

use crate::catalog::Lang;
use crate::excerpt::one_line;
use crate::pattern::{CompiledPattern, MAX_TEXT_BYTES};
use ast_grep_core::replacer::{Replacer, TemplateFix};
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, NodeMatch};
use tool_core::format::thousands;
use tool_core::staging::{
    apply_replacements, diff_body_lines, DiffContext, Fingerprint, Replacement,
};

type Doc = StrDoc<Lang>;

/// A file's rewrite as planned: its replacements, and what was learned
/// from its texts while they were in hand — whether the replacements change
/// it, the syntax error they bring, the length of its diff. The texts are
/// not kept (a search may plan a thousand files): the text the replacements
/// apply to is known by its fingerprint, and read again when the edit is
/// shown or written.
#[derive(Debug, Clone)]
pub struct FileRewrite {
    /// The text the replacements apply to.
    pub original: Fingerprint,
    /// Whether the new text differs from the original (a replacement may
    /// equal what it replaces).
    pub changes: bool,
    /// Matches inside (or overlapping) another match, left for a rerun.
    pub nested: usize,
    /// The first syntax error the rewrite brought into the file, when the
    /// new text has more ERROR/MISSING nodes than the old one.
    pub introduced_error: Option<SyntaxBreak>,
    /// The replacements made, in order, none inside another.
    pub edits: Vec<Replacement>,
    /// Lines of the file's diff below its header, with the edit's diff
    /// context ([`tool_core::staging::diff_body_lines`]).
    pub diff_lines: usize,
}

impl FileRewrite {
    pub fn replacements(&self) -> usize {
        self.edits.len()
    }
}

/// Where a rewritten file stops parsing, 1-based, for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxBreak {
    pub line: usize,
    pub column: usize,
    /// "unexpected `as _exc`" or "a `;` is missing".
    pub what: String,
    /// The line it is on, trimmed and capped.
    pub line_text: String,
}

/// Count the syntax errors (ERROR and MISSING nodes) of a tree, and find
/// the first one whose text is not in `known` (errors the file already had).
fn syntax_errors<'r>(
    root: &'r AstGrep<Doc>,
    known: &[String],
) -> (usize, Option<ast_grep_core::Node<'r, Doc>>) {
    let mut count = 0;
    let mut first = None;
    for n in root.root().dfs() {
        if n.is_error() || n.is_missing() {
            count += 1;
            if first.is_none() && !known.contains(&error_key(&n)) {
                first = Some(n);
            }
        }
    }
    (count, first)
}

fn error_key(n: &ast_grep_core::Node<'_, Doc>) -> String {
    format!("{}:{}", n.kind(), n.text())
}

/// [`check_rewritten`] for a text not parsed yet.
pub fn check_rewritten_text(lang: Lang, old: &str, new: &str) -> Option<SyntaxBreak> {
    let old_root = AstGrep::<Doc>::try_new(old, lang).ok()?;
    check_rewritten(&old_root, new)
}

/// Re-parse a rewritten text and compare its syntax errors with the
/// original's (`old_root`): `Some` when the rewrite introduced one.
pub fn check_rewritten(old_root: &AstGrep<Doc>, new: &str) -> Option<SyntaxBreak> {
    let known: Vec<String> = old_root
        .root()
        .dfs()
        .filter(|n| n.is_error() || n.is_missing())
        .map(|n| error_key(&n))
        .collect();
    let new_root = AstGrep::<Doc>::try_new(new, *old_root.lang()).ok()?;
    let (count, first) = syntax_errors(&new_root, &known);
    if count <= known.len() {
        return None;
    }
    let bad = first.or_else(|| syntax_errors(&new_root, &[]).1)?;
    let pos = bad.start_pos();
    let what = if bad.is_missing() {
        format!("a `{}` is missing", bad.kind())
    } else {
        format!("unexpected `{}`", one_line(bad.text().trim(), 40))
    };
    let line_text = new.lines().nth(pos.line()).unwrap_or("").trim();
    Some(SyntaxBreak {
        line: pos.line() + 1,
        column: pos.column(&bad) + 1,
        what,
        line_text: one_line(line_text, 100),
    })
}

/// A template ready to generate replacements for one language, and the
/// diff context its files' diffs are counted with.
pub struct Rewriter {
    fix: TemplateFix,
    diff_context: DiffContext,
}

impl std::fmt::Debug for Rewriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rewriter").finish_non_exhaustive()
    }
}

/// A metavariable use in a template: `$NAME` or `$$$NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateVar {
    pub name: String,
    pub sequence: bool,
}

/// The metavariables a template names, in order of appearance. `$_` and a
/// `$` not followed by an upper-case name are left as text, as the engine
/// does; `$_NAME` forms are reported so they can be refused.
pub fn template_vars(template: &str) -> Vec<TemplateVar> {
    let bytes = template.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < bytes.len() && bytes[j] == b'$' {
            j += 1;
        }
        let dollars = j - i;
        let name_start = j;
        while j < bytes.len()
            && (bytes[j].is_ascii_uppercase() || bytes[j].is_ascii_digit() || bytes[j] == b'_')
        {
            j += 1;
        }
        let name = &template[name_start..j];
        let first_ok = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_uppercase() || c == '_');
        if first_ok && (dollars == 1 || dollars == 3) {
            out.push(TemplateVar {
                name: name.to_string(),
                sequence: dollars == 3,
            });
        }
        i = j.max(i + 1);
    }
    out
}

/// Refuse a rewrite text larger than [`MAX_TEXT_BYTES`], before anything is
/// parsed or searched.
pub fn check_size(template: &str) -> Result<(), String> {
    if template.len() <= MAX_TEXT_BYTES {
        return Ok(());
    }
    Err(format!(
        "rewrite is {} bytes; the limit is {} — stage a smaller replacement; nothing was staged",
        thousands(template.len()),
        thousands(MAX_TEXT_BYTES)
    ))
}

/// Refuse a template that names a metavariable the pattern does not bind,
/// before anything is staged.
pub fn check_template(template: &str, pattern: &CompiledPattern) -> Result<(), String> {
    let mut problems = Vec::new();
    for v in template_vars(template) {
        let shown = format!("{}{}", if v.sequence { "$$$" } else { "$" }, v.name);
        if v.name.starts_with('_') {
            problems.push(format!(
                "`{shown}` binds nothing in the pattern, so it cannot be used in the rewrite"
            ));
        } else if v.sequence && pattern.single_vars.contains(&v.name) {
            problems.push(format!(
                "`{shown}`: the pattern binds `${}` (one node); write `${}`",
                v.name, v.name
            ));
        } else if !v.sequence && pattern.multi_vars.contains(&v.name) {
            problems.push(format!(
                "`{shown}`: the pattern binds `$$${}` (a sequence); write `$$${}`",
                v.name, v.name
            ));
        } else if !pattern.single_vars.contains(&v.name) && !pattern.multi_vars.contains(&v.name) {
            problems.push(format!("`{shown}` is not a metavariable of the pattern"));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    problems.dedup();
    let defined: Vec<String> = pattern
        .single_vars
        .iter()
        .map(|v| format!("${v}"))
        .chain(pattern.multi_vars.iter().map(|v| format!("$$${v}")))
        .collect();
    Err(format!(
        "the rewrite cannot be filled in: {}; the pattern binds {}; nothing was staged",
        problems.join("; "),
        if defined.is_empty() {
            "no metavariables".to_string()
        } else {
            defined.join(", ")
        }
    ))
}

impl Rewriter {
    pub fn new(template: &str, pattern: &CompiledPattern) -> Rewriter {
        let fix = TemplateFix::try_new(template, &pattern.lang).unwrap_or_else(|e| match e {});
        Rewriter {
            fix,
            diff_context: DiffContext::default(),
        }
    }

    /// Count each file's diff with `context` lines around each change, as
    /// the staged change will show it.
    pub fn with_diff_context(mut self, context: DiffContext) -> Rewriter {
        self.diff_context = context;
        self
    }

    pub fn diff_context(&self) -> DiffContext {
        self.diff_context
    }

    /// The replacement text for one match, indented to its column. A
    /// line the re-indenting left holding only spaces (a blank line of a
    /// multi-line capture) is blank again.
    pub fn replacement(&self, m: &NodeMatch<'_, Doc>) -> String {
        let bytes = self.fix.generate_replacement(m);
        let text = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into());
        blank_lines_stay_blank(&text)
    }
}

/// Empty every line after the first that holds only spaces or tabs.
fn blank_lines_stay_blank(text: &str) -> String {
    if !text.contains('\n') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            let body = line.strip_suffix('\r').unwrap_or(line);
            if !body.is_empty() && body.chars().all(|c| c == ' ' || c == '\t') {
                out.push_str(&line[body.len()..]);
                continue;
            }
        }
        out.push_str(line);
    }
    out
}

/// Plan the rewrite of `source` by `(start, end, replacement)` edits
/// (those starting inside an earlier kept one are skipped and counted as
/// nested): the new text is made, checked by `check` when it differs (the
/// syntax error it brings), diffed with `context`, and dropped.
pub fn plan_rewrite(
    source: &str,
    mut edits: Vec<(usize, usize, String)>,
    context: DiffContext,
    check: impl FnOnce(&str) -> Option<SyntaxBreak>,
) -> FileRewrite {
    edits.sort_by_key(|a| (a.0, std::cmp::Reverse(a.1)));
    let mut cursor = 0;
    let mut nested = 0;
    let mut kept = Vec::new();
    for (start, end, text) in edits {
        if start < cursor {
            nested += 1;
            continue;
        }
        cursor = end;
        kept.push(Replacement { start, end, text });
    }
    let new = apply_replacements(source, &kept);
    let changes = new != source;
    FileRewrite {
        original: Fingerprint::of(source.as_bytes()),
        changes,
        nested,
        introduced_error: if changes { check(&new) } else { None },
        diff_lines: if changes {
            diff_body_lines(source, &new, context)
        } else {
            0
        },
        edits: kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Lang;
    use crate::pattern::compile;

    #[test]
    fn template_vars_are_found_and_checked() {
        let vars = template_vars("$X.dispose($$$ARGS) + $_ + $ + $x + $$Y");
        assert_eq!(
            vars,
            vec![
                TemplateVar {
                    name: "X".into(),
                    sequence: false
                },
                TemplateVar {
                    name: "ARGS".into(),
                    sequence: true
                },
                TemplateVar {
                    name: "_".into(),
                    sequence: false
                },
            ]
        );
        let p = compile(Lang::from_id("python").unwrap(), "foo($X, $$$REST)").unwrap();
        assert!(check_template("bar($X, $$$REST)", &p).is_ok());
        let err = check_template("bar($Y)", &p).unwrap_err();
        expect_test::expect!["the rewrite cannot be filled in: `$Y` is not a metavariable of the pattern; the pattern binds $X, $$$REST; nothing was staged"].assert_eq(&err);
        let err = check_template("bar($REST)", &p).unwrap_err();
        expect_test::expect!["the rewrite cannot be filled in: `$REST`: the pattern binds `$$$REST` (a sequence); write `$$$REST`; the pattern binds $X, $$$REST; nothing was staged"].assert_eq(&err);
        let err = check_template("bar($_)", &p).unwrap_err();
        expect_test::expect!["the rewrite cannot be filled in: `$_` binds nothing in the pattern, so it cannot be used in the rewrite; the pattern binds $X, $$$REST; nothing was staged"].assert_eq(&err);
    }
}
