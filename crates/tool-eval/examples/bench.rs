//! `cargo xtask bench eval`: this project's kernels against ipykernel driven by
//! jupyter_client, in one run, on the same interpreter and the same cell.
//!
//! Measures kernel start (spawn until the kernel answers) and the round trip
//! of a trivial cell (`x = 1; x + 1`, 200 times, through the whole `eval` tool
//! call: Registry, protocol, output capture and formatting) for the Python
//! kernel and the Node.js kernel, and prints both figures and the ratio.
//! For our kernels it also measures a flood — a cell that writes 100 × 1 MB,
//! median of 3, answered capped — and the host's resident memory (VmRSS of
//! this process, which is the host) after the 200 cells.

use serde_json::json;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tool_core::{AllowAll, CallContext, Registry, Surface};
use tool_eval::{EvalConfig, EvalTool, KernelFactory, Language};

const STARTS: usize = 7;
const ROUNDS: usize = 200;
const CELL: &str = "x = 1; x + 1";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

struct Figures {
    start_ms: f64,
    trip_ms: f64,
    trip_median_ms: f64,
    /// Ours only: the 100 × 1 MB cell, and the host's RSS after the cells.
    flood_ms: Option<f64>,
    rss_mb: Option<f64>,
}

/// This process's resident memory, in MiB.
fn rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn flood_cell(language: Language) -> &'static str {
    match language {
        Language::Python => "import sys\nmb = 'y' * (1 << 20)\nfor i in range(100):\n    sys.stdout.write(mb)",
        Language::Javascript => "const mb = 'y'.repeat(1 << 20);\nfor (let i = 0; i < 100; i++) process.stdout.write(mb);",
    }
}

async fn ours(config: &EvalConfig, root: &std::path::Path, language: Language) -> Figures {
    let factory = Arc::new(KernelFactory::new(root, config.clone(), None));
    let mut starts = Vec::new();
    for _ in 0..STARTS {
        let t0 = Instant::now();
        let k = factory.start(language).await.expect("kernel starts");
        starts.push(t0.elapsed().as_secs_f64() * 1e3);
        drop(k);
    }
    let tool = Arc::new(EvalTool::new(factory));
    let registry = Registry::new();
    registry.set_approver(Some(Arc::new(AllowAll)));
    registry.register(tool.clone()).unwrap();
    let args = json!({"code": CELL, "language": language.as_str(), "description": "benchmark a trivial cell round trip"});
    let call = || async {
        let out = registry
            .call(Surface::FULL, "eval", args.clone(), CallContext::new())
            .await
            .expect("cell runs");
        assert!(out.joined_text().ends_with("\n2"), "{}", out.joined_text());
    };
    for _ in 0..10 {
        call().await;
    }
    let mut trips = Vec::new();
    for _ in 0..ROUNDS {
        let t0 = Instant::now();
        call().await;
        trips.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    let rss = rss_mb();
    let flood_args = json!({"code": flood_cell(language), "language": language.as_str(), "description": "benchmark a capped flood of output"});
    let mut floods = Vec::new();
    for _ in 0..3 {
        let t0 = Instant::now();
        let out = registry
            .call(
                Surface::FULL,
                "eval",
                flood_args.clone(),
                CallContext::new(),
            )
            .await
            .expect("the flood cell runs");
        floods.push(t0.elapsed().as_secs_f64() * 1e3);
        assert!(
            out.joined_text().contains("bytes of output dropped"),
            "the cap is stated"
        );
    }
    tool.shutdown().await;
    Figures {
        start_ms: median(starts),
        trip_ms: mean(&trips),
        trip_median_ms: median(trips.clone()),
        flood_ms: Some(median(floods)),
        rss_mb: rss,
    }
}

fn peer(python: &PathBuf) -> Figures {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/jupyter_peer.py");
    let out = Command::new(python)
        .arg(script)
        .arg(STARTS.to_string())
        .arg(ROUNDS.to_string())
        .output()
        .expect("run the jupyter_client peer");
    assert!(
        out.status.success(),
        "the ipykernel peer failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(line.trim().lines().last().unwrap()).unwrap();
    let nums = |k: &str| -> Vec<f64> {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    Figures {
        start_ms: median(nums("start_ms")),
        trip_ms: mean(&nums("trip_ms")),
        trip_median_ms: median(nums("trip_ms")),
        flood_ms: None,
        rss_mb: None,
    }
}

fn main() {
    let fixtures = test_support::fixtures::dir();
    let python = fixtures.join("venv/bin/python");
    assert!(
        python.is_file(),
        "no fixture venv at {}; run `cargo xtask fixtures`",
        python.display()
    );
    let node = tool_eval::interpreter::which("node".as_ref(), None).expect("node on PATH");
    let root = tempfile::tempdir().unwrap();
    let config = EvalConfig {
        python: Some(python.clone()),
        node: Some(node),
        ..EvalConfig::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let jupyter = peer(&python);
    let py = rt.block_on(ours(&config, root.path(), Language::Python));
    let js = rt.block_on(ours(&config, root.path(), Language::Javascript));
    // This machine sets NODE_EXTRA_CA_CERTS, which makes every Node start parse
    // a CA bundle; measured apart so the cost is visible.
    let js_no_ca = std::env::var_os("NODE_EXTRA_CA_CERTS").map(|_| {
        let config = EvalConfig {
            env_remove: vec!["NODE_EXTRA_CA_CERTS".into()],
            ..config.clone()
        };
        rt.block_on(ours(&config, root.path(), Language::Javascript))
    });
    rt.shutdown_timeout(Duration::from_secs(2));

    println!(
        "eval kernels vs ipykernel + jupyter_client (same python: {})",
        python.display()
    );
    println!("kernel start: median of {STARTS}; round trip: mean of {ROUNDS} cells `{CELL}`");
    println!(
        "{:<42} {:>12} {:>16} {:>12}",
        "", "start (ms)", "round trip (ms)", "(median)"
    );
    println!(
        "{:<42} {:>12.1} {:>16.3} {:>12.3}",
        "ipykernel (jupyter_client)", jupyter.start_ms, jupyter.trip_ms, jupyter.trip_median_ms
    );
    let mut rows = vec![("python", &py), ("javascript", &js)];
    if let Some(f) = &js_no_ca {
        rows.push(("javascript, no NODE_EXTRA_CA_CERTS", f));
    }
    for (name, f) in &rows {
        let label = format!("agent-tools {name}");
        println!(
            "{label:<42} {:>12.1} {:>16.3} {:>12.3}",
            f.start_ms, f.trip_ms, f.trip_median_ms
        );
    }
    for (name, f) in &rows {
        if let (Some(flood), Some(rss)) = (f.flood_ms, f.rss_mb) {
            println!(
                "agent-tools {name}: 100 x 1 MB cell {flood:.0} ms (median of 3, capped); host RSS after {ROUNDS} cells {rss:.1} MiB"
            );
        }
    }
    for (name, f) in rows {
        println!(
            "ratio ipykernel / {name}: start {:.1}x, round trip {:.1}x",
            jupyter.start_ms / f.start_ms,
            jupyter.trip_ms / f.trip_ms
        );
    }
}
