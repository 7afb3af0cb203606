//! What a search keeps of what it found, so that its memory grows with the
//! answer and not with the tree.
//!
//! The walk's threads hand each file's result to one [`Collector`], in any
//! order. What it keeps depends on the question ([`Keep`]):
//!
//! - a capped search ([`Keep::First`]) keeps only the matches that can still
//!   be among the first N in the answer's order (by path, then position) and
//!   counts the rest exactly; a file that falls out of the window keeps only
//!   its unsearched candidates (the answer lists every one);
//! - a rewrite ([`Keep::Changes`]) keeps every file until more than the
//!   limit would change, then drops them all and asks the walk to stop;
//! - [`Keep::All`] keeps everything (benchmarks and tests that compare
//!   whole match sets).
//!
//! Invariant: after every [`Collector::add`], a capped collector holds at
//! most N matches, and the files it holds are, with the counters, exactly
//! what sorting every result and taking the first N would give.

use crate::catalog::Lang;
use crate::matching::{Candidate, MatchRecord};
use crate::rewrite::FileRewrite;
use std::collections::BTreeMap;
use std::path::PathBuf;

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
    /// Whether only the top-level statements holding the pattern's literal
    /// were parsed, not the whole file.
    pub parsed_in_parts: bool,
}

/// What a search keeps of each file's result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Keep {
    /// Every file's result.
    #[default]
    All,
    /// The first this many matches in the answer's order; the rest are
    /// only counted.
    First(usize),
    /// Every file, until more than `limit` files would change (a rewrite
    /// that changes the text, and leaves no new syntax error unless
    /// `allow_parse_errors`); then nothing is kept and the walk stops.
    Changes {
        limit: usize,
        allow_parse_errors: bool,
    },
}

/// What the collector hands back when the walk is done.
#[derive(Debug, Default)]
pub struct Collected {
    /// Sorted by path.
    pub files: Vec<FileResult>,
    /// Every match found, kept or not.
    pub total_matches: usize,
    /// Files with at least one match, kept or not.
    pub files_with_matches: usize,
    /// The most matches held at once between two files.
    pub held_peak: usize,
    /// With [`Keep::Changes`]: how many files would change when the limit
    /// was passed and the walk was told to stop.
    pub over_limit: Option<usize>,
}

/// Takes the files' results in any order; keeps what [`Keep`] says.
#[derive(Debug)]
pub struct Collector {
    keep: Keep,
    /// The files holding kept matches (all files, unless capped).
    files: BTreeMap<String, FileResult>,
    /// Matches held in `files`.
    held: usize,
    /// Capped: files out of the window that hold unsearched candidates,
    /// their matches dropped.
    candidates: BTreeMap<String, FileResult>,
    total_matches: usize,
    files_with_matches: usize,
    held_peak: usize,
    /// Files that would change (with [`Keep::Changes`]).
    changing: usize,
    over_limit: bool,
}

impl Collector {
    pub fn new(keep: Keep) -> Collector {
        Collector {
            keep,
            files: BTreeMap::new(),
            held: 0,
            candidates: BTreeMap::new(),
            total_matches: 0,
            files_with_matches: 0,
            held_peak: 0,
            changing: 0,
            over_limit: false,
        }
    }

    /// Take one file's result. Returns false when the walk may stop: the
    /// answer is decided (a rewrite over its limit).
    pub fn add(&mut self, file: FileResult) -> bool {
        self.total_matches += file.matches.len();
        self.files_with_matches += usize::from(!file.matches.is_empty());
        let go_on = match self.keep {
            Keep::All => {
                self.held += file.matches.len();
                self.files.insert(file.rel.clone(), file);
                true
            }
            Keep::First(n) => {
                self.add_capped(file, n);
                true
            }
            Keep::Changes {
                limit,
                allow_parse_errors,
            } => self.add_change(file, limit, allow_parse_errors),
        };
        self.held_peak = self.held_peak.max(self.held);
        go_on
    }

    /// Matches held now.
    pub fn held(&self) -> usize {
        self.held
    }

    fn add_capped(&mut self, mut file: FileResult, n: usize) {
        if file.matches.is_empty() {
            self.park(file);
            return;
        }
        let after_window = self
            .files
            .last_key_value()
            .is_some_and(|(last, _)| *last < file.rel);
        if self.held >= n && after_window {
            self.park(file);
            return;
        }
        self.held += file.matches.len();
        let rel = file.rel.clone();
        file.matches.shrink_to_fit();
        self.files.insert(rel, file);
        // Drop whole files from the end while the others still fill the
        // window, then cut the last one to it.
        while let Some(last) = self.files.last_entry() {
            let len = last.get().matches.len();
            if self.held - len < n {
                break;
            }
            self.held -= len;
            let dropped = last.remove();
            self.park(dropped);
        }
        if self.held > n {
            if let Some(mut last) = self.files.last_entry() {
                let keep = last.get().matches.len() - (self.held - n);
                last.get_mut().matches.truncate(keep);
                last.get_mut().matches.shrink_to_fit();
                self.held = n;
            }
        }
    }

    /// A file out of the window: only its unsearched candidates are kept.
    fn park(&mut self, mut file: FileResult) {
        if file.unsearched.is_empty() {
            return;
        }
        file.matches = Vec::new();
        file.rewrite = None;
        self.candidates.insert(file.rel.clone(), file);
    }

    fn add_change(&mut self, file: FileResult, limit: usize, allow_parse_errors: bool) -> bool {
        if self.over_limit {
            return false;
        }
        let changes = file
            .rewrite
            .as_ref()
            .is_some_and(|rw| rw.changes && (allow_parse_errors || rw.introduced_error.is_none()));
        self.changing += usize::from(changes);
        if self.changing > limit {
            self.over_limit = true;
            self.files = BTreeMap::new();
            self.held = 0;
            return false;
        }
        self.held += file.matches.len();
        self.files.insert(file.rel.clone(), file);
        true
    }

    pub fn finish(self) -> Collected {
        let mut files: Vec<FileResult> = self.files.into_values().collect();
        if !self.candidates.is_empty() {
            files.extend(self.candidates.into_values());
            files.sort_by(|a, b| a.rel.cmp(&b.rel));
        }
        Collected {
            files,
            total_matches: self.total_matches,
            files_with_matches: self.files_with_matches,
            held_peak: self.held_peak,
            over_limit: self.over_limit.then_some(self.changing),
        }
    }
}
