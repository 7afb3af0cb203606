//! Matching one source text: its tree (or, for a Python module, only the
//! top-level statements holding the pattern's literal), the matching walk
//! that enters only subtrees holding that literal, macro bodies parsed on
//! their own, and the records and rewrite edits gathered, in file order.

use crate::catalog::Lang;
use crate::embedded::{self, Region, RegionKind};
use crate::enclosing::enclosing_name;
use crate::excerpt::one_line;
use crate::nesting::{depth_beyond, yaml_block_depth, MAX_FILE_TREE_DEPTH, MAX_YAML_BLOCK_DEPTH};
use crate::pattern::{CompiledPattern, Query, BODY_VAR};
use crate::rewrite::{check_rewritten, check_rewritten_text, plan_rewrite, FileRewrite, Rewriter};
use crate::{top_level, top_level_c};
use ast_grep_core::matcher::MatcherExt;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Language, Matcher, Node, NodeMatch};
use ast_grep_language::SupportLang;
use memchr::memmem::Finder;
use std::sync::atomic::{AtomicBool, Ordering};

type Doc = StrDoc<Lang>;

/// One match, positions 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchRecord {
    /// Byte range in the file.
    pub start: usize,
    pub end: usize,
    pub line: usize,
    pub column: usize,
    /// The first line of the matched text, capped.
    pub text: String,
    /// Metavariable name → captured text (first line, capped), by name.
    pub captures: Vec<(String, String)>,
    /// The function and class it sits in, outermost first (`Child.run`).
    pub enclosing: Option<String>,
}

/// What matched in one source, its rewrite when rewriting, and where the
/// pattern's literal sits in code that could not be searched structurally.
#[derive(Debug, Clone, Default)]
pub struct FileMatches {
    pub records: Vec<MatchRecord>,
    pub rewrite: Option<FileRewrite>,
    pub unsearched: Vec<Candidate>,
    /// Whether only the top-level statements holding the pattern's literal
    /// were parsed (see [`crate::top_level`]), not the whole file.
    pub parsed_in_parts: bool,
}

/// A place in unstructured code (a macro body the grammar leaves as
/// tokens) where the pattern's literal occurs: it may be a match that no
/// structural search can confirm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub kind: RegionKind,
    /// 1-based.
    pub line: usize,
}

/// A source whose tree is deeper than [`MAX_FILE_TREE_DEPTH`], or YAML
/// whose blocks nest deeper than [`MAX_YAML_BLOCK_DEPTH`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    pub depth: usize,
    pub limit: usize,
}

/// Where the text being matched sits in the file: `base` is added to every
/// offset past `skip` bytes of wrapper.
#[derive(Clone, Copy)]
struct Placement<'s> {
    /// The file's text.
    file: &'s str,
    skip: usize,
    base: usize,
}

impl Placement<'_> {
    fn file_offset(self, offset: usize) -> usize {
        offset - self.skip + self.base
    }

    /// 1-based line and column (in characters) of a file offset.
    fn line_column(self, offset: usize) -> (usize, usize) {
        let before = &self.file[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }
}

/// 1-based lines and columns (in characters) of ascending offsets, counting
/// each newline once however many matches a file has.
#[derive(Default)]
struct LineCounter {
    /// Where the count stands: an offset, its line, and where that starts.
    offset: usize,
    line: usize,
    line_start: usize,
}

impl LineCounter {
    fn advance(&mut self, text: &str, offset: usize) -> (usize, usize) {
        debug_assert!(offset >= self.offset, "offsets must ascend");
        let between = &text.as_bytes()[self.offset..offset];
        for i in memchr::memchr_iter(b'\n', between) {
            self.line += 1;
            self.line_start = self.offset + i + 1;
        }
        self.offset = offset;
        let column = text[self.line_start..offset].chars().count();
        (self.line + 1, column + 1)
    }
}

/// Matches and rewrite edits gathered from a file's trees, in file offsets.
struct Collector<'p> {
    pattern: &'p CompiledPattern,
    rewriter: Option<&'p Rewriter>,
    records: Vec<MatchRecord>,
    edits: Vec<(usize, usize, String)>,
}

impl Collector<'_> {
    /// Match the pattern in one tree (the file's, or a region's inside its
    /// wrapper), whose depth was checked. Only matches inside `within`
    /// (offsets in the tree's text) count.
    fn collect(&mut self, tree: &AstGrep<Doc>, within: std::ops::Range<usize>, at: Placement<'_>) {
        match &self.pattern.pattern {
            Query::Pattern(p) => self.collect_with(p, tree, within, at),
            Query::Rule(r) => self.collect_with(r.as_ref(), tree, within, at),
        }
    }

    fn collect_with<M: Matcher>(
        &mut self,
        matcher: &M,
        tree: &AstGrep<Doc>,
        within: std::ops::Range<usize>,
        at: Placement<'_>,
    ) {
        // `Node::find_all`: every node in pre-order, except subtrees that
        // cannot hold a match. A match contains the pattern's literal token
        // (see `CompiledPattern::required_literal`), so its node's range
        // holds an occurrence of the literal: a node whose range holds none
        // is skipped with all it contains. Only the paths down to the
        // literal's occurrences are walked.
        let literal = LiteralSites::new(tree.source(), self.pattern.required_literal.as_deref());
        let kinds = matcher.potential_kinds();
        let top = tree.root();
        let mut cursor = top.get_inner_node().walk();
        loop {
            let inner = cursor.node();
            if literal.within(inner.start_byte(), inner.end_byte()) {
                let wanted = kinds
                    .as_ref()
                    .is_none_or(|k| k.contains(inner.kind_id().into()));
                if wanted {
                    if let Some(m) = matcher.match_node(tree.adopt(inner)) {
                        self.record(matcher, &m, tree.source(), &within, at);
                    }
                }
                if cursor.goto_first_child() {
                    continue;
                }
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
            }
        }
    }

    fn record<M: Matcher>(
        &mut self,
        matcher: &M,
        m: &NodeMatch<'_, Doc>,
        tree_text: &str,
        within: &std::ops::Range<usize>,
        at: Placement<'_>,
    ) {
        let (pattern, rewriter) = (self.pattern, self.rewriter);
        let node = m.get_node();
        let range = node.range();
        if range.start < within.start || range.end > within.end {
            return;
        }
        let env = m.get_env();
        let mut captures = Vec::new();
        for v in &pattern.single_vars {
            if let Some(n) = env.get_match(v) {
                captures.push((v.clone(), one_line(&n.text(), 60)));
            }
        }
        // A rule binds only the metavariables of the branch that matched.
        for v in &pattern.multi_vars {
            let nodes = env.get_multiple_matches(v);
            let text = match (nodes.first(), nodes.last()) {
                (Some(a), Some(b)) => &tree_text[a.range().start..b.range().end],
                _ => "",
            };
            captures.push((v.clone(), one_line(text, 60)));
        }
        captures.sort();
        if let Some(rw) = rewriter {
            let len = matcher.get_match_len(node.clone()).unwrap_or(range.len());
            let end = if pattern.body_glue {
                header_end(m).unwrap_or(range.start + len)
            } else {
                range.start + len
            };
            self.edits.push((
                at.file_offset(range.start),
                at.file_offset(end),
                rw.replacement(m),
            ));
        }
        self.records.push(MatchRecord {
            start: at.file_offset(range.start),
            end: at.file_offset(range.end),
            // Set once the records are sorted, in one pass.
            line: 0,
            column: 0,
            text: one_line(&node.text(), 120),
            captures,
            enclosing: None,
        });
    }
}

/// Where a literal occurs in a text, to tell whether a range holds it.
struct LiteralSites {
    /// Every start, ascending, overlapping ones included; `None` when there
    /// is no literal, and every range may hold a match.
    starts: Option<Vec<usize>>,
    len: usize,
}

impl LiteralSites {
    fn new(text: &str, literal: Option<&str>) -> Self {
        let starts = literal.filter(|l| !l.is_empty()).map(|l| {
            let finder = Finder::new(l.as_bytes());
            let mut starts = Vec::new();
            let mut from = 0;
            while let Some(i) = finder.find(&text.as_bytes()[from..]) {
                starts.push(from + i);
                from += i + 1;
            }
            starts
        });
        Self {
            starts,
            len: literal.map_or(0, str::len),
        }
    }

    /// Whether the literal occurs whole inside `start..end`.
    fn within(&self, start: usize, end: usize) -> bool {
        let Some(starts) = &self.starts else {
            return true;
        };
        let first = starts.partition_point(|&s| s < start);
        starts.get(first).is_some_and(|&s| s + self.len <= end)
    }
}

/// A file's whole syntax tree, kept by the run's search index (see
/// [`crate::index`]) so a later search need not parse it again.
pub(crate) struct ParsedFile {
    pub lang: Lang,
    /// Owns a copy of the file's text.
    pub tree: AstGrep<Doc>,
    /// Measured once: a tree too deep to match safely is never matched.
    pub too_deep: Option<TooDeep>,
}

impl ParsedFile {
    /// What the tree holds, roughly: its text and its nodes.
    pub(crate) fn bytes(&self) -> usize {
        /// What a kept tree costs per node: the process grew by 130 bytes
        /// a node (beyond the texts) keeping 3,000 trees of the Python
        /// standard library, by 92 keeping redis's C files.
        const BYTES_PER_NODE: usize = 128;
        let nodes = self.tree.root().get_inner_node().descendant_count();
        self.tree.source().len() + nodes * BYTES_PER_NODE
    }
}

/// The YAML grammar aborts on deep blocks: they are never parsed.
fn yaml_too_deep(lang: Lang, source: &str) -> Option<TooDeep> {
    if !lang.is(SupportLang::Yaml) {
        return None;
    }
    let depth = yaml_block_depth(source);
    (depth > MAX_YAML_BLOCK_DEPTH).then_some(TooDeep {
        depth,
        limit: MAX_YAML_BLOCK_DEPTH,
    })
}

/// Parse a whole file; `Ok(None)` when it does not parse, `Err` for YAML
/// too deep to parse at all.
pub(crate) fn parse_whole(lang: Lang, source: &str) -> Result<Option<ParsedFile>, TooDeep> {
    if let Some(deep) = yaml_too_deep(lang, source) {
        return Err(deep);
    }
    let Ok(tree) = AstGrep::<Doc>::try_new(source, lang) else {
        return Ok(None);
    };
    // Comparing two captures recurses over them: measure before matching.
    // The probe is cheap (see `depth_beyond`), so every pattern's file is
    // measured the same way and the matching walk is the only full walk.
    let too_deep = depth_beyond(&tree.root(), MAX_FILE_TREE_DEPTH).map(|depth| TooDeep {
        depth,
        limit: MAX_FILE_TREE_DEPTH,
    });
    Ok(Some(ParsedFile {
        lang,
        tree,
        too_deep,
    }))
}

/// Match one source text; `Ok(None)` when nothing matched (or it does not
/// parse), `Err` when its tree is too deep to match safely.
pub fn match_source(
    pattern: &CompiledPattern,
    rewriter: Option<&Rewriter>,
    source: &str,
) -> Result<Option<FileMatches>, TooDeep> {
    match_source_keeping(pattern, rewriter, source).0
}

/// [`match_source`], handing back the whole tree when it parsed one (a
/// Python module matched in parts gives none).
pub(crate) fn match_source_keeping(
    pattern: &CompiledPattern,
    rewriter: Option<&Rewriter>,
    source: &str,
) -> (Result<Option<FileMatches>, TooDeep>, Option<ParsedFile>) {
    if let Some(deep) = yaml_too_deep(pattern.lang, source) {
        return (Err(deep), None);
    }
    if let Some(found) = match_in_parts(pattern, rewriter, source) {
        return (found, None);
    }
    let parsed = match parse_whole(pattern.lang, source) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => return (Ok(None), None),
        Err(deep) => return (Err(deep), None),
    };
    (match_tree(pattern, rewriter, &parsed), Some(parsed))
}

/// Match a whole file's tree (parsed now or kept from an earlier search).
pub(crate) fn match_tree(
    pattern: &CompiledPattern,
    rewriter: Option<&Rewriter>,
    parsed: &ParsedFile,
) -> Result<Option<FileMatches>, TooDeep> {
    debug_assert_eq!(parsed.lang, pattern.lang, "a tree of another language");
    if let Some(deep) = parsed.too_deep {
        return Err(deep);
    }
    let root = &parsed.tree;
    let source = root.source();
    let top = root.root();
    let mut found = Collector {
        pattern,
        rewriter,
        records: Vec::new(),
        edits: Vec::new(),
    };
    let whole = Placement {
        file: source,
        skip: 0,
        base: 0,
    };
    found.collect(root, 0..source.len(), whole);
    let unsearched = if embedded::has_regions(pattern.lang) {
        match_regions(&mut found, source, (source, 0), &top)
    } else {
        Vec::new()
    };
    let Collector {
        mut records, edits, ..
    } = found;
    if records.is_empty() && unsearched.is_empty() {
        return Ok(None);
    }
    in_file_order(&mut records, source);
    for r in &mut records {
        r.enclosing = enclosing_name(&top, r.start, r.end);
    }
    let rewrite = rewriter.filter(|_| !edits.is_empty()).map(|rw| {
        plan_rewrite(source, edits, rw.diff_context(), |new| {
            check_rewritten(root, new)
        })
    });
    Ok(Some(FileMatches {
        records,
        rewrite,
        unsearched,
        parsed_in_parts: false,
    }))
}

/// Sort records by position (an outer match before the ones inside it),
/// drop duplicates, and set their lines and columns.
fn in_file_order(records: &mut Vec<MatchRecord>, source: &str) {
    records.sort_by(|a, b| {
        (a.start, std::cmp::Reverse(a.end)).cmp(&(b.start, std::cmp::Reverse(b.end)))
    });
    records.dedup_by(|a, b| a.start == b.start && a.end == b.end);
    let mut lines = LineCounter::default();
    for r in records {
        (r.line, r.column) = lines.advance(source, r.start);
    }
}

/// Whether Python and C sources are parsed in parts (see
/// [`match_in_parts`]); off only for the bench's check that the parts find
/// what whole files find.
static IN_PARTS: AtomicBool = AtomicBool::new(true);

/// Parse every file whole (`false`) or Python and C sources in parts
/// (`true`, the default), process-wide: the bench compares the two.
#[doc(hidden)]
pub fn parse_in_parts(on: bool) {
    IN_PARTS.store(on, Ordering::Relaxed);
}

/// Where a source's top-level units begin, for the languages whose units
/// parse alone into the nodes they have in the file (see
/// [`crate::top_level`] and [`crate::top_level_c`]); and the node kinds a
/// pattern must not be able to match, since they hold several units.
fn units(lang: Lang, source: &str) -> Option<(Vec<usize>, &'static [&'static str])> {
    if lang.is(SupportLang::Python) {
        Some((top_level::statement_starts(source)?, &["module"]))
    } else if lang.is(SupportLang::C) {
        const HOLDERS: &[&str] = &[
            "translation_unit",
            "preproc_if",
            "preproc_ifdef",
            "preproc_else",
            "preproc_elif",
            "preproc_elifdef",
        ];
        Some((top_level_c::item_starts(source)?, HOLDERS))
    } else {
        None
    }
}

/// Match a Python or C source by parsing only the runs of top-level
/// statements or items that hold the pattern's literal; `None` when the
/// whole file should be parsed instead: a rule (its relations may reach
/// across units), a pattern that can match a node holding several units or
/// has no literal, runs that would cover most of the file, or a run that
/// does not parse cleanly on its own. A file that is rewritten is checked
/// whole, old and new, as [`match_source`] checks it.
fn match_in_parts(
    pattern: &CompiledPattern,
    rewriter: Option<&Rewriter>,
    source: &str,
) -> Option<Result<Option<FileMatches>, TooDeep>> {
    let Query::Pattern(matcher) = &pattern.pattern else {
        return None;
    };
    if !IN_PARTS.load(Ordering::Relaxed) {
        return None;
    }
    if !pattern.lang.is(SupportLang::Python) && !pattern.lang.is(SupportLang::C) {
        return None;
    }
    let kinds = matcher.potential_kinds()?;
    let literal = pattern.required_literal.as_deref()?;
    let sites = LiteralSites::new(source, Some(literal)).starts?;
    let (starts, holders) = units(pattern.lang, source)?;
    if holders.iter().any(|k| {
        let id = pattern.lang.kind_to_id(k);
        id != 0 && kinds.contains(id.into())
    }) {
        return None;
    }
    let runs = top_level::runs_holding(&starts, source.len(), &sites, literal.len());
    let cut = pattern.lang.is(SupportLang::Python)
        && !embedded::has_regions(pattern.lang)
        && !PYTHON_SPANNING.iter().any(|k| {
            let id = pattern.lang.kind_to_id(k);
            id != 0 && kinds.contains(id.into())
        });
    let mut parts = Vec::new();
    for run in runs {
        if cut {
            let at = Cut {
                source,
                sites: &sites,
                len: literal.len(),
            };
            at.statements(run, &starts, &[], 0, &mut parts);
        } else {
            parts.push(Part {
                headers: Vec::new(),
                body: run,
            });
        }
    }
    let parsed: usize = parts.iter().map(Part::len).sum();
    if parsed > source.len() / 4 * 3 {
        return None;
    }
    let mut found = Collector {
        pattern,
        rewriter,
        records: Vec::new(),
        edits: Vec::new(),
    };
    let mut unsearched = Vec::new();
    for Part { headers, body: run } in parts {
        let joined;
        let text = if headers.is_empty() {
            &source[run.clone()]
        } else {
            joined = headers
                .iter()
                .chain(std::iter::once(&run))
                .map(|r| &source[r.clone()])
                .collect::<String>();
            joined.as_str()
        };
        // The headers' bytes before the run.
        let skip = text.len() - run.len();
        let part = AstGrep::<Doc>::try_new(text, pattern.lang).ok()?;
        let top = part.root();
        if top.get_inner_node().has_error() {
            return None;
        }
        // Deeper here is deeper in the whole file too.
        if let Some(depth) = depth_beyond(&top, MAX_FILE_TREE_DEPTH) {
            return Some(Err(TooDeep {
                depth,
                limit: MAX_FILE_TREE_DEPTH,
            }));
        }
        let before = found.records.len();
        let at = Placement {
            file: source,
            skip,
            base: run.start,
        };
        found.collect(&part, skip..text.len(), at);
        if embedded::has_regions(pattern.lang) {
            // Never cut (see `cut` above): the text is the run's.
            unsearched.extend(match_regions(&mut found, source, (text, run.start), &top));
        }
        for r in &mut found.records[before..] {
            let (start, end) = (r.start - run.start + skip, r.end - run.start + skip);
            r.enclosing = enclosing_name(&top, start, end);
        }
    }
    let Collector {
        mut records, edits, ..
    } = found;
    if records.is_empty() && unsearched.is_empty() {
        return Some(Ok(None));
    }
    in_file_order(&mut records, source);
    // Checked whole, old and new, as `match_source` checks it.
    let rewrite = rewriter.filter(|_| !edits.is_empty()).map(|rw| {
        plan_rewrite(source, edits, rw.diff_context(), |new| {
            check_rewritten_text(pattern.lang, source, new)
        })
    });
    Some(Ok(Some(FileMatches {
        records,
        rewrite,
        unsearched,
        parsed_in_parts: true,
    })))
}

/// Python node kinds that reach from a compound statement's header into
/// its body: a pattern that can match one is never matched in a body cut
/// from its header (see [`Cut`]).
const PYTHON_SPANNING: &[&str] = &[
    "module",
    "block",
    "decorated_definition",
    "class_definition",
    "function_definition",
    "if_statement",
    "for_statement",
    "while_statement",
    "try_statement",
    "with_statement",
    "match_statement",
];

/// How many compound statements deep a Python run is cut (a method in a
/// class, a block in it).
const MAX_CUT_DEPTH: usize = 3;

/// A piece of a file parsed on its own: the headers of the compound
/// statements it sits in, outermost first (empty at the top level), then a
/// run of whole statements, the part matched.
struct Part {
    headers: Vec<std::ops::Range<usize>>,
    body: std::ops::Range<usize>,
}

impl Part {
    fn len(&self) -> usize {
        self.headers
            .iter()
            .map(ExactSizeIterator::len)
            .sum::<usize>()
            + self.body.len()
    }
}

/// Cutting a Python run finer: a large class or function whose header does
/// not hold the literal is parsed as its header and the runs of its body's
/// statements that do (see [`top_level::body_starts`]). The statements
/// parse, after their headers, into the nodes they have in the file; what
/// could tell them apart (a node reaching from a header into a body) the
/// pattern cannot match ([`PYTHON_SPANNING`]), and a match must lie in the
/// run, never in a header.
struct Cut<'s> {
    source: &'s str,
    /// Where the literal occurs, ascending.
    sites: &'s [usize],
    len: usize,
}

impl Cut<'_> {
    /// The parts of `run`, whole statements beginning at those of `starts`
    /// inside it, under `headers`: statements cut finer where that parses
    /// less, the rest joined.
    fn statements(
        &self,
        run: std::ops::Range<usize>,
        starts: &[usize],
        headers: &[std::ops::Range<usize>],
        depth: usize,
        out: &mut Vec<Part>,
    ) {
        let first = starts.partition_point(|&s| s < run.start);
        let last = starts.partition_point(|&s| s < run.end);
        let mut bounds: Vec<usize> = starts[first..last].to_vec();
        bounds.push(run.end);
        let mut pending: Option<std::ops::Range<usize>> = None;
        let flush = |pending: &mut Option<std::ops::Range<usize>>, out: &mut Vec<Part>| {
            if let Some(body) = pending.take() {
                out.push(Part {
                    headers: headers.to_vec(),
                    body,
                });
            }
        };
        for w in bounds.windows(2) {
            let stmt = w[0]..w[1];
            if let Some(inner) = self.cut(stmt.clone(), headers, depth) {
                flush(&mut pending, out);
                out.extend(inner);
                continue;
            }
            match &mut pending {
                Some(p) if p.end == stmt.start => p.end = stmt.end,
                _ => {
                    flush(&mut pending, out);
                    pending = Some(stmt);
                }
            }
        }
        flush(&mut pending, out);
    }

    /// The parts of one compound statement cut from its header, when that
    /// parses at most three quarters of it.
    fn cut(
        &self,
        stmt: std::ops::Range<usize>,
        headers: &[std::ops::Range<usize>],
        depth: usize,
    ) -> Option<Vec<Part>> {
        if depth >= MAX_CUT_DEPTH {
            return None;
        }
        let starts = top_level::body_starts(self.source, stmt.clone())?;
        let header = stmt.start..starts[1];
        let lo = self.sites.partition_point(|&s| s + self.len <= stmt.start);
        let hi = self.sites.partition_point(|&s| s < stmt.end);
        let sites = &self.sites[lo..hi];
        // The literal in (or reaching into) the header: not cut.
        if sites.first().is_none_or(|&s| s < header.end) {
            return None;
        }
        let runs = top_level::runs_holding(&starts, stmt.end, sites, self.len);
        let mut inner_headers = headers.to_vec();
        inner_headers.push(header);
        let mut parts = Vec::new();
        for run in runs {
            self.statements(run, &starts, &inner_headers, depth + 1, &mut parts);
        }
        let parsed: usize = parts
            .iter()
            .map(|p| p.len() - Part::headers_len(headers))
            .sum();
        (parsed <= stmt.len() / 4 * 3).then_some(parts)
    }
}

impl Part {
    fn headers_len(headers: &[std::ops::Range<usize>]) -> usize {
        headers.iter().map(ExactSizeIterator::len).sum()
    }
}

/// Search the macro bodies in `top`, the tree of `text`, which starts at
/// byte `base` of the file's `source` (see [`crate::embedded`]): those that
/// parse on their own are matched like the file, the others give textual
/// candidates where the pattern's literal occurs in them.
fn match_regions(
    found: &mut Collector<'_>,
    source: &str,
    (text, base): (&str, usize),
    top: &Node<'_, Doc>,
) -> Vec<Candidate> {
    let pattern = found.pattern;
    let literal = pattern.required_literal.as_deref();
    let mut candidates = Vec::new();
    // A region without the literal is never searched: only the subtrees
    // holding it are walked to find regions.
    let sites = LiteralSites::new(text, literal);
    let holds = |a, b| sites.within(a, b);
    // (region, depth), with file offsets; regions found inside a parsed
    // region are queued too.
    let mut queue: Vec<(Region, usize)> = embedded::regions(pattern.lang, top, &holds)
        .into_iter()
        .map(|r| {
            let start = r.start + base;
            (Region { start, ..r }, 0)
        })
        .collect();
    while let Some((region, depth)) = queue.pop() {
        if literal.is_some_and(|l| !region.text.contains(l)) {
            continue;
        }
        let parsed = embedded::parse(pattern.lang, &region)
            .filter(|p| depth_beyond(&p.root.root(), MAX_FILE_TREE_DEPTH).is_none());
        let Some(parsed) = parsed else {
            if let Some(l) = literal {
                let at = Placement {
                    file: source,
                    skip: 0,
                    base: region.start,
                };
                for (i, _) in region.text.match_indices(l) {
                    let (line, _) = at.line_column(at.file_offset(i));
                    candidates.push(Candidate {
                        kind: region.kind,
                        line,
                    });
                }
            }
            continue;
        };
        let at = Placement {
            file: source,
            skip: parsed.prefix_len,
            base: region.start,
        };
        let sub = parsed.root.root();
        let within = parsed.prefix_len..parsed.prefix_len + parsed.len;
        found.collect(&parsed.root, within.clone(), at);
        if depth + 1 < embedded::MAX_REGION_DEPTH {
            let sub_sites = LiteralSites::new(parsed.root.source(), literal);
            let holds = |a, b| sub_sites.within(a, b);
            for inner in embedded::regions(pattern.lang, &sub, &holds) {
                if inner.start >= within.start && inner.start + inner.text.len() <= within.end {
                    let start = at.file_offset(inner.start);
                    queue.push((Region { start, ..inner }, depth + 1));
                }
            }
        }
    }
    candidates.sort_by_key(|c| c.line);
    candidates.dedup();
    candidates
}

/// Where the header of a match of a pattern completed with an any-body
/// block ends: the end of what comes before the body, so a rewrite replaces
/// the header the user typed and keeps the body it never saw.
fn header_end(m: &ast_grep_core::NodeMatch<'_, Doc>) -> Option<usize> {
    let env = m.get_env();
    let body = env.get_multiple_matches(BODY_VAR);
    let node = m.get_node();
    // The body is a block the metavariable stands for, or the statements
    // inside one; an empty brace body captures nothing.
    let body_start = match body.first() {
        Some(first)
            if first
                .parent()
                .is_some_and(|p| p.node_id() == node.node_id()) =>
        {
            first.range().start
        }
        Some(first) => first.parent()?.range().start,
        None => {
            node.children()
                .find(|c| c.text().starts_with('{'))?
                .range()
                .start
        }
    };
    node.children()
        .map(|c| c.range().end)
        .filter(|&end| end <= body_start)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::compile;
    use crate::rewrite::check_template;
    use tool_core::staging::{apply_replacements, Fingerprint};

    /// The rewrite of `source` and its new text.
    fn rewrite(lang: &str, pattern: &str, template: &str, source: &str) -> (FileRewrite, String) {
        let p = compile(Lang::from_id(lang).unwrap(), pattern).unwrap();
        check_template(template, &p).unwrap();
        let rw = Rewriter::new(template, &p);
        let out = match_source(&p, Some(&rw), source)
            .unwrap()
            .unwrap()
            .rewrite
            .unwrap();
        assert_eq!(out.original, Fingerprint::of(source.as_bytes()));
        let new = apply_replacements(source, &out.edits);
        (out, new)
    }

    #[test]
    fn multi_line_replacements_keep_indentation() {
        let src = "def f():\n    if x:\n        old(a, b)\n";
        let (_, new) = rewrite("python", "old($A, $B)", "new(\n    $A,\n    $B,\n)", src);
        assert_eq!(
            new,
            "def f():\n    if x:\n        new(\n            a,\n            b,\n        )\n"
        );
    }

    #[test]
    fn sequences_and_nesting() {
        let (out, new) = rewrite(
            "python",
            "foo($$$A)",
            "bar($$$A)",
            "foo(foo(1), 2)\nfoo()\n",
        );
        assert_eq!(new, "bar(foo(1), 2)\nbar()\n");
        assert_eq!((out.replacements(), out.nested, out.changes), (2, 1, true));
    }
}
