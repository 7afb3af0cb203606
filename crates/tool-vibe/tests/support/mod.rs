//! What the queue and process tests share: a run whose workers are the real
//! `sh worker.sh fast` of tests/fixtures/vibe, with a cap on how many run at
//! once, and masks for the parts of an answer that change from run to run.
//! (Each test binary uses part of it.)
#![allow(dead_code)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tool_core::{CallContext, Registry, Surface, ToolOutput};
use tool_vibe::{CommandBackend, Roster};

pub(crate) fn worker_script() -> PathBuf {
    test_support::fixtures::workspace_root().join("tests/fixtures/vibe/worker.sh")
}

pub(crate) struct Run {
    pub roster: Roster,
    pub registry: Registry,
    pub dir: tempfile::TempDir,
}

impl Run {
    /// At most `max_workers` workers run at once.
    pub(crate) fn capped(max_workers: usize) -> Run {
        let dir = tempfile::tempdir().unwrap();
        let script = worker_script();
        assert!(script.is_file(), "{} is missing", script.display());
        let backend = CommandBackend::new(dir.path())
            .fast(format!("sh {} fast", script.display()))
            .env("VIBE_PID_DIR", dir.path());
        let roster = Roster::new(Arc::new(backend)).max_workers(max_workers);
        let registry = Registry::new();
        roster.attach(&registry).unwrap();
        Run {
            roster,
            registry,
            dir,
        }
    }

    pub(crate) async fn ok(&self, tool: &str, args: Value) -> ToolOutput {
        match self
            .registry
            .call(Surface::READ_ONLY, tool, args.clone(), CallContext::new())
            .await
        {
            Ok(o) => o,
            Err(e) => panic!("{tool} {args}: {e}"),
        }
    }

    /// vibe_spawn's text.
    pub(crate) async fn spawn(&self, label: &str, brief: &str) -> String {
        self.ok("vibe_spawn", json!({"brief": brief, "label": label}))
            .await
            .joined_text()
    }
}

/// Wait up to 5 s for `file` to hold at least `n` pids.
pub(crate) async fn read_pids(file: &Path, n: usize) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Ok(text) = std::fs::read_to_string(file) {
            let pids: Vec<u32> = text
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect();
            if pids.len() >= n {
                return pids;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{} never got {n} pids",
            file.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `text` with what changes from run to run masked: elapsed times (`1.2s`
/// → `…s`, `after 0.3s` → `after …`), pids (`pid 123` → `pid …`), the
/// checkout's path (→ `ROOT`), a temporary folder (→ `TMP`) and the ages
/// of notices.
pub(crate) fn masked(text: &str, tmp: &Path) -> String {
    let text = tool_core::notices::mask_ages(text)
        .replace(
            &test_support::fixtures::workspace_root()
                .display()
                .to_string(),
            "ROOT",
        )
        .replace(&tmp.display().to_string(), "TMP");
    let text = tool_core::format::mask_elapsed(&text);
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("pid ") {
            let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if digits > 0 {
                out.push_str("pid …");
                rest = &after[digits..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[test]
fn masks_hide_only_what_changes() {
    let tmp = Path::new("/tmp/x");
    assert_eq!(
        masked(
            "w1 done after 12.3s: pid 4242  sleep 1.5 in /tmp/x v1.2s",
            tmp
        ),
        "w1 done after …s: pid …  sleep 1.5 in TMP v1.2s"
    );
}
