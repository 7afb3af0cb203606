//! Depth 1: inside a worker (the marker set in the environment), vibe_spawn
//! is refused. A test binary of its own, since it sets the marker for the
//! whole process.

use serde_json::json;
use std::sync::Arc;
use tool_core::{CallContext, Registry, Surface};
use tool_vibe::{CommandBackend, Roster, WORKER_MARKER};

#[tokio::test]
async fn a_worker_cannot_start_a_worker() {
    let dir = tempfile::tempdir().unwrap();
    let roster = Roster::new(Arc::new(
        CommandBackend::new(dir.path()).fast("echo should never run"),
    ));
    let registry = Registry::new();
    roster.attach(&registry).unwrap();
    // SAFETY: this binary has this one test; nothing else reads the
    // environment concurrently.
    unsafe { std::env::set_var(WORKER_MARKER, "w3") };
    let e = registry
        .call(
            Surface::FULL,
            "vibe_spawn",
            json!({"brief": "say hi", "label": "nested"}),
            CallContext::new(),
        )
        .await
        .unwrap_err();
    expect_test::expect!["refused: this process runs inside vibe worker w3 ($AGENT_TOOLS_VIBE_WORKER is set): workers cannot start workers; do the work yourself, or report back and let the director spawn another"]
        .assert_eq(&e.to_string());
    assert!(roster.snapshots().is_empty(), "no worker was started");
}
