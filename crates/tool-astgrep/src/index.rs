//! A run's search index: what the first `ast_grep` of a run read and
//! parsed, kept for the later ones, which then read and parse only what
//! changed.
//!
//! Per file it keeps the stamp of the file when it was read (size, mtime,
//! ctime, inode), what the file is (its text, or binary, or not UTF-8), the
//! whole syntax tree when a search parsed one, and the results of the last
//! few patterns matched in it. The pre-filter then runs over text in memory,
//! a file that passes is matched in its kept tree, and a pattern asked again
//! is answered from its kept result.
//!
//! Never stale, by these rules:
//! - Every search walks its scope again (the walk is cheap next to
//!   parsing) and compares each file's stamp with the kept one; a file
//!   whose stamp differs is read again, and its tree and results dropped
//!   unless its text is unchanged. A new file is read; a file the walk no
//!   longer finds (deleted, renamed, newly ignored) is never answered from,
//!   and a search from the root forgets it.
//! - A stamp taken within [`RACY_NANOS`] of the read (the clock may be
//!   coarse, or the file may be written again in the same tick) is "racy":
//!   the next search reads the file and compares its text, as git does
//!   with racily clean index entries.
//! - Writes through the run's tools are dropped at once: every write and
//!   removal through `tool_core::fs` is noted in the root's
//!   [`WriteLog`](tool_core::fs::WriteLog), and each search first forgets
//!   the files written since the last one (all of them, when the log
//!   overflowed).
//!
//! Memory: texts, trees and results are counted against a budget
//! (`[astgrep] cache_mb`, [`DEFAULT_CACHE_MB`]). What is worth keeping, by
//! what it saves per byte: a result (a pattern asked again is answered
//! without parsing) is small; a text saves a read and a stat; a tree saves
//! a parse but costs about 40 times its text. So when the budget is full:
//! - a new tree is kept only in place of trees no search used in this
//!   search or the one before (least recently used first); else it is not
//!   kept. Every search walks the whole tree in the same order, and a
//!   least-recently-used cache smaller than the walk would evict each tree
//!   just before the next search asks for it: kept trees stay until two
//!   searches pass them by, so a later search finds the ones kept;
//! - a new text or result may displace any tree, then the results and the
//!   entries of files this search has not walked (least recently used
//!   first); else it is not kept.
//!
//! A file not kept is read and parsed as on a first search, so a tiny
//! budget changes the speed, never the answer.

use crate::matching::{match_source_keeping, match_tree, FileMatches, ParsedFile, TooDeep};
use crate::pattern::{CompiledPattern, Query};
use crate::rewrite::Rewriter;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};
use tool_core::fs::{FsError, Root, WritesSince};

/// The default budget, in MiB: the texts of a large monorepo (the Python
/// standard library's 17,000 files are 135 MB of text) and the trees that
/// pay most (see docs/astgrep.md, "A run's memory").
pub const DEFAULT_CACHE_MB: usize = 512;

/// A stamp this close to the moment the file was read is checked by its
/// text next time: 2 s covers filesystems with one- and two-second times.
pub const RACY_NANOS: i128 = 2_000_000_000;

/// Results kept per file: the patterns a run asks again.
const RESULTS_PER_FILE: usize = 16;

/// After passing the budget, evict down to this share of it, so the next
/// few insertions do not evict again.
const EVICT_TO_PERCENT: usize = 90;

/// What a file looked like when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    ino: u64,
}

impl Stamp {
    fn of(m: &std::fs::Metadata, coarse: bool) -> Stamp {
        let ns = |s: i64, n: i64| {
            if coarse {
                i128::from(s) * 1_000_000_000
            } else {
                i128::from(s) * 1_000_000_000 + i128::from(n)
            }
        };
        Stamp {
            len: m.len(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            // A coarse filesystem's times say nothing more than mtime does.
            ctime_ns: if coarse {
                0
            } else {
                ns(m.ctime(), m.ctime_nsec())
            },
            ino: if coarse { 0 } else { m.ino() },
        }
    }

    fn racy(&self, read_at_ns: i128) -> bool {
        read_at_ns - self.mtime_ns.max(self.ctime_ns) < RACY_NANOS
    }
}

fn now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// What a file is, as the search sees it.
#[derive(Debug, Clone)]
pub enum Loaded {
    Text(Arc<str>),
    Binary,
    NotUtf8,
    TooLarge,
    Unreadable,
}

/// What a match in one file came to: matches, nothing, or too deep.
type Outcome = Result<Option<FileMatches>, TooDeep>;

struct Entry {
    stamp: Stamp,
    /// The stamp was taken too close to the read to be trusted alone.
    racy: bool,
    /// Text, binary or not UTF-8 (never too large or unreadable: those are
    /// decided again each time).
    body: Loaded,
    tree: Option<Arc<ParsedFile>>,
    tree_bytes: usize,
    /// The last search that parsed or used the tree.
    tree_search: u64,
    /// (pattern key, outcome, bytes), most recent last.
    results: Vec<(u64, Arc<Outcome>, usize)>,
    /// The tick of its last use, for eviction.
    used: u64,
    /// The last search that walked it.
    seen: u64,
}

impl Entry {
    fn bytes(&self) -> usize {
        let text = match &self.body {
            Loaded::Text(t) => t.len(),
            _ => 0,
        };
        ENTRY_BYTES + text + self.tree_bytes + self.results.iter().map(|r| r.2).sum::<usize>()
    }
}

/// An entry's own size, path and stamp included, roughly.
const ENTRY_BYTES: usize = 256;

#[derive(Default)]
struct State {
    files: HashMap<PathBuf, Entry>,
    /// The write log's generation whose writes are already forgotten.
    writes_seen: u64,
    tick: u64,
    searches: u64,
    bytes: usize,
    evictions: Evictions,
    /// The last search in which nothing more could be evicted for a tree
    /// ([`Want::Tree`]) or for anything else ([`Want::Other`]): no use
    /// looking again in that search, since what it walks only grows.
    exhausted: [u64; 2],
}

/// What asks for room, which decides what it may displace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Tree = 0,
    Other = 1,
}

/// How much the budget cost, for the bench and `doctor`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Evictions {
    pub trees: usize,
    pub entries: usize,
    /// Texts, trees and results not kept for want of room.
    pub not_kept: usize,
}

/// The index's size now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexStats {
    pub files: usize,
    pub texts: usize,
    pub trees: usize,
    pub results: usize,
    /// Counted against the budget.
    pub bytes: usize,
    pub budget: usize,
    pub evictions: Evictions,
}

/// One run's index (see the module documentation).
pub struct SearchIndex {
    budget: usize,
    /// Stamps in whole seconds, without ctime or inode: what a filesystem
    /// with a coarse clock gives (tests).
    coarse: bool,
    state: Mutex<State>,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("stats", &self.stats())
            .finish()
    }
}

impl Default for SearchIndex {
    fn default() -> Self {
        SearchIndex::with_budget_mb(DEFAULT_CACHE_MB)
    }
}

impl SearchIndex {
    pub fn with_budget_mb(mb: usize) -> SearchIndex {
        SearchIndex::with_budget_bytes(mb.saturating_mul(1024 * 1024))
    }

    pub fn with_budget_bytes(bytes: usize) -> SearchIndex {
        SearchIndex {
            budget: bytes,
            coarse: false,
            state: Mutex::default(),
        }
    }

    /// Take stamps as a filesystem with a one-second clock would (tests of
    /// the racy check).
    #[doc(hidden)]
    pub fn with_coarse_clock(mut self) -> SearchIndex {
        self.coarse = true;
        self
    }

    pub fn stats(&self) -> IndexStats {
        let state = self.state.lock().expect("index lock");
        let mut stats = IndexStats {
            files: state.files.len(),
            texts: 0,
            trees: 0,
            results: 0,
            bytes: state.bytes,
            budget: self.budget,
            evictions: state.evictions,
        };
        for e in state.files.values() {
            stats.texts += usize::from(matches!(e.body, Loaded::Text(_)));
            stats.trees += usize::from(e.tree.is_some());
            stats.results += e.results.len();
        }
        stats
    }

    /// Start a search under `root`: forget what the run's tools wrote
    /// since the last one.
    pub fn begin<'i>(&'i self, root: &'i Root) -> Pass<'i> {
        let mut state = self.state.lock().expect("index lock");
        state.searches += 1;
        let search = state.searches;
        match root.writes().since(state.writes_seen) {
            WritesSince::Paths { paths, generation } => {
                for rel in paths {
                    let path = root.path().join(rel);
                    if let Some(e) = state.files.remove(&path) {
                        state.bytes -= e.bytes();
                    }
                }
                state.writes_seen = generation;
            }
            WritesSince::Lost { generation } => {
                state.files.clear();
                state.bytes = 0;
                state.writes_seen = generation;
            }
        }
        Pass {
            index: self,
            root,
            search,
        }
    }
}

/// One search's use of the index.
pub struct Pass<'i> {
    index: &'i SearchIndex,
    root: &'i Root,
    search: u64,
}

impl Pass<'_> {
    /// The file at `path` as it is now. `walked` is the walk's stat of it,
    /// when it has one; a file whose stamp matches the kept one (and is not
    /// racy) is not read.
    pub fn load(&self, path: &Path, walked: Option<&std::fs::Metadata>, max_bytes: u64) -> Loaded {
        let walked = walked
            .cloned()
            .or_else(|| std::fs::symlink_metadata(path).ok());
        let coarse = self.index.coarse;
        let stamp = walked.as_ref().map(|m| Stamp::of(m, coarse));
        let mut verify: Option<Loaded> = None;
        {
            let mut state = self.index.state.lock().expect("index lock");
            state.tick += 1;
            let tick = state.tick;
            if let Some(e) = state.files.get_mut(path) {
                if Some(e.stamp) == stamp {
                    e.seen = self.search;
                    e.used = tick;
                    if !e.racy {
                        return e.body.clone();
                    }
                    verify = Some(e.body.clone());
                }
            }
        }
        // Read through the root's handle; the stamp is taken on it.
        let read_at = now_ns();
        let Ok(file) = self.root.open_file(path) else {
            return self.forget(path, Loaded::Unreadable);
        };
        let Ok(meta) = file.metadata() else {
            return self.forget(path, Loaded::Unreadable);
        };
        let stamp = Stamp::of(&meta, coarse);
        let bytes = match file.read_capped(max_bytes) {
            Ok(b) => b,
            Err(FsError::TooLarge { .. }) => return self.forget(path, Loaded::TooLarge),
            Err(_) => return self.forget(path, Loaded::Unreadable),
        };
        let body = if memchr::memchr(0, &bytes).is_some() {
            Loaded::Binary
        } else {
            match String::from_utf8(bytes) {
                Ok(s) => Loaded::Text(Arc::from(s)),
                Err(_) => Loaded::NotUtf8,
            }
        };
        let same_text = match (&verify, &body) {
            (Some(Loaded::Text(old)), Loaded::Text(new)) => old == new,
            (Some(Loaded::Binary), Loaded::Binary) | (Some(Loaded::NotUtf8), Loaded::NotUtf8) => {
                true
            }
            _ => false,
        };
        let mut state = self.index.state.lock().expect("index lock");
        state.tick += 1;
        let tick = state.tick;
        let racy = stamp.racy(read_at);
        if same_text {
            if let Some(e) = state.files.get_mut(path) {
                // Unchanged: keep its tree and results, and the text they
                // were made from.
                e.stamp = stamp;
                e.racy = racy;
                e.seen = self.search;
                e.used = tick;
                return e.body.clone();
            }
        }
        let entry = Entry {
            stamp,
            racy,
            body: body.clone(),
            tree: None,
            tree_bytes: 0,
            tree_search: 0,
            results: Vec::new(),
            used: tick,
            seen: self.search,
        };
        if let Some(old) = state.files.remove(path) {
            state.bytes -= old.bytes();
        }
        let added = entry.bytes();
        if self
            .index
            .make_room(&mut state, added, Want::Other, self.search)
        {
            state.files.insert(path.to_path_buf(), entry);
            state.bytes += added;
        }
        body
    }

    fn forget(&self, path: &Path, loaded: Loaded) -> Loaded {
        let mut state = self.index.state.lock().expect("index lock");
        if let Some(e) = state.files.remove(path) {
            state.bytes -= e.bytes();
        }
        loaded
    }

    /// Match `pattern` in the file at `path`, whose text `source` came
    /// from [`load`](Self::load) in this search: from a kept result or
    /// tree when there is one, else as a first search would (and keep
    /// what that gave).
    pub fn match_file(
        &self,
        path: &Path,
        pattern: &CompiledPattern,
        rewriter: Option<&Rewriter>,
        source: &Arc<str>,
    ) -> Outcome {
        let key = result_key(pattern, rewriter);
        let tree = {
            let mut state = self.index.state.lock().expect("index lock");
            state.tick += 1;
            let tick = state.tick;
            match state.files.get_mut(path) {
                Some(e) if is_same_text(&e.body, source) => {
                    e.used = tick;
                    if let Some(k) = key {
                        if let Some(i) = e.results.iter().position(|r| r.0 == k) {
                            let hit = e.results.remove(i);
                            let outcome = (*hit.1).clone();
                            e.results.push(hit);
                            return outcome;
                        }
                    }
                    e.tree_search = self.search;
                    e.tree.clone().filter(|t| t.lang == pattern.lang)
                }
                // Not kept (evicted, or changed since): as a first search.
                _ => return crate::matching::match_source(pattern, rewriter, source),
            }
        };
        let (outcome, parsed) = match tree {
            Some(t) => (match_tree(pattern, rewriter, &t), None),
            None => match_source_keeping(pattern, rewriter, source),
        };
        self.keep(path, source, key, &outcome, parsed);
        outcome
    }

    fn keep(
        &self,
        path: &Path,
        source: &Arc<str>,
        key: Option<u64>,
        outcome: &Outcome,
        parsed: Option<ParsedFile>,
    ) {
        if let Some(p) = parsed {
            self.keep_tree(path, source, Arc::new(p));
        }
        let Some(key) = key else { return };
        let bytes = outcome_bytes(outcome);
        let mut state = self.index.state.lock().expect("index lock");
        let Some(e) = state.files.get_mut(path) else {
            return;
        };
        if !is_same_text(&e.body, source) {
            return;
        }
        if e.results.len() == RESULTS_PER_FILE {
            let freed = e.results.remove(0).2;
            state.bytes -= freed;
        }
        // The entry was walked in this search: making room keeps it.
        if !self
            .index
            .make_room(&mut state, bytes, Want::Other, self.search)
        {
            return;
        }
        if let Some(e) = state.files.get_mut(path) {
            e.results.push((key, Arc::new(outcome.clone()), bytes));
            state.bytes += bytes;
        }
    }

    fn keep_tree(&self, path: &Path, source: &Arc<str>, parsed: Arc<ParsedFile>) {
        let bytes = parsed.bytes();
        let mut state = self.index.state.lock().expect("index lock");
        let Some(e) = state.files.get_mut(path) else {
            return;
        };
        if !is_same_text(&e.body, source) {
            return;
        }
        let freed = e.tree_bytes;
        e.tree = None;
        e.tree_bytes = 0;
        state.bytes -= freed;
        if !self
            .index
            .make_room(&mut state, bytes, Want::Tree, self.search)
        {
            return;
        }
        if let Some(e) = state.files.get_mut(path) {
            e.tree = Some(parsed);
            e.tree_bytes = bytes;
            e.tree_search = self.search;
            state.bytes += bytes;
        }
    }

    /// The search walked the whole workspace for the files `searched`
    /// picks (its languages): forget those of them it did not find
    /// (deleted, renamed, newly ignored). Files of other languages were not
    /// looked at, so they stay.
    pub fn finish_whole_walk(&self, searched: impl Fn(&Path) -> bool) {
        let mut state = self.index.state.lock().expect("index lock");
        let search = self.search;
        let mut freed = 0;
        state.files.retain(|path, e| {
            let keep = e.seen == search || !searched(path);
            if !keep {
                freed += e.bytes();
            }
            keep
        });
        state.bytes -= freed;
    }
}

fn is_same_text(body: &Loaded, source: &Arc<str>) -> bool {
    matches!(body, Loaded::Text(t) if Arc::ptr_eq(t, source))
}

/// What identifies a pattern's outcome in a file: its language and text
/// (the compiler is deterministic). Rules and rewrites are not kept.
fn result_key(pattern: &CompiledPattern, rewriter: Option<&Rewriter>) -> Option<u64> {
    if rewriter.is_some() || !matches!(pattern.pattern, Query::Pattern(_)) {
        return None;
    }
    let mut h = DefaultHasher::new();
    pattern.lang.id().hash(&mut h);
    pattern.source.hash(&mut h);
    Some(h.finish())
}

fn outcome_bytes(outcome: &Outcome) -> usize {
    let Ok(Some(found)) = outcome else {
        return 32;
    };
    let records: usize = found
        .records
        .iter()
        .map(|r| {
            std::mem::size_of_val(r)
                + r.text.len()
                + r.enclosing.as_ref().map_or(0, String::len)
                + r.captures
                    .iter()
                    .map(|(a, b)| 48 + a.len() + b.len())
                    .sum::<usize>()
        })
        .sum();
    64 + records + found.unsearched.len() * 24
}

impl SearchIndex {
    /// Whether `need` more bytes fit within the budget, after evicting
    /// what `want` may displace (see the module documentation) down to
    /// [`EVICT_TO_PERCENT`] of it; when they do not, counts one thing not
    /// kept.
    fn make_room(&self, state: &mut State, need: usize, want: Want, search: u64) -> bool {
        if state.bytes + need <= self.budget {
            return true;
        }
        let slot = want as usize;
        if state.exhausted[slot] != search {
            let target = (self.budget / 100 * EVICT_TO_PERCENT).saturating_sub(need);
            // Trees idle in this search and the one before.
            evict_trees(state, target, |e| e.tree_search + 1 < search);
            if want == Want::Other {
                evict_trees(state, target, |_| true);
                for p in least_recent_first(state, |e| e.seen < search && !e.results.is_empty()) {
                    if state.bytes <= target {
                        break;
                    }
                    if let Some(e) = state.files.get_mut(&p) {
                        let freed: usize = e.results.drain(..).map(|r| r.2).sum();
                        state.bytes -= freed;
                    }
                }
                for p in least_recent_first(state, |e| e.seen < search) {
                    if state.bytes <= target {
                        break;
                    }
                    if let Some(e) = state.files.remove(&p) {
                        state.bytes -= e.bytes();
                        state.evictions.entries += 1;
                    }
                }
            }
            if state.bytes + need > self.budget {
                state.exhausted[slot] = search;
            }
        }
        let fits = state.bytes + need <= self.budget;
        state.evictions.not_kept += usize::from(!fits);
        fits
    }
}

/// Drop the trees `which` picks, least recently used first, until the
/// index is within `target` bytes.
fn evict_trees(state: &mut State, target: usize, which: impl Fn(&Entry) -> bool) {
    if state.bytes <= target {
        return;
    }
    for p in least_recent_first(state, |e| e.tree.is_some() && which(e)) {
        if state.bytes <= target {
            return;
        }
        if let Some(e) = state.files.get_mut(&p) {
            state.bytes -= e.tree_bytes;
            e.tree = None;
            e.tree_bytes = 0;
            state.evictions.trees += 1;
        }
    }
}

/// The paths of the entries `which` picks, least recently used first.
fn least_recent_first(state: &State, which: impl Fn(&Entry) -> bool) -> Vec<PathBuf> {
    let mut order: Vec<(u64, &PathBuf)> = state
        .files
        .iter()
        .filter(|(_, e)| which(e))
        .map(|(p, e)| (e.used, p))
        .collect();
    order.sort();
    order.into_iter().map(|(_, p)| p.clone()).collect()
}
