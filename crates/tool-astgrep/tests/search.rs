//! ast_grep against real fixture files of several language families
//! (tests/fixtures/astgrep), parsed by the real grammars, and checked
//! against the real `ast-grep` CLI where both should agree.

mod support;

use expect_test::expect;
use serde_json::Value;
use std::path::{Path, PathBuf};
use support::hits;
use tool_astgrep::ops;
use tool_core::{CancellationToken, ToolError, ToolOutput, Workspace};

fn fixtures() -> PathBuf {
    test_support::fixtures::workspace_root().join("tests/fixtures/astgrep")
}

fn ws() -> Workspace {
    Workspace::new(fixtures()).unwrap()
}

fn find(
    ws: &Workspace,
    pattern: &str,
    path: Option<&str>,
    lang: Option<&str>,
    max: Option<u64>,
) -> Result<ToolOutput, ToolError> {
    ops::find(ws, pattern, path, lang, max, &CancellationToken::new())
}

/// The examples of the issue, per language family: exactly these lines match
/// (so nothing in a string or comment, and no near miss).
const CASES: &[(&str, &str, &str, &[u64])] = &[
    (
        "python",
        "python/checks.py",
        "isinstance($X, $Y)",
        &[8, 10, 13],
    ),
    ("python", "python/checks.py", "$X == $X", &[16, 17]),
    (
        "rust",
        "rust/lib.rs",
        "fn $NAME($$$ARGS) -> Result<$T, $E>",
        &[9, 24, 29],
    ),
    ("rust", "rust/lib.rs", "$X == $X", &[37]),
    (
        "dart",
        "dart/holder.dart",
        "if ($X != null) $X.dispose()",
        &[12, 14],
    ),
    ("dart", "dart/holder.dart", "dispose($X)", &[16, 17]),
    ("c", "c/main.c", "foo($E)", &[9, 10, 11]),
    ("c", "c/main.c", "$X == $X", &[15]),
    (
        "typescript",
        "typescript/store.ts",
        "async $NAME($$$P) { $$$B }",
        &[5, 15],
    ),
    ("typescript", "typescript/store.ts", "$X === $X", &[27]),
    (
        "java",
        "java/Service.java",
        "public void $M($$$P) { $$$B }",
        &[5, 9, 21],
    ),
    ("go", "go/main.go", "fmt.Println($$$A)", &[9, 10, 15]),
    ("go", "go/main.go", "$X == $X", &[14]),
];

#[test]
fn the_examples_match_what_they_should_and_nothing_else() {
    let ws = ws();
    for (lang, file, pattern, lines) in CASES {
        // Once with the language named, once inferred from the file.
        for language in [Some(*lang), None] {
            let out = find(&ws, pattern, Some(file), language, None)
                .unwrap_or_else(|e| panic!("{lang} {pattern}: {e}"));
            let got: Vec<u64> = hits(&out).into_iter().map(|(_, l)| l).collect();
            assert_eq!(&got, lines, "{lang} `{pattern}`:\n{}", out.joined_text());
            let s = out.structured.as_ref().unwrap();
            assert_eq!(s["total"], lines.len());
            assert_eq!(s["languages"][0], *lang);
        }
    }
}

#[test]
fn text_in_strings_and_comments_is_never_matched() {
    // Each fixture spells the pattern's code inside a string and a comment;
    // a text search sees those lines, the structural one must not.
    let ws = ws();
    for (file, pattern, literal) in [
        (
            "python/checks.py",
            "isinstance($X, str)",
            "isinstance(value, str)",
        ),
        (
            "dart/holder.dart",
            "if ($X != null) $X.dispose()",
            "if (controller != null) controller.dispose();",
        ),
        ("c/main.c", "foo($E)", "foo("),
        (
            "java/Service.java",
            "public void $M() { $$$B }",
            "public void",
        ),
        ("rust/lib.rs", "fn $N() -> Result<$T, $E>", "-> Result<"),
    ] {
        let text = std::fs::read_to_string(fixtures().join(file)).unwrap();
        let textual: Vec<u64> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains(literal))
            .map(|(i, _)| i as u64 + 1)
            .collect();
        let out = find(&ws, pattern, Some(file), None, None).unwrap();
        let structural: Vec<u64> = hits(&out).into_iter().map(|(_, l)| l).collect();
        for line in &textual {
            let src = text.lines().nth(*line as usize - 1).unwrap();
            let in_string_or_comment = src.trim_start().starts_with("//")
                || src.trim_start().starts_with('#')
                || src.trim_start().starts_with("/*")
                || src.contains('"') && src.find('"') < src.find(literal)
                || src.contains('\'') && src.find('\'') < src.find(literal);
            if in_string_or_comment {
                assert!(
                    !structural.contains(line),
                    "{file}:{line} is inside a string or comment but matched `{pattern}`"
                );
            }
        }
        assert!(
            textual.len() > structural.len(),
            "{file}: the fixture must contain the code as text too"
        );
    }
}

#[test]
fn spacing_wrapping_and_comments_do_not_stop_a_match() {
    let ws = ws();
    let out = find(&ws, "isinstance($X, $Y)", Some("python"), None, None).unwrap();
    let text = out.joined_text();
    // Line 10 is spaced and wrapped, line 13 has a comment inside.
    expect![[r#"
        ast_grep  isinstance($X, $Y)  [python] in python — 3 matches in 1 file (2 files searched)
        searched: python (2 files)
        python/checks.py:8:8  isinstance(value, str)  X=value Y=str  in check
        python/checks.py:10:8  isinstance(  value , …  X=value Y=int  in check
        python/checks.py:13:8  isinstance(value,  # a comment inside …  X=value Y=bytes  in check"#]].assert_eq(&text);
}

#[test]
fn a_repeated_metavariable_only_matches_equal_code() {
    let ws = ws();
    let out = find(&ws, "$X == $X", Some("python/checks.py"), None, None).unwrap();
    let s = out.structured.unwrap();
    let caps: Vec<&str> = s["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["captures"]["X"].as_str().unwrap())
        .collect();
    // `value == other` on the same line as `value == value` is not a match.
    assert_eq!(caps, ["value", "(value + 1)"]);
    assert_eq!(s["matches"][0]["column"], 12);
}

#[test]
fn a_directory_without_language_says_what_it_searched() {
    let ws = ws();
    let out = find(&ws, "$X == $X", None, None, None).unwrap();
    let text = out.joined_text();
    expect![[r#"
        ast_grep  $X == $X  [c, dart, go, java, python, rust, typescript] in . — 5 matches in 4 files (8 files searched)
        (pattern parsed as a statement, completed with `;`, in c)
        (pattern parsed as a statement, completed with `;`, in dart)
        (pattern parsed as a statement, completed with `;`, in java)
        searched: c (1 file), dart (1 file), go (1 file), java (1 file), python (2 files), rust (1 file), typescript (1 file)
        c/main.c:15:26  a == a  X=a  in main
        go/main.go:14:5  x == x  X=x  in main
        python/checks.py:16:12  value == value  X=value  in check
        python/checks.py:17:13  (value + 1) == (value + 1)  X=(value + 1)  in check
        rust/lib.rs:37:16  n == n  X=n  in main"#]].assert_eq(&text);
    let s = out.structured.as_ref().unwrap();
    assert_eq!(
        s["languages"],
        serde_json::json!(["c", "dart", "go", "java", "python", "rust", "typescript"])
    );
    assert_eq!(s["files_searched"], 8);
}

#[test]
fn order_is_deterministic_and_the_cap_says_how_many_more() {
    let ws = ws();
    let first = find(&ws, "$X == $X", None, None, Some(3))
        .unwrap()
        .joined_text();
    for _ in 0..5 {
        let again = find(&ws, "$X == $X", None, None, Some(3))
            .unwrap()
            .joined_text();
        assert_eq!(first, again);
    }
    expect![[r#"
        ast_grep  $X == $X  [c, dart, go, java, python, rust, typescript] in . — 5 matches in 4 files (8 files searched)
        (pattern parsed as a statement, completed with `;`, in c)
        (pattern parsed as a statement, completed with `;`, in dart)
        (pattern parsed as a statement, completed with `;`, in java)
        searched: c (1 file), dart (1 file), go (1 file), java (1 file), python (2 files), rust (1 file), typescript (1 file)
        c/main.c:15:26  a == a  X=a  in main
        go/main.go:14:5  x == x  X=x  in main
        python/checks.py:16:12  value == value  X=value  in check
        … showing 3 of 5 matches in 4 files — narrow with path or a more specific pattern, or pass skip 3 for the next ones"#]].assert_eq(&first);
    let s = find(&ws, "$X == $X", None, None, Some(3))
        .unwrap()
        .structured
        .unwrap();
    assert_eq!(
        (s["total"].as_u64(), s["matches"].as_array().unwrap().len()),
        (Some(5), 3)
    );
}

fn temp_ws(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Workspace) {
    let d = tempfile::tempdir().unwrap();
    for (rel, bytes) in files {
        let p = d.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    let ws = Workspace::new(d.path()).unwrap();
    (d, ws)
}

#[test]
fn skipped_files_are_counted_not_dropped() {
    let (_d, ws) = temp_ws(&[
        ("ok.py", b"foo(1)\n"),
        ("bin.py", b"foo(2)\0\x01\x02"),
        ("latin1.py", b"foo(3)  # caf\xe9\n"),
    ]);
    let out = find(&ws, "foo($X)", None, Some("python"), None).unwrap();
    expect![[r#"
        ast_grep  foo($X)  [python] in . — 1 match in 1 file (1 file searched)
        ok.py:1:1  foo(1)  X=1
        (2 files skipped: 1 binary, 1 not UTF-8)"#]]
    .assert_eq(&out.joined_text());
    let s = out.structured.unwrap();
    assert_eq!(s["skipped"]["binary"], 1);
    assert_eq!(s["skipped"]["not_utf8"], 1);
    assert_eq!(s["files_searched"], 1);
}

#[test]
fn gitignored_and_hidden_files_are_not_searched() {
    let (d, ws) = temp_ws(&[
        (".gitignore", b"build/\n"),
        ("src/a.py", b"foo(1)\n"),
        ("build/b.py", b"foo(2)\n"),
        (".hidden/c.py", b"foo(3)\n"),
    ]);
    std::fs::create_dir(d.path().join(".git")).unwrap();
    let out = find(&ws, "foo($X)", None, None, None).unwrap();
    assert_eq!(
        hits(&out),
        vec![("src/a.py".to_string(), 1)],
        "{}",
        out.joined_text()
    );
}

#[test]
fn headers_are_c_unless_cpp_is_asked_for() {
    let (_d, ws) = temp_ws(&[
        ("api.h", b"int foo(int x);\nstatic int y = foo(2);\n"),
        ("impl.cpp", b"int z = foo(3);\n"),
    ]);
    let out = find(&ws, "foo($E)", None, None, None).unwrap();
    expect![[r#"
        ast_grep  foo($E)  [c, cpp] in . — 2 matches in 2 files (2 files searched)
        (pattern parsed as a statement, completed with `;`, in c)
        (pattern parsed as a statement, completed with `;`, in cpp)
        searched: c (1 file), cpp (1 file)
        api.h:2:16  foo(2)  E=2
        impl.cpp:1:9  foo(3)  E=3"#]]
    .assert_eq(&out.joined_text());
    let out = find(&ws, "foo($E)", None, Some("cpp"), None).unwrap();
    assert_eq!(
        hits(&out),
        vec![("api.h".to_string(), 2), ("impl.cpp".to_string(), 1)]
    );
    let out = find(&ws, "foo($E)", None, Some("c"), None).unwrap();
    assert_eq!(hits(&out), vec![("api.h".to_string(), 2)]);
}

#[test]
fn a_later_context_is_named_in_the_result() {
    let ws = ws();
    let out = find(
        &ws,
        "async $NAME($$$P) { $$$B }",
        Some("typescript"),
        Some("ts"),
        None,
    )
    .unwrap();
    expect![[r#"
        ast_grep  async $NAME($$$P) { $$$B }  [typescript] in typescript — 2 matches in 1 file (1 file searched)
        (pattern parsed as a class member in typescript)
        typescript/store.ts:5:3  async load(id: string) { …  B=const s = "async load(x) { }"; … NAME=load P=id: string  in Store
        typescript/store.ts:15:3  async   refresh( …  B=console.log( … NAME=refresh P=force: boolean, // wrapped  in Store"#]].assert_eq(&out.joined_text());
    assert_eq!(
        out.structured.unwrap()["contexts"]["typescript"],
        "class member"
    );
}

fn bad(r: Result<ToolOutput, ToolError>) -> String {
    match r {
        Err(ToolError::BadArgs(m)) => m,
        other => panic!("expected bad arguments, got {other:?}"),
    }
}

#[test]
fn bad_input_gets_a_clear_error() {
    let ws = ws();
    // (pattern, path, language, max_results)
    type Call = (
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
        Option<u64>,
    );
    let cases: [Call; 9] = [
        ("", None, Some("python"), None),
        ("$$$X", None, Some("python"), None),
        ("foo($X)", None, Some("cobol"), None),
        ("foo($X)", Some("../x"), None, None),
        ("foo($X)", Some("nope/missing.py"), None, None),
        ("foo($X)", None, Some("python"), Some(0)),
        ("foo($X)", None, Some("python"), Some(1_000_000)),
        ("foo(", None, Some("python"), None),
        // Some grammar (markdown, yaml) reads almost anything; what matters
        // is that the languages of the files in scope could not read it.
        ("if ((", None, None, None),
    ];
    let messages: Vec<String> = cases
        .into_iter()
        .map(|(pattern, path, language, max)| bad(find(&ws, pattern, path, language, max)))
        .map(|m| m.replace(&fixtures().display().to_string(), "ROOT"))
        .collect();
    expect![[r#"
        [
            "empty pattern; give a code fragment such as `foo($X)`",
            "the pattern `$$$X` is only a sequence metavariable, which matches a run of siblings and not one node; put it inside some code, e.g. `foo($$$X)` or `[$$$X]`",
            "unknown language `cobol`; valid ids: bash, c, cmake, cpp, csharp, css, dart, dockerfile, elixir, go, graphql, haskell, hcl, html, java, javascript, json, kotlin, lua, make, markdown, nix, php, protobuf, python, r, ruby, rust, scala, solidity, sql, svelte, swift, toml, tsx, typescript, vue, xml, yaml, zig (aliases such as py, rs, ts, js, c++ work too)",
            "`../x` is outside the workspace; only paths inside ROOT can be used (give them relative to it)",
            "`nope/missing.py` does not exist in the workspace; check the path (relative to the workspace root)",
            "argument `max_results`: 0 would show nothing; give 1 to 1000 (default 50)",
            "argument `max_results`: 1000000 is more than the 1000 a result may show; narrow with path or a more specific pattern instead",
            "unparseable pattern for python: `foo(` is not one complete piece of python code in any context tried:\n  - as a statement: unexpected `foo(` at line 1, column 1 of the pattern\n  - as an expression: unexpected `__agent_x = foo(` before the pattern (the fragment unbalances its surroundings)\n  - as a clause of a try statement: unexpected `foo(` at line 1, column 1 of the pattern\n  - as a clause of an if statement: unexpected `foo(` at line 1, column 1 of the pattern\n  - as a class member: unexpected `foo(` at line 1, column 1 of the pattern\n  - as a declaration: unexpected `foo(` at line 1, column 1 of the pattern\nWrite the pattern as python code that parses on its own (a statement, an expression, a class member or a declaration), with metavariables only where a name or an expression can stand; or check `language`.",
            "unparseable pattern: `if ((` does not parse in the languages of the files in scope: c (1 file), dart (1 file), go (1 file), java (1 file), python (2 files), rust (1 file), typescript (1 file); pass `language` to see where it breaks",
        ]
    "#]].assert_debug_eq(&messages);
}

#[test]
fn unknown_extension_without_language_is_an_error() {
    let (_d, ws) = temp_ws(&[("notes.txt", b"foo(1)\n")]);
    let m = bad(find(&ws, "foo($X)", Some("notes.txt"), None, None));
    expect!["cannot infer the language of `notes.txt` from its extension; pass `language` (one of bash, c, cmake, cpp, csharp, css, dart, dockerfile, elixir, go, graphql, haskell, hcl, html, java, javascript, json, kotlin, lua, make, markdown, nix, php, protobuf, python, r, ruby, rust, scala, solidity, sql, svelte, swift, toml, tsx, typescript, vue, xml, yaml, zig)"].assert_eq(&m);
    let out = find(&ws, "foo($X)", Some("notes.txt"), Some("python"), None).unwrap();
    assert_eq!(hits(&out), vec![("notes.txt".to_string(), 1)]);
}

/// (file, start byte, end byte) per match, from the CLI's JSON stream.
fn cli_matches(cli: &Path, dir: &Path, lang: &str, pattern: &str) -> Vec<(String, u64, u64)> {
    let out = std::process::Command::new(cli)
        .current_dir(dir)
        .args(["run", "-l", lang, "-p", pattern, "--json=stream", "."])
        .output()
        .unwrap();
    let mut v: Vec<(String, u64, u64)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|m| {
            (
                m["file"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("./")
                    .to_string(),
                m["range"]["start"]["line"].as_u64().unwrap() + 1,
                m["range"]["start"]["column"].as_u64().unwrap() + 1,
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn match_sets_agree_with_the_ast_grep_cli_where_both_parse_the_pattern() {
    let Some(cli) = test_support::fixtures::require(&["ast-grep", "sg"]) else {
        return;
    };
    let ws = ws();
    for (lang, pattern) in [
        ("python", "isinstance($X, $Y)"),
        ("python", "$X == $X"),
        ("typescript", "console.log($$$A)"),
        ("java", "public void $M($$$P) { $$$B }"),
        ("rust", "$X.unwrap()"),
    ] {
        let out = find(&ws, pattern, None, Some(lang), Some(1000)).unwrap();
        let s = out.structured.unwrap();
        let mut ours: Vec<(String, u64, u64)> = s["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["path"].as_str().unwrap().to_string(),
                    m["line"].as_u64().unwrap(),
                    m["column"].as_u64().unwrap(),
                )
            })
            .collect();
        ours.sort();
        let theirs = cli_matches(&cli, &fixtures(), lang, pattern);
        assert!(!ours.is_empty(), "{lang} {pattern}");
        assert_eq!(ours, theirs, "{lang} `{pattern}`");
    }
}
