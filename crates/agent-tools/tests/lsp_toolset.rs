//! The lsp family through the facade: the default binding from the `[lsp]`
//! config, `doctor` lines, and diagnostics on write wrapped around the
//! facade's own `write` and `edit` tools, against real basedpyright.

#![cfg(feature = "lsp")]

use agent_tools::{RunOptions, ToolsetBuilder};
use serde_json::json;
use std::sync::Arc;
use tool_core::{AllowAll, CallContext, Surface, Tier};
use tool_lsp::{CatalogConfig, LspBinding};

fn python_project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
    std::fs::write(
        d.path().join("app.py"),
        "def greet(name: str) -> str:\n    return name\n",
    )
    .unwrap();
    d
}

#[test]
fn the_default_binding_reads_the_lsp_config_section_and_doctor_says_why() {
    let d = python_project();
    let mut opts = RunOptions::new(d.path());
    opts.config.lsp = Some(
        toml::from_str("disable = [\"dart\"]\n[[servers]]\nid = \"zig\"\ncommands = [[\"no-such-zls\"]]\nroot_markers = [\"build.zig\"]\n[servers.extensions]\nzig = \"zig\"\n")
            .unwrap(),
    );
    let toolset = ToolsetBuilder::new(d.path())
        .unwrap()
        .with_defaults(&opts)
        .build()
        .unwrap();
    let names = toolset.registry().names();
    assert!(names.contains(&"lsp".to_string()), "{names:?}");
    assert!(names.contains(&"lsp_rename".to_string()), "{names:?}");
    let doctor = toolset.doctor_lines("lsp").join("\n");
    assert!(
        doctor.contains("lsp zig: cannot start at the workspace root"),
        "{doctor}"
    );
    assert!(
        doctor.contains("lsp rust: cannot start at the workspace root: no rust project root"),
        "{doctor}"
    );
    assert!(!doctor.contains("lsp dart"), "{doctor}");

    let mut bad = RunOptions::new(d.path());
    bad.config.lsp = Some(toml::from_str("no_such_key = 1\n").unwrap());
    let toolset = ToolsetBuilder::new(d.path())
        .unwrap()
        .with_defaults(&bad)
        .build()
        .unwrap();
    assert!(!toolset.registry().contains("lsp"));
    match toolset.state("lsp") {
        agent_tools::BindingState::Unbound { why } => {
            assert_eq!(
                why,
                "config: [lsp] no_such_key = 1: unknown field `no_such_key`, expected one of \
                 `servers`, `disable`, `request_timeout_ms`, `index_wait_ms`, `diagnostics_wait_ms`"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_facades_write_and_edit_report_new_diagnostics() {
    if tool_core::fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let d = python_project();
    let binding =
        LspBinding::new(CatalogConfig::default()).with_path(Some(tool_core::fixtures::path_env()));
    let toolset = ToolsetBuilder::new(d.path())
        .unwrap()
        .approver(Arc::new(AllowAll))
        .bind("lsp", Box::new(binding))
        .with_defaults(&RunOptions::new(d.path()))
        .build()
        .unwrap();
    let reg = toolset.registry();
    let call = |name: &'static str, args: serde_json::Value| {
        let reg = reg.clone();
        async move {
            reg.call(Surface::new(Tier::Exec), name, args, CallContext::new())
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .joined_text()
        }
    };
    let out = call(
        "write",
        json!({"path": "app.py", "content": "def greet(name: str) -> int:\n    return name\n"}),
    )
    .await;
    assert!(
        out.contains("lsp: 1 new problem in app.py after this write:"),
        "{out}"
    );
    assert!(
        out.contains("app.py:2:12 error [reportReturnType]"),
        "{out}"
    );
    let out = call(
        "edit",
        json!({"path": "app.py", "old_string": "def greet", "new_string": "# moved\ndef greet"}),
    )
    .await;
    assert!(
        out.contains("lsp: no new errors or warnings in app.py"),
        "{out}"
    );
    let out = call(
        "edit",
        json!({"path": "app.py", "old_string": "-> int", "new_string": "-> str"}),
    )
    .await;
    assert!(
        out.contains("lsp: no new errors or warnings in app.py"),
        "{out}"
    );
    let status = call("lsp", json!({"op": "status"})).await;
    assert!(
        status.contains("python at . (basedpyright-langserver --stdio): running"),
        "{status}"
    );
}
