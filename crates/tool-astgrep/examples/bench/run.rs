//! The run table: several different patterns searched in one run through
//! one [`SearchIndex`], each asked twice or more, against the CLI on the
//! same patterns. An agent searches one tree many times in a run; the CLI
//! starts from nothing every time, the run keeps what it read and parsed.
//!
//! Per pattern: its first search in the run (for the first pattern, also
//! the index's build), the median of its repeats, the CLI's median, both
//! ratios, whether every indexed search found exactly what a search without
//! the index, parsing every file whole, finds, and whether that equals the CLI's match set (file,
//! start byte, end byte). Then what the index holds and how much the
//! process grew.
//!
//! Corpora: the Python standard library, and every C project found under
//! `target/bench-corpus/<name>` (redis and lua, unpacked from a fetched
//! mirror; see docs/astgrep.md). `BENCH_RUN_REPEATS` (default 2) repeats
//! per pattern, `BENCH_REPS` (default 3) CLI runs per pattern.
//!
//! For a profiler: `BENCH_RUN_CORPUS=redis` runs one corpus,
//! `BENCH_OURS_ONLY=1` leaves the CLI out, `BENCH_NO_INDEX=1` searches
//! without the index (as before it existed), `BENCH_RUN_PATTERNS=1` runs
//! only the first pattern (the index's build), `BENCH_NO_FRESH=1` leaves
//! out the untimed search without the index, `BENCH_CACHE_MB=N` gives the
//! index a budget of N MiB instead of the default.

use super::MatchSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use tool_astgrep::index::SearchIndex;
use tool_astgrep::{ops, search};
use tool_core::{CancellationToken, Workspace};

/// Patterns for the Python standard library.
pub(crate) const PYTHON: &[&str] = &[
    "isinstance($X, $Y)",
    "$X == $X",
    "len($A)",
    "raise $E from $C",
    "self.assertEqual($A, $B)",
    "print($$$A)",
];

/// Patterns for C projects.
pub(crate) const C: &[&str] = &[
    "malloc($X)",
    "if ($A == NULL) $B",
    "memcpy($A, $B, $C)",
    "$X == $X",
    "return $X;",
    "sizeof($T)",
];

pub(crate) struct Corpus<'a> {
    pub(crate) name: &'a str,
    pub(crate) dir: &'a Path,
    pub(crate) lang: &'a str,
    pub(crate) patterns: &'a [&'a str],
}

/// Our search, through `index` when given.
fn ours(
    ws: &Workspace,
    index: Option<&SearchIndex>,
    lang: &str,
    pattern: &str,
) -> (Duration, MatchSet) {
    let (time, _, set) = ours_cpu(ws, index, lang, pattern);
    (time, set)
}

/// [`ours`] with the CPU time (user + system, all threads) it took.
fn ours_cpu(
    ws: &Workspace,
    index: Option<&SearchIndex>,
    lang: &str,
    pattern: &str,
) -> (Duration, Duration, MatchSet) {
    let cpu_before = super::cpu_time(libc::RUSAGE_SELF);
    let started = Instant::now();
    let scope = ops::scope(ws, pattern, None, Some(lang)).expect("pattern compiles");
    let outcome = search::run_indexed(
        &scope.plan,
        ws.dir(),
        &scope.targets,
        scope.globs.as_ref(),
        index,
        &CancellationToken::new(),
    )
    .expect("search threads start");
    let time = started.elapsed();
    let cpu = super::cpu_time(libc::RUSAGE_SELF).saturating_sub(cpu_before);
    let mut set = MatchSet::new();
    for f in &outcome.files {
        for m in &f.matches {
            set.insert((f.rel.clone(), m.start, m.end));
        }
    }
    (time, cpu, set)
}

/// The CLI's search: its wall time, the CPU time its process took, and
/// its matches.
fn cli(cli: &Path, dir: &Path, lang: &str, pattern: &str) -> (Duration, Duration, MatchSet) {
    let cpu_before = super::cpu_time(libc::RUSAGE_CHILDREN);
    let started = Instant::now();
    let out = Command::new(cli)
        .current_dir(dir)
        .args(["run", "-l", lang, "-p", pattern, "--json=stream", "."])
        .output()
        .expect("ast-grep runs");
    let time = started.elapsed();
    let mut set = MatchSet::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let file = v["file"].as_str().unwrap_or("").trim_start_matches("./");
        let start = v["range"]["byteOffset"]["start"].as_u64().unwrap_or(0) as usize;
        let end = v["range"]["byteOffset"]["end"].as_u64().unwrap_or(0) as usize;
        set.insert((file.to_string(), start, end));
    }
    let cpu = super::cpu_time(libc::RUSAGE_CHILDREN).saturating_sub(cpu_before);
    (time, cpu, set)
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
        .max(1)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

/// One table per corpus; returns whether every indexed search found what
/// a search without the index finds.
pub(crate) fn run(cli_path: &Path, corpora: &[Corpus<'_>]) -> bool {
    // 0 repeats: each pattern once (for a profile of first searches).
    let repeats = std::env::var("BENCH_RUN_REPEATS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let ours_only = std::env::var_os("BENCH_OURS_ONLY").is_some();
    let reps = if ours_only {
        0
    } else {
        env_usize("BENCH_REPS", 3)
    };
    let no_index = std::env::var_os("BENCH_NO_INDEX").is_some();
    let only_corpus = std::env::var("BENCH_RUN_CORPUS").ok();
    let pattern_count = env_usize("BENCH_RUN_PATTERNS", usize::MAX);
    let no_fresh = std::env::var_os("BENCH_NO_FRESH").is_some();
    let mut all_fresh = true;
    for corpus in corpora {
        if only_corpus.as_deref().is_some_and(|c| c != corpus.name) {
            continue;
        }
        let (files, bytes) = super::warm_ext(corpus.dir, corpus.lang);
        println!(
            "\nrun: {} ({} {} files, {:.0} MB), one index, {} patterns; \
             repeats: median of {repeats}; CLI: median of {reps}",
            corpus.name,
            files,
            corpus.lang,
            bytes as f64 / 1e6,
            corpus.patterns.len()
        );
        println!(
            "{:<26} {:>9} {:>9} {:>9} {:>7} {:>7}  {:>15}  =fresh  =cli",
            "pattern", "first", "repeated", "ast-grep", "first×", "rep×", "matches ours/cli"
        );
        let ws = Workspace::new(corpus.dir).expect("corpus exists");
        let index = std::env::var("BENCH_CACHE_MB")
            .ok()
            .and_then(|s| s.parse().ok())
            .map_or_else(SearchIndex::default, SearchIndex::with_budget_mb);
        let rss_before = rss_kib();
        let (mut firsts, mut repeated, mut clis) = (Vec::new(), Vec::new(), Vec::new());
        // The first pattern's CPU time, ours and the CLI's (median): what
        // the build costs on a machine whose load bends wall times.
        let mut build_cpu = None;
        // Later patterns' first searches, CPU time summed: ours, the CLI's.
        let mut later_cpu = (Duration::ZERO, Duration::ZERO);
        for pattern in corpus.patterns.iter().take(pattern_count) {
            let mut cli_times = Vec::new();
            let mut cli_set = MatchSet::new();
            let mut ours_set = MatchSet::new();
            let mut first = Duration::ZERO;
            let (mut first_cpu, mut cli_cpus) = (Duration::ZERO, Vec::new());
            let mut again = Vec::new();
            let mut same_as_fresh = true;
            // The CLI's runs interleaved with ours: first, then repeats.
            for i in 0..reps.max(repeats + 1) {
                if i < reps {
                    let (t, c, s) = cli(cli_path, corpus.dir, corpus.lang, pattern);
                    cli_times.push(t);
                    cli_cpus.push(c);
                    cli_set = s;
                }
                if i <= repeats {
                    let through = (!no_index).then_some(&index);
                    let (t, c, s) = ours_cpu(&ws, through, corpus.lang, pattern);
                    if i == 0 {
                        first = t;
                        first_cpu = c;
                    } else {
                        again.push(t);
                        same_as_fresh &= s == ours_set;
                    }
                    ours_set = s;
                }
            }
            if cli_times.is_empty() {
                cli_times.push(Duration::ZERO);
            }
            let (rep, cli_t) = (median(again), median(cli_times));
            // Untimed: a search without the index, every file parsed whole
            // (so the parts of Python and C files are checked too).
            search::parse_in_parts(false);
            let whole = if no_fresh {
                ours_set.clone()
            } else {
                ours(&ws, None, corpus.lang, pattern).1
            };
            search::parse_in_parts(true);
            if whole != ours_set {
                same_as_fresh = false;
                let only_ours: Vec<_> = ours_set.difference(&whole).take(3).collect();
                let only_whole: Vec<_> = whole.difference(&ours_set).take(3).collect();
                println!("    not fresh: only ours {only_ours:?}, only whole {only_whole:?}");
            }
            all_fresh &= same_as_fresh;
            let identical = ours_set == cli_set;
            let ratio = |d: Duration| d.as_secs_f64() / cli_t.as_secs_f64().max(1e-9);
            println!(
                "{:<26} {:>9} {:>9} {:>9} {:>6.3}x {:>6.3}x  {:>7}/{:<7}  {:>6}  {}",
                pattern,
                ms(first),
                ms(rep),
                ms(cli_t),
                ratio(first),
                ratio(rep),
                ours_set.len(),
                cli_set.len(),
                if same_as_fresh { "yes" } else { "NO" },
                if identical { "yes" } else { "no" }
            );
            if !identical {
                let only_ours: Vec<_> = ours_set.difference(&cli_set).take(3).collect();
                let only_cli: Vec<_> = cli_set.difference(&ours_set).take(3).collect();
                println!("    only ours: {only_ours:?}\n    only ast-grep: {only_cli:?}");
            }
            if build_cpu.is_none() {
                build_cpu = Some((first_cpu, median(cli_cpus)));
            } else {
                later_cpu.0 += first_cpu;
                later_cpu.1 += median(cli_cpus);
            }
            firsts.push(first);
            repeated.push(rep);
            clis.push(cli_t);
        }
        let sum = |v: &[Duration]| v.iter().sum::<Duration>().as_secs_f64();
        let cli_sum = sum(&clis).max(1e-9);
        let build = firsts.first().copied().unwrap_or_default();
        let later_firsts = &firsts[1.min(firsts.len())..];
        let later_cli = sum(&clis[1.min(clis.len())..]).max(1e-9);
        let (ours_cpu_t, cli_cpu_t) = build_cpu.unwrap_or_default();
        println!(
            "{}: the run's first search in CPU time {} vs the CLI's {} ({:.3}x)",
            corpus.name,
            ms(ours_cpu_t),
            ms(cli_cpu_t),
            ours_cpu_t.as_secs_f64() / cli_cpu_t.as_secs_f64().max(1e-9)
        );
        println!(
            "{}: later patterns' first searches in CPU time {} vs the CLI's {} ({:.3}x)",
            corpus.name,
            ms(later_cpu.0),
            ms(later_cpu.1),
            later_cpu.0.as_secs_f64() / later_cpu.1.as_secs_f64().max(1e-9)
        );
        println!(
            "{}: the run's first search (index built) {:.3}x; later patterns' first {:.3}x; \
             repeated {:.3}x of the CLI (sums)",
            corpus.name,
            build.as_secs_f64() / clis[0].as_secs_f64().max(1e-9),
            sum(later_firsts) / later_cli,
            sum(&repeated) / cli_sum,
        );
        print_index(corpus.name, &index, rss_before);
    }
    all_fresh
}

/// What the index holds after a corpus's run, and how much the process grew.
fn print_index(name: &str, index: &SearchIndex, rss_before: u64) {
    let s = index.stats();
    println!(
        "{}: index {} files, {} texts, {} trees, {} kept outcomes, {:.1} MB counted \
         (budget {:.0} MB); process grew {:.1} MB",
        name,
        s.files,
        s.texts,
        s.trees,
        s.results,
        s.bytes as f64 / 1e6,
        s.budget as f64 / 1e6,
        (rss_kib().saturating_sub(rss_before)) as f64 / 1024.0
    );
}
