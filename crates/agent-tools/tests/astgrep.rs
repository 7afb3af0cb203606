//! The astgrep family through the facade: the binding registers ast_grep,
//! ast_edit and resolve sharing one edit store, the tiers decide which
//! surface sees them, and doctor reports the journal and its recoveries.
#![cfg(feature = "astgrep")]

use agent_tools::tool_astgrep::journal::Journal;
use agent_tools::tool_astgrep::AstGrepBinding;
use agent_tools::{BindingState, RunOptions, ToolsetBuilder};
use serde_json::json;
use std::sync::Arc;
use tool_core::{AllowAll, CallContext, Surface, ToolError};

#[tokio::test]
async fn search_stage_and_accept_through_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.py"), "if x == None:\n    pass\n").unwrap();
    let toolset = ToolsetBuilder::new(&root)
        .unwrap()
        .approver(Arc::new(AllowAll))
        .astgrep(AstGrepBinding::new().with_journal_dir(dir.path().join("journal")))
        .build()
        .unwrap();
    assert_eq!(
        toolset.state("astgrep"),
        BindingState::Bound {
            resource: "tree-sitter parser".into()
        }
    );
    let reg = toolset.registry();

    // Plan mode sees only the read tool; the main agent sees all three.
    let names = |s: Surface| -> Vec<String> { reg.specs(s).into_iter().map(|t| t.name).collect() };
    assert_eq!(names(Surface::READ_ONLY), ["ast_grep"]);
    assert_eq!(names(Surface::FULL), ["ast_edit", "ast_grep", "resolve"]);
    let hidden = reg
        .call(
            Surface::READ_ONLY,
            "ast_edit",
            json!({}),
            CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(hidden, ToolError::UnknownTool { .. }), "{hidden}");

    let found = reg
        .call(
            Surface::READ_ONLY,
            "ast_grep",
            json!({"pattern": "$X == None", "language": "py"}),
            CallContext::new(),
        )
        .await
        .unwrap();
    assert!(
        found.joined_text().contains("src/a.py:1:4  x == None  X=x"),
        "{}",
        found.joined_text()
    );

    let bad = reg
        .call(
            Surface::FULL,
            "ast_grep",
            json!({"pattern": "x", "colour": 1}),
            CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(bad.to_string().contains("unknown field `colour`"), "{bad}");

    let staged = reg
        .call(
            Surface::FULL,
            "ast_edit",
            json!({"pattern": "$X == None", "rewrite": "$X is None"}),
            CallContext::new(),
        )
        .await
        .unwrap();
    assert!(
        staged
            .joined_text()
            .starts_with("(proposed) 1 replacement in 1 file"),
        "{}",
        staged.joined_text()
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/a.py")).unwrap(),
        "if x == None:\n    pass\n"
    );
    reg.call(
        Surface::FULL,
        "resolve",
        json!({"edit_id": "edit_1", "action": "accept"}),
        CallContext::new(),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("src/a.py")).unwrap(),
        "if x is None:\n    pass\n"
    );
    let bad_action = reg
        .call(
            Surface::FULL,
            "resolve",
            json!({"edit_id": "edit_1", "action": "apply"}),
            CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(bad_action.to_string().contains("action"), "{bad_action}");
}

#[test]
fn defaults_bind_the_parser_and_doctor_reports_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("a.py"), "new\n").unwrap();
    // A record as a crashed run leaves it: a.py already rewritten.
    let journal = Journal::for_root(&tool_core::Workspace::new(&root).unwrap());
    let rec = journal
        .begin(
            "edit_3",
            &[
                (root.canonicalize().unwrap().join("a.py"), "old\n", "new\n"),
                (root.canonicalize().unwrap().join("b.py"), "b\n", "b2\n"),
            ],
        )
        .unwrap();
    std::fs::write(root.join("b.py"), "b\n").unwrap();
    journal.abandon(rec);

    let toolset = ToolsetBuilder::new(&root)
        .unwrap()
        .with_defaults(&RunOptions::new(&root))
        .build()
        .unwrap();
    assert!(matches!(
        toolset.state("astgrep"),
        BindingState::Bound { .. }
    ));
    let lines = toolset.doctor_lines("astgrep").join("\n");
    assert!(lines.contains("40 grammars shipped"), "{lines}");
    assert!(
        lines.contains(".git/agent-tools/astgrep-journal"),
        "{lines}"
    );
    assert!(
        lines.contains("interrupted apply of edit_3 rolled back: restored 1 file"),
        "{lines}"
    );
    assert_eq!(std::fs::read_to_string(root.join("a.py")).unwrap(), "old\n");
    assert_eq!(std::fs::read_to_string(root.join("b.py")).unwrap(), "b\n");
}
