//! ast_grep with `rule` (ast-grep's rule format through ast-grep-config):
//! relational, composite and constraint rules with exact counts; and the
//! richer answers — explain, skip paging, several paths and globs, and a
//! language that overrides detection.

mod support;

use expect_test::expect;
use serde_json::{json, Value};
use support::{hits, run_with, Run};
use tool_astgrep::ops::{self, FindRequest};
use tool_core::{CancellationToken, ToolError, ToolOutput};

const APP: &str = "import os


def load(path):
    if path:
        data = open(path).read()
        print(data)
    print(path)
    return data


class Store:
    def save(self, value):
        print(value)
        print(value, file=self.log)
        os.remove(value)

    def drop(self, key):
        os.remove(key)
";

fn app() -> Run {
    run_with(&[
        ("app/store.py", APP.to_string()),
        ("app/more.py", "print(1)\nprint(2)\nprint(3)\n".to_string()),
        ("lib/util.py", "print(4)\n".to_string()),
        (
            "include/api.h",
            "class Api { public: int get(); };\n".to_string(),
        ),
    ])
}

fn find(run: &Run, req: FindRequest<'_>) -> Result<ToolOutput, ToolError> {
    ops::find_with(&run.ws, &req, &CancellationToken::new())
}

fn rule_find(run: &Run, rule: &str) -> ToolOutput {
    let rule = Value::String(rule.to_string());
    find(
        run,
        FindRequest {
            rule: Some(&rule),
            paths: vec!["app/store.py".into()],
            language: Some("python"),
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn relational_rules_count_exactly() {
    let run = app();
    // print calls inside a method (a function inside a class), at any depth.
    let out = rule_find(
        &run,
        "pattern: print($$$A)\ninside:\n  kind: class_definition\n  stopBy: end\n",
    );
    assert_eq!(
        hits(&out),
        vec![("app/store.py".into(), 14), ("app/store.py".into(), 15)]
    );
    // Functions that have an if statement somewhere in their body.
    let out = rule_find(
        &run,
        "kind: function_definition\nhas:\n  kind: if_statement\n  stopBy: end\n",
    );
    assert_eq!(hits(&out), vec![("app/store.py".into(), 4)]);
    // A statement that follows an if statement, in the same block.
    let out = rule_find(
        &run,
        "kind: expression_statement\nfollows:\n  kind: if_statement\n",
    );
    assert_eq!(hits(&out), vec![("app/store.py".into(), 8)]);
    // `field`: the identifier that is a function's name.
    let out = rule_find(
        &run,
        "kind: identifier\ninside:\n  kind: function_definition\n  field: name\n",
    );
    assert_eq!(out.structured.unwrap()["total"], 3);
}

#[test]
fn composite_rules_count_exactly() {
    let run = app();
    let out = rule_find(
        &run,
        "any:\n  - pattern: print($$$A)\n  - pattern: os.remove($X)\n",
    );
    assert_eq!(out.structured.unwrap()["total"], 6);
    let out = rule_find(
        &run,
        "all:\n  - pattern: print($$$A)\n  - not:\n      has:\n        kind: keyword_argument\n        stopBy: end\n",
    );
    assert_eq!(out.structured.unwrap()["total"], 3);
    // `matches` a util.
    let out = rule_find(
        &run,
        "utils:\n  removal:\n    pattern: os.remove($X)\nrule:\n  matches: removal\n  inside:\n    kind: class_definition\n    stopBy: end\n",
    );
    assert_eq!(
        hits(&out),
        vec![("app/store.py".into(), 16), ("app/store.py".into(), 19)]
    );
}

#[test]
fn constraints_filter_metavariables() {
    let run = app();
    let out = rule_find(
        &run,
        "rule:\n  pattern: print($X)\nconstraints:\n  X:\n    regex: ^val\n",
    );
    let text = out.joined_text();
    expect![[r#"
        ast_grep  rule {rule:; pattern: print($X); constraints:; X:; regex: ^val}  [python] in app/store.py — 1 match in 1 file (1 file searched)
        app/store.py:14:9  print(value)  X=value  in Store.save"#]]
    .assert_eq(&text);
}

#[test]
fn a_rule_document_with_language_and_a_json_rule() {
    let run = app();
    let rule = json!({"pattern": "os.remove($X)"});
    let out = find(
        &run,
        FindRequest {
            rule: Some(&rule),
            language: Some("python"),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(out.structured.unwrap()["total"], 2);
    let rule = Value::String("language: python\nrule:\n  pattern: os.remove($X)\n".into());
    let out = find(
        &run,
        FindRequest {
            rule: Some(&rule),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(out.structured.unwrap()["total"], 2);
    let m = match find(
        &run,
        FindRequest {
            rule: Some(&rule),
            language: Some("rust"),
            ..Default::default()
        },
    ) {
        Err(ToolError::BadArgs(m)) => m,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        m,
        "the rule says `language: python` but the call asks for `rust`; give one language"
    );
    let m = match find(
        &run,
        FindRequest {
            pattern: Some("print($X)"),
            rule: Some(&rule),
            ..Default::default()
        },
    ) {
        Err(ToolError::BadArgs(m)) => m,
        other => panic!("{other:?}"),
    };
    assert_eq!(m, "give either `pattern` or `rule`, not both");
}

#[test]
fn rules_rewrite_with_their_fix() {
    let run = app();
    let rule = Value::String(
        "language: python\nrule:\n  pattern: os.remove($X)\n  inside:\n    kind: class_definition\n    stopBy: end\nfix: os.unlink($X)\n"
            .into(),
    );
    let req = ops::EditRequest {
        rule: Some(&rule),
        ..Default::default()
    };
    let out = ops::stage_with(&run.ws, &run.store, &req, &CancellationToken::new()).unwrap();
    let s = out.structured.unwrap();
    assert_eq!(s["replacements"], 2);
    run.store.accept(s["edit_id"].as_str().unwrap()).unwrap();
    let new = std::fs::read_to_string(run.root.join("app/store.py")).unwrap();
    assert_eq!(new.matches("os.unlink(").count(), 2);
    assert_eq!(new.matches("os.remove(").count(), 0);
}

#[test]
fn explain_shows_the_tree_the_rung_and_the_metavariables() {
    let run = app();
    let out = find(
        &run,
        FindRequest {
            pattern: Some("if $X:"),
            paths: vec!["app/store.py".into()],
            explain: true,
            ..Default::default()
        },
    )
    .unwrap();
    expect![[r#"
        ast_grep  if $X:  [python] in app/store.py — 1 match in 1 file (1 file searched)
        (pattern parsed as a statement, completed with an any-body block `$$$`, in python)
        app/store.py:5:5  if path: …  X=path  in load
        explain (python): parsed as a statement, completed with an any-body block `$$$`
          if_statement
            "if"
            $X  ← metavariable (here: identifier)
            ":"
            $$$ (the any-body block)  ← metavariable (here: block)"#]]
    .assert_eq(&out.joined_text());
    let out = find(
        &run,
        FindRequest {
            pattern: Some("except $E:"),
            language: Some("python"),
            explain: true,
            ..Default::default()
        },
    )
    .unwrap();
    let s = out.structured.unwrap();
    expect![[r#"["as a statement: unexpected `except $E:` at line 1, column 1 of the pattern","as an expression: unexpected `__agent_x = except $E:` before the pattern (the fragment unbalances its surroundings)"]"#]]
        .assert_eq(&s["explain"]["python"]["tried"].to_string());
}

#[test]
fn skip_pages_in_a_fixed_order() {
    let run = app();
    let page = |skip: u64| {
        let out = find(
            &run,
            FindRequest {
                pattern: Some("print($$$A)"),
                max_results: Some(3),
                skip: Some(skip),
                ..Default::default()
            },
        )
        .unwrap();
        (hits(&out), out.joined_text())
    };
    let (first, text) = page(0);
    expect_test::expect![[r#"
        ast_grep  print($$$A)  [c, python] in . — 8 matches in 3 files (4 files searched)
        (pattern parsed as a statement, completed with `;`, in c)
        searched: c (1 file), python (3 files)
        app/more.py:1:1  print(1)  A=1
        app/more.py:2:1  print(2)  A=2
        app/more.py:3:1  print(3)  A=3
        … showing 3 of 8 matches in 3 files — narrow with path or a more specific pattern, or pass skip 3 for the next ones"#]].assert_eq(&text);
    let (second, text) = page(3);
    expect_test::expect![[r#"
        ast_grep  print($$$A)  [c, python] in . — 8 matches in 3 files (4 files searched)
        (pattern parsed as a statement, completed with `;`, in c)
        searched: c (1 file), python (3 files)
        app/store.py:7:9  print(data)  A=data  in load
        app/store.py:8:5  print(path)  A=path  in load
        app/store.py:14:9  print(value)  A=value  in Store.save
        … showing matches 4 to 6 of 8 — pass skip 6 for the next ones"#]]
    .assert_eq(&text);
    let (third, text) = page(6);
    expect_test::expect![[r#"
        ast_grep  print($$$A)  [c, python] in . — 8 matches in 3 files (4 files searched)
        (pattern parsed as a statement, completed with `;`, in c)
        searched: c (1 file), python (3 files)
        app/store.py:15:9  print(value, file=self.log)  A=value, file=self.log  in Store.save
        lib/util.py:1:1  print(4)  A=4
        … showing matches 7 to 8 of 8 (the last ones)"#]]
    .assert_eq(&text);
    let all: Vec<(String, u64)> = [first, second, third].concat();
    let (everything, ()) = {
        let out = find(
            &run,
            FindRequest {
                pattern: Some("print($$$A)"),
                ..Default::default()
            },
        )
        .unwrap();
        (hits(&out), ())
    };
    assert_eq!(all, everything);
    assert_eq!(all.len(), 8);
    let (none, text) = page(20);
    assert!(none.is_empty());
    expect_test::expect![[r#"
        ast_grep  print($$$A)  [c, python] in . — 8 matches in 3 files (4 files searched)
        (pattern parsed as a statement, completed with `;`, in c)
        searched: c (1 file), python (3 files)
        … skip 20 passes every one of the 8 matches; give a smaller skip"#]]
    .assert_eq(&text);
}

#[test]
fn several_paths_and_globs() {
    let run = app();
    let out = find(
        &run,
        FindRequest {
            pattern: Some("print($$$A)"),
            paths: vec!["lib".into(), "app/more.py".into()],
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        hits(&out),
        vec![
            ("app/more.py".into(), 1),
            ("app/more.py".into(), 2),
            ("app/more.py".into(), 3),
            ("lib/util.py".into(), 1)
        ]
    );
    assert!(out
        .joined_text()
        .starts_with("ast_grep  print($$$A)  [python] in app/more.py, lib — 4 matches in 2 files"));
    let out = find(
        &run,
        FindRequest {
            pattern: Some("print($$$A)"),
            paths: vec!["**/u*.py".into(), "app/store.py".into()],
            ..Default::default()
        },
    )
    .unwrap();
    let files: Vec<String> = hits(&out).into_iter().map(|(p, _)| p).collect();
    assert_eq!(files.iter().filter(|p| *p == "lib/util.py").count(), 1);
    assert_eq!(files.iter().filter(|p| *p == "app/store.py").count(), 4);
    assert_eq!(files.len(), 5);
}

#[test]
fn language_overrides_detection() {
    let run = app();
    // `.h` is C when inferred; C cannot read a class, C++ can.
    let out = find(
        &run,
        FindRequest {
            pattern: Some("class $C { $$$B }"),
            paths: vec!["include/api.h".into()],
            language: Some("cpp"),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(hits(&out), vec![("include/api.h".into(), 1)]);
}

fn stage_ops(run: &Run, ops_: Vec<ops::EditOperation<'_>>) -> Result<ToolOutput, ToolError> {
    let req = ops::EditRequest {
        operations: ops_,
        language: Some("python"),
        ..Default::default()
    };
    ops::stage_with(&run.ws, &run.store, &req, &CancellationToken::new())
}

#[test]
fn several_operations_are_staged_as_one_edit() {
    let run = app();
    let rule = Value::String("pattern: os.remove($X)\nfix: os.unlink($X)\n".into());
    let out = stage_ops(
        &run,
        vec![
            ops::EditOperation {
                pattern: Some("print($$$A)"),
                rewrite: Some("log($$$A)"),
                ..Default::default()
            },
            ops::EditOperation {
                rule: Some(&rule),
                ..Default::default()
            },
        ],
    )
    .unwrap();
    let s = out.structured.unwrap();
    assert_eq!(s["operations"], 2);
    assert_eq!(s["replacements"], 10);
    assert_eq!(
        s["files"],
        json!(["app/more.py", "app/store.py", "lib/util.py"])
    );
    run.store.accept(s["edit_id"].as_str().unwrap()).unwrap();
    let new = std::fs::read_to_string(run.root.join("app/store.py")).unwrap();
    assert_eq!(
        (
            new.matches("log(").count(),
            new.matches("os.unlink(").count()
        ),
        (4, 2)
    );
    assert_eq!(
        new.matches("print(").count() + new.matches("os.remove(").count(),
        0
    );
}

#[test]
fn operations_changing_the_same_code_stage_nothing() {
    let run = app();
    let m = match stage_ops(
        &run,
        vec![
            ops::EditOperation {
                pattern: Some("print($X)"),
                rewrite: Some("log($X)"),
                ..Default::default()
            },
            ops::EditOperation {
                pattern: Some("print(value)"),
                rewrite: Some("show(value)"),
                ..Default::default()
            },
        ],
    ) {
        Err(ToolError::BadArgs(m)) => m,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        m,
        "operations 1 and 2 both change app/store.py:14; stage them as two edits, one after the other; nothing was staged"
    );
    let m = match stage_ops(
        &run,
        vec![
            ops::EditOperation {
                pattern: Some("print($X)"),
                rewrite: Some("log($Y)"),
                ..Default::default()
            },
            ops::EditOperation {
                pattern: Some("print($X)"),
                rewrite: Some("log($Y)"),
                ..Default::default()
            },
        ],
    ) {
        Err(ToolError::BadArgs(m)) => m,
        other => panic!("{other:?}"),
    };
    assert!(
        m.starts_with("operation 1: the rewrite cannot be filled in"),
        "{m}"
    );
}

#[test]
fn an_edit_of_more_than_1000_files_is_refused() {
    let files: Vec<(String, String)> = (0..1001)
        .map(|i| (format!("f{i:04}.py"), "old()\n".to_string()))
        .collect();
    let run = run_with(&files);
    let m = match run.stage("old()", "new()", Some("python")) {
        Err(ToolError::BadArgs(m)) => m,
        other => panic!("{other:?}"),
    };
    expect!["the edit would change at least 1,001 files; the limit is 1,000 per edit — narrow with path (a folder or a glob) and stage it in parts; nothing was staged"].assert_eq(&m);
    std::fs::remove_file(run.root.join("f0000.py")).unwrap();
    let out = run.stage("old()", "new()", Some("python")).unwrap();
    assert_eq!(
        out.structured.unwrap()["files"].as_array().unwrap().len(),
        1000
    );
}
