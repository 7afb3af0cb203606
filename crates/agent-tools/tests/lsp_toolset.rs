//! The lsp family through the facade: the default binding from the `[lsp]`
//! config, `doctor` lines, and diagnostics on write wrapped around the
//! facade's own `write` and `edit` tools, against real basedpyright.

#![cfg(feature = "lsp")]

use agent_tools::{RunConfig, RunOptions, ToolsetBuilder};
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
        doctor.contains("lsp zig: not usable at the workspace root"),
        "{doctor}"
    );
    assert!(
        doctor.contains("lsp rust: not usable at the workspace root: no rust project root"),
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
                 `servers`, `disable`, `request_timeout_ms`, `index_wait_ms`, `diagnostics_wait_ms`, `idle_timeout_ms`, `memory_ceiling_mb`, `warm_up`, `format_on_write`"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_facades_write_and_edit_report_new_diagnostics() {
    if test_support::fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let d = python_project();
    let binding = LspBinding::new(CatalogConfig::default())
        .with_path(Some(test_support::fixtures::path_env()));
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

/// A checkout whose `.agent-tools.toml` names a server that would leave a
/// marker file when started.
fn project_naming_a_command() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join(".agent-tools.toml"),
        "surface = \"exec\"\n[lsp]\nrequest_timeout_ms = 4000\n[[lsp.servers]]\nid = \"evil\"\n\
         commands = [[\"sh\", \"-c\", \"touch started-by-project-config\"]]\n\
         root_markers = [\".agent-tools.toml\"]\n[lsp.servers.extensions]\nevil = \"evil\"\n",
    )
    .unwrap();
    std::fs::write(d.path().join("x.evil"), "boom\n").unwrap();
    d
}

async fn diagnostics_of_x_evil(d: &tempfile::TempDir, trust: bool) -> (String, String) {
    let mut opts = RunOptions::new(d.path());
    opts.trust_workspace = trust;
    let toolset = ToolsetBuilder::new(d.path())
        .unwrap()
        .approver(Arc::new(AllowAll))
        .with_defaults(&opts)
        .build()
        .unwrap();
    let reg = toolset.registry();
    let out = match reg
        .call(
            Surface::new(Tier::Exec),
            "lsp",
            json!({"op": "diagnostics", "file": "x.evil"}),
            CallContext::new(),
        )
        .await
    {
        Ok(o) => o.joined_text(),
        Err(e) => e.to_string(),
    };
    let doctor = toolset.doctor_lines("lsp").join("\n");
    (out, doctor)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_config_naming_a_command_runs_it_only_in_a_trusted_workspace() {
    let d = project_naming_a_command();
    let marker = d.path().join("started-by-project-config");
    let (out, doctor) = diagnostics_of_x_evil(&d, false).await;
    assert!(!marker.exists(), "the untrusted project's command ran");
    let notice = ".agent-tools.toml server `evil` (sh -c touch started-by-project-config): not run: \
                  project config names a command; trust the workspace to use it (--trust-workspace)";
    assert!(out.ends_with(notice), "{out}");
    assert!(doctor.contains(&format!("lsp {notice}")), "{doctor}");

    let (out, _) = diagnostics_of_x_evil(&d, true).await;
    assert!(
        marker.exists(),
        "the trusted project's command did not run: {out}"
    );
    assert!(
        out.contains("evil (sh -c touch started-by-project-config) did not start"),
        "{out}"
    );
}

#[test]
fn the_user_config_is_read_under_the_harness_config() {
    let d = python_project();
    let user: RunConfig = toml::from_str(
        "[lsp]\ndisable = [\"dart\"]\nrequest_timeout_ms = 1\n[[lsp.servers]]\nid = \"zig\"\n\
         commands = [[\"no-such-zls\"]]\nroot_markers = [\"build.zig\"]\n[lsp.servers.extensions]\nzig = \"zig\"\n",
    )
    .unwrap();
    let mut opts = RunOptions::new(d.path());
    opts.user_config = Some(user);
    opts.config.lsp = Some(toml::from_str("disable = [\"go\"]\n").unwrap());
    let toolset = ToolsetBuilder::new(d.path())
        .unwrap()
        .with_defaults(&opts)
        .build()
        .unwrap();
    let doctor = toolset.doctor_lines("lsp").join("\n");
    assert!(doctor.contains("lsp zig: not usable"), "{doctor}");
    assert!(!doctor.contains("lsp dart"), "{doctor}");
    assert!(!doctor.contains("lsp go"), "{doctor}");
}
