//! `cargo xtask fixtures | test | faults | fuzz [CASES] | bench [NAME]`.
//!
//! `fixtures` installs every real component the integration tests run into
//! `target/fixtures/` (a Python virtualenv, an npm prefix), Debian packages
//! with apt-get when root, and rustup components, skipping what is there.
//! `test` installs what is missing and runs every test of the workspace.
//! `faults` runs the fault suite alone (`tests/tests/faults_*.rs`).
//! `fuzz [CASES]` runs the property-based fuzz targets with many cases.
//! `bench` runs the benchmarks that measure this project against its peers;
//! `bench context [ROOT CALLS.jsonl]` counts the bytes and o200k tokens of
//! what the model reads (see `context.rs`).

mod bench;
mod context;
mod fixtures;

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    match args.first().map(String::as_str) {
        Some("fixtures") => fixtures::install(&root),
        Some("test") => {
            fixtures::install(&root)?;
            test(&root, &args[1..])
        }
        Some("faults") => {
            fixtures::install(&root)?;
            faults(&root, &args[1..])
        }
        Some("fuzz") => fuzz(&root, args.get(1).map(String::as_str)),
        Some("bench") => {
            fixtures::install(&root)?;
            if args.get(1).map(String::as_str) == Some("context") {
                return context::run(&root, &args[2..]);
            }
            bench::run(&root, args.get(1).map(String::as_str))
        }
        _ => {
            eprintln!(
                "usage: cargo xtask fixtures | test [-- NEXTEST ARGS] | faults [-- TEST ARGS] | fuzz [CASES] | bench [NAME] | bench context [ROOT CALLS.jsonl]"
            );
            eprintln!("benchmarks: {}", bench::NAMES.join(", "));
            std::process::exit(2);
        }
    }
}

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// `$PATH` with the fixture folders first, for everything the tests start
/// (built by test-support, as the tests build it).
pub fn fixture_path(root: &Path) -> std::ffi::OsString {
    test_support::fixtures::path_env_in(&fixtures::dir(root))
}

pub fn run(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {shown}"))?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}

fn has_nextest() -> bool {
    Command::new("cargo")
        .args(["nextest", "--version"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The environment every test command runs in: the workspace root as the
/// working directory, the fixture folders first on `PATH`.
fn test_env(root: &Path) -> impl Fn(&mut Command) + '_ {
    let path = fixture_path(root);
    let fixtures = fixtures::dir(root);
    move |c: &mut Command| {
        c.current_dir(root)
            .env("PATH", &path)
            .env("AGENT_TOOLS_FIXTURES", &fixtures);
    }
}

/// The end-to-end tests drive the release binary, as a user runs it.
pub(crate) fn build_release_binary(root: &Path) -> Result<()> {
    let mut build = Command::new("cargo");
    build.args([
        "build",
        "--release",
        "-p",
        "agent-tools",
        "--bin",
        "agent-tools",
    ]);
    test_env(root)(&mut build);
    run(&mut build)
}

/// The fault suite: every `tests/tests/faults_*.rs` of the end-to-end tests
/// crate (races, special files, nesting, kills, hostile MCP input). Also part
/// of `test`, which runs every test of the workspace.
fn faults(root: &Path, extra: &[String]) -> Result<()> {
    build_release_binary(root)?;
    let mut names: Vec<String> = std::fs::read_dir(root.join("tests/tests"))?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".rs")?;
            stem.starts_with("faults_").then(|| stem.to_string())
        })
        .collect();
    names.sort();
    if names.is_empty() {
        bail!("no fault tests found: expected tests/tests/faults_*.rs");
    }
    let mut t = Command::new("cargo");
    t.args(["test", "-p", "tests", "--no-fail-fast"]);
    for n in &names {
        t.args(["--test", n]);
    }
    t.args(extra.iter().filter(|a| *a != "--"));
    test_env(root)(&mut t);
    run(&mut t)
}

/// The fuzz targets: property tests over hostile input, run in release with
/// many more cases than the test suite gives them (`CASES` per property,
/// default 20,000). No nightly toolchain is needed; each target is also in
/// the normal test suite with a few hundred cases.
const FUZZ_TARGETS: &[(&str, &[&str])] = &[
    // MCP line reader: any byte stream, any cuts, any cap.
    ("agent-tools", &["--lib", "mcp::framing"]),
    // Pattern compilation in every language: arbitrary and deep text.
    ("tool-astgrep", &["--test", "pattern_props"]),
    // Path resolution: escapes by `..`, absolute paths, links, NUL.
    ("tool-core", &["--test", "path_props"]),
];

fn fuzz(root: &Path, cases: Option<&str>) -> Result<()> {
    let cases: u64 = match cases {
        None => 20_000,
        Some(c) => c
            .parse()
            .with_context(|| format!("CASES must be a number, not `{c}`"))?,
    };
    for (package, filter) in FUZZ_TARGETS {
        let started = std::time::Instant::now();
        let mut t = Command::new("cargo");
        t.args(["test", "--release", "-p", package])
            .args(*filter)
            .env("PROPTEST_CASES", cases.to_string());
        test_env(root)(&mut t);
        run(&mut t)?;
        eprintln!(
            "fuzz: {package} {}: {cases} cases per property, no failure, {:.1} s",
            filter.join(" "),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn test(root: &Path, extra: &[String]) -> Result<()> {
    let envs = test_env(root);
    build_release_binary(root)?;

    let extra: Vec<&str> = extra
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--")
        .collect();
    if has_nextest() {
        // Doc tests first (nextest does not run them), so the run closes on
        // nextest's summary of every other test.
        let mut d = Command::new("cargo");
        d.args(["test", "--workspace", "--doc", "--quiet"]);
        envs(&mut d);
        run(&mut d)?;
        let mut t = Command::new("cargo");
        t.args(["nextest", "run", "--workspace", "--no-fail-fast"])
            .args(&extra);
        envs(&mut t);
        run(&mut t)
    } else {
        let mut t = Command::new("cargo");
        t.args(["test", "--workspace", "--no-fail-fast"])
            .args(&extra);
        envs(&mut t);
        run(&mut t)
    }
}
