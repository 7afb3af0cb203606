//! Staged file and folder moves and the servers: a move staged with
//! `lsp_rename` tells no server anything until `resolve` accepts it, and
//! then `workspace/didRenameFiles` follows, as it does a move written at
//! once; a discarded or drifted one is never announced.
//!
//! The server is `fault-injecting-lsp`, which keeps every `didRenameFiles`
//! pair it is sent and names them in its hover answers; `resolve` is
//! tool-astgrep's, linked to the lsp binding as the facade links them.

use serde_json::{json, Value};
use std::sync::Arc;
use test_support::fault_server::fault_injecting_lsp;
use tool_astgrep::AstGrepBinding;
use tool_core::{
    AllowAll, Binding, CallContext, Registry, RunContext, StagingLink, Surface, Tier, ToolError,
    Workspace,
};
use tool_lsp::{CatalogConfig, LspBinding};

struct Run {
    dir: tempfile::TempDir,
    registry: Registry,
    lsp: LspBinding,
}

impl Run {
    /// A fault project with these files, and `lsp`, `lsp_rename`, `ast_edit`
    /// and `resolve` bound over one staging link.
    fn new(files: &[(&str, &str)]) -> Run {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("fault.toml"), "").unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let config: CatalogConfig = serde_json::from_value(json!({
            "servers": [{
                "id": "faulty", "extensions": {"fault": "fault"},
                "commands": [[fault_injecting_lsp()]], "root_markers": ["fault.toml"],
                "startup_settle_ms": 0
            }],
            "diagnostics_wait_ms": 5000,
            "index_wait_ms": 2000,
            "warm_up": false
        }))
        .unwrap();
        let lsp = LspBinding::new(config).with_path(Some(test_support::fixtures::path_env()));
        let astgrep = AstGrepBinding::new().with_journal_dir(dir.path().join(".journal"));
        let run = RunContext {
            workspace: Workspace::new(dir.path()).unwrap(),
            conversation_id: None,
        };
        let registry = Registry::new();
        registry.set_approver(Some(Arc::new(AllowAll)));
        let link = StagingLink::default();
        let bindings: [&dyn Binding; 2] = [&lsp, &astgrep];
        for b in bindings {
            b.link_staging(&link);
        }
        for b in bindings {
            b.register(&run, &registry).unwrap();
        }
        for b in bindings {
            b.after_all(&run, &registry).unwrap();
        }
        Run { dir, registry, lsp }
    }

    async fn call(&self, tool: &str, args: Value) -> Result<String, ToolError> {
        self.registry
            .call(Surface::new(Tier::Exec), tool, args, CallContext::new())
            .await
            .map(|o| o.joined_text())
    }

    async fn text(&self, tool: &str, args: Value) -> String {
        match self.call(tool, args.clone()).await {
            Ok(t) => t,
            Err(e) => panic!("{tool} {args}: {e}"),
        }
    }

    /// What the server says it was told of moves, in a hover on `file`.
    async fn told(&self, file: &str) -> String {
        let hover = self
            .text(
                "lsp",
                json!({"op": "hover", "file": file, "line": 1, "symbol": "fine"}),
            )
            .await;
        hover
            .lines()
            .find(|l| l.starts_with("files renamed"))
            .unwrap_or("(no didRenameFiles)")
            .to_string()
    }

    fn exists(&self, rel: &str) -> bool {
        self.dir.path().join(rel).exists()
    }

    async fn finish(self) {
        self.lsp.supervisor().unwrap().shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staged_move_is_announced_to_the_servers_when_accepted_and_only_then() {
    let run = Run::new(&[
        ("a.fault", "fine here\n"),
        ("b.fault", "fine too\n"),
        ("lib/c.fault", "fine\n"),
        ("lib/d.fault", "fine\n"),
        ("keep.fault", "fine\n"),
    ]);
    expect_test::expect!["(no didRenameFiles)"].assert_eq(&run.told("keep.fault").await);

    // Staged: nothing moves and the server is told nothing.
    let out = run
        .text(
            "lsp_rename",
            json!({"file": "a.fault", "new_path": "moved/a.fault", "stage": true}),
        )
        .await;
    assert!(
        out.starts_with("(proposed) 0 edits in 2 files … call resolve with edit_id \"edit_1\""),
        "{out}"
    );
    assert!(run.exists("a.fault") && !run.exists("moved/a.fault"));
    expect_test::expect!["(no didRenameFiles)"].assert_eq(&run.told("keep.fault").await);

    // Discarded: never announced.
    run.text(
        "lsp_rename",
        json!({"file": "b.fault", "new_path": "b2.fault", "stage": true}),
    )
    .await;
    run.text("resolve", json!({"edit_id": "edit_2", "action": "discard"}))
        .await;
    // Drifted: refused, never announced.
    run.text(
        "lsp_rename",
        json!({"file": "b.fault", "new_path": "b3.fault", "stage": true}),
    )
    .await;
    std::fs::write(run.dir.path().join("b.fault"), "edited\n").unwrap();
    let err = run
        .call("resolve", json!({"edit_id": "edit_3", "action": "accept"}))
        .await
        .unwrap_err();
    expect_test::expect!["refused: edit_3 rejected: 1 file changed since staging: b.fault; nothing was written. Call lsp_rename again to stage the change against the current content"]
        .assert_eq(&err.to_string());
    expect_test::expect!["(no didRenameFiles)"].assert_eq(&run.told("keep.fault").await);

    // Accepted: moved, and announced once, as a move written at once is.
    run.text("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    assert!(!run.exists("a.fault") && run.exists("moved/a.fault"));
    expect_test::expect!["files renamed (didRenameFiles): a.fault → moved/a.fault"]
        .assert_eq(&run.told("keep.fault").await);

    // A folder, staged then accepted: one pair per file, as at once.
    run.text(
        "lsp_rename",
        json!({"file": "lib", "new_path": "core", "stage": true}),
    )
    .await;
    run.text("resolve", json!({"edit_id": "edit_4", "action": "accept"}))
        .await;
    assert!(
        !run.exists("lib"),
        "the moved folder is gone, as after a move at once"
    );
    expect_test::expect!["files renamed (didRenameFiles): a.fault → moved/a.fault, lib/c.fault → core/c.fault, lib/d.fault → core/d.fault"]
        .assert_eq(&run.told("keep.fault").await);
    run.text("lsp_rename", json!({"file": "core", "new_path": "lib"}))
        .await;
    expect_test::expect!["files renamed (didRenameFiles): a.fault → moved/a.fault, lib/c.fault → core/c.fault, lib/d.fault → core/d.fault, core/c.fault → lib/c.fault, core/d.fault → lib/d.fault"]
        .assert_eq(&run.told("keep.fault").await);
    run.finish().await;
}
