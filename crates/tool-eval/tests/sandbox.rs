//! The Sandbox hook: a command prefix wraps the kernel (here `env`, which
//! keeps the protocol descriptors open as a real isolation wrapper must), and
//! the kernel runs inside it.

mod common;
use common::*;
use serde_json::json;
use std::sync::Arc;
use tool_core::{AllowAll, Binding, CallContext, Registry, RunContext, Surface, Workspace};
use tool_eval::{EvalBinding, EvalConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernels_run_inside_the_configured_sandbox_prefix() {
    let (Some(python), Some(node)) = (fixture_python(), node()) else {
        return;
    };
    let Some(env) = test_support::fixtures::require(&["env"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (node_shown, env_shown) = (node.display().to_string(), env.display().to_string());
    let masked = |text: &str| {
        masked(text, dir.path())
            .replace(&node_shown, "NODE")
            .replace(&env_shown, "ENV")
    };
    let binding = EvalBinding::new(EvalConfig {
        python: Some(python),
        node: Some(node),
        sandbox: vec![env.display().to_string(), "INSIDE_SANDBOX=yes".into()],
        ..EvalConfig::default()
    });
    let run = RunContext {
        workspace: Workspace::new(dir.path()).unwrap(),
        conversation_id: None,
    };
    let doctor = binding.doctor(&run).join("\n");
    expect_test::expect![[r#"
        eval python: FIXTURES/venv/bin/python (from config), started on first use
        eval javascript: NODE (from config), started on first use
        eval kernels run inside `ENV INSIDE_SANDBOX=yes`"#]]
    .assert_eq(&masked(&doctor));
    let registry = Registry::new();
    registry.set_approver(Some(Arc::new(AllowAll)));
    binding.register(&run, &registry).unwrap();
    let call = |code: &str, lang: &str| {
        registry.call(
            Surface::FULL,
            "eval",
            json!({"code": code, "language": lang, "description": "check where the kernel runs"}),
            CallContext::new(),
        )
    };
    let out = call("import os\nos.environ.get('INSIDE_SANDBOX')", "python")
        .await
        .unwrap();
    let t = text(&out);
    // The start note names the sandbox.
    expect_test::expect![[r#"
        eval python  check where the kernel runs
        (started a python kernel: Python 3.x from FIXTURES/venv/bin/python (config), inside `ENV INSIDE_SANDBOX=yes`)
        'yes'"#]].assert_eq(&masked(&t));
    let out = call("process.env.INSIDE_SANDBOX", "javascript")
        .await
        .unwrap();
    assert!(text(&out).ends_with("yes"), "{}", text(&out));
    let pid = kernel_pid(&out);
    drop(registry);
    assert_no_survivors(&[pid]).await;
}
