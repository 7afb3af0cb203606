//! Invariants of the house that no type can keep, checked over the source
//! as rust-analyzer's tidy tests do:
//! - every child process starts through tool-core's process module
//!   (`ChildSpec` for the run's children, `BlockingChild` for bounded
//!   probes, `foreground_output` for the installer's steps): no
//!   `Command::new(…)` statement outside it spawns, and `.spawn()` is
//!   called on a `ChildSpec` only;
//! - `/proc` is read in tool-core's `process` module only (`procfs`).
//!
//! Test code (after `#[cfg(test)]`, `tests.rs`, `tests/`) and the test
//! plumbing (test-support, the fault server, xtask) may start what they
//! like.

use std::path::{Path, PathBuf};

/// Every non-test `.rs` file under `crates/*/src`, with its code (the
/// text before its first `#[cfg(test)]`).
fn sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "tests") {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs")
                && path.file_name().is_some_and(|n| n != "tests.rs")
            {
                out.push(path);
            }
        }
    }
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if ["test-support", "fault-injecting-lsp"].contains(&name.as_str()) {
            continue;
        }
        let src = entry.path().join("src");
        if src.is_dir() {
            walk(&src, &mut files);
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
            let rel = f.strip_prefix(&crates).unwrap().to_path_buf();
            (rel, code)
        })
        .collect()
}

/// Whether `rel` (under crates/) is tool-core's process module.
fn in_process_module(rel: &Path) -> bool {
    rel.starts_with("tool-core/src/process")
}

/// Code without its comment lines.
fn code_lines(code: &str) -> String {
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where `code` starts a process itself: a `Command::new(…)` statement that
/// spawns, or a `.spawn()` not on a spec.
fn own_spawns(code: &str) -> Vec<String> {
    let code = code_lines(code);
    let mut found = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("Command::new(") {
        let statement = &rest[at..];
        let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
        if [".spawn()", ".output()", ".status()"]
            .iter()
            .any(|m| statement.contains(m))
        {
            found.push(statement.lines().next().unwrap_or("").trim().to_string());
        }
        rest = &rest[at + 1..];
    }
    let mut rest = code.as_str();
    let mut offset = 0;
    while let Some(at) = rest.find(".spawn()") {
        let before = &code[offset.max((offset + at).saturating_sub(60))..offset + at];
        if !before.contains("spec") && !before.contains("Command::new(") {
            found.push(format!("…{}.spawn()", before.trim()));
        }
        offset += at + 1;
        rest = &code[offset..];
    }
    found
}

#[test]
fn processes_start_only_through_tool_cores_process_module() {
    let mut found = Vec::new();
    for (rel, code) in sources() {
        if in_process_module(&rel) {
            continue;
        }
        for spawn in own_spawns(&code) {
            found.push(format!("{}: {spawn}", rel.display()));
        }
    }
    assert!(
        found.is_empty(),
        "processes started outside tool_core::process:\n{}",
        found.join("\n")
    );
}

#[test]
fn proc_is_read_only_in_tool_cores_process_module() {
    let mut found = Vec::new();
    for (rel, code) in sources() {
        if in_process_module(&rel) {
            continue;
        }
        for line in code_lines(&code).lines() {
            if line.contains("\"/proc") || line.contains("(\"/proc") {
                found.push(format!("{}: {}", rel.display(), line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "/proc read outside tool_core::process::procfs:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checks_find_what_they_look_for() {
    assert_eq!(
        own_spawns("let c = Command::new(\"gdb\")\n    .arg(\"-p\")\n    .spawn()?;\nlet d = spec.spawn()?;"),
        ["Command::new(\"gdb\")"]
    );
    assert_eq!(
        own_spawns("let c = child.spawn();"),
        ["…let c = child.spawn()"]
    );
    assert_eq!(
        own_spawns("let c = BlockingChild::spawn(Command::new(\"x\").arg(\"y\"))?;\n// Command::new(\"z\").spawn()"),
        Vec::<String>::new()
    );
}
