//! The read surface never runs the project's code (issue 13, item 6):
//! rust-analyzer runs a crate's build script while it indexes, unless the
//! catalog is made `without_project_code`, as the facade does for a
//! read-only run. The control run proves the build script would run, so the
//! read-only run's silence is evidence, not luck.

mod common;

use common::Run;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// A crate whose build script leaves a marker file beside the crate.
fn crate_with_build_script(marker: &Path) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("lsp-read-")
        .tempdir()
        .unwrap();
    let files = [
        (
            "Cargo.toml",
            "[package]\nname = \"marked\"\nversion = \"0.1.0\"\nedition = \"2021\"\nbuild = \"build.rs\"\n\n[workspace]\n".to_string(),
        ),
        (
            "build.rs",
            format!(
                "fn main() {{ std::fs::write({:?}, \"ran\").unwrap(); }}\n",
                marker.display().to_string()
            ),
        ),
        ("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n".to_string()),
    ];
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// Hover `answer`, then wait up to `bound` for the marker.
async fn marker_after_hover(config: tool_lsp::CatalogConfig, bound: Duration) -> Option<Duration> {
    let out = tempfile::tempdir().unwrap();
    let marker = out.path().join("build-script-ran");
    let run = Run::with_binding(
        crate_with_build_script(&marker),
        tool_lsp::LspBinding::new(config),
    );
    let started = Instant::now();
    run.lsp(json!({"op": "hover", "file": "src/lib.rs", "line": 1, "symbol": "answer"}))
        .await;
    let mut seen = None;
    while started.elapsed() < bound {
        if marker.exists() {
            seen = Some(started.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    run.finish().await;
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_run_never_runs_the_build_script() {
    if test_support::fixtures::require(&["rust-analyzer"]).is_none() {
        return;
    }
    // Control: by default rust-analyzer runs it while indexing.
    let ran = marker_after_hover(tool_lsp::CatalogConfig::default(), Duration::from_mins(2))
        .await
        .expect("rust-analyzer ran the build script in the control run");
    // Read-only: given twice as long (and 10 s more), it never runs.
    let bound = ran * 2 + Duration::from_secs(10);
    let read_only = tool_lsp::CatalogConfig::default().without_project_code();
    assert_eq!(
        marker_after_hover(read_only, bound).await,
        None,
        "the build script ran on a read-only run"
    );
}
