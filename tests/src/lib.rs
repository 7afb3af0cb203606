//! End-to-end tests of agent-tools: through the facade and through the
//! `agent-tools` binary, on the fixture projects in `fixtures/`.
//!
//! The tests are in `tests/`; this library only locates the binary.

use std::path::PathBuf;

/// The `agent-tools` binary the end-to-end tests drive: `$AGENT_TOOLS_BIN`
/// when set, else the release build (`cargo xtask test` builds it first, as a
/// user runs it), else the debug build, in `$CARGO_TARGET_DIR` or `target/`.
pub fn agent_tools_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("AGENT_TOOLS_BIN") {
        return PathBuf::from(p);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    for profile in ["release", "debug"] {
        let p = target.join(profile).join("agent-tools");
        if p.exists() {
            return p;
        }
    }
    target.join("release").join("agent-tools")
}

/// [`agent_tools_bin`], which must exist: a test that drives the binary
/// fails with how to build it rather than with a spawn error.
pub fn built_agent_tools_bin() -> PathBuf {
    let b = agent_tools_bin();
    assert!(
        b.exists(),
        "{} is missing: build it with `cargo build --release -p agent-tools` (cargo xtask test does)",
        b.display()
    );
    b
}

/// The repository's root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Copy the MCP fixture project (`tests/fixtures/mcp/project`) into `into`,
/// for a test that writes to it.
pub fn copy_mcp_project(into: &std::path::Path) {
    let src = repo_root().join("tests/fixtures/mcp/project");
    for e in std::fs::read_dir(&src).expect("the MCP fixture project") {
        let e = e.expect("a fixture file");
        std::fs::copy(e.path(), into.join(e.file_name())).expect("copy a fixture file");
    }
}
