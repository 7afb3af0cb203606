//! `cargo xtask bench astgrep`: this crate's search against the `ast-grep`
//! CLI on the same corpus — the standard library of the machine's Python —
//! for a selective pattern, a non-selective one and a rewrite. Prints both
//! wall times, the ratio, and whether the two match sets are identical, then
//! the two ratios the issue sets targets for on one line.
//!
//! Both sides use every core (the CLI's default thread count and ours). The
//! corpus is read once before timing so neither side pays for a cold page
//! cache. The machine may be shared, so each case runs `BENCH_REPS` rounds
//! (default 5), ours and the CLI's interleaved within a round, and the
//! median of each side is reported. `BENCH_CASE=selective` (a case's name)
//! runs that case alone; `BENCH_PATTERN='print($$$A)'` (with
//! `BENCH_REWRITE=…` for a rewrite) runs a pattern of one's own instead.
//!
//! Then the run table (`bench/run.rs`): several patterns in one run through
//! the run's search index, each repeated, against the CLI, on the stdlib
//! and the C projects under `target/bench-corpus`. `BENCH_CASE=run` runs
//! that table alone.
//!
//! Then the memory table (`bench/memory.rs`): peak RSS and time of one
//! `ast_grep` or `ast_edit` call against the CLI, each in a fresh process,
//! on the stdlib or (`BENCH_COPIES=N`) N copies of it. `BENCH_CASE=memory`
//! runs that table alone.

#[path = "bench/memory.rs"]
mod memory;
#[path = "bench/run.rs"]
mod run;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use tool_astgrep::ops;
use tool_astgrep::rewrite::{check_template, Rewriter};
use tool_astgrep::search;
use tool_core::staging::apply_replacements;
use tool_core::{CancellationToken, Workspace};

struct Case {
    name: &'static str,
    pattern: &'static str,
    rewrite: Option<&'static str>,
    /// The ratio the issue asks for, if any.
    target: Option<f64>,
}

const CASES: &[Case] = &[
    Case {
        name: "selective",
        pattern: "isinstance($X, $Y)",
        rewrite: None,
        target: Some(0.5),
    },
    Case {
        name: "non-selective",
        pattern: "$X == $X",
        rewrite: None,
        target: Some(0.8),
    },
    Case {
        name: "rewrite",
        pattern: "$X == None",
        rewrite: Some("$X is None"),
        target: None,
    },
];

/// (file, start byte, end byte) of every match.
type MatchSet = BTreeSet<(String, usize, usize)>;

fn stdlib() -> PathBuf {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sysconfig;print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .expect("python3 must be installed (it is the corpus)");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn warm(dir: &Path) -> (usize, u64) {
    warm_ext(dir, "python")
}

/// Read every file of `lang` under `dir` once (so no side pays for a cold
/// page cache); their count and bytes.
fn warm_ext(dir: &Path, lang: &str) -> (usize, u64) {
    let exts: &[&str] = match lang {
        "c" => &["c", "h"],
        _ => &["py"],
    };
    let mut files = 0;
    let mut bytes = 0;
    for entry in ignore::WalkBuilder::new(dir).build().flatten() {
        if entry
            .path()
            .extension()
            .is_some_and(|e| exts.iter().any(|x| e == *x))
        {
            if let Ok(b) = std::fs::read(entry.path()) {
                files += 1;
                bytes += b.len() as u64;
            }
        }
    }
    (files, bytes)
}

struct Ours {
    time: Duration,
    /// user + system time of this process over the search (all its threads).
    cpu: Duration,
    matches: MatchSet,
    /// file → new content, for the rewrite.
    rewritten: BTreeMap<String, String>,
    /// Files with matches, and how many of them were parsed only in part.
    files: usize,
    in_parts: usize,
}

fn run_ours(corpus: &Path, case: &Case) -> Ours {
    let ws = Workspace::new(corpus).expect("corpus exists");
    let cpu_before = cpu_time(libc::RUSAGE_SELF);
    let started = Instant::now();
    let mut scope = ops::scope(&ws, case.pattern, None, Some("python")).expect("pattern compiles");
    if let Some(rw) = case.rewrite {
        let p = &scope.plan.patterns[0];
        check_template(rw, p).expect("template fits");
        scope.plan.rewriters = Some(vec![Rewriter::new(rw, p)]);
    }
    let outcome = search::run(
        &scope.plan,
        ws.dir(),
        &scope.target,
        &CancellationToken::new(),
    )
    .expect("search threads start");
    let time = started.elapsed();
    let cpu = cpu_time(libc::RUSAGE_SELF).saturating_sub(cpu_before);
    let mut matches = MatchSet::new();
    let mut rewritten = BTreeMap::new();
    for f in &outcome.files {
        for m in &f.matches {
            matches.insert((f.rel.clone(), m.start, m.end));
        }
        if let Some(rw) = &f.rewrite {
            // A rewrite keeps its replacements, not the texts.
            let old = std::fs::read_to_string(&f.path).expect("a searched file is readable");
            rewritten.insert(f.rel.clone(), apply_replacements(&old, &rw.edits));
        }
    }
    Ours {
        time,
        cpu,
        matches,
        rewritten,
        files: outcome.files.len(),
        in_parts: outcome.files.iter().filter(|f| f.parsed_in_parts).count(),
    }
}

struct Cli {
    time: Duration,
    /// user + system time of the CLI's process.
    cpu: Duration,
    matches: MatchSet,
    rewritten: BTreeMap<String, String>,
}

fn run_cli(cli: &Path, corpus: &Path, case: &Case) -> Cli {
    let mut cmd = Command::new(cli);
    cmd.current_dir(corpus)
        .args(["run", "-l", "python", "-p", case.pattern, "--json=stream"]);
    if let Some(rw) = case.rewrite {
        cmd.args(["-r", rw]);
    }
    cmd.arg(".");
    let cpu_before = cpu_time(libc::RUSAGE_CHILDREN);
    let started = Instant::now();
    let out = cmd.output().expect("ast-grep runs");
    let time = started.elapsed();
    let cpu = cpu_time(libc::RUSAGE_CHILDREN).saturating_sub(cpu_before);
    let mut matches = MatchSet::new();
    // file → [(start, end, replacement)]
    let mut edits: BTreeMap<String, Vec<(usize, usize, String)>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let file = v["file"]
            .as_str()
            .unwrap_or("")
            .trim_start_matches("./")
            .to_string();
        let start = v["range"]["byteOffset"]["start"].as_u64().unwrap_or(0) as usize;
        let end = v["range"]["byteOffset"]["end"].as_u64().unwrap_or(0) as usize;
        matches.insert((file.clone(), start, end));
        if let Some(rep) = v["replacement"].as_str() {
            let rs = v["replacementOffsets"]["start"]
                .as_u64()
                .map(|n| n as usize);
            let re = v["replacementOffsets"]["end"].as_u64().map(|n| n as usize);
            edits.entry(file).or_default().push((
                rs.unwrap_or(start),
                re.unwrap_or(end),
                rep.to_string(),
            ));
        }
    }
    let mut rewritten = BTreeMap::new();
    for (file, mut list) in edits {
        let Ok(src) = std::fs::read_to_string(corpus.join(&file)) else {
            continue;
        };
        list.sort_by_key(|e| (e.0, std::cmp::Reverse(e.1)));
        let mut out = String::new();
        let mut cursor = 0;
        for (s, e, rep) in list {
            if s < cursor {
                continue;
            }
            out.push_str(&src[cursor..s]);
            out.push_str(&rep);
            cursor = e;
        }
        out.push_str(&src[cursor..]);
        rewritten.insert(file, out);
    }
    Cli {
        time,
        cpu,
        matches,
        rewritten,
    }
}

/// User plus system time used so far by `who` (`RUSAGE_SELF`: this process,
/// every thread; `RUSAGE_CHILDREN`: its children that have been waited for).
fn cpu_time(who: libc::c_int) -> Duration {
    // SAFETY: getrusage fills the zeroed struct it is given and nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &raw mut usage);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The middle value (the upper one of the two middle ones).
fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn main() {
    // As the agent-tools binary does (src/parser_memory.rs).
    // SAFETY: nothing has parsed yet.
    unsafe { tool_astgrep::parser_memory::use_mimalloc() };
    if let (Ok(case), Some(root)) = (
        std::env::var("BENCH_CHILD"),
        std::env::var_os("BENCH_CHILD_ROOT"),
    ) {
        memory::child(&case, Path::new(&root));
        return;
    }
    let corpus = stdlib();
    let Some(cli) =
        test_support::fixtures::find("ast-grep").or_else(|| test_support::fixtures::find("sg"))
    else {
        eprintln!("bench astgrep: the ast-grep CLI is not installed; run `cargo xtask fixtures`");
        std::process::exit(1);
    };
    let reps: usize = std::env::var("BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
        .max(1);
    let only = std::env::var("BENCH_CASE").ok();
    let copies: usize = std::env::var("BENCH_COPIES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1);
    if only.as_deref() == Some("memory") {
        memory::run(&cli, &memory::corpus(&corpus, copies), copies);
        return;
    }
    if only.as_deref() == Some("run") {
        run_table(&cli, &corpus);
        return;
    }
    let mut cases: Vec<&Case> = CASES
        .iter()
        .filter(|c| only.as_deref().is_none_or(|n| n == c.name))
        .collect();
    // `BENCH_PATTERN=…` (and `BENCH_REWRITE=…`): that pattern alone, to
    // compare match sets on any pattern.
    if let Ok(pattern) = std::env::var("BENCH_PATTERN") {
        let rewrite = std::env::var("BENCH_REWRITE").ok();
        cases = vec![Box::leak(Box::new(Case {
            name: "custom",
            pattern: Box::leak(pattern.into_boxed_str()),
            rewrite: rewrite.map(|r| &*Box::leak(r.into_boxed_str())),
            target: None,
        }))];
    }
    let (files, bytes) = warm(&corpus);
    // `BENCH_OURS_ONLY=1`: time only this crate's side, for a profiler.
    if std::env::var_os("BENCH_OURS_ONLY").is_some() {
        for case in &cases {
            for _ in 0..reps {
                let o = run_ours(&corpus, case);
                println!("{} {} {}", case.name, secs(o.time), o.matches.len());
            }
        }
        return;
    }
    println!(
        "corpus: {} ({files} .py files, {:.0} MB); peer: {} ({}); threads: {}",
        corpus.display(),
        bytes as f64 / 1e6,
        cli.display(),
        String::from_utf8_lossy(
            &Command::new(&cli)
                .arg("--version")
                .output()
                .map(|o| o.stdout)
                .unwrap_or_default()
        )
        .trim(),
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
    );
    println!("{reps} rounds, ours and the CLI's interleaved; medians");
    println!(
        "{:<14} {:<22} {:>9} {:>10} {:>7} {:>7}  {:>17}  {:>19}  identical",
        "case",
        "pattern",
        "ours",
        "ast-grep",
        "ratio",
        "target",
        "cpu ours/cli",
        "matches ours/cli"
    );
    let mut all_ok = true;
    let mut summary = Vec::new();
    let mut parts = Vec::new();
    for case in cases {
        let (ok, target, part) = bench_case(&cli, &corpus, case, reps);
        all_ok &= ok;
        summary.extend(target);
        parts.push(part);
    }
    println!(
        "files with matches parsed only in part (the top-level statements holding the literal): {}",
        parts.join(", ")
    );
    println!("ratios: {}", summary.join(", "));
    if !all_ok {
        println!("(a target was missed or a match set differs; see above)");
    }
    if only.is_none() && std::env::var_os("BENCH_PATTERN").is_none() {
        run_table(&cli, &corpus);
        memory::run(&cli, &memory::corpus(&corpus, copies), copies);
    }
}

/// One case: `reps` rounds of ours and the CLI's, interleaved; its table
/// row printed. Whether it met its target with identical matches, its
/// ratio line for the summary, and its parts count.
fn bench_case(
    cli: &Path,
    corpus: &Path,
    case: &Case,
    reps: usize,
) -> (bool, Option<String>, String) {
    let mut ours_times = Vec::new();
    let mut cli_times = Vec::new();
    let mut ours_cpu = Vec::new();
    let mut cli_cpu = Vec::new();
    let mut ours: Option<Ours> = None;
    let mut cli_run: Option<Cli> = None;
    for _ in 0..reps {
        let o = run_ours(corpus, case);
        ours_times.push(o.time);
        ours_cpu.push(o.cpu);
        ours = Some(o);
        let c = run_cli(cli, corpus, case);
        cli_times.push(c.time);
        cli_cpu.push(c.cpu);
        cli_run = Some(c);
    }
    let (mut ours, mut cli_run) = (ours.expect("ran"), cli_run.expect("ran"));
    ours.time = median(ours_times);
    cli_run.time = median(cli_times);
    ours.cpu = median(ours_cpu);
    cli_run.cpu = median(cli_cpu);
    let cpu_ratio = ours.cpu.as_secs_f64() / cli_run.cpu.as_secs_f64().max(1e-9);
    let ratio = ours.time.as_secs_f64() / cli_run.time.as_secs_f64().max(1e-9);
    let target = case.target.map(|t| {
        format!(
            "{} {ratio:.2}x (target ≤{t:.1}x; cpu {cpu_ratio:.2}x)",
            case.name
        )
    });
    let part = format!("{} {} of {}", case.name, ours.in_parts, ours.files);
    let mut identical = ours.matches == cli_run.matches;
    if case.rewrite.is_some() {
        identical &= ours.rewritten == cli_run.rewritten;
    }
    let meets = case.target.is_none_or(|t| ratio <= t);
    let ok = identical && meets;
    println!(
        "{:<14} {:<22} {:>9} {:>10} {:>6.2}x {:>7}  {:>7}/{:<7} {:>4.2}x  {:>8}/{:<8}  {}",
        case.name,
        case.pattern,
        secs(ours.time),
        secs(cli_run.time),
        ratio,
        case.target
            .map_or_else(|| "-".into(), |t| format!("≤{t:.1}x")),
        secs(ours.cpu),
        secs(cli_run.cpu),
        cpu_ratio,
        ours.matches.len(),
        cli_run.matches.len(),
        if identical { "yes" } else { "NO" }
    );
    if !identical {
        let only_ours: Vec<_> = ours.matches.difference(&cli_run.matches).take(5).collect();
        let only_cli: Vec<_> = cli_run.matches.difference(&ours.matches).take(5).collect();
        println!("    only ours: {only_ours:?}");
        println!("    only ast-grep: {only_cli:?}");
        if case.rewrite.is_some() {
            let differing: Vec<&String> = ours
                .rewritten
                .keys()
                .chain(cli_run.rewritten.keys())
                .filter(|k| ours.rewritten.get(*k) != cli_run.rewritten.get(*k))
                .take(5)
                .collect();
            println!("    rewritten files that differ: {differing:?}");
        }
    }
    (ok, target, part)
}

/// The run table over the stdlib and the C projects unpacked under
/// `target/bench-corpus/{redis,lua}` (absent ones are named and skipped).
fn run_table(cli: &Path, stdlib: &Path) {
    let bench_corpus = test_support::fixtures::workspace_root().join("target/bench-corpus");
    let mut c_projects = Vec::new();
    for name in ["redis", "lua"] {
        let dir = bench_corpus.join(name);
        if dir.is_dir() {
            c_projects.push((name, dir));
        } else {
            println!(
                "run: no {name} at {} (unpack a checkout there to include it)",
                dir.display()
            );
        }
    }
    let mut corpora = vec![run::Corpus {
        name: "stdlib",
        dir: stdlib,
        lang: "python",
        patterns: run::PYTHON,
    }];
    for (name, dir) in &c_projects {
        corpora.push(run::Corpus {
            name,
            dir,
            lang: "c",
            patterns: run::C,
        });
    }
    if !run::run(cli, &corpora) {
        println!("(an indexed search differs from a fresh one; see above)");
    }
}
