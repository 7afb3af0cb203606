//! The diff context of an ast_edit preview, as data: asked per call
//! (`diff_context`, 0 to 10), else the run's (the staging link's, from
//! `[staging] diff_context`), else one line. The context chosen is kept
//! with the staged change, so showing it again shows the same diff; a
//! value out of range is refused before anything is staged.

use serde_json::{json, Value};
use std::sync::Arc;
use tool_astgrep::tools::AstEditTool;
use tool_core::staging::{DiffContext, EditStore, Journal, PREVIEW_LINES};
use tool_core::{CallContext, StagingLink, Tool, Workspace};

/// Two changes 6 lines apart: they are one hunk with 3 lines of context,
/// two with fewer.
const SOURCE: &str = "import os\n# 2\n# 3\ndef a():\n    return old(1)\n# 6\n# 7\ndef b():\n    x = 2\n    y = 3\n    return old(x + y)\n# 12\n# 13\nprint(a(), b())\n";

struct Setup {
    _dir: tempfile::TempDir,
    ws: Workspace,
    store: Arc<EditStore>,
    link: StagingLink,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("m.py"), SOURCE).unwrap();
    let ws = Workspace::new(&root).unwrap();
    let store = Arc::new(EditStore::open(Journal::at(
        dir.path().join("journal"),
        &ws,
    )));
    Setup {
        _dir: dir,
        ws,
        store,
        link: StagingLink::default(),
    }
}

impl Setup {
    async fn ast_edit(&self, extra: &Value) -> Result<String, String> {
        let tool =
            AstEditTool::new(self.ws.clone(), self.store.clone()).with_link(self.link.clone());
        let mut args = json!({"pattern": "old($X)", "rewrite": "new($X)", "path": "m.py"});
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let out = tool
            .call(&CallContext::new(), args)
            .await
            .map_err(|e| e.to_string())?;
        // Shown again from the store, the change diffs as its preview did.
        let id = out.structured.as_ref().unwrap()["edit_id"]
            .as_str()
            .unwrap();
        let again = self
            .store
            .staged_change(id)
            .unwrap()
            .diff(self.ws.dir(), PREVIEW_LINES)
            .unwrap();
        let text = out.joined_text();
        let preview = text.split_once('\n').unwrap().1.split_once('\n').unwrap().1;
        assert_eq!(preview, again, "{id} shown again");
        Ok(preview.to_string())
    }
}

#[tokio::test]
async fn each_row_shows_the_context_the_call_chose() {
    let s = setup();
    let mut shown = Vec::new();
    for call in [
        json!({}),
        json!({"diff_context": 0}),
        json!({"diff_context": 1}),
        json!({"diff_context": 3}),
        json!({"diff_context": 10}),
    ] {
        let preview = s.ast_edit(&call).await.unwrap();
        shown.push(format!("{call}:\n{preview}"));
    }
    expect_test::expect![[r#"
        {}:
        --- a/m.py
        +++ b/m.py
        @@ -4,3 +4,3 @@
         def a():
        -    return old(1)
        +    return new(1)
         # 6
        @@ -10,3 +10,3 @@
             y = 3
        -    return old(x + y)
        +    return new(x + y)
         # 12

        {"diff_context":0}:
        --- a/m.py
        +++ b/m.py
        @@ -5 +5 @@
        -    return old(1)
        +    return new(1)
        @@ -11 +11 @@
        -    return old(x + y)
        +    return new(x + y)

        {"diff_context":1}:
        --- a/m.py
        +++ b/m.py
        @@ -4,3 +4,3 @@
         def a():
        -    return old(1)
        +    return new(1)
         # 6
        @@ -10,3 +10,3 @@
             y = 3
        -    return old(x + y)
        +    return new(x + y)
         # 12

        {"diff_context":3}:
        --- a/m.py
        +++ b/m.py
        @@ -2,13 +2,13 @@
         # 2
         # 3
         def a():
        -    return old(1)
        +    return new(1)
         # 6
         # 7
         def b():
             x = 2
             y = 3
        -    return old(x + y)
        +    return new(x + y)
         # 12
         # 13
         print(a(), b())

        {"diff_context":10}:
        --- a/m.py
        +++ b/m.py
        @@ -1,14 +1,14 @@
         import os
         # 2
         # 3
         def a():
        -    return old(1)
        +    return new(1)
         # 6
         # 7
         def b():
             x = 2
             y = 3
        -    return old(x + y)
        +    return new(x + y)
         # 12
         # 13
         print(a(), b())"#]]
    .assert_eq(&shown.join("\n\n"));
}

#[tokio::test]
async fn the_runs_context_holds_unless_a_call_asks_another() {
    let s = setup();
    s.link.set_diff_context(DiffContext::new(3).unwrap());
    let mut shown = Vec::new();
    for call in [json!({}), json!({"diff_context": 0})] {
        let preview = s.ast_edit(&call).await.unwrap();
        shown.push(format!("{call}:\n{preview}"));
    }
    expect_test::expect![[r#"
        {}:
        --- a/m.py
        +++ b/m.py
        @@ -2,13 +2,13 @@
         # 2
         # 3
         def a():
        -    return old(1)
        +    return new(1)
         # 6
         # 7
         def b():
             x = 2
             y = 3
        -    return old(x + y)
        +    return new(x + y)
         # 12
         # 13
         print(a(), b())

        {"diff_context":0}:
        --- a/m.py
        +++ b/m.py
        @@ -5 +5 @@
        -    return old(1)
        +    return new(1)
        @@ -11 +11 @@
        -    return old(x + y)
        +    return new(x + y)"#]]
    .assert_eq(&shown.join("\n\n"));
}

#[tokio::test]
async fn a_value_out_of_range_is_refused_naming_the_range_and_stages_nothing() {
    let s = setup();
    let mut said = Vec::new();
    for bad in [json!(11), json!(-1), json!("x"), json!(1.5)] {
        said.push(s.ast_edit(&json!({"diff_context": bad})).await.unwrap_err());
    }
    expect_test::expect![[r#"
        bad arguments: argument `diff_context`: invalid value: integer `11`, expected an integer from 0 to 10 (lines of context around each change; default 1); check the tool's input schema
        bad arguments: argument `diff_context`: invalid value: integer `-1`, expected an integer from 0 to 10 (lines of context around each change; default 1); check the tool's input schema
        bad arguments: argument `diff_context`: invalid type: string "x", expected an integer from 0 to 10 (lines of context around each change; default 1); check the tool's input schema
        bad arguments: argument `diff_context`: invalid type: floating point `1.5`, expected an integer from 0 to 10 (lines of context around each change; default 1); check the tool's input schema"#]].assert_eq(&said.join("\n"));
    assert!(s.store.staged_change("edit_1").is_none(), "nothing staged");
    assert_eq!(
        std::fs::read_to_string(s.ws.root().join("m.py")).unwrap(),
        SOURCE
    );
}
