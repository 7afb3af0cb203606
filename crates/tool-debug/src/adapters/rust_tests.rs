//! Rust tests under lldb: which cargo target a test file belongs to, the
//! test binary built for it (`cargo test --no-run --message-format=json`,
//! bounded), the test named in it (`<binary> --list`), and the run that
//! lldb launches: `<binary> NAME --exact --nocapture --test-threads=1`
//! from the package root, as `cargo test` runs it.
//!
//! Invariant: everything here is decided, built and checked before lldb
//! starts; a build that fails, a bound that runs out or a name that is no
//! test of the binary is answered with why, and nothing is left running.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;
use tool_core::process::{BlockingChild, ChildSpec, Io};

/// The cargo target a source file's tests are built in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CargoTarget {
    /// An integration test, `tests/NAME.rs` or `tests/NAME/main.rs`.
    Test(String),
    /// The library (`src/lib.rs` and its modules).
    Lib,
    /// A binary: `src/main.rs` (named as the package), `src/bin/NAME.rs`,
    /// or a module of the binary when the package has no library.
    Bin(String),
}

impl CargoTarget {
    /// The `cargo test` arguments that select it.
    pub fn selector(&self) -> Vec<String> {
        match self {
            CargoTarget::Test(name) => vec!["--test".into(), name.clone()],
            CargoTarget::Lib => vec!["--lib".into()],
            CargoTarget::Bin(name) => vec!["--bin".into(), name.clone()],
        }
    }
}

/// A Rust test run, ready for lldb.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustTestRun {
    /// The test binary cargo built.
    pub executable: PathBuf,
    /// The test's full name as the binary lists it (`tests::mean_of_one`).
    pub test: String,
    /// The binary's arguments in front of the model's own `args`.
    pub leading_args: Vec<String>,
    /// How the launch is named in answers
    /// (`cargo test --test mean -- median_of_four --exact`).
    pub label: String,
}

pub use tool_core::cargo::{package_name, package_root};

/// Which target `file` (absolute) of the package at `package` is built
/// in, by cargo's default layout.
pub fn target_of(file: &Path, package: &Path, package_name: &str) -> Result<CargoTarget, String> {
    let rel = file
        .strip_prefix(package)
        .map_err(|_| format!("{} is outside its package", file.display()))?;
    let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
    let stem = |name: &str| name.trim_end_matches(".rs").to_string();
    match parts.as_slice() {
        ["tests", name] => Ok(CargoTarget::Test(stem(name))),
        ["tests", dir, "main.rs"] => Ok(CargoTarget::Test(dir.to_string())),
        ["tests", ..] => Err(format!(
            "{} is a module of an integration test, not the test's own file; pass the file under tests/ that declares it",
            rel.display()
        )),
        ["src", "main.rs"] => Ok(CargoTarget::Bin(package_name.to_string())),
        ["src", "bin", name] => Ok(CargoTarget::Bin(stem(name))),
        ["src", "bin", dir, "main.rs"] => Ok(CargoTarget::Bin(dir.to_string())),
        ["src", ..] if package.join("src/lib.rs").is_file() => Ok(CargoTarget::Lib),
        ["src", ..] if package.join("src/main.rs").is_file() => {
            Ok(CargoTarget::Bin(package_name.to_string()))
        }
        _ => Err(format!(
            "{} is neither under tests/ nor under src/ of its package, so no cargo test target is known for it; pass a file under tests/, src/lib.rs or a module of it, or src/main.rs",
            rel.display()
        )),
    }
}

/// Build the test binary of `target` in the package at `package` with
/// `cargo` (PATH `search_path`), within `bound`: the executable, or the
/// compiler's first error lines.
pub fn build(
    cargo: &Path,
    search_path: &std::ffi::OsStr,
    package: &Path,
    target: &CargoTarget,
    bound: Duration,
) -> Result<PathBuf, String> {
    let command = format!("cargo test --no-run {}", target.selector().join(" "));
    let manifest = package.join("Cargo.toml");
    let ran = run_bounded(
        &ChildSpec::new(cargo)
            .args([
                "test",
                "--no-run",
                "--message-format=json",
                "--manifest-path",
            ])
            .arg(&manifest)
            .args(target.selector())
            .env("PATH", search_path)
            .cwd(package),
        bound,
    )
    .map_err(|e| format!("running `{command}`: {e}"))?;
    let Some((status, messages, stderr)) = ran else {
        return Err(format!(
            "`{command}` did not finish within {} s and was stopped; build it first in a terminal, then launch again (a built binary is not rebuilt)",
            bound.as_secs()
        ));
    };
    if !status.success() {
        let mut lines = build_errors(&messages);
        if lines.is_empty() {
            lines = stderr
                .lines()
                .filter(|l| !l.trim_start().starts_with("Compiling"))
                .take(ERROR_LINES)
                .map(str::to_string)
                .collect();
        }
        return Err(format!("`{command}` failed:\n{}", lines.join("\n")));
    }
    pick_executable(&messages, &manifest).ok_or_else(|| {
        format!(
            "`{command}` built no test executable for the package at {}",
            package.display()
        )
    })
}

/// How long the output of a child that ended is waited for.
const GRACE: Duration = Duration::from_secs(2);

/// How many lines of the compiler's errors an answer shows.
const ERROR_LINES: usize = 20;

/// The compiler's errors in cargo's JSON messages, as it renders them:
/// the first [`ERROR_LINES`] lines.
pub fn build_errors(messages: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for message in messages.lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(message) else {
            continue;
        };
        let diagnostic = &value["message"];
        if value["reason"] != "compiler-message" || diagnostic["level"] != "error" {
            continue;
        }
        if let Some(rendered) = diagnostic["rendered"].as_str() {
            lines.extend(rendered.trim_end().lines().map(str::to_string));
        }
        if lines.len() >= ERROR_LINES {
            break;
        }
    }
    lines.truncate(ERROR_LINES);
    lines
}

/// The test executable cargo built for the package of `manifest`.
pub fn pick_executable(messages: &str, manifest: &Path) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| {
            v["reason"] == "compiler-artifact"
                && v["profile"]["test"] == true
                && v["manifest_path"].as_str().map(Path::new) == Some(manifest)
        })
        .find_map(|v| v["executable"].as_str().map(PathBuf::from))
}

/// The tests a test binary holds (`<binary> --list`, bounded), by full
/// name.
pub fn list_tests(executable: &Path, cwd: &Path, bound: Duration) -> Result<Vec<String>, String> {
    let ran = run_bounded(
        &ChildSpec::new(executable)
            .arg("--list")
            .cwd(cwd)
            .stderr(Io::Null),
        bound,
    )
    .map_err(|e| format!("running {} --list: {e}", executable.display()))?;
    match ran {
        Some((s, text, _)) if s.success() => Ok(listed_tests(&text)),
        Some((s, _, _)) => Err(format!("{} --list failed ({s})", executable.display())),
        None => Err(format!(
            "{} --list did not finish within {} s",
            executable.display(),
            bound.as_secs()
        )),
    }
}

/// Run `spec` in a process group of its own, reading its output while it
/// runs (a big crate's messages fill a pipe): its status, stdout and
/// stderr (each empty when not piped), or `None` when `bound` ran out and
/// it was killed.
fn run_bounded(
    spec: &ChildSpec,
    bound: Duration,
) -> std::io::Result<Option<(ExitStatus, String, String)>> {
    let mut child = BlockingChild::spawn(spec)?;
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        let (sender, text) = std::sync::mpsc::channel();
        if let Some(mut pipe) = pipe {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = pipe.read_to_string(&mut text);
                let _ = sender.send(text);
            });
        }
        text
    };
    let stdout = read(child.take_stdout().map(|p| Box::new(p) as _));
    let stderr = read(child.take_stderr().map(|p| Box::new(p) as _));
    let status = child.wait_bounded(bound)?;
    // The pipes close with the child; a process it left behind holding
    // them (a build's daemon) does not hold the answer up.
    let stdout = stdout.recv_timeout(GRACE).unwrap_or_default();
    let stderr = stderr.recv_timeout(GRACE).unwrap_or_default();
    Ok(status.map(|s| (s, stdout, stderr)))
}

/// `mean_of_six: test` lines of libtest's `--list`.
pub fn listed_tests(list: &str) -> Vec<String> {
    list.lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect()
}

/// The listed test `name` names: itself, or the one test whose path ends
/// in `::name` (`mean_of_one` for `tests::mean_of_one`).
pub fn pick_test(name: &str, tests: &[String]) -> Result<String, String> {
    if tests.iter().any(|t| t == name) {
        return Ok(name.to_string());
    }
    let suffix = format!("::{name}");
    let ends: Vec<&String> = tests.iter().filter(|t| t.ends_with(&suffix)).collect();
    match ends.as_slice() {
        [one] => Ok((*one).clone()),
        [] if tests.is_empty() => Err(format!(
            "no test is named `{name}`: the binary holds no tests"
        )),
        [] => {
            const SHOWN: usize = 20;
            let mut list = tests
                .iter()
                .take(SHOWN)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if tests.len() > SHOWN {
                list.push_str(&format!(" (and {} more)", tests.len() - SHOWN));
            }
            Err(format!(
                "no test is named `{name}`; the binary holds {}: {list}",
                tests.len()
            ))
        }
        many => Err(format!(
            "`{name}` names {} tests: {}; pass the full name",
            many.len(),
            many.iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The run of test `test` (its full name) of `executable`, built for
/// `target`.
pub fn test_run(executable: PathBuf, target: &CargoTarget, test: String) -> RustTestRun {
    RustTestRun {
        label: format!(
            "cargo test {} -- {test} --exact",
            target.selector().join(" ")
        ),
        leading_args: vec![
            test.clone(),
            "--exact".into(),
            "--nocapture".into(),
            "--test-threads=1".into(),
        ],
        executable,
        test,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_built_in_the_target_of_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path();
        std::fs::create_dir_all(pkg.join("src")).unwrap();
        let show = |rel: &str| match target_of(&pkg.join(rel), pkg, "stats") {
            Ok(t) => t.selector().join(" "),
            Err(e) => format!("error: {e}"),
        };
        std::fs::write(pkg.join("src/main.rs"), "").unwrap();
        let bin_only = show("src/stats/parse.rs");
        std::fs::write(pkg.join("src/lib.rs"), "").unwrap();
        let lines = [
            show("tests/mean.rs"),
            show("tests/big/main.rs"),
            show("tests/big/helpers.rs"),
            show("src/lib.rs"),
            show("src/stats/parse.rs"),
            bin_only,
            show("src/main.rs"),
            show("src/bin/tool.rs"),
            show("benches/b.rs"),
        ];
        expect_test::expect![[r#"
            --test mean
            --test big
            error: tests/big/helpers.rs is a module of an integration test, not the test's own file; pass the file under tests/ that declares it
            --lib
            --lib
            --bin stats
            --bin stats
            --bin tool
            error: benches/b.rs is neither under tests/ nor under src/ of its package, so no cargo test target is known for it; pass a file under tests/, src/lib.rs or a module of it, or src/main.rs"#]]
        .assert_eq(&lines.join("\n"));
    }

    #[test]
    fn a_test_name_is_found_in_the_list() {
        let tests = listed_tests(
            "tests::mean_of_one: test\ntests::median_of_one: test\nother::mean_of_one: test\nbench_x: bench\n\n3 tests, 1 benchmarks\n",
        );
        assert_eq!(tests.len(), 3);
        assert_eq!(
            pick_test("tests::mean_of_one", &tests).unwrap(),
            "tests::mean_of_one"
        );
        assert_eq!(
            pick_test("median_of_one", &tests).unwrap(),
            "tests::median_of_one"
        );
        assert_eq!(
            pick_test("mean_of_one", &tests).unwrap_err(),
            "`mean_of_one` names 2 tests: tests::mean_of_one, other::mean_of_one; pass the full name"
        );
        assert_eq!(
            pick_test("mean", &tests).unwrap_err(),
            "no test is named `mean`; the binary holds 3: tests::mean_of_one, tests::median_of_one, other::mean_of_one"
        );
    }

    #[test]
    fn the_executable_and_the_errors_are_read_from_cargo_messages() {
        let messages = r#"{"reason":"compiler-artifact","manifest_path":"/p/Cargo.toml","profile":{"test":false},"executable":null}
{"reason":"compiler-artifact","manifest_path":"/dep/Cargo.toml","profile":{"test":true},"executable":"/p/target/debug/deps/dep-1"}
{"reason":"compiler-artifact","manifest_path":"/p/Cargo.toml","profile":{"test":true},"executable":"/p/target/debug/deps/mean-2"}
{"reason":"compiler-message","message":{"level":"warning","rendered":"warning: unused\n"}}
{"reason":"compiler-message","message":{"level":"error","rendered":"error[E0308]: mismatched types\n  --> src/lib.rs:25:23\n\n"}}
{"reason":"build-finished","success":false}"#;
        assert_eq!(
            pick_executable(messages, Path::new("/p/Cargo.toml")),
            Some(PathBuf::from("/p/target/debug/deps/mean-2"))
        );
        assert_eq!(
            build_errors(messages),
            vec!["error[E0308]: mismatched types", "  --> src/lib.rs:25:23"]
        );
    }
}
