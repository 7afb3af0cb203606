//! Invariants of the house that no type can keep, checked over every Rust
//! source of the workspace (`crates/`, `tests/`, `xtask/`) as
//! rust-analyzer's tidy tests do:
//! - every child process is described by tool-core's `ChildSpec` and
//!   started in its `process` module (`ChildSpec::spawn` for the run's
//!   children, `BlockingChild` for bounded probes, `foreground_output`
//!   for the installer's steps): no other file names `std::process::Command`
//!   or `tokio::process::Command`, calls `Command::new(`, forks or
//!   `posix_spawn`s;
//! - `/proc` is read in tool-core's `process/procfs.rs` only: no other
//!   file holds a `"/proc…"` string literal (`c"` and `b"` ones too).
//!
//! Unit tests (a source file's text after its first `#[cfg(test)]`, and
//! `tests.rs` files) may do either: their helper processes and checks are
//! the test's, not the run's. Other exceptions are the allow-lists below,
//! each with its reason; an entry nothing needs any more fails the test.

use std::path::{Path, PathBuf};

/// Where processes may be started besides tool-core's process module.
const SPAWN_ALLOWED: &[(&str, &str)] = &[
    (
        "crates/tool-core/src/process/",
        "the one owner of child processes",
    ),
    (
        "xtask/",
        "the developer's task runner: cargo, the installers and the benches run in a terminal's foreground, not in a run",
    ),
    (
        "tests/",
        "end-to-end tests start the binary they test, its clients and its peers",
    ),
    (
        "crates/test-support/",
        "test plumbing: builds and starts the binaries tests drive",
    ),
    (
        "crates/*/tests/",
        "integration tests start the programs they debug, serve or compare with",
    ),
    (
        "crates/*/examples/",
        "benches run the peer (a CLI, a bare client, a checker) side by side with the tool",
    ),
];

/// Where `/proc` may be read besides `procfs.rs`.
const PROC_ALLOWED: &[(&str, &str)] = &[
    (
        "crates/tool-core/src/process/procfs.rs",
        "all /proc reading",
    ),
    (
        "crates/tool-core/src/process/keeper.rs",
        "the keeper reads /proc with raw syscalls between fork and exec, where procfs's allocating helpers must not run",
    ),
    (
        "crates/*/tests/",
        "tests look for orphans in /proc themselves, not through the code they check",
    ),
    (
        "crates/*/examples/",
        "a bench reads its own peak memory (/proc/self/status)",
    ),
    ("tests/tests/tidy.rs", "this file names what it looks for"),
];

/// Every `.rs` file under `dir`, `target/` folders left out.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every Rust source of the workspace, by its path from the workspace
/// root, with the code a check reads: unit tests and comment lines left
/// out.
fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["crates", "tests", "xtask"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|f| {
            let rel = f
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let unit_tests = rel.contains("/src/") && rel.ends_with("/tests.rs");
            if unit_tests {
                return None;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            let code = if rel.contains("/src/") {
                text.split("#[cfg(test)]").next().unwrap_or("").to_string()
            } else {
                text
            };
            Some((rel, code_lines(&code)))
        })
        .collect()
}

/// Code without its comment lines.
fn code_lines(code: &str) -> String {
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `path` is under `pattern`, where `*` stands for one folder.
fn allowed_by(pattern: &str, path: &str) -> bool {
    let (p, mut rest) = (pattern.split('/'), path.split('/'));
    for part in p {
        if part.is_empty() {
            return true; // a trailing `/`: anything below
        }
        match rest.next() {
            Some(seg) if part == "*" || part == seg => {}
            _ => return false,
        }
    }
    rest.next().is_none()
}

/// The lines of `code` that start a process themselves.
fn own_spawns(code: &str) -> Vec<String> {
    code.lines()
        .filter(|line| {
            let names_command = line.contains("process::")
                && line
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == "Command");
            names_command
                || ["Command::new(", "libc::fork", "posix_spawn"]
                    .iter()
                    .any(|m| line.contains(m))
        })
        .map(|l| l.trim().to_string())
        .collect()
}

/// The lines of `code` with a `/proc` string literal.
fn proc_reads(code: &str) -> Vec<String> {
    code.lines()
        .filter(|l| l.contains("\"/proc"))
        .map(|l| l.trim().to_string())
        .collect()
}

/// What `find` finds in files no entry of `allowed` covers, and the
/// entries that cover nothing found.
fn check(
    allowed: &[(&'static str, &str)],
    find: fn(&str) -> Vec<String>,
) -> (Vec<String>, Vec<&'static str>) {
    let mut found = Vec::new();
    let mut used = vec![false; allowed.len()];
    for (rel, code) in sources() {
        let hits = find(&code);
        if hits.is_empty() {
            continue;
        }
        match allowed.iter().position(|(p, _)| allowed_by(p, &rel)) {
            Some(i) => used[i] = true,
            None => found.extend(hits.into_iter().map(|h| format!("{rel}: {h}"))),
        }
    }
    let stale = allowed
        .iter()
        .zip(used)
        .filter(|(_, used)| !used)
        .map(|((p, _), _)| *p)
        .collect();
    (found, stale)
}

#[test]
fn processes_start_only_through_tool_cores_process_module() {
    let (found, stale) = check(SPAWN_ALLOWED, own_spawns);
    assert!(
        found.is_empty(),
        "processes started outside tool_core::process (describe them with a ChildSpec; BlockingChild for a bounded probe):\n{}",
        found.join("\n")
    );
    assert!(
        stale.is_empty(),
        "allowed, but nothing starts a process there any more: {stale:?}"
    );
}

#[test]
fn proc_is_read_only_in_procfs() {
    let (found, stale) = check(PROC_ALLOWED, proc_reads);
    assert!(
        found.is_empty(),
        "/proc read outside tool_core::process::procfs:\n{}",
        found.join("\n")
    );
    assert!(
        stale.is_empty(),
        "allowed, but nothing reads /proc there any more: {stale:?}"
    );
}

#[test]
fn the_checks_find_what_they_look_for() {
    assert_eq!(
        own_spawns("use std::process::{Child, Command};\nlet c = Command::new(\"gdb\")\n    .spawn()?;\nlet d = spec.spawn()?;\nfn call<C: Command>()"),
        ["use std::process::{Child, Command};", "let c = Command::new(\"gdb\")"]
    );
    assert_eq!(
        own_spawns("let c = tokio::process::Command::from(x);\nlet p = unsafe { libc::fork() };"),
        [
            "let c = tokio::process::Command::from(x);",
            "let p = unsafe { libc::fork() };"
        ]
    );
    assert_eq!(
        proc_reads(
            "std::fs::read_to_string(\"/proc/self/stat\");\nlet d = c\"/proc\";\nprocfs::stat(pid)"
        ),
        [
            "std::fs::read_to_string(\"/proc/self/stat\");",
            "let d = c\"/proc\";"
        ]
    );
    assert!(allowed_by(
        "crates/*/tests/",
        "crates/tool-debug/tests/scenarios.rs"
    ));
    assert!(!allowed_by(
        "crates/*/tests/",
        "crates/tool-debug/src/tests.rs"
    ));
    assert!(allowed_by("xtask/", "xtask/src/main.rs"));
    assert!(allowed_by("tests/tests/tidy.rs", "tests/tests/tidy.rs"));
    assert!(!allowed_by(
        "tests/tests/tidy.rs",
        "tests/tests/tidy.rs.bak"
    ));
}
