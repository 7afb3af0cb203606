//! The search: a parallel, gitignore-aware walk feeding one ordered result.
//!
//! Work is skipped wherever it cannot find anything: a file of a language the
//! pattern does not compile in is never read, a file lacking one of the
//! pattern's literal tokens is never parsed (ast-grep parses first and
//! filters after), and in a parsed file only the subtrees holding its
//! longest literal token are walked. Whatever order the threads finish in,
//! results are sorted by path and then position, so a capped answer always
//! shows the same first N. Files that cannot be searched (binary, not UTF-8,
//! too large, unreadable) are counted, never silently dropped; files nested
//! too deeply to match safely are named.
//!
//! Threads: the `ignore` walker's threads only find files; each file is read,
//! parsed and matched on one of our own matching threads, which have a
//! [`MATCH_STACK_BYTES`] stack. Every tree's depth is checked before it is
//! matched (see [`crate::nesting`]), by a probe that enters only the
//! subtrees big enough to be too deep; the matching walk is then the one
//! walk over the tree. No input can overflow a stack here.

use crate::catalog::Lang;
use crate::embedded::{self, Region, RegionKind};
use crate::excerpt::one_line;
use crate::nesting::{
    depth_beyond, yaml_block_depth, MATCH_STACK_BYTES, MAX_FILE_TREE_DEPTH, MAX_YAML_BLOCK_DEPTH,
};
use crate::pattern::{CompiledPattern, Query, BODY_VAR};
use crate::rewrite::{apply_edits, check_rewritten, FileRewrite, Rewriter};
use ast_grep_core::matcher::MatcherExt;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Matcher, Node, NodeMatch};
use ast_grep_language::SupportLang;
use ignore::{WalkBuilder, WalkState};
use memchr::memmem::Finder;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use tool_core::fs::{FsError, Root};
use tool_core::CancellationToken;

type Doc = StrDoc<Lang>;

/// Files larger than this are skipped (and counted).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

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

/// Everything found in one file.
#[derive(Debug, Clone)]
pub struct FileResult {
    pub path: PathBuf,
    /// Relative to the workspace root, with `/`.
    pub rel: String,
    pub lang: Lang,
    pub matches: Vec<MatchRecord>,
    pub rewrite: Option<FileRewrite>,
    /// Textual candidates in code that was not searched structurally.
    pub unsearched: Vec<Candidate>,
}

/// A file whose syntax tree is deeper than [`MAX_FILE_TREE_DEPTH`]: parsed,
/// never matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeepFile {
    /// Relative to the workspace root, with `/`.
    pub rel: String,
    /// Levels of its syntax tree (of YAML blocks, for YAML).
    pub depth: usize,
    /// The limit it passed.
    pub limit: usize,
}

/// Why files were not searched, with counts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub binary: usize,
    pub not_utf8: usize,
    pub too_large: usize,
    pub unreadable: usize,
    /// Named, sorted by path.
    pub too_deep: Vec<DeepFile>,
}

impl Skipped {
    pub fn total(&self) -> usize {
        self.binary + self.not_utf8 + self.too_large + self.unreadable + self.too_deep.len()
    }
}

/// Per-language count of files searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LangCount {
    pub lang: Lang,
    pub files: usize,
}

/// The whole search, sorted.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    pub files: Vec<FileResult>,
    /// Files of a searched language that were read (including those the
    /// literal pre-filter ruled out without parsing).
    pub files_searched: usize,
    /// Of those, how many were ruled out before parsing.
    pub prefiltered: usize,
    pub searched: Vec<LangCount>,
    /// Languages with files in scope in which the pattern does not compile.
    pub not_searched: Vec<LangCount>,
    pub skipped: Skipped,
    pub cancelled: bool,
}

impl SearchOutcome {
    pub fn total_matches(&self) -> usize {
        self.files.iter().map(|f| f.matches.len()).sum()
    }

    /// Files with at least one match (some results hold only candidates).
    pub fn files_with_matches(&self) -> usize {
        self.files.iter().filter(|f| !f.matches.is_empty()).count()
    }
}

/// Where and in what languages to search, after checking the arguments.
pub struct Scope {
    /// The first file or directory searched (the workspace root for globs).
    pub target: PathBuf,
    /// Every file or directory searched, none inside another.
    pub targets: Vec<PathBuf>,
    /// Globs a walked file must match, when `path` gave globs.
    pub globs: Option<ignore::overrides::Override>,
    /// The targets as the user should read them.
    pub shown: String,
    pub plan: SearchPlan,
}

/// What to search and how.
pub struct SearchPlan {
    /// One compiled pattern per language searched.
    pub patterns: Vec<CompiledPattern>,
    /// Languages whose files are in scope but the pattern does not compile
    /// in (only when the language was inferred).
    pub uncompiled: Vec<Lang>,
    /// The language was given by the caller (so `.h` can be C++).
    pub explicit: bool,
    /// When rewriting: one rewriter per pattern, same order.
    pub rewriters: Option<Vec<Rewriter>>,
    pub max_file_bytes: u64,
    pub threads: usize,
}

struct Prepared<'p> {
    pattern: &'p CompiledPattern,
    finder: Option<Finder<'p>>,
    /// For the pattern's other literals, each also required.
    others: Vec<Finder<'p>>,
    rewriter: Option<&'p Rewriter>,
    searched: AtomicUsize,
}

struct Counters {
    files_searched: AtomicUsize,
    prefiltered: AtomicUsize,
    binary: AtomicUsize,
    not_utf8: AtomicUsize,
    too_large: AtomicUsize,
    unreadable: AtomicUsize,
    too_deep: Mutex<Vec<DeepFile>>,
}

/// A file the walk found, for a matching thread: its path, its size if the
/// walk knew it, and which prepared pattern to use.
type Work = (PathBuf, Option<u64>, usize);

/// Run the search over `target` (a file or a directory inside `root`).
/// Files are read through the root's handle (`tool_core::fs`): no link is
/// followed, only regular files are read, sizes are checked first.
/// Fails only when not one matching thread could be started.
pub fn run(
    plan: &SearchPlan,
    root: &Root,
    target: &Path,
    cancel: &CancellationToken,
) -> std::io::Result<SearchOutcome> {
    run_paths(plan, root, &[target.to_path_buf()], None, cancel)
}

/// Run the search over several files and directories inside `root`, none
/// inside another; with `globs`, only walked files matching one are read.
pub fn run_paths(
    plan: &SearchPlan,
    root: &Root,
    targets: &[PathBuf],
    globs: Option<&ignore::overrides::Override>,
    cancel: &CancellationToken,
) -> std::io::Result<SearchOutcome> {
    let prepared: Vec<Prepared<'_>> = plan
        .patterns
        .iter()
        .enumerate()
        .map(|(i, p)| Prepared {
            pattern: p,
            finder: p
                .required_literal
                .as_deref()
                .map(|t| Finder::new(t.as_bytes())),
            others: p
                .other_literals
                .iter()
                .map(|t| Finder::new(t.as_bytes()))
                .collect(),
            rewriter: plan.rewriters.as_ref().map(|r| &r[i]),
            searched: AtomicUsize::new(0),
        })
        .collect();
    let uncompiled: Vec<(Lang, AtomicUsize)> = plan
        .uncompiled
        .iter()
        .map(|l| (*l, AtomicUsize::new(0)))
        .collect();
    let counters = Counters {
        files_searched: AtomicUsize::new(0),
        prefiltered: AtomicUsize::new(0),
        binary: AtomicUsize::new(0),
        not_utf8: AtomicUsize::new(0),
        too_large: AtomicUsize::new(0),
        unreadable: AtomicUsize::new(0),
        too_deep: Mutex::new(Vec::new()),
    };
    let results: Mutex<Vec<FileResult>> = Mutex::new(Vec::new());
    let pick = |path: &Path, is_target: bool| -> Option<usize> {
        if plan.explicit {
            let lang = plan.patterns.first()?.lang;
            (is_target || lang.claims(path)).then_some(0)
        } else {
            let lang = Lang::from_path(path)?;
            let found = prepared.iter().position(|p| p.pattern.lang == lang);
            if found.is_none() {
                if let Some((_, n)) = uncompiled.iter().find(|(l, _)| *l == lang) {
                    n.fetch_add(1, Ordering::Relaxed);
                }
            }
            found
        }
    };
    let visit = |path: &Path, len: Option<u64>, which: usize| {
        let p = &prepared[which];
        if let Some(r) = search_file(p, path, len, root, plan.max_file_bytes, &counters) {
            results.lock().expect("results lock").push(r);
        }
    };

    let pick = &pick;
    let threads = plan.threads.max(1);
    // Bounded, so the walk cannot run far ahead of the matching.
    let (work_tx, work_rx) = mpsc::sync_channel::<Work>(threads * 4);
    let work_rx = Mutex::new(work_rx);
    std::thread::scope(|s| -> std::io::Result<()> {
        let matcher = || loop {
            let next = work_rx.lock().expect("work lock").recv();
            let Ok((path, len, which)) = next else {
                return;
            };
            // After a cancel the queue is drained without work.
            if !cancel.is_cancelled() {
                visit(&path, len, which);
            }
        };
        let mut started = 0;
        let mut spawn_error = None;
        for i in 0..threads {
            let spawned = std::thread::Builder::new()
                .name(format!("ast-match-{i}"))
                .stack_size(MATCH_STACK_BYTES)
                .spawn_scoped(s, matcher);
            match spawned {
                Ok(_) => started += 1,
                Err(e) => spawn_error = Some(e),
            }
        }
        if started == 0 {
            return Err(spawn_error.unwrap_or_else(|| std::io::Error::other("no thread")));
        }
        let (files, dirs): (Vec<&PathBuf>, Vec<&PathBuf>) =
            targets.iter().partition(|t| t.is_file());
        // A file named on its own is searched whatever its extension when it
        // is the only target.
        let named_alone = targets.len() == 1 && globs.is_none();
        // A file reached twice (named, and matching a glob) is searched once.
        let seen: Mutex<std::collections::HashSet<PathBuf>> = Mutex::default();
        let first_time = |p: &Path| seen.lock().expect("seen lock").insert(p.to_path_buf());
        for file in files {
            if let Some(which) = pick(file, named_alone) {
                if first_time(file) {
                    let _ = work_tx.send((file.clone(), None, which));
                }
            }
        }
        let walk = |starts: &[&PathBuf], filter: Option<&ignore::overrides::Override>| {
            let Some((first, rest)) = starts.split_first() else {
                return;
            };
            let mut builder = WalkBuilder::new(first);
            for d in rest {
                builder.add(d);
            }
            if let Some(g) = filter {
                builder.overrides(g.clone());
            }
            let walker = builder.threads(threads).build_parallel();
            walker.run(|| {
                let work_tx = work_tx.clone();
                let first_time = &first_time;
                Box::new(move |entry| {
                    if cancel.is_cancelled() {
                        return WalkState::Quit;
                    }
                    let Ok(entry) = entry else {
                        return WalkState::Continue;
                    };
                    if !entry.file_type().is_some_and(|t| t.is_file()) {
                        return WalkState::Continue;
                    }
                    if let Some(which) = pick(entry.path(), false) {
                        if !first_time(entry.path()) {
                            return WalkState::Continue;
                        }
                        let len = entry.metadata().ok().map(|m| m.len());
                        if work_tx
                            .send((entry.path().to_path_buf(), len, which))
                            .is_err()
                        {
                            return WalkState::Quit;
                        }
                    }
                    WalkState::Continue
                })
            });
        };
        walk(&dirs, None);
        if let Some(g) = globs {
            // Globs are matched from the workspace root.
            let root_dir = root.path().to_path_buf();
            walk(&[&root_dir], Some(g));
        }
        // Closing the queue ends the matching threads once it is empty.
        drop(work_tx);
        Ok(())
    })?;

    let mut files = results.into_inner().expect("results lock");
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    let mut searched: Vec<LangCount> = prepared
        .iter()
        .map(|p| LangCount {
            lang: p.pattern.lang,
            files: p.searched.load(Ordering::Relaxed),
        })
        .filter(|c| c.files > 0 || plan.explicit)
        .collect();
    searched.sort_by_key(|c| c.lang.id());
    let mut not_searched: Vec<LangCount> = uncompiled
        .iter()
        .map(|(l, n)| LangCount {
            lang: *l,
            files: n.load(Ordering::Relaxed),
        })
        .filter(|c| c.files > 0)
        .collect();
    not_searched.sort_by_key(|c| c.lang.id());
    let mut too_deep = counters.too_deep.into_inner().expect("too_deep lock");
    too_deep.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(SearchOutcome {
        files,
        files_searched: counters.files_searched.load(Ordering::Relaxed),
        prefiltered: counters.prefiltered.load(Ordering::Relaxed),
        searched,
        not_searched,
        skipped: Skipped {
            binary: counters.binary.load(Ordering::Relaxed),
            not_utf8: counters.not_utf8.load(Ordering::Relaxed),
            too_large: counters.too_large.load(Ordering::Relaxed),
            unreadable: counters.unreadable.load(Ordering::Relaxed),
            too_deep,
        },
        cancelled: cancel.is_cancelled(),
    })
}

fn relative(root: &Path, path: &Path) -> String {
    let p = path.strip_prefix(root).unwrap_or(path);
    p.to_string_lossy().replace('\\', "/")
}

fn search_file(
    p: &Prepared<'_>,
    path: &Path,
    len: Option<u64>,
    root: &Root,
    max_bytes: u64,
    counters: &Counters,
) -> Option<FileResult> {
    if len.is_some_and(|l| l > max_bytes) {
        counters.too_large.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    let bytes = match root.read(path, max_bytes) {
        Ok(b) => b,
        Err(FsError::TooLarge { .. }) => {
            counters.too_large.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Err(_) => {
            counters.unreadable.fetch_add(1, Ordering::Relaxed);
            return None;
        }
    };
    if memchr::memchr(0, &bytes).is_some() {
        counters.binary.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    let Ok(source) = String::from_utf8(bytes) else {
        counters.not_utf8.fetch_add(1, Ordering::Relaxed);
        return None;
    };
    counters.files_searched.fetch_add(1, Ordering::Relaxed);
    p.searched.fetch_add(1, Ordering::Relaxed);
    // The pre-filter: without every literal token, no parse.
    let lacks = |f: &Finder<'_>| f.find(source.as_bytes()).is_none();
    if p.finder.iter().chain(&p.others).any(lacks) {
        counters.prefiltered.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    let result = match match_source(p.pattern, p.rewriter, &source) {
        Ok(found) => found?,
        Err(TooDeep { depth, limit }) => {
            // Skipped, so not searched after all.
            counters.files_searched.fetch_sub(1, Ordering::Relaxed);
            p.searched.fetch_sub(1, Ordering::Relaxed);
            counters
                .too_deep
                .lock()
                .expect("too_deep lock")
                .push(DeepFile {
                    rel: relative(root.path(), path),
                    depth,
                    limit,
                });
            return None;
        }
    };
    Some(FileResult {
        path: path.to_path_buf(),
        rel: relative(root.path(), path),
        lang: p.pattern.lang,
        matches: result.records,
        rewrite: result.rewrite,
        unsearched: result.unsearched,
    })
}

/// What matched in one source, its rewrite when rewriting, and where the
/// pattern's literal sits in code that could not be searched structurally.
#[derive(Debug, Clone, Default)]
pub struct FileMatches {
    pub records: Vec<MatchRecord>,
    pub rewrite: Option<FileRewrite>,
    pub unsearched: Vec<Candidate>,
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

/// Match one source text; `Ok(None)` when nothing matched (or it does not
/// parse), `Err` when its tree is too deep to match safely.
pub fn match_source(
    pattern: &CompiledPattern,
    rewriter: Option<&Rewriter>,
    source: &str,
) -> Result<Option<FileMatches>, TooDeep> {
    if pattern.lang.is(SupportLang::Yaml) {
        // The YAML grammar aborts on deep blocks: never parse them.
        let depth = yaml_block_depth(source);
        if depth > MAX_YAML_BLOCK_DEPTH {
            return Err(TooDeep {
                depth,
                limit: MAX_YAML_BLOCK_DEPTH,
            });
        }
    }
    let Ok(root) = AstGrep::<Doc>::try_new(source, pattern.lang) else {
        return Ok(None);
    };
    let top = root.root();
    // Comparing two captures recurses over them: measure before matching.
    // The probe is cheap (see `depth_beyond`), so every pattern's file is
    // measured the same way and the matching walk is the only full walk.
    if let Some(depth) = depth_beyond(&top, MAX_FILE_TREE_DEPTH) {
        return Err(TooDeep {
            depth,
            limit: MAX_FILE_TREE_DEPTH,
        });
    }
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
    found.collect(&root, 0..source.len(), whole);
    let unsearched = if embedded::has_regions(pattern.lang) {
        match_regions(&mut found, source, &top)
    } else {
        Vec::new()
    };
    let Collector {
        mut records, edits, ..
    } = found;
    if records.is_empty() && unsearched.is_empty() {
        return Ok(None);
    }
    records.sort_by(|a, b| {
        (a.start, std::cmp::Reverse(a.end)).cmp(&(b.start, std::cmp::Reverse(b.end)))
    });
    records.dedup_by(|a, b| a.start == b.start && a.end == b.end);
    let mut lines = LineCounter::default();
    for r in &mut records {
        (r.line, r.column) = lines.advance(source, r.start);
        r.enclosing = enclosing_name(&top, r.start, r.end);
    }
    let rewrite = rewriter.filter(|_| !edits.is_empty()).map(|_| {
        let mut rw = apply_edits(source, edits);
        if rw.new != rw.old {
            rw.introduced_error = check_rewritten(&root, &rw.new);
        }
        rw
    });
    Ok(Some(FileMatches {
        records,
        rewrite,
        unsearched,
    }))
}

/// Search the macro bodies of a file (see [`crate::embedded`]): those that
/// parse on their own are matched like the file, the others give textual
/// candidates where the pattern's literal occurs in them.
fn match_regions(found: &mut Collector<'_>, source: &str, top: &Node<'_, Doc>) -> Vec<Candidate> {
    let pattern = found.pattern;
    let literal = pattern.required_literal.as_deref();
    let mut candidates = Vec::new();
    // (region, depth); regions found inside a parsed region are queued with
    // their file offsets.
    let mut queue: Vec<(Region, usize)> = embedded::regions(pattern.lang, top)
        .into_iter()
        .map(|r| (r, 0))
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
            for inner in embedded::regions(pattern.lang, &sub) {
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

/// Node kinds that name a scope a match can sit in.
fn is_scope_kind(kind: &str) -> bool {
    const SCOPES: &[&str] = &[
        "function",
        "method",
        "class",
        "struct",
        "impl",
        "trait",
        "interface",
        "enum",
        "module",
        "namespace",
        "constructor",
        "object_declaration",
        "protocol",
    ];
    let k = kind;
    !k.contains("call")
        && !k.contains("type")
        && !k.contains("parameter")
        && (k.ends_with("_definition")
            || k.ends_with("_declaration")
            || k.ends_with("_item")
            || k.ends_with("_specifier")
            || k == "function"
            || k == "method")
        && SCOPES.iter().any(|s| k.contains(s))
}

/// The function and class a range sits in, outermost first, as
/// `Child.run`; `None` at the top level.
fn enclosing_name(top: &Node<'_, Doc>, start: usize, end: usize) -> Option<String> {
    // The deepest node containing the range.
    let mut node = top.clone();
    loop {
        let next = node.children().find(|c| {
            c.range().start <= start && end <= c.range().end && c.range() != node.range()
        });
        match next {
            Some(c) => node = c,
            None => break,
        }
    }
    let mut names = Vec::new();
    let mut cur = node.parent();
    // The match itself is not its own scope: start from its parent.
    while let Some(n) = cur {
        if is_scope_kind(&n.kind()) {
            let name = n
                .field("name")
                .or_else(|| {
                    n.field("declarator")
                        .and_then(|d| d.field("declarator").or(Some(d)))
                })
                .or_else(|| n.field("type"))
                .map(|x| one_line(&x.text(), 40));
            if let Some(name) = name {
                names.push(name);
            }
        }
        cur = n.parent();
    }
    names.reverse();
    (!names.is_empty()).then(|| names.join("."))
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

    fn rewrite(lang: &str, pattern: &str, template: &str, source: &str) -> FileRewrite {
        let p = compile(Lang::from_id(lang).unwrap(), pattern).unwrap();
        check_template(template, &p).unwrap();
        let rw = Rewriter::new(template, &p);
        match_source(&p, Some(&rw), source)
            .unwrap()
            .unwrap()
            .rewrite
            .unwrap()
    }

    #[test]
    fn multi_line_replacements_keep_indentation() {
        let src = "def f():\n    if x:\n        old(a, b)\n";
        let out = rewrite("python", "old($A, $B)", "new(\n    $A,\n    $B,\n)", src);
        assert_eq!(
            out.new,
            "def f():\n    if x:\n        new(\n            a,\n            b,\n        )\n"
        );
    }

    #[test]
    fn sequences_and_nesting() {
        let out = rewrite(
            "python",
            "foo($$$A)",
            "bar($$$A)",
            "foo(foo(1), 2)\nfoo()\n",
        );
        assert_eq!(out.new, "bar(foo(1), 2)\nbar()\n");
        assert_eq!((out.replacements, out.nested), (2, 1));
    }
}
