//! The memory part of `cargo xtask bench astgrep`: peak RSS beside wall
//! time, this crate against the ast-grep CLI, each in a fresh process
//! measured by GNU time (`/usr/bin/time -f "%e %M"`), so neither side
//! carries the bench's own memory.
//!
//! Our side is this same example run again with `BENCH_CHILD=<case>`: one
//! call of `ast_grep` (capped at 50, as the model asks) or `ast_edit`
//! (staged, never written), as the tools run it. The CLI prints every match
//! as JSON lines (it has no cap), read and counted as they come.
//!
//! The `run-…` cases search through a run's index (see `tool_astgrep::index`)
//! of the default budget or a small one: a run's first search, which keeps
//! the texts and trees it read for the searches after it.
//! `BENCH_MEMORY_CASES=a,b` runs those cases only.
//!
//! `BENCH_COPIES=N` (N > 1) searches the standard library's `.py` files
//! copied N times side by side under `target/bench-corpus/stdlib-xN`, made
//! once and reused. There the wide rewrite changes more files than one edit
//! may, so it is refused; `one-copy-edit` stages the same rewrite within the
//! limit, in the first copy only (`copy0`), on both sides.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tool_astgrep::index::SearchIndex;
use tool_astgrep::ops;
use tool_core::staging::EditStore;
use tool_core::staging::Journal;
use tool_core::{CancellationToken, Workspace};

pub(crate) struct MemoryCase {
    pub(crate) name: &'static str,
    pub(crate) pattern: &'static str,
    pub(crate) rewrite: Option<&'static str>,
    /// Search only the first copy (run only when there are copies).
    pub(crate) one_copy: bool,
    /// Search through a run's index of this budget in MiB, which keeps
    /// what it read and parsed (the run's first search); `None`: without.
    pub(crate) index_mb: Option<usize>,
}

pub(crate) const MEMORY_CASES: &[MemoryCase] = &[
    MemoryCase {
        name: "capped-def",
        pattern: "def $F($$$A): $$$B",
        rewrite: None,
        one_copy: false,
        index_mb: None,
    },
    MemoryCase {
        name: "narrow",
        pattern: "$X == $X",
        rewrite: None,
        one_copy: false,
        index_mb: None,
    },
    MemoryCase {
        name: "wide-rewrite",
        pattern: "isinstance($X, str)",
        rewrite: Some("isinstance($X, (str, bytes))"),
        one_copy: false,
        index_mb: None,
    },
    MemoryCase {
        name: "one-copy-edit",
        pattern: "isinstance($X, str)",
        rewrite: Some("isinstance($X, (str, bytes))"),
        one_copy: true,
        index_mb: None,
    },
    MemoryCase {
        name: "run-isinstance",
        pattern: "isinstance($X, $Y)",
        rewrite: None,
        one_copy: false,
        index_mb: Some(tool_astgrep::index::DEFAULT_CACHE_MB),
    },
    MemoryCase {
        name: "run-def",
        pattern: "def $F($$$A): $$$B",
        rewrite: None,
        one_copy: false,
        index_mb: Some(tool_astgrep::index::DEFAULT_CACHE_MB),
    },
    MemoryCase {
        name: "run-def-256",
        pattern: "def $F($$$A): $$$B",
        rewrite: None,
        one_copy: false,
        index_mb: Some(256),
    },
];

/// The folder of the first copy, which `one_copy` cases search.
const ONE_COPY: &str = "copy0";

/// The corpus for `copies` copies of `stdlib` (the stdlib itself for 1).
pub(crate) fn corpus(stdlib: &Path, copies: usize) -> PathBuf {
    if copies <= 1 {
        return stdlib.to_path_buf();
    }
    let dir = test_support::fixtures::workspace_root()
        .join("target/bench-corpus")
        .join(format!("stdlib-x{copies}"));
    let done = dir.join(".complete");
    if done.exists() {
        return dir;
    }
    eprintln!(
        "bench: copying the stdlib's .py files {copies} times into {}",
        dir.display()
    );
    let _ = std::fs::remove_dir_all(&dir);
    for entry in ignore::WalkBuilder::new(stdlib).build().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "py") || !path.is_file() {
            continue;
        }
        let rel = path.strip_prefix(stdlib).expect("walked under the stdlib");
        for i in 0..copies {
            let to = dir.join(format!("copy{i}")).join(rel);
            std::fs::create_dir_all(to.parent().expect("a file has a folder"))
                .expect("target is writable");
            std::fs::copy(path, &to).expect("copy a stdlib file");
        }
    }
    std::fs::write(&done, "").expect("target is writable");
    dir
}

/// In the child: one tool call as the model makes it; prints what it found.
pub(crate) fn child(name: &str, root: &Path) {
    let case = MEMORY_CASES
        .iter()
        .find(|c| c.name == name)
        .expect("a known memory case");
    let ws = Workspace::new(root).expect("corpus exists");
    let cancel = CancellationToken::new();
    let path = case.one_copy.then_some(ONE_COPY);
    let Some(rewrite) = case.rewrite else {
        let index = case.index_mb.map(SearchIndex::with_budget_mb);
        let req = ops::FindRequest {
            index: index.as_ref(),
            pattern: Some(case.pattern),
            paths: path.into_iter().map(str::to_string).collect(),
            language: Some("python"),
            max_results: Some(50),
            ..Default::default()
        };
        let out = ops::find_with(&ws, &req, &cancel).expect("the search answers");
        let s = out.structured.expect("structured");
        println!("{} matches", s["total"]);
        return;
    };
    let journal = tempfile::tempdir().expect("a temporary folder");
    let store = EditStore::open(Journal::at(journal.path(), &ws));
    match ops::stage(
        &ws,
        &store,
        case.pattern,
        rewrite,
        path,
        Some("python"),
        &cancel,
    ) {
        Ok(out) => {
            let s = out.structured.expect("structured");
            println!(
                "{} matches, {} files staged",
                s["matches"],
                s["files"].as_array().map_or(0, Vec::len)
            );
        }
        Err(e) => {
            let m = e.to_string();
            let count = m
                .split("would change ")
                .nth(1)
                .and_then(|r| r.split(" files").next())
                .unwrap_or("?");
            println!("refused: {count} files");
        }
    }
}

/// Wall seconds, peak RSS in MiB, and what the command printed (its last
/// line, or the count of its lines with `count_lines`).
struct Measured {
    secs: f64,
    peak_mib: f64,
    said: String,
}

fn measure(mut cmd: Command, count_lines: bool) -> Measured {
    let report = tempfile::NamedTempFile::new().expect("a temporary file");
    let mut timed = Command::new("/usr/bin/time");
    timed
        .args(["-f", "%e %M", "-o"])
        .arg(report.path())
        .arg(cmd.get_program())
        .args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        timed.current_dir(dir);
    }
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            timed.env(k, v);
        }
    }
    cmd = timed;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("/usr/bin/time (GNU time) runs");
    let mut lines = 0usize;
    let mut last = String::new();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let Ok(line) = line else { break };
        lines += 1;
        last = line;
    }
    child.wait().expect("the child ends");
    let text = std::fs::read_to_string(report.path()).unwrap_or_default();
    let mut fields = text.split_whitespace().rev();
    let kib: f64 = fields.next().and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let secs: f64 = fields.next().and_then(|s| s.parse().ok()).unwrap_or(0.0);
    Measured {
        secs,
        peak_mib: kib / 1024.0,
        said: if count_lines {
            format!("{lines} matches")
        } else {
            last
        },
    }
}

/// The memory table: every case, ours and the CLI's, one run each (peak RSS
/// varies little between runs; times are of one run).
pub(crate) fn run(cli: &Path, corpus: &Path, copies: usize) {
    println!("memory (copies: {copies}; one fresh process per run; peak RSS from GNU time):");
    println!(
        "{:<13} {:<22} {:>10} {:>10} {:>6}  {:>8} {:>8}  ours / cli",
        "case", "pattern", "ours MiB", "cli MiB", "ratio", "ours s", "cli s"
    );
    let me = std::env::current_exe().expect("the bench knows its own path");
    let only = std::env::var("BENCH_MEMORY_CASES").ok();
    let picked = |c: &&MemoryCase| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|n| n == c.name))
    };
    for case in MEMORY_CASES
        .iter()
        .filter(|c| copies > 1 || !c.one_copy)
        .filter(picked)
    {
        let mut ours = Command::new(&me);
        ours.env("BENCH_CHILD", case.name)
            .env("BENCH_CHILD_ROOT", corpus);
        let ours = measure(ours, false);
        let mut theirs = Command::new(cli);
        theirs.current_dir(corpus).args([
            "run",
            "-l",
            "python",
            "-p",
            case.pattern,
            "--json=stream",
        ]);
        if let Some(rw) = case.rewrite {
            theirs.args(["-r", rw]);
        }
        theirs.arg(if case.one_copy { ONE_COPY } else { "." });
        let theirs = measure(theirs, true);
        println!(
            "{:<13} {:<22} {:>10.1} {:>10.1} {:>5.2}x  {:>8.2} {:>8.2}  {} / {}",
            case.name,
            case.pattern,
            ours.peak_mib,
            theirs.peak_mib,
            ours.peak_mib / theirs.peak_mib.max(1e-9),
            ours.secs,
            theirs.secs,
            ours.said,
            theirs.said
        );
    }
}
