//! Issue 16, "What is wrong today": the patterns people write first (block
//! headers, C blocks, a TypeScript catch clause, calls inside macros) find
//! what they should, with exact counts, and a rewrite that would break a file
//! is refused. Each fixture is small and written here, so every count can be
//! checked by reading it.

mod support;

use expect_test::expect;
use support::{hits, run_with};

/// Stage a rewrite and accept it; the files are then on disk.
fn stage_and_accept(run: &support::Run, pattern: &str, rewrite: &str, lang: Option<&str>) {
    let out = run.stage(pattern, rewrite, lang).unwrap();
    let id = out.structured.as_ref().unwrap()["edit_id"]
        .as_str()
        .unwrap_or_else(|| panic!("nothing staged:\n{}", out.joined_text()))
        .to_string();
    run.store.accept(&id).unwrap();
}

const PY_BLOCKS: &str = "import os


class Base:
    pass


class Child(Base, object):
    def run(self, x) -> None:
        if x:
            print(x)
        elif x is None:
            pass
        if not x:
            return
        while x:
            x -= 1

    def value(self) -> int:
        if x: return 1
        return 2


def helper(a, b) -> None:
    try:
        os.remove(a)
    except OSError as e:
        print(e)
    except ValueError:
        pass
";

fn py_run() -> support::Run {
    run_with(&[("pkg/blocks.py", PY_BLOCKS.to_string())])
}

#[test]
fn python_block_headers_match_every_block_they_head() {
    let run = py_run();
    for (pattern, want) in [
        ("if $X:", vec![10, 14, 20]),
        ("class $C($$$B):", vec![8]),
        ("def $F($$$A) -> None:", vec![9, 24]),
        ("while $X:", vec![16]),
        ("except $E:", vec![27, 29]),
    ] {
        let out = run.find(pattern, Some("python")).unwrap();
        let got: Vec<u64> = hits(&out).into_iter().map(|(_, l)| l).collect();
        assert_eq!(got, want, "`{pattern}`:\n{}", out.joined_text());
    }
    let out = run.find("if $X:", Some("python")).unwrap();
    expect![[r#"
        ast_grep  if $X:  [python] in . — 3 matches in 1 file (1 file searched)
        (pattern parsed as a statement, completed with an any-body block `$$$`, in python)
        pkg/blocks.py:10:9  if x: …  X=x  in Child.run
        pkg/blocks.py:14:9  if not x: …  X=not x  in Child.run
        pkg/blocks.py:20:9  if x: return 1  X=x  in Child.value"#]]
    .assert_eq(&out.joined_text());
    let s = out.structured.unwrap();
    expect![[r#"{"completed_with":"an any-body block `$$$`","context":"statement"}"#]]
        .assert_eq(&s["rungs"]["python"].to_string());
    let out = run.find("except $E:", Some("python")).unwrap();
    expect![[r#"
        ast_grep  except $E:  [python] in . — 2 matches in 1 file (1 file searched)
        (pattern parsed as a clause of a try statement, completed with an any-body block `$$$`, in python)
        pkg/blocks.py:27:5  except OSError as e: …  E=OSError as e  in helper
        pkg/blocks.py:29:5  except ValueError: …  E=ValueError  in helper"#]].assert_eq(&out.joined_text());
}

const C_BLOCKS: &str = "#include <stdlib.h>

#define FREE_TWICE(p) do { zfree(p); zfree(p); } while (0)

int count(int *a, int n) {
    int c = 0;
    if (n > 0) {
        c++;
    }
    if (a) c--;
    while (n > 0) {
        n--;
        c++;
    }
    while (c < 0) {
    }
    while (c) c--;
    zfree(a);
    return c;
}
";

#[test]
fn c_block_statements_match_with_or_without_a_semicolon_after_the_body() {
    let run = run_with(&[("src/count.c", C_BLOCKS.to_string())]);
    let out = run.find("if ($A) { $$$B }", Some("c")).unwrap();
    assert_eq!(hits(&out), vec![("src/count.c".into(), 7)]);
    expect![[r#"
        ast_grep  if ($A) { $$$B }  [c] in . — 1 match in 1 file (1 file searched)
        (pattern parsed as a statement, with `;` after `$$$B` implied, in c)
        src/count.c:7:5  if (n > 0) { …  A=n > 0 B=c++;  in count"#]]
    .assert_eq(&out.joined_text());
    for pattern in ["while ($C) { $$$B; }", "while ($C) { $$$B }"] {
        let out = run.find(pattern, Some("c")).unwrap();
        let got: Vec<u64> = hits(&out).into_iter().map(|(_, l)| l).collect();
        assert_eq!(got, vec![11, 15], "`{pattern}`:\n{}", out.joined_text());
    }
}

const TS_CATCH: &str = "export async function load(path: string) {
  try {
    return await read(path);
  } catch (err) {
    console.error(err);
  }
  try {
    other();
  } catch {
    retry();
  }
}
";

#[test]
fn a_typescript_catch_clause_over_a_directory_without_language() {
    let run = run_with(&[
        ("web/load.ts", TS_CATCH.to_string()),
        ("pkg/blocks.py", PY_BLOCKS.to_string()),
    ]);
    let out = run.find("catch ($E) { $$$B }", None).unwrap();
    assert_eq!(hits(&out), vec![("web/load.ts".into(), 4)]);
    let text = out.joined_text();
    expect![[r#"
        ast_grep  catch ($E) { $$$B }  [python, typescript] in . — 1 match in 1 file (2 files searched)
        (pattern parsed as a clause of a try statement in typescript)
        searched: python (1 file), typescript (1 file)
        web/load.ts:4:5  catch (err) { …  B=console.error(err); E=err  in load"#]].assert_eq(&text);
    let s = out.structured.unwrap();
    assert_eq!(
        s["rungs"]["typescript"]["context"],
        "clause of a try statement"
    );
}

const RS_MACROS: &str = "fn main() {
    let a = Some(1).unwrap();
    let v = vec![a, Some(2).unwrap(), x.unwrap()];
    assert_eq!(y.unwrap(), 3);
    println!(\"{}\", z.unwrap());
    my_macro! { weird tokens => w.unwrap() }
}
";

#[test]
fn calls_inside_rust_macros_are_searched_or_reported() {
    let run = run_with(&[("src/main.rs", RS_MACROS.to_string())]);
    let out = run.find("$X.unwrap()", Some("rust")).unwrap();
    let got: Vec<u64> = hits(&out).into_iter().map(|(_, l)| l).collect();
    assert_eq!(got, vec![2, 3, 3, 4, 5], "{}", out.joined_text());
    expect![[r#"
        ast_grep  $X.unwrap()  [rust] in . — 5 matches in 1 file (1 file searched)
        src/main.rs:2:13  Some(1).unwrap()  X=Some(1)  in main
        src/main.rs:3:21  Some(2).unwrap()  X=Some(2)  in main
        src/main.rs:3:39  x.unwrap()  X=x  in main
        src/main.rs:4:16  y.unwrap()  X=y  in main
        src/main.rs:5:20  z.unwrap()  X=z  in main
        1 textual candidate inside macro invocations was not searched structurally: src/main.rs:6"#]]
    .assert_eq(&out.joined_text());
    let s = out.structured.unwrap();
    assert_eq!(
        s["unsearched_candidates"],
        serde_json::json!([{"path": "src/main.rs", "line": 6}])
    );
}

#[test]
fn calls_inside_c_macro_bodies_are_searched() {
    let run = run_with(&[("src/count.c", C_BLOCKS.to_string())]);
    let out = run.find("zfree($X)", Some("c")).unwrap();
    let got: Vec<u64> = hits(&out).into_iter().map(|(_, l)| l).collect();
    assert_eq!(got, vec![3, 3, 18], "{}", out.joined_text());
}

#[test]
fn a_rewrite_that_breaks_a_file_is_refused_and_named() {
    // An assignment expression needs a name on its left: where the target is
    // an attribute the rewrite breaks the file, which is refused; the other
    // is staged.
    let run = run_with(&[
        ("a/name.py", "x = compute()\n".to_string()),
        ("b/attr.py", "y = 1\nself.x = compute()\n".to_string()),
    ]);
    let out = run
        .stage("$A = compute()", "$A := compute()", Some("python"))
        .unwrap();
    expect![[r#"
        (proposed) 1 replacement in 1 file … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        ast_edit  $A = compute()  →  $A := compute()  [python] in .; nothing is written until accepted
        refused 1 file the rewrite would leave with a syntax error (pass allow_parse_errors: true to stage it anyway):
          b/attr.py:2:9: unexpected `=` — self.x := compute()
        --- a/a/name.py
        +++ b/a/name.py
        @@ -1 +1 @@
        -x = compute()
        +x := compute()"#]].assert_eq(&out.joined_text());
    let s = out.structured.unwrap();
    assert_eq!(s["files"], serde_json::json!(["a/name.py"]));
    assert_eq!(s["refused"][0]["path"], "b/attr.py");
    // Nothing was written, and with allow_parse_errors both are staged.
    assert_eq!(
        std::fs::read_to_string(run.root.join("b/attr.py")).unwrap(),
        "y = 1\nself.x = compute()\n"
    );
    let req = tool_astgrep::ops::EditRequest {
        pattern: "$A = compute()",
        rewrite: Some("$A := compute()"),
        language: Some("python"),
        allow_parse_errors: true,
        ..Default::default()
    };
    let out = tool_astgrep::ops::stage_with(
        &run.ws,
        &run.store,
        &req,
        &tool_core::CancellationToken::new(),
    )
    .unwrap();
    let s = out.structured.unwrap();
    assert_eq!(s["files"], serde_json::json!(["a/name.py", "b/attr.py"]));
    assert_eq!(s["refused"], serde_json::json!([]));
}

#[test]
fn rewriting_a_block_header_keeps_the_body() {
    let run = run_with(&[(
        "a/plain.py",
        "try:\n    f()\nexcept ValueError:\n    pass\nelse:\n    g()\n".to_string(),
    )]);
    stage_and_accept(&run, "except $E:", "except $E as _exc:", Some("python"));
    assert_eq!(
        std::fs::read_to_string(run.root.join("a/plain.py")).unwrap(),
        "try:\n    f()\nexcept ValueError as _exc:\n    pass\nelse:\n    g()\n"
    );
    let run = run_with(&[(
        "m.c",
        "int f(int a) {\n    if (a) {\n        a++;\n    } else {\n    }\n    if (a) {}\n    return a;\n}\n"
            .to_string(),
    )]);
    stage_and_accept(&run, "if ($A)", "if (!($A))", Some("c"));
    assert_eq!(
        std::fs::read_to_string(run.root.join("m.c")).unwrap(),
        "int f(int a) {\n    if (!(a)) {\n        a++;\n    } else {\n    }\n    if (!(a)) {}\n    return a;\n}\n"
    );
}

#[test]
fn blank_lines_in_a_capture_stay_blank_when_reindented() {
    let src = "def f():\n    old(\n        a,\n\n        b,\n    )\n";
    let run = run_with(&[("m.py", src.to_string())]);
    stage_and_accept(&run, "old($$$A)", "if True:\n    new($$$A)", Some("python"));
    let new = std::fs::read_to_string(run.root.join("m.py")).unwrap();
    assert_eq!(
        new,
        "def f():\n    if True:\n        new(a,\n\n        b,)\n"
    );
}
