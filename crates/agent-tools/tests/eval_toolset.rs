//! `eval` through the facade: bound from the `[eval]` config section by the
//! default bindings, gated by the surface, and bridging to another family's
//! tool registered in the same run.
#![cfg(feature = "eval")]

use agent_tools::{BindingState, RunConfig, RunOptions, ToolsetBuilder};
use serde_json::json;
use std::sync::Arc;
use test_support::tools::ListBinding;
use tool_core::{AllowAll, CallContext, Surface, Tier, ToolError};

/// `text` with the fixtures' folder and the Python version after its major
/// masked.
fn masked(text: &str) -> String {
    let text = text.replace(
        &test_support::fixtures::dir().display().to_string(),
        "FIXTURES",
    );
    match text.split_once("Python 3.") {
        Some((before, after)) => {
            let after = after.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            format!("{before}Python 3.x{after}")
        }
        None => text,
    }
}

fn options(root: &std::path::Path, eval: &str) -> RunOptions {
    let config: RunConfig = toml::from_str(eval).unwrap();
    RunOptions {
        config,
        ..RunOptions::new(root)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_binds_from_config_and_bridges_to_the_run() {
    let venv_python = test_support::fixtures::dir().join("venv/bin/python");
    if !venv_python.is_file() {
        test_support::fixtures::require(&["__fixture_venv_python__"]);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "hi\n").unwrap();
    let opts = options(
        dir.path(),
        &format!(
            "[eval]\npython = {:?}\nidle_timeout_seconds = 60\n",
            venv_python.display().to_string()
        ),
    );
    let toolset = ToolsetBuilder::new(dir.path())
        .unwrap()
        .approver(Arc::new(AllowAll))
        .bind("lister", Box::new(ListBinding))
        .with_defaults(&opts)
        .build()
        .unwrap();
    assert_eq!(
        toolset.state("eval"),
        BindingState::Bound {
            resource: "kernel factory".into()
        }
    );
    // (Which node the javascript kernel would run depends on the machine.)
    let doctor: Vec<String> = toolset
        .doctor_lines("eval")
        .into_iter()
        .filter(|l| !l.starts_with("eval javascript: "))
        .collect();
    let doctor = masked(&doctor.join("\n"));
    expect_test::expect![[r#"
        eval python: FIXTURES/venv/bin/python (from config), started on first use
        eval kernels run on the host (no isolated environment bound)"#]]
    .assert_eq(&doctor);

    // Exec tier: a read-only surface does not see eval at all.
    let registry = toolset.registry();
    assert!(registry
        .specs(Surface::READ_ONLY)
        .iter()
        .all(|s| s.name != "eval"));
    let e = registry
        .call(
            Surface::READ_ONLY,
            "eval",
            json!({"code": "1", "description": "should not run at all"}),
            CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::UnknownTool { .. }), "{e:?}");
    let spec = registry
        .specs(Surface::FULL)
        .into_iter()
        .find(|s| s.name == "eval")
        .unwrap();
    assert_eq!(spec.tier, Tier::Exec);
    assert!(!spec.parallel_safe);

    // A cell calls the other family's tool through the bridge.
    let out = registry
        .call(
            Surface::FULL,
            "eval",
            json!({"code": "print(tool('list_root', {}))\nimport pandas\npandas.__name__", "description": "list the workspace from a cell"}),
            CallContext::new(),
        )
        .await
        .unwrap();
    let t = out.joined_text();
    expect_test::expect![[r#"
        eval python  list the workspace from a cell
        (started a python kernel: Python 3.x from FIXTURES/venv/bin/python (config))
        notes.md
        'pandas'"#]]
    .assert_eq(&masked(&t));
    let pid = out.structured.as_ref().unwrap()["kernel_pid"]
        .as_u64()
        .unwrap() as u32;
    assert!(tool_core::process::pid_alive(pid));
    drop(toolset);
    for _ in 0..50 {
        if !tool_core::process::pid_alive(pid) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        !tool_core::process::pid_alive(pid),
        "the kernel ends with the run"
    );
}

#[test]
fn bad_eval_config_leaves_eval_unbound_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), "[eval]\nidle_timeout = 5\n");
    let toolset = ToolsetBuilder::new(dir.path())
        .unwrap()
        .with_defaults(&opts)
        .build()
        .unwrap();
    match toolset.state("eval") {
        BindingState::Unbound { why } => {
            assert!(
                why.starts_with("config: [eval] idle_timeout = 5: unknown field `idle_timeout`"),
                "{why}"
            );
        }
        other => panic!("{other:?}"),
    }
    let opts = options(dir.path(), "[eval]\nidle_timeout_seconds = 0\n");
    let toolset = ToolsetBuilder::new(dir.path())
        .unwrap()
        .with_defaults(&opts)
        .build()
        .unwrap();
    assert!(matches!(
        toolset.state("eval"),
        BindingState::Unbound { .. }
    ));
}
