//! The pattern compiler: a code fragment with metavariables becomes an
//! ast-grep [`Pattern`] for one language.
//!
//! The fragment is parsed with the file's own grammar inside each rung of the
//! language's [`skeleton`](crate::skeleton) ladder, and the first rung in
//! which the wrapped source has no ERROR and no MISSING node anywhere is used.
//! (ast-grep's own check looks only at the pattern's root and drops MISSING
//! nodes silently, which turns `if (x) y()` without its `;` into a pattern
//! that quietly differs from what was typed.) When no rung accepts the
//! fragment the error names every rung tried and where the parse broke —
//! a search must never run with a pattern that silently finds nothing.

use crate::catalog::Lang;
use crate::excerpt::one_line;
use crate::grammars::Extra;
use crate::nesting::{
    bracket_depth, tree_depth, yaml_block_depth, MAX_PATTERN_BRACKETS, MAX_PATTERN_TREE_DEPTH,
    MAX_YAML_BLOCK_DEPTH,
};
use crate::skeleton::{ladder, ContextKind, Skeleton};
use ast_grep_config::RuleCore;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Language, Node, Pattern};
use ast_grep_language::SupportLang;
use std::collections::BTreeSet;
use std::sync::Arc;
use tool_core::format::thousands;

type Doc = StrDoc<Lang>;

/// What a compiled query matches with: a pattern from the ladder, or a
/// rule compiled by ast-grep-config (see [`crate::rule`]).
#[derive(Clone)]
pub enum Query {
    Pattern(Pattern),
    Rule(Arc<RuleCore>),
}

/// A pattern (or rule) ready to match files of one language.
#[derive(Clone)]
pub struct CompiledPattern {
    pub lang: Lang,
    /// What the user typed.
    pub source: String,
    pub pattern: Query,
    /// The rung that accepted the fragment.
    pub context: ContextKind,
    /// Its place in the ladder; 0 is the first rung.
    pub context_index: usize,
    /// Text appended to complete the fragment (`;`, an any-body block), if any.
    pub glue: &'static str,
    /// Whether the glue added an any-body block, captured as [`BODY_VAR`]:
    /// a rewrite then replaces the header and keeps the body.
    pub body_glue: bool,
    /// Tokens the grammar wanted that the fragment left out where a
    /// metavariable stands for a whole statement, e.g. "`;` after `$$$B`"
    /// in C's `if ($A) { $$$B }`.
    pub implied: Vec<String>,
    /// The longest literal token every match must contain: files without it
    /// are skipped before parsing, and so are subtrees without it.
    pub required_literal: Option<String>,
    /// The pattern's other literal tokens, longest first: a match contains
    /// each of them too, so a file is parsed only when it holds them all.
    pub other_literals: Vec<String>,
    /// The fragment's syntax tree as parsed in the rung used, one line per
    /// node (kinds, tokens, where each metavariable sits), for `explain`.
    pub tree: Vec<String>,
    /// The rungs tried before the one used, with why each failed.
    pub tried: Vec<String>,
    /// `$NAME` metavariables (capturing one node).
    pub single_vars: BTreeSet<String>,
    /// `$$$NAME` metavariables (capturing a sibling sequence).
    pub multi_vars: BTreeSet<String>,
    /// Whether matching may compare two captures node by node (a
    /// metavariable used twice, or any rule): the one recursion as deep as
    /// the searched file's tree, which is why every file's depth is
    /// measured before matching. Otherwise matching recursion follows the
    /// pattern only.
    pub compares_captures: bool,
}

impl std::fmt::Debug for CompiledPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledPattern")
            .field("lang", &self.lang)
            .field("source", &self.source)
            .field("context", &self.context)
            .field("glue", &self.glue)
            .field("required_literal", &self.required_literal)
            .finish_non_exhaustive()
    }
}

impl CompiledPattern {
    /// How the fragment was read, when that is not simply "a statement":
    /// the rung, what was appended, what was implied. For results.
    pub fn context_note(&self) -> Option<String> {
        if self.context_index == 0 && self.glue.is_empty() && self.implied.is_empty() {
            return None;
        }
        let mut s = format!("parsed as {}", self.context.with_article());
        for part in self.completion_parts() {
            s.push_str(", ");
            s.push_str(&part);
        }
        Some(s)
    }

    /// What was appended to the fragment, in words (`None` when nothing).
    pub fn completed_with(&self) -> Option<String> {
        glue_description(self.glue)
    }

    fn completion_parts(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if let Some(g) = self.completed_with() {
            parts.push(format!("completed with {g}"));
        }
        if !self.implied.is_empty() {
            parts.push(format!("with {} implied", self.implied.join(", ")));
        }
        parts
    }

    /// The rung used, for the structured answer: its context, what was
    /// appended and what was implied.
    pub fn rung_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({ "context": self.context.name() });
        if let Some(g) = self.completed_with() {
            v["completed_with"] = g.into();
        }
        if !self.implied.is_empty() {
            v["implied"] = self.implied.clone().into();
        }
        v
    }

    /// Every named metavariable, single or multi.
    pub fn all_vars(&self) -> BTreeSet<String> {
        self.single_vars.union(&self.multi_vars).cloned().collect()
    }
}

/// Why a pattern cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("empty pattern; give a code fragment such as `foo($X)`")]
    Empty,
    #[error("the pattern `{0}` is only a sequence metavariable, which matches a run of siblings and not one node; put it inside some code, e.g. `foo({0})` or `[{0}]`")]
    OnlySequence(String),
    #[error("{0}")]
    Unparseable(String),
    #[error("pattern is {} bytes; the limit is {} — a pattern is one code fragment, so match a smaller piece of the code", thousands(*.0), thousands(MAX_TEXT_BYTES))]
    TooLarge(usize),
    #[error("pattern nested too deeply: {} levels of brackets; the limit is {} — match an inner piece with fewer levels, using `$_` for what it contains", thousands(*.0), MAX_PATTERN_BRACKETS)]
    TooManyBrackets(usize),
    #[error("pattern nested too deeply: its syntax tree for {lang} is {} levels deep; the limit is {} — match a smaller piece of the code", thousands(*.depth), MAX_PATTERN_TREE_DEPTH)]
    TooDeep { lang: Lang, depth: usize },
    #[error("pattern nested too deeply: {} levels of YAML blocks; the limit is {} — match a smaller piece of the document", thousands(*.0), MAX_YAML_BLOCK_DEPTH)]
    TooDeepYaml(usize),
}

/// The longest pattern or rewrite text accepted, in bytes: a pattern is a
/// fragment someone types, and every byte of it is parsed once per language.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// One failed rung, for the error message.
struct Attempt {
    context: ContextKind,
    why: String,
}

/// Why one rung did not take the fragment.
enum RungFailure {
    /// It does not parse cleanly there; the reason, for the error message.
    Broken(String),
    /// Its tree is deeper than [`MAX_PATTERN_TREE_DEPTH`]: no rung will do.
    TooDeep(usize),
}

impl From<String> for RungFailure {
    fn from(why: String) -> Self {
        RungFailure::Broken(why)
    }
}

/// The checks that need no parse: empty, too large, only a sequence,
/// nested too deeply. Cheap enough to run before anything else.
pub fn check_text(source: &str) -> Result<(), PatternError> {
    if source.len() > MAX_TEXT_BYTES {
        return Err(PatternError::TooLarge(source.len()));
    }
    let trimmed = source.trim();
    if trimmed.is_empty() {
        return Err(PatternError::Empty);
    }
    if is_only_sequence(trimmed) {
        return Err(PatternError::OnlySequence(trimmed.to_string()));
    }
    let brackets = bracket_depth(trimmed);
    if brackets > MAX_PATTERN_BRACKETS {
        return Err(PatternError::TooManyBrackets(brackets));
    }
    Ok(())
}

/// Compile `source` for `lang`.
pub fn compile(lang: Lang, source: &str) -> Result<CompiledPattern, PatternError> {
    check_text(source)?;
    let trimmed = source.trim();
    if lang.is(SupportLang::Yaml) {
        // The YAML grammar aborts on deep blocks: never parse them.
        let depth = yaml_block_depth(trimmed);
        if depth > MAX_YAML_BLOCK_DEPTH {
            return Err(PatternError::TooDeepYaml(depth));
        }
    }
    let engine = lang;
    let mut processed = engine.pre_process_pattern(trimmed).into_owned();
    if quotes_metavars(lang) {
        processed = quote_metavars(&processed);
    }
    let expando = engine.expando_char();
    let mut attempts: Vec<Attempt> = Vec::new();
    for (index, rung) in ladder(lang).iter().enumerate() {
        let mut first_failure: Option<String> = None;
        for &glue in rung.glues {
            if !glue_fits(rung, glue, trimmed) {
                continue;
            }
            match try_rung(lang, rung, &processed, glue, expando) {
                Ok(mut compiled) => {
                    compiled.source = trimmed.to_string();
                    compiled.context_index = index;
                    compiled.tried = attempts
                        .iter()
                        .map(|a| format!("as {}: {}", a.context.with_article(), a.why))
                        .collect();
                    return Ok(compiled);
                }
                Err(RungFailure::TooDeep(depth)) => {
                    return Err(PatternError::TooDeep { lang, depth });
                }
                Err(RungFailure::Broken(why)) => {
                    // The bare attempt says more about the fragment than one
                    // with glue the user never typed.
                    first_failure.get_or_insert(why);
                }
            }
        }
        attempts.push(Attempt {
            context: rung.kind,
            why: first_failure.unwrap_or_default(),
        });
    }
    let mut msg = format!(
        "unparseable pattern for {lang}: `{}` is not one complete piece of {lang} code in any context tried:",
        one_line(trimmed, 80)
    );
    for a in &attempts {
        msg.push_str(&format!("\n  - as {}: {}", a.context.with_article(), a.why));
    }
    msg.push_str(&format!(
        "\nWrite the pattern as {lang} code that parses on its own (a statement, an expression, a class member or a declaration), with metavariables only where a name or an expression can stand; or check `language`."
    ));
    Err(PatternError::Unparseable(msg))
}

/// Words that open a block statement with a parenthesised header.
const BLOCK_KEYWORDS: &[&str] = &[
    "if",
    "while",
    "for",
    "foreach",
    "switch",
    "catch",
    "using",
    "lock",
    "synchronized",
    "with",
];

/// Whether `glue` may complete `fragment` in `rung`: a statement that reads
/// as a call (`foo($X)`) is never given an any-body `{ $$$ }`, which would
/// turn C's call into a function definition; a block header (`if ($A)`,
/// `fn $F()`) is.
fn glue_fits(rung: &Skeleton, glue: &str, fragment: &str) -> bool {
    if rung.kind != ContextKind::Statement || !glue.trim_start().starts_with('{') {
        return true;
    }
    let word: String = fragment
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let rest = fragment[word.len()..].trim_start();
    !rest.starts_with('(') || BLOCK_KEYWORDS.contains(&word.as_str())
}

/// The sequence metavariable an any-body glue captures the body with; it is
/// not the user's, so it is never listed among the pattern's variables.
pub const BODY_VAR: &str = "AGENT_BODY";

/// A rung's glue in words: "`;`", "an any-body block `{ $$$ }`".
fn glue_description(glue: &str) -> Option<String> {
    let g = glue.trim();
    if g.is_empty() {
        return None;
    }
    if !g.contains("$$$") {
        return Some(format!("`{g}`"));
    }
    Some(if g.starts_with(':') {
        "`:` and an any-body block `$$$`".to_string()
    } else if g.starts_with('{') {
        "an any-body block `{ $$$ }`".to_string()
    } else {
        "an any-body block `$$$`".to_string()
    })
}

fn is_only_sequence(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("$$$") else {
        return false;
    };
    rest.chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

fn try_rung(
    lang: Lang,
    rung: &Skeleton,
    processed: &str,
    glue: &'static str,
    expando: char,
) -> Result<CompiledPattern, RungFailure> {
    let engine = lang;
    let fragment = if rung.indent.is_empty() {
        processed.to_string()
    } else {
        processed.replace('\n', &format!("\n{}", rung.indent))
    };
    let body_glue = glue.contains("$$$");
    let named_glue = glue.replace("$$$", &format!("$$${BODY_VAR}"));
    let glue_text = engine.pre_process_pattern(&named_glue).into_owned();
    let wrapped = format!("{}{fragment}{glue_text}{}", rung.prefix, rung.suffix);
    let start = rung.prefix.len();
    let end = start + fragment.len();
    let glue_end = end + glue_text.len();

    let root = AstGrep::<Doc>::try_new(&wrapped, engine).map_err(|e| format!("parser: {e}"))?;
    let top = root.root();
    // Everything below walks the tree, some of it recursively: measure it
    // first, without recursion.
    let depth = tree_depth(&top);
    if depth > MAX_PATTERN_TREE_DEPTH {
        return Err(RungFailure::TooDeep(depth));
    }
    // A metavariable may stand where the grammar wants a node it cannot
    // spell (a Java parameter list `($$$P)`): an ERROR node that is exactly
    // one metavariable is accepted, and becomes that metavariable. So is a
    // MISSING token that only completes a statement made of one
    // metavariable (the `;` C wants after `$$$B` in `{ $$$B }`): it is
    // named in the result as implied.
    let mut implied = Vec::new();
    for n in top.dfs() {
        if n.is_missing() {
            let stands_for_statement = n.parent().and_then(|p| metavar_of(&p)).is_some();
            if stands_for_statement {
                if n.range().start >= end {
                    // Inside the glue, which the user never typed.
                    continue;
                }
                let owner = n.parent().map(|p| p.text().to_string()).unwrap_or_default();
                implied.push(format!(
                    "`{}` after `{}`",
                    n.kind(),
                    owner.replace(expando, "$")
                ));
                continue;
            }
            return Err(describe_break(&n, rung, &fragment, start, end, expando).into());
        }
        if n.is_error() && metavar_of(&n).is_none() {
            return Err(describe_break(&n, rung, &fragment, start, end, expando).into());
        }
        // An empty named node inside the fragment is a part the user left
        // out (Python's `if $X:` has an empty block, which would match only
        // an empty block): the next glue completes it.
        let r = n.range();
        if n.is_named() && r.is_empty() && r.start >= start && r.start <= glue_end {
            return Err(RungFailure::Broken(format!(
                "the `{}` after the pattern is empty (it looks incomplete)",
                n.kind()
            )));
        }
    }
    implied.dedup();
    // The node that is exactly the fragment, the deepest of equal ones (a
    // call rather than the statement around it); else the one that is the
    // fragment plus its glue.
    let mut exact: Option<Node<'_, Doc>> = None;
    let mut glued: Option<Node<'_, Doc>> = None;
    // Some grammars end a node after the newline that follows it.
    let ws = |s: &str| s.len() - s.trim_start().len();
    let exact_end = end..=end + ws(&wrapped[end..]);
    let glued_end = glue_end..=glue_end + ws(&wrapped[glue_end..]);
    for n in top.dfs() {
        let r = n.range();
        if r.start != start {
            continue;
        }
        if exact_end.contains(&r.end) {
            exact = Some(n);
        } else if !glue_text.is_empty() && glued_end.contains(&r.end) {
            glued = Some(n);
        }
    }
    let Some(node) = exact.or(glued) else {
        return Err(RungFailure::Broken(
            "the fragment is not one syntax node here (it reads as several siblings); match one statement or expression at a time, or wrap them, e.g. in a block"
                .into(),
        ));
    };
    if node.is_extra() {
        return Err(RungFailure::Broken("the fragment is only a comment".into()));
    }
    let mut pattern = Pattern::from(node.clone());
    pattern.node = to_pattern_node(&node);
    if matches!(
        pattern.node,
        PatternNode::MetaVar {
            meta_var: MetaVariable::MultiCapture(_) | MetaVariable::Multiple
        }
    ) {
        return Err(RungFailure::Broken(
            "the fragment is only a sequence metavariable".into(),
        ));
    }
    let mut single_vars = BTreeSet::new();
    let mut multi_vars = BTreeSet::new();
    collect_vars(&pattern.node, &mut single_vars, &mut multi_vars);
    multi_vars.remove(BODY_VAR);
    let compares_captures = captures_a_name_twice(&pattern.node);
    let required_literal = longest_literal(&node);
    let mut other_literals = literals(&node);
    other_literals.retain(|l| Some(l) != required_literal.as_ref());
    let tree = dump_tree(&node, expando);
    Ok(CompiledPattern {
        lang,
        source: String::new(),
        pattern: Query::Pattern(pattern),
        context: rung.kind,
        context_index: 0,
        glue,
        body_glue,
        implied,
        required_literal,
        other_literals,
        tree,
        tried: Vec::new(),
        single_vars,
        multi_vars,
        compares_captures,
    })
}

/// Lines of a pattern's tree shown by `explain`, at most.
const TREE_LINES: usize = 200;

/// The fragment's tree, one line per node: named nodes by kind, tokens
/// quoted, metavariables with the kind of node they stand in for.
fn dump_tree(node: &Node<'_, Doc>, expando: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(node.clone(), 0usize)];
    while let Some((n, depth)) = stack.pop() {
        if out.len() == TREE_LINES {
            out.push("…".into());
            break;
        }
        let indent = "  ".repeat(depth);
        if metavar_of(&n).is_some() {
            let name = n.text().replace(expando, "$");
            let name = name.trim_end_matches(';').trim();
            let shown = name.replace(&format!("$$${BODY_VAR}"), "$$$ (the any-body block)");
            out.push(format!(
                "{indent}{shown}  ← metavariable (here: {})",
                n.kind()
            ));
            continue;
        }
        if n.is_named() {
            let text = if n.is_leaf() {
                format!("  `{}`", one_line(&n.text(), 40))
            } else {
                String::new()
            };
            out.push(format!("{indent}{}{text}", n.kind()));
        } else {
            out.push(format!("{indent}\"{}\"", n.text()));
        }
        let children: Vec<_> = n.children().collect();
        for c in children.into_iter().rev() {
            stack.push((c, depth + 1));
        }
    }
    out
}

/// Where the wrapped parse broke, in the user's terms.
fn describe_break(
    bad: &Node<'_, Doc>,
    rung: &Skeleton,
    fragment: &str,
    start: usize,
    end: usize,
    expando: char,
) -> String {
    let what = if bad.is_missing() {
        format!("a `{}` is missing", bad.kind())
    } else {
        let text = bad.text();
        let shown = if expando == '$' {
            text.to_string()
        } else {
            text.replace(expando, "$")
        };
        format!("unexpected `{}`", one_line(shown.trim(), 40))
    };
    let offset = bad.range().start;
    if offset < start {
        return format!("{what} before the pattern (the fragment unbalances its surroundings)");
    }
    if offset >= end {
        return format!("{what} at the end of the pattern (it looks incomplete)");
    }
    let before = &fragment[..offset - start];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let mut column = before[line_start..].chars().count();
    if line > 0 {
        column = column.saturating_sub(rung.indent.chars().count());
    }
    format!(
        "{what} at line {}, column {} of the pattern",
        line + 1,
        column + 1
    )
}

/// Whether the language has no identifiers where a value goes (JSON, TOML),
/// so that `$X` is written as the string `"$X"` and turned back into a
/// metavariable.
fn quotes_metavars(lang: Lang) -> bool {
    lang.is(SupportLang::Json) || lang.extra() == Some(Extra::Toml)
}

/// Write every metavariable outside a string as a string: `"$X"`.
fn quote_metavars(src: &str) -> String {
    let mut out = String::with_capacity(src.len() + 8);
    let mut chars = src.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '$' => {
                let mut token = String::from('$');
                while let Some(&n) = chars.peek() {
                    if n == '$' || n.is_ascii_uppercase() || n.is_ascii_digit() || n == '_' {
                        token.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push('"');
                out.push_str(&token);
                out.push('"');
            }
            _ => out.push(c),
        }
    }
    out
}

/// The metavariable a node stands for, if any (JSON's quoted ones too).
fn metavar_of(n: &Node<'_, Doc>) -> Option<MetaVariable> {
    let text = n.text();
    if let Some(v) = n.lang().extract_meta_var(&text) {
        return Some(v);
    }
    if quotes_metavars(*n.lang()) && matches!(n.kind().as_ref(), "string" | "quoted_key") {
        let inner = text.strip_prefix('"')?.strip_suffix('"')?;
        return n.lang().extract_meta_var(inner);
    }
    None
}

/// The engine's pattern tree for a node. Same shape as ast-grep's own
/// conversion; MISSING nodes cannot occur (the compiler refused them).
fn to_pattern_node(n: &Node<'_, Doc>) -> PatternNode {
    if let Some(meta_var) = metavar_of(n) {
        return PatternNode::MetaVar { meta_var };
    }
    if n.is_leaf() || (n.is_named() && has_hidden_text(n)) {
        return PatternNode::Terminal {
            text: n.text().to_string(),
            is_named: n.is_named(),
            kind_id: n.kind_id(),
        };
    }
    // `$$$B;` in a block is the statements `$$$B`, not one expression
    // statement made of them: C's `while ($C) { $$$B; }` means any body.
    if let Some(text) = n.text().strip_suffix(';') {
        if let Some(meta_var @ (MetaVariable::MultiCapture(_) | MetaVariable::Multiple)) =
            n.lang().extract_meta_var(text.trim_end())
        {
            return PatternNode::MetaVar { meta_var };
        }
    }
    PatternNode::Internal {
        kind_id: n.kind_id(),
        children: n.children().map(|c| to_pattern_node(&c)).collect(),
    }
}

/// Whether some of a node's text lies in no child: a token the grammar
/// does not expose, such as the contents of a TOML string. Such a node is
/// compared by its whole text, or `version = "1"` would match every string.
fn has_hidden_text(n: &Node<'_, Doc>) -> bool {
    let start = n.range().start;
    let text = n.text();
    let mut at = 0;
    for child in n.children() {
        let r = child.range();
        let gap = text.get(at..r.start - start).unwrap_or("");
        if !gap.trim().is_empty() {
            return true;
        }
        at = r.end - start;
    }
    !text.get(at..).unwrap_or("").trim().is_empty()
}

fn collect_vars(node: &PatternNode, single: &mut BTreeSet<String>, multi: &mut BTreeSet<String>) {
    match node {
        PatternNode::MetaVar { meta_var } => match meta_var {
            MetaVariable::Capture(name, _) => {
                single.insert(name.clone());
            }
            MetaVariable::MultiCapture(name) => {
                multi.insert(name.clone());
            }
            MetaVariable::Dropped(_) | MetaVariable::Multiple => {}
        },
        PatternNode::Terminal { .. } => {}
        PatternNode::Internal { children, .. } => {
            for c in children {
                collect_vars(c, single, multi);
            }
        }
    }
}

/// Whether some capturing metavariable (`$A` or `$$$A`) occurs twice: its
/// second capture is then compared with the first, node by node.
fn captures_a_name_twice(node: &PatternNode) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n {
            PatternNode::MetaVar {
                meta_var: MetaVariable::Capture(name, _) | MetaVariable::MultiCapture(name),
            } => {
                if !seen.insert(name.as_str()) {
                    return true;
                }
            }
            PatternNode::MetaVar { .. } | PatternNode::Terminal { .. } => {}
            PatternNode::Internal { children, .. } => stack.extend(children),
        }
    }
    false
}

/// The longest token every match must contain verbatim (see [`literals`]).
fn longest_literal(node: &Node<'_, Doc>) -> Option<String> {
    let mut best: Option<String> = None;
    for_each_literal(node, |text| {
        if best.as_ref().is_none_or(|b| text.len() > b.len()) {
            best = Some(text.to_string());
        }
    });
    best
}

/// Every distinct token every match must contain verbatim, longest first.
/// The pattern's leaves are matched one to one, none skipped (ast-grep's
/// default strictness skips only the candidate's unnamed nodes), so each
/// one's text is in every match. Named leaves are compared by text;
/// anonymous ones by kind, so only those whose text is their kind count.
/// Metavariables and comments contribute nothing.
fn literals(node: &Node<'_, Doc>) -> Vec<String> {
    let mut all = BTreeSet::new();
    for_each_literal(node, |text| {
        all.insert(text.to_string());
    });
    let mut all: Vec<String> = all.into_iter().collect();
    all.sort_by_key(|l| std::cmp::Reverse(l.len()));
    all
}

fn for_each_literal(node: &Node<'_, Doc>, mut found: impl FnMut(&str)) {
    let mut stack = vec![node.clone()];
    while let Some(n) = stack.pop() {
        if n.is_extra() || n.is_missing() {
            continue;
        }
        if metavar_of(&n).is_some() {
            continue;
        }
        if n.is_leaf() {
            let text = n.text();
            let usable = n.is_named() || text == n.kind();
            if usable && !text.trim().is_empty() {
                found(&text);
            }
            continue;
        }
        stack.extend(n.children());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lang(id: &str) -> Lang {
        Lang::from_id(id).unwrap()
    }

    #[test]
    fn every_language_compiles_a_simple_pattern() {
        let samples: &[(&str, &str)] = &[
            ("bash", "echo $X"),
            ("c", "foo($E)"),
            ("cpp", "foo($E)"),
            ("csharp", "Foo($E)"),
            ("css", "color: $C"),
            ("dart", "dispose($X)"),
            ("elixir", "foo($X)"),
            ("go", "foo($E)"),
            ("haskell", "foo $X"),
            ("hcl", "name = $X"),
            ("html", "<div>$X</div>"),
            ("java", "foo($E)"),
            ("javascript", "foo($E)"),
            ("json", "{\"a\": $X}"),
            ("kotlin", "foo($E)"),
            ("lua", "foo($E)"),
            ("markdown", "# Title"),
            ("nix", "foo $X"),
            ("php", "foo($E)"),
            ("python", "foo($E)"),
            ("ruby", "foo($E)"),
            ("rust", "foo($E)"),
            ("scala", "foo($E)"),
            ("solidity", "foo($E)"),
            ("swift", "foo($E)"),
            ("tsx", "foo($E)"),
            ("typescript", "foo($E)"),
            ("yaml", "a: $X"),
            ("zig", "foo($E)"),
            ("cmake", "add_executable($$$A)"),
            ("dockerfile", "FROM $I"),
            ("graphql", "$F: String"),
            ("make", "$V = $X"),
            ("protobuf", "rpc $R($A) returns ($B);"),
            ("r", "mean($X)"),
            ("sql", "SELECT $$$C FROM $T"),
            ("svelte", "<p>$X</p>"),
            ("toml", "$K = $V"),
            ("vue", "<p>$X</p>"),
            ("xml", "<a>$X</a>"),
        ];
        assert_eq!(samples.len(), Lang::all().count());
        for (id, src) in samples {
            let c = compile(lang(id), src).unwrap_or_else(|e| panic!("{id}: {e}"));
            assert_eq!(c.lang.id(), *id);
        }
    }

    #[test]
    fn dart_call_is_a_call_not_a_signature() {
        let c = compile(lang("dart"), "dispose($X)").unwrap();
        assert_eq!(c.context, ContextKind::Statement);
        assert_eq!(c.glue, ";");
        assert_eq!(c.single_vars.iter().collect::<Vec<_>>(), ["X"]);
        assert_eq!(c.required_literal.as_deref(), Some("dispose"));
        let c = compile(lang("dart"), "if ($X != null) $X.dispose()").unwrap();
        assert_eq!(c.required_literal.as_deref(), Some("dispose"));
    }

    #[test]
    fn c_call_is_not_a_macro_type() {
        let c = compile(lang("c"), "foo($E)").unwrap();
        assert_eq!(c.context, ContextKind::Statement);
        assert_eq!(c.required_literal.as_deref(), Some("foo"));
    }

    #[test]
    fn rust_signature_matches_any_body() {
        let c = compile(lang("rust"), "fn $NAME($$$ARGS) -> Result<$T, $E>").unwrap();
        assert_eq!(c.glue, " { $$$ }");
        assert_eq!(c.single_vars.iter().collect::<Vec<_>>(), ["E", "NAME", "T"]);
        assert_eq!(c.multi_vars.iter().collect::<Vec<_>>(), ["ARGS"]);
        assert_eq!(c.required_literal.as_deref(), Some("Result"));
    }

    #[test]
    fn bad_patterns_are_refused_with_where_it_broke() {
        assert!(matches!(
            compile(lang("python"), "  "),
            Err(PatternError::Empty)
        ));
        assert!(matches!(
            compile(lang("python"), "$$$X"),
            Err(PatternError::OnlySequence(_))
        ));
        let err = compile(lang("python"), "foo(").unwrap_err().to_string();
        assert!(err.starts_with("unparseable pattern for python"), "{err}");
        assert!(
            err.contains("as a statement") && err.contains("as a class member"),
            "{err}"
        );
        let err = compile(lang("rust"), "let = ;").unwrap_err().to_string();
        expect_test::expect![[r#"
            unparseable pattern for rust: `let = ;` is not one complete piece of rust code in any context tried:
              - as a statement: unexpected `let =` at line 1, column 1 of the pattern
              - as an expression: a `identifier` is missing at line 1, column 6 of the pattern
              - as a class member: unexpected `let =` at line 1, column 1 of the pattern
              - as a declaration: unexpected `let =` at line 1, column 1 of the pattern
            Write the pattern as rust code that parses on its own (a statement, an expression, a class member or a declaration), with metavariables only where a name or an expression can stand; or check `language`."#]].assert_eq(&err);
    }

    #[test]
    fn literals_skip_metavariables_and_anonymous_aliases() {
        let c = compile(lang("python"), "$X == $X").unwrap();
        assert_eq!(c.required_literal.as_deref(), Some("=="));
        let c = compile(lang("python"), "isinstance($X, $Y)").unwrap();
        assert_eq!(c.required_literal.as_deref(), Some("isinstance"));
        assert_eq!(c.other_literals, ["(", ")", ","]);
        let c = compile(lang("python"), "$X == None").unwrap();
        assert_eq!(c.required_literal.as_deref(), Some("None"));
        assert_eq!(c.other_literals, ["=="]);
        let c = compile(lang("python"), "$X").unwrap();
        assert_eq!(c.required_literal, None);
        assert!(c.other_literals.is_empty());
    }

    #[test]
    fn only_a_name_captured_twice_compares_captures() {
        let compares = |pat: &str| compile(lang("python"), pat).unwrap().compares_captures;
        assert!(compares("$X == $X"));
        assert!(compares("foo($$$A, $$$A)"));
        assert!(!compares("isinstance($X, $Y)"));
        assert!(!compares("$_ == $_"));
        assert!(!compares("foo($$$)"));
    }
}
