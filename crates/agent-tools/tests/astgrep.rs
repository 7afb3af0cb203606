//! The astgrep family through the facade: the binding registers ast_grep,
//! ast_edit and resolve sharing one edit store, the tiers decide which
//! surface sees them, and doctor reports the journal and its recoveries.
#![cfg(feature = "astgrep")]

use agent_tools::tool_astgrep::AstGrepBinding;
use agent_tools::{BindingState, RunOptions, ToolsetBuilder};
use serde_json::json;
use std::sync::Arc;
use tool_core::staging::Journal;
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
    expect_test::expect![[r#"
        ast_grep  $X == None  [python] in . — 1 match in 1 file (1 file searched)
        src/a.py:1:4  x == None  X=x"#]]
    .assert_eq(&found.joined_text());

    let bad = reg
        .call(
            Surface::FULL,
            "ast_grep",
            json!({"pattern": "x", "colour": 1}),
            CallContext::new(),
        )
        .await
        .unwrap_err();
    expect_test::expect!["bad arguments: argument `colour`: unknown field `colour`, expected one of `pattern`, `rule`, `path`, `language`, `max_results`, `skip`, `explain`; check the tool's input schema"].assert_eq(&bad.to_string());

    let staged = reg
        .call(
            Surface::FULL,
            "ast_edit",
            json!({"pattern": "$X == None", "rewrite": "$X is None"}),
            CallContext::new(),
        )
        .await
        .unwrap();
    expect_test::expect![[r#"
        (proposed) 1 replacement in 1 file … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        ast_edit  $X == None  →  $X is None  [python] in .; nothing is written until accepted
        searched: python (1 file)
        --- a/src/a.py
        +++ b/src/a.py
        @@ -1,2 +1,2 @@
        -if x == None:
        +if x is None:
             pass"#]].assert_eq(&staged.joined_text());
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
    expect_test::expect!["bad arguments: argument `action`: unknown variant `apply`, expected `accept` or `discard`; check the tool's input schema"].assert_eq(&bad_action.to_string());
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
    let lines = toolset
        .doctor_lines("astgrep")
        .join("\n")
        .replace(&root.canonicalize().unwrap().display().to_string(), "ROOT")
        .replace(&root.display().to_string(), "ROOT");
    expect_test::expect![[r#"
        40 grammars shipped: bash, c, cmake, cpp, csharp, css, dart, dockerfile, elixir, go, graphql, haskell, hcl, html, java, javascript, json, kotlin, lua, make, markdown, nix, php, protobuf, python, r, ruby, rust, scala, solidity, sql, svelte, swift, toml, tsx, typescript, vue, xml, yaml, zig
        apply journal: ROOT/.git/agent-tools/astgrep-journal
        search index: up to 512 MiB of texts and trees per run ([astgrep] cache_mb)
        interrupted apply of edit_3 rolled back: restored 1 file (ROOT/a.py)"#]].assert_eq(&lines);
    assert_eq!(std::fs::read_to_string(root.join("a.py")).unwrap(), "old\n");
    assert_eq!(std::fs::read_to_string(root.join("b.py")).unwrap(), "b\n");
}
