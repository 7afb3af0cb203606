//! Hostile inputs to ast_grep and ast_edit (issue 13, items 3 and 4): texts
//! too large to parse, patterns and files nested deep enough to overflow a
//! recursive walk, and rewrites whose diff is one enormous line. Each is
//! answered with a clear error or a named skip, quickly and in small memory,
//! and the process survives to say so.

mod support;

use expect_test::expect;
use std::time::{Duration, Instant};
use support::run_with;
use tool_astgrep::nesting::MAX_FILE_TREE_DEPTH;

/// `depth` nested Python lists around `1`: a tree `depth` + 4 levels deep.
fn nested_python(depth: usize) -> String {
    format!("x = {}1{}\n", "[".repeat(depth), "]".repeat(depth))
}

/// A module whose second statement is 10,000 lists deep around a call of
/// `foo`, so a search for `foo` must parse it.
fn deep_python_holding_foo() -> String {
    format!(
        "foo(0)\n{}",
        nested_python(10_000).replace("[1]", "[foo(9)]")
    )
}

#[test]
fn a_10_mb_pattern_is_refused_before_it_is_parsed() {
    let run = run_with(&[("a.py", "foo(1)\n".into())]);
    let pattern = "a".repeat(10 * 1024 * 1024);
    let started = Instant::now();
    let err = run.find(&pattern, None).unwrap_err();
    let took = started.elapsed();
    expect![[r#"bad arguments: pattern is 10,485,760 bytes; the limit is 65,536 — a pattern is one code fragment, so match a smaller piece of the code"#]]
        .assert_eq(&err.to_string());
    assert!(took < Duration::from_secs(1), "took {took:?}");
    // The same for ast_edit, whatever the rewrite.
    let err = run.stage(&pattern, "bar()", None).unwrap_err();
    assert!(err
        .to_string()
        .starts_with("bad arguments: pattern is 10,485,760 bytes"));
    // 64 KiB exactly is still a pattern.
    let at_limit = format!("foo({})", "1".repeat(65_536 - 5));
    assert_eq!(at_limit.len(), 65_536);
    assert!(run.find(&at_limit, Some("python")).is_ok());
}

#[test]
fn a_10_mb_rewrite_is_refused_and_nothing_is_staged() {
    let run = run_with(&[("a.py", "foo(1)\n".into())]);
    let rewrite = "b".repeat(10 * 1024 * 1024);
    let started = Instant::now();
    let err = run.stage("foo($X)", &rewrite, None).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1));
    expect![[r#"bad arguments: rewrite is 10,485,760 bytes; the limit is 65,536 — stage a smaller replacement; nothing was staged"#]]
        .assert_eq(&err.to_string());
    assert!(run.store.staged_files("edit_1").is_none());
}

#[test]
fn a_pattern_5000_brackets_deep_is_refused_before_compiling() {
    let run = run_with(&[("a.py", "foo(1)\n".into())]);
    let pattern = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    let err = run.find(&pattern, None).unwrap_err();
    expect![[r#"bad arguments: pattern nested too deeply: 5,000 levels of brackets; the limit is 128 — match an inner piece with fewer levels, using `$_` for what it contains"#]]
        .assert_eq(&err.to_string());
    // Deep, but within the limit: compiles and matches.
    let pattern = format!("{}1{}", "[".repeat(120), "]".repeat(120));
    let run = run_with(&[("a.py", nested_python(120))]);
    let out = run.find(&pattern, Some("python")).unwrap();
    assert_eq!(out.structured.unwrap()["total"], 1);
}

#[test]
fn a_pattern_nested_without_brackets_is_refused_with_its_depth() {
    let run = run_with(&[("a.py", "foo(1)\n".into())]);
    // `a + a + … + a` nests to the left: one tree level per `+`.
    let pattern = vec!["a"; 3000].join(" + ");
    let err = run.find(&pattern, Some("python")).unwrap_err();
    expect!["bad arguments: pattern nested too deeply: its syntax tree for python is 3,002 levels deep; the limit is 320 — match a smaller piece of the code"].assert_eq(&err.to_string());
    // Without a language every grammar refuses it the same way: the first
    // one tried says so.
    let err = run.find(&pattern, None).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("bad arguments: pattern nested too deeply: its syntax tree for "),
        "{err}"
    );
}

#[test]
fn a_file_10000_deep_is_skipped_and_named_while_the_rest_is_searched() {
    let run = run_with(&[
        ("deep.py", deep_python_holding_foo()),
        (
            "deep.js",
            format!(
                "foo(0);\nx = {}1{};\n",
                "(".repeat(10_000),
                ")".repeat(10_000)
            ),
        ),
        ("ok.py", "foo(1)\nfoo(2)\n".into()),
        ("ok.js", "foo(3);\n".into()),
    ]);
    let out = run.find("foo($X)", None).unwrap();
    expect![[r#"
        ast_grep  foo($X)  [javascript, python] in . — 3 matches in 2 files (2 files searched)
        searched: javascript (1 file), python (1 file)
        ok.js:1:1  foo(3)  X=3
        ok.py:1:1  foo(1)  X=1
        ok.py:2:1  foo(2)  X=2
        (2 files skipped: 2 too deeply nested)
        skipped deep.js: too deeply nested: 10,004 levels, limit 5,000
        skipped deep.py: too deeply nested: 10,006 levels, limit 5,000"#]]
    .assert_eq(&out.joined_text());
    let s = out.structured.unwrap();
    assert_eq!(s["total"], 3);
    expect![[r#"[{"depth":10004,"path":"deep.js"},{"depth":10006,"path":"deep.py"}]"#]]
        .assert_eq(&s["skipped"]["too_deep"].to_string());
}

/// A Python module is parsed only in the top-level statements that hold
/// the pattern's literal: a statement nested too deeply that does not hold
/// it is never parsed, and the rest of its file is searched.
#[test]
fn a_deep_statement_without_the_literal_does_not_stop_the_search_of_its_file() {
    let run = run_with(&[(
        "deep.py",
        format!("foo(0)\n{}foo(1)\n", nested_python(10_000)),
    )]);
    let out = run.find("foo($X)", None).unwrap();
    expect![[r#"
        ast_grep  foo($X)  [python] in . — 2 matches in 1 file (1 file searched)
        searched: python (1 file)
        deep.py:1:1  foo(0)  X=0
        deep.py:3:1  foo(1)  X=1"#]]
    .assert_eq(&out.joined_text());
}

#[test]
fn ast_edit_skips_a_deep_file_and_stages_the_rest() {
    let run = run_with(&[
        ("deep.py", deep_python_holding_foo()),
        ("ok.py", "foo(1)\n".into()),
    ]);
    let out = run.stage("foo($X)", "bar($X)", None).unwrap();
    expect![[r#"
        (proposed) 1 replacement in 1 file … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        ast_edit  foo($X)  →  bar($X)  [python] in .; nothing is written until accepted
        searched: python (1 file)
        (1 file skipped: 1 too deeply nested)
        skipped deep.py: too deeply nested: 10,006 levels, limit 5,000
        --- a/ok.py
        +++ b/ok.py
        @@ -1 +1 @@
        -foo(1)
        +bar(1)"#]].assert_eq(&out.joined_text());
    let files = run.store.staged_files("edit_1").unwrap();
    assert_eq!(
        files.iter().map(|f| f.rel.as_str()).collect::<Vec<_>>(),
        ["ok.py"]
    );
    assert!(std::fs::read_to_string(run.root.join("deep.py"))
        .unwrap()
        .starts_with("foo(0)\n"));
}

/// At the file limit the deepest recursion the matcher has (comparing two
/// captures of a metavariable used twice, node by node) runs, on the
/// matching threads, without overflowing.
#[test]
fn a_file_at_the_depth_limit_is_matched_even_by_a_repeated_metavariable() {
    // module > expression_statement > assignment > comparison_operator >
    // the lists > 1: the file is 4,995 levels deep, each capture 4,991.
    let lists = MAX_FILE_TREE_DEPTH - 10;
    let side = format!("{}1{}", "[".repeat(lists), "]".repeat(lists));
    let src = format!("x = {side} == {side}\n");
    let run = run_with(&[("a.py", src)]);
    let out = run.find("$X == $X", Some("python")).unwrap();
    let s = out.structured.clone().unwrap();
    assert_eq!(s["total"], 1, "{}", out.joined_text());
    assert_eq!(s["skipped"]["too_deep"], serde_json::json!([]));
    // One level deeper than the limit and it is skipped, not matched.
    let side = format!("{}1{}", "[".repeat(lists + 11), "]".repeat(lists + 11));
    let run = run_with(&[("a.py", format!("x = {side} == {side}\n"))]);
    let out = run.find("$X == $X", Some("python")).unwrap();
    expect![[r#"
        ast_grep  $X == $X  [python] in . — 0 matches in 0 files (0 files searched)
        no matches in 0 files of python
        (1 file skipped: 1 too deeply nested)
        skipped a.py: too deeply nested: 5,006 levels, limit 5,000"#]]
    .assert_eq(&out.joined_text());
}

#[test]
fn the_diff_preview_cuts_long_lines_and_says_how_much() {
    // One 200,000-character line, rewritten: the preview shows 240
    // characters of each side of it.
    let long = format!("x = [{}]\n", vec!["1"; 100_000].join(","));
    assert_eq!(long.len(), 200_006);
    let run = run_with(&[("a.py", long)]);
    let out = run.stage("x = $V", "y = $V", Some("python")).unwrap();
    assert!(
        out.joined_text().len() < 2_000,
        "{} bytes",
        out.joined_text().len()
    );
    expect![[r#"
        (proposed) 1 replacement in 1 file … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        ast_edit  x = $V  →  y = $V  [python] in .; nothing is written until accepted
        --- a/a.py
        +++ b/a.py
        @@ -1 +1 @@
        -x = [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,… (199,766 more characters)
        +y = [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,… (199,766 more characters)"#]].assert_eq(&out.joined_text());
    // The staged change is whole: read back, its new text is all there.
    let files = run.store.staged_files("edit_1").unwrap();
    let texts = files[0].texts(run.ws.dir()).unwrap();
    assert_eq!(texts.new.as_deref().map(str::len), Some(200_006));
}

/// The YAML grammar's scanner aborts the process on blocks nested about 254
/// deep (found by tests/pattern_props.rs), so deep YAML is never parsed:
/// the pattern is refused, the file skipped and named.
#[test]
fn deep_yaml_is_never_parsed() {
    let run = run_with(&[
        ("deep.yaml", format!("{}a: b\n", "- ".repeat(300))),
        ("ok.yaml", "a: c\n".into()),
    ]);
    let out = run.find("a: $X", Some("yaml")).unwrap();
    expect![[r#"
        ast_grep  a: $X  [yaml] in . — 1 match in 1 file (1 file searched)
        ok.yaml:1:1  a: c  X=c
        (1 file skipped: 1 too deeply nested)
        skipped deep.yaml: too deeply nested: 301 levels, limit 200"#]]
    .assert_eq(&out.joined_text());
    let err = run
        .find(&format!("{}$X", "- ".repeat(300)), Some("yaml"))
        .unwrap_err();
    expect!["bad arguments: pattern nested too deeply: 300 levels of YAML blocks; the limit is 200 — match a smaller piece of the document"].assert_eq(&err.to_string());
}
