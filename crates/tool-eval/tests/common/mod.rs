//! What every integration test of the eval tool shares: a run with the eval
//! tool on the fixture interpreters, plus one small real tool to bridge to.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tool_core::process::{group_members, pid_alive};
use tool_core::{
    async_trait, AllowAll, CallContext, Registry, Surface, Tier, Tool, ToolError, ToolOutput,
    ToolSpec,
};
use tool_eval::{EvalConfig, EvalTool, KernelFactory};

/// The fixture venv's python (pandas, matplotlib), or `None` to skip locally.
pub(crate) fn fixture_python() -> Option<PathBuf> {
    let p = test_support::fixtures::dir().join("venv/bin/python");
    if p.is_file() {
        return Some(p);
    }
    test_support::fixtures::require(&["__fixture_venv_python__"]);
    None
}

pub(crate) fn node() -> Option<PathBuf> {
    test_support::fixtures::require(&["node"])
}

/// A read-tier tool that really reads a file of the workspace (the bridge's
/// test partner: tool-eval must not depend on other tool crates).
pub(crate) struct ReadFile {
    pub root: PathBuf,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    #[serde(default)]
    delay_ms: u64,
}

#[async_trait]
impl Tool for ReadFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "read_file",
            "read a file of the workspace",
            Tier::Read,
            tool_core::schema_for::<ReadArgs>(),
        )
    }
    async fn call(&self, _cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let a: ReadArgs = tool_core::parse_args(args)?;
        if a.delay_ms > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(a.delay_ms)).await;
        }
        let text = std::fs::read_to_string(self.root.join(&a.path))
            .map_err(|e| ToolError::failed(format!("{}: {e}", a.path)))?;
        let lines = text.lines().count();
        Ok(ToolOutput::text(text).with_structured(json!({"lines": lines})))
    }
}

/// A write-tier tool, for surface checks.
pub(crate) struct Touch;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

#[async_trait]
impl Tool for Touch {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "touch",
            "touch",
            Tier::Write,
            tool_core::schema_for::<NoArgs>(),
        )
    }
    async fn call(&self, _cx: &CallContext, _args: Value) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("touched"))
    }
}

/// One run: a workspace, a registry with eval and read_file, and the eval tool.
pub(crate) struct Run {
    pub dir: tempfile::TempDir,
    pub registry: Registry,
    pub eval: Arc<EvalTool>,
}

impl Run {
    pub(crate) fn new(config: EvalConfig) -> Run {
        let dir = tempfile::tempdir().expect("tempdir");
        Self::in_dir(dir, config)
    }

    pub(crate) fn in_dir(dir: tempfile::TempDir, config: EvalConfig) -> Run {
        let root = dir.path().canonicalize().unwrap();
        let eval = Arc::new(EvalTool::new(Arc::new(KernelFactory::new(
            &root, config, None,
        ))));
        let registry = Registry::new();
        registry.set_approver(Some(Arc::new(AllowAll)));
        registry.register(eval.clone()).unwrap();
        registry
            .register(Arc::new(ReadFile { root: root.clone() }))
            .unwrap();
        registry.register(Arc::new(Touch)).unwrap();
        Run {
            dir,
            registry,
            eval,
        }
    }

    /// A run on the fixture interpreters.
    pub(crate) fn fixtures() -> Option<Run> {
        let python = fixture_python()?;
        let node = node()?;
        Some(Run::new(EvalConfig {
            python: Some(python),
            node: Some(node),
            ..EvalConfig::default()
        }))
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) async fn call(&self, args: Value) -> Result<ToolOutput, ToolError> {
        self.call_on(Surface::FULL, args).await
    }

    pub(crate) async fn call_on(
        &self,
        surface: Surface,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        tokio::time::timeout(
            std::time::Duration::from_mins(2),
            self.registry
                .call(surface, "eval", args, CallContext::new()),
        )
        .await
        .expect("an eval call hung for 120 s")
    }

    pub(crate) async fn py(&self, code: &str) -> Result<ToolOutput, ToolError> {
        self.call(json!({"code": code, "description": "a test cell in python here"}))
            .await
    }

    pub(crate) async fn js(&self, code: &str) -> Result<ToolOutput, ToolError> {
        self.call(json!({"code": code, "language": "javascript", "description": "a test cell in javascript here"}))
            .await
    }

    /// Drop everything and check that no kernel process survives.
    pub(crate) async fn finish(self) {
        let pids: Vec<u32> = self
            .eval
            .kernel_pids()
            .await
            .into_iter()
            .map(|(_, p)| p)
            .collect();
        drop(self.registry);
        drop(self.eval);
        assert_no_survivors(&pids).await;
    }
}

/// Every pid and its process group must be gone (within a second).
pub(crate) async fn assert_no_survivors(pids: &[u32]) {
    for _ in 0..50 {
        if pids
            .iter()
            .all(|&p| !pid_alive(p) && group_members(p).is_empty())
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    for &p in pids {
        assert!(!pid_alive(p), "kernel {p} survived the run");
        assert!(
            group_members(p).is_empty(),
            "processes of kernel group {p} survived: {:?}",
            group_members(p)
        );
    }
}

/// The text of a result.
pub(crate) fn text(out: &ToolOutput) -> String {
    out.joined_text()
}

/// The message of an error.
pub(crate) fn err_text(e: &ToolError) -> String {
    e.to_string()
}

/// The kernel pid a result names.
pub(crate) fn kernel_pid(out: &ToolOutput) -> u32 {
    out.structured.as_ref().unwrap()["kernel_pid"]
        .as_u64()
        .unwrap() as u32
}

/// `text` with what changes from run to run masked, for a snapshot: pids,
/// Python's version after its major, Node's version and path and its own
/// stack frames, timings, `root` (the run's folder) and
/// the fixtures' folder.
pub(crate) fn masked(text: &str, root: &Path) -> String {
    use regex::Regex;
    use std::sync::LazyLock;
    static MASKS: LazyLock<Vec<(Regex, &str)>> = LazyLock::new(|| {
        [
            (r"pid \d+", "pid PID"),
            (r"Python 3\.\d+\.\d+", "Python 3.x"),
            (r"Node\.js \d+\.\d+\.\d+ from \S+", "Node.js N from NODE"),
            // Node's own stack frames differ between its versions.
            (r"(?m)^ +at .*\(node:[^)]*\)\n", ""),
            (r"\d+(\.\d+)? ?(ns|µs|us|ms|s)\b", "T"),
        ]
        .into_iter()
        .map(|(re, with)| (Regex::new(re).expect("mask compiles"), with))
        .collect()
    });
    let mut out = text.replace(
        &test_support::fixtures::dir().display().to_string(),
        "FIXTURES",
    );
    for dir in [root.canonicalize().unwrap_or_default(), root.to_path_buf()] {
        if !dir.as_os_str().is_empty() {
            out = out.replace(&dir.display().to_string(), "ROOT");
        }
    }
    for (re, with) in MASKS.iter() {
        out = re.replace_all(&out, *with).into_owned();
    }
    out
}
