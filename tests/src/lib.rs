//! End-to-end tests of agent-tools: through the facade and through the
//! `agent-tools` binary, on the fixture projects in `fixtures/`.
//!
//! The tests are in `tests/`; this library only locates the binary.

use std::path::PathBuf;

/// The `agent-tools` binary cargo built for these tests.
pub fn agent_tools_bin() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    for profile in ["debug", "release"] {
        let p = target.join(profile).join("agent-tools");
        if p.exists() {
            return p;
        }
    }
    target.join("debug").join("agent-tools")
}
