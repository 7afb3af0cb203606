//! Where the real components the integration tests run are found: the folder
//! `cargo xtask fixtures` installs into (`target/fixtures/`), then `$PATH`.
//!
//! Tests call [`require`]: in CI (`CI` set) a missing component fails the
//! test, so a test never passes by skipping there; elsewhere it is skipped
//! with a line saying how to install it.

use std::path::{Path, PathBuf};

/// `target/fixtures` of this workspace, or `$AGENT_TOOLS_FIXTURES`.
pub fn dir() -> PathBuf {
    if let Some(d) = std::env::var_os("AGENT_TOOLS_FIXTURES") {
        return PathBuf::from(d);
    }
    workspace_root().join("target").join("fixtures")
}

/// The workspace root, found from this crate's manifest directory.
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|a| a.join("Cargo.toml").is_file() && a.join("crates").is_dir())
        .unwrap_or(here)
        .to_path_buf()
}

/// The fixture folders holding executables, most specific first.
pub fn bin_dirs() -> Vec<PathBuf> {
    bin_dirs_in(&dir())
}

/// The folders holding executables in the fixture folder `fixtures`, most
/// specific first (also used by `cargo xtask`, which may be given another
/// fixture folder).
pub fn bin_dirs_in(fixtures: &Path) -> Vec<PathBuf> {
    vec![
        fixtures.join("venv").join("bin"),
        fixtures.join("npm").join("node_modules").join(".bin"),
        // Current Go tools (dlv, gopls) before Debian's and the rest.
        fixtures.join("go").join("bin"),
        fixtures.join("bin"),
    ]
}

/// `$PATH` with the fixture folders in front, for child processes of tests.
pub fn path_env() -> std::ffi::OsString {
    path_env_in(&dir())
}

/// `$PATH` with the executables of the fixture folder `fixtures` in front.
pub fn path_env_in(fixtures: &Path) -> std::ffi::OsString {
    let mut dirs = bin_dirs_in(fixtures);
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(dirs).unwrap_or_default()
}

/// Find an executable in the fixture folders, then on `$PATH`.
pub fn find(name: &str) -> Option<PathBuf> {
    tool_core::programs::find_program(name, Path::new(""), &bin_dirs(), None)
}

/// Whether this is a CI run, where nothing may be skipped.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The first of `names` that is installed. In CI a missing one panics;
/// elsewhere `None` (the caller returns early) after a line on stderr.
pub fn require(names: &[&str]) -> Option<PathBuf> {
    if let Some(p) = names.iter().find_map(|n| find(n)) {
        return Some(p);
    }
    let msg = format!(
        "fixture missing: none of {names:?} found in {} or on PATH; run `cargo xtask fixtures`",
        dir().display()
    );
    assert!(!in_ci(), "{msg}");
    eprintln!("skipping: {msg}");
    None
}
