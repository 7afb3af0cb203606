//! Shared language servers through the binary (`[lsp] shared = true`): a
//! Python checkout with its shared and private configs and a broker folder
//! of its own, the hover every run asks, and the probes of what is left
//! (the processes carrying a test's marker variable, the broker's socket).
//! The broker's own tests (agent-tools' `lsp_broker`) and the fault suite's
//! orphan probe use it.

use std::path::PathBuf;
use std::time::{Duration, Instant};
use tool_core::process::procfs;

/// The call every run asks (a `batch` line).
pub const HOVER: &str =
    r#"{"tool":"lsp","args":{"op":"hover","file":"app.py","line":5,"symbol":"greet"}}"#;

/// The line of its answer that shows the signature.
pub const HOVER_SIGNATURE: &str = "(function) def greet(name: str) -> str";

/// A Python checkout (`p/`), its configs, and the broker folder the runs
/// are pointed at (`AGENT_TOOLS_BROKER_DIR`), all in one temporary folder.
pub struct SharedCheckout {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    /// `[lsp] shared = true` with the idle timeout asked for.
    pub shared: PathBuf,
    /// `[lsp] shared = false`.
    pub private: PathBuf,
    pub broker_dir: PathBuf,
}

impl SharedCheckout {
    /// `idle_ms`: the shared config's idle timeout (how long the broker
    /// keeps a server after its last run).
    pub fn new(idle_ms: u64) -> SharedCheckout {
        let dir = tempfile::Builder::new()
            .prefix("shared-servers-")
            .tempdir()
            .unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
        std::fs::write(
            root.join("app.py"),
            "def greet(name: str) -> str:\n    return name\n\n\nx = greet(\"a\")\n",
        )
        .unwrap();
        let shared = dir.path().join("shared.toml");
        std::fs::write(
            &shared,
            format!("[lsp]\nshared = true\nidle_timeout_ms = {idle_ms}\n"),
        )
        .unwrap();
        let private = dir.path().join("private.toml");
        std::fs::write(&private, "[lsp]\nshared = false\n").unwrap();
        SharedCheckout {
            broker_dir: dir.path().join("broker"),
            dir,
            root,
            shared,
            private,
        }
    }

    /// The broker's socket in its folder.
    pub fn socket(&self) -> PathBuf {
        self.broker_dir
            .join(format!("lsp-broker-{}.sock", env!("CARGO_PKG_VERSION")))
    }
}

/// The live processes carrying `var=marker`, each as `pid cmdline`.
pub fn marked(var: &str, marker: &str) -> Vec<String> {
    procfs::with_environment(var, marker)
        .into_iter()
        .map(|p| format!("{p} {}", procfs::cmdline(p).unwrap_or_default()))
        .collect()
}

/// Wait up to `bound` for no process to carry `var=marker`; what is left.
pub fn survivors_after(var: &str, marker: &str, bound: Duration) -> Vec<String> {
    let deadline = Instant::now() + bound;
    loop {
        let left = marked(var, marker);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The process groups of the basedpyright servers carrying `var=marker`.
pub fn basedpyright_groups(var: &str, marker: &str) -> std::collections::BTreeSet<u32> {
    procfs::with_environment(var, marker)
        .into_iter()
        .filter(|pid| procfs::cmdline(*pid).is_some_and(|c| c.contains("langserver.index.js")))
        .filter_map(|pid| procfs::stat(pid).map(|s| s.pgrp))
        .collect()
}
