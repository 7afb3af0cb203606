//! The search: a parallel, gitignore-aware walk feeding one ordered result.
//!
//! Work is skipped wherever it cannot find anything: a file of a language the
//! pattern does not compile in is never read, a file lacking one of the
//! pattern's literal tokens is never parsed (ast-grep parses first and
//! filters after), of a Python module only the top-level statements holding
//! the longest literal token are parsed, and in a parsed tree only the
//! subtrees holding it are walked (see `crate::matching`). Whatever order
//! the threads finish in, results are sorted by path and then position, so
//! a capped answer always shows the same first N; of the rest only counts
//! are kept (see [`crate::collect`]). Files that cannot be
//! searched (binary, not UTF-8, too large, unreadable) are counted, never
//! silently dropped; files nested too deeply to match safely are named.
//!
//! Threads: the `ignore` walker's threads only find files; each file is read,
//! parsed and matched on one of our own matching threads, which have a
//! [`MATCH_STACK_BYTES`] stack. Every tree's depth is checked before it is
//! matched (see [`crate::nesting`]), by a probe that enters only the
//! subtrees big enough to be too deep; the matching walk is then the one
//! walk over the tree. No input can overflow a stack here.

use crate::catalog::Lang;
use crate::collect::Collector;
use crate::index::{Loaded, Pass, SearchIndex};
use crate::nesting::MATCH_STACK_BYTES;
use crate::pattern::CompiledPattern;
use crate::rewrite::Rewriter;
use ignore::{WalkBuilder, WalkState};
use memchr::memmem::Finder;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use tool_core::fs::{FsError, Root};
use tool_core::CancellationToken;

pub use crate::collect::{FileResult, Keep};
pub use crate::matching::{
    match_source, parse_in_parts, Candidate, FileMatches, MatchRecord, TooDeep,
};

/// Files larger than this are skipped (and counted).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

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

/// The whole search, sorted; of its matches, what the plan's [`Keep`]
/// kept.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    /// Sorted by path. Capped ([`Keep::First`]): only the files and matches
    /// within the first N, and files out of it that hold unsearched
    /// candidates (without their matches).
    pub files: Vec<FileResult>,
    /// Every match found, kept or not.
    pub matches_total: usize,
    /// Files with at least one match, kept or not.
    pub files_matched: usize,
    /// The most matches held at once between two files.
    pub held_peak: usize,
    /// With [`Keep::Changes`]: the files that would change when the limit
    /// was passed and the search stopped (so at least this many would).
    pub over_limit: Option<usize>,
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
        self.matches_total
    }

    /// Files with at least one match (some results hold only candidates).
    pub fn files_with_matches(&self) -> usize {
        self.files_matched
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
    /// What to keep of each file's result.
    pub keep: Keep,
}

struct Prepared<'p> {
    pattern: &'p CompiledPattern,
    finder: Option<Finder<'p>>,
    /// For the pattern's other literals, each also required.
    others: Vec<Finder<'p>>,
    rewriter: Option<&'p Rewriter>,
    searched: AtomicUsize,
}

#[derive(Default)]
struct Counters {
    files_searched: AtomicUsize,
    prefiltered: AtomicUsize,
    binary: AtomicUsize,
    not_utf8: AtomicUsize,
    too_large: AtomicUsize,
    unreadable: AtomicUsize,
    too_deep: Mutex<Vec<DeepFile>>,
}

/// A file the walk found, for a matching thread: its path, its stat if the
/// walk made one, and which prepared pattern to use.
type Work = (PathBuf, Option<std::fs::Metadata>, usize);

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
    run_indexed(plan, root, targets, globs, None, cancel)
}

/// [`run_paths`] through the run's [`SearchIndex`]: files unchanged since
/// an earlier search are not read again, kept trees and results are used.
/// The answer is the same as without it.
pub fn run_indexed(
    plan: &SearchPlan,
    root: &Root,
    targets: &[PathBuf],
    globs: Option<&ignore::overrides::Override>,
    index: Option<&SearchIndex>,
    cancel: &CancellationToken,
) -> std::io::Result<SearchOutcome> {
    let pass = index.map(|i| i.begin(root));
    let prepared = prepare(plan);
    let uncompiled: Vec<(Lang, AtomicUsize)> = plan
        .uncompiled
        .iter()
        .map(|l| (*l, AtomicUsize::new(0)))
        .collect();
    let counters = Counters::default();
    let results = Mutex::new(Collector::new(plan.keep));
    // Set when the answer is decided before the walk ends.
    let stop = AtomicBool::new(false);
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
    let visit = |path: &Path, meta: Option<&std::fs::Metadata>, which: usize| {
        let p = &prepared[which];
        let at = Source {
            root,
            pass: pass.as_ref(),
            max_bytes: plan.max_file_bytes,
        };
        if let Some(r) = search_file(p, path, meta, &at, &counters) {
            if !results.lock().expect("results lock").add(r) {
                stop.store(true, Ordering::Relaxed);
            }
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
            let Ok((path, meta, which)) = next else {
                return;
            };
            // After a cancel or a stop the queue is drained without work.
            if !cancel.is_cancelled() && !stop.load(Ordering::Relaxed) {
                visit(&path, meta.as_ref(), which);
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
                let stop = &stop;
                Box::new(move |entry| {
                    if cancel.is_cancelled() || stop.load(Ordering::Relaxed) {
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
                        let meta = entry.metadata().ok();
                        if work_tx
                            .send((entry.path().to_path_buf(), meta, which))
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

    if let Some(pass) = &pass {
        let whole = globs.is_none() && targets.iter().any(|t| t == root.path());
        if whole && !cancel.is_cancelled() && !stop.load(Ordering::Relaxed) {
            pass.finish_whole_walk(|path| {
                if plan.explicit {
                    plan.patterns.first().is_some_and(|p| p.lang.claims(path))
                } else {
                    Lang::from_path(path).is_some_and(|l| plan.patterns.iter().any(|p| p.lang == l))
                }
            });
        }
    }
    Ok(outcome(
        plan,
        (&prepared, &uncompiled),
        counters,
        results.into_inner().expect("results lock"),
        cancel.is_cancelled(),
    ))
}

/// Each pattern of `plan` with its literal finders and rewriter.
fn prepare(plan: &SearchPlan) -> Vec<Prepared<'_>> {
    plan.patterns
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
        .collect()
}

/// The search's answer from what its threads counted and collected.
fn outcome(
    plan: &SearchPlan,
    (prepared, uncompiled): (&[Prepared<'_>], &[(Lang, AtomicUsize)]),
    counters: Counters,
    results: Collector,
    cancelled: bool,
) -> SearchOutcome {
    let collected = results.finish();
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
    SearchOutcome {
        files: collected.files,
        matches_total: collected.total_matches,
        files_matched: collected.files_with_matches,
        held_peak: collected.held_peak,
        over_limit: collected.over_limit,
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
        cancelled,
    }
}

fn relative(root: &Path, path: &Path) -> String {
    let p = path.strip_prefix(root).unwrap_or(path);
    p.to_string_lossy().replace('\\', "/")
}

/// Where a matching thread gets a file's text: through the index when the
/// run has one, else read from the root.
struct Source<'a> {
    root: &'a Root,
    pass: Option<&'a Pass<'a>>,
    max_bytes: u64,
}

impl Source<'_> {
    fn load(&self, path: &Path, meta: Option<&std::fs::Metadata>) -> Loaded {
        if let Some(pass) = self.pass {
            return pass.load(path, meta, self.max_bytes);
        }
        let bytes = match self.root.read(path, self.max_bytes) {
            Ok(b) => b,
            Err(FsError::TooLarge { .. }) => return Loaded::TooLarge,
            Err(_) => return Loaded::Unreadable,
        };
        if memchr::memchr(0, &bytes).is_some() {
            return Loaded::Binary;
        }
        match String::from_utf8(bytes) {
            Ok(s) => Loaded::Text(Arc::from(s)),
            Err(_) => Loaded::NotUtf8,
        }
    }
}

fn search_file(
    p: &Prepared<'_>,
    path: &Path,
    meta: Option<&std::fs::Metadata>,
    at: &Source<'_>,
    counters: &Counters,
) -> Option<FileResult> {
    if meta.is_some_and(|m| m.len() > at.max_bytes) {
        counters.too_large.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    let source = match at.load(path, meta) {
        Loaded::Text(t) => t,
        Loaded::TooLarge => {
            counters.too_large.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Loaded::Unreadable => {
            counters.unreadable.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Loaded::Binary => {
            counters.binary.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Loaded::NotUtf8 => {
            counters.not_utf8.fetch_add(1, Ordering::Relaxed);
            return None;
        }
    };
    counters.files_searched.fetch_add(1, Ordering::Relaxed);
    p.searched.fetch_add(1, Ordering::Relaxed);
    // The pre-filter: without every literal token, no parse.
    let lacks = |f: &Finder<'_>| f.find(source.as_bytes()).is_none();
    if p.finder.iter().chain(&p.others).any(lacks) {
        counters.prefiltered.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    let found = match at.pass {
        Some(pass) => pass.match_file(path, p.pattern, p.rewriter, &source),
        None => match_source(p.pattern, p.rewriter, &source),
    };
    let result = match found {
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
                    rel: relative(at.root.path(), path),
                    depth,
                    limit,
                });
            return None;
        }
    };
    Some(FileResult {
        path: path.to_path_buf(),
        rel: relative(at.root.path(), path),
        lang: p.pattern.lang,
        matches: result.records,
        rewrite: result.rewrite,
        unsearched: result.unsearched,
        parsed_in_parts: result.parsed_in_parts,
    })
}
